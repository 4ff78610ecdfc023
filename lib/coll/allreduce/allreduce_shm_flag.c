/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allreduce/allreduce_shm_flag.c - allreduce in one round in which
 * every rank reduces the whole vector, in rank order, out of every rank's
 * cache-line flag (small vectors: the payload travels in the flag's lines,
 * as Open MPI's coll/xhc does for small reductions) or buffer (larger
 * ones).  [Barnat-IB109]'s all-to-all broadcast on the completely connected
 * network, each rank combining what it receives.
 *
 * Schedule (prediction, emulated runs): one round; for every rank j, in
 * rank order r = 0, 1, ..., p - 1, r's IN to j's OUT, the first copied
 * (j = 0: a local copy), every later one combined as the right operand:
 * OUT_j = ((x_0 + x_1) + x_2) ... on every rank, the same bits.
 * Native run (lib/coll/shm_flat.c): a vector of at most TC__SHM_INLINE bytes
 * goes into the rank's flag, which the others read after its step: one
 * hand-off per peer and no second phase (the flags are double-buffered by
 * the call's parity); a larger one is read out of the peers' IN (staged as
 * reduce_scatter `shm` stages its blocks, TC__SHM_STAGE), and every rank
 * then waits until the others are done with its IN.
 *
 * Cost (tc_cost_allreduce_shm_flag), under all ports: the p - 1 messages
 * arrive at once, then the p - 1 combines one after the other:
 *     T = t_s + m t_w (+ t_h) + (p - 1) m t_c.
 * NAN under one port and half duplex (the simulator prices those).
 * Restrictions: the complete graph (every pair shares memory).
 * Memory: the team's flags, and where a rank stages the vectors its stage
 * ((p - 1) m bytes, at most TC__SHM_STAGE), kept with the team for its
 * later calls.
 *
 * Trace, p = 3:  0: local copy, 1 -> 0 (+), 2 -> 0 (+);  1: 0 -> 1 copy,
 * local (+), 2 -> 1 (+);  2: 0 -> 2 copy, 1 -> 2 (+), local (+).
 */
#include "coll/gen.h"

int tc__gen_allreduce_shm_flag(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p;
	int err = TC_OK;
	if (p == 1)
		return err; /* the framework copies IN to OUT */
	err = tc__sched_round(s);
	for (int j = 0; j < p && !err; j++)
		for (int r = 0; r < p && !err; r++)
			err = tc__emit_from(s, r, j, TC__BUF_IN, 0, TC__BUF_OUT, 0, g->bytes,
			                    r ? TC__XOP_COMBINE_RIGHT : TC__XOP_COPY, TC__BUF_OUT);
	return err;
}

double tc__f_allreduce_shm_flag(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL || g->md->ports != TC_PORTS_ALL)
		return NAN;
	return tc_cost_allreduce_shm_flag(g->md, g->p, (double)g->bytes);
}
