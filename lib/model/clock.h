/* SPDX-License-Identifier: MIT */
/*
 * lib/model/clock.h - the logical clock's rules, shared by the runtime
 * (lib/p2p) and the predictor (lib/sched), so that a prediction and a real run
 * of the same program cannot disagree.
 *
 * Every rank keeps a clock c (picoseconds) and the time at which each of its
 * port resources becomes free.  Which resources exist depends on the model:
 *
 *   ports  duplex  resources of a node
 *   one    full    one send port, one receive port (send and receive overlap)
 *   one    half    one port for both directions
 *   all    full    a send and a receive resource per link
 *   all    half    one resource per link, shared by both directions
 *
 * A transfer of m bytes over l links takes
 *   T(m, l) = l (t_s + m t_w)            store-and-forward
 *           = t_s + m t_w + l t_h        cut-through,
 * and one link's share of it is L(m) = t_s + m t_w.
 *
 * Send (in program order, when it is posted at clock c):
 *   start = max(c, free[send resource]);  free[send resource] = start + L(m);
 *   the message carries arrival = start + T(m, l);
 *   the send completes, for the sender, at start + L(m).
 * Receive (when the program waits for it; a waitall takes its receives in
 * order of arrival, ties by position):
 *   done = max(arrival, free[recv resource] + L(m));  free[recv resource] = done;
 *   a receive that combines adds m t_c.
 * Completing a request sets c = max(c, its completion time).
 *
 * The clock depends only on each rank's program order and the arrival times
 * carried by messages, so every run of a program gives the same logical
 * times, whatever the thread interleaving.  Intermediate ranks of a routed
 * transfer forward it without charging their own clocks or ports: the
 * network's cost is in T(m, l); link occupancy is recorded separately to
 * diagnose contention (lib/sched).
 *
 * Times saturate at TC__TIME_MAX (2^63 - 1 ps, about 106 days) instead of
 * overflowing: m t_w of a large message under a slow model, or a clock
 * advanced far, stays there (no undefined behaviour; a saturated time is
 * the sign of a model out of range, and tc_clock_advance refuses to reach
 * it).
 */
#ifndef TC_MODEL_CLOCK_H
#define TC_MODEL_CLOCK_H

#include <math.h>
#include <stdint.h>

#include "topocoll/model.h"

#define TC__TIME_MAX INT64_MAX

/* a + b, a * b for non-negative times, saturating at TC__TIME_MAX. */
static inline tc_time_t tc__sat_add(tc_time_t a, tc_time_t b)
{
	tc_time_t r;
	return __builtin_add_overflow(a, b, &r) ? TC__TIME_MAX : r;
}
static inline tc_time_t tc__sat_mul(uint64_t m, tc_time_t t)
{
	tc_time_t r;
	if (m > (uint64_t)TC__TIME_MAX)
		return t ? TC__TIME_MAX : 0;
	return __builtin_mul_overflow((tc_time_t)m, t, &r) ? TC__TIME_MAX : r;
}

/* m bytes at t ps/byte (t >= 0), rounded to the picosecond, saturating:
 * the product is rounded once, so that a per-byte time which is not a
 * whole number of picoseconds (a calibrated t_w of 0.0961 ns/B) is not
 * rounded per byte first (96 ps/B: 0.09% short on every transfer). */
static inline tc_time_t tc__sat_bytes(uint64_t m, double t)
{
	const double x = (double)m * t;
	if (!(x > 0))
		return 0;
	/* Half up (x > 0): an add and a truncation, no call on every message. */
	return x >= (double)TC__TIME_MAX ? TC__TIME_MAX : (tc_time_t)(x + 0.5);
}

/* The model in picoseconds: the start-ups in whole ones, the per-byte
 * times as given (tc__sat_bytes rounds their products). */
struct tc__mps {
	tc_time_t ts, th; /* ps */
	double tw, tc;    /* ps/byte */
	int ports_all;
	int half;
	int ct;
};

static inline tc_time_t tc__ns_to_ps(double ns)
{
	return (tc_time_t)llround(ns * TC_PS_PER_NS);
}

static inline void tc__mps_from_model(struct tc__mps *q, const struct tc_model *m)
{
	q->ts = tc__ns_to_ps(m->ts_ns);
	q->tw = m->tw_ns * TC_PS_PER_NS;
	q->th = tc__ns_to_ps(m->th_ns);
	q->tc = m->tc_ns * TC_PS_PER_NS;
	q->ports_all = m->ports == TC_PORTS_ALL;
	q->half = m->duplex == TC_DUPLEX_HALF;
	q->ct = m->switching == TC_SWITCH_CT;
}

/* L(m): one link's share. */
static inline tc_time_t tc__link_time(const struct tc__mps *q, uint64_t m)
{
	return tc__sat_add(q->ts, tc__sat_bytes(m, q->tw));
}

/* m t_c: combining m bytes. */
static inline tc_time_t tc__combine_time(const struct tc__mps *q, uint64_t m)
{
	return tc__sat_bytes(m, q->tc);
}

/* T(m, l): the whole transfer over l links. */
static inline tc_time_t tc__xfer_time(const struct tc__mps *q, uint64_t m, int hops)
{
	if (hops <= 0)
		return 0;
	if (q->ct)
		return tc__sat_add(tc__link_time(q, m), tc__sat_mul((uint64_t)hops, q->th));
	return tc__sat_mul((uint64_t)hops, tc__link_time(q, m));
}

/* Resources per node of degree deg. */
static inline int tc__nres(const struct tc__mps *q, int deg)
{
	if (q->ports_all)
		return q->half ? deg : 2 * deg;
	return q->half ? 1 : 2;
}

/* The resource a send to (recv from) neighbour index nbr uses. */
static inline int tc__res_send(const struct tc__mps *q, int nbr)
{
	if (q->ports_all)
		return q->half ? nbr : 2 * nbr;
	return 0;
}

static inline int tc__res_recv(const struct tc__mps *q, int nbr)
{
	if (q->ports_all)
		return q->half ? nbr : 2 * nbr + 1;
	return q->half ? 0 : 1;
}

static inline tc_time_t tc__max_time(tc_time_t a, tc_time_t b)
{
	return a > b ? a : b;
}

/* Send rule: returns the arrival time and sets *sender_done. */
static inline tc_time_t tc__clock_send(const struct tc__mps *q, tc_time_t c, tc_time_t *res_free,
                                       uint64_t m, int hops, tc_time_t *sender_done)
{
	tc_time_t start = tc__max_time(c, *res_free);
	*res_free = tc__sat_add(start, tc__link_time(q, m));
	*sender_done = *res_free;
	return tc__sat_add(start, tc__xfer_time(q, m, hops));
}

/* Receive rule: returns the completion time. */
static inline tc_time_t tc__clock_recv(const struct tc__mps *q, tc_time_t arrival,
                                       tc_time_t *res_free, uint64_t m)
{
	tc_time_t done = tc__max_time(arrival, tc__sat_add(*res_free, tc__link_time(q, m)));
	*res_free = done;
	return done;
}

#endif /* TC_MODEL_CLOCK_H */
