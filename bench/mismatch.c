/* SPDX-License-Identifier: MIT */
/*
 * bench/mismatch.c - what mismatch detection costs (goal
 * <= 2% on the 8-byte allreduce and the barrier at p = 2).
 *
 * Two teams on the same topology, one with the check (the default) and one
 * with tc_team_config.no_mismatch_check = 1, measured in one process,
 * batch against batch: each batch is a tc_run in which every rank makes
 * `calls` back-to-back calls after a barrier, rank 0 timing them; the two
 * teams alternate (on, off, off, on, ...), so the machine's slow and fast
 * spells (the core-to-core latency moves between ~35 and ~160 ns for
 * seconds at a time here) fall on both.  Printed per case: the median time
 * per call of each team, their ratio, and the quartiles of the ratios of
 * paired batches (a batch of one against the neighbouring batch of the
 * other), which say how much of the difference is noise.
 *
 * Usage: mismatch [--topo SPEC] [--batches N] [--calls N]
 *   defaults complete:2, 41 batches per team, 20000 calls per batch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topocoll.h"
#include "stats.h"

struct batch {
	int coll; /* 0: barrier, 1: allreduce of one double */
	long calls;
	double ns_per_call; /* rank 0's */
	int err;
};

static int batch_fn(struct tc_proc *proc, void *argp)
{
	struct batch *b = argp;
	double v = tc_rank(proc), s = 0;
	int err = tc_barrier(proc, NULL);
	double t0 = bench_now_ns();
	for (long i = 0; i < b->calls && !err; i++)
		err = b->coll ? tc_allreduce(proc, &v, &s, 1, TC_DOUBLE, TC_OP_SUM, NULL)
		              : tc_barrier(proc, NULL);
	double t1 = bench_now_ns();
	if (tc_rank(proc) == 0) {
		b->ns_per_call = (t1 - t0) / (double)b->calls;
		b->err = err;
	}
	return err;
}

static double quantile(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	double at = q * (n - 1);
	int i = (int)at;
	return i + 1 < n ? v[i] + (at - i) * (v[i + 1] - v[i]) : v[i];
}

int main(int argc, char **argv)
{
	const char *topo = "complete:2";
	int batches = 41;
	long calls = 20000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--topo") && i + 1 < argc)
			topo = argv[++i];
		else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
			batches = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = atol(argv[++i]);
		else {
			fprintf(stderr, "usage: mismatch [--topo SPEC] [--batches N] [--calls N]\n");
			return 2;
		}
	}
	if (batches < 3 || calls < 1) {
		fprintf(stderr, "mismatch: --batches >= 3 and --calls >= 1\n");
		return 2;
	}
	struct tc_team *team[2]; /* [0]: check on, [1]: off */
	for (int k = 0; k < 2; k++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = topo;
		cfg.no_mismatch_check = k;
		int err = tc_team_create(&cfg, &team[k]);
		if (err) {
			fprintf(stderr, "mismatch: %s: %s\n", topo, tc_strerror(err));
			return 1;
		}
	}
	double *t[2] = {malloc(sizeof(double) * (size_t)batches),
	                malloc(sizeof(double) * (size_t)batches)};
	double *ratio = malloc(sizeof(double) * (size_t)batches);
	if (!t[0] || !t[1] || !ratio)
		return 1;
	static const char *const names[] = {"barrier", "allreduce 8 B"};
	printf("# command: mismatch --topo %s --batches %d --calls %ld\n", topo, batches, calls);
	printf("%-14s %12s %12s %8s %22s\n", "case", "check on", "check off", "on/off",
	       "paired ratio q1..q3");
	for (int coll = 0; coll < 2; coll++) {
		for (int b = 0; b < batches; b++) {
			for (int j = 0; j < 2; j++) {
				const int k = b % 2 ? 1 - j : j; /* on, off, off, on, ... */
				struct batch bt = {.coll = coll, .calls = calls};
				int err = tc_run(team[k], batch_fn, &bt);
				if (err || bt.err) {
					fprintf(stderr, "mismatch: %s: %s\n", names[coll],
					        tc_strerror(err ? err : bt.err));
					return 1;
				}
				t[k][b] = bt.ns_per_call;
			}
			ratio[b] = t[0][b] / t[1][b];
		}
		double q1 = quantile(ratio, batches, 0.25), q3 = quantile(ratio, batches, 0.75);
		double on = quantile(t[0], batches, 0.5), off = quantile(t[1], batches, 0.5);
		printf("%-14s %10.1f ns %10.1f ns %8.3f %10.3f .. %.3f\n", names[coll], on, off,
		       on / off, q1, q3);
	}
	for (int k = 0; k < 2; k++)
		tc_team_destroy(team[k]);
	free(t[0]);
	free(t[1]);
	free(ratio);
	return 0;
}
