/* SPDX-License-Identifier: MIT */
/*
 * topocoll/mpi.h - teams whose ranks are the processes of an MPI
 * communicator (libtopocoll-mpi, pkg-config topocoll-mpi; docs/mpi.md).
 *
 * A team over MPI has one rank per process of the communicator, rank i
 * being the communicator's rank i, and the topology, model, mode and
 * timeout of an ordinary team's configuration.  Every collective of
 * topocoll/coll.h works on its proc unchanged: the same registry, the same
 * schedules (so the same results, bit for bit, as a team of threads), the
 * same AUTO (a pure function of the call and the configuration, so every
 * process makes the same choice without talking), the same logical clocks
 * (each message carries its logical arrival time in a header) and the same
 * emulated mode (a receive does not complete before the epoch, agreed at
 * creation, plus its logical completion).  The schedule's rounds run over
 * MPI point-to-point messages on a duplicate of the communicator
 * (lib/mpi/exec.c).
 *
 * Not thread-safe: a team over MPI and its proc belong to the thread that
 * created it, which makes every call on them (MPI_THREAD_FUNNELED is
 * enough).  tc_run and tc_attach must not be called on such a team.
 *
 * libtopocoll-mpi holds the whole library as well as these calls: a program
 * links it (pkg-config topocoll-mpi) instead of libtopocoll, not beside it.
 */
#ifndef TOPOCOLL_MPI_H
#define TOPOCOLL_MPI_H

#include <mpi.h>

#include "topocoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a transfer between processes that are not neighbours in the topology
 * travels. */
enum tc_mpi_route {
	TC_MPI_FORWARD = 0, /* hop by hop: each process on its route receives
	                       it whole and sends it on (store-and-forward), as
	                       the emulation does; contention is real */
	TC_MPI_DIRECT,      /* one MPI message from source to destination; the
	                       model still charges the route's hops */
};

struct tc_mpi_opts {
	enum tc_mpi_route route; /* TC_MPI_FORWARD by default (zeroed struct) */
};

/*
 * Creates a team over the processes of comm; collective over comm (every
 * process calls it with the same configuration).  cfg as for
 * tc_team_create (NULL: the defaults, a complete graph); its p is 0 or
 * the communicator's size, and the topology must have that many nodes
 * ("ring" alone, a family, is sized by it).  tc_run's fields (threads,
 * pinning, stacks, fibres) are ignored; with trace_events, each process
 * records its own rank's events (tc_trace_events of its rank, wall times
 * since the agreed epoch, tc_mpi_epoch_ns).  opts may be NULL.
 * *team is owned by the caller until tc_team_destroy_mpi(); *proc is this
 * process's rank, valid as long as the team.  comm is duplicated (the
 * caller keeps and frees its own) and its error handler on the duplicate
 * is MPI_ERRORS_RETURN.  MPI must be initialised.
 * Errors: those of tc_team_create; TC_EINVAL (NULL argument, MPI not
 * initialised, p or the topology's size is not the communicator's size,
 * the configuration differs between processes; tc_error_detail() says
 * which), TC_ESYS (an MPI call failed).  On error no process keeps a team.
 */
TC_API int tc_team_create_mpi(MPI_Comm comm, const struct tc_team_config *cfg,
                              const struct tc_mpi_opts *opts, struct tc_team **team,
                              struct tc_proc **proc);

/*
 * Frees a team made by tc_team_create_mpi (NULL: nothing): its
 * communicator, buffers and requests.  Local: no process waits for
 * another; messages of a failed call that were never taken are cancelled.
 * Collective requests of this process still running or queued (started
 * by tc_iNAME or tc_start, not completed) are ended as a failed call is:
 * the running call's messages are dropped and the other processes told
 * (their part of it fails with TC_EABORTED, or TC_ETIMEDOUT); those
 * requests, and persistent ones not freed, are released with the team
 * (never wait for them afterwards).  A team whose messages may still be
 * on their way (a call failed or was abandoned, point-to-point requests
 * or messages left) keeps its three communicators until MPI_Finalize, so
 * that they never reach a later team.
 * Never tc_team_destroy() on such a team (its MPI state would leak).
 */
TC_API void tc_team_destroy_mpi(struct tc_team *team);

/*
 * The emulation's epoch of a team made by tc_team_create_mpi: the
 * CLOCK_MONOTONIC time (ns) of logical time 0, agreed at creation (the
 * latest of the processes' clocks after a barrier, plus 1 ms, when they
 * share one host; each process's own otherwise).  0 for NULL.
 */
TC_API uint64_t tc_mpi_epoch_ns(const struct tc_team *team);

/*
 * The MPI messages this process has sent on for routed transfers of
 * collectives that pass through it (TC_MPI_FORWARD), over the team's
 * life: one per transfer under a store-and-forward model, one per packet
 * under a cut-through one (docs/mpi.md).  0 for NULL or a team not made
 * by tc_team_create_mpi.
 */
TC_API uint64_t tc_mpi_forwarded_msgs(const struct tc_team *team);

/*
 * Whether this process was started by an MPI launcher (mpirun, mpiexec,
 * srun: their environment variables), so that MPI_Init would join a job
 * of several processes rather than make one of its own.  Callable before
 * MPI_Init.  1 or 0.
 */
TC_API int tc_mpi_launched(void);

#ifdef __cplusplus
}
#endif

#endif /* TOPOCOLL_MPI_H */
