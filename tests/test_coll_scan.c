/* SPDX-License-Identifier: MIT */
/*
 * Prefix sums (scan, exscan): results against the sequential reference of
 * tests/common/coll_ref.c for every algorithm of the registry, every
 * topology of the matrix it applies to and p of the matrix, every
 * datatype/operator combo (the non-commutative affine one included: both
 * algorithms are rank-ordered), in place and not; the registry's
 * restrictions against what the generators accept; modelled times against
 * closed forms computed here from [Barnat-IB109]; AUTO; argument errors;
 * exscan's rank 0 passing no receive buffer.
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

static const enum tc_coll colls[] = {TC_COLL_SCAN, TC_COLL_EXSCAN};
#define NCOLLS 2

/* Where the registry says algorithm alg applies (the test's own statement
 * of the restrictions of DESIGN.md and the algorithm headers). */
static int expect_applies(const struct tc_topo *t, const char *alg)
{
	int p = tc_topo_nodes(t);
	enum tc_topo_kind k = tc_topo_kind(t);
	if (!strcmp(alg, "hypercube"))
		return (p & (p - 1)) == 0 && (k == TC_TOPO_HYPERCUBE || k == TC_TOPO_COMPLETE);
	if (!strcmp(alg, "ring"))
		return 1; /* routed where consecutive ranks are not neighbours */
	cr_assert(0, "unknown algorithm %s: add its restrictions here", alg);
	return 0;
}

/* Whether alg applies to t: tc_alg_applies(), the generator (through the
 * predictor) and expect_applies() must agree. */
static int applies(const struct tc_topo *t, enum tc_coll coll, const char *alg)
{
	struct tc_model md;
	tc_model_default(&md);
	struct tc_call call = {.coll = coll, .alg = alg, .bytes = 8, .esize = 8};
	struct tc_prediction pr;
	int a = tc_alg_applies(t, &md, coll, alg);
	int g = tc_predict_call(t, &md, &call, &pr);
	cr_assert(a == 0 || a == TC_ENOTSUP, "%s: %s", alg, tc_strerror(a));
	cr_assert(g == 0 || g == TC_ENOTSUP, "%s: %s", alg, tc_strerror(g));
	cr_assert_eq(a, g, "%s on %d nodes: tc_alg_applies %d, generator %d", alg, tc_topo_nodes(t),
	             a, g);
	cr_assert_eq(a == 0, expect_applies(t, alg), "%s on %d nodes (kind %d)", alg,
	             tc_topo_nodes(t), (int)tc_topo_kind(t));
	if (g == 0) {
		cr_assert_eq(pr.nodup_violations, 0);
		cr_assert_eq(pr.noho_violations, 0);
		cr_assert_eq(pr.contention, 0, "%s", alg);
	}
	return a == 0;
}

/* Runs one case; fails the test with the harness's message. */
static void run(struct tc_team *team, const char *spec, enum tc_coll coll, const char *alg,
                size_t count, int combo, int in_place, int iters)
{
	(void)spec; /* in messages only (unused where cr_assert drops them) */
	char msg[256];
	struct ct_case c = {.coll = coll,
	                    .alg = alg,
	                    .count = count,
	                    .dt = ct_combos[combo].dt,
	                    .op = ct_combos[combo].op,
	                    .in_place = in_place,
	                    .iters = iters,
	                    .seed = count * 31 + 7};
	cr_assert_eq(ct_run(team, &c, msg, sizeof msg), 0, "%s %s %s count %zu %s%s: %s", spec,
	             tc_coll_name(coll), alg ? alg : "auto", count, ct_combos[combo].name,
	             in_place ? " in place" : "", msg);
}

/* Every algorithm (alg_filter, or all; "auto": AUTO only) on every topology
 * of p in [pmin, pmax] of the matrix. */
static void results(const char *alg_filter, int pmin, int pmax)
{
	static const size_t small[] = {0, 1, 7, 64, 1000};
	static const size_t big[] = {0, 7, 64};
	for (int pi = 0; pi < TC_TEST_NPS; pi++) {
		int p = tc_test_ps[pi];
		if (p < pmin || p > pmax)
			continue;
		char specs[16][32];
		int ns = tc_test_specs_for(p, specs, 16);
		for (int si = 0; si < ns; si++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[si], &t), 0, "%s", specs[si]);
			struct tc_team *team = NULL;
			for (int ci = 0; ci < NCOLLS; ci++) {
				enum tc_coll coll = colls[ci];
				const char *name;
				for (int ai = 0;; ai++) {
					/* ai runs over the registry, then once more for AUTO */
					name = tc_alg_name(coll, ai);
					const char *alg = name;
					if (alg_filter && strcmp(alg_filter, "auto")) {
						if (!name)
							break;
						if (strcmp(name, alg_filter))
							continue;
					} else if (alg_filter && name) {
						continue;
					}
					if (alg && !applies(t, coll, alg))
						continue;
					if (!team) {
						char msg[256];
						team = ct_team(specs[si], NULL, msg, sizeof msg);
						cr_assert(team, "%s", msg);
					}
					const size_t *counts = p <= 16 ? small : big;
					int nc = p <= 16 ? 5 : 3;
					for (int k = 0; k < nc; k++) {
						if (p <= 4) {
							/* every combo, in place and not */
							for (int cb = 0; cb < ct_ncombos; cb++)
								run(team, specs[si], coll, alg,
								    counts[k], cb, (cb + k) & 1, 1);
						} else {
							/* two combos a count, rotating; affine always */
							int cb = (k + si + ci) % (ct_ncombos - 1);
							run(team, specs[si], coll, alg, counts[k],
							    cb, k & 1, 1);
							run(team, specs[si], coll, alg, counts[k],
							    ct_ncombos - 1, !(k & 1), 1);
						}
					}
					if (!name)
						break;
				}
			}
			tc_team_destroy(team);
			tc_topo_destroy(t);
		}
	}
}

Test(scan, small_p, .timeout = 120)
{
	static const char *const specs[] = {"complete:1", "ring:2", "hypercube:2", "chain:3", "star:4"};
	for (int si = 0; si < 5; si++) {
		char msg[256];
		struct tc_team *team = ct_team(specs[si], NULL, msg, sizeof msg);
		cr_assert(team, "%s", msg);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
		for (int ci = 0; ci < NCOLLS; ci++) {
			const char *name;
			for (int ai = 0; (name = tc_alg_name(colls[ci], ai)) != NULL; ai++) {
				if (!applies(t, colls[ci], name))
					continue;
				run(team, specs[si], colls[ci], name, 5, ct_ncombos - 1, ai & 1, 2);
				run(team, specs[si], colls[ci], name, 3, 0, !(ai & 1), 1);
			}
		}
		tc_topo_destroy(t);
		tc_team_destroy(team);
	}
}

Test(scan, results_hypercube, .timeout = 300)
{
	results("hypercube", 1, 64);
}

Test(scan, results_ring_small, .timeout = 300)
{
	results("ring", 1, 13);
}

Test(scan, results_ring_large, .timeout = 300)
{
	results("ring", 16, 64);
}

Test(scan, results_auto, .timeout = 300)
{
	results("auto", 1, 16);
}

/* One large message at small p: both algorithms, both collectives. */
Test(scan, large_count, .timeout = 120)
{
	static const char *const specs[] = {"complete:2", "chain:3", "hypercube:2"};
	for (int si = 0; si < 3; si++) {
		char msg[256];
		struct tc_team *team = ct_team(specs[si], NULL, msg, sizeof msg);
		cr_assert(team, "%s", msg);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
		for (int ci = 0; ci < NCOLLS; ci++) {
			const char *name;
			for (int ai = 0; (name = tc_alg_name(colls[ci], ai)) != NULL; ai++) {
				if (!applies(t, colls[ci], name))
					continue;
				run(team, specs[si], colls[ci], name, (size_t)1 << 16, 0, 0, 1);
				run(team, specs[si], colls[ci], name, (size_t)1 << 16,
				    ct_ncombos - 1, 1, 1);
			}
		}
		tc_topo_destroy(t);
		tc_team_destroy(team);
	}
}

/* ---- modelled time ---------------------------------------------------------- */

/* The models of the cost tests: parameters integral in ps. */
static void model_k(int k, struct tc_model *md)
{
	tc_model_default(md);
	md->ts_ns = 1000;
	md->tw_ns = 2;
	md->tc_ns = k ? 0.5 : 0;
	switch (k) {
	case 2:
		md->switching = TC_SWITCH_CT;
		md->th_ns = 40;
		break;
	case 3:
		md->ports = TC_PORTS_ALL;
		break;
	case 4:
		md->duplex = TC_DUPLEX_HALF;
		break;
	case 5:
		md->ports = TC_PORTS_ALL;
		md->duplex = TC_DUPLEX_HALF;
		md->switching = TC_SWITCH_CT;
		md->th_ns = 3000; /* longer than a message: arrival decides */
		break;
	case 6:
		md->ts_ns = 7;
		md->tw_ns = 0.25;
		md->tc_ns = 3;
		break;
	}
}
#define NMODELS 7

/* T(m, l) of lib/model/clock.h, ps, computed here from the model. */
static int64_t xfer_ps(const struct tc_model *md, int64_t m, int l)
{
	int64_t ts = llround(md->ts_ns * 1000), tw = llround(md->tw_ns * 1000);
	int64_t th = llround(md->th_ns * 1000);
	if (md->switching == TC_SWITCH_CT)
		return ts + m * tw + l * th;
	return l * (ts + m * tw);
}

/* [Barnat-IB109]'s closed form of the call, ps; *formula: whether the library's
 * formula_ns must equal it (else it must be NAN). */
static int64_t closed_form(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll,
                           const char *alg, int64_t m, int *formula)
{
	int p = tc_topo_nodes(t);
	int ex = coll == TC_COLL_EXSCAN;
	int64_t tc = llround(md->tc_ns * 1000);
	int64_t ts = llround(md->ts_ns * 1000), tw = llround(md->tw_ns * 1000);
	int64_t th = md->switching == TC_SWITCH_CT ? llround(md->th_ns * 1000) : 0;
	*formula = 1;
	if (p == 1)
		return 0;
	if (!strcmp(alg, "hypercube")) {
		int d = 0;
		while ((1 << d) < p)
			d++;
		/* [Barnat-IB109]: (t_s + m t_w) log p, plus 2 m t_c a step (one
		 * fewer combine for exscan: its first result is a copy). */
		int64_t combines = ex ? 2 * d - 1 : 2 * d;
		if (md->duplex == TC_DUPLEX_FULL)
			return d * (ts + m * tw + th) + combines * m * tc;
		/* Documented difference (scan_hypercube.c): half duplex, the
		 * two directions of an exchange share the port, a step lasts
		 * max(2 L, L + t_h) with L = t_s + m t_w. */
		*formula = 0;
		int64_t L = ts + m * tw;
		int64_t step = 2 * L > L + th ? 2 * L : L + th;
		return d * step + combines * m * tc;
	}
	/* ring: the chain 0..p-1, one message after the other, each T(m, l_i)
	 * over its route; every rank but 0 combines (scan), ranks 1..p-2
	 * (exscan). */
	int64_t sum = 0;
	for (int i = 1; i < p; i++) {
		int l = tc_topo_distance(t, i - 1, i);
		if (l != 1)
			*formula = 0;
		sum += xfer_ps(md, m, l);
	}
	return sum + (ex ? p - 2 : p - 1) * m * tc;
}

Test(model, closed_forms, .timeout = 120)
{
	static const int ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 32, 64};
	static const int64_t ms[] = {0, 8, 1000, 1 << 20};
	for (unsigned pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
		char specs[16][32];
		int ns = tc_test_specs_for(ps[pi], specs, 16);
		for (int si = 0; si < ns; si++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
			for (int ci = 0; ci < NCOLLS; ci++) {
				const char *alg;
				for (int ai = 0; (alg = tc_alg_name(colls[ci], ai)) != NULL; ai++) {
					if (!applies(t, colls[ci], alg))
						continue;
					for (int k = 0; k < NMODELS; k++) {
						struct tc_model md;
						model_k(k, &md);
						for (int mi = 0; mi < 4; mi++) {
							struct tc_call call = {.coll = colls[ci],
							                       .alg = alg,
							                       .bytes = (size_t)ms[mi],
							                       .esize = 8};
							struct tc_prediction pr;
							cr_assert_eq(tc_predict_call(t, &md, &call, &pr),
							             0);
							int f;
							int64_t want = closed_form(t, &md, colls[ci],
							                           alg, ms[mi], &f);
							cr_assert_eq(pr.modelled_ps, want,
							             "%s %s %s model %d m %lld: %lld ps, want %lld",
							             specs[si], tc_coll_name(colls[ci]),
							             alg, k, (long long)ms[mi],
							             (long long)pr.modelled_ps,
							             (long long)want);
							if (f)
								cr_assert_eq(llround(pr.formula_ns * 1000.0),
								             want, "%s %s %s model %d: formula %f",
								             specs[si],
								             tc_coll_name(colls[ci]),
								             alg, k, pr.formula_ns);
							else
								cr_assert(isnan(pr.formula_ns),
								          "%s %s %s model %d", specs[si],
								          tc_coll_name(colls[ci]),
								          alg, k);
							cr_assert_eq(pr.oneport_violations, 0);
						}
					}
				}
			}
			tc_topo_destroy(t);
		}
	}
}

Test(auto, picks_the_cheapest, .timeout = 60)
{
	static const int ps[] = {1, 2, 3, 4, 8, 13, 16, 64};
	static const size_t ms[] = {0, 8, 4096, 1 << 20};
	for (unsigned pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
		char specs[16][32];
		int ns = tc_test_specs_for(ps[pi], specs, 16);
		for (int si = 0; si < ns; si++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
			for (int ci = 0; ci < NCOLLS; ci++)
				for (int k = 0; k < NMODELS; k++)
					for (int mi = 0; mi < 4; mi++) {
						struct tc_model md;
						model_k(k, &md);
						struct tc_call call = {.coll = colls[ci],
						                       .bytes = ms[mi],
						                       .esize = 8};
						struct tc_prediction best, pr;
						cr_assert_eq(tc_predict_call(t, &md, &call, &best),
						             0, "%s", specs[si]);
						const char *alg;
						for (int ai = 0; (alg = tc_alg_name(colls[ci], ai));
						     ai++) {
							call.alg = alg;
							int err = tc_predict_call(t, &md, &call, &pr);
							if (err == TC_ENOTSUP)
								continue;
							cr_assert_eq(err, 0);
							cr_assert_leq(best.modelled_ps, pr.modelled_ps,
							              "%s %s: auto %s above %s",
							              specs[si],
							              tc_coll_name(colls[ci]),
							              best.algorithm, alg);
						}
					}
			tc_topo_destroy(t);
		}
	}
}

/* ---- errors ----------------------------------------------------------------- */

struct err_arg {
	atomic_int nfail;
	char msg[256];
};

#define EFAIL(a, ...)                                                    \
	do {                                                             \
		if (atomic_fetch_add(&(a)->nfail, 1) == 0)               \
			snprintf((a)->msg, sizeof(a)->msg, __VA_ARGS__); \
	} while (0)

/* Every rank makes the same bad calls: each must return the code and write
 * nothing. */
static int err_fn(struct tc_proc *proc, void *argp)
{
	struct err_arg *a = argp;
	int me = tc_rank(proc);
	int64_t in[4] = {1, 2, 3, 4}, out[4], fresh[4];
	memset(out, 0x77, sizeof out);
	memcpy(fresh, out, sizeof out);
	for (int ci = 0; ci < NCOLLS; ci++) {
		enum tc_coll coll = colls[ci];
		int ex = coll == TC_COLL_EXSCAN;
		int (*fn)(struct tc_proc *, const void *, void *, size_t, enum tc_dtype, enum tc_op,
		          const struct tc_coll_opts *) = ex ? tc_exscan : tc_scan;
		const char *cn = tc_coll_name(coll);
		struct tc_coll_opts o = {0};
		int err;
		/* NULL send buffer with count > 0. */
		if ((err = fn(proc, NULL, out, 4, TC_INT64, TC_OP_SUM, &o)) != TC_ENULLBUF)
			EFAIL(a, "rank %d %s NULL sbuf: %s", me, cn, tc_err_name(err));
		/* NULL receive buffer (exscan: rank 0 may pass one, so not there:
		 * every rank fails only for scan). */
		if (!ex && (err = fn(proc, in, NULL, 4, TC_INT64, TC_OP_SUM, &o)) != TC_ENULLBUF)
			EFAIL(a, "rank %d %s NULL rbuf: %s", me, cn, tc_err_name(err));
		/* Count overflow. */
		if ((err = fn(proc, in, out, SIZE_MAX / 2, TC_INT64, TC_OP_SUM, &o)) != TC_EOVERFLOW)
			EFAIL(a, "rank %d %s overflow: %s", me, cn, tc_err_name(err));
		/* Unknown algorithm; one that does not apply here. */
		o.alg = "nope";
		if ((err = fn(proc, in, out, 4, TC_INT64, TC_OP_SUM, &o)) != TC_EALG)
			EFAIL(a, "rank %d %s unknown alg: %s", me, cn, tc_err_name(err));
		o.alg = "hypercube"; /* p = 3, 6 here; p = 1 applies */
		int p = tc_size(proc);
		if ((p & (p - 1)) && (err = fn(proc, in, out, 4, TC_INT64, TC_OP_SUM, &o)) != TC_ENOTSUP)
			EFAIL(a, "rank %d %s hypercube: %s", me, cn, tc_err_name(err));
		o.alg = NULL;
		/* A user operator without a function; a bad operator. */
		struct tc_user_op bad = {NULL, NULL, 0};
		o.user_op = &bad;
		if ((err = fn(proc, in, out, 4, TC_INT64, TC_OP_USER, &o)) != TC_EINVAL)
			EFAIL(a, "rank %d %s user op: %s", me, cn, tc_err_name(err));
		o.user_op = NULL;
		if ((err = fn(proc, in, out, 4, TC_INT64, (enum tc_op)TC_OP_COUNT, &o)) != TC_EINVAL)
			EFAIL(a, "rank %d %s bad op: %s", me, cn, tc_err_name(err));
		if (memcmp(out, fresh, sizeof out))
			EFAIL(a, "rank %d %s: an erroneous call wrote rbuf", me, cn);
		if (in[0] != 1 || in[3] != 4)
			EFAIL(a, "rank %d %s: an erroneous call wrote sbuf", me, cn);
	}
	/* Still usable afterwards. */
	int err = tc_scan(proc, in, out, 4, TC_INT64, TC_OP_SUM, NULL);
	if (err || out[0] != (int64_t)(me + 1) * 1)
		EFAIL(a, "rank %d: scan after errors: %s, %lld", me, tc_err_name(err),
		      (long long)out[0]);
	return 0;
}

Test(errors, arguments, .timeout = 60)
{
	static const char *const specs[] = {"ring:3", "mesh:2x3", "complete:1"};
	for (int i = 0; i < 3; i++) {
		char msg[256];
		struct tc_team *team = ct_team(specs[i], NULL, msg, sizeof msg);
		cr_assert(team, "%s", msg);
		struct err_arg a = {0};
		cr_assert_eq(tc_run(team, err_fn, &a), 0);
		cr_assert_eq(atomic_load(&a.nfail), 0, "%s: %s", specs[i], a.msg);
		tc_team_destroy(team);
	}
	/* The predictor says the same. */
	struct tc_topo *t;
	struct tc_model md;
	tc_model_default(&md);
	struct tc_prediction pr;
	cr_assert_eq(tc_topo_parse("ring:4", &t), 0);
	for (int ci = 0; ci < NCOLLS; ci++) {
		struct tc_call c = {.coll = colls[ci], .alg = "hypercube", .bytes = 64, .esize = 8};
		cr_assert_eq(tc_predict_call(t, &md, &c, &pr), TC_ENOTSUP);
		cr_assert_eq(tc_alg_applies(t, &md, colls[ci], "hypercube"), TC_ENOTSUP);
		c.alg = "nope";
		cr_assert_eq(tc_predict_call(t, &md, &c, &pr), TC_EALG);
		cr_assert_eq(tc_alg_applies(t, &md, colls[ci], "nope"), TC_EALG);
		c.alg = "ring";
		cr_assert_eq(tc_predict_call(t, &md, &c, &pr), 0);
	}
	tc_topo_destroy(t);
}

/* exscan: rank 0 gets nothing and may pass no receive buffer. */
struct null0_arg {
	const char *alg;
	int in_place_others;
	atomic_int nfail;
	char msg[256];
};

static int null0_fn(struct tc_proc *proc, void *argp)
{
	struct null0_arg *a = argp;
	int me = tc_rank(proc);
	struct tc_coll_opts o = {.alg = a->alg};
	int64_t in[3], out[3];
	for (int j = 0; j < 3; j++)
		in[j] = out[j] = (int64_t)(me + 1) * (j + 1);
	int err;
	if (me == 0)
		err = tc_exscan(proc, in, NULL, 3, TC_INT64, TC_OP_SUM, &o);
	else if (a->in_place_others)
		err = tc_exscan(proc, TC_IN_PLACE, out, 3, TC_INT64, TC_OP_SUM, &o);
	else
		err = tc_exscan(proc, in, out, 3, TC_INT64, TC_OP_SUM, &o);
	if (err) {
		EFAIL(a, "rank %d: %s", me, tc_err_name(err));
		return 0;
	}
	/* sum over r < me of (r + 1)(j + 1) */
	for (int j = 0; me > 0 && j < 3; j++)
		if (out[j] != (int64_t)me * (me + 1) / 2 * (j + 1))
			EFAIL(a, "rank %d element %d: %lld", me, j, (long long)out[j]);
	for (int j = 0; j < 3; j++)
		if (in[j] != (int64_t)(me + 1) * (j + 1))
			EFAIL(a, "rank %d: sbuf written", me);
	return 0;
}

Test(exscan, rank0_null_rbuf, .timeout = 60)
{
	static const char *const specs[] = {"complete:1", "ring:2", "hypercube:3", "chain:5", "mesh:2x3"};
	for (int si = 0; si < 5; si++) {
		char msg[256];
		struct tc_team *team = ct_team(specs[si], NULL, msg, sizeof msg);
		cr_assert(team, "%s", msg);
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
		const char *name;
		for (int ai = 0;; ai++) {
			name = tc_alg_name(TC_COLL_EXSCAN, ai);
			if (name && !applies(t, TC_COLL_EXSCAN, name))
				continue;
			for (int ip = 0; ip < 2; ip++) {
				struct null0_arg a = {.alg = name, .in_place_others = ip};
				cr_assert_eq(tc_run(team, null0_fn, &a), 0);
				cr_assert_eq(atomic_load(&a.nfail), 0, "%s %s: %s", specs[si],
				             name ? name : "auto", a.msg);
			}
			if (!name)
				break;
		}
		tc_topo_destroy(t);
		tc_team_destroy(team);
	}
}

/* In place, exscan's rank 0 reads its input from rbuf: NULL is an error, not
 * a crash (p = 1, so that the failing rank is alone). */
static int exscan_null_fn(struct tc_proc *proc, void *arg)
{
	int *err = arg;
	*err = tc_exscan(proc, TC_IN_PLACE, NULL, 4, TC_INT32, TC_OP_SUM, NULL);
	return 0;
}

Test(errors, exscan_in_place_needs_rbuf, .timeout = 30)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:1";
	struct tc_team *t;
	cr_assert_eq(tc_team_create(&cfg, &t), 0);
	int err = 0;
	cr_assert_eq(tc_run(t, exscan_null_fn, &err), 0);
	cr_assert_eq(err, TC_ENULLBUF, "%s", tc_err_name(err));
	tc_team_destroy(t);
}
