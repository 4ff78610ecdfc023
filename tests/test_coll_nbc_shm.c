/* SPDX-License-Identifier: MIT */
/*
 * The machine's own algorithms as nonblocking and persistent calls
 * (lib/coll/shm_step.c): the calls that one round of flags completes run
 * natively as requests, so they send no message over the channels; their
 * results against closed forms worked out here, started many times,
 * outstanding together, completed by waits in each rank's own order or by
 * test loops; moved on by a wait for something else (a receive whose
 * sender waits for the call first); between blocking calls of the same
 * algorithms and requests that run over the channels; and a peer that
 * makes another call instead (TC_EMISMATCH, no hang); the reduce_scatter
 * that stages its operands (waiters that spin).  Threads, or fibres with
 * TC_EXEC=fibres.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"

struct outcome {
	atomic_int failures;
	char msg[256];
};

#define EXPECT(o, cond, ...)                                                                     \
	do {                                                                                     \
		if (!(cond) && atomic_fetch_add(&(o)->failures, 1) == 0) {                       \
			int n_ = snprintf((o)->msg, sizeof(o)->msg, "rank %d: ", tc_rank(proc)); \
			snprintf((o)->msg + n_, sizeof(o)->msg - (size_t)n_, __VA_ARGS__);       \
		}                                                                                \
	} while (0)

/* The spin of the teams team_of() makes (0: the library's choice). */
static uint64_t team_spin_ns;

static struct tc_team *team_of(const char *spec, int timeout_ms)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.timeout_ms = timeout_ms;
	cfg.spin_ns = team_spin_ns;
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0, "%s: %s", spec, tc_error_detail());
	return team;
}

static void run_on(const char *spec, tc_spmd_fn fn, struct outcome *o)
{
	struct tc_team *team = team_of(spec, 30000);
	int err = tc_run(team, fn, o);
	cr_assert_eq(atomic_load(&o->failures), 0, "%s: %s", spec, o->msg);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	tc_team_destroy(team);
}

/* The five calls with their inputs of iteration `it`; each one's result
 * checked against its closed form. */
enum { AG = 3, A2A = 2, RS = 3, PMAX = 8 };
struct five {
	int64_t ar_in, ar_out;
	int32_t ag_in[AG], ag_out[AG * PMAX];
	int32_t a2a_in[A2A * PMAX], a2a_out[A2A * PMAX];
	int64_t rs_in[RS * PMAX], rs_out[RS];
};

static void five_fill(struct five *f, int p, int me, int it)
{
	f->ar_in = (int64_t)(it + 1) * (me + 1);
	for (int j = 0; j < AG; j++)
		f->ag_in[j] = me * 100 + j + it;
	for (int d = 0; d < p; d++)
		for (int j = 0; j < A2A; j++)
			f->a2a_in[d * A2A + j] = me * 1000 + d * 10 + j + it;
	for (int d = 0; d < p; d++)
		for (int j = 0; j < RS; j++)
			f->rs_in[d * RS + j] = me + d * 7 + j + it;
	f->ar_out = -1;
	memset(f->ag_out, 0xff, sizeof f->ag_out);
	memset(f->a2a_out, 0xff, sizeof f->a2a_out);
	memset(f->rs_out, 0xff, sizeof f->rs_out);
}

static const char *five_wrong(const struct five *f, int p, int me, int it)
{
	if (f->ar_out != (int64_t)(it + 1) * p * (p + 1) / 2)
		return "allreduce";
	for (int r = 0; r < p; r++)
		for (int j = 0; j < AG; j++)
			if (f->ag_out[r * AG + j] != r * 100 + j + it)
				return "allgather";
	for (int r = 0; r < p; r++)
		for (int j = 0; j < A2A; j++)
			if (f->a2a_out[r * A2A + j] != r * 1000 + me * 10 + j + it)
				return "alltoall";
	for (int j = 0; j < RS; j++)
		if (f->rs_out[j] != (int64_t)p * (p - 1) / 2 + (int64_t)p * (me * 7 + j + it))
			return "reduce_scatter";
	return NULL;
}

static const struct tc_coll_opts o_shm = {.alg = "shm"}, o_flag = {.alg = "shm_flag"};

/* The five as requests: persistent (init) or nonblocking. */
static int five_start(struct tc_proc *proc, struct five *f, tc_request q[5], int persistent)
{
#define TC_FORM(name, opts, ...)                                       \
	(persistent ? tc_##name##_init(proc, __VA_ARGS__, opts, &q[i]) \
	            : tc_i##name(proc, __VA_ARGS__, opts, &q[i]))
	int err = 0, i = 0;
	err = persistent ? tc_barrier_init(proc, &o_shm, &q[i]) : tc_ibarrier(proc, &o_shm, &q[i]);
	i++;
	err = err ? err : TC_FORM(allreduce, &o_flag, &f->ar_in, &f->ar_out, 1, TC_INT64, TC_OP_SUM);
	i++;
	err = err ? err : TC_FORM(allgather, &o_shm, f->ag_in, f->ag_out, AG, TC_INT32);
	i++;
	err = err ? err : TC_FORM(alltoall, &o_shm, f->a2a_in, f->a2a_out, A2A, TC_INT32);
	i++;
	err = err ? err : TC_FORM(reduce_scatter, &o_shm, f->rs_in, f->rs_out, RS, TC_INT64, TC_OP_SUM);
#undef TC_FORM
	return err;
}

/* Completes q[0..4] in an order of this rank's (by tests where test). */
static int five_complete(struct tc_proc *proc, tc_request q[5], int it, int test)
{
	const int me = tc_rank(proc);
	int err = 0;
	for (int k = 0; k < 5 && !err; k++) {
		const int i = (me + it) % 2 ? 4 - k : (k * 3 + me) % 5;
		if (test) {
			int done = 0;
			do
				err = tc_test(proc, &q[i], &done);
			while (!err && !done);
		} else {
			err = tc_wait(proc, &q[i], NULL);
		}
	}
	return err;
}

static int native_rank(struct tc_proc *proc, void *arg)
{
	struct outcome *o = arg;
	const int p = tc_size(proc), me = tc_rank(proc);
	struct five f;
	tc_request q[5];
	tc_proc_stats_reset(proc);
	/* Persistent, started again with new inputs. */
	five_fill(&f, p, me, 0);
	int err = five_start(proc, &f, q, 1);
	EXPECT(o, !err, "init: %s", tc_strerror(err));
	for (int it = 0; it < 40 && !err; it++) {
		five_fill(&f, p, me, it);
		for (int i = 0; i < 5 && !err; i++)
			err = tc_start(proc, &q[i]);
		err = err ? err : five_complete(proc, q, it, it % 3 == 2);
		EXPECT(o, !err, "persistent, iteration %d: %s", it, tc_strerror(err));
		const char *bad = err ? NULL : five_wrong(&f, p, me, it);
		EXPECT(o, !bad, "persistent %s, iteration %d: wrong result", bad, it);
	}
	for (int i = 0; i < 5; i++)
		tc_request_free(proc, &q[i]);
	/* Nonblocking, between blocking calls of the same algorithms. */
	for (int it = 0; it < 20 && !err; it++) {
		five_fill(&f, p, me, it);
		err = five_start(proc, &f, q, 0);
		err = err ? err : five_complete(proc, q, it, it % 2);
		const char *bad = err ? NULL : five_wrong(&f, p, me, it);
		EXPECT(o, !err && !bad, "nonblocking, iteration %d: %s", it,
		       err ? tc_strerror(err) : bad);
		int64_t v = me, sum = -1;
		err = err ? err : tc_allreduce(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, &o_flag);
		err = err ? err : tc_barrier(proc, &o_shm);
		EXPECT(o, !err && sum == (int64_t)p * (p - 1) / 2, "blocking between: %s",
		       tc_strerror(err));
	}
	struct tc_stats st;
	tc_proc_stats(proc, &st);
	EXPECT(o, st.msgs_sent == 0, "%llu messages over the channels", (unsigned long long)st.msgs_sent);
	return 0;
}

Test(nbc_shm, requests_send_no_message, .timeout = 300)
{
	static const char *specs[] = {"complete:2", "complete:3", "complete:5", "complete:8"};
	for (int s = 0; s < 4; s++) {
		struct outcome o = {0};
		run_on(specs[s], native_rank, &o);
	}
}

/* The same where the waiters spin (set here: the teams outnumber the
 * CPUs), so that the reduce_scatter stages its operands
 * (lib/coll/shm_flat.c, TC__SHM_STAGE) as each peer's flag is found by a
 * step. */
Test(nbc_shm, staged_requests, .timeout = 300)
{
	static const char *specs[] = {"complete:3", "complete:5"};
	team_spin_ns = 20000;
	for (int s = 0; s < 2; s++) {
		struct outcome o = {0};
		run_on(specs[s], native_rank, &o);
	}
	team_spin_ns = 0;
}

/* A call one round does not complete (an allgather through the input
 * buffers, 2 KiB a rank) runs its schedule over the channels as a
 * request; mixed with native ones in one queue. */
static int mixed_rank(struct tc_proc *proc, void *arg)
{
	struct outcome *o = arg;
	const int p = tc_size(proc), me = tc_rank(proc);
	enum { BIG = 512 };
	int32_t big_in[BIG], big_out[BIG * PMAX];
	struct five f;
	tc_request q[5], b;
	tc_proc_stats_reset(proc);
	int err = 0;
	for (int it = 0; it < 10 && !err; it++) {
		five_fill(&f, p, me, it);
		for (int j = 0; j < BIG; j++)
			big_in[j] = me * 1000000 + j * 3 + it;
		err = five_start(proc, &f, q, 0);
		err = err ? err : tc_iallgather(proc, big_in, big_out, BIG, TC_INT32, &o_shm, &b);
		err = err ? err : five_complete(proc, q, it, it % 2);
		err = err ? err : tc_wait(proc, &b, NULL);
		const char *bad = err ? NULL : five_wrong(&f, p, me, it);
		for (int r = 0; !err && !bad && r < p; r++)
			for (int j = 0; j < BIG; j++)
				if (big_out[r * BIG + j] != r * 1000000 + j * 3 + it)
					bad = "allgather of 2 KiB";
		EXPECT(o, !err && !bad, "iteration %d: %s", it, err ? tc_strerror(err) : bad);
	}
	struct tc_stats st;
	tc_proc_stats(proc, &st);
	EXPECT(o, st.msgs_sent > 0, "the allgather of 2 KiB sent no message");
	return 0;
}

Test(nbc_shm, mixed_with_channel_requests, .timeout = 300)
{
	static const char *specs[] = {"complete:2", "complete:4"};
	for (int s = 0; s < 2; s++) {
		struct outcome o = {0};
		run_on(specs[s], mixed_rank, &o);
	}
}

/* Rank 0 waits in a receive whose sender waits for their call first: the
 * receive's wait moves rank 0's call on (and does not sleep where only a
 * flag would wake it). */
static int receive_rank(struct tc_proc *proc, void *arg)
{
	struct outcome *o = arg;
	const int me = tc_rank(proc);
	enum { BYTES = 4096 };
	unsigned char msg[BYTES];
	int err = 0;
	for (int it = 0; it < 200 && !err; it++) {
		int64_t v = me + it, sum = -1;
		tc_request q;
		err = tc_iallreduce(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, &o_flag, &q);
		const size_t n = it % 2 ? BYTES : 8;
		if (me == 0) {
			err = err ? err : tc_recv(proc, 1, msg, n, NULL);
			err = err ? err : tc_wait(proc, &q, NULL);
			EXPECT(o, err || msg[n - 1] == (unsigned char)it, "message of iteration %d", it);
		} else {
			err = err ? err : tc_wait(proc, &q, NULL);
			memset(msg, it, n);
			err = err ? err : tc_send(proc, 0, msg, n);
		}
		EXPECT(o, !err && sum == 1 + 2 * it, "iteration %d: %s", it, tc_strerror(err));
	}
	return 0;
}

Test(nbc_shm, moved_on_by_a_receive, .timeout = 120)
{
	struct outcome o = {0};
	run_on("complete:2", receive_rank, &o);
}

/* Rank 1 makes a small bcast (its root: it returns at once) where rank 0
 * makes a nonblocking allreduce: rank 0's call fails with TC_EMISMATCH
 * long before the team's timeout. */
static int mismatch_rank(struct tc_proc *proc, void *arg)
{
	int *got = arg;
	int64_t v = 1, sum = 0;
	if (tc_rank(proc) == 1)
		return tc_bcast(proc, &v, 1, TC_INT64, 1, &o_shm);
	tc_request q;
	int err = tc_iallreduce(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, &o_flag, &q);
	*got = err ? err : tc_wait(proc, &q, NULL);
	return 0;
}

/* fn on two ranks sets rank 0's outcome: TC_EMISMATCH, well before the
 * team's timeout of a minute (the test's own bound is two). */
static void expect_mismatch(tc_spmd_fn fn)
{
	struct tc_team *team = team_of("complete:2", 60000);
	int got = 0;
	tc_run(team, fn, &got);
	cr_assert_eq(got, TC_EMISMATCH, "%s", tc_strerror(got));
	tc_team_destroy(team);
}

Test(nbc_shm, another_call_fails, .timeout = 120)
{
	expect_mismatch(mismatch_rank);
}

/* A call started on one team moves on while its rank waits in a call of
 * another (MPI's progress rule): rank 0 starts an allreduce on the team,
 * then makes one on a dup of it before its wait; the others wait first.
 * Over the channels (ring, several rounds) the peers need rank 0's later
 * rounds; natively, a block not yet free at the start (a late peer of
 * call k - 2) is published only by a later step. */
struct cross_arg {
	const char *alg;
	struct outcome o;
};

static int cross_rank(struct tc_proc *proc, void *argp)
{
	struct cross_arg *a = argp;
	struct outcome *o = &a->o;
	const int me = tc_rank(proc), p = tc_size(proc);
	struct tc_proc *dup = NULL;
	int err = tc_team_dup(proc, &dup);
	EXPECT(o, !err, "dup: %s", tc_strerror(err));
	if (err)
		return 0;
	const struct tc_coll_opts alg = {.alg = a->alg};
	for (int it = 0; it < 20 && !err; it++) {
		int64_t v = me + it, s = -1, w = 1, ws = -1;
		tc_request q;
		err = tc_iallreduce(proc, &v, &s, 1, TC_INT64, TC_OP_SUM, &alg, &q);
		if (me == 0) {
			err = err ? err : tc_allreduce(dup, &w, &ws, 1, TC_INT64, TC_OP_SUM, NULL);
			err = err ? err : tc_wait(proc, &q, NULL);
		} else {
			err = err ? err : tc_wait(proc, &q, NULL);
			err = err ? err : tc_allreduce(dup, &w, &ws, 1, TC_INT64, TC_OP_SUM, NULL);
		}
		EXPECT(o, !err && s == (int64_t)p * (p - 1) / 2 + (int64_t)p * it && ws == p,
		       "%s, iteration %d: %s", a->alg, it, tc_strerror(err));
	}
	err = tc_team_free(dup);
	EXPECT(o, !err, "free: %s", tc_strerror(err));
	return 0;
}

Test(nbc_shm, moved_on_by_another_team, .timeout = 120)
{
	static const char *algs[] = {"ring", "shm_flag"};
	for (int i = 0; i < 2; i++) {
		struct tc_team *team = team_of("complete:4", 20000);
		struct cross_arg a = {.alg = algs[i]};
		int err = tc_run(team, cross_rank, &a);
		cr_assert_eq(atomic_load(&a.o.failures), 0, "%s", a.o.msg);
		cr_assert_eq(err, 0, "%s: %s", algs[i], tc_strerror(err));
		tc_team_destroy(team);
	}
}

/* Rank 1 starts call 0 and returns without completing it; rank 0
 * completes it, makes a small bcast as root (call 1) and starts a barrier
 * (call 2), whose block call 0 last wrote and rank 1 never freed: the
 * request fails with TC_EMISMATCH, as the blocking barrier does, long
 * before the team's timeout. */
static int unfreed_rank(struct tc_proc *proc, void *argp)
{
	int *got = argp;
	const int me = tc_rank(proc);
	int64_t v = 1, s = 0, b = 5;
	tc_request q0, q;
	if (me == 0) /* rank 1 is done with its start by then */
		for (int i = 0; i < 1000; i++)
			tc_yield(proc);
	int err = tc_iallreduce(proc, &v, &s, 1, TC_INT64, TC_OP_SUM, &o_flag, &q0);
	if (me == 1)
		return 0;
	err = err ? err : tc_wait(proc, &q0, NULL);
	err = err ? err : tc_bcast(proc, &b, 1, TC_INT64, 0, &o_shm);
	err = err ? err : tc_ibarrier(proc, &o_shm, &q);
	*got = err ? err : tc_wait(proc, &q, NULL);
	return 0;
}

Test(nbc_shm, block_never_freed_fails, .timeout = 120)
{
	expect_mismatch(unfreed_rank);
}
