/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/common.c - the building blocks of the closed forms: one routed
 * message, ceil(log2 x).
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h.
 */
#include "cost_impl.h"

double tc_cost_p2p(const struct tc_model *md, long hops, double m)
{
	if (md == NULL || !tc__cost_ok_m(m))
		return NAN;
	if (hops <= 0)
		return 0.0;
	if (tc__cost_is_ct(md))
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
