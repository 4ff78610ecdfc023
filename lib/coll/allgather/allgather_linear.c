/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allgather/allgather_linear.c - all-to-all broadcast as a linear
 * gather to rank 0 followed by a linear broadcast of the whole result from
 * it ([Barnat-IB109]'s naive all-to-one then one-to-all, as allreduce_linear.c
 * with concatenation for the combine): every rank but 0 waits once, which
 * is what counts when ranks outnumber the CPUs (lib/coll/machine.h,
 * tc__wait_level_ns()), and AUTO's machine pricing (tc__machine_score,
 * lib/coll/select.c) weighs it there against the p - 1 or log2 p levels of
 * the sources' algorithms.
 *
 * Round 0: every rank i > 0 sends its block to rank 0, which places it at
 * block i of its output.  Round 1: 0 sends its whole output (p m bytes) to
 * 1, 2, ..., p - 1.  Transfers to or from a rank that is not a neighbour of
 * 0 are routed.
 *
 * Cost, every rank a neighbour of 0, one port (full or half duplex),
 * L_k = t_s + k m t_w, msg = msg(1, .): rank 0's receives complete at
 * msg(1, m), then one every L_1; its sends of p m bytes start L_p apart and
 * the last arrives msg(1, p m) after it started: tc_cost_allgather_linear(),
 * against the ring's tc_cost_allgather_ring() (the source's): about twice the
 * start-ups and p/2 times the volume, in two levels of waits instead of
 * p - 1.  NAN for all ports or routed transfers.
 * Restrictions: none (any topology, any p >= 1); a fallback (TC__ALG_FALLBACK):
 * AUTO weighs it only on oversubscribed teams or where no catalogue algorithm
 * applies.
 * Memory: none besides the buffers.
 * Checker: piece v is rank v's block; NODUP holds, NOHO does not: the
 * release carries every rank's own block back to it (p - 1 violations, one
 * message per rank instead of two around its own block).
 *
 * Trace, p = 4 (b_i: rank i's block):
 *   round 0: local b_i IN -> OUT; 1 -> 0 b1, 2 -> 0 b2, 3 -> 0 b3
 *   round 1: 0 -> 1, 0 -> 2, 0 -> 3: b0 b1 b2 b3
 */
#include "allgather_lines.h"

int tc__gen_allgather_linear(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p;
	const uint64_t m = g->bytes;
	int err = tc__sched_round(s);
	if (!err)
		err = tc__allgather_own(g, s);
	for (int i = 1; i < p && !err; i++) {
		struct tc__xfer x = {.src = i,
		                     .dst = 0,
		                     .sbuf = TC__BUF_IN,
		                     .rbuf = TC__BUF_OUT,
		                     .op = TC__XOP_COPY,
		                     .info_lo = i,
		                     .info_n = 1,
		                     .roff = (uint64_t)i * m,
		                     .bytes = m};
		err = tc__sched_add(s, &x);
	}
	if (!err && p > 1)
		err = tc__sched_round(s);
	for (int i = 1; i < p && !err; i++) {
		struct tc__xfer x = {.src = 0,
		                     .dst = i,
		                     .sbuf = TC__BUF_OUT,
		                     .rbuf = TC__BUF_OUT,
		                     .op = TC__XOP_COPY,
		                     .info_lo = 0,
		                     .info_n = p,
		                     .bytes = (uint64_t)p * m};
		err = tc__sched_add(s, &x);
	}
	return err;
}

double tc__f_allgather_linear(const struct tc__gen *g)
{
	if (g->p > 1 && (!tc__neighbours_of_0(g->t, g->p) || g->md->ports != TC_PORTS_ONE))
		return NAN;
	return tc_cost_allgather_linear(g->md, g->p, (double)g->bytes);
}
