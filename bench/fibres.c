/* SPDX-License-Identifier: MIT */
/*
 * bench/fibres - what a hand-off between two contexts costs, measured in one
 * run, one CPU:
 *   fibre   a round trip between two fibres (lib/fibre: A switches to B, B
 *           back to A) divided by 2: one user-level switch;
 *   futex   two kernel threads pinned to one CPU, each sleeping on a futex
 *           word of its own and waking the other (the hand-off a rank that
 *           parks makes today, lib/core/wait.h): round trip / 2;
 *   yield   two kernel threads pinned to one CPU passing a turn, each
 *           sched_yield()ing until it is its turn: round trip / 2.
 * A run times batches of round trips (fibres: 10,000 round trips, about
 * 0.3 ms; threads: 200) and keeps the median batch, so a run on a CPU that
 * other processes share reports the hand-off and not their time slices.
 * Each figure is the median of several runs (min and max beside it), the
 * runs interleaved so that a noisy neighbour hits all three alike; the
 * ratios are against the fibre switch of the same run.  Prints one table,
 * then one JSON object as the last line.
 * Usage: fibres [--quick]
 */
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fibre/fibre.h"

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* ---- fibres ------------------------------------------------------------ */

enum { MAX_BATCHES = 256 };

struct fpair {
	struct tc__fibre main, *a, *b;
	long n;          /* round trips per batch */
	int batches;
	double t[MAX_BATCHES];
};

static void fib_a(struct tc__fibre *self, void *arg)
{
	struct fpair *s = arg;
	for (int k = 0; k < s->batches; k++) {
		double t0 = now_ns();
		for (long i = 0; i < s->n; i++)
			tc__fibre_switch(self, s->b);
		s->t[k] = now_ns() - t0;
	}
}

static void fib_b(struct tc__fibre *self, void *arg)
{
	struct fpair *s = arg;
	for (;;)
		tc__fibre_switch(self, s->a);
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ns per switch: the median batch of n round trips between two fibres. */
static double fibre_switch_ns(long n, int batches)
{
	static struct fpair s;
	s.n = n;
	s.batches = batches;
	if (tc__fibre_thread_init(&s.main) || tc__fibre_create(&s.main, 0, fib_a, &s, &s.a) ||
	    tc__fibre_create(&s.main, 0, fib_b, &s, &s.b)) {
		fprintf(stderr, "fibres: cannot create fibres\n");
		exit(1);
	}
	tc__fibre_switch(&s.main, s.a); /* returns when a has made its batches */
	tc__fibre_destroy(s.a);
	tc__fibre_destroy(s.b);
	tc__fibre_thread_fini(&s.main);
	return median_of(s.t, batches) / (2.0 * (double)n);
}

/* ---- kernel threads on one CPU ------------------------------------------ */

static int the_cpu;

static void pin(void)
{
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(the_cpu, &one);
	pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

struct kpair {
	_Atomic uint32_t word[2]; /* futex: 1 = your turn */
	_Atomic int turn;         /* yield: whose turn */
	long n;                   /* round trips per batch */
	int batches;
	int yield;                /* 0: futex, 1: sched_yield */
	double t[MAX_BATCHES];    /* player 0's batch times */
};

static void futex_wait(_Atomic uint32_t *w)
{
	/* Acquire: pairs with the release store of the waker. */
	while (atomic_load_explicit(w, memory_order_acquire) == 0)
		syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	atomic_store_explicit(w, 0, memory_order_relaxed); /* only we reset it */
}

static void futex_give(_Atomic uint32_t *w)
{
	/* Release: the hand-off; pairs with futex_wait()'s acquire load. */
	atomic_store_explicit(w, 1, memory_order_release);
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void play(struct kpair *s, int me)
{
	for (long i = 0, k = 0; i < s->n * s->batches; i++) {
		if (me == 0 && i % s->n == 0) {
			double t = now_ns();
			if (k)
				s->t[k - 1] = t - s->t[k - 1];
			s->t[k++] = t;
		}
		if (s->yield) {
			/* Acquire/release: the turn is the hand-off. */
			while (atomic_load_explicit(&s->turn, memory_order_acquire) != me)
				sched_yield();
			atomic_store_explicit(&s->turn, !me, memory_order_release);
		} else if (me == 0) {
			futex_give(&s->word[1]);
			futex_wait(&s->word[0]);
		} else {
			futex_wait(&s->word[1]);
			futex_give(&s->word[0]);
		}
	}
}

static void *player1(void *arg)
{
	pin();
	play(arg, 1);
	return NULL;
}

/* ns per hand-off: the median batch of n round trips of two threads on one
 * CPU. */
static double kernel_handoff_ns(long n, int batches, int yield)
{
	static struct kpair s;
	memset(&s, 0, sizeof s);
	s.n = n;
	s.batches = batches;
	s.yield = yield;
	pthread_t t;
	pin();
	if (pthread_create(&t, NULL, player1, &s)) {
		fprintf(stderr, "fibres: cannot create a thread\n");
		exit(1);
	}
	play(&s, 0);
	s.t[batches - 1] = now_ns() - s.t[batches - 1];
	pthread_join(t, NULL);
	return median_of(s.t, batches) / (2.0 * (double)n);
}

/* ---- main ------------------------------------------------------------- */

enum { MAX_RUNS = 15 };

int main(int argc, char **argv)
{
	int quick = argc > 1 && !strcmp(argv[1], "--quick");
	int runs = quick ? 5 : MAX_RUNS;
	int bf = quick ? 20 : 200, bk = quick ? 10 : 50; /* batches per run */

	cpu_set_t all;
	sched_getaffinity(0, sizeof all, &all);
	for (the_cpu = 0; the_cpu < CPU_SETSIZE && !CPU_ISSET(the_cpu, &all); the_cpu++)
		;

	static const char *names[3] = {"fibre switch", "futex hand-off", "sched_yield hand-off"};
	double v[3][MAX_RUNS];
	fibre_switch_ns(10000, 10); /* warm-up: stacks touched, code in cache */
	for (int r = 0; r < runs; r++) {
		pin(); /* the fibres on the same CPU as the threads */
		v[0][r] = fibre_switch_ns(10000, bf);
		v[1][r] = kernel_handoff_ns(200, bk, 0);
		v[2][r] = kernel_handoff_ns(200, bk, 1);
	}
	double med[3], lo[3], hi[3];
	for (int k = 0; k < 3; k++) {
		med[k] = median_of(v[k], runs); /* sorts */
		lo[k] = v[k][0];
		hi[k] = v[k][runs - 1];
	}
	printf("# one CPU (cpu %d), %d runs of the median batch, median (min-max); ratio against the "
	       "fibre switch\n",
	       the_cpu, runs);
	printf("%-22s %10s %20s %8s\n", "hand-off", "ns", "range", "ratio");
	for (int k = 0; k < 3; k++)
		printf("%-22s %10.1f %9.1f-%-10.1f %8.1f\n", names[k], med[k], lo[k], hi[k], med[k] / med[0]);
	printf("# goal (issue 15): a fibre switch <= 20 ns: %s\n", med[0] <= 20.0 ? "met" : "NOT met");
	printf("{\"bench\":\"fibres\",\"runs\":%d,\"cpu\":%d,"
	       "\"fibre_switch_ns\":{\"median\":%.2f,\"min\":%.2f,\"max\":%.2f},"
	       "\"futex_handoff_ns\":{\"median\":%.1f,\"min\":%.1f,\"max\":%.1f},"
	       "\"yield_handoff_ns\":{\"median\":%.1f,\"min\":%.1f,\"max\":%.1f},"
	       "\"futex_over_fibre\":%.1f,\"yield_over_fibre\":%.1f}\n",
	       runs, the_cpu, med[0], lo[0], hi[0], med[1], lo[1], hi[1], med[2], lo[2], hi[2],
	       med[1] / med[0], med[2] / med[0]);
	return 0;
}
