/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/p2p.c - point-to-point messages between neighbours: the
 * channels' paths (a message's packets pushed and pulled, the messages set
 * aside, the progress of the requests queued on the ports).  The other
 * files of lib/p2p: post.c (the posting of requests and the blocking
 * calls), far.c (routed messages, to ranks that are not neighbours, and
 * messages to oneself), wait.c (tc_wait, tc_waitall, tc_test, tc_cancel:
 * how a request ends), probe.c (tc_probe, tc_iprobe), progress.c (the
 * progress-wait) and watchdog.c; p2p_internal.h is what the first five
 * share.
 *
 * A message travels over the channel of its directed link as one or more
 * packets of at most mu payload bytes (the first carries the total size), or,
 * from single_copy_min bytes on, as one descriptor packet: the receiver copies
 * the payload straight out of the sender's buffer and then sets the sender's
 * request's rndv_done, so a blocking send returns only once its buffer is
 * free again.
 *
 * Every proc keeps, per neighbour (port), a FIFO of pending sends and one of
 * pending receives; a request is started at once when its queue is empty and
 * otherwise finishes in order.  Any wait of the proc progresses every pending
 * request of the proc, so exchanges never deadlock on full rings.
 *
 * Two streams share each channel, matched separately (as MPI's contexts
 * do): point-to-point messages (kind TC__MSG_USER) go to the port's
 * point-to-point receives (urq), a collective's to its collective receives
 * (rq).  The message at the channel's head goes to the first receive of its
 * own stream; a collective receive that finds a point-to-point message
 * ahead of its own takes it aside (struct tc__aside: a streamed message is
 * copied, a single-copy descriptor kept), and the next point-to-point
 * receive of the port takes the messages set aside, in order, before the
 * channel's.  A point-to-point receive never passes a collective message:
 * the rank's own collective call takes it (a program that receives a
 * message its peer sends only after a collective both make, before making
 * that collective itself, relies on the collective not synchronising,
 * as MPI calls erroneous).
 *
 * A point-to-point single-copy descriptor carries a claim word (its 8-byte
 * payload): the receiver claims it before it reads the sender's buffer or
 * takes the descriptor aside, and tc_cancel (lib/p2p/wait.c) cancels a
 * descriptor nobody has claimed (one compare-and-swap each, on the word in
 * the channel's line), so a receiver never reads a cancelled send and
 * skips its descriptor.
 *
 * Tags (MPI's matching, topocoll/p2p.h): a point-to-point message carries
 * its tag (a streamed one in its first packet's aux, a single-copy
 * descriptor after its claim word).  A message goes to the earliest posted
 * receive that matches it (tc__earliest: the port's receives, and while
 * receives from any source are queued, the proc's grq); one that matches
 * none while a receive of the port waits is taken aside like those a
 * collective passes, so that the messages behind it are reached in order.
 * The head receive of the port whose message is at the channel's head
 * takes it straight from the channel (tc__pull_user).
 *
 * Routed messages: a message to a rank that is not a neighbour travels
 * through the receiver's mailbox (lib/p2p/far.c).  Receives from a
 * non-neighbour or from any source wait in the proc's grq.
 *
 * Another engine: a team whose ranks are not threads of this process (a
 * team over MPI processes) has a p2p_engine (lib/p2p/p2p.h) that moves its
 * messages; the arguments (here), the clock rules and the emulated waits
 * (lib/p2p/wait.c) stay in lib/p2p, and none of the channels' paths is
 * taken.
 *
 * Fast paths: a message of one packet on a link with nothing queued needs no
 * request at all (tc__send_eager, tc__recv_eager: blocking tc_send/tc_recv
 * and the executor's small rounds), and the executor's "direct" receives
 * combine a single-copy message straight out of the sender's buffer (the
 * request's deliver hook) instead of copying it.
 */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/p2p.h"
#include "p2p/p2p_internal.h"
#include "p2p/request.h"
#include "base/error_detail.h"
#include "topo/charge.h"

/* A single-copy send whose descriptor went out (state TC__REQ_RNDV_WAIT,
 * out of its send queue): listed on its port until it is seen complete or
 * retired, so that the mismatch probe (lib/p2p/progress.c) knows which
 * neighbours the proc waits on to take a message. */
void tc__rs_unlink(struct tc_proc *proc, struct tc__req *req)
{
	if (req->nbr < 0)
		return; /* a routed send: never listed */
	struct tc__port *port = &proc->ports[req->nbr];
	for (struct tc__req **pp = &port->rs_head; *pp; pp = &(*pp)->next)
		if (*pp == req) {
			*pp = req->next;
			req->next = NULL;
			return;
		}
}

/* Takes an emptied port off the active list (i: its position there) and
 * lowers the wait hints a park raised for its queues: left raised, they
 * would have the peer ring our doorbell for nothing (spurious wake-ups).
 * Not the data hint that a wait beside them raised on the same link (a
 * probe of that neighbour, a receive from any source, a collective that
 * watches every link: tc__set_hints()): the port empties in the progress
 * that a park makes after raising its hints, its own last send pushed
 * out, and with that hint lowered the wait would sleep through the
 * message it waits for (a tc_probe of the neighbour just sent a long
 * message slept until the team's timeout, or for ever without one).
 * tc__set_hints(proc, false) lowers that hint after the park. */
static void tc__deactivate_at(struct tc_proc *proc, struct tc__port *port, int i)
{
	port->active = 0;
	proc->active[i] = proc->active[--proc->nactive];
	if (port->hinted) {
		/* Relaxed: a stale raised hint costs one spurious ring only. */
		atomic_store_explicit(&port->out->want_space, 0, memory_order_relaxed);
		const bool watched = proc->any_hinted || tc__coll_watches_all(proc) ||
		                     proc->probe_wait == (int)(port - proc->ports) + 1;
		if (!watched)
			atomic_store_explicit(&port->in->want_data, 0, memory_order_relaxed);
		port->hinted = 0;
	}
}

/* Consumer: whether the point-to-point descriptor at the channel's head
 * was cancelled by its sender (then it is only skipped). */
static inline bool tc__cancelled(const struct tc__chan *ch)
{
	return atomic_load_explicit(tc__claim_word(ch, ch->chead), memory_order_relaxed) ==
	       TC__CLAIM_CANCELLED;
}

/* Consumer: claims the point-to-point descriptor at the channel's head;
 * false when its sender cancelled it first. */
static inline bool tc__claim(const struct tc__chan *ch)
{
	uint64_t open = TC__CLAIM_OPEN;
	return atomic_compare_exchange_strong_explicit(tc__claim_word(ch, ch->chead), &open,
	                                               TC__CLAIM_TAKEN, memory_order_relaxed,
	                                               memory_order_relaxed);
}

/* Pushes what fits of the send at the head of its port.  Returns true when
 * the request no longer needs the channel (all packets, or its descriptor,
 * are in). */
bool tc__push_send(struct tc_proc *proc, struct tc__port *port, struct tc__req *req)
{
	struct tc_team *t = proc->team;
	struct tc__chan *ch = port->out;
	struct tc__pkt_hdr h = {.kind = (uint16_t)req->tag, .total = req->bytes, .clock = req->clock};
	/* A collective's signature (lib/p2p/p2p.h): its send is pushed
	 * during the call, so the proc's is the call's. */
	const uint64_t sig = (req->tag & TC__MSG_COLL) ? proc->coll_sig : 0;

	if (req->single_copy) {
		/* A collective's descriptor carries its signature, a
		 * point-to-point one its claim word. */
		const bool coll = tc__coll_kind((unsigned)req->tag);
		const uint64_t word[2] = {coll ? sig : TC__CLAIM_OPEN, (uint64_t)(unsigned)req->utag};
		h.flags = TC__PKT_FIRST | TC__PKT_LAST | TC__PKT_RNDV;
		h.aux = (uint64_t)(uintptr_t)req;
		h.len = !coll ? sizeof word : sig ? sizeof word[0] : 0;
		req->state = TC__REQ_RNDV_WAIT; /* ours; the receiver reads only sbuf and bytes */
		req->rndv_pos = ch->tail;       /* where the descriptor goes (tc_cancel) */
		if (!tc__chan_try_push(ch, &h, word, h.len)) {
			req->state = TC__REQ_QUEUED;
			return false;
		}
		proc->npending_rndv++;
		proc->stats.packets_sent++;
		tc__data_published(t, ch);
		/* A copy longer than the spin budget: while it is pending,
		 * keep the CPU until it must be over (a sleep puts a wake-up,
		 * 10-50 us here, on the critical path of a copy certain to
		 * end): twice the machine's rate, as a copy out of another
		 * core's cache ran at up to 0.13 ns/B.  Only where the rank
		 * has a CPU to itself (it would starve the copy otherwise). */
		uint64_t copy_ns = (uint64_t)((double)req->bytes * TC__RNDV_SPIN_NS_PER_BYTE);
		if (t->spin_ns && t->p <= t->cpus && copy_ns > t->spin_ns) {
			uint64_t until = tc__now_ns() + copy_ns;
			if (until > proc->spin_until_ns)
				proc->spin_until_ns = until;
		}
		return true;
	}

	bool pushed = false, done = false;
	const unsigned char *src = req->sbuf;
	for (;;) {
		size_t left = req->bytes - req->moved;
		size_t chunk = left < t->packet_bytes ? left : t->packet_bytes;
		h.len = (uint32_t)chunk;
		h.flags = (uint16_t)((req->state == TC__REQ_QUEUED ? TC__PKT_FIRST : 0) |
		                     (chunk == left ? TC__PKT_LAST : 0));
		h.aux = tc__coll_kind((unsigned)req->tag) ? sig : (uint64_t)(unsigned)req->utag;
		if (!tc__chan_try_push(ch, &h, src ? src + req->moved : NULL, chunk))
			break;
		pushed = true;
		proc->stats.packets_sent++;
		req->state = TC__REQ_STREAMING;
		req->moved += chunk;
		if (req->moved == req->bytes) {
			done = true;
			break;
		}
	}
	if (pushed)
		tc__data_published(t, ch);
	if (done)
		tc__send_done(proc, req);
	return done;
}

/* The signature a message's first packet (h, at the consumer's position in
 * ch) carries: in the payload of a single-copy descriptor, aux otherwise. */
static inline uint64_t tc__pkt_sig(const struct tc__chan *ch, const struct tc__pkt_hdr *h)
{
	uint64_t sig = 0;
	if (!(h->flags & TC__PKT_RNDV))
		return h->aux;
	if (h->len == sizeof sig)
		tc__chan_copy_out(ch, 0, &sig, sizeof sig);
	return sig;
}

/* Whether a message from src with tag tag matches the receive r. */
static inline bool tc__umatch(const struct tc__req *r, int src, int tag)
{
	return (r->usrc == TC_ANY_SOURCE || r->usrc == src) && (r->utag == TC_ANY_TAG || r->utag == tag);
}

/* Copies the packets of the partial message at the tail of the port's
 * aside list that have arrived.  Returns true when it is complete. */
bool tc__aside_fill(struct tc__port *port, bool *freed)
{
	struct tc__aside *a = port->ua_tail;
	struct tc__chan *ch = port->in;
	struct tc__pkt_hdr h;
	while (tc__aside_partial(a) && tc__chan_peek(ch, &h)) {
		if (h.len)
			tc__chan_copy_out(ch, 0, a->data + a->have, h.len);
		a->have += h.len;
		tc__chan_pop(ch, h.len);
		*freed = true;
		if (h.flags & TC__PKT_LAST)
			a->have = a->total;
	}
	return !tc__aside_partial(a);
}

/* Takes the point-to-point message whose first packet (h) is at the head
 * of the port's channel aside (a collective receive waits behind it).
 * Returns 1 when it is aside whole (or was a cancelled descriptor, only
 * skipped), 0 when more of its packets are to come, TC_ENOMEM (left in
 * place) when there is no memory for it. */
int tc__aside_take(struct tc__port *port, const struct tc__pkt_hdr *h, bool *freed)
{
	struct tc__chan *ch = port->in;
	const bool rndv = (h->flags & TC__PKT_RNDV) != 0;
	size_t body = rndv ? 0 : (size_t)h->total;
	struct tc__aside *a = body < SIZE_MAX - sizeof *a ? malloc(sizeof *a + body) : NULL;
	if (!a)
		return TC_ENOMEM;
	if (rndv && !tc__claim(ch)) {
		free(a);
		tc__chan_pop(ch, h->len); /* cancelled by its sender: skipped */
		*freed = true;
		return 1;
	}
	a->next = NULL;
	a->total = (size_t)h->total;
	a->have = 0;
	a->clock = h->clock;
	a->tag = tc__pkt_utag(ch, h);
	a->sreq = rndv ? (struct tc__req *)(uintptr_t)h->aux : NULL;
	if (port->ua_tail)
		port->ua_tail->next = a;
	else
		port->ua_head = a;
	port->ua_tail = a;
	if (!rndv) { /* its first packet; the rest as they come */
		if (h->len)
			tc__chan_copy_out(ch, 0, a->data, h->len);
		a->have = (h->flags & TC__PKT_LAST) ? a->total : h->len;
	}
	tc__chan_pop(ch, h->len);
	*freed = true;
	return tc__aside_fill(port, freed);
}

/* The receive req (point-to-point) takes the message a set aside on its
 * port (complete; prev: the entry before it, or NULL).  req is then
 * complete; returns true when a stays aside (TC_ETRUNCATE). */
bool tc__recv_aside(struct tc_proc *proc, struct tc__port *port, struct tc__req *req,
                    struct tc__aside *a, struct tc__aside *prev)
{
	struct tc_team *t = proc->team;
	req->received = a->total;
	req->clock = a->clock;
	req->st_src = port->peer;
	req->st_tag = a->tag;
	req->rnbr = (int)(port - proc->ports);
	req->state = TC__REQ_DONE;
	if (a->total > req->bytes) {
		req->status = TC_ETRUNCATE; /* left aside for a larger buffer */
		return true;
	}
	if (a->sreq) {
		if (!tc__rndv_read_begin(proc)) {
			req->status = TC_EABORTED; /* the sender may be gone */
			return true;
		}
		if (a->total)
			memcpy(req->rbuf, a->sreq->sbuf, a->total);
		/* Release: as in tc__pull_recv(). */
		atomic_store_explicit(&a->sreq->rndv_done, 1, memory_order_release);
		tc__rndv_read_end(proc);
		if (t->may_block)
			tc__doorbell_ring(&t->procs[port->peer].db);
		proc->stats.single_copy++;
	} else if (a->total) {
		memcpy(req->rbuf, a->data, a->total);
	}
	if (prev)
		prev->next = a->next;
	else
		port->ua_head = a->next;
	if (port->ua_tail == a)
		port->ua_tail = prev;
	free(a);
	tc__recv_done(proc, req);
	return false;
}

/* Takes what has arrived for the receive at the head of its stream's
 * queue on its port.  Returns true when the request is complete
 * (received, or failed with TC_ETRUNCATE without consuming anything). */
bool tc__pull_recv(struct tc_proc *proc, struct tc__port *port, struct tc__req *req)
{
	struct tc_team *t = proc->team;
	struct tc__chan *ch = port->in;
	struct tc__pkt_hdr h;
	bool freed = false, done = false;
	const bool coll = tc__coll_kind((unsigned)req->tag);

	/* A partial message taken aside: its packets before anything else in
	 * the channel.  (A point-to-point receive's messages aside are
	 * tc__pull_user's.) */
	if (port->ua_tail && tc__aside_partial(port->ua_tail))
		tc__aside_fill(port, &freed);
	if (port->ua_tail && tc__aside_partial(port->ua_tail))
		goto out;
	while (tc__chan_peek(ch, &h)) {
		if (req->state == TC__REQ_QUEUED) {
			if (tc__coll_kind(h.kind) != coll) {
				/* The other stream's message.  A collective receive
				 * takes a point-to-point message aside unless a
				 * point-to-point receive is queued to take it (the
				 * progress of the port then comes back to us); a
				 * point-to-point receive waits for the collective
				 * to take its message. */
				if (!coll || !(h.flags & TC__PKT_FIRST) || port->urq_head)
					break;
				int k = tc__aside_take(port, &h, &freed);
				if (k < 0) {
					req->status = k;
					req->state = TC__REQ_DONE;
					done = true;
				}
				if (k <= 0)
					break;
				continue;
			}
			if (!coll && (h.flags & TC__PKT_RNDV) && tc__cancelled(ch)) {
				tc__chan_pop(ch, h.len); /* a cancelled send: skipped */
				freed = true;
				continue;
			}
			if (!coll) {
				/* Another receive's message: tc__pull_user's. */
				int utag = tc__pkt_utag(ch, &h);
				if (!tc__umatch(req, port->peer, utag))
					break;
				req->st_src = port->peer;
				req->st_tag = utag;
				req->rnbr = (int)(port - proc->ports);
			}
			if (h.kind != (uint16_t)req->tag ||
			    (coll && tc__pkt_sig(ch, &h) != proc->coll_sig)) {
				/* Another collective's message: a mismatched call.
				 * Left in place. */
				if (coll && h.kind == (uint16_t)req->tag &&
				    tc__other_form(proc, tc__pkt_sig(ch, &h)))
					tc__mismatch_form(proc, NULL, NULL, port->peer);
				req->status = TC_EMISMATCH;
				req->state = TC__REQ_DONE;
				done = true;
				break;
			}
			req->received = h.total;
			req->clock = h.clock;
			if (h.total > req->bytes) {
				req->status = TC_ETRUNCATE;
				req->state = TC__REQ_DONE;
				done = true;
				break;
			}
			if (req->deliver && (h.total != req->bytes || !(h.flags & TC__PKT_RNDV))) {
				/* Not the single-copy message it expects. */
				req->status = TC_EMISMATCH;
				req->state = TC__REQ_DONE;
				done = true;
				break;
			}
			if (h.flags & TC__PKT_RNDV) {
				/* A delivery that runs user code takes a copy: the
				 * sender's buffer is released before it runs. */
				void *copy = req->deliver && req->copy_first && h.total
				                     ? tc__scratch(proc, TC__SLOT_P2P, h.total)
				                     : NULL;
				if (req->deliver && req->copy_first && h.total && !copy) {
					req->status = TC_ENOMEM;
					req->state = TC__REQ_DONE;
					done = true;
					break;
				}
				if (!coll && !tc__claim(ch)) {
					tc__chan_pop(ch, h.len); /* cancelled meanwhile */
					freed = true;
					continue;
				}
				if (!tc__rndv_read_begin(proc)) {
					/* Aborted: the sender may be gone. */
					req->status = TC_EABORTED;
					req->state = TC__REQ_DONE;
					done = true;
					break;
				}
				struct tc__req *s = (struct tc__req *)(uintptr_t)h.aux;
				if (copy)
					memcpy(copy, s->sbuf, h.total);
				else if (req->deliver)
					req->deliver(tc__req_handle(req), s->sbuf, h.total);
				else if (h.total)
					memcpy(req->rbuf, s->sbuf, h.total);
				tc__chan_pop(ch, h.len); /* the signature or claim word */
				freed = true;
				/* Release: our reads of the sender's buffer happen
				 * before it may reuse it; pairs with the acquire load in
				 * tc__req_complete().  s may be gone after this store. */
				atomic_store_explicit(&s->rndv_done, 1, memory_order_release);
				tc__rndv_read_end(proc);
				if (t->may_block)
					tc__doorbell_ring(&t->procs[port->peer].db);
				proc->stats.single_copy++;
				if (copy)
					req->deliver(tc__req_handle(req), copy, h.total);
				tc__recv_done(proc, req);
				done = true;
				break;
			}
			req->state = TC__REQ_STREAMING;
		}
		if (h.len)
			tc__chan_copy_out(ch, 0, (unsigned char *)req->rbuf + req->moved, h.len);
		req->moved += h.len;
		tc__chan_pop(ch, h.len);
		freed = true;
		if (h.flags & TC__PKT_LAST) {
			tc__recv_done(proc, req);
			done = true;
			break;
		}
	}
out:
	if (freed)
		tc__space_freed(t, ch);
	return done;
}

static bool tc__unlink(struct tc__req **head, struct tc__req **tail, struct tc__req *req);

/* The earliest posted receive that takes a message from src with tag tag:
 * the first match in the port's queue (for a neighbour's message; a
 * receive already streaming its message is not a candidate) or in grq,
 * whichever was posted first.  *in_grq says where it is. */
struct tc__req *tc__earliest(struct tc_proc *proc, struct tc__port *port, int src, int tag, bool *in_grq)
{
	struct tc__req *a = NULL, *b = NULL;
	if (port)
		for (struct tc__req *r = port->urq_head; r; r = r->next)
			if (r->state == TC__REQ_QUEUED && tc__umatch(r, src, tag)) {
				a = r;
				break;
			}
	if (!port || proc->nany)
		for (struct tc__req *r = proc->grq_head; r; r = r->next)
			if (tc__umatch(r, src, tag)) {
				b = r;
				break;
			}
	*in_grq = b && (!a || b->seq < a->seq);
	return *in_grq ? b : a;
}

/* Takes a matched receive out of its queue (grq or its port's). */
void tc__urecv_unlink(struct tc_proc *proc, struct tc__port *port, struct tc__req *r, bool in_grq)
{
	if (!in_grq) {
		tc__unlink(&port->urq_head, &port->urq_tail, r);
		return;
	}
	tc__unlink(&proc->grq_head, &proc->grq_tail, r);
	if (r->usrc == TC_ANY_SOURCE)
		proc->nany--;
}

/*
 * Progress of a port's point-to-point stream: the messages set aside go,
 * in order, each to the earliest receive it matches; then the message at
 * the channel's head goes straight to the port's head receive if that is
 * the earliest it matches (no receive from any source queued), or is taken
 * aside while a receive of the port, or one from any source, waits.  A
 * collective message at the head is left to the collective.  Returns true
 * when it took anything (a receive completed, a message set aside).
 */
bool tc__pull_user(struct tc_proc *proc, struct tc__port *port)
{
	if (!port->urq_head && !proc->nany)
		return false;
	struct tc__chan *ch = port->in;
	const int src = port->peer;
	bool any = false, freed = false;
	for (;;) {
		struct tc__req *r = port->urq_head;
		if (r && r->state == TC__REQ_STREAMING) {
			/* Its message's packets come first. */
			if (!tc__pull_recv(proc, port, r))
				break;
			tc__unlink(&port->urq_head, &port->urq_tail, r);
			any = true;
			continue;
		}
		if (port->ua_tail && tc__aside_partial(port->ua_tail))
			tc__aside_fill(port, &freed);
		for (struct tc__aside *a = port->ua_head, *prev = NULL; a && !tc__aside_partial(a);) {
			bool g;
			struct tc__aside *next = a->next;
			struct tc__req *m = tc__earliest(proc, port, src, a->tag, &g);
			if (m) {
				bool kept = tc__recv_aside(proc, port, m, a, prev);
				tc__urecv_unlink(proc, port, m, g);
				any = true;
				if (!kept) {
					a = next;
					continue;
				}
			}
			prev = a;
			a = next;
		}
		if ((!port->urq_head && !proc->nany) ||
		    (port->ua_tail && tc__aside_partial(port->ua_tail)))
			break;
		struct tc__pkt_hdr h;
		if (!tc__chan_peek(ch, &h) || tc__coll_kind(h.kind) || !(h.flags & TC__PKT_FIRST))
			break;
		if ((h.flags & TC__PKT_RNDV) && tc__cancelled(ch)) {
			tc__chan_pop(ch, h.len); /* a cancelled send: skipped */
			freed = true;
			continue;
		}
		r = port->urq_head;
		if (r && !proc->nany && tc__umatch(r, src, tc__pkt_utag(ch, &h))) {
			if (tc__pull_recv(proc, port, r)) {
				tc__unlink(&port->urq_head, &port->urq_tail, r);
				any = true;
				continue;
			}
			if (r->state == TC__REQ_STREAMING || !tc__chan_peek(ch, &h))
				break;
			continue; /* it skipped a cancelled send: look again */
		}
		/* Not the head receive's: aside for whichever receive takes it. */
		int k = tc__aside_take(port, &h, &freed);
		if (k < 0) {
			if (r) { /* no memory to reach the messages behind it */
				r->status = k;
				r->state = TC__REQ_DONE;
				tc__unlink(&port->urq_head, &port->urq_tail, r);
				any = true;
			}
			break;
		}
		any = true;
	}
	if (freed)
		tc__space_freed(proc->team, ch);
	return any;
}

/* Progress of the receives from non-neighbours and from any source: the
 * mailbox, and while a receive from any source waits, every port. */
void tc__progress_any(struct tc_proc *proc)
{
	tc__pull_far(proc);
	for (int i = 0; i < proc->deg && proc->nany; i++)
		tc__pull_user(proc, &proc->ports[i]);
}

void tc__progress(struct tc_proc *proc)
{
	/* Relaxed: a hint; the single-copy reads have their own handshake.
	 * After an abort the requests still queued may belong to calls that
	 * have returned (their buffers and contexts gone): never touched. */
	if (atomic_load_explicit(&proc->team->aborted, memory_order_relaxed))
		return;
	for (int i = 0; i < proc->nactive;) {
		struct tc__port *port = &proc->ports[proc->active[i]];
		struct tc__req *r;
		while ((r = port->sq_head) && tc__push_send(proc, port, r)) {
			port->sq_head = r->next;
			if (!port->sq_head)
				port->sq_tail = NULL;
			if (r->state == TC__REQ_RNDV_WAIT)
				tc__rs_link(port, r);
		}
		/* Each stream's receives in order: the collective ones, then
		 * the point-to-point ones (which a collective message at the
		 * channel's head holds up until the first have taken it), and
		 * the collective ones again when a point-to-point completion
		 * may have uncovered their message. */
		for (;;) {
			while ((r = port->rq_head) && tc__pull_recv(proc, port, r)) {
				port->rq_head = r->next;
				if (!port->rq_head)
					port->rq_tail = NULL;
			}
			bool took = tc__pull_user(proc, port);
			if (!took || !port->rq_head)
				break;
		}
		if (!port->sq_head && !port->rq_head && !port->urq_head)
			tc__deactivate_at(proc, port, i);
		else
			i++;
	}
	/* The layer above's requests (a step that never blocks). */
	if (proc->ext_pending && !proc->ext_busy)
		proc->ext_progress(proc);
	if (proc->grq_head)
		tc__progress_any(proc);
	struct tc_proc *root = tc__proc_root(proc);
	if (root->xq_others && !root->xq_walking)
		tc__progress_others(proc, root);
}

void tc__progress_others(struct tc_proc *proc, struct tc_proc *root)
{
	/* The same rank's calls started on its other teams: MPI's rule that
	 * a rank in the library moves every call it started, so that a call
	 * on the root team whose peers wait for this rank's next round
	 * advances while the rank waits in a call of a sub-team (and the
	 * converse).  Those whose queues have emptied leave the list. */
	root->xq_walking = 1;
	for (struct tc_proc **pp = &root->xq_others; *pp;) {
		struct tc_proc *q = *pp;
		if (!q->ext_pending) {
			*pp = q->xq_next;
			q->xq_next = NULL;
			continue;
		}
		if (q != proc && !q->ext_busy &&
		    !atomic_load_explicit(&q->team->aborted, memory_order_relaxed))
			tc__progress(q);
		pp = &q->xq_next;
	}
	root->xq_walking = 0;
}

void tc__rndv_quiesce(struct tc_proc *proc)
{
	if (!proc->npending_rndv)
		return;
	/* The team is aborted (seq_cst store in tc_team_abort()); the fence
	 * pairs with the receivers' in tc__rndv_read_begin(). */
	tc__sleeper_fence(tc__asym_fence != 0);
	/* Routed sends: any rank may be reading; otherwise a neighbour. */
	const int n = proc->nfar_rndv ? proc->team->p : proc->deg;
	for (int i = 0; i < n; i++) {
		const struct tc_proc *peer =
		        &proc->team->procs[proc->nfar_rndv ? i : proc->ports[i].peer];
		/* Acquire: pairs with tc__rndv_read_end(). */
		for (unsigned k = 0; atomic_load_explicit(&peer->rndv_reading, memory_order_acquire); k++)
			if (k % 64 == 63)
				tc__yield(); /* the reader may need our CPU (or be a fibre of it) */
			else
				tc__cpu_relax();
	}
}

/* Unlinks req from the FIFO at *head (tail *tail); true if it was there. */
static bool tc__unlink(struct tc__req **head, struct tc__req **tail, struct tc__req *req)
{
	struct tc__req *prev = NULL;
	for (struct tc__req *r = *head; r; prev = r, r = r->next) {
		if (r != req)
			continue;
		if (prev)
			prev->next = r->next;
		else
			*head = r->next;
		if (*tail == r)
			*tail = prev;
		r->next = NULL;
		return true;
	}
	return false;
}

static bool tc__listed(const struct tc__req *head, const struct tc__req *req)
{
	for (const struct tc__req *r = head; r; r = r->next)
		if (r == req)
			return true;
	return false;
}

bool tc__req_queued(const struct tc_proc *proc, const struct tc__req *req)
{
	for (int i = 0; i < proc->deg; i++) {
		const struct tc__port *pt = &proc->ports[i];
		if (tc__listed(pt->sq_head, req) || tc__listed(pt->urq_head, req) ||
		    tc__listed(pt->rs_head, req))
			return true;
	}
	if (tc__listed(proc->grq_head, req))
		return true;
	for (const struct tc__far *n = proc->far_sent; n; n = n->snext)
		if (n->sreq == req)
			return true;
	return false;
}

void tc__retire(struct tc_proc *proc, struct tc__req *req, int status)
{
	if (req->kind == TC__KIND_EXT) {
		/* The layer above ends it (and makes it inactive). */
		if (req->state != TC__REQ_IDLE)
			proc->ext_end(proc, req, status);
		return;
	}
	if (req->state == TC__REQ_DONE || req->state == TC__REQ_IDLE)
		return;
	if (proc->team->p2p_engine) {
		proc->team->p2p_engine->retire(proc, req, status);
		req->state = TC__REQ_DONE;
		req->status = status;
		req->clocked = 1;
		return;
	}
	if (req->nbr >= 0 && req->nbr < proc->deg) {
		struct tc__port *port = &proc->ports[req->nbr];
		bool was = req->kind == TC__KIND_SEND ? tc__unlink(&port->sq_head, &port->sq_tail, req)
		           : tc__coll_kind((unsigned)req->tag)
		                   ? tc__unlink(&port->rq_head, &port->rq_tail, req)
		                   : tc__unlink(&port->urq_head, &port->urq_tail, req);
		if (was && port->active && !port->sq_head && !port->rq_head && !port->urq_head)
			for (int i = 0; i < proc->nactive; i++)
				if (proc->active[i] == req->nbr) {
					tc__deactivate_at(proc, port, i);
					break;
				}
	}
	if (req->kind == TC__KIND_RECV && req->far &&
	    tc__unlink(&proc->grq_head, &proc->grq_tail, req) && req->usrc == TC_ANY_SOURCE)
		proc->nany--;
	if (req->state == TC__REQ_RNDV_WAIT) {
		/* Its descriptor is out: a receiver may be copying (the team is
		 * aborted, see tc_cancel), or has copied already. */
		tc__rndv_quiesce(proc);
		proc->npending_rndv--;
		if (req->far)
			tc__far_sent_drop(proc, req->fnode);
		else
			tc__rs_unlink(proc, req);
	}
	req->state = TC__REQ_DONE;
	req->status = status;
	req->clocked = 1;
}

void tc__proc_drop_requests(struct tc_proc *proc)
{
	tc__rndv_quiesce(proc);
	tc__proc_clear_ports(proc);
}

void tc__set_hints(struct tc_proc *proc, bool up)
{
	/* Relaxed: ordered by the sleeper fence that follows (or, when
	 * lowering, a stale raised hint costs the peer one spurious ring). */
	if (tc__coll_watches_all(proc)) {
		/* In a collective: a message of a mismatched call may come on
		 * any link (tc__coll_scan), so every arrival wakes us.  Not on
		 * ranks of more links: two stores to other cores' lines per
		 * link and park cost more than the call (complete:64 on fibres:
		 * the barrier took 2x); there the mismatch probe of the ranks
		 * waiting (lib/p2p/progress.c) ends a hang, and the looks of
		 * tc__coll_scan find the message later. */
		for (int i = 0; i < proc->deg; i++)
			atomic_store_explicit(&proc->ports[i].in->want_data, up, memory_order_relaxed);
	}
	/* Routed messages ring us when a receive or a probe waits for them;
	 * receives and probes from any source listen on every link as well,
	 * a probe of a neighbour on its link. */
	if (up ? proc->grq_head != NULL || proc->probe_wait < 0
	       : atomic_load_explicit(&proc->want_mail, memory_order_relaxed))
		atomic_store_explicit(&proc->want_mail, up, memory_order_relaxed);
	if (up ? proc->nany > 0 || proc->probe_wait == -2 : proc->any_hinted) {
		for (int i = 0; i < proc->deg; i++)
			atomic_store_explicit(&proc->ports[i].in->want_data, up, memory_order_relaxed);
		proc->any_hinted = up;
	}
	if (proc->probe_wait > 0)
		atomic_store_explicit(&proc->ports[proc->probe_wait - 1].in->want_data, up,
		                      memory_order_relaxed);
	for (int i = 0; i < proc->nactive; i++) {
		struct tc__port *port = &proc->ports[proc->active[i]];
		if (port->sq_head)
			atomic_store_explicit(&port->out->want_space, up, memory_order_relaxed);
		if (port->rq_head || port->urq_head)
			atomic_store_explicit(&port->in->want_data, up, memory_order_relaxed);
		port->hinted = up; /* a port emptied meanwhile lowers its own */
	}
}

int tc__coll_scan(struct tc_proc *proc, bool done)
{
	const int tag = proc->coll_tag;
	/* At most TC__SCAN_LINKS links a look, in turn from one look to the
	 * next (a rank of degree 63 would read 63 other cores' lines per call
	 * and per wake-up: complete:64's barrier took twice as long). */
	const int n = proc->deg < TC__SCAN_LINKS ? proc->deg : TC__SCAN_LINKS;
	for (int k = 0; k < n; k++) {
		int i = proc->scan_at;
		proc->scan_at = i + 1 < proc->deg ? i + 1 : 0;
		struct tc__port *port = &proc->ports[i];
		struct tc__pkt_hdr h;
		if (port->rq_head || !tc__chan_peek(port->in, &h))
			continue;
		if (!(h.kind & TC__MSG_COLL) || !(h.flags & TC__PKT_FIRST))
			continue;
		unsigned d = (unsigned)(h.kind - tag) & TC__MSG_SEQ;
		if (d >= (TC__MSG_SEQ + 1u) / 2 || /* an earlier call's */
		    (d == 0 && (done || tc__pkt_sig(port->in, &h) != proc->coll_sig))) {
			if (d == 0 && tc__other_form(proc, tc__pkt_sig(port->in, &h)))
				tc__mismatch_form(proc, NULL, NULL, port->peer);
			return TC_EMISMATCH;
		}
	}
	return TC_OK;
}
