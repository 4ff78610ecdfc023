/* SPDX-License-Identifier: MIT */
/*
 * lib/model/calibration.c - the check of a calibration
 * (lib/model/calibration.h): what the calibrated model reads within its
 * ranges and the parts in agreement, one check for the reader of the text,
 * the team and the prediction.
 */
#include "model/calibration.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "base/error_detail.h"
#include "topocoll.h"
#include "topocoll/calibrate.h"

/* The bounds of tc_model_check(): a time at most 1000 s, a time per byte at
 * most 1 s. */
#define TC__CAL_NS_MAX 1e12
#define TC__CAL_NS_PER_BYTE_MAX 1e9

/* The fault at field `at`, in printf's words; TC_EINVAL. */
static int tc__cal_bad(struct tc__cal_fault *f, const void *at, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int tc__cal_bad(struct tc__cal_fault *f, const void *at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof f->what, fmt, ap);
	va_end(ap);
	f->at = at;
	return TC_EINVAL;
}

/* NAN (not measured), or a value in [0, max]. */
static bool tc__cal_opt(double x, double max)
{
	return isnan(x) || (x >= 0 && x <= max);
}

/* A finite value in (0, max]. */
static bool tc__cal_pos(double x, double max)
{
	return isfinite(x) && x > 0 && x <= max;
}

/* A table of aggregate rates, [size][count] (the copies', the combines'):
 * each of nsizes x ncounts a finite bandwidth above 0. */
static int tc__cal_rates_valid(struct tc__cal_fault *f, const char *key,
                               const double (*rate)[TC_CALIBRATE_MAX_COPIERS], int nsizes, int ncounts)
{
	for (int s = 0; s < nsizes; s++)
		for (int i = 0; i < ncounts; i++)
			if (!tc__cal_pos(rate[s][i], INFINITY))
				return tc__cal_bad(f, &rate[s][i],
				                   "%s.%d.%d %g is not a finite bandwidth above 0",
				                   key, s, i, rate[s][i]);
	return TC_OK;
}

/* A table measured only since some version (the combines', the shared
 * copies'): its count, *n (key count_key), 0 or ncopiers, then its rates
 * as tc__cal_rates_valid(). */
static int tc__cal_table_valid(const struct tc_calibration *c, struct tc__cal_fault *f,
                               const char *count_key, const int *n, const char *key,
                               const double (*rate)[TC_CALIBRATE_MAX_COPIERS])
{
	if (*n != 0 && *n != c->ncopiers)
		return tc__cal_bad(f, n, "%s %d is neither 0 nor ncopiers %d", count_key, *n, c->ncopiers);
	return tc__cal_rates_valid(f, key, rate, c->ncopy_sizes, *n);
}

/* The same double, NAN the same as NAN. */
static bool tc__cal_same(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* A line's time at m bytes: finite and 0 or more. */
static bool tc__cal_time_at(double ts, double tw, size_t m)
{
	const double y = ts + tw * (double)m;
	return isfinite(y) && y >= 0;
}

/* A fit's count and line (calibration.h); key its key. */
static int tc__cal_fit_valid(const struct tc_calibration_fit *g, const char *key, struct tc__cal_fault *f)
{
	if (g->npoints < 0 || g->npoints > TC_CALIBRATE_MAX_POINTS)
		return tc__cal_bad(f, &g->npoints, "%s.npoints %d is not in [0, %d]", key,
		                   g->npoints, TC_CALIBRATE_MAX_POINTS);
	if (isnan(g->ts_ns) && isnan(g->tw_ns_per_byte))
		return TC_OK; /* no fit */
	if (isnan(g->ts_ns) || isnan(g->tw_ns_per_byte))
		return tc__cal_bad(f, isnan(g->ts_ns) ? &g->ts_ns : &g->tw_ns_per_byte,
		                   "%s.%s nan beside %s.%s %g: a line has both, or neither (no fit)",
		                   key, isnan(g->ts_ns) ? "ts_ns" : "tw_ns_per_byte", key,
		                   isnan(g->ts_ns) ? "tw_ns_per_byte" : "ts_ns",
		                   isnan(g->ts_ns) ? g->tw_ns_per_byte : g->ts_ns);
	if (!(fabs(g->ts_ns) <= TC__CAL_NS_MAX))
		return tc__cal_bad(f, &g->ts_ns, "%s.ts_ns %g is not a time of at most %g ns either way",
		                   key, g->ts_ns, TC__CAL_NS_MAX);
	if (!(fabs(g->tw_ns_per_byte) <= TC__CAL_NS_PER_BYTE_MAX))
		return tc__cal_bad(f, &g->tw_ns_per_byte,
		                   "%s.tw_ns_per_byte %g is not a time per byte of at most %g ns/B "
		                   "either way",
		                   key, g->tw_ns_per_byte, TC__CAL_NS_PER_BYTE_MAX);
	return TC_OK;
}

/* The counts, the fits and the points (calibration.h). */
static int tc__cal_shape_valid(const struct tc_calibration *c, struct tc__cal_fault *f)
{
	static const struct {
		const char *key;
		size_t off;
		int max;
	} counts[] = {
	        {"npoints", offsetof(struct tc_calibration, npoints), TC_CALIBRATE_MAX_POINTS},
	        {"nsegments", offsetof(struct tc_calibration, nsegments), TC_CALIBRATE_MAX_SEGMENTS},
	        {"conc_ranks", offsetof(struct tc_calibration, conc_ranks), TC_CALIBRATE_MAX_COPIERS},
	        {"ncopy_sizes", offsetof(struct tc_calibration, ncopy_sizes), TC_CALIBRATE_COPY_SIZES},
	        {"ncopiers", offsetof(struct tc_calibration, ncopiers), TC_CALIBRATE_MAX_COPIERS},
	        {"ncombine", offsetof(struct tc_calibration, ncombine), TC_CALIBRATE_MAX_COPIERS},
	        {"nshared", offsetof(struct tc_calibration, nshared), TC_CALIBRATE_MAX_COPIERS},
	        {"nsync", offsetof(struct tc_calibration, nsync), TC_CALIBRATE_MAX_SYNC},
	};
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		const int *n = (const int *)((const char *)c + counts[i].off);
		if (*n < 0 || *n > counts[i].max)
			return tc__cal_bad(f, n, "%s %d is not in [0, %d]", counts[i].key, *n,
			                   counts[i].max);
	}
	if (c->nflag < 0 || c->nflag > c->nsync)
		return tc__cal_bad(f, &c->nflag, "nflag %d is not in [0, nsync %d]", c->nflag, c->nsync);
	if (c->nchain < 0 || c->nchain > c->nsync)
		return tc__cal_bad(f, &c->nchain, "nchain %d is not in [0, nsync %d]", c->nchain,
		                   c->nsync);
	if (c->nchain_sizes < 0 || c->nchain_sizes > TC_CALIBRATE_CHAIN_SIZES)
		return tc__cal_bad(f, &c->nchain_sizes, "nchain_sizes %d is not in [0, %d]",
		                   c->nchain_sizes, TC_CALIBRATE_CHAIN_SIZES);
	if ((unsigned)c->regime > TC_CALIBRATE_SINGLE_COPY)
		return tc__cal_bad(f, &c->regime,
		                   "regime %d is not 0 (all), 1 (stream) or 2 "
		                   "(single_copy)",
		                   (int)c->regime);
	if (c->mode != TC_MODE_NATIVE && c->mode != TC_MODE_EMULATED)
		return tc__cal_bad(f, &c->mode, "mode %d is not 0 (native) or 1 (emulated)", c->mode);
	const struct {
		const char *key;
		const struct tc_calibration_fit *fit;
	} fits[] = {{"all", &c->all},
	            {"stream", &c->stream},
	            {"single_copy", &c->single_copy},
	            {"combine", &c->combine},
	            {"copy", &c->copy},
	            {"piecewise", &c->piecewise}};
	int err;
	for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++)
		if ((err = tc__cal_fit_valid(fits[i].fit, fits[i].key, f)) != 0)
			return err;
	const struct tc_calibration_fit *rf = fits[c->regime].fit;
	if (!tc__cal_same(c->ts_ns, rf->ts_ns))
		return tc__cal_bad(f, &c->ts_ns, "ts_ns %g is not %s.ts_ns %g (regime %d: its copy)",
		                   c->ts_ns, fits[c->regime].key, rf->ts_ns, (int)c->regime);
	if (!tc__cal_same(c->tw_ns_per_byte, rf->tw_ns_per_byte))
		return tc__cal_bad(f, &c->tw_ns_per_byte,
		                   "tw_ns_per_byte %g is not %s.tw_ns_per_byte %g (regime %d: its copy)",
		                   c->tw_ns_per_byte, fits[c->regime].key, rf->tw_ns_per_byte,
		                   (int)c->regime);
	for (int i = 1; i < c->npoints; i++)
		if (c->points[i].bytes <= c->points[i - 1].bytes)
			return tc__cal_bad(f, &c->points[i].bytes,
			                   "points.%d.bytes %zu is not above points.%d.bytes %zu (the "
			                   "sizes increase)",
			                   i, c->points[i].bytes, i - 1, c->points[i - 1].bytes);
	return TC_OK;
}

/* The segments, and the line of all points where there are none
 * (calibration.h). */
static int tc__cal_lines_valid(const struct tc_calibration *c, bool need_line, struct tc__cal_fault *f)
{
	int next = 0;
	for (int k = 0; k < c->nsegments; k++) {
		const struct tc_calibration_segment *g = &c->segments[k];
		if (g->first != next)
			return tc__cal_bad(f, &g->first,
			                   "segments.%d.first %d is not %d (the segments take the points "
			                   "in order, each from where the one before ends)",
			                   k, g->first, next);
		if (g->npoints < 1 || g->npoints > c->npoints - g->first)
			return tc__cal_bad(f, &g->npoints,
			                   "segments.%d.npoints %d is not in [1, %d] (the points left of "
			                   "npoints %d)",
			                   k, g->npoints, c->npoints - g->first, c->npoints);
		next = g->first + g->npoints;
		const size_t lo = c->points[g->first].bytes, hi = c->points[next - 1].bytes;
		if (g->lo_bytes != lo)
			return tc__cal_bad(f, &g->lo_bytes,
			                   "segments.%d.lo_bytes %zu is not its first point's size, %zu",
			                   k, g->lo_bytes, lo);
		if (g->hi_bytes != hi)
			return tc__cal_bad(f, &g->hi_bytes,
			                   "segments.%d.hi_bytes %zu is not its last point's size, %zu",
			                   k, g->hi_bytes, hi);
		if (g->single_copy < -1 || g->single_copy > 1)
			return tc__cal_bad(f, &g->single_copy,
			                   "segments.%d.single_copy %d is not -1 (both), 0 or 1", k,
			                   g->single_copy);
		if (g->cache_level < -1 || g->cache_level > 4)
			return tc__cal_bad(f, &g->cache_level,
			                   "segments.%d.cache_level %d is not in [-1, 4]", k,
			                   g->cache_level);
		char key[32];
		snprintf(key, sizeof key, "segments.%d.fit", k);
		int err = tc__cal_fit_valid(&g->fit, key, f);
		if (err)
			return err;
		const double ts = g->fit.ts_ns, tw = g->fit.tw_ns_per_byte;
		if (!isfinite(ts) || !isfinite(tw))
			return tc__cal_bad(f,
			                   isfinite(ts) ? (const void *)&g->fit.tw_ns_per_byte
			                                : (const void *)&g->fit.ts_ns,
			                   "segments.%d.fit: its line (t_s %g ns, t_w %g ns/B) is not "
			                   "finite",
			                   k, ts, tw);
		if (!tc__cal_time_at(ts, tw, lo) || !tc__cal_time_at(ts, tw, hi))
			return tc__cal_bad(f,
			                   tw < 0 ? (const void *)&g->fit.tw_ns_per_byte
			                          : (const void *)&g->fit.ts_ns,
			                   "segments.%d.fit: its line (t_s %g ns, t_w %g ns/B) gives "
			                   "%g ns at %zu B and %g ns at %zu B: not a time of 0 or more",
			                   k, ts, tw, ts + tw * (double)lo, lo,
			                   ts + tw * (double)hi, hi);
		if (!tc__cal_opt(g->exchange_ratio, INFINITY) || isinf(g->exchange_ratio))
			return tc__cal_bad(f, &g->exchange_ratio,
			                   "segments.%d.exchange_ratio %g is neither NAN (not measured) "
			                   "nor a finite ratio of 0 or more",
			                   k, g->exchange_ratio);
		if (!tc__cal_opt(g->recv_ts_ns, TC__CAL_NS_MAX))
			return tc__cal_bad(f, &g->recv_ts_ns,
			                   "segments.%d.recv_ts_ns %g is neither NAN (not measured) nor "
			                   "a time in [0, %g] ns",
			                   k, g->recv_ts_ns, TC__CAL_NS_MAX);
		if (!tc__cal_opt(g->recv_tc_ns_per_byte, TC__CAL_NS_PER_BYTE_MAX))
			return tc__cal_bad(f, &g->recv_tc_ns_per_byte,
			                   "segments.%d.recv_tc_ns_per_byte %g is neither NAN (not "
			                   "measured) nor a time per byte in [0, %g] ns/B",
			                   k, g->recv_tc_ns_per_byte, TC__CAL_NS_PER_BYTE_MAX);
	}
	if (c->nsegments && next != c->npoints)
		return tc__cal_bad(f, &c->segments[c->nsegments - 1].npoints,
		                   "segments.%d.npoints %d: the segments end at point %d, not at "
		                   "npoints %d",
		                   c->nsegments - 1, c->segments[c->nsegments - 1].npoints, next,
		                   c->npoints);
	if (c->nsegments)
		return TC_OK;
	/* No segments: the line of all points is the model (tc_calibration_model). */
	const double ts = c->all.ts_ns, tw = c->all.tw_ns_per_byte;
	if (isnan(ts)) {
		if (need_line)
			return tc__cal_bad(f, &c->all.ts_ns,
			                   "no line: no segment (nsegments 0) and no line of all points "
			                   "(all.ts_ns nan)");
		return TC_OK;
	}
	const size_t lo = c->npoints ? c->points[0].bytes : 0;
	const size_t hi = c->npoints ? c->points[c->npoints - 1].bytes : 0;
	if (!tc__cal_time_at(ts, tw, lo) || !tc__cal_time_at(ts, tw, hi))
		return tc__cal_bad(f,
		                   tw < 0 ? (const void *)&c->all.tw_ns_per_byte
		                          : (const void *)&c->all.ts_ns,
		                   "all: its line, the model without segments (t_s %g ns, t_w %g "
		                   "ns/B), gives %g ns at %zu B and %g ns at %zu B: not a time of 0 "
		                   "or more",
		                   ts, tw, ts + tw * (double)lo, lo, ts + tw * (double)hi, hi);
	return TC_OK;
}

/* t_c, t_copy, o_call and the concurrency tables (calibration.h). */
static int tc__cal_costs_valid(const struct tc_calibration *c, struct tc__cal_fault *f)
{
	const struct {
		const char *key;
		const double *v;
		double max;
	} opt[] = {{"tc_ns_per_byte", &c->tc_ns_per_byte, TC__CAL_NS_PER_BYTE_MAX},
	           {"tcopy_ns_per_byte", &c->tcopy_ns_per_byte, TC__CAL_NS_PER_BYTE_MAX},
	           {"call_ns", &c->call_ns, TC__CAL_NS_MAX}};
	for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++)
		if (!tc__cal_opt(*opt[i].v, opt[i].max))
			return tc__cal_bad(f, opt[i].v,
			                   "%s %g is neither NAN (not measured) nor in [0, %g]",
			                   opt[i].key, *opt[i].v, opt[i].max);
	if (c->conc_ranks < 2)
		return TC_OK; /* no tables: nothing of them is read */
	if (c->ncopy_sizes < 1)
		return tc__cal_bad(f, &c->ncopy_sizes, "ncopy_sizes 0 with conc_ranks %d", c->conc_ranks);
	if (c->ncopiers < 1)
		return tc__cal_bad(f, &c->ncopiers, "ncopiers 0 with conc_ranks %d", c->conc_ranks);
	if (c->nsync < 1)
		return tc__cal_bad(f, &c->nsync, "nsync 0 with conc_ranks %d", c->conc_ranks);
	for (int s = 0; s < c->ncopy_sizes; s++)
		if (!c->copy_sizes[s] || (s && c->copy_sizes[s] <= c->copy_sizes[s - 1]))
			return tc__cal_bad(f, &c->copy_sizes[s],
			                   "copy_sizes.%d %zu: the sizes increase from 1", s,
			                   c->copy_sizes[s]);
	for (int i = 0; i < c->ncopiers; i++)
		if (c->copiers[i] < 1 || c->copiers[i] > c->conc_ranks ||
		    (i && c->copiers[i] <= c->copiers[i - 1]))
			return tc__cal_bad(f, &c->copiers[i],
			                   "copiers.%d %d: the counts increase from 1 to at most "
			                   "conc_ranks %d",
			                   i, c->copiers[i], c->conc_ranks);
	int err = tc__cal_rates_valid(f, "copy_bytes_per_ns", c->copy_bytes_per_ns, c->ncopy_sizes,
	                              c->ncopiers);
	if (err)
		return err;
	err = tc__cal_table_valid(c, f, "ncombine", &c->ncombine, "combine_bytes_per_ns",
	                          c->combine_bytes_per_ns);
	if (!err)
		err = tc__cal_table_valid(c, f, "nshared", &c->nshared, "shared_bytes_per_ns",
		                          c->shared_bytes_per_ns);
	if (err)
		return err;
	for (int i = 0; i < c->nsync; i++) {
		if (c->sync_ranks[i] < 2 || c->sync_ranks[i] > c->conc_ranks ||
		    (i && c->sync_ranks[i] <= c->sync_ranks[i - 1]) || (!i && c->sync_ranks[0] != 2))
			return tc__cal_bad(f, &c->sync_ranks[i],
			                   "sync_ranks.%d %d: the ranks increase from 2 to at most "
			                   "conc_ranks %d",
			                   i, c->sync_ranks[i], c->conc_ranks);
		if (!tc__cal_pos(c->sync_ns[i], TC__CAL_NS_MAX))
			return tc__cal_bad(f, &c->sync_ns[i], "sync_ns.%d %g is not a time in (0, %g] ns",
			                   i, c->sync_ns[i], TC__CAL_NS_MAX);
	}
	for (int i = 0; i < c->nflag; i++)
		if (!tc__cal_pos(c->flag_ns[i], TC__CAL_NS_MAX))
			return tc__cal_bad(f, &c->flag_ns[i], "flag_ns.%d %g is not a time in (0, %g] ns",
			                   i, c->flag_ns[i], TC__CAL_NS_MAX);
	if (c->nchain > 0 && c->nchain_sizes < 1)
		return tc__cal_bad(f, &c->nchain_sizes, "nchain_sizes 0 with nchain %d", c->nchain);
	for (int s = 0; c->nchain > 0 && s < c->nchain_sizes; s++) {
		if (!c->chain_sizes[s] || (s && c->chain_sizes[s] <= c->chain_sizes[s - 1]))
			return tc__cal_bad(f, &c->chain_sizes[s],
			                   "chain_sizes.%d %zu: the sizes increase from 1", s,
			                   c->chain_sizes[s]);
		for (int i = 0; i < c->nchain; i++)
			if (!tc__cal_pos(c->chain_ns[s][i], TC__CAL_NS_MAX))
				return tc__cal_bad(f, &c->chain_ns[s][i],
				                   "chain_ns.%d.%d %g is not a time in (0, %g] ns",
				                   s, i, c->chain_ns[s][i], TC__CAL_NS_MAX);
	}
	if (!tc__cal_pos(c->handoff_pair_ns, TC__CAL_NS_MAX))
		return tc__cal_bad(f, &c->handoff_pair_ns,
		                   "handoff_pair_ns %g is not a time in (0, %g] ns",
		                   c->handoff_pair_ns, TC__CAL_NS_MAX);
	for (int k = 0; k < TC_HANDOFF_CLASSES; k++)
		if (!isnan(c->handoff_ns[k]) && !tc__cal_pos(c->handoff_ns[k], TC__CAL_NS_MAX))
			return tc__cal_bad(f, &c->handoff_ns[k],
			                   "handoff_ns.%d %g is neither NAN (no such rank) nor a time in "
			                   "(0, %g] ns",
			                   k, c->handoff_ns[k], TC__CAL_NS_MAX);
	return TC_OK;
}

int tc__calibration_valid(const struct tc_calibration *c, bool need_line, struct tc__cal_fault *fault)
{
	int err = tc__cal_shape_valid(c, fault);
	if (!err)
		err = tc__cal_lines_valid(c, need_line, fault);
	if (!err)
		err = tc__cal_costs_valid(c, fault);
	return err;
}

int tc__calibration_check(const struct tc_calibration *c, bool need_line, const char *who)
{
	struct tc__cal_fault f;
	if (!c) {
		tc__set_detail("%s: no calibration (NULL)", who);
		return TC_EINVAL;
	}
	int err = tc__calibration_valid(c, need_line, &f);
	if (err)
		tc__set_detail("%s: %s", who, f.what);
	return err;
}
