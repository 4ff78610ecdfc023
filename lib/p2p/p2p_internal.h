/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/p2p_internal.h - what the files of point-to-point messaging
 * share: the channels' paths (lib/p2p/p2p.c), the posting of requests and
 * the blocking calls (post.c), routed messages (far.c), the end of a
 * request (wait.c) and probing (probe.c).  Not installed.
 *
 * Every call here is made by a proc's own thread on its own proc only, as
 * those of lib/p2p/p2p.h.
 */
#ifndef TC_P2P_P2P_INTERNAL_H
#define TC_P2P_P2P_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/p2p.h"
#include "p2p/request.h"

/* Which stream a packet kind or a request's tag belongs to. */
static inline bool tc__coll_kind(unsigned kind)
{
	return (kind & TC__MSG_COLL) != 0;
}

/* The claim word of a point-to-point single-copy descriptor at line pos
 * of ch: its payload, at body offset TC__HDR of the first line (line offset
 * 40, 8-byte aligned).  Written by the producer's push (published with the
 * line), then only by compare-and-swap: the receiver's OPEN -> TAKEN
 * (tc__claim) against the sender's OPEN -> CANCELLED (tc_cancel).  Relaxed:
 * the two decide on one word, and neither reads anything the other
 * publishes through it (the buffer was published by the descriptor's
 * push, its release by rndv_done). */
enum { TC__CLAIM_OPEN = 0, TC__CLAIM_TAKEN = 1, TC__CLAIM_CANCELLED = 2 };
static inline _Atomic uint64_t *tc__claim_word(const struct tc__chan *ch, uint64_t pos)
{
	return (_Atomic uint64_t *)(void *)(ch->ring[pos & ch->mask].body + TC__HDR);
}

/* The consumer of ch freed space in it: rings its producer if it waits. */
static inline void tc__space_freed(struct tc_team *t, struct tc__chan *ch)
{
	if (t->may_block)
		tc__notify(&ch->want_space, ch->prod_db, t->asym_fence);
}

/* A send is complete: counted in the proc's statistics. */
static inline void tc__send_done(struct tc_proc *proc, struct tc__req *req)
{
	req->state = TC__REQ_DONE;
	proc->stats.msgs_sent++;
	proc->stats.bytes_sent += req->bytes;
}

/* A receive is complete: counted in the proc's statistics. */
static inline void tc__recv_done(struct tc_proc *proc, struct tc__req *req)
{
	req->state = TC__REQ_DONE;
	proc->stats.msgs_recv++;
	proc->stats.bytes_recv += req->received;
}

/* Whether a message taken aside still has packets in the channel. */
static inline bool tc__aside_partial(const struct tc__aside *a)
{
	return !a->sreq && a->have < a->total;
}

/* A completed send's effect on the clock: the sender's port is done at
 * done_at. */
static inline void tc__clock_sent(struct tc_proc *proc, tc_time_t done_at, int hops, size_t bytes)
{
	proc->clock = tc__max_time(proc->clock, done_at);
	proc->stats.hops += (uint64_t)hops;
	proc->stats.busy_ps = tc__sat_add(proc->stats.busy_ps, tc__link_time(&proc->team->mps, bytes));
}

/* A completed receive's: the receive rule on neighbour nbr's port. */
static inline void tc__clock_received(struct tc_proc *proc, int nbr, tc_time_t arrival, size_t bytes)
{
	struct tc__mps *q = &proc->team->mps;
	proc->stats.busy_ps = tc__sat_add(proc->stats.busy_ps, tc__link_time(q, bytes));
	tc_time_t done = tc__clock_recv(q, arrival, &proc->res_free[tc__res_recv(q, nbr)], bytes);
	proc->clock = tc__max_time(proc->clock, done);
}

/* lib/p2p/p2p.c: the channels' paths. */

/* Takes a single-copy send off its port's list of descriptors out. */
void tc__rs_unlink(struct tc_proc *proc, struct tc__req *req);
/* Copies what has come of the partial message aside at the port's tail;
 * true when it is whole. */
bool tc__aside_fill(struct tc__port *port, bool *freed);
/* Takes the point-to-point message at the head of the port's channel
 * aside: 1 whole, 0 more packets to come, TC_ENOMEM. */
int tc__aside_take(struct tc__port *port, const struct tc__pkt_hdr *h, bool *freed);
/* The receive req takes the message a set aside on its port; true when a
 * stays aside (TC_ETRUNCATE). */
bool tc__recv_aside(struct tc_proc *proc, struct tc__port *port, struct tc__req *req,
                    struct tc__aside *a, struct tc__aside *prev);
/* The earliest posted receive that takes a message from src with tag tag
 * (port NULL: a routed message's); *in_grq says where it is queued. */
struct tc__req *tc__earliest(struct tc_proc *proc, struct tc__port *port, int src, int tag, bool *in_grq);
/* Takes a matched receive out of its queue (grq or its port's). */
void tc__urecv_unlink(struct tc_proc *proc, struct tc__port *port, struct tc__req *r, bool in_grq);
/* tc__req_retire (lib/p2p/p2p.h) of the request itself. */
void tc__retire(struct tc_proc *proc, struct tc__req *req, int status);
/* Whether req is in one of proc's queues of point-to-point requests (a
 * port's sends, receives and single-copy sends out, the receives from
 * non-neighbours or any source, the routed single-copy sends out): found
 * by its address, nothing of it read. */
bool tc__req_queued(const struct tc_proc *proc, const struct tc__req *req);
/* Checks a call's arguments; *nbr: the peer's neighbour index, or -1. */
int tc__check_call(const struct tc_proc *proc, int peer, bool recv, int tag, const void *buf,
                   size_t bytes, int *nbr);
/* Sets req up for a send or a receive (state TC__REQ_QUEUED). */
void tc__req_init(struct tc_proc *proc, struct tc__req *req, int kind, int peer, int nbr, size_t bytes);

/* lib/p2p/far.c: routed messages and messages to oneself. */

/* The neighbour index of the last link of the route from src to the proc. */
int tc__last_link(const struct tc_proc *proc, int src);
/* The sender's side of the routed rendezvous node n is done with it. */
void tc__far_sent_drop(struct tc_proc *proc, struct tc__far *n);
/* The receive r takes the routed message n: 1 n stays (TC_ETRUNCATE), 0
 * taken, -1 cancelled by its sender (r still queued). */
int tc__recv_far(struct tc_proc *proc, struct tc__req *r, struct tc__far *n);
/* Takes the mailbox and matches its messages to the receives of grq; true
 * when a receive completed. */
bool tc__pull_far(struct tc_proc *proc);
/* A send to a rank that is not a neighbour, onto its mailbox (sync: by the
 * receiver's copy out of buf whatever its size, tc_issend_tag). */
int tc__isend_far(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes, bool sync,
                  struct tc__req *req);
/* lib/p2p/p2p.c: the channels' paths, which lib/p2p/post.c starts. */

/* Puts port on proc's list of ports with requests queued. */
static inline void tc__activate(struct tc_proc *proc, struct tc__port *port)
{
	if (!port->active) {
		port->active = 1;
		proc->active[proc->nactive++] = (int)(port - proc->ports);
	}
}

/* Lists a single-copy send whose descriptor went out on its port (p2p.c,
 * tc__rs_unlink). */
static inline void tc__rs_link(struct tc__port *port, struct tc__req *req)
{
	req->next = port->rs_head;
	port->rs_head = req;
}

/* Rings the consumer of ch when it may be parked on it: data went in. */
static inline void tc__data_published(struct tc_team *t, struct tc__chan *ch)
{
	if (t->may_block)
		tc__notify(&ch->want_data, ch->cons_db, t->asym_fence);
}

/* The tag of a point-to-point message whose first packet (h) is at the
 * consumer's position in ch: after the claim word of a single-copy
 * descriptor, in aux otherwise. */
static inline int tc__pkt_utag(const struct tc__chan *ch, const struct tc__pkt_hdr *h)
{
	uint64_t tag = h->aux;
	if (h->flags & TC__PKT_RNDV) {
		tag = 0;
		if (h->len >= 2 * sizeof tag)
			tc__chan_copy_out(ch, sizeof tag, &tag, sizeof tag);
	}
	return (int)(unsigned)tag;
}

/* Pushes what fits of the send req at the head of its port; true when it
 * no longer needs the channel. */
bool tc__push_send(struct tc_proc *proc, struct tc__port *port, struct tc__req *req);
/* Pulls what has arrived for the collective receive req at the head of
 * its port; true when it is complete. */
bool tc__pull_recv(struct tc_proc *proc, struct tc__port *port, struct tc__req *req);
/* Hands the point-to-point messages at the head of port's channel to the
 * receives that match them; true on progress. */
bool tc__pull_user(struct tc_proc *proc, struct tc__port *port);
/* Progress of the receives from non-neighbours and from any source. */
void tc__progress_any(struct tc_proc *proc);

/* A send to oneself: complete at once; sync (tc_issend_tag): once one of
 * the proc's receives takes it. */
int tc__isend_self(struct tc_proc *proc, int tag, const void *buf, size_t bytes, bool sync,
                   struct tc__req *req);

/* lib/p2p/wait.c: the end of a request. */

/* Retires the requests of a wait that an abort or a timeout ended;
 * returns err. */
int tc__wait_failed(struct tc_proc *proc, int n, tc_request *reqs, int err);
/* Names the wait about to start for the watchdog (not a collective's). */
void tc__wait_named(struct tc_proc *proc, const char *call);
/* tc_wait, naming the call for the watchdog. */
int tc__wait_as(struct tc_proc *proc, struct tc__req *req, size_t *received, const char *call);
/* tc_request_status without touching the calling thread's error detail
 * (which a failed wait before it may have set). */
int tc__req_status(const tc_request *handle, tc_status *st);
/* tc_waitall, naming the call for the watchdog. */
int tc__waitall_as(struct tc_proc *proc, int n, tc_request *reqs, const char *call);

/* lib/p2p/probe.c: probing. */

/* The receive req takes the message the last probe found if it asks for
 * it; true when it did. */
bool tc__take_probed(struct tc_proc *proc, struct tc__req *req);

#endif /* TC_P2P_P2P_INTERNAL_H */
