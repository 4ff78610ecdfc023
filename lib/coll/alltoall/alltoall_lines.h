/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/alltoall/alltoall_lines.h - the engine of the ring, mesh and
 * hypercube all-to-all personalised algorithms ([Barnat-IB109]): one phase per
 * dimension, each the ring algorithm run on every line of that dimension
 * with the blocks aggregated by their destination's coordinate.
 *
 * Layout.  OUT holds the p blocks a rank currently has, block (src, dst) at
 * slot z, a mixed-radix number whose digit along a dimension already
 * processed is src's coordinate and along one not yet processed is dst's.
 * Before the first phase z = dst (IN's layout: round 0 copies IN to OUT),
 * after the last z = src (OUT's layout), so nothing is left to sort.
 * A phase along a dimension of len nodes and digit stride `stride` (slots)
 * moves, on every line, the super-block of digit c (the p / len blocks of
 * slots with digit c: runs of `stride` slots) to the line's node of
 * coordinate c, whose digit it then takes.
 *
 * Within a phase (the ring algorithm of [Barnat-IB109] on len nodes): the
 * super-blocks for distances 1 .. len-1 along the line are first packed,
 * in order of distance, into a message region of TMP (local copies, free,
 * at the end of the round before the phase's first step: round 0, or the
 * previous phase's last step); in step s = 1 .. len-1 every node sends to
 * its successor the len - s super-blocks it holds from the origin s - 1
 * positions back (one contiguous message), the successor unpacks the
 * first (addressed to it) into OUT and forwards the rest in step s + 1.
 * Two message regions alternate (a step sends from one and receives into
 * the other).  The source's "local reshuffle" is these local copies, which
 * the IR makes free (it addresses blocks by offset; a local transfer costs
 * nothing), so the model charges exactly the source's messages.
 *
 * Memory: TMP of 2 max_phase (len - 1) (p / len) m bytes (< 2 p m).
 */
#ifndef TC_COLL_ALLTOALL_LINES_H
#define TC_COLL_ALLTOALL_LINES_H

#include "coll/gen.h"

struct tc__a2a_phase {
	int len;          /* nodes on a line (1: nothing to do) */
	int stride;       /* slots between consecutive digits */
	const int *succ;  /* per node: its successor on its line's ring (a
	                     neighbour, or routed: the wrap of a mesh line) */
	const int *digit; /* per node: its digit (0 .. len-1) */
};

/* Emits the all-to-all personalised exchange of g over the phases
 * ph[0..nph), in order.  Returns 0 or TC_ENOMEM. */
int tc__a2a_lines(const struct tc__gen *g, struct tc__sched *s, int nph, const struct tc__a2a_phase *ph);

#endif /* TC_COLL_ALLTOALL_LINES_H */
