/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/scan.c - closed forms of the prefix sums (scan, exscan).
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/scan name it.
 */
#include "cost_impl.h"

double tc_cost_scan_hypercube(const struct tc_model *md, int p, double m)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	return (double)d * (tc__cost_nb(md, m) + 2.0 * m * md->tc_ns);
}

double tc_cost_scan_ring(const struct tc_model *md, int p, double m)
{
	return tc_cost_reduce_ring(md, p, m);
}

double tc_cost_exscan_hypercube(const struct tc_model *md, int p, double m)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	if (d == 0)
		return 0.0;
	return (double)d * tc__cost_nb(md, m) + (double)(2 * d - 1) * m * md->tc_ns;
}

double tc_cost_exscan_ring(const struct tc_model *md, int p, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	if (p == 1)
		return 0.0;
	return (double)(p - 1) * tc__cost_nb(md, m) + (double)(p - 2) * m * md->tc_ns;
}
