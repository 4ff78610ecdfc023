/* SPDX-License-Identifier: MIT */
/*
 * tests/test_fibre_ranks.c - ranks as fibres: every
 * collective at p up to 256 on fibres against the sequential reference,
 * 4096 fibre ranks on this machine's CPUs running an allreduce, how the
 * team resolves threads or fibres, mixed teams (fibre ranks plus kernel
 * threads that attached), abort and timeout reaching parked fibres, a rank
 * using most of its fibre stack, and the emulation on fibres against the
 * model at p = 64 and 256 (a generous bound: the tight goal is
 * ./tools/bench model's), and AUTO's price of waiting on a fibre team.
 * Every team here asks for fibres (TC_EXEC_FIBRES, or TC_EXEC=fibres for
 * the helpers of tests/common that build their own teams), whatever p.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sched.h>

#include "coll/machine.h"
#include "coll_ref.h"
#include "harness.h"
#include "topocoll.h"

static void force_fibres(void)
{
	setenv("TC_EXEC", "fibres", 1); /* for ct_team, which asks for AUTO */
}

static struct tc_team *team_of(const char *spec, enum tc_exec exec, int run_unattached)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	cfg.run_unattached = run_unattached;
	cfg.timeout_ms = 60000; /* a hang fails with a message */
	struct tc_team *t = NULL;
	cr_assert_eq(tc_team_create(&cfg, &t), 0, "%s", spec);
	return t;
}

/* Every collective but the variable-count ones (tests/test_coll_vcount.c
 * runs those under TC_EXEC=fibres in ./tools/test) with AUTO on spec. */
static void every_collective(const char *spec)
{
	char msg[512];
	struct tc_team *t = ct_team(spec, NULL, msg, sizeof msg);
	cr_assert(t, "%s", msg);
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	cr_assert_eq(info.exec, TC_EXEC_FIBRES, "%s", spec);
	int p = info.p;
	int members[2] = {p / 3, p - 1};
	for (int c = 0; c < TC_COLL_COUNT; c++) {
		unsigned f = tc_coll_flags((enum tc_coll)c);
		if (f & TC_CF_VCOUNT)
			continue;
		if ((c == TC_COLL_GRAY2BINARY || c == TC_COLL_BINARY2GRAY) &&
		    strncmp(spec, "hypercube:", 10))
			continue; /* hypercubes only */
		struct ct_case cs = {.coll = (enum tc_coll)c,
		                     .count = 3,
		                     .dt = TC_INT64,
		                     .op = TC_OP_SUM,
		                     .root = p / 3,
		                     .iters = 2,
		                     .seed = (uint64_t)c * 31 + (uint64_t)p,
		                     .q = p > 1 ? 1 : 0};
		if (f & TC_CF_MEMBERS) {
			cs.members = members;
			cs.nmembers = p > 1 && members[0] != members[1] ? 2 : 1;
		}
		cr_assert_eq(ct_run(t, &cs, msg, sizeof msg), 0, "%s %s: %s", spec,
		             tc_coll_name((enum tc_coll)c), msg);
	}
	tc_team_destroy(t);
}

Test(fibre_ranks, every_collective_small_p, .timeout = 300)
{
	force_fibres();
	static const char *const specs[] = {"complete:1",  "complete:2", "ring:3",   "complete:5",
	                                    "hypercube:3", "ring:13",    "mesh:4x4", "complete:31"};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
		every_collective(specs[i]);
}

Test(fibre_ranks, every_collective_p64_p256, .timeout = 600)
{
	force_fibres();
	every_collective("hypercube:6");
	every_collective("torus:8x8");
	every_collective("hypercube:8");
}

/* 4096 fibres on this machine's CPUs: an allreduce, checked. */
Test(fibre_ranks, allreduce_p4096, .timeout = 600)
{
	force_fibres();
	char msg[512];
	struct tc_team *t = ct_team("hypercube:12", NULL, msg, sizeof msg);
	cr_assert(t, "%s", msg);
	struct ct_case cs = {.coll = TC_COLL_ALLREDUCE,
	                     .count = 1,
	                     .dt = TC_DOUBLE,
	                     .op = TC_OP_SUM,
	                     .iters = 2,
	                     .seed = 7};
	cr_assert_eq(ct_run(t, &cs, msg, sizeof msg), 0, "%s", msg);
	tc_team_destroy(t);
}

/* ---- threads or fibres --------------------------------------------------- */

static int yield_fn(struct tc_proc *proc, void *arg)
{
	atomic_int *n = arg;
	for (int i = 0; i < 100; i++)
		tc_yield(proc);
	atomic_fetch_add(n, 1);
	return tc_barrier(proc, NULL);
}

Test(fibre_ranks, exec_resolves, .timeout = 60)
{
	struct tc_team_info info;
	unsetenv("TC_EXEC");
	/* AUTO: fibres exactly when ranks outnumber the CPUs. */
	struct tc_team *t = team_of("ring:2", TC_EXEC_AUTO, 0);
	tc_team_get_info(t, &info);
	cr_assert_eq(info.exec, info.cpus >= 2 ? TC_EXEC_THREADS : TC_EXEC_FIBRES);
	tc_team_destroy(t);
	t = team_of("ring:300", TC_EXEC_AUTO, 0);
	tc_team_get_info(t, &info);
	cr_assert_eq(info.exec, info.cpus >= 300 ? TC_EXEC_THREADS : TC_EXEC_FIBRES);
	tc_team_destroy(t);
	/* TC_EXEC replaces AUTO only. */
	setenv("TC_EXEC", "fibres", 1);
	t = team_of("ring:2", TC_EXEC_AUTO, 0);
	tc_team_get_info(t, &info);
	cr_assert_eq(info.exec, TC_EXEC_FIBRES);
	cr_assert_eq(info.spin_ns, 0, "a fibre never spins");
	cr_assert_geq(info.fibre_stack_bytes, (size_t)64 << 10);
	tc_team_destroy(t);
	t = team_of("ring:2", TC_EXEC_THREADS, 0);
	tc_team_get_info(t, &info);
	cr_assert_eq(info.exec, TC_EXEC_THREADS);
	tc_team_destroy(t);
	setenv("TC_EXEC", "threads", 1);
	t = team_of("ring:300", TC_EXEC_AUTO, 0);
	tc_team_get_info(t, &info);
	cr_assert_eq(info.exec, TC_EXEC_THREADS);
	tc_team_destroy(t);
	unsetenv("TC_EXEC");
	/* tc_yield either way. */
	for (int e = TC_EXEC_THREADS; e <= TC_EXEC_FIBRES; e++) {
		atomic_int n = 0;
		t = team_of("complete:5", (enum tc_exec)e, 0);
		cr_assert_eq(tc_run(t, yield_fn, &n), 0);
		cr_assert_eq(atomic_load(&n), 5);
		tc_team_destroy(t);
	}
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.p = 2;
	cfg.exec = (enum tc_exec)7;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL);
}

/* ---- mixed teams ----------------------------------------------------------- */

enum { MIX_P = 6, MIX_ITERS = 200 };

struct mix {
	struct tc_team *team;
	pthread_barrier_t attached; /* the threads and the main thread */
	int rank[2];
	atomic_int bad;
	int err[MIX_P];
};

/* Allreduce and barrier back to back; every rank checks the sum. */
static int mix_fn(struct tc_proc *proc, void *arg)
{
	struct mix *m = arg;
	int me = tc_rank(proc), p = tc_size(proc);
	for (int it = 0; it < MIX_ITERS; it++) {
		int64_t in = me + it, out = -1;
		int err = tc_allreduce(proc, &in, &out, 1, TC_INT64, TC_OP_SUM, NULL);
		if (!err)
			err = tc_barrier(proc, NULL);
		if (err)
			return err;
		if (out != (int64_t)p * (p - 1) / 2 + (int64_t)p * it)
			atomic_fetch_add(&m->bad, 1);
	}
	return 0;
}

static void *mix_thread(void *arg)
{
	struct mix *m = ((void **)arg)[0];
	int k = (int)(intptr_t)((void **)arg)[1];
	struct tc_proc *proc = NULL;
	int err = tc_attach(m->team, m->rank[k], &proc);
	pthread_barrier_wait(&m->attached);
	if (!err)
		err = mix_fn(proc, m);
	m->err[m->rank[k]] = err;
	if (proc)
		tc_detach(proc);
	return NULL;
}

Test(fibre_ranks, mixed_team_threads_and_fibres, .timeout = 120)
{
	unsetenv("TC_EXEC");
	struct mix m = {.rank = {1, 4}};
	/* Ranks 1 and 4 are kernel threads; 0, 2, 3, 5 fibres on the CPUs. */
	m.team = team_of("complete:6", TC_EXEC_FIBRES, 1);
	pthread_barrier_init(&m.attached, NULL, 3);
	pthread_t th[2];
	void *args[2][2] = {{&m, (void *)(intptr_t)0}, {&m, (void *)(intptr_t)1}};
	for (int k = 0; k < 2; k++)
		cr_assert_eq(pthread_create(&th[k], NULL, mix_thread, args[k]), 0);
	pthread_barrier_wait(&m.attached);
	int err = tc_run(m.team, mix_fn, &m);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	cr_assert_eq(err, 0, "%s", tc_err_name(err));
	cr_assert_eq(m.err[1], 0, "%s", tc_err_name(m.err[1]));
	cr_assert_eq(m.err[4], 0, "%s", tc_err_name(m.err[4]));
	cr_assert_eq(atomic_load(&m.bad), 0);
	pthread_barrier_destroy(&m.attached);
	/* Without run_unattached an attached rank still makes tc_run busy. */
	struct tc_team *t = team_of("complete:3", TC_EXEC_FIBRES, 0);
	struct tc_proc *proc;
	cr_assert_eq(tc_attach(t, 0, &proc), 0);
	cr_assert_eq(tc_run(t, mix_fn, &m), TC_EBUSY);
	cr_assert_eq(tc_detach(proc), 0);
	tc_team_destroy(t);
	tc_team_destroy(m.team);
}

/* ---- abort and timeout ------------------------------------------------------ */

struct stuck {
	atomic_int waiting;
	int err[64];
};

/* Every rank but 0 waits for a message nobody sends. */
static int stuck_fn(struct tc_proc *proc, void *arg)
{
	struct stuck *s = arg;
	int me = tc_rank(proc);
	const int *nb;
	tc_neighbors(proc, &nb);
	int64_t v;
	if (me == 0) {
		s->err[0] = 0;
		return 0;
	}
	atomic_fetch_add(&s->waiting, 1);
	s->err[me] = tc_recv(proc, nb[0], &v, sizeof v, NULL);
	return 0;
}

static void *abort_later(void *arg)
{
	struct tc_team *t = ((void **)arg)[0];
	struct stuck *s = ((void **)arg)[1];
	while (atomic_load(&s->waiting) < 31)
		sched_yield();
	struct timespec ts = {0, 20000000}; /* let them park */
	nanosleep(&ts, NULL);
	tc_team_abort(t);
	return NULL;
}

Test(fibre_ranks, abort_wakes_parked_fibres, .timeout = 60)
{
	unsetenv("TC_EXEC");
	/* From a thread that is not one of the CPUs: the remote wake-up. */
	struct tc_team *t = team_of("complete:32", TC_EXEC_FIBRES, 0);
	struct stuck s = {0};
	void *args[2] = {t, &s};
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, abort_later, args), 0);
	cr_assert_eq(tc_run(t, stuck_fn, &s), 0);
	pthread_join(th, NULL);
	for (int r = 1; r < 32; r++)
		cr_assert_eq(s.err[r], TC_EABORTED, "rank %d: %s", r, tc_err_name(s.err[r]));
	/* The team is usable again after the aborted run. */
	atomic_int n = 0;
	cr_assert_eq(tc_run(t, yield_fn, &n), 0);
	cr_assert_eq(atomic_load(&n), 32);
	tc_team_destroy(t);
}

Test(fibre_ranks, timeout_wakes_parked_fibres, .timeout = 60)
{
	unsetenv("TC_EXEC");
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:32";
	cfg.exec = TC_EXEC_FIBRES;
	cfg.timeout_ms = 100;
	struct tc_team *t;
	cr_assert_eq(tc_team_create(&cfg, &t), 0);
	struct stuck s = {0};
	cr_assert_eq(tc_run(t, stuck_fn, &s), 0);
	int timed_out = 0;
	for (int r = 1; r < 32; r++) {
		cr_assert(s.err[r] == TC_ETIMEDOUT || s.err[r] == TC_EABORTED, "rank %d: %s", r,
		          tc_err_name(s.err[r]));
		timed_out += s.err[r] == TC_ETIMEDOUT;
	}
	cr_assert_geq(timed_out, 1);
	tc_team_destroy(t);
}

/* ---- stacks -------------------------------------------------------------------- */

static size_t deep(size_t left, volatile unsigned char *sink)
{
	volatile unsigned char frame[4096];
	frame[0] = (unsigned char)left;
	frame[4095] = frame[0];
	*sink += frame[4095];
	return left <= sizeof frame ? 1 : 1 + deep(left - sizeof frame, sink);
}

static int deep_fn(struct tc_proc *proc, void *arg)
{
	size_t use = *(size_t *)arg;
	volatile unsigned char sink = 0;
	deep(use, &sink);
	return tc_barrier(proc, NULL);
}

/* A rank may use three quarters of its fibre stack (the collectives and
 * the suites' rank functions use far less: they all pass on fibres). */
Test(fibre_ranks, rank_uses_most_of_its_stack, .timeout = 60)
{
	unsetenv("TC_EXEC");
	struct tc_team *t = team_of("complete:8", TC_EXEC_FIBRES, 0);
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	size_t use = info.fibre_stack_bytes / 4 * 3;
	cr_assert_eq(tc_run(t, deep_fn, &use), 0);
	tc_team_destroy(t);
}

/* ---- emulation on fibres ------------------------------------------------------- */

static int emu_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	static double in[1024];
	double out[1024];
	struct tc_coll_opts o = {.alg = "hypercube"};
	return tc_allreduce(proc, in, out, 1024, TC_DOUBLE, TC_OP_SUM, &o);
}

/* Hypercube allreduce of 8 KiB at p = 64 (t_s = 1 ms) and p = 256 (t_s =
 * 5 ms), emulated: the run never ends before the model says (a rank does
 * not finish before its clock), and the model's makespan is at least its d
 * rounds of t_s.  How close to the model the run ends is a property of the
 * machine's load, measured by bench/model_fidelity (`tools/bench model`),
 * not asserted here. */
Test(fibre_ranks, emulation_follows_the_model, .timeout = 120)
{
	unsetenv("TC_EXEC");
	static const char *const specs[] = {"hypercube:6", "hypercube:8"};
	for (int i = 0; i < 2; i++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = specs[i];
		cfg.exec = TC_EXEC_FIBRES;
		cfg.mode = TC_MODE_EMULATED;
		cfg.model.ts_ns = i ? 5e6 : 1e6;
		cfg.model.tw_ns = 1;
		struct tc_team *t;
		cr_assert_eq(tc_team_create(&cfg, &t), 0);
		int d = i ? 8 : 6;
		cr_assert_eq(tc_run(t, emu_fn, NULL), 0, "%s", specs[i]);
		struct tc_run_info ri;
		tc_team_last_run(t, &ri);
		double model = (double)ri.makespan_ps / 1000.0;
		cr_assert_gt(model, d * cfg.model.ts_ns, "%s: %d rounds of at least t_s", specs[i], d);
		cr_assert_geq((double)ri.wall_ns, model, "%s: the emulation ran ahead of the model",
		              specs[i]);
		tc_team_destroy(t);
	}
}

/* ---- AUTO's machine pricing on fibres (lib/coll/machine.h) ---------------------- */

static char auto_alg[2][64];

static int auto_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	double x = 1, y = 0;
	struct tc_coll_info ci;
	int err = tc_allreduce(proc, &x, &y, 1, TC_DOUBLE, TC_OP_SUM, NULL);
	tc_last_coll(proc, &ci);
	if (!err && tc_rank(proc) == 0)
		snprintf(auto_alg[0], sizeof auto_alg[0], "%s", ci.algorithm);
	if (!err)
		err = tc_barrier(proc, NULL);
	tc_last_coll(proc, &ci);
	if (!err && tc_rank(proc) == 0)
		snprintf(auto_alg[1], sizeof auto_alg[1], "%s", ci.algorithm);
	return err;
}

/* AUTO's choice (allreduce of one double, barrier) on hypercube:6 with exec;
 * the price of a level of waits beside it. */
static void auto_choice(enum tc_exec exec, uint64_t *level_ns, int *cpus)
{
	struct tc_team *t = team_of("hypercube:6", exec, 0);
	*level_ns = tc__wait_level_ns(t);
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	cr_assert_eq(info.exec, exec);
	*cpus = info.cpus;
	memset(auto_alg, 0, sizeof auto_alg);
	cr_assert_eq(tc_run(t, auto_fn, NULL), 0);
	tc_team_destroy(t);
}

/* A fibre team prices a level of waits at TC__FIBRE_WAIT_NS per rank of a
 * CPU, a thread team at TC__SWITCH_NS (the unit check of the price, no
 * timing); and AUTO follows it: on hypercube:6 over 2 CPUs the allreduce
 * of 8 bytes is recursive doubling on threads (6 levels of waits, each a
 * pass of kernel switches over the CPU's 32 ranks) and the binomial
 * reduce + broadcast on fibres (126 messages against 384, 12 cheap levels:
 * 19.5 us against 59 there, ./tools/bench fibres --coll).  The process is
 * held to two of its CPUs meanwhile, so that the prices are those of the
 * machine the choice was measured on. */
Test(fibre_ranks, auto_prices_fibre_waits, .timeout = 60)
{
	unsetenv("TC_EXEC");
	cpu_set_t old, two;
	cr_assert_eq(sched_getaffinity(0, sizeof old, &old), 0);
	CPU_ZERO(&two);
	for (int c = 0, n = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &old)) {
			CPU_SET(c, &two);
			n++;
		}
	cr_assert_eq(sched_setaffinity(0, sizeof two, &two), 0);
	uint64_t lf, lt;
	int cf, ct;
	auto_choice(TC_EXEC_FIBRES, &lf, &cf);
	char fib_allreduce[64], fib_barrier[64];
	memcpy(fib_allreduce, auto_alg[0], sizeof fib_allreduce);
	memcpy(fib_barrier, auto_alg[1], sizeof fib_barrier);
	auto_choice(TC_EXEC_THREADS, &lt, &ct);
	sched_setaffinity(0, sizeof old, &old);
	cr_assert_eq(cf, ct);
	uint64_t per_cpu = (uint64_t)((64 + cf - 1) / cf);
	cr_assert_eq(lf, per_cpu * TC__FIBRE_WAIT_NS, "fibres: %llu ns a level", (unsigned long long)lf);
	cr_assert_eq(lt, per_cpu * TC__SWITCH_NS, "threads: %llu ns a level", (unsigned long long)lt);
	cr_assert_lt(lf, lt);
	if (cf == 2) {
		cr_assert_str_eq(fib_allreduce, "reduce_bcast");
		cr_assert_str_eq(auto_alg[0], "hypercube");
		/* The barrier has no tree on the hypercube: recursive doubling
		 * either way (linear's routed transfers wait at every hop). */
		cr_assert_str_eq(fib_barrier, "allreduce");
		cr_assert_str_eq(auto_alg[1], "allreduce");
	}
}
