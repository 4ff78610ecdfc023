/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/gray/gray_gb2.c - Gray-to-binary and binary-to-Gray permutations
 * with half blocks on every edge ([HJR-TR-20-92], section 3.2, Algorithm GB2).
 *
 * Each block is cut into two halves of whole elements, part 0 (the first
 * ceil(count/2) elements) and part 1.  Gray-to-binary, n + 1 steps:
 *   step 0 (pre-exchange, dimension n-1): every node swaps part 1 with its
 *     neighbour v' = v ^ 2^(n-1);
 *   steps 1 .. n-1 (normal exchanges, dimension i = step - 1): a node that
 *     exchanges in GB1 (bit i+1 of G^-1(v)) swaps part 0 across dimension
 *     i, every other node swaps part 1: part 1 at v carries v' 's GB1
 *     trajectory, and by Lemma 4 v' exchanges exactly when v does not, so
 *     every edge of dimension i carries K/2 each way;
 *   step n (post-exchange, dimension n-1): every node swaps part 1 back.
 * Binary-to-Gray: the same steps in reverse order (each step is a set of
 * swaps; gray_steps.h).
 *
 * Cost: tc_cost_gray2binary_gb2() (include/topocoll/cost.h; the source's
 * (2), tau = t_s, t_c = t_w): n+1 steps of one message of half the block
 * (K/2 bytes); exact when the block has an even number of elements.  With an
 * odd count part 0 has one element more than part 1; the pre- and
 * post-exchange move part 1, and a chain of part-0 exchanges runs through
 * the n-1 normal steps (each step waits for the partner's previous one), so
 * the modelled time is (n+1) tau + ((n-1) |part 0| + 2 |part 1|) t_c, i.e.
 * (n-3) esize t_c / 2 above the formula (below it at n = 2; asserted in
 * tests/test_coll_gray.c).  Moving part 0 in the pre- and post-exchange
 * instead would cost (n+1)(tau + |part 0| t_c), never less.  Under CT
 * each step also pays t_h; half duplex: NAN (an exchange's two directions
 * share the port).  Always one more start-up and the same data time as GB3.
 * Restrictions: p = 2^n; hypercube, or a complete graph (formula NAN
 * there).  n <= 1: the identity, a local copy.
 * Buffers: IN -> TMP -> OUT, each half's last move lands in OUT.  The
 * checker's pieces are not declared: the pre- and post-exchange send part 1
 * of nodes 0 and 1 (whose blocks stay) out and back, which NOHO forbids.
 * Memory: TMP, K bytes.
 *
 * Trace, hypercube:2, gray2binary (halves r, r'): pre: 0 <-> 2, 1 <-> 3
 * (part 1); dim 0: 2 <-> 3 (part 0), 0 <-> 1 (part 1); post: 0 <-> 2, 1 <-> 3
 * (part 1); ends 0: 0 0', 1: 1 1', 2: 3 3', 3: 2 2'.
 */
#include "gray_steps.h"

static int gb2_who(int n, int step, int v, int *dim)
{
	if (step == 0 || step == n) {
		*dim = n - 1;
		return 1;
	}
	*dim = step - 1;
	return tc__gray_gb1_flag(v, step - 1) ? 0 : 1;
}

int tc__gen_gray_gb2(const struct tc__gen *g, struct tc__sched *s)
{
	int n = tc__log2_exact(g->p);
	return tc__gray_exchanges(g, s, 2, n + 1, gb2_who, 0);
}

double tc__f_gray_gb2(const struct tc__gen *g)
{
	return tc__gray_formula(g, tc_cost_gray2binary_gb2, tc_cost_binary2gray_gb2);
}
