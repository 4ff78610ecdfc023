/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/multicast/multicast_mesh.c - multicast on a cut-through k-D mesh
 * by recursive doubling on the dimension-ordered chain, the source possibly
 * inside it ([KKA-I], multicast; the 2-D example: chain [0,2] [0,4] [1,2]
 * [2,0] [2,1] [2,3] [2,4] [3,0], source [1,2], 3 steps).
 *
 * Meshes are not node-symmetric, so the source sits anywhere in the chain.
 * Our routing corrects dimension 0 first and dimension 0 has the largest
 * rank stride (row-major), so the dimension-ordered chain of the source and
 * the members is ascending rank order.  Split a segment into the lower half
 * (ceil(len/2) nodes) and the upper half; a holder in the lower half sends
 * to the first node of the upper half, otherwise to the last node of the
 * lower half; recurse on both halves (multicast_chain.c).
 * ceil(log2(|M| + 1)) rounds, every transfer routed.
 *
 * Cost: tc_cost_multicast(md, |M|, m, path_hops) (include/topocoll/cost.h):
 * under CT one message time per step of the chain and t_h per link of the
 * path_hops, under SF a whole message time per link.  On our clock a
 * sender is free again after t_s + m t_w while its message still travels,
 * so a rank x ends at k_x (t_s + m t_w) + H_x t_h (CT), with k_x the
 * transfers of its chain (its informers' sends before the one that reached
 * it, that one, and its own sends) and H_x the links of the routes that
 * brought the data to x.  path_hops (tc__mc_chain_path()):
 *   CT: the largest H_x over the ranks with k_x = steps (the source is one,
 *       H = 0), so the form is exact unless a rank with k_x < steps ends
 *       later: (steps - k_x)(t_s + m t_w) < (H_x - path_hops) t_h, which
 *       needs a large t_h (e.g. two halves of unequal depth, the shallower
 *       one with the longer routes); then the modelled time is that
 *       rank's, above the closed form (the tests compute both and check
 *       exactly this).  path_hops may be below steps (two neighbours of the
 *       source: 2 steps, 1 link).
 *   SF: the largest, over the ranks, of H_x + the sends of x's chain that
 *       did not reach it (each costs one link's share): exact.
 * p = 1, or no member: no transfer.
 * Contention: pairs u -> v, w -> z (or v -> u, z -> w, or v -> u, w -> z)
 * of disjoint segments, u < v < w < z, are edge-disjoint under dimension-
 * order routing (Lemma 6's cases 1-3 on a mesh); the pattern u -> v with
 * z -> w never occurs in one round (it would need it in the round before).
 * The tests check contention == 0 under CT one-port on random sets.
 * Restrictions: mesh (k-D, any dims).  Not torus: the wrap routes leave the
 * rank order (the checker finds contention).
 * Buffers: OUT of the holders to OUT of the members only.  Memory: the
 * chain, |M| + 1 ints.
 *
 * Trace, mesh:4x5, root 7 = [1,2], members 2, 4, 10, 11, 13, 14, 15 (the
 * source's example): chain 2 4 7 10 11 13 14 15, source at position 2.
 * Round 0: 7 -> 11; round 1: 7 -> 4, 11 -> 14; round 2: 4 -> 2, 7 -> 10,
 * 11 -> 13, 14 -> 15.
 */
#include <stdlib.h>

#include "coll/multicast/multicast_chain.h"

/* The chain (ascending ranks of the root and the members) and the root's
 * position in it. */
static int *tc__mc_mesh_chain(const struct tc__gen *g, int *n, int *hpos)
{
	*n = g->nmembers + 1;
	int *c = malloc(sizeof *c * (size_t)*n);
	if (!c)
		return NULL;
	int j = 0;
	*hpos = -1;
	for (int i = 0; i < g->nmembers; i++) {
		if (*hpos < 0 && g->root < g->members[i]) {
			*hpos = j;
			c[j++] = g->root;
		}
		c[j++] = g->members[i];
	}
	if (*hpos < 0) {
		*hpos = j;
		c[j] = g->root;
	}
	return c;
}

int tc__gen_multicast_mesh(const struct tc__gen *g, struct tc__sched *s)
{
	if (tc_topo_kind(g->t) != TC_TOPO_MESH)
		return TC_ENOTSUP;
	int n, h;
	int *c = tc__mc_mesh_chain(g, &n, &h);
	if (!c)
		return TC_ENOMEM;
	int err = tc__mc_chain_rd(g, s, c, n, h);
	free(c);
	return err;
}

/* The links of the critical chain of g's schedule (tc__mc_chain_path()), 0
 * without members, -1 without memory. */
static long tc__mc_mesh_path(const struct tc__gen *g)
{
	int n, h;
	if (g->nmembers == 0)
		return 0;
	int *c = tc__mc_mesh_chain(g, &n, &h);
	if (!c)
		return -1;
	long path = tc__mc_chain_path(g, c, n, h);
	free(c);
	return path;
}

double tc__f_multicast_mesh(const struct tc__gen *g)
{
	if (tc_topo_kind(g->t) != TC_TOPO_MESH)
		return NAN;
	long path = tc__mc_mesh_path(g);
	return path < 0 ? NAN : tc_cost_multicast(g->md, g->nmembers, (double)g->bytes, path);
}
