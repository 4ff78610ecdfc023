/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_persist.c - persistent messages: MPI_Send_init,
 * MPI_Bsend_init, MPI_Rsend_init, MPI_Ssend_init, MPI_Recv_init, and
 * MPI_Start and MPI_Startall (of every persistent request, collectives'
 * too).  The request keeps the call's arguments (its own copy of the
 * datatype, and a staging buffer when that is not contiguous); each start
 * makes the nonblocking call they describe, reading the send buffer then,
 * and the waits and tests (shim_p2p.c) complete it as they do an Isend's
 * or Irecv's, leaving it inactive for the next start.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "shim_p2p.h"

enum { MODE_STD = 0, MODE_BUFFERED, MODE_SYNC };

static int p2p_init(const void *buf, int count, MPI_Datatype datatype, int peer, int tag,
                    MPI_Comm comm, MPI_Request *request, int is_recv, int mode, const char *fn)
{
	struct tcmpi__comm *c;
	const struct tcmpi__dtype *t;
	int rc = check_msg(comm, peer, is_recv, datatype, count, tag, fn, &c, &t);
	if (rc)
		return rc;
	if (!request)
		return tcmpi__error(comm, MPI_ERR_REQUEST, fn, "NULL request");
	struct tcmpi__req *q =
	        tcmpi__req_new(comm, is_recv ? TCMPI_REQ_RECV : TCMPI_REQ_SEND, request, fn);
	if (!q)
		return MPI_ERR_NO_MEM;
	q->persistent = 1;
	q->pmode = mode;
	q->pcount = count;
	q->ppeer = peer;
	q->ptag = tag;
	q->proc = c->proc;
	q->sbuf = buf;
	q->ubuf = (void *)(uintptr_t)buf; /* a receive's: MPI gives it non-const */
	q->cap = (size_t)count * t->size;
	const int staged = !t->contig && c->proc && mode != MODE_BUFFERED;
	if (!(q->t = tcmpi__dtype_hold(t)) || (staged && !(q->tmp = tcmpi__alloc(q->cap)))) {
		tcmpi__req_drop(request);
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	return MPI_SUCCESS;
}

/* Starts persistent message q: MPI_SUCCESS with q active or complete, or
 * the error (reported; q stays inactive). */
static int p2p_start(struct tcmpi__req *q, const char *fn)
{
	/* The communicator must still be the one of the init (a handle freed
	 * and given to a new communicator has another team). */
	struct tcmpi__comm *c = tcmpi__comm(q->comm);
	if (!c || c->proc != q->proc)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, fn,
		                    "the request's communicator %d has been freed", q->comm);
	q->peer = q->ppeer;
	q->tag = q->kind == TCMPI_REQ_RECV ? MPI_ANY_TAG : q->ptag;
	q->selferr = 0;
	q->cancelled = 0;
	if (q->ppeer == MPI_PROC_NULL) {
		q->done = 1;
		return MPI_SUCCESS;
	}
	const size_t bytes = (size_t)q->pcount * q->t->size;
	if (q->kind == TCMPI_REQ_SEND && q->pmode == MODE_BUFFERED) {
		int rc = tcmpi__bsend_checked(c, q->comm, q->sbuf, (size_t)q->pcount, q->t,
		                              q->ppeer, q->ptag, fn);
		if (!rc) {
			q->ucount = bytes;
			q->done = 3;
		}
		return rc;
	}
	if (q->kind == TCMPI_REQ_RECV) {
		if (!c->proc) {
			q->stag = q->ptag;
			return tcmpi__self_irecv(c, q->comm, q, fn);
		}
		const int tcrc = tc_irecv_tag(c->proc, tc_src(q->ppeer), tc_tag(q->ptag),
		                              q->tmp ? q->tmp : q->ubuf, bytes, &q->tr);
		if (tcrc)
			return tcmpi__tc_error(q->comm, tcrc, fn);
		q->active = 1;
		return MPI_SUCCESS;
	}
	const void *b = q->sbuf;
	void *tmp = NULL;
	if (!q->t->contig && !c->proc) { /* one rank: packed for the queue's copy */
		if (!(tmp = tcmpi__alloc(bytes)))
			return tcmpi__error(q->comm, MPI_ERR_NO_MEM, fn, "out of memory");
		b = tmp;
	} else if (q->tmp) {
		b = q->tmp;
	}
	if (b != q->sbuf)
		tcmpi__pack(q->sbuf, (size_t)q->pcount, q->t, (void *)(uintptr_t)b);
	if (!c->proc) {
		q->ucount = bytes;
		int rc = q->pmode == MODE_SYNC
		                 ? tcmpi__self_ssend(c, q->comm, q->ptag, b, bytes, q, fn)
		                 : tcmpi__self_send(c, q->comm, q->ptag, b, bytes, fn);
		free(tmp);
		if (!rc && q->pmode != MODE_SYNC)
			q->done = 3;
		return rc;
	}
	const int tcrc = q->pmode == MODE_SYNC
	                         ? tc_issend_tag(c->proc, q->ppeer, q->ptag, b, bytes, &q->tr)
	                         : tc_isend_tag(c->proc, q->ppeer, q->ptag, b, bytes, &q->tr);
	if (tcrc)
		return tcmpi__tc_error(q->comm, tcrc, fn);
	q->active = 1;
	return MPI_SUCCESS;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
	return p2p_init(buf, count, datatype, dest, tag, comm, request, 0, MODE_STD, __func__);
}

/* A ready send is a standard one (shim_sendmodes.c). */
int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
	return p2p_init(buf, count, datatype, dest, tag, comm, request, 0, MODE_STD, __func__);
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
	return p2p_init(buf, count, datatype, dest, tag, comm, request, 0, MODE_BUFFERED, __func__);
}

/* Each start makes an MPI_Issend (shim_sendmodes.c). */
int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
	return p2p_init(buf, count, datatype, dest, tag, comm, request, 0, MODE_SYNC, __func__);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request *request)
{
	return p2p_init(buf, count, datatype, source, tag, comm, request, 1, MODE_STD, __func__);
}

int MPI_Start(MPI_Request *request)
{
	int rc = tcmpi__check_req(request, __func__);
	if (rc)
		return rc;
	struct tcmpi__req *q = tcmpi__req_of(*request);
	if (!q || !q->persistent)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_REQUEST, __func__, "not a persistent request");
	if (q->active || ((q->kind != TCMPI_REQ_COLL || q->nb) && (q->done || q->selfpend)))
		return tcmpi__error(q->comm, MPI_ERR_REQUEST, __func__,
		                    "request already active (started, and not completed by a wait "
		                    "or test)");
	q->unpacked = 0;
	if (q->kind != TCMPI_REQ_COLL)
		return p2p_start(q, __func__);
	if (q->nb)
		return tcmpi__nbr_start(q, __func__);
	/* A collective's request is its team's (but one that needs none, whose
	 * proc is NULL): gone with its communicator (a handle freed and given
	 * to a new communicator has another team). */
	const struct tcmpi__comm *c = tcmpi__comm(q->comm);
	if (!c || (q->proc && c->proc != q->proc))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, __func__,
		                    "the request's communicator %d has been freed", q->comm);
	if (q->v)
		tcmpi__vreq_start(q);
	if (!q->proc) { /* a communicator of one rank: complete at once */
		if (q->lbytes && q->lsrc != q->ldst)
			memmove(q->ldst, q->lsrc, q->lbytes);
		q->done = 1;
		return MPI_SUCCESS;
	}
	int tcrc = tc_start(q->proc, &q->tr);
	if (tcrc)
		return tcmpi__tc_error(q->comm, tcrc, __func__);
	q->active = 1;
	return MPI_SUCCESS;
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
	int rc = tcmpi__check_reqs(count, array_of_requests, __func__);
	for (int i = 0; i < count && !rc; i++)
		rc = MPI_Start(&array_of_requests[i]);
	return rc;
}
