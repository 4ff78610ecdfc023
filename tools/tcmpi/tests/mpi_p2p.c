/* SPDX-License-Identifier: MIT */
/*
 * mpi_p2p.c - point-to-point messages of the MPI layer: tags and their
 * order, MPI_ANY_SOURCE and MPI_ANY_TAG with the status they fill in,
 * MPI_Get_count, messages to every rank, nonblocking calls completed by
 * MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Test and MPI_Testall, a strided
 * datatype, MPI_Sendrecv around a ring, MPI_PROC_NULL, messages to oneself
 * (MPI_Send before its receive, Irecv then Send, Isend then Recv,
 * MPI_Sendrecv, a probe, a strided datatype, a split communicator), and
 * messages on communicators of one rank (MPI_COMM_SELF, its duplicate and
 * split, a split of MPI_COMM_WORLD of one rank per colour): Isend and
 * Recv, Irecv and Send, Sendrecv, wildcards, the order of messages and of
 * posted receives, truncation, probes and matched probes, derived types,
 * a freed posted receive, and a receive that nothing can satisfy failing
 * as a deadlock.  Exit status 0 when all hold; each failure printed.
 * With the argument "deadlock": a blocking MPI_Recv on MPI_COMM_SELF with
 * nothing sent under MPI_ERRORS_ARE_FATAL (the run ends with
 * MPI_ERR_OTHER).
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
	free(big);
	free(got);
}

static int err_class(int rc)
{
	int cls = -1;
	MPI_Error_class(rc, &cls);
	return cls;
}

/* Point-to-point on c, a communicator of one rank named name.  nothing:
 * c has no team (MPI_COMM_SELF and those made from it), so that a
 * receive nothing can satisfy fails at once as a deadlock. */
static void one_rank(MPI_Comm c, const char *name, int nothing)
{
	int sz = -1, me = -1, a = 100 + rank, b = -1, n = -1, flag = -1, rc;
	MPI_Status st;
	MPI_Request q[3];
	MPI_Comm_size(c, &sz);
	MPI_Comm_rank(c, &me);
	CHECK(sz == 1 && me == 0, "%s: size %d rank %d", name, sz, me);
	MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
	/* Isend then Recv (any source). */
	rc = MPI_Isend(&a, 1, MPI_INT, 0, 1, c, &q[0]);
	a = -7; /* buffered at once: the send buffer is free */
	MPI_Recv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 1, c, &st);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(rc == MPI_SUCCESS && b == 100 + rank && st.MPI_SOURCE == 0 && st.MPI_TAG == 1 && n == 1,
	      "%s: Isend then Recv: rc %d, %d from %d tag %d count %d", name, rc, b, st.MPI_SOURCE,
	      st.MPI_TAG, n);
	CHECK(MPI_Wait(&q[0], MPI_STATUS_IGNORE) == MPI_SUCCESS && q[0] == MPI_REQUEST_NULL,
	      "%s: Wait of the Isend", name);
	a = 100 + rank;
	/* Irecv then Send: the receive waits for the send. */
	b = -1;
	MPI_Irecv(&b, 1, MPI_INT, 0, 2, c, &q[0]);
	flag = -1;
	MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
	CHECK(flag == 0 && b == -1, "%s: Irecv complete before any send: flag %d", name, flag);
	MPI_Send(&a, 1, MPI_INT, 0, 2, c);
	MPI_Wait(&q[0], &st);
	CHECK(b == a && st.MPI_SOURCE == 0 && st.MPI_TAG == 2, "%s: Irecv then Send: %d tag %d",
	      name, b, st.MPI_TAG);
	/* Sendrecv, a strided send type into a contiguous receive. */
	MPI_Datatype every_other;
	MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
	MPI_Type_commit(&every_other);
	int sv[8] = {1, -1, 2, -1, 3, -1, 4, -1}, rv[4] = {0};
	rc = MPI_Sendrecv(sv, 1, every_other, 0, 3, rv, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st);
	CHECK(rc == MPI_SUCCESS && rv[0] == 1 && rv[1] == 2 && rv[2] == 3 && rv[3] == 4 &&
	              st.MPI_SOURCE == 0 && st.MPI_TAG == 3,
	      "%s: Sendrecv: rc %d, %d %d %d %d tag %d", name, rc, rv[0], rv[1], rv[2], rv[3],
	      st.MPI_TAG);
	/* A contiguous send into the strided type (Irecv, then Send). */
	int dv[8] = {0};
	MPI_Irecv(dv, 1, every_other, 0, 4, c, &q[0]);
	MPI_Send(sv + 0, 1, every_other, 0, 4, c); /* 1 2 3 4, packed */
	MPI_Wait(&q[0], &st);
	MPI_Get_count(&st, every_other, &n);
	CHECK(dv[0] == 1 && dv[2] == 2 && dv[4] == 3 && dv[6] == 4 && dv[1] == 0 && dv[7] == 0 && n == 1,
	      "%s: a strided receive: %d %d %d %d, gaps %d %d, count %d", name, dv[0], dv[2], dv[4],
	      dv[6], dv[1], dv[7], n);
	/* Order of sending, per tag and with wildcards. */
	int v1 = 1, v2 = 2, v3 = 3;
	MPI_Send(&v1, 1, MPI_INT, 0, 5, c);
	MPI_Send(&v2, 1, MPI_INT, 0, 6, c);
	MPI_Send(&v3, 1, MPI_INT, 0, 5, c);
	MPI_Recv(&b, 1, MPI_INT, 0, 5, c, &st);
	CHECK(b == 1 && st.MPI_TAG == 5, "%s: first of tag 5: %d", name, b);
	MPI_Recv(&b, 1, MPI_INT, 0, MPI_ANY_TAG, c, &st);
	CHECK(b == 2 && st.MPI_TAG == 6, "%s: then any tag: %d tag %d", name, b, st.MPI_TAG);
	MPI_Recv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st);
	CHECK(b == 3 && st.MPI_TAG == 5 && st.MPI_SOURCE == 0, "%s: then the last: %d tag %d", name,
	      b, st.MPI_TAG);
	/* Posted receives are matched in the order they were posted. */
	int r0 = -1, r1 = -1, r2 = -1;
	MPI_Irecv(&r0, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &q[0]);
	MPI_Irecv(&r1, 1, MPI_INT, 0, 7, c, &q[1]);
	MPI_Irecv(&r2, 1, MPI_INT, 0, 8, c, &q[2]);
	MPI_Send(&v1, 1, MPI_INT, 0, 7, c);
	MPI_Send(&v2, 1, MPI_INT, 0, 8, c);
	MPI_Send(&v3, 1, MPI_INT, 0, 7, c);
	MPI_Status sts[3];
	rc = MPI_Waitall(3, q, sts);
	CHECK(rc == MPI_SUCCESS && r0 == 1 && r1 == 3 && r2 == 2 && sts[0].MPI_TAG == 7 &&
	              sts[1].MPI_TAG == 7 && sts[2].MPI_TAG == 8,
	      "%s: posted receives in order: %d %d %d", name, r0, r1, r2);
	/* Waitany and Testall on receives completed by later sends. */
	MPI_Irecv(&r0, 1, MPI_INT, 0, 9, c, &q[0]);
	MPI_Irecv(&r1, 1, MPI_INT, 0, 10, c, &q[1]);
	flag = -1;
	MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
	CHECK(flag == 0, "%s: Testall with two receives posted: flag %d", name, flag);
	MPI_Send(&v2, 1, MPI_INT, 0, 10, c);
	int idx = -1;
	MPI_Waitany(2, q, &idx, &st);
	CHECK(idx == 1 && r1 == 2 && st.MPI_TAG == 10, "%s: Waitany: index %d, %d", name, idx, r1);
	MPI_Send(&v1, 1, MPI_INT, 0, 9, c);
	MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
	CHECK(flag == 1 && r0 == 1, "%s: Testall after the send: flag %d, %d", name, flag, r0);
	/* Truncation: MPI_ERR_TRUNCATE, the message left for a later
	 * receive (as on a communicator of several ranks). */
	int three[3] = {7, 8, 9}, two[2] = {0, 0}, back[3] = {0};
	MPI_Send(three, 3, MPI_INT, 0, 11, c);
	rc = MPI_Recv(two, 2, MPI_INT, 0, 11, c, &st);
	CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "%s: Recv truncation: error %d", name, rc);
	rc = MPI_Recv(back, 3, MPI_INT, 0, 11, c, &st);
	CHECK(rc == MPI_SUCCESS && back[2] == 9, "%s: after the truncation: %d", name, back[2]);
	MPI_Irecv(two, 2, MPI_INT, 0, 12, c, &q[0]);
	MPI_Send(three, 3, MPI_INT, 0, 12, c);
	rc = MPI_Wait(&q[0], &st);
	CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "%s: Irecv truncation: error %d", name, rc);
	back[2] = 0;
	rc = MPI_Recv(back, 3, MPI_INT, 0, 12, c, &st);
	CHECK(rc == MPI_SUCCESS && back[2] == 9, "%s: after the truncation: %d", name, back[2]);
	/* Probes, matched probes. */
	flag = -1;
	MPI_Iprobe(0, MPI_ANY_TAG, c, &flag, &st);
	CHECK(flag == 0, "%s: Iprobe with nothing sent: flag %d", name, flag);
	MPI_Send(three, 2, MPI_INT, 0, 13, c);
	MPI_Send(three + 2, 1, MPI_INT, 0, 14, c);
	MPI_Iprobe(MPI_ANY_SOURCE, 14, c, &flag, &st);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(flag && st.MPI_SOURCE == 0 && st.MPI_TAG == 14 && n == 1,
	      "%s: Iprobe tag 14: flag %d tag %d count %d", name, flag, st.MPI_TAG, n);
	MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(st.MPI_TAG == 13 && n == 2, "%s: Probe: tag %d count %d", name, st.MPI_TAG, n);
	MPI_Message m = MPI_MESSAGE_NULL;
	MPI_Mprobe(0, MPI_ANY_TAG, c, &m, &st);
	CHECK(m != MPI_MESSAGE_NULL && st.MPI_TAG == 13, "%s: Mprobe: tag %d", name, st.MPI_TAG);
	/* The matched message is no longer queued: a receive takes the next. */
	MPI_Recv(&b, 1, MPI_INT, 0, MPI_ANY_TAG, c, &st);
	CHECK(b == 9 && st.MPI_TAG == 14, "%s: Recv after Mprobe: %d tag %d", name, b, st.MPI_TAG);
	two[0] = two[1] = 0;
	MPI_Mrecv(two, 2, MPI_INT, &m, &st);
	CHECK(two[0] == 7 && two[1] == 8 && m == MPI_MESSAGE_NULL && st.MPI_SOURCE == 0,
	      "%s: Mrecv: %d %d", name, two[0], two[1]);
	MPI_Send(sv, 1, every_other, 0, 15, c);
	flag = 0;
	MPI_Improbe(MPI_ANY_SOURCE, 15, c, &flag, &m, &st);
	CHECK(flag && st.MPI_TAG == 15, "%s: Improbe: flag %d", name, flag);
	memset(dv, 0, sizeof dv);
	MPI_Imrecv(dv, 1, every_other, &m, &q[0]);
	MPI_Wait(&q[0], &st);
	CHECK(dv[0] == 1 && dv[6] == 4 && dv[1] == 0 && st.MPI_TAG == 15,
	      "%s: Imrecv into a strided type: %d %d", name, dv[0], dv[6]);
	/* A freed posted receive is still completed by a later send. */
	b = -1;
	MPI_Irecv(&b, 1, MPI_INT, 0, 16, c, &q[0]);
	MPI_Request_free(&q[0]);
	MPI_Send(&a, 1, MPI_INT, 0, 16, c);
	CHECK(b == a && q[0] == MPI_REQUEST_NULL, "%s: a freed Irecv: %d", name, b);
	/* A large message, and an empty one. */
	enum { BIG = 50000 };
	int *big = malloc(sizeof(int) * BIG), *got = calloc(BIG, sizeof(int));
	for (int i = 0; i < BIG; i++)
		big[i] = i ^ rank;
	MPI_Isend(big, BIG, MPI_INT, 0, 17, c, &q[0]);
	MPI_Send(NULL, 0, MPI_INT, 0, 18, c);
	MPI_Recv(NULL, 0, MPI_INT, 0, 18, c, &st);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(n == 0 && st.MPI_TAG == 18, "%s: an empty message overtakes on its tag: count %d", name, n);
	MPI_Recv(got, BIG, MPI_INT, 0, 17, c, &st);
	MPI_Get_count(&st, MPI_INT, &n);
	CHECK(n == BIG && got[0] == big[0] && got[BIG - 1] == big[BIG - 1],
	      "%s: a large message: count %d", name, n);
	MPI_Wait(&q[0], MPI_STATUS_IGNORE);
	free(big);
	free(got);
	/* Bad arguments. */
	rc = MPI_Send(&a, 1, MPI_INT, 1, 0, c);
	CHECK(err_class(rc) == MPI_ERR_RANK, "%s: Send to rank 1: error %d", name, rc);
	MPI_Type_free(&every_other);
	if (nothing) {
		/* Nothing queued: only the caller could send; a deadlock. */
		rc = MPI_Recv(&b, 1, MPI_INT, 0, 20, c, &st);
		CHECK(err_class(rc) == MPI_ERR_OTHER, "%s: Recv with nothing sent: error %d", name, rc);
		rc = MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st);
		CHECK(err_class(rc) == MPI_ERR_OTHER, "%s: Probe with nothing sent: error %d", name, rc);
		MPI_Send(&a, 1, MPI_INT, 0, 21, c);
		rc = MPI_Recv(&b, 1, MPI_INT, 0, 20, c, &st); /* tag 21 queued, 20 asked */
		CHECK(err_class(rc) == MPI_ERR_OTHER, "%s: Recv of another tag: error %d", name, rc);
		b = -1;
		MPI_Irecv(&b, 1, MPI_INT, 0, 20, c, &q[0]);
		rc = MPI_Wait(&q[0], &st);
		CHECK(err_class(rc) == MPI_ERR_OTHER && q[0] != MPI_REQUEST_NULL,
		      "%s: Wait on a receive nothing can match: error %d", name, rc);
		rc = MPI_Waitany(1, q, &idx, &st);
		CHECK(err_class(rc) == MPI_ERR_OTHER, "%s: Waitany on it: error %d", name, rc);
		/* The receive stays posted: a later send completes it. */
		MPI_Send(&v3, 1, MPI_INT, 0, 20, c);
		rc = MPI_Wait(&q[0], &st);
		CHECK(rc == MPI_SUCCESS && b == 3, "%s: the receive after the send: %d", name, b);
		MPI_Recv(&b, 1, MPI_INT, 0, 21, c, &st);
		CHECK(b == a, "%s: tag 21: %d", name, b);
	}
	if (nothing) {
		/* Left queued and posted: freed with the communicator (or at
		 * MPI_Finalize). */
		MPI_Send(&a, 1, MPI_INT, 0, 22, c);
		MPI_Irecv(&r0, 1, MPI_INT, 0, 23, c, &q[0]);
		MPI_Request_free(&q[0]);
	}
	MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL);
}

/* Communicators of one rank: MPI_COMM_SELF, its duplicate and split, and
 * the splits of MPI_COMM_WORLD into one rank per colour (a sub-team of
 * one). */
static void one_rank_comms(void)
{
	one_rank(MPI_COMM_SELF, "MPI_COMM_SELF", 1);
	MPI_Comm d, s, w;
	MPI_Comm_dup(MPI_COMM_SELF, &d);
	one_rank(d, "a duplicate of MPI_COMM_SELF", 1);
	/* Messages on d do not reach MPI_COMM_SELF. */
	int a = 5, flag = -1;
	MPI_Send(&a, 1, MPI_INT, 0, 30, d);
	MPI_Iprobe(MPI_ANY_SOURCE, 30, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
	CHECK(flag == 0, "a message on a duplicate reached MPI_COMM_SELF");
	MPI_Comm_free(&d);
	MPI_Comm_split(MPI_COMM_SELF, 3, 0, &s);
	one_rank(s, "a split of MPI_COMM_SELF", 1);
	MPI_Comm_free(&s);
	MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &w);
	one_rank(w, "a split of MPI_COMM_WORLD of one rank", 0);
	MPI_Comm_free(&w);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1 && strcmp(argv[1], "deadlock") == 0) {
		int b;
		MPI_Recv(&b, 1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
		printf("mpi_p2p: rank %d: MPI_Recv on MPI_COMM_SELF returned\n", rank);
		MPI_Finalize();
		return 1;
	}
	tags_and_wildcards();
	MPI_Barrier(MPI_COMM_WORLD);
	all_to_all_nonblocking();
	ring();
	proc_null();
	to_self();
	one_rank_comms();
	int total = 0;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && total == 0)
		printf("mpi_p2p: p = %d: ok\n", size);
	MPI_Finalize();
	return total != 0;
}
