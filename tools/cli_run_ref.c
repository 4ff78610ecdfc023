/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_run_ref.c - the inputs every rank of topocoll run gets, and the
 * sequential reference its results are checked against: each rank's
 * receive buffer after the call, by the MPI definition of the collective.
 *
 * Inputs are chosen so that every result is exact whatever the order of
 * combination (small integers for sums, powers of two for products, any
 * values for min and max, random bits for the bitwise operators), so the
 * check is a byte comparison for every datatype and operator.
 */
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "cli_run_ref.h"

uint64_t cli_run_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int is_float(enum tc_dtype dt)
{
	return dt == TC_FLOAT || dt == TC_DOUBLE;
}

static int is_signed(enum tc_dtype dt)
{
	return dt == TC_INT8 || dt == TC_INT16 || dt == TC_INT32 || dt == TC_INT64;
}

/* Element i of buf as integer bits (zero-extended) or as a double. */
static uint64_t get_u(const unsigned char *buf, size_t i, size_t es)
{
	uint8_t a;
	uint16_t b;
	uint32_t c;
	uint64_t d = 0;
	switch (es) {
	case 1:
		memcpy(&a, buf + i, 1);
		return a;
	case 2:
		memcpy(&b, buf + 2 * i, 2);
		return b;
	case 4:
		memcpy(&c, buf + 4 * i, 4);
		return c;
	default:
		memcpy(&d, buf + 8 * i, 8);
		return d;
	}
}

static void put_u(unsigned char *buf, size_t i, size_t es, uint64_t v)
{
	uint8_t a = (uint8_t)v;
	uint16_t b = (uint16_t)v;
	uint32_t c = (uint32_t)v;
	switch (es) {
	case 1:
		memcpy(buf + i, &a, 1);
		break;
	case 2:
		memcpy(buf + 2 * i, &b, 2);
		break;
	case 4:
		memcpy(buf + 4 * i, &c, 4);
		break;
	default:
		memcpy(buf + 8 * i, &v, 8);
		break;
	}
}

static double get_f(const unsigned char *buf, size_t i, enum tc_dtype dt)
{
	if (dt == TC_FLOAT) {
		float f;
		memcpy(&f, buf + 4 * i, 4);
		return f;
	}
	double d;
	memcpy(&d, buf + 8 * i, 8);
	return d;
}

static void put_f(unsigned char *buf, size_t i, enum tc_dtype dt, double v)
{
	if (dt == TC_FLOAT) {
		float f = (float)v;
		memcpy(buf + 4 * i, &f, 4);
	} else {
		memcpy(buf + 8 * i, &v, 8);
	}
}

/* Signed value of integer bits of width es. */
static int64_t sext(uint64_t v, size_t es)
{
	if (es == 8)
		return (int64_t)v;
	uint64_t sign = (uint64_t)1 << (8 * es - 1);
	uint64_t mask = (sign << 1) - 1;
	v &= mask;
	return v & sign ? (int64_t)(v | ~mask) : (int64_t)v;
}

/* Rank r's contribution at element i: exact under any combination order. */
void cli_run_gen_input(unsigned char *buf, size_t count, enum tc_dtype dt, enum tc_op op, int r, int p)
{
	size_t es = tc_dtype_size(dt);
	int sg = is_signed(dt) || is_float(dt);
	for (size_t i = 0; i < count; i++) {
		uint64_t h = cli_run_mix(((uint64_t)r << 40) ^ i ^ ((uint64_t)op << 56));
		int64_t v;
		switch (op) {
		case TC_OP_SUM:
			v = (int64_t)(h % 11) - (sg ? 5 : 0);
			break;
		case TC_OP_PROD:
			/* 1 mostly, 2 on one rank per element, -1 sometimes; floats
			 * also 0.5 (below). */
			v = (i % (size_t)p) == (size_t)r ? 2 : (sg && h % 7 == 0 ? -1 : 1);
			break;
		case TC_OP_MIN:
		case TC_OP_MAX:
			v = sg ? (int64_t)(h % 201) - 100 : (int64_t)(h % 251);
			break;
		case TC_OP_LAND:
		case TC_OP_LOR:
			v = h % 5 == 0 ? 0 : (int64_t)(h % 3) + 1;
			break;
		default: /* bitwise: every bit random */
			put_u(buf, i, es, h);
			continue;
		}
		if (is_float(dt)) {
			double d = (double)v;
			if (op == TC_OP_PROD && v == 1 && h % 5 == 1)
				d = 0.5;
			put_f(buf, i, dt, d);
		} else {
			put_u(buf, i, es, (uint64_t)v);
		}
	}
}

/* acc = acc (op) x, element-wise: the sequential reference. */
static void ref_combine(unsigned char *acc, const unsigned char *x, size_t count, enum tc_dtype dt,
                        enum tc_op op)
{
	size_t es = tc_dtype_size(dt);
	for (size_t i = 0; i < count; i++) {
		if (is_float(dt)) {
			double a = get_f(acc, i, dt), b = get_f(x, i, dt), c;
			switch (op) {
			case TC_OP_SUM:
				c = a + b;
				break;
			case TC_OP_PROD:
				c = a * b;
				break;
			case TC_OP_MIN:
				c = b < a ? b : a;
				break;
			default:
				c = b > a ? b : a;
				break;
			}
			put_f(acc, i, dt, c);
			continue;
		}
		uint64_t a = get_u(acc, i, es), b = get_u(x, i, es), c;
		int64_t sa = sext(a, es), sb = sext(b, es);
		int sg = is_signed(dt);
		switch (op) {
		case TC_OP_SUM:
			c = a + b;
			break;
		case TC_OP_PROD:
			c = a * b;
			break;
		case TC_OP_MIN:
			c = sg ? (sb < sa ? b : a) : (b < a ? b : a);
			break;
		case TC_OP_MAX:
			c = sg ? (sb > sa ? b : a) : (b > a ? b : a);
			break;
		case TC_OP_BAND:
			c = a & b;
			break;
		case TC_OP_BOR:
			c = a | b;
			break;
		case TC_OP_BXOR:
			c = a ^ b;
			break;
		case TC_OP_LAND:
			c = (sext(a, es) != 0) && (sext(b, es) != 0);
			break;
		default:
			c = (sext(a, es) != 0) || (sext(b, es) != 0);
			break;
		}
		put_u(acc, i, es, c);
	}
}

/* dst = block b of the inputs of ranks lo..hi combined in rank order. */
static void ref_fold(unsigned char *dst, unsigned char *const *in, int lo, int hi, size_t b,
                     const struct cli_run_args *a, size_t count)
{
	size_t m = (size_t)a->bytes;
	memcpy(dst, in[lo] + b * m, m);
	for (int q = lo + 1; q <= hi; q++)
		ref_combine(dst, in[q] + b * m, count, a->dt, a->op);
}

/* The sequential reference: rank r's receive buffer after the call, by the
 * MPI definition of the collective (ranks with a receive buffer only). */
void cli_run_ref_result(const struct cli_run_args *a, int p, int r, unsigned char *const *in,
                        size_t count, unsigned char *dst)
{
	size_t m = (size_t)a->bytes;
	if (tc_coll_flags(a->coll) & TC_CF_VCOUNT) {
		/* Rank i's block for r, at its packed place. */
		const size_t es = tc_dtype_size(a->dt);
		for (int i = 0; i < p; i++) {
			uint64_t n = cli_v_elems(a->coll, p, a->root, a->vcounts, i, r);
			if (n)
				memcpy(dst + cli_v_roff(a->coll, p, a->root, a->vcounts, i, r) * es,
				       in[i] + cli_v_soff(a->coll, p, a->root, a->vcounts, i, r) * es,
				       (size_t)n * es);
		}
		return;
	}
	switch (a->coll) {
	case TC_COLL_BCAST:
	case TC_COLL_MULTICAST:
		memcpy(dst, in[a->root], m);
		break;
	case TC_COLL_SHIFT:
	case TC_COLL_GRAY2BINARY:
	case TC_COLL_BINARY2GRAY:
		memcpy(dst, in[cli_perm_source(a->coll, p, a->q, a->gray_ring, r)], m);
		break;
	case TC_COLL_REDUCE:
	case TC_COLL_ALLREDUCE:
		ref_fold(dst, in, 0, p - 1, 0, a, count);
		break;
	case TC_COLL_ALLGATHER:
	case TC_COLL_GATHER:
		for (int i = 0; i < p; i++)
			memcpy(dst + (size_t)i * m, in[i], m);
		break;
	case TC_COLL_REDUCE_SCATTER:
		ref_fold(dst, in, 0, p - 1, (size_t)r, a, count);
		break;
	case TC_COLL_SCAN:
		ref_fold(dst, in, 0, r, 0, a, count);
		break;
	case TC_COLL_EXSCAN:
		ref_fold(dst, in, 0, r - 1, 0, a, count);
		break;
	case TC_COLL_SCATTER:
		memcpy(dst, in[a->root] + (size_t)r * m, m);
		break;
	case TC_COLL_ALLTOALL:
		for (int i = 0; i < p; i++)
			memcpy(dst + (size_t)i * m, in[i] + (size_t)r * m, m);
		break;
	default:
		break;
	}
}
