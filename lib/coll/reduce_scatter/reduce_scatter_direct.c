/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/reduce_scatter/reduce_scatter_direct.c - all-to-all reduction in
 * one round of routed transfers, the dual of allgather_direct.c: rank i
 * sends block j of its IN straight to rank j (routed by the topology's
 * deterministic shortest paths off a complete graph), which combines the p
 * contributions x_0^j, ..., x_{p-1}^j into OUT in rank order.
 *
 * Sends: rank i sends to i + 1, i + 2, ..., i + p - 1 (mod p) in that
 * order (the shifted order of allgather_direct.c: one arrival per send
 * slot and receiver under the one-port model).
 * Rank order: the received data are combined at the end of the round in
 * schedule order (lib/sched/sched.h), one accumulator in OUT that grows
 * both ways: the contributions of the ranks below j are prepended
 * (COMBINE_LEFT) from j - 1 down to 0, those above appended
 * (COMBINE_RIGHT) from j + 1 up to p - 1; by associativity the result is
 * x_0 (+) x_1 (+) ... (+) x_{p-1} for any p, so the algorithm is
 * TC__ALG_ORDERED.  The schedule lists
 *   A. the transfers i -> i + k with i + k < p, by k = 1 .. p - 1 (rank j
 *      meets j - 1, j - 2, ..., 0: descending, as prepending needs);
 *   B. the wrapping ones i -> j = i + k - p, by i + j (rank j meets j + 1,
 *      j + 2, ..., p - 1: ascending), a source's k increasing with i + j;
 * so every rank's sends keep the shifted order.  The accumulator starts
 * without a copy of the input: rank 0's first receive (from 1) combines
 * with its own block IN[0] (its other operand in IN, as tc__emit_from
 * gives it: it reads IN and writes OUT); rank
 * j > 0 stores its receive from j - 1 into OUT and a local combine right
 * after it appends its own block IN[j] (it reads IN too).  Every rank
 * combines p - 1 times.
 *
 * Cost, on a complete graph (or p <= 2), full duplex:
 * tc_cost_reduce_scatter_direct(), allgather_direct.c's round
 * (tc_cost_direct_round()) plus the m (p - 1) t_c of the combines, done at
 * the end of the round.
 * NAN under half duplex and on any other topology (see allgather_direct.c).
 * Restrictions: none (any topology, any p): the only rank-ordered
 * reduce_scatter, so the one for non-commutative operators everywhere.
 * Off the complete graph the routes of the one round share links, which
 * the simulator reports (contention) but does not charge: the modelled time
 * is optimistic there (allgather's and alltoall's `direct` are therefore
 * kept to the topologies the sources' algorithms do not reach).
 * Memory: none besides the buffers (the executor stages the receives of
 * the round: up to (p - 1) m bytes per rank).
 * Checker: piece i p + j is rank i's contribution to rank j.
 *
 * Trace, p = 3 (x_j^i: rank i's block for j; o_j: OUT of rank j):
 *   A. 0 -> 1 x_1^0 (o_1 = x_1^0; local: o_1 = o_1 + x_1^1)
 *      1 -> 2 x_2^1 (o_2 = x_2^1; local: o_2 = o_2 + x_2^2)
 *      0 -> 2 x_2^0 (o_2 = x_2^0 + o_2)
 *   B. 1 -> 0 x_0^1 (o_0 = x_0^0 + x_0^1, reading IN)
 *      2 -> 0 x_0^2 (o_0 = o_0 + x_0^2)
 *      2 -> 1 x_1^2 (o_1 = o_1 + x_1^2)
 */
#include "coll/gen.h"

/* Transfer i -> j of block j (piece i p + j) into j's OUT. */
static int tc__rs_direct_xfer(struct tc__sched *s, int p, uint64_t m, int i, int j, int op, int abuf)
{
	struct tc__xfer x = {.src = i,
	                     .dst = j,
	                     .sbuf = TC__BUF_IN,
	                     .rbuf = TC__BUF_OUT,
	                     .op = (uint8_t)op,
	                     .abuf = (uint8_t)(abuf == TC__BUF_OUT ? 0 : abuf + 1),
	                     .info_lo = i * p + j,
	                     .info_n = 1,
	                     .soff = (uint64_t)j * m,
	                     .bytes = m};
	return tc__sched_add(s, &x);
}

int tc__gen_reduce_scatter_direct(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p;
	const uint64_t m = g->bytes;
	int err = tc__sched_round(s);
	if (p == 1)
		return err ? err : tc__emit(s, 0, 0, TC__BUF_IN, 0, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	if (!err)
		err = tc__pieces_p2(g, "direct");
	for (int v = 0; v < p && !err; v++)
		err = tc__sched_initial(s, v, v * p, p);
	/* A: i -> i + k without wrapping; rank j meets j - 1 first. */
	for (int k = 1; k < p && !err; k++)
		for (int i = 0; i + k < p && !err; i++) {
			const int j = i + k;
			if (k == 1) {
				err = tc__rs_direct_xfer(s, p, m, i, j, TC__XOP_COPY, TC__BUF_OUT);
				if (!err) /* o_j = x_j^{j-1} (+) x_j^j */
					err = tc__emit(s, j, j, TC__BUF_IN, (uint64_t)j * m,
					               TC__BUF_OUT, 0, m, TC__XOP_COMBINE_RIGHT);
			} else {
				err = tc__rs_direct_xfer(s, p, m, i, j, TC__XOP_COMBINE_LEFT, TC__BUF_OUT);
			}
		}
	/* B: i -> j = i + k - p, by i + j; rank j meets j + 1 first. */
	for (int sum = 1; sum <= 2 * p - 3 && !err; sum++)
		for (int j = 0; 2 * j < sum && !err; j++) {
			const int i = sum - j;
			if (i >= p)
				continue;
			/* rank 0's first: o_0 = x_0^0 (read from IN) (+) x_0^1 */
			err = tc__rs_direct_xfer(s, p, m, i, j, TC__XOP_COMBINE_RIGHT,
			                         j == 0 && i == 1 ? TC__BUF_IN : TC__BUF_OUT);
		}
	return err;
}

double tc__f_reduce_scatter_direct(const struct tc__gen *g)
{
	/* Where the direct round's closed form holds (tc__direct_round_ns()). */
	if (g->p > 1 && (tc_topo_props(g->t)->diameter > 1 || g->md->duplex != TC_DUPLEX_FULL))
		return NAN;
	return tc_cost_reduce_scatter_direct(g->md, g->p, (double)g->bytes);
}
