/* SPDX-License-Identifier: MIT */
/*
 * mpi_unsupported.c - a function the layer does not implement returns
 * MPI_ERR_UNSUPPORTED_OPERATION under MPI_ERRORS_RETURN, and its message
 * names it; with the argument "fatal" the default handler
 * (MPI_ERRORS_ARE_FATAL) ends the run instead, naming the function.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, fails = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int fatal = argc > 1 && !strcmp(argv[1], "fatal");
	if (!fatal)
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Win win;
	int rc = MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	char msg[MPI_MAX_ERROR_STRING];
	int len, cls;
	MPI_Error_class(rc, &cls);
	MPI_Error_string(rc, msg, &len);
	if (cls != MPI_ERR_UNSUPPORTED_OPERATION || !strstr(msg, "MPI_Win_create")) {
		printf("rank %d: class %d message '%s'\n", rank, cls, msg);
		fails++;
	}
	if (rank == 0)
		printf("mpi_unsupported: %s: %s\n", fails ? "FAILED" : "ok", msg);
	MPI_Finalize();
	return fails != 0;
}
