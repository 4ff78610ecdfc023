/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/reduce_scatter/reduce_scatter_hypercube.c - all-to-all reduction
 * on a hypercube by recursive halving ([Barnat-IB109], "all-to-all reduction on a
 * hypercube: the dual procedure; after each phase the volume of the messages
 * is halved"), the dual of allgather_hypercube.c.
 *
 * Step k = d-1 .. 0: before it node v holds partial sums for the 2^(k+1)
 * blocks [v & ~(2^(k+1) - 1), + 2^(k+1)); it sends the half of its partner
 * w = v ^ 2^k, [w & ~(2^k - 1), + 2^k), and combines the partner's partial
 * for its own half into it.  After step 0 it holds its one block, reduced
 * over every rank, and copies it to OUT (a local transfer, after the last
 * combine in the same round).  The first step reads IN (its combines take
 * IN as the other operand), later ones TMP.  The lower rank's partial is the
 * left operand; the partials are sums over interleaved sets of ranks, so the
 * operator must be commutative.
 *
 * Cost: tc_cost_reduce_scatter_hypercube() (include/topocoll/cost.h): for each
 * i = 1 .. d a step of one message of 2^{i-1} m bytes each way and its
 * combine.  Exact under full duplex (NAN under half duplex, as the allgather).
 * Restrictions: p a power of two, hypercube or complete graph.
 * Memory: TMP of p m bytes (block j's partial at j m, its offset in IN).
 *
 * Trace, p = 4: step 1: 0<->2 and 1<->3, 2 blocks each way (0 sends x_2..3);
 *               step 0: 0<->1 and 2<->3, 1 block each way; TMP -> OUT.
 */
#include "coll/gen.h"

int tc__gen_reduce_scatter_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	enum tc_topo_kind kind = tc_topo_kind(g->t);
	const int p = g->p, d = tc__log2_exact(p);
	if (d < 0 || (kind != TC_TOPO_HYPERCUBE && kind != TC_TOPO_COMPLETE))
		return TC_ENOTSUP;
	const uint64_t m = g->bytes;
	int err = tc__sched_round(s);
	if (p == 1)
		return err ? err : tc__emit(s, 0, 0, TC__BUF_IN, 0, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	s->tmp_bytes = (uint64_t)p * m;
	for (int k = d - 1; k >= 0 && !err; k--) {
		if (k != d - 1)
			err = tc__sched_round(s);
		const int n = 1 << k, first = k == d - 1;
		for (int v = 0; v < p && !err; v++) {
			const int w = v ^ n;
			const uint64_t off = (uint64_t)(w & ~(n - 1)) * m;
			err = tc__emit_from(s, v, w, first ? TC__BUF_IN : TC__BUF_TMP, off,
			                    TC__BUF_TMP, off, (uint64_t)n * m,
			                    v < w ? TC__XOP_COMBINE_LEFT : TC__XOP_COMBINE_RIGHT,
			                    first ? TC__BUF_IN : TC__BUF_TMP);
		}
	}
	for (int v = 0; v < p && !err; v++)
		err = tc__emit(s, v, v, TC__BUF_TMP, (uint64_t)v * m, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	return err;
}

double tc__f_reduce_scatter_hypercube(const struct tc__gen *g)
{
	if (g->p > 1 && g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_reduce_scatter_hypercube(g->md, g->p, (double)g->bytes);
}
