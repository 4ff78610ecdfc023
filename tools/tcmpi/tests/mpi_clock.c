/* SPDX-License-Identifier: MIT */
/*
 * mpi_clock.c - topocoll's extensions for modelled time: TCMPI_Clock_ns is
 * 0 at the start, TCMPI_Compute_ns(ns) moves it on by exactly ns (as
 * tc_clock_advance), a message moves the receiver's clock past the sender's,
 * and a negative, NaN or too long time fails with MPI_ERR_ARG (under
 * MPI_ERRORS_RETURN), the clock unchanged.
 */
#include <math.h>
#include <mpi.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	CHECK(TCMPI_Clock_ns() == 0, "clock at the start %g", TCMPI_Clock_ns());
	int rc = TCMPI_Compute_ns(1234.5 * (rank + 1));
	CHECK(rc == MPI_SUCCESS, "TCMPI_Compute_ns: %d", rc);
	double c = TCMPI_Clock_ns();
	CHECK(c == 1234.5 * (rank + 1), "clock %g after charging %g", c, 1234.5 * (rank + 1));
	const double bad[] = {-1, NAN, INFINITY, 2e15};
	for (int k = 0; k < 4; k++) {
		rc = TCMPI_Compute_ns(bad[k]);
		char msg[MPI_MAX_ERROR_STRING];
		int len;
		MPI_Error_string(rc, msg, &len);
		CHECK(rc == MPI_ERR_ARG && strstr(msg, "TCMPI_Compute_ns"),
		      "TCMPI_Compute_ns(%g): %d '%s'", bad[k], rc, msg);
		CHECK(TCMPI_Clock_ns() == c, "clock %g moved by a refused charge", TCMPI_Clock_ns());
	}
	if (size > 1) { /* rank 1 receives after rank 0's charge of 1234.5 ns */
		int v = 7;
		if (rank == 0)
			MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
		else if (rank == 1)
			MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (rank == 1)
			CHECK(TCMPI_Clock_ns() > 1234.5, "receiver's clock %g", TCMPI_Clock_ns());
	}
	int all;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_clock: p = %d: %s\n", size, all ? "FAILED" : "ok");
	MPI_Finalize();
	return all != 0;
}
