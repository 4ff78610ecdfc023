/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/barrier/barrier_allreduce.c - a barrier as an allreduce of
 * nothing ([Barnat-IB109]: "Kompletní redukce ... může být použito pro realizaci
 * synchronizačního primitiva": no rank can finish an allreduce before every
 * rank has contributed).
 *
 * The schedule is lib/coll/allreduce/allreduce_hypercube.c's with m = 0:
 * for p = 2^d, d rounds of empty exchanges v <-> v XOR 2^i; otherwise the
 * fold-in round, the exchange among the first 2^k ranks and the round back,
 * k + 2 rounds with k = floor(log2 p).  Every rank's exit depends on a
 * message chain from every rank (the exchange is a butterfly), so it
 * synchronises.
 *
 * Cost: tc_cost_allreduce_hypercube_fold() at m = 0, where
 * allreduce_hypercube.c's holds; for p = 2^d on a hypercube or complete graph
 * that is tc_cost_barrier_allreduce(md, p, 0).  Difference: for p not a
 * power of two tc_cost_barrier_allreduce() assumes a reduce-then-broadcast
 * of 2 ceil(log2 p) rounds; this schedule takes k + 2 rounds (p = 6: 4, not 6),
 * and the value returned is the fold-in's (see allreduce_hypercube.c).
 * Restrictions: none (any topology, any p >= 1).
 * Memory: none (messages of 0 bytes).
 *
 * Trace, p = 6: 4 -> 0, 5 -> 1;  0 <-> 1, 2 <-> 3;  0 <-> 2, 1 <-> 3;
 * 0 -> 4, 1 -> 5.
 */
#include "coll/gen.h"

int tc__gen_barrier_allreduce(const struct tc__gen *g, struct tc__sched *s)
{
	struct tc__gen h = *g;
	h.bytes = 0;
	return tc__gen_allreduce_hypercube(&h, s);
}

double tc__f_barrier_allreduce(const struct tc__gen *g)
{
	struct tc__gen h = *g;
	h.bytes = 0;
	return tc__f_allreduce_hypercube(&h); /* tc_cost_allreduce_hypercube_fold() at m = 0 */
}
