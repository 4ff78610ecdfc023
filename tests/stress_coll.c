/* SPDX-License-Identifier: MIT */
/*
 * tests/stress_coll.c - soaks (suite "stress").
 *
 * coll: back-to-back collectives of random kind, size, datatype, op, root
 * and algorithm (any of the registry's that applies, or AUTO) at p = 64 on
 * however many cores there are, every rank skewed by a random busy delay of
 * up to 20 us before some calls, each rank's result checked against the
 * sequential reference of tests/common/coll_ref.h by a 64-bit checksum.
 * Every rank draws the same sequence of calls from a common seed.
 *
 * chan: a million packets of random sizes through one raw SPSC channel
 * (lib/core/chan.h) between two threads, each yielding the CPU at random
 * (sched_yield), checked by a running checksum and a sequence number in
 * every packet.
 *
 * CI form: 1500 collectives on complete:64, 10^6 packets.  Long form
 * (TC_STRESS_LONG=1): 10^4 collectives on each of complete:64,
 * hypercube:6, torus:8x8 and ring:64, 10^7 packets (README, "Stress").
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll_ref.h"
#include "core/chan.h"
#include "harness.h"
#include "util.h"

static bool long_form(void)
{
	const char *e = getenv("TC_STRESS_LONG");
	return e && *e && strcmp(e, "0") != 0;
}

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* ---- random collectives at p = 64 ---------------------------------------- */

static const enum tc_coll sc_colls[] = {
        TC_COLL_BCAST,       TC_COLL_REDUCE,         TC_COLL_ALLREDUCE, TC_COLL_BARRIER,
        TC_COLL_ALLGATHER,   TC_COLL_REDUCE_SCATTER, TC_COLL_SCAN,      TC_COLL_EXSCAN,
        TC_COLL_SCATTER,     TC_COLL_GATHER,         TC_COLL_ALLTOALL,  TC_COLL_SHIFT,
        TC_COLL_GRAY2BINARY, TC_COLL_BINARY2GRAY,    TC_COLL_MULTICAST,
};
enum { SC_NCOLLS = sizeof sc_colls / sizeof sc_colls[0], SC_MAXALG = 32 };
static const size_t sc_counts[] = {0, 1, 2, 7, 16, 64, 300};
static const int sc_members[] = {1, 5, 9, 33, 62};

struct sc_arg {
	int calls;
	uint64_t seed;
	/* Per collective: the algorithms that apply (names), and their count. */
	const char *algs[SC_NCOLLS][SC_MAXALG];
	int nalgs[SC_NCOLLS];
	_Atomic int bad;  /* results that differed */
	_Atomic int errs; /* calls that failed */
	_Atomic long checked;
	char msg[256];
};

/* Call i of the common sequence. */
static void sc_draw(const struct sc_arg *a, uint64_t *s, int p, struct ct_case *c)
{
	int k;
	do
		k = (int)(tc_test_rand(s) % SC_NCOLLS);
	while (!a->nalgs[k]);
	*c = (struct ct_case){.coll = sc_colls[k], .seed = tc_test_rand(s)};
	int na = a->nalgs[k];
	int pick = (int)(tc_test_rand(s) % (unsigned)(na + 1));
	c->alg = pick == na ? NULL : a->algs[k][pick];
	c->count = sc_counts[tc_test_rand(s) % (sizeof sc_counts / sizeof sc_counts[0])];
	static const struct {
		enum tc_dtype dt;
		enum tc_op op;
	} combos[] = {{TC_INT32, TC_OP_SUM},  {TC_INT64, TC_OP_MAX}, {TC_UINT8, TC_OP_BXOR},
	              {TC_DOUBLE, TC_OP_SUM}, {TC_FLOAT, TC_OP_MIN}, {TC_UINT64, TC_OP_BAND}};
	int ci = (int)(tc_test_rand(s) % (sizeof combos / sizeof combos[0]));
	c->dt = combos[ci].dt;
	c->op = combos[ci].op;
	/* allreduce shm_tree takes at most a cache line (64 bytes,
	 * docs/algorithms.md); a larger call runs AUTO instead. */
	if (c->alg && c->coll == TC_COLL_ALLREDUCE && !strcmp(c->alg, "shm_tree") &&
	    c->count * tc_dtype_size(c->dt) > 64)
		c->alg = NULL;
	c->root = (int)(tc_test_rand(s) % (unsigned)p);
	c->q = (int)(tc_test_rand(s) % (unsigned)(2 * p)) - p / 2;
	if (c->coll == TC_COLL_MULTICAST) {
		c->members = sc_members;
		c->nmembers = (int)(tc_test_rand(s) % 6);
	}
	if (c->coll == TC_COLL_BARRIER)
		c->count = 0;
}

static int sc_fn(struct tc_proc *proc, void *argp)
{
	struct sc_arg *a = argp;
	const int me = tc_rank(proc), p = tc_team_size(tc_proc_team(proc));
	uint64_t common = a->seed, mine = a->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(me + 1));
	for (int i = 0; i < a->calls; i++) {
		struct ct_case c;
		sc_draw(a, &common, p, &c);
		size_t es = tc_dtype_size(c.dt);
		size_t sb = ct_sbytes(&c, p, me), rb = ct_rbytes(&c, p, me);
		unsigned char *s = malloc(sb + 8), *r = malloc(rb + 8), *e = malloc(rb + 8);
		for (size_t j = 0; j < sb / es; j++)
			ct_input(&c, me, j, s + j * es);
		memset(r, 0x5a, rb);
		if ((c.coll == TC_COLL_BCAST || c.coll == TC_COLL_MULTICAST) && me == c.root)
			for (size_t j = 0; j < c.count; j++)
				ct_input(&c, me, j, r + j * es);
		memcpy(e, r, rb);
		/* Skew: a busy delay of up to 20 us before one call in four. */
		if (tc_test_rand(&mine) % 4 == 0) {
			uint64_t until = tc_test_now_ns() + tc_test_rand(&mine) % 20000;
			while (tc_test_now_ns() < until)
				;
		}
		int err = ct_call(proc, &c, s, r);
		if (err) {
			if (!a->errs++)
				snprintf(a->msg, sizeof a->msg, "call %d %s/%s count %zu: rank %d: %s",
				         i, tc_coll_name(c.coll), c.alg ? c.alg : "auto", c.count,
				         me, tc_err_name(err));
		} else if (ct_expect(&c, p, me, e) == 0 && fnv(r, rb) != fnv(e, rb)) {
			if (!a->bad++)
				snprintf(a->msg, sizeof a->msg,
				         "call %d %s/%s count %zu root %d: rank %d: wrong result",
				         i, tc_coll_name(c.coll), c.alg ? c.alg : "auto", c.count,
				         c.root, me);
		}
		a->checked++;
		free(s);
		free(r);
		free(e);
		if (err)
			return 0; /* the team is aborted: every later call fails too */
	}
	return 0;
}

static void sc_soak(const char *spec, int calls, uint64_t seed)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.timeout_ms = 120000; /* a hang fails instead of stalling the suite */
	struct tc_team *team;
	cr_assert_eq(tc_team_create(&cfg, &team), 0, "%s", spec);
	struct sc_arg *a = calloc(1, sizeof *a);
	a->calls = calls;
	a->seed = seed;
	for (int k = 0; k < SC_NCOLLS; k++)
		for (int i = 0; tc_alg_name(sc_colls[k], i) && a->nalgs[k] < SC_MAXALG; i++) {
			const char *n = tc_alg_name(sc_colls[k], i);
			if (!tc_alg_applies(tc_team_topo(team), tc_team_model(team), sc_colls[k], n))
				a->algs[k][a->nalgs[k]++] = n;
		}
	uint64_t t0 = tc_test_now_ns();
	cr_assert_eq(tc_run(team, sc_fn, a), 0);
	fprintf(stderr, "stress_coll %s: %d calls, %ld rank-results checked, %.1f s\n", spec, calls,
	        (long)a->checked, (double)(tc_test_now_ns() - t0) / 1e9);
	cr_assert_eq(a->errs, 0, "%s: %s", spec, a->msg);
	cr_assert_eq(a->bad, 0, "%s: %s", spec, a->msg);
	cr_assert_eq(a->checked, (long)calls * tc_team_size(team));
	free(a);
	tc_team_destroy(team);
}

Test(stress, coll_random_p64, .timeout = 1800)
{
	if (!long_form()) {
		/* The sanitizer stages (TC_TEST_SCALE): 300 calls, every
		 * collective still drawn about 20 times. */
		sc_soak("complete:64", getenv("TC_TEST_SCALE") ? 300 : 1500, 1);
		return;
	}
	static const char *const specs[] = {"complete:64", "hypercube:6", "torus:8x8", "ring:64"};
	for (int i = 0; i < 4; i++)
		sc_soak(specs[i], 10000, 100 + (uint64_t)i);
}

/* ---- a raw channel with random yields -------------------------------------- */

struct ch_arg {
	struct tc__chan ch;
	long n;
	uint64_t sum_sent, sum_recv;
	long bad;
};

static void maybe_yield(uint64_t *s)
{
	if (tc_test_rand(s) % 64 == 0)
		sched_yield();
}

static void *ch_producer(void *argp)
{
	struct ch_arg *a = argp;
	uint64_t s = 11, buf[12];
	for (long i = 0; i < a->n; i++) {
		size_t words = 1 + tc_test_rand(&s) % 11; /* 8..88 bytes: 1 or 2 lines */
		buf[0] = (uint64_t)i;
		for (size_t w = 1; w < words; w++)
			buf[w] = tc_test_rand(&s);
		struct tc__pkt_hdr h = {.len = (uint32_t)(words * 8),
		                        .flags = TC__PKT_FIRST | TC__PKT_LAST,
		                        .total = words * 8};
		while (!tc__chan_try_push(&a->ch, &h, buf, words * 8))
			sched_yield();
		a->sum_sent += fnv(buf, words * 8);
		maybe_yield(&s);
	}
	return NULL;
}

static void *ch_consumer(void *argp)
{
	struct ch_arg *a = argp;
	uint64_t s = 13, buf[12];
	for (long i = 0; i < a->n; i++) {
		struct tc__pkt_hdr h;
		while (!tc__chan_peek(&a->ch, &h))
			sched_yield();
		if (h.len > sizeof buf || h.len != h.total) {
			a->bad++;
			return NULL;
		}
		tc__chan_copy_out(&a->ch, 0, buf, h.len);
		tc__chan_pop(&a->ch, h.len);
		a->bad += buf[0] != (uint64_t)i;
		a->sum_recv += fnv(buf, h.len);
		maybe_yield(&s);
	}
	return NULL;
}

Test(stress, chan_million_yields, .timeout = 600)
{
	struct ch_arg *a = calloc(1, sizeof *a);
	a->n = long_form() ? 10000000 : 1000000;
	cr_assert_eq(tc__chan_init(&a->ch, 64, 0, 1), 0);
	uint64_t t0 = tc_test_now_ns();
	pthread_t pt, ct;
	cr_assert_eq(pthread_create(&pt, NULL, ch_producer, a), 0);
	cr_assert_eq(pthread_create(&ct, NULL, ch_consumer, a), 0);
	pthread_join(pt, NULL);
	pthread_join(ct, NULL);
	fprintf(stderr, "stress_chan: %ld packets, %.1f s\n", a->n,
	        (double)(tc_test_now_ns() - t0) / 1e9);
	cr_assert_eq(a->bad, 0);
	cr_assert_eq(a->sum_sent, a->sum_recv);
	struct tc__pkt_hdr h;
	cr_assert_eq(tc__chan_peek(&a->ch, &h), 0, "nothing left over");
	tc__chan_fini(&a->ch);
	free(a);
}
