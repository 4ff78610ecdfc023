/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/plan.h - a rank's plan: the layout that lib/sched/plan.c builds
 * from a schedule and lib/sched/exec.c runs (their contract is in
 * lib/sched/exec.h).
 *
 * A schedule is first compiled, once per rank, into that rank's plan: per
 * round two kinds of items,
 *   in-items   receives it posts at once: its own receives (into the
 *              destination region, or a staging area when the transfer
 *              combines or the region is touched by one of its own sends or
 *              local transfers this round; a combining receive of a
 *              single-copy message is instead "direct", combined out of the
 *              sender's buffer on arrival, when no other transfer of the
 *              round touches its regions) and the receiving half of every
 *              hop it forwards for a routed transfer;
 *   out-items  sends, in schedule order: its own (ready at once) and the
 *              sending half of every forwarded hop (ready when the matching
 *              in-item has arrived);
 * and the list of transfers whose data it applies at the end of the round
 * (received ones that were staged, and its local ones), in schedule order.
 * Running a plan then costs only the rank's own items, whatever p is.  A
 * round of one-packet messages with at most one send and one receive per
 * link runs eagerly: straight into and out of the rings, with no request
 * unless a ring is full or a message is late (tc__round_eager).  A rank's
 * plan made only of such rounds with at most one send and one receive each
 * ("tiny": e.g. a dissemination barrier, or a hypercube allreduce of a few
 * bytes, on a complete graph or a hypercube) runs without the round
 * machinery (tc__run_tiny): the same clock rules, statistics and fallbacks,
 * at a fraction of the instructions, which is most of such a call's time.
 */
#ifndef TC_SCHED_PLAN_H
#define TC_SCHED_PLAN_H

#include "p2p/p2p.h"
#include "sched/exec.h"

enum { TC__IT_SEND = 0, TC__IT_FWD_IN, TC__IT_FWD_OUT, TC__IT_RECV };
enum { TC__BUF_STAGE = 3 };
/* Cut-through packets of one transfer, at most (plan items and requests are
 * per packet; packet numbers are int). */
enum { TC__MAX_PACKETS = 4096 };

struct tc__pitem {
	int kind;
	int xi;        /* transfer index in the schedule */
	int nbr;       /* neighbour index of the link */
	int link;      /* forwarded out-item: its in-item (index in the plan) */
	int chunk;     /* packet number */
	int hop, hops; /* position on the route (forwards), route length */
	int charge;    /* the route's charge in links (lib/topo/charge.h):
	                  hops, or the parent's on a sub-team's general subset */
	int at;        /* forwards: the charge of the route's links before hop */
	int buf;       /* TC__BUF_IN / OUT / TMP, or TC__BUF_STAGE */
	int staged;    /* receive landing in staging */
	int direct;    /* receive combined out of the sender's buffer */
	uint64_t boff; /* offset of the packet in buf */
	uint64_t len;  /* bytes of the packet */
};

/* A transfer whose data this rank applies at the end of its round. */
struct tc__papply {
	int xi;
	int item; /* its staged receive's first packet, or -1 for a local one */
};

struct tc__plan {
	int nrounds;
	int *it_at; /* items of round r: it[it_at[r] .. it_at[r+1]) */
	struct tc__pitem *it;
	int *ap_at;
	struct tc__papply *ap;
	unsigned char *simple; /* per round: only own one-packet messages, at
	                          most one send and one receive per link */
	int tiny;              /* every round simple with at most one send and
	                          one receive (tc__run_tiny) */
	int nitems, max_round_items;
	uint64_t stage_max; /* staging bytes of the largest round */
	size_t chunk;
};

/* Whether a round's n items qualify for the eager path of tc__plan_exec():
 * only own sends and receives, each one packet below the single-copy size,
 * at most one send and one receive per link (so that taking messages as
 * they come keeps every link's order). */
static inline unsigned char tc__round_simple(const struct tc_team *team, const struct tc__pitem *it, int n)
{
	if (n > 8)
		return 0;
	for (int i = 0; i < n; i++) {
		const struct tc__pitem *x = &it[i];
		if ((x->kind != TC__IT_SEND && x->kind != TC__IT_RECV) || x->direct ||
		    x->len > team->packet_bytes || x->len >= tc__coll_single_copy_min(team))
			return 0;
		for (int j = 0; j < i; j++)
			if (it[j].kind == x->kind && it[j].nbr == x->nbr)
				return 0;
	}
	return 1;
}

#endif /* TC_SCHED_PLAN_H */
