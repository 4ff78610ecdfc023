/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shift/shift_hypercube_ct.c - circular q-shift on the hypercube by
 * direct e-cube routed messages, cut-through ([Gergel-shift], "передача пакетов",
 * (3.21)).
 *
 * Every node sends its block straight to node (r + q) mod p in one round,
 * routed by e-cube (lowest bit first, lib/topo/topo_route.c): the schedule
 * of `direct` (tc__gen_perm_direct()), with the source's formula and its
 * restriction.  Adding q leaves the gamma(q) low bits of r unchanged (2^gamma
 * divides q), so a route crosses at most d - gamma(q) links; the source notes
 * that e-cube routes of a shift never share a link at the same time.
 *
 * Cost: tc_cost_shift_hypercube_ct() (include/topocoll/cost.h): one round
 * of routed messages of at most log p - gamma(q) links.
 * q mod p = 0 costs 0 (local copies).
 * Restrictions: hypercube, p a power of two (TC_ENOTSUP elsewhere); any q.
 * Buffers: IN -> OUT of the destination.  Memory: none.
 *
 * Trace, hypercube d = 2 (p = 4), q = 1: gamma = 0, routes of at most 2 links:
 *   0 -> 1 (00 -> 01), 1 -> 2 (01 -> 11 -> 10), 2 -> 3 (10 -> 11),
 *   3 -> 0 (11 -> 10 -> 00)
 */
#include "coll/gen.h"

int tc__gen_shift_hypercube_ct(const struct tc__gen *g, struct tc__sched *s)
{
	/* [Gergel-shift]'s shift of ranks (binary labels), not of Gray-ring positions. */
	if (tc_topo_kind(g->t) != TC_TOPO_HYPERCUBE || tc__log2_exact(g->p) < 0 || g->shift_ring)
		return TC_ENOTSUP;
	return tc__gen_perm_direct(g, s);
}

double tc__f_shift_hypercube_ct(const struct tc__gen *g)
{
	return tc_cost_shift_hypercube_ct(g->md, g->p, g->q, (double)g->bytes);
}
