/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/bcast/bcast_dot_allport.c - one-to-all broadcast along the
 * all-port dimension-ordered spanning tree ([KKA-I], "dimension-ordered
 * trees, DOT": DOTMESHALLPORTOAB, a controlled flooding; on Q_n the all-port
 * SBT_n, where the nodes informed in step i are the C(n, i) at distance i).
 *
 * The source's rule: the source sends to all its neighbours; a node that got
 * the packet over a link of dimension i passes it on in dimension i, in the
 * same direction, if it can, and to all its neighbours in the directions
 * (i+1)+, (i+1)-, ..., (n-1)+, (n-1)-.  Every node uses the dimensions in the
 * same order 0, 1, ..., so the path to a node fixes its coordinates in that
 * order: it is a shortest path, every node receives once (NODUP) over its
 * own link, and a node at distance t receives in round t.
 *   mesh       directions exist up to the border;
 *   torus      the source only says "the source in the middle; duplicates in
 *              the cycles must be handled" - assumed here: in a ring of z
 *              nodes the + direction reaches the offsets 1 .. floor(z/2) from
 *              the root's coordinate and the - direction 1 .. ceil(z/2)-1
 *              (a 2-node ring has its one link in the + direction), so each
 *              node is reached once, along the shorter way round;
 *   hypercube  dimension i is bit i (a 2-node chain): the all-port SBT_n;
 *   ring/chain the 1-D torus and mesh.
 * Rounds: exc(root) (the eccentricity), all of a node's sends in one round.
 *
 * Cost ([KKA-I], with mu = m: one packet): tc_cost_bcast_dot_allport()
 * (include/topocoll/cost.h), exc(root) rounds of one neighbour message of m
 * bytes.  Exact under the all-port clock: each link has its own port, and round
 * t+1's senders are exactly round t's receivers.  Every link carries at most
 * one transfer: no contention.
 * Reduce (the dual): a node combines the partial results of all its children
 * of one round one after the other, so the modelled time is exc(root)
 * msg(1, m) plus m t_c per combine along the slowest chain; cost.h's
 * tc_cost_reduce_dot_allport() charges one m t_c per step (its documented
 * convention) and is exact for t_c = 0, a lower bound otherwise.
 * Restrictions: the all-port model (md->ports == TC_PORTS_ALL; TC_ENOTSUP
 * under one port, where a node could not send to all its children at once);
 * mesh, torus, hypercube, ring and chain topologies (TC_ENOTSUP elsewhere).
 * Memory: O(p) generator scratch; none at run time besides the buffer.
 * Trace, mesh 3x3, root 4 = (1,1): round 1: 4 -> 7 (0+), 4 -> 1 (0-),
 * 4 -> 5 (1+), 4 -> 3 (1-); round 2: 7 -> 8, 7 -> 6, 1 -> 2, 1 -> 0.
 * Torus 5 (ring), root 0: round 1: 0 -> 1, 0 -> 4; round 2: 1 -> 2, 4 -> 3.
 */
#include <stdlib.h>

#include "coll/gen.h"

struct tc__dot {
	int nd;
	int z[32], stride[32], a[32];
	int wrap;
};

/* The neighbour of node u one step in dimension j, direction dir (+1/-1),
 * or -1 when the tree does not go there. */
static int tc__dot_step(const struct tc__dot *d, int u, int j, int dir)
{
	int z = d->z[j], c = (u / d->stride[j]) % z;
	if (d->wrap) {
		int off = dir > 0 ? (c - d->a[j] + z) % z : (d->a[j] - c + z) % z;
		int lim = dir > 0 ? z / 2 : (z - 1) / 2;
		if (off >= lim)
			return -1;
		return u + (((c + dir + z) % z) - c) * d->stride[j];
	}
	if (c + dir < 0 || c + dir >= z)
		return -1;
	return u + dir * d->stride[j];
}

/* The shape of the topology; 0 or TC_ENOTSUP. */
static int tc__dot_shape(const struct tc__gen *g, struct tc__dot *d)
{
	struct tc__grid gr;
	if (!tc__grid_of(g->t, &gr) && tc_topo_kind(g->t) != TC_TOPO_HYPERCUBE)
		return TC_ENOTSUP;
	d->nd = gr.nd;
	d->wrap = gr.wrap;
	for (int i = 0; i < d->nd; i++) {
		d->z[i] = gr.dims[i];
		d->stride[i] = gr.stride[i];
	}
	for (int i = 0; i < d->nd; i++)
		d->a[i] = (g->root / d->stride[i]) % d->z[i];
	return 0;
}

int tc__gen_bcast_dot_allport(const struct tc__gen *g, struct tc__sched *s)
{
	struct tc__dot d;
	if (g->md->ports != TC_PORTS_ALL)
		return TC_ENOTSUP;
	int err = tc__dot_shape(g, &d);
	if (err)
		return err;
	int p = g->p;
	/* Per node: the dimension and direction it was reached by (root: -1). */
	int *front = malloc(2 * (size_t)p * sizeof *front);
	signed char *dim = malloc((size_t)p), *dir = malloc((size_t)p);
	if (!front || !dim || !dir) {
		err = TC_ENOMEM;
		goto out;
	}
	int *next = front + p, nf = 1;
	front[0] = g->root;
	dim[g->root] = -1;
	dir[g->root] = 0;
	err = tc__sched_initial(s, g->root, 0, 1);
	while (nf > 0 && !err) {
		int nn = 0;
		for (int f = 0; f < nf && !err; f++) {
			int u = front[f];
			for (int j = dim[u] < 0 ? 0 : dim[u]; j < d.nd && !err; j++) {
				for (int sg = 1; sg >= -1 && !err; sg -= 2) {
					if (j == dim[u] && sg != dir[u])
						continue; /* own dimension: onwards only */
					int v = tc__dot_step(&d, u, j, sg);
					if (v < 0)
						continue;
					if (nn == 0)
						err = tc__sched_round(s);
					struct tc__xfer x = {.src = u,
					                     .dst = v,
					                     .sbuf = TC__BUF_OUT,
					                     .rbuf = TC__BUF_OUT,
					                     .op = TC__XOP_COPY,
					                     .info_lo = 0,
					                     .info_n = 1,
					                     .bytes = g->bytes};
					if (!err)
						err = tc__sched_add(s, &x);
					dim[v] = (signed char)j;
					dir[v] = (signed char)sg;
					next[nn++] = v;
				}
			}
		}
		for (int f = 0; f < nn; f++)
			front[f] = next[f];
		nf = nn;
	}
out:
	free(front);
	free(dim);
	free(dir);
	return err;
}

/* The closed form's kind and dims for this topology. */
static double tc__dot_formula(const struct tc__gen *g, int reduce)
{
	enum tc_topo_kind k = tc_topo_kind(g->t);
	int dims[TC_TOPO_MAX_DIMS];
	int nd = 1;
	if (k == TC_TOPO_MESH || k == TC_TOPO_TORUS)
		nd = tc_topo_dims(g->t, dims);
	else if (k == TC_TOPO_HYPERCUBE)
		dims[0] = tc__log2_exact(g->p);
	else
		dims[0] = g->p;
	if (nd < 1 || nd > TC_TOPO_MAX_DIMS)
		return NAN;
	double m = (double)g->bytes;
	return reduce ? tc_cost_reduce_dot_allport(g->md, k, nd, dims, g->root, m)
	              : tc_cost_bcast_dot_allport(g->md, k, nd, dims, g->root, m);
}

double tc__f_bcast_dot_allport(const struct tc__gen *g)
{
	return tc__dot_formula(g, 0);
}

double tc__f_reduce_dot_allport(const struct tc__gen *g)
{
	return tc__dot_formula(g, 1);
}
