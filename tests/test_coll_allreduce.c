/* SPDX-License-Identifier: MIT */
/*
 * Allreduce and barrier: results against a sequential reference for every
 * algorithm, topology it supports and p of the matrix; bit-identical
 * floating-point results; in-place calls; a non-commutative user operator;
 * the barrier's guarantee; modelled times against closed forms computed
 * here; real runs against predictions; AUTO; argument errors and mismatched
 * calls.
 */
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

#include "harness.h"
#include "topocoll.h"
#include "coll_check.h"
#include "util.h"

static const char *const algs[] = {"hypercube", "ring", "reduce_bcast", "linear"};
#define NALGS 4

/* ---- helpers ------------------------------------------------------------------ */

/* Non-zero: teams made by make_team_cfg() send messages of at least this
 * many bytes by single copy (so that small tests reach that path). */
static size_t single_copy_min;
/* Threads or fibres for teams made by make_team_cfg() (TC_EXEC_AUTO: the
 * library's choice). */
static enum tc_exec test_exec;

static struct tc_team *make_team_cfg(const char *spec, const struct tc_model *md,
                                     uint64_t timeout_ms, enum tc_wait_policy wait)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.single_copy_min = single_copy_min;
	cfg.exec = test_exec;
	cfg.timeout_ms = timeout_ms;
	cfg.wait = wait;
	if (md)
		cfg.model = *md;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	return team;
}

static struct tc_team *make_team_model(const char *spec, const struct tc_model *md, uint64_t timeout_ms)
{
	return make_team_cfg(spec, md, timeout_ms, TC_WAIT_AUTO);
}

static struct tc_team *make_team(const char *spec)
{
	return make_team_model(spec, NULL, 60000);
}

/* Whether algorithm alg applies to the topology (the generator's answer,
 * through the predictor), checked against the documented restriction. */
static int applies(const struct tc_topo *t, enum tc_coll coll, const char *alg)
{
	struct tc_model md;
	tc_model_default(&md);
	struct tc_prediction pr;
	int err = tc_predict(t, &md, coll, alg, 0, 1, 0, 0, &pr);
	cr_assert(err == 0 || err == TC_ENOTSUP, "%s: %s", alg, tc_strerror(err));
	enum tc_topo_kind k = tc_topo_kind(t);
	int dims[TC_TOPO_MAX_DIMS] = {0};
	int nd = k == TC_TOPO_MESH || k == TC_TOPO_TORUS ? tc_topo_dims(t, dims) : 0;
	int p = tc_topo_nodes(t);
	/* A Hamiltonian ring: a 2-D torus, a 2-D mesh with an even side and
	 * no side of 1, a 1-D torus, any grid of at most two nodes. */
	int grid_ring =
	        nd &&
	        (p <= 2 || (k == TC_TOPO_TORUS && nd <= 2) ||
	         (nd == 2 && dims[0] > 1 && dims[1] > 1 && (dims[0] % 2 == 0 || dims[1] % 2 == 0)));
	int ring_ok = k == TC_TOPO_RING || k == TC_TOPO_COMPLETE || k == TC_TOPO_HYPERCUBE || grid_ring;
	if (coll == TC_COLL_ALLREDUCE && !strcmp(alg, "ring"))
		cr_assert_eq(err == 0, ring_ok,
		             "ring applies exactly to ring, complete, hypercube and the grids "
		             "with a Hamiltonian ring (%s)",
		             tc_strerror(err));
	else if (coll == TC_COLL_ALLREDUCE && !strcmp(alg, "mesh"))
		cr_assert_eq(err == 0, nd > 0, "mesh applies exactly to mesh and torus");
	else
		cr_assert_eq(err, 0, "%s applies to every topology", alg);
	return err == 0;
}

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t s = a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full ^ c * 0x165667b19e3779f9ull;
	s ^= s >> 31;
	return tc_test_rand(&s) ^ (s == 0);
}

/* ---- datatypes and operators of the matrix -------------------------------------- */

enum { C_I32_SUM, C_U64_BXOR, C_DBL_SUM_EXACT, C_DBL_SUM_ROUND, C_DBL_MAX, C_I8_MIN, NCOMBOS };

static const struct {
	enum tc_dtype dt;
	enum tc_op op;
	const char *name;
} combos[NCOMBOS] = {
        {TC_INT32, TC_OP_SUM, "int32 sum"},
        {TC_UINT64, TC_OP_BXOR, "uint64 bxor"},
        {TC_DOUBLE, TC_OP_SUM, "double sum (dyadic: exact)"},
        {TC_DOUBLE, TC_OP_SUM, "double sum (rounding)"},
        {TC_DOUBLE, TC_OP_MAX, "double max"},
        {TC_INT8, TC_OP_MIN, "int8 min"},
};

/* Element j of rank r's contribution. */
static void value(int c, int r, size_t j, uint64_t seed, void *out)
{
	uint64_t h = mix(seed + (uint64_t)c, (uint64_t)r, j);
	switch (c) {
	case C_I32_SUM: {
		uint32_t v = (uint32_t)h; /* sums wrap */
		memcpy(out, &v, 4);
		break;
	}
	case C_U64_BXOR:
		memcpy(out, &h, 8);
		break;
	case C_DBL_SUM_EXACT: {
		/* multiples of 2^-10 below 2^20: every partial sum is exact */
		double v = (double)((int64_t)(h % (1u << 30)) - (1 << 29)) / 1024.0;
		memcpy(out, &v, 8);
		break;
	}
	case C_DBL_SUM_ROUND:
	case C_DBL_MAX: {
		/* reals of very different magnitudes: the sum's rounding depends
		 * on the order */
		double v = ((double)(h >> 11) / 9007199254740992.0 - 0.5) *
		           ldexp(1.0, (int)(h % 41) - 20);
		memcpy(out, &v, 8);
		break;
	}
	case C_I8_MIN: {
		uint8_t v = (uint8_t)h;
		memcpy(out, &v, 1);
		break;
	}
	}
}

/* acc = acc (op) x, element-wise, written independently of lib/coll/ops.c. */
static void ref_combine(int c, void *acc, const void *x)
{
	switch (c) {
	case C_I32_SUM: {
		uint32_t a, b;
		memcpy(&a, acc, 4);
		memcpy(&b, x, 4);
		a += b;
		memcpy(acc, &a, 4);
		break;
	}
	case C_U64_BXOR: {
		uint64_t a, b;
		memcpy(&a, acc, 8);
		memcpy(&b, x, 8);
		a ^= b;
		memcpy(acc, &a, 8);
		break;
	}
	case C_DBL_SUM_EXACT:
	case C_DBL_SUM_ROUND: {
		double a, b;
		memcpy(&a, acc, 8);
		memcpy(&b, x, 8);
		a += b;
		memcpy(acc, &a, 8);
		break;
	}
	case C_DBL_MAX: {
		double a, b;
		memcpy(&a, acc, 8);
		memcpy(&b, x, 8);
		if (b > a)
			a = b;
		memcpy(acc, &a, 8);
		break;
	}
	case C_I8_MIN: {
		int8_t a, b;
		memcpy(&a, acc, 1);
		memcpy(&b, x, 1);
		if (b < a)
			a = b;
		memcpy(acc, &a, 1);
		break;
	}
	}
}

/* The sequential reference, rank order, and (rounding sum) a bound on the
 * error of any order: p * eps * sum |x|. */
static void reference(int c, int p, size_t n, uint64_t seed, unsigned char *ref, double *tol)
{
	size_t es = tc_dtype_size(combos[c].dt);
	for (size_t j = 0; j < n; j++) {
		unsigned char x[8];
		double mag = 0.0;
		value(c, 0, j, seed, ref + j * es);
		for (int r = 0; r < p; r++) {
			value(c, r, j, seed, x);
			if (r)
				ref_combine(c, ref + j * es, x);
			if (c == C_DBL_SUM_ROUND) {
				double d;
				memcpy(&d, x, 8);
				mag += fabs(d);
			}
		}
		if (tol)
			tol[j] = (double)p * 2.3e-16 * mag;
	}
}

/* ---- 1. results ---------------------------------------------------------------- */

#define MAXN 1000

static const size_t sizes[] = {0, 1, 7, 64, MAXN};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

struct res_arg {
	const char *alg;
	const char *spec;
	int p;
	uint64_t seed;
	int nsizes;
	const size_t *sizes;
	unsigned char *ref[NCOMBOS][NSIZES]; /* references */
	double *tol[NSIZES];                 /* rounding sum tolerances */
	uint64_t *hash;                      /* [size][rank]: rounding sum, bitwise */
	struct failure f;
};

static uint64_t fnv(const void *b, size_t n)
{
	const unsigned char *c = b;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

static int res_fn(struct tc_proc *proc, void *argp)
{
	struct res_arg *a = argp;
	int me = tc_rank(proc);
	unsigned char *sbuf = malloc(MAXN * 8 + 1), *rbuf = malloc(MAXN * 8 + 1),
	              *first = malloc(MAXN * 8 + 1);
	struct tc_coll_opts opts = {.alg = a->alg};
	for (int si = 0; si < a->nsizes; si++) {
		size_t n = a->sizes[si];
		for (int c = 0; c < NCOMBOS; c++) {
			size_t es = tc_dtype_size(combos[c].dt);
			for (size_t j = 0; j < n; j++)
				value(c, me, j, a->seed, sbuf + j * es);
			memset(rbuf, 0xa5, n * es + 1);
			int err = tc_allreduce(proc, sbuf, rbuf, n, combos[c].dt, combos[c].op, &opts);
			if (err) {
				FAIL(&a->f, "%s %s p=%d n=%zu %s: rank %d: %s", a->alg, a->spec,
				     a->p, n, combos[c].name, me, tc_err_name(err));
				tc_team_abort(tc_proc_team(proc)); /* nobody waits for us */
				goto out;
			}
			if (rbuf[n * es] != 0xa5)
				FAIL(&a->f, "%s %s n=%zu: write past the end", a->alg, a->spec, n);
			const unsigned char *ref = a->ref[c][si];
			if (c == C_DBL_SUM_ROUND) {
				for (size_t j = 0; j < n; j++) {
					double got, want;
					memcpy(&got, rbuf + 8 * j, 8);
					memcpy(&want, ref + 8 * j, 8);
					if (!(fabs(got - want) <= a->tol[si][j]))
						FAIL(&a->f,
						     "%s %s p=%d n=%zu %s: rank %d elem %zu: %.17g vs %.17g",
						     a->alg, a->spec, a->p, n, combos[c].name, me,
						     j, got, want);
				}
				a->hash[si * a->p + me] = fnv(rbuf, n * es);
			} else if (n && memcmp(rbuf, ref, n * es)) {
				FAIL(&a->f, "%s %s p=%d n=%zu %s: rank %d differs from the reference",
				     a->alg, a->spec, a->p, n, combos[c].name, me);
			}
			if (c != C_I32_SUM && c != C_DBL_SUM_ROUND)
				continue;
			/* Again, in place: the same bits (a second run of the same
			 * call, hence also determinism). */
			memcpy(first, rbuf, n * es);
			memcpy(rbuf, sbuf, n * es);
			err = tc_allreduce(proc, TC_IN_PLACE, rbuf, n, combos[c].dt, combos[c].op, &opts);
			if (err || (n && memcmp(rbuf, first, n * es)))
				FAIL(&a->f, "%s %s p=%d n=%zu %s: rank %d: in place %s / differs",
				     a->alg, a->spec, a->p, n, combos[c].name, me, tc_err_name(err));
			/* And with the same buffer passed twice (not TC_IN_PLACE). */
			memcpy(rbuf, sbuf, n * es);
			err = tc_allreduce(proc, rbuf, rbuf, n, combos[c].dt, combos[c].op, &opts);
			if (err || (n && memcmp(rbuf, first, n * es)))
				FAIL(&a->f, "%s %s p=%d n=%zu %s: rank %d: aliased %s / differs",
				     a->alg, a->spec, a->p, n, combos[c].name, me, tc_err_name(err));
		}
	}
out:
	free(sbuf);
	free(rbuf);
	free(first);
	return 0;
}

/* Runs the matrix for alg over the ps[lo..hi) of tc_test_ps on every
 * topology; nsz sizes of the list. */
static void results_p(const char *alg, int p, char specs[][32], int ns, int nsz);

static void results(const char *alg, int lo, int hi, int nsz)
{
	if (hi > TC_TEST_NPS) /* the run's matrix (TC_TEST_PMAX, TC_TEST_PS) */
		hi = TC_TEST_NPS;
	for (int k = lo; k < hi; k++) {
		char specs[16][32];
		int ns = tc_test_specs_for(tc_test_ps[k], specs, 16);
		results_p(alg, tc_test_ps[k], specs, ns, nsz);
	}
}

/* The matrix for alg on the topologies specs[0..ns) of p nodes. */
static void results_p(const char *alg, int p, char specs[][32], int ns, int nsz)
{
	{
		struct res_arg *a = calloc(1, sizeof *a);
		a->alg = alg;
		a->p = p;
		a->seed = 1000 + (uint64_t)p;
		a->nsizes = nsz;
		a->sizes = nsz == NSIZES ? sizes : (const size_t[]){0, 7, MAXN};
		for (int si = 0; si < nsz; si++) {
			size_t n = a->sizes[si];
			for (int c = 0; c < NCOMBOS; c++) {
				a->ref[c][si] = malloc(n * 8 + 1);
				reference(c, p, n, a->seed, a->ref[c][si], NULL);
			}
			a->tol[si] = malloc((n + 1) * sizeof(double));
			reference(C_DBL_SUM_ROUND, p, n, a->seed, a->ref[C_DBL_SUM_ROUND][si],
			          a->tol[si]);
		}
		/* nsz and p are positive (the callers' constants and matrix). */
		const size_t nsz_u = nsz > 0 ? (size_t)nsz : 1, p_u = p > 0 ? (size_t)p : 1;
		a->hash = calloc(nsz_u * p_u, sizeof *a->hash);
		uint64_t *prev = calloc(nsz_u, sizeof *prev);
		for (int i = 0; i < ns; i++) {
			struct tc_team *team = make_team(specs[i]);
			if (!applies(tc_team_topo(team), TC_COLL_ALLREDUCE, alg)) {
				tc_team_destroy(team);
				continue;
			}
			a->spec = specs[i];
			int err = tc_run(team, res_fn, a);
			cr_assert_eq(err, 0, "%s %s: %s", alg, specs[i], tc_strerror(err));
			if (single_copy_min && p > 1) {
				struct tc_stats st;
				tc_team_stats(team, &st);
				cr_assert_gt(st.single_copy, 0, "%s %s: no single-copy message",
				             alg, specs[i]);
			}
			cr_assert_eq(atomic_load(&a->f.n), 0, "%d failures, first: %s",
			             atomic_load(&a->f.n), a->f.msg);
			/* The rounding sum: the same bits on every rank. */
			for (int si = 0; si < nsz; si++)
				for (int r = 1; r < p; r++)
					cr_assert_eq(a->hash[si * p + r], a->hash[si * p],
					             "%s %s n=%zu: rank %d's double sum differs from rank 0's",
					             alg, specs[i], a->sizes[si], r);
			/* hypercube and reduce_bcast combine in an order that does
			 * not depend on the topology: the same bits again. */
			for (int si = 0; si < nsz && strcmp(alg, "ring") && strcmp(alg, "auto") &&
			                 strcmp(alg, "mesh");
			     si++) {
				if (prev[si])
					cr_assert_eq(prev[si], a->hash[si * p],
					             "%s %s n=%zu: topology changed the bits", alg,
					             specs[i], a->sizes[si]);
				prev[si] = a->hash[si * p];
			}
			tc_team_destroy(team);
		}
		for (int si = 0; si < nsz; si++) {
			for (int c = 0; c < NCOMBOS; c++)
				free(a->ref[c][si]);
			free(a->tol[si]);
		}
		free(a->hash);
		free(prev);
		free(a);
	}
}

Test(allreduce, results_hypercube, .timeout = 120)
{
	results("hypercube", 0, TC_TEST_NPS, NSIZES);
}

Test(allreduce, results_ring, .timeout = 120)
{
	results("ring", 0, TC_TEST_NPS, NSIZES);
}

Test(allreduce, results_reduce_bcast, .timeout = 120)
{
	results("reduce_bcast", 0, TC_TEST_NPS, NSIZES);
}

/* The same with every message from 64 bytes on sent by single copy: the
 * executor then combines the larger ones straight out of the sender's buffer
 * (lib/sched/exec.c, "direct" receives), and the results must not change. */
Test(allreduce, results_single_copy, .timeout = 120)
{
	single_copy_min = 64;
	results("hypercube", 0, TC_TEST_NPS, NSIZES);
	results("ring", 0, TC_TEST_NPS, NSIZES);
	results("reduce_bcast", 0, 9, NSIZES);
	single_copy_min = 0;
}

/* AUTO: every rank must pick the same algorithm (p up to 16; the three
 * algorithms themselves are covered above for every p). */
Test(allreduce, results_auto, .timeout = 120)
{
	results("auto", 0, 9, 3);
}

/* 1 MiB per rank for a few small p: every algorithm, a ring and the complete
 * graph (and a hypercube for p = 4). */
struct big_arg {
	const char *alg;
	size_t n;
	struct failure f;
};

static int big_fn(struct tc_proc *proc, void *argp)
{
	struct big_arg *a = argp;
	int me = tc_rank(proc), p = tc_size(proc);
	int32_t *x = malloc(a->n * sizeof *x);
	double *d = malloc(a->n * sizeof *d);
	for (size_t j = 0; j < a->n; j++) {
		x[j] = (int32_t)(j * 2654435761u) ^ me;
		d[j] = (double)(int64_t)(j % 1000) * (me + 1) / 4.0;
	}
	struct tc_coll_opts o = {.alg = a->alg};
	int err = tc_allreduce(proc, TC_IN_PLACE, x, a->n, TC_INT32, TC_OP_BXOR, &o);
	int err2 = tc_allreduce(proc, TC_IN_PLACE, d, a->n / 2, TC_DOUBLE, TC_OP_SUM, &o);
	if (err || err2)
		FAIL(&a->f, "%s: %s %s", a->alg, tc_err_name(err), tc_err_name(err2));
	int32_t rx = 0;
	for (int r = 0; r < p; r++)
		rx ^= r;
	/* bxor of (v ^ r) over r < p: v when p is odd, 0 when even, ^ (xor of r). */
	for (size_t j = 0; j < a->n && !err; j++) {
		int32_t v = (int32_t)(j * 2654435761u);
		int32_t want = ((p % 2) ? v : 0) ^ rx;
		if (x[j] != want) {
			FAIL(&a->f, "%s p=%d: int32 bxor element %zu", a->alg, p, j);
			break;
		}
	}
	for (size_t j = 0; j < a->n / 2 && !err2; j++) {
		double want = (double)(int64_t)(j % 1000) * (double)(p * (p + 1) / 2) / 4.0;
		if (d[j] != want) {
			FAIL(&a->f, "%s p=%d: double sum element %zu", a->alg, p, j);
			break;
		}
	}
	free(x);
	free(d);
	return 0;
}

Test(allreduce, one_mebibyte, .timeout = 120)
{
	static const char *specs[] = {"complete:2", "ring:3", "hypercube:2", "complete:5"};
	for (int i = 0; i < 4; i++) {
		struct tc_team *team = make_team(specs[i]);
		for (int k = 0; k < NALGS; k++) {
			struct big_arg a = {.alg = algs[k], .n = (1u << 20) / sizeof(int32_t)};
			int err = tc_run(team, big_fn, &a);
			cr_assert_eq(err, 0, "%s %s: %s", specs[i], algs[k], tc_strerror(err));
			cr_assert_eq(atomic_load(&a.f.n), 0, "%s: %s", specs[i], a.f.msg);
		}
		tc_team_destroy(team);
	}
}

/*
 * Blocking waits and forwarding (a regression test).  hypercube allreduce of
 * 1000 doubles on chain:7: the fold-in sends 4 -> 0, 5 -> 1, 6 -> 2 along
 * the chain in one round, three 8000-byte messages through the 16 KiB
 * channel 3 -> 2.  A forwarding rank posts its outgoing half from inside the
 * wait condition (lib/sched/exec.c); the wait loop (now lib/p2p/progress.c)
 * used to raise the want_space / want_data hints before that last re-check,
 * so the new send had none, the channel was full, the rank slept and the
 * consumer that freed the space did not ring it: every rank slept until the
 * timeout.
 */
struct fwd_arg {
	struct failure f;
};

static int fwd_fn(struct tc_proc *proc, void *argp)
{
	struct fwd_arg *a = argp;
	double x[1000];
	for (int j = 0; j < 1000; j++)
		x[j] = tc_rank(proc) + j;
	struct tc_coll_opts o = {.alg = "hypercube"};
	int err = tc_allreduce(proc, TC_IN_PLACE, x, 1000, TC_DOUBLE, TC_OP_SUM, &o);
	if (err)
		FAIL(&a->f, "rank %d: %s", tc_rank(proc), tc_err_name(err));
	else if (x[999] != 7 * 999 + 21)
		FAIL(&a->f, "rank %d: wrong sum", tc_rank(proc));
	return 0;
}

Test(allreduce, blocking_waits_with_forwarding, .timeout = 60)
{
	struct tc_team *team = make_team_cfg("chain:7", NULL, 5000, TC_WAIT_BLOCK);
	for (int rep = 0; rep < 40; rep++) {
		struct fwd_arg a = {0};
		tc_run(team, fwd_fn, &a);
		cr_assert_eq(atomic_load(&a.f.n), 0, "run %d: %s", rep, a.f.msg);
	}
	tc_team_destroy(team);
}

/* ---- a non-commutative user operator ------------------------------------------- */

/* 2x2 matrices of 16-bit entries (mod 2^16) packed in a uint64. */
static uint64_t mat_mul(uint64_t x, uint64_t y)
{
	uint64_t z = 0;
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 2; c++) {
			uint32_t s = 0;
			for (int k = 0; k < 2; k++)
				s += ((uint32_t)(x >> (16 * (2 * r + k))) & 0xffffu) *
				     ((uint32_t)(y >> (16 * (2 * k + c))) & 0xffffu);
			z |= (uint64_t)(s & 0xffffu) << (16 * (2 * r + c));
		}
	return z;
}

static void mat_fn(const void *in, void *inout, size_t count, enum tc_dtype dt, void *ctx)
{
	(void)dt;
	(void)ctx;
	const uint64_t *a = in;
	uint64_t *b = inout;
	for (size_t i = 0; i < count; i++)
		b[i] = mat_mul(a[i], b[i]);
}

struct nc_arg {
	const char *alg; /* reduce_bcast, auto, or one that must refuse */
	int expect_err;
	size_t n;
	uint64_t *want;
	struct failure f;
};

static int nc_fn(struct tc_proc *proc, void *argp)
{
	struct nc_arg *a = argp;
	int me = tc_rank(proc);
	uint64_t *x = malloc((a->n + 1) * sizeof *x);
	for (size_t j = 0; j < a->n; j++)
		x[j] = mix(77, (uint64_t)me, j);
	struct tc_user_op u = {.fn = mat_fn, .commutative = 0};
	struct tc_coll_opts o = {.alg = a->alg, .user_op = &u};
	int err = tc_allreduce(proc, TC_IN_PLACE, x, a->n, TC_UINT64, TC_OP_USER, &o);
	if (err != a->expect_err) {
		FAIL(&a->f, "%s: rank %d: %s", a->alg, me, tc_err_name(err));
	} else if (!err) {
		struct tc_coll_info info;
		tc_last_coll(proc, &info);
		/* shm_tree: the groups' products in rank order, then theirs. */
		if (strcmp(info.algorithm, "reduce_bcast") && strcmp(info.algorithm, "linear") &&
		    strcmp(info.algorithm, "shm_tree"))
			FAIL(&a->f, "%s ran %s, not an ordered algorithm", a->alg, info.algorithm);
		if (a->n && memcmp(x, a->want, a->n * sizeof *x))
			FAIL(&a->f, "%s: rank %d: not the rank-ordered product", a->alg, me);
	}
	free(x);
	return 0;
}

Test(allreduce, noncommutative_user_op, .timeout = 120)
{
	static const size_t ns[] = {0, 1, 7, 64};
	for (int k = 0; k < TC_TEST_NPS; k++) {
		int p = tc_test_ps[k];
		char specs[16][32];
		int nspec = tc_test_specs_for(p, specs, 16);
		for (int i = 0; i < nspec; i += (p > 16 ? 3 : 1)) {
			struct tc_team *team = make_team(specs[i]);
			for (int si = 0; si < 4; si++) {
				size_t n = ns[si];
				uint64_t *want = malloc((n + 1) * sizeof *want);
				int differs = 0;
				for (size_t j = 0; j < n; j++) {
					uint64_t fwd = mix(77, 0, j), bwd = mix(77, (uint64_t)p - 1, j);
					for (int r = 1; r < p; r++) {
						fwd = mat_mul(fwd, mix(77, (uint64_t)r, j));
						bwd = mat_mul(bwd, mix(77, (uint64_t)(p - 1 - r), j));
					}
					want[j] = fwd;
					differs += fwd != bwd;
				}
				if (p >= 2 && n >= 7)
					cr_assert_gt(differs, 0, "the order matters on these data");
				static const char *const names[] = {"reduce_bcast", "auto",
				                                    "hypercube", "ring"};
				for (int ai = 0; ai < 4; ai++) {
					struct nc_arg a = {.alg = names[ai],
					                   .n = n,
					                   .want = want,
					                   .expect_err = ai >= 2 ? TC_ENOTSUP : 0};
					int err = tc_run(team, nc_fn, &a);
					cr_assert_eq(err, 0, "%s: %s", specs[i], tc_strerror(err));
					cr_assert_eq(atomic_load(&a.f.n), 0, "%s p=%d n=%zu: %s",
					             specs[i], p, n, a.f.msg);
				}
				free(want);
			}
			tc_team_destroy(team);
		}
	}
}

/*
 * The operand convention (lib/coll/gen.h): for each pair, the lower rank's
 * data is the left operand on both sides, so both partners of an exchange
 * compute the same expression.  The matrix product, declared commutative so
 * that every algorithm accepts it, exposes any other order: every rank must
 * hold the same bits, and for hypercube with p = 2^d (aligned blocks,
 * lower half first) and reduce_bcast the rank-ordered product.
 */
struct conv_arg {
	const char *alg;
	size_t n;
	uint64_t *hash;
	uint64_t want;
	int ordered;
	struct failure f;
};

static int conv_fn(struct tc_proc *proc, void *argp)
{
	struct conv_arg *a = argp;
	int me = tc_rank(proc);
	uint64_t *x = malloc((a->n + 1) * sizeof *x);
	for (size_t j = 0; j < a->n; j++)
		x[j] = mix(78, (uint64_t)me, j);
	struct tc_user_op u = {.fn = mat_fn, .commutative = 1};
	struct tc_coll_opts o = {.alg = a->alg, .user_op = &u};
	int err = tc_allreduce(proc, TC_IN_PLACE, x, a->n, TC_UINT64, TC_OP_USER, &o);
	if (err)
		FAIL(&a->f, "%s: rank %d: %s", a->alg, me, tc_err_name(err));
	a->hash[me] = fnv(x, a->n * sizeof *x);
	free(x);
	return 0;
}

Test(allreduce, operand_convention, .timeout = 60)
{
	const size_t n = 33;
	for (int k = 1; k < TC_TEST_NPS; k++) {
		int p = tc_test_ps[k];
		char specs[16][32];
		int nspec = tc_test_specs_for(p, specs, 16);
		uint64_t *want = malloc(n * sizeof *want);
		for (size_t j = 0; j < n; j++) {
			want[j] = mix(78, 0, j);
			for (int r = 1; r < p; r++)
				want[j] = mat_mul(want[j], mix(78, (uint64_t)r, j));
		}
		uint64_t hwant = fnv(want, n * sizeof *want);
		free(want);
		for (int i = 0; i < nspec; i += (p > 16 ? 4 : 2)) {
			struct tc_team *team = make_team(specs[i]);
			for (int ai = 0; ai < NALGS; ai++) {
				if (!applies(tc_team_topo(team), TC_COLL_ALLREDUCE, algs[ai]))
					continue;
				uint64_t hash[64];
				struct conv_arg a = {.alg = algs[ai], .n = n, .hash = hash};
				cr_assert_eq(tc_run(team, conv_fn, &a), 0);
				cr_assert_eq(atomic_load(&a.f.n), 0, "%s: %s", specs[i], a.f.msg);
				for (int r = 1; r < p; r++)
					cr_assert_eq(hash[r], hash[0],
					             "%s %s: rank %d computed another order",
					             specs[i], algs[ai], r);
				int ordered = ai == 2 || ai == 3 || (ai == 0 && (p & (p - 1)) == 0);
				if (ordered)
					cr_assert_eq(hash[0], hwant, "%s %s: not in rank order",
					             specs[i], algs[ai]);
			}
			tc_team_destroy(team);
		}
	}
}

/* ---- barrier ------------------------------------------------------------------- */

#define BARRIER_ITERS 12

Test(barrier, synchronises, .timeout = 120)
{
	static const char *const bar_algs[] = {"dissemination", "allreduce", "auto"};
	for (int k = 0; k < TC_TEST_NPS; k++) {
		int p = tc_test_ps[k];
		char specs[16][32];
		int nspec = tc_test_specs_for(p, specs, 16);
		for (int i = 0; i < nspec; i += (p > 16 ? 2 : 1)) {
			struct tc_team *team = make_team(specs[i]);
			for (int ai = 0; ai < 3; ai++) {
				if (ai < 2)
					cr_assert(applies(tc_team_topo(team), TC_COLL_BARRIER,
					                  bar_algs[ai]));
				struct bar_arg a = {.alg = bar_algs[ai], .iters = BARRIER_ITERS};
				int err = tc_run(team, bar_fn, &a);
				cr_assert_eq(err, 0, "%s: %s", specs[i], tc_strerror(err));
				cr_assert_eq(atomic_load(&a.f.n), 0, "%s: %s", specs[i], a.f.msg);
				cr_assert_eq(atomic_load(&a.count), BARRIER_ITERS * p);
			}
			tc_team_destroy(team);
		}
	}
}

/* ---- 2. modelled time ------------------------------------------------------------ */

/* The model of these tests in integer picoseconds: t_s = 1000 ns,
 * t_w = 2 ns/B, t_c = 1 ns/B, t_h = 50 ns (cut-through only). */
#define TS 1000000LL
#define TW 2000LL
#define TCB 1000LL
#define TH 50000LL

static void model(struct tc_model *md, int ct)
{
	tc_model_default(md);
	md->ts_ns = 1000.0;
	md->tw_ns = 2.0;
	md->tc_ns = 1.0;
	md->th_ns = ct ? 50.0 : 0.0;
	md->switching = ct ? TC_SWITCH_CT : TC_SWITCH_SF;
}

static int ilog2_floor(int p)
{
	int k = 0;
	while ((2 << k) <= p)
		k++;
	return k;
}

static int ilog2_ceil(int p)
{
	int k = 0;
	while ((1 << k) < p)
		k++;
	return k;
}

static long long llmax(long long a, long long b)
{
	return a > b ? a : b;
}

/* Closed forms, every transfer between neighbours, one-port, full duplex;
 * m bytes, es bytes per element.  -1: no closed form asserted. */
static long long closed_form(const char *alg, int p, long long m, long long es, int ct)
{
	long long th = ct ? TH : 0;
	long long msg = TS + m * TW + th, c = m * TCB;
	int pow2 = (p & (p - 1)) == 0;
	if (p == 1)
		return 0;
	if (!strcmp(alg, "hypercube")) {
		int k = ilog2_floor(p);
		if (pow2)
			return k * (msg + c);
		/* fold-in, k exchanges, back; the longest chain crosses at
		 * most ceil(log2 q) times within [0, q) */
		int q = p - (1 << k);
		int D = ilog2_ceil(q);
		return llmax((k + 1) * (msg + c), (k + 2) * msg + (k + 1) * c - (k - D) * th);
	}
	if (!strcmp(alg, "ring")) {
		long long count = m / es;
		long long big = (count + p - 1) / p * es;
		return 2LL * (p - 1) * (TS + big * TW + th) + (long long)(p - 1) * big * TCB;
	}
	if (!strcmp(alg, "reduce_bcast")) {
		int L = ilog2_ceil(p);
		if (pow2)
			return 2LL * L * msg + L * c;
		if (!ct && c <= msg) /* rank 0's last receive waits for its port only */
			return 2LL * L * msg + (L - 1) * c;
		return -1;
	}
	if (!strcmp(alg, "linear")) /* every rank a neighbour of 0: rank 0's
	                               port serialises its p-1 receives and sends */
		return 2LL * msg + 2LL * (p - 2) * (TS + m * TW) + (long long)(p - 1) * c;
	if (!strcmp(alg, "dissemination"))
		return ilog2_ceil(p) * (TS + th);
	if (!strcmp(alg, "allreduce")) { /* barrier: the hypercube schedule, m = 0 */
		int k = ilog2_floor(p);
		if (pow2)
			return k * (TS + th);
		int D = ilog2_ceil(p - (1 << k));
		return llmax((k + 1) * (TS + th), (k + 2) * (TS + th) - (k - D) * th);
	}
	return -1;
}

Test(model, closed_forms, .timeout = 60)
{
	static const long long counts[] = {0, 1, 3, 7, 64, 1000, 4099, 1 << 18};
	int checked = 0;
	for (int ct = 0; ct < 2; ct++) {
		struct tc_model md;
		model(&md, ct);
		for (int p = 1; p <= 64; p++) {
			for (int kind = 0; kind < 2; kind++) {
				char spec[32];
				if (kind == 0)
					snprintf(spec, sizeof spec, "complete:%d", p);
				else if ((p & (p - 1)) == 0)
					snprintf(spec, sizeof spec, "hypercube:%d", ilog2_floor(p));
				else
					continue;
				struct tc_topo *t;
				cr_assert_eq(tc_topo_parse(spec, &t), 0);
				for (int a = 0; a < NALGS; a++)
					for (int ci = 0; ci < 8; ci++)
						for (long long es = 1; es <= 8; es *= 8) {
							long long m = counts[ci] * es;
							struct tc_prediction pr;
							int err = tc_predict(t, &md, TC_COLL_ALLREDUCE,
							                     algs[a], (size_t)m,
							                     (size_t)es, 0, 0, &pr);
							cr_assert_eq(err, 0, "%s %s: %s", spec,
							             algs[a], tc_strerror(err));
							cr_assert_str_eq(pr.algorithm, algs[a]);
							/* linear is routed on hypercubes beyond Q_1 */
							int routed = !strcmp(algs[a], "linear") &&
							             kind == 1 && p > 2;
							long long want =
							        routed ? -1
							               : closed_form(algs[a], p, m,
							                             es, ct);
							if (want >= 0) {
								cr_assert_eq(pr.modelled_ps, want,
								             "%s %s m=%lld ct=%d: %lld",
								             spec, algs[a], m, ct,
								             (long long)pr.modelled_ps);
								checked++;
							}
							/* The formula of the registry agrees wherever it
							 * gives a number. */
							if (!isnan(pr.formula_ns))
								cr_assert_eq(llround(pr.formula_ns * 1000.0),
								             pr.modelled_ps,
								             "%s %s m=%lld ct=%d: formula %.3f",
								             spec, algs[a], m, ct,
								             pr.formula_ns);
							else
								cr_assert(routed || (!strcmp(algs[a], "reduce_bcast") &&
								                     (p & (p - 1))),
								          "%s %s: NAN formula",
								          spec, algs[a]);
							/* linear: rank 0's port serialises its p-1 transfers */
							cr_assert_eq(pr.oneport_violations,
							             !strcmp(algs[a], "linear") && p > 1
							                     ? 2L * (p - 2)
							                     : 0L);
						}
				static const char *const bar[] = {"dissemination", "allreduce"};
				for (int a = 0; a < 2; a++) {
					struct tc_prediction pr;
					int err = tc_predict(t, &md, TC_COLL_BARRIER, bar[a], 0, 1,
					                     0, 0, &pr);
					cr_assert_eq(err, 0);
					long long want = closed_form(bar[a], p, 0, 1, ct);
					if (kind == 1 && a == 0 && p > 2) /* routed on the hypercube */
						continue;
					cr_assert_eq(pr.modelled_ps, want, "%s barrier %s ct=%d: %lld",
					             spec, bar[a], ct, (long long)pr.modelled_ps);
					cr_assert_eq(llround(pr.formula_ns * 1000.0), pr.modelled_ps);
					checked++;
				}
				tc_topo_destroy(t);
			}
		}
	}
	cr_assert_gt(checked, 5000);
}

/* The ring on a ring and on the Gray-code ring of a hypercube: the same cost
 * (every hop a link); [Barnat-IB109]'s (t_s + m t_w) log p for the hypercube
 * exchange. */
Test(model, ring_embeddings_and_barnat_formula, .timeout = 30)
{
	struct tc_model md;
	model(&md, 0);
	md.tc_ns = 0.0;
	for (int d = 0; d <= 6; d++) {
		int p = 1 << d;
		char a[32], b[32];
		snprintf(a, sizeof a, "ring:%d", p);
		snprintf(b, sizeof b, "hypercube:%d", d);
		struct tc_topo *ta, *tb;
		cr_assert_eq(tc_topo_parse(a, &ta), 0);
		cr_assert_eq(tc_topo_parse(b, &tb), 0);
		for (long long m = 0; m <= 4096; m += 512) {
			struct tc_prediction pa, pb, ph;
			cr_assert_eq(tc_predict(ta, &md, TC_COLL_ALLREDUCE, "ring", (size_t)m, 1, 0,
			                        0, &pa),
			             0);
			cr_assert_eq(tc_predict(tb, &md, TC_COLL_ALLREDUCE, "ring", (size_t)m, 1, 0,
			                        0, &pb),
			             0);
			cr_assert_eq(pa.modelled_ps, pb.modelled_ps);
			cr_assert_eq(pb.contention, 0, "the Gray-code ring uses distinct links");
			cr_assert_eq(tc_predict(tb, &md, TC_COLL_ALLREDUCE, "hypercube", (size_t)m,
			                        1, 0, 0, &ph),
			             0);
			cr_assert_eq(ph.modelled_ps, d * (TS + m * TW)); /* (t_s + m t_w) log p */
			cr_assert_eq(ph.rounds, d);
			cr_assert_eq(ph.messages, (long)d * p);
			cr_assert_eq(ph.hop_messages, (long)d * p);
		}
		tc_topo_destroy(ta);
		tc_topo_destroy(tb);
	}
}

/* A real run's makespan equals the prediction of the same call. */
struct one_arg {
	enum tc_coll coll;
	const char *alg;
	size_t n;
	tc_time_t modelled;
	char ran[32]; /* the algorithm rank 0 ran */
	struct failure f;
};

static int one_fn(struct tc_proc *proc, void *argp)
{
	struct one_arg *a = argp;
	int me = tc_rank(proc);
	struct tc_coll_opts o = {.alg = a->alg};
	int err;
	if (a->coll == TC_COLL_BARRIER) {
		err = tc_barrier(proc, &o);
	} else {
		double *x = malloc((a->n + 1) * sizeof *x);
		for (size_t j = 0; j < a->n; j++)
			x[j] = me + (double)j;
		err = tc_allreduce(proc, TC_IN_PLACE, x, a->n, TC_DOUBLE, TC_OP_SUM, &o);
		free(x);
	}
	if (err)
		FAIL(&a->f, "rank %d: %s", me, tc_err_name(err));
	struct tc_coll_info info;
	tc_last_coll(proc, &info);
	if (me == 0) {
		a->modelled = info.modelled_ps;
		snprintf(a->ran, sizeof a->ran, "%s", info.algorithm);
	}
	return 0;
}

Test(model, run_equals_prediction, .timeout = 120)
{
	static const char *const specs[] = {"complete:6",  "ring:7",      "chain:5",
	                                    "star:6",      "tree:2:7",    "mesh:3x4",
	                                    "torus:2x2x2", "hypercube:3", "complete:13"};
	static const size_t ns[] = {0, 5, 300};
	for (int ct = 0; ct < 2; ct++) {
		struct tc_model md;
		model(&md, ct);
		for (int i = 0; i < 9; i++) {
			struct tc_team *team = make_team_model(specs[i], &md, 60000);
			const struct tc_topo *t = tc_team_topo(team);
			for (int a = 0; a < NALGS + 3; a++) {
				const char *alg = a < NALGS        ? algs[a]
				                  : a == NALGS     ? "auto"
				                  : a == NALGS + 1 ? "dissemination"
				                                   : "allreduce";
				enum tc_coll coll = a <= NALGS ? TC_COLL_ALLREDUCE : TC_COLL_BARRIER;
				for (int si = 0; si < (coll == TC_COLL_BARRIER ? 1 : 3); si++) {
					struct tc_prediction pr;
					int err = tc_predict(t, &md, coll, alg, ns[si] * 8, 8, 0, 0, &pr);
					if (err == TC_ENOTSUP)
						continue;
					cr_assert_eq(err, 0);
					struct one_arg o = {.coll = coll, .alg = alg, .n = ns[si]};
					cr_assert_eq(tc_run(team, one_fn, &o), 0);
					cr_assert_eq(atomic_load(&o.f.n), 0, "%s %s: %s", specs[i],
					             alg, o.f.msg);
					/* AUTO on a team with more ranks than CPUs
					 * prices the machine, not the model (the
					 * predictor does not): predict what it ran. */
					if (!strcmp(alg, "auto"))
						cr_assert_eq(tc_predict(t, &md, coll, o.ran,
						                        ns[si] * 8, 8, 0, 0, &pr),
						             0);
					struct tc_run_info ri;
					tc_team_last_run(team, &ri);
					cr_assert_eq(ri.makespan_ps, pr.modelled_ps,
					             "%s %s n=%zu ct=%d: run %lld, "
					             "predicted %lld",
					             specs[i], alg, ns[si], ct, (long long)ri.makespan_ps,
					             (long long)pr.modelled_ps);
					cr_assert_eq(o.modelled, pr.modelled_ps);
				}
			}
			tc_team_destroy(team);
		}
	}
}

/* ---- 3. AUTO and errors -------------------------------------------------------- */

Test(auto, picks_the_cheapest, .timeout = 60)
{
	static const size_t ns[] = {0, 8, 800, 80000, 1 << 20};
	for (int ct = 0; ct < 2; ct++) {
		struct tc_model md;
		model(&md, ct);
		for (int k = 0; k < TC_TEST_NPS; k++) {
			int p = tc_test_ps[k];
			char specs[16][32];
			int nspec = tc_test_specs_for(p, specs, 16);
			for (int i = 0; i < nspec; i++) {
				struct tc_topo *t;
				cr_assert_eq(tc_topo_parse(specs[i], &t), 0);
				for (int c = 0; c < 2; c++) {
					enum tc_coll coll = c ? TC_COLL_BARRIER : TC_COLL_ALLREDUCE;
					for (int si = 0; si < (c ? 1 : 5); si++) {
						struct tc_prediction best, pr;
						cr_assert_eq(tc_predict(t, &md, coll, NULL, ns[si],
						                        8, 0, 0, &best),
						             0);
						const char *name;
						int found = 0;
						for (int j = 0;
						     (name = tc_alg_name(coll, j)) != NULL; j++) {
							/* shm: AUTO weighs it on native teams with a CPU
							 * per rank only, never in a prediction. */
							if (!strncmp(name, "shm", 3))
								continue;
							int err = tc_predict(t, &md, coll, name,
							                     ns[si], 8, 0, 0, &pr);
							if (err == TC_ENOTSUP)
								continue;
							cr_assert_eq(err, 0);
							cr_assert_leq(best.modelled_ps, pr.modelled_ps,
							              "%s %s: auto %s > %s",
							              specs[i], tc_coll_name(coll),
							              best.algorithm, name);
							found += !strcmp(name, best.algorithm);
						}
						cr_assert_eq(found, 1);
					}
				}
				tc_topo_destroy(t);
			}
		}
	}
}

/* On a native team whose ranks outnumber its CPUs, AUTO prices what the CPUs
 * do (data at the machine's rates, a pass of context switches per level of
 * waits); an emulated team keeps the model's choice.  The process is
 * narrowed to two CPUs so that p = 16 is oversubscribed on any machine. */
struct os_arg {
	size_t n;
	char alg[32];
	_Atomic int wrong;
};

static int os_fn(struct tc_proc *proc, void *argp)
{
	struct os_arg *a = argp;
	int me = tc_rank(proc), p = tc_size(proc);
	double *x = malloc((a->n + 1) * sizeof *x);
	if (!x)
		return TC_ENOMEM; /* fails the run (and the test) at once */
	for (size_t j = 0; j < a->n; j++)
		x[j] = (double)(me + 1) * (double)(j % 7);
	int err = tc_allreduce(proc, TC_IN_PLACE, x, a->n, TC_DOUBLE, TC_OP_SUM, NULL);
	for (size_t j = 0; !err && j < a->n; j++)
		if (x[j] != (double)p * (p + 1) / 2 * (double)(j % 7)) /* exact: small integers */
			err = -1;
	if (err)
		a->wrong = 1;
	if (me == 0) {
		struct tc_coll_info info;
		tc_last_coll(proc, &info);
		snprintf(a->alg, sizeof a->alg, "%s", info.algorithm);
	}
	free(x);
	return 0;
}

Test(auto, oversubscribed_teams_price_the_machine, .timeout = 120)
{
	cpu_set_t set, two;
	CPU_ZERO(&set);
	CPU_ZERO(&two);
	cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
	for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
		if (CPU_ISSET(c, &set)) {
			CPU_SET(c, &two);
			k++;
		}
	cr_assert_eq(sched_setaffinity(0, sizeof two, &two), 0);

	static const size_t ns[] = {1, 1024, 128 * 1024}; /* 8 B, 8 KiB, 1 MiB */
	for (int mode = 0; mode < 2; mode++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = "complete:16";
		cfg.timeout_ms = 60000;
		cfg.mode = mode ? TC_MODE_EMULATED : TC_MODE_NATIVE;
		/* Kernel threads: the choices below are the kernel switch's
		 * (fibres price a wait 37x cheaper and pick reduce_bcast at
		 * 8 KiB, 15 against linear's 27 us: tests/test_fibre_ranks.c,
		 * auto_prices_fibre_waits). */
		cfg.exec = TC_EXEC_THREADS;
		struct tc_team *team = NULL;
		cr_assert_eq(tc_team_create(&cfg, &team), 0);
		struct tc_team_info info;
		tc_team_get_info(team, &info);
		cr_assert(info.oversubscribed, "16 ranks on %d CPUs", info.cpus);
		for (int si = 0; si < 3; si++) {
			struct os_arg a = {.n = ns[si]};
			cr_assert_eq(tc_run(team, os_fn, &a), 0);
			cr_assert_not(a.wrong, "%zu doubles: wrong sum", ns[si]);
			if (mode) {
				/* Emulated: the model's delays are the point. */
				struct tc_prediction pr;
				cr_assert_eq(tc_predict(tc_team_topo(team), &cfg.model, TC_COLL_ALLREDUCE,
				                        NULL, ns[si] * 8, 8, 0, 0, &pr),
				             0);
				cr_assert_str_eq(a.alg, pr.algorithm, "emulated, %zu doubles", ns[si]);
			} else if (si < 2) {
				/* Little data: one flat gather and release beats
				 * log2 p levels of context switches and p times
				 * the data of a hypercube. */
				cr_assert_str_eq(a.alg, "linear", "native, %zu doubles", ns[si]);
			} else {
				/* Much data: rank 0 alone combining 15 MiB loses
				 * to spreading the work. */
				cr_assert(strcmp(a.alg, "linear"), "native, 1 MiB: linear");
			}
		}
		tc_team_destroy(team);
	}
	cr_assert_eq(sched_setaffinity(0, sizeof set, &set), 0);
}

struct err_arg {
	struct failure f;
};

#define EXPECT(call, code)                                                                     \
	do {                                                                                   \
		int e_ = (call);                                                               \
		if (e_ != (code))                                                              \
			FAIL(&a->f, "rank %d: %s gave %s, not %s", me, #call, tc_err_name(e_), \
			     tc_err_name(code));                                               \
	} while (0)

static int err_fn(struct tc_proc *proc, void *argp)
{
	struct err_arg *a = argp;
	int me = tc_rank(proc);
	int32_t x[16] = {0}, y[16];
	double d[4] = {0};
	struct tc_coll_opts bad = {.alg = "no_such_algorithm"};
	struct tc_coll_opts ring = {.alg = "ring"};
	struct tc_coll_opts bcast_name = {.alg = "binomial"};
	struct tc_coll_opts nouser = {0};
	struct tc_user_op nofn = {.fn = NULL};
	struct tc_coll_opts nofn_o = {.user_op = &nofn};
	struct tc_user_op nc = {.fn = mat_fn, .commutative = 0};
	struct tc_coll_opts nc_hc = {.alg = "hypercube", .user_op = &nc};

	EXPECT(tc_allreduce(proc, x, y, 16, TC_INT32, TC_OP_SUM, &bad), TC_EALG);
	EXPECT(tc_allreduce(proc, x, y, 16, TC_INT32, TC_OP_SUM, &bcast_name), TC_EALG);
	EXPECT(tc_barrier(proc, &bad), TC_EALG);
	EXPECT(tc_barrier(proc, &ring), TC_EALG); /* not a barrier algorithm */
	/* No ring through every node (odd sides, a chain, three dimensions). */
	EXPECT(tc_allreduce(proc, x, y, 16, TC_INT32, TC_OP_SUM, &ring), TC_ENOTSUP);
	EXPECT(tc_allreduce(proc, x, y, 16, TC_INT32, TC_OP_USER, &nouser), TC_EINVAL);
	EXPECT(tc_allreduce(proc, x, y, 16, TC_INT32, TC_OP_USER, NULL), TC_EINVAL);
	EXPECT(tc_allreduce(proc, x, y, 16, TC_INT32, TC_OP_USER, &nofn_o), TC_EINVAL);
	EXPECT(tc_allreduce(proc, x, y, 16, TC_UINT64, TC_OP_USER, &nc_hc), TC_ENOTSUP);
	EXPECT(tc_allreduce(proc, x, y, 16, TC_DTYPE_COUNT, TC_OP_SUM, NULL), TC_EINVAL);
	EXPECT(tc_allreduce(proc, x, y, 16, TC_INT32, TC_OP_COUNT, NULL), TC_EINVAL);
	EXPECT(tc_allreduce(proc, d, d + 2, 2, TC_DOUBLE, TC_OP_BXOR, NULL), TC_ENOTSUP);
	EXPECT(tc_allreduce(proc, x, NULL, 16, TC_INT32, TC_OP_SUM, NULL), TC_ENULLBUF);
	EXPECT(tc_allreduce(proc, NULL, y, 16, TC_INT32, TC_OP_SUM, NULL), TC_ENULLBUF);
	EXPECT(tc_allreduce(proc, TC_IN_PLACE, NULL, 16, TC_INT32, TC_OP_SUM, NULL), TC_ENULLBUF);
	EXPECT(tc_allreduce(proc, x, y, SIZE_MAX / 2, TC_INT32, TC_OP_SUM, NULL), TC_EOVERFLOW);
	EXPECT(tc_allreduce(proc, x, y, (TC_MAX_MESSAGE / 4) + 1, TC_INT32, TC_OP_SUM, NULL),
	       TC_EOVERFLOW);
	EXPECT(tc_allreduce(NULL, x, y, 16, TC_INT32, TC_OP_SUM, NULL), TC_EINVAL);
	/* Count 0 needs no buffers. */
	EXPECT(tc_allreduce(proc, NULL, NULL, 0, TC_INT32, TC_OP_SUM, NULL), 0);
	/* None of this hurt the team: a real call still works. */
	for (int i = 0; i < 16; i++)
		x[i] = me * i;
	EXPECT(tc_allreduce(proc, x, y, 16, TC_INT32, TC_OP_SUM, NULL), 0);
	int p = tc_size(proc);
	for (int i = 0; i < 16; i++)
		if (y[i] != i * p * (p - 1) / 2)
			FAIL(&a->f, "rank %d: sum after the errors", me);
	EXPECT(tc_barrier(proc, NULL), 0);
	return 0;
}

Test(errors, arguments, .timeout = 60)
{
	static const char *const specs[] = {"mesh:3x3", "chain:1", "torus:2x2x2"};
	for (int i = 0; i < 3; i++) {
		struct tc_team *team = make_team(specs[i]);
		struct err_arg a = {0};
		cr_assert_eq(tc_run(team, err_fn, &a), 0);
		cr_assert_eq(atomic_load(&a.f.n), 0, "%s: %s", specs[i], a.f.msg);
		tc_team_destroy(team);
	}
	/* The predictor says the same. */
	struct tc_topo *t;
	struct tc_model md;
	tc_model_default(&md);
	struct tc_prediction pr;
	cr_assert_eq(tc_topo_parse("mesh:3x3", &t), 0);
	cr_assert_eq(tc_predict(t, &md, TC_COLL_ALLREDUCE, "ring", 64, 4, 0, 0, &pr), TC_ENOTSUP);
	cr_assert_eq(tc_predict(t, &md, TC_COLL_ALLREDUCE, "nope", 64, 4, 0, 0, &pr), TC_EALG);
	cr_assert_eq(tc_predict(t, &md, TC_COLL_BARRIER, "nope", 0, 1, 0, 0, &pr), TC_EALG);
	cr_assert_eq(tc_predict(t, &md, TC_COLL_ALLREDUCE, "hypercube", 63, 4, 0, 0, &pr), TC_EINVAL);
	cr_assert_eq(tc_predict(t, &md, TC_COLL_ALLREDUCE, "hypercube", 64, 4, 0, 0, &pr), 0);
	tc_topo_destroy(t);
}

/* The executor runs a plan of tiny rounds (at most one send and one receive
 * of one packet each: e.g. dissemination or a hypercube allreduce of one
 * double on complete:2 or hypercube:3) without its round machinery, and a
 * traced run always with it (lib/sched/exec.c): the two must agree on every
 * rank's result, logical clock and statistics, also when ranks of one call
 * take different paths (linear: rank 0 receives from everyone; ranks that
 * forward on ring:6), when receives go the request way (blocking waits poll
 * once), under other port, duplex and switching models, and emulated. */
struct tiny_arg {
	int coll; /* 0 barrier, 1 allreduce */
	int p;
	const char *alg;
	double out[64];
	tc_time_t clock[64];
	struct tc_stats st[64];
};

static int tiny_fn(struct tc_proc *proc, void *argp)
{
	struct tiny_arg *a = argp;
	int me = tc_rank(proc);
	struct tc_coll_opts o = {.alg = a->alg};
	double x = me + 1, y = 0;
	if (me == 0)
		a->p = tc_size(proc);
	for (int k = 0; k < 3; k++) {
		int err = a->coll ? tc_allreduce(proc, &x, &y, 1, TC_DOUBLE, TC_OP_SUM, &o)
		                  : tc_barrier(proc, &o);
		if (err)
			return err;
		x += y;
	}
	a->out[me] = x;
	a->clock[me] = tc_clock(proc);
	tc_proc_stats(proc, &a->st[me]);
	return 0;
}

Test(allreduce, tiny_plans_match_the_general_executor, .timeout = 120)
{
	static const char *const specs[] = {"complete:2", "complete:5", "hypercube:3", "ring:6", "star:5"};
	static const struct {
		int coll;
		const char *alg;
	} cases[] = {{0, "dissemination"}, {0, "linear"},       {1, "hypercube"},
	             {1, "linear"},        {1, "reduce_bcast"}, {1, "ring"}};
	int compared = 0;
	for (size_t si = 0; si < sizeof specs / sizeof specs[0]; si++)
		for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
			for (int v = 0; v < 3; v++) {
				/* 0: the default waits, one port, full duplex, SF;
				 * 1: blocking waits, all ports, half duplex, CT;
				 * 2: emulated (a few microseconds of model time). */
				struct tc_model md;
				tc_model_default(&md);
				md.tc_ns = 0.5;
				md.th_ns = 30;
				if (v == 1) {
					md.ports = TC_PORTS_ALL;
					md.duplex = TC_DUPLEX_HALF;
					md.switching = TC_SWITCH_CT;
				}
				struct tiny_arg *run[2];
				int ok = 1;
				for (int traced = 0; traced < 2; traced++) {
					struct tc_team_config cfg;
					tc_team_config_default(&cfg);
					cfg.topology = specs[si];
					cfg.model = md;
					cfg.timeout_ms = 60000;
					cfg.wait = v == 1 ? TC_WAIT_BLOCK : TC_WAIT_AUTO;
					cfg.mode = v == 2 ? TC_MODE_EMULATED : TC_MODE_NATIVE;
					cfg.trace_events = traced ? 256 : 0;
					struct tc_team *team = NULL;
					cr_assert_eq(tc_team_create(&cfg, &team), 0);
					run[traced] = calloc(1, sizeof *run[traced]);
					run[traced]->coll = cases[ci].coll;
					run[traced]->alg = cases[ci].alg;
					int err = tc_run(team, tiny_fn, run[traced]);
					if (err == TC_ENOTSUP)
						ok = 0; /* the algorithm does not apply here */
					else
						cr_assert_eq(err, 0, "%s %s: %s", specs[si],
						             cases[ci].alg, tc_strerror(err));
					tc_team_destroy(team);
				}
				int p = 0;
				for (; ok && p < run[0]->p; p++) {
					const struct tiny_arg *u = run[0], *t = run[1];
					cr_assert_eq(u->out[p], t->out[p], "%s %s rank %d: result",
					             specs[si], cases[ci].alg, p);
					cr_assert_eq(u->clock[p], t->clock[p],
					             "%s %s rank %d: clock %lld, traced %lld",
					             specs[si], cases[ci].alg, p,
					             (long long)u->clock[p], (long long)t->clock[p]);
					const struct tc_stats *a = &u->st[p], *b = &t->st[p];
					cr_assert(a->msgs_sent == b->msgs_sent &&
					                  a->msgs_recv == b->msgs_recv &&
					                  a->bytes_sent == b->bytes_sent &&
					                  a->bytes_recv == b->bytes_recv &&
					                  a->rounds == b->rounds &&
					                  a->transfers_sent == b->transfers_sent &&
					                  a->transfers_recv == b->transfers_recv &&
					                  a->forwarded == b->forwarded &&
					                  a->hops == b->hops && a->busy_ps == b->busy_ps &&
					                  a->packets_sent == b->packets_sent &&
					                  a->single_copy == b->single_copy,
					          "%s %s rank %d: statistics differ", specs[si],
					          cases[ci].alg, p);
				}
				compared += p;
				free(run[0]);
				free(run[1]);
			}
	cr_assert_gt(compared, 100, "only %d rank runs compared", compared);
}

/* Mismatched calls fail on every rank instead of hanging. */
enum { MM_COUNT, MM_BARRIER };

struct mm_arg {
	int kind;
	const char *alg;
	int rc[64];
};

static int mm_fn(struct tc_proc *proc, void *argp)
{
	struct mm_arg *a = argp;
	int me = tc_rank(proc);
	double x[16] = {0};
	struct tc_coll_opts o = {.alg = a->alg};
	if (a->kind == MM_COUNT)
		a->rc[me] =
		        tc_allreduce(proc, TC_IN_PLACE, x, me == 0 ? 8 : 16, TC_DOUBLE, TC_OP_SUM, &o);
	else if (me == 0)
		a->rc[me] = tc_barrier(proc, NULL);
	else
		a->rc[me] = tc_allreduce(proc, TC_IN_PLACE, x, 16, TC_DOUBLE, TC_OP_SUM, &o);
	return 0;
}

Test(errors, mismatched_calls, .timeout = 120)
{
	static const char *const specs[] = {"complete:2", "complete:4",  "ring:5", "ring:8",
	                                    "mesh:2x3",   "hypercube:3", "star:7", "chain:4"};
	static const char *const mm_algs[] = {"hypercube", "ring", "reduce_bcast", "auto"};
	int runs = 0;
	for (int i = 0; i < 8; i++)
		for (int ai = 0; ai < 4; ai++)
			for (int kind = 0; kind < 2; kind++) {
				struct tc_team *team = make_team_model(specs[i], NULL, 20000);
				int p = tc_team_size(team);
				if (!applies(tc_team_topo(team), TC_COLL_ALLREDUCE, mm_algs[ai])) {
					tc_team_destroy(team);
					continue;
				}
				struct mm_arg a = {.kind = kind, .alg = mm_algs[ai]};
				tc_run(team, mm_fn, &a);
				int mismatch = 0;
				for (int r = 0; r < p; r++) {
					cr_assert(a.rc[r] == TC_EMISMATCH || a.rc[r] == TC_EABORTED,
					          "%s %s kind %d: rank %d returned %s", specs[i],
					          mm_algs[ai], kind, r, tc_err_name(a.rc[r]));
					mismatch += a.rc[r] == TC_EMISMATCH;
				}
				cr_assert_gt(mismatch, 0, "someone saw the mismatch");
				runs++;
				tc_team_destroy(team);
			}
	cr_assert_gt(runs, 40);
}

/*
 * A rank whose collective fails may free its buffers at once, even while a
 * peer copies out of them by single copy (lib/core/internal.h, abort
 * handshake).  complete:3, ring allreduce of 4 MiB: rank 2 sends a user
 * message to rank 0 instead of joining, so rank 0's receive fails with
 * TC_EMISMATCH right after its 1.3 MiB single-copy send to rank 1 went out;
 * rank 0 then unmaps its input while rank 1 may be combining it.  Before the
 * handshake rank 1 crashed here.
 */
struct uaf_arg {
	int rc[3];
};

static int uaf_fn(struct tc_proc *proc, void *argp)
{
	struct uaf_arg *a = argp;
	enum { N = 1 << 20 };
	int me = tc_rank(proc);
	if (me == 2) {
		long v = 1;
		a->rc[me] = tc_send(proc, 0, &v, sizeof v);
		return 0;
	}
	size_t bytes = (size_t)N * sizeof(int32_t);
	int32_t *in = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int32_t *out = malloc(bytes);
	cr_assert(in != MAP_FAILED && out);
	for (size_t i = 0; i < N; i++)
		in[i] = me;
	if (me == 0) {
		struct timespec ts = {0, 20000000}; /* rank 1 waits in the call */
		nanosleep(&ts, NULL);
	}
	struct tc_coll_opts o = {.alg = "ring"};
	a->rc[me] = tc_allreduce(proc, in, out, N, TC_INT32, TC_OP_SUM, &o);
	munmap(in, bytes); /* any later read of it faults */
	free(out);
	return 0;
}

Test(errors, failed_call_frees_buffers_at_once, .timeout = 120)
{
	for (int rep = 0; rep < 5; rep++) {
		struct tc_team *team = make_team_model("complete:3", NULL, 20000);
		struct uaf_arg a = {0};
		tc_run(team, uaf_fn, &a);
		cr_assert(a.rc[0] == TC_EMISMATCH || a.rc[0] == TC_EABORTED, "rank 0: %s",
		          tc_err_name(a.rc[0]));
		cr_assert(a.rc[1] == TC_EMISMATCH || a.rc[1] == TC_EABORTED, "rank 1: %s",
		          tc_err_name(a.rc[1]));
		tc_team_destroy(team);
	}
}

/* ---- mesh, and ring on the grids ------------------------------------------------ */

/* Torus and mesh shapes: square, non-square, odd sides, a side of 1 or 2,
 * three dimensions. */
static void grid_results(const char *alg)
{
	static const char *const shapes[] = {"mesh:2x2",    "torus:2x3",  "mesh:2x3",  "torus:3x3",
	                                     "mesh:3x3",    "torus:3x5",  "mesh:3x5",  "mesh:3x4",
	                                     "mesh:4x3",    "torus:5x2",  "torus:1x5", "mesh:1x5",
	                                     "torus:2x2x2", "mesh:2x3x2", "mesh:4x4"};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(shapes[i], &t), 0, "%s", shapes[i]);
		char one[1][32];
		snprintf(one[0], sizeof one[0], "%s", shapes[i]);
		results_p(alg, tc_topo_nodes(t), one, 1, NSIZES);
		tc_topo_destroy(t);
	}
}

Test(allreduce, results_mesh, .timeout = 300)
{
	results("mesh", 0, TC_TEST_NPS, NSIZES);
}

Test(allreduce, results_grids_threads_and_fibres, .timeout = 600)
{
	test_exec = TC_EXEC_THREADS;
	grid_results("mesh");
	grid_results("ring");
	test_exec = TC_EXEC_FIBRES;
	grid_results("mesh");
	grid_results("ring");
	test_exec = TC_EXEC_AUTO;
}

/* The ring on a grid walks neighbours only: every transfer of its schedule
 * is one hop (the embedding is a Hamiltonian ring). */
Test(allreduce, ring_on_grids_is_a_ring)
{
	static const char *const shapes[] = {"torus:3x3", "torus:3x5", "torus:5x4", "mesh:3x4",
	                                     "mesh:4x5",  "mesh:2x7",  "torus:2x2"};
	struct tc_model md;
	tc_model_default(&md);
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(shapes[i], &t), 0);
		int p = tc_topo_nodes(t);
		struct tc_prediction pr;
		size_t bytes = (size_t)p * 8;
		cr_assert_eq(tc_predict(t, &md, TC_COLL_ALLREDUCE, "ring", bytes, 8, 0, 0, &pr), 0,
		             "%s", shapes[i]);
		/* 2 (p - 1) rounds of p one-hop messages. */
		cr_assert_eq(pr.hop_messages, pr.messages, "%s: a routed message", shapes[i]);
		cr_assert_eq(pr.messages, 2L * (p - 1) * p, "%s", shapes[i]);
		tc_topo_destroy(t);
	}
}
