/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/vcount/vcount_pairwise.c - the schedule of the variable-count
 * collectives: pairwise exchange (contract and cost in vcount.h).
 *
 * Trace, alltoallv on p = 3 (every block non-empty):
 *   round 0: 0 -> 0, 1 -> 1, 2 -> 2 (local copies)
 *   round 1: 0 -> 1, 1 -> 2, 2 -> 0
 *   round 2: 0 -> 2, 1 -> 0, 2 -> 1
 * gatherv to root 1 keeps, of these, the transfers into 1: one per round.
 */
#include "coll/vcount/vcount.h"

#include "coll/gen.h"

int tc__gen_vcount_pairwise(const struct tc_topo *t, const struct tc__vmatrix *mx,
                            struct tc__sched *s)
{
	const int p = mx->p;
	int err = tc__sched_init(s, p);
	if (err)
		return err;
	(void)t;
	for (int k = 0; k < p && !err; k++) {
		err = tc__sched_round(s);
		for (int i = 0; i < p && !err; i++) {
			int j = (i + k) % p;
			uint64_t bytes, soff, roff;
			if (mx->rows) {
				const uint64_t *ri = mx->rows + (size_t)i * mx->stride;
				const uint64_t *rj = mx->rows + (size_t)j * mx->stride;
				bytes = ri[j];
				soff = ri[p + j];
				roff = rj[3 * p + i];
			} else {
				bytes = mx->uniform;
				soff = 0;
				roff = (uint64_t)i * mx->uniform;
			}
			if (!bytes)
				continue;
			err = tc__emit(s, i, j, TC__BUF_IN, soff, TC__BUF_OUT, roff, bytes, TC__XOP_COPY);
		}
	}
	if (!err)
		err = s->err;
	if (err)
		tc__sched_free(s);
	return err;
}
