/* SPDX-License-Identifier: MIT */
/*
 * tests/test_scale.c - teams of a thousand ranks: barrier and
 * allreduce at p = 1024 on three topologies with every result checked; the
 * team's memory and its schedule cache grow like p log p, not p^2, and the
 * cache holds one schedule per distinct call for the whole team (not one
 * per rank) within its bound; a team that cannot exist fails before any
 * large allocation, saying which limit; prediction of schedules too large
 * to simulate.  Timing goals (2 s per run) live in ./tools/bench scale.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>

#include "coll_ref.h"
#include "harness.h"
#include "topocoll.h"

/* The process's peak resident set so far, KB. */
static long max_rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Barrier and 8-byte allreduce (and a 1000-double one) on 1024 ranks,
 * checked against the sequential reference; then the memory bounds. */
static void thousand(const char *spec, int grid)
{
	char msg[512];
	struct tc_team *t = ct_team(spec, NULL, msg, sizeof msg);
	cr_assert(t, "%s", msg);
	struct ct_case cs[] = {
	        {.coll = TC_COLL_BARRIER, .iters = 2, .seed = 1},
	        {.coll = TC_COLL_ALLREDUCE, .count = 1, .dt = TC_DOUBLE, .op = TC_OP_SUM, .iters = 2, .seed = 2},
	        {.coll = TC_COLL_ALLREDUCE, .count = 1000, .dt = TC_INT64, .op = TC_OP_MAX, .seed = 3},
	};
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
		cr_assert_eq(ct_run(t, &cs[i], msg, sizeof msg), 0, "%s case %zu: %s", spec, i, msg);
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	const double p = info.p, plogp = p * log2(p);
	/* One schedule per distinct call for the team: 3 entries, not 3 p. */
	cr_assert_eq(info.sched_cache_entries, 3, "%s: %d entries", spec, info.sched_cache_entries);
	/* p log p: the channels of a hypercube (p log p arcs), the schedules
	 * of its allreduce (p log p transfers) and their per-rank index.  A
	 * grid's routed schedules (linear's routes of ~sqrt(p) hops) stay
	 * within p^1.5, far below p^2. */
	double bound = grid ? 4096.0 * p * sqrt(p) / 32 : 512.0 * plogp;
	cr_assert_leq((double)info.sched_cache_bytes, bound, "%s: cache %zu bytes, bound %.0f",
	              spec, info.sched_cache_bytes, bound);
	/* The team: a channel per arc (p log p on the hypercube, 4 p on the
	 * torus) of at most 64 KiB, and a few lines per rank. */
	cr_assert_leq((double)info.channels, grid ? 4.0 * p : plogp, "%s: %ld channels", spec,
	              info.channels);
	cr_assert_leq(info.ring_bytes, (size_t)64 << 10);
	cr_assert_leq((double)info.memory_bytes,
	              (double)info.channels * (info.ring_bytes + 1024) + 8192.0 * p,
	              "%s: team %zu bytes for %ld channels of %zu", spec, info.memory_bytes,
	              info.channels, info.ring_bytes);
	tc_team_destroy(t);
}

Test(scale, hypercube_1024, .timeout = 300)
{
	thousand("hypercube:10", 0);
}

Test(scale, torus_32x32, .timeout = 300)
{
	thousand("torus:32x32", 1);
}

/* A ring of 1024: AUTO prices the machine (2 CPUs) and takes the routed
 * linear schedules; checked for results only (routes of p/2 hops). */
Test(scale, ring_1024, .timeout = 300)
{
	char msg[512];
	struct tc_team *t = ct_team("ring:1024", NULL, msg, sizeof msg);
	cr_assert(t, "%s", msg);
	struct ct_case b = {.coll = TC_COLL_BARRIER, .seed = 4};
	struct ct_case a = {.coll = TC_COLL_ALLREDUCE, .count = 1, .dt = TC_DOUBLE, .op = TC_OP_SUM, .seed = 5};
	cr_assert_eq(ct_run(t, &b, msg, sizeof msg), 0, "%s", msg);
	cr_assert_eq(ct_run(t, &a, msg, sizeof msg), 0, "%s", msg);
	tc_team_destroy(t);
}

/* The team's cache keeps at most its bound of entries, however many
 * distinct calls are made, and every call still succeeds (an evicted
 * schedule is rebuilt alike). */
Test(scale, cache_bounded, .timeout = 120)
{
	char msg[512];
	struct tc_team *t = ct_team("hypercube:3", NULL, msg, sizeof msg);
	cr_assert(t, "%s", msg);
	for (int n = 1; n <= 100; n++) {
		struct ct_case c = {.coll = TC_COLL_ALLREDUCE,
		                    .count = (size_t)n,
		                    .dt = TC_INT32,
		                    .op = TC_OP_SUM,
		                    .seed = (uint64_t)n};
		cr_assert_eq(ct_run(t, &c, msg, sizeof msg), 0, "count %d: %s", n, msg);
	}
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	cr_assert_leq(info.sched_cache_entries, 64);
	cr_assert_gt(info.sched_cache_entries, 8);
	cr_assert_gt(info.sched_cache_bytes, 0);
	tc_team_destroy(t);
}

/* A team that cannot exist: channels of 1 GiB on the 4032 arcs of
 * complete:64 (4 TiB) fail at once with TC_ELIMIT and a message naming the
 * memory available, before anything large is allocated. */
Test(scale, impossible_team_fails_first, .timeout = 30)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:64";
	cfg.ring_bytes = (size_t)1 << 30;
	struct tc_team *t = NULL;
	long rss0 = max_rss_kb();
	cr_assert_eq(tc_team_create(&cfg, &t), TC_ELIMIT);
	cr_assert_lt(max_rss_kb() - rss0, 64L << 10, "the refusal allocated %ld KB", max_rss_kb() - rss0);
	cr_assert_null(t);
	cr_assert(strstr(tc_error_detail(), "memory available"), "%s", tc_error_detail());
	cr_assert_str_eq(tc_err_name(TC_ELIMIT), "TC_ELIMIT");
}

/* Prediction of a schedule over the simulator's limit: by the exact closed
 * form where there is one (ring allreduce on 4096 ranks: the source's
 * 2 (p - 1)(t_s + (m/p) t_w) computed here), TC_ELIMIT with the count
 * otherwise (chain allgather: p (p - 1) transfers and the p own-block
 * copies). */
Test(scale, predict_beyond_the_simulator, .timeout = 60)
{
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse("ring:4096", &t), 0);
	struct tc_model md;
	tc_model_default(&md);
	md.ts_ns = 1000;
	md.tw_ns = 1;
	md.tc_ns = 0;
	const int p = 4096;
	const size_t m = (size_t)1 << 20;
	struct tc_call c = {.coll = TC_COLL_ALLREDUCE, .alg = "ring", .bytes = m, .esize = 8};
	struct tc_prediction pr;
	cr_assert_eq(tc_predict_call(t, &md, &c, &pr), 0);
	cr_assert_eq(pr.simulated, 0);
	/* The closed form alone: the schedule's 2 p (p - 1) transfers are not
	 * counted (-1). */
	cr_assert_eq(pr.transfers, -1);
	cr_assert_eq(pr.rounds, -1);
	double want = 2.0 * (p - 1) * (md.ts_ns + (double)m / p * md.tw_ns);
	cr_assert_eq(pr.modelled_ps, (tc_time_t)llround(want * 1000), "%lld ps, want %.1f ns",
	             (long long)pr.modelled_ps, want);
	tc_topo_destroy(t);
	cr_assert_eq(tc_topo_parse("chain:4096", &t), 0);
	c = (struct tc_call){.coll = TC_COLL_ALLGATHER, .alg = "chain", .bytes = 8, .esize = 8};
	cr_assert_eq(tc_predict_call(t, &md, &c, &pr), TC_ELIMIT);
	cr_assert(strstr(tc_error_detail(), "16777216 transfers"), "%s", tc_error_detail());
	tc_topo_destroy(t);
}
