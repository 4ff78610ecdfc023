/* SPDX-License-Identifier: MIT */
/* Team tests: sizes up to 1024, memory that grows with links, pinning,
 * attaching existing threads, configuration errors. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

static struct tc_team *make(const char *spec, int p)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.p = p;
	cfg.timeout_ms = 60000;
	struct tc_team *t = NULL;
	int err = tc_team_create(&cfg, &t);
	cr_assert_eq(err, 0, "%s: %s", spec ? spec : "(null)", tc_strerror(err));
	return t;
}

static int ring_token_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	int p = tc_size(proc), me = tc_rank(proc);
	int tok = 0;
	if (p == 1)
		return 0;
	if (me == 0) {
		tok = 1;
		int err = tc_send(proc, 1 % p, &tok, sizeof tok);
		if (err)
			return err;
		err = tc_recv(proc, p - 1, &tok, sizeof tok, NULL);
		return err ? err : (tok == p ? 0 : TC_EINVAL);
	}
	int err = tc_recv(proc, me - 1, &tok, sizeof tok, NULL);
	if (err)
		return err;
	tok++;
	return tc_send(proc, (me + 1) % p, &tok, sizeof tok);
}

Test(team, sizes_from_1_to_1024_run, .timeout = 120)
{
	int ps[] = {1, 2, 3, 64, 257, 1024};
	for (int i = 0; i < 6; i++) {
		char spec[32];
		snprintf(spec, sizeof spec, "ring:%d", ps[i]);
		struct tc_team *t = make(spec, 0);
		cr_assert_eq(tc_team_size(t), ps[i]);
		int err = tc_run(t, ring_token_fn, NULL);
		cr_assert_eq(err, 0, "ring:%d: %s", ps[i], tc_strerror(err));
		tc_team_destroy(t);
	}
}

Test(team, memory_grows_with_links_not_p_squared, .timeout = 60)
{
	struct tc_team_info a, b, c;
	struct tc_team *t1 = make("ring:256", 0), *t2 = make("ring:1024", 0),
	               *t3 = make("hypercube:10", 0);
	tc_team_get_info(t1, &a);
	tc_team_get_info(t2, &b);
	tc_team_get_info(t3, &c);
	cr_assert_eq(a.channels, 512);
	cr_assert_eq(b.channels, 2048);
	cr_assert_eq(c.channels, 10240);
	/* Four times the links, about four times the memory (not sixteen). */
	double r = (double)b.memory_bytes / (double)a.memory_bytes;
	cr_assert(r > 3.5 && r < 4.5, "ratio %.2f", r);
	cr_assert(c.memory_bytes < (size_t)c.channels * (c.ring_bytes + 1024) + (1u << 20));
	cr_assert(c.memory_bytes > (size_t)c.channels * c.ring_bytes);
	tc_team_destroy(t1);
	tc_team_destroy(t2);
	tc_team_destroy(t3);
}

struct pin_arg {
	int *cpu;
};

static int pin_fn(struct tc_proc *proc, void *argp)
{
	struct pin_arg *a = argp;
	cpu_set_t set;
	CPU_ZERO(&set);
	pthread_getaffinity_np(pthread_self(), sizeof set, &set);
	a->cpu[tc_rank(proc)] = CPU_COUNT(&set) == 1 ? sched_getcpu() : -1;
	return 0;
}

Test(team, ranks_pinned_round_robin_over_allowed_cpus, .timeout = 60)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof set, &set);
	int cpus[CPU_SETSIZE], n = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	struct tc_team *t = make("complete:5", 0);
	int got[5];
	struct pin_arg a = {got};
	cr_assert_eq(tc_run(t, pin_fn, &a), 0);
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	for (int r = 0; r < 5; r++) {
		/* Fibres: blocks of consecutive ranks per CPU (the k-th CPU
		 * runs ranks k p / m .. (k + 1) p / m - 1, m = min(CPUs, p)). */
		int m = n < 5 ? n : 5, k = 0;
		while (k + 1 < m && (k + 1) * 5 / m <= r)
			k++;
		int want = info.exec == TC_EXEC_FIBRES ? cpus[k] : cpus[r % n];
		cr_assert_eq(got[r], want, "rank %d on cpu %d", r, got[r]);
	}
	tc_team_destroy(t);
}

/* ---- attach: threads the program already has become ranks -------------- */

struct att {
	struct tc_team *team;
	int rank;
	int err;
	long sum;
};

static void *att_main(void *argp)
{
	struct att *a = argp;
	struct tc_proc *proc;
	a->err = tc_attach(a->team, a->rank, &proc);
	if (a->err)
		return NULL;
	/* star:4: the hub gathers one value from each leaf. */
	if (a->rank == 0) {
		for (int r = 1; r < 4 && !a->err; r++) {
			long v;
			a->err = tc_recv(proc, r, &v, sizeof v, NULL);
			a->sum += v;
		}
	} else {
		long v = a->rank * 10;
		a->err = tc_send(proc, 0, &v, sizeof v);
	}
	if (!a->err)
		a->err = tc_detach(proc);
	return NULL;
}

Test(team, attach_existing_threads, .timeout = 60)
{
	struct tc_team *t = make("star:4", 0);
	pthread_t th[4];
	struct att a[4];
	for (int r = 0; r < 4; r++) {
		a[r] = (struct att){.team = t, .rank = r};
		pthread_create(&th[r], NULL, att_main, &a[r]);
	}
	for (int r = 0; r < 4; r++)
		pthread_join(th[r], NULL);
	for (int r = 0; r < 4; r++)
		cr_assert_eq(a[r].err, 0, "rank %d: %s", r, tc_strerror(a[r].err));
	cr_assert_eq(a[0].sum, 60);
	/* Ranks are free again: a tc_run works (the ring's messages between
	 * leaves go through the hub's route). */
	cr_assert_eq(tc_run(t, ring_token_fn, NULL), 0);
	tc_team_destroy(t);
}

Test(team, attach_errors, .timeout = 30)
{
	struct tc_team *t = make("chain:3", 0);
	struct tc_proc *p0, *again;
	cr_assert_eq(tc_attach(t, 3, &p0), TC_ERANK);
	cr_assert_eq(tc_attach(t, -1, &p0), TC_ERANK);
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	cr_assert_eq(tc_rank(p0), 0);
	cr_assert_eq(tc_size(p0), 3);
	cr_assert_eq(tc_attach(t, 0, &again), TC_EBUSY);
	cr_assert_eq(tc_run(t, ring_token_fn, NULL), TC_EBUSY, "a rank is attached");
	/* A pending nonblocking send keeps the rank attached. */
	tc_request req;
	int v = 5;
	cr_assert_eq(tc_isend(p0, 1, &v, sizeof v, &req), 0);
	cr_assert_eq(tc_detach(p0), 0, "an eager send is complete at once");
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	int big[8];
	cr_assert_eq(tc_irecv(p0, 1, big, sizeof big, &req), 0);
	cr_assert_eq(tc_detach(p0), TC_EPENDING);
	tc_team_destroy(t);
}

/* Rank *arg makes a call that fails with a detail (a send's tag out of
 * range: TC_EINVAL), the next rank fails without one (TC_ERANK), the
 * others return 0. */
static int one_rank_fails(struct tc_proc *proc, void *arg)
{
	const int *failer = arg;
	int v = 7;
	if (tc_rank(proc) == *failer)
		return tc_send_tag(proc, 0, -5, &v, sizeof v);
	if (tc_rank(proc) == *failer + 1)
		return TC_ERANK;
	return 0;
}

/* tc_run returns a rank's error with what that rank's failing call said,
 * named by its rank, on threads and fibres; a later clean run clears it. */
Test(team, run_error_carries_the_rank_detail, .timeout = 30)
{
	for (int e = 0; e < 2; e++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = "complete:4";
		cfg.exec = e ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
		cfg.timeout_ms = 20000;
		struct tc_team *t = NULL;
		cr_assert_eq(tc_team_create(&cfg, &t), 0);
		int failer = 1, err = tc_run(t, one_rank_fails, &failer);
		/* Rank 2's TC_ERANK may come first in time: then no detail. */
		if (err == TC_EINVAL)
			cr_assert(!strncmp(tc_error_detail(), "rank 1: ", 8) &&
			                  strstr(tc_error_detail(), "tag -5"),
			          "exec %d: '%s'", e, tc_error_detail());
		else
			cr_assert(err == TC_ERANK && !*tc_error_detail(), "exec %d: %s, '%s'", e,
			          tc_err_name(err), tc_error_detail());
		failer = 2; /* rank 2 fails with the detail, rank 3 without */
		err = tc_run(t, one_rank_fails, &failer);
		cr_assert(err == TC_EINVAL ? !strncmp(tc_error_detail(), "rank 2: ", 8)
		                           : err == TC_ERANK && !*tc_error_detail(),
		          "exec %d: %s, '%s'", e, tc_err_name(err), tc_error_detail());
		failer = 8; /* nobody */
		cr_assert_eq(tc_run(t, one_rank_fails, &failer), 0);
		cr_assert(!*tc_error_detail(), "a clean run: '%s'", tc_error_detail());
		tc_team_destroy(t);
	}
}

Test(team, config_errors, .timeout = 30)
{
	struct tc_team_config cfg;
	struct tc_team *t = NULL;
	tc_team_config_default(&cfg);
	cr_assert_eq(tc_team_create(NULL, &t), TC_EINVAL);
	cr_assert_eq(tc_team_create(&cfg, NULL), TC_EINVAL);
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL, "no topology and p = 0");
	cfg.topology = "ring:x";
	cr_assert_eq(tc_team_create(&cfg, &t), TC_ETOPO);
	cfg.topology = "ring:8";
	cfg.p = 7;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL, "p disagrees with the topology");
	cfg.p = 0;
	cfg.ring_bytes = 64;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL, "ring of one line");
	cfg.ring_bytes = 1024;
	cfg.packet_bytes = 4096;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL, "packet larger than the ring");
	cfg.packet_bytes = 0;
	cfg.wait = (enum tc_wait_policy)42;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL);
	cr_assert_null(t);
	/* The default topology is the complete graph. */
	tc_team_config_default(&cfg);
	cfg.p = 6;
	cr_assert_eq(tc_team_create(&cfg, &t), 0);
	cr_assert_eq(tc_topo_kind(tc_team_topo(t)), TC_TOPO_COMPLETE);
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	cr_assert_eq(info.channels, 30);
	tc_team_destroy(t);
}

Test(team, auto_policy_never_spins_when_oversubscribed, .timeout = 30)
{
	struct tc_team_info info;
	struct tc_team *t = make("ring:64", 0);
	tc_team_get_info(t, &info);
	cr_assert(info.oversubscribed || info.cpus >= 64);
	if (info.oversubscribed)
		cr_assert_eq(info.spin_ns, 0);
	tc_team_destroy(t);
	t = make("chain:1", 0);
	tc_team_get_info(t, &info);
	cr_assert_not(info.oversubscribed);
	if (info.exec == TC_EXEC_THREADS) {
		cr_assert_gt(info.spin_ns, 0);
		/* A rank with its own core keeps yielding (a spin that gives the
		 * core away) for a millisecond before it sleeps: a sleep costs
		 * that much on a VM with many CPUs (lib/core/team.c). */
		cr_assert_geq(info.yield_ns, 1000000u);
	} else {
		cr_assert_eq(info.spin_ns, 0, "a fibre never spins (TC_EXEC=fibres)");
	}
	tc_team_destroy(t);
}
