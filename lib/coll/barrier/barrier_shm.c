/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/barrier/barrier_shm.c - barrier on cache-line flags: every rank
 * raises its flag and waits until it sees every other rank's (the flat
 * flag barrier of OpenMP runtimes; Open MPI's coll/sm and coll/xhc keep
 * their flags in cache lines the same way).
 *
 * Schedule (prediction, emulated runs): one round in which rank i sends an
 * empty message to i + 1, ..., i + p - 1 (mod p): every rank hears from
 * every other one, so none leaves before all have arrived.  Native run
 * (lib/coll/shm_flat.c): rank i publishes its step (k, 1) in its flag and reads
 * the p - 1 other flags; no second phase (the flags are double-buffered by
 * the parity of the call).
 *
 * Cost (tc_cost_barrier_shm): the direct round at m = 0: t_s (+ t_h) under
 * all ports, (p - 1) t_s (+ t_h) under one port.  NAN under half duplex.
 * Restrictions: the complete graph (every pair shares memory).
 * Memory: none besides the team's flags.
 *
 * Trace, p = 3:  0 -> 1, 1 -> 2, 2 -> 0, 0 -> 2, 1 -> 0, 2 -> 1 (one round).
 */
#include "coll/gen.h"

int tc__gen_barrier_shm(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p;
	int err = tc__sched_round(s);
	for (int k = 1; k < p && !err; k++)
		for (int i = 0; i < p && !err; i++)
			err = tc__emit(s, i, (i + k) % p, TC__BUF_OUT, 0, TC__BUF_OUT, 0, 0, TC__XOP_COPY);
	return err;
}

double tc__f_barrier_shm(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_barrier_shm(g->md, g->p);
}
