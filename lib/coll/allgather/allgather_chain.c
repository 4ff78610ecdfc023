/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allgather/allgather_chain.c - all-to-all broadcast on a chain
 * (linear array) ([Barnat-IB109], "chain: send to the neighbours on both sides;
 * full-duplex links: n - 1 phases, half-duplex links: 2(n - 1) phases").
 *
 * Two streams run along the chain: rightwards, node i passes to i + 1 in
 * phase s the block of node i - s (its own at s = 0, then the one received
 * from the left in phase s - 1); leftwards, node i passes to i - 1 the block
 * of node i + s.  Under full duplex (md->duplex) both streams share a phase,
 * p - 1 phases; under half duplex a link carries one direction at a time and
 * the streams alternate, phase 2u right and 2u + 1 left, 2(p - 1) phases.
 * (The same code is the mesh algorithm's phase along a mesh line,
 * allgather_mesh.c.)
 *
 * Cost: tc_cost_allgather_chain() (include/topocoll/cost.h), one neighbour
 * message of m bytes per phase, tc_cost_allgather_chain_steps() phases.
 * Full duplex: exact under the all-port model, where a node's two links work
 * at once, and for p <= 2.  Half duplex (all-port): the source counts 2(p - 1)
 * lock-step phases, but the logical clock has no barrier between rounds: a
 * node that sat out a phase starts its next transfer at once, the two
 * streams interleave, and the modelled time is floor((3p - 1)/2) msg(1, m)
 * for p >= 2 (p = 3: 4 = 2(p - 1); p = 4: 5 instead of 6); the source's value
 * is then an upper bound (tc__f_allgather_chain() returns it; the test
 * asserts both).  With one port (p >= 3) an inner node sends two blocks per
 * full-duplex phase, or sends and receives on its one port in a half-duplex
 * phase: about twice the formula; tc__f_allgather_chain() is NAN there.
 * Restrictions: chain and ring (used as a chain: the link p-1 -- 0 idle);
 * TC_ENOTSUP elsewhere.  Any p.  Memory: none besides the buffers.
 *
 * Trace, chain p = 3, full duplex:
 *   phase 0:  0->1 b0, 1->2 b1, 1->0 b1, 2->1 b2
 *   phase 1:  1->2 b0, 1->0 b2
 * half duplex: phase 0: 0->1 b0, 1->2 b1; 1: 1->0 b1, 2->1 b2; 2: 1->2 b0;
 * 3: 1->0 b2.
 */
#include "allgather_lines.h"

int tc__gen_allgather_chain(const struct tc__gen *g, struct tc__sched *s)
{
	enum tc_topo_kind k = tc_topo_kind(g->t);
	if (k != TC_TOPO_CHAIN && k != TC_TOPO_RING)
		return TC_ENOTSUP;
	/* A chain of p nodes in rank order: node i's neighbours are i +- 1. */
	struct tc__grid gr = {.nd = 1, .wrap = 0};
	gr.dims[0] = g->p;
	gr.stride[0] = 1;
	return tc__allgather_lines(g, s, &gr, 1);
}

double tc__f_allgather_chain(const struct tc__gen *g)
{
	const struct tc_model *md = g->md;
	if (g->p > 2 && md->ports != TC_PORTS_ALL)
		return NAN;
	return tc_cost_allgather_chain(md, g->p, (double)g->bytes);
}
