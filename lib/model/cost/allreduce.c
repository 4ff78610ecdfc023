/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/allreduce.c - closed forms of the allreduce.
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/allreduce name it.
 */
#include "cost_impl.h"

double tc_cost_allreduce_reduce_bcast(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	double l = tc_cost_log2_ceil(p);
	return 2.0 * l * tc__cost_nb(md, m) + l * m * md->tc_ns;
}

double tc_cost_allreduce_hypercube(const struct tc_model *md, int p, double m)
{
	return tc_cost_reduce_hypercube(md, p, m);
}

double tc_cost_allreduce_ring(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	if (p == 1)
		return 0.0;
	double b = m / (double)p;
	return 2.0 * (double)(p - 1) * tc__cost_nb(md, b) + (double)(p - 1) * b * md->tc_ns;
}

double tc_cost_allreduce_mesh(const struct tc_model *md, int ndims, const int *dims, double m)
{
	long n = tc__cost_dims_nodes(ndims, dims);
	if (md == NULL || !tc__cost_ok_m(m) || n < 0)
		return NAN;
	double b = m / (double)n;
	return tc_cost_reduce_scatter_mesh(md, ndims, dims, b) +
	       tc_cost_allgather_mesh(md, ndims, dims, b);
}

double tc_cost_allreduce_hypercube_fold(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	if (tc__cost_is_pow2(p))
		return tc_cost_allreduce_hypercube(md, p, m);
	const int k = tc_cost_log2_ceil(p) - 1; /* n = 2^k < p < 2^(k+1) */
	const int D = tc_cost_log2_ceil(p - (1L << k));
	double msg = tc_cost_p2p(md, 1, m);
	double c = m * md->tc_ns;
	double th = tc__cost_is_ct(md) ? md->th_ns : 0.0;
	double a = (double)(k + 1) * (msg + c);
	double b = (double)(k + 2) * msg + (double)(k + 1) * c - (double)(k - D) * th;
	return a > b ? a : b;
}

double tc_cost_allreduce_linear(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	if (p == 1)
		return 0.0;
	return tc__cost_gather_release(md, p, m) + (p - 1) * m * md->tc_ns;
}

double tc_cost_allreduce_shm(const struct tc_model *md, int p, double count, double esize)
{
	if (!tc__cost_ok_args(md, p, count) || !(esize >= 1) || md->ports != TC_PORTS_ALL)
		return NAN;
	if (p == 1)
		return 0.0;
	const double s = ceil(count / p) * esize;
	return 2 * tc_cost_p2p(md, 1, s) + (p - 1) * s * md->tc_ns;
}

double tc_cost_allreduce_shm_flag(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m) || md->ports != TC_PORTS_ALL)
		return NAN;
	if (p == 1)
		return 0.0;
	return tc_cost_p2p(md, 1, m) + (p - 1) * m * md->tc_ns;
}

double tc_cost_allreduce_shm_tree(const struct tc_model *md, int p, double m, int fanin)
{
	if (!tc__cost_ok_args(md, p, m) || md->ports != TC_PORTS_ALL || fanin < 2)
		return NAN;
	if (p == 1)
		return 0.0;
	const long q = ((long)p + fanin - 1) / fanin, g = ((long)p + q - 1) / q;
	return (q > 1 ? 3 : 2) * tc_cost_p2p(md, 1, m) + (double)(g - 1 + q - 1) * m * md->tc_ns;
}
