/* SPDX-License-Identifier: MIT */
/*
 * mpi_coll.c - every blocking collective of the MPI layer, each result
 * checked against what MPI defines, on MPI_COMM_WORLD, a duplicate and
 * MPI_COMM_SELF.  Exit status 0 when all hold; each failure printed.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* A non-commutative user operator: 2x2 integer matrix product, stored
 * row-major as 4 ints. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	int *a = in, *b = inout;
	for (int k = 0; k < *len; k++, a += 4, b += 4) {
		int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
		            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
		memcpy(b, c, sizeof c);
	}
}

static void run(MPI_Comm comm)
{
	int p, r;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	const int n = 7;
	int *a = malloc(sizeof(int) * (size_t)(n * p)), *b = malloc(sizeof(int) * (size_t)(n * p));
	double d[3], e[3];

	MPI_Barrier(comm);

	for (int i = 0; i < n; i++)
		a[i] = r == p - 1 ? 100 + i : -1;
	MPI_Bcast(a, n, MPI_INT, p - 1, comm);
	for (int i = 0; i < n; i++)
		CHECK(a[i] == 100 + i, "bcast a[%d] = %d", i, a[i]);

	for (int i = 0; i < n; i++)
		a[i] = r + i;
	MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, comm);
	for (int i = 0; i < n; i++)
		CHECK(b[i] == p * (p - 1) / 2 + p * i, "allreduce sum b[%d] = %d", i, b[i]);
	MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_MAX, comm);
	CHECK(a[0] == p - 1, "allreduce in place max %d", a[0]);
	for (int i = 0; i < 3; i++)
		d[i] = 0.5 * (r + 1);
	MPI_Reduce(d, e, 3, MPI_DOUBLE, MPI_PROD, 0, comm);
	if (r == 0) {
		double want = 1;
		for (int i = 1; i <= p; i++)
			want *= 0.5 * i;
		/* Commutative: any order of the factors, so any rounding. */
		CHECK(fabs(e[2] - want) <= 1e-12 * want, "reduce prod %g, want %g", e[2], want);
	}
	/* Operators the layer reduces itself. */
	int lx = r % 2, ly;
	MPI_Allreduce(&lx, &ly, 1, MPI_INT, MPI_LXOR, comm);
	CHECK(ly == (p / 2) % 2, "lxor %d", ly);
	struct {
		double v;
		int i;
	} mine = {(double)((r * 7) % p), r}, best;
	MPI_Allreduce(&mine, &best, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm);
	CHECK(best.v == 0 && best.i == 0, "minloc %g at %d", best.v, best.i);
	MPI_Allreduce(&mine, &best, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
	CHECK(best.v == (double)(p - 1) && ((best.i * 7) % p) == p - 1, "maxloc %g at %d", best.v,
	      best.i);
	long double ld = r + 1, lds;
	MPI_Allreduce(&ld, &lds, 1, MPI_LONG_DOUBLE, MPI_SUM, comm);
	CHECK(lds == (long double)p * (p + 1) / 2, "long double sum %Lg", lds);
	/* A user operator that does not commute: rank order matters. */
	MPI_Op mm;
	MPI_Op_create(matmul, 0, &mm);
	int mres[4];
	MPI_Datatype mat;
	MPI_Type_contiguous(4, MPI_INT, &mat);
	MPI_Type_commit(&mat);
	int s2[4] = {r + 1, 1, 1, 0}; /* Fibonacci-like matrices: order sensitive */
	MPI_Allreduce(s2, mres, 1, mat, mm, comm);
	int want[4] = {1, 0, 0, 1};
	for (int k = 0; k < p; k++) {
		int x[4] = {k + 1, 1, 1, 0}, c[4];
		c[0] = want[0] * x[0] + want[1] * x[2];
		c[1] = want[0] * x[1] + want[1] * x[3];
		c[2] = want[2] * x[0] + want[3] * x[2];
		c[3] = want[2] * x[1] + want[3] * x[3];
		memcpy(want, c, sizeof c);
	}
	CHECK(!memcmp(mres, want, sizeof want), "non-commutative user op: %d %d %d %d", mres[0],
	      mres[1], mres[2], mres[3]);
	MPI_Scan(s2, mres, 1, mat, mm, comm);
	MPI_Op_free(&mm);
	MPI_Type_free(&mat);

	int one = r + 1, pre = -5;
	MPI_Scan(&one, &pre, 1, MPI_INT, MPI_SUM, comm);
	CHECK(pre == (r + 1) * (r + 2) / 2, "scan %d", pre);
	pre = -5;
	MPI_Exscan(&one, &pre, 1, MPI_INT, MPI_SUM, comm);
	if (r > 0)
		CHECK(pre == r * (r + 1) / 2, "exscan %d", pre);

	/* Gather, scatter, allgather, alltoall. */
	for (int i = 0; i < 2; i++)
		a[i] = 10 * r + i;
	MPI_Gather(a, 2, MPI_INT, b, 2, MPI_INT, 0, comm);
	if (r == 0)
		for (int i = 0; i < 2 * p; i++)
			CHECK(b[i] == 10 * (i / 2) + i % 2, "gather b[%d] = %d", i, b[i]);
	for (int i = 0; i < 2 * p; i++)
		a[i] = 1000 + i;
	MPI_Scatter(a, 2, MPI_INT, b, 2, MPI_INT, 0, comm);
	CHECK(b[0] == 1000 + 2 * r && b[1] == 1001 + 2 * r, "scatter %d %d", b[0], b[1]);
	a[0] = r * r;
	MPI_Allgather(a, 1, MPI_INT, b, 1, MPI_INT, comm);
	for (int i = 0; i < p; i++)
		CHECK(b[i] == i * i, "allgather b[%d] = %d", i, b[i]);
	for (int i = 0; i < p; i++)
		b[i] = i == r ? 3 * r : -1;
	MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 1, MPI_INT, comm);
	for (int i = 0; i < p; i++)
		CHECK(b[i] == 3 * i, "allgather in place b[%d] = %d", i, b[i]);
	for (int i = 0; i < p; i++)
		a[i] = 100 * r + i;
	MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, comm);
	for (int i = 0; i < p; i++)
		CHECK(b[i] == 100 * i + r, "alltoall b[%d] = %d", i, b[i]);

	/* Reduce-scatter. */
	for (int i = 0; i < p; i++)
		a[i] = i + r;
	MPI_Reduce_scatter_block(a, b, 1, MPI_INT, MPI_SUM, comm);
	CHECK(b[0] == p * r + p * (p - 1) / 2, "reduce_scatter_block %d", b[0]);
	int *rc = malloc(sizeof(int) * (size_t)p), *dsp = malloc(sizeof(int) * (size_t)p);
	int tot = 0;
	for (int i = 0; i < p; i++) {
		rc[i] = i % 3;
		dsp[i] = tot;
		tot += rc[i];
	}
	int *v = malloc(sizeof(int) * (size_t)(tot + 1)), *w = malloc(sizeof(int) * (size_t)(tot + 1));
	for (int i = 0; i < tot; i++)
		v[i] = i;
	MPI_Reduce_scatter(v, w, rc, MPI_INT, MPI_SUM, comm);
	for (int i = 0; i < rc[r]; i++)
		CHECK(w[i] == p * (dsp[r] + i), "reduce_scatter w[%d] = %d", i, w[i]);

	/* The v forms: rank i contributes i % 3 elements. */
	for (int i = 0; i < rc[r]; i++)
		a[i] = 50 * r + i;
	MPI_Allgatherv(a, rc[r], MPI_INT, v, rc, dsp, MPI_INT, comm);
	for (int i = 0; i < p; i++)
		for (int j = 0; j < rc[i]; j++)
			CHECK(v[dsp[i] + j] == 50 * i + j, "allgatherv from %d [%d] = %d", i, j,
			      v[dsp[i] + j]);
	memset(v, 0, sizeof(int) * (size_t)(tot + 1));
	MPI_Gatherv(a, rc[r], MPI_INT, v, rc, dsp, MPI_INT, p - 1, comm);
	if (r == p - 1)
		for (int i = 0; i < p; i++)
			for (int j = 0; j < rc[i]; j++)
				CHECK(v[dsp[i] + j] == 50 * i + j, "gatherv");
	for (int i = 0; i < tot; i++)
		v[i] = 7 * i;
	MPI_Scatterv(v, rc, dsp, MPI_INT, b, rc[r], MPI_INT, 0, comm);
	for (int j = 0; j < rc[r]; j++)
		CHECK(b[j] == 7 * (dsp[r] + j), "scatterv b[%d] = %d", j, b[j]);
	/* alltoallv: rank r sends (r + j) % 2 + 1 ints to j. */
	int *sc = malloc(sizeof(int) * (size_t)p), *sd = malloc(sizeof(int) * (size_t)p);
	int *rcv = malloc(sizeof(int) * (size_t)p), *rd = malloc(sizeof(int) * (size_t)p);
	int st = 0, rt = 0;
	for (int j = 0; j < p; j++) {
		sc[j] = (r + j) % 2 + 1;
		sd[j] = st;
		st += sc[j];
		rcv[j] = (j + r) % 2 + 1;
		rd[j] = rt;
		rt += rcv[j];
	}
	int *sv = malloc(sizeof(int) * (size_t)st), *rv = malloc(sizeof(int) * (size_t)rt);
	for (int j = 0; j < p; j++)
		for (int k = 0; k < sc[j]; k++)
			sv[sd[j] + k] = 1000 * r + 10 * j + k;
	MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rcv, rd, MPI_INT, comm);
	for (int j = 0; j < p; j++)
		for (int k = 0; k < rcv[j]; k++)
			CHECK(rv[rd[j] + k] == 1000 * j + 10 * r + k, "alltoallv from %d [%d] = %d",
			      j, k, rv[rd[j] + k]);
	/* alltoallw with byte displacements and the same data. */
	MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)p);
	for (int j = 0; j < p; j++) {
		ty[j] = MPI_INT;
		sd[j] *= (int)sizeof(int);
		rd[j] *= (int)sizeof(int);
	}
	memset(rv, 0, sizeof(int) * (size_t)rt);
	MPI_Alltoallw(sv, sc, sd, ty, rv, rcv, rd, ty, comm);
	for (int j = 0; j < p; j++)
		for (int k = 0; k < rcv[j]; k++)
			CHECK(rv[rd[j] / (int)sizeof(int) + k] == 1000 * j + 10 * r + k, "alltoallw");
	free(a), free(b), free(rc), free(dsp), free(v), free(w), free(sc), free(sd), free(rcv);
	free(rd), free(sv), free(rv), free(ty);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	run(MPI_COMM_WORLD);
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	int cmp;
	MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
	CHECK(cmp == MPI_CONGRUENT || size == 1, "compare %d", cmp);
	run(dup);
	MPI_Comm_free(&dup);
	run(MPI_COMM_SELF);
	int total;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_coll: p = %d: %s (%d failures)\n", size, total ? "FAILED" : "ok", total);
	MPI_Finalize();
	return total != 0;
}
