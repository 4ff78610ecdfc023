/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/ops.c - datatypes and reduction kernels.
 *
 * One kernel per (datatype, operator), generated from the X-macros of
 * topocoll/coll.h: out = a (op) b with three loops (out is a, out is b, out
 * is a third array), each with restrict pointers so that the compiler
 * vectorises it.  The executor thus combines two operands into a third
 * buffer, or into either one, without reordering copies.  Floating-point
 * results depend only on the order in which the algorithm combines, never on
 * the kernel.
 */
#include <stdint.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "base/error_detail.h"
#include "topocoll.h"
#include "topocoll/coll.h"

size_t tc_dtype_size(enum tc_dtype dt)
{
	switch (dt) {
#define TC__DT_SIZE(name, type) \
	case TC_##name:         \
		return sizeof(type);
		TC_DTYPE_MAP(TC__DT_SIZE)
#undef TC__DT_SIZE
	default:
		return 0;
	}
}

const char *tc_dtype_name(enum tc_dtype dt)
{
	static const char *names[] = {"int8",   "int16",  "int32", "int64",  "uint8", "uint16",
	                              "uint32", "uint64", "float", "double", "byte"};
	_Static_assert(sizeof names / sizeof names[0] == TC_DTYPE_COUNT, "one name per datatype");
	return (unsigned)dt < TC_DTYPE_COUNT ? names[dt] : NULL;
}

const char *tc_op_name(enum tc_op op)
{
	switch (op) {
#define TC__OP_NAME(name, lname) \
	case TC_OP_##name:       \
		return #lname;
		TC_OP_MAP(TC__OP_NAME)
#undef TC__OP_NAME
	default:
		return NULL;
	}
}

#define TC__K_SUM(a, b) ((a) + (b))
/* Times 1u: a uint16_t product would otherwise be done in (signed) int. */
#define TC__K_PROD(a, b) ((a)*1u * (b))
#define TC__K_MIN(a, b) ((b) < (a) ? (b) : (a))
#define TC__K_MAX(a, b) ((b) > (a) ? (b) : (a))
#define TC__K_BAND(a, b) ((a) & (b))
#define TC__K_BOR(a, b) ((a) | (b))
#define TC__K_BXOR(a, b) ((a) ^ (b))
#define TC__K_LAND(a, b) ((a) && (b))
#define TC__K_LOR(a, b) ((a) || (b))

/*
 * out[i] = a[i] op b[i], a the left operand.  out may be a or b (exactly) or
 * a third array; partial overlap is not allowed.  Each case gets its own loop
 * with restrict pointers so that the compiler vectorises all three.
 */
#define TC__KERNEL_BODY(type, K)                               \
	if (a_ == b_) { /* x op x: every pointer may alias */  \
		const type *a = a_;                            \
		type *o = out_;                                \
		for (size_t i = 0; i < n; i++)                 \
			o[i] = (type)K(a[i], a[i]);            \
	} else if (out_ == b_) {                               \
		const type *restrict a = a_;                   \
		type *restrict io = out_;                      \
		for (size_t i = 0; i < n; i++)                 \
			io[i] = (type)K(a[i], io[i]);          \
	} else if (out_ == a_) {                               \
		const type *restrict b = b_;                   \
		type *restrict io = out_;                      \
		for (size_t i = 0; i < n; i++)                 \
			io[i] = (type)K(io[i], b[i]);          \
	} else {                                               \
		const type *restrict a = a_, *restrict b = b_; \
		type *restrict o = out_;                       \
		for (size_t i = 0; i < n; i++)                 \
			o[i] = (type)K(a[i], b[i]);            \
	}

#define TC__KERNEL(tname, type, oname)                                                            \
	static void tc__k_##tname##_##oname(void *out_, const void *a_, const void *b_, size_t n) \
	{                                                                                         \
		TC__KERNEL_BODY(type, TC__K_##oname)                                              \
	}

#define TC__INT_KERNELS(tname, type)  \
	TC__KERNEL(tname, type, SUM)  \
	TC__KERNEL(tname, type, PROD) \
	TC__KERNEL(tname, type, MIN)  \
	TC__KERNEL(tname, type, MAX)  \
	TC__KERNEL(tname, type, BAND) \
	TC__KERNEL(tname, type, BOR)  \
	TC__KERNEL(tname, type, BXOR) \
	TC__KERNEL(tname, type, LAND) \
	TC__KERNEL(tname, type, LOR)
#define TC__UINT_PART_KERNELS(tname, type) \
	TC__KERNEL(tname, type, SUM)       \
	TC__KERNEL(tname, type, PROD)      \
	TC__KERNEL(tname, type, BAND)      \
	TC__KERNEL(tname, type, BOR)       \
	TC__KERNEL(tname, type, BXOR)      \
	TC__KERNEL(tname, type, LAND)      \
	TC__KERNEL(tname, type, LOR)
#define TC__FLT_KERNELS(tname, type)  \
	TC__KERNEL(tname, type, SUM)  \
	TC__KERNEL(tname, type, PROD) \
	TC__KERNEL(tname, type, MIN)  \
	TC__KERNEL(tname, type, MAX)

/* Unsigned arithmetic wraps; signed sums and products are done in the
 * unsigned type of the same width so that overflow wraps too (no UB). */
TC__UINT_PART_KERNELS(INT8, uint8_t)
TC__UINT_PART_KERNELS(INT16, uint16_t)
TC__UINT_PART_KERNELS(INT32, uint32_t)
TC__UINT_PART_KERNELS(INT64, uint64_t)
TC__INT_KERNELS(UINT8, uint8_t)
TC__INT_KERNELS(UINT16, uint16_t)
TC__INT_KERNELS(UINT32, uint32_t)
TC__INT_KERNELS(UINT64, uint64_t)
TC__INT_KERNELS(BYTE, uint8_t)
TC__FLT_KERNELS(FLOAT, float)
TC__FLT_KERNELS(DOUBLE, double)

/* Signed min and max must compare as signed. */
#define TC__SKERNEL(tname, type, oname)                                                               \
	static void tc__k_##tname##_##oname##_S(void *out_, const void *a_, const void *b_, size_t n) \
	{                                                                                             \
		TC__KERNEL_BODY(type, TC__K_##oname)                                                  \
	}
TC__SKERNEL(INT8, int8_t, MIN)
TC__SKERNEL(INT8, int8_t, MAX)
TC__SKERNEL(INT16, int16_t, MIN)
TC__SKERNEL(INT16, int16_t, MAX)
TC__SKERNEL(INT32, int32_t, MIN)
TC__SKERNEL(INT32, int32_t, MAX)
TC__SKERNEL(INT64, int64_t, MIN)
TC__SKERNEL(INT64, int64_t, MAX)

typedef void (*tc__kernel)(void *out, const void *a, const void *b, size_t n);

#define TC__INT_ROW(t)                                                                         \
	{                                                                                      \
		tc__k_##t##_SUM, tc__k_##t##_PROD, tc__k_##t##_MIN, tc__k_##t##_MAX,           \
		        tc__k_##t##_BAND, tc__k_##t##_BOR, tc__k_##t##_BXOR, tc__k_##t##_LAND, \
		        tc__k_##t##_LOR                                                        \
	}
#define TC__SINT_ROW(t)                                                                        \
	{                                                                                      \
		tc__k_##t##_SUM, tc__k_##t##_PROD, tc__k_##t##_MIN_S, tc__k_##t##_MAX_S,       \
		        tc__k_##t##_BAND, tc__k_##t##_BOR, tc__k_##t##_BXOR, tc__k_##t##_LAND, \
		        tc__k_##t##_LOR                                                        \
	}
#define TC__FLT_ROW(t)                                                                           \
	{                                                                                        \
		tc__k_##t##_SUM, tc__k_##t##_PROD, tc__k_##t##_MIN, tc__k_##t##_MAX, NULL, NULL, \
		        NULL, NULL, NULL                                                         \
	}

static const tc__kernel tc__kernels[TC_DTYPE_COUNT][TC_OP_USER] = {
        [TC_INT8] = TC__SINT_ROW(INT8),    [TC_INT16] = TC__SINT_ROW(INT16),
        [TC_INT32] = TC__SINT_ROW(INT32),  [TC_INT64] = TC__SINT_ROW(INT64),
        [TC_UINT8] = TC__INT_ROW(UINT8),   [TC_UINT16] = TC__INT_ROW(UINT16),
        [TC_UINT32] = TC__INT_ROW(UINT32), [TC_UINT64] = TC__INT_ROW(UINT64),
        [TC_FLOAT] = TC__FLT_ROW(FLOAT),   [TC_DOUBLE] = TC__FLT_ROW(DOUBLE),
        [TC_BYTE] = TC__INT_ROW(BYTE),
};

int tc__op_check(enum tc_dtype dt, enum tc_op op)
{
	if (op == TC_OP_USER || tc__kernels[dt][op])
		return TC_OK;
	tc__set_detail("operator %s needs an integer datatype (%s is floating point): "
	               "bitwise and logical operators take integer types only",
	               tc_op_name(op), tc_dtype_name(dt));
	return TC_ENOTSUP;
}

int tc_reduce_local(const void *in, void *inout, size_t count, enum tc_dtype dt, enum tc_op op,
                    const struct tc_user_op *user)
{
	tc__clear_detail();
	if ((unsigned)dt >= TC_DTYPE_COUNT || (unsigned)op >= TC_OP_COUNT)
		return TC_EINVAL;
	if (op == TC_OP_USER && (!user || !user->fn))
		return TC_EINVAL;
	int err = tc__op_check(dt, op);
	if (err)
		return err;
	/* The collectives' bound (tc__coll_x): count x the element's size
	 * neither wraps nor passes TC_MAX_MESSAGE. */
	if (count > TC_MAX_MESSAGE / tc_dtype_size(dt))
		return TC_EOVERFLOW;
	if (!count)
		return TC_OK;
	if (!in || !inout)
		return TC_ENULLBUF;
	if (op == TC_OP_USER)
		user->fn(in, inout, count, dt, user->ctx);
	else
		tc__kernels[dt][op](inout, in, inout, count);
	return TC_OK;
}

void tc__reduce3(void *out, const void *a, const void *b, size_t count, enum tc_dtype dt,
                 enum tc_op op, const struct tc_user_op *user)
{
	if (!count)
		return;
	if (op != TC_OP_USER) {
		tc__kernels[dt][op](out, a, b, count);
		return;
	}
	/* A user function computes inout = in op inout (MPI's convention). */
	size_t es = tc_dtype_size(dt);
	if (out == b) {
		user->fn(a, out, count, dt, user->ctx);
		return;
	}
	if (out != a) {
		memcpy(out, b, count * es);
		user->fn(a, out, count, dt, user->ctx);
		return;
	}
	/* out = out op b: the left operand goes through a stack buffer, in
	 * chunks of whole elements. */
	unsigned char tmp[4096];
	size_t chunk = sizeof tmp / es;
	unsigned char *o = out;
	const unsigned char *r = b;
	for (size_t i = 0; i < count; i += chunk) {
		size_t n = count - i < chunk ? count - i : chunk;
		memcpy(tmp, o + i * es, n * es);
		memcpy(o + i * es, r + i * es, n * es);
		user->fn(tmp, o + i * es, n, dt, user->ctx);
	}
}
