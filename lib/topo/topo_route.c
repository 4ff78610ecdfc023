/* SPDX-License-Identifier: MIT */
/*
 * lib/topo/topo_route.c - deterministic shortest-path routing, distances,
 * mesh/torus coordinates and the Gray code inverse.
 *
 * Routes (topocoll/topo.h):
 *   hypercube   e-cube: flip the lowest bit in which cur and dst differ;
 *   mesh        dimension order: correct dimension 0 first, then 1, ...;
 *   torus       same, each dimension the shorter way round, a tie (distance
 *               d/2 both ways) towards increasing coordinate;
 *   ring        the shorter way round, a tie towards increasing rank;
 *   chain       straight towards dst;  star  via the hub 0;
 *   tree        up to the lowest common ancestor, then down;
 *   complete    the direct link.
 * Each rule picks a neighbour one hop closer to dst and applies the same rule
 * from there, so every route is a shortest path and route(src) is src
 * followed by route(next_hop(src)).  next_hop() costs O(dimensions) (O(depth)
 * <= 20 steps on a tree with K >= 2); route() costs O(hops).
 * The charges of routes over weighted links (lib/topo/charge.h) are at the
 * end: the same walk, summing the weights.
 */
#include <stddef.h>
#include <stdlib.h>

#include "base/error_detail.h"
#include "topo/charge.h"
#include "topo/topo_internal.h"
#include "topocoll/error.h"

/* Next hop for valid cur != dst. */
static int tc__next_hop(const struct tc_topo *t, int cur, int dst)
{
	const int p = t->p;

	switch (t->kind) {
	case TC_TOPO_COMPLETE:
		return dst;
	case TC_TOPO_RING: {
		int fwd = (dst - cur + p) % p; /* hops going up; p - fwd going down */
		return fwd <= p - fwd ? (cur + 1) % p : (cur + p - 1) % p;
	}
	case TC_TOPO_CHAIN:
		return cur < dst ? cur + 1 : cur - 1;
	case TC_TOPO_STAR:
		return cur == 0 ? dst : 0;
	case TC_TOPO_HYPERCUBE: {
		unsigned diff = (unsigned)(cur ^ dst);
		return cur ^ (int)(diff & (0u - diff));
	}
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
		for (int i = 0; i < t->ndims; i++) {
			int d = t->dims[i], s = t->stride[i];
			int c = (cur / s) % d, e = (dst / s) % d, nc;
			if (c == e)
				continue;
			if (t->kind == TC_TOPO_MESH) {
				nc = c < e ? c + 1 : c - 1;
			} else {
				int fwd = (e - c + d) % d;
				nc = fwd <= d - fwd ? (c + 1) % d : (c + d - 1) % d;
			}
			return cur + (nc - c) * s;
		}
		return cur;
	case TC_TOPO_TREE: {
		const int k = t->arity;
		int x = dst, child = dst;
		/* Is cur an ancestor of dst?  Ancestors have smaller ranks. */
		if (k == 1)
			return cur < dst ? cur + 1 : cur - 1;
		while (x > cur) {
			child = x;
			x = (x - 1) / k;
		}
		return x == cur ? child : (cur - 1) / k;
	}
	}
	return cur;
}

int tc_topo_next_hop(const struct tc_topo *t, int cur, int dst)
{
	tc__clear_detail();
	if (!t)
		return TC_EINVAL;
	if (cur < 0 || cur >= t->p || dst < 0 || dst >= t->p)
		return TC_ERANK;
	return cur == dst ? cur : tc__next_hop(t, cur, dst);
}

int tc__topo_next_hop(const struct tc_topo *t, int u, int v)
{
	return u == v ? u : tc__next_hop(t, u, v);
}

/* Lowest common ancestor of u and v in a tree with K >= 2 (depth <= 20). */
static int tc__tree_lca(const struct tc_topo *t, int u, int v)
{
	while (u != v) {
		if (u > v)
			u = (u - 1) / t->arity;
		else
			v = (v - 1) / t->arity;
	}
	return u;
}

static int tc__distance(const struct tc_topo *t, int u, int v)
{
	const int p = t->p;
	int d = 0;

	if (u == v)
		return 0;
	switch (t->kind) {
	case TC_TOPO_COMPLETE:
		return 1;
	case TC_TOPO_RING: {
		int fwd = (v - u + p) % p;
		return fwd < p - fwd ? fwd : p - fwd;
	}
	case TC_TOPO_CHAIN:
		return u < v ? v - u : u - v;
	case TC_TOPO_STAR:
		return u == 0 || v == 0 ? 1 : 2;
	case TC_TOPO_HYPERCUBE:
		return __builtin_popcount((unsigned)(u ^ v));
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
		for (int i = 0; i < t->ndims; i++) {
			int n = t->dims[i], s = t->stride[i];
			int a = (u / s) % n, b = (v / s) % n;
			int x = a < b ? b - a : a - b;
			if (t->kind == TC_TOPO_TORUS && n - x < x)
				x = n - x;
			d += x;
		}
		return d;
	case TC_TOPO_TREE:
		if (t->arity == 1)
			return u < v ? v - u : u - v;
		return tc__tree_depth(t, u) + tc__tree_depth(t, v) -
		       2 * tc__tree_depth(t, tc__tree_lca(t, u, v));
	}
	return 0;
}

int tc_topo_distance(const struct tc_topo *t, int u, int v)
{
	tc__clear_detail();
	if (!t)
		return TC_EINVAL;
	if (u < 0 || u >= t->p || v < 0 || v >= t->p)
		return TC_ERANK;
	return tc__distance(t, u, v);
}

int tc_topo_route(const struct tc_topo *t, int src, int dst, int *path, int cap)
{
	tc__clear_detail();
	int hops, n;

	if (!t || cap < 0 || (!path && cap > 0))
		return TC_EINVAL;
	if (src < 0 || src >= t->p || dst < 0 || dst >= t->p)
		return TC_ERANK;
	hops = tc__distance(t, src, dst);
	if (cap == 0) /* length query */
		return hops;
	n = hops + 1 < cap ? hops + 1 : cap;
	if (t->kind == TC_TOPO_TREE && t->arity > 1) {
		/* Up from src to the LCA, then the ancestors of dst below the LCA
		 * written backwards from the end: O(hops) in all. */
		int lca = tc__tree_lca(t, src, dst);
		int up = tc__tree_depth(t, src) - tc__tree_depth(t, lca);
		int x = src;
		for (int i = 0; i <= up && i < n; i++) {
			path[i] = x;
			x = (x - 1) / t->arity;
		}
		x = dst;
		for (int i = hops; i > up; i--) {
			if (i < n)
				path[i] = x;
			x = (x - 1) / t->arity;
		}
	} else {
		int x = src;
		path[0] = x;
		for (int i = 1; i < n; i++)
			path[i] = x = tc__next_hop(t, x, dst);
	}
	return hops + 1 <= cap ? hops : TC_ETRUNCATE;
}

int tc_topo_coords(const struct tc_topo *t, int rank, int *coords)
{
	tc__clear_detail();
	if (!t || !coords)
		return TC_EINVAL;
	if (t->kind != TC_TOPO_MESH && t->kind != TC_TOPO_TORUS && t->kind != TC_TOPO_RING &&
	    t->kind != TC_TOPO_CHAIN)
		return TC_ENOTSUP;
	if (rank < 0 || rank >= t->p)
		return TC_ERANK;
	for (int i = 0; i < t->ndims; i++)
		coords[i] = (rank / t->stride[i]) % t->dims[i];
	return 0;
}

int tc_topo_rank_of(const struct tc_topo *t, const int *coords)
{
	tc__clear_detail();
	int r = 0;

	if (!t || !coords)
		return TC_EINVAL;
	if (t->kind != TC_TOPO_MESH && t->kind != TC_TOPO_TORUS && t->kind != TC_TOPO_RING &&
	    t->kind != TC_TOPO_CHAIN)
		return TC_ENOTSUP;
	for (int i = 0; i < t->ndims; i++) {
		if (coords[i] < 0 || coords[i] >= t->dims[i])
			return TC_ERANK;
		r += coords[i] * t->stride[i];
	}
	return r;
}

/* g = i ^ (i >> 1), so i's bit k is the XOR of g's bits k and above: fold
 * the higher bits down with shifts of 1, 2, 4, 8, 16. */
uint32_t tc_gray_inverse(uint32_t g)
{
	g ^= g >> 1;
	g ^= g >> 2;
	g ^= g >> 4;
	g ^= g >> 8;
	g ^= g >> 16;
	return g;
}

/* ---- charges (lib/topo/charge.h) ---------------------------------------- */

int tc__topo_weighted(const struct tc_topo *t)
{
	return t->wt != NULL;
}

int tc__topo_link_charge(const struct tc_topo *t, int u, int nbr)
{
	return t->wt ? t->wt[t->off[u] + (size_t)nbr] : 1;
}

int tc__topo_charge(const struct tc_topo *t, int u, int v)
{
	if (!t->wt)
		return tc__distance(t, u, v);
	int c = 0;
	while (u != v) {
		int n = tc__next_hop(t, u, v);
		c += tc__topo_link_charge(t, u, tc_topo_neighbor_index(t, u, n));
		u = n;
	}
	return c;
}

int tc__topo_weigh(struct tc_topo *t, const struct tc_topo *parent, const int *members)
{
	if (!t || !parent || !members || t->wt)
		return TC_EINVAL;
	for (int u = 0; u < t->p; u++)
		if (members[u] < 0 || members[u] >= parent->p)
			return TC_EINVAL;
	const size_t arcs = t->off[t->p];
	int *wt = malloc((arcs ? arcs : 1) * sizeof *wt);
	if (!wt)
		return TC_ENOMEM;
	int heavy = 0;
	for (int u = 0; u < t->p; u++)
		for (size_t i = t->off[u]; i < t->off[u + 1]; i++) {
			wt[i] = tc__topo_charge(parent, members[u], members[t->adj[i]]);
			heavy |= wt[i] != 1;
		}
	if (heavy)
		t->wt = wt;
	else
		free(wt);
	return TC_OK;
}
