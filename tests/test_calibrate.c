/* SPDX-License-Identifier: MIT */
/*
 * tests/test_calibrate.c - the calibrated model (include/topocoll/calibrate.h):
 * the segments of the piecewise fit, o_call, and the calibrated
 * prediction of a call.
 *
 * The prediction path is checked on a calibration written by hand (no
 * measurement, so exact): tc_calibration_model() picks the segment holding a
 * size, tc_calibration_predict() equals tc_predict_call() under that
 * segment's model plus o_call, to the picosecond.  The measured parts are
 * checked on an emulated calibration (a known model, nearly exact times) and
 * on a short native one for their shape only (noise decides the values).
 * No timed assertions.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "topocoll/calibrate.h"
#include "calibrate/fit.h"
#include "coll/machine.h"
#include "coll/shm.h"

/* A calibration of three segments, as tc_model_calibrate would leave it:
 * 8..512 B streamed (100 ns + 0.2 ns/B), 1..16 KiB single copy (150 ns +
 * 0.1 ns/B), 32 KiB..1 MiB (a negative fitted t_s, -500 ns, + 0.12 ns/B);
 * t_c 0.04 ns/B, o_call 50 ns. */
static void hand_made(struct tc_calibration *c)
{
	memset(c, 0, sizeof *c);
	c->all = (struct tc_calibration_fit){.npoints = 18,
	                                     .ts_ns = 120,
	                                     .tw_ns_per_byte = 0.1,
	                                     .r2 = 0.9,
	                                     .max_rel_residual = 0.4};
	c->ts_ns = 120;
	c->tw_ns_per_byte = 0.1;
	c->tc_ns_per_byte = 0.04;
	c->call_ns = 50;
	/* Its 18 points, 8 B .. 1 MiB by powers of two, in three segments. */
	c->npoints = 18;
	for (int i = 0; i < 18; i++)
		c->points[i].bytes = (size_t)8 << i;
	c->nsegments = 3;
	c->segments[0] = (struct tc_calibration_segment){.lo_bytes = 8,
	                                                 .hi_bytes = 512,
	                                                 .first = 0,
	                                                 .npoints = 7,
	                                                 .single_copy = 0,
	                                                 .cache_level = 1,
	                                                 .fit = {.npoints = 7,
	                                                         .ts_ns = 100,
	                                                         .tw_ns_per_byte = 0.2,
	                                                         .r2 = 1,
	                                                         .max_rel_residual = 0}};
	c->segments[1] = (struct tc_calibration_segment){.lo_bytes = 1024,
	                                                 .hi_bytes = 16384,
	                                                 .first = 7,
	                                                 .npoints = 5,
	                                                 .single_copy = 1,
	                                                 .cache_level = 1,
	                                                 .fit = {.npoints = 5,
	                                                         .ts_ns = 150,
	                                                         .tw_ns_per_byte = 0.1,
	                                                         .r2 = 1,
	                                                         .max_rel_residual = 0}};
	c->segments[2] = (struct tc_calibration_segment){.lo_bytes = 32768,
	                                                 .hi_bytes = 1 << 20,
	                                                 .first = 12,
	                                                 .npoints = 6,
	                                                 .single_copy = 1,
	                                                 .cache_level = 2,
	                                                 .fit = {.npoints = 6,
	                                                         .ts_ns = -500,
	                                                         .tw_ns_per_byte = 0.12,
	                                                         .r2 = 1,
	                                                         .max_rel_residual = 0}};
	/* Combining receives not measured (the tests that need them set
	 * them). */
	for (int k = 0; k < 3; k++)
		c->segments[k].recv_ts_ns = c->segments[k].recv_tc_ns_per_byte = NAN;
}

/* A pipeline whose size falls in a segment fitted with no start-up time
 * (hand_made()'s third, t_s clamped at 0) has no best packet count under
 * that segment: its packets are counted under the whole range's line
 * (t_s 120 ns, t_w 0.1 ns/B), then under the segment of the mean packet.
 * reduce ring_pipelined of 4 MiB on complete:16: the line gives r =
 * sqrt(14 m 0.1 / 120) = 221 packets of about 19 KB, in the second
 * segment (t_s 150 ns, t_w 0.1 ns/B), whose r_opt sqrt(14 m 0.1 / 150) =
 * 197.86 it is then priced with (197 or 198 packets, whichever the
 * pipeline's cost prefers: they differ by a nanosecond); before,
 * TC_ELIMIT (a packet per element). */
Test(calibrate, pipeline_in_a_segment_without_start_up, .timeout = 30)
{
	struct tc_calibration c;
	hand_made(&c);
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse("complete:16", &t), 0);
	const size_t m = (size_t)4 << 20;
	struct tc_call call = {.coll = TC_COLL_REDUCE, .alg = "ring_pipelined", .bytes = m, .esize = 8};
	double ns = 0, want = 0;
	int err = tc_calibration_predict(&c, t, &call, NULL, NULL, &ns);
	cr_assert_eq(err, 0, "%s: %s", tc_strerror(err), tc_error_detail());
	const double r = sqrt(14.0 * (double)m * 0.1 / 150);
	cr_assert(r > 197 && r < 198);
	double other = 0;
	call.packets = 197;
	cr_assert_eq(tc_calibration_predict(&c, t, &call, NULL, NULL, &want), 0);
	call.packets = 198;
	cr_assert_eq(tc_calibration_predict(&c, t, &call, NULL, NULL, &other), 0);
	cr_assert(isfinite(ns) && (fabs(ns - want) <= 1e-9 * want || fabs(ns - other) <= 1e-9 * other),
	          "%.3f ns, not %.3f or %.3f", ns, want, other);
	tc_topo_destroy(t);
}

Test(calibrate, model_of_a_size, .timeout = 10)
{
	struct tc_calibration c;
	struct tc_model md;
	int seg = -1;
	hand_made(&c);
	static const struct {
		size_t bytes;
		int seg;
	} want[] = {{0, 0},     {8, 0},     {512, 0},   {1000, 0},           {1024, 1},
	            {16384, 1}, {20000, 1}, {32768, 2}, {(size_t)1 << 30, 2}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_assert_eq(tc_calibration_model(&c, want[i].bytes, &md, &seg), 0);
		cr_assert_eq(seg, want[i].seg, "%zu B: segment %d", want[i].bytes, seg);
		const struct tc_calibration_fit *f = &c.segments[seg].fit;
		cr_assert_eq(md.ts_ns, f->ts_ns > 0 ? f->ts_ns : 0.0);
		if (f->ts_ns >= 0 || want[i].bytes == 0)
			cr_assert_eq(md.tw_ns, f->tw_ns_per_byte);
		else /* the line's time at this size, with t_s 0 */
			cr_assert_lt(fabs(md.tw_ns * (double)want[i].bytes -
			                  (f->ts_ns + f->tw_ns_per_byte * (double)want[i].bytes)),
			             1e-6);
		cr_assert_eq(md.tc_ns, 0.04);
		cr_assert_eq(md.th_ns, 0.0);
		cr_assert_eq(tc_model_check(&md), 0);
	}
	/* A segment without a line is refused (as a team refuses it), not
	 * priced with the line of all points. */
	c.segments[1].fit.ts_ns = NAN;
	cr_assert_eq(tc_calibration_model(&c, 2048, &md, NULL), TC_EINVAL);
	cr_assert(strstr(tc_error_detail(), "tc_calibration_model: segments.1.fit.ts_ns nan"), "%s",
	          tc_error_detail());
	/* No segments: the line of all points; no line at all, or NULL:
	 * TC_EINVAL. */
	hand_made(&c);
	c.nsegments = 0;
	cr_assert_eq(tc_calibration_model(&c, 2048, &md, NULL), 0);
	cr_assert_eq(md.ts_ns, 120.0);
	cr_assert_eq(md.tw_ns, 0.1);
	c.all.ts_ns = c.all.tw_ns_per_byte = c.ts_ns = c.tw_ns_per_byte = NAN;
	cr_assert_eq(tc_calibration_model(&c, 2048, &md, NULL), TC_EINVAL);
	cr_assert(strstr(tc_error_detail(), "no line"), "%s", tc_error_detail());
	cr_assert_eq(tc_calibration_model(NULL, 8, &md, NULL), TC_EINVAL);
	hand_made(&c);
	cr_assert_eq(tc_calibration_model(&c, 8, NULL, NULL), TC_EINVAL);
	/* t_c not fitted (emulated): 0. */
	c.tc_ns_per_byte = NAN;
	cr_assert_eq(tc_calibration_model(&c, 8, &md, NULL), 0);
	cr_assert_eq(md.tc_ns, 0.0);
}

/* The calibrated prediction on a small case: chain:2 and ring:5, the
 * segment's model plus o_call, exactly. */
Test(calibrate, calibrated_prediction, .timeout = 30)
{
	struct tc_calibration c;
	hand_made(&c);
	static const char *const topos[] = {"chain:2", "ring:5"};
	static const enum tc_coll colls[] = {TC_COLL_BCAST, TC_COLL_ALLREDUCE, TC_COLL_ALLGATHER};
	static const size_t sizes[] = {8, 1024, 65536};
	for (int ti = 0; ti < 2; ti++) {
		struct tc_topo *t = NULL;
		cr_assert_eq(tc_topo_parse(topos[ti], &t), 0);
		for (int ci = 0; ci < 3; ci++)
			for (int si = 0; si < 3; si++) {
				struct tc_call call = {.coll = colls[ci], .bytes = sizes[si], .esize = 8};
				struct tc_prediction pr, ref;
				double ns = -1;
				int seg = -1;
				cr_assert_eq(tc_calibration_predict(&c, t, &call, &pr, &seg, &ns), 0);
				/* The segment is that of the schedule's mean message
				 * under the block's segment's model. */
				struct tc_model md;
				struct tc_prediction first;
				int seg2 = -1;
				cr_assert_eq(tc_calibration_model(&c, sizes[si], &md, NULL), 0);
				cr_assert_eq(tc_predict_call(t, &md, &call, &first), 0);
				cr_assert_eq(tc_calibration_model(&c,
				                                  first.messages > 0
				                                          ? (size_t)(first.bytes /
				                                                     (uint64_t)first.messages)
				                                          : sizes[si],
				                                  &md, &seg2),
				             0);
				cr_assert_eq(seg, seg2, "%s %s %zu B: segment %d, not %d", topos[ti],
				             tc_coll_name(colls[ci]), sizes[si], seg, seg2);
				cr_assert_str_eq(pr.algorithm, first.algorithm);
				if (!strcmp(topos[ti], "chain:2")) /* messages of m bytes */
					cr_assert_eq(seg, sizes[si] < 1024    ? 0
					                  : sizes[si] < 32768 ? 1
					                                      : 2);
				call.alg = pr.algorithm;
				cr_assert_eq(tc_predict_call(t, &md, &call, &ref), 0);
				cr_assert_eq(ref.modelled_ps, pr.modelled_ps);
				/* The ring allreduce combines one way round the ring
				 * (hypercube's exchanges do not): in a single-copy
				 * segment each combine is one pass with its
				 * transfer, t_c less t_w (0 here). */
				if (colls[ci] == TC_COLL_ALLREDUCE && !strcmp(pr.algorithm, "ring") &&
				    c.segments[seg].single_copy == 1) {
					md.tc_ns = md.tc_ns > md.tw_ns ? md.tc_ns - md.tw_ns : 0;
					cr_assert_eq(tc_predict_call(t, &md, &call, &ref), 0);
				}
				cr_assert_lt(fabs(ns - ((double)ref.modelled_ps / TC_PS_PER_NS + 50.0)),
				             1e-6, "%s %s %zu B: %.3f ns", topos[ti],
				             tc_coll_name(colls[ci]), sizes[si], ns);
				cr_assert_gt(pr.modelled_ps, 0);
			}
		/* t_copy: the most bytes one rank copies locally (allgather:
		 * its own block, m), at t_copy. */
		c.tcopy_ns_per_byte = 0.01;
		{
			struct tc_call ag = {.coll = TC_COLL_ALLGATHER, .bytes = 4096, .esize = 8};
			struct tc_prediction pr;
			double ns = 0;
			cr_assert_eq(tc_calibration_predict(&c, t, &ag, &pr, NULL, &ns), 0);
			struct tc_transfer *tr = NULL;
			int n = 0;
			struct tc_model md;
			int seg = -1;
			cr_assert_eq(tc_calibration_model(&c, 4096, &md, &seg), 0);
			ag.alg = pr.algorithm;
			cr_assert_eq(tc_schedule_call(t, &md, &ag, &tr, &n), 0);
			uint64_t own[8] = {0}, most = 0;
			for (int i = 0; i < n; i++)
				if (tr[i].src == tr[i].dst && !tr[i].combine &&
				    (own[tr[i].src] += tr[i].bytes) > most)
					most = own[tr[i].src];
			tc_schedule_free(tr);
			cr_assert_geq(most, (uint64_t)4096, "%s: a rank copies its own block",
			              topos[ti]);
			cr_assert_lt(fabs(ns - ((double)pr.modelled_ps / TC_PS_PER_NS + 50.0 +
			                        0.01 * (double)most)),
			             1e-6, "%.3f ns", ns);
		}
		c.tcopy_ns_per_byte = 0;
		/* o_call 0 (emulated) adds nothing; NULL arguments. */
		c.call_ns = 0;
		struct tc_call call = {.coll = TC_COLL_BCAST, .bytes = 8, .esize = 8};
		struct tc_prediction pr;
		double ns = 0;
		cr_assert_eq(tc_calibration_predict(&c, t, &call, &pr, NULL, &ns), 0);
		cr_assert_eq(ns, (double)pr.modelled_ps / TC_PS_PER_NS);
		cr_assert_eq(tc_calibration_predict(&c, t, &call, NULL, NULL, NULL), TC_EINVAL);
		cr_assert_eq(tc_calibration_predict(&c, t, NULL, NULL, NULL, &ns), TC_EINVAL);
		cr_assert_eq(tc_calibration_predict(NULL, t, &call, NULL, NULL, &ns), TC_EINVAL);
		c.call_ns = 50;
		tc_topo_destroy(t);
	}
}

/* Exchanges: in a single-copy segment, a schedule whose messages all go
 * both ways at once and copy takes exchange_ratio times the model's transfer
 * time; one-way (bcast), combining (allreduce), streamed (256 B) and
 * not-all-exchange (ring:5) schedules do not.  One-way combines (reduce) in
 * a single-copy segment cost t_s + recv_ts + m (t_w + recv_tc) where the
 * pair measured what combining adds to a receive, else m max(t_w, t_c).
 * Closed
 * forms at p = 2, one
 * round of one message each way: t_s + m t_w (+ m t_c) of the segment. */
Test(calibrate, exchanges_and_one_way_combines, .timeout = 30)
{
	struct tc_calibration c;
	hand_made(&c);
	for (int k = 0; k < 3; k++)
		c.segments[k].exchange_ratio = 1.5;
	struct tc_topo *t2 = NULL, *t5 = NULL;
	cr_assert_eq(tc_topo_parse("chain:2", &t2), 0);
	cr_assert_eq(tc_topo_parse("ring:5", &t5), 0);
	static const struct {
		enum tc_coll coll;
		size_t m;
		double want; /* ns, o_call 50 included */
	} cases[] = {
	        {TC_COLL_ALLGATHER, 4096, (150 + 0.1 * 4096) * 1.5 + 50},
	        {TC_COLL_ALLTOALL, 4096, (150 + 0.1 * 4096) * 1.5 + 50},
	        {TC_COLL_BCAST, 4096, 150 + 0.1 * 4096 + 50},
	        {TC_COLL_ALLREDUCE, 4096, 150 + 0.1 * 4096 + 0.04 * 4096 + 50},
	        {TC_COLL_ALLGATHER, 256, 100 + 0.2 * 256 + 50},
	        /* A one-way combine: one pass, m max(t_w, t_c). */
	        {TC_COLL_REDUCE, 4096, 150 + 0.1 * 4096 + 50},
	        {TC_COLL_REDUCE, 256, 100 + 0.2 * 256 + 0.04 * 256 + 50},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tc_call call = {.coll = cases[i].coll, .bytes = cases[i].m, .esize = 8};
		double ns = 0;
		cr_assert_eq(tc_calibration_predict(&c, t2, &call, NULL, NULL, &ns), 0);
		cr_assert_lt(fabs(ns - cases[i].want), 1e-3, "%s %zu B: %.3f ns, want %.3f",
		             tc_coll_name(cases[i].coll), cases[i].m, ns, cases[i].want);
	}
	/* t_c above t_w: a reduce's pass costs m t_c, an allreduce's
	 * exchange the sum. */
	c.tc_ns_per_byte = 0.3;
	static const struct {
		enum tc_coll coll;
		double want;
	} slow[] = {{TC_COLL_REDUCE, 150 + 0.3 * 4096 + 50},
	            {TC_COLL_ALLREDUCE, 150 + 0.1 * 4096 + 0.3 * 4096 + 50}};
	for (int i = 0; i < 2; i++) {
		struct tc_call call = {.coll = slow[i].coll, .bytes = 4096, .esize = 8};
		double ns = 0;
		cr_assert_eq(tc_calibration_predict(&c, t2, &call, NULL, NULL, &ns), 0);
		cr_assert_lt(fabs(ns - slow[i].want), 1e-3, "%s: %.3f ns, want %.3f",
		             tc_coll_name(slow[i].coll), ns, slow[i].want);
	}
	c.tc_ns_per_byte = 0.04;
	/* A measured combining receive (recv_ts_ns, recv_tc_ns_per_byte)
	 * replaces that pass: the reduce's message costs t_s + recv_ts + m t_w
	 * + m recv_tc (0 too: a combine hidden in the read); the streamed
	 * 256 B reduce keeps the model's sum. */
	static const struct {
		double recv_ts, recv_tc;
		size_t m;
		double want;
	} measured[] = {{30, 0.07, 4096, 150 + 30 + 0.1 * 4096 + 0.07 * 4096 + 50},
	                {0, 0, 4096, 150 + 0.1 * 4096 + 50},
	                {30, 0.07, 256, 100 + 0.2 * 256 + 0.04 * 256 + 50}};
	for (int i = 0; i < 3; i++) {
		for (int k = 0; k < c.nsegments; k++) {
			c.segments[k].recv_ts_ns = measured[i].recv_ts;
			c.segments[k].recv_tc_ns_per_byte = measured[i].recv_tc;
		}
		struct tc_call call = {.coll = TC_COLL_REDUCE, .bytes = measured[i].m, .esize = 8};
		double ns = 0;
		cr_assert_eq(tc_calibration_predict(&c, t2, &call, NULL, NULL, &ns), 0);
		cr_assert_lt(fabs(ns - measured[i].want), 1e-3,
		             "recv %.0f ns + %.2f ns/B, %zu B: %.3f ns, want %.3f", measured[i].recv_ts,
		             measured[i].recv_tc, measured[i].m, ns, measured[i].want);
	}
	for (int k = 0; k < c.nsegments; k++)
		c.segments[k].recv_ts_ns = c.segments[k].recv_tc_ns_per_byte = NAN;
	/* ring:5's allgather sends one way round the ring: the model alone. */
	struct tc_call ag = {.coll = TC_COLL_ALLGATHER, .bytes = 4096, .esize = 8};
	struct tc_prediction pr;
	double ns = 0;
	cr_assert_eq(tc_calibration_predict(&c, t5, &ag, &pr, NULL, &ns), 0);
	cr_assert_lt(fabs(ns - ((double)pr.modelled_ps / TC_PS_PER_NS + 50)), 1e-6, "%.3f ns", ns);
	tc_topo_destroy(t2);
	tc_topo_destroy(t5);
}

/* The segments partition the points in order, each of at least
 * TC_CALIBRATE_SEGMENT_MIN points (unless there is one segment), with one
 * path and cache level unless merged; each point's seg_residual is against
 * its segment's line; piecewise counts every point. */
static void check_segments(const struct tc_calibration *c)
{
	cr_assert_geq(c->nsegments, 1);
	cr_assert_leq(c->nsegments, TC_CALIBRATE_MAX_SEGMENTS);
	int next = 0;
	for (int k = 0; k < c->nsegments; k++) {
		const struct tc_calibration_segment *g = &c->segments[k];
		cr_assert_eq(g->first, next);
		cr_assert(c->nsegments == 1 || g->npoints >= TC_CALIBRATE_SEGMENT_MIN,
		          "segment %d: %d points", k, g->npoints);
		cr_assert_eq(g->lo_bytes, c->points[g->first].bytes);
		cr_assert_eq(g->hi_bytes, c->points[g->first + g->npoints - 1].bytes);
		cr_assert_eq(g->fit.npoints, g->npoints);
		for (int i = g->first; i < g->first + g->npoints; i++) {
			const struct tc_calibration_point *q = &c->points[i];
			cr_assert_eq(q->segment, k);
			if (g->single_copy >= 0)
				cr_assert_eq(q->single_copy, g->single_copy);
			if (g->cache_level >= 0)
				cr_assert_eq(q->cache_level, g->cache_level);
			double f = g->fit.ts_ns + g->fit.tw_ns_per_byte * (double)q->bytes;
			cr_assert_lt(fabs(q->seg_residual - (q->one_way_ns - f) / q->one_way_ns), 1e-9);
			cr_assert_leq(fabs(q->seg_residual), c->piecewise.max_rel_residual + 1e-12);
		}
		next += g->npoints;
	}
	cr_assert_eq(next, c->npoints);
	cr_assert_eq(c->piecewise.npoints, c->npoints);
	cr_assert(isnan(c->piecewise.ts_ns) && isnan(c->piecewise.tw_ns_per_byte));
	cr_assert(c->piecewise.r2 <= 1.0);
}

/* Emulated against a known model: every segment's line is that model, so the
 * piecewise fit is near exact; o_call is 0 (nothing charged per call). */
Test(calibrate, emulated_segments, .timeout = 120)
{
	struct tc_calibrate_opts o;
	memset(&o, 0, sizeof o);
	o.mode = TC_MODE_EMULATED;
	tc_model_default(&o.model);
	o.model.ts_ns = 100000.0;
	o.model.tw_ns = 20.0;
	o.min_bytes = 256;
	o.max_bytes = 16 << 10;
	struct tc_calibration c;
	int err = tc_model_calibrate(&o, &c);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	cr_assert_eq(c.npoints, 7); /* 256 B .. 16 KiB */
	check_segments(&c);
	/* No sample is early (how late is the machine's load: not asserted). */
	for (int i = 0; i < c.npoints; i++) {
		double model_ns = 100000.0 + 20.0 * (double)c.points[i].bytes;
		cr_assert_geq(c.points[i].min_ns, model_ns * (1 - 1e-9), "%zu B: %.0f ns < %.0f",
		              c.points[i].bytes, c.points[i].min_ns, model_ns);
	}
	cr_assert_eq(c.call_ns, 0.0);
	cr_assert(isnan(c.call_measured_ns) && isnan(c.call_predicted_ns));
	cr_assert(isnan(c.points[0].exchange_ns) && isnan(c.segments[0].exchange_ratio));
	cr_assert(isnan(c.points[0].copy_ns) && c.copy.npoints == 0);
	cr_assert_eq(c.conc_ranks, 0); /* concurrency is measured natively only */
	cr_assert(isnan(c.handoff_pair_ns));
	/* The calibrated model of a size (a quiet machine gives back t_w = 20
	 * within a few percent; a loaded one, anything non-negative). */
	struct tc_model md;
	cr_assert_eq(tc_calibration_model(&c, 4096, &md, NULL), 0);
	cr_assert_geq(md.tw_ns, 0.0, "t_w %.3f", md.tw_ns);
	cr_assert_geq(md.ts_ns, 0.0, "t_s %.3f", md.ts_ns);
}

/* The concurrency tables of a 16-CPU machine, written by hand: aggregate
 * copy bandwidth B(k, m) at 64 KiB growing with k (private caches), at
 * 4 MiB saturating at 40 B/ns from k = 8 (the memory); a synchronised round
 * R(q) = 100, 150, 200, 300 ns at q = 2, 4, 8, 16. */
static void hand_made_concurrency(struct tc_calibration *c)
{
	hand_made(c);
	c->conc_ranks = 16;
	c->ncopy_sizes = 2;
	c->copy_sizes[0] = (size_t)64 << 10;
	c->copy_sizes[1] = (size_t)4 << 20;
	c->ncopiers = 5;
	static const int k[5] = {1, 2, 4, 8, 16};
	static const double b0[5] = {10, 20, 40, 80, 160}, b1[5] = {10, 20, 30, 40, 40};
	for (int i = 0; i < 5; i++) {
		c->copiers[i] = k[i];
		c->copy_bytes_per_ns[0][i] = b0[i];
		c->copy_bytes_per_ns[1][i] = b1[i];
	}
	/* Hand-offs: the pair 50 ns, the shared cache 60 ns, across caches
	 * 80 ns, no SMT sibling and one package. */
	c->handoff_pair_ns = 50;
	c->handoff_ns[0] = NAN;
	c->handoff_ns[1] = 60;
	c->handoff_ns[2] = 80;
	c->handoff_ns[3] = NAN;
	c->nsync = 4;
	static const int q[4] = {2, 4, 8, 16};
	static const double r[4] = {100, 150, 200, 300};
	for (int i = 0; i < 4; i++) {
		c->sync_ranks[i] = q[i];
		c->sync_ns[i] = r[i];
	}
}

/* B at m between the hand-made table's two rows, b64 at 64 KiB and b4m at
 * 4 MiB, linear in log2 m and clamped: where the price reads the table
 * for a rank that takes in m bytes over the call. */
static double b_at(double b64, double b4m, double m)
{
	double x = log2(m / 65536.0) / log2(64.0);
	x = x < 0 ? 0 : x > 1 ? 1 : x;
	return b64 + (b4m - b64) * x;
}

/* The hand-made machine's caches: 32 KiB L1d, 1 MiB L2 and a last level of
 * l3 bytes. */
static void hand_made_caches(struct tc_calibration *c, size_t l3)
{
	c->cache_bytes[0] = 32 << 10;
	c->cache_bytes[1] = (size_t)1 << 20;
	c->cache_bytes[2] = l3;
}

/* The calibrated price of one call (topology topo, algorithm alg, blocks
 * of bytes, doubles) on ranks placed as place (NULL: unknown). */
static double predict_placed(const struct tc_calibration *c, const char *topo, enum tc_coll coll,
                             const char *alg, size_t bytes, const struct tc_rank_place *place)
{
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse(topo, &t), 0);
	struct tc_call call = {.coll = coll, .alg = alg, .bytes = bytes, .esize = 8};
	double ns = -1;
	int err = tc_calibration_predict_placed(c, t, &call, place, NULL, NULL, &ns);
	cr_assert_eq(err, 0, "%s %s: %s", topo, alg, tc_strerror(err));
	tc_topo_destroy(t);
	return ns;
}

/* The price AUTO gives one call (as predict_placed(), place unknown) on a
 * team whose waiters do not spin: the shm reductions unstaged
 * (lib/coll/shm_flat.c). */
static double price_unstaged(const struct tc_calibration *c, const char *topo, enum tc_coll coll,
                             const char *alg, size_t bytes)
{
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse(topo, &t), 0);
	struct tc_call call = {.coll = coll, .alg = alg, .bytes = bytes, .esize = 8};
	double ns = -1, share = 0, sync = 0;
	int err = tc__cal_price(c, t, &call, NULL, true, NULL, NULL, &ns, &share, &sync);
	cr_assert_eq(err, 0, "%s %s: %s", topo, alg, tc_strerror(err));
	tc_topo_destroy(t);
	return ns + share + sync;
}

/* The concurrency charges of one call (topology topo, algorithm alg, blocks
 * of bytes, doubles), as predict_placed() prices it. */
static void concurrency_of(const struct tc_calibration *c, const char *topo, enum tc_coll coll,
                           const char *alg, size_t bytes, double *share, double *sync)
{
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse(topo, &t), 0);
	struct tc_call call = {.coll = coll, .alg = alg, .bytes = bytes, .esize = 8};
	int err = tc_calibration_concurrency_ns(c, t, &call, share, sync);
	cr_assert_eq(err, 0, "%s %s: %s", topo, alg, tc_strerror(err));
	tc_topo_destroy(t);
}

/* A local copy beyond two ranks on the hand-made tables: at t_copy, or at
 * one of k copiers' share of the table where that is slower.  The 64 KiB
 * row, which every copy of at most 64 KiB reads, gives each copier 10 B/ns
 * from k = 2 on: 0.1 ns/B, against the tests' t_copy of 0.01. */
#define LOCAL_SMALL 0.1

/* s(k, m) = max(1, (k / 2) B(2, m) / B(k, m)) for k > 2, B interpolated in
 * k and in log2 m; rho(q) = R(q) less the pair's 8-byte message for q > 2,
 * R interpolated in log2 q; both clamped beyond the tables; the price of a round their sum with the
 * segment's line. */
Test(calibrate, concurrency_pieces, .timeout = 10)
{
	struct tc_calibration c;
	hand_made_concurrency(&c);
	const size_t small = (size_t)64 << 10, big = (size_t)4 << 20;
	static const struct {
		int k;
		size_t m;
		double s;
	} share[] = {
	        {1, (size_t)4 << 20, 1.0},
	        {2, (size_t)4 << 20, 1.0},
	        {4, (size_t)4 << 20, 2.0 * 20 / 30},   /* 1.333 */
	        {8, (size_t)4 << 20, 4.0 * 20 / 40},   /* 2 */
	        {16, (size_t)4 << 20, 8.0 * 20 / 40},  /* 4 */
	        {12, (size_t)4 << 20, 6.0 * 20 / 40},  /* B(12) = 40: 3 */
	        {32, (size_t)4 << 20, 16.0 * 20 / 40}, /* beyond 16: B(16) */
	        {16, (size_t)64 << 10, 1.0},
	        {3, (size_t)64 << 10, 1.0},              /* B grows as k */
	        {16, (size_t)8 << 10, 1.0},              /* below 64 KiB: its row */
	        {16, (size_t)64 << 20, 4.0},             /* above 4 MiB: its row */
	        {16, (size_t)512 << 10, 8.0 * 20 / 100}, /* log2 midway: B = 100: 1.6 */
	};
	for (size_t i = 0; i < sizeof share / sizeof share[0]; i++) {
		double s = tc_calibration_share(&c, share[i].k, share[i].m);
		cr_assert(fabs(s - share[i].s) < 1e-9, "s(%d, %zu) = %.6f, not %.6f", share[i].k,
		          share[i].m, s, share[i].s);
	}
	/* rho(q) = R(q) less the pair's 8-byte message (segment 0: 100 + 8 x
	 * 0.2 = 101.6 ns) for q > 2. */
	static const struct {
		int q;
		double rho;
	} sync[] = {{1, 0},
	            {2, 0},
	            {3, 100 + 50 * (1.5849625007211563 - 1) - 101.6},
	            {4, 150 - 101.6},
	            {8, 200 - 101.6},
	            {12, 200 + 100 * (3.5849625007211563 - 3) - 101.6},
	            {16, 300 - 101.6},
	            {64, 300 - 101.6}};
	for (size_t i = 0; i < sizeof sync / sizeof sync[0]; i++) {
		double r = tc_calibration_sync_ns(&c, sync[i].q);
		cr_assert(fabs(r - sync[i].rho) < 1e-9, "rho(%d) = %.6f, not %.6f", sync[i].q, r,
		          sync[i].rho);
	}
	/* 2 KiB: segment 1 (150 ns + 0.1 ns/B), B of the 64 KiB row: s = 1. */
	double ns = -1;
	cr_assert_eq(tc_calibration_round_ns(&c, 8, 2048, 8, &ns), 0);
	cr_assert(fabs(ns - (150 + 2048 * 0.1 + 200 - 101.6)) < 1e-9, "round %.6f", ns);
	struct tc_model md;
	cr_assert_eq(tc_calibration_model(&c, big, &md, NULL), 0);
	cr_assert_eq(tc_calibration_round_ns(&c, 16, big, 16, &ns), 0);
	cr_assert(fabs(ns - (md.ts_ns + (double)big * md.tw_ns * 4 + 300 - 101.6)) < 1e-6,
	          "round %.6f", ns);
	cr_assert_eq(tc_calibration_round_ns(&c, 16, big, 16, NULL), TC_EINVAL);
	/* Without the measurement every charge is 0. */
	c.conc_ranks = 0;
	cr_assert_eq(tc_calibration_share(&c, 16, big), 1.0);
	cr_assert_eq(tc_calibration_sync_ns(&c, 16), 0.0);
	cr_assert_eq(tc_calibration_share(NULL, 16, small), 1.0);
	cr_assert_eq(tc_calibration_sync_ns(NULL, 16), 0.0);
}

/* The charges of a schedule, against its rounds counted by hand: a ring
 * allgather on ring:16 is 15 rounds in which all 16 ranks receive a block
 * (k = q = 16); a hypercube bcast on hypercube:4 is 4 rounds of 1, 2, 4, 8
 * transfers (k = 1, 2, 4, 8 receivers, q = 2, 4, 8, 16 ranks); at p = 2
 * both charges are 0.  A round among q ranks is charged e(q) = R(q) less
 * the pair's price of its 8-byte message (segment 0: 100 + 8 x 0.2 =
 * 101.6 ns), at least 0, and the schedule e(2) less (o_call, measured on
 * one round at p = 2, holds one): with R = 100, 150, 200, 300, e = 0,
 * 48.4, 98.4, 198.4; with R = 160, 200, 260, 400, e = 58.4, 98.4, 158.4,
 * 298.4.  tc_calibration_predict() is the pair's prediction plus the two. */
Test(calibrate, concurrency_of_a_schedule, .timeout = 30)
{
	struct tc_calibration c, flat;
	hand_made_concurrency(&c);
	flat = c;
	flat.conc_ranks = 0;
	const size_t m = (size_t)4 << 20;
	struct tc_model md;
	cr_assert_eq(tc_calibration_model(&c, m, &md, NULL), 0);
	const double tw = md.tw_ns, tc = md.tc_ns;
	cr_assert(tc > 0);
	struct {
		const char *topo, *alg;
		enum tc_coll coll;
		double share, sync;
		int dear; /* the second R table */
	} cases[] = {
	        {"ring:16", "ring", TC_COLL_ALLGATHER, 15 * (double)m * tw * (4.0 - 1), 15 * 198.4, 0},
	        {"hypercube:4", "hypercube", TC_COLL_BCAST,
	         (double)m * tw * ((2.0 * 20 / 30 - 1) + (4.0 * 20 / 40 - 1)),
	         0 + 48.4 + 98.4 + 198.4, 0},
	        {"chain:2", "linear", TC_COLL_BCAST, 0, 0, 0},
	        /* Four rounds in which every rank takes m and combines it: the
	         * combine, out of another rank's buffer, is slowed as the copy
	         * is (the 16 MiB a rank takes in over the call read at the
	         * 4 MiB row, where the table ends: s(16) = 4). */
	        {"hypercube:4", "hypercube", TC_COLL_ALLREDUCE,
	         4 * (double)m * (tw + tc) * (4.0 - 1), 4 * 198.4, 0},
	        /* One round in which every rank takes 15 blocks: all 15 are
	         * slowed, not the largest alone. */
	        {"complete:16", "direct", TC_COLL_ALLTOALL, 15 * (double)m * tw * (4.0 - 1), 198.4, 0},
	        {"ring:16", "ring", TC_COLL_ALLGATHER, 15 * (double)m * tw * (4.0 - 1),
	         15 * 298.4 - 58.4, 1},
	        {"hypercube:4", "hypercube", TC_COLL_BCAST,
	         (double)m * tw * ((2.0 * 20 / 30 - 1) + (4.0 * 20 / 40 - 1)), 98.4 + 158.4 + 298.4, 1},
	        {"chain:2", "linear", TC_COLL_BCAST, 0, 0, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		static const double dear[4] = {160, 200, 260, 400}, cheap[4] = {100, 150, 200, 300};
		for (int j = 0; j < 4; j++)
			c.sync_ns[j] = flat.sync_ns[j] = cases[i].dear ? dear[j] : cheap[j];
		struct tc_topo *t = NULL;
		cr_assert_eq(tc_topo_parse(cases[i].topo, &t), 0);
		struct tc_call call = {.coll = cases[i].coll, .alg = cases[i].alg, .bytes = m, .esize = 8};
		double share = -1, sync = -1, with = 0, without = 0;
		int err = tc_calibration_concurrency_ns(&c, t, &call, &share, &sync);
		cr_assert_eq(err, 0, "%s %s: %s", cases[i].topo, cases[i].alg, tc_strerror(err));
		cr_assert(fabs(share - cases[i].share) <= 1e-9 * (1 + cases[i].share),
		          "%s %s: share %.3f, not %.3f", cases[i].topo, cases[i].alg, share,
		          cases[i].share);
		cr_assert(fabs(sync - cases[i].sync) < 1e-9, "%s %s: sync %.3f, not %.3f",
		          cases[i].topo, cases[i].alg, sync, cases[i].sync);
		cr_assert_eq(tc_calibration_predict(&c, t, &call, NULL, NULL, &with), 0);
		cr_assert_eq(tc_calibration_predict(&flat, t, &call, NULL, NULL, &without), 0);
		cr_assert(fabs(with - (without + share + sync)) <= 1e-9 * with, "%s: %.3f != %.3f",
		          cases[i].topo, with, without + share + sync);
		cr_assert_eq(tc_calibration_concurrency_ns(&flat, t, &call, &share, &sync), 0);
		cr_assert(share == 0 && sync == 0);
		tc_topo_destroy(t);
	}
}

/* The pair's one-way message of m bytes under the calibration's model of m
 * (hand_made()'s segments: 7364.32 ns at 64 KiB, 125329.12 ns at 1 MiB,
 * both in the third, -500 ns + 0.12 ns/B). */
static double one_way(const struct tc_calibration *c, double m)
{
	struct tc_model md;
	cr_assert_eq(tc_calibration_model(c, (size_t)m, &md, NULL), 0);
	return md.ts_ns + m * md.tw_ns;
}

/* Chain factors of the hand-made table: the step of a ring of q = 2, 4, 8,
 * 16 ranks as a multiple of the pair's one-way message, at 64 KiB and at
 * 1 MiB. */
static const double chain64[4] = {1.2, 1.5, 2.5, 3.0}, chain1m[4] = {1.1, 2.2, 4.4, 6.6};

/* A chain table on top of hand_made_concurrency(): C(q, m) = the factors
 * above times the one-way message. */
static void hand_made_chain(struct tc_calibration *c)
{
	hand_made_concurrency(c);
	const double o64 = one_way(c, 65536), o1m = one_way(c, 1048576);
	c->nchain = 4;
	c->nchain_sizes = 2;
	c->chain_sizes[0] = (size_t)64 << 10;
	c->chain_sizes[1] = (size_t)1 << 20;
	cr_assert(fabs(o64 - 7364.32) < 1e-6 && fabs(o1m - 125329.12) < 1e-6, "%.6f %.6f", o64, o1m);
	for (int i = 0; i < 4; i++) {
		c->chain_ns[0][i] = chain64[i] * o64;
		c->chain_ns[1][i] = chain1m[i] * o1m;
	}
}

/* z(k, m) = max(1, C(k, m) / C(2, m)) and z1(k, m) = max(1, C(k, m) / (t_s
 * + m t_w)) for k > 2: C interpolated in log2 k, the ratio in log2 m, both
 * clamped; 1 without the table, for k <= 2, or for a table the check
 * refuses (which names the field). */
Test(calibrate, chain_share, .timeout = 10)
{
	struct tc_calibration c;
	hand_made_chain(&c);
	const double l12 = log2(12.0) - 3, l3 = log2(3.0) - 1; /* between measured q, in log2 */
	static const double kib = 1024;
	const struct {
		int k;
		double m, z, z1;
	} cases[] = {
	        {1, 64 * kib, 1.0, 1.0},
	        {2, 1024 * kib, 1.0, 1.0},
	        {4, 64 * kib, 1.5 / 1.2, 1.5},
	        {16, 64 * kib, 3.0 / 1.2, 3.0},
	        {8, 1024 * kib, 4.0, 4.4},
	        {16, 1024 * kib, 6.0, 6.6},
	        {12, 1024 * kib, (4.4 + 2.2 * l12) / 1.1, 4.4 + 2.2 * l12},
	        {3, 1024 * kib, (1.1 + 1.1 * l3) / 1.1, 1.1 + 1.1 * l3},
	        {64, 1024 * kib, 6.0, 6.6},                            /* beyond 16 ranks: 16's */
	        {16, 8 * kib, 2.5, 3.0},                               /* below 64 KiB: its row */
	        {16, 16384 * kib, 6.0, 6.6},                           /* above 1 MiB: its row */
	        {16, 256 * kib, 0.5 * (2.5 + 6.0), 0.5 * (3.0 + 6.6)}, /* log2 midway */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double z = tc_calibration_chain_share(&c, cases[i].k, (size_t)cases[i].m);
		double z1 = tc_calibration_chain_step_share(&c, cases[i].k, (size_t)cases[i].m);
		cr_assert(fabs(z - cases[i].z) < 1e-9, "z(%d, %.0f) = %.6f, not %.6f", cases[i].k,
		          cases[i].m, z, cases[i].z);
		cr_assert(fabs(z1 - cases[i].z1) < 1e-9, "z1(%d, %.0f) = %.6f, not %.6f",
		          cases[i].k, cases[i].m, z1, cases[i].z1);
	}
	/* A ratio below 1 (a ring faster than the exchange, or than the
	 * one-way message) is no discount. */
	const double keep = c.chain_ns[0][1];
	c.chain_ns[0][1] = 0.5 * c.chain_ns[0][0];
	cr_assert_eq(tc_calibration_chain_share(&c, 4, 65536), 1.0);
	cr_assert_eq(tc_calibration_chain_step_share(&c, 4, 65536), 1.0);
	c.chain_ns[0][1] = keep;
	struct tc_calibration bad = c;
	bad.chain_ns[1][2] = -1;
	cr_assert_eq(tc_calibration_chain_share(&bad, 16, 1 << 20), 1.0);
	cr_assert_eq(tc_calibration_chain_step_share(&bad, 16, 1 << 20), 1.0);
	bad = c;
	bad.nchain = 5;
	cr_assert_eq(tc_calibration_chain_share(&bad, 16, 1 << 20), 1.0);
	struct tc_model md;
	cr_assert_eq(tc_calibration_model(&bad, 4096, &md, NULL), TC_EINVAL);
	cr_assert(strstr(tc_error_detail(), "nchain"), "%s", tc_error_detail());
	bad = c;
	bad.chain_sizes[1] = bad.chain_sizes[0];
	cr_assert_eq(tc_calibration_model(&bad, 4096, &md, NULL), TC_EINVAL);
	cr_assert(strstr(tc_error_detail(), "chain_sizes.1"), "%s", tc_error_detail());
	c.nchain = 0;
	cr_assert_eq(tc_calibration_chain_share(&c, 16, 1 << 20), 1.0);
	cr_assert_eq(tc_calibration_chain_step_share(&c, 16, 1 << 20), 1.0);
	cr_assert_eq(tc_calibration_chain_share(NULL, 16, 1 << 20), 1.0);
	cr_assert_eq(tc_calibration_chain_step_share(NULL, 16, 1 << 20), 1.0);
}

/* With the chain table a round is charged the larger of the copy table's
 * share s and the ring's factor at the round's size: z1 where the busiest
 * receiver also sends to another rank (a ring's step), z otherwise.
 * - ring:16's allgather of 4 MiB blocks: 15 chained rounds, z1(16) = 6.6
 *   (the 1 MiB row) above s(16) = 4;
 * - ring:16's allgather of 64 KiB: z1(16) = 3 above s(16) = 1 (the 64 KiB
 *   copy row grows with k);
 * - hypercube:4's bcast of 4 MiB: receivers that do not send in their round,
 *   k = 4 and 8 of them: z = 2 and 4 above s = 1.333 and 2 (k = 1, 2: no
 *   charge);
 * - hypercube:4's allgather of 64 KiB: pairwise exchanges of 64, 128, 256
 *   and 512 KiB among all 16 ranks: z(16, v) = 2.5 + 3.5 log2(v / 64 KiB)
 *   / 4 against s(16) at the 960 KiB each rank takes in (B(16) = 160 - 120
 *   log2(15) / 6 and B(2) = 20 between the table's rows: 8 x 20 / B(16)). */
Test(calibrate, concurrency_of_chained_rounds, .timeout = 30)
{
	struct tc_calibration c, flat;
	hand_made_chain(&c);
	hand_made_concurrency(&flat);
	const size_t big = (size_t)4 << 20, small = (size_t)64 << 10;
	struct tc_model mb, ms, mh;
	cr_assert_eq(tc_calibration_model(&c, big, &mb, NULL), 0);
	cr_assert_eq(tc_calibration_model(&c, small, &ms, NULL), 0);
	/* The hypercube allgather's mean message: 16 ranks' 64 messages of
	 * 960 KiB in all each, 240 KiB. */
	cr_assert_eq(tc_calibration_model(&c, 245760, &mh, NULL), 0);
	const double s16 = 8.0 * 20 / (160 - 120 * log2(15.0) / 6);
	double hyper = 0;
	for (int d = 0; d < 4; d++) {
		const double v = (double)small * (1 << d), z = 2.5 + 3.5 * d / 4;
		hyper += v * mh.tw_ns * ((z > s16 ? z : s16) - 1);
	}
	const struct {
		const char *topo, *alg;
		enum tc_coll coll;
		size_t bytes;
		double share;
	} cases[] = {
	        {"ring:16", "ring", TC_COLL_ALLGATHER, big, 15 * (double)big * mb.tw_ns * (6.6 - 1)},
	        {"ring:16", "ring", TC_COLL_ALLGATHER, small, 15 * (double)small * ms.tw_ns * (3.0 - 1)},
	        {"hypercube:4", "hypercube", TC_COLL_BCAST, big,
	         (double)big * mb.tw_ns * ((2.0 - 1) + (4.0 - 1))},
	        {"hypercube:4", "hypercube", TC_COLL_ALLGATHER, small, hyper},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double share = -1, sync = -1, fsync = -1, fshare = -1;
		concurrency_of(&c, cases[i].topo, cases[i].coll, cases[i].alg, cases[i].bytes,
		               &share, &sync);
		cr_assert(fabs(share - cases[i].share) <= 1e-9 * (1 + cases[i].share),
		          "%s %s %zu: share %.3f, not %.3f", cases[i].topo, cases[i].alg,
		          cases[i].bytes, share, cases[i].share);
		/* The rounds' synchronisation is the copy table's calibration's. */
		concurrency_of(&flat, cases[i].topo, cases[i].coll, cases[i].alg, cases[i].bytes,
		               &fshare, &fsync);
		cr_assert(fabs(sync - fsync) < 1e-9, "sync %.3f against %.3f", sync, fsync);
		cr_assert(fshare < share, "%.3f not below %.3f", fshare, share);
	}
}

/* A pipeline's round pays the step of the ranks that pass the block on:
 * a reduce's root receives as much as each of them and sends nothing, a
 * bcast's last rank likewise.  Without a combine's cost (t_c = 0) and with
 * packets of one size (16 of them, dividing the block) the reduce is the
 * bcast run backwards and their charges are equal, each round at z1 (a
 * ring's step), not at z (a tree's receiver), which the reduce's root, its
 * rounds' first receiver, would have given it. */
Test(calibrate, pipeline_rounds_pay_the_step, .timeout = 30)
{
	struct tc_calibration c;
	hand_made_chain(&c);
	c.tc_ns_per_byte = 0;
	c.combine.tw_ns_per_byte = 0;
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse("ring:16", &t), 0);
	for (size_t bytes = (size_t)256 << 10; bytes <= (size_t)4 << 20; bytes *= 4) {
		double share[2] = {-1, -1}, sync = -1;
		for (int i = 0; i < 2; i++) {
			struct tc_call call = {.coll = i ? TC_COLL_BCAST : TC_COLL_REDUCE,
			                       .alg = "ring_pipelined",
			                       .bytes = bytes,
			                       .esize = 8,
			                       .packets = 16};
			cr_assert_eq(tc_calibration_concurrency_ns(&c, t, &call, &share[i], &sync), 0);
		}
		cr_assert(share[1] > 0, "%zu: bcast share %.3f", bytes, share[1]);
		cr_assert(fabs(share[0] - share[1]) <= 1e-9 * share[1],
		          "%zu: reduce %.3f, bcast %.3f", bytes, share[0], share[1]);
	}
	tc_topo_destroy(t);
}

/* With the combine table, a combine out of a peer's block costs what k
 * combiners at once measured, m k / B_c(k, v), in place of a copy and an
 * add of cached data, m k / B(k, v) + m t_c: the reduce_scatter of 128 KiB
 * blocks on complete:4, whose every rank combines the 3 peers' blocks
 * (k = 4 readers, v = the 384 KiB each reads in the call), differs by 3
 * times that; the rounds, hand-offs and local combines are the same.
 * Blocks of 64 KiB, whose 3 operands a rank's stage holds
 * (TC__SHM_STAGE), are copied there and added: the copy and the add,
 * with the combine table or without. */
Test(calibrate, shared_memory_combines, .timeout = 30)
{
	struct tc_calibration c, cc;
	hand_made_concurrency(&c);
	cc = c;
	cc.ncombine = cc.ncopiers;
	static const double c0[5] = {5, 10, 20, 40, 80}, c1[5] = {5, 10, 15, 20, 20};
	for (int i = 0; i < 5; i++) {
		cc.combine_bytes_per_ns[0][i] = c0[i];
		cc.combine_bytes_per_ns[1][i] = c1[i];
	}
	const double m = 131072, v = 3 * m;
	cr_assert(!tc__shm_stages(4, (uint64_t)m) && tc__shm_stages(4, (uint64_t)m / 2));
	const double want = 3 * (m * 4 / b_at(20, 15, v) - (m * 4 / b_at(40, 30, v) + m * 0.04));
	const double with =
	        predict_placed(&cc, "complete:4", TC_COLL_REDUCE_SCATTER, "shm", 131072, NULL);
	const double without =
	        predict_placed(&c, "complete:4", TC_COLL_REDUCE_SCATTER, "shm", 131072, NULL);
	cr_assert(fabs((with - without) - want) <= 1e-6 * with, "%.3f - %.3f, not %.3f", with,
	          without, want);
	const double staged =
	        predict_placed(&cc, "complete:4", TC_COLL_REDUCE_SCATTER, "shm", 65536, NULL);
	cr_assert(staged == predict_placed(&c, "complete:4", TC_COLL_REDUCE_SCATTER, "shm", 65536, NULL),
	          "staged: %.3f", staged);
	/* A copy is priced by the copy table alone. */
	cr_assert(predict_placed(&cc, "complete:4", TC_COLL_ALLGATHER, "shm", 65536, NULL) ==
	          predict_placed(&c, "complete:4", TC_COLL_ALLGATHER, "shm", 65536, NULL));
	/* A team whose waiters do not spin runs them unstaged, and AUTO
	 * prices them so: the combines out of the peers' blocks, as at
	 * 128 KiB, at m = 64 KiB. */
	const double m2 = 65536, v2 = 3 * m2;
	const double want2 = 3 * (m2 * 4 / b_at(20, 15, v2) - (m2 * 4 / b_at(40, 30, v2) + m2 * 0.04));
	const double with2 = price_unstaged(&cc, "complete:4", TC_COLL_REDUCE_SCATTER, "shm", 65536);
	const double without2 = price_unstaged(&c, "complete:4", TC_COLL_REDUCE_SCATTER, "shm", 65536);
	cr_assert(fabs((with2 - without2) - want2) <= 1e-6 * with2, "%.3f - %.3f, not %.3f", with2,
	          without2, want2);
}

/* A combine of a small block costs at least the calibration's smallest
 * combine (its combine points: a call's cost), where m t_c says less: the
 * 8-byte allreduce `shm_flag` on complete:4, whose every rank combines 3
 * operands, costs 3 (a - 8 t_c) more with an 8-byte combine of a = 9 ns
 * measured than without the points; of 1 KiB, whose m t_c (41 ns) is
 * above a, the same either way. */
Test(calibrate, shared_memory_small_combines, .timeout = 30)
{
	struct tc_calibration c, cp;
	hand_made_concurrency(&c);
	cp = c;
	for (int i = 0; i < cp.npoints; i++)
		cp.points[i].combine_ns = i ? 9 + (double)cp.points[i].bytes * 0.04 : 9;
	const double tc = c.tc_ns_per_byte, a = 9;
	const double with = predict_placed(&cp, "complete:4", TC_COLL_ALLREDUCE, "shm_flag", 8, NULL);
	const double without = predict_placed(&c, "complete:4", TC_COLL_ALLREDUCE, "shm_flag", 8, NULL);
	cr_assert(fabs((with - without) - 3 * (a - 8 * tc)) <= 1e-6 * with, "%.3f - %.3f, not %.3f",
	          with, without, 3 * (a - 8 * tc));
	cr_assert(predict_placed(&cp, "complete:4", TC_COLL_ALLREDUCE, "shm_flag", 1024, NULL) ==
	          predict_placed(&c, "complete:4", TC_COLL_ALLREDUCE, "shm_flag", 1024, NULL));
}

/* The machine's own algorithms are priced as the reader copies (the
 * shared-memory price of lib/coll/calprice.c): a round costs R(q) plus, for its busiest reader, a
 * copy at its share of the bandwidth per block it reads (combines: the
 * copy, then m t_c to add it) and a hand-off per 10 blocks (its swept
 * waits fetch that many flags at once: one for the 3 reads of p = 4), plus
 * o_call and the local copies (LOCAL_SMALL).  Each case below is that sum worked out by hand from
 * the tables of hand_made_concurrency(). */
Test(calibrate, shared_memory_rounds, .timeout = 30)
{
	struct tc_calibration c;
	hand_made_concurrency(&c);
	c.tcopy_ns_per_byte = 0.01;
	const double big = (double)(4 << 20), small = 65536;
	struct {
		const char *topo, *alg;
		enum tc_coll coll;
		size_t bytes;
		double ns;
	} cases[] = {
	        /* 15 readers of the root's 4 MiB at once, B(15, 4 MiB) = 40 B/ns
	         * (the row saturates from k = 8); q = 16: R = 300, h = 80. */
	        {"complete:16", "shm", TC_COLL_BCAST, 4 << 20, 50 + 300 + 80 + big * 15 / 40},
	        /* Among 2 and 4 ranks the root copies each reader's tail
	         * itself: a reader copies the first 5/9 of 64 KiB (36409
	         * bytes rounded up to a cache line), priced as two copiers at
	         * once (B(2, 64 KiB) = 20 B/ns), the pair's hand-off and
	         * R(2); at p = 4 the first 15/19 (51740, rounded up), 3
	         * readers at B(3, 64 KiB) = 30 B/ns. */
	        {"complete:2", "shm", TC_COLL_BCAST, 65536, 50 + 100 + 50 + 36416.0 * 2 / 20},
	        {"complete:4", "shm", TC_COLL_BCAST, 65536, 50 + 150 + 80 + 51776.0 * 3 / 30},
	        /* Below 16 KiB it copies nothing. */
	        {"complete:2", "shm", TC_COLL_BCAST, 16376, 50 + 100 + 50 + 16376.0 * 2 / 20},
	        /* 4 readers of 3 blocks of 64 KiB each, at B(4) of the 192 KiB
	         * each reads in all (the cache unknown: no cap); R(4) = 150;
	         * the own block copied locally (LOCAL_SMALL). */
	        {"complete:4", "shm", TC_COLL_ALLGATHER, 65536,
	         50 + 150 + 80 + 3 * (small * 4 / b_at(40, 30, 3 * small)) + small * LOCAL_SMALL},
	        /* p = 2: one reader per rank, priced as two at once
	         * (B(2, 64 KiB) = 20 B/ns), the pair's hand-off and R(2). */
	        {"complete:2", "shm", TC_COLL_ALLTOALL, 65536,
	         50 + 100 + (50 + small * 2 / 20) + small * 0.01},
	        /* 8 B from each of 4 ranks, combined in rank order: rank 1
	         * copies 0's, combines its own locally (8 t_c) and 2's and 3's
	         * as read (0.8 ns each: 8 * 4 / B(4, 8 B)) then added (8 t_c =
	         * 0.32 ns each); rank 0 combines all three it reads: the same. */
	        {"complete:4", "shm_flag", TC_COLL_ALLREDUCE, 8,
	         50 + 150 + 80 + 3 * 0.8 + 3 * 8 * 0.04 + 8 * LOCAL_SMALL},
	        /* scatter: 3 readers of one block of the root's each, B(3, 64 KiB)
	         * = 30 B/ns (midway between k = 2 and 4); the root's own block
	         * copied locally. */
	        {"complete:4", "shm", TC_COLL_SCATTER, 65536,
	         50 + 150 + 80 + small * 3 / 30 + small * LOCAL_SMALL},
	        /* gather: the root reads 3 blocks, one reader (priced as two at
	         * once, B(2, 64 KiB) = 20 B/ns). */
	        {"complete:4", "shm", TC_COLL_GATHER, 65536,
	         50 + 150 + 80 + 3 * (small * 2 / 20) + small * LOCAL_SMALL},
	        /* reduce_scatter: 4 readers of 3 blocks each, at B(4) of 192
	         * KiB (as allgather's), each combined after its read (64 KiB
	         * t_c = 2621.44 ns) but rank 1-3's first, block 0, copied; ranks
	         * 1-3 combine their own block locally, rank 0 copies it
	         * (LOCAL_SMALL): three combines for every rank. */
	        {"complete:4", "shm", TC_COLL_REDUCE_SCATTER, 65536,
	         50 + 150 + 80 + 3 * (small * 4 / b_at(40, 30, 3 * small)) + 3 * small * 0.04 +
	                 small * LOCAL_SMALL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tc_topo *t = NULL;
		cr_assert_eq(tc_topo_parse(cases[i].topo, &t), 0);
		struct tc_call call = {.coll = cases[i].coll,
		                       .alg = cases[i].alg,
		                       .bytes = cases[i].bytes,
		                       .esize = 8};
		double ns = 0;
		int err = tc_calibration_predict(&c, t, &call, NULL, NULL, &ns);
		cr_assert_eq(err, 0, "%s %s: %s", cases[i].topo, cases[i].alg, tc_strerror(err));
		cr_assert(fabs(ns - cases[i].ns) <= 1e-9 * cases[i].ns, "%s %s %s: %.3f ns, not %.3f",
		          cases[i].topo, cases[i].alg, tc_coll_name(cases[i].coll), ns, cases[i].ns);
		/* The concurrency is inside the price: no charge beside it. */
		double share = -1, sync = -1;
		cr_assert_eq(tc_calibration_concurrency_ns(&c, t, &call, &share, &sync), 0);
		cr_assert(share == 0 && sync == 0, "%s: share %.3f sync %.3f", cases[i].alg, share, sync);
		tc_topo_destroy(t);
	}
}

/* A copier count's per-copier rate B(k, m) / k above a smaller count's is
 * noise (one copier more cannot make each faster): the rates from k = 2 on
 * are pooled into their non-increasing least-squares fit before B is
 * interpolated.  64 KiB row B = 10, 20, 60, 80, 160 at k = 1, 2, 4, 8, 16:
 * rates 10, 15, 10, 10 from k = 2, pooled 12.5, 12.5, 10, 10, so B = 25,
 * 50, 80, 160; 4 MiB row B = 10, 20, 40, 40, 100: rates 10, 10, 5, 6.25,
 * pooled 10, 10, 5.625, 5.625, so B = 20, 40, 45, 90. */
Test(calibrate, copy_rates_pooled_non_increasing, .timeout = 10)
{
	struct tc_calibration c;
	hand_made_concurrency(&c);
	static const double b0[5] = {10, 20, 60, 80, 160}, b1[5] = {10, 20, 40, 40, 100};
	for (int i = 0; i < 5; i++) {
		c.copy_bytes_per_ns[0][i] = b0[i];
		c.copy_bytes_per_ns[1][i] = b1[i];
	}
	const size_t small = (size_t)64 << 10, big = (size_t)4 << 20;
	static const struct {
		int k;
		int row;
		double s;
	} share[] = {
	        {4, 0, 2.0 * 25 / 50},    /* 1: not the raw 2 * 20 / 60 */
	        {8, 0, 4.0 * 25 / 80},    /* 1.25 */
	        {16, 0, 8.0 * 25 / 160},  /* 1.25 */
	        {16, 1, 8.0 * 20 / 90},   /* 1.778: not the raw 8 * 20 / 100 */
	        {12, 1, 6.0 * 20 / 67.5}, /* B(12) midway between 45 and 90 */
	        {8, 1, 4.0 * 20 / 45},    /* 1.778 */
	        {4, 1, 2.0 * 20 / 40},    /* 1 */
	};
	for (size_t i = 0; i < sizeof share / sizeof share[0]; i++) {
		size_t m = share[i].row ? big : small;
		double s = tc_calibration_share(&c, share[i].k, m);
		double want = share[i].s > 1 ? share[i].s : 1;
		cr_assert(fabs(s - want) < 1e-9, "s(%d, %zu) = %.6f, not %.6f", share[i].k, m, s, want);
	}
	/* The shared-memory price reads at the pooled B too: allgather on
	 * complete:4, 3 blocks of 64 KiB per reader at B(4) of the 192 KiB it
	 * reads, between the pooled 50 (64 KiB) and 40 B/ns (4 MiB), and the
	 * own block's local copy at 4 / B(4, 64 KiB) = 4 / 50 ns/B. */
	c.tcopy_ns_per_byte = 0.01;
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse("complete:4", &t), 0);
	struct tc_call call = {.coll = TC_COLL_ALLGATHER, .alg = "shm", .bytes = small, .esize = 8};
	double ns = 0, want = 50 + 150 + 80 + 3 * ((double)small * 4 / b_at(50, 40, 3.0 * small)) +
	                      (double)small * 4 / 50;
	cr_assert_eq(tc_calibration_predict(&c, t, &call, NULL, NULL, &ns), 0);
	cr_assert(fabs(ns - want) <= 1e-9 * want, "%.3f ns, not %.3f", ns, want);
	tc_topo_destroy(t);
}

/* A call whose footprint (each buffer's span of offsets that its transfers
 * touch, counted once) exceeds the last-level cache comes from memory: each
 * read is priced at the table's largest block's bandwidth.  allgather of
 * 64 KiB on complete:16 touches 16 source blocks and 16 receive buffers of
 * 16 blocks, 17 MiB: with an 8 MiB last level each read costs 64 KiB x 16 /
 * B(16, 4 MiB) = 40 B/ns; with a 64 MiB one the 960 KiB a reader takes in
 * is priced at the largest block that 16 copiers hold in that cache (64
 * KiB: 16 x 2 x 4 MiB do not fit), B(16, 64 KiB) = 160 B/ns; with the
 * cache unknown at the row of 960 KiB itself. */
Test(calibrate, shared_memory_round_beyond_last_cache, .timeout = 10)
{
	struct tc_calibration c;
	hand_made_concurrency(&c);
	c.tcopy_ns_per_byte = 0.01;
	const double small = 65536;
	/* The own block copied locally: at LOCAL_SMALL, but from memory (the 8 MiB
	 * case) at one of 16 copiers' share of the memory-sized block, 16 /
	 * B(16, 4 MiB) = 0.4 ns/B. */
	const struct {
		size_t llc;
		double bw, local;
	} cases[] = {{(size_t)8 << 20, 40, 16.0 / 40},
	             {(size_t)64 << 20, 160, LOCAL_SMALL},
	             {0, b_at(160, 40, 15 * small), LOCAL_SMALL}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		c.cache_bytes[0] = 32 << 10;
		c.cache_bytes[1] = cases[i].llc ? (size_t)1 << 20 : 0;
		c.cache_bytes[2] = cases[i].llc;
		if (!cases[i].llc)
			c.cache_bytes[0] = 0; /* unknown: the row of all a reader takes in */
		/* 15 reads each, two hand-offs (a wave of 10 flags, then 5). */
		double want =
		        50 + 300 + 2 * 80 + 15 * (small * 16 / cases[i].bw) + small * cases[i].local;
		double ns = predict_placed(&c, "complete:16", TC_COLL_ALLGATHER, "shm", 65536, NULL);
		cr_assert(fabs(ns - want) <= 1e-9 * want, "llc %zu: %.3f ns, not %.3f",
		          cases[i].llc, ns, want);
	}
	/* Within the last level but beyond a core's L2 (1 MiB): allgather of
	 * 2 MiB blocks on complete:4 touches 40 MiB of a 64 MiB cache.  Every
	 * read and the own block's local copy are priced at the largest row
	 * that 16 copiers hold there (64 KiB), B(4) = 40 B/ns: 2 MiB x 4 / 40
	 * a read, 4 / 40 ns/B the local copy (above t_copy); R(4) and one
	 * hand-off. */
	hand_made_caches(&c, (size_t)64 << 20);
	const double big = 2.0 * (1 << 20);
	double want = 50 + 150 + 80 + 3 * (big * 4 / 40) + big * 4 / 40;
	double ns = predict_placed(&c, "complete:4", TC_COLL_ALLGATHER, "shm", (size_t)big, NULL);
	cr_assert(fabs(ns - want) <= 1e-9 * want, "2 MiB on complete:4: %.3f ns, not %.3f", ns, want);
	/* The same at p = 2: the read and the own block's copy at B(2) = 20
	 * B/ns of that row, R(2) and the pair's hand-off. */
	want = 50 + 100 + 50 + big * 2 / 20 + big * 2 / 20;
	ns = predict_placed(&c, "complete:2", TC_COLL_ALLGATHER, "shm", (size_t)big, NULL);
	cr_assert(fabs(ns - want) <= 1e-9 * want, "2 MiB on complete:2: %.3f ns, not %.3f", ns, want);
}

/* A reader of the machine's own algorithms takes each block out of its
 * writer's buffer.  Where the call's footprint is at most half the
 * last-level cache, a read is priced at the table's row for the block's
 * own size; beyond, at all the reader takes in over the call, capped at
 * the largest row the cache holds for every copier (here 64 KiB).  An
 * allgather of 256 KiB blocks on complete:4 touches 4 x (256 KiB + 1 MiB)
 * = 5 MiB: within half of a 64 MiB cache its three reads are at B(4,
 * 256 KiB), beyond half of an 8 MiB one at B(4, 64 KiB); the rest of the
 * price is the same in both (the same rows, rounds and hand-offs). */
Test(calibrate, shared_memory_reads_at_their_block, .timeout = 10)
{
	struct tc_calibration c;
	hand_made_concurrency(&c);
	c.tcopy_ns_per_byte = 0.01;
	const double m = 256.0 * 1024;
	hand_made_caches(&c, (size_t)64 << 20);
	const double roomy = predict_placed(&c, "complete:4", TC_COLL_ALLGATHER, "shm", (size_t)m, NULL);
	c.cache_bytes[2] = (size_t)8 << 20;
	const double tight = predict_placed(&c, "complete:4", TC_COLL_ALLGATHER, "shm", (size_t)m, NULL);
	/* B(4) = 40 B/ns at 64 KiB, 30 at 4 MiB, linear in log2 m: a read of
	 * m by one of 4 readers takes m x 4 / B. */
	const double want = 3 * m * 4 / b_at(40, 30, m) - 3 * m * 4 / 40;
	cr_assert(fabs((roomy - tight) - want) <= 1e-9 * fabs(want), "%.3f ns apart, not %.3f",
	          roomy - tight, want);
	cr_assert(want > 0, "the 256 KiB row is the slower one here");
}

/* A block that several ranks read (an allgather's, a bcast's) is priced, for
 * each of its n readers, at the mean of the copy table's rate (its first
 * reader's) and n - 1 times the shared table's (B_s: a block another core
 * has read), where measured (nshared) and the call takes at most half the
 * last-level cache; a block of one reader (an alltoall's) and a combine
 * keep their price.  With B_s twice B on the
 * 64 KiB row, 64 KiB blocks within half a 64 MiB cache: one read by one of
 * k copiers takes m k / B(k) = m / 10 ns alone, m / 20 after its first
 * reader. */
Test(calibrate, shared_memory_blocks_of_several_readers, .timeout = 10)
{
	struct tc_calibration c;
	hand_made_concurrency(&c);
	c.tcopy_ns_per_byte = 0.01;
	hand_made_caches(&c, (size_t)64 << 20);
	const double m = 65536;
	const struct {
		const char *topo;
		enum tc_coll coll;
		const char *alg;
		double saved;
	} cases[] = {
	        /* 3 reads of blocks of 3 readers: 3 m / 10 against
	         * 3 (m / 10 + 2 m / 20) / 3. */
	        {"complete:4", TC_COLL_ALLGATHER, "shm", 3 * (m / 10) - (m / 10 + 2 * (m / 20))},
	        /* The root's block, 7 readers: one read each. */
	        {"complete:8", TC_COLL_BCAST, "shm", m / 10 - (m / 10 + 6 * (m / 20)) / 7},
	        {"complete:4", TC_COLL_ALLTOALL, "shm", 0},
	        {"complete:4", TC_COLL_ALLREDUCE, "shm_flag", 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		c.nshared = 0;
		const double own = predict_placed(&c, cases[i].topo, cases[i].coll, cases[i].alg,
		                                  (size_t)m, NULL);
		c.nshared = c.ncopiers;
		for (int k = 0; k < c.ncopiers; k++)
			for (int s = 0; s < c.ncopy_sizes; s++)
				c.shared_bytes_per_ns[s][k] = 2 * c.copy_bytes_per_ns[s][k];
		const double shared = predict_placed(&c, cases[i].topo, cases[i].coll, cases[i].alg,
		                                     (size_t)m, NULL);
		cr_assert(fabs((own - shared) - cases[i].saved) <= 1e-9 * own,
		          "%s %s: %.3f ns saved, not %.3f", cases[i].topo,
		          tc_coll_name(cases[i].coll), own - shared, cases[i].saved);
	}
	/* Past half the cache (an allgather of 256 KiB blocks on complete:4
	 * touches 5 MiB of an 8 MiB one) a block is read as one reader's. */
	c.cache_bytes[2] = (size_t)8 << 20;
	const double shared =
	        predict_placed(&c, "complete:4", TC_COLL_ALLGATHER, "shm", 256 << 10, NULL);
	c.nshared = 0;
	const double own = predict_placed(&c, "complete:4", TC_COLL_ALLGATHER, "shm", 256 << 10, NULL);
	cr_assert(shared == own, "beyond half the cache: %.3f ns against %.3f", shared, own);
}

/* With rounds of flags measured (nflag), a round of the machine's own
 * algorithms costs F(q) of its q ranks where it cost R(q).  A reader out of
 * the writers' buffers pays a hand-off for each block after its first (the
 * flag round holds the first's) instead of one per wave of swept flags,
 * and the run's second synchronisation (the writers wait until their IN
 * is read) a round more: F(q) where everyone waits, F(2) and the sweep's
 * further waves where a bcast's root does.  A reader out of the flags or
 * areas pays (F(q) - F(2)) / (q - 2) for each line beyond the flag's first,
 * as it reads its block during the sweep or, a reduction, after it.
 * F = 60, 120, 200, 400 ns at q = 2, 4, 8, 16; the cache unknown (no cap
 * on a reader's row). */
Test(calibrate, shared_memory_flag_rounds, .timeout = 10)
{
	struct tc_calibration c;
	hand_made_concurrency(&c);
	c.tcopy_ns_per_byte = 0.01;
	static const double f[4] = {60, 120, 200, 400};
	c.nflag = 4;
	for (int i = 0; i < 4; i++)
		c.flag_ns[i] = f[i];
	const double small = 65536;
	const struct {
		const char *topo;
		enum tc_coll coll;
		size_t bytes;
		double ns;
	} cases[] = {
	        /* 15 readers of the root's 8 bytes, B(15) = 150 B/ns (between
	         * k = 8 and 16 on the 64 KiB row, below which it is clamped);
	         * one block each: no hand-off beside the round. */
	        {"complete:16", TC_COLL_BCAST, 8, 50 + 400 + 8.0 * 15 / 150},
	        /* 3 blocks per reader out of the writers' IN: two hand-offs of
	         * the farthest class (80); a second round, after which the
	         * writers may change IN. */
	        {"complete:4", TC_COLL_ALLGATHER, 65536,
	         50 + 2 * 120 + 3 * (small * 4 / b_at(40, 30, 3 * small)) + 2 * 80 + small * LOCAL_SMALL},
	        /* p = 2: one block, priced as two readers at once. */
	        {"complete:2", TC_COLL_ALLTOALL, 65536, 50 + 2 * 60 + small * 2 / 20 + small * 0.01},
	        /* 8 bytes in the flag's first line (its payload starts at byte
	         * 40): the round brought them. */
	        {"complete:4", TC_COLL_ALLGATHER, 8, 50 + 120 + 3 * (8.0 * 4 / 40) + 8 * LOCAL_SMALL},
	        /* alltoall of 8 bytes among 8: the 64 published bytes in the
	         * flag, reader d's at 40 + 8 d: readers 3..7 find theirs in the
	         * second line, one line per writer, each at what a further flag
	         * adds to the round, (F(8) - F(2)) / 6. */
	        {"complete:8", TC_COLL_ALLTOALL, 8,
	         50 + 200 + 7 * ((200.0 - 60) / 6 + 8.0 * 8 / 80) + 8 * LOCAL_SMALL},
	        /* Among 16 the 128 bytes go to the areas: a line per writer,
	         * (F(16) - F(2)) / 14 each. */
	        {"complete:16", TC_COLL_ALLTOALL, 8,
	         50 + 400 + 15 * ((400.0 - 60) / 14 + 8.0 * 16 / 160) + 8 * LOCAL_SMALL},
	        /* reduce_scatter of 8 bytes among 16, the areas too: 15 lines
	         * read after the sweep, in rank order, each at what a further
	         * flag adds to the round, (F(16) - F(2)) / 14, besides the
	         * reads; 15 combines of 8 bytes at t_c = 0.04 (rank 0 copies
	         * its own block instead of its fifteenth, LOCAL_SMALL). */
	        {"complete:16", TC_COLL_REDUCE_SCATTER, 8,
	         50 + 400 + 15 * ((400.0 - 60) / 14 + 8.0 * 16 / 160 + 8 * 0.04) + 8 * LOCAL_SMALL},
	        /* A bcast of 1 KiB out of the root's IN: 3 readers at B(3) =
	         * 30 B/ns; then the root awaits their flags, F(2). */
	        {"complete:4", TC_COLL_BCAST, 1024, 50 + 120 + 1024.0 * 3 / 30 + 60},
	        /* Among 16 the root sweeps 15 flags: F(2) and one more wave. */
	        {"complete:16", TC_COLL_BCAST, 1024, 50 + 400 + 1024.0 * 15 / 150 + 60 + 80},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double ns = predict_placed(&c, cases[i].topo, cases[i].coll, "shm", cases[i].bytes, NULL);
		cr_assert(fabs(ns - cases[i].ns) <= 1e-9 * cases[i].ns, "%s %s: %.3f ns, not %.3f",
		          cases[i].topo, tc_coll_name(cases[i].coll), ns, cases[i].ns);
	}
}

/* A channel schedule's share is read at the size of all a receiver takes
 * in over the call, not at one round's block: the ring allgather of 64 KiB
 * blocks on ring:16 brings each rank 960 KiB, one block a round.  With the
 * cache unknown that is B's row at 960 KiB, s(16) = 8 B(2) / B(16) (B(2) =
 * 20 B/ns on both rows); with a 64 MiB last level the 960 KiB stay in
 * what 16 copiers hold there (64 KiB blocks: 16 x 2 x 4 MiB do not fit),
 * s(16, 64 KiB) = 8 x 20 / 160 = 1: no share. */
Test(calibrate, share_at_what_a_rank_takes_in, .timeout = 10)
{
	struct tc_calibration c;
	hand_made_concurrency(&c);
	const double m = 65536;
	struct tc_model md;
	cr_assert_eq(tc_calibration_model(&c, (size_t)m, &md, NULL), 0);
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse("ring:16", &t), 0);
	struct tc_call call = {.coll = TC_COLL_ALLGATHER, .alg = "ring", .bytes = (size_t)m, .esize = 8};
	const double s = 8.0 * 20 / b_at(160, 40, 15 * m);
	const struct {
		size_t llc;
		double share;
	} cases[] = {{0, 15 * m * md.tw_ns * (s - 1)}, {(size_t)64 << 20, 0}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		c.cache_bytes[0] = cases[i].llc ? 32 << 10 : 0;
		c.cache_bytes[1] = cases[i].llc ? (size_t)1 << 20 : 0;
		c.cache_bytes[2] = cases[i].llc;
		double share = -1, sync = -1;
		cr_assert_eq(tc_calibration_concurrency_ns(&c, t, &call, &share, &sync), 0);
		cr_assert(fabs(share - cases[i].share) <= 1e-9 * (1 + cases[i].share),
		          "llc %zu: share %.3f, not %.3f", cases[i].llc, share, cases[i].share);
	}
	tc_topo_destroy(t);
}

/* Natively (values are noise; the shape is not): segments by path, the
 * default range 8 B .. 4 MiB, o_call measured and non-negative. */
Test(calibrate, native_segments_and_call_cost, .timeout = 120)
{
	struct tc_calibrate_opts o;
	memset(&o, 0, sizeof o);
	o.min_bytes = 64;
	o.max_bytes = 64 << 10;
	o.reps = 3;
	struct tc_calibration c;
	int err = tc_model_calibrate(&o, &c);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	cr_assert_eq(c.npoints, 11);
	check_segments(&c);
	/* 64..512 B streamed (4 points), 1 KiB and up single copy: the first
	 * segment is the streamed one. */
	cr_assert_eq(c.segments[0].single_copy, 0);
	cr_assert_eq(c.segments[0].lo_bytes, (size_t)64);
	for (int i = 0; i < c.npoints; i++)
		cr_assert(isfinite(c.points[i].exchange_ns) && c.points[i].exchange_ns > 0);
	for (int k = 0; k < c.nsegments; k++)
		cr_assert(isfinite(c.segments[k].exchange_ratio) && c.segments[k].exchange_ratio > 0);
	/* The combining receives: every point (64 B and up) and segment. */
	for (int i = 0; i < c.npoints; i++)
		cr_assert(isfinite(c.points[i].reduce_ns) && c.points[i].reduce_ns > 0);
	for (int k = 0; k < c.nsegments; k++)
		cr_assert(isfinite(c.segments[k].recv_tc_ns_per_byte) &&
		          c.segments[k].recv_tc_ns_per_byte >= 0 &&
		          isfinite(c.segments[k].recv_ts_ns) && c.segments[k].recv_ts_ns >= 0);
	cr_assert(isfinite(c.call_measured_ns) && c.call_measured_ns > 0);
	cr_assert_leq(c.copy.npoints, c.npoints);
	cr_assert(c.copy.npoints < 2 || isfinite(c.tcopy_ns_per_byte));
	for (int i = 0; i < c.npoints; i++)
		cr_assert(isfinite(c.points[i].copy_ns) && c.points[i].copy_ns >= 0);
	cr_assert(isfinite(c.call_predicted_ns) && c.call_predicted_ns > 0);
	cr_assert(c.call_ns >= 0 && isfinite(c.call_ns));
	/* Concurrency: a team of every CPU (at least 2), each table filled. */
	if (c.conc_ranks >= 2) {
		cr_assert(isfinite(c.handoff_pair_ns) && c.handoff_pair_ns > 0);
		cr_assert(c.ncopy_sizes >= 2 && c.ncopiers >= 2 && c.copiers[0] == 1 &&
		          c.copiers[c.ncopiers - 1] == c.conc_ranks);
		for (int s = 0; s < c.ncopy_sizes; s++)
			for (int k = 0; k < c.ncopiers; k++)
				cr_assert(c.copy_bytes_per_ns[s][k] > 0, "B[%d][%d]", s, k);
		/* The combines: every size and count the copies have. */
		cr_assert_eq(c.ncombine, c.ncopiers);
		for (int s = 0; s < c.ncopy_sizes; s++)
			for (int k = 0; k < c.ncombine; k++)
				cr_assert(isfinite(c.combine_bytes_per_ns[s][k]) &&
				                  c.combine_bytes_per_ns[s][k] > 0,
				          "B_c[%d][%d] = %g", s, k, c.combine_bytes_per_ns[s][k]);
		/* The shared table: with a third CPU to read the blocks first,
		 * every size and count; without, none. */
		cr_assert_eq(c.nshared, c.conc_ranks >= 3 ? c.ncopiers : 0);
		for (int s = 0; s < c.ncopy_sizes; s++)
			for (int k = 0; k < c.nshared; k++)
				cr_assert(isfinite(c.shared_bytes_per_ns[s][k]) &&
				                  c.shared_bytes_per_ns[s][k] > 0,
				          "B_s[%d][%d] = %g", s, k, c.shared_bytes_per_ns[s][k]);
		/* The sizes: 64 KiB, 512 KiB and 4 MiB below the memory-sized
		 * block (at least 8 MiB unless the memory is small), which
		 * comes last. */
		static const size_t fixed[3] = {(size_t)64 << 10, (size_t)512 << 10, (size_t)4 << 20};
		const size_t big = c.copy_sizes[c.ncopy_sizes - 1];
		for (int s = 0; s + 1 < c.ncopy_sizes; s++)
			cr_assert(c.copy_sizes[s] == fixed[s] && c.copy_sizes[s] < big,
			          "copy_sizes[%d] = %zu", s, c.copy_sizes[s]);
		if (big >= ((size_t)8 << 20))
			cr_assert_eq(c.ncopy_sizes, 4);
		cr_assert(c.nsync >= 1 && c.sync_ranks[0] == 2 &&
		          c.sync_ranks[c.nsync - 1] == c.conc_ranks);
		cr_assert_eq(c.nflag, c.nsync);
		for (int i = 0; i < c.nsync; i++)
			cr_assert(isfinite(c.sync_ns[i]) && c.sync_ns[i] > 0 &&
			          isfinite(c.flag_ns[i]) && c.flag_ns[i] > 0);
		/* The chained steps: every ring size, the three block sizes
		 * (the copy buffers hold them), each a time. */
		cr_assert(c.nchain == c.nsync && c.nchain_sizes == TC_CALIBRATE_CHAIN_SIZES,
		          "nchain %d, nchain_sizes %d", c.nchain, c.nchain_sizes);
		for (int s = 0; s < c.nchain_sizes; s++) {
			cr_assert_eq(c.chain_sizes[s], (size_t)64 << (10 + 2 * s));
			for (int i = 0; i < c.nchain; i++)
				cr_assert(isfinite(c.chain_ns[s][i]) && c.chain_ns[s][i] > 0,
				          "chain_ns[%d][%d] = %g", s, i, c.chain_ns[s][i]);
		}
		for (int k = 0; k < TC_HANDOFF_CLASSES; k++)
			cr_assert(c.handoff_rank[k] < 0 ? isnan(c.handoff_ns[k]) : c.handoff_ns[k] > 0);
	}
	cr_assert_eq(c.call_ns, c.call_measured_ns > c.call_predicted_ns
	                                ? c.call_measured_ns - c.call_predicted_ns
	                                : 0.0);
}

/* The line fit keeps its physical quantities non-negative: data whose
 * least-squares line has a negative intercept (a segment of large sizes
 * steeper than the origin, e.g. 1M..4M) gets the line through the origin,
 * a decreasing one the constant; a clean line is recovered exactly. */
Test(calibrate, line_fit_is_non_negative, .timeout = 10)
{
	static const double x[] = {1 << 20, 2 << 20, 4 << 20};
	double y[3];
	struct tc_calibration_fit f;
	for (int i = 0; i < 3; i++)
		y[i] = 0.5 * x[i] - 70285; /* unconstrained: t_s = -70285 ns */
	tc__cal_line_fit(x, y, 3, &f);
	cr_assert_eq(f.npoints, 3);
	cr_assert_eq(f.ts_ns, 0, "t_s %g", f.ts_ns);
	cr_assert(f.tw_ns_per_byte > 0.4 && f.tw_ns_per_byte < 0.5, "t_w %g", f.tw_ns_per_byte);
	/* Weighted (1 / y^2) through the origin: t_w = sum(x / y) / sum(x^2 / y^2). */
	double a = 0, b = 0;
	for (int i = 0; i < 3; i++)
		a += x[i] / y[i], b += x[i] * x[i] / (y[i] * y[i]);
	cr_assert(fabs(f.tw_ns_per_byte - a / b) < 1e-12, "t_w %g, want %g", f.tw_ns_per_byte, a / b);

	static const double yd[] = {3000, 2500, 2000}; /* decreasing: slope < 0 */
	tc__cal_line_fit(x, yd, 3, &f);
	cr_assert(f.ts_ns > 0 && f.tw_ns_per_byte == 0, "t_s %g t_w %g", f.ts_ns, f.tw_ns_per_byte);

	for (int i = 0; i < 3; i++)
		y[i] = 1000 + 2 * x[i];
	tc__cal_line_fit(x, y, 3, &f);
	cr_assert(fabs(f.ts_ns - 1000) < 1e-6 && fabs(f.tw_ns_per_byte - 2) < 1e-12,
	          "t_s %g t_w %g", f.ts_ns, f.tw_ns_per_byte);
	cr_assert(fabs(f.r2 - 1) < 1e-12);
}

/* The hand-off by distance class from the placement: the concurrency
 * tables above with an SMT sibling at 20 ns, the shared cache at 60 ns, no
 * class measured across caches of one package and 400 ns across packages;
 * 16 ranks on two packages of one cache domain of 8 cores each (ranks 0..7
 * and 8..15), as tests/data/2socket-16core.xml places them.  The price of a
 * shared-memory schedule is o_call (50) + per round R(q) + the busiest
 * reader's hand-offs and copies (shared_memory_rounds above); a round's
 * hand-off is that of its farthest pair's class. */
static void two_packages(struct tc_rank_place *place, int p)
{
	for (int r = 0; r < p; r++)
		place[r] = (struct tc_rank_place){.pu = r,
		                                  .core = r,
		                                  .cache = r / 8,
		                                  .numa = r / 8,
		                                  .package = r / 8};
}

Test(calibrate, handoff_by_class_from_placement, .timeout = 30)
{
	struct tc_calibration c;
	hand_made_concurrency(&c);
	c.handoff_ns[TC_HANDOFF_SMT] = 20;
	c.handoff_ns[TC_HANDOFF_CACHE] = 60;
	c.handoff_ns[TC_HANDOFF_PACKAGE] = NAN;
	c.handoff_ns[TC_HANDOFF_REMOTE] = 400;
	struct tc_rank_place place[16];
	two_packages(place, 16);
	const double r2 = 100, r16 = 300, hs = 20, hc = 60, hr = 400, call = 50;
	struct {
		const char *alg;
		enum tc_coll coll;
		size_t bytes;
		const struct tc_rank_place *place;
		double ns;
	} cases[] = {
	        /* shm_tree: members to their leader inside a domain (7 flags
	         * read by the leader, q = 16), the two leaders across packages
	         * (q = 2), each member reads its leader's release (q = 16). */
	        {"shm_tree", TC_COLL_BARRIER, 0, place, call + (r16 + 7 * hc) + (r2 + hr) + (r16 + hc)},
	        /* Without a placement: the farthest class in every round of
	         * more than two ranks, the pair's (50 ns) among two. */
	        {"shm_tree", TC_COLL_BARRIER, 0, NULL, call + (r16 + 7 * hr) + (r2 + 50) + (r16 + hr)},
	        /* Flat: every rank reads 15 flags in one round, at the class of
	         * the farthest pair, with or without the placement: its swept
	         * waits fetch them in two waves (10, then 5). */
	        {"shm", TC_COLL_BARRIER, 0, place, call + r16 + 2 * hr},
	        {"shm", TC_COLL_BARRIER, 0, NULL, call + r16 + 2 * hr},
	        /* allreduce shm_tree of 8 bytes (one double): a read of 8 bytes
	         * by one of k readers costs 8 max(k, 2) / B(k, 64 KiB) (below
	         * the smallest size of the table: clamped), 0.8 ns for k = 2
	         * (B = 20) and k = 14 (B = 140, midway between k = 8 and 16),
	         * and a combine adds 8 t_c = 0.32 ns after its read.  Round 0:
	         * each leader reads and combines 7 members' flags (2 readers);
	         * round 1: the leaders read each other's partial result (2
	         * readers), leader 8 also combines its own (0.32); round 2: 14
	         * members read their leader's result. */
	        {"shm_tree", TC_COLL_ALLREDUCE, 8, place,
	         call + (r16 + 7 * (hc + 0.8 + 0.32)) + (r2 + hr + 0.8 + 0.32) + (r16 + hc + 0.8)},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double ns = predict_placed(&c, "complete:16", cases[i].coll, cases[i].alg,
		                           cases[i].bytes, cases[i].place);
		cr_assert(fabs(ns - cases[i].ns) <= 1e-9 * cases[i].ns,
		          "case %zu %s %s: %.3f ns, not %.3f", i, tc_coll_name(cases[i].coll),
		          cases[i].alg, ns, cases[i].ns);
	}
	/* Two ranks: the pair's class decides, a class not measured priced
	 * as the next farther one that is. */
	struct tc_rank_place two[2] = {{.core = 0, .cache = 0, .package = 0},
	                               {.core = 0, .cache = 0, .package = 0, .smt = 1}};
	cr_assert_float_eq(predict_placed(&c, "complete:2", TC_COLL_BARRIER, "shm", 0, two),
	                   call + r2 + hs, 1e-9);
	two[1] = (struct tc_rank_place){.core = 1, .cache = 0, .package = 0};
	cr_assert_float_eq(predict_placed(&c, "complete:2", TC_COLL_BARRIER, "shm", 0, two),
	                   call + r2 + hc, 1e-9);
	two[1] = (struct tc_rank_place){.core = 1, .cache = 1, .package = 0};
	cr_assert_float_eq(predict_placed(&c, "complete:2", TC_COLL_BARRIER, "shm", 0, two),
	                   call + r2 + hr, 1e-9);
	/* A core the placement does not know: as without a placement. */
	two[1].core = -1;
	cr_assert_float_eq(predict_placed(&c, "complete:2", TC_COLL_BARRIER, "shm", 0, two),
	                   call + r2 + 50, 1e-9);
	/* The price of every other algorithm ignores the placement. */
	cr_assert_float_eq(predict_placed(&c, "complete:16", TC_COLL_BARRIER, "dissemination", 0, place),
	                   predict_placed(&c, "complete:16", TC_COLL_BARRIER, "dissemination", 0, NULL),
	                   1e-9);
}

/* A calibration built by hand with a value out of range, or parts that
 * disagree: every calibrated call refuses it (TC_EINVAL, the detail naming
 * the call and the field), as tc_team_create and tc_calibration_read do
 * (lib/model/calibration.h), rather than price with it (an o_call of
 * -1e30 ns priced a call at -1e21 s; a segment's NAN line fell back to the
 * line of all points, a negative line to t_w 0; counts beyond the arrays
 * were read past them). */
Test(calibrate, refuses_what_a_team_refuses, .timeout = 30)
{
	static const char *const field[] = {
	        "call_ns -1e+30",
	        "segments.0.fit: its line",
	        "segments.1.fit.ts_ns nan",
	        "tc_ns_per_byte -7",
	        "segments.0.lo_bytes",
	        "segments.1.first 9999",
	        "nsegments 9",
	        "ncopiers 1000",
	        "ts_ns -500 is not all.ts_ns",
	        "copy_bytes_per_ns.0.2",
	        "segments.2.fit.tw_ns_per_byte 1e+300",
	};
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse("ring:4", &t), 0);
	struct tc_call call = {.coll = TC_COLL_ALLREDUCE, .bytes = 1 << 20, .esize = 8};
	for (size_t i = 0; i < sizeof field / sizeof field[0]; i++) {
		struct tc_calibration c;
		hand_made_concurrency(&c);
		switch (i) {
		case 0:
			c.call_ns = -1e30;
			break;
		case 1:
			c.segments[0].fit.ts_ns = -100000;
			c.segments[0].fit.tw_ns_per_byte = -5;
			break;
		case 2:
			c.segments[1].fit.ts_ns = NAN;
			break;
		case 3:
			c.tc_ns_per_byte = -7;
			break;
		case 4:
			c.segments[0].lo_bytes = c.segments[0].hi_bytes + 1;
			break;
		case 5:
			c.segments[1].first = 9999;
			break;
		case 6:
			c.nsegments = TC_CALIBRATE_MAX_SEGMENTS + 1;
			break;
		case 7:
			c.ncopiers = 1000;
			break;
		case 8:
			c.ts_ns = -500;
			break;
		case 9:
			c.copy_bytes_per_ns[0][2] = NAN;
			break;
		default:
			c.segments[2].fit.tw_ns_per_byte = 1e300;
			break;
		}
		static const char *const calls[] = {"tc_calibration_predict",
		                                    "tc_calibration_predict_placed",
		                                    "tc_calibration_concurrency_ns",
		                                    "tc_calibration_round_ns", "tc_calibration_model"};
		for (int k = 0; k < 5; k++) {
			double ns = 12345, share = 0, sync = 0;
			struct tc_model md;
			int err = k == 0   ? tc_calibration_predict(&c, t, &call, NULL, NULL, &ns)
			          : k == 1 ? tc_calibration_predict_placed(&c, t, &call, NULL, NULL,
			                                                   NULL, &ns)
			          : k == 2 ? tc_calibration_concurrency_ns(&c, t, &call, &share, &sync)
			          : k == 3 ? tc_calibration_round_ns(&c, 4, 1 << 20, 4, &ns)
			                   : tc_calibration_model(&c, 1 << 20, &md, NULL);
			cr_assert_eq(err, TC_EINVAL, "%s, %s: %s", field[i], calls[k], tc_strerror(err));
			cr_assert(strstr(tc_error_detail(), calls[k]) &&
			                  strstr(tc_error_detail(), field[i]),
			          "%s, %s: detail \"%s\"", field[i], calls[k], tc_error_detail());
			cr_assert_eq(ns, 12345, "%s, %s: *ns written", field[i], calls[k]);
		}
		/* The team refuses it in the same words. */
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = "ring:4";
		cfg.calibration = &c;
		struct tc_team *team = NULL;
		cr_assert_eq(tc_team_create(&cfg, &team), TC_EINVAL, "%s: a team", field[i]);
		cr_assert(strstr(tc_error_detail(), field[i]), "%s: team detail \"%s\"", field[i],
		          tc_error_detail());
	}
	tc_topo_destroy(t);
}
