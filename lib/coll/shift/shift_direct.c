/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shift/shift_direct.c - circular q-shift by one routed transfer
 * per rank ([Gergel-shift]'s "packet" method, on any topology).
 *
 * Every rank sends its block straight to rank (r + q) mod p (or along the
 * topology's ring with shift_ring, tc__shift_dest()), routed by the
 * topology's deterministic shortest paths (lib/topo/topo_route.c), all in
 * one round.  On the hypercube this is hypercube_ct's schedule; elsewhere
 * it is the fallback that applies everywhere (star, tree, chain, mesh).
 * The generator, tc__gen_perm_direct(), takes its destinations from
 * tc__perm_dest() and also builds gray_direct.c's schedule.
 *
 * Cost: the slowest route, with the links it shares with other routes
 * (contention, lib/sched/sim.c): at least msg(D, m) with D the longest
 * distance from r to r + q.  The sources give no closed form for a general
 * topology (NAN).
 * Restrictions: none (routed).  Any p, any q.
 * Buffers: IN -> OUT of the destination; q = 0 (or p = 1) a local copy.
 * Memory: none besides the buffers.
 *
 * Trace, ring p = 4, q = 1: round 0: 0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0.
 */
#include "coll/gen.h"

int tc__gen_perm_direct(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p;
	int err = tc__sched_round(s);
	for (int r = 0; r < p && !err; r++)
		err = tc__sched_initial(s, r, r, 1);
	for (int r = 0; r < p && !err; r++) {
		int d = tc__perm_dest(g, r);
		if (d < 0)
			return TC_ENOTSUP;
		struct tc__xfer x = {.src = r,
		                     .dst = d,
		                     .sbuf = TC__BUF_IN,
		                     .rbuf = TC__BUF_OUT,
		                     .op = TC__XOP_COPY,
		                     .info_lo = r,
		                     .info_n = 1,
		                     .bytes = g->bytes};
		err = tc__sched_add(s, &x);
	}
	return err;
}

double tc__f_shift_direct(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}
