/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shm.c - the native path of the machine's own algorithms (the
 * flags, their protocol and the waiting are described in lib/coll/shm.h).
 *
 * Per collective, call k, rank `me`, peers r != me (visited from me + 1 on,
 * so that the ranks do not all read the same peer first):
 *   barrier   publish (k, 1); wait for every (k, 1).
 *   allgather small (m <= TC__SHM_INLINE): the block in the flag; publish
 *             (k, 1); read every peer's flag.  Medium (p m <= TC__SHM_AREA):
 *             the same with the block in this rank's area of parity k & 1.
 *             Else: publish IN; wait for each peer's (k, 1) and copy its
 *             block out of its IN; publish (k, 2); wait for every (k, 2)
 *             (nobody reads our IN after).
 *   alltoall  as allgather, block me of every peer's IN, flag or area (the
 *             p blocks published, p m bytes, decide which; the own block is
 *             not copied there, nobody reads it).
 *   bcast     small: the root writes the data into its ring's entry of
 *             call k and returns; a non-root waits for it, copies,
 *             publishes (k, 2).  Else the root publishes its buffer and
 *             waits for every (k, 2).
 *   allreduce shm: publish IN and where this rank's slice will lie (its
 *             slice buffer of parity k & 1 when the slice is at most
 *             TC__SHM_SLICE, else OUT); wait for every (k, 1); reduce
 *             this rank's slice of every IN in rank order there; publish
 *             (k, 2); copy it to OUT; wait for each (k, 2) (the peer's
 *             reads of our IN are over) and copy the peer's slice.  Two
 *             synchronisations: a slice in the buffer is library memory,
 *             nobody reads the caller's buffers after.  A slice in OUT:
 *             publish done and wait for every peer's done (a third).
 *   allreduce shm_flag: every rank reduces the whole vector, in rank
 *             order, from the flags (small) or from the peers' IN (then a
 *             phase (k, 2) as allgather).
 *   scatter   as bcast, the root's p blocks (p m bytes) in its flag, its
 *             area (p m <= TC__SHM_AREA) or IN; a non-root copies block me.
 *   gather    every rank's block as allgather's (flag, area or IN); the
 *             root reads them all; where they were in IN, it publishes
 *             (k, 2), which the others wait for; else they return at once.
 *   reduce_scatter shm: as alltoall, but every rank reduces block me of
 *             the p contributions, in rank order, into OUT.
 *   barrier, allreduce shm_tree: members signal their group's leader in
 *             their flags (the vector in the flag's data), the leaders
 *             synchronise flat and release their members with their own
 *             flag (tc__shm_tree()).
 * The reductions are in rank order, (..((x_0 + x_1) + x_2) ..), on every
 * rank: every rank gets the same bits (shm_tree: the groups' results in
 * rank order, ((x_0 + x_1) + ...) + ((x_8 + x_9) + ...), the same bits on
 * every rank).
 */
#include "coll/shm.h"

#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "p2p/p2p.h"
#include "sched/exec.h"

/* The step word: [63:48] the team's start, [47:40] the signature, [39:2]
 * the call, [1:0] the phase. */
#define TC__SHM_CALL_MASK ((UINT64_C(1) << 38) - 1)
#define TC__SHM_POS_MASK ((UINT64_C(1) << 40) - 1)
#define TC__SHM_SIG_MASK (UINT64_C(0xff) << 40)
#define TC__SHM_RUN_MASK (TC__SHM_POS_MASK | TC__SHM_SIG_MASK)

/* How often a waiter looks whether the peer it waits for has returned from
 * its SPMD function (as lib/p2p/progress.c's probe does). */
#define TC__SHM_PROBE_NS (10 * 1000 * 1000ull)

/* When it first looks: after the waits of a call whose peers all make it
 * (a few hand-offs), so that those do not read the lines of the peer's
 * state that the peer writes at every call (its calls seen). */
#define TC__SHM_PROBE_FIRST_NS (20 * 1000ull)

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
static uint64_t tc__shm_pos(const struct tc__shm_ctx *c, int ph)
{
	return (c->k & TC__SHM_CALL_MASK) << 2 | (uint64_t)ph;
}

static uint64_t tc__shm_step(const struct tc__shm_ctx *c, int ph)
{
	return c->run | c->sig8 | tc__shm_pos(c, ph);
}

static struct tc__shm_block *tc__shm_blk(const struct tc__shm_ctx *c, int r)
{
	return &c->slots[r].b[c->k & 1];
}

static void tc__shm_publish(struct tc__shm_ctx *c, int ph)
{
	/* Release: publishes the block's data and, for the last phase, the
	 * end of every read of the peers' buffers; pairs with the acquire
	 * load of tc__shm_await() in the peers. */
	atomic_store_explicit(&tc__shm_blk(c, c->me)->step, tc__shm_step(c, ph), memory_order_release);
}

static int tc__shm_tree_known(const struct tc_rank_place *place, int p);
static void tc__shm_tree_span(const struct tc_rank_place *place, int known, int p, int r, int *lo,
                              int *hi);

static int tc__shm_mismatch(struct tc__shm_ctx *c, int r)
{
	tc__set_detail("%s (%s): rank %d makes another collective call",
	               c->io->call ? c->io->call : "collective", c->io->alg ? c->io->alg : "?", r);
	tc_team_abort(c->proc->team);
	return TC_EMISMATCH;
}

struct tc__shm *tc__shm_new(int p, const struct tc_rank_place *place)
{
	const size_t n = (size_t)p * sizeof(struct tc__shm_slot);
	struct tc__shm *shm = calloc(1, sizeof *shm);
	if (!shm)
		return NULL;
	shm->p = p;
	shm->slots = aligned_alloc(128, n + (size_t)p * 2 * TC__SHM_AREA);
	shm->lead = malloc(((size_t)p + 1) * sizeof *shm->lead);
	shm->group = malloc((size_t)p * sizeof *shm->group);
	if (!shm->slots || !shm->lead || !shm->group) {
		free(shm->slots);
		free(shm->lead);
		free(shm->group);
		free(shm);
		return NULL;
	}
	memset(shm->slots, 0, n);
	/* Walking the groups from rank 0: O(p) per group's bounds, once. */
	const int known = tc__shm_tree_known(place, p);
	for (int s = 0, lo, hi; s < p; s = hi) {
		tc__shm_tree_span(place, known, p, s, &lo, &hi);
		for (int r = lo; r < hi; r++)
			shm->group[r] = shm->ngroups;
		shm->lead[shm->ngroups++] = lo;
	}
	shm->lead[shm->ngroups] = p;
	return shm;
}

void tc__shm_free(struct tc__shm *shm)
{
	if (!shm)
		return;
	for (int r = 0; r < shm->p; r++) {
		free(shm->slots[r].own.slices[0]);
		free(shm->slots[r].own.slices[1]);
	}
	free(shm->slots);
	free(shm->lead);
	free(shm->group);
	free(shm);
}

void tc__shm_restart(struct tc__shm *shm)
{
	if (!shm)
		return;
	for (int r = 0; r < shm->p; r++) {
		struct tc__shm_slot *s = &shm->slots[r];
		atomic_store_explicit(&s->b[0].step, 0, memory_order_relaxed);
		atomic_store_explicit(&s->b[1].step, 0, memory_order_relaxed);
		for (int i = 0; i < TC__SHM_RING; i++)
			atomic_store_explicit(&s->ring[i].step, 0, memory_order_relaxed);
		atomic_store_explicit(&s->done, 0, memory_order_relaxed);
		s->own.run = UINT64_MAX; /* never a run's bits: tc__shm_own() resets */
	}
}

/* Rank r's area of call k's parity. */
static unsigned char *tc__shm_area(const struct tc__shm_ctx *c, int r)
{
	return (unsigned char *)(c->slots + c->p) + ((size_t)r * 2 + (c->k & 1)) * TC__SHM_AREA;
}

/* Waits until *word reaches pos (the run's bits equal, the low 40 at
 * least pos); with sig8, a word of call k (pos's call) must carry it.  0,
 * TC_EMISMATCH (rank r makes another call k: the team is aborted),
 * TC_EABORTED, TC_ETIMEDOUT. */
/* Whether the word v has reached pos (the run's bits equal, the low 40 at
 * least pos): 1, 0 not yet, -1 it carries another call k (with sig8, a word
 * of pos's call whose signature differs). */
static int tc__shm_reached(const struct tc__shm_ctx *c, uint64_t v, uint64_t pos, int sig8)
{
	if ((v & ~TC__SHM_RUN_MASK) != c->run || (v & TC__SHM_POS_MASK) < pos)
		return 0;
	if (sig8 && (v & TC__SHM_POS_MASK) >> 2 == pos >> 2 && (v & TC__SHM_SIG_MASK) != c->sig8)
		return -1;
	return 1;
}

/* Whether rank r has passed call k (the call of pos) by another word than
 * the one awaited: alt, the word where its call k shows if it made
 * another kind of call (its block's step for a small bcast's ring entry,
 * and the converse), has reached call k, and the awaited word, read after
 * it, has not.  Rank r writes the two words of call k in program order, so
 * a word of a later call seen with acquire order makes its word of call k
 * visible.  alt NULL: none. */
static int tc__shm_passed_by(const struct tc__shm_ctx *c, const _Atomic uint64_t *word,
                             const _Atomic uint64_t *alt, uint64_t pos)
{
	/* Call k's first phase at least: a word never written (zero) says
	 * (0, 0), which no rank publishes. */
	return alt &&
	       tc__shm_reached(c, atomic_load_explicit(alt, memory_order_acquire),
	                       (pos >> 2) << 2 | 1, 0) &&
	       !tc__shm_reached(c, atomic_load_explicit(word, memory_order_acquire), pos, 0);
}

static int tc__shm_await_word(struct tc__shm_ctx *c, int r, const _Atomic uint64_t *word,
                              const _Atomic uint64_t *alt, uint64_t pos, int sig8)
{
	struct tc_team *team = c->proc->team;
	for (;;) {
		/* Acquire: pairs with the release stores of tc__shm_publish()
		 * and tc__shm_exec() in rank r: its block's data, and its reads
		 * of our buffers and flags, come before. */
		const int got = tc__shm_reached(c, atomic_load_explicit(word, memory_order_acquire),
		                                pos, sig8);
		if (got)
			return got > 0 ? TC_OK : tc__shm_mismatch(c, r);
		if (!c->waiting) {
			tc__waiter_init(&c->w, team->wait, team->spin_ns, team->yield_ns,
			                atomic_load(&team->timeout_ns));
			c->waiting = 1;
		}
		if (tc__wait_spin(&c->w))
			continue;
		/* Relaxed: a hint; the abort's code comes from the flag alone. */
		if (atomic_load_explicit(&team->aborted, memory_order_relaxed))
			return TC_EABORTED;
		const enum tc__wait_step step = tc__wait_next(&c->w, 0);
		if (c->w.waited >= c->next_probe) {
			/* Rank r returned from its SPMD function without making
			 * this call (a skipped collective): conclusive, unless its
			 * word came in before (the acquire makes it visible). */
			c->next_probe = c->w.waited + TC__SHM_PROBE_NS;
			if (tc__shm_passed_by(c, word, alt, pos))
				return tc__shm_mismatch(c, r);
			const struct tc_proc *n = &team->procs[r];
			const uint64_t want = tc__call_seen(c->k, c->proc->coll_sig);
			const uint64_t seen = atomic_load_explicit(&n->calls_seen[c->k % TC__CALLS_SEEN],
			                                           memory_order_relaxed);
			if (atomic_load_explicit(&n->attached, memory_order_relaxed) &&
			    (atomic_load_explicit(&n->ws.state, memory_order_acquire) == TC__WS_RETURNED ||
			     (c->proc->coll_sig && (seen >> 40) == (want >> 40) && seen != want))) {
				if (!tc__shm_reached(c, atomic_load_explicit(word, memory_order_acquire),
				                     pos, 0))
					return tc__shm_mismatch(c, r);
			}
		}
		switch (step) {
		case TC__WAIT_TIMEOUT:
			tc__progress_timed_out(c->proc, c->w.waited);
			return TC_ETIMEDOUT;
		case TC__WAIT_PARK:
			tc__yield(); /* nothing rings a doorbell for a flag */
			break;
		default:
			break;
		}
	}
}

/* Rank r's entry of call k in its ring (a small bcast's root). */
static struct tc__shm_block *tc__shm_ring(const struct tc__shm_ctx *c, int r)
{
	return &c->slots[r].ring[c->k % TC__SHM_RING];
}

/* Waits until rank r's step reaches (k, ph). */
static int tc__shm_await(struct tc__shm_ctx *c, int r, int ph)
{
	return tc__shm_await_word(c, r, &tc__shm_blk(c, r)->step, &tc__shm_ring(c, r)->step,
	                          tc__shm_pos(c, ph), 1);
}

/* What this rank knows of its peers (its own slot), reset at a new run. */
static struct tc__shm_own *tc__shm_own(struct tc__shm_ctx *c)
{
	struct tc__shm_own *own = &c->slots[c->me].own;
	if (own->run != c->run) {
		*own = (struct tc__shm_own){.run = c->run,
		                            .seen_done = -1,
		                            .last_written = {-1, -1},
		                            .slices = {own->slices[0], own->slices[1]},
		                            .slices_cap = {own->slices_cap[0], own->slices_cap[1]}};
		for (int i = 0; i < TC__SHM_RING; i++)
			own->ring_written[i] = -1;
	}
	return own;
}

/* Every peer is done with call j (it reached a step after its reads). */
static void tc__shm_seen_done(struct tc__shm_ctx *c, int64_t j)
{
	struct tc__shm_own *own = tc__shm_own(c);
	if (j > own->seen_done)
		own->seen_done = j;
}

/* Rank r's block b of call k (or its ring's entry), which has reached this
 * call: checks its full signature and takes its clock. */
static int tc__shm_take_from(struct tc__shm_ctx *c, int r, const struct tc__shm_block *b)
{
	if (b->sig != c->sig)
		return tc__shm_mismatch(c, r);
	if (b->clock > c->cmax)
		c->cmax = b->clock;
	return TC_OK;
}

static int tc__shm_take(struct tc__shm_ctx *c, int r)
{
	return tc__shm_take_from(c, r, tc__shm_blk(c, r));
}

/* Waits for r's (k, ph) and reads its block's clock (and checks its full
 * signature): for the blocks a peer wrote in full. */
static int tc__shm_await_data(struct tc__shm_ctx *c, int r, int ph)
{
	int err = tc__shm_await(c, r, ph);
	return err ? err : tc__shm_take(c, r);
}

/* The most ranks whose flags a sweep watches together, and its passes
 * before the peers still awaited are waited for one at a time. */
#define TC__SHM_SWEEP_MAX 256
#define TC__SHM_SWEEP_PASSES 1024

/* Waits for every peer's (k, ph); with data, takes each one's block
 * (tc__shm_take()); calls got(c, r) (NULL: none) for each as it arrives,
 * in no set order.  Each pass looks at every peer still awaited, so that
 * the misses on their flags' lines overlap; waited for one at a time,
 * each load waits for the one before, and p - 1 peers cost p - 1
 * hand-offs in a row (a barrier of 16 ranks on a 16-core Xeon guest:
 * 2.1 us, about 130 ns a flag; swept, 0.76 us).  The passes spin: only on a team whose waiters
 * spin (spin_ns, not oversubscribed), at most TC__SHM_SWEEP_PASSES of
 * them; the peers then still awaited are waited for one at a time under
 * the team's policy (tc__shm_await_word(): yielding, timeouts, probes). */
static int tc__shm_sweep(struct tc__shm_ctx *c, int ph, int data, void (*got)(struct tc__shm_ctx *, int))
{
	const int p = c->p, sweep = p <= TC__SHM_SWEEP_MAX && c->proc->team->spin_ns;
	const uint64_t pos = tc__shm_pos(c, ph);
	uint64_t left[TC__SHM_SWEEP_MAX / 64] = {0};
	int nleft = p - 1, err;
	for (int i = 1; sweep && i < p; i++)
		left[i / 64] |= UINT64_C(1) << (i % 64);
	for (int pass = 0; sweep && nleft && pass < TC__SHM_SWEEP_PASSES; pass++) {
		for (int w = 0; w * 64 < p; w++) {
			for (uint64_t bits = left[w]; bits; bits &= bits - 1) {
				const int i = w * 64 + __builtin_ctzll(bits), r = (c->me + i) % p;
				/* Acquire: as tc__shm_await_word(). */
				const int s =
				        tc__shm_reached(c,
				                        atomic_load_explicit(&tc__shm_blk(c, r)->step,
				                                             memory_order_acquire),
				                        pos, 1);
				if (!s)
					continue;
				if (s < 0)
					return tc__shm_mismatch(c, r);
				if (data && (err = tc__shm_take(c, r)))
					return err;
				if (got)
					got(c, r);
				left[w] &= ~(UINT64_C(1) << (i % 64));
				nleft--;
			}
		}
		if (nleft)
			tc__cpu_relax();
	}
	for (int i = 1; nleft && i < p; i++) {
		if (sweep && !(left[i / 64] >> (i % 64) & 1))
			continue;
		const int r = (c->me + i) % p;
		if ((err = data ? tc__shm_await_data(c, r, ph) : tc__shm_await(c, r, ph)))
			return err;
		if (got)
			got(c, r);
	}
	return TC_OK;
}

/* Waits for every peer's (k, ph): after their last reads of call k when
 * ph is the call's last phase (last != 0). */
static int tc__shm_await_all(struct tc__shm_ctx *c, int ph, int last)
{
	int err = tc__shm_sweep(c, ph, 0, NULL);
	if (!err)
		tc__shm_seen_done(c, (int64_t)c->k - !last);
	return err;
}

/* This rank's block of call k (ring: its ring's entry of call k), to be
 * written once no peer reads it any more: every peer done with L, the last
 * call that wrote it (shm.h).  Known from what this rank saw, or else read
 * from the peers' done words. */
static int tc__shm_claim(struct tc__shm_ctx *c, int ring, const void *in, void *out,
                         struct tc__shm_block **bp)
{
	struct tc__shm_own *own = tc__shm_own(c);
	int64_t *written =
	        ring ? &own->ring_written[c->k % TC__SHM_RING] : &own->last_written[c->k & 1];
	const int64_t last = *written;
	if (last >= 0 && own->seen_done < last) {
		/* What the words say, not only what this call needs: a peer
		 * usually is done with later calls too (a small bcast's reader
		 * with the call before this one), and the next call of the
		 * other parity then reads no word. */
		uint64_t seen = UINT64_MAX;
		for (int i = 1; i < c->p; i++) {
			const int r = (c->me + i) % c->p;
			int err = tc__shm_await_word(c, r, &c->slots[r].done, NULL,
			                             (uint64_t)last + 1, 0);
			if (err)
				return err;
			/* Acquire, as the wait's: the word only grows, and the
			 * peer's reads of every call it says are done come
			 * before this rank's later writes of their blocks. */
			const uint64_t v =
			        atomic_load_explicit(&c->slots[r].done, memory_order_acquire) &
			        TC__SHM_POS_MASK;
			if (v < seen)
				seen = v;
		}
		own->seen_done = (int64_t)seen - 1;
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

static int tc__shm_fill(struct tc__shm_ctx *c, const void *in, void *out, struct tc__shm_block **bp)
{
	return tc__shm_claim(c, 0, in, out, bp);
}

/* ---- the collectives ---------------------------------------------------- */

/* Every peer's (k, 1), with its block's data; calls got(c, r) after each
 * (NULL: none). */
static int tc__shm_read_all(struct tc__shm_ctx *c, void (*got)(struct tc__shm_ctx *, int))
{
	int err = tc__shm_sweep(c, 1, 1, got);
	if (!err)
		tc__shm_seen_done(c, (int64_t)c->k - 1);
	return err;
}

static int tc__shm_barrier(struct tc__shm_ctx *c)
{
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, NULL, NULL, &b);
	if (err)
		return err;
	tc__shm_publish(c, 1);
	return tc__shm_read_all(c, NULL);
}

/* allgather and alltoall: rank r's block m of OUT, out of r's flag, area
 * or IN (alltoall: block me of r's p blocks). */
static void tc__shm_got_block(struct tc__shm_ctx *c, int r)
{
	const struct tc__shm_block *pb = tc__shm_blk(c, r);
	const unsigned char *src = c->in_area ? tc__shm_area(c, r)
	                           : c->small ? pb->data
	                                      : (const unsigned char *)pb->in;
	if (c->m)
		memcpy((unsigned char *)c->io->out + (uint64_t)r * c->m, src + c->src_off, c->m);
}

/* Where the call's published bytes travel: the flag (at most
 * TC__SHM_INLINE), this rank's area (the call's output of p m bytes at
 * most TC__SHM_AREA), else the caller's buffer. */
static enum tc__shm_via tc__shm_route_of(int p, uint64_t m, uint64_t published)
{
	return published <= TC__SHM_INLINE       ? TC__SHM_VIA_FLAG
	       : (uint64_t)p * m <= TC__SHM_AREA ? TC__SHM_VIA_AREA
	                                         : TC__SHM_VIA_IN;
}

static void tc__shm_route(struct tc__shm_ctx *c, uint64_t published)
{
	const enum tc__shm_via v = tc__shm_route_of(c->p, c->m, published);
	c->in_area = v == TC__SHM_VIA_AREA;
	c->small = v != TC__SHM_VIA_IN;
}

struct tc__shm_layout tc__shm_layout(enum tc_coll coll, const char *alg, int p, uint64_t m)
{
	struct tc__shm_layout l = {.via = TC__SHM_VIA_IN, .syncs = 1};
	const uint64_t pm = (uint64_t)(p > 0 ? p : 1) * m;
	switch (coll) {
	case TC_COLL_BARRIER:
		l.via = TC__SHM_VIA_FLAG;
		break;
	case TC_COLL_ALLGATHER:
	case TC_COLL_GATHER:
		l.via = tc__shm_route_of(p, m, m);
		break;
	case TC_COLL_REDUCE_SCATTER:
		l.after_sweep = true; /* tc__shm_reduce_scatter */
		                      /* fall through */
	case TC_COLL_ALLTOALL:
	case TC_COLL_SCATTER:
		l.via = tc__shm_route_of(p, m, pm);
		l.per_reader = true;
		break;
	case TC_COLL_BCAST:
		l.via = m <= TC__SHM_INLINE ? TC__SHM_VIA_FLAG : TC__SHM_VIA_IN;
		break;
	case TC_COLL_ALLREDUCE:
		l.after_sweep = true; /* tc__shm_reduce after tc__shm_read_all */
		if (alg && !strcmp(alg, "shm")) {
			/* The slices: a second synchronisation, and a third
			 * where a slice exceeds its buffer (it lies in OUT). */
			l.syncs = m / (uint64_t)(p > 0 ? p : 1) <= TC__SHM_SLICE ? 2 : 3;
			l.via = TC__SHM_VIA_IN;
		} else {
			l.via = alg && !strcmp(alg, "shm_tree") ? TC__SHM_VIA_FLAG
			        : m <= TC__SHM_INLINE           ? TC__SHM_VIA_FLAG
			                                        : TC__SHM_VIA_IN;
		}
		break;
	default:
		break;
	}
	/* Readers of IN: a second synchronisation, after which the owner
	 * may change it. */
	if (l.via == TC__SHM_VIA_IN && l.syncs < 2 && m)
		l.syncs = 2;
	return l;
}

/* Copies the published bytes of in into this rank's flag b or area, once
 * tc__shm_fill() has said that no peer reads them any more: `published`
 * bytes, less the block of m at c->src_off where skip is set (this rank's
 * own, which no peer reads). */
static void tc__shm_put(struct tc__shm_ctx *c, struct tc__shm_block *b, const unsigned char *in,
                        uint64_t published, int skip)
{
	if (!c->small || !published)
		return;
	unsigned char *dst = c->in_area ? tc__shm_area(c, c->me) : b->data;
	if (skip) {
		memcpy(dst, in, c->src_off);
		memcpy(dst + c->src_off + c->m, in + c->src_off + c->m, published - c->src_off - c->m);
	} else {
		memcpy(dst, in, published);
	}
}

static int tc__shm_gather_all(struct tc__shm_ctx *c, int a2a)
{
	const uint64_t m = c->m;
	const unsigned char *in = c->io->in;
	c->src_off = a2a ? (uint64_t)c->me * m : 0;
	if (m)
		memcpy((unsigned char *)c->io->out + (uint64_t)c->me * m, in + c->src_off, m);
	const uint64_t published = a2a ? (uint64_t)c->p * m : m;
	tc__shm_route(c, published);
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, in, c->io->out, &b);
	if (err)
		return err;
	tc__shm_put(c, b, in, published, a2a); /* alltoall's own block stays out */
	tc__shm_publish(c, 1);
	err = tc__shm_read_all(c, tc__shm_got_block);
	if (err || c->small || !m)
		return err;
	tc__shm_publish(c, 2);
	return tc__shm_await_all(c, 2, 1);
}

static int tc__shm_bcast(struct tc__shm_ctx *c, int root)
{
	const uint64_t m = c->m;
	const int small = m <= TC__SHM_INLINE;
	if (c->me == root) {
		struct tc__shm_block *b;
		int err = tc__shm_claim(c, small, c->io->out, c->io->out, &b);
		if (err)
			return err;
		if (!small) {
			tc__shm_publish(c, 1);
			return tc__shm_await_all(c, 2, 1);
		}
		if (m)
			memcpy(b->data, c->io->out, m);
		/* Release: the entry's data before its step, as
		 * tc__shm_publish(). */
		atomic_store_explicit(&b->step, tc__shm_step(c, 1), memory_order_release);
		return TC_OK;
	}
	/* A non-root writes no data of its own, only its step. */
	const struct tc__shm_block *rb = small ? tc__shm_ring(c, root) : tc__shm_blk(c, root);
	int err = small ? tc__shm_await_word(c, root, &rb->step, &tc__shm_blk(c, root)->step,
	                                     tc__shm_pos(c, 1), 1)
	                : tc__shm_await(c, root, 1);
	if (!err)
		err = tc__shm_take_from(c, root, rb);
	if (err)
		return err;
	if (m)
		memcpy(c->io->out, small ? rb->data : (const unsigned char *)rb->in, m);
	/* The root's next entries, in case more small broadcasts of it
	 * follow: where it runs ahead, they are written already, and their
	 * hand-offs overlap this call's end (complete:2, 8 bytes back to back:
	 * 180 -> 105 ns a call; four entries ahead: 130-150). */
	if (small)
		for (unsigned a = 1; a <= TC__SHM_RING_AHEAD; a++)
			__builtin_prefetch(&c->slots[root].ring[(c->k + a) % TC__SHM_RING], 0, 3);
	tc__shm_publish(c, 2);
	return TC_OK;
}

/* scatter: the root's p blocks published (flag, area or IN); every other
 * rank copies its own out and says so, which the root waits for unless
 * they were in the flag or the area (as bcast). */
static int tc__shm_scatter(struct tc__shm_ctx *c, int root)
{
	const uint64_t m = c->m, pm = (uint64_t)c->p * m;
	tc__shm_route(c, pm);
	if (c->me == root) {
		const unsigned char *in = c->io->in;
		struct tc__shm_block *b;
		int err = tc__shm_fill(c, in, c->io->out, &b);
		if (err)
			return err;
		c->src_off = (uint64_t)root * m;
		if (m)
			memcpy(c->io->out, in + c->src_off, m);
		tc__shm_put(c, b, in, pm, 1);
		tc__shm_publish(c, 1);
		return c->small || !m ? TC_OK : tc__shm_await_all(c, 2, 1);
	}
	/* A non-root writes no data of its own, only its step. */
	int err = tc__shm_await_data(c, root, 1);
	if (err)
		return err;
	const struct tc__shm_block *rb = tc__shm_blk(c, root);
	const unsigned char *src = c->in_area ? tc__shm_area(c, root)
	                           : c->small ? rb->data
	                                      : (const unsigned char *)rb->in;
	if (m)
		memcpy(c->io->out, src + (uint64_t)c->me * m, m);
	tc__shm_publish(c, 2);
	return TC_OK;
}

/* gather: every rank's block published (flag, area or IN), the root
 * copies them all; a rank whose block is in its flag or area returns at
 * once, one whose IN the root reads waits for the root's (k, 2). */
static int tc__shm_gather(struct tc__shm_ctx *c, int root)
{
	const uint64_t m = c->m;
	const unsigned char *in = c->io->in;
	c->src_off = 0;
	tc__shm_route(c, m);
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, in, c->io->out, &b);
	if (err)
		return err;
	if (c->me != root) {
		tc__shm_put(c, b, in, m, 0);
		tc__shm_publish(c, 1);
		return c->small ? TC_OK : tc__shm_await_data(c, root, 2);
	}
	if (m)
		memcpy((unsigned char *)c->io->out + (uint64_t)root * m, in, m);
	tc__shm_publish(c, 1);
	err = tc__shm_read_all(c, tc__shm_got_block);
	if (!err && !c->small)
		tc__shm_publish(c, 2); /* every IN read */
	return err;
}

/* Rank r's contribution to a reduction: our own IN, or r's area, flag or
 * IN. */
static const void *tc__shm_x(const struct tc__shm_ctx *c, int r)
{
	if (r == c->me)
		return c->io->in;
	return c->in_area ? (const void *)tc__shm_area(c, r)
	       : c->small ? (const void *)tc__shm_blk(c, r)->data
	                  : tc__shm_blk(c, r)->in;
}

/* out[0, len) = x_0 + x_1 + ... + x_{p-1} at [off, off + len), in rank
 * order. */
static void tc__shm_reduce(const struct tc__shm_ctx *c, unsigned char *out, uint64_t off, uint64_t len)
{
	const struct tc__exec_io *io = c->io;
	if (!len)
		return;
	io->combine(out, (const unsigned char *)tc__shm_x(c, 0) + off,
	            (const unsigned char *)tc__shm_x(c, 1) + off, len, io->combine_ctx);
	for (int r = 2; r < c->p; r++)
		io->combine(out, out, (const unsigned char *)tc__shm_x(c, r) + off, len, io->combine_ctx);
}

/* This rank's slice buffer of call k's parity, of at least len bytes:
 * (re)allocated when smaller, which no peer reads then (tc__shm_fill():
 * every peer is done with the last call of this parity); NULL when out of
 * memory. */
static unsigned char *tc__shm_slice_buf(struct tc__shm_ctx *c, uint64_t len)
{
	struct tc__shm_own *own = tc__shm_own(c);
	const unsigned par = (unsigned)(c->k & 1);
	if (own->slices_cap[par] < len) {
		free(own->slices[par]);
		const size_t cap = (len + 127) & ~(size_t)127;
		own->slices[par] = aligned_alloc(128, cap);
		own->slices_cap[par] = own->slices[par] ? cap : 0;
	}
	return own->slices[par];
}

/* Marks this rank done with call k (its reads of the peers' buffers and
 * flags are over). */
static void tc__shm_done(struct tc__shm_ctx *c)
{
	/* Release: pairs with the acquire load of tc__shm_await_word() in a
	 * peer's tc__shm_fill() or tc__shm_allreduce_slices(). */
	atomic_store_explicit(&c->slots[c->me].done, c->run | (c->k + 1), memory_order_release);
	c->done = 1;
}

/* allreduce shm: rank r's reduced slice into OUT. */
static void tc__shm_got_slice(struct tc__shm_ctx *c, int r)
{
	uint64_t off, len;
	tc__block(c->m, c->esize, c->p, r, &off, &len);
	if (len)
		memcpy((unsigned char *)c->io->out + off, tc__shm_blk(c, r)->out, len);
}

/* allreduce shm: this rank's slice of everyone's IN, then the others'.
 * The reduced slice goes where the peers copy it from: this rank's slice
 * buffer of the call's parity where it fits (rewritten at a later call of
 * that parity only once every peer is done with this one, as the block,
 * tc__shm_fill()), else OUT.  IN is free once every peer has reached
 * (k, 2), which this rank waits for to copy the peers' slices; so with the
 * slice in the buffer it returns then.  With the slice in OUT, which the
 * caller may change after the return, it first waits until every peer is
 * done with the call (its done word).  The choice is each rank's own: a
 * rank's readers find the slice through its block (`out`). */
static int tc__shm_allreduce_slices(struct tc__shm_ctx *c)
{
	const int p = c->p, me = c->me;
	unsigned char *out = c->io->out;
	uint64_t off, len;
	tc__block(c->m, c->esize, p, me, &off, &len);
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, c->io->in, out, &b);
	if (err)
		return err;
	unsigned char *mine = len && len <= TC__SHM_SLICE ? tc__shm_slice_buf(c, len) : NULL;
	b->out = mine ? mine : out + off;
	tc__shm_publish(c, 1);
	if ((err = tc__shm_read_all(c, NULL)))
		return err;
	tc__shm_reduce(c, b->out, off, len);
	tc__shm_publish(c, 2);
	if (mine)
		memcpy(out + off, mine, len);
	err = tc__shm_sweep(c, 2, 0, tc__shm_got_slice);
	if (err || mine || !len)
		return err; /* nobody reads OUT */
	tc__shm_done(c);
	for (int i = 1; i < p; i++) {
		const int r = (me + i) % p;
		if ((err = tc__shm_await_word(c, r, &c->slots[r].done, NULL, c->k + 1, 0)))
			return err;
	}
	tc__shm_seen_done(c, (int64_t)c->k);
	return TC_OK;
}

/* allreduce shm_flag: the whole vector from every rank, in rank order. */
static int tc__shm_allreduce_flat(struct tc__shm_ctx *c)
{
	c->small = c->m <= TC__SHM_INLINE;
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, c->io->in, c->io->out, &b);
	if (err)
		return err;
	if (c->small && c->m)
		memcpy(b->data, c->io->in, c->m);
	tc__shm_publish(c, 1);
	if ((err = tc__shm_read_all(c, NULL)))
		return err;
	tc__shm_reduce(c, c->io->out, 0, c->m);
	if (c->small)
		return TC_OK;
	tc__shm_publish(c, 2);
	return tc__shm_await_all(c, 2, 1);
}

/* reduce_scatter shm: block `me` of everyone's IN (or of the p blocks in
 * their flags or areas, the own block left out), reduced in rank order
 * into OUT; a second synchronisation where the peers read our IN. */
static int tc__shm_reduce_scatter(struct tc__shm_ctx *c)
{
	const uint64_t m = c->m, pm = (uint64_t)c->p * m;
	const unsigned char *in = c->io->in;
	c->src_off = (uint64_t)c->me * m;
	tc__shm_route(c, pm);
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, in, c->io->out, &b);
	if (err)
		return err;
	tc__shm_put(c, b, in, pm, 1);
	tc__shm_publish(c, 1);
	if ((err = tc__shm_read_all(c, NULL)))
		return err;
	tc__shm_reduce(c, c->io->out, c->src_off, m);
	if (c->small || !m)
		return TC_OK;
	tc__shm_publish(c, 2);
	return tc__shm_await_all(c, 2, 1);
}

/* ---- shm_tree: groups, leaders, release ----------------------------------- */

/* Whether place describes two cache domains or more among ranks [0, p). */
static int tc__shm_tree_known(const struct tc_rank_place *place, int p)
{
	if (!place)
		return 0;
	int two = 0;
	for (int r = 0; r < p; r++) {
		if (place[r].cache < 0)
			return 0;
		two |= place[r].cache != place[0].cache;
	}
	return two;
}

/* tc__shm_tree_group() with known = tc__shm_tree_known(place, p). */
static void tc__shm_tree_span(const struct tc_rank_place *place, int known, int p, int r, int *lo,
                              int *hi)
{
	int a = 0, b = p;
	if (known) {
		for (a = r; a > 0 && place[a - 1].cache == place[r].cache; a--)
			;
		for (b = r + 1; b < p && place[b].cache == place[r].cache; b++)
			;
	}
	/* Group j of the run [a, b) of n ranks: [a + j n / c, a + (j + 1) n / c). */
	const int64_t n = b - a, cnt = (n + TC__SHM_TREE_FANIN - 1) / TC__SHM_TREE_FANIN, x = r - a;
	int64_t j = x * cnt / n;
	while ((j + 1) * n / cnt <= x)
		j++;
	while (j * n / cnt > x)
		j--;
	*lo = a + (int)(j * n / cnt);
	*hi = a + (int)((j + 1) * n / cnt);
}

void tc__shm_tree_group(const struct tc_rank_place *place, int p, int r, int *lo, int *hi)
{
	tc__shm_tree_span(place, tc__shm_tree_known(place, p), p, r, lo, hi);
}

/* Where a leader's flag carries the team's latest start clock for its
 * members (after the result of at most TC__SHM_TREE_MAX bytes). */
#define TC__SHM_TREE_CLOCK (TC__SHM_INLINE - sizeof(tc_time_t))
_Static_assert(TC__SHM_TREE_MAX <= TC__SHM_TREE_CLOCK, "the result and the clock share the flag");
_Static_assert(TC__SHM_TREE_MAX <= TC__SHM_AREA, "a group's partial result fits its leader's area");

/* barrier (reduce = 0) and allreduce shm_tree, call k, the group [lo, hi)
 * of this rank (the team's groups, struct tc__shm: tc__shm_tree_group() of
 * its placement, derived once):
 *   member  its vector in its flag; publish (k, 1); wait for the leader's
 *           (k, 3); the result and the team's latest start clock out of
 *           the leader's flag.
 *   leader  wait for each member's (k, 1), reducing its group's vectors in
 *           rank order (x_lo + x_lo+1) + ... into its area; with one group,
 *           straight into OUT and on to the release.  Else the group's
 *           latest start clock in its block; publish (k, 2); wait for every
 *           leader's (k, 2), in rank order, reducing their areas into OUT;
 *           then the result and the team's clock into its flag; publish
 *           (k, 3), which releases its members.
 * A leader's (k, 3) implies every leader's (k, 2), hence every rank's
 * (k, 1): every rank is done with the calls before k (the rule of
 * tc__shm_fill()).  The leader writes its area and clock before (k, 2) and
 * its flag's data before (k, 3), each read by others only after it. */
static int tc__shm_tree(struct tc__shm_ctx *c, int reduce)
{
	const struct tc__exec_io *io = c->io;
	const struct tc__shm *shm = c->shm;
	const uint64_t m = reduce ? c->m : 0;
	if (m > TC__SHM_TREE_MAX)
		return TC_ENOTSUP; /* the generator refuses it first */
	const int grp = shm->group[c->me], lo = shm->lead[grp], hi = shm->lead[grp + 1];
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, io->in, io->out, &b);
	if (err)
		return err;
	if (c->me != lo) {
		if (m)
			memcpy(b->data, io->in, m);
		tc__shm_publish(c, 1);
		if ((err = tc__shm_await_data(c, lo, 3)))
			return err;
		const struct tc__shm_block *lb = tc__shm_blk(c, lo);
		tc_time_t t;
		memcpy(&t, lb->data + TC__SHM_TREE_CLOCK, sizeof t);
		if (t > c->cmax)
			c->cmax = t;
		if (m)
			memcpy(io->out, lb->data, m);
		tc__shm_seen_done(c, (int64_t)c->k - 1);
		return TC_OK;
	}
	const int one = lo == 0 && hi == c->p;
	unsigned char *part = one ? io->out : tc__shm_area(c, c->me);
	if (m)
		memcpy(part, io->in, m);
	for (int r = lo + 1; r < hi; r++) {
		if ((err = tc__shm_await_data(c, r, 1)))
			return err;
		if (m)
			io->combine(part, part, tc__shm_blk(c, r)->data, m, io->combine_ctx);
	}
	if (!one) {
		b->clock = c->cmax;
		tc__shm_publish(c, 2);
		for (int j = 0; j < shm->ngroups; j++) {
			const int l = shm->lead[j];
			const unsigned char *x = part;
			if (l != c->me) {
				if ((err = tc__shm_await_data(c, l, 2)))
					return err;
				x = tc__shm_area(c, l);
			}
			if (m && j == 0)
				memcpy(io->out, x, m);
			else if (m)
				io->combine(io->out, io->out, x, m, io->combine_ctx);
		}
	}
	if (m)
		memcpy(b->data, io->out, m);
	memcpy(b->data + TC__SHM_TREE_CLOCK, &c->cmax, sizeof c->cmax);
	tc__shm_publish(c, 3);
	tc__shm_seen_done(c, (int64_t)c->k - 1);
	return TC_OK;
}

int tc__shm_exec(struct tc_proc *proc, const struct tc__shm *shm, const struct tc__centry *e,
                 const struct tc__exec_io *io)
{
	struct tc_team *team = proc->team;
	struct tc__shm_ctx c = {.proc = proc,
	                        .shm = shm,
	                        .slots = shm->slots,
	                        .io = io,
	                        .p = team->p,
	                        .me = proc->rank,
	                        .k = proc->ncalls,
	                        .run = (team->start_ns & 0xffff) << 48,
	                        .sig = io->sig ^ (uint64_t)(unsigned)io->tag,
	                        .cmax = proc->clock,
	                        .next_probe = TC__SHM_PROBE_FIRST_NS};
	c.sig8 = (c.sig & 0xff) << 40;
	proc->cur_call = io->call ? io->call : "collective";
	proc->cur_alg = io->alg;
	/* The call's signature where the peers' mismatch probes look, as for
	 * a schedule run over the channels. */
	tc__exec_begin(proc, io);
	const uint64_t m = c.m = e->key.bytes;
	c.esize = e->key.esize;
	int err = TC_OK;
	if (c.p > 1) {
		switch (e->key.coll) {
		case TC_COLL_BARRIER:
			err = strcmp(e->alg->name, "shm_tree") ? tc__shm_barrier(&c)
			                                       : tc__shm_tree(&c, 0);
			break;
		case TC_COLL_ALLGATHER:
			err = tc__shm_gather_all(&c, 0);
			break;
		case TC_COLL_ALLTOALL:
			err = tc__shm_gather_all(&c, 1);
			break;
		case TC_COLL_BCAST:
			err = tc__shm_bcast(&c, e->key.root);
			break;
		case TC_COLL_SCATTER:
			err = tc__shm_scatter(&c, e->key.root);
			break;
		case TC_COLL_GATHER:
			err = tc__shm_gather(&c, e->key.root);
			break;
		case TC_COLL_REDUCE_SCATTER:
			err = tc__shm_reduce_scatter(&c);
			break;
		case TC_COLL_ALLREDUCE:
			err = !strcmp(e->alg->name, "shm")        ? tc__shm_allreduce_slices(&c)
			      : !strcmp(e->alg->name, "shm_tree") ? tc__shm_tree(&c, 1)
			                                          : tc__shm_allreduce_flat(&c);
			break;
		default:
			err = TC_ENOTSUP;
			break;
		}
	} else if (m && e->key.coll != TC_COLL_BCAST && e->key.coll != TC_COLL_ALLREDUCE) {
		memcpy(io->out, io->in, m); /* the own block */
	}
	if (err)
		return err;
	if (!c.done)
		tc__shm_done(&c);
	proc->clock = tc__sat_add(c.cmax, e->makespan);
	proc->stats.rounds += (uint64_t)e->s->nrounds;
	proc->ncalls++;
	return TC_OK;
}
