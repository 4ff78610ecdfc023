/* SPDX-License-Identifier: MIT */
/*
 * mpi_neighbor.c - neighbourhood collectives on Cartesian communicators:
 * MPI_Neighbor_allgather, allgatherv, alltoall and alltoallv on grids of
 * 1, 2 and 3 dimensions, periodic, not and mixed (a periodic side of 2,
 * whose two neighbours are one rank, and of 1, where the rank is its own
 * neighbour), and on MPI_COMM_SELF's grid; every received block against
 * the neighbour's send block computed here, blocks of MPI_PROC_NULL left
 * as they were; the v forms with counts per neighbour and displacements
 * in reverse order with gaps; a strided send type; messages of the
 * program on the grid, sent before the call with the tags the call uses,
 * received after it unchanged; the errors of a communicator without a
 * grid, MPI_IN_PLACE and a negative count under MPI_ERRORS_RETURN.  Exit
 * status 0 when all hold; each failure printed.  Written against MPI
 * alone: it runs the same under Open MPI.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define B 3    /* elements per block */
#define MAXN 6 /* neighbours: 2 ndims, ndims <= 3 */

/* Element j of block k of rank r's send buffer. */
static int val(int r, int k, int j)
{
	return r * 1000 + k * 100 + j;
}

static void one_grid(MPI_Comm base, int ndims, const int *periods, const char *name)
{
	int dims[3] = {0, 0, 0}, p;
	MPI_Comm_size(base, &p);
	MPI_Dims_create(p, ndims, dims);
	MPI_Comm g;
	MPI_Cart_create(base, ndims, dims, periods, 0, &g);
	int me, n = 2 * ndims, nbr[MAXN];
	MPI_Comm_rank(g, &me);
	for (int d = 0; d < ndims; d++)
		MPI_Cart_shift(g, d, 1, &nbr[2 * d], &nbr[2 * d + 1]);

	/* Messages of the program with the tags a call might use, to the
	 * rank at +1 along dimension 0, received after the calls. */
	int mine[2] = {me * 7, me * 7 + 1}, theirs[2] = {-1, -1};
	MPI_Request pre[4];
	int npre = 0;
	if (nbr[1] != MPI_PROC_NULL) {
		MPI_Isend(&mine[0], 1, MPI_INT, nbr[1], 0, g, &pre[npre++]);
		MPI_Isend(&mine[1], 1, MPI_INT, nbr[1], 1, g, &pre[npre++]);
	}

	int sb[MAXN * (MAXN + 1)], rb[MAXN * B];
	/* alltoall */
	for (int k = 0; k < n; k++)
		for (int j = 0; j < B; j++)
			sb[k * B + j] = val(me, k, j);
	memset(rb, 0xff, sizeof rb);
	MPI_Neighbor_alltoall(sb, B, MPI_INT, rb, B, MPI_INT, g);
	for (int k = 0; k < n; k++)
		for (int j = 0; j < B; j++) {
			const int want = nbr[k] == MPI_PROC_NULL ? -1 : val(nbr[k], k ^ 1, j);
			CHECK(rb[k * B + j] == want, "%s alltoall: block %d [%d] = %d, want %d",
			      name, k, j, rb[k * B + j], want);
		}
	/* allgather */
	memset(rb, 0xff, sizeof rb);
	MPI_Neighbor_allgather(sb, B, MPI_INT, rb, B, MPI_INT, g);
	for (int k = 0; k < n; k++)
		for (int j = 0; j < B; j++) {
			const int want = nbr[k] == MPI_PROC_NULL ? -1 : val(nbr[k], 0, j);
			CHECK(rb[k * B + j] == want, "%s allgather: block %d [%d] = %d, want %d",
			      name, k, j, rb[k * B + j], want);
		}
	/* alltoall of a strided send type: element j of block k at 2 j of
	 * a block of 2 B - 1 ints. */
	MPI_Datatype vec;
	MPI_Type_vector(B, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	int sv[MAXN * (2 * B - 1)];
	for (int k = 0; k < n; k++)
		for (int j = 0; j < 2 * B - 1; j++)
			sv[k * (2 * B - 1) + j] = j % 2 ? -7 : val(me, k, j / 2);
	memset(rb, 0xff, sizeof rb);
	MPI_Neighbor_alltoall(sv, 1, vec, rb, B, MPI_INT, g);
	for (int k = 0; k < n; k++)
		for (int j = 0; j < B; j++) {
			const int want = nbr[k] == MPI_PROC_NULL ? -1 : val(nbr[k], k ^ 1, j);
			CHECK(rb[k * B + j] == want, "%s strided alltoall: block %d [%d] = %d, want %d",
			      name, k, j, rb[k * B + j], want);
		}
	MPI_Type_free(&vec);

	/* The v forms: block k of the receive buffer holds k + 1 elements,
	 * laid out from the end with a gap of one after each. */
	int rc[MAXN], rd[MAXN], sc[MAXN], sd[MAXN], at = 0;
	for (int k = n - 1; k >= 0; k--) {
		rc[k] = k + 1;
		rd[k] = at;
		at += rc[k] + 1;
	}
	at = 0;
	for (int k = 0; k < n; k++) {
		sc[k] = (k ^ 1) + 1; /* what neighbour k expects in its block k ^ 1 */
		sd[k] = at;
		for (int j = 0; j < sc[k]; j++)
			sb[at + j] = val(me, k, j);
		at += sc[k];
	}
	int rv[MAXN * (MAXN + 2)];
	memset(rv, 0xff, sizeof rv);
	MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, g);
	for (int k = 0; k < n; k++)
		for (int j = 0; j < rc[k]; j++) {
			const int want = nbr[k] == MPI_PROC_NULL ? -1 : val(nbr[k], k ^ 1, j);
			CHECK(rv[rd[k] + j] == want, "%s alltoallv: block %d [%d] = %d, want %d",
			      name, k, j, rv[rd[k] + j], want);
		}
	for (int k = 0; k < n; k++)
		rc[k] = B;
	for (int j = 0; j < B; j++)
		sb[j] = val(me, 0, j);
	memset(rv, 0xff, sizeof rv);
	MPI_Neighbor_allgatherv(sb, B, MPI_INT, rv, rc, rd, MPI_INT, g);
	for (int k = 0; k < n; k++)
		for (int j = 0; j < B; j++) {
			const int want = nbr[k] == MPI_PROC_NULL ? -1 : val(nbr[k], 0, j);
			CHECK(rv[rd[k] + j] == want, "%s allgatherv: block %d [%d] = %d, want %d",
			      name, k, j, rv[rd[k] + j], want);
		}

	/* The program's messages, untouched by the calls. */
	if (nbr[0] != MPI_PROC_NULL) {
		MPI_Recv(&theirs[1], 1, MPI_INT, nbr[0], 1, g, MPI_STATUS_IGNORE);
		MPI_Recv(&theirs[0], 1, MPI_INT, nbr[0], 0, g, MPI_STATUS_IGNORE);
		CHECK(theirs[0] == nbr[0] * 7 && theirs[1] == nbr[0] * 7 + 1,
		      "%s: the program's messages %d %d", name, theirs[0], theirs[1]);
	}
	MPI_Waitall(npre, pre, MPI_STATUSES_IGNORE);
	MPI_Comm_free(&g);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	static const int per1[1] = {1}, non1[1] = {0};
	static const int per2[2] = {1, 1}, mix2[2] = {1, 0}, non3[3] = {0, 0, 0};
	static const int mix3[3] = {0, 1, 1};
	one_grid(MPI_COMM_WORLD, 1, per1, "ring");
	one_grid(MPI_COMM_WORLD, 1, non1, "line");
	one_grid(MPI_COMM_WORLD, 2, per2, "torus");
	one_grid(MPI_COMM_WORLD, 2, mix2, "mixed");
	one_grid(MPI_COMM_WORLD, 3, non3, "mesh3");
	one_grid(MPI_COMM_WORLD, 3, mix3, "mixed3");
	one_grid(MPI_COMM_SELF, 1, per1, "self ring");
	one_grid(MPI_COMM_SELF, 2, mix2, "self mixed");

	/* Errors, returned. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int s[MAXN] = {0}, r[MAXN] = {0}, cls = -1;
	int e = MPI_Neighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD);
	MPI_Error_class(e, &cls);
	CHECK(cls == MPI_ERR_TOPOLOGY, "no grid: class %d", cls);
	int dims[1] = {size};
	MPI_Comm g;
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per1, 0, &g);
	MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
	e = MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, r, 1, MPI_INT, g);
	CHECK(e != MPI_SUCCESS, "MPI_IN_PLACE: accepted");
	e = MPI_Neighbor_allgather(s, -1, MPI_INT, r, 1, MPI_INT, g);
	MPI_Error_class(e, &cls);
	CHECK(cls == MPI_ERR_COUNT, "a negative count: class %d", cls);
	MPI_Comm_free(&g);

	int all = 0;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_neighbor: p = %d: %s\n", size, all ? "FAILED" : "ok");
	MPI_Finalize();
	return all != 0;
}
