/* SPDX-License-Identifier: MIT */
/*
 * One-to-all broadcasts (lib/coll/bcast/) and their dual reductions:
 *   1. results: every algorithm on every topology that admits each p of the
 *      matrix, sizes 0 .. 1000 elements (1 MiB on small teams), three roots;
 *      reductions over several datatypes and operators against a sequential
 *      reference in rank order; TC_ENOTSUP exactly where the algorithm files
 *      say the algorithm does not apply;
 *   2. modelled time: tc_predict against closed forms written here
 *      independently (integer picoseconds), the checker's counts, and the
 *      makespan of real runs equal to the prediction;
 *   3. TC_ALG_AUTO picks an algorithm no slower than any applicable one.
 *
 * Wait policy of the threaded tests: TC_TEST_WAIT=auto|spin|yield|block.
 * The default is the library's default, auto (spin or yield, then block).
 * The first blocking run of this file found a lost wake-up (a send posted
 * from inside the wait's last re-check had no wait hint raised); it is
 * fixed in the progress-wait (lib/p2p/progress.c, then lib/core/wait.c) and
 * the block policy is exercised below.
 */
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

enum { A_HYPERCUBE, A_BINOMIAL, A_LINEAR, A_RING, A_PIPE, A_RING_RD, A_MESH, A_DOT, NALG };
static const char *const alg_name[NALG] = {"hypercube",      "binomial", "linear", "ring",
                                           "ring_pipelined", "ring_rd",  "mesh",   "dot_allport"};

/* Model constants: t_s = 1000 ns, t_w = 2 ns/B, t_h = 50 ns (cut-through),
 * t_c = 0.5 ns/B (reductions). */
#define TS_NS 1000.0
#define TW_NS 2.0
#define TH_NS 50.0
#define TC_NS 0.5

static int is_pow2(int p)
{
	return p > 0 && (p & (p - 1)) == 0;
}

static int log2_ceil(long x)
{
	int k = 0;
	while ((1L << k) < x)
		k++;
	return k;
}

/* Where the header of each algorithm file says it applies. */
static int applies(int a, const struct tc_topo *t, int allport)
{
	enum tc_topo_kind k = tc_topo_kind(t);
	int p = tc_topo_nodes(t);
	switch (a) {
	case A_HYPERCUBE:
		return k == TC_TOPO_HYPERCUBE || (k == TC_TOPO_COMPLETE && is_pow2(p));
	case A_BINOMIAL:
	case A_LINEAR:
		return 1;
	case A_RING:
	case A_PIPE:
		return k == TC_TOPO_RING || k == TC_TOPO_COMPLETE || k == TC_TOPO_HYPERCUBE;
	case A_RING_RD:
		return k == TC_TOPO_RING || k == TC_TOPO_CHAIN;
	case A_MESH:
		return k == TC_TOPO_MESH || k == TC_TOPO_TORUS;
	case A_DOT:
		return allport && (k == TC_TOPO_MESH || k == TC_TOPO_TORUS ||
		                   k == TC_TOPO_HYPERCUBE || k == TC_TOPO_RING || k == TC_TOPO_CHAIN);
	}
	return 0;
}

static struct tc_model make_model(enum tc_ports ports, enum tc_switching sw, double tc)
{
	struct tc_model m;
	tc_model_default(&m);
	m.ts_ns = TS_NS;
	m.tw_ns = TW_NS;
	m.th_ns = sw == TC_SWITCH_CT ? TH_NS : 0.0;
	m.tc_ns = tc;
	m.ports = ports;
	m.switching = sw;
	return m;
}

static enum tc_wait_policy test_wait(void)
{
	const char *w = getenv("TC_TEST_WAIT");
	if (w && !strcmp(w, "yield"))
		return TC_WAIT_YIELD;
	if (w && !strcmp(w, "spin"))
		return TC_WAIT_SPIN;
	if (w && !strcmp(w, "block"))
		return TC_WAIT_BLOCK;
	return TC_WAIT_AUTO;
}

static struct tc_team *team_new(const char *spec, const struct tc_model *md)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.model = *md;
	cfg.wait = test_wait();
	cfg.timeout_ms = 30000;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	return team;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* The roots {0, p-1, p/2}, without repeats. */
static int roots_of(int p, int *r)
{
	int n = 0;
	int c[3] = {0, p - 1, p / 2};
	for (int i = 0; i < 3; i++) {
		int dup = 0;
		for (int j = 0; j < n; j++)
			dup |= r[j] == c[i];
		if (!dup)
			r[n++] = c[i];
	}
	return n;
}

/* ---- 1. results: broadcast ------------------------------------------------ */

struct bc_case {
	int alg;
	size_t count; /* int32 elements */
	int root;
	int packets;
	int expect; /* 0 or TC_ENOTSUP */
};

struct failure {
	_Atomic long n;
	_Atomic int have;
	char what[256];
};

static void fail_note(struct failure *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail_note(struct failure *f, const char *fmt, ...)
{
	atomic_fetch_add(&f->n, 1);
	int expect = 0;
	if (atomic_compare_exchange_strong(&f->have, &expect, 1)) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(f->what, sizeof f->what, fmt, ap);
		va_end(ap);
	}
}

struct bc_run {
	const struct bc_case *cs;
	int ncs;
	size_t maxcount;
	struct failure f;
};

static uint32_t bc_pattern(int c, size_t i)
{
	return (uint32_t)mix64(((uint64_t)c << 32) ^ i ^ 0x5bd1e995u);
}

static int bc_fn(struct tc_proc *proc, void *argp)
{
	struct bc_run *a = argp;
	int me = tc_rank(proc);
	uint32_t *buf = malloc((a->maxcount + 1) * sizeof *buf);
	if (!buf)
		return TC_ENOMEM;
	for (int c = 0; c < a->ncs; c++) {
		const struct bc_case *k = &a->cs[c];
		for (size_t i = 0; i < k->count; i++)
			buf[i] = me == k->root ? bc_pattern(c, i) : 0xA5A5A5A5u;
		buf[k->count] = 0xDEADBEEFu; /* nothing may land past the end */
		struct tc_coll_opts o = {.alg = alg_name[k->alg], .packets = k->packets};
		int rc = tc_bcast(proc, buf, k->count, TC_INT32, k->root, &o);
		if (rc != k->expect) {
			fail_note(&a->f, "%s count %zu root %d rank %d: rc %d (%s), expected %d",
			          alg_name[k->alg], k->count, k->root, me, rc, tc_strerror(rc),
			          k->expect);
			if (rc == TC_EABORTED || rc == TC_ETIMEDOUT || rc == TC_EMISMATCH)
				break;
			continue;
		}
		if (rc)
			continue;
		for (size_t i = 0; i < k->count; i++)
			if (buf[i] != bc_pattern(c, i)) {
				fail_note(&a->f, "%s count %zu root %d rank %d: element %zu wrong",
				          alg_name[k->alg], k->count, k->root, me, i);
				break;
			}
		if (buf[k->count] != 0xDEADBEEFu)
			fail_note(&a->f, "%s count %zu rank %d: wrote past the end",
			          alg_name[k->alg], k->count, me);
		struct tc_coll_info info;
		tc_last_coll(proc, &info);
		if (!info.algorithm || strcmp(info.algorithm, alg_name[k->alg]))
			fail_note(&a->f, "%s: tc_last_coll says %s", alg_name[k->alg],
			          info.algorithm ? info.algorithm : "(null)");
	}
	free(buf);
	return 0;
}

/* Runs the cases on one team and asserts that nothing failed. */
static void bc_run_cases(const char *spec, const struct tc_model *md, const struct bc_case *cs, int ncs)
{
	struct tc_team *team = team_new(spec, md);
	struct bc_run a = {.cs = cs, .ncs = ncs};
	for (int c = 0; c < ncs; c++)
		if (cs[c].count > a.maxcount)
			a.maxcount = cs[c].count;
	int err = tc_run(team, bc_fn, &a);
	if (getenv("TC_TEST_VERBOSE"))
		fprintf(stderr, "bcast %s: %d calls per rank\n", spec, ncs);
	cr_assert_eq(err, 0, "%s: tc_run: %s", spec, tc_strerror(err));
	cr_assert_eq(atomic_load(&a.f.n), 0, "%s (%s, %s): %ld failures, first: %s", spec,
	             md->ports == TC_PORTS_ALL ? "all-port" : "one-port",
	             md->switching == TC_SWITCH_CT ? "CT" : "SF", atomic_load(&a.f.n), a.f.what);
	tc_team_destroy(team);
}

/* Every algorithm on every topology admitting p: sizes, roots, explicit
 * packet counts for the pipelined ring.  One-port teams alternate SF and CT
 * (CT splits routed messages into packets); dot_allport also runs on an
 * all-port team. */
static void bcast_results_p(int p)
{
	static const size_t counts[] = {0, 1, 7, 64, 1000};
	if (tc_test_p_skipped(p))
		return;
	char specs[16][32];
	int ns = tc_test_specs_for(p, specs, 16);
	int roots[3];
	int nr = roots_of(p, roots);
	struct bc_case *cs = malloc(512 * sizeof *cs);
	for (int s = 0; s < ns; s++) {
		struct tc_topo *t = NULL;
		cr_assert_eq(tc_topo_parse(specs[s], &t), 0);
		for (int pass = 0; pass < 2; pass++) {
			int allport = pass == 1;
			if (allport && !applies(A_DOT, t, 1))
				continue;
			struct tc_model md =
			        make_model(allport ? TC_PORTS_ALL : TC_PORTS_ONE,
			                   (s + p + pass) % 2 ? TC_SWITCH_CT : TC_SWITCH_SF, 0.0);
			int n = 0;
			for (int a = 0; a < NALG; a++) {
				if (allport && a != A_DOT)
					continue;
				int ok = applies(a, t, allport);
				if (!ok) { /* one call: must say TC_ENOTSUP at once */
					cs[n++] = (struct bc_case){a, 7, p - 1, 0, TC_ENOTSUP};
					continue;
				}
				for (int c = 0; c < 5; c++)
					for (int r = 0; r < nr; r++)
						cs[n++] = (struct bc_case){a, counts[c], roots[r], 0, 0};
				if (a == A_PIPE) {
					cs[n++] = (struct bc_case){a, 1000, roots[nr - 1], 3, 0};
					cs[n++] = (struct bc_case){a, 7, roots[0], 50, 0}; /* r > count */
					cs[n++] = (struct bc_case){a, 0, roots[0], 4, 0};
				}
			}
			bc_run_cases(specs[s], &md, cs, n);
		}
		tc_topo_destroy(t);
	}
	free(cs);
}

Test(bcast_results, small_p, .timeout = 120)
{
	for (int k = 0; k < TC_TEST_NPS; k++)
		if (tc_test_ps[k] <= 8)
			bcast_results_p(tc_test_ps[k]);
}

Test(bcast_results, p13_16, .timeout = 120)
{
	bcast_results_p(13);
	bcast_results_p(16);
}

Test(bcast_results, p31_32, .timeout = 180)
{
	bcast_results_p(31);
	bcast_results_p(32);
}

Test(bcast_results, p64, .timeout = 240)
{
	bcast_results_p(64);
}

/* 1 MiB on small teams, every applicable algorithm, one root. */
Test(bcast_results, one_mib, .timeout = 120)
{
	static const int ps[] = {2, 5, 8};
	const size_t count = (1u << 20) / 4;
	for (int k = 0; k < 3; k++) {
		int p = ps[k];
		char specs[16][32];
		int ns = tc_test_specs_for(p, specs, 16);
		for (int s = 0; s < ns; s++) {
			struct tc_topo *t = NULL;
			cr_assert_eq(tc_topo_parse(specs[s], &t), 0);
			for (int allport = 0; allport < 2; allport++) {
				if (allport && !applies(A_DOT, t, 1))
					continue;
				struct bc_case cs[NALG];
				int n = 0;
				for (int a = 0; a < NALG; a++)
					if (applies(a, t, allport) && (!allport || a == A_DOT))
						cs[n++] = (struct bc_case){a, count, p / 2, 0, 0};
				struct tc_model md =
				        make_model(allport ? TC_PORTS_ALL : TC_PORTS_ONE,
				                   s % 2 ? TC_SWITCH_CT : TC_SWITCH_SF, 0.0);
				bc_run_cases(specs[s], &md, cs, n);
			}
			tc_topo_destroy(t);
		}
	}
}

/* ---- 1. results: reduce --------------------------------------------------- */

enum { K_SUM_I32, K_SUM_I64, K_SUM_U8, K_MAX_D, K_MIN_D, K_BXOR_U64, K_SUM_D, K_USER, NK };

/* Affine maps t -> a t + b (mod 2^32) packed as a | b << 32; x (op) y applies
 * x first, then y.  Associative, not commutative. */
static uint64_t affine(uint64_t x, uint64_t y)
{
	uint32_t ax = (uint32_t)x, bx = (uint32_t)(x >> 32), ay = (uint32_t)y, by = (uint32_t)(y >> 32);
	uint32_t a = ax * ay, b = ay * bx + by;
	return (uint64_t)a | (uint64_t)b << 32;
}

static void affine_fn(const void *in, void *inout, size_t count, enum tc_dtype dt, void *ctx)
{
	(void)dt;
	(void)ctx;
	const uint64_t *x = in;
	uint64_t *y = inout;
	for (size_t i = 0; i < count; i++)
		y[i] = affine(x[i], y[i]);
}

static const struct tc_user_op op_nc = {affine_fn, NULL, 0};
static const struct tc_user_op op_lie = {affine_fn, NULL, 1}; /* declared commutative */

struct rd_case {
	int alg, kind, root, in_place, lie;
	size_t count;
	int expect;
	int id; /* seeds the values: stable across the two runs */
};

static enum tc_dtype kind_dt(int k)
{
	static const enum tc_dtype dt[NK] = {TC_INT32,  TC_INT64,  TC_UINT8,  TC_DOUBLE,
	                                     TC_DOUBLE, TC_UINT64, TC_DOUBLE, TC_UINT64};
	return dt[k];
}

static enum tc_op kind_op(int k)
{
	static const enum tc_op op[NK] = {TC_OP_SUM, TC_OP_SUM,  TC_OP_SUM, TC_OP_MAX,
	                                  TC_OP_MIN, TC_OP_BXOR, TC_OP_SUM, TC_OP_USER};
	return op[k];
}

/* Rank r's element i of case c. */
static void rd_value(int kind, int c, int r, size_t i, void *out)
{
	uint64_t h = mix64(((uint64_t)c << 40) ^ ((uint64_t)r << 24) ^ i ^ 0x9e3779b97f4a7c15ull);
	switch (kind) {
	case K_SUM_I32: {
		int32_t v = (int32_t)(h % 2001) - 1000;
		memcpy(out, &v, sizeof v);
		break;
	}
	case K_SUM_I64: {
		int64_t v = (int64_t)(h % (1ull << 41)) - (int64_t)(1ull << 40);
		memcpy(out, &v, sizeof v);
		break;
	}
	case K_SUM_U8: {
		uint8_t v = (uint8_t)h;
		memcpy(out, &v, sizeof v);
		break;
	}
	case K_MAX_D:
	case K_MIN_D:
	case K_SUM_D: {
		double v = ldexp((double)(int64_t)(h % 2000001) - 1000000.0, (int)((h >> 40) % 41) - 20);
		memcpy(out, &v, sizeof v);
		break;
	}
	default: { /* BXOR, USER */
		uint64_t v = kind == K_USER ? h | 1 : h;
		memcpy(out, &v, sizeof v);
	}
	}
}

/* acc = acc (op) v, acc on the left. */
static void rd_fold(int kind, void *acc, const void *v)
{
	switch (kind) {
	case K_SUM_I32: {
		int32_t a, b;
		memcpy(&a, acc, 4);
		memcpy(&b, v, 4);
		a += b;
		memcpy(acc, &a, 4);
		break;
	}
	case K_SUM_I64: {
		int64_t a, b;
		memcpy(&a, acc, 8);
		memcpy(&b, v, 8);
		a += b;
		memcpy(acc, &a, 8);
		break;
	}
	case K_SUM_U8:
		*(uint8_t *)acc = (uint8_t)(*(uint8_t *)acc + *(const uint8_t *)v);
		break;
	case K_MAX_D:
	case K_MIN_D:
	case K_SUM_D: {
		double a, b;
		memcpy(&a, acc, 8);
		memcpy(&b, v, 8);
		a = kind == K_SUM_D ? a + b : kind == K_MAX_D ? (a > b ? a : b) : (a < b ? a : b);
		memcpy(acc, &a, 8);
		break;
	}
	default: {
		uint64_t a, b;
		memcpy(&a, acc, 8);
		memcpy(&b, v, 8);
		a = kind == K_USER ? affine(a, b) : a ^ b;
		memcpy(acc, &a, 8);
	}
	}
}

struct rd_run {
	const struct rd_case *cs;
	int ncs;
	size_t maxbytes;
	uint64_t *hash; /* per case: FNV of the root's SUM double result */
	struct failure f;
};

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static int rd_fn(struct tc_proc *proc, void *argp)
{
	struct rd_run *a = argp;
	int me = tc_rank(proc), p = tc_size(proc);
	unsigned char *sb = malloc(a->maxbytes + 8), *rb = malloc(a->maxbytes + 8);
	unsigned char *ref = malloc(a->maxbytes + 8), *v = malloc(16), *r2 = malloc(a->maxbytes + 8);
	if (!sb || !rb || !ref || !v || !r2)
		return TC_ENOMEM;
	for (int c = 0; c < a->ncs; c++) {
		const struct rd_case *k = &a->cs[c];
		enum tc_dtype dt = kind_dt(k->kind);
		size_t es = tc_dtype_size(dt), bytes = k->count * es;
		int root = me == k->root;
		for (size_t i = 0; i < k->count; i++)
			rd_value(k->kind, k->id, me, i, sb + i * es);
		memset(rb, 0xEE, bytes + 8);
		const void *send = sb;
		if (root && k->in_place) {
			memcpy(rb, sb, bytes);
			send = TC_IN_PLACE;
		}
		struct tc_coll_opts o = {.alg = alg_name[k->alg],
		                         .user_op = k->kind == K_USER ? (k->lie ? &op_lie : &op_nc)
		                                                      : NULL};
		int rc = tc_reduce(proc, send, root ? rb : NULL, k->count, dt, kind_op(k->kind),
		                   k->root, &o);
		if (rc != k->expect) {
			fail_note(&a->f,
			          "reduce %s kind %d count %zu root %d rank %d: rc %d (%s), expected %d",
			          alg_name[k->alg], k->kind, k->count, k->root, me, rc,
			          tc_strerror(rc), k->expect);
			if (rc == TC_EABORTED || rc == TC_ETIMEDOUT || rc == TC_EMISMATCH)
				break;
			continue;
		}
		if (rc)
			continue;
		if (k->kind == K_SUM_D) { /* the same call again: bit for bit */
			if (root && k->in_place)
				memcpy(r2, sb, bytes);
			rc = tc_reduce(proc, root && k->in_place ? TC_IN_PLACE : sb,
			               root ? r2 : NULL, k->count, dt, kind_op(k->kind), k->root, &o);
			if (rc)
				fail_note(&a->f, "reduce %s again: rc %d", alg_name[k->alg], rc);
			else if (root && memcmp(r2, rb, bytes))
				fail_note(&a->f, "reduce %s sum double p %d root %d: two calls differ",
				          alg_name[k->alg], p, k->root);
		}
		if (!root)
			continue;
		if (rb[bytes] != 0xEE)
			fail_note(&a->f, "reduce %s: wrote past the end", alg_name[k->alg]);
		/* The sequential reference, rank 0 leftmost. */
		for (size_t i = 0; i < k->count; i++) {
			rd_value(k->kind, k->id, 0, i, ref + i * es);
			for (int r = 1; r < p; r++) {
				rd_value(k->kind, k->id, r, i, v);
				rd_fold(k->kind, ref + i * es, v);
			}
		}
		if (k->kind == K_SUM_D) {
			a->hash[c] = fnv(rb, bytes);
			for (size_t i = 0; i < k->count; i++) {
				double x, y, mag = 0.0;
				memcpy(&x, rb + i * 8, 8);
				memcpy(&y, ref + i * 8, 8);
				for (int r = 0; r < p; r++) {
					double w;
					rd_value(k->kind, k->id, r, i, &w);
					mag += fabs(w);
				}
				if (!(fabs(x - y) <= 1e-13 * mag * p)) {
					fail_note(&a->f,
					          "reduce %s sum double p %d root %d element %zu: %.17g vs %.17g",
					          alg_name[k->alg], p, k->root, i, x, y);
					break;
				}
			}
		} else if (memcmp(rb, ref, bytes)) {
			fail_note(&a->f, "reduce %s kind %d p %d root %d count %zu%s: wrong result",
			          alg_name[k->alg], k->kind, p, k->root, k->count,
			          k->in_place ? " in place" : "");
		}
	}
	free(sb);
	free(rb);
	free(ref);
	free(v);
	free(r2);
	return 0;
}

/* Reductions on every topology admitting p: for each applicable algorithm
 * every (datatype, operator) at every root, sizes rotating over {1, 7, 64,
 * 1000}, size 0 once, in place at the root for every other case; the
 * non-commutative operator in rank order with linear (ORDERED, any root) and,
 * declared commutative, with binomial from root 0 (its dual is rank-ordered
 * there).  SUM double: twice per run, and the whole run twice, bit for bit. */
static void reduce_results_p(int p)
{
	static const size_t counts[] = {1, 7, 64, 1000};
	if (tc_test_p_skipped(p))
		return;
	char specs[16][32];
	int ns = tc_test_specs_for(p, specs, 16);
	int roots[3];
	int nr = roots_of(p, roots);
	struct rd_case *cs = malloc(1024 * sizeof *cs);
	for (int s = 0; s < ns; s++) {
		struct tc_topo *t = NULL;
		cr_assert_eq(tc_topo_parse(specs[s], &t), 0);
		for (int allport = 0; allport < 2; allport++) {
			if (allport && !applies(A_DOT, t, 1))
				continue;
			int n = 0;
			for (int a = 0; a < NALG; a++) {
				if (allport && a != A_DOT)
					continue;
				if (!applies(a, t, allport)) {
					cs[n] = (struct rd_case){a, K_SUM_I32, 0,          0,
					                         0, 7,         TC_ENOTSUP, n};
					n++;
					continue;
				}
				cs[n] = (struct rd_case){a, K_SUM_I32, roots[nr - 1], 0, 0, 0,
				                         0, n};
				n++;
				for (int r = 0; r < nr; r++)
					for (int k = 0; k < NK; k++) {
						int expect = k == K_USER && a != A_LINEAR ? TC_ENOTSUP
						                                          : 0;
						cs[n] = (struct rd_case){a,
						                         k,
						                         roots[r],
						                         n % 2,
						                         0,
						                         counts[(r + k) % 4],
						                         expect,
						                         n};
						n++;
					}
				if (a == A_BINOMIAL) {
					cs[n] = (struct rd_case){a, K_USER, 0, 0, 1, 64, 0, n};
					n++;
				}
			}
			struct tc_model md =
			        make_model(allport ? TC_PORTS_ALL : TC_PORTS_ONE,
			                   (s + p) % 2 ? TC_SWITCH_CT : TC_SWITCH_SF, TC_NS);
			struct tc_team *team = team_new(specs[s], &md);
			uint64_t *h1 = calloc((size_t)n, sizeof *h1),
			         *h2 = calloc((size_t)n, sizeof *h2);
			for (int pass = 0; pass < 2; pass++) {
				struct rd_run run = {.cs = cs, .ncs = n, .hash = pass ? h2 : h1};
				for (int c = 0; c < n; c++)
					if (cs[c].count * 8 > run.maxbytes)
						run.maxbytes = cs[c].count * 8;
				int err = tc_run(team, rd_fn, &run);
				if (getenv("TC_TEST_VERBOSE"))
					fprintf(stderr, "reduce %s: %d calls per rank\n", specs[s], n);
				cr_assert_eq(err, 0, "%s: tc_run: %s", specs[s], tc_strerror(err));
				cr_assert_eq(atomic_load(&run.f.n), 0, "%s: %ld failures, first: %s",
				             specs[s], atomic_load(&run.f.n), run.f.what);
				if (pass == 0) { /* the second run: SUM double only */
					int m = 0;
					for (int c = 0; c < n; c++)
						if (cs[c].kind == K_SUM_D && cs[c].expect == 0) {
							cs[m] = cs[c];
							h1[m++] = h1[c];
						}
					n = m;
				}
			}
			for (int c = 0; c < n; c++)
				cr_assert_eq(h1[c], h2[c], "%s: %s sum double root %d: runs differ",
				             specs[s], alg_name[cs[c].alg], cs[c].root);
			free(h1);
			free(h2);
			tc_team_destroy(team);
		}
		tc_topo_destroy(t);
	}
	free(cs);
}

Test(reduce_results, small_p, .timeout = 120)
{
	for (int k = 0; k < TC_TEST_NPS; k++)
		if (tc_test_ps[k] <= 8)
			reduce_results_p(tc_test_ps[k]);
}

Test(reduce_results, p13_16, .timeout = 120)
{
	reduce_results_p(13);
	reduce_results_p(16);
}

Test(reduce_results, p31_32, .timeout = 180)
{
	reduce_results_p(31);
	reduce_results_p(32);
}

Test(reduce_results, p64, .timeout = 240)
{
	reduce_results_p(64);
}

/* ---- 2. modelled time: closed forms written here ------------------------ */

/* The model in integer picoseconds. */
struct q {
	int64_t ts, tw, th, tc;
	int ct, allport;
};

static struct q q_of(const struct tc_model *md)
{
	struct q q = {(int64_t)llround(md->ts_ns * 1000), (int64_t)llround(md->tw_ns * 1000),
	              (int64_t)llround(md->th_ns * 1000), (int64_t)llround(md->tc_ns * 1000),
	              md->switching == TC_SWITCH_CT,      md->ports == TC_PORTS_ALL};
	return q;
}

/* One message of m bytes over l links. */
static int64_t msg(const struct q *q, uint64_t m, int l)
{
	int64_t L = q->ts + (int64_t)m * q->tw;
	if (l <= 0)
		return 0;
	return q->ct ? L + l * q->th : l * L;
}

/* Links along the slowest chain of the halving recursive doubling on
 * [lo, hi] from h, store-and-forward: a sender is busy one link's time, its
 * message arrives after d links (the split rule of tc_cost_bcast_chain_rd). */
static long halving_links(int lo, int hi, int h)
{
	int n = hi - lo + 1, k = n / 2;
	if (n < 2)
		return 0;
	int olo, ohi, nh, xlo, xhi;
	if (h - lo < k) {
		olo = lo, ohi = lo + k - 1, nh = lo + k, xlo = lo + k, xhi = hi;
	} else if (hi - h < k) {
		olo = hi - k + 1, ohi = hi, nh = hi - k, xlo = lo, xhi = hi - k;
	} else {
		olo = lo + k, ohi = hi, nh = lo + k - 1, xlo = lo, xhi = lo + k - 1;
	}
	long stay = 1 + halving_links(olo, ohi, h);
	long go = labs((long)h - nh) + halving_links(xlo, xhi, nh);
	return stay > go ? stay : go;
}

/* Recursive doubling on one line of z nodes from coordinate a (ring: any). */
static int64_t rd_line(const struct q *q, uint64_t m, int z, int a, int ring)
{
	int64_t L = q->ts + (int64_t)m * q->tw;
	if (z < 2)
		return 0;
	if (q->ct) {
		long far = ring ? z - 1 : (a > z - 1 - a ? a : z - 1 - a);
		return log2_ceil(z) * L + far * q->th;
	}
	return (ring ? z - 1 : halving_links(0, z - 1, a)) * L;
}

/* Mesh/torus dims and the root's coordinates (ring and chain: one dim). */
static int shape(const struct tc_topo *t, int root, int *z, int *a)
{
	enum tc_topo_kind k = tc_topo_kind(t);
	int nd = 1;
	if (k == TC_TOPO_MESH || k == TC_TOPO_TORUS) {
		nd = tc_topo_dims(t, z);
		tc_topo_coords(t, root, a);
	} else {
		z[0] = tc_topo_nodes(t);
		a[0] = root;
	}
	return nd;
}

/* The broadcast's time by the rules of [Barnat-IB109], [KKA-I] and
 * [Goubault-ring], or -1 when there is no closed form here for this case. */
static int64_t expect_bcast(int alg, const struct tc_topo *t, const struct q *q, uint64_t m,
                            uint64_t es, int root, int packets)
{
	enum tc_topo_kind k = tc_topo_kind(t);
	int p = tc_topo_nodes(t);
	int64_t L = q->ts + (int64_t)m * q->tw, L1 = msg(q, m, 1);
	int z[8], a[8];
	switch (alg) {
	case A_HYPERCUBE:
		return log2_ceil(p) * L1;
	case A_BINOMIAL: { /* the tree's chains: a sender is busy L, a receiver
	                      gets the data T(m, route) after the send starts */
		int64_t *c = calloc((size_t)p, sizeof *c), ms = 0;
		int top = 1;
		while (top < p)
			top <<= 1;
		for (int b = top / 2; b >= 1; b /= 2)
			for (int v = 0; v + b < p; v += 2 * b) {
				int s = (v + root) % p, d = (v + b + root) % p;
				c[d] = c[s] + msg(q, m, tc_topo_distance(t, s, d));
				c[s] += L;
			}
		for (int i = 0; i < p; i++)
			ms = c[i] > ms ? c[i] : ms;
		free(c);
		return ms;
	}
	case A_LINEAR: { /* one port: the k-th send starts at k L */
		if (q->allport)
			return -1;
		int64_t ms = p > 1 ? (p - 1) * L : 0;
		for (int i = 0; i < p - 1; i++) {
			int d = i < root ? root - 1 - i : i + 1;
			int64_t arr = i * L + msg(q, m, tc_topo_distance(t, root, d));
			ms = arr > ms ? arr : ms;
		}
		return ms;
	}
	case A_RING:
		return (p - 1) * L1;
	case A_PIPE: {
		if (p < 2)
			return 0;
		uint64_t n = m / es;
		int64_t r = packets < 1 ? 1 : packets;
		if ((uint64_t)r > n)
			r = n ? (int64_t)n : 1;
		int64_t b0 = (int64_t)((n + (uint64_t)r - 1) / (uint64_t)r * es);
		return (p - 2) * (q->ts + b0 * q->tw) + r * q->ts + (int64_t)m * q->tw +
		       (q->ct ? (p - 1) * q->th : 0);
	}
	case A_RING_RD:
		return rd_line(q, m, p, root, k == TC_TOPO_RING);
	case A_MESH: {
		int nd = shape(t, root, z, a);
		int64_t s = 0;
		for (int i = 0; i < nd; i++)
			s += rd_line(q, m, z[i], a[i], k == TC_TOPO_TORUS);
		return s;
	}
	case A_DOT: {
		long exc = 0;
		if (k == TC_TOPO_HYPERCUBE) {
			exc = log2_ceil(p);
		} else {
			int nd = shape(t, root, z, a);
			int wrap = k == TC_TOPO_TORUS || k == TC_TOPO_RING;
			for (int i = 0; i < nd; i++)
				exc += wrap ? z[i] / 2
				            : (a[i] > z[i] - 1 - a[i] ? a[i] : z[i] - 1 - a[i]);
		}
		return exc * L1;
	}
	}
	return -1;
}

static int middle_of_odd_chain(enum tc_topo_kind k, int z, int a)
{
	return (k == TC_TOPO_CHAIN || k == TC_TOPO_MESH) && z % 2 == 1 && z > 1 && a == z / 2;
}

static int cmp64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* The dual reduction's time, or -1 when there is no exact closed form here. */
static int64_t expect_reduce(int alg, const struct tc_topo *t, const struct q *q, uint64_t m,
                             uint64_t es, int root, int packets)
{
	enum tc_topo_kind k = tc_topo_kind(t);
	int p = tc_topo_nodes(t);
	int64_t L = q->ts + (int64_t)m * q->tw, L1 = msg(q, m, 1), C = (int64_t)m * q->tc;
	int z[8], a[8];
	if (q->allport && alg != A_DOT)
		return -1; /* receives over different links overlap: one-port forms */
	switch (alg) {
	case A_HYPERCUBE:
		return log2_ceil(p) * (L1 + C);
	case A_BINOMIAL: /* every route one link and every subtree full: each round
	                    one receive and one combine on the root's chain (for
	                    other p a combine may overlap the next receive) */
		if (is_pow2(p) && !q->allport &&
		    (k == TC_TOPO_COMPLETE || (k == TC_TOPO_HYPERCUBE && root == 0)))
			return log2_ceil(p) * (L1 + C);
		return -1;
	case A_LINEAR: { /* all arrive in one round; one receive port, then combines */
		if (q->allport)
			return -1;
		int64_t *arr = malloc((size_t)(p > 1 ? p : 1) * sizeof *arr), done = 0;
		for (int i = 0; i < p - 1; i++)
			arr[i] = msg(q, m, tc_topo_distance(t, i < root ? root - 1 - i : i + 1, root));
		qsort(arr, (size_t)(p - 1 > 0 ? p - 1 : 0), sizeof *arr, cmp64);
		for (int i = 0; i < p - 1; i++)
			done = arr[i] > done + L ? arr[i] : done + L;
		free(arr);
		return done + (p - 1) * C;
	}
	case A_RING:
		return (p - 1) * (L1 + C);
	case A_PIPE: {
		if (p < 2)
			return 0;
		uint64_t n = m / es;
		int64_t r = packets < 1 ? 1 : packets;
		if ((uint64_t)r > n)
			r = n ? (int64_t)n : 1;
		if (n % (uint64_t)r || q->ct)
			return -1;
		int64_t b = (int64_t)(m / (uint64_t)r);
		if (p == 2) /* the only sender never combines */
			return r * (q->ts + b * q->tw) + b * q->tc;
		return (p - 2 + r) * (q->ts + b * q->tw + b * q->tc);
	}
	case A_RING_RD:
	case A_MESH: { /* plus one combine per round, except that on a chain of
	                  odd length from its middle node a combine overlaps the
	                  next receive (then the sum is an upper bound) */
		int nd = shape(t, root, z, a);
		int64_t s = expect_bcast(alg, t, q, m, es, root, packets);
		for (int i = 0; i < nd; i++) {
			if (C && middle_of_odd_chain(k, z[i], a[i]))
				return -1;
			s += log2_ceil(z[i]) * C;
		}
		return s;
	}
	case A_DOT:
		return q->tc ? -1 : expect_bcast(alg, t, q, m, es, root, packets);
	}
	return -1;
}

/* r_opt of [Goubault-ring] by brute force: the r in [1, floor(m)] minimising
 * (p-2+r)(s + (m/r) t_w), s = t_s (+ t_h under CT), the smaller on a tie;
 * then at most the element count. */
static int64_t r_opt(const struct q *q, int p, uint64_t m, uint64_t es)
{
	int64_t best = 1;
	if (p > 2 && m >= 2) {
		int64_t s = q->ts + (q->ct ? q->th : 0), mt = (int64_t)m * q->tw;
		for (int64_t r = 2; r <= (int64_t)m; r++) {
			/* f(r) < f(best) with f(r) = (p-2+r)(s r + mt) / r */
			/* below 2^63 for p <= 100, m <= 4096 */
			int64_t lhs = (p - 2 + r) * (s * r + mt) * best;
			int64_t rhs = (p - 2 + best) * (s * best + mt) * r;
			if (lhs < rhs)
				best = r;
		}
	}
	uint64_t n = m / es;
	if ((uint64_t)best > n)
		best = n ? (int64_t)n : 1;
	return best;
}

/* Is the source's closed form (formula_ns) exact for this case (the algorithm
 * files say where)?  1 exact, 0 an upper bound of the modelled time, -1 no
 * claim. */
static int formula_claim(int alg, enum tc_coll coll, const struct tc_topo *t,
                         const struct tc_model *md, uint64_t m, uint64_t es, int root, int64_t r)
{
	enum tc_topo_kind k = tc_topo_kind(t);
	int p = tc_topo_nodes(t);
	int all_one_hop = k == TC_TOPO_COMPLETE || p <= 2;
	if (coll == TC_COLL_REDUCE && md->ports == TC_PORTS_ALL && alg != A_DOT)
		return -1; /* the reductions' closed forms are one-port ones */
	int ct = md->switching == TC_SWITCH_CT && md->th_ns != 0.0;
	switch (alg) {
	case A_HYPERCUBE:
	case A_RING:
		return 1;
	case A_RING_RD:
	case A_MESH: {
		int z[8], a[8];
		int nd = shape(t, root, z, a);
		if (coll == TC_COLL_REDUCE && md->tc_ns != 0.0)
			for (int i = 0; i < nd; i++)
				if (middle_of_odd_chain(k, z[i], a[i]))
					return 0;
		return 1;
	}
	case A_DOT:
		return coll == TC_COLL_BCAST || md->tc_ns == 0.0 ? 1 : -1;
	case A_PIPE: {
		uint64_t n = m / es;
		if (n % (uint64_t)r)
			return -1;
		if (coll == TC_COLL_REDUCE && p == 2 && md->tc_ns != 0.0)
			return 0; /* cost.h charges r combines, the root does 1 */
		return md->switching == TC_SWITCH_SF || r == 1 || md->th_ns == 0.0 ? 1 : -1;
	}
	case A_BINOMIAL: /* under CT a chain pays t_h only where it receives */
		if (coll == TC_COLL_REDUCE && md->ports == TC_PORTS_ALL)
			return -1; /* the receives of different rounds overlap */
		if ((all_one_hop || (k == TC_TOPO_HYPERCUBE && root == 0)) &&
		    (is_pow2(p) || (!ct && coll == TC_COLL_BCAST) || (!ct && md->tc_ns == 0.0)))
			return 1;
		return coll == TC_COLL_BCAST ? 0 : -1;
	case A_LINEAR: /* under CT the t_h of the p-1 sends overlap */
		if (md->ports == TC_PORTS_ALL)
			return -1;
		if ((all_one_hop || (k == TC_TOPO_STAR && root == 0)) && (!ct || p <= 2))
			return 1;
		return coll == TC_COLL_BCAST ? 0 : -1;
	}
	return -1;
}

/* No link carries two transfers at overlapping times ([KKA-I]'s NODUP and
 * contention-free schedules). */
static int contention_free(int alg)
{
	return alg == A_HYPERCUBE || alg == A_RING || alg == A_PIPE || alg == A_RING_RD ||
	       alg == A_MESH || alg == A_DOT;
}

static long ncase;

static void time_case(const char *spec, const struct tc_topo *t, const struct tc_model *md, int alg,
                      enum tc_coll coll, uint64_t m, uint64_t es, int root, int packets)
{
	struct q q = q_of(md);
	int p = tc_topo_nodes(t);
	int ok = applies(alg, t, md->ports == TC_PORTS_ALL);
	struct tc_prediction pr;
	int rc = tc_predict(t, md, coll, alg_name[alg], m, es, root, packets, &pr);
	cr_assert_eq(rc, ok ? 0 : TC_ENOTSUP, "%s %s on %s: rc %d", tc_coll_name(coll),
	             alg_name[alg], spec, rc);
	if (!ok)
		return;
	ncase++;
	int64_t r = packets ? packets : r_opt(&q, p, m, es);
	if ((uint64_t)r > m / es)
		r = m / es ? (int64_t)(m / es) : 1;
	if (alg == A_PIPE)
		cr_assert_eq(pr.rounds, p > 1 ? p - 2 + r : 0, "%s p %d m %lu: r = %ld", spec, p,
		             (unsigned long)m, (long)r);
	int64_t want = coll == TC_COLL_BCAST ? expect_bcast(alg, t, &q, m, es, root, (int)r)
	                                     : expect_reduce(alg, t, &q, m, es, root, (int)r);
	const char *sw = md->switching == TC_SWITCH_CT ? "CT" : "SF";
	const char *pt = md->ports == TC_PORTS_ALL ? "all-port" : "one-port";
	(void)spec; /* the plain harness drops the messages */
	(void)sw;
	(void)pt;
	if (want >= 0)
		cr_assert_eq(pr.modelled_ps, want,
		             "%s %s on %s (%s %s) m %lu root %d r %ld: %ld ps, want %ld",
		             tc_coll_name(coll), alg_name[alg], spec, pt, sw, (unsigned long)m,
		             root, (long)r, (long)pr.modelled_ps, (long)want);
	if (coll == TC_COLL_REDUCE && alg == A_DOT) /* one combine per step at least */
		cr_assert_geq(pr.modelled_ps, expect_bcast(alg, t, &q, m, es, root, 0) +
		                                      (int64_t)m * q.tc *
		                                              (expect_bcast(alg, t, &q, m, es, root, 0) /
		                                               (msg(&q, m, 1) ? msg(&q, m, 1) : 1)));
	int claim = formula_claim(alg, coll, t, md, m, es, root, r);
	int64_t f = (int64_t)llround(pr.formula_ns * 1000.0);
	if (claim == 1)
		cr_assert_eq(f, pr.modelled_ps,
		             "%s %s on %s (%s %s) m %lu root %d: formula %ld ps, modelled %ld",
		             tc_coll_name(coll), alg_name[alg], spec, pt, sw, (unsigned long)m,
		             root, (long)f, (long)pr.modelled_ps);
	else if (claim == 0)
		cr_assert_geq(f, pr.modelled_ps, "%s %s on %s: formula below the modelled time",
		              tc_coll_name(coll), alg_name[alg], spec);
	if (coll == TC_COLL_BCAST) {
		cr_assert_eq(pr.nodup_violations, 0, "%s on %s root %d: NODUP", alg_name[alg], spec, root);
		cr_assert_eq(pr.noho_violations, 0, "%s on %s root %d: NOHO", alg_name[alg], spec, root);
		cr_assert_eq(pr.messages, alg == A_PIPE ? (p - 1) * r : p - 1);
		if (alg != A_LINEAR)
			cr_assert_eq(pr.oneport_violations, 0, "%s on %s: 1-port", alg_name[alg], spec);
		if (contention_free(alg))
			cr_assert_eq(pr.contention, 0,
			             "%s on %s (%s %s) root %d m %lu: %ld conflicts", alg_name[alg],
			             spec, pt, sw, root, (unsigned long)m, pr.contention);
	}
}

/* Sizes (bytes, element size) of the timing tests: r divides 1000/4 = 250
 * elements for r = 5 and 10, not for r = 3 or 7. */
static const uint64_t tm_bytes[] = {0, 8, 1000, 4096};
static const uint64_t tm_es[] = {1, 8, 4, 8};

static void time_all(enum tc_coll coll, const struct tc_model *mds, int nmd, const int *ps, int nps)
{
	for (int k = 0; k < nps; k++) {
		int p = ps[k];
		char specs[16][32];
		int ns = tc_test_specs_for(p, specs, 16);
		int roots[4] = {0, p - 1, p / 2, p / 3};
		for (int s = 0; s < ns; s++) {
			struct tc_topo *t = NULL;
			cr_assert_eq(tc_topo_parse(specs[s], &t), 0);
			for (int i = 0; i < nmd; i++)
				for (int a = 0; a < NALG; a++)
					for (int b = 0; b < 4; b++)
						for (int r = 0; r < 4; r++) {
							time_case(specs[s], t, &mds[i], a, coll,
							          tm_bytes[b], tm_es[b], roots[r], 0);
							if (a == A_PIPE && tm_bytes[b] == 1000)
								for (int pk = 3; pk <= 10; pk++)
									time_case(specs[s], t, &mds[i],
									          a, coll, 1000, 4,
									          roots[r], pk);
						}
			tc_topo_destroy(t);
		}
	}
}

static const int time_ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 32, 64, 100};
#define TIME_NPS ((int)(sizeof time_ps / sizeof time_ps[0]))

Test(bcast_time, one_port, .timeout = 120)
{
	struct tc_model mds[2] = {make_model(TC_PORTS_ONE, TC_SWITCH_SF, 0.0),
	                          make_model(TC_PORTS_ONE, TC_SWITCH_CT, 0.0)};
	time_all(TC_COLL_BCAST, mds, 2, time_ps, TIME_NPS);
	cr_assert_gt(ncase, 1000);
	if (getenv("TC_TEST_VERBOSE"))
		fprintf(stderr, "bcast one-port: %ld predictions checked\n", ncase);
}

Test(bcast_time, all_port, .timeout = 120)
{
	struct tc_model mds[2] = {make_model(TC_PORTS_ALL, TC_SWITCH_SF, 0.0),
	                          make_model(TC_PORTS_ALL, TC_SWITCH_CT, 0.0)};
	time_all(TC_COLL_BCAST, mds, 2, time_ps, TIME_NPS);
}

Test(reduce_time, one_and_all_port, .timeout = 120)
{
	struct tc_model mds[4] = {make_model(TC_PORTS_ONE, TC_SWITCH_SF, TC_NS),
	                          make_model(TC_PORTS_ONE, TC_SWITCH_CT, TC_NS),
	                          make_model(TC_PORTS_ALL, TC_SWITCH_SF, TC_NS),
	                          make_model(TC_PORTS_ALL, TC_SWITCH_SF, 0.0)};
	time_all(TC_COLL_REDUCE, mds, 4, time_ps, TIME_NPS);
}

/* Hand-computed cases, as a reader of [Barnat-IB109], [KKA-I] and
 * [Goubault-ring] would write them. */
Test(bcast_time, worked_examples, .timeout = 30)
{
	struct tc_model sf = make_model(TC_PORTS_ONE, TC_SWITCH_SF, 0.0);
	struct tc_model ct = make_model(TC_PORTS_ONE, TC_SWITCH_CT, 0.0);
	struct tc_model all = make_model(TC_PORTS_ALL, TC_SWITCH_SF, 0.0);
	struct {
		const char *spec;
		const char *alg;
		const struct tc_model *md;
		size_t m;
		int root, packets;
		long long ps;
	} c[] = {
	        /* hypercube d (t_s + m t_w): 5 (1000 + 2000) ns */
	        {"hypercube:5", "hypercube", &sf, 1000, 7, 0, 5 * 3000000LL},
	        /* ring (p-1)(t_s + m t_w) */
	        {"ring:8", "ring", &sf, 1000, 3, 0, 7 * 3000000LL},
	        /* ring under CT: (p-1)(t_s + m t_w + t_h) */
	        {"ring:8", "ring", &ct, 1000, 3, 0, 7 * 3050000LL},
	        /* pipelined (p-2+r)(t_s + (m/r) t_w): 8 + 4 - 2 = 10 rounds of 1000 + 500 ns */
	        {"ring:8", "ring_pipelined", &sf, 1000, 0, 4, 10 * 1500000LL},
	        /* Gray-code ring on Q_3, r = 2: 8 (1000 + 1000) ns */
	        {"hypercube:3", "ring_pipelined", &sf, 1000, 6, 2, 8 * 2000000LL},
	        /* ring_rd SF: p-1 links; CT: ceil(log 13) = 4 start-ups + 12 t_h */
	        {"ring:13", "ring_rd", &sf, 1000, 4, 0, 12 * 3000000LL},
	        {"ring:13", "ring_rd", &ct, 1000, 4, 0, 4 * 3000000LL + 12 * 50000LL},
	        /* chain from the middle, CT ([KKA-I] (c)): 3 start-ups + max(3, 3) t_h */
	        {"chain:7", "ring_rd", &ct, 1000, 3, 0, 3 * 3000000LL + 3 * 50000LL},
	        /* mesh 4x4 from a corner, SF: 3 + 3 links; CT: 2 log sqrt(16) = 4 steps */
	        {"mesh:4x4", "mesh", &sf, 1000, 0, 0, 6 * 3000000LL},
	        {"mesh:4x4", "mesh", &ct, 1000, 0, 0, 4 * 3000000LL + 6 * 50000LL},
	        /* torus 4x4, CT: 4 steps + (3 + 3) t_h */
	        {"torus:4x4", "mesh", &ct, 1000, 5, 0, 4 * 3000000LL + 6 * 50000LL},
	        /* all-port DOT: exc = 2 + 2 on mesh 5x5 from the centre */
	        {"mesh:5x5", "dot_allport", &all, 1000, 12, 0, 4 * 3000000LL},
	        /* all-port SBT on Q_4: n steps */
	        {"hypercube:4", "dot_allport", &all, 1000, 9, 0, 4 * 3000000LL},
	        /* linear on the complete graph: (p-1)(t_s + m t_w) */
	        {"complete:6", "linear", &sf, 1000, 2, 0, 5 * 3000000LL},
	        /* binomial on the complete graph: ceil(log 6) = 3 steps */
	        {"complete:6", "binomial", &sf, 1000, 2, 0, 3 * 3000000LL},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct tc_topo *t = NULL;
		cr_assert_eq(tc_topo_parse(c[i].spec, &t), 0);
		struct tc_prediction pr;
		int rc = tc_predict(t, c[i].md, TC_COLL_BCAST, c[i].alg, c[i].m, 1, c[i].root,
		                    c[i].packets, &pr);
		cr_assert_eq(rc, 0, "%s %s: %d", c[i].spec, c[i].alg, rc);
		cr_assert_eq(pr.modelled_ps, c[i].ps, "%s %s: %ld ps, want %lld", c[i].spec,
		             c[i].alg, (long)pr.modelled_ps, c[i].ps);
		tc_topo_destroy(t);
	}
}

/* ---- 2. a real run's makespan is the prediction ------------------------- */

struct one_call {
	enum tc_coll coll;
	int alg, root;
	size_t count;
	int rc;
	tc_time_t last;
};

static int one_fn(struct tc_proc *proc, void *argp)
{
	struct one_call *a = argp;
	int32_t *buf = calloc(a->count + 1, sizeof *buf), *out = calloc(a->count + 1, sizeof *out);
	struct tc_coll_opts o = {.alg = alg_name[a->alg]};
	int rc = a->coll == TC_COLL_BCAST
	                 ? tc_bcast(proc, buf, a->count, TC_INT32, a->root, &o)
	                 : tc_reduce(proc, buf, out, a->count, TC_INT32, TC_OP_SUM, a->root, &o);
	struct tc_coll_info info;
	tc_last_coll(proc, &info);
	if (tc_rank(proc) == a->root) {
		a->rc = rc;
		a->last = info.modelled_ps;
	}
	free(buf);
	free(out);
	return rc;
}

Test(bcast_time, run_equals_prediction, .timeout = 120)
{
	static const char *specs[] = {"ring:7",    "chain:6",    "hypercube:3", "mesh:3x4",
	                              "torus:3x3", "complete:5", "star:6",      "tree:2:7"};
	struct tc_model mds[3] = {make_model(TC_PORTS_ONE, TC_SWITCH_SF, TC_NS),
	                          make_model(TC_PORTS_ONE, TC_SWITCH_CT, TC_NS),
	                          make_model(TC_PORTS_ALL, TC_SWITCH_CT, TC_NS)};
	int runs = 0;
	for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
		struct tc_topo *t = NULL;
		cr_assert_eq(tc_topo_parse(specs[s], &t), 0);
		int p = tc_topo_nodes(t);
		for (int i = 0; i < 3; i++) {
			struct tc_team *team = team_new(specs[s], &mds[i]);
			for (int a = 0; a < NALG; a++) {
				if (!applies(a, t, i == 2) || (i == 2) != (a == A_DOT))
					continue;
				for (int c = 0; c < 2; c++) {
					struct one_call oc = {c ? TC_COLL_REDUCE : TC_COLL_BCAST,
					                      a,
					                      p / 2,
					                      250,
					                      -1,
					                      0};
					struct tc_prediction pr;
					cr_assert_eq(tc_predict(t, &mds[i], oc.coll, alg_name[a],
					                        1000, 4, oc.root, 0, &pr),
					             0);
					int err = tc_run(team, one_fn, &oc);
					cr_assert_eq(err, 0, "%s %s: %s", specs[s], alg_name[a],
					             tc_strerror(err));
					struct tc_run_info ri;
					tc_team_last_run(team, &ri);
					cr_assert_eq(ri.makespan_ps, pr.modelled_ps,
					             "%s %s %s: run %ld ps, predicted %ld",
					             specs[s], tc_coll_name(oc.coll), alg_name[a],
					             (long)ri.makespan_ps, (long)pr.modelled_ps);
					cr_assert_eq(oc.last, pr.modelled_ps);
					runs++;
				}
			}
			tc_team_destroy(team);
		}
		tc_topo_destroy(t);
	}
	cr_assert_gt(runs, 40);
}

/* ---- 3. AUTO ---------------------------------------------------------------- */

Test(auto_select, no_slower_than_any, .timeout = 120)
{
	static const int ps[] = {1, 4, 5, 7, 8, 13, 16, 64};
	static const size_t bytes[] = {0, 64, 4096, 1 << 20};
	struct tc_model mds[3] = {make_model(TC_PORTS_ONE, TC_SWITCH_SF, TC_NS),
	                          make_model(TC_PORTS_ONE, TC_SWITCH_CT, TC_NS),
	                          make_model(TC_PORTS_ALL, TC_SWITCH_SF, TC_NS)};
	for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
		int p = ps[k];
		char specs[16][32];
		int ns = tc_test_specs_for(p, specs, 16);
		for (int s = 0; s < ns; s++) {
			struct tc_topo *t = NULL;
			cr_assert_eq(tc_topo_parse(specs[s], &t), 0);
			for (int i = 0; i < 3; i++)
				for (int c = 0; c < 2; c++)
					for (size_t b = 0; b < 4; b++)
						for (int root = 0; root<p; root += p> 1 ? p - 1 : 1) {
							enum tc_coll coll =
							        c ? TC_COLL_REDUCE : TC_COLL_BCAST;
							struct tc_prediction au, pr;
							cr_assert_eq(tc_predict(t, &mds[i], coll,
							                        NULL, bytes[b], 8,
							                        root, 0, &au),
							             0);
							int found = 0, n = 0;
							for (int a = 0; a < NALG; a++) {
								int rc = tc_predict(t, &mds[i], coll,
								                    alg_name[a],
								                    bytes[b], 8,
								                    root, 0, &pr);
								if (rc == TC_ENOTSUP)
									continue;
								cr_assert_eq(rc, 0);
								n++;
								cr_assert_leq(au.modelled_ps,
								              pr.modelled_ps,
								              "%s %s %zu B root %d: auto %s %ld ps > %s %ld ps",
								              specs[s],
								              tc_coll_name(coll),
								              bytes[b], root, au.algorithm,
								              (long)au.modelled_ps,
								              alg_name[a],
								              (long)pr.modelled_ps);
								if (!strcmp(au.algorithm, alg_name[a]))
									found = pr.modelled_ps ==
									        au.modelled_ps;
							}
							cr_assert_geq(n, 2, "%s: linear and binomial apply everywhere",
							              specs[s]);
							cr_assert(found, "%s: auto picked %s",
							          specs[s], au.algorithm);
						}
			tc_topo_destroy(t);
		}
	}
}
