/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/probe.c - probing (tc_probe, tc_iprobe): the message that a
 * receive with the same source and tag would take, found without taking it.
 *
 * The candidates are the messages no posted receive takes: a port's
 * messages taken aside, the channel's next ones (taken aside one by one
 * until one matches, as a receive from any source takes them), and the
 * routed messages of the mailbox.  A message that a posted receive
 * matches is that receive's and is passed over.  Per source the first
 * candidate that matches is the probe's, as it is a receive's; across
 * sources (TC_ANY_SOURCE) the routed messages come first, then the links
 * in order.  Only a whole message is reported (a streamed one once all its
 * packets are aside), so that its size is known and the receive that takes
 * it never waits.
 *
 * From any source, a message of another sender may arrive between the
 * probe and the receive and come first in that order; so the proc keeps
 * the message found (proc->probed) for the next point-to-point receive it
 * posts, which takes it when it asks for it: from the probe's source or
 * the message's, with the probe's tag or the message's.  A receive asking
 * for more (another sender's or any tag of that sender) is left to the
 * ordinary matching: an earlier message of that sender may be its due.
 */
#include <stdint.h>
#include <string.h>

#include "p2p/p2p.h"
#include "p2p/p2p_internal.h"
#include "p2p/request.h"
#include "base/error_detail.h"

/* A message found by a probe: its entry (struct tc__aside on port nbr, or
 * a routed struct tc__far with nbr -1), sender, tag, size and arrival. */
struct tc__probe_hit {
	void *msg;
	int nbr;
	int src, tag;
	size_t bytes;
	tc_time_t clock;
};

/* Whether a probe for tag takes the message from src with tag mtag: it
 * matches, and no posted receive does (port: the message's link, NULL for
 * a routed message). */
static bool tc__probe_takes(struct tc_proc *proc, struct tc__port *port, int src, int mtag, int tag)
{
	bool in_grq;
	return (tag == TC_ANY_TAG || mtag == tag) && !tc__earliest(proc, port, src, mtag, &in_grq);
}

static void tc__probe_aside_hit(struct tc_proc *proc, struct tc__port *port,
                                const struct tc__aside *a, struct tc__probe_hit *hit)
{
	*hit = (struct tc__probe_hit){.msg = (void *)(uintptr_t)a,
	                              .nbr = (int)(port - proc->ports),
	                              .src = port->peer,
	                              .tag = a->tag,
	                              .bytes = a->total,
	                              .clock = a->clock};
}

/* The first whole message of the port a probe for tag takes: the messages
 * aside, then the channel's, taken aside until one matches or one is not
 * whole yet.  Returns 1 (found), 0 (none yet) or TC_ENOMEM. */
static int tc__probe_port(struct tc_proc *proc, struct tc__port *port, int tag, struct tc__probe_hit *hit)
{
	struct tc__chan *ch = port->in;
	bool freed = false;
	int found = 0;
	if (port->ua_tail && tc__aside_partial(port->ua_tail))
		tc__aside_fill(port, &freed);
	for (struct tc__aside *a = port->ua_head; a && !found; a = a->next) {
		if (tc__aside_partial(a))
			goto out; /* the tail, its packets still coming */
		if (tc__probe_takes(proc, port, port->peer, a->tag, tag)) {
			tc__probe_aside_hit(proc, port, a, hit);
			found = 1;
		}
	}
	/* A receive streaming its message out of the channel: its packets
	 * are at the head. */
	if (found || (port->urq_head && port->urq_head->state == TC__REQ_STREAMING))
		goto out;
	for (;;) {
		struct tc__pkt_hdr h;
		if (!tc__chan_peek(ch, &h) || tc__coll_kind(h.kind) || !(h.flags & TC__PKT_FIRST))
			break; /* nothing, or a collective's message: the collective's to take */
		struct tc__aside *last = port->ua_tail;
		int k = tc__aside_take(port, &h, &freed);
		if (k < 0) {
			tc__set_detail("no memory to set a message of %zu bytes from rank %d aside "
			               "while probing",
			               (size_t)h.total, port->peer);
			found = k;
			break;
		}
		if (port->ua_tail == last)
			continue; /* a cancelled send, skipped */
		if (!k)
			break; /* its packets still coming: the ones behind it later */
		if (tc__probe_takes(proc, port, port->peer, port->ua_tail->tag, tag)) {
			tc__probe_aside_hit(proc, port, port->ua_tail, hit);
			found = 1;
			break;
		}
	}
out:
	if (freed)
		tc__space_freed(proc->team, ch);
	return found;
}

/* The first routed message from src (or any source) a probe for tag
 * takes, after taking the mailbox.  Returns 1 or 0. */
static int tc__probe_far(struct tc_proc *proc, int src, int tag, struct tc__probe_hit *hit)
{
	tc__pull_far(proc);
	for (struct tc__far *m = proc->fx_head; m; m = m->next) {
		if (src != TC_ANY_SOURCE && m->src != src)
			continue;
		/* Relaxed: a look only; a send cancelled after it is found by
		 * the receive's claim (tc__recv_far), which then matches anew. */
		if (m->sreq && atomic_load_explicit(&m->claim, memory_order_relaxed) == TC__CLAIM_CANCELLED)
			continue;
		if (tc__probe_takes(proc, NULL, m->src, m->tag, tag)) {
			*hit = (struct tc__probe_hit){.msg = m,
			                              .nbr = -1,
			                              .src = m->src,
			                              .tag = m->tag,
			                              .bytes = m->total,
			                              .clock = m->clock};
			return 1;
		}
	}
	return 0;
}

/* A probe's look (src: a rank or TC_ANY_SOURCE; nbr: src's neighbour
 * index or -1).  Returns 1 with *hit, 0, or TC_ENOMEM. */
static int tc__probe_find(struct tc_proc *proc, int src, int nbr, int tag, struct tc__probe_hit *hit)
{
	if (nbr >= 0)
		return tc__probe_port(proc, &proc->ports[nbr], tag, hit);
	int k = tc__probe_far(proc, src, tag, hit);
	for (int i = 0; !k && src == TC_ANY_SOURCE && i < proc->deg; i++)
		k = tc__probe_port(proc, &proc->ports[i], tag, hit);
	return k;
}

/* The probe for (src, tag) found hit: kept for the next receive, and *st
 * (may be NULL) filled in. */
static void tc__probe_found(struct tc_proc *proc, int src, int tag, const struct tc__probe_hit *hit,
                            tc_status *st)
{
	proc->probed = hit->msg;
	proc->probed_nbr = hit->nbr;
	proc->probed_src = hit->src;
	proc->probed_tag = hit->tag;
	proc->probed_asked_src = src;
	proc->probed_asked_tag = tag;
	if (st) {
		memset(st, 0, sizeof *st);
		st->source = hit->src;
		st->tag = hit->tag;
		st->bytes = hit->bytes;
	}
}

/* The receive req (set up, not queued) takes the message the last probe
 * found if it asks for it (see the top of this file); true when it did
 * (req is then complete, TC_ETRUNCATE included).  The probe's message is
 * forgotten either way: a receive from then on matches as usual. */
bool tc__take_probed(struct tc_proc *proc, struct tc__req *req)
{
	void *msg = proc->probed;
	proc->probed = NULL;
	if ((req->usrc != proc->probed_asked_src && req->usrc != proc->probed_src) ||
	    (req->utag != proc->probed_asked_tag && req->utag != proc->probed_tag))
		return false;
	if (proc->probed_nbr >= 0) {
		struct tc__port *port = &proc->ports[proc->probed_nbr];
		struct tc__aside *prev = NULL, *a = port->ua_head;
		for (; a && a != msg; a = a->next)
			prev = a;
		if (!a || tc__aside_partial(a))
			return false;
		tc__recv_aside(proc, port, req, a, prev);
		proc->nposts++;
		return true;
	}
	struct tc__far *prev = NULL, *m = proc->fx_head;
	for (; m && m != msg; m = m->next)
		prev = m;
	if (!m)
		return false;
	int k = tc__recv_far(proc, req, m);
	if (k <= 0) { /* taken, or cancelled by its sender: out of fx */
		if (prev)
			prev->next = m->next;
		else
			proc->fx_head = m->next;
		if (proc->fx_tail == m)
			proc->fx_tail = prev;
		tc__far_unref(m);
	}
	if (k < 0)
		return false; /* req untouched: matched as usual */
	proc->nposts++;
	return true;
}

struct tc__probe_wait {
	int src, nbr, tag, err;
	struct tc__probe_hit hit;
};

static bool tc__cond_probe(struct tc_proc *proc, void *ctx)
{
	struct tc__probe_wait *w = ctx;
	int k = tc__probe_find(proc, w->src, w->nbr, w->tag, &w->hit);
	if (k < 0)
		w->err = k;
	return k != 0;
}

/* A probe on a team whose point-to-point engine is another's (over MPI):
 * the engine's look (tc__p2p_engine's iprobe), which keeps the message it
 * finds for the receive that takes it, and for tc_probe the engine's wait
 * (its timeout's report and abort) until it finds one. */
struct tc__eprobe {
	int src, tag, err;
	tc_status st;
	tc_time_t clock;
};

static bool tc__cond_eprobe(struct tc_proc *proc, void *ctx)
{
	struct tc__eprobe *w = ctx;
	int k = proc->team->p2p_engine->iprobe(proc, w->src, w->tag, &w->st, &w->clock);
	if (k < 0)
		w->err = k;
	return k != 0;
}

static int tc__probe_engine(struct tc_proc *proc, int src, int tag, tc_status *st)
{
	struct tc__eprobe w = {.src = src, .tag = tag};
	if (!tc__cond_eprobe(proc, &w)) {
		tc__wait_named(proc, "tc_probe");
		int err = proc->team->p2p_engine->wait(proc, tc__cond_eprobe, &w);
		if (err)
			return err;
	}
	if (w.err)
		return w.err;
	if (st)
		*st = w.st;
	return TC_OK;
}

int tc_probe(struct tc_proc *proc, int src, int tag, tc_status *st)
{
	tc__clear_detail();
	int nbr = -1;
	int err = tc__check_call(proc, src, true, tag, NULL, 0, &nbr);
	if (err)
		return err;
	if (proc->team->p2p_engine)
		return tc__probe_engine(proc, src, tag, st);
	proc->probed = NULL;
	struct tc__probe_wait w = {.src = src, .nbr = nbr, .tag = tag};
	tc__progress(proc);
	if (!tc__cond_probe(proc, &w)) {
		tc__wait_named(proc, "tc_probe");
		proc->probe_wait = nbr >= 0 ? nbr + 1 : src == TC_ANY_SOURCE ? -2 : -1;
		err = tc__progress_wait(proc, tc__cond_probe, &w);
		proc->probe_wait = 0;
		if (err)
			return err;
	}
	if (w.err)
		return w.err;
	tc__probe_found(proc, src, tag, &w.hit, st);
	return TC_OK;
}

int tc_iprobe(struct tc_proc *proc, int src, int tag, int *flag, tc_status *st)
{
	tc__clear_detail();
	if (flag)
		*flag = 0;
	int nbr = -1;
	int err = tc__check_call(proc, src, true, tag, NULL, 0, &nbr);
	if (err)
		return err;
	if (!flag) {
		tc__set_detail("tc_iprobe: flag is NULL");
		return TC_EINVAL;
	}
	if (proc->team->p2p_engine) {
		struct tc__eprobe w = {.src = src, .tag = tag};
		if (!tc__cond_eprobe(proc, &w))
			return w.err;
		/* Emulated time: not before the model has delivered it (the
		 * engine keeps it meanwhile). */
		if (proc->team->emulate && (tc_time_t)tc__wall(proc->team) * TC_PS_PER_NS < w.clock)
			return TC_OK;
		if (st)
			*st = w.st;
		*flag = 1;
		return TC_OK;
	}
	proc->probed = NULL;
	tc__progress(proc);
	struct tc__probe_hit hit;
	int k = tc__probe_find(proc, src, nbr, tag, &hit);
	if (k < 0)
		return k;
	/* Emulated time: not before the model has delivered it. */
	if (k && proc->team->emulate && (tc_time_t)tc__wall(proc->team) * TC_PS_PER_NS < hit.clock)
		k = 0;
	if (k) {
		tc__probe_found(proc, src, tag, &hit, st);
		*flag = 1;
		return TC_OK;
	}
	if (proc->db.task) {
		/* As tc_test: a fibre polling in a loop lets the CPU's other
		 * ranks, perhaps the sender, run. */
		tc__yield();
	}
	return TC_OK;
}
