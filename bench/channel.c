/* SPDX-License-Identifier: MIT */
/*
 * bench/channel - our channels against the raw hardware, measured in one run.
 *
 * This VM's core-to-core latency jumps between levels every few seconds, so
 * every figure of ours is measured interleaved with its baseline, repetition
 * by repetition, and only the same-run ratios mean anything:
 *   latency   8-byte ping-pong over a chain:2 team / 2, against one cache
 *             line bounced between the same two pinned threads;
 *   bandwidth one message of S bytes (64 KiB .. 64 MiB) from a buffer the
 *             sender has just written, against the single-copy limit: the
 *             thread on the other core memcpy()s the freshly written buffer;
 *   ring64    a token around a ring of 64 ranks on the machine's cores:
 *             round trips per second and CPU time over wall time;
 *   crossover ping-pong of 8 B .. 64 KiB on a team that streams everything
 *             against one that copies everything once (single_copy_min 1),
 *             interleaved, fastest of the repetitions: the smallest size
 *             from which the single copy is faster at every larger size
 *             measured is where the library's threshold belongs
 *             (TC__CHAN_SINGLE_COPY_MIN, lib/core/chan.h); then the default
 *             team's one-way time at the same sizes, and whether it grows
 *             with the size (each point at most 5% below the one before).
 * Prints one table, then one JSON object as the last line.
 * Usage: channel [--quick] [--crossover]  (--crossover: that part only)
 */
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "topocoll.h"
#include "stats.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int quick;

/* ---- the raw baselines, on two threads pinned like ranks 0 and 1 ------- */

/* The process's CPUs, read once before any thread is pinned (a pinned
 * thread's own affinity is a single CPU, and its children inherit it). */
static cpu_set_t all_cpus;

static void pin_to_nth_cpu(int n)
{
	cpu_set_t set = all_cpus, one;
	int k = 0, count = CPU_COUNT(&set);
	n %= count;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && k++ == n) {
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			pthread_setaffinity_np(pthread_self(), sizeof one, &one);
			return;
		}
}

/* Gives the main thread every CPU back (teams read the process's set from it). */
static void unpin(void)
{
	pthread_setaffinity_np(pthread_self(), sizeof all_cpus, &all_cpus);
}

struct raw {
	alignas(64) _Atomic long line; /* the bounced cache line */
	alignas(64) _Atomic long go;   /* start signal for the copy test */
	alignas(64) _Atomic long done;
	long iters;
	unsigned char *src, *dst;
	size_t bytes;
	double copy_s;
};

static void *raw_pong(void *argp)
{
	struct raw *r = argp;
	pin_to_nth_cpu(1);
	for (long i = 0; i < r->iters; i++) {
		/* Acquire/release: the line is the message. */
		while (atomic_load_explicit(&r->line, memory_order_acquire) != 2 * i + 1)
			;
		atomic_store_explicit(&r->line, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

/* One-way latency of a cache line bounced between two cores, ns. */
static double cacheline_ns(long iters)
{
	struct raw r = {.iters = iters};
	pthread_t t;
	pin_to_nth_cpu(0);
	pthread_create(&t, NULL, raw_pong, &r);
	double t0 = now_s();
	for (long i = 0; i < iters; i++) {
		atomic_store_explicit(&r.line, 2 * i + 1, memory_order_release);
		while (atomic_load_explicit(&r.line, memory_order_acquire) != 2 * i + 2)
			;
	}
	double t1 = now_s();
	pthread_join(t, NULL);
	unpin();
	return (t1 - t0) * 1e9 / (2.0 * (double)iters);
}

static void *raw_copier(void *argp)
{
	struct raw *r = argp;
	pin_to_nth_cpu(1);
	while (atomic_load_explicit(&r->go, memory_order_acquire) == 0)
		;
	double t0 = now_s();
	memcpy(r->dst, r->src, r->bytes);
	r->copy_s = now_s() - t0;
	atomic_store_explicit(&r->done, 1, memory_order_release);
	return NULL;
}

/* The single-copy limit: the other core copies a buffer this core has just
 * written.  Returns GB/s. */
static double single_copy_gbs(unsigned char *src, unsigned char *dst, size_t bytes, int stamp)
{
	struct raw r = {.src = src, .dst = dst, .bytes = bytes};
	pthread_t t;
	pin_to_nth_cpu(0);
	memset(src, stamp, bytes);
	pthread_create(&t, NULL, raw_copier, &r);
	atomic_store_explicit(&r.go, 1, memory_order_release);
	pthread_join(t, NULL);
	unpin();
	return (double)bytes / r.copy_s * 1e-9;
}

/* ---- ours --------------------------------------------------------------- */

struct ours {
	long iters;
	size_t bytes;
	unsigned char *src, *dst;
	int stamp;
	double result; /* ns one-way, or GB/s */
	_Atomic int ready;
};

static int pingpong_fn(struct tc_proc *proc, void *argp)
{
	struct ours *o = argp;
	uint64_t v = 0;
	int me = tc_rank(proc), err = 0;
	double t0 = now_s();
	for (long i = 0; i < o->iters && !err; i++) {
		if (me == 0) {
			err = tc_send(proc, 1, &v, 8);
			if (!err)
				err = tc_recv(proc, 1, &v, 8, NULL);
		} else {
			err = tc_recv(proc, 0, &v, 8, NULL);
			v++;
			if (!err)
				err = tc_send(proc, 0, &v, 8);
		}
	}
	if (me == 0)
		o->result = (now_s() - t0) * 1e9 / (2.0 * (double)o->iters);
	return err;
}

/* Ping-pong of o->bytes bytes from o->src (o->dst on rank 1); one-way ns. */
static int pingpong_bytes_fn(struct tc_proc *proc, void *argp)
{
	struct ours *o = argp;
	int me = tc_rank(proc), err = 0;
	unsigned char *buf = me == 0 ? o->src : o->dst;
	double t0 = now_s();
	for (long i = 0; i < o->iters && !err; i++) {
		if (me == 0) {
			err = tc_send(proc, 1, buf, o->bytes);
			if (!err)
				err = tc_recv(proc, 1, buf, o->bytes, NULL);
		} else {
			err = tc_recv(proc, 0, buf, o->bytes, NULL);
			if (!err)
				err = tc_send(proc, 0, buf, o->bytes);
		}
	}
	if (me == 0)
		o->result = (now_s() - t0) * 1e9 / (2.0 * (double)o->iters);
	return err;
}

static int bw_fn(struct tc_proc *proc, void *argp)
{
	struct ours *o = argp;
	if (tc_rank(proc) == 0) {
		memset(o->src, o->stamp, o->bytes); /* freshly written, as for memcpy */
		/* Release: pairs with the acquire below; the receiver starts its
		 * clock only once the sender is ready to send. */
		atomic_store_explicit(&o->ready, 1, memory_order_release);
		return tc_send(proc, 1, o->src, o->bytes);
	}
	while (!atomic_load_explicit(&o->ready, memory_order_acquire))
		;
	double t0 = now_s();
	int err = tc_recv(proc, 0, o->dst, o->bytes, NULL);
	o->result = (double)o->bytes / (now_s() - t0) * 1e-9;
	return err;
}

static struct tc_team *team_scm(const char *spec, enum tc_wait_policy pol, size_t scm)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.wait = pol;
	cfg.single_copy_min = scm;
	struct tc_team *t;
	int err = tc_team_create(&cfg, &t);
	if (err) {
		fprintf(stderr, "channel: %s: %s\n", spec, tc_strerror(err));
		exit(1);
	}
	return t;
}

struct ring_arg {
	double seconds;
	long rounds;
	_Atomic int stop;
};

static int ring_fn(struct tc_proc *proc, void *argp)
{
	struct ring_arg *a = argp;
	int p = tc_size(proc), me = tc_rank(proc);
	int next = (me + 1) % p, prev = (me + p - 1) % p;
	int tok = 0, err = 0;
	if (me == 0) {
		double t0 = now_s();
		long n = 0;
		do {
			tok = 1;
			err = tc_send(proc, next, &tok, sizeof tok);
			if (!err)
				err = tc_recv(proc, prev, &tok, sizeof tok, NULL);
			n++;
		} while (!err && now_s() - t0 < a->seconds);
		a->rounds = n;
		tok = -1; /* stop: goes round once more, so no message is left behind */
		if (!err)
			err = tc_send(proc, next, &tok, sizeof tok);
		return err ? err : tc_recv(proc, prev, &tok, sizeof tok, NULL);
	}
	for (;;) {
		err = tc_recv(proc, prev, &tok, sizeof tok, NULL);
		if (!err)
			err = tc_send(proc, next, &tok, sizeof tok);
		if (err || tok < 0)
			return err;
	}
}

static struct tc_team *team_of(const char *spec, enum tc_wait_policy pol)
{
	return team_scm(spec, pol, 0);
}

static void check(int err, const char *what);

/* The crossover table (see the top of the file).  Returns the crossover
 * size in bytes (0: the single copy never wins up to 64 KiB) and sets
 * *monotone to whether the default team's time grows with the size. */
static size_t crossover(int reps, int *monotone)
{
	enum { NS = 14 }; /* 8 B .. 64 KiB */
	struct tc_team *ts = team_scm("chain:2", TC_WAIT_AUTO, SIZE_MAX);
	struct tc_team *tc = team_scm("chain:2", TC_WAIT_AUTO, 1);
	struct tc_team *td = team_of("chain:2", TC_WAIT_AUTO);
	struct tc_team_info info;
	tc_team_get_info(td, &info);
	unsigned char *a = aligned_alloc(4096, (size_t)64 << 10),
	              *b = aligned_alloc(4096, (size_t)64 << 10);
	memset(a, 1, (size_t)64 << 10);
	memset(b, 2, (size_t)64 << 10);
	double st[NS], sc[NS], df[NS];
	size_t sz[NS];
	for (int i = 0; i < NS; i++) {
		sz[i] = (size_t)8 << i;
		st[i] = sc[i] = df[i] = 1e300;
	}
	for (int r = 0; r < reps; r++)
		for (int i = 0; i < NS; i++) {
			/* About 2 ms per sample. */
			long iters = (long)(2e6 / (200.0 + 0.5 * (double)sz[i]));
			struct tc_team *tt[3] = {ts, tc, td};
			double *out[3] = {st, sc, df};
			for (int k = 0; k < 3; k++) {
				struct ours o = {.iters = iters, .bytes = sz[i], .src = a, .dst = b};
				check(tc_run(tt[k], pingpong_bytes_fn, &o), "crossover");
				if (o.result < out[k][i])
					out[k][i] = o.result;
			}
		}
	size_t cross = 0;
	for (int i = NS - 1; i >= 0 && sc[i] < st[i]; i--)
		cross = sz[i];
	*monotone = 1;
	printf("%-10s %12s %12s %8s %14s\n", "bytes", "streamed", "single copy", "ratio", "default");
	for (int i = 0; i < NS; i++) {
		printf("%-10zu %10.1fns %10.1fns %8.2f %12.1fns%s\n", sz[i], st[i], sc[i],
		       sc[i] / st[i], df[i],
		       i && df[i] < 0.95 * df[i - 1] ? "  (below the smaller size)" : "");
		if (i && df[i] < 0.95 * df[i - 1])
			*monotone = 0;
	}
	printf("crossover (single copy faster from here on): %zu B; the library's threshold: %zu B; "
	       "default one-way time %s with the size\n",
	       cross, info.single_copy_min, *monotone ? "grows" : "does NOT grow");
	free(a);
	free(b);
	tc_team_destroy(ts);
	tc_team_destroy(tc);
	tc_team_destroy(td);
	return cross;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void check(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "channel: %s: %s\n", what, tc_strerror(err));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int only_cross = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--crossover"))
			only_cross = 1;
	}
	sched_getaffinity(0, sizeof all_cpus, &all_cpus);
	const int reps = quick ? 5 : 15;
	int monotone = 0;
	if (only_cross) {
		size_t cross = crossover(reps, &monotone);
		printf("{\"crossover_bytes\": %zu, \"monotone\": %s}\n", cross,
		       monotone ? "true" : "false");
		return 0;
	}
	const long lat_iters = quick ? 20000 : 100000;

	/* Latency: ours (auto and spin policies) and the cache line, interleaved. */
	struct tc_team *t_auto = team_of("chain:2", TC_WAIT_AUTO);
	struct tc_team *t_spin = team_of("chain:2", TC_WAIT_SPIN);
	double lat_auto[32], lat_spin[32], line[32];
	for (int r = 0; r < reps; r++) {
		struct ours o = {.iters = lat_iters};
		check(tc_run(t_auto, pingpong_fn, &o), "ping-pong");
		lat_auto[r] = o.result;
		line[r] = cacheline_ns(lat_iters);
		check(tc_run(t_spin, pingpong_fn, &o), "ping-pong");
		lat_spin[r] = o.result;
	}
	double l_auto = median(lat_auto, reps), l_spin = median(lat_spin, reps),
	       l_line = median(line, reps);
	printf("%-34s %12s %12s %8s\n", "case", "ours", "baseline", "ratio");
	printf("%-34s %10.1fns %10.1fns %8.2f\n", "latency 8 B one-way (auto)", l_auto, l_line,
	       l_auto / l_line);
	printf("%-34s %10.1fns %10.1fns %8.2f\n", "latency 8 B one-way (spin)", l_spin, l_line,
	       l_spin / l_line);

	/* Bandwidth. */
	size_t max = quick ? ((size_t)16 << 20) : ((size_t)64 << 20);
	unsigned char *src = aligned_alloc(4096, max), *dst = aligned_alloc(4096, max),
	              *dst2 = aligned_alloc(4096, max);
	memset(dst, 0, max);
	memset(dst2, 0, max);
	double bw16 = 0, mc16 = 0;
	for (size_t s = (size_t)64 << 10; s <= max; s *= 4) {
		double ours_v[32], base_v[32];
		int n = s >= ((size_t)16 << 20) ? reps : 2 * reps;
		for (int r = 0; r < n; r++) {
			struct ours o = {.bytes = s, .src = src, .dst = dst, .stamp = r};
			check(tc_run(t_auto, bw_fn, &o), "bandwidth");
			ours_v[r] = o.result;
			base_v[r] = single_copy_gbs(src, dst2, s, r + 1);
		}
		double ob = median(ours_v, n), bb = median(base_v, n);
		char name[64];
		snprintf(name, sizeof name, "bandwidth %zu KiB", s >> 10);
		printf("%-34s %8.2fGB/s %8.2fGB/s %8.2f\n", name, ob, bb, ob / bb);
		if (s == ((size_t)16 << 20)) {
			bw16 = ob;
			mc16 = bb;
		}
	}
	free(src);
	free(dst);
	free(dst2);
	tc_team_destroy(t_auto);
	tc_team_destroy(t_spin);

	/* A token around a ring of 64 ranks on this machine's cores, with each
	 * waiting policy (auto is the one reported in the JSON line). */
	static const char *pol_name[] = {"auto", "spin", "yield", "block"};
	double rt_per_s = 0, cpu_wall = 0;
	for (int pol = TC_WAIT_AUTO; pol <= TC_WAIT_BLOCK; pol++) {
		if (pol == TC_WAIT_SPIN)
			continue; /* 64 spinners on 2 cores: each hand-off waits for a time slice */
		struct tc_team *ring = team_of("ring:64", (enum tc_wait_policy)pol);
		struct ring_arg ra = {.seconds = quick ? 0.5 : 2.0};
		double w0 = now_s(), c0 = cpu_s();
		check(tc_run(ring, ring_fn, &ra), "ring64");
		double wall = now_s() - w0, cpu = cpu_s() - c0;
		struct tc_team_info info;
		tc_team_get_info(ring, &info);
		char name[64];
		snprintf(name, sizeof name, "ring:64 token round trips (%s)", pol_name[pol]);
		printf("%-34s %10.0f/s  cpu/wall %.2f (cpus %d, spin %llu ns, yield %llu ns)\n",
		       name, (double)ra.rounds / wall, cpu / wall, info.cpus,
		       (unsigned long long)info.spin_ns, (unsigned long long)info.yield_ns);
		if (pol == TC_WAIT_AUTO) {
			rt_per_s = (double)ra.rounds / wall;
			cpu_wall = cpu / wall;
		}
		tc_team_destroy(ring);
	}

	size_t cross = crossover(reps, &monotone);

	printf("{\"latency_ns\": %.1f, \"latency_spin_ns\": %.1f, \"cacheline_ns\": %.1f, "
	       "\"latency_ratio\": %.3f, \"bw_gbs\": %.3f, \"memcpy_gbs\": %.3f, \"bw_ratio\": %.3f, "
	       "\"ring64_roundtrips_per_s\": %.1f, \"ring64_cpu_per_wall\": %.3f, "
	       "\"crossover_bytes\": %zu, \"monotone\": %s}\n",
	       l_auto, l_spin, l_line, l_auto / l_line, bw16, mc16, mc16 > 0 ? bw16 / mc16 : 0.0,
	       rt_per_s, cpu_wall, cross, monotone ? "true" : "false");
	return 0;
}
