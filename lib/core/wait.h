/* SPDX-License-Identifier: MIT */
/*
 * lib/core/wait.h - how a virtual processor waits, and how it is woken:
 * park and wake, and the spin/yield/block policy.  Nothing here knows what a
 * waiter waits for; the loop that makes progress while it waits belongs to
 * the layer that makes progress (tc__progress_wait(), lib/p2p/progress.c,
 * as MPICH's MPID_Progress_wait).
 *
 * Every proc owns one doorbell, a 32-bit futex word.  A proc that has nothing
 * to do spins, then yields, then sleeps on its doorbell (the policy and the
 * thresholds are per team: struct tc__waiter, tc__wait_next()).  Before it
 * sleeps it raises the wait hint of every channel it waits on (want_data on
 * the channels it reads, want_space on the ones it writes); a peer that
 * publishes data or frees space on such a channel rings the doorbell.
 *
 * No lost wake-up (Dekker with an eventcount):
 *   sleeper: word = AWAKE (tc__park_prepare); raise hints; sleeper fence;
 *            re-check everything; CAS word AWAKE -> ASLEEP (fails if
 *            NOTIFIED: re-check); futex_wait (both in tc__park)
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
 * Fibres (lib/fibre/runq.h): a doorbell whose owner is a fibre (db->task)
 * keeps the same word and the same protocol; only the two system calls
 * change.  Where the sleeper would futex_wait, tc__park() switches to the
 * next ready fibre of its CPU (tc__task_block); where the waker would
 * futex_wake, tc__doorbell_ring() makes the task ready (tc__task_wake: the
 * local FIFO when the waker runs on the same CPU, no system call; else the
 * CPU's remote queue, and a futex wake of that CPU's thread only if it
 * sleeps).  Still no lost wake-up: the hints, fences and the CAS
 * AWAKE -> ASLEEP are unchanged, so either the sleeper's re-check sees the
 * publication, or the waker's exchange sees ASLEEP; that exchange (or, for
 * a park with a timeout, the timer's CAS ASLEEP -> AWAKE) is the one
 * transition off ASLEEP, so exactly one party makes the task ready.  A
 * wake that comes before the sleeper has switched away is harmless: only
 * the sleeper's own CPU runs it, i.e. after the switch, or the sleeper's
 * own pick of the next fibre finds itself and goes on.  Kernel threads
 * (tc_attach) and fibres of one team ring each other the same way: the
 * ringer looks at the owner's db->task, not at itself.
 *
 * Nothing here is public; thread-safety as stated per function.
 */
#ifndef TC_CORE_WAIT_H
#define TC_CORE_WAIT_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/arch.h>

#include "core/chan.h"
#include "topocoll.h"

enum { TC__DB_AWAKE = 0, TC__DB_ASLEEP = 1, TC__DB_NOTIFIED = 2 };

struct tc__task;

struct tc__doorbell {
	alignas(TC__LINE) _Atomic int32_t word;
	/* The owner when it runs as a fibre (lib/fibre/runq.h): parking then
	 * switches to the CPU's next ready fibre, a ring makes it ready.  NULL:
	 * a kernel thread (futex).  Written only while no rank runs (tc_run). */
	struct tc__task *task;
};
_Static_assert(sizeof(struct tc__doorbell) == TC__LINE, "a doorbell is one cache line");

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

/* Gives the CPU away for a moment: a fibre switches to its CPU's next ready
 * fibre (returns at once when there is none), a kernel thread calls
 * sched_yield().  What TC__WAIT_YIELD and tc_yield() do. */
void tc__yield(void);

/* Parking, the sleeper's side of the protocol above, in three steps:
 * tc__park_prepare(db); raise the hints of whatever the waiter waits on;
 * tc__sleeper_fence(asym); re-check the wait's condition; if it still does
 * not hold, tc__park().  Only db's owner parks on it. */
static inline void tc__park_prepare(struct tc__doorbell *db)
{
	/* Relaxed: consumes a stale notification; the sleeper fence that
	 * follows orders it before the re-check. */
	atomic_store_explicit(&db->word, TC__DB_AWAKE, memory_order_relaxed);
}

/* Sleeps on db unless it was rung since tc__park_prepare(), for at most
 * timeout_ns (0: no limit); returns true when it went to sleep.  A wake-up
 * may be spurious: the caller re-checks. */
bool tc__park(struct tc__doorbell *db, uint64_t timeout_ns);

/*
 * The waiting policy: what a waiter whose condition does not hold yet does
 * next.  TC_WAIT_SPIN spins; TC_WAIT_YIELD spins for spin_ns, then yields;
 * TC_WAIT_BLOCK spins for spin_ns, yields for yield_ns more, then parks.
 * The clock is read every TC__SPIN_CLOCK_EVERY-th round only.  One waiter
 * per wait, on the stack of the waiting thread.
 */
enum { TC__SPIN_CLOCK_EVERY = 64 };
enum tc__wait_step {
	TC__WAIT_SPIN,    /* paused (cpu_relax): look again */
	TC__WAIT_YIELD,   /* yielded the CPU: look again */
	TC__WAIT_PARK,    /* park (tc__park_prepare ... tc__park), then look again */
	TC__WAIT_TIMEOUT, /* waited longer than the timeout */
};
struct tc__waiter {
	enum tc_wait_policy pol;
	unsigned iter;
	bool spinning;
	uint64_t spin_ns, yield_ns, timeout_ns; /* timeout 0: none */
	uint64_t start, waited;                 /* ns, tc__now_ns() */
};

static inline void tc__waiter_init(struct tc__waiter *w, enum tc_wait_policy pol, uint64_t spin_ns,
                                   uint64_t yield_ns, uint64_t timeout_ns)
{
	*w = (struct tc__waiter){.pol = pol,
	                         .spinning = true,
	                         .spin_ns = spin_ns,
	                         .yield_ns = yield_ns,
	                         .timeout_ns = timeout_ns};
}

/* The fast path of a round of waiting: true when the waiter is still
 * spinning and this is not a round that reads the clock (it has paused
 * already, from round 4096 on); false: call tc__wait_next(). */
static inline bool tc__wait_spin(struct tc__waiter *w)
{
	unsigned iter = w->iter++;
	if (w->spinning && iter % TC__SPIN_CLOCK_EVERY) {
		if (iter > 4096)
			tc__cpu_relax();
		return true;
	}
	return false;
}

/* The wait starts over: its clock from the next look, spinning again if
 * it may spin (a fibre never does). */
static inline void tc__waiter_restart(struct tc__waiter *w, bool may_spin)
{
	w->start = 0;
	w->waited = 0;
	w->iter = 0;
	w->spinning = may_spin;
}

/* The slow path: reads the clock and decides; pauses or yields itself
 * (TC__WAIT_SPIN, TC__WAIT_YIELD).  The waiter keeps spinning, whatever the
 * policy, until hold_until_ns (tc__now_ns() time; 0: no hold). */
static inline enum tc__wait_step tc__wait_next(struct tc__waiter *w, uint64_t hold_until_ns)
{
	uint64_t now = tc__now_ns();
	if (!w->start)
		w->start = now;
	w->waited = now - w->start;
	if (w->timeout_ns && w->waited > w->timeout_ns)
		return TC__WAIT_TIMEOUT;
	w->spinning = w->pol == TC_WAIT_SPIN || w->waited < w->spin_ns || now < hold_until_ns;
	if (w->spinning) {
		tc__cpu_relax();
		return TC__WAIT_SPIN;
	}
	if (w->pol == TC_WAIT_YIELD || w->waited < w->spin_ns + w->yield_ns) {
		tc__yield();
		return TC__WAIT_YIELD;
	}
	return TC__WAIT_PARK;
}

/* What is left of the timeout, for tc__park(): 0 when there is none, at
 * least 1 ns otherwise. */
static inline uint64_t tc__wait_left_ns(const struct tc__waiter *w)
{
	if (!w->timeout_ns)
		return 0;
	return w->timeout_ns > w->waited ? w->timeout_ns - w->waited : 1;
}

#endif /* TC_CORE_WAIT_H */
