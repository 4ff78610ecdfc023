/* SPDX-License-Identifier: MIT */
/*
 * topocoll/p2p.h - point-to-point messages between neighbouring ranks:
 * blocking and nonblocking sends and receives, requests, cancelling.
 * Included by <topocoll.h>.
 *
 * Every call is made from the thread of the rank whose proc it takes
 * (topocoll/team.h).  Buffers are borrowed for the call, except those of
 * tc_isend/tc_irecv, borrowed until the request completes.
 */
#ifndef TOPOCOLL_P2P_H
#define TOPOCOLL_P2P_H

#include <stddef.h>
#include <stdint.h>

#include "topocoll/export.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tc_proc;

/* ---------------------------------------------------------------------
 * Point-to-point between neighbours.  Messages between two ranks are
 * delivered in the order they were sent (per directed link, FIFO); there are
 * no tags.  Sizes range over 0..TC_MAX_MESSAGE bytes.
 *
 * Point-to-point and collectives on one link: the two share the link but
 * are matched separately, as MPI's contexts keep them apart.  A
 * point-to-point receive takes only point-to-point messages and a
 * collective only its own, so a receive posted before a collective is
 * matched by the message sent after it, whatever the collective sent in
 * between, and a message that arrives while its receiver is in a
 * collective is kept for its receive (a streamed message is copied aside;
 * a single-copy one stays in the sender's buffer, its send not complete
 * until it is received).  Neither is ever an error of the other (no
 * TC_EMISMATCH from a point-to-point message, with mismatch detection on
 * or off).  As in MPI, a program must not rely on a collective not
 * synchronising: receiving a message that the peer sends only after a
 * collective, before making that collective oneself, may wait forever
 * (until timeout_ms).
 *
 * Errors common to every call: TC_ERANK (peer out of range), TC_ESELF (peer
 * is the caller), TC_ENOTNEIGHBOR (no link to the peer), TC_ENULLBUF (NULL
 * buffer with a non-zero size), TC_EOVERFLOW (size above TC_MAX_MESSAGE),
 * TC_EABORTED, TC_ETIMEDOUT.  On any of these nothing was sent or received.
 */
#define TC_MAX_MESSAGE ((size_t)1 << 48)

/* Request for a nonblocking call: storage owned by the caller, valid and
 * unmoved from tc_isend/tc_irecv until it completes.  Its contents are
 * private to the library, which may change them from one version to the
 * next: the size is fixed (TC_REQUEST_WORDS 64-bit words, with room to
 * spare), so that a program built against one version runs with another
 * of the same SONAME.  Nothing needs initialising before tc_isend/tc_irecv;
 * read the outcome with tc_wait/tc_waitall/tc_test. */
#define TC_REQUEST_WORDS 32
typedef struct tc_request {
	union {
		uint64_t words[TC_REQUEST_WORDS];
		void *align_ptr;
		double align_double;
	} opaque;
} tc_request;

/* Blocking send: returns when buf may be reused (the message is in the
 * channel or, for a single-copy message, copied out by the receiver). */
TC_API int tc_send(struct tc_proc *proc, int dst, const void *buf, size_t bytes);

/* Blocking receive of the next message from src into buf (capacity cap).
 * *received (may be NULL) gets its size.  TC_ETRUNCATE when the message is
 * larger than cap: nothing is written to buf, the message stays queued, and
 * *received gets its size so that a larger buffer can take it. */
TC_API int tc_recv(struct tc_proc *proc, int src, void *buf, size_t cap, size_t *received);

/* Sends to dst and receives from src at once (no deadlock when two ranks
 * exchange, whatever the sizes).  TC_EINVAL when sbuf and rbuf overlap
 * (sbytes and rcap both non-zero): the message received could overwrite
 * the one being sent. */
TC_API int tc_sendrecv(struct tc_proc *proc, int dst, const void *sbuf, size_t sbytes, int src,
                       void *rbuf, size_t rcap, size_t *received);

/* Nonblocking variants: start the transfer and return; complete with
 * tc_wait/tc_waitall/tc_test.  The argument errors above are returned at
 * once (and the request is not started). */
TC_API int tc_isend(struct tc_proc *proc, int dst, const void *buf, size_t bytes, tc_request *req);
TC_API int tc_irecv(struct tc_proc *proc, int src, void *buf, size_t cap, tc_request *req);

/* Waits for one request; returns its status (0, TC_ETRUNCATE, ...).  For a
 * receive, *received (may be NULL) gets the message size. */
TC_API int tc_wait(struct tc_proc *proc, tc_request *req, size_t *received);
/* Waits for n requests; returns 0 or the first non-zero status.  Every
 * request must have been started (a failed tc_isend/tc_irecv does not start
 * it): TC_EINVAL otherwise, before waiting.  On TC_EABORTED or
 * TC_ETIMEDOUT (also tc_wait's) the requests are dead: out of their
 * queues, their buffers no longer touched. */
TC_API int tc_waitall(struct tc_proc *proc, int n, tc_request *reqs);
/* Makes progress; *done = 1 when req has completed (then its status is
 * returned as by tc_wait), and also when the team has been aborted
 * (TC_EABORTED: the request is dead), so that a test loop always ends.
 * With a team timeout (timeout_ms), a request still not done timeout_ms
 * after the first test that found it not done times out as a wait does
 * (*done = 1, TC_ETIMEDOUT, the watchdog's report, the team aborted).  On
 * fibres a test that finds req not done lets the CPU's other ranks run first
 * (tc_yield), so that a polling loop ends. */
TC_API int tc_test(struct tc_proc *proc, tc_request *req, int *done);

/*
 * Cancels a request that has not started (MPI_Cancel): a receive no message
 * has been matched to, or a send none of whose bytes has been taken (a
 * single-copy send, from single_copy_min bytes on, until its receiver
 * claims it: a receive takes it, or the receiver's collective on the link
 * sets it aside; a streamed send until its first packet is in the
 * channel); after an abort, any request.  A cancelled send is never seen
 * by its receiver, not even in part: its next receive gets the next
 * message.  Returns 0 when the request is now complete with
 * status TC_ECANCELED (tc_wait and tc_test return that; nothing was sent or
 * received), and also 0 for a request already complete (left as it is: its
 * wait reports what happened); TC_EPENDING when it is too late (data moved:
 * complete it with tc_wait); TC_EINVAL.  Called from the rank's own thread.
 */
TC_API int tc_cancel(struct tc_proc *proc, tc_request *req);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_P2P_H */
