/* SPDX-License-Identifier: MIT */
/*
 * Barrier algorithms added for oversubscribed teams (lib/coll/barrier/):
 * the barrier's guarantee for every p of the matrix on every topology that
 * admits it, under the default (yield, then sleep) and the blocking wait
 * policies, and on a large team; modelled times against closed forms
 * computed here, independently of the library's formula, under every port,
 * duplex and switching model; a real run's modelled time against the
 * prediction.
 */
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "coll_check.h"
#include "util.h"

static const char *const algs[] = {"linear"};
#define NALGS 1

static struct tc_team *make_team(const char *spec, enum tc_wait_policy wait, const struct tc_model *md)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.timeout_ms = 60000; /* a hang fails instead of blocking the suite */
	cfg.wait = wait;
	if (md)
		cfg.model = *md;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	return team;
}

/* ---- 1. the guarantee -------------------------------------------------------- */

#define ITERS 12

static void check_barrier(const char *spec, const char *alg, enum tc_wait_policy wait, int iters)
{
	struct tc_team *team = make_team(spec, wait, NULL);
	int p = tc_team_size(team);
	struct bar_arg a = {.alg = alg, .iters = iters};
	int err = tc_run(team, bar_fn, &a);
	cr_assert_eq(err, 0, "%s %s: %s", spec, alg, tc_strerror(err));
	cr_assert_eq(atomic_load(&a.f.n), 0, "%s: %s", spec, a.f.msg);
	cr_assert_eq(atomic_load(&a.count), iters * p);
	tc_team_destroy(team);
}

Test(barrier, synchronises, .timeout = 300)
{
	for (int k = 0; k < TC_TEST_NPS; k++) {
		int p = tc_test_ps[k];
		char specs[16][32];
		int nspec = tc_test_specs_for(p, specs, 16);
		for (int i = 0; i < nspec; i += (p > 16 ? 2 : 1))
			for (int a = 0; a < NALGS; a++)
				check_barrier(specs[i], algs[a], TC_WAIT_AUTO, ITERS);
	}
}

/* Every rank sleeps at once: the release must wake each of them. */
Test(barrier, blocking_waits, .timeout = 300)
{
	static const int ps[] = {1, 2, 3, 5, 8, 64};
	for (int k = 0; k < 6; k++) {
		char spec[32];
		snprintf(spec, sizeof spec, "complete:%d", ps[k]);
		for (int a = 0; a < NALGS; a++)
			check_barrier(spec, algs[a], TC_WAIT_BLOCK, ITERS);
		snprintf(spec, sizeof spec, "ring:%d", ps[k]);
		for (int a = 0; a < NALGS; a++)
			check_barrier(spec, algs[a], TC_WAIT_BLOCK, 4);
	}
}

/* 1024 ranks on the CPUs there are: rank 0 takes 1023 arrivals a barrier. */
Test(barrier, large_team, .timeout = 300)
{
	for (int a = 0; a < NALGS; a++) {
		check_barrier("star:1024", algs[a], TC_WAIT_AUTO, 3);
		check_barrier("star:257", algs[a], TC_WAIT_BLOCK, 3);
	}
}

/* ---- 2. modelled time ------------------------------------------------------------ */

/* t_s = 1000 ns, t_h = 50 ns (cut-through only), in picoseconds. */
#define TS 1000000LL
#define TH 50000LL

/* The linear barrier with every rank a neighbour of rank 0, derived from the
 * clock rules (lib/model/clock.h) directly: rank 0's receives complete at
 * msg, msg + t_s, ..., its sends start t_s apart (one port) or all at once
 * (all ports); the last release arrives msg after the last send starts. */
static long long linear_closed_form(int p, int ct, int allport)
{
	if (p == 1)
		return 0;
	long long msg = TS + (ct ? TH : 0);
	long long gather_done = allport ? msg : msg + (p - 2) * TS;
	long long last_send = allport ? gather_done : gather_done + (p - 2) * TS;
	return last_send + msg;
}

Test(barrier, closed_forms, .timeout = 120)
{
	int checked = 0;
	for (int ct = 0; ct < 2; ct++)
		for (int allport = 0; allport < 2; allport++)
			for (int half = 0; half < 2; half++) {
				struct tc_model md;
				tc_model_default(&md);
				md.ts_ns = 1000.0;
				md.tw_ns = 2.0;
				md.tc_ns = 1.0;
				md.th_ns = ct ? 50.0 : 0.0;
				md.switching = ct ? TC_SWITCH_CT : TC_SWITCH_SF;
				md.ports = allport ? TC_PORTS_ALL : TC_PORTS_ONE;
				md.duplex = half ? TC_DUPLEX_HALF : TC_DUPLEX_FULL;
				for (int p = 1; p <= 70; p++)
					for (int kind = 0; kind < 3; kind++) {
						char spec[32];
						snprintf(spec, sizeof spec,
						         kind == 0   ? "complete:%d"
						         : kind == 1 ? "star:%d"
						                     : "ring:%d",
						         p);
						struct tc_topo *t;
						cr_assert_eq(tc_topo_parse(spec, &t), 0);
						struct tc_prediction pr;
						int err = tc_predict(t, &md, TC_COLL_BARRIER,
						                     "linear", 0, 1, 0, 0, &pr);
						cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
						cr_assert_str_eq(pr.algorithm, "linear");
						cr_assert_eq(pr.rounds, p > 1 ? 2 : 0);
						cr_assert_eq(pr.messages, 2L * (p - 1));
						if (kind < 2 || p <= 3) { /* every rank a neighbour of 0 */
							long long want =
							        linear_closed_form(p, ct, allport);
							cr_assert_eq(pr.modelled_ps, want,
							             "%s ct=%d all=%d half=%d: %lld",
							             spec, ct, allport, half,
							             (long long)pr.modelled_ps);
							cr_assert_eq(llround(pr.formula_ns * 1000.0),
							             want, "%s: formula %.3f", spec,
							             pr.formula_ns);
							/* Rank 0 takes p-1 transfers in each round:
							 * one port serialises them. */
							long viol = allport || p < 2 ? 0L
							                             : 2L * (p - 2);
							cr_assert_eq(pr.oneport_violations, viol);
							checked++;
						} else {
							cr_assert(isnan(pr.formula_ns),
							          "%s: routed, no closed form", spec);
						}
						tc_topo_destroy(t);
					}
			}
	cr_assert_gt(checked, 1000);
}

/* A real run's makespan equals the prediction of the same call. */
struct one_arg {
	const char *alg;
	tc_time_t modelled;
	struct failure f;
};

static int one_fn(struct tc_proc *proc, void *argp)
{
	struct one_arg *a = argp;
	struct tc_coll_opts o = {.alg = a->alg};
	int err = tc_barrier(proc, &o);
	if (err)
		FAIL(&a->f, "rank %d: %s", tc_rank(proc), tc_err_name(err));
	struct tc_coll_info info;
	tc_last_coll(proc, &info);
	if (tc_rank(proc) == 0)
		a->modelled = info.modelled_ps;
	return 0;
}

Test(barrier, run_equals_prediction, .timeout = 120)
{
	static const char *const specs[] = {"complete:1", "complete:2", "complete:5", "star:13",
	                                    "ring:7",     "torus:4x4",  "hypercube:3"};
	struct tc_model md;
	tc_model_default(&md);
	md.ts_ns = 1000.0;
	for (int i = 0; i < 7; i++)
		for (int a = 0; a < NALGS; a++) {
			struct tc_team *team = make_team(specs[i], TC_WAIT_AUTO, &md);
			struct one_arg arg = {.alg = algs[a]};
			cr_assert_eq(tc_run(team, one_fn, &arg), 0);
			cr_assert_eq(atomic_load(&arg.f.n), 0, "%s: %s", specs[i], arg.f.msg);
			struct tc_prediction pr;
			cr_assert_eq(tc_predict(tc_team_topo(team), &md, TC_COLL_BARRIER, algs[a],
			                        0, 1, 0, 0, &pr),
			             0);
			cr_assert_eq(arg.modelled, pr.modelled_ps, "%s %s", specs[i], algs[a]);
			tc_team_destroy(team);
		}
}
