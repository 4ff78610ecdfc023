/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/alltoall/alltoall_ecube.c - all-to-all personalised communication
 * by pairwise exchange, e-cube routed ([Barnat-IB109], ALL-TO-ALL-PERSONAL).
 *
 *   for i := 1 to p - 1: partner := me XOR i; send M[partner] to partner,
 *                        receive partner's block for me.
 * Each step is one block each way, sent straight from IN to the partner's
 * OUT.  Partners that are not neighbours are reached by the IR's routing,
 * e-cube on a hypercube (flip the lowest differing bit first,
 * lib/topo/topo_route.c); under cut-through the executor forwards packets.
 * Why no link is contended: in step i, hop k of every message crosses the
 * dimension of the k-th set bit of i from the node me ^ (the lower set bits
 * of i), a bijection of me, so no two messages share a directed link, and
 * different hops of a step cross different dimensions.
 *
 * Cost: tc_cost_alltoall_ecube() (include/topocoll/cost.h): p - 1 steps of
 * one block each way, step i crossing popcount(i) links, d p / 2 links in
 * all; under cut-through a step costs one start-up and one t_h per link
 * (the source's formula is the case t_h = 0), under store-and-forward every
 * link costs t_s + t_w m.  On a complete graph every partner is a neighbour:
 * tc_cost_alltoall_pairwise().  Exact under full duplex; half duplex: NAN.
 * Restrictions: p a power of two; hypercube, complete graph.
 * Memory: none besides the buffers.
 * Checker: piece a p + b is a's block for b.
 *
 * Trace, p = 4 (hypercube:2):
 *   round 0: own block IN -> OUT; 0 <-> 1, 2 <-> 3       (1 link)
 *   round 1: 0 <-> 2, 1 <-> 3                            (1 link)
 *   round 2: 0 <-> 3 via 1 and 2, 1 <-> 2 via 0 and 3    (2 links)
 */
#include "coll/gen.h"

int tc__gen_alltoall_ecube(const struct tc__gen *g, struct tc__sched *s)
{
	const enum tc_topo_kind kind = tc_topo_kind(g->t);
	const int p = g->p;
	if (tc__log2_exact(p) < 0 || (kind != TC_TOPO_HYPERCUBE && kind != TC_TOPO_COMPLETE))
		return TC_ENOTSUP;
	const uint64_t m = g->bytes;
	int err = tc__pieces_p2(g, "ecube");
	if (err)
		return err;
	err = tc__sched_round(s);
	for (int v = 0; v < p && !err; v++)
		err = tc__sched_initial(s, v, v * p, p);
	for (int v = 0; v < p && !err; v++)
		err = tc__emit(s, v, v, TC__BUF_IN, (uint64_t)v * m, TC__BUF_OUT, (uint64_t)v * m,
		               m, TC__XOP_COPY);
	for (int i = 1; i < p && !err; i++) {
		if (i > 1)
			err = tc__sched_round(s);
		for (int v = 0; v < p && !err; v++) {
			int w = v ^ i;
			struct tc__xfer x = {.src = v,
			                     .dst = w,
			                     .sbuf = TC__BUF_IN,
			                     .rbuf = TC__BUF_OUT,
			                     .op = TC__XOP_COPY,
			                     .info_lo = v * p + w,
			                     .info_n = 1,
			                     .soff = (uint64_t)w * m,
			                     .roff = (uint64_t)v * m,
			                     .bytes = m};
			err = tc__sched_add(s, &x);
		}
	}
	return err;
}

double tc__f_alltoall_ecube(const struct tc__gen *g)
{
	if (g->p > 1 && g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	if (tc_topo_kind(g->t) == TC_TOPO_COMPLETE) /* every partner a neighbour */
		return tc_cost_alltoall_pairwise(g->md, g->p, (double)g->bytes);
	return tc_cost_alltoall_ecube(g->md, g->p, (double)g->bytes);
}
