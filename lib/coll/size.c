/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/size.c - how large a schedule is at least, known before it is
 * generated, and how many schedules have been generated.
 *
 * A prediction simulates a schedule of at most 2^20 transfers (predict.c)
 * and prices a larger one by its exact closed form.  Finding that a
 * schedule is over the limit by generating it up to the limit takes as
 * long as generating 2^20 transfers (half a second); for the collectives
 * whose schedules grow as p^2 the registry's generators are known to emit
 * at least that many, so tc__coll_generate() refuses at once (TC__ELIMIT,
 * as the generator itself would) a schedule whose bound is over the
 * caller's limit, and the closed form answers in microseconds.
 *
 * The bounds are lower bounds of what each generator emits (local copies
 * included), for every p, size and model: tests/test_model.c compares them
 * with the generated schedules over the test matrix.
 */
#include <stdatomic.h>

#include "coll/coll_internal.h"

/* Incremented once per call of tc__coll_generate(); relaxed: a statistic
 * that orders nothing, read by the tests after the calls they count. */
static _Atomic long long tc__generated;

long long tc__sched_generated(void)
{
	return atomic_load_explicit(&tc__generated, memory_order_relaxed);
}

void tc__sched_generated_add(void)
{
	atomic_fetch_add_explicit(&tc__generated, 1, memory_order_relaxed);
}

int64_t tc__sched_size_lb(const struct tc__alg *a, const struct tc__gen *g)
{
	const int64_t p = g->p;
	/* alltoall: every generator moves each of the p^2 blocks (its own
	 * included, IN to OUT) by a transfer of its own at least once: direct
	 * and ecube one per block, ring, mesh and hypercube (the lines of
	 * alltoall_lines.h) one per block and step, then per packed message. */
	if (a->coll != TC_COLL_ALLTOALL)
		return 0;
	if (a->gen == tc__gen_alltoall_hypercube)
		return p * p;
	/* The others refuse more than 46340 ranks at once (tc__pieces_p2,
	 * whose detail names that limit): no bound there. */
	if ((a->gen == tc__gen_alltoall_direct || a->gen == tc__gen_alltoall_ecube ||
	     a->gen == tc__gen_alltoall_ring || a->gen == tc__gen_alltoall_mesh) &&
	    p <= 46340)
		return p * p;
	return 0;
}
