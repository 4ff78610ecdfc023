/* SPDX-License-Identifier: MIT */
/*
 * tests/common/coll_check.h - checks shared by the collective suites: a
 * failure report the ranks of a run share, and the barrier checker.
 */
#ifndef TC_TEST_COLL_CHECK_H
#define TC_TEST_COLL_CHECK_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "topocoll.h"
#include "util.h"

/* One failure report shared by the ranks of a run: the first one wins. */
struct failure {
	atomic_int n;
	atomic_int taken;
	char msg[256];
};

#define FAIL(f, ...)                                                     \
	do {                                                             \
		atomic_fetch_add(&(f)->n, 1);                            \
		if (!atomic_exchange(&(f)->taken, 1))                    \
			snprintf((f)->msg, sizeof(f)->msg, __VA_ARGS__); \
	} while (0)

/* The barrier checker: every rank counts itself in before each of `iters`
 * barriers (arriving at random times) and checks on the way out that
 * everybody entered that barrier and nobody is past the next one. */
struct bar_arg {
	const char *alg;
	int iters;
	atomic_int count;
	struct failure f;
};

static inline int bar_fn(struct tc_proc *proc, void *argp)
{
	struct bar_arg *a = argp;
	int me = tc_rank(proc), p = tc_size(proc);
	struct tc_coll_opts o = {.alg = a->alg};
	uint64_t s = (uint64_t)me * 7 + 1;
	for (int it = 0; it < a->iters; it++) {
		for (int y = (int)(tc_test_rand(&s) % 4); y > 0; y--)
			tc_yield(proc);
		atomic_fetch_add(&a->count, 1);
		int err = tc_barrier(proc, &o);
		int v = atomic_load(&a->count);
		if (err) {
			FAIL(&a->f, "%s: rank %d: %s", a->alg, me, tc_err_name(err));
			tc_team_abort(tc_proc_team(proc));
			return 0;
		}
		if (v < (it + 1) * p || v >= (it + 2) * p)
			FAIL(&a->f, "%s: rank %d left barrier %d with %d arrivals (p = %d)", a->alg,
			     me, it, v, p);
	}
	return 0;
}

#endif
