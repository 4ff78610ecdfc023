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
#include "p2p/p2p.h"
#include "p2p/request.h"
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
/* Every transfer is one message: its header, then its data.  Payloads
 * up to this size are packed behind the header through staging; larger
 * ones are sent with a derived datatype that holds the header (in
 * staging) and the data in its source region, and received the same way
 * straight into their destination where nothing else of the round
 * touches it (else into staging). */
enum { TC__MPI_SPLIT = 4096 };
/* Compiled schedules (lib/mpi/exec.c) a team over MPI keeps. */
enum { TC__MPI_PLANS = 8 };
struct tc__mplan;

/* What every message of a collective carries before its data. */
struct tc__mpi_hdr {
	int64_t arrival; /* logical arrival of the whole transfer (ps) */
	uint64_t sig;    /* the call's signature */
	uint64_t seq;    /* the call's sequence number */
};

struct tc__mpi {
	MPI_Comm comm; /* collectives' messages (a duplicate) */
	int rank, size;
	int forward;      /* TC_MPI_FORWARD */
	int probe_ms;     /* idle time between looks for mismatches */
	uint64_t spin_ns; /* idle time a wait spins before it yields: 0 where
	                     this host's processes outnumber its CPUs */
	char host[64];    /* for the timeout report */
	/* Grow-only scratch. */
	unsigned char *stage;
	size_t stage_cap;
	unsigned char *tmp;
	size_t tmp_cap;
	MPI_Request *req;
	int *idx;
	size_t req_cap;
	struct tc__mplan *plans[TC__MPI_PLANS];
	uint64_t plan_stamp;
	int *route; /* a route's nodes (diameter + 1) */
	/* Abort messages this process sent (completed or cancelled at
	 * destroy) and the buffer they send. */
	MPI_Request abort_req[64];
	int nabort;
	int told; /* another process's abort was taken */
	int sent; /* this process's abort was sent */
	int abort_buf;
	/* Point-to-point (lib/mpi/p2p.c): headers (and packed messages) on
	 * pcomm under the caller's tag, split messages' data on dcomm under
	 * the sender's count of its split messages to that process (dseq). */
	MPI_Comm pcomm, dcomm;
	int tag_ub;                     /* pcomm's MPI_TAG_UB */
	uint32_t *dseq;                 /* per destination */
	struct tc__mpi_p2p *free_slots; /* a request's MPI side, reused */
	struct tc__mpi_p2p *live;       /* slots of requests not complete */
	struct tc__mpi_p2p *held;       /* messages a receive left (truncated), in order */
	struct tc__mpi_p2p *orphans;    /* slots of retired requests MPI may still use */
};

/* A point-to-point message's header, before its data (packed) or alone
 * (split: the data follows on dcomm). */
struct tc__mpi_p2p_hdr {
	int64_t arrival; /* logical arrival (ps) */
	uint64_t bytes;
	uint32_t dseq; /* split: the data message's tag on dcomm */
	uint32_t split;
};
/* Point-to-point messages up to this size travel packed behind their
 * header: every receive's staging holds a header and this much, so that
 * no message is ever longer than the MPI receive posted for it. */
enum { TC__MPI_P2P_PACK = 1024 };

/* One point-to-point request's MPI side (req->ext), or a message a
 * receive left (held). */
struct tc__mpi_p2p {
	struct tc__mpi_p2p *next, *prev;
	struct tc__req *req;
	MPI_Request hq, dq; /* header (or packed) message, data message */
	int phase;          /* receive: 0 header awaited, 1 data awaited */
	int src, tag;       /* held: the message's sender and tag */
	struct tc__mpi_p2p_hdr h;
	unsigned char stage[sizeof(struct tc__mpi_p2p_hdr) + TC__MPI_P2P_PACK];
};

/* team->engine_run of a team over MPI. */
int tc__mpi_run(struct tc_proc *proc, const struct tc__sched *s, const struct tc__exec_io *io);

/* Releases the compiled schedules (their datatypes): before the
 * communicator goes. */
void tc__mpi_exec_free(struct tc__mpi *m);

/* Marks the team aborted here and tells every other process (once). */
void tc__mpi_abort(struct tc_team *team, int code);

/* An abort another process sent, if one has come: its code (taken, m->told
 * set, the detail says who), else 0. */
int tc__mpi_take_abort(struct tc__mpi *m);

/* The events of a round (lib/mpi/trace.c), when the team records them
 * (proc->ev): a send or forward of transfer xi (peer: the process it went
 * to; arrival: the whole transfer's at its destination), a receive complete
 * at fin, then the combines from the clock after the receives (from) and
 * the round's wait from c0; w0, w1: the round's wall interval.  xs and
 * round_at: the call's transfers and rounds, as the schedule has them. */
void tc__mpi_trace_out(struct tc_proc *proc, const struct tc__xfer *xs, int r, int xi, int peer,
                       tc_time_t arrival, uint64_t w0, uint64_t w1);
void tc__mpi_trace_recv(struct tc_proc *proc, const struct tc__xfer *xs, int r, int xi,
                        tc_time_t fin, uint64_t w0, uint64_t w1);
void tc__mpi_trace_end(struct tc_proc *proc, const struct tc__xfer *xs, const int *round_at, int r,
                       tc_time_t c0, tc_time_t from, uint64_t w0, uint64_t w1);

/* team->p2p_engine of a team over MPI (lib/mpi/p2p.c), and the release of
 * its point-to-point state at destruction. */
extern const struct tc__p2p_engine tc__mpi_p2p;
void tc__mpi_p2p_free(struct tc__mpi *m);

#endif /* TC_MPI_ENGINE_H */
