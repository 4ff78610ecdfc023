/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/alltoall/alltoall_ring.c - all-to-all personalised communication
 * on a ring ([Barnat-IB109], "ATA individuální komunikace", ring).
 *
 * p - 1 steps: in step 1 every node sends its successor the p - 1 blocks
 * not addressed to itself; in each later step it keeps the block addressed
 * to it out of what it received and passes the rest on, one block fewer
 * each step, until the last step carries one block.  The engine is
 * alltoall_lines.h with one phase over the whole ring (blocks packed in
 * order of distance before step 1; unpacking is a free local copy).
 *
 * Cost: tc_cost_alltoall_ring() (include/topocoll/cost.h): step k = 1 .. p - 1
 * sends one message of the p - k blocks left, m (p - k) bytes.  Exact under
 * full duplex; with one half-duplex port (or p = 2 on its single link) a
 * step's send and receive share the port and the formula does not apply (NAN).
 * Restrictions: ring, complete graph (ring order 0 .. p-1), hypercube (the
 * Gray-code ring of lib/topo/embed.h); any p; TC_ENOTSUP elsewhere.
 * Memory: TMP of 2 (p - 1) m bytes (two message regions).
 * Checker: piece o p + j is origin o's block for the node j positions on
 * (NODUP and NOHO are verified).
 *
 * Trace, ring p = 3 (block "ab": from a to b):
 *   round 0: local copies (own block to OUT, 01 02 packed at 0, ...)
 *   step 1:  0 -> 1 {01 02},  1 -> 2 {12 10},  2 -> 0 {20 21}
 *   step 2:  0 -> 1 {21},     1 -> 2 {02},     2 -> 0 {10}
 */
#include "coll/alltoall/alltoall_lines.h"

#include <stdlib.h>

int tc__gen_alltoall_ring(const struct tc__gen *g, struct tc__sched *s)
{
	if (!tc__ring_embeds(g->t))
		return TC_ENOTSUP;
	const int p = g->p;
	int *succ = malloc(sizeof *succ * 2 * (size_t)p);
	if (!succ)
		return TC_ENOMEM;
	int *digit = succ + p;
	for (int v = 0; v < p; v++) {
		succ[v] = tc__ring_node(g->t, tc__ring_pos(g->t, v) + 1);
		digit[v] = v;
	}
	struct tc__a2a_phase ph = {.len = p, .stride = 1, .succ = succ, .digit = digit};
	int err = tc__a2a_lines(g, s, 1, &ph);
	free(succ);
	return err;
}

double tc__f_alltoall_ring(const struct tc__gen *g)
{
	const struct tc_model *md = g->md;
	if (g->p > 1 && md->duplex != TC_DUPLEX_FULL && !(md->ports == TC_PORTS_ALL && g->p >= 3))
		return NAN;
	return tc_cost_alltoall_ring(md, g->p, (double)g->bytes);
}
