/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/alltoall/alltoall_direct.c - all-to-all personalised
 * communication in one round of routed transfers ([Barnat-IB109]'s all-to-all
 * personalised communication on a completely connected network: every node
 * sends each other node its block directly; on any other topology the
 * transfers follow the topology's deterministic shortest routes,
 * lib/topo/topo_route.c).
 *
 * Block j of rank i's IN goes to block i of rank j's OUT; rank i sends to
 * i + 1, i + 2, ..., i + p - 1 (mod p) in that order, all in one round, and
 * copies its own block i locally.  As in allgather_direct.c, the shifted
 * order gives every rank one arrival per send slot under the one-port
 * model, and the one round is one level of waits on an oversubscribed team.
 *
 * Cost, on a complete graph (or p <= 2), full duplex: tc_cost_direct_round()
 * (include/topocoll/cost.h), from these two cases:
 *   one port:  the source's formula with one t_h (t_h under cut-through
 *              only): p - 1 sends back to back through the port, the last
 *              arriving L + t_h after it started, L = t_s + m t_w;
 *   all ports: one message time, every link busy once.
 * NAN under half duplex and on any other topology (see allgather_direct.c).
 * Difference: off a complete graph or a star the routes share links, a
 * contention the simulator reports but does not charge (forwarding costs
 * the intermediate ranks nothing), so the modelled time can fall below
 * [KKA-I]'s AAS lower bound (hypercube:5, m = 64 B, t_s = 100, t_w = 2:
 * 7980 ns modelled, bound 10740 ns); tests/test_coll_alltoall.c asserts
 * that contention is reported there.
 * Restrictions: complete graph, star, tree, chain (tc_alg_applies; the generator
 * itself takes any topology).  Elsewhere the routes of the one round share
 * links, which the simulator reports (contention) but does not charge, so
 * its modelled time would be optimistic and AUTO would prefer it to the
 * sources' algorithms on false grounds; on star and tree and chain no catalogue
 * algorithm applies, and on a complete graph every route is its own link.
 * Memory: none besides the buffers.
 * Checker: piece o p + j is origin o's block for rank j (NODUP and NOHO are
 * verified).
 *
 * Trace, p = 3 (block "ab": from a to b), the one round in schedule order:
 *   local  00, 11, 22 (IN -> OUT)
 *   k = 1  0 -> 1 01,  1 -> 2 12,  2 -> 0 20
 *   k = 2  0 -> 2 02,  1 -> 0 10,  2 -> 1 21
 */
#include "coll/gen.h"

int tc__gen_alltoall_direct(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p;
	const uint64_t m = g->bytes;
	int err = tc__sched_round(s);
	if (!err)
		err = tc__pieces_p2(g, "direct");
	for (int v = 0; v < p && !err; v++)
		err = tc__sched_initial(s, v, v * p, p);
	for (int v = 0; v < p && !err; v++)
		err = tc__emit(s, v, v, TC__BUF_IN, (uint64_t)v * m, TC__BUF_OUT, (uint64_t)v * m,
		               m, TC__XOP_COPY);
	for (int k = 1; k < p && !err; k++)
		for (int i = 0; i < p && !err; i++) {
			const int j = (i + k) % p;
			struct tc__xfer x = {.src = i,
			                     .dst = j,
			                     .sbuf = TC__BUF_IN,
			                     .rbuf = TC__BUF_OUT,
			                     .op = TC__XOP_COPY,
			                     .info_lo = i * p + j,
			                     .info_n = 1,
			                     .soff = (uint64_t)j * m,
			                     .roff = (uint64_t)i * m,
			                     .bytes = m};
			err = tc__sched_add(s, &x);
		}
	return err;
}

double tc__f_alltoall_direct(const struct tc__gen *g)
{
	return tc__direct_round_ns(g);
}
