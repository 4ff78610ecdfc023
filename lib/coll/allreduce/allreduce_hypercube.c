/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allreduce/allreduce_hypercube.c - allreduce by recursive-doubling
 * exchange on a hypercube ([Barnat-IB109], "Kompletní redukce": the all-to-all
 * broadcast of the hypercube in which the messages are combined instead of
 * concatenated; the ALL-TO-ONE pass with both partners keeping the sum).
 *
 * p = 2^d: in round i = 0 .. d-1 every node v exchanges its whole partial
 * result with v XOR 2^i, and both combine.  The lower rank's data is the left
 * operand on both sides (COMBINE_RIGHT at the lower rank, COMBINE_LEFT at the
 * higher), so both compute the same expression from the same operands and
 * hold bit-identical results, and after round i every node of an aligned
 * block of 2^(i+1) ranks holds a_lo (+) ... (+) a_hi of that block in rank
 * order (the two halves are contiguous and combined lower first).
 *
 * Any other p (fold-in): with n = 2^k the largest power of two <= p and
 * q = p - n, round 0 sends the data of every rank r >= n to r - n, which
 * combines it (its own data on the left); the n first ranks run the exchange
 * above; a last round copies the result from r - n back to r.  A virtual rank
 * v < q then holds a_v (+) a_(v+n), so the result is not in rank order: the
 * algorithm is for commutative operators (not TC__ALG_ORDERED).
 * Partners that are not neighbours are reached by routed transfers, so it
 * runs on every topology.
 *
 * Cost, one-port or all-port, full duplex, every transfer between neighbours
 * (a hypercube, the complete graph, or any topology that happens to link the
 * partners), with msg = t_s + m t_w (+ t_h under cut-through), C = m t_c:
 * tc_cost_allreduce_hypercube_fold() (include/topocoll/cost.h): for p = 2^d
 * [Barnat-IB109]'s tc_cost_allreduce_hypercube(), otherwise the maximum of two
 * butterfly paths with D = ceil(log2 q) (t_h only under
 * cut-through).  Derivation: a
 * rank's clock after the exchange is the longest path of the butterfly into
 * it, where crossing to the partner costs msg + C and staying costs
 * msg - t_h + C (a sender is done with its port after t_s + m t_w, the
 * message arrives t_h later).  Folded ranks u < q start the exchange at
 * msg + C, the others at 0.  The longest path into v < n starts at u < q and
 * crosses popcount(u ^ v) times: (k+1)(msg + C) for v = u XOR (n-1).  A result
 * going back from r < q arrives msg later, and the longest path into such r
 * crosses D times at most (the largest Hamming distance within [0, q)).
 * Half duplex makes the two directions of an exchange share the link: the
 * formula is then NAN, as it is for routed transfers (their cost depends on
 * the route lengths along each butterfly path).
 * Restrictions: none (any topology, any p >= 1, m = 0 included).
 * Buffers (TC__ALG_READS_IN): each rank's contribution is read from IN; the
 * first combine writes IN (+) received to a new buffer, and every later
 * round reads the partial result the previous round wrote and writes the
 * other of OUT and TMP, ending in OUT.  A round thus never writes the region
 * its own send reads, so the executor may combine a large message straight
 * out of the sender's buffer into the destination (one pass over the data,
 * no staging, no copy of the input).
 * Memory: m bytes of TMP when n >= 4, or p = 3 (its fold-in writes TMP).
 *
 * Trace, p = 6 (n = 4, k = 2, q = 2):
 *   round 0 (fold-in):  4 -> 0, 5 -> 1                  0: a0+a4  1: a1+a5
 *   round 1 (i = 0):    0 <-> 1, 2 <-> 3                0,1: a0+a4+a1+a5
 *   round 2 (i = 1):    0 <-> 2, 1 <-> 3                0..3: everything
 *   round 3 (back):     0 -> 4, 1 -> 5
 */
#include "coll/gen.h"

/* The buffer exchange round j writes (j = -1: the fold-in round): OUT and
 * TMP alternate so that the last of the k exchange rounds writes OUT. */
static int tc__hc_dest(int k, int j)
{
	return (k - 1 - j) % 2 == 0 ? TC__BUF_OUT : TC__BUF_TMP;
}

int tc__gen_allreduce_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p, n = tc__pow2_floor(p), k = tc__log2_exact(n), q = p - n;
	const uint64_t m = g->bytes;
	int err = 0;
	if (p == 1)
		return 0; /* the framework copies IN to OUT */
	if (k >= 2 || (q && tc__hc_dest(k, -1) == TC__BUF_TMP))
		s->tmp_bytes = m;
	if (q) {
		err = tc__sched_round(s);
		for (int r = n; r < p && !err; r++)
			err = tc__emit_from(s, r, r - n, TC__BUF_IN, 0, tc__hc_dest(k, -1), 0, m,
			                    TC__XOP_COMBINE_RIGHT, TC__BUF_IN);
	}
	for (int j = 0; j < k && !err; j++) {
		err = tc__sched_round(s);
		for (int v = 0; v < n && !err; v++) {
			int u = v ^ (1 << j);
			/* The partial results: IN before any combine, then what
			 * the previous round wrote. */
			int sb = j       ? tc__hc_dest(k, j - 1)
			         : v < q ? tc__hc_dest(k, -1)
			                 : TC__BUF_IN;
			int ab = j       ? tc__hc_dest(k, j - 1)
			         : u < q ? tc__hc_dest(k, -1)
			                 : TC__BUF_IN;
			/* At u, v's data is the left operand when v is the lower. */
			err = tc__emit_from(s, v, u, sb, 0, tc__hc_dest(k, j), 0, m,
			                    v < u ? TC__XOP_COMBINE_LEFT : TC__XOP_COMBINE_RIGHT, ab);
		}
	}
	if (q && !err) {
		err = tc__sched_round(s);
		for (int r = n; r < p && !err; r++)
			err = tc__emit(s, r - n, r, TC__BUF_OUT, 0, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	}
	return err;
}

/* Whether every transfer of the schedule joins two neighbours. */
static int tc__hc_neighbours_only(const struct tc_topo *t, int p, int n)
{
	for (int r = n; r < p; r++)
		if (tc_topo_distance(t, r, r - n) != 1)
			return 0;
	for (int bit = 1; bit < n; bit <<= 1)
		for (int v = 0; v < n; v++)
			if (tc_topo_distance(t, v, v ^ bit) != 1)
				return 0;
	return 1;
}

double tc__f_allreduce_hypercube(const struct tc__gen *g)
{
	const int p = g->p;
	if (p > 1 &&
	    (g->md->duplex != TC_DUPLEX_FULL || !tc__hc_neighbours_only(g->t, p, tc__pow2_floor(p))))
		return NAN;
	return tc_cost_allreduce_hypercube_fold(g->md, p, (double)g->bytes);
}
