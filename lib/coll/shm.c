/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shm.c - the native path of the machine's own algorithms: the
 * team's flags, the protocol every call follows on them (publishing a
 * step, waiting for the peers' steps, claiming a block only the peers are
 * done with) and the entry, tc__shm_exec().  The calls themselves are in
 * lib/coll/shm_flat.c (one synchronised round each) and
 * lib/coll/shm_tree.c (the groups' tree); the flags, their protocol and
 * the waiting are described in lib/coll/shm.h.
 */
#include "coll/shm_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/copy.h"
#include "base/error_detail.h"
#include "p2p/p2p.h"
#include "sched/exec.h"

/* How often a waiter looks whether the peer it waits for has returned from
 * its SPMD function (as lib/p2p/progress.c's probe does). */
#define TC__SHM_PROBE_NS (10 * 1000 * 1000ull)

/* When it first looks: after the waits of a call whose peers all make it
 * (a few hand-offs), so that those do not read the lines of the peer's
 * state that the peer writes at every call (its calls seen). */
#define TC__SHM_PROBE_FIRST_NS (20 * 1000ull)

int tc__shm_mismatch(struct tc__shm_ctx *c, int r)
{
	const char *call = c->io->call ? c->io->call : "collective";
	const uint64_t seen =
	        atomic_load_explicit(&c->proc->team->procs[r].calls_seen[c->k % TC__CALLS_SEEN],
	                             memory_order_relaxed);
	if (tc__other_form_seen(c->proc, c->k, seen))
		tc__mismatch_form(c->proc, call, c->io->alg, r);
	else
		tc__set_detail("%s (%s): rank %d makes another collective call", call,
		               c->io->alg ? c->io->alg : "?", r);
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
	/* What each rank knows of its peers starts unknown (tc__shm_own()
	 * resets it at the first call): a sub-team's run bits are 0, which a
	 * zeroed slot's run would pass for, with every peer seen done with
	 * call 0 and a block rewritten at call 2 under a late reader of call
	 * 0's. */
	for (int r = 0; r < p; r++)
		shm->slots[r].own.run = UINT64_MAX;
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
		free(shm->slots[r].own.stage);
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

int tc__shm_gone(const struct tc__shm_ctx *c, int r, const _Atomic uint64_t *word,
                 const _Atomic uint64_t *alt, uint64_t pos)
{
	/* Passed by another kind of call, or returned from its SPMD function
	 * without making this call (a skipped collective), or made another
	 * call k over the channels: conclusive, unless its word came in
	 * before (the acquire makes it visible). */
	if (tc__shm_passed_by(c, word, alt, pos))
		return 1;
	const struct tc_proc *n = &c->proc->team->procs[r];
	const uint64_t want = tc__call_seen(c->k, c->proc->coll_sig);
	const uint64_t seen =
	        atomic_load_explicit(&n->calls_seen[c->k % TC__CALLS_SEEN], memory_order_relaxed);
	return atomic_load_explicit(&n->attached, memory_order_relaxed) &&
	       (atomic_load_explicit(&n->ws.state, memory_order_acquire) == TC__WS_RETURNED ||
	        (c->proc->coll_sig && (seen >> 40) == (want >> 40) && seen != want)) &&
	       !tc__shm_reached(c, atomic_load_explicit(word, memory_order_acquire), pos, 0);
}

int tc__shm_await_wait(struct tc__shm_ctx *c, int r, const _Atomic uint64_t *word,
                       const _Atomic uint64_t *alt, uint64_t pos, int sig8)
{
	struct tc_team *team = c->proc->team;
	for (;;) {
		/* Acquire: pairs with the release stores of tc__shm_publish()
		 * and tc__shm_exec() in rank r: its block's data, and its reads
		 * of our buffers and flags, come before. */
		const int got = tc__shm_reached(c, atomic_load_explicit(word, memory_order_acquire),
		                                pos, sig8);
		if (got) {
			/* The next wait's spin, yield and timeout count from
			 * its own start, not the call's (lib/p2p/progress.c,
			 * tc__progress_mark). */
			c->waiting = 0;
			return got > 0 ? TC_OK : tc__shm_mismatch(c, r);
		}
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
		/* Past its spins, a wait moves on what else the rank has
		 * started, as a wait over the channels does: its own messages
		 * (a sender of a long message waits for this rank to take it)
		 * and its calls on other teams (their peers may wait for this
		 * rank's next round there). */
		tc__progress(c->proc);
		const enum tc__wait_step step = tc__wait_next(&c->w, 0);
		/* The probe's clock is the call's, not this wait's: a look
		 * at every peer awaited for 20 us would read as many peers'
		 * lines (at p = 64 on 2 CPUs, most of them). */
		const uint64_t now = c->w.start + c->w.waited;
		if (!c->probe_at)
			c->probe_at = now + TC__SHM_PROBE_FIRST_NS;
		if (now >= c->probe_at) {
			c->probe_at = now + TC__SHM_PROBE_NS;
			if (tc__shm_gone(c, r, word, alt, pos))
				return tc__shm_mismatch(c, r);
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
int tc__shm_sweep(struct tc__shm_ctx *c, int ph, int data, void (*got)(struct tc__shm_ctx *, int))
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
int tc__shm_await_all(struct tc__shm_ctx *c, int ph, int last)
{
	int err = tc__shm_sweep(c, ph, 0, NULL);
	if (!err)
		tc__shm_seen_done(c, (int64_t)c->k - !last);
	return err;
}

/* tc__shm_claim()'s wait: every peer done with call `last`, read from
 * their done words; own->seen_done then says what they say. */
int tc__shm_claim_wait(struct tc__shm_ctx *c, struct tc__shm_own *own, int64_t last)
{
	/* What the words say, not only what this call needs: a peer usually
	 * is done with later calls too (a small bcast's reader with the call
	 * before this one), and the next call of the other parity then reads
	 * no word. */
	uint64_t seen = UINT64_MAX;
	for (int i = 1; i < c->p; i++) {
		const int r = (c->me + i) % c->p;
		int err = tc__shm_await_word(c, r, &c->slots[r].done, NULL, (uint64_t)last + 1, 0);
		if (err)
			return err;
		/* Acquire, as the wait's: the word only grows, and the peer's
		 * reads of every call it says are done come before this rank's
		 * later writes of their blocks. */
		const uint64_t v = atomic_load_explicit(&c->slots[r].done, memory_order_acquire) &
		                   TC__SHM_POS_MASK;
		if (v < seen)
			seen = v;
	}
	own->seen_done = (int64_t)seen - 1;
	return TC_OK;
}

int tc__shm_claim_ready(struct tc__shm_ctx *c, int *late, uint64_t *pos)
{
	struct tc__shm_own *own = tc__shm_own(c);
	const int64_t last = own->last_written[c->k & 1];
	if (last < 0 || own->seen_done >= last)
		return 1;
	uint64_t seen = UINT64_MAX;
	for (int i = 1; i < c->p; i++) {
		const int r = (c->me + i) % c->p;
		/* Acquire: as tc__shm_claim_wait()'s. */
		const uint64_t v = atomic_load_explicit(&c->slots[r].done, memory_order_acquire);
		if (tc__shm_reached(c, v, (uint64_t)last + 1, 0) <= 0) {
			*late = r;
			*pos = (uint64_t)last + 1;
			return 0;
		}
		if ((v & TC__SHM_POS_MASK) < seen)
			seen = v & TC__SHM_POS_MASK;
	}
	own->seen_done = (int64_t)seen - 1;
	return 1;
}

struct tc__shm_call tc__shm_call_of(const struct tc__centry *e)
{
	return (struct tc__shm_call){.coll = e->key.coll,
	                             .alg = e->alg->name,
	                             .bytes = e->key.bytes,
	                             .esize = e->key.esize,
	                             .root = e->key.root,
	                             .nrounds = e->s->nrounds,
	                             .makespan = e->makespan};
}

int tc__shm_streams(const struct tc_team *t, uint64_t m)
{
	/* First what every small call answers at once (this runs as each
	 * allgather and alltoall starts). */
	if (!TC__COPY_STREAMS || m < TC__COPY_STREAM_MIN)
		return 0;
	const struct tc__machine *mc = &t->machine;
	size_t llc = 0;
	int domains = 1;
	for (int k = 0; k < 3; k++)
		if (mc->cache_bytes[k] > llc) {
			llc = mc->cache_bytes[k];
			domains = mc->cache_count[k] > 0 ? mc->cache_count[k] : 1;
		}
	if (!llc)
		return 0;
	const double sharing = ceil((double)t->p / domains);
	return sharing * (double)t->p * (double)m > (double)llc;
}

void tc__shm_ctx_init(struct tc__shm_ctx *c, struct tc_proc *proc, const struct tc__shm *shm,
                      const struct tc__shm_call *call, const struct tc__exec_io *io)
{
	struct tc_team *team = proc->team;
	*c = (struct tc__shm_ctx){.proc = proc,
	                          .shm = shm,
	                          .slots = shm->slots,
	                          .io = io,
	                          .p = team->p,
	                          .me = proc->rank,
	                          .sig = io->sig ^ (uint64_t)(unsigned)io->tag,
	                          .m = call->bytes,
	                          .esize = call->esize};
	c->sig8 = (c->sig & 0xff) << 40;
	c->stream = (call->coll == TC_COLL_ALLGATHER || call->coll == TC_COLL_ALLTOALL) &&
	            tc__shm_streams(team, call->bytes);
	tc__shm_ctx_call(c);
}

void tc__shm_ctx_call(struct tc__shm_ctx *c)
{
	struct tc_proc *proc = c->proc;
	c->k = proc->ncalls;
	c->run = (proc->team->start_ns & 0xffff) << 48;
	c->cmax = proc->clock;
	c->done = c->waiting = 0;
	c->probe_at = 0;
	c->stage = NULL;
	proc->cur_call = c->io->call ? c->io->call : "collective";
	proc->cur_alg = c->io->alg;
	/* The call's signature where the peers' mismatch probes look, as for
	 * a schedule run over the channels. */
	tc__exec_begin(proc, c->io);
}

void tc__shm_ctx_end(struct tc__shm_ctx *c, const struct tc__shm_call *call)
{
	struct tc_proc *proc = c->proc;
	if (!c->done)
		tc__shm_done(c);
	proc->clock = tc__sat_add(c->cmax, call->makespan);
	proc->stats.rounds += (uint64_t)call->nrounds;
	proc->ncalls++;
}

int tc__shm_run(struct tc_proc *proc, const struct tc__shm *shm, const struct tc__shm_call *call,
                const struct tc__exec_io *io)
{
	struct tc__shm_ctx c;
	tc__shm_ctx_init(&c, proc, shm, call, io);
	int err = TC_OK;
	if (c.p > 1) {
		switch (call->coll) {
		case TC_COLL_BARRIER:
			err = strcmp(call->alg, "shm_tree") ? tc__shm_barrier(&c) : tc__shm_tree(&c, 0);
			break;
		case TC_COLL_ALLGATHER:
			err = tc__shm_gather_all(&c, 0);
			break;
		case TC_COLL_ALLTOALL:
			err = tc__shm_gather_all(&c, 1);
			break;
		case TC_COLL_BCAST:
			err = tc__shm_bcast(&c, call->root);
			break;
		case TC_COLL_SCATTER:
			err = tc__shm_scatter(&c, call->root);
			break;
		case TC_COLL_GATHER:
			err = tc__shm_gather(&c, call->root);
			break;
		case TC_COLL_REDUCE_SCATTER:
			err = tc__shm_reduce_scatter(&c);
			break;
		case TC_COLL_ALLREDUCE:
			err = !strcmp(call->alg, "shm")        ? tc__shm_allreduce_slices(&c)
			      : !strcmp(call->alg, "shm_tree") ? tc__shm_tree(&c, 1)
			                                       : tc__shm_allreduce_flat(&c);
			break;
		default:
			err = TC_ENOTSUP;
			break;
		}
	} else if (c.m && call->coll != TC_COLL_BCAST && call->coll != TC_COLL_ALLREDUCE) {
		memcpy(io->out, io->in, c.m); /* the own block */
	}
	if (err)
		return err;
	tc__shm_ctx_end(&c, call);
	return TC_OK;
}

int tc__shm_exec(struct tc_proc *proc, const struct tc__shm *shm, const struct tc__centry *e,
                 const struct tc__exec_io *io)
{
	const struct tc__shm_call call = tc__shm_call_of(e);
	return tc__shm_run(proc, shm, &call, io);
}
