/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/alltoall/alltoall_shm.c - personalised all-to-all in one round in
 * which every rank reads its block straight out of each peer's buffer (the
 * shared-memory exchange of OpenMP runtimes and Open MPI's coll/sm;
 * [Barnat-IB109]'s direct exchange on the completely connected network).
 *
 * Schedule (prediction, emulated runs): alltoall `direct`'s one round on
 * the complete graph, block j of rank i to rank j, j = i + 1, ..., i + p - 1
 * (mod p).  Native run (lib/coll/shm_flat.c): each rank publishes its IN in its
 * flag and copies block `me` out of every peer's IN as soon as the peer's
 * flag says it is there, then waits until every peer is done with its IN.
 * When all p blocks fit in TC__SHM_INLINE bytes they travel in the flag's
 * cache lines instead, when they fit in TC__SHM_AREA bytes (p m <= 1 KiB:
 * 8-byte blocks up to p = 128) in the rank's own area, double-buffered like
 * the flag; either way the second wait is not needed (the next call but
 * one that rewrites them waits, where it has not seen every peer done).
 *
 * Cost (tc_cost_alltoall_shm): all ports, one message time t_s + m t_w
 * (+ t_h); one port, the direct round's p - 1 serialised sends.  NAN under
 * half duplex.
 * Restrictions: the complete graph (every pair shares memory).
 * Memory: none besides the buffers and the team's flags and areas.
 *
 * Trace, p = 3 (b_ij: rank i's block for j):
 *   local  0: b00, 1: b11, 2: b22
 *   k = 1  0 -> 1 b01,  1 -> 2 b12,  2 -> 0 b20
 *   k = 2  0 -> 2 b02,  1 -> 0 b10,  2 -> 1 b21
 */
#include "coll/gen.h"

int tc__gen_alltoall_shm(const struct tc__gen *g, struct tc__sched *s)
{
	return tc__gen_alltoall_direct(g, s);
}

double tc__f_alltoall_shm(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_alltoall_shm(g->md, g->p, (double)g->bytes);
}
