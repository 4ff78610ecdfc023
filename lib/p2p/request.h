/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/request.h - what a request (tc_request, topocoll/p2p.h) holds.
 * Not installed.
 *
 * The public tc_request is reserved storage of a fixed size
 * (TC_REQUEST_WORDS 64-bit words): a program allocates it, the library
 * keeps a struct tc__req at its start, so that these fields can change
 * without changing the interface.  The static asserts below keep them
 * within the storage.  Only lib/p2p reads and writes the fields; the
 * layers above go through tc__req() for the few they use (lib/sched: the
 * state of a receive, the context of a deliver hook).
 */
#ifndef TC_P2P_REQUEST_H
#define TC_P2P_REQUEST_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "topocoll/p2p.h"

struct tc__req {
	struct tc__req *next;
	const void *sbuf;
	void *rbuf;
	size_t bytes;    /* send: message size; receive: capacity */
	size_t moved;    /* bytes pushed or copied so far */
	size_t received; /* receive: size of the message */
	int64_t clock;   /* arrival time (logical, ps) of the message */
	int64_t done_at; /* send: when the sender's port is done (logical, ps) */
	int hops;        /* links the message crosses */
	int peer;
	int nbr;
	int kind;
	int state;
	int status;
	int clocked;           /* applied to the rank's logical clock */
	int tag;               /* what the message belongs to (user or a collective) */
	int single_copy;       /* send: by single copy rather than streamed */
	int sync;              /* send: synchronous (tc_issend): complete once a receive takes it */
	_Atomic int rndv_done; /* single copy: set by the receiver */
	/* lib/sched receives: takes a single-copy message straight from the
	 * sender's buffer instead of copying it to rbuf (tc__post_recv_direct). */
	void (*deliver)(tc_request *req, const void *src, size_t bytes);
	void *deliver_ctx;
	int copy_first;        /* deliver from a copy, not the sender's buffer */
	uint64_t tested_since; /* tc_test: first poll that found it not done (ns; 0: none) */
	uint64_t rndv_pos;     /* single-copy send: its descriptor's line in the channel */
	/* TC__KIND_EXT: the layer above's operation (lib/sched's collective
	 * request); its completion sets state, status and clocked.  ended:
	 * completed by a wait or test since its last start (state IDLE again,
	 * status its outcome: tc_request_status). */
	void *ext;
	int ended;
	/* Point-to-point matching (lib/p2p/p2p.c). */
	int utag;              /* send: its tag; receive: the tag it takes (or TC_ANY_TAG) */
	int usrc;              /* receive: the source it takes (or TC_ANY_SOURCE) */
	int st_src, st_tag;    /* receive: the matched message's sender and tag */
	int rnbr;              /* receive: the neighbour index of its last link (clock) */
	int far;               /* receive: queued in tc_proc.grq; send: routed (mailbox) */
	uint64_t seq;          /* receive: posting order among the proc's receives */
	struct tc__far *fnode; /* routed rendezvous send: its node */
	/* Started by a public call (tc_isend, tc_irecv, a collective's
	 * request form): the rank's req_stamp then (lib/core/internal.h) and
	 * the proc it was started on, by which a call that would start it
	 * again looks for it among that proc's active requests
	 * (tc__req_busy); 0 for the requests made inside the library.  The
	 * proc (a persistent collective request's: the proc of its
	 * tc_NAME_init) is also the only one that completes it
	 * (tc__req_foreign). */
	uint64_t stamp;
	struct tc_proc *owner;
};

_Static_assert(sizeof(struct tc__req) <= sizeof(tc_request),
               "struct tc__req must fit the reserved storage of tc_request");
_Static_assert(alignof(struct tc__req) <= alignof(tc_request),
               "tc_request must be aligned for struct tc__req");

/* The request kept in a tc_request's storage, and back. */
static inline struct tc__req *tc__req(tc_request *r)
{
	return (struct tc__req *)(void *)r;
}
static inline tc_request *tc__req_handle(struct tc__req *r)
{
	return (tc_request *)(void *)r;
}

#endif /* TC_P2P_REQUEST_H */
