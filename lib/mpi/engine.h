/* SPDX-License-Identifier: MIT */
/*
 * lib/mpi/engine.h - a team over MPI processes: its state (team->engine)
 * and the executor that runs schedules over MPI messages (lib/mpi/exec.c,
 * its waits lib/mpi/wait.c; the team's creation in lib/mpi/team.c).  Not
 * installed.
 */
#ifndef TC_MPI_ENGINE_H
#define TC_MPI_ENGINE_H

#include <mpi.h>
#include <stdbool.h>
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
/* A packed message whose payload is at most this size is sent with
 * MPI_Send, which leaves no request to test and free: Open MPI and MPICH
 * send a message this small eagerly (their shared-memory eager limits are
 * 4 KiB and more), so MPI_Send returns once it is copied out.  (Only where
 * the receiver has stopped taking messages and MPI's buffers for it are
 * full would it wait, without the team's timeout.) */
enum { TC__MPI_EAGER = 1024 };
/* A forwarded transfer under a cut-through model travels in at most this
 * many packets: a packet carries max(mu, bytes / TC__MPI_PACKETS). */
enum { TC__MPI_PACKETS = 64 };
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
	int forward;       /* TC_MPI_FORWARD */
	size_t packet;     /* cut-through model: a packet's payload (mu), else 0 */
	uint64_t fwd_msgs; /* messages forwarded (a packet each), all calls */
	int probe_ms;      /* idle time between looks for mismatches */
	uint64_t spin_ns;  /* idle time a wait spins before it yields: 0 where
	                     this host's processes outnumber its CPUs */
	char host[64];     /* for the timeout report */
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
	int probe_src, probe_tag;       /* the last probe that found nothing (report) */
	struct tc__mpi *kept_next;      /* kept after its team (lib/mpi/team.c) */
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

/* ---- compiled schedules (lib/mpi/exec.c) and their runs ---------------- */

enum { TC__MIT_SEND = 0, TC__MIT_RECV, TC__MIT_FWD };

/* How a message's data moves: packed behind its header through staging
 * (one contiguous message), or in place (a derived datatype holding the
 * header in staging and the data in its source or destination region). */
enum { TC__MMOVE_PACK = 0, TC__MMOVE_TYPE };

/* One transfer this process takes part in, in one round: what is fixed
 * by the schedule and the buffers (compiled once, struct tc__mplan), then
 * the state of one run. */
struct tc__mitem {
	int kind;
	int xi;
	int from, to;      /* MPI ranks received from / sent to (-1: none) */
	int rq;            /* its first request in the call: requests rq ..
	                       rq + npk - 1 carry its packets (received, or
	                       sent by its source); a forward's sends follow */
	int npk;           /* packets (1: one message) */
	size_t psz;        /* npk > 1: a packet's payload */
	int left;          /* packets still to be received */
	int fwd;           /* a forward: packets sent on (in order) */
	int move;          /* TC__MMOVE_* */
	int eager;         /* an own send of one packed message of at most
	                       TC__MPI_EAGER bytes: MPI_Send, no request */
	int nbr, hops;     /* own sends: the first link, the route's length;
	                       own receives: nbr, the link it arrives on */
	size_t soff;       /* staging: the header, then (packed) the data */
	MPI_Datatype type; /* TC__MMOVE_TYPE: header and data (MPI_BOTTOM) */
	int open;          /* a receive not complete */
	int suspect;       /* a probe saw another call's message from its
	                       sender (tc__mpi_probe) */
	tc_time_t arrival;
};

/* A round of the compiled schedule: items it0 .. it0 + n, requests
 * rq0 .. rq0 + nreq of the call (each request's item at rqi[rq]), the
 * transfers this process applies (ap[2 * (ap0 + k)]: the transfer, and
 * its item or -1 for a local one), in schedule order; nwait receives
 * (own and forwarded) that the round waits for.  Sends are not waited
 * for at the end of their round: their staging is the round's own, and
 * a round that writes a region an earlier send still reads in place
 * first waits for every send (drain), as does the end of the call, and
 * one that writes what its own sends read waits for them (sync). */
struct tc__mround {
	int it0, n, nreq, rq0, ap0, nap, nrecv, nwait, drain;
	int sync; /* writes what its own sends read in place: waits for them */
	int lean; /* eager sends and at most one receive, packed in one
	             message (tc__mpi_lean) */
};

/* A schedule compiled for this process and one set of buffers: its items
 * and datatypes, so that a call repeated with the same buffers builds
 * nothing.  Found again by the schedule's content (a copy), not its
 * address alone: a schedule freed and another built at its address is
 * told apart. */
struct tc__mplan {
	const struct tc__sched *s;
	int nx, nrounds;
	struct tc__xfer *x;
	int *round_at;
	unsigned char *bufs[3];
	unsigned char *stage; /* the staging the datatypes point into */
	uint64_t stamp;
	struct tc__mround *r;
	struct tc__mitem *it;
	int nit;
	int *rqi, *ap;
	int nreq;  /* the call's */
	int nsreq; /* requests of its sends and forwards (not eager) */
	int lean;  /* every round lean */
};

/* A call's run: its number, signature, buffers and compiled schedule
 * (tc__mpi_begin). */
struct tc__mcall {
	uint64_t seq, sig;
	unsigned char *bufs[3];
	struct tc__mplan *pl;
};

/* A posted round (tc__mpi_post), for its end (tc__mpi_finish). */
struct tc__mpost {
	tc_time_t send_done; /* the clock after the round's own sends */
	tc_time_t c0;        /* the clock at its start (trace) */
	uint64_t w0;         /* its wall start (trace) */
};

/* Packet k of item y (transfer of bytes) in its staging: offset and length
 * (packet 0 starts with the header). */
static inline void tc__mpi_packet(const struct tc__mitem *y, uint64_t bytes, int k, size_t *off,
                                  size_t *len)
{
	const size_t h = sizeof(struct tc__mpi_hdr);
	if (y->npk <= 1) {
		*off = 0;
		*len = h + bytes;
		return;
	}
	const size_t a = (size_t)k * y->psz, b = a + y->psz < bytes ? a + y->psz : bytes;
	*off = k ? h + a : 0;
	*len = h + b - *off;
}

/* Sets up a call of s (its number: proc->ncalls, taken when it completes). */
int tc__mpi_begin(struct tc_proc *proc, const struct tc__sched *s, const struct tc__exec_io *io,
                  struct tc__mcall *c);
/* Round r: its own sends' logical arrivals from the clock now, its
 * receives, then its sends posted. */
int tc__mpi_post(struct tc_proc *proc, struct tc__mplan *pl, int r, unsigned char **bufs,
                 uint64_t sig, uint64_t seq, struct tc__mpost *ps);
/* Round r once its receives have completed: the clock (own sends, then
 * the receives in order of arrival), the received and local transfers
 * applied in schedule order, the emulated wait. */
void tc__mpi_finish(struct tc_proc *proc, struct tc__mplan *pl, int r, unsigned char **bufs,
                    const struct tc__exec_io *io, const struct tc__mpost *ps);
/* The tag of transfer xi of call seq (the numbering at the top). */
static inline int tc__mpi_tag(uint64_t seq, int xi)
{
	return 1 + (int)((seq & ((1u << TC__MPI_SEQ_BITS) - 1)) << TC__MPI_XI_BITS) +
	       (xi & ((1 << TC__MPI_XI_BITS) - 1));
}

/* The waits (lib/mpi/wait.c). */
/* Whether a received message (status st, its payload at stage + it->soff)
 * is the one item it expects: want bytes, and with hdr a header of call
 * (sig, seq).  0 or TC_EMISMATCH with the detail set. */
int tc__mpi_check(const struct tc__mitem *it, const MPI_Status *st, const unsigned char *stage,
                  size_t want, int hdr, uint64_t sig, uint64_t seq);
/* Receives among items it[0 .. n) still open; *pending: requests of
 * [lo, hi) not complete. */
int tc__mpi_left(struct tc_proc *proc, const struct tc__mitem *it, int n, int lo, int hi, int *pending);
/* One MPI_Testsome over requests [lo, hi): completed receives checked and
 * taken (forwards sent on), *rleft and *pending counted down (*pending up
 * for a forward's send); *progress: how many completed.  0 or the error. */
int tc__mpi_poll(struct tc_proc *proc, struct tc__mplan *pl, int lo, int hi, uint64_t sig,
                 uint64_t seq, int *rleft, int *pending, int *progress);
/* Polls until items it[0 .. n) have all arrived (and with all set every
 * request of [lo, hi) has completed), with the team's timeout (a report
 * naming round r) and the probe for other calls' messages. */
int tc__mpi_wait(struct tc_proc *proc, struct tc__mplan *pl, struct tc__mitem *it, int n, int lo,
                 int hi, int all, int r, const struct tc__exec_io *io, uint64_t sig, uint64_t seq);
/* An abort from another process, or another call's message from one whose
 * message items it[0 .. n) (of plan pl, call seq) still wait for: a
 * message that is none of the transfers this call still receives from
 * that process.  The error, else 0. */
int tc__mpi_probe(struct tc__mpi *m, const struct tc__mplan *pl, struct tc__mitem *it, int n,
                  uint64_t seq);
/* The timeout report of round r (stderr or the team's watchdog hook). */
void tc__mpi_report(struct tc_proc *proc, const struct tc__mitem *it, int n, int r,
                    const struct tc__exec_io *io, uint64_t waited_ns);
/* A call failed with err: requests [lo, hi) dropped, the team aborted here
 * and every other process told (unless another told us).  Returns err. */
int tc__mpi_fail(struct tc_proc *proc, int lo, int hi, int err);

/* Collective requests (lib/mpi/nbc.c): team->engine_nbc. */
extern const struct tc__engine_nbc tc__mpi_nbc;

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
 * its point-to-point state at destruction (keep: the slots MPI may still
 * read, m->orphans, are kept with m). */
extern const struct tc__p2p_engine tc__mpi_p2p;
void tc__mpi_p2p_free(struct tc__mpi *m, bool keep);

#endif /* TC_MPI_ENGINE_H */
