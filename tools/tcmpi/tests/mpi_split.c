/* SPDX-License-Identifier: MIT */
/*
 * mpi_split.c - communicators made by MPI_Comm_split and MPI_Comm_dup:
 * sizes and ranks (key order, reversed), collectives and point-to-point
 * messages on them, a split of a split, MPI_UNDEFINED, messages on a
 * duplicate kept apart from the parent's, MPI_Comm_compare, MPI_Comm_free;
 * a split and a duplicate used after their parent is freed.
 * Exit status 0 when all hold; each failure printed.
 */
#include <mpi.h>
#include <stdio.h>

#include "check.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	/* Even and odd ranks, each half in reverse order of world rank. */
	int colour = rank % 2;
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, colour, size - rank, &half);
	int hp, hr, want_p = (size - colour + 1) / 2;
	MPI_Comm_size(half, &hp);
	MPI_Comm_rank(half, &hr);
	CHECK(hp == want_p && hr == want_p - 1 - rank / 2, "half: size %d rank %d", hp, hr);
	int sum = 0, want = 0;
	for (int i = colour; i < size; i += 2)
		want += i;
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
	CHECK(sum == want, "Allreduce on the half: %d, want %d", sum, want);
	int root_world = -1;
	if (hr == 0)
		root_world = rank;
	MPI_Bcast(&root_world, 1, MPI_INT, 0, half);
	int last = colour + 2 * (want_p - 1);
	CHECK(root_world == last, "Bcast from the half's rank 0: %d, want %d", root_world, last);
	int *all = NULL, mine = rank, buf[64];
	all = buf;
	if (hp <= 64) {
		MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, half);
		for (int i = 0; i < hp; i++)
			CHECK(all[i] == last - 2 * i, "Allgather [%d] = %d", i, all[i]);
	}

	/* A ring on the half with tags, any source. */
	if (hp > 1) {
		int right = (hr + 1) % hp, left = (hr + hp - 1) % hp, got = -1;
		MPI_Status st;
		MPI_Sendrecv(&rank, 1, MPI_INT, right, 5, &got, 1, MPI_INT, MPI_ANY_SOURCE, 5, half, &st);
		CHECK(st.MPI_SOURCE == left && got == last - 2 * left, "half ring: %d from %d", got,
		      st.MPI_SOURCE);
	}

	/* A duplicate of the world: a message on it is not received on the
	 * world, though sent first. */
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	int cmp = -1;
	MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
	CHECK(cmp == MPI_CONGRUENT, "compare world and dup: %d", cmp);
	MPI_Comm_compare(MPI_COMM_WORLD, half, &cmp);
	CHECK(size == 1 || cmp == MPI_UNEQUAL, "compare world and half: %d", cmp);
	if (size > 1) {
		if (rank == 1) {
			int a = 11, b = 22;
			MPI_Send(&a, 1, MPI_INT, 0, 0, dup);
			MPI_Send(&b, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
		} else if (rank == 0) {
			int a = 0, b = 0;
			MPI_Recv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
			MPI_Recv(&a, 1, MPI_INT, 1, 0, dup, MPI_STATUS_IGNORE);
			CHECK(a == 11 && b == 22, "dup kept apart: %d %d", a, b);
		}
	}
	int n = 0;
	MPI_Allreduce(&mine, &n, 1, MPI_INT, MPI_MAX, dup);
	CHECK(n == size - 1, "Allreduce on the dup: %d", n);

	/* A split of the half into ranks below 2 and the rest; MPI_UNDEFINED
	 * for the others. */
	MPI_Comm quarter;
	MPI_Comm_split(half, hr < 2 ? 0 : MPI_UNDEFINED, 0, &quarter);
	if (hr < 2) {
		int qp = 0;
		MPI_Comm_size(quarter, &qp);
		CHECK(qp == (hp < 2 ? hp : 2), "quarter size %d", qp);
		int qs = 0;
		MPI_Allreduce(&rank, &qs, 1, MPI_INT, MPI_SUM, quarter);
		int wq = last + (hp > 1 ? last - 2 : 0);
		CHECK(qs == wq, "quarter sum %d, want %d", qs, wq);
		MPI_Comm_free(&quarter);
	} else {
		CHECK(quarter == MPI_COMM_NULL, "MPI_UNDEFINED gives MPI_COMM_NULL");
	}
	MPI_Comm_free(&half);
	MPI_Comm_free(&dup);
	CHECK(half == MPI_COMM_NULL && dup == MPI_COMM_NULL, "MPI_Comm_free");

	/* Communicators outlive the one they were made from: a split and a
	 * duplicate of a duplicate, used after it is freed (by some ranks
	 * only for the split: the others free theirs first). */
	MPI_Comm parent, child, twin;
	MPI_Comm_dup(MPI_COMM_WORLD, &parent);
	MPI_Comm_split(parent, rank % 2, rank, &child);
	MPI_Comm_dup(parent, &twin);
	if (rank % 2)
		MPI_Comm_free(&child);
	MPI_Comm_free(&parent);
	int got = 0, one = 1;
	MPI_Allreduce(&one, &got, 1, MPI_INT, MPI_SUM, twin);
	CHECK(got == size, "duplicate of a freed communicator: sum %d", got);
	if (child != MPI_COMM_NULL) {
		got = 0;
		MPI_Allreduce(&one, &got, 1, MPI_INT, MPI_SUM, child);
		CHECK(got == (size + 1) / 2, "split of a freed communicator: sum %d", got);
		MPI_Comm_free(&child);
	}
	MPI_Comm_free(&twin);

	int total = 0;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && total == 0)
		printf("mpi_split: p = %d: ok\n", size);
	MPI_Finalize();
	return total != 0;
}
