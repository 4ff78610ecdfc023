/* SPDX-License-Identifier: MIT */
/*
 * bench/fidelity_native.h - the --native mode of bench/model_fidelity
 * (bench/fidelity_native.c), and what both modes share.
 */
#ifndef FIDELITY_NATIVE_H
#define FIDELITY_NATIVE_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "topocoll.h"
#include "stats.h"

/* The most --sweeps. */
enum { FIDELITY_MAX_SWEEPS = 15 };

/* Runs --native: reps calls per case (0: the default), the calibration
 * made again before each collective (recal) or once, sweeps passes over
 * the cases (0: the default), on the team sizes pl[0 .. np) (np 0:
 * chain:2).  Prints the table and the JSON line; returns the exit status. */
int fidelity_native_main(int nreps, int recal, int sweeps, const int *pl, int np);

/* --case, --topo, --bytes items of --native: 0, or -1 when s names none
 * (a size: bytes, or with K / M, a multiple of 8 up to 64 MiB). */
int fidelity_native_add_coll(const char *s);
int fidelity_native_add_topo(const char *s);
int fidelity_native_add_size(const char *s);

/* --case given: only the collectives it names, not the default five. */
void fidelity_native_no_colls(void);

/* --save-calibration FILE: every calibration made is appended, raw. */
void fidelity_native_save_to(const char *path);

/* CLOCK_MONOTONIC in ns: the clock of the library's epochs. */
static inline uint64_t fidelity_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A --case or --topo item: sets bit i of *mask where s is names[i] (0),
 * or names none of the n (-1). */
static inline int fidelity_mask_add(const char *const *names, int n, const char *s, unsigned *mask)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i])) {
			*mask |= 1u << i;
			return 0;
		}
	return -1;
}

/* The team's model of a native run: the calibration's line (t_s, t_w, t_c
 * of the fit of every point, negative or unfitted ones as 0) in md, its
 * other fields kept.  What --native runs with, and what bench/replay_native
 * makes again from a saved calibration. */
static inline void fidelity_line_model(const struct tc_calibration *cal, struct tc_model *md)
{
	md->ts_ns = cal->ts_ns > 0 ? cal->ts_ns : 0;
	md->tw_ns = cal->tw_ns_per_byte > 0 ? cal->tw_ns_per_byte : 0;
	md->tc_ns = isfinite(cal->tc_ns_per_byte) && cal->tc_ns_per_byte > 0 ? cal->tc_ns_per_byte : 0;
}

#endif /* FIDELITY_NATIVE_H */
