/* SPDX-License-Identifier: MIT */
/*
 * mpi_exit.c - exit() ends the rank, not the run: after MPI_Finalize the
 * last rank calls exit(3); the others return 0 and print.  tcmpirun must
 * exit with 3, every other rank having finished.  With the argument
 * "early", rank 0 calls exit(4) before MPI_Finalize instead: the run is
 * aborted (as mpirun does) with status 4, and nobody hangs.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, p;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	if (argc > 1 && !strcmp(argv[1], "early")) {
		if (rank == 0)
			exit(4);
		MPI_Barrier(MPI_COMM_WORLD);
		printf("rank %d: not reached\n", rank);
		MPI_Finalize();
		return 0;
	}
	MPI_Finalize();
	if (rank == p - 1) {
		exit(3);
		printf("rank %d: after exit\n", rank);
	}
	printf("mpi_exit: rank %d done\n", rank);
	return 0;
}
