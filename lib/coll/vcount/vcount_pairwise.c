/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/vcount/vcount_pairwise.c - the schedule of the variable-count
 * collectives: pairwise exchange (contract and cost in vcount.h; closed
 * form tc_cost_alltoall_pairwise() with equal blocks).
 *
 * Trace, alltoallv on p = 3 (every block non-empty):
 *   round 0: 0 -> 0, 1 -> 1, 2 -> 2 (local copies)
 *   round 1: 0 -> 1, 1 -> 2, 2 -> 0
 *   round 2: 0 -> 2, 1 -> 0, 2 -> 1
 * gatherv to root 1 keeps, of these, the transfers into 1: one per round.
 *
 * In the registry (tc__gen_vcount) the matrix comes with the call: built by
 * tc__vcount() from the agreed counts, or by tc__vmatrix_of_call() from a
 * predicted call's (displacements packed).
 */
#include "coll/vcount/vcount.h"

#include "coll/gen.h"

/* The transfers of mx into s (initialised). */
static int tc__vcount_emit(const struct tc__vmatrix *mx, struct tc__sched *s)
{
	const int p = mx->p;
	int err = 0;
	for (int k = 0; k < p && !err; k++) {
		err = tc__sched_round(s);
		for (int i = 0; i < p && !err; i++) {
			int j = (i + k) % p;
			uint64_t soff, roff, bytes = tc__vm_block(mx, i, j, &soff, &roff);
			if (!bytes)
				continue;
			err = tc__emit(s, i, j, TC__BUF_IN, soff, TC__BUF_OUT, roff, bytes, TC__XOP_COPY);
		}
	}
	return err ? err : s->err;
}

int tc__gen_vcount_pairwise(const struct tc_topo *t, const struct tc__vmatrix *mx, struct tc__sched *s)
{
	int err = tc__sched_init(s, mx->p);
	if (err)
		return err;
	(void)t;
	err = tc__vcount_emit(mx, s);
	if (err)
		tc__sched_free(s);
	return err;
}

int tc__gen_vcount(const struct tc__gen *g, struct tc__sched *s)
{
	if (!g->vmx || g->vmx->p != g->p)
		return TC_EINVAL;
	return tc__vcount_emit(g->vmx, s);
}

/* The size m of the blocks where tc_cost_alltoall_pairwise() is the modelled
 * time of g's call (vcount.h): 0 when nothing moves, -1 where the closed
 * form does not hold. */
static int64_t tc__vcount_exact_block(const struct tc__gen *g)
{
	const struct tc__vmatrix *mx = g->vmx;
	const int p = g->p;
	if (!mx || p == 1)
		return 0;
	if (tc_topo_props(g->t)->diameter > 1 || g->md->ports != TC_PORTS_ONE ||
	    g->md->duplex != TC_DUPLEX_FULL)
		return -1;
	/* Every non-empty block between two different ranks the same size m,
	 * and every round k = 1 .. p-1 with one at least. */
	uint64_t m = 0;
	int empty_rounds = 0;
	for (int k = 1; k < p; k++) {
		int any = 0;
		for (int i = 0; i < p; i++) {
			int j = (i + k) % p;
			uint64_t so, ro, b = tc__vm_block(mx, i, j, &so, &ro);
			if (!b)
				continue;
			if (m && b != m)
				return -1;
			m = b;
			any = 1;
		}
		empty_rounds += !any;
	}
	if (m && empty_rounds)
		return -1;
	/* Cut-through: the root of a gatherv (scatterv) streams its p-1 blocks
	 * through its one port, t_h paid once: (p-1)(t_s + m t_w) + t_h. */
	if (m && (g->coll == TC_COLL_GATHERV || g->coll == TC_COLL_SCATTERV) &&
	    g->md->switching == TC_SWITCH_CT)
		return -1;
	return (int64_t)m;
}

double tc__f_vcount_pairwise(const struct tc__gen *g)
{
	int64_t m = tc__vcount_exact_block(g);
	if (m <= 0)
		return m < 0 ? NAN : 0; /* no closed form; nothing moves */
	return tc_cost_alltoall_pairwise(g->md, g->p, (double)m);
}
