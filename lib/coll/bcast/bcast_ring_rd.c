/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/bcast/bcast_ring_rd.c - one-to-all broadcast by recursive doubling
 * on a ring or a chain, at distances p/2, p/4, ... ([Barnat-IB109], "optimal
 * distances of the destinations are p/2, p/4, p/8, ..."; [KKA-I],
 * 1-DTORUSRECDOUBLOAB formula (a) on the ring K(z) and formula (c) on the
 * chain M(z) from node a).  Transfers are routed along the ring or chain,
 * store-and-forward or cut-through by the model's switching.
 *
 * The halving (the splitting rule of cost.h, tc_cost_bcast_ring_rd() and
 * tc_cost_bcast_chain_rd()): a segment [lo, hi] of n >= 2 positions whose
 * holder is h is cut in two, k = floor(n/2):
 *   - h - lo < k: h keeps [lo, lo+k-1] and sends to lo+k, the holder of
 *     [lo+k, hi];
 *   - else hi - h < k: h keeps [hi-k+1, hi] and sends to hi-k, the holder of
 *     [lo, hi-k];
 *   - else (n odd, h = lo+k in the middle): h keeps [lo+k, hi] and sends to
 *     lo+k-1, the holder of [lo, lo+k-1].
 * Every segment is cut in every round, both halves go on in parallel; the
 * halves have floor(n/2) and ceil(n/2) positions, so ceil(log2 p) rounds.
 * On a ring the positions are counted from the root (position i is node
 * (root + i) mod p, the holder always at the low end of its segment: it keeps
 * the smaller half and sends floor(n/2) links ahead); on a chain they are the
 * ranks and the holder starts at the root.
 *
 * Cost: tc_cost_bcast_ring_rd() on a ring, tc_cost_bcast_chain_rd() on a
 * chain from root a (include/topocoll/cost.h); the logical clock gives
 * exactly these for every p and root, checked by simulation for every
 * p <= 100 and every root: ceil(log2 p) rounds; under store-and-forward the
 * slowest chain pays every one of its links a whole message time (p-1 on a
 * ring, H(p, a) of tc_cost_bcast_chain_rd() on a chain, p-1 for a = 0 or
 * p-1), under cut-through one message time per round and t_h per link.
 * Why: a sender is free t_s + m t_w after it starts; its message arrives
 * T(m, l) after the start (l (t_s + m t_w) SF, t_s + m t_w + l t_h CT); the
 * chain of new holders along the larger halves crosses p-1 links on a ring
 * (the distances floor(n/2) telescope), and under CT the slowest chain of a
 * chain topology pays t_h for max(a, p-1-a) links.
 * Reduce (the dual, one port): tc_cost_reduce_ring_rd() and
 * tc_cost_reduce_chain_rd(), one combine added to each round, exact except on a
 * chain of odd p from its middle node, where one combine overlaps the next
 * receive (the closed form is then m t_c too high).  All-port receives overlap
 * more.
 * Restrictions: ring and chain topologies (TC_ENOTSUP elsewhere).
 * Memory: none besides the buffer; the recursion is ceil(log2 p) deep.
 * Trace, ring p = 5, root 0: round 1: 0 -> 2; round 2: 0 -> 1, 2 -> 3;
 * round 3: 3 -> 4 (SF: 2 + 1 + 1 = 4 = p-1 links along 0 -> 2 -> 3 -> 4).
 * Chain p = 6, root 2: round 1: 2 -> 3 ([0,2] | [3,5]); round 2: 2 -> 1
 * ([2] | [0,1]), 3 -> 4 ([3] | [4,5]); round 3: 1 -> 0, 4 -> 5.
 */
#include "coll/gen.h"

/*
 * Emits, through emit(ctx, from, to), the transfers of round `depth`
 * (0-based) of the halving above on positions [lo, hi] held by h, in
 * depth-first order (the holder's half first).  Returns 0 or the first error
 * of emit.  Shared with bcast_mesh.c (declared in gen.h).
 */
int tc__rd_halving_round(int lo, int hi, int h, int depth, int (*emit)(void *ctx, int from, int to),
                         void *ctx)
{
	int n = hi - lo + 1, k = n / 2;
	if (n < 2)
		return 0;
	int own_lo, own_hi, nh, oth_lo, oth_hi;
	if (h - lo < k) {
		own_lo = lo, own_hi = lo + k - 1, nh = lo + k, oth_lo = lo + k, oth_hi = hi;
	} else if (hi - h < k) {
		own_lo = hi - k + 1, own_hi = hi, nh = hi - k, oth_lo = lo, oth_hi = hi - k;
	} else {
		own_lo = lo + k, own_hi = hi, nh = lo + k - 1, oth_lo = lo, oth_hi = lo + k - 1;
	}
	if (depth == 0)
		return emit(ctx, h, nh);
	int err = tc__rd_halving_round(own_lo, own_hi, h, depth - 1, emit, ctx);
	if (!err)
		err = tc__rd_halving_round(oth_lo, oth_hi, nh, depth - 1, emit, ctx);
	return err;
}

struct tc__rd_ctx {
	const struct tc__gen *g;
	struct tc__sched *s;
	int ring; /* positions relative to the root */
};

static int tc__rd_emit(void *ctxp, int from, int to)
{
	struct tc__rd_ctx *c = ctxp;
	int p = c->g->p, off = c->ring ? c->g->root : 0;
	struct tc__xfer x = {.src = (from + off) % p,
	                     .dst = (to + off) % p,
	                     .sbuf = TC__BUF_OUT,
	                     .rbuf = TC__BUF_OUT,
	                     .op = TC__XOP_COPY,
	                     .info_lo = 0,
	                     .info_n = 1,
	                     .bytes = c->g->bytes};
	return tc__sched_add(c->s, &x);
}

int tc__gen_bcast_ring_rd(const struct tc__gen *g, struct tc__sched *s)
{
	enum tc_topo_kind k = tc_topo_kind(g->t);
	if (k != TC_TOPO_RING && k != TC_TOPO_CHAIN)
		return TC_ENOTSUP;
	struct tc__rd_ctx c = {g, s, k == TC_TOPO_RING};
	int h = c.ring ? 0 : g->root;
	int err = tc__sched_initial(s, g->root, 0, 1);
	int rounds = tc_cost_log2_ceil(g->p);
	for (int d = 0; d < rounds && !err; d++) {
		err = tc__sched_round(s);
		if (!err)
			err = tc__rd_halving_round(0, g->p - 1, h, d, tc__rd_emit, &c);
	}
	return err;
}

double tc__f_bcast_ring_rd(const struct tc__gen *g)
{
	if (tc_topo_kind(g->t) == TC_TOPO_CHAIN)
		return tc_cost_bcast_chain_rd(g->md, g->p, g->root, (double)g->bytes);
	return tc_cost_bcast_ring_rd(g->md, g->p, (double)g->bytes);
}

double tc__f_reduce_ring_rd(const struct tc__gen *g)
{
	if (tc_topo_kind(g->t) == TC_TOPO_CHAIN)
		return tc_cost_reduce_chain_rd(g->md, g->p, g->root, (double)g->bytes);
	return tc_cost_reduce_ring_rd(g->md, g->p, (double)g->bytes);
}
