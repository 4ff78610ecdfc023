/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allgather/allgather_mesh.c - all-to-all broadcast on a k-D mesh
 * or torus, one dimension after another ([Barnat-IB109], "all-to-all broadcast on
 * a mesh": two phases of sqrt(p) chains of sqrt(p) nodes; after the first
 * phase every node holds sqrt(p) of the p parts).
 *
 * The dimensions are taken in order of increasing stride (the last, fastest
 * one first), so that what a node holds before the phase of dimension i is
 * the S = stride_i consecutive blocks of the ranks that share its
 * coordinates along i and every slower dimension: one contiguous group of
 * OUT.  The phase is an allgather of these groups (S m bytes each) along
 * every line of dimension i, all lines at once: the ring algorithm along a
 * torus line (z_i - 1 steps, allgather_ring.c), the chain algorithm along a
 * mesh line (z_i - 1 phases in both directions under full duplex, 2(z_i - 1)
 * alternating phases under half duplex, allgather_chain.c).
 *
 * Cost: tc_cost_allgather_mesh() (include/topocoll/cost.h): the phase of
 * dimension i takes z_i - 1 line steps of one message of m prod_{j<i} z_j
 * bytes ([Barnat-IB109]'s two phases of sqrt(p) - 1 steps on a square 2-D
 * torus).  The formula holds exactly where every line step costs one message
 * time: torus lines under full duplex (or all-port with z_i >= 3), mesh lines
 * of 2 nodes under full duplex, longer mesh lines all-port and full duplex (a
 * chain node sends both ways in one phase).  Elsewhere tc__f_allgather_mesh()
 * is NAN (a one-port mesh line costs 2 messages per phase: the source's chain
 * counts a phase per link direction).
 * Restrictions: mesh and torus (any dims, square or not); TC_ENOTSUP
 * elsewhere.  Memory: none besides the buffers.
 *
 * Trace, torus 2x3 (ranks r = 3 row + col; dimension 1 first, S = 1):
 *   round 0: 0->1 b0, 1->2 b1, 2->0 b2, 3->4 b3, 4->5 b4, 5->3 b5
 *   round 1: 0->1 b2, 1->2 b0, 2->0 b1, 3->4 b5, 4->5 b3, 5->3 b4
 *   round 2 (dimension 0, S = 3): 0<->3, 1<->4, 2<->5 the groups b0..2, b3..5
 */
#include "allgather_lines.h"

/* Dimension indices of gr in order of increasing stride. */
static void tc__dims_by_stride(const struct tc__grid *gr, int *ord)
{
	for (int i = 0; i < gr->nd; i++)
		ord[i] = i;
	for (int i = 1; i < gr->nd; i++)
		for (int j = i; j > 0 && gr->stride[ord[j]] < gr->stride[ord[j - 1]]; j--) {
			int t = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
}

int tc__allgather_lines(const struct tc__gen *g, struct tc__sched *s, const struct tc__grid *gr, int chain)
{
	const int p = g->p;
	const uint64_t m = g->bytes;
	const int half = g->md->duplex == TC_DUPLEX_HALF;
	int ord[32];
	tc__dims_by_stride(gr, ord);
	int err = tc__sched_round(s);
	if (!err)
		err = tc__allgather_own(g, s);
	int nround = 0; /* rounds with transfers emitted so far */
	for (int di = 0; di < gr->nd && !err; di++) {
		const int i = ord[di], z = gr->dims[i], S = gr->stride[i];
		if (z < 2)
			continue;
		const int ring = gr->wrap && !chain;
		const int nr = ring || !half ? z - 1 : 2 * (z - 1);
		for (int t = 0; t < nr && !err; t++, nround++) {
			if (nround)
				err = tc__sched_round(s);
			for (int v = 0; v < p && !err; v++) {
				const int c = tc__grid_coord(gr, v, i);
				/* Rank of the first block of the group of the
				 * line's node at coordinate 0. */
				const int g0 = v - v % S - c * S;
				int to[2], grp[2], n = 0;
				if (ring) {
					to[n] = (c + 1) % z;
					grp[n++] = ((c - t) % z + z) % z;
				} else {
					const int u = half ? t / 2 : t;
					const int right = !half || t % 2 == 0,
					          left = !half || t % 2 == 1;
					if (right && c + 1 < z && c - u >= 0) {
						to[n] = c + 1;
						grp[n++] = c - u;
					}
					if (left && c >= 1 && c + u < z) {
						to[n] = c - 1;
						grp[n++] = c + u;
					}
				}
				for (int k = 0; k < n && !err; k++) {
					const int lo = g0 + grp[k] * S;
					const int first = nround == 0; /* the own block, still in IN */
					struct tc__xfer x = {.src = v,
					                     .dst = tc__grid_set(gr, v, i, to[k]),
					                     .sbuf = first ? TC__BUF_IN : TC__BUF_OUT,
					                     .rbuf = TC__BUF_OUT,
					                     .op = TC__XOP_COPY,
					                     .info_lo = lo,
					                     .info_n = S,
					                     .soff = first ? 0 : (uint64_t)lo * m,
					                     .roff = (uint64_t)lo * m,
					                     .bytes = (uint64_t)S * m};
					err = tc__sched_add(s, &x);
				}
			}
		}
	}
	return err;
}

int tc__gen_allgather_mesh(const struct tc__gen *g, struct tc__sched *s)
{
	enum tc_topo_kind k = tc_topo_kind(g->t);
	struct tc__grid gr;
	if ((k != TC_TOPO_MESH && k != TC_TOPO_TORUS) || !tc__grid_of(g->t, &gr))
		return TC_ENOTSUP;
	return tc__allgather_lines(g, s, &gr, 0);
}

int tc__allgather_mesh_exact(const struct tc_model *md, const struct tc__grid *gr)
{
	const int full = md->duplex == TC_DUPLEX_FULL, all = md->ports == TC_PORTS_ALL;
	for (int i = 0; i < gr->nd; i++) {
		const int z = gr->dims[i];
		if (z < 2)
			continue;
		if (gr->wrap ? !(full || (all && z >= 3)) : !(full && (all || z == 2)))
			return 0;
	}
	return 1;
}

double tc__f_allgather_mesh(const struct tc__gen *g)
{
	struct tc__grid gr;
	enum tc_topo_kind k = tc_topo_kind(g->t);
	if ((k != TC_TOPO_MESH && k != TC_TOPO_TORUS) || !tc__grid_of(g->t, &gr))
		return NAN;
	if (!tc__allgather_mesh_exact(g->md, &gr))
		return NAN;
	return tc_cost_allgather_mesh(g->md, gr.nd, gr.dims, (double)g->bytes);
}
