/* SPDX-License-Identifier: MIT */
/*
 * Reduction kernels (lib/coll/ops.c): tc_reduce_local for every datatype and
 * operator against a scalar reference written here, the documented errors,
 * and user operators, commutative or not.
 *
 * Semantics checked: inout[i] = in[i] (op) inout[i]; integer sums and
 * products wrap modulo 2^width, signed ones included; min and max compare as
 * the type's signedness; land and lor give 0 or 1; bitwise and logical
 * operators do not apply to float and double (TC_ENOTSUP).
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

#define NELEM 67

static const enum tc_op builtin_ops[] = {TC_OP_SUM, TC_OP_PROD, TC_OP_MIN,  TC_OP_MAX, TC_OP_BAND,
                                         TC_OP_BOR, TC_OP_BXOR, TC_OP_LAND, TC_OP_LOR};
#define NOPS ((int)(sizeof builtin_ops / sizeof builtin_ops[0]))

/* ---- the scalar reference ------------------------------------------------ */

/* One element, integer types: u is the unsigned type of the same width, s the
 * type itself (for the comparisons). */
#define REF_INT(s, u)                                                                    \
	static void ref_##s(enum tc_op op, const void *inp, const void *iop, void *outp) \
	{                                                                                \
		s a, b;                                                                  \
		memcpy(&a, inp, sizeof a);                                               \
		memcpy(&b, iop, sizeof b);                                               \
		u ua, ub, r = 0;                                                         \
		memcpy(&ua, &a, sizeof ua);                                              \
		memcpy(&ub, &b, sizeof ub);                                              \
		switch (op) {                                                            \
		case TC_OP_SUM:                                                          \
			r = (u)((uintmax_t)ua + (uintmax_t)ub);                          \
			break;                                                           \
		case TC_OP_PROD:                                                         \
			r = (u)((uintmax_t)ua * (uintmax_t)ub);                          \
			break;                                                           \
		case TC_OP_MIN:                                                          \
			memcpy(&r, a <= b ? &a : &b, sizeof r);                          \
			break;                                                           \
		case TC_OP_MAX:                                                          \
			memcpy(&r, a >= b ? &a : &b, sizeof r);                          \
			break;                                                           \
		case TC_OP_BAND:                                                         \
			r = ua & ub;                                                     \
			break;                                                           \
		case TC_OP_BOR:                                                          \
			r = ua | ub;                                                     \
			break;                                                           \
		case TC_OP_BXOR:                                                         \
			r = ua ^ ub;                                                     \
			break;                                                           \
		case TC_OP_LAND:                                                         \
			r = (ua != 0 && ub != 0) ? 1 : 0;                                \
			break;                                                           \
		case TC_OP_LOR:                                                          \
			r = (ua != 0 || ub != 0) ? 1 : 0;                                \
			break;                                                           \
		default:                                                                 \
			cr_assert(0, "no reference for op %d", (int)op);                 \
		}                                                                        \
		memcpy(outp, &r, sizeof r);                                              \
	}

REF_INT(int8_t, uint8_t)
REF_INT(int16_t, uint16_t)
REF_INT(int32_t, uint32_t)
REF_INT(int64_t, uint64_t)
REF_INT(uint8_t, uint8_t)
REF_INT(uint16_t, uint16_t)
REF_INT(uint32_t, uint32_t)
REF_INT(uint64_t, uint64_t)

#define REF_FLT(t)                                                                       \
	static void ref_##t(enum tc_op op, const void *inp, const void *iop, void *outp) \
	{                                                                                \
		t a, b, r = 0;                                                           \
		memcpy(&a, inp, sizeof a);                                               \
		memcpy(&b, iop, sizeof b);                                               \
		switch (op) {                                                            \
		case TC_OP_SUM:                                                          \
			r = a + b;                                                       \
			break;                                                           \
		case TC_OP_PROD:                                                         \
			r = a * b;                                                       \
			break;                                                           \
		case TC_OP_MIN:                                                          \
			r = a <= b ? a : b;                                              \
			break;                                                           \
		case TC_OP_MAX:                                                          \
			r = a >= b ? a : b;                                              \
			break;                                                           \
		default:                                                                 \
			cr_assert(0, "no float reference for op %d", (int)op);           \
		}                                                                        \
		memcpy(outp, &r, sizeof r);                                              \
	}

REF_FLT(float)
REF_FLT(double)

typedef void (*ref_fn)(enum tc_op, const void *, const void *, void *);

static ref_fn ref_of(enum tc_dtype dt)
{
	switch (dt) {
	case TC_INT8:
		return ref_int8_t;
	case TC_INT16:
		return ref_int16_t;
	case TC_INT32:
		return ref_int32_t;
	case TC_INT64:
		return ref_int64_t;
	case TC_UINT8:
	case TC_BYTE:
		return ref_uint8_t;
	case TC_UINT16:
		return ref_uint16_t;
	case TC_UINT32:
		return ref_uint32_t;
	case TC_UINT64:
		return ref_uint64_t;
	case TC_FLOAT:
		return ref_float;
	case TC_DOUBLE:
		return ref_double;
	default:
		return NULL;
	}
}

static int is_float(enum tc_dtype dt)
{
	return dt == TC_FLOAT || dt == TC_DOUBLE;
}

/* Fills n elements: the first ones are edge values (0, 1, all ones, the
 * extremes of the type), the rest random; floats are finite multiples of 1/8
 * (no NaN, no negative zero), a few infinities. */
static void fill(enum tc_dtype dt, unsigned char *buf, size_t n, uint64_t *seed)
{
	size_t es = tc_dtype_size(dt);
	for (size_t i = 0; i < n; i++) {
		unsigned char *e = buf + i * es;
		uint64_t r = tc_test_rand(seed);
		if (dt == TC_FLOAT || dt == TC_DOUBLE) {
			double v = (double)((int64_t)(r % 40001) - 20000) / 8.0;
			if (i == 0)
				v = 0.0;
			else if (i == 1)
				v = 1.0;
			else if (i == 2)
				v = INFINITY;
			else if (i == 3)
				v = -INFINITY;
			else if (i == 4)
				v = dt == TC_FLOAT ? FLT_MAX : DBL_MAX;
			if (dt == TC_FLOAT) {
				float f = (float)v;
				memcpy(e, &f, sizeof f);
			} else {
				memcpy(e, &v, sizeof v);
			}
			continue;
		}
		uint64_t v = r;
		switch (i) {
		case 0:
			v = 0;
			break;
		case 1:
			v = 1;
			break;
		case 2:
			v = UINT64_MAX; /* -1 or the unsigned maximum */
			break;
		case 3: /* the signed maximum 0111..1 */
			v = es == 8 ? (uint64_t)INT64_MAX : ((uint64_t)1 << (8 * es - 1)) - 1;
			break;
		case 4: /* the signed minimum 1000..0 */
			v = (uint64_t)1 << (8 * es - 1);
			break;
		case 5:
			v = r % 3; /* small values make land/lor and prod interesting */
			break;
		default:
			break;
		}
		memcpy(e, &v, es); /* little-endian: the low bytes */
	}
}

/* ---- built-in operators -------------------------------------------------- */

static void check_builtin(enum tc_dtype dt, enum tc_op op, uint64_t seed)
{
	size_t es = tc_dtype_size(dt);
	cr_assert_gt(es, 0);
	unsigned char in[NELEM * 8], io[NELEM * 8], save[NELEM * 8], want[NELEM * 8];
	fill(dt, in, NELEM, &seed);
	fill(dt, io, NELEM, &seed);
	memcpy(save, io, NELEM * es);
	int err = tc_reduce_local(in, io, NELEM, dt, op, NULL);
	if (is_float(dt) && op >= TC_OP_BAND) {
		cr_assert_eq(err, TC_ENOTSUP, "%s %s: %s", tc_dtype_name(dt), tc_op_name(op),
		             tc_err_name(err));
		cr_assert(!memcmp(io, save, NELEM * es), "inout untouched on error");
		return;
	}
	cr_assert_eq(err, 0, "%s %s: %s", tc_dtype_name(dt), tc_op_name(op), tc_err_name(err));
	ref_fn ref = ref_of(dt);
	for (size_t i = 0; i < NELEM; i++)
		ref(op, in + i * es, save + i * es, want + i * es);
	for (size_t i = 0; i < NELEM; i++)
		cr_assert(!memcmp(io + i * es, want + i * es, es), "%s %s: element %zu differs",
		          tc_dtype_name(dt), tc_op_name(op), i);
}

Test(ops, every_dtype_and_op, .timeout = 30)
{
	for (int dt = 0; dt < TC_DTYPE_COUNT; dt++)
		for (int k = 0; k < NOPS; k++)
			for (uint64_t s = 1; s <= 8; s++)
				check_builtin((enum tc_dtype)dt, builtin_ops[k],
				              0x9e3779b97f4a7c15ull * s);
}

/* Every pair of edge values, both orders. */
Test(ops, edge_pairs, .timeout = 30)
{
	for (int dt = 0; dt < TC_DTYPE_COUNT; dt++) {
		size_t es = tc_dtype_size((enum tc_dtype)dt);
		uint64_t seed = 42;
		unsigned char edge[8 * 8];
		fill((enum tc_dtype)dt, edge, 8, &seed);
		for (int k = 0; k < NOPS; k++) {
			enum tc_op op = builtin_ops[k];
			if (is_float((enum tc_dtype)dt) && op >= TC_OP_BAND)
				continue;
			for (int a = 0; a < 6; a++)
				for (int b = 0; b < 6; b++) {
					unsigned char io[8], want[8];
					memcpy(io, edge + b * es, es);
					ref_of((enum tc_dtype)dt)(op, edge + a * es, edge + b * es, want);
					cr_assert_eq(tc_reduce_local(edge + a * es, io, 1,
					                             (enum tc_dtype)dt, op, NULL),
					             0);
					cr_assert(!memcmp(io, want, es), "%s %s edge %d (op) %d",
					          tc_dtype_name((enum tc_dtype)dt), tc_op_name(op),
					          a, b);
				}
		}
	}
}

Test(ops, signed_wraparound, .timeout = 10)
{
	int8_t a8 = INT8_MAX, b8 = 1;
	cr_assert_eq(tc_reduce_local(&a8, &b8, 1, TC_INT8, TC_OP_SUM, NULL), 0);
	cr_assert_eq(b8, INT8_MIN);
	int16_t a16 = INT16_MIN, b16 = -1;
	cr_assert_eq(tc_reduce_local(&a16, &b16, 1, TC_INT16, TC_OP_SUM, NULL), 0);
	cr_assert_eq(b16, INT16_MAX);
	int32_t a32 = INT32_MAX, b32 = INT32_MAX;
	cr_assert_eq(tc_reduce_local(&a32, &b32, 1, TC_INT32, TC_OP_SUM, NULL), 0);
	cr_assert_eq(b32, -2);
	int64_t a64 = INT64_MIN, b64 = -1;
	cr_assert_eq(tc_reduce_local(&a64, &b64, 1, TC_INT64, TC_OP_PROD, NULL), 0);
	cr_assert_eq(b64, INT64_MIN); /* -2^63 * -1 = 2^63 = -2^63 mod 2^64 */
	int32_t p32 = 65536, q32 = 65536;
	cr_assert_eq(tc_reduce_local(&p32, &q32, 1, TC_INT32, TC_OP_PROD, NULL), 0);
	cr_assert_eq(q32, 0);
	uint16_t u = 65535, v = 65535; /* 65535^2 mod 65536 = 1 */
	cr_assert_eq(tc_reduce_local(&u, &v, 1, TC_UINT16, TC_OP_PROD, NULL), 0);
	cr_assert_eq(v, 1);
	int8_t m1 = -1, m2 = 1; /* signed comparison */
	cr_assert_eq(tc_reduce_local(&m1, &m2, 1, TC_INT8, TC_OP_MIN, NULL), 0);
	cr_assert_eq(m2, -1);
	uint8_t n1 = 255, n2 = 1; /* unsigned comparison */
	cr_assert_eq(tc_reduce_local(&n1, &n2, 1, TC_UINT8, TC_OP_MAX, NULL), 0);
	cr_assert_eq(n2, 255);
}

Test(ops, errors, .timeout = 10)
{
	int32_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
	cr_assert_eq(tc_reduce_local(a, b, 4, TC_DTYPE_COUNT, TC_OP_SUM, NULL), TC_EINVAL);
	cr_assert_eq(tc_reduce_local(a, b, 4, (enum tc_dtype) - 1, TC_OP_SUM, NULL), TC_EINVAL);
	cr_assert_eq(tc_reduce_local(a, b, 4, TC_INT32, TC_OP_COUNT, NULL), TC_EINVAL);
	cr_assert_eq(tc_reduce_local(a, b, 4, TC_INT32, (enum tc_op) - 1, NULL), TC_EINVAL);
	cr_assert_eq(tc_reduce_local(a, b, 4, TC_INT32, TC_OP_USER, NULL), TC_EINVAL);
	struct tc_user_op nofn = {.fn = NULL};
	cr_assert_eq(tc_reduce_local(a, b, 4, TC_INT32, TC_OP_USER, &nofn), TC_EINVAL);
	cr_assert_eq(tc_reduce_local(NULL, b, 4, TC_INT32, TC_OP_SUM, NULL), TC_ENULLBUF);
	cr_assert_eq(tc_reduce_local(a, NULL, 4, TC_INT32, TC_OP_SUM, NULL), TC_ENULLBUF);
	cr_assert_eq(tc_reduce_local(NULL, NULL, 0, TC_INT32, TC_OP_SUM, NULL), 0);
	for (int op = TC_OP_BAND; op <= TC_OP_LOR; op++) {
		double x = 1.0, y = 2.0;
		float f = 1.0f, g = 2.0f;
		cr_assert_eq(tc_reduce_local(&x, &y, 1, TC_DOUBLE, (enum tc_op)op, NULL), TC_ENOTSUP);
		cr_assert_eq(tc_reduce_local(&f, &g, 1, TC_FLOAT, (enum tc_op)op, NULL), TC_ENOTSUP);
		cr_assert(y == 2.0 && g == 2.0f);
	}
	for (int i = 0; i < 4; i++)
		cr_assert_eq(b[i], 5 + i, "inout untouched on error");
}

Test(ops, names_and_sizes, .timeout = 10)
{
	static const size_t sizes[TC_DTYPE_COUNT] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1};
	for (int dt = 0; dt < TC_DTYPE_COUNT; dt++) {
		cr_assert_eq(tc_dtype_size((enum tc_dtype)dt), sizes[dt]);
		cr_assert_not_null(tc_dtype_name((enum tc_dtype)dt));
	}
	cr_assert_eq(tc_dtype_size(TC_DTYPE_COUNT), 0);
	cr_assert_null(tc_dtype_name(TC_DTYPE_COUNT));
	for (int op = 0; op < TC_OP_COUNT; op++)
		cr_assert_not_null(tc_op_name((enum tc_op)op));
	cr_assert_null(tc_op_name(TC_OP_COUNT));
	cr_assert_str_eq(tc_op_name(TC_OP_BXOR), "bxor");
	cr_assert_str_eq(tc_dtype_name(TC_UINT64), "uint64");
}

/* ---- user operators -------------------------------------------------------- */

/* A 2x2 matrix of 16-bit entries (arithmetic mod 2^16) packed in a uint64:
 * entry (r, c) in bits 16 (2r + c) .. 16 (2r + c) + 15.  The product is
 * associative and not commutative. */
static uint64_t mat_mul(uint64_t x, uint64_t y)
{
	uint64_t z = 0;
	for (int r = 0; r < 2; r++)
		for (int c = 0; c < 2; c++) {
			uint32_t s = 0;
			for (int k = 0; k < 2; k++) {
				uint32_t a = (uint32_t)(x >> (16 * (2 * r + k))) & 0xffffu;
				uint32_t b = (uint32_t)(y >> (16 * (2 * k + c))) & 0xffffu;
				s += a * b; /* a * b < 2^32; the sum wraps modulo 2^32, fine mod 2^16 */
			}
			z |= (uint64_t)(s & 0xffffu) << (16 * (2 * r + c));
		}
	return z;
}

struct mat_ctx {
	int calls;
	enum tc_dtype last_dt;
};

static void mat_fn(const void *in, void *inout, size_t count, enum tc_dtype dt, void *ctx)
{
	struct mat_ctx *c = ctx;
	c->calls++;
	c->last_dt = dt;
	const uint64_t *a = in;
	uint64_t *b = inout;
	for (size_t i = 0; i < count; i++)
		b[i] = mat_mul(a[i], b[i]);
}

/* Affine maps x -> a x + b (mod 2^32) in one uint64 (a high, b low);
 * in (+) inout = "first in, then inout": composition, not commutative. */
static void affine_fn(const void *in, void *inout, size_t count, enum tc_dtype dt, void *ctx)
{
	(void)dt;
	(void)ctx;
	const uint64_t *f = in;
	uint64_t *g = inout;
	for (size_t i = 0; i < count; i++) {
		uint32_t a1 = (uint32_t)(f[i] >> 32), b1 = (uint32_t)f[i];
		uint32_t a2 = (uint32_t)(g[i] >> 32), b2 = (uint32_t)g[i];
		g[i] = ((uint64_t)(a2 * a1) << 32) | (uint32_t)(a2 * b1 + b2);
	}
}

Test(ops, user_noncommutative, .timeout = 10)
{
	uint64_t seed = 7;
	uint64_t x[16], y[16], xy[16], yx[16];
	for (int i = 0; i < 16; i++) {
		x[i] = tc_test_rand(&seed);
		y[i] = tc_test_rand(&seed);
	}
	struct mat_ctx ctx = {0};
	struct tc_user_op u = {.fn = mat_fn, .ctx = &ctx, .commutative = 0};
	memcpy(xy, y, sizeof y);
	cr_assert_eq(tc_reduce_local(x, xy, 16, TC_UINT64, TC_OP_USER, &u), 0);
	memcpy(yx, x, sizeof x);
	cr_assert_eq(tc_reduce_local(y, yx, 16, TC_UINT64, TC_OP_USER, &u), 0);
	cr_assert_eq(ctx.calls, 2);
	cr_assert_eq(ctx.last_dt, TC_UINT64);
	int differ = 0;
	for (int i = 0; i < 16; i++) {
		cr_assert_eq(xy[i], mat_mul(x[i], y[i]), "in is the left operand");
		cr_assert_eq(yx[i], mat_mul(y[i], x[i]));
		differ += xy[i] != yx[i];
	}
	cr_assert_gt(differ, 0, "the operator is not commutative on these data");
	/* Associativity of the reference, which the collectives rely on. */
	for (int i = 0; i < 16; i++)
		cr_assert_eq(mat_mul(mat_mul(x[i], y[i]), xy[i]), mat_mul(x[i], mat_mul(y[i], xy[i])));
	/* count 0: the user function is not called. */
	cr_assert_eq(tc_reduce_local(x, xy, 0, TC_UINT64, TC_OP_USER, &u), 0);
	cr_assert_eq(ctx.calls, 2);

	/* Composition: (x -> 3x + 1) then (x -> 5x + 4) is x -> 15x + 9. */
	uint64_t f = ((uint64_t)3 << 32) | 1, g = ((uint64_t)5 << 32) | 4;
	struct tc_user_op aff = {.fn = affine_fn, .commutative = 0};
	uint64_t r = g;
	cr_assert_eq(tc_reduce_local(&f, &r, 1, TC_UINT64, TC_OP_USER, &aff), 0);
	cr_assert_eq(r, ((uint64_t)15 << 32) | 9);
	r = f;
	cr_assert_eq(tc_reduce_local(&g, &r, 1, TC_UINT64, TC_OP_USER, &aff), 0);
	cr_assert_eq(r, ((uint64_t)15 << 32) | 13); /* 3(5x + 4) + 1 */
}

/* A user operator over a datatype the built-ins reject (bxor on double bits):
 * the user function decides what the datatype means. */
static void dxor_fn(const void *in, void *inout, size_t count, enum tc_dtype dt, void *ctx)
{
	(void)ctx;
	cr_assert_eq(dt, TC_DOUBLE);
	const unsigned char *a = in;
	unsigned char *b = inout;
	for (size_t i = 0; i < count * sizeof(double); i++)
		b[i] ^= a[i];
}

Test(ops, user_on_float_types, .timeout = 10)
{
	double a[3] = {1.5, -2.0, 0.25}, b[3] = {1.5, 3.0, 0.25};
	struct tc_user_op u = {.fn = dxor_fn, .commutative = 1};
	cr_assert_eq(tc_reduce_local(a, b, 3, TC_DOUBLE, TC_OP_USER, &u), 0);
	uint64_t bits;
	memcpy(&bits, &b[0], sizeof bits);
	cr_assert_eq(bits, 0);
	memcpy(&bits, &b[2], sizeof bits);
	cr_assert_eq(bits, 0);
}
