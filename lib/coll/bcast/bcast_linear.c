/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/bcast/bcast_linear.c - one-to-all broadcast by p-1 sends from the
 * root ([Barnat-IB109], the naive One-To-All: "send p-1 messages one after the
 * other"; the sender is the bottleneck).
 *
 * One round: the root sends to root-1, root-2, ..., 0, then root+1, ...,
 * p-1, in that order; the one-port rule serialises the sends on its port,
 * and transfers to non-neighbours are routed by the executor.  The order
 * makes the dual reduction rank-ordered for every root: the dual combines in
 * schedule order, a_{root-1} (+) a_root first, then a_{root-2} on the left,
 * ..., a_0, then a_{root+1}, ..., a_{p-1} on the right, so the root ends with
 * a_0 (+) a_1 (+) ... (+) a_{p-1} (the registry marks reduce/linear ORDERED).
 *
 * Cost: cost.h tc_cost_bcast_linear(), sum over the destinations k of
 * msg(h_k, m), h_k the route length to the k-th destination in the order
 * above; p-1 one-link messages when every destination is a neighbour (complete
 * graph, star from the hub) - exact there under store-and-forward (under
 * cut-through the sends' t_h overlap: the modelled time pays t_h once, below
 * the closed form, which pays it p-1 times).  With routes longer than one link
 * the closed form charges blocking sends, whereas the logical clock frees the
 * root's port after t_s + m t_w: the k-th send (k from 0) starts at
 * k(t_s + m t_w) and arrives T(m, h_k) later, so the modelled time is
 *     max((p-1)(t_s + m t_w), max_k (k (t_s + m t_w) + T(m, h_k)))
 * (T(m, l) = l(t_s + m t_w) SF, t_s + m t_w + l t_h CT), below the closed form.
 * Reduce: every contribution arrives at the root in the same round and is
 * received (one port) and combined in turn, one message and one combine per
 * contribution on the complete graph (store-and-forward; exact,
 * tc_cost_reduce_linear()).
 * The 1-port checker counts p-2 violations: the root sources p-1 transfers
 * in its one round, serialised by its port as the source's naive algorithm.
 * Restrictions: none (any topology, any p, any root).
 * Memory: none besides the buffer (the dual stages what it combines).
 * Trace, p = 5, root 2: round 1: 2 -> 1, 2 -> 0, 2 -> 3, 2 -> 4.
 */
#include <stdlib.h>

#include "coll/gen.h"

/* The k-th destination of the root's sends. */
static int tc__linear_dst(int root, int k)
{
	return k < root ? root - 1 - k : k + 1;
}

int tc__gen_bcast_linear(const struct tc__gen *g, struct tc__sched *s)
{
	int err = tc__sched_initial(s, g->root, 0, 1);
	if (!err && g->p > 1)
		err = tc__sched_round(s);
	for (int k = 0; k < g->p - 1 && !err; k++) {
		struct tc__xfer x = {.src = g->root,
		                     .dst = tc__linear_dst(g->root, k),
		                     .sbuf = TC__BUF_OUT,
		                     .rbuf = TC__BUF_OUT,
		                     .op = TC__XOP_COPY,
		                     .info_lo = 0,
		                     .info_n = 1,
		                     .bytes = g->bytes};
		err = tc__sched_add(s, &x);
	}
	return err;
}

/* The closed form with the route length of every send; NAN without memory. */
static double tc__linear_formula(const struct tc__gen *g, int reduce)
{
	int *hops = malloc((size_t)(g->p > 1 ? g->p - 1 : 1) * sizeof *hops);
	if (!hops)
		return NAN;
	for (int k = 0; k < g->p - 1; k++)
		hops[k] = tc_topo_distance(g->t, g->root, tc__linear_dst(g->root, k));
	double t = reduce ? tc_cost_reduce_linear(g->md, g->p, (double)g->bytes, hops)
	                  : tc_cost_bcast_linear(g->md, g->p, (double)g->bytes, hops);
	free(hops);
	return t;
}

double tc__f_bcast_linear(const struct tc__gen *g)
{
	return tc__linear_formula(g, 0);
}

double tc__f_reduce_linear(const struct tc__gen *g)
{
	return tc__linear_formula(g, 1);
}
