/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allgather/allgather_lines.h - what the allgather files share
 * (internal to this folder): the line phases of allgather_mesh.c and
 * allgather_chain.c, and the opening of every allgather schedule.
 */
#ifndef TC_COLL_ALLGATHER_LINES_H
#define TC_COLL_ALLGATHER_LINES_H

#include "coll/gen.h"

/*
 * Emits the allgather of grid gr, one phase per dimension of size > 1 in
 * order of increasing stride: along every line of the dimension, the ring
 * algorithm when the grid wraps and chain is 0, otherwise the chain
 * algorithm (z - 1 phases both ways under full duplex, 2(z - 1) alternating
 * phases under half duplex, md->duplex).  Round 0 also copies IN to the
 * own block of OUT.
 */
/* The opening every allgather schedule shares, into the current round:
 * every rank starts with piece v (the checker's) and copies its block IN
 * to OUT's block v (a local transfer, free; the only one at p = 1)
 * (allgather_ring.c). */
int tc__allgather_own(const struct tc__gen *g, struct tc__sched *s);

int tc__allgather_lines(const struct tc__gen *g, struct tc__sched *s, const struct tc__grid *gr,
                        int chain);

/* Whether every line phase of grid gr costs one message time per step
 * under md (allgather_mesh.c): then the closed form of the mesh is exact. */
int tc__allgather_mesh_exact(const struct tc_model *md, const struct tc__grid *gr);

#endif /* TC_COLL_ALLGATHER_LINES_H */
