/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/sched.c - building a schedule: rounds of transfers.
 *
 * Layout: s->x[0..nx) holds every transfer in schedule order; round r owns
 * x[round_at[r] .. round_at[r+1]).  Invariant kept by every builder call:
 * round_at has at least nrounds + 1 entries and round_at[nrounds] == nx, so
 * the last round always ends at the last transfer.
 *
 * Errors are sticky: the first failing call stores its code in s->err and
 * every later builder call returns it without changing the schedule, so a
 * generator may add all its transfers and check s->err (or the return of the
 * last call) once.  tc__sched_simulate() refuses a schedule with s->err set.
 *
 * Not thread-safe (see sched.h); the schedule owns its arrays until
 * tc__sched_free().
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "topocoll/error.h"

enum { TC__SCHED_RCAP0 = 16, TC__SCHED_XCAP0 = 64 };

/* Records the first error; returns it so that callers can `return`. */
static int tc__sched_fail(struct tc__sched *s, int err)
{
	if (s->err == 0)
		s->err = err;
	return s->err;
}

/* Grows an array of *cap elements of size elt to hold at least need. */
static int tc__grow(void **arr, int *cap, int need, size_t elt)
{
	if (need <= *cap)
		return 0;
	int ncap = *cap > 0 ? *cap : 1;
	while (ncap < need) {
		if (ncap > INT_MAX / 2)
			return TC_EOVERFLOW;
		ncap *= 2;
	}
	void *n = realloc(*arr, (size_t)ncap * elt);
	if (n == NULL)
		return TC_ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* Starts an empty schedule for p ranks (no round open yet).  Returns 0,
 * TC_EINVAL (s NULL or p < 1; s then holds an empty schedule with err set
 * when s is not NULL) or TC_ENOMEM. */
int tc__sched_init(struct tc__sched *s, int p)
{
	if (s == NULL)
		return TC_EINVAL;
	memset(s, 0, sizeof *s);
	s->p = p;
	if (p < 1)
		return tc__sched_fail(s, TC_EINVAL);
	s->round_at = malloc(TC__SCHED_RCAP0 * sizeof *s->round_at);
	if (s->round_at == NULL)
		return tc__sched_fail(s, TC_ENOMEM);
	s->rcap = TC__SCHED_RCAP0;
	s->round_at[0] = 0;
	return 0;
}

/* Frees every array of the schedule and leaves it empty; NULL is a no-op. */
void tc__sched_free(struct tc__sched *s)
{
	if (s == NULL)
		return;
	free(s->round_at);
	free(s->x);
	free(s->init_lo);
	free(s->init_n);
	memset(s, 0, sizeof *s);
}

/* Opens a new (possibly empty) round.  Returns 0, the sticky error, or
 * TC_ENOMEM / TC_EOVERFLOW. */
int tc__sched_round(struct tc__sched *s)
{
	if (s == NULL)
		return TC_EINVAL;
	if (s->err)
		return s->err;
	if (s->nrounds >= INT_MAX - 1)
		return tc__sched_fail(s, TC_EOVERFLOW);
	if (s->count_only) { /* rounds counted, not stored (nothing to index) */
		s->nrounds++;
		return 0;
	}
	int rc = tc__grow((void **)&s->round_at, &s->rcap, s->nrounds + 2, sizeof *s->round_at);
	if (rc)
		return tc__sched_fail(s, rc);
	s->nrounds++;
	s->round_at[s->nrounds] = s->nx;
	return 0;
}

/* Appends a copy of *x to the current round, opening round 0 when none is
 * open.  Returns 0, the sticky error, TC_EINVAL (rank out of range, buffer or
 * op out of range, negative info range), TC_EOVERFLOW (offset + bytes wraps)
 * or TC_ENOMEM.  A transfer touching TC__BUF_TMP raises s->tmp_bytes to cover
 * its region. */
int tc__sched_add(struct tc__sched *s, const struct tc__xfer *x)
{
	if (s == NULL)
		return TC_EINVAL;
	if (s->err)
		return s->err;
	if (x == NULL || x->src < 0 || x->src >= s->p || x->dst < 0 || x->dst >= s->p ||
	    x->sbuf > TC__BUF_TMP || x->rbuf > TC__BUF_TMP || x->op > TC__XOP_COMBINE_RIGHT ||
	    x->info_lo < 0 || x->info_n < 0 || x->info_lo > INT32_MAX - x->info_n)
		return tc__sched_fail(s, TC_EINVAL);
	if (x->soff > UINT64_MAX - x->bytes || x->roff > UINT64_MAX - x->bytes)
		return tc__sched_fail(s, TC_EOVERFLOW);
	if (s->nrounds == 0) {
		int rc = tc__sched_round(s);
		if (rc)
			return rc;
	}
	if (s->count_only) {
		if (s->max_x && s->counted >= s->max_x)
			return tc__sched_fail(s, TC__ELIMIT);
		s->counted++;
		return 0;
	}
	if (s->nx == INT_MAX)
		return tc__sched_fail(s, TC_EOVERFLOW);
	if (s->max_x && s->nx >= s->max_x)
		return tc__sched_fail(s, TC__ELIMIT);
	if (x->src != x->dst && s->moving_round != s->nrounds) {
		s->moving_round = s->nrounds;
		if (++s->nmoving > s->max_moving && s->max_moving)
			return tc__sched_fail(s, TC__ELIMIT);
	}
	int rc = tc__grow((void **)&s->x, &s->xcap, s->nx + 1, sizeof *s->x);
	if (rc)
		return tc__sched_fail(s, rc);
	s->x[s->nx++] = *x;
	s->round_at[s->nrounds] = s->nx;
	if (x->sbuf == TC__BUF_TMP && x->soff + x->bytes > s->tmp_bytes)
		s->tmp_bytes = x->soff + x->bytes;
	if (x->rbuf == TC__BUF_TMP && x->roff + x->bytes > s->tmp_bytes)
		s->tmp_bytes = x->roff + x->bytes;
	return 0;
}

/* Declares that rank r holds pieces [lo, lo + n) before round 0 (replacing
 * any earlier declaration for r); ranks never declared hold nothing.
 * Returns 0, the sticky error, TC_EINVAL (r out of range, negative lo or n)
 * or TC_ENOMEM. */
int tc__sched_initial(struct tc__sched *s, int r, int32_t lo, int32_t n)
{
	if (s == NULL)
		return TC_EINVAL;
	if (s->err)
		return s->err;
	if (r < 0 || r >= s->p || lo < 0 || n < 0 || lo > INT32_MAX - n)
		return tc__sched_fail(s, TC_EINVAL);
	if (s->count_only)
		return 0;
	if (s->init_lo == NULL) {
		s->init_lo = calloc((size_t)s->p, sizeof *s->init_lo);
		s->init_n = calloc((size_t)s->p, sizeof *s->init_n);
		if (s->init_lo == NULL || s->init_n == NULL) {
			free(s->init_lo);
			free(s->init_n);
			s->init_lo = s->init_n = NULL;
			return tc__sched_fail(s, TC_ENOMEM);
		}
	}
	s->init_lo[r] = lo;
	s->init_n[r] = n;
	return 0;
}
