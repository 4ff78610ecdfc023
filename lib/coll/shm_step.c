/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shm_step.c - the machine's own algorithms as nonblocking and
 * persistent calls: a call that one round of flags completes, as the
 * state of a request that every progress of its rank moves on without
 * waiting (contract in lib/coll/shm.h; the request's queue in
 * lib/sched/nbc.c, the hooks in lib/coll/coll.c).
 *
 * A step does what the blocking call (lib/coll/shm_flat.c) does between
 * its waits: it claims this rank's block once every peer is done with
 * the call that last wrote it (tc__shm_claim_ready(): their done words,
 * one look each), publishes (k, 1) with the data, then takes each peer's
 * block as its (k, 1) shows, in the blocking sweep's order, from the
 * first peer not seen yet; the last one seen, it combines (a reduction)
 * and ends the call.  A step that finds a peer not there yet returns and
 * is made again by the rank's next progress: its waits, tests and other
 * calls into the library.  The call numbers are the blocking calls' (the
 * rank's calls run in the order started), so a request and the blocking
 * calls before and after it share the flags' protocol unchanged.
 */
#include "coll/shm_run.h"

#include <stdlib.h>
#include <string.h>

/* The looks at a peer that has not published after which each further
 * TC__SHM_STEP_GONE-th one also asks whether it will at all
 * (tc__shm_gone(): a skipped or another call).  A look is a step's load
 * of one word; a blocking wait asks after 20 us of waiting. */
#define TC__SHM_STEP_GONE 4096u

struct tc__shm_req {
	struct tc__shm_ctx c;
	struct tc__shm_call call;
	int made;   /* c set up once (its call's constant fields) */
	int posted; /* this rank's (k, 1) published */
	int next;   /* the peers me + 1 .. me + next - 1 are seen */
	unsigned looks;
};

bool tc__shm_steppable(const struct tc__shm_call *call, int p)
{
	if (p < 2)
		return false;
	switch (call->coll) {
	case TC_COLL_BARRIER:
		if (strcmp(call->alg, "shm"))
			return false;
		break;
	case TC_COLL_ALLREDUCE:
		if (strcmp(call->alg, "shm_flag"))
			return false;
		break;
	case TC_COLL_ALLGATHER:
	case TC_COLL_ALLTOALL:
	case TC_COLL_REDUCE_SCATTER:
		break;
	default:
		return false;
	}
	const struct tc__shm_layout l = tc__shm_layout(call->coll, call->alg, p, call->bytes);
	return l.via != TC__SHM_VIA_IN && l.syncs == 1;
}

struct tc__shm_req *tc__shm_req_new(void)
{
	return calloc(1, sizeof(struct tc__shm_req));
}

int tc__shm_req_begin(struct tc__shm_req *q, struct tc_proc *proc, const struct tc__shm *shm,
                      const struct tc__shm_call *call, const struct tc__exec_io *io)
{
	q->posted = 0;
	q->next = 1;
	q->looks = 0;
	struct tc__shm_ctx *c = &q->c;
	if (q->made && c->proc == proc && c->io == io) {
		/* A persistent request started again: what its call and team
		 * fixed is kept, the rest is this call's. */
		tc__shm_ctx_call(c);
		return TC_OK;
	}
	q->call = *call;
	q->made = 1;
	tc__shm_ctx_init(c, proc, shm, &q->call, io);
	return TC_OK;
}

/* Peer r's word has not reached pos yet (alt: where another kind of call
 * of r's would show, or NULL): 0 (look again later), or TC_EMISMATCH
 * where it never will. */
static int tc__shm_req_absent(struct tc__shm_req *q, int r, const _Atomic uint64_t *word,
                              const _Atomic uint64_t *alt, uint64_t pos)
{
	struct tc__shm_ctx *c = &q->c;
	if (++q->looks < TC__SHM_STEP_GONE || q->looks % TC__SHM_STEP_GONE)
		return 0;
	return tc__shm_gone(c, r, word, alt, pos) ? tc__shm_mismatch(c, r) : 0;
}

/* The looks a wait's step gives an absent peer's flag before it returns,
 * with a pause between them (a few hundred ns: a hand-off or two). */
#define TC__SHM_STEP_SPINS 32

int tc__shm_req_step(struct tc__shm_req *q, bool spin)
{
	struct tc__shm_ctx *c = &q->c;
	if (!q->posted) {
		int late;
		uint64_t at;
		if (!tc__shm_claim_ready(c, &late, &at))
			return tc__shm_req_absent(q, late, &c->slots[late].done, NULL, at);
		int err = tc__shm_round_post(c, q->call.coll);
		if (err)
			return err;
		q->posted = 1;
	}
	const uint64_t pos = tc__shm_pos(c, 1);
	/* As tc__shm_sweep(): spin only where a waiter may (no fibre of this
	 * CPU waits for it to yield). */
	const bool spinning = spin && c->proc->team->spin_ns && !c->proc->db.task;
	void (*got)(struct tc__shm_ctx *, int) = tc__shm_round_got(q->call.coll);
	for (; q->next < c->p; q->next++) {
		const int r = (c->me + q->next) % c->p;
		const _Atomic uint64_t *word = &tc__shm_blk(c, r)->step;
		/* Acquire: as tc__shm_await_word(). */
		int s = tc__shm_reached(c, atomic_load_explicit(word, memory_order_acquire), pos, 1);
		for (int i = 0; !s && spinning && i < TC__SHM_STEP_SPINS; i++) {
			tc__cpu_relax();
			s = tc__shm_reached(c, atomic_load_explicit(word, memory_order_acquire), pos, 1);
		}
		if (s < 0)
			return tc__shm_mismatch(c, r);
		if (!s)
			return tc__shm_req_absent(q, r, &tc__shm_blk(c, r)->step,
			                          &tc__shm_ring(c, r)->step, pos);
		int err = tc__shm_take(c, r);
		if (err)
			return err;
		if (got)
			got(c, r);
	}
	/* As tc__shm_read_all(): every peer at (k, 1) is done with k - 1. */
	tc__shm_seen_done(c, (int64_t)c->k - 1);
	tc__shm_round_combine(c, q->call.coll);
	tc__shm_ctx_end(c, &q->call);
	return 1;
}
