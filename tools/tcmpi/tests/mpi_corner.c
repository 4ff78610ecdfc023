/* SPDX-License-Identifier: MIT */
/*
 * mpi_corner.c - corners of the standard: a request that an MPI_Testall
 * found complete while another was not, completed later by MPI_Wait with
 * its status and its strided data; MPI_Waitall with a truncated receive
 * (MPI_ERR_IN_STATUS, each status's MPI_ERROR); collectives of zero
 * elements with NULL buffers, blocking and nonblocking; predefined
 * operators on datatypes they do not apply to, and MPI_REPLACE, refused
 * on every rank; MPI_IN_PLACE where a receive buffer is needed refused;
 * MPI_Igather and MPI_Gather_init in place at the root; the nonblocking v
 * forms on MPI_COMM_SELF with displacements; MPI_Comm_free with a
 * collective, a receive and a barrier pending on the communicator, each
 * completed afterwards; 150 communicators at once; datatypes freed while
 * operations that use them are pending.  Errors under
 * MPI_ERRORS_RETURN.  Exit status 0
 * when all hold; each failure printed.  Written against MPI alone: but for
 * the collectives pending at MPI_Comm_free, which Open MPI 4.1 does not
 * survive (under TCMPI), it runs the same under Open MPI.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static int cls(int rc)
{
	int c = -1;
	if (rc)
		MPI_Error_class(rc, &c);
	return rc ? c : MPI_SUCCESS;
}

static void testall_then_wait(void)
{
	if (size < 2)
		return;
	MPI_Datatype vec;
	MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	if (rank == 0) {
		int a[5] = {-1, -1, -1, -1, -1}, b = -1, flag = 0;
		MPI_Request q[2];
		MPI_Irecv(a, 1, vec, 1, 1, MPI_COMM_WORLD, &q[0]);
		MPI_Irecv(&b, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &q[1]);
		MPI_Barrier(MPI_COMM_WORLD); /* the first message is sent */
		for (int i = 0; i < 100; i++) {
			MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
			CHECK(!flag, "Testall complete before the second message is sent");
		}
		MPI_Status st;
		int n = -1;
		MPI_Wait(&q[0], &st);
		MPI_Get_count(&st, MPI_INT, &n);
		CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 1 && n == 3 && a[0] == 11 && a[1] == -1 &&
		              a[2] == 22 && a[4] == 33,
		      "Wait after Testall: source %d tag %d count %d data %d %d %d %d %d",
		      st.MPI_SOURCE, st.MPI_TAG, n, a[0], a[1], a[2], a[3], a[4]);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Wait(&q[1], MPI_STATUS_IGNORE);
		CHECK(b == 44, "the second message: %d", b);
	} else {
		int x[3] = {11, 22, 33}, y = 44;
		if (rank == 1)
			MPI_Send(x, 3, MPI_INT, 0, 1, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 1)
			MPI_Send(&y, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
	}
	MPI_Type_free(&vec);
}

static void waitall_in_status(void)
{
	if (size < 2)
		return;
	if (rank == 0) {
		int a = -1, b = -1;
		MPI_Request q[2];
		MPI_Status st[2];
		st[0].MPI_ERROR = st[1].MPI_ERROR = -99;
		MPI_Irecv(&a, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &q[0]);
		MPI_Irecv(&b, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &q[1]); /* two come */
		const int c = cls(MPI_Waitall(2, q, st));
		CHECK(c == MPI_ERR_IN_STATUS && a == 5 && st[0].MPI_SOURCE == 1 &&
		              cls(st[1].MPI_ERROR) == MPI_ERR_TRUNCATE,
		      "Waitall of a truncated receive: class %d, a %d, errors %d %d", c, a,
		      st[0].MPI_ERROR, st[1].MPI_ERROR);
	} else if (rank == 1) {
		int x = 5, y[2] = {6, 7};
		MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
		MPI_Send(y, 2, MPI_INT, 0, 2, MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void zero_null(void)
{
	int z[64] = {0};
	MPI_Request q;
#define ZERO(call) CHECK((call) == MPI_SUCCESS, "%s", #call)
	ZERO(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	ZERO(MPI_Allreduce(NULL, NULL, 0, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
	ZERO(MPI_Reduce(NULL, NULL, 0, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
	ZERO(MPI_Scan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	ZERO(MPI_Exscan(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	ZERO(MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
	ZERO(MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
	ZERO(MPI_Scatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
	ZERO(MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
	ZERO(MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
	ZERO(MPI_Reduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	if (size <= 64)
		ZERO(MPI_Reduce_scatter(NULL, NULL, z, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	ZERO(MPI_Iallreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	ZERO(MPI_Ialltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD, &q));
	MPI_Wait(&q, MPI_STATUS_IGNORE);
#undef ZERO
}

static void bad_ops(void)
{
	double a[4] = {1, 2, 3, 4}, b[4];
#define OPERR(call) CHECK(cls(call) == MPI_ERR_OP, "%s: class %d", #call, cls(call))
	OPERR(MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_BXOR, MPI_COMM_WORLD));
	OPERR(MPI_Allreduce(a, b, 1, MPI_DOUBLE_INT, MPI_SUM, MPI_COMM_WORLD));
	OPERR(MPI_Allreduce(a, b, 1, MPI_INT, MPI_MINLOC, MPI_COMM_WORLD));
	OPERR(MPI_Reduce(a, b, 1, MPI_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD));
	OPERR(MPI_Scan(a, b, 1, MPI_FLOAT, MPI_LAND, MPI_COMM_WORLD));
	OPERR(MPI_Exscan(a, b, 1, MPI_DOUBLE, MPI_BOR, MPI_COMM_WORLD));
	OPERR(MPI_Reduce_scatter_block(a, b, 1, MPI_DOUBLE_INT, MPI_PROD, MPI_COMM_WORLD));
	OPERR(MPI_Allreduce(a, b, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD));
	OPERR(MPI_Allreduce(a, b, 1, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD));
	OPERR(MPI_Allreduce(a, b, 1, MPI_INT, MPI_NO_OP, MPI_COMM_WORLD));
#ifdef TCMPI
	/* MPI's groups: a byte takes the bitwise operators alone, a wide
	 * character and packed data none (MPICH refuses them too; Open MPI
	 * 4.1 reduces them). */
	OPERR(MPI_Allreduce(a, b, 4, MPI_BYTE, MPI_SUM, MPI_COMM_WORLD));
	OPERR(MPI_Reduce(a, b, 4, MPI_BYTE, MPI_MAX, 0, MPI_COMM_WORLD));
	OPERR(MPI_Allreduce(a, b, 4, MPI_BYTE, MPI_LAND, MPI_COMM_WORLD));
	OPERR(MPI_Allreduce(a, b, 1, MPI_WCHAR, MPI_MAX, MPI_COMM_WORLD));
	OPERR(MPI_Allreduce(a, b, 4, MPI_PACKED, MPI_BOR, MPI_COMM_WORLD));
	OPERR(MPI_Reduce_local(a, b, 4, MPI_BYTE, MPI_SUM));
#endif
#undef OPERR
	/* The bitwise ones reduce bytes: rank r contributes 1 << (r % 8) in
	 * its first byte, and every rank's is in the OR. */
	unsigned char x[4] = {(unsigned char)(1u << (rank % 8)), 0xf0, 0, 0x55}, y[4] = {0};
	unsigned char want = 0;
	for (int r = 0; r < size; r++)
		want |= (unsigned char)(1u << (r % 8));
	CHECK(MPI_Allreduce(x, y, 4, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD) == MPI_SUCCESS &&
	              y[0] == want && y[1] == 0xf0 && y[2] == 0 && y[3] == 0x55,
	      "MPI_BOR on MPI_BYTE: %#x %#x %#x %#x, want %#x 0xf0 0 0x55", y[0], y[1], y[2], y[3],
	      want);
}

static void in_place_receive(void)
{
	int a[64] = {0};
	MPI_Request q = MPI_REQUEST_NULL;
#define REFUSED(call) CHECK(cls(call) != MPI_SUCCESS, "%s: accepted", #call)
	REFUSED(MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	REFUSED(MPI_Allreduce(MPI_IN_PLACE, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	REFUSED(MPI_Scan(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	REFUSED(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD));
	REFUSED(MPI_Reduce_scatter_block(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	REFUSED(MPI_Iallreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
	REFUSED(MPI_Ialltoall(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD, &q));
#undef REFUSED
#ifdef TCMPI /* a handle is an int here, a pointer in Open MPI */
	const int c = cls(MPI_Reduce_scatter(a, a + 1, a, MPI_INT, MPI_SUM, 12345));
	CHECK(c == MPI_ERR_COMM, "Reduce_scatter on communicator 12345: class %d", c);
#endif
}

static void igather_in_place(void)
{
	int all[64 * 3], mine[3];
	if (size > 64)
		return;
	for (int k = 0; k < 3; k++)
		mine[k] = 100 * rank + k;
	for (int form = 0; form < (MPI_VERSION >= 4 ? 2 : 1); form++) {
		memset(all, 0xff, sizeof all);
		if (rank == 0)
			memcpy(all, mine, sizeof mine);
		MPI_Request q;
		const void *s = rank == 0 ? MPI_IN_PLACE : mine;
		if (form == 0)
			MPI_Igather(s, 3, MPI_INT, all, 3, MPI_INT, 0, MPI_COMM_WORLD, &q);
#if MPI_VERSION >= 4 /* persistent collectives: MPI 4.0 */
		else
			MPI_Gather_init(s, 3, MPI_INT, all, 3, MPI_INT, 0, MPI_COMM_WORLD,
			                MPI_INFO_NULL, &q);
		if (form == 1)
			MPI_Start(&q);
#endif
		MPI_Wait(&q, MPI_STATUS_IGNORE);
		if (form == 1)
			MPI_Request_free(&q);
		for (int i = 0; rank == 0 && i < size * 3; i++)
			CHECK(all[i] == 100 * (i / 3) + i % 3, "%s in place: [%d] = %d",
			      form ? "Gather_init" : "Igather", i, all[i]);
	}
}

static void self_v_forms(void)
{
	int s[5] = {10, 11, 12, 13, 14}, d[5], two = 2, three = 3, one = 1;
	MPI_Request q;
	memset(d, 0xff, sizeof d);
	MPI_Igatherv(s, 2, MPI_INT, d, &two, &three, MPI_INT, 0, MPI_COMM_SELF, &q);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	CHECK(d[0] == -1 && d[3] == 10 && d[4] == 11, "self Igatherv: %d %d %d", d[0], d[3], d[4]);
	memset(d, 0xff, sizeof d);
	MPI_Ialltoallv(s, &two, &one, MPI_INT, d, &two, &three, MPI_INT, MPI_COMM_SELF, &q);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	CHECK(d[0] == -1 && d[3] == 11 && d[4] == 12, "self Ialltoallv: %d %d %d", d[0], d[3], d[4]);
	memset(d, 0xff, sizeof d);
	MPI_Iscatterv(s, &two, &one, MPI_INT, d, 2, MPI_INT, 0, MPI_COMM_SELF, &q);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	CHECK(d[0] == 11 && d[1] == 12 && d[2] == -1, "self Iscatterv: %d %d %d", d[0], d[1], d[2]);
}

static void free_pending(void)
{
	for (int w = 0; w < 3; w++) {
#ifndef TCMPI
		if (w != 1)
			continue; /* Open MPI 4.1 does not survive a collective pending */
#endif
		MPI_Comm d;
		MPI_Comm_dup(MPI_COMM_WORLD, &d);
		MPI_Request q, s;
		int x = rank + 1, y = -1;
		if (w == 0)
			MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, d, &q);
		else if (w == 1)
			MPI_Irecv(&y, 1, MPI_INT, (rank + size - 1) % size, 0, d, &q);
		else
			MPI_Ibarrier(d, &q);
		if (w == 1)
			MPI_Isend(&x, 1, MPI_INT, (rank + 1) % size, 0, d, &s);
		MPI_Comm_free(&d);
		CHECK(d == MPI_COMM_NULL, "a freed communicator is MPI_COMM_NULL");
		if (w == 1)
			MPI_Wait(&s, MPI_STATUS_IGNORE);
		const int rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
		const int want = w == 0   ? size * (size + 1) / 2
		                 : w == 1 ? (rank + size - 1) % size + 1
		                          : -1;
		CHECK(rc == MPI_SUCCESS && y == want,
		      "pending %d at MPI_Comm_free: rc %d, y %d, want %d", w, rc, y, want);
	}
}

/* Datatypes freed while a receive and a v-collective that use them are
 * pending, then many more made (the table grows, handles are reused):
 * the operations complete with the types they were given. */
static void free_types_pending(void)
{
	if (size > 64)
		return;
	enum { NX = 300 };
	static MPI_Datatype extra[NX];
	MPI_Datatype vec, v2;
	MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	MPI_Type_create_resized(vec, 0, 6 * sizeof(int), &v2);
	MPI_Type_commit(&v2);
	int buf[64 * 6], all[64 * 6], cnt[64], dsp[64];
	memset(buf, 0xff, sizeof buf);
	memset(all, 0xff, sizeof all);
	for (int i = 0; i < size; i++) {
		cnt[i] = 1;
		dsp[i] = i;
	}
	const int src = (rank + size - 1) % size, dst = (rank + 1) % size;
	int x[3] = {10 * rank + 1, 10 * rank + 2, 10 * rank + 3};
	MPI_Request q[2];
	MPI_Irecv(buf, 1, vec, src, 7, MPI_COMM_WORLD, &q[0]);
	MPI_Iallgatherv(x, 3, MPI_INT, all, cnt, dsp, v2, MPI_COMM_WORLD, &q[1]);
	MPI_Type_free(&vec);
	MPI_Type_free(&v2);
	for (int i = 0; i < NX; i++) {
		MPI_Type_contiguous(i + 1, MPI_CHAR, &extra[i]);
		MPI_Type_commit(&extra[i]);
	}
	MPI_Send(x, 3, MPI_INT, dst, 7, MPI_COMM_WORLD);
	MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
	CHECK(buf[0] == 10 * src + 1 && buf[1] == -1 && buf[2] == 10 * src + 2 && buf[4] == 10 * src + 3,
	      "a receive's freed type: %d %d %d %d %d", buf[0], buf[1], buf[2], buf[3], buf[4]);
	for (int i = 0; i < size; i++)
		CHECK(all[6 * i] == 10 * i + 1 && all[6 * i + 1] == -1 && all[6 * i + 2] == 10 * i + 2 &&
		              all[6 * i + 4] == 10 * i + 3 && all[6 * i + 5] == -1,
		      "an Iallgatherv's freed type: block %d: %d %d %d", i, all[6 * i],
		      all[6 * i + 2], all[6 * i + 4]);
	for (int i = 0; i < NX; i++)
		MPI_Type_free(&extra[i]);
}

/* More communicators at once than a first table holds (64). */
static void many_comms(void)
{
	enum { N = 150 };
	MPI_Comm d[N];
	for (int i = 0; i < N; i++)
		CHECK(MPI_Comm_dup(i ? d[i - 1] : MPI_COMM_WORLD, &d[i]) == MPI_SUCCESS,
		      "duplicate %d refused", i);
	int one = 1, sum = 0;
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d[N - 1]);
	CHECK(sum == size, "Allreduce on duplicate %d: %d", N - 1, sum);
	for (int i = N - 1; i >= 0; i--)
		MPI_Comm_free(&d[i]);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	testall_then_wait();
	waitall_in_status();
	zero_null();
	bad_ops();
	in_place_receive();
	igather_in_place();
	self_v_forms();
	free_pending();
	many_comms();
	free_types_pending();

	int all = 0;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_corner: p = %d: %s\n", size, all ? "FAILED" : "ok");
	MPI_Finalize();
	return all != 0;
}
