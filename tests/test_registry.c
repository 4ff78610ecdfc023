/* SPDX-License-Identifier: MIT */
/*
 * tests/test_registry.c - the registries of collectives and algorithms:
 * names round-trip, every collective has algorithms, flags are consistent
 * with the collectives' shapes, and every algorithm's restriction tokens
 * (tc_alg_applies) say exactly where its generator produces a schedule.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "coll/gen.h"
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
		cr_assert(c == TC_COLL_SHIFT || c == TC_COLL_GRAY2BINARY || c == TC_COLL_BINARY2GRAY ||
		                  tc_coll_flags((enum tc_coll)c) != 0u,
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
						const bool v = tc_coll_flags((enum tc_coll)c) & TC_CF_VCOUNT;
						struct tc_call call = {
							.coll = (enum tc_coll)c, .alg = n, .bytes = 64, .esize = 8,
							.counts = v && c != TC_COLL_ALLTOALLV ? eights : NULL,
							.matrix = c == TC_COLL_ALLTOALLV ? eights : NULL};
						struct tc_prediction pr;
						int err = tc_predict_call(t, &md, &call, &pr);
						cr_assert(err == 0 || err == TC_ENOTSUP, "%s %s on %s: %s",
						          tc_coll_name((enum tc_coll)c), n, specs[si],
						          tc_err_name(err));
						cr_assert_eq(ap, err, "%s %s on %s (%s): tokens say %s, generator %s",
						             tc_coll_name((enum tc_coll)c), n, specs[si],
						             port ? "all-port" : "one-port", tc_err_name(ap),
						             tc_err_name(err));
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
