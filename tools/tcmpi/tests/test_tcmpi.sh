#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_tcmpi.sh TCMPIRUN BINDIR TCMPICC [TOPOCOLL] - TAP: the MPI layer's test
# programs (BINDIR/*.so, built by tcmpicc) run by tcmpirun at several P on
# threads and fibres: every collective validated, derived datatypes,
# point-to-point messages with tags and wildcards, probes, split and duplicated
# communicators, groups and the communicators made of them, graph topologies,
# neighbourhood collectives on grids and graphs, nonblocking and persistent
# collectives, Cartesian communicators (with TOPOCOLL, the topocoll CLI: a
# grid's broadcast modelled as topocoll predicts it on that mesh or torus),
# corners of the standard (requests completed across calls, zero counts,
# refused operators and buffers, pending operations at MPI_Comm_free),
# per-rank globals and C library state, exit() ending a rank, an
# unsupported function reported by name; and tcmpirun's own errors.
set -u
run=${1:?usage: test_tcmpi.sh tcmpirun bindir tcmpicc}
bin=${2:?}
tcmpicc=${3:?}
cli=${4:-}
TAP_DIAG_LINES=20
. "$(cd "$(dirname "$0")/../../../tests" && pwd)/tap.sh" # ok, not_ok, skip, check; n, nfail
# expect STATUS PATTERN NAME -- tcmpirun arguments: the run's exit status
# must be STATUS and its output must match PATTERN (grep -E).
expect() {
	local want=$1 pat=$2 name=$3
	shift 4
	local out st
	out=$(timeout 300 "$run" --timeout 60000 "$@" 2>&1)
	st=$?
	if [ "$st" = "$want" ] && printf '%s\n' "$out" | grep -Eq -- "$pat"; then
		ok "$name"
	else
		not_ok "$name (status $st, want $want)" "$out"
	fi
}

for exec in threads fibres; do
	for p in 1 2 3 5 8; do
		expect 0 'mpi_coll: p = [0-9]+: ok' "mpi_coll p=$p $exec" -- \
			-np $p --exec $exec "$bin/mpi_coll.so"
		expect 0 'mpi_dtype: p = [0-9]+: ok' "mpi_dtype p=$p $exec" -- \
			-np $p --exec $exec "$bin/mpi_dtype.so"
	done
	for p in 1 2 3 8; do
		for t in mpi_p2p mpi_split mpi_icoll mpi_probe mpi_group mpi_corner mpi_userop \
			mpi_sendmodes mpi_ineighbor mpi_attr mpi_info mpi_subarray mpi_typeinfo; do
			expect 0 "$t: p = [0-9]+: ok" "$t p=$p $exec" -- \
				-np $p --exec $exec "$bin/$t.so"
		done
	done
	for p in 1 4 6 12; do
		expect 0 'mpi_cart: p = [0-9]+: ok' "mpi_cart p=$p $exec" -- \
			-np $p --exec $exec "$bin/mpi_cart.so"
	done
	for p in 1 2 3 4 8 12; do
		expect 0 'mpi_neighbor: p = [0-9]+: ok' "mpi_neighbor p=$p $exec" -- \
			-np $p --exec $exec "$bin/mpi_neighbor.so"
		expect 0 'mpi_graph: p = [0-9]+: ok' "mpi_graph p=$p $exec" -- \
			-np $p --exec $exec "$bin/mpi_graph.so"
	done
	for p in 1 2 5; do
		expect 0 'mpi_reqfree: p = [0-9]+: ok' "mpi_reqfree p=$p $exec" -- \
			-np $p --exec $exec --timeout 20000 "$bin/mpi_reqfree.so"
	done
	for p in 1 2 5; do
		expect 0 'mpi_collerr: p = [0-9]+: ok' "mpi_collerr p=$p $exec" -- \
			-np $p --exec $exec "$bin/mpi_collerr.so"
	done
	expect 16 'MPI_Bcast: called before MPI_Init' \
		"MPI_Bcast before MPI_Init ends the run, $exec" -- \
		-np 2 --exec $exec "$bin/mpi_collerr.so" preinit
	for p in 1 2 4; do
		expect 0 'mpi_clock: p = [0-9]+: ok' "mpi_clock p=$p $exec" -- \
			-np $p --exec $exec "$bin/mpi_clock.so"
	done
	for p in 1 4 16; do
		expect 0 'mpi_globals: p = [0-9]+: ok' "mpi_globals p=$p $exec" -- \
			-np $p --exec $exec "$bin/mpi_globals.so" -n 5 -v -x 3 extra
	done
	expect 3 'mpi_exit: rank 0 done' "exit(3) after MPI_Finalize ends one rank, $exec" -- \
		-np 4 --exec $exec "$bin/mpi_exit.so"
	expect 4 'called exit\(4\) between MPI_Init and MPI_Finalize' \
		"exit(4) before MPI_Finalize aborts the run, $exec" -- \
		-np 4 --exec $exec "$bin/mpi_exit.so" early
	expect 16 'MPI_Recv: .*communicator of one rank.*deadlock' \
		"MPI_Recv on MPI_COMM_SELF with nothing sent ends the run, $exec" -- \
		-np 2 --exec $exec "$bin/mpi_p2p.so" deadlock
	expect 0 'mpi_unsupported: ok: .*MPI_Win_create' \
		"unsupported function returns MPI_ERR_UNSUPPORTED_OPERATION, $exec" -- \
		-np 3 --exec $exec "$bin/mpi_unsupported.so"
	expect 52 'MPI_Win_create: not supported' \
		"unsupported function under MPI_ERRORS_ARE_FATAL ends the run, $exec" -- \
		-np 3 --exec $exec "$bin/mpi_unsupported.so" fatal
done
# More ranks than CPUs, other topologies, emulated mode, the report.
expect 0 'mpi_coll: p = 64: ok' "mpi_coll p=64 fibres" -- -np 64 --exec fibres "$bin/mpi_coll.so"
expect 0 'mpi_coll: p = 16: ok' "mpi_coll p=16 hypercube" -- \
	-np 16 --topo hypercube:4 --exec fibres "$bin/mpi_coll.so"
for t in mpi_p2p mpi_split mpi_icoll mpi_probe mpi_group mpi_corner mpi_userop \
	mpi_sendmodes mpi_ineighbor mpi_attr mpi_info mpi_subarray mpi_typeinfo; do
	expect 0 "$t: p = 64: ok" "$t p=64 fibres" -- -np 64 --exec fibres "$bin/$t.so"
done
expect 0 'mpi_cart: p = 64: ok' "mpi_cart p=64 fibres" -- -np 64 --exec fibres "$bin/mpi_cart.so"
expect 0 'mpi_neighbor: p = 64: ok' "mpi_neighbor p=64 fibres" -- \
	-np 64 --exec fibres "$bin/mpi_neighbor.so"
expect 0 'mpi_graph: p = 64: ok' "mpi_graph p=64 fibres" -- \
	-np 64 --exec fibres "$bin/mpi_graph.so"
# A grid's collectives run on its mesh or torus: the modelled time of a
# broadcast and of an alltoall on a 4x4 grid over complete:16 is topocoll's
# prediction for mesh:4x4 or torus:4x4 (the three alltoall predictions
# differ, so the match names the topology).
if [ -n "$cli" ]; then
	model="--ts 1000 --tw 1"
	predict() { # TOPO COLL: the modelled ns of 4096 bytes
		"$cli" predict --topo "$1" --coll "$2" --bytes 4096 $model --json 2>&1 |
			sed -n 's/.*"modelled_ns": *\([0-9.e+]*\).*/\1/p' | head -n 1
	}
	a_mesh=$(predict mesh:4x4 alltoall)
	a_torus=$(predict torus:4x4 alltoall)
	a_complete=$(predict complete:16 alltoall)
	if [ -n "$a_mesh" ] && [ "$a_mesh" != "$a_torus" ] && [ "$a_torus" != "$a_complete" ] &&
		[ "$a_mesh" != "$a_complete" ]; then
		ok "alltoall predictions differ: mesh $a_mesh, torus $a_torus, complete $a_complete ns"
	else
		not_ok "alltoall predictions: mesh '$a_mesh', torus '$a_torus', complete '$a_complete' ns"
	fi
	for shape in torus mesh; do
		out=$(timeout 300 "$run" --timeout 60000 -np 16 --exec fibres $model --report \
			"$bin/mpi_cart.so" model 4096 $shape 2>&1)
		for c in bcast alltoall; do
			want=$(predict $shape:4x4 $c)
			got=$(printf '%s\n' "$out" | awk -v c="$c" \
				'tolower($1) == "mpi_" c { printf "%.0f\n", $4 * 1000 }')
			if printf '%s\n' "$out" | grep -q 'mpi_cart: bcast and alltoall .*: ok' &&
				[ -n "$want" ] && [ -n "$got" ] && awk -v a="$got" -v b="$want" \
				'BEGIN { d = a - b; exit !(d < 1 && d > -1 && b > 0) }'; then
				ok "$c on a $shape:4x4 grid modelled as topocoll predicts: $got ns"
			else
				not_ok "$c on a $shape:4x4 grid: modelled '$got' ns, predicted '$want' ns" "$out"
			fi
		done
	done
fi
expect 0 'mpi_p2p: p = 16: ok' "mpi_p2p p=16 hypercube (messages routed)" -- \
	-np 16 --topo hypercube:4 --exec fibres "$bin/mpi_p2p.so"
expect 0 'mpi_probe: p = 16: ok' "mpi_probe p=16 hypercube (messages routed)" -- \
	-np 16 --topo hypercube:4 --exec fibres "$bin/mpi_probe.so"
expect 0 'mpi_icoll: p = 8: ok' "mpi_icoll p=8 ring, emulated" -- \
	-np 8 --topo ring:8 --mode emulated --exec threads "$bin/mpi_icoll.so"
expect 0 'mpi_globals: p = 64: ok' "mpi_globals p=64 fibres" -- \
	-np 64 --exec fibres "$bin/mpi_globals.so" -n 5 -v -x 3 extra
expect 0 'MPI_Allreduce +[0-9]+ ' "--report lists the collectives, emulated" -- \
	-np 4 --mode emulated --ts 200 --report "$bin/mpi_dtype.so"
expect 0 'MPI_Scatter +[0-9]+ ' "--report with errors returned, native" -- \
	-np 3 --report "$bin/mpi_collerr.so"
# tcmpirun's errors.
expect 2 'np P is required' "no -np" -- "$bin/mpi_coll.so"
expect 1 'cannot open' "missing program" -- -np 2 /nonexistent/program.so
expect 1 'cannot load|has no tcmpi_rank_main' "a program not built by tcmpicc" -- \
	-np 2 /bin/true
if "$tcmpicc" -show x.c -o x 2>/dev/null | grep -q -- '-Bsymbolic'; then
	ok "tcmpicc -show prints the link command"
else
	not_ok "tcmpicc -show prints the link command" "$(sh "$tcmpicc" -show x.c -o x 2>&1)"
fi
echo "1..$n"
[ "$nfail" -eq 0 ]
