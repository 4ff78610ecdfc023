/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/driver.h - what the peers benchmark's driver shares between
 * its launching and collecting (driver.c) and its report (report.c): the
 * implementations, the team sizes, the options the report reads and the
 * results collected.
 */
#ifndef PEERS_DRIVER_H
#define PEERS_DRIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "peers.h"

/* The peers (NPEER: ours on threads and the three others), then ours over
 * each MPI (a team over MPI_COMM_WORLD, bench/peers/mpi.c -DPEERS_OURS_MPI),
 * launched as that MPI's own peer is. */
enum {
	IMPL_OURS,
	IMPL_OPENMP,
	IMPL_OPENMPI,
	IMPL_MPICH,
	NPEER,
	IMPL_OURS_OPENMPI = NPEER,
	IMPL_OURS_MPICH,
	NIMPL
};
extern const char *const impl_name[NIMPL];

/* The team sizes (groups) a run covers, and the most repetitions kept. */
enum { NGROUP = 4 };
extern const int group_p[NGROUP];
#define MAXREPS 32

/* The options (driver.c's main). */
extern int reps;                     /* --reps */
extern int available[NIMPL];         /* the implementation's program and launcher found */
extern int want_p[NGROUP];           /* --p */
extern char why_missing[NIMPL][128]; /* why an implementation is not available */
/* The runs (driver.c's main): a peer skipped for a group (1: timed out, 2:
 * its allowance used up), the repetitions done. */
extern int skipped[NIMPL][NGROUP];
extern int done_reps[NIMPL][NGROUP];

/* One case of one implementation and variant: the repetitions' figures. */
struct rec {
	int impl;
	enum pr_kind kind;
	int p;
	size_t bytes;
	char variant[32];
	char note[64]; /* algorithm, or the error */
	int n, nerr;
	double wall[MAXREPS], cpu[MAXREPS];
};
extern struct rec *recs;
extern int nrecs;

/* Whether the report covers case c at group g; the group of team size p
 * (-1: none); the median of v[0 .. n) (sorts v). */
int selected(int g, const struct pr_case *c);
/* The selected cases of every group, in the report's order:
 *   for (struct case_it it = {0}; next_case(&it);)  it.g, it.p, it.c */
struct case_it {
	int g, p, n, ci;
	const struct pr_case *cases, *c;
};
bool next_case(struct case_it *it);
int group_of(int p);
double median(const double *v, int n);

/* The report (report.c), in the order main prints it. */
void report(void);
void ours_mpi_report(void);
void goals(void);
void markdown(void);
void variants(void);
void json_lines(void);
void json_lines_ours_mpi(void);

#endif /* PEERS_DRIVER_H */
