/* SPDX-License-Identifier: MIT */
/*
 * lib/fibre/runq.c - the fibre run queues: CPUs, their ready FIFOs, remote
 * queues and timer heaps.  The contract and the wake-up protocol are in
 * lib/fibre/runq.h.
 *
 * Each CPU has a context of its own (the kernel thread's stack, c->main)
 * that runs the loop: pick a ready task and switch to it; when nothing is
 * ready and tasks remain, sleep on the CPU's futex until the earliest timer
 * or a remote wake-up.  A task that blocks or yields picks the next task
 * itself and switches to it directly (one switch per hand-off, not two);
 * only when nothing is ready does it switch to c->main.  A finished task's
 * fibre returns to c->main, which frees nothing (the stacks go with
 * tc__runq_destroy) but counts it.
 */
#include "fibre/runq.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdalign.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <urcu/arch.h>

#include "topocoll.h"

struct tc__fcpu {
	struct tc__fibre main;              /* the kernel thread's own context */
	struct tc__task *current;           /* running task; NULL: main runs */
	struct tc__detail *detail;          /* current's tc_error_detail() text, or
	                                       NULL (lib/base/error_detail.h) */
	struct tc__task *last;              /* the task that switched to main */
	struct tc__task *rq_head, *rq_tail; /* ready FIFO: this thread only */
	struct tc__task **heap;             /* timers, by deadline */
	int nheap;
	int nlive;           /* tasks not finished */
	int id;              /* CPU number, -1: unpinned */
	unsigned yields;     /* tc__task_yield() calls, for the busy sweep */
	uint64_t last_sweep; /* tc__mono_ns() of the last sweep (idle or busy) */
	pthread_t thread;
	struct tc__runq *s;
	/* Written by other threads. */
	alignas(64) struct tc__task *_Atomic remote; /* made ready elsewhere: a
	                                                LIFO list, see tc__pick */
	alignas(64) _Atomic int32_t idle;            /* 1: sleeps (or is about to) on it */
	char pad[64 - sizeof(int32_t)];
};

struct tc__runq {
	int ntask, ncpu, started, runs;
	uint64_t idle_poll_ns; /* tc__runq_set_idle_poll */
	struct tc__task *tasks;
	struct tc__fcpu *cpus;
	void (*on_start)(void *);
	void *start_arg;
};

static _Thread_local struct tc__fcpu *tc__cpu_self;

enum { TC__IDLE_SPIN_NS = 20000 }; /* see tc__cpu_idle() */

static uint64_t tc__mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the margin of precise sleeps (runq.h) ------------------------------ */

/* The running average of precise sleeps' lateness, process-wide: every CPU
 * thread of every team and every emulated rank thread (lib/core/clock.c)
 * sleeps on the same kernel timers, and a benchmark's teams live for a few
 * sleeps each, too few to learn it alone.  Relaxed: two threads that learn
 * at once may lose a sample, nothing else. */
static _Atomic uint64_t tc__late_avg = 15000;
/* Their mean absolute deviation from it (same weight), and the factor by
 * which the margin adds it: 0 up to 4 CPUs, else sqrt(2 ln n) for the n
 * CPUs online (about how far the latest of n samples lies above the mean,
 * in deviations).  With one rank per CPU a round ends when the last CPU's
 * sleep does, so on many CPUs the margin must cover the tail, not the mean:
 * on a 16-CPU KVM guest, p = 64 fibres, the ranks of a 1 ms sleep returned
 * 23 us late on average and an exchange at t_s = 100 us took 28-55% longer
 * than modelled with the mean alone, and still 45-53% with this margin:
 * there the rest of the lateness is not the timers'. */
static _Atomic uint64_t tc__late_dev = 3000;
static double tc__late_tail;
static uint64_t tc__late_max;
static pthread_once_t tc__late_once = PTHREAD_ONCE_INIT;

/* The margin's bounds.  Its ceiling: 100 us up to 4 CPUs, where a CPU that
 * polls long takes the core from the other runnable threads (runq.h); 1 ms
 * beyond, where each rank has its CPU and the latest of many CPUs must
 * wake in time: on a 16-CPU Firecracker guest a 1 ms sleep of the 16 ranks
 * (threads, one per CPU) returned 124-162 us late with the margin held at
 * 100 us, and every one-round exchange ended 35-270 us late. */
enum {
	TC__EARLY_MIN_NS = 2000,
	TC__EARLY_MAX_FEW_NS = 100000,
	TC__EARLY_MAX_MANY_NS = 1000000,
	TC__EARLY_OVER_NS = 3000,
};

static void tc__tail_set(long n)
{
	tc__late_tail = n > 4 ? sqrt(2.0 * log((double)n)) : 0.0;
	tc__late_max = n > 4 ? TC__EARLY_MAX_MANY_NS : TC__EARLY_MAX_FEW_NS;
}

static void tc__tail_init(void)
{
	tc__tail_set(sysconf(_SC_NPROCESSORS_ONLN));
}

static double tc__tail_factor(void)
{
	pthread_once(&tc__late_once, tc__tail_init);
	return tc__late_tail;
}

void tc__early_reset(long cpus)
{
	pthread_once(&tc__late_once, tc__tail_init);
	tc__tail_set(cpus);
	atomic_store(&tc__late_avg, 15000);
	atomic_store(&tc__late_dev, 3000);
}

uint64_t tc__early_margin(void)
{
	uint64_t m = atomic_load_explicit(&tc__late_avg, memory_order_relaxed) + TC__EARLY_OVER_NS;
	m += (uint64_t)(tc__tail_factor() *
	                (double)atomic_load_explicit(&tc__late_dev, memory_order_relaxed));
	return m < TC__EARLY_MIN_NS ? TC__EARLY_MIN_NS : m > tc__late_max ? tc__late_max : m;
}

void tc__early_learn(uint64_t late)
{
	uint64_t cap = 2 * tc__early_margin() + 5000;
	if (late > cap)
		late = cap;
	uint64_t avg = atomic_load_explicit(&tc__late_avg, memory_order_relaxed);
	uint64_t dev = atomic_load_explicit(&tc__late_dev, memory_order_relaxed);
	uint64_t off = late > avg ? late - avg : avg - late;
	atomic_store_explicit(&tc__late_avg, (7 * avg + late) / 8, memory_order_relaxed);
	atomic_store_explicit(&tc__late_dev, (7 * dev + off) / 8, memory_order_relaxed);
}

/* ---- the timer heap (its CPU's thread only) --------------------------- */

static void tc__heap_set(struct tc__fcpu *c, int i, struct tc__task *t)
{
	c->heap[i] = t;
	t->heap_idx = i;
}

static void tc__heap_up(struct tc__fcpu *c, int i)
{
	struct tc__task *t = c->heap[i];
	while (i > 0) {
		int up = (i - 1) / 2;
		if (c->heap[up]->deadline <= t->deadline)
			break;
		tc__heap_set(c, i, c->heap[up]);
		i = up;
	}
	tc__heap_set(c, i, t);
}

static void tc__heap_down(struct tc__fcpu *c, int i)
{
	struct tc__task *t = c->heap[i];
	for (;;) {
		int l = 2 * i + 1, m = l;
		if (l >= c->nheap)
			break;
		if (l + 1 < c->nheap && c->heap[l + 1]->deadline < c->heap[l]->deadline)
			m = l + 1;
		if (c->heap[m]->deadline >= t->deadline)
			break;
		tc__heap_set(c, i, c->heap[m]);
		i = m;
	}
	tc__heap_set(c, i, t);
}

/* The heap has room for every task of the CPU (tc__runq_create). */
static void tc__heap_push(struct tc__fcpu *c, struct tc__task *t)
{
	tc__heap_set(c, c->nheap++, t);
	tc__heap_up(c, c->nheap - 1);
}

static void tc__heap_remove(struct tc__fcpu *c, struct tc__task *t)
{
	int i = t->heap_idx;
	t->heap_idx = -1;
	if (--c->nheap == i)
		return;
	tc__heap_set(c, i, c->heap[c->nheap]);
	tc__heap_up(c, i);
	tc__heap_down(c, c->heap[i]->heap_idx);
}

/* ---- ready queues ------------------------------------------------------ */

static void tc__rq_push(struct tc__fcpu *c, struct tc__task *t)
{
	t->next = NULL;
	if (c->rq_tail)
		c->rq_tail->next = t;
	else
		c->rq_head = t;
	c->rq_tail = t;
}

/* Moves what other threads made ready, and the expired timers (in deadline
 * order), to the local FIFO; then takes its head.  NULL: nothing ready. */
static struct tc__task *tc__pick(struct tc__fcpu *c)
{
	/* Relaxed: a look only; the exchange below is what takes the list. */
	if (atomic_load_explicit(&c->remote, memory_order_relaxed)) {
		/* Acquire: pairs with the release CAS of tc__task_wake(); we see
		 * each task's rnext.  The list is newest first: reversed, so that
		 * tasks run in the order they were made ready. */
		struct tc__task *l = atomic_exchange_explicit(&c->remote, NULL, memory_order_acquire);
		struct tc__task *fifo = NULL;
		while (l) {
			struct tc__task *n = l->rnext;
			l->rnext = fifo;
			fifo = l;
			l = n;
		}
		for (struct tc__task *n; fifo; fifo = n) {
			n = fifo->rnext;
			tc__rq_push(c, fifo);
		}
	}
	if (c->nheap) {
		uint64_t now = tc__mono_ns();
		/* The expired timers, in deadline order, go ahead of the tasks
		 * made ready otherwise: a deadline's tasks run before later work
		 * (emulated time: the others only wait for a message whose
		 * arrival is later still). */
		struct tc__task *head = NULL, *tail = NULL;
		while (c->nheap && c->heap[0]->deadline <= now) {
			struct tc__task *t = c->heap[0];
			tc__heap_remove(c, t);
			int32_t expect = t->asleep;
			/* Seq_cst CAS: decides between the timer and a waker
			 * (whose exchange moved the word off asleep: it enqueues
			 * the task, we do not).  Pairs with tc__doorbell_ring()'s
			 * exchange. */
			if (!t->word || atomic_compare_exchange_strong(t->word, &expect, t->awake)) {
				t->next = NULL;
				if (tail)
					tail->next = t;
				else
					head = t;
				tail = t;
			}
		}
		if (head) {
			tail->next = c->rq_head;
			c->rq_head = head;
			if (!c->rq_tail)
				c->rq_tail = tail;
		}
	}
	struct tc__task *t = c->rq_head;
	if (t) {
		c->rq_head = t->next;
		if (!c->rq_head)
			c->rq_tail = NULL;
	}
	return t;
}

/* The running task self gives its CPU to the next ready task, or to the
 * CPU's main context when there is none; returns when self runs again (at
 * once if self itself is the next ready one). */
static void tc__leave(struct tc__fcpu *c, struct tc__task *self)
{
	struct tc__task *n = tc__pick(c);
	if (n == self)
		return;
	if (n) {
		c->current = n;
		c->detail = &n->detail;
		tc__fibre_switch(self->fibre, n->fibre);
	} else {
		c->last = self;
		c->current = NULL;
		c->detail = NULL;
		tc__fibre_switch(self->fibre, &c->main);
	}
	/* Whoever switched back to us set c->current = self, and its
	 * tc_error_detail() text. */
}

/* ---- the task's side --------------------------------------------------- */

struct tc__task *tc__task_self(void)
{
	struct tc__fcpu *c = tc__cpu_self;
	return c ? c->current : NULL;
}

void tc__task_wake(struct tc__task *t)
{
	struct tc__fcpu *c = t->cpu;
	if (tc__cpu_self == c) {
		tc__rq_push(c, t);
		return;
	}
	/* Release: publishes t->rnext (and whatever the waker wrote before
	 * waking t) to the CPU's acquire exchange in tc__pick().  Seq_cst:
	 * the push is ordered before our load of idle; pairs with the idle
	 * CPU's seq_cst store of idle and load of remote (tc__cpu_idle). */
	struct tc__task *old = atomic_load_explicit(&c->remote, memory_order_relaxed);
	do
		t->rnext = old;
	while (!atomic_compare_exchange_weak_explicit(&c->remote, &old, t, memory_order_seq_cst,
	                                              memory_order_relaxed));
	if (atomic_load(&c->idle) && atomic_exchange(&c->idle, 0) == 1)
		syscall(SYS_futex, &c->idle, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void tc__task_block(struct tc__task *self, _Atomic int32_t *word, int32_t asleep, int32_t awake,
                    uint64_t deadline_ns)
{
	struct tc__fcpu *c = self->cpu;
	/* The word also for an untimed block: the idle sweep (tc__cpu_idle)
	 * wakes the task through it. */
	self->precise = 0;
	self->word = word;
	self->asleep = asleep;
	self->awake = awake;
	if (deadline_ns) {
		self->deadline = deadline_ns;
		tc__heap_push(c, self);
	}
	tc__leave(c, self);
	if (self->heap_idx >= 0)
		tc__heap_remove(c, self); /* woken before the deadline */
	/* Running again: the word is no longer its (its owner may be freed
	 * before the task blocks again or ends, a sub-team's doorbell). */
	self->word = NULL;
}

/* The sweeps' period (tc__cpu_sweep()), and how often a yield looks at
 * the clock for the busy sweep. */
enum { TC__SWEEP_NS = 10 * 1000 * 1000, TC__SWEEP_YIELDS = 256 };
static void tc__cpu_sweep(struct tc__fcpu *c);

int tc__task_yield(struct tc__task *self)
{
	struct tc__fcpu *c = self->cpu;
	/* The busy sweep: a CPU whose ready tasks only yield (waits that
	 * nothing rings, as the machine's own algorithms' flags) is never
	 * idle, so the idle sweep would never wake the tasks it keeps blocked
	 * for their probes (tc__cpu_sweep()); every TC__SWEEP_NS a yield does
	 * it instead. */
	if (++c->yields % TC__SWEEP_YIELDS == 0) {
		const uint64_t now = tc__mono_ns();
		if (now - c->last_sweep >= TC__SWEEP_NS) {
			c->last_sweep = now;
			tc__cpu_sweep(c);
		}
	}
	if (!c->rq_head && !atomic_load_explicit(&c->remote, memory_order_relaxed) &&
	    (!c->nheap || c->heap[0]->deadline > tc__mono_ns()))
		return 0;
	tc__rq_push(c, self);
	tc__leave(c, self);
	return 1;
}

void tc__task_sleep_until(struct tc__task *self, uint64_t deadline_ns)
{
	struct tc__fcpu *c = self->cpu;
	self->word = NULL;
	self->precise = 1;
	self->deadline = deadline_ns;
	tc__heap_push(c, self);
	tc__leave(c, self);
}

/* ---- the CPU's own context --------------------------------------------- */

/* Nothing ready: first looks at the remote list for TC__IDLE_SPIN_NS (a
 * futex sleep and wake-up costs 20-30 us here, and much more when the
 * machine is loaded and the woken thread waits for a CPU: the competitive
 * rule, as a rank thread's spin), then, up to the scheduler's idle_poll_ns
 * (an emulated team's: tc__runq_set_idle_poll), with sched_yield between
 * looks, then sleeps until the earliest timer or a remote wake-up.
 *
 * A precise timer (emulated time) first: the futex's timeout fires 12-17 us
 * late on this machine (median 16 us; in the benchmark's runs every CPU
 * woke 15-35 us late at every deadline, and the ranks of one deadline then
 * returned 20-40 us after it: 4% of t_s = 1 ms, 30% of 100 us).  So the CPU sleeps until tc__early_margin() before it and polls
 * the remote list up to the deadline itself (see runq.h). */
/* The idle sweep: a CPU that found nothing to do for TC__SWEEP_NS makes
 * every task of its own that is blocked on a word (with a timer or not)
 * ready, as a timer would (the same CAS asleep -> awake, which decides against a
 * concurrent waker).  A woken task re-checks what it waits for and blocks
 * again.  It is what lets a team whose ranks all wait look again now and
 * then (the mismatch probe of lib/p2p/progress.c) without each rank arming
 * a timer at every block: on fibres a timer is a heap insert and removal
 * per block and a clock read per switch, which took complete:64's barrier
 * from 14 to 18 us.  A CPU is idle only when all its tasks are blocked. */
static int tc__first_task(int k, int ntask, int ncpu);

static void tc__cpu_sweep(struct tc__fcpu *c)
{
	const struct tc__runq *s = c->s;
	const int k = (int)(c - s->cpus);
	const int lo = tc__first_task(k, s->ntask, s->ncpu);
	const int hi = tc__first_task(k + 1, s->ntask, s->ncpu);
	for (int i = lo; i < hi; i++) {
		struct tc__task *t = &s->tasks[i];
		if (!t->word) /* never blocked on a word, or in a precise sleep */
			continue;
		int32_t expect = t->asleep;
		/* Seq_cst CAS: as tc__pick()'s for an expired timer.  A timed
		 * block leaves the heap as its timer's expiry would. */
		if (atomic_compare_exchange_strong(t->word, &expect, t->awake)) {
			if (t->heap_idx >= 0)
				tc__heap_remove(c, t);
			tc__rq_push(c, t);
		}
	}
}

static void tc__cpu_idle(struct tc__fcpu *c)
{
	uint64_t start = tc__mono_ns(), now = start;
	const uint64_t spin_end = start + TC__IDLE_SPIN_NS;
	uint64_t until = spin_end, wake = 0, deadline = 0;
	if (c->s->idle_poll_ns > TC__IDLE_SPIN_NS)
		until = start + c->s->idle_poll_ns;
	int precise = 0;
	if (c->nheap) {
		deadline = c->heap[0]->deadline;
		precise = c->heap[0]->precise;
		uint64_t margin = precise ? tc__early_margin() : 0;
		wake = deadline > margin ? deadline - margin : 1;
		if (wake <= until)
			until = deadline; /* poll up to the deadline itself */
	}
	for (unsigned k = 1; now < until; k++) {
		/* Relaxed: a look only (tc__pick takes the list). */
		if (atomic_load_explicit(&c->remote, memory_order_relaxed))
			return;
		if (now < spin_end || (wake && now >= wake)) {
			caa_cpu_relax();
			if (k % 16 == 0)
				now = tc__mono_ns();
		} else {
			sched_yield(); /* the idle poll: a waiting thread may run */
			now = tc__mono_ns();
		}
	}
	if (c->nheap && c->heap[0]->deadline <= now)
		return;
	/* Seq_cst store and load: idle = 1 before the look at the remote
	 * list; pairs with the seq_cst push and load of idle in
	 * tc__task_wake() (store buffering: one of the two sees the other). */
	atomic_store(&c->idle, 1);
	if (!atomic_load(&c->remote)) {
		struct timespec ts, *tsp = NULL;
		/* Not beyond the sweep while tasks are blocked (tc__cpu_sweep). */
		uint64_t sweep = c->nlive ? now + TC__SWEEP_NS : 0;
		bool sweeping = sweep && (!c->nheap || sweep < wake);
		if (sweeping)
			wake = sweep;
		if (c->nheap || sweeping) {
			ts.tv_sec = (time_t)(wake / 1000000000u);
			ts.tv_nsec = (long)(wake % 1000000000u);
			tsp = &ts;
		}
		/* Absolute CLOCK_MONOTONIC timeout (the bitset form). */
		long rc = syscall(SYS_futex, &c->idle, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 1,
		                  tsp, NULL, FUTEX_BITSET_MATCH_ANY);
		if (rc == -1 && errno == ETIMEDOUT) {
			if (sweeping) {
				c->last_sweep = tc__mono_ns();
				tc__cpu_sweep(c);
			} else if (precise) {
				now = tc__mono_ns();
				tc__early_learn(now > wake ? now - wake : 0);
			}
		}
	}
	atomic_store_explicit(&c->idle, 0, memory_order_relaxed);
}

static void *tc__cpu_main(void *arg)
{
	struct tc__fcpu *c = arg;
	struct tc__runq *s = c->s;
	if (c->id >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(c->id, &set);
		pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	}
	tc__fibre_thread_init(&c->main); /* only the overflow report needs it */
	tc__cpu_self = c;
	tc__detail_fibre = (struct tc__detail *const *)&c->detail;
	if (s->on_start)
		s->on_start(s->start_arg);
	while (c->nlive) {
		struct tc__task *t = tc__pick(c);
		if (!t) {
			tc__cpu_idle(c);
			continue;
		}
		c->current = t;
		c->detail = &t->detail;
		tc__fibre_switch(&c->main, t->fibre);
		/* c->last switched to us: finished, or nothing else was ready. */
		if (tc__fibre_done(c->last->fibre))
			c->nlive--;
	}
	tc__cpu_self = NULL;
	tc__detail_fibre = NULL;
	tc__fibre_thread_fini(&c->main);
	return NULL;
}

static void tc__task_main(struct tc__fibre *f, void *arg)
{
	(void)f;
	struct tc__task *t = arg;
	t->fn(t, t->arg);
	t->cpu->last = t;
	t->cpu->current = NULL;
	t->cpu->detail = NULL;
	/* Returning switches to f->back, the CPU's main context. */
}

/* ---- create, run, destroy ---------------------------------------------- */

/* Blocks of consecutive tasks per CPU (see runq.h): CPU k runs tasks
 * tc__first_task(k) .. tc__first_task(k + 1) - 1. */
static int tc__first_task(int k, int ntask, int ncpu)
{
	return (int)((long long)k * ntask / ncpu);
}

static int tc__cpu_of(int i, int ntask, int ncpu)
{
	int k = (int)(((long long)i * ncpu + ncpu - 1) / ntask);
	while (k > 0 && tc__first_task(k, ntask, ncpu) > i)
		k--;
	while (k + 1 < ncpu && tc__first_task(k + 1, ntask, ncpu) <= i)
		k++;
	return k;
}

int tc__runq_create(int ntask, int ncpu, const int *cpu_ids, size_t stack_bytes, struct tc__runq **out)
{
	if (ntask < 1 || ncpu < 1 || !out)
		return TC_EINVAL;
	if (ncpu > ntask)
		ncpu = ntask;
	struct tc__runq *s = calloc(1, sizeof *s);
	if (!s)
		return TC_ENOMEM;
	s->ntask = ntask;
	s->ncpu = ncpu;
	s->tasks = calloc((size_t)ntask, sizeof *s->tasks);
	s->cpus = aligned_alloc(64, (size_t)ncpu * sizeof *s->cpus);
	if (!s->tasks || !s->cpus) {
		free(s->cpus);
		s->cpus = NULL;
		tc__runq_destroy(s);
		return TC_ENOMEM;
	}
	memset(s->cpus, 0, (size_t)ncpu * sizeof *s->cpus);
	for (int k = 0; k < ncpu; k++) {
		struct tc__fcpu *c = &s->cpus[k];
		c->s = s;
		c->id = cpu_ids ? cpu_ids[k] : -1;
	}
	for (int i = 0; i < ntask; i++)
		s->cpus[tc__cpu_of(i, ntask, ncpu)].nlive++;
	for (int k = 0; k < ncpu; k++) {
		/* Room for every task of the CPU: each is in the heap once at most. */
		s->cpus[k].heap = malloc((size_t)s->cpus[k].nlive * sizeof *s->cpus[k].heap);
		if (!s->cpus[k].heap) {
			tc__runq_destroy(s);
			return TC_ENOMEM;
		}
	}
	for (int i = 0; i < ntask; i++) {
		struct tc__task *t = &s->tasks[i];
		t->cpu = &s->cpus[tc__cpu_of(i, ntask, ncpu)];
		t->heap_idx = -1;
		int err = tc__fibre_create(&t->cpu->main, stack_bytes, tc__task_main, t, &t->fibre);
		if (err) {
			tc__runq_destroy(s);
			return err;
		}
	}
	*out = s;
	return TC_OK;
}

int tc__runq_ntask(const struct tc__runq *s)
{
	return s->ntask;
}

struct tc__task *tc__runq_task(struct tc__runq *s, int i)
{
	return &s->tasks[i];
}

void tc__runq_set_idle_poll(struct tc__runq *s, uint64_t ns)
{
	s->idle_poll_ns = ns;
}

int tc__runq_start(struct tc__runq *s, void (*on_start)(void *), void *arg)
{
	s->on_start = on_start;
	s->start_arg = arg;
	/* Every task from its start, every CPU empty (a run before may have
	 * left tasks unfinished: see tc__runq_start in runq.h). */
	for (int k = 0; k < s->ncpu; k++) {
		struct tc__fcpu *c = &s->cpus[k];
		c->rq_head = c->rq_tail = NULL;
		c->nheap = 0;
		c->nlive = 0;
		c->current = c->last = NULL;
		c->detail = NULL;
		atomic_store_explicit(&c->remote, NULL, memory_order_relaxed);
		atomic_store_explicit(&c->idle, 0, memory_order_relaxed);
	}
	for (int i = 0; i < s->ntask; i++) {
		struct tc__task *t = &s->tasks[i];
		if (s->runs)
			tc__fibre_restart(t->fibre);
		t->heap_idx = -1;
		t->cpu->nlive++;
		tc__rq_push(t->cpu, t);
	}
	s->runs++;
	for (int k = 0; k < s->ncpu; k++) {
		if (pthread_create(&s->cpus[k].thread, NULL, tc__cpu_main, &s->cpus[k]) != 0)
			return TC_ESYS;
		s->started++;
	}
	return TC_OK;
}

void tc__runq_join(struct tc__runq *s)
{
	for (int k = 0; k < s->started; k++)
		pthread_join(s->cpus[k].thread, NULL);
	s->started = 0;
}

void tc__runq_destroy(struct tc__runq *s)
{
	if (!s)
		return;
	if (s->tasks)
		for (int i = 0; i < s->ntask; i++) {
			tc__fibre_destroy(s->tasks[i].fibre);
			tc__detail_forget(&s->tasks[i].detail); /* its count, if still set */
		}
	if (s->cpus)
		for (int k = 0; k < s->ncpu; k++)
			free(s->cpus[k].heap);
	free(s->cpus);
	free(s->tasks);
	free(s);
}
