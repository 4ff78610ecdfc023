/* SPDX-License-Identifier: MIT */
/*
 * lib/topo/topo_internal.h - the topology structure shared by the files of
 * lib/topo.  Not installed.
 *
 * A topology is immutable once tc_topo_create() returns, so every reader may
 * run concurrently without synchronisation (see topocoll/topo.h).
 */
#ifndef TC_TOPO_INTERNAL_H
#define TC_TOPO_INTERNAL_H

#include <stddef.h>

#include "topocoll/topo.h"

/*
 * Largest number of arcs (directed links) a topology may have: 2^26 arcs are
 * 256 MiB of neighbour lists.  Only the complete graph can exceed it (from
 * complete:8193 on; hypercube:20 has 20 * 2^20 arcs); tc_topo_create() then
 * returns TC_ENOMEM instead of trying to allocate p^2 entries.
 */
#define TC__TOPO_MAX_ARCS (1L << 26)

/* Largest tree for which the bisection width is computed exactly by the
 * O(p^2) dynamic programme of topo_props.c (about 10 ms at p = 4096). */
#define TC__TOPO_TREE_EXACT_MAX 4096

struct tc_topo {
	enum tc_topo_kind kind;
	int p;                        /* nodes */
	int ndims;                    /* mesh/torus: dimensions; ring/chain: 1 */
	int dims[TC_TOPO_MAX_DIMS];   /* mesh/torus sizes; ring/chain: {P} */
	int stride[TC_TOPO_MAX_DIMS]; /* mesh/torus: rank step of each dimension */
	int param;                    /* P, or D for the hypercube */
	int arity;                    /* tree: K; 0 otherwise */
	size_t *off;                  /* p + 1 offsets into adj (CSR) */
	int *adj;                     /* sorted neighbour lists, props.arcs ints */
	int *wt;                      /* per arc, beside adj: its weight in links
	                                 of the network underneath (charge.h);
	                                 NULL: every link weighs 1 */
	struct tc_topo_props props;
};

/* Fills t->props from the kind and parameters alone (t->adj is not needed).
 * Returns 0 or TC_ENOMEM (scratch memory of the tree bisection). */
int tc__topo_compute_props(struct tc_topo *t);

/* Tree helpers (topo_props.c), also used by the routing code.  Depth of node v
 * in the K-ary heap-shaped tree (root 0 at depth 0). */
int tc__tree_depth(const struct tc_topo *t, int v);

#endif /* TC_TOPO_INTERNAL_H */
