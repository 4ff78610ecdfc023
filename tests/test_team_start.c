/* SPDX-License-Identifier: MIT */
/*
 * tests/test_team_start.c - what a team is at a start and at its end: a
 * message left unreceived in one run is not delivered in the next (tc_run
 * and attached ranks), a rank that never attaches makes the waits of the
 * others fail after attach_timeout_ms instead of hanging, tc_team_destroy
 * refuses a team still in use, tc_team_create says which field it refuses,
 * and the memory estimate holds what a run really holds.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TC_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TC_TEST_SANITIZED 1
#endif
#endif
#ifndef TC_TEST_SANITIZED
#define TC_TEST_SANITIZED 0
#endif

static struct tc_team *make_cfg(const struct tc_team_config *cfg)
{
	struct tc_team *t = NULL;
	int err = tc_team_create(cfg, &t);
	cr_assert_eq(err, 0, "%s: %s", tc_strerror(err), tc_error_detail());
	return t;
}

static struct tc_team *make(const char *spec, enum tc_exec exec)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	cfg.timeout_ms = 20000; /* a regression fails instead of hanging */
	return make_cfg(&cfg);
}

/* ---- a message left in one run is not delivered in the next ----------- */

/* Rank 0 sends arg's byte; rank 1 receives it when *recv is set, else
 * returns at once (leaving it in the channel). */
struct msg_arg {
	char send;
	int recv;
	char got;
	size_t got_n;
	int rc[2];
};

static int msg_fn(struct tc_proc *proc, void *arg)
{
	struct msg_arg *a = arg;
	int me = tc_rank(proc), err = 0;
	if (me == 0)
		err = tc_send(proc, 1, &a->send, 1);
	else if (a->recv)
		err = tc_recv(proc, 0, &a->got, 1, &a->got_n);
	a->rc[me] = err;
	return err;
}

static int allreduce_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	int64_t v = tc_rank(proc) + 1, s = 0;
	int err = tc_allreduce(proc, &v, &s, 1, TC_INT64, TC_OP_SUM, NULL);
	if (!err && s != (int64_t)tc_size(proc) * (tc_size(proc) + 1) / 2)
		err = TC_EINVAL;
	return err;
}

static void leftover_runs(enum tc_exec exec)
{
	struct tc_team *t = make("complete:2", exec);
	struct msg_arg a = {.send = 'A', .recv = 0};
	cr_assert_eq(tc_run(t, msg_fn, &a), 0);
	/* The next run receives what is sent in it, not the leftover. */
	a = (struct msg_arg){.send = 'B', .recv = 1};
	cr_assert_eq(tc_run(t, msg_fn, &a), 0, "%d %d", a.rc[0], a.rc[1]);
	cr_assert_eq(a.got, 'B', "got '%c': the previous run's message", a.got);
	cr_assert_eq(a.got_n, 1);
	/* A leftover and then a collective in the next run (the mismatch
	 * check on): the collective is not disturbed by it. */
	a = (struct msg_arg){.send = 'C', .recv = 0};
	cr_assert_eq(tc_run(t, msg_fn, &a), 0);
	int err = tc_run(t, allreduce_fn, NULL);
	cr_assert_eq(err, 0, "allreduce after a leftover message: %s", tc_err_name(err));
	tc_team_destroy(t);
}

Test(team_start, leftover_message_dropped_threads, .timeout = 60)
{
	leftover_runs(TC_EXEC_THREADS);
}

Test(team_start, leftover_message_dropped_fibres, .timeout = 60)
{
	leftover_runs(TC_EXEC_FIBRES);
}

/* Attached ranks (one thread may attach several).  An attached run lasts
 * until every rank has attached and, nobody being attached, detached: a rank
 * that arrives after an early one left joins the same run and gets its
 * messages (threads reach a parallel region at different times), as does a
 * rank that leaves and comes back.  The next attach is a start: what the
 * last run left in the channels is gone. */
Test(team_start, attached_run_ends_when_every_rank_has_been_in, .timeout = 60)
{
	struct tc_team *t = make("complete:2", TC_EXEC_THREADS);
	struct tc_proc *p0, *p1;
	char c = 'A', got = 0;
	size_t n = 0;
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	cr_assert_eq(tc_send(p0, 1, &c, 1), 0); /* eager: in the channel */
	cr_assert_eq(tc_detach(p0), 0);
	/* Nobody attached, but rank 1 has not been in: the same run. */
	cr_assert_eq(tc_attach(t, 1, &p1), 0);
	cr_assert_eq(tc_recv(p1, 0, &got, 1, &n), 0);
	cr_assert_eq(got, 'A', "got '%c': the early rank's message was dropped", got);
	/* Rank 0 comes back while rank 1 stays: the same run. */
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	c = 'C';
	cr_assert_eq(tc_send(p0, 1, &c, 1), 0);
	cr_assert_eq(tc_detach(p0), 0);
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	cr_assert_eq(tc_recv(p1, 0, &got, 1, &n), 0);
	cr_assert_eq(got, 'C');
	c = 'X'; /* never received */
	cr_assert_eq(tc_send(p0, 1, &c, 1), 0);
	cr_assert_eq(tc_detach(p0), 0);
	cr_assert_eq(tc_detach(p1), 0);
	/* Every rank has been in and left: the next attach is a start. */
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	cr_assert_eq(tc_attach(t, 1, &p1), 0);
	c = 'B';
	cr_assert_eq(tc_send(p0, 1, &c, 1), 0);
	cr_assert_eq(tc_recv(p1, 0, &got, 1, &n), 0);
	cr_assert_eq(got, 'B', "got '%c': the previous run's message", got);
	cr_assert_eq(tc_detach(p0), 0);
	cr_assert_eq(tc_detach(p1), 0);
	/* And a collective after all that. */
	cr_assert_eq(tc_run(t, allreduce_fn, NULL), 0);
	cr_assert_eq(tc_team_destroy(t), 0);
}

/* ---- a rank that never attaches ---------------------------------------- */

static struct tc_test_wd wd = {.mu = PTHREAD_MUTEX_INITIALIZER};

struct att_arg {
	struct tc_team *team;
	int rank;
	int nthreads;
	pthread_barrier_t *bar; /* all threads attached (NULL: none) */
	int late_ms;            /* rank 1: sleep before sending to rank 0 */
	int rc;
};

static void *att_allreduce(void *argp)
{
	struct att_arg *a = argp;
	struct tc_proc *proc;
	a->rc = tc_attach(a->team, a->rank, &proc);
	if (a->rc)
		return NULL;
	if (a->bar)
		pthread_barrier_wait(a->bar);
	if (a->late_ms) {
		int v = 0;
		if (a->rank == 1) {
			struct timespec ts = {0, (long)a->late_ms * 1000000L};
			nanosleep(&ts, NULL);
			v = 9;
			a->rc = tc_send(proc, 0, &v, sizeof v);
		} else if (a->rank == 0) {
			a->rc = tc_recv(proc, 1, &v, sizeof v, NULL);
			if (!a->rc && v != 9)
				a->rc = TC_EINVAL;
		}
	} else {
		double x = a->rank, s = 0;
		a->rc = tc_allreduce(proc, &x, &s, 1, TC_DOUBLE, TC_OP_SUM, NULL);
	}
	int d = tc_detach(proc);
	if (!a->rc)
		a->rc = d;
	return NULL;
}

static void run_attached(struct tc_team *t, int nthreads, int late_ms, struct att_arg *a)
{
	pthread_t th[8];
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	for (int r = 0; r < nthreads; r++) {
		a[r] = (struct att_arg){.team = t,
		                        .rank = r,
		                        .nthreads = nthreads,
		                        .bar = late_ms ? &bar : NULL,
		                        .late_ms = late_ms};
		pthread_create(&th[r], NULL, att_allreduce, &a[r]);
	}
	for (int r = 0; r < nthreads; r++)
		pthread_join(th[r], NULL);
	pthread_barrier_destroy(&bar);
}

Test(team_start, attach_timeout_default_is_ten_seconds)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cr_assert_eq(cfg.attach_timeout_ms, 10000);
}

/* cfg.p = 4, three threads attach (OpenMP's num_threads(3)): the
 * collective fails after attach_timeout_ms instead of hanging, the report
 * names rank 3, and the next start with all four ranks works. */
Test(team_start, missing_rank_times_out_and_is_named, .timeout = 60)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.p = 4;
	cfg.attach_timeout_ms = 300;
	struct tc_team *t = make_cfg(&cfg);
	tc_team_set_watchdog(t, tc_test_wd_capture, &wd);
	wd.calls = 0;
	struct att_arg a[4];
	run_attached(t, 3, 0, a);
	int timed_out = 0;
	for (int r = 0; r < 3; r++) {
		cr_assert(a[r].rc == TC_ETIMEDOUT || a[r].rc == TC_EABORTED, "rank %d: %s", r,
		          tc_err_name(a[r].rc));
		timed_out += a[r].rc == TC_ETIMEDOUT;
	}
	cr_assert_geq(timed_out, 1);
	pthread_mutex_lock(&wd.mu);
	cr_assert_eq(wd.calls, 1);
	cr_assert_not_null(strstr(wd.text, "rank 3: not attached"), "%s", wd.text);
	cr_assert_not_null(strstr(wd.text, "1 rank never attached"), "%s", wd.text);
	pthread_mutex_unlock(&wd.mu);
	/* All four attach: a wait longer than attach_timeout_ms is not cut
	 * short once every rank is in (rank 1 sends 3x later). */
	run_attached(t, 4, 900, a);
	for (int r = 0; r < 4; r++)
		cr_assert_eq(a[r].rc, 0, "rank %d: %s", r, tc_err_name(a[r].rc));
	run_attached(t, 4, 0, a);
	for (int r = 0; r < 4; r++)
		cr_assert_eq(a[r].rc, 0, "rank %d: %s", r, tc_err_name(a[r].rc));
	cr_assert_eq(tc_team_destroy(t), 0);
}

/* ---- tc_team_destroy of a team in use ---------------------------------- */

static int destroy_inside_fn(struct tc_proc *proc, void *arg)
{
	_Atomic int *rc = arg;
	if (tc_rank(proc) == 0)
		atomic_store(rc, tc_team_destroy(tc_proc_team(proc)));
	return 0;
}

Test(team_start, destroy_refuses_a_team_in_use, .timeout = 30)
{
	struct tc_team *t = make("ring:3", TC_EXEC_THREADS);
	struct tc_proc *p2;
	cr_assert_eq(tc_attach(t, 2, &p2), 0);
	cr_assert_eq(tc_team_destroy(t), TC_EBUSY);
	cr_assert_not_null(strstr(tc_error_detail(), "rank 2"), "%s", tc_error_detail());
	cr_assert_not_null(strstr(tc_error_detail(), "attached"), "%s", tc_error_detail());
	/* Not freed: the rank still works, and detaches. */
	cr_assert_eq(tc_rank(p2), 2);
	cr_assert_eq(tc_detach(p2), 0);
	_Atomic int rc = 1;
	cr_assert_eq(tc_run(t, destroy_inside_fn, (void *)&rc), 0);
	cr_assert_eq(atomic_load(&rc), TC_EBUSY, "%s", tc_err_name(atomic_load(&rc)));
	cr_assert_eq(tc_team_destroy(t), 0);
	cr_assert_eq(tc_team_destroy(NULL), 0);
}

/* ---- tc_team_create says what it refuses ------------------------------- */

Test(team_start, create_names_the_bad_field)
{
	struct tc_team_config cfg;
	struct tc_team *t = NULL;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:4";
	cfg.p = 5;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL);
	cr_assert_not_null(strstr(tc_error_detail(), "p = 5"), "%s", tc_error_detail());
	cr_assert_not_null(strstr(tc_error_detail(), "4 nodes"), "%s", tc_error_detail());
	tc_team_config_default(&cfg);
	cfg.p = 2;
	cfg.stack_bytes = 1000;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL);
	cr_assert_not_null(strstr(tc_error_detail(), "stack_bytes"), "%s", tc_error_detail());
	tc_team_config_default(&cfg);
	cfg.p = 2;
	cfg.ring_bytes = 8;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL);
	cr_assert_not_null(strstr(tc_error_detail(), "ring_bytes"), "%s", tc_error_detail());
	tc_team_config_default(&cfg);
	cfg.p = 2;
	cfg.wait = (enum tc_wait_policy)42;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL);
	cr_assert_not_null(strstr(tc_error_detail(), "wait 42"), "%s", tc_error_detail());
	tc_team_config_default(&cfg);
	cfg.p = 2;
	cfg.model.tw_ns = -1;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_EINVAL);
	cr_assert_not_null(strstr(tc_error_detail(), "model"), "%s", tc_error_detail());
	cr_assert_eq(tc_team_create(NULL, &t), TC_EINVAL);
	cr_assert_not_null(strstr(tc_error_detail(), "cfg"), "%s", tc_error_detail());
	/* A team that is created leaves no stale detail behind. */
	tc_team_config_default(&cfg);
	cfg.p = 2;
	cr_assert_eq(tc_team_create(&cfg, &t), 0);
	cr_assert_str_eq(tc_error_detail(), "");
	tc_team_destroy(t);
}

/* ---- the memory estimate ------------------------------------------------ */

static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t n = strlen(key);
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, n)) {
			v = atol(line + n);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

/* The peak resident size starts again from the current one (Linux 4.0). */
static int reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (!f)
		return -1;
	int ok = fputs("5", f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* What a team and a run of it hold (the peak resident size over the
 * process's before it), against tc_team_info.memory_estimate_bytes: the
 * estimate is at least that, whatever else the machine runs.  Where the
 * estimate counted channels as a ring and a cache line, complete:256's
 * team held 99 MB against its 72 MB. */
static void estimate_holds(const char *spec, enum tc_exec exec)
{
	if (TC_TEST_SANITIZED)
		return; /* shadow memory and quarantines are no run's */
	long before = status_kb("VmRSS:");
	cr_assert_gt(before, 0);
	if (reset_peak() != 0)
		return; /* no peak to read */
	struct tc_team *t = make(spec, exec);
	cr_assert_eq(tc_run(t, allreduce_fn, NULL), 0);
	long peak = status_kb("VmHWM:");
	struct tc_team_info ti;
	tc_team_get_info(t, &ti);
	unsigned long long held = (unsigned long long)(peak - before) * 1024;
	cr_assert_geq(ti.memory_estimate_bytes, held, "%s: estimate %zu KB, held %llu KB", spec,
	              ti.memory_estimate_bytes >> 10, held >> 10);
	cr_assert_geq(ti.memory_estimate_bytes, ti.memory_bytes);
	tc_team_destroy(t);
}

Test(team_start, memory_estimate_holds_complete_256_threads, .timeout = 120)
{
	estimate_holds("complete:256", TC_EXEC_THREADS);
}

Test(team_start, memory_estimate_holds_complete_256_fibres, .timeout = 120)
{
	estimate_holds("complete:256", TC_EXEC_FIBRES);
}

/* The refusal names its parts and suggests only what would help: rings of
 * 1 GiB on 65280 channels are refused on any machine, before anything is
 * allocated, and the stacks (256 KiB given) are not among the remedies. */
Test(team_start, memory_refusal_names_its_parts, .timeout = 30)
{
	struct tc_team_config cfg;
	struct tc_team *t = NULL;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:256";
	cfg.ring_bytes = (size_t)1 << 30;
	cfg.stack_bytes = (size_t)256 << 10;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_ELIMIT);
	const char *d = tc_error_detail();
	cr_assert_not_null(strstr(d, "65280 channels of 1073741824-byte rings"), "%s", d);
	cr_assert_not_null(strstr(d, "memory available"), "%s", d);
	cr_assert_null(strstr(d, "stack"), "%s", d);
	/* The smallest ring is not suggested again. */
	cfg.ring_bytes = 0;
	cfg.trace_events = (size_t)1 << 32;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_ELIMIT);
	d = tc_error_detail();
	cr_assert_not_null(strstr(d, "trace events"), "%s", d);
	cr_assert_null(strstr(d, "ring_bytes"), "%s", d);
}

/* The address-space refusal says what the stacks are and suggests smaller
 * ones only where they are the bulk of it: otherwise it does not speak of
 * stacks at all (the CLI adds "--stack 256K" to a refusal that does). */
Test(team_start, address_space_refusal_names_the_stacks, .timeout = 30)
{
	if (TC_TEST_SANITIZED)
		return; /* the sanitizers reserve terabytes of address space */
	struct rlimit old;
	cr_assert_eq(getrlimit(RLIMIT_AS, &old), 0);
	long vm = status_kb("VmSize:");
	cr_assert_gt(vm, 0);
	struct rlimit lim = old;
	lim.rlim_cur = (rlim_t)(vm + (64 << 10)) * 1024; /* 64 MB more */
	if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur)
		return;
	struct tc_team_config cfg;
	struct tc_team *t = NULL;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:64";
	cfg.exec = TC_EXEC_THREADS;
	cfg.stack_bytes = (size_t)8 << 20;
	cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
	int e1 = tc_team_create(&cfg, &t);
	char d1[640];
	snprintf(d1, sizeof d1, "%s", tc_error_detail());
	cfg.stack_bytes = (size_t)64 << 10;
	int e2 = tc_team_create(&cfg, &t);
	char d2[640];
	snprintf(d2, sizeof d2, "%s", tc_error_detail());
	setrlimit(RLIMIT_AS, &old);
	cr_assert_eq(e1, TC_ELIMIT, "%s", d1);
	cr_assert_not_null(strstr(d1, "64 thread stacks of 8192 KiB"), "%s", d1);
	cr_assert_not_null(strstr(d1, "smaller stacks"), "%s", d1);
	cr_assert_eq(e2, TC_ELIMIT, "%s", d2);
	cr_assert_not_null(strstr(d2, "64 threads (64 KiB each)"), "%s", d2);
	cr_assert_null(strstr(d2, "stack"), "%s", d2); /* nothing a tool reads as "shrink them" */
}

/* ---- a family and p: the team sizes the topology --------------------------- */

static int size_fn(struct tc_proc *proc, void *arg)
{
	int *sizes = arg;
	sizes[tc_rank(proc)] = tc_size(proc);
	int32_t one = 1, sum = 0;
	int err = tc_allreduce(proc, &one, &sum, 1, TC_INT32, TC_OP_SUM, NULL);
	return err ? err : (sum == tc_size(proc) ? 0 : TC_EINVAL);
}

Test(team_start, family_and_p)
{
	static const struct {
		const char *family;
		int p;
		const char *spec; /* what the team is built on */
		int err;
		const char *why; /* a word of the detail on refusal */
	} cases[] = {
	        {"ring", 6, "ring:6", 0, NULL},
	        {"hypercube", 8, "hypercube:3", 0, NULL},
	        {"torus", 12, "torus:3x4", 0, NULL},
	        {"mesh", 16, "mesh:4x4", 0, NULL},
	        {"tree:2", 5, "tree:2:5", 0, NULL},
	        {"hypercube", 12, NULL, TC_ETOPO, "power of two"},
	        {"torus", 7, NULL, TC_ETOPO, "prime"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tc_team_config cfg;
		struct tc_team *t = NULL;
		tc_team_config_default(&cfg);
		cfg.topology = cases[i].family;
		cfg.p = cases[i].p;
		int err = tc_team_create(&cfg, &t);
		cr_assert_eq(err, cases[i].err, "%s p = %d: %s (%s)", cases[i].family, cases[i].p,
		             tc_strerror(err), tc_error_detail());
		if (err) {
			cr_assert_not_null(strstr(tc_error_detail(), cases[i].why), "%s",
			                   tc_error_detail());
			continue;
		}
		struct tc_team_info info;
		tc_team_get_info(t, &info);
		cr_assert_eq(info.p, cases[i].p);
		char spec[64];
		cr_assert_geq(tc_topo_spec(tc_team_topo(t), spec, sizeof spec), 0);
		cr_assert_str_eq(spec, cases[i].spec);
		int sizes[16] = {0};
		cr_assert_eq(tc_run(t, size_fn, sizes), 0, "%s", cases[i].spec);
		for (int r = 0; r < cases[i].p; r++)
			cr_assert_eq(sizes[r], cases[i].p);
		cr_assert_eq(tc_team_destroy(t), 0);
	}
}
