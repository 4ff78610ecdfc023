/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/gray/gray_gb1.c - Gray-to-binary and binary-to-Gray permutations
 * by n-1 whole-block exchanges ([HJR-TR-20-92], section 2.4, Algorithm GB1).
 *
 * Gray-to-binary: n-1 exchange steps in ascending dimension order 0 .. n-2;
 * during step i node v exchanges its whole block with v ^ 2^i when bit i+1
 * of G^-1(v) is 1 (tc__gray_gb1_flag(); both ends agree: flipping bit i
 * leaves that bit unchanged).  Binary-to-Gray runs the same steps in the
 * reverse order n-2 .. 0: each step is a set of swaps (an involution), so
 * the reversed product is the inverse permutation (gray_steps.h).
 *
 * Cost: tc_cost_gray2binary_gb1(), tc_cost_binary2gray_gb1()
 * (include/topocoll/cost.h; the source's (1), tau = t_s, t_c = t_w): n-1 steps
 * of one neighbour message of K bytes per step and node, so exact under
 * one-port or all-port, full duplex, SF (under CT each step also pays t_h, as
 * msg(1, K) says).  Half duplex: an exchange's two directions share the port,
 * no closed form (NAN).  Only half of the links of dimensions 0 .. n-2 are used
 * in a step (Lemma 4).
 * Restrictions: p = 2^n; hypercube, or a complete graph (every exchange is
 * then one link too; formula NAN there: the source's is for the hypercube).
 * n <= 1: the identity, a local copy.
 * Buffers: IN -> (TMP) -> OUT: a block's last move lands in OUT, earlier
 * ones in TMP; blocks that never move are copied IN -> OUT (nodes with
 * G^-1(v) < 2 in the flags: e.g. 0 and 1).
 * Memory: TMP, K bytes.
 *
 * Trace, hypercube:3, gray2binary (blocks by origin rank; G^-1 = 0 1 3 2 7 6
 * 4 5):  step 0 (dim 0): 2 <-> 3, 4 <-> 5;  step 1 (dim 1): 4 <-> 6, 5 <-> 7;
 * ends with rank r's block at G^-1(r).
 */
#include "gray_steps.h"

static int gb1_who(int n, int step, int v, int *dim)
{
	(void)n;
	*dim = step;
	return tc__gray_gb1_flag(v, step) ? 0 : -1;
}

int tc__gen_gray_gb1(const struct tc__gen *g, struct tc__sched *s)
{
	int n = tc__log2_exact(g->p);
	return tc__gray_exchanges(g, s, 1, n - 1, gb1_who, 1);
}

double tc__f_gray_gb1(const struct tc__gen *g)
{
	return tc__gray_formula(g, tc_cost_gray2binary_gb1, tc_cost_binary2gray_gb1);
}
