/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_sendrecv.c - MPI_Isendrecv, MPI_Isendrecv_replace and
 * MPI_Sendrecv_replace: a request of two parts (TCMPI_REQ_PAIR), a receive
 * posted first and then a send, as MPI_Sendrecv (shim_p2p.c) makes them,
 * completed together by the waits and tests (tcmpi__pair_progress), with
 * the receive's status.  The replacing forms send a packed copy of the
 * buffer, taken at the call, which the send's request owns, and receive
 * into the buffer itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "shim_p2p.h"

/* A send of bytes packed at data (malloc'ed; the request owns it from now
 * on, even on error) to dest with tag on c: *h, or the error (reported as
 * fn's). */
static int isend_owned(MPI_Comm comm, struct tcmpi__comm *c, int dest, int tag, void *data,
                       size_t bytes, MPI_Request *h, const char *fn)
{
	struct tcmpi__req *q = tcmpi__req_new(comm, TCMPI_REQ_SEND, h, fn);
	if (!q) {
		free(data);
		return MPI_ERR_NO_MEM;
	}
	q->peer = dest;
	q->tag = tag;
	q->tmp2 = data;
	if (dest == MPI_PROC_NULL) {
		q->done = 1;
		return MPI_SUCCESS;
	}
	if (!c->proc) {
		int rc = tcmpi__self_send(c, comm, tag, data, bytes, fn);
		if (rc) {
			tcmpi__req_drop(h);
			return rc;
		}
		q->ucount = bytes;
		q->done = 3;
		return MPI_SUCCESS;
	}
	q->proc = c->proc;
	return tcmpi__req_posted(comm, q, h, tc_isend_tag(c->proc, dest, tag, data, bytes, &q->tr), fn);
}

/* The pair's send side of a replacing call: a packed copy of count
 * elements of datatype at buf, sent to dest. */
static int send_copy(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request *h, const char *fn)
{
	struct tcmpi__comm *c;
	const struct tcmpi__dtype *t;
	int rc = check_msg(comm, dest, 0, datatype, count, tag, fn, &c, &t);
	if (rc)
		return rc;
	const size_t bytes = (size_t)count * t->size;
	void *copy = NULL;
	if (dest != MPI_PROC_NULL && bytes) {
		if (!(copy = tcmpi__alloc(bytes)))
			return tcmpi__error(comm, MPI_ERR_NO_MEM, fn,
			                    "out of memory for a copy of %zu bytes", bytes);
		tcmpi__pack(buf, (size_t)count, t, copy);
	}
	return isend_owned(comm, c, dest, tag, copy, bytes, h, fn);
}

static int isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                     int recvtag, MPI_Comm comm, int replace, MPI_Request *request, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (!request)
		return tcmpi__error(comm, MPI_ERR_REQUEST, fn, "NULL request");
	/* The replacing forms check the send's arguments before the receive
	 * is posted, and copy the buffer before a message can reach it. */
	MPI_Request r = MPI_REQUEST_NULL, sd = MPI_REQUEST_NULL;
	if (replace && (rc = send_copy(sendbuf, sendcount, sendtype, dest, sendtag, comm, &sd, fn)))
		return rc;
	struct tcmpi__req *q = tcmpi__req_new(comm, TCMPI_REQ_PAIR, request, fn);
	if (!q) {
		if (sd != MPI_REQUEST_NULL)
			(void)MPI_Request_free(&sd);
		return MPI_ERR_NO_MEM;
	}
	rc = tcmpi__irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r, fn);
	if (!rc && !replace)
		rc = tcmpi__isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &sd, 0, fn);
	if (rc) {
		if (r != MPI_REQUEST_NULL)
			tcmpi__undo_recv(&r);
		if (sd != MPI_REQUEST_NULL)
			(void)MPI_Request_free(&sd); /* sent already: it goes on */
		tcmpi__req_drop(request);
		return rc;
	}
	q->psub[0] = r;
	q->psub[1] = sd;
	q->peer = source;
	q->tag = recvtag;
	q->active = 1;
	/* A part done at once (MPI_PROC_NULL, a communicator of one rank) is
	 * taken now, so that the pair's state is its parts'. */
	(void)tcmpi__pair_progress(q, 0, fn);
	return MPI_SUCCESS;
}

int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Request *request)
{
	return isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
	                 source, recvtag, comm, 0, request, __func__);
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
	return isendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag,
	                 comm, 1, request, __func__);
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Request h = MPI_REQUEST_NULL;
	int rc = isendrecv(buf, count, datatype, dest, sendtag, buf, count, datatype, source,
	                   recvtag, comm, 1, &h, __func__);
	if (rc)
		return rc;
	rc = tcmpi__wait_one(&h, status, __func__);
	struct tcmpi__req *q = tcmpi__req_of(h);
	if (q) {
		/* A receive that nothing can satisfy (a communicator of one
		 * rank): taken back, so that no later message reaches buf. */
		if (q->psub[0] != MPI_REQUEST_NULL)
			tcmpi__undo_recv(&q->psub[0]);
		(void)MPI_Request_free(&h);
	}
	return rc;
}
