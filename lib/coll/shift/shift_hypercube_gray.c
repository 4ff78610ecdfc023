/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shift/shift_hypercube_gray.c - circular q-shift along the
 * Gray-code ring of the hypercube, one stage per power of two ([Gergel-shift],
 * (3.20); [Barnat-IB109], "hyperkostka", with the backward option).
 *
 * The hypercube is seen as a ring through the binary-reflected Gray code:
 * ring position i is node G(i) (tc__ring_node()).  q' = q mod p is written
 * as a sum of terms e_i 2^i, e_i in {0, 1} (`hypercube_gray`: the binary
 * digits of q', [Gergel-shift]) or e_i in {-1, 0, 1} with the fewest links
 * (`hypercube_gray_bw`: [Barnat-IB109]'s backward shift; a dynamic programme over
 * the carry, the same as lib/model/cost/shift.c's, with weights 1 link for the
 * term of 1 and 2 links for the others), taken mod p.  One stage per
 * non-zero term, the largest first: every block moves e_i 2^i ring
 * positions, a routed transfer from G(j) to G(j + e_i 2^i), which differ in
 * one bit for i = 0 and in exactly two for i >= 1 ([Gergel-shift]'s property of
 * the code), all p of a stage in one round.  After the stages the node at
 * position j holds the block of position j - q'.
 *
 * Why only with shift_ring (TC_ENOTSUP without): the stages move blocks
 * along the Gray ring, so the result is [Barnat-IB109]/004's shift of ring
 * POSITIONS (position i, node G(i), sends to position i + q); tc_shift
 * without opts.shift_ring shifts RANKS (rank r to rank r + q), a different
 * permutation on the hypercube (`hypercube_ct` and `direct` do that one).
 *
 * Cost: tc_cost_shift_hypercube_gray_q() (include/topocoll/cost.h, backward =
 * 0 or 1): the sum over the stages of msg(1, m) for the term of 1 and
 * msg(2, m) for the others.  The e-cube routes of a stage never share a link at
 * the same time, and the fewest links also give the fewest stages, so the
 * minimum of cost/shift.c's programme (weighted by the model) is reached by
 * the fewest-links digits under any model.  Bounds of [Barnat-IB109]: at most
 * 2 log p links forward (log p stages), at most log p links backward.
 * Restrictions: hypercube (p = 2^d) with shift_ring; any q.
 * Buffers: the first stage reads IN, later ones the buffer of the previous
 * stage; receives alternate between TC__BUF_TMP and OUT so that the last
 * lands in OUT (shift_walk.h).  q' = 0 (or p = 1): a local copy.
 * Memory: m bytes of TC__BUF_TMP when there are 2 stages or more.
 *
 * Trace, hypercube d = 3, q = 5 forward (stages +4, +1; positions 0..7 are
 * nodes 0 1 3 2 6 7 5 4; blocks named by their position):
 *   stage +4: node G(j) -> G(j + 4): 0 -> 6, 1 -> 7, 3 -> 5, 2 -> 4, 6 -> 0 ...
 *             (2 links each), into TMP
 *   stage +1: G(j) -> G(j + 1), 1 link each, into OUT: position j + 5 holds
 *             position j's block.
 * Backward, q = 7: the single stage -1 (1 link) instead of 4 + 2 + 1 (5 links).
 */
#include "shift_walk.h"

/* The digits e[0 .. d) of q (0 <= q < 2^d): binary (forward) or signed with
 * the fewest links (weight 1 for digit 0, 2 for the others), mod 2^d. */
static void gray_digits(int d, unsigned q, int backward, int *e)
{
	for (int i = 0; i < d; i++)
		e[i] = (int)((q >> i) & 1u);
	if (!backward || d == 0)
		return;
	/* cost[i][c]: fewest links for the digits below i, carry c into i;
	 * choice[i + 1][nc]: the (carry, digit) that reached carry nc. */
	enum { INF = 1 << 29 };
	int cost[2] = {0, INF};
	int pc[32][2], pe[32][2];
	for (int i = 0; i < d; i++) {
		int w = i == 0 ? 1 : 2;
		int next[2] = {INF, INF};
		for (int c = 0; c < 2; c++) {
			if (cost[c] >= INF)
				continue;
			int v = (int)((q >> i) & 1u) + c;
			for (int dg = -1; dg <= 1; dg++) {
				if ((v - dg) & 1)
					continue;
				int nc = (v - dg) / 2;
				int t = cost[c] + (dg ? w : 0);
				if (t < next[nc]) {
					next[nc] = t;
					pc[i][nc] = c;
					pe[i][nc] = dg;
				}
			}
		}
		cost[0] = next[0];
		cost[1] = next[1];
	}
	int c = cost[0] <= cost[1] ? 0 : 1; /* a carry out of 2^d is 0 mod p */
	for (int i = d - 1; i >= 0; i--) {
		e[i] = pe[i][c];
		c = pc[i][c];
	}
}

static int gen_gray(const struct tc__gen *g, struct tc__sched *s, int backward)
{
	const int p = g->p, d = tc__log2_exact(p);
	if (tc_topo_kind(g->t) != TC_TOPO_HYPERCUBE || d < 0 || !g->shift_ring)
		return TC_ENOTSUP; /* a shift of ranks is not one of ring positions */
	if (g->q == 0)
		return tc__shift_local(g, s);
	int e[32], nst = 0;
	gray_digits(d, (unsigned)g->q, backward, e);
	for (int i = 0; i < d; i++)
		nst += e[i] != 0;
	struct tc__shift_walk w;
	int err = tc__shift_walk_init(&w, p, g->bytes);
	for (int v = 0; v < p && !err; v++)
		w.left[v] = nst;
	if (!err)
		err = tc__shift_walk_start(&w, s);
	int first = 1;
	for (int i = d - 1; i >= 0 && !err; i--) {
		if (!e[i])
			continue;
		const int step = e[i] * (1 << i);
		err = tc__shift_walk_round(&w, s, first);
		first = 0;
		for (int j = 0; j < p && !err; j++)
			err = tc__shift_walk_move(&w, s, tc__ring_node(g->t, j),
			                          tc__ring_node(g->t, j + step));
		tc__shift_walk_end(&w);
	}
	tc__shift_walk_free(&w);
	return err;
}

int tc__gen_shift_hypercube_gray(const struct tc__gen *g, struct tc__sched *s)
{
	return gen_gray(g, s, 0);
}

int tc__gen_shift_hypercube_gray_bw(const struct tc__gen *g, struct tc__sched *s)
{
	return gen_gray(g, s, 1);
}

double tc__f_shift_hypercube_gray(const struct tc__gen *g)
{
	return tc_cost_shift_hypercube_gray_q(g->md, g->p, g->q, (double)g->bytes, 0);
}

double tc__f_shift_hypercube_gray_bw(const struct tc__gen *g)
{
	return tc_cost_shift_hypercube_gray_q(g->md, g->p, g->q, (double)g->bytes, 1);
}
