/* SPDX-License-Identifier: MIT */
/* lib/calibrate/fit.h - the calibration's fits (lib/calibrate/fit.c). */
#ifndef TC_CALIBRATE_FIT_H
#define TC_CALIBRATE_FIT_H

#include "topocoll/calibrate.h"

/*
 * Fits y ~ t_s + t_w x to the n points (x[i], y[i]) by least squares with
 * weights 1 / y^2 (relative residuals), constrained to t_s >= 0 and
 * t_w >= 0: where the unconstrained line has a negative intercept or slope,
 * the better of the line through the origin and the constant.  Fills every
 * field of *f (NAN where n < 2 or the x are all equal).  Pure; the arrays
 * are borrowed.
 */
void tc__cal_line_fit(const double *x, const double *y, int n, struct tc_calibration_fit *f);

/* The line fit of cal's points with single_copy want (-1: all, -2: combines, -3: copies). */
void tc__cal_fit(const struct tc_calibration *cal, int want, struct tc_calibration_fit *f);

/* The piecewise fit (calibrate.h): cal's segments and piecewise, each point's segment. */
void tc__cal_segments(struct tc_calibration *cal);

#endif /* TC_CALIBRATE_FIT_H */
