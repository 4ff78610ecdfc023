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
#include "core/internal.h"
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
	uint64_t k;           /* the call number */
	uint64_t run;         /* the team's start, shifted into place */
	uint64_t sig8;        /* the signature's byte, shifted into place */
	uint64_t sig;         /* the full signature */
	tc_time_t cmax;       /* the latest start clock seen */
	uint64_t m, esize;    /* the call's bytes (per rank) and element size */
	uint64_t src_off;     /* allgather, alltoall, reduce_scatter: where our
	                         block is in a peer's */
	int small;            /* the data travel in the flags or the areas */
	int in_area;          /* allgather, alltoall: in the areas, not the flags */
	int stream;           /* allgather, alltoall: OUT written around the caches
	                      (tc__shm_streams) */
	unsigned char *stage; /* a reduction's staged operands (TC__SHM_STAGE):
	                         peer r's at slot (r - me - 1) mod p, stage_len
	                         bytes each, from stage_off of its operand;
	                         NULL: combined out of the peers' buffers */
	uint64_t stage_off, stage_len;
	struct tc__waiter w;
	int done;          /* this rank's done word says call k */
	int waiting;       /* w started */
	uint64_t probe_at; /* tc__now_ns() of the next look at a peer's return
	                        (0: the call's first wait sets it) */
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

/* The protocol.  What a call does when the peers are where it needs them
 * is inline here: a look at a word, a check of a block, a claim of its own
 * block (a small bcast's 8 bytes cost about 70 ns a call between two CPUs,
 * and each call out of line a few of them); the waits are in
 * lib/coll/shm.c. */

/* Aborts the team for rank r's other call k: TC_EMISMATCH. */
int tc__shm_mismatch(struct tc__shm_ctx *c, int r);

/* Whether the word v has reached pos (the run's bits equal, the low 40 at
 * least pos): 1, 0 not yet, -1 it carries another call k (with sig8, a word
 * of pos's call whose signature differs). */
static inline int tc__shm_reached(const struct tc__shm_ctx *c, uint64_t v, uint64_t pos, int sig8)
{
	if ((v & ~TC__SHM_RUN_MASK) != c->run || (v & TC__SHM_POS_MASK) < pos)
		return 0;
	if (sig8 && (v & TC__SHM_POS_MASK) >> 2 == pos >> 2 && (v & TC__SHM_SIG_MASK) != c->sig8)
		return -1;
	return 1;
}

/* Whether rank r, whose *word has not reached pos (call k's), will not
 * make call k: it passed it by another kind of call (alt, as
 * tc__shm_await_word()'s), returned from its SPMD function, or made
 * another call k over the channels.  A look at a few of its lines: made
 * after a while of waiting, not at every look. */
int tc__shm_gone(const struct tc__shm_ctx *c, int r, const _Atomic uint64_t *word,
                 const _Atomic uint64_t *alt, uint64_t pos);

/* tc__shm_await_word()'s wait, once a first look found *word short of
 * pos: spin, then yield, with the team's aborts, timeouts and probes. */
int tc__shm_await_wait(struct tc__shm_ctx *c, int r, const _Atomic uint64_t *word,
                       const _Atomic uint64_t *alt, uint64_t pos, int sig8);

/* Waits until *word reaches pos (the run's bits equal, the low 40 at
 * least pos); with sig8, a word of call k (pos's call) must carry it; alt
 * (or NULL) the word where rank r's call k shows if it made another kind
 * of call.  0, TC_EMISMATCH (rank r makes another call k: the team is
 * aborted), TC_EABORTED, TC_ETIMEDOUT. */
static inline int tc__shm_await_word(struct tc__shm_ctx *c, int r, const _Atomic uint64_t *word,
                                     const _Atomic uint64_t *alt, uint64_t pos, int sig8)
{
	/* Acquire: pairs with the release stores of tc__shm_publish() and
	 * tc__shm_exec() in rank r: its block's data, and its reads of our
	 * buffers and flags, come before. */
	const int got = tc__shm_reached(c, atomic_load_explicit(word, memory_order_acquire), pos, sig8);
	if (got > 0)
		return TC_OK;
	return got < 0 ? tc__shm_mismatch(c, r) : tc__shm_await_wait(c, r, word, alt, pos, sig8);
}

/* Waits until rank r's step reaches (k, ph). */
static inline int tc__shm_await(struct tc__shm_ctx *c, int r, int ph)
{
	return tc__shm_await_word(c, r, &tc__shm_blk(c, r)->step, &tc__shm_ring(c, r)->step,
	                          tc__shm_pos(c, ph), 1);
}

/* Rank r's block b of call k (or its ring's entry), which has reached this
 * call: checks its full signature and takes its clock; tc__shm_take(): of
 * its flag's block. */
static inline int tc__shm_take_from(struct tc__shm_ctx *c, int r, const struct tc__shm_block *b)
{
	if (b->sig != c->sig)
		return tc__shm_mismatch(c, r);
	if (b->clock > c->cmax)
		c->cmax = b->clock;
	return TC_OK;
}

static inline int tc__shm_take(struct tc__shm_ctx *c, int r)
{
	return tc__shm_take_from(c, r, tc__shm_blk(c, r));
}

/* Waits for r's (k, ph) and reads its block's clock (and checks its full
 * signature): for the blocks a peer wrote in full. */
static inline int tc__shm_await_data(struct tc__shm_ctx *c, int r, int ph)
{
	int err = tc__shm_await(c, r, ph);
	return err ? err : tc__shm_take(c, r);
}

/* Waits for every peer's (k, ph), sweeping their flags; with data, takes
 * each one's block; calls got(c, r) (NULL: none) for each as it arrives. */
int tc__shm_sweep(struct tc__shm_ctx *c, int ph, int data, void (*got)(struct tc__shm_ctx *, int));
/* Waits for every peer's (k, ph): after their last reads of call k when
 * ph is the call's last phase (last != 0). */
int tc__shm_await_all(struct tc__shm_ctx *c, int ph, int last);

/* What this rank knows of its peers (its own slot), reset at a new run. */
static inline struct tc__shm_own *tc__shm_own(struct tc__shm_ctx *c)
{
	struct tc__shm_own *own = &c->slots[c->me].own;
	if (own->run != c->run) {
		*own = (struct tc__shm_own){.run = c->run,
		                            .seen_done = -1,
		                            .last_written = {-1, -1},
		                            .slices = {own->slices[0], own->slices[1]},
		                            .slices_cap = {own->slices_cap[0], own->slices_cap[1]},
		                            .stage = own->stage,
		                            .stage_cap = own->stage_cap};
		for (int i = 0; i < TC__SHM_RING; i++)
			own->ring_written[i] = -1;
	}
	return own;
}

/* Every peer is done with call j (it reached a step after its reads). */
static inline void tc__shm_seen_done(struct tc__shm_ctx *c, int64_t j)
{
	struct tc__shm_own *own = tc__shm_own(c);
	if (j > own->seen_done)
		own->seen_done = j;
}

/* tc__shm_claim()'s wait: every peer done with call `last`, read from
 * their done words; own->seen_done then says what they say. */
int tc__shm_claim_wait(struct tc__shm_ctx *c, struct tc__shm_own *own, int64_t last);

/* This rank's block of call k (ring: its ring's entry of call k), to be
 * written once no peer reads it any more: every peer done with L, the last
 * call that wrote it (shm.h).  Known from what this rank saw, or else read
 * from the peers' done words.  Its clock, signature and pointers written;
 * tc__shm_fill(): the block. */
static inline int tc__shm_claim(struct tc__shm_ctx *c, int ring, const void *in, void *out,
                                struct tc__shm_block **bp)
{
	struct tc__shm_own *own = tc__shm_own(c);
	int64_t *written =
	        ring ? &own->ring_written[c->k % TC__SHM_RING] : &own->last_written[c->k & 1];
	const int64_t last = *written;
	if (last >= 0 && own->seen_done < last) {
		int err = tc__shm_claim_wait(c, own, last);
		if (err)
			return err;
	}
	*written = (int64_t)c->k;
	struct tc__shm_block *b = ring ? tc__shm_ring(c, c->me) : tc__shm_blk(c, c->me);
	b->clock = c->proc->clock;
	b->sig = c->sig;
	b->in = in;
	b->out = out;
	*bp = b;
	return TC_OK;
}

static inline int tc__shm_fill(struct tc__shm_ctx *c, const void *in, void *out,
                               struct tc__shm_block **bp)
{
	return tc__shm_claim(c, 0, in, out, bp);
}

/* Marks this rank done with call k (its reads of the peers' buffers and
 * flags are over). */
static inline void tc__shm_done(struct tc__shm_ctx *c)
{
	/* Release: pairs with the acquire load of tc__shm_await_word() in a
	 * peer's tc__shm_fill() or tc__shm_allreduce_slices(). */
	atomic_store_explicit(&c->slots[c->me].done, c->run | (c->k + 1), memory_order_release);
	c->done = 1;
}

/* A call's state at its start on proc (tc__exec_begin() included), and
 * its end: this rank done with it, its clock, rounds and call count.
 * tc__shm_ctx_call(): the part of the start that is this call's (its
 * number, run bits, clock, waits), for a state whose team and call are
 * set already (_init's other fields: a persistent request's again). */
void tc__shm_ctx_init(struct tc__shm_ctx *c, struct tc_proc *proc, const struct tc__shm *shm,
                      const struct tc__shm_call *call, const struct tc__exec_io *io);
void tc__shm_ctx_call(struct tc__shm_ctx *c);
void tc__shm_ctx_end(struct tc__shm_ctx *c, const struct tc__shm_call *call);

/* The calls that one round completes (tc__shm_steppable()), in two
 * halves around the wait for every peer's (k, 1): _post claims this
 * rank's block (which may wait, unless tc__shm_claim_ready() said it is
 * free), writes what the peers read and publishes (k, 1); _got is what
 * takes a peer's block as it is found (NULL: nothing); _combine what
 * follows once every peer's is there (a reduction's sums). */
int tc__shm_round_post(struct tc__shm_ctx *c, enum tc_coll coll);
void (*tc__shm_round_got(enum tc_coll coll))(struct tc__shm_ctx *, int);
void tc__shm_round_combine(struct tc__shm_ctx *c, enum tc_coll coll);

/* Whether tc__shm_fill() would find this rank's block of call k free
 * without waiting: 1, or 0 when some peer has yet to be done with the
 * call that last wrote it (its done word, read once each): *late is that
 * peer, *pos what its done word must reach. */
int tc__shm_claim_ready(struct tc__shm_ctx *c, int *late, uint64_t *pos);

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
