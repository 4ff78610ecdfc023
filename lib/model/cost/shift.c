/* SPDX-License-Identifier: MIT */
/*
 * lib/model/cost/shift.c - closed forms of the circular q-shift.
 *
 * Each function evaluates the formula documented above its prototype in
 * include/topocoll/cost.h; the algorithm files of lib/coll/shift name it.
 */
#include "cost_impl.h"

static int popcount_l(unsigned long x)
{
	int c = 0;
	while (x != 0) {
		x &= x - 1;
		c++;
	}
	return c;
}

double tc_cost_shift_ring(const struct tc_model *md, int p, long q, double m)
{
	if (!tc__cost_ok_args(md, p, m))
		return NAN;
	long s = tc__cost_mod_pos(q, p);
	return (double)tc__cost_lmin(s, p - s) * tc__cost_nb(md, m);
}

double tc_cost_shift_torus(const struct tc_model *md, int rows, int cols, double m)
{
	if (md == NULL || !tc__cost_ok_m(m) || rows < 1 || cols < 1)
		return NAN;
	return (double)(rows / 2 + cols / 2) * tc__cost_nb(md, m);
}

long tc_cost_shift_torus_steps(int rows, int cols, long q)
{
	if (rows < 1 || cols < 1)
		return -1;
	long p = (long)rows * cols;
	long s = tc__cost_mod_pos(q, p);
	long qr = s % cols, qc = s / cols;
	long comp = (qr != 0 && rows > 1) ? 1 : 0;
	return tc__cost_lmin(qr, cols - qr) + comp + tc__cost_lmin(qc, rows - qc);
}

double tc_cost_shift_torus_q(const struct tc_model *md, int rows, int cols, long q, double m)
{
	long s = tc_cost_shift_torus_steps(rows, cols, q);
	if (md == NULL || !tc__cost_ok_m(m) || s < 0)
		return NAN;
	return (double)s * tc__cost_nb(md, m);
}

double tc_cost_shift_hypercube_gray(const struct tc_model *md, int p, double m, int backward)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	long hops = backward ? d : 2L * d;
	long stages = backward ? (d + 1) / 2 : d;
	double unit = md->ts_ns + m * md->tw_ns;
	if (tc__cost_is_ct(md))
		return (double)stages * unit + (double)hops * md->th_ns;
	return (double)hops * unit;
}

/*
 * Minimum of sum_i w_i |e_i| over digit vectors e in {-1, 0, 1}^d with
 * sum_i e_i 2^i = q (mod 2^d), w_0 = w0 and w_i = w1 for i >= 1.  Dynamic
 * programming over the carry: at position i the value v = bit_i(q) + carry
 * takes a digit e with v - e even and passes carry (v - e) / 2.
 */
static double gray_signed_min(int d, unsigned long q, double w0, double w1)
{
	double best[2] = {0.0, INFINITY}; /* indexed by incoming carry */
	for (int i = 0; i < d; i++) {
		double w = i == 0 ? w0 : w1;
		double next[2] = {INFINITY, INFINITY};
		for (int c = 0; c < 2; c++) {
			if (isinf(best[c]))
				continue;
			int v = (int)((q >> i) & 1UL) + c;
			for (int e = -1; e <= 1; e++) {
				if (((v - e) & 1) != 0)
					continue;
				int nc = (v - e) / 2;
				double t = best[c] + (e != 0 ? w : 0.0);
				if (t < next[nc])
					next[nc] = t;
			}
		}
		best[0] = next[0];
		best[1] = next[1];
	}
	return best[0] < best[1] ? best[0] : best[1];
}

long tc_cost_shift_hypercube_gray_hops(int p, long q, int backward)
{
	int d = tc__cost_log2_exact(p);
	if (d < 0)
		return -1;
	unsigned long s = (unsigned long)tc__cost_mod_pos(q, p);
	if (backward)
		return (long)gray_signed_min(d, s, 1.0, 2.0);
	return (long)((s & 1UL) + 2UL * (unsigned long)popcount_l(s >> 1));
}

double tc_cost_shift_hypercube_gray_q(const struct tc_model *md, int p, long q, double m, int backward)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	unsigned long s = (unsigned long)tc__cost_mod_pos(q, p);
	double w0 = tc_cost_p2p(md, 1, m), w1 = tc_cost_p2p(md, 2, m);
	if (backward)
		return gray_signed_min(d, s, w0, w1);
	return (double)(s & 1UL) * w0 + (double)popcount_l(s >> 1) * w1;
}

int tc_cost_gamma(long q)
{
	if (q == 0)
		return -1;
	unsigned long u = q < 0 ? 0UL - (unsigned long)q : (unsigned long)q;
	int j = 0;
	while ((u & 1UL) == 0) {
		u >>= 1;
		j++;
	}
	return j;
}

double tc_cost_shift_hypercube_ct(const struct tc_model *md, int p, long q, double m)
{
	int d = tc__cost_log2_exact(p);
	if (!tc__cost_ok_args(md, p, m) || d < 0)
		return NAN;
	long s = tc__cost_mod_pos(q, p);
	if (s == 0)
		return 0.0;
	return tc_cost_p2p(md, d - tc_cost_gamma(s), m);
}
