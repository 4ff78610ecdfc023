/* SPDX-License-Identifier: MIT */
/* lib/calibrate/fit.h - the calibration's line fit (lib/calibrate/calibrate.c). */
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

#endif /* TC_CALIBRATE_FIT_H */
