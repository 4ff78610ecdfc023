/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allreduce/allreduce_linear.c - allreduce as a linear reduce to
 * rank 0 followed by a linear broadcast from it ([Barnat-IB109]'s naive
 * all-to-one then one-to-all; lib/coll/barrier/barrier_linear.c with
 * m bytes): every rank but 0 waits once, which is what counts when ranks
 * outnumber the CPUs (lib/coll/machine.h, tc__wait_level_ns()), and every
 * vector crosses the machine twice (2 (p-1) m bytes of copies and combines,
 * against p m log2 p for hypercube), which AUTO weighs there too
 * (tc__machine_score, lib/coll/select.c).
 *
 * Round 0: every rank i > 0 sends its vector to 0, which combines them in
 * rank order (a_0 (+) a_1, then (+) a_2, ...; rank-ordered, so the registry
 * marks it ORDERED).  Round 1: 0 sends the result to 1, 2, ..., p-1.
 * Transfers to or from a rank that is not a neighbour of 0 are routed.
 *
 * Cost, every rank a neighbour of 0, one port (full or half duplex),
 * L = t_s + m t_w, msg = msg(1, m): rank 0's receives complete at msg, then
 * one every L; its p-1 combines add (p-1) m t_c at the end of the round; its
 * sends start L apart and the last arrives msg later:
 * tc_cost_allreduce_linear().  NAN for all ports or routed transfers.
 * Restrictions: none (any topology, any p >= 1).
 * Memory: rank 0 stages the p-1 received vectors of round 0 ((p-1) m bytes).
 * Trace, p = 5: round 0: 1->0 2->0 3->0 4->0 (combined in that order);
 * round 1: 0->1 0->2 0->3 0->4.
 */
#include "coll/gen.h"

int tc__gen_linear_gather_release(const struct tc__gen *g, struct tc__sched *s, int gather_op)
{
	int p = g->p, err = 0;
	if (p == 1)
		return 0;
	err = tc__sched_round(s);
	for (int i = 1; i < p && !err; i++)
		err = tc__emit(s, i, 0, TC__BUF_OUT, 0, TC__BUF_OUT, 0, g->bytes, gather_op);
	if (!err)
		err = tc__sched_round(s);
	for (int i = 1; i < p && !err; i++)
		err = tc__emit(s, 0, i, TC__BUF_OUT, 0, TC__BUF_OUT, 0, g->bytes, TC__XOP_COPY);
	return err;
}

int tc__neighbours_of_0(const struct tc_topo *t, int p)
{
	for (int i = 1; i < p; i++)
		if (tc_topo_distance(t, 0, i) != 1 || tc_topo_distance(t, i, 0) != 1)
			return 0;
	return 1;
}

int tc__gen_allreduce_linear(const struct tc__gen *g, struct tc__sched *s)
{
	return tc__gen_linear_gather_release(g, s, TC__XOP_COMBINE_RIGHT);
}

double tc__f_allreduce_linear(const struct tc__gen *g)
{
	if (g->p > 1 && (!tc__neighbours_of_0(g->t, g->p) || g->md->ports != TC_PORTS_ONE))
		return NAN;
	return tc_cost_allreduce_linear(g->md, g->p, (double)g->bytes);
}
