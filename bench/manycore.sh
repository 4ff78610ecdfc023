#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/manycore.sh - the many-core report: how topocoll's collectives and
# its machine model fare with one rank per core, p = 2, 4, 8, ... up to the
# CPUs of this machine.  Run by `./tools/bench manycore` (on build-release)
# and by a bundle's `run` (tools/bundle); needs bash, coreutils and awk only.
#
# Usage: manycore.sh --bin DIR [--quick] [--out DIR] [--budget SECONDS] [--cpus N]
#   --bin DIR   the programs: DIR/bench/model_fidelity, DIR/peers/peers (with
#               peer_ours and peer_openmp beside it), DIR/tools/topocoll
#               (optional: its calibration is kept in the log)
#   --out DIR   where the figures go [$OUT, else ./manycore-out]
#   --quick     p = 2 only, few sizes and repetitions (a check that every
#               part runs, not a measurement)
#   --budget S  the whole run's time limit [280; --quick 50]: each part gets
#               a share and is killed at its end (the report then says
#               "timeout" for it and keeps what the other parts measured)
#   --cpus N    the team sizes as if the machine had N CPUs [the CPUs this
#               process may run on] (more than it has: oversubscribed)
#
# Parts (each a separate program run with its own timeout):
#   peers       bench/peers' driver against OpenMP (--only openmp) at the
#               driver's team sizes up to the CPUs (2, 8, 16, 64): the ratio
#               ours / OpenMP's best variant per case, < 1 ours faster;
#   native      model_fidelity --native per p (one rank per CPU): bcast,
#               reduce, allreduce, allgather, alltoall, reduce_scatter on
#               complete:p and the hypercube, 8 B .. 4 MiB, the median per
#               call of many back-to-back calls against the calibrated
#               prediction, with and without its concurrency charges (the
#               share of cases within 20% for each: docs/calibration.md),
#               calibrated once per p; three sweeps of every case, each
#               case's median of the three (a stall of the machine during
#               one batch, 100 us calls where 2 us are usual, seen on a
#               16-CPU guest, counts once); a case whose buffer of p
#               blocks is above 16 MiB per rank is skipped;
#   emulation   model_fidelity at p = CPUs and 4 x CPUs (fibres) with
#               t_s = 1 ms, 250 us, 100 us: emulated wall time against the
#               modelled time, the median of five runs (of three, one stall
#               of a 16-CPU guest's vCPU, up to a millisecond, could decide
#               a case).
# Writes into the output dir: report.json (every figure), report.md (the
# tables), log.txt (everything printed) and each part's raw output
# (peers.txt, native-pP.txt, emulation-pP.txt, calibrate.txt, rounds.txt,
# copies.txt, stage.txt) and each
# native p's calibration as the library held it (calibration-pP.cal: text,
# model_fidelity --save-calibration: bench/replay_native prices the run's
# cases again with this build or a later one); prints the
# summary: the share of native and emulated cases within 15% and 25% and
# the share of peers cases where ours is faster than OpenMP.
set -u

here=$(cd "$(dirname "$0")" && pwd)
bin= out=${OUT:-} quick=0 budget= cpus=
while [ $# -gt 0 ]; do
	case "$1" in
	--bin) bin=${2:?--bin takes a directory}; shift 2 ;;
	--out) out=${2:?--out takes a directory}; shift 2 ;;
	--quick) quick=1; shift ;;
	--budget) budget=${2:?--budget takes seconds}; shift 2 ;;
	--cpus) cpus=${2:?--cpus takes a number}; shift 2 ;;
	*)
		echo "usage: manycore.sh --bin DIR [--quick] [--out DIR] [--budget SECONDS] [--cpus N]" >&2
		exit 2
		;;
	esac
done
[ -n "$bin" ] || { echo "manycore.sh: --bin DIR is needed" >&2; exit 2; }
case "$budget" in
'') budget=$([ "$quick" = 1 ] && echo 50 || echo 280) ;;
*[!0-9]*) echo "manycore.sh: --budget takes whole seconds, not '$budget'" >&2; exit 2 ;;
esac
case "$cpus" in
*[!0-9]*) echo "manycore.sh: --cpus takes a number, not '$cpus'" >&2; exit 2 ;;
esac
[ -n "$out" ] || out=./manycore-out
fidelity=$bin/bench/model_fidelity
peers=$bin/peers/peers
for f in "$fidelity" "$peers"; do
	[ -x "$f" ] || { echo "manycore.sh: $f not found (build it first)" >&2; exit 2; }
done
aggregate=$here/manycore_report.awk
[ -f "$aggregate" ] || { echo "manycore.sh: $aggregate not found" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
rm -f "$out"/peers.txt "$out"/native-p*.txt "$out"/calibration-p*.cal "$out"/emulation-p*.txt "$out"/calibrate.txt \
	"$out"/rounds.txt "$out"/copies.txt "$out"/stage.txt \
	"$out"/status.txt "$out"/report.json "$out"/report.md
exec > >(tee "$out/log.txt") 2>&1

SECONDS=0
# The CPUs this process may run on (nproc would follow OMP_NUM_THREADS).
[ -n "$cpus" ] || cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null ||
	getconf _NPROCESSORS_ONLN)
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
echo "# manycore: $cpus CPUs, ${model:-unknown CPU}, Linux $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# command: $0 --bin $bin --out $out$([ "$quick" = 1 ] && echo ' --quick') --budget $budget"

# status.txt: one line per part, "name status seconds" (status: ok, timeout,
# failed:RC, skipped); the aggregator reads it.
status() { echo "$1 $2 $3" >> "$out/status.txt"; }

# run_part NAME FILE LIMIT CMD...: runs CMD with a timeout of LIMIT seconds,
# its output into FILE and the log.
run_part() {
	local name=$1 file=$2 limit=$3 t0=$SECONDS rc
	shift 3
	if [ "$limit" -lt 5 ]; then
		echo "== $name: skipped (the budget is spent)"
		status "$name" skipped 0
		return
	fi
	echo "== [$SECONDS s] $name (limit $limit s): $*"
	timeout -k 5 "$limit" "$@" > "$file" 2>&1
	rc=$?
	grep -v '^{' "$file" | tail -n 40
	case $rc in
	0) status "$name" ok $((SECONDS - t0)) ;;
	124 | 137) echo "== $name: timed out after $limit s"; status "$name" timeout $((SECONDS - t0)) ;;
	*) echo "== $name: exit status $rc"; status "$name" "failed:$rc" $((SECONDS - t0)) ;;
	esac
}

# The time left before the part's share of the budget ends (at least 0).
left() { local l=$(($1 - SECONDS)); [ "$l" -gt 0 ] && echo "$l" || echo 0; }

# Team sizes: powers of two up to the CPUs, and the CPUs themselves.
native_p=() pp=2
while [ "$pp" -le "$cpus" ]; do native_p+=("$pp"); pp=$((pp * 2)); done
[ "$cpus" -ge 2 ] && [ "${native_p[${#native_p[@]}-1]}" != "$cpus" ] && native_p+=("$cpus")
peers_p=()
for pp in 2 8 16 64; do [ "$pp" -le "$cpus" ] && peers_p+=("$pp"); done
emu_p=("$cpus" $((4 * cpus)))
[ "$cpus" -ge 2 ] || emu_p=(2 8)
[ "$cpus" -ge 2 ] || native_p=(2)

if [ "$quick" = 1 ]; then
	native_p=(2) peers_p=(2) emu_p=(2 8)
	peers_args=(--reps 1 --case barrier,allreduce:8,allgather:8,alltoall:8)
	native_args=(--quick --no-recal --topo complete --bytes 8,64K)
	emu_args=(--reps 1 --case exchange,bcast,allreduce --topo ring,hypercube)
	share_peers=30 share_native=50 share_emu=20
else
	peers_args=(--reps 3)
	native_args=(--sweeps 3 --no-recal --bytes 8,1K,64K,1M,4M)
	emu_args=(--reps 5)
	share_peers=30 share_native=45 share_emu=25
fi
[ ${#peers_p[@]} -gt 0 ] || peers_p=(2)

# Each part's end, in seconds of the run (shares of the budget, in percent).
end_peers=$((budget * share_peers / 100))
end_native=$((end_peers + budget * share_native / 100))
end_emu=$budget

if [ "$quick" != 1 ] && [ -x "$bin/tools/topocoll" ]; then
	echo "== [$SECONDS s] calibrate (for the record)"
	timeout -k 5 20 "$bin/tools/topocoll" calibrate > "$out/calibrate.txt" 2>&1 &&
		sed -n '1,4p' "$out/calibrate.txt"
fi
# The synchronised round by team size, the calibration's and the
# library's calls' (bench/rounds; for the record, a second or two).
if [ "$quick" != 1 ] && [ -x "$bin/bench/rounds" ]; then
	echo "== [$SECONDS s] rounds (for the record)"
	timeout -k 5 30 "$bin/bench/rounds" > "$out/rounds.txt" 2>&1 && grep -v '^{' "$out/rounds.txt"
fi
# Concurrent copies by how their blocks are shared: the copy table's kind,
# a block already read once, one block for all, one writer's blocks for all
# at once (bench/copies; a few seconds).
if [ "$quick" != 1 ] && [ -x "$bin/bench/copies" ]; then
	echo "== [$SECONDS s] copies (for the record)"
	timeout -k 5 30 "$bin/bench/copies" > "$out/copies.txt" 2>&1 && grep -v '^{' "$out/copies.txt"
fi
# The `shm` reductions with their operands staged and without, alternately
# (bench/stage.sh; for the record, a few seconds).
if [ "$quick" != 1 ] && [ -x "$bin/tools/topocoll" ] && [ -f "$here/stage.sh" ]; then
	echo "== [$SECONDS s] stage (for the record)"
	timeout -k 5 60 bash "$here/stage.sh" "$bin/tools/topocoll" > "$out/stage.txt" 2>&1 &&
		grep -v '^{' "$out/stage.txt"
fi

# The driver prints its figures at the end: its own --limit (no repetition
# starts after it) keeps it well inside the part's timeout.
plist=$(IFS=,; echo "${peers_p[*]}")
limit=$(left $end_peers)
run_part peers "$out/peers.txt" "$limit" \
	"$peers" --only openmp --p "$plist" "${peers_args[@]}" --limit $((limit / 2)) --markdown

# share_of P LIST...: the part of what is left before END that P gets when
# it and the later team sizes LIST share it in proportion to p (the larger
# teams take longer; what a smaller one leaves goes to the next).
share_of() {
	local end=$1 p=$2 sum=0 q
	shift 2
	for q in "$@"; do sum=$((sum + q)); done
	echo $(( $(left "$end") * p / sum ))
}

# Native: one program per p, so that a timeout loses that p alone.
for i in "${!native_p[@]}"; do
	pp=${native_p[$i]}
	share=$(share_of "$end_native" "$pp" "${native_p[@]:$i}")
	run_part "native-p$pp" "$out/native-p$pp.txt" "$share" \
		"$fidelity" --native --p "$pp" --case bcast,reduce,allreduce,allgather,alltoall,reduce_scatter \
		--save-calibration "$out/calibration-p$pp.cal" "${native_args[@]}"
done

for i in "${!emu_p[@]}"; do
	pp=${emu_p[$i]}
	share=$(share_of "$end_emu" "$pp" "${emu_p[@]:$i}")
	run_part "emulation-p$pp" "$out/emulation-p$pp.txt" "$share" \
		"$fidelity" --p "$pp" --ts 1ms,250us,100us "${emu_args[@]}"
done

echo "== [$SECONDS s] report"
files=()
for f in "$out"/native-p*.txt "$out"/emulation-p*.txt "$out"/peers.txt; do
	[ -f "$f" ] && files+=("$f")
done
awk -v cpus="$cpus" -v model="$model" -v kernel="$(uname -r)" \
	-v load="$(cut -d' ' -f1-3 /proc/loadavg)" -v quick="$quick" -v seconds="$SECONDS" \
	-v budget="$budget" -v date="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	-v json="$out/report.json" -v md="$out/report.md" \
	-f "$aggregate" "$out/status.txt" "${files[@]}"
rc=$?
echo "# manycore: $SECONDS s; report.json and report.md in $out"
exit $rc
