/* SPDX-License-Identifier: MIT */
/*
 * lib/topo/topo_props.c - the properties of [Barnat-IB109] (links, degrees,
 * diameter, bisection width, arc connectivity), computed at creation from
 * the kind and parameters alone: closed forms, except the bisection width of
 * a tree (dynamic programme, exact up to TC__TOPO_TREE_EXACT_MAX nodes, an
 * upper bound above) and of meshes and tori (minimum over layered cuts).
 *
 * Notation: p nodes, floor(x) and ceil(x), B = bisection width (fewest links
 * cut by a split into floor(p/2) and ceil(p/2) nodes), L = arc (edge)
 * connectivity, delta = minimum degree.  Always L <= delta (cut the links of
 * a node of least degree), and p = 1 gives 0 for every property.
 *
 * complete:P   links p(p-1)/2, degree p-1, diameter 1 (p >= 2).
 *              B = floor(p/2)*ceil(p/2): every node of one half is linked to
 *              every node of the other.  L = p-1: any cut (S, V\S) crosses
 *              |S|(p-|S|) >= p-1 links.
 * ring:P       p >= 3: links p, degree 2, diameter floor(p/2) (the farthest
 *              node is half way round).  B = 2: each half is an arc of the
 *              cycle, and any cut of a cycle crosses it an even number >= 2
 *              of times.  L = 2 (a cycle stays connected after one cut).
 *              p = 2 is a single link (the two links i--i+1 coincide): links
 *              1, degree 1, diameter 1, B = 1, L = 1.
 * chain:P      links p-1, degrees 1 (ends) and 2 (inner, p >= 3), diameter
 *              p-1, B = L = 1 for p >= 2 (a tree: one link splits it in
 *              halves 0..floor(p/2)-1 and the rest).
 * star:P       links p-1, hub degree p-1, leaf degree 1, diameter 2 (p >= 3;
 *              1 for p = 2).  B = floor(p/2): the half without the hub has
 *              floor(p/2) or ceil(p/2) leaves, each losing its only link; the
 *              hub goes with the larger half.  L = 1 (a leaf).
 * hypercube:D  p = 2^D, degree D, links D*2^(D-1), diameter D (Hamming
 *              distance).  B = 2^(D-1) = p/2 for D >= 1: the cut between the
 *              subcubes bit(D-1) = 0 and 1 achieves it, and by the edge-
 *              isoperimetric inequality of Harper (1964) a set of 2^(D-1)
 *              nodes has at least 2^(D-1) outgoing links.  L = D: D
 *              link-disjoint paths join any two nodes (Menger).
 * tree:K:P     links p-1, L = 1 (p >= 2), min degree 1 (node p-1 is a leaf);
 *              max degree, diameter and B below (tc__tree_*).
 * mesh, torus  links, degrees, diameter per dimension; L from the Cartesian
 *              product theorem and B from the layered cut, see
 *              tc__grid_props() and tc__grid_bisection().
 */
#include <limits.h>
#include <stdlib.h>

#include "topo/topo_internal.h"
#include "topocoll/error.h"

/* ---- trees ------------------------------------------------------------- */

/*
 * Node v of the heap-shaped K-ary tree has parent (v-1)/K and children
 * K*v+1 .. K*v+K (those < p); the nodes of depth d are the consecutive ranks
 * (K^d-1)/(K-1) .. (K^(d+1)-1)/(K-1)-1, so depths are at most 20 for K >= 2
 * (p <= 2^20) and the tree is a chain for K = 1.
 */
int tc__tree_depth(const struct tc_topo *t, int v)
{
	int d = 0;

	if (t->arity == 1)
		return v;
	while (v > 0) {
		v = (v - 1) / t->arity;
		d++;
	}
	return d;
}

/* Height of the subtree of v (K >= 2): its leftmost descendant at relative
 * depth r is x_r, x_0 = v, x_(r+1) = K*x_r + 1, and every level of a heap-
 * shaped tree is filled from the left, so the height is the largest r with
 * x_r < p. */
static int tc__tree_height(const struct tc_topo *t, int v)
{
	long long x = v;
	int r = 0;

	while ((long long)t->arity * x + 1 < t->p) {
		x = (long long)t->arity * x + 1;
		r++;
	}
	return r;
}

/*
 * Diameter.  K = 1 is the chain (p-1).  For K >= 2 and p >= 3 the longest
 * path goes through the root and its two leftmost children, nodes 1 and 2:
 * levels fill from the left, so the heights h(1) >= h(2) >= ... >= h(K) of
 * the root's children differ by at most one, and the path h(1) + h(2) + 2
 * beats any path inside the subtree of a non-root node w, which has at most
 * 2*h(w) <= 2*h(1) < h(1) + h(2) + 2 links.
 */
static int tc__tree_diameter(const struct tc_topo *t)
{
	if (t->p <= 2)
		return t->p - 1;
	if (t->arity == 1)
		return t->p - 1;
	return tc__tree_height(t, 1) + tc__tree_height(t, 2) + 2;
}

/* Max degree: the root has min(K, p-1) children; a non-root node has its
 * parent plus at most K children, and node 1 (the first of depth 1) has the
 * most: min(K, max(0, p-1-K)). */
static int tc__tree_max_degree(const struct tc_topo *t)
{
	long long k = t->arity, p = t->p;
	long long root = k < p - 1 ? k : p - 1;
	long long c1 = p - 1 - k;
	long long one;

	if (p == 1)
		return 0;
	if (c1 < 0)
		c1 = 0;
	one = 1 + (c1 < k ? c1 : k);
	return (int)(root > one ? root : one);
}

#define TC__INF (INT_MAX / 4)

/* dst[i] = min(dst[i], x + src[i]) for i < n. */
static void tc__minplus_row(int *restrict dst, const int *restrict src, int x, int n)
{
	for (int i = 0; i < n; i++) {
		int v = x + src[i];
		dst[i] = v < dst[i] ? v : dst[i];
	}
}

/*
 * Exact bisection width of a tree by dynamic programming over subtrees.
 * f_v(k, s) is the fewest links cut inside the subtree of v when k of its
 * nodes are in the half S and v is in S (s = 1) or not (s = 0).  A leaf has
 * f(0,0) = f(1,1) = 0.  Adding a child c to v:
 *
 *   f'(a+b, s) = min over s' of f(a, s) + f_c(b, s') + [s != s'],
 *
 * and B = min_s f_root(floor(p/2), s).  Tables are cut at k = floor(p/2), and
 * merging tables of sizes n1 and n2 costs n1*n2, which sums to at most p^2/2
 * over the whole tree.  A node's table is freed once merged into its parent,
 * so the live tables belong to disjoint subtrees: O(p) memory.
 */
static int tc__tree_bisection_dp(const struct tc_topo *t, long *out)
{
	const int p = t->p, half = p / 2;
	const long long k = t->arity;
	int *n = malloc(sizeof(int) * (size_t)p);
	int **tab = calloc((size_t)p, sizeof *tab);
	int err = TC_ENOMEM;

	if (!n || !tab)
		goto out;
	for (int v = 0; v < p; v++)
		n[v] = 1;
	for (int v = p - 1; v > 0; v--)
		n[(v - 1) / k] += n[v];

	for (int v = p - 1; v >= 0; v--) {
		int m = (n[v] < half ? n[v] : half) + 1; /* entries k = 0..m-1 */
		int *f = malloc(sizeof(int) * 2 * (size_t)m);
		int *f0, *f1, cur = m > 1 ? 1 : 0;

		if (!f)
			goto out;
		f0 = f;
		f1 = f + m;
		for (int i = 0; i < 2 * m; i++)
			f[i] = TC__INF;
		f0[0] = 0;
		if (m > 1)
			f1[1] = 0;
		for (long long c = k * v + 1; c <= k * v + k && c < p; c++) {
			int mc = (n[c] < half ? n[c] : half) + 1;
			int *g0 = tab[c], *g1 = tab[c] + mc;
			int ncur = cur + mc - 1 < m - 1 ? cur + mc - 1 : m - 1;

			/* Fold the link v--c in: g0 (c not in S) serves s = 0 free
			 * and s = 1 at one cut, and g1 the other way round. */
			for (int b = 0; b < mc; b++) {
				int a0 = g0[b], a1 = g1[b];
				g0[b] = a0 < a1 + 1 ? a0 : a1 + 1;
				g1[b] = a1 < a0 + 1 ? a1 : a0 + 1;
			}
			/* In place, a descending: entries above a are final for this
			 * merge before a's contributions are added to them. */
			for (int a = cur; a >= 0; a--) {
				int x0 = f0[a], x1 = f1[a];
				int bmax = mc - 1 < m - 1 - a ? mc - 1 : m - 1 - a;
				f0[a] = x0 + g0[0];
				f1[a] = x1 + g1[0];
				if (x0 < TC__INF)
					tc__minplus_row(f0 + a + 1, g0 + 1, x0, bmax);
				if (x1 < TC__INF)
					tc__minplus_row(f1 + a + 1, g1 + 1, x1, bmax);
			}
			cur = ncur;
			free(tab[c]);
			tab[c] = NULL;
		}
		tab[v] = f;
	}
	{
		const int *f0 = tab[0], *f1 = tab[0] + half + 1; /* root: m = half + 1 */
		*out = f0[half] < f1[half] ? f0[half] : f1[half];
	}
	err = 0;
out:
	if (tab)
		for (int v = 0; v < p; v++)
			free(tab[v]);
	free(tab);
	free(n);
	return err;
}

/*
 * Greedy for large trees: takes the descendants of w (w itself excluded), in
 * rank order, whose whole subtree still fits in need, marking them in in[];
 * returns the number taken (each costs the link to its parent) once need is
 * met.  It always succeeds for need < n[w]: a node is skipped only when its
 * subtree is larger than need, and then its descendants alone still hold
 * enough nodes.  Descendants of w at each relative depth are consecutive
 * ranks, so the scan is O(n[w]).
 */
static long tc__tree_fill(const struct tc_topo *t, const int *n, unsigned char *in, int w, long need)
{
	const long long k = t->arity, p = t->p;
	long long a = w, b = w;
	long cuts = 0;

	in[w] = 0;
	while (need > 0 && k * a + 1 < p) {
		long long na = k * a + 1, nb = k * b + k < p - 1 ? k * b + k : p - 1;
		for (long long v = na; v <= nb; v++) {
			in[v] = in[(v - 1) / k];
			if (!in[v] && n[v] <= need) {
				in[v] = 1;
				need -= n[v];
				cuts++;
			}
		}
		a = na;
		b = nb;
	}
	return need == 0 ? cuts : LONG_MAX;
}

/*
 * Upper bound on the bisection width of a tree too large for the exact
 * programme (p > TC__TOPO_TREE_EXACT_MAX, where it would cost p^2).  The half
 * S not holding the root has floor(p/2) or ceil(p/2) nodes (the cut is the
 * same for S and its complement); the bound is the best of
 *  - 1 if some subtree has exactly that size;
 *  - whole subtrees taken greedily in rank (largest first) order:
 *    tc__tree_fill(root, |S|);
 *  - a subtree w larger than |S| with n[w] - |S| of its nodes given back the
 *    same way: 1 + tc__tree_fill(w, n[w] - |S|), for one w of each size.
 * Each is the cut of an actual bisection, so the value is never below the
 * true width, but it is not always the minimum: against the exact programme
 * for p <= 1500 and K = 2..9 it is exact in 70% (K = 2) to 34% (K = 8) of the
 * cases, 0.4 (K = 2) to 2.7 (K = 9) links too high on average, and at most 15
 * too high.
 */
static int tc__tree_bisection_greedy(const struct tc_topo *t, long *out)
{
	const int p = t->p, half = p / 2;
	const long long k = t->arity;
	int *n = malloc(sizeof(int) * (size_t)p);
	unsigned char *in = malloc((size_t)p);
	long best = LONG_MAX;

	if (!n || !in) {
		free(n);
		free(in);
		return TC_ENOMEM;
	}
	for (int v = 0; v < p; v++)
		n[v] = 1;
	for (int v = p - 1; v > 0; v--)
		n[(v - 1) / k] += n[v];
	for (int v = 1; v < p; v++)
		if (n[v] == half || n[v] == p - half)
			best = 1;
	for (int target = half; best > 1 && target <= p - half; target++) {
		long c = tc__tree_fill(t, n, in, 0, target);
		best = c < best ? c : best;
		for (int w = 1, last = -1; w < p && n[w] > target; w++) {
			if (n[w] == last)
				continue;
			last = n[w];
			c = tc__tree_fill(t, n, in, w, n[w] - target);
			if (c < LONG_MAX && c + 1 < best)
				best = c + 1;
		}
	}
	*out = best;
	free(n);
	free(in);
	return 0;
}

static int tc__tree_bisection(const struct tc_topo *t, long *out)
{
	if (t->p == 1) {
		*out = 0;
		return 0;
	}
	if (t->arity == 1) { /* the chain */
		*out = 1;
		return 0;
	}
	if (t->arity >= t->p - 1) { /* the star */
		*out = t->p / 2;
		return 0;
	}
	if (t->p <= TC__TOPO_TREE_EXACT_MAX)
		return tc__tree_bisection_dp(t, out);
	return tc__tree_bisection_greedy(t, out);
}

/* ---- meshes and tori --------------------------------------------------- */

/*
 * Bisection width of the mesh or torus made of the dimensions in mask.
 *
 * Cut across dimension i (size d, q = p/d nodes per layer):
 *  - d even: the layers 0..d/2-1 form a half.  A mesh cuts q links; a torus
 *    2q (the wrap-around layer too), or q when d = 2 (its two links
 *    coincide).
 *  - d odd: take the layers 0..(d-3)/2 plus a balanced half T of the middle
 *    layer, itself the mesh/torus Q of the other dimensions.  The links cut
 *    are q (between the middle layer and its two neighbours: q - |T| on one
 *    side, |T| on the other), plus q for the wrap-around of a torus, plus the
 *    links cut inside the middle layer, B(Q) at best:
 *        mesh  q + B(Q),      torus  2q + B(Q).
 * B is the minimum over the dimensions.  For a 2-D m x n mesh, m <= n, this
 * is the textbook value (m if n is even, else m + 1 for m >= 2); when the
 * largest dimension d is even it is the usual p/d (mesh) and 2p/d (torus,
 * d >= 4).  The construction is an upper bound in general; an exhaustive
 * branch-and-bound search over balanced partitions confirmed it is exact for
 * every mesh and torus with p <= 50 (all shapes), and the tests recheck all
 * shapes of up to 3 dimensions with p <= 18.  For larger all-odd sizes it is
 * the standard layered-cut value, not proved minimal here.  Dimensions of
 * size 1 do not change the graph and are skipped.
 */
static long tc__grid_bisection(const struct tc_topo *t, unsigned mask, long *memo)
{
	long p = 1, best = -1;

	if (memo[mask] >= 0)
		return memo[mask];
	for (int i = 0; i < t->ndims; i++)
		if (mask & (1u << i))
			p *= t->dims[i];
	for (int i = 0; i < t->ndims; i++) {
		long d = t->dims[i], q = p / d, c;
		if (!(mask & (1u << i)) || d < 2)
			continue;
		if (t->kind == TC_TOPO_MESH)
			c = d % 2 == 0 ? q : q + tc__grid_bisection(t, mask & ~(1u << i), memo);
		else if (d == 2)
			c = q;
		else
			c = d % 2 == 0 ? 2 * q : 2 * q + tc__grid_bisection(t, mask & ~(1u << i), memo);
		if (best < 0 || c < best)
			best = c;
	}
	if (best < 0) /* a single node */
		best = 0;
	memo[mask] = best;
	return best;
}

/*
 * Mesh: dimension i of size d contributes (d-1)*p/d links, 0..2 to a node's
 * degree (2 inside, 1 at a face, 0 if d = 1), d-1 to the diameter.
 * Torus: d links per line for d >= 3 (1 for d = 2, 0 for d = 1), so d*p/d,
 * 1*p/2 or 0 links; every node has degree min(d-1, 2) in the dimension;
 * diameter floor(d/2) (half way round).
 *
 * Arc connectivity: a mesh is a Cartesian product of paths P_d (L = delta =
 * 1), a torus of cycles C_d (L = delta = 2 for d >= 3; C_2 is P_2).  By the
 * theorem of Xu and Yang (Discrete Math. 306, 2006), for connected G, H with
 * at least two nodes each
 *     L(G x H) = min(L(G)*|H|, L(H)*|G|, delta(G) + delta(H)),
 * and delta(G x H) = delta(G) + delta(H); folding the dimensions of size >= 2
 * one by one gives L (which comes out equal to the minimum degree).
 */
static void tc__grid_props(struct tc_topo *t)
{
	struct tc_topo_props *pr = &t->props;
	long p = t->p, lambda = 0, delta = 0, size = 1;
	int torus = t->kind == TC_TOPO_TORUS;
	long memo[1u << TC_TOPO_MAX_DIMS];

	pr->links = 0;
	pr->max_degree = pr->min_degree = pr->diameter = 0;
	for (int i = 0; i < t->ndims; i++) {
		long d = t->dims[i];
		int fdeg = d >= 3 ? 2 : (int)d - 1;
		long flambda = fdeg, flinks;
		if (torus) {
			flinks = d >= 3 ? d : d - 1;
			pr->max_degree += fdeg;
			pr->min_degree += fdeg;
			pr->diameter += (int)(d / 2);
		} else {
			flinks = d - 1;
			flambda = d >= 2 ? 1 : 0;
			pr->max_degree += fdeg;
			pr->min_degree += d >= 2 ? 1 : 0;
			pr->diameter += (int)(d - 1);
		}
		pr->links += flinks * (p / d);
		if (d < 2)
			continue;
		if (size == 1) {
			lambda = flambda;
			delta = flambda; /* L = delta for a path and a cycle */
		} else {
			long a = lambda * d, b = flambda * size, c = delta + flambda;
			lambda = a < b ? a : b;
			lambda = lambda < c ? lambda : c;
			delta += flambda;
		}
		size *= d;
	}
	pr->arc_connectivity = (int)lambda;
	for (unsigned m = 0; m < (1u << t->ndims); m++)
		memo[m] = -1;
	pr->bisection_width = tc__grid_bisection(t, (1u << t->ndims) - 1, memo);
}

int tc__topo_compute_props(struct tc_topo *t)
{
	struct tc_topo_props *pr = &t->props;
	const long p = t->p;
	int err = 0;

	pr->nodes = t->p;
	switch (t->kind) {
	case TC_TOPO_COMPLETE:
		pr->links = p * (p - 1) / 2;
		pr->max_degree = pr->min_degree = (int)(p - 1);
		pr->diameter = p > 1;
		pr->bisection_width = (p / 2) * ((p + 1) / 2);
		pr->arc_connectivity = (int)(p - 1);
		break;
	case TC_TOPO_RING:
		pr->links = p >= 3 ? p : p - 1;
		pr->max_degree = pr->min_degree = p >= 3 ? 2 : (int)(p - 1);
		pr->diameter = (int)(p / 2);
		pr->bisection_width = p >= 3 ? 2 : p - 1;
		pr->arc_connectivity = p >= 3 ? 2 : (int)(p - 1);
		break;
	case TC_TOPO_CHAIN:
		pr->links = p - 1;
		pr->max_degree = p >= 3 ? 2 : (int)(p - 1);
		pr->min_degree = p >= 2;
		pr->diameter = (int)(p - 1);
		pr->bisection_width = p >= 2;
		pr->arc_connectivity = p >= 2;
		break;
	case TC_TOPO_STAR:
		pr->links = p - 1;
		pr->max_degree = (int)(p - 1);
		pr->min_degree = p >= 2;
		pr->diameter = p >= 3 ? 2 : (int)(p - 1);
		pr->bisection_width = p / 2;
		pr->arc_connectivity = p >= 2;
		break;
	case TC_TOPO_HYPERCUBE:
		pr->links = p / 2 * t->param;
		pr->max_degree = pr->min_degree = t->param;
		pr->diameter = t->param;
		pr->bisection_width = p / 2;
		pr->arc_connectivity = t->param;
		break;
	case TC_TOPO_TREE:
		pr->links = p - 1;
		pr->max_degree = tc__tree_max_degree(t);
		pr->min_degree = p >= 2;
		pr->diameter = tc__tree_diameter(t);
		pr->arc_connectivity = p >= 2;
		err = tc__tree_bisection(t, &pr->bisection_width);
		break;
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
		tc__grid_props(t);
		break;
	}
	pr->arcs = 2 * pr->links;
	return err;
}
