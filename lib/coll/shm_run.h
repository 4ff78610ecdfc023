/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shm_run.h - what lib/coll/shm.c, shm_flat.c and shm_tree.c
 * share: one rank's state during a native call of the machine's own
 * algorithms, the flags' protocol (lib/coll/shm.c) and the calls
 * (shm_flat.c, shm_tree.c) that tc__shm_exec() dispatches to.  Private to
 * those three files.
 */
#ifndef TC_COLL_SHM_RUN_H
#define TC_COLL_SHM_RUN_H

#include "coll/shm.h"
#include "core/wait.h"

/* The step word: [63:48] the team's start, [47:40] the signature, [39:2]
 * the call, [1:0] the phase. */
#define TC__SHM_CALL_MASK ((UINT64_C(1) << 38) - 1)
#define TC__SHM_POS_MASK ((UINT64_C(1) << 40) - 1)
#define TC__SHM_SIG_MASK (UINT64_C(0xff) << 40)
#define TC__SHM_RUN_MASK (TC__SHM_POS_MASK | TC__SHM_SIG_MASK)

struct tc__shm_ctx {
	struct tc_proc *proc;
	const struct tc__shm *shm; /* the team's flags and groups */
	struct tc__shm_slot *slots;
	const struct tc__exec_io *io;
	int p, me;
	uint64_t k;        /* the call number */
	uint64_t run;      /* the team's start, shifted into place */
	uint64_t sig8;     /* the signature's byte, shifted into place */
	uint64_t sig;      /* the full signature */
	tc_time_t cmax;    /* the latest start clock seen */
	uint64_t m, esize; /* the call's bytes (per rank) and element size */
	uint64_t src_off;  /* allgather, alltoall: where our block is in a peer's */
	int small;         /* the data travel in the flags or the areas */
	int in_area;       /* allgather, alltoall: in the areas, not the flags */
	struct tc__waiter w;
	int done;            /* this rank's done word says call k */
	int waiting;         /* w started */
	uint64_t next_probe; /* w.waited at the next look at a peer's return */
};

/* (k, ph): the position a step word of call k's phase ph compares by. */
static inline uint64_t tc__shm_pos(const struct tc__shm_ctx *c, int ph)
{
	return (c->k & TC__SHM_CALL_MASK) << 2 | (uint64_t)ph;
}

static inline uint64_t tc__shm_step(const struct tc__shm_ctx *c, int ph)
{
	return c->run | c->sig8 | tc__shm_pos(c, ph);
}

static inline struct tc__shm_block *tc__shm_blk(const struct tc__shm_ctx *c, int r)
{
	return &c->slots[r].b[c->k & 1];
}

static inline void tc__shm_publish(struct tc__shm_ctx *c, int ph)
{
	/* Release: publishes the block's data and, for the last phase, the
	 * end of every read of the peers' buffers; pairs with the acquire
	 * load of tc__shm_await() in the peers. */
	atomic_store_explicit(&tc__shm_blk(c, c->me)->step, tc__shm_step(c, ph), memory_order_release);
}

/* Rank r's area of call k's parity. */
static inline unsigned char *tc__shm_area(const struct tc__shm_ctx *c, int r)
{
	return (unsigned char *)(c->slots + c->p) + ((size_t)r * 2 + (c->k & 1)) * TC__SHM_AREA;
}

/* Rank r's entry of call k in its ring (a small bcast's root). */
static inline struct tc__shm_block *tc__shm_ring(const struct tc__shm_ctx *c, int r)
{
	return &c->slots[r].ring[c->k % TC__SHM_RING];
}

/* Aborts the team for rank r's other call k: TC_EMISMATCH. */
int tc__shm_mismatch(struct tc__shm_ctx *c, int r);

/* Waits until *word reaches pos (the run's bits equal, the low 40 at
 * least pos); with sig8, a word of call k (pos's call) must carry it; alt
 * (or NULL) the word where rank r's call k shows if it made another kind
 * of call.  0, TC_EMISMATCH (rank r makes another call k: the team is
 * aborted), TC_EABORTED, TC_ETIMEDOUT. */
int tc__shm_await_word(struct tc__shm_ctx *c, int r, const _Atomic uint64_t *word,
                       const _Atomic uint64_t *alt, uint64_t pos, int sig8);
/* Waits until rank r's step reaches (k, ph). */
int tc__shm_await(struct tc__shm_ctx *c, int r, int ph);
/* As tc__shm_await(), then takes r's block (tc__shm_take()). */
int tc__shm_await_data(struct tc__shm_ctx *c, int r, int ph);
/* Waits for every peer's (k, ph), sweeping their flags; with data, takes
 * each one's block; calls got(c, r) (NULL: none) for each as it arrives. */
int tc__shm_sweep(struct tc__shm_ctx *c, int ph, int data, void (*got)(struct tc__shm_ctx *, int));
/* Waits for every peer's (k, ph): after their last reads of call k when
 * ph is the call's last phase (last != 0). */
int tc__shm_await_all(struct tc__shm_ctx *c, int ph, int last);

/* What this rank knows of its peers (its own slot), reset at a new run. */
struct tc__shm_own *tc__shm_own(struct tc__shm_ctx *c);
/* Every peer is done with call j. */
void tc__shm_seen_done(struct tc__shm_ctx *c, int64_t j);
/* Checks the signature of rank r's block b of call k and takes its clock;
 * tc__shm_take(): of its flag's block. */
int tc__shm_take_from(struct tc__shm_ctx *c, int r, const struct tc__shm_block *b);
int tc__shm_take(struct tc__shm_ctx *c, int r);
/* This rank's block of call k (ring: its ring's entry) once no peer reads
 * it any more, its clock, signature and pointers written; tc__shm_fill():
 * the block. */
int tc__shm_claim(struct tc__shm_ctx *c, int ring, const void *in, void *out, struct tc__shm_block **bp);
int tc__shm_fill(struct tc__shm_ctx *c, const void *in, void *out, struct tc__shm_block **bp);
/* Marks this rank done with call k (its done word). */
void tc__shm_done(struct tc__shm_ctx *c);

/* The calls (lib/coll/shm_flat.c): 0 or the first error of a wait. */
int tc__shm_barrier(struct tc__shm_ctx *c);
int tc__shm_gather_all(struct tc__shm_ctx *c, int a2a); /* allgather, alltoall */
int tc__shm_bcast(struct tc__shm_ctx *c, int root);
int tc__shm_scatter(struct tc__shm_ctx *c, int root);
int tc__shm_gather(struct tc__shm_ctx *c, int root);
int tc__shm_allreduce_slices(struct tc__shm_ctx *c); /* allreduce shm */
int tc__shm_allreduce_flat(struct tc__shm_ctx *c);   /* allreduce shm_flag */
int tc__shm_reduce_scatter(struct tc__shm_ctx *c);

/* lib/coll/shm_tree.c: the barrier (reduce 0) or allreduce shm_tree; and
 * the groups: whether place describes two cache domains or more among
 * ranks [0, p), and tc__shm_tree_group() with known that answer. */
int tc__shm_tree(struct tc__shm_ctx *c, int reduce);
int tc__shm_tree_known(const struct tc_rank_place *place, int p);
void tc__shm_tree_span(const struct tc_rank_place *place, int known, int p, int r, int *lo, int *hi);

#endif /* TC_COLL_SHM_RUN_H */
