/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/bcast/bcast_ring_pipelined.c - one-to-all broadcast along a ring,
 * the message cut into r packets that follow each other ([Goubault-ring],
 * "diffusion pipelinée", slides 22-25).
 *
 * The ring is the one of bcast_ring.c (ranks in order on ring and complete
 * topologies, the Gray-code ring tc_gray(i) on a hypercube), positions
 * counted from the root's.  Packet j (j = 0 .. r-1) leaves the root in round
 * j and moves one position per round: in round k the node at position i
 * (0 <= i <= p-2) sends packet k-i to position i+1 when 0 <= k-i < r.  Every
 * node sends at most one and receives at most one packet per round, as in
 * the source's loop "send(adr[i]); receive(adr[i+1])".  p-2+r rounds (p >= 2).
 *
 * r: g->packets, or 0 for tc_cost_ring_r_opt() ([Goubault-ring]'s optimal
 * packet count, rounded to the cheaper neighbouring integer), clamped to
 * [1, number of elements] (1 for m = 0).  Packets are whole elements split as
 * evenly as possible by tc__block(): the first (n mod r) packets carry one
 * element more than the others.
 *
 * Cost ([Goubault-ring]): tc_cost_bcast_ring_pipelined()
 * (include/topocoll/cost.h), p-2+r steps of one packet of m/r bytes.  The
 * logical clock gives exactly
 *     (p-2)(t_s + b_0 t_w) + r t_s + m t_w     (store-and-forward),
 * b_0 = ceil(n/r) elements the largest packet: packet 0 crosses p-2 links,
 * then the last sender passes all r packets on.  This is the source's formula
 * when r divides the element count n; otherwise the schedule costs up to
 * (p-2) t_w (one element) more than the closed form, whose m/r is real.
 * Under cut-through a neighbour message costs t_s + b t_w + t_h but occupies
 * its sender for t_s + b t_w only, so the t_h of the packets overlap and the
 * schedule costs (p-2)(t_s + b_0 t_w) + r t_s + m t_w + (p-1) t_h, while the
 * closed form charges (p-2+r) t_h: the two agree when t_h = 0 or r = 1.
 * Reduce (the dual, packets flowing to the root and combined on the way):
 * tc_cost_reduce_ring_pipelined() with the same r, a combine added to each
 * packet step, exact when r divides n and p >= 3, one port, store-and-forward;
 * for p = 2 the only sender never combines: r (t_s + (m/r) t_w) + (m/r)
 * t_c.  The dual is generated from this broadcast generator (registry.c
 * hides the collective), so r_opt is the broadcast's, not
 * tc_cost_ring_r_opt_reduce(); tc__f_reduce_ring_pipelined uses the same r.
 * Checker: packet j is piece j; the root starts with pieces [0, r).
 * Restrictions: ring, complete and hypercube topologies, as bcast_ring.
 * Memory: none besides the buffer.
 * Trace, ring p = 5, root 0, r = 3 (pkt j written j): round 0: 0->1 #0;
 * round 1: 0->1 #1, 1->2 #0; round 2: 0->1 #2, 1->2 #1, 2->3 #0; round 3:
 * 1->2 #2, 2->3 #1, 3->4 #0; round 4: 2->3 #2, 3->4 #1; round 5: 3->4 #2.
 */
#include <limits.h>

#include "coll/gen.h"

/* Node at ring position i; -1 when the topology has no such ring. */
/* The packet count r of this call (see the head of the file). */
static long tc__pring_r(const struct tc__gen *g)
{
	uint64_t n = g->esize ? g->bytes / g->esize : 0;
	long r = g->packets > 0 ? g->packets : tc_cost_ring_r_opt(g->md, g->p, (double)g->bytes);
	if ((uint64_t)r > n)
		r = (long)n;
	return r < 1 ? 1 : r;
}

int tc__gen_bcast_ring_pipelined(const struct tc__gen *g, struct tc__sched *s)
{
	if (!tc__ring_embeds(g->t))
		return TC_ENOTSUP;
	int p = g->p;
	long r = tc__pring_r(g);
	if (r > INT32_MAX || r > (long)INT_MAX - p)
		return TC_EOVERFLOW;
	int r0 = tc__ring_pos(g->t, g->root);
	int err = tc__sched_initial(s, g->root, 0, (int32_t)r);
	long nrounds = p >= 2 ? p - 2 + r : 0;
	for (long rd = 0; rd < nrounds && !err; rd++) {
		err = tc__sched_round(s);
		long ilo = rd - (r - 1) > 0 ? rd - (r - 1) : 0;
		long ihi = rd < p - 2 ? rd : p - 2;
		for (long i = ilo; i <= ihi && !err; i++) {
			long j = rd - i; /* the packet position i passes on */
			uint64_t off, len;
			tc__block(g->bytes, g->esize, (int)r, (int)j, &off, &len);
			struct tc__xfer x = {.src = tc__ring_node(g->t, (int)((r0 + i) % p)),
			                     .dst = tc__ring_node(g->t, (int)((r0 + i + 1) % p)),
			                     .sbuf = TC__BUF_OUT,
			                     .rbuf = TC__BUF_OUT,
			                     .op = TC__XOP_COPY,
			                     .info_lo = (int32_t)j,
			                     .info_n = 1,
			                     .soff = off,
			                     .roff = off,
			                     .bytes = len};
			err = tc__sched_add(s, &x);
		}
	}
	return err;
}

double tc__f_bcast_ring_pipelined(const struct tc__gen *g)
{
	return tc_cost_bcast_ring_pipelined(g->md, g->p, (double)g->bytes, tc__pring_r(g));
}

double tc__f_reduce_ring_pipelined(const struct tc__gen *g)
{
	return tc_cost_reduce_ring_pipelined(g->md, g->p, (double)g->bytes, tc__pring_r(g));
}
