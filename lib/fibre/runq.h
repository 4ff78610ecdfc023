/* SPDX-License-Identifier: MIT */
/*
 * lib/fibre/runq.h - the fibre run queues: one pinned kernel thread per CPU,
 * each running many tasks (fibres) from a ready queue of its own.  tc_run's ranks are its tasks when a team runs on fibres.
 *
 * Why here, below lib/core: the scheduler knows tasks, CPUs and words, not
 * teams, channels or doorbells.  lib/core/wait.c builds the doorbell on top
 * of it (a doorbell owned by a task parks with tc__task_block() and is rung
 * with tc__task_wake() instead of futex_wait/futex_wake), so that everything
 * above wait.h runs unchanged on fibres.
 *
 * Tasks stay on their CPU (no migration).  Measured (busy machine, p = 64 on
 * 2 CPUs): a barrier's ranks are already spread evenly by the round-robin
 * placement, and a stealing scheduler would have to make every hand-off of
 * the local ready list atomic; staying put keeps the local list a plain
 * single-threaded FIFO, makes thread-local storage stable under a task (a
 * compiler may cache a TLS address across a switch), and keeps the
 * rank-to-CPU map that tc_run's threads have.
 *
 * Waking: a task made ready by its own CPU (another task of the same CPU,
 * or a timer) goes to the tail of the local FIFO: no atomic instruction, no
 * system call.  A task made ready by any other thread is pushed on its
 * CPU's remote list (a Treiber stack: lock-free push by CAS; the CPU takes
 * the whole list with one exchange, so there is no ABA, and reverses it)
 * and that CPU's kernel thread is woken if it sleeps on its futex.  Why not
 * liburcu's wfcqueue (wait-free enqueue): its volatile accesses and inline
 * assembly atomics are invisible to ThreadSanitizer, which then reports
 * every hand-off as a race; C11 atomics keep the race suite meaningful on
 * fibres, and a CAS retry only happens when two threads wake tasks of one
 * CPU at the same instant.  The idle CPU's sleep is a Dekker pair as well:
 *   idle CPU: idle = 1 (seq_cst); if the remote list is empty (seq_cst
 *             load): futex_wait(idle, 1, earliest deadline)
 *   waker:    push (seq_cst CAS); if idle (seq_cst load) and
 *             exchange(idle, 0) == 1: futex_wake
 * Either the CPU's look at the list sees the new task, or the waker sees
 * idle = 1 and wakes it.
 *
 * Blocking with a word: tc__task_block(self, word, asleep, awake, deadline)
 * is called by a task that has just moved *word to asleep (lib/core/wait.c's
 * CAS AWAKE -> ASLEEP).  Whoever moves the word away from asleep (the
 * doorbell's exchange to NOTIFIED, or the timer's CAS asleep -> awake on
 * expiry) owns the one wake-up, so a task is never enqueued twice; a wake
 * that arrives before the task has switched away finds it (remote) in its
 * CPU's queue, which only its own CPU dequeues, i.e. after the switch, or
 * makes the scheduler pick the task itself (then it simply goes on).
 *
 * Timers: each CPU keeps a binary heap of tasks by absolute deadline
 * (CLOCK_MONOTONIC ns): tasks sleeping until a time (emulated mode,
 * tc__task_sleep_until) and blocks with a timeout.  Expired timers are made
 * ready in deadline order whenever the CPU picks a task, ahead of tasks
 * made ready otherwise (a deadline's tasks run before any later work); a
 * CPU with nothing ready sleeps once, until the earliest deadline or a
 * remote wake-up (FUTEX_WAIT_BITSET with an absolute time).  A precise
 * timer (tc__task_sleep_until: emulated time) is not left to the futex's
 * timeout, which wakes 12-17 us late here (median 16 us; 2 vCPUs under
 * KVM, timer slack 1 ns), and milliseconds late on a loaded machine: the CPU sleeps
 * until a margin before it, then polls its remote list until the deadline.
 * The margin follows the timers' lateness (tc__early_margin below).
 *
 * Thread-safety: tc__task_wake from any thread; tc__task_block, _yield and
 * _sleep_until only by the running task itself; create, run and destroy by
 * one thread.
 */
#ifndef TC_FIBRE_SCHED_H
#define TC_FIBRE_SCHED_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error_detail.h"
#include "fibre/fibre.h"

struct tc__fcpu;
struct tc__task;
typedef void (*tc__task_fn)(struct tc__task *self, void *arg);

struct tc__task {
	struct tc__fibre *fibre;
	struct tc__fcpu *cpu;   /* the CPU it runs on, for good */
	struct tc__task *rnext; /* in its CPU's remote list */
	struct tc__task *next;  /* in its CPU's local FIFO */
	tc__task_fn fn;
	void *arg;
	uint64_t deadline;     /* timer: absolute, tc__now_ns() clock */
	int heap_idx;          /* in the timer heap; -1: not */
	_Atomic int32_t *word; /* block: CAS asleep -> awake on expiry (or the
	                                 CPU's idle sweep, runq.c) */
	int32_t asleep, awake;
	int precise; /* the timer is tc__task_sleep_until's */
	/* Its tc_error_detail() text (lib/base/error_detail.h): the task's
	 * own, not its CPU thread's, which the CPU's other tasks share. */
	struct tc__detail detail;
};

struct tc__runq;

/*
 * A scheduler of ntask tasks over ncpu kernel threads, in blocks of
 * consecutive tasks: CPU k runs tasks k ntask / ncpu .. (k + 1) ntask / ncpu
 * - 1 (rank neighbours are mostly close in rank: a ring of 64 on 2 CPUs then
 * crosses CPUs twice, not 64 times as with i mod ncpu, and a cross-CPU
 * wake-up is the expensive one; measured, p = 64 on 2 loaded CPUs, CPU time
 * per call: ring:64 barrier 443 us against 634, hypercube:6 allreduce 74
 * against 92); cpu_ids (ncpu entries) pins them, NULL leaves them unpinned.
 * Every fibre is created here, with a stack of stack_bytes (0: the default,
 * see tc__fibre_create).  Set each task's fn and arg (tc__runq_task) before
 * tc__runq_run.  Returns 0, TC_EINVAL or TC_ENOMEM.  Freed with
 * tc__runq_destroy().
 */
int tc__runq_create(int ntask, int ncpu, const int *cpu_ids, size_t stack_bytes, struct tc__runq **out);
struct tc__task *tc__runq_task(struct tc__runq *s, int i);
int tc__runq_ntask(const struct tc__runq *s);

/* Starts one kernel thread per CPU, each calling on_start(arg) first
 * (before any of its tasks runs), then running its tasks to completion.
 * Returns 0 or TC_ESYS: a thread could not start; the caller must then make
 * the started CPUs' tasks finish without the others (tc_run aborts the
 * team) before tc__runq_join.  Tasks that never ran stay unfinished.
 * A scheduler may be started again once joined: every task starts afresh
 * (fn and arg as set then) on the stack it had, so a team keeps one
 * scheduler, and its stacks, from run to run (lib/run/run.c). */
int tc__runq_start(struct tc__runq *s, void (*on_start)(void *), void *arg);
/* How long an idle CPU keeps looking for work before it sleeps in the
 * kernel (tc__cpu_idle, lib/fibre/runq.c): TC__IDLE_SPIN_NS spinning, then,
 * up to ns in all, polling with sched_yield (0: none; set before
 * tc__runq_start). */
void tc__runq_set_idle_poll(struct tc__runq *s, uint64_t ns);
/* Waits for the started CPUs' threads: every task of theirs has finished.
 * The scheduler's memory stays valid until tc__runq_destroy: a thread that
 * is not one of the CPUs may still be inside tc__task_wake of a task that
 * has finished (tc_team_abort from another thread), so it is destroyed only
 * with the team. */
void tc__runq_join(struct tc__runq *s);
void tc__runq_destroy(struct tc__runq *s);

/* The task running on the calling thread, NULL on a thread that is not a
 * scheduler CPU (or on the CPU's own scheduling context). */
struct tc__task *tc__task_self(void);

/* Makes t ready (see the header).  Any thread. */
void tc__task_wake(struct tc__task *t);

/* Switches away until woken (tc__task_wake) or, deadline_ns > 0, until the
 * deadline if the CAS *word asleep -> awake then succeeds; also when its
 * CPU has been idle for 10 ms and that CAS succeeds (the idle sweep,
 * runq.c): a spurious wake-up the caller re-checks.  Self only. */
void tc__task_block(struct tc__task *self, _Atomic int32_t *word, int32_t asleep, int32_t awake,
                    uint64_t deadline_ns);

/* Lets the CPU's other ready tasks run first; returns at once when there is
 * none.  Returns whether another task ran.  Self only. */
int tc__task_yield(struct tc__task *self);

/* Sleeps until the absolute deadline (tc__now_ns() clock); others run
 * meanwhile.  Self only. */
void tc__task_sleep_until(struct tc__task *self, uint64_t deadline_ns);

/*
 * The margin by which a precise sleep (a fibre CPU's futex before a precise
 * timer, lib/fibre/runq.c; an emulated thread's clock_nanosleep,
 * lib/core/clock.c) wakes before its deadline, to poll the rest:
 * tc__early_margin() is the running average (1/8 weight) of such sleeps'
 * lateness after their wake-up time, process-wide, plus 3 us (and, on more
 * than 4 CPUs, sqrt(2 ln CPUs) times their mean deviation: the latest of
 * the CPUs must wake in time, lib/fibre/runq.c), within
 * [2 us, 100 us] up to 4 CPUs and [2 us, 1 ms] beyond;
 * tc__early_learn(late) adds a sample, counted up to twice the margin plus
 * 5 us (a preempted sleep, milliseconds on a loaded
 * machine, must not inflate it).  Measured here: 19-20 us on a quiet
 * machine (12-17 us in a loop of sleeps), against which the first rank of
 * a deadline then runs 1-4 us late, not 20.  About the average, not a high
 * quantile: a wake-up lands a few microseconds before the deadline and
 * polls briefly.  Why not poll long: a thread that has just woken from a
 * sleep preempts a CPU-bound neighbour on its core at once, one that polls
 * for long loses the core to it for a whole time slice (measured: with a
 * margin of twice the average plus 5 us, the emulation test ran 60-135%
 * over the model beside another test's CPU threads, against within bounds
 * with the kernel's timeout alone).  Any thread; relaxed (a lost sample
 * is harmless).
 */
uint64_t tc__early_margin(void);
void tc__early_learn(uint64_t late_ns);
/* Forgets what tc__early_learn() learned and takes the machine as having
 * `cpus` CPUs online (tests: the margin of a 16-CPU machine on 2).  No
 * precise sleep may run meanwhile. */
void tc__early_reset(long cpus);

#endif /* TC_FIBRE_SCHED_H */
