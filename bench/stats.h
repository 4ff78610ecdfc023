/* SPDX-License-Identifier: MIT */
/*
 * bench/stats.h - what the benchmarks time and sort with: the monotonic
 * clock in ns, and qsort's ascending order of doubles (their medians and
 * quantiles).  Header-only.
 */
#ifndef TC_BENCH_STATS_H
#define TC_BENCH_STATS_H

#include <time.h>

/* CLOCK_MONOTONIC in ns, as a double. */
static inline double bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* qsort's comparison of two doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

#endif /* TC_BENCH_STATS_H */
