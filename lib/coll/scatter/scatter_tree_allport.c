/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/scatter/scatter_tree_allport.c - one-to-all personalised
 * communication on the hypercube Q_n under the all-port model by n
 * spanning subtrees fed in parallel ([KKA-I], "optimal OAS tree in the
 * all-port SF non-combining Q_4" and its table for n = 6; Lemma 1).
 *
 * Relabel every node by virtid = id XOR root (the root is 0).  The spanning
 * tree D of Q_n is the union of n subtrees D_0 .. D_{n-1}, D_i hanging from
 * the root's neighbour 2^i, of about equal sizes (the source: "d subtrees of
 * about the same size"; under SF every path a shortest path).  Each node v
 * of Hamming weight w >= 2 has its parent among v with one bit cleared (so
 * its depth is w); the nodes are placed weight by weight, v increasing, each
 * in the smallest of the subtrees of its possible parents (the first on a
 * tie).  The source's n = 6 table balances the same way, necklace by
 * necklace; this greedy gives sizes ceil((p-1)/n) or less for every n <= 16
 * (the generator checks it and refuses otherwise).
 * Non-combining: every block travels alone.  In round t the root sends on
 * each port i the t-th block of D_i, farthest (deepest) first, and every
 * node forwards to its child the block it received in round t-1.  A block
 * of depth h sent in round k arrives in round k+h-1 without ever waiting
 * (it enters the link to 2^i alone and moves one link a round), so no link
 * carries two blocks in a round and no node receives two.  With s_i <= R =
 * ceil((p-1)/n) blocks in D_i and every level 1..h of a shortest-path tree
 * non-empty, the k-th block (depth h_k, sorted by decreasing depth) arrives
 * by round k + h_k - 1 <= R - 1: R rounds in all.
 * The combining variant of the source (Lemma 8: a combining model lets a node
 * send one message carrying many blocks, rho_OAB start-ups and
 * ceil((p-1)/n) m t_m of transfer) is scatter_tree_allport_comb.c
 * (`tree_allport_comb`, the same trees, one message per tree edge, n
 * start-ups).  This schedule is the one of the source's table and the closed
 * form of cost.h, valid (if not optimal in start-ups) whether md->combining
 * is set or not; AUTO takes the cheaper of the two.
 *
 * Cost: tc_cost_scatter_tree_allport() (include/topocoll/cost.h): ceil((p-1)/n)
 * rounds of one message per port, exact under SF (it meets Lemma 1's
 * rho_OAS(Q_n) = ceil((2^n-1)/n)).  Under cut-through the logical clock frees a
 * port after t_s + m t_w, so the t_h of the successive sends on one port
 * overlap: the modelled time lies between ceil((p-1)/n)(t_s + m t_w) + t_h and
 * the closed form, which pays t_h in every round (the tests assert both
 * bounds); e.g. Q_5, t_s = 1750, t_h = 40, m = 0: 12370 ns against 12530.  The
 * gather (the dual) has the same modelled time.
 * Restrictions: hypercube, p = 2^n, all-port model.
 * Memory: TMP of 2 m per rank (the block in flight and the one arriving);
 * O(p) words of work while generating.
 * Trace, Q_3, root 0 (R = ceil(7/3) = 3; D_0 = {1, 3, 7}, D_1 = {2, 6},
 * D_2 = {4, 5}):
 *   round 0: 0 -> 1 b7, 0 -> 2 b6, 0 -> 4 b5
 *   round 1: 0 -> 1 b3, 0 -> 2 b2 (OUT), 0 -> 4 b4 (OUT), 1 -> 3 b7,
 *            2 -> 6 b6 (OUT), 4 -> 5 b5 (OUT)
 *   round 2: 0 -> 1 b1 (OUT), 1 -> 3 b3 (OUT), 3 -> 7 b7 (OUT)
 */
#include <stdlib.h>

#include "coll/gen.h"
#include "oas_trees.h"

int tc__oas_trees(int d, int *tree, int *par, int *pos)
{
	const int p = 1 << d;
	int *size = calloc((size_t)d, sizeof *size);
	if (!size)
		return -1;
	for (int w = 1; w <= d; w++) {
		for (int v = 1; v < p; v++) {
			if (__builtin_popcount((unsigned)v) != w)
				continue;
			if (w == 1) {
				tree[v] = __builtin_ctz((unsigned)v);
				par[v] = 0;
			} else {
				int best = -1;
				for (int b = 0; b < d; b++) {
					int u = v ^ (1 << b);
					if (!(v & (1 << b)))
						continue;
					if (best < 0 || size[tree[u]] < size[tree[best]] ||
					    (size[tree[u]] == size[tree[best]] && tree[u] < tree[best]))
						best = u;
				}
				tree[v] = tree[best];
				par[v] = best;
			}
			size[tree[v]]++;
		}
	}
	int smax = 0;
	for (int i = 0; i < d; i++)
		smax = size[i] > smax ? size[i] : smax;
	/* Farthest first: by decreasing weight, then increasing v. */
	for (int i = 0; i < d; i++)
		size[i] = 0;
	for (int w = d; w >= 1; w--)
		for (int v = 1; v < p; v++)
			if (__builtin_popcount((unsigned)v) == w)
				pos[v] = size[tree[v]]++;
	free(size);
	return smax;
}

int tc__gen_scatter_tree_allport(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p, root = g->root, d = tc__log2_exact(p);
	const uint64_t m = g->bytes;
	if (d < 0 || d > 16 || tc_topo_kind(g->t) != TC_TOPO_HYPERCUBE || g->md->ports != TC_PORTS_ALL)
		return TC_ENOTSUP;
	int err = tc__sched_initial(s, root, 0, p);
	if (!err)
		err = tc__emit(s, root, root, TC__BUF_IN, (uint64_t)root * m, TC__BUF_OUT, 0, m,
		               TC__XOP_COPY);
	if (err || p == 1)
		return err;
	int *tree = malloc((size_t)p * 3 * sizeof *tree);
	if (!tree)
		return TC_ENOMEM;
	int *par = tree + p, *pos = tree + 2 * p;
	int path[17];
	const int R = (p - 1 + d - 1) / d;
	int smax = tc__oas_trees(d, tree, par, pos);
	if (smax < 0)
		err = TC_ENOMEM;
	else if (smax > R)
		err = TC_ENOTSUP; /* never seen for d <= 16; refuse rather than be slower */
	s->tmp_bytes = 2 * m;
	for (int t = 0; t < R && !err; t++) {
		if (t)
			err = tc__sched_round(s);
		for (int v = 1; v < p && !err; v++) {
			int h = __builtin_popcount((unsigned)v), k = pos[v];
			if (t < k || t >= k + h)
				continue;
			for (int u = v, j = h; j >= 0; j--, u = par[u])
				path[j] = u; /* path[0] = 0, the root */
			int j = t - k;       /* the hop path[j] -> path[j+1] */
			int last = j + 1 == h;
			struct tc__xfer x = {.src = path[j] ^ root,
			                     .dst = path[j + 1] ^ root,
			                     .sbuf = j ? TC__BUF_TMP : TC__BUF_IN,
			                     .soff = j ? (uint64_t)((t - 1) & 1) * m
			                               : (uint64_t)(v ^ root) * m,
			                     .rbuf = last ? TC__BUF_OUT : TC__BUF_TMP,
			                     .roff = last ? 0 : (uint64_t)(t & 1) * m,
			                     .op = TC__XOP_COPY,
			                     .info_lo = v ^ root,
			                     .info_n = 1,
			                     .bytes = m};
			err = tc__sched_add(s, &x);
		}
	}
	free(tree);
	return err;
}

double tc__f_scatter_tree_allport(const struct tc__gen *g)
{
	return tc_cost_scatter_tree_allport(g->md, g->p, (double)g->bytes);
}

double tc__f_gather_tree_allport(const struct tc__gen *g)
{
	return tc_cost_gather_tree_allport(g->md, g->p, (double)g->bytes);
}
