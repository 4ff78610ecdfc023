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

/*
 * sweep and trace with --engine mpi.  cli_mpi_begin: in topocoll, replaces
 * this process with topocoll-mpi CMD ARGS (returns only on failure:
 * CLI_USAGE, said); in topocoll-mpi, checks that an MPI launcher started
 * the process (else CLI_USAGE, said), initialises MPI and sets *me and *np;
 * processes other than 0 then print nothing (stdout to /dev/null,
 * cli_msg_quiet): process 0 speaks for the job.  cli_mpi_end finalises MPI
 * and returns status as every process agrees on it (the worst).
 */
int cli_mpi_begin(const char *cmd, int argc, char **argv, int *me, int *np);
int cli_mpi_end(int status);
/* A team over the job's processes (collective): tc_team_create_mpi on
 * MPI_COMM_WORLD, routed transfers direct or forwarded. */
int cli_mpi_team(const struct tc_team_config *cfg, int direct, struct tc_team **team);
void cli_mpi_team_destroy(struct tc_team *team);
/*
 * cli_run_coll on a team from cli_mpi_team: every process runs its own
 * rank of the case (cli_rank_run: the same inputs and reference) and every
 * process gets the same result: verified (every process's buffer after the
 * first and the last call of each run), the first wrong rank, the
 * algorithm (the processes' agreement checked), measured_ns (native: per
 * call, from the first process's entry to the last one's exit over the
 * run's calls, the clocks of the processes aligned first; emulated: one
 * call started together at an agreed logical time, to the last process's
 * end), modelled_ns (the largest logical clock over the processes, per
 * call).  No statistics.
 */
int cli_mpi_run_coll(struct tc_team *team, const struct cli_run_args *a, struct cli_run_result *r);
/* Process 0 gets every process's events of the team (ev[r], n[r]: owned
 * by the caller, free each and the arrays) and the sum of their dropped
 * counts; the others NULL.  0 or TC_ENOMEM (agreed). */
int cli_mpi_gather_events(struct tc_team *team, struct tc_event ***ev, int **n, uint64_t *dropped);

#endif
