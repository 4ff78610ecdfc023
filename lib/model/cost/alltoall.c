/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/alltoall.c - closed forms of the all-to-all personalised
 * communication (alltoall) and of the direct round.
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/alltoall name it.
 */
#include "cost_impl.h"

double tc_cost_alltoall_ring(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	/* sum_{i=1}^{p-1} msg(1, m (p-i)) */
	return (double)(p - 1) * tc__cost_start(md) + md->tw_ns * m * (double)p * (double)(p - 1) / 2.0;
}

double tc_cost_alltoall_mesh(const struct tc_model *md, int ndims, const int *dims, double m)
{
	long n = tc__cost_dims_nodes(ndims, dims);
	if (md == NULL || !tc__cost_ok_m(m) || n < 0)
		return NAN;
	long steps = tc__cost_dims_steps(ndims, dims);
	return (double)steps * (tc__cost_start(md) + md->tw_ns * m * (double)n / 2.0);
}

double tc_cost_alltoall_hypercube(const struct tc_model *md, int p, double m)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	return (double)d * tc__cost_nb(md, m * (double)p / 2.0);
}

double tc_cost_alltoall_ecube(const struct tc_model *md, int p, double m)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	double links = (double)d * (double)p / 2.0; /* sum_{i<p} popcount(i) */
	double unit = md->ts_ns + m * md->tw_ns;
	if (tc__cost_is_ct(md))
		return (double)(p - 1) * unit + links * md->th_ns;
	return links * unit;
}

double tc_cost_direct_round(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	if (p == 1)
		return 0;
	if (md->ports == TC_PORTS_ALL)
		return tc_cost_p2p(md, 1, m);
	return (p - 2) * (md->ts_ns + m * md->tw_ns) + tc_cost_p2p(md, 1, m);
}

double tc_cost_alltoall_pairwise(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return (double)(p - 1) * tc__cost_nb(md, m);
}

double tc_cost_alltoall_shm(const struct tc_model *md, int p, double m)
{
	return tc_cost_direct_round(md, p, m);
}
