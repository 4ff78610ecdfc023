/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allreduce/allreduce_shm.c - allreduce in which every rank
 * reduces one slice of the vector straight out of every rank's buffer, then
 * copies the other slices out of their owners' results: the "direct"
 * shared-memory reduction of OpenMP runtimes and of Open MPI's coll/sm, a
 * reduce_scatter and an allgather each in one round ([Barnat-IB109]'s
 * all-to-all reduction and broadcast on the completely connected network).
 *
 * Slices: the count elements split into p slices as evenly as possible,
 * slice j = tc__block(m, esize, p, j), m_j bytes (the first ones an element
 * longer).
 * Schedule (prediction, emulated runs), two rounds:
 *   round 0  for every slice owner j, in rank order r = 0, 1, ..., p - 1:
 *            slice j of r's IN to j's OUT, the first copied (j = 0: a
 *            local copy), every later one combined as the right operand,
 *            OUT_j = ((x_0 + x_1) + x_2) ... (rank order, as the native run)
 *   round 1  j sends its reduced slice to every other rank (OUT to OUT).
 * Native run (lib/coll/shm_flat.c): flags at the start and after the slices;
 * an owner keeps its reduced slice in library memory (up to TC__SHM_SLICE
 * bytes, lib/coll/shm.h) from which the others copy it, so that a rank
 * returns as soon as it has every slice: after it, nobody reads its IN or
 * OUT.  A larger slice is read out of the owner's OUT, and the owner waits
 * until every reader is done (a third synchronisation).  Nothing is
 * copied through a channel.  An owner stages the peers' parts of its slice
 * as reduce_scatter `shm` does its blocks (TC__SHM_STAGE).
 *
 * Cost (tc_cost_allreduce_shm), under all ports (every transfer its own
 * link): with the largest slice s = ceil(count / p) esize,
 *     T = 2 (t_s + s t_w) + (p - 1) s t_c    (+ t_h per round under CT),
 * the combines of round 0 one after the other at the slice's owner, which
 * receives its p - 1 parts at once.  NAN under one port (the serialised
 * sends of the two rounds meet the owners' combines in an order that
 * depends on m) and half duplex; the simulator prices those.
 * Restrictions: the complete graph (every pair shares memory).
 * Memory: the team's flags, each rank's two slice buffers (TC__SHM_SLICE)
 * and, where it stages, its stage ((p - 1) slices, at most TC__SHM_STAGE),
 * kept with the team for its later calls.
 *
 * Trace, p = 3, 7 elements (slices 3, 2, 2):
 *   round 0  0: local copy x_0[0..3), 1 -> 0 (+), 2 -> 0 (+);
 *            1: 0 -> 1 copy x_0[3..5), local (+), 2 -> 1 (+);
 *            2: 0 -> 2 copy, 1 -> 2 (+), local (+)
 *   round 1  0 -> 1, 0 -> 2 slice 0; 1 -> 2, 1 -> 0 slice 1; 2 -> 0, 2 -> 1
 */
#include "coll/gen.h"

int tc__gen_allreduce_shm(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p;
	int err = TC_OK;
	if (p == 1)
		return err; /* the framework copies IN to OUT */
	err = tc__sched_round(s);
	for (int j = 0; j < p && !err; j++) {
		uint64_t off, len;
		tc__block(g->bytes, g->esize, p, j, &off, &len);
		for (int r = 0; r < p && !err; r++)
			err = tc__emit_from(s, r, j, TC__BUF_IN, off, TC__BUF_OUT, off, len,
			                    r ? TC__XOP_COMBINE_RIGHT : TC__XOP_COPY, TC__BUF_OUT);
	}
	if (!err)
		err = tc__sched_round(s);
	for (int k = 1; k < p && !err; k++)
		for (int j = 0; j < p && !err; j++) {
			uint64_t off, len;
			tc__block(g->bytes, g->esize, p, j, &off, &len);
			err = tc__emit(s, j, (j + k) % p, TC__BUF_OUT, off, TC__BUF_OUT, off, len,
			               TC__XOP_COPY);
		}
	return err;
}

double tc__f_allreduce_shm(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL || g->md->ports != TC_PORTS_ALL)
		return NAN;
	return tc_cost_allreduce_shm(g->md, g->p, (double)(g->bytes / g->esize), (double)g->esize);
}
