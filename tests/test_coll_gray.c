/* SPDX-License-Identifier: MIT */
/*
 * Gray-code permutations (gray2binary, binary2gray; [HJR-TR-20-92]): results
 * against the sequential reference of tests/common/coll_ref.c for every
 * algorithm of the registry (and AUTO), every topology of the matrix where it
 * applies, p in the matrix, several counts (odd halves and thirds too) and
 * datatypes, in place and not; the registry's restrictions against what the
 * generators accept (p not a power of two: TC_ENOTSUP for all); modelled
 * times against the source's formulas (1)-(3) computed here; Lemma 3's lower
 * bound; one-port and nearest-neighbour schedules; `direct` and `direct3`
 * free of link contention under cut-through; GB3's steps on a 3-cube; AUTO;
 * errors.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "coll_ref.h"
#include "topocoll.h"
#include "util.h"

#define NSPECS 16

static const enum tc_coll colls[2] = {TC_COLL_GRAY2BINARY, TC_COLL_BINARY2GRAY};

static int predict(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll,
                   const char *alg, size_t bytes, size_t esize, struct tc_prediction *pr)
{
	struct tc_call c = {.coll = coll, .alg = alg, .bytes = bytes, .esize = esize};
	return tc_predict_call(t, md, &c, pr);
}

/* Runs every algorithm that applies under md (and AUTO) on every topology of
 * p, for both collectives, with the given counts. */
static void run_matrix(int p, const struct tc_model *md, const size_t *counts, int ncounts, int iters)
{
	char specs[NSPECS][32];
	int ns = tc_test_specs_for(p, specs, NSPECS);
	int k = 0;
	for (int si = 0; si < ns; si++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0, "%s", specs[si]);
		char msg[512];
		struct tc_team *team = NULL;
		for (int ci = 0; ci < 2; ci++) {
			const enum tc_coll coll = colls[ci];
			for (int a = -1; a < 0 || tc_alg_name(coll, a); a++) {
				const char *alg = a < 0 ? NULL : tc_alg_name(coll, a);
				struct tc_prediction pr;
				int ap = TC_ENOTSUP; /* AUTO: whether any applies */
				if (alg)
					ap = tc_alg_applies(t, md, coll, alg);
				else
					for (int b = 0; tc_alg_name(coll, b); b++)
						if (!tc_alg_applies(t, md, coll, tc_alg_name(coll, b)))
							ap = 0;
				if (p & (p - 1))
					cr_assert_eq(ap, TC_ENOTSUP, "%s %s", specs[si],
					             alg ? alg : "auto");
				int err = predict(t, md, coll, alg, 24, 8, &pr);
				/* The registry's restrictions are what the generator accepts. */
				cr_assert_eq(err, ap, "%s %s: predict %d, applies %d", specs[si],
				             alg ? alg : "auto", err, ap);
				if (ap)
					continue;
				cr_assert_eq(pr.nodup_violations, 0, "%s %s", specs[si], alg);
				cr_assert_eq(pr.noho_violations, 0, "%s %s", specs[si], alg);
				if (!team) {
					team = ct_team(specs[si], md, msg, sizeof msg);
					cr_assert(team, "%s", msg);
				}
				for (int c = 0; c < ncounts; c++, k++) {
					struct ct_case cs = {.coll = coll,
					                     .alg = alg,
					                     .count = counts[c],
					                     .dt = ct_dtypes[k % ct_ndtypes],
					                     .in_place = (k / 2) % 2,
					                     .iters = iters,
					                     .seed = (uint64_t)k + 1};
					cr_assert_eq(ct_run(team, &cs, msg, sizeof msg), 0,
					             "%s %s %s count %zu: %s", specs[si],
					             tc_coll_name(coll), alg ? alg : "auto",
					             counts[c], msg);
				}
			}
		}
		if (team)
			tc_team_destroy(team);
		tc_topo_destroy(t);
	}
}

Test(gray, small_p, .timeout = 120)
{
	static const size_t counts[] = {0, 1, 3, 7};
	struct tc_model md;
	tc_model_default(&md);
	for (int p = 1; p <= 4; p++)
		run_matrix(p, &md, counts, 4, 2);
}

Test(gray, results, .timeout = 300)
{
	static const size_t small[] = {0, 1, 2, 3, 7, 64, 1000};
	static const size_t big[] = {0, 3, 7, 64};
	struct tc_model md;
	tc_model_default(&md);
	for (int i = 0; i < TC_TEST_NPS; i++) {
		int p = tc_test_ps[i];
		if (p <= 4)
			continue; /* small_p */
		if (p <= 16)
			run_matrix(p, &md, small, 7, 1);
		else
			run_matrix(p, &md, big, 4, 1);
	}
}

/* direct3 needs the all-port model: its results there (hypercube only). */
Test(gray, results_allport, .timeout = 120)
{
	static const size_t counts[] = {0, 1, 2, 3, 7, 64};
	struct tc_model md = ct_model(100, 2, 10, TC_PORTS_ALL, TC_DUPLEX_FULL, TC_SWITCH_CT);
	static const int ps[] = {1, 2, 4, 8, 16, 32};
	for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
		run_matrix(ps[i], &md, counts, ps[i] <= 16 ? 6 : 3, 1);
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse("hypercube:3", &t), 0);
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_GRAY2BINARY, "direct3"), 0);
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_BINARY2GRAY, "direct3"), TC_EALG);
	md.ports = TC_PORTS_ONE;
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_GRAY2BINARY, "direct3"), TC_ENOTSUP);
	tc_topo_destroy(t);
}

Test(gray, large_count, .timeout = 120)
{
	static const size_t counts[] = {(1 << 16) + 1};
	struct tc_model md;
	tc_model_default(&md);
	for (int p = 2; p <= 4; p *= 2)
		run_matrix(p, &md, counts, 1, 1);
}

/* ---- modelled times -------------------------------------------------------------- */

/* The formulas (1)-(3) of [HJR-TR-20-92] in ps, computed here from integral ns
 * parameters; half is the half block's bytes (K/2), th the t_h of one
 * neighbour message (0 under SF). */
static long long f_gb1(int n, long long K, long long ts, long long tw, long long th)
{
	return n <= 1 ? 0 : (n - 1) * (ts + K * tw + th) * 1000; /* (n-1)(tau + K t_c) */
}

static long long f_gb2(int n, long long half, long long ts, long long tw, long long th)
{
	return n <= 1 ? 0 : (n + 1) * (ts + half * tw + th) * 1000; /* (n+1)(tau + K/2 t_c) */
}

static long long f_gb3(int n, long long half, long long ts, long long tw, long long th)
{
	return n <= 1 ? 0 : n * (ts + half * tw + th) * 1000; /* n (tau + K/2 t_c) */
}

/* Under the one-port store-and-forward model (and cut-through, + t_h per
 * step; all-port the same), for n = 1 .. 8 and several K: modelled == the
 * paper's formula for even element counts.  For odd ones part 0 has one
 * element more than part 1: GB2's and GB3's pre-exchange (and GB2's
 * post-exchange) move part 1, and a chain of part-0 exchanges runs through
 * the other steps, so GB2 costs (n+1) tau + ((n-1) |part 0| + 2 |part 1|)
 * t_c, GB3 n tau + ((n-1) |part 0| + |part 1|) t_c: (n-3) and (n-2)
 * esize t_c / 2 above the source's real-K/2 formula (below it for GB2, n = 2). */
/* One case of hjr_formulas: gb1, gb2, gb3 of both collectives on the
 * n-cube t, count elements of es bytes, the model's parameters in ns. */
static void check_formulas(const struct tc_topo *t, int n, const long long par[3], int sw, int pw,
                           long long cnt, long long es)
{
	static const char *const algs[] = {"gb1", "gb2", "gb3"};
	const long long ts = par[0], tw = par[1], th = par[2], thc = sw ? th : 0;
	const long long K = cnt * es;
	const long long big = (cnt + 1) / 2 * es; /* part 0 */
	const long long small = cnt / 2 * es;     /* part 1 */
	struct tc_model md =
	        ct_model((double)ts, (double)tw, (double)th, pw ? TC_PORTS_ALL : TC_PORTS_ONE,
	                 TC_DUPLEX_FULL, sw ? TC_SWITCH_CT : TC_SWITCH_SF);
	for (int c = 0; c < 2; c++)
		for (int a = 0; a < 3; a++) {
			struct tc_prediction pr;
			cr_assert_eq(predict(t, &md, colls[c], algs[a], (size_t)K, (size_t)es, &pr), 0);
			long long want, hjr, odd = 0;
			if (a == 0) {
				want = hjr = f_gb1(n, K, ts, tw, thc);
			} else if (a == 1) {
				want = f_gb2(n, 0, ts, tw, thc) + ((n - 1) * big + 2 * small) * tw * 1000;
				hjr = f_gb2(n, 0, ts, tw, thc) + (n + 1) * K * tw * 500;
				odd = (n - 3) * es * tw * 500;
			} else {
				want = f_gb3(n, 0, ts, tw, thc) + ((n - 1) * big + small) * tw * 1000;
				hjr = f_gb3(n, 0, ts, tw, thc) + n * K * tw * 500;
				odd = (n - 2) * es * tw * 500;
			}
			if (n <= 1)
				want = hjr = 0; /* the identity */
			cr_assert_eq((long long)pr.modelled_ps, want,
			             "hypercube:%d %s %s K=%lld es %lld ct %d ports %d: %lld", n,
			             tc_coll_name(colls[c]), algs[a], K, es, sw, pw,
			             (long long)pr.modelled_ps);
			/* the source's formula, or the documented odd-half difference */
			cr_assert_eq(want - hjr, cnt % 2 && n > 1 ? odd : 0);
			cr_assert(!isnan(pr.formula_ns));
			cr_assert_eq(llround(pr.formula_ns * 1000.0), hjr, "hypercube:%d %s K=%lld",
			             n, algs[a], K);
			if (!pw)
				cr_assert_eq(pr.oneport_violations, 0);
		}
}

Test(model, hjr_formulas, .timeout = 120)
{
	static const long long counts[] = {0, 1, 2, 3, 7, 64, 1000, 4097};
	static const long long par[][3] = {{1000, 2, 0}, {500, 1, 50}, {7, 3, 11}};
	static const long long esizes[] = {1, 8};
	int checked = 0;
	for (int n = 1; n <= 8; n++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", n);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(spec, &t), 0);
		for (int pi = 0; pi < 3; pi++)
			for (int sw = 0; sw < 2; sw++)
				for (int pw = 0; pw < 2; pw++)
					for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
						for (int ei = 0; ei < 2; ei++, checked++)
							check_formulas(t, n, par[pi], sw, pw,
							               counts[ci], esizes[ei]);
		/* Half duplex: an exchange's two directions share the port. */
		struct tc_model md = ct_model(100, 2, 0, TC_PORTS_ONE, TC_DUPLEX_HALF, TC_SWITCH_SF);
		struct tc_prediction pr;
		cr_assert_eq(predict(t, &md, TC_COLL_GRAY2BINARY, "gb3", 64, 1, &pr), 0);
		if (n > 1)
			cr_assert(isnan(pr.formula_ns));
		tc_topo_destroy(t);
	}
	cr_assert_geq(checked, 8 * 3 * 4 * 8 * 2);
	/* On a complete graph the exchanges are one link too (same time), but
	 * the source's formula is the hypercube's: NAN. */
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse("complete:8", &t), 0);
	struct tc_model md = ct_model(100, 2, 0, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	struct tc_prediction pr;
	cr_assert_eq(predict(t, &md, TC_COLL_GRAY2BINARY, "gb3", 64, 1, &pr), 0);
	cr_assert(isnan(pr.formula_ns));
	cr_assert_eq(pr.modelled_ps, f_gb3(3, 32, 100, 2, 0));
	tc_topo_destroy(t);
}

/* Lemma 3, SF one-port: the reported bound is max((n-1) tau, (n-1) K/2 t_c)
 * and no algorithm beats it; every schedule is one-port clean. */
Test(model, lower_bound, .timeout = 60)
{
	static const long long Ks[] = {0, 8, 64, 1000, 4096};
	static const long long par[][2] = {{1000, 2}, {10, 5}};
	int seen = 0;
	for (int n = 1; n <= 8; n++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", n);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(spec, &t), 0);
		for (int pi = 0; pi < 2; pi++)
			for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++) {
				long long ts = par[pi][0], tw = par[pi][1], K = Ks[ki];
				struct tc_model md = ct_model((double)ts, (double)tw, 0, TC_PORTS_ONE,
				                              TC_DUPLEX_FULL, TC_SWITCH_SF);
				double a = (double)(n - 1) * (double)ts;
				double b = (double)(n - 1) * (double)K / 2.0 * (double)tw;
				double bound = n <= 1 ? 0.0 : a > b ? a : b;
				for (int c = 0; c < 2; c++)
					for (int i = 0; tc_alg_name(colls[c], i); i++) {
						const char *alg = tc_alg_name(colls[c], i);
						if (tc_alg_applies(t, &md, colls[c], alg))
							continue;
						struct tc_prediction pr;
						cr_assert_eq(predict(t, &md, colls[c], alg,
						                     (size_t)K, 1, &pr),
						             0);
						cr_assert_eq(pr.lower_bound_ns, bound,
						             "%s %s K=%lld: %.1f", spec, alg, K,
						             pr.lower_bound_ns);
						cr_assert_leq(bound * 1000.0, (double)pr.modelled_ps,
						              "%s %s K=%lld", spec, alg, K);
						cr_assert_eq(pr.oneport_violations, 0, "%s %s",
						             spec, alg);
						seen++;
					}
			}
		tc_topo_destroy(t);
	}
	cr_assert_geq(seen, 300);
}

/* gb1, gb2, gb3 are nearest-neighbour: every transfer crosses one link. */
Test(model, nearest_neighbour, .timeout = 60)
{
	static const char *const algs[] = {"gb1", "gb2", "gb3"};
	struct tc_model md = ct_model(100, 2, 10, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_CT);
	for (int n = 1; n <= 8; n++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", n);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(spec, &t), 0);
		for (int c = 0; c < 2; c++)
			for (int a = 0; a < 3; a++) {
				struct tc_call call = {.coll = colls[c],
				                       .alg = algs[a],
				                       .bytes = 64,
				                       .esize = 1};
				struct tc_transfer *x;
				int nx;
				cr_assert_eq(tc_schedule_call(t, &md, &call, &x, &nx), 0);
				int remote = 0;
				for (int i = 0; i < nx; i++) {
					if (x[i].src == x[i].dst) {
						cr_assert_eq(x[i].hops, 0);
						continue;
					}
					remote++;
					cr_assert_eq(x[i].hops, 1, "%s %s: %d -> %d", spec, algs[a],
					             x[i].src, x[i].dst);
					cr_assert_eq(__builtin_popcount((unsigned)(x[i].src ^ x[i].dst)),
					             1);
				}
				/* gb2 and gb3: every node moves a half in every step */
				if (n >= 2 && a == 1)
					cr_assert_eq(remote, (n + 1) << n);
				if (n >= 2 && a == 2)
					cr_assert_eq(remote, n << n);
				tc_schedule_free(x);
			}
		tc_topo_destroy(t);
	}
}

/* [HJR-TR-20-92], section 3.5: the direct routes of gray2binary (and of
 * binary2gray) are edge-disjoint: no contention under cut-through, n <= 10. */
Test(model, direct_edge_disjoint, .timeout = 120)
{
	for (int n = 1; n <= 10; n++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", n);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(spec, &t), 0);
		for (int pw = 0; pw < 2; pw++) {
			struct tc_model md = ct_model(100, 2, 10, pw ? TC_PORTS_ALL : TC_PORTS_ONE,
			                              TC_DUPLEX_FULL, TC_SWITCH_CT);
			for (int c = 0; c < 2; c++) {
				struct tc_prediction pr;
				cr_assert_eq(predict(t, &md, colls[c], "direct", 64, 1, &pr), 0);
				cr_assert_eq(pr.contention, 0, "%s %s: %ld", spec,
				             tc_coll_name(colls[c]), pr.contention);
				/* CT: tau + K t_c + (n - 1) t_h */
				long long want = n <= 1 ? 0 : (100 + 64 * 2 + (n - 1) * 10) * 1000LL;
				cr_assert_eq((long long)pr.modelled_ps, want, "%s", spec);
				cr_assert_eq(llround(pr.formula_ns * 1000.0), want);
			}
			if (pw && n >= 2) {
				struct tc_prediction pr;
				cr_assert_eq(predict(t, &md, TC_COLL_GRAY2BINARY, "direct3", 66, 1, &pr),
				             0);
				cr_assert_eq(pr.contention, 0, "%s direct3: %ld", spec, pr.contention);
			}
		}
		tc_topo_destroy(t);
	}
}

static int gray_inv(int g)
{
	int i = 0;
	for (; g; g >>= 1)
		i ^= g;
	return i;
}

/* direct3 under all-port cut-through, K = 3k bytes: 2 (tau + (K/3) t_c)
 * plus t_h times the longest chain of hops H, computed here from the e-cube
 * routes and the clock rules: node u's step-1 sends start when its step-0
 * receives are done (c_u = L + in0(u) t_h, in0 the longest route into it:
 * its part 0's, or the one link from u' carrying part 1), and node x
 * finishes with its own sends (c_x + L) or its latest arrival (c_u + L +
 * hops t_h).  With t_h = 0 this is the source's 2 tau + (2K/3) t_c (its
 * 2-port model; ours is all-port).  Uneven thirds: at t_h = 0 step 0 costs
 * part 0 and step 1 part 1, the larger of parts 1 and 2. */
Test(model, direct3_cost, .timeout = 60)
{
	static const long long counts[] = {0, 1, 2, 3, 4, 5, 66, 999, 1000};
	static const long long par[][3] = {{100, 2, 0}, {100, 2, 10}, {7, 3, 50}};
	for (int n = 1; n <= 9; n++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", n);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(spec, &t), 0);
		const int p = 1 << n, top = p >> 1;
		/* in0[u]: the longest step-0 route into u; out1[u]: u's longest
		 * step-1 route (0: none) */
		int *in0 = calloc((size_t)p, sizeof *in0), *out1 = calloc((size_t)p, sizeof *out1);
		cr_assert(in0 && out1);
		for (int v = 0; v < p && n >= 2; v++) {
			int d = gray_inv(v), h = __builtin_popcount((unsigned)(v ^ d));
			in0[d] = h > in0[d] ? h : in0[d];
			if (d != v) /* part 1 through v', then from v' to d */
				in0[v ^ top] = in0[v ^ top] > 1 ? in0[v ^ top] : 1;
			out1[v] = h > out1[v] ? h : out1[v];
			int hf = d == v ? 0 : __builtin_popcount((unsigned)((v ^ top) ^ d));
			out1[v ^ top] = hf > out1[v ^ top] ? hf : out1[v ^ top];
		}
		int chain = 0;
		for (int u = 0; u < p && n >= 2; u++) {
			int c = in0[u] + out1[u];
			chain = c > chain ? c : chain;
			chain = in0[u] > chain ? in0[u] : chain;
		}
		free(in0);
		free(out1);
		cr_assert_leq(chain, 2 * n - 1);
		for (int pi = 0; pi < 3; pi++)
			for (size_t ki = 0; ki < sizeof counts / sizeof *counts; ki++) {
				long long ts = par[pi][0], tw = par[pi][1], th = par[pi][2],
				          K = counts[ki];
				struct tc_model md =
				        ct_model((double)ts, (double)tw, (double)th, TC_PORTS_ALL,
				                 TC_DUPLEX_FULL, TC_SWITCH_CT);
				struct tc_prediction pr;
				cr_assert_eq(predict(t, &md, TC_COLL_GRAY2BINARY, "direct3",
				                     (size_t)K, 1, &pr),
				             0);
				cr_assert(isnan(pr.formula_ns));
				cr_assert_eq(pr.contention, 0);
				cr_assert_eq(pr.nodup_violations, 0);
				cr_assert_eq(pr.noho_violations, 0);
				long long got = (long long)pr.modelled_ps;
				if (n <= 1) {
					cr_assert_eq(got, 0);
					continue;
				}
				if (K % 3 == 0) {
					long long want = (2 * (ts + K / 3 * tw) + chain * th) * 1000;
					cr_assert_eq(got, want, "%s K=%lld par %d: %lld", spec, K,
					             pi, got);
					if (th == 0) /* the source's 2 tau + 2K/3 t_c */
						cr_assert_eq(got, (2 * ts + 2 * K / 3 * tw) * 1000);
				} else if (th == 0) {
					long long s0 = K / 3 + 1, s1 = K / 3 + (K % 3 > 1);
					cr_assert_eq(got, (2 * ts + (s0 + s1) * tw) * 1000,
					             "%s K=%lld: %lld", spec, K, got);
				}
			}
		tc_topo_destroy(t);
	}
}

/* [HJR-TR-20-92], section 3.3 on a 3-cube: n = 3 rounds of K/2-byte exchanges
 * along dimensions n-2, 0 .. n-3, n-2 = 1, 0, 1; every node sends one half
 * and receives one half per round.  binary2gray: the same rounds reversed
 * (dimensions 1, 0, 1 again). */
Test(model, gb3_steps, .timeout = 60)
{
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse("hypercube:3", &t), 0);
	struct tc_model md = ct_model(100, 2, 0, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	static const int dims[3] = {1, 0, 1};
	for (int c = 0; c < 2; c++) {
		struct tc_call call = {.coll = colls[c], .alg = "gb3", .bytes = 64, .esize = 1};
		struct tc_transfer *x;
		int nx;
		cr_assert_eq(tc_schedule_call(t, &md, &call, &x, &nx), 0);
		int sent[3][8] = {{0}}, recv[3][8] = {{0}}, maxr = -1;
		for (int i = 0; i < nx; i++) {
			if (x[i].src == x[i].dst)
				continue;
			cr_assert(x[i].round >= 0 && x[i].round < 3, "round %d", x[i].round);
			maxr = x[i].round > maxr ? x[i].round : maxr;
			cr_assert_eq(x[i].src ^ x[i].dst, 1 << dims[x[i].round],
			             "round %d: %d -> %d", x[i].round, x[i].src, x[i].dst);
			cr_assert_eq(x[i].bytes, 32);
			cr_assert_eq(x[i].src_off, x[i].dst_off);
			sent[x[i].round][x[i].src]++;
			recv[x[i].round][x[i].dst]++;
		}
		cr_assert_eq(maxr, 2);
		for (int r = 0; r < 3; r++)
			for (int v = 0; v < 8; v++) {
				cr_assert_eq(sent[r][v], 1);
				cr_assert_eq(recv[r][v], 1);
			}
		tc_schedule_free(x);
	}
	tc_topo_destroy(t);
}

Test(auto, never_above_an_algorithm, .timeout = 60)
{
	static const int ps[] = {1, 2, 4, 6, 8, 16, 64};
	for (size_t pi = 0; pi < sizeof ps / sizeof *ps; pi++) {
		char specs[NSPECS][32];
		int ns = tc_test_specs_for(ps[pi], specs, NSPECS);
		for (int si = 0; si < ns; si++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
			for (int mi = 0; mi < 4; mi++)
				for (size_t m = 1; m <= 4096; m *= 64)
					for (int c = 0; c < 2; c++) {
						struct tc_model md =
						        ct_model(100, 2, 10,
						                 mi & 1 ? TC_PORTS_ALL : TC_PORTS_ONE,
						                 TC_DUPLEX_FULL,
						                 mi & 2 ? TC_SWITCH_CT : TC_SWITCH_SF);
						struct tc_prediction au, pr;
						int err = predict(t, &md, colls[c], NULL, m, 1, &au);
						int any = 0;
						for (int a = 0; tc_alg_name(colls[c], a); a++) {
							const char *alg = tc_alg_name(colls[c], a);
							if (tc_alg_applies(t, &md, colls[c], alg))
								continue;
							any = 1;
							cr_assert_eq(err, 0, "%s", specs[si]);
							cr_assert_eq(predict(t, &md, colls[c], alg,
							                     m, 1, &pr),
							             0);
							cr_assert_leq(au.modelled_ps, pr.modelled_ps,
							              "%s %s m=%zu", specs[si], alg, m);
						}
						if (!any)
							cr_assert_eq(err, TC_ENOTSUP, "%s", specs[si]);
					}
			tc_topo_destroy(t);
		}
	}
}

/* ---- errors ---------------------------------------------------------------------- */

struct err_arg {
	atomic_int bad;
	atomic_int first; /* 1 + 100 coll + case + 1000 err of the first failure */
	int pow2;
};

static int err_fn(struct tc_proc *proc, void *argp)
{
	struct err_arg *a = argp;
	uint64_t sbuf[64], rbuf[64];
	for (int i = 0; i < 64; i++) {
		sbuf[i] = (uint64_t)i;
		rbuf[i] = 0xdeadbeefu;
	}
	struct tc_coll_opts none = {0}, bad = {.alg = "nope"}, gb1 = {.alg = "gb1"},
	                    d3 = {.alg = "direct3"};
	const int ns = a->pow2 ? 0 : TC_ENOTSUP;
	struct {
		const void *s;
		void *r;
		size_t count;
		const struct tc_coll_opts *o;
		int want;
	} cases[] = {
	        {NULL, rbuf, 1, &none, TC_ENULLBUF},
	        {sbuf, NULL, 1, &none, TC_ENULLBUF},
	        {sbuf, rbuf, SIZE_MAX / 2, &none, TC_EOVERFLOW},
	        {sbuf, rbuf, 1, &bad, TC_EALG},
	        {sbuf, rbuf, 1, &gb1, TC_ENOTSUP}, /* gb1 on a ring */
	        {sbuf, rbuf, 1, &d3, TC_ENOTSUP},  /* direct3: one-port, a ring */
	        {sbuf, rbuf, 1, &none, ns},        /* AUTO: direct, p a power of two */
	};
	for (int c = 0; c < 2; c++)
		for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
			int err = c ? tc_binary2gray(proc, cases[i].s, cases[i].r, cases[i].count,
			                             TC_UINT64, cases[i].o)
			            : tc_gray2binary(proc, cases[i].s, cases[i].r, cases[i].count,
			                             TC_UINT64, cases[i].o);
			int want = cases[i].want;
			if (c && cases[i].o == &d3)
				want = TC_EALG; /* no binary2gray direct3 */
			if (err != want) {
				atomic_fetch_add(&a->bad, 1);
				int z = 0;
				atomic_compare_exchange_strong(&a->first, &z,
				                               1 + 100 * c + (int)i - 1000 * err);
			}
			if (want)
				for (int j = 0; j < 64; j++)
					if (rbuf[j] != 0xdeadbeefu || sbuf[j] != (uint64_t)j)
						atomic_fetch_add(&a->bad, 1);
			for (int j = 0; j < 64; j++)
				rbuf[j] = 0xdeadbeefu;
		}
	return 0;
}

Test(errors, arguments, .timeout = 60)
{
	static const char *const specs[] = {"ring:1", "ring:5", "ring:8"};
	for (int i = 0; i < 3; i++) {
		char msg[256];
		struct tc_team *team = ct_team(specs[i], NULL, msg, sizeof msg);
		cr_assert(team, "%s", msg);
		struct err_arg a = {.pow2 = i != 1};
		cr_assert_eq(tc_run(team, err_fn, &a), 0);
		cr_assert_eq(atomic_load(&a.bad), 0, "%s: %d", specs[i], atomic_load(&a.first));
		tc_team_destroy(team);
	}
	/* p not a power of two: every algorithm and AUTO refuse. */
	static const char *const np2[] = {"complete:6", "ring:5", "hypercube:3"};
	for (int i = 0; i < 3; i++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(np2[i], &t), 0);
		const int pow2 = i == 2;
		for (int pw = 0; pw < 2; pw++) {
			struct tc_model md = ct_model(100, 2, 10, pw ? TC_PORTS_ALL : TC_PORTS_ONE,
			                              TC_DUPLEX_FULL, TC_SWITCH_CT);
			struct tc_prediction pr;
			for (int c = 0; c < 2; c++) {
				cr_assert_eq(predict(t, &md, colls[c], NULL, 8, 1, &pr),
				             pow2 ? 0 : TC_ENOTSUP, "%s", np2[i]);
				for (int a = 0; tc_alg_name(colls[c], a); a++) {
					const char *alg = tc_alg_name(colls[c], a);
					int want = !pow2                            ? TC_ENOTSUP
					           : !strcmp(alg, "direct3") && !pw ? TC_ENOTSUP
					                                            : 0;
					cr_assert_eq(predict(t, &md, colls[c], alg, 8, 1, &pr),
					             want, "%s %s", np2[i], alg);
				}
				cr_assert_eq(predict(t, &md, colls[c], "nope", 8, 1, &pr), TC_EALG);
			}
		}
		tc_topo_destroy(t);
	}
}
