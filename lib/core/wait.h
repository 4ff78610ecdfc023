/* SPDX-License-Identifier: MIT */
/*
 * lib/core/wait.h - how a virtual processor waits, and how it is woken.
 *
 * Every proc owns one doorbell, a 32-bit futex word.  A proc that has nothing
 * to do spins, then yields, then sleeps on its doorbell (the policy and the
 * thresholds are per team).  Before it sleeps it raises the wait hint of every
 * channel it waits on (want_data on the channels it reads, want_space on the
 * ones it writes); a peer that publishes data or frees space on such a channel
 * rings the doorbell.
 *
 * No lost wake-up (Dekker with an eventcount):
 *   sleeper: word = AWAKE; raise hints; sleeper fence; re-check everything;
 *            CAS word AWAKE -> ASLEEP (fails if NOTIFIED: re-check); futex_wait
 *   waker:   publish; waker fence; if hint raised:
 *            if exchange(word, NOTIFIED) == ASLEEP: futex_wake
 * The two fences make a store-buffering pair: either the sleeper's re-check
 * sees the publication or the waker sees the hint.  The fences are
 * asymmetric where the kernel allows it: the sleeper (slow path) runs
 * membarrier(PRIVATE_EXPEDITED), which puts a full barrier on every running
 * thread of the process, so the waker (fast path) needs only a compiler
 * barrier and no system call or fence when nobody sleeps.  Each team
 * chooses (team->asym_fence): only teams whose ranks rarely sleep (not
 * oversubscribed, not TC_WAIT_BLOCK) take the asymmetric pair, since every
 * membarrier sends IPIs; the others, and kernels without membarrier, use a
 * seq_cst fence on both sides.  A team whose policy never blocks (spin,
 * yield) skips the waker side entirely.
 *
 * Nothing here is public; thread-safety as stated per function.
 */
#ifndef TC_CORE_WAIT_H
#define TC_CORE_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/arch.h>

#include "core/chan.h"

enum { TC__DB_AWAKE = 0, TC__DB_ASLEEP = 1, TC__DB_NOTIFIED = 2 };

struct tc__doorbell {
	alignas(TC__LINE) _Atomic int32_t word;
	char pad[TC__LINE - sizeof(int32_t)];
};

/* Process-wide: non-zero when membarrier(PRIVATE_EXPEDITED) is registered. */
extern int tc__asym_fence;

/* Registers membarrier once per process (idempotent, thread-safe). */
void tc__wait_global_init(void);

/* The waker side of the Dekker pair; asym is the team's choice (both sides of
 * one team must agree). */
static inline void tc__waker_fence(bool asym)
{
	if (asym)
		atomic_signal_fence(memory_order_seq_cst); /* the sleeper's membarrier does the rest */
	else
		atomic_thread_fence(memory_order_seq_cst); /* pairs with tc__sleeper_fence() */
}

/* The sleeper side of the Dekker pair. */
void tc__sleeper_fence(bool asym);

/* Rings db: any thread.  Wakes its owner if it sleeps; otherwise leaves a
 * notification that makes its next attempt to sleep re-check instead. */
void tc__doorbell_ring(struct tc__doorbell *db);

/* Called by the side that just published data (hint = &ch->want_data) or
 * freed space (hint = &ch->want_space) on a team that may block. */
static inline void tc__notify(_Atomic uint32_t *hint, struct tc__doorbell *db, bool asym)
{
	tc__waker_fence(asym);
	/* Relaxed: ordered by the fences of the Dekker pair above. */
	if (atomic_load_explicit(hint, memory_order_relaxed))
		tc__doorbell_ring(db);
}

/* One spin-loop pause (liburcu's portable cpu_relax). */
static inline void tc__cpu_relax(void)
{
	caa_cpu_relax();
}

uint64_t tc__now_ns(void);

/*
 * What one level of waiting costs the team's wall clock, in ns, as seen by
 * an algorithm's choice (TC_ALG_AUTO).  A level is a step of a schedule's
 * longest chain of dependent waits: a round, or one hop of a routed transfer
 * (each forwarder waits for it).  0 when every rank has its own CPU (a wait
 * spins about a message's time, which the model already charges), in
 * emulated mode (the model's delays are the point) and under TC_WAIT_SPIN.
 * Otherwise ranks outnumber CPUs and a rank that waits gives its CPU away:
 * each level then costs every CPU about one pass over its ranks, each of
 * them switched in and out once, ceil(p / cpus) * TC__SWITCH_NS.  So a
 * schedule of many levels (dissemination: ceil(log2 p)) loses to a flatter
 * one with more, serialised messages (linear: 2 levels).  AUTO adds this to
 * the schedule's price at the machine's rates (tc__machine_score, lib/coll/
 * coll.c); on 2 CPUs that picks the linear barrier from p = 5 on and
 * dissemination for p = 3, 4, as measured (p = 4: 6 against 8 us; p = 5: 15
 * against 10 us; p = 64: 420 against 100 us, dissemination first).  Pure
 * function of the team's configuration: every rank gets the same answer.
 * Thread-safe.
 */
struct tc_team;
uint64_t tc__wait_level_ns(const struct tc_team *team);

/* The CPUs a native team's ranks share when they outnumber them, else 0 (a
 * CPU per rank, or emulated: the model's delays are the point).  Where this
 * is not 0, the wall clock is the CPUs' work and TC_ALG_AUTO prices the
 * machine rather than the model (lib/coll/coll.c).  Thread-safe. */
int tc__shared_cpus(const struct tc_team *team);

#endif /* TC_CORE_WAIT_H */
