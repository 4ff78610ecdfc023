/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/progress.c - the progress-wait: a proc waits for a condition and
 * makes progress on its requests meanwhile (MPICH's MPID_Progress_wait).
 * The waiting itself (spin, yield, park on the doorbell, and the protocol
 * that loses no wake-up) is lib/core/wait.h's; what this layer adds is what
 * to do between two looks (tc__progress), which channels' hints to raise
 * before parking (tc__set_hints), and the abort and timeout exits.
 */
#include "p2p/p2p.h"

/* Publishes what the proc waits for (the watchdog's view, struct
 * tc__wstate): the call, and the first port with a queued request, receives
 * first, with the bytes it still has to move.  Relaxed stores: a snapshot. */
static void tc__ws_publish(struct tc_proc *proc)
{
	int peer = -1, sending = 0, pending = 0;
	uint64_t bytes = 0;
	for (int i = 0; i < proc->nactive; i++) {
		const struct tc__port *port = &proc->ports[proc->active[i]];
		for (const tc_request *r = port->rq_head; r; r = r->next, pending++)
			if (peer < 0 || sending) {
				peer = port->peer;
				sending = 0;
				size_t total = r->state == TC__REQ_STREAMING ? r->received : r->bytes;
				bytes = total > r->moved ? total - r->moved : 0;
			}
		for (const tc_request *r = port->sq_head; r; r = r->next, pending++)
			if (peer < 0) {
				peer = port->peer;
				sending = 1;
				bytes = r->bytes - r->moved;
			}
	}
	struct tc__wstate *ws = &proc->ws;
	atomic_store_explicit(&ws->call, proc->cur_call, memory_order_relaxed);
	atomic_store_explicit(&ws->alg, proc->cur_alg, memory_order_relaxed);
	atomic_store_explicit(&ws->round, proc->cur_round, memory_order_relaxed);
	atomic_store_explicit(&ws->peer, peer, memory_order_relaxed);
	atomic_store_explicit(&ws->sending, sending, memory_order_relaxed);
	atomic_store_explicit(&ws->bytes, bytes, memory_order_relaxed);
	atomic_store_explicit(&ws->pending, pending + proc->npending_rndv, memory_order_relaxed);
	atomic_store_explicit(&ws->state, TC__WS_WAITING, memory_order_relaxed);
}

/* The end of a wait the watchdog was shown. */
static inline int tc__ws_done(struct tc_proc *proc, bool shown, int ret)
{
	if (shown)
		atomic_store_explicit(&proc->ws.state, TC__WS_OUTSIDE, memory_order_relaxed);
	return ret;
}

void tc__progress_timed_out(struct tc_proc *proc, uint64_t waited_ns)
{
	/* What is still missing now, not at the last sleep: a peer's data may
	 * have come in since (and been taken by the last progress). */
	tc__ws_publish(proc);
	tc__watchdog_fire(proc, waited_ns);
	tc_team_abort(proc->team);
	tc__rndv_quiesce(proc);
	atomic_store_explicit(&proc->ws.state, TC__WS_OUTSIDE, memory_order_relaxed);
}

int tc__progress_wait(struct tc_proc *proc, tc__cond_fn cond, void *ctx)
{
	struct tc_team *team = proc->team;
	struct tc__waiter w;
	tc__waiter_init(&w, team->wait, team->spin_ns, team->yield_ns, team->timeout_ns);
	bool shown = false; /* published for the watchdog (tc__ws_publish) */
	/* A fibre never spins: its peer may be a fibre of its own CPU, which
	 * runs only when we yield or park (lib/core/team.c, fibres). */
	bool fibre = proc->db.task != NULL;
	if (fibre)
		w.spinning = false;

	for (;;) {
		tc__progress(proc);
		if (cond(proc, ctx))
			return tc__ws_done(proc, shown, 0);
		/* Relaxed: a hint only; tc_team_abort() also rings the doorbell. */
		if (atomic_load_explicit(&team->aborted, memory_order_relaxed)) {
			tc__rndv_quiesce(proc); /* our buffers may be freed on return */
			return tc__ws_done(proc, shown, TC_EABORTED);
		}
		if (tc__wait_spin(&w))
			continue;
		/* While a peer may still be copying a long single-copy send of
		 * ours, keep the CPU (lib/p2p/p2p.c, spin_until_ns). */
		enum tc__wait_step step =
		        tc__wait_next(&w, proc->npending_rndv && !fibre ? proc->spin_until_ns : 0);
		/* Past its first spins (or about to give up the CPU) a wait
		 * shows itself to the watchdog, and again at each sleep: what
		 * it waits for changes as requests complete. */
		if ((!shown && (step != TC__WAIT_SPIN || w.iter > TC__SPIN_CLOCK_EVERY)) ||
		    step == TC__WAIT_PARK) {
			tc__ws_publish(proc);
			shown = true;
		}
		switch (step) {
		case TC__WAIT_SPIN:
		case TC__WAIT_YIELD:
			continue;
		case TC__WAIT_TIMEOUT:
			tc__progress_timed_out(proc, w.waited);
			return TC_ETIMEDOUT;
		case TC__WAIT_PARK:
			break;
		}

		tc__park_prepare(&proc->db);
		tc__set_hints(proc, true);
		tc__sleeper_fence(team->asym_fence); /* pairs with tc__waker_fence() in tc__notify() */
		/* cond() may post new requests (the executor forwards and sends
		 * as data arrives); their channels' hints were not raised above,
		 * so a post means: do not park, go round and raise them. */
		uint64_t posts = proc->nposts;
		tc__progress(proc);
		if (!cond(proc, ctx) && proc->nposts == posts &&
		    !atomic_load_explicit(&team->aborted, memory_order_relaxed) &&
		    tc__park(&proc->db, tc__wait_left_ns(&w)))
			proc->stats.waits_blocked++;
		tc__set_hints(proc, false);
	}
}
