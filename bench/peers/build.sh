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
	for src in bench/peers/*.c bench/peers/peers.h bench/peers/build.sh "$PEERS_LIB"; do
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
	tc_peers_cc "$d/peers" cc -O2 $warn bench/peers/driver.c -lm
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
	done
}
