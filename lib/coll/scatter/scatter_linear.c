/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/scatter/scatter_linear.c - one-to-all personalised communication
 * by p-1 direct sends from the root (the naive scatter: the personalised
 * counterpart of [Barnat-IB109]'s naive One-To-All, bcast_linear.c).
 *
 * One round: the root copies its own block IN -> OUT (a local transfer) and
 * sends block j of IN to rank j's OUT, in the order root-1, ..., 0, root+1,
 * ..., p-1 (bcast_linear.c's order); the one-port rule serialises the sends
 * on its port, and transfers to non-neighbours are routed by the executor.
 * Gather (the dual, TC__ALG_DUAL): every rank sends its IN to the root's OUT
 * block, the root receiving them in turn.  Where routes are longer than one
 * link its modelled time may differ from the scatter's: the routed messages
 * start together and meet at the forwarders instead of leaving the root one
 * after the other (star:3, root 1, SF: scatter 3 msg(1, m), gather 2); on the
 * complete graph both are (p-1) msg(1, m).
 *
 * Cost: tc_cost_scatter_linear(), sum over the destinations k of msg(h_k, m)
 * (h_k the route length to the k-th destination), as bcast_linear.c: exact
 * where every destination is a neighbour (complete graph; under SF).  With
 * routes longer than one link the closed form charges blocking sends,
 * whereas the logical clock frees the root's port after the first hop
 * (cost.h, tc_cost_bcast_linear()): the modelled time is then below the
 * closed form, and at least (p-1) msg(1, m).  The 1-port checker counts p-2
 * violations (the root sources p-1 transfers in its one round).
 * Restrictions: none (any topology, any p, any root).
 * Memory: none besides the buffers.
 * Trace, p = 5, root 2: round 1: 2 -> 2 (local, block 2), 2 -> 1 (block 1),
 * 2 -> 0 (block 0), 2 -> 3 (block 3), 2 -> 4 (block 4).
 */
#include <stdlib.h>

#include "coll/gen.h"

/* The k-th destination of the root's sends (bcast_linear.c's order). */
static int tc__scatter_linear_dst(int root, int k)
{
	return k < root ? root - 1 - k : k + 1;
}

int tc__gen_scatter_linear(const struct tc__gen *g, struct tc__sched *s)
{
	const uint64_t m = g->bytes;
	int err = tc__sched_initial(s, g->root, 0, g->p);
	if (!err)
		err = tc__sched_round(s);
	if (!err)
		err = tc__emit(s, g->root, g->root, TC__BUF_IN, (uint64_t)g->root * m, TC__BUF_OUT,
		               0, m, TC__XOP_COPY);
	for (int k = 0; k < g->p - 1 && !err; k++) {
		int j = tc__scatter_linear_dst(g->root, k);
		struct tc__xfer x = {.src = g->root,
		                     .dst = j,
		                     .sbuf = TC__BUF_IN,
		                     .rbuf = TC__BUF_OUT,
		                     .op = TC__XOP_COPY,
		                     .info_lo = j,
		                     .info_n = 1,
		                     .soff = (uint64_t)j * m,
		                     .bytes = m};
		err = tc__sched_add(s, &x);
	}
	return err;
}

/* The closed form with the route length of every send; NAN without memory. */
static double tc__scatter_linear_formula(const struct tc__gen *g, int gather)
{
	int *hops = malloc((size_t)(g->p > 1 ? g->p - 1 : 1) * sizeof *hops);
	if (!hops)
		return NAN;
	for (int k = 0; k < g->p - 1; k++)
		hops[k] = tc_topo_distance(g->t, g->root, tc__scatter_linear_dst(g->root, k));
	double t = gather ? tc_cost_gather_linear(g->md, g->p, (double)g->bytes, hops)
	                  : tc_cost_scatter_linear(g->md, g->p, (double)g->bytes, hops);
	free(hops);
	return t;
}

double tc__f_scatter_linear(const struct tc__gen *g)
{
	return tc__scatter_linear_formula(g, 0);
}

double tc__f_gather_linear(const struct tc__gen *g)
{
	return tc__scatter_linear_formula(g, 1);
}
