/* SPDX-License-Identifier: MIT */
/*
 * bench/simgrid/allreduce.c - the MPI program SimGrid's SMPI simulates for
 * the scale benchmark's comparison (./tools/bench scale, when smpicc and smpirun are
 * installed): one 8-byte allreduce on every rank, checked.  Not built by
 * meson; bench/simgrid/run.sh compiles it with smpicc.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double x = rank, sum = 0;
	MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	int bad = sum != (double)size * (size - 1) / 2;
	if (rank == 0 && bad)
		fprintf(stderr, "simgrid allreduce: sum %g, expected %g\n", sum,
		        (double)size * (size - 1) / 2);
	MPI_Finalize();
	return bad;
}
