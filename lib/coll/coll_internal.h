/* SPDX-License-Identifier: MIT */
/* lib/coll/coll_internal.h - the registry, selection and generation,
 * shared by the entry points (coll.c, shift/shift.c, multicast/multicast.c)
 * and the prediction API (predict.c); the path of every collective call
 * (tc__coll_x, coll.c). */
#ifndef TC_COLL_INTERNAL_H
#define TC_COLL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "coll/gen.h"

/* A collective's line of topocoll/collectives.def. */
struct tc__coll_desc {
	const char *name;
	unsigned flags; /* TC_CF_* */
	int bound;      /* the bound beside a prediction: an enum
	                            tc_lb_coll ([KKA-I]), TC__LB_PERM,
	                            TC__LB_MC or TC__LB_NONE */
	int dual_of;    /* enum tc_coll, or -1 */
	int dual_copy;  /* the dual copies (IN and OUT swap roles)
	                            rather than combines */
};
extern const struct tc__coll_desc tc__colls[TC_COLL_COUNT];
enum { TC__LB_PERM = 100, TC__LB_MC = 101, TC__LB_NONE = 102 };

/* Whether a's registry restrictions (req) allow g: 0 or TC_ENOTSUP, with
 * tc_error_detail() then naming the restriction that fails and the
 * algorithms of the collective that apply.  tc__alg_check_quiet() leaves
 * the detail alone (AUTO's scan of the candidates). */
int tc__alg_check(const struct tc__alg *a, const struct tc__gen *g);
int tc__alg_check_quiet(const struct tc__alg *a, const struct tc__gen *g);
/* Whether the built-in operator op (not TC_OP_USER) is defined on dt: 0,
 * or TC_ENOTSUP with tc_error_detail() saying that the operator needs an
 * integer type (lib/coll/ops.c).  dt and op must be in range. */
int tc__op_check(enum tc_dtype dt, enum tc_op op);
/* The registry entry of (coll, name), or NULL. */
const struct tc__alg *tc__alg_find(enum tc_coll coll, const char *name);
/* The dual s of schedule b (lib/coll/dual.c): copying (gather from
 * scatter) or combining (reduce from bcast; m bytes to root, s->reads_in
 * when it reads IN itself); of a count (b->count_only), the same count.
 * Returns 0 or TC_ENOMEM. */
int tc__dual(const struct tc__sched *b, int copy, int root, uint64_t m, struct tc__sched *s);
/* Generates a's schedule for g (the dual of the bcast for TC__ALG_DUAL).
 * TC__ELIMIT at once, generating nothing, when tc__sched_size_lb() is over
 * g->max_x. */
int tc__coll_generate(const struct tc__alg *a, const struct tc__gen *g, struct tc__sched *s);
/* A lower bound of the transfers of a's schedule for g, known without
 * generating it (lib/coll/size.c); 0 where none is known. */
int64_t tc__sched_size_lb(const struct tc__alg *a, const struct tc__gen *g);
/* How many schedules tc__coll_generate() has started to generate in this
 * process (the tests' check that a closed-form prediction builds none). */
long long tc__sched_generated(void);
void tc__sched_generated_add(void);
/* Picks the algorithm (name, or "auto"/NULL: cheapest predicted) and returns
 * its schedule in *s (caller frees) and its makespan.  TC_EALG, TC_ENOTSUP;
 * TC__ELIMIT when the schedule is over g's limits (g->max_x): then *alg is
 * the algorithm and *makespan its exact closed form, or -1 without one. */
int tc__coll_select(const struct tc__gen *g, const char *name, int need_ordered,
                    const struct tc__alg **alg, struct tc__sched *s, tc_time_t *makespan);

/* The link crossings of s on t (the simulator's work). */
long tc__sched_crossings(const struct tc__sched *s, const struct tc_topo *t);

/* AUTO's price of schedule s on a team whose ranks outnumber its g->cpus
 * CPUs, a level of waits costing g->wait_ns (lib/coll/select.c), in ps. */
int tc__machine_score(const struct tc__sched *s, const struct tc__gen *g, tc_time_t *score);

/* out = a (op) b element-wise, a the left operand, for a built-in operator
 * valid for dt or TC_OP_USER with user set.  out may be a or b (exactly) or
 * a third array; partial overlap is not allowed.  No checks (lib/coll/ops.c). */
void tc__reduce3(void *out, const void *a, const void *b, size_t count, enum tc_dtype dt,
                 enum tc_op op, const struct tc_user_op *user);

/* tc_allgather of a call that mark sets apart: its signature, and so its
 * mismatch detection, differs from every tc_allgather of the same shape
 * (the splits of lib/coll/split.c).  Arguments and errors as tc_allgather's. */
int tc__allgather_marked(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                         enum tc_dtype dt, int mark);

/* What the shift and the multicast add to a call of tc__coll_x(). */
struct tc__coll_extra {
	int q;              /* shift: q mod p */
	int shift_ring;     /* shift: along the topology's ring */
	const int *members; /* multicast: canonical (tc__members_canon) */
	int nmembers;
};

/* A collective request: nonblocking (xr->persistent 0) or persistent; or,
 * built set, an operation made and handed back in *built, neither started
 * nor bound (a phase of a call made of several: tc_imulticast). */
struct tc__creq;
struct tc__xreq {
	tc_request *req;
	int persistent;
	struct tc__creq **built;
};

/* The path of every collective call (coll.c): blocking with xr NULL, else as xr's request. */
int tc__coll_x(struct tc_proc *proc, enum tc_coll coll, const void *sbuf, void *rbuf, size_t count,
               enum tc_dtype dt, enum tc_op op, int root, const struct tc_coll_opts *opts,
               const struct tc__coll_extra *x, const struct tc__xreq *xr);

/* The ascending order of ints, for qsort() and bsearch(). */
static inline int tc__int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Whether rank r is in a canonical (ascending) member set. */
static inline bool tc__in_set(int r, const int *members, int n)
{
	return n > 0 && bsearch(&r, members, (size_t)n, sizeof *members, tc__int_cmp);
}

/* One step of FNV-1a over 64-bit values: the call's tag and the multicast's
 * agreement hash. */
#define TC__FNV_BASIS 1469598103934665603ull
static inline uint64_t tc__fnv(uint64_t h, uint64_t v)
{
	return (h ^ v) * 1099511628211ull;
}

#endif
