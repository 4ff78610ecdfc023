/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/vcount/vcount_direct.c - the variable-count collectives in one
 * round: every transfer of the call's matrix at once, routed like pairwise
 * (the fixed-count analogue is alltoall_direct.c, [Barnat-IB109]'s direct
 * all-to-all personalised communication on a completely connected network;
 * off a complete graph the transfers follow the topology's deterministic
 * shortest routes, lib/topo/topo_route.c).
 *
 * The transfers are those of vcount_pairwise.c, in its order (local copies,
 * then k = 1 .. p-1, i -> i + k mod p, empty blocks skipped), but in one
 * round: under the one-port model every rank has one send and one arrival
 * per slot k, and on a team whose ranks share CPUs the call is one level of
 * waits instead of p (lib/coll/machine.h).
 *
 * Cost, equal blocks of m bytes between every two different ranks that
 * exchange (allgatherv and alltoallv with equal counts; a gatherv's root
 * taking, or a scatterv's giving, p - 1 blocks of m), on a topology of
 * diameter 1 under full duplex: tc_cost_direct_round() (include/topocoll/
 * cost.h), as alltoall_direct.c:
 *   one port:  (p - 2)(t_s + m t_w) + msg(1, m): the p - 1 messages through
 *              a port back to back, t_h once (cut-through only);
 *   all ports: msg(1, m), one message time.
 * 0 when nothing moves or p = 1; NAN elsewhere: unequal blocks, a round with
 * no block, half duplex, diameter above 1 (routes share links the simulator
 * reports but does not charge).
 * Restrictions: none (any topology); a fallback (TC__ALG_FALLBACK): priced
 * by the model AUTO takes pairwise, whose rounds do not share links; priced
 * on the machine (ranks outnumbering CPUs) the two compete, and the one
 * round wins where the levels of waits cost more than the data.
 * Memory: none besides the buffers.
 *
 * Trace, alltoallv on p = 3, the one round in schedule order:
 *   local  0 -> 0, 1 -> 1, 2 -> 2
 *   k = 1  0 -> 1, 1 -> 2, 2 -> 0
 *   k = 2  0 -> 2, 1 -> 0, 2 -> 1
 */
#include <math.h>

#include "coll/vcount/vcount.h"

#include "coll/gen.h"

int tc__gen_vcount_direct(const struct tc__gen *g, struct tc__sched *s)
{
	const struct tc__vmatrix *mx = g->vmx;
	if (!mx || mx->p != g->p)
		return TC_EINVAL;
	const int p = mx->p;
	int err = tc__sched_round(s);
	for (int k = 0; k < p && !err; k++)
		for (int i = 0; i < p && !err; i++) {
			const int j = (i + k) % p;
			uint64_t soff, roff, bytes = tc__vm_block(mx, i, j, &soff, &roff);
			if (bytes)
				err = tc__emit(s, i, j, TC__BUF_IN, soff, TC__BUF_OUT, roff, bytes,
				               TC__XOP_COPY);
		}
	return err ? err : s->err;
}

/* The block size m where tc_cost_direct_round() is g's modelled time: every
 * non-empty block between two different ranks of the same m bytes, some
 * rank sending (or receiving) p - 1 blocks, one a slot, on a graph of
 * diameter 1 under full duplex; 0 when nothing moves, -1 where the closed
 * form does not hold. */
static int64_t tc__vcount_direct_block(const struct tc__gen *g)
{
	const struct tc__vmatrix *mx = g->vmx;
	const int p = g->p;
	if (!mx || p == 1)
		return 0;
	uint64_t m = 0;
	int busiest = 0; /* the most blocks a rank sends or receives */
	for (int i = 0; i < p; i++) {
		int out = 0, in = 0;
		for (int j = 0; j < p; j++) {
			if (j == i)
				continue;
			uint64_t so, ro, b = tc__vm_block(mx, i, j, &so, &ro);
			uint64_t c = tc__vm_block(mx, j, i, &so, &ro);
			if ((b && m && b != m) || (c && m && c != m))
				return -1;
			m = b ? b : c ? c : m;
			out += b != 0;
			in += c != 0;
		}
		busiest = out > busiest ? out : busiest;
		busiest = in > busiest ? in : busiest;
	}
	if (!m)
		return 0;
	if (busiest != p - 1 || tc_topo_props(g->t)->diameter > 1 || g->md->duplex != TC_DUPLEX_FULL)
		return -1;
	return (int64_t)m;
}

double tc__f_vcount_direct(const struct tc__gen *g)
{
	int64_t m = tc__vcount_direct_block(g);
	if (m <= 0)
		return m < 0 ? NAN : 0; /* no closed form; nothing moves */
	return tc_cost_direct_round(g->md, g->p, (double)m);
}
