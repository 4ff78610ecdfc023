/* SPDX-License-Identifier: MIT */
/*
 * lib/core/clock.c - a rank's logical clock and emulated time: tc_clock,
 * tc_clock_advance, tc_yield, and tc__emulate_sync, the wait until the
 * model's time of a rank has come in wall-clock time (emulated mode: every
 * rank's logical time 0 is the run's epoch, lib/run/run.c).
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "base/error_detail.h"
#include "core/internal.h"
#include "fibre/runq.h"

tc_time_t tc_clock(const struct tc_proc *proc)
{
	if (proc->base && proc->base->clock > proc->clock)
		return proc->base->clock;
	return proc->clock;
}

/* Sleeps shorter than this go to the deadline in one clock_nanosleep (to
 * the microsecond); longer ones first sleep on the doorbell, which
 * tc_team_abort() rings, up to this much before the deadline. */
#define TC__SLEEP_EXACT_NS 2000000u

/* A thread with a CPU of its own (p <= CPUs) does not leave its deadline to
 * clock_nanosleep, which returns 12-17 us late here (median 16 us, 200
 * sleeps of 100 us; milliseconds when the machine is loaded: 2 vCPUs under
 * KVM, timer slack 1 ns), and later still where the CPU halts meanwhile: on
 * 16-vCPU KVM guests a 1 ms sleep of 16 thread ranks returned 2-24 us late
 * (the "wake" diagnostic of bench/model_fidelity, nine runs), while the
 * fibre CPUs of p = 64, which poll, met the emulation goal in every run.
 * So, as an emulated team's fibre CPUs do (their idle poll, lib/run/run.c), it
 * sleeps in the kernel only up to TC__PRECISE_POLL_NS before the deadline
 * (or the margin, if longer), polls with sched_yield from there, and spins
 * for the margin before it: the CPU never halts within a millisecond of a
 * deadline.  The margin follows the lateness of the process's precise
 * sleeps (tc__early_margin, lib/fibre/runq.h).  (Ranks that share CPUs
 * sleep in the kernel to the deadline: polling would take the CPU from the
 * ranks that have work; fibres have their CPU's timer queue,
 * lib/fibre/runq.h, which does the same per CPU.) */
#define TC__PRECISE_POLL_NS 1000000u

static void tc__sleep_precise(struct tc_team *t, uint64_t when)
{
	const uint64_t margin = tc__early_margin();
	const uint64_t lead = margin > TC__PRECISE_POLL_NS ? margin : TC__PRECISE_POLL_NS;
	const uint64_t wake = when > lead ? when - lead : 0;
	const uint64_t spin_from = when > margin ? when - margin : 0;
	uint64_t now = tc__now_ns();
	if (wake > now) {
		struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000u),
		                      .tv_nsec = (long)(wake % 1000000000u)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		now = tc__now_ns();
		tc__early_learn(now > wake ? now - wake : 0);
	}
	for (unsigned k = 1; now < when; k++) {
		if (now < spin_from)
			sched_yield();
		else
			tc__cpu_relax();
		if (now < spin_from || k % 16 == 0) {
			/* Relaxed: a hint; an emulated sleep ends early on an abort. */
			if (atomic_load_explicit(&t->aborted, memory_order_relaxed))
				return;
			now = tc__now_ns();
		}
	}
}

void tc__emulate_sync(struct tc_proc *proc)
{
	struct tc_team *t = proc->team;
	if (!t->emulate)
		return;
	uint64_t when = tc__root(t)->epoch_ns + (uint64_t)(proc->clock / TC_PS_PER_NS);
	/* One clock read when the deadline has passed (a rank's return, a
	 * message taken late): at p = 256 on 2 CPUs, 128 ranks pass here one
	 * after the other at each deadline, 20-50 ns a read. */
	uint64_t now = tc__now_ns();
	while (now + TC__SLEEP_EXACT_NS < when) {
		/* Seq_cst store and load: tc_team_abort() stores the flag then
		 * exchanges the doorbell word (both seq_cst), so either we see the
		 * flag or its ring makes tc__park() return at once. */
		atomic_store(&proc->db.word, TC__DB_AWAKE);
		if (atomic_load(&t->aborted))
			return;
		tc__park(&proc->db, when - now - TC__SLEEP_EXACT_NS);
		now = tc__now_ns();
	}
	if (now >= when || atomic_load_explicit(&t->aborted, memory_order_relaxed))
		return;
	/* The last TC__SLEEP_EXACT_NS: a fibre in its CPU's timer queue
	 * (lib/fibre/runq.h), a thread in clock_nanosleep. */
	if (proc->db.task) {
		tc__task_sleep_until(proc->db.task, when);
		return;
	}
	if (t->p <= t->cpus) {
		tc__sleep_precise(t, when);
		return;
	}
	struct timespec ts = {.tv_sec = (time_t)(when / 1000000000u),
	                      .tv_nsec = (long)(when % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int tc_clock_advance(struct tc_proc *proc, double ns)
{
	tc__clear_detail();
	if (!proc || !(ns >= 0) || ns > 1e15)
		return TC_EINVAL;
	tc__clock_pull(proc);
	tc_time_t ps = tc__ns_to_ps(ns);
	/* The clock is signed picoseconds: about 106 days at most. */
	if (proc->clock > TC__TIME_MAX - ps)
		return TC_EOVERFLOW;
	proc->clock += ps;
	tc__clock_push(proc);
	tc__emulate_sync(proc);
	/* Relaxed: a hint; an emulated sleep ends early on an abort. */
	return atomic_load_explicit(&proc->team->aborted, memory_order_relaxed) ? TC_EABORTED : TC_OK;
}

void tc_yield(struct tc_proc *proc)
{
	if (proc->db.task)
		tc__task_yield(proc->db.task);
	else
		sched_yield();
}
