/* SPDX-License-Identifier: MIT */
/*
 * tests/test_registry.c - the registries of collectives and algorithms:
 * names round-trip, every collective has algorithms, flags are consistent
 * with the collectives' shapes, and every algorithm's restriction tokens
 * (tc_alg_applies) say exactly where its generator produces a schedule.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "coll/gen.h"
#include "sched/sched.h"
#include "harness.h"
#include "topocoll.h"
#include "util.h"

Test(registry, collective_names_round_trip, .timeout = 30)
{
	for (int c = 0; c < TC_COLL_COUNT; c++) {
		const char *n = tc_coll_name((enum tc_coll)c);
		cr_assert_not_null(n);
		enum tc_coll back;
		cr_assert_eq(tc_coll_parse(n, &back), 0, "%s", n);
		cr_assert_eq((int)back, c, "%s", n);
		/* Shape 0 is one block in and one out on every rank. */
		cr_assert(c == TC_COLL_SHIFT || c == TC_COLL_GRAY2BINARY ||
		                  c == TC_COLL_BINARY2GRAY || tc_coll_flags((enum tc_coll)c) != 0u,
		          "%s has no shape", n);
		cr_assert_not_null(tc_alg_name((enum tc_coll)c, 0), "%s has no algorithm", n);
	}
	cr_assert_null(tc_coll_name(TC_COLL_COUNT));
	cr_assert_eq(tc_coll_flags(TC_COLL_COUNT), 0u);
	enum tc_coll x;
	cr_assert_eq(tc_coll_parse("nope", &x), TC_EINVAL);
	cr_assert_eq(tc_coll_parse(NULL, &x), TC_EINVAL);
}

Test(registry, algorithm_flags_fit_their_collective, .timeout = 30)
{
	for (int i = 0; i < tc__nalgs; i++) {
		const struct tc__alg *a = &tc__algs[i];
		unsigned f = tc_coll_flags(a->coll);
		const char *cn = tc_coll_name(a->coll);
		/* A reduction whose input and output differ in size cannot start
		 * from its input copied into the output. */
		if ((f & TC_CF_REDUCES) && (f & (TC_CF_SEND_P | TC_CF_RECV_P)))
			cr_assert(a->flags & TC__ALG_READS_IN, "%s %s must read IN", cn, a->name);
		/* Only a collective with a dual may borrow another's generator. */
		if (a->flags & TC__ALG_DUAL)
			cr_assert(a->coll == TC_COLL_REDUCE || a->coll == TC_COLL_GATHER,
			          "%s %s: no dual in collectives.def", cn, a->name);
		/* Names are unique within a collective. */
		for (int j = 0; j < i; j++)
			cr_assert(tc__algs[j].coll != a->coll || strcmp(tc__algs[j].name, a->name),
			          "%s %s listed twice", cn, a->name);
		cr_assert(a->formula && a->gen && a->topologies && a->topologies[0]);
	}
}

/* tc_alg_applies() is 0 exactly where prediction (the generator) succeeds. */
Test(registry, restriction_tokens_match_the_generators, .timeout = 300)
{
	static const int ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16};
	long checked = 0;
	for (int pi = 0; pi < (int)(sizeof ps / sizeof ps[0]); pi++) {
		char specs[16][32];
		int ns = tc_test_specs_for(ps[pi], specs, 16);
		for (int si = 0; si < ns; si++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[si], &t), 0, "%s", specs[si]);
			for (int port = 0; port < 2; port++) {
				struct tc_model md;
				tc_model_default(&md);
				md.ports = port ? TC_PORTS_ALL : TC_PORTS_ONE;
				for (int c = 0; c < TC_COLL_COUNT; c++) {
					const char *n;
					for (int k = 0; (n = tc_alg_name((enum tc_coll)c, k)); k++) {
						int ap = tc_alg_applies(t, &md, (enum tc_coll)c, n);
						cr_assert(ap == 0 || ap == TC_ENOTSUP);
						/* The v-collectives: 8 elements from each rank to each. */
						static const size_t eights[16 * 16] = {
#define E8 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8
#define E8x16 E8, E8, E8, E8, E8, E8, E8, E8, E8, E8, E8, E8, E8, E8, E8, E8
						        E8x16};
#undef E8x16
#undef E8
						const bool v = tc_coll_flags((enum tc_coll)c) &
						               TC_CF_VCOUNT;
						struct tc_call call = {.coll = (enum tc_coll)c,
						                       .alg = n,
						                       .bytes = 64,
						                       .esize = 8,
						                       .counts = v && c != TC_COLL_ALLTOALLV
						                                         ? eights
						                                         : NULL,
						                       .matrix = c == TC_COLL_ALLTOALLV
						                                         ? eights
						                                         : NULL};
						struct tc_prediction pr;
						int err = tc_predict_call(t, &md, &call, &pr);
						cr_assert(err == 0 || err == TC_ENOTSUP, "%s %s on %s: %s",
						          tc_coll_name((enum tc_coll)c), n,
						          specs[si], tc_err_name(err));
						cr_assert_eq(ap, err,
						             "%s %s on %s (%s): tokens say %s, generator %s",
						             tc_coll_name((enum tc_coll)c), n,
						             specs[si], port ? "all-port" : "one-port",
						             tc_err_name(ap), tc_err_name(err));
						checked++;
					}
				}
			}
			tc_topo_destroy(t);
		}
	}
	cr_assert_gt(checked, 1000);
	struct tc_topo *t;
	struct tc_model md;
	tc_model_default(&md);
	cr_assert_eq(tc_topo_parse("ring:4", &t), 0);
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_BCAST, "nope"), TC_EALG);
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_COUNT, "ring"), TC_EINVAL);
	cr_assert_eq(tc_alg_applies(NULL, &md, TC_COLL_BCAST, "ring"), TC_EINVAL);
	tc_topo_destroy(t);
}

/* The models of the closed-form and AUTO matrices: ports, switching and
 * duplex in every combination, plus packets (mu) and combine costs. */
static void reg_model(int i, struct tc_model *md)
{
	tc_model_default(md);
	md->ts_ns = 1000;
	md->tw_ns = 2;
	md->tc_ns = i & 8 ? 0 : 3;
	if (i & 1)
		md->ports = TC_PORTS_ALL;
	if (i & 2) {
		md->switching = TC_SWITCH_CT;
		md->th_ns = 40;
		if (i & 8)
			md->mu = 256;
	}
	if (i & 4)
		md->duplex = TC_DUPLEX_HALF;
}
#define REG_NMODELS 16

/* One case of the registry matrix: algorithm a applies to topology t (spec,
 * p ranks) under model md (reg_model(mi)). */
struct reg_case {
	const struct tc__alg *a;
	struct tc_topo *t;
	const char *spec;
	int p, mi;
	const struct tc_model *md;
};

/* Calls f(case, arg) for every algorithm that applies to every topology of
 * tc_test_specs_for(p), p in ps, under each of the REG_NMODELS models. */
static void reg_each(const int *ps, int nps, void (*f)(const struct reg_case *, void *), void *arg)
{
	for (int pi = 0; pi < nps; pi++) {
		char specs[16][32];
		int p = ps[pi], ns = tc_test_specs_for(p, specs, 16);
		for (int si = 0; si < ns; si++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[si], &t), 0, "%s", specs[si]);
			for (int mi = 0; mi < REG_NMODELS; mi++) {
				struct tc_model md;
				reg_model(mi, &md);
				for (int i = 0; i < tc__nalgs; i++) {
					const struct tc__alg *a = &tc__algs[i];
					if (tc_alg_applies(t, &md, a->coll, a->name))
						continue;
					struct reg_case c = {a, t, specs[si], p, mi, &md};
					f(&c, arg);
				}
			}
			tc_topo_destroy(t);
		}
	}
}

static void exact_formula_case(const struct reg_case *c, void *arg)
{
	static const size_t ms[] = {0, 8, 64, 1000, 65536};
	long *checked = arg;
	if (!(c->a->flags & TC__ALG_EXACT))
		return;
	for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
		for (int root = 0; root < 2; root++) {
			struct tc_call call = {.coll = c->a->coll,
			                       .alg = c->a->name,
			                       .bytes = ms[k],
			                       .esize = 8,
			                       .root = root ? c->p - 1 : 0,
			                       .q = root ? 1 : c->p / 2};
			struct tc_prediction pr;
			if (tc_predict_call(c->t, c->md, &call, &pr) || isnan(pr.formula_ns))
				continue;
			cr_assert_eq((tc_time_t)llround(pr.formula_ns * 1000), pr.modelled_ps,
			             "%s %s on %s model %d m %zu root %d: formula %.3f ns, modelled %lld ps",
			             tc_coll_name(c->a->coll), c->a->name, c->spec, c->mi, ms[k],
			             call.root, pr.formula_ns, (long long)pr.modelled_ps);
			(*checked)++;
		}
}

/* A formula flagged exact (TC__ALG_EXACT: AUTO prices by it without
 * building the schedule) is the modelled time to the picosecond wherever it
 * is not NAN, over the matrix: every collective, every topology kind, p up
 * to 32, 16 models, sizes from 0 to 64 KiB, two roots. */
Test(registry, exact_formulas_are_the_modelled_times, .timeout = 300)
{
	static const int ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 32};
	long checked = 0;
	reg_each(ps, (int)(sizeof ps / sizeof ps[0]), exact_formula_case, &checked);
	cr_assert_gt(checked, 10000);
}

/* The choice a full evaluation makes: every applicable algorithm generated
 * and priced (the model's makespan, or the machine's score when g->cpus),
 * the fallbacks only when nothing else applies (unless g->cpus), the
 * machine's own algorithms (TC__ALG_SHM) never (g->shm is 0: they are
 * taken by rule, not by price), ties to the first in the registry. */
static const struct tc__alg *full_choice(const struct tc__gen *g, tc_time_t *best_out)
{
	const struct tc__alg *best = NULL;
	tc_time_t best_t = 0;
	for (int pass = 0; pass < 2 && !best; pass++)
		for (int i = 0; i < tc__nalgs; i++) {
			const struct tc__alg *a = &tc__algs[i];
			if (a->coll != g->coll || (a->flags & TC__ALG_SHM) ||
			    (g->cpus ? pass : !(a->flags & TC__ALG_FALLBACK) != !pass))
				continue;
			struct tc__sched s;
			if (tc__coll_generate(a, g, &s))
				continue;
			tc_time_t t;
			int err;
			if (g->cpus) {
				err = tc__machine_score(&s, g, &t);
			} else {
				struct tc__sim sim;
				err = tc__sched_simulate(&s, g->t, g->md, &sim);
				t = sim.makespan;
				if (!err)
					tc__sim_free(&sim);
			}
			tc__sched_free(&s);
			cr_assert_eq(err, 0);
			if (!best || t < best_t) {
				best = a;
				best_t = t;
			}
		}
	*best_out = best_t;
	return best;
}

/* AUTO by closed forms and bounds (lib/coll/select.c, tc__coll_auto) picks
 * what the full evaluation picks, priced by the model and on a machine of
 * 2 CPUs with 3 us levels: every collective, several topologies, sizes and
 * models. */
Test(registry, auto_by_closed_forms_is_auto_by_simulation, .timeout = 300)
{
	static const char *const specs[] = {"complete:8", "ring:7",    "hypercube:4", "torus:4x4",
	                                    "mesh:3x5",   "star:6",    "chain:5",     "hypercube:6",
	                                    "ring:64",    "complete:1"};
	static const size_t ms[] = {0, 8, 1024, 65536};
	long checked = 0;
	for (size_t si = 0; si < sizeof specs / sizeof specs[0]; si++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[si], &t), 0, "%s", specs[si]);
		int p = tc_topo_nodes(t);
		for (int mi = 0; mi < REG_NMODELS; mi += 3) {
			struct tc_model md;
			reg_model(mi, &md);
			for (int c = 0; c < TC_COLL_COUNT; c++) {
				if (c == TC_COLL_MULTICAST ||
				    (tc_coll_flags((enum tc_coll)c) & TC_CF_VCOUNT))
					continue; /* need a member set, counts: their suites */
				for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
					for (int machine = 0; machine < 2; machine++) {
						struct tc__gen g = {.coll = (enum tc_coll)c,
						                    .t = t,
						                    .p = p,
						                    .bytes = ms[k],
						                    .esize = 8,
						                    .root = p > 1,
						                    .md = &md,
						                    .me = -1,
						                    .q = p > 1 ? 1 : 0};
						if (machine) {
							g.cpus = 2;
							g.wait_ns = 3000 * (uint64_t)((p + 1) / 2);
						}
						tc_time_t want_t;
						const struct tc__alg *want = full_choice(&g, &want_t);
						const struct tc__alg *got = NULL;
						struct tc__sched s;
						tc_time_t ms_ps;
						int err = tc__coll_select(&g, NULL, 0, &got, &s, &ms_ps);
						cr_assert_eq(err, want ? 0 : TC_ENOTSUP,
						             "%s %s: %s", tc_coll_name(g.coll),
						             specs[si], tc_err_name(err));
						if (!want)
							continue;
						cr_assert_eq(got, want,
						             "%s on %s model %d m %zu%s: auto %s, full %s",
						             tc_coll_name(g.coll), specs[si], mi,
						             ms[k], machine ? " (machine)" : "",
						             got->name, want->name);
						/* The time reported is the model's, simulated. */
						struct tc__sim sim;
						cr_assert_eq(tc__sched_simulate(&s, t, &md, &sim), 0);
						cr_assert_eq(ms_ps, sim.makespan, "%s %s",
						             tc_coll_name(g.coll), got->name);
						tc__sim_free(&sim);
						tc__sched_free(&s);
						checked++;
					}
			}
		}
		tc_topo_destroy(t);
	}
	cr_assert_gt(checked, 500);
}

static void reduce_reads_in_case(const struct reg_case *c, void *arg)
{
	static const size_t ms[] = {8, 1000, 65536};
	long *checked = arg;
	if (c->a->coll != TC_COLL_REDUCE)
		return;
	for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
		for (int root = 0; root < 2; root++) {
			struct tc__gen g = {.coll = TC_COLL_REDUCE,
			                    .t = c->t,
			                    .p = c->p,
			                    .bytes = ms[k],
			                    .esize = 8,
			                    .root = root ? c->p - 1 : 0,
			                    .md = c->md,
			                    .me = -1};
			struct tc__sched s;
			cr_assert_eq(tc__coll_generate(c->a, &g, &s), 0);
			cr_assert_eq(s.reads_in, c->p > 1,
			             "reduce %s on %s model %d m %zu root %d: reads_in %d",
			             c->a->name, c->spec, c->mi, ms[k], g.root, s.reads_in);
			/* IN is read, never written; the root never sends. */
			for (int x = 0; x < s.nx; x++) {
				cr_assert_neq(s.x[x].rbuf, TC__BUF_IN);
				cr_assert_neq(s.x[x].src, g.root);
			}
			tc__sched_free(&s);
			(*checked)++;
		}
}

/* A reduce (the dual of a bcast) reads each rank's contribution from IN
 * itself (lib/coll/dual.c: no copy of IN into OUT before the first
 * transfer) for every algorithm, topology, model, size and root of the
 * matrix: each bcast delivers a region once and whole.  At p = 1 (an empty
 * schedule) the framework copies. */
Test(registry, reduce_duals_read_in, .timeout = 120)
{
	static const int ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 32};
	long checked = 0;
	reg_each(ps, (int)(sizeof ps / sizeof ps[0]), reduce_reads_in_case, &checked);
	cr_assert_gt(checked, 10000);
}
