/* SPDX-License-Identifier: MIT */
/*
 * mpi_userop.c - user operators (MPI_Op_create): reductions with different
 * user operators under way at once, each applying its own operator and
 * handing it its own datatype: nonblocking ones outstanding together,
 * persistent ones made up front and started one at a time and together,
 * a nonblocking one pending across blocking ones, and one whose operator
 * is freed while it is pending and another made meanwhile; 200 operators
 * at once; a user operator on non-contiguous types reduced by the layer on
 * the type's own layout, of positive lower bound far from the element's
 * start, of negative lower bound, and a struct type with padding that the
 * operator writes whole;
 * MPI_REPLACE and MPI_NO_OP refused by every reduction (MPI_ERR_OP) under
 * MPI_ERRORS_RETURN, named in the message.  Exit status 0 when all hold;
 * each failure printed.  Written against MPI alone: but for the messages
 * under TCMPI (and the persistent reductions and MPI_Op_create_c of MPI
 * 4), it runs the same under Open MPI.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 1000

/* Calls of the operators below on a datatype they do not take. */
static int bad_types;

/* inout = in + inout, or max, on ints or doubles as *dt says: a datatype
 * other than the reduction's makes a wrong result. */
static void typed_sum(void *in, void *io, int *len, MPI_Datatype *dt)
{
	if (*dt == MPI_INT)
		for (int i = 0; i < *len; i++)
			((int *)io)[i] += ((const int *)in)[i];
	else if (*dt == MPI_DOUBLE)
		for (int i = 0; i < *len; i++)
			((double *)io)[i] += ((const double *)in)[i];
	else
		bad_types++;
}

static void typed_max(void *in, void *io, int *len, MPI_Datatype *dt)
{
	if (*dt == MPI_INT) {
		const int *a = in;
		int *b = io;
		for (int i = 0; i < *len; i++)
			b[i] = a[i] > b[i] ? a[i] : b[i];
	} else if (*dt == MPI_DOUBLE) {
		const double *a = in;
		double *b = io;
		for (int i = 0; i < *len; i++)
			b[i] = a[i] > b[i] ? a[i] : b[i];
	} else {
		bad_types++;
	}
}

#if MPI_VERSION >= 4
/* The large-count form: min. */
static void typed_min_c(void *in, void *io, MPI_Count *len, MPI_Datatype *dt)
{
	if (*dt == MPI_INT) {
		for (MPI_Count i = 0; i < *len; i++)
			if (((const int *)in)[i] < ((int *)io)[i])
				((int *)io)[i] = ((const int *)in)[i];
	} else {
		bad_types++;
	}
}
#endif

/* The derived type two_ints: max of each of its two ints. */
static MPI_Datatype two_ints;
static void two_max(void *in, void *io, int *len, MPI_Datatype *dt)
{
	if (*dt != two_ints) {
		bad_types++;
		return;
	}
	const int *a = in;
	int *b = io;
	for (int i = 0; i < 2 * *len; i++)
		b[i] = a[i] > b[i] ? a[i] : b[i];
}

/* Sums the two ints of each element of a type of two ints 8 bytes apart,
 * found through the datatype's own bounds (lb: the first int). */
static void pair_sum(void *in, void *io, int *len, MPI_Datatype *dt)
{
	MPI_Aint lb, ext;
	MPI_Type_get_extent(*dt, &lb, &ext);
	for (int e = 0; e < *len; e++) {
		const int *a = (const int *)((const char *)in + e * ext + lb);
		int *b = (int *)((char *)io + e * ext + lb);
		b[0] += a[0];
		b[2] += a[2];
	}
}

/* A struct with padding at its end, reduced as C code does: each element
 * assigned whole, padding included. */
struct dc {
	double d;
	char c;
};
static void dc_op(void *in, void *io, int *len, MPI_Datatype *dt)
{
	(void)dt;
	const struct dc *a = in;
	struct dc *b = io;
	for (int i = 0; i < *len; i++) {
		struct dc r = {a[i].d + b[i].d, a[i].c > b[i].c ? a[i].c : b[i].c};
		b[i] = r;
	}
}

/* Four reductions outstanding at once, with two user operators on two
 * datatypes. */
static void nonblocking(int p, MPI_Op sum, MPI_Op max)
{
	static int ia[N], isum[N], iscan[N];
	static double da[N], dmax[N], dsum[N];
	for (int i = 0; i < N; i++) {
		ia[i] = i + rank + 1;
		da[i] = 0.5 * i + rank;
		isum[i] = iscan[i] = -1;
		dmax[i] = dsum[i] = -1;
	}
	MPI_Request q[4];
	MPI_Iallreduce(ia, isum, N, MPI_INT, sum, MPI_COMM_WORLD, &q[0]);
	MPI_Iallreduce(da, dmax, N, MPI_DOUBLE, max, MPI_COMM_WORLD, &q[1]);
	MPI_Ireduce(da, dsum, N, MPI_DOUBLE, sum, p - 1, MPI_COMM_WORLD, &q[2]);
	MPI_Iscan(ia, iscan, N, MPI_INT, max, MPI_COMM_WORLD, &q[3]);
	MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
	int bad = 0;
	for (int i = 0; i < N; i++) {
		bad += isum[i] != p * i + p * (p + 1) / 2;
		bad += dmax[i] != 0.5 * i + p - 1;
		bad += rank == p - 1 && dsum[i] != p * 0.5 * i + p * (p - 1) / 2;
		bad += iscan[i] != i + rank + 1;
	}
	CHECK(bad == 0,
	      "%d wrong elements of four nonblocking user-operator reductions: "
	      "sum %d max %g sum@%d %g scan %d",
	      bad, isum[0], dmax[0], p - 1, dsum[0], iscan[0]);
}

#if MPI_VERSION >= 4
/* Persistent reductions made up front, started one at a time, together,
 * and together while a blocking reduction runs with another user operator
 * (other, whose result is other_want, then sum). */
static void persistent(int p, MPI_Op sum, MPI_Op max, MPI_Op other, int other_want)
{
	static int ia[N], isum[N];
	static double da[N], dmax[N];
	for (int i = 0; i < N; i++) {
		ia[i] = 2 * i + rank;
		da[i] = -0.25 * i - rank;
	}
	MPI_Request q[2];
	MPI_Allreduce_init(ia, isum, N, MPI_INT, sum, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
	MPI_Allreduce_init(da, dmax, N, MPI_DOUBLE, max, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N; i++) {
			isum[i] = -1;
			dmax[i] = 1;
		}
		if (round == 0) {
			MPI_Start(&q[0]);
			MPI_Wait(&q[0], MPI_STATUS_IGNORE);
			MPI_Start(&q[1]);
			MPI_Wait(&q[1], MPI_STATUS_IGNORE);
		} else if (round == 1) {
			MPI_Start(&q[1]);
			MPI_Start(&q[0]);
			MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
		} else {
			MPI_Startall(2, q);
			int x = rank + 1, y = -1;
			MPI_Allreduce(&x, &y, 1, MPI_INT, other, MPI_COMM_WORLD);
			CHECK(y == (round == 2 ? other_want : p * (p + 1) / 2),
			      "round %d: blocking user operator: %d", round, y);
			MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
		}
		int bad = 0;
		for (int i = 0; i < N; i++) {
			bad += isum[i] != 2 * i * p + p * (p - 1) / 2;
			bad += dmax[i] != -0.25 * i;
		}
		CHECK(bad == 0, "round %d: %d wrong elements of two persistent reductions: sum %d max %g",
		      round, bad, isum[1], dmax[1]);
		if (round == 2)
			other = sum;
	}
	MPI_Request_free(&q[0]);
	MPI_Request_free(&q[1]);
}
#endif

/* A nonblocking user-operator reduction pending while blocking ones run,
 * in topocoll (a predefined datatype) and in the layer (a derived one). */
static void pending(int p, MPI_Op sum, MPI_Op max)
{
	static int ia[N], isum[N];
	for (int i = 0; i < N; i++) {
		ia[i] = i - rank;
		isum[i] = 0;
	}
	MPI_Request q;
	MPI_Iallreduce(ia, isum, N, MPI_INT, sum, MPI_COMM_WORLD, &q);
	double d = rank, dm = -1;
	MPI_Allreduce(&d, &dm, 1, MPI_DOUBLE, max, MPI_COMM_WORLD);
	/* The layer reduces a derived type with a user operator itself. */
	MPI_Op tmax;
	MPI_Op_create(two_max, 1, &tmax);
	MPI_Type_contiguous(2, MPI_INT, &two_ints);
	MPI_Type_commit(&two_ints);
	int x[4] = {rank, -rank, 2 * rank, 1}, y[4] = {-1, -1, -1, -1};
	MPI_Allreduce(x, y, 2, two_ints, tmax, MPI_COMM_WORLD);
	MPI_Type_free(&two_ints);
	MPI_Op_free(&tmax);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	CHECK(dm == p - 1, "blocking max %g during a nonblocking sum", dm);
	CHECK(y[0] == p - 1 && y[1] == 0 && y[2] == 2 * (p - 1) && y[3] == 1,
	      "blocking max of a derived type during a nonblocking sum: %d %d %d %d", y[0], y[1],
	      y[2], y[3]);
	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += isum[i] != p * i - p * (p - 1) / 2;
	CHECK(bad == 0, "%d wrong elements of a nonblocking sum across blocking reductions: %d",
	      bad, isum[1]);
}

/* A user operator on a type of two ints 8 bytes apart, the first at lb
 * from the element's start (positive and far, or negative): count 2, by
 * MPI_Allreduce and MPI_Reduce. */
static void bounds(int p, MPI_Aint lb)
{
	MPI_Op op;
	MPI_Op_create(pair_sum, 1, &op);
	MPI_Datatype t;
	int bl[2] = {1, 1};
	MPI_Aint ds[2] = {lb, lb + 8};
	MPI_Type_create_hindexed(2, bl, ds, MPI_INT, &t);
	MPI_Type_commit(&t);
	MPI_Aint tlb, ext;
	MPI_Type_get_extent(t, &tlb, &ext);
	/* The elements' start in each buffer: lb before it when negative. */
	size_t bytes = (size_t)(lb > 0 ? lb : -lb) + 2 * (size_t)ext + 64;
	char *sbuf = malloc(bytes), *rbuf = malloc(bytes);
	char *s = lb > 0 ? sbuf : sbuf - lb, *r = lb > 0 ? rbuf : rbuf - lb;
	for (int e = 0; e < 2; e++) {
		int *a = (int *)(s + e * ext + lb), *b = (int *)(r + e * ext + lb);
		a[0] = rank + 1 + e;
		a[2] = 10 * (rank + 1) + e;
		b[0] = b[2] = -1;
		a[1] = b[1] = 77; /* the gap, not the type's */
	}
	MPI_Allreduce(s, r, 2, t, op, MPI_COMM_WORLD);
	for (int e = 0; e < 2; e++) {
		const int *b = (const int *)(r + e * ext + lb);
		CHECK(b[0] == p * (p + 1) / 2 + p * e && b[2] == 10 * p * (p + 1) / 2 + p * e && b[1] == 77,
		      "lb %ld: allreduce element %d: %d %d %d", (long)lb, e, b[0], b[1], b[2]);
	}
	for (int e = 0; e < 2; e++) {
		int *b = (int *)(r + e * ext + lb);
		b[0] = b[2] = -1;
	}
	MPI_Reduce(s, r, 2, t, op, 0, MPI_COMM_WORLD);
	if (rank == 0)
		for (int e = 0; e < 2; e++) {
			const int *b = (const int *)(r + e * ext + lb);
			CHECK(b[0] == p * (p + 1) / 2 + p * e && b[2] == 10 * p * (p + 1) / 2 + p * e,
			      "lb %ld: reduce element %d: %d %d", (long)lb, e, b[0], b[2]);
		}
	free(sbuf);
	free(rbuf);
	MPI_Type_free(&t);
	MPI_Op_free(&op);
}

/* A struct type with padding (its extent the C struct's size) reduced
 * by an operator that writes each element whole. */
static void padded(int p)
{
	MPI_Op op;
	MPI_Op_create(dc_op, 1, &op);
	MPI_Datatype t;
	int bl[2] = {1, 1};
	MPI_Aint ds[2] = {offsetof(struct dc, d), offsetof(struct dc, c)};
	MPI_Type_create_struct(2, bl, ds, (MPI_Datatype[]){MPI_DOUBLE, MPI_CHAR}, &t);
	MPI_Type_commit(&t);
	struct dc a[3], b[3];
	for (int i = 0; i < 3; i++) {
		a[i] = (struct dc){1.5 * i + rank, (char)('a' + rank % 8 + i)};
		b[i] = (struct dc){-1, '?'};
	}
	MPI_Allreduce(a, b, 3, t, op, MPI_COMM_WORLD);
	for (int i = 0; i < 3; i++) {
		char want = (char)('a' + (p < 8 ? p : 8) - 1 + i);
		CHECK(b[i].d == 1.5 * i * p + p * (p - 1) / 2 && b[i].c == want,
		      "struct {double, char} element %d: %g %c", i, b[i].d, b[i].c);
	}
	MPI_Type_free(&t);
	MPI_Op_free(&op);
}

/* inout = in * inout on ints: the operator made after a pending
 * reduction's own was freed. */
static void int_prod(void *in, void *io, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((int *)io)[i] *= ((const int *)in)[i];
}

/* An operator freed while a reduction that uses it is pending: the
 * reduction completes with it (MPI_Op_free marks it for deallocation),
 * even when operators made meanwhile could take its place.  Then 200
 * operators at once, each applied by a reduction. */
static void freed_while_pending(int p)
{
	MPI_Op sum, prod;
	MPI_Request q;
	/* Sums of rank + 2, which a product of them would not equal. */
	int in[4], out[4] = {0}, want = p * (p + 3) / 2;
	for (int i = 0; i < 4; i++)
		in[i] = rank + 2;
	MPI_Op_create(typed_sum, 1, &sum);
	MPI_Iallreduce(in, out, 4, MPI_INT, sum, MPI_COMM_WORLD, &q);
	MPI_Op_free(&sum);
	CHECK(sum == MPI_OP_NULL, "a freed operator is MPI_OP_NULL");
	MPI_Op_create(int_prod, 1, &prod);
	const int f = rank == 0 ? 3 : 1;
	int pin[4] = {f, f, f, f}, pout[4] = {0};
	MPI_Allreduce(pin, pout, 4, MPI_INT, prod, MPI_COMM_WORLD);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	for (int i = 0; i < 4; i++)
		CHECK(out[i] == want && pout[i] == 3,
		      "freed while pending: element %d: %d (want %d), product %d", i, out[i], want,
		      pout[i]);
	MPI_Op_free(&prod);

	enum { MANY = 200 };
	MPI_Op *ops = malloc(MANY * sizeof *ops);
	int made = 0;
	while (ops && made < MANY && MPI_Op_create(typed_sum, made % 2, &ops[made]) == MPI_SUCCESS)
		made++;
	CHECK(made == MANY, "%d of %d operators made", made, MANY);
	int one = 1, total = 0;
	for (int k = 0; k < made; k += 37) {
		total = 0;
		MPI_Allreduce(&one, &total, 1, MPI_INT, ops[k], MPI_COMM_WORLD);
		CHECK(total == p, "operator %d of %d: sum of ones %d, want %d", k, made, total, p);
	}
	for (int k = 0; k < made; k++)
		MPI_Op_free(&ops[k]);
	free(ops);
}

static int err_class(int rc)
{
	int c = rc;
	MPI_Error_class(rc, &c);
	return c;
}

/* rc is MPI_ERR_OP; under TCMPI the message names the operator. */
static void refused(int rc, const char *opname, const char *what)
{
	CHECK(err_class(rc) == MPI_ERR_OP, "%s with %s: class %d, want MPI_ERR_OP", what, opname,
	      err_class(rc));
#ifdef TCMPI
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	msg[0] = 0;
	MPI_Error_string(rc, msg, &len);
	CHECK(strstr(msg, opname) != NULL, "%s: message '%s' does not name %s", what, msg, opname);
#endif
}

/* MPI_REPLACE and MPI_NO_OP are for one-sided accumulates: no reduction
 * takes them. */
static void one_sided_ops(void)
{
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	MPI_Op ops[2] = {MPI_REPLACE, MPI_NO_OP};
	const char *names[2] = {"MPI_REPLACE", "MPI_NO_OP"};
	for (int k = 0; k < 2; k++) {
		int x = rank + 1, y = -1;
		refused(MPI_Allreduce(&x, &y, 1, MPI_INT, ops[k], MPI_COMM_WORLD), names[k],
		        "MPI_Allreduce");
		CHECK(y == -1, "MPI_Allreduce with %s wrote %d", names[k], y);
		refused(MPI_Reduce(&x, &y, 1, MPI_INT, ops[k], 0, MPI_COMM_WORLD), names[k], "MPI_Reduce");
		refused(MPI_Scan(&x, &y, 1, MPI_INT, ops[k], MPI_COMM_WORLD), names[k], "MPI_Scan");
		refused(MPI_Reduce_scatter_block(&x, &y, 1, MPI_INT, ops[k], MPI_COMM_WORLD),
		        names[k], "MPI_Reduce_scatter_block");
		MPI_Request q = MPI_REQUEST_NULL;
		refused(MPI_Iallreduce(&x, &y, 1, MPI_INT, ops[k], MPI_COMM_WORLD, &q), names[k],
		        "MPI_Iallreduce");
		int a = 5, b = 7;
		refused(MPI_Reduce_local(&a, &b, 1, MPI_INT, ops[k]), names[k], "MPI_Reduce_local");
		CHECK(b == 7, "MPI_Reduce_local with %s wrote %d", names[k], b);
		int commute = -1;
		int rc = MPI_Op_commutative(ops[k], &commute);
		CHECK(rc == MPI_SUCCESS && commute == 1, "MPI_Op_commutative(%s): %d, %d", names[k],
		      rc, commute);
		/* The communicator still works. */
		y = -1;
		MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		CHECK(y == size * (size + 1) / 2, "MPI_Allreduce after %s refused: %d", names[k], y);
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const int p = size;
	MPI_Op sum, max, other;
	MPI_Op_create(typed_sum, 1, &sum);
	MPI_Op_create(typed_max, 1, &max);
	/* A third operator: min of the ranks + 1 (max where MPI has no
	 * MPI_Op_create_c). */
#if MPI_VERSION >= 4
	MPI_Op_create_c(typed_min_c, 1, &other);
	int other_want = 1;
#else
	MPI_Op_create(typed_max, 1, &other);
	int other_want = p;
#endif
	nonblocking(p, sum, max);
#if MPI_VERSION >= 4
	persistent(p, sum, max, other, other_want);
#else
	(void)other_want;
#endif
	pending(p, sum, max);
	freed_while_pending(p);
	CHECK(bad_types == 0, "%d calls of an operator with a datatype not its reduction's", bad_types);
	bounds(p, 1 << 22);
	bounds(p, -40);
	padded(p);
	one_sided_ops();
	MPI_Op_free(&sum);
	MPI_Op_free(&max);
	MPI_Op_free(&other);

	int all = 0;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_userop: p = %d: %s\n", p, all ? "FAILED" : "ok");
	MPI_Finalize();
	return all != 0;
}
