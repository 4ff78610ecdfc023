/* SPDX-License-Identifier: MIT */
/*
 * bench/nbc.c - nonblocking and persistent collectives.
 *
 * overlap: per rank, an allreduce of 1 MiB (doubles, sum) and a computation
 * over 1 MiB of its own data (passes of a multiply-add, enough of them for
 * the computation of all ranks to take about as long as the allreduce),
 * timed alone and then overlapped (tc_iallreduce, the computation in 16
 * slices with a tc_test after each, tc_wait).  Each of the three phases is
 * timed the same way: from the end of a barrier to the end of the next one,
 * on rank 0, so that it lasts until the last rank has finished.  Ranks that
 * share a CPU (fibres, or more threads than CPUs) then share it in the
 * phase alone as in the overlapped one: a fibre that computes without a
 * call into the library keeps its CPU's other fibres from running, so its
 * own time alone would be a quarter of its CPU's when four fibres share
 * it.  Prints, per execution (threads, fibres) and p, the medians and the
 * ratio overlapped / max(alone), which the goal puts at <= 1.2.
 * persistent: an 8-byte allreduce at p = 2, blocking against persistent
 * (tc_start + tc_wait), alternated, in ns per call.
 *
 * Output: one CSV line per case.  Usage: nbc [--reps N] [--p LIST]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topocoll.h"

enum { MIB = 1 << 20, SLICES = 16, CAL_PASSES = 8 };

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of the whole process: every rank's, waiting included. */
static double cpu_s(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

struct arg {
	int reps, passes;
	double *t_comm, *t_comp, *t_both; /* per rep, rank 0's */
	double *c_comm, *c_comp, *c_both; /* per rep, the process's CPU time */
};

static volatile double sink;

static void compute(double *a, size_t n, int passes)
{
	for (int k = 0; k < passes; k++)
		for (size_t i = 0; i < n; i++)
			a[i] = a[i] * 0.999 + 1e-3;
}

static int overlap_rank(struct tc_proc *proc, void *argp)
{
	struct arg *g = argp;
	const size_t n = MIB / sizeof(double);
	double *in = malloc(MIB), *out = malloc(MIB), *work = malloc(MIB);
	for (size_t i = 0; i < n; i++)
		in[i] = work[i] = (double)i;
	int err = 0;
	for (int r = 0; r < g->reps && !err; r++) {
		err = tc_barrier(proc, NULL);
		double t0 = now_s(), c0 = cpu_s();
		err = err ? err : tc_allreduce(proc, in, out, n, TC_DOUBLE, TC_OP_SUM, NULL);
		err = err ? err : tc_barrier(proc, NULL);
		double t1 = now_s(), c1 = cpu_s();
		compute(work, n, g->passes);
		err = err ? err : tc_barrier(proc, NULL);
		double t2 = now_s(), c2 = cpu_s();
		tc_request req;
		err = err ? err : tc_iallreduce(proc, in, out, n, TC_DOUBLE, TC_OP_SUM, NULL, &req);
		int done = 0;
		for (int s = 0; s < SLICES && !err; s++) {
			compute(work + (size_t)s * (n / SLICES), n / SLICES, g->passes);
			if (!done)
				err = tc_test(proc, &req, &done);
		}
		if (!err && !done)
			err = tc_wait(proc, &req, NULL);
		err = err ? err : tc_barrier(proc, NULL);
		double t3 = now_s(), c3 = cpu_s();
		if (tc_rank(proc) == 0) {
			g->t_comm[r] = t1 - t0;
			g->t_comp[r] = t2 - t1;
			g->t_both[r] = t3 - t2;
			g->c_comm[r] = c1 - c0;
			g->c_comp[r] = c2 - c1;
			g->c_both[r] = c3 - c2;
		}
	}
	sink = work[n / 2];
	free(in);
	free(out);
	free(work);
	return err;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return v[n / 2];
}

static double least(const double *v, int n)
{
	double m = v[0];
	for (int i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

static struct tc_team *team_of(int p, enum tc_exec exec)
{
	char spec[32];
	snprintf(spec, sizeof spec, "complete:%d", p);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	struct tc_team *t = NULL;
	return tc_team_create(&cfg, &t) ? NULL : t;
}

struct parg {
	int reps;
	double blocking_ns, persistent_ns;
};

static int persistent_rank(struct tc_proc *proc, void *argp)
{
	struct parg *g = argp;
	double v = 1, out;
	tc_request req;
	int err = tc_allreduce_init(proc, &v, &out, 1, TC_DOUBLE, TC_OP_SUM, NULL, &req);
	const int inner = 2000;
	double best_b = 1e30, best_p = 1e30;
	for (int r = 0; r < g->reps && !err; r++) {
		double t0 = now_s();
		for (int i = 0; i < inner && !err; i++)
			err = tc_allreduce(proc, &v, &out, 1, TC_DOUBLE, TC_OP_SUM, NULL);
		double t1 = now_s();
		for (int i = 0; i < inner && !err; i++) {
			err = tc_start(proc, &req);
			err = err ? err : tc_wait(proc, &req, NULL);
		}
		double t2 = now_s();
		if ((t1 - t0) < best_b)
			best_b = t1 - t0;
		if ((t2 - t1) < best_p)
			best_p = t2 - t1;
	}
	if (!err)
		err = tc_request_free(proc, &req);
	if (tc_rank(proc) == 0) {
		g->blocking_ns = best_b / inner * 1e9;
		g->persistent_ns = best_p / inner * 1e9;
	}
	return err;
}

int main(int argc, char **argv)
{
	int reps = 7;
	const char *plist = "2,8";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--p") && i + 1 < argc)
			plist = argv[++i];
	}
	if (reps < 1)
		reps = 1;
	printf("case,exec,p,passes,comm_ms,comp_ms,overlapped_ms,ratio,of_sum,"
	       "cpu_comm_ms,cpu_comp_ms,cpu_overlapped_ms\n");
	const int nbuf = reps > 3 ? reps : 3; /* the calibration's three runs */
	double *buf = malloc(6 * (size_t)nbuf * sizeof *buf);
	for (int e = 0; e < 2; e++) {
		enum tc_exec exec = e ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
		char *pl = strdup(plist);
		for (char *tok = strtok(pl, ","); tok; tok = strtok(NULL, ",")) {
			int p = atoi(tok);
			struct tc_team *team = team_of(p, exec);
			if (!team) {
				fprintf(stderr, "nbc: no team of %d ranks\n", p);
				continue;
			}
			/* Passes of the computation: about the allreduce's time, from
			 * the shortest of three runs of CAL_PASSES passes (enough for
			 * the barriers that bound the phase to be small beside it;
			 * the shortest: the least disturbed by other jobs, where a
			 * median of three is not). */
			struct arg g = {.reps = 3,
			                .passes = CAL_PASSES,
			                .t_comm = buf,
			                .t_comp = buf + nbuf,
			                .t_both = buf + 2 * nbuf,
			                .c_comm = buf + 3 * nbuf,
			                .c_comp = buf + 4 * nbuf,
			                .c_both = buf + 5 * nbuf};
			int err = tc_run(team, overlap_rank, &g);
			double c1 = least(g.t_comm, 3), k1 = least(g.t_comp, 3);
			if (!err && k1 > 0)
				g.passes = (int)(CAL_PASSES * c1 / k1 + 0.5);
			if (g.passes < 1)
				g.passes = 1;
			g.reps = reps;
			if (!err)
				err = tc_run(team, overlap_rank, &g);
			if (err) {
				fprintf(stderr, "nbc: %s\n", tc_strerror(err));
				tc_team_destroy(team);
				continue;
			}
			double c = median(g.t_comm, reps), k = median(g.t_comp, reps),
			       b = median(g.t_both, reps);
			double cc = median(g.c_comm, reps), ck = median(g.c_comp, reps),
			       cb = median(g.c_both, reps);
			printf("overlap,%s,%d,%d,%.3f,%.3f,%.3f,%.2f,%.2f,%.3f,%.3f,%.3f\n",
			       e ? "fibres" : "threads", p, g.passes, c * 1e3, k * 1e3, b * 1e3,
			       b / (c > k ? c : k), b / (c + k), cc * 1e3, ck * 1e3, cb * 1e3);
			tc_team_destroy(team);
		}
		free(pl);
	}
	printf("case,exec,p,blocking_ns,persistent_ns,ratio\n");
	for (int e = 0; e < 2; e++) {
		enum tc_exec exec = e ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
		struct tc_team *team = team_of(2, exec);
		struct parg g = {.reps = reps};
		int err = team ? tc_run(team, persistent_rank, &g) : TC_ENOMEM;
		if (!err)
			printf("persistent_8B,%s,2,%.0f,%.0f,%.2f\n", e ? "fibres" : "threads",
			       g.blocking_ns, g.persistent_ns, g.persistent_ns / g.blocking_ns);
		else
			fprintf(stderr, "nbc: %s\n", tc_strerror(err));
		if (team)
			tc_team_destroy(team);
	}
	free(buf);
	return 0;
}
