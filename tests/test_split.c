/* SPDX-License-Identifier: MIT */
/*
 * tests/test_split.c - sub-teams (topocoll/team.h, "Sub-teams"): splits by
 * colour with keys that reorder ranks, TC_UNDEFINED, the topology each
 * kind induces, nested splits, tc_team_dup, rows and columns of a torus
 * interleaved against a sequential reference with mismatch detection on,
 * sub-teams across runs, aborts, requests given with another team's proc,
 * and splits the ranks disagree on (a clear error, never a hang).  Threads
 * and fibres.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

static const enum tc_exec execs[] = {TC_EXEC_THREADS, TC_EXEC_FIBRES};
static const char *const exec_names[] = {"threads", "fibres"};

static struct tc_team *make(const char *spec, enum tc_exec exec, uint64_t timeout_ms)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	cfg.timeout_ms = timeout_ms;
	struct tc_team *t = NULL;
	int err = tc_team_create(&cfg, &t);
	cr_assert_eq(err, 0, "%s: %s (%s)", spec, tc_strerror(err), tc_error_detail());
	return t;
}

/* What each rank saw, checked on the main thread. */
struct seen {
	int rc[64];
	int bad[64];
	char why[64][160];
	char spec[64][32];
};

static void note(struct seen *s, int me, const char *fmt, int a, int b)
{
	s->bad[me] = 1;
	snprintf(s->why[me], sizeof s->why[me], fmt, a, b);
}

static void check_seen(const struct seen *s, int p, const char *what)
{
	for (int r = 0; r < p; r++) {
		cr_assert_eq(s->rc[r], 0, "%s: rank %d: %s", what, r, tc_strerror(s->rc[r]));
		cr_assert(!s->bad[r], "%s: rank %d: %s", what, r, s->why[r]);
	}
}

static void sub_spec(struct tc_proc *sub, char *buf, size_t len)
{
	tc_topo_spec(tc_team_topo(tc_proc_team(sub)), buf, len);
}

/* ---- colour and key -------------------------------------------------- */

/* colour rank % 3, key -rank: each sub-team's ranks in reverse order;
 * every third rank stays out (colour TC_UNDEFINED for rank % 4 == 3). */
static int colour_fn(struct tc_proc *proc, void *argp)
{
	struct seen *s = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	const int colour = me % 4 == 3 ? TC_UNDEFINED : me % 3;
	struct tc_proc *sub = (struct tc_proc *)1;
	int err = tc_team_split(proc, colour, -me, NULL, &sub);
	if (err)
		return err;
	if (colour == TC_UNDEFINED) {
		if (sub)
			note(s, me, "TC_UNDEFINED gave a proc (%d %d)", 0, 0);
		int all[64];
		err = tc_allgather(proc, &me, all, 1, TC_INT32, NULL);
		return err ? err : tc_barrier(proc, NULL);
	}
	/* The members, in key order: descending parent rank. */
	int members[64], k = 0;
	for (int r = p - 1; r >= 0; r--)
		if (r % 4 != 3 && r % 3 == colour)
			members[k++] = r;
	if (tc_size(sub) != k)
		return note(s, me, "size %d, expected %d", tc_size(sub), k), 0;
	const int sr = tc_rank(sub);
	if (members[sr] != me || tc_team_parent_rank(tc_proc_team(sub), sr) != me)
		return note(s, me, "sub-rank %d is not parent rank %d", sr, me), 0;
	if (tc_team_parent(tc_proc_team(sub)) != tc_proc_team(proc))
		return note(s, me, "parent is not the team (%d %d)", 0, 0), 0;
	/* An allgather of parent ranks on the sub-team, then one on the team:
	 * each its own context. */
	int got[64], all[64];
	err = tc_allgather(sub, &me, got, 1, TC_INT32, NULL);
	if (!err)
		err = tc_allgather(proc, &me, all, 1, TC_INT32, NULL);
	if (err)
		return err;
	for (int i = 0; i < k; i++)
		if (got[i] != members[i])
			return note(s, me, "sub allgather[%d] = %d", i, got[i]), 0;
	for (int i = 0; i < p; i++)
		if (all[i] != i)
			return note(s, me, "team allgather[%d] = %d", i, all[i]), 0;
	err = tc_team_free(sub);
	if (!err)
		err = tc_barrier(proc, NULL);
	return err;
}

static int rc_fn_wrap(struct tc_proc *proc, void *argp, int (*fn)(struct tc_proc *, void *))
{
	struct seen *s = argp;
	int err = fn(proc, argp);
	s->rc[tc_rank(proc)] = err;
	return err;
}

static int colour_run(struct tc_proc *proc, void *a)
{
	return rc_fn_wrap(proc, a, colour_fn);
}

Test(split, colour_key_reorders, .timeout = 300)
{
	const char *specs[] = {"complete:13", "ring:16", "hypercube:4", "torus:4x4", "star:7"};
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
			struct tc_team *t = make(specs[i], execs[e], 60000);
			struct seen s = {0};
			int err = tc_run(t, colour_run, &s);
			char what[64];
			snprintf(what, sizeof what, "%s on %s", specs[i], exec_names[e]);
			cr_assert_eq(err, 0, "%s: %s (%s)", what, tc_strerror(err), tc_error_detail());
			check_seen(&s, tc_team_size(t), what);
			tc_team_destroy(t);
		}
}

/* ---- the topology each kind induces ---------------------------------- */

struct induce_arg {
	struct seen s;
	int keep;          /* > 0: tc_team_split_dims(keep); 0: colour = rank < p/2 */
	const char *want0; /* the spec the sub-team of rank 0 gets */
	const char *want1; /* ... of the last rank */
};

static int induce_fn(struct tc_proc *proc, void *argp)
{
	struct induce_arg *a = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	struct tc_proc *sub;
	int err = a->keep ? tc_team_split_dims(proc, (unsigned)a->keep, &sub)
	                  : tc_team_split(proc, me < p / 2, me, NULL, &sub);
	if (err)
		return err;
	sub_spec(sub, a->s.spec[me], sizeof a->s.spec[me]);
	/* The sub-team works: an allreduce of parent ranks and a bcast from
	 * its last rank. */
	const int k = tc_size(sub);
	long sum = 0, want = 0, v = me;
	for (int i = 0; i < k; i++)
		want += tc_team_parent_rank(tc_proc_team(sub), i);
	err = tc_allreduce(sub, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL);
	if (err)
		return err;
	if (sum != want)
		return note(&a->s, me, "allreduce %d, expected %d", (int)sum, (int)want), 0;
	int b = tc_rank(sub) == k - 1 ? me : -1;
	err = tc_bcast(sub, &b, 1, TC_INT32, k - 1, NULL);
	if (err)
		return err;
	if (b != tc_team_parent_rank(tc_proc_team(sub), k - 1))
		return note(&a->s, me, "bcast %d at sub-rank %d", b, tc_rank(sub)), 0;
	return tc_barrier(proc, NULL);
}

static int induce_run(struct tc_proc *proc, void *a)
{
	return rc_fn_wrap(proc, a, induce_fn);
}

Test(split, every_kind_induces, .timeout = 300)
{
	struct {
		const char *spec;
		int keep;
		const char *want0, *want1;
	} cases[] = {
	        {"complete:8", 0, "complete:4", "complete:4"},
	        {"ring:8", 0, "chain:4", "chain:4"},
	        {"chain:6", 0, "chain:3", "chain:3"},
	        {"hypercube:3", 0, "hypercube:2", "hypercube:2"},
	        {"hypercube:4", 5, "hypercube:2", "hypercube:2"},
	        {"hypercube:4", 8, "complete:2", "complete:2"},
	        {"mesh:3x4", 2, "chain:4", "chain:4"},
	        {"mesh:3x4", 1, "chain:3", "chain:3"},
	        {"torus:3x4", 2, "ring:4", "ring:4"},
	        {"torus:3x4", 1, "complete:3", "complete:3"}, /* a ring of 3 */
	        {"torus:3x4x5", 6, "torus:4x5", "torus:4x5"},
	        {"mesh:2x3x4", 5, "mesh:2x4", "mesh:2x4"},
	        /* Half of a star: the hub's half is a star, the other half has no
		 * link of the parent's (a general subset). */
	        {"star:8", 0, "star:4", "complete:4"},
	        {"tree:2:6", 0, "star:3", "complete:3"},
	};
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
			struct tc_team *t = make(cases[i].spec, execs[e], 60000);
			struct induce_arg a = {.keep = cases[i].keep};
			int err = tc_run(t, induce_run, &a);
			char what[96];
			snprintf(what, sizeof what, "%s keep %d on %s", cases[i].spec,
			         cases[i].keep, exec_names[e]);
			cr_assert_eq(err, 0, "%s: %s (%s)", what, tc_strerror(err), tc_error_detail());
			check_seen(&a.s, tc_team_size(t), what);
			const int p = tc_team_size(t);
			cr_assert_str_eq(a.s.spec[0], cases[i].want0, "%s: rank 0's sub-team", what);
			cr_assert_str_eq(a.s.spec[p - 1], cases[i].want1, "%s: rank %d's sub-team",
			                 what, p - 1);
			tc_team_destroy(t);
		}
}

/* ---- rows and columns of torus:8x8, interleaved ---------------------- */

enum { RC_N = 37, RC_ITERS = 24 };

/* Rank r's contribution in iteration it. */
static int64_t rc_val(int it, int r, int i)
{
	return (int64_t)(it + 1) * 1000003 + (int64_t)r * 7919 + i * 31;
}

/*
 * Each iteration: every row broadcasts its rank (it % 8)'s vector along
 * the row (a ring), then every column reduces (sum) what its ranks got to
 * its rank ((it + 3) % 8), then, every third iteration, the whole team
 * allreduces: three teams' collectives interleaved, mismatch detection on.
 * The sequential reference: rank (row, col) holds after the bcast the
 * vector of (row, it % 8); the root of column col gets the sum over the
 * rows of those.
 */
static int rowcol_fn(struct tc_proc *proc, void *argp)
{
	struct seen *s = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	const struct tc_topo *t = tc_team_topo(tc_proc_team(proc));
	int dims[2];
	tc_topo_dims(t, dims);
	const int rows = dims[0], cols = dims[1];
	const int row = me / cols, col = me % cols;
	struct tc_proc *rp, *cp;
	int err = tc_team_split_dims(proc, 2, &rp);
	if (!err)
		err = tc_team_split_dims(proc, 1, &cp);
	if (err)
		return err;
	sub_spec(rp, s->spec[me], sizeof s->spec[me]);
	if (tc_rank(rp) != col || tc_rank(cp) != row || tc_size(rp) != cols || tc_size(cp) != rows)
		return note(s, me, "row rank %d, column rank %d", tc_rank(rp), tc_rank(cp)), 0;
	int64_t buf[RC_N], red[RC_N];
	for (int it = 0; it < RC_ITERS && !err; it++) {
		const int broot = it % cols, rroot = (it + 3) % rows;
		for (int i = 0; i < RC_N; i++)
			buf[i] = col == broot ? rc_val(it, me, i) : -1;
		err = tc_bcast(rp, buf, RC_N, TC_INT64, broot, NULL);
		if (err)
			break;
		for (int i = 0; i < RC_N; i++)
			if (buf[i] != rc_val(it, row * cols + broot, i))
				return note(s, me, "iteration %d: row bcast element %d", it, i), 0;
		err = tc_reduce(cp, buf, red, RC_N, TC_INT64, TC_OP_SUM, rroot, NULL);
		if (err)
			break;
		if (row == rroot)
			for (int i = 0; i < RC_N; i++) {
				int64_t want = 0;
				for (int r = 0; r < rows; r++)
					want += rc_val(it, r * cols + broot, i);
				if (red[i] != want)
					return note(s, me, "iteration %d: column reduce element %d",
					            it, i),
					       0;
			}
		if (it % 3 == 2) {
			int64_t v = me, sum = 0;
			err = tc_allreduce(proc, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL);
			if (!err && sum != (int64_t)p * (p - 1) / 2)
				return note(s, me, "iteration %d: team allreduce %d", it, (int)sum), 0;
		}
	}
	/* The rank's one clock went forward through all three teams. */
	if (!err && (tc_clock(rp) != tc_clock(proc) || tc_clock(proc) <= 0))
		return note(s, me, "clocks: row proc %d, rank %d", (int)(tc_clock(rp) / 1000),
		            (int)(tc_clock(proc) / 1000)),
		       0;
	if (!err)
		err = tc_team_free(rp);
	if (!err)
		err = tc_team_free(cp);
	return err;
}

static int rowcol_run(struct tc_proc *proc, void *a)
{
	return rc_fn_wrap(proc, a, rowcol_fn);
}

Test(split, torus_rows_and_columns_interleaved, .timeout = 600)
{
	const char *specs[] = {"torus:8x8", "torus:3x5", "mesh:4x6"};
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
			struct tc_team *t = make(specs[i], execs[e], 120000);
			struct seen s = {0};
			int err = tc_run(t, rowcol_run, &s);
			char what[64];
			snprintf(what, sizeof what, "%s on %s", specs[i], exec_names[e]);
			cr_assert_eq(err, 0, "%s: %s (%s)", what, tc_strerror(err), tc_error_detail());
			check_seen(&s, tc_team_size(t), what);
			if (i == 0)
				cr_assert_str_eq(s.spec[0], "ring:8", "%s: a row", what);
			tc_team_destroy(t);
		}
}

/* ---- nested splits, dup ---------------------------------------------- */

static int nested_fn(struct tc_proc *proc, void *argp)
{
	struct seen *s = argp;
	const int me = tc_rank(proc);
	struct tc_proc *cube, *half, *dup;
	/* hypercube:4: sub-cubes of bits 0, 1 (4 ranks), their halves (2). */
	int err = tc_team_split_dims(proc, 3, &cube);
	if (!err)
		err = tc_team_split(cube, tc_rank(cube) / 2, 0, NULL, &half);
	if (!err)
		err = tc_team_dup(half, &dup);
	if (err)
		return err;
	char a[32], b[32], c[32];
	sub_spec(cube, a, sizeof a);
	sub_spec(half, b, sizeof b);
	sub_spec(dup, c, sizeof c);
	if (strcmp(a, "hypercube:2") || strcmp(b, "complete:2") || strcmp(c, b))
		return note(s, me, "topologies %d %d", 0, 0), 0;
	if (tc_team_parent_rank(tc_proc_team(half), tc_rank(half)) != tc_rank(cube) ||
	    tc_team_parent(tc_proc_team(dup)) != tc_proc_team(half) || tc_rank(dup) != tc_rank(half))
		return note(s, me, "ranks: half %d, dup %d", tc_rank(half), tc_rank(dup)), 0;
	/* Four levels' allreduces, interleaved, each of its own ranks. */
	for (int it = 0; it < 10 && !err; it++) {
		struct tc_proc *order[4] = {proc, cube, half, dup};
		for (int j = 0; j < 4 && !err; j++) {
			struct tc_proc *q = order[(it + j) % 4];
			int64_t v = me + it, sum = 0, want = 0;
			for (int r = 0; r < tc_size(q); r++) {
				/* The root rank of q's sub-rank r. */
				const struct tc_team *tt = tc_proc_team(q);
				int x = r;
				for (; tc_team_parent(tt); tt = tc_team_parent(tt))
					x = tc_team_parent_rank(tt, x);
				want += x + it;
			}
			err = tc_allreduce(q, &v, &sum, 1, TC_INT64, TC_OP_SUM, NULL);
			if (!err && sum != want)
				return note(s, me, "iteration %d: level %d", it, (it + j) % 4), 0;
		}
	}
	/* The cube freed first: its halves and their dups go with it. */
	if (!err)
		err = tc_team_free(dup);
	if (!err)
		err = tc_team_free(cube);
	return err;
}

static int nested_run(struct tc_proc *proc, void *a)
{
	return rc_fn_wrap(proc, a, nested_fn);
}

Test(split, nested_and_dup, .timeout = 300)
{
	for (int e = 0; e < 2; e++) {
		struct tc_team *t = make("hypercube:4", execs[e], 60000);
		struct seen s = {0};
		int err = tc_run(t, nested_run, &s);
		cr_assert_eq(err, 0, "%s: %s (%s)", exec_names[e], tc_strerror(err), tc_error_detail());
		check_seen(&s, 16, exec_names[e]);
		tc_team_destroy(t);
	}
}

/* ---- groups made by their members alone -------------------------------- */

/* On ring:8: the even ranks make a group in descending order, twice with
 * one tag (the second call of each joins the second sub-team), while the
 * odd ranks make theirs with the same tag, each at its own pace (rank r
 * sleeps r * 200 us first); a message on the first sub-team is not
 * received on the second, an allgather on each lists the members in the
 * order given; then the errors, the calling rank's alone. */
static int group_fn(struct tc_proc *proc, void *argp)
{
	struct seen *s = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	int members[32], n = 0;
	for (int r = p - 1; r >= 0; r--)
		if (r % 2 == me % 2)
			members[n++] = r;
	nanosleep(&(struct timespec){0, (long)me * 200000}, NULL);
	struct tc_proc *a = NULL, *b = NULL;
	int err = tc_team_create_group(proc, members, n, 7, &a);
	if (!err)
		err = tc_team_create_group(proc, members, n, 7, &b);
	if (err)
		return err;
	if (a == b || tc_proc_team(a) == tc_proc_team(b))
		return note(s, me, "two calls joined one sub-team (%d %d)", 0, 0), 0;
	if (tc_size(a) != n || members[tc_rank(a)] != me || tc_rank(b) != tc_rank(a))
		return note(s, me, "sub-rank %d of %d", tc_rank(a), tc_size(a)), 0;
	if (tc_team_parent(tc_proc_team(a)) != tc_proc_team(proc))
		return note(s, me, "the parent is not the team (%d %d)", 0, 0), 0;
	/* Sub-rank 0 sends on a; everyone's allgather on b comes first. */
	int got[32], v = -1, flag = 0;
	if (tc_rank(a) == 0 && n > 1)
		err = tc_send_tag(a, 1, 3, &me, sizeof me);
	if (!err)
		err = tc_allgather(b, &me, got, 1, TC_INT32, NULL);
	for (int i = 0; !err && i < n; i++)
		if (got[i] != members[i])
			return note(s, me, "allgather on the group: [%d] = %d", i, got[i]), 0;
	if (!err && tc_rank(b) == 1)
		err = tc_iprobe(b, TC_ANY_SOURCE, TC_ANY_TAG, &flag, NULL);
	if (!err && flag)
		return note(s, me, "the second sub-team holds the first one's message (%d %d)", 0, 0), 0;
	if (!err && tc_rank(a) == 1)
		err = tc_recv_tag(a, 0, 3, &v, sizeof v, NULL);
	if (!err && tc_rank(a) == 1 && v != members[0])
		return note(s, me, "received %d on the group, sent %d", v, members[0]), 0;
	if (!err)
		err = tc_team_free(b);
	if (!err)
		err = tc_team_free(a);
	if (err)
		return err;
	/* Errors. */
	struct tc_proc *x = (struct tc_proc *)1;
	const int other = (me + 1) % p, twice[2] = {me, me}, out_of[2] = {me, p};
	const int none[1] = {other};
	if (tc_team_create_group(proc, none, 1, 0, &x) != TC_EINVAL || x != NULL ||
	    !strstr(tc_error_detail(), "not among"))
		return note(s, me, "a group without the caller: %d '%d'", 0, 0), 0;
	if (tc_team_create_group(proc, twice, 2, 0, &x) != TC_EINVAL ||
	    !strstr(tc_error_detail(), "twice"))
		return note(s, me, "a rank twice (%d %d)", 0, 0), 0;
	if (tc_team_create_group(proc, out_of, 2, 0, &x) != TC_ERANK)
		return note(s, me, "rank %d out of range (%d)", p, 0), 0;
	if (tc_team_create_group(proc, members, 0, 0, &x) != TC_EINVAL ||
	    tc_team_create_group(proc, members, n, -1, &x) != TC_EINVAL ||
	    tc_team_create_group(proc, NULL, 1, 0, &x) != TC_EINVAL ||
	    tc_team_create_group(proc, members, n, 0, NULL) != TC_EINVAL)
		return note(s, me, "no members, a negative tag, NULL (%d %d)", 0, 0), 0;
	/* A group of the caller alone needs nobody. */
	const int alone[1] = {me};
	if ((err = tc_team_create_group(proc, alone, 1, 0, &x)) != 0)
		return err;
	if (tc_size(x) != 1 || tc_rank(x) != 0)
		return note(s, me, "a group of one: size %d rank %d", tc_size(x), tc_rank(x)), 0;
	err = tc_barrier(x, NULL);
	return err ? err : tc_team_free(x);
}

static int group_run(struct tc_proc *proc, void *a)
{
	return rc_fn_wrap(proc, a, group_fn);
}

Test(split, groups_made_by_their_members, .timeout = 300)
{
	for (int e = 0; e < 2; e++) {
		struct tc_team *t = make("ring:8", execs[e], 60000);
		for (int run = 0; run < 2; run++) {
			struct seen s = {0};
			int err = tc_run(t, group_run, &s);
			cr_assert_eq(err, 0, "%s: %s (%s)", exec_names[e], tc_strerror(err),
			             tc_error_detail());
			check_seen(&s, 8, exec_names[e]);
		}
		tc_team_destroy(t);
	}
}

/* ---- across runs; named topologies ----------------------------------- */

struct runs_arg {
	struct seen s;
	struct tc_proc *sub[64];
	int run;
};

static int runs_fn(struct tc_proc *proc, void *argp)
{
	struct runs_arg *a = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	int err = 0;
	if (a->run == 0) {
		/* Every rank: a ring in reverse order, named. */
		err = tc_team_split(proc, 0, p - me, "ring", &a->sub[me]);
		if (err)
			return err;
		sub_spec(a->sub[me], a->s.spec[me], sizeof a->s.spec[me]);
	}
	struct tc_proc *sub = a->sub[me];
	int x = tc_rank(sub) == 0 ? 1000 + a->run : -1;
	err = tc_bcast(sub, &x, 1, TC_INT32, 0, NULL);
	if (!err && x != 1000 + a->run)
		note(&a->s, me, "run %d: bcast %d", a->run, x);
	/* A message on the sub-team's ring, left and right. */
	if (!err && p > 1) {
		const int k = tc_size(sub), r = tc_rank(sub);
		int got = -1;
		err = tc_sendrecv(sub, (r + 1) % k, &r, sizeof r, (r + k - 1) % k, &got, sizeof got, NULL);
		if (!err && got != (r + k - 1) % k)
			note(&a->s, me, "sendrecv got %d at %d", got, r);
	}
	return err;
}

static int runs_run(struct tc_proc *proc, void *a)
{
	return rc_fn_wrap(proc, a, runs_fn);
}

Test(split, across_runs_named_topology, .timeout = 300)
{
	for (int e = 0; e < 2; e++) {
		struct tc_team *t = make("complete:6", execs[e], 60000);
		struct runs_arg a = {0};
		struct tc_team_info before, after;
		tc_team_get_info(t, &before);
		for (a.run = 0; a.run < 3; a.run++) {
			int err = tc_run(t, runs_run, &a);
			cr_assert_eq(err, 0, "%s run %d: %s (%s)", exec_names[e], a.run,
			             tc_strerror(err), tc_error_detail());
			check_seen(&a.s, 6, exec_names[e]);
		}
		cr_assert_str_eq(a.s.spec[0], "ring:6");
		tc_team_get_info(t, &after);
		cr_assert_gt(after.memory_bytes, before.memory_bytes, "the sub-team's memory");
		struct tc_team *sub = tc_proc_team(a.sub[0]);
		cr_assert_eq(tc_rank(a.sub[0]), 5, "key p - rank puts rank 0 last");
		cr_assert_eq(tc_team_destroy(sub), TC_EINVAL, "a sub-team is not destroyed alone");
		cr_assert_eq(tc_run(sub, runs_run, &a), TC_EINVAL);
		struct tc_proc *x;
		cr_assert_eq(tc_attach(sub, 0, &x), TC_EINVAL);
		cr_assert_eq(tc_team_destroy(t), 0); /* frees the sub-team too */
	}
}

/* ---- requests and their procs ------------------------------------------ */

/* A request is completed, started and freed with the proc that started it:
 * the same rank's proc on another team (a sub-team's, its parent's) gets
 * TC_EINVAL with the detail, and the request is left to its own proc,
 * which completes it with the right result.  A sub-team whose ranks are in
 * reverse order, so that sub-team and parent ranks differ. */
#define OWN_EXPECT(s, me, cond, what)                              \
	do {                                                       \
		if (!(cond) && !(s)->bad[me])                      \
			note(s, me, what " (%d %d)", __LINE__, 0); \
	} while (0)

static int foreign(void)
{
	return strstr(tc_error_detail(), "started with another proc") != NULL;
}

static int own_fn(struct tc_proc *proc, void *argp)
{
	struct seen *s = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	struct tc_proc *sub = NULL;
	int err = tc_team_split(proc, 0, -me, NULL, &sub);
	if (err)
		return err;
	const int sr = tc_rank(sub);
	int64_t v = sr * 10 + 1, got[64], sum = 0, one = 1;
	tc_request q, pq;
	int done = 0;
	/* A nonblocking call on the sub-team, completed with the parent's proc. */
	OWN_EXPECT(s, me, tc_iallgather(sub, &v, got, 1, TC_INT64, NULL, &q) == 0, "iallgather");
	OWN_EXPECT(s, me, tc_wait(proc, &q, NULL) == TC_EINVAL && foreign(), "wait with the parent");
	OWN_EXPECT(s, me, tc_waitall(proc, 1, &q) == TC_EINVAL && foreign(), "waitall with the parent");
	OWN_EXPECT(s, me, tc_test(proc, &q, &done) == TC_EINVAL && foreign(), "test with the parent");
	OWN_EXPECT(s, me, tc_cancel(proc, &q) == TC_EINVAL, "cancel with the parent");
	OWN_EXPECT(s, me, tc_wait(sub, &q, NULL) == 0, "wait with its own proc");
	for (int i = 0; i < p; i++)
		OWN_EXPECT(s, me, got[i] == i * 10 + 1, "the allgather's result");
	/* A persistent one: started, completed and freed with its own. */
	OWN_EXPECT(s, me, tc_allreduce_init(sub, &one, &sum, 1, TC_INT64, TC_OP_SUM, NULL, &q) == 0,
	           "allreduce_init");
	OWN_EXPECT(s, me, tc_start(proc, &q) == TC_EINVAL && foreign(), "start with the parent");
	OWN_EXPECT(s, me, tc_start(sub, &q) == 0, "start with its own proc");
	OWN_EXPECT(s, me, tc_wait(proc, &q, NULL) == TC_EINVAL, "its wait with the parent");
	OWN_EXPECT(s, me, tc_wait(sub, &q, NULL) == 0 && sum == p, "its wait");
	OWN_EXPECT(s, me, tc_request_free(proc, &q) == TC_EINVAL, "free with the parent");
	OWN_EXPECT(s, me, tc_request_free(sub, &q) == 0, "free with its own proc");
	/* Point-to-point on the sub-team, and a parent's request waited for
	 * with the sub-team's proc. */
	const int peer = (sr + 1) % p, from = (sr + p - 1) % p;
	int64_t in = -1;
	OWN_EXPECT(s, me, tc_isend(sub, peer, &v, sizeof v, &pq) == 0, "isend");
	OWN_EXPECT(s, me, tc_recv(sub, from, &in, sizeof in, NULL) == 0, "recv");
	OWN_EXPECT(s, me, tc_wait(proc, &pq, NULL) == TC_EINVAL && foreign(), "send's wait, parent");
	OWN_EXPECT(s, me, tc_wait(sub, &pq, NULL) == 0 && in == from * 10 + 1, "send's wait");
	OWN_EXPECT(s, me, tc_ibarrier(proc, NULL, &q) == 0, "ibarrier on the parent");
	OWN_EXPECT(s, me, tc_wait(sub, &q, NULL) == TC_EINVAL && foreign(), "its wait, sub-team");
	OWN_EXPECT(s, me, tc_wait(proc, &q, NULL) == 0, "its wait");
	return tc_team_free(sub);
}

static int own_run(struct tc_proc *proc, void *a)
{
	return rc_fn_wrap(proc, a, own_fn);
}

Test(split, requests_completed_with_their_own_proc, .timeout = 120)
{
	static const char *const specs[] = {"ring:3", "complete:2", "ring:5"};
	for (int e = 0; e < 2; e++)
		for (int k = 0; k < 3; k++) {
			struct tc_team *t = make(specs[k], execs[e], 60000);
			struct seen s = {0};
			int err = tc_run(t, own_run, &s);
			char what[64];
			snprintf(what, sizeof what, "%s on %s", specs[k], exec_names[e]);
			check_seen(&s, tc_team_size(t), what);
			cr_assert_eq(err, 0, "%s: %s", what, tc_strerror(err));
			tc_team_destroy(t);
		}
}

/* ---- misuse: clear errors, no hang ----------------------------------- */

enum { BAD_OTHER_CALL, BAD_TWICE, BAD_COLOUR, BAD_TOPO_SIZE, BAD_TOPO_DIFFER, BAD_KEEP, BAD_COUNT };
static const char *const bad_names[] = {"another call",      "split twice",
                                        "bad colour",        "topology of another size",
                                        "topologies differ", "keep differs"};

struct bad_arg {
	int kind;
	int rc[64];
	int rc_after[64];
	struct tc_proc *out[64];
};

static int bad_fn(struct tc_proc *proc, void *argp)
{
	struct bad_arg *a = argp;
	const int me = tc_rank(proc);
	struct tc_proc *sub = (struct tc_proc *)1;
	int err = 0;
	switch (a->kind) {
	case BAD_OTHER_CALL:
		err = me == 1 ? tc_barrier(proc, NULL) : tc_team_split(proc, 0, me, NULL, &sub);
		break;
	case BAD_TWICE:
		err = tc_team_split(proc, 0, me, NULL, &sub);
		if (!err && me == 2)
			err = tc_team_split(proc, 0, me, NULL, &sub);
		break;
	case BAD_COLOUR:
		err = tc_team_split(proc, me == 3 ? -5 : 0, me, NULL, &sub);
		break;
	case BAD_TOPO_SIZE:
		err = tc_team_split(proc, me % 2, me, "ring:5", &sub);
		break;
	case BAD_TOPO_DIFFER:
		err = tc_team_split(proc, 0, me, me == 4 ? "ring" : "chain", &sub);
		break;
	case BAD_KEEP:
		err = tc_team_split_dims(proc, me == 0 ? 1 : 2, &sub);
		break;
	}
	a->rc[me] = err;
	a->out[me] = sub;
	/* An argument error is agreed: every rank gets one, and the team
	 * can go on (a rank returning it would abort the others). */
	if (a->kind >= BAD_COLOUR && err && err != TC_EABORTED && err != TC_ETIMEDOUT)
		return tc_barrier(proc, NULL) ? err : TC_EINVAL;
	return err;
}

/* After a failed run, the team runs again. */
static int after_fn(struct tc_proc *proc, void *argp)
{
	struct bad_arg *a = argp;
	struct tc_proc *sub;
	int err = tc_team_split(proc, tc_rank(proc) % 2, 0, NULL, &sub);
	if (!err)
		err = tc_barrier(sub, NULL);
	if (!err)
		err = tc_team_free(sub);
	a->rc_after[tc_rank(proc)] = err;
	return err;
}

Test(split, disagreeing_ranks_fail_clearly, .timeout = 300)
{
	for (int e = 0; e < 2; e++)
		for (int kind = 0; kind < BAD_COUNT; kind++) {
			/* The timeout is a guard: TC_ETIMEDOUT would be a hang. */
			struct tc_team *t =
			        make(kind == BAD_KEEP ? "torus:2x4" : "complete:8", execs[e], 60000);
			struct bad_arg a = {.kind = kind};
			int err = tc_run(t, bad_fn, &a);
			char what[64];
			snprintf(what, sizeof what, "%s on %s", bad_names[kind], exec_names[e]);
			cr_assert_neq(err, 0, "%s: the run succeeded", what);
			int mism = 0;
			for (int r = 0; r < 8; r++) {
				cr_assert_neq(a.rc[r], TC_ETIMEDOUT, "%s: rank %d hung", what, r);
				mism += a.rc[r] == TC_EMISMATCH;
				if (kind >= BAD_COLOUR) {
					/* Argument errors are agreed: every rank fails, none
					 * gets a sub-team. */
					cr_assert_neq(a.rc[r], 0, "%s: rank %d succeeded", what, r);
					cr_assert_null(a.out[r], "%s: rank %d", what, r);
				}
			}
			if (kind == BAD_OTHER_CALL)
				cr_assert_gt(mism, 0, "%s: nobody saw TC_EMISMATCH", what);
			if (kind == BAD_COLOUR)
				cr_assert_eq(a.rc[3], TC_EINVAL, "%s", what);
			if (kind == BAD_TOPO_SIZE || kind == BAD_TOPO_DIFFER || kind == BAD_KEEP)
				for (int r = 0; r < 8; r++)
					cr_assert_eq(a.rc[r], TC_EINVAL, "%s: rank %d: %s", what, r,
					             tc_strerror(a.rc[r]));
			err = tc_run(t, after_fn, &a);
			cr_assert_eq(err, 0, "%s: the next run: %s", what, tc_strerror(err));
			tc_team_destroy(t);
		}
}

/* Every rank of a failed split says why (tc_error_detail): the rank that
 * made its colour's sub-team and failed names the topology and the cause,
 * the others name it; a rank whose own arguments are bad gives its own
 * words, also after the split's exchanges built their schedules (the
 * first call of a team builds them). */
struct why_arg {
	int rc[64];
	char why[64][200];
};

static int why_fn(struct tc_proc *proc, void *argp)
{
	struct why_arg *a = argp;
	const int me = tc_rank(proc);
	struct tc_proc *sub = NULL;
	a->rc[me] = tc_team_split(proc, 0, 0, "hypercube", &sub); /* 6 ranks: no hypercube */
	snprintf(a->why[me], sizeof a->why[me], "%s", tc_error_detail());
	return 0;
}

static int why_dims_fn(struct tc_proc *proc, void *argp)
{
	struct why_arg *a = argp;
	const int me = tc_rank(proc);
	struct tc_proc *sub = NULL;
	a->rc[me] = tc_team_split_dims(proc, me == 2 ? 4 : 1, &sub); /* rank 2's mask: no dim 2 */
	snprintf(a->why[me], sizeof a->why[me], "%s", tc_error_detail());
	return 0;
}

Test(split, failures_say_why_on_every_rank, .timeout = 120)
{
	for (int e = 0; e < 2; e++)
		for (int run = 0; run < 2; run++) {
			struct tc_team *t = make("torus:2x3", execs[e], 60000);
			struct why_arg a = {0};
			cr_assert_eq(tc_run(t, run ? why_dims_fn : why_fn, &a), 0);
			for (int r = 0; r < 6; r++) {
				const char *w = a.why[r];
				cr_assert_neq(a.rc[r], 0, "%s: rank %d succeeded", exec_names[e], r);
				if (!run && r == 0)
					cr_assert(strstr(w, "could not make its sub-team over 'hypercube'") &&
					                  strstr(w, "power of two"),
					          "%s: the maker says: '%s'", exec_names[e], w);
				else if (!run)
					cr_assert(strstr(w, "rank 0 could not make"),
					          "%s: rank %d says: '%s'", exec_names[e], r, w);
				else if (r == 2)
					cr_assert(strstr(w, "keep 0x4"), "%s: rank 2 says: '%s'",
					          exec_names[e], w);
				else
					cr_assert(strstr(w, "rank 2's arguments are bad"),
					          "%s: rank %d says: '%s'", exec_names[e], r, w);
			}
			tc_team_destroy(t);
		}
}

/* A rank that never joins the split: the others time out, and the
 * watchdog's report names it. */
static char wd_report[8192];
static void wd_keep(void *arg, const char *report)
{
	(void)arg;
	snprintf(wd_report, sizeof wd_report, "%s", report);
}

static int absent_fn(struct tc_proc *proc, void *argp)
{
	int *rc = argp;
	const int me = tc_rank(proc);
	if (me == 2) {
		/* Busy in its own code for longer than the timeout (letting the
		 * CPU's other fibres run), then gone without the split. */
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			tc_yield(proc);
			clock_gettime(CLOCK_MONOTONIC, &t1);
		} while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 1500);
		rc[me] = 0;
		return 0;
	}
	struct tc_proc *sub;
	rc[me] = tc_team_split(proc, 0, me, NULL, &sub);
	return rc[me];
}

Test(split, absent_rank_times_out_named, .timeout = 300)
{
	for (int e = 0; e < 2; e++) {
		struct tc_team *t = make("ring:4", execs[e], 300);
		tc_team_set_watchdog(t, wd_keep, NULL);
		wd_report[0] = 0;
		int rc[4] = {0};
		int err = tc_run(t, absent_fn, rc);
		cr_assert_neq(err, 0, "%s", exec_names[e]);
		int timed_out = 0;
		for (int r = 0; r < 4; r++)
			if (r != 2) {
				cr_assert(rc[r] == TC_ETIMEDOUT || rc[r] == TC_EABORTED,
				          "%s: rank %d: %s", exec_names[e], r, tc_strerror(rc[r]));
				timed_out += rc[r] == TC_ETIMEDOUT;
			}
		cr_assert_gt(timed_out, 0, "%s", exec_names[e]);
		cr_assert(strstr(wd_report, "rank 2: not waiting in the library"), "%s: report: %s",
		          exec_names[e], wd_report);
		tc_team_destroy(t);
	}
}

/* A sub-team's rank that returns from its SPMD function without the
 * sub-team's collective: its sub-team peer, waiting in that collective,
 * learns it (the rank is marked returned on every sub-team of the run)
 * and fails with TC_EMISMATCH, long before the team's timeout; the other
 * sub-team's barrier completes. */
static int skip_fn(struct tc_proc *proc, void *argp)
{
	int *rc = argp;
	const int me = tc_rank(proc);
	struct tc_proc *sub;
	int err = tc_team_split(proc, me % 2, me, NULL, &sub);
	if (err || me == 0)
		return rc[me] = err; /* rank 0 skips colour 0's barrier */
	return rc[me] = tc_barrier(sub, NULL);
}

Test(split, skipped_sub_team_call_fails_its_peer, .timeout = 300)
{
	for (int e = 0; e < 2; e++) {
		/* A timeout far beyond the mismatch probe's look (10 ms). */
		struct tc_team *t = make("ring:4", execs[e], 60000);
		int rc[4] = {-1, -1, -1, -1};
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int err = tc_run(t, skip_fn, rc);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		const double s =
		        (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		cr_assert_eq(err, TC_EMISMATCH, "%s: the run: %s", exec_names[e], tc_strerror(err));
		cr_assert_eq(rc[0], 0, "%s: rank 0: %s", exec_names[e], tc_strerror(rc[0]));
		cr_assert_eq(rc[2], TC_EMISMATCH, "%s: rank 2, its sub-team peer: %s",
		             exec_names[e], tc_strerror(rc[2]));
		cr_assert(rc[1] == 0 || rc[1] == TC_EABORTED, "%s: rank 1: %s", exec_names[e],
		          tc_strerror(rc[1]));
		cr_assert(rc[3] == 0 || rc[3] == TC_EABORTED, "%s: rank 3: %s", exec_names[e],
		          tc_strerror(rc[3]));
		cr_assert_lt(s, 30.0, "%s: %.1f s: found by the timeout, not the skip", exec_names[e], s);
		tc_team_destroy(t);
	}
}

/* A rank failing on a sub-team: the rank waiting on the other sub-team
 * and on the parent return TC_EABORTED, and the next run is clean. */
static int abort_fn(struct tc_proc *proc, void *argp)
{
	int *rc = argp;
	const int me = tc_rank(proc);
	struct tc_proc *sub;
	int err = tc_team_split(proc, me % 2, me, NULL, &sub);
	if (err)
		return rc[me] = err;
	if (me == 0)
		return rc[me] = TC_EINVAL; /* fails, the run is aborted */
	int x = 0;
	/* Colour 0 waits for rank 0's bcast, colour 1 in a barrier of the
	 * team that rank 0 never enters. */
	err = me % 2 == 0 ? tc_bcast(sub, &x, 1, TC_INT32, 0, NULL) : tc_barrier(proc, NULL);
	return rc[me] = err;
}

Test(split, abort_reaches_sub_teams, .timeout = 300)
{
	for (int e = 0; e < 2; e++) {
		struct tc_team *t = make("torus:3x3", execs[e], 60000);
		int rc[9] = {0};
		int err = tc_run(t, abort_fn, rc);
		cr_assert_eq(err, TC_EINVAL, "%s: %s", exec_names[e], tc_strerror(err));
		for (int r = 1; r < 9; r++)
			cr_assert(rc[r] == TC_EABORTED || rc[r] == TC_EMISMATCH, "%s: rank %d: %s",
			          exec_names[e], r, tc_strerror(rc[r]));
		struct bad_arg a = {0};
		err = tc_run(t, after_fn, &a);
		cr_assert_eq(err, 0, "%s: the next run: %s", exec_names[e], tc_strerror(err));
		tc_team_destroy(t);
	}
}

Test(split, helpers_refuse_other_kinds, .timeout = 60)
{
	struct tc_team *t = make("ring:4", TC_EXEC_THREADS, 60000);
	struct tc_proc *x;
	cr_assert_eq(tc_attach(t, 0, &x), 0);
	struct tc_proc *sub = (struct tc_proc *)1;
	cr_assert_eq(tc_team_split_dims(x, 1, &sub), TC_ENOTSUP);
	cr_assert_null(sub);
	cr_assert(strstr(tc_error_detail(), "ring"), "%s", tc_error_detail());
	cr_assert_eq(tc_team_free(x), TC_EINVAL);
	cr_assert_null(tc_team_parent(t));
	cr_assert_eq(tc_team_parent_rank(t, 3), 3);
	cr_assert_eq(tc_team_parent_rank(t, 4), TC_ERANK);
	cr_assert_eq(tc_detach(x), 0);
	tc_team_destroy(t);
}

/* Emulated mode: a sub-team's messages wait for the model's delivery
 * against the root's epoch, and the rank's clock runs through both. */
static int emu_fn(struct tc_proc *proc, void *argp)
{
	struct seen *s = argp;
	const int me = tc_rank(proc);
	struct tc_proc *row;
	int err = tc_team_split_dims(proc, 2, &row);
	for (int it = 0; !err && it < 5; it++) {
		int x = tc_rank(row) == it % 3 ? me : -1;
		err = tc_bcast(row, &x, 1, TC_INT32, it % 3, NULL);
		if (!err && x != tc_team_parent_rank(tc_proc_team(row), it % 3))
			note(s, me, "iteration %d: bcast %d", it, x);
		if (!err)
			err = tc_barrier(proc, NULL);
	}
	if (!err && tc_clock(proc) < 5 * 1000 * TC_PS_PER_NS)
		note(s, me, "clock %d ns after five rounds of t_s = 1 us",
		     (int)(tc_clock(proc) / 1000), 0);
	return err;
}

static int emu_run(struct tc_proc *proc, void *a)
{
	return rc_fn_wrap(proc, a, emu_fn);
}

Test(split, emulated_mode, .timeout = 300)
{
	for (int e = 0; e < 2; e++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = "torus:3x3";
		cfg.exec = execs[e];
		cfg.mode = TC_MODE_EMULATED;
		cfg.timeout_ms = 60000;
		struct tc_team *t;
		cr_assert_eq(tc_team_create(&cfg, &t), 0);
		struct seen s = {0};
		int err = tc_run(t, emu_run, &s);
		cr_assert_eq(err, 0, "%s: %s (%s)", exec_names[e], tc_strerror(err), tc_error_detail());
		check_seen(&s, 9, exec_names[e]);
		tc_team_destroy(t);
	}
}
