/* SPDX-License-Identifier: MIT */
/*
 * lib/topo/embed.h - embeddings and arithmetic that the collective algorithms
 * share: the Hamiltonian ring of a topology (identity on rings and complete
 * graphs, the binary-reflected Gray code on hypercubes), the dimensions and
 * strides of a grid (mesh, torus, and a hypercube seen as a 2x2x...x2 mesh),
 * and bit helpers.  Not installed; thread-safe (pure functions of immutable
 * topologies).
 */
#ifndef TC_TOPO_EMBED_H
#define TC_TOPO_EMBED_H

#include "topocoll/topo.h"

/* ---- rings ------------------------------------------------------------------ */

/* Whether t has a ring through every node whose consecutive positions are
 * neighbours, in the order tc__ring_node() gives: ring and complete graph
 * (position i is node i), hypercube (position i is node tc_gray(i)). */
int tc__ring_embeds(const struct tc_topo *t);
/* The node at ring position pos (0 <= pos < p, or any int: taken mod p);
 * -1 when t has no such ring. */
int tc__ring_node(const struct tc_topo *t, int pos);
/* The ring position of node v (inverse of tc__ring_node); -1 likewise. */
int tc__ring_pos(const struct tc_topo *t, int v);

/* The Hamiltonian rings lib/topo knows: those of tc__ring_embeds() and
 * those of the 2-D grids.  A 2-D torus of sides a x b (rank = row b + col)
 * has one whatever its sides; a 2-D mesh has one when a side is even and
 * neither is 1 (a mesh of odd sides has an odd number of nodes and is
 * bipartite: no cycle through them all), or when p <= 2; a torus or mesh of
 * one dimension is a ring or a chain (a chain of 3 or more has none).
 * Grids of three or more dimensions are not embedded.
 * The 2-D ring is a comb: row 0 left to right, then rows 1 .. a-1 in a
 * snake over columns b-1 .. 1, then up column 0 back to the start; the
 * snake ends beside column 0 when a is even, and reaches it through the
 * wrap-around of the last row when a is odd (a torus).  A mesh of odd a and
 * even b takes the comb of its transpose (columns as rows).
 * Trace, torus:3x3 (positions -> nodes): 0 1 2, 5 4, 7 8, (wrap) 6 3. */
int tc__hring_embeds(const struct tc_topo *t);
/* The node at position pos (any int, taken mod p) of that ring; -1 when t
 * has none. */
int tc__hring_node(const struct tc_topo *t, int pos);

/* ---- grids ------------------------------------------------------------------ */

/* A topology as a k-D grid: dims[i] nodes along dimension i, rank step
 * stride[i] (row-major: the last dimension fastest), wrap: whether each
 * dimension closes into a ring.  Mesh and torus as they are; a ring or chain
 * is a 1-D grid; a hypercube of dimension d is a 2x...x2 grid of d
 * dimensions whose dimension i is bit i (stride 2^i, listed from bit 0).
 * Returns the number of dimensions, or 0 for other kinds. */
struct tc__grid {
	int nd;
	int wrap;
	int dims[32];
	int stride[32];
};
int tc__grid_of(const struct tc_topo *t, struct tc__grid *g);
/* Coordinate of node v along dimension i. */
static inline int tc__grid_coord(const struct tc__grid *g, int v, int i)
{
	return (v / g->stride[i]) % g->dims[i];
}
/* v moved to coordinate c along dimension i. */
static inline int tc__grid_set(const struct tc__grid *g, int v, int i, int c)
{
	return v + (c - tc__grid_coord(g, v, i)) * g->stride[i];
}

/* ---- bits ------------------------------------------------------------------- */

/* d with 2^d == p, or -1 when p is not a power of two (p >= 1). */
static inline int tc__log2_exact(int p)
{
	return p > 0 && (p & (p - 1)) == 0 ? __builtin_ctz((unsigned)p) : -1;
}
/* The largest power of two <= p (p >= 1). */
static inline int tc__pow2_floor(int p)
{
	return 1 << (31 - __builtin_clz((unsigned)p));
}
/* ceil(log2 p) (p >= 1). */
static inline int tc__log2_ceil(int p)
{
	return p <= 1 ? 0 : 32 - __builtin_clz((unsigned)(p - 1));
}

#endif /* TC_TOPO_EMBED_H */
