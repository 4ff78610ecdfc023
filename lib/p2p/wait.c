/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/wait.c - how a point-to-point request ends.  tc_wait, tc_waitall
 * and tc_test see it complete (tc__complete: a single-copy send once its
 * receiver is done with the buffer), apply it once to the rank's logical
 * clock (tc__req_clock: the send rule, or the receive rule on the port of
 * the message's last link) and, for a receive, wait until the model has
 * delivered the message (tc__emulate_sync).  A wait that an abort or the
 * team's timeout ends retires its requests (tc__retire: out of their
 * queues, no buffer of theirs read any more); tc_cancel ends a request no
 * peer has taken (after an abort, any).  A layer above's request
 * (TC__KIND_EXT) ends by its own hooks, and a team with another engine
 * (team->p2p_engine) has the engine complete its requests; the clock rules
 * are applied here all the same.
 */
#include <stdint.h>
#include <string.h>

#include "p2p/p2p.h"
#include "p2p/p2p_internal.h"
#include "p2p/request.h"
#include "base/error_detail.h"

/* True when req is complete; finishes a single-copy send whose receiver is
 * done. */
static bool tc__complete(struct tc_proc *proc, struct tc__req *req)
{
	const struct tc__p2p_engine *e = proc->team->p2p_engine;
	if (e && req->kind != TC__KIND_EXT) {
		/* The receive rule's port: the last link of the sender's route. */
		if (e->test(proc, req) && req->kind == TC__KIND_RECV && !req->clocked &&
		    req->nbr < 0 && req->st_src >= 0)
			req->rnbr = tc__last_link(proc, req->st_src);
		return req->state == TC__REQ_DONE;
	}
	if (req->state == TC__REQ_RNDV_WAIT &&
	    /* Acquire: pairs with the receiver's release store; its copy out of
	     * our buffer is finished. */
	    atomic_load_explicit(&req->rndv_done, memory_order_acquire)) {
		proc->npending_rndv--;
		if (req->far)
			tc__far_sent_drop(proc, req->fnode);
		else
			tc__rs_unlink(proc, req);
		tc__send_done(proc, req);
	}
	return req->state == TC__REQ_DONE;
}

bool tc__req_complete(struct tc_proc *proc, tc_request *req)
{
	return tc__complete(proc, tc__req(req));
}

/* Whether req, started with own (a proc of the calling rank, valid), is
 * still active. */
static bool tc__req_busy_on(struct tc_proc *own, const struct tc__req *req, const tc_request *handle)
{
	if (req->kind == TC__KIND_EXT) {
		/* Active until a wait or test ends it. */
		for (const struct tc__owned *o = own->owned; o; o = o->next)
			if (o->handle == handle)
				return true;
		return false;
	}
	if ((req->kind != TC__KIND_SEND && req->kind != TC__KIND_RECV) ||
	    req->state == TC__REQ_IDLE || req->state == TC__REQ_DONE || own->team->p2p_engine)
		return false;
	return tc__req_queued(own, req);
}

bool tc__req_busy(struct tc_proc *proc, const tc_request *handle)
{
	const struct tc__req *req = (const struct tc__req *)(const void *)handle;
	if (req->stamp != tc__rank_stamp(proc))
		return false;
	/* Its proc is compared before it is read through: this proc, the
	 * rank's root proc, or a proc of one of the root's sub-teams that is
	 * still listed (another sub-team of the rank's: a sibling, a child),
	 * read under the root's sub_mu, which keeps a listed team from being
	 * freed.  Storage that held a request of a team since freed is not
	 * read. */
	struct tc_proc *base = proc->base ? proc->base : proc;
	if (req->owner == proc || req->owner == base)
		return tc__req_busy_on(req->owner, req, handle);
	struct tc_team *root = base->team;
	if (!atomic_load_explicit(&root->has_subs, memory_order_relaxed))
		return false;
	bool busy = false;
	const uintptr_t at = (uintptr_t)req->owner;
	pthread_mutex_lock(&root->sub_mu);
	for (struct tc_team *s = root->sub_head; s; s = s->sub_next)
		if (at >= (uintptr_t)s->procs && at < (uintptr_t)(s->procs + s->p)) {
			busy = tc__req_busy_on(req->owner, req, handle);
			break;
		}
	pthread_mutex_unlock(&root->sub_mu);
	return busy;
}

void tc__req_stamp(struct tc_proc *proc, tc_request *handle)
{
	tc__req(handle)->stamp = tc__rank_stamp(proc);
	tc__req(handle)->owner = proc;
}

int tc__req_foreign(struct tc_proc *proc, const tc_request *handle, const char *call)
{
	const struct tc__req *req = (const struct tc__req *)(const void *)handle;
	if (req->owner == proc)
		return TC_OK;
	/* The request's proc is not read: storage never started holds
	 * anything there. */
	tc__set_detail("%s: the request was started with another proc (another team's of this "
	               "rank, a sub-team's or its parent's, or another rank's): complete it "
	               "with the proc that started it",
	               call);
	return TC_EINVAL;
}

int tc__req_busy_error(const char *pre, const char *name, const char *post)
{
	tc__set_detail("%s%s%s: the request is still active (started and not yet completed by "
	               "tc_wait, tc_waitall or tc_test): complete it first, or give the call "
	               "another tc_request",
	               pre, name, post);
	return TC_EPENDING;
}

void tc__req_retire(struct tc_proc *proc, tc_request *req, int status)
{
	tc__retire(proc, tc__req(req), status);
}

/* Applies a completed request to the proc's logical clock (once). */
static void tc__req_clock(struct tc_proc *proc, struct tc__req *req)
{
	if (req->state != TC__REQ_DONE || req->clocked)
		return;
	if (req->kind == TC__KIND_SEND && req->peer == proc->rank)
		proc->clock = tc__max_time(proc->clock, req->done_at); /* to oneself: no link */
	else if (req->kind == TC__KIND_SEND)
		tc__clock_sent(proc, req->done_at, req->hops, req->bytes);
	else if (req->status == TC_OK && req->st_src == proc->rank)
		proc->clock = tc__max_time(proc->clock, req->clock);
	else if (req->status == TC_OK)
		tc__clock_received(proc, req->rnbr, req->clock, req->received);
	req->clocked = 1;
}

static bool tc__cond_one(struct tc_proc *proc, void *ctx)
{
	return tc__complete(proc, ctx);
}

struct tc__reqs {
	int n;
	tc_request *reqs;
};

static bool tc__cond_all(struct tc_proc *proc, void *ctx)
{
	struct tc__reqs *rs = ctx;
	bool all = true;
	for (int i = 0; i < rs->n; i++)
		all &= tc__complete(proc, tc__req(&rs->reqs[i]));
	return all;
}

/* True when the team is aborted (relaxed: a hint; the single-copy reads
 * have their own handshake). */
static inline bool tc__aborted(const struct tc_proc *proc)
{
	return atomic_load_explicit(&proc->team->aborted, memory_order_relaxed) != 0;
}

/* A wait ended by an abort or a timeout (err): its requests are dead, out
 * of their queues, no buffer of theirs read any more. */
int tc__wait_failed(struct tc_proc *proc, int n, tc_request *reqs, int err)
{
	for (int i = 0; i < n; i++)
		tc__retire(proc, tc__req(&reqs[i]), err);
	return err;
}

static int tc__wait_failed_one(struct tc_proc *proc, struct tc__req *req, int err)
{
	tc__retire(proc, req, err);
	return err;
}

/* The progress-wait of the team's point-to-point engine. */
static int tc__wait_cond(struct tc_proc *proc, tc__cond_fn cond, void *ctx)
{
	const struct tc__p2p_engine *e = proc->team->p2p_engine;
	return e ? e->wait(proc, cond, ctx) : tc__progress_wait(proc, cond, ctx);
}

/* Names the wait about to start for the watchdog (not a collective's). */
void tc__wait_named(struct tc_proc *proc, const char *call)
{
	proc->cur_call = call;
	proc->cur_alg = NULL;
	proc->cur_round = -1;
}

/* tc_wait, naming the call for the watchdog. */
int tc__wait_as(struct tc_proc *proc, struct tc__req *req, size_t *received, const char *call)
{
	if (!tc__complete(proc, req)) {
		tc__wait_named(proc, call);
		int err = tc__wait_cond(proc, tc__cond_one, req);
		if (err)
			return tc__wait_failed_one(proc, req, err);
	}
	tc__req_clock(proc, req);
	if (req->kind == TC__KIND_RECV)
		tc__emulate_sync(proc); /* no message is taken before the model delivers it */
	if (received)
		*received = req->received;
	return req->status;
}

/* A request that is not active: never started, or a collective request
 * already completed by a wait or test (then inactive until tc_start). */
static int tc__inactive(const char *call, const struct tc__req *req)
{
	if (req->kind == TC__KIND_EXT)
		tc__set_detail("%s: the collective request is not active (already completed by a "
		               "wait or test, or a persistent one not started since)",
		               call);
	else
		tc__set_detail("%s: the request was never started (or its start failed)", call);
	return TC_EINVAL;
}

/* What a wait or test (call) takes: a request started, by proc
 * (tc__req_foreign); else TC_EINVAL with the detail. */
static int tc__req_waitable(struct tc_proc *proc, tc_request *handle, const char *call)
{
	const struct tc__req *req = tc__req(handle);
	if (req->state == TC__REQ_IDLE)
		return tc__inactive(call, req);
	return tc__req_foreign(proc, handle, call);
}

/* A layer above's request: its own wait (which may block on its emulated
 * deadlines), then its end. */
static int tc__wait_ext(struct tc_proc *proc, struct tc__req *req)
{
	int err = req->state == TC__REQ_DONE ? TC_OK : proc->ext_wait(proc, req);
	int status = err ? err : req->status;
	proc->ext_end(proc, req, status);
	return status;
}

int tc_wait(struct tc_proc *proc, tc_request *handle, size_t *received)
{
	tc__clear_detail();
	struct tc__req *req = tc__req(handle);
	if (!proc || !req)
		return TC_EINVAL;
	if (tc__req_waitable(proc, handle, "tc_wait"))
		return TC_EINVAL;
	if (req->kind == TC__KIND_EXT) {
		if (received)
			*received = 0;
		return tc__wait_ext(proc, req);
	}
	return tc__wait_as(proc, req, received, "tc_wait");
}

int tc__waitall_as(struct tc_proc *proc, int n, tc_request *reqs, const char *call)
{
	struct tc__reqs rs = {n, reqs};
	/* The layer above's requests first, by their own waits. */
	for (int i = 0; i < n; i++) {
		struct tc__req *r = tc__req(&reqs[i]);
		int err = r->kind == TC__KIND_EXT && r->state != TC__REQ_DONE ? proc->ext_wait(proc, r)
		                                                              : TC_OK;
		if (err)
			return tc__wait_failed(proc, n, reqs, err);
	}
	if (!tc__cond_all(proc, &rs)) {
		tc__wait_named(proc, call);
		int err = tc__wait_cond(proc, tc__cond_all, &rs);
		if (err)
			return tc__wait_failed(proc, n, reqs, err);
	}
	/* Clock: sends in any order, receives in order of arrival (ties by
	 * position), whatever order they physically completed in. */
	for (int i = 0; i < n; i++)
		if (tc__req(&reqs[i])->kind == TC__KIND_SEND)
			tc__req_clock(proc, tc__req(&reqs[i]));
	for (;;) {
		struct tc__req *next = NULL;
		for (int i = 0; i < n; i++) {
			struct tc__req *r = tc__req(&reqs[i]);
			if (r->kind == TC__KIND_RECV && !r->clocked && r->status == TC_OK &&
			    (!next || r->clock < next->clock))
				next = r;
		}
		if (!next)
			break;
		tc__req_clock(proc, next);
	}
	for (int i = 0; i < n; i++)
		if (tc__req(&reqs[i])->kind == TC__KIND_RECV) {
			tc__emulate_sync(proc);
			break;
		}
	int status = TC_OK;
	for (int i = 0; i < n && !status; i++)
		status = tc__req(&reqs[i])->status;
	for (int i = 0; i < n; i++)
		if (tc__req(&reqs[i])->kind == TC__KIND_EXT)
			proc->ext_end(proc, tc__req(&reqs[i]), tc__req(&reqs[i])->status);
	return status;
}

int tc_waitall(struct tc_proc *proc, int n, tc_request *reqs)
{
	tc__clear_detail();
	if (!proc || n < 0 || (n && !reqs))
		return TC_EINVAL;
	/* A request that was never started (or whose start failed) would be
	 * waited for forever, or report a stale status. */
	for (int i = 0; i < n; i++) {
		if (tc__req_waitable(proc, &reqs[i], "tc_waitall"))
			return TC_EINVAL;
	}
	return tc__waitall_as(proc, n, reqs, "tc_waitall");
}

int tc_test(struct tc_proc *proc, tc_request *handle, int *done)
{
	tc__clear_detail();
	struct tc__req *req = tc__req(handle);
	if (!proc || !req || !done)
		return TC_EINVAL;
	if (tc__req_waitable(proc, handle, "tc_test"))
		return TC_EINVAL;
	tc__progress(proc);
	*done = tc__complete(proc, req);
	/* On a fibre: the CPU's fibres waiting in a test, perhaps the peers
	 * this request waits for, are progressed too (lib/p2p/progress.c). */
	if (!*done && proc->db.task && tc__test_help(proc))
		*done = tc__complete(proc, req);
	if (*done && req->kind == TC__KIND_EXT) {
		int status = req->status;
		proc->ext_end(proc, req, status);
		return status;
	}
	if (*done) {
		tc__req_clock(proc, req);
		if (req->kind == TC__KIND_RECV)
			tc__emulate_sync(proc);
		return req->status;
	}
	if (proc->db.task) {
		/* A fibre polling in a loop would keep its peer, perhaps a fibre
		 * of the same CPU, from ever running: let the CPU's others run. */
		tc__test_yield(proc);
	}
	if (tc__aborted(proc)) {
		/* No progress will ever be made: the request is dead, and a
		 * test loop must end. */
		*done = 1;
		return tc__wait_failed_one(proc, req, TC_EABORTED);
	}
	/* The team's timeout bounds a polling loop as it bounds a wait: from
	 * the first poll that found the request not done (the time between
	 * polls counts; with no timeout, no clock is read). */
	uint64_t limit = proc->team->timeout_ns;
	if (limit) {
		uint64_t now = tc__now_ns();
		if (!req->tested_since)
			req->tested_since = now;
		else if (now - req->tested_since > limit) {
			tc__wait_named(proc, "tc_test");
			tc__progress_timed_out(proc, now - req->tested_since);
			*done = 1;
			return tc__wait_failed_one(proc, req, TC_ETIMEDOUT);
		}
	}
	return TC_OK;
}

int tc_cancel(struct tc_proc *proc, tc_request *handle)
{
	tc__clear_detail();
	struct tc__req *req = tc__req(handle);
	if (!proc || !req || req->state == TC__REQ_IDLE)
		return TC_EINVAL;
	if (tc__req_foreign(proc, handle, "tc_cancel"))
		return TC_EINVAL;
	if (req->kind == TC__KIND_EXT) {
		tc__set_detail("tc_cancel: a collective request cannot be cancelled (wait for it)");
		return TC_EINVAL;
	}
	if (req->state == TC__REQ_DONE || tc__complete(proc, req))
		return TC_OK; /* too late to cancel, and nothing to do */
	if (proc->team->p2p_engine)
		return proc->team->p2p_engine->cancel(proc, req);
	/* Before an abort only what no peer has taken: a queued receive that
	 * no packet has been matched to, a queued send none of whose packets
	 * is in the channel, a point-to-point single-copy send whose
	 * descriptor nobody has claimed.  After it, anything: no progress is
	 * made any more, and tc__req_retire waits out a receiver copying. */
	if (req->state == TC__REQ_RNDV_WAIT && req->far && !tc__aborted(proc)) {
		uint64_t open = TC__CLAIM_OPEN;
		if (!atomic_compare_exchange_strong_explicit(&req->fnode->claim, &open,
		                                             TC__CLAIM_CANCELLED, memory_order_relaxed,
		                                             memory_order_relaxed))
			return TC_EPENDING; /* claimed: the receiver copies it */
		proc->npending_rndv--;
		tc__far_sent_drop(proc, req->fnode);
		req->state = TC__REQ_DONE;
		req->status = TC_ECANCELED;
		req->clocked = 1;
		return TC_OK;
	}
	if (req->state == TC__REQ_RNDV_WAIT && !tc__aborted(proc) && !tc__coll_kind((unsigned)req->tag)) {
		struct tc__chan *ch = proc->ports[req->nbr].out;
		uint64_t open = TC__CLAIM_OPEN;
		/* Acquire: pairs with the consumer's release store of head in
		 * tc__chan_pop(); a descriptor it popped was claimed (or
		 * skipped: never ours to cancel twice).  Below head the line is
		 * still the descriptor's: only we, its producer, overwrite it. */
		if (atomic_load_explicit(&ch->head, memory_order_acquire) > req->rndv_pos ||
		    !atomic_compare_exchange_strong_explicit(tc__claim_word(ch, req->rndv_pos), &open,
		                                             TC__CLAIM_CANCELLED, memory_order_relaxed,
		                                             memory_order_relaxed))
			return TC_EPENDING; /* claimed: the receiver copies it */
		proc->npending_rndv--;
		tc__rs_unlink(proc, req);
		req->state = TC__REQ_DONE;
		req->status = TC_ECANCELED;
		req->clocked = 1;
		return TC_OK;
	}
	if (req->state != TC__REQ_QUEUED && !tc__aborted(proc))
		return TC_EPENDING;
	tc__retire(proc, req, TC_ECANCELED);
	return TC_OK;
}

int tc_request_status(const tc_request *handle, tc_status *st)
{
	tc__clear_detail();
	return tc__req_status(handle, st);
}

int tc__req_status(const tc_request *handle, tc_status *st)
{
	const struct tc__req *req = (const struct tc__req *)(const void *)handle;
	if (!req || !st)
		return TC_EINVAL;
	if (req->kind == TC__KIND_EXT && (req->state == TC__REQ_DONE || req->ended)) {
		/* A collective's: its outcome alone (MPI's empty status), also
		 * once the wait or test that completed it made it inactive. */
		memset(st, 0, sizeof *st);
		st->source = TC_ANY_SOURCE;
		st->tag = TC_ANY_TAG;
		st->error = req->status;
		return TC_OK;
	}
	if (req->state == TC__REQ_IDLE)
		return TC_EINVAL;
	if (req->state != TC__REQ_DONE)
		return TC_EPENDING;
	memset(st, 0, sizeof *st);
	st->source = req->kind == TC__KIND_SEND ? req->peer : req->st_src;
	st->tag = req->kind == TC__KIND_SEND ? req->utag : req->st_tag;
	st->error = req->status;
	st->bytes = req->kind == TC__KIND_SEND ? req->bytes : req->received;
	return TC_OK;
}
