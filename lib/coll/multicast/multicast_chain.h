/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/multicast/multicast_chain.h - recursive doubling on a
 * dimension-ordered chain ([KKA-I], multicast), shared by
 * multicast_hypercube.c and multicast_mesh.c.  Internal to this folder.
 */
#ifndef TC_COLL_MULTICAST_CHAIN_H
#define TC_COLL_MULTICAST_CHAIN_H

#include "coll/gen.h"

/*
 * Recursive doubling on the chain c[0 .. n) (distinct ranks) held by
 * c[hpos]: a segment [lo, hi] of len nodes splits into the lower half of
 * ceil(len/2) nodes and the upper half; a holder in the lower half sends to
 * the first node of the upper half, otherwise to the last node of the lower
 * half; both halves go on with their holders.  ceil(log2 n) rounds; every
 * transfer OUT -> OUT of g->bytes, routed.  0, TC_ENOMEM.
 */
int tc__mc_chain_rd(const struct tc__gen *g, struct tc__sched *s, const int *c, int n, int hpos);

/*
 * The path_hops argument of tc_cost_multicast() for that schedule under
 * g->md (see the header of multicast_mesh.c): under CT the largest number
 * of links on the routes that brought the data to a rank busy until the
 * last round; under SF the largest count of links plus the holder's own
 * later sends along any chain.  -1 when n < 2.
 */
long tc__mc_chain_path(const struct tc__gen *g, const int *c, int n, int hpos);

#endif /* TC_COLL_MULTICAST_CHAIN_H */
