/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/scatter/scatter_tree_allport_comb.c - one-to-all personalised
 * communication on the hypercube Q_n under the all-port COMBINING model
 * ([KKA-I], "OAS: lower bounds for combining models", Lemma 8, and
 * "combining model: OAS ~ OAB except that the message shrinks").
 *
 * The trees are those of the non-combining variant (oas_trees.h,
 * scatter_tree_allport.c): virtid = id XOR root, D = D_0 u .. u D_{n-1},
 * D_i hanging from 2^i with about ceil((p-1)/n) nodes, node v at depth
 * popcount(v).  Combining lets one message carry the blocks of many
 * destinations, so every tree edge carries exactly one message: the parent
 * sends to each child c, on c's port, the blocks of c's whole subtree T(c)
 * (sub(c) blocks), as soon as it holds its own subtree's blocks.  Round 0:
 * the root copies its blocks into TMP (local, free); round h (1..n): the
 * nodes of depth h-1 send to their children and copy their own block from
 * TMP to OUT; a leaf child receives its single block straight into OUT.
 * Layout: the blocks are kept in DFS pre-order of D (children by increasing
 * virtid), so T(c) is one contiguous range: node v keeps T(v) in its TMP
 * from offset 0 (its own block first), the root keeps blocks 1 .. p-1 of
 * the order.
 *
 * Cost (tc_cost_scatter_tree_allport_comb()), exact on the logical clock
 * under SF and CT, full or half duplex: a node of depth h receives once, at
 * the end of its ancestors' chain of messages, each on its own port and
 * started as soon as the sender holds it, so it has its blocks at
 *     sum over the path's nodes u (depth 1..h) of msg(1, sub(u) m),
 * and the makespan is T = max_h (h msg(1, 0) + S_h m t_w), S_h the largest
 * sum of subtree sizes along a root path to depth h (computed from the trees
 * by tc__f_scatter_tree_allport_comb()).  The source's Lemma 8 bound for
 * Q_n all-port is rho_OAB t_s + ceil((p-1)/n) m t_w (+ n t_h under WH),
 * rho_OAB = n under SF (Lemma 2), ceil(log_{n+1} 2^n) under WH (Lemma 4):
 * the n start-ups meet it under SF (not under WH, where recursive
 * multiplying would need fewer), but S_n > ceil((p-1)/n): a block of depth
 * h is forwarded h times inside ever smaller messages, and the greedy trees
 * are nearly paths inside each D_i.  S_1 .. S_n:
 *   n = 3: 3 5 6          n = 5: 7 13 16 18 19
 *   n = 4: 4 7 9 10       n = 6: 11 21 26 29 31 32   (R = 3, 4, 7, 11)
 * So it beats the non-combining tc_cost_scatter_tree_allport() only for small
 * m and n >= 5 (Q_6: when 5 t_s > 21 m t_w); never for n <= 4 (equal at
 * m = 0, where AUTO keeps the non-combining one, first in the registry).
 * The gather (the dual: every node sends its subtree's blocks up once it
 * has all its children's) has the same modelled time.
 * Restrictions: hypercube, p = 2^n (n <= 16), all-port, md->combining set
 * (the generator refuses otherwise: the registry has no token for it, so
 * tc_alg_applies() says 0 under a non-combining all-port model while the
 * call returns TC_ENOTSUP).
 * Memory: TMP of (p-1) m per rank (the root's p-1 blocks; a node of depth
 * h uses sub(v) m of it); O(p) words while generating.
 * Checker: single-block messages carry their piece (info); the multi-block
 * ones are untracked (their ranks are not one interval).
 * Trace, Q_3, root 0 (D_0 = {1, 3, 7} as the path 1-3-7, D_1 = {2, 6},
 * D_2 = {4, 5}; pre-order 0 1 3 7 2 6 4 5; root TMP = b1 b3 b7 b2 b6 b4 b5):
 *   round 0: 0: b0 IN -> OUT, b1..b7 IN -> TMP
 *   round 1: 0 -> 1 {b1 b3 b7}, 0 -> 2 {b2 b6}, 0 -> 4 {b4 b5}
 *   round 2: 1 -> 3 {b3 b7}, 2 -> 6 b6 (OUT), 4 -> 5 b5 (OUT); 1, 2, 4 copy
 *            their own block TMP -> OUT
 *   round 3: 3 -> 7 b7 (OUT); 3 copies b3 TMP -> OUT
 *   SF: T = 3 t_s + (3 + 2 + 1) m t_w (the path to 7); Lemma 8: 3 t_s +
 *   3 m t_w; non-combining: 3 t_s + 3 m t_w.
 */
#include <stdlib.h>

#include "coll/gen.h"
#include "oas_trees.h"

/* The trees of Q_d with sub[v], the subtree size of v (sub[0] = p), and
 * pre[v], v's position in the DFS pre-order of D (pre[0] = 0).  w is 5 p
 * ints: tree, par, sub, pre, and one of scratch.  0 or TC_ENOMEM. */
static int tc__comb_trees(int d, int *w)
{
	const int p = 1 << d;
	int *tree = w, *par = w + p, *sub = w + 2 * p, *pre = w + 3 * p, *nxt = w + 4 * p;
	if (tc__oas_trees(d, tree, par, nxt) < 0)
		return TC_ENOMEM;
	par[0] = -1;
	for (int v = 0; v < p; v++)
		sub[v] = 1;
	for (int h = d; h >= 1; h--) /* children before parents */
		for (int v = 1; v < p; v++)
			if (__builtin_popcount((unsigned)v) == h)
				sub[par[v]] += sub[v];
	pre[0] = 0;
	nxt[0] = 1;
	for (int h = 1; h <= d; h++) /* parents before children */
		for (int v = 1; v < p; v++)
			if (__builtin_popcount((unsigned)v) == h) {
				pre[v] = nxt[par[v]];
				nxt[par[v]] += sub[v];
				nxt[v] = pre[v] + 1;
			}
	return 0;
}

static int tc__comb_applies(const struct tc__gen *g)
{
	int d = tc__log2_exact(g->p);
	return d >= 0 && d <= 16 && tc_topo_kind(g->t) == TC_TOPO_HYPERCUBE &&
	       g->md->ports == TC_PORTS_ALL && g->md->combining;
}

int tc__gen_scatter_tree_allport_comb(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p, root = g->root, d = tc__log2_exact(p);
	const uint64_t m = g->bytes;
	if (!tc__comb_applies(g))
		return TC_ENOTSUP;
	int err = tc__sched_initial(s, root, 0, p);
	if (!err)
		err = tc__emit(s, root, root, TC__BUF_IN, (uint64_t)root * m, TC__BUF_OUT, 0, m,
		               TC__XOP_COPY);
	if (err || p == 1)
		return err;
	int *w = malloc((size_t)p * 5 * sizeof *w);
	if (!w)
		return TC_ENOMEM;
	const int *par = w + p, *sub = w + 2 * p, *pre = w + 3 * p;
	err = tc__comb_trees(d, w);
	s->tmp_bytes = (uint64_t)(p - 1) * m;
	/* Round 0: the root's blocks into TMP in pre-order (from position 1). */
	for (int v = 1; v < p && !err; v++)
		err = tc__emit(s, root, root, TC__BUF_IN, (uint64_t)(v ^ root) * m, TC__BUF_TMP,
		               (uint64_t)(pre[v] - 1) * m, m, TC__XOP_COPY);
	for (int h = 1; h <= d && !err; h++) {
		err = tc__sched_round(s);
		for (int c = 1; c < p && !err; c++) {
			if (__builtin_popcount((unsigned)c) != h)
				continue;
			int v = par[c], base = v ? pre[v] : 1, leaf = sub[c] == 1;
			struct tc__xfer x = {.src = v ^ root,
			                     .dst = c ^ root,
			                     .sbuf = TC__BUF_TMP,
			                     .soff = (uint64_t)(pre[c] - base) * m,
			                     .rbuf = leaf ? TC__BUF_OUT : TC__BUF_TMP,
			                     .roff = 0,
			                     .op = TC__XOP_COPY,
			                     .info_lo = leaf ? c ^ root : 0,
			                     .info_n = leaf,
			                     .bytes = (uint64_t)sub[c] * m};
			err = tc__sched_add(s, &x);
		}
		/* The senders' own blocks: TMP is not written this round. */
		for (int v = 1; v < p && !err; v++)
			if (__builtin_popcount((unsigned)v) == h - 1 && sub[v] > 1)
				err = tc__emit(s, v ^ root, v ^ root, TC__BUF_TMP, 0, TC__BUF_OUT,
				               0, m, TC__XOP_COPY);
	}
	free(w);
	return err;
}

/* S_h of the header, h = 1 .. d, into path[0 .. d); 0 or TC_ENOMEM. */
static int tc__comb_paths(int d, long *path)
{
	const int p = 1 << d;
	int *w = malloc((size_t)p * 5 * sizeof *w);
	long *sum = malloc((size_t)p * sizeof *sum);
	int err = w && sum ? tc__comb_trees(d, w) : TC_ENOMEM;
	for (int h = 1; h <= d && !err; h++) {
		const int *par = w + p, *sub = w + 2 * p;
		path[h - 1] = 0;
		for (int v = 1; v < p; v++)
			if (__builtin_popcount((unsigned)v) == h) {
				sum[v] = sub[v] + (par[v] ? sum[par[v]] : 0);
				path[h - 1] = sum[v] > path[h - 1] ? sum[v] : path[h - 1];
			}
	}
	free(sum);
	free(w);
	return err;
}

static double tc__comb_formula(const struct tc__gen *g, int gather)
{
	long path[16];
	int d = tc__log2_exact(g->p);
	if (!tc__comb_applies(g) || (d > 0 && tc__comb_paths(d, path)))
		return NAN;
	return gather ? tc_cost_gather_tree_allport_comb(g->md, g->p, (double)g->bytes, path)
	              : tc_cost_scatter_tree_allport_comb(g->md, g->p, (double)g->bytes, path);
}

double tc__f_scatter_tree_allport_comb(const struct tc__gen *g)
{
	return tc__comb_formula(g, 0);
}

double tc__f_gather_tree_allport_comb(const struct tc__gen *g)
{
	return tc__comb_formula(g, 1);
}
