/* SPDX-License-Identifier: MIT */
/*
 * Multicast ([KKA-I], Lemmas 5 and 6): results against the sequential
 * reference for every algorithm of the registry, topology and p of the
 * matrix, with random member sets (the root listed or not, any order);
 * AUTO; the registry's restrictions; rounds; modelled times against the
 * closed form recomputed here from the dimension-ordered chain; Lemma 6
 * (contention == 0 under CT one-port); Lemma 5's bound; errors on every
 * rank.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "coll_check.h"
#include "coll_ref.h"
#include "util.h"

#define MAXP 256

/* ---- member sets ----------------------------------------------------------- */

/* A random set of `size` distinct ranks of [0, p) in random order, the root
 * among them when with_root (it then counts in size); returns the count. */
static int rand_set(uint64_t *rs, int p, int root, int size, int with_root, int *out)
{
	int perm[MAXP], n = 0;
	for (int i = 0; i < p; i++)
		perm[i] = i;
	for (int i = p - 1; i > 0; i--) {
		int j = (int)(tc_test_rand(rs) % (uint64_t)(i + 1));
		int t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int i = 0; i < p && n < size; i++)
		if (perm[i] != root || with_root)
			out[n++] = perm[i];
	if (with_root && size > 0) {
		int has = 0;
		for (int i = 0; i < n; i++)
			has |= out[i] == root;
		if (!has)
			out[tc_test_rand(rs) % (uint64_t)n] = root;
	}
	return n;
}

/* The distinct non-root members of a set. */
static int canon_count(const int *m, int n, int root)
{
	int seen[MAXP] = {0}, c = 0;
	for (int i = 0; i < n; i++)
		if (m[i] != root && !seen[m[i]]++)
			c++;
	return c;
}

static int nalgs(void)
{
	int n = 0;
	while (tc_alg_name(TC_COLL_MULTICAST, n))
		n++;
	return n;
}

/* ---- results ------------------------------------------------------------------ */

static void run_p(int p, int full)
{
	static const size_t counts_small[] = {0, 1, 7, 64, 1000};
	static const size_t counts_big[] = {0, 7, 64};
	const size_t *counts = p <= 16 ? counts_small : counts_big;
	int ncounts = p <= 16 ? 5 : 3;
	if (!full)
		ncounts = 2;
	char specs[16][32];
	int nspec = tc_test_specs_for(p, specs, 16);
	int na = nalgs();
	uint64_t rs = 0x9e3779b97f4a7c15ull ^ (uint64_t)p;
	for (int si = 0; si < nspec; si++) {
		char msg[256];
		struct tc_team *t = ct_team(specs[si], NULL, msg, sizeof msg);
		cr_assert(t, "%s", msg);
		struct tc_topo *topo;
		cr_assert_eq(tc_topo_parse(specs[si], &topo), 0);
		struct tc_model md;
		tc_model_default(&md);
		for (int ai = -1; ai < na; ai++) {
			const char *alg = ai < 0 ? NULL : tc_alg_name(TC_COLL_MULTICAST, ai);
			if (alg && tc_alg_applies(topo, &md, TC_COLL_MULTICAST, alg))
				continue;
			int roots[3] = {0, p - 1, p / 2};
			int nroots = full ? (p > 16 ? 2 : 3) : 1;
			int sizes[5] = {0, 1, 2, p / 2, p};
			for (int ri = 0; ri < nroots; ri++)
				for (int zi = 0; zi < 5; zi++) {
					int root = ri == 2 ? (int)(tc_test_rand(&rs) % (uint64_t)p)
					                   : roots[ri];
					int mem[MAXP];
					int with_root = (int)(tc_test_rand(&rs) & 1);
					int nm = rand_set(&rs, p, root, sizes[zi], with_root, mem);
					size_t count = counts[(ri + zi) % ncounts];
					if (zi == 4 && ri == 0)
						count = counts[ncounts - 1];
					struct ct_case c = {.coll = TC_COLL_MULTICAST,
					                    .alg = alg,
					                    .count = count,
					                    .dt = ct_dtypes[(zi + ri) % ct_ndtypes],
					                    .root = root,
					                    .iters = 1 + (zi == 2),
					                    .seed = (uint64_t)(p * 131 + zi),
					                    .members = mem,
					                    .nmembers = nm};
					cr_assert_eq(ct_run(t, &c, msg, sizeof msg), 0,
					             "%s %s root %d |M| %d count %zu: %s", specs[si],
					             alg ? alg : "auto", root, nm, count, msg);
				}
		}
		tc_topo_destroy(topo);
		tc_team_destroy(t);
	}
}

Test(multicast, small_p, .timeout = 60)
{
	for (int p = 1; p <= 4; p++)
		run_p(p, 0);
}

Test(multicast, results, .timeout = 120)
{
	for (int pi = 0; pi < TC_TEST_NPS; pi++)
		run_p(tc_test_ps[pi], 1);
}

/* One large message on a few small teams. */
Test(multicast, large, .timeout = 60)
{
	static const char *const specs[] = {"hypercube:2", "mesh:1x3", "mesh:2x2"};
	for (int si = 0; si < 3; si++) {
		char msg[256];
		struct tc_team *t = ct_team(specs[si], NULL, msg, sizeof msg);
		cr_assert(t, "%s", msg);
		int mem[] = {2, 1};
		for (int ai = -1; ai < nalgs(); ai++) {
			const char *alg = ai < 0 ? NULL : tc_alg_name(TC_COLL_MULTICAST, ai);
			struct tc_topo *topo;
			cr_assert_eq(tc_topo_parse(specs[si], &topo), 0);
			struct tc_model md;
			tc_model_default(&md);
			int ok = !alg || !tc_alg_applies(topo, &md, TC_COLL_MULTICAST, alg);
			tc_topo_destroy(topo);
			if (!ok)
				continue;
			struct ct_case c = {.coll = TC_COLL_MULTICAST,
			                    .alg = alg,
			                    .count = 1 << 16,
			                    .dt = TC_DOUBLE,
			                    .root = 0,
			                    .iters = 1,
			                    .seed = 3,
			                    .members = mem,
			                    .nmembers = 2};
			cr_assert_eq(ct_run(t, &c, msg, sizeof msg), 0, "%s %s: %s", specs[si],
			             alg ? alg : "auto", msg);
		}
		tc_team_destroy(t);
	}
}

/* ---- restrictions, rounds, AUTO ------------------------------------------------ */

static int predict(const struct tc_topo *t, const struct tc_model *md, const char *alg,
                   size_t bytes, int root, const int *mem, int nm, struct tc_prediction *pr)
{
	struct tc_call call = {.coll = TC_COLL_MULTICAST,
	                       .alg = alg,
	                       .bytes = bytes,
	                       .esize = 1,
	                       .root = root,
	                       .members = mem,
	                       .nmembers = nm};
	return tc_predict_call(t, md, &call, pr);
}

Test(multicast, restrictions_rounds_auto, .timeout = 60)
{
	struct tc_model md;
	tc_model_default(&md);
	uint64_t rs = 7;
	for (int pi = 0; pi < TC_TEST_NPS; pi++) {
		int p = tc_test_ps[pi];
		char specs[16][32];
		int nspec = tc_test_specs_for(p, specs, 16);
		for (int si = 0; si < nspec; si++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
			enum tc_topo_kind k = tc_topo_kind(t);
			int pow2 = (p & (p - 1)) == 0;
			for (int trial = 0; trial < 6; trial++) {
				int root = (int)(tc_test_rand(&rs) % (uint64_t)p), mem[MAXP];
				int size = (int)(tc_test_rand(&rs) % (uint64_t)(p + 1));
				int nm = rand_set(&rs, p, root, size, trial & 1, mem);
				int cm = canon_count(mem, nm, root);
				struct tc_prediction au;
				cr_assert_eq(predict(t, &md, NULL, 100, root, mem, nm, &au), 0);
				for (int ai = 0; ai < nalgs(); ai++) {
					const char *alg = tc_alg_name(TC_COLL_MULTICAST, ai);
					int app = tc_alg_applies(t, &md, TC_COLL_MULTICAST, alg);
					struct tc_prediction pr;
					int err = predict(t, &md, alg, 100, root, mem, nm, &pr);
					cr_assert_eq(err, app, "%s %s: applies %d, predicts %d",
					             specs[si], alg, app, err);
					int expect = !strcmp(alg, "linear") ? 0
					             : !strcmp(alg, "hypercube")
					                     ? (k == TC_TOPO_HYPERCUBE && pow2 ? 0 : TC_ENOTSUP)
					             : !strcmp(alg, "mesh")
					                     ? (k == TC_TOPO_MESH ? 0 : TC_ENOTSUP)
					                     : app;
					cr_assert_eq(app, expect, "%s %s", specs[si], alg);
					if (err)
						continue;
					if (strcmp(alg, "linear")) {
						int steps = 0;
						while ((1 << steps) < cm + 1)
							steps++;
						cr_assert_eq(pr.rounds, steps, "%s %s |M| %d: %d rounds",
						             specs[si], alg, cm, pr.rounds);
					}
					cr_assert_eq(pr.messages, cm);
					cr_assert_eq(pr.nodup_violations, 0);
					cr_assert_eq(pr.noho_violations, 0);
					cr_assert_eq(pr.oneport_violations, 0);
					cr_assert(au.modelled_ps <= pr.modelled_ps,
					          "%s: auto above %s", specs[si], alg);
				}
			}
			tc_topo_destroy(t);
		}
	}
}

/* ---- the chain, recomputed here -------------------------------------------------- */

/* Dimension order on the hypercube relabelled by XOR root: e-cube routing
 * flips the lowest differing bit first, so the lowest bit in which two
 * addresses differ decides (0 first). */
static int hc_root;
static int hc_less(const void *a, const void *b)
{
	unsigned u = (unsigned)(*(const int *)a ^ hc_root), v = (unsigned)(*(const int *)b ^ hc_root);
	if (u == v)
		return 0;
	unsigned low = (u ^ v) & (0u - (u ^ v));
	return (u & low) ? 1 : -1;
}

static int int_less(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* The chain of root and the distinct members, *h the root's position. */
static int make_chain(int hypercube, int root, const int *mem, int nm, int *c, int *h)
{
	int n = 0, seen[MAXP] = {0};
	c[n++] = root;
	seen[root] = 1;
	for (int i = 0; i < nm; i++)
		if (!seen[mem[i]]++)
			c[n++] = mem[i];
	hc_root = root;
	qsort(c, (size_t)n, sizeof *c, hypercube ? hc_less : int_less);
	for (int i = 0; i < n; i++)
		if (c[i] == root)
			*h = i;
	return n;
}

struct expect {
	const int *c;
	int dist[MAXP][MAXP];
	long long a, th; /* ps */
	int ct, steps;
	long long end;       /* the latest rank's clock */
	long H_full;         /* CT: largest H among ranks with `steps` transfers */
	long sf_path;        /* SF: largest links + holder sends */
	long long short_end; /* latest end among ranks with fewer transfers */
};

/* Holder h of [lo, hi] at time T; k transfers so far, H links of receives,
 * sf link shares. */
static void walk(struct expect *e, int lo, int hi, int h, long long T, int k, long H, long sf)
{
	if (hi <= lo) {
		if (T > e->end)
			e->end = T;
		if (k == e->steps && H > e->H_full)
			e->H_full = H;
		if (k < e->steps && T > e->short_end)
			e->short_end = T;
		if (sf > e->sf_path)
			e->sf_path = sf;
		return;
	}
	int len = hi - lo + 1, mid = lo + (len + 1) / 2;
	int to = h < mid ? mid : mid - 1;
	int d = e->dist[e->c[h]][e->c[to]];
	long long arr = e->ct ? T + e->a + d * e->th : T + d * e->a;
	long long free_ = T + e->a;
	int hl = h < mid ? h : to, hu = h < mid ? to : h;
	walk(e, lo, mid - 1, hl, hl == h ? free_ : arr, k + 1, hl == h ? H : H + d,
	     hl == h ? sf + 1 : sf + d);
	walk(e, mid, hi, hu, hu == h ? free_ : arr, k + 1, hu == h ? H : H + d,
	     hu == h ? sf + 1 : sf + d);
}

static struct expect E; /* large: static */

static void models(struct tc_model *mds, int *n)
{
	int k = 0;
	for (int sw = 0; sw < 2; sw++)
		for (int v = 0; v < 5; v++) {
			struct tc_model *m = &mds[k++];
			tc_model_default(m);
			m->switching = sw ? TC_SWITCH_CT : TC_SWITCH_SF;
			m->ts_ns = v == 1 ? 3 : 1000;
			m->tw_ns = v == 2 ? 0 : 1;
			m->th_ns = v == 3 ? 5000 : v == 4 ? 7 : 20;
			m->ports = v == 4 ? TC_PORTS_ALL : TC_PORTS_ONE;
			m->duplex = v == 2 ? TC_DUPLEX_HALF : TC_DUPLEX_FULL;
		}
	*n = k;
}

/* Checks one case of hypercube or mesh against the recomputed chain;
 * counts the cases where the closed form is below the modelled time. */
static void check_cost(const char *spec, const struct tc_topo *t, const struct tc_model *md,
                       const char *alg, int root, const int *mem, int nm, size_t m, long *below,
                       long *lb_over)
{
	(void)spec; /* in messages only (unused by the plain race build) */
	int c[MAXP], h = 0, p = tc_topo_nodes(t);
	int n = make_chain(!strcmp(alg, "hypercube"), root, mem, nm, c, &h);
	if (!strcmp(alg, "hypercube"))
		cr_assert_eq(h, 0);
	for (int u = 0; u < p; u++)
		tc_test_bfs(t, u, E.dist[u]);
	E.c = c;
	E.ct = md->switching == TC_SWITCH_CT;
	E.a = llround(md->ts_ns * 1000) + (long long)m * llround(md->tw_ns * 1000);
	E.th = llround(md->th_ns * 1000);
	E.steps = 0;
	while ((1 << E.steps) < n)
		E.steps++;
	E.end = E.short_end = 0;
	E.H_full = E.sf_path = 0;
	walk(&E, 0, n - 1, h, 0, 0, 0, 0);
	struct tc_prediction pr;
	cr_assert_eq(predict(t, md, alg, m, root, mem, nm, &pr), 0);
	cr_assert_eq(pr.modelled_ps, E.end, "%s %s root %d |M| %d: modelled %lld, chain %lld", spec,
	             alg, root, n - 1, (long long)pr.modelled_ps, E.end);
	/* the closed form: steps (t_s + m t_w) + path t_h (CT), path (t_s + m t_w) (SF) */
	long long form = n == 1 ? 0 : E.ct ? E.steps * E.a + E.H_full * E.th : E.sf_path * E.a;
	cr_assert(fabs(pr.formula_ns * 1000 - (double)form) <= 1e-6 * (double)form + 1e-3,
	          "%s %s root %d |M| %d: formula %.3f ns, expected %lld ps", spec, alg, root, n - 1,
	          pr.formula_ns, form);
	if (E.end != form) {
		/* only under CT, when a rank with fewer transfers ends later */
		cr_assert(E.ct && E.short_end == E.end && E.end > form, "%s %s root %d", spec, alg, root);
		(*below)++;
	}
	/* The bound (lib/coll/predict.c: Lemma 5's rho and exc, combined as
	 * this clock allows) is never above the modelled time. */
	if (!(pr.lower_bound_ns * 1000 <= (double)pr.modelled_ps + 1e-3))
		(*lb_over)++;
	cr_assert(pr.lower_bound_ns * 1000 <= (double)pr.modelled_ps + 1e-3,
	          "%s %s root %d: bound %.1f ns > %lld ps", spec, alg, root, pr.lower_bound_ns,
	          (long long)pr.modelled_ps);
	/* Lemma 6: dimension-ordered chains give edge-disjoint paths */
	if (E.ct && md->ports == TC_PORTS_ONE)
		cr_assert_eq(pr.contention, 0, "%s %s root %d |M| %d: contention in round %d", spec,
		             alg, root, n - 1, pr.contention_round);
}

Test(multicast, cost_and_lemma6, .timeout = 60)
{
	static const char *const specs[] = {"hypercube:1", "hypercube:2", "hypercube:3",
	                                    "hypercube:4", "hypercube:5", "hypercube:6",
	                                    "hypercube:7", "hypercube:8", "mesh:4x4",
	                                    "mesh:5x3",    "mesh:8x8",    "mesh:3x3x3",
	                                    "mesh:1x7",    "mesh:13x1",   "mesh:4x4x4",
	                                    "mesh:2x3x2x2"};
	struct tc_model mds[10];
	int nmd;
	models(mds, &nmd);
	uint64_t rs = 11;
	long below = 0, lb_over = 0, cases = 0;
	for (int si = 0; si < (int)(sizeof specs / sizeof *specs); si++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0);
		int p = tc_topo_nodes(t);
		const char *alg = specs[si][0] == 'h' ? "hypercube" : "mesh";
		for (int trial = 0; trial < 40; trial++) {
			int root = (int)(tc_test_rand(&rs) % (uint64_t)p), mem[MAXP];
			int size = trial < 4 ? (int[]){0, 1, 2, p}[trial]
			                     : (int)(tc_test_rand(&rs) % (uint64_t)(p + 1));
			int nm = rand_set(&rs, p, root, size, trial & 1, mem);
			for (int mi = 0; mi < nmd; mi++) {
				size_t m = (size_t)(tc_test_rand(&rs) % 3) * 100;
				check_cost(specs[si], t, &mds[mi], alg, root, mem, nm, m, &below,
				           &lb_over);
				cases++;
			}
		}
		tc_topo_destroy(t);
	}
	printf("multicast cost: %ld cases, closed form below modelled in %ld, Lemma 5 bound "
	       "above modelled in %ld\n",
	       cases, below, lb_over);
}

/* ---- errors -------------------------------------------------------------------- */

struct err_arg {
	struct failure f;
	int which;
};

static int err_fn(struct tc_proc *proc, void *argp)
{
	struct err_arg *a = argp;
	int me = tc_rank(proc), p = tc_size(proc);
	int32_t buf[8];
	for (int i = 0; i < 8; i++)
		buf[i] = -7;
	int good[] = {1, 2, 3};
	int dup[] = {1, 2, 1};
	int out[] = {1, 2, p};
	int other[] = {1, 2, 4};
	const int *mem = good;
	int nm = 3, root = 0, want = 0;
	void *b = buf;
	switch (a->which) {
	case 0: /* a duplicate on rank 1 only */
		if (me == 1)
			mem = dup;
		want = me == 1 ? TC_EINVAL : TC_EMISMATCH;
		break;
	case 1: /* a duplicate everywhere */
		mem = dup;
		want = TC_EINVAL;
		break;
	case 2: /* out of range on rank 2 */
		if (me == 2)
			mem = out;
		want = me == 2 ? TC_ERANK : TC_EMISMATCH;
		break;
	case 3: /* different sets */
		if (me == 3)
			mem = other;
		want = TC_EMISMATCH;
		break;
	case 4: /* different roots */
		root = me == 0 ? 1 : 0;
		want = TC_EMISMATCH;
		break;
	case 5: /* nmembers < 0 on rank 0 */
		if (me == 0)
			nm = -1;
		want = me == 0 ? TC_EINVAL : TC_EMISMATCH;
		break;
	case 6: /* members NULL with nmembers > 0 everywhere */
		mem = NULL;
		want = TC_EINVAL;
		break;
	case 7: /* bad root everywhere */
		root = p;
		want = TC_EROOT;
		break;
	case 8: /* root -1 everywhere */
		root = -1;
		want = TC_EROOT;
		break;
	case 9: /* unknown algorithm */
		want = TC_EALG;
		break;
	case 10: /* count overflow */
		want = TC_EOVERFLOW;
		break;
	case 11: /* NULL buffer on member 3, a leaf of the chain */
		if (me == 3)
			b = NULL;
		want = me == 3 ? TC_ENULLBUF : TC_EMISMATCH;
		break;
	case 12: /* NULL buffer on the root */
		if (me == 0)
			b = NULL;
		want = me == 0 ? TC_ENULLBUF : TC_EMISMATCH;
		break;
	case 13: /* NULL buffer outside the set: allowed */
		if (me == 5)
			b = NULL;
		want = 0;
		break;
	}
	struct tc_coll_opts bad = {.alg = "no_such_algorithm"};
	int err = tc_multicast(proc, b, a->which == 10 ? SIZE_MAX / 2 : 2, TC_INT32, root, mem, nm,
	                       a->which == 9 ? &bad : NULL);
	if (err != want)
		FAIL(&a->f, "case %d rank %d: %s, not %s", a->which, me, tc_err_name(err),
		     tc_err_name(want));
	for (int i = 0; i < 8 && want; i++)
		if (buf[i] != -7)
			FAIL(&a->f, "case %d rank %d: a failed call wrote its buffer", a->which, me);
	/* not applicable: hypercube on a mesh */
	struct tc_coll_opts hc = {.alg = "hypercube"};
	err = tc_multicast(proc, buf, 2, TC_INT32, 0, good, 3, &hc);
	if (err != TC_ENOTSUP)
		FAIL(&a->f, "rank %d: hypercube on a mesh gave %s", me, tc_err_name(err));
	/* a real call still works */
	err = tc_multicast(proc, buf, 2, TC_INT32, 0, good, 3, NULL);
	if (err)
		FAIL(&a->f, "rank %d: multicast after the errors: %s", me, tc_err_name(err));
	return 0;
}

/* A NULL buf on one member (or the root) with count > 0 is one of the
 * arguments agreed with the set: that rank gets TC_ENULLBUF, the others
 * TC_EMISMATCH, nothing moves, and the next call is clean. */
Test(multicast, errors, .timeout = 60)
{
	char msg[256];
	struct tc_team *t = ct_team("mesh:2x3", NULL, msg, sizeof msg);
	cr_assert(t, "%s", msg);
	for (int w = 0; w <= 13; w++) {
		struct err_arg a = {.which = w};
		cr_assert_eq(tc_run(t, err_fn, &a), 0);
		cr_assert_eq(atomic_load(&a.f.n), 0, "%s", a.f.msg);
	}
	tc_team_destroy(t);
}
