/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/bcast.c - closed forms of the one-to-all broadcast and of its
 * dual, the all-to-one reduce.
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/bcast name it.
 */
#include "cost_impl.h"

/* sum_k msg(hops[k], m) (+ m t_c each when comb), k < count. */
static double routed_sum(const struct tc_model *md, long count, double m, const int *hops, int comb)
{
	double t = 0.0;
	for (long k = 0; k < count; k++) {
		int h = hops != NULL ? hops[k] : 1;
		if (h < 1)
			return NAN;
		t += tc_cost_p2p(md, h, m) + (comb ? m * md->tc_ns : 0.0);
	}
	return t;
}

double tc_cost_bcast_linear(const struct tc_model *md, int p, double m, const int *hops)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return routed_sum(md, p - 1, m, hops, 0);
}

double tc_cost_bcast_ring(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return (double)(p - 1) * tc__cost_nb(md, m);
}

/* (p-2+r)(msg(1, m/r) + comb (m/r) t_c). */
static double pipe_cost(const struct tc_model *md, int p, double m, long r, int comb)
{
	if (p == 1)
		return 0.0;
	double b = m / (double)r;
	return (double)(p - 2 + r) * (tc__cost_nb(md, b) + (comb ? b * md->tc_ns : 0.0));
}

double tc_cost_bcast_ring_pipelined(const struct tc_model *md, int p, double m, long r)
{
	if (!tc__cost_ok_args(md, p, m) || r < 1)
		return NAN;
	return pipe_cost(md, p, m, r, 0);
}

/* Real minimiser of pipe_cost over r > 0. */
static double pipe_r_real(const struct tc_model *md, int p, double m, int comb)
{
	double num = m * (double)(p - 2) * (md->tw_ns + (comb ? md->tc_ns : 0.0));
	double s = tc__cost_start(md);
	if (p <= 2 || !(num > 0.0))
		return 0.0;
	if (!(s > 0.0))
		return INFINITY;
	return sqrt(num / s);
}

static long pipe_r_opt(const struct tc_model *md, int p, double m, int comb)
{
	if (p <= 2 || m < 2.0)
		return 1;
	const double cap = 4611686018427387904.0; /* 2^62 */
	long rmax = (long)(m < cap ? floor(m) : cap);
	double x = pipe_r_real(md, p, m, comb);
	if (x <= 1.0)
		return 1;
	if (x >= (double)rmax)
		return rmax;
	long lo = (long)floor(x), hi = (long)ceil(x);
	lo = tc__cost_lmax(1, tc__cost_lmin(lo, rmax));
	hi = tc__cost_lmax(1, tc__cost_lmin(hi, rmax));
	return pipe_cost(md, p, m, lo, comb) <= pipe_cost(md, p, m, hi, comb) ? lo : hi;
}

double tc_cost_ring_r_opt_real(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return pipe_r_real(md, p, m, 0);
}

long tc_cost_ring_r_opt(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return -1;
	return pipe_r_opt(md, p, m, 0);
}

double tc_cost_bcast_ring_pipelined_opt(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	if (p <= 2)
		return pipe_cost(md, p, m, 1, 0);
	double a = sqrt((double)(p - 2) * tc__cost_start(md));
	double b = sqrt(m * md->tw_ns);
	return (a + b) * (a + b);
}

double tc_cost_bcast_ring_rd(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return tc__cost_rd_line(md, tc_cost_log2_ceil(p), p - 1, m);
}

/*
 * Links crossed along the worst chain of blocking transfers when holder h
 * broadcasts to [lo, hi] by halving (see tc_cost_bcast_chain_rd()).  The
 * holder keeps a half of floor(n/2) nodes that contains it and sends to the
 * nearest node of the other half; when no such half exists (n odd, h in the
 * middle) it keeps the upper ceil(n/2) nodes and sends to its lower neighbour.
 * Both halves go on after the transfer.  Depth ceil(log2 n), O(n) calls.
 */
static long halving_hops(long lo, long hi, long h)
{
	long n = hi - lo + 1;
	if (n <= 1)
		return 0;
	long k = n / 2;
	long own, nh; /* own: the first node of the holder's half; nh: new holder */
	long own_n = k;
	if (h - lo < k) {
		own = lo; /* [lo, lo+k-1] keeps h; the other half starts at lo+k */
		nh = lo + k;
	} else if (hi - h < k) {
		own = hi - k + 1; /* [hi-k+1, hi] keeps h; the other half ends at hi-k */
		nh = hi - k;
	} else {
		own = lo + k; /* n odd, h in the middle: h keeps [lo+k, hi] */
		own_n = n - k;
		nh = lo + k - 1;
	}
	long oth = own == lo ? lo + own_n : lo;
	long d = h > nh ? h - nh : nh - h;
	return d + tc__cost_lmax(halving_hops(own, own + own_n - 1, h),
	                         halving_hops(oth, oth + (n - own_n) - 1, nh));
}

/* One chain (1-D mesh) of z nodes from coordinate a. */
static double chain_rd(const struct tc_model *md, long z, long a, double m)
{
	if (tc__cost_is_ct(md))
		return tc__cost_rd_line(md, tc_cost_log2_ceil(z), tc__cost_lmax(a, z - 1 - a), m);
	return tc__cost_rd_line(md, 0, halving_hops(0, z - 1, a), m);
}

double tc_cost_bcast_chain_rd(const struct tc_model *md, int p, int root, double m)
{
	if (!tc__cost_ok_args(md, p, m) || root < 0 || root >= p)
		return NAN;
	return chain_rd(md, p, root, m);
}

/* Sum over the dimensions of ring_rd (torus) or chain_rd (mesh); the number
 * of combine steps is added with weight comb_bytes t_c. */
static double mesh_rd(const struct tc_model *md, enum tc_topo_kind kind, int ndims, const int *dims,
                      int root, double m, int comb)
{
	if (md == NULL || !tc__cost_ok_m(m) || (kind != TC_TOPO_MESH && kind != TC_TOPO_TORUS))
		return NAN;
	long n = tc__cost_dims_nodes(ndims, dims);
	if (n < 0)
		return NAN;
	if (kind == TC_TOPO_MESH && (root < 0 || root >= n))
		return NAN;
	int coord[TC_TOPO_MAX_DIMS];
	long r = kind == TC_TOPO_MESH ? root : 0;
	for (int i = ndims - 1; i >= 0; i--) {
		coord[i] = (int)(r % dims[i]);
		r /= dims[i];
	}
	double t = 0.0;
	for (int i = 0; i < ndims; i++) {
		long z = dims[i];
		long rounds = tc_cost_log2_ceil(z);
		if (kind == TC_TOPO_TORUS)
			t += tc__cost_rd_line(md, rounds, z - 1, m);
		else
			t += chain_rd(md, z, coord[i], m);
		if (comb)
			t += (double)rounds * m * md->tc_ns;
	}
	return t;
}

double tc_cost_bcast_mesh(const struct tc_model *md, enum tc_topo_kind kind, int ndims,
                          const int *dims, int root, double m)
{
	return mesh_rd(md, kind, ndims, dims, root, m, 0);
}

long tc_cost_bcast_mesh_steps(int ndims, const int *dims)
{
	if (tc__cost_dims_nodes(ndims, dims) < 0)
		return -1;
	long s = 0;
	for (int i = 0; i < ndims; i++)
		s += tc_cost_log2_ceil(dims[i]);
	return s;
}

double tc_cost_bcast_hypercube(const struct tc_model *md, int p, double m)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	return (double)d * tc__cost_nb(md, m);
}

double tc_cost_bcast_binomial(const struct tc_model *md, int p, double m, const int *hops)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return routed_sum(md, tc_cost_log2_ceil(p), m, hops, 0);
}

long tc_cost_bcast_binomial_steps(int p)
{
	return p < 1 ? -1 : tc_cost_log2_ceil(p);
}

static long dot_exc(enum tc_topo_kind kind, int ndims, const int *dims, int root)
{
	switch (kind) {
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
	case TC_TOPO_RING:
	case TC_TOPO_CHAIN:
	case TC_TOPO_HYPERCUBE:
		return tc_cost_eccentricity(kind, ndims, dims, root);
	default:
		return -1;
	}
}

double tc_cost_bcast_dot_allport(const struct tc_model *md, enum tc_topo_kind kind, int ndims,
                                 const int *dims, int root, double m)
{
	if (md == NULL || !tc__cost_ok_m(m) || root < 0)
		return NAN;
	long e = dot_exc(kind, ndims, dims, root);
	if (e < 0)
		return NAN;
	return (double)e * tc__cost_nb(md, m);
}

double tc_cost_reduce_linear(const struct tc_model *md, int p, double m, const int *hops)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return routed_sum(md, p - 1, m, hops, 1);
}

double tc_cost_reduce_ring(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return (double)(p - 1) * (tc__cost_nb(md, m) + m * md->tc_ns);
}

double tc_cost_reduce_ring_pipelined(const struct tc_model *md, int p, double m, long r)
{
	if (!tc__cost_ok_args(md, p, m) || r < 1)
		return NAN;
	return pipe_cost(md, p, m, r, 1);
}

long tc_cost_ring_r_opt_reduce(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return -1;
	return pipe_r_opt(md, p, m, 1);
}

double tc_cost_reduce_ring_rd(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return tc_cost_bcast_ring_rd(md, p, m) + tc_cost_log2_ceil(p) * m * md->tc_ns;
}

double tc_cost_reduce_chain_rd(const struct tc_model *md, int p, int root, double m)
{
	double t = tc_cost_bcast_chain_rd(md, p, root, m);
	if (isnan(t))
		return NAN;
	return t + tc_cost_log2_ceil(p) * m * md->tc_ns;
}

double tc_cost_reduce_mesh(const struct tc_model *md, enum tc_topo_kind kind, int ndims,
                           const int *dims, int root, double m)
{
	return mesh_rd(md, kind, ndims, dims, root, m, 1);
}

double tc_cost_reduce_hypercube(const struct tc_model *md, int p, double m)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	return (double)d * (tc__cost_nb(md, m) + m * md->tc_ns);
}

double tc_cost_reduce_binomial(const struct tc_model *md, int p, double m, const int *hops)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return routed_sum(md, tc_cost_log2_ceil(p), m, hops, 1);
}

double tc_cost_reduce_dot_allport(const struct tc_model *md, enum tc_topo_kind kind, int ndims,
                                  const int *dims, int root, double m)
{
	if (md == NULL || !tc__cost_ok_m(m) || root < 0)
		return NAN;
	long e = dot_exc(kind, ndims, dims, root);
	if (e < 0)
		return NAN;
	return (double)e * (tc__cost_nb(md, m) + m * md->tc_ns);
}

double tc_cost_bcast_shm(const struct tc_model *md, int p, double m)
{
	return tc_cost_direct_round(md, p, m);
}
