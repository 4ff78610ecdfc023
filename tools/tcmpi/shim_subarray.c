/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_subarray.c - MPI_Type_create_subarray and
 * MPI_Type_create_darray: the part of an n-dimensional array of oldtype
 * that a subarray, or one process of a distribution, holds.
 *
 * Both are made the same way.  Each dimension contributes the runs of
 * indices the part holds in it (a subarray: one run; a block distribution:
 * one run, perhaps empty; a cyclic one: one run per cycle); the part is
 * every combination of them, in the array's order (MPI_ORDER_C: the last
 * dimension fastest; MPI_ORDER_FORTRAN: the first), which is the type map
 * MPI's definitions give.  It is built as one run of oldtype elements per
 * run of the fastest dimension and combination of the indices of the
 * others (shim_dtype.c's constructor core), then given MPI's bounds: lower
 * bound 0 and the extent of the whole array, as explicit bounds (as
 * MPI_Type_create_resized gives them, which is how MPI defines both).
 */
#include <limits.h>
#include <stdlib.h>

#include "shim.h"

/* A run of len indices from start in one dimension. */
struct span {
	int start, len;
};

/* The indices a part holds in one dimension. */
struct dimpart {
	int nspans;
	struct span *spans;
	int total; /* indices held */
};

/* The part of the array of sizes[ndims] elements of oldtype (valid) given
 * by parts, in order: a new type *out made by combiner, or an error. */
static int array_type(int ndims, const int *sizes, const struct dimpart *parts, int order,
                      MPI_Datatype oldtype, int combiner, MPI_Datatype *out, const char *fn)
{
	const struct tcmpi__dtype *o = tcmpi__dt_any(oldtype);
	/* The whole array's elements and extent, which must be addresses. */
	MPI_Aint whole = 1;
	for (int d = 0; d < ndims; d++)
		if (__builtin_mul_overflow(whole, (MPI_Aint)sizes[d], &whole))
			whole = -1;
	if (whole < 0 || __builtin_mul_overflow(whole, o->extent, &whole))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "the array's extent does not fit in an MPI_Aint");
	/* The dimensions from slowest to fastest, and each one's stride in
	 * elements. */
	int dims[32], *dv = dims;
	MPI_Aint strides[32], *sv = strides;
	int *idx = NULL, **held = NULL;
	size_t *n = NULL;
	MPI_Aint *disp = NULL;
	MPI_Datatype *types = NULL;
	int rc = MPI_SUCCESS;
	if (ndims > 32) {
		dv = malloc(sizeof *dv * (size_t)ndims);
		sv = malloc(sizeof *sv * (size_t)ndims);
	}
	idx = calloc((size_t)ndims, sizeof *idx);
	held = calloc((size_t)ndims, sizeof *held);
	if (!dv || !sv || !idx || !held) {
		rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
		goto out;
	}
	MPI_Aint stride = 1;
	for (int k = ndims - 1; k >= 0; k--) {
		int d = order == MPI_ORDER_C ? k : ndims - 1 - k;
		dv[k] = d;
		sv[d] = stride;
		stride *= sizes[d];
	}
	/* One entry per run of the fastest dimension and combination of the
	 * others' indices. */
	int fast = dv[ndims - 1];
	size_t count = (size_t)parts[fast].nspans;
	for (int k = 0; k < ndims - 1; k++)
		if (__builtin_mul_overflow(count, (size_t)parts[dv[k]].total, &count) || count > INT_MAX) {
			rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                  "the part has more than INT_MAX runs");
			goto out;
		}
	for (int k = 0; k < ndims; k++)
		if (parts[k].total == 0)
			count = 0;
	n = malloc(sizeof *n * (count ? count : 1));
	disp = malloc(sizeof *disp * (count ? count : 1));
	types = malloc(sizeof *types * (count ? count : 1));
	if (!n || !disp || !types) {
		rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
		goto out;
	}
	/* The indices held in each slower dimension, one by one. */
	for (int k = 0; k < ndims - 1 && count; k++) {
		const struct dimpart *p = &parts[dv[k]];
		held[k] = malloc(sizeof **held * (size_t)p->total);
		if (!held[k]) {
			rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
			goto out;
		}
		int m = 0;
		for (int s = 0; s < p->nspans; s++)
			for (int i = 0; i < p->spans[s].len; i++)
				held[k][m++] = p->spans[s].start + i;
	}
	size_t e = 0;
	while (e < count) {
		MPI_Aint base = 0;
		for (int k = 0; k < ndims - 1; k++)
			base += (MPI_Aint)held[k][idx[k]] * sv[dv[k]];
		for (int s = 0; s < parts[fast].nspans; s++, e++) {
			n[e] = (size_t)parts[fast].spans[s].len;
			disp[e] = (base + parts[fast].spans[s].start) * o->extent;
			types[e] = oldtype;
		}
		/* The next combination: the faster dimensions first. */
		for (int k = ndims - 2; k >= 0; k--) {
			if (++idx[k] < parts[dv[k]].total)
				break;
			idx[k] = 0;
		}
	}
	rc = tcmpi__dtype_build((int)count, n, disp, types, combiner, out, fn);
	if (rc == MPI_SUCCESS)
		tcmpi__dtype_set_bounds(*out, 0, whole);
out:
	if (held)
		for (int k = 0; k < ndims; k++)
			free(held[k]);
	free(held);
	free(idx);
	free(n);
	free(disp);
	free(types);
	if (dv != dims)
		free(dv);
	if (sv != strides)
		free(sv);
	return rc;
}

int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
	const char *fn = __func__;
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (ndims < 1)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "ndims %d is not positive", ndims);
	if (!array_of_sizes || !array_of_subsizes || !array_of_starts || !newtype)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL array or newtype");
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
	if (!tcmpi__dt_any(oldtype))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype %d", oldtype);
	for (int d = 0; d < ndims; d++) {
		int sz = array_of_sizes[d], sub = array_of_subsizes[d], st = array_of_starts[d];
		if (sz < 1)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                    "size %d of dimension %d is not positive", sz, d);
		if (sub < 1 || sub > sz)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                    "subsize %d of dimension %d is not in 1..%d", sub, d, sz);
		if (st < 0 || st > sz - sub)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                    "start %d of dimension %d is not in 0..%d (size %d, "
			                    "subsize %d)",
			                    st, d, sz - sub, sz, sub);
	}
	struct dimpart *parts = malloc(sizeof *parts * (size_t)ndims);
	struct span *spans = malloc(sizeof *spans * (size_t)ndims);
	int *ints = malloc(sizeof *ints * (3 * (size_t)ndims + 2));
	if (!parts || !spans || !ints) {
		rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
		goto out;
	}
	for (int d = 0; d < ndims; d++) {
		spans[d] = (struct span){array_of_starts[d], array_of_subsizes[d]};
		parts[d] = (struct dimpart){1, &spans[d], array_of_subsizes[d]};
	}
	rc = array_type(ndims, array_of_sizes, parts, order, oldtype, MPI_COMBINER_SUBARRAY, newtype, fn);
	if (rc == MPI_SUCCESS) {
		/* MPI_Type_get_contents' order: ndims, the sizes, subsizes
		 * and starts, the order. */
		ints[0] = ndims;
		for (int d = 0; d < ndims; d++) {
			ints[1 + d] = array_of_sizes[d];
			ints[1 + ndims + d] = array_of_subsizes[d];
			ints[1 + 2 * ndims + d] = array_of_starts[d];
		}
		ints[1 + 3 * ndims] = order;
		rc = tcmpi__dtype_record(*newtype, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 0,
		                         NULL, 1, &oldtype, fn);
	}
out:
	free(parts);
	free(spans);
	free(ints);
	return rc;
}

/* The indices process coordinate c of p holds of a dimension of g
 * indices distributed by distrib and darg (checked): the spans of *dp, to
 * be freed; -1 when out of memory. */
static int distribute(int g, int distrib, int darg, int p, int c, struct dimpart *dp)
{
	long long k = distrib == MPI_DISTRIBUTE_CYCLIC && darg == MPI_DISTRIBUTE_DFLT_DARG ? 1
	              : distrib == MPI_DISTRIBUTE_BLOCK && darg == MPI_DISTRIBUTE_DFLT_DARG
	                      ? ((long long)g + p - 1) / p
	                      : darg;
	long long cycle = k * p;
	int nspans = 1;
	if (distrib == MPI_DISTRIBUTE_CYCLIC)
		nspans = c * k < g ? (int)((g - c * k + cycle - 1) / cycle) : 0;
	dp->spans = malloc(sizeof *dp->spans * (size_t)(nspans ? nspans : 1));
	if (!dp->spans)
		return -1;
	dp->nspans = 0;
	dp->total = 0;
	if (distrib == MPI_DISTRIBUTE_NONE) {
		dp->spans[dp->nspans++] = (struct span){0, g};
		dp->total = g;
		return 0;
	}
	/* A block distribution is a cyclic one of one cycle. */
	for (long long s = c * k; s < g; s += cycle) {
		int len = (int)(g - s < k ? g - s : k);
		dp->spans[dp->nspans++] = (struct span){(int)s, len};
		dp->total += len;
		if (distrib == MPI_DISTRIBUTE_BLOCK)
			break;
	}
	return 0;
}

int MPI_Type_create_darray(int size, int rank, int ndims, const int gsize_array[],
                           const int distrib_array[], const int darg_array[], const int psize_array[],
                           int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	const char *fn = __func__;
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (size < 1)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "size %d is not positive", size);
	if (rank < 0 || rank >= size)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "rank %d is not in 0..%d", rank,
		                    size - 1);
	if (ndims < 1)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "ndims %d is not positive", ndims);
	if (!gsize_array || !distrib_array || !darg_array || !psize_array || !newtype)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL array or newtype");
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
	if (!tcmpi__dt_any(oldtype))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype %d", oldtype);
	long long procs = 1;
	for (int d = 0; d < ndims; d++) {
		int g = gsize_array[d], dist = distrib_array[d], darg = darg_array[d];
		int p = psize_array[d];
		if (g < 1)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                    "global size %d of dimension %d is not positive", g, d);
		if (p < 1)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                    "process grid size %d of dimension %d is not positive",
			                    p, d);
		if (dist != MPI_DISTRIBUTE_BLOCK && dist != MPI_DISTRIBUTE_CYCLIC &&
		    dist != MPI_DISTRIBUTE_NONE)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                    "distribution %d of dimension %d is not "
			                    "MPI_DISTRIBUTE_BLOCK, CYCLIC or NONE",
			                    dist, d);
		if (dist == MPI_DISTRIBUTE_NONE && p != 1)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                    "dimension %d is not distributed (MPI_DISTRIBUTE_NONE) "
			                    "over %d processes, not 1",
			                    d, p);
		if (dist != MPI_DISTRIBUTE_NONE && darg != MPI_DISTRIBUTE_DFLT_DARG && darg < 1)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                    "distribution argument %d of dimension %d is neither "
			                    "positive nor MPI_DISTRIBUTE_DFLT_DARG",
			                    darg, d);
		if (dist == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG &&
		    (long long)darg * p < g)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                    "blocks of %d on %d processes do not cover the %d "
			                    "elements of dimension %d",
			                    darg, p, g, d);
		procs *= p;
		if (procs > size)
			break;
	}
	if (procs != size)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "the process grid's sizes do not multiply to size %d", size);
	struct dimpart *parts = calloc((size_t)ndims, sizeof *parts);
	int *ints = malloc(sizeof *ints * (4 * (size_t)ndims + 4));
	if (!parts || !ints) {
		rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
		goto out;
	}
	/* The process grid is row-major whatever the array's order (as a
	 * Cartesian communicator's). */
	int r = rank;
	for (int d = ndims - 1; d >= 0; d--) {
		int c = r % psize_array[d];
		r /= psize_array[d];
		if (distribute(gsize_array[d], distrib_array[d], darg_array[d], psize_array[d], c,
		               &parts[d]) != 0) {
			rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
			goto out;
		}
	}
	rc = array_type(ndims, gsize_array, parts, order, oldtype, MPI_COMBINER_DARRAY, newtype, fn);
	if (rc == MPI_SUCCESS) {
		/* MPI_Type_get_contents' order: size, rank, ndims, the global
		 * sizes, distributions, their arguments and the process grid,
		 * the order. */
		ints[0] = size;
		ints[1] = rank;
		ints[2] = ndims;
		for (int d = 0; d < ndims; d++) {
			ints[3 + d] = gsize_array[d];
			ints[3 + ndims + d] = distrib_array[d];
			ints[3 + 2 * ndims + d] = darg_array[d];
			ints[3 + 3 * ndims + d] = psize_array[d];
		}
		ints[3 + 4 * ndims] = order;
		rc = tcmpi__dtype_record(*newtype, MPI_COMBINER_DARRAY, 4 * ndims + 4, ints, 0,
		                         NULL, 1, &oldtype, fn);
	}
out:
	if (parts)
		for (int d = 0; d < ndims; d++)
			free(parts[d].spans);
	free(parts);
	free(ints);
	return rc;
}
