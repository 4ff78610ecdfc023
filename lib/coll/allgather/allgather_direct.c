/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allgather/allgather_direct.c - all-to-all broadcast in one round
 * of routed transfers ([Barnat-IB109]'s all-to-all broadcast on a completely
 * connected network: every node sends its message straight to every other
 * node; on any other topology the transfers follow the topology's
 * deterministic shortest routes, lib/topo/topo_route.c).
 *
 * Rank i sends its block to i + 1, i + 2, ..., i + p - 1 (mod p), in that
 * order, all in one round; the own block IN -> OUT is a local transfer.
 * Under the one-port model a rank's sends leave one after the other (its
 * send port serialises them, lib/model/clock.h) and, thanks to the shifted
 * order, the k-th sends of all ranks go to distinct ranks: rank j receives
 * from j - k in the k-th slot, so no receive waits for the port.  One round
 * is also one level of waits, which AUTO prices on an oversubscribed team
 * (lib/coll/select.c): the ring's p - 1 dependent steps become one.
 *
 * Cost, on a complete graph (or p <= 2), full duplex: tc_cost_direct_round()
 * (include/topocoll/cost.h), from these two cases:
 *   one port:  the k-th send starts at (k - 1) L, L = t_s + m t_w, and
 *              arrives L + t_h later (t_h under cut-through only): p - 1
 *              sends back to back and one t_h, the source's formula with
 *              one t_h;
 *   all ports: one message time, every link busy once.
 * NAN under half duplex (a rank's sends and receives share the port or the
 * link, and the time depends on t_h against (p - 1) L) and on any other
 * topology (routes of different lengths, links shared by several routes:
 * the simulator diagnoses that contention but does not charge it).
 * Restrictions: complete graph, star, tree (tc_alg_applies; the generator
 * itself takes any topology).  Elsewhere the routes of the one round share
 * links, which the simulator reports (contention) but does not charge, so
 * its modelled time would be optimistic and AUTO would prefer it to the
 * sources' algorithms on false grounds; on star and tree no catalogue
 * algorithm applies, and on a complete graph every route is its own link.
 * Memory: none besides the buffers.
 * Checker: piece v is rank v's block (NODUP and NOHO are verified).
 *
 * Trace, p = 3 (b_i: rank i's block), the one round in schedule order:
 *   local  0: b0, 1: b1, 2: b2 (IN -> OUT)
 *   k = 1  0 -> 1 b0,  1 -> 2 b1,  2 -> 0 b2
 *   k = 2  0 -> 2 b0,  1 -> 0 b1,  2 -> 1 b2
 */
#include "allgather_lines.h"

int tc__gen_allgather_direct(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p;
	const uint64_t m = g->bytes;
	int err = tc__sched_round(s);
	if (!err)
		err = tc__allgather_own(g, s);
	for (int k = 1; k < p && !err; k++)
		for (int i = 0; i < p && !err; i++) {
			struct tc__xfer x = {.src = i,
			                     .dst = (i + k) % p,
			                     .sbuf = TC__BUF_IN,
			                     .rbuf = TC__BUF_OUT,
			                     .op = TC__XOP_COPY,
			                     .info_lo = i,
			                     .info_n = 1,
			                     .roff = (uint64_t)i * m,
			                     .bytes = m};
			err = tc__sched_add(s, &x);
		}
	return err;
}

double tc__f_allgather_direct(const struct tc__gen *g)
{
	return tc__direct_round_ns(g);
}
