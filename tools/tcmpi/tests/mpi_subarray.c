/* SPDX-License-Identifier: MIT */
/*
 * mpi_subarray.c - MPI_Type_create_subarray and MPI_Type_create_darray:
 * subarrays of 1 to 3 dimensions in C and Fortran order, of a basic and of
 * a derived element type, packed and unpacked byte for byte against loops
 * over the array, with MPI's size, bounds and true bounds; a subarray sent
 * around the ring into another subarray, and broadcast into one; darrays of block, cyclic (of 1
 * and 2), none and their defaults in 1 to 3 dimensions on a process grid
 * of every size, each rank's piece checked element by element against the
 * distribution's formula and all ranks' pieces covering the array exactly
 * once; and every bad argument refused.  Runs the same under Open MPI (the
 * error classes, which MPI leaves to the implementation, are checked
 * under TCMPI alone).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The linear index of coordinates c of an array of sizes n in order. */
static long lin(int nd, const int *n, const int *c, int order)
{
	long l = 0;
	for (int k = 0; k < nd; k++) {
		int d = order == MPI_ORDER_C ? k : nd - 1 - k;
		l = l * n[d] + c[d];
	}
	return l;
}

/* Advances coordinates c within [lo, lo + len) per dimension in order
 * (the fastest dimension first); 0 when done. */
static int next(int nd, const int *lo, const int *len, int *c, int order)
{
	for (int k = nd - 1; k >= 0; k--) {
		int d = order == MPI_ORDER_C ? k : nd - 1 - k;
		if (++c[d] < lo[d] + len[d])
			return 1;
		c[d] = lo[d];
	}
	return 0;
}

/* A subarray of ints: its size, bounds, true bounds, and its packed bytes
 * against the loop over it; unpacked back into a zeroed array, it restores
 * the subarray alone. */
static void subarray_ints(int nd, const int *n, const int *sub, const int *st, int order)
{
	long total = 1, subtotal = 1;
	for (int d = 0; d < nd; d++) {
		total *= n[d];
		subtotal *= sub[d];
	}
	int *a = malloc(sizeof *a * (size_t)total), *b = calloc((size_t)total, sizeof *b);
	int *packed = malloc(sizeof *packed * (size_t)subtotal);
	for (long i = 0; i < total; i++)
		a[i] = (int)(7 * i + 1);
	MPI_Datatype t;
	int rc = MPI_Type_create_subarray(nd, n, sub, st, order, MPI_INT, &t);
	CHECK(rc == MPI_SUCCESS, "subarray %dd order %d: rc %d", nd, order, rc);
	MPI_Type_commit(&t);
	int sz;
	MPI_Aint lb, ext, tlb, text;
	MPI_Type_size(t, &sz);
	MPI_Type_get_extent(t, &lb, &ext);
	MPI_Type_get_true_extent(t, &tlb, &text);
	int c[3], last[3];
	for (int d = 0; d < nd; d++) {
		c[d] = st[d];
		last[d] = st[d] + sub[d] - 1;
	}
	long first = lin(nd, n, c, order), lastl = lin(nd, n, last, order);
	CHECK(sz == (int)(subtotal * (long)sizeof(int)) && lb == 0 &&
	              ext == (MPI_Aint)(total * (long)sizeof(int)),
	      "subarray %dd order %d: size %d lb %ld extent %ld", nd, order, sz, (long)lb, (long)ext);
	CHECK(tlb == (MPI_Aint)(first * (long)sizeof(int)) &&
	              text == (MPI_Aint)((lastl - first + 1) * (long)sizeof(int)),
	      "subarray %dd order %d: true lb %ld extent %ld, want %ld %ld", nd, order, (long)tlb,
	      (long)text, first * 4, (lastl - first + 1) * 4);
	int pos = 0;
	MPI_Pack(a, 1, t, packed, (int)(subtotal * (long)sizeof(int)), &pos, MPI_COMM_WORLD);
	CHECK(pos == sz, "subarray pack position %d", pos);
	long k = 0;
	int bad = 0;
	do
		bad += packed[k++] != a[lin(nd, n, c, order)];
	while (next(nd, st, sub, c, order));
	CHECK(k == subtotal && bad == 0, "subarray %dd order %d: %d of %ld packed wrong", nd, order,
	      bad, k);
	pos = 0;
	MPI_Unpack(packed, sz, &pos, b, 1, t, MPI_COMM_WORLD);
	bad = 0;
	for (long i = 0; i < total; i++) {
		int in = 1, cc[3];
		long r = i;
		for (int kk = nd - 1; kk >= 0; kk--) {
			int d = order == MPI_ORDER_C ? kk : nd - 1 - kk;
			cc[d] = (int)(r % n[d]);
			r /= n[d];
			in &= cc[d] >= st[d] && cc[d] < st[d] + sub[d];
		}
		bad += b[i] != (in ? a[i] : 0);
	}
	CHECK(bad == 0, "subarray %dd order %d: %d elements wrong after unpack", nd, order, bad);
	MPI_Type_free(&t);
	free(a);
	free(b);
	free(packed);
}

/* A subarray of a derived element (two shorts 4 bytes apart, resized to
 * extent 8):
 * the elements keep the element type's own map. */
static void subarray_derived(void)
{
	MPI_Datatype h, e, t;
	MPI_Type_create_hvector(2, 1, 4, MPI_SHORT, &h);
	MPI_Type_create_resized(h, 0, 8, &e);
	MPI_Type_free(&h);
	MPI_Type_create_subarray(2, (int[]){3, 4}, (int[]){2, 2}, (int[]){1, 1}, MPI_ORDER_C, e, &t);
	MPI_Type_commit(&t);
	MPI_Aint lb, ext, elb, eext, tlb, text;
	int sz;
	MPI_Type_get_extent(e, &elb, &eext);
	MPI_Type_get_extent(t, &lb, &ext);
	MPI_Type_get_true_extent(t, &tlb, &text);
	MPI_Type_size(t, &sz);
	CHECK(eext == 8 && lb == 0 && ext == 12 * eext && sz == 4 * 2 * (int)sizeof(short),
	      "subarray of hvector: extent %ld size %d", (long)ext, sz);
	/* Elements (1,1) .. (2,2): element 5 at 40, the last (10) ends at
	 * 80 + 4 + 2. */
	CHECK(tlb == 5 * eext && text == 5 * eext + 4 + 2,
	      "subarray of hvector: true lb %ld extent %ld", (long)tlb, (long)text);
	short a[12][4], packed[8];
	for (int i = 0; i < 12; i++)
		for (int j = 0; j < 4; j++)
			a[i][j] = (short)(10 * i + j);
	int pos = 0;
	MPI_Pack(a, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
	int want[4] = {5, 6, 9, 10}, bad = 0;
	for (int k = 0; k < 4; k++)
		bad += packed[2 * k] != a[want[k]][0] || packed[2 * k + 1] != a[want[k]][2];
	CHECK(pos == 16 && bad == 0, "subarray of hvector packed %d wrong", bad);
	MPI_Type_free(&t);
	MPI_Type_free(&e);
}

/* Each rank sends a 3 x 4 block of its 6 x 8 matrix at a place of its
 * rank to the next rank, which receives it into a place of its own. */
static void subarray_ring(int p)
{
	int m[6][8], r[6][8];
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 8; j++) {
			m[i][j] = 1000 * rank + 10 * i + j;
			r[i][j] = -1;
		}
	int to = (rank + 1) % p, from = (rank + p - 1) % p;
	int sst[2] = {rank % 4, rank % 5}, rst[2] = {(rank + 2) % 4, (rank + 3) % 5};
	int fst[2] = {from % 4, from % 5};
	MPI_Datatype s, d;
	MPI_Type_create_subarray(2, (int[]){6, 8}, (int[]){3, 4}, sst, MPI_ORDER_C, MPI_INT, &s);
	MPI_Type_create_subarray(2, (int[]){6, 8}, (int[]){3, 4}, rst, MPI_ORDER_C, MPI_INT, &d);
	MPI_Type_commit(&s);
	MPI_Type_commit(&d);
	MPI_Status st;
	MPI_Sendrecv(m, 1, s, to, 3, r, 1, d, from, 3, MPI_COMM_WORLD, &st);
	int bad = 0, cnt;
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 8; j++) {
			int in = i >= rst[0] && i < rst[0] + 3 && j >= rst[1] && j < rst[1] + 4;
			int want = in ? 1000 * from + 10 * (i - rst[0] + fst[0]) + (j - rst[1] + fst[1])
			              : -1;
			bad += r[i][j] != want;
		}
	MPI_Get_count(&st, MPI_INT, &cnt);
	CHECK(bad == 0 && cnt == 12, "subarray ring: %d wrong, count %d", bad, cnt);
	/* The same into a contiguous buffer of 12. */
	int flat[12];
	MPI_Sendrecv(m, 1, s, to, 4, flat, 12, MPI_INT, from, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	bad = 0;
	for (int k = 0; k < 12; k++)
		bad += flat[k] != 1000 * from + 10 * (fst[0] + k / 4) + fst[1] + k % 4;
	CHECK(bad == 0, "subarray to contiguous: %d wrong", bad);
	/* Rank 0's block broadcast into every rank's other place (the
	 * layer packs and unpacks around the collective). */
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 8; j++)
			r[i][j] = -1;
	MPI_Bcast(rank == 0 ? (void *)m : (void *)r, 1, rank == 0 ? s : d, 0, MPI_COMM_WORLD);
	if (rank > 0) {
		bad = 0;
		for (int i = 0; i < 6; i++)
			for (int j = 0; j < 8; j++) {
				int in = i >= rst[0] && i < rst[0] + 3 && j >= rst[1] && j < rst[1] + 4;
				bad += r[i][j] != (in ? 10 * (i - rst[0]) + (j - rst[1]) : -1);
			}
		CHECK(bad == 0, "subarray bcast: %d wrong", bad);
	}
	MPI_Type_free(&s);
	MPI_Type_free(&d);
}

/* Whether process coordinate c of p holds index i of g under distrib and
 * darg (MPI's definition). */
static int holds(int i, int g, int distrib, int darg, int p, int c)
{
	if (distrib == MPI_DISTRIBUTE_NONE)
		return 1;
	if (distrib == MPI_DISTRIBUTE_BLOCK) {
		int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
		return i / b == c;
	}
	int k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
	return (i / k) % p == c;
}

/* A darray of ints over the p ranks: this rank's piece against the
 * formula (its elements, in the array's order), its size and bounds, and
 * all pieces together covering the array exactly once. */
static void darray(int p, int nd, const int *g, const int *dist, const int *darg, const int *psz, int order)
{
	long total = 1;
	for (int d = 0; d < nd; d++)
		total *= g[d];
	MPI_Datatype t;
	int rc = MPI_Type_create_darray(p, rank, nd, g, dist, darg, psz, order, MPI_INT, &t);
	CHECK(rc == MPI_SUCCESS, "darray: rc %d", rc);
	if (rc != MPI_SUCCESS)
		return;
	MPI_Type_commit(&t);
	/* This rank's grid coordinates (row-major). */
	int c[3], r = rank;
	for (int d = nd - 1; d >= 0; d--) {
		c[d] = r % psz[d];
		r /= psz[d];
	}
	int *a = malloc(sizeof *a * (size_t)total), *mark = calloc((size_t)total, sizeof *mark);
	int *sum = malloc(sizeof *sum * (size_t)total), *packed = malloc(sizeof *packed * (size_t)total);
	int *ones = malloc(sizeof *ones * (size_t)total);
	for (long i = 0; i < total; i++) {
		a[i] = (int)i;
		ones[i] = 1;
	}
	/* The piece by the formula, in the array's order. */
	long mine = 0;
	int bad = 0, sz, pos = 0;
	MPI_Type_size(t, &sz);
	MPI_Pack(a, 1, t, packed, (int)(total * (long)sizeof(int)), &pos, MPI_COMM_WORLD);
	int lo[3] = {0, 0, 0}, cc[3] = {0, 0, 0};
	do {
		int in = 1;
		for (int d = 0; d < nd; d++)
			in &= holds(cc[d], g[d], dist[d], darg[d], psz[d], c[d]);
		if (in) {
			if (mine < sz / (long)sizeof(int))
				bad += packed[mine] != (int)lin(nd, g, cc, order);
			mine++;
		}
	} while (next(nd, lo, g, cc, order));
	MPI_Aint lb, ext;
	MPI_Type_get_extent(t, &lb, &ext);
	CHECK(sz == (int)(mine * (long)sizeof(int)) && pos == sz && bad == 0,
	      "darray %dd order %d: size %d, want %ld; %d packed wrong", nd, order, sz,
	      mine * (long)sizeof(int), bad);
	CHECK(lb == 0 && ext == (MPI_Aint)(total * (long)sizeof(int)),
	      "darray %dd order %d: lb %ld extent %ld", nd, order, (long)lb, (long)ext);
	pos = 0;
	MPI_Unpack(ones, sz, &pos, mark, 1, t, MPI_COMM_WORLD);
	MPI_Allreduce(mark, sum, (int)total, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	bad = 0;
	for (long i = 0; i < total; i++)
		bad += sum[i] != 1;
	CHECK(bad == 0, "darray %dd order %d: %d elements not held exactly once", nd, order, bad);
	MPI_Type_free(&t);
	free(a);
	free(mark);
	free(sum);
	free(packed);
	free(ones);
}

static void darrays(int p)
{
	const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE;
	const int D = MPI_DISTRIBUTE_DFLT_DARG;
	int d2[2] = {0, 0}, d3[3] = {0, 0, 0};
	MPI_Dims_create(p, 2, d2);
	MPI_Dims_create(p, 3, d3);
	for (int order = MPI_ORDER_C; order <= MPI_ORDER_FORTRAN; order++) {
		darray(p, 1, (int[]){13}, (int[]){B}, (int[]){D}, (int[]){p}, order);
		darray(p, 1, (int[]){13}, (int[]){C}, (int[]){D}, (int[]){p}, order);
		darray(p, 1, (int[]){13}, (int[]){C}, (int[]){3}, (int[]){p}, order);
		darray(p, 1, (int[]){13}, (int[]){B}, (int[]){13}, (int[]){p}, order);
		darray(p, 2, (int[]){7, 10}, (int[]){B, C}, (int[]){D, D}, d2, order);
		darray(p, 2, (int[]){9, 11}, (int[]){C, B}, (int[]){2, D}, d2, order);
		darray(p, 2, (int[]){5, 9}, (int[]){N, C}, (int[]){D, 2}, (int[]){1, p}, order);
		darray(p, 3, (int[]){5, 6, 7}, (int[]){B, C, B}, (int[]){D, 2, D}, d3, order);
		darray(p, 3, (int[]){4, 3, 9}, (int[]){C, N, C}, (int[]){D, D, D},
		       (int[]){d2[0], 1, d2[1]}, order);
	}
}

#ifdef TCMPI
/* Every bad argument, with its class. */
static void errors(void)
{
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int n[2] = {4, 5}, sub[2] = {2, 2}, st[2] = {1, 1};
	struct {
		int nd, n1, sub1, st1, order, old, want;
	} sa[] = {
	        {0, 5, 2, 1, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 0, 0, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 5, 0, 1, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 5, 6, 0, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 5, 2, -1, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 5, 2, 4, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 5, 2, 1, 7, MPI_INT, MPI_ERR_ARG},
	        {2, 5, 2, 1, MPI_ORDER_C, MPI_DATATYPE_NULL, MPI_ERR_TYPE},
	        {2, 5, 2, 1, MPI_ORDER_FORTRAN, 9999, MPI_ERR_TYPE},
	};
	for (size_t k = 0; k < sizeof sa / sizeof sa[0]; k++) {
		n[1] = sa[k].n1;
		sub[1] = sa[k].sub1;
		st[1] = sa[k].st1;
		int rc = MPI_Type_create_subarray(sa[k].nd, n, sub, st, sa[k].order, sa[k].old, &t);
		CHECK(rc == sa[k].want && t == MPI_DATATYPE_NULL,
		      "subarray error %zu: rc %d, want %d", k, rc, sa[k].want);
	}
	int rc = MPI_Type_create_subarray(2, NULL, sub, st, MPI_ORDER_C, MPI_INT, &t);
	CHECK(rc == MPI_ERR_ARG, "subarray NULL sizes: rc %d", rc);
	rc = MPI_Type_create_subarray(2, (int[]){1 << 30, 1 << 30}, (int[]){1, 1}, (int[]){0, 0},
	                              MPI_ORDER_C, MPI_CHAR, &t);
	CHECK(rc == MPI_SUCCESS, "subarray of a 2^60-element array: rc %d", rc);
	MPI_Type_free(&t);
	rc = MPI_Type_create_subarray(3, (int[]){1 << 30, 1 << 30, 1 << 30}, (int[]){1, 1, 1},
	                              (int[]){0, 0, 0}, MPI_ORDER_C, MPI_DOUBLE, &t);
	CHECK(rc == MPI_ERR_ARG, "subarray whose extent overflows: rc %d", rc);

	const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE;
	const int D = MPI_DISTRIBUTE_DFLT_DARG;
	struct {
		int size, rank, nd, g, dist, darg, p, order, old, want;
	} da[] = {
	        {0, 0, 1, 8, B, D, 1, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 2, 1, 8, B, D, 2, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, -1, 1, 8, B, D, 2, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 0, 8, B, D, 2, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 1, 0, B, D, 2, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 1, 8, B, D, 3, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 1, 8, B, D, 0, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 1, 8, 5, D, 2, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 1, 8, C, 0, 2, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 1, 8, B, -5, 2, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 1, 8, B, 3, 2, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 1, 8, N, D, 2, MPI_ORDER_C, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 1, 8, B, D, 2, 3, MPI_INT, MPI_ERR_ARG},
	        {2, 0, 1, 8, B, D, 2, MPI_ORDER_C, MPI_DATATYPE_NULL, MPI_ERR_TYPE},
	};
	for (size_t k = 0; k < sizeof da / sizeof da[0]; k++) {
		t = MPI_DATATYPE_NULL;
		rc = MPI_Type_create_darray(da[k].size, da[k].rank, da[k].nd, &da[k].g, &da[k].dist,
		                            &da[k].darg, &da[k].p, da[k].order, da[k].old, &t);
		CHECK(rc == da[k].want && t == MPI_DATATYPE_NULL,
		      "darray error %zu: rc %d, want %d", k, rc, da[k].want);
	}
	rc = MPI_Type_create_darray(1, 0, 1, (int[]){8}, (int[]){B}, NULL, (int[]){1}, MPI_ORDER_C,
	                            MPI_INT, &t);
	CHECK(rc == MPI_ERR_ARG, "darray NULL dargs: rc %d", rc);
}
#endif

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	for (int order = MPI_ORDER_C; order <= MPI_ORDER_FORTRAN; order++) {
		subarray_ints(1, (int[]){10}, (int[]){4}, (int[]){3}, order);
		subarray_ints(1, (int[]){10}, (int[]){10}, (int[]){0}, order);
		subarray_ints(2, (int[]){5, 7}, (int[]){3, 2}, (int[]){1, 4}, order);
		subarray_ints(2, (int[]){5, 7}, (int[]){1, 7}, (int[]){4, 0}, order);
		subarray_ints(3, (int[]){4, 5, 6}, (int[]){2, 3, 4}, (int[]){1, 1, 2}, order);
		subarray_ints(3, (int[]){4, 5, 6}, (int[]){4, 5, 6}, (int[]){0, 0, 0}, order);
		subarray_ints(3, (int[]){3, 1, 4}, (int[]){1, 1, 1}, (int[]){2, 0, 3}, order);
	}
	subarray_derived();
	subarray_ring(size);
	darrays(size);
#ifdef TCMPI
	errors();
#endif

	int total;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	if (rank == 0 && !total)
		printf("mpi_subarray: p = %d: ok\n", size);
	return total != 0;
}
