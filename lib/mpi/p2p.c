/* SPDX-License-Identifier: MIT */
/*
 * lib/mpi/p2p.c - the point-to-point calls of a team over MPI processes
 * (topocoll/p2p.h on a team of topocoll/mpi.h): the team's p2p_engine
 * (lib/p2p/p2p.h).  lib/p2p checks the arguments, charges the logical clock
 * as on the channels (a message to a rank that is not a neighbour over its
 * route) and makes the emulated wait; this file moves the messages.
 *
 * A message is a header (struct tc__mpi_p2p_hdr: its logical arrival, its
 * size) sent on pcomm, a duplicate of the team's communicator that
 * nothing else uses, under the caller's tag, so that MPI's own matching
 * (source or MPI_ANY_SOURCE, tag or MPI_ANY_TAG, non-overtaking per
 * sender) is the team's.  Up to TC__MPI_P2P_PACK bytes the data travel
 * packed behind the header; a larger message's header says so, and its
 * data follow on dcomm (another duplicate) under the sender's count of its
 * split messages to that process, which the header carries, so that the
 * receive whose header came takes exactly that message's data.  A
 * synchronous send's (tc_issend_tag) data are split whatever their size
 * and sent by MPI_Issend, so that it completes once a receive has taken
 * its header and posted the receive of its data (a probe that holds the
 * header does not complete it).  Every
 * receive posts a staging of a header and TC__MPI_P2P_PACK bytes, so an
 * MPI receive is never shorter than its message (MPI's truncation error is
 * fatal under MPICH's default handler): a message longer than the
 * receive's capacity completes it with TC_ETRUNCATE, and is held, in
 * order, for the next receive posted that matches it (its data, when
 * split, still in MPI).  A message goes directly to its destination,
 * whether or not a neighbour (its route is charged by the model only).
 *
 * Probes (tc_probe, tc_iprobe) look at the messages held first, then ask
 * MPI for the next message of pcomm that no posted receive has matched
 * (MPI_Improbe, the matched probe): that message is received at once
 * (MPI_Mrecv of its header and packed data, never more than a staging)
 * and held, last, so that no other receive or probe can take it from
 * MPI in between and the receive that asks for it takes exactly it; its
 * size is the header's (the payload's), its data, when split, still in
 * MPI under its own tag on dcomm.
 *
 * Waits poll (MPI_Test through the requests' test), yield the CPU (in
 * emulated mode sleep 20 us) when idle, look for another process's abort,
 * and time out after the team's timeout_ms: the report names the process,
 * its host and the peers waited for; the team is aborted everywhere.
 * Single-threaded: only the process's own rank calls.
 */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error_detail.h"
#include "mpi/engine.h"

static struct tc__mpi *tc__mpi_of(struct tc_proc *proc)
{
	return proc->team->engine;
}

static struct tc__mpi_p2p *tc__slot_get(struct tc__mpi *m)
{
	struct tc__mpi_p2p *s = m->free_slots;
	if (s)
		m->free_slots = s->next;
	else if (!(s = malloc(sizeof *s)))
		return NULL;
	s->next = s->prev = NULL;
	s->req = NULL;
	s->hq = s->dq = MPI_REQUEST_NULL;
	s->phase = 0;
	return s;
}

static void tc__slot_put(struct tc__mpi *m, struct tc__mpi_p2p *s)
{
	s->next = m->free_slots;
	m->free_slots = s;
}

/* The list of live slots (doubly linked: a request completes in any order). */
static void tc__live_add(struct tc__mpi *m, struct tc__mpi_p2p *s)
{
	s->prev = NULL;
	s->next = m->live;
	if (m->live)
		m->live->prev = s;
	m->live = s;
}

static void tc__live_del(struct tc__mpi *m, struct tc__mpi_p2p *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		m->live = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->next = s->prev = NULL;
}

/* What MPI accepts: an int count, a tag up to its MPI_TAG_UB. */
static int tc__mpi_p2p_args(const struct tc__mpi *m, const struct tc__req *req, const char *what)
{
	if (req->bytes > (size_t)INT_MAX) {
		tc__set_detail("%s of %zu bytes: over MPI a message is at most %d bytes", what,
		               req->bytes, INT_MAX);
		return TC_EOVERFLOW;
	}
	if (req->utag > m->tag_ub) {
		tc__set_detail("%s tag %d: over MPI a tag is at most %d (MPI_TAG_UB)", what,
		               req->utag, m->tag_ub);
		return TC_EINVAL;
	}
	return TC_OK;
}

static int tc__mpi_posted(int rc, const char *what)
{
	if (rc == MPI_SUCCESS)
		return TC_OK;
	tc__set_detail("posting a %s failed (MPI error %d)", what, rc);
	return TC_ESYS;
}

static int tc__p2p_isend(struct tc_proc *proc, struct tc__req *req)
{
	struct tc__mpi *m = tc__mpi_of(proc);
	int err = tc__mpi_p2p_args(m, req, "send");
	if (err)
		return err;
	struct tc__mpi_p2p *s = tc__slot_get(m);
	if (!s)
		return TC_ENOMEM;
	const size_t n = req->bytes;
	/* A synchronous send's data always follow on dcomm, by MPI_Issend:
	 * its receiver posts their receive only when a receive of its own
	 * takes the header (tc__take), not when a probe holds it, so the send
	 * completes once a receive has taken the message. */
	struct tc__mpi_p2p_hdr h = {.arrival = req->clock,
	                            .bytes = n,
	                            .split = req->sync || n > TC__MPI_P2P_PACK};
	if (h.split)
		h.dseq = m->dseq[req->peer]++ % 32768u; /* MPI_TAG_UB is at least 32767 */
	memcpy(s->stage, &h, sizeof h);
	int rc;
	if (!h.split) {
		if (n)
			memcpy(s->stage + sizeof h, req->sbuf, n);
		rc = MPI_Isend(s->stage, (int)(sizeof h + n), MPI_BYTE, req->peer, req->utag,
		               m->pcomm, &s->hq);
	} else {
		rc = MPI_Isend(s->stage, (int)sizeof h, MPI_BYTE, req->peer, req->utag, m->pcomm, &s->hq);
		if (rc == MPI_SUCCESS && req->sync)
			rc = MPI_Issend(req->sbuf, (int)n, MPI_BYTE, req->peer, (int)h.dseq,
			                m->dcomm, &s->dq);
		else if (rc == MPI_SUCCESS)
			rc = MPI_Isend(req->sbuf, (int)n, MPI_BYTE, req->peer, (int)h.dseq,
			               m->dcomm, &s->dq);
	}
	err = tc__mpi_posted(rc, "send");
	if (err) {
		/* A header alone reaches no receive that could complete: let
		 * it go. */
		if (s->hq != MPI_REQUEST_NULL)
			MPI_Request_free(&s->hq);
		tc__slot_put(m, s);
		return err;
	}
	s->req = req;
	req->ext = s;
	req->state = TC__REQ_STREAMING;
	tc__live_add(m, s);
	return TC_OK;
}

/* Whether the receive req takes a message from src with tag. */
static bool tc__matches(const struct tc__req *req, int src, int tag)
{
	return (req->usrc == TC_ANY_SOURCE || req->usrc == src) &&
	       (req->utag == TC_ANY_TAG || req->utag == tag);
}

static void tc__recv_done(struct tc_proc *proc, struct tc__req *req, int status)
{
	req->state = TC__REQ_DONE;
	req->status = status;
	req->ext = NULL;
	if (!status) {
		proc->stats.msgs_recv++;
		proc->stats.bytes_recv += req->received;
	}
}

/* The receive req takes the message whose header is s->h (from s->src
 * with s->tag; packed data in s->stage): complete, or its data posted.
 * A message longer than the receive is held (TC_ETRUNCATE).  Returns
 * 0 or TC_ESYS; s is req's slot, which this moves to where it belongs. */
static int tc__take(struct tc_proc *proc, struct tc__req *req, struct tc__mpi_p2p *s)
{
	struct tc__mpi *m = tc__mpi_of(proc);
	req->st_src = s->src;
	req->st_tag = s->tag;
	req->received = (size_t)s->h.bytes;
	req->clock = s->h.arrival;
	if (s->h.bytes > req->bytes) {
		/* Held for a later receive, after the others held. */
		struct tc__mpi_p2p **pp = &m->held;
		while (*pp)
			pp = &(*pp)->next;
		s->next = NULL;
		s->req = NULL;
		*pp = s;
		tc__recv_done(proc, req, TC_ETRUNCATE);
		return TC_OK;
	}
	if (!s->h.split) {
		if (s->h.bytes)
			memcpy(req->rbuf, s->stage + sizeof s->h, (size_t)s->h.bytes);
		tc__slot_put(m, s);
		tc__recv_done(proc, req, TC_OK);
		return TC_OK;
	}
	int rc = MPI_Irecv(req->rbuf, (int)s->h.bytes, MPI_BYTE, s->src, (int)s->h.dseq, m->dcomm,
	                   &s->dq);
	if (rc != MPI_SUCCESS) {
		tc__slot_put(m, s);
		tc__recv_done(proc, req, tc__mpi_posted(rc, "receive"));
		return TC_ESYS;
	}
	s->phase = 1;
	s->req = req;
	req->ext = s;
	req->state = TC__REQ_STREAMING;
	tc__live_add(m, s);
	return TC_OK;
}

static int tc__p2p_irecv(struct tc_proc *proc, struct tc__req *req)
{
	struct tc__mpi *m = tc__mpi_of(proc);
	int err = tc__mpi_p2p_args(m, req, "receive");
	if (err)
		return err;
	req->st_src = -1;
	req->st_tag = -1;
	/* A message held by an earlier receive comes first. */
	for (struct tc__mpi_p2p **pp = &m->held; *pp; pp = &(*pp)->next) {
		struct tc__mpi_p2p *s = *pp;
		if (!tc__matches(req, s->src, s->tag))
			continue;
		*pp = s->next;
		return tc__take(proc, req, s);
	}
	struct tc__mpi_p2p *s = tc__slot_get(m);
	if (!s)
		return TC_ENOMEM;
	int rc = MPI_Irecv(s->stage, (int)sizeof s->stage, MPI_BYTE,
	                   req->usrc == TC_ANY_SOURCE ? MPI_ANY_SOURCE : req->usrc,
	                   req->utag == TC_ANY_TAG ? MPI_ANY_TAG : req->utag, m->pcomm, &s->hq);
	err = tc__mpi_posted(rc, "receive");
	if (err) {
		tc__slot_put(m, s);
		return err;
	}
	s->req = req;
	req->ext = s;
	tc__live_add(m, s);
	return TC_OK;
}

/* Progress on req's MPI requests; true once it is complete. */
static bool tc__p2p_test(struct tc_proc *proc, struct tc__req *req)
{
	struct tc__mpi *m = tc__mpi_of(proc);
	struct tc__mpi_p2p *s = req->ext;
	if (req->state == TC__REQ_DONE)
		return true;
	if (!s)
		return false;
	int done = 0;
	MPI_Status st;
	if (req->kind == TC__KIND_SEND) {
		if (s->hq != MPI_REQUEST_NULL && (MPI_Test(&s->hq, &done, MPI_STATUS_IGNORE), !done))
			return false;
		if (s->dq != MPI_REQUEST_NULL && (MPI_Test(&s->dq, &done, MPI_STATUS_IGNORE), !done))
			return false;
		tc__live_del(m, s);
		tc__slot_put(m, s);
		req->ext = NULL;
		req->state = TC__REQ_DONE;
		proc->stats.msgs_sent++;
		proc->stats.bytes_sent += req->bytes;
		return true;
	}
	if (s->phase == 0) {
		MPI_Test(&s->hq, &done, &st);
		if (!done)
			return false;
		tc__live_del(m, s);
		int cnt = -1;
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		if (cnt < (int)sizeof s->h) {
			tc__set_detail("a message of %d bytes from process %d is no point-to-point "
			               "message of this library",
			               cnt, st.MPI_SOURCE);
			tc__slot_put(m, s);
			tc__recv_done(proc, req, TC_EMISMATCH);
			return true;
		}
		memcpy(&s->h, s->stage, sizeof s->h);
		s->src = st.MPI_SOURCE;
		s->tag = st.MPI_TAG;
		tc__take(proc, req, s);
		return req->state == TC__REQ_DONE;
	}
	MPI_Test(&s->dq, &done, MPI_STATUS_IGNORE);
	if (!done)
		return false;
	tc__live_del(m, s);
	tc__slot_put(m, s);
	tc__recv_done(proc, req, TC_OK);
	return true;
}

/* Whether a probe for (src, tag) takes a message from msrc with mtag. */
static bool tc__probe_matches(int src, int tag, int msrc, int mtag)
{
	return (src == TC_ANY_SOURCE || src == msrc) && (tag == TC_ANY_TAG || tag == mtag);
}

/* The probe's look (see the head of this file): 1 with *st and *clock,
 * 0 when no message matches yet, or an error. */
static int tc__p2p_iprobe(struct tc_proc *proc, int src, int tag, tc_status *st, tc_time_t *clock)
{
	struct tc__mpi *m = tc__mpi_of(proc);
	if (tag > m->tag_ub) {
		tc__set_detail("probe tag %d: over MPI a tag is at most %d (MPI_TAG_UB)", tag, m->tag_ub);
		return TC_EINVAL;
	}
	struct tc__mpi_p2p *s = m->held, **tail = &m->held;
	for (; s && !tc__probe_matches(src, tag, s->src, s->tag); s = s->next)
		tail = &s->next;
	if (!s) {
		while (*tail)
			tail = &(*tail)->next;
		/* The slot first: a message matched by MPI_Improbe must be
		 * received. */
		if (!(s = tc__slot_get(m))) {
			tc__set_detail("probe: no memory for a message's header");
			return TC_ENOMEM;
		}
		int flag = 0;
		MPI_Message msg = MPI_MESSAGE_NULL;
		MPI_Status ms;
		int rc = MPI_Improbe(src == TC_ANY_SOURCE ? MPI_ANY_SOURCE : src,
		                     tag == TC_ANY_TAG ? MPI_ANY_TAG : tag, m->pcomm, &flag, &msg, &ms);
		if (rc == MPI_SUCCESS && flag)
			rc = MPI_Mrecv(s->stage, (int)sizeof s->stage, MPI_BYTE, &msg, &ms);
		if (rc != MPI_SUCCESS || !flag) {
			tc__slot_put(m, s);
			m->probe_src = src;
			m->probe_tag = tag;
			return rc == MPI_SUCCESS ? 0 : tc__mpi_posted(rc, "probe");
		}
		int cnt = -1;
		MPI_Get_count(&ms, MPI_BYTE, &cnt);
		if (cnt < (int)sizeof s->h) {
			tc__set_detail("a message of %d bytes from process %d is no point-to-point "
			               "message of this library",
			               cnt, ms.MPI_SOURCE);
			tc__slot_put(m, s);
			return TC_EMISMATCH;
		}
		memcpy(&s->h, s->stage, sizeof s->h);
		s->src = ms.MPI_SOURCE;
		s->tag = ms.MPI_TAG;
		s->next = NULL;
		*tail = s;
	}
	memset(st, 0, sizeof *st);
	st->source = s->src;
	st->tag = s->tag;
	st->bytes = (size_t)s->h.bytes;
	*clock = s->h.arrival;
	return 1;
}

/* The timeout's report: this process, its host, what it waits for. */
static void tc__p2p_report(struct tc_proc *proc, uint64_t waited_ns)
{
	struct tc__mpi *m = tc__mpi_of(proc);
	char who[256];
	size_t k = 0;
	who[0] = '\0';
	for (const struct tc__mpi_p2p *s = m->live; s && k < sizeof who - 48; s = s->next) {
		const struct tc__req *r = s->req;
		const bool snd = r->kind == TC__KIND_SEND;
		if (!snd && r->usrc == TC_ANY_SOURCE)
			k += (size_t)snprintf(who + k, sizeof who - k, "%sany (receive)", k ? ", " : "");
		else
			k += (size_t)snprintf(who + k, sizeof who - k, "%s%d (%s)", k ? ", " : "",
			                      r->peer, snd ? "send" : "receive");
	}
	if (proc->cur_call && !strcmp(proc->cur_call, "tc_probe") && k < sizeof who - 48) {
		if (m->probe_src == TC_ANY_SOURCE)
			k += (size_t)snprintf(who + k, sizeof who - k, "%sany", k ? ", " : "");
		else
			k += (size_t)snprintf(who + k, sizeof who - k, "%s%d", k ? ", " : "",
			                      m->probe_src);
		if (m->probe_tag == TC_ANY_TAG)
			k += (size_t)snprintf(who + k, sizeof who - k, " (probe, any tag)");
		else
			k += (size_t)snprintf(who + k, sizeof who - k, " (probe, tag %d)", m->probe_tag);
	}
	tc__set_detail("%s: process %d on %s waited %llu ms for process(es) %s",
	               proc->cur_call ? proc->cur_call : "point-to-point", m->rank, m->host,
	               (unsigned long long)(waited_ns / 1000000u), k ? who : "-");
	if (proc->team->wd_fn)
		proc->team->wd_fn(proc->team->wd_arg, tc_error_detail());
	else
		fprintf(stderr, "topocoll: timeout: %s\n", tc_error_detail());
}

static int tc__p2p_wait(struct tc_proc *proc, tc__cond_fn cond, void *ctx)
{
	struct tc_team *team = proc->team;
	struct tc__mpi *m = team->engine;
	const uint64_t timeout = team->timeout_cfg_ns;
	uint64_t t0 = 0;
	for (unsigned idle = 0;; idle++) {
		if (cond(proc, ctx))
			return TC_OK;
		/* Relaxed: only this thread uses a team over MPI. */
		if (atomic_load_explicit(&team->aborted, memory_order_relaxed)) {
			tc__set_detail("the team is aborted");
			return TC_EABORTED;
		}
		if (idle < 64)
			continue;
		/* Idle: yield (the processes may share CPUs), or in emulated
		 * mode sleep, so that a process whose model time has come is
		 * not kept off its CPU by spinning ones (as lib/mpi/exec.c). */
		if (team->emulate)
			nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
		else
			sched_yield();
		if (idle % 64)
			continue;
		if (tc__mpi_take_abort(m)) {
			atomic_store_explicit(&team->aborted, 1, memory_order_relaxed);
			return TC_EABORTED;
		}
		uint64_t now = tc__now_ns();
		if (!t0)
			t0 = now;
		if (timeout && now - t0 > timeout) {
			tc__p2p_report(proc, now - t0);
			tc__mpi_abort(team, TC_ETIMEDOUT);
			return TC_ETIMEDOUT;
		}
	}
}

static int tc__p2p_cancel(struct tc_proc *proc, struct tc__req *req)
{
	struct tc__mpi *m = tc__mpi_of(proc);
	struct tc__mpi_p2p *s = req->ext;
	if (req->kind == TC__KIND_SEND || !s || s->phase != 0) {
		tc__set_detail("tc_cancel: over MPI only a receive no message has been matched to "
		               "can be cancelled (complete this one with tc_wait)");
		return TC_EPENDING;
	}
	MPI_Status st;
	int cancelled = 0;
	MPI_Cancel(&s->hq);
	MPI_Wait(&s->hq, &st); /* returns at once once cancelled, or matched */
	MPI_Test_cancelled(&st, &cancelled);
	if (!cancelled) {
		/* Matched meanwhile: take it as a test would have. */
		s->hq = MPI_REQUEST_NULL;
		tc__live_del(m, s);
		int cnt = -1;
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		if (cnt < (int)sizeof s->h) {
			tc__slot_put(m, s);
			tc__recv_done(proc, req, TC_EMISMATCH);
			return TC_OK;
		}
		memcpy(&s->h, s->stage, sizeof s->h);
		s->src = st.MPI_SOURCE;
		s->tag = st.MPI_TAG;
		tc__take(proc, req, s);
		return req->state == TC__REQ_DONE ? TC_OK : TC_EPENDING;
	}
	tc__live_del(m, s);
	tc__slot_put(m, s);
	req->ext = NULL;
	req->state = TC__REQ_DONE;
	req->status = TC_ECANCELED;
	req->clocked = 1;
	return TC_OK;
}

/* Lets the MPI requests of a slot not complete go: a receive's header
 * receive is cancelled and waited for (it returns at once: cancelled, or
 * matched to a header that arrives whole), a data receive cancelled where
 * MPI still can and freed, and the slot reused; a send's requests are
 * freed (MPI completes them) and its slot, whose staging a packed send
 * may still read, kept until the team's end. */
static void tc__slot_drop(struct tc__mpi *m, struct tc__mpi_p2p *s, bool send)
{
	if (!send && s->phase == 0 && s->hq != MPI_REQUEST_NULL) {
		MPI_Cancel(&s->hq);
		MPI_Wait(&s->hq, MPI_STATUS_IGNORE);
	}
	MPI_Request *q[2] = {&s->hq, &s->dq};
	for (int i = 0; i < 2; i++)
		if (*q[i] != MPI_REQUEST_NULL) {
			if (!send)
				MPI_Cancel(q[i]);
			MPI_Request_free(q[i]);
		}
	if (s->req)
		s->req->ext = NULL;
	s->req = NULL;
	if (!send) {
		tc__slot_put(m, s);
		return;
	}
	s->next = m->orphans;
	m->orphans = s;
}

/* A failed wait's request (nothing of it used any more but a send's
 * staging); a timeout or an abort of our own is told to the other
 * processes. */
static void tc__p2p_retire(struct tc_proc *proc, struct tc__req *req, int status)
{
	struct tc__mpi *m = tc__mpi_of(proc);
	struct tc__mpi_p2p *s = req->ext;
	if ((status == TC_ETIMEDOUT || status == TC_EABORTED) && !m->told)
		tc__mpi_abort(proc->team, status);
	if (!s)
		return;
	tc__live_del(m, s);
	tc__slot_drop(m, s, req->kind == TC__KIND_SEND);
}

const struct tc__p2p_engine tc__mpi_p2p = {
        .isend = tc__p2p_isend,
        .irecv = tc__p2p_irecv,
        .test = tc__p2p_test,
        .wait = tc__p2p_wait,
        .cancel = tc__p2p_cancel,
        .retire = tc__p2p_retire,
        .iprobe = tc__p2p_iprobe,
};

static void tc__slots_free(struct tc__mpi_p2p *s)
{
	while (s) {
		struct tc__mpi_p2p *n = s->next;
		free(s);
		s = n;
	}
}

void tc__mpi_p2p_free(struct tc__mpi *m, bool keep)
{
	/* Requests still live belong to calls never completed: let them go
	 * as a failed wait does. */
	while (m->live) {
		struct tc__mpi_p2p *s = m->live;
		tc__live_del(m, s);
		tc__slot_drop(m, s, s->req && s->req->kind == TC__KIND_SEND);
	}
	tc__slots_free(m->held);
	if (!keep) {
		tc__slots_free(m->orphans);
		m->orphans = NULL;
	}
	tc__slots_free(m->free_slots);
	m->held = m->free_slots = NULL;
	free(m->dseq);
	m->dseq = NULL;
}
