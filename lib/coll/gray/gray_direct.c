/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/gray/gray_direct.c - Gray-to-binary and binary-to-Gray
 * permutations by one routed transfer per node ([HJR-TR-20-92], section 3.5).
 *
 * Every node r sends its block straight to its destination, G^-1(r) for
 * gray2binary and G(r) for binary2gray (G = tc_gray()), in one round, e-cube
 * routed.  [HJR-TR-20-92]: the paths from every i to G^-1(i) are edge-disjoint
 * (directed), with any fixed order of the dimensions, so on a circuit-switched
 * (CT) hypercube all blocks go at once with one start-up and no congestion;
 * the same holds for the inverse permutation (its paths are the reversed
 * ones, dimension order reversed).  tests/test_coll_gray.c checks that the
 * contention checker finds no shared link for n = 1 .. 10.
 *
 * Cost: tc_cost_gray2binary_direct() (include/topocoll/cost.h): one message of
 * K bytes over the longest route, n - 1 links (i = 11..1 goes to 10..0).  On
 * other topologies the routes differ and the source gives no formula (NAN).
 * Restrictions: p a power of two (the permutation is only defined then);
 * any topology (routed).
 * Buffers: IN -> OUT of the destination; nodes 0 and 1 keep their block (a
 * local copy).
 * Memory: none.
 *
 * Trace, hypercube:2, gray2binary: round 0: 0 -> 0, 1 -> 1, 2 -> 3, 3 -> 2.
 */
#include "coll/gen.h"

int tc__gen_gray_direct(const struct tc__gen *g, struct tc__sched *s)
{
	if (tc__log2_exact(g->p) < 0)
		return TC_ENOTSUP;
	return tc__gen_perm_direct(g, s);
}

double tc__f_gray_direct(const struct tc__gen *g)
{
	if (tc_topo_kind(g->t) != TC_TOPO_HYPERCUBE)
		return NAN;
	return tc_cost_gray2binary_direct(g->md, tc__log2_exact(g->p), (double)g->bytes);
}
