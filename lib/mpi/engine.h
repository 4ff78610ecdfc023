/* SPDX-License-Identifier: MIT */
/*
 * lib/mpi/engine.h - a team over MPI processes: its state (team->engine)
 * and the executor that runs schedules over MPI messages (lib/mpi/exec.c;
 * the team's creation in lib/mpi/team.c).  Not installed.
 */
#ifndef TC_MPI_ENGINE_H
#define TC_MPI_ENGINE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "sched/exec.h"
#include "topocoll/mpi.h"

/* Tags on the collectives' communicator: TC__MPI_TAG_ABORT carries a
 * failed call's error to every other process; a data tag is
 * 1 + (the call's sequence number mod 16) * 2048 + (transfer index mod
 * 2048), so that a message of another call is told apart by its tag
 * (tc__mpi_probe) while one call's messages between two processes still
 * match in the order both post them. */
enum {
	TC__MPI_TAG_ABORT = 0,
	TC__MPI_SEQ_BITS = 4,
	TC__MPI_XI_BITS = 11,
};
/* Payloads up to this size travel in one message behind their header
 * (packed through staging); larger ones as a header message and a data
 * message straight from the source region (and, where nothing else of
 * the round touches it, straight into the destination). */
enum { TC__MPI_SPLIT = 4096 };

/* What every message of a collective carries before its data. */
struct tc__mpi_hdr {
	int64_t arrival; /* logical arrival of the whole transfer (ps) */
	uint64_t sig;    /* the call's signature */
	uint64_t seq;    /* the call's sequence number */
};

struct tc__mpi {
	MPI_Comm comm; /* collectives' messages (a duplicate) */
	int rank, size;
	int forward;   /* TC_MPI_FORWARD */
	int probe_ms;  /* idle time between looks for mismatches */
	char host[64]; /* for the timeout report */
	/* Grow-only scratch. */
	unsigned char *stage;
	size_t stage_cap;
	unsigned char *tmp;
	size_t tmp_cap;
	MPI_Request *req;
	int *idx;
	size_t req_cap;
	void *items;
	size_t items_cap;
	int *route; /* a route's nodes (diameter + 1) */
	/* Abort messages this process sent (completed or cancelled at
	 * destroy) and the buffer they send. */
	MPI_Request abort_req[64];
	int nabort;
	int told; /* another process's abort was taken */
	int abort_buf;
};

/* team->engine_run of a team over MPI. */
int tc__mpi_run(struct tc_proc *proc, const struct tc__sched *s, const struct tc__exec_io *io);

/* Marks the team aborted here and tells every other process (once). */
void tc__mpi_abort(struct tc_team *team, int code);

#endif /* TC_MPI_ENGINE_H */
