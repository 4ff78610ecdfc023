/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/gray/gray_gb3.c - Gray-to-binary and binary-to-Gray permutations
 * in n half-block exchanges ([HJR-TR-20-92], section 3.3, Algorithm GB3).
 *
 * Each block is cut into two halves of whole elements, part 0 (the first
 * ceil(count/2) elements) and part 1.  Gray-to-binary, n steps:
 *   step 0 (pre-exchange, dimension n-2): every node swaps part 1 with
 *     v ^ 2^(n-2);
 *   steps 1 .. n-2 (dimension i = step - 1 = 0 .. n-3): GB1's exchangers
 *     swap part 0, the others part 1 (flipping bit n-2 flips bit i+1 of
 *     G^-1(v) for i <= n-3, so the node across dimension n-2, whose
 *     trajectory part 1 carries, exchanges exactly when v does not);
 *   step n-1 (dimension n-2, post-exchange combined with GB1's normal
 *     exchange of dimension n-2): nodes of subcube 1_(n-1) swap part 0
 *     (GB1's exchange; part 1 already sits where the post-exchange followed
 *     by GB1's exchange would leave it), nodes of subcube 0_(n-1) swap part 1
 *     (the post-exchange alone; GB1 does not exchange there).
 * So every step moves K/2 over every edge of its dimension.  Binary-to-Gray:
 * the same steps in reverse order (dimensions n-2, n-3 .. 0, n-2; each step
 * a set of swaps, gray_steps.h).
 *
 * Cost: tc_cost_gray2binary_gb3() (include/topocoll/cost.h; the source's (3),
 * tau = t_s, t_c = t_w, n >= 2): n steps of one message of half the block
 * (K/2 bytes); exact for an even number of elements.  With an odd count part 0
 * has one element more than part 1; the pre-exchange moves part 1 and a chain
 * of part-0 exchanges runs through the other n-1 steps, so the modelled time
 * is n tau + ((n-1) |part 0| + |part 1|) t_c, (n-2) esize t_c / 2 above the
 * formula (asserted in tests/test_coll_gray.c; a pre-exchange of part 0 would
 * cost n (tau + |part 0| t_c)).  Under CT each step also pays t_h; half duplex:
 * NAN.  n <= 1 (p <= 2): the permutation is the identity (G(0) = 0, G(1) = 1),
 * a local copy, cost 0 as the closed form.
 * Restrictions: p = 2^n; hypercube, or a complete graph (formula NAN there).
 * Buffers: IN -> TMP -> OUT, each half's last move lands in OUT.  The
 * checker's pieces are not declared (part 1 of nodes 0 and 1 goes out and
 * comes back, which NOHO forbids).
 * Memory: TMP, K bytes.
 *
 * Trace, hypercube:3, gray2binary (G^-1 = 0 1 3 2 7 6 4 5; halves a (part
 * 0) and b (part 1) by origin rank; node: a b):
 *   start           0:0a 0b  1:1a 1b  2:2a 2b  3:3a 3b  4:4a 4b  5:5a 5b  6:6a 6b  7:7a 7b
 *   step 0, dim 1   0:0a 2b  1:1a 3b  2:2a 0b  3:3a 1b  4:4a 6b  5:5a 7b  6:6a 4b  7:7a 5b
 *     (every node swaps b with v ^ 2)
 *   step 1, dim 0   0:0a 3b  1:1a 2b  2:3a 0b  3:2a 1b  4:5a 6b  5:4a 7b  6:6a 5b  7:7a 4b
 *     (2-3, 4-5 swap a; 0-1, 6-7 swap b)
 *   step 2, dim 1   0:0a 0b  1:1a 1b  2:3a 3b  3:2a 2b  4:6a 6b  5:7a 7b  6:5a 5b  7:4a 4b
 *     (4-6, 5-7 swap a; 0-2, 1-3 swap b): every r's a and b at G^-1(r)
 */
#include "gray_steps.h"

static int gb3_who(int n, int step, int v, int *dim)
{
	*dim = n - 2;
	if (step == 0)
		return 1;
	if (step == n - 1)
		return (v >> (n - 1)) & 1 ? 0 : 1;
	*dim = step - 1;
	return tc__gray_gb1_flag(v, step - 1) ? 0 : 1;
}

int tc__gen_gray_gb3(const struct tc__gen *g, struct tc__sched *s)
{
	int n = tc__log2_exact(g->p);
	return tc__gray_exchanges(g, s, 2, n, gb3_who, 0);
}

double tc__f_gray_gb3(const struct tc__gen *g)
{
	return tc__gray_formula(g, tc_cost_gray2binary_gb3, tc_cost_binary2gray_gb3);
}
