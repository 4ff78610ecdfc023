/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/scatter/oas_trees.h - [KKA-I]'s all-port OAS spanning tree of
 * Q_n, shared by the non-combining (scatter_tree_allport.c, which defines
 * it) and the combining (scatter_tree_allport_comb.c) variants.
 *
 * The tree D is the union of n subtrees D_0 .. D_{n-1}, D_i hanging from
 * the root's neighbour 2^i, of about equal sizes; nodes are virtids (the
 * root is 0); every node v has depth popcount(v) (a shortest-path tree).
 * How it is built: the header of scatter_tree_allport.c.
 */
#ifndef TC_COLL_SCATTER_OAS_TREES_H
#define TC_COLL_SCATTER_OAS_TREES_H

/* The spanning trees of Q_d (virtids, 1 <= d <= 16): for every v in
 * [1, 2^d), tree[v] (the i of D_i), par[v] (0 for the root's neighbours)
 * and pos[v], the position of v in its subtree's farthest-first order
 * (decreasing depth, then increasing v).  Each array has 2^d entries;
 * entry 0 is not written.  Returns the largest subtree size, or -1 without
 * memory.  Pure: the same trees for the same d. */
int tc__oas_trees(int d, int *tree, int *par, int *pos);

#endif /* TC_COLL_SCATTER_OAS_TREES_H */
