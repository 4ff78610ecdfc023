/* SPDX-License-Identifier: MIT */
/* lib/coll/vcount/vplan.h - the v-calls' schedules and this rank's plans
 * (vplan.c): from the collectives' caches keyed by the agreed matrix, or
 * built for the call where the matrix is too large to keep; and the check,
 * 16 bytes per rank, that a call repeats the counts of the rank's last
 * call of its kind on every rank, so that the rows need not be exchanged
 * again. */
#ifndef TC_COLL_VCOUNT_VPLAN_H
#define TC_COLL_VCOUNT_VPLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "coll/vcount/vcount.h"
#include "model/clock.h"

struct tc__chold;
struct tc__plan;

/* The tag of a v-call's agreement: the check's exchange and the rows'
 * (the data's tag is the matrix's, tc__v_agree in vcount.c). */
#define TC__V_AGREE_TAG (0x8000 | 0x4001)

/* A v-call's schedule and this rank's plan: the caches' (hold) or built
 * for the call (own). */
struct tc__vplan {
	struct tc__chold *hold;
	const struct tc__sched *s;
	const struct tc__plan *pl;
	struct tc__sched own_s;
	struct tc__plan *own_pl;
	bool have_own_s;
	const char *alg;
	tc_time_t makespan;
	const uint64_t *rows; /* cached: the matrix's rows (the entry's copy) */
	uint64_t hash;        /* and their hash */
};

void tc__v_plan_free(struct tc__vplan *vp);
/* vp: the schedule of mx (collective coll, root; the registry's algorithm
 * name, NULL or "auto": AUTO) and this rank's plan.  agreement: the
 * exchange of the rows (equal blocks), whose algorithm goes by rule. */
int tc__v_plan(struct tc_proc *proc, const struct tc__vmatrix *mx, enum tc_coll coll, int root,
               const char *name, bool agreement, struct tc__vplan *vp);
/* Runs vp on this rank (tag: the data's); sets the rank's last-call info. */
int tc__v_run_plan(struct tc_proc *proc, const struct tc__vplan *vp, const void *in, void *out, int tag);
/* Every rank's row of rowb bytes into all (p rows). */
int tc__v_exchange(struct tc_proc *proc, const uint64_t *row, uint64_t *all, size_t rowb);

/* The check for the same matrix: whether a team of p ranks makes it (its
 * rows are kept); the plan of its exchange (16 bytes from every rank);
 * this rank's flags for a call of kind (root, registry name, its row) and
 * the plan they name, held in *prev with its data's tag in *tag; whether
 * everybody's flags (all) say the same matrix again; and the kind's memory
 * after a call whose rows were exchanged (its data's plan dp and tag). */
bool tc__v_keeps(int p);
int tc__v_flags_plan(struct tc_proc *proc, struct tc__vplan *fp);
int tc__v_flags(struct tc_proc *proc, enum tc__vkind kind, int root, const char *name,
                const uint64_t *row, uint64_t flags[2], struct tc__vplan *prev, int *tag);
bool tc__v_flags_same(const uint64_t *all, int p);
void tc__v_remember(struct tc_proc *proc, enum tc__vkind kind, int root, const char *name,
                    const struct tc__vplan *dp, int tag);

#endif /* TC_COLL_VCOUNT_VPLAN_H */
