# SPDX-License-Identifier: MIT
# bench/peers/build.sh - sourced by tools/bench: tc_build_peers BUILD_DIR
# builds the peers benchmark into BUILD_DIR/peers/ against the topocoll of
# BUILD_DIR (already built): the driver, ours, OpenMP (gcc -fopenmp), and the
# MPI peer once per MPI found (mpicc.openmpi, mpicc.mpich).  A missing MPI is
# reported and skipped.  Each program is rebuilt only when a source, the
# library or this script is newer.

tc_peers_cc() {
	# tc_peers_cc OUT CC FLAGS... : compiles when OUT is out of date.
	local out=$1 src stale=0
	shift
	for src in bench/peers/*.c bench/peers/*.h bench/peers/build.sh "$PEERS_LIB"; do
		[ "$src" -nt "$out" ] && stale=1
	done
	[ -x "$out" ] && [ "$stale" -eq 0 ] && return 0
	"$@" -o "$out"
}

tc_build_peers() {
	local b=$1 d=$1/peers
	local warn="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Wpedantic"
	mkdir -p "$d"
	PEERS_LIB=$b/libtopocoll.so.0
	tc_peers_cc "$d/peers" cc -O2 $warn bench/peers/driver.c bench/peers/report.c -lm
	# Linked to the shared library by its SONAME (as bench/channel is), found
	# through the rpath; it calls the public interface alone.
	tc_peers_cc "$d/peer_ours" cc -O3 $warn -Iinclude bench/peers/ours.c \
		-L"$b" -l:libtopocoll.so.0 -Wl,-rpath,'$ORIGIN/..' $(pkg-config --libs liburcu) -lpthread -lm
	tc_peers_cc "$d/peer_openmp" gcc -O3 $warn -fopenmp bench/peers/openmp.c
	local mpi cc
	for mpi in openmpi mpich; do
		cc=mpicc.$mpi
		if ! command -v "$cc" >/dev/null 2>&1; then
			echo "peers: $cc not found: the $mpi peer is skipped" >&2
			rm -f "$d/peer_$mpi"
			continue
		fi
		tc_peers_cc "$d/peer_$mpi" "$cc" -O3 $warn bench/peers/mpi.c ||
			{ echo "peers: $cc failed: the $mpi peer is skipped" >&2; rm -f "$d/peer_$mpi"; }
		tc_build_ours_mpi "$b" "$mpi" "$cc"
	done
}

# tc_build_ours_mpi BUILD_DIR MPI CC: peer_ours_MPI, ours over that MPI
# (bench/peers/mpi.c with -DPEERS_OURS_MPI), linked with the build's static
# topocoll and its MPI engine built against MPI: lib/mpi's internal library
# when the build's mpi_impl is MPI, its MPICH twin for mpich beside Open MPI.
# Skipped, said, when the build has no MPI engine for it.
tc_build_ours_mpi() {
	local b=$1 mpi=$2 cc=$3 d=$1/peers impl eng
	impl=$(python3 -c 'import json,sys
for o in json.load(open(sys.argv[1])):
    if o["name"] == "mpi_impl": print(o["value"])' "$b/meson-info/intro-buildoptions.json" 2>/dev/null || true)
	if [ "$impl" = "$mpi" ]; then
		eng=$b/lib/mpi/libtopocoll_mpi_internal.a
	else
		eng=$b/lib/mpi/libtopocoll_mpich_internal.a
		[ "$mpi" = mpich ] || eng=
	fi
	if [ -z "$eng" ] || [ ! -f "$eng" ] || [ ! -f "$b/libtopocoll_internal.a" ]; then
		echo "peers: no topocoll over $mpi in $b: ours over $mpi is skipped" >&2
		rm -f "$d/peer_ours_$mpi"
		return 0
	fi
	PEERS_LIB=$eng tc_peers_cc "$d/peer_ours_$mpi" "$cc" -O3 $warn -DPEERS_OURS_MPI -Iinclude \
		bench/peers/mpi.c "$eng" "$b/libtopocoll_internal.a" \
		$(pkg-config --libs liburcu) $(pkg-config --libs hwloc 2>/dev/null) -lpthread -lm ||
		{ echo "peers: ours over $mpi failed to build: skipped" >&2; rm -f "$d/peer_ours_$mpi"; }
}
