/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/index.c - which transfers of a schedule each rank takes part
 * in (sched.h, tc__sched_index): built once per schedule by the rank that
 * built it, so that every rank compiles its plan from its own share
 * (lib/sched/exec.c, tc__plan_build) rather than from a scan of p ranks'
 * transfers.
 */
#include <limits.h>
#include <stdlib.h>

#include "sched/sched.h"
#include "topocoll/error.h"

/* Calls visit(ctx, r, i) for every rank r that takes part in transfer i:
 * the source, the destination, and for a routed transfer (not between
 * neighbours) the ranks inside its route.  path holds p ints. */
static int tc__parts(const struct tc__sched *s, const struct tc_topo *t, int i, int *path,
                     void (*visit)(void *, int, int), void *ctx)
{
	const struct tc__xfer *x = &s->x[i];
	visit(ctx, x->src, i);
	if (x->dst == x->src)
		return 0;
	visit(ctx, x->dst, i);
	if (tc_topo_neighbor_index(t, x->src, x->dst) >= 0)
		return 0;
	int hops = tc_topo_route(t, x->src, x->dst, path, s->p);
	if (hops < 0)
		return hops;
	for (int h = 1; h < hops; h++)
		visit(ctx, path[h], i);
	return 0;
}

struct tc__count {
	long *n;
};

static void tc__count_visit(void *ctx, int r, int i)
{
	(void)i;
	((struct tc__count *)ctx)->n[r]++;
}

struct tc__fill {
	int *next, *x;
};

static void tc__fill_visit(void *ctx, int r, int i)
{
	struct tc__fill *f = ctx;
	f->x[f->next[r]++] = i;
}

int tc__sched_index(const struct tc__sched *s, const struct tc_topo *t, int **atp, int **xp)
{
	const int p = s->p;
	*atp = *xp = NULL;
	long *n = calloc((size_t)p, sizeof *n);
	int *path = malloc((size_t)p * sizeof *path);
	int *at = malloc(((size_t)p + 1) * sizeof *at);
	int err = n && path && at ? 0 : TC_ENOMEM;
	struct tc__count cn = {n};
	for (int i = 0; i < s->nx && !err; i++)
		err = tc__parts(s, t, i, path, tc__count_visit, &cn);
	long total = 0;
	for (int r = 0; r < p && !err; r++) {
		at[r] = (int)total;
		total += n[r];
		if (total > INT_MAX)
			err = TC_EOVERFLOW;
	}
	int *x = NULL;
	if (!err) {
		at[p] = (int)total;
		x = malloc((total ? (size_t)total : 1) * sizeof *x);
		if (!x)
			err = TC_ENOMEM;
	}
	/* Filled in transfer order: every rank's share comes out ascending. */
	int *next = (int *)n; /* reused: p ints fit in p longs */
	for (int r = 0; r < p && !err; r++)
		next[r] = at[r];
	struct tc__fill fl = {next, x};
	for (int i = 0; i < s->nx && !err; i++)
		err = tc__parts(s, t, i, path, tc__fill_visit, &fl);
	free(n);
	free(path);
	if (err) {
		free(at);
		free(x);
		return err;
	}
	*atp = at;
	*xp = x;
	return 0;
}

struct tc__one {
	int rank, n, cap, err;
	int *x;
};

static void tc__one_visit(void *ctx, int r, int i)
{
	struct tc__one *o = ctx;
	if (r != o->rank || o->err || (o->n && o->x[o->n - 1] == i))
		return;
	if (o->n == o->cap) {
		int cap = o->cap ? 2 * o->cap : 16;
		int *y = cap > o->cap ? realloc(o->x, (size_t)cap * sizeof *y) : NULL;
		if (!y) {
			o->err = TC_ENOMEM;
			return;
		}
		o->x = y;
		o->cap = cap;
	}
	o->x[o->n++] = i;
}

int tc__sched_rank_xfers(const struct tc__sched *s, const struct tc_topo *t, int rank, int **xp, int *np)
{
	int *path = malloc((size_t)s->p * sizeof *path);
	struct tc__one o = {.rank = rank, .err = path ? 0 : TC_ENOMEM};
	for (int i = 0; i < s->nx && !o.err; i++) {
		const struct tc__xfer *x = &s->x[i];
		/* A transfer between neighbours touches its two ends only. */
		if (x->src != rank && x->dst != rank && tc_topo_neighbor_index(t, x->src, x->dst) >= 0)
			continue;
		int err = tc__parts(s, t, i, path, tc__one_visit, &o);
		if (err)
			o.err = err;
	}
	free(path);
	if (o.err) {
		free(o.x);
		return o.err;
	}
	*xp = o.x;
	*np = o.n;
	return 0;
}
