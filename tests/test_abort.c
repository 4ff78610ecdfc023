/* SPDX-License-Identifier: MIT */
/*
 * tests/test_abort.c - reliability: every wait
 * observes an abort (tc_test, tc_wait, tc_waitall, emulated sleeps), requests
 * can be cancelled, attached ranks recover and the team runs again, the
 * watchdog's report, and the other findings of the issue (detach without an
 * owner, stale requests, user operators run on a sender's buffer, hints
 * left raised, clock and model overflow, tiny packets, timeout wrap-around).
 * Each of those tests fails (or hangs until its .timeout) on the code before
 * the fix.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "p2p/p2p.h"
#include "topocoll.h"
#include "util.h"

static struct tc_team *make_cfg(struct tc_team_config *cfg)
{
	struct tc_team *t = NULL;
	int err = tc_team_create(cfg, &t);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	return t;
}

static struct tc_team *make(const char *spec, uint64_t timeout_ms)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.timeout_ms = timeout_ms;
	return make_cfg(&cfg);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* ---- every wait observes the abort ---------------------------------- */

struct rc_arg {
	_Atomic int rc[64];
};

static int test_rc_fn(struct tc_proc *proc, void *arg)
{
	struct rc_arg *a = arg;
	int me = tc_rank(proc);
	int err = TC_OK;
	if (me == 1) {
		err = TC_EINVAL;
	} else {
		int x = 0, done = 0;
		tc_request req;
		err = tc_irecv(proc, 1, &x, sizeof x, &req);
		while (!err && !done)
			err = tc_test(proc, &req, &done);
	}
	atomic_store(&a->rc[me], err);
	return err;
}

Test(abort, test_returns_aborted_not_ok, .timeout = 30)
{
	struct tc_team *t = make("complete:4", 0);
	struct rc_arg a = {0};
	cr_assert_neq(tc_run(t, test_rc_fn, &a), 0);
	cr_assert_eq(atomic_load(&a.rc[1]), TC_EINVAL);
	for (int r = 0; r < 4; r++)
		if (r != 1)
			cr_assert_eq(atomic_load(&a.rc[r]), TC_EABORTED, "rank %d: %s", r,
			             tc_err_name(atomic_load(&a.rc[r])));
	tc_team_destroy(t);
}

static int ring_sum_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	long v = tc_rank(proc) + 1, sum = 0;
	int err = tc_allreduce(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL);
	if (!err && sum != (long)tc_size(proc) * (tc_size(proc) + 1) / 2)
		err = TC_EINVAL;
	return err;
}

static int fail_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	if (tc_rank(proc) == 2)
		return TC_ENOMEM;
	return ring_sum_fn(proc, NULL);
}

Test(abort, run_clears_an_abort_at_its_start, .timeout = 60)
{
	struct tc_team *t = make("ring:5", 0);
	/* An abort between runs (from outside, or left by a failed run) is
	 * cleared by the next start. */
	tc_team_abort(t);
	cr_assert_eq(tc_run(t, ring_sum_fn, NULL), 0);
	cr_assert_eq(tc_run(t, fail_fn, NULL), TC_ENOMEM);
	cr_assert_eq(tc_run(t, ring_sum_fn, NULL), 0);
	tc_team_abort(t);
	tc_team_abort(t);
	cr_assert_eq(tc_run(t, ring_sum_fn, NULL), 0);
	tc_team_destroy(t);
}

static int long_sleep_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	if (tc_rank(proc) == 1) {
		sleep_ms(50);
		return TC_EINVAL;
	}
	/* Ten seconds of emulated computation: cut short by the abort. */
	int err = tc_clock_advance(proc, 1e10);
	return err ? err : TC_OK;
}

Test(abort, emulated_sleep_returns_on_abort, .timeout = 5)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:2";
	cfg.mode = TC_MODE_EMULATED;
	struct tc_team *t = make_cfg(&cfg);
	cr_assert_eq(tc_run(t, long_sleep_fn, NULL), TC_EINVAL);
	tc_team_destroy(t);
}

/* ---- cancel, attached ranks recover --------------------------------- */

Test(abort, cancel_what_has_not_started, .timeout = 30)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:2";
	cfg.single_copy_min = SIZE_MAX; /* stream: a long send fills the ring */
	struct tc_team *t = make_cfg(&cfg);
	struct tc_proc *p0, *p1;
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	cr_assert_eq(tc_attach(t, 1, &p1), 0);

	/* A receive nothing matched: cancelled, complete with TC_ECANCELED. */
	int x = 0;
	tc_request r;
	cr_assert_eq(tc_irecv(p0, 1, &x, sizeof x, &r), 0);
	cr_assert_eq(tc_cancel(p0, &r), 0);
	cr_assert_eq(tc_wait(p0, &r, NULL), TC_ECANCELED);

	/* A long send that moved is too late; the one queued behind is not. */
	size_t n = 1 << 20;
	char *a = malloc(n), *b = malloc(n), *in = malloc(n);
	memset(a, 1, n);
	memset(b, 2, n);
	tc_request s[2];
	cr_assert_eq(tc_isend(p0, 1, a, n, &s[0]), 0);
	cr_assert_eq(tc_isend(p0, 1, b, n, &s[1]), 0);
	cr_assert_eq(tc_cancel(p0, &s[0]), TC_EPENDING);
	cr_assert_eq(tc_cancel(p0, &s[1]), 0);
	int done = 0;
	cr_assert_eq(tc_test(p0, &s[1], &done), TC_ECANCELED);
	cr_assert(done);
	/* Rank 1 gets a only; rank 0's send completes as it is drained. */
	tc_request rr;
	cr_assert_eq(tc_irecv(p1, 0, in, n, &rr), 0);
	int d0 = 0, d1 = 0;
	while (!d0 || !d1) {
		if (!d0)
			cr_assert_eq(tc_test(p0, &s[0], &d0), 0);
		if (!d1)
			cr_assert_eq(tc_test(p1, &rr, &d1), 0);
	}
	cr_assert_eq(memcmp(in, a, n), 0);
	/* Nothing else arrives. */
	cr_assert_eq(tc_irecv(p1, 0, in, n, &rr), 0);
	cr_assert_eq(tc_cancel(p1, &rr), 0);
	cr_assert_eq(tc_detach(p0), 0);
	cr_assert_eq(tc_detach(p1), 0);
	cr_assert_eq(tc_run(t, ring_sum_fn, NULL), 0);
	free(a);
	free(b);
	free(in);
	tc_team_destroy(t);
}

struct att_arg {
	struct tc_team *team;
	_Atomic int posted;
	int rc_wait, rc_detach, rc_cancel;
};

static void *att_waiter(void *p)
{
	struct att_arg *a = p;
	struct tc_proc *proc;
	a->rc_wait = a->rc_cancel = a->rc_detach = TC_EINVAL;
	if (tc_attach(a->team, 0, &proc)) {
		atomic_store(&a->posted, 1);
		return NULL;
	}
	/* A receive, and a long single-copy send nobody takes. */
	int x = 0;
	size_t n = 1 << 20;
	char *buf = calloc(1, n);
	tc_request r, s;
	int e1 = tc_irecv(proc, 1, &x, sizeof x, &r);
	int e2 = tc_isend(proc, 1, buf, n, &s);
	atomic_store(&a->posted, 1);
	if (e1 || e2)
		return NULL;
	a->rc_wait = tc_wait(proc, &r, NULL);
	a->rc_cancel = tc_cancel(proc, &s); /* any request, after the abort */
	a->rc_detach = tc_detach(proc);
	free(buf);
	return NULL;
}

static void *att_pair(void *p)
{
	struct att_arg *a = p;
	struct tc_proc *proc;
	a->rc_wait = a->rc_detach = TC_EINVAL;
	if (tc_attach(a->team, 1, &proc))
		return NULL;
	int v = 7;
	int err = tc_send(proc, 0, &v, sizeof v);
	a->rc_wait = err;
	a->rc_detach = tc_detach(proc);
	return NULL;
}

Test(abort, attached_threads_recover_after_an_abort, .timeout = 30)
{
	struct tc_team *t = make("complete:2", 0);
	struct att_arg a = {.team = t};
	pthread_t th;
	pthread_create(&th, NULL, att_waiter, &a);
	while (!atomic_load(&a.posted))
		sched_yield();
	sleep_ms(20);
	tc_team_abort(t); /* from outside */
	pthread_join(th, NULL);
	cr_assert_eq(a.rc_wait, TC_EABORTED);
	cr_assert_eq(a.rc_cancel, 0);
	cr_assert_eq(a.rc_detach, 0, "%s", tc_err_name(a.rc_detach));

	/* Attached again: the first attach resets the team. */
	struct tc_proc *p0;
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	struct att_arg b = {.team = t};
	pthread_create(&th, NULL, att_pair, &b);
	int x = 0;
	cr_assert_eq(tc_recv(p0, 1, &x, sizeof x, NULL), 0);
	cr_assert_eq(x, 7);
	pthread_join(th, NULL);
	cr_assert_eq(b.rc_wait, 0);
	cr_assert_eq(b.rc_detach, 0);
	cr_assert_eq(tc_detach(p0), 0);
	cr_assert_eq(tc_run(t, ring_sum_fn, NULL), 0);
	tc_team_destroy(t);
}

/* ---- the other findings ---------------------------------------------- */

struct own_arg {
	struct tc_team *team;
	struct tc_proc *stale;
	int rc;
};

static void *own_detacher(void *p)
{
	struct own_arg *a = p;
	a->rc = tc_detach(a->stale);
	return NULL;
}

Test(abort, detach_only_by_the_owner_once, .timeout = 30)
{
	struct tc_team *t = make("complete:2", 0);
	struct tc_proc *proc;
	cr_assert_eq(tc_attach(t, 0, &proc), 0);
	cr_assert_eq(tc_detach(proc), 0);
	cr_assert_eq(tc_detach(proc), TC_EINVAL); /* not attached */
	cr_assert_eq(tc_attach(t, 0, &proc), 0);
	/* Another thread's stale detach must not release our rank. */
	struct own_arg a = {t, proc, 0};
	pthread_t th;
	pthread_create(&th, NULL, own_detacher, &a);
	pthread_join(th, NULL);
	cr_assert_eq(a.rc, TC_EINVAL);
	struct tc_proc *again;
	cr_assert_eq(tc_attach(t, 0, &again), TC_EBUSY); /* still ours */
	cr_assert_eq(tc_detach(proc), 0);
	tc_team_destroy(t);
}

Test(abort, waitall_refuses_requests_never_started, .timeout = 30)
{
	struct tc_team *t = make("complete:2", 0);
	struct tc_proc *p0, *p1;
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	cr_assert_eq(tc_attach(t, 1, &p1), 0);
	tc_request zero[2];
	memset(zero, 0, sizeof zero);
	cr_assert_eq(tc_waitall(p0, 2, zero), TC_EINVAL);

	/* A request that succeeded once, then failed to start (the team was
	 * aborted): its stale status must not be reported as a success. */
	int v = 1, w = 0;
	tc_request rq[2];
	cr_assert_eq(tc_isend(p0, 1, &v, sizeof v, &rq[0]), 0);
	cr_assert_eq(tc_irecv(p1, 0, &w, sizeof w, &rq[1]), 0);
	cr_assert_eq(tc_wait(p0, &rq[0], NULL), 0);
	cr_assert_eq(tc_wait(p1, &rq[1], NULL), 0);
	tc_team_abort(t);
	cr_assert_eq(tc_isend(p0, 1, &v, sizeof v, &rq[0]), TC_EABORTED);
	cr_assert_neq(tc_waitall(p0, 1, rq), 0);
	cr_assert_eq(tc_sendrecv(p0, 1, &v, sizeof v, 1, &w, sizeof w, NULL), TC_EABORTED);
	cr_assert_eq(tc_detach(p0), 0);
	cr_assert_eq(tc_detach(p1), 0);
	tc_team_destroy(t);
}

/* A user operator that blocks: rank 1's waits until rank 0 has returned
 * from the allreduce.  Run on the sender's buffer, it would keep rank 0's
 * send (and, on a failure, rank 0's tc__rndv_quiesce) waiting for ever. */
static _Atomic int op_released;
static _Thread_local int op_rank;

static void blocking_sum(const void *in, void *inout, size_t count, enum tc_dtype dt, void *ctx)
{
	(void)dt;
	(void)ctx;
	if (op_rank == 1)
		while (!atomic_load(&op_released))
			sched_yield();
	const double *a = in;
	double *b = inout;
	for (size_t i = 0; i < count; i++)
		b[i] += a[i];
}

static int user_op_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	op_rank = tc_rank(proc);
	enum { N = 512 }; /* 4 KiB: single copy, combined on arrival */
	double in[N], out[N];
	for (int i = 0; i < N; i++)
		in[i] = tc_rank(proc) + i;
	struct tc_user_op u = {.fn = blocking_sum, .commutative = 1};
	struct tc_coll_opts o = {.alg = "hypercube", .user_op = &u};
	int err = tc_allreduce(proc, in, out, N, TC_DOUBLE, TC_OP_USER, &o);
	if (tc_rank(proc) == 0)
		atomic_store(&op_released, 1);
	for (int i = 0; !err && i < N; i++)
		if (out[i] != 1 + 2.0 * i)
			err = TC_EINVAL;
	return err;
}

Test(abort, user_operator_never_runs_on_a_senders_buffer, .timeout = 30)
{
	struct tc_team *t = make("complete:2", 0);
	atomic_store(&op_released, 0);
	int err = tc_run(t, user_op_fn, NULL);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	tc_team_destroy(t);
}

Test(abort, hints_lowered_when_a_port_empties, .timeout = 30)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:2";
	cfg.wait = TC_WAIT_BLOCK; /* wakers look at the hints */
	struct tc_team *t = make_cfg(&cfg);
	struct tc_proc *p0, *p1;
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	cr_assert_eq(tc_attach(t, 1, &p1), 0);
	/* What tc__progress_wait does before it parks: hints up, re-check
	 * (which completes the receive and empties the port), hints down. */
	int x = 0, v = 5;
	tc_request r;
	cr_assert_eq(tc_irecv(p0, 1, &x, sizeof x, &r), 0);
	tc__set_hints(p0, true);
	cr_assert_eq(tc_send(p1, 0, &v, sizeof v), 0);
	tc__progress(p0);
	tc__set_hints(p0, false);
	cr_assert_eq(x, 5);
	cr_assert_eq(atomic_load(&p0->ports[0].in->want_data), 0u);
	/* So the next message rings nobody: no spurious wake-up. */
	atomic_store(&p0->db.word, TC__DB_AWAKE);
	cr_assert_eq(tc_send(p1, 0, &v, sizeof v), 0);
	cr_assert_eq(atomic_load(&p0->db.word), TC__DB_AWAKE);
	cr_assert_eq(tc_recv(p0, 1, &x, sizeof x, NULL), 0);
	cr_assert_eq(tc_wait(p0, &r, NULL), 0);
	cr_assert_eq(tc_detach(p0), 0);
	cr_assert_eq(tc_detach(p1), 0);
	tc_team_destroy(t);
}

/* A probe of a neighbour parks with the data hint of that link raised, a
 * receive from any source with every link's.  The progress the park makes
 * after raising them may push out the last packets of a long send of ours
 * to that neighbour, which empties the port; the port's own hints go down
 * then, but the wait's must stay up, or the neighbour's message rings
 * nobody and the wait sleeps until the team's timeout (for ever without
 * one).  What tc_probe, tc_recv and tc__progress_wait do, step by step:
 * mode 0 a probe of p1, mode 1 a receive from any source. */
Test(abort, wait_hint_kept_when_its_port_empties, .timeout = 30)
{
	for (int mode = 0; mode < 2; mode++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = "complete:2";
		cfg.wait = TC_WAIT_BLOCK;       /* wakers look at the hints */
		cfg.single_copy_min = SIZE_MAX; /* stream: a long send fills the ring */
		struct tc_team *t = make_cfg(&cfg);
		struct tc_proc *p0, *p1;
		cr_assert_eq(tc_attach(t, 0, &p0), 0);
		cr_assert_eq(tc_attach(t, 1, &p1), 0);
		enum { LONG = 256 * 1024 };
		unsigned char *a = calloc(1, LONG), *b = calloc(1, LONG);
		cr_assert(a && b);
		char x[3] = {0};
		tc_request s, r, any;
		cr_assert_eq(tc_isend(p0, 1, a, LONG, &s), 0);
		cr_assert_eq(tc_irecv(p1, 0, b, LONG, &r), 0);
		if (mode == 0)
			p0->probe_wait = 1; /* p0 probes p1, its port 0 */
		else
			cr_assert_eq(tc_irecv(p0, TC_ANY_SOURCE, x, sizeof x, &any), 0);
		/* Hints up while p0's send is still queued. */
		tc__set_hints(p0, true);
		int done = 0;
		for (int k = 0; k < 1000000 && !done; k++) {
			tc__progress(p1); /* takes what is in the ring */
			tc__progress(p0); /* pushes more, the last packets at the end */
			cr_assert_eq(tc_test(p1, &r, &done), 0);
		}
		cr_assert(done, "mode %d: the long message did not arrive", mode);
		cr_assert_eq(p0->nactive, 0, "mode %d: the port did not empty", mode);
		cr_assert_eq(atomic_load(&p0->ports[0].in->want_data), 1u,
		             "mode %d: the wait's hint went down with the port's", mode);
		/* So p1's message rings p0. */
		atomic_store(&p0->db.word, TC__DB_AWAKE);
		cr_assert_eq(tc_send(p1, 0, "abc", 3), 0);
		cr_assert_neq(atomic_load(&p0->db.word), TC__DB_AWAKE, "mode %d", mode);
		tc__set_hints(p0, false);
		p0->probe_wait = 0;
		cr_assert_eq(atomic_load(&p0->ports[0].in->want_data), 0u, "mode %d", mode);
		if (mode == 0)
			cr_assert_eq(tc_recv(p0, 1, x, sizeof x, NULL), 0);
		else
			cr_assert_eq(tc_wait(p0, &any, NULL), 0);
		cr_assert_eq(memcmp(x, "abc", 3), 0, "mode %d", mode);
		cr_assert_eq(tc_wait(p0, &s, NULL), 0);
		free(a);
		free(b);
		cr_assert_eq(tc_detach(p0), 0);
		cr_assert_eq(tc_detach(p1), 0);
		tc_team_destroy(t);
	}
}

Test(abort, clock_advance_refuses_to_overflow, .timeout = 30)
{
	struct tc_team *t = make("complete:1", 0);
	struct tc_proc *proc;
	cr_assert_eq(tc_attach(t, 0, &proc), 0);
	tc_time_t last = 0;
	int refused = 0;
	for (int k = 0; k < 20; k++) {
		int err = tc_clock_advance(proc, 1e15);
		cr_assert(err == 0 || err == TC_EOVERFLOW);
		refused += err != 0;
		cr_assert_geq(tc_clock(proc), last);
		last = tc_clock(proc);
	}
	cr_assert_gt(refused, 0);
	cr_assert_gt(tc_clock(proc), 0);
	cr_assert_eq(tc_detach(proc), 0);
	tc_team_destroy(t);
}

static int big_fn(struct tc_proc *proc, void *arg)
{
	size_t n = *(size_t *)arg;
	char *buf = calloc(1, n);
	int err = tc_rank(proc) == 0 ? tc_send(proc, 1, buf, n) : tc_recv(proc, 0, buf, n, NULL);
	free(buf);
	if (!err && tc_clock(proc) <= 0)
		err = TC_EOVERFLOW; /* the clock wrapped */
	return err;
}

Test(abort, message_time_saturates_under_a_slow_model, .timeout = 60)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:2";
	cfg.model.tw_ns = 1e9; /* the largest t_w accepted: 1e12 ps per byte */
	struct tc_team *t = make_cfg(&cfg);
	size_t n = (size_t)16 << 20; /* m t_w = 1.7e19 ps > 2^63 */
	cr_assert_eq(tc_run(t, big_fn, &n), 0);
	struct tc_run_info info;
	tc_team_last_run(t, &info);
	cr_assert_gt(info.makespan_ps, 0);
	tc_team_destroy(t);
}

static int tiny_mu_fn(struct tc_proc *proc, void *arg)
{
	size_t n = *(size_t *)arg;
	unsigned char *buf = malloc(n);
	for (size_t i = 0; i < n; i++)
		buf[i] = tc_rank(proc) == 0 ? (unsigned char)(i * 7) : 0;
	struct tc_coll_opts o = {.alg = "linear"};
	int err = tc_bcast(proc, buf, n, TC_BYTE, 0, &o);
	for (size_t i = 0; !err && i < n; i++)
		if (buf[i] != (unsigned char)(i * 7))
			err = TC_EINVAL;
	free(buf);
	return err;
}

Test(abort, tiny_mu_on_a_long_routed_transfer, .timeout = 120)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "chain:4";
	cfg.model.switching = TC_SWITCH_CT;
	cfg.model.mu = 1; /* one byte per packet: a million packets per hop */
	struct tc_team *t = make_cfg(&cfg);
	size_t n = (size_t)1 << 20;
	int err = tc_run(t, tiny_mu_fn, &n);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	struct tc_stats st;
	tc_team_stats(t, &st);
	/* At most 4096 packets per transfer and hop (6 hops in all here). */
	cr_assert_leq(st.packets_sent, 6u * 4096u + 64u, "%llu packets",
	              (unsigned long long)st.packets_sent);
	tc_team_destroy(t);
}

static int late_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	int v = 3;
	if (tc_rank(proc) == 1) {
		sleep_ms(50);
		return tc_send(proc, 0, &v, sizeof v);
	}
	return tc_recv(proc, 1, &v, sizeof v, NULL);
}

Test(abort, timeout_does_not_wrap, .timeout = 30)
{
	/* 18446744073710 ms * 10^6 wraps to 448384 ns. */
	struct tc_team *t = make("complete:2", 18446744073710ull);
	int err = tc_run(t, late_fn, NULL);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	tc_team_destroy(t);
}

/* ---- the watchdog ------------------------------------------------------- */

static struct tc_test_wd wd = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int skip_fn(struct tc_proc *proc, void *arg)
{
	struct rc_arg *a = arg;
	int me = tc_rank(proc), err = TC_OK;
	if (me != 3) { /* rank 3 skips the collective */
		/* Over the channels: the machine's own algorithms (AUTO's on
		 * fibres) see a rank that returned without the call. */
		const struct tc_coll_opts o = {.alg = "reduce_bcast"};
		double v = me, s = 0;
		err = tc_allreduce(proc, &v, &s, 1, TC_DOUBLE, TC_OP_SUM, &o);
	}
	atomic_store(&a->rc[me], err);
	return err;
}

Test(abort, watchdog_names_the_collective_and_the_missing_rank, .timeout = 60)
{
	/* With the mismatch check on, the waiting ranks' probe would report
	 * TC_EMISMATCH first (tests/test_mismatch.c): the hang the watchdog
	 * is for is one no check sees. */
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:6";
	cfg.timeout_ms = 300;
	cfg.no_mismatch_check = 1;
	struct tc_team *t = make_cfg(&cfg);
	tc_team_set_watchdog(t, tc_test_wd_capture, &wd);
	wd.calls = 0;
	struct rc_arg a = {0};
	int err = tc_run(t, skip_fn, &a);
	cr_assert(err == TC_ETIMEDOUT || err == TC_EABORTED, "%s", tc_err_name(err));
	for (int r = 0; r < 6; r++)
		if (r != 3)
			cr_assert(atomic_load(&a.rc[r]) == TC_ETIMEDOUT ||
			                  atomic_load(&a.rc[r]) == TC_EABORTED,
			          "rank %d: %s", r, tc_err_name(atomic_load(&a.rc[r])));
	pthread_mutex_lock(&wd.mu);
	cr_assert_eq(wd.calls, 1);
	cr_assert_not_null(strstr(wd.text, "allreduce"), "%s", wd.text);
	cr_assert_not_null(strstr(wd.text, "rank 3: not in the library"), "%s", wd.text);
	cr_assert_not_null(strstr(wd.text, "rank 3 on link 3->"), "%s", wd.text);
	pthread_mutex_unlock(&wd.mu);
	/* The next run is clean (and may report again). */
	cr_assert_eq(tc_run(t, ring_sum_fn, NULL), 0);
	tc_team_destroy(t);
}

static int hang_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	int v = 0;
	if (tc_rank(proc) == 0)
		return 0; /* never sends */
	return tc_recv(proc, 0, &v, sizeof v, NULL);
}

/* A polling loop is bounded by the team's timeout as a wait is. */
static int poll_fn(struct tc_proc *proc, void *arg)
{
	struct rc_arg *a = arg;
	int me = tc_rank(proc), err = TC_OK, x = 0, done = 0;
	tc_request req;
	if (me == 0) { /* polls for a message rank 1 sends late, or never */
		err = tc_irecv(proc, 1, &x, sizeof x, &req);
		while (!err && !done)
			err = tc_test(proc, &req, &done);
	} else if (atomic_load(&a->rc[1]) == 1) { /* the late sender */
		sleep_ms(50);
		x = 7;
		err = tc_send(proc, 0, &x, sizeof x);
	}
	atomic_store(&a->rc[me], err);
	return err;
}

Test(abort, test_loop_times_out, .timeout = 30)
{
	struct tc_team *t = make("complete:2", 200);
	tc_team_set_watchdog(t, tc_test_wd_capture, &wd);
	wd.calls = 0;
	struct rc_arg a = {0};
	cr_assert_eq(tc_run(t, poll_fn, &a), TC_ETIMEDOUT);
	cr_assert_eq(atomic_load(&a.rc[0]), TC_ETIMEDOUT);
	cr_assert_eq(atomic_load(&a.rc[1]), 0);
	pthread_mutex_lock(&wd.mu);
	cr_assert_eq(wd.calls, 1);
	cr_assert_not_null(strstr(wd.text, "rank 0: waiting in tc_test"), "%s", wd.text);
	cr_assert_not_null(strstr(wd.text, "receiving from rank 1"), "%s", wd.text);
	pthread_mutex_unlock(&wd.mu);
	/* A message that comes within the timeout is received. */
	atomic_store(&a.rc[1], 1);
	cr_assert_eq(tc_run(t, poll_fn, &a), 0);
	cr_assert_eq(atomic_load(&a.rc[0]), 0);
	tc_team_destroy(t);
}

Test(abort, debug_timeout_from_the_environment, .timeout = 30)
{
	setenv("TC_DEBUG_TIMEOUT_MS", "200", 1);
	struct tc_team *t = make("complete:2", 0);
	unsetenv("TC_DEBUG_TIMEOUT_MS");
	tc_team_set_watchdog(t, tc_test_wd_capture, &wd);
	cr_assert_eq(tc_run(t, hang_fn, NULL), TC_ETIMEDOUT);
	pthread_mutex_lock(&wd.mu);
	cr_assert_not_null(strstr(wd.text, "rank 1: waiting in tc_recv"), "%s", wd.text);
	pthread_mutex_unlock(&wd.mu);
	tc_team_destroy(t);
}
