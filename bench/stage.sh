#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/stage.sh TOPOCOLL [--p LIST] [--reps N]
# The `shm` reductions with their operands staged and without
# (lib/coll/shm_flat.c: TC_SHM_STAGE=0 turns the stage off), in one run:
# on complete:p, one rank per CPU (p = 4, 8, 16 up to the CPUs by default;
# the stage needs p >= 3 and ranks that each have a CPU), the
# reduce_scatter of 1 KiB and 16 KiB blocks, the allreduce `shm` of 4 KiB
# slices (4 KiB p) and the allreduce `shm_flag` of 1 KiB.  Each case runs
# `topocoll run --repeat 5` N times (3) with and N times without the stage,
# alternately; prints the medians of the N runs (ns a call) and their ratio
# (staged / unstaged: below 1, the stage is faster), and for the
# reduce_scatter the alltoall `shm` of the same blocks, run as often in
# turn (it reads as many bytes out of the peers, staggered, as each flag is
# found, and writes p - 1 times as many), then one JSON line.
# Every run checks its results (the tool's reference); a wrong one fails.
# Run through ./tools/bench stage [args]; the many-core report runs it.
set -euo pipefail
tc=${1:?usage: stage.sh TOPOCOLL [--p LIST] [--reps N]}
shift
cpus=$(nproc)
plist=
reps=3
while [ $# -gt 0 ]; do
	case "$1" in
	--p) plist=${2//,/ }; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	*) echo "stage: unknown option $1" >&2; exit 2 ;;
	esac
done
case "$reps" in '' | *[!0-9]* | 0) echo "stage: --reps wants a count of at least 1, not '$reps'" >&2; exit 2 ;; esac
if [ -z "$plist" ]; then
	for p in 4 8 16; do [ "$p" -le "$cpus" ] && plist="$plist $p"; done
fi
for p in $plist; do
	case "$p" in '' | *[!0-9]* | 0 | 1) echo "stage: --p wants team sizes of at least 2, not '$p'" >&2; exit 2 ;; esac
done

# One run's time per call (ns), or the reason it has none.
run_once() { # STAGE P COLL ALG BYTES
	local out
	out=$(TC_SHM_STAGE=$1 "$tc" run --topo "complete:$2" --coll "$3" --alg "$4" --bytes "$5" \
		--repeat 5 --json 2>&1) || { echo "stage: $3 $4 $5 at p = $2: $out" >&2; return 1; }
	case "$out" in *'"verified": true'*) ;; *) echo "stage: $3 $4 $5 at p = $2: not verified" >&2; return 1 ;; esac
	echo "$out" | sed -n 's/.*"measured_ns": *\([0-9.e+]*\).*/\1/p' | head -1
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# stage: $tc, $cpus CPUs, $reps runs of each, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
[ -n "$plist" ] || echo "# no team of 4, 8 or 16 ranks fits the $cpus CPUs: nothing to compare (--p LIST)"
printf '%-4s %-15s %-9s %8s %12s %12s %7s %12s\n' p collective algorithm bytes staged_ns unstaged_ns ratio alltoall_ns
json='{"bench":"stage","cases":['
first=1
for p in $plist; do
	[ "$p" -le "$cpus" ] || echo "# p = $p: more ranks than CPUs, nothing is staged (both runs alike)"
	[ "$p" -ge 3 ] || echo "# p = $p: one peer, nothing is staged (both runs alike)"
	for c in "reduce_scatter shm 1024" "reduce_scatter shm 16384" "allreduce shm $((4096 * p))" \
		"allreduce shm_flag 1024"; do
		set -- $c
		on=() off=() a2a=()
		for ((r = 0; r < reps; r++)); do
			on+=("$(run_once 1 "$p" "$1" "$2" "$3")")
			off+=("$(run_once 0 "$p" "$1" "$2" "$3")")
			[ "$1" != reduce_scatter ] || a2a+=("$(run_once 1 "$p" alltoall shm "$3")")
		done
		a=$(printf '%s\n' "${on[@]}" | median)
		b=$(printf '%s\n' "${off[@]}" | median)
		ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
		x=null shown=-
		if [ ${#a2a[@]} -gt 0 ]; then
			x=$(printf '%s\n' "${a2a[@]}" | median)
			shown=$(printf '%.0f' "$x")
		fi
		printf '%-4s %-15s %-9s %8s %12.0f %12.0f %7s %12s\n' "$p" "$1" "$2" "$3" "$a" "$b" "$ratio" "$shown"
		[ $first = 1 ] || json="$json,"
		first=0
		json="$json{\"p\":$p,\"coll\":\"$1\",\"algorithm\":\"$2\",\"bytes\":$3,\"staged_ns\":$a,\"unstaged_ns\":$b,\"ratio\":$ratio,\"alltoall_ns\":$x}"
	done
done
echo "$json]}"
