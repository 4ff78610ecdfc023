/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shm_tree.c - shm_tree (barrier, allreduce of at most
 * TC__SHM_TREE_MAX bytes): the groups of cache domains a team's placement
 * gives, and the call over them, on the flags' protocol of
 * lib/coll/shm.c.
 */
#include "coll/shm_run.h"

#include <string.h>

#include "sched/exec.h"

/* Whether place describes two cache domains or more among ranks [0, p). */
int tc__shm_tree_known(const struct tc_rank_place *place, int p)
{
	if (!place)
		return 0;
	int two = 0;
	for (int r = 0; r < p; r++) {
		if (place[r].cache < 0)
			return 0;
		two |= place[r].cache != place[0].cache;
	}
	return two;
}

/* tc__shm_tree_group() with known = tc__shm_tree_known(place, p). */
void tc__shm_tree_span(const struct tc_rank_place *place, int known, int p, int r, int *lo, int *hi)
{
	int a = 0, b = p;
	if (known) {
		for (a = r; a > 0 && place[a - 1].cache == place[r].cache; a--)
			;
		for (b = r + 1; b < p && place[b].cache == place[r].cache; b++)
			;
	}
	/* Group j of the run [a, b) of n ranks: [a + j n / c, a + (j + 1) n / c). */
	const int64_t n = b - a, cnt = (n + TC__SHM_TREE_FANIN - 1) / TC__SHM_TREE_FANIN, x = r - a;
	int64_t j = x * cnt / n;
	while ((j + 1) * n / cnt <= x)
		j++;
	while (j * n / cnt > x)
		j--;
	*lo = a + (int)(j * n / cnt);
	*hi = a + (int)((j + 1) * n / cnt);
}

void tc__shm_tree_group(const struct tc_rank_place *place, int p, int r, int *lo, int *hi)
{
	tc__shm_tree_span(place, tc__shm_tree_known(place, p), p, r, lo, hi);
}

/* Where a leader's flag carries the team's latest start clock for its
 * members (after the result of at most TC__SHM_TREE_MAX bytes). */
#define TC__SHM_TREE_CLOCK (TC__SHM_INLINE - sizeof(tc_time_t))
_Static_assert(TC__SHM_TREE_MAX <= TC__SHM_TREE_CLOCK, "the result and the clock share the flag");
_Static_assert(TC__SHM_TREE_MAX <= TC__SHM_AREA, "a group's partial result fits its leader's area");

/* barrier (reduce = 0) and allreduce shm_tree, call k, the group [lo, hi)
 * of this rank (the team's groups, struct tc__shm: tc__shm_tree_group() of
 * its placement, derived once):
 *   member  its vector in its flag; publish (k, 1); wait for the leader's
 *           (k, 3); the result and the team's latest start clock out of
 *           the leader's flag.
 *   leader  wait for each member's (k, 1), reducing its group's vectors in
 *           rank order (x_lo + x_lo+1) + ... into its area; with one group,
 *           straight into OUT and on to the release.  Else the group's
 *           latest start clock in its block; publish (k, 2); wait for every
 *           leader's (k, 2), in rank order, reducing their areas into OUT;
 *           then the result and the team's clock into its flag; publish
 *           (k, 3), which releases its members.
 * A leader's (k, 3) implies every leader's (k, 2), hence every rank's
 * (k, 1): every rank is done with the calls before k (the rule of
 * tc__shm_fill()).  The leader writes its area and clock before (k, 2) and
 * its flag's data before (k, 3), each read by others only after it. */
int tc__shm_tree(struct tc__shm_ctx *c, int reduce)
{
	const struct tc__exec_io *io = c->io;
	const struct tc__shm *shm = c->shm;
	const uint64_t m = reduce ? c->m : 0;
	if (m > TC__SHM_TREE_MAX)
		return TC_ENOTSUP; /* the generator refuses it first */
	const int grp = shm->group[c->me], lo = shm->lead[grp], hi = shm->lead[grp + 1];
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, io->in, io->out, &b);
	if (err)
		return err;
	if (c->me != lo) {
		if (m)
			memcpy(b->data, io->in, m);
		tc__shm_publish(c, 1);
		if ((err = tc__shm_await_data(c, lo, 3)))
			return err;
		const struct tc__shm_block *lb = tc__shm_blk(c, lo);
		tc_time_t t;
		memcpy(&t, lb->data + TC__SHM_TREE_CLOCK, sizeof t);
		if (t > c->cmax)
			c->cmax = t;
		if (m)
			memcpy(io->out, lb->data, m);
		tc__shm_seen_done(c, (int64_t)c->k - 1);
		return TC_OK;
	}
	const int one = lo == 0 && hi == c->p;
	unsigned char *part = one ? io->out : tc__shm_area(c, c->me);
	if (m)
		memcpy(part, io->in, m);
	for (int r = lo + 1; r < hi; r++) {
		if ((err = tc__shm_await_data(c, r, 1)))
			return err;
		if (m)
			io->combine(part, part, tc__shm_blk(c, r)->data, m, io->combine_ctx);
	}
	if (!one) {
		b->clock = c->cmax;
		tc__shm_publish(c, 2);
		for (int j = 0; j < shm->ngroups; j++) {
			const int l = shm->lead[j];
			const unsigned char *x = part;
			if (l != c->me) {
				if ((err = tc__shm_await_data(c, l, 2)))
					return err;
				x = tc__shm_area(c, l);
			}
			if (m && j == 0)
				memcpy(io->out, x, m);
			else if (m)
				io->combine(io->out, io->out, x, m, io->combine_ctx);
		}
	}
	if (m)
		memcpy(b->data, io->out, m);
	memcpy(b->data + TC__SHM_TREE_CLOCK, &c->cmax, sizeof c->cmax);
	tc__shm_publish(c, 3);
	tc__shm_seen_done(c, (int64_t)c->k - 1);
	return TC_OK;
}
