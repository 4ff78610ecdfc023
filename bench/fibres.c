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
 *
 * --coll (AUTO's machine pricing on fibres): what a wait costs a
 * fibre team, and whether AUTO picks well there.  On fibre teams
 * (TC_EXEC_FIBRES) of p = 8, 16, 64 (--p LIST) over the process's CPUs:
 *   token   a token of 8 bytes passed round ring:p, every rank receiving it
 *           from its left neighbour and sending it to its right: one hop is
 *           one wait (park, made ready by the send, switched to) and one
 *           message; ns per hop, as a CPU sees it (2 of the p hops cross
 *           CPUs: the ranks sit on the CPUs in blocks);
 *   pass    every rank of the team waiting once per round (a barrier,
 *           "linear", of 2 levels of waits): ns per rank and level, the
 *           figure AUTO's price of one level is made of (lib/coll/machine.h);
 *   then barrier and allreduce of 8 bytes (one double, sum) on complete:p
 *   and hypercube:log2 p with AUTO and with every algorithm the registry
 *   names (tc_alg_name) that applies: wall time per call, the smallest over
 *   --reps runs (default 5) of a run's median chunk of calls (the largest
 *   beside it: a shared machine's spread), the best named one and AUTO's
 *   choice beside it.
 *   --waits: token and pass only.
 * Usage: fibres [--quick] | fibres --coll [--p LIST] [--reps N] [--waits]
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
#include "topocoll.h"
#include "stats.h"

/* ---- fibres ------------------------------------------------------------ */

enum { MAX_BATCHES = 256 };

struct fpair {
	struct tc__fibre main, *a, *b;
	long n; /* round trips per batch */
	int batches;
	double t[MAX_BATCHES];
};

static void fib_a(struct tc__fibre *self, void *arg)
{
	struct fpair *s = arg;
	for (int k = 0; k < s->batches; k++) {
		double t0 = bench_now_ns();
		for (long i = 0; i < s->n; i++)
			tc__fibre_switch(self, s->b);
		s->t[k] = bench_now_ns() - t0;
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
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
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
	int yield;             /* 0: futex, 1: sched_yield */
	double t[MAX_BATCHES]; /* player 0's batch times */
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
			double t = bench_now_ns();
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
	s.t[batches - 1] = bench_now_ns() - s.t[batches - 1];
	pthread_join(t, NULL);
	return median_of(s.t, batches) / (2.0 * (double)n);
}

/* ---- --coll: waits and collectives on fibre teams ------------------------ */

enum { CHUNKS = 5 };

struct cjob {
	int kind;         /* 0 token, 1 barrier, 2 allreduce */
	const char *alg;  /* NULL: AUTO */
	long calls;       /* per chunk */
	double t[CHUNKS]; /* rank 0's chunk times, ns */
	char chosen[64];  /* the algorithm that ran (rank 0) */
	int err;
};

static int coll_fn(struct tc_proc *proc, void *arg)
{
	struct cjob *j = arg;
	int me = tc_rank(proc), p = tc_size(proc), err = 0;
	struct tc_coll_opts o = {.alg = j->alg};
	double in = me, out = 0, tok = 0;
	for (int c = -1; c < CHUNKS && !err; c++) {
		/* Chunk -1: warm-up (the schedule cache, the stacks). */
		long n = c < 0 ? (j->calls < 50 ? j->calls : 50) : j->calls;
		err = tc_barrier(proc, NULL);
		double t0 = bench_now_ns();
		for (long i = 0; i < n && !err; i++) {
			switch (j->kind) {
			case 0:
				if (me == 0) {
					err = tc_send(proc, 1 % p, &tok, sizeof tok);
					if (!err)
						err = tc_recv(proc, p - 1, &tok, sizeof tok, NULL);
				} else {
					err = tc_recv(proc, me - 1, &tok, sizeof tok, NULL);
					if (!err)
						err = tc_send(proc, (me + 1) % p, &tok, sizeof tok);
				}
				break;
			case 1:
				err = tc_barrier(proc, &o);
				break;
			default:
				err = tc_allreduce(proc, &in, &out, 1, TC_DOUBLE, TC_OP_SUM, &o);
				if (!err && out != (double)p * (p - 1) / 2)
					err = TC_EINVAL;
				break;
			}
		}
		if (me == 0 && c >= 0)
			j->t[c] = bench_now_ns() - t0;
	}
	if (me == 0 && j->kind) {
		struct tc_coll_info ci;
		tc_last_coll(proc, &ci);
		snprintf(j->chosen, sizeof j->chosen, "%s", ci.algorithm ? ci.algorithm : "-");
	}
	return err;
}

/* ns per call (token: per hop) of job j on a fibre team of spec: the
 * smallest over reps runs of a run's median chunk (*hi: the largest); < 0:
 * the error (e.g. TC_ENOTSUP). */
static double coll_time(const char *spec, struct cjob *j, int reps, double *hi)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = TC_EXEC_FIBRES;
	cfg.timeout_ms = 0; /* as the peers benchmark: a timed park costs a timer */
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	if (err)
		return err > 0 ? -err : err;
	int p = tc_team_size(team);
	double lo = 0, top = 0;
	for (int r = 0; r < reps && !err; r++) {
		err = tc_run(team, coll_fn, j);
		double per = median_of(j->t, CHUNKS) / (double)j->calls;
		if (j->kind == 0)
			per /= p;
		lo = r == 0 || per < lo ? per : lo;
		top = per > top ? per : top;
	}
	tc_team_destroy(team);
	if (err)
		return err > 0 ? -err : err;
	if (hi)
		*hi = top;
	return lo;
}

static int coll_main(const int *ps, int nps, int reps, int waits_only)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t all;
	if (sched_getaffinity(0, sizeof all, &all) == 0)
		cpus = CPU_COUNT(&all);
	printf("# fibre teams (TC_EXEC_FIBRES) on %ld CPUs; the smallest (max beside it) over %d "
	       "runs of a run's median of %d chunks\n",
	       cpus, reps, CHUNKS);
	printf("%-4s %-14s %-10s %-16s %12s  %s\n", "p", "topology", "case", "algorithm",
	       "ns_per_call", "note");
	/* The JSON line goes last: collected meanwhile. */
	static char json[32 * 1024];
	size_t jl = 0;
	for (int pi = 0; pi < nps; pi++) {
		int p = ps[pi], d = 0;
		while ((1 << d) < p)
			d++;
		char ring[32], specs[2][32];
		snprintf(ring, sizeof ring, "ring:%d", p);
		snprintf(specs[0], 32, "complete:%d", p);
		int nspecs = 1;
		if ((1 << d) == p)
			snprintf(specs[nspecs++], 32, "hypercube:%d", d);
		long per_cpu = (p + cpus - 1) / cpus;
		struct cjob tj = {.kind = 0, .calls = 200};
		double hop = coll_time(ring, &tj, reps, NULL);
		struct cjob lj = {.kind = 1, .alg = "linear", .calls = 400};
		double lin = coll_time(specs[0], &lj, reps, NULL);
		double pass = lin / (2.0 * (double)per_cpu);
		printf("%-4d %-14s %-10s %-16s %12.1f  one hop: a wait and an 8-byte message\n", p,
		       ring, "token", "-", hop);
		printf("%-4d %-14s %-10s %-16s %12.1f  per rank and level of waits (linear barrier / "
		       "(2 x %ld ranks per CPU))\n",
		       p, specs[0], "pass", "linear", pass, per_cpu);
		if (jl < sizeof json - 256)
			jl += (size_t)snprintf(json + jl, sizeof json - jl,
			                       "%s{\"p\":%d,\"token_hop_ns\":%.1f,\"pass_ns\":%.1f",
			                       jl ? "," : "", p, hop, pass);
		for (int s = 0; s < nspecs && !waits_only; s++)
			for (int kind = 1; kind <= 2; kind++) {
				enum tc_coll coll = kind == 1 ? TC_COLL_BARRIER : TC_COLL_ALLREDUCE;
				const char *cname = kind == 1 ? "barrier" : "allreduce:8";
				struct cjob aj = {.kind = kind, .calls = p >= 64 ? 400 : 1000};
				double ahi = 0, at = coll_time(specs[s], &aj, reps, &ahi);
				double best = -1;
				const char *best_name = "-";
				for (int i = 0; tc_alg_name(coll, i); i++) {
					struct cjob nj = {.kind = kind,
					                  .alg = tc_alg_name(coll, i),
					                  .calls = aj.calls};
					double thi = 0, t = coll_time(specs[s], &nj, reps, &thi);
					if (t < 0) {
						printf("%-4d %-14s %-10s %-16s %12s  (%s)\n", p,
						       specs[s], cname, nj.alg, "-",
						       tc_err_name((int)-t));
						continue;
					}
					printf("%-4d %-14s %-10s %-16s %12.1f  (max %.1f)\n", p,
					       specs[s], cname, nj.alg, t, thi);
					if (best < 0 || t < best) {
						best = t;
						best_name = nj.alg;
					}
				}
				printf("%-4d %-14s %-10s %-16s %12.1f  (max %.1f) AUTO chose %s; best named %s "
				       "(%.1f): AUTO/best %.2f\n",
				       p, specs[s], cname, "auto", at, ahi, aj.chosen, best_name,
				       best, best > 0 ? at / best : 0.0);
				fflush(stdout);
				if (jl < sizeof json - 256)
					jl += (size_t)snprintf(json + jl, sizeof json - jl,
					                       ",\"%s %s\":{\"auto_ns\":%.1f,\"auto_alg\":\"%s\","
					                       "\"best_ns\":%.1f,\"best_alg\":\"%s\"}",
					                       specs[s], cname, at, aj.chosen, best,
					                       best_name);
			}
		if (jl < sizeof json - 4)
			jl += (size_t)snprintf(json + jl, sizeof json - jl, "}");
	}
	printf("{\"bench\":\"fibres_coll\",\"cpus\":%ld,\"reps\":%d,\"rows\":[%s]}\n", cpus, reps, json);
	return 0;
}

/* ---- main ------------------------------------------------------------- */

enum { MAX_RUNS = 15 };

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--coll")) {
		int ps[16] = {8, 16, 64}, nps = 3, reps = 5, p_set = 0, waits_only = 0;
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--p") && i + 1 < argc) {
				if (!p_set)
					nps = 0;
				p_set = 1;
				for (char *t = strtok(argv[++i], ","); t && nps < 16;
				     t = strtok(NULL, ","))
					ps[nps++] = atoi(t);
			} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
				reps = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
			} else if (!strcmp(argv[i], "--waits")) {
				waits_only = 1;
			} else {
				fprintf(stderr, "usage: fibres [--quick] | fibres --coll [--p LIST] [--reps N] "
				                "[--waits]\n");
				return 2;
			}
		}
		for (int i = 0; i < nps; i++)
			if (ps[i] < 2 || ps[i] > 4096) {
				fprintf(stderr, "fibres: p from 2 to 4096\n");
				return 2;
			}
		return coll_main(ps, nps, reps, waits_only);
	}
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
		printf("%-22s %10.1f %9.1f-%-10.1f %8.1f\n", names[k], med[k], lo[k], hi[k],
		       med[k] / med[0]);
	printf("# goal: a fibre switch <= 20 ns: %s\n", med[0] <= 20.0 ? "met" : "NOT met");
	printf("{\"bench\":\"fibres\",\"runs\":%d,\"cpu\":%d,"
	       "\"fibre_switch_ns\":{\"median\":%.2f,\"min\":%.2f,\"max\":%.2f},"
	       "\"futex_handoff_ns\":{\"median\":%.1f,\"min\":%.1f,\"max\":%.1f},"
	       "\"yield_handoff_ns\":{\"median\":%.1f,\"min\":%.1f,\"max\":%.1f},"
	       "\"futex_over_fibre\":%.1f,\"yield_over_fibre\":%.1f}\n",
	       runs, the_cpu, med[0], lo[0], hi[0], med[1], lo[1], hi[1], med[2], lo[2], hi[2],
	       med[1] / med[0], med[2] / med[0]);
	return 0;
}
