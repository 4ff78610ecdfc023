/* SPDX-License-Identifier: MIT */
/*
 * tests/test_mismatch.c - mismatch detection (topocoll/coll.h, "Mismatched
 * calls"): one rank calls a collective with another root, count, datatype,
 * op or algorithm than the others.  Checked, for every collective on a few
 * topologies: no rank hangs or times out (the team's timeout, a guard here,
 * would report TC_ETIMEDOUT); a rank that returns success has the result of the call
 * the others made (or, for the odd rank, one in which it receives nothing);
 * somebody reports TC_EMISMATCH, in the call or at the latest in the
 * barrier that follows it; and the next run of the same team succeeds with
 * the right results.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll_ref.h"
#include "harness.h"
#include "util.h"

enum { MM_ROOT, MM_COUNT, MM_DTYPE, MM_OP, MM_ALG, MM_KINDS };
static const char *const mm_names[] = {"root", "count", "datatype", "op", "algorithm"};

struct mm_arg {
	struct ct_case c, odd; /* the others' call, the odd rank's */
	int odd_rank;
	int rc[64], rc2[64];
	int bad[64]; /* returned success with a wrong result */
};

static int mm_fn(struct tc_proc *proc, void *argp)
{
	struct mm_arg *a = argp;
	const int me = tc_rank(proc), p = tc_team_size(tc_proc_team(proc));
	const struct ct_case *c = me == a->odd_rank ? &a->odd : &a->c;
	size_t sb = ct_sbytes(c, p, me), rb = ct_rbytes(c, p, me);
	size_t es = tc_dtype_size(c->dt);
	unsigned char *s = calloc(1, sb + 64), *r = calloc(1, rb + 64);
	for (size_t i = 0; es && i < sb / es; i++)
		ct_input(c, me, i, s + i * es);
	if ((c->coll == TC_COLL_BCAST || c->coll == TC_COLL_MULTICAST) && me == c->root)
		for (size_t i = 0; i < c->count; i++) /* its one buffer is the input */
			ct_input(c, me, i, r + i * es);
	a->rc[me] = ct_call(proc, c, s, r);
	if (!a->rc[me]) {
		/* The others' result, or nothing at all for the odd rank. */
		size_t eb = ct_rbytes(&a->c, p, me);
		unsigned char *e = calloc(1, eb + 64);
		if (me == a->odd_rank)
			a->bad[me] = ct_expect(c, p, me, e) != -1;
		else if (ct_expect(&a->c, p, me, e) == 0)
			a->bad[me] = rb != eb || memcmp(r, e, eb) != 0;
		free(e);
	}
	a->rc2[me] = tc_barrier(proc, NULL);
	free(s);
	free(r);
	return 0;
}

/* Two algorithms of coll that apply to team's topology, or 0. */
static int two_algs(struct tc_team *team, enum tc_coll coll, const char **a0, const char **a1)
{
	int n = 0;
	for (int i = 0; tc_alg_name(coll, i) && n < 2; i++) {
		const char *name = tc_alg_name(coll, i);
		if (tc_alg_applies(tc_team_topo(team), tc_team_model(team), coll, name) == 0)
			*(n++ ? a1 : a0) = name;
	}
	return n == 2;
}

static const enum tc_coll mm_colls[] = {
        TC_COLL_BCAST,       TC_COLL_REDUCE,         TC_COLL_ALLREDUCE, TC_COLL_BARRIER,
        TC_COLL_ALLGATHER,   TC_COLL_REDUCE_SCATTER, TC_COLL_SCAN,      TC_COLL_EXSCAN,
        TC_COLL_SCATTER,     TC_COLL_GATHER,         TC_COLL_ALLTOALL,  TC_COLL_SHIFT,
        TC_COLL_GRAY2BINARY, TC_COLL_BINARY2GRAY,    TC_COLL_MULTICAST,
};

static bool reduces(enum tc_coll c)
{
	return c == TC_COLL_REDUCE || c == TC_COLL_ALLREDUCE || c == TC_COLL_REDUCE_SCATTER ||
	       c == TC_COLL_SCAN || c == TC_COLL_EXSCAN;
}

static bool rooted(enum tc_coll c)
{
	return c == TC_COLL_BCAST || c == TC_COLL_REDUCE || c == TC_COLL_SCATTER ||
	       c == TC_COLL_GATHER || c == TC_COLL_MULTICAST || c == TC_COLL_SHIFT;
}

/* One case: returns 1 when it ran, 0 when it does not apply. */
static int mm_case(const char *spec, enum tc_coll coll, int kind)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.timeout_ms = 3000; /* a hang would show as TC_ETIMEDOUT, not a stuck test */
	struct tc_team *team;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	const int p = tc_team_size(team);
	static const int members[] = {0, 2};
	struct mm_arg *a = calloc(1, sizeof *a);
	a->c = (struct ct_case){.coll = coll,
	                        .count = 5,
	                        .dt = TC_INT32,
	                        .op = TC_OP_SUM,
	                        .root = 0,
	                        .seed = 7,
	                        .q = 1};
	if (coll == TC_COLL_MULTICAST) {
		a->c.members = members;
		a->c.nmembers = 2;
	}
	if ((coll == TC_COLL_GRAY2BINARY || coll == TC_COLL_BINARY2GRAY) &&
	    strncmp(spec, "hypercube", 9) != 0)
		goto skip;
	a->odd = a->c;
	a->odd_rank = p - 1;
	switch (kind) {
	case MM_ROOT: /* the odd rank names rank 1, which is not itself */
		if (!rooted(coll))
			goto skip;
		if (coll == TC_COLL_SHIFT)
			a->odd.q = 2;
		else
			a->odd.root = 1;
		break;
	case MM_COUNT:
		if (coll == TC_COLL_BARRIER)
			goto skip;
		a->odd.count = 6;
		break;
	case MM_DTYPE: /* of the same size: only the signature tells */
		if (coll == TC_COLL_BARRIER)
			goto skip;
		a->odd.dt = TC_FLOAT;
		break;
	case MM_OP:
		if (!reduces(coll))
			goto skip;
		a->odd.op = TC_OP_MAX;
		break;
	case MM_ALG:
		if (!two_algs(team, coll, &a->c.alg, &a->odd.alg))
			goto skip;
		break;
	}
	cr_assert_eq(tc_run(team, mm_fn, a), 0);
	if (getenv("MM_SURVEY")) {
		fprintf(stderr, "%s %s %s:", spec, tc_coll_name(coll), mm_names[kind]);
		for (int r = 0; r < p; r++)
			fprintf(stderr, " %s/%s%s", tc_err_name(a->rc[r]) + 3,
			        tc_err_name(a->rc2[r]) + 3, a->bad[r] ? "!" : "");
		fprintf(stderr, "\n");
		goto skip;
	}
	/* No rank times out: a disagreement in which every rank waits for a
	 * message nobody sends is ended by the waiting ranks' probe (lib/p2p/
	 * progress.c), not by the team's timeout. */
	int seen = 0;
	for (int r = 0; r < p; r++) {
		cr_assert(a->rc[r] == 0 || a->rc[r] == TC_EMISMATCH || a->rc[r] == TC_EABORTED,
		          "%s %s %s: rank %d returned %s", spec, tc_coll_name(coll), mm_names[kind],
		          r, tc_err_name(a->rc[r]));
		cr_assert(a->rc2[r] == 0 || a->rc2[r] == TC_EMISMATCH || a->rc2[r] == TC_EABORTED,
		          "%s %s %s: rank %d's barrier returned %s", spec, tc_coll_name(coll),
		          mm_names[kind], r, tc_err_name(a->rc2[r]));
		cr_assert(!a->bad[r], "%s %s %s: rank %d succeeded with a wrong result", spec,
		          tc_coll_name(coll), mm_names[kind], r);
		seen += a->rc[r] == TC_EMISMATCH || a->rc2[r] == TC_EMISMATCH;
	}
	cr_assert_gt(seen, 0, "%s %s %s: nobody saw the mismatch", spec, tc_coll_name(coll),
	             mm_names[kind]);
	/* The next run of the same team works. */
	char msg[256];
	a->c.alg = NULL;
	cr_assert_eq(ct_run(team, &a->c, msg, sizeof msg), 0, "%s %s %s: next run: %s", spec,
	             tc_coll_name(coll), mm_names[kind], msg);
	free(a);
	tc_team_destroy(team);
	return 1;
skip:
	free(a);
	tc_team_destroy(team);
	return 0;
}

static int mm_all(const char *spec)
{
	int runs = 0;
	for (size_t i = 0; i < sizeof mm_colls / sizeof mm_colls[0]; i++)
		for (int k = 0; k < MM_KINDS; k++)
			runs += mm_case(spec, mm_colls[i], k);
	return runs;
}

Test(mismatch, complete, .timeout = 300)
{
	cr_assert_gt(mm_all("complete:5"), 30);
}

Test(mismatch, ring, .timeout = 300)
{
	cr_assert_gt(mm_all("ring:5"), 30);
}

Test(mismatch, hypercube, .timeout = 300)
{
	cr_assert_gt(mm_all("hypercube:3"), 30);
}

Test(mismatch, mesh, .timeout = 300)
{
	cr_assert_gt(mm_all("mesh:2x3"), 30);
}

/*
 * The case: bcast of 4 doubles on complete:4 with root 0 on ranks 0
 * and 1 and root 1 on ranks 2 and 3 (ranks 2 and 3 wait for rank 1, which
 * sends nothing: before the scan of the other links they hung).
 */
struct bc_arg {
	int rc[4];
};

static int bc_fn(struct tc_proc *proc, void *argp)
{
	struct bc_arg *a = argp;
	int me = tc_rank(proc);
	double b[4] = {me, me, me, me};
	struct tc_coll_opts o = {.alg = "linear"};
	a->rc[me] = tc_bcast(proc, b, 4, TC_DOUBLE, me < 2 ? 0 : 1, &o);
	if (!a->rc[me])
		a->rc[me] = tc_barrier(proc, NULL); /* a late report comes here */
	return 0;
}

Test(mismatch, bcast_roots, .timeout = 120)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:4";
	cfg.timeout_ms = 30000;
	struct tc_team *team;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	for (int run = 0; run < 20; run++) {
		struct bc_arg a;
		cr_assert_eq(tc_run(team, bc_fn, &a), 0);
		int mism = 0;
		for (int r = 0; r < 4; r++) {
			cr_assert(a.rc[r] == TC_EMISMATCH || a.rc[r] == TC_EABORTED, "rank %d: %s",
			          r, tc_err_name(a.rc[r]));
			mism += a.rc[r] == TC_EMISMATCH;
		}
		cr_assert_gt(mism, 0);
	}
	tc_team_destroy(team);
}

/* A rank that skips a collective (returns, or goes on to the next call):
 * the ranks waiting on it see it through the probe, with no team timeout. */
struct skip_arg {
	int mode; /* 0: the odd rank returns; 1: it calls the barrier instead */
	int rc[64];
};

static int skip_fn(struct tc_proc *proc, void *argp)
{
	struct skip_arg *a = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	int64_t v = me, sum = 0;
	if (me == p - 1) {
		a->rc[me] = a->mode ? tc_barrier(proc, NULL) : 0;
		return 0;
	}
	a->rc[me] = tc_allreduce(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL);
	if (!a->rc[me])
		a->rc[me] = tc_barrier(proc, NULL);
	return 0;
}

Test(mismatch, a_rank_that_skips_the_call, .timeout = 120)
{
	static const char *const specs[] = {"complete:6", "ring:6", "hypercube:3", "torus:3x3",
	                                    "complete:64"};
	static const enum tc_wait_policy waits[] = {TC_WAIT_AUTO, TC_WAIT_YIELD, TC_WAIT_SPIN};
	for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
		for (int mode = 0; mode < 2 * 3; mode++) {
			/* Waits that never park probe every 10 ms too (small
			 * teams only: 64 spinning threads on 2 cores crawl). */
			if (mode >= 2 && i == sizeof specs / sizeof *specs - 1)
				continue;
			struct tc_team_config cfg;
			tc_team_config_default(&cfg);
			cfg.topology = specs[i]; /* no timeout: a hang fails the test's */
			cfg.wait = waits[mode / 2];
			struct tc_team *team;
			cr_assert_eq(tc_team_create(&cfg, &team), 0);
			const int p = tc_team_size(team);
			struct skip_arg a = {.mode = mode % 2};
			cr_assert_eq(tc_run(team, skip_fn, &a), 0);
			int mism = 0;
			for (int r = 0; r < p; r++) {
				cr_assert(a.rc[r] == TC_EMISMATCH || a.rc[r] == TC_EABORTED ||
				                  (r == p - 1 && a.rc[r] == 0),
				          "%s mode %d rank %d: %s", specs[i], mode, r,
				          tc_err_name(a.rc[r]));
				mism += a.rc[r] == TC_EMISMATCH;
			}
			cr_assert_gt(mism, 0, "%s mode %d", specs[i], mode);
			tc_team_destroy(team);
		}
}

/*
 * A guard for runs with no team timeout: tc_run in the calling thread, and
 * a thread that aborts the team (tc_team_abort) if the run is still going
 * after secs seconds.  Returns whether it had to: a hang then fails the
 * test with a message instead of stopping the suite.
 */
struct guard {
	struct tc_team *team;
	int secs;
	int done, fired;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *guard_main(void *gp)
{
	struct guard *g = gp;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += g->secs;
	pthread_mutex_lock(&g->mu);
	while (!g->done)
		if (pthread_cond_timedwait(&g->cv, &g->mu, &until)) {
			if (!g->done) {
				g->fired = 1;
				tc_team_abort(g->team);
			}
			break;
		}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

static bool guarded_run(struct tc_team *team, tc_spmd_fn fn, void *arg, int secs)
{
	struct guard g = {.team = team, .secs = secs};
	pthread_mutex_init(&g.mu, NULL);
	pthread_cond_init(&g.cv, NULL);
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, guard_main, &g), 0);
	cr_assert_eq(tc_run(team, fn, arg), 0);
	pthread_mutex_lock(&g.mu);
	g.done = 1;
	pthread_cond_signal(&g.cv);
	pthread_mutex_unlock(&g.mu);
	pthread_join(th, NULL);
	pthread_mutex_destroy(&g.mu);
	pthread_cond_destroy(&g.cv);
	return g.fired != 0;
}

/*
 * A rank that skips a collective, or calls another one, while its
 * neighbour waits for it to take a single-copy message (from
 * TC__CHAN_SINGLE_COPY_MIN = 1 KiB on the descriptor is in the channel and
 * the send waits for the receiver's copy): the waiting rank's probe looks at
 * the neighbour it waits on to take the message, and sees it returned (or
 * in another call).  No team timeout: the guard above turns a hang into a
 * failure.
 */
enum { SK_RETURN, SK_BARRIER, SK_REDUCE };
struct sk_arg {
	struct ct_case c; /* the others' call */
	int odd_rank, how;
	int rc[64];
};

static int sk_fn(struct tc_proc *proc, void *argp)
{
	struct sk_arg *a = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	if (me == a->odd_rank && a->how != SK_REDUCE) {
		a->rc[me] = a->how == SK_BARRIER ? tc_barrier(proc, NULL) : 0;
		return 0;
	}
	struct ct_case c = a->c;
	if (me == a->odd_rank) { /* a reduce of the same blocks */
		c.coll = TC_COLL_REDUCE;
		c.op = TC_OP_SUM;
	}
	size_t sb = ct_sbytes(&c, p, me), rb = ct_rbytes(&c, p, me);
	unsigned char *s = calloc(1, sb + 64), *r = calloc(1, rb + 64);
	a->rc[me] = ct_call(proc, &c, s, r);
	if (!a->rc[me])
		a->rc[me] = tc_barrier(proc, NULL); /* a late report comes here */
	free(s);
	free(r);
	return 0;
}

/* Runs the case on spec under exec with rank odd skipping (how); asserts
 * that nobody hung and somebody saw it. */
static void sk_case(const char *spec, enum tc_exec exec, const struct ct_case *c, int odd, int how)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec; /* no timeout_ms: the probe, not a timeout, ends it */
	cfg.exec = exec;
	struct tc_team *team;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	const int p = tc_team_size(team);
	struct sk_arg *a = calloc(1, sizeof *a);
	a->c = *c;
	a->odd_rank = odd;
	a->how = how;
	const char *what = tc_coll_name(c->coll);
	const char *ex = exec == TC_EXEC_FIBRES ? "fibres" : "threads";
	cr_assert(!guarded_run(team, sk_fn, a, 20),
	          "%s %s %zu B, rank %d %s (%s): hung (aborted by the test's guard)", spec, what,
	          c->count * tc_dtype_size(c->dt), odd,
	          how == SK_RETURN    ? "returns"
	          : how == SK_BARRIER ? "calls barrier"
	                              : "reduces",
	          ex);
	int mism = 0;
	for (int r = 0; r < p; r++) {
		cr_assert(a->rc[r] == 0 || a->rc[r] == TC_EMISMATCH || a->rc[r] == TC_EABORTED,
		          "%s %s rank %d (odd %d, %s): %s", spec, what, r, odd, ex,
		          tc_err_name(a->rc[r]));
		mism += a->rc[r] == TC_EMISMATCH;
	}
	cr_assert_gt(mism, 0, "%s %s odd %d how %d (%s): nobody saw it", spec, what, odd, how, ex);
	free(a);
	tc_team_destroy(team);
}

static const enum tc_exec sk_execs[] = {TC_EXEC_THREADS, TC_EXEC_FIBRES};

/* complete:2, rank 1 returns at once (or calls a barrier), rank 0
 * broadcasts 1016 B (streamed) or 1 KiB and more (single copy). */
Test(mismatch, skipped_large_bcast_pair, .timeout = 300)
{
	static const size_t sizes[] = {1016, 1024, 2400, 65536};
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
			for (int how = SK_RETURN; how <= SK_BARRIER; how++) {
				struct ct_case c = {.coll = TC_COLL_BCAST,
				                    .count = sizes[i],
				                    .dt = TC_UINT8,
				                    .seed = 3};
				sk_case("complete:2", sk_execs[e], &c, 1, how);
			}
}

/* A bcast on every rank but one, a reduce of the same 1200-byte blocks on
 * the last, on complete graphs of 10 and more. */
Test(mismatch, bcast_against_reduce, .timeout = 300)
{
	static const char *const specs[] = {"complete:10", "complete:12", "complete:16"};
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
			struct ct_case c = {.coll = TC_COLL_BCAST, .count = 1200, .dt = TC_UINT8, .seed = 3};
			int p = atoi(strchr(specs[i], ':') + 1);
			sk_case(specs[i], sk_execs[e], &c, p - 1, SK_REDUCE);
		}
}

/* A skipped bcast, scan, exscan or scatter of 2400-byte blocks, every rank
 * in turn the one that skips, on complete:4, ring:5 and hypercube:3. */
Test(mismatch, skipped_large_calls, .timeout = 600)
{
	static const char *const specs[] = {"complete:4", "ring:5", "hypercube:3"};
	static const enum tc_coll colls[] = {TC_COLL_BCAST, TC_COLL_SCAN, TC_COLL_EXSCAN, TC_COLL_SCATTER};
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
			for (size_t k = 0; k < sizeof colls / sizeof *colls; k++) {
				struct ct_case c = {.coll = colls[k],
				                    .count = 2400,
				                    .dt = TC_UINT8,
				                    .op = TC_OP_SUM,
				                    .seed = 3};
				int p = specs[i][0] == 'r' ? 5 : specs[i][0] == 'h' ? 8 : 4;
				for (int odd = 0; odd < p; odd++)
					sk_case(specs[i], sk_execs[e], &c, odd,
					        odd % 2 ? SK_BARRIER : SK_RETURN);
			}
}

/*
 * A collective's blocking form against its request forms (topocoll/coll.h:
 * every rank makes a collective in the same form): the even ranks call
 * the blocking allreduce or barrier, the odd ranks its nonblocking form
 * and wait.  Natively, the machine's own algorithms run the two forms
 * differently (a request that one round of flags does not complete runs
 * its schedule over the channels), and unmatched they waited on each other
 * for good.  Every rank fails instead, none hangs (no team timeout: the
 * guard turns a hang into a failure), somebody reports TC_EMISMATCH saying
 * that the forms differ, and the next run succeeds.  The nonblocking and
 * persistent forms match each other.
 */
struct form_case {
	const char *spec, *alg;
	enum tc_coll coll;
	size_t count;
};

struct form_arg {
	const struct form_case *c;
	int persistent; /* the odd ranks: tc_allreduce_init + tc_start, the even tc_iallreduce */
	int rc[64];
	char why[64][200];
	int64_t sum[64];
};

static int form_fn(struct tc_proc *proc, void *argp)
{
	struct form_arg *a = argp;
	const int me = tc_rank(proc);
	const struct tc_coll_opts o = {.alg = a->c->alg};
	const size_t n = a->c->count;
	int64_t *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
	for (size_t i = 0; i < n; i++)
		s[i] = me + 1, r[i] = -1;
	tc_request q;
	int err;
	if (a->c->coll == TC_COLL_BARRIER)
		err = me % 2 ? tc_ibarrier(proc, &o, &q) : tc_barrier(proc, &o);
	else if (a->persistent)
		err = me % 2 ? tc_allreduce_init(proc, s, r, n, TC_INT64, TC_OP_SUM, &o, &q)
		             : tc_iallreduce(proc, s, r, n, TC_INT64, TC_OP_SUM, &o, &q);
	else
		err = me % 2 ? tc_iallreduce(proc, s, r, n, TC_INT64, TC_OP_SUM, &o, &q)
		             : tc_allreduce(proc, s, r, n, TC_INT64, TC_OP_SUM, &o);
	if (!err && me % 2 && a->persistent)
		err = tc_start(proc, &q);
	if (!err && (me % 2 || a->persistent))
		err = tc_wait(proc, &q, NULL);
	a->rc[me] = err;
	a->sum[me] = r[n - 1];
	snprintf(a->why[me], sizeof a->why[me], "%s", tc_error_detail());
	if (me % 2 && a->persistent)
		tc_request_free(proc, &q);
	free(s);
	free(r);
	return 0;
}

Test(mismatch, blocking_against_request_forms, .timeout = 300)
{
	static const struct form_case cases[] = {
	        {"complete:2", "shm_flag", TC_COLL_ALLREDUCE, 1000}, /* request over the channels */
	        {"complete:2", "shm_flag", TC_COLL_ALLREDUCE, 1},    /* request on the flags */
	        {"complete:4", "shm", TC_COLL_ALLREDUCE, 4},
	        {"complete:4", "shm", TC_COLL_BARRIER, 0},
	        {"ring:4", "ring", TC_COLL_ALLREDUCE, 64}, /* both over the channels */
	        {"ring:6", NULL, TC_COLL_BARRIER, 0},
	};
	for (int e = 0; e < 2; e++)
		for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
			const struct form_case *c = &cases[k];
			const char *ex = e ? "fibres" : "threads";
			struct tc_team_config cfg;
			tc_team_config_default(&cfg);
			cfg.topology = c->spec; /* no timeout_ms: detection, not a timeout */
			cfg.exec = sk_execs[e];
			struct tc_team *team;
			cr_assert_eq(tc_team_create(&cfg, &team), 0);
			const int p = tc_team_size(team);
			struct form_arg *a = calloc(1, sizeof *a);
			a->c = c;
			cr_assert(!guarded_run(team, form_fn, a, 20), "%s %s %s (%s): hung",
			          c->spec, tc_coll_name(c->coll), c->alg ? c->alg : "auto", ex);
			int said = 0;
			for (int r = 0; r < p; r++) {
				cr_assert(a->rc[r] == TC_EMISMATCH || a->rc[r] == TC_EABORTED,
				          "%s %s (%s) rank %d: %s", c->spec, tc_coll_name(c->coll),
				          ex, r, tc_err_name(a->rc[r]));
				said += a->rc[r] == TC_EMISMATCH &&
				        strstr(a->why[r], "in the other form");
			}
			cr_assert_gt(said, 0, "%s %s (%s): no TC_EMISMATCH saying the forms differ (%s)",
			             c->spec, tc_coll_name(c->coll), ex, a->why[0]);
			/* The next run, every rank in the two request forms. */
			if (c->coll == TC_COLL_ALLREDUCE) {
				memset(a, 0, sizeof *a);
				a->c = c;
				a->persistent = 1;
				cr_assert(!guarded_run(team, form_fn, a, 20), "%s (%s): hung",
				          c->spec, ex);
				for (int r = 0; r < p; r++)
					cr_assert(a->rc[r] == 0 && a->sum[r] == (int64_t)p * (p + 1) / 2,
					          "%s (%s) rank %d, nonblocking and persistent: %s (%s)",
					          c->spec, ex, r, tc_err_name(a->rc[r]), a->why[r]);
			}
			free(a);
			tc_team_destroy(team);
		}
}
