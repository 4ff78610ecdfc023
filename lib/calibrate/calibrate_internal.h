/* SPDX-License-Identifier: MIT */
/*
 * lib/calibrate/calibrate_internal.h - what the files of the calibration
 * share: the measuring on the pair and tc_model_calibrate
 * (lib/calibrate/calibrate.c), the fits (fit.c, declared in fit.h) and the
 * measurements of concurrency (concurrency.c).  Not installed.
 */
#ifndef TC_CALIBRATE_CALIBRATE_INTERNAL_H
#define TC_CALIBRATE_CALIBRATE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "topocoll/calibrate.h"

/* A calibration team's timeout when opts->timeout_ms is 0, ms. */
#define TC__CAL_TIMEOUT_DEFAULT 60000u

/* CLOCK_MONOTONIC now, ns (calibrate.c). */
uint64_t tc__cal_now(void);
/* memcpy through a volatile pointer, so that identical copies are not merged (calibrate.c). */
extern void *(*volatile tc__cal_memcpy)(void *, const void *, size_t);
/* qsort's comparison of two doubles, ascending (calibrate.c). */
int tc__cal_cmp(const void *a, const void *b);
/* The median of v[0 .. n), n >= 1, sorting v in place (calibrate.c). */
double tc__cal_median(double *v, int n);
/* Measures the concurrency tables into out; conc_ranks 0: none measured (concurrency.c). */
int tc__cal_concurrency(const struct tc_calibrate_opts *o, struct tc_calibration *out);

#endif /* TC_CALIBRATE_CALIBRATE_INTERNAL_H */
