/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/scatter/scatter_hypercube.c - one-to-all personalised
 * communication on a hypercube by recursive halving, from any root ([Barnat-IB109]
 * relabelling, as bcast_hypercube.c; [KKA-I] "3-step OAS in Q_3", the
 * binomial spanning tree whose messages halve).
 *
 * Relabel every node by virtid = id XOR root.  For i = d-1 down to 0, every
 * node whose virtid v has bits 0..i clear holds the blocks of the 2^{i+1}
 * virtids v .. v + 2^{i+1} - 1 and sends the upper half, the 2^i blocks of
 * the subcube of v XOR 2^i, to v XOR 2^i.  In rank space these are the ranks
 * [b, b + 2^i) with b = ((v XOR 2^i) XOR root) with bits 0..i-1 cleared:
 * XOR by root permutes an aligned range of 2^i virtids onto an aligned range
 * of ranks, so every message is one contiguous region.  The root reads IN
 * (block r at r m); the other nodes keep block r in TMP at (r mod 2^{d-1}) m
 * and the last round (i = 0) delivers into OUT.  In that last round every
 * node that received in an earlier round copies its own block TMP -> OUT,
 * the root IN -> OUT (local transfers).  The copies sit in the last round,
 * not in the round of the receive: in the dual (gather), a local transfer is
 * applied at the end of its round while sends read at the start, so the
 * copy IN -> TMP must come a round before the send of TMP it feeds.
 *
 * Cost: tc_cost_scatter_hypercube() (include/topocoll/cost.h): step i =
 * 1 .. d sends one message of 2^{d-i} blocks; exact under the one-port
 * model.
 * Restrictions: p = 2^d; hypercube, or the complete graph.
 * Memory: TMP of (p/2) m per rank (p >= 4).
 * Trace, p = 8, root 5 (block r goes to rank r):
 *   round 1 (i=2): 5 -> 1 blocks 0..3
 *   round 2 (i=1): 5 -> 7 blocks 6, 7;  1 -> 3 blocks 2, 3
 *   round 3 (i=0): 5 -> 4 block 4; 1 -> 0 block 0; 7 -> 6 block 6;
 *                  3 -> 2 block 2; local: 5, 1, 7, 3 their own block -> OUT
 */
#include "coll/gen.h"

int tc__gen_scatter_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p, root = g->root, d = tc__log2_exact(p);
	const uint64_t m = g->bytes;
	enum tc_topo_kind k = tc_topo_kind(g->t);
	if (d < 0 || (k != TC_TOPO_HYPERCUBE && k != TC_TOPO_COMPLETE))
		return TC_ENOTSUP;
	const int half = p > 1 ? p / 2 : 1;
	s->tmp_bytes = p >= 4 ? (uint64_t)half * m : 0;
	int err = tc__sched_initial(s, root, 0, p);
	for (int i = d - 1; i >= 0 && !err; i--) {
		err = tc__sched_round(s);
		int low = (1 << (i + 1)) - 1, n = 1 << i;
		for (int v = 0; v < p && !err; v += low + 1) {
			int b = ((v ^ n) ^ root) & ~(n - 1);
			struct tc__xfer x = {.src = v ^ root,
			                     .dst = (v ^ n) ^ root,
			                     .sbuf = v ? TC__BUF_TMP : TC__BUF_IN,
			                     .soff = (uint64_t)(v ? b % half : b) * m,
			                     .rbuf = i ? TC__BUF_TMP : TC__BUF_OUT,
			                     .roff = i ? (uint64_t)(b % half) * m : 0,
			                     .op = TC__XOP_COPY,
			                     .info_lo = b,
			                     .info_n = n,
			                     .bytes = (uint64_t)n * m};
			err = tc__sched_add(s, &x);
		}
	}
	/* The own blocks of the nodes that received through TMP (even virtids
	 * but 0) and of the root, in the last round (round 0 when p = 1). */
	for (int v = 0; v < p && !err; v += 2) {
		int r = v ^ root;
		err = v ? tc__emit(s, r, r, TC__BUF_TMP, (uint64_t)(r % half) * m, TC__BUF_OUT, 0,
		                   m, TC__XOP_COPY)
		        : tc__emit(s, r, r, TC__BUF_IN, (uint64_t)r * m, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	}
	return err;
}

double tc__f_scatter_hypercube(const struct tc__gen *g)
{
	return tc_cost_scatter_hypercube(g->md, g->p, (double)g->bytes);
}

double tc__f_gather_hypercube(const struct tc__gen *g)
{
	return tc_cost_gather_hypercube(g->md, g->p, (double)g->bytes);
}
