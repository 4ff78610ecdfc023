/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/alltoall/alltoall_hypercube.c - all-to-all personalised
 * communication by dimension exchange ([Barnat-IB109], "ATA individuální
 * komunikace", hypercube).
 *
 * log p steps; in step k every node exchanges with its partner me ^ 2^k the
 * p / 2 blocks it holds whose destination differs from it in bit k (the
 * mesh algorithm on the hypercube seen as a 2 x 2 x ... x 2 grid).  The
 * source's local reshuffle between steps (gathering the p / 2 blocks to send
 * into one message, and putting the received ones in place) is done by local
 * copies, which the IR makes free: it addresses blocks by offset and charges
 * no time for a local transfer (alltoall_lines.h gives the layout; blocks
 * end in source order with no final sort).
 *
 * Cost: tc_cost_alltoall_hypercube() (include/topocoll/cost.h): log p steps of
 * one message of p / 2 blocks (m p / 2 bytes) each way.  Exact under full
 * duplex; under half duplex the two directions of an exchange share the link
 * and the formula does not apply (NAN).
 * Restrictions: p a power of two; hypercube, complete graph (every partner a
 * neighbour); TC_ENOTSUP elsewhere.
 * Memory: TMP of p m bytes (two message regions of p / 2 blocks), the
 * blocks in transit.
 * Checker: pieces untracked (a half is not an interval of pieces).
 *
 * Trace, p = 4 (blocks "ab" from a to b):
 *   round 0: IN -> OUT; pack the blocks for bit 0 = other: 0 packs {01 03}
 *   step 0:  0 <-> 1: 0 sends {01 03}, 1 sends {10 12}; 2 <-> 3 likewise
 *            (0 now holds 00 02 10 12, 1 holds 01 03 11 13); 0 packs {02 12}
 *   step 1:  0 <-> 2: 0 sends {02 12}, 2 sends {20 30}; 1 <-> 3 likewise.
 */
#include "coll/alltoall/alltoall_lines.h"

#include <stdlib.h>

int tc__gen_alltoall_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	const enum tc_topo_kind kind = tc_topo_kind(g->t);
	const int p = g->p, d = tc__log2_exact(p);
	if (d < 0 || (kind != TC_TOPO_HYPERCUBE && kind != TC_TOPO_COMPLETE))
		return TC_ENOTSUP;
	int *buf = malloc(sizeof *buf * (2 * (size_t)p * (size_t)d + 1));
	struct tc__a2a_phase *ph = malloc(sizeof *ph * ((size_t)d + 1));
	int err = TC_ENOMEM;
	if (buf && ph) {
		for (int k = 0; k < d; k++) {
			int *succ = buf + 2 * (size_t)p * (size_t)k, *digit = succ + p;
			for (int v = 0; v < p; v++) {
				succ[v] = v ^ (1 << k);
				digit[v] = (v >> k) & 1;
			}
			ph[k] = (struct tc__a2a_phase){.len = 2, .stride = 1 << k, .succ = succ, .digit = digit};
		}
		err = tc__a2a_lines(g, s, d, ph);
	}
	free(ph);
	free(buf);
	return err;
}

double tc__f_alltoall_hypercube(const struct tc__gen *g)
{
	if (g->p > 1 && g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_alltoall_hypercube(g->md, g->p, (double)g->bytes);
}
