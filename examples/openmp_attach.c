/* SPDX-License-Identifier: MIT */
/*
 * examples/openmp_attach.c - the threads of an OpenMP parallel region take a
 * rank each with tc_attach, and their reduction is compared with OpenMP's.
 *
 * What it shows.  A program that already uses OpenMP keeps its threads: inside
 * `#pragma omp parallel num_threads(P)` thread t calls tc_attach(team, t) and
 * becomes rank t of a topocoll team (unpinned: OpenMP placed it), sums its
 * share of a vector of N 64-bit integers, combines the partial sums with
 * tc_allreduce over the team's topology (every rank gets the total), and gives
 * the rank back with tc_detach before the region ends.  The same sum is then
 * computed by `#pragma omp parallel for reduction(+ : sum)`.  Both are repeated
 * REPS times and timed (thread 0's wall clock, from a barrier to the end of
 * the last repetition); the program prints the time per reduction of each,
 * which algorithm tc_allreduce ran (tc_last_coll) and its modelled time.
 * Integer sums are exact, so every rank's result must equal OpenMP's and the
 * closed form: the exit status is 1 otherwise.
 *
 * Build: meson builds it when OpenMP is found (dependency('openmp')); by hand,
 *   cc -fopenmp openmp_attach.c $(pkg-config --cflags --libs topocoll)
 * Run:   build/examples/openmp_attach 1000000 4 100             (N P REPS)
 *        build/examples/openmp_attach 100000 8 50 hypercube:3   (a topology of P nodes)
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topocoll.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int p = argc > 2 ? atoi(argv[2]) : 4, reps = argc > 3 ? atoi(argv[3]) : 100;
	char spec[64];
	if (argc > 4)
		snprintf(spec, sizeof spec, "%s", argv[4]);
	else
		snprintf(spec, sizeof spec, "complete:%d", p);
	if (n < 0 || p < 1 || reps < 1) {
		fprintf(stderr, "usage: openmp_attach [N P REPS [TOPOLOGY]]\n");
		return 2;
	}
	int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
	if (!v)
		return 1;
	for (long i = 0; i < n; i++)
		v[i] = i % 1000 - 400;
	/* The closed form: full periods of 0..999 shifted by -400, and the rest. */
	long full = n / 1000, rest = n % 1000;
	int64_t expect = full * (999 * 1000 / 2 - 400 * 1000) + rest * (rest - 1) / 2 - 400 * rest;

	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.p = p;
	struct tc_team *team;
	int err = tc_team_create(&cfg, &team);
	if (err) {
		fprintf(stderr, "openmp_attach: %s: %s\n", spec, tc_strerror(err));
		free(v);
		return 1;
	}

	/* 1. topocoll: OpenMP threads as ranks. */
	int bad = 0, threads = 0;
	double t_tc = 0;
	struct tc_coll_info info = {0};
	omp_set_dynamic(0);
#pragma omp parallel num_threads(p) reduction(| : bad)
	{
		int t = omp_get_thread_num();
#pragma omp single
		threads = omp_get_num_threads();
		/* An implicit barrier ends the single: every thread sees threads. */
		struct tc_proc *proc = NULL;
		int e = threads == p ? tc_attach(team, t, &proc) : TC_EINVAL;
		long lo = n * t / p, hi = n * (t + 1) / p;
		int64_t total = 0;
#pragma omp barrier
		double t0 = omp_get_wtime();
		for (int r = 0; r < reps && !e; r++) {
			int64_t part = 0;
			for (long i = lo; i < hi; i++)
				part += v[i];
			e = tc_allreduce(proc, &part, &total, 1, TC_INT64, TC_OP_SUM, NULL);
		}
		if (t == 0) {
			t_tc = omp_get_wtime() - t0;
			if (!e)
				tc_last_coll(proc, &info);
		}
		if (e) { /* the others would wait for us forever: abort them */
			fprintf(stderr, "openmp_attach: thread %d: %s\n", t, tc_strerror(e));
			tc_team_abort(team);
		}
		bad |= e != 0 || total != expect;
		if (proc) {
			e = tc_detach(proc);
			bad |= e != 0;
		}
	}

	/* 2. OpenMP's own reduction over the same threads. */
	int64_t sum = 0;
	double t0 = omp_get_wtime();
	for (int r = 0; r < reps; r++) {
		sum = 0;
#pragma omp parallel for num_threads(p) reduction(+ : sum) schedule(static)
		for (long i = 0; i < n; i++)
			sum += v[i];
	}
	double t_omp = omp_get_wtime() - t0;
	bad |= sum != expect;

	printf("openmp_attach: sum of %ld int64 over %d OpenMP threads, %d repetitions\n", n, p, reps);
	printf("  topocoll on %s (tc_allreduce %s, modelled %.0f ns): %.2f us per reduction\n",
	       spec, info.algorithm ? info.algorithm : "?", (double)info.modelled_ps / TC_PS_PER_NS,
	       t_tc / reps * 1e6);
	printf("  OpenMP reduction(+ : sum):                        %.2f us per reduction\n",
	       t_omp / reps * 1e6);
	printf("  sums: topocoll %s, OpenMP %lld, closed form %lld\n", bad ? "WRONG" : "ok",
	       (long long)sum, (long long)expect);
	tc_team_destroy(team);
	free(v);
	printf("%s\n", bad ? "FAILED" : "ok: every rank's total = OpenMP's = the closed form");
	return bad;
}
