#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/predict_sweep.sh TOPOCOLL [--bytes N] [--topos LIST] [--colls LIST]
# `topocoll predict` of every algorithm of every collective
# on every topology kind at p = 4096 (1 MiB blocks by default): the time
# (wall and CPU) and peak memory of each prediction, measured by /usr/bin/time
# around one process per prediction.  Prints one line per (topology,
# collective, algorithm) that applies: result (ok, simulated or not, or the
# error), seconds, peak RSS in MB; then a summary with the slowest and the
# largest, and how many are over 1 s of CPU or 256 MB.
# Run through ./tools/bench predict [args].
set -euo pipefail
tc=${1:?usage: predict_sweep.sh TOPOCOLL [--bytes N] [--topos LIST] [--colls LIST]}
shift
bytes=1Mi
topos="ring:4096 chain:4096 torus:64x64 mesh:64x64 torus:16x16x16 hypercube:12 complete:4096 star:4096 tree:2:4095"
colls="bcast reduce allreduce barrier allgather reduce_scatter scan exscan scatter gather alltoall shift gray2binary binary2gray multicast allgatherv gatherv scatterv alltoallv"
while [ $# -gt 0 ]; do
	case "$1" in
	--bytes) bytes=$2; shift 2 ;;
	--topos) topos=${2//,/ }; shift 2 ;;
	--colls) colls=${2//,/ }; shift 2 ;;
	*) echo "predict_sweep: unknown option $1" >&2; exit 2 ;;
	esac
done

# The algorithms of a collective, from the tool's own help (the registry).
algs_of() {
	"$tc" help predict | awk -v c="$1" '
		$1 == c ":" { on = 1; sub(/^[ \t]*[a-z_0-9]+:[ \t]*/, ""); print; next }
		on && /^[ \t]+[a-z_0-9, ]+$/ && $1 !~ /:$/ { print; next }
		{ on = 0 }' | tr -d ',' | tr -s ' \n' ' '
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-16s %-15s %-18s %-12s %8s %8s %8s\n' topology collective algorithm result wall_s cpu_s peak_MB
n=0; over_t=0; over_m=0; worst_t=0; worst_m=0; worst_t_at=; worst_m_at=
for topo in $topos; do
	for coll in $colls; do
		extra=()
		case "$coll" in
		shift) extra=(--q 3) ;;
		multicast) extra=(--members 1-9,100-110) ;;
		esac
		for alg in $(algs_of "$coll"); do
			/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" \
				"$tc" predict --topo "$topo" --coll "$coll" --alg "$alg" --bytes "$bytes" \
				"${extra[@]}" --json > "$tmp/out" 2> "$tmp/err" && rc=0 || rc=$?
			read -r wall user sys rss < <(tail -1 "$tmp/time")
			if [ $rc = 0 ]; then
				if grep -q '"simulated": *false' "$tmp/out"; then res=closed_form; else res=simulated; fi
			elif grep -q "does not apply\|not applicable\|TC_ENOTSUP" "$tmp/err"; then
				continue
			else
				res=$(grep -o 'TC_E[A-Z]*' "$tmp/err" | head -1 || true); res=${res:-exit_$rc}
			fi
			cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
			mb=$(( rss / 1024 ))
			printf '%-16s %-15s %-18s %-12s %8s %8s %8s\n' "$topo" "$coll" "$alg" "$res" "$wall" "$cpu" "$mb"
			n=$((n + 1))
			awk -v c="$cpu" 'BEGIN { exit !(c > 1.0) }' && over_t=$((over_t + 1))
			[ "$mb" -gt 256 ] && over_m=$((over_m + 1))
			if awk -v c="$cpu" -v w="$worst_t" 'BEGIN { exit !(c > w) }'; then
				worst_t=$cpu; worst_t_at="$topo $coll $alg"
			fi
			if [ "$mb" -gt "$worst_m" ]; then worst_m=$mb; worst_m_at="$topo $coll $alg"; fi
		done
	done
done
echo "# $n predictions (bytes $bytes): $over_t over 1 s of CPU, $over_m over 256 MB;" \
	"slowest $worst_t s ($worst_t_at), largest $worst_m MB ($worst_m_at)"
