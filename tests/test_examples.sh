#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/test_examples.sh SOURCE_ROOT RING_SUM MATVEC_RING - TAP: what the
# examples show a reader.  The README's copy of examples/ring_sum.c is the
# program itself; ring_sum prints the sum of the ranks and, when its team
# cannot be made (TC_HWLOC_XML naming no file), says why and exits 1 with
# nothing freed that was not made; matvec_ring's table names its closed-form
# column formula_ns.
set -u
src=${1:?usage: test_examples.sh SOURCE_ROOT RING_SUM MATVEC_RING}
ring_sum=${2:?usage: test_examples.sh SOURCE_ROOT RING_SUM MATVEC_RING}
matvec=${3:?usage: test_examples.sh SOURCE_ROOT RING_SUM MATVEC_RING}
. "$(cd "$(dirname "$0")" && pwd)/tap.sh" # ok, not_ok, skip, check; n, nfail

# The program from its SPMD function to the end, in the README's fenced
# block and in the file.
body() { sed -n '/^static int ring_sum(/,/^}$/p; /^int main(void)$/,/^}$/p' "$1"; }
readme=$(sed -n '/^`examples\/ring_sum.c`/,/^```$/{/^```c$/,/^```$/p}' "$src/README.md" |
	sed '1d;$d')
d=$(diff <(printf '%s\n' "$readme" | body /dev/stdin) <(body "$src/examples/ring_sum.c"))
st=$?
[ -n "$(printf '%s\n' "$readme" | body /dev/stdin)" ] || st=1
check "README's copy of ring_sum.c is the program" "$st" "$d"

out=$("$ring_sum" 2>&1)
st=$?
[ "$st" -eq 0 ] && [ "$out" = "sum of ranks 0..7 = 28" ]
check "ring_sum prints 28" $? "exit $st" "$out"

out=$(TC_HWLOC_XML=/nonexistent/machine.xml "$ring_sum" 2>&1)
st=$?
if [ "$st" -eq 0 ]; then
	skip "ring_sum without a team exits 1" "TC_HWLOC_XML is not read (no hwloc)"
else
	[ "$st" -eq 1 ] && printf '%s\n' "$out" | grep -q '^ring_sum: '
	check "ring_sum without a team exits 1" $? "exit $st" "$out"
fi

out=$("$matvec" --p 2 --reps 1 --ta 1 4 2>&1)
st=$?
hdr=$(printf '%s\n' "$out" | grep -m1 '^ *n  *r ')
printf '%s\n' "$hdr" | grep -qw formula_ns
check "matvec_ring's table names formula_ns" $? "exit $st" "$out"

echo "1..$n"
[ "$nfail" -eq 0 ]
