/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/gray.c - closed forms of the Gray-code permutations
 * (gray2binary, binary2gray).
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/gray name it.
 */
#include "cost_impl.h"

static int ok_perm(const struct tc_model *md, int n, double K)
{
	return md != NULL && n >= 0 && tc__cost_ok_m(K);
}

double tc_cost_gray2binary_gb1(const struct tc_model *md, int n, double K)
{
	if (!ok_perm(md, n, K))
		return NAN;
	return n <= 1 ? 0.0 : (double)(n - 1) * tc__cost_nb(md, K);
}

double tc_cost_gray2binary_gb2(const struct tc_model *md, int n, double K)
{
	if (!ok_perm(md, n, K))
		return NAN;
	return n <= 1 ? 0.0 : (double)(n + 1) * tc__cost_nb(md, K / 2.0);
}

double tc_cost_gray2binary_gb3(const struct tc_model *md, int n, double K)
{
	if (!ok_perm(md, n, K))
		return NAN;
	return n <= 1 ? 0.0 : (double)n * tc__cost_nb(md, K / 2.0);
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
