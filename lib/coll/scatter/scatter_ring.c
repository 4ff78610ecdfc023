/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/scatter/scatter_ring.c - pipelined personalised broadcast along a
 * ring ([Goubault-ring], "diffusion personnalisée", slides 14-19).
 *
 * Ring positions are counted from the root (position 0; node at position i
 * is tc__ring_node(t, tc__ring_pos(t, root) + i)).  In step k = 0 .. p-2 the
 * root sends the block of position p-1-k (the farthest first), and every
 * position i in [1, p-2] forwards to position i+1 the block it received in
 * step k-1 when that block is not its own.  Block j leaves the root in step
 * p-1-j and moves one link per step, so every block reaches its owner in
 * step p-2: p-1 steps, all links of the path busy from their first use.
 * In step k position i receives the block of position p-2+i-k (k >= i-1):
 * into TMP (slot k mod 2) while that is not its own, into OUT in step p-2;
 * it forwards, in step k >= i, the block received in step k-1, from TMP.
 * The root copies its own block IN -> OUT locally (step 0).
 * Gather (the dual, TC__ALG_DUAL): the nearest block first, each node
 * sending its own block then forwarding its successors' towards the root.
 *
 * Cost: tc_cost_scatter_ring() (include/topocoll/cost.h): p-1 steps of one
 * neighbour message of m bytes; exact.  A forwarding position sends and
 * receives in the same step on two different links: with one half-duplex port
 * (p >= 3) that does not hold and the formula is NAN.
 * Restrictions: ring, complete graph (ring order 0..p-1), hypercube (the
 * Gray-code ring); TC_ENOTSUP elsewhere.  Any p, any root.
 * Memory: TMP of 2 m per rank (the block in flight and the one arriving).
 * Trace, ring p = 4, root 1 (positions 0..3 = nodes 1, 2, 3, 0; b_v: the
 * block of node v):
 *   step 0:  1 -> 1 b1 (local),  1 -> 2 b0
 *   step 1:  1 -> 2 b3,          2 -> 3 b0
 *   step 2:  1 -> 2 b2 (OUT),    2 -> 3 b3 (OUT),  3 -> 0 b0 (OUT)
 */
#include "coll/gen.h"

int tc__gen_scatter_ring(const struct tc__gen *g, struct tc__sched *s)
{
	if (!tc__ring_embeds(g->t))
		return TC_ENOTSUP;
	const int p = g->p;
	const uint64_t m = g->bytes;
	const int r0 = tc__ring_pos(g->t, g->root);
	s->tmp_bytes = p > 2 ? 2 * m : 0;
	int err = tc__sched_initial(s, g->root, 0, p);
	if (!err)
		err = tc__sched_round(s);
	if (!err)
		err = tc__emit(s, g->root, g->root, TC__BUF_IN, (uint64_t)g->root * m, TC__BUF_OUT,
		               0, m, TC__XOP_COPY);
	for (int k = 0; k < p - 1 && !err; k++) {
		if (k)
			err = tc__sched_round(s);
		/* Position i sends in step k the block of position p-1+i-k (the
		 * root: i = 0, block p-1-k, from IN). */
		for (int i = 0; i <= k && i < p - 1 && !err; i++) {
			int src = tc__ring_node(g->t, r0 + i), dst = tc__ring_node(g->t, r0 + i + 1);
			int j = tc__ring_node(g->t, r0 + p - 1 + i - k);
			int last = k == p - 2; /* the block reaches its owner */
			struct tc__xfer x = {.src = src,
			                     .dst = dst,
			                     .op = TC__XOP_COPY,
			                     .sbuf = i ? TC__BUF_TMP : TC__BUF_IN,
			                     .soff = i ? (uint64_t)((k - 1) & 1) * m : (uint64_t)j * m,
			                     .rbuf = last ? TC__BUF_OUT : TC__BUF_TMP,
			                     .roff = last ? 0 : (uint64_t)(k & 1) * m,
			                     .info_lo = j,
			                     .info_n = 1,
			                     .bytes = m};
			err = tc__sched_add(s, &x);
		}
	}
	return err;
}

static double tc__scatter_ring_formula(const struct tc__gen *g, int gather)
{
	const struct tc_model *md = g->md;
	if (g->p > 2 && md->duplex != TC_DUPLEX_FULL && md->ports != TC_PORTS_ALL)
		return NAN;
	return gather ? tc_cost_gather_ring(md, g->p, (double)g->bytes)
	              : tc_cost_scatter_ring(md, g->p, (double)g->bytes);
}

double tc__f_scatter_ring(const struct tc__gen *g)
{
	return tc__scatter_ring_formula(g, 0);
}

double tc__f_gather_ring(const struct tc__gen *g)
{
	return tc__scatter_ring_formula(g, 1);
}
