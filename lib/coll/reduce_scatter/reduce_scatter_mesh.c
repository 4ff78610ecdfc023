/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/reduce_scatter/reduce_scatter_mesh.c - all-to-all reduction on a
 * k-D mesh or torus, one dimension after another ([Barnat-IB109], "all-to-all
 * reduction: the dual procedure" of the mesh allgather, allgather_mesh.c).
 *
 * The dimensions are taken in order of decreasing stride (the slowest one
 * first).  Before the phase of dimension i (size z, stride S) a node holds
 * partial sums for the S z consecutive blocks of the ranks that share its
 * coordinates along every slower dimension; along each line of dimension i
 * these split into z groups of S blocks, group c for the line's node at
 * coordinate c, and the phase is a reduce-scatter of these groups along the
 * line: the ring algorithm along a torus line (reduce_scatter_ring.c: z - 1
 * steps, the partial for coordinate j starting at j + 1), the chain
 * algorithm along a mesh line (the dual of allgather_chain.c: the partial
 * for j flows rightwards from coordinate 0 and leftwards from z - 1, both
 * arriving in the last of z - 1 phases (full duplex) or of 2(z - 1)
 * alternating phases (half duplex)).  After the last phase a node holds its
 * own block and copies it to OUT (a local transfer after the round's last
 * combine).  Partials live in TMP at the offsets of their blocks in IN; the
 * first phase combines with IN, later ones with TMP.  Combines take the lower
 * rank's data on the left; the result is rank-ordered along a chain but not
 * across dimensions nor around a ring, so the operator must be commutative.
 *
 * Cost: tc_cost_reduce_scatter_mesh() (include/topocoll/cost.h): the
 * allgather's steps (tc_cost_allgather_mesh()), each followed by the combine
 * of what it brought.  Exact where the allgather's is (allgather_mesh.c) and,
 * along mesh lines of z >= 3 nodes, t_c = 0: an inner chain node combines two
 * partials per phase, which the closed form does not count (NAN there).
 * Restrictions: mesh and torus, any dims.  Memory: TMP of p m bytes.
 *
 * Trace, mesh 1x3 (a chain), full duplex (x_j^r: rank r's block for j):
 *   phase 0: 0->1 x_2^0, 2->1 x_0^2 (1 makes x_2^0+x_2^1 and x_0^1+x_0^2)
 *   phase 1: 0->1 x_1^0, 1->2 t_2, 1->0 t_0, 2->1 x_1^2 (1: x_1^0+x_1^1+x_1^2)
 */
#include "coll/gen.h"

/* Dimension indices of gr in order of decreasing stride. */
static void tc__rs_dims(const struct tc__grid *gr, int *ord)
{
	for (int i = 0; i < gr->nd; i++)
		ord[i] = i;
	for (int i = 1; i < gr->nd; i++)
		for (int j = i; j > 0 && gr->stride[ord[j]] > gr->stride[ord[j - 1]]; j--) {
			int t = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
}

int tc__gen_reduce_scatter_mesh(const struct tc__gen *g, struct tc__sched *s)
{
	enum tc_topo_kind kind = tc_topo_kind(g->t);
	struct tc__grid gr;
	if ((kind != TC_TOPO_MESH && kind != TC_TOPO_TORUS) || !tc__grid_of(g->t, &gr))
		return TC_ENOTSUP;
	const int p = g->p;
	const uint64_t m = g->bytes;
	const int half = g->md->duplex == TC_DUPLEX_HALF;
	int ord[32];
	tc__rs_dims(&gr, ord);
	int last = -1; /* the last dimension with more than one node */
	for (int di = 0; di < gr.nd; di++)
		if (gr.dims[ord[di]] > 1)
			last = di;
	int err = tc__sched_round(s);
	if (last < 0)
		return err ? err : tc__emit(s, 0, 0, TC__BUF_IN, 0, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	s->tmp_bytes = (uint64_t)p * m;
	int cur = TC__BUF_IN; /* where a node's own partials are */
	int nround = 0;
	for (int di = 0; di <= last && !err; di++) {
		const int i = ord[di], z = gr.dims[i], S = gr.stride[i];
		if (z < 2)
			continue;
		const int ring = gr.wrap;
		const int nr = ring || !half ? z - 1 : 2 * (z - 1);
		for (int t = 0; t < nr && !err; t++, nround++) {
			if (nround)
				err = tc__sched_round(s);
			for (int v = 0; v < p && !err; v++) {
				const int c = tc__grid_coord(&gr, v, i);
				const int g0 = v - v % S - c * S; /* group 0's first block */
				int to[2], grp[2], sb[2], n = 0;
				if (ring) {
					to[n] = (c + 1) % z;
					grp[n] = ((c - 1 - t) % z + 2 * z) % z;
					sb[n++] = t ? TC__BUF_TMP : cur;
				} else {
					const int u = half ? t / 2 : t;
					const int right = !half || t % 2 == 0,
					          left = !half || t % 2 == 1;
					/* Partial for j = c + (z-1-u) rightwards, c - (z-1-u)
					 * leftwards: a stream's first node sends its own. */
					if (right && c + 1 < z && c + (z - 1 - u) <= z - 1) {
						to[n] = c + 1;
						grp[n] = c + (z - 1 - u);
						sb[n++] = c == 0 ? cur : TC__BUF_TMP;
					}
					if (left && c >= 1 && c - (z - 1 - u) >= 0) {
						to[n] = c - 1;
						grp[n] = c - (z - 1 - u);
						sb[n++] = c == z - 1 ? cur : TC__BUF_TMP;
					}
				}
				for (int k = 0; k < n && !err; k++) {
					const int dst = tc__grid_set(&gr, v, i, to[k]);
					const uint64_t off = (uint64_t)(g0 + grp[k] * S) * m;
					/* The other operand: the receiver's own partial,
					 * or, for the second of a chain's two final
					 * partials (from the right, the receiver not at
					 * coordinate 0), what the first made. */
					int ab = cur;
					if (!ring && to[k] == c - 1 && grp[k] == c - 1 && c - 1 >= 1)
						ab = TC__BUF_TMP;
					err = tc__emit_from(s, v, dst, sb[k], off, TC__BUF_TMP, off,
					                    (uint64_t)S * m,
					                    v < dst ? TC__XOP_COMBINE_LEFT
					                            : TC__XOP_COMBINE_RIGHT,
					                    ab);
				}
			}
		}
		cur = TC__BUF_TMP;
	}
	for (int v = 0; v < p && !err; v++)
		err = tc__emit(s, v, v, TC__BUF_TMP, (uint64_t)v * m, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	return err;
}

/* Where tc_cost_reduce_scatter_mesh() is the modelled time (the header), line
 * by line: a torus line under full duplex, or all-port with 3 or more nodes;
 * a mesh line under full duplex with 2 nodes, or all-port without combine
 * time.  Fills *gr. */
static int tc__rs_mesh_exact(const struct tc__gen *g, struct tc__grid *gr)
{
	const struct tc_model *md = g->md;
	enum tc_topo_kind kind = tc_topo_kind(g->t);
	if ((kind != TC_TOPO_MESH && kind != TC_TOPO_TORUS) || !tc__grid_of(g->t, gr))
		return 0;
	const int full = md->duplex == TC_DUPLEX_FULL, all = md->ports == TC_PORTS_ALL;
	for (int i = 0; i < gr->nd; i++) {
		const int z = gr->dims[i];
		if (z >= 2 && (gr->wrap ? !(full || (all && z >= 3))
		                        : !(full && (z == 2 || (all && md->tc_ns == 0)))))
			return 0;
	}
	return 1;
}

double tc__f_reduce_scatter_mesh(const struct tc__gen *g)
{
	struct tc__grid gr;
	if (!tc__rs_mesh_exact(g, &gr))
		return NAN;
	return tc_cost_reduce_scatter_mesh(g->md, gr.nd, gr.dims, (double)g->bytes);
}
