/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_p2p.c - point-to-point messages (MPI_Send, MPI_Recv,
 * MPI_Isend, MPI_Irecv, MPI_Sendrecv) over topocoll's tagged any-rank
 * messages, the queues of a communicator of one rank, and the requests of
 * the layer for messages and collectives alike: their table, MPI_Cancel,
 * MPI_Request_free.  Elsewhere: the probes (shim_probe.c), the send modes
 * (shim_sendmodes.c), persistent messages (shim_persist.c), the other
 * send-receive calls (shim_sendrecv.c) and the completion of requests,
 * MPI_Wait and its kin (shim_wait.c).
 *
 * A communicator is a team and the calling rank's proc in it, so ranks and
 * the matching of messages are the communicator's own (topocoll keeps the
 * messages of different teams apart as MPI's contexts do).  MPI_ANY_SOURCE
 * and MPI_ANY_TAG map onto TC_ANY_SOURCE and TC_ANY_TAG; a message reaches
 * any rank, a neighbour or not, the caller itself included (buffered:
 * MPI_Send to oneself returns before the receive is posted).  A
 * communicator of one rank has no team: its messages are queued by the
 * layer itself (below, "Communicators of one rank").  A buffer whose
 * datatype is not contiguous travels packed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "shim_p2p.h"

/* ---------------------------------------------------------------------
 * Requests: handles 1.. index a table of pointers to requests, each
 * allocated alone so that the tc_request inside never moves while active.
 */
static struct tcmpi__req **reqs;
static int nreqs;
static struct tcmpi__req *orphans; /* freed while active (below) */

static void orphans_poll(int end);

struct tcmpi__req *tcmpi__req_new(MPI_Comm comm, int kind, MPI_Request *h, const char *fn)
{
	if (orphans)
		orphans_poll(0);
	int i;
	for (i = 0; i < nreqs && reqs[i]; i++)
		;
	if (i == nreqs) {
		int n = nreqs ? 2 * nreqs : 64;
		struct tcmpi__req **g = realloc(reqs, sizeof *g * (size_t)n);
		if (!g)
			goto nomem;
		memset(g + nreqs, 0, sizeof *g * (size_t)(n - nreqs));
		reqs = g;
		nreqs = n;
	}
	reqs[i] = calloc(1, sizeof *reqs[i]);
	if (!reqs[i])
		goto nomem;
	reqs[i]->kind = kind;
	reqs[i]->comm = comm;
	*h = i + 1;
	return reqs[i];
nomem:
	(void)tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory for a request");
	return NULL;
}

struct tcmpi__req *tcmpi__req_of(MPI_Request h)
{
	return h >= 1 && h <= nreqs ? reqs[h - 1] : NULL;
}

static void self_unpost(struct tcmpi__req *q);

void tcmpi__req_drop(MPI_Request *h)
{
	struct tcmpi__req *q = tcmpi__req_of(*h);
	if (q) {
		if (q->selfpend)
			self_unpost(q);
		free(q->tmp);
		free(q->tmp2);
		tcmpi__vreq_free(q->v);
		tcmpi__nbr_free(q->nb);
		tcmpi__dtype_drop(q->t);
		tcmpi__op_drop(q->uop);
		free(q);
		reqs[*h - 1] = NULL;
	}
	*h = MPI_REQUEST_NULL;
}

/* ---------------------------------------------------------------------
 * Communicators of one rank (MPI_COMM_SELF, its duplicates and splits)
 * have no team: their messages stay in the layer.  Every message on such
 * a communicator comes from the calling rank, so a send is buffered at
 * once: it completes the first posted receive whose tag matches, or joins
 * the queue of unmatched messages; a receive takes the first queued
 * message whose tag matches, or is posted.  Matching thus follows the
 * order of sending and of posting, as MPI's.  A blocking receive or probe
 * that finds nothing, and a wait on a receive still posted, could only be
 * satisfied by a send of the calling rank, which is blocked in the call:
 * they fail at once with MPI_ERR_OTHER naming the deadlock (MPI would
 * wait forever).  A synchronous send (MPI_Issend, a started
 * MPI_Ssend_init) is queued the same way, a copy of its message keeping
 * a link to its request, which completes when a receive takes the
 * message (a receive or MPI_Mprobe that takes it out of the queue; not a
 * probe, nor a receive too small for it); until then a wait on it fails
 * as a wait on a posted receive does.  A blocking MPI_Ssend completes
 * only when a receive already posted takes its message; otherwise it
 * fails with that error, nothing queued.  The queues are the rank's alone (the layer is one copy
 * per rank, a rank one thread or fibre): nothing is locked.
 */
struct tcmpi__selfq {
	struct tcmpi__self_msg *msgs, **mtail; /* unmatched, in order of sending */
	struct tcmpi__req *posted, **ptail;    /* posted receives, in order */
};

static int tag_match(int want, int tag)
{
	return want == MPI_ANY_TAG || want == tag;
}

/* c's queues, made on first use; NULL only when out of memory. */
static struct tcmpi__selfq *selfq_of(struct tcmpi__comm *c)
{
	if (!c->selfq && (c->selfq = calloc(1, sizeof *c->selfq))) {
		c->selfq->mtail = &c->selfq->msgs;
		c->selfq->ptail = &c->selfq->posted;
	}
	return c->selfq;
}

/* Frees q, a request freed by the program while it was pending on a
 * communicator of one rank, now complete. */
static void self_orphan_free(struct tcmpi__req *q)
{
	free(q->tmp);
	free(q->tmp2);
	tcmpi__dtype_drop(q->t);
	free(q);
}

/* Message m, out of its queue, is taken by a receive: its synchronous
 * send, if any, is complete. */
static void self_taken(struct tcmpi__self_msg *m)
{
	struct tcmpi__req *q = m->sreq;
	if (!q)
		return;
	m->sreq = NULL;
	q->selfpend = 0;
	q->selfmsg = NULL;
	q->done = 3;
	if (q->orphan)
		self_orphan_free(q);
}

/* The first queued message of c whose tag matches tag, or NULL; taken
 * out of the queue when take. */
struct tcmpi__self_msg *tcmpi__self_find(struct tcmpi__comm *c, int tag, int take)
{
	struct tcmpi__selfq *sq = c->selfq;
	if (!sq)
		return NULL;
	for (struct tcmpi__self_msg **pp = &sq->msgs; *pp; pp = &(*pp)->next) {
		struct tcmpi__self_msg *m = *pp;
		if (!tag_match(tag, m->tag))
			continue;
		if (take) {
			*pp = m->next;
			if (sq->mtail == &m->next)
				sq->mtail = pp;
			self_taken(m);
		}
		return m;
	}
	return NULL;
}

/* bytes packed at in into count elements of t at buf (bytes / t->size
 * elements). */
static void self_unpack(const void *in, size_t bytes, const struct tcmpi__dtype *t, void *buf)
{
	if (!bytes)
		return;
	if (t->contig)
		memcpy(buf, in, bytes);
	else
		tcmpi__unpack_bytes(in, bytes, t, buf);
}

/* Completes receive q with a message of tag and bytes packed at data:
 * done (status source 0), or MPI_ERR_TRUNCATE when it does not fit
 * (nothing written; the caller leaves the message queued, as a too small
 * receive on a team does).  A request freed by the program is freed
 * here. */
static void self_deliver(struct tcmpi__req *q, int tag, const void *data, size_t bytes)
{
	q->selfpend = 0;
	q->snext = NULL;
	q->peer = 0;
	q->tag = tag;
	q->ucount = bytes;
	q->done = 3;
	if (bytes > q->cap)
		q->selferr = MPI_ERR_TRUNCATE;
	else
		self_unpack(data, bytes, q->t, q->ubuf);
	if (q->orphan)
		self_orphan_free(q);
}

/* A send of bytes packed at data with tag on c (of one rank): to the
 * first posted receive that matches (*queued NULL), or queued (copied;
 * *queued the message, whose synchronous send is sq).  MPI_SUCCESS or
 * the error (reported as fn's). */
static int self_send_as(struct tcmpi__comm *c, MPI_Comm comm, int tag, const void *data, size_t bytes,
                        struct tcmpi__req *sq, struct tcmpi__self_msg **queued, const char *fn)
{
	*queued = NULL;
	struct tcmpi__selfq *sq_ = selfq_of(c);
	if (!sq_)
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory for a message");
	for (struct tcmpi__req **pp = &sq_->posted; *pp; pp = &(*pp)->snext) {
		struct tcmpi__req *q = *pp;
		if (!tag_match(q->stag, tag))
			continue;
		*pp = q->snext;
		if (sq_->ptail == &q->snext)
			sq_->ptail = pp;
		int fits = bytes <= q->cap;
		self_deliver(q, tag, data, bytes);
		if (fits)
			return MPI_SUCCESS;
		break; /* truncated: the message stays queued */
	}
	struct tcmpi__self_msg *m = calloc(1, sizeof *m);
	void *copy = bytes ? malloc(bytes) : NULL;
	if (!m || (bytes && !copy)) {
		free(m);
		free(copy);
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn,
		                    "out of memory for a message of %zu bytes", bytes);
	}
	if (bytes)
		memcpy(copy, data, bytes);
	*m = (struct tcmpi__self_msg){.tag = tag, .bytes = bytes, .data = copy, .sreq = sq};
	*sq_->mtail = m;
	sq_->mtail = &m->next;
	*queued = m;
	return MPI_SUCCESS;
}

int tcmpi__self_send(struct tcmpi__comm *c, MPI_Comm comm, int tag, const void *data, size_t bytes,
                     const char *fn)
{
	struct tcmpi__self_msg *m;
	return self_send_as(c, comm, tag, data, bytes, NULL, &m, fn);
}

/* Takes message m out of c's queue and frees it (nothing received it). */
static void self_unqueue(struct tcmpi__comm *c, struct tcmpi__self_msg *m)
{
	struct tcmpi__selfq *sq = c->selfq;
	for (struct tcmpi__self_msg **pp = sq ? &sq->msgs : NULL; pp && *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			if (sq->mtail == &m->next)
				sq->mtail = pp;
			break;
		}
	free(m->data);
	free(m);
}

int tcmpi__self_ssend(struct tcmpi__comm *c, MPI_Comm comm, int tag, const void *data, size_t bytes,
                      struct tcmpi__req *q, const char *fn)
{
	struct tcmpi__self_msg *m;
	int rc = self_send_as(c, comm, tag, data, bytes, q, &m, fn);
	if (rc)
		return rc;
	if (m && !q) { /* MPI_Ssend: no receive took it, and none can */
		self_unqueue(c, m);
		return tcmpi__ssend_deadlock(comm, tag, fn);
	}
	if (m) {
		q->selfpend = 1;
		q->selfmsg = m;
	} else if (q) {
		q->done = 3;
	}
	return MPI_SUCCESS;
}

/* The receive q on c (of one rank): takes the first queued message that
 * matches q->stag, or is posted (q->selfpend).  MPI_SUCCESS or the error
 * (reported as fn's). */
int tcmpi__self_irecv(struct tcmpi__comm *c, MPI_Comm comm, struct tcmpi__req *q, const char *fn)
{
	const struct tcmpi__self_msg *m = tcmpi__self_find(c, q->stag, 0);
	if (m && m->bytes > q->cap) { /* truncated: the message stays queued */
		self_deliver(q, m->tag, m->data, m->bytes);
		return MPI_SUCCESS;
	}
	struct tcmpi__self_msg *t = m ? tcmpi__self_find(c, q->stag, 1) : NULL;
	if (t) {
		self_deliver(q, t->tag, t->data, t->bytes);
		free(t->data);
		free(t);
		return MPI_SUCCESS;
	}
	struct tcmpi__selfq *sq = selfq_of(c);
	if (!sq)
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory for a receive");
	q->selfpend = 1;
	q->snext = NULL;
	*sq->ptail = q;
	sq->ptail = &q->snext;
	return MPI_SUCCESS;
}

/* Takes posted receive q out of its communicator's list (if there); a
 * pending synchronous send's message out of its queue. */
static void self_unpost(struct tcmpi__req *q)
{
	struct tcmpi__comm *c = tcmpi__comm(q->comm);
	if (q->kind == TCMPI_REQ_SEND) {
		if (q->selfmsg && c)
			self_unqueue(c, q->selfmsg);
		q->selfmsg = NULL;
		return;
	}
	struct tcmpi__selfq *sq = c ? c->selfq : NULL;
	for (struct tcmpi__req **pp = sq ? &sq->posted : NULL; pp && *pp; pp = &(*pp)->snext)
		if (*pp == q) {
			*pp = q->snext;
			if (sq->ptail == &q->snext)
				sq->ptail = pp;
			break;
		}
	q->snext = NULL;
}

void tcmpi__selfq_free(struct tcmpi__comm *c)
{
	struct tcmpi__selfq *sq = c->selfq;
	if (!sq)
		return;
	for (struct tcmpi__self_msg *m = sq->msgs, *n; m; m = n) {
		n = m->next;
		if (m->sreq && m->sreq->orphan)
			self_orphan_free(m->sreq);
		else if (m->sreq) /* stays pending; waiting on it reports the deadlock */
			m->sreq->selfmsg = NULL;
		free(m->data);
		free(m);
	}
	for (struct tcmpi__req *q = sq->posted, *n; q; q = n) {
		n = q->snext;
		q->snext = NULL;
		if (q->orphan)
			self_orphan_free(q);
		/* else: stays pending; waiting on it reports the deadlock. */
	}
	free(sq);
	c->selfq = NULL;
}

/* The error of a call that would wait forever on a communicator of one
 * rank. */
int tcmpi__self_deadlock(MPI_Comm comm, int source, int tag, const char *fn)
{
	return tcmpi__error(comm, MPI_ERR_OTHER, fn,
	                    "no message with source %d and tag %d is queued on a communicator of "
	                    "one rank, and only the calling rank could send one: the call would "
	                    "wait forever (deadlock)",
	                    source, tag);
}

int tcmpi__ssend_deadlock(MPI_Comm comm, int tag, const char *fn)
{
	return tcmpi__error(comm, MPI_ERR_OTHER, fn,
	                    "a synchronous send with tag %d to the calling rank completes only "
	                    "when a receive of that rank takes its message, and none has: the "
	                    "call would wait forever (deadlock)",
	                    tag);
}

/* The error of a wait on q, pending on a communicator of one rank: a
 * receive no message reached, or a synchronous send no receive took. */
int tcmpi__self_wait_error(const struct tcmpi__req *q, const char *fn)
{
	if (q->kind == TCMPI_REQ_SEND)
		return tcmpi__ssend_deadlock(q->comm, q->tag, fn);
	return tcmpi__self_deadlock(q->comm, q->peer, q->stag, fn);
}

/* The start of MPI_Isend and MPI_Irecv: the arguments checked, a request of
 * kind for peer made (its tag: tag for a send, MPI_ANY_TAG until a receive
 * completes), and, for a datatype that is not contiguous, its staging
 * buffer q->tmp of count elements.  A request to MPI_PROC_NULL is done at
 * once (q->done).  MPI_SUCCESS with *c, *t and *q set, or the error
 * (reported; no request left). */
static int req_begin(MPI_Comm comm, int peer, int is_recv, MPI_Datatype datatype, int count,
                     int tag, MPI_Request *request, const char *fn, struct tcmpi__comm **c,
                     const struct tcmpi__dtype **t, struct tcmpi__req **q)
{
	int rc = check_msg(comm, peer, is_recv, datatype, count, tag, fn, c, t);
	if (rc)
		return rc;
	if (!request)
		return tcmpi__error(comm, MPI_ERR_REQUEST, fn, "NULL request");
	*q = tcmpi__req_new(comm, is_recv ? TCMPI_REQ_RECV : TCMPI_REQ_SEND, request, fn);
	if (!*q)
		return MPI_ERR_NO_MEM;
	(*q)->peer = peer;
	(*q)->tag = is_recv ? MPI_ANY_TAG : tag;
	if (peer == MPI_PROC_NULL) {
		(*q)->done = 1;
		return MPI_SUCCESS;
	}
	if (!(*t)->contig && !((*q)->tmp = tcmpi__alloc((size_t)count * (*t)->size))) {
		tcmpi__req_drop(request);
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	(*q)->proc = (*c)->proc;
	return MPI_SUCCESS;
}

/* The end of MPI_Isend and MPI_Irecv: q active once its tc request is
 * posted (tcrc 0), else dropped and the error reported. */
int tcmpi__req_posted(MPI_Comm comm, struct tcmpi__req *q, MPI_Request *request, int tcrc, const char *fn)
{
	if (tcrc) {
		tcmpi__req_drop(request);
		return tcmpi__tc_error(comm, tcrc, fn);
	}
	q->active = 1;
	return MPI_SUCCESS;
}

int tcmpi__isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request *request, int sync, const char *fn)
{
	struct tcmpi__comm *c;
	const struct tcmpi__dtype *t;
	struct tcmpi__req *q = NULL;
	int rc = req_begin(comm, dest, 0, datatype, count, tag, request, fn, &c, &t, &q);
	if (rc || q->done)
		return rc;
	const void *b = buf;
	if (q->tmp) {
		tcmpi__pack(buf, (size_t)count, t, q->tmp);
		b = q->tmp;
	}
	const size_t bytes = (size_t)count * t->size;
	if (!c->proc) { /* one rank: buffered, complete at once (synchronous: once taken) */
		q->peer = dest;
		q->ucount = bytes;
		rc = sync ? tcmpi__self_ssend(c, comm, tag, b, bytes, q, fn)
		          : tcmpi__self_send(c, comm, tag, b, bytes, fn);
		if (rc) {
			tcmpi__req_drop(request);
			return rc;
		}
		if (!sync)
			q->done = 3;
		return MPI_SUCCESS;
	}
	return tcmpi__req_posted(comm, q, request,
	                         sync ? tc_issend_tag(c->proc, dest, tag, b, bytes, &q->tr)
	                              : tc_isend_tag(c->proc, dest, tag, b, bytes, &q->tr),
	                         fn);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
	return tcmpi__isend(buf, count, datatype, dest, tag, comm, request, 0, __func__);
}

int tcmpi__irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                 MPI_Request *request, const char *fn)
{
	struct tcmpi__comm *c;
	const struct tcmpi__dtype *t;
	struct tcmpi__req *q = NULL;
	int rc = req_begin(comm, source, 1, datatype, count, tag, request, fn, &c, &t, &q);
	if (rc || q->done)
		return rc;
	void *b = buf;
	if (!c->proc) { /* one rank: a queued message, or posted */
		free(q->tmp);
		q->tmp = NULL;
		q->ubuf = buf;
		if (!(q->t = tcmpi__dtype_hold(t))) {
			tcmpi__req_drop(request);
			return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
		}
		q->cap = (size_t)count * t->size;
		q->stag = tag;
		if ((rc = tcmpi__self_irecv(c, comm, q, fn)))
			tcmpi__req_drop(request);
		return rc;
	}
	if (q->tmp) {
		b = q->tmp;
		q->ubuf = buf;
		if (!(q->t = tcmpi__dtype_hold(t))) {
			tcmpi__req_drop(request);
			return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
		}
	}
	return tcmpi__req_posted(comm, q, request,
	                         tc_irecv_tag(c->proc, tc_src(source), tc_tag(tag), b,
	                                      (size_t)count * t->size, &q->tr),
	                         fn);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
	return tcmpi__irecv(buf, count, datatype, source, tag, comm, request, __func__);
}

/* ---------------------------------------------------------------------
 * Requests freed while active.  MPI lets a program free a request it will
 * not wait for (MPI_Request_free): the operation goes on and completes on
 * its own, and the program learns of it by other means (a reply, a
 * barrier).  Waiting for it in MPI_Request_free would block, for ever
 * when the matching send is the caller's own later one or comes after a
 * collective the caller has yet to join.  Such a request leaves the
 * handle table for this list; it is looked at without blocking whenever a
 * request is made or freed, and finished (a receive's packed data
 * unpacked; errors are not reported: no handle is left to report them on)
 * and freed once its tc request has completed.  MPI_Finalize completes
 * or cancels the ones left (tcmpi__orphans_end).
 */

/* Finishes orphan q, whose tc request completed with tcrc, and frees it. */
static void orphan_free(struct tcmpi__req *q, int tcrc)
{
	if (!tcrc && q->kind == TCMPI_REQ_RECV && q->tmp) {
		tc_status ts = {0};
		if (tc_request_status(&q->tr, &ts) == 0)
			tcmpi__unpack_bytes(q->tmp, ts.bytes, q->t, q->ubuf);
	} else if (!tcrc && q->kind == TCMPI_REQ_COLL) {
		if (q->tmp && q->t)
			tcmpi__unpack((unsigned char *)q->tmp + q->toff, q->ucount, q->t, q->ubuf);
		if (q->v)
			tcmpi__vreq_finish(q);
	}
	if (q->persistent && q->proc && q->kind == TCMPI_REQ_COLL && !q->nb)
		(void)tc_request_free(q->proc, &q->tr);
	free(q->tmp);
	free(q->tmp2);
	tcmpi__vreq_free(q->v);
	tcmpi__nbr_free(q->nb);
	tcmpi__dtype_drop(q->t);
	tcmpi__op_drop(q->uop);
	free(q);
}

/* Frees the orphans whose tc request has completed; with end, completes
 * the others first: a receive no message has reached is cancelled, any
 * other request waited for. */
static void orphans_poll(int end)
{
	for (struct tcmpi__req **pp = &orphans; *pp;) {
		struct tcmpi__req *q = *pp;
		tc_status ts;
		if (q->nb) { /* several topocoll requests: progressed */
			int done;
			int tcrc = tcmpi__nbr_progress(q->nb, 0, &done);
			if (!done && !end) {
				pp = &q->onext;
				continue;
			}
			if (!done)
				tcrc = tcmpi__nbr_progress(q->nb, 1, &done);
			*pp = q->onext;
			orphan_free(q, tcrc);
			continue;
		}
		if (tc_request_status(&q->tr, &ts) == TC_EPENDING) {
			if (!end) {
				pp = &q->onext;
				continue;
			}
			if (q->kind != TCMPI_REQ_COLL)
				(void)tc_cancel(q->proc, &q->tr);
		}
		*pp = q->onext;
		orphan_free(q, tc_wait(q->proc, &q->tr, NULL));
	}
}

void tcmpi__orphans_end(void)
{
	orphans_poll(1);
}

void tcmpi__comm_settle(MPI_Comm comm)
{
	const struct tcmpi__comm *c = tcmpi__comm(comm);
	if (c && c->proc)
		tcmpi__bsend_settle(c->proc);
	for (int i = 0; i < nreqs; i++) {
		struct tcmpi__req *q = reqs[i];
		if (q && q->comm == comm && q->active && q->proc) {
			int done;
			q->tcrc = tcmpi__part_test(q, 1, &done);
			q->active = 0;
			q->done = 2; /* as MPI_Testall leaves it: finished by its wait */
		}
	}
	for (struct tcmpi__req **pp = &orphans; *pp;) {
		struct tcmpi__req *q = *pp;
		if (q->comm != comm || !q->proc) {
			pp = &q->onext;
			continue;
		}
		*pp = q->onext;
		int done;
		orphan_free(q, tcmpi__part_test(q, 1, &done));
	}
}

int MPI_Request_free(MPI_Request *request)
{
	int rc = tcmpi__check_req(request, __func__);
	if (rc)
		return rc;
	struct tcmpi__req *q = tcmpi__req_of(*request);
	if (!q)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_REQUEST, __func__, "MPI_REQUEST_NULL given");
	if (q->kind == TCMPI_REQ_PAIR) {
		/* Its parts go on without it, freed as any request is. */
		for (int i = 0; i < 2; i++)
			if (q->psub[i] != MPI_REQUEST_NULL)
				(void)MPI_Request_free(&q->psub[i]);
		tcmpi__req_drop(request);
		return MPI_SUCCESS;
	}
	if (q->selfpend) {
		/* A posted receive on a communicator of one rank: it stays posted
		 * and is freed when a send completes it (or with its
		 * communicator); a synchronous send's message stays queued, the
		 * request freed when a receive takes it. */
		q->orphan = 1;
		reqs[*request - 1] = NULL;
		*request = MPI_REQUEST_NULL;
		return MPI_SUCCESS;
	}
	if (q->active) {
		/* It goes on without its handle: an orphan. */
		q->active = 0;
		q->onext = orphans;
		orphans = q;
		reqs[*request - 1] = NULL;
		*request = MPI_REQUEST_NULL;
		orphans_poll(0);
		return MPI_SUCCESS;
	}
	const struct tcmpi__comm *c = tcmpi__comm(q->comm);
	if (q->persistent && q->proc && q->kind == TCMPI_REQ_COLL && !q->nb && c &&
	    c->proc == q->proc) /* else its team is freed, and the request with it */
		(void)tc_request_free(q->proc, &q->tr);
	tcmpi__req_drop(request);
	return rc;
}

/* ---------------------------------------------------------------------
 * Blocking calls.
 */
int tcmpi__send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                int sync, const char *fn)
{
	struct tcmpi__comm *c;
	const struct tcmpi__dtype *t;
	int rc = check_msg(comm, dest, 0, datatype, count, tag, fn, &c, &t);
	if (rc)
		return rc;
	if (dest == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (sync && c->proc && dest == tc_rank(c->proc))
		return tcmpi__ssend_deadlock(comm, tag, fn); /* as topocoll's tc_ssend */
	void *tmp = NULL;
	const void *b = buf;
	if (!t->contig) {
		b = tmp = tcmpi__alloc((size_t)count * t->size);
		if (!tmp)
			return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
		tcmpi__pack(buf, (size_t)count, t, tmp);
	}
	const size_t bytes = (size_t)count * t->size;
	if (!c->proc) { /* one rank: buffered (synchronous: taken by a posted receive) */
		rc = sync ? tcmpi__self_ssend(c, comm, tag, b, bytes, NULL, fn)
		          : tcmpi__self_send(c, comm, tag, b, bytes, fn);
		free(tmp);
		return rc;
	}
	int tcrc = sync ? tc_ssend_tag(c->proc, dest, tag, b, bytes)
	                : tc_send_tag(c->proc, dest, tag, b, bytes);
	free(tmp);
	return tcrc ? tcmpi__tc_error(comm, tcrc, fn) : MPI_SUCCESS;
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	return tcmpi__send(buf, count, datatype, dest, tag, comm, 0, __func__);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
	struct tcmpi__comm *c;
	const struct tcmpi__dtype *t;
	int rc = check_msg(comm, source, 1, datatype, count, tag, __func__, &c, &t);
	if (rc)
		return rc;
	if (source == MPI_PROC_NULL) {
		set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
		return MPI_SUCCESS;
	}
	size_t cap = (size_t)count * t->size;
	if (!c->proc) { /* one rank: the first queued message that matches */
		const struct tcmpi__self_msg *p = tcmpi__self_find(c, tag, 0);
		if (!p)
			return tcmpi__self_deadlock(comm, source, tag, __func__);
		if (p->bytes > cap) /* the message stays queued */
			return tcmpi__error(comm, MPI_ERR_TRUNCATE, __func__,
			                    "a message of %zu bytes into a buffer of %zu bytes",
			                    p->bytes, cap);
		struct tcmpi__self_msg *m = tcmpi__self_find(c, tag, 1);
		self_unpack(m->data, m->bytes, t, buf);
		set_status(status, 0, m->tag, m->bytes);
		free(m->data);
		free(m);
		return MPI_SUCCESS;
	}
	void *tmp = NULL, *b = buf;
	if (!t->contig) {
		b = tmp = tcmpi__alloc(cap);
		if (!tmp)
			return tcmpi__error(comm, MPI_ERR_NO_MEM, __func__, "out of memory");
	}
	tc_status ts = {0};
	int tcrc = tc_recv_tag(c->proc, tc_src(source), tc_tag(tag), b, cap, &ts);
	if (!tcrc && tmp)
		tcmpi__unpack_bytes(tmp, ts.bytes, t, buf);
	free(tmp);
	if (tcrc)
		return tcmpi__tc_error(comm, tcrc, __func__);
	set_status(status, ts.source, ts.tag, ts.bytes);
	return MPI_SUCCESS;
}

/* Takes back receive *h, just posted, whose send could not start: no
 * message reaches it (cancelled, or unposted on a communicator of one
 * rank); its handle freed. */
void tcmpi__undo_recv(MPI_Request *h)
{
	struct tcmpi__req *q = tcmpi__req_of(*h);
	if (q && q->active) {
		(void)tc_cancel(q->proc, &q->tr);
		(void)tc_wait(q->proc, &q->tr, NULL);
	}
	tcmpi__req_drop(h);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
	/* A receive posted first, then the send: no deadlock whatever the
	 * sizes, tags and wildcards. */
	MPI_Request r[2];
	int rc = tcmpi__irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0], __func__);
	if (rc)
		return rc;
	rc = tcmpi__isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1], 0, __func__);
	if (rc) {
		tcmpi__undo_recv(&r[0]);
		return rc;
	}
	rc = tcmpi__wait_one(&r[1], MPI_STATUS_IGNORE, __func__);
	int rc2 = tcmpi__wait_one(&r[0], status, __func__);
	return rc ? rc : rc2;
}

/* ---------------------------------------------------------------------
 * Cancelling (MPI_Cancel): a receive no message has matched is cancelled
 * (tc_cancel; on a communicator of one rank, taken out of the posted
 * receives), its buffer untouched and its status saying so
 * (MPI_Test_cancelled).  A send is cancelled only when topocoll can take
 * it back whole: a single-copy message that no receive has claimed yet
 * (p2p.h), a synchronous one among them at any size, and on a
 * communicator of one rank a synchronous send's message still queued;
 * any other send (a streamed message, copied at once; a standard one to
 * oneself; a buffered one, in the attached buffer; a standard one on a
 * communicator of one rank, queued at once) has left already, and MPI
 * lets the cancel fail: its status says not cancelled.  MPI_Cancel only marks: the wait
 * or test that completes the request tells which.  A collective request
 * cannot be cancelled (MPI makes it erroneous): MPI_ERR_REQUEST, the
 * request unchanged.
 */
int MPI_Cancel(MPI_Request *request)
{
	int rc = tcmpi__check_req(request, __func__);
	if (rc)
		return rc;
	struct tcmpi__req *q = tcmpi__req_of(*request);
	if (!q)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_REQUEST, __func__, "MPI_REQUEST_NULL given");
	if (q->kind == TCMPI_REQ_COLL)
		return tcmpi__error(q->comm, MPI_ERR_REQUEST, __func__,
		                    "a collective's request cannot be cancelled (MPI makes it "
		                    "erroneous); complete it with a wait or test");
	if (q->kind == TCMPI_REQ_PAIR)
		return tcmpi__error(q->comm, MPI_ERR_UNSUPPORTED_OPERATION, __func__,
		                    "an MPI_Isendrecv's request cannot be cancelled here (its send "
		                    "and receive would be cancelled apart); complete it with a wait "
		                    "or test");
	if (!q->active && !q->done && !q->selfpend)
		return tcmpi__error(q->comm, MPI_ERR_REQUEST, __func__,
		                    "the persistent request is not active (MPI_Start it first)");
	if (q->selfpend) {
		self_unpost(q);
		q->selfpend = 0;
		q->cancelled = 1;
		q->done = 3;
		return MPI_SUCCESS;
	}
	if (q->active) {
		/* 0: cancelled, or complete already (its wait says which);
		 * TC_EPENDING: too late, it completes normally. */
		const int tcrc = tc_cancel(q->proc, &q->tr);
		if (tcrc && tcrc != TC_EPENDING)
			return tcmpi__tc_error(q->comm, tcrc, __func__);
	}
	return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!status || status == MPI_STATUS_IGNORE || !flag)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL status or flag");
	*flag = status->tcmpi_cancelled != 0;
	return MPI_SUCCESS;
}

int MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!status || status == MPI_STATUS_IGNORE)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL status");
	status->tcmpi_cancelled = flag != 0;
	return MPI_SUCCESS;
}

/* Handles are ints in C and Fortran: a request converts to itself, and a
 * Fortran handle that names no request (never made, or freed) to
 * MPI_REQUEST_NULL. */
MPI_Fint MPI_Request_c2f(MPI_Request request)
{
	return (MPI_Fint)request;
}

MPI_Request MPI_Request_f2c(MPI_Fint request)
{
	return tcmpi__req_of((MPI_Request)request) ? (MPI_Request)request : MPI_REQUEST_NULL;
}
