#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_mpi_examples.sh TCMPIRUN MPIBINDIR MATVEC LU - TAP: the examples
# written in MPI (examples/mpi/*.c, built by tcmpicc into MPIBINDIR) run by
# tcmpirun on ring:P give the results and the modelled times of their tc_*
# versions (the executables MATVEC and LU) at the same P, model and t_a:
# P = 2, 4, 8 on threads, 8 on fibres, and 4 emulated.  Compared: matvec's
# checksum of y and modelled time (ns, as printed), lu's checksum of the
# factors and modelled time (us to 0.1, as printed) of each variant.  The
# MPI programs charge their computation with TCMPI_Compute_ns, so the
# modelled times are equal, not merely close.
set -u
run=${1:?usage: test_mpi_examples.sh tcmpirun mpibindir matvec_ring lu_ring}
bin=${2:?}
matvec=${3:?}
lu=${4:?}
TAP_DIAG_LINES=20
. "$(cd "$(dirname "$0")/../../../tests" && pwd)/tap.sh" # ok, not_ok, skip, check; n, nfail
# col TEXT KEY NAME: the field under the header NAME in the row whose first
# field is KEY (the header is the line whose first field is "n" or
# "variant").
col() {
	printf '%s\n' "$1" | awk -v key="$2" -v name="$3" '
		($1 == "n" || $1 == "variant") { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
		c && $1 == key { print $c; exit }'
}
# same WHAT A B TEXT...: A and B are equal and not empty.
same() {
	local what=$1 a=$2 b=$3
	shift 3
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		ok "$what ($a)"
	else
		not_ok "$what: tc_* '$a', MPI '$b'" "$*"
	fi
}

model=(--ts 100000 --tw 10)
mv_n=64
lu_n=24
for cfg in "2 threads native" "4 threads native" "8 threads native" "8 fibres native" \
	"4 threads emulated"; do
	set -- $cfg
	p=$1 exec=$2 mode=$3
	tcrun=(timeout 300 "$run" --timeout 60000 -np "$p" --topo "ring:$p" --exec "$exec"
		--mode "$mode" "${model[@]}")
	# matvec_ring: y's checksum and the modelled time.
	ref=$(timeout 300 "$matvec" --p "$p" "${model[@]}" --ta 100 --reps 1 $mv_n 2>&1)
	out=$("${tcrun[@]}" "$bin/matvec_ring.so" --ta 100 --reps 1 $mv_n 2>&1)
	st=$?
	if [ $st -ne 0 ] || ! printf '%s\n' "$out" | grep -q '^ok: y = A x exactly'; then
		not_ok "matvec_ring p=$p $exec $mode runs and checks y (status $st)" "$out"
	else
		ok "matvec_ring p=$p $exec $mode runs and checks y"
	fi
	same "matvec_ring p=$p $exec $mode: checksum of y" \
		"$(col "$ref" $mv_n checksum)" "$(col "$out" $mv_n checksum)" "$ref" "$out"
	same "matvec_ring p=$p $exec $mode: modelled ns" \
		"$(col "$ref" $mv_n modelled_ns)" "$(col "$out" $mv_n modelled_ns)" "$ref" "$out"
	# lu_ring: each variant in a run of its own (its clocks start at 0).
	ref=$(timeout 300 "$lu" --p "$p" "${model[@]}" --ta 1000 --reps 1 $lu_n 2>&1)
	for v in blocking overlap lookahead; do
		out=$("${tcrun[@]}" "$bin/lu_ring.so" --ta 1000 --reps 1 --variant $v $lu_n 2>&1)
		st=$?
		if [ $st -ne 0 ] || ! printf '%s\n' "$out" | grep -q '^ok: every run'; then
			not_ok "lu_ring $v p=$p $exec $mode runs and checks the factors (status $st)" \
				"$out"
		else
			ok "lu_ring $v p=$p $exec $mode runs and checks the factors"
		fi
		same "lu_ring $v p=$p $exec $mode: checksum of the factors" \
			"$(col "$ref" $v checksum)" "$(col "$out" $v checksum)" "$ref" "$out"
		same "lu_ring $v p=$p $exec $mode: modelled us" \
			"$(col "$ref" $v modelled)" "$(col "$out" $v modelled)" "$ref" "$out"
	done
done
echo "1..$n"
[ "$nfail" -eq 0 ]
