/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/barrier/barrier_dissemination.c - the dissemination barrier
 * (DESIGN.md catalogue, "log p steps"; Hensgen, Finkel and Manber's
 * algorithm, the one of Concurrency Kit's ck_barrier_dissemination.c).
 *
 * Rounds k = 0 .. ceil(log2 p) - 1: rank i sends an empty message to
 * (i + 2^k) mod p and receives one from (i - 2^k) mod p; partners that are
 * not neighbours are reached by routed transfers.
 * Why it synchronises: after round k, rank i has (transitively) heard from
 * ranks i, i-1, ..., i - (2^(k+1) - 1) mod p: round k adds the 2^k ranks
 * heard by i - 2^k to the 2^k heard by i itself.  After ceil(log2 p) rounds
 * that is at least p consecutive ranks, i.e. all of them, so no rank leaves
 * before every rank has entered.
 *
 * Cost: tc_cost_barrier_dissemination(md, p, 0) (include/topocoll/cost.h)
 * with every partner a neighbour (complete graph; any topology for p <= 2):
 * ceil(log2 p) rounds.  Every rank sends and receives once per round, all
 * clocks stay equal and each round costs one message of 0 bytes.
 * Half duplex makes a round's send and receive share a port (one-port) or,
 * when 2^(k+1) = p, a link: the formula is then NAN, as it is for routed
 * transfers.
 * Restrictions: none (any topology, any p >= 1).
 * Memory: none (messages of 0 bytes).
 *
 * Trace, p = 5 (ceil(log2 5) = 3 rounds):
 *   k = 0:  0->1 1->2 2->3 3->4 4->0
 *   k = 1:  0->2 1->3 2->4 3->0 4->1
 *   k = 2:  0->4 1->0 2->1 3->2 4->3
 */
#include "coll/gen.h"

int tc__gen_barrier_dissemination(const struct tc__gen *g, struct tc__sched *s)
{
	int p = g->p;
	int err = 0;
	for (int h = 1; h < p && !err; h <<= 1) {
		err = tc__sched_round(s);
		for (int i = 0; i < p && !err; i++)
			err = tc__emit(s, i, (i + h) % p, TC__BUF_OUT, 0, TC__BUF_OUT, 0, 0, TC__XOP_COPY);
	}
	return err;
}

/* Where tc_cost_barrier_dissemination() is the modelled time (the header):
 * full duplex, every partner i + 2^k a neighbour of i. */
static int tc__diss_exact(const struct tc__gen *g)
{
	const int p = g->p;
	if (g->md->duplex != TC_DUPLEX_FULL)
		return 0;
	for (int h = 1; h < p; h <<= 1)
		for (int i = 0; i < p; i++)
			if (tc_topo_distance(g->t, i, (i + h) % p) != 1)
				return 0;
	return 1;
}

double tc__f_barrier_dissemination(const struct tc__gen *g)
{
	if (g->p > 1 && !tc__diss_exact(g))
		return NAN;
	return tc_cost_barrier_dissemination(g->md, g->p, 0.0);
}
