/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/cache.c - the schedule caches of the collectives (cache.h).
 *
 * Per rank: the entries of its last TC__CACHE distinct calls, each with
 * its own plan (lib/sched/exec.c); a loop of one collective hits the entry
 * of the last call without a lookup.  Nothing shared is written on a hit.
 *
 * Per team: one entry per distinct call, holding the algorithm, the
 * schedule and which transfers each rank takes part in
 * (tc__sched_index).  The first rank to miss inserts the entry and builds
 * it; the others wait for it on a condition variable (they block, never
 * spin: 1024 ranks may wait on 2 CPUs) and compile their plans from their
 * own share (ranks that are fibres yield to their CPU's other ranks
 * instead, lib/fibre/runq.h: the builder may be one of them), so that a
 * team decides and builds once rather than p times,
 * and holds one schedule rather than p copies.  The decision is a pure
 * function of the call (AUTO included), so a rank that builds after an
 * eviction decides as the others did.
 *
 * Why a mutex and not an RCU hash table: the table is touched once per rank
 * per distinct call, never on the per-call path, and a rank that finds an
 * entry being built must block until it is published, which a lock-free
 * lookup would not spare it.
 *
 * Bounds: at most TC__TCACHE entries and TC__TCACHE_BYTES bytes in the
 * table; past them the least recently used entries leave it (and are freed
 * when the last rank's entry lets them go).  tc_team_get_info() reports
 * what it holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "coll/cache.h"
#include "coll/machine.h"
#include "coll/shm.h"
#include "coll/vcount/vcount.h"
#include "topocoll/calibrate.h"
#include "fibre/runq.h"

#define TC__CACHE 8                          /* per rank */
#define TC__TCACHE 64                        /* per team, entries */
#define TC__TCACHE_BYTES ((size_t)256 << 20) /* per team, bytes */

/* ---- the team's cache ---------------------------------------------------- */

struct tc__tentry {
	struct tc__tentry *next;
	struct tc__ckey key; /* the call (key.members is owned here) */
	/* What it holds. */
	int state;    /* 0 being built, 1 ready, < 0 the build's error */
	char *detail; /* that error's tc_error_detail(), for the ranks that waited */
	int refs;     /* ranks' entries, plus one while in the table */
	int in_table;
	uint64_t stamp;
	const struct tc__alg *alg;
	struct tc__sched s;
	tc_time_t makespan;
	int *at, *mine; /* rank r's transfers: mine[at[r] .. at[r + 1]) */
	size_t size;
};

struct tc__tcache {
	pthread_cond_t cv;
	struct tc__shm *shm; /* the flags and groups of the machine's own algorithms */
	struct tc__tentry *head;
	int n;
	size_t bytes;
	uint64_t clock;
};

static void tc__tentry_free(struct tc__tentry *e)
{
	tc__sched_free(&e->s);
	free(e->at);
	free(e->mine);
	free((int *)e->key.members);
	free((uint64_t *)e->key.vm_rows);
	free(e->detail);
	free(e);
}

static void tc__tcache_free(void *p)
{
	struct tc__tcache *c = p;
	/* Every rank's entries are gone (tc_team_destroy frees them first). */
	for (struct tc__tentry *e = c->head, *next; e; e = next) {
		next = e->next;
		tc__tentry_free(e);
	}
	pthread_cond_destroy(&c->cv);
	tc__shm_free(c->shm);
	free(c);
}

static void tc__tcache_start(void *p)
{
	struct tc__tcache *c = p;
	tc__shm_restart(c->shm);
}

static size_t tc__tentry_size(const struct tc__tentry *e, int p)
{
	const struct tc__sched *s = &e->s;
	size_t n = sizeof *e + (size_t)s->xcap * sizeof *s->x + (size_t)s->rcap * sizeof *s->round_at +
	           (s->init_lo ? 2 * (size_t)p * sizeof(int32_t) : 0) +
	           (size_t)e->key.nmembers * sizeof(int) +
	           tc__vm_words(e->key.vm_rows ? e->key.vm_p : 0, e->key.vm_stride) * sizeof(uint64_t);
	if (e->at)
		n += ((size_t)p + 1 + (size_t)e->at[p]) * sizeof(int);
	return n;
}

/* Drops a reference; under the team's shared_mu. */
static void tc__tentry_unref(struct tc__tentry *e)
{
	if (--e->refs == 0)
		tc__tentry_free(e);
}

/* Takes e out of the table; under shared_mu. */
static void tc__tentry_unlink(struct tc_team *team, struct tc__tcache *c, struct tc__tentry *e)
{
	for (struct tc__tentry **pp = &c->head; *pp; pp = &(*pp)->next)
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	e->in_table = 0;
	c->n--;
	c->bytes -= e->size;
	atomic_store(&team->shared_entries, c->n);
	atomic_store(&team->shared_bytes, c->bytes);
	tc__tentry_unref(e);
}

/* Evicts the least recently used ready entries past the bounds. */
static void tc__tcache_trim(struct tc_team *team, struct tc__tcache *c)
{
	while (c->n > TC__TCACHE || c->bytes > TC__TCACHE_BYTES) {
		struct tc__tentry *lru = NULL;
		for (struct tc__tentry *e = c->head; e; e = e->next)
			if (e->state == 1 && (!lru || e->stamp < lru->stamp))
				lru = e;
		if (!lru || (c->n == 1 && lru == c->head))
			return; /* keep the one just built even if it is large */
		tc__tentry_unlink(team, c, lru);
	}
}

/* Whether k's matrix is m (both none for the fixed-count calls).  The
 * rows are compared whole once the hashes agree. */
static bool tc__vkey_eq(const struct tc__ckey *k, const struct tc__vmatrix *m)
{
	if (!m)
		return !k->has_vm;
	if (!k->has_vm || k->vm_p != m->p || k->vm_stride != m->stride ||
	    k->vm_uniform != m->uniform || k->vm_hash != m->hash || !k->vm_rows != !m->rows)
		return false;
	return !m->rows || !memcmp(k->vm_rows, m->rows, tc__vm_words(m->p, m->stride) * sizeof *m->rows);
}

/* Whether k is the key of call g asking for algorithm name (NULL: AUTO)
 * with a non-commutative operator or not (ordered). */
static inline bool tc__ckey_eq(const struct tc__ckey *k, const struct tc__gen *g, const char *name,
                               int ordered)
{
	return k->coll == g->coll && k->bytes == g->bytes && k->esize == g->esize &&
	       k->root == g->root && k->packets == g->packets && k->ordered == ordered &&
	       k->q == g->q && k->shift_ring == g->shift_ring && k->nmembers == g->nmembers &&
	       (!g->nmembers || !memcmp(k->members, g->members, (size_t)g->nmembers * sizeof(int))) &&
	       (name ? !strncmp(k->name, name, sizeof k->name) : k->is_auto) && tc__vkey_eq(k, g->vmx);
}

/* Builds e (outside the lock): the decision, the schedule, the index. */
static int tc__tentry_build(struct tc_team *team, struct tc__tentry *e, const struct tc__gen *g,
                            const char *name, int ordered)
{
	/* AUTO's physical terms for this team. */
	struct tc__gen gw = *g;
	gw.wait_ns = tc__wait_level_ns(team);
	gw.cpus = tc__shared_cpus(team);
	gw.shm = tc__shm_team(team);
	if (gw.shm == TC__SHM_CPUS && team->cal && team->cal->conc_ranks >= 2) {
		gw.cal = team->cal;
		gw.place = team->place;
		gw.unstaged = !team->spin_ns;
	}
	int err = tc__coll_select(&gw, name, ordered, &e->alg, &e->s, &e->makespan);
	if (err)
		return err;
	return tc__sched_index(&e->s, team->topo, &e->at, &e->mine);
}

/* The team's entry of the call, ready, with a reference for the caller. */
static int tc__tcache_get(struct tc_team *team, const struct tc__gen *g, const char *key,
                          int ordered, struct tc__tentry **out)
{
	pthread_mutex_lock(&team->shared_mu);
	struct tc__tcache *c = team->shared;
	if (!c) {
		c = calloc(1, sizeof *c);
		if (c) {
			c->shm = tc__shm_new(team->p, team->place);
		}
		if (!c || !c->shm) {
			free(c);
			pthread_mutex_unlock(&team->shared_mu);
			return TC_ENOMEM;
		}
		pthread_cond_init(&c->cv, NULL);
		team->shared = c;
		team->shared_free = tc__tcache_free;
		team->shared_start = tc__tcache_start;
	}
	struct tc__tentry *e = c->head;
	while (e && !tc__ckey_eq(&e->key, g, key, ordered))
		e = e->next;
	if (e) {
		e->refs++;
		e->stamp = ++c->clock;
		if (tc__task_self()) {
			/* A fibre must not block its kernel thread: the builder
			 * may be a fibre of the same CPU.  It lets the CPU's
			 * other ranks run until the entry is built (a build
			 * never waits, so this ends). */
			while (e->state == 0) {
				pthread_mutex_unlock(&team->shared_mu);
				tc__yield();
				pthread_mutex_lock(&team->shared_mu);
			}
		}
		while (e->state == 0)
			pthread_cond_wait(&c->cv, &team->shared_mu);
		int err = e->state < 0 ? e->state : TC_OK;
		if (err && e->detail)
			tc__set_detail("%s", e->detail); /* the builder's words */
		if (err)
			tc__tentry_unref(e);
		else
			*out = e;
		pthread_mutex_unlock(&team->shared_mu);
		return err;
	}
	/* Not there: this rank builds it while the others wait. */
	e = calloc(1, sizeof *e);
	int *members = g->nmembers ? malloc((size_t)g->nmembers * sizeof *members) : NULL;
	if (!e || (g->nmembers && !members)) {
		free(e);
		free(members);
		pthread_mutex_unlock(&team->shared_mu);
		return TC_ENOMEM;
	}
	if (members)
		memcpy(members, g->members, (size_t)g->nmembers * sizeof *members);
	const struct tc__vmatrix *vm = g->vmx;
	uint64_t *vrows = NULL;
	if (vm && vm->rows) {
		size_t nw = tc__vm_words(vm->p, vm->stride);
		vrows = malloc(nw * sizeof *vrows);
		if (!vrows) {
			free(e);
			free(members);
			pthread_mutex_unlock(&team->shared_mu);
			return TC_ENOMEM;
		}
		memcpy(vrows, vm->rows, nw * sizeof *vrows);
	}
	e->key = (struct tc__ckey){.coll = g->coll,
	                           .bytes = g->bytes,
	                           .esize = g->esize,
	                           .root = g->root,
	                           .packets = g->packets,
	                           .ordered = ordered,
	                           .q = g->q,
	                           .shift_ring = g->shift_ring,
	                           .nmembers = g->nmembers,
	                           .members = members,
	                           .has_vm = vm != NULL,
	                           .vm_p = vm ? vm->p : 0,
	                           .vm_stride = vm ? vm->stride : 0,
	                           .vm_uniform = vm ? vm->uniform : 0,
	                           .vm_hash = vm ? vm->hash : 0,
	                           .vm_rows = vrows};
	snprintf(e->key.name, sizeof e->key.name, "%s", key);
	e->key.is_auto = !strcmp(e->key.name, "auto");
	e->refs = 2; /* the table's and the builder's */
	e->in_table = 1;
	e->stamp = ++c->clock;
	e->next = c->head;
	c->head = e;
	c->n++;
	pthread_mutex_unlock(&team->shared_mu);

	struct tc__gen gm = *g;
	gm.members = members;
	struct tc__vmatrix vmc;
	if (vm) {
		vmc = *vm;
		vmc.rows = vrows;
		gm.vmx = &vmc;
	}
	int err = tc__tentry_build(team, e, &gm, key, ordered);
	char *detail = err && *tc_error_detail() ? strdup(tc_error_detail()) : NULL;

	pthread_mutex_lock(&team->shared_mu);
	e->detail = detail;
	e->state = err ? err : 1;
	if (err) {
		/* Leaves the table at once: a later call builds again.  The
		 * builder's reference first (the table's keeps e alive), then
		 * the table's with the unlink. */
		e->refs--;
		tc__tentry_unlink(team, c, e);
	} else {
		e->size = tc__tentry_size(e, team->p);
		c->bytes += e->size;
		atomic_store(&team->shared_entries, c->n);
		atomic_store(&team->shared_bytes, c->bytes);
		tc__tcache_trim(team, c);
		*out = e;
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&team->shared_mu);
	return err;
}

static void tc__tcache_release(struct tc_team *team, struct tc__tentry *e)
{
	pthread_mutex_lock(&team->shared_mu);
	tc__tentry_unref(e);
	pthread_mutex_unlock(&team->shared_mu);
}

/* ---- the per-rank cache -------------------------------------------------- */

struct tc__ccache {
	struct tc__cmemo memo[TC__MEMOS]; /* first: tc__coll_memo() */
	struct tc_team *team;
	const struct tc__shm *shm; /* the team's (tc__tcache), once known */
	uint64_t clock;
	struct tc__centry *last; /* the entry of the last call */
	struct tc__centry e[TC__CACHE];
	void *vstate; /* tc__coll_vstate() */
	void (*vstate_free)(void *);
};

struct tc__chold *tc__chold_get(struct tc__centry *e)
{
	e->hold->refs++;
	return e->hold;
}

void tc__chold_put(struct tc__chold *h)
{
	if (--h->refs)
		return;
	tc__plan_free(h->plan);
	tc__tcache_release(h->team, h->te);
	free(h);
}

static void tc__centry_clear(struct tc__ccache *c, struct tc__centry *e)
{
	(void)c;
	tc__chold_put(e->hold);
	memset(e, 0, sizeof *e);
}

static void tc__ccache_free(void *p)
{
	struct tc__ccache *c = p;
	if (c->vstate)
		c->vstate_free(c->vstate);
	for (int i = 0; i < TC__CACHE; i++)
		if (c->e[i].used)
			tc__centry_clear(c, &c->e[i]);
	free(c);
}

/* proc's cache, made at its first use; NULL when out of memory. */
static struct tc__ccache *tc__ccache_of(struct tc_proc *proc)
{
	struct tc__ccache *c = proc->ext;
	if (!c) {
		/* Cache lines of its own: read on every call. */
		c = aligned_alloc(TC__LINE, tc__line_up(sizeof *c));
		if (!c)
			return NULL;
		memset(c, 0, sizeof *c);
		c->team = proc->team;
		proc->ext = c;
		proc->ext_free = tc__ccache_free;
	}
	return c;
}

void **tc__coll_vstate(struct tc_proc *proc, void (*free_fn)(void *))
{
	struct tc__ccache *c = tc__ccache_of(proc);
	if (!c)
		return NULL;
	c->vstate_free = free_fn;
	return &c->vstate;
}

static int tc__coll_plan_miss(struct tc_proc *proc, struct tc__ccache *c, const struct tc__gen *g,
                              const char *key, int ordered, struct tc__centry *victim,
                              struct tc__centry **out);

int tc__coll_plan(struct tc_proc *proc, const struct tc__gen *g, const char *name, int ordered,
                  struct tc__centry **out)
{
	struct tc__ccache *c = tc__ccache_of(proc);
	if (!c)
		return TC_ENOMEM;
	const char *key = name ? name : "auto";
#define TC__HIT(e) ((e)->used && tc__ckey_eq(&(e)->key, g, name, ordered))
	/* A loop of one collective hits the entry of the last call. */
	if (c->last && TC__HIT(c->last)) {
		*out = c->last;
		return TC_OK;
	}
	struct tc__centry *victim = &c->e[0];
	for (int i = 0; i < TC__CACHE; i++) {
		struct tc__centry *e = &c->e[i];
		if (TC__HIT(e)) {
			e->stamp = ++c->clock;
			*out = c->last = e;
			return TC_OK;
		}
		if (!e->used || (victim->used && e->stamp < victim->stamp))
			victim = e;
	}
#undef TC__HIT
	/* The build's topology queries clear tc_error_detail(): what the
	 * call said before (a rank's own error, agreed in the exchange this
	 * is the plan of) is kept for its caller. */
	struct tc__detail_kept kept;
	tc__detail_keep(&kept);
	int err = tc__coll_plan_miss(proc, c, g, key, ordered, victim, out);
	tc__detail_restore(&kept);
	return err;
}

/* tc__coll_plan's miss: the team's entry (built there if no rank has),
 * this rank's plan, into victim. */
static int tc__coll_plan_miss(struct tc_proc *proc, struct tc__ccache *c, const struct tc__gen *g,
                              const char *key, int ordered, struct tc__centry *victim,
                              struct tc__centry **out)
{
	struct tc__tentry *te = NULL;
	int err = tc__tcache_get(proc->team, g, key, ordered, &te);
	if (err)
		return err;
	/* Set once under shared_mu (tc__tcache_get took it), never changed. */
	c->shm = ((struct tc__tcache *)proc->team->shared)->shm;
	const int me = proc->rank;
	struct tc__plan *plan;
	struct tc__chold *hold = malloc(sizeof *hold);
	err = hold ? tc__plan_build(proc, &te->s, te->mine + te->at[me],
	                            te->at[me + 1] - te->at[me], &plan)
	           : TC_ENOMEM;
	if (err) {
		free(hold);
		tc__tcache_release(proc->team, te);
		return err;
	}
	*hold = (struct tc__chold){.refs = 1, .team = proc->team, .plan = plan, .te = te};
	if (victim->used) {
		if (c->last == victim)
			c->last = NULL;
		for (int k = 0; k < TC__MEMOS; k++)
			if (c->memo[k].e == victim)
				c->memo[k].e = NULL;
		tc__centry_clear(c, victim);
	}
	*victim = (struct tc__centry){.hold = hold,
	                              .used = 1,
	                              .stamp = ++c->clock,
	                              .key = te->key,
	                              .alg = te->alg,
	                              .s = &te->s,
	                              .te = te,
	                              .plan = plan,
	                              .makespan = te->makespan};
	*out = c->last = victim;
	return TC_OK;
}

const struct tc__shm *tc__coll_shm(const struct tc_proc *proc)
{
	const struct tc__ccache *c = proc->ext;
	return c ? c->shm : NULL;
}
