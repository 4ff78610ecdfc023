/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_cart.c - Cartesian topologies (MPI_Dims_create,
 * MPI_Cart_*, MPI_Cartdim_get, MPI_Topo_test) and MPI_Comm_split_type.
 *
 * A Cartesian communicator is a sub-team of the old communicator's first
 * dims[0] x ... x dims[ndims-1] ranks, in the same order (reorder is
 * ignored), whose topology is named after the grid:
 *   no dimension periodic     mesh:AxBx...
 *   any dimension periodic    torus:AxBx...  (topocoll has no mesh with
 *                                            some wrap-around links: a torus
 *                                            holds every neighbour pair of
 *                                            the grid as one link)
 *   ndims = 0                 complete:1     (one rank)
 * So the collectives on it run over, and are charged on, the grid's links.
 * Ranks are row-major with the last dimension fastest, in MPI as in
 * topocoll/topo.h, so the MPI rank of a coordinate is the node of the
 * mesh or torus.  MPI_Cart_shift and MPI_Cart_rank follow the periodic
 * flags exactly, whatever the topology underneath: MPI_PROC_NULL off the
 * edge of a non-periodic dimension.  MPI_Cart_sub is a split by the
 * coordinates of the dropped dimensions, each part named after its kept
 * dimensions by the same rule.
 *
 * The arguments are checked on each rank before the split: ranks giving
 * the same bad arguments all return the error; a rank alone in giving bad
 * ones returns at once, and the others' split ends with the team's timeout
 * (MPI makes differing arguments erroneous).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* comm's state in *c when it has a Cartesian topology, or
 * MPI_ERR_TOPOLOGY. */
static int cart_of(MPI_Comm comm, const char *fn, struct tcmpi__comm **c)
{
	int rc = tcmpi__comm_arg(comm, fn, c);
	if (rc)
		return rc;
	if (!(*c)->cart.on)
		return tcmpi__error(comm, MPI_ERR_TOPOLOGY, fn,
		                    "communicator %d has no Cartesian topology", (int)comm);
	return MPI_SUCCESS;
}

/* The grid's arguments: 0 <= ndims <= TCMPI_MAX_DIMS, every side >= 1,
 * their product (*n) at most size. */
static int grid_check(MPI_Comm comm, int ndims, const int dims[], const int periods[], int size,
                      int *n, const char *fn)
{
	if (ndims < 0 || ndims > TCMPI_MAX_DIMS)
		return tcmpi__error(comm, MPI_ERR_DIMS, fn, "ndims %d: 0 .. %d are supported",
		                    ndims, TCMPI_MAX_DIMS);
	if (ndims > 0 && (!dims || !periods))
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL dims or periods");
	long long prod = 1;
	for (int i = 0; i < ndims; i++) {
		if (dims[i] < 1)
			return tcmpi__error(comm, MPI_ERR_DIMS, fn,
			                    "dims[%d] = %d: every side is >= 1", i, dims[i]);
		prod *= dims[i];
		if (prod > size)
			break;
	}
	if (prod > size)
		return tcmpi__error(comm, MPI_ERR_DIMS, fn,
		                    "the grid has more nodes than the communicator's %d ranks", size);
	*n = (int)prod;
	return MPI_SUCCESS;
}

/* The topology spec of a grid (the rule in the header comment). */
static void grid_spec(int ndims, const int dims[], const int periods[], char *buf, size_t len)
{
	if (ndims == 0) {
		snprintf(buf, len, "complete:1");
		return;
	}
	int torus = 0;
	for (int i = 0; i < ndims; i++)
		torus |= periods[i] != 0;
	size_t at = (size_t)snprintf(buf, len, "%s:", torus ? "torus" : "mesh");
	for (int i = 0; i < ndims && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "x" : "", dims[i]);
}

/* The communicator of the calling rank's part of a split of c (colour
 * MPI_UNDEFINED: none) over the topology spec, with the grid as its
 * Cartesian topology. */
static int cart_make(struct tcmpi__comm *c, MPI_Comm comm, int colour, int key, int ndims,
                     const int dims[], const int periods[], MPI_Comm *out, const char *fn)
{
	char spec[16 * TCMPI_MAX_DIMS];
	grid_spec(ndims, dims, periods, spec, sizeof spec);
	*out = MPI_COMM_NULL;
	int rc;
	if (c->self) {
		rc = colour == MPI_UNDEFINED ? MPI_SUCCESS : tcmpi__comm_new(c, out, fn);
	} else {
		struct tc_proc *np = NULL;
		int tcrc = tc_team_split(c->proc, colour == MPI_UNDEFINED ? TC_UNDEFINED : colour,
		                         key, spec, &np);
		if (tcrc)
			return tcmpi__tc_error(comm, tcrc, fn);
		rc = tcmpi__comm_sub(c, np, out, fn);
	}
	if (rc || *out == MPI_COMM_NULL)
		return rc;
	struct tcmpi__cart *k = &tcmpi__comm(*out)->cart;
	k->on = 1;
	k->ndims = ndims;
	for (int i = 0; i < ndims; i++) {
		k->dims[i] = dims[i];
		k->periods[i] = periods[i] != 0;
	}
	return MPI_SUCCESS;
}

/* The coordinates of rank r (row-major, the last dimension fastest). */
static void coords_of(const struct tcmpi__cart *k, int r, int coords[])
{
	for (int i = k->ndims - 1; i >= 0; i--) {
		coords[i] = r % k->dims[i];
		r /= k->dims[i];
	}
}

/* ---------------------------------------------------------------------
 * MPI_Dims_create: the free sides (0 entries) f1 >= f2 >= ... >= fk with
 * product nnodes / (the product of the given sides) whose largest minus
 * smallest is least (ties: the smallest f1), found by a search over the
 * divisors; MPICH and Open MPI hand prime factors to the smallest side,
 * which gives the same sides in the common cases (12 in 2: 4 x 3; 16 in
 * 3: 4 x 2 x 2) but not always the most balanced ones.
 */
struct dims_search {
	const int *div; /* the divisors of the free product, ascending */
	int ndiv;
	int k;     /* free sides */
	int *cur;  /* the sides chosen so far */
	int *best; /* the best sides found */
	int bestdiff;
};

/* d^s >= n, without overflow. */
static int pow_at_least(long long d, int s, long long n)
{
	long long v = 1;
	for (int i = 0; i < s; i++) {
		v *= d;
		if (v >= n)
			return 1;
	}
	return v >= n;
}

/* Chooses side i of the rest rem, at most maxf. */
static void dims_search(struct dims_search *s, int i, int rem, int maxf)
{
	const int left = s->k - i;
	if (rem == 1) { /* the remaining sides are 1 */
		int diff = (i > 0 ? s->cur[0] : 1) - (left > 0 || i == 0 ? 1 : s->cur[i - 1]);
		if (diff < s->bestdiff) {
			s->bestdiff = diff;
			for (int j = 0; j < s->k; j++)
				s->best[j] = j < i ? s->cur[j] : 1;
		}
		return;
	}
	if (left == 0)
		return;
	for (int j = 0; j < s->ndiv; j++) {
		int d = s->div[j];
		if (d > maxf || d > rem)
			break;
		if (rem % d || !pow_at_least(d, left, rem))
			continue;
		/* The smallest side is at most d: the spread at least
		 * cur[0] - d. */
		if (i > 0 && s->cur[0] - d >= s->bestdiff)
			continue;
		if (left == 1 && d != rem)
			continue;
		s->cur[i] = d;
		dims_search(s, i + 1, rem / d, d);
	}
}

int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (nnodes < 1)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__,
		                    "nnodes %d: at least 1 node", nnodes);
	if (ndims < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_DIMS, __func__, "negative ndims %d", ndims);
	if (ndims > 0 && !dims)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL dims");
	long long given = 1;
	int k = 0;
	for (int i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_DIMS, __func__,
			                    "dims[%d] = %d: a side is >= 1, or 0 to choose it", i,
			                    dims[i]);
		if (dims[i] == 0)
			k++;
		else if ((given *= dims[i]) > nnodes)
			break;
	}
	if (given > nnodes || nnodes % given || (k == 0 && given != nnodes))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_DIMS, __func__,
		                    "%d nodes do not fill the given sides (their product %s%lld)%s",
		                    nnodes, given > nnodes ? "over " : "",
		                    given > nnodes ? (long long)nnodes : given,
		                    k ? "" : " with no side left to choose");
	if (k == 0)
		return MPI_SUCCESS;
	const int m = nnodes / (int)given;
	int ndiv = 0;
	for (long long d = 1; d * d <= m; d++)
		ndiv += m % d ? 0 : d * d == m ? 1 : 2;
	int *mem = malloc(((size_t)ndiv + 2 * (size_t)k) * sizeof *mem);
	if (!mem)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, __func__, "out of memory");
	struct dims_search s = {mem, 0, k, mem + ndiv, mem + ndiv + k, m};
	for (long long d = 1; d * d <= m; d++) /* ascending: the small ones, then the large */
		if (m % d == 0)
			mem[s.ndiv++] = (int)d;
	for (int j = s.ndiv - 1; j >= 0; j--)
		if ((long long)mem[j] * mem[j] != m)
			mem[s.ndiv++] = m / mem[j];
	dims_search(&s, 0, m, m);
	for (int i = 0, j = 0; i < ndims; i++)
		if (dims[i] == 0)
			dims[i] = s.best[j++];
	free(mem);
	return MPI_SUCCESS;
}

/* ---------------------------------------------------------------------
 * Cartesian communicators.
 */
int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
	(void)reorder; /* the grid's ranks keep their order */
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm_old, __func__, &c);
	if (rc)
		return rc;
	if (!comm_cart)
		return tcmpi__error(comm_old, MPI_ERR_ARG, __func__, "NULL comm_cart");
	int n, r = tcmpi__comm_rank(c);
	if ((rc = grid_check(comm_old, ndims, dims, periods, tcmpi__comm_size(c), &n, __func__)))
		return rc;
	return cart_make(c, comm_old, r < n ? 0 : MPI_UNDEFINED, r, ndims, dims, periods, comm_cart,
	                 __func__);
}

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, __func__, &c);
	if (rc)
		return rc;
	if (!newrank)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL newrank");
	int n, r = tcmpi__comm_rank(c);
	if ((rc = grid_check(comm, ndims, dims, periods, tcmpi__comm_size(c), &n, __func__)))
		return rc;
	*newrank = r < n ? r : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int *status)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, __func__, &c);
	if (rc)
		return rc;
	if (!status)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL status");
	*status = c->cart.on ? MPI_CART : c->graph ? c->graph->kind : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
	struct tcmpi__comm *c;
	int rc = cart_of(comm, __func__, &c);
	if (rc)
		return rc;
	if (!ndims)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL ndims");
	*ndims = c->cart.ndims;
	return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
	struct tcmpi__comm *c;
	int rc = cart_of(comm, __func__, &c);
	if (rc)
		return rc;
	const struct tcmpi__cart *k = &c->cart;
	if (maxdims < k->ndims)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__,
		                    "maxdims %d below the %d dimensions", maxdims, k->ndims);
	if (k->ndims > 0 && (!dims || !periods || !coords))
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL dims, periods or coords");
	for (int i = 0; i < k->ndims; i++) {
		dims[i] = k->dims[i];
		periods[i] = k->periods[i];
	}
	if (k->ndims > 0)
		coords_of(k, tcmpi__comm_rank(c), coords);
	return MPI_SUCCESS;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
	struct tcmpi__comm *c;
	int rc = cart_of(comm, __func__, &c);
	if (rc)
		return rc;
	const struct tcmpi__cart *k = &c->cart;
	int p = tcmpi__comm_size(c);
	if (rank < 0 || rank >= p)
		return tcmpi__error(comm, MPI_ERR_RANK, __func__, "rank %d out of range 0..%d",
		                    rank, p - 1);
	if (maxdims < k->ndims)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__,
		                    "maxdims %d below the %d dimensions", maxdims, k->ndims);
	if (k->ndims > 0 && !coords)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL coords");
	if (k->ndims > 0)
		coords_of(k, rank, coords);
	return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
	struct tcmpi__comm *c;
	int rc = cart_of(comm, __func__, &c);
	if (rc)
		return rc;
	const struct tcmpi__cart *k = &c->cart;
	if (!rank || (k->ndims > 0 && !coords))
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL coords or rank");
	long long r = 0;
	for (int i = 0; i < k->ndims; i++) {
		long long x = coords[i], d = k->dims[i];
		if (k->periods[i])
			x = ((x % d) + d) % d;
		else if (x < 0 || x >= d)
			return tcmpi__error(comm, MPI_ERR_ARG, __func__,
			                    "coords[%d] = %lld out of range 0..%lld of a non-periodic "
			                    "dimension",
			                    i, x, d - 1);
		r = r * d + x;
	}
	*rank = (int)r;
	return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
	struct tcmpi__comm *c;
	int rc = cart_of(comm, __func__, &c);
	if (rc)
		return rc;
	const struct tcmpi__cart *k = &c->cart;
	if (direction < 0 || direction >= k->ndims)
		return tcmpi__error(comm, MPI_ERR_DIMS, __func__, "direction %d out of range 0..%d",
		                    direction, k->ndims - 1);
	if (!rank_source || !rank_dest)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL rank_source or rank_dest");
	int me = tcmpi__comm_rank(c), coords[TCMPI_MAX_DIMS] = {0};
	coords_of(k, me, coords);
	long long d = k->dims[direction], x = coords[direction], stride = 1;
	for (int i = direction + 1; i < k->ndims; i++)
		stride *= k->dims[i];
	int *out[2] = {rank_dest, rank_source};
	for (int s = 0; s < 2; s++) {
		long long y = x + (s == 0 ? (long long)disp : -(long long)disp);
		if (k->periods[direction])
			y = ((y % d) + d) % d;
		*out[s] = y < 0 || y >= d ? MPI_PROC_NULL : (int)(me + (y - x) * stride);
	}
	return MPI_SUCCESS;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	struct tcmpi__comm *c;
	int rc = cart_of(comm, __func__, &c);
	if (rc)
		return rc;
	const struct tcmpi__cart *k = &c->cart;
	if (!newcomm || (k->ndims > 0 && !remain_dims))
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL remain_dims or newcomm");
	int me = tcmpi__comm_rank(c), coords[TCMPI_MAX_DIMS] = {0};
	int kd = 0, dims[TCMPI_MAX_DIMS], periods[TCMPI_MAX_DIMS], colour = 0;
	coords_of(k, me, coords);
	for (int i = 0; i < k->ndims; i++) {
		if (remain_dims[i]) {
			dims[kd] = k->dims[i];
			periods[kd++] = k->periods[i];
		} else {
			colour = colour * k->dims[i] + coords[i];
		}
	}
	/* Ordered by the rank here: row-major over the kept dimensions. */
	return cart_make(c, comm, colour, me, kd, dims, periods, newcomm, __func__);
}

/* ---------------------------------------------------------------------
 * MPI_Comm_split_type: every rank shares one memory, so MPI_COMM_TYPE_SHARED
 * is one part ordered by key.  No hardware resource divides the ranks
 * further: the guided and unguided types give MPI_COMM_NULL (MPI: when no
 * resource of the kind asked, or no strict subset, exists).
 */
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, __func__, &c);
	if (rc)
		return rc;
	if ((rc = tcmpi__info_arg(comm, info, __func__)))
		return rc;
	if (!newcomm)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL newcomm");
	int colour;
	switch (split_type) {
	case MPI_COMM_TYPE_SHARED:
		colour = 0;
		break;
	case MPI_UNDEFINED:
	case MPI_COMM_TYPE_HW_GUIDED:
	case MPI_COMM_TYPE_HW_UNGUIDED:
	case MPI_COMM_TYPE_RESOURCE_GUIDED:
		colour = MPI_UNDEFINED;
		break;
	default:
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "unknown split_type %d", split_type);
	}
	return MPI_Comm_split(comm, colour, key, newcomm);
}
