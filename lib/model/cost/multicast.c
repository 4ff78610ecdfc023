/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/multicast.c - closed forms of the multicast.
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/multicast name it.
 */
#include "cost_impl.h"

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
	if (md == NULL || !tc__cost_ok_m(m) || s < 0 || path_hops < (tc__cost_is_ct(md) ? (s > 0) : s))
		return NAN;
	if (s == 0)
		return 0.0;
	return tc__cost_rd_line(md, s, path_hops, m);
}
