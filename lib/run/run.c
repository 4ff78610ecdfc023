/* SPDX-License-Identifier: MIT */
/*
 * lib/run/run.c - starting and joining a team's ranks: tc_run (threads or
 * fibres), tc_attach and tc_detach.  The team object they start is
 * lib/core/team.c's; this layer sits above the messages (lib/p2p), whose
 * requests a detach from an aborted team drops.
 *
 * Starting and aborting (README "Reliability"): an abort (tc_team_abort,
 * from any thread) only sets a flag and rings every doorbell; it lasts
 * until the team starts again.  The reset that empties the channels and
 * queues of an aborted team happens at a start: in tc_run, under the
 * running flag, before any rank exists; at the first tc_attach while no
 * rank is attached, under attach_mu.  Never at the end of a run, so an
 * abort from outside cannot race with it: it hits the run in progress or,
 * between runs, is cleared by the next start.
 */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/error_detail.h"
#include "core/internal.h"
#include "fibre/runq.h"
#include "p2p/p2p.h"

/* The attached thread's identity: the address of a thread-local (unique
 * among live threads). */
static _Thread_local char tc__thread_token;
static inline uintptr_t tc__self(void)
{
	return (uintptr_t)&tc__thread_token;
}

/* The rank a kernel thread runs (tc_run's threads, tc_attach's); a fibre's
 * is its task's (lib/fibre/runq.h). */
static _Thread_local struct tc_proc *tc__thread_proc;

struct tc_proc *tc_self(void)
{
	struct tc__task *task = tc__task_self();
	if (task)
		return task->arg;
	return tc__thread_proc;
}

/* A channel that holds a message or part of one.  At rest the consumer
 * has published every line it read (tc__chan_pop stores head = chead),
 * so its head is its read position.  (Plain read of the producer's tail:
 * no rank runs, and the last one's writes are visible through attach_mu or
 * tc_run's joins.) */
static bool tc__chan_holds(const struct tc__chan *ch)
{
	return ch->tail != atomic_load_explicit(&ch->head, memory_order_relaxed);
}

/* A rank's collective call count and the calls its peers' mismatch probes
 * read: every rank's start at 0 together. */
static void tc__proc_seq_reset(struct tc_proc *proc)
{
	proc->ncalls = 0;
	for (int i = 0; i < TC__CALLS_SEEN; i++)
		atomic_store_explicit(&proc->calls_seen[i], 0, memory_order_relaxed);
	proc->form_peer = 0;
}

/*
 * A start (tc_run, or a tc_attach while no rank is attached once the last
 * attached run is over: see tc_attach): the
 * team as tc_team_create left it, whatever the last run left behind.  The
 * channels are emptied (a message nobody received is dropped, not
 * delivered to the next run), the request queues forgotten, every rank's
 * collective sequence back to 0, the abort cleared, and the watchdog may
 * report again.  No rank runs or is attached, so nobody is inside a
 * channel.  An empty channel is left alone unless the team was aborted:
 * emptying one rewrites its ring, gigabytes on the largest teams.
 */
/* A sub-team proc at a start of its root (tc__team_sub_start). */
static void tc__sub_proc_start(struct tc_proc *pr)
{
	tc__proc_clear_ports(pr);
	tc__proc_seq_reset(pr);
	atomic_store_explicit(&pr->db.word, TC__DB_AWAKE, memory_order_relaxed);
	atomic_store_explicit(&pr->ws.state, TC__WS_OUTSIDE, memory_order_relaxed);
	atomic_store_explicit(&pr->ws.call, NULL, memory_order_relaxed);
}

static void tc__team_start(struct tc_team *t)
{
	/* After an abort every channel: a wait hint may be left raised. */
	const bool aborted = atomic_load(&t->aborted);
	for (long i = 0; i < t->nchans; i++)
		if (aborted || tc__chan_holds(&t->chans[i]))
			tc__chan_reset(&t->chans[i]);
	for (int r = 0; r < t->p; r++) {
		struct tc_proc *pr = &t->procs[r];
		tc__proc_clear_ports(pr);
		tc__proc_seq_reset(pr);
		atomic_store_explicit(&pr->db.word, TC__DB_AWAKE, memory_order_relaxed);
		atomic_store_explicit(&pr->joined, 0, memory_order_relaxed);
		/* Not "returned" from the last run: a rank whose thread has
		 * not begun yet must not look, to a peer's mismatch probe,
		 * like one that returned without making the call. */
		atomic_store_explicit(&pr->ws.state, TC__WS_OUTSIDE, memory_order_relaxed);
		atomic_store_explicit(&pr->ws.call, NULL, memory_order_relaxed);
	}
	t->njoined = 0;
	if (t->shared && t->shared_start)
		t->shared_start(t->shared);
	t->start_ns = tc__now_ns();
	tc__team_groups_clear(t);
	tc__team_sub_start(t, tc__sub_proc_start);
	atomic_store(&t->aborted, 0);
	atomic_store(&t->wd_fired, 0);
	atomic_store(&t->first_err, 0);
}

/* Rank r takes part in the run from now on (under attach_mu).  Until every
 * rank has, a wait that starts is bounded by the attach timeout too: the
 * rank it may wait for might never come (cfg.p above the threads that
 * attach); once all are in, the configured timeout alone. */
static void tc__team_join(struct tc_team *t, int r)
{
	if (!atomic_load_explicit(&t->procs[r].joined, memory_order_relaxed)) {
		atomic_store_explicit(&t->procs[r].joined, 1, memory_order_relaxed);
		t->njoined++;
	}
	uint64_t tmo = t->timeout_cfg_ns;
	if (t->njoined < t->p && t->attach_timeout_ns && (!tmo || t->attach_timeout_ns < tmo))
		tmo = t->attach_timeout_ns;
	atomic_store(&t->timeout_ns, tmo);
}

/* Logical time 0 of a rank's run or attach: its clock, port resources,
 * trace and watchdog state back to zero. */
static void tc__proc_clock_reset(struct tc_proc *proc)
{
	proc->clock = 0;
	proc->ext_clock = 0;
	proc->cur_call = proc->cur_alg = NULL;
	proc->cur_round = -1;
	atomic_store_explicit(&proc->ws.state, TC__WS_OUTSIDE, memory_order_relaxed);
	atomic_store_explicit(&proc->ws.call, NULL, memory_order_relaxed);
	proc->nev = 0;
	proc->ev_dropped = 0;
	int n = tc__nres(&proc->team->mps, proc->deg);
	for (int i = 0; i < n; i++)
		proc->res_free[i] = 0;
}

/* The emulated start gate, a futex word: tc_run opens it once the epoch
 * is set, and one call wakes every waiter (a condition variable's woken
 * waiters take its mutex one after the other).  Each then sleeps to the
 * epoch itself (tc__emulate_sync).
 *
 * The epoch lies TC__START_AHEAD_NS after the opening, plus
 * TC__START_WAKE_NS for each thread waiting at the gate per CPU (a
 * waiter's CPU may be idle, and a guest's idle vCPU takes long to wake),
 * plus on fibres TC__START_SWITCH_NS for each rank per CPU (the CPU's
 * ranks start one after the other).  The fibres' CPU threads wait at the
 * gate as rank threads do: with 200 us + 2 us per rank per CPU, the fibre
 * CPUs of p = 64 on a 16-vCPU KVM guest started 52-57 us after the epoch
 * (about 260 us after the opening: as long as rank threads had there);
 * with this head start, 25-52 us after it in nine runs there. */
#define TC__START_AHEAD_NS 200000u
#define TC__START_WAKE_NS 60000u
#define TC__START_SWITCH_NS 2000u

/* How long before the epoch the gate opens, for `waiters` threads at it
 * and `fibres` ranks to switch to (0 on threads). */
static uint64_t tc__start_ahead_ns(const struct tc_team *t, int waiters, int fibres)
{
	const uint64_t cpus = (uint64_t)t->cpus;
	return TC__START_AHEAD_NS +
	       (TC__START_WAKE_NS * (uint64_t)waiters + TC__START_SWITCH_NS * (uint64_t)fibres) / cpus;
}

static void tc__gate_wait(struct tc_team *t)
{
	/* Acquire: the epoch, written before the gate opens. */
	while (!atomic_load_explicit(&t->gate_open, memory_order_acquire))
		syscall(SYS_futex, &t->gate_open, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

static void tc__gate_open(struct tc_team *t)
{
	/* Release: pairs with the acquire of tc__gate_wait(). */
	atomic_store_explicit(&t->gate_open, 1, memory_order_release);
	syscall(SYS_futex, &t->gate_open, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void *tc__rank_main(void *arg)
{
	struct tc_proc *proc = arg;
	struct tc_team *t = proc->team;
	if (t->emulate && t->exec == TC_EXEC_FIBRES) {
		tc__emulate_sync(proc); /* the CPU passed the gate (tc__run_fibres) */
	} else if (t->emulate) {
		/* Deadlines must be met to the microsecond: no timer slack. */
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		/* The epoch is set once every thread exists (tc_run). */
		tc__gate_wait(t);
		tc__emulate_sync(proc); /* everyone starts at the epoch */
	}
	if (!proc->db.task)
		tc__thread_proc = proc;
	int err = t->fn(proc, t->fn_arg);
	if (!proc->db.task)
		tc__thread_proc = NULL;
	/* Emulated: a rank does not finish before its logical time. */
	if (!err)
		tc__emulate_sync(proc);
	proc->wall_end_ns = tc__now_ns();
	proc->run_err = err;
	if (err) {
		int expect = 0;
		if (atomic_compare_exchange_strong(&t->first_err, &expect, err)) {
			const char *d = tc_error_detail();
			t->first_detail[0] = '\0';
			if (*d)
				snprintf(t->first_detail, sizeof t->first_detail, "rank %d: %s",
				         proc->rank, d);
		}
		tc_team_abort(t);
	}
	/* After the abort of a failed rank (a peer's mismatch probe that sees
	 * RETURNED then finds the team aborted: TC_EABORTED, and tc_run
	 * reports this rank's error).  Release: that probe then finds every
	 * message this rank sent (lib/p2p/progress.c). */
	atomic_store_explicit(&proc->ws.state, TC__WS_RETURNED, memory_order_release);
	tc__team_sub_returned(t, proc);
	/* What the rank's calls left in tc_error_detail() no one reads now (its
	 * thread ends, or its CPU's runs other ranks): left set, it would make
	 * every call's clearing take the slow way (lib/base/error_detail.h). */
	tc__clear_detail();
	return NULL;
}

/* ---- ranks as fibres (lib/fibre/runq.h) ---- */

static void tc__fibre_rank(struct tc__task *self, void *arg)
{
	(void)self;
	tc__rank_main(arg);
}

/* Each CPU's thread, before its first rank runs. */
static void tc__fibre_cpu_start(void *arg)
{
	struct tc_team *t = arg;
	if (!t->emulate)
		return;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0); /* the futex timeouts of the timers */
	tc__gate_wait(t);
}

/*
 * tc_run on fibres: the n ranks of run[] as tasks over min(cpus, n) CPU
 * threads, in blocks of consecutive ranks (lib/fibre/runq.h).  Emulated: the CPU threads wait at the gate, then
 * every rank sleeps in its CPU's timer queue until the epoch.
 */
/* Emulated: an idle CPU thread polls this long before it sleeps in the
 * kernel (tc__runq_set_idle_poll).  A message from another CPU then finds
 * it running: the futex wake of a sleeping CPU took tens of microseconds to
 * a millisecond on a 16-vCPU KVM guest, none of which the model charges. */
#define TC__EMULATE_IDLE_POLL_NS 1000000u

static int tc__run_fibres(struct tc_team *t, const int *run, int n)
{
	/* The scheduler of the last run, if it has the same shape: no stack
	 * to map again (and a thread still ringing a doorbell of that run,
	 * tc_team_abort, never touches freed memory). */
	struct tc__runq *s = t->runq;
	int err = TC_OK;
	if (!s || tc__runq_ntask(s) != n) {
		tc__runq_destroy(s);
		t->runq = NULL;
		err = tc__runq_create(n, n < t->cpus ? n : t->cpus, t->no_pin ? NULL : t->cpu_list,
		                      t->fibre_stack, &s);
		if (err)
			return err;
		t->runq = s;
	}
	for (int i = 0; i < n; i++) {
		struct tc_proc *pr = &t->procs[run[i]];
		struct tc__task *task = tc__runq_task(s, i);
		task->fn = tc__fibre_rank;
		task->arg = pr;
		pr->run_err = 0;
		pr->db.task = task;
	}
	tc__team_sub_tasks(t);
	tc__runq_set_idle_poll(s, t->emulate ? TC__EMULATE_IDLE_POLL_NS : 0);
	err = tc__runq_start(s, tc__fibre_cpu_start, t);
	if (err)
		tc_team_abort(t);
	if (t->emulate) {
		/* The CPU threads exist and wait at the gate. */
		t->epoch_ns = tc__now_ns() + tc__start_ahead_ns(t, n < t->cpus ? n : t->cpus, n);
		tc__gate_open(t);
	}
	tc__runq_join(s);
	/* Ranks on CPUs that never started did not run: no wall time, and their
	 * doorbells go back to futexes. */
	for (int i = 0; i < n; i++)
		t->procs[run[i]].db.task = NULL;
	tc__team_sub_tasks(t);
	return err;
}

/* The ranks of run[] as threads, as tc_run does for all of them. */
static int tc__run_threads(struct tc_team *t, const int *run, int n)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	if (t->stack_bytes)
		pthread_attr_setstacksize(&attr, t->stack_bytes);
	int started = 0, err = TC_OK;
	for (int i = 0; i < n; i++) {
		struct tc_proc *pr = &t->procs[run[i]];
		pr->run_err = 0;
		if (!t->no_pin) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(t->cpu_list[run[i] % t->cpus], &set);
			pthread_attr_setaffinity_np(&attr, sizeof set, &set);
		}
		if (pthread_create(&pr->thread, &attr, tc__rank_main, pr) != 0) {
			err = TC_ESYS;
			tc_team_abort(t);
			break;
		}
		started++;
	}
	pthread_attr_destroy(&attr);
	if (t->emulate) {
		t->epoch_ns = tc__now_ns() + tc__start_ahead_ns(t, n, 0);
		tc__gate_open(t);
	}
	for (int i = 0; i < started; i++)
		pthread_join(t->procs[run[i]].thread, NULL);
	return err;
}

int tc_run(struct tc_team *t, tc_spmd_fn fn, void *arg)
{
	tc__clear_detail();
	if (!t || !fn)
		return TC_EINVAL;
	if (t->parent) {
		tc__set_detail("tc_run: the team is a sub-team (tc_team_split): its ranks run "
		               "as the root team's ranks do");
		return TC_EINVAL;
	}
	int *run = malloc((size_t)t->p * sizeof *run), n = 0;
	if (!run)
		return TC_ENOMEM;
	/* The ranks to run: all of them, or with run_unattached those that no
	 * thread has attached (tc_attach), which take part from their own
	 * threads. */
	pthread_mutex_lock(&t->attach_mu);
	if (atomic_load(&t->running) || (t->nattached && !t->run_unattached)) {
		pthread_mutex_unlock(&t->attach_mu);
		free(run);
		return TC_EBUSY;
	}
	atomic_store(&t->running, 1);
	for (int r = 0; r < t->p; r++) {
		if (atomic_load(&t->procs[r].attached))
			continue;
		run[n++] = r;
		atomic_store(&t->procs[r].attached, 1);
		atomic_store(&t->procs[r].owner, 0); /* tc_run's: nobody detaches them */
	}
	/* A start resets the team, unless ranks are attached (they may be
	 * inside a channel): their first attach was the start, and the ranks
	 * run here join that run. */
	if (!t->nattached) {
		tc__team_start(t);
	} else {
		atomic_store(&t->wd_fired, 0);
		atomic_store(&t->first_err, 0);
		for (int i = 0; i < n; i++)
			tc__proc_seq_reset(&t->procs[run[i]]);
	}
	for (int i = 0; i < n; i++)
		tc__team_join(t, run[i]);
	pthread_mutex_unlock(&t->attach_mu);
	t->fn = fn;
	t->fn_arg = arg;
	for (int i = 0; i < n; i++)
		tc__proc_clock_reset(&t->procs[run[i]]);
	t->epoch_ns = tc__now_ns();
	atomic_store_explicit(&t->gate_open, 0, memory_order_relaxed);
	int err = TC_OK;
	if (n)
		err = t->exec == TC_EXEC_FIBRES ? tc__run_fibres(t, run, n)
		                                : tc__run_threads(t, run, n);
	if (!err && (err = atomic_load(&t->first_err)) != 0 && t->first_detail[0])
		tc__set_detail("%s", t->first_detail);
	t->last_run.mode = t->emulate ? TC_MODE_EMULATED : TC_MODE_NATIVE;
	t->last_run.wall_ns = 0;
	t->last_run.makespan_ps = 0;
	for (int i = 0; i < n; i++) {
		struct tc_proc *pr = &t->procs[run[i]];
		uint64_t w = pr->wall_end_ns > t->epoch_ns ? pr->wall_end_ns - t->epoch_ns : 0;
		if (w > t->last_run.wall_ns)
			t->last_run.wall_ns = w;
		if (pr->clock > t->last_run.makespan_ps)
			t->last_run.makespan_ps = pr->clock;
	}
	/* An aborted team stays so until the next start (tc__team_start). */
	pthread_mutex_lock(&t->attach_mu);
	for (int i = 0; i < n; i++)
		atomic_store(&t->procs[run[i]].attached, 0);
	atomic_store(&t->running, 0);
	pthread_mutex_unlock(&t->attach_mu);
	free(run);
	return err;
}

int tc_attach(struct tc_team *t, int rank, struct tc_proc **out)
{
	tc__clear_detail();
	if (out)
		*out = NULL;
	if (!t || !out)
		return TC_EINVAL;
	if (t->parent) {
		tc__set_detail("tc_attach: the team is a sub-team (tc_team_split): attach to "
		               "its root team");
		return TC_EINVAL;
	}
	if (rank < 0 || rank >= t->p)
		return TC_ERANK;
	struct tc_proc *proc = &t->procs[rank];
	pthread_mutex_lock(&t->attach_mu);
	int err = TC_OK;
	if (atomic_load(&t->running) || atomic_load(&proc->attached)) {
		err = TC_EBUSY;
	} else {
		/* An attach while nobody is attached starts a run (the team is
		 * reset; nobody is inside a channel) when the last one is over:
		 * every rank attached to it (and, nobody being attached now,
		 * detached), or it was aborted, or it was tc_run's.  Until then
		 * a rank attaching, early finishers having detached already,
		 * joins the same run: threads that reach the parallel region
		 * at different times must not drop each other's messages. */
		if (t->nattached++ == 0 &&
		    (t->njoined == 0 || t->njoined >= t->p || atomic_load(&t->aborted)))
			tc__team_start(t);
		tc__team_join(t, rank);
		/* Seq_cst, under attach_mu: the rank's previous owner detached
		 * under it; its writes to the proc are visible to us. */
		atomic_store(&proc->attached, 1);
		atomic_store(&proc->owner, tc__self());
		tc__proc_clock_reset(proc);
		tc__thread_proc = proc;
		*out = proc;
	}
	pthread_mutex_unlock(&t->attach_mu);
	return err;
}

int tc_detach(struct tc_proc *proc)
{
	tc__clear_detail();
	if (!proc)
		return TC_EINVAL;
	struct tc_team *t = proc->team;
	/* Only the thread that attached the rank, once: a stale second detach
	 * must not release a rank another thread attached since, and tc_run's
	 * ranks are not detached. */
	if (!atomic_load(&proc->attached) || atomic_load(&proc->owner) != tc__self())
		return TC_EINVAL;
	if (atomic_load(&t->aborted)) {
		/* Nothing will complete any more: the requests are dropped (no
		 * peer reads our buffers once this returns). */
		tc__proc_drop_requests(proc);
	} else if (proc->nactive || proc->npending_rndv) {
		return TC_EPENDING;
	}
	pthread_mutex_lock(&t->attach_mu);
	atomic_store(&proc->owner, 0);
	atomic_store(&proc->attached, 0);
	t->nattached--;
	if (tc__thread_proc == proc)
		tc__thread_proc = NULL;
	pthread_mutex_unlock(&t->attach_mu);
	return TC_OK;
}
