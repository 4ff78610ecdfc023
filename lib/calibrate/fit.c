/* SPDX-License-Identifier: MIT */
/*
 * lib/calibrate/fit.c - the calibration's fits (contract in
 * include/topocoll/calibrate.h): from the points lib/calibrate/calibrate.c
 * measured, a line through those of one path or of all, one through the
 * combines and one through the copies (tc__cal_fit), and the piecewise
 * fit, a line per run of points with the same path and cache level
 * (tc__cal_segments).
 *
 * The fit is weighted least squares with weights 1 / y^2 on the medians
 * (header comment of calibrate.h): with w_i = 1/y_i^2, weighted means
 * xb = sum w x / sum w, yb = sum w y / sum w,
 *   t_w = sum w (x - xb)(y - yb) / sum w (x - xb)^2,   t_s = yb - t_w xb,
 * and r2 = 1 - sum w (y - f)^2 / sum w (y - yb)^2.
 */
#include "topocoll/calibrate.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate_internal.h"
#include "calibrate/fit.h"

/* The y of a point a fit is made on: its one-way time, or (combine) its
 * combine time. */
/* A copy or combine shorter than this is not fitted: the clock's cost and
 * resolution decide it (the smallest take a few ns), and it matters to a
 * prediction only where it is large. */
#define TC__CAL_COPY_MIN_NS 100.0

static double tc__cal_y(const struct tc_calibration_point *pt, int combine, double floor_ns)
{
	double y = combine == 2 ? pt->copy_ns : combine ? pt->combine_ns : pt->one_way_ns;
	return y >= floor_ns ? y : NAN;
}

/* The weighted residual sum of y ~ ts + tw x. */
static double tc__cal_ssr(const double *x, const double *y, const double *w, int n, double ts, double tw)
{
	double ssr = 0;
	for (int i = 0; i < n; i++) {
		double r = y[i] - (ts + tw * x[i]);
		ssr += w[i] * r * r;
	}
	return ssr;
}

void tc__cal_line_fit(const double *x, const double *y, int n, struct tc_calibration_fit *f)
{
	f->ts_ns = f->tw_ns_per_byte = f->r2 = f->max_rel_residual = NAN;
	f->npoints = n;
	if (n < 2)
		return;
	double *w = malloc(sizeof *w * (size_t)n);
	if (!w)
		return;
	double sw = 0, sx = 0, sy = 0;
	for (int i = 0; i < n; i++) {
		double yy = y[i] > 1e-3 ? y[i] : 1e-3;
		w[i] = 1.0 / (yy * yy);
		sw += w[i];
		sx += w[i] * x[i];
		sy += w[i] * y[i];
	}
	double xb = sx / sw, yb = sy / sw, sxx = 0, sxy = 0, syy = 0, swxx = 0, swxy = 0;
	for (int i = 0; i < n; i++) {
		double dx = x[i] - xb, dy = y[i] - yb;
		sxx += w[i] * dx * dx;
		sxy += w[i] * dx * dy;
		syy += w[i] * dy * dy;
		swxx += w[i] * x[i] * x[i];
		swxy += w[i] * x[i] * y[i];
	}
	if (!(sxx > 0)) { /* one distinct size: no line */
		free(w);
		return;
	}
	/* Non-negative least squares for the two physical quantities: the
	 * unconstrained line where both are >= 0; otherwise the optimum lies
	 * on a boundary, a line through the origin (t_s = 0; its t_w >= 0 for
	 * non-negative data) or a constant (t_w = 0, t_s the weighted mean):
	 * the better of the two that are feasible. */
	double tw = sxy / sxx, ts = yb - tw * xb;
	if (!(ts >= 0 && tw >= 0)) {
		double tw0 = swxx > 0 ? swxy / swxx : 0, ts1 = yb;
		bool ok0 = tw0 >= 0, ok1 = ts1 >= 0;
		double e0 = ok0 ? tc__cal_ssr(x, y, w, n, 0, tw0) : INFINITY;
		double e1 = ok1 ? tc__cal_ssr(x, y, w, n, ts1, 0) : INFINITY;
		if (ok0 && e0 <= e1)
			ts = 0, tw = tw0;
		else if (ok1)
			ts = ts1, tw = 0;
		else
			ts = 0, tw = 0;
	}
	double ssr = tc__cal_ssr(x, y, w, n, ts, tw), worst = 0;
	for (int i = 0; i < n; i++) {
		double yy = y[i] > 1e-3 ? y[i] : 1e-3, r = y[i] - (ts + tw * x[i]);
		if (fabs(r) / yy > worst)
			worst = fabs(r) / yy;
	}
	free(w);
	f->ts_ns = ts;
	f->tw_ns_per_byte = tw;
	f->r2 = syy > 0 ? 1.0 - ssr / syy : (ssr == 0 ? 1.0 : 0.0);
	f->max_rel_residual = worst;
}

/* Weighted least squares over the points from..to-1 whose single_copy
 * equals want (-1: every point; -2: every point with a combine time, fitted
 * to it); see the top of the file. */
static void tc__cal_fit_range(const struct tc_calibration *cal, int want, int from, int to,
                              struct tc_calibration_fit *f)
{
	/* Combines and copies: only those of TC__CAL_COPY_MIN_NS or more, when
	 * at least two are (else every one). */
	double floor_ns = -INFINITY;
	if (want <= -2) {
		int above = 0;
		for (int i = from; i < to; i++)
			above += tc__cal_y(&cal->points[i], want == -2 ? 1 : 2, TC__CAL_COPY_MIN_NS) >= 0;
		if (above >= 2)
			floor_ns = TC__CAL_COPY_MIN_NS;
	}
	const int comb = want == -2 ? 1 : want == -3 ? 2 : 0;
	int n = 0, cap = to > from ? to - from : 1;
	double *x = malloc(sizeof *x * (size_t)cap * 2), *y = x ? x + cap : NULL;
	f->ts_ns = f->tw_ns_per_byte = f->r2 = f->max_rel_residual = NAN;
	f->npoints = 0;
	if (!x)
		return;
	for (int i = from; i < to; i++) {
		const struct tc_calibration_point *pt = &cal->points[i];
		double v = tc__cal_y(pt, comb, floor_ns);
		if ((want >= 0 && pt->single_copy != want) || !isfinite(v))
			continue;
		x[n] = (double)pt->bytes;
		y[n++] = v;
	}
	tc__cal_line_fit(x, y, n, f);
	free(x);
}

void tc__cal_fit(const struct tc_calibration *cal, int want, struct tc_calibration_fit *f)
{
	tc__cal_fit_range(cal, want, 0, cal->npoints, f);
}

/* The piecewise fit (calibrate.h): runs of points with the same path and
 * cache level, a run of fewer than TC_CALIBRATE_SEGMENT_MIN points joined
 * to the segment before it (the first run to the one after it), a line per
 * segment, and every point judged against its own segment's line. */
void tc__cal_segments(struct tc_calibration *cal)
{
	int start[TC_CALIBRATE_MAX_POINTS + 1], nrun = 0;
	for (int i = 0; i < cal->npoints; i++)
		if (i == 0 || cal->points[i].single_copy != cal->points[i - 1].single_copy ||
		    cal->points[i].cache_level != cal->points[i - 1].cache_level)
			start[nrun++] = i;
	start[nrun] = cal->npoints;
	/* Join short runs (and, defensively, runs beyond the maximum) until
	 * none is left: each join removes one boundary. */
	for (int again = 1; again && nrun > 1;) {
		again = 0;
		for (int k = 0; k < nrun; k++) {
			if (start[k + 1] - start[k] >= TC_CALIBRATE_SEGMENT_MIN &&
			    nrun <= TC_CALIBRATE_MAX_SEGMENTS)
				continue;
			int drop = k > 0 ? k : 1; /* the boundary to remove */
			memmove(&start[drop], &start[drop + 1], (size_t)(nrun - drop) * sizeof *start);
			nrun--;
			again = 1;
			break;
		}
	}
	cal->nsegments = nrun;
	double sw = 0, swy = 0, ssr = 0;
	int n = 0;
	double worst = 0;
	for (int k = 0; k < nrun; k++) {
		struct tc_calibration_segment *g = &cal->segments[k];
		const struct tc_calibration_point *a = &cal->points[start[k]];
		const struct tc_calibration_point *b = &cal->points[start[k + 1] - 1];
		g->first = start[k];
		g->npoints = start[k + 1] - start[k];
		g->lo_bytes = a->bytes;
		g->hi_bytes = b->bytes;
		g->single_copy = a->single_copy == b->single_copy ? a->single_copy : -1;
		g->cache_level = a->cache_level == b->cache_level ? a->cache_level : -1;
		tc__cal_fit_range(cal, -1, start[k], start[k + 1], &g->fit);
		double ratio[TC_CALIBRATE_MAX_POINTS];
		int nr = 0;
		for (int i = start[k]; i < start[k + 1]; i++)
			if (isfinite(cal->points[i].exchange_ns) && cal->points[i].one_way_ns > 0)
				ratio[nr++] = cal->points[i].exchange_ns / cal->points[i].one_way_ns;
		g->exchange_ratio = nr ? tc__cal_median(ratio, nr) : NAN;
		g->recv_ts_ns = g->recv_tc_ns_per_byte = NAN; /* calibrate.c, once o_call is known */
		for (int i = start[k]; i < start[k + 1]; i++) {
			struct tc_calibration_point *pt = &cal->points[i];
			double y = pt->one_way_ns > 1e-3 ? pt->one_way_ns : 1e-3;
			pt->segment = k;
			pt->seg_residual = (pt->one_way_ns -
			                    (g->fit.ts_ns + g->fit.tw_ns_per_byte * (double)pt->bytes)) /
			                   y;
			if (!isfinite(pt->seg_residual))
				continue;
			sw += 1.0 / (y * y);
			swy += pt->one_way_ns / (y * y);
			ssr += pt->seg_residual * pt->seg_residual;
			worst = fmax(worst, fabs(pt->seg_residual));
			n++;
		}
	}
	/* r2 of the weighted problem over every point, about the weighted mean
	 * of all of them (as for a single line). */
	struct tc_calibration_fit *f = &cal->piecewise;
	f->npoints = n;
	f->ts_ns = f->tw_ns_per_byte = NAN;
	f->r2 = f->max_rel_residual = NAN;
	cal->piecewise_max_bytes = 0;
	if (n < 2)
		return;
	double yb = swy / sw, syy = 0;
	for (int i = 0; i < cal->npoints; i++) {
		const struct tc_calibration_point *pt = &cal->points[i];
		double y = pt->one_way_ns > 1e-3 ? pt->one_way_ns : 1e-3;
		if (isfinite(pt->seg_residual))
			syy += (pt->one_way_ns - yb) * (pt->one_way_ns - yb) / (y * y);
	}
	f->r2 = syy > 0 ? 1.0 - ssr / syy : (ssr == 0 ? 1.0 : 0.0);
	f->max_rel_residual = worst;
	for (int i = 0;
	     i < cal->npoints && fabs(cal->points[i].seg_residual) <= TC_CALIBRATE_RESIDUAL_OK; i++)
		cal->piecewise_max_bytes = cal->points[i].bytes;
}
