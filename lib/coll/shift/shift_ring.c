/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shift/shift_ring.c - circular q-shift around a ring, the shorter
 * way ([Barnat-IB109], "circular q-shift", 1-D case).
 *
 * With q' = q mod p, the blocks travel k = min(q', p - q') steps forward
 * (q' <= p - q') or backward; in every step every block moves one ring
 * position, so after k steps rank r's block sits at rank (r + q) mod p.
 *
 * Cost: tc_cost_shift_ring() (include/topocoll/cost.h): min(q', p - q') steps
 * of one neighbour message of m bytes.  Exact under full duplex; with one
 * half-duplex port (or p = 2 on its single link) a step's send and receive
 * share the port and the formula does not apply (NAN).
 * Restrictions: ring and complete graph (ring order 0, 1, ..., p-1, through
 * tc__ring_node()); any p, any q.  On the hypercube only with shift_ring
 * ([Barnat-IB109]/[Gergel-shift]'s shift of Gray-ring positions: position i, node G(i),
 * sends to position i + q, which is what walking tc__ring_node() does).
 * Without it TC_ENOTSUP: the Gray-code ring puts rank r + 1 up to log p
 * links away from rank r (rank 2^d - 1 and rank 0 differ in every bit), so
 * a shift of ranks is no shift along that ring (`hypercube_ct` and `direct`
 * apply there).  The registry's tokens (TC__R_RINGS) cannot say "hypercube
 * with shift_ring only"; the generator refuses the rest.
 * Buffers: the first step reads IN, later steps read the buffer of the
 * previous one; receives alternate between TC__BUF_TMP and OUT so that the
 * last lands in OUT (shift_walk.h).  q' = 0 (or p = 1): a local copy.
 * Memory: m bytes of TC__BUF_TMP when k >= 2.
 *
 * Trace, ring p = 5, q = 3 (k = 2 backward; blocks named by their origin):
 *   step 0:  0 -> 4 b0 (TMP),  1 -> 0 b1,  2 -> 1 b2,  3 -> 2 b3,  4 -> 3 b4
 *   step 1:  4 -> 3 b0 (OUT),  0 -> 4 b1,  1 -> 0 b2,  2 -> 1 b3,  3 -> 2 b4
 */
#include "shift_walk.h"

int tc__gen_shift_ring(const struct tc__gen *g, struct tc__sched *s)
{
	enum tc_topo_kind kind = tc_topo_kind(g->t);
	/* Ring and complete: the same shift in either order (shift_ring); the
	 * hypercube's Gray ring: only the shift of positions. */
	if (kind != TC_TOPO_RING && kind != TC_TOPO_COMPLETE &&
	    !(kind == TC_TOPO_HYPERCUBE && g->shift_ring))
		return TC_ENOTSUP;
	const int p = g->p, q = g->q;
	if (q == 0)
		return tc__shift_local(g, s);
	const int fwd = q <= p - q, k = fwd ? q : p - q, dir = fwd ? 1 : -1;
	struct tc__shift_walk w;
	int err = tc__shift_walk_init(&w, p, g->bytes);
	for (int v = 0; v < p && !err; v++)
		w.left[v] = k;
	if (!err)
		err = tc__shift_walk_start(&w, s);
	for (int st = 0; st < k && !err; st++) {
		err = tc__shift_walk_round(&w, s, st == 0);
		for (int i = 0; i < p && !err; i++)
			err = tc__shift_walk_move(&w, s, tc__ring_node(g->t, i),
			                          tc__ring_node(g->t, i + dir));
		tc__shift_walk_end(&w);
	}
	tc__shift_walk_free(&w);
	return err;
}

double tc__f_shift_ring(const struct tc__gen *g)
{
	const struct tc_model *md = g->md;
	if (g->p > 1 && md->duplex != TC_DUPLEX_FULL && !(md->ports == TC_PORTS_ALL && g->p >= 3))
		return NAN;
	return tc_cost_shift_ring(md, g->p, g->q, (double)g->bytes);
}
