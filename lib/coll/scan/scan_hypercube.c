/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/scan/scan_hypercube.c - prefix sums (scan and exscan) on a
 * hypercube with origin tracking ([Barnat-IB109], "Prefixový součet": the
 * all-to-all broadcast of the hypercube in which every message is combined
 * and a node keeps apart what comes from lower ids).
 *
 * One file for both collectives: exscan is the same exchange, only the
 * result starts empty (the first value received into it is a copy), so the
 * two generators share everything but one flag and register separately
 * (tc__gen_scan_hypercube, tc__gen_exscan_hypercube).
 *
 * p = 2^d.  Every rank v keeps `result` (its prefix, in OUT) and `msg` (the
 * reduction of its current subcube, the aligned block of 2^k ranks holding
 * v, in TMP).  In step k = 0 .. d-1 it exchanges msg with u = v XOR 2^k;
 * both combine msg = lower (+) higher; the rank whose partner is lower (bit
 * k of v set) also does result = received (+) result.  The received block
 * [v's block minus 2^k, v's block) lies wholly below everything result
 * holds, so result is always the reduction of a contiguous range of ranks
 * ending at v (scan) or at v - 1 (exscan), combined in rank order: the
 * algorithm is TC__ALG_ORDERED.
 *
 * IR: a received msg goes to TMP[m, 2m) (a copy); local transfers (src ==
 * dst) at the end of the round then combine it into msg (TMP[0, m)) and
 * into result (OUT), in schedule order, after the receive.  In step 0 msg is
 * the rank's own contribution in IN: the combine names IN as the other
 * operand (tc__emit_from) and writes TMP, so IN is never written
 * (TC__ALG_READS_IN; the framework then copies nothing).  scan: result is
 * IN until v first receives from below (step = lowest set bit of v), whose
 * combine reads IN and writes OUT; rank 0 never receives from below and
 * copies IN to OUT (free).  exscan: the first value from below is copied
 * into OUT, later ones combined; rank 0 writes nothing (its OUT is scratch).
 *
 * Cost: tc_cost_scan_hypercube(), tc_cost_exscan_hypercube()
 * (include/topocoll/cost.h), full duplex, one-port or all-port: d steps of
 * one exchange, two combines per step on the slowest rank, one fewer in all
 * for exscan.
 * The simulator charges m t_c per combining transfer into a rank, local
 * ones included, and nothing for copies.  Rank p - 1 has bit k set in every
 * step, so it combines twice per step (msg and result) and, starting each
 * step no earlier than its partner (which, by the same argument on the low
 * bits, has the same clock), finishes exactly at the formula; every other
 * rank combines at most as often.  exscan saves one combine: p - 1's first
 * result is a copy.  The msg combine of the last step is kept although its
 * value is not used afterwards, as the source does (it is what the formula
 * counts).  Half duplex makes the two directions of an exchange share a
 * port: the formula is NAN then, and a step lasts max(2 L, L + t_h) with
 * L = t_s + m t_w (the receive waits for the port the own send holds), so
 * the schedule's time is d max(2 L, L + t_h) + (2d or 2d - 1) m t_c
 * (asserted by tests/test_coll_scan.c).
 * Restrictions: p a power of two (TC__R_POW2), hypercube or complete graph
 * (every partner a neighbour); TC_ENOTSUP elsewhere.  m = 0 gives the same
 * transfers with 0 bytes.
 * Memory: 2 m bytes of TMP (msg, and the received msg).
 *
 * Trace, p = 4 (scan; [a..b] the reduction of ranks a..b, in rank order):
 *   step 0: 0 <-> 1, 2 <-> 3   msg: 0,1: [0..1]  2,3: [2..3]
 *                              result: 0: [0] 1: [0..1] 2: [2] 3: [2..3]
 *   step 1: 0 <-> 2, 1 <-> 3   msg: all [0..3]
 *                              result: 2: [0..1] (+) [2] = [0..2], 3: [0..3]
 * exscan, same exchange: step 0 results 1: [0] (copy); step 1 2: [0..1]
 * (copy), 3: [0..1] (+) [2] = [0..2].
 */
#include "coll/gen.h"

/* Appends a transfer carrying pieces [lo, lo + n) (checker). */
static int tc__scan_hc_send(struct tc__sched *s, int src, int dst, int sbuf, uint64_t m, int lo, int n)
{
	struct tc__xfer x = {.src = src,
	                     .dst = dst,
	                     .sbuf = (uint8_t)sbuf,
	                     .rbuf = TC__BUF_TMP,
	                     .op = TC__XOP_COPY,
	                     .info_lo = lo,
	                     .info_n = n,
	                     .soff = 0,
	                     .roff = m,
	                     .bytes = m};
	return tc__sched_add(s, &x);
}

static int tc__scan_hc(const struct tc__gen *g, struct tc__sched *s, int ex)
{
	const int p = g->p, d = tc__log2_exact(p);
	const enum tc_topo_kind kind = tc_topo_kind(g->t);
	const uint64_t m = g->bytes;
	if (d < 0 || (kind != TC_TOPO_HYPERCUBE && kind != TC_TOPO_COMPLETE))
		return TC_ENOTSUP;
	int err = tc__sched_round(s);
	if (!ex && !err) /* rank 0's result is its own contribution */
		err = tc__emit(s, 0, 0, TC__BUF_IN, 0, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	if (p == 1)
		return err;
	s->tmp_bytes = 2 * m;
	for (int v = 0; v < p && !err; v++)
		err = tc__sched_initial(s, v, v, 1);
	for (int k = 0; k < d && !err; k++) {
		const int bit = 1 << k;
		if (k)
			err = tc__sched_round(s);
		/* msg: the own contribution (IN) in step 0, then TMP[0, m). */
		const int mb = k ? TC__BUF_TMP : TC__BUF_IN;
		for (int v = 0; v < p && !err; v++)
			err = tc__scan_hc_send(s, v, v ^ bit, mb, m, v & ~(bit - 1), bit);
		for (int v = 0; v < p && !err; v++) {
			const int below = (v & bit) != 0; /* the partner is the lower */
			/* msg = lower (+) higher: the received one is the left
			 * operand when it comes from below. */
			err = tc__emit_from(s, v, v, TC__BUF_TMP, m, TC__BUF_TMP, 0, m,
			                    below ? TC__XOP_COMBINE_LEFT : TC__XOP_COMBINE_RIGHT, mb);
			if (!below || err)
				continue;
			/* result = received (+) result; the first time (k the
			 * lowest set bit of v) result is IN (scan) or empty. */
			const int first = (v & (bit - 1)) == 0;
			if (ex && first)
				err = tc__emit(s, v, v, TC__BUF_TMP, m, TC__BUF_OUT, 0, m, TC__XOP_COPY);
			else
				err = tc__emit_from(s, v, v, TC__BUF_TMP, m, TC__BUF_OUT, 0, m,
				                    TC__XOP_COMBINE_LEFT,
				                    first ? TC__BUF_IN : TC__BUF_OUT);
		}
	}
	return err;
}

int tc__gen_scan_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	return tc__scan_hc(g, s, 0);
}

int tc__gen_exscan_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	return tc__scan_hc(g, s, 1);
}

double tc__f_scan_hypercube(const struct tc__gen *g)
{
	if (g->p > 1 && g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_scan_hypercube(g->md, g->p, (double)g->bytes);
}

double tc__f_exscan_hypercube(const struct tc__gen *g)
{
	if (g->p > 1 && g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_exscan_hypercube(g->md, g->p, (double)g->bytes);
}
