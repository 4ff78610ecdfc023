/* SPDX-License-Identifier: MIT */
/*
 * lib/core/team.c - the team object: creation (channels, procs, the memory
 * estimate), destruction, queries, abort, statistics.  A rank's clock and
 * its emulated sleeps are lib/core/clock.c.
 * Starting and joining ranks (tc_run, tc_attach, tc_detach) is
 * lib/run/run.c; the watchdog's report is lib/p2p/watchdog.c.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/error_detail.h"
#include "core/internal.h"
#include "fibre/runq.h"
#include "model/calibration.h"
#include "topocoll/calibrate.h"

/* Default ring: 16 KiB per channel while the rings of the team stay under
 * TC__RING_BUDGET, halving for larger teams down to TC__RING_MIN. */
#define TC__RING_DEFAULT (16u << 10)
#define TC__RING_MIN (1u << 10)
#define TC__RING_BUDGET ((size_t)64 << 20)
/* Default packet payload (mu), capped at half the ring. */
#define TC__PACKET_DEFAULT 4096u
/* Messages of at least this size go single-copy by default (lib/core/chan.h
 * says why). */
#define TC__SINGLE_COPY_DEFAULT TC__CHAN_SINGLE_COPY_MIN
/*
 * Waiting thresholds.  A sleep and wake-up costs 20-30 us on a 2-CPU VM, so a
 * rank that has its own core spins about that long (the classic competitive
 * rule: never waste more than the sleep would cost), then yields: on a core
 * of its own sched_yield returns at once, so yielding is a spin that hands
 * the core to any other runnable thread.  It yields for up to 1 ms before it
 * sleeps, because on a VM with many CPUs a sleep costs far more than on two:
 * on a 16-CPU KVM guest, a ring allreduce of 64 KiB at p = 16 (30 rounds)
 * took 2.5-3.3 ms per call when waiting ranks slept after 20 us of yielding
 * and 66 us when they kept yielding (54 us spinning): a vCPU that halts is
 * not running when its rank is awaited, and every round behind it waits.
 * When ranks outnumber CPUs a spinning rank steals the CPU from the rank it
 * waits for, so it never spins: it yields (sched_yield hands the core to a
 * runnable peer for about a context switch, 1-3 us) for up to 1 ms, then
 * sleeps.  The 1 ms is measured: a dissemination barrier of 64 ranks on 2
 * cores takes 742 us with 50 us of yielding, 433 us with 300 us and 333 us
 * with 1 ms (futex wake-ups of 64 threads cost more than the yields they
 * replace); a rank with nothing to do still sleeps after 1 ms.  One wait is
 * known to end: a rank with its own core whose long single-copy message a
 * peer is copying spins for as long as the copy can take (lib/p2p/p2p.c; a
 * 1 MiB broadcast at p = 2 slept in ~10% of its calls after 20 us, each
 * sleep a wake-up on the critical path).  The thresholds count the time
 * since the wait last made progress, not since it began
 * (lib/p2p/progress.c, tc__progress_mark): a collective is one wait.
 */
#define TC__SPIN_NS_DEFAULT 20000u
#define TC__YIELD_NS_DEDICATED 1000000u
#define TC__YIELD_NS_OVERSUB 1000000u
/* The largest team that gets the asymmetric fence (tc_team_create). */
#define TC__ASYM_FENCE_MAX_P 4
/*
 * Fibres (README "Fibres"): a fibre never spins (its peer may be a fibre of
 * the same CPU, which cannot run meanwhile); a yield switches to the CPU's
 * next ready rank, and parking costs the Dekker pair's fences and hints and
 * a switch, unless the CPU then has nothing ready (its thread then polls
 * for 20 us before it sleeps on its futex, lib/fibre/runq.c).  A waiting
 * fibre yields once (TC__YIELD_NS_FIBRE: the first look at the clock is
 * past it), which lets a peer of its CPU answer at the price of a switch,
 * then parks: yielding longer makes every step of a chain of hand-offs
 * (ring barrier) wait for a sweep over all the CPU's yielding ranks.
 * Measured on a loaded machine (load 50 on 2 CPUs: CPU time per call, the
 * wall time meaningless), p = 64, yielding 1 ns / 5 us / 50 us:
 * ring:64 barrier 426 / 477 / 517 us, hypercube:6 allreduce 83 / 132 /
 * 104 us, complete:64 allreduce 32 / 76 / 62 us, dissemination barrier
 * 78 / 80 / 105 us.  The default stack of a rank fibre is
 * TC__FIBRE_STACK_RANK (the deepest rank function of the suites runs in
 * it, tests/test_fibre_ranks.c).
 */
#define TC__YIELD_NS_FIBRE 1u
#define TC__FIBRE_STACK_RANK ((size_t)256 << 10)

/* How long the ranks of an attached team wait for one that has not
 * attached before a wait fails (tc_team_config_default's attach_timeout_ms). */
#define TC__ATTACH_TIMEOUT_MS_DEFAULT 10000u

void tc_team_config_default(struct tc_team_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof *cfg);
	tc_model_default(&cfg->model);
	cfg->attach_timeout_ms = TC__ATTACH_TIMEOUT_MS_DEFAULT;
}

/* ms in ns; beyond UINT64_MAX ns (584 years) none (0). */
static uint64_t tc__ms_to_ns(uint64_t ms)
{
	return ms > UINT64_MAX / 1000000u ? 0 : ms * 1000000u;
}

/* The CPUs ranks are pinned to, in placement order (lib/core/place.h), and
 * the machine's structure; with TC_HWLOC_XML, the structure and the
 * reported placement are the file's while the CPUs stay this machine's. */
static int tc__cpu_list(struct tc_team *t)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	/* The main thread's set (pid = its tid): the process's CPUs, even when the
	 * calling thread was pinned. */
	if (sched_getaffinity(getpid(), sizeof set, &set) != 0)
		return TC_ESYS;
	struct tc__machine here;
	int err = tc__machine_probe(&set, NULL, &here);
	if (err)
		return err;
	if (here.nslots < 1) {
		tc__machine_free(&here);
		return TC_ESYS;
	}
	int n = here.nslots;
	t->cpu_list = malloc((size_t)n * sizeof *t->cpu_list);
	if (!t->cpu_list) {
		tc__machine_free(&here);
		return TC_ENOMEM;
	}
	for (int k = 0; k < n; k++)
		t->cpu_list[k] = here.slot[k].pu;
	const char *xml = getenv("TC_HWLOC_XML");
	if (xml && *xml) {
		tc__machine_free(&here);
		if ((err = tc__machine_probe(NULL, xml, &here)) != 0)
			return err;
	}
	t->machine = here;
	return n;
}

static uint64_t tc__pow2_at_least(uint64_t v)
{
	uint64_t r = 1;
	while (r < v)
		r <<= 1;
	return r;
}

uint64_t tc__stamp_new(void)
{
	static _Atomic uint64_t made;
	/* The n-th multiple of an odd constant: distinct for 2^64 calls, and
	 * not a value (0, a small count, a pointer) that storage never used
	 * for a request is likely to hold. */
	const uint64_t n = atomic_fetch_add_explicit(&made, 1, memory_order_relaxed) + 1;
	return n * UINT64_C(0x9e3779b97f4a7c15);
}

void tc__team_free(struct tc_team *t)
{
	if (!t)
		return;
	/* A root's sub-teams, children before their parents. */
	while (t->sub_head) {
		struct tc_team *last = t->sub_head, *before = NULL;
		while (last->sub_next) {
			before = last;
			last = last->sub_next;
		}
		if (before)
			before->sub_next = NULL;
		else
			t->sub_head = NULL;
		tc__team_free(last);
	}
	free(t->parent_rank);
	tc__team_groups_clear(t);
	pthread_mutex_destroy(&t->group_mu);
	pthread_mutex_destroy(&t->sub_mu);
	if (t->chans)
		for (long i = 0; i < t->nchans; i++)
			tc__chan_fini(&t->chans[i]);
	free(t->chans);
	if (t->ring_store)
		munmap(t->ring_store, t->ring_store_bytes);
	/* What the ranks' callers left, first: it may hold cache entries. */
	if (t->procs)
		for (int r = 0; r < t->p; r++)
			while (t->procs[r].owned) {
				struct tc__owned *o = t->procs[r].owned;
				t->procs[r].owned = o->next;
				o->release(o);
			}
	if (t->procs)
		for (int r = 0; r < t->p; r++) {
			if (t->procs[r].ports)
				tc__proc_clear_ports(&t->procs[r]); /* frees messages taken aside */
			for (int k = 0; k < TC__SCRATCH_SLOTS; k++)
				free(t->procs[r].scratch[k].p);
			free(t->procs[r].ev);
			if (t->procs[r].ext_free)
				t->procs[r].ext_free(t->procs[r].ext);
		}
	free(t->procs);
	tc__runq_destroy(t->runq);
	if (t->shared_free)
		t->shared_free(t->shared);
	pthread_mutex_destroy(&t->shared_mu);
	free(t->hot_store);
	free(t->cpu_list);
	tc__machine_free(&t->machine);
	free(t->place);
	free(t->cal);
	pthread_mutex_destroy(&t->attach_mu);
	tc_topo_destroy(t->topo);
	free(t);
}

/* A number from a /proc file, or -1. */
static long long tc__proc_number(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	long long v = -1;
	size_t kl = key ? strlen(key) : 0;
	while (fgets(line, sizeof line, f))
		if (!key || !strncmp(line, key, kl)) {
			v = strtoll(line + kl, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * What a team holds, for the check against the memory available
 * (tc__team_fits) and tc_team_info.memory_estimate_bytes.  Measured on
 * complete:256, 512 and 1024 and ring:1024 (1 KiB rings; threads and
 * fibres): a channel costs its struct (six cache lines: head, tail and the
 * hints apart) beside its ring, and TC__RING_SLACK more (what its ring's
 * aligned allocation took when each ring was one; the rings are now one
 * mapping whose pages count once a channel touches them, so the estimate,
 * which counts them all, is the most a run can hold); the topology holds
 * an arc's ints twice over; a rank in a run touches a few KiB of stack
 * (thread or fibre), its grow-only scratch and its plans: 8-20 KiB each
 * for an 8-byte allreduce,
 * TC__RUN_RANK_BYTES allowed.  A collective's first call builds and prices
 * schedules (AUTO weighs candidates of up to 2^20 transfers, lib/coll/
 * select.c) and keeps one: a schedule of p^2 transfers, as an all-to-all's,
 * at TC__SCHED_XFER_BYTES a transfer (schedule, simulation, per-rank
 * plans), up to AUTO's limit (ring:1024, an 8-byte allreduce by AUTO on
 * threads: 200 MB).  The figures were 99 MB for a team of complete:256
 * whose old estimate was 72 MB (1.5 KB a channel, not 1.1), which is how
 * complete:4096 passed at 18.4 GB and held over 23.8 GB.  A margin of an
 * eighth and TC__RUN_FIXED_BYTES (the process, malloc's arenas) come on
 * top.  The schedules a program's calls keep are bounded apart
 * (tc_team_info.sched_cache_bytes, lib/coll/cache.c).
 */
#define TC__RING_SLACK 64u
#define TC__RUN_RANK_BYTES ((size_t)64 << 10)
#define TC__SCHED_XFER_BYTES 256u
#define TC__SCHED_XFER_MAX ((unsigned long long)1 << 20)
#define TC__RUN_FIXED_BYTES ((unsigned long long)32 << 20)

struct tc__estimate {
	unsigned long long chans; /* structs, rings and their allocations' slack */
	unsigned long long ranks; /* procs, ports, the topology, a run's stacks,
	                              scratch and plans */
	unsigned long long trace;
	unsigned long long sched; /* a collective's schedules */
	unsigned long long total; /* the four, an eighth and the fixed part */
};

static void tc__team_estimate(const struct tc_team *t, struct tc__estimate *e)
{
	const unsigned long long p = (unsigned long long)t->p, n = (unsigned long long)t->nchans;
	/* trace_cap <= 2^32 and p <= 2^20, so the products fit. */
	e->chans = n * (sizeof(struct tc__chan) + t->ring_bytes + TC__RING_SLACK);
	e->ranks = sizeof *t + p * (sizeof(struct tc_proc) + TC__RUN_RANK_BYTES) + t->hot_bytes +
	           n * 2 * sizeof(int) + (unsigned long long)t->cpus * sizeof(int);
	e->trace = p * (unsigned long long)t->trace_cap * sizeof(struct tc_event);
	e->sched = (p * p < TC__SCHED_XFER_MAX ? p * p : TC__SCHED_XFER_MAX) * TC__SCHED_XFER_BYTES;
	unsigned long long sum = e->chans + e->ranks + e->trace + e->sched;
	e->total = sum + sum / 8 + TC__RUN_FIXED_BYTES;
}

/*
 * Whether the team can exist on this machine, checked before anything
 * large is allocated: what the team and a run of it hold (tc__team_estimate,
 * with its margin) against the memory available, and (for tc_run) its
 * threads against the system's and the user's limits and their stacks
 * against the address space.  Says which limit, by how much and what would
 * help (tc_error_detail()).  The kernel's out-of-memory killer never gets
 * to decide.
 */
static int tc__team_fits(const struct tc_team *t)
{
	const unsigned long long p = (unsigned long long)t->p;
	struct tc__estimate est;
	tc__team_estimate(t, &est);
	const unsigned long long need = est.total;
	long long avail_kb = tc__proc_number("/proc/meminfo", "MemAvailable:");
	if (avail_kb > 0 && need > (unsigned long long)avail_kb * 1024) {
		/* What it is made of, and what would help: only what is not at
		 * its smallest already. */
		char parts[160] = "", help[160];
		if (est.trace)
			snprintf(parts, sizeof parts, ", %zu trace events per rank %llu MB",
			         t->trace_cap, est.trace >> 20);
		int k = snprintf(help, sizeof help, "fewer ranks, a sparser topology");
		if (t->ring_bytes > 2 * TC__LINE && est.chans > need / 4)
			k += snprintf(help + k, sizeof help - (size_t)k,
			              ", smaller channels (ring_bytes, at least %d)", 2 * TC__LINE);
		if (est.trace > need / 4)
			snprintf(help + k, sizeof help - (size_t)k,
			         ", fewer trace events "
			         "(trace_events)");
		tc__set_detail("a team of %d ranks would hold about %llu MB, %.1fx the %lld MB of "
		               "memory available: %ld channels of %zu-byte rings %llu MB, the ranks "
		               "and what a run adds %llu MB, schedules %llu MB%s, and a margin of "
		               "1/8 + %llu MB; try %s",
		               t->p, need >> 20, (double)need / ((double)avail_kb * 1024),
		               avail_kb >> 10, t->nchans, t->ring_bytes, est.chans >> 20,
		               est.ranks >> 20, est.sched >> 20, parts, TC__RUN_FIXED_BYTES >> 20, help);
		return TC_ELIMIT;
	}
	long long tmax = tc__proc_number("/proc/sys/kernel/threads-max", NULL);
	struct rlimit rl;
	long long nproc =
	        getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && geteuid() != 0
	                ? (long long)rl.rlim_cur
	                : -1;
	long long lim = tmax > 0 && (nproc < 0 || tmax < nproc) ? tmax : nproc;
	bool fibres = t->exec == TC_EXEC_FIBRES; /* one thread per CPU */
	if (lim > 0 && (long long)p > lim && !fibres) {
		tc__set_detail("a team of %d ranks needs %d threads, %.1fx the %lld the system "
		               "allows (%s): fewer ranks",
		               t->p, t->p, (double)p / (double)lim, lim,
		               lim == tmax ? "/proc/sys/kernel/threads-max" : "RLIMIT_NPROC");
		return TC_ELIMIT;
	}
	size_t stack = fibres ? t->fibre_stack : t->stack_bytes;
	if (!stack) {
		pthread_attr_t attr;
		if (pthread_attr_init(&attr) == 0) {
			pthread_attr_getstacksize(&attr, &stack);
			pthread_attr_destroy(&attr);
		}
	}
	/* Against what the process does not map yet. */
	long long vm_kb = tc__proc_number("/proc/self/status", "VmSize:");
	unsigned long long in_use = vm_kb > 0 ? (unsigned long long)vm_kb * 1024 : 0;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    p * stack + need + in_use > (unsigned long long)rl.rlim_cur) {
		/* Smaller stacks help only where they are a good part of it; the
		 * word "stack" only then (a tool that sees it may suggest a
		 * smaller stack size). */
		bool stacks = p * stack > need / 2 && stack > (size_t)64 << 10;
		char what[96];
		snprintf(what, sizeof what,
		         stacks ? "%d %s stacks of %zu KiB each (stack_bytes)" : "%d %ss (%zu KiB each)",
		         t->p, fibres ? "fibre" : "thread", stack >> 10);
		tc__set_detail("a team of %d ranks needs %llu MB of address space; with the %llu MB "
		               "in use that is %.1fx RLIMIT_AS (%llu MB): %llu MB for %s and %llu MB "
		               "for the team; try %s",
		               t->p, (p * stack + need) >> 20, in_use >> 20,
		               (double)(p * stack + need + in_use) / (double)rl.rlim_cur,
		               (unsigned long long)rl.rlim_cur >> 20, (p * stack) >> 20, what,
		               need >> 20,
		               stacks ? "smaller stacks than that, or fewer ranks"
		                      : "fewer ranks or a sparser topology, or raise RLIMIT_AS");
		return TC_ELIMIT;
	}
	return TC_OK;
}

int tc_team_create(const struct tc_team_config *cfg, struct tc_team **out)
{
	tc__clear_detail();
	if (out)
		*out = NULL; /* on every error: the caller's tc_team_destroy(*out) is a no-op */
	if (!cfg || !out) {
		tc__set_detail("tc_team_create: %s is NULL", !cfg ? "cfg" : "out");
		return TC_EINVAL;
	}
	tc__set_detail("%s", "");
	tc__wait_global_init();

	struct tc_team *t = calloc(1, sizeof *t);
	if (!t)
		return TC_ENOMEM;
	pthread_mutex_init(&t->shared_mu, NULL);
	pthread_mutex_init(&t->attach_mu, NULL);
	pthread_mutex_init(&t->sub_mu, NULL);
	pthread_mutex_init(&t->group_mu, NULL);
	int err = TC_OK;
	if (!cfg->topology && cfg->p < 1) {
		tc__set_detail("tc_team_create: no topology and p = %d: give p >= 1 "
		               "(a complete graph of p ranks) or a topology",
		               cfg->p);
		err = TC_EINVAL;
		goto fail;
	}
	/* A full spec, or a family ("ring", "hypercube", "torus", ...) sized by p. */
	char why[256];
	err = tc_topo_parse_p(cfg->topology, cfg->p, &t->topo, why, sizeof why);
	if (err) {
		tc__set_detail("tc_team_create: %s", why);
		goto fail;
	}
	t->p = tc_topo_nodes(t->topo);
	t->model = cfg->model;
	if (tc_model_check(&cfg->model)) {
		tc__set_detail("tc_team_create: the model is out of range (tc_model_check: "
		               "t_s and t_h in 0..1e12 ns, t_w and t_c in 0..1e9 ns/B, mu at most "
		               "TC_MAX_MESSAGE, ports, duplex and switching from their enums)");
		err = TC_EINVAL;
		goto fail;
	}
	if ((unsigned)cfg->mode > TC_MODE_EMULATED) {
		tc__set_detail("tc_team_create: mode %d is not an enum tc_mode", (int)cfg->mode);
		err = TC_EINVAL;
		goto fail;
	}
	tc__mps_from_model(&t->mps, &t->model);
	t->emulate = cfg->mode == TC_MODE_EMULATED;
	t->wait = cfg->wait;
	if (t->wait < TC_WAIT_AUTO || t->wait > TC_WAIT_BLOCK) {
		tc__set_detail("tc_team_create: wait %d is not an enum tc_wait_policy", (int)cfg->wait);
		err = TC_EINVAL;
		goto fail;
	}
	/* TC_DEBUG_TIMEOUT_MS: a timeout (and the watchdog's report) for any
	 * program whose teams set none. */
	uint64_t tmo = cfg->timeout_ms;
	const char *env = getenv("TC_DEBUG_TIMEOUT_MS");
	if (!tmo && env && *env) {
		char *end;
		unsigned long long v = strtoull(env, &end, 10);
		if (!*end)
			tmo = v;
	}
	t->timeout_cfg_ns = tc__ms_to_ns(tmo);
	t->timeout_ns = t->timeout_cfg_ns;
	t->attach_timeout_ns = tc__ms_to_ns(cfg->attach_timeout_ms);
	t->stack_bytes = cfg->stack_bytes;
	if (t->stack_bytes && t->stack_bytes < (size_t)PTHREAD_STACK_MIN) {
		/* pthread would ignore it and give the default */
		tc__set_detail("tc_team_create: stack_bytes %zu is below PTHREAD_STACK_MIN (%zu)",
		               cfg->stack_bytes, (size_t)PTHREAD_STACK_MIN);
		err = TC_EINVAL;
		goto fail;
	}
	t->trace_cap = cfg->trace_events;
	if (t->trace_cap > ((size_t)1 << 32)) {
		tc__set_detail("tc_team_create: trace_events %zu is over 2^32 per rank",
		               cfg->trace_events);
		err = TC_EINVAL;
		goto fail;
	}
	t->no_pin = cfg->no_pin != 0;
	t->check = cfg->no_mismatch_check == 0;
	int ncpu = tc__cpu_list(t);
	if (ncpu < 0) {
		err = ncpu;
		goto fail;
	}
	t->cpus = ncpu;
	t->place = malloc((size_t)t->p * sizeof *t->place);
	if (!t->place) {
		err = TC_ENOMEM;
		goto fail;
	}
	for (int r = 0; r < t->p; r++)
		t->place[r] = t->machine.slot[r % t->machine.nslots];
	if (cfg->calibration) {
		/* The one check of a calibration (lib/model/calibration.h),
		 * the reader's and the prediction's too. */
		err = tc__calibration_check(cfg->calibration, true, "tc_team_create: calibration");
		if (err)
			goto fail;
		t->cal = malloc(sizeof *t->cal);
		if (!t->cal) {
			err = TC_ENOMEM;
			goto fail;
		}
		memcpy(t->cal, cfg->calibration, sizeof *t->cal);
	}

	/* Threads or fibres: the config, TC_EXEC for AUTO, then the rule. */
	if (cfg->exec > TC_EXEC_FIBRES) {
		tc__set_detail("tc_team_create: exec %d is not an enum tc_exec", (int)cfg->exec);
		err = TC_EINVAL;
		goto fail;
	}
	t->exec = cfg->exec;
	const char *ex = getenv("TC_EXEC");
	if (t->exec == TC_EXEC_AUTO && ex)
		t->exec = !strcmp(ex, "fibres")    ? TC_EXEC_FIBRES
		          : !strcmp(ex, "threads") ? TC_EXEC_THREADS
		                                   : TC_EXEC_AUTO;
	if (t->exec == TC_EXEC_AUTO)
		t->exec = t->p > t->cpus ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
	t->run_unattached = cfg->run_unattached != 0;
	/* (Only for fibres: the first call installs the overflow report's
	 * SIGSEGV handler.) */
	if (t->exec == TC_EXEC_FIBRES)
		t->fibre_stack = tc__fibre_stack_size(cfg->stack_bytes ? cfg->stack_bytes
		                                                       : TC__FIBRE_STACK_RANK);

	/* Waiting thresholds. */
	bool oversub = t->p > t->cpus;
	t->spin_ns = cfg->spin_ns ? cfg->spin_ns : (oversub ? 0 : TC__SPIN_NS_DEFAULT);
	t->yield_ns = cfg->yield_ns ? cfg->yield_ns
	                            : (oversub ? TC__YIELD_NS_OVERSUB : TC__YIELD_NS_DEDICATED);
	if (t->exec == TC_EXEC_FIBRES) {
		/* A fibre that spins keeps its CPU's other ranks from running:
		 * TC_WAIT_SPIN yields instead (lib/core/team.c, fibres). */
		if (t->wait == TC_WAIT_SPIN)
			t->wait = TC_WAIT_YIELD;
		t->spin_ns = cfg->spin_ns;
		t->yield_ns = cfg->yield_ns ? cfg->yield_ns : TC__YIELD_NS_FIBRE;
	}
	if (t->wait == TC_WAIT_YIELD || t->wait == TC_WAIT_BLOCK)
		t->spin_ns = 0;
	if (t->wait == TC_WAIT_BLOCK)
		t->yield_ns = 0;
	t->may_block = t->wait == TC_WAIT_AUTO || t->wait == TC_WAIT_BLOCK;
	/* The asymmetric fence makes every sleep cost a membarrier (an IPI to
	 * every other CPU that runs one of our threads; VM exits on a VM):
	 * worth it when sleeps are rare and the team spans few CPUs, not when
	 * ranks outnumber CPUs or always block (measured: a 64-rank barrier
	 * with TC_WAIT_BLOCK takes 3.57 ms with it, 0.69 ms without), nor on
	 * fibres, which park at every wait that a yield does not end, nor on
	 * many CPUs: on a 16-CPU KVM guest a ring allreduce of 64 KiB at
	 * p = 16 whose ranks slept 3 times per call took 2.5-3.3 ms with it,
	 * and 0.38 ms without it when they slept at every wait (TC_WAIT_BLOCK,
	 * ~500 sleeps per call). */
	t->asym_fence = tc__asym_fence && !oversub && t->p <= TC__ASYM_FENCE_MAX_P &&
	                t->wait != TC_WAIT_BLOCK && t->exec != TC_EXEC_FIBRES;

	/* Channels: one per arc, in the CSR order of the topology. */
	t->nchans = tc_topo_props(t->topo)->arcs;
	size_t ring = cfg->ring_bytes;
	if (!ring) {
		ring = TC__RING_DEFAULT;
		while (ring > TC__RING_MIN && (size_t)t->nchans * ring > TC__RING_BUDGET)
			ring >>= 1;
	}
	if (ring < 2 * TC__LINE || ring > ((size_t)1 << 30)) {
		tc__set_detail("tc_team_create: ring_bytes %zu is out of range (%d bytes to 1 GiB)",
		               ring, 2 * TC__LINE);
		err = TC_EINVAL;
		goto fail;
	}
	uint64_t nlines = tc__pow2_at_least((ring + TC__LINE - 1) / TC__LINE);
	t->ring_bytes = (size_t)nlines * TC__LINE;
	size_t mu_max = TC__PAYLOAD_IN_LINES(nlines);
	if (cfg->packet_bytes) {
		if (cfg->packet_bytes > mu_max) {
			tc__set_detail("tc_team_create: packet_bytes %zu is over the %zu bytes a "
			               "packet of a %zu-byte ring can carry",
			               cfg->packet_bytes, mu_max, t->ring_bytes);
			err = TC_EINVAL;
			goto fail;
		}
		t->packet_bytes = cfg->packet_bytes;
	} else {
		size_t half = TC__PAYLOAD_IN_LINES(nlines / 2 ? nlines / 2 : 1);
		t->packet_bytes = half < TC__PACKET_DEFAULT ? half : TC__PACKET_DEFAULT;
		if (t->packet_bytes < 1)
			t->packet_bytes = mu_max;
	}
	t->single_copy_min = cfg->single_copy_min ? cfg->single_copy_min : TC__SINGLE_COPY_DEFAULT;

	/* Each rank's ports, active list and port resources: written on every
	 * message, so each rank's share starts on a cache line of its own (no
	 * false sharing between ranks). */
	size_t hot = 0;
	for (int u = 0; u < t->p; u++) {
		const int *nb;
		int deg = tc_topo_neighbors(t->topo, u, &nb);
		size_t nr = (size_t)tc__nres(&t->mps, deg);
		hot += tc__line_up((size_t)deg * sizeof(struct tc__port)) +
		       tc__line_up((size_t)deg * sizeof(int)) + tc__line_up(nr * sizeof(tc_time_t));
	}
	t->hot_bytes = hot ? hot : TC__LINE;

	err = tc__team_fits(t);
	if (err)
		goto fail;

	t->procs = aligned_alloc(TC__LINE, (size_t)t->p * sizeof *t->procs);
	if (t->procs)
		memset(t->procs, 0, (size_t)t->p * sizeof *t->procs);
	t->chans = t->nchans ? aligned_alloc(TC__LINE, (size_t)t->nchans * sizeof *t->chans) : NULL;
	if (!t->procs || (t->nchans && !t->chans)) {
		err = TC_ENOMEM;
		goto fail;
	}
	t->hot_store = aligned_alloc(TC__LINE, t->hot_bytes);
	if (!t->hot_store) {
		err = TC_ENOMEM;
		goto fail;
	}
	memset(t->hot_store, 0, t->hot_bytes);
	if (t->chans) {
		memset(t->chans, 0, (size_t)t->nchans * sizeof *t->chans);
		/* The rings in one anonymous mapping: zero pages that the kernel
		 * gives when a channel is first used, on the NUMA node of the
		 * rank that touches them first.  Zeroing every ring at creation,
		 * as separate allocations, was 300 ms for complete:64 (4032 rings
		 * of 16 KiB, page faults included) though most runs use a few. */
		t->ring_store_bytes = (size_t)t->nchans * t->ring_bytes;
		t->ring_store = mmap(NULL, t->ring_store_bytes, PROT_READ | PROT_WRITE,
		                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t->ring_store == MAP_FAILED) {
			t->ring_store = NULL;
			err = TC_ENOMEM;
			goto fail;
		}
	}

	/* Arc k of the CSR order is (u -> nbrs(u)[i]); its channel is the out
	 * channel of u's port i and the in channel of v's port for u. */
	long k = 0;
	unsigned char *hp = t->hot_store;
	for (int u = 0; u < t->p; u++) {
		struct tc_proc *pr = &t->procs[u];
		pr->team = t;
		pr->rank = u;
		pr->req_stamp = tc__stamp_new();
		pr->deg = tc_topo_neighbors(t->topo, u, &pr->nbrs);
		pr->ports = (struct tc__port *)(void *)hp;
		hp += tc__line_up((size_t)pr->deg * sizeof *pr->ports);
		pr->active = (int *)(void *)hp;
		hp += tc__line_up((size_t)pr->deg * sizeof *pr->active);
		pr->res_free = (tc_time_t *)(void *)hp;
		hp += tc__line_up((size_t)tc__nres(&t->mps, pr->deg) * sizeof *pr->res_free);
		if (t->trace_cap) {
			pr->ev = malloc(t->trace_cap * sizeof *pr->ev);
			if (!pr->ev) {
				err = TC_ENOMEM;
				goto fail;
			}
		}
		for (int i = 0; i < pr->deg; i++, k++) {
			struct tc__line *ring =
			        (struct tc__line *)(void *)((unsigned char *)t->ring_store +
			                                    (size_t)k * t->ring_bytes);
			if (tc__chan_init_at(&t->chans[k], ring, nlines, u, pr->nbrs[i]) != 0) {
				err = TC_ENOMEM;
				goto fail;
			}
			pr->ports[i].out = &t->chans[k];
			pr->ports[i].peer = pr->nbrs[i];
		}
	}
	for (int u = 0; u < t->p; u++) {
		struct tc_proc *pr = &t->procs[u];
		for (int i = 0; i < pr->deg; i++) {
			int v = pr->nbrs[i];
			int j = tc_topo_neighbor_index(t->topo, v, u);
			struct tc__chan *ch = pr->ports[i].out;
			t->procs[v].ports[j].in = ch;
			ch->prod_db = &pr->db;
			ch->cons_db = &t->procs[v].db;
		}
	}
	t->epoch_ns = tc__now_ns(); /* attached ranks' logical 0; tc_run sets its own */
	t->memory_bytes = sizeof *t + (size_t)t->p * sizeof *t->procs +
	                  (size_t)t->nchans * (sizeof *t->chans + t->ring_bytes) + t->hot_bytes +
	                  (size_t)t->cpus * sizeof *t->cpu_list + (size_t)t->p * sizeof *t->place +
	                  (t->cal ? sizeof *t->cal : 0) +
	                  (size_t)t->p * t->trace_cap * sizeof(struct tc_event);
	*out = t;
	return TC_OK;
fail:
	tc__team_free(t);
	return err;
}

int tc_team_destroy(struct tc_team *team)
{
	tc__clear_detail();
	if (!team)
		return TC_OK;
	if (team->parent) {
		tc__set_detail("tc_team_destroy: the team is a sub-team (tc_team_split, "
		               "tc_team_dup): its ranks free it with tc_team_free, or "
		               "tc_team_destroy of its root team does");
		return TC_EINVAL;
	}
	/* A rank's thread still uses the team: freeing it would pull its
	 * channels from under it.  The team stays as it is. */
	pthread_mutex_lock(&team->attach_mu);
	int running = atomic_load(&team->running), attached = -1, nattached = team->nattached;
	for (int r = 0; r < team->p && attached < 0; r++)
		if (atomic_load(&team->procs[r].attached) && atomic_load(&team->procs[r].owner))
			attached = r;
	pthread_mutex_unlock(&team->attach_mu);
	if (running) {
		tc__set_detail("tc_team_destroy: tc_run is running on the team; destroy it after "
		               "tc_run returns (the team is not freed)");
		return TC_EBUSY;
	}
	if (nattached) {
		tc__set_detail("tc_team_destroy: %d rank%s still attached (rank %d): tc_detach "
		               "every rank first (the team is not freed)",
		               nattached, nattached == 1 ? " is" : "s are", attached);
		return TC_EBUSY;
	}
	tc__team_free(team);
	return TC_OK;
}

void tc_team_get_info(const struct tc_team *t, struct tc_team_info *info)
{
	if (!info)
		return;
	memset(info, 0, sizeof *info);
	info->p = t->p;
	info->channels = t->nchans;
	info->memory_bytes = t->memory_bytes;
	/* A root's sub-teams are its allocations too. */
	if (!t->parent) {
		struct tc_team *root = (struct tc_team *)t;
		pthread_mutex_lock(&root->sub_mu);
		for (const struct tc_team *s = root->sub_head; s; s = s->sub_next)
			info->memory_bytes += s->memory_bytes + (size_t)s->p * sizeof(int);
		pthread_mutex_unlock(&root->sub_mu);
	}
	struct tc__estimate est;
	tc__team_estimate(t, &est);
	info->memory_estimate_bytes = (size_t)est.total;
	info->ring_bytes = t->ring_bytes;
	info->packet_bytes = t->packet_bytes;
	info->single_copy_min = t->single_copy_min;
	info->wait = t->wait;
	info->spin_ns = t->spin_ns;
	info->yield_ns = t->yield_ns;
	info->cpus = t->cpus;
	info->oversubscribed = t->p > t->cpus;
	info->asym_fence = t->asym_fence;
	info->sched_cache_bytes = atomic_load(&((struct tc_team *)t)->shared_bytes);
	info->sched_cache_entries = atomic_load(&((struct tc_team *)t)->shared_entries);
	info->exec = t->exec;
	info->fibre_stack_bytes = t->exec == TC_EXEC_FIBRES ? t->fibre_stack : 0;
	const struct tc__machine *m = &t->machine;
	info->place_source = m->source;
	info->pus = m->pus;
	info->cores = m->cores;
	info->packages = m->packages;
	info->numa_nodes = m->numa_nodes;
	info->cache_domains = m->cache_domains;
	info->cache_domain_level = m->cache_domain_level;
	for (int k = 0; k < 3; k++) {
		info->cache_bytes[k] = m->cache_bytes[k];
		info->cache_count[k] = m->cache_count[k];
	}
	info->place = t->place;
}

int tc_team_size(const struct tc_team *team)
{
	return team->p;
}

const struct tc_topo *tc_team_topo(const struct tc_team *team)
{
	return team->topo;
}

const struct tc_model *tc_team_model(const struct tc_team *team)
{
	return &team->model;
}

static void tc__team_abort_one(struct tc_team *team)
{
	/* Seq_cst: ordered before the rings below, so a rank woken by one sees
	 * the flag. */
	atomic_store(&team->aborted, 1);
	for (int r = 0; r < team->p; r++)
		tc__doorbell_ring(&team->procs[r].db);
}

/* The root and every sub-team of it: a rank of the run may wait on any of
 * them. */
void tc_team_abort(struct tc_team *team)
{
	struct tc_team *root = tc__root(team);
	tc__team_abort_one(root);
	pthread_mutex_lock(&root->sub_mu);
	for (struct tc_team *s = root->sub_head; s; s = s->sub_next)
		tc__team_abort_one(s);
	pthread_mutex_unlock(&root->sub_mu);
}

int tc_rank(const struct tc_proc *proc)
{
	return proc->rank;
}

int tc_size(const struct tc_proc *proc)
{
	return proc->team->p;
}

struct tc_team *tc_proc_team(const struct tc_proc *proc)
{
	return proc->team;
}

int tc_neighbors(const struct tc_proc *proc, const int **nbrs)
{
	if (!proc) {
		tc__set_detail("tc_neighbors: proc is NULL");
		return TC_EINVAL;
	}
	if (nbrs) /* NULL: the degree only, as tc_topo_neighbors() */
		*nbrs = proc->nbrs;
	return proc->deg;
}

void *tc__scratch_grow(struct tc_proc *proc, int slot, size_t bytes)
{
	size_t n = proc->scratch[slot].n ? proc->scratch[slot].n : 256;
	while (n < bytes)
		n *= 2;
	/* Whole cache lines: another rank's buffers never share one. */
	void *p = aligned_alloc(TC__LINE, tc__line_up(n));
	if (!p)
		return NULL;
	free(proc->scratch[slot].p);
	proc->scratch[slot].p = p;
	proc->scratch[slot].n = n;
	return p;
}

int tc_trace_events(const struct tc_team *team, int rank, const struct tc_event **ev, uint64_t *dropped)
{
	tc__clear_detail();
	if (!team || rank < 0 || rank >= team->p || !ev)
		return TC_EINVAL;
	*ev = team->procs[rank].ev;
	if (dropped)
		*dropped = team->procs[rank].ev_dropped;
	return team->procs[rank].nev;
}

void tc_team_last_run(const struct tc_team *team, struct tc_run_info *out)
{
	if (out)
		*out = team->last_run;
}

void tc_proc_stats(const struct tc_proc *proc, struct tc_stats *out)
{
	if (out)
		*out = proc->stats;
}

void tc_proc_stats_reset(struct tc_proc *proc)
{
	memset(&proc->stats, 0, sizeof proc->stats);
}

void tc_team_stats(const struct tc_team *t, struct tc_stats *out)
{
	if (!out)
		return;
	memset(out, 0, sizeof *out);
	for (int r = 0; r < t->p; r++) {
		const struct tc_stats *s = &t->procs[r].stats;
		out->msgs_sent += s->msgs_sent;
		out->bytes_sent += s->bytes_sent;
		out->msgs_recv += s->msgs_recv;
		out->bytes_recv += s->bytes_recv;
		out->packets_sent += s->packets_sent;
		out->single_copy += s->single_copy;
		out->waits_blocked += s->waits_blocked;
		out->rounds += s->rounds;
		out->transfers_sent += s->transfers_sent;
		out->transfers_recv += s->transfers_recv;
		out->forwarded += s->forwarded;
		out->hops += s->hops;
		out->busy_ps = tc__sat_add(out->busy_ps, s->busy_ps);
	}
}
