/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/scan/scan_ring.c - prefix sums (scan and exscan) pipelined along
 * the chain 0, 1, ..., p-1 (the ring/chain pipeline of the sources' ATO
 * reduction on a ring, stopped at every node; [Barnat-IB109] gives no formula for
 * it).
 *
 * One file for both collectives: exscan differs only in what a rank keeps
 * (the received prefix) and what it forwards (that prefix combined with its
 * own contribution, kept apart in TMP), so the two generators share the
 * loop and register separately (tc__gen_scan_ring, tc__gen_exscan_ring).
 *
 * Round i-1 (i = 1 .. p-1): rank i-1 sends the prefix of ranks 0..i-1 to
 * rank i.  scan: rank i combines on receipt result = received (+) own (the
 * received prefix is the left operand: rank order, TC__ALG_ORDERED) into
 * OUT, which it forwards in the next round; rank 0 sends its IN and copies
 * it to OUT (free).  exscan: rank i copies the received prefix into OUT (its
 * result) and, unless it is the last, combines OUT (+) IN into TMP (a local
 * transfer after the receive), which it forwards; rank 0 sends its IN and
 * writes nothing (its OUT is scratch).  IN is never written
 * (TC__ALG_READS_IN).
 *
 * Rank order is the chain, not the topology's ring embedding: on a ring,
 * chain or complete graph consecutive ranks are neighbours.  Elsewhere the
 * transfers i-1 -> i are routed (the executor forwards them), so the
 * algorithm applies to every topology (TC__R_ANY): it is the only ordered
 * scan for p not a power of two off rings (e.g. a 2x3 mesh, where only the
 * row ends are two hops apart).  The rounds are strictly sequential (rank
 * i sends only once it has received), so no two transfers share a link at
 * the same time.
 *
 * Cost: tc_cost_scan_ring(), tc_cost_exscan_ring() (include/topocoll/cost.h)
 * when every i-1, i are neighbours: p - 1 rounds of one neighbour message and
 * one combine, one combine fewer for exscan (rank p-1 only copies), exact under
 * either duplex and port model (a rank receives in one round and sends in the
 * next).  With routed transfers the messages cost T(m, l_i) of their route
 * lengths l_i instead of one message time (clock.h): the formula is NAN then
 * (the test checks the sum of T(m, l_i)).
 * Restrictions: none (any topology, any p >= 1, m = 0 included).
 * Memory: exscan m bytes of TMP when p >= 3; scan none.
 *
 * Trace, p = 3 (scan; [a..b] the reduction of ranks a..b):
 *   round 0: 0 -> 1 [0]      1: OUT = [0] (+) a1 = [0..1]     0: OUT = a0
 *   round 1: 1 -> 2 [0..1]   2: OUT = [0..1] (+) a2 = [0..2]
 * exscan: round 0: 1: OUT = [0], TMP = [0] (+) a1; round 1: 1 -> 2 TMP,
 * 2: OUT = [0..1].
 */
#include "coll/gen.h"

static int tc__scan_ring(const struct tc__gen *g, struct tc__sched *s, int ex)
{
	const int p = g->p;
	const uint64_t m = g->bytes;
	int err = tc__sched_round(s);
	if (!ex && !err) /* rank 0's result is its own contribution */
		err = tc__emit(s, 0, 0, TC__BUF_IN, 0, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	if (p == 1)
		return err;
	if (ex && p >= 3)
		s->tmp_bytes = m;
	for (int v = 0; v < p && !err; v++)
		err = tc__sched_initial(s, v, v, 1);
	for (int i = 1; i < p && !err; i++) {
		if (i > 1)
			err = tc__sched_round(s);
		/* What rank i-1 forwards: its IN (rank 0), else its prefix
		 * including itself (OUT for scan, TMP for exscan). */
		const int sb = i == 1 ? TC__BUF_IN : ex ? TC__BUF_TMP : TC__BUF_OUT;
		struct tc__xfer x = {.src = i - 1,
		                     .dst = i,
		                     .sbuf = (uint8_t)sb,
		                     .rbuf = TC__BUF_OUT,
		                     .op = ex ? TC__XOP_COPY : TC__XOP_COMBINE_LEFT,
		                     .abuf = ex ? 0 : 1 + TC__BUF_IN,
		                     .info_lo = 0,
		                     .info_n = i,
		                     .soff = 0,
		                     .roff = 0,
		                     .bytes = m};
		if (!err)
			err = tc__sched_add(s, &x);
		if (ex && i < p - 1 && !err)
			err = tc__emit_from(s, i, i, TC__BUF_OUT, 0, TC__BUF_TMP, 0, m,
			                    TC__XOP_COMBINE_LEFT, TC__BUF_IN);
	}
	return err;
}

int tc__gen_scan_ring(const struct tc__gen *g, struct tc__sched *s)
{
	return tc__scan_ring(g, s, 0);
}

int tc__gen_exscan_ring(const struct tc__gen *g, struct tc__sched *s)
{
	return tc__scan_ring(g, s, 1);
}

/* Whether every transfer i-1 -> i joins neighbours. */
static int tc__chain_adjacent(const struct tc_topo *t, int p)
{
	for (int i = 1; i < p; i++)
		if (tc_topo_distance(t, i - 1, i) != 1)
			return 0;
	return 1;
}

double tc__f_scan_ring(const struct tc__gen *g)
{
	if (!tc__chain_adjacent(g->t, g->p))
		return NAN;
	return tc_cost_scan_ring(g->md, g->p, (double)g->bytes);
}

double tc__f_exscan_ring(const struct tc__gen *g)
{
	if (!tc__chain_adjacent(g->t, g->p))
		return NAN;
	return tc_cost_exscan_ring(g->md, g->p, (double)g->bytes);
}
