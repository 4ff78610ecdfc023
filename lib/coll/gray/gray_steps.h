/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/gray/gray_steps.h - what the exchange algorithms of [HJR-TR-20-92]
 * (gb1, gb2, gb3) share: the GB1 exchange rule and a schedule builder for a
 * sequence of nearest-neighbour exchange steps.
 *
 * Every step of these algorithms is an exchange: in step k along dimension
 * dim, node v swaps one part of its working array (part j, the same region
 * at both ends) with node v ^ 2^dim, or does nothing.  A step is therefore an
 * involution of the (node, part) positions, and the whole algorithm a
 * product of involutions: running the steps in reverse order gives the
 * inverse permutation.  So the gray2binary schedule serves binary2gray with
 * its steps reversed, at the same cost ([HJR-TR-20-92], section 4: "corresponding
 * algorithms of the same complexities for binary-to-Gray permutation").
 *
 * Parts: the block of K bytes is cut into nparts parts of whole elements
 * (tc__block()); a part keeps its offset for ever (an exchange swaps the
 * same region), so part j of every block ends at offset j of OUT.
 */
#ifndef TC_COLL_GRAY_STEPS_H
#define TC_COLL_GRAY_STEPS_H

#include "coll/gen.h"

/* GB1's rule ([HJR-TR-20-92], section 2.4): during step i (dimension i, 0 <= i <=
 * n-2) node v exchanges when bit i+1 of G^-1(v) is 1.  Symmetric: flipping
 * bit i of v leaves bit i+1 of G^-1(v) unchanged. */
static inline int tc__gray_gb1_flag(int v, int i)
{
	return (int)(tc_gray_inverse((uint32_t)v) >> (i + 1)) & 1;
}

/* Step `step` of a gray2binary exchange algorithm on an n-cube: the part
 * node v exchanges (-1: none); *dim gets the step's dimension. */
typedef int (*tc__gray_step_fn)(int n, int step, int v, int *dim);

/*
 * Emits the nsteps exchange steps of `who` (reversed for binary2gray), one
 * round each, with parts of whole elements.  Round 0's sends read IN; a
 * part's last receive at a node lands in OUT, earlier ones in TMP (K bytes);
 * a (node, part) that never receives is copied IN -> OUT locally in round 0.
 * n <= 1 (p <= 2): the permutation is the identity, one round of local
 * copies.  track: declare the pieces (origin rank, part) to the checker.
 * Returns 0, TC_ENOTSUP (p not a power of two, a topology other than the
 * hypercube or the complete graph), TC_ENOMEM.
 */
int tc__gray_exchanges(const struct tc__gen *g, struct tc__sched *s, int nparts, int nsteps,
                       tc__gray_step_fn who, int track);

/* The closed forms of [HJR-TR-20-92] for g's collective and n: NAN off the
 * hypercube and with half-duplex ports (an exchange's two directions then
 * share the port or the link and take twice as long). */
double tc__gray_formula(const struct tc__gen *g, double (*g2b)(const struct tc_model *, int, double),
                        double (*b2g)(const struct tc_model *, int, double));

#endif /* TC_COLL_GRAY_STEPS_H */
