/* SPDX-License-Identifier: MIT */
/*
 * topocoll/p2p.h - point-to-point messages between any two ranks, with
 * tags: blocking and nonblocking sends and receives, probes, requests,
 * cancelling.
 * Included by <topocoll.h>.
 *
 * Every call is made from the thread of the rank whose proc it takes
 * (topocoll/team.h).  Buffers are borrowed for the call, except those of
 * tc_isend/tc_issend/tc_irecv, borrowed until the request completes.
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
 * Point-to-point between any two ranks.  Sizes range over 0..TC_MAX_MESSAGE
 * bytes.
 *
 * Tags and order (MPI's matching rules): a message carries its sender's
 * rank and a tag (0..TC_TAG_MAX; tc_send and tc_isend send tag 0); a receive
 * names a source rank or TC_ANY_SOURCE and a tag or TC_ANY_TAG (tc_recv and
 * tc_irecv take any tag).  A message goes to the earliest posted receive it
 * matches, and messages from one sender to one receiver are matched in the
 * order they were sent (non-overtaking): a receive takes the first message
 * from its source that has its tag, the others staying queued for later
 * receives.  Nothing is promised between messages of different senders.
 *
 * Routes: a message to a neighbour travels over the link's channel; one to
 * a rank that is not a neighbour travels along the topology's route
 * (tc_topo_route) as the model says, and is charged as such: its arrival
 * time is the send time plus T(m, l) over the route's l links (store-and-
 * forward or cut-through, docs/design.md), the sender's port is that of
 * the route's first link and the receiver's that of its last, in the
 * logical clock and in emulated time alike.  The ranks on the route do no
 * work for it and need not be in the library: its bytes go once from the
 * sender's buffer or a copy of it to the receiver (below the team's
 * single_copy_min a copy, and the send completes at once; from it on, the
 * receiver copies straight out of the sender's buffer, and the send
 * completes when it has).  So a correct program never waits on a rank
 * that is only on a route, and a rank blocked in a receive holds nobody
 * else's messages up.  As in MPI, a send of single_copy_min bytes or more
 * may wait for its receive to be posted: two ranks that each send such a
 * message to the other before receiving wait for each other (until
 * timeout_ms); use tc_sendrecv or nonblocking calls.
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
 * Speed: a message without a tag between neighbours, with no receive
 * from any source queued, takes the channel's fast paths; tags, wildcards
 * and routes cost a look at the queues, and a message that arrives before
 * a receive that matches it is kept aside (a streamed one copied).
 *
 * Messages to oneself (peer is the caller, as MPI allows): delivered
 * through the rank's own queue of messages, matched with tags, wildcards
 * and probes like any other, in the order sent.  Such a send copies the
 * message whatever its size and is complete at once, so a blocking send
 * to oneself never waits for its receive (MPI's standard mode may buffer;
 * here it always does; TC_ENOMEM when the copy finds no memory).  No link
 * is crossed and the model charges nothing: the message arrives at the
 * sender's logical clock.  A blocking receive from oneself with no such
 * message sent waits, as in MPI, until timeout_ms.  On a team over MPI
 * processes (topocoll/mpi.h) the MPI library delivers them, and a send
 * buffers as that library's standard mode does.
 *
 * Errors common to every call: TC_ERANK (peer out of range, or
 * TC_ANY_SOURCE given to a send), TC_EINVAL
 * (a tag below 0 other than TC_ANY_TAG on a receive, or any tag below 0 on
 * a send: tc_error_detail() names it), TC_ENULLBUF (NULL buffer with a
 * non-zero size), TC_EOVERFLOW (size above TC_MAX_MESSAGE), TC_ENOMEM (no
 * memory for a routed message's copy), TC_EABORTED, TC_ETIMEDOUT.  On any
 * of these nothing was sent or received.
 */
#define TC_ANY_SOURCE (-2)
#define TC_ANY_TAG (-1)
#define TC_TAG_MAX 0x7fffffff
#define TC_MAX_MESSAGE ((size_t)1 << 48)

/* Request for a nonblocking call: storage owned by the caller, valid and
 * unmoved from tc_isend/tc_irecv until it completes.  Its contents are
 * private to the library, which may change them from one version to the
 * next: the size is fixed (TC_REQUEST_WORDS 64-bit words, with room to
 * spare), so that a program built against one version runs with another
 * of the same SONAME.  Nothing needs initialising before tc_isend/tc_irecv;
 * read the outcome with tc_wait/tc_waitall/tc_test.  A request still
 * active (started and not complete; a collective one until a wait or test
 * completes it) is not started again: tc_isend, tc_irecv and the
 * collectives' request forms (topocoll/coll.h) return TC_EPENDING with
 * tc_error_detail() saying so, and leave it as it was.  A request belongs
 * to the proc that started it (a persistent collective one to the proc of
 * its tc_NAME_init): tc_wait, tc_waitall, tc_test, tc_cancel, tc_start and
 * tc_request_free take that proc; given any other, even the same rank's on
 * another team (a sub-team's, its parent's), they return TC_EINVAL with
 * tc_error_detail() saying so, and leave the request as it was. */
#define TC_REQUEST_WORDS 32
typedef struct tc_request {
	union {
		uint64_t words[TC_REQUEST_WORDS];
		void *align_ptr;
		double align_double;
	} opaque;
} tc_request;

/* What a completed receive got (MPI_Status): the sender, the tag, the size,
 * and the request's status (0, TC_ETRUNCATE, ...).  For a send: the
 * destination, the tag sent and the size. */
typedef struct tc_status {
	int source;
	int tag;
	int error;
	int reserved_int;
	size_t bytes;
	uint64_t reserved[2];
} tc_status;

/* Blocking send of tag 0: returns when buf may be reused (the message is in
 * the channel or a copy, or, for a single-copy message, copied out by the
 * receiver). */
TC_API int tc_send(struct tc_proc *proc, int dst, const void *buf, size_t bytes);
/* The same with a tag (0..TC_TAG_MAX). */
TC_API int tc_send_tag(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes);

/* Blocking receive of the next message from src (a rank or TC_ANY_SOURCE),
 * whatever its tag, into buf (capacity cap).  *received (may be NULL) gets
 * its size.  TC_ETRUNCATE when the message is larger than cap (MPI's
 * MPI_ERR_TRUNCATE): nothing is written to buf, the message stays queued,
 * and *received gets its size so that a larger buffer can take it. */
TC_API int tc_recv(struct tc_proc *proc, int src, void *buf, size_t cap, size_t *received);
/* Blocking receive of the first message from src (a rank or TC_ANY_SOURCE)
 * with tag tag (0..TC_TAG_MAX or TC_ANY_TAG).  *st (may be NULL) gets the
 * sender, the tag and the size (also on TC_ETRUNCATE, as above). */
TC_API int tc_recv_tag(struct tc_proc *proc, int src, int tag, void *buf, size_t cap, tc_status *st);

/* Blocking probe (MPI_Probe): waits until a message from src (a rank or
 * TC_ANY_SOURCE) with tag tag (0..TC_TAG_MAX or TC_ANY_TAG) can be
 * received, and returns without receiving it; *st (may be NULL) gets its
 * sender, tag and size (error 0), so that a buffer can be sized for it.
 * The message is the one tc_recv_tag with the same src and tag would take
 * next (the first of its sender, in order, that no receive already posted
 * matches), and the next receive the rank posts takes exactly it when that
 * receive asks for the probe's source or st->source and the probe's tag or
 * st->tag, even from TC_ANY_SOURCE when another sender's message arrives
 * in between.  Only a receive takes a message: probing twice finds the
 * same one.  While it waits it makes progress as a blocking receive does
 * (routed messages through this rank keep moving; on fibres the CPU's
 * other ranks run); it does not advance the logical clock (the receive
 * does).  A message behind a collective's on its link is found once the
 * rank's own collective has taken that one (as a receive would take it).
 * Errors: those of tc_recv_tag's arguments (buffer and size aside);
 * TC_ETIMEDOUT when nothing matches within the team's timeout_ms (the
 * watchdog's report; the team is aborted), TC_EABORTED, TC_ENOMEM (no
 * memory to set a message aside to look behind it). */
TC_API int tc_probe(struct tc_proc *proc, int src, int tag, tc_status *st);
/* Nonblocking probe (MPI_Iprobe): *flag = 1 and *st (may be NULL) filled
 * in as tc_probe's when such a message can be received now, else *flag = 0
 * (also on error).  Makes progress once; on fibres a probe that finds
 * nothing lets the CPU's other ranks run (tc_yield), so that a polling
 * loop ends.  In emulated mode a message is found only once its modelled
 * arrival has passed.  No timeout of its own (a polling loop is the
 * program's).  Errors as tc_probe's, and TC_EINVAL for a NULL flag. */
TC_API int tc_iprobe(struct tc_proc *proc, int src, int tag, int *flag, tc_status *st);

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
TC_API int tc_isend_tag(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes,
                        tc_request *req);
TC_API int tc_irecv_tag(struct tc_proc *proc, int src, int tag, void *buf, size_t cap, tc_request *req);

/*
 * Synchronous mode (MPI_Ssend, MPI_Issend): a send that completes only once
 * a receive has taken its message, so that a completed tc_ssend means that
 * its receiver has reached the matching receive and started to take the
 * message (the receive copies it straight out of buf: buf is borrowed until
 * then).  Whatever the size, 0 bytes included, the message goes by the path
 * on which the receiver copies out of the sender's buffer: a single-copy
 * descriptor to a neighbour, a rendezvous node (Routes, above) to any other
 * rank.  A probe does not take it, nor does a receive too small for it
 * (TC_ETRUNCATE: the message stays for a larger one); a collective of the
 * receiver that sets it aside on their link does not complete it either.
 * Matching and order are a standard send's: messages of one sender and
 * tag, synchronous or not, are received in the order sent.  The logical
 * clock and the modelled times are a standard send's of the same size and
 * route (the wait for the receive is not charged).  tc_cancel cancels a
 * synchronous send no receive has claimed, as a single-copy send.
 *
 * Blocking (tc_ssend, tc_ssend_tag): returns once a receive has taken the
 * message; a program in which the receiver posts that receive only after
 * the sender's next call waits forever (until timeout_ms), as in MPI.
 * To oneself it could complete only by a receive of the caller, which is
 * waiting in the call: TC_EINVAL at once, nothing sent, tc_error_detail()
 * naming the deadlock.  Nonblocking (tc_issend, tc_issend_tag): buf and the
 * request are borrowed until the request completes; to oneself the message
 * joins the rank's own queue (Messages to oneself, above) uncopied, and the
 * request completes when one of the rank's own receives takes it.  On a
 * team over MPI processes (topocoll/mpi.h) the data go by MPI_Issend once a
 * receive has taken the message's header, so the same holds; there
 * tc_cancel of a send returns TC_EPENDING (only a receive can be cancelled
 * there).
 *
 * Errors: those of tc_send_tag and tc_isend_tag (NULL request: TC_EINVAL;
 * an active one: TC_EPENDING), and TC_EINVAL for tc_ssend to oneself.
 */
TC_API int tc_ssend(struct tc_proc *proc, int dst, const void *buf, size_t bytes);
TC_API int tc_ssend_tag(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes);
TC_API int tc_issend(struct tc_proc *proc, int dst, const void *buf, size_t bytes, tc_request *req);
TC_API int tc_issend_tag(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes,
                         tc_request *req);

/* The status of a completed request (after tc_wait, tc_waitall or a
 * tc_test that said done, until the request is started again): 0 with *st
 * filled in; TC_EPENDING when the request has not completed; TC_EINVAL for
 * a request never started, or NULL.  For a collective request *st holds the
 * outcome alone (error; source TC_ANY_SOURCE, tag TC_ANY_TAG, bytes 0: MPI's
 * empty status), also after the wait or test that made it inactive.  Reads
 * the request only. */
TC_API int tc_request_status(const tc_request *req, tc_status *st);

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
