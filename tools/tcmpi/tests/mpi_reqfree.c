/* SPDX-License-Identifier: MIT */
/*
 * mpi_reqfree.c - MPI_Request_free on active requests returns at once and
 * the operation still completes: a posted receive on a split of
 * MPI_COMM_WORLD of one rank completed by the rank's own later send; on
 * the world, a receive freed before a barrier that its sender passes
 * first, a large send freed before its receive is posted, a strided
 * receive freed (its data unpacked), a nonblocking collective freed; and a
 * freed receive no message ever reaches, left to MPI_Finalize.  Run with
 * tcmpirun --timeout, so that a call that blocks ends the run.  Exit
 * status 0 when all hold; each failure printed.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Request q, q2;
	MPI_Status st;
	int flag = -1;

	/* A split of the world of one rank: a team of one.  The receive can
	 * only be matched by the rank's own send, made after the free. */
	MPI_Comm one;
	MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &one);
	int a = 100 + rank, b = -1;
	MPI_Irecv(&b, 1, MPI_INT, 0, 16, one, &q);
	MPI_Request_free(&q);
	CHECK(q == MPI_REQUEST_NULL, "one rank: Request_free left the handle");
	MPI_Send(&a, 1, MPI_INT, 0, 16, one);
	MPI_Barrier(one);
	MPI_Iprobe(0, 16, one, &flag, MPI_STATUS_IGNORE);
	CHECK(flag == 0, "one rank: the message was not taken by the freed receive");
	CHECK(b == a, "one rank: the freed receive got %d, want %d", b, a);
	/* Freed twice over: the next receive takes the next message. */
	int c = -1, d = -1;
	MPI_Irecv(&c, 1, MPI_INT, 0, 17, one, &q);
	MPI_Request_free(&q);
	MPI_Irecv(&d, 1, MPI_INT, 0, 17, one, &q);
	a = 1;
	MPI_Send(&a, 1, MPI_INT, 0, 17, one);
	a = 2;
	MPI_Send(&a, 1, MPI_INT, 0, 17, one);
	MPI_Wait(&q, &st);
	CHECK(c == 1 && d == 2, "one rank: freed then waited receives got %d %d", c, d);
	MPI_Comm_free(&one);

	if (size > 1) {
		int left = (rank + size - 1) % size, right = (rank + 1) % size;
		/* The receive freed before a barrier; its message sent after
		 * it.  A second receive of the same source and tag, waited
		 * for, completes after the first (MPI's order). */
		int r1 = -1, r2 = -1, s1 = rank, s2 = 1000 + rank;
		MPI_Irecv(&r1, 1, MPI_INT, left, 40, MPI_COMM_WORLD, &q);
		MPI_Request_free(&q);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Send(&s1, 1, MPI_INT, right, 40, MPI_COMM_WORLD);
		MPI_Send(&s2, 1, MPI_INT, right, 40, MPI_COMM_WORLD);
		MPI_Recv(&r2, 1, MPI_INT, left, 40, MPI_COMM_WORLD, &st);
		CHECK(r1 == left && r2 == 1000 + left, "world: freed receive %d, next %d", r1, r2);

		/* A large send freed before its receive is posted (after a
		 * barrier); the receiver's reply says it arrived. */
		enum { BIG = 100000 };
		int *big = malloc(sizeof(int) * BIG), *got = calloc(BIG, sizeof(int));
		for (int i = 0; i < BIG; i++)
			big[i] = i ^ rank;
		MPI_Isend(big, BIG, MPI_INT, right, 41, MPI_COMM_WORLD, &q);
		MPI_Request_free(&q);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Recv(got, BIG, MPI_INT, left, 41, MPI_COMM_WORLD, &st);
		CHECK(got[0] == (0 ^ left) && got[BIG - 1] == ((BIG - 1) ^ left),
		      "world: a freed large send: %d %d", got[0], got[BIG - 1]);
		int ack = 1, ackd = 0;
		MPI_Sendrecv(&ack, 1, MPI_INT, left, 42, &ackd, 1, MPI_INT, right, 42,
		             MPI_COMM_WORLD, &st);
		CHECK(ackd == 1, "world: ack %d", ackd);
		free(big);
		free(got);

		/* A strided receive freed: its data is unpacked when it
		 * completes, before the waited receive behind it. */
		MPI_Datatype every_other;
		MPI_Type_vector(3, 1, 2, MPI_INT, &every_other);
		MPI_Type_commit(&every_other);
		int dv[5] = {-1, -1, -1, -1, -1}, sv[3] = {7, 8, 9};
		MPI_Irecv(dv, 1, every_other, left, 43, MPI_COMM_WORLD, &q);
		MPI_Request_free(&q);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Send(sv, 3, MPI_INT, right, 43, MPI_COMM_WORLD);
		MPI_Send(sv, 1, MPI_INT, right, 43, MPI_COMM_WORLD);
		MPI_Recv(&r2, 1, MPI_INT, left, 43, MPI_COMM_WORLD, &st);
		MPI_Irecv(&r2, 1, MPI_INT, left, 44, MPI_COMM_WORLD, &q2); /* looks at the freed */
		MPI_Send(&s1, 1, MPI_INT, right, 44, MPI_COMM_WORLD);
		MPI_Wait(&q2, &st);
		CHECK(dv[0] == 7 && dv[1] == -1 && dv[2] == 8 && dv[4] == 9,
		      "world: freed strided receive: %d %d %d %d", dv[0], dv[1], dv[2], dv[4]);
		MPI_Type_free(&every_other);
	}

	/* A nonblocking collective freed; the blocking one after it runs
	 * after it, so its result is there by then. */
	int sum = -1, one_ = 1, total = 0;
	MPI_Iallreduce(&one_, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
	MPI_Request_free(&q);
	MPI_Allreduce(&one_, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	CHECK(total == size && sum == size, "Allreduce after a freed Iallreduce: %d, %d", total, sum);

	/* Never matched: MPI_Finalize must not wait for it. */
	int never = -1;
	MPI_Irecv(&never, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &q);
	MPI_Request_free(&q);

	int all = 0;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && all == 0)
		printf("mpi_reqfree: p = %d: ok\n", size);
	MPI_Finalize();
	return all != 0;
}
