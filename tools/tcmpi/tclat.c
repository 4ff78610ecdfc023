/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/tclat.c - a topocoll collective called through tc_* and
 * timed the way the OSU Micro-Benchmarks time an MPI collective, so that
 * the two compare: every call alone, a barrier before it, the clock read
 * around the call only; each rank's mean over the timed calls, and the
 * mean of that over the ranks (OSU's "Avg Latency(us)").
 *
 *   tclat [--p P] [--exec threads|fibres] [-m BYTES] [-i ITERS] [-x SKIP]
 *         COLL
 *
 * COLL: barrier bcast reduce allreduce gather scatter allgather alltoall.
 * complete:P (P = 2 by default), native.  The data are BYTES bytes per
 * block as OSU's -m BYTES:BYTES with MPI_CHAR (reductions: int8, sum;
 * root 0).  Prints "COLL BYTES avg_us min_us max_us".  Not installed: a
 * tool for docs/mpi-programs.md's comparison.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <topocoll.h>

enum coll { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, ALLTOALL };
static const char *const names[] = {"barrier", "bcast",   "reduce",    "allreduce",
                                    "gather",  "scatter", "allgather", "alltoall"};

struct args {
	enum coll c;
	size_t bytes;
	long iters, skip;
	double *lat_us; /* per rank */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int call(struct tc_proc *pr, const struct args *a, unsigned char *s, unsigned char *r)
{
	size_t n = a->bytes;
	switch (a->c) {
	case BARRIER:
		return tc_barrier(pr, NULL);
	case BCAST:
		return tc_bcast(pr, s, n, TC_BYTE, 0, NULL);
	case REDUCE:
		return tc_reduce(pr, s, r, n, TC_INT8, TC_OP_SUM, 0, NULL);
	case ALLREDUCE:
		return tc_allreduce(pr, s, r, n, TC_INT8, TC_OP_SUM, NULL);
	case GATHER:
		return tc_gather(pr, s, r, n, TC_BYTE, 0, NULL);
	case SCATTER:
		return tc_scatter(pr, s, r, n, TC_BYTE, 0, NULL);
	case ALLGATHER:
		return tc_allgather(pr, s, r, n, TC_BYTE, NULL);
	case ALLTOALL:
		return tc_alltoall(pr, s, r, n, TC_BYTE, NULL);
	}
	return TC_EINVAL;
}

static int rank_fn(struct tc_proc *pr, void *arg)
{
	struct args *a = arg;
	size_t len = a->bytes * (size_t)tc_size(pr) + 1;
	unsigned char *s = calloc(len, 1), *r = calloc(len, 1);
	if (!s || !r) {
		free(s);
		free(r);
		return TC_ENOMEM;
	}
	double timer = 0;
	int rc = tc_barrier(pr, NULL);
	for (long i = 0; i < a->iters + a->skip && !rc; i++) {
		rc = tc_barrier(pr, NULL);
		double t0 = now_s();
		if (!rc)
			rc = call(pr, a, s, r);
		double t1 = now_s();
		if (i >= a->skip)
			timer += t1 - t0;
	}
	a->lat_us[tc_rank(pr)] = timer * 1e6 / (double)a->iters;
	free(s);
	free(r);
	return rc;
}

int main(int argc, char **argv)
{
	struct args a = {.c = BARRIER, .bytes = 8, .iters = 1000, .skip = 100};
	int p = 2, exec = TC_EXEC_THREADS, have = 0;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--p") && v)
			p = atoi(argv[++i]);
		else if (!strcmp(o, "--exec") && v)
			exec = !strcmp(argv[++i], "fibres") ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
		else if (!strcmp(o, "-m") && v)
			a.bytes = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(o, "-i") && v)
			a.iters = atol(argv[++i]);
		else if (!strcmp(o, "-x") && v)
			a.skip = atol(argv[++i]);
		else {
			have = 0;
			for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++)
				if (!strcmp(o, names[k])) {
					a.c = (enum coll)k;
					have = 1;
				}
			if (!have) {
				fprintf(stderr, "usage: tclat [--p P] [--exec threads|fibres] [-m BYTES] "
				                "[-i ITERS] [-x SKIP] COLL\n");
				return 2;
			}
		}
	}
	if (p < 1 || a.iters < 1 || a.skip < 0) {
		fprintf(stderr, "tclat: bad --p, -i or -x\n");
		return 2;
	}
	char spec[32];
	snprintf(spec, sizeof spec, "complete:%d", p);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.p = p;
	cfg.topology = spec;
	cfg.exec = (enum tc_exec)exec;
	struct tc_team *team;
	int rc = tc_team_create(&cfg, &team);
	if (rc) {
		fprintf(stderr, "tclat: %s: %s\n", tc_strerror(rc), tc_error_detail());
		return 1;
	}
	a.lat_us = calloc((size_t)p, sizeof *a.lat_us);
	rc = a.lat_us ? tc_run(team, rank_fn, &a) : TC_ENOMEM;
	if (rc) {
		fprintf(stderr, "tclat: %s\n", tc_strerror(rc));
	} else {
		double sum = 0, lo = a.lat_us[0], hi = a.lat_us[0];
		for (int k = 0; k < p; k++) {
			sum += a.lat_us[k];
			lo = a.lat_us[k] < lo ? a.lat_us[k] : lo;
			hi = a.lat_us[k] > hi ? a.lat_us[k] : hi;
		}
		printf("%s %zu %.3f %.3f %.3f\n", names[a.c], a.bytes, sum / p, lo, hi);
	}
	free(a.lat_us);
	tc_team_destroy(team);
	return rc ? 1 : 0;
}
