#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/simgrid/run.sh BUILDDIR [--p LIST] - SimGrid's SMPI simulating the MPI
# program bench/simgrid/allreduce.c (one 8-byte allreduce) on p ranks of a
# flat cluster (1 us, 10 GB/s links; a 100 GB/s backbone): the wall time and
# peak resident memory of the whole simulation (smpirun, /usr/bin/time),
# one table row and one JSON line per p.  The figures it compares
# `./tools/bench scale` with.  Skipped, with a line saying so, when smpicc or
# smpirun is missing (Debian: libsimgrid-dev; not a dependency).
set -euo pipefail
out=${1:?usage: run.sh BUILDDIR [--p LIST]}
shift
ps="64 256 1024 4096"
[ "${1:-}" = "--p" ] && ps=${2//,/ }
if ! command -v smpicc > /dev/null || ! command -v smpirun > /dev/null; then
	echo "# SimGrid: smpicc/smpirun not installed (apt-get install libsimgrid-dev): not measured"
	exit 0
fi
dir="$out/simgrid"
mkdir -p "$dir"
smpicc -O2 "$(dirname "$0")/allreduce.c" -o "$dir/allreduce" 2> "$dir/build.log"
echo "# SimGrid $(dpkg-query -W -f '${Version}' libsimgrid-dev 2>/dev/null || echo '?') SMPI:" \
	"one 8-byte MPI_Allreduce program, simulated (wall s, peak MB of the simulator)"
printf '%-14s %6s %9s %9s\n' simgrid p wall_s MB
for p in $ps; do
	cat > "$dir/platform.xml" <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="h" suffix="" radical="0-$((p - 1))" speed="1Gf" bw="10GBps" lat="1us"
           bb_bw="100GBps" bb_lat="1us"/>
</platform>
XML
	seq 0 $((p - 1)) | sed 's/^/h/' > "$dir/hosts"
	if /usr/bin/time -f '%e %M' -o "$dir/time" smpirun -np "$p" -platform "$dir/platform.xml" \
		-hostfile "$dir/hosts" --cfg=smpi/host-speed:1Gf "$dir/allreduce" > "$dir/run.log" 2>&1; then
		read -r wall kb < <(tail -1 "$dir/time")
		printf '%-14s %6d %9.2f %9d\n' smpi "$p" "$wall" $((kb / 1024))
		printf '{"simgrid": "smpi", "p": %d, "wall_s": %s, "peak_MB": %d}\n' "$p" "$wall" $((kb / 1024))
	else
		echo "smpi $p: failed (see $dir/run.log)"
	fi
done
