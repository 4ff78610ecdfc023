/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allgather/allgather_ring.c - all-to-all broadcast around a ring
 * ([Barnat-IB109], "all-to-all broadcast on a ring"; [Goubault-ring]'s total exchange).
 *
 * Every position of the ring sends to the next one: in step s = 0 .. p-2,
 * position i passes on the block that originated at position i - s (its own
 * at s = 0, then the one it received in the step before).  After p-1 steps
 * every block has travelled p-1 links and reached everybody.
 *
 * Cost: tc_cost_allgather_ring() (include/topocoll/cost.h): p-1 steps of one
 * neighbour message of m bytes.  Exact under full duplex; with one half-duplex
 * port (or p = 2 on its single link) a step's send and receive share the port
 * and the formula does not apply (NAN).
 * Restrictions: ring, complete graph (ring order 0, 1, ..., p-1), hypercube
 * (the binary-reflected Gray-code ring: position i is node tc_gray(i));
 * TC_ENOTSUP elsewhere.  Any p.
 * Buffers: IN is the rank's block, OUT the p blocks (rank r's at r m); the
 * own block is copied IN -> OUT in step 0 (a local transfer, free), and a
 * step-0 send reads IN, later ones read OUT.
 * Memory: none besides the buffers.
 *
 * Trace, ring p = 3 (blocks named by their origin):
 *   step 0:  0 -> 1 b0,  1 -> 2 b1,  2 -> 0 b2
 *   step 1:  0 -> 1 b2,  1 -> 2 b0,  2 -> 0 b1
 */
#include "allgather_lines.h"

int tc__allgather_own(const struct tc__gen *g, struct tc__sched *s)
{
	const uint64_t m = g->bytes;
	int err = 0;
	for (int v = 0; v < g->p && !err; v++)
		err = tc__sched_initial(s, v, v, 1);
	for (int v = 0; v < g->p && !err; v++)
		err = tc__emit(s, v, v, TC__BUF_IN, 0, TC__BUF_OUT, (uint64_t)v * m, m, TC__XOP_COPY);
	return err;
}

int tc__gen_allgather_ring(const struct tc__gen *g, struct tc__sched *s)
{
	if (!tc__ring_embeds(g->t))
		return TC_ENOTSUP;
	const int p = g->p;
	const uint64_t m = g->bytes;
	int err = tc__sched_round(s);
	if (!err)
		err = tc__allgather_own(g, s);
	for (int st = 0; st < p - 1 && !err; st++) {
		if (st)
			err = tc__sched_round(s);
		for (int i = 0; i < p && !err; i++) {
			int src = tc__ring_node(g->t, i), dst = tc__ring_node(g->t, i + 1);
			int owner = tc__ring_node(g->t, i - st);
			uint64_t off = (uint64_t)owner * m;
			struct tc__xfer x = {.src = src,
			                     .dst = dst,
			                     .sbuf = st ? TC__BUF_OUT : TC__BUF_IN,
			                     .rbuf = TC__BUF_OUT,
			                     .op = TC__XOP_COPY,
			                     .info_lo = owner,
			                     .info_n = 1,
			                     .soff = st ? off : 0,
			                     .roff = off,
			                     .bytes = m};
			err = tc__sched_add(s, &x);
		}
	}
	return err;
}

double tc__f_allgather_ring(const struct tc__gen *g)
{
	const struct tc_model *md = g->md;
	if (g->p > 1 && md->duplex != TC_DUPLEX_FULL && !(md->ports == TC_PORTS_ALL && g->p >= 3))
		return NAN;
	return tc_cost_allgather_ring(md, g->p, (double)g->bytes);
}
