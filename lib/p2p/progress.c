/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/progress.c - the progress-wait: a proc waits for a condition and
 * makes progress on its requests meanwhile (MPICH's MPID_Progress_wait).
 * The waiting itself (spin, yield, park on the doorbell, and the protocol
 * that loses no wake-up) is lib/core/wait.h's; what this layer adds is what
 * to do between two looks (tc__progress), which channels' hints to raise
 * before parking (tc__set_hints), the abort and timeout exits, and the
 * mismatch probe of a collective's long wait (tc__probe).
 */
#include "base/error_detail.h"
#include "p2p/p2p.h"
#include "p2p/request.h"

/* Publishes what the proc waits for (the watchdog's view, struct
 * tc__wstate): the call, and the first port with a queued request, receives
 * first, with the bytes it still has to move.  Relaxed stores: a snapshot. */
static void tc__ws_publish(struct tc_proc *proc)
{
	int peer = -1, sending = 0, pending = 0;
	uint64_t bytes = 0;
	for (int i = 0; i < proc->nactive; i++) {
		const struct tc__port *port = &proc->ports[proc->active[i]];
		for (const struct tc__req *r = port->rq_head; r; r = r->next, pending++)
			if (peer < 0 || sending) {
				peer = port->peer;
				sending = 0;
				size_t total = r->state == TC__REQ_STREAMING ? r->received : r->bytes;
				bytes = total > r->moved ? total - r->moved : 0;
			}
		for (const struct tc__req *r = port->urq_head; r; r = r->next, pending++)
			if (peer < 0 || sending) {
				peer = port->peer;
				sending = 0;
				size_t total = r->state == TC__REQ_STREAMING ? r->received : r->bytes;
				bytes = total > r->moved ? total - r->moved : 0;
			}
		for (const struct tc__req *r = port->sq_head; r; r = r->next, pending++)
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
	tc__ws_done(proc, true, 0);
}

/* A request of the running collective call still queued on port, or a
 * single-copy send of it whose descriptor the neighbour has not taken
 * (acquire: pairs with the receiver's release store of rndv_done, which
 * comes before its return is published). */
static bool tc__probe_ours(const struct tc_proc *proc, const struct tc__port *port)
{
	for (const struct tc__req *r = port->rs_head; r; r = r->next)
		if (r->tag == proc->coll_tag && !atomic_load_explicit(&r->rndv_done, memory_order_acquire))
			return true;
	for (const struct tc__req *r = port->rq_head; r; r = r->next)
		if (r->tag == proc->coll_tag)
			return true;
	for (const struct tc__req *r = port->sq_head; r; r = r->next)
		if (r->tag == proc->coll_tag)
			return true;
	return false;
}

/*
 * The mismatch probe: a rank waiting in a collective call (mismatch check
 * on) on a neighbour for a message of this call, or for it to take one,
 * looks at that neighbour's published state.  Conclusive, whatever the
 * timing: the neighbour returned from its SPMD function (its sends of every
 * call it made are complete: single-copy ones were copied, streamed ones
 * are in the channel, which the release/acquire pair on ws.state makes
 * visible to the progress that follows the probe), or it entered the call
 * of this sequence number with another signature (calls_seen).  Anything
 * else (behind, ahead with the same signature, in its own code, not
 * attached) says nothing.  Both findings stay true for the rest of the
 * run; the caller then makes progress once more and, if a request of the
 * call is still queued on that port, the call has failed.  This ends the
 * hangs in which every rank waits for a message nobody sends (README,
 * "Mismatch detection").  Returns the port (an index into proc->ports) of
 * the first disagreeing neighbour, or -1.  Called from the proc's own
 * thread.
 */
static int tc__probe(struct tc_proc *proc)
{
	const struct tc_team *team = proc->team;
	const uint64_t seq = proc->coll_seq;
	const uint64_t want = tc__call_seen(seq, proc->coll_sig);
	/* Every port, not only the active ones: a port whose only business
	 * is a single-copy send waiting to be taken has nothing queued. */
	for (int i = 0; i < proc->deg; i++) {
		const struct tc__port *port = &proc->ports[i];
		if (!tc__probe_ours(proc, port))
			continue;
		const struct tc_proc *n = &team->procs[port->peer];
		if (!atomic_load_explicit(&n->attached, memory_order_relaxed))
			continue;
		if (atomic_load_explicit(&n->ws.state, memory_order_acquire) == TC__WS_RETURNED)
			return i;
		uint64_t seen = atomic_load_explicit(&n->calls_seen[seq % TC__CALLS_SEEN],
		                                     memory_order_relaxed);
		if ((seen >> 40) == (want >> 40) && seen != want)
			return i;
	}
	return -1;
}

void tc__mismatch_form(struct tc_proc *proc, const char *call, const char *alg, int peer)
{
	if (!call) {
		call = proc->cur_call ? proc->cur_call : "collective";
		alg = proc->cur_alg;
	}
	proc->form_peer = peer + 1;
	proc->form_call = call;
	proc->form_alg = alg;
	tc__set_detail("%s (%s): rank %d makes this call in the other form (one rank the blocking "
	               "call, the other its nonblocking or persistent form, which do not match: "
	               "every rank makes a collective in the same form)",
	               call, alg ? alg : "?", peer);
}

/* Whether the neighbour of port i, found by the probe, entered proc's
 * running call in the other form. */
static bool tc__probe_other_form(const struct tc_proc *proc, int i)
{
	const struct tc_proc *n = &proc->team->procs[proc->ports[i].peer];
	const uint64_t seq = proc->coll_seq;
	return tc__other_form_seen(proc, seq,
	                           atomic_load_explicit(&n->calls_seen[seq % TC__CALLS_SEEN],
	                                                memory_order_relaxed));
}

/* How often a rank parked in a collective wakes to probe again: the peer
 * it waits on may reach the disagreeing call, or return, after its last
 * look, and no ring tells it.  A thread parks with this timeout; a fibre
 * without one: its CPU wakes its blocked tasks after as long idle
 * (tc__cpu_sweep, lib/fibre/runq.c), cheaper than a timer per block. */
#define TC__PROBE_NS (10 * 1000 * 1000ull)

static uint64_t tc__park_ns(const struct tc__waiter *w, bool probing)
{
	uint64_t left = tc__wait_left_ns(w);
	return probing && (!left || left > TC__PROBE_NS) ? TC__PROBE_NS : left;
}

/* A mark of proc's progress: changes when a round ends, a request is
 * posted or a collective request completes (tc__test_help()). */
static uint64_t tc__moved_mark(const struct tc_proc *proc)
{
	return proc->stats.rounds + proc->nposts + (uint64_t)(unsigned)proc->ext_pending;
}

/* The same, and a message received or sent, a transfer of a schedule
 * received, a peer done copying one of our single-copy sends: what a wait
 * counts as progress.  A long wait (a whole collective is one,
 * tc__plan_run) starts its spin, yield, timeout and mismatch probe over at
 * each change: the thresholds are for the time nothing happens (the
 * competitive rule prices one idle stretch against one sleep), not for the
 * call's length.  Counted from the call's start, every wait of a 4 MiB
 * pipelined reduce at p = 2 past its first millisecond slept (700 of its
 * 1024 rounds, 10 ms a call against 1.4 ms). */
static uint64_t tc__progress_mark(const struct tc_proc *proc)
{
	return tc__moved_mark(proc) + proc->stats.msgs_recv + proc->stats.msgs_sent +
	       proc->stats.transfers_recv + ((uint64_t)proc->npending_rndv << 40);
}

int tc__progress_wait(struct tc_proc *proc, tc__cond_fn cond, void *ctx)
{
	struct tc_team *team = proc->team;
	struct tc__waiter w;
	tc__waiter_init(&w, team->wait, team->spin_ns, team->yield_ns, team->timeout_ns);
	bool shown = false;                 /* published for the watchdog (tc__ws_publish) */
	uint64_t next_probe = TC__PROBE_NS; /* w.waited of the next probe */
	/* A fibre never spins: its peer may be a fibre of its own CPU, which
	 * runs only when we yield or park (lib/core/team.c, fibres). */
	bool fibre = proc->db.task != NULL;
	if (fibre)
		w.spinning = false;
	uint64_t mark = tc__progress_mark(proc);

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
		/* Something happened since the last look: the idle time starts
		 * again (tc__progress_mark). */
		uint64_t now_mark = tc__progress_mark(proc);
		if (now_mark != mark) {
			mark = now_mark;
			tc__waiter_restart(&w, !fibre && w.spin_ns);
			next_probe = TC__PROBE_NS;
		}
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
		if (step == TC__WAIT_TIMEOUT) {
			tc__progress_timed_out(proc, w.waited);
			return TC_ETIMEDOUT;
		}
		/* The mismatch probe: every TC__PROBE_NS of a wait without
		 * progress, from its first TC__PROBE_NS on (not at every sleep:
		 * a rank waiting on 63 links would read 63 other cores' lines
		 * each time, and the probe is for hangs, not for speed). */
		const bool probing = proc->coll_sig && (proc->coll_tag & TC__MSG_COLL);
		int bad = -1;
		if (probing && w.waited >= next_probe) {
			next_probe = w.waited + TC__PROBE_NS;
			bad = tc__probe(proc);
		}
		if (bad >= 0) {
			/* Conclusive, unless what we wait for from that peer has
			 * come in since the last look (a returned peer's last
			 * messages: the probe's acquire made them visible). */
			tc__progress(proc);
			if (cond(proc, ctx))
				return tc__ws_done(proc, shown, 0);
			if (atomic_load(&team->aborted))
				continue; /* the abort explains it: TC_EABORTED above */
			if (tc__probe_ours(proc, &proc->ports[bad])) {
				if (tc__probe_other_form(proc, bad))
					tc__mismatch_form(proc, NULL, NULL, proc->ports[bad].peer);
				tc_team_abort(team);
				tc__rndv_quiesce(proc);
				return tc__ws_done(proc, shown, TC_EMISMATCH);
			}
		}
		if (step != TC__WAIT_PARK)
			continue; /* TC__WAIT_SPIN, TC__WAIT_YIELD: look again */
		if (proc->ext_native) {
			/* A queued call waits on the machine's own flags, which
			 * ring no doorbell (lib/sched/nbc.h). */
			tc__yield();
			continue;
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
		    tc__park(&proc->db, tc__park_ns(&w, probing && !fibre)))
			proc->stats.waits_blocked++;
		tc__set_hints(proc, false);
	}
}

/*
 * The fibres of one CPU help one another in tc_test.  A fibre runs only
 * while the one before it on its CPU calls into the library, so a fibre
 * that computes between tests makes progress only at its own tests; a
 * round of a collective needs its partners' progress, and a chain of
 * rounds across the fibres of a CPU would advance by one rank's round per
 * test.  So the procs whose fibre is suspended in tc_test's yield are kept
 * in a list of their CPU (a thread-local: a CPU's fibres share its kernel
 * thread and never leave it, lib/fibre/runq.h), and a test that finds its
 * request not done progresses every one of them, and itself, again as long
 * as one of them moved (a round ended, a request was posted, a collective
 * request completed): then the CPU's part of every outstanding request has
 * gone as far as it can before the next fibre runs.
 *
 * Why it is safe: such a fibre is suspended at the end of tc_test, after
 * its own progress and before it looks at anything else, on this kernel
 * thread (nothing runs beside it); test_helped keeps two helpers off one
 * proc, ext_busy a step of its queue from re-entering (lib/sched/nbc.c).
 * The progress does not yield, except a failed round's quiesce after an
 * abort (tc__rndv_quiesce); the list may then change under the helper,
 * which starts over (tc__parked_gen).
 */
static _Thread_local struct tc_proc *tc__parked;
static _Thread_local unsigned tc__parked_gen;

bool tc__test_help(struct tc_proc *proc)
{
	bool any = false, moved = true;
	while (moved) {
		moved = false;
		unsigned gen = tc__parked_gen;
		for (struct tc_proc *q = tc__parked; q; q = q->test_next) {
			if (q->test_helped)
				continue;
			uint64_t m = tc__moved_mark(q);
			q->test_helped = 1;
			tc__progress(q);
			q->test_helped = 0;
			moved |= tc__moved_mark(q) != m;
			if (gen != tc__parked_gen) {
				moved = true; /* the list changed: start over */
				break;
			}
		}
		if (moved) {
			any = true;
			tc__progress(proc);
		}
	}
	return any;
}

void tc__test_yield(struct tc_proc *proc)
{
	proc->test_next = tc__parked;
	tc__parked = proc;
	tc__parked_gen++;
	tc__yield();
	struct tc_proc **pp = &tc__parked;
	while (*pp && *pp != proc)
		pp = &(*pp)->test_next;
	if (*pp)
		*pp = proc->test_next;
	proc->test_next = NULL;
	tc__parked_gen++;
}
