/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/bcast/bcast_hypercube.c - one-to-all broadcast on a hypercube from
 * any root ([Barnat-IB109], GENERAL-ONE-TO-ALL).
 *
 * Relabel every node by virtid = id XOR root, so the root becomes node 0, and
 * run ONE-TO-ALL: for i = d-1 down to 0, mask holds the i low bits, and every
 * node whose virtid has those bits zero and bit i clear sends X to
 * virtid XOR 2^i.  Each round doubles the nodes that hold X.
 *
 * Cost ([Barnat-IB109]): tc_cost_bcast_hypercube() under the one-port model;
 * every transfer crosses one hypercube link.
 * Restrictions: p = 2^d; hypercube topology, or the complete graph (every
 * pair is a link).  The dual (reduce, ALL-TO-ONE of [Barnat-IB109]) comes from the
 * registry's TC__ALG_DUAL.
 * Memory: none besides the buffer.
 * Trace, p = 8, root 5 (virtid = id ^ 5): round 1 (i=2): 5 -> 1;
 * round 2 (i=1): 5 -> 7, 1 -> 3; round 3 (i=0): 5 -> 4, 1 -> 0, 7 -> 6, 3 -> 2.
 */
#include "coll/gen.h"

int tc__gen_bcast_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	int d = tc__log2_exact(g->p);
	enum tc_topo_kind k = tc_topo_kind(g->t);
	if (d < 0 || (k != TC_TOPO_HYPERCUBE && k != TC_TOPO_COMPLETE))
		return TC_ENOTSUP;
	int err = tc__sched_initial(s, g->root, 0, 1);
	int mask = g->p - 1;
	for (int i = d - 1; i >= 0 && !err; i--) {
		mask ^= 1 << i;
		err = tc__sched_round(s);
		for (int v = 0; v < g->p && !err; v++) {
			/* v is a virtid; the node is v ^ root. */
			if ((v & mask) || (v & (1 << i)))
				continue;
			struct tc__xfer x = {.src = v ^ g->root,
			                     .dst = (v ^ (1 << i)) ^ g->root,
			                     .sbuf = TC__BUF_OUT,
			                     .rbuf = TC__BUF_OUT,
			                     .op = TC__XOP_COPY,
			                     .info_lo = 0,
			                     .info_n = 1,
			                     .bytes = g->bytes};
			err = tc__sched_add(s, &x);
		}
	}
	return err;
}

double tc__f_bcast_hypercube(const struct tc__gen *g)
{
	return tc_cost_bcast_hypercube(g->md, g->p, (double)g->bytes);
}

double tc__f_reduce_hypercube(const struct tc__gen *g)
{
	return tc_cost_reduce_hypercube(g->md, g->p, (double)g->bytes);
}
