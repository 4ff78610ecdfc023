/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shift/shift_walk.h - bookkeeping shared by the step-by-step
 * shifts (shift_ring.c, shift_torus.c): every rank holds at most one block
 * at a time; a step moves some blocks one link; a rank's k-th receive of n
 * lands in OUT when n - k is odd and in TC__BUF_TMP otherwise, so that the
 * last one lands in OUT and a rank never receives into the buffer it sends
 * from in the same round (double buffering; IN is only ever read).
 * Pure bookkeeping over arrays of p entries; not installed.
 */
#ifndef TC_COLL_SHIFT_WALK_H
#define TC_COLL_SHIFT_WALK_H

#include <stdlib.h>

#include "coll/gen.h"

struct tc__shift_walk {
	int p;
	uint64_t m;
	int *left;           /* receives still to come, per rank */
	int *org, *norg;     /* origin of the block a rank holds (before, after the round) */
	uint8_t *buf, *nbuf; /* the buffer holding it */
};

/* left[v] receives to come for every rank v (the caller fills w->left after
 * this returns 0).  Every rank starts with its own block in IN. */
static inline int tc__shift_walk_init(struct tc__shift_walk *w, int p, uint64_t m)
{
	w->p = p;
	w->m = m;
	w->left = calloc((size_t)p, sizeof *w->left);
	w->org = malloc((size_t)p * sizeof *w->org);
	w->norg = malloc((size_t)p * sizeof *w->norg);
	w->buf = malloc((size_t)p);
	w->nbuf = malloc((size_t)p);
	if (!w->left || !w->org || !w->norg || !w->buf || !w->nbuf)
		return TC_ENOMEM;
	for (int v = 0; v < p; v++) {
		w->org[v] = v;
		w->buf[v] = TC__BUF_IN;
	}
	return 0;
}

static inline void tc__shift_walk_free(struct tc__shift_walk *w)
{
	free(w->left);
	free(w->org);
	free(w->norg);
	free(w->buf);
	free(w->nbuf);
}

/* Declares the initial pieces and sets s->tmp_bytes from w->left. */
static inline int tc__shift_walk_start(struct tc__shift_walk *w, struct tc__sched *s)
{
	int err = tc__sched_round(s);
	for (int v = 0; v < w->p && !err; v++) {
		err = tc__sched_initial(s, v, v, 1);
		if (w->left[v] >= 2)
			s->tmp_bytes = w->m;
	}
	return err;
}

/* Opens the next round (the first one is opened by tc__shift_walk_start). */
static inline int tc__shift_walk_round(struct tc__shift_walk *w, struct tc__sched *s, int first)
{
	for (int v = 0; v < w->p; v++) {
		w->norg[v] = w->org[v];
		w->nbuf[v] = w->buf[v];
	}
	return first ? 0 : tc__sched_round(s);
}

/* The block held by src moves to its neighbour dst in the current round. */
static inline int tc__shift_walk_move(struct tc__shift_walk *w, struct tc__sched *s, int src, int dst)
{
	int rbuf = (w->left[dst] & 1) ? TC__BUF_OUT : TC__BUF_TMP;
	struct tc__xfer x = {.src = src,
	                     .dst = dst,
	                     .sbuf = w->buf[src],
	                     .rbuf = (uint8_t)rbuf,
	                     .op = TC__XOP_COPY,
	                     .info_lo = w->org[src],
	                     .info_n = 1,
	                     .bytes = w->m};
	w->left[dst]--;
	w->norg[dst] = w->org[src];
	w->nbuf[dst] = (uint8_t)rbuf;
	return tc__sched_add(s, &x);
}

/* Closes the round: the moves take effect. */
static inline void tc__shift_walk_end(struct tc__shift_walk *w)
{
	int *o = w->org;
	uint8_t *b = w->buf;
	w->org = w->norg;
	w->norg = o;
	w->buf = w->nbuf;
	w->nbuf = b;
}

/* q = 0 (or p = 1): every rank copies IN to OUT locally, in one round. */
static inline int tc__shift_local(const struct tc__gen *g, struct tc__sched *s)
{
	int err = tc__sched_round(s);
	for (int v = 0; v < g->p && !err; v++)
		err = tc__sched_initial(s, v, v, 1);
	for (int v = 0; v < g->p && !err; v++)
		err = tc__emit(s, v, v, TC__BUF_IN, 0, TC__BUF_OUT, 0, g->bytes, TC__XOP_COPY);
	return err;
}

#endif /* TC_COLL_SHIFT_WALK_H */
