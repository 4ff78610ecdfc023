/* SPDX-License-Identifier: MIT */
/*
 * mpi_p2p.c - point-to-point messages of the MPI layer: tags and their
 * order, MPI_ANY_SOURCE and MPI_ANY_TAG with the status they fill in,
 * MPI_Get_count, messages to every rank, nonblocking calls completed by
 * MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Test and MPI_Testall, a strided
 * datatype, MPI_Sendrecv around a ring, MPI_PROC_NULL, messages to oneself
 * (MPI_Send before its receive, Irecv then Send, Isend then Recv,
 * MPI_Sendrecv, a probe, a strided datatype, a split communicator;
 * MPI_COMM_SELF refused by name).  Exit status 0 when all hold; each failure printed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Every rank sends rank 0 two messages, tag 2 then tag 1; rank 0 takes
 * tag 1 from each sender first (a later message overtakes on its tag),
 * then the rest with wildcards, checking the status. */
static void tags_and_wildcards(void)
{
	if (rank != 0) {
		int a[3] = {rank, 2, 100 + rank}, b[2] = {rank, 1};
		MPI_Send(a, 3, MPI_INT, 0, 2, MPI_COMM_WORLD);
		MPI_Send(b, 2, MPI_INT, 0, 1, MPI_COMM_WORLD);
		return;
	}
	for (int s = 1; s < size; s++) {
		int b[4] = {0};
		MPI_Status st;
		MPI_Recv(b, 4, MPI_INT, s, 1, MPI_COMM_WORLD, &st);
		int n = -1;
		MPI_Get_count(&st, MPI_INT, &n);
		CHECK(b[0] == s && b[1] == 1 && st.MPI_SOURCE == s && st.MPI_TAG == 1 && n == 2,
		      "tag 1 from %d: got %d %d, source %d tag %d count %d", s, b[0], b[1],
		      st.MPI_SOURCE, st.MPI_TAG, n);
	}
	int seen = 0;
	for (int k = 1; k < size; k++) {
		int b[4] = {0};
		MPI_Status st;
		MPI_Recv(b, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		int n = -1;
		MPI_Get_count(&st, MPI_INT, &n);
		CHECK(st.MPI_SOURCE >= 1 && st.MPI_SOURCE < size && st.MPI_TAG == 2 && n == 3 &&
		              b[0] == st.MPI_SOURCE && b[2] == 100 + st.MPI_SOURCE,
		      "any: source %d tag %d count %d data %d %d", st.MPI_SOURCE, st.MPI_TAG, n,
		      b[0], b[2]);
		if (st.MPI_SOURCE >= 1 && st.MPI_SOURCE < size)
			seen |= 1 << (st.MPI_SOURCE % 30);
	}
	for (int s = 1; s < size && s < 30; s++)
		CHECK(seen & (1 << s), "no message from %d with MPI_ANY_SOURCE", s);
}

/* Each rank posts receives from every other rank (any tag), sends to every
 * other (tag = its rank), completes sends with Waitall and receives one by
 * one with Waitany. */
static void all_to_all_nonblocking(void)
{
	int n = size - 1;
	if (n == 0)
		return;
	MPI_Request *rr = malloc(sizeof *rr * (size_t)n), *sr = malloc(sizeof *sr * (size_t)n);
	int *in = calloc((size_t)size, sizeof *in), *out = malloc(sizeof *out * (size_t)size);
	for (int i = 0, k = 0; i < size; i++)
		if (i != rank)
			MPI_Irecv(&in[i], 1, MPI_INT, i, MPI_ANY_TAG, MPI_COMM_WORLD, &rr[k++]);
	for (int i = 0, k = 0; i < size; i++) {
		out[i] = 1000 * rank + i;
		if (i != rank)
			MPI_Isend(&out[i], 1, MPI_INT, i, rank, MPI_COMM_WORLD, &sr[k++]);
	}
	int got = 0;
	for (int k = 0; k < n; k++) {
		int idx = -1;
		MPI_Status st;
		MPI_Waitany(n, rr, &idx, &st);
		CHECK(idx >= 0 && idx < n && rr[idx] == MPI_REQUEST_NULL, "Waitany index %d", idx);
		CHECK(st.MPI_TAG == st.MPI_SOURCE, "tag %d from %d", st.MPI_TAG, st.MPI_SOURCE);
		got++;
	}
	int idx = 0;
	MPI_Waitany(n, rr, &idx, MPI_STATUS_IGNORE);
	CHECK(idx == MPI_UNDEFINED, "Waitany on null requests: index %d", idx);
	MPI_Waitall(n, sr, MPI_STATUSES_IGNORE);
	for (int i = 0; i < size; i++)
		CHECK(i == rank || in[i] == 1000 * i + rank, "from %d: %d", i, in[i]);
	CHECK(got == n, "%d of %d", got, n);
	free(rr);
	free(sr);
	free(in);
	free(out);
}

/* A ring: Sendrecv of a strided column; Isend/Irecv polled with Test and
 * Testall. */
static void ring(void)
{
	if (size < 2)
		return;
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	MPI_Datatype col;
	MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &col);
	MPI_Type_commit(&col);
	double m[12], r[12];
	for (int i = 0; i < 12; i++) {
		m[i] = rank * 100 + i;
		r[i] = -1;
	}
	MPI_Status st;
	MPI_Sendrecv(m, 1, col, right, 7, r + 1, 1, col, left, 7, MPI_COMM_WORLD, &st);
	for (int i = 0; i < 12; i++)
		CHECK(r[i] == (i % 3 == 1 ? left * 100 + i - 1 : -1), "column [%d] = %g", i, r[i]);
	CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 7, "Sendrecv status %d %d", st.MPI_SOURCE,
	      st.MPI_TAG);
	MPI_Type_free(&col);

	long v = rank, w = -1;
	MPI_Request q[2];
	MPI_Irecv(&w, 1, MPI_LONG, left, 9, MPI_COMM_WORLD, &q[0]);
	MPI_Isend(&v, 1, MPI_LONG, right, 9, MPI_COMM_WORLD, &q[1]);
	int flag = 0;
	while (!flag)
		MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
	CHECK(w == left && q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL, "Testall: %ld", w);
	MPI_Irecv(&w, 1, MPI_LONG, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &q[0]);
	v = -rank;
	MPI_Send(&v, 1, MPI_LONG, right, 10, MPI_COMM_WORLD);
	for (flag = 0; !flag;)
		MPI_Test(&q[0], &flag, &st);
	CHECK(w == -left && st.MPI_SOURCE == left, "Test: %ld from %d", w, st.MPI_SOURCE);
}

static void proc_null(void)
{
	int x = 5;
	MPI_Status st;
	MPI_Request q;
	MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
	MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
	CHECK(st.MPI_SOURCE == MPI_PROC_NULL && x == 5, "MPI_PROC_NULL receive");
	MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &q);
	MPI_Wait(&q, &st);
	CHECK(q == MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_PROC_NULL, "MPI_PROC_NULL Irecv");
	/* A receive that is too small: an error returned, the message kept. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (size > 1 && rank == 1) {
		int big[4] = {1, 2, 3, 4};
		MPI_Send(big, 4, MPI_INT, 0, 3, MPI_COMM_WORLD);
	} else if (size > 1 && rank == 0) {
		int small[2], big[4] = {0};
		int rc = MPI_Recv(small, 2, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		int cls = -1;
		MPI_Error_class(rc, &cls);
		CHECK(cls == MPI_ERR_TRUNCATE, "too small a receive: error %d", rc);
		MPI_Recv(big, 4, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		CHECK(big[3] == 4, "the message after the truncation: %d", big[3]);
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Messages to oneself on MPI_COMM_WORLD: a blocking send before its
 * receive (buffered, small and large), a receive posted first, Isend then
 * Recv, MPI_Sendrecv, probes and wildcards; on MPI_COMM_SELF an error
 * that says so. */
static void to_self(void)
{
	enum { BIG = 100000 };
	int *big = malloc(sizeof(int) * BIG), *got = malloc(sizeof(int) * BIG);
	for (int i = 0; i < BIG; i++)
		big[i] = rank * 7 + i;
	int a = 10 + rank, b = -1, n = -1;
	MPI_Status st;
	/* Standard-mode sends with no receive posted yet: they return. */
	MPI_Send(&a, 1, MPI_INT, rank, 4, MPI_COMM_WORLD);
	MPI_Send(big, BIG, MPI_INT, rank, 5, MPI_COMM_WORLD);
	big[0] = -1; /* the send's buffer is free again */
	MPI_Recv(got, BIG, MPI_INT, rank, 5, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(n == BIG && got[0] == rank * 7 && got[BIG - 1] == rank * 7 + BIG - 1 &&
	              st.MPI_SOURCE == rank && st.MPI_TAG == 5,
	      "self: large Send then Recv: count %d, source %d tag %d", n, st.MPI_SOURCE, st.MPI_TAG);
	MPI_Recv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
	CHECK(b == a && st.MPI_SOURCE == rank && st.MPI_TAG == 4, "self: Send then Recv(ANY): %d", b);
	/* The receive first. */
	MPI_Request q[2];
	b = -1;
	MPI_Irecv(&b, 1, MPI_INT, rank, 6, MPI_COMM_WORLD, &q[0]);
	MPI_Send(&a, 1, MPI_INT, rank, 6, MPI_COMM_WORLD);
	MPI_Wait(&q[0], &st);
	CHECK(b == a && st.MPI_SOURCE == rank && st.MPI_TAG == 6, "self: Irecv then Send: %d", b);
	/* Isend then Recv, Waitall. */
	b = -1;
	MPI_Isend(&a, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, &q[1]);
	MPI_Recv(&b, 1, MPI_INT, rank, 7, MPI_COMM_WORLD, &st);
	MPI_Wait(&q[1], MPI_STATUS_IGNORE);
	CHECK(b == a && st.MPI_TAG == 7, "self: Isend then Recv: %d", b);
	/* Sendrecv with oneself, a strided send type. */
	MPI_Datatype every_other;
	MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
	MPI_Type_commit(&every_other);
	int sv[8] = {1, -1, 2, -1, 3, -1, 4, -1}, rv[4] = {0};
	MPI_Sendrecv(sv, 1, every_other, rank, 8, rv, 4, MPI_INT, rank, 8, MPI_COMM_WORLD, &st);
	CHECK(rv[0] == 1 && rv[3] == 4 && st.MPI_SOURCE == rank, "self: Sendrecv %d %d", rv[0], rv[3]);
	MPI_Type_free(&every_other);
	/* Probes find it; Iprobe finds nothing after it is taken. */
	int flag = 0;
	MPI_Send(&a, 1, MPI_INT, rank, 9, MPI_COMM_WORLD);
	MPI_Iprobe(rank, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
	CHECK(flag && st.MPI_TAG == 9 && st.MPI_SOURCE == rank, "self: Iprobe flag %d", flag);
	MPI_Probe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
	MPI_Recv(&b, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Iprobe(rank, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
	CHECK(!flag, "self: Iprobe after the receive found a message");
	/* On a split communicator (a sub-team, of one rank at p = 2). */
	MPI_Comm half;
	int hr = -1;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	MPI_Comm_rank(half, &hr);
	b = -1;
	MPI_Send(&a, 1, MPI_INT, hr, 3, half);
	MPI_Recv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 3, half, &st);
	CHECK(b == a && st.MPI_SOURCE == hr, "self: on a split communicator: %d from %d", b,
	      st.MPI_SOURCE);
	MPI_Comm_free(&half);
	/* MPI_COMM_SELF has no team: refused by name. */
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	int rc = MPI_Send(&a, 1, MPI_INT, 0, 0, MPI_COMM_SELF), cls = -1;
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "self: Send on MPI_COMM_SELF: error %d", rc);
	free(big);
	free(got);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	tags_and_wildcards();
	MPI_Barrier(MPI_COMM_WORLD);
	all_to_all_nonblocking();
	ring();
	proc_null();
	to_self();
	int total = 0;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && total == 0)
		printf("mpi_p2p: p = %d: ok\n", size);
	MPI_Finalize();
	return total != 0;
}
