/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/multicast/multicast_linear.c - multicast by the root sending to
 * every member in turn (the naive algorithm [KKA-I] improves on).
 *
 * Round k (k = 0 .. |M|-1): the root sends its block to the k-th member in
 * ascending rank order, routed.  Under the one-port model this is |M|
 * steps; all-port the rounds still run one after the other.
 *
 * Cost: sum over the members of msg(dist(root, member), m) (the rounds are
 * sequential): CT |M| (t_s + m t_w) + t_h sum dist, SF sum dist (t_s + m t_w).
 * The sources give no closed form of their own for it (NAN).
 * Restrictions: none (routed).
 * Buffers: OUT of the root to OUT of each member; no other rank is touched.
 * Memory: none.
 *
 * Trace, ring p = 6, root 0, members {2, 5}: round 0: 0 -> 2; round 1: 0 -> 5.
 */
#include "coll/gen.h"

int tc__gen_multicast_linear(const struct tc__gen *g, struct tc__sched *s)
{
	int err = tc__sched_initial(s, g->root, g->root, 1);
	for (int k = 0; k < g->nmembers && !err; k++) {
		err = tc__sched_round(s);
		if (!err)
			err = tc__emit(s, g->root, g->members[k], TC__BUF_OUT, 0, TC__BUF_OUT, 0,
			               g->bytes, TC__XOP_COPY);
	}
	return err;
}

double tc__f_multicast_linear(const struct tc__gen *g)
{
	(void)g;
	return NAN;
}
