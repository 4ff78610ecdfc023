#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/model_mpi.sh BUILD [--np LIST] [ARGS...] - `./tools/bench model
# --engine mpi`: bench/model_mpi (emulated against modelled time over MPI
# processes) at each np of LIST (default 2,8) under the launcher of the MPI
# BUILD's engine was built against (Open MPI: mpirun.openmpi --oversubscribe,
# --allow-run-as-root as root; MPICH: mpiexec.mpich).  ARGS go to
# model_mpi.  Exits 0 with a note when BUILD has no MPI engine.
set -euo pipefail
b=$1
shift
nps=2,8
args=()
while [ $# -gt 0 ]; do
	case "$1" in
		--np) nps=${2:?--np needs a list such as 2,8}; shift 2 ;;
		*) args+=("$1"); shift ;;
	esac
done
exe=$b/bench/model_mpi
if [ ! -x "$exe" ]; then
	echo "# model --engine mpi: skipped: $b has no MPI engine (install libopenmpi-dev" \
		"openmpi-bin, or libmpich-dev mpich, and rebuild; docs/mpi.md)"
	exit 0
fi
if ldd "$exe" | grep -q libmpich; then
	launch=(mpiexec.mpich -n)
else
	launch=(mpirun.openmpi --oversubscribe)
	[ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
	launch+=(-np)
fi
if ! command -v "${launch[0]}" >/dev/null 2>&1; then
	echo "# model --engine mpi: skipped: no ${launch[0]}"
	exit 0
fi
echo "# command: ./tools/bench model --engine mpi --np $nps ${args[*]}"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
status=0
for np in ${nps//,/ }; do
	"${launch[@]}" "$np" "$exe" "${args[@]}" || status=1
done
exit $status
