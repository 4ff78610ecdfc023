/* SPDX-License-Identifier: MIT */
/*
 * mpi_cart.c - Cartesian communicators and MPI_Comm_split_type:
 * MPI_Dims_create against hand-worked sides and its errors; for periodic,
 * non-periodic and mixed grids of 1, 2 and 3 dimensions over every rank
 * (and a ring over all ranks but the last, which gets MPI_COMM_NULL):
 * MPI_Topo_test, MPI_Cartdim_get, MPI_Cart_get, MPI_Cart_coords,
 * MPI_Cart_rank (wrapping, and refusing out of range coordinates of
 * non-periodic dimensions), MPI_Cart_shift against the neighbours computed
 * here, a halo exchange by MPI_Sendrecv along every dimension both ways
 * (MPI_PROC_NULL at the edges), MPI_Cart_sub's rows and columns with a
 * reduction along each against the sum computed here, MPI_Comm_compare of
 * the grid, its duplicate and the world; MPI_Comm_split_type; the errors of
 * bad grids under MPI_ERRORS_RETURN.
 *
 * "mpi_cart.so model BYTES torus|mesh": on the 2-D grid of MPI_Dims_create,
 * periodic or not, one MPI_Bcast of BYTES bytes from rank 0 and one
 * MPI_Alltoall of BYTES bytes per block, both checked (for their modelled
 * time in tcmpirun --report).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* rc is err and the last error's message names fn. */
static int failed_with(int rc, int err, const char *fn)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len;
	MPI_Error_string(rc, msg, &len);
	return rc == err && strstr(msg, fn) != NULL;
}

static void dims_cases(void)
{
	static const struct {
		int nnodes, ndims, in[4], want[4];
	} cases[] = {
	        {6, 2, {0, 0}, {3, 2}},
	        {12, 2, {0, 0}, {4, 3}},
	        {16, 3, {0, 0, 0}, {4, 2, 2}},
	        {7, 2, {0, 0}, {7, 1}},
	        {24, 3, {0, 0, 0}, {4, 3, 2}},
	        {36, 3, {0, 0, 0}, {4, 3, 3}},
	        {72, 3, {0, 0, 0}, {6, 4, 3}},
	        {64, 3, {0, 0, 0}, {4, 4, 4}},
	        {1, 3, {0, 0, 0}, {1, 1, 1}},
	        {12, 2, {0, 3}, {4, 3}},
	        {12, 3, {2, 0, 0}, {2, 3, 2}},
	        {12, 2, {3, 4}, {3, 4}},
	        {30, 4, {0, 0, 0, 0}, {5, 3, 2, 1}},
	        {1024, 2, {0, 0}, {32, 32}},
	        {1000, 3, {0, 10, 0}, {10, 10, 10}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int d[4];
		memcpy(d, cases[i].in, sizeof d);
		int rc = MPI_Dims_create(cases[i].nnodes, cases[i].ndims, d);
		CHECK(rc == MPI_SUCCESS, "Dims_create(%d, %d): %d", cases[i].nnodes, cases[i].ndims, rc);
		for (int j = 0; rc == MPI_SUCCESS && j < cases[i].ndims; j++)
			CHECK(d[j] == cases[i].want[j], "Dims_create(%d, %d) [%d] = %d, want %d",
			      cases[i].nnodes, cases[i].ndims, j, d[j], cases[i].want[j]);
	}
	CHECK(MPI_Dims_create(1, 0, NULL) == MPI_SUCCESS, "Dims_create(1, 0)");
	/* Impossible: given sides that do not divide nnodes, or a full set
	 * whose product is not nnodes; a negative side, ndims or nnodes. */
	int bad1[2] = {5, 0}, bad2[2] = {3, 3}, bad3[2] = {-1, 0}, ok2[2] = {0, 0};
	CHECK(failed_with(MPI_Dims_create(12, 2, bad1), MPI_ERR_DIMS, "MPI_Dims_create"),
	      "Dims_create(12, {5, 0}) accepted");
	CHECK(failed_with(MPI_Dims_create(12, 2, bad2), MPI_ERR_DIMS, "MPI_Dims_create"),
	      "Dims_create(12, {3, 3}) accepted");
	CHECK(failed_with(MPI_Dims_create(12, 2, bad3), MPI_ERR_DIMS, "MPI_Dims_create"),
	      "Dims_create(12, {-1, 0}) accepted");
	CHECK(failed_with(MPI_Dims_create(12, -1, ok2), MPI_ERR_DIMS, "MPI_Dims_create"),
	      "Dims_create(12, ndims -1) accepted");
	CHECK(failed_with(MPI_Dims_create(0, 2, ok2), MPI_ERR_ARG, "MPI_Dims_create"),
	      "Dims_create(0, 2) accepted");
	CHECK(failed_with(MPI_Dims_create(5, 0, NULL), MPI_ERR_DIMS, "MPI_Dims_create"),
	      "Dims_create(5, 0) accepted");
}

/* A grid of nd dimensions with the sides of MPI_Dims_create over the first
 * n ranks of the world, periodic where per[i]. */
static void grid(int n, int nd, const int per[])
{
	int dims[3] = {0, 0, 0};
	MPI_Dims_create(n, nd, dims);
	MPI_Comm cart;
	int rc = MPI_Cart_create(MPI_COMM_WORLD, nd, dims, per, 1, &cart);
	CHECK(rc == MPI_SUCCESS, "Cart_create: %d", rc);
	if (rank >= n) {
		CHECK(cart == MPI_COMM_NULL, "rank %d beyond %d nodes has a grid", rank, n);
		return;
	}
	if (cart == MPI_COMM_NULL) {
		CHECK(0, "no grid");
		return;
	}
	int st = -1, k = -1, cp = -1, cr = -1;
	MPI_Topo_test(cart, &st);
	MPI_Cartdim_get(cart, &k);
	MPI_Comm_size(cart, &cp);
	MPI_Comm_rank(cart, &cr);
	CHECK(st == MPI_CART && k == nd && cp == n && cr == rank,
	      "Topo_test %d ndims %d size %d rank %d", st, k, cp, cr);
	/* Row-major, the last dimension fastest. */
	int want[3], stride[3], gd[3], gp[3], gc[3];
	for (int i = nd - 1, r = rank, s = 1; i >= 0; i--) {
		want[i] = r % dims[i];
		r /= dims[i];
		stride[i] = s;
		s *= dims[i];
	}
	MPI_Cart_get(cart, 3, gd, gp, gc);
	for (int i = 0; i < nd; i++)
		CHECK(gd[i] == dims[i] && gp[i] == (per[i] != 0) && gc[i] == want[i],
		      "Cart_get [%d]: %d %d %d", i, gd[i], gp[i], gc[i]);
	for (int r = 0; r < n; r++) {
		int c[3], back = -1;
		MPI_Cart_coords(cart, r, 3, c);
		MPI_Cart_rank(cart, c, &back);
		CHECK(back == r, "Cart_rank(Cart_coords(%d)) = %d", r, back);
	}
	int cmp = -1;
	MPI_Comm_compare(MPI_COMM_WORLD, cart, &cmp);
	CHECK(cmp == (n == size ? MPI_CONGRUENT : MPI_UNEQUAL), "compare world and grid: %d", cmp);
	MPI_Comm_compare(cart, cart, &cmp);
	CHECK(cmp == MPI_IDENT, "compare grid with itself: %d", cmp);

	for (int i = 0; i < nd; i++) {
		/* Coordinates one side beyond each edge: wrapped when
		 * periodic, refused when not. */
		int c[3], r = -1;
		memcpy(c, want, sizeof c);
		c[i] = want[i] + dims[i];
		rc = MPI_Cart_rank(cart, c, &r);
		if (per[i])
			CHECK(rc == MPI_SUCCESS && r == rank, "Cart_rank wrapped: %d %d", rc, r);
		else
			CHECK(failed_with(rc, MPI_ERR_ARG, "MPI_Cart_rank"),
			      "Cart_rank beyond a non-periodic edge: %d", rc);
		c[i] = want[i] - 2 * dims[i];
		rc = MPI_Cart_rank(cart, c, &r);
		CHECK(per[i] ? rc == MPI_SUCCESS && r == rank : rc == MPI_ERR_ARG,
		      "Cart_rank at -2 sides: %d %d", rc, r);

		/* The halo exchange along dimension i, both ways. */
		for (int disp = -2; disp <= 2; disp++) {
			int src = -9, dst = -9, nb[2];
			MPI_Cart_shift(cart, i, disp, &src, &dst);
			for (int s = 0; s < 2; s++) {
				int y = want[i] + (s ? -disp : disp);
				if (per[i])
					y = ((y % dims[i]) + dims[i]) % dims[i];
				nb[s] = y < 0 || y >= dims[i] ? MPI_PROC_NULL
				                              : rank + (y - want[i]) * stride[i];
			}
			CHECK(dst == nb[0] && src == nb[1], "Cart_shift(%d, %d): %d %d, want %d %d",
			      i, disp, src, dst, nb[1], nb[0]);
			/* A periodic side of 1 makes the rank its own neighbour,
			 * which works on a grid of several ranks; a grid of one
			 * rank has no team to carry messages (docs/mpi-programs.md). */
			if (cp == 1 && (src == rank || dst == rank))
				continue;
			double out[8], in[8];
			for (int j = 0; j < 8; j++) {
				out[j] = rank * 100 + j;
				in[j] = -1;
			}
			MPI_Status status;
			rc = MPI_Sendrecv(out, 8, MPI_DOUBLE, dst, 10 + i, in, 8, MPI_DOUBLE, src,
			                  10 + i, cart, &status);
			CHECK(rc == MPI_SUCCESS, "Sendrecv: %d", rc);
			for (int j = 0; j < 8; j++)
				CHECK(in[j] == (src == MPI_PROC_NULL ? -1 : src * 100 + j),
				      "halo (%d, %d) [%d] = %g from %d", i, disp, j, in[j], src);
			CHECK(status.MPI_SOURCE == src, "status source %d, want %d",
			      status.MPI_SOURCE, src);
		}
	}

	/* A split has no topology; a duplicate keeps it; both compare
	 * congruent. */
	MPI_Comm split;
	MPI_Comm_split(cart, 0, rank, &split);
	MPI_Topo_test(split, &st);
	MPI_Comm_compare(cart, split, &cmp);
	CHECK(st == MPI_UNDEFINED && cmp == MPI_CONGRUENT,
	      "split of a grid: Topo_test %d compare %d", st, cmp);
	MPI_Comm_free(&split);
	MPI_Comm dup;
	MPI_Comm_dup(cart, &dup);
	MPI_Comm_compare(cart, dup, &cmp);
	CHECK(cmp == MPI_CONGRUENT, "compare grid and its dup: %d", cmp);
	MPI_Topo_test(dup, &st);
	k = -1;
	MPI_Cartdim_get(dup, &k);
	CHECK(st == MPI_CART && k == nd, "dup: Topo_test %d ndims %d", st, k);
	MPI_Comm_free(&dup);

	/* Each dimension alone (the first: columns; the last: rows) and
	 * none: a reduction of the world ranks along it. */
	for (int keep = 0; keep <= nd; keep++) {
		int remain[3] = {0, 0, 0};
		if (keep < nd)
			remain[keep] = 1;
		MPI_Comm sub;
		rc = MPI_Cart_sub(cart, remain, &sub);
		CHECK(rc == MPI_SUCCESS && sub != MPI_COMM_NULL, "Cart_sub: %d", rc);
		if (rc != MPI_SUCCESS || sub == MPI_COMM_NULL)
			continue;
		int sp = -1, sr = -1, sk = -1;
		MPI_Comm_size(sub, &sp);
		MPI_Comm_rank(sub, &sr);
		MPI_Cartdim_get(sub, &sk);
		int wp = keep < nd ? dims[keep] : 1, wr = keep < nd ? want[keep] : 0;
		CHECK(sp == wp && sr == wr && sk == (keep < nd),
		      "Cart_sub(%d): size %d rank %d ndims %d", keep, sp, sr, sk);
		if (keep < nd) {
			int sd, spr, sc;
			MPI_Cart_get(sub, 1, &sd, &spr, &sc);
			CHECK(sd == dims[keep] && spr == (per[keep] != 0) && sc == want[keep],
			      "Cart_sub(%d): Cart_get %d %d %d", keep, sd, spr, sc);
		}
		int sum = -1, ref = 0;
		for (int j = 0; j < wp; j++)
			ref += keep < nd ? rank + (j - want[keep]) * stride[keep] : rank;
		MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, sub);
		if (sr == 0)
			CHECK(sum == ref, "reduce along %d: %d, want %d", keep, sum, ref);
		MPI_Comm_free(&sub);
	}
	MPI_Comm_free(&cart);
}

/* Grids that cannot be made, and Cartesian calls on a communicator
 * without a grid. */
static void grid_errors(void)
{
	MPI_Comm cart = MPI_COMM_WORLD;
	int dims[9] = {size + 1, 1, 1, 1, 1, 1, 1, 1, 1}, per[9] = {0};
	CHECK(failed_with(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &cart), MPI_ERR_DIMS,
	                  "MPI_Cart_create"),
	      "Cart_create of %d nodes accepted", size + 1);
	dims[0] = 0;
	CHECK(failed_with(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &cart), MPI_ERR_DIMS,
	                  "MPI_Cart_create"),
	      "Cart_create with a side 0 accepted");
	dims[0] = 1;
	CHECK(failed_with(MPI_Cart_create(MPI_COMM_WORLD, 9, dims, per, 0, &cart), MPI_ERR_DIMS,
	                  "MPI_Cart_create"),
	      "Cart_create of 9 dimensions accepted");
	CHECK(failed_with(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, per, 0, &cart), MPI_ERR_DIMS,
	                  "MPI_Cart_create"),
	      "Cart_create of -1 dimensions accepted");
	CHECK(cart == MPI_COMM_WORLD, "a refused Cart_create wrote comm_cart");
	int st = -1, k, c[2], r, s, d;
	MPI_Topo_test(MPI_COMM_WORLD, &st);
	CHECK(st == MPI_UNDEFINED, "Topo_test of the world: %d", st);
	CHECK(failed_with(MPI_Cartdim_get(MPI_COMM_WORLD, &k), MPI_ERR_TOPOLOGY, "MPI_Cartdim_get"),
	      "Cartdim_get of the world");
	CHECK(failed_with(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c), MPI_ERR_TOPOLOGY, "MPI_Cart_coords"),
	      "Cart_coords of the world");
	CHECK(failed_with(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &s, &d), MPI_ERR_TOPOLOGY, "MPI_Cart_shift"),
	      "Cart_shift of the world");
	/* A one-dimensional grid of every rank: bad direction, rank,
	 * maxdims. */
	dims[0] = size;
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &cart);
	CHECK(failed_with(MPI_Cart_shift(cart, 1, 1, &s, &d), MPI_ERR_DIMS, "MPI_Cart_shift"),
	      "Cart_shift in direction 1 of 1");
	CHECK(failed_with(MPI_Cart_coords(cart, size, 1, c), MPI_ERR_RANK, "MPI_Cart_coords"),
	      "Cart_coords of rank %d", size);
	CHECK(failed_with(MPI_Cart_coords(cart, 0, 0, c), MPI_ERR_ARG, "MPI_Cart_coords"),
	      "Cart_coords with maxdims 0");
	c[0] = -1;
	CHECK(failed_with(MPI_Cart_rank(cart, c, &r), MPI_ERR_ARG, "MPI_Cart_rank"),
	      "Cart_rank(-1) on a chain");
	MPI_Comm_free(&cart);
	/* The null grid: ndims 0 is one rank. */
	MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &cart);
	CHECK((rank == 0) == (cart != MPI_COMM_NULL), "ndims 0: rank %d %s a grid", rank,
	      cart != MPI_COMM_NULL ? "has" : "has not");
	if (cart != MPI_COMM_NULL) {
		int n = -1;
		MPI_Cartdim_get(cart, &n);
		MPI_Comm_size(cart, &s);
		CHECK(n == 0 && s == 1, "ndims 0: %d dims, size %d", n, s);
		MPI_Comm_free(&cart);
	}
}

/* MPI_COMM_TYPE_SHARED: every rank, ordered by key; MPI_UNDEFINED and the
 * hardware types: MPI_COMM_NULL; an unknown type: MPI_ERR_ARG. */
static void split_type(void)
{
	MPI_Comm sh, same;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &sh);
	int sp = -1, sr = -1, cmp = -1;
	MPI_Comm_size(sh, &sp);
	MPI_Comm_rank(sh, &sr);
	CHECK(sp == size && sr == size - 1 - rank, "shared: size %d rank %d", sp, sr);
	MPI_Comm_compare(MPI_COMM_WORLD, sh, &cmp);
	CHECK(cmp == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare world and reversed: %d", cmp);
	int sum = 0;
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sh);
	CHECK(sum == size * (size - 1) / 2, "Allreduce on shared: %d", sum);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &same);
	MPI_Comm_compare(MPI_COMM_WORLD, same, &cmp);
	CHECK(cmp == MPI_CONGRUENT, "compare world and shared: %d", cmp);
	MPI_Comm_compare(sh, same, &cmp);
	CHECK(cmp == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare the two shared: %d", cmp);
	MPI_Comm_free(&sh);
	MPI_Comm_free(&same);
	MPI_Comm none = MPI_COMM_WORLD;
	MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
	                    MPI_INFO_NULL, &none);
	CHECK((rank % 2 == 1) == (none == MPI_COMM_NULL), "MPI_UNDEFINED on odd ranks");
	if (none != MPI_COMM_NULL) {
		MPI_Comm_size(none, &sp);
		CHECK(sp == (size + 1) / 2, "even ranks: %d", sp);
		MPI_Comm_compare(MPI_COMM_WORLD, none, &cmp);
		CHECK(cmp == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare with evens: %d", cmp);
		MPI_Comm_free(&none);
	}
	CHECK(failed_with(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &none),
	                  MPI_ERR_ARG, "MPI_Comm_split_type"),
	      "split_type 12345 accepted");
}

/* Messages to and from MPI_PROC_NULL complete at once. */
static void proc_null(void)
{
	int v = 5, w = 7;
	MPI_Status st;
	CHECK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "Send");
	CHECK(MPI_Recv(&w, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st) == MPI_SUCCESS &&
	              w == 7 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
	      "Recv from MPI_PROC_NULL: %d source %d tag %d", w, st.MPI_SOURCE, st.MPI_TAG);
	int count = -1;
	MPI_Get_count(&st, MPI_INT, &count);
	CHECK(count == 0, "Recv from MPI_PROC_NULL: count %d", count);
	CHECK(MPI_Sendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, &w, 1, MPI_INT, MPI_PROC_NULL, 0,
	                   MPI_COMM_WORLD, &st) == MPI_SUCCESS &&
	              w == 7 && st.MPI_SOURCE == MPI_PROC_NULL,
	      "Sendrecv with MPI_PROC_NULL");
}

static int model_run(int bytes, int periodic)
{
	int dims[2] = {0, 0}, per[2] = {periodic, periodic};
	MPI_Dims_create(size, 2, dims);
	MPI_Comm cart;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart);
	size_t n = (size_t)bytes * (size_t)size;
	unsigned char *buf = calloc((size_t)bytes + 1, 1), *out = malloc(n + 1), *in = malloc(n + 1);
	if (!buf || !out || !in) {
		fails++;
		printf("rank %d: out of memory\n", rank);
	} else {
		if (rank == 0)
			memset(buf, 7, (size_t)bytes);
		MPI_Bcast(buf, bytes, MPI_BYTE, 0, cart);
		for (int i = 0; i < bytes; i++)
			CHECK(buf[i] == 7, "bcast byte %d: %d", i, buf[i]);
		for (size_t i = 0; i < n; i++)
			out[i] = (unsigned char)(rank * 31 + (int)(i / (size_t)bytes));
		MPI_Alltoall(out, bytes, MPI_BYTE, in, bytes, MPI_BYTE, cart);
		for (size_t i = 0; i < n; i++)
			CHECK(in[i] == (unsigned char)((int)(i / (size_t)bytes) * 31 + rank),
			      "alltoall byte %zu: %d", i, in[i]);
	}
	free(buf);
	free(out);
	free(in);
	MPI_Comm_free(&cart);
	int total = 0;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && total == 0)
		printf("mpi_cart: bcast and alltoall of %d bytes on %s:%dx%d: ok\n", bytes,
		       periodic ? "torus" : "mesh", dims[0], dims[1]);
	return total != 0;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc == 4 && !strcmp(argv[1], "model")) {
		int rc = model_run(atoi(argv[2]), !strcmp(argv[3], "torus"));
		MPI_Finalize();
		return rc;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	dims_cases();
	proc_null();
	static const int per2[4][2] = {{1, 1}, {0, 0}, {1, 0}, {0, 1}};
	for (int i = 0; i < 4; i++)
		grid(size, 2, per2[i]);
	static const int per1[2][1] = {{1}, {0}}, per3[2][3] = {{1, 1, 1}, {0, 1, 0}};
	for (int i = 0; i < 2; i++) {
		grid(size, 1, per1[i]);
		grid(size, 3, per3[i]);
		if (size > 1) /* all ranks but the last */
			grid(size - 1, 1, per1[i]);
	}
	grid_errors();
	split_type();

	int total = 0;
	MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && total == 0)
		printf("mpi_cart: p = %d: ok\n", size);
	MPI_Finalize();
	return total != 0;
}
