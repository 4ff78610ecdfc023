/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/reduce_scatter/reduce_scatter_shm.c - all-to-all reduction in
 * one round in which every rank reduces its own block straight out of every
 * rank's buffer (the "direct" shared-memory reduction of OpenMP runtimes
 * and of Open MPI's coll/sm: allreduce `shm`'s first round with whole
 * blocks; [Barnat-IB109]'s all-to-all reduction on the completely connected
 * network).
 *
 * Order: rank j's result is ((x_0^j (+) x_1^j) (+) x_2^j) ... (+)
 * x_{p-1}^j (x_r^j: block j of rank r's IN), the rank order of allreduce
 * `shm` and of the sequential definition, so that every p and every run
 * gives the same bits, also for floating-point sums; a non-commutative
 * operator gets its defined result (TC__ALG_ORDERED).
 * Schedule (prediction, emulated runs), one round: for every owner j, in
 * rank order r = 0, 1, ..., p - 1, block j of r's IN to j's OUT, the first
 * copied (j = 0: a local copy), every later one combined as the right
 * operand; the executor combines a round's receives at its end in schedule
 * order (lib/sched/sched.h), which is this rank order.
 * Native run (lib/coll/shm_flat.c): every rank publishes its IN, waits for every
 * peer's flag and reduces block `me` of every IN, in rank order, into OUT,
 * then says so and waits until every peer has (nobody reads its IN after).
 * From p = 3 on, where the p - 1 blocks fit its stage (TC__SHM_STAGE,
 * lib/coll/shm.h) and its team's waiters spin, a rank copies each peer's
 * block into the stage as it finds the peer's flag, from the peer after it
 * on, and reduces there in the same rank order: the ranks do not all
 * read rank 0's buffer, then all rank 1's.
 * When the p blocks fit in TC__SHM_INLINE bytes they travel in the rank's
 * flag, when they fit in TC__SHM_AREA bytes (p m <= 1 KiB) in its area,
 * double-buffered like the flag: the second synchronisation is not needed.
 * Nothing is copied through a channel.
 *
 * Cost (tc_cost_reduce_scatter_shm), all ports (every transfer its own
 * link): T = msg(1, m) + (p - 1) m t_c, the p - 1 parts arriving at once at
 * the block's owner, which combines them one after the other.  NAN under
 * one port (the owners' rank-ordered receives meet the serialised sends in
 * an order that depends on p; the simulator prices it) and half duplex.
 * Restrictions: the complete graph (every pair shares memory).
 * Memory: the team's flags and areas, and where a rank stages its
 * operands its stage, (p - 1) m bytes of at most TC__SHM_STAGE, kept with
 * the team for its later calls.
 *
 * Trace, p = 3 (x_r^j: block j of rank r's IN; o_j: rank j's OUT):
 *   0: local copy o_0 = x_0^0, 1 -> 0 (+ x_0^1), 2 -> 0 (+ x_0^2)
 *   1: 0 -> 1 copy x_1^0, local (+ x_1^1), 2 -> 1 (+ x_1^2)
 *   2: 0 -> 2 copy x_2^0, 1 -> 2 (+ x_2^1), local (+ x_2^2)
 */
#include "coll/gen.h"

int tc__gen_reduce_scatter_shm(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p;
	const uint64_t m = g->bytes;
	int err = tc__sched_round(s);
	if (p == 1)
		return err ? err : tc__emit(s, 0, 0, TC__BUF_IN, 0, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	for (int j = 0; j < p && !err; j++)
		for (int r = 0; r < p && !err; r++)
			err = tc__emit_from(s, r, j, TC__BUF_IN, (uint64_t)j * m, TC__BUF_OUT, 0, m,
			                    r ? TC__XOP_COMBINE_RIGHT : TC__XOP_COPY, TC__BUF_OUT);
	return err;
}

double tc__f_reduce_scatter_shm(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL || g->md->ports != TC_PORTS_ALL)
		return NAN;
	return tc_cost_reduce_scatter_shm(g->md, g->p, (double)g->bytes);
}
