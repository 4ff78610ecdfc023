/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/dual.c - the dual of a schedule (collectives.def's dual_of):
 * gather from scatter (copying), reduce from bcast (combining).
 *
 * The dual runs the rounds backwards and every transfer the other way.  A
 * copying dual swaps the roles of IN and OUT; a combining one keeps the
 * bcast's buffer, OUT, where each rank accumulates: the receiver's data is
 * the left operand when it is the lower rank.
 *
 * A combining dual then reads each rank's contribution in OUT, which the
 * framework would have to fill with a copy of IN on every rank before the
 * first transfer (a pass over m bytes on the critical path: at p = 2 a
 * reduce of 32 KiB took twice an allreduce's time).  tc__dual_reads_in()
 * removes the need: on each rank, a send of an OUT region nothing was
 * combined into yet sends IN's, and the first combine into a region takes
 * IN as its other operand (abuf), so that OUT is written once, by that
 * combine.  Trace, binomial reduce at p = 2, root 0, m bytes:
 *
 *   bcast      round 0: 0 -> 1  OUT[0, m) -> OUT[0, m)  copy
 *   dual       round 0: 1 -> 0  OUT[0, m) -> OUT[0, m)  combine right
 *   reads IN   round 0: 1 -> 0  IN[0, m)  -> OUT[0, m)  combine right,
 *                                             other operand IN at 0
 *
 * It applies when every transfer moves OUT to OUT between two ranks, the
 * root sends nothing (what makes the in-place case below safe), a
 * region is untouched or whole when a transfer reads or combines into it
 * (the first combines of a round, in schedule order, counting as done for
 * the later ones: combines of a rank's round that share a region are
 * staged and applied at the round's end in schedule order,
 * lib/sched/exec.c), and the root's OUT is whole at the end; otherwise the
 * schedule keeps reads_in = 0 and the framework copies, as before.  In
 * place at the root (IN = OUT) needs no copy either: the root never sends,
 * and its first combine into a region reads and writes it in one pass.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"

/* The buffer of the dual that plays the role of buffer b of the original:
 * a copying dual swaps the input and the output (gather's contributions are
 * scatter's results), a combining one keeps them (reduce accumulates in OUT
 * as bcast delivers into it). */
static uint8_t tc__dual_buf(int b, int copy)
{
	if (!copy || b == TC__BUF_TMP)
		return (uint8_t)b;
	return b == TC__BUF_IN ? TC__BUF_OUT : TC__BUF_IN;
}

/* A rank's regions of OUT that hold data: sorted, disjoint, merged. */
struct tc__ivls {
	uint64_t (*v)[2];
	int n, cap;
};

enum { TC__IVL_NONE, TC__IVL_ALL, TC__IVL_PART };

/* Beyond this many separate regions on one rank the dual gives up (keeps
 * the copy): a pipelined schedule's segments merge as they come. */
#define TC__IVL_MAX 256

static int tc__ivl_state(const struct tc__ivls *a, uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < a->n; i++) {
		if (a->v[i][1] <= lo)
			continue;
		if (a->v[i][0] >= hi)
			break;
		return a->v[i][0] <= lo && a->v[i][1] >= hi ? TC__IVL_ALL : TC__IVL_PART;
	}
	return TC__IVL_NONE;
}

/* Adds [lo, hi), which holds nothing yet.  Returns false when full. */
static bool tc__ivl_add(struct tc__ivls *a, uint64_t lo, uint64_t hi)
{
	int i = 0;
	while (i < a->n && a->v[i][1] < lo)
		i++;
	if (i < a->n && a->v[i][1] == lo) { /* joins the region before */
		a->v[i][1] = hi;
		if (i + 1 < a->n && a->v[i + 1][0] == hi) { /* and the one after */
			a->v[i][1] = a->v[i + 1][1];
			memmove(&a->v[i + 1], &a->v[i + 2], (size_t)(a->n - i - 2) * sizeof *a->v);
			a->n--;
		}
		return true;
	}
	if (i < a->n && a->v[i][0] == hi) { /* joins the region after */
		a->v[i][0] = lo;
		return true;
	}
	if (a->n == a->cap) {
		if (a->cap == TC__IVL_MAX)
			return false;
		int cap = a->cap ? 2 * a->cap : 4;
		void *v = realloc(a->v, (size_t)cap * sizeof *a->v);
		if (!v)
			return false;
		a->v = v;
		a->cap = cap;
	}
	memmove(&a->v[i + 1], &a->v[i], (size_t)(a->n - i) * sizeof *a->v);
	a->v[i][0] = lo;
	a->v[i][1] = hi;
	a->n++;
	return true;
}

/* Rewrites combining dual s to read IN (see the file's header) and sets
 * s->reads_in, or leaves s as it is when a condition fails.  m: the
 * collective's bytes; root: the rank whose OUT is the result. */
static void tc__dual_reads_in(struct tc__sched *s, int root, uint64_t m)
{
	struct tc__ivls *done = calloc((size_t)s->p, sizeof *done);
	struct tc__ivls *now = calloc((size_t)s->p, sizeof *now); /* this round's */
	uint8_t *mark = calloc((size_t)s->nx ? (size_t)s->nx : 1, 1);
	bool ok = done && now && mark;
	for (int r = 0; ok && r < s->nrounds; r++) {
		for (int i = s->round_at[r]; ok && i < s->round_at[r + 1]; i++) {
			const struct tc__xfer *x = &s->x[i];
			uint64_t lo = x->roff, hi = x->roff + x->bytes;
			mark[i] = 0;
			if (!x->bytes)
				continue;
			if (x->src == x->dst || x->src == root || x->sbuf != TC__BUF_OUT ||
			    x->rbuf != TC__BUF_OUT || x->abuf || x->op == TC__XOP_COPY) {
				ok = false;
				break;
			}
			int sent = tc__ivl_state(&done[x->src], x->soff, x->soff + x->bytes);
			int into = tc__ivl_state(&done[x->dst], lo, hi);
			if (sent == TC__IVL_PART || into == TC__IVL_PART) {
				ok = false;
			} else if (into == TC__IVL_NONE) {
				/* The first combine into the region in schedule
				 * order takes IN; later ones of the round apply
				 * after it (both staged, lib/sched/exec.c) and
				 * must stay within what it wrote. */
				int st = tc__ivl_state(&now[x->dst], lo, hi);
				if (st == TC__IVL_NONE)
					ok = tc__ivl_add(&now[x->dst], lo, hi);
				else if (st == TC__IVL_PART)
					ok = false;
				else
					into = TC__IVL_ALL;
			}
			mark[i] = (uint8_t)((sent == TC__IVL_NONE) << 1 | (into == TC__IVL_NONE));
		}
		for (int i = s->round_at[r]; ok && i < s->round_at[r + 1]; i++) {
			const struct tc__xfer *x = &s->x[i];
			if (mark[i] & 1)
				ok = tc__ivl_add(&done[x->dst], x->roff, x->roff + x->bytes);
		}
		for (int i = s->round_at[r]; i < s->round_at[r + 1]; i++)
			now[s->x[i].dst].n = 0;
	}
	if (ok && m && tc__ivl_state(&done[root], 0, m) != TC__IVL_ALL)
		ok = false;
	if (ok) {
		for (int i = 0; i < s->nx; i++) {
			struct tc__xfer *x = &s->x[i];
			if (mark[i] & 2)
				x->sbuf = TC__BUF_IN;
			if (mark[i] & 1)
				x->abuf = 1 + TC__BUF_IN;
		}
		s->reads_in = 1;
	}
	for (int k = 0; done && now && k < s->p; k++) {
		free(done[k].v);
		free(now[k].v);
	}
	free(done);
	free(now);
	free(mark);
}

int tc__dual(const struct tc__sched *b, int copy, int root, uint64_t m, struct tc__sched *s)
{
	int err = tc__sched_init(s, b->p);
	if (!err && b->count_only) { /* the same transfers and rounds, counted */
		s->count_only = 1;
		s->counted = b->counted;
		s->nrounds = b->nrounds;
		return 0;
	}
	for (int r = b->nrounds - 1; r >= 0 && !err; r--) {
		err = tc__sched_round(s);
		for (int i = b->round_at[r]; i < b->round_at[r + 1] && !err; i++) {
			const struct tc__xfer *x = &b->x[i];
			struct tc__xfer y = *x;
			y.src = x->dst;
			y.dst = x->src;
			y.sbuf = tc__dual_buf(x->rbuf, copy);
			y.rbuf = tc__dual_buf(x->sbuf, copy);
			y.soff = x->roff;
			y.roff = x->soff;
			y.abuf = 0;
			y.op = copy            ? TC__XOP_COPY
			       : y.src > y.dst ? TC__XOP_COMBINE_RIGHT
			                       : TC__XOP_COMBINE_LEFT;
			y.info_n = 0;
			err = tc__sched_add(s, &y);
		}
	}
	s->tmp_bytes = b->tmp_bytes;
	if (err) {
		tc__sched_free(s);
		return err;
	}
	if (!copy)
		tc__dual_reads_in(s, root, m);
	return 0;
}
