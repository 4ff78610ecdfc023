/* SPDX-License-Identifier: MIT */
/* tests/common/coll_ref.c - the Collectives II harness (see coll_ref.h). */
#include "coll_ref.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const struct ct_combo ct_combos[] = {
        {TC_INT32, TC_OP_SUM, "int32 sum"},
        {TC_UINT64, TC_OP_BXOR, "uint64 bxor"},
        {TC_DOUBLE, TC_OP_SUM, "double sum (exact)"},
        {TC_DOUBLE, TC_OP_MAX, "double max"},
        {TC_INT8, TC_OP_MIN, "int8 min"},
        {TC_UINT16, TC_OP_PROD, "uint16 prod"},
        {TC_UINT64, CT_OP_AFFINE, "affine maps (non-commutative)"},
};
const int ct_ncombos = (int)(sizeof ct_combos / sizeof ct_combos[0]);
const enum tc_dtype ct_dtypes[] = {TC_BYTE, TC_INT16, TC_FLOAT, TC_DOUBLE, TC_UINT64};
const int ct_ndtypes = (int)(sizeof ct_dtypes / sizeof ct_dtypes[0]);

enum { GUARD = 64, GUARD_BYTE = 0xa5, FILL_BYTE = 0x5a };

/* x -> a x + b (mod 2^32), a in the low half: left then right. */
static uint64_t affine(uint64_t l, uint64_t r)
{
	uint32_t al = (uint32_t)l, bl = (uint32_t)(l >> 32);
	uint32_t ar = (uint32_t)r, br = (uint32_t)(r >> 32);
	uint32_t a = ar * al, b = ar * bl + br;
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

static const struct tc_user_op affine_op = {affine_fn, NULL, 0};

static uint64_t mix3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t s = a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full ^ c * 0x165667b19e3779f9ull;
	s ^= s >> 31;
	return tc_test_rand(&s) ^ (s == 0);
}

void ct_input(const struct ct_case *c, int r, size_t i, void *out)
{
	uint64_t h = mix3(c->seed + (uint64_t)c->coll * 131 + (uint64_t)c->dt, (uint64_t)r, i);
	size_t es = tc_dtype_size(c->dt);
	if (c->op == CT_OP_AFFINE) {
		h |= 1; /* odd a: every map is a bijection, nothing cancels */
		memcpy(out, &h, 8);
	} else if (c->dt == TC_DOUBLE) {
		double v = (double)((int64_t)(h % (1u << 30)) - (1 << 29)) / 1024.0;
		memcpy(out, &v, 8);
	} else if (c->dt == TC_FLOAT) {
		float v = (float)((int32_t)(h % (1u << 20)) - (1 << 19)) / 64.0f;
		memcpy(out, &v, 4);
	} else if (c->dt == TC_UINT16 && c->op == TC_OP_PROD) {
		uint16_t v = (uint16_t)(h | 1);
		memcpy(out, &v, 2);
	} else {
		memcpy(out, &h, es); /* little-endian: the low bytes */
	}
}

/* acc = acc (op) x, acc the lower ranks' value. */
static void combine(const struct ct_case *c, void *acc, const void *x)
{
	enum tc_dtype dt = c->dt;
	if (c->op == CT_OP_AFFINE) {
		uint64_t a, b;
		memcpy(&a, acc, 8);
		memcpy(&b, x, 8);
		a = affine(a, b);
		memcpy(acc, &a, 8);
		return;
	}
	if (dt == TC_DOUBLE || dt == TC_FLOAT) {
		double a, b;
		if (dt == TC_DOUBLE) {
			memcpy(&a, acc, 8);
			memcpy(&b, x, 8);
		} else {
			float fa, fb;
			memcpy(&fa, acc, 4);
			memcpy(&fb, x, 4);
			a = fa;
			b = fb;
		}
		switch (c->op) {
		case TC_OP_SUM:
			a = a + b;
			break;
		case TC_OP_PROD:
			a = a * b;
			break;
		case TC_OP_MIN:
			a = b < a ? b : a;
			break;
		case TC_OP_MAX:
			a = b > a ? b : a;
			break;
		default:
			break;
		}
		if (dt == TC_DOUBLE) {
			memcpy(acc, &a, 8);
		} else {
			float fa = (float)a;
			memcpy(acc, &fa, 4);
		}
		return;
	}
	size_t es = tc_dtype_size(dt);
	int sgn = dt == TC_INT8 || dt == TC_INT16 || dt == TC_INT32 || dt == TC_INT64;
	uint64_t ua = 0, ub = 0;
	memcpy(&ua, acc, es);
	memcpy(&ub, x, es);
	int64_t sa = (int64_t)(ua << (64 - 8 * es)) >> (64 - 8 * es);
	int64_t sb = (int64_t)(ub << (64 - 8 * es)) >> (64 - 8 * es);
	uint64_t v = 0;
	switch (c->op) {
	case TC_OP_SUM:
		v = ua + ub;
		break;
	case TC_OP_PROD:
		v = ua * ub;
		break;
	case TC_OP_MIN:
		v = sgn ? (uint64_t)(sb < sa ? sb : sa) : (ub < ua ? ub : ua);
		break;
	case TC_OP_MAX:
		v = sgn ? (uint64_t)(sb > sa ? sb : sa) : (ub > ua ? ub : ua);
		break;
	case TC_OP_BAND:
		v = ua & ub;
		break;
	case TC_OP_BOR:
		v = ua | ub;
		break;
	case TC_OP_BXOR:
		v = ua ^ ub;
		break;
	case TC_OP_LAND:
		v = ua && ub;
		break;
	case TC_OP_LOR:
		v = ua || ub;
		break;
	default:
		break;
	}
	memcpy(acc, &v, es);
}

static unsigned shape(const struct ct_case *c)
{
	return tc_coll_flags(c->coll);
}

/* Whether rank r is the multicast's root or in its set. */
static int mc_member(const struct ct_case *c, int r)
{
	if (r == c->root)
		return 1;
	for (int i = 0; i < c->nmembers; i++)
		if (c->members[i] == r)
			return 1;
	return 0;
}

/* The binary-reflected Gray code and its inverse, written here from
 * [HJR-TR-20-92]'s Lemma 1 (g_m = i_{m+1} xor i_m; i_m = g_{n-1} xor ... xor g_m). */
static unsigned ref_gray(unsigned i)
{
	unsigned g = 0;
	for (int m = 0; m < 31; m++)
		g |= (((i >> (m + 1)) ^ (i >> m)) & 1u) << m;
	return g;
}
static unsigned ref_gray_inverse(unsigned g)
{
	unsigned i = 0;
	for (int m = 30; m >= 0; m--)
		i |= ((((i >> (m + 1)) & 1u) ^ (g >> m)) & 1u) << m;
	return i;
}

size_t ct_sbytes(const struct ct_case *c, int p, int r)
{
	unsigned f = shape(c);
	size_t b = c->count * tc_dtype_size(c->dt);
	if (f & (TC_CF_NO_SEND | TC_CF_NO_DATA))
		return 0;
	if ((f & TC_CF_SEND_ROOT) && r != c->root)
		return 0;
	return f & TC_CF_SEND_P ? b * (size_t)p : b;
}

size_t ct_rbytes(const struct ct_case *c, int p, int r)
{
	unsigned f = shape(c);
	size_t b = c->count * tc_dtype_size(c->dt);
	if (f & TC_CF_NO_DATA)
		return 0;
	if ((f & TC_CF_RECV_ROOT) && r != c->root)
		return 0;
	if ((f & TC_CF_RECV_NOT0) && r == 0)
		return 0;
	if ((f & TC_CF_MEMBERS) && !mc_member(c, r))
		return 0;
	return f & TC_CF_RECV_P ? b * (size_t)p : b;
}

/* The reduction over ranks [lo, hi] of element i of their send buffers. */
static void reduce_range(const struct ct_case *c, int lo, int hi, size_t i, void *out)
{
	unsigned char x[8];
	ct_input(c, lo, i, out);
	for (int s = lo + 1; s <= hi; s++) {
		ct_input(c, s, i, x);
		combine(c, out, x);
	}
}

int ct_expect(const struct ct_case *c, int p, int r, void *outp)
{
	unsigned char *out = outp;
	size_t n = c->count, es = tc_dtype_size(c->dt);
	if (!ct_rbytes(c, p, r))
		return -1;
	if (c->coll == TC_COLL_SCATTER && c->in_place && r == c->root)
		return -1; /* its block stays in sbuf; rbuf is not passed */
	int from;
	switch (c->coll) {
	case TC_COLL_BCAST:
	case TC_COLL_MULTICAST:
		for (size_t j = 0; j < n; j++)
			ct_input(c, c->root, j, out + j * es);
		break;
	case TC_COLL_SHIFT:
	case TC_COLL_GRAY2BINARY:
	case TC_COLL_BINARY2GRAY:
		from = c->coll == TC_COLL_SHIFT && c->shift_ring == 2
		               ? (int)ref_gray(
		                         (unsigned)((((long)ref_gray_inverse((unsigned)r) - c->q) % p + p) %
		                                    p))
		       : c->coll == TC_COLL_SHIFT       ? (int)((((long)r - c->q) % p + p) % p)
		       : c->coll == TC_COLL_GRAY2BINARY ? (int)ref_gray((unsigned)r)
		                                        : (int)ref_gray_inverse((unsigned)r);
		for (size_t j = 0; j < n; j++)
			ct_input(c, from, j, out + j * es);
		break;
	case TC_COLL_REDUCE:
	case TC_COLL_ALLREDUCE:
		for (size_t j = 0; j < n; j++)
			reduce_range(c, 0, p - 1, j, out + j * es);
		break;
	case TC_COLL_ALLGATHER:
	case TC_COLL_GATHER:
		for (int b = 0; b < p; b++)
			for (size_t j = 0; j < n; j++)
				ct_input(c, b, j, out + ((size_t)b * n + j) * es);
		break;
	case TC_COLL_REDUCE_SCATTER:
		for (size_t j = 0; j < n; j++)
			reduce_range(c, 0, p - 1, (size_t)r * n + j, out + j * es);
		break;
	case TC_COLL_SCAN:
		for (size_t j = 0; j < n; j++)
			reduce_range(c, 0, r, j, out + j * es);
		break;
	case TC_COLL_EXSCAN:
		for (size_t j = 0; j < n; j++)
			reduce_range(c, 0, r - 1, j, out + j * es);
		break;
	case TC_COLL_SCATTER:
		for (size_t j = 0; j < n; j++)
			ct_input(c, c->root, (size_t)r * n + j, out + j * es);
		break;
	case TC_COLL_ALLTOALL:
		for (int b = 0; b < p; b++)
			for (size_t j = 0; j < n; j++)
				ct_input(c, b, (size_t)r * n + j, out + ((size_t)b * n + j) * es);
		break;
	default:
		return -1;
	}
	return 0;
}

int ct_call(struct tc_proc *proc, const struct ct_case *c, const void *sbuf, void *rbuf)
{
	struct tc_coll_opts o = {.alg = c->alg, .shift_ring = c->shift_ring != 0};
	enum tc_op op = c->op;
	if (op == CT_OP_AFFINE) {
		op = TC_OP_USER;
		o.user_op = &affine_op;
	}
	int root = c->root, me = tc_rank(proc);
	const void *s = c->in_place && (!(shape(c) & TC_CF_ROOTED) || me == root) ? TC_IN_PLACE : sbuf;
	switch (c->coll) {
	case TC_COLL_BCAST:
		return tc_bcast(proc, rbuf, c->count, c->dt, root, &o);
	case TC_COLL_REDUCE:
		return tc_reduce(proc, s, rbuf, c->count, c->dt, op, root, &o);
	case TC_COLL_ALLREDUCE:
		return tc_allreduce(proc, s, rbuf, c->count, c->dt, op, &o);
	case TC_COLL_BARRIER:
		return tc_barrier(proc, &o);
	case TC_COLL_ALLGATHER:
		return tc_allgather(proc, s, rbuf, c->count, c->dt, &o);
	case TC_COLL_REDUCE_SCATTER:
		return tc_reduce_scatter(proc, s, rbuf, c->count, c->dt, op, &o);
	case TC_COLL_SCAN:
		return tc_scan(proc, s, rbuf, c->count, c->dt, op, &o);
	case TC_COLL_EXSCAN:
		return tc_exscan(proc, s, rbuf, c->count, c->dt, op, &o);
	case TC_COLL_SCATTER:
		/* In place at the root: rbuf is TC_IN_PLACE, sbuf the data. */
		return tc_scatter(proc, sbuf, c->in_place && me == root ? (void *)TC_IN_PLACE : rbuf,
		                  c->count, c->dt, root, &o);
	case TC_COLL_GATHER:
		return tc_gather(proc, s, rbuf, c->count, c->dt, root, &o);
	case TC_COLL_ALLTOALL:
		return tc_alltoall(proc, s, rbuf, c->count, c->dt, &o);
	case TC_COLL_SHIFT:
		return tc_shift(proc, s, rbuf, c->count, c->dt, c->q, &o);
	case TC_COLL_GRAY2BINARY:
		return tc_gray2binary(proc, s, rbuf, c->count, c->dt, &o);
	case TC_COLL_BINARY2GRAY:
		return tc_binary2gray(proc, s, rbuf, c->count, c->dt, &o);
	case TC_COLL_MULTICAST:
		/* Outside the set, odd ranks pass their buffer (it must stay
		 * untouched), even ones NULL. */
		return tc_multicast(proc, mc_member(c, me) || me % 2 ? rbuf : NULL, c->count, c->dt,
		                    root, c->members, c->nmembers, &o);
	default:
		return TC_EINVAL;
	}
}

/* ---- the runner ---------------------------------------------------------------- */

/* The expectation of the collectives whose result is the same on every rank
 * (allreduce, bcast, allgather), computed once per run: their reference is
 * O(p n) per rank, O(p^2 n) for the team (an allreduce of 1000 elements on
 * 1024 ranks: a billion inputs generated and combined). */
struct ct_memo {
	unsigned char *buf; /* NULL until a rank's expectation is known */
	size_t len;
};

struct ct_rank {
	unsigned char *sraw, *rraw; /* with guards */
	size_t salloc, ralloc;      /* bytes between the guards */
	unsigned char *expect;      /* ralloc bytes: what rbuf must hold */
	unsigned char *sorig;       /* salloc bytes: the send buffer as given */
};

struct ct_run {
	const struct ct_case *c;
	struct ct_rank *rk;
	struct ct_memo memo;
	atomic_int nfail;
	atomic_int taken;
	char msg[256];
};

#define CT_FAIL(R, ...)                                                  \
	do {                                                             \
		atomic_fetch_add(&(R)->nfail, 1);                        \
		if (!atomic_exchange(&(R)->taken, 1))                    \
			snprintf((R)->msg, sizeof(R)->msg, __VA_ARGS__); \
	} while (0)

static int guards_ok(const unsigned char *raw, size_t n)
{
	for (size_t i = 0; i < GUARD; i++)
		if (raw[i] != GUARD_BYTE || raw[GUARD + n + i] != GUARD_BYTE)
			return 0;
	return 1;
}

/* Where the send buffer is, for in-place calls: inside rbuf. */
static size_t ip_offset(const struct ct_case *c, int r)
{
	size_t b = c->count * tc_dtype_size(c->dt);
	if (c->coll == TC_COLL_ALLGATHER)
		return (size_t)r * b;
	if (c->coll == TC_COLL_GATHER)
		return (size_t)c->root * b;
	return 0;
}

static int ct_same_for_all(const struct ct_case *c)
{
	return c->coll == TC_COLL_ALLREDUCE || c->coll == TC_COLL_BCAST || c->coll == TC_COLL_ALLGATHER;
}

/* Fills rank r's buffers and expectation.  memo: the shared expectation,
 * set by the first rank that has one when fill is non-zero (ct_run, one
 * rank after another before the team runs), read only otherwise (the ranks
 * refill their buffers concurrently between iterations). */
static void fill_buffers(const struct ct_case *c, int p, int r, struct ct_rank *k,
                         struct ct_memo *memo, int fill)
{
	size_t es = tc_dtype_size(c->dt);
	memset(k->rraw + GUARD, FILL_BYTE, k->ralloc);
	size_t sb = ct_sbytes(c, p, r);
	for (size_t i = 0; i < sb / es; i++)
		ct_input(c, r, i, k->sraw + GUARD + i * es);
	memcpy(k->sorig, k->sraw + GUARD, k->salloc);
	int ip = c->in_place && (!(tc_coll_flags(c->coll) & TC_CF_ROOTED) || r == c->root) &&
	         c->coll != TC_COLL_SCATTER;
	if (ip)
		memcpy(k->rraw + GUARD + ip_offset(c, r), k->sraw + GUARD, sb);
	if ((c->coll == TC_COLL_BCAST || c->coll == TC_COLL_MULTICAST) && r == c->root)
		/* its one buffer is the input */
		for (size_t i = 0; i < c->count; i++)
			ct_input(c, r, i, k->rraw + GUARD + i * es);
	/* The expectation: the result where the rank gets one, else rbuf as
	 * it was (in-place reduce_scatter: only block 0 is the result). */
	memcpy(k->expect, k->rraw + GUARD, k->ralloc);
	size_t rb = ct_rbytes(c, p, r);
	if (ct_same_for_all(c) && memo->buf && rb == memo->len) {
		memcpy(k->expect, memo->buf, rb);
		return;
	}
	unsigned char *e = malloc(k->ralloc ? k->ralloc : 1);
	if (ct_expect(c, p, r, e) == 0) {
		memcpy(k->expect, e, rb);
		if (fill && ct_same_for_all(c) && !memo->buf) {
			memo->buf = e;
			memo->len = rb;
			e = NULL;
		}
	}
	free(e);
}

static int ct_rank_fn(struct tc_proc *proc, void *arg)
{
	struct ct_run *R = arg;
	const struct ct_case *c = R->c;
	int r = tc_rank(proc), p = tc_size(proc);
	struct ct_rank *k = &R->rk[r];
	int iters = c->iters > 0 ? c->iters : 1;
	for (int it = 0; it < iters; it++) {
		if (it) {
			fill_buffers(c, p, r, k, &R->memo, 0);
			int err = tc_barrier(proc, NULL);
			if (err) {
				CT_FAIL(R, "rank %d: barrier: %s", r, tc_err_name(err));
				return err;
			}
		}
		unsigned char *s = k->salloc ? k->sraw + GUARD : NULL;
		unsigned char *rb = k->rraw + GUARD;
		int err = ct_call(proc, c, s, rb);
		if (err) {
			CT_FAIL(R, "rank %d: %s", r, tc_err_name(err));
			tc_team_abort(tc_proc_team(proc));
			return err;
		}
		if (memcmp(rb, k->expect, k->ralloc)) {
			size_t i = 0;
			while (rb[i] == k->expect[i])
				i++;
			size_t es = tc_dtype_size(c->dt);
			CT_FAIL(R, "rank %d, call %d: byte %zu (element %zu, block %zu) is %02x, want %02x",
			        r, it, i, i / es, c->count ? i / es / c->count : 0, rb[i],
			        k->expect[i]);
		}
		if (k->salloc && memcmp(s, k->sorig, k->salloc))
			CT_FAIL(R, "rank %d, call %d: the send buffer was written", r, it);
		if (!guards_ok(k->rraw, k->ralloc) || !guards_ok(k->sraw, k->salloc))
			CT_FAIL(R, "rank %d, call %d: a guard byte was written", r, it);
	}
	return 0;
}

int ct_run(struct tc_team *team, const struct ct_case *c, char *msg, size_t len)
{
	int p = tc_team_size(team);
	size_t b = c->count * tc_dtype_size(c->dt);
	struct ct_run R = {.c = c};
	R.rk = calloc((size_t)p, sizeof *R.rk);
	int ret = -1;
	if (!R.rk) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	unsigned f = tc_coll_flags(c->coll);
	for (int r = 0; r < p; r++) {
		struct ct_rank *k = &R.rk[r];
		k->salloc = ct_sbytes(c, p, r);
		/* Every rank gets a receive buffer of the full shape, even where
		 * it receives nothing: it must stay as it was. */
		k->ralloc = (f & TC_CF_NO_DATA) ? 0 : (f & TC_CF_RECV_P) ? b * (size_t)p : b;
		if (c->in_place && c->coll == TC_COLL_REDUCE_SCATTER)
			k->ralloc = b * (size_t)p;
		k->sraw = malloc(k->salloc + 2 * GUARD);
		k->rraw = malloc(k->ralloc + 2 * GUARD);
		k->expect = malloc(k->ralloc + 1);
		k->sorig = malloc(k->salloc + 1);
		if (!k->sraw || !k->rraw || !k->expect || !k->sorig) {
			snprintf(msg, len, "out of memory");
			goto out;
		}
		memset(k->sraw, GUARD_BYTE, k->salloc + 2 * GUARD);
		memset(k->rraw, GUARD_BYTE, k->ralloc + 2 * GUARD);
		fill_buffers(c, p, r, k, &R.memo, 1);
	}
	int err = tc_run(team, ct_rank_fn, &R);
	if (atomic_load(&R.nfail)) {
		snprintf(msg, len, "%s", R.msg);
	} else if (err) {
		snprintf(msg, len, "tc_run: %s", tc_err_name(err));
	} else {
		ret = 0;
	}
out:
	for (int r = 0; r < p; r++) {
		free(R.rk[r].sraw);
		free(R.rk[r].rraw);
		free(R.rk[r].expect);
		free(R.rk[r].sorig);
	}
	free(R.rk);
	free(R.memo.buf);
	return ret;
}

struct tc_model ct_model(double ts, double tw, double th, enum tc_ports ports,
                         enum tc_duplex duplex, enum tc_switching sw)
{
	struct tc_model md;
	tc_model_default(&md);
	md.ts_ns = ts;
	md.tw_ns = tw;
	md.th_ns = th;
	md.tc_ns = 0.0;
	md.ports = ports;
	md.duplex = duplex;
	md.switching = sw;
	return md;
}

struct tc_team *ct_team(const char *spec, const struct tc_model *md, char *msg, size_t len)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.timeout_ms = 60000;
	if (md)
		cfg.model = *md;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	if (err) {
		snprintf(msg, len, "%s: %s", spec, tc_strerror(err));
		return NULL;
	}
	return team;
}
