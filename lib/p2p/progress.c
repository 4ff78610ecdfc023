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

int tc__progress_wait(struct tc_proc *proc, tc__cond_fn cond, void *ctx)
{
	struct tc_team *team = proc->team;
	struct tc__waiter w;
	tc__waiter_init(&w, team->wait, team->spin_ns, team->yield_ns, team->timeout_ns);
	/* A fibre never spins: its peer may be a fibre of its own CPU, which
	 * runs only when we yield or park (lib/core/team.c, fibres). */
	bool fibre = proc->db.task != NULL;
	if (fibre)
		w.spinning = false;

	for (;;) {
		tc__progress(proc);
		if (cond(proc, ctx))
			return 0;
		/* Relaxed: a hint only; tc_team_abort() also rings the doorbell. */
		if (atomic_load_explicit(&team->aborted, memory_order_relaxed)) {
			tc__rndv_quiesce(proc); /* our buffers may be freed on return */
			return TC_EABORTED;
		}
		if (tc__wait_spin(&w))
			continue;
		/* While a peer may still be copying a long single-copy send of
		 * ours, keep the CPU (lib/p2p/p2p.c, spin_until_ns). */
		switch (tc__wait_next(&w, proc->npending_rndv && !fibre ? proc->spin_until_ns : 0)) {
		case TC__WAIT_SPIN:
		case TC__WAIT_YIELD:
			continue;
		case TC__WAIT_TIMEOUT:
			tc_team_abort(team);
			tc__rndv_quiesce(proc);
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
