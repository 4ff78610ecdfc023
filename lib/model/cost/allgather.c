/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/allgather.c - closed forms of the all-to-all broadcast (allgather).
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/allgather name it.
 */
#include "cost_impl.h"

double tc_cost_allgather_ring(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return (double)(p - 1) * tc__cost_nb(md, m);
}

long tc_cost_allgather_chain_steps(int p, enum tc_duplex duplex)
{
	if (p < 1)
		return -1;
	return duplex == TC_DUPLEX_HALF ? 2L * (p - 1) : (long)(p - 1);
}

double tc_cost_allgather_chain(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return (double)tc_cost_allgather_chain_steps(p, md->duplex) * tc__cost_nb(md, m);
}

double tc_cost_allgather_mesh(const struct tc_model *md, int ndims, const int *dims, double m)
{
	long n = tc__cost_dims_nodes(ndims, dims);
	if (md == NULL || !tc__cost_ok_m(m) || n < 0)
		return NAN;
	/* sum_i (z_i - 1) start + t_w m (p - 1): the block sizes telescope. */
	long steps = tc__cost_dims_steps(ndims, dims);
	return (double)steps * tc__cost_start(md) + md->tw_ns * m * (double)(n - 1);
}

double tc_cost_allgather_hypercube(const struct tc_model *md, int p, double m)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	/* sum_{i=1}^{d} msg(1, 2^{i-1} m) */
	return (double)d * tc__cost_start(md) + md->tw_ns * m * (double)(p - 1);
}

double tc_cost_allgather_linear(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	if (p == 1)
		return 0.0;
	return tc_cost_p2p(md, 1, m) + (p - 2) * (md->ts_ns + m * md->tw_ns) +
	       tc_cost_p2p(md, 1, p * m) + (p - 2) * (md->ts_ns + p * m * md->tw_ns);
}

double tc_cost_allgather_shm(const struct tc_model *md, int p, double m)
{
	return tc_cost_direct_round(md, p, m);
}
