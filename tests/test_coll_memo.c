/* SPDX-License-Identifier: MIT */
/*
 * The repeated blocking call (lib/coll/coll.c, struct tc__cmemo in
 * lib/coll/cache.h): a rank that makes the same call again skips its checks
 * and its schedule lookup.  What must not change with it:
 *   1. an entry the cache evicted in between (by nonblocking calls, which
 *      do not pass through the memo) is not run again;
 *   2. the algorithm's name is compared by its text, not its pointer;
 *   3. bad arguments after repeated good calls still get their codes, and a
 *      datatype of the same size changes the result and the call's tag;
 *   4. mismatch detection after repeated calls still reports another call;
 *   5. calls that alternate (a barrier before each broadcast, as benchmarks
 *      time them), each kept in a memo of its own, still see a change of
 *      root or buffer, bad arguments, and an eviction of either entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"

#define P 4

static struct tc_team *memo_team(int timeout_ms)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:4";
	cfg.timeout_ms = timeout_ms;
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	return team;
}

struct memo_res {
	int bad[P];
};

/* Sums of (rank + 1) * (i + 1) + k over the ranks. */
static int64_t memo_sum(int i, int k)
{
	return (int64_t)(P * (P + 1) / 2) * (i + 1) + (int64_t)P * k;
}

static int evicted_rank(struct tc_proc *proc, void *argp)
{
	struct memo_res *res = argp;
	const int me = tc_rank(proc);
	int64_t in[16], out[16];
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 16; i++)
			in[i] = (int64_t)(me + 1) * (i + 1) + k;
		/* Nonblocking calls of other sizes in between evict the
		 * blocking call's entry from the rank's cache. */
		for (int n = 5; k == 1 && n < 16; n++) {
			tc_request r;
			int64_t tmp[16];
			if (tc_iallreduce(proc, in, tmp, (size_t)n, TC_INT64, TC_OP_SUM, NULL, &r) ||
			    tc_wait(proc, &r, NULL))
				res->bad[me] = 1;
		}
		memset(out, 0, sizeof out);
		if (tc_allreduce(proc, in, out, 4, TC_INT64, TC_OP_SUM, NULL))
			res->bad[me] = 1;
		for (int i = 0; i < 16; i++)
			if (out[i] != (i < 4 ? memo_sum(i, k) : 0))
				res->bad[me] = 1;
	}
	return 0;
}

Test(memo, evicted_entry, .timeout = 120)
{
	struct tc_team *team = memo_team(10000);
	struct memo_res res = {{0}};
	cr_assert_eq(tc_run(team, evicted_rank, &res), 0);
	for (int r = 0; r < P; r++)
		cr_assert_eq(res.bad[r], 0, "rank %d", r);
	tc_team_destroy(team);
}

static int alg_text_rank(struct tc_proc *proc, void *argp)
{
	struct memo_res *res = argp;
	const int me = tc_rank(proc);
	char name[32] = "linear";
	struct tc_coll_opts opts = {.alg = name};
	const char *want[] = {"linear", "linear", "binomial", "binomial"};
	for (int k = 0; k < 4; k++) {
		if (k == 2)
			strcpy(name, "binomial"); /* the same pointer, another name */
		double buf[8];
		for (int i = 0; i < 8; i++)
			buf[i] = me == 0 ? i + 10.0 * k : -1.0;
		if (tc_bcast(proc, buf, 8, TC_DOUBLE, 0, &opts))
			res->bad[me] = 1;
		for (int i = 0; i < 8; i++)
			if (buf[i] != i + 10.0 * k)
				res->bad[me] = 1;
		struct tc_coll_info info;
		tc_last_coll(proc, &info);
		if (!info.algorithm || strcmp(info.algorithm, want[k]))
			res->bad[me] = 2;
	}
	return 0;
}

Test(memo, alg_text, .timeout = 120)
{
	struct tc_team *team = memo_team(10000);
	struct memo_res res = {{0}};
	cr_assert_eq(tc_run(team, alg_text_rank, &res), 0);
	for (int r = 0; r < P; r++)
		cr_assert_eq(res.bad[r], 0, "rank %d", r);
	tc_team_destroy(team);
}

static int checks_rank(struct tc_proc *proc, void *argp)
{
	struct memo_res *res = argp;
	const int me = tc_rank(proc);
	union {
		double d[4];
		int64_t i[4];
	} in, out;
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 4; i++)
			in.d[i] = me + i;
		if (tc_allreduce(proc, &in, &out, 4, TC_DOUBLE, TC_OP_SUM, NULL))
			res->bad[me] = 1;
		for (int i = 0; i < 4; i++)
			if (out.d[i] != 6.0 + 4.0 * i)
				res->bad[me] = 1;
	}
	/* Bad arguments, each this rank's alone and the same on every rank. */
	if (tc_allreduce(proc, &in, &out, 4, TC_DOUBLE, TC_OP_BAND, NULL) != TC_ENOTSUP)
		res->bad[me] = 2;
	if (tc_allreduce(proc, &in, NULL, 4, TC_DOUBLE, TC_OP_SUM, NULL) != TC_ENULLBUF)
		res->bad[me] = 3;
	if (tc_allreduce(proc, &in, &out, SIZE_MAX / 2, TC_DOUBLE, TC_OP_SUM, NULL) != TC_EOVERFLOW)
		res->bad[me] = 4;
	if (tc_bcast(proc, &out, 4, TC_DOUBLE, P, NULL) != TC_EROOT)
		res->bad[me] = 5;
	/* A datatype of the same size, the same buffers. */
	for (int i = 0; i < 4; i++)
		in.i[i] = (int64_t)me << 40 | i;
	if (tc_allreduce(proc, &in, &out, 4, TC_INT64, TC_OP_SUM, NULL))
		res->bad[me] = 6;
	for (int i = 0; i < 4; i++)
		if (out.i[i] != ((int64_t)6 << 40 | 4 * i))
			res->bad[me] = 6;
	return 0;
}

Test(memo, checks_after_hits, .timeout = 120)
{
	struct tc_team *team = memo_team(10000);
	struct memo_res res = {{0}};
	cr_assert_eq(tc_run(team, checks_rank, &res), 0);
	for (int r = 0; r < P; r++)
		cr_assert_eq(res.bad[r], 0, "rank %d", r);
	tc_team_destroy(team);
}

struct memo_mm {
	int rc[P];
	int bad[P];
};

static int mismatch_rank(struct tc_proc *proc, void *argp)
{
	struct memo_mm *m = argp;
	const int me = tc_rank(proc);
	int64_t in = me + 1, out = 0;
	for (int k = 0; k < 3; k++) {
		int rc = tc_allreduce(proc, &in, &out, 1, TC_INT64, TC_OP_SUM, NULL);
		/* Rank 1 may leave the last of these and abort the team in
		 * its next call while a slower rank is still in this one. */
		if (rc == TC_EABORTED && k == 2)
			break;
		if (rc || out != 10)
			m->bad[me] = 1;
	}
	/* Rank 1 makes another call with the same buffers. */
	m->rc[me] = tc_allreduce(proc, &in, &out, 1, TC_INT64, me == 1 ? TC_OP_MAX : TC_OP_SUM, NULL);
	return 0;
}

Test(memo, mismatch_after_hits, .timeout = 120)
{
	struct tc_team *team = memo_team(5000);
	struct memo_mm m = {{0}, {0}};
	tc_run(team, mismatch_rank, &m);
	int mismatched = 0;
	for (int r = 0; r < P; r++) {
		cr_assert_eq(m.bad[r], 0, "rank %d", r);
		cr_assert(m.rc[r] == TC_EMISMATCH || m.rc[r] == TC_EABORTED, "rank %d: %s", r,
		          tc_strerror(m.rc[r]));
		mismatched += m.rc[r] == TC_EMISMATCH;
	}
	cr_assert_gt(mismatched, 0);
	tc_team_destroy(team);
}

/* Barrier and broadcast in turn, both kept: the broadcast's root and
 * buffer change between rounds, a bad root between good calls gets its
 * code, nonblocking calls evict both entries in between, and a third
 * collective in the loop displaces neither result. */
static int alternate_rank(struct tc_proc *proc, void *argp)
{
	struct memo_res *res = argp;
	const int me = tc_rank(proc);
	int64_t a[4], b[4], in = me + 1, out = 0;
	for (int k = 0; k < 12; k++) {
		const int root = k / 3 % P; /* the same root three times, then the next */
		int64_t *buf = k % 2 ? a : b;
		if (tc_barrier(proc, NULL))
			res->bad[me] = 1;
		for (int i = 0; i < 4; i++)
			buf[i] = me == root ? 100 * k + i : -1;
		if (tc_bcast(proc, buf, 4, TC_INT64, root, NULL))
			res->bad[me] = 2;
		for (int i = 0; i < 4; i++)
			if (buf[i] != 100 * k + i)
				res->bad[me] = 3;
		if (k == 4 && tc_bcast(proc, buf, 4, TC_INT64, P, NULL) != TC_EROOT)
			res->bad[me] = 4;
		if (k == 7) {
			/* Nonblocking calls of other sizes evict both entries. */
			for (int n = 5; n < 16; n++) {
				tc_request r;
				int64_t s[16] = {0}, t[16];
				if (tc_iallreduce(proc, s, t, (size_t)n, TC_INT64, TC_OP_SUM, NULL, &r) ||
				    tc_wait(proc, &r, NULL))
					res->bad[me] = 5;
			}
		}
		if (k == 9) {
			out = 0;
			if (tc_allreduce(proc, &in, &out, 1, TC_INT64, TC_OP_SUM, NULL) || out != 10)
				res->bad[me] = 6;
		}
	}
	return 0;
}

Test(memo, alternating_calls, .timeout = 120)
{
	struct tc_team *team = memo_team(10000);
	struct memo_res res = {{0}};
	cr_assert_eq(tc_run(team, alternate_rank, &res), 0);
	for (int r = 0; r < P; r++)
		cr_assert_eq(res.bad[r], 0, "rank %d: step %d", r, res.bad[r]);
	tc_team_destroy(team);
}
