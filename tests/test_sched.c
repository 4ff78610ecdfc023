/* SPDX-License-Identifier: MIT */
/*
 * tests/test_sched.c - the schedule IR: builder, simulator (logical clock) and
 * checker (1-port, contention, NODUP, NOHO).
 *
 * Every expected time is a closed form written here in integer picoseconds
 * with t_s = 1000 ns, t_w = 2 ns/B, t_h = 50 ns, t_c = 3 ns/B, so that
 *   L(m)     = t_s + m t_w                  (one link's share)
 *   SF(m, l) = l (t_s + m t_w)              (store-and-forward over l hops)
 *   CT(m, l) = t_s + m t_w + l t_h          (cut-through over l hops).
 * Hop counts come from a breadth-first search written in this file, not from
 * the topology's routing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "sched/sched.h"
#include "topocoll/error.h"
#include "topocoll/model.h"
#include "topocoll/topo.h"
#include "util.h"

#define TS 1000000LL /* ps */
#define TW 2000LL    /* ps per byte */
#define TH 50000LL   /* ps */
#define TC 3000LL    /* ps per byte */

/* The closed forms of the file header, in ps. */
static tc_time_t Lt(uint64_t m)
{
	return TS + (tc_time_t)m * TW;
}
static tc_time_t SFt(uint64_t m, int l)
{
	return (tc_time_t)l * (TS + (tc_time_t)m * TW);
}
static tc_time_t CTt(uint64_t m, int l)
{
	return TS + (tc_time_t)m * TW + (tc_time_t)l * TH;
}

/* The test model: t_s 1000 ns, t_w 2 ns/B, t_h 50 ns, t_c 3 ns/B. */
static struct tc_model mdl(enum tc_ports ports, enum tc_duplex dx, enum tc_switching sw)
{
	struct tc_model m;
	memset(&m, 0, sizeof m);
	m.ts_ns = 1000.0;
	m.tw_ns = 2.0;
	m.th_ns = 50.0;
	m.tc_ns = 3.0;
	m.ports = ports;
	m.duplex = dx;
	m.switching = sw;
	m.combining = 1;
	return m;
}

/* Parses spec or fails the test. */
static struct tc_topo *topo(const char *spec)
{
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse(spec, &t), 0, "parse %s", spec);
	cr_assert_not_null(t);
	return t;
}

/* Appends src -> dst (IN -> OUT) carrying pieces [lo, lo + n). */
static void add(struct tc__sched *s, int src, int dst, uint64_t bytes, int op, int32_t lo, int32_t n)
{
	struct tc__xfer x;
	memset(&x, 0, sizeof x);
	x.src = src;
	x.dst = dst;
	x.sbuf = TC__BUF_IN;
	x.rbuf = TC__BUF_OUT;
	x.op = (uint8_t)op;
	x.info_lo = lo;
	x.info_n = n;
	x.bytes = bytes;
	cr_assert_eq(tc__sched_add(s, &x), 0);
}

/* Simulates or fails the test. */
static void sim(const struct tc__sched *s, const struct tc_topo *t, const struct tc_model *m,
                struct tc__sim *out)
{
	cr_assert_eq(tc__sched_simulate(s, t, m, out), 0);
	cr_assert_not_null(out->clock);
}

/* Number of set bits (hops between hypercube nodes differing by v). */
static int popcount(unsigned v)
{
	int n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

/* The hypercube broadcast of one piece (id 0) from node 0: in round i nodes
 * below 2^i send to node ^ (1 << i). */
static void hcube_bcast(struct tc__sched *s, int d, uint64_t m)
{
	cr_assert_eq(tc__sched_init(s, 1 << d), 0);
	cr_assert_eq(tc__sched_initial(s, 0, 0, 1), 0);
	for (int i = 0; i < d; i++) {
		cr_assert_eq(tc__sched_round(s), 0);
		for (int u = 0; u < (1 << i); u++)
			add(s, u, u ^ (1 << i), m, TC__XOP_COPY, 0, 1);
	}
}

/* The hypercube allgather by recursive doubling: node u holds piece u; in
 * round i it exchanges the 2^i pieces of its subcube with u ^ (1 << i). */
static void hcube_allgather(struct tc__sched *s, int d, uint64_t m)
{
	int p = 1 << d;
	cr_assert_eq(tc__sched_init(s, p), 0);
	for (int u = 0; u < p; u++)
		cr_assert_eq(tc__sched_initial(s, u, u, 1), 0);
	for (int i = 0; i < d; i++) {
		cr_assert_eq(tc__sched_round(s), 0);
		for (int u = 0; u < p; u++)
			add(s, u, u ^ (1 << i), m << i, TC__XOP_COPY, u & ~((1 << i) - 1), 1 << i);
	}
}

/* ---------------------------------------------------------------- builder */

Test(sched, builder_rounds_and_layout)
{
	struct tc__sched s;
	cr_assert_eq(tc__sched_init(&s, 4), 0);
	cr_assert_eq(s.p, 4);
	cr_assert_eq(s.nrounds, 0);
	cr_assert_eq(s.nx, 0);
	add(&s, 0, 1, 8, TC__XOP_COPY, 0, 0); /* opens round 0 */
	cr_assert_eq(s.nrounds, 1);
	add(&s, 1, 2, 8, TC__XOP_COPY, 0, 0);
	cr_assert_eq(tc__sched_round(&s), 0);
	cr_assert_eq(tc__sched_round(&s), 0); /* round 2, empty until now */
	add(&s, 2, 3, 8, TC__XOP_COMBINE_LEFT, 0, 0);
	/* Many transfers to exercise growth. */
	cr_assert_eq(tc__sched_round(&s), 0);
	for (int i = 0; i < 1000; i++)
		add(&s, i % 4, (i + 1) % 4, 1, TC__XOP_COPY, 0, 0);
	cr_assert_eq(s.nrounds, 4);
	cr_assert_eq(s.nx, 1003);
	cr_assert_eq(s.round_at[0], 0);
	cr_assert_eq(s.round_at[1], 2);
	cr_assert_eq(s.round_at[2], 2);
	cr_assert_eq(s.round_at[3], 3);
	cr_assert_eq(s.round_at[4], 1003);
	cr_assert_eq(s.x[2].src, 2);
	cr_assert_eq(s.x[2].op, TC__XOP_COMBINE_LEFT);
	cr_assert_eq(s.err, 0);

	/* A TMP region raises tmp_bytes. */
	struct tc__xfer x;
	memset(&x, 0, sizeof x);
	x.src = 0;
	x.dst = 1;
	x.rbuf = TC__BUF_TMP;
	x.roff = 100;
	x.bytes = 28;
	cr_assert_eq(tc__sched_add(&s, &x), 0);
	cr_assert_eq(s.tmp_bytes, 128);
	tc__sched_free(&s);
	cr_assert_eq(s.nx, 0);
	cr_assert_null(s.x);
	tc__sched_free(&s); /* twice is harmless */
}

Test(sched, builder_errors_are_sticky)
{
	struct tc__sched s;
	struct tc__xfer x;
	memset(&x, 0, sizeof x);
	cr_assert_eq(tc__sched_init(&s, 0), TC_EINVAL);
	tc__sched_free(&s);

	cr_assert_eq(tc__sched_init(&s, 3), 0);
	cr_assert_eq(tc__sched_initial(&s, 3, 0, 1), TC_EINVAL);
	cr_assert_eq(s.err, TC_EINVAL);
	tc__sched_free(&s);

	const struct {
		int src, dst, sbuf, rbuf, op, lo, n;
	} bad[] = {
	        {-1, 0, 0, 0, 0, 0, 0}, {0, 3, 0, 0, 0, 0, 0}, {0, 1, 3, 0, 0, 0, 0},
	        {0, 1, 0, 7, 0, 0, 0},  {0, 1, 0, 0, 3, 0, 0}, {0, 1, 0, 0, 0, -1, 1},
	        {0, 1, 0, 0, 0, 0, -2},
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		cr_assert_eq(tc__sched_init(&s, 3), 0);
		add(&s, 0, 1, 4, TC__XOP_COPY, 0, 0);
		x.src = bad[k].src;
		x.dst = bad[k].dst;
		x.sbuf = (uint8_t)bad[k].sbuf;
		x.rbuf = (uint8_t)bad[k].rbuf;
		x.op = (uint8_t)bad[k].op;
		x.info_lo = bad[k].lo;
		x.info_n = bad[k].n;
		cr_assert_eq(tc__sched_add(&s, &x), TC_EINVAL);
		cr_assert_eq(s.nx, 1);
		/* Sticky: even a good transfer is now refused, and so is a round. */
		x = (struct tc__xfer){.src = 1, .dst = 2};
		cr_assert_eq(tc__sched_add(&s, &x), TC_EINVAL);
		cr_assert_eq(tc__sched_round(&s), TC_EINVAL);
		cr_assert_eq(s.nx, 1);
		struct tc_topo *t = topo("ring:3");
		struct tc_model m = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
		struct tc__sim out;
		cr_assert_eq(tc__sched_simulate(&s, t, &m, &out), TC_EINVAL);
		cr_assert_null(out.clock);
		tc__sim_free(&out);
		tc_topo_destroy(t);
		tc__sched_free(&s);
	}
}

Test(sched, simulate_rejects_malformed)
{
	struct tc__sched s;
	struct tc__sim out;
	struct tc_model m = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	struct tc_topo *t = topo("ring:4");
	cr_assert_eq(tc__sched_init(&s, 5), 0);
	cr_assert_eq(tc__sched_simulate(&s, t, &m, &out), TC_EINVAL); /* p != 4 */
	tc__sched_free(&s);

	cr_assert_eq(tc__sched_init(&s, 4), 0);
	add(&s, 0, 1, 4, TC__XOP_COPY, 0, 0);
	s.x[0].dst = 4; /* corrupted after building */
	cr_assert_eq(tc__sched_simulate(&s, t, &m, &out), TC_EINVAL);
	s.x[0].dst = 1;
	s.x[0].op = 9;
	cr_assert_eq(tc__sched_simulate(&s, t, &m, &out), TC_EINVAL);
	s.x[0].op = TC__XOP_COPY;
	cr_assert_eq(tc__sched_simulate(&s, t, &m, &out), 0);
	cr_assert_eq(out.makespan, Lt(4));
	tc__sim_free(&out);
	cr_assert_eq(tc__sched_simulate(NULL, t, &m, &out), TC_EINVAL);
	cr_assert_eq(tc__sched_simulate(&s, NULL, &m, &out), TC_EINVAL);
	cr_assert_eq(tc__sched_simulate(&s, t, NULL, &out), TC_EINVAL);
	cr_assert_eq(tc__sched_simulate(&s, t, &m, NULL), TC_EINVAL);
	tc__sched_free(&s);
	tc_topo_destroy(t);
}

Test(sched, empty_schedule)
{
	const char *specs[] = {"ring:1", "hypercube:0", "chain:5"};
	for (int k = 0; k < 3; k++) {
		struct tc_topo *t = topo(specs[k]);
		struct tc__sched s;
		struct tc__sim out;
		struct tc_model m = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
		cr_assert_eq(tc__sched_init(&s, tc_topo_nodes(t)), 0);
		sim(&s, t, &m, &out);
		cr_assert_eq(out.makespan, 0);
		cr_assert_eq(out.rounds, 0);
		cr_assert_eq(out.messages, 0);
		cr_assert_eq(tc__sched_round(&s), 0); /* one empty round */
		tc__sim_free(&out);
		sim(&s, t, &m, &out);
		cr_assert_eq(out.rounds, 1);
		cr_assert_eq(out.makespan, 0);
		tc__sim_free(&out);
		tc__sched_free(&s);
		tc_topo_destroy(t);
	}
}

/* ------------------------------------------------------------ clock rules */

Test(sched, neighbour_exchange_full_and_half_duplex)
{
	const uint64_t sizes[] = {0, 1, 7, 64, 1000, 1 << 20};
	const enum tc_ports ports[] = {TC_PORTS_ONE, TC_PORTS_ALL};
	for (int d = 1; d <= 4; d++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", d);
		struct tc_topo *t = topo(spec);
		int p = 1 << d;
		for (int k = 0; k < d; k++)
			for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
				for (int pi = 0; pi < 2; pi++)
					for (int half = 0; half < 2; half++) {
						uint64_t m = sizes[z];
						struct tc__sched s;
						struct tc__sim out;
						struct tc_model md =
						        mdl(ports[pi],
						            half ? TC_DUPLEX_HALF : TC_DUPLEX_FULL,
						            TC_SWITCH_SF);
						cr_assert_eq(tc__sched_init(&s, p), 0);
						for (int u = 0; u < p; u++)
							add(&s, u, u ^ (1 << k), m, TC__XOP_COPY, 0, 0);
						sim(&s, t, &md, &out);
						/* full duplex: t_s + m t_w; half: 2 (t_s + m t_w) */
						tc_time_t want = half ? 2 * (TS + (tc_time_t)m * TW)
						                      : TS + (tc_time_t)m * TW;
						for (int u = 0; u < p; u++)
							cr_assert_eq(out.clock[u], want);
						cr_assert_eq(out.makespan, want);
						cr_assert_eq(out.messages, p);
						cr_assert_eq(out.hop_messages, p);
						cr_assert_eq(out.bytes, (uint64_t)p * m);
						cr_assert_eq(out.oneport_violations, 0);
						cr_assert_eq(out.contention_total, 0);
						tc__sim_free(&out);
						tc__sched_free(&s);
					}
		tc_topo_destroy(t);
	}
	/* The same on a ring of pairs (0,1), (2,3), ... */
	struct tc_topo *t = topo("ring:8");
	for (int half = 0; half < 2; half++) {
		struct tc__sched s;
		struct tc__sim out;
		struct tc_model md =
		        mdl(TC_PORTS_ONE, half ? TC_DUPLEX_HALF : TC_DUPLEX_FULL, TC_SWITCH_CT);
		cr_assert_eq(tc__sched_init(&s, 8), 0);
		for (int u = 0; u < 8; u++)
			add(&s, u, u ^ 1, 100, TC__XOP_COPY, 0, 0);
		sim(&s, t, &md, &out);
		/* CT over one hop adds t_h to each arrival. */
		tc_time_t one = TS + 100 * TW;
		cr_assert_eq(out.makespan, half ? 2 * one : one + TH);
		tc__sim_free(&out);
		tc__sched_free(&s);
	}
	tc_topo_destroy(t);
}

Test(sched, routed_pairs_sf_and_ct)
{
	const char *specs[] = {"ring:9",    "mesh:3x4", "torus:4x4", "hypercube:4",
	                       "tree:2:15", "star:7",   "chain:6",   "complete:5"};
	const uint64_t m = 100;
	for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
		struct tc_topo *t = topo(specs[k]);
		int p = tc_topo_nodes(t);
		int *dist = malloc((size_t)p * sizeof *dist);
		cr_assert_not_null(dist);
		for (int u = 0; u < p; u++) {
			tc_test_bfs(t, u, dist);
			for (int v = 0; v < p; v++)
				for (int ct = 0; ct < 2; ct++) {
					int l = dist[v];
					struct tc__sched s;
					struct tc__sim out;
					struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL,
					                         ct ? TC_SWITCH_CT : TC_SWITCH_SF);
					cr_assert_eq(tc__sched_init(&s, p), 0);
					add(&s, u, v, m, TC__XOP_COPY, 0, 0);
					sim(&s, t, &md, &out);
					if (u == v) {
						cr_assert_eq(out.makespan, 0);
						cr_assert_eq(out.messages, 0);
					} else {
						/* SF: l (t_s + m t_w); CT: t_s + m t_w + l t_h */
						tc_time_t want = ct ? TS + (tc_time_t)m * TW + l * TH
						                    : l * (TS + (tc_time_t)m * TW);
						cr_assert_eq(out.clock[v], want, "%s %d->%d",
						             specs[k], u, v);
						cr_assert_eq(out.clock[u], Lt(m)); /* sender done */
						cr_assert_eq(out.makespan, want > Lt(m) ? want : Lt(m));
						cr_assert_eq(out.messages, 1);
						cr_assert_eq(out.hop_messages, l);
						for (int w = 0; w < p; w++) /* intermediates not charged */
							if (w != u && w != v)
								cr_assert_eq(out.clock[w], 0);
					}
					cr_assert_eq(out.contention_total, 0);
					cr_assert_eq(out.oneport_violations, 0);
					tc__sim_free(&out);
					tc__sched_free(&s);
				}
		}
		free(dist);
		tc_topo_destroy(t);
	}
}

Test(sched, one_port_serialises_sends_and_receives)
{
	struct tc_topo *t = topo("star:4");
	const uint64_t m = 64;
	for (int all = 0; all < 2; all++) {
		struct tc__sched s;
		struct tc__sim out;
		struct tc_model md =
		        mdl(all ? TC_PORTS_ALL : TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
		/* The hub sends to its 3 neighbours in one round. */
		cr_assert_eq(tc__sched_init(&s, 4), 0);
		for (int v = 1; v <= 3; v++)
			add(&s, 0, v, m, TC__XOP_COPY, 0, 0);
		sim(&s, t, &md, &out);
		for (int v = 1; v <= 3; v++) /* 1-port: v (t_s + m t_w); all-port: t_s + m t_w */
			cr_assert_eq(out.clock[v], (all ? 1 : v) * (TS + (tc_time_t)m * TW));
		cr_assert_eq(out.clock[0], (all ? 1 : 3) * (TS + (tc_time_t)m * TW));
		cr_assert_eq(out.makespan, (all ? 1 : 3) * (TS + (tc_time_t)m * TW));
		cr_assert_eq(out.oneport_violations, all ? 0 : 2);
		tc__sim_free(&out);
		tc__sched_free(&s);

		/* The 3 leaves send to the hub in one round. */
		cr_assert_eq(tc__sched_init(&s, 4), 0);
		for (int v = 1; v <= 3; v++)
			add(&s, v, 0, m, TC__XOP_COPY, 0, 0);
		sim(&s, t, &md, &out);
		cr_assert_eq(out.clock[0], (all ? 1 : 3) * (TS + (tc_time_t)m * TW));
		cr_assert_eq(out.oneport_violations, all ? 0 : 2);
		tc__sim_free(&out);
		tc__sched_free(&s);
	}
	tc_topo_destroy(t);
}

Test(sched, receives_taken_in_order_of_arrival)
{
	/* chain:4 SF, one round: 0 -> 2 (2 hops, listed first, arrives 2L) and
	 * 1 -> 2 (arrives L).  By arrival: L, then max(2L, L + L) = 2L.  In
	 * schedule order it would be 2L then 3L. */
	struct tc_topo *t = topo("chain:4");
	struct tc__sched s;
	struct tc__sim out;
	struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	cr_assert_eq(tc__sched_init(&s, 4), 0);
	add(&s, 0, 2, 10, TC__XOP_COPY, 0, 0);
	add(&s, 1, 2, 10, TC__XOP_COPY, 0, 0);
	sim(&s, t, &md, &out);
	cr_assert_eq(out.clock[2], 2 * Lt(10));
	cr_assert_eq(out.oneport_violations, 1);
	tc__sim_free(&out);
	tc__sched_free(&s);
	tc_topo_destroy(t);
}

Test(sched, ring_broadcast_carries_clocks_across_rounds)
{
	/* Round k: k -> k+1 on ring:p; makespan (p - 1)(t_s + m t_w). */
	const int ps[] = {2, 3, 5, 8, 13};
	for (int k = 0; k < 5; k++) {
		int p = ps[k];
		char spec[32];
		snprintf(spec, sizeof spec, "ring:%d", p);
		struct tc_topo *t = topo(spec);
		struct tc__sched s;
		struct tc__sim out;
		struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_HALF, TC_SWITCH_SF);
		cr_assert_eq(tc__sched_init(&s, p), 0);
		cr_assert_eq(tc__sched_initial(&s, 0, 0, 1), 0);
		for (int r = 0; r + 1 < p; r++) {
			cr_assert_eq(tc__sched_round(&s), 0);
			add(&s, r, r + 1, 1000, TC__XOP_COPY, 0, 1);
		}
		sim(&s, t, &md, &out);
		cr_assert_eq(out.makespan, (tc_time_t)(p - 1) * (TS + 1000 * TW));
		for (int u = 0; u < p; u++)
			cr_assert_eq(out.clock[u], (tc_time_t)(u == p - 1 ? u : u + 1) * Lt(1000));
		cr_assert_eq(out.rounds, p - 1);
		cr_assert_eq(out.nodup_violations, 0);
		cr_assert_eq(out.noho_violations, 0);
		tc__sim_free(&out);
		tc__sched_free(&s);
		tc_topo_destroy(t);
	}
}

Test(sched, combine_cost)
{
	struct tc_topo *t = topo("ring:4");
	struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	const uint64_t m = 500;
	struct tc__sched s;
	struct tc__sim out;
	cr_assert_eq(tc__sched_init(&s, 4), 0);
	add(&s, 2, 2, m, TC__XOP_COMBINE_LEFT, 0, 0);  /* local combine: m t_c */
	add(&s, 3, 3, m, TC__XOP_COPY, 0, 0);          /* local copy: free */
	add(&s, 0, 1, m, TC__XOP_COMBINE_RIGHT, 0, 0); /* received: L + m t_c */
	sim(&s, t, &md, &out);
	cr_assert_eq(out.clock[2], (tc_time_t)m * TC);
	cr_assert_eq(out.clock[3], 0);
	cr_assert_eq(out.clock[1], TS + (tc_time_t)m * TW + (tc_time_t)m * TC);
	cr_assert_eq(out.clock[0], TS + (tc_time_t)m * TW);
	cr_assert_eq(out.messages, 1);
	tc__sim_free(&out);
	/* Two combines into one rank in the next round add up after the receive. */
	cr_assert_eq(tc__sched_round(&s), 0);
	add(&s, 1, 1, m, TC__XOP_COMBINE_LEFT, 0, 0);
	add(&s, 2, 1, 2 * m, TC__XOP_COMBINE_LEFT, 0, 0);
	sim(&s, t, &md, &out);
	/* Rank 2 (clock m t_c) sends 2m: arrival m t_c + L(2m).  Rank 1's receive
	 * port was busy until L(m) (round 0), so the receive ends at
	 * max(arrival, L(m) + L(2m)); then the two combines add m t_c + 2m t_c. */
	tc_time_t arr = (tc_time_t)m * TC + Lt(2 * m);
	tc_time_t port = Lt(m) + Lt(2 * m);
	cr_assert_eq(out.clock[1], (arr > port ? arr : port) + 3 * (tc_time_t)m * TC);
	cr_assert_eq(out.clock[2], arr);
	tc__sim_free(&out);
	tc__sched_free(&s);
	tc_topo_destroy(t);
}

/* ---------------------------------------------------- hypercube schedules */

Test(sched, hypercube_broadcast_is_clean)
{
	for (int d = 1; d <= 8; d++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", d);
		struct tc_topo *t = topo(spec);
		for (int sw = 0; sw < 2; sw++) {
			struct tc__sched s;
			struct tc__sim out;
			struct tc_model md =
			        mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, sw ? TC_SWITCH_CT : TC_SWITCH_SF);
			hcube_bcast(&s, d, 256);
			sim(&s, t, &md, &out);
			/* SF: d (t_s + m t_w).  CT: a sender is done after L but its
			 * receiver only at L + t_h, so the clock of node v at the start
			 * of round i > msb(v) is i L + popcount(v) t_h, and node p - 1
			 * ends at d (t_s + m t_w + t_h). */
			tc_time_t want = sw ? (tc_time_t)d * (Lt(256) + TH) : (tc_time_t)d * Lt(256);
			cr_assert_eq(out.makespan, want);
			cr_assert_eq(out.messages, (1 << d) - 1);
			cr_assert_eq(out.hop_messages, (1 << d) - 1);
			cr_assert_eq(out.rounds, d);
			cr_assert_eq(out.oneport_violations, 0);
			cr_assert_eq(out.contention_total, 0);
			cr_assert_eq(out.ncontention, 0);
			cr_assert_eq(out.nodup_violations, 0);
			cr_assert_eq(out.noho_violations, 0);
			tc__sim_free(&out);
			tc__sched_free(&s);
		}
		tc_topo_destroy(t);
	}
}

Test(sched, hypercube_allgather_closed_form)
{
	/* t_s log p + t_w m (p - 1), NODUP and NOHO clean. */
	for (int d = 1; d <= 7; d++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", d);
		struct tc_topo *t = topo(spec);
		struct tc__sched s;
		struct tc__sim out;
		struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
		hcube_allgather(&s, d, 10);
		sim(&s, t, &md, &out);
		cr_assert_eq(out.makespan, (tc_time_t)d * TS + TW * 10 * ((1 << d) - 1));
		cr_assert_eq(out.nodup_violations, 0);
		cr_assert_eq(out.noho_violations, 0);
		cr_assert_eq(out.oneport_violations, 0);
		cr_assert_eq(out.contention_total, 0);
		tc__sim_free(&out);
		tc__sched_free(&s);
		tc_topo_destroy(t);
	}
}

Test(sched, nodup_noho_counts_bad_schedules)
{
	struct tc_topo *t = topo("hypercube:3");
	struct tc_model md = mdl(TC_PORTS_ALL, TC_DUPLEX_FULL, TC_SWITCH_SF);
	struct tc__sched s;
	struct tc__sim out;
	hcube_bcast(&s, 3, 8);
	cr_assert_eq(tc__sched_round(&s), 0);
	add(&s, 1, 0, 8, TC__XOP_COPY, 0, 1); /* the root gets its own piece: NOHO */
	add(&s, 2, 3, 8, TC__XOP_COPY, 0, 1); /* 3 already has it: NODUP */
	add(&s, 7, 3, 8, TC__XOP_COPY, 0, 1); /* and again: NODUP */
	add(&s, 4, 0, 8, TC__XOP_COPY, 0, 0); /* untracked: nothing */
	sim(&s, t, &md, &out);
	cr_assert_eq(out.noho_violations, 1);
	cr_assert_eq(out.nodup_violations, 2);
	tc__sim_free(&out);
	tc__sched_free(&s);

	/* Ranges: rank 4 starts with [10, 14). */
	cr_assert_eq(tc__sched_init(&s, 8), 0);
	cr_assert_eq(tc__sched_initial(&s, 4, 10, 4), 0);
	add(&s, 0, 4, 8, TC__XOP_COPY, 8, 4); /* 8..11: 10, 11 NOHO */
	cr_assert_eq(tc__sched_round(&s), 0);
	add(&s, 5, 4, 8, TC__XOP_COPY, 9, 7);  /* 9..15: 9 dup; 10..13 NOHO */
	add(&s, 6, 4, 8, TC__XOP_COPY, 15, 5); /* 15..19: 15 dup */
	add(&s, 4, 4, 8, TC__XOP_COPY, 10, 4); /* local: not checked */
	add(&s, 4, 5, 8, TC__XOP_COPY, 20, 2); /* 5 gets 20, 21 */
	add(&s, 4, 6, 8, TC__XOP_COPY, 20, 2);
	cr_assert_eq(tc__sched_round(&s), 0);
	add(&s, 4, 5, 8, TC__XOP_COPY, 21, 1); /* dup */
	sim(&s, t, &md, &out);
	cr_assert_eq(out.noho_violations, 2 + 4);
	cr_assert_eq(out.nodup_violations, 1 + 1 + 1);
	tc__sim_free(&out);
	tc__sched_free(&s);
	tc_topo_destroy(t);
}

Test(sched, nodup_noho_against_piecewise_reference)
{
	/* Random schedules; the reference marks piece by piece in the order the
	 * rule states (counts do not depend on the order). */
	uint64_t seed = 0x5eed5eedULL;
	struct tc_topo *t = topo("torus:3x3");
	struct tc_model md = mdl(TC_PORTS_ALL, TC_DUPLEX_FULL, TC_SWITCH_CT);
	enum { P = 9, NP = 48 };
	for (int iter = 0; iter < 200; iter++) {
		struct tc__sched s;
		struct tc__sim out;
		unsigned char got[P][NP];
		int ilo[P], in[P];
		long nodup = 0, noho = 0;
		memset(got, 0, sizeof got);
		cr_assert_eq(tc__sched_init(&s, P), 0);
		for (int u = 0; u < P; u++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			ilo[u] = (int)((seed >> 33) % NP);
			in[u] = (int)((seed >> 17) % 6);
			if (ilo[u] + in[u] > NP)
				in[u] = NP - ilo[u];
			cr_assert_eq(tc__sched_initial(&s, u, ilo[u], in[u]), 0);
		}
		for (int r = 0; r < 4; r++) {
			cr_assert_eq(tc__sched_round(&s), 0);
			for (int k = 0; k < 10; k++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				int src = (int)((seed >> 40) % P), dst = (int)((seed >> 20) % P);
				int lo = (int)((seed >> 8) % NP), n = (int)((seed >> 50) % 9);
				if (lo + n > NP)
					n = NP - lo;
				add(&s, src, dst, 4, TC__XOP_COPY, lo, n);
				if (src == dst)
					continue;
				for (int i = lo; i < lo + n; i++) {
					if (i >= ilo[dst] && i < ilo[dst] + in[dst])
						noho++;
					else if (got[dst][i])
						nodup++;
					got[dst][i] = 1;
				}
			}
		}
		sim(&s, t, &md, &out);
		cr_assert_eq(out.noho_violations, noho);
		cr_assert_eq(out.nodup_violations, nodup);
		tc__sim_free(&out);
		tc__sched_free(&s);
	}
	tc_topo_destroy(t);
}

/* ------------------------------------------------------------- contention */

Test(sched, contention_chain_ct)
{
	/* chain:4, one round: 0 -> 3 and 1 -> 2.  CT: 0 -> 3 holds 1->2 during
	 * [t_h, t_h + L), 1 -> 2 during [0, L): overlap.  SF: [L, 2L) and
	 * [0, L) touch but do not overlap (the message is pipelined). */
	struct tc_topo *t = topo("chain:4");
	for (int ct = 0; ct < 2; ct++) {
		struct tc__sched s;
		struct tc__sim out;
		struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, ct ? TC_SWITCH_CT : TC_SWITCH_SF);
		cr_assert_eq(tc__sched_init(&s, 4), 0);
		add(&s, 0, 3, 100, TC__XOP_COPY, 0, 0);
		add(&s, 1, 2, 100, TC__XOP_COPY, 0, 0);
		sim(&s, t, &md, &out);
		if (ct) {
			cr_assert_eq(out.contention_total, 1);
			cr_assert_eq(out.ncontention, 1);
			cr_assert_eq(out.contention[0].round, 0);
			cr_assert_eq(out.contention[0].from, 1);
			cr_assert_eq(out.contention[0].to, 2);
			cr_assert_eq(out.contention[0].xa, 0);
			cr_assert_eq(out.contention[0].xb, 1);
		} else {
			cr_assert_eq(out.contention_total, 0);
			cr_assert_eq(out.ncontention, 0);
		}
		tc__sim_free(&out);

		/* SF collision: rank 1 first sends to 0 (its port is busy [0, L)),
		 * so 1 -> 2 holds link 1->2 during [L, 2L), like 0 -> 3's hop 1. */
		tc__sched_free(&s);
		cr_assert_eq(tc__sched_init(&s, 4), 0);
		add(&s, 1, 0, 100, TC__XOP_COPY, 0, 0);
		add(&s, 1, 2, 100, TC__XOP_COPY, 0, 0);
		add(&s, 0, 3, 100, TC__XOP_COPY, 0, 0);
		sim(&s, t, &md, &out);
		if (!ct) {
			cr_assert_eq(out.contention_total, 1);
			cr_assert_eq(out.contention[0].from, 1);
			cr_assert_eq(out.contention[0].to, 2);
			cr_assert_eq(out.contention[0].xa, 1);
			cr_assert_eq(out.contention[0].xb, 2);
		} else { /* CT: [L, 2L) against [t_h, t_h + L): overlap too */
			cr_assert_eq(out.contention_total, 1);
		}
		cr_assert_eq(out.oneport_violations, 1);
		tc__sim_free(&out);
		tc__sched_free(&s);
	}
	tc_topo_destroy(t);
}

Test(sched, contention_mesh_same_hop)
{
	/* mesh:3x3, XY routing: 0 -> 3 -> 4 -> 5 and 6 -> 3 -> 4 both hold link
	 * 3->4 at their hop 1: [L, 2L) under SF, [t_h, t_h + L) under CT. */
	struct tc_topo *t = topo("mesh:3x3");
	int path[8];
	cr_assert_eq(tc_topo_route(t, 0, 5, path, 8), 3);
	cr_assert_eq(path[1], 3);
	cr_assert_eq(path[2], 4);
	for (int ct = 0; ct < 2; ct++) {
		struct tc__sched s;
		struct tc__sim out;
		struct tc_model md = mdl(TC_PORTS_ALL, TC_DUPLEX_FULL, ct ? TC_SWITCH_CT : TC_SWITCH_SF);
		cr_assert_eq(tc__sched_init(&s, 9), 0);
		add(&s, 0, 5, 100, TC__XOP_COPY, 0, 0);
		add(&s, 6, 4, 100, TC__XOP_COPY, 0, 0);
		sim(&s, t, &md, &out);
		cr_assert_eq(out.contention_total, 1);
		cr_assert_eq(out.ncontention, 1);
		cr_assert_eq(out.contention[0].from, 3);
		cr_assert_eq(out.contention[0].to, 4);
		cr_assert_eq(out.contention[0].round, 0);
		/* Contention is diagnosed, not charged: times are the closed forms. */
		cr_assert_eq(out.clock[5], ct ? CTt(100, 3) : SFt(100, 3));
		cr_assert_eq(out.clock[4], ct ? CTt(100, 2) : SFt(100, 2));
		tc__sim_free(&out);
		tc__sched_free(&s);
	}
	tc_topo_destroy(t);
}

Test(sched, contention_counts_all_pairs_stores_64)
{
	/* star:P SF: every leaf v >= 2 sends to leaf 1 in one round; all hold
	 * link 0->1 during [L, 2L): (P-2)(P-3)/2 pairs. */
	const int ps[] = {5, 70};
	for (int k = 0; k < 2; k++) {
		int P = ps[k];
		char spec[32];
		snprintf(spec, sizeof spec, "star:%d", P);
		struct tc_topo *t = topo(spec);
		struct tc__sched s;
		struct tc__sim out;
		struct tc_model md = mdl(TC_PORTS_ALL, TC_DUPLEX_FULL, TC_SWITCH_SF);
		cr_assert_eq(tc__sched_init(&s, P), 0);
		for (int v = 2; v < P; v++)
			add(&s, v, 1, 100, TC__XOP_COPY, 0, 0);
		sim(&s, t, &md, &out);
		long n = P - 2;
		cr_assert_eq(out.contention_total, n * (n - 1) / 2);
		cr_assert_eq(out.ncontention, n * (n - 1) / 2 < 64 ? (int)(n * (n - 1) / 2) : 64);
		for (int i = 0; i < out.ncontention; i++) {
			cr_assert_eq(out.contention[i].from, 0);
			cr_assert_eq(out.contention[i].to, 1);
			cr_assert_lt(out.contention[i].xa, out.contention[i].xb);
		}
		tc__sim_free(&out);
		tc__sched_free(&s);
		tc_topo_destroy(t);
	}
}

Test(sched, contention_across_rounds)
{
	/* chain:4 CT: round 0: 0 -> 3; round 1: 1 -> 2 from rank 1, idle in
	 * round 0 and so still at clock 0: both hold link 1->2 at overlapping
	 * logical times.  Reported with the later transfer's round. */
	struct tc_topo *t = topo("chain:4");
	struct tc__sched s;
	struct tc__sim out;
	struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_CT);
	cr_assert_eq(tc__sched_init(&s, 4), 0);
	add(&s, 0, 3, 100, TC__XOP_COPY, 0, 0);
	cr_assert_eq(tc__sched_round(&s), 0);
	add(&s, 1, 2, 100, TC__XOP_COPY, 0, 0);
	sim(&s, t, &md, &out);
	cr_assert_eq(out.contention_total, 1);
	cr_assert_eq(out.contention[0].round, 1);
	cr_assert_eq(out.contention[0].xa, 0);
	cr_assert_eq(out.contention[0].xb, 1);
	tc__sim_free(&out);
	tc__sched_free(&s);
	tc_topo_destroy(t);
}

Test(sched, ecube_xor_permutations_are_contention_free)
{
	/* i -> i ^ k, e-cube routed, one round: edge-disjoint ([Gergel-shift]). */
	for (int d = 4; d <= 6; d += 2) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", d);
		struct tc_topo *t = topo(spec);
		int p = 1 << d;
		for (int k = 1; k < p; k++)
			for (int ct = 0; ct < 2; ct++) {
				struct tc__sched s;
				struct tc__sim out;
				struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL,
				                         ct ? TC_SWITCH_CT : TC_SWITCH_SF);
				cr_assert_eq(tc__sched_init(&s, p), 0);
				for (int i = 0; i < p; i++)
					add(&s, i, i ^ k, 64, TC__XOP_COPY, 0, 0);
				sim(&s, t, &md, &out);
				int l = popcount((unsigned)k);
				cr_assert_eq(out.contention_total, 0, "d=%d k=%d", d, k);
				cr_assert_eq(out.oneport_violations, 0);
				cr_assert_eq(out.hop_messages, (long)p * l);
				tc_time_t want = ct ? CTt(64, l) : SFt(64, l);
				cr_assert_eq(out.makespan, want > Lt(64) ? want : Lt(64));
				tc__sim_free(&out);
				tc__sched_free(&s);
			}
		tc_topo_destroy(t);
	}
}

Test(sched, contention_against_pairwise_reference)
{
	/* One round in which every rank sources at most one transfer, so every
	 * transfer starts at 0 and hop k holds its link during [k L, k L + L)
	 * (SF) or [k t_h, k t_h + L) (CT), L = t_s + m t_w with m varying per
	 * transfer.  The reference compares every pair on every link. */
	const char *specs[] = {"torus:4x4", "star:9", "tree:2:15", "mesh:3x5", "ring:11"};
	uint64_t seed = 12345;
	enum { MAXP = 16, MAXH = 16 };
	for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
		struct tc_topo *t = topo(specs[k]);
		int p = tc_topo_nodes(t);
		long seen = 0;
		for (int iter = 0; iter < 40; iter++)
			for (int ct = 0; ct < 2; ct++) {
				struct tc__sched s;
				struct tc__sim out;
				struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL,
				                         ct ? TC_SWITCH_CT : TC_SWITCH_SF);
				int path[MAXP][MAXH], hops[MAXP];
				tc_time_t len[MAXP];
				cr_assert_eq(tc__sched_init(&s, p), 0);
				for (int u = 0; u < p; u++) {
					seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
					int v = (int)((seed >> 33) % (uint64_t)p);
					uint64_t m = (seed >> 13) % 700;
					add(&s, u, v, m, TC__XOP_COPY, 0, 0);
					hops[u] = tc_topo_route(t, u, v, path[u], MAXH);
					cr_assert_geq(hops[u], 0);
					len[u] = TS + (tc_time_t)m * TW;
				}
				long want = 0;
				for (int a = 0; a < p; a++)
					for (int b = a + 1; b < p; b++)
						for (int i = 0; i < hops[a]; i++)
							for (int j = 0; j < hops[b]; j++) {
								if (path[a][i] != path[b][j] ||
								    path[a][i + 1] != path[b][j + 1])
									continue;
								tc_time_t a0 = i * (ct ? TH : len[a]),
								          a1 = a0 + len[a];
								tc_time_t b0 = j * (ct ? TH : len[b]),
								          b1 = b0 + len[b];
								if (a0 < b1 && b0 < a1)
									want++;
							}
				sim(&s, t, &md, &out);
				cr_assert_eq(out.contention_total, want, "%s", specs[k]);
				seen += want;
				cr_assert_eq(out.ncontention, want < 64 ? (int)want : 64);
				for (int c = 0; c < out.ncontention; c++) {
					const struct tc__contention *x = &out.contention[c];
					cr_assert_lt(x->xa, x->xb);
					cr_assert_eq(x->round, 0);
					cr_assert_geq(tc_topo_neighbor_index(t, x->from, x->to), 0);
				}
				tc__sim_free(&out);
				tc__sched_free(&s);
			}
		cr_assert_gt(seen, 0, "%s: the patterns must collide", specs[k]);
		tc_topo_destroy(t);
	}
}

/* ------------------------------------------------ determinism and scaling */

/* Asserts that two simulations are identical. */
static void same_sim(const struct tc__sim *a, const struct tc__sim *b, int p)
{
	cr_assert_eq(a->makespan, b->makespan);
	cr_assert_eq(memcmp(a->clock, b->clock, (size_t)p * sizeof *a->clock), 0);
	cr_assert_eq(a->messages, b->messages);
	cr_assert_eq(a->hop_messages, b->hop_messages);
	cr_assert_eq(a->bytes, b->bytes);
	cr_assert_eq(a->rounds, b->rounds);
	cr_assert_eq(a->oneport_violations, b->oneport_violations);
	cr_assert_eq(a->nodup_violations, b->nodup_violations);
	cr_assert_eq(a->noho_violations, b->noho_violations);
	cr_assert_eq(a->contention_total, b->contention_total);
	cr_assert_eq(a->ncontention, b->ncontention);
	if (a->ncontention > 0)
		cr_assert_eq(memcmp(a->contention, b->contention,
		                    (size_t)a->ncontention * sizeof *a->contention),
		             0);
}

/* A permutation per round, routed: in round j, i -> (a i + b) mod p with
 * a = 2j + 3 and b = (3 * 2^j) | 1.  p is a power of two, so the odd factor a
 * makes it a bijection, and (a - 1) i + b is odd, so no rank maps to itself.
 * Plain shifts would not do: they are contention-free under e-cube routing. */
static void perms(struct tc__sched *s, int p, int rounds)
{
	cr_assert_eq(tc__sched_init(s, p), 0);
	for (int j = 0; j < rounds; j++) {
		cr_assert_eq(tc__sched_round(s), 0);
		long a = 2 * j + 3, b = (3L << j) | 1;
		for (int i = 0; i < p; i++)
			add(s, i, (int)((a * i + b) % p), 64, TC__XOP_COPY, i, 1);
	}
}

Test(sched, deterministic)
{
	struct tc_topo *t = topo("torus:8x8");
	struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_HALF, TC_SWITCH_CT);
	struct tc__sched s;
	struct tc__sim a, b;
	perms(&s, 64, 6);
	sim(&s, t, &md, &a);
	sim(&s, t, &md, &b);
	cr_assert_gt(a.contention_total, 0);
	same_sim(&a, &b, 64);
	tc__sim_free(&a);
	tc__sim_free(&b);
	tc__sched_free(&s);
	tc_topo_destroy(t);
}

Test(sched, scales_to_4096_ranks, .timeout = 60)
{
	struct tc_topo *t = topo("hypercube:12");
	const int p = 4096, d = 12;
	struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	struct tc__sched s;
	struct tc__sim a, b;

	hcube_bcast(&s, d, 1024);
	sim(&s, t, &md, &a);
	cr_assert_eq(a.makespan, (tc_time_t)d * Lt(1024));
	cr_assert_eq(a.nodup_violations, 0);
	tc__sim_free(&a);
	tc__sched_free(&s);

	/* p pieces, p log p transfers. */
	hcube_allgather(&s, d, 8);
	sim(&s, t, &md, &a);
	cr_assert_eq(a.makespan, (tc_time_t)d * TS + TW * 8 * (p - 1));
	cr_assert_eq(a.nodup_violations, 0);
	cr_assert_eq(a.noho_violations, 0);
	cr_assert_eq(a.contention_total, 0);
	tc__sim_free(&a);
	tc__sched_free(&s);

	/* p log p routed transfers with heavy contention, CT and SF. */
	perms(&s, p, d);
	for (int ct = 0; ct < 2; ct++) {
		md.switching = ct ? TC_SWITCH_CT : TC_SWITCH_SF;
		sim(&s, t, &md, &a);
		cr_assert_eq(a.messages, (long)p * d);
		cr_assert_gt(a.contention_total, 0);
		cr_assert_eq(a.ncontention, 64);
		sim(&s, t, &md, &b);
		same_sim(&a, &b, p);
		tc__sim_free(&a);
		tc__sim_free(&b);
	}
	tc__sched_free(&s);
	tc_topo_destroy(t);
}
