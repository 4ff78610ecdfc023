/* SPDX-License-Identifier: MIT */
/*
 * tests/test_cost.c - closed-form costs and lower bounds (lib/model).
 *
 * Every formula is checked against a value worked out by hand in the comment
 * next to it, against the sources' examples where they give numbers, and by
 * brute force where a formula claims an optimum (r_opt, the signed Gray
 * decomposition) or a path length (e-cube routes of a shift, Gray-code
 * distances).  The lower bounds are checked by hand for small cases, against
 * Lemma 1's table, against graph quantities computed by BFS, and never to
 * exceed the cost of an algorithm that runs on the same topology and model.
 *
 * Unless a test says otherwise: t_s = 100, t_w = 2, t_h = 5, t_c = 3 ns,
 * m = 1000 bytes, so one SF neighbour message costs 100 + 2000 = 2100 and one
 * CT neighbour message 2105.
 */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "topocoll/coll.h"
#include "topocoll/cost.h"
#include "topocoll/error.h"
#include "topocoll/model.h"
#include "topocoll/topo.h"

#define SF TC_SWITCH_SF
#define CT TC_SWITCH_CT

static struct tc_model mk(double ts, double tw, double th, double tc, enum tc_switching sw)
{
	struct tc_model md;
	tc_model_default(&md);
	md.ts_ns = ts;
	md.tw_ns = tw;
	md.th_ns = th;
	md.tc_ns = tc;
	md.switching = sw;
	return md;
}

/* The standard model of this file. */
static struct tc_model std_md(enum tc_switching sw)
{
	return mk(100, 2, 5, 3, sw);
}

#define ASSERT_NEAR(a, b)                                                              \
	cr_assert(fabs((double)(a) - (double)(b)) <= 1e-9 * (1.0 + fabs((double)(b))), \
	          "%s = %.17g, expected %.17g", #a, (double)(a), (double)(b))

/* bound <= cost, up to rounding. */
#define ASSERT_LE_COST(bound, cost)                                                          \
	cr_assert((bound) <= (cost) * (1.0 + 1e-12) + 1e-9, "bound %.17g > cost %.17g (%s)", \
	          (double)(bound), (double)(cost), #cost)

static int popc(unsigned long x)
{
	int c = 0;
	for (; x != 0; x &= x - 1)
		c++;
	return c;
}

/* ======================================================================== */
/* Model and building blocks                                                 */
/* ======================================================================== */

Test(model, defaults)
{
	struct tc_model md;
	tc_model_default(&md);
	cr_assert_eq(md.ts_ns, 1000.0);
	cr_assert_eq(md.tw_ns, 1.0);
	cr_assert_eq(md.th_ns, 0.0);
	cr_assert_eq(md.tc_ns, 0.0);
	cr_assert_eq(md.mu, 0);
	cr_assert_eq(md.ports, TC_PORTS_ONE);
	cr_assert_eq(md.duplex, TC_DUPLEX_FULL);
	cr_assert_eq(md.switching, TC_SWITCH_SF);
	cr_assert_neq(md.combining, 0);
	tc_model_default(NULL); /* no crash */
}

Test(cost, p2p)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* SF, 3 hops: 3 (100 + 1000*2) = 6300 */
	cr_assert_eq(tc_cost_p2p(&sf, 3, 1000), 6300.0);
	/* CT, 3 hops: 100 + 2000 + 3*5 = 2115 */
	cr_assert_eq(tc_cost_p2p(&ct, 3, 1000), 2115.0);
	cr_assert_eq(tc_cost_p2p(&sf, 0, 1000), 0.0);
	cr_assert_eq(tc_cost_p2p(&ct, 1, 0), 105.0);
	cr_assert(isnan(tc_cost_p2p(NULL, 1, 1)));
	cr_assert(isnan(tc_cost_p2p(&sf, 1, -1)));
	cr_assert(isnan(tc_cost_p2p(&sf, 1, NAN)));
}

Test(cost, log2_ceil_and_gamma)
{
	cr_assert_eq(tc_cost_log2_ceil(1), 0);
	cr_assert_eq(tc_cost_log2_ceil(2), 1);
	cr_assert_eq(tc_cost_log2_ceil(3), 2);
	cr_assert_eq(tc_cost_log2_ceil(8), 3);
	cr_assert_eq(tc_cost_log2_ceil(9), 4);
	cr_assert_eq(tc_cost_log2_ceil(0), -1);
	/* gamma(q): largest j with 2^j | q ([Gergel-shift]) */
	cr_assert_eq(tc_cost_gamma(12), 2);
	cr_assert_eq(tc_cost_gamma(5), 0);
	cr_assert_eq(tc_cost_gamma(-8), 3);
	cr_assert_eq(tc_cost_gamma(0), -1);
}

/* ======================================================================== */
/* Broadcast                                                                 */
/* ======================================================================== */

Test(bcast, hypercube)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* [Barnat-IB109]: d (t_s + m t_w); p = 8: 3 * 2100 = 6300 */
	cr_assert_eq(tc_cost_bcast_hypercube(&sf, 8, 1000), 6300.0);
	/* CT: 3 * (2100 + 5) = 6315 ([KKA-I]: (t_s + t_d + mu t_m) n) */
	cr_assert_eq(tc_cost_bcast_hypercube(&ct, 8, 1000), 6315.0);
	/* [Barnat-IB109]'s example, hypercube of dimension 5: 5 steps, 5 * 2100 */
	cr_assert_eq(tc_cost_bcast_hypercube(&sf, 32, 1000), 10500.0);
	cr_assert_eq(tc_cost_bcast_hypercube(&sf, 1, 1000), 0.0);
	cr_assert(isnan(tc_cost_bcast_hypercube(&sf, 6, 1000)));
	cr_assert(isnan(tc_cost_bcast_hypercube(&sf, 0, 1000)));
	cr_assert(isnan(tc_cost_bcast_hypercube(NULL, 8, 1000)));
}

Test(bcast, ring_and_linear)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* [Goubault-ring]: (p-1)(b + L t); p = 5: 4 * 2100 = 8400 */
	cr_assert_eq(tc_cost_bcast_ring(&sf, 5, 1000), 8400.0);
	cr_assert_eq(tc_cost_bcast_ring(&ct, 5, 1000), 4 * 2105.0);
	cr_assert_eq(tc_cost_bcast_ring(&sf, 1, 1000), 0.0);
	/* linear on the complete graph, p = 4: 3 * 2100 = 6300 */
	cr_assert_eq(tc_cost_bcast_linear(&sf, 4, 1000, NULL), 6300.0);
	/* routes of 1, 2, 1 links, SF: (1 + 2 + 1) * 2100 = 8400 */
	int hops[] = {1, 2, 1};
	cr_assert_eq(tc_cost_bcast_linear(&sf, 4, 1000, hops), 8400.0);
	/* CT: 3 * 2100 + (1 + 2 + 1) * 5 = 6320 */
	cr_assert_eq(tc_cost_bcast_linear(&ct, 4, 1000, hops), 6320.0);
	int bad[] = {1, 0, 1};
	cr_assert(isnan(tc_cost_bcast_linear(&sf, 4, 1000, bad)));
}

Test(bcast, ring_pipelined)
{
	struct tc_model sf = std_md(SF);
	/* [Goubault-ring]: (p-2+r)(b + (L/r) t); p = 6, r = 4: 8 * (100 + 250*2) = 4800 */
	cr_assert_eq(tc_cost_bcast_ring_pipelined(&sf, 6, 1000, 4), 4800.0);
	/* r = 1 is the plain ring: (p-1)(t_s + m t_w) */
	cr_assert_eq(tc_cost_bcast_ring_pipelined(&sf, 6, 1000, 1), tc_cost_bcast_ring(&sf, 6, 1000));
	/* p = 2, r = 2: 2 * (100 + 500*2) = 2200 */
	cr_assert_eq(tc_cost_bcast_ring_pipelined(&sf, 2, 1000, 2), 2200.0);
	cr_assert_eq(tc_cost_bcast_ring_pipelined(&sf, 1, 1000, 3), 0.0);
	cr_assert(isnan(tc_cost_bcast_ring_pipelined(&sf, 6, 1000, 0)));
}

Test(bcast, r_opt_by_hand)
{
	/* t_s = 50, t_w = 2, m = 1600, p = 6: r_opt = sqrt(1600*4*2/50) = sqrt(256) = 16;
	 * T(16) = (4 + 16)(50 + 100*2) = 20 * 250 = 5000;
	 * T_opt = (sqrt(4*50) + sqrt(1600*2))^2 = (sqrt(200) + sqrt(3200))^2
	 *       = (10 sqrt 2 + 40 sqrt 2)^2 = 2500 * 2 = 5000. */
	struct tc_model md = mk(50, 2, 0, 0, SF);
	ASSERT_NEAR(tc_cost_ring_r_opt_real(&md, 6, 1600), 16.0);
	cr_assert_eq(tc_cost_ring_r_opt(&md, 6, 1600), 16);
	cr_assert_eq(tc_cost_bcast_ring_pipelined(&md, 6, 1600, 16), 5000.0);
	ASSERT_NEAR(tc_cost_bcast_ring_pipelined_opt(&md, 6, 1600), 5000.0);
	/* CT with t_s = 40, t_h = 10: the packet start-up is 50 again, r_opt = 16 */
	struct tc_model ct = mk(40, 2, 10, 0, CT);
	cr_assert_eq(tc_cost_ring_r_opt(&ct, 6, 1600), 16);
	/* edge cases: p <= 2 or m < 2 -> 1; t_s = 0 -> as many packets as bytes */
	cr_assert_eq(tc_cost_ring_r_opt(&md, 2, 1600), 1);
	cr_assert_eq(tc_cost_ring_r_opt(&md, 6, 0), 1);
	cr_assert_eq(tc_cost_ring_r_opt(&md, 6, 1), 1);
	struct tc_model z = mk(0, 2, 0, 0, SF);
	cr_assert_eq(tc_cost_ring_r_opt(&z, 6, 100), 100);
	cr_assert(isinf(tc_cost_ring_r_opt_real(&z, 6, 100)));
	cr_assert_eq(tc_cost_ring_r_opt(NULL, 6, 100), -1);
	/* reduce: sqrt(m (p-2)(t_w + t_c)/t_s), t_w = 1, t_c = 1: same 16 */
	struct tc_model rd = mk(50, 1, 0, 1, SF);
	cr_assert_eq(tc_cost_ring_r_opt_reduce(&rd, 6, 1600), 16);
}

/* r_opt minimises the pipelined ring cost over the integers 1 .. floor(m). */
Test(bcast, r_opt_brute_force)
{
	const int ps[] = {3, 4, 5, 8, 17, 64};
	const double ms[] = {1, 2, 3, 10, 100, 1000, 4096};
	const double par[][4] = {{100, 2, 0, 0}, {1000, 1, 0, 0}, {1, 1, 0, 0},   {0, 1, 0, 0},
	                         {50, 0, 0, 0},  {40, 2, 10, 0},  {7, 0.3, 2, 5}, {100, 2, 5, 3}};
	for (size_t a = 0; a < sizeof ps / sizeof ps[0]; a++)
		for (size_t b = 0; b < sizeof ms / sizeof ms[0]; b++)
			for (size_t c = 0; c < sizeof par / sizeof par[0]; c++)
				for (int sw = 0; sw < 2; sw++) {
					struct tc_model md = mk(par[c][0], par[c][1], par[c][2],
					                        par[c][3], sw ? CT : SF);
					int p = ps[a];
					double m = ms[b];
					long rmax = (long)m;
					long r = tc_cost_ring_r_opt(&md, p, m);
					long rr = tc_cost_ring_r_opt_reduce(&md, p, m);
					cr_assert(r >= 1 && r <= rmax);
					cr_assert(rr >= 1 && rr <= rmax);
					double best = INFINITY, bestr = INFINITY;
					for (long k = 1; k <= rmax; k++) {
						double t = tc_cost_bcast_ring_pipelined(&md, p, m, k);
						double u = tc_cost_reduce_ring_pipelined(&md, p, m, k);
						best = t < best ? t : best;
						bestr = u < bestr ? u : bestr;
					}
					ASSERT_LE_COST(tc_cost_bcast_ring_pipelined(&md, p, m, r), best);
					ASSERT_LE_COST(tc_cost_reduce_ring_pipelined(&md, p, m, rr),
					               bestr);
					/* the real optimum is never above the integer one */
					ASSERT_LE_COST(tc_cost_bcast_ring_pipelined_opt(&md, p, m), best);
				}
}

/* Halving with the holder at one end, blocking sends: T(n) = c(floor(n/2)) +
 * max(T(floor(n/2)), T(ceil(n/2))) with c(d) = msg(d, m). */
static double rd_sim(const struct tc_model *md, long n, double m)
{
	if (n <= 1)
		return 0.0;
	double c = tc_cost_p2p(md, n / 2, m);
	double a = rd_sim(md, n / 2, m), b = rd_sim(md, n - n / 2, m);
	return c + (a > b ? a : b);
}

Test(bcast, ring_rd)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* [KKA-I] (a), z = 8: (t_s + mu t_m) 3 + t_d 7 = 6300 + 35 = 6335 */
	cr_assert_eq(tc_cost_bcast_ring_rd(&ct, 8, 1000), 6335.0);
	/* SF: 7 links, each a full message: 7 * 2100 = 14700 */
	cr_assert_eq(tc_cost_bcast_ring_rd(&sf, 8, 1000), 14700.0);
	/* p = 5: ceil(log2 5) = 3 phases, distances 2, 1, 1 (sum 4 = p - 1):
	 * 3 * 2100 + 4 * 5 = 6320 (the source's sum of ceil(5/2^i) would give 6) */
	cr_assert_eq(tc_cost_bcast_ring_rd(&ct, 5, 1000), 6320.0);
	cr_assert_eq(tc_cost_bcast_ring_rd(&ct, 1, 1000), 0.0);
	/* the closed form equals the simulated halving for every p */
	for (int p = 1; p <= 100; p++) {
		ASSERT_NEAR(tc_cost_bcast_ring_rd(&ct, p, 1000), rd_sim(&ct, p, 1000));
		ASSERT_NEAR(tc_cost_bcast_ring_rd(&sf, p, 1000), rd_sim(&sf, p, 1000));
		/* a chain rooted at an end is the same algorithm */
		ASSERT_NEAR(tc_cost_bcast_chain_rd(&ct, p, 0, 1000), tc_cost_bcast_ring_rd(&ct, p, 1000));
		ASSERT_NEAR(tc_cost_bcast_chain_rd(&sf, p, p - 1, 1000),
		            tc_cost_bcast_ring_rd(&sf, p, 1000));
	}
}

Test(bcast, chain_rd)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* [KKA-I] (c): p = 8, a = 2: 3 * 2100 + max(5, 2) * 5 = 6325 */
	cr_assert_eq(tc_cost_bcast_chain_rd(&ct, 8, 2, 1000), 6325.0);
	/* SF, p = 8, a = 2: 2 -> 4 (2 links), then [0..3]: 2 -> 1 (1), 2 -> 3 and
	 * 1 -> 0 (1); [4..7]: 4 -> 6 (2), 4 -> 5 and 6 -> 7 (1): worst chain
	 * 2 + 2 + 1 = 5 links: 5 * 2100 = 10500 */
	cr_assert_eq(tc_cost_bcast_chain_rd(&sf, 8, 2, 1000), 10500.0);
	/* SF, p = 8, a = 3: 3 -> 4 (1), [0..3]: 3 -> 1 (2), then 1 link: 4 links */
	cr_assert_eq(tc_cost_bcast_chain_rd(&sf, 8, 3, 1000), 4 * 2100.0);
	/* SF, p = 3, a = 1: the root sends twice, 2 * 2100 */
	cr_assert_eq(tc_cost_bcast_chain_rd(&sf, 3, 1, 1000), 4200.0);
	cr_assert(isnan(tc_cost_bcast_chain_rd(&sf, 3, 3, 1000)));
}

Test(bcast, mesh)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	int d44[] = {4, 4}, d444[] = {4, 4, 4};
	/* [Barnat-IB109]: 2 log sqrt(p) operations on a 4x4 mesh = 4; d log p^(1/d) on 4x4x4 = 6 */
	cr_assert_eq(tc_cost_bcast_mesh_steps(2, d44), 4);
	cr_assert_eq(tc_cost_bcast_mesh_steps(3, d444), 6);
	/* CT with t_h = 0: exactly the source's 4 operations of 2100 */
	struct tc_model ct0 = mk(100, 2, 0, 0, CT);
	cr_assert_eq(tc_cost_bcast_mesh(&ct0, TC_TOPO_TORUS, 2, d44, 0, 1000), 8400.0);
	/* torus 4x4, CT: per dimension 2*2100 + 3*5 = 4215; total 8430 */
	cr_assert_eq(tc_cost_bcast_mesh(&ct, TC_TOPO_TORUS, 2, d44, 0, 1000), 8430.0);
	/* torus 4x4, SF: 2 * 3 * 2100 = 12600 */
	cr_assert_eq(tc_cost_bcast_mesh(&sf, TC_TOPO_TORUS, 2, d44, 0, 1000), 12600.0);
	/* mesh 4x4 from rank 5 = (1, 1): CT per dimension 2*2100 + max(2,1)*5 = 4210 */
	cr_assert_eq(tc_cost_bcast_mesh(&ct, TC_TOPO_MESH, 2, d44, 5, 1000), 8420.0);
	/* SF per dimension: 1 -> 2 (1 link), then 1 link: 2 * 2100; total 8400 */
	cr_assert_eq(tc_cost_bcast_mesh(&sf, TC_TOPO_MESH, 2, d44, 5, 1000), 8400.0);
	cr_assert(isnan(tc_cost_bcast_mesh(&sf, TC_TOPO_MESH, 2, d44, 16, 1000)));
	cr_assert(isnan(tc_cost_bcast_mesh(&sf, TC_TOPO_RING, 2, d44, 0, 1000)));
	cr_assert_eq(tc_cost_bcast_mesh_steps(0, d44), -1);
}

Test(bcast, binomial_and_dot_allport)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* p = 5: 3 rounds; every route one link: 3 * 2100 = 6300 */
	cr_assert_eq(tc_cost_bcast_binomial_steps(5), 3);
	cr_assert_eq(tc_cost_bcast_binomial(&sf, 5, 1000, NULL), 6300.0);
	/* routes of 1, 2, 3 links: SF 6 * 2100 = 12600; CT 3 * 2100 + 6 * 5 = 6330 */
	int hops[] = {1, 2, 3};
	cr_assert_eq(tc_cost_bcast_binomial(&sf, 5, 1000, hops), 12600.0);
	cr_assert_eq(tc_cost_bcast_binomial(&ct, 5, 1000, hops), 6330.0);
	/* dot_allport: exc(s) (t_s + t_d + mu t_m) */
	int d3[] = {3}, d35[] = {3, 5}, d44[] = {4, 4};
	/* Q_3: exc 3, 3 * 2100 */
	cr_assert_eq(tc_cost_bcast_dot_allport(&sf, TC_TOPO_HYPERCUBE, 1, d3, 0, 1000), 6300.0);
	/* 3x5 mesh from its centre (1, 2) = rank 7: exc 1 + 2 = 3; CT 3 * 2105 */
	cr_assert_eq(tc_cost_bcast_dot_allport(&ct, TC_TOPO_MESH, 2, d35, 7, 1000), 6315.0);
	/* same mesh from the corner: exc 2 + 4 = 6 */
	cr_assert_eq(tc_cost_bcast_dot_allport(&sf, TC_TOPO_MESH, 2, d35, 0, 1000), 12600.0);
	/* torus 4x4: exc 2 + 2 = 4, 4 * 2100 */
	cr_assert_eq(tc_cost_bcast_dot_allport(&sf, TC_TOPO_TORUS, 2, d44, 9, 1000), 8400.0);
	cr_assert(isnan(tc_cost_bcast_dot_allport(&sf, TC_TOPO_STAR, 1, d3, 0, 1000)));
}

/* ======================================================================== */
/* Reduce, allreduce                                                         */
/* ======================================================================== */

Test(reduce, duals_plus_combine)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* a combine of m = 1000 bytes costs 1000 * 3 = 3000 */
	/* hypercube p = 8: 3 (2100 + 3000) = 15300 */
	cr_assert_eq(tc_cost_reduce_hypercube(&sf, 8, 1000), 15300.0);
	/* ring p = 5: 4 * 5100 = 20400 */
	cr_assert_eq(tc_cost_reduce_ring(&sf, 5, 1000), 20400.0);
	/* pipelined p = 6, r = 4: 8 (100 + 250*2 + 250*3) = 8 * 1350 = 10800 */
	cr_assert_eq(tc_cost_reduce_ring_pipelined(&sf, 6, 1000, 4), 10800.0);
	/* ring_rd p = 8, CT: 6335 + 3 * 3000 = 15335 */
	cr_assert_eq(tc_cost_reduce_ring_rd(&ct, 8, 1000), 15335.0);
	/* chain_rd p = 8, a = 2, SF: 10500 + 3 * 3000 = 19500 */
	cr_assert_eq(tc_cost_reduce_chain_rd(&sf, 8, 2, 1000), 19500.0);
	/* torus 4x4, SF: 12600 + 4 * 3000 = 24600 */
	int d44[] = {4, 4}, d3[] = {3};
	cr_assert_eq(tc_cost_reduce_mesh(&sf, TC_TOPO_TORUS, 2, d44, 0, 1000), 24600.0);
	/* binomial p = 5: 6300 + 3 * 3000 = 15300 */
	cr_assert_eq(tc_cost_reduce_binomial(&sf, 5, 1000, NULL), 15300.0);
	/* linear p = 4: 3 (2100 + 3000) = 15300 */
	cr_assert_eq(tc_cost_reduce_linear(&sf, 4, 1000, NULL), 15300.0);
	/* dot_allport Q_3: 3 (2100 + 3000) = 15300 */
	cr_assert_eq(tc_cost_reduce_dot_allport(&sf, TC_TOPO_HYPERCUBE, 1, d3, 0, 1000), 15300.0);
	/* with t_c = 0 a reduction costs exactly its broadcast */
	struct tc_model z = mk(100, 2, 5, 0, CT);
	for (int p = 1; p <= 33; p++) {
		cr_assert_eq(tc_cost_reduce_ring(&z, p, 1000), tc_cost_bcast_ring(&z, p, 1000));
		cr_assert_eq(tc_cost_reduce_ring_rd(&z, p, 1000), tc_cost_bcast_ring_rd(&z, p, 1000));
		cr_assert_eq(tc_cost_reduce_binomial(&z, p, 1000, NULL),
		             tc_cost_bcast_binomial(&z, p, 1000, NULL));
	}
}

Test(allreduce, formulas)
{
	struct tc_model sf = std_md(SF);
	/* hypercube p = 8: [Barnat-IB109] (t_s + t_w m) log p + combines: 3 (2100 + 3000) = 15300 */
	cr_assert_eq(tc_cost_allreduce_hypercube(&sf, 8, 1000), 15300.0);
	/* reduce_bcast p = 8: 2 * 3 * 2100 + 3 * 3000 = 21600 */
	cr_assert_eq(tc_cost_allreduce_reduce_bcast(&sf, 8, 1000), 21600.0);
	/* ring p = 4, blocks of 250: 2 * 3 (100 + 500) + 3 * 250 * 3 = 3600 + 2250 = 5850 */
	cr_assert_eq(tc_cost_allreduce_ring(&sf, 4, 1000), 5850.0);
	cr_assert_eq(tc_cost_allreduce_ring(&sf, 1, 1000), 0.0);
	/* "reduce_bcast: twice the broadcast" when t_c = 0 */
	struct tc_model z = mk(100, 2, 0, 0, SF);
	cr_assert_eq(tc_cost_allreduce_reduce_bcast(&z, 8, 1000),
	             2 * tc_cost_bcast_hypercube(&z, 8, 1000));
}

/* ======================================================================== */
/* Allgather, reduce_scatter, scan                                           */
/* ======================================================================== */

Test(allgather, formulas)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* ring p = 5: (t_s + t_w m)(p - 1) = 4 * 2100 = 8400 */
	cr_assert_eq(tc_cost_allgather_ring(&sf, 5, 1000), 8400.0);
	/* chain, full duplex: p - 1 phases = 8400; half duplex: 2 (p - 1) = 16800 */
	cr_assert_eq(tc_cost_allgather_chain_steps(5, TC_DUPLEX_FULL), 4);
	cr_assert_eq(tc_cost_allgather_chain_steps(5, TC_DUPLEX_HALF), 8);
	cr_assert_eq(tc_cost_allgather_chain(&sf, 5, 1000), 8400.0);
	struct tc_model half = sf;
	half.duplex = TC_DUPLEX_HALF;
	cr_assert_eq(tc_cost_allgather_chain(&half, 5, 1000), 16800.0);
	/* mesh 4x4: 2 t_s (sqrt p - 1) + t_w m (p - 1) = 600 + 2*1000*15 = 30600 */
	int d44[] = {4, 4};
	cr_assert_eq(tc_cost_allgather_mesh(&sf, 2, d44, 1000), 30600.0);
	/* ... and phase by phase: 3 (100 + 2000) + 3 (100 + 4 * 2000) = 6300 + 24300 */
	cr_assert_eq(tc_cost_allgather_mesh(&sf, 2, d44, 1000), 6300.0 + 24300.0);
	/* 2x3x4, phases of blocks m, 2m, 6m:
	 * 1 (100 + 2000) + 2 (100 + 4000) + 3 (100 + 12000) = 2100 + 8200 + 36300 = 46600
	 * = t_s (1 + 2 + 3) + t_w m (24 - 1) = 600 + 46000 */
	int d234[] = {2, 3, 4};
	cr_assert_eq(tc_cost_allgather_mesh(&sf, 3, d234, 1000), 46600.0);
	/* CT adds t_h per phase step: 46600 + 6 * 5 */
	cr_assert_eq(tc_cost_allgather_mesh(&ct, 3, d234, 1000), 46630.0);
	/* hypercube p = 8: t_s log p + t_w m (p - 1) = 300 + 14000 = 14300
	 * = (100 + 2000) + (100 + 4000) + (100 + 8000) */
	cr_assert_eq(tc_cost_allgather_hypercube(&sf, 8, 1000), 14300.0);
	cr_assert_eq(tc_cost_allgather_hypercube(&ct, 8, 1000), 14315.0);
}

Test(reduce_scatter, formulas)
{
	struct tc_model sf = std_md(SF);
	int d44[] = {4, 4};
	/* allgather + m (p - 1) t_c */
	/* ring p = 5: 8400 + 1000 * 4 * 3 = 20400 */
	cr_assert_eq(tc_cost_reduce_scatter_ring(&sf, 5, 1000), 20400.0);
	/* hypercube p = 8: 14300 + 1000 * 7 * 3 = 35300 */
	cr_assert_eq(tc_cost_reduce_scatter_hypercube(&sf, 8, 1000), 35300.0);
	/* mesh 4x4: 30600 + 1000 * 15 * 3 = 75600 */
	cr_assert_eq(tc_cost_reduce_scatter_mesh(&sf, 2, d44, 1000), 75600.0);
}

Test(scan, formulas)
{
	struct tc_model sf = std_md(SF);
	/* hypercube p = 8: 3 (2100 + 2 * 3000) = 24300 */
	cr_assert_eq(tc_cost_scan_hypercube(&sf, 8, 1000), 24300.0);
	/* ring p = 5: 4 (2100 + 3000) = 20400 */
	cr_assert_eq(tc_cost_scan_ring(&sf, 5, 1000), 20400.0);
	/* exscan hypercube p = 8: 3 * 2100 + 5 * 3000 = 21300 */
	cr_assert_eq(tc_cost_exscan_hypercube(&sf, 8, 1000), 21300.0);
	/* exscan ring p = 5: 4 * 2100 + 3 * 3000 = 17400 */
	cr_assert_eq(tc_cost_exscan_ring(&sf, 5, 1000), 17400.0);
	cr_assert_eq(tc_cost_exscan_ring(&sf, 1, 1000), 0.0);
	cr_assert_eq(tc_cost_exscan_hypercube(&sf, 1, 1000), 0.0);
	/* [Barnat-IB109]: with t_c = 0 the scan costs (t_s + t_w m) log p */
	struct tc_model z = mk(100, 2, 0, 0, SF);
	cr_assert_eq(tc_cost_scan_hypercube(&z, 16, 1000), 4 * 2100.0);
}

/* ======================================================================== */
/* Scatter, gather, alltoall                                                 */
/* ======================================================================== */

Test(scatter, formulas)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* hypercube p = 8: t_s log p + t_w m (p - 1) = 300 + 14000 = 14300;
	 * [KKA-I]'s 3-step OAS in Q_3: t_s n + mu t_m (2^n - 1), same */
	cr_assert_eq(tc_cost_scatter_hypercube(&sf, 8, 1000), 14300.0);
	cr_assert_eq(tc_cost_scatter_hypercube(&ct, 8, 1000), 14315.0);
	/* ring p = 5 ([Goubault-ring]): (p - 1)(b + L t) = 8400 */
	cr_assert_eq(tc_cost_scatter_ring(&sf, 5, 1000), 8400.0);
	/* linear, complete graph p = 4: 6300 */
	cr_assert_eq(tc_cost_scatter_linear(&sf, 4, 1000, NULL), 6300.0);
	/* tree_allport Q_6: ceil(63 / 6) = 11 steps, 11 * 2100 = 23100 */
	cr_assert_eq(tc_cost_scatter_tree_allport(&sf, 64, 1000), 23100.0);
	/* Q_4: ceil(15 / 4) = 4 steps = 8400 */
	cr_assert_eq(tc_cost_scatter_tree_allport(&sf, 16, 1000), 8400.0);
	cr_assert_eq(tc_cost_scatter_tree_allport(&sf, 1, 1000), 0.0);
	cr_assert(isnan(tc_cost_scatter_tree_allport(&sf, 12, 1000)));
	/* gather is the dual, same cost */
	for (int p = 1; p <= 64; p *= 2) {
		cr_assert_eq(tc_cost_gather_hypercube(&ct, p, 1000),
		             tc_cost_scatter_hypercube(&ct, p, 1000));
		cr_assert_eq(tc_cost_gather_tree_allport(&ct, p, 1000),
		             tc_cost_scatter_tree_allport(&ct, p, 1000));
		cr_assert_eq(tc_cost_gather_ring(&ct, p, 1000), tc_cost_scatter_ring(&ct, p, 1000));
		cr_assert_eq(tc_cost_gather_linear(&ct, p, 1000, NULL),
		             tc_cost_scatter_linear(&ct, p, 1000, NULL));
	}
}

Test(alltoall, formulas)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* ring p = 4: sum_{i=1}^{3} (100 + 2000 (4 - i)) = 300 + 12000 = 12300
	 * = (t_s + t_w m p/2)(p - 1) = 4100 * 3 */
	cr_assert_eq(tc_cost_alltoall_ring(&sf, 4, 1000), 12300.0);
	/* mesh 4x4: (2 t_s + t_w m p)(sqrt p - 1) = (200 + 32000) * 3 = 96600 */
	int d44[] = {4, 4};
	cr_assert_eq(tc_cost_alltoall_mesh(&sf, 2, d44, 1000), 96600.0);
	/* hypercube p = 8: (t_s + t_w m p/2) log p = (100 + 8000) * 3 = 24300 */
	cr_assert_eq(tc_cost_alltoall_hypercube(&sf, 8, 1000), 24300.0);
	/* ecube p = 8, CT: (t_s + t_w m)(p - 1) + t_h * 12 = 14700 + 60 = 14760
	 * (routes of popcount(i) links, 1+1+2+1+2+2+3 = 12) */
	cr_assert_eq(tc_cost_alltoall_ecube(&ct, 8, 1000), 14760.0);
	/* SF: 12 * 2100 = 25200 */
	cr_assert_eq(tc_cost_alltoall_ecube(&sf, 8, 1000), 25200.0);
	/* [Barnat-IB109]'s formula when t_h = 0 under CT */
	struct tc_model ct0 = mk(100, 2, 0, 0, CT);
	cr_assert_eq(tc_cost_alltoall_ecube(&ct0, 16, 1000), 15 * 2100.0);
	/* sum_{i<p} popcount(i) = d p / 2, by brute force */
	for (int d = 0; d <= 12; d++) {
		long s = 0;
		for (long i = 1; i < (1L << d); i++)
			s += popc((unsigned long)i);
		cr_assert_eq(s, (long)d * (1L << d) / 2);
	}
}

/* ======================================================================== */
/* Shift                                                                     */
/* ======================================================================== */

Test(shift, ring_and_torus)
{
	struct tc_model sf = std_md(SF);
	/* p = 8, q = 5: min(5, 3) = 3 steps: 6300 */
	cr_assert_eq(tc_cost_shift_ring(&sf, 8, 5, 1000), 6300.0);
	cr_assert_eq(tc_cost_shift_ring(&sf, 8, -3, 1000), 6300.0);
	cr_assert_eq(tc_cost_shift_ring(&sf, 8, 8, 1000), 0.0);
	/* torus 4x4: [Barnat-IB109]'s (t_s + t_w m) sqrt p = 4 * 2100 = 8400 */
	cr_assert_eq(tc_cost_shift_torus(&sf, 4, 4, 1000), 8400.0);
	/* [Barnat-IB109]'s example: 4x4 torus, q = 5: row shift 1, compensation 1, column shift 1 */
	cr_assert_eq(tc_cost_shift_torus_steps(4, 4, 5), 3);
	cr_assert_eq(tc_cost_shift_torus_q(&sf, 4, 4, 5, 1000), 6300.0);
	/* q = 10 = 2 rows + 2: 2 + 1 + 2 = 5 steps (one more than the source's sqrt p) */
	cr_assert_eq(tc_cost_shift_torus_steps(4, 4, 10), 5);
	/* q = 8 (whole rows): 0 + 0 + 2 */
	cr_assert_eq(tc_cost_shift_torus_steps(4, 4, 8), 2);
	cr_assert_eq(tc_cost_shift_torus_steps(0, 4, 1), -1);
	/* the decomposition lands every block at (i + q) mod p; worst case
	 * floor(cols/2) + 1 + floor(rows/2) */
	for (int rows = 1; rows <= 6; rows++)
		for (int cols = 1; cols <= 6; cols++) {
			int p = rows * cols;
			long worst = 0;
			for (int q = 0; q < p; q++) {
				int qr = q % cols, qc = q / cols;
				for (int i = 0; i < p; i++) {
					int r = i / cols, c = i % cols;
					int c2 = (c + qr) % cols;
					int r2 = (r + (c + qr >= cols ? 1 : 0) + qc) % rows;
					cr_assert_eq(r2 * cols + c2, (i + q) % p);
				}
				long s = tc_cost_shift_torus_steps(rows, cols, q);
				worst = s > worst ? s : worst;
			}
			cr_assert_leq(worst, cols / 2 + 1 + rows / 2);
		}
}

Test(shift, hypercube_gray)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* [Barnat-IB109]: (t_s + m t_w) 2 log p, p = 8: 6 * 2100 = 12600; backward: 3 * 2100 */
	cr_assert_eq(tc_cost_shift_hypercube_gray(&sf, 8, 1000, 0), 12600.0);
	cr_assert_eq(tc_cost_shift_hypercube_gray(&sf, 8, 1000, 1), 6300.0);
	/* CT: 3 stages of 2 links: 3 * 2100 + 6 * 5 = 6330; backward 2 stages, 3 links:
	 * 2 * 2100 + 3 * 5 = 4215 */
	cr_assert_eq(tc_cost_shift_hypercube_gray(&ct, 8, 1000, 0), 6330.0);
	cr_assert_eq(tc_cost_shift_hypercube_gray(&ct, 8, 1000, 1), 4215.0);
	/* [Gergel-shift]'s example q = 5 = 4 + 1: stage 4 (2 links), stage 1 (1 link) */
	cr_assert_eq(tc_cost_shift_hypercube_gray_hops(8, 5, 0), 3);
	cr_assert_eq(tc_cost_shift_hypercube_gray_q(&sf, 8, 5, 1000, 0), 6300.0);
	/* CT: msg(2) + msg(1) = 2110 + 2105 */
	cr_assert_eq(tc_cost_shift_hypercube_gray_q(&ct, 8, 5, 1000, 0), 4215.0);
	/* q = 7: forward 1 + 2 + 2 = 5 links; backward 8 - 1 = -1: 1 link */
	cr_assert_eq(tc_cost_shift_hypercube_gray_hops(8, 7, 0), 5);
	cr_assert_eq(tc_cost_shift_hypercube_gray_hops(8, 7, 1), 1);
	cr_assert_eq(tc_cost_shift_hypercube_gray_q(&sf, 8, 7, 1000, 1), 2100.0);
	cr_assert_eq(tc_cost_shift_hypercube_gray_hops(6, 1, 0), -1);
}

/* Gray-code ring: nodes 2^i apart on the ring are 2 links apart on the cube
 * (1 link for i = 0), [Barnat-IB109] and [Gergel-shift]. */
Test(shift, gray_distances_brute_force)
{
	for (int d = 1; d <= 10; d++) {
		unsigned p = 1u << d;
		for (int i = 0; i < d; i++)
			for (unsigned j = 0; j < p; j++) {
				int h = popc(tc_gray(j) ^ tc_gray((j + (1u << i)) & (p - 1)));
				cr_assert_eq(h, i == 0 ? 1 : 2);
			}
	}
}

/* The signed decomposition is the cheapest one, by enumeration; its worst
 * case is log p links ([Barnat-IB109]), the forward one's 2 log p - 1 ([Gergel-shift]). */
Test(shift, gray_signed_brute_force)
{
	struct tc_model ct = mk(100, 2, 7, 0, CT);
	for (int d = 1; d <= 7; d++) {
		int p = 1 << d;
		long best[128];
		double bestc[128];
		for (int q = 0; q < p; q++) {
			best[q] = 1L << 30;
			bestc[q] = INFINITY;
		}
		int total = 1;
		for (int i = 0; i < d; i++)
			total *= 3;
		for (int code = 0; code < total; code++) {
			int x = code;
			long val = 0, hops = 0;
			double cost = 0;
			for (int i = 0; i < d; i++, x /= 3) {
				int e = x % 3 - 1;
				val += e * (1L << i);
				if (e != 0) {
					hops += i == 0 ? 1 : 2;
					cost += tc_cost_p2p(&ct, i == 0 ? 1 : 2, 1000);
				}
			}
			int q = (int)(((val % p) + p) % p);
			best[q] = hops < best[q] ? hops : best[q];
			bestc[q] = cost < bestc[q] ? cost : bestc[q];
		}
		long wb = 0, wf = 0;
		for (int q = 0; q < p; q++) {
			long b = tc_cost_shift_hypercube_gray_hops(p, q, 1);
			long f = tc_cost_shift_hypercube_gray_hops(p, q, 0);
			cr_assert_eq(b, best[q]);
			ASSERT_NEAR(tc_cost_shift_hypercube_gray_q(&ct, p, q, 1000, 1), bestc[q]);
			cr_assert_eq(f, (long)(q & 1) + 2L * popc((unsigned long)q >> 1));
			wb = b > wb ? b : wb;
			wf = f > wf ? f : wf;
		}
		cr_assert_eq(wb, d);
		cr_assert_eq(wf, 2 * d - 1);
	}
}

Test(shift, hypercube_ct)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* [Gergel-shift] (3.21): t_s + t_w m + t_h (log p - gamma(q)); p = 16, q = 4:
	 * gamma = 2: 100 + 2000 + 5 * 2 = 2110 */
	cr_assert_eq(tc_cost_shift_hypercube_ct(&ct, 16, 4, 1000), 2110.0);
	/* q = 5: gamma = 0: 2100 + 4 * 5 = 2120 */
	cr_assert_eq(tc_cost_shift_hypercube_ct(&ct, 16, 5, 1000), 2120.0);
	/* SF, q = 4: 2 links, 2 * 2100 */
	cr_assert_eq(tc_cost_shift_hypercube_ct(&sf, 16, 4, 1000), 4200.0);
	cr_assert_eq(tc_cost_shift_hypercube_ct(&ct, 16, 16, 1000), 0.0);
	/* the longest e-cube route of the shift has log p - gamma(q) links */
	for (int d = 1; d <= 9; d++) {
		long p = 1L << d;
		for (long q = 1; q < p; q++) {
			int worst = 0;
			for (long i = 0; i < p; i++) {
				int h = popc((unsigned long)(i ^ ((i + q) & (p - 1))));
				worst = h > worst ? h : worst;
			}
			cr_assert_eq(worst, d - tc_cost_gamma(q));
		}
	}
}

/* ======================================================================== */
/* Gray-code permutations ([HJR-TR-20-92])                                  */
/* ======================================================================== */

Test(gray2binary, formulas)
{
	/* tau = 2800, t_c (transfer, = t_w) = 1, n = 6 (the 64-node iPSC/2),
	 * K = 1400: the predicted break-even "around K = 1.4 kbytes":
	 * GB1 = 5 (2800 + 1400) = 21000, GB3 = 6 (2800 + 700) = 21000 */
	struct tc_model md = mk(2800, 1, 0, 99, SF); /* t_c = 99 must not matter */
	cr_assert_eq(tc_cost_gray2binary_gb1(&md, 6, 1400), 21000.0);
	cr_assert_eq(tc_cost_gray2binary_gb3(&md, 6, 1400), 21000.0);
	/* GB2 = 7 (2800 + 700) = 24500, always worse than GB3 */
	cr_assert_eq(tc_cost_gray2binary_gb2(&md, 6, 1400), 24500.0);
	/* Lemma 3: max(5 * 2800, 5 * 700) = 14000 */
	cr_assert_eq(tc_cost_gray2binary_bound(&md, 6, 1400), 14000.0);
	/* direct, circuit switched (CT, t_h = 5): 2800 + 1400 + 5 * 5 = 4225 */
	struct tc_model ct = mk(2800, 1, 5, 0, CT);
	cr_assert_eq(tc_cost_gray2binary_direct(&ct, 6, 1400), 4225.0);
	/* SF: 5 (2800 + 1400) = 21000 */
	cr_assert_eq(tc_cost_gray2binary_direct(&md, 6, 1400), 21000.0);
	/* data transfer ratio GB3 / GB1 -> n / (2 (n - 1)) = 6/10 (tau = 0) */
	struct tc_model z = mk(0, 1, 0, 0, SF);
	ASSERT_NEAR(tc_cost_gray2binary_gb3(&z, 6, 65536) / tc_cost_gray2binary_gb1(&z, 6, 65536), 0.6);
	/* identity for n <= 1; binary2gray has the same costs */
	cr_assert_eq(tc_cost_gray2binary_gb2(&md, 1, 1400), 0.0);
	cr_assert(isnan(tc_cost_gray2binary_gb1(&md, -1, 1400)));
	for (int n = 0; n <= 10; n++) {
		cr_assert_eq(tc_cost_binary2gray_gb1(&md, n, 512), tc_cost_gray2binary_gb1(&md, n, 512));
		cr_assert_eq(tc_cost_binary2gray_gb2(&md, n, 512), tc_cost_gray2binary_gb2(&md, n, 512));
		cr_assert_eq(tc_cost_binary2gray_gb3(&md, n, 512), tc_cost_gray2binary_gb3(&md, n, 512));
		cr_assert_eq(tc_cost_binary2gray_direct(&ct, n, 512),
		             tc_cost_gray2binary_direct(&ct, n, 512));
		/* Lemma 3 bounds all three one-port algorithms */
		for (double K = 0; K <= 8192; K += 1024) {
			double lb = tc_cost_gray2binary_bound(&md, n, K);
			ASSERT_LE_COST(lb, tc_cost_gray2binary_gb1(&md, n, K));
			ASSERT_LE_COST(lb, tc_cost_gray2binary_gb2(&md, n, K));
			ASSERT_LE_COST(lb, tc_cost_gray2binary_gb3(&md, n, K));
		}
	}
}

/* [HJR-TR-20-92]'s Lemma 2 and the proof of Lemma 3, by brute force: block i moves
 * between nodes G(i) and i, Hamming distances S(n, j) = 2 C(n-1, j), total
 * (n - 1) 2^(n-1), largest n - 1. */
Test(gray2binary, distance_distribution)
{
	for (int n = 2; n <= 12; n++) {
		long count[16] = {0};
		long total = 0;
		int worst = 0;
		for (unsigned i = 0; i < (1u << n); i++) {
			int h = popc(i ^ tc_gray(i));
			count[h]++;
			total += h;
			worst = h > worst ? h : worst;
		}
		long c = 1; /* C(n-1, j) */
		for (int j = 0; j <= n - 1; j++) {
			cr_assert_eq(count[j], 2 * c);
			c = c * (n - 1 - j) / (j + 1);
		}
		cr_assert_eq(count[n], 0);
		cr_assert_eq(total, (long)(n - 1) << (n - 1));
		cr_assert_eq(worst, n - 1);
	}
}

/* ======================================================================== */
/* Multicast, barrier                                                        */
/* ======================================================================== */

Test(multicast, steps_and_cost)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* [KKA-I]'s 2-D mesh example: source [1,2] and 7 destinations, 3 steps */
	cr_assert_eq(tc_cost_multicast_steps(7), 3);
	cr_assert_eq(tc_cost_multicast_steps(0), 0);
	cr_assert_eq(tc_cost_multicast_steps(1), 1);
	cr_assert_eq(tc_cost_multicast_steps(8), 4);
	cr_assert_eq(tc_cost_multicast_steps(-1), -1);
	/* 7 members, 5 links on the critical chain: CT 3 * 2100 + 5 * 5 = 6325 */
	cr_assert_eq(tc_cost_multicast(&ct, 7, 1000, 5), 6325.0);
	/* SF: 5 * 2100 = 10500 */
	cr_assert_eq(tc_cost_multicast(&sf, 7, 1000, 5), 10500.0);
	cr_assert(isnan(tc_cost_multicast(&sf, 7, 1000, 2)));
	cr_assert_eq(tc_cost_multicast(&sf, 0, 1000, 0), 0.0);
}

Test(barrier, steps_and_cost)
{
	struct tc_model sf = std_md(SF);
	/* log p steps */
	cr_assert_eq(tc_cost_barrier_dissemination_steps(8), 3);
	cr_assert_eq(tc_cost_barrier_dissemination_steps(5), 3);
	cr_assert_eq(tc_cost_barrier_dissemination_steps(1), 0);
	cr_assert_eq(tc_cost_barrier_allreduce_steps(8), 3);
	cr_assert_eq(tc_cost_barrier_allreduce_steps(6), 6);
	/* empty tokens, p = 8: 3 * 100 = 300 */
	cr_assert_eq(tc_cost_barrier_dissemination(&sf, 8, 0), 300.0);
	cr_assert_eq(tc_cost_barrier_allreduce(&sf, 8, 0), 300.0);
	/* p = 6: reduce + bcast over 3 rounds each: 6 * 100 = 600 */
	cr_assert_eq(tc_cost_barrier_allreduce(&sf, 6, 0), 600.0);
}

/* ======================================================================== */
/* Lower bounds                                                              */
/* ======================================================================== */

/* A small explicit graph, to check tc_lb_graph_metrics() by BFS. */
#define GMAX 130
struct graph {
	int n;
	int deg[GMAX];
	int adj[GMAX][GMAX];
};

static void add_edge(struct graph *g, int u, int v)
{
	if (u == v)
		return;
	for (int k = 0; k < g->deg[u]; k++)
		if (g->adj[u][k] == v)
			return;
	g->adj[u][g->deg[u]++] = v;
	g->adj[v][g->deg[v]++] = u;
}

static void build(struct graph *g, enum tc_topo_kind kind, int ndims, const int *dims)
{
	g->n = 0;
	for (int i = 0; i < GMAX; i++)
		g->deg[i] = 0;
	switch (kind) {
	case TC_TOPO_COMPLETE:
		g->n = dims[0];
		for (int u = 0; u < g->n; u++)
			for (int v = u + 1; v < g->n; v++)
				add_edge(g, u, v);
		break;
	case TC_TOPO_STAR:
		g->n = dims[0];
		for (int v = 1; v < g->n; v++)
			add_edge(g, 0, v);
		break;
	case TC_TOPO_HYPERCUBE:
		g->n = 1 << dims[0];
		for (int u = 0; u < g->n; u++)
			for (int k = 0; k < dims[0]; k++)
				add_edge(g, u, u ^ (1 << k));
		break;
	default: { /* ring, chain, mesh, torus: row-major, last dimension fastest */
		int wrap = kind == TC_TOPO_RING || kind == TC_TOPO_TORUS;
		int n = 1;
		for (int i = 0; i < ndims; i++)
			n *= dims[i];
		g->n = n;
		for (int u = 0; u < n; u++) {
			int stride = 1;
			for (int i = ndims - 1; i >= 0; i--) {
				int c = (u / stride) % dims[i];
				if (c + 1 < dims[i])
					add_edge(g, u, u + stride);
				else if (wrap && dims[i] > 1)
					add_edge(g, u, u - c * stride);
				stride *= dims[i];
			}
		}
	}
	}
}

static void bfs(const struct graph *g, int s, int *dist)
{
	int queue[GMAX], head = 0, tail = 0;
	for (int v = 0; v < g->n; v++)
		dist[v] = -1;
	dist[s] = 0;
	queue[tail++] = s;
	while (head < tail) {
		int u = queue[head++];
		for (int k = 0; k < g->deg[u]; k++) {
			int v = g->adj[u][k];
			if (dist[v] < 0) {
				dist[v] = dist[u] + 1;
				queue[tail++] = v;
			}
		}
	}
}

static void check_metrics(enum tc_topo_kind kind, int ndims, const int *dims)
{
	struct graph *g = calloc(1, sizeof *g);
	cr_assert_not_null(g);
	build(g, kind, ndims, dims);
	int n = g->n, dist[GMAX];
	long long links = 0, dist_all = 0, min_sum = -1;
	int dmin = GMAX, dmax = 0;
	long diam = 0, radius = GMAX;
	long long sums[GMAX];
	long excs[GMAX];
	for (int u = 0; u < n; u++) {
		links += g->deg[u];
		dmin = g->deg[u] < dmin ? g->deg[u] : dmin;
		dmax = g->deg[u] > dmax ? g->deg[u] : dmax;
		bfs(g, u, dist);
		long e = 0;
		long long s = 0;
		for (int v = 0; v < n; v++) {
			e = dist[v] > e ? dist[v] : e;
			s += dist[v];
		}
		sums[u] = s;
		excs[u] = e;
		dist_all += s;
		diam = e > diam ? e : diam;
		radius = e < radius ? e : radius;
		min_sum = (min_sum < 0 || s < min_sum) ? s : min_sum;
	}
	links /= 2;
	struct tc_lb_graph m;
	cr_assert_eq(tc_lb_graph_metrics(kind, ndims, dims, -1, &m), 0);
	cr_assert_eq(m.nodes, n);
	cr_assert_eq(m.links, links, "kind %d links %lld vs %lld", (int)kind, m.links, links);
	cr_assert_eq(m.min_degree, dmin);
	cr_assert_eq(m.max_degree, dmax);
	cr_assert_eq(m.root_degree, dmax);
	cr_assert_eq(m.diameter, diam);
	cr_assert_eq(m.exc, radius);
	cr_assert_eq(m.dist_root, min_sum);
	cr_assert_eq(m.dist_all, dist_all);
	for (int r = 0; r < n; r++) {
		cr_assert_eq(tc_lb_graph_metrics(kind, ndims, dims, r, &m), 0);
		cr_assert_eq(m.root_degree, g->deg[r]);
		cr_assert_eq(m.exc, excs[r]);
		cr_assert_eq(m.dist_root, sums[r]);
		cr_assert_eq(tc_cost_eccentricity(kind, ndims, dims, r), excs[r]);
	}
	cr_assert_eq(tc_lb_graph_metrics(kind, ndims, dims, n, &m), TC_EROOT);
	free(g);
}

Test(bounds, graph_metrics_by_bfs)
{
	for (int p = 1; p <= 12; p++) {
		int d[] = {p};
		check_metrics(TC_TOPO_RING, 1, d);
		check_metrics(TC_TOPO_CHAIN, 1, d);
		check_metrics(TC_TOPO_COMPLETE, 1, d);
		check_metrics(TC_TOPO_STAR, 1, d);
	}
	for (int k = 0; k <= 6; k++) {
		int d[] = {k};
		check_metrics(TC_TOPO_HYPERCUBE, 1, d);
	}
	const int shapes[][3] = {{1, 1, 1}, {2, 2, 1}, {3, 4, 1}, {4, 4, 1}, {2, 3, 4},
	                         {5, 5, 1}, {1, 6, 1}, {2, 2, 2}, {3, 3, 3}, {2, 5, 1}};
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		int nd = shapes[s][2] == 1 ? 2 : 3;
		check_metrics(TC_TOPO_MESH, nd, shapes[s]);
		check_metrics(TC_TOPO_TORUS, nd, shapes[s]);
	}
}

Test(bounds, graph_metrics_by_hand)
{
	struct tc_lb_graph g;
	/* Q_3: 8 nodes, 12 links, degree 3, diameter 3, sum of distances from a
	 * node 3*1 + 3*2 + 1*3 = 12, all pairs 8 * 12 = 96 */
	int d3[] = {3};
	cr_assert_eq(tc_lb_graph_metrics(TC_TOPO_HYPERCUBE, 1, d3, 0, &g), 0);
	cr_assert_eq(g.nodes, 8);
	cr_assert_eq(g.links, 12);
	cr_assert_eq(g.diameter, 3);
	cr_assert_eq(g.dist_root, 12);
	cr_assert_eq(g.dist_all, 96);
	/* mesh 3x4 from the corner: links 2*4 + 3*3 = 17, exc 2 + 3 = 5,
	 * sum of distances 4*(0+1+2) + 3*(0+1+2+3) = 30,
	 * all pairs 16 * 8 + 9 * 20 = 308 (chain sums (z^3 - z)/3: 8 and 20) */
	int d34[] = {3, 4};
	cr_assert_eq(tc_lb_graph_metrics(TC_TOPO_MESH, 2, d34, 0, &g), 0);
	cr_assert_eq(g.links, 17);
	cr_assert_eq(g.exc, 5);
	cr_assert_eq(g.root_degree, 2);
	cr_assert_eq(g.max_degree, 4);
	cr_assert_eq(g.dist_root, 30);
	cr_assert_eq(g.dist_all, 308);
	/* ring of 2: a single link (topo.h) */
	int d2[] = {2};
	cr_assert_eq(tc_lb_graph_metrics(TC_TOPO_RING, 1, d2, 0, &g), 0);
	cr_assert_eq(g.links, 1);
	cr_assert_eq(g.max_degree, 1);
	/* errors */
	int d0[] = {0}, d21[] = {21}, tree[] = {7};
	cr_assert_eq(tc_lb_graph_metrics(TC_TOPO_RING, 1, d0, 0, &g), TC_ETOPO);
	cr_assert_eq(tc_lb_graph_metrics(TC_TOPO_HYPERCUBE, 1, d21, 0, &g), TC_ETOPO);
	cr_assert_eq(tc_lb_graph_metrics(TC_TOPO_MESH, 0, d34, 0, &g), TC_ETOPO);
	cr_assert_eq(tc_lb_graph_metrics(TC_TOPO_RING, 2, d34, 0, &g), TC_ETOPO);
	cr_assert_eq(tc_lb_graph_metrics(TC_TOPO_TREE, 1, tree, 0, &g), TC_ENOTSUP);
	cr_assert_eq(tc_lb_graph_metrics(TC_TOPO_RING, 1, NULL, 0, &g), TC_EINVAL);
	cr_assert_eq(tc_cost_eccentricity(TC_TOPO_TREE, 1, tree, 0), -1);
}

static struct tc_lower_bound lb(enum tc_lb_coll c, enum tc_topo_kind kind, int ndims,
                                const int *dims, int root, double m, struct tc_model md)
{
	struct tc_lower_bound b = {-1, -1, -1, -1.0};
	int rc = tc_lower_bound_root(c, kind, ndims, dims, root, m, &md, &b);
	cr_assert_eq(rc, 0, "tc_lower_bound_root: %d", rc);
	return b;
}

static struct tc_model allport(struct tc_model md)
{
	md.ports = TC_PORTS_ALL;
	return md;
}

static struct tc_model noncomb(struct tc_model md)
{
	md.combining = 0;
	return md;
}

/* Lemma 1: all-port full-duplex SF non-combining Q_n. */
Test(bounds, lemma1_table)
{
	struct tc_model md = noncomb(allport(std_md(SF)));
	for (int n = 1; n <= 10; n++) {
		int d[] = {n};
		long long N = 1LL << n;
		struct tc_lower_bound b;
		b = lb(TC_LB_OAB, TC_TOPO_HYPERCUBE, 1, d, -1, 1000, md);
		cr_assert_eq(b.steps, n);
		cr_assert_eq(b.work, N - 1);
		b = lb(TC_LB_AAB, TC_TOPO_HYPERCUBE, 1, d, -1, 1000, md);
		cr_assert_eq(b.steps, (N - 1 + n - 1) / n);
		cr_assert_eq(b.work, N * (N - 1));
		b = lb(TC_LB_OAS, TC_TOPO_HYPERCUBE, 1, d, -1, 1000, md);
		cr_assert_eq(b.steps, (N - 1 + n - 1) / n);
		cr_assert_eq(b.work, (long long)n << (n - 1));
		b = lb(TC_LB_AAS, TC_TOPO_HYPERCUBE, 1, d, -1, 1000, md);
		cr_assert_eq(b.steps, N / 2);
		cr_assert_eq(b.work, (long long)n << (2 * n - 1));
		/* time: rho (t_s + m t_w) under SF */
		cr_assert_eq(b.time_ns, (double)(N / 2) * 2100.0);
	}
	/* the numbers: Q_3: 3, 3, 3, 4; Q_6: 6, 11, 11, 32 */
	int d6[] = {6};
	cr_assert_eq(lb(TC_LB_AAB, TC_TOPO_HYPERCUBE, 1, d6, -1, 1, md).steps, 11);
	cr_assert_eq(lb(TC_LB_AAS, TC_TOPO_HYPERCUBE, 1, d6, -1, 1, md).steps, 32);
}

Test(bounds, small_cases_by_hand)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	struct tc_lower_bound b;
	int d3[] = {3}, r8[] = {8}, d34[] = {3, 4};

	/* OAB Q_3, 1-port SF: max(diam 3, log2 8 = 3) = 3 steps, 3 * 2100, work 7 */
	b = lb(TC_LB_OAB, TC_TOPO_HYPERCUBE, 1, d3, -1, 1000, sf);
	cr_assert_eq(b.steps, 3);
	cr_assert_eq(b.work, 7);
	cr_assert_eq(b.time_ns, 6300.0);
	/* OAB ring 8, 1-port SF: max(exc 4, 3) = 4 -> 8400 */
	b = lb(TC_LB_OAB, TC_TOPO_RING, 1, r8, -1, 1000, sf);
	cr_assert_eq(b.steps, 4);
	cr_assert_eq(b.time_ns, 8400.0);
	/* WH (Lemma 4): ceil(log2 8) = 3 steps, gamma = 4: 6300 + 4 * 5 = 6320 */
	b = lb(TC_LB_OAB, TC_TOPO_RING, 1, r8, -1, 1000, ct);
	cr_assert_eq(b.steps, 3);
	cr_assert_eq(b.path, 4);
	cr_assert_eq(b.time_ns, 6320.0);
	/* OAB mesh 3x4 from the corner, 1-port SF: max(exc 5, ceil(log2 12) = 4) = 5 */
	b = lb(TC_LB_OAB, TC_TOPO_MESH, 2, d34, 0, 1000, sf);
	cr_assert_eq(b.steps, 5);
	cr_assert_eq(b.work, 11);
	cr_assert_eq(b.time_ns, 10500.0);
	/* no root: radius 1 + 2 = 3, so max(3, 4) = 4 */
	cr_assert_eq(lb(TC_LB_OAB, TC_TOPO_MESH, 2, d34, -1, 1000, sf).steps, 4);

	/* all-port WH Q_n: ceil(n / log2(n + 1)); Q_7: 3 (Ho-Kao's time-optimal Q_7) */
	struct tc_model awh = allport(ct);
	int d7[] = {7};
	cr_assert_eq(lb(TC_LB_OAB, TC_TOPO_HYPERCUBE, 1, d7, -1, 1000, awh).steps, 3);
	/* the double tree's ceil(n/2) steps ([KKA-I]) respect it for n = 1, 3 .. 6;
	 * for n = 2 one all-port step informs at most 1 + 2 nodes of 4, so
	 * Lemma 4 gives 2 steps and the source's ceil(2/2) = 1 cannot hold */
	for (int n = 1; n <= 6; n++) {
		int dn[] = {n};
		long s = lb(TC_LB_OAB, TC_TOPO_HYPERCUBE, 1, dn, -1, 1, awh).steps;
		if (n == 2)
			cr_assert_eq(s, 2);
		else
			cr_assert_leq(s, (n + 1) / 2);
	}
	/* all-port WH 2-D torus K(5,5): log_5 25 = 2; K(25,25): log_5 625 = 4 */
	int k5[] = {5, 5}, k25[] = {25, 25};
	cr_assert_eq(lb(TC_LB_OAB, TC_TOPO_TORUS, 2, k5, -1, 1, awh).steps, 2);
	cr_assert_eq(lb(TC_LB_OAB, TC_TOPO_TORUS, 2, k25, -1, 1, awh).steps, 4);
	/* all-port SF star of 10 from a leaf: Delta = 9, log_10 10 = 1, exc 2 -> 2 */
	int s10[] = {10};
	cr_assert_eq(lb(TC_LB_OAB, TC_TOPO_STAR, 1, s10, 3, 1, allport(sf)).steps, 2);

	/* OAS ring 8, non-combining 1-port SF (Lemma 7): ceil(7/1) = 7 steps,
	 * 7 * 2100 = 14700, work 1+2+3+4+3+2+1 = 16 */
	struct tc_model nc = noncomb(sf);
	b = lb(TC_LB_OAS, TC_TOPO_RING, 1, r8, 0, 1000, nc);
	cr_assert_eq(b.steps, 7);
	cr_assert_eq(b.work, 16);
	cr_assert_eq(b.time_ns, 14700.0);
	/* WH: gamma = max(exc 4, 7) = 7: 7 * 2100 + 7 * 5 = 14735 */
	b = lb(TC_LB_OAS, TC_TOPO_RING, 1, r8, 0, 1000, noncomb(ct));
	cr_assert_eq(b.time_ns, 14735.0);
	/* OAS Q_3, combining 1-port SF (Lemma 8): 3 t_s + 7 m t_w = 300 + 14000 */
	b = lb(TC_LB_OAS, TC_TOPO_HYPERCUBE, 1, d3, 0, 1000, sf);
	cr_assert_eq(b.steps, 3);
	cr_assert_eq(b.time_ns, 14300.0);
	/* AAB ring 8, non-combining 1-port SF: max(7, 56/8, 4) = 7 -> 14700 */
	b = lb(TC_LB_AAB, TC_TOPO_RING, 1, r8, -1, 1000, nc);
	cr_assert_eq(b.steps, 7);
	cr_assert_eq(b.work, 56);
	cr_assert_eq(b.time_ns, 14700.0);
	/* AAB Q_3, combining 1-port SF: 3 t_s + max(7, 56/8) m t_w = 14300 */
	b = lb(TC_LB_AAB, TC_TOPO_HYPERCUBE, 1, d3, -1, 1000, sf);
	cr_assert_eq(b.time_ns, 14300.0);
	/* AAS Q_3, combining 1-port SF: 3 t_s + max(7, 96/8 = 12) m t_w = 300 + 24000 */
	b = lb(TC_LB_AAS, TC_TOPO_HYPERCUBE, 1, d3, -1, 1000, sf);
	cr_assert_eq(b.work, 96);
	cr_assert_eq(b.time_ns, 24300.0);
	/* AAS Q_3, non-combining 1-port WH: max(7, ceil(96/24) = 4) = 7 steps;
	 * 7 * 2100 + diam 3 * 5 = 14715 */
	b = lb(TC_LB_AAS, TC_TOPO_HYPERCUBE, 1, d3, -1, 1000, noncomb(ct));
	cr_assert_eq(b.steps, 7);
	cr_assert_eq(b.time_ns, 14715.0);
	/* AAS 4x4 mesh, combining 1-port SF: steps max(4, diam 6) = 6;
	 * eta = 2 * 16 * 20 = 640 over 16 hops per step = 40 blocks:
	 * 600 + 40 * 2000 = 80600 */
	int d44[] = {4, 4};
	b = lb(TC_LB_AAS, TC_TOPO_MESH, 2, d44, -1, 1000, sf);
	cr_assert_eq(b.steps, 6);
	cr_assert_eq(b.work, 640);
	cr_assert_eq(b.time_ns, 80600.0);

	/* Lemma 5, multicast: 7 destinations, 1 port: 3 steps; 3 ports: log_4 8 -> 2 */
	cr_assert_eq(tc_lower_bound_multicast(7, 1, 4, 1000, &ct, &b), 0);
	cr_assert_eq(b.steps, 3);
	cr_assert_eq(b.time_ns, 6300.0 + 20.0);
	cr_assert_eq(tc_lower_bound_multicast(7, 3, 4, 1000, &ct, &b), 0);
	cr_assert_eq(b.steps, 2);
	cr_assert_eq(tc_lower_bound_multicast(7, 0, 4, 1000, &ct, &b), TC_EINVAL);

	/* N = 1: nothing to do */
	int one[] = {1};
	b = lb(TC_LB_AAS, TC_TOPO_RING, 1, one, -1, 1000, sf);
	cr_assert_eq(b.steps, 0);
	cr_assert_eq(b.time_ns, 0.0);
}

Test(bounds, errors)
{
	struct tc_model sf = std_md(SF);
	struct tc_lower_bound b;
	int d[] = {7}, d34[] = {3, 4};
	cr_assert_eq(tc_lower_bound(TC_LB_OAB, TC_TOPO_TREE, 1, d, 1, &sf, &b), TC_ENOTSUP);
	cr_assert_eq(tc_lower_bound((enum tc_lb_coll)42, TC_TOPO_RING, 1, d, 1, &sf, &b), TC_ENOTSUP);
	cr_assert_eq(tc_lower_bound(TC_LB_OAB, TC_TOPO_RING, 1, d, 1, NULL, &b), TC_EINVAL);
	cr_assert_eq(tc_lower_bound(TC_LB_OAB, TC_TOPO_RING, 1, d, 1, &sf, NULL), TC_EINVAL);
	cr_assert_eq(tc_lower_bound(TC_LB_OAB, TC_TOPO_RING, 1, NULL, 1, &sf, &b), TC_EINVAL);
	cr_assert_eq(tc_lower_bound(TC_LB_OAB, TC_TOPO_RING, 1, d, -1, &sf, &b), TC_EINVAL);
	cr_assert_eq(tc_lower_bound(TC_LB_OAB, TC_TOPO_MESH, 9, d34, 1, &sf, &b), TC_ETOPO);
	cr_assert_eq(tc_lower_bound_root(TC_LB_OAS, TC_TOPO_MESH, 2, d34, 12, 1, &sf, &b), TC_EROOT);
	/* the root does not matter for AAB / AAS */
	cr_assert_eq(tc_lower_bound_root(TC_LB_AAS, TC_TOPO_MESH, 2, d34, 12, 1, &sf, &b), 0);
}

/* ---- lower bounds never exceed the cost of an algorithm ------------------ */

static const double lb_params[][4] = {
        {100, 2, 5, 3}, {1000, 1, 0, 0}, {1, 10, 50, 1}, {0, 1, 1, 0}, {10, 0, 3, 0},
};
static const double lb_sizes[] = {0, 1, 1000};

/* Every combination of lb_params x {SF, CT} x {non-combining, combining} x
 * {full, half duplex}, one port. */
#define NMODELS (sizeof lb_params / sizeof lb_params[0] * 8)
static void all_models(struct tc_model *out)
{
	size_t k = 0;
	for (size_t i = 0; i < sizeof lb_params / sizeof lb_params[0]; i++)
		for (int v = 0; v < 8; v++) {
			struct tc_model md = mk(lb_params[i][0], lb_params[i][1], lb_params[i][2],
			                        lb_params[i][3], (v & 1) ? CT : SF);
			md.combining = (v >> 1) & 1;
			md.duplex = (v & 4) ? TC_DUPLEX_HALF : TC_DUPLEX_FULL;
			out[k++] = md;
		}
}

static double lbt(enum tc_lb_coll c, enum tc_topo_kind kind, int ndims, const int *dims, int root,
                  double m, struct tc_model md)
{
	return lb(c, kind, ndims, dims, root, m, md).time_ns;
}

Test(bounds, below_hypercube_algorithms)
{
	struct tc_model models[NMODELS];
	all_models(models);
	for (size_t mo = 0; mo < NMODELS; mo++) {
		struct tc_model md = models[mo];
		struct tc_model ap = allport(md);
		for (size_t mi = 0; mi < sizeof lb_sizes / sizeof lb_sizes[0]; mi++) {
			double m = lb_sizes[mi];
			for (int n = 0; n <= 7; n++) {
				int d[] = {n}, p = 1 << n;
				double oab = lbt(TC_LB_OAB, TC_TOPO_HYPERCUBE, 1, d, 0, m, md);
				ASSERT_LE_COST(oab, tc_cost_bcast_hypercube(&md, p, m));
				ASSERT_LE_COST(oab, tc_cost_bcast_binomial(&md, p, m, NULL));
				ASSERT_LE_COST(oab, tc_cost_reduce_hypercube(&md, p, m));
				ASSERT_LE_COST(lbt(TC_LB_OAB, TC_TOPO_HYPERCUBE, 1, d, 0, m, ap),
				               tc_cost_bcast_dot_allport(&ap, TC_TOPO_HYPERCUBE, 1,
				                                         d, 0, m));
				/* all-port non-combining trees: Lemma 1 / 7 hold with equality under SF */
				ASSERT_LE_COST(lbt(TC_LB_OAS, TC_TOPO_HYPERCUBE, 1, d, 0, m, ap),
				               tc_cost_scatter_tree_allport(&ap, p, m));
				if (md.combining) {
					ASSERT_LE_COST(lbt(TC_LB_OAS, TC_TOPO_HYPERCUBE, 1, d, 0, m, md),
					               tc_cost_scatter_hypercube(&md, p, m));
				}
				/* the exchange algorithms need duplex links: under half duplex the
				 * bound is above their formula (Q_1: t_s + 2 m t_w > t_s + m t_w) */
				if (md.combining && md.duplex == TC_DUPLEX_FULL) {
					ASSERT_LE_COST(lbt(TC_LB_AAB, TC_TOPO_HYPERCUBE, 1, d, -1, m, md),
					               tc_cost_allgather_hypercube(&md, p, m));
					ASSERT_LE_COST(lbt(TC_LB_AAS, TC_TOPO_HYPERCUBE, 1, d, -1, m, md),
					               tc_cost_alltoall_hypercube(&md, p, m));
				}
				if (md.duplex == TC_DUPLEX_FULL) /* e-cube needs duplex links */
					ASSERT_LE_COST(lbt(TC_LB_AAS, TC_TOPO_HYPERCUBE, 1, d, -1, m, md),
					               tc_cost_alltoall_ecube(&md, p, m));
			}
		}
	}
}

Test(bounds, below_ring_chain_complete_algorithms)
{
	struct tc_model models[NMODELS];
	all_models(models);
	for (size_t mo = 0; mo < NMODELS; mo++) {
		struct tc_model md = models[mo];
		for (size_t mi = 0; mi < sizeof lb_sizes / sizeof lb_sizes[0]; mi++) {
			double m = lb_sizes[mi];
			for (int p = 1; p <= 40; p++) {
				int d[] = {p};
				double oab = lbt(TC_LB_OAB, TC_TOPO_RING, 1, d, 0, m, md);
				ASSERT_LE_COST(oab, tc_cost_bcast_ring(&md, p, m));
				ASSERT_LE_COST(oab, tc_cost_bcast_ring_rd(&md, p, m));
				ASSERT_LE_COST(oab, tc_cost_bcast_ring_pipelined(&md, p, m, 1));
				ASSERT_LE_COST(oab, tc_cost_reduce_ring(&md, p, m));
				ASSERT_LE_COST(lbt(TC_LB_OAS, TC_TOPO_RING, 1, d, 0, m, md),
				               tc_cost_scatter_ring(&md, p, m));
				ASSERT_LE_COST(lbt(TC_LB_OAS, TC_TOPO_CHAIN, 1, d, 0, m, md),
				               tc_cost_scatter_ring(&md, p, m));
				if (md.duplex == TC_DUPLEX_FULL) {
					ASSERT_LE_COST(lbt(TC_LB_AAB, TC_TOPO_RING, 1, d, -1, m, md),
					               tc_cost_allgather_ring(&md, p, m));
					if (md.combining)
						ASSERT_LE_COST(lbt(TC_LB_AAS, TC_TOPO_RING, 1, d,
						                   -1, m, md),
						               tc_cost_alltoall_ring(&md, p, m));
				}
				/* the source's chain allgather under either duplex */
				ASSERT_LE_COST(lbt(TC_LB_AAB, TC_TOPO_CHAIN, 1, d, -1, m, md),
				               tc_cost_allgather_chain(&md, p, m));
				for (int r = 0; r < p; r++)
					ASSERT_LE_COST(lbt(TC_LB_OAB, TC_TOPO_CHAIN, 1, d, r, m, md),
					               tc_cost_bcast_chain_rd(&md, p, r, m));
				/* complete graph */
				double oabk = lbt(TC_LB_OAB, TC_TOPO_COMPLETE, 1, d, 0, m, md);
				ASSERT_LE_COST(oabk, tc_cost_bcast_binomial(&md, p, m, NULL));
				ASSERT_LE_COST(oabk, tc_cost_bcast_linear(&md, p, m, NULL));
				ASSERT_LE_COST(lbt(TC_LB_OAS, TC_TOPO_COMPLETE, 1, d, 0, m, md),
				               tc_cost_scatter_linear(&md, p, m, NULL));
			}
		}
	}
}

Test(bounds, below_mesh_torus_algorithms)
{
	const int shapes[][3] = {{2, 2, 0}, {3, 4, 0}, {4, 4, 0}, {2, 3, 4},
	                         {5, 5, 0}, {1, 6, 0}, {8, 2, 0}, {3, 3, 3}};
	struct tc_model models[NMODELS];
	all_models(models);
	for (size_t mo = 0; mo < NMODELS; mo++) {
		struct tc_model md = models[mo];
		struct tc_model ap = allport(md);
		for (size_t mi = 0; mi < sizeof lb_sizes / sizeof lb_sizes[0]; mi++) {
			double m = lb_sizes[mi];
			for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
				int nd = shapes[s][2] == 0 ? 2 : 3;
				const int *dims = shapes[s];
				int n = dims[0] * dims[1] * (nd == 3 ? dims[2] : 1);
				for (int k = 0; k < 2; k++) {
					enum tc_topo_kind kind = k ? TC_TOPO_TORUS : TC_TOPO_MESH;
					for (int r = 0; r < n; r++) {
						ASSERT_LE_COST(lbt(TC_LB_OAB, kind, nd, dims, r, m, md),
						               tc_cost_bcast_mesh(&md, kind, nd,
						                                  dims, r, m));
						ASSERT_LE_COST(lbt(TC_LB_OAB, kind, nd, dims, r, m, ap),
						               tc_cost_bcast_dot_allport(&ap, kind, nd,
						                                         dims, r, m));
					}
					if (md.combining && md.duplex == TC_DUPLEX_FULL) {
						ASSERT_LE_COST(lbt(TC_LB_AAB, kind, nd, dims, -1, m, md),
						               tc_cost_allgather_mesh(&md, nd, dims, m));
						ASSERT_LE_COST(lbt(TC_LB_AAS, kind, nd, dims, -1, m, md),
						               tc_cost_alltoall_mesh(&md, nd, dims, m));
					}
				}
			}
		}
	}
}

/* More ports, combining, WH and a root never make a bound larger. */
Test(bounds, monotone_in_the_model)
{
	int d3[] = {3}, d44[] = {4, 4}, r9[] = {9}, d234[] = {2, 3, 4};
	struct {
		enum tc_topo_kind kind;
		int nd;
		const int *dims;
	} topos[] = {{TC_TOPO_HYPERCUBE, 1, d3}, {TC_TOPO_TORUS, 2, d44}, {TC_TOPO_MESH, 2, d44},
	             {TC_TOPO_RING, 1, r9},      {TC_TOPO_CHAIN, 1, r9},  {TC_TOPO_STAR, 1, r9},
	             {TC_TOPO_COMPLETE, 1, r9},  {TC_TOPO_MESH, 3, d234}};
	const enum tc_lb_coll cs[] = {TC_LB_OAB, TC_LB_AAB, TC_LB_OAS, TC_LB_AAS};
	for (size_t t = 0; t < sizeof topos / sizeof topos[0]; t++)
		for (size_t c = 0; c < 4; c++)
			for (int sw = 0; sw < 2; sw++) {
				struct tc_model one = noncomb(mk(100, 2, 0, 0, sw ? CT : SF));
				struct tc_lower_bound a = lb(cs[c], topos[t].kind, topos[t].nd,
				                             topos[t].dims, -1, 1000, one);
				struct tc_lower_bound b = lb(cs[c], topos[t].kind, topos[t].nd,
				                             topos[t].dims, -1, 1000, allport(one));
				cr_assert_leq(b.steps, a.steps);
				ASSERT_LE_COST(b.time_ns, a.time_ns);
				struct tc_model comb = one;
				comb.combining = 1;
				struct tc_lower_bound cb = lb(cs[c], topos[t].kind, topos[t].nd,
				                              topos[t].dims, -1, 1000, comb);
				ASSERT_LE_COST(cb.time_ns, a.time_ns);
				/* the root-less bound holds for every root */
				struct tc_lb_graph g;
				int rc = tc_lb_graph_metrics(topos[t].kind, topos[t].nd,
				                             topos[t].dims, -1, &g);
				cr_assert_eq(rc, 0);
				for (int r = 0; r < g.nodes; r++)
					ASSERT_LE_COST(a.time_ns, lbt(cs[c], topos[t].kind, topos[t].nd,
					                              topos[t].dims, r, 1000, one));
			}
}

/* allreduce mesh: the mesh reduce-scatter and allgather of m/p blocks,
 * 2 t_s sum_i (z_i - 1) + 2 t_w (m/p)(p - 1) + (m/p)(p - 1) t_c under SF,
 * each t_s one t_h more per message under CT (every message is one hop). */
Test(cost, allreduce_mesh_closed_form)
{
	static const int d35[] = {3, 5}, d44[] = {4, 4}, d234[] = {2, 3, 4}, d1[] = {1};
	const struct {
		int nd;
		const int *dims;
		int p, steps;
	} cs[] = {{2, d35, 15, 6}, {2, d44, 16, 6}, {3, d234, 24, 6}, {1, d1, 1, 0}};
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
		for (int sw = 0; sw < 2; sw++) {
			struct tc_model md = std_md(sw ? CT : SF);
			double m = 3000, b = m / cs[i].p;
			double ts = 100 + (sw ? 5 : 0);
			double want = 2 * ts * cs[i].steps + 2 * 2 * b * (cs[i].p - 1) +
			              b * (cs[i].p - 1) * 3;
			ASSERT_NEAR(tc_cost_allreduce_mesh(&md, cs[i].nd, cs[i].dims, m), want);
		}
	struct tc_model md = std_md(SF);
	cr_assert(isnan(tc_cost_allreduce_mesh(&md, 2, d35, -1)));
	cr_assert(isnan(tc_cost_allreduce_mesh(NULL, 2, d35, 8)));
	cr_assert(isnan(tc_cost_allreduce_mesh(&md, 0, d35, 8)));
}

/* ======================================================================== */
/* The closed forms of the registry's adapters                               */
/* ======================================================================== */

/* allreduce hypercube with fold-in, written out here for any p: n = 2^k the
 * largest power of two <= p, D = ceil(log2 (p - n)), msg = msg(1, m),
 * C = m t_c, H = t_h under CT (else 0):
 *   p = 2^k: k (msg + C);
 *   else:    max((k+1)(msg + C), (k+2) msg + (k+1) C - (k - D) H). */
static double fold_want(const struct tc_model *md, int p, double m)
{
	int k = 0, D = 0;
	while ((2 << k) <= p)
		k++;
	int q = p - (1 << k);
	while ((1 << D) < q)
		D++;
	double H = md->switching == CT ? md->th_ns : 0.0;
	double msg = md->ts_ns + m * md->tw_ns + H, C = m * md->tc_ns;
	if (q == 0)
		return k * (msg + C);
	double a = (k + 1) * (msg + C), b = (k + 2) * msg + (k + 1) * C - (k - D) * H;
	return a > b ? a : b;
}

Test(cost, allreduce_hypercube_fold)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* p = 8: 3 (2100 + 3000) = 15300, the power-of-two formula */
	cr_assert_eq(tc_cost_allreduce_hypercube_fold(&sf, 8, 1000), 15300.0);
	cr_assert_eq(tc_cost_allreduce_hypercube_fold(&sf, 8, 1000),
	             tc_cost_allreduce_hypercube(&sf, 8, 1000));
	/* p = 6 (k = 2, D = 1), SF: max(3 * 5100, 4 * 2100 + 3 * 3000) = 17400 */
	cr_assert_eq(tc_cost_allreduce_hypercube_fold(&sf, 6, 1000), 17400.0);
	/* CT: max(3 * 5105, 4 * 2105 + 9000 - 1 * 5) = 17415 */
	cr_assert_eq(tc_cost_allreduce_hypercube_fold(&ct, 6, 1000), 17415.0);
	/* p = 5 (D = 0), CT: 8420 + 9000 - 2 * 5 = 17410 */
	cr_assert_eq(tc_cost_allreduce_hypercube_fold(&ct, 5, 1000), 17410.0);
	/* the first term wins when the t_h saved outweighs a message: t_s = t_w
	 * = 0, t_h = 10, p = 5: max(3 * 10, 4 * 10 - 2 * 10) = 30 */
	struct tc_model h = mk(0, 0, 10, 0, CT);
	cr_assert_eq(tc_cost_allreduce_hypercube_fold(&h, 5, 0), 30.0);
	cr_assert_eq(tc_cost_allreduce_hypercube_fold(&sf, 1, 1000), 0.0);
	for (int p = 1; p <= 70; p++)
		for (int sw = 0; sw < 2; sw++) {
			struct tc_model md = std_md(sw ? CT : SF);
			ASSERT_NEAR(tc_cost_allreduce_hypercube_fold(&md, p, 1000),
			            fold_want(&md, p, 1000));
			ASSERT_NEAR(tc_cost_allreduce_hypercube_fold(&h, p, 0), fold_want(&h, p, 0));
		}
	cr_assert(isnan(tc_cost_allreduce_hypercube_fold(NULL, 6, 8)));
	cr_assert(isnan(tc_cost_allreduce_hypercube_fold(&sf, 0, 8)));
	cr_assert(isnan(tc_cost_allreduce_hypercube_fold(&sf, 6, -1)));
}

/* The linear gather then release through rank 0's one port: receives at
 * msg(1, b), then one every t_s + b t_w; sends likewise. */
Test(cost, linear_gather_release)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* allreduce, p = 5: 2 * 2100 + 2 * 3 * 2100 + 4 * 1000 * 3 = 28800 */
	cr_assert_eq(tc_cost_allreduce_linear(&sf, 5, 1000), 28800.0);
	/* CT: one t_h on the first receive and on the last send: 28810 */
	cr_assert_eq(tc_cost_allreduce_linear(&ct, 5, 1000), 28810.0);
	/* p = 2: 2 * 2100 + 3000 */
	cr_assert_eq(tc_cost_allreduce_linear(&sf, 2, 1000), 7200.0);
	cr_assert_eq(tc_cost_allreduce_linear(&sf, 1, 1000), 0.0);
	/* allgather, p = 4: 2100 + 2 * 2100 + (100 + 8000) + 2 * 8100 = 30600 */
	cr_assert_eq(tc_cost_allgather_linear(&sf, 4, 1000), 30600.0);
	cr_assert_eq(tc_cost_allgather_linear(&ct, 4, 1000), 30610.0);
	cr_assert_eq(tc_cost_allgather_linear(&sf, 1, 1000), 0.0);
	/* barrier, empty tokens, p = 5: one port 2 * 100 + 2 * 3 * 100 = 800,
	 * CT 2 * 105 + 600 = 810; all ports 200 and 210 */
	cr_assert_eq(tc_cost_barrier_linear(&sf, 5, 0), 800.0);
	cr_assert_eq(tc_cost_barrier_linear(&ct, 5, 0), 810.0);
	struct tc_model all = sf, allct = ct;
	all.ports = allct.ports = TC_PORTS_ALL;
	cr_assert_eq(tc_cost_barrier_linear(&all, 5, 0), 200.0);
	cr_assert_eq(tc_cost_barrier_linear(&allct, 5, 0), 210.0);
	/* m-byte tokens: 2 * 2100 + 6 * 2100 = 16800 */
	cr_assert_eq(tc_cost_barrier_linear(&sf, 5, 1000), 16800.0);
	cr_assert_eq(tc_cost_barrier_linear(&sf, 1, 0), 0.0);
	for (int p = 2; p <= 33; p++)
		for (int sw = 0; sw < 2; sw++) {
			struct tc_model md = std_md(sw ? CT : SF);
			double msg1 = 2100 + (sw ? 5 : 0), msgp = 100 + 2000.0 * p + (sw ? 5 : 0);
			ASSERT_NEAR(tc_cost_allreduce_linear(&md, p, 1000),
			            2 * msg1 + 2 * (p - 2) * 2100.0 + (p - 1) * 3000.0);
			ASSERT_NEAR(tc_cost_allgather_linear(&md, p, 1000),
			            msg1 + (p - 2) * 2100.0 + msgp + (p - 2) * (msgp - (sw ? 5 : 0)));
			ASSERT_NEAR(tc_cost_barrier_linear(&md, p, 0),
			            2 * (100 + (sw ? 5 : 0)) + 2 * (p - 2) * 100.0);
			/* the barrier is the allreduce without its combines */
			ASSERT_NEAR(tc_cost_barrier_linear(&md, p, 1000),
			            tc_cost_allreduce_linear(&md, p, 1000) - (p - 1) * 3000.0);
		}
	cr_assert(isnan(tc_cost_allreduce_linear(NULL, 5, 8)));
	cr_assert(isnan(tc_cost_allgather_linear(&sf, 0, 8)));
	cr_assert(isnan(tc_cost_barrier_linear(&sf, 5, NAN)));
}

/* Pairwise exchange on a complete graph: p - 1 rounds of one neighbour
 * message per rank each way. */
Test(cost, alltoall_pairwise)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	cr_assert_eq(tc_cost_alltoall_pairwise(&sf, 8, 1000), 7 * 2100.0);
	cr_assert_eq(tc_cost_alltoall_pairwise(&ct, 8, 1000), 7 * 2105.0);
	cr_assert_eq(tc_cost_alltoall_pairwise(&sf, 1, 1000), 0.0);
	for (int p = 1; p <= 40; p++)
		ASSERT_NEAR(tc_cost_alltoall_pairwise(&ct, p, 1000), (p - 1) * 2105.0);
	cr_assert(isnan(tc_cost_alltoall_pairwise(NULL, 8, 8)));
	cr_assert(isnan(tc_cost_alltoall_pairwise(&sf, 0, 8)));
}

/* The direct round plus the combines of the reduce-scatter: one port,
 * p - 1 sends back to back, (p - 2)(t_s + m t_w) + msg(1, m); all ports,
 * msg(1, m); then m (p - 1) t_c. */
Test(cost, reduce_scatter_direct)
{
	struct tc_model sf = std_md(SF), ct = std_md(CT);
	/* p = 4: 2 * 2100 + 2100 + 1000 * 3 * 3 = 15300 */
	cr_assert_eq(tc_cost_reduce_scatter_direct(&sf, 4, 1000), 15300.0);
	cr_assert_eq(tc_cost_reduce_scatter_direct(&ct, 4, 1000), 15305.0);
	struct tc_model all = sf;
	all.ports = TC_PORTS_ALL;
	cr_assert_eq(tc_cost_reduce_scatter_direct(&all, 4, 1000), 2100.0 + 9000.0);
	cr_assert_eq(tc_cost_reduce_scatter_direct(&sf, 1, 1000), 0.0);
	for (int p = 2; p <= 40; p++)
		ASSERT_NEAR(tc_cost_reduce_scatter_direct(&ct, p, 1000),
		            (p - 2) * 2100.0 + 2105.0 + (p - 1) * 3000.0);
	cr_assert(isnan(tc_cost_reduce_scatter_direct(NULL, 4, 8)));
	cr_assert(isnan(tc_cost_reduce_scatter_direct(&sf, 4, -1)));
	/* The direct round refuses the same domain errors (no crash on NULL). */
	cr_assert(isnan(tc_cost_direct_round(NULL, 4, 8)));
	cr_assert(isnan(tc_cost_direct_round(&sf, 0, 8)));
	cr_assert(isnan(tc_cost_direct_round(&sf, 4, NAN)));
}

/* The machine's own algorithms (shm): one round on the complete graph,
 * computed here from the model.  All ports: one message time (allgather,
 * alltoall, bcast, scatter, gather, barrier), plus the (p - 1) combines of
 * the whole vector (allreduce shm_flag, reduce_scatter's block) or two
 * message times of the largest slice and its
 * combines (allreduce shm); one port: the p - 1 sends back to back. */
Test(cost, shm_closed_forms)
{
	static const int ps[] = {1, 2, 3, 5, 8, 64};
	static const double ms[] = {0, 1, 64, 1000, 1 << 20};
	for (int sw = 0; sw < 2; sw++)
		for (int all = 0; all < 2; all++)
			for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++)
				for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
					struct tc_model md = std_md(sw ? CT : SF);
					md.ports = all ? TC_PORTS_ALL : TC_PORTS_ONE;
					const int p = ps[pi];
					const double m = ms[mi], th = sw ? md.th_ns : 0;
					const double L = md.ts_ns + m * md.tw_ns, L0 = md.ts_ns;
					double round = p == 1 ? 0 : all ? L + th : (p - 1) * L + th;
					double round0 = p == 1 ? 0
					                : all  ? L0 + th
					                       : (p - 1) * L0 + th;
					ASSERT_NEAR(tc_cost_allgather_shm(&md, p, m), round);
					ASSERT_NEAR(tc_cost_alltoall_shm(&md, p, m), round);
					ASSERT_NEAR(tc_cost_bcast_shm(&md, p, m), round);
					/* scatter: the root's p - 1 blocks; gather: its
					 * p - 1 receives (the dual round). */
					ASSERT_NEAR(tc_cost_scatter_shm(&md, p, m), round);
					ASSERT_NEAR(tc_cost_gather_shm(&md, p, m), round);
					ASSERT_NEAR(tc_cost_barrier_shm(&md, p), round0);
					if (!all) {
						cr_assert(isnan(tc_cost_allreduce_shm_flag(&md, p, m)));
						cr_assert(isnan(tc_cost_allreduce_shm(&md, p, m / 8, 8)));
						cr_assert(isnan(tc_cost_reduce_scatter_shm(&md, p, m)));
						continue;
					}
					double flag = p == 1 ? 0 : L + th + (p - 1) * m * md.tc_ns;
					ASSERT_NEAR(tc_cost_allreduce_shm_flag(&md, p, m), flag);
					/* reduce_scatter: each owner's p - 1 parts of m
					 * bytes at once, combined one after the other. */
					ASSERT_NEAR(tc_cost_reduce_scatter_shm(&md, p, m), flag);
					/* count elements of 8 bytes: the largest slice. */
					double count = floor(m / 8), s = 8 * ceil(count / p);
					double slices = p == 1 ? 0
					                       : 2 * (md.ts_ns + s * md.tw_ns + th) +
					                                 (p - 1) * s * md.tc_ns;
					ASSERT_NEAR(tc_cost_allreduce_shm(&md, p, count, 8), slices);
				}
	struct tc_model md = std_md(SF);
	cr_assert(isnan(tc_cost_allgather_shm(&md, 0, 8)));
	cr_assert(isnan(tc_cost_allreduce_shm(&md, 2, -1, 8)));
	cr_assert(isnan(tc_cost_scatter_shm(&md, 0, 8)));
	cr_assert(isnan(tc_cost_gather_shm(NULL, 2, 8)));
	cr_assert(isnan(tc_cost_reduce_scatter_shm(&md, 2, NAN)));
}

/* shm_tree (barrier and allreduce): q = ceil(p / f) groups whose sizes
 * differ by at most one, counted here by dealing the p ranks out; three
 * message times with two groups or more (members to leader, leaders among
 * themselves, leader to members), two with one, and the combines of the
 * largest group then of the q group results.  Worked values with the
 * standard model (t_s 100, t_w 2, t_h 5, t_c 3), all ports: p = 17, m = 64
 * (groups of 6, 6, 5): 3 (100 + 128) + (5 + 2) 64 * 3 = 2028 (SF);
 * p = 8, m = 8: 2 (100 + 16) + 7 * 8 * 3 = 400.  The simulator of the
 * schedule gives the same (tc_predict on complete:p). */
Test(cost, shm_tree_closed_forms)
{
	struct tc_model all = std_md(SF);
	all.ports = TC_PORTS_ALL;
	ASSERT_NEAR(tc_cost_allreduce_shm_tree(&all, 17, 64, 8), 2028.0);
	ASSERT_NEAR(tc_cost_allreduce_shm_tree(&all, 8, 8, 8), 400.0);
	ASSERT_NEAR(tc_cost_barrier_shm_tree(&all, 16, 8), 300.0);
	ASSERT_NEAR(tc_cost_barrier_shm_tree(&all, 1, 8), 0.0);
	static const double ms[] = {0, 8, 64};
	for (int sw = 0; sw < 2; sw++)
		for (int p = 1; p <= 70; p++)
			for (size_t mi = 0; mi < 3; mi++) {
				struct tc_model md = std_md(sw ? CT : SF);
				md.ports = TC_PORTS_ALL;
				const double m = ms[mi];
				int size[16] = {0}, q = (p + 7) / 8, g = 0;
				for (int r = 0; r < p; r++)
					size[r % q]++;
				for (int j = 0; j < q; j++)
					g = size[j] > g ? size[j] : g;
				const double msg = md.ts_ns + m * md.tw_ns + (sw ? md.th_ns : 0);
				double want = p == 1   ? 0
				              : q == 1 ? 2 * msg + (p - 1) * m * md.tc_ns
				                       : 3 * msg + (g - 1 + q - 1) * m * md.tc_ns;
				ASSERT_NEAR(tc_cost_allreduce_shm_tree(&md, p, m, 8), want);
				if (m == 0)
					ASSERT_NEAR(tc_cost_barrier_shm_tree(&md, p, 8), want);
				if (p % 3 && p != 64)
					continue; /* the simulator on a sample of p */
				char spec[32];
				snprintf(spec, sizeof spec, "complete:%d", p);
				struct tc_topo *t = NULL;
				cr_assert_eq(tc_topo_parse(spec, &t), 0);
				struct tc_prediction pr;
				const enum tc_coll coll = m ? TC_COLL_ALLREDUCE : TC_COLL_BARRIER;
				cr_assert_eq(tc_predict(t, &md, coll, "shm_tree", (size_t)m, 8, 0, 0, &pr),
				             0);
				ASSERT_NEAR((double)pr.modelled_ps / 1000.0, want);
				tc_topo_destroy(t);
			}
	struct tc_model one = std_md(SF);
	cr_assert(isnan(tc_cost_allreduce_shm_tree(&one, 4, 8, 8)));
	cr_assert(isnan(tc_cost_barrier_shm_tree(&one, 4, 8)));
	cr_assert(isnan(tc_cost_allreduce_shm_tree(&all, 4, 8, 1)));
	cr_assert(isnan(tc_cost_allreduce_shm_tree(&all, 0, 8, 8)));
	cr_assert(isnan(tc_cost_allreduce_shm_tree(NULL, 4, 8, 8)));
}
