/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/bcast/bcast_mesh.c - one-to-all broadcast on a k-D mesh or torus,
 * one dimension after another ([Barnat-IB109], "One-To-All in a 2-D mesh of p
 * nodes: sqrt(p) chains of sqrt(p) nodes; first the information reaches
 * every chain, then it spreads inside all chains at once": 2 log sqrt(p)
 * sequential operations, d log p^{1/d} in d dimensions).
 *
 * Phase i (dimension 0 first, then 1, ...) runs recursive doubling on every
 * line along dimension i through the nodes informed so far, i.e. the lines
 * whose coordinates j > i equal the root's: the halving of bcast_ring_rd.c
 * (tc__rd_halving_round) from the root's coordinate a_i, as on a chain in a
 * mesh and as on a ring (positions counted from a_i) in a torus.  A phase
 * takes ceil(log2 z_i) rounds; all its lines run in parallel on disjoint
 * links.  Routes stay inside their line (dimension-ordered routing moves
 * only along the one coordinate that differs).
 *
 * Cost: tc_cost_bcast_mesh() (include/topocoll/cost.h), the sum over the
 * dimensions of the ring_rd (torus) or chain_rd from a_i (mesh) phase
 * (bcast_ring_rd.c); with t_h = 0 the source's count of sum_i ceil(log2 z_i)
 * message times.  Exact: every line of a phase takes the same time from its
 * holder's clock, so the phases add up.
 * Reduce (the dual, one port): tc_cost_reduce_mesh(), one combine added to
 * each round, exact except where a mesh dimension has odd z_i and the root
 * in its middle (see bcast_ring_rd.c: the closed form is then an upper
 * bound).
 * Restrictions: mesh and torus topologies (TC_ENOTSUP elsewhere; a ring or
 * chain is ring_rd), any dims, any root.
 * Memory: none besides the buffer.
 * Trace, mesh 3x5, root 7 = (1,2): phase 0 (column 2, chain from 1):
 * round 1: 7 -> 2; round 2: 7 -> 12.  Phase 1 (rows 0, 1, 2, chain from 2):
 * round 3: r2 -> r1 for r = 0, 5, 10 (2 -> 1, 7 -> 6, 12 -> 11); round 4:
 * r2 -> r3, r1 -> r0; round 5: r3 -> r4.  2 + 3 = ceil(log2 3) + ceil(log2 5).
 */
#include "coll/gen.h"

struct tc__mesh_ctx {
	const struct tc__gen *g;
	struct tc__sched *s;
	int base;   /* rank of the line's coordinate 0 */
	int stride; /* rank distance of one step along the line */
	int z, a;   /* the line's size, the root's coordinate on it */
	int torus;
};

static int tc__mesh_emit(void *ctxp, int from, int to)
{
	struct tc__mesh_ctx *c = ctxp;
	if (c->torus) { /* positions counted from a */
		from = (from + c->a) % c->z;
		to = (to + c->a) % c->z;
	}
	struct tc__xfer x = {.src = c->base + from * c->stride,
	                     .dst = c->base + to * c->stride,
	                     .sbuf = TC__BUF_OUT,
	                     .rbuf = TC__BUF_OUT,
	                     .op = TC__XOP_COPY,
	                     .info_lo = 0,
	                     .info_n = 1,
	                     .bytes = c->g->bytes};
	return tc__sched_add(c->s, &x);
}

int tc__gen_bcast_mesh(const struct tc__gen *g, struct tc__sched *s)
{
	enum tc_topo_kind k = tc_topo_kind(g->t);
	if (k != TC_TOPO_MESH && k != TC_TOPO_TORUS)
		return TC_ENOTSUP;
	struct tc__grid gr;
	int nd = tc__grid_of(g->t, &gr);
	const int *dims = gr.dims, *stride = gr.stride;
	int a[TC_TOPO_MAX_DIMS];
	for (int i = 0; i < nd; i++)
		a[i] = tc__grid_coord(&gr, g->root, i);
	int err = tc__sched_initial(s, g->root, 0, 1);
	struct tc__mesh_ctx c = {.g = g, .s = s, .torus = k == TC_TOPO_TORUS};
	for (int i = 0; i < nd && !err; i++) {
		c.z = dims[i];
		c.a = a[i];
		c.stride = stride[i];
		/* The lines of phase i: coordinates j < i free, j > i the root's. */
		int fixed = 0, nlines = 1;
		for (int j = i + 1; j < nd; j++)
			fixed += a[j] * stride[j];
		for (int j = 0; j < i; j++)
			nlines *= dims[j];
		int h = c.torus ? 0 : c.a;
		int rounds = tc_cost_log2_ceil(c.z);
		for (int d = 0; d < rounds && !err; d++) {
			err = tc__sched_round(s);
			for (int l = 0; l < nlines && !err; l++) {
				/* l enumerates coordinates 0 .. i-1, the last fastest. */
				int rest = l, base = fixed;
				for (int j = i - 1; j >= 0; j--) {
					base += (rest % dims[j]) * stride[j];
					rest /= dims[j];
				}
				c.base = base;
				err = tc__rd_halving_round(0, c.z - 1, h, d, tc__mesh_emit, &c);
			}
		}
	}
	return err;
}

/* The topology's dims and the root for the closed forms. */
static double tc__mesh_formula(const struct tc__gen *g, int reduce)
{
	int dims[TC_TOPO_MAX_DIMS];
	int nd = tc_topo_dims(g->t, dims);
	enum tc_topo_kind k = tc_topo_kind(g->t);
	if (nd < 1 || nd > TC_TOPO_MAX_DIMS)
		return NAN;
	return reduce ? tc_cost_reduce_mesh(g->md, k, nd, dims, g->root, (double)g->bytes)
	              : tc_cost_bcast_mesh(g->md, k, nd, dims, g->root, (double)g->bytes);
}

double tc__f_bcast_mesh(const struct tc__gen *g)
{
	return tc__mesh_formula(g, 0);
}

double tc__f_reduce_mesh(const struct tc__gen *g)
{
	return tc__mesh_formula(g, 1);
}
