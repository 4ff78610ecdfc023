/* SPDX-License-Identifier: MIT */
/* tools/cli_mpi.h - `topocoll run --engine mpi` (tools/cli_mpi.c in
 * topocoll-mpi; tools/cli_mpi_exec.c in topocoll, which starts it). */
#ifndef TC_TOOLS_CLI_MPI_H
#define TC_TOOLS_CLI_MPI_H

#include "cli_coll.h"

struct cli_mpi_opts {
	int direct;   /* --route direct */
	int emulated; /* --mode emulated */
	int vs_mpi;   /* --vs-mpi: MPI's own collective beside ours */
	long calls;   /* per timed run (<= 0: by size) */
	long repeat;  /* timed runs */
	long timeout_ms;
};

/* Runs the case on the processes of the MPI job that started this one:
 * CLI_OK, CLI_FAIL or CLI_USAGE (not started by a launcher, or the
 * topology's size is not the job's).  argc, argv: run's own arguments,
 * with which topocoll (tools/cli_mpi_exec.c) starts topocoll-mpi
 * (tools/cli_mpi.c, which ignores them). */
int cli_run_mpi(const struct cli_case *cs, const struct cli_mpi_opts *mo, int argc, char **argv);

#endif
