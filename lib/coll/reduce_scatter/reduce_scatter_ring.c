/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/reduce_scatter/reduce_scatter_ring.c - all-to-all reduction
 * around a ring ([Barnat-IB109], "all-to-all reduction: the messages go round the
 * ring one at a time; passing a node, the node's own message for the
 * destination of the passing message is combined into it"), the dual of
 * allgather_ring.c.
 *
 * The partial sum for ring position j starts at position j + 1 and moves one
 * position per step: in step s = 0 .. p-2, position i sends to i + 1 the
 * partial for position i - 1 - s (its own IN block at s = 0, later the sum
 * it made in the step before), and i + 1 combines it with its own IN block
 * for that destination.  In step p-2 the partial reaches its destination,
 * having collected every other contribution; the destination combines it
 * straight into OUT, where round 0 copied its own block (a local transfer).
 * Combines take the lower rank's data on the left, so commutative operators
 * only: the ring wraps and no order is the rank order for every p.
 *
 * Cost: tc_cost_reduce_scatter_ring() (include/topocoll/cost.h): p-1 steps of
 * one neighbour message of m bytes and its combine.  Exact under full duplex;
 * with one half-duplex port (or p = 2 on its single link) NAN, as
 * allgather_ring.c.
 * Restrictions: ring, complete graph, hypercube (Gray-code ring); any p.
 * Memory: TMP of p m bytes (partial of destination j at j m, the offset of
 * its operand in IN).
 *
 * Trace, ring p = 3 (x_j^r: rank r's block for j):
 *   step 0: 0->1 x_2^0, 1->2 x_0^1, 2->0 x_1^2   (1: t_2 = x_2^0 + x_2^1 ...)
 *   step 1: 0->1 t_1, 1->2 t_2, 2->0 t_0         (into OUT: the results)
 */
#include "coll/gen.h"

int tc__gen_reduce_scatter_ring(const struct tc__gen *g, struct tc__sched *s)
{
	if (!tc__ring_embeds(g->t))
		return TC_ENOTSUP;
	const int p = g->p;
	const uint64_t m = g->bytes;
	s->tmp_bytes = p > 2 ? (uint64_t)p * m : 0;
	int err = tc__sched_round(s);
	for (int v = 0; v < p && !err; v++)
		err = tc__emit(s, v, v, TC__BUF_IN, (uint64_t)v * m, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	for (int st = 0; st < p - 1 && !err; st++) {
		if (st)
			err = tc__sched_round(s);
		const int last = st == p - 2;
		for (int i = 0; i < p && !err; i++) {
			int src = tc__ring_node(g->t, i), dst = tc__ring_node(g->t, i + 1);
			int j = tc__ring_node(g->t, i - 1 - st);
			uint64_t off = (uint64_t)j * m;
			int op = src < dst ? TC__XOP_COMBINE_LEFT : TC__XOP_COMBINE_RIGHT;
			if (last) /* j == dst: into OUT, with its own block there */
				err = tc__emit_from(s, src, dst, st ? TC__BUF_TMP : TC__BUF_IN, off,
				                    TC__BUF_OUT, 0, m, op, TC__BUF_OUT);
			else
				err = tc__emit_from(s, src, dst, st ? TC__BUF_TMP : TC__BUF_IN, off,
				                    TC__BUF_TMP, off, m, op, TC__BUF_IN);
		}
	}
	return err;
}

double tc__f_reduce_scatter_ring(const struct tc__gen *g)
{
	const struct tc_model *md = g->md;
	if (g->p > 1 && md->duplex != TC_DUPLEX_FULL && !(md->ports == TC_PORTS_ALL && g->p >= 3))
		return NAN;
	return tc_cost_reduce_scatter_ring(md, g->p, (double)g->bytes);
}
