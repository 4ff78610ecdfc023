/* SPDX-License-Identifier: MIT */
/*
 * mpi_icoll.c - nonblocking (MPI_I...) and persistent (..._init,
 * MPI_Start, MPI_Startall) collectives of the MPI layer, each result
 * checked, on MPI_COMM_WORLD, a split communicator and MPI_COMM_SELF; a
 * nonblocking call overlapping point-to-point messages; a variable-count
 * nonblocking call reported as unsupported by name.  Exit status 0 when
 * all hold; each failure printed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void run(MPI_Comm comm, const char *name)
{
	int p, r;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	MPI_Request q[8];
	int n = 0;

	/* Several calls outstanding at once, completed in reverse order. */
	long s = r + 1, sum = -1, mx = -1, sc = -1;
	double b = r == 0 ? 2.5 : 0.0;
	int *ga = malloc(sizeof(int) * (size_t)p * 2), *aa = malloc(sizeof(int) * (size_t)p * 2);
	int *ts = malloc(sizeof(int) * (size_t)p), *tr = malloc(sizeof(int) * (size_t)p);
	int pair[2] = {r, 7 * r};
	for (int i = 0; i < p; i++)
		ts[i] = 100 * r + i;
	MPI_Iallreduce(&s, &sum, 1, MPI_LONG, MPI_SUM, comm, &q[n++]);
	MPI_Ibcast(&b, 1, MPI_DOUBLE, 0, comm, &q[n++]);
	MPI_Ireduce(&s, &mx, 1, MPI_LONG, MPI_MAX, p - 1, comm, &q[n++]);
	MPI_Iscan(&s, &sc, 1, MPI_LONG, MPI_SUM, comm, &q[n++]);
	MPI_Iallgather(pair, 2, MPI_INT, aa, 2, MPI_INT, comm, &q[n++]);
	MPI_Igather(pair, 2, MPI_INT, ga, 2, MPI_INT, 0, comm, &q[n++]);
	MPI_Ialltoall(ts, 1, MPI_INT, tr, 1, MPI_INT, comm, &q[n++]);
	MPI_Ibarrier(comm, &q[n++]);
	for (int i = n - 1; i >= 0; i--)
		MPI_Wait(&q[i], MPI_STATUS_IGNORE);
	CHECK(sum == (long)p * (p + 1) / 2, "%s Iallreduce %ld", name, sum);
	CHECK(b == 2.5, "%s Ibcast %g", name, b);
	CHECK(r != p - 1 || mx == p, "%s Ireduce %ld", name, mx);
	CHECK(sc == (long)(r + 1) * (r + 2) / 2, "%s Iscan %ld", name, sc);
	for (int i = 0; i < p; i++) {
		CHECK(aa[2 * i] == i && aa[2 * i + 1] == 7 * i, "%s Iallgather [%d]", name, i);
		CHECK(r != 0 || (ga[2 * i] == i && ga[2 * i + 1] == 7 * i), "%s Igather [%d]", name, i);
		CHECK(tr[i] == 100 * i + r, "%s Ialltoall [%d] = %d", name, i, tr[i]);
	}

	/* Persistent: the same requests started three times, the buffers'
	 * contents at each start used. */
	int x = 0, y = -1, blk = -1, all[64];
	int *sbuf = malloc(sizeof(int) * (size_t)p);
	MPI_Request pq[3];
	MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &pq[0]);
	MPI_Scatter_init(sbuf, 1, MPI_INT, &blk, 1, MPI_INT, 0, comm, MPI_INFO_NULL, &pq[1]);
	MPI_Barrier_init(comm, MPI_INFO_NULL, &pq[2]);
	for (int it = 0; it < 3; it++) {
		x = r * it;
		for (int i = 0; i < p; i++)
			sbuf[i] = 10 * it + i;
		MPI_Startall(3, pq);
		int flag = 0;
		while (!flag)
			MPI_Testall(3, pq, &flag, MPI_STATUSES_IGNORE);
		CHECK(pq[0] != MPI_REQUEST_NULL, "%s persistent request freed by completion", name);
		CHECK(y == it * p * (p - 1) / 2, "%s Allreduce_init start %d: %d", name, it, y);
		CHECK(blk == 10 * it + r, "%s Scatter_init start %d: %d", name, it, blk);
	}
	if (p <= 64) {
		MPI_Request g;
		MPI_Allgather_init(&r, 1, MPI_INT, all, 1, MPI_INT, comm, MPI_INFO_NULL, &g);
		MPI_Start(&g);
		MPI_Wait(&g, MPI_STATUS_IGNORE);
		for (int i = 0; i < p; i++)
			CHECK(all[i] == i, "%s Allgather_init [%d] = %d", name, i, all[i]);
		MPI_Request_free(&g);
		CHECK(g == MPI_REQUEST_NULL, "%s Request_free", name);
	}
	for (int i = 0; i < 3; i++)
		MPI_Request_free(&pq[i]);
	free(sbuf);
	free(ga);
	free(aa);
	free(ts);
	free(tr);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	run(MPI_COMM_WORLD, "world");
	run(MPI_COMM_SELF, "self");
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
	run(half, "half");

	/* A nonblocking allreduce while the ranks exchange messages. */
	if (size > 1) {
		int v = rank, t = -1, got = -1;
		MPI_Request q;
		MPI_Iallreduce(&v, &t, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q);
		MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
		             (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
		CHECK(t == size - 1 && got == (rank + size - 1) % size, "overlap: %d %d", t, got);
	}

	/* The variable-count forms are not available: reported by name. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int cnt = 1, disp = 0, one = 0, out = 0;
	MPI_Request q;
	int rc = MPI_Iallgatherv(&one, 1, MPI_INT, &out, &cnt, &disp, MPI_INT, MPI_COMM_WORLD, &q);
	char msg[MPI_MAX_ERROR_STRING] = "";
	int len = 0;
	MPI_Error_string(rc, msg, &len);
	int cls = -1;
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "Iallgatherv: error %d", rc);
	/* A reduction the layer makes itself has no nonblocking form. */
	struct {
		double v;
		int i;
	} mi = {1.0, rank}, mo;
	rc = MPI_Iallreduce(&mi, &mo, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD, &q);
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "Iallreduce MINLOC: error %d", rc);

	MPI_Comm_free(&half);
	int total = 0;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && total == 0)
		printf("mpi_icoll: p = %d: ok\n", size);
	MPI_Finalize();
	return total != 0;
}
