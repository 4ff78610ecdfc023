/* SPDX-License-Identifier: MIT */
/*
 * tests/test_topo.c - topology graphs: parser, neighbour lists, properties,
 * routing, coordinates, Gray code.
 *
 * Every property is checked against an independent computation here: a
 * table worked out by hand for small cases, counting and all-pairs BFS for
 * links, degrees and diameters, exhaustive search over balanced partitions
 * for the bisection width (p <= 18) and max-flow for the arc connectivity
 * (p <= 64).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "topocoll/error.h"
#include "topocoll/topo.h"
#include "util.h"

/* ---- helpers ------------------------------------------------------------ */

static struct tc_topo *make(const char *spec)
{
	struct tc_topo *t = NULL;
	int err = tc_topo_parse(spec, &t);
	cr_assert_eq(err, 0, "parse %s: %d", spec, err);
	cr_assert_not_null(t);
	return t;
}

/* Neighbour lists well formed and symmetric; links, degrees and (BFS from
 * every node, or from the first nsrc nodes) the diameter match the props. */
static void check_structure(const struct tc_topo *t, int nsrc)
{
	const struct tc_topo_props *pr = tc_topo_props(t);
	int p = tc_topo_nodes(t), maxd = 0, mind = p > 1 ? p : 0, diam = 0;
	long arcs = 0;
	char spec[128];
	int *dist = malloc(sizeof(int) * (size_t)p);

	tc_topo_spec(t, spec, sizeof spec);
	cr_assert_not_null(pr);
	cr_assert_eq(pr->nodes, p);
	for (int u = 0; u < p; u++) {
		const int *nb;
		int deg = tc_topo_neighbors(t, u, &nb);
		cr_assert_geq(deg, 0);
		for (int i = 0; i < deg; i++) {
			int v = nb[i];
			cr_assert(v >= 0 && v < p, "%s: neighbour %d of %d", spec, v, u);
			cr_assert_neq(v, u, "%s: self-loop at %d", spec, u);
			if (i > 0)
				cr_assert_lt(nb[i - 1], v, "%s: N(%d) unsorted or duplicate", spec, u);
			cr_assert_eq(tc_topo_neighbor_index(t, u, v), i);
			cr_assert_geq(tc_topo_neighbor_index(t, v, u), 0,
			              "%s: %d in N(%d) but not back", spec, v, u);
		}
		arcs += deg;
		maxd = deg > maxd ? deg : maxd;
		mind = deg < mind ? deg : mind;
	}
	cr_assert_eq(pr->arcs, arcs, "%s: arcs %ld counted %ld", spec, pr->arcs, arcs);
	cr_assert_eq(pr->links * 2, arcs, "%s", spec);
	cr_assert_eq(pr->max_degree, maxd, "%s: max degree %d counted %d", spec, pr->max_degree, maxd);
	cr_assert_eq(pr->min_degree, mind, "%s: min degree %d counted %d", spec, pr->min_degree, mind);
	if (nsrc > p)
		nsrc = p;
	for (int s = 0; s < nsrc; s++) {
		int e = tc_test_bfs(t, s, dist);
		cr_assert_geq(e, 0, "%s: disconnected", spec);
		diam = e > diam ? e : diam;
		for (int v = 0; v < p; v++)
			cr_assert_eq(tc_topo_distance(t, s, v), dist[v], "%s: distance %d-%d", spec,
			             s, v);
	}
	if (nsrc == p)
		cr_assert_eq(pr->diameter, diam, "%s: diameter %d, BFS %d", spec, pr->diameter, diam);
	free(dist);
}

/* Adjacency bit masks of a graph with p <= 64. */
static void masks(const struct tc_topo *t, uint64_t *adj)
{
	int p = tc_topo_nodes(t);
	for (int u = 0; u < p; u++) {
		const int *nb;
		int deg = tc_topo_neighbors(t, u, &nb);
		adj[u] = 0;
		for (int i = 0; i < deg; i++)
			adj[u] |= 1ull << nb[i];
	}
}

/* Links between S and its complement. */
static long cut_size(const uint64_t *adj, int p, uint64_t s)
{
	long c = 0;
	for (int u = 0; u < p; u++)
		if (s >> u & 1)
			c += __builtin_popcountll(adj[u] & ~s);
	return c;
}

/* Exhaustive bisection width: every S of floor(p/2) nodes (Gosper's hack). */
static long brute_bisection(const struct tc_topo *t)
{
	uint64_t adj[64];
	int p = tc_topo_nodes(t), k = p / 2;
	long best = -1;

	masks(t, adj);
	if (k == 0)
		return 0;
	for (uint64_t s = (1ull << k) - 1; s < (1ull << p);) {
		long c = cut_size(adj, p, s);
		if (best < 0 || c < best)
			best = c;
		uint64_t lo = s & (0 - s), r = s + lo;
		s = (((r ^ s) >> 2) / lo) | r;
	}
	return best;
}

/* Arc connectivity: min over v of the max flow 0 -> v, each undirected link
 * a pair of unit-capacity arcs (Edmonds-Karp on a matrix, p <= 64). */
static int maxflow_connectivity(const struct tc_topo *t)
{
	int p = tc_topo_nodes(t), best = -1;
	static int cap[64][64];
	int prev[64], queue[64];

	if (p == 1)
		return 0;
	for (int v = 1; v < p; v++) {
		int flow = 0;
		memset(cap, 0, sizeof cap);
		for (int u = 0; u < p; u++) {
			const int *nb;
			int deg = tc_topo_neighbors(t, u, &nb);
			for (int i = 0; i < deg; i++)
				cap[u][nb[i]] = 1;
		}
		for (;;) {
			int head = 0, tail = 0;
			for (int i = 0; i < p; i++)
				prev[i] = -1;
			prev[0] = 0;
			queue[tail++] = 0;
			while (head < tail && prev[v] < 0) {
				int u = queue[head++];
				for (int w = 0; w < p; w++)
					if (cap[u][w] > 0 && prev[w] < 0) {
						prev[w] = u;
						queue[tail++] = w;
					}
			}
			if (prev[v] < 0)
				break;
			for (int w = v; w != 0; w = prev[w]) {
				cap[prev[w]][w]--;
				cap[w][prev[w]]++;
			}
			flow++;
		}
		if (best < 0 || flow < best)
			best = flow;
	}
	return best;
}

/* Calls fn on every topology with 1 <= p <= maxp: every kind, every mesh
 * and torus shape (dimensions of size 1 included), trees of arity 1..6. */
static void grid_shapes(char *buf, size_t n, int len, long prod, int ndims, int maxp,
                        const char *kind, void (*fn)(const char *))
{
	if (ndims > 0) {
		buf[len] = '\0';
		char spec[96];
		snprintf(spec, sizeof spec, "%s:%s", kind, buf);
		fn(spec);
	}
	if (ndims == 3)
		return;
	for (int d = 1; d * prod <= maxp; d++) {
		int l = snprintf(buf + len, n - (size_t)len, "%s%d", ndims ? "x" : "", d);
		grid_shapes(buf, n, len + l, prod * d, ndims + 1, maxp, kind, fn);
	}
}

static void for_small_topologies(int maxp, void (*fn)(const char *))
{
	static const char *const simple[] = {"complete", "ring", "chain", "star"};
	char spec[96], buf[64];

	for (int p = 1; p <= maxp; p++) {
		for (int i = 0; i < 4; i++) {
			snprintf(spec, sizeof spec, "%s:%d", simple[i], p);
			fn(spec);
		}
		for (int k = 1; k <= 6; k++) {
			snprintf(spec, sizeof spec, "tree:%d:%d", k, p);
			fn(spec);
		}
	}
	for (int d = 0; (1 << d) <= maxp; d++) {
		snprintf(spec, sizeof spec, "hypercube:%d", d);
		fn(spec);
	}
	grid_shapes(buf, sizeof buf, 0, 1, 0, maxp, "mesh", fn);
	grid_shapes(buf, sizeof buf, 0, 1, 0, maxp, "torus", fn);
}

/* ---- properties --------------------------------------------------------- */

/*
 * Hand-computed properties.  p nodes; links; max, min degree; diameter;
 * bisection width (split floor(p/2) / ceil(p/2)); arc connectivity.
 *
 * ring:2       the links 0-1 and 1-0 coincide: one link, everything 1.
 * ring:3       triangle: 3 links, diameter 1, any 1|2 split cuts 2.
 * ring:8       diameter 8/2 = 4; a half is an arc of the cycle: 2 links.
 * chain:5      4 links, ends degree 1, diameter 4, one link splits 2|3.
 * mesh:3x3     links 2 lines-directions * 3 lines * 2 = 12; centre 4, corner
 *              2; diameter 2+2; 4|5 split: no straight cut gives 4 nodes, the
 *              staircase {(0,0),(0,1),(0,2),(1,0)} cuts 4 (3 is impossible:
 *              a straight line cut of 3 links splits 3|6).
 * mesh:4x4     24 links, diameter 6, straight cut between rows 1 and 2: 4.
 * mesh:2x3x4   links 1*12 + 2*8 + 3*6 = 46; degrees 1+2+2 = 5 and 1+1+1 = 3;
 *              diameter 1+2+3 = 6; cut across the 4-dimension: 2*3 = 6.
 * torus:2x3x4  size-2 dimension is one link per pair: 12 + 3*8 + 4*6 = 60
 *              links, regular degree 1+2+2 = 5, diameter 1+1+2 = 4; cut the
 *              size-2 dimension (12 links) or the 4-ring in two places
 *              (2*6 = 12): 12.  Connectivity 5 = degree.
 * torus:4x4    32 links, degree 4, diameter 2+2, cut 2*4 = 8.
 * torus:3x5    15 + 15 = 30 links, degree 4, diameter 1+2 = 3; across the
 *              5-rings: 2 wraps * 3 + a 1|2 split of one 3-ring (2) = 8.
 * hypercube:D  2^D nodes, D*2^(D-1) links, degree D, diameter D, 2^(D-1).
 * star:9       8 links, hub 8, leaves 1, diameter 2, 4 leaves cut off: 4.
 * tree:2:15    perfect binary tree of depth 3: leaf-root-leaf 6; the left
 *              subtree has 7 = floor(15/2) nodes: bisection 1; max degree 3.
 * tree:3:10    0 -> 1,2,3; 1 -> 4,5,6; 2 -> 7,8,9.  Nodes 1 and 2 have
 *              degree 4; diameter 4 (4-1-0-2-7); subtree sizes 4,4,1 and
 *              leaves, none 5, so one cut is not enough; {1,4,5,6,3} cuts
 *              0-1 and 0-3: 2.
 * complete:6   15 links, degree 5, 3*3 = 9 links across any 3|3 split.
 */
static const struct {
	const char *spec;
	int nodes;
	long links;
	int maxd, mind, diam;
	long bis;
	int conn;
} props_table[] = {
        {"ring:1", 1, 0, 0, 0, 0, 0, 0},         {"ring:2", 2, 1, 1, 1, 1, 1, 1},
        {"ring:3", 3, 3, 2, 2, 1, 2, 2},         {"ring:8", 8, 8, 2, 2, 4, 2, 2},
        {"chain:1", 1, 0, 0, 0, 0, 0, 0},        {"chain:2", 2, 1, 1, 1, 1, 1, 1},
        {"chain:5", 5, 4, 2, 1, 4, 1, 1},        {"mesh:3x3", 9, 12, 4, 2, 4, 4, 2},
        {"mesh:4x4", 16, 24, 4, 2, 6, 4, 2},     {"mesh:2x3x4", 24, 46, 5, 3, 6, 6, 3},
        {"torus:2x3x4", 24, 60, 5, 5, 4, 12, 5}, {"torus:4x4", 16, 32, 4, 4, 4, 8, 4},
        {"torus:3x5", 15, 30, 4, 4, 3, 8, 4},    {"hypercube:0", 1, 0, 0, 0, 0, 0, 0},
        {"hypercube:1", 2, 1, 1, 1, 1, 1, 1},    {"hypercube:2", 4, 4, 2, 2, 2, 2, 2},
        {"hypercube:3", 8, 12, 3, 3, 3, 4, 3},   {"hypercube:4", 16, 32, 4, 4, 4, 8, 4},
        {"star:1", 1, 0, 0, 0, 0, 0, 0},         {"star:2", 2, 1, 1, 1, 1, 1, 1},
        {"star:9", 9, 8, 8, 1, 2, 4, 1},         {"tree:2:15", 15, 14, 3, 1, 6, 1, 1},
        {"tree:3:10", 10, 9, 4, 1, 4, 2, 1},     {"complete:1", 1, 0, 0, 0, 0, 0, 0},
        {"complete:2", 2, 1, 1, 1, 1, 1, 1},     {"complete:6", 6, 15, 5, 5, 1, 9, 5},
};

Test(topo, props_hand_table)
{
	for (size_t i = 0; i < sizeof props_table / sizeof props_table[0]; i++) {
		struct tc_topo *t = make(props_table[i].spec);
		const struct tc_topo_props *pr = tc_topo_props(t);
		const char *s = props_table[i].spec;
		(void)s; /* only in messages, which the plain harness drops */
		cr_assert_eq(pr->nodes, props_table[i].nodes, "%s nodes", s);
		cr_assert_eq(pr->links, props_table[i].links, "%s links %ld", s, pr->links);
		cr_assert_eq(pr->arcs, 2 * props_table[i].links, "%s arcs", s);
		cr_assert_eq(pr->max_degree, props_table[i].maxd, "%s max degree", s);
		cr_assert_eq(pr->min_degree, props_table[i].mind, "%s min degree", s);
		cr_assert_eq(pr->diameter, props_table[i].diam, "%s diameter %d", s, pr->diameter);
		cr_assert_eq(pr->bisection_width, props_table[i].bis, "%s bisection %ld", s,
		             pr->bisection_width);
		cr_assert_eq(pr->arc_connectivity, props_table[i].conn, "%s connectivity %d", s,
		             pr->arc_connectivity);
		check_structure(t, pr->nodes);
		tc_topo_destroy(t);
	}
}

static int small_checked;

static void check_small(const char *spec)
{
	struct tc_topo *t = make(spec);
	const struct tc_topo_props *pr = tc_topo_props(t);
	long bis = brute_bisection(t);
	int conn = maxflow_connectivity(t);

	check_structure(t, pr->nodes);
	cr_assert_eq(pr->bisection_width, bis, "%s: bisection %ld, exhaustive %ld", spec,
	             pr->bisection_width, bis);
	cr_assert_eq(pr->arc_connectivity, conn, "%s: connectivity %d, max-flow %d", spec,
	             pr->arc_connectivity, conn);
	small_checked++;
	tc_topo_destroy(t);
}

/* Every kind and shape with p <= 18: bisection by exhaustive search,
 * connectivity by max-flow, structure and diameter by BFS. */
Test(topo, props_small_exhaustive)
{
	small_checked = 0;
	for_small_topologies(18, check_small);
	cr_assert_gt(small_checked, 300);
}

static void check_conn_only(const char *spec)
{
	struct tc_topo *t = make(spec);
	int conn = maxflow_connectivity(t);
	cr_assert_eq(tc_topo_props(t)->arc_connectivity, conn, "%s: connectivity %d, max-flow %d",
	             spec, tc_topo_props(t)->arc_connectivity, conn);
	tc_topo_destroy(t);
}

/* Arc connectivity by max-flow for medium graphs (p <= 64). */
Test(topo, connectivity_maxflow_medium)
{
	static const char *const specs[] = {
	        "mesh:8x8",   "mesh:5x7",    "mesh:4x4x4",  "mesh:1x40",         "mesh:2x31",
	        "torus:8x8",  "torus:3x3x7", "torus:2x31",  "torus:2x2x2x2x2x2", "torus:5x1x9",
	        "ring:64",    "chain:64",    "star:64",     "tree:2:64",         "tree:3:50",
	        "tree:63:64", "hypercube:5", "hypercube:6", "complete:40",       "torus:2x3x2x5",
	};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
		check_conn_only(specs[i]);
}

/* Larger graphs (p up to 1024): structure, degrees, links and the diameter by
 * all-pairs BFS; bisection and connectivity where the value is known. */
Test(topo, props_large_bfs)
{
	static const struct {
		const char *spec;
		long bis; /* -1: not checked here */
		int conn;
	} cases[] = {
	        {"ring:1000", 2, 2},
	        {"ring:1023", 2, 2},
	        {"chain:1024", 1, 1},
	        {"star:1000", 500, 1},
	        {"mesh:32x32", 32, 2},
	        {"mesh:31x33", 32, 2},
	        {"mesh:7x11x13", 77 + 8, 3},
	        {"mesh:4x4x4x4x4", 256, 5},
	        {"torus:32x32", 64, 4},
	        {"torus:31x33", 64, 4},
	        {"torus:5x7x9", 2 * 35 + 2 * 5 + 2, 6},
	        {"torus:2x2x2x2x2x2x2x2", 128, 8},
	        {"torus:3x1x5x1x7", 2 * 15 + 2 * 3 + 2, 6},
	        {"hypercube:10", 512, 10},
	        {"tree:2:1023", 1, 1},
	        {"tree:3:1000", -1, 1},
	        {"tree:7:1000", -1, 1},
	        {"tree:1:700", 1, 1},
	        {"tree:999:1000", 500, 1},
	        {"complete:200", 100 * 100, 199},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tc_topo *t = make(cases[i].spec);
		const struct tc_topo_props *pr = tc_topo_props(t);
		check_structure(t, pr->nodes);
		if (cases[i].bis >= 0)
			cr_assert_eq(pr->bisection_width, cases[i].bis, "%s: bisection %ld",
			             cases[i].spec, pr->bisection_width);
		cr_assert_eq(pr->arc_connectivity, cases[i].conn, "%s", cases[i].spec);
		tc_topo_destroy(t);
	}
}

/* The biggest sizes build, and their counts match (no BFS). */
Test(topo, props_huge_counts)
{
	static const char *const specs[] = {"mesh:1024x1024", "torus:16x16x16x16x16",
	                                    "tree:2:1048576", "star:1048576",
	                                    "hypercube:16",   "ring:1048576"};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		struct tc_topo *t = make(specs[i]);
		check_structure(t, 0);
		cr_assert_eq(tc_topo_nodes(t), tc_topo_props(t)->nodes);
		cr_assert_geq(tc_topo_props(t)->bisection_width, 1);
		tc_topo_destroy(t);
	}
}

/* The specs a team of a thousand ranks is made from: every link there once in
 * each direction, the count of undirected links the closed form of each
 * family gives.  (How fast they are built is bench/scale's subject.) */
Test(topo, large_specs_have_their_link_counts)
{
	static const struct {
		const char *spec;
		long links;
	} cases[] = {
	        {"complete:1024", 1024L * 1023 / 2}, {"hypercube:10", 10L * 1024 / 2},
	        {"torus:32x32", 2L * 32 * 32},       {"mesh:32x32", 2L * 32 * 31},
	        {"tree:4:4096", 4096 - 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tc_topo *t = make(cases[i].spec);
		long ends = 0;
		for (int u = 0; u < tc_topo_nodes(t); u++) {
			const int *nbrs;
			int deg = tc_topo_neighbors(t, u, &nbrs);
			for (int k = 0; k < deg; k++)
				cr_assert_eq(tc_topo_neighbor_index(t, nbrs[k], u) >= 0, 1,
				             "%s: %d -> %d one way only", cases[i].spec, u, nbrs[k]);
			ends += deg;
		}
		cr_assert_eq(ends, 2 * cases[i].links, "%s: %ld link ends", cases[i].spec, ends);
		tc_topo_destroy(t);
	}
}

/* ---- routing ------------------------------------------------------------ */

static void check_routes(const char *spec)
{
	struct tc_topo *t = make(spec);
	int p = tc_topo_nodes(t);
	int *dist = malloc(sizeof(int) * (size_t)p);
	int *path = malloc(sizeof(int) * (size_t)(p + 1));
	enum tc_topo_kind kind = tc_topo_kind(t);
	int dims[TC_TOPO_MAX_DIMS], nd = 0;

	if (kind == TC_TOPO_MESH || kind == TC_TOPO_TORUS)
		nd = tc_topo_dims(t, dims);
	for (int src = 0; src < p; src++) {
		tc_test_bfs(t, src, dist);
		for (int dst = 0; dst < p; dst++) {
			int hops = tc_topo_route(t, src, dst, path, p + 1);
			cr_assert_eq(hops, dist[dst], "%s: route %d->%d has %d hops, BFS %d", spec,
			             src, dst, hops, dist[dst]);
			cr_assert_eq(tc_topo_route(t, src, dst, NULL, 0), hops);
			cr_assert_eq(tc_topo_distance(t, src, dst), hops);
			cr_assert_eq(path[0], src);
			cr_assert_eq(path[hops], dst);
			int lastdim = 0;
			for (int i = 0; i < hops; i++) {
				int a = path[i], b = path[i + 1];
				cr_assert_geq(tc_topo_neighbor_index(t, a, b), 0,
				              "%s: %d-%d not a link", spec, a, b);
				cr_assert_eq(tc_topo_next_hop(t, a, dst), b, "%s: next_hop(%d,%d)",
				             spec, a, dst);
				switch (kind) {
				case TC_TOPO_HYPERCUBE: {
					unsigned diff = (unsigned)(a ^ dst);
					cr_assert_eq((unsigned)(a ^ b), diff & (0u - diff),
					             "%s: e-cube", spec);
					break;
				}
				case TC_TOPO_RING: {
					int fwd = (dst - a + p) % p;
					cr_assert_eq(b, fwd <= p - fwd ? (a + 1) % p : (a + p - 1) % p,
					             "%s: ring direction %d->%d", spec, src, dst);
					break;
				}
				case TC_TOPO_CHAIN:
					cr_assert_eq(b, a < dst ? a + 1 : a - 1);
					break;
				case TC_TOPO_STAR:
					cr_assert(a == 0 || b == 0, "%s: %d-%d avoids the hub",
					          spec, a, b);
					break;
				case TC_TOPO_COMPLETE:
					cr_assert_eq(hops, 1);
					break;
				case TC_TOPO_TREE: {
					/* Up while a is not an ancestor of dst, then down. */
					int k = tc_topo_arity(t), x = dst;
					while (x > a)
						x = (x - 1) / k;
					if (x == a)
						cr_assert_eq((b - 1) / k, a, "%s: must go down", spec);
					else
						cr_assert_eq(b, (a - 1) / k, "%s: must go up", spec);
					break;
				}
				case TC_TOPO_MESH:
				case TC_TOPO_TORUS: {
					int ca[TC_TOPO_MAX_DIMS], cb[TC_TOPO_MAX_DIMS],
					        cd[TC_TOPO_MAX_DIMS];
					int moved = -1;
					cr_assert_eq(tc_topo_coords(t, a, ca), 0);
					cr_assert_eq(tc_topo_coords(t, b, cb), 0);
					cr_assert_eq(tc_topo_coords(t, dst, cd), 0);
					for (int j = 0; j < nd; j++) {
						if (ca[j] == cb[j])
							continue;
						cr_assert_eq(moved, -1,
						             "%s: two dimensions in one hop", spec);
						moved = j;
					}
					cr_assert_geq(moved, lastdim, "%s: dimension order %d->%d",
					              spec, src, dst);
					for (int j = 0; j < moved; j++)
						cr_assert_eq(ca[j], cd[j],
						             "%s: dimension %d not done", spec, j);
					int d = dims[moved], c = ca[moved], e = cd[moved];
					if (kind == TC_TOPO_MESH) {
						cr_assert_eq(cb[moved], c < e ? c + 1 : c - 1);
					} else {
						int fwd = (e - c + d) % d;
						cr_assert_eq(cb[moved],
						             fwd <= d - fwd ? (c + 1) % d
						                            : (c + d - 1) % d,
						             "%s: torus direction %d->%d", spec,
						             src, dst);
					}
					lastdim = moved;
					break;
				}
				}
			}
		}
	}
	cr_assert_eq(tc_topo_next_hop(t, 0, 0), 0);
	free(dist);
	free(path);
	tc_topo_destroy(t);
}

Test(topo, routes_all_pairs)
{
	static const char *const specs[] = {
	        "ring:1",      "ring:2",      "ring:3",      "ring:4",      "ring:7",
	        "ring:16",     "chain:1",     "chain:7",     "mesh:4x5",    "mesh:3x1x4",
	        "mesh:2x3x4",  "mesh:1",      "mesh:9",      "torus:4x6",   "torus:3x5",
	        "torus:2x3x4", "torus:4x4x4", "torus:1x6",   "torus:2",     "torus:8x1x3",
	        "hypercube:0", "hypercube:1", "hypercube:3", "hypercube:6", "star:1",
	        "star:9",      "tree:2:20",   "tree:3:40",   "tree:1:10",   "tree:5:30",
	        "tree:2:63",   "tree:9:9",    "complete:1",  "complete:10", "mesh:2x2x2x2x2",
	};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
		check_routes(specs[i]);
}

Test(topo, routes_large)
{
	/* A few long routes on big graphs: still shortest, and O(hops). */
	static const char *const specs[] = {"tree:1:100000", "chain:100000", "ring:99999",
	                                    "tree:2:100000", "torus:100x100"};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		struct tc_topo *t = make(specs[i]);
		int p = tc_topo_nodes(t);
		int *path = malloc(sizeof(int) * (size_t)p);
		int pairs[][2] = {{0, p - 1}, {p - 1, 0}, {p / 3, p - 2}, {p / 2, 1}};
		for (int j = 0; j < 4; j++) {
			int s = pairs[j][0], d = pairs[j][1];
			int h = tc_topo_route(t, s, d, path, p);
			cr_assert_eq(h, tc_topo_distance(t, s, d), "%s", specs[i]);
			for (int k = 0; k < h; k++)
				cr_assert_geq(tc_topo_neighbor_index(t, path[k], path[k + 1]), 0);
			cr_assert_eq(path[h], d);
		}
		free(path);
		tc_topo_destroy(t);
	}
}

Test(topo, route_api)
{
	struct tc_topo *t = make("ring:8");
	int path[8];

	cr_assert_eq(tc_topo_route(t, 0, 4, NULL, 0), 4);
	cr_assert_eq(tc_topo_route(t, 0, 4, path, 0), 4);
	/* Tie on an even ring goes up: 0 1 2 3 4; 4 -> 0 goes 4 5 6 7 0. */
	cr_assert_eq(tc_topo_route(t, 0, 4, path, 5), 4);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(path[i], i);
	cr_assert_eq(tc_topo_route(t, 4, 0, path, 8), 4);
	cr_assert_eq(path[1], 5);
	cr_assert_eq(path[4], 0);
	memset(path, -1, sizeof path);
	cr_assert_eq(tc_topo_route(t, 0, 4, path, 3), TC_ETRUNCATE);
	cr_assert_eq(path[0], 0);
	cr_assert_eq(path[2], 2);
	cr_assert_eq(path[3], -1);
	cr_assert_eq(tc_topo_route(t, 0, 0, path, 1), 0);
	cr_assert_eq(path[0], 0);
	cr_assert_eq(tc_topo_route(t, 0, 8, path, 8), TC_ERANK);
	cr_assert_eq(tc_topo_route(t, -1, 0, path, 8), TC_ERANK);
	cr_assert_eq(tc_topo_route(t, 0, 1, NULL, 4), TC_EINVAL);
	cr_assert_eq(tc_topo_route(t, 0, 1, path, -1), TC_EINVAL);
	cr_assert_eq(tc_topo_next_hop(t, 0, 8), TC_ERANK);
	cr_assert_eq(tc_topo_next_hop(t, 9, 0), TC_ERANK);
	cr_assert_eq(tc_topo_next_hop(t, 3, 3), 3);
	cr_assert_eq(tc_topo_distance(t, 0, -1), TC_ERANK);
	cr_assert_eq(tc_topo_neighbors(t, 8, NULL), TC_ERANK);
	cr_assert_eq(tc_topo_neighbor_index(t, 0, 9), -1);
	cr_assert_eq(tc_topo_neighbor_index(t, 0, 2), -1);
	cr_assert_eq(tc_topo_neighbor_index(t, 0, 7), 1);
	tc_topo_destroy(t);

	/* Examples of the documented rules. */
	t = make("hypercube:3"); /* e-cube 0 -> 7: 0 1 3 7 */
	cr_assert_eq(tc_topo_route(t, 0, 7, path, 8), 3);
	cr_assert(path[1] == 1 && path[2] == 3 && path[3] == 7);
	tc_topo_destroy(t);
	t = make("mesh:3x4"); /* (0,0) -> (2,3): down dimension 0 first */
	cr_assert_eq(tc_topo_route(t, 0, 11, path, 8), 5);
	cr_assert(path[1] == 4 && path[2] == 8 && path[3] == 9 && path[5] == 11);
	tc_topo_destroy(t);
	t = make("torus:4x4"); /* (0,0) -> (2,2): ties go up, 0 4 8 9 10 */
	cr_assert_eq(tc_topo_route(t, 0, 10, path, 8), 4);
	cr_assert(path[1] == 4 && path[2] == 8 && path[3] == 9 && path[4] == 10);
	cr_assert_eq(tc_topo_route(t, 0, 3, path, 8), 1); /* wrap-around: 0 3 */
	tc_topo_destroy(t);
	t = make("tree:2:15"); /* 7 -> 14: 7 3 1 0 2 6 14 */
	cr_assert_eq(tc_topo_route(t, 7, 14, path, 8), 6);
	cr_assert(path[1] == 3 && path[2] == 1 && path[3] == 0 && path[4] == 2 && path[5] == 6);
	tc_topo_destroy(t);
	t = make("star:5");
	cr_assert_eq(tc_topo_route(t, 3, 4, path, 8), 2);
	cr_assert_eq(path[1], 0);
	tc_topo_destroy(t);
}

/* ---- coordinates -------------------------------------------------------- */

Test(topo, coords)
{
	struct tc_topo *t = make("mesh:2x3x4");
	int c[TC_TOPO_MAX_DIMS], dims[TC_TOPO_MAX_DIMS];

	cr_assert_eq(tc_topo_dims(t, NULL), 3);
	cr_assert_eq(tc_topo_dims(t, dims), 3);
	cr_assert(dims[0] == 2 && dims[1] == 3 && dims[2] == 4);
	for (int r = 0; r < 24; r++) {
		cr_assert_eq(tc_topo_coords(t, r, c), 0);
		cr_assert_eq(r, (c[0] * 3 + c[1]) * 4 + c[2]);
		cr_assert_eq(tc_topo_rank_of(t, c), r);
	}
	cr_assert_eq(tc_topo_coords(t, 24, c), TC_ERANK);
	cr_assert_eq(tc_topo_coords(t, 0, NULL), TC_EINVAL);
	c[0] = 0, c[1] = 3, c[2] = 0;
	cr_assert_eq(tc_topo_rank_of(t, c), TC_ERANK);
	tc_topo_destroy(t);

	t = make("torus:5x1x3");
	for (int r = 0; r < 15; r++) {
		cr_assert_eq(tc_topo_coords(t, r, c), 0);
		cr_assert(c[1] == 0 && c[0] == r / 3 && c[2] == r % 3);
		cr_assert_eq(tc_topo_rank_of(t, c), r);
	}
	tc_topo_destroy(t);

	t = make("ring:6");
	cr_assert_eq(tc_topo_dims(t, dims), 1);
	cr_assert_eq(dims[0], 6);
	tc_topo_destroy(t);
	t = make("hypercube:4");
	cr_assert_eq(tc_topo_dims(t, dims), 4);
	cr_assert(dims[0] == 2 && dims[3] == 2);
	cr_assert_eq(tc_topo_coords(t, 0, c), TC_ENOTSUP);
	tc_topo_destroy(t);
	t = make("star:4");
	cr_assert_eq(tc_topo_dims(t, dims), 0);
	cr_assert_eq(tc_topo_arity(t), 0);
	tc_topo_destroy(t);
	t = make("tree:3:7");
	cr_assert_eq(tc_topo_arity(t), 3);
	cr_assert_eq(tc_topo_dims(t, NULL), 0);
	tc_topo_destroy(t);
}

/* ---- parser ------------------------------------------------------------- */

Test(topo, parse_valid)
{
	static const struct {
		const char *spec, *canon;
		enum tc_topo_kind kind;
		int nodes;
	} ok[] = {
	        {"complete:6", "complete:6", TC_TOPO_COMPLETE, 6},
	        {"ring:8", "ring:8", TC_TOPO_RING, 8},
	        {"chain:5", "chain:5", TC_TOPO_CHAIN, 5},
	        {"mesh:4x4", "mesh:4x4", TC_TOPO_MESH, 16},
	        {"mesh:7", "mesh:7", TC_TOPO_MESH, 7},
	        {"mesh:1x1x1x1x1x1x1x2", "mesh:1x1x1x1x1x1x1x2", TC_TOPO_MESH, 2},
	        {"torus:2x3x4", "torus:2x3x4", TC_TOPO_TORUS, 24},
	        {"hypercube:0", "hypercube:0", TC_TOPO_HYPERCUBE, 1},
	        {"hypercube:5", "hypercube:5", TC_TOPO_HYPERCUBE, 32},
	        {"hypercube:20", "hypercube:20", TC_TOPO_HYPERCUBE, 1 << 20},
	        {"star:9", "star:9", TC_TOPO_STAR, 9},
	        {"tree:2:15", "tree:2:15", TC_TOPO_TREE, 15},
	        {"tree:100:3", "tree:100:3", TC_TOPO_TREE, 3},
	        {"ring:007", "ring:7", TC_TOPO_RING, 7},
	        {"mesh:1024x1024", "mesh:1024x1024", TC_TOPO_MESH, 1 << 20},
	        {"ring:1048576", "ring:1048576", TC_TOPO_RING, 1 << 20},
	};
	char buf[64];

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		struct tc_topo *t = make(ok[i].spec);
		cr_assert_eq(tc_topo_kind(t), ok[i].kind, "%s", ok[i].spec);
		cr_assert_eq(tc_topo_nodes(t), ok[i].nodes, "%s", ok[i].spec);
		int n = tc_topo_spec(t, buf, sizeof buf);
		cr_assert_eq(n, (int)strlen(ok[i].canon));
		cr_assert_str_eq(buf, ok[i].canon);
		cr_assert_eq(tc_topo_spec(t, NULL, 0), n);
		cr_assert_eq(tc_topo_spec(t, buf, 4), n); /* truncated, snprintf-style */
		cr_assert_eq(strlen(buf), 3u);
		cr_assert_str_eq(tc_topo_kind_name(ok[i].kind), strtok(strcpy(buf, ok[i].canon), ":"));
		tc_topo_destroy(t);
	}
	cr_assert_str_eq(tc_topo_kind_name((enum tc_topo_kind)99), "unknown");
}

Test(topo, parse_invalid)
{
	static const char *const bad[] = {
	        "",
	        "ring",
	        "ring:",
	        "ring:0",
	        "ring:-1",
	        "ring:+3",
	        "ring: 3",
	        "ring:3 ",
	        " ring:3",
	        "ring:3x",
	        "ring:3:4",
	        "RING:3",
	        "rings:3",
	        "ring;3",
	        "ring:3.0",
	        "ring:1048577",
	        "ring:99999999999999999999",
	        "ring:2147483648",
	        "ring:4294967297",
	        "mesh:",
	        "mesh:x",
	        "mesh:4x",
	        "mesh:x4",
	        "mesh:4xx4",
	        "mesh:4x0",
	        "mesh:0x4",
	        "mesh:4X4",
	        "mesh:4*4",
	        "mesh:100000x100000",
	        "mesh:2x2x2x2x2x2x2x2x2",
	        "mesh:1024x1025",
	        "mesh:65536x65536x65536",
	        "mesh:4x-4",
	        "torus:",
	        "torus:3x",
	        "torus:2147483647x2147483647",
	        "hypercube:21",
	        "hypercube:-1",
	        "hypercube:",
	        "hypercube:1x1",
	        "hypercube:100",
	        "star:0",
	        "star:",
	        "tree:2",
	        "tree:2:",
	        "tree:0:5",
	        "tree::5",
	        "tree:2:0",
	        "tree:2:5:",
	        "tree:2:5x",
	        "tree:-2:5",
	        "tree:2:1048577",
	        "tree:99999999999:3",
	        "complete:0",
	        "complete:",
	        "complete",
	        "chain:0",
	        "chain:1e3",
	        "chain:0x10",
	        ":",
	        "x",
	        "ring:\t3",
	        "ring:3\n",
	};
	struct tc_topo *sentinel = (struct tc_topo *)&sentinel, *t = sentinel;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int err = tc_topo_parse(bad[i], &t);
		cr_assert_eq(err, TC_ETOPO, "\"%s\" gave %d", bad[i], err);
		cr_assert(t == sentinel, "*out written on error");
	}
	cr_assert_eq(tc_topo_parse(NULL, &t), TC_EINVAL);
	cr_assert_eq(tc_topo_parse("ring:3", NULL), TC_EINVAL);
	cr_assert(t == sentinel);
	/* Quadratic memory is refused, not attempted. */
	cr_assert_eq(tc_topo_parse("complete:1048576", &t), TC_ENOMEM);
	cr_assert_eq(tc_topo_parse("complete:8193", &t), TC_ENOMEM);
	cr_assert(t == sentinel);
}

Test(topo, parse_random_strings)
{
	/* Mutations of valid specs and random bytes: must only fail cleanly. */
	static const char *const seeds[] = {"ring:8",      "mesh:4x4", "torus:2x3x4", "tree:2:15",
	                                    "hypercube:5", "star:9",   "complete:6",  "chain:5"};
	static const char alphabet[] = "0123456789x:-+ ringmeshtoruscompletetreechainstarhypercube";
	unsigned long long s = 12345;
	char buf[40];

	for (int it = 0; it < 200000; it++) {
		const char *seed = seeds[it % 8];
		size_t n = strlen(seed);
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		memcpy(buf, seed, n + 1);
		for (int m = 0; m < 1 + (int)(s >> 60 & 3); m++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			size_t pos = (size_t)(s >> 33) % (n + 1);
			char ch = (s >> 20 & 7) == 0 ? (char)(s >> 40)
			                             : alphabet[(s >> 40) % (sizeof alphabet - 1)];
			if ((s >> 13 & 1) && n + 1 < sizeof buf) { /* insert */
				memmove(buf + pos + 1, buf + pos, n - pos + 1);
				buf[pos] = ch;
				n++;
			} else if (pos < n) { /* replace, maybe with NUL */
				buf[pos] = ch;
				n = strlen(buf);
			}
		}
		struct tc_topo *t = NULL;
		int err = tc_topo_parse(buf, &t);
		cr_assert(err == 0 || err == TC_ETOPO || err == TC_ENOMEM, "\"%s\" gave %d", buf, err);
		if (err == 0) {
			char canon[64];
			cr_assert_not_null(t);
			cr_assert_lt(tc_topo_spec(t, canon, sizeof canon), (int)sizeof canon);
			tc_topo_destroy(t);
		} else {
			cr_assert_null(t);
		}
	}
}

Test(topo, create_api)
{
	struct tc_topo *t = NULL;
	int d3[3] = {2, 3, 4}, one[1] = {5}, zero[1] = {0}, neg[1] = {-1};

	cr_assert_eq(tc_topo_create(TC_TOPO_TORUS, 3, d3, 0, &t), 0);
	cr_assert_eq(tc_topo_nodes(t), 24);
	tc_topo_destroy(t);
	cr_assert_eq(tc_topo_create(TC_TOPO_TREE, 1, one, 2, &t), 0);
	cr_assert_eq(tc_topo_arity(t), 2);
	tc_topo_destroy(t);
	cr_assert_eq(tc_topo_create(TC_TOPO_HYPERCUBE, 1, zero, 0, &t), 0);
	cr_assert_eq(tc_topo_nodes(t), 1);
	tc_topo_destroy(t);
	t = NULL;
	cr_assert_eq(tc_topo_create(TC_TOPO_MESH, 0, d3, 0, &t), TC_ETOPO);
	cr_assert_eq(tc_topo_create(TC_TOPO_MESH, TC_TOPO_MAX_DIMS + 1, d3, 0, &t), TC_ETOPO);
	cr_assert_eq(tc_topo_create(TC_TOPO_RING, 3, d3, 0, &t), TC_ETOPO);
	cr_assert_eq(tc_topo_create(TC_TOPO_RING, 1, zero, 0, &t), TC_ETOPO);
	cr_assert_eq(tc_topo_create(TC_TOPO_STAR, 1, neg, 0, &t), TC_ETOPO);
	cr_assert_eq(tc_topo_create(TC_TOPO_HYPERCUBE, 1, neg, 0, &t), TC_ETOPO);
	cr_assert_eq(tc_topo_create(TC_TOPO_TREE, 1, one, 0, &t), TC_ETOPO);
	cr_assert_eq(tc_topo_create((enum tc_topo_kind)42, 1, one, 0, &t), TC_ETOPO);
	cr_assert_eq(tc_topo_create(TC_TOPO_RING, 1, NULL, 0, &t), TC_EINVAL);
	cr_assert_eq(tc_topo_create(TC_TOPO_RING, 1, one, 0, NULL), TC_EINVAL);
	cr_assert_null(t);
	tc_topo_destroy(NULL);
	cr_assert_null(tc_topo_props(NULL));
	cr_assert_eq(tc_topo_nodes(NULL), TC_EINVAL);
}

/* ---- Gray code ---------------------------------------------------------- */

Test(topo, gray_code)
{
	for (uint32_t i = 0; i < (1u << 20); i++) {
		cr_assert_eq(tc_gray_inverse(tc_gray(i)), i);
		cr_assert_eq(__builtin_popcount(tc_gray(i) ^ tc_gray(i + 1)), 1);
	}
	static const uint32_t big[] = {0xffffffffu, 0x80000000u, 0x12345678u, 0xdeadbeefu};
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(tc_gray_inverse(tc_gray(big[i])), big[i]);
		cr_assert_eq(tc_gray(tc_gray_inverse(big[i])), big[i]);
	}
	/* The reflected code walks a ring through the hypercube: 0 1 3 2 6 7 5 4. */
	static const uint32_t g3[] = {0, 1, 3, 2, 6, 7, 5, 4};
	for (uint32_t i = 0; i < 8; i++)
		cr_assert_eq(tc_gray(i), g3[i]);
}

/* A family and p: the spec tc_topo_parse_p() builds, and what it refuses. */
Test(topo, parse_family_and_p)
{
	static const struct {
		const char *spec;
		int p;
		const char *want;
	} ok[] = {
	        {"ring", 8, "ring:8"},
	        {"chain", 5, "chain:5"},
	        {"complete", 6, "complete:6"},
	        {"star", 9, "star:9"},
	        {"hypercube", 16, "hypercube:4"},
	        {"hypercube", 1, "hypercube:0"},
	        {"mesh", 16, "mesh:4x4"},
	        {"torus", 12, "torus:3x4"},
	        {"mesh", 24, "mesh:4x6"},
	        {"torus", 1, "torus:1x1"},
	        {"tree", 15, "tree:2:15"},
	        {"tree:3", 10, "tree:3:10"},
	        {"ring:8", 8, "ring:8"},
	        {"torus:3x5", 15, "torus:3x5"},
	        {"tree:2:7", 0, "tree:2:7"},
	        {NULL, 4, "complete:4"},
	        {"mesh:2x3", 0, "mesh:2x3"},
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		struct tc_topo *t = NULL;
		char why[200] = "x", spec[64];
		int err = tc_topo_parse_p(ok[i].spec, ok[i].p, &t, why, sizeof why);
		cr_assert_eq(err, 0, "%s p=%d: %s", ok[i].spec, ok[i].p, why);
		cr_assert_str_empty(why);
		tc_topo_spec(t, spec, sizeof spec);
		cr_assert_str_eq(spec, ok[i].want);
		tc_topo_destroy(t);
	}
	static const struct {
		const char *spec;
		int p, err;
		const char *says;
	} bad[] = {
	        {"hypercube", 12, TC_ETOPO, "hypercube needs p a power of two, got 12"},
	        {"torus", 7, TC_ETOPO, "prime 7"},
	        {"ring", 0, TC_ETOPO, "needs its size"},
	        {"ring:8", 12, TC_EINVAL, "p = 12 does not fit ring:8 (8 nodes)"},
	        {"torus:4x4", 15, TC_EINVAL, "16 nodes"},
	        {"tree:8", 0, TC_ETOPO, "the form is tree:K:P"},
	        {"tree:0", 5, TC_ETOPO, "arity K is at least 1"},
	        {"complete:1048576", 0, TC_ENOMEM, "at most 8192 nodes"},
	        {"complete:8193", 0, TC_ENOMEM, "at most 8192 nodes"},
	        {"complete", TC_TOPO_MAX_COMPLETE + 1, TC_ENOMEM, "at most 8192 nodes"},
	        {"ring:1048577", 0, TC_ETOPO, "at most 1048576"},
	        {"ring", TC_TOPO_MAX_NODES + 1, TC_ETOPO, "at most 1048576"},
	        {"hypercube:21", 0, TC_ETOPO, "D <= 20"},
	        {"mesh:0x4", 0, TC_ETOPO, "at least 1"},
	        {"ring:8x", 0, TC_ETOPO, "unexpected 'x'"},
	        {"rings", 4, TC_ETOPO, "unknown topology"},
	        {"ring", -1, TC_EINVAL, "p < 0"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tc_topo *t = NULL;
		char why[200] = "";
		int err = tc_topo_parse_p(bad[i].spec, bad[i].p, &t, why, sizeof why);
		cr_assert_eq(err, bad[i].err, "%s p=%d: %d (%s)", bad[i].spec, bad[i].p, err, why);
		cr_assert_null(t);
		cr_assert(strstr(why, bad[i].says), "%s p=%d: \"%s\" lacks \"%s\"", bad[i].spec,
		          bad[i].p, why, bad[i].says);
	}
	cr_assert_eq(tc_topo_parse_p("ring", 4, NULL, NULL, 0), TC_EINVAL);
	int a = 0, b = 0;
	cr_assert_eq(tc_topo_squarest(36, &a, &b), 0);
	cr_assert(a == 6 && b == 6);
	cr_assert_eq(tc_topo_squarest(13, &a, &b), TC_ETOPO);
	cr_assert(a == 1 && b == 13);
	cr_assert_eq(tc_topo_squarest(0, &a, &b), TC_EINVAL);
}
