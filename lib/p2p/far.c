/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/far.c - routed messages: point-to-point messages to a rank that
 * is not a neighbour, and messages to oneself.
 *
 * A message to a rank that is not a neighbour does not go through the
 * ranks of its route (they would have to be in the library to forward it,
 * and a rank blocked elsewhere would hold it up): it travels as a struct
 * tc__far pushed onto the receiver's mailbox, a Treiber stack that any
 * rank pushes and its owner takes whole (tc__pull_far), while the model
 * charges its route (hops, the first link's send port, the last link's
 * receive port).  A hop is charged as its link's weight
 * (lib/topo/charge.h): one link on a team's own topology, the parent's
 * route on a sub-team's general subset, for neighbours too.  Below
 * single_copy_min the node holds a copy and the send is complete at once;
 * from it on, and at any size for a synchronous send (tc_issend_tag), the
 * receiver copies out of the sender's buffer, with the
 * claim word and abort handshake of single-copy descriptors
 * (tc__rndv_quiesce then waits for every rank, not only the neighbours).
 * Messages from one sender keep their order: the stack is reversed as it
 * is taken.  Receives from a non-neighbour or from any source wait in the
 * proc's grq.
 *
 * A message to oneself is copied into a node of the same kind, appended to
 * the proc's list of the routed messages taken (tc__isend_self).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/p2p.h"
#include "p2p/p2p_internal.h"
#include "p2p/request.h"
#include "base/error_detail.h"
#include "topo/charge.h"

/* The neighbour index of the last link of the route from src to the proc
 * (the receive port a routed message uses); 0 when the model's ports do
 * not depend on it. */
int tc__last_link(const struct tc_proc *proc, int src)
{
	const struct tc_team *t = proc->team;
	if (src == proc->rank)
		return -1; /* a message to oneself: no link (tc__req_clock) */
	if (!t->mps.ports_all)
		return 0;
	int cur = src;
	for (int next; (next = tc__topo_next_hop(t->topo, cur, proc->rank)) != proc->rank;)
		cur = next;
	return tc_topo_neighbor_index(t->topo, proc->rank, cur);
}

/* The sender's side of a routed rendezvous node is done with it. */
void tc__far_sent_drop(struct tc_proc *proc, struct tc__far *n)
{
	for (struct tc__far **pp = &proc->far_sent; *pp; pp = &(*pp)->snext)
		if (*pp == n) {
			*pp = n->snext;
			break;
		}
	proc->nfar_rndv--;
	tc__far_unref(n);
}

/* The receive r takes the routed message n.  Returns 1 when n stays
 * (TC_ETRUNCATE; r complete), 0 when n was taken (r complete), -1 when
 * its sender cancelled it first (r still queued; n to be dropped). */
int tc__recv_far(struct tc_proc *proc, struct tc__req *r, struct tc__far *n)
{
	struct tc_team *t = proc->team;
	if (n->sreq) {
		uint64_t open = TC__CLAIM_OPEN;
		if (n->total <= r->bytes &&
		    !atomic_compare_exchange_strong_explicit(&n->claim, &open, TC__CLAIM_TAKEN,
		                                             memory_order_relaxed, memory_order_relaxed))
			return -1;
	}
	r->received = n->total;
	r->clock = n->clock;
	r->st_src = n->src;
	r->st_tag = n->tag;
	r->rnbr = tc__last_link(proc, n->src);
	r->state = TC__REQ_DONE;
	if (n->total > r->bytes) {
		r->status = TC_ETRUNCATE; /* left for a larger buffer */
		return 1;
	}
	if (!n->sreq) {
		if (n->total)
			memcpy(r->rbuf, n->data, n->total);
	} else {
		if (!tc__rndv_read_begin(proc)) {
			r->status = TC_EABORTED; /* the sender may be gone */
			return 0;
		}
		if (n->total)
			memcpy(r->rbuf, n->sreq->sbuf, n->total);
		/* Release: as in tc__pull_recv(); pairs with the acquire load in
		 * tc__complete().  The request may be gone after this store. */
		atomic_store_explicit(&n->sreq->rndv_done, 1, memory_order_release);
		tc__rndv_read_end(proc);
		if (t->may_block)
			tc__doorbell_ring(&t->procs[n->src].db);
		proc->stats.single_copy++;
	}
	tc__recv_done(proc, r);
	return 0;
}

/* Takes the proc's mailbox whole and matches the routed messages, in order
 * of arrival, each to the earliest receive of grq it matches.  Returns true
 * when a receive completed. */
bool tc__pull_far(struct tc_proc *proc)
{
	/* Relaxed look first: the exchange writes a line the senders share. */
	struct tc__far *n = NULL;
	if (atomic_load_explicit(&proc->mail, memory_order_relaxed))
		/* Acquire: pairs with the senders' release compare-and-swap in
		 * tc__isend_far(); their nodes' contents are visible. */
		n = atomic_exchange_explicit(&proc->mail, NULL, memory_order_acquire);
	struct tc__far *fifo = NULL, *last = n;
	while (n) { /* newest first: reversed into order of arrival */
		struct tc__far *next = n->next;
		n->next = fifo;
		fifo = n;
		n = next;
	}
	if (fifo) {
		if (proc->fx_tail)
			proc->fx_tail->next = fifo;
		else
			proc->fx_head = fifo;
		proc->fx_tail = last;
	}
	bool any = false;
	for (struct tc__far *m = proc->fx_head, *prev = NULL; m && proc->grq_head;) {
		struct tc__far *next = m->next;
		bool g;
		struct tc__req *r = tc__earliest(proc, NULL, m->src, m->tag, &g);
		int k = r ? tc__recv_far(proc, r, m) : 1;
		if (r && k >= 0) {
			tc__urecv_unlink(proc, NULL, r, true);
			any = true;
		}
		if (k > 0) {
			prev = m;
		} else {
			if (prev)
				prev->next = next;
			else
				proc->fx_head = next;
			if (proc->fx_tail == m)
				proc->fx_tail = prev;
			tc__far_unref(m);
		}
		m = next;
	}
	return any;
}

/* Makes n the rendezvous node of the send req: its receiver copies out of
 * req's buffer, and req completes when it has (tc__complete), or is
 * cancelled while nobody has claimed n (tc_cancel). */
static void tc__far_rndv(struct tc_proc *proc, struct tc__req *req, struct tc__far *n)
{
	n->sreq = req;
	atomic_init(&n->refs, 2);
	req->state = TC__REQ_RNDV_WAIT;
	req->fnode = n;
	n->snext = proc->far_sent;
	proc->far_sent = n;
	proc->npending_rndv++;
	proc->nfar_rndv++;
}

/* A routed send (dst no neighbour; arguments checked): its node onto
 * dst's mailbox, charged over the route.  TC_ENOMEM: nothing sent, req
 * not started. */
int tc__isend_far(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes, bool sync,
                  struct tc__req *req)
{
	struct tc_team *t = proc->team;
	const bool eager = !sync && bytes < t->single_copy_min;
	struct tc__far *n = malloc(sizeof *n + (eager ? bytes : 0));
	if (!n) {
		tc__set_detail("no memory for a routed message of %zu bytes to rank %d", bytes, dst);
		req->state = TC__REQ_IDLE;
		return TC_ENOMEM;
	}
	tc__req_init(proc, req, TC__KIND_SEND, dst, -1, bytes);
	req->single_copy = !eager;
	req->sync = sync;
	req->sbuf = buf;
	req->rbuf = NULL;
	req->utag = tag;
	req->far = 1;
	req->hops = tc__topo_charge(t->topo, proc->rank, dst);
	int first = tc_topo_neighbor_index(t->topo, proc->rank,
	                                   tc__topo_next_hop(t->topo, proc->rank, dst));
	struct tc__mps *q = &t->mps;
	req->clock = tc__clock_send(q, proc->clock, &proc->res_free[tc__res_send(q, first)], bytes,
	                            req->hops, &req->done_at);
	n->src = proc->rank;
	n->tag = tag;
	n->total = bytes;
	n->clock = req->clock;
	atomic_init(&n->claim, TC__CLAIM_OPEN);
	if (eager) {
		if (bytes)
			memcpy(n->data, buf, bytes);
		n->sreq = NULL;
		atomic_init(&n->refs, 1);
		tc__send_done(proc, req);
	} else {
		tc__far_rndv(proc, req, n);
	}
	proc->nposts++;
	proc->stats.packets_sent++;
	struct tc_proc *d = &t->procs[dst];
	struct tc__far *head = atomic_load_explicit(&d->mail, memory_order_relaxed);
	do
		n->next = head;
	/* Release: publishes the node (and, eager, its copy); pairs with the
	 * acquire exchange in tc__pull_far(). */
	while (!atomic_compare_exchange_weak_explicit(&d->mail, &head, n, memory_order_release,
	                                              memory_order_relaxed));
	if (t->may_block)
		tc__notify(&d->want_mail, &d->db, t->asym_fence);
	return TC_OK;
}

/*
 * A message to oneself (dst is the caller; arguments checked).  It is
 * copied, whatever its size, into a node appended to the proc's list of
 * routed messages taken (fx), where the receives from the proc itself or
 * from any source find it as they find a routed message (tags, wildcards,
 * probes, order of sending).  So the send is complete at once: a blocking
 * send to oneself never waits for its receive (MPI's standard mode may
 * buffer, and here always does), at the cost of one copy in and one out.
 * No link is crossed, and the model charges nothing: the message arrives
 * at the sender's clock, with no hop and no port (tc__req_clock).
 * TC_ENOMEM: nothing sent, req not started.
 *
 * A synchronous one (tc_issend_tag) is not copied: its node is a
 * rendezvous node like a routed one's, which the receive that takes it
 * copies out of the sender's buffer, completing the send then (its claim
 * word lets tc_cancel take it back until then).  Only the proc's own
 * thread reads it, as its own receive.
 */
int tc__isend_self(struct tc_proc *proc, int tag, const void *buf, size_t bytes, bool sync,
                   struct tc__req *req)
{
	struct tc__far *n = malloc(sizeof *n + (sync ? 0 : bytes));
	if (!n) {
		tc__set_detail("no memory for a copy of a message of %zu bytes to oneself (rank %d)",
		               bytes, proc->rank);
		req->state = TC__REQ_IDLE;
		return TC_ENOMEM;
	}
	tc__req_init(proc, req, TC__KIND_SEND, proc->rank, -1, bytes);
	req->single_copy = sync;
	req->sync = sync;
	req->sbuf = buf;
	req->rbuf = NULL;
	req->utag = tag;
	req->far = 1;
	req->hops = 0;
	req->clock = proc->clock;
	req->done_at = proc->clock;
	n->next = NULL;
	n->snext = NULL;
	n->sreq = NULL;
	n->src = proc->rank;
	n->tag = tag;
	n->total = bytes;
	n->clock = proc->clock;
	atomic_init(&n->claim, TC__CLAIM_OPEN);
	if (sync) {
		tc__far_rndv(proc, req, n); /* the receive copies out of buf */
	} else {
		atomic_init(&n->refs, 1);
		if (bytes)
			memcpy(n->data, buf, bytes);
	}
	/* Only this proc's thread touches fx: no ordering needed.  Behind
	 * the messages already taken, so a receive matches the proc's own
	 * messages in the order they were sent. */
	if (proc->fx_tail)
		proc->fx_tail->next = n;
	else
		proc->fx_head = n;
	proc->fx_tail = n;
	proc->nposts++;
	if (!sync)
		tc__send_done(proc, req);
	tc__pull_far(proc); /* a receive already posted takes it now */
	return TC_OK;
}
