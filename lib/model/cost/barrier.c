/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/barrier.c - closed forms of the barriers.
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/barrier name it.
 */
#include "cost_impl.h"

long tc_cost_barrier_dissemination_steps(int p)
{
	return p < 1 ? -1 : tc_cost_log2_ceil(p);
}

double tc_cost_barrier_dissemination(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return (double)tc_cost_log2_ceil(p) * tc__cost_nb(md, m);
}

long tc_cost_barrier_allreduce_steps(int p)
{
	if (p < 1)
		return -1;
	return tc__cost_is_pow2(p) ? tc_cost_log2_ceil(p) : 2L * tc_cost_log2_ceil(p);
}

double tc_cost_barrier_allreduce(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	return tc__cost_is_pow2(p) ? tc_cost_allreduce_hypercube(md, p, m)
	                           : tc_cost_allreduce_reduce_bcast(md, p, m);
}

double tc_cost_barrier_linear(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	if (p == 1)
		return 0.0;
	if (md->ports == TC_PORTS_ALL)
		return 2.0 * tc_cost_p2p(md, 1, m);
	return tc__cost_gather_release(md, p, m);
}

double tc_cost_barrier_shm(const struct tc_model *md, int p)
{
	return tc_cost_direct_round(md, p, 0.0);
}

double tc_cost_barrier_shm_tree(const struct tc_model *md, int p, int fanin)
{
	return tc_cost_allreduce_shm_tree(md, p, 0.0, fanin);
}
