/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/post.c - the calls that start messages between neighbours (and
 * hand the others to lib/p2p/far.c): their arguments checked, a request
 * made and queued on its port, started at once on the channel when the
 * port's queue is empty (lib/p2p/p2p.c's paths); the requests the
 * collective executor posts; and the blocking calls (tc_send, tc_recv,
 * tc_sendrecv and their tagged forms), which take the request-free path of
 * a message of one packet when nothing is queued (tc__send_eager,
 * tc__recv_eager, also the executor's small rounds) and otherwise wait on
 * a request (lib/p2p/wait.c).  The protocol is described at the top of
 * lib/p2p/p2p.c.
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

/* *nbr: the peer's neighbour index, or -1 (routed, or any source). */
static int tc__check_peer(const struct tc_proc *proc, int peer, bool recv, int *nbr)
{
	const struct tc_team *t = proc->team;
	if (recv && peer == TC_ANY_SOURCE) {
		*nbr = -1;
		return TC_OK;
	}
	if (peer < 0 || peer >= t->p)
		return TC_ERANK;
	if (peer == proc->rank) {
		*nbr = -1; /* a message to oneself: tc__isend_self() */
		return TC_OK;
	}
	*nbr = tc_topo_neighbor_index(t->topo, proc->rank, peer);
	return TC_OK;
}

/* tag: a send's (>= 0) or a receive's or a probe's (>= 0 or TC_ANY_TAG). */
int tc__check_call(const struct tc_proc *proc, int peer, bool recv, int tag, const void *buf,
                   size_t bytes, int *nbr)
{
	if (!proc)
		return TC_EINVAL;
	if (!buf && bytes)
		return TC_ENULLBUF;
	if (bytes > TC_MAX_MESSAGE)
		return TC_EOVERFLOW;
	if (tag < 0 && !(recv && tag == TC_ANY_TAG)) {
		tc__set_detail("%s tag %d: a tag is 0..TC_TAG_MAX%s", recv ? "receive" : "send",
		               tag, recv ? " or TC_ANY_TAG" : "");
		return TC_EINVAL;
	}
	int err = tc__check_peer(proc, peer, recv, nbr);
	if (err)
		return err;
	if (atomic_load_explicit(&proc->team->aborted, memory_order_relaxed))
		return TC_EABORTED;
	return TC_OK;
}

/* tc__check_call for a call with a request (req: its storage). */
static int tc__check_args(const struct tc_proc *proc, int peer, bool recv, int tag, const void *buf,
                          size_t bytes, const struct tc__req *req, int *nbr)
{
	if (!req)
		return TC_EINVAL;
	return tc__check_call(proc, peer, recv, tag, buf, bytes, nbr);
}

void tc__req_init(struct tc_proc *proc, struct tc__req *req, int kind, int peer, int nbr, size_t bytes)
{
	req->single_copy = kind == TC__KIND_SEND && bytes >= proc->team->single_copy_min;
	req->sync = 0;
	req->next = NULL;
	req->bytes = bytes;
	req->moved = 0;
	req->received = 0;
	req->clock = 0;
	req->done_at = 0;
	req->hops = 1;
	req->peer = peer;
	req->nbr = nbr;
	req->kind = kind;
	req->state = TC__REQ_QUEUED;
	req->status = TC_OK;
	req->clocked = 0;
	req->tag = TC__MSG_USER;
	req->deliver = NULL;
	req->deliver_ctx = NULL;
	req->copy_first = 0;
	req->tested_since = 0;
	req->utag = kind == TC__KIND_RECV ? TC_ANY_TAG : 0;
	req->usrc = peer;
	req->st_src = -1;
	req->st_tag = -1;
	req->rnbr = nbr;
	req->far = 0;
	req->seq = 0;
	req->fnode = NULL;
	req->stamp = 0; /* a public call's start stamps it (tc__req_busy) */
	atomic_store_explicit(&req->rndv_done, 0, memory_order_relaxed);
}

static void tc__enqueue_send(struct tc_proc *proc, struct tc__port *port, struct tc__req *req)
{
	proc->nposts++;
	if (!port->sq_head && tc__push_send(proc, port, req)) {
		if (req->state == TC__REQ_RNDV_WAIT)
			tc__rs_link(port, req);
		return;
	}
	if (port->sq_tail)
		port->sq_tail->next = req;
	else
		port->sq_head = req;
	port->sq_tail = req;
	tc__activate(proc, port);
}

static void tc__enqueue_recv(struct tc_proc *proc, struct tc__port *port, struct tc__req *req)
{
	proc->nposts++;
	const bool coll = tc__coll_kind((unsigned)req->tag);
	if (!coll) {
		/* Matched by tc__pull_user, with the messages set aside. */
		req->seq = ++proc->useq;
		if (port->urq_tail)
			port->urq_tail->next = req;
		else
			port->urq_head = req;
		port->urq_tail = req;
		tc__pull_user(proc, port);
		if (port->urq_head)
			tc__activate(proc, port);
		return;
	}
	struct tc__req **head = coll ? &port->rq_head : &port->urq_head;
	struct tc__req **tail = coll ? &port->rq_tail : &port->urq_tail;
	if (!*head && tc__pull_recv(proc, port, req))
		return;
	if (*tail)
		(*tail)->next = req;
	else
		*head = req;
	*tail = req;
	tc__activate(proc, port);
}

/* A send on a team whose point-to-point engine is another's (team->
 * p2p_engine): charged as on the channels (a routed one over its route),
 * the port's resource kept only when the engine started it. */
static int tc__isend_engine(struct tc_proc *proc, int dst, int nbr, int tag, const void *buf,
                            size_t bytes, bool sync, struct tc__req *req)
{
	struct tc_team *t = proc->team;
	struct tc__mps *q = &t->mps;
	tc__req_init(proc, req, TC__KIND_SEND, dst, nbr, bytes);
	req->sync = sync;
	req->sbuf = buf;
	req->rbuf = NULL;
	req->utag = tag;
	req->far = nbr < 0;
	if (dst == proc->rank) {
		/* To oneself: the engine's MPI delivers it; no link, no charge
		 * (as tc__isend_self). */
		req->hops = 0;
		req->clock = req->done_at = proc->clock;
		int err = t->p2p_engine->isend(proc, req);
		if (err) {
			req->state = TC__REQ_IDLE;
			return err;
		}
		proc->nposts++;
		return TC_OK;
	}
	int first = nbr;
	if (nbr >= 0)
		req->hops = tc__topo_link_charge(t->topo, proc->rank, nbr);
	if (nbr < 0) {
		req->hops = tc__topo_charge(t->topo, proc->rank, dst);
		first = tc_topo_neighbor_index(t->topo, proc->rank,
		                               tc__topo_next_hop(t->topo, proc->rank, dst));
	}
	tc_time_t res = proc->res_free[tc__res_send(q, first)];
	req->clock = tc__clock_send(q, proc->clock, &res, bytes, req->hops, &req->done_at);
	int err = t->p2p_engine->isend(proc, req);
	if (err) {
		req->state = TC__REQ_IDLE;
		return err;
	}
	proc->res_free[tc__res_send(q, first)] = res;
	proc->nposts++;
	return TC_OK;
}

/* tc_isend and tc_irecv once the arguments are checked (nbr: dst's or
 * src's neighbour index; -1: routed, or from any source).  A synchronous
 * send (sync: tc_issend_tag) takes the path on which the receiver copies
 * out of the sender's buffer whatever the size: a single-copy descriptor
 * to a neighbour, a rendezvous node to any other rank or to oneself; so
 * it completes once a receive has taken it. */
static int tc__isend_checked(struct tc_proc *proc, int dst, int nbr, int tag, const void *buf,
                             size_t bytes, bool sync, struct tc__req *req)
{
	if (proc->team->p2p_engine)
		return tc__isend_engine(proc, dst, nbr, tag, buf, bytes, sync, req);
	if (dst == proc->rank)
		return tc__isend_self(proc, tag, buf, bytes, sync, req);
	if (nbr < 0)
		return tc__isend_far(proc, dst, tag, buf, bytes, sync, req);
	tc__req_init(proc, req, TC__KIND_SEND, dst, nbr, bytes);
	if (sync)
		req->single_copy = req->sync = 1;
	req->sbuf = buf;
	req->rbuf = NULL;
	req->utag = tag;
	req->hops = tc__topo_link_charge(proc->team->topo, proc->rank, nbr);
	struct tc__mps *q = &proc->team->mps;
	req->clock = tc__clock_send(q, proc->clock, &proc->res_free[tc__res_send(q, nbr)], bytes,
	                            req->hops, &req->done_at);
	tc__enqueue_send(proc, &proc->ports[nbr], req);
	return TC_OK;
}

static int tc__irecv_checked(struct tc_proc *proc, int src, int nbr, int tag, void *buf, size_t cap,
                             struct tc__req *req)
{
	tc__req_init(proc, req, TC__KIND_RECV, src, nbr, cap);
	req->sbuf = NULL;
	req->rbuf = buf;
	req->utag = tag;
	if (proc->team->p2p_engine) {
		req->far = nbr < 0;
		int err = proc->team->p2p_engine->irecv(proc, req);
		if (err)
			req->state = TC__REQ_IDLE;
		else
			proc->nposts++;
		return err;
	}
	if (proc->probed && tc__take_probed(proc, req))
		return TC_OK;
	if (nbr >= 0) {
		tc__enqueue_recv(proc, &proc->ports[nbr], req);
		return TC_OK;
	}
	/* From a non-neighbour or from any source: grq. */
	req->far = 1;
	req->seq = ++proc->useq;
	if (proc->grq_tail)
		proc->grq_tail->next = req;
	else
		proc->grq_head = req;
	proc->grq_tail = req;
	if (src == TC_ANY_SOURCE)
		proc->nany++;
	proc->nposts++;
	tc__progress_any(proc);
	return TC_OK;
}

/* tc_isend_tag and tc_issend_tag (call: its name, for the detail). */
static int tc__isend_as(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes,
                        bool sync, tc_request *handle, const char *call)
{
	struct tc__req *req = tc__req(handle);
	if (proc && req && tc__req_busy(proc, handle))
		return tc__req_busy_error(call, "", ""); /* left as it is: still queued */
	int nbr = -1;
	int err = tc__check_args(proc, dst, false, tag, buf, bytes, req, &nbr);
	if (!err)
		err = tc__isend_checked(proc, dst, nbr, tag, buf, bytes, sync, req);
	else if (req)
		req->state = TC__REQ_IDLE; /* a later wait says TC_EINVAL, not a stale status */
	if (!err)
		tc__req_stamp(proc, handle);
	return err;
}

int tc_isend_tag(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes, tc_request *handle)
{
	tc__clear_detail();
	return tc__isend_as(proc, dst, tag, buf, bytes, false, handle, "tc_isend");
}

int tc_isend(struct tc_proc *proc, int dst, const void *buf, size_t bytes, tc_request *handle)
{
	return tc_isend_tag(proc, dst, 0, buf, bytes, handle);
}

int tc_issend_tag(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes, tc_request *handle)
{
	tc__clear_detail();
	return tc__isend_as(proc, dst, tag, buf, bytes, true, handle, "tc_issend");
}

int tc_issend(struct tc_proc *proc, int dst, const void *buf, size_t bytes, tc_request *handle)
{
	return tc_issend_tag(proc, dst, 0, buf, bytes, handle);
}

int tc_irecv_tag(struct tc_proc *proc, int src, int tag, void *buf, size_t cap, tc_request *handle)
{
	tc__clear_detail();
	struct tc__req *req = tc__req(handle);
	if (proc && req && tc__req_busy(proc, handle))
		return tc__req_busy_error("tc_irecv", "", "");
	int nbr = -1;
	int err = tc__check_args(proc, src, true, tag, buf, cap, req, &nbr);
	if (!err)
		err = tc__irecv_checked(proc, src, nbr, tag, buf, cap, req);
	else if (req)
		req->state = TC__REQ_IDLE;
	if (!err)
		tc__req_stamp(proc, handle);
	return err;
}

int tc_irecv(struct tc_proc *proc, int src, void *buf, size_t cap, tc_request *handle)
{
	return tc_irecv_tag(proc, src, TC_ANY_TAG, buf, cap, handle);
}

void tc__post_send(struct tc_proc *proc, int nbr, const void *buf, size_t bytes, int tag,
                   tc_time_t arrival, tc_request *handle)
{
	struct tc__req *req = tc__req(handle);
	tc__req_init(proc, req, TC__KIND_SEND, proc->nbrs[nbr], nbr, bytes);
	req->sbuf = buf;
	req->rbuf = NULL;
	req->tag = tag;
	req->clock = arrival;
	req->clocked = 1;
	req->single_copy = bytes >= tc__coll_single_copy_min(proc->team);
	tc__enqueue_send(proc, &proc->ports[nbr], req);
}

static void tc__post_recv_with(struct tc_proc *proc, int nbr, void *buf, size_t cap, int tag,
                               void (*deliver)(tc_request *, const void *, size_t), void *ctx,
                               bool copy_first, struct tc__req *req)
{
	tc__req_init(proc, req, TC__KIND_RECV, proc->nbrs[nbr], nbr, cap);
	req->sbuf = NULL;
	req->rbuf = buf;
	req->tag = tag;
	req->clocked = 1;
	req->deliver = deliver;
	req->deliver_ctx = ctx;
	req->copy_first = copy_first;
	tc__enqueue_recv(proc, &proc->ports[nbr], req);
}

void tc__post_recv(struct tc_proc *proc, int nbr, void *buf, size_t cap, int tag, tc_request *req)
{
	tc__post_recv_with(proc, nbr, buf, cap, tag, NULL, NULL, false, tc__req(req));
}

void tc__post_recv_direct(struct tc_proc *proc, int nbr, size_t bytes, int tag,
                          void (*deliver)(tc_request *, const void *, size_t), void *ctx,
                          bool copy_first, tc_request *req)
{
	tc__post_recv_with(proc, nbr, NULL, bytes, tag, deliver, ctx, copy_first, tc__req(req));
}

/* tc__send_eager with the first packet's aux given (a user message's tag). */
static inline bool tc__send_eager_aux(struct tc_proc *proc, int nbr, const void *buf, size_t bytes,
                                      int tag, uint64_t aux, tc_time_t arrival, size_t single_copy_min)
{
	struct tc_team *t = proc->team;
	struct tc__port *port = &proc->ports[nbr];
	if (port->sq_head || bytes > t->packet_bytes || bytes >= single_copy_min)
		return false;
	struct tc__pkt_hdr h = {.len = (uint32_t)bytes,
	                        .flags = TC__PKT_FIRST | TC__PKT_LAST,
	                        .kind = (uint16_t)tag,
	                        .total = bytes,
	                        .clock = arrival,
	                        .aux = aux};
	if (!tc__chan_try_push(port->out, &h, buf, bytes))
		return false;
	tc__data_published(t, port->out);
	proc->stats.packets_sent++;
	proc->stats.msgs_sent++;
	proc->stats.bytes_sent += bytes;
	return true;
}

bool tc__send_eager(struct tc_proc *proc, int nbr, const void *buf, size_t bytes, int tag,
                    tc_time_t arrival, size_t single_copy_min)
{
	return tc__send_eager_aux(proc, nbr, buf, bytes, tag,
	                          (tag & TC__MSG_COLL) ? proc->coll_sig : 0, arrival, single_copy_min);
}

int tc__recv_eager(struct tc_proc *proc, int nbr, void *buf, size_t cap, int tag, size_t *received,
                   tc_time_t *arrival)
{
	struct tc__port *port = &proc->ports[nbr];
	struct tc__chan *ch = port->in;
	struct tc__pkt_hdr h;
	if (tc__coll_kind((unsigned)tag) ? port->rq_head != NULL
	                                 : port->urq_head || port->ua_head || proc->nany)
		return -1;
	if (!tc__chan_peek(ch, &h))
		return 0;
	/* Anything but a whole message that fits (several packets, single
	 * copy, another tag, too large) is left to the request path. */
	if (h.kind != (uint16_t)tag || h.flags != (TC__PKT_FIRST | TC__PKT_LAST) || h.total > cap ||
	    ((tag & TC__MSG_COLL) && h.aux != proc->coll_sig))
		return -1;
	if (h.len)
		tc__chan_copy_out(ch, 0, buf, h.len);
	tc__chan_pop(ch, h.len);
	tc__space_freed(proc->team, ch);
	proc->stats.msgs_recv++;
	proc->stats.bytes_recv += h.total;
	*received = h.total;
	*arrival = h.clock;
	return 1;
}

/*
 * Blocking send and receive try the request-free path first (one packet,
 * empty queues: tc__send_eager, tc__recv_eager) and apply the same clock
 * rules as tc_wait() does for a request; anything else goes through one.
 */
/* tc_send and tc_send_tag. */
static int tc__send_as(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes,
                       const char *call)
{
	struct tc__req req;
	int nbr = -1;
	int err = tc__check_call(proc, dst, false, tag, buf, bytes, &nbr);
	if (err)
		return err;
	if (nbr >= 0 && !proc->team->p2p_engine) {
		/* The send rule on a copy of the port's resource: it stands only
		 * if the message goes now (otherwise tc_isend() applies it). */
		struct tc__mps *q = &proc->team->mps;
		tc_time_t res = proc->res_free[tc__res_send(q, nbr)], done;
		const int hops = tc__topo_link_charge(proc->team->topo, proc->rank, nbr);
		tc_time_t arrival = tc__clock_send(q, proc->clock, &res, bytes, hops, &done);
		if (tc__send_eager_aux(proc, nbr, buf, bytes, TC__MSG_USER, (uint64_t)(unsigned)tag,
		                       arrival, proc->team->single_copy_min)) {
			proc->res_free[tc__res_send(q, nbr)] = res;
			tc__clock_sent(proc, done, hops, bytes);
			return TC_OK;
		}
	}
	err = tc__isend_checked(proc, dst, nbr, tag, buf, bytes, false, &req);
	if (err)
		return err;
	return tc__wait_as(proc, &req, NULL, call);
}

/* tc_ssend and tc_ssend_tag: a synchronous send, waited for.  To oneself
 * it could complete only by a receive of the caller, which waits in this
 * call: refused. */
static int tc__ssend_as(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes,
                        const char *call)
{
	struct tc__req req;
	int nbr = -1;
	int err = tc__check_call(proc, dst, false, tag, buf, bytes, &nbr);
	if (err)
		return err;
	if (dst == proc->rank) {
		tc__set_detail("%s to oneself (rank %d): a synchronous send completes only when a "
		               "receive takes its message, and the only rank that could post that "
		               "receive waits in this call: it would wait forever (deadlock); use "
		               "tc_issend_tag, then the receive, then the wait",
		               call, dst);
		return TC_EINVAL;
	}
	err = tc__isend_checked(proc, dst, nbr, tag, buf, bytes, true, &req);
	if (err)
		return err;
	return tc__wait_as(proc, &req, NULL, call);
}

int tc_ssend(struct tc_proc *proc, int dst, const void *buf, size_t bytes)
{
	tc__clear_detail();
	return tc__ssend_as(proc, dst, 0, buf, bytes, "tc_ssend");
}

int tc_ssend_tag(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes)
{
	tc__clear_detail();
	return tc__ssend_as(proc, dst, tag, buf, bytes, "tc_ssend_tag");
}

int tc_send(struct tc_proc *proc, int dst, const void *buf, size_t bytes)
{
	tc__clear_detail();
	return tc__send_as(proc, dst, 0, buf, bytes, "tc_send");
}

int tc_send_tag(struct tc_proc *proc, int dst, int tag, const void *buf, size_t bytes)
{
	tc__clear_detail();
	return tc__send_as(proc, dst, tag, buf, bytes, "tc_send_tag");
}

/* tc_recv and tc_recv_tag: a neighbour's message of one packet is taken
 * without a request when nothing else is queued (tc__recv_eager: a plain
 * receive; one with a tag checks the packet's). */
static int tc__recv_as(struct tc_proc *proc, int src, int tag, void *buf, size_t cap,
                       size_t *received, tc_status *st, const char *call)
{
	struct tc__req req;
	int nbr = -1;
	int err = tc__check_call(proc, src, true, tag, buf, cap, &nbr);
	if (err)
		return err;
	if (nbr >= 0 && !proc->team->p2p_engine) {
		int spins = proc->nactive ? 1 : tc__eager_polls(proc->team);
		struct tc__chan *ch = proc->ports[nbr].in;
		size_t got;
		tc_time_t arrival;
		for (int k = 0; k < spins; k++) {
			int mtag = 0;
			if (tag != TC_ANY_TAG || st) {
				/* The tag of the message at the head, if one is there
				 * (the consumer's own view: nothing else reads it). */
				struct tc__pkt_hdr h;
				if (!tc__chan_peek(ch, &h)) {
					if (proc->ports[nbr].urq_head || proc->ports[nbr].ua_head ||
					    proc->nany)
						break;
					continue;
				}
				mtag = tc__coll_kind(h.kind) ? -1 : tc__pkt_utag(ch, &h);
				if (tag != TC_ANY_TAG && mtag != tag)
					break; /* a request's business */
			}
			int taken = tc__recv_eager(proc, nbr, buf, cap, TC__MSG_USER, &got, &arrival);
			if (taken < 0)
				break;
			if (!taken)
				continue;
			tc__clock_received(proc, nbr, arrival, got);
			tc__emulate_sync(proc);
			if (received)
				*received = got;
			if (st) {
				memset(st, 0, sizeof *st);
				*st = (tc_status){.source = src, .tag = mtag, .bytes = got};
			}
			return TC_OK;
		}
	}
	err = tc__irecv_checked(proc, src, nbr, tag, buf, cap, &req);
	if (err)
		return err;
	err = tc__wait_as(proc, &req, received, call);
	if (st)
		tc__req_status(tc__req_handle(&req), st);
	return err;
}

int tc_recv(struct tc_proc *proc, int src, void *buf, size_t cap, size_t *received)
{
	tc__clear_detail();
	return tc__recv_as(proc, src, TC_ANY_TAG, buf, cap, received, NULL, "tc_recv");
}

int tc_recv_tag(struct tc_proc *proc, int src, int tag, void *buf, size_t cap, tc_status *st)
{
	tc__clear_detail();
	return tc__recv_as(proc, src, tag, buf, cap, NULL, st, "tc_recv_tag");
}

int tc_sendrecv(struct tc_proc *proc, int dst, const void *sbuf, size_t sbytes, int src, void *rbuf,
                size_t rcap, size_t *received)
{
	tc__clear_detail();
	tc_request reqs[2];
	int nbr;
	/* Check both sides before starting either, so that an argument error
	 * leaves nothing in flight. */
	int err = tc__check_args(proc, dst, false, 0, sbuf, sbytes, tc__req(&reqs[0]), &nbr);
	if (!err)
		err = tc__check_args(proc, src, true, TC_ANY_TAG, rbuf, rcap, tc__req(&reqs[1]), &nbr);
	/* Overlapping buffers: the message received could land over the one
	 * still being sent (a single-copy peer reads sbuf in place). */
	if (!err && sbytes && rcap && (uintptr_t)sbuf < (uintptr_t)rbuf + rcap &&
	    (uintptr_t)rbuf < (uintptr_t)sbuf + sbytes)
		err = TC_EINVAL;
	if (err)
		return err;
	/* Only an abort can fail a post now; a send already out is then
	 * retired (never left queued behind the caller's back). */
	err = tc_isend(proc, dst, sbuf, sbytes, &reqs[0]);
	if (err)
		return err;
	err = tc_irecv(proc, src, rbuf, rcap, &reqs[1]);
	if (err)
		return tc__wait_failed(proc, 1, reqs, err);
	err = tc__waitall_as(proc, 2, reqs, "tc_sendrecv");
	if (received)
		*received = tc__req(&reqs[1])->received;
	return err;
}
