/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/nbc.c - collective calls as requests: the proc's queue of
 * started operations and the hooks of lib/p2p's waits and tests (contract
 * in lib/sched/nbc.h), tc_start and tc_request_free (topocoll/coll.h).
 *
 * The head of the queue runs as a state machine (tc__run_step): every
 * progress of the proc steps it without blocking (ext_progress); a wait
 * for one of the requests runs a head that has not started yet the
 * blocking way (tc__plan_exec: the speed of a blocking call, tiny plans
 * included), and steps a running one with the wait's progress-wait
 * (ext_wait), so that a request waited for as soon as it is started costs
 * what the blocking call costs.  On a team with another engine
 * (team->engine_nbc: a team over MPI processes) that engine starts, steps
 * and fails the head, a head not started runs as its blocking call
 * (team->engine_run), and a wait for a running head finishes it with the
 * engine's own blocking wait.  The rank's procs on other teams with calls
 * queued are stepped by this one's progress too (tc__progress,
 * lib/core/internal.h's xq_others).  A call of the machine's own algorithms
 * (op->native, lib/coll/shm_step.c) is begun, stepped and run the blocking
 * way by its own hooks instead of a plan's.
 */
#include "sched/nbc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "p2p/p2p.h"
#include "p2p/request.h"

/* The steps a wait gives a running native head on their own (no progress
 * of the rest of the rank between them) before it waits the usual way. */
#define TC__XQ_NATIVE_SPINS 64

static struct tc__creq *tc__xq_head(const struct tc_proc *proc)
{
	return proc->ext_queue;
}

/* op, which *pp points to, leaves the queue: the counts of queued and
 * native calls follow. */
static void tc__xq_unlink(struct tc_proc *proc, struct tc__creq **pp, struct tc__creq *op)
{
	*pp = op->next;
	proc->ext_pending--;
	proc->ext_native -= op->native != NULL;
	op->next = NULL;
}

/* op leaves the head of the queue, done with status err: its request
 * completes; the next one starts no earlier than op ended. */
static void tc__xq_pop(struct tc_proc *proc, struct tc__creq *op, int err)
{
	op->queued = op->running = 0;
	if (op->next && op->next->clock < op->clock)
		op->next->clock = op->clock;
	/* One started later (before this one's wait) starts no earlier. */
	proc->ext_clock = op->clock;
	tc__xq_unlink(proc, (struct tc__creq **)&proc->ext_queue, op);
	struct tc__req *q = tc__req(op->req);
	q->status = err;
	q->state = TC__REQ_DONE;
}

/* Runs f(proc, op) on op's clock instead of the proc's. */
#define TC__ON_OP_CLOCK(proc, op, stmt)                \
	do {                                           \
		tc_time_t user_clock_ = (proc)->clock; \
		(proc)->clock = (op)->clock;           \
		stmt;                                  \
		(op)->clock = (proc)->clock;           \
		(proc)->clock = user_clock_;           \
	} while (0)

static bool tc__team_aborted(const struct tc_proc *proc)
{
	/* Relaxed: a hint; an aborted team fails every wait anyway. */
	return atomic_load_explicit(&proc->team->aborted, memory_order_relaxed) != 0;
}

/* op leaves the queue before it is done (status: why): a running plan's
 * messages are dropped, or the other engine told; a native call has
 * nothing on the channels. */
static void tc__xq_fail_running(struct tc_proc *proc, struct tc__creq *op, int status)
{
	if (op->native || !op->running)
		return;
	if (proc->team->engine_nbc) {
		TC__ON_OP_CLOCK(proc, op, proc->team->engine_nbc->fail(proc, op->est, status));
	} else {
		TC__ON_OP_CLOCK(proc, op, tc__run_fail(proc, op->run, status));
		proc->coll_tag = 0;
	}
}

/* Starts the head's plan; false when it failed at once (then popped). */
static bool tc__xq_begin(struct tc_proc *proc, struct tc__creq *op)
{
	if (tc__team_aborted(proc)) {
		tc__xq_pop(proc, op, TC_EABORTED);
		return false;
	}
	int err;
	if (op->native) {
		TC__ON_OP_CLOCK(proc, op, err = op->native->begin(proc, op));
		if (err) {
			tc__xq_pop(proc, op, err);
			return false;
		}
		op->running = 1;
		return true;
	}
	const struct tc__engine_nbc *en = proc->team->engine_nbc;
	if (en) {
		TC__ON_OP_CLOCK(proc, op, err = en->start(proc, op->s, &op->io, &op->est));
		if (err) {
			tc__xq_pop(proc, op, err);
			return false;
		}
		op->running = 1;
		return true;
	}
	tc__exec_begin(proc, &op->io);
	TC__ON_OP_CLOCK(proc, op, err = tc__run_start(proc, op->run, op->s, op->pl, &op->io));
	if (err) {
		tc__xq_pop(proc, op, tc__exec_end(proc, err));
		return false;
	}
	op->running = 1;
	return true;
}

/* op's plan ended with *err: true when op goes on with a next plan (its
 * then hook set it), false when it is done (*err: how). */
static bool tc__xq_then(struct tc_proc *proc, struct tc__creq *op, int *err)
{
	if (*err || !op->then)
		return false;
	int r = op->then(proc, op);
	if (r == 1) {
		op->running = 0;
		return true;
	}
	*err = r;
	return false;
}

/* Steps the queue: the head, and the next ones as the head completes.
 * may_block: emulated deadlines are slept to. */
static void tc__xq_drive(struct tc_proc *proc, bool may_block)
{
	if (proc->ext_busy)
		return;
	proc->ext_busy = 1;
	struct tc__creq *op;
	while ((op = tc__xq_head(proc))) {
		if (!op->running && !tc__xq_begin(proc, op))
			continue;
		bool done;
		int err = TC_OK;
		const struct tc__engine_nbc *en = proc->team->engine_nbc;
		if (op->native) {
			int r;
			TC__ON_OP_CLOCK(proc, op, r = op->native->step(proc, op, may_block));
			done = r != 0;
			err = r < 0 ? r : TC_OK;
		} else if (en) {
			TC__ON_OP_CLOCK(proc, op, done = en->step(proc, op->est, false, &err));
		} else {
			TC__ON_OP_CLOCK(proc, op, done = tc__run_step(proc, op->run, may_block));
		}
		if (!done)
			break;
		if (!en && !op->native)
			err = tc__exec_end(proc, tc__run_err(op->run));
		if (tc__xq_then(proc, op, &err))
			continue;
		tc__xq_pop(proc, op, err);
	}
	proc->ext_busy = 0;
}

static void tc__xq_progress(struct tc_proc *proc)
{
	tc__xq_drive(proc, false);
}

static bool tc__xq_head_left(struct tc_proc *proc, void *ctx)
{
	tc__xq_drive(proc, true);
	return tc__xq_head(proc) != ctx;
}

/* The head, not started yet, run the blocking way. */
static void tc__xq_run_head(struct tc_proc *proc, struct tc__creq *op)
{
	if (tc__team_aborted(proc)) {
		tc__xq_pop(proc, op, TC_EABORTED);
		return;
	}
	int err;
	proc->ext_busy = 1; /* its own waits must not step the queue */
	do
		if (op->native)
			TC__ON_OP_CLOCK(proc, op, err = op->native->run(proc, op));
		else if (proc->team->engine_run) /* the engine's blocking call */
			TC__ON_OP_CLOCK(proc, op, err = proc->team->engine_run(proc, op->s, &op->io));
		else
			TC__ON_OP_CLOCK(proc, op, err = tc__plan_exec(proc, op->s, op->pl, &op->io));
	while (tc__xq_then(proc, op, &err));
	proc->ext_busy = 0;
	tc__xq_pop(proc, op, err);
}

static bool tc__creq_dropped(const struct tc_proc *proc, const struct tc__creq *op)
{
	return op->queued && op->gen != proc->ext_gen;
}

/* Runs the head h until it leaves the queue (the blocking way when it has
 * not started).  Returns 0, or the error that ended its wait (abort,
 * timeout): the head then ends with it. */
static int tc__xq_advance(struct tc_proc *proc, struct tc__creq *h)
{
	if (!h->running) {
		tc__xq_run_head(proc, h);
		return TC_OK;
	}
	if (h->native && !proc->ext_busy) {
		/* Its peers are usually a hand-off or two away: a few steps
		 * of it alone before the wait's rounds of progress. */
		for (int i = 0; i < TC__XQ_NATIVE_SPINS && tc__xq_head(proc) == h; i++)
			tc__xq_drive(proc, true);
		if (tc__xq_head(proc) != h)
			return TC_OK;
	}
	const struct tc__engine_nbc *en = proc->team->engine_nbc;
	if (en) {
		/* The engine's own wait (timeout, probes) to the head's end;
		 * an error has ended it (the team aborted). */
		int err = TC_OK;
		proc->ext_busy = 1;
		TC__ON_OP_CLOCK(proc, h, en->step(proc, h->est, true, &err));
		proc->ext_busy = 0;
		if (!tc__xq_then(proc, h, &err))
			tc__xq_pop(proc, h, err);
		return TC_OK;
	}
	int err = tc__progress_wait(proc, tc__xq_head_left, h);
	if (err && tc__xq_head(proc) == h && h->native) {
		tc__xq_pop(proc, h, err); /* nothing of it on the channels */
	} else if (err && tc__xq_head(proc) == h) {
		TC__ON_OP_CLOCK(proc, h, tc__run_fail(proc, h->run, err));
		tc__xq_pop(proc, h, tc__exec_end(proc, err));
	}
	return err;
}

static int tc__xq_wait(struct tc_proc *proc, void *reqp)
{
	struct tc__req *req = reqp;
	struct tc__creq *op = req->ext;
	if (tc__creq_dropped(proc, op))
		return TC_EABORTED; /* forgotten by a reset after an abort */
	while (req->state != TC__REQ_DONE) {
		int err = tc__xq_advance(proc, tc__xq_head(proc));
		if (err)
			return err;
	}
	return TC_OK;
}

static void tc__creq_unkeep(struct tc__creq *op);

/* A wait or test is done with req (status: its outcome). */
static void tc__xq_end(struct tc_proc *proc, void *reqp, int status)
{
	struct tc__req *req = reqp;
	struct tc__creq *op = req->ext;
	if (op->queued && !tc__creq_dropped(proc, op)) {
		/* Retired before it completed (the team is aborted): out of the
		 * queue; a running plan's buffers are no longer read. */
		struct tc__creq **pp = (struct tc__creq **)&proc->ext_queue;
		while (*pp != op)
			pp = &(*pp)->next;
		tc__xq_fail_running(proc, op, status);
		tc__xq_unlink(proc, pp, op);
	}
	if (!status)
		proc->clock = tc__max_time(proc->clock, op->clock);
	/* Failed during another call, which cleared what it said: found to
	 * be made in the other form by a peer (the team is aborted since, so
	 * no later call can fail so). */
	if (status == TC_EMISMATCH && proc->form_peer && !*tc_error_detail())
		tc__mismatch_form(proc, proc->form_call, proc->form_alg, proc->form_peer - 1);
	op->queued = op->running = op->active = 0;
	op->req = NULL;
	op->own.handle = NULL; /* inactive: its storage may be started again */
	req->status = status;
	req->state = TC__REQ_IDLE;
	req->ended = 1; /* inactive, its status kept (tc_request_status) */
	if (!op->persistent) {
		req->ext = NULL;
		tc__creq_unkeep(op);
		op->release(op);
	}
}

void tc__creq_bind(struct tc__creq *op, tc_request *handle)
{
	struct tc__req *req = tc__req(handle);
	memset(req, 0, sizeof *req);
	req->kind = TC__KIND_EXT;
	req->state = TC__REQ_IDLE;
	req->nbr = -1;
	req->peer = -1;
	req->ext = op;
}

static void tc__creq_owned_release(struct tc__owned *o)
{
	struct tc__creq *op = (struct tc__creq *)(void *)((char *)o - offsetof(struct tc__creq, own));
	op->release(op);
}

/* op into proc's owned list: the team releases it if nothing else does. */
static void tc__creq_own(struct tc_proc *proc, struct tc__creq *op)
{
	op->owner = proc;
	op->own.release = tc__creq_owned_release;
	op->own.prev = NULL;
	op->own.next = proc->owned;
	if (proc->owned)
		proc->owned->prev = &op->own;
	proc->owned = &op->own;
}

void tc__creq_keep(struct tc_proc *proc, struct tc__creq *op, tc_request *req)
{
	tc__creq_bind(op, req);
	tc__req_stamp(proc, req); /* inactive: its proc is the one it starts on */
	tc__creq_own(proc, op);
}

int tc__creq_launch(struct tc_proc *proc, struct tc__creq *op, tc_request *req, int persistent)
{
	if (persistent) {
		tc__creq_keep(proc, op, req);
		return TC_OK;
	}
	int err = tc__creq_start(proc, op, req);
	if (err) {
		tc__req(req)->state = TC__REQ_IDLE; /* a wait says TC_EINVAL */
		op->release(op);
		return err;
	}
	/* Until the wait or test that completes it releases it: a request
	 * never waited for is the team's to release. */
	tc__creq_own(proc, op);
	return TC_OK;
}

/* Takes a kept op out of its proc's owned list. */
static void tc__creq_unkeep(struct tc__creq *op)
{
	if (!op->owner)
		return;
	if (op->own.prev)
		op->own.prev->next = op->own.next;
	else
		op->owner->owned = op->own.next;
	if (op->own.next)
		op->own.next->prev = op->own.prev;
	op->owner = NULL;
}

int tc__creq_start(struct tc_proc *proc, struct tc__creq *op, tc_request *handle)
{
	if (op->active) {
		tc__set_detail("tc_start: the persistent request is active already (wait for it "
		               "or test it until it completes first)");
		return TC_EPENDING;
	}
	struct tc__req *req = tc__req(handle);
	int err = op->prepare ? op->prepare(op) : TC_OK;
	if (err)
		return err;
	if (!op->persistent)
		tc__creq_bind(op, handle);
	req->state = TC__REQ_QUEUED;
	req->status = TC_OK;
	req->clocked = 1;
	req->tested_since = 0;
	req->ended = 0;
	tc__req_stamp(proc, handle);
	op->req = handle;
	op->own.handle = handle; /* active (tc__req_busy), owned now or by its launch */
	op->active = op->queued = 1;
	op->running = 0;
	op->gen = proc->ext_gen;
	/* From the rank's clock, or the end of the call before it if later
	 * (still queued: raised when that one leaves; done: ext_clock). */
	op->clock = tc__max_time(proc->clock, proc->ext_clock);
	op->next = NULL;
	struct tc__creq **pp = (struct tc__creq **)&proc->ext_queue;
	while (*pp)
		pp = &(*pp)->next;
	*pp = op;
	proc->ext_pending++;
	proc->ext_native += op->native != NULL;
	tc__xq_list(proc);
	proc->ext_progress = tc__xq_progress;
	proc->ext_wait = tc__xq_wait;
	proc->ext_end = tc__xq_end;
	/* Its first round goes out now when it is the head. */
	tc__xq_drive(proc, false);
	return TC_OK;
}

int tc__creq_run(struct tc_proc *proc, struct tc__creq *op)
{
	tc_request r;
	int err = tc__creq_start(proc, op, &r);
	if (err)
		return err;
	struct tc__req *req = tc__req(&r);
	err = req->state == TC__REQ_DONE ? TC_OK : tc__xq_wait(proc, req);
	int status = err ? err : req->status;
	tc__xq_end(proc, req, status);
	return status;
}

int tc__creq_drain(struct tc_proc *proc)
{
	struct tc__creq *h;
	while ((h = tc__xq_head(proc))) {
		int err = tc__xq_advance(proc, h);
		if (err)
			return err;
	}
	return TC_OK;
}

void tc__creq_abandon(struct tc_proc *proc, int status)
{
	struct tc__creq *op;
	while ((op = tc__xq_head(proc))) {
		tc__xq_fail_running(proc, op, status);
		tc__xq_unlink(proc, (struct tc__creq **)&proc->ext_queue, op);
		op->queued = op->running = 0;
	}
	proc->ext_gen++;
}

static void tc__creq_free(struct tc__creq *op)
{
	free(op->run);
}

int tc__exec_ordered(struct tc_proc *proc, const struct tc__sched *s, const struct tc__plan *pl,
                     const struct tc__exec_io *io)
{
	if (!tc__creq_pending(proc))
		return tc__plan_exec(proc, s, pl, io);
	struct tc__creq op = {.s = s,
	                      .pl = pl,
	                      .io = *io,
	                      .release = tc__creq_free,
	                      .run = malloc(tc__run_size())};
	if (!op.run)
		return TC_ENOMEM;
	return tc__creq_run(proc, &op);
}

/* The operation of a collective request, or NULL (with the detail). */
static struct tc__creq *tc__creq_of(tc_request *handle, const char *call)
{
	struct tc__req *req = tc__req(handle);
	if (!req || req->kind != TC__KIND_EXT || !req->ext) {
		tc__set_detail("%s: not a persistent collective request (made by tc_*_init, not "
		               "freed since)",
		               call);
		return NULL;
	}
	return req->ext;
}

int tc_start(struct tc_proc *proc, tc_request *req)
{
	tc__clear_detail();
	struct tc__creq *op = tc__creq_of(req, "tc_start");
	if (!proc || !op || !op->persistent || tc__req_foreign(proc, req, "tc_start"))
		return TC_EINVAL;
	return tc__creq_start(proc, op, req);
}

int tc_request_free(struct tc_proc *proc, tc_request *req)
{
	tc__clear_detail();
	struct tc__creq *op = tc__creq_of(req, "tc_request_free");
	if (!proc || !op || !op->persistent || tc__req_foreign(proc, req, "tc_request_free"))
		return TC_EINVAL;
	if (op->active) {
		tc__set_detail("tc_request_free: the request is active (wait for it or test it "
		               "until it completes first)");
		return TC_EPENDING;
	}
	tc__req(req)->ext = NULL;
	tc__creq_unkeep(op);
	op->release(op);
	return TC_OK;
}
