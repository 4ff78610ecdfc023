/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/launch.h - what tcmpirun hands each rank's copy of an MPI
 * program: the one interface between the launcher (tcmpirun.c) and the MPI
 * layer linked into every program (libtcmpi.a).
 *
 * tcmpirun loads one private copy of the program per rank, looks up
 * tcmpi_rank_main() in it and calls it from the rank's thread or fibre
 * with a struct tcmpi_launch of that rank.  The struct, its argv and the
 * shared part are owned by the launcher and outlive the call.
 */
#ifndef TCMPI_LAUNCH_H
#define TCMPI_LAUNCH_H

#include <stdatomic.h>
#include <stdint.h>

struct tc_proc;
struct tc_team;

/* Raised whenever struct tcmpi_launch or struct tcmpi_shared change, so
 * that a program built against another layout is refused by name. */
#define TCMPI_LAUNCH_ABI 1

/* The collectives counted by --report, X(NAME, "MPI name"). */
#define TCMPI_COLL_MAP(X)                                   \
	X(BARRIER, "MPI_Barrier")                           \
	X(BCAST, "MPI_Bcast")                               \
	X(REDUCE, "MPI_Reduce")                             \
	X(ALLREDUCE, "MPI_Allreduce")                       \
	X(GATHER, "MPI_Gather")                             \
	X(GATHERV, "MPI_Gatherv")                           \
	X(SCATTER, "MPI_Scatter")                           \
	X(SCATTERV, "MPI_Scatterv")                         \
	X(ALLGATHER, "MPI_Allgather")                       \
	X(ALLGATHERV, "MPI_Allgatherv")                     \
	X(ALLTOALL, "MPI_Alltoall")                         \
	X(ALLTOALLV, "MPI_Alltoallv")                       \
	X(ALLTOALLW, "MPI_Alltoallw")                       \
	X(REDUCE_SCATTER, "MPI_Reduce_scatter")             \
	X(REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block") \
	X(SCAN, "MPI_Scan")                                 \
	X(EXSCAN, "MPI_Exscan")

enum tcmpi_coll {
#define TCMPI__COLL_ENUM(name, mpi) TCMPI_COLL_##name,
	TCMPI_COLL_MAP(TCMPI__COLL_ENUM)
#undef TCMPI__COLL_ENUM
	        TCMPI_COLL_COUNT
};

/* One rank's counters for --report: calls, wall-clock time inside them
 * and the modelled time of the topocoll collectives they made. */
struct tcmpi_stats {
	uint64_t calls[TCMPI_COLL_COUNT];
	double wall_ns[TCMPI_COLL_COUNT];
	double model_ns[TCMPI_COLL_COUNT];
};

/* Shared by every rank of a run. */
struct tcmpi_shared {
	struct tc_team *team;
	atomic_int aborted;    /* set once by the first MPI_Abort or fatal error */
	atomic_int abort_code; /* the exit status that abort asked for */
	int report;            /* non-zero: fill the ranks' stats */
	int fibres;            /* ranks are fibres (sleep yields instead) */
	double wtime_origin;   /* CLOCK_MONOTONIC seconds at the start */
};

struct tcmpi_launch {
	int abi;              /* TCMPI_LAUNCH_ABI */
	struct tc_proc *proc; /* the rank (valid for the call) */
	int argc;
	char **argv; /* this rank's own argv array (argc + 1 entries) */
	struct tcmpi_shared *shared;
	struct tcmpi_stats *stats; /* this rank's, or NULL without --report */
	int finalized;             /* out: the rank called MPI_Finalize */
};

/* The entry point every program built by tcmpicc exports: runs the copy's
 * main() as one rank and returns its exit status (main's return value, the
 * value passed to exit(), or the code of MPI_Abort). */
typedef int (*tcmpi_rank_main_fn)(struct tcmpi_launch *launch);
#define TCMPI_RANK_MAIN "tcmpi_rank_main"

#endif /* TCMPI_LAUNCH_H */
