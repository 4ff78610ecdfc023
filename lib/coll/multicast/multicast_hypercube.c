/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/multicast/multicast_hypercube.c - multicast on a cut-through
 * hypercube by recursive doubling on the dimension-ordered chain ([KKA-I],
 * multicast, Lemmas 5 and 6).
 *
 * By node symmetry relabel every node v as v XOR root: the source becomes
 * 0^n.  The chain is the source followed by the members sorted in the
 * dimension order that the e-cube routing induces.  Our e-cube routing
 * (lib/topo/topo_route.c) flips the LOWEST differing bit first, so the
 * addresses are compared from bit 0 upwards: the members are sorted by
 * their bit-reversed relabelled address (the source compares left to right
 * because its routing starts at the leftmost bit).  The source is first.
 * Recursive doubling: the holder at the start of a segment sends to the
 * first node of the upper half (the lower half has ceil(len/2) nodes), and
 * both halves go on; ceil(log2(|M| + 1)) rounds, every transfer routed.
 * Lemma 6 (case 1): in a round the pairs u -> v, w -> z of different
 * segments satisfy u < v < w < z, so their e-cube paths are edge-disjoint,
 * also when rounds overlap in time (later segments are nested in earlier
 * ones); the tests check contention == 0 under CT.
 *
 * Cost: tc_cost_multicast(md, |M|, m, path_hops) with path_hops from
 * tc__mc_chain_path(); see multicast_mesh.c for what path_hops is and the
 * (bounded, tested) cases where the modelled time exceeds the closed form
 * under CT.  p = 1, or no member: no transfer.
 * Restrictions: hypercube, p = 2^d.
 * Buffers: OUT of the holders to OUT of the members only (every node of the
 * chain is the root or a member).  Memory: the chain, |M| + 1 ints.
 *
 * Trace, hypercube:3, root 5, members {0, 1, 2, 3} (relabelled 5, 4, 7, 6;
 * bit-reversed 5, 1, 7, 3): chain 5, 1, 3, 0, 2 (relabelled 0, 4, 6, 5, 7).
 * Round 0: 5 -> 0; round 1: 5 -> 3, 0 -> 2; round 2: 5 -> 1.
 */
#include <stdlib.h>

#include "coll/multicast/multicast_chain.h"

static unsigned tc__mc_bitrev(unsigned v, int d)
{
	unsigned r = 0;
	for (int i = 0; i < d; i++)
		r |= ((v >> i) & 1u) << (d - 1 - i);
	return r;
}

static int tc__mc_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The chain: c[0] = root, then the members in the dimension order. */
static int *tc__mc_hc_chain(const struct tc__gen *g, int *n)
{
	int d = tc__log2_exact(g->p);
	*n = g->nmembers + 1;
	uint64_t *key = malloc(sizeof *key * (size_t)*n);
	int *c = malloc(sizeof *c * (size_t)*n);
	if (!key || !c) {
		free(key);
		free(c);
		return NULL;
	}
	for (int i = 0; i < g->nmembers; i++) {
		unsigned v = (unsigned)(g->members[i] ^ g->root);
		key[i] = (uint64_t)tc__mc_bitrev(v, d) << 32 | (uint32_t)g->members[i];
	}
	qsort(key, (size_t)g->nmembers, sizeof *key, tc__mc_cmp_u64);
	c[0] = g->root;
	for (int i = 0; i < g->nmembers; i++)
		c[i + 1] = (int)(uint32_t)key[i];
	free(key);
	return c;
}

int tc__gen_multicast_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	if (tc__log2_exact(g->p) < 0 || tc_topo_kind(g->t) != TC_TOPO_HYPERCUBE)
		return TC_ENOTSUP;
	int n;
	int *c = tc__mc_hc_chain(g, &n);
	if (!c)
		return TC_ENOMEM;
	int err = tc__mc_chain_rd(g, s, c, n, 0);
	free(c);
	return err;
}

/* The links of the critical chain of g's schedule (tc__mc_chain_path()), 0
 * without members, -1 without memory. */
static long tc__mc_hc_path(const struct tc__gen *g)
{
	int n;
	if (g->nmembers == 0)
		return 0;
	int *c = tc__mc_hc_chain(g, &n);
	if (!c)
		return -1;
	long path = tc__mc_chain_path(g, c, n, 0);
	free(c);
	return path;
}

double tc__f_multicast_hypercube(const struct tc__gen *g)
{
	if (tc__log2_exact(g->p) < 0 || tc_topo_kind(g->t) != TC_TOPO_HYPERCUBE)
		return NAN;
	long path = tc__mc_hc_path(g);
	return path < 0 ? NAN : tc_cost_multicast(g->md, g->nmembers, (double)g->bytes, path);
}
