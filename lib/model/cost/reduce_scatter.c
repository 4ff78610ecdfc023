/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/reduce_scatter.c - closed forms of the all-to-all reduction
 * (reduce_scatter).
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/reduce_scatter name it.
 */
#include "cost_impl.h"

double tc_cost_reduce_scatter_ring(const struct tc_model *md, int p, double m)
{
	double t = tc_cost_allgather_ring(md, p, m);
	return isnan(t) ? NAN : t + m * (double)(p - 1) * md->tc_ns;
}

double tc_cost_reduce_scatter_mesh(const struct tc_model *md, int ndims, const int *dims, double m)
{
	double t = tc_cost_allgather_mesh(md, ndims, dims, m);
	if (isnan(t))
		return NAN;
	return t + m * (double)(tc__cost_dims_nodes(ndims, dims) - 1) * md->tc_ns;
}

double tc_cost_reduce_scatter_hypercube(const struct tc_model *md, int p, double m)
{
	double t = tc_cost_allgather_hypercube(md, p, m);
	return isnan(t) ? NAN : t + m * (double)(p - 1) * md->tc_ns;
}

double tc_cost_reduce_scatter_direct(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return tc_cost_direct_round(md, p, m) + m * (p - 1) * md->tc_ns;
}

double tc_cost_reduce_scatter_shm(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m) || md->ports != TC_PORTS_ALL)
		return NAN;
	if (p == 1)
		return 0.0;
	return tc_cost_p2p(md, 1, m) + (p - 1) * m * md->tc_ns;
}
