/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/scatter.c - closed forms of the scatter and its dual, the gather.
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/scatter name it.
 */
#include "cost_impl.h"

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
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	if (d == 0)
		return 0.0;
	long steps = (p - 1 + d - 1) / d;
	return (double)steps * tc__cost_nb(md, m);
}

double tc_cost_scatter_tree_allport_comb(const struct tc_model *md, int p, double m, const long *path_blocks)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	if (d == 0)
		return 0.0;
	if (path_blocks == NULL)
		return NAN;
	/* A node of depth h has its subtree once its h ancestors' messages
	 * (one start-up each) have passed, their sizes summing to S_h blocks. */
	double t = 0.0;
	for (int h = 1; h <= d; h++) {
		double th = (double)h * tc__cost_start(md) + (double)path_blocks[h - 1] * m * md->tw_ns;
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

double tc_cost_gather_tree_allport_comb(const struct tc_model *md, int p, double m, const long *path_blocks)
{
	return tc_cost_scatter_tree_allport_comb(md, p, m, path_blocks);
}

double tc_cost_scatter_shm(const struct tc_model *md, int p, double m)
{
	return tc_cost_direct_round(md, p, m);
}

double tc_cost_gather_shm(const struct tc_model *md, int p, double m)
{
	return tc_cost_scatter_shm(md, p, m);
}
