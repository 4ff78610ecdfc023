/* SPDX-License-Identifier: MIT */
/*
 * tests/stress_abort.c - random aborts at random points.
 *
 * Each run draws a team (p = 8..64 on whatever CPUs there are: 2 in CI), a
 * sequence of collectives and point-to-point exchanges (allreduce, bcast,
 * allgather, barrier, an exchange with every neighbour completed by
 * tc_waitall or by tc_test loops) ending with a barrier, a victim rank, a
 * step and a way to fail there: the victim returns an error from its SPMD
 * function, or calls tc_team_abort() and goes on calling (every call then
 * fails), or another thread aborts the team after a random delay.  Ranks are
 * skewed by random yields and sleeps.  Checked:
 *   - no rank hangs (each team has a 30 s timeout: TC_ETIMEDOUT fails the
 *     test, and so does the test's own .timeout);
 *   - every result a rank got with success is right (no success it did not
 *     have); with an injected failure every rank returns an error (the final
 *     barrier cannot complete without the victim);
 *   - the next run on the same team succeeds with right results.
 * Figures (stderr): runs, the largest time from the failure to the last
 * rank's return (abort latency), wall time.  `small` (p = 8, race suite too)
 * and `short` run in CI; TC_STRESS_LONG=1 makes `short` 1000 runs.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

enum { MAXP = 64, MAXSTEPS = 24, MAXCOUNT = 96 };
enum { OP_ALLREDUCE, OP_BCAST, OP_ALLGATHER, OP_BARRIER, OP_XCHG, OP_XCHG_TEST, NOPS };
enum { INJ_NONE, INJ_RETURN, INJ_ABORT_SELF, INJ_ABORT_OUTSIDE };

struct plan {
	int nsteps;
	int op[MAXSTEPS], count[MAXSTEPS], root[MAXSTEPS];
	int inject, victim, step;
	uint64_t seed;
	_Atomic int rc[MAXP];
	_Atomic int wrong;
	_Atomic uint64_t fail_ns; /* when the failure was injected */
	_Atomic uint64_t last_ns; /* when the last rank returned */
};

static uint64_t rnd(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void skew(uint64_t *s)
{
	uint64_t r = rnd(s) % 16;
	if (r == 0) {
		struct timespec ts = {0, (long)(rnd(s) % 200000)};
		nanosleep(&ts, NULL);
	} else if (r < 3) {
		sched_yield();
	}
}

static void max_store(_Atomic uint64_t *a, uint64_t v)
{
	uint64_t cur = atomic_load(a);
	while (cur < v && !atomic_compare_exchange_weak(a, &cur, v))
		;
}

/* One step; returns its error; *bad set on a wrong result. */
static int step(struct tc_proc *proc, const struct plan *pl, int s, int *bad)
{
	const int me = tc_rank(proc), p = tc_size(proc), n = pl->count[s];
	int64_t buf[MAXCOUNT * MAXP];
	int64_t in[MAXCOUNT];
	int err = TC_OK;
	switch (pl->op[s]) {
	case OP_ALLREDUCE:
		for (int i = 0; i < n; i++)
			in[i] = (int64_t)(me + 1) * (s + 1) + i;
		err = tc_allreduce(proc, in, buf, (size_t)n, TC_INT64, TC_OP_SUM, NULL);
		for (int i = 0; !err && i < n; i++)
			*bad |= buf[i] != (int64_t)p * (p + 1) / 2 * (s + 1) + (int64_t)p * i;
		break;
	case OP_BCAST:
		for (int i = 0; i < n; i++)
			buf[i] = me == pl->root[s] ? (int64_t)s * 1000 + i : -1;
		err = tc_bcast(proc, buf, (size_t)n, TC_INT64, pl->root[s], NULL);
		for (int i = 0; !err && i < n; i++)
			*bad |= buf[i] != (int64_t)s * 1000 + i;
		break;
	case OP_ALLGATHER:
		for (int i = 0; i < n; i++)
			in[i] = (int64_t)me * 7919 + s * 31 + i;
		err = tc_allgather(proc, in, buf, (size_t)n, TC_INT64, NULL);
		for (int r = 0; !err && r < p; r++)
			for (int i = 0; i < n; i++)
				*bad |= buf[r * n + i] != (int64_t)r * 7919 + s * 31 + i;
		break;
	case OP_BARRIER:
		err = tc_barrier(proc, NULL);
		break;
	case OP_XCHG:
	case OP_XCHG_TEST: {
		const int *nb;
		int deg = tc_neighbors(proc, &nb);
		tc_request req[2 * MAXP];
		int64_t got[MAXP], mine = (int64_t)me * 100000 + s;
		int posted = 0;
		for (int k = 0; k < deg && !err; k++) {
			err = tc_irecv(proc, nb[k], &got[k], sizeof got[k], &req[2 * k]);
			if (!err) {
				posted++;
				err = tc_isend(proc, nb[k], &mine, sizeof mine, &req[2 * k + 1]);
				if (!err)
					posted++;
			}
		}
		if (err) {
			/* A post failed (aborted): what was posted is cancelled. */
			for (int k = 0; k < posted; k++)
				tc_cancel(proc, &req[k]);
			break;
		}
		if (pl->op[s] == OP_XCHG) {
			err = tc_waitall(proc, 2 * deg, req);
		} else {
			for (int k = 0; k < 2 * deg && !err; k++) {
				int done = 0;
				while (!done && !err)
					err = tc_test(proc, &req[k], &done);
			}
			if (err)
				for (int k = 0; k < 2 * deg; k++)
					tc_cancel(proc, &req[k]);
		}
		for (int k = 0; !err && k < deg; k++)
			*bad |= got[k] != (int64_t)nb[k] * 100000 + s;
		break;
	}
	}
	return err;
}

static int spmd(struct tc_proc *proc, void *arg)
{
	struct plan *pl = arg;
	const int me = tc_rank(proc);
	uint64_t s = pl->seed * 1000003u + (uint64_t)me;
	int err = TC_OK, bad = 0;
	for (int k = 0; k < pl->nsteps; k++) {
		skew(&s);
		if (me == pl->victim && k == pl->step) {
			if (pl->inject == INJ_RETURN) {
				atomic_store(&pl->fail_ns, tc_test_now_ns());
				err = TC_ENOMEM; /* "failed" */
				break;
			}
			if (pl->inject == INJ_ABORT_SELF) {
				atomic_store(&pl->fail_ns, tc_test_now_ns());
				tc_team_abort(tc_proc_team(proc));
			}
		}
		int e = step(proc, pl, k, &bad);
		if (e && !err)
			err = e;
		if (err && !(me == pl->victim && pl->inject == INJ_ABORT_SELF))
			break; /* the victim that aborted goes on calling */
	}
	if (bad)
		atomic_fetch_add(&pl->wrong, 1);
	atomic_store(&pl->rc[me], err);
	max_store(&pl->last_ns, tc_test_now_ns());
	return err;
}

struct outside {
	struct tc_team *team;
	struct plan *pl;
	long delay_ns;
};

static void *outside_abort(void *arg)
{
	struct outside *o = arg;
	struct timespec ts = {o->delay_ns / 1000000000L, o->delay_ns % 1000000000L};
	nanosleep(&ts, NULL);
	atomic_store(&o->pl->fail_ns, tc_test_now_ns());
	tc_team_abort(o->team);
	return NULL;
}

static void draw_plan(struct plan *pl, int p, uint64_t *s, int inject)
{
	memset(pl, 0, sizeof *pl);
	pl->seed = rnd(s);
	pl->nsteps = 4 + (int)(rnd(s) % (MAXSTEPS - 4));
	for (int k = 0; k < pl->nsteps; k++) {
		pl->op[k] = (int)(rnd(s) % NOPS);
		pl->count[k] = 1 + (int)(rnd(s) % (p > 32 ? 16 : MAXCOUNT));
		pl->root[k] = (int)(rnd(s) % (uint64_t)p);
	}
	pl->op[pl->nsteps - 1] = OP_BARRIER;
	pl->inject = inject;
	pl->victim =
	        inject == INJ_NONE || inject == INJ_ABORT_OUTSIDE ? -1 : (int)(rnd(s) % (uint64_t)p);
	pl->step = (int)(rnd(s) % (uint64_t)pl->nsteps);
}

struct figures {
	int runs, injected, failed_runs;
	uint64_t max_latency_ns;
};

/* One team, one run with a failure injected, one clean run after it. */
static void one_round(int p, const char *spec, uint64_t *s, struct figures *fig)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.timeout_ms = 30000;
	cfg.stack_bytes = 256 << 10;
	struct tc_team *t = NULL;
	int err = tc_team_create(&cfg, &t);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	cr_assert_eq(tc_team_size(t), p);

	static struct plan pl; /* large; one at a time */
	int inject = 1 + (int)(rnd(s) % 3);
	draw_plan(&pl, p, s, inject);
	pthread_t th;
	struct outside o = {t, &pl, (long)(rnd(s) % 20000000)};
	if (inject == INJ_ABORT_OUTSIDE)
		pthread_create(&th, NULL, outside_abort, &o);
	err = tc_run(t, spmd, &pl);
	if (inject == INJ_ABORT_OUTSIDE)
		pthread_join(th, NULL);
	fig->runs++;
	fig->injected++;
	cr_assert_eq(atomic_load(&pl.wrong), 0, "%s: a wrong result reported as a success", spec);
	for (int r = 0; r < p; r++)
		cr_assert_neq(atomic_load(&pl.rc[r]), TC_ETIMEDOUT, "%s: rank %d hung", spec, r);
	if (inject != INJ_ABORT_OUTSIDE) {
		cr_assert_neq(err, 0, "%s: a failed run reported success", spec);
		for (int r = 0; r < p; r++)
			cr_assert_neq(atomic_load(&pl.rc[r]), 0,
			              "%s: rank %d returned success although rank %d failed at step %d",
			              spec, r, pl.victim, pl.step);
	}
	if (err) {
		fig->failed_runs++;
		uint64_t f = atomic_load(&pl.fail_ns), l = atomic_load(&pl.last_ns);
		if (f && l > f && l - f > fig->max_latency_ns)
			fig->max_latency_ns = l - f;
	}

	/* The next run on the same team succeeds with right results. */
	draw_plan(&pl, p, s, INJ_NONE);
	err = tc_run(t, spmd, &pl);
	fig->runs++;
	cr_assert_eq(err, 0, "%s: the run after an abort: %s", spec, tc_strerror(err));
	cr_assert_eq(atomic_load(&pl.wrong), 0);
	tc_team_destroy(t);
}

static void pick(uint64_t *s, int *p, char *spec)
{
	static const int ps[] = {8, 13, 16, 32, 33, 64};
	*p = ps[rnd(s) % 6];
	int kind = (int)(rnd(s) % 3);
	if (kind == 2 && (*p & (*p - 1)) == 0) {
		int d = 0;
		while ((1 << d) < *p)
			d++;
		snprintf(spec, 32, "hypercube:%d", d);
	} else if (kind == 1) {
		snprintf(spec, 32, "ring:%d", *p);
	} else {
		snprintf(spec, 32, "complete:%d", *p);
	}
}

static void report(const char *name, const struct figures *f, uint64_t t0)
{
	fprintf(stderr,
	        "stress_abort %s: %d runs (%d with a failure injected, %d failed), 0 hangs, "
	        "0 wrong results; abort latency (failure to the last rank's return) max %.2f ms; "
	        "%.1f s\n",
	        name, f->runs, f->injected, f->failed_runs, (double)f->max_latency_ns / 1e6,
	        (double)(tc_test_now_ns() - t0) / 1e9);
}

Test(stress_abort, small, .timeout = 120)
{
	uint64_t s = 42, t0 = tc_test_now_ns();
	struct figures f = {0};
	for (int k = 0; k < 12; k++)
		one_round(8, k % 2 ? "ring:8" : "hypercube:3", &s, &f);
	report("small", &f, t0);
}

Test(stress_abort, short, .timeout = 1800)
{
	const char *l = getenv("TC_STRESS_LONG");
	int rounds = l && *l && *l != '0' ? 500 : 24;
	uint64_t s = 20261124, t0 = tc_test_now_ns();
	struct figures f = {0};
	for (int k = 0; k < rounds; k++) {
		int p;
		char spec[32];
		pick(&s, &p, spec);
		one_round(p, spec, &s, &f);
	}
	report(rounds > 24 ? "long" : "short", &f, t0);
}
