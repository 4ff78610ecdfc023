/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/cache.h - where a collective call finds its schedule and its
 * rank's plan (lib/coll/cache.c): a per-rank cache of the last calls (the
 * fast path, no lock, no shared write) in front of the team's cache, where
 * the first rank to make a call decides its algorithm and builds its
 * schedule once for the whole team.
 */
#ifndef TC_COLL_CACHE_H
#define TC_COLL_CACHE_H

#include "coll/coll_internal.h"
#include "core/internal.h"
#include "sched/exec.h"

struct tc__tentry;

/* What makes two calls the same, for both caches. */
struct tc__ckey {
	enum tc_coll coll;
	uint64_t bytes, esize;
	int root, packets, ordered;
	int q, nmembers, shift_ring;
	const int *members; /* multicast: the team entry's copy */
	/* A v-call's agreed matrix (lib/coll/vcount/vcount.h): whether there
	 * is one, its ranks, stride and uniform block, a hash of its rows and
	 * the team entry's copy of them (p stride numbers, or none). */
	int has_vm, vm_p;
	size_t vm_stride;
	uint64_t vm_uniform, vm_hash;
	const uint64_t *vm_rows;
	char name[32]; /* the algorithm asked for, "auto" for AUTO */
	int is_auto;   /* name is "auto" (a NULL name matches it) */
};

/* An entry's plan and schedule, held by the entry and by the collective
 * requests that run them (nonblocking, persistent: lib/coll/coll.c), so
 * that an eviction frees them only at the last put.  One rank's: plain
 * counts. */
struct tc__chold {
	int refs;
	struct tc_team *team;
	struct tc__plan *plan;
	struct tc__tentry *te;
};

/* A rank's entry for one distinct call. */
struct tc__centry {
	struct tc__chold *hold; /* its plan and schedule (one reference) */
	int used;
	uint64_t stamp;
	struct tc__ckey key; /* a copy of the team entry's */
	const struct tc__alg *alg;
	const struct tc__sched *s; /* the team's schedule, read only */
	struct tc__tentry *te;     /* holds it (a reference) */
	struct tc__plan *plan;     /* this rank's */
	tc_time_t makespan;
	int tag, tag_op; /* the call's tag for (datatype << 8 | op) + 1 = tag_op */
	uint64_t sig;    /* and its 64-bit signature (lib/coll/coll.c) */
};

/* One of a rank's last blocking calls made through the collective entry
 * (lib/coll/coll.c), as given and as its checks found it: the same call
 * again, its arguments equal, skips the checks and the lookup and runs e.
 * e is NULL when there is none; the cache clears it when it evicts e.
 * Calls with a user operator, a member set or a shift are not kept.  A
 * rank keeps TC__MEMOS of them, of different collectives: a loop that
 * alternates two calls (a barrier before each timed call, as benchmarks
 * time) hits both. */
#define TC__MEMOS 2
struct tc__cmemo {
	struct tc__centry *e;
	enum tc_coll coll;
	enum tc_dtype dt;
	enum tc_op op;
	int root, packets;
	size_t count;
	const void *sbuf;
	void *rbuf;
	const char *alg; /* opts->alg (its text is compared again) */
	/* What the checks derived: the root as used, sizes, roles. */
	int root_used;
	size_t es, bytes, sbytes, rbytes;
	bool sends, recvs, scatter_ip, in_place;
};

/* proc's TC__MEMOS memos, NULL before its first collective call. */
static inline struct tc__cmemo *tc__coll_memo(const struct tc_proc *proc)
{
	return proc->ext; /* the rank's cache (cache.c) begins with it */
}

/* The entry of call g (algorithm name, NULL or "auto": AUTO; ordered: a
 * non-commutative operator) for proc's rank, with its plan.  Returns 0,
 * TC_ENOMEM or the selection's error (TC_EALG, TC_ENOTSUP, ...), the same
 * on every rank of a call. */
int tc__coll_plan(struct tc_proc *proc, const struct tc__gen *g, const char *name, int ordered,
                  struct tc__centry **out);

/* A reference to e's plan and schedule (valid after e is evicted), and
 * its end. */
struct tc__chold *tc__chold_get(struct tc__centry *e);
void tc__chold_put(struct tc__chold *h);
/* One more reference to h (one rank's: its own thread). */
static inline struct tc__chold *tc__chold_ref(struct tc__chold *h)
{
	h->refs++;
	return h;
}
/* A slot of proc's cache for the v-calls' state (lib/coll/vcount/vcount.c),
 * NULL at first; free_fn frees what it holds with the cache, before the
 * cache's entries.  NULL when out of memory. */
void **tc__coll_vstate(struct tc_proc *proc, void (*free_fn)(void *));

/* The team's flags and groups for the machine's own algorithms
 * (lib/coll/shm.h), known to proc's rank once tc__coll_plan() has returned
 * an entry. */
struct tc__shm;
const struct tc__shm *tc__coll_shm(const struct tc_proc *proc);

#endif /* TC_COLL_CACHE_H */
