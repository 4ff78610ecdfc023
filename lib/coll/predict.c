/* SPDX-License-Identifier: MIT */
/* lib/coll/predict.c - prediction without threads, and the registry's names. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "coll/vcount/vcount.h"
#include "base/error_detail.h"
#include "model/clock.h"
#include "topo/charge.h"

const char *tc_alg_name(enum tc_coll coll, int i)
{
	for (int k = 0; k < tc__nalgs; k++)
		if (tc__algs[k].coll == coll && i-- == 0)
			return tc__algs[k].name;
	return NULL;
}

int tc_coll_parse(const char *name, enum tc_coll *out)
{
	tc__clear_detail();
	if (!out) {
		tc__set_detail("tc_coll_parse: out is NULL");
		return TC_EINVAL;
	}
	for (int c = 0; name && c < TC_COLL_COUNT; c++)
		if (!strcmp(name, tc_coll_name((enum tc_coll)c))) {
			*out = (enum tc_coll)c;
			return TC_OK;
		}
	return TC_EINVAL;
}

/* What tc__pred_args allocates for a call: a multicast's canonical member
 * set, a v-call's matrix.  Freed by tc__pred_free, also after an error. */
struct tc__pred_mem {
	int *canon;
	uint64_t *vrows;
	struct tc__vmatrix vmx;
};

static void tc__pred_free(struct tc__pred_mem *mem)
{
	free(mem->canon);
	free(mem->vrows);
}

/* Checks the arguments shared by tc_predict_call and tc_schedule_call and
 * fills g; a multicast's canonical member set (g->members) and a v-call's
 * matrix (g->vmx, lib/coll/vcount/vcount.h: the pairwise schedule of the
 * call's counts) are allocated in *mem. */
static int tc__pred_args(const struct tc_topo *t, const struct tc_model *md,
                         const struct tc_call *c, struct tc__gen *g, struct tc__pred_mem *mem)
{
	*mem = (struct tc__pred_mem){0};
	if (!t || !md || !c || (unsigned)c->coll >= TC_COLL_COUNT || tc_model_check(md))
		return TC_EINVAL;
	size_t esize = c->esize ? c->esize : 1, bytes = c->bytes;
	int p = tc_topo_nodes(t), root = c->root;
	const unsigned f = tc_coll_flags(c->coll);
	if (f & TC_CF_VCOUNT)
		bytes = 0; /* the counts say it (below) */
	else if (c->counts || c->matrix)
		return TC_EINVAL;
	if (bytes > TC_MAX_MESSAGE)
		return TC_EOVERFLOW;
	if (bytes % esize || c->packets < 0)
		return TC_EINVAL;
	if ((f & (TC_CF_SEND_P | TC_CF_RECV_P)) && bytes > TC_MAX_MESSAGE / (size_t)p)
		return TC_EOVERFLOW;
	if (f & TC_CF_ROOTED) {
		if (root < 0 || root >= p)
			return TC_EROOT;
	} else {
		root = 0;
	}
	if (f & TC_CF_NO_DATA)
		bytes = 0;
	*g = (struct tc__gen){.coll = c->coll,
	                      .t = t,
	                      .p = p,
	                      .bytes = bytes,
	                      .esize = esize,
	                      .root = root,
	                      .md = md,
	                      .packets = c->packets,
	                      .me = -1};
	if (f & TC_CF_Q) {
		g->q = (int)(((c->q % p) + p) % p);
		g->shift_ring = !!c->shift_ring;
	}
	if (f & TC_CF_MEMBERS) {
		if (c->nmembers < 0 || c->nmembers > p)
			return TC_EINVAL;
		mem->canon = malloc((size_t)(c->nmembers ? c->nmembers : 1) * sizeof *mem->canon);
		if (!mem->canon)
			return TC_ENOMEM;
		int err = tc__members_canon(p, root, c->members, c->nmembers, mem->canon, &g->nmembers);
		/* A member out of range is a bad member set like a duplicate
		 * (struct tc_call): TC_EINVAL, not the live call's TC_ERANK. */
		if (err == TC_ERANK)
			err = TC_EINVAL;
		if (err)
			return err;
		g->members = mem->canon;
	}
	if (f & TC_CF_VCOUNT) {
		int err = tc__vmatrix_of_call(c->coll, p, root, esize, c->counts, c->matrix,
		                              &mem->vmx, &mem->vrows);
		if (err)
			return err;
		g->vmx = &mem->vmx;
	}
	return TC_OK;
}

int tc_alg_applies(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll, const char *alg)
{
	tc__clear_detail();
	if (!t || !md || !alg || (unsigned)coll >= TC_COLL_COUNT)
		return TC_EINVAL;
	const struct tc__alg *a = tc__alg_find(coll, alg);
	if (!a)
		return TC_EALG;
	struct tc__gen g = {.coll = coll, .t = t, .p = tc_topo_nodes(t), .esize = 1, .md = md, .me = -1};
	return tc__alg_check(a, &g);
}

/* The largest schedule the predictor simulates: 2^20 transfers and 2^22
 * link crossings.  Measured on these machines (./tools/bench predict):
 * 520,192 transfers between neighbours (allgather mesh on mesh:64x64) in
 * 0.2 s and 73 MB, 4,194,304 crossings of 4095 routed transfers (bcast
 * linear on ring:4096) in 0.3-0.4 s of CPU and 200 MB: so < 1 s and
 * < 256 MB at the limits.  A larger schedule is predicted by its exact
 * closed form (TC__ALG_EXACT) where it has one, and refused with TC_ELIMIT
 * otherwise; tc_schedule_call, which must list every transfer, allows 4
 * times more transfers (the simulator's own limit bounds the crossings,
 * 2^23, lib/sched/sim.c). */
#define TC__PREDICT_MAX_X (1 << 20)
#define TC__PREDICT_MAX_HOPS (1L << 22)
#define TC__SCHEDULE_MAX_X (1 << 22)
#define TC__SCHEDULE_MAX_HOPS (1L << 23)
/* How far past its limit a refused schedule's transfers are counted for
 * the error's detail. */
#define TC__OVER_COUNT 16

/* Says why a schedule is over the limit (tc_error_detail()): how many
 * transfers it has (counted without storing them), the limit, and what to
 * do instead. */
static int tc__over_limit(const struct tc__gen *g, const struct tc__alg *a, int limit,
                          long hops_limit, const char *what)
{
	struct tc__gen gc = *g;
	/* Counting stops past TC__OVER_COUNT times the limit: a pipelined
	 * schedule of terabytes has billions of transfers (fuzz_call: 19 s and,
	 * before rounds were no longer stored, over 1 GB to count one). */
	gc.max_x = limit * TC__OVER_COUNT;
	gc.count_only = 1;
	struct tc__sched s;
	long long n = -1, hops = -1;
	int counted = tc__coll_generate(a, &gc, &s);
	if (!counted) {
		n = s.counted;
		tc__sched_free(&s);
	}
	gc.count_only = 0;
	if (n >= 0 && n <= limit && !tc__coll_generate(a, &gc, &s)) {
		hops = tc__sched_crossings(&s, g->t); /* few transfers, long routes */
		tc__sched_free(&s);
	}
	if (hops >= 0)
		tc__set_detail("%s %s on %d ranks: its %lld transfers cross %lld links, %.1fx the "
		               "%s's limit of %ld; no exact closed form replaces it for this "
		               "topology and model: choose another algorithm (--alg) or fewer ranks",
		               tc_coll_name(g->coll), a->name, g->p, n, hops,
		               (double)hops / (double)hops_limit, what, hops_limit);
	else if (n > 0)
		tc__set_detail("%s %s on %d ranks: its schedule has %lld transfers, %.1fx the "
		               "%s's limit of %d (~%lld MB); no exact closed form replaces it "
		               "for this topology and model: choose another algorithm (--alg) "
		               "or fewer ranks",
		               tc_coll_name(g->coll), a->name, g->p, n, (double)n / limit, what,
		               limit, (long long)((n * (long long)sizeof(struct tc__xfer)) >> 20));
	else if (counted == TC__ELIMIT)
		tc__set_detail("%s %s on %d ranks: its schedule has more than %lld transfers, %dx "
		               "the %s's limit of %d; no exact closed form replaces it for this "
		               "topology and model: choose another algorithm (--alg) or fewer ranks",
		               tc_coll_name(g->coll), a->name, g->p,
		               (long long)limit * TC__OVER_COUNT, TC__OVER_COUNT, what, limit);
	else
		tc__set_detail("%s %s on %d ranks: its schedule is over the %s's limit of %d "
		               "transfers: choose another algorithm (--alg) or fewer ranks",
		               tc_coll_name(g->coll), a->name, g->p, what, limit);
	return TC_ELIMIT;
}

/* Selects the algorithm and simulates its schedule; on success the caller
 * frees *s and *sim.  Over the limit with an exact closed form: returns 0
 * with *exact_ps >= 0 and *s and *sim zeroed (no schedule: what it would
 * count is not counted).  The work is bounded: a schedule is built up to
 * the limit at most (AUTO prices the exact closed forms without building). */
static int tc__select_sim(const struct tc__gen *g0, const char *alg, int limit, long hops_limit,
                          const struct tc__alg **a, struct tc__sched *s, struct tc__sim *sim,
                          tc_time_t *exact_ps)
{
	struct tc__gen g = *g0;
	g.max_x = limit;
	g.max_hops = hops_limit;
	tc_time_t ms;
	*exact_ps = -1;
	int err = tc__coll_select(&g, alg, 0, a, s, &ms);
	if (err == TC__ELIMIT) {
		if (ms < 0)
			return tc__over_limit(&g, *a, limit, hops_limit, "simulator");
		/* The closed form is the prediction: the schedule is neither
		 * built nor counted (counting is as long as building: minutes for
		 * the p^2 log p transfers of a large alltoall). */
		memset(s, 0, sizeof *s);
		memset(sim, 0, sizeof *sim);
		*exact_ps = ms;
		return TC_OK;
	}
	if (err)
		return err;
	err = tc__sched_simulate(s, g.t, g.md, sim);
	if (err)
		tc__sched_free(s);
	return err;
}

int tc_schedule_call(const struct tc_topo *t, const struct tc_model *md, const struct tc_call *call,
                     struct tc_transfer **out, int *n)
{
	tc__clear_detail();
	struct tc__gen g;
	if (out)
		*out = NULL; /* on every error: tc_schedule_free(*out) is a no-op */
	if (n)
		*n = 0;
	if (!out || !n)
		return TC_EINVAL;
	struct tc__pred_mem mem;
	int err = tc__pred_args(t, md, call, &g, &mem);
	const struct tc__alg *a;
	struct tc__sched s;
	struct tc__sim sim;
	tc_time_t exact;
	if (!err)
		err = tc__select_sim(&g, call->alg, TC__SCHEDULE_MAX_X, TC__SCHEDULE_MAX_HOPS, &a,
		                     &s, &sim, &exact);
	if (!err && exact >= 0) { /* every transfer is asked for */
		tc__sched_free(&s);
		err = tc__over_limit(&g, a, TC__SCHEDULE_MAX_X, TC__SCHEDULE_MAX_HOPS, "schedule listing");
	}
	tc__pred_free(&mem);
	if (err)
		return err;
	struct tc__mps q;
	tc__mps_from_model(&q, md);
	struct tc_transfer *x = calloc(s.nx ? (size_t)s.nx : 1, sizeof *x);
	if (!x) {
		err = TC_ENOMEM;
		goto done;
	}
	for (int r = 0; r < s.nrounds; r++)
		for (int i = s.round_at[r]; i < s.round_at[r + 1]; i++) {
			const struct tc__xfer *y = &s.x[i];
			int hops = y->src == y->dst ? 0 : tc__topo_charge(t, y->src, y->dst);
			x[i] = (struct tc_transfer){.round = r,
			                            .src = y->src,
			                            .dst = y->dst,
			                            .hops = hops,
			                            .combine = y->op != TC__XOP_COPY,
			                            .bytes = y->bytes,
			                            .src_off = y->soff,
			                            .dst_off = y->roff,
			                            .arrival_ps = sim.arrival[i],
			                            .src_buf = y->sbuf,
			                            .dst_buf = y->rbuf,
			                            .start_ps = hops ? sim.arrival[i] -
			                                                        tc__xfer_time(&q, y->bytes, hops)
			                                             : 0};
		}
	*out = x;
	*n = s.nx;
done:
	tc__sim_free(&sim);
	tc__sched_free(&s);
	return err;
}

int tc_schedule(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll, const char *alg,
                size_t bytes, size_t esize, int root, int packets, struct tc_transfer **out, int *n)
{
	tc__clear_detail();
	struct tc_call c = {.coll = coll,
	                    .alg = alg,
	                    .bytes = bytes,
	                    .esize = esize,
	                    .root = root,
	                    .packets = packets};
	/* esize 0: refused as a NULL call is, *out and *n cleared there */
	return tc_schedule_call(t, md, esize ? &c : NULL, out, n);
}

void tc_schedule_free(struct tc_transfer *x)
{
	free(x);
}

int tc_predict(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll, const char *alg,
               size_t bytes, size_t esize, int root, int packets, struct tc_prediction *out)
{
	tc__clear_detail();
	struct tc_call c = {.coll = coll,
	                    .alg = alg,
	                    .bytes = bytes,
	                    .esize = esize,
	                    .root = root,
	                    .packets = packets};
	if (!esize)
		return TC_EINVAL;
	return tc_predict_call(t, md, &c, out);
}

/*
 * The bounds of the permutations and of the multicast (collectives.def's
 * PERM and MC), like tc_lower_bound_any() valid for every algorithm however
 * it cuts the data (lib/model/bounds.c gives the arguments), with r = 1
 * (one-port) or the largest degree (all-port) receive resources.  A
 * permutation's block must cross the links of its route: with D the longest
 * distance from a rank to its block's destination, D t_s + (m / r) t_w
 * under SF and t_s + (m / r) t_w + D t_h under CT (D steps under SF, 1
 * under CT); for gray2binary and binary2gray on a hypercube under SF and
 * one-port, [HJR-TR-20-92]'s Lemma 3 instead, which also holds for the
 * algorithms that split (GB2, GB3): max((n - 1) tau, (n - 1) (K/2) t_c),
 * n - 1 steps.  A multicast informs |M| + 1 ranks at least (the forwarders
 * included), at most r' + 1 times more per t_s (r' = 1 one-port, the
 * largest degree all-port): ceil(log_{r'+1}(|M| + 1)) t_s ([KKA-I]'s
 * Lemma 5's steps); and its farthest member, exc links from the root, gets
 * the m bytes as a permutation's destination does.
 */
static void tc__special_bound(const struct tc__gen *g, struct tc_prediction *out)
{
	const struct tc_model *md = g->md;
	const double m = (double)g->bytes;
	const bool sf = md->switching == TC_SWITCH_SF;
	const int maxdeg = tc_topo_props(g->t)->max_degree;
	const double r = md->ports == TC_PORTS_ALL && maxdeg > 1 ? maxdeg : 1;
	long D = 0, steps = 0;
	double t = 0;
	if (tc__colls[g->coll].bound == TC__LB_MC) {
		for (int i = 0; i < g->nmembers; i++) {
			int d = tc_topo_distance(g->t, g->root, g->members[i]);
			D = d > D ? d : D;
		}
		struct tc_lower_bound lb;
		if (tc_lower_bound_multicast(g->nmembers,
		                             md->ports == TC_PORTS_ALL && maxdeg > 1 ? maxdeg : 1,
		                             D, m, md, &lb))
			return;
		steps = lb.steps;
		t = (double)lb.steps * md->ts_ns;
	} else {
		for (int v = 0; v < g->p; v++) {
			int d = tc__perm_dest(g, v);
			if (d >= 0) {
				int h = tc_topo_distance(g->t, v, d);
				D = h > D ? h : D;
			}
		}
	}
	if (D > 0) {
		double dist = sf ? (double)D * md->ts_ns + m / r * md->tw_ns
		                 : md->ts_ns + m / r * md->tw_ns + (double)D * md->th_ns;
		t = fmax(t, dist);
		steps = sf && D > steps ? D : steps > 0 ? steps : 1;
	}
	int n = tc__log2_exact(g->p);
	if (tc__colls[g->coll].bound == TC__LB_PERM && g->coll != TC_COLL_SHIFT && sf &&
	    md->ports == TC_PORTS_ONE && n >= 0 && tc_topo_kind(g->t) == TC_TOPO_HYPERCUBE) {
		t = tc_cost_gray2binary_bound(md, n, m);
		steps = n > 1 ? n - 1 : 0;
	}
	out->lower_bound_ns = t;
	out->lower_bound_steps = steps;
}

int tc_predict_call(const struct tc_topo *t, const struct tc_model *md, const struct tc_call *call,
                    struct tc_prediction *out)
{
	tc__clear_detail();
	struct tc__gen g;
	if (!out)
		return TC_EINVAL;
	struct tc__pred_mem mem;
	int err = tc__pred_args(t, md, call, &g, &mem);
	if (err) {
		tc__pred_free(&mem);
		return err;
	}
	const enum tc_coll coll = g.coll;
	const int p = g.p, root = g.root;
	const size_t bytes = g.bytes;
	const struct tc__alg *a;
	struct tc__sched s;
	struct tc__sim sim;
	tc_time_t exact;
	err = tc__select_sim(&g, call->alg, TC__PREDICT_MAX_X, TC__PREDICT_MAX_HOPS, &a, &s, &sim, &exact);
	if (err) {
		tc__pred_free(&mem);
		return err;
	}
	memset(out, 0, sizeof *out);
	out->algorithm = a->name;
	out->simulated = exact < 0;
	out->transfers = exact < 0 ? s.nx : -1;
	out->modelled_ps = exact < 0 ? sim.makespan : exact;
	/* The closed forms count every link as one: none on a sub-team's
	 * links that stand for longer routes (lib/topo/charge.h). */
	out->formula_ns = tc__topo_weighted(t) ? NAN : a->formula(&g);
	out->rounds = exact < 0 ? sim.rounds : -1;
	out->messages = sim.messages;
	out->hop_messages = sim.hop_messages;
	out->bytes = sim.bytes;
	out->oneport_violations = sim.oneport_violations;
	out->nodup_violations = sim.nodup_violations;
	out->noho_violations = sim.noho_violations;
	out->contention = sim.contention_total;
	if (sim.ncontention > 0) {
		out->contention_from = sim.contention[0].from;
		out->contention_to = sim.contention[0].to;
		out->contention_xa = sim.contention[0].xa;
		out->contention_xb = sim.contention[0].xb;
		out->contention_round = sim.contention[0].round;
	}
	tc__sim_free(&sim);
	tc__sched_free(&s);

	/* The collective's bound (collectives.def), valid for every algorithm
	 * of the catalogue, however it cuts its data (tc_lower_bound_any()):
	 * broadcast and reduce, allreduce, barrier and the scans a one-to-all
	 * broadcast's pattern (or, dually, an all-to-one reduction's); allgather
	 * and reduce_scatter an all-to-all broadcast's, scatter and gather a
	 * one-to-all scatter's, alltoall an all-to-all scatter's.  None for the
	 * variable-count collectives and the trees. */
	out->lower_bound_ns = NAN;
	out->lower_bound_steps = -1;
	const int lbk = tc__colls[coll].bound;
	if (lbk == TC__LB_PERM || lbk == TC__LB_MC)
		tc__special_bound(&g, out);
	tc__pred_free(&mem);
	if (lbk == TC__LB_PERM || lbk == TC__LB_MC || lbk == TC__LB_NONE)
		return TC_OK;
	int dims[32];
	int nd = tc_topo_dims(t, NULL);
	struct tc_lower_bound lb;
	enum tc_topo_kind kind = tc_topo_kind(t);
	if (kind == TC_TOPO_HYPERCUBE) {
		nd = 1;
		dims[0] = tc__log2_exact(p);
	} else if (kind == TC_TOPO_MESH || kind == TC_TOPO_TORUS) {
		tc_topo_dims(t, dims);
	} else {
		nd = 1;
		dims[0] = p;
	}
	if (nd >= 1 && nd <= 32 &&
	    !tc_lower_bound_any(lbk, kind, nd, dims, (tc_coll_flags(coll) & TC_CF_ROOTED) ? root : -1,
	                        (double)bytes, md, &lb)) {
		out->lower_bound_ns = lb.time_ns;
		out->lower_bound_steps = lb.steps;
	}
	return TC_OK;
}
