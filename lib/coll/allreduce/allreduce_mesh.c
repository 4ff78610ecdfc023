/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allreduce/allreduce_mesh.c - allreduce on a k-D mesh or torus:
 * the mesh reduce-scatter (reduce_scatter_mesh.c), then the mesh allgather
 * (allgather_mesh.c), on blocks of m/p bytes (DESIGN.md catalogue: the
 * composition of [Barnat-IB109]'s all-to-all reduction and all-to-all broadcast on
 * a mesh, as the ring allreduce composes the ring ones).
 *
 * The buffer is cut into p blocks of B = ceil(count/p) elements, block j at
 * j B: the last blocks are short or empty when p does not divide the count.
 * Both parts are generated on blocks of B bytes as if the buffer held p B
 * bytes, and their transfers are clipped to the m bytes that exist (a
 * region past m is not sent; elements are reduced independently, so what
 * lies inside m is what the unclipped schedule computes).
 *   reduce-scatter: reads IN, keeps its partial sums in TMP at the offsets of
 *     their blocks in IN, and ends with each rank's reduced block copied into
 *     OUT at its own offset r B (not at 0, as the reduce-scatter alone does);
 *   allgather: the rank's own block, which the allgather alone reads from IN
 *     at 0, is read from TMP at r B (where the reduce-scatter left it); every
 *     other transfer goes OUT to OUT as in the allgather.
 * Each block is reduced once, by the reduce-scatter along its lines, then
 * only copied, so every rank holds bit-identical results.  Combines take the
 * lower rank's data on the left, but the order across dimensions and around
 * a torus line is not the rank order: the operator must be commutative (not
 * TC__ALG_ORDERED).
 *
 * Cost: tc_cost_allreduce_mesh() = tc_cost_reduce_scatter_mesh() +
 * tc_cost_allgather_mesh() at m/p, exact where both parts are (their
 * headers: full duplex, or all-port with torus lines of 3 or more; mesh
 * lines of 3 or more nodes need all-port and, for the reduce-scatter,
 * t_c = 0) and p divides the element count; NAN elsewhere.
 * Restrictions: mesh and torus, any number of dimensions, any sides.
 * Memory: TMP of m bytes (the reduce-scatter's partial sums).
 *
 * Trace, torus 2x3, 6 elements (blocks b0..b5 of one element; ranks
 * r = 3 row + col):
 *   reduce-scatter, dimension 0 (S = 3): 0<->3, 1<->4, 2<->5 exchange the
 *     other row's half (0 sends b3..b5 to 3, 3 sends b0..b2 to 0, ...);
 *   dimension 1 (S = 1), 2 steps around each row: rank r ends with b_r
 *     reduced, copied to OUT at r;
 *   allgather, dimension 1 then 0: the rows gather their three blocks, then
 *     the two rows swap them.
 */
#include "coll/gen.h"

/* Copies schedule b (one part, generated on blocks of B bytes) into s,
 * rewritten as the header says: part 0 the reduce-scatter, part 1 the
 * allgather; every region clipped to [0, m). */
static int tc__ar_mesh_replay(const struct tc__sched *b, struct tc__sched *s, int part, uint64_t B,
                              uint64_t m)
{
	int err = 0;
	for (int r = 0; r < b->nrounds && !err; r++) {
		err = tc__sched_round(s);
		for (int i = b->round_at[r]; i < b->round_at[r + 1] && !err; i++) {
			struct tc__xfer x = b->x[i];
			x.info_lo = x.info_n = 0; /* the parts' pieces are not the call's */
			if (part == 0 && x.src == x.dst && x.rbuf == TC__BUF_OUT)
				x.roff = x.soff; /* the reduced block, at its own offset */
			if (part == 1 && x.sbuf == TC__BUF_IN) {
				x.sbuf = TC__BUF_TMP;
				x.soff += (uint64_t)x.src * B;
			}
			if (x.soff != x.roff)
				return TC_EINVAL; /* both parts keep every block in place */
			if (x.soff > m)
				x.soff = x.roff = m;
			if (x.bytes > m - x.soff)
				x.bytes = m - x.soff;
			err = tc__sched_add(s, &x);
		}
	}
	return err;
}

/* Generates one part into a schedule of its own, then into s. */
static int tc__ar_mesh_part(const struct tc__gen *g, struct tc__sched *s, int part, uint64_t B)
{
	struct tc__gen sub = *g;
	sub.coll = part ? TC_COLL_ALLGATHER : TC_COLL_REDUCE_SCATTER;
	sub.bytes = B;
	struct tc__sched b;
	int err = tc__sched_init(&b, g->p);
	if (err)
		return err;
	if (s->count_only) {
		/* Only the size of the schedule is asked: the parts' counts
		 * (clipping ignored) under s's limit. */
		b.count_only = 1;
		if (s->max_x)
			b.max_x = s->counted < s->max_x ? (int)(s->max_x - s->counted) : 1;
	}
	err = part ? tc__gen_allgather_mesh(&sub, &b) : tc__gen_reduce_scatter_mesh(&sub, &b);
	if (!err)
		err = b.err;
	if (!err && s->count_only) {
		s->nrounds += b.nrounds;
		s->counted += b.counted;
	} else if (!err) {
		err = tc__ar_mesh_replay(&b, s, part, B, g->bytes);
	}
	tc__sched_free(&b);
	return err;
}

int tc__gen_allreduce_mesh(const struct tc__gen *g, struct tc__sched *s)
{
	enum tc_topo_kind kind = tc_topo_kind(g->t);
	if (kind != TC_TOPO_MESH && kind != TC_TOPO_TORUS)
		return TC_ENOTSUP;
	if (g->p == 1)
		return 0; /* the framework copies */
	const uint64_t count = g->bytes / g->esize;
	const uint64_t B = (count + (uint64_t)g->p - 1) / (uint64_t)g->p * g->esize;
	s->tmp_bytes = g->bytes;
	int err = tc__ar_mesh_part(g, s, 0, B);
	return err ? err : tc__ar_mesh_part(g, s, 1, B);
}

/* Where tc_cost_allreduce_mesh() is the modelled time (the header): a mesh
 * or torus whose element count p divides, and where both parts' closed forms
 * hold on blocks of m/p bytes.  Fills *gr. */
static int tc__ar_mesh_exact(const struct tc__gen *g, struct tc__grid *gr)
{
	enum tc_topo_kind kind = tc_topo_kind(g->t);
	if ((kind != TC_TOPO_MESH && kind != TC_TOPO_TORUS) || !tc__grid_of(g->t, gr))
		return 0;
	if (g->p == 1)
		return 1;
	if ((g->bytes / g->esize) % (uint64_t)g->p)
		return 0;
	struct tc__gen sub = *g;
	sub.bytes = g->bytes / (uint64_t)g->p;
	return !isnan(tc__f_reduce_scatter_mesh(&sub)) && !isnan(tc__f_allgather_mesh(&sub));
}

double tc__f_allreduce_mesh(const struct tc__gen *g)
{
	struct tc__grid gr;
	if (!tc__ar_mesh_exact(g, &gr))
		return NAN;
	return tc_cost_allreduce_mesh(g->md, gr.nd, gr.dims, (double)g->bytes);
}
