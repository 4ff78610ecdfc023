/* SPDX-License-Identifier: MIT */
/*
 * Circular q-shift (shift): results against the sequential reference of
 * tests/common/coll_ref.c for every algorithm of the registry (and AUTO),
 * every topology of the matrix where it applies, p in the matrix, a spread
 * of q (negative, beyond p, INT_MAX, INT_MIN), several counts and datatypes,
 * in place and not; the registry's restrictions against what the generators
 * accept; modelled times against the sources' formulas computed here
 * ([Barnat-IB109]'s ring and torus, [Gergel-shift]'s (3.19) and (3.21));
 * [Gergel-shift]'s claim that the e-cube routes of a shift are d - gamma(q)
 * links long and never contend; AUTO; q as a long in tc_predict_call; errors.
 */
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "coll_ref.h"
#include "util.h"

#define NSPECS 16

static int predict(const struct tc_topo *t, const struct tc_model *md, const char *alg,
                   size_t bytes, long q, struct tc_prediction *pr)
{
	struct tc_call c = {.coll = TC_COLL_SHIFT, .alg = alg, .bytes = bytes, .esize = 1, .q = q};
	return tc_predict_call(t, md, &c, pr);
}

static int predict_r(const struct tc_topo *t, const struct tc_model *md, const char *alg,
                     size_t bytes, long q, int shift_ring, struct tc_prediction *pr)
{
	struct tc_call c = {.coll = TC_COLL_SHIFT,
	                    .alg = alg,
	                    .bytes = bytes,
	                    .esize = 1,
	                    .q = q,
	                    .shift_ring = shift_ring};
	return tc_predict_call(t, md, &c, pr);
}

/* Whether alg applies on t only with shift_ring, which no registry token can
 * say: the shifts along the hypercube's Gray-code ring. */
static int ring_only(const struct tc_topo *t, const char *alg)
{
	return alg && tc_topo_kind(t) == TC_TOPO_HYPERCUBE &&
	       (!strcmp(alg, "ring") || !strcmp(alg, "hypercube_gray") ||
	        !strcmp(alg, "hypercube_gray_bw"));
}

/* Whether t is a 2-D torus (the torus algorithm's real domain: the registry
 * says torus, the generator refuses other dimension counts). */
static int torus_2d(const struct tc_topo *t)
{
	return tc_topo_kind(t) == TC_TOPO_TORUS && tc_topo_dims(t, NULL) == 2;
}

static long mod_p(long q, long p)
{
	long r = q % p;
	return r < 0 ? r + p : r;
}

/* Whether [Gergel-shift]'s torus algorithm brings a block back to a rank it has
 * visited (the checker's NODUP): a block compensated one row further then
 * walks the column shift backwards over that row (qc > rows / 2), or round
 * a column of 2 (the compensation and a column shift of 1 cancel). */
static int torus_revisits(const struct tc_topo *t, long q)
{
	int dims[TC_TOPO_MAX_DIMS];
	tc_topo_dims(t, dims);
	const long rows = dims[0], cols = dims[1], s = mod_p(q, rows * cols);
	const long qr = s % cols, qc = s / cols;
	const int comp = qr != 0 && rows > 1, back = qc > rows - qc;
	const long kc = back ? rows - qc : qc;
	return comp && kc >= 1 && (back || kc + 1 == rows);
}

/* The q values of the matrix for p (the last one random). */
static int q_values(int p, uint64_t *rs, int *q)
{
	int n = 0;
	q[n++] = 0;
	q[n++] = 1;
	q[n++] = -1;
	q[n++] = p - 1;
	q[n++] = p;
	q[n++] = p / 2;
	q[n++] = 2 * p + 3;
	q[n++] = -7;
	q[n++] = INT_MAX;
	q[n++] = INT_MIN;
	q[n++] = (int)(tc_test_rand(rs) >> 33) - (1 << 30);
	return n;
}

/* Runs every algorithm that applies (and AUTO) on every topology of p, each
 * with every q of the matrix, cycling through counts, datatypes, in place. */
static void run_matrix(int p, const size_t *counts, int ncounts, int iters, int small)
{
	char specs[NSPECS][32];
	int ns = tc_test_specs_for(p, specs, NSPECS);
	struct tc_model md;
	tc_model_default(&md);
	uint64_t rs = 0x5eed0000u + (uint64_t)p;
	int k = 0;
	for (int si = 0; si < ns; si++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0, "%s", specs[si]);
		char msg[512];
		struct tc_team *team = NULL;
		for (int a = -1; a < 0 || tc_alg_name(TC_COLL_SHIFT, a); a++) {
			const char *alg = a < 0 ? NULL : tc_alg_name(TC_COLL_SHIFT, a);
			struct tc_prediction pr;
			int ap = TC_ENOTSUP; /* AUTO: whether any applies */
			if (alg)
				ap = tc_alg_applies(t, &md, TC_COLL_SHIFT, alg);
			else
				for (int b = 0; tc_alg_name(TC_COLL_SHIFT, b); b++)
					if (!tc_alg_applies(t, &md, TC_COLL_SHIFT,
					                    tc_alg_name(TC_COLL_SHIFT, b)))
						ap = 0;
			int err = predict(t, &md, alg, 8, 1, &pr);
			/* The registry's restrictions are what the generator accepts,
			 * except the torus's dimension count, which has no token. */
			int want = ap;
			if (alg && !strcmp(alg, "torus") && !ap && !torus_2d(t))
				want = TC_ENOTSUP;
			if (!ap && ring_only(t, alg))
				want = TC_ENOTSUP; /* without shift_ring */
			cr_assert_eq(err, want, "%s %s: predict %d, applies %d", specs[si],
			             alg ? alg : "auto", err, ap);
			if (err)
				continue;
			int qs[16];
			int nq = q_values(p, &rs, qs);
			for (int qi = 0; qi < nq; qi++) {
				cr_assert_eq(predict(t, &md, alg, 8, qs[qi], &pr), 0);
				int revisit =
				        !strcmp(pr.algorithm, "torus") && torus_revisits(t, qs[qi]);
				cr_assert_eq(pr.nodup_violations > 0, revisit, "%s %s q %d: %ld",
				             specs[si], pr.algorithm, qs[qi], pr.nodup_violations);
				cr_assert_eq(pr.noho_violations, 0, "%s %s q %d", specs[si],
				             pr.algorithm, qs[qi]);
				cr_assert_eq(pr.oneport_violations, 0, "%s %s q %d", specs[si],
				             pr.algorithm, qs[qi]);
			}
			if (!team) {
				team = ct_team(specs[si], NULL, msg, sizeof msg);
				cr_assert(team, "%s", msg);
			}
			for (int qi = 0; qi < nq; qi++) {
				if (small && qi >= 6 && qi != nq - 1 && qi != 8)
					continue;
				for (int ci = 0; ci < (small ? ncounts : 1); ci++, k++) {
					size_t count = counts[small ? ci : k % ncounts];
					struct ct_case c = {.coll = TC_COLL_SHIFT,
					                    .alg = alg,
					                    .count = count,
					                    .dt = ct_dtypes[k % ct_ndtypes],
					                    .in_place = (k / 2) % 2,
					                    .iters = iters,
					                    .seed = (uint64_t)k + 1,
					                    .q = qs[qi]};
					cr_assert_eq(ct_run(team, &c, msg, sizeof msg), 0,
					             "%s %s q %d count %zu: %s", specs[si],
					             alg ? alg : "auto", qs[qi], count, msg);
				}
			}
		}
		if (team)
			tc_team_destroy(team);
		tc_topo_destroy(t);
	}
}

Test(shift, small_p, .timeout = 120)
{
	static const size_t counts[] = {0, 1, 7};
	for (int p = 1; p <= 4; p++)
		run_matrix(p, counts, 3, 2, 1);
}

Test(shift, results, .timeout = 300)
{
	static const size_t small[] = {0, 1, 7, 64, 1000};
	static const size_t big[] = {0, 7, 64};
	for (int i = 0; i < TC_TEST_NPS; i++) {
		int p = tc_test_ps[i];
		if (p <= 4)
			continue; /* small_p */
		if (p <= 16)
			run_matrix(p, small, 5, 1, 0);
		else
			run_matrix(p, big, 3, 1, 0);
	}
}

Test(shift, large_count, .timeout = 120)
{
	static const size_t counts[] = {1 << 16};
	for (int p = 2; p <= 4; p++)
		run_matrix(p, counts, 1, 1, 0);
}

/* ---- modelled times ------------------------------------------------------------ */

static long lmin(long a, long b)
{
	return a < b ? a : b;
}

/* [Barnat-IB109]'s ring: min(q', p - q') neighbour steps; ps. */
static long long f_ring(int p, long q, long long m, long long ts, long long tw, long long th)
{
	long s = mod_p(q, p);
	return lmin(s, p - s) * (ts + th + tw * m) * 1000;
}

/* [Gergel-shift]'s (3.19) torus: row shift the shorter way, the compensation step
 * when the row shift is not 0 (and there is a next row), the column shift
 * the shorter way; ps. */
static long long f_torus(int rows, int cols, long q, long long m, long long ts, long long tw, long long th)
{
	long s = mod_p(q, (long)rows * cols);
	long qr = s % cols, qc = s / cols;
	long steps = lmin(qr, cols - qr) + (qr != 0 && rows > 1) + lmin(qc, rows - qc);
	return steps * (ts + th + tw * m) * 1000;
}

/* gamma(q): the exponent of the largest power of two dividing q > 0. */
static int gamma_of(long q)
{
	int j = 0;
	while (!(q & 1)) {
		q >>= 1;
		j++;
	}
	return j;
}

/* [Gergel-shift]'s (3.21): one message over d - gamma(q) links; under SF the
 * same routes store and forward at every link; ps. */
static long long f_ct(int d, long q, long long m, long long ts, long long tw, long long th, int ct)
{
	long s = mod_p(q, 1L << d);
	if (s == 0)
		return 0;
	long l = d - gamma_of(s);
	return (ct ? ts + tw * m + th * l : l * (ts + tw * m)) * 1000;
}

Test(model, closed_forms, .timeout = 120)
{
	static const char *const specs[] = {"ring:1",      "ring:2",      "ring:5",
	                                    "ring:8",      "ring:13",     "complete:7",
	                                    "complete:16", "torus:4x4",   "torus:3x5",
	                                    "torus:1x7",   "torus:4x8",   "torus:8x8",
	                                    "torus:2x3",   "hypercube:1", "hypercube:3",
	                                    "hypercube:6"};
	static const long long ms[] = {0, 1, 100, 4096};
	int seen = 0;
	for (size_t si = 0; si < sizeof specs / sizeof *specs; si++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
		const int p = tc_topo_nodes(t);
		int dims[TC_TOPO_MAX_DIMS];
		int nd = tc_topo_dims(t, dims);
		for (int ports = 0; ports < 2; ports++)
			for (int sw = 0; sw < 2; sw++) {
				const long long ts = 150, tw = 3, th = 20;
				struct tc_model md =
				        ct_model((double)ts, (double)tw, (double)th,
				                 ports ? TC_PORTS_ALL : TC_PORTS_ONE,
				                 TC_DUPLEX_FULL, sw ? TC_SWITCH_CT : TC_SWITCH_SF);
				const long long h = sw ? th : 0;
				long qs[] = {0,     1, -1, 2,          3,        p / 2,
				             p - 1, 5, -5, 2L * p + 3, LONG_MAX, LONG_MIN};
				for (int a = 0; tc_alg_name(TC_COLL_SHIFT, a); a++) {
					const char *alg = tc_alg_name(TC_COLL_SHIFT, a);
					if (tc_alg_applies(t, &md, TC_COLL_SHIFT, alg) ||
					    !strcmp(alg, "direct") || ring_only(t, alg))
						continue;
					for (size_t qi = 0; qi < sizeof qs / sizeof *qs; qi++)
						for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
							long long m = ms[mi], want = 0;
							long q = qs[qi];
							if (!strcmp(alg, "ring"))
								want = f_ring(p, q, m, ts, tw, h);
							else if (!strcmp(alg, "torus"))
								want = f_torus(dims[0], dims[1], q,
								               m, ts, tw, h);
							else if (!strcmp(alg, "hypercube_ct"))
								want = f_ct(nd, q, m, ts, tw, th, sw);
							else
								cr_assert(0, "no closed form for %s", alg);
							struct tc_prediction pr;
							cr_assert_eq(predict(t, &md, alg, (size_t)m,
							                     q, &pr),
							             0);
							cr_assert_eq(pr.modelled_ps, want,
							             "%s %s ports %d sw %d q %ld m %lld: "
							             "%lld ps, want %lld",
							             specs[si], alg, ports, sw, q, m,
							             (long long)pr.modelled_ps, want);
							cr_assert(!isnan(pr.formula_ns));
							cr_assert_eq(pr.formula_ns * 1000.0,
							             (double)want, "%s %s formula %.1f",
							             specs[si], alg, pr.formula_ns);
							cr_assert_eq(pr.contention, 0, "%s %s q %ld",
							             specs[si], alg, q);
							if (!isnan(pr.lower_bound_ns))
								cr_assert_leq(pr.lower_bound_ns * 1000.0,
								              (double)pr.modelled_ps + 0.5);
							seen++;
						}
				}
			}
		tc_topo_destroy(t);
	}
	cr_assert_geq(seen, 1000);
}

/* Half duplex: the ring's step sends and receives on one port, so the
 * formula is withdrawn (one-port) and kept all-port with p >= 3. */
Test(model, half_duplex, .timeout = 60)
{
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse("ring:7", &t), 0);
	struct tc_model one = ct_model(100, 2, 10, TC_PORTS_ONE, TC_DUPLEX_HALF, TC_SWITCH_SF);
	struct tc_model all = ct_model(100, 2, 10, TC_PORTS_ALL, TC_DUPLEX_HALF, TC_SWITCH_SF);
	struct tc_prediction pr;
	cr_assert_eq(predict(t, &one, "ring", 64, 2, &pr), 0);
	cr_assert(isnan(pr.formula_ns));
	cr_assert_eq(predict(t, &all, "ring", 64, 2, &pr), 0);
	cr_assert_eq(pr.modelled_ps, f_ring(7, 2, 64, 100, 2, 0));
	cr_assert_eq(pr.formula_ns * 1000.0, (double)pr.modelled_ps);
	tc_topo_destroy(t);
}

/* [Gergel-shift] (3.21): under cut-through the e-cube routes of a q-shift are at
 * most d - gamma(q) links long and never share a link at the same time, so
 * the shift costs t_s + t_w m + t_h (d - gamma(q)), for every q. */
Test(model, gamma_claim, .timeout = 120)
{
	for (int d = 1; d <= 8; d++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", d);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(spec, &t), 0);
		const int p = 1 << d;
		for (int ports = 0; ports < 2; ports++) {
			struct tc_model md = ct_model(100, 2, 10, ports ? TC_PORTS_ALL : TC_PORTS_ONE,
			                              TC_DUPLEX_FULL, TC_SWITCH_CT);
			for (int q = 0; q < p; q++) {
				struct tc_prediction pr;
				cr_assert_eq(predict(t, &md, "hypercube_ct", 64, q, &pr), 0);
				long long want =
				        q ? (100 + 2 * 64 + 10LL * (d - gamma_of(q))) * 1000 : 0;
				cr_assert_eq(pr.modelled_ps, want, "d %d q %d: %lld", d, q,
				             (long long)pr.modelled_ps);
				cr_assert_eq(pr.contention, 0, "d %d q %d: link %d -> %d", d, q,
				             pr.contention_from, pr.contention_to);
			}
		}
		tc_topo_destroy(t);
	}
}

/* tc_call.q is a long: LONG_MAX and LONG_MIN are taken mod p. */
Test(model, long_q, .timeout = 60)
{
	static const char *const specs[] = {"ring:7", "torus:3x5", "hypercube:4", "star:6"};
	for (size_t si = 0; si < sizeof specs / sizeof *specs; si++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
		const long p = tc_topo_nodes(t);
		struct tc_model md = ct_model(100, 2, 10, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
		const long qs[] = {LONG_MAX, LONG_MIN, LONG_MIN + 1};
		for (int a = -1; a < 0 || tc_alg_name(TC_COLL_SHIFT, a); a++) {
			const char *alg = a < 0 ? NULL : tc_alg_name(TC_COLL_SHIFT, a);
			for (size_t qi = 0; qi < 3; qi++) {
				struct tc_prediction big, red;
				int e1 = predict(t, &md, alg, 64, qs[qi], &big);
				int e2 = predict(t, &md, alg, 64, mod_p(qs[qi], p), &red);
				cr_assert_eq(e1, e2, "%s %s", specs[si], alg ? alg : "auto");
				if (e1)
					continue;
				cr_assert_eq(big.modelled_ps, red.modelled_ps, "%s %s q %ld",
				             specs[si], alg ? alg : "auto", qs[qi]);
				cr_assert_eq(big.messages, red.messages);
				cr_assert_eq(big.hop_messages, red.hop_messages);
			}
		}
		tc_topo_destroy(t);
	}
}

Test(auto, never_above_an_algorithm, .timeout = 60)
{
	static const int ps[] = {2, 4, 7, 8, 16, 64};
	for (size_t pi = 0; pi < sizeof ps / sizeof *ps; pi++) {
		char specs[NSPECS][32];
		int ns = tc_test_specs_for(ps[pi], specs, NSPECS);
		for (int si = 0; si < ns; si++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
			for (int sw = 0; sw < 2; sw++)
				for (size_t m = 1; m <= 4096; m *= 64)
					for (long q = -1; q <= ps[pi] / 2 + 1; q += 2) {
						struct tc_model md =
						        ct_model(100, 2, 10, TC_PORTS_ONE, TC_DUPLEX_FULL,
						                 sw ? TC_SWITCH_CT : TC_SWITCH_SF);
						struct tc_prediction au, pr;
						cr_assert_eq(predict(t, &md, NULL, m, q, &au), 0);
						for (int a = 0; tc_alg_name(TC_COLL_SHIFT, a); a++) {
							const char *alg = tc_alg_name(TC_COLL_SHIFT, a);
							if (predict(t, &md, alg, m, q, &pr))
								continue;
							/* direct is a fallback (TC__ALG_FALLBACK):
							 * AUTO takes it only where nothing else
							 * applies. */
							if (!strcmp(alg, "direct") &&
							    strcmp(au.algorithm, "direct"))
								continue;
							cr_assert_leq(au.modelled_ps, pr.modelled_ps,
							              "%s %s m=%zu q %ld",
							              specs[si], alg, m, q);
						}
					}
			tc_topo_destroy(t);
		}
	}
}

/* ---- shift_ring: q counts positions along the topology's ring ------------------ */

/* Results against the reference (position i is rank G(i) on the hypercube,
 * rank i on a ring or complete graph) for every algorithm that applies with
 * shift_ring (and AUTO); which ones apply: ring, hypercube_gray(_bw) and
 * direct on the hypercube, hypercube_ct and torus never. */
Test(shift_ring, results, .timeout = 120)
{
	static const char *const specs[] = {"hypercube:1", "hypercube:2", "hypercube:3",
	                                    "hypercube:4", "hypercube:5", "hypercube:6",
	                                    "ring:5",      "ring:8",      "complete:7",
	                                    "complete:8"};
	static const size_t counts[] = {0, 1, 7, 64, 1000};
	struct tc_model md;
	tc_model_default(&md);
	int k = 0;
	for (size_t si = 0; si < sizeof specs / sizeof *specs; si++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
		const int p = tc_topo_nodes(t), cube = tc_topo_kind(t) == TC_TOPO_HYPERCUBE;
		char msg[512];
		struct tc_team *team = ct_team(specs[si], NULL, msg, sizeof msg);
		cr_assert(team, "%s", msg);
		for (int a = -1; a < 0 || tc_alg_name(TC_COLL_SHIFT, a); a++) {
			const char *alg = a < 0 ? NULL : tc_alg_name(TC_COLL_SHIFT, a);
			struct tc_prediction pr;
			int err = predict_r(t, &md, alg, 8, 1, 1, &pr);
			int want = 0;
			if (alg && (!strcmp(alg, "torus") || !strcmp(alg, "hypercube_ct")))
				want = TC_ENOTSUP;
			else if (alg && !cube && !strncmp(alg, "hypercube_gray", 14))
				want = TC_ENOTSUP;
			cr_assert_eq(err, want, "%s %s: %d", specs[si], alg ? alg : "auto", err);
			if (err)
				continue;
			const int qs[] = {0,     1,     -1, 2,       3,      p / 2,
			                  p - 1, p + 5, -7, INT_MAX, INT_MIN};
			const int nq = (int)(sizeof qs / sizeof *qs);
			for (int qi = 0; qi < nq; qi++) {
				cr_assert_eq(predict_r(t, &md, alg, 8, qs[qi], 1, &pr), 0);
				cr_assert_eq(pr.nodup_violations, 0, "%s %s q %d", specs[si],
				             pr.algorithm, qs[qi]);
				cr_assert_eq(pr.noho_violations, 0);
				cr_assert_eq(pr.oneport_violations, 0);
				size_t count = counts[k % 5];
				if (p > 16 && count > 64)
					count = 64;
				struct ct_case c = {.coll = TC_COLL_SHIFT,
				                    .alg = alg,
				                    .count = count,
				                    .dt = ct_dtypes[k % ct_ndtypes],
				                    .in_place = (k / 2) % 2,
				                    .iters = 1,
				                    .seed = (uint64_t)k + 1,
				                    .q = qs[qi],
				                    .shift_ring = cube ? 2 : 1};
				k++;
				cr_assert_eq(ct_run(team, &c, msg, sizeof msg), 0,
				             "%s %s q %d count %zu: %s", specs[si],
				             alg ? alg : "auto", qs[qi], count, msg);
			}
		}
		tc_team_destroy(team);
		tc_topo_destroy(t);
	}
}

/* [Gergel-shift] (3.20) forward: one stage per binary digit of q, 2 links, 1 for
 * the digit of 1.  [Barnat-IB109] backward: the signed digits (in {-1, 0, 1}, mod
 * 2^d) with the fewest links, found here by brute force over all 3^d digit
 * vectors; links[q] and stages[q] of the best per residue. */
static void gray_brute(int d, int *links, int *stages)
{
	const int p = 1 << d;
	for (int q = 0; q < p; q++)
		links[q] = stages[q] = INT_MAX;
	int n3 = 1;
	for (int i = 0; i < d; i++)
		n3 *= 3;
	for (int v = 0; v < n3; v++) {
		long val = 0;
		int l = 0, st = 0;
		for (int i = 0, x = v; i < d; i++, x /= 3) {
			int e = x % 3 - 1;
			val += e * (1L << i); /* e may be -1: no shift of a negative */
			if (e) {
				l += i ? 2 : 1;
				st++;
			}
		}
		int q = (int)mod_p(val, p);
		if (l < links[q] || (l == links[q] && st < stages[q])) {
			links[q] = l;
			stages[q] = st;
		}
	}
}

static int popc(unsigned x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

Test(shift_ring, cost, .timeout = 120)
{
	static int blinks[256], bstages[256];
	const long long ts = 150, tw = 3, th = 20;
	static const long long ms[] = {0, 64, 1000};
	long seen = 0;
	for (int d = 1; d <= 8; d++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", d);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(spec, &t), 0);
		const int p = 1 << d;
		gray_brute(d, blinks, bstages);
		/* [Gergel-shift]: positions 2^i apart are 2 links apart (1 for i = 0) */
		for (int i = 0; i < d; i++)
			for (int j = 0; j < p; j++)
				cr_assert_eq(tc_topo_distance(t, (int)tc_gray((uint32_t)j),
				                              (int)tc_gray((uint32_t)((j + (1 << i)) % p))),
				             i ? 2 : 1, "d %d i %d j %d", d, i, j);
		for (int ports = 0; ports < 2; ports++)
			for (int sw = 0; sw < 2; sw++) {
				struct tc_model md =
				        ct_model((double)ts, (double)tw, (double)th,
				                 ports ? TC_PORTS_ALL : TC_PORTS_ONE,
				                 TC_DUPLEX_FULL, sw ? TC_SWITCH_CT : TC_SWITCH_SF);
				for (int q = 0; q < p; q += d <= 6 ? 1 : 7)
					for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
						const long long m = ms[mi], u = ts + tw * m;
						const int fl = (q & 1) + 2 * popc((unsigned)q >> 1);
						const int fs = popc((unsigned)q);
						const long long fwd =
						        (sw ? fs * u + fl * th : fl * u) * 1000;
						const long long bw = (sw ? bstages[q] * u + blinks[q] * th
						                         : blinks[q] * u) *
						                     1000;
						const long s = lmin(q, p - q);
						const long long ring = s * (u + (sw ? th : 0)) * 1000;
						/* [Barnat-IB109]'s bounds (SF) */
						cr_assert_leq(fl * u, 2 * d * u);
						cr_assert_leq(blinks[q] * u, d * u, "d %d q %d", d, q);
						cr_assert_leq(bstages[q], (d + 1) / 2, "d %d q %d", d, q);
						cr_assert_leq(bw, fwd);
						const char *algs[] = {"hypercube_gray",
						                      "hypercube_gray_bw", "ring"};
						const long long want[] = {fwd, bw, ring};
						for (int a = 0; a < 3; a++) {
							struct tc_prediction pr;
							cr_assert_eq(predict_r(t, &md, algs[a],
							                       (size_t)m, q, 1, &pr),
							             0);
							cr_assert_eq(pr.modelled_ps, want[a],
							             "d %d %s ports %d sw %d q %d m %lld: "
							             "%lld ps, want %lld",
							             d, algs[a], ports, sw, q, m,
							             (long long)pr.modelled_ps,
							             want[a]);
							if (!isnan(pr.formula_ns))
								cr_assert_eq(pr.formula_ns * 1000.0,
								             (double)want[a],
								             "d %d %s q %d", d,
								             algs[a], q);
							else
								cr_assert(!strcmp(algs[a], "ring") &&
								          p == 2 && !ports);
							cr_assert_eq(pr.contention, 0,
							             "d %d %s q %d", d, algs[a], q);
							seen++;
						}
						/* AUTO with shift_ring is never above any of them */
						struct tc_prediction au;
						cr_assert_eq(predict_r(t, &md, NULL, (size_t)m, q, 1, &au),
						             0);
						cr_assert_leq(au.modelled_ps, bw);
						cr_assert_leq(au.modelled_ps, ring);
					}
			}
		tc_topo_destroy(t);
	}
	cr_assert_geq(seen, 3000);
}

/* shift_ring where the topology has no ring (mesh, star, tree, torus):
 * every algorithm and AUTO refuse; hypercube_ct and torus refuse it on
 * their own topologies. */
Test(shift_ring, refused, .timeout = 60)
{
	static const char *const specs[] = {"mesh:3x4", "mesh:4x4", "torus:4x4", "star:6"};
	struct tc_model md;
	tc_model_default(&md);
	struct tc_prediction pr;
	for (size_t si = 0; si < sizeof specs / sizeof *specs; si++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
		for (int a = -1; a < 0 || tc_alg_name(TC_COLL_SHIFT, a); a++) {
			const char *alg = a < 0 ? NULL : tc_alg_name(TC_COLL_SHIFT, a);
			cr_assert_eq(predict_r(t, &md, alg, 8, 3, 1, &pr), TC_ENOTSUP, "%s %s",
			             specs[si], alg ? alg : "auto");
		}
		tc_topo_destroy(t);
	}
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse("hypercube:4", &t), 0);
	cr_assert_eq(predict_r(t, &md, "hypercube_ct", 8, 3, 1, &pr), TC_ENOTSUP);
	cr_assert_eq(predict_r(t, &md, "hypercube_ct", 8, 3, 0, &pr), 0);
	cr_assert_eq(predict_r(t, &md, "hypercube_gray", 8, 3, 0, &pr), TC_ENOTSUP);
	cr_assert_eq(predict_r(t, &md, "hypercube_gray_bw", 8, 3, 0, &pr), TC_ENOTSUP);
	cr_assert_eq(predict_r(t, &md, "ring", 8, 3, 0, &pr), TC_ENOTSUP);
	tc_topo_destroy(t);
}

/* ---- errors ---------------------------------------------------------------------- */

struct err_arg {
	atomic_int bad;
};

static int err_fn(struct tc_proc *proc, void *argp)
{
	struct err_arg *a = argp;
	uint64_t sbuf[64], rbuf[64];
	for (int i = 0; i < 64; i++) {
		sbuf[i] = (uint64_t)i;
		rbuf[i] = 0xdeadbeefu;
	}
	struct tc_coll_opts none = {0}, bad = {.alg = "nope"}, torus = {.alg = "torus"},
	                    cube = {.alg = "hypercube_ct"};
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
	        {sbuf, rbuf, 1, &torus, TC_ENOTSUP}, /* torus on a ring */
	        {sbuf, rbuf, 1, &cube, TC_ENOTSUP},  /* hypercube_ct on a ring */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int err = tc_shift(proc, cases[i].s, cases[i].r, cases[i].count, TC_UINT64, 3,
		                   cases[i].o);
		if (err != cases[i].want)
			atomic_fetch_add(&a->bad, 1);
		for (int j = 0; j < 64; j++)
			if (rbuf[j] != 0xdeadbeefu || sbuf[j] != (uint64_t)j)
				atomic_fetch_add(&a->bad, 1);
	}
	return 0;
}

Test(errors, arguments, .timeout = 60)
{
	static const char *const specs[] = {"ring:1", "ring:3", "ring:8"};
	for (int i = 0; i < 3; i++) {
		char msg[256];
		struct tc_team *team = ct_team(specs[i], NULL, msg, sizeof msg);
		cr_assert(team, "%s", msg);
		struct err_arg a = {0};
		cr_assert_eq(tc_run(team, err_fn, &a), 0);
		cr_assert_eq(atomic_load(&a.bad), 0, "%s", specs[i]);
		tc_team_destroy(team);
	}
	struct tc_topo *t;
	struct tc_model md;
	tc_model_default(&md);
	struct tc_prediction pr;
	cr_assert_eq(tc_topo_parse("ring:8", &t), 0);
	cr_assert_eq(predict(t, &md, "nope", 8, 1, &pr), TC_EALG);
	cr_assert_eq(predict(t, &md, "torus", 8, 1, &pr), TC_ENOTSUP);
	cr_assert_eq(predict(t, &md, "hypercube_ct", 8, 1, &pr), TC_ENOTSUP);
	cr_assert_eq(predict(t, &md, "ring", 8, 1, &pr), 0);
	tc_topo_destroy(t);
	cr_assert_eq(tc_topo_parse("hypercube:3", &t), 0);
	cr_assert_eq(predict(t, &md, "ring", 8, 1, &pr), TC_ENOTSUP);
	cr_assert_eq(predict(t, &md, "torus", 8, 1, &pr), TC_ENOTSUP);
	cr_assert_eq(predict(t, &md, "hypercube_ct", 8, 1, &pr), 0);
	tc_topo_destroy(t);
	cr_assert_eq(tc_topo_parse("torus:2x2x2", &t), 0);
	cr_assert_eq(predict(t, &md, "torus", 8, 1, &pr), TC_ENOTSUP);
	tc_topo_destroy(t);
	cr_assert_eq(tc_topo_parse("complete:6", &t), 0);
	cr_assert_eq(predict(t, &md, "hypercube_ct", 8, 1, &pr), TC_ENOTSUP);
	cr_assert_eq(predict(t, &md, "ring", 8, 1, &pr), 0);
	tc_topo_destroy(t);
}
