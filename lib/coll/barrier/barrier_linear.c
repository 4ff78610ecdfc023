/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/barrier/barrier_linear.c - the linear (central, gather/release)
 * barrier: every rank reports to rank 0, which releases every rank (Open
 * MPI's basic linear barrier; [Barnat-IB109]'s naive all-to-one then one-to-all,
 * the dual of bcast_linear.c followed by it, with empty messages).
 *
 * Round 0 (gather): every rank i > 0 sends an empty message to 0, in rank
 * order.  Round 1 (release): 0 sends an empty message to 1, 2, ..., p-1.
 * Why it synchronises: 0 enters round 1 only once it has heard from every
 * rank, and every other rank leaves only once 0 has.  Transfers to or from a
 * rank that is not a neighbour of 0 are routed by the executor.
 *
 * Why it exists: every rank but 0 waits once per barrier (for the release),
 * against ceil(log2 p) times for dissemination.  When ranks outnumber the
 * CPUs a wait usually means a context switch, which costs microseconds
 * (lib/coll/machine.h, TC__SWITCH_NS), far more than the serialised
 * receives and sends of rank 0 (about 0.1 us each).  Measured on 2 CPUs,
 * complete:64, waits by sched_yield: 100 us and 78 context switches per
 * barrier, against 420 us and 270 for dissemination (p = 8: 18 against
 * 25 us; p = 4: 8 against 6 us, where dissemination's 2 rounds win).  The
 * model charges the opposite, since its one port serialises rank 0's
 * messages; lib/coll/machine.h (tc__wait_level_ns()) gives the price of a
 * round when ranks outnumber the CPUs.
 *
 * Cost, every rank a neighbour of 0 (complete graph; star with hub 0),
 * m = 0, msg = msg(1, 0) = t_s [+ t_h cut-through]: in the gather rank 0
 * takes its p-1 receives in turn, the first at msg, then one every t_s
 * (lib/model/clock.h, receive rule), and it starts the release at
 * msg + (p-2) t_s; its k-th send (k from 0) starts k t_s later and arrives
 * msg after that: tc_cost_barrier_linear() at m = 0, under one port (full
 * or half duplex) or all ports.  Half duplex changes nothing: rank 0 never
 * sends and receives at once and the others' single message is long done.
 * NAN when some rank is not a neighbour of 0 (routed transfers).
 * The 1-port checker counts 2(p-2) violations under one port: rank 0
 * receives p-1 transfers in round 0 and sources p-1 in round 1, serialised
 * by its ports as the source's naive algorithm.
 * Restrictions: none (any topology, any p >= 1).
 * Memory: none (messages of 0 bytes); rank 0 posts p-1 receives and p-1
 * sends per barrier.
 *
 * Trace, p = 5:
 *   round 0:  1->0 2->0 3->0 4->0
 *   round 1:  0->1 0->2 0->3 0->4
 */
#include "coll/gen.h"

int tc__gen_barrier_linear(const struct tc__gen *g, struct tc__sched *s)
{
	struct tc__gen h = *g;
	h.bytes = 0;
	return tc__gen_linear_gather_release(&h, s, TC__XOP_COPY);
}

double tc__f_barrier_linear(const struct tc__gen *g)
{
	if (g->p > 1 && !tc__neighbours_of_0(g->t, g->p))
		return NAN;
	return tc_cost_barrier_linear(g->md, g->p, 0.0);
}
