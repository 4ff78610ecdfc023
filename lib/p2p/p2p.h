/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/p2p.h - point-to-point for the layers above (lib/sched, lib/coll)
 * and the progress engine: requests, the eager fast paths, the single-copy
 * abort handshake, and the wait that makes progress (tc__progress_wait,
 * lib/p2p/progress.c).  Not installed.
 *
 * Every call here is made by a proc's own thread on its own proc only
 * (single-threaded per proc); what crosses threads goes through the
 * channels (lib/core/chan.h) and the doorbells (lib/core/wait.h).
 */
#ifndef TC_P2P_P2P_H
#define TC_P2P_P2P_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"

/* Request states. */
enum {
	TC__REQ_IDLE = 0,
	TC__REQ_QUEUED,    /* in its port's queue, nothing moved yet */
	TC__REQ_STREAMING, /* some packets moved */
	TC__REQ_RNDV_WAIT, /* send: descriptor posted, receiver copying */
	TC__REQ_DONE,
};
/* TC__KIND_EXT: a request that a layer above completes (a collective
 * request, lib/sched/nbc.c) from the hooks it installs in the proc
 * (ext_progress, ext_wait, ext_end: lib/core/internal.h).  tc_wait,
 * tc_test and tc_waitall take it like the others; every progress of the
 * proc (tc__progress) runs ext_progress while ext_pending. */
enum { TC__KIND_SEND = 1, TC__KIND_RECV = 2, TC__KIND_EXT = 3 };
/* Packet kinds: what the message belongs to.  A collective's messages have
 * TC__MSG_COLL set: with mismatch detection on (team->check), the rest of
 * the kind is the rank's call sequence number modulo 2^15 (ncalls, equal on
 * every rank of a run while nothing failed), and the first packet carries
 * the call's 64-bit signature (proc->coll_sig: collective, algorithm,
 * root, sizes, datatype, op; aux, or for a single-copy descriptor its 8-byte
 * payload).  A receive of a collective completes with TC_EMISMATCH on a
 * message of another call or signature (left in place); a point-to-point
 * message (TC__MSG_USER) ahead of its own is taken aside for the
 * point-to-point receives, which match only their own kind (lib/p2p/p2p.c). */
enum { TC__MSG_USER = 0, TC__MSG_COLL = 0x8000, TC__MSG_SEQ = 0x7fff };

/*
 * The progress-wait (MPICH's MPID_Progress_wait): waits until cond(proc,
 * ctx) holds, making progress on every pending request of the proc
 * meanwhile, under the team's waiting policy (spin, yield, park: lib/core/
 * wait.h).  cond may post requests (tc__post_*), never wait.  Returns 0,
 * TC_EABORTED or TC_ETIMEDOUT (the team is then aborted); on either error
 * no peer reads our single-copy buffers any more (tc__rndv_quiesce).
 * Called only from the proc's own thread.
 */
typedef bool (*tc__cond_fn)(struct tc_proc *proc, void *ctx);
int tc__progress_wait(struct tc_proc *proc, tc__cond_fn cond, void *ctx);
/* The end of a wait or a polling loop (tc_test) that exceeded the team's
 * timeout: the watchdog's report (with what the rank still waits for), the
 * abort of the team, and the single-copy quiesce; the caller retires its
 * requests and returns TC_ETIMEDOUT. */
void tc__progress_timed_out(struct tc_proc *proc, uint64_t waited_ns);

/*
 * Another engine for a team's point-to-point calls (team->p2p_engine;
 * NULL: the channels): a team over MPI processes installs one
 * (lib/mpi/p2p.c).  lib/p2p still checks the arguments, initialises the
 * request (peer, neighbour index nbr or -1, utag, buffer, size; a send's
 * logical arrival clock, done_at and hops, charged over the route as on the
 * channels) and applies the clock rules and the emulated wait when it
 * completes; the engine moves the data:
 *   isend, irecv  start req: 0, or an error (tc_error_detail() says why)
 *                 with nothing sent or received;
 *   test          progress; true once req is complete: state TC__REQ_DONE,
 *                 status, and for a receive received, st_src, st_tag and
 *                 clock (the message's logical arrival);
 *   wait          as tc__progress_wait (cond calls test);
 *   cancel        tc_cancel of a request not complete;
 *   retire        ends a request that a failed wait leaves (its buffer no
 *                 longer used by the engine);
 *   iprobe        one look for the message a receive from src (a rank or
 *                 TC_ANY_SOURCE) with tag (or TC_ANY_TAG) would take next,
 *                 no posted receive matching it: 1 with *st (sender, tag,
 *                 payload size) and *clock (its logical arrival), the
 *                 message kept for the receive that takes it; 0 when none
 *                 has come; or an error (tc_error_detail() says why).
 * Called from the proc's own thread only.
 */
struct tc__req;
struct tc__p2p_engine {
	int (*isend)(struct tc_proc *proc, struct tc__req *req);
	int (*irecv)(struct tc_proc *proc, struct tc__req *req);
	bool (*test)(struct tc_proc *proc, struct tc__req *req);
	int (*wait)(struct tc_proc *proc, tc__cond_fn cond, void *ctx);
	int (*cancel)(struct tc_proc *proc, struct tc__req *req);
	void (*retire)(struct tc_proc *proc, struct tc__req *req, int status);
	int (*iprobe)(struct tc_proc *proc, int src, int tag, tc_status *st, tc_time_t *clock);
};

/*
 * Raw point-to-point for the layers above (lib/sched): no argument checks, no
 * clock rule (the caller computed the arrival time, and the request is not
 * applied to the clock when it completes); sends go by single copy from
 * tc__coll_single_copy_min() bytes on.  nbr is the neighbour index; tag
 * is carried in the packet header and a receive whose next message has
 * another tag completes with TC_EMISMATCH without consuming it.
 */
void tc__post_send(struct tc_proc *proc, int nbr, const void *buf, size_t bytes, int tag,
                   tc_time_t arrival, tc_request *req);
void tc__post_recv(struct tc_proc *proc, int nbr, void *buf, size_t cap, int tag, tc_request *req);
/* The same, for a message of exactly bytes bytes that the sender sends by
 * single copy (bytes >= the team's single_copy_min): deliver(req, src,
 * bytes) consumes it from the sender's buffer in place of a copy (req's
 * deliver_ctx is ctx).  Any other message completes it with TC_EMISMATCH,
 * left in place.  copy_first: deliver runs user code (a user reduction
 * operator), which may block or call the library: the message is copied to
 * the proc's scratch (slot TC__SLOT_P2P) and the sender's buffer released
 * before deliver runs, so that a failing sender never waits on user code
 * (tc__rndv_quiesce). */
void tc__post_recv_direct(struct tc_proc *proc, int nbr, size_t bytes, int tag,
                          void (*deliver)(tc_request *, const void *, size_t), void *ctx,
                          bool copy_first, tc_request *req);
/* The scratch slot p2p copies user-delivered messages into (lib/sched uses
 * slots 0-4, lib/coll the last two). */
enum { TC__SLOT_P2P = 5 };
/* Messages of the layers above (collectives) from this many bytes on go by
 * single copy: the smaller of the team's threshold and the channel's
 * crossover (TC__CHAN_SINGLE_COPY_MIN, lib/core/chan.h: the same rule as
 * point-to-point), never when the team streams everything. */
enum { TC__COLL_SINGLE_COPY = TC__CHAN_SINGLE_COPY_MIN };
static inline size_t tc__coll_single_copy_min(const struct tc_team *t)
{
	return t->single_copy_min < TC__COLL_SINGLE_COPY || t->single_copy_min == SIZE_MAX
	               ? t->single_copy_min
	               : TC__COLL_SINGLE_COPY;
}

/*
 * Request-free fast paths for messages of one packet.  tc__send_eager pushes
 * the whole message when its port has no queued send, the message fits one
 * packet and is below single_copy_min, and the ring has room; it then counts
 * it as sent and returns true (false: nothing done, use a request).
 * tc__recv_eager takes the next message of the port when no receive of
 * its stream is queued there (point-to-point: and none is taken aside,
 * lib/p2p/p2p.c) and that message is one packet with this tag and at most
 * cap bytes: returns 1; 0 when no message is there yet; -1 when the request path
 * must take it (nothing consumed either way).  No clock rule, no argument
 * checks.
 */
/* Polls of a late message on the eager paths before it becomes a request,
 * for teams whose ranks may poll (tc__eager_polls): every rank has a CPU of
 * its own and a policy that spins.  Otherwise one look. */
enum { TC__EAGER_SPINS = 512 };
static inline int tc__eager_polls(const struct tc_team *t)
{
	return t->p <= t->cpus && t->wait != TC_WAIT_BLOCK && t->wait != TC_WAIT_YIELD ? TC__EAGER_SPINS
	                                                                               : 1;
}
bool tc__send_eager(struct tc_proc *proc, int nbr, const void *buf, size_t bytes, int tag,
                    tc_time_t arrival, size_t single_copy_min);
int tc__recv_eager(struct tc_proc *proc, int nbr, void *buf, size_t cap, int tag, size_t *received,
                   tc_time_t *arrival);

/*
 * Mismatch detection off the expected links: looks at the next message of
 * every incoming link on which the proc has no receive queued.  A message of
 * the running collective call's sequence number with another signature, or
 * one of an earlier call (never taken), belongs to a mismatched call:
 * returns TC_EMISMATCH (nothing consumed).  Messages of later calls (faster
 * peers) and user messages are left alone, as are, unless the call is over
 * (done: then none of its messages may remain), the call's own messages of
 * later rounds.  Called from the executor's waits and at the end of a call,
 * only while proc->coll_tag is set and the team checks.
 */
int tc__coll_scan(struct tc_proc *proc, bool done);
/* How many incoming links one look of tc__coll_scan reads (in turn over a
 * rank's links when it has more), and the degree up to which a waiting
 * collective raises the data hints of every link. */
enum { TC__SCAN_LINKS = 8 };
/* A wait in a collective looks (tc__coll_scan) at its 2nd poll and every
 * TC__SCAN_EVERY-th after: each look reads other cores' lines. */
enum { TC__SCAN_EVERY = 16 };

/* Whether a waiting rank in a collective (mismatch check on) listens on
 * every link: its wait hints raised on all of them, and tc__coll_scan's
 * looks while it waits; only ranks of up to TC__SCAN_LINKS links. */
static inline bool tc__coll_watches_all(const struct tc_proc *proc)
{
	return proc->coll_tag && proc->team->check && proc->deg <= TC__SCAN_LINKS;
}

/* True when req is complete (progress is made by the wait loop). */
bool tc__req_complete(struct tc_proc *proc, tc_request *req);

/*
 * A request started again while active (a program's error): the calls that
 * start one (tc_isend, tc_irecv, the collectives' request forms) refuse it
 * with TC_EPENDING and leave it as it is; overwritten, it would stay linked
 * in the queues that hold it.  tc__req_stamp marks a request a public call
 * has just started on proc with the rank's req_stamp (lib/core/internal.h)
 * and proc.  tc__req_busy says whether req is such a request, still
 * active, of proc or of its rank's root proc: a point-to-point one still in
 * that proc's queues, a collective one not yet completed by a wait or test
 * (in its owned list, struct tc__owned's handle).  Storage is anything
 * (never used for a request, or another object's since): the stamp, the
 * proc, the kind and the state only say where to look, and req is found
 * there by its address, never by what it holds (on a team with another
 * point-to-point engine, whose queues are its own, a point-to-point
 * request is not looked for).  tc__req_busy_error sets the detail of the
 * call named pre name post and returns TC_EPENDING.
 */
static inline uint64_t tc__rank_stamp(struct tc_proc *proc)
{
	return (proc->base ? proc->base : proc)->req_stamp;
}
bool tc__req_busy(struct tc_proc *proc, const tc_request *req);
void tc__req_stamp(struct tc_proc *proc, tc_request *req);
int tc__req_busy_error(const char *pre, const char *name, const char *post);
/* A request started with one proc is completed, started again (tc_start)
 * and freed with that proc only (tc__req_stamp records it): its queues,
 * its hooks and its clock are that proc's, and another proc of the same
 * rank (a sub-team's, its parent's) would drive the wrong ones.
 * tc__req_foreign returns TC_EINVAL with the detail of call when req's
 * proc is not proc, else 0. */
int tc__req_foreign(struct tc_proc *proc, const tc_request *req, const char *call);

/*
 * Abort handshake for single-copy messages.  A receiver reads a sender's
 * buffer only between raising its rndv_reading flag, after which it checks
 * that the team is not aborted (tc__rndv_read_begin), and lowering it once
 * it has set the sender's rndv_done (tc__rndv_read_end).  A sender that
 * leaves the library on an aborted team with single-copy sends still
 * outstanding calls tc__rndv_quiesce(), which waits until no neighbour is
 * inside a buffer; afterwards every receiver sees the abort and no longer
 * reads (store-buffering pair: the receiver's fence against the aborter's,
 * asymmetric where membarrier is available).  So a rank whose collective
 * failed may free its buffers the moment the call returns.
 */
static inline bool tc__rndv_read_begin(struct tc_proc *proc)
{
	/* Relaxed: ordered by the fence below. */
	atomic_store_explicit(&proc->rndv_reading, 1, memory_order_relaxed);
	tc__waker_fence(tc__asym_fence != 0); /* pairs with tc__rndv_quiesce() */
	if (!atomic_load_explicit(&proc->team->aborted, memory_order_relaxed))
		return true;
	atomic_store_explicit(&proc->rndv_reading, 0, memory_order_relaxed);
	return false;
}
static inline void tc__rndv_read_end(struct tc_proc *proc)
{
	/* Release: our reads of the sender's buffer and our store to its
	 * request come before the aborter may see the flag down. */
	atomic_store_explicit(&proc->rndv_reading, 0, memory_order_release);
}
void tc__rndv_quiesce(struct tc_proc *proc);

/* Takes req out of its port's queue (if queued) and completes it with
 * status; a single-copy send a receiver may be reading is first waited for
 * (tc__rndv_quiesce: the team must be aborted then).  Nothing is moved. */
void tc__req_retire(struct tc_proc *proc, tc_request *req, int status);
/* After an abort: forgets every request the proc has queued (their
 * storage may be gone: never touched) once no peer reads its single-copy
 * buffers; the proc then has nothing pending (tc_detach, the reset at a
 * start). */
void tc__proc_drop_requests(struct tc_proc *proc);

/* The watchdog (lib/p2p/watchdog.c): proc's wait of waited_ns timed out; the
 * first such rank of a run writes the report (tc_team_set_watchdog). */
void tc__watchdog_fire(struct tc_proc *proc, uint64_t waited_ns);

/* A mismatch of proc's running collective with peer's call of the same
 * sequence number, which is the same call made in the other form
 * (tc__other_form): tc_error_detail() says so, naming call (NULL: the
 * running call's) and alg, and proc keeps it (form_peer) for the wait of
 * a request that failed so. */
void tc__mismatch_form(struct tc_proc *proc, const char *call, const char *alg, int peer);

/* Progress on every port with pending requests (lib/p2p); none once the
 * team is aborted. */
void tc__progress(struct tc_proc *proc);
/* tc__progress of the other procs of proc's rank listed on root (theirs
 * with collective requests queued, lib/core/internal.h's xq_others). */
void tc__progress_others(struct tc_proc *proc, struct tc_proc *root);
/* On a fibre, in tc_test (lib/p2p/progress.c): tc__test_help progresses
 * the procs of the CPU's other fibres suspended in tc_test, and proc
 * again, as long as any of them moves; true if one did.  tc__test_yield
 * yields to the CPU's other fibres with proc in that list meanwhile.  The
 * calling fibre's own proc only. */
bool tc__test_help(struct tc_proc *proc);
void tc__test_yield(struct tc_proc *proc);
/* Raise the wait hints of every channel the proc is waiting on (lib/p2p);
 * up == false lowers them again. */
void tc__set_hints(struct tc_proc *proc, bool up);

/* A single copy that a peer makes out of our buffer takes at most this many
 * ns per byte: twice the machine's byte rate (TC__MACHINE_TW_NS, 0.15 ns/B,
 * lib/coll/machine.h), as a copy out of another core's cache ran at up to
 * 0.13 ns/B.  A sender keeps spinning that long (lib/p2p/p2p.c). */
#define TC__RNDV_SPIN_NS_PER_BYTE 0.3

#endif /* TC_P2P_P2P_H */
