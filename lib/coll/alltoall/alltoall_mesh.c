/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/alltoall/alltoall_mesh.c - all-to-all personalised communication
 * on a k-D mesh or torus ([Barnat-IB109], "ATA individuální komunikace", mesh).
 *
 * One phase per dimension: on every line of dimension i (z_i nodes) the ring
 * algorithm (alltoall_ring.c) runs with super-blocks, each node's blocks
 * aggregated by the destination's coordinate along i (p / z_i blocks of m
 * bytes each); after the phase every block sits on the node that shares its
 * destination's coordinate along i.  On a 2-D sqrt(p) x sqrt(p) grid: a row
 * phase then a column phase, each sqrt(p) - 1 steps of m p / 2 bytes.  The
 * engine and its layout (no final reshuffle: blocks end in source order) are
 * in alltoall_lines.h.
 *
 * Cost: tc_cost_alltoall_mesh() (include/topocoll/cost.h): z_i - 1 steps in
 * dimension i, each one message of p / 2 blocks (m p / 2 bytes) on average.
 * Exact on a torus under full duplex (and under the all-port half-duplex model
 * when no dimension has 2 nodes).
 * On a mesh (no wrap) a line's ring closes with a message from its last
 * node to its first routed back along the line (z_i - 1 links, the reverse
 * links, which no other message of the step uses under full duplex): the
 * result is right, but that message costs (z_i - 1)(t_s + t_w b) under
 * store-and-forward, (z_i - 2) t_h more under cut-through, and the delay
 * travels round the line, so the closed form does not apply (NAN) unless
 * every dimension has at most 2 nodes.
 * Restrictions: mesh, torus, any dims (k-D, not only square); any p.
 * Memory: TMP of 2 max_i (z_i - 1)(p / z_i) m bytes (< 2 p m).
 * Checker: pieces untracked (a super-block is not an interval of pieces).
 *
 * Trace, torus 2x3 (rank = 3 row + col; block "ab" from a to b):
 *   round 0: IN -> OUT; 0 packs by distance along its row: {01 04} {02 05}
 *   dimension 1 (rows of 3; super-blocks of 2 blocks, by destination column)
 *     step 1: 0 -> 1 {01 04 02 05}, 1 -> 2 {12 15 10 13}, 2 -> 0 {20 23 21 24}
 *             (and row 1 likewise); 1 keeps {01 04}, 0 keeps {20 23}
 *     step 2: 0 -> 1 {21 24}, 1 -> 2 {02 05}, 2 -> 0 {10 13}
 *     0 now holds the blocks for column 0: 00 03 10 13 20 23
 *   dimension 0 (columns of 2; super-blocks of 3 blocks, by destination row)
 *     step 1: 0 <-> 3: 0 sends {03 13 23}, 3 sends {30 40 50}; 1 <-> 4, 2 <-> 5.
 */
#include "coll/alltoall/alltoall_lines.h"

#include <stdlib.h>

int tc__gen_alltoall_mesh(const struct tc__gen *g, struct tc__sched *s)
{
	const enum tc_topo_kind kind = tc_topo_kind(g->t);
	struct tc__grid gr;
	if ((kind != TC_TOPO_MESH && kind != TC_TOPO_TORUS) || !tc__grid_of(g->t, &gr))
		return TC_ENOTSUP;
	const int p = g->p;
	int *buf = malloc(sizeof *buf * 2 * (size_t)p * (size_t)gr.nd);
	struct tc__a2a_phase *ph = malloc(sizeof *ph * (size_t)gr.nd);
	int err = TC_ENOMEM;
	if (buf && ph) {
		for (int i = 0; i < gr.nd; i++) {
			int *succ = buf + 2 * (size_t)p * (size_t)i, *digit = succ + p;
			for (int v = 0; v < p; v++) {
				digit[v] = tc__grid_coord(&gr, v, i);
				succ[v] = tc__grid_set(&gr, v, i, (digit[v] + 1) % gr.dims[i]);
			}
			ph[i] = (struct tc__a2a_phase){.len = gr.dims[i],
			                               .stride = gr.stride[i],
			                               .succ = succ,
			                               .digit = digit};
		}
		err = tc__a2a_lines(g, s, gr.nd, ph);
	}
	free(ph);
	free(buf);
	return err;
}

/* Where tc_cost_alltoall_mesh() is the modelled time (the header): a torus,
 * or a mesh of sides 1 and 2, with both directions of a line at once (full
 * duplex, or all ports on lines of 3 or more).  Fills *gr. */
static int tc__a2a_mesh_exact(const struct tc__gen *g, struct tc__grid *gr)
{
	const struct tc_model *md = g->md;
	if (!tc__grid_of(g->t, gr))
		return 0;
	for (int i = 0; i < gr->nd; i++) {
		if (!gr->wrap && gr->dims[i] > 2)
			return 0;
		if (md->duplex != TC_DUPLEX_FULL && (md->ports != TC_PORTS_ALL || gr->dims[i] == 2))
			return 0;
	}
	return 1;
}

double tc__f_alltoall_mesh(const struct tc__gen *g)
{
	struct tc__grid gr;
	if (!tc__a2a_mesh_exact(g, &gr))
		return NAN;
	return tc_cost_alltoall_mesh(g->md, gr.nd, gr.dims, (double)g->bytes);
}
