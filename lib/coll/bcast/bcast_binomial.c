/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/bcast/bcast_binomial.c - one-to-all broadcast along a binomial
 * tree on any topology, routed ([KKA-I], GENRECDOUBL: ceil(log p) rounds,
 * optimal on the EREW PRAM and on U_p; [Barnat-IB109]'s recursive doubling).
 *
 * Relative ranks v = (id - root) mod p put the root at 0.  With D =
 * ceil(log2 p), round k (k = 0 .. D-1) uses i = D-1-k, high bit first: every
 * v that is a multiple of 2^(i+1) and has v + 2^i < p sends to v + 2^i.  The
 * subtree of a node that receives in round k is the contiguous range
 * [v, v + 2^i) of relative ranks, so for root 0 the dual reduction combines
 * neighbouring ranges, lower ranks on the left: it is rank-ordered (the
 * registry still does not mark it ORDERED, since other roots rotate it).
 * Transfers between non-neighbours are routed by the executor.
 *
 * Cost: cost.h tc_cost_bcast_binomial(): sum over rounds of msg(h_k, m),
 * h_k the longest route of round k, i.e. ceil(log2 p) message times when every
 * route is one link (complete graph; hypercube with root 0, where v + 2^i is
 * v XOR 2^i).  That sum is an upper bound of the modelled time in general: the
 * logical clock frees a sender after t_s + m t_w whatever the route's length,
 * so the makespan is the longest root-to-leaf chain in which a receive costs
 * T(m, l) = l(t_s + m t_w) (SF) or t_s + m t_w + l t_h (CT) and staying with a
 * sender costs t_s + m t_w; the chains need not take the longest route of
 * every round.  Exact when every route is one link and the model is
 * store-and-forward (or t_h = 0, or p a power of two: only then does a chain
 * receive in every round and pay t_h each time; otherwise CT costs
 * ceil(log2 p)(t_s + m t_w) + t_h max_{v<p} popcount(v)).
 * Reduce (the dual): tc_cost_reduce_binomial(), one message and one combine per
 * round on one-link routes, exact for p a power of two under one port; for
 * other p a combine can overlap the next receive, and the sum is an upper
 * bound.
 * Restrictions: none (any topology, any p, any root).
 * Memory: none besides the buffer.
 * Trace, p = 5, root 2 (node = (v + 2) mod 5): round 1 (i=2): 2 -> 1;
 * round 2 (i=1): 2 -> 4; round 3 (i=0): 2 -> 3, 4 -> 0.
 */
#include "coll/gen.h"

int tc__gen_bcast_binomial(const struct tc__gen *g, struct tc__sched *s)
{
	int p = g->p;
	int err = tc__sched_initial(s, g->root, 0, 1);
	int top = 1;
	while (top < p)
		top <<= 1;
	for (int b = top >> 1; b >= 1 && !err; b >>= 1) {
		err = tc__sched_round(s);
		for (int v = 0; v + b < p && !err; v += 2 * b) {
			struct tc__xfer x = {.src = (v + g->root) % p,
			                     .dst = (v + b + g->root) % p,
			                     .sbuf = TC__BUF_OUT,
			                     .rbuf = TC__BUF_OUT,
			                     .op = TC__XOP_COPY,
			                     .info_lo = 0,
			                     .info_n = 1,
			                     .bytes = g->bytes};
			err = tc__sched_add(s, &x);
		}
	}
	return err;
}

/* hops[k]: the longest route of round k of the broadcast. */
static void tc__binomial_hops(const struct tc__gen *g, int hops[32])
{
	int p = g->p, top = 1, k = 0;
	while (top < p)
		top <<= 1;
	for (int b = top >> 1; b >= 1; b >>= 1, k++) {
		hops[k] = 1;
		for (int v = 0; v + b < p; v += 2 * b) {
			int h = tc_topo_distance(g->t, (v + g->root) % p, (v + b + g->root) % p);
			if (h > hops[k])
				hops[k] = h;
		}
	}
}

double tc__f_bcast_binomial(const struct tc__gen *g)
{
	int hops[32];
	tc__binomial_hops(g, hops);
	return tc_cost_bcast_binomial(g->md, g->p, (double)g->bytes, hops);
}

double tc__f_reduce_binomial(const struct tc__gen *g)
{
	int hops[32];
	tc__binomial_hops(g, hops); /* the dual runs them backwards: same sum */
	return tc_cost_reduce_binomial(g->md, g->p, (double)g->bytes, hops);
}
