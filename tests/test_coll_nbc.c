/* SPDX-License-Identifier: MIT */
/*
 * Nonblocking and persistent collectives (topocoll/coll.h): every
 * collective with a request form against the sequential reference of
 * tests/common/coll_ref.c, all of them outstanding at once on one team and
 * completed in an order of each rank's own (shuffled), persistent requests
 * started many times with new inputs, the variable-count calls (against
 * their definitions), the multicast's (against the blocking multicast,
 * on several member sets, and its agreement's failures), a blocking
 * collective behind
 * outstanding ones, progress made by tests alone, misuse (a request waited
 * twice, started or freed while active, given to another call while
 * active), a peer that never joins (a clear
 * error, no hang), and tc_self().  Threads, or fibres with TC_EXEC=fibres.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "coll_ref.h"
#include "topocoll.h"
#include "util.h"

/* The collectives that have request forms. */
static const enum tc_coll colls[] = {TC_COLL_BCAST,       TC_COLL_REDUCE,
                                     TC_COLL_ALLREDUCE,   TC_COLL_BARRIER,
                                     TC_COLL_ALLGATHER,   TC_COLL_REDUCE_SCATTER,
                                     TC_COLL_SCAN,        TC_COLL_EXSCAN,
                                     TC_COLL_SCATTER,     TC_COLL_GATHER,
                                     TC_COLL_ALLTOALL,    TC_COLL_SHIFT,
                                     TC_COLL_GRAY2BINARY, TC_COLL_BINARY2GRAY};
#define NCOLLS ((int)(sizeof colls / sizeof colls[0]))

/* The request form of case c (persistent: the _init one). */
static int call_req(struct tc_proc *proc, const struct ct_case *c, const void *s, void *r,
                    tc_request *req, int persistent)
{
	const struct tc_coll_opts o = {0};
	const size_t n = c->count;
	const enum tc_dtype dt = c->dt;
	const enum tc_op op = c->op;
	const int root = c->root;
#define TC_FORM(name, ...)                                         \
	(persistent ? tc_##name##_init(proc, __VA_ARGS__, &o, req) \
	            : tc_i##name(proc, __VA_ARGS__, &o, req))
	switch (c->coll) {
	case TC_COLL_BCAST:
		return TC_FORM(bcast, r, n, dt, root);
	case TC_COLL_REDUCE:
		return TC_FORM(reduce, s, r, n, dt, op, root);
	case TC_COLL_ALLREDUCE:
		return TC_FORM(allreduce, s, r, n, dt, op);
	case TC_COLL_BARRIER:
		return persistent ? tc_barrier_init(proc, &o, req) : tc_ibarrier(proc, &o, req);
	case TC_COLL_ALLGATHER:
		return TC_FORM(allgather, s, r, n, dt);
	case TC_COLL_REDUCE_SCATTER:
		return TC_FORM(reduce_scatter, s, r, n, dt, op);
	case TC_COLL_SCAN:
		return TC_FORM(scan, s, r, n, dt, op);
	case TC_COLL_EXSCAN:
		return TC_FORM(exscan, s, r, n, dt, op);
	case TC_COLL_SCATTER:
		return TC_FORM(scatter, s, r, n, dt, root);
	case TC_COLL_GATHER:
		return TC_FORM(gather, s, r, n, dt, root);
	case TC_COLL_ALLTOALL:
		return TC_FORM(alltoall, s, r, n, dt);
	case TC_COLL_SHIFT:
		return TC_FORM(shift, s, r, n, dt, c->q);
	case TC_COLL_GRAY2BINARY:
		return TC_FORM(gray2binary, s, r, n, dt);
	case TC_COLL_BINARY2GRAY:
		return TC_FORM(binary2gray, s, r, n, dt);
	default:
		return TC_EINVAL;
	}
#undef TC_FORM
}

/* One collective of a rank's batch: its case, buffers and expected result. */
struct slot {
	struct ct_case c;
	unsigned char *s, *r, *expect;
	size_t sb, rb;
	int gets;
	tc_request req;
};

struct batch {
	int count; /* elements per block */
	int persistent;
	int iters;
	int mode;            /* 0 waits in a shuffled order, 1 waitall, 2 test loops */
	int blocking_behind; /* a blocking allreduce after starting them */
	atomic_int failures;
	char msg[256];
};

static void fail(struct batch *b, const char *what, int rank, int i)
{
	if (atomic_fetch_add(&b->failures, 1) == 0)
		snprintf(b->msg, sizeof b->msg, "rank %d, %s: %s", rank,
		         i >= 0 ? tc_coll_name(colls[i]) : "-", what);
}

static void fill(struct slot *x, int p, int me, uint64_t seed)
{
	x->c.seed = seed;
	size_t es = tc_dtype_size(x->c.dt);
	for (size_t i = 0; i < x->sb / es; i++)
		ct_input(&x->c, me, i, x->s + i * es);
	memset(x->r, 0xa5, x->rb);
	if (x->c.coll == TC_COLL_BCAST && me == x->c.root) /* its one buffer is the input */
		for (size_t i = 0; i < x->c.count; i++)
			ct_input(&x->c, me, i, x->r + i * es);
	x->gets = ct_expect(&x->c, p, me, x->expect) == 0;
}

static int check(const struct slot *x)
{
	return !x->gets || !x->rb || memcmp(x->r, x->expect, x->rb) == 0;
}

static int batch_rank(struct tc_proc *proc, void *arg)
{
	struct batch *b = arg;
	const int p = tc_size(proc), me = tc_rank(proc);
	const bool pow2 = (p & (p - 1)) == 0;
	struct slot xs[NCOLLS];
	int order[NCOLLS], n = 0;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1);
	if (tc_self() != proc)
		fail(b, "tc_self() is not the rank's proc", me, -1);
	for (int i = 0; i < NCOLLS; i++) {
		struct slot *x = &xs[i];
		memset(x, 0, sizeof *x);
		const enum tc_coll k = colls[i];
		const bool reduces = tc_coll_flags(k) & TC_CF_REDUCES;
		x->c = (struct ct_case){.coll = k,
		                        .count = (size_t)b->count,
		                        .dt = reduces ? TC_INT64 : TC_INT32,
		                        .op = TC_OP_SUM,
		                        .root = p > 1 ? 1 : 0,
		                        .q = 1};
		x->sb = ct_sbytes(&x->c, p, me);
		x->rb = ct_rbytes(&x->c, p, me);
		x->s = malloc(x->sb + 1);
		x->r = malloc(x->rb + 1);
		x->expect = malloc(x->rb + 1);
	}
	for (int it = 0; it < b->iters && !atomic_load(&b->failures); it++) {
		n = 0;
		for (int i = 0; i < NCOLLS; i++) {
			struct slot *x = &xs[i];
			if (!pow2 && (colls[i] == TC_COLL_GRAY2BINARY || colls[i] == TC_COLL_BINARY2GRAY))
				continue;
			fill(x, p, me, 1000u * (unsigned)it + (unsigned)i);
			int err = TC_OK;
			if (!b->persistent || it == 0)
				err = call_req(proc, &x->c, x->s, x->r, &x->req, b->persistent);
			if (!err && b->persistent)
				err = tc_start(proc, &x->req);
			if (err) {
				fail(b, tc_strerror(err), me, i);
				return err;
			}
			order[n++] = i;
		}
		if (b->blocking_behind) {
			int64_t v = me + 1, sum = 0;
			int err = tc_allreduce(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL);
			if (err || sum != (int64_t)p * (p + 1) / 2)
				fail(b, "blocking allreduce behind outstanding requests", me, -1);
		}
		/* Each rank its own order of completion. */
		for (int i = n - 1; i > 0; i--) {
			int j = (int)(tc_test_rand(&rng) % (uint64_t)(i + 1)), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		if (b->mode == 1) {
			tc_request reqs[NCOLLS];
			for (int k = 0; k < n; k++)
				reqs[k] = xs[order[k]].req;
			/* Requests are not moved while active: wait on copies of
			 * none; so wait on the slots' own storage one by one. */
			(void)reqs;
			int err = 0;
			for (int k = 0; k < n && !err; k++)
				err = tc_waitall(proc, 1, &xs[order[k]].req);
			if (err)
				fail(b, tc_strerror(err), me, -1);
		} else {
			for (int k = 0; k < n; k++) {
				struct slot *x = &xs[order[k]];
				int err;
				if (b->mode == 2) {
					int done = 0;
					do
						err = tc_test(proc, &x->req, &done);
					while (!done && !err);
				} else {
					err = tc_wait(proc, &x->req, NULL);
				}
				if (err)
					fail(b, tc_strerror(err), me, order[k]);
			}
		}
		for (int k = 0; k < n; k++)
			if (!check(&xs[order[k]]))
				fail(b, "result differs from the reference", me, order[k]);
	}
	for (int i = 0; i < NCOLLS; i++) {
		if (b->persistent &&
		    (pow2 || (colls[i] != TC_COLL_GRAY2BINARY && colls[i] != TC_COLL_BINARY2GRAY))) {
			int err = tc_request_free(proc, &xs[i].req);
			if (err)
				fail(b, "tc_request_free", me, i);
		}
		free(xs[i].s);
		free(xs[i].r);
		free(xs[i].expect);
	}
	return 0;
}

/* One team of spec running fn (batch_rank, vbatch_rank, mbatch_rank) over a
 * struct batch of these settings; every rank's failures reported. */
static void run_with(tc_spmd_fn fn, const char *spec, int count, int persistent, int iters,
                     int mode, int blocking_behind)
{
	char msg[256];
	struct tc_team *team = ct_team(spec, NULL, msg, sizeof msg);
	cr_assert_not_null(team, "%s", msg);
	struct batch b = {.count = count,
	                  .persistent = persistent,
	                  .iters = iters,
	                  .mode = mode,
	                  .blocking_behind = blocking_behind};
	int err = tc_run(team, fn, &b);
	cr_assert_eq(atomic_load(&b.failures), 0, "%s count %d: %s", spec, count, b.msg);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	tc_team_destroy(team);
}

static void run_batch(const char *spec, int count, int persistent, int iters, int mode, int blocking_behind)
{
	run_with(batch_rank, spec, count, persistent, iters, mode, blocking_behind);
}

static const char *specs[] = {"complete:1", "complete:2", "ring:3",      "hypercube:2",
                              "ring:5",     "torus:2x4",  "hypercube:3", "chain:7"};
#define NSPECS ((int)(sizeof specs / sizeof specs[0]))

Test(nbc, every_collective_outstanding, .timeout = 300)
{
	static const int counts[] = {0, 1, 7, 300};
	for (int s = 0; s < NSPECS; s++)
		for (int k = 0; k < 4; k++)
			run_batch(specs[s], counts[k], 0, 2, 0, 0);
}

Test(nbc, test_loops_and_waitall, .timeout = 300)
{
	for (int s = 0; s < NSPECS; s++) {
		run_batch(specs[s], 5, 0, 2, 2, 0);
		run_batch(specs[s], 5, 0, 2, 1, 0);
	}
}

Test(nbc, blocking_behind_outstanding, .timeout = 300)
{
	for (int s = 0; s < NSPECS; s++)
		run_batch(specs[s], 3, 0, 2, 0, 1);
}

Test(nbc, large_outstanding, .timeout = 300)
{
	/* Single-copy messages, staged combines, TMP across rounds. */
	run_batch("hypercube:2", 40000, 0, 2, 0, 0);
	run_batch("ring:3", 40000, 1, 2, 0, 0);
}

Test(persistent, every_collective_restarted, .timeout = 300)
{
	static const int counts[] = {0, 1, 7, 300};
	for (int s = 0; s < NSPECS; s++)
		for (int k = 0; k < 4; k++)
			run_batch(specs[s], counts[k], 1, 4, k % 3, k == 3);
}

/* ---- misuse ---- */

struct misuse {
	atomic_int failures;
	char msg[256];
};

#define EXPECT(m, cond, what)                                                                 \
	do {                                                                                  \
		if (!(cond) && atomic_fetch_add(&(m)->failures, 1) == 0)                      \
			snprintf((m)->msg, sizeof(m)->msg, "rank %d: %s (%s)", tc_rank(proc), \
			         what, tc_error_detail());                                    \
	} while (0)

static int misuse_rank(struct tc_proc *proc, void *arg)
{
	struct misuse *m = arg;
	int64_t v = 1, out = 0;
	tc_request r;
	EXPECT(m, tc_iallreduce(proc, &v, &out, 1, TC_INT64, TC_OP_SUM, NULL, &r) == 0, "start");
	EXPECT(m, tc_cancel(proc, &r) == TC_EINVAL, "cancel of a collective request");
	EXPECT(m, tc_wait(proc, &r, NULL) == 0, "first wait");
	EXPECT(m, out == tc_size(proc), "result");
	EXPECT(m, tc_wait(proc, &r, NULL) == TC_EINVAL, "second wait");
	EXPECT(m, strstr(tc_error_detail(), "not active") != NULL, "detail of the second wait");
	int done = 0;
	EXPECT(m, tc_test(proc, &r, &done) == TC_EINVAL, "test after the wait");
	EXPECT(m, tc_start(proc, &r) == TC_EINVAL, "tc_start of a nonblocking request");
	EXPECT(m, tc_request_free(proc, &r) == TC_EINVAL, "free of a nonblocking request");

	tc_request q;
	EXPECT(m, tc_allreduce_init(proc, &v, &out, 1, TC_INT64, TC_OP_SUM, NULL, &q) == 0, "init");
	EXPECT(m, tc_wait(proc, &q, NULL) == TC_EINVAL, "wait before any start");
	EXPECT(m, tc_start(proc, &q) == 0, "start");
	EXPECT(m, tc_start(proc, &q) == TC_EPENDING, "start while active");
	EXPECT(m, tc_request_free(proc, &q) == TC_EPENDING, "free while active");
	EXPECT(m, tc_wait(proc, &q, NULL) == 0, "wait");
	EXPECT(m, tc_wait(proc, &q, NULL) == TC_EINVAL, "second wait");
	EXPECT(m, tc_request_free(proc, &q) == 0, "free");
	EXPECT(m, tc_request_free(proc, &q) == TC_EINVAL, "second free");
	/* An argument error starts nothing: the wait says so. */
	EXPECT(m, tc_iallreduce(proc, &v, &out, 1, (enum tc_dtype)999, TC_OP_SUM, NULL, &r) == TC_EINVAL,
	       "bad datatype");
	EXPECT(m, tc_wait(proc, &r, NULL) == TC_EINVAL, "wait on a request whose start failed");
	return 0;
}

Test(nbc, misuse, .timeout = 120)
{
	char msg[256];
	struct tc_team *team = ct_team("ring:4", NULL, msg, sizeof msg);
	cr_assert_not_null(team, "%s", msg);
	struct misuse m = {0};
	cr_assert_eq(tc_run(team, misuse_rank, &m), 0);
	cr_assert_eq(atomic_load(&m.failures), 0, "%s", m.msg);
	tc_team_destroy(team);
}

/* A request still active given to a call that starts one (a collective's
 * request forms, a receive): TC_EPENDING with the detail, nothing started
 * (every rank makes the same calls: the team's order of calls is
 * unchanged), and the request completes as first started; once completed,
 * it starts again.  Storage never used for a request, or holding a copy of
 * an active one's bytes, is never taken for an active request. */
static int reuse_rank(struct tc_proc *proc, void *arg)
{
	struct misuse *m = arg;
	const int p = tc_size(proc), me = tc_rank(proc);
	int64_t v = me + 1, sum = 0, b[4] = {0}, w = me, got[64];
	size_t counts[64], displs[64];
	for (int i = 0; i < p; i++)
		counts[i] = 1, displs[i] = (size_t)i;
	const int members[] = {0};
	if (me == 0)
		b[0] = b[3] = 42;
	tc_request r;
	EXPECT(m, tc_iallreduce(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL, &r) == 0, "start");
	EXPECT(m, tc_ibcast(proc, b, 4, TC_INT64, 0, NULL, &r) == TC_EPENDING,
	       "ibcast on the active request");
	EXPECT(m, strstr(tc_error_detail(), "tc_ibcast: the request is still active") != NULL,
	       "its detail");
	EXPECT(m, tc_bcast_init(proc, b, 4, TC_INT64, 0, NULL, &r) == TC_EPENDING,
	       "bcast_init on the active request");
	EXPECT(m, tc_iallgatherv(proc, &w, 1, got, counts, displs, TC_INT64, NULL, &r) == TC_EPENDING,
	       "iallgatherv on the active request");
	EXPECT(m, tc_imulticast(proc, b, 4, TC_INT64, 0, members, 1, NULL, &r) == TC_EPENDING,
	       "imulticast on the active request");
	EXPECT(m, tc_irecv(proc, 0, b, sizeof b, &r) == TC_EPENDING, "irecv on the active request");
	EXPECT(m, tc_wait(proc, &r, NULL) == 0, "wait for the first call");
	EXPECT(m, sum == (int64_t)p * (p + 1) / 2, "the first call's result");
	EXPECT(m, me == 0 || b[0] == 0, "the refused bcast wrote nothing");
	EXPECT(m, tc_ibcast(proc, b, 4, TC_INT64, 0, NULL, &r) == 0, "started again once complete");
	EXPECT(m, tc_wait(proc, &r, NULL) == 0 && b[0] == 42 && b[3] == 42, "the bcast");

	/* A persistent request while active, and storage never used. */
	tc_request q, g;
	EXPECT(m, tc_allreduce_init(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL, &q) == 0, "init");
	EXPECT(m, tc_start(proc, &q) == 0, "its start");
	EXPECT(m, tc_iallreduce(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL, &q) == TC_EPENDING,
	       "iallreduce on the active persistent request");
	EXPECT(m, tc_wait(proc, &q, NULL) == 0 && sum == (int64_t)p * (p + 1) / 2, "its wait");
	EXPECT(m, tc_request_free(proc, &q) == 0, "its free");
	for (int fill = 0; fill < 2; fill++) {
		memset(&g, fill ? 0xff : 0, sizeof g);
		EXPECT(m, tc_ibarrier(proc, NULL, &g) == 0 && tc_wait(proc, &g, NULL) == 0,
		       "a request in storage never used");
	}
	EXPECT(m, tc_ibarrier(proc, NULL, &r) == 0, "ibarrier");
	memcpy(&g, &r, sizeof g);
	EXPECT(m, tc_ibarrier(proc, NULL, &g) == 0, "a request in a copy of an active one");
	EXPECT(m, tc_wait(proc, &r, NULL) == 0 && tc_wait(proc, &g, NULL) == 0, "their waits");
	return 0;
}

/* A request a run left active (its rank returned an error, aborting the
 * team) does not make its storage look active in the next run, before or
 * after that storage held another request. */
struct left {
	struct misuse m;
	int run;
	tc_request req[3]; /* each rank's, kept from run to run */
};

static int left_rank(struct tc_proc *proc, void *arg)
{
	struct left *l = arg;
	struct misuse *m = &l->m;
	tc_request *r = &l->req[tc_rank(proc)];
	int err = tc_ibarrier(proc, NULL, r);
	if (!l->run)
		return err ? err : TC_EINVAL; /* left active: the team is aborted */
	EXPECT(m, err == 0 && tc_wait(proc, r, NULL) == 0, "the next run's ibarrier");
	EXPECT(m, tc_ibarrier(proc, NULL, r) == 0, "another, in the same storage");
	EXPECT(m, tc_wait(proc, r, NULL) == 0, "its wait");
	return 0;
}

/* A request active on one of the rank's sub-teams is not taken by a call
 * on a sibling sub-team, nor on their parent (TC_EPENDING, nothing
 * started); it completes as first started, then starts again on the
 * sibling. */
static int sibling_rank(struct tc_proc *proc, void *arg)
{
	struct misuse *m = arg;
	const int p = tc_size(proc);
	struct tc_proc *a = NULL, *b = NULL;
	int ok = tc_team_dup(proc, &a) == 0 && tc_team_dup(proc, &b) == 0;
	EXPECT(m, ok, "two duplicates");
	if (ok) {
		int64_t v = tc_rank(proc) + 1, sum = 0, x[4] = {0};
		if (tc_rank(proc) == 0)
			x[0] = x[3] = 42;
		tc_request r;
		EXPECT(m, tc_iallreduce(a, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL, &r) == 0,
		       "start on the first duplicate");
		EXPECT(m, tc_ibcast(b, x, 4, TC_INT64, 0, NULL, &r) == TC_EPENDING,
		       "ibcast on the sibling with the active request");
		EXPECT(m, strstr(tc_error_detail(), "the request is still active") != NULL, "its detail");
		EXPECT(m, tc_ibarrier(proc, NULL, &r) == TC_EPENDING,
		       "ibarrier on the parent with the active request");
		EXPECT(m, tc_wait(a, &r, NULL) == 0 && sum == (int64_t)p * (p + 1) / 2,
		       "the first call completes with its result");
		EXPECT(m,
		       tc_ibcast(b, x, 4, TC_INT64, 0, NULL, &r) == 0 &&
		               tc_wait(b, &r, NULL) == 0 && x[0] == 42 && x[3] == 42,
		       "started again on the sibling once complete");
	}
	if (b)
		tc_team_free(b);
	if (a)
		tc_team_free(a);
	return 0;
}

Test(nbc, active_request_on_a_sibling_sub_team, .timeout = 120)
{
	for (int e = 0; e < 2; e++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = "complete:4";
		cfg.exec = e ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
		cfg.timeout_ms = 60000;
		struct tc_team *team = NULL;
		cr_assert_eq(tc_team_create(&cfg, &team), 0);
		struct misuse m = {0};
		int err = tc_run(team, sibling_rank, &m);
		cr_assert_eq(atomic_load(&m.failures), 0, "%s", m.msg);
		cr_assert_eq(err, 0, "%s", tc_strerror(err));
		tc_team_destroy(team);
	}
}

Test(nbc, request_left_active_by_a_failed_run, .timeout = 120)
{
	char msg[256];
	struct tc_team *team = ct_team("ring:3", NULL, msg, sizeof msg);
	cr_assert_not_null(team, "%s", msg);
	struct left l = {0};
	cr_assert_eq(tc_run(team, left_rank, &l), TC_EINVAL);
	l.run = 1;
	int err = tc_run(team, left_rank, &l);
	cr_assert_eq(atomic_load(&l.m.failures), 0, "%s", l.m.msg);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	tc_team_destroy(team);
}

Test(nbc, active_request_not_started_again, .timeout = 120)
{
	static const char *const reuse_specs[] = {"ring:4", "complete:2", "complete:1"};
	for (int s = 0; s < 3; s++) {
		char msg[256];
		struct tc_team *team = ct_team(reuse_specs[s], NULL, msg, sizeof msg);
		cr_assert_not_null(team, "%s", msg);
		struct misuse m = {0};
		int err = tc_run(team, reuse_rank, &m);
		cr_assert_eq(atomic_load(&m.failures), 0, "%s: %s", reuse_specs[s], m.msg);
		cr_assert_eq(err, 0, "%s: %s", reuse_specs[s], tc_strerror(err));
		tc_team_destroy(team);
	}
}

/* tc_request_status of a collective request: 0 once it completed, with its
 * outcome (MPI's empty status otherwise), after the wait or test that
 * made it inactive too, until it starts again; TC_EINVAL while never
 * started, or when its start failed. */
static int status_rank(struct tc_proc *proc, void *arg)
{
	struct misuse *m = arg;
	int64_t v = 1, out = 0;
	tc_request r;
	tc_status st;
	int done = 0;
	EXPECT(m, tc_ibarrier(proc, NULL, &r) == 0 && tc_wait(proc, &r, NULL) == 0, "ibarrier");
	memset(&st, 0x5a, sizeof st);
	EXPECT(m, tc_request_status(&r, &st) == 0, "status after the wait");
	EXPECT(m, st.error == 0 && st.source == TC_ANY_SOURCE && st.tag == TC_ANY_TAG && st.bytes == 0,
	       "the status filled in");
	EXPECT(m, tc_iallreduce(proc, &v, &out, 1, TC_INT64, TC_OP_SUM, NULL, &r) == 0, "iallreduce");
	while (!done)
		EXPECT(m, tc_test(proc, &r, &done) == 0, "test");
	EXPECT(m, tc_request_status(&r, &st) == 0 && st.error == 0, "status after the test");
	tc_request q;
	EXPECT(m, tc_allreduce_init(proc, &v, &out, 1, TC_INT64, TC_OP_SUM, NULL, &q) == 0, "init");
	EXPECT(m, tc_request_status(&q, &st) == TC_EINVAL, "status before any start");
	EXPECT(m, tc_start(proc, &q) == 0 && tc_wait(proc, &q, NULL) == 0, "start and wait");
	EXPECT(m, tc_request_status(&q, &st) == 0 && st.error == 0, "status after the wait");
	EXPECT(m, tc_request_free(proc, &q) == 0, "free");
	EXPECT(m, tc_iallreduce(proc, &v, &out, 1, (enum tc_dtype)999, TC_OP_SUM, NULL, &r) == TC_EINVAL,
	       "bad datatype");
	EXPECT(m, tc_request_status(&r, &st) == TC_EINVAL, "status of a request whose start failed");
	return 0;
}

Test(nbc, request_status_once_complete, .timeout = 120)
{
	static const char *const status_specs[] = {"ring:4", "complete:2", "complete:1"};
	for (int s = 0; s < 3; s++) {
		char msg[256];
		struct tc_team *team = ct_team(status_specs[s], NULL, msg, sizeof msg);
		cr_assert_not_null(team, "%s", msg);
		struct misuse m = {0};
		int err = tc_run(team, status_rank, &m);
		cr_assert_eq(atomic_load(&m.failures), 0, "%s: %s", status_specs[s], m.msg);
		cr_assert_eq(err, 0, "%s: %s", status_specs[s], tc_strerror(err));
		tc_team_destroy(team);
	}
}

/* Persistent requests a rank never frees, of a fixed-count and a
 * variable-count collective, some started and completed once, some never:
 * the team releases them when it is destroyed (the AddressSanitizer stage
 * sees a release that touches freed memory; tc_team_destroy and a second
 * team still work), and one freed by tc_request_free is not released
 * again. */
static int unfreed_rank(struct tc_proc *proc, void *arg)
{
	struct misuse *m = arg;
	const int p = tc_size(proc);
	int64_t v = tc_rank(proc), out = 0;
	size_t counts[16], displs[16];
	int32_t w = tc_rank(proc), got[16];
	for (int i = 0; i < p; i++)
		counts[i] = 1, displs[i] = (size_t)i;
	tc_request q[4];
	EXPECT(m, tc_allreduce_init(proc, &v, &out, 1, TC_INT64, TC_OP_SUM, NULL, &q[0]) == 0,
	       "allreduce init");
	EXPECT(m, tc_bcast_init(proc, &out, 1, TC_INT64, 0, NULL, &q[1]) == 0, "bcast init");
	EXPECT(m, tc_allgatherv_init(proc, &w, 1, got, counts, displs, TC_INT32, NULL, &q[2]) == 0,
	       "allgatherv init");
	EXPECT(m, tc_allreduce_init(proc, &v, &out, 1, TC_INT64, TC_OP_SUM, NULL, &q[3]) == 0,
	       "second allreduce init");
	EXPECT(m, tc_start(proc, &q[0]) == 0 && tc_wait(proc, &q[0], NULL) == 0, "a start");
	EXPECT(m, out == (int64_t)p * (p - 1) / 2, "result");
	EXPECT(m, tc_request_free(proc, &q[3]) == 0, "one freed");
	return 0;
}

Test(persistent, unfreed_released_with_the_team, .timeout = 120)
{
	for (int k = 0; k < 2; k++) {
		char msg[256];
		struct tc_team *team = ct_team(k ? "torus:2x3" : "ring:4", NULL, msg, sizeof msg);
		cr_assert_not_null(team, "%s", msg);
		struct misuse m = {0};
		for (int run = 0; run < 2; run++)
			cr_assert_eq(tc_run(team, unfreed_rank, &m), 0);
		cr_assert_eq(atomic_load(&m.failures), 0, "%s", m.msg);
		cr_assert_eq(tc_team_destroy(team), 0);
	}
}

/* A peer that never joins: the outstanding call fails, clearly, and does
 * not hang (the peer returns: the probe or the timeout ends it). */
static int lonely_rank(struct tc_proc *proc, void *arg)
{
	int *got = arg;
	if (tc_rank(proc) != 0)
		return 0;
	int64_t v = 1, out = 0;
	tc_request r;
	int err = tc_iallreduce(proc, &v, &out, 1, TC_INT64, TC_OP_SUM, NULL, &r);
	if (!err)
		err = tc_wait(proc, &r, NULL);
	*got = err;
	return 0;
}

Test(nbc, peer_never_joins, .timeout = 120)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:2";
	cfg.timeout_ms = 500;
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	int got = 0;
	tc_run(team, lonely_rank, &got);
	cr_assert(got == TC_EMISMATCH || got == TC_ETIMEDOUT || got == TC_EABORTED, "got %s",
	          tc_strerror(got));
	tc_team_destroy(team);
}

/* Progress made by tests alone, with computation charged in between:
 * the call's logical time overlaps it. */
static int overlap_rank(struct tc_proc *proc, void *arg)
{
	atomic_int *bad = arg;
	int64_t v = tc_rank(proc) + 1, out = 0;
	tc_request r;
	tc_time_t t0 = tc_clock(proc);
	if (tc_iallreduce(proc, &v, &out, 1, TC_INT64, TC_OP_SUM, NULL, &r))
		atomic_fetch_add(bad, 1);
	tc_clock_advance(proc, 1e6); /* 1 ms of computation, far above the call */
	int done = 0, err = 0;
	while (!done && !err)
		err = tc_test(proc, &r, &done);
	const int p = tc_size(proc);
	if (err || out != (int64_t)p * (p + 1) / 2)
		atomic_fetch_add(bad, 1);
	/* Overlapped: the clock is the computation's, not its sum with the
	 * call's. */
	if (tc_clock(proc) - t0 != (tc_time_t)1e6 * TC_PS_PER_NS)
		atomic_fetch_add(bad, 1);
	return 0;
}

Test(nbc, overlap_in_logical_time, .timeout = 120)
{
	char msg[256];
	struct tc_team *team = ct_team("ring:4", NULL, msg, sizeof msg);
	cr_assert_not_null(team, "%s", msg);
	atomic_int bad = 0;
	cr_assert_eq(tc_run(team, overlap_rank, &bad), 0);
	cr_assert_eq(atomic_load(&bad), 0);
	tc_team_destroy(team);
}

Test(nbc, self_outside_ranks)
{
	cr_assert_null(tc_self());
}

/* A blocking call that AUTO gives the machine's own algorithm (complete:2,
 * native, a CPU per rank) while one rank still has a request outstanding
 * and the other has none: both must take the same path and agree. */
static int behind_one_side_rank(struct tc_proc *proc, void *arg)
{
	atomic_int *bad = arg;
	const int me = tc_rank(proc), p = tc_size(proc);
	for (int it = 0; it < 50; it++) {
		tc_request r;
		int64_t v = me + 1, sum = 0;
		int err = tc_ibarrier(proc, NULL, &r);
		if (!err && me == 1)
			err = tc_wait(proc, &r, NULL); /* nothing outstanding here */
		if (!err)
			err = tc_allreduce(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL);
		if (!err && me == 0)
			err = tc_wait(proc, &r, NULL);
		if (err || sum != (int64_t)p * (p + 1) / 2) {
			atomic_fetch_add(bad, 1);
			return err ? err : TC_EINVAL;
		}
	}
	return 0;
}

Test(nbc, blocking_behind_outstanding_on_one_rank_only, .timeout = 120)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:2";
	cfg.timeout_ms = 20000;
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	atomic_int bad = 0;
	int err = tc_run(team, behind_one_side_rank, &bad);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	cr_assert_eq(atomic_load(&bad), 0);
	tc_team_destroy(team);
}

/* ---- the variable-count calls as requests ---- */

enum { V_AGV, V_GV, V_SV, V_A2AV, NV };
#define V_POISON 0xa5a5a5a5u

/* Elements rank i sends to rank k (zeros included), as each call allows. */
static size_t vcnt(int kind, int root, int i, int k, int count)
{
	const size_t same = (size_t)((i * 3) % (count + 1));
	const size_t c = (size_t)((i * 3 + k * 5) % (count + 1));
	switch (kind) {
	case V_AGV:
		return same;
	case V_GV:
		return k == root ? same : 0;
	case V_SV:
		return i == root ? c : 0;
	default:
		return c;
	}
}

/* Element j of the block rank i sends to rank k. */
static uint32_t vval(int kind, int i, int k, size_t j, unsigned seed)
{
	if (kind == V_AGV || kind == V_GV)
		k = 0; /* one block for everybody */
	return seed * 2654435761u + (uint32_t)i * 1000003u + (uint32_t)k * 7919u + (uint32_t)j * 13u + 1u;
}

struct vslot {
	int kind;
	size_t *sc, *sd, *rc, *rd;
	uint32_t *sb, *rb;
	size_t slen, rlen;
};

/* Rank me's counts and displacements (gaps between the blocks). */
static void vlayout(struct vslot *x, int p, int me, int root, int count)
{
	size_t s = 1, r = 2;
	for (int k = 0; k < p; k++) {
		x->sc[k] = vcnt(x->kind, root, me, k, count);
		x->sd[k] = s;
		s += x->sc[k] + 1;
		x->rc[k] = vcnt(x->kind, root, k, me, count);
		x->rd[k] = r;
		r += x->rc[k] + 2;
	}
	x->slen = s + 1;
	x->rlen = r + 1;
}

static int vcall(struct tc_proc *proc, struct vslot *x, int root, tc_request *req, int persistent)
{
#define V_FORM(name, ...)                                            \
	(persistent ? tc_##name##_init(proc, __VA_ARGS__, NULL, req) \
	            : tc_i##name(proc, __VA_ARGS__, NULL, req))
	switch (x->kind) {
	case V_AGV:
		return V_FORM(allgatherv, x->sb + x->sd[0], x->sc[0], x->rb, x->rc, x->rd, TC_UINT32);
	case V_GV:
		return V_FORM(gatherv, x->sb + x->sd[root], x->sc[root], x->rb, x->rc, x->rd,
		              TC_UINT32, root);
	case V_SV:
		return V_FORM(scatterv, x->sb, x->sc, x->sd, x->rb + x->rd[root], x->rc[root],
		              TC_UINT32, root);
	default:
		return V_FORM(alltoallv, x->sb, x->sc, x->sd, x->rb, x->rc, x->rd, TC_UINT32);
	}
#undef V_FORM
}

static void vfill(struct vslot *x, int p, int me, unsigned seed)
{
	for (size_t j = 0; j < x->slen; j++)
		x->sb[j] = V_POISON;
	for (int k = 0; k < p; k++)
		for (size_t j = 0; j < x->sc[k]; j++)
			x->sb[x->sd[k] + j] = vval(x->kind, me, k, j, seed);
	for (size_t j = 0; j < x->rlen; j++)
		x->rb[j] = V_POISON;
}

/* The receive buffer against the definitions: the blocks where they go,
 * the gaps untouched. */
static int vcheck(const struct vslot *x, int p, int me, int root, unsigned seed)
{
	size_t j = 0;
	for (int i = 0; i < p; i++) {
		const bool gets = x->kind == V_AGV || x->kind == V_A2AV ||
		                  (x->kind == V_GV && me == root) || (x->kind == V_SV && i == root);
		for (; j < x->rd[i]; j++)
			if (x->rb[j] != V_POISON)
				return 0;
		for (size_t e = 0; e < x->rc[i]; e++, j++)
			if (x->rb[j] != (gets ? vval(x->kind, i, me, e, seed) : V_POISON))
				return 0;
	}
	for (; j < x->rlen; j++)
		if (x->rb[j] != V_POISON)
			return 0;
	return 1;
}

static const char *const vnames[NV] = {"allgatherv", "gatherv", "scatterv", "alltoallv"};

static void vfail(struct batch *b, const char *what, int rank, int k)
{
	if (atomic_fetch_add(&b->failures, 1) == 0)
		snprintf(b->msg, sizeof b->msg, "rank %d, %s: %s (%s)", rank,
		         k >= 0 && k < NV ? vnames[k] : "allreduce", what, tc_error_detail());
}

/* Every v-call and an allreduce outstanding at once, completed in a shuffled
 * order (mode 0 waits, 1 one waitall, 2 test loops); persistent: made once,
 * started b->iters times with new contents.  The count arrays are
 * overwritten as soon as each call returns (they are read then). */
static int vbatch_rank(struct tc_proc *proc, void *arg)
{
	struct batch *b = arg;
	const int p = tc_size(proc), me = tc_rank(proc), root = p - 1;
	struct vslot xs[NV];
	tc_request reqs[NV + 1];
	int order[NV + 1];
	int64_t v = 0, sum = 0;
	uint64_t rng = 0x2545f4914f6cdd1dull * (uint64_t)(me + 1);
	for (int k = 0; k < NV; k++) {
		struct vslot *x = &xs[k];
		x->kind = k;
		x->sc = calloc((size_t)p, sizeof(size_t));
		x->sd = calloc((size_t)p, sizeof(size_t));
		x->rc = calloc((size_t)p, sizeof(size_t));
		x->rd = calloc((size_t)p, sizeof(size_t));
		vlayout(x, p, me, root, b->count);
		x->sb = malloc(x->slen * sizeof(uint32_t));
		x->rb = malloc(x->rlen * sizeof(uint32_t));
	}
	for (int it = 0; it < b->iters && !atomic_load(&b->failures); it++) {
		const unsigned seed = 77u * (unsigned)it + 5u;
		for (int k = 0; k <= NV; k++) {
			int err;
			if (k == NV) { /* a fixed-count call among them */
				v = me + it;
				err = b->persistent && it ? TC_OK
				      : b->persistent ? tc_allreduce_init(proc, &v, &sum, 1, TC_INT64,
				                                          TC_OP_SUM, NULL, &reqs[k])
				                      : tc_iallreduce(proc, &v, &sum, 1, TC_INT64,
				                                      TC_OP_SUM, NULL, &reqs[k]);
			} else {
				struct vslot *x = &xs[k];
				vlayout(x, p, me, root, b->count);
				vfill(x, p, me, seed);
				err = b->persistent && it
				              ? TC_OK
				              : vcall(proc, x, root, &reqs[k], b->persistent);
				for (int j = 0; j < p; j++) /* read at the call: not used since */
					x->sc[j] = x->sd[j] = x->rc[j] = SIZE_MAX / 3;
			}
			if (!err && b->persistent)
				err = tc_start(proc, &reqs[k]);
			if (err) {
				vfail(b, tc_strerror(err), me, k);
				return err;
			}
			order[k] = k;
		}
		for (int i = NV; i > 0; i--) {
			int j = (int)(tc_test_rand(&rng) % (uint64_t)(i + 1)), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		if (b->mode == 1) {
			int err = tc_waitall(proc, NV + 1, reqs);
			if (err)
				vfail(b, tc_strerror(err), me, -1);
		} else {
			for (int i = 0; i <= NV; i++) {
				int err, done = 0;
				if (b->mode == 2) {
					do
						err = tc_test(proc, &reqs[order[i]], &done);
					while (!done && !err);
				} else {
					err = tc_wait(proc, &reqs[order[i]], NULL);
				}
				if (err)
					vfail(b, tc_strerror(err), me, order[i]);
			}
		}
		if (sum != (int64_t)p * (p - 1) / 2 + (int64_t)p * it)
			vfail(b, "allreduce result", me, NV);
		for (int k = 0; k < NV; k++) {
			vlayout(&xs[k], p, me, root, b->count);
			if (!vcheck(&xs[k], p, me, root, seed))
				vfail(b, "result differs from the definition", me, k);
		}
	}
	for (int k = 0; k <= NV; k++) {
		if (b->persistent && tc_request_free(proc, &reqs[k]))
			vfail(b, "tc_request_free", me, k);
		if (k == NV)
			break;
		free(xs[k].sc);
		free(xs[k].sd);
		free(xs[k].rc);
		free(xs[k].rd);
		free(xs[k].sb);
		free(xs[k].rb);
	}
	return 0;
}

static void run_vbatch(const char *spec, int count, int persistent, int iters, int mode)
{
	run_with(vbatch_rank, spec, count, persistent, iters, mode, 0);
}

Test(nbc, vcount_outstanding, .timeout = 300)
{
	for (int s = 0; s < NSPECS; s++)
		for (int mode = 0; mode < 3; mode++)
			run_vbatch(specs[s], mode == 2 ? 0 : 6, 0, 2, mode);
}

Test(persistent, vcount_restarted, .timeout = 300)
{
	for (int s = 0; s < NSPECS; s++)
		run_vbatch(specs[s], 5, 1, 4, s % 3);
}

/* Counts that disagree: every rank's wait says TC_EMISMATCH, nothing is
 * written, and a persistent request fails so at every start. */
static int vmismatch_rank(struct tc_proc *proc, void *arg)
{
	struct misuse *m = arg;
	const int p = tc_size(proc), me = tc_rank(proc);
	struct vslot x = {.kind = V_A2AV};
	x.sc = calloc((size_t)p, sizeof(size_t));
	x.sd = calloc((size_t)p, sizeof(size_t));
	x.rc = calloc((size_t)p, sizeof(size_t));
	x.rd = calloc((size_t)p, sizeof(size_t));
	vlayout(&x, p, me, 0, 4);
	x.sb = malloc((x.slen + 1) * sizeof(uint32_t));
	x.rb = malloc((x.rlen + 1) * sizeof(uint32_t));
	if (me == 1)
		x.rc[0]++; /* expects one more element from rank 0 than it sends */
	x.rlen++;
	vfill(&x, p, me, 1);
	tc_request r;
	EXPECT(m, vcall(proc, &x, 0, &r, 0) == 0, "start");
	EXPECT(m, tc_wait(proc, &r, NULL) == TC_EMISMATCH, "nonblocking wait");
	EXPECT(m, vcall(proc, &x, 0, &r, 1) == 0, "init");
	for (int i = 0; i < 2; i++) {
		EXPECT(m, tc_start(proc, &r) == 0, "start");
		EXPECT(m, tc_wait(proc, &r, NULL) == TC_EMISMATCH, "persistent wait");
	}
	EXPECT(m, tc_request_free(proc, &r) == 0, "free");
	for (size_t j = 0; j < x.rlen; j++)
		EXPECT(m, x.rb[j] == V_POISON, "written after a failed agreement");
	/* The blocking call after them still agrees. */
	x.rc[0] -= me == 1;
	EXPECT(m, tc_alltoallv(proc, x.sb, x.sc, x.sd, x.rb, x.rc, x.rd, TC_UINT32, NULL) == 0,
	       "blocking alltoallv after the failed ones");
	free(x.sc);
	free(x.sd);
	free(x.rc);
	free(x.rd);
	free(x.sb);
	free(x.rb);
	return 0;
}

Test(nbc, vcount_mismatch, .timeout = 120)
{
	char msg[256];
	struct tc_team *team = ct_team("ring:4", NULL, msg, sizeof msg);
	cr_assert_not_null(team, "%s", msg);
	struct misuse m = {0};
	cr_assert_eq(tc_run(team, vmismatch_rank, &m), 0);
	cr_assert_eq(atomic_load(&m.failures), 0, "%s", m.msg);
	tc_team_destroy(team);
}

/* ---- multicast ---- */

/* Member set k of NM on p ranks, root first or not in it: every rank, none,
 * the odd ranks, the last half in reverse.  Returns its size. */
#define NM 4
static int mset(int k, int p, int *m)
{
	int n = 0;
	for (int i = 0; i < p; i++) {
		int j = k == 3 ? p - 1 - i : i;
		if (k == 0 || (k == 2 && j % 2) || (k == 3 && j >= p / 2))
			m[n++] = j;
	}
	return n;
}

static void mfail(struct batch *b, const char *what, int rank, int k)
{
	if (atomic_fetch_add(&b->failures, 1) == 0)
		snprintf(b->msg, sizeof b->msg, "rank %d, %s %d: %s (%s)", rank,
		         k < NM ? "multicast set" : "allreduce", k, what, tc_error_detail());
}

static int mroot(int k, int p)
{
	return (k * 5 + 1) % p;
}

static void mfill(uint32_t *b, size_t n, int me, int k, int it)
{
	for (size_t j = 0; j < n; j++)
		b[j] = (uint32_t)(1000003u * (unsigned)it + 7919u * (unsigned)k +
		                  31u * (unsigned)me + (unsigned)j);
}

/* Every member set's multicast outstanding at once with an allreduce,
 * completed in a shuffled order (persistent: made once, started b->iters
 * times with new contents), each buffer against the blocking multicast's
 * result of the same call.  Member lists are overwritten after each call
 * (they are read there). */
static int mbatch_rank(struct tc_proc *proc, void *arg)
{
	struct batch *b = arg;
	const int p = tc_size(proc), me = tc_rank(proc);
	const size_t n = (size_t)b->count;
	uint32_t *buf[NM], *ref[NM];
	int *mem[NM], nm[NM];
	tc_request reqs[NM + 1];
	int order[NM + 1];
	int64_t v = 0, sum = 0;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1);
	for (int k = 0; k < NM; k++) {
		buf[k] = malloc((n + 1) * sizeof(uint32_t));
		ref[k] = malloc((n + 1) * sizeof(uint32_t));
		mem[k] = malloc((size_t)p * sizeof(int));
	}
	for (int it = 0; it < b->iters && !atomic_load(&b->failures); it++) {
		for (int k = 0; k <= NM; k++) {
			int err = TC_OK;
			if (k == NM) {
				v = me + it;
				if (!b->persistent || !it)
					err = b->persistent
					              ? tc_allreduce_init(proc, &v, &sum, 1, TC_INT64,
					                                  TC_OP_SUM, NULL, &reqs[k])
					              : tc_iallreduce(proc, &v, &sum, 1, TC_INT64,
					                              TC_OP_SUM, NULL, &reqs[k]);
			} else {
				mfill(buf[k], n + 1, me, k, it);
				nm[k] = mset(k, p, mem[k]);
				if (!b->persistent || !it)
					err = b->persistent
					              ? tc_multicast_init(proc, buf[k], n, TC_UINT32,
					                                  mroot(k, p), mem[k],
					                                  nm[k], NULL, &reqs[k])
					              : tc_imulticast(proc, buf[k], n, TC_UINT32,
					                              mroot(k, p), mem[k], nm[k],
					                              NULL, &reqs[k]);
				for (int i = 0; i < nm[k]; i++)
					mem[k][i] = -5; /* read at the call: not used since */
			}
			if (!err && b->persistent)
				err = tc_start(proc, &reqs[k]);
			if (err) {
				mfail(b, tc_strerror(err), me, k);
				return err;
			}
			order[k] = k;
		}
		for (int i = NM; i > 0; i--) {
			int j = (int)(tc_test_rand(&rng) % (uint64_t)(i + 1)), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (int i = 0; i <= NM; i++) {
			int err, done = 0;
			if (b->mode == 2) {
				do
					err = tc_test(proc, &reqs[order[i]], &done);
				while (!done && !err);
			} else {
				err = tc_wait(proc, &reqs[order[i]], NULL);
			}
			if (err)
				mfail(b, tc_strerror(err), me, order[i]);
		}
		if (sum != (int64_t)p * (p - 1) / 2 + (int64_t)p * it)
			mfail(b, "allreduce result", me, NM);
		for (int k = 0; k < NM; k++) {
			mfill(ref[k], n + 1, me, k, it);
			nm[k] = mset(k, p, mem[k]);
			int err = tc_multicast(proc, ref[k], n, TC_UINT32, mroot(k, p), mem[k],
			                       nm[k], NULL);
			if (err)
				mfail(b, "blocking multicast", me, k);
			else if (memcmp(buf[k], ref[k], (n + 1) * sizeof(uint32_t)))
				mfail(b, "multicast differs from the blocking one", me, k);
		}
	}
	for (int k = 0; k <= NM; k++) {
		if (b->persistent && tc_request_free(proc, &reqs[k]))
			mfail(b, "tc_request_free", me, k);
		if (k < NM) {
			free(buf[k]);
			free(ref[k]);
			free(mem[k]);
		}
	}
	return 0;
}

static void run_mbatch(const char *spec, int count, int persistent, int iters, int mode)
{
	run_with(mbatch_rank, spec, count, persistent, iters, mode, 0);
}

Test(nbc, multicast_outstanding, .timeout = 300)
{
	for (int s = 0; s < NSPECS; s++)
		for (int mode = 0; mode < 3; mode += 2)
			run_mbatch(specs[s], mode == 2 ? 0 : 37, 0, 2, mode);
}

Test(persistent, multicast_restarted, .timeout = 300)
{
	for (int s = 0; s < NSPECS; s++)
		run_mbatch(specs[s], 9, 1, 3, s % 2 ? 2 : 0);
}

/* One rank's bad list (a duplicate) and, then, lists that differ: the bad
 * rank's wait says TC_EINVAL and the others' TC_EMISMATCH, nothing is
 * written, at every start of a persistent request; a good multicast after
 * them agrees. */
static int mmismatch_rank(struct tc_proc *proc, void *arg)
{
	struct misuse *m = arg;
	const int p = tc_size(proc), me = tc_rank(proc);
	int mem[2] = {1, me == 2 ? 1 : 2};
	uint32_t x = 77;
	tc_request r;
	const int want = me == 2 ? TC_EINVAL : TC_EMISMATCH;
	EXPECT(m, tc_imulticast(proc, &x, 1, TC_UINT32, 0, mem, 2, NULL, &r) == 0, "start");
	EXPECT(m, tc_wait(proc, &r, NULL) == want, "nonblocking wait, bad list");
	EXPECT(m, tc_multicast_init(proc, &x, 1, TC_UINT32, 0, mem, 2, NULL, &r) == 0, "init");
	for (int i = 0; i < 2; i++) {
		EXPECT(m, tc_start(proc, &r) == 0, "start");
		EXPECT(m, tc_wait(proc, &r, NULL) == want, "persistent wait, bad list");
	}
	EXPECT(m, tc_request_free(proc, &r) == 0, "free");
	mem[1] = me == 3 ? 3 : 2; /* a good list, not the others' */
	EXPECT(m, tc_imulticast(proc, &x, 1, TC_UINT32, 0, mem, 2, NULL, &r) == 0, "start");
	EXPECT(m, tc_wait(proc, &r, NULL) == TC_EMISMATCH, "nonblocking wait, lists differ");
	EXPECT(m, x == 77, "written after a failed agreement");
	EXPECT(m, tc_wait(proc, &r, NULL) == TC_EINVAL, "a request waited twice");
	mem[1] = 2;
	if (me == 0)
		x = 5;
	EXPECT(m, tc_imulticast(proc, &x, 1, TC_UINT32, 0, mem, 2, NULL, &r) == 0, "start");
	EXPECT(m, tc_wait(proc, &r, NULL) == 0, "a good multicast after them");
	EXPECT(m, x == (me <= 2 ? 5u : 77u), "the good multicast's result");
	(void)p;
	return 0;
}

Test(nbc, multicast_mismatch, .timeout = 120)
{
	char msg[256];
	struct tc_team *team = ct_team("ring:4", NULL, msg, sizeof msg);
	cr_assert_not_null(team, "%s", msg);
	struct misuse m = {0};
	cr_assert_eq(tc_run(team, mmismatch_rank, &m), 0);
	cr_assert_eq(atomic_load(&m.failures), 0, "%s", m.msg);
	tc_team_destroy(team);
}

/* ---- tests that help the ranks of their CPU ---- */

/* Each rank starts an allreduce, then tests it at most TESTS_MAX times
 * (the computation between two tests, which makes no call into the
 * library, is left out: on fibres it changes nothing of who runs when),
 * and waits if it is still not done.  On fibres sharing one CPU, a rank's
 * round needs its partners' progress, and a partner fibre makes some only
 * inside the library: a test that found nothing done progresses the
 * requests of the CPU's fibres suspended in their own test, so that the
 * whole allreduce advances at every test, not one round of one rank at
 * each. */
enum { TESTS_MAX = 64, HELP_COUNT = 1000 };

struct helped {
	atomic_int bad;
	int tests[64]; /* per rank: the tests its request took (0: waited) */
};

static int helped_rank(struct tc_proc *proc, void *arg)
{
	struct helped *h = arg;
	const int me = tc_rank(proc), p = tc_size(proc);
	int64_t *in = malloc(HELP_COUNT * sizeof *in), *out = malloc(HELP_COUNT * sizeof *out);
	if (!in || !out) {
		atomic_fetch_add(&h->bad, 1);
		free(in);
		free(out);
		return TC_ENOMEM;
	}
	for (int i = 0; i < HELP_COUNT; i++)
		in[i] = (int64_t)me * HELP_COUNT + i;
	tc_request r;
	int err = tc_iallreduce(proc, in, out, HELP_COUNT, TC_INT64, TC_OP_SUM, NULL, &r);
	int done = 0, n = 0;
	while (!err && !done && n < TESTS_MAX) {
		err = tc_test(proc, &r, &done);
		n++;
	}
	if (!err && !done)
		err = tc_wait(proc, &r, NULL);
	h->tests[me] = done ? n : 0;
	for (int i = 0; i < HELP_COUNT && !err; i++)
		if (out[i] != (int64_t)HELP_COUNT * p * (p - 1) / 2 + (int64_t)p * i)
			err = TC_EINVAL;
	if (err)
		atomic_fetch_add(&h->bad, 1);
	free(in);
	free(out);
	return err;
}

/* Runs helped_rank on spec with exec, the process on one CPU; the most
 * tests a rank took (TESTS_MAX + 1: one waited). */
static int helped_run(const char *spec, enum tc_exec exec)
{
	cpu_set_t old, one;
	cr_assert_eq(sched_getaffinity(0, sizeof old, &old), 0);
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &old)) {
			CPU_SET(c, &one);
			break;
		}
	cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	cfg.timeout_ms = 60000;
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	struct helped h = {0};
	cr_assert_eq(tc_run(team, helped_rank, &h), 0, "%s: %s", spec, tc_error_detail());
	cr_assert_eq(atomic_load(&h.bad), 0, "%s: results", spec);
	int most = 0;
	for (int i = 0; i < tc_team_size(team); i++) {
		int t = h.tests[i] ? h.tests[i] : TESTS_MAX + 1;
		most = t > most ? t : most;
	}
	tc_team_destroy(team);
	sched_setaffinity(0, sizeof old, &old);
	return most;
}

static const char *const helped_specs[] = {"ring:8", "hypercube:3", "complete:8", "torus:4x4"};

/* Fibres of one CPU: every rank's request is done by its second test (its
 * first finds the later ranks not started yet), whatever the number of
 * rounds. */
Test(nbc, test_helps_the_cpus_fibres, .timeout = 120)
{
	for (int s = 0; s < 4; s++) {
		int most = helped_run(helped_specs[s], TC_EXEC_FIBRES);
		cr_assert_leq(most, 2, "%s: a rank took %d tests", helped_specs[s], most);
	}
}

/* Threads: the same program completes with the right results (how many
 * tests it takes is the kernel's scheduling). */
Test(nbc, test_loop_on_one_cpu_threads, .timeout = 120)
{
	for (int s = 0; s < 4; s++)
		helped_run(helped_specs[s], TC_EXEC_THREADS);
}
