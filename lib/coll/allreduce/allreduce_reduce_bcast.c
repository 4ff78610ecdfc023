/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allreduce/allreduce_reduce_bcast.c - allreduce as a reduction to
 * rank 0 followed by a broadcast from rank 0 ([Barnat-IB109], "Kompletní redukce":
 * "ATO redukce následovaná OTA vysíláním"), both over the binomial tree with
 * contiguous subtrees, routed where the partners are not neighbours.
 *
 * L = ceil(log2 p).  Broadcast (second half), bits i = L-1 down to 0, one
 * round each: every v that is a multiple of 2^(i+1) with v + 2^i < p sends
 * the result to v + 2^i.  The subtree of v below bit i is the contiguous
 * range [v, min(v + 2^(i+1), p)).
 * Reduction (first half), its dual: bits i = 0 up to L-1: every such v
 * receives the partial result of v + 2^i and combines it on the right of its
 * own (COMBINE_RIGHT: own data left).
 *
 * Order (why non-commutative operators are allowed, TC__ALG_ORDERED).
 * Claim: after the reduction round of bit i, every v that is a multiple of
 * 2^(i+1) holds P(v, min(v + 2^(i+1), p)), where P(a, b) = a_a (+) a_(a+1)
 * (+) ... (+) a_(b-1) in rank order.  Before round 0 each v holds
 * P(v, v + 1) = a_v, the case "bit -1".  Round i: v (a multiple of 2^(i+1),
 * hence of 2^i) holds P(v, min(v + 2^i, p)) by the claim for bit i-1.  If
 * v + 2^i >= p, v receives nothing and min(v + 2^i, p) = p =
 * min(v + 2^(i+1), p).  Otherwise v + 2^i, also a multiple of 2^i, holds
 * P(v + 2^i, min(v + 2^(i+1), p)), and v computes
 * P(v, v + 2^i) (+) P(v + 2^i, min(v + 2^(i+1), p)) = P(v, min(v + 2^(i+1), p))
 * by associativity alone (the two ranges are adjacent, lower one on the
 * left).  A rank that sent in round i sends nothing afterwards (it is not a
 * multiple of 2^(i+1)), so no partial result is used twice.  After bit L-1,
 * rank 0 holds P(0, p); the broadcast only copies it.  Every rank thus gets
 * a_0 (+) a_1 (+) ... (+) a_(p-1), bit-identical on every rank.
 *
 * Cost ([Barnat-IB109]: "twice the broadcast"), every tree edge between neighbours
 * (hypercube, complete graph), msg = t_s + m t_w (+ t_h under cut-through):
 *   p = 2^d:  tc_cost_allreduce_reduce_bcast() (include/topocoll/cost.h),
 *             exactly: d reduce rounds of one message and one combine, then
 *             d broadcast rounds of one message.
 * Otherwise the formula (with L = ceil(log2 p)) is an upper bound: a
 * truncated subtree finishes its part early and its message waits only for
 * rank 0's receive port (one-port) or not at all (all-port: it comes over
 * another link), not for rank 0's previous combine; and the chains that would
 * cross a link in every round do not exist.  It is exact under the one-port
 * model when neither t_c nor t_h is charged; e.g. p = 3, one-port,
 * store-and-forward costs 4 msg + m t_c, not 4 msg + 2 m t_c (in general
 * 2 L msg + (L-1) m t_c when m t_c <= msg), and p = 10 all-port with t_c = 0
 * costs 7 msg, not 8.
 * tc__f_allreduce_reduce_bcast() returns the formula where it is exact and
 * NAN elsewhere (and for routed trees, whose cost depends on the routes).
 * Restrictions: none (any topology, any p >= 1, m = 0 included).
 * Memory: none besides the buffer.
 *
 * Trace, p = 6 (L = 3):
 *   reduce  bit 0:  1 -> 0, 3 -> 2, 5 -> 4     0: P(0,2)  2: P(2,4)  4: P(4,6)
 *   reduce  bit 1:  2 -> 0                     0: P(0,4)  (4 + 2 >= 6: idle)
 *   reduce  bit 2:  4 -> 0                     0: P(0,6)
 *   bcast   bit 2:  0 -> 4
 *   bcast   bit 1:  0 -> 2
 *   bcast   bit 0:  0 -> 1, 2 -> 3, 4 -> 5
 */
#include "coll/gen.h"

int tc__gen_allreduce_reduce_bcast(const struct tc__gen *g, struct tc__sched *s)
{
	int p = g->p;
	int L = tc_cost_log2_ceil(p);
	int err = 0;
	for (int i = 0; i < L && !err; i++) {
		err = tc__sched_round(s);
		int h = 1 << i;
		for (int v = 0; v + h < p && !err; v += 2 * h)
			err = tc__emit(s, v + h, v, TC__BUF_OUT, 0, TC__BUF_OUT, 0, g->bytes,
			               TC__XOP_COMBINE_RIGHT);
	}
	for (int i = L - 1; i >= 0 && !err; i--) {
		err = tc__sched_round(s);
		int h = 1 << i;
		for (int v = 0; v + h < p && !err; v += 2 * h)
			err = tc__emit(s, v, v + h, TC__BUF_OUT, 0, TC__BUF_OUT, 0, g->bytes,
			               TC__XOP_COPY);
	}
	return err;
}

/* Where tc_cost_allreduce_reduce_bcast() is the modelled time (the header):
 * every tree edge v -- v + h a link, and, for p not a power of two, one port
 * and nothing charged that the unequal subtrees would make uneven (combines
 * of non-empty messages, t_h under cut-through). */
static int tc__ar_rb_exact(const struct tc__gen *g)
{
	const struct tc_model *md = g->md;
	const int p = g->p;
	for (int h = 1; h < p; h <<= 1)
		for (int v = 0; v + h < p; v += 2 * h)
			if (tc_topo_distance(g->t, v, v + h) != 1)
				return 0;
	int charged = (g->bytes && md->tc_ns != 0.0) ||
	              (md->switching == TC_SWITCH_CT && md->th_ns != 0.0);
	return tc__log2_exact(p) >= 0 || !(charged || md->ports != TC_PORTS_ONE);
}

double tc__f_allreduce_reduce_bcast(const struct tc__gen *g)
{
	if (g->p > 1 && !tc__ar_rb_exact(g))
		return NAN;
	return tc_cost_allreduce_reduce_bcast(g->md, g->p, (double)g->bytes);
}
