/* SPDX-License-Identifier: MIT */
/*
 * tests/test_split_route.c - what a sub-team's messages cost
 * (docs/subteams.md, "The model"): the links of a general subset (members
 * with no named topology among them) are charged as the parent's routes
 * between their parent ranks, in the logical clock, in the wait of emulated
 * mode and in tc_predict_call on the sub-team's topology; induced topologies
 * (a row of a torus, a sub-cube of a hypercube) are charged as before.
 *
 * Every expected time is computed here from the parent's hop counts
 * (tc_topo_distance on the parent) and the clock rules of docs/design.md,
 * also for a dup of the sub-team and a split of it (weights compose):
 * the linear broadcast's root sends to root-1, ..., 0, root+1, ..., k-1
 * back to back, its j-th send (j from 0) starting at j L and arriving
 * T(m, h_j) later, so the makespan is max((k-1) L, max_j (j L + T(m, h_j)))
 * with L = t_s + m t_w and T(m, h) = h L (store-and-forward) or
 * L + h t_h (cut-through).  Threads and fibres.
 */
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

enum { MAXK = 8, MAXP = 16 };

/* T(m, h) in ps under md (integer nanosecond parameters). */
static tc_time_t xfer_ps(const struct tc_model *md, uint64_t m, int h)
{
	tc_time_t L = (tc_time_t)(md->ts_ns + (double)m * md->tw_ns) * TC_PS_PER_NS;
	if (md->switching == TC_SWITCH_CT)
		return L + (tc_time_t)h * (tc_time_t)md->th_ns * TC_PS_PER_NS;
	return (tc_time_t)h * L;
}

/* The linear broadcast's makespan from sub-rank root over the members
 * mem[0..k) of parent topology pt (the closed form above). */
static tc_time_t bcast_linear_ps(const struct tc_topo *pt, const struct tc_model *md,
                                 const int *mem, int k, int root, uint64_t m)
{
	tc_time_t L = (tc_time_t)(md->ts_ns + (double)m * md->tw_ns) * TC_PS_PER_NS;
	tc_time_t worst = (tc_time_t)(k - 1) * L;
	for (int j = 0; j < k - 1; j++) {
		int dst = j < root ? root - 1 - j : j + 1;
		int h = tc_topo_distance(pt, mem[root], mem[dst]);
		tc_time_t at = (tc_time_t)j * L + xfer_ps(md, m, h);
		if (at > worst)
			worst = at;
	}
	return worst;
}

struct route_arg {
	const int *mem; /* the sub-team's members, in sub-team order */
	int k;
	uint64_t m;
	const struct tc_model *md;
	double margin_ns; /* logical time left for the allreduce that syncs */
	int emulated;
	char spec[32];                /* the sub-team's topology (sub-rank 0) */
	tc_time_t start[MAXK];        /* each root's common start S */
	tc_time_t end[MAXK][MAXK];    /* [root][sub-rank]: clock after the bcast */
	tc_time_t predicted[MAXK];    /* tc_predict_call on the sub-team's topology */
	tc_time_t p2p_start, p2p_end; /* sub-rank k-1's receive from sub-rank 0 */
	/* The linear broadcast from sub-rank 0 on a dup of the sub-team, and on
	 * the sub-team split again without its sub-rank 1 (k >= 3). */
	tc_time_t dup_start, dup_end[MAXK], nest_start, nest_end[MAXK];
	uint64_t wall_end[MAXK][MAXK]; /* emulated: CLOCK_MONOTONIC after the bcast */
	int rc[MAXP];
	char why[MAXP][128];
};

/* Brings every rank of sub to one clock S (returned): the latest clock
 * plus a margin longer than the allreduce that finds it.  Advanced on the
 * sub-team's proc, which takes the rank's clock first: its point-to-point
 * calls start from there. */
static int sync_clocks(struct tc_proc *sub, double margin_ns, tc_time_t *S)
{
	int64_t c = tc_clock(sub), mx = 0;
	int err = tc_allreduce(sub, &c, &mx, 1, TC_INT64, TC_OP_MAX, NULL);
	if (err)
		return err;
	*S = (tc_time_t)mx + (tc_time_t)margin_ns * TC_PS_PER_NS;
	tc_time_t now = tc_clock(sub);
	if (now > *S)
		return TC_ETIMEDOUT; /* the margin was too short: reported as such */
	return tc_clock_advance(sub, (double)(*S - now) / TC_PS_PER_NS);
}

static int route_fn(struct tc_proc *proc, void *argp)
{
	struct route_arg *a = argp;
	const int me = tc_rank(proc);
	int pos = -1;
	for (int i = 0; i < a->k; i++)
		if (a->mem[i] == me)
			pos = i;
	struct tc_proc *sub;
	int err = tc_team_split(proc, pos >= 0 ? 0 : TC_UNDEFINED, pos, NULL, &sub);
	if (err || !sub)
		return err;
	const struct tc_team *st = tc_proc_team(sub);
	if (tc_rank(sub) == 0)
		tc_topo_spec(tc_team_topo(st), a->spec, sizeof a->spec);
	static const uint64_t fill = 0x5a;
	unsigned char *buf = malloc(a->m ? a->m : 1);
	if (!buf)
		return TC_ENOMEM;
	const struct tc_coll_opts lin = {.alg = "linear"};
	for (int root = 0; !err && root < a->k; root++) {
		tc_time_t S;
		err = sync_clocks(sub, a->margin_ns, &S);
		if (err)
			break;
		if (tc_rank(sub) == 0) /* the same S on every member */
			a->start[root] = S;
		if (tc_clock(sub) != S)
			snprintf(a->why[me], sizeof a->why[me], "clock %lld, not S = %lld",
			         (long long)tc_clock(sub), (long long)S);
		memset(buf, tc_rank(sub) == root ? (int)fill : 0, a->m);
		err = tc_bcast(sub, buf, a->m, TC_BYTE, root, &lin);
		if (err)
			break;
		a->wall_end[root][tc_rank(sub)] = tc_test_now_ns();
		a->end[root][tc_rank(sub)] = tc_clock(sub);
		if (a->m && (buf[0] != fill || buf[a->m - 1] != fill))
			snprintf(a->why[me], sizeof a->why[me], "root %d: data not delivered", root);
		if (tc_rank(sub) == 0) {
			struct tc_prediction pr;
			int e = tc_predict(tc_team_topo(st), a->md, TC_COLL_BCAST, "linear", a->m,
			                   1, root, 0, &pr);
			a->predicted[root] = e ? -1 : pr.modelled_ps;
		}
	}
	/* Point-to-point between the first and the last member. */
	if (!err && a->k > 1) {
		tc_time_t S;
		err = sync_clocks(sub, a->margin_ns, &S);
		if (!err && tc_rank(sub) == 0)
			a->p2p_start = S;
		if (!err && tc_rank(sub) == 0)
			err = tc_send(sub, a->k - 1, buf, a->m);
		else if (!err && tc_rank(sub) == a->k - 1) {
			size_t got;
			err = tc_recv(sub, 0, buf, a->m, &got);
			a->p2p_end = tc_clock(sub);
		}
	}
	/* A dup, and a split of the sub-team, are charged by the same routes. */
	struct tc_proc *dup = NULL, *nest = NULL;
	if (!err)
		err = tc_team_dup(sub, &dup);
	tc_time_t S_dup;
	if (!err)
		err = sync_clocks(dup, a->margin_ns, &S_dup);
	if (!err && tc_rank(dup) == 0)
		a->dup_start = S_dup;
	if (!err)
		err = tc_bcast(dup, buf, a->m, TC_BYTE, 0, &lin);
	if (!err) {
		a->dup_end[tc_rank(dup)] = tc_clock(dup);
		err = tc_team_free(dup);
	}
	const int sr = tc_rank(sub);
	if (!err && a->k >= 3)
		err = tc_team_split(sub, sr == 1 ? TC_UNDEFINED : 0, sr, NULL, &nest);
	if (!err && nest) {
		tc_time_t S_nest;
		err = sync_clocks(nest, a->margin_ns, &S_nest);
		if (!err && tc_rank(nest) == 0)
			a->nest_start = S_nest;
		if (!err)
			err = tc_bcast(nest, buf, a->m, TC_BYTE, 0, &lin);
		if (!err) {
			a->nest_end[tc_rank(nest)] = tc_clock(nest);
			err = tc_team_free(nest);
		}
	}
	free(buf);
	if (!err)
		err = tc_team_free(sub);
	return err;
}

static int route_run(struct tc_proc *proc, void *argp)
{
	struct route_arg *a = argp;
	int err = route_fn(proc, argp);
	a->rc[tc_rank(proc)] = err;
	return err;
}

/* Runs the linear broadcasts and the message over the members mem[0..k)
 * of spec under md and checks every time against the parent's hops. */
static void check_subset(const char *spec, const int *mem, int k, const char *want_spec,
                         const struct tc_model *md, enum tc_mode mode, int e)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = execs[e];
	cfg.model = *md;
	cfg.mode = mode;
	cfg.timeout_ms = 120000;
	struct tc_team *t = NULL;
	int err = tc_team_create(&cfg, &t);
	cr_assert_eq(err, 0, "%s: %s (%s)", spec, tc_strerror(err), tc_error_detail());
	static struct route_arg a;
	memset(&a, 0, sizeof a);
	a.mem = mem;
	a.k = k;
	a.md = md;
	a.m = mode == TC_MODE_EMULATED ? 20000 : 1000;
	a.margin_ns = 1e6;
	const char *sw = md->switching == TC_SWITCH_CT ? "CT" : "SF";
	uint64_t t0 = tc_test_now_ns();
	err = tc_run(t, route_run, &a);
	cr_assert_eq(err, 0, "%s %s on %s: %s (%s)", spec, sw, exec_names[e], tc_strerror(err),
	             tc_error_detail());
	const struct tc_topo *pt = tc_team_topo(t);
	for (int r = 0; r < tc_team_size(t); r++)
		cr_assert_eq(a.why[r][0], 0, "%s %s on %s: rank %d: %s", spec, sw, exec_names[e], r,
		             a.why[r]);
	cr_assert_str_eq(a.spec, want_spec, "%s: the sub-team's topology", spec);
	for (int root = 0; root < k; root++) {
		tc_time_t mk = 0;
		for (int i = 0; i < k; i++)
			if (a.end[root][i] - a.start[root] > mk)
				mk = a.end[root][i] - a.start[root];
		tc_time_t want = bcast_linear_ps(pt, md, mem, k, root, a.m);
		cr_assert_eq(mk, want,
		             "%s %s on %s, root %d: makespan %lld ps, the parent's routes give %lld",
		             spec, sw, exec_names[e], root, (long long)mk, (long long)want);
		cr_assert_eq(a.predicted[root], want,
		             "%s %s, root %d: tc_predict_call on the sub-team's topology gives "
		             "%lld ps, the parent's routes %lld",
		             spec, sw, root, (long long)a.predicted[root], (long long)want);
		/* Emulated: no member takes the data before epoch + its clock (a
		 * receive's completion; the root only sends), and the epoch is
		 * after t0. */
		for (int i = 0; mode == TC_MODE_EMULATED && i < k; i++)
			if (i != root)
				cr_assert_geq(a.wall_end[root][i] - t0,
				              (uint64_t)(a.end[root][i] / TC_PS_PER_NS),
				              "%s on %s, root %d: sub-rank %d took the data %llu ns after "
				              "the start, before its arrival at %lld ns",
				              spec, exec_names[e], root, i,
				              (unsigned long long)(a.wall_end[root][i] - t0),
				              (long long)(a.end[root][i] / TC_PS_PER_NS));
	}
	tc_time_t mk = 0, want = bcast_linear_ps(pt, md, mem, k, 0, a.m);
	for (int i = 0; i < k; i++)
		if (a.dup_end[i] - a.dup_start > mk)
			mk = a.dup_end[i] - a.dup_start;
	cr_assert_eq(mk, want, "%s %s on %s: a dup's makespan %lld ps, the parent's routes give %lld",
	             spec, sw, exec_names[e], (long long)mk, (long long)want);
	if (k >= 3) {
		int nm[MAXK];
		nm[0] = mem[0];
		for (int i = 2; i < k; i++)
			nm[i - 1] = mem[i];
		mk = 0;
		want = bcast_linear_ps(pt, md, nm, k - 1, 0, a.m);
		for (int i = 0; i < k - 1; i++)
			if (a.nest_end[i] - a.nest_start > mk)
				mk = a.nest_end[i] - a.nest_start;
		cr_assert_eq(mk, want,
		             "%s %s on %s: a split of the sub-team: makespan %lld ps, the parent's "
		             "routes give %lld",
		             spec, sw, exec_names[e], (long long)mk, (long long)want);
	}
	int h = tc_topo_distance(pt, mem[0], mem[k - 1]);
	cr_assert_eq(a.p2p_end - a.p2p_start, xfer_ps(md, a.m, h),
	             "%s %s on %s: a message from parent rank %d to %d took %lld ps, %d hops "
	             "give %lld",
	             spec, sw, exec_names[e], mem[0], mem[k - 1],
	             (long long)(a.p2p_end - a.p2p_start), h, (long long)xfer_ps(md, a.m, h));
	tc_team_destroy(t);
}

static const struct {
	const char *spec;
	int mem[MAXK];
	int k;
	const char *want; /* the induced topology */
} cases[] = {
        /* General subsets: no link of the parent among them. */
        {"ring:8", {0, 3, 5}, 3, "complete:3"},
        {"mesh:4x4", {15, 0, 6, 9, 3}, 5, "complete:5"},
        /* Induced: a row of a torus, a sub-cube of a hypercube. */
        {"torus:4x4", {4, 5, 6, 7}, 4, "ring:4"},
        {"hypercube:4", {0, 1, 4, 5}, 4, "hypercube:2"},
};

Test(split_route, subsets_charged_by_parent_routes, .timeout = 600)
{
	for (int ct = 0; ct < 2; ct++) {
		struct tc_model md;
		tc_model_default(&md);
		if (ct) {
			md.switching = TC_SWITCH_CT;
			md.th_ns = 300;
		}
		for (int e = 0; e < 2; e++)
			for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
				check_subset(cases[i].spec, cases[i].mem, cases[i].k, cases[i].want,
				             &md, TC_MODE_NATIVE, e);
	}
}

/* Emulated: t_w = 1 us per byte and 20000 bytes make one link's share
 * L = 20 ms, so a member three parent hops away takes the data three L
 * after it was sent, not one. */
Test(split_route, emulated_waits_for_the_route, .timeout = 600)
{
	struct tc_model md;
	tc_model_default(&md);
	md.tw_ns = 1000;
	for (int e = 0; e < 2; e++)
		check_subset("ring:8", (const int[]){0, 3, 5}, 3, "complete:3", &md, TC_MODE_EMULATED, e);
}
