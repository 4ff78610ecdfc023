/* SPDX-License-Identifier: MIT */
/*
 * topocoll/topo.h - topology graphs: construction, properties, routing, Gray code.
 *
 * A topology is an immutable graph of p nodes (ranks 0..p-1) joined by
 * undirected links; every undirected link is two directed links (arcs), one
 * per direction, and the runtime gives each arc its own channel.
 *
 * Concurrency contract: a topology is immutable after tc_topo_parse() or
 * tc_topo_create() returns; every query below may run concurrently from any
 * number of threads.  Only tc_topo_destroy() must not race with anything.
 *
 * Errors: functions returning int return 0 (or a non-negative value where
 * stated) on success and a negative TC_E* code (topocoll/error.h) on error.
 */
#ifndef TOPOCOLL_TOPO_H
#define TOPOCOLL_TOPO_H

#include <stddef.h>
#include <stdint.h>

#include "topocoll/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest number of dimensions of a mesh or torus. */
#define TC_TOPO_MAX_DIMS 8
/* Largest node count any topology may have. */
#define TC_TOPO_MAX_NODES (1 << 20)
/* Largest complete graph: its p(p-1) directed links are at most 2^26. */
#define TC_TOPO_MAX_COMPLETE 8192

enum tc_topo_kind {
	TC_TOPO_COMPLETE,  /* "complete:P"   every pair of nodes linked */
	TC_TOPO_RING,      /* "ring:P"       i -- (i+1) mod P */
	TC_TOPO_CHAIN,     /* "chain:P"      linear array, i -- i+1 */
	TC_TOPO_MESH,      /* "mesh:AxBx.."  k-D mesh, row-major ranks, last dim fastest */
	TC_TOPO_TORUS,     /* "torus:AxBx.." k-D torus (mesh with wrap-around) */
	TC_TOPO_HYPERCUBE, /* "hypercube:D"  2^D nodes, i -- i^(1<<k) */
	TC_TOPO_STAR,      /* "star:P"       node 0 is the hub */
	TC_TOPO_TREE,      /* "tree:K:P"     K-ary tree, parent of i is (i-1)/K */
};

struct tc_topo;

/* The properties of [Barnat-IB109], computed once at creation. */
struct tc_topo_props {
	int nodes;            /* p */
	long links;           /* undirected links */
	long arcs;            /* directed links = 2 * links */
	int max_degree;       /* largest number of neighbours of a node */
	int min_degree;       /* smallest number of neighbours of a node */
	int diameter;         /* longest shortest path, in hops (0 for p = 1) */
	long bisection_width; /* fewest links whose removal splits the nodes into
	                         halves of floor(p/2) and ceil(p/2) (0 for p = 1) */
	int arc_connectivity; /* fewest links whose removal disconnects the graph
	                         (0 for p = 1) */
};

/*
 * Parses a specification such as "ring:8", "chain:5", "mesh:4x4",
 * "torus:2x3x4", "hypercube:5", "star:9", "tree:2:15", "complete:6" and
 * builds the topology.  *out is owned by the caller; free it with
 * tc_topo_destroy().  Returns 0, TC_ETOPO for a malformed spec or a size out
 * of range (every size >= 1, at most TC_TOPO_MAX_NODES nodes), TC_EINVAL for
 * null arguments, TC_ENOMEM (also a complete graph of more than
 * TC_TOPO_MAX_COMPLETE nodes).  *out is left untouched on error.
 * tc_topo_parse_p() says what is wrong with a spec in words.
 */
TC_API int tc_topo_parse(const char *spec, struct tc_topo **out);

/*
 * Builds the topology of p nodes that spec names, where spec may give the
 * family alone and p the size:
 *   "complete", "ring", "chain", "star"   P = p;
 *   "hypercube"                          p a power of two (D = log2 p);
 *   "mesh", "torus"                      two sides a x b = p, a <= b, the
 *                                        squarest (tc_topo_squarest(): 4x4
 *                                        for 16, 3x4 for 12); p must not be
 *                                        prime (give "mesh:1xP" for a line);
 *   "tree" (binary), "tree:K" (K-ary)   P = p.
 * A full spec (tc_topo_parse()) is taken as it is and must have p nodes when
 * p > 0; p = 0 asks for a full spec.  spec NULL is "complete".
 * why, when not NULL, receives on error a one-line message naming what is
 * wrong (e.g. "hypercube needs p a power of two, got 12"), snprintf-style in
 * len bytes; "" on success.
 * Returns 0, TC_ETOPO (malformed spec, a family without p, a size out of
 * range, p that the family cannot take), TC_EINVAL (out NULL, p < 0, a full
 * spec whose node count is not p), TC_ENOMEM (as tc_topo_parse()).  *out is
 * owned by the caller (tc_topo_destroy()) and left untouched on error.
 * Thread-safe.
 */
TC_API int tc_topo_parse_p(const char *spec, int p, struct tc_topo **out, char *why, size_t len);

/*
 * The squarest factorisation p = a x b with a <= b (a the largest divisor
 * of p not above its square root): 0, or TC_ETOPO when p is prime (a = 1,
 * b = p are still written), TC_EINVAL for p < 1 or a or b NULL (nothing
 * written; tc_error_detail() names it).  p = 1 gives 1 x 1.
 */
TC_API int tc_topo_squarest(int p, int *a, int *b);

/*
 * Builds a topology from its kind and parameters: dims[0..ndims) are the
 * sizes of a mesh or torus; for every other kind ndims is 1 and dims[0] is the
 * parameter of the spec (P, or D for the hypercube); for a tree, arity is K
 * and dims[0] is P (arity is ignored for other kinds).  Same errors and
 * ownership as tc_topo_parse().
 */
TC_API int tc_topo_create(enum tc_topo_kind kind, int ndims, const int *dims, int arity,
                          struct tc_topo **out);

/* Frees a topology from tc_topo_parse() or tc_topo_create(); NULL is a no-op. */
TC_API void tc_topo_destroy(struct tc_topo *t);

/* Writes the canonical spec (e.g. "torus:2x3x4") into buf, snprintf-style;
 * returns the length the full string needs. */
TC_API int tc_topo_spec(const struct tc_topo *t, char *buf, size_t len);

TC_API enum tc_topo_kind tc_topo_kind(const struct tc_topo *t);
TC_API int tc_topo_nodes(const struct tc_topo *t);
TC_API const char *tc_topo_kind_name(enum tc_topo_kind kind); /* "ring", "mesh", ... */

/* Mesh and torus: number of dimensions and their sizes (dims may be NULL);
 * 1 and {P} for ring and chain; hypercube: D and {2,2,...}; others: 0. */
TC_API int tc_topo_dims(const struct tc_topo *t, int *dims);
/* Tree arity K (0 for other kinds). */
TC_API int tc_topo_arity(const struct tc_topo *t);

/* The properties; never fails for a valid topology. */
TC_API const struct tc_topo_props *tc_topo_props(const struct tc_topo *t);

/*
 * Neighbours of node u, sorted ascending, without duplicates (a 2-node ring
 * or a torus dimension of size 2 has a single link between the two nodes).
 * Returns the degree and sets *nbrs to an array owned by the topology (valid
 * until tc_topo_destroy()); TC_ERANK if u is out of range.
 */
TC_API int tc_topo_neighbors(const struct tc_topo *t, int u, const int **nbrs);

/* Index of v in the sorted neighbour list of u, or -1 when v is not a
 * neighbour of u (or either is out of range).  O(log degree). */
TC_API int tc_topo_neighbor_index(const struct tc_topo *t, int u, int v);

/*
 * The deterministic route from src to dst: e-cube (lowest differing bit
 * first) on the hypercube; dimension-ordered (dimension 0 first, each
 * dimension the shorter way round on a torus, ties towards increasing
 * coordinate) on mesh and torus; the shorter direction on a ring (ties go
 * towards increasing rank); straight along the chain; through the hub on a
 * star; up to the lowest common ancestor then down on a tree; the direct link
 * on the complete graph.  Every route is a shortest path.
 *
 * tc_topo_next_hop() returns the next node after cur on the route to dst
 * (dst itself when they are neighbours, cur when cur == dst), or TC_ERANK.
 * Routes are consistent: the route from src is src followed by the route from
 * next_hop(src, dst).
 *
 * tc_topo_route() writes the nodes of the route, src first and dst last, into
 * path[0..cap) and returns the number of hops (path length - 1); TC_ERANK for
 * a bad node, TC_ETRUNCATE if cap is smaller than hops + 1 (path then holds
 * the first cap nodes).  path may be NULL with cap 0 to ask for the length.
 */
TC_API int tc_topo_next_hop(const struct tc_topo *t, int cur, int dst);
TC_API int tc_topo_route(const struct tc_topo *t, int src, int dst, int *path, int cap);
/* Length of the shortest path (hops) between u and v, or TC_ERANK. */
TC_API int tc_topo_distance(const struct tc_topo *t, int u, int v);

/* Mesh and torus coordinates (row-major, last dimension fastest). */
TC_API int tc_topo_coords(const struct tc_topo *t, int rank, int *coords);
TC_API int tc_topo_rank_of(const struct tc_topo *t, const int *coords);

/* Binary-reflected Gray code and its inverse: tc_gray_inverse(tc_gray(i)) == i. */
static inline uint32_t tc_gray(uint32_t i)
{
	return i ^ (i >> 1);
}
TC_API uint32_t tc_gray_inverse(uint32_t g);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_TOPO_H */
