/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost.c - closed-form costs of the catalogue algorithms.
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h (with the seed it comes from).  Pure functions: no
 * state, no allocation.
 *
 * Every neighbour message costs msg(1, b) = start(md) + b t_w, where
 * start(md) = t_s under store-and-forward and t_s + t_h under cut-through, so
 * the sums of neighbour messages below are written in closed form with
 * start(md); routed messages go through tc_cost_p2p().
 */
#include "topocoll/cost.h"

#include <math.h>

/* ---- helpers ------------------------------------------------------------ */

static int ok_m(double m)
{
	return m >= 0.0; /* false for NaN */
}

static int ok_args(const struct tc_model *md, long p, double m)
{
	return md != NULL && p >= 1 && ok_m(m);
}

static int is_ct(const struct tc_model *md)
{
	return md->switching == TC_SWITCH_CT;
}

/* Fixed part of one neighbour message. */
static double start(const struct tc_model *md)
{
	return md->ts_ns + (is_ct(md) ? md->th_ns : 0.0);
}

/* msg(1, b). */
static double nb(const struct tc_model *md, double b)
{
	return start(md) + b * md->tw_ns;
}

static int is_pow2(long p)
{
	return p >= 1 && (p & (p - 1)) == 0;
}

/* log2 p for p a power of two, -1 otherwise. */
static int log2_exact(long p)
{
	if (!is_pow2(p))
		return -1;
	int d = 0;
	while ((1L << d) < p)
		d++;
	return d;
}

static long lmin(long a, long b)
{
	return a < b ? a : b;
}

static long lmax(long a, long b)
{
	return a > b ? a : b;
}

static long mod_pos(long q, long p)
{
	long r = q % p;
	return r < 0 ? r + p : r;
}

static int popcount_l(unsigned long x)
{
	int c = 0;
	while (x != 0) {
		x &= x - 1;
		c++;
	}
	return c;
}

/* Validates mesh/torus dims; returns the node count or -1. */
static long dims_nodes(int ndims, const int *dims)
{
	if (dims == NULL || ndims < 1 || ndims > TC_TOPO_MAX_DIMS)
		return -1;
	long n = 1;
	for (int i = 0; i < ndims; i++) {
		if (dims[i] < 1)
			return -1;
		n *= dims[i];
		if (n > TC_TOPO_MAX_NODES)
			return -1;
	}
	return n;
}

/* ---- building blocks ---------------------------------------------------- */

double tc_cost_p2p(const struct tc_model *md, long hops, double m)
{
	if (md == NULL || !ok_m(m))
		return NAN;
	if (hops <= 0)
		return 0.0;
	if (is_ct(md))
		return md->ts_ns + m * md->tw_ns + (double)hops * md->th_ns;
	return (double)hops * (md->ts_ns + m * md->tw_ns);
}

int tc_cost_log2_ceil(long x)
{
	if (x < 1)
		return -1;
	int k = 0;
	while (k < 62 && (1L << k) < x)
		k++;
	return k;
}

/* ---- broadcast ------------------------------------------------------------ */

/* sum_k msg(hops[k], m) (+ m t_c each when comb), k < count. */
static double routed_sum(const struct tc_model *md, long count, double m, const int *hops,
                         int comb)
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
	if (!ok_args(md, p, m))
		return NAN;
	return routed_sum(md, p - 1, m, hops, 0);
}

double tc_cost_bcast_ring(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	return (double)(p - 1) * nb(md, m);
}

/* (p-2+r)(msg(1, m/r) + comb (m/r) t_c). */
static double pipe_cost(const struct tc_model *md, int p, double m, long r, int comb)
{
	if (p == 1)
		return 0.0;
	double b = m / (double)r;
	return (double)(p - 2 + r) * (nb(md, b) + (comb ? b * md->tc_ns : 0.0));
}

double tc_cost_bcast_ring_pipelined(const struct tc_model *md, int p, double m, long r)
{
	if (!ok_args(md, p, m) || r < 1)
		return NAN;
	return pipe_cost(md, p, m, r, 0);
}

/* Real minimiser of pipe_cost over r > 0. */
static double pipe_r_real(const struct tc_model *md, int p, double m, int comb)
{
	double num = m * (double)(p - 2) * (md->tw_ns + (comb ? md->tc_ns : 0.0));
	double s = start(md);
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
	lo = lmax(1, lmin(lo, rmax));
	hi = lmax(1, lmin(hi, rmax));
	return pipe_cost(md, p, m, lo, comb) <= pipe_cost(md, p, m, hi, comb) ? lo : hi;
}

double tc_cost_ring_r_opt_real(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	return pipe_r_real(md, p, m, 0);
}

long tc_cost_ring_r_opt(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return -1;
	return pipe_r_opt(md, p, m, 0);
}

double tc_cost_bcast_ring_pipelined_opt(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	if (p <= 2)
		return pipe_cost(md, p, m, 1, 0);
	double a = sqrt((double)(p - 2) * start(md));
	double b = sqrt(m * md->tw_ns);
	return (a + b) * (a + b);
}

/* Recursive doubling on a line whose worst chain of transfers has `hops`
 * links in `rounds` rounds (see tc_cost_bcast_ring_rd()). */
static double rd_line(const struct tc_model *md, long rounds, long hops, double m)
{
	if (hops <= 0)
		return 0.0;
	if (is_ct(md))
		return (double)rounds * (md->ts_ns + m * md->tw_ns) + (double)hops * md->th_ns;
	return (double)hops * (md->ts_ns + m * md->tw_ns);
}

double tc_cost_bcast_ring_rd(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	return rd_line(md, tc_cost_log2_ceil(p), p - 1, m);
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
	return d + lmax(halving_hops(own, own + own_n - 1, h),
	                halving_hops(oth, oth + (n - own_n) - 1, nh));
}

/* One chain (1-D mesh) of z nodes from coordinate a. */
static double chain_rd(const struct tc_model *md, long z, long a, double m)
{
	if (is_ct(md))
		return rd_line(md, tc_cost_log2_ceil(z), lmax(a, z - 1 - a), m);
	return rd_line(md, 0, halving_hops(0, z - 1, a), m);
}

double tc_cost_bcast_chain_rd(const struct tc_model *md, int p, int root, double m)
{
	if (!ok_args(md, p, m) || root < 0 || root >= p)
		return NAN;
	return chain_rd(md, p, root, m);
}

/* Sum over the dimensions of ring_rd (torus) or chain_rd (mesh); the number
 * of combine steps is added with weight comb_bytes t_c. */
static double mesh_rd(const struct tc_model *md, enum tc_topo_kind kind, int ndims,
                      const int *dims, int root, double m, int comb)
{
	if (md == NULL || !ok_m(m) || (kind != TC_TOPO_MESH && kind != TC_TOPO_TORUS))
		return NAN;
	long n = dims_nodes(ndims, dims);
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
			t += rd_line(md, rounds, z - 1, m);
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
	if (dims_nodes(ndims, dims) < 0)
		return -1;
	long s = 0;
	for (int i = 0; i < ndims; i++)
		s += tc_cost_log2_ceil(dims[i]);
	return s;
}

double tc_cost_bcast_hypercube(const struct tc_model *md, int p, double m)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	return (double)d * nb(md, m);
}

double tc_cost_bcast_binomial(const struct tc_model *md, int p, double m, const int *hops)
{
	if (!ok_args(md, p, m))
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
	if (md == NULL || !ok_m(m) || root < 0)
		return NAN;
	long e = dot_exc(kind, ndims, dims, root);
	if (e < 0)
		return NAN;
	return (double)e * nb(md, m);
}

/* ---- reduce --------------------------------------------------------------- */

double tc_cost_reduce_linear(const struct tc_model *md, int p, double m, const int *hops)
{
	if (!ok_args(md, p, m))
		return NAN;
	return routed_sum(md, p - 1, m, hops, 1);
}

double tc_cost_reduce_ring(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	return (double)(p - 1) * (nb(md, m) + m * md->tc_ns);
}

double tc_cost_reduce_ring_pipelined(const struct tc_model *md, int p, double m, long r)
{
	if (!ok_args(md, p, m) || r < 1)
		return NAN;
	return pipe_cost(md, p, m, r, 1);
}

long tc_cost_ring_r_opt_reduce(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return -1;
	return pipe_r_opt(md, p, m, 1);
}

double tc_cost_reduce_ring_rd(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
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
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	return (double)d * (nb(md, m) + m * md->tc_ns);
}

double tc_cost_reduce_binomial(const struct tc_model *md, int p, double m, const int *hops)
{
	if (!ok_args(md, p, m))
		return NAN;
	return routed_sum(md, tc_cost_log2_ceil(p), m, hops, 1);
}

double tc_cost_reduce_dot_allport(const struct tc_model *md, enum tc_topo_kind kind, int ndims,
                                  const int *dims, int root, double m)
{
	if (md == NULL || !ok_m(m) || root < 0)
		return NAN;
	long e = dot_exc(kind, ndims, dims, root);
	if (e < 0)
		return NAN;
	return (double)e * (nb(md, m) + m * md->tc_ns);
}

/* ---- allreduce ------------------------------------------------------------ */

double tc_cost_allreduce_reduce_bcast(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	double l = tc_cost_log2_ceil(p);
	return 2.0 * l * nb(md, m) + l * m * md->tc_ns;
}

double tc_cost_allreduce_hypercube(const struct tc_model *md, int p, double m)
{
	return tc_cost_reduce_hypercube(md, p, m);
}

double tc_cost_allreduce_ring(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	if (p == 1)
		return 0.0;
	double b = m / (double)p;
	return 2.0 * (double)(p - 1) * nb(md, b) + (double)(p - 1) * b * md->tc_ns;
}

double tc_cost_allreduce_mesh(const struct tc_model *md, int ndims, const int *dims, double m)
{
	long n = dims_nodes(ndims, dims);
	if (md == NULL || !ok_m(m) || n < 0)
		return NAN;
	double b = m / (double)n;
	return tc_cost_reduce_scatter_mesh(md, ndims, dims, b) +
	       tc_cost_allgather_mesh(md, ndims, dims, b);
}

/* ---- allgather ------------------------------------------------------------ */

double tc_cost_allgather_ring(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	return (double)(p - 1) * nb(md, m);
}

long tc_cost_allgather_chain_steps(int p, enum tc_duplex duplex)
{
	if (p < 1)
		return -1;
	return duplex == TC_DUPLEX_HALF ? 2L * (p - 1) : (long)(p - 1);
}

double tc_cost_allgather_chain(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	return (double)tc_cost_allgather_chain_steps(p, md->duplex) * nb(md, m);
}

double tc_cost_allgather_mesh(const struct tc_model *md, int ndims, const int *dims, double m)
{
	long n = dims_nodes(ndims, dims);
	if (md == NULL || !ok_m(m) || n < 0)
		return NAN;
	/* sum_i (z_i - 1) start + t_w m (p - 1): the block sizes telescope. */
	long steps = 0;
	for (int i = 0; i < ndims; i++)
		steps += dims[i] - 1;
	return (double)steps * start(md) + md->tw_ns * m * (double)(n - 1);
}

double tc_cost_allgather_hypercube(const struct tc_model *md, int p, double m)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	/* sum_{i=1}^{d} msg(1, 2^{i-1} m) */
	return (double)d * start(md) + md->tw_ns * m * (double)(p - 1);
}

/* ---- reduce_scatter ------------------------------------------------------- */

double tc_cost_reduce_scatter_ring(const struct tc_model *md, int p, double m)
{
	double t = tc_cost_allgather_ring(md, p, m);
	return isnan(t) ? NAN : t + m * (double)(p - 1) * md->tc_ns;
}

double tc_cost_reduce_scatter_mesh(const struct tc_model *md, int ndims, const int *dims,
                                   double m)
{
	double t = tc_cost_allgather_mesh(md, ndims, dims, m);
	if (isnan(t))
		return NAN;
	return t + m * (double)(dims_nodes(ndims, dims) - 1) * md->tc_ns;
}

double tc_cost_reduce_scatter_hypercube(const struct tc_model *md, int p, double m)
{
	double t = tc_cost_allgather_hypercube(md, p, m);
	return isnan(t) ? NAN : t + m * (double)(p - 1) * md->tc_ns;
}

/* ---- scan ----------------------------------------------------------------- */

double tc_cost_scan_hypercube(const struct tc_model *md, int p, double m)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	return (double)d * (nb(md, m) + 2.0 * m * md->tc_ns);
}

double tc_cost_scan_ring(const struct tc_model *md, int p, double m)
{
	return tc_cost_reduce_ring(md, p, m);
}

double tc_cost_exscan_hypercube(const struct tc_model *md, int p, double m)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	if (d == 0)
		return 0.0;
	return (double)d * nb(md, m) + (double)(2 * d - 1) * m * md->tc_ns;
}

double tc_cost_exscan_ring(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	if (p == 1)
		return 0.0;
	return (double)(p - 1) * nb(md, m) + (double)(p - 2) * m * md->tc_ns;
}

/* ---- scatter / gather ----------------------------------------------------- */

double tc_cost_scatter_linear(const struct tc_model *md, int p, double m, const int *hops)
{
	return tc_cost_bcast_linear(md, p, m, hops);
}

double tc_cost_scatter_ring(const struct tc_model *md, int p, double m)
{
	return tc_cost_bcast_ring(md, p, m);
}

double tc_cost_scatter_hypercube(const struct tc_model *md, int p, double m)
{
	/* sum_{i=1}^{d} msg(1, 2^{d-i} m): same sum as the allgather. */
	return tc_cost_allgather_hypercube(md, p, m);
}

double tc_cost_scatter_tree_allport(const struct tc_model *md, int p, double m)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	if (d == 0)
		return 0.0;
	long steps = (p - 1 + d - 1) / d;
	return (double)steps * nb(md, m);
}

double tc_cost_scatter_tree_allport_comb(const struct tc_model *md, int p, double m,
                                         const long *path_blocks)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	if (d == 0)
		return 0.0;
	if (path_blocks == NULL)
		return NAN;
	/* A node of depth h has its subtree once its h ancestors' messages
	 * (one start-up each) have passed, their sizes summing to S_h blocks. */
	double t = 0.0;
	for (int h = 1; h <= d; h++) {
		double th = (double)h * start(md) + (double)path_blocks[h - 1] * m * md->tw_ns;
		t = th > t ? th : t;
	}
	return t;
}

double tc_cost_gather_linear(const struct tc_model *md, int p, double m, const int *hops)
{
	return tc_cost_scatter_linear(md, p, m, hops);
}

double tc_cost_gather_ring(const struct tc_model *md, int p, double m)
{
	return tc_cost_scatter_ring(md, p, m);
}

double tc_cost_gather_hypercube(const struct tc_model *md, int p, double m)
{
	return tc_cost_scatter_hypercube(md, p, m);
}

double tc_cost_gather_tree_allport(const struct tc_model *md, int p, double m)
{
	return tc_cost_scatter_tree_allport(md, p, m);
}

double tc_cost_gather_tree_allport_comb(const struct tc_model *md, int p, double m,
                                        const long *path_blocks)
{
	return tc_cost_scatter_tree_allport_comb(md, p, m, path_blocks);
}

/* ---- alltoall ------------------------------------------------------------- */

double tc_cost_alltoall_ring(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	/* sum_{i=1}^{p-1} msg(1, m (p-i)) */
	return (double)(p - 1) * start(md) + md->tw_ns * m * (double)p * (double)(p - 1) / 2.0;
}

double tc_cost_alltoall_mesh(const struct tc_model *md, int ndims, const int *dims, double m)
{
	long n = dims_nodes(ndims, dims);
	if (md == NULL || !ok_m(m) || n < 0)
		return NAN;
	long steps = 0;
	for (int i = 0; i < ndims; i++)
		steps += dims[i] - 1;
	return (double)steps * (start(md) + md->tw_ns * m * (double)n / 2.0);
}

double tc_cost_alltoall_hypercube(const struct tc_model *md, int p, double m)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	return (double)d * nb(md, m * (double)p / 2.0);
}

double tc_cost_alltoall_ecube(const struct tc_model *md, int p, double m)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	double links = (double)d * (double)p / 2.0; /* sum_{i<p} popcount(i) */
	double unit = md->ts_ns + m * md->tw_ns;
	if (is_ct(md))
		return (double)(p - 1) * unit + links * md->th_ns;
	return links * unit;
}

double tc_cost_direct_round(const struct tc_model *md, int p, double m)
{
	if (p <= 1)
		return 0;
	if (md->ports == TC_PORTS_ALL)
		return tc_cost_p2p(md, 1, m);
	return (p - 2) * (md->ts_ns + m * md->tw_ns) + tc_cost_p2p(md, 1, m);
}

/* ---- shift ---------------------------------------------------------------- */

double tc_cost_shift_ring(const struct tc_model *md, int p, long q, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	long s = mod_pos(q, p);
	return (double)lmin(s, p - s) * nb(md, m);
}

double tc_cost_shift_torus(const struct tc_model *md, int rows, int cols, double m)
{
	if (md == NULL || !ok_m(m) || rows < 1 || cols < 1)
		return NAN;
	return (double)(rows / 2 + cols / 2) * nb(md, m);
}

long tc_cost_shift_torus_steps(int rows, int cols, long q)
{
	if (rows < 1 || cols < 1)
		return -1;
	long p = (long)rows * cols;
	long s = mod_pos(q, p);
	long qr = s % cols, qc = s / cols;
	long comp = (qr != 0 && rows > 1) ? 1 : 0;
	return lmin(qr, cols - qr) + comp + lmin(qc, rows - qc);
}

double tc_cost_shift_torus_q(const struct tc_model *md, int rows, int cols, long q, double m)
{
	long s = tc_cost_shift_torus_steps(rows, cols, q);
	if (md == NULL || !ok_m(m) || s < 0)
		return NAN;
	return (double)s * nb(md, m);
}

double tc_cost_shift_hypercube_gray(const struct tc_model *md, int p, double m, int backward)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	long hops = backward ? d : 2L * d;
	long stages = backward ? (d + 1) / 2 : d;
	double unit = md->ts_ns + m * md->tw_ns;
	if (is_ct(md))
		return (double)stages * unit + (double)hops * md->th_ns;
	return (double)hops * unit;
}

/*
 * Minimum of sum_i w_i |e_i| over digit vectors e in {-1, 0, 1}^d with
 * sum_i e_i 2^i = q (mod 2^d), w_0 = w0 and w_i = w1 for i >= 1.  Dynamic
 * programming over the carry: at position i the value v = bit_i(q) + carry
 * takes a digit e with v - e even and passes carry (v - e) / 2.
 */
static double gray_signed_min(int d, unsigned long q, double w0, double w1)
{
	double best[2] = {0.0, INFINITY}; /* indexed by incoming carry */
	for (int i = 0; i < d; i++) {
		double w = i == 0 ? w0 : w1;
		double next[2] = {INFINITY, INFINITY};
		for (int c = 0; c < 2; c++) {
			if (isinf(best[c]))
				continue;
			int v = (int)((q >> i) & 1UL) + c;
			for (int e = -1; e <= 1; e++) {
				if (((v - e) & 1) != 0)
					continue;
				int nc = (v - e) / 2;
				double t = best[c] + (e != 0 ? w : 0.0);
				if (t < next[nc])
					next[nc] = t;
			}
		}
		best[0] = next[0];
		best[1] = next[1];
	}
	return best[0] < best[1] ? best[0] : best[1];
}

long tc_cost_shift_hypercube_gray_hops(int p, long q, int backward)
{
	int d = log2_exact(p);
	if (d < 0)
		return -1;
	unsigned long s = (unsigned long)mod_pos(q, p);
	if (backward)
		return (long)gray_signed_min(d, s, 1.0, 2.0);
	return (long)((s & 1UL) + 2UL * (unsigned long)popcount_l(s >> 1));
}

double tc_cost_shift_hypercube_gray_q(const struct tc_model *md, int p, long q, double m,
                                      int backward)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	unsigned long s = (unsigned long)mod_pos(q, p);
	double w0 = tc_cost_p2p(md, 1, m), w1 = tc_cost_p2p(md, 2, m);
	if (backward)
		return gray_signed_min(d, s, w0, w1);
	return (double)(s & 1UL) * w0 + (double)popcount_l(s >> 1) * w1;
}

int tc_cost_gamma(long q)
{
	if (q == 0)
		return -1;
	unsigned long u = q < 0 ? 0UL - (unsigned long)q : (unsigned long)q;
	int j = 0;
	while ((u & 1UL) == 0) {
		u >>= 1;
		j++;
	}
	return j;
}

double tc_cost_shift_hypercube_ct(const struct tc_model *md, int p, long q, double m)
{
	int d = log2_exact(p);
	if (!ok_args(md, p, m) || d < 0)
		return NAN;
	long s = mod_pos(q, p);
	if (s == 0)
		return 0.0;
	return tc_cost_p2p(md, d - tc_cost_gamma(s), m);
}

/* ---- Gray-code permutations ----------------------------------------------- */

static int ok_perm(const struct tc_model *md, int n, double K)
{
	return md != NULL && n >= 0 && ok_m(K);
}

double tc_cost_gray2binary_gb1(const struct tc_model *md, int n, double K)
{
	if (!ok_perm(md, n, K))
		return NAN;
	return n <= 1 ? 0.0 : (double)(n - 1) * nb(md, K);
}

double tc_cost_gray2binary_gb2(const struct tc_model *md, int n, double K)
{
	if (!ok_perm(md, n, K))
		return NAN;
	return n <= 1 ? 0.0 : (double)(n + 1) * nb(md, K / 2.0);
}

double tc_cost_gray2binary_gb3(const struct tc_model *md, int n, double K)
{
	if (!ok_perm(md, n, K))
		return NAN;
	return n <= 1 ? 0.0 : (double)n * nb(md, K / 2.0);
}

double tc_cost_gray2binary_direct(const struct tc_model *md, int n, double K)
{
	if (!ok_perm(md, n, K))
		return NAN;
	return n <= 1 ? 0.0 : tc_cost_p2p(md, n - 1, K);
}

double tc_cost_gray2binary_bound(const struct tc_model *md, int n, double K)
{
	if (!ok_perm(md, n, K))
		return NAN;
	if (n <= 1)
		return 0.0;
	double a = (double)(n - 1) * md->ts_ns;
	double b = (double)(n - 1) * (K / 2.0) * md->tw_ns;
	return a > b ? a : b;
}

double tc_cost_binary2gray_gb1(const struct tc_model *md, int n, double K)
{
	return tc_cost_gray2binary_gb1(md, n, K);
}

double tc_cost_binary2gray_gb2(const struct tc_model *md, int n, double K)
{
	return tc_cost_gray2binary_gb2(md, n, K);
}

double tc_cost_binary2gray_gb3(const struct tc_model *md, int n, double K)
{
	return tc_cost_gray2binary_gb3(md, n, K);
}

double tc_cost_binary2gray_direct(const struct tc_model *md, int n, double K)
{
	return tc_cost_gray2binary_direct(md, n, K);
}

/* ---- multicast and barrier ------------------------------------------------ */

long tc_cost_multicast_steps(long nmembers)
{
	if (nmembers < 0)
		return -1;
	return tc_cost_log2_ceil(nmembers + 1);
}

double tc_cost_multicast(const struct tc_model *md, long nmembers, double m, long path_hops)
{
	long s = tc_cost_multicast_steps(nmembers);
	/* Under CT the chain's links may be fewer than its steps (Lemma 5's
	 * gamma = exc can be below rho: two neighbours of the source, 2 steps,
	 * 1 link; a sender is free after t_s + m t_w while its message
	 * travels); under SF every step costs at least one link's share. */
	if (md == NULL || !ok_m(m) || s < 0 || path_hops < (is_ct(md) ? (s > 0) : s))
		return NAN;
	if (s == 0)
		return 0.0;
	return rd_line(md, s, path_hops, m);
}

long tc_cost_barrier_dissemination_steps(int p)
{
	return p < 1 ? -1 : tc_cost_log2_ceil(p);
}

double tc_cost_barrier_dissemination(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	return (double)tc_cost_log2_ceil(p) * nb(md, m);
}

long tc_cost_barrier_allreduce_steps(int p)
{
	if (p < 1)
		return -1;
	return is_pow2(p) ? tc_cost_log2_ceil(p) : 2L * tc_cost_log2_ceil(p);
}

double tc_cost_barrier_allreduce(const struct tc_model *md, int p, double m)
{
	if (!ok_args(md, p, m))
		return NAN;
	return is_pow2(p) ? tc_cost_allreduce_hypercube(md, p, m)
	                  : tc_cost_allreduce_reduce_bcast(md, p, m);
}
