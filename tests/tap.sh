# SPDX-License-Identifier: MIT
# tests/tap.sh - the TAP helpers of the shell test scripts, sourced by each
# (bash): ok, not_ok, skip and check number the tests in n and count the
# failures in nfail; the script prints the plan ("1..$n") at its end.

n=0
nfail=0

# ok DESC
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

# not_ok DESC [DIAGNOSTIC...]: the last TAP_DIAG_LINES lines (default 40) of
# each non-empty diagnostic follow as TAP comments.
not_ok() {
	n=$((n + 1))
	nfail=$((nfail + 1))
	echo "not ok $n - $1"
	shift
	local l
	for l in "$@"; do
		[ -n "$l" ] && printf '%s\n' "$l" | tail -n "${TAP_DIAG_LINES:-40}" | sed 's/^/# /'
	done
	return 0
}

# skip DESC REASON
skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# check DESC STATUS [DIAGNOSTIC...]: ok when STATUS is 0, else not_ok.
check() {
	local d=$1 st=$2
	shift 2
	if [ "$st" -eq 0 ]; then ok "$d"; else not_ok "$d" "$@"; fi
}
