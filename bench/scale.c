/* SPDX-License-Identifier: MIT */
/*
 * bench/scale.c - teams of many ranks: for p = 64, 256, 1024,
 * 4096 on a hypercube, each in a process of its own, the wall time and the
 * peak memory (resident set, getrusage) of
 *   create   tc_team_create
 *   again    tc_team_create of the same team once the first is destroyed
 *            (a program's later teams: the machine is read once per process)
 *   first    the first 8-byte allreduce: threads spawned, the schedule
 *            decided and built once for the team, every rank's plan
 *            compiled (the slowest rank, from a common start)
 *   cached   an 8-byte allreduce whose schedule is cached (median of the
 *            slowest rank over the repetitions)
 *   predict  tc_predict of the same call (AUTO), no threads
 * printed as a table and one JSON line per p (exec: threads or fibres, as
 * AUTO or TC_EXEC chose).  Thread (or fibre) stacks are 256 KiB
 * (tc_team_config.stack_bytes) so that 4096 threads fit in this address
 * space; a team that does not fit fails with TC_ELIMIT and its reason.
 * Usage: scale [--p LIST] [--reps N]
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "topocoll.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double peak_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024.0;
}

struct ctx {
	int reps;
	pthread_barrier_t bar; /* threads; fibres use tc_barrier */
	int fibres;
	double *first, *cached; /* per rank */
	int err;
};

/* The common start of a timed call: a kernel-level barrier on threads; on
 * fibres (TC_EXEC, or AUTO when p > CPUs) that would block the CPU's other
 * ranks, so tc_barrier. */
static void sync_all(struct ctx *c, struct tc_proc *proc)
{
	if (c->fibres)
		tc_barrier(proc, NULL);
	else
		sync_all(c, proc);
}

static int rank_fn(struct tc_proc *proc, void *arg)
{
	struct ctx *c = arg;
	int me = tc_rank(proc);
	double in = me, out;
	sync_all(c, proc);
	double t0 = now_s();
	int err = tc_allreduce(proc, &in, &out, 1, TC_DOUBLE, TC_OP_SUM, NULL);
	c->first[me] = now_s() - t0;
	for (int i = 0; i < c->reps && !err; i++) {
		sync_all(c, proc);
		t0 = now_s();
		err = tc_allreduce(proc, &in, &out, 1, TC_DOUBLE, TC_OP_SUM, NULL);
		c->cached[(size_t)i * (size_t)tc_size(proc) + (size_t)me] = now_s() - t0;
	}
	if (!err && out != (double)tc_size(proc) * (tc_size(proc) - 1) / 2)
		err = TC_EINVAL;
	return err;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One p, in this (child) process: prints its row and JSON line. */
static int one(int d, int reps)
{
	char spec[32];
	snprintf(spec, sizeof spec, "hypercube:%d", d);
	const int p = 1 << d;
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.stack_bytes = 256 << 10;
	struct tc_team *t;
	double t0 = now_s();
	int err = tc_team_create(&cfg, &t);
	double create = now_s() - t0, m_create = peak_mb();
	if (err) {
		printf("%-14s %6d  team: %s (%s)\n", spec, p, tc_err_name(err), tc_error_detail());
		return 1;
	}
	struct ctx c = {.reps = reps};
	c.first = calloc((size_t)p, sizeof *c.first);
	c.cached = calloc((size_t)p * (size_t)reps, sizeof *c.cached);
	pthread_barrier_init(&c.bar, NULL, (unsigned)p);
	struct tc_team_info ti;
	tc_team_get_info(t, &ti);
	c.fibres = ti.exec == TC_EXEC_FIBRES;
	t0 = now_s();
	err = tc_run(t, rank_fn, &c);
	double run = now_s() - t0, m_run = peak_mb();
	if (err) {
		printf("%-14s %6d  run: %s\n", spec, p, tc_err_name(err));
		return 1;
	}
	double first = 0;
	for (int r = 0; r < p; r++)
		first = c.first[r] > first ? c.first[r] : first;
	double *slow = calloc((size_t)reps, sizeof *slow);
	for (int i = 0; i < reps; i++)
		for (int r = 0; r < p; r++)
			if (c.cached[(size_t)i * p + r] > slow[i])
				slow[i] = c.cached[(size_t)i * p + r];
	qsort(slow, (size_t)reps, sizeof *slow, cmp_d);
	double cached = slow[reps / 2];
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	struct tc_model md;
	tc_model_default(&md);
	struct tc_prediction pr;
	t0 = now_s();
	err = tc_predict(tc_team_topo(t), tc_team_model(t), TC_COLL_ALLREDUCE, NULL, 8, 8, 0, 0, &pr);
	double predict = now_s() - t0, m_all = peak_mb();
	const char *alg = err ? tc_err_name(err) : pr.algorithm;
	tc_team_destroy(t);
	/* The same team again in this process: what a program that makes
	 * several teams pays for each after its first (the machine's
	 * description is read once per process). */
	t0 = now_s();
	double again = NAN;
	if (!tc_team_create(&cfg, &t)) {
		again = now_s() - t0;
		tc_team_destroy(t);
	}
	printf("%-14s %6d %9.3f %9.4f %9.3f %10.3f %10.1f %9.3f %9.0f %9.0f %9.0f %8.2f  %s\n",
	       spec, p, create, again, first, cached * 1e3, (double)info.sched_cache_bytes / 1024,
	       predict, m_create, m_run, m_all, run, alg);
	printf("{\"topology\": \"%s\", \"p\": %d, \"create_s\": %.6f, \"create_again_s\": %.6f, "
	       "\"first_s\": %.6f, "
	       "\"cached_ms\": %.6f, \"cache_kb\": %.1f, \"predict_s\": %.6f, "
	       "\"peak_mb_create\": %.1f, \"peak_mb_run\": %.1f, \"peak_mb\": %.1f, "
	       "\"run_s\": %.3f, \"team_mb\": %.1f, \"exec\": \"%s\"}\n",
	       spec, p, create, again, first, cached * 1e3, (double)info.sched_cache_bytes / 1024,
	       predict, m_create, m_run, m_all, run, (double)info.memory_bytes / (1 << 20),
	       info.exec == TC_EXEC_FIBRES ? "fibres" : "threads");
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int ds[8] = {6, 8, 10, 12}, nd = 4, reps = 20;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--p") && i + 1 < argc) {
			nd = 0;
			for (char *s = strtok(argv[++i], ","); s && nd < 8; s = strtok(NULL, ",")) {
				int p = atoi(s), d = 0;
				while ((1 << d) < p)
					d++;
				ds[nd++] = d;
			}
		} else {
			fprintf(stderr, "usage: scale [--p LIST] [--reps N]\n");
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;
	printf("# %ld CPUs; 8-byte allreduce (AUTO), thread stacks 256 KiB; times in s unless "
	       "said; memory: peak resident MB after each phase\n",
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("%-14s %6s %9s %9s %9s %10s %10s %9s %9s %9s %9s %8s  %s\n", "topology", "p",
	       "create", "again", "first", "cached_ms", "cache_KB", "predict", "MB_create",
	       "MB_run", "MB_all", "run_s", "algorithm");
	fflush(stdout);
	for (int i = 0; i < nd; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(one(ds[i], reps));
		int st;
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st))
			printf("hypercube:%d: killed by signal %d\n", ds[i],
			       WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	}
	return 0;
}
