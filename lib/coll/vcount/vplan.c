/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/vcount/vplan.c - the variable-count collectives' schedules and
 * plans (contract in vplan.h): decided, built and simulated once per team
 * and matrix in the collectives' caches (lib/coll/cache.h), and the check
 * that lets a call with the last call's counts skip the exchange of the
 * rows.
 */
#include "coll/vcount/vplan.h"

#include <stdlib.h>
#include <string.h>

#include "coll/cache.h"
#include "coll/coll_internal.h"
#include "coll/machine.h"
#include "core/internal.h"
#include "sched/exec.h"
#include "sched/nbc.h"

/* The generator's view of a v-call of mx on team (collective coll, root). */
static struct tc__gen tc__v_gen(struct tc_team *team, enum tc_coll coll, int root,
                                const struct tc__vmatrix *mx)
{
	return (struct tc__gen){.coll = coll,
	                        .t = team->topo,
	                        .p = team->p,
	                        .esize = 1,
	                        .root = root,
	                        .md = &team->model,
	                        .me = -1,
	                        .vmx = mx};
}

/* The algorithm a v-call takes by rule (see tc__v_sched()), or NULL when
 * it is named or priced. */
static const char *tc__v_rule(const struct tc_team *team, const char *name, bool agreement)
{
	const int cpus = tc__shared_cpus(team);
	if (agreement || (cpus && (!name || !strcmp(name, "auto"))))
		return cpus ? "direct" : "pairwise";
	return NULL;
}

/* The schedule of mx for this team: algorithm name (NULL or "auto": AUTO,
 * tc__coll_select(), priced as for the fixed-count collectives: by the model,
 * or on the machine where the ranks outnumber the CPUs).  *alg gets the
 * registry's name; *makespan the modelled time.  The agreement's exchange
 * (agreement true: equal rows, its modelled time unused) and AUTO where
 * the ranks share CPUs take their algorithm by rule, without pricing:
 * direct where the ranks share CPUs (the same transfers as pairwise, one
 * level of waits instead of p - 1, which is what the machine's pricing
 * finds, without the pricing's simulations), pairwise elsewhere (no shared
 * links under the model).  Used where the matrix is too large for the
 * caches; tc__v_plan() follows the same rule through them. */
static int tc__v_sched(struct tc_proc *proc, const struct tc__vmatrix *mx, enum tc_coll coll,
                       int root, const char *name, bool agreement, struct tc__sched *s,
                       const char **alg, tc_time_t *makespan)
{
	struct tc_team *team = proc->team;
	struct tc__gen g = tc__v_gen(team, coll, root, mx);
	g.wait_ns = tc__wait_level_ns(team);
	g.cpus = tc__shared_cpus(team);
	const struct tc__alg *a = NULL;
	int err;
	const char *rule = tc__v_rule(team, name, agreement);
	if (rule) {
		a = tc__alg_find(coll, rule);
		err = a ? tc__coll_generate(a, &g, s) : TC_EALG;
		*makespan = 0;
		struct tc__sim sim;
		if (!err && !agreement && !tc__sched_simulate(s, team->topo, &team->model, &sim)) {
			*makespan = sim.makespan;
			tc__sim_free(&sim);
		}
	} else {
		err = tc__coll_select(&g, name, 0, &a, s, makespan);
	}
	if (err == TC__ELIMIT) /* a limit of pricing only: no such limit here */
		err = TC_ELIMIT;
	if (!err)
		*alg = a->name;
	return err;
}

/* Matrices of more numbers than this are not cached: their copy in the
 * team's cache would pass 2 MiB, and a call compares it whole. */
#define TC__V_CACHE_WORDS ((size_t)1 << 18)

void tc__v_plan_free(struct tc__vplan *vp)
{
	if (vp->hold)
		tc__chold_put(vp->hold);
	if (vp->own_pl)
		tc__plan_free(vp->own_pl);
	if (vp->have_own_s)
		tc__sched_free(&vp->own_s);
	*vp = (struct tc__vplan){0};
}

/* vp: call g's entry in the collectives' caches (algorithm name, NULL:
 * AUTO), held, with this rank's plan. */
static int tc__v_cached(struct tc_proc *proc, const struct tc__gen *g, const char *name,
                        struct tc__vplan *vp)
{
	struct tc__centry *e;
	int err = tc__coll_plan(proc, g, name, 0, &e);
	if (err)
		return err == TC__ELIMIT ? TC_ELIMIT : err;
	vp->hold = tc__chold_get(e);
	vp->s = e->s;
	vp->pl = e->plan;
	vp->alg = e->alg->name;
	vp->makespan = e->makespan;
	vp->rows = e->key.vm_rows;
	return TC_OK;
}

/* vp: the schedule of mx (algorithm name, NULL: AUTO) and this rank's plan.
 * The rule of tc__v_sched() names the algorithm where it applies, so that
 * the caches' key holds what was run. */
int tc__v_plan(struct tc_proc *proc, const struct tc__vmatrix *mx, enum tc_coll coll, int root,
               const char *name, bool agreement, struct tc__vplan *vp)
{
	struct tc_team *team = proc->team;
	*vp = (struct tc__vplan){0};
	if (mx->blocks || (mx->rows && tc__vm_words(mx->p, mx->stride) > TC__V_CACHE_WORDS)) {
		int err = tc__v_sched(proc, mx, coll, root, name, agreement, &vp->own_s, &vp->alg,
		                      &vp->makespan);
		if (err)
			return err;
		vp->have_own_s = true;
		err = tc__plan_build(proc, &vp->own_s, NULL, 0, &vp->own_pl);
		if (err) {
			tc__v_plan_free(vp);
			return err;
		}
		vp->s = &vp->own_s;
		vp->pl = vp->own_pl;
		return TC_OK;
	}
	struct tc__vmatrix m = *mx;
	m.hash = tc__vm_hash(&m);
	const char *rule = tc__v_rule(team, name, agreement);
	const struct tc__gen g = tc__v_gen(team, coll, root, &m);
	int err = tc__v_cached(proc, &g, rule ? rule : name, vp);
	vp->hash = m.hash;
	return err;
}

/* Runs vp on this rank. */
int tc__v_run_plan(struct tc_proc *proc, const struct tc__vplan *vp, const void *in, void *out, int tag)
{
	int err;
	struct tc__exec_io io = {.in = in, .out = out, .tag = tag};
	tc__clock_pull(proc); /* a sub-team's proc: the rank's clock */
	/* Behind the started requests when there are any (queued, the
	 * queue runs it on the team's engine). */
	err = proc->team->engine_run && !tc__creq_pending(proc)
	              ? proc->team->engine_run(proc, vp->s, &io)
	              : tc__exec_ordered(proc, vp->s, vp->pl, &io);
	tc__clock_push(proc);
	proc->last_alg = vp->alg;
	proc->last_rounds = vp->s->nrounds;
	proc->last_modelled = vp->makespan;
	return err;
}

/* Runs the schedule of mx (algorithm name, NULL: AUTO) on this rank. */
static int tc__v_run(struct tc_proc *proc, const struct tc__vmatrix *mx, enum tc_coll coll,
                     int root, const char *name, bool agreement, const void *in, void *out, int tag)
{
	struct tc__vplan vp;
	int err = tc__v_plan(proc, mx, coll, root, name, agreement, &vp);
	if (err)
		return err;
	err = tc__v_run_plan(proc, &vp, in, out, tag);
	tc__v_plan_free(&vp);
	return err;
}

/* Every rank's row of rowb bytes into all (p rows): the matrix of equal
 * blocks, chosen by AUTO as an allgatherv's (pairwise or direct, both of
 * which apply to every topology). */
int tc__v_exchange(struct tc_proc *proc, const uint64_t *row, uint64_t *all, size_t rowb)
{
	struct tc__vmatrix mx = {.p = proc->team->p, .uniform = rowb};
	return tc__v_run(proc, &mx, TC_COLL_ALLGATHERV, 0, NULL, true, row, all, TC__V_AGREE_TAG);
}

/*
 * The same counts again.  A loop calls a v-collective with the same counts
 * and displacements again and again, and the exchange of the rows (p rows
 * of 4p numbers, 128 KiB per rank at p = 64) then costs more than the
 * data.  So each rank keeps the data's plan of its last call of each kind
 * (struct tc__vmemo, with the root and the algorithm asked for), and a
 * call first exchanges 16 bytes per rank (an allgather, AUTO's): whether
 * the rank's row is its row of that call's matrix, and that matrix's hash.
 * When every rank says yes for the same matrix, the matrix is that one and
 * its plan runs at once; else the rows are exchanged and agreed as before.
 * Each rank decides from the same 16p bytes, so all decide alike, even when
 * their memories differ (a call that failed on some ranks only: an abort).
 * Matrices too large for the caches (TC__V_CACHE_WORDS) skip the check.
 */
struct tc__vmemo {
	struct tc__vplan dp; /* its data's plan (dp.hold set: one is kept) */
	int root, tag;
	const char *name; /* the registry's name asked for, NULL: AUTO */
};

struct tc__vstate {
	struct tc__vmemo m[TC__V_ALLTOALLV + 1];
};

static void tc__vstate_free(void *p)
{
	struct tc__vstate *st = p;
	for (size_t k = 0; k < sizeof st->m / sizeof st->m[0]; k++)
		tc__v_plan_free(&st->m[k].dp);
	free(st);
}

/* Whether the rows of p ranks are kept and checked (the flags' size). */
bool tc__v_keeps(int p)
{
	return tc__vm_words(p, TC__V_N * (size_t)p) <= TC__V_CACHE_WORDS;
}

/* The check's exchange: 16 bytes from every rank into all (16 p bytes). */
int tc__v_flags_plan(struct tc_proc *proc, struct tc__vplan *fp)
{
	struct tc_team *team = proc->team;
	const struct tc__gen g = {.coll = TC_COLL_ALLGATHER,
	                          .t = team->topo,
	                          .p = team->p,
	                          .bytes = 2 * sizeof(uint64_t),
	                          .esize = sizeof(uint64_t),
	                          .md = &team->model,
	                          .me = -1};
	*fp = (struct tc__vplan){0};
	return tc__v_cached(proc, &g, NULL, fp);
}

/* This rank's flags for a call of kind (root, registry name) with row:
 * flags[0] 1 when the row is its row of the memo's matrix, flags[1] that
 * matrix's hash; *prev the memo's plan, held (none when there is none). */
int tc__v_flags(struct tc_proc *proc, enum tc__vkind kind, int root, const char *name,
                const uint64_t *row, uint64_t flags[2], struct tc__vplan *prev, int *tag)
{
	*prev = (struct tc__vplan){0};
	flags[0] = flags[1] = 0;
	void **slot = tc__coll_vstate(proc, tc__vstate_free);
	if (!slot)
		return TC_ENOMEM;
	if (!*slot && !(*slot = calloc(1, sizeof(struct tc__vstate))))
		return TC_ENOMEM;
	const struct tc__vmemo *m = &((struct tc__vstate *)*slot)->m[kind];
	const size_t n = TC__V_N * (size_t)proc->team->p;
	if (!m->dp.hold || m->root != root || m->name != name ||
	    memcmp(m->dp.rows + (size_t)proc->rank * n, row, n * sizeof *row))
		return TC_OK;
	*prev = m->dp;
	prev->hold = tc__chold_ref(m->dp.hold);
	*tag = m->tag;
	flags[0] = 1;
	flags[1] = m->dp.hash;
	return TC_OK;
}

/* Whether every rank's flags (all: p pairs) say the same matrix again. */
bool tc__v_flags_same(const uint64_t *all, int p)
{
	for (int i = 0; i < p; i++)
		if (!all[2 * (size_t)i] || all[2 * (size_t)i + 1] != all[1])
			return false;
	return true;
}

/* The kind's memo becomes dp (root, registry name, the data's tag). */
void tc__v_remember(struct tc_proc *proc, enum tc__vkind kind, int root, const char *name,
                    const struct tc__vplan *dp, int tag)
{
	void **slot = tc__coll_vstate(proc, tc__vstate_free);
	if (!slot || !*slot || !dp->hold)
		return;
	struct tc__vmemo *m = &((struct tc__vstate *)*slot)->m[kind];
	tc__v_plan_free(&m->dp);
	*m = (struct tc__vmemo){.dp = *dp, .root = root, .tag = tag, .name = name};
	m->dp.hold = tc__chold_ref(dp->hold);
}
