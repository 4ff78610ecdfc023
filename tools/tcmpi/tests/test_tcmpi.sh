#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_tcmpi.sh TCMPIRUN BINDIR TCMPICC - TAP: the MPI layer's test
# programs (BINDIR/*.so, built by tcmpicc) run by tcmpirun at several P on
# threads and fibres: every collective validated, derived datatypes,
# point-to-point messages with tags and wildcards, probes, split and duplicated
# communicators, nonblocking and persistent collectives,
# per-rank globals and C library state, exit() ending a rank, an
# unsupported function reported by name; and tcmpirun's own errors.
set -u
run=${1:?usage: test_tcmpi.sh tcmpirun bindir tcmpicc}
bin=${2:?}
tcmpicc=${3:?}
n=0
nfail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); nfail=$((nfail + 1)); echo "not ok $n - $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | tail -n 20 | sed 's/^/# /'
	return 0
}
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
		for t in mpi_p2p mpi_split mpi_icoll mpi_probe; do
			expect 0 "$t: p = [0-9]+: ok" "$t p=$p $exec" -- \
				-np $p --exec $exec "$bin/$t.so"
		done
	done
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
for t in mpi_p2p mpi_split mpi_icoll mpi_probe; do
	expect 0 "$t: p = 64: ok" "$t p=64 fibres" -- -np 64 --exec fibres "$bin/$t.so"
done
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
