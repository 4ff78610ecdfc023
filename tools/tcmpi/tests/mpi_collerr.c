/* SPDX-License-Identifier: MIT */
/*
 * mpi_collerr.c - the blocking collectives' errors under MPI_ERRORS_RETURN,
 * each between good calls of the same collective (so that a path kept for
 * the repeated call is warm when the bad one comes): an invalid
 * communicator, root, datatype, count, MPI_IN_PLACE where MPI allows none,
 * blocks of unequal bytes; each returns its class with a message naming
 * the function, and the good call after it still works; after
 * MPI_Finalize a call fails naming it.  With the argument "preinit" each
 * rank calls MPI_Bcast before MPI_Init (fatal: the run ends naming it).
 * Exit status 0 when all hold; each failure printed.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static int err_class(int rc)
{
	int c = rc;
	MPI_Error_class(rc, &c);
	return c;
}

/* rc is of class want and the last message names fn. */
static void expect_err(int rc, int want, const char *fn, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	msg[0] = 0;
	MPI_Error_string(rc, msg, &len);
	CHECK(err_class(rc) == want, "%s: class %d, want %d", what, err_class(rc), want);
	CHECK(strstr(msg, fn) != NULL, "%s: message '%s' does not name %s", what, msg, fn);
}

/* The good calls, checked: a barrier before each, as benchmarks time. */
static void good(MPI_Comm comm, int p, int r)
{
	char a[8], b[8 * 16];
	MPI_Barrier(comm);
	for (int i = 0; i < 8; i++)
		a[i] = r == 0 ? (char)(i + 1) : 0;
	CHECK(MPI_Bcast(a, 8, MPI_CHAR, 0, comm) == MPI_SUCCESS, "bcast");
	CHECK(a[7] == 8, "bcast a[7] = %d", a[7]);
	MPI_Barrier(comm);
	a[0] = (char)(r + 1);
	CHECK(MPI_Allreduce(a, b, 1, MPI_CHAR, MPI_SUM, comm) == MPI_SUCCESS, "allreduce");
	CHECK(b[0] == p * (p + 1) / 2, "allreduce %d", b[0]);
	MPI_Barrier(comm);
	b[0] = 0;
	CHECK(MPI_Reduce(a, b, 1, MPI_CHAR, MPI_SUM, 0, comm) == MPI_SUCCESS, "reduce");
	CHECK(r != 0 || b[0] == p * (p + 1) / 2, "reduce %d", b[0]);
	MPI_Barrier(comm);
	CHECK(MPI_Gather(a, 1, MPI_CHAR, b, 1, MPI_CHAR, 0, comm) == MPI_SUCCESS, "gather");
	CHECK(r != 0 || b[p - 1] == p, "gather b[%d] = %d", p - 1, b[p - 1]);
	MPI_Barrier(comm);
	for (int i = 0; i < p; i++)
		b[i] = (char)(10 + i);
	CHECK(MPI_Scatter(b, 1, MPI_CHAR, a, 1, MPI_CHAR, 0, comm) == MPI_SUCCESS, "scatter");
	CHECK(a[0] == 10 + r, "scatter %d", a[0]);
	MPI_Barrier(comm);
	a[0] = (char)r;
	CHECK(MPI_Allgather(a, 1, MPI_CHAR, b, 1, MPI_CHAR, comm) == MPI_SUCCESS, "allgather");
	CHECK(b[p - 1] == p - 1, "allgather b[%d] = %d", p - 1, b[p - 1]);
	MPI_Barrier(comm);
	for (int i = 0; i < p; i++)
		a[i] = (char)(r * 16 + i);
	CHECK(MPI_Alltoall(a, 1, MPI_CHAR, b, 1, MPI_CHAR, comm) == MPI_SUCCESS, "alltoall");
	CHECK(b[p - 1] == (char)((p - 1) * 16 + r), "alltoall b[%d] = %d", p - 1, b[p - 1]);
}

int main(int argc, char **argv)
{
	int pre = argc > 1 && !strcmp(argv[1], "preinit");
	char a[16] = {0}, b[16 * 16] = {0};
	if (pre) {
		/* Fatal (no handler can be set before MPI_Init): the run ends. */
		MPI_Bcast(a, 1, MPI_CHAR, 0, MPI_COMM_WORLD);
		printf("mpi_collerr: MPI_Bcast before MPI_Init returned\n");
		return 1;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	const int p = size, r = rank;
	MPI_Datatype vec; /* not contiguous: the checked path */
	MPI_Type_vector(2, 1, 2, MPI_CHAR, &vec);
	MPI_Type_commit(&vec);
	MPI_Datatype uncommitted;
	MPI_Type_contiguous(2, MPI_CHAR, &uncommitted);

	good(MPI_COMM_WORLD, p, r);
	/* Each error is every rank's (no collective starts). */
	expect_err(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Barrier", "barrier null comm");
	expect_err(MPI_Barrier(12345), MPI_ERR_COMM, "MPI_Barrier", "barrier bad comm");
	expect_err(MPI_Bcast(a, 1, MPI_CHAR, p, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Bcast",
	           "bcast root p");
	expect_err(MPI_Bcast(a, 1, MPI_CHAR, -1, MPI_COMM_WORLD), MPI_ERR_ROOT, "MPI_Bcast",
	           "bcast root -1");
	expect_err(MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Bcast",
	           "bcast null type");
	expect_err(MPI_Bcast(a, 1, uncommitted, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Bcast",
	           "bcast uncommitted type");
	expect_err(MPI_Bcast(a, -1, MPI_CHAR, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Bcast",
	           "bcast count -1");
	expect_err(MPI_Bcast(a, 1, MPI_CHAR, 0, 12345), MPI_ERR_COMM, "MPI_Bcast", "bcast bad comm");
	good(MPI_COMM_WORLD, p, r);
	expect_err(MPI_Allreduce(a, b, 1, MPI_CHAR, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP,
	           "MPI_Allreduce", "allreduce null op");
	expect_err(MPI_Allreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE,
	           "MPI_Allreduce", "allreduce null type");
	expect_err(MPI_Allreduce(a, b, -2, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT,
	           "MPI_Allreduce", "allreduce count -2");
	expect_err(MPI_Reduce(a, b, 1, MPI_CHAR, MPI_SUM, p, MPI_COMM_WORLD), MPI_ERR_ROOT,
	           "MPI_Reduce", "reduce root p");
	if (p > 1)
		expect_err(MPI_Reduce(MPI_IN_PLACE, b, 1, MPI_CHAR, MPI_SUM, r == 0 ? 1 : 0, MPI_COMM_WORLD),
		           MPI_ERR_BUFFER, "MPI_Reduce", "reduce in place off the root");
	good(MPI_COMM_WORLD, p, r);
	expect_err(MPI_Gather(a, 1, MPI_CHAR, b, 1, MPI_CHAR, p, MPI_COMM_WORLD), MPI_ERR_ROOT,
	           "MPI_Gather", "gather root p");
	expect_err(MPI_Scatter(b, 1, MPI_CHAR, a, 1, MPI_CHAR, -3, MPI_COMM_WORLD), MPI_ERR_ROOT,
	           "MPI_Scatter", "scatter root -3");
	expect_err(MPI_Allgather(a, 1, MPI_CHAR, b, 2, MPI_CHAR, MPI_COMM_WORLD), MPI_ERR_TRUNCATE,
	           "MPI_Allgather", "allgather 1 byte sent, 2 received");
	expect_err(MPI_Alltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_CHAR, MPI_COMM_WORLD),
	           MPI_ERR_TYPE, "MPI_Alltoall", "alltoall null send type");
	expect_err(MPI_Alltoall(a, 1, MPI_CHAR, b, -1, MPI_CHAR, MPI_COMM_WORLD), MPI_ERR_COUNT,
	           "MPI_Alltoall", "alltoall count -1");
	expect_err(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_CHAR, MPI_IN_PLACE, 1, MPI_CHAR, MPI_COMM_WORLD),
	           MPI_ERR_BUFFER, "MPI_Alltoall", "alltoall in place on both sides");
	expect_err(MPI_Allgather(a, 1, MPI_CHAR, MPI_IN_PLACE, 1, MPI_CHAR, MPI_COMM_WORLD),
	           MPI_ERR_BUFFER, "MPI_Allgather", "allgather receive in place");
	/* The same good calls on a duplicate, and a non-contiguous type on
	 * the world, then the world's good calls again. */
	good(dup, p, r);
	char v[4] = {0, 0, 0, 0};
	if (r == 0)
		v[0] = 5, v[2] = 7;
	CHECK(MPI_Bcast(v, 1, vec, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast vector");
	CHECK(v[0] == 5 && v[2] == 7 && v[1] == 0, "bcast vector %d %d %d", v[0], v[1], v[2]);
	good(MPI_COMM_WORLD, p, r);
	MPI_Type_free(&vec);
	MPI_Type_free(&uncommitted);
	MPI_Comm_free(&dup);
	MPI_Finalize();
	int rc = MPI_Barrier(MPI_COMM_WORLD);
	CHECK(err_class(rc) == MPI_ERR_OTHER, "barrier after MPI_Finalize: class %d", err_class(rc));
	rc = MPI_Allreduce(a, b, 1, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
	CHECK(err_class(rc) == MPI_ERR_OTHER, "allreduce after MPI_Finalize: class %d", err_class(rc));
	printf("mpi_collerr: p = %d: %s\n", p, fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}
