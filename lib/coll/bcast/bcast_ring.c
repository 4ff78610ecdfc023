/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/bcast/bcast_ring.c - one-to-all broadcast forwarded along a ring
 * ([Goubault-ring], "diffusion", slides 9-13: the emitter sends, every other
 * processor receives from its predecessor and sends to its successor, the
 * predecessor of the emitter only receives).
 *
 * The ring: ranks 0, 1, ..., p-1 on a ring topology and on the complete
 * graph; on a hypercube the binary-reflected Gray-code ring, position i being
 * node tc_gray(i) (consecutive positions differ in one bit: one link).
 * Positions are counted from the root's: round k (k = 0 .. p-2) sends from
 * position root+k to position root+k+1 (mod p).
 *
 * Cost ([Goubault-ring]): tc_cost_bcast_ring() (include/topocoll/cost.h),
 * p-1 rounds of one neighbour message of m bytes (under cut-through each
 * also pays t_h).  Exact: every round waits for the previous one's arrival.
 * Reduce (the dual, backwards along the ring): tc_cost_reduce_ring(), one
 * combine added to each round.
 * Restrictions: ring, complete and hypercube topologies (TC_ENOTSUP
 * elsewhere: a chain, mesh or torus has no ring through every link here).
 * Memory: none besides the buffer.
 * Trace, ring p = 5, root 3: 3 -> 4, 4 -> 0, 0 -> 1, 1 -> 2 (one per round).
 * Hypercube p = 8, root 5 (position 6; ring 0 1 3 2 6 7 5 4):
 * 5 -> 4, 4 -> 0, 0 -> 1, 1 -> 3, 3 -> 2, 2 -> 6, 6 -> 7.
 */
#include "coll/gen.h"

int tc__gen_bcast_ring(const struct tc__gen *g, struct tc__sched *s)
{
	if (!tc__ring_embeds(g->t))
		return TC_ENOTSUP;
	int p = g->p;
	int r0 = tc__ring_pos(g->t, g->root);
	int err = tc__sched_initial(s, g->root, 0, 1);
	for (int i = 0; i < p - 1 && !err; i++) {
		err = tc__sched_round(s);
		struct tc__xfer x = {.src = tc__ring_node(g->t, r0 + i),
		                     .dst = tc__ring_node(g->t, r0 + i + 1),
		                     .sbuf = TC__BUF_OUT,
		                     .rbuf = TC__BUF_OUT,
		                     .op = TC__XOP_COPY,
		                     .info_lo = 0,
		                     .info_n = 1,
		                     .bytes = g->bytes};
		if (!err)
			err = tc__sched_add(s, &x);
	}
	return err;
}

double tc__f_bcast_ring(const struct tc__gen *g)
{
	return tc_cost_bcast_ring(g->md, g->p, (double)g->bytes);
}

double tc__f_reduce_ring(const struct tc__gen *g)
{
	return tc_cost_reduce_ring(g->md, g->p, (double)g->bytes);
}
