/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allgather/allgather_shm.c - all-to-all broadcast in one round
 * in which every rank reads each block straight out of its owner's buffer:
 * the shared-memory variant of OpenMP runtimes and Open MPI's coll/sm
 * ([Barnat-IB109]'s direct all-to-all broadcast on the completely connected
 * network that shared memory is).
 *
 * Schedule (prediction, emulated runs): allgather `direct`'s one round on
 * the complete graph, rank i's block to i + 1, ..., i + p - 1 (mod p).
 * Native run (lib/coll/shm_flat.c): each rank publishes its IN in its flag and
 * copies every peer's block out of the peer's IN as soon as the peer's flag
 * says it is there, then waits until every peer is done with its own IN (a
 * second flag) - one copy per block, no channel, two flag hand-offs per
 * peer.  A block of at most TC__SHM_INLINE bytes travels in the flag's
 * cache lines instead, one with p m <= TC__SHM_AREA (1 KiB) in the rank's
 * own area (double-buffered like the flag), and the second flag is not
 * needed.
 *
 * Cost (tc_cost_allgather_shm): all ports, one message time
 * t_s + m t_w (+ t_h); one port, the direct round's p - 1 serialised sends.
 * NAN under half duplex.
 * Restrictions: the complete graph (every pair shares memory).
 * Memory: none besides the buffers (and the team's flags and areas: 512 +
 * 2 TC__SHM_AREA bytes per rank).
 *
 * Trace, p = 3: as allgather `direct`:
 *   local  0: b0, 1: b1, 2: b2 (IN -> OUT)
 *   k = 1  0 -> 1 b0,  1 -> 2 b1,  2 -> 0 b2
 *   k = 2  0 -> 2 b0,  1 -> 0 b1,  2 -> 1 b2
 */
#include "coll/gen.h"

int tc__gen_allgather_shm(const struct tc__gen *g, struct tc__sched *s)
{
	return tc__gen_allgather_direct(g, s);
}

double tc__f_allgather_shm(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_allgather_shm(g->md, g->p, (double)g->bytes);
}
