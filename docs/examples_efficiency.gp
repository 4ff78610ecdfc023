# SPDX-License-Identifier: MIT
# Efficiency against n of the two applications of [Goubault-ring] (examples/matvec_ring.c,
# examples/lu_ring.c), from the data files beside this script (three runs each,
# one gnuplot index per run).  Regenerate the data with the commands in their
# first line, then, from the repository root:
#   gnuplot docs/examples_efficiency.gp          (writes docs/examples_efficiency.svg)
set terminal svg size 1200,420 dynamic noenhanced font "sans,12"
set output "docs/examples_efficiency.svg"
set multiplot layout 1,2
set logscale x 2
set xlabel "n"
set ylabel "efficiency  T_seq / (p T)"
set yrange [0:1.1]
set key top left
set grid
set title "matvec_ring, ring:4, t_s = 1 ms, t_w = 100 ns/B, t_a = 100 ns"
plot "docs/examples_matvec.dat" index 0 using 1:2 with linespoints lw 2 title "modelled = closed form", \
     "" using 1:3 with points pt 6 ps 1.2 title "emulated (3 runs)", \
     "" using 1:4 with points pt 2 title "measured, native (3 runs)"
set title "lu_ring, ring:4, t_s = 100 us, t_w = 10 ns/B, t_a = 1 us"
set logscale x 2
plot "docs/examples_lu.dat" index 0 using 1:2 with linespoints lw 2 title "blocking sends (slide 51), modelled", \
     "" index 0 using 1:5 with linespoints lw 2 title "overlapped sends, modelled", \
     "" index 0 using 1:8 with linespoints lw 2 title "look-ahead (slide 53), modelled", \
     "" using 1:3 with points pt 6 title "blocking, emulated (3 runs)", \
     "" using 1:9 with points pt 8 title "look-ahead, emulated (3 runs)", \
     "" using 1:10 with points pt 2 title "look-ahead, measured native (3 runs)"
unset multiplot
