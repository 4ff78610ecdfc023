/* SPDX-License-Identifier: MIT */
/* mpi_info.c - (being written) */
#include <mpi.h>
#include <stdio.h>

#include "check.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Finalize();
	if (rank == 0 && !fails)
		printf("mpi_info: p = %d: ok\n", size);
	return fails != 0;
}
