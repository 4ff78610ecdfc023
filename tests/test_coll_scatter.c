/* SPDX-License-Identifier: MIT */
/*
 * Scatter and gather (its dual): results against the sequential reference
 * of tests/common/coll_ref.c for every algorithm of the registry, every
 * topology it applies to, p of the matrix, several roots, in place at the
 * root; the registry's restrictions against the generators; modelled times
 * against closed forms computed here from the sources; the [KKA-I] OAS lower
 * bound beside the predictions; AUTO; argument errors.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "coll_check.h"
#include "coll_ref.h"
#include "topocoll.h"
#include "util.h"

static const enum tc_coll colls[] = {TC_COLL_SCATTER, TC_COLL_GATHER};

/* Runs every algorithm of both collectives on spec (model md or default)
 * for the given counts and roots, in place and not. */
static void run_spec(const char *spec, const struct tc_model *md, const size_t *counts, int nc, int ndt)
{
	char msg[512];
	struct tc_team *t = ct_team(spec, md, msg, sizeof msg);
	cr_assert(t, "%s", msg);
	const struct tc_topo *topo = tc_team_topo(t);
	int p = tc_team_size(t);
	struct tc_model dm;
	tc_model_default(&dm);
	const struct tc_model *m = md ? md : &dm;
	int roots[3] = {0, p - 1, p / 2};
	for (int ci = 0; ci < 2; ci++) {
		for (int ai = -1;; ai++) {
			const char *alg = ai < 0 ? NULL : tc_alg_name(colls[ci], ai);
			if (ai >= 0 && !alg)
				break;
			if (alg && tc_alg_applies(topo, m, colls[ci], alg) != 0)
				continue;
			for (int k = 0; k < nc; k++)
				for (int ri = 0; ri < 3; ri++)
					for (int ip = 0; ip < 2; ip++) {
						/* Scatter in place: scatter_in_place() (the
						 * harness expects the block in the rbuf the
						 * root does not pass). */
						if (ip && colls[ci] == TC_COLL_SCATTER)
							continue;
						struct ct_case c = {.coll = colls[ci],
						                    .alg = alg,
						                    .count = counts[k],
						                    .dt = ct_dtypes[(k + ri + ip) % ndt],
						                    .root = roots[ri],
						                    .in_place = ip,
						                    .iters = 2,
						                    .seed = (uint64_t)(p * 131 +
						                                       k * 7 + ri)};
						cr_assert_eq(ct_run(t, &c, msg, sizeof msg), 0,
						             "%s %s/%s count %zu root %d in_place %d: %s",
						             spec, tc_coll_name(colls[ci]),
						             alg ? alg : "auto", counts[k],
						             roots[ri], ip, msg);
					}
		}
	}
	tc_team_destroy(t);
}

static void run_p(int p, const size_t *counts, int nc)
{
	char specs[16][32];
	int n = tc_test_specs_for(p, specs, 16);
	for (int i = 0; i < n; i++)
		run_spec(specs[i], NULL, counts, nc, ct_ndtypes);
}

Test(scatter, small_p, .timeout = 120)
{
	static const size_t counts[] = {0, 3};
	for (int p = 1; p <= 4; p++) {
		char specs[16][32];
		int n = tc_test_specs_for(p, specs, 16);
		for (int i = 0; i < n; i += 2)
			run_spec(specs[i], NULL, counts, 2, 2);
	}
}

Test(scatter, results_small, .timeout = 300)
{
	static const size_t counts[] = {0, 1, 7, 64, 1000};
	static const int ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16};
	for (int i = 0; i < 9; i++)
		run_p(ps[i], counts, 5);
}

Test(scatter, results_large_p, .timeout = 300)
{
	static const size_t counts[] = {0, 7, 64};
	static const int ps[] = {31, 32, 64};
	for (int i = 0; i < 3; i++)
		run_p(ps[i], counts, 3);
}

Test(scatter, large_count, .timeout = 120)
{
	static const size_t counts[] = {1 << 16};
	for (int p = 2; p <= 4; p++) {
		char s[32];
		snprintf(s, sizeof s, "complete:%d", p);
		run_spec(s, NULL, counts, 1, 1);
	}
	run_spec("hypercube:2", NULL, counts, 1, 1);
}

/* Scatter in place at the root: its block stays in sbuf, which is not
 * written; the other ranks get theirs.  (The harness's ct_expect() wants
 * the root's block in an rbuf the root does not pass, so this is checked
 * here.) */
struct ip_arg {
	struct failure f;
	const char *alg;
	int root;
	size_t count;
};

static int ip_fn(struct tc_proc *proc, void *argp)
{
	struct ip_arg *a = argp;
	int me = tc_rank(proc), p = tc_size(proc);
	size_t n = a->count;
	int32_t *x = malloc((size_t)p * n * sizeof *x + 4), *y = malloc(n * sizeof *y + 4);
	for (size_t i = 0; i < (size_t)p * n; i++)
		x[i] = (int32_t)(i * 2654435761u) ^ a->root;
	for (size_t i = 0; i < n; i++)
		y[i] = -1;
	struct tc_coll_opts o = {.alg = a->alg};
	for (int it = 0; it < 2; it++) {
		int err = tc_scatter(proc, me == a->root ? x : NULL,
		                     me == a->root ? (void *)TC_IN_PLACE : y, n, TC_INT32, a->root, &o);
		if (err)
			FAIL(&a->f, "%s rank %d: %s", a->alg, me, tc_err_name(err));
		for (size_t i = 0; i < (size_t)p * n && me == a->root; i++)
			if (x[i] != ((int32_t)(i * 2654435761u) ^ a->root))
				FAIL(&a->f, "%s: the root's sbuf was written", a->alg);
		for (size_t i = 0; i < n && me != a->root; i++)
			if (y[i] != ((int32_t)(((size_t)me * n + i) * 2654435761u) ^ a->root))
				FAIL(&a->f, "%s rank %d: element %zu", a->alg, me, i);
	}
	free(x);
	free(y);
	return 0;
}

Test(scatter, in_place, .timeout = 120)
{
	static const char *const specs[] = {"complete:1", "ring:2",     "ring:5",     "hypercube:3",
	                                    "mesh:2x3",   "complete:8", "hypercube:4"};
	struct tc_model all, one;
	tc_model_default(&all);
	tc_model_default(&one);
	all.ports = TC_PORTS_ALL;
	for (int si = 0; si < 7; si++)
		for (int mi = 0; mi < 2; mi++) {
			char msg[256];
			struct tc_team *t = ct_team(specs[si], mi ? &all : NULL, msg, sizeof msg);
			cr_assert(t, "%s", msg);
			int p = tc_team_size(t);
			for (int ai = -1; ai < 0 || tc_alg_name(TC_COLL_SCATTER, ai); ai++) {
				const char *alg = ai < 0 ? NULL : tc_alg_name(TC_COLL_SCATTER, ai);
				if (alg && tc_alg_applies(tc_team_topo(t), mi ? &all : &one,
				                          TC_COLL_SCATTER, alg))
					continue;
				int roots[3] = {0, p - 1, p / 2};
				for (int ri = 0; ri < 3; ri++) {
					struct ip_arg a = {.alg = alg, .root = roots[ri], .count = 5};
					cr_assert_eq(tc_run(t, ip_fn, &a), 0);
					cr_assert_eq(atomic_load(&a.f.n), 0, "%s: %s", specs[si],
					             a.f.msg);
				}
			}
			tc_team_destroy(t);
		}
}

/* The all-port algorithm only runs under the all-port model. */
Test(scatter, results_allport, .timeout = 120)
{
	static const size_t counts[] = {0, 1, 7, 64};
	struct tc_model md;
	tc_model_default(&md);
	md.ports = TC_PORTS_ALL;
	for (int d = 0; d <= 6; d++) {
		char s[32];
		snprintf(s, sizeof s, "hypercube:%d", d);
		run_spec(s, &md, counts, d <= 4 ? 4 : 3, ct_ndtypes);
	}
	run_spec("torus:3x5", &md, counts, 2, 2);
}

/* tc_alg_applies() agrees with the generators (through the predictor). */
Test(scatter, restrictions, .timeout = 60)
{
	struct tc_model one, all;
	tc_model_default(&one);
	tc_model_default(&all);
	all.ports = TC_PORTS_ALL;
	const struct tc_model *mds[2] = {&one, &all};
	for (int pi = 0; pi < TC_TEST_NPS; pi++) {
		int p = tc_test_ps[pi];
		char specs[16][32];
		int n = tc_test_specs_for(p, specs, 16);
		for (int i = 0; i < n; i++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[i], &t), 0);
			enum tc_topo_kind k = tc_topo_kind(t);
			int pow2 = (p & (p - 1)) == 0;
			for (int mi = 0; mi < 2; mi++)
				for (int ci = 0; ci < 2; ci++)
					for (int ai = 0; tc_alg_name(colls[ci], ai); ai++) {
						const char *alg = tc_alg_name(colls[ci], ai);
						int ap = tc_alg_applies(t, mds[mi], colls[ci], alg);
						struct tc_prediction pr;
						int err = tc_predict(t, mds[mi], colls[ci], alg, 8,
						                     1, p - 1, 0, &pr);
						cr_assert_eq(ap == 0, err == 0,
						             "%s %s: applies %d, predict %s",
						             specs[i], alg, ap, tc_strerror(err));
						int want = 1;
						if (!strcmp(alg, "ring"))
							want = k == TC_TOPO_RING ||
							       k == TC_TOPO_COMPLETE ||
							       k == TC_TOPO_HYPERCUBE;
						else if (!strcmp(alg, "hypercube"))
							want = pow2 && (k == TC_TOPO_HYPERCUBE ||
							                k == TC_TOPO_COMPLETE);
						else if (!strcmp(alg, "tree_allport") ||
						         !strcmp(alg, "tree_allport_comb"))
							want = k == TC_TOPO_HYPERCUBE && mi == 1;
						else if (!strcmp(alg, "shm")) /* shared memory */
							want = k == TC_TOPO_COMPLETE;
						cr_assert_eq(ap == 0, want, "%s %s", specs[i], alg);
					}
			tc_topo_destroy(t);
		}
	}
}

/* ---- cost ------------------------------------------------------------------ */

static tc_time_t ps_of(double ns)
{
	return (tc_time_t)llround(ns * 1000.0);
}

static void predict(const char *spec, const struct tc_model *md, enum tc_coll coll, const char *alg,
                    size_t m, int root, struct tc_prediction *pr)
{
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse(spec, &t), 0, "%s", spec);
	struct tc_call call = {.coll = coll, .alg = alg, .bytes = m, .esize = 1, .root = root};
	int err = tc_predict_call(t, md, &call, pr);
	cr_assert_eq(err, 0, "%s %s: %s", spec, alg, tc_strerror(err));
	tc_topo_destroy(t);
}

/* The models of the cost tests: t_s, t_w, t_h, switching (t_c irrelevant:
 * scatter and gather copy). */
static void models(struct tc_model *md, int i)
{
	tc_model_default(md);
	md->ts_ns = 1000.0 + 250.0 * i;
	md->tw_ns = 0.5 + i;
	md->th_ns = i >= 2 ? 40.0 : 0.0;
	md->tc_ns = 3.0;
	md->switching = i == 3 ? TC_SWITCH_CT : TC_SWITCH_SF;
	md->duplex = TC_DUPLEX_FULL;
}

Test(cost, closed_forms, .timeout = 120)
{
	static const size_t ms[] = {0, 1, 8, 1000};
	for (int mi = 0; mi < 4; mi++) {
		struct tc_model md;
		models(&md, mi);
		double ts = md.ts_ns, tw = md.tw_ns;
		double th = md.switching == TC_SWITCH_CT ? md.th_ns : 0.0;
		for (int k = 0; k < 4; k++) {
			double m = (double)ms[k];
			/* hypercube: t_s log p + t_w m (p-1) (+ t_h a step under CT). */
			for (int d = 0; d <= 6; d++) {
				int p = 1 << d;
				char s[2][32];
				snprintf(s[0], 32, "hypercube:%d", d);
				snprintf(s[1], 32, "complete:%d", p);
				double want = d * (ts + th) + tw * m * (p - 1);
				for (int si = 0; si < 2; si++)
					for (int ci = 0; ci < 2; ci++) {
						struct tc_prediction pr;
						predict(s[si], &md, colls[ci], "hypercube", ms[k],
						        p / 2, &pr);
						cr_assert_eq(pr.modelled_ps, ps_of(want),
						             "%s m %zu: %lld", s[si], ms[k],
						             (long long)pr.modelled_ps);
						cr_assert(fabs(pr.formula_ns - want) < 1e-6);
					}
			}
			/* ring: (p-1)(t_s + m t_w) (+ t_h a step under CT). */
			static const int ps[] = {1, 2, 3, 5, 8, 13, 16};
			for (int i = 0; i < 7; i++) {
				int p = ps[i];
				char s[3][32];
				snprintf(s[0], 32, "ring:%d", p);
				snprintf(s[1], 32, "complete:%d", p);
				int ns = 2;
				if ((p & (p - 1)) == 0) {
					snprintf(s[2], 32, "hypercube:%d", __builtin_ctz((unsigned)p));
					ns = 3;
				}
				double want = (p - 1) * (ts + m * tw + th);
				for (int si = 0; si < ns; si++)
					for (int ci = 0; ci < 2; ci++)
						for (int root = 0; root < p; root += p / 2 + 1) {
							struct tc_prediction pr;
							predict(s[si], &md, colls[ci], "ring",
							        ms[k], root, &pr);
							cr_assert_eq(pr.modelled_ps, ps_of(want),
							             "%s root %d m %zu: %lld",
							             s[si], root, ms[k],
							             (long long)pr.modelled_ps);
							cr_assert(fabs(pr.formula_ns - want) < 1e-6);
						}
			}
			/* linear on the complete graph: (p-1)(t_s + m t_w) under SF;
			 * routed elsewhere: between that and the blocking closed form. */
			for (int i = 0; i < 7; i++) {
				int p = ps[i];
				char s[32];
				snprintf(s, 32, "complete:%d", p);
				for (int ci = 0; ci < 2; ci++) {
					struct tc_prediction pr;
					predict(s, &md, colls[ci], "linear", ms[k], p - 1, &pr);
					if (md.switching == TC_SWITCH_SF) {
						double want = (p - 1) * (ts + m * tw);
						cr_assert_eq(pr.modelled_ps, ps_of(want), "%s", s);
						cr_assert(fabs(pr.formula_ns - want) < 1e-6);
					} else {
						cr_assert_leq(pr.modelled_ps, ps_of(pr.formula_ns));
					}
					snprintf(s, 32, "ring:%d", p);
					predict(s, &md, colls[ci], "linear", ms[k], p / 2, &pr);
					double lo = (p - 1) * (ts + m * tw);
					cr_assert_geq(pr.modelled_ps, ps_of(lo) - 1, "%s", s);
					cr_assert_leq(pr.modelled_ps, ps_of(pr.formula_ns) + 1, "%s", s);
					snprintf(s, 32, "complete:%d", p);
				}
			}
			/* tree_allport: ceil((p-1)/n)(t_s + m t_w) (+ t_h) all-port. */
			struct tc_model ap = md;
			ap.ports = TC_PORTS_ALL;
			for (int d = 1; d <= 6; d++) {
				int p = 1 << d;
				char s[32];
				snprintf(s, 32, "hypercube:%d", d);
				double want = ((p - 1 + d - 1) / d) * (ts + m * tw + th);
				for (int ci = 0; ci < 2; ci++)
					for (int root = 0; root < p; root += p / 2 + 1) {
						struct tc_prediction pr;
						predict(s, &ap, colls[ci], "tree_allport", ms[k],
						        root, &pr);
						cr_assert(fabs(pr.formula_ns - want) < 1e-6);
						if (ap.switching == TC_SWITCH_SF) {
							cr_assert_eq(pr.modelled_ps, ps_of(want),
							             "%s root %d m %zu: %lld", s, root,
							             ms[k], (long long)pr.modelled_ps);
						} else {
							/* CT: a port is free after t_s + m t_w, the
							 * t_h of successive sends overlap (header of
							 * scatter_tree_allport.c). */
							double lo =
							        ((p - 1 + d - 1) / d) * (ts + m * tw) + th;
							cr_assert_leq(pr.modelled_ps, ps_of(want));
							cr_assert_geq(pr.modelled_ps, ps_of(lo));
						}
						cr_assert_eq(pr.nodup_violations, 0);
						cr_assert_eq(pr.noho_violations, 0);
						cr_assert_eq(pr.contention, 0, "%s", s);
					}
			}
		}
	}
}

/* gather = scatter's modelled time (t_c does not matter: nothing combines),
 * for every algorithm, topology and root; checker clean for the scatter. */
Test(cost, gather_equals_scatter, .timeout = 120)
{
	static const int ps[] = {1, 2, 3, 4, 7, 8, 16, 64};
	for (int mi = 0; mi < 4; mi++) {
		struct tc_model md;
		models(&md, mi);
		for (int port = 0; port < 2; port++) {
			md.ports = port ? TC_PORTS_ALL : TC_PORTS_ONE;
			for (int i = 0; i < 8; i++) {
				char specs[16][32];
				int n = tc_test_specs_for(ps[i], specs, 16);
				for (int si = 0; si < n; si++) {
					struct tc_topo *t;
					cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
					for (int ai = 0; tc_alg_name(TC_COLL_SCATTER, ai); ai++) {
						const char *alg = tc_alg_name(TC_COLL_SCATTER, ai);
						if (tc_alg_applies(t, &md, TC_COLL_SCATTER, alg))
							continue;
						struct tc_prediction a, b;
						int root = ps[i] / 2;
						predict(specs[si], &md, TC_COLL_SCATTER, alg, 24,
						        root, &a);
						predict(specs[si], &md, TC_COLL_GATHER, alg, 24,
						        root, &b);
						/* linear routed: the reversed one-round schedule
						 * overlaps differently (scatter_linear.c). */
						if (strcmp(alg, "linear") ||
						    tc_topo_kind(t) == TC_TOPO_COMPLETE)
							cr_assert_eq(a.modelled_ps, b.modelled_ps,
							             "%s %s", specs[si], alg);
						else
							cr_assert_leq(b.modelled_ps,
							              ps_of(b.formula_ns) + 1, "%s",
							              specs[si]);
						cr_assert_eq(a.nodup_violations, 0, "%s %s",
						             specs[si], alg);
						cr_assert_eq(a.noho_violations, 0, "%s %s",
						             specs[si], alg);
					}
					tc_topo_destroy(t);
				}
			}
		}
	}
}

/* [KKA-I]'s OAS lower bound is reported beside the predictions and never
 * above them, on hypercubes, meshes and tori. */
Test(cost, lower_bound, .timeout = 60)
{
	static const char *const specs[] = {"hypercube:3", "hypercube:4", "mesh:4x4",
	                                    "torus:4x4",   "mesh:2x3",    "torus:3x5"};
	for (int mi = 0; mi < 4; mi++)
		for (int port = 0; port < 2; port++) {
			struct tc_model md;
			models(&md, mi);
			md.ports = port ? TC_PORTS_ALL : TC_PORTS_ONE;
			for (int si = 0; si < 6; si++) {
				struct tc_topo *t;
				cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
				for (int ci = 0; ci < 2; ci++)
					for (int ai = 0; tc_alg_name(colls[ci], ai); ai++) {
						const char *alg = tc_alg_name(colls[ci], ai);
						if (tc_alg_applies(t, &md, colls[ci], alg))
							continue;
						struct tc_prediction pr;
						predict(specs[si], &md, colls[ci], alg, 16, 0, &pr);
						cr_assert(!isnan(pr.lower_bound_ns), "%s %s",
						          specs[si], alg);
						cr_assert_leq(ps_of(pr.lower_bound_ns),
						              pr.modelled_ps + 1,
						              "%s %s %s: bound %g > %lld",
						              specs[si], tc_coll_name(colls[ci]),
						              alg, pr.lower_bound_ns,
						              (long long)pr.modelled_ps);
					}
				tc_topo_destroy(t);
			}
		}
}

/* AUTO never predicts a makespan above any applicable algorithm's. */
Test(cost, auto_is_cheapest, .timeout = 60)
{
	static const int ps[] = {2, 5, 8, 16};
	for (int mi = 0; mi < 4; mi++) {
		struct tc_model md;
		models(&md, mi);
		for (int i = 0; i < 4; i++) {
			char specs[16][32];
			int n = tc_test_specs_for(ps[i], specs, 16);
			for (int si = 0; si < n; si++)
				for (int ci = 0; ci < 2; ci++) {
					struct tc_prediction au;
					predict(specs[si], &md, colls[ci], NULL, 40, 1, &au);
					struct tc_topo *t;
					cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
					for (int ai = 0; tc_alg_name(colls[ci], ai); ai++) {
						const char *alg = tc_alg_name(colls[ci], ai);
						/* shm: AUTO weighs it on native teams with a
						 * CPU per rank only, never in a prediction. */
						if (tc_alg_applies(t, &md, colls[ci], alg) ||
						    !strcmp(alg, "shm"))
							continue;
						struct tc_prediction pr;
						predict(specs[si], &md, colls[ci], alg, 40, 1, &pr);
						cr_assert_leq(au.modelled_ps, pr.modelled_ps,
						              "%s %s", specs[si], alg);
					}
					tc_topo_destroy(t);
				}
		}
	}
}

/* ---- errors ---------------------------------------------------------------- */

struct err_arg {
	struct failure f;
};

#define EXPECT(call, code)                                                                     \
	do {                                                                                   \
		int e_ = (call);                                                               \
		if (e_ != (code))                                                              \
			FAIL(&a->f, "rank %d: %s gave %s, not %s", me, #call, tc_err_name(e_), \
			     tc_err_name(code));                                               \
	} while (0)

static int err_fn(struct tc_proc *proc, void *argp)
{
	struct err_arg *a = argp;
	int me = tc_rank(proc), p = tc_size(proc);
	int32_t x[64], y[64];
	for (int i = 0; i < 64; i++)
		x[i] = y[i] = -7;
	struct tc_coll_opts bad = {.alg = "no_such_algorithm"};
	struct tc_coll_opts ring = {.alg = "ring"};
	struct tc_coll_opts bname = {.alg = "binomial"};
	for (int ci = 0; ci < 2; ci++) {
		int (*f)(struct tc_proc *, const void *, void *, size_t, enum tc_dtype, int,
		         const struct tc_coll_opts *) = ci ? tc_gather : tc_scatter;
		EXPECT(f(proc, x, y, 2, TC_INT32, p, NULL), TC_EROOT);
		EXPECT(f(proc, x, y, 2, TC_INT32, -1, NULL), TC_EROOT);
		EXPECT(f(proc, x, y, 2, TC_INT32, 0, &bad), TC_EALG);
		EXPECT(f(proc, x, y, 2, TC_INT32, 0, &bname), TC_EALG);
		EXPECT(f(proc, x, y, 2, TC_INT32, 0, &ring), TC_ENOTSUP); /* mesh:2x3 */
		EXPECT(f(proc, x, y, SIZE_MAX / 2, TC_INT32, 0, NULL), TC_EOVERFLOW);
		EXPECT(f(proc, x, y, 2, TC_DTYPE_COUNT, 0, NULL), TC_EINVAL);
		EXPECT(f(NULL, x, y, 2, TC_INT32, 0, NULL), TC_EINVAL);
	}
	/* NULL buffers where every rank needs one. */
	EXPECT(tc_scatter(proc, x, NULL, 2, TC_INT32, 0, NULL), TC_ENULLBUF);
	EXPECT(tc_gather(proc, NULL, y, 2, TC_INT32, 0, NULL), TC_ENULLBUF);
	/* Errors only one rank can see are checked before any communication:
	 * that rank alone calls (the others would wait for it). */
	if (me == 0) { /* the root's own buffers */
		EXPECT(tc_scatter(proc, NULL, y, 2, TC_INT32, 0, NULL), TC_ENULLBUF);
		EXPECT(tc_gather(proc, x, NULL, 2, TC_INT32, 0, NULL), TC_ENULLBUF);
	}
	if (me == 1) { /* TC_IN_PLACE off the root */
		EXPECT(tc_scatter(proc, x, (void *)TC_IN_PLACE, 2, TC_INT32, 0, NULL), TC_EINVAL);
		EXPECT(tc_gather(proc, TC_IN_PLACE, y, 2, TC_INT32, 0, NULL), TC_EINVAL);
	}
	EXPECT(tc_barrier(proc, NULL), 0);
	for (int i = 0; i < 64; i++)
		if (x[i] != -7 || y[i] != -7)
			FAIL(&a->f, "rank %d: a failed call wrote its buffers", me);
	/* Count 0 needs no buffers. */
	EXPECT(tc_scatter(proc, NULL, NULL, 0, TC_INT32, 0, NULL), 0);
	EXPECT(tc_gather(proc, NULL, NULL, 0, TC_INT32, 0, NULL), 0);
	/* A real call still works. */
	for (int i = 0; i < 2 * p; i++)
		x[i] = i;
	EXPECT(tc_scatter(proc, x, y, 2, TC_INT32, 0, NULL), 0);
	if (y[0] != 2 * me || y[1] != 2 * me + 1)
		FAIL(&a->f, "rank %d: scatter after the errors", me);
	return 0;
}

Test(errors, arguments, .timeout = 60)
{
	char msg[256];
	struct tc_team *t = ct_team("mesh:2x3", NULL, msg, sizeof msg);
	cr_assert(t, "%s", msg);
	struct err_arg a = {0};
	cr_assert_eq(tc_run(t, err_fn, &a), 0);
	cr_assert_eq(atomic_load(&a.f.n), 0, "%s", a.f.msg);
	tc_team_destroy(t);
}

/* ---- tree_allport_comb: the combining variant of [KKA-I]'s trees ------- */

/* S_h, h = 1 .. n, for Q_n (n = 1 .. 6): the largest number of blocks
 * moved along a root path to depth h, summed over the subtree sizes on the
 * path, of the greedy trees of scatter_tree_allport.c; computed apart from
 * the library (a separate script building the trees from the header's
 * rule). */
static const long comb_paths[7][6] = {
        {0}, {1}, {2, 3}, {3, 5, 6}, {4, 7, 9, 10}, {7, 13, 16, 18, 19}, {11, 21, 26, 29, 31, 32},
};

/* The combining variant's closed form (its header): max_h (h (t_s + t_h)
 * + S_h m t_w), t_h under cut-through only. */
static double comb_want(const struct tc_model *md, int d, double m)
{
	double th = md->switching == TC_SWITCH_CT ? md->th_ns : 0.0, want = 0.0;
	for (int h = 1; h <= d; h++) {
		double t = h * (md->ts_ns + th) + (double)comb_paths[d][h - 1] * m * md->tw_ns;
		want = t > want ? t : want;
	}
	return want;
}

/* The models of the combining tests: models(i) all-port, combining, full
 * duplex (hd 0) or half (hd 1). */
static void comb_model(struct tc_model *md, int i, int hd)
{
	models(md, i);
	md->ports = TC_PORTS_ALL;
	md->combining = 1;
	md->duplex = hd ? TC_DUPLEX_HALF : TC_DUPLEX_FULL;
}

/* Runs tree_allport_comb alone (and AUTO when auto_too) on Q_d under md:
 * scatter and gather, roots 0, p-1, p/2, 5 mod p, in place (gather) and not. */
static void run_comb(int d, const struct tc_model *md, const size_t *counts, int nc, int auto_too)
{
	char spec[32], msg[512];
	snprintf(spec, sizeof spec, "hypercube:%d", d);
	struct tc_team *t = ct_team(spec, md, msg, sizeof msg);
	cr_assert(t, "%s", msg);
	int p = tc_team_size(t);
	int roots[4] = {0, p - 1, p / 2, 5 % p};
	for (int ci = 0; ci < 2; ci++)
		for (int ai = 0; ai < 1 + auto_too; ai++)
			for (int k = 0; k < nc; k++)
				for (int ri = 0; ri < 4; ri++)
					for (int ip = 0; ip < 2; ip++) {
						if (ip && colls[ci] == TC_COLL_SCATTER)
							continue;
						const char *alg = ai ? NULL : "tree_allport_comb";
						struct ct_case c = {.coll = colls[ci],
						                    .alg = alg,
						                    .count = counts[k],
						                    .dt = ct_dtypes[(k + ri + ip) % ct_ndtypes],
						                    .root = roots[ri],
						                    .in_place = ip,
						                    .iters = 2,
						                    .seed = (uint64_t)(p * 17 +
						                                       k * 5 + ri)};
						cr_assert_eq(ct_run(t, &c, msg, sizeof msg), 0,
						             "%s %s/%s count %zu root %d in_place %d: %s",
						             spec, tc_coll_name(colls[ci]),
						             alg ? alg : "auto", counts[k],
						             roots[ri], ip, msg);
					}
	tc_team_destroy(t);
}

/* Under ThreadSanitizer in the race suite ("small_p"): p <= 4. */
Test(scatter, comb_small_p, .timeout = 120)
{
	static const size_t counts[] = {0, 3};
	struct tc_model md;
	comb_model(&md, 0, 0);
	for (int d = 0; d <= 2; d++)
		run_comb(d, &md, counts, 2, 0);
}

Test(scatter, comb_results, .timeout = 300)
{
	static const size_t counts[] = {0, 1, 7, 64, 1000};
	for (int d = 0; d <= 6; d++) {
		struct tc_model md;
		comb_model(&md, d % 4, d & 1); /* SF and CT, full and half duplex */
		run_comb(d, &md, counts, d <= 4 ? 5 : 3, d == 3);
	}
	static const size_t big[] = {1 << 16};
	struct tc_model md;
	comb_model(&md, 0, 0);
	for (int d = 1; d <= 2; d++)
		run_comb(d, &md, big, 1, 0);
}

/* The combining token (TC__R_COMBINING): under an all-port non-combining
 * model tc_alg_applies() and the generator both refuse (TC_ENOTSUP) and
 * AUTO goes without it; with combining, both accept. */
Test(scatter, comb_restrictions, .timeout = 60)
{
	for (int d = 0; d <= 6; d++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", d);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(spec, &t), 0);
		for (int comb = 0; comb < 2; comb++) {
			struct tc_model md;
			comb_model(&md, 0, 0);
			md.combining = comb;
			for (int ci = 0; ci < 2; ci++) {
				cr_assert_eq(tc_alg_applies(t, &md, colls[ci], "tree_allport_comb"),
				             comb ? 0 : TC_ENOTSUP);
				struct tc_prediction pr;
				int err = tc_predict(t, &md, colls[ci], "tree_allport_comb", 8, 1,
				                     0, 0, &pr);
				cr_assert_eq(err, comb ? 0 : TC_ENOTSUP, "%s %d: %s", spec, comb,
				             tc_strerror(err));
				cr_assert_eq(tc_predict(t, &md, colls[ci], NULL, 0, 1, 0, 0, &pr), 0);
				if (!comb)
					cr_assert_str_neq(pr.algorithm, "tree_allport_comb");
			}
		}
		tc_topo_destroy(t);
	}
}

/* Modelled time == the closed form computed here, for every root, SF and
 * CT, full and half duplex; tc__f_ (formula_ns) the same; [KKA-I]'s
 * Lemma 8 bound below; gather == scatter; checker clean. */
Test(cost, comb_closed_form, .timeout = 120)
{
	static const size_t ms[] = {0, 1, 8, 1000};
	for (int mi = 0; mi < 4; mi++)
		for (int hd = 0; hd < 2; hd++) {
			struct tc_model md;
			comb_model(&md, mi, hd);
			for (int d = 0; d <= 6; d++) {
				int p = 1 << d;
				char s[32];
				snprintf(s, 32, "hypercube:%d", d);
				for (int k = 0; k < 4; k++) {
					double m = (double)ms[k], want = comb_want(&md, d, m);
					for (int root = 0; root < p; root += p / 4 + 1)
						for (int ci = 0; ci < 2; ci++) {
							struct tc_prediction pr;
							predict(s, &md, colls[ci], "tree_allport_comb",
							        ms[k], root, &pr);
							cr_assert_eq(pr.modelled_ps, ps_of(want),
							             "%s %s root %d m %zu model %d/%d: %lld != %g",
							             s, tc_coll_name(colls[ci]),
							             root, ms[k], mi, hd,
							             (long long)pr.modelled_ps, want);
							cr_assert(fabs(pr.formula_ns - want) < 1e-6,
							          "%s: %g", s, pr.formula_ns);
							/* Lemma 8: rho_OAB t_s + ceil((p-1)/n) m t_w + [WH]
							 * n t_h; rho_OAB = n under SF (Lemma 2: exc),
							 * ceil(log_{n+1} 2^n) under WH (Lemma 4). */
							int ct = md.switching == TC_SWITCH_CT, rho = d;
							if (ct)
								for (rho = 0; pow(d + 1, rho) < p; rho++)
									;
							double lb =
							        d ? rho * md.ts_ns +
							                        d * (ct ? md.th_ns : 0.0) +
							                        ((p - 1 + d - 1) / d) *
							                                m * md.tw_ns
							          : 0.0;
							/* The reported bound holds for every algorithm
							 * (tc_lower_bound_any), so at most Lemma 8's. */
							cr_assert(pr.lower_bound_ns <= lb + 1e-6,
							          "%s %s m %zu model %d/%d: bound %g, Lemma 8 %g",
							          s, tc_coll_name(colls[ci]), ms[k],
							          mi, hd, pr.lower_bound_ns, lb);
							cr_assert_leq(ps_of(pr.lower_bound_ns),
							              pr.modelled_ps);
							cr_assert_eq(pr.contention, 0, "%s", s);
							cr_assert_eq(pr.oneport_violations, 0);
							if (ci == 0) {
								cr_assert_eq(pr.nodup_violations, 0);
								cr_assert_eq(pr.noho_violations, 0);
								cr_assert_eq(pr.messages, p - 1, "%s", s);
								cr_assert_eq(pr.rounds,
								             d ? d + 1 : 1, "%s", s);
							}
						}
				}
			}
		}
}

/* AUTO under all-port combining models: never above any applicable
 * algorithm, so never above the cheaper of the two tree variants; the
 * combining one wins where its closed form is below the non-combining's
 * (small blocks, n >= 5), the non-combining one at large blocks. */
Test(cost, comb_auto, .timeout = 120)
{
	static const size_t ms[] = {0, 1, 8, 64, 1000};
	for (int mi = 0; mi < 4; mi++)
		for (int hd = 0; hd < 2; hd++) {
			struct tc_model md;
			comb_model(&md, mi, hd);
			for (int d = 1; d <= 6; d++) {
				char s[32];
				snprintf(s, 32, "hypercube:%d", d);
				struct tc_topo *t;
				cr_assert_eq(tc_topo_parse(s, &t), 0);
				for (int k = 0; k < 5; k++)
					for (int ci = 0; ci < 2; ci++) {
						struct tc_prediction au, pr, tr, co;
						predict(s, &md, colls[ci], NULL, ms[k], 1, &au);
						for (int ai = 0; tc_alg_name(colls[ci], ai); ai++) {
							const char *alg = tc_alg_name(colls[ci], ai);
							if (tc_alg_applies(t, &md, colls[ci], alg))
								continue;
							predict(s, &md, colls[ci], alg, ms[k], 1, &pr);
							cr_assert_leq(au.modelled_ps, pr.modelled_ps,
							              "%s %s m %zu", s, alg, ms[k]);
						}
						predict(s, &md, colls[ci], "tree_allport", ms[k], 1, &tr);
						predict(s, &md, colls[ci], "tree_allport_comb",
						        ms[k], 1, &co);
						tc_time_t lo = tr.modelled_ps < co.modelled_ps
						                       ? tr.modelled_ps
						                       : co.modelled_ps;
						cr_assert_leq(au.modelled_ps, lo);
					}
				tc_topo_destroy(t);
			}
		}
	/* Q_6, SF, t_s 1000, t_w 0.5: 6 t_s + 32 m t_w against 11 (t_s + m t_w):
	 * the combining one at m = 8 (6128 < 11044), not at m = 1000. */
	struct tc_model md;
	comb_model(&md, 0, 0);
	struct tc_prediction pr;
	predict("hypercube:6", &md, TC_COLL_SCATTER, "tree_allport_comb", 8, 0, &pr);
	cr_assert_eq(pr.modelled_ps, ps_of(6 * 1000.0 + 32 * 8 * 0.5));
	predict("hypercube:6", &md, TC_COLL_SCATTER, "tree_allport", 8, 0, &pr);
	cr_assert_eq(pr.modelled_ps, ps_of(11 * (1000.0 + 8 * 0.5)));
	predict("hypercube:6", &md, TC_COLL_SCATTER, "tree_allport_comb", 1000, 0, &pr);
	cr_assert_gt(pr.modelled_ps, ps_of(11 * (1000.0 + 1000 * 0.5)));
}

/* Argument errors through tree_allport_comb on Q_3: the code on every rank,
 * nothing written; TC_ENOTSUP under a non-combining model. */
struct comb_err_arg {
	struct failure f;
	int combining;
};

static int comb_err_fn(struct tc_proc *proc, void *argp)
{
	struct comb_err_arg *a = argp;
	int me = tc_rank(proc), p = tc_size(proc);
	int32_t x[64], y[64];
	for (int i = 0; i < 64; i++)
		x[i] = y[i] = -7;
	struct tc_coll_opts o = {.alg = "tree_allport_comb"};
	for (int ci = 0; ci < 2; ci++) {
		int (*f)(struct tc_proc *, const void *, void *, size_t, enum tc_dtype, int,
		         const struct tc_coll_opts *) = ci ? tc_gather : tc_scatter;
		if (!a->combining) {
			EXPECT(f(proc, x, y, 2, TC_INT32, 0, &o), TC_ENOTSUP);
			continue;
		}
		EXPECT(f(proc, x, y, 2, TC_INT32, p, &o), TC_EROOT);
		EXPECT(f(proc, x, y, 2, TC_INT32, -1, &o), TC_EROOT);
		EXPECT(f(proc, x, y, SIZE_MAX / 2, TC_INT32, 0, &o), TC_EOVERFLOW);
	}
	if (a->combining) {
		EXPECT(tc_scatter(proc, x, NULL, 2, TC_INT32, 0, &o), TC_ENULLBUF);
		EXPECT(tc_gather(proc, NULL, y, 2, TC_INT32, 0, &o), TC_ENULLBUF);
		if (me == 1) {
			EXPECT(tc_scatter(proc, x, (void *)TC_IN_PLACE, 2, TC_INT32, 0, &o), TC_EINVAL);
			EXPECT(tc_gather(proc, TC_IN_PLACE, y, 2, TC_INT32, 0, &o), TC_EINVAL);
		}
	}
	EXPECT(tc_barrier(proc, NULL), 0);
	for (int i = 0; i < 64; i++)
		if (x[i] != -7 || y[i] != -7)
			FAIL(&a->f, "rank %d: a failed call wrote its buffers", me);
	if (a->combining) {
		for (int i = 0; i < 2 * p; i++)
			x[i] = i;
		EXPECT(tc_scatter(proc, x, y, 2, TC_INT32, 0, &o), 0);
		if (y[0] != 2 * me || y[1] != 2 * me + 1)
			FAIL(&a->f, "rank %d: scatter after the errors", me);
	}
	return 0;
}

Test(errors, comb_arguments, .timeout = 60)
{
	for (int comb = 0; comb < 2; comb++) {
		char msg[256];
		struct tc_model md;
		comb_model(&md, 0, 0);
		md.combining = comb;
		struct tc_team *t = ct_team("hypercube:3", &md, msg, sizeof msg);
		cr_assert(t, "%s", msg);
		struct comb_err_arg a = {.combining = comb};
		cr_assert_eq(tc_run(t, comb_err_fn, &a), 0);
		cr_assert_eq(atomic_load(&a.f.n), 0, "%s", a.f.msg);
		tc_team_destroy(t);
	}
}
