#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/mpi/test_cli_mpi.sh TOPOCOLL LAUNCHER [LAUNCHER-ARGS...] - TAP tests of
# the tool's sweep and trace with --engine mpi (docs/mpi.md), at np = 2 under
# LAUNCHER (its arguments before the process count, e.g. mpirun.openmpi
# --oversubscribe), and of --engine mpi outside a launcher.  TOPOCOLL is
# the tool without MPI, which starts topocoll-mpi beside it.
#   sweep   predict, native and emulated rows on the families complete and
#           chain sized by the job (p = 2), allreduce and bcast: every run
#           verified (every process's buffer), measured beside modelled, the
#           emulated time not below the modelled one, both processes counted
#           as having run their rank, the modelled times those predicted, one
#           JSON array on stdout (process 0 alone prints);
#   trace   valid trace-event JSON whose slices come from both processes,
#           with message flows from a send on one process to the receive on
#           the other, and whose logical slices are those of the same trace
#           on threads;
#   errors  a topology of another size: one message, from process 0 (exit 2);
#           sweep, trace and run outside a launcher: exit 2 and a line that
#           says how to start it.
set -u

T=${1:?usage: test_cli_mpi.sh path/to/topocoll LAUNCHER [ARGS...]}
shift
case $T in
/*) ;;
*) T=$PWD/$T ;;
esac
launch=("$@")
[ "${#launch[@]}" -gt 0 ] || { echo "Bail out! no launcher"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(cd "$(dirname "$0")/.." && pwd)/tap.sh" # ok, not_ok, skip, check; n, nfail
PY=$(command -v python3 || true)
out=$tmp/out
err=$tmp/err
mpi2() { # mpi2 ARGS...: topocoll ARGS on 2 processes
	"${launch[@]}" 2 "$T" "$@" >"$out" 2>"$err"
	rc=$?
}
# The environment of a process no launcher started.
bare() {
	env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMI_RANK -u PMIX_RANK -u MPI_LOCALNRANKS \
		-u HYDRA_CONTROL_FD "$T" "$@" >"$out" 2>"$err"
	rc=$?
}

# ---- sweep and trace ------------------------------------------------------------

sweep_args=(sweep --engine mpi --topo complete,chain --coll allreduce,bcast --alg auto
	--bytes 8,8K --mode predict,native,emulated --ts 200000 --tw 1 --json)
mpi2 "${sweep_args[@]}"
src=$rc
serr=$(head -5 "$err")
cp "$out" "$tmp/sweep_mpi.json"
targs=(trace --topo complete:2 --coll allreduce --alg hypercube --bytes 1K --dtype int32 --clock logical)
mpi2 "${targs[@]}" --engine mpi --out "$tmp/tr_mpi.json"
trc=$rc
terr=$(head -3 "$err")
"$T" "${targs[@]}" --out "$tmp/tr_thr.json" >/dev/null 2>&1
# One Python for both checks (its start-up costs seconds on a loaded machine).
if [ -n "$PY" ]; then
	"$PY" - "$tmp/sweep_mpi.json" "$tmp/tr_mpi.json" "$tmp/tr_thr.json" >"$tmp/py" 2>&1 <<'PYEOF'
import json, math, sys

def sweep():
    m = json.load(open(sys.argv[1]))
    assert len(m) == 24, "rows: %d" % len(m)
    topos = {r["topology"] for r in m}
    assert topos == {"complete:2", "chain:2"}, topos
    pred = {(r["topology"], r["coll"], r["algorithm"], r["bytes"]): r for r in m if r["mode"] == "predict"}
    for r in m:
        key = (r["topology"], r["coll"], r["algorithm"], r["mode"], r["bytes"])
        if r["mode"] == "predict":
            assert r["verified"] is None, key
            continue
        assert r["verified"] is True, key
        assert r.get("processes") == 2, (key, r.get("processes"))
        assert r["measured_ns"] > 0 and r["modelled_ns"] > 0, key
        if r["mode"] == "emulated":
            assert r["measured_ns"] >= r["modelled_ns"] * 0.999, (key, r["measured_ns"], r["modelled_ns"])
        o = pred[(r["topology"], r["coll"], r["algorithm"], r["bytes"])]
        assert math.isclose(r["modelled_ns"], o["modelled_ns"], rel_tol=1e-9), (key, r["modelled_ns"], o["modelled_ns"])

def trace():
    m = json.load(open(sys.argv[2]))
    t = json.load(open(sys.argv[3]))
    assert m["otherData"]["verified"] is True
    assert m["otherData"]["engine"] == "mpi" and m["otherData"]["processes"] == 2, m["otherData"]
    xs = [e for e in m["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in xs} == {0, 1}, "slices of processes %s" % {e["pid"] for e in xs}
    starts = {e["id"]: e["pid"] for e in m["traceEvents"] if e["ph"] == "s"}
    ends = {e["id"]: e["pid"] for e in m["traceEvents"] if e["ph"] == "f"}
    assert starts and set(starts) == set(ends), "flows"
    assert any(starts[i] != ends[i] for i in starts), "no flow between the processes"
    def key(d):
        return sorted((e["pid"], e["name"], e["ts"], e["dur"]) for e in d["traceEvents"] if e["ph"] == "X")
    assert key(m) == key(t), "logical slices differ from threads: %s vs %s" % (key(m)[:4], key(t)[:4])

for name, f in (("sweep", sweep), ("trace", trace)):
    try:
        f()
        print(name, "ok")
    except Exception as e:
        print(name, "fail:", repr(e)[:400])
PYEOF
fi
if [ -z "$PY" ]; then
	echo "ok $((n += 1)) - sweep --engine mpi # SKIP python3 not found"
elif [ "$src" -eq 0 ]; then
	check "sweep --engine mpi at np = 2: one JSON array (process 0 alone prints), every row verified on both processes, modelled as predicted, emulated >= modelled" \
		"$(grep -qx 'sweep ok' "$tmp/py"; echo $?)" "$(grep '^sweep' "$tmp/py")" "$(tail -2 "$tmp/py")"
else
	not_ok "sweep --engine mpi at np = 2 (exit $src)" "$serr"
fi
if [ -z "$PY" ]; then
	echo "ok $((n += 1)) - trace --engine mpi # SKIP python3 not found"
elif [ "$trc" -eq 0 ]; then
	check "trace --engine mpi at np = 2: events of both processes, flows between them, the logical slices of threads" \
		"$(grep -qx 'trace ok' "$tmp/py"; echo $?)" "$(grep '^trace' "$tmp/py")" "$(tail -2 "$tmp/py")"
else
	not_ok "trace --engine mpi at np = 2 (exit $trc)" "$terr"
fi

# ---- errors ----------------------------------------------------------------------

mpi2 sweep --engine mpi --topo ring:4 --coll bcast --bytes 8 --mode native
check "sweep --engine mpi with a topology of another size: exit 2, one line" \
	"$([ "$rc" -eq 2 ] && [ "$(grep -c '^topocoll: ' "$err")" -eq 1 ] && grep -q 'ring:4 has 4 nodes but the launcher started 2 processes' "$err"; echo $?)" \
	"exit $rc" "$(head -3 "$err")"
for c in sweep trace run; do
	bare "$c" --engine mpi --topo ring:2 --coll bcast --bytes 8
	check "$c --engine mpi outside a launcher: exit 2, says how to start it" \
		"$([ "$rc" -eq 2 ] && grep -q "$c: --engine mpi: this process was not started by an MPI launcher; start it as: mpirun -np P topocoll $c --engine mpi" "$err"; echo $?)" \
		"exit $rc" "$(head -3 "$err")"
done

echo "1..$n"
[ "$nfail" -eq 0 ]
