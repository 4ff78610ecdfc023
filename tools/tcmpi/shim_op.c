/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_op.c - MPI reduction operators: the predefined ones on
 * every predefined datatype they apply to (MINLOC and MAXLOC on the pair
 * types), user operators (MPI_Op_create), MPI_Reduce_local.  MPI_REPLACE
 * and MPI_NO_OP, operators of the one-sided accumulate calls alone, are
 * refused by every reduction (MPI_ERR_OP).
 *
 * Where topocoll has the datatype and the operator (or the operator is a
 * user one on such a datatype) collectives reduce inside topocoll
 * (tcmpi__op_native); everything else is reduced here, on packed data
 * (reduce_packed), by the collectives' own fallback (shim_coll.c).
 */
#include <complex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* The operators made by MPI_Op_create, by handle - 32: nuser entries,
 * the table grown as programs make more.  MPI_Op_free ends the handle
 * (used 0) at once, but an entry that pending reductions hold
 * (tcmpi__op_hold) keeps its function, and is not reused, until the last
 * of them lets it go. */
#define MAX_USER (1 << 20)
static struct user_op {
	int used;
	int holds;
	MPI_User_function *fn;
	MPI_User_function_c *fn_c;
	int commute;
} * user_ops;
static int nuser;

static const enum tc_op tc_of[TCMPI_OP_PREDEFINED] = {
        [MPI_MAX] = TC_OP_MAX,       [MPI_MIN] = TC_OP_MIN,      [MPI_SUM] = TC_OP_SUM,
        [MPI_PROD] = TC_OP_PROD,     [MPI_LAND] = TC_OP_LAND,    [MPI_BAND] = TC_OP_BAND,
        [MPI_LOR] = TC_OP_LOR,       [MPI_BOR] = TC_OP_BOR,      [MPI_BXOR] = TC_OP_BXOR,
        [MPI_LXOR] = TC_OP_COUNT,    [MPI_MINLOC] = TC_OP_COUNT, [MPI_MAXLOC] = TC_OP_COUNT,
        [MPI_REPLACE] = TC_OP_COUNT, [MPI_NO_OP] = TC_OP_COUNT,
};

static const char *const op_names[TCMPI_OP_PREDEFINED] = {
        "MPI_OP_NULL", "MPI_MAX",    "MPI_MIN",    "MPI_SUM",     "MPI_PROD",
        "MPI_LAND",    "MPI_BAND",   "MPI_LOR",    "MPI_BOR",     "MPI_LXOR",
        "MPI_BXOR",    "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP",
};

static int is_user(MPI_Op op)
{
	return op >= 32 && op < 32 + nuser && user_ops[op - 32].used;
}

void tcmpi__op_hold(MPI_Op op)
{
	if (is_user(op))
		user_ops[op - 32].holds++;
}

void tcmpi__op_drop(MPI_Op op)
{
	if (op >= 32 && op < 32 + nuser && user_ops[op - 32].holds > 0)
		user_ops[op - 32].holds--;
}

/* MPI_REPLACE and MPI_NO_OP are operators of MPI's one-sided accumulate
 * calls only: no reduction (collective or MPI_Reduce_local) takes them. */
static int one_sided_only(MPI_Op op)
{
	return op == MPI_REPLACE || op == MPI_NO_OP;
}

int tcmpi__op_valid(MPI_Op op)
{
	return (op > 0 && op < TCMPI_OP_PREDEFINED && !one_sided_only(op)) || is_user(op);
}

int tcmpi__op_check(MPI_Comm comm, MPI_Op op, const char *fn)
{
	if (tcmpi__op_valid(op))
		return MPI_SUCCESS;
	if (one_sided_only(op))
		return tcmpi__error(comm, MPI_ERR_OP, fn,
		                    "%s is an operator of the one-sided accumulate calls only, "
		                    "not of reductions",
		                    op_names[op]);
	return tcmpi__error(comm, MPI_ERR_OP, fn, "invalid operator %d", op);
}

/* By a reduction of one element of zeros (tcmpi__reduce_local's own
 * check of the pair). */
int tcmpi__op_applies(MPI_Comm comm, MPI_Op op, MPI_Datatype dt, const char *fn)
{
	int rc = tcmpi__op_check(comm, op, fn);
	if (rc)
		return rc;
	if (op <= 0 || op >= TCMPI_OP_PREDEFINED)
		return MPI_SUCCESS;
	const struct tcmpi__dtype *t = tcmpi__dt(dt);
	if (!t)
		return MPI_SUCCESS; /* the caller's check says which */
	unsigned char *z = calloc(2, t->size ? t->size : 1);
	if (!z)
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	rc = tcmpi__reduce_local(z, z + t->size, 1, dt, op);
	free(z);
	return rc ? tcmpi__error(comm, MPI_ERR_OP, fn, "%s does not apply to %s", op_names[op],
	                         t->name[0] ? t->name : "this datatype")
	          : MPI_SUCCESS;
}

int tcmpi__op_commutative(MPI_Op op)
{
	return is_user(op) ? user_ops[op - 32].commute : 1;
}

/* The context of user_adapter, which topocoll calls for a user operator on
 * a predefined datatype: that operator and datatype in the pointer's value
 * itself.  Every reduction carries its own (a request keeps its own copy of
 * struct tc_user_op), valid for as long as the reduction runs, however
 * many others are under way or made meanwhile. */
_Static_assert(TCMPI_DT_PREDEFINED <= 0x10000, "a predefined datatype fits in 16 bits");
static void *adapter_ctx(MPI_Op op, MPI_Datatype dt)
{
	return (void *)(((uintptr_t)(unsigned)op << 16) | (uintptr_t)(unsigned)dt);
}

static void user_adapter(const void *in, void *inout, size_t count, enum tc_dtype dt, void *ctx)
{
	(void)dt;
	uintptr_t v = (uintptr_t)ctx;
	int u = (int)(v >> 16) - 32;
	MPI_Datatype mdt = (MPI_Datatype)(v & 0xffff);
	if (user_ops[u].fn) {
		int len = (int)count;
		user_ops[u].fn((void *)(uintptr_t)in, inout, &len, &mdt);
	} else {
		MPI_Count len = (MPI_Count)count;
		user_ops[u].fn_c((void *)(uintptr_t)in, inout, &len, &mdt);
	}
}

/* Whether MPI's groups of datatypes (MPI 4.1, section 6.9.2) let the
 * predefined operator op reduce dt, for the types whose bytes topocoll
 * would otherwise reduce as integers: a byte takes the bitwise operators
 * alone, a wide character or packed data none (MPICH refuses these as
 * well; Open MPI 4.1 sums them). */
static int op_group_fits(MPI_Datatype dt, MPI_Op op)
{
	switch (dt) {
	case MPI_BYTE:
		return op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
	case MPI_WCHAR:
	case MPI_PACKED:
		return 0;
	default:
		return 1;
	}
}

int tcmpi__op_native(MPI_Op op, MPI_Datatype dt, enum tc_op *tcop, struct tc_user_op *user)
{
	int tdt = tcmpi__tc_dtype(dt);
	if (tdt < 0)
		return -1;
	if (is_user(op)) {
		*tcop = TC_OP_USER;
		*user = (struct tc_user_op){user_adapter, adapter_ctx(op, dt), user_ops[op - 32].commute};
		return 0;
	}
	if (op <= 0 || op >= TCMPI_OP_PREDEFINED || tc_of[op] == TC_OP_COUNT || !op_group_fits(dt, op))
		return -1;
	int fp = tdt == TC_FLOAT || tdt == TC_DOUBLE;
	if (fp && op != MPI_MAX && op != MPI_MIN && op != MPI_SUM && op != MPI_PROD)
		return -1;
	*tcop = tc_of[op];
	return 0;
}

/* ---------------------------------------------------------------------
 * Kernels the layer runs itself.
 */
#define ARITH(T, in, io, n, op)                           \
	do {                                              \
		const T *a_ = (const T *)(in);            \
		T *b_ = (T *)(io);                        \
		for (size_t i_ = 0; i_ < (n); i_++)       \
			switch (op) {                     \
			case MPI_SUM:                     \
				b_[i_] = a_[i_] + b_[i_]; \
				break;                    \
			case MPI_PROD:                    \
				b_[i_] = a_[i_] * b_[i_]; \
				break;                    \
			default:                          \
				return -1;                \
			}                                 \
	} while (0)
#define ORDER(T, in, io, n, op)                                             \
	do {                                                                \
		const T *a_ = (const T *)(in);                              \
		T *b_ = (T *)(io);                                          \
		for (size_t i_ = 0; i_ < (n); i_++)                         \
			switch (op) {                                       \
			case MPI_SUM:                                       \
				b_[i_] = a_[i_] + b_[i_];                   \
				break;                                      \
			case MPI_PROD:                                      \
				b_[i_] = a_[i_] * b_[i_];                   \
				break;                                      \
			case MPI_MAX:                                       \
				b_[i_] = a_[i_] > b_[i_] ? a_[i_] : b_[i_]; \
				break;                                      \
			case MPI_MIN:                                       \
				b_[i_] = a_[i_] < b_[i_] ? a_[i_] : b_[i_]; \
				break;                                      \
			default:                                            \
				return -1;                                  \
			}                                                   \
	} while (0)
/* MINLOC/MAXLOC on packed pairs: value then int, no padding. */
#define LOC(T, in, io, n, op)                                                               \
	do {                                                                                \
		const unsigned char *a_ = (const unsigned char *)(in);                      \
		unsigned char *b_ = (unsigned char *)(io);                                  \
		for (size_t i_ = 0; i_ < (n); i_++) {                                       \
			T va, vb;                                                           \
			int ia, ib;                                                         \
			size_t at_ = i_ * (sizeof(T) + sizeof(int));                        \
			memcpy(&va, a_ + at_, sizeof va);                                   \
			memcpy(&ia, a_ + at_ + sizeof(T), sizeof ia);                       \
			memcpy(&vb, b_ + at_, sizeof vb);                                   \
			memcpy(&ib, b_ + at_ + sizeof(T), sizeof ib);                       \
			int take = (op) == MPI_MINLOC ? (va < vb || (va == vb && ia < ib))  \
			                              : (va > vb || (va == vb && ia < ib)); \
			if ((op) != MPI_MINLOC && (op) != MPI_MAXLOC)                       \
				return -1;                                                  \
			if (take)                                                           \
				memcpy(b_ + at_, a_ + at_, sizeof(T) + sizeof(int));        \
		}                                                                           \
	} while (0)

/* inout = in (op) inout on n packed elements of the predefined type dt
 * with a predefined operator; -1: the operator does not apply to dt. */
static int reduce_predef(const void *in, void *inout, size_t n, MPI_Datatype dt, MPI_Op op)
{
	const struct tcmpi__dtype *t = tcmpi__dt(dt);
	if (!op_group_fits(dt, op))
		return -1;
	int tdt = tcmpi__tc_dtype(dt);
	if (tdt >= 0 && tc_of[op] != TC_OP_COUNT)
		return tc_reduce_local(in, inout, n, (enum tc_dtype)tdt, tc_of[op], NULL) == 0 ? 0 : -1;
	if (op == MPI_LXOR && (tdt >= 0 || dt == MPI_C_BOOL)) {
		if (tdt == TC_FLOAT || tdt == TC_DOUBLE)
			return -1;
		const unsigned char *a = in;
		unsigned char *b = inout;
		size_t s = t->size;
		for (size_t i = 0; i < n; i++) {
			int x = 0, y = 0;
			for (size_t k = 0; k < s; k++) {
				x |= a[i * s + k] != 0;
				y |= b[i * s + k] != 0;
			}
			memset(b + i * s, 0, s);
			/* A true value of 1 in the element's low-order byte (little
			 * endian) or high-order one (big endian). */
			unsigned v = 1;
			int little = *(unsigned char *)&v == 1;
			b[i * s + (little ? 0 : s - 1)] = (unsigned char)(x != y);
		}
		return 0;
	}
	switch (dt) {
	case MPI_C_BOOL: {
		const bool *a = in;
		bool *b = inout;
		for (size_t i = 0; i < n; i++)
			switch (op) {
			case MPI_LAND:
				b[i] = a[i] && b[i];
				break;
			case MPI_LOR:
				b[i] = a[i] || b[i];
				break;
			default:
				return -1;
			}
		return 0;
	}
	case MPI_LONG_DOUBLE:
		ORDER(long double, in, inout, n, op);
		return 0;
	case MPI_C_FLOAT_COMPLEX:
		ARITH(float complex, in, inout, n, op);
		return 0;
	case MPI_C_DOUBLE_COMPLEX:
		ARITH(double complex, in, inout, n, op);
		return 0;
	case MPI_C_LONG_DOUBLE_COMPLEX:
		ARITH(long double complex, in, inout, n, op);
		return 0;
	case MPI_FLOAT_INT:
		LOC(float, in, inout, n, op);
		return 0;
	case MPI_DOUBLE_INT:
		LOC(double, in, inout, n, op);
		return 0;
	case MPI_LONG_INT:
		LOC(long, in, inout, n, op);
		return 0;
	case MPI_2INT:
		LOC(int, in, inout, n, op);
		return 0;
	case MPI_SHORT_INT:
		LOC(short, in, inout, n, op);
		return 0;
	case MPI_LONG_DOUBLE_INT:
		LOC(long double, in, inout, n, op);
		return 0;
	default:
		return -1;
	}
}

/* inout = in (op) inout on count packed elements of dt. */
int tcmpi__reduce_local(const void *in, void *inout, size_t count, MPI_Datatype dt, MPI_Op op)
{
	const struct tcmpi__dtype *t = tcmpi__dt(dt);
	if (!t)
		return MPI_ERR_TYPE;
	if (!tcmpi__op_valid(op))
		return MPI_ERR_OP;
	if (!is_user(op)) {
		/* A derived type of one predefined type reduces as that type. */
		const struct tcmpi__dtype *b = t->basic > 0 ? tcmpi__dt(t->basic) : NULL;
		if (!b || b->size == 0)
			return MPI_ERR_OP;
		return reduce_predef(in, inout, count * (t->size / b->size), t->basic, op) == 0
		               ? MPI_SUCCESS
		               : MPI_ERR_OP;
	}
	int u = op - 32;
	if (t->contig) {
		MPI_Datatype mdt = dt;
		if (user_ops[u].fn) {
			int len = (int)count;
			user_ops[u].fn((void *)(uintptr_t)in, inout, &len, &mdt);
		} else {
			MPI_Count len = (MPI_Count)count;
			user_ops[u].fn_c((void *)(uintptr_t)in, inout, &len, &mdt);
		}
		return MPI_SUCCESS;
	}
	/* A user operator sees the datatype's own layout: unpack both, apply,
	 * pack the result.  The scratch buffers hold the bytes from lo to hi
	 * from the first element's start: every element's data (true_lb on,
	 * true_extent bytes) and its span between the bounds (lb on, extent
	 * bytes, which the operator may write whole, as a C struct's padding),
	 * whatever the signs of lb and of the extent. */
	MPI_Aint first = t->lb < t->true_lb ? t->lb : t->true_lb;
	MPI_Aint end = t->lb + t->extent > t->true_lb + t->true_extent ? t->lb + t->extent
	                                                               : t->true_lb + t->true_extent;
	MPI_Aint last = count ? (MPI_Aint)(count - 1) * t->extent : 0;
	MPI_Aint lo = first + (last < 0 ? last : 0), hi = end + (last > 0 ? last : 0);
	size_t span = hi > lo ? (size_t)(hi - lo) : 1;
	unsigned char *a = calloc(1, span), *b = calloc(1, span);
	if (!a || !b) {
		free(a);
		free(b);
		return MPI_ERR_NO_MEM;
	}
	/* The first element's start in each (outside them when lo > 0). */
	void *ea = (void *)((uintptr_t)a - (uintptr_t)lo), *eb = (void *)((uintptr_t)b - (uintptr_t)lo);
	tcmpi__unpack(in, count, t, ea);
	tcmpi__unpack(inout, count, t, eb);
	MPI_Datatype mdt = dt;
	if (user_ops[u].fn) {
		int len = (int)count;
		user_ops[u].fn(ea, eb, &len, &mdt);
	} else {
		MPI_Count len = (MPI_Count)count;
		user_ops[u].fn_c(ea, eb, &len, &mdt);
	}
	tcmpi__pack(eb, count, t, inout);
	free(a);
	free(b);
	return MPI_SUCCESS;
}

static int op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op,
                     const char *name)
{
	if ((!fn && !fn_c) || !op)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, name, "NULL function or op");
	int i = 0;
	while (i < nuser && (user_ops[i].used || user_ops[i].holds))
		i++;
	if (i == nuser) {
		if (nuser == MAX_USER)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, name,
			                    "more than %d operators at once", MAX_USER);
		int n = nuser ? 2 * nuser : 16;
		struct user_op *grown = realloc(user_ops, (size_t)n * sizeof *grown);
		if (!grown)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, name, "out of memory");
		memset(grown + nuser, 0, (size_t)(n - nuser) * sizeof *grown);
		user_ops = grown;
		nuser = n;
	}
	user_ops[i] = (struct user_op){.used = 1, .fn = fn, .fn_c = fn_c, .commute = commute != 0};
	*op = 32 + i;
	return MPI_SUCCESS;
}

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
	return op_create(user_fn, NULL, commute, op, __func__);
}

int MPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
	return op_create(NULL, user_fn, commute, op, __func__);
}

int MPI_Op_free(MPI_Op *op)
{
	if (!op || !is_user(*op))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_OP, __func__,
		                    "not an operator made by MPI_Op_create");
	user_ops[*op - 32].used = 0;
	*op = MPI_OP_NULL;
	return MPI_SUCCESS;
}

int MPI_Op_commutative(MPI_Op op, int *commute)
{
	/* Any operator: MPI_REPLACE and MPI_NO_OP too. */
	if (!((op > 0 && op < TCMPI_OP_PREDEFINED) || is_user(op)) || !commute)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_OP, __func__, "invalid operator %d", op);
	*commute = tcmpi__op_commutative(op);
	return MPI_SUCCESS;
}

static int reduce_local_api(const void *inbuf, void *inoutbuf, size_t count, MPI_Datatype datatype,
                            MPI_Op op, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	const struct tcmpi__dtype *t = tcmpi__dt(datatype);
	if (!t)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype %d", datatype);
	rc = tcmpi__op_check(MPI_COMM_NULL, op, fn);
	if (rc)
		return rc;
	if (t->contig || is_user(op)) {
		if (!t->contig) {
			/* user operators take the layout as it is */
			MPI_Datatype mdt = datatype;
			int u = op - 32;
			if (user_ops[u].fn) {
				int len = (int)count;
				user_ops[u].fn((void *)(uintptr_t)inbuf, inoutbuf, &len, &mdt);
			} else {
				MPI_Count len = (MPI_Count)count;
				user_ops[u].fn_c((void *)(uintptr_t)inbuf, inoutbuf, &len, &mdt);
			}
			return MPI_SUCCESS;
		}
		rc = tcmpi__reduce_local(inbuf, inoutbuf, count, datatype, op);
	} else {
		void *a = tcmpi__alloc(count * t->size), *b = tcmpi__alloc(count * t->size);
		if (!a || !b) {
			rc = MPI_ERR_NO_MEM;
		} else {
			tcmpi__pack(inbuf, count, t, a);
			tcmpi__pack(inoutbuf, count, t, b);
			rc = tcmpi__reduce_local(a, b, count, datatype, op);
			if (rc == MPI_SUCCESS)
				tcmpi__unpack(b, count, t, inoutbuf);
		}
		free(a);
		free(b);
	}
	if (rc)
		return tcmpi__error(MPI_COMM_NULL, rc, fn, "%s does not apply to %s",
		                    op > 0 && op < TCMPI_OP_PREDEFINED ? op_names[op] : "the operator",
		                    t->name);
	return MPI_SUCCESS;
}

int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
	if (count < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, __func__, "negative count");
	return reduce_local_api(inbuf, inoutbuf, (size_t)count, datatype, op, __func__);
}

int MPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op)
{
	if (count < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COUNT, __func__, "negative count");
	return reduce_local_api(inbuf, inoutbuf, (size_t)count, datatype, op, __func__);
}

/* The operator's name for messages. */
const char *tcmpi__op_name(MPI_Op op);
const char *tcmpi__op_name(MPI_Op op)
{
	return op > 0 && op < TCMPI_OP_PREDEFINED ? op_names[op] : "a user operator";
}
