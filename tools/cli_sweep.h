/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_sweep.h - what topocoll sweep's files share (tools/cli_sweep.c:
 * the options, the grid and the rows' text, CSV and JSON;
 * tools/cli_sweep_plot.c: the plot).  Private to them.
 */
#ifndef TOPOCOLL_CLI_SWEEP_H
#define TOPOCOLL_CLI_SWEEP_H

#include <stdint.h>

#include "cli.h"

/* One case of the sweep, as printed and plotted. */
struct sweep_row {
	const char *topo; /* canonical spec (owned by the sweep) */
	int p;
	enum tc_coll coll;
	const char *alg; /* registry string */
	int mode;        /* 0 predict, 1 native, 2 emulated */
	uint64_t bytes;
	double measured_ns, modelled_ns, formula_ns, lower_bound_ns;
	int rounds;
	long messages;
	int verified;      /* -1: not run */
	const char *error; /* a run that failed (static string), else NULL */
	int processes;     /* --engine mpi: the processes that ran their rank */
};

/* What reproduces a sweep's rows: the command line and the model. */
struct sweep_meta {
	const char *command; /* "topocoll sweep ...", shell-quoted */
	const struct cli_model *m;
};

/* Whether FILE (--plot), its .dat and its .gp can be written: the folder
 * exists and is writable, and so is each of them that exists.  0 or
 * CLI_USAGE (printed), before anything is swept. */
int cli_sweep_plot_check(const char *file);

/* Writes FILE's .dat and .gp for rows[0..n) and runs gnuplot on them: 0,
 * or CLI_FAIL (printed; without gnuplot the data and script are written). */
int cli_sweep_plot(const char *file, const struct sweep_row *rows, int n, const struct sweep_meta *meta);

#endif
