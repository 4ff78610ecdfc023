/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_p2p.c - MPI_Send, MPI_Recv, MPI_Sendrecv between ranks
 * the topology links (every pair on the default complete:P).
 *
 * topocoll's point-to-point messages have no tags and name their source:
 * a receive takes the next message from that rank, whatever the tag (the
 * status reports the tag asked for, 0 for MPI_ANY_TAG).  MPI_ANY_SOURCE,
 * tag matching and sends to ranks that are not neighbours come with
 * topocoll's any-rank tagged messages: the seam is recv_from() below.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

static int check(MPI_Comm comm, int peer, int any_ok, const char *fn, struct tcmpi__comm **out)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	struct tcmpi__comm *c = tcmpi__comm(comm);
	if (!c)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
	int p = tcmpi__comm_size(c);
	if (peer == MPI_ANY_SOURCE && any_ok)
		return tcmpi__error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
		                    "MPI_ANY_SOURCE needs any-rank messages, not available yet");
	if (peer != MPI_PROC_NULL && (peer < 0 || peer >= p))
		return tcmpi__error(comm, MPI_ERR_RANK, fn, "rank %d out of range 0..%d", peer, p - 1);
	if (c->self && peer == 0)
		return tcmpi__error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
		                    "messages to oneself are not supported");
	if (peer == tcmpi__comm_rank(c) && peer != MPI_PROC_NULL)
		return tcmpi__error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
		                    "messages to oneself are not supported");
	*out = c;
	return MPI_SUCCESS;
}

static void set_status(MPI_Status *st, int src, int tag, size_t bytes)
{
	if (st == MPI_STATUS_IGNORE || !st)
		return;
	st->MPI_SOURCE = src;
	st->MPI_TAG = tag == MPI_ANY_TAG ? 0 : tag;
	st->MPI_ERROR = MPI_SUCCESS;
	st->tcmpi_cancelled = 0;
	st->tcmpi_count = (MPI_Count)bytes;
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	struct tcmpi__comm *c;
	int rc = check(comm, dest, 0, __func__, &c);
	if (rc)
		return rc;
	const struct tcmpi__dtype *t = tcmpi__dt(datatype);
	if (!t || count < 0 || tag < 0)
		return tcmpi__error(comm, !t ? MPI_ERR_TYPE : count < 0 ? MPI_ERR_COUNT : MPI_ERR_TAG,
		                    __func__, "invalid datatype, count or tag");
	if (dest == MPI_PROC_NULL)
		return MPI_SUCCESS;
	void *tmp = NULL;
	const void *b = buf;
	if (!t->contig) {
		b = tmp = tcmpi__alloc((size_t)count * t->size);
		if (!tmp)
			return tcmpi__error(comm, MPI_ERR_NO_MEM, __func__, "out of memory");
		tcmpi__pack(buf, (size_t)count, t, tmp);
	}
	int tcrc = tc_send(tcmpi__self->proc, dest, b, (size_t)count * t->size);
	free(tmp);
	return tcrc ? tcmpi__tc_error(comm, tcrc, __func__) : MPI_SUCCESS;
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
	struct tcmpi__comm *c;
	int rc = check(comm, source, 1, __func__, &c);
	if (rc)
		return rc;
	const struct tcmpi__dtype *t = tcmpi__dt(datatype);
	if (!t || count < 0 || (tag < 0 && tag != MPI_ANY_TAG))
		return tcmpi__error(comm, !t ? MPI_ERR_TYPE : count < 0 ? MPI_ERR_COUNT : MPI_ERR_TAG,
		                    __func__, "invalid datatype, count or tag");
	if (source == MPI_PROC_NULL) {
		set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
		return MPI_SUCCESS;
	}
	size_t cap = (size_t)count * t->size, got = 0;
	void *tmp = NULL, *b = buf;
	if (!t->contig) {
		b = tmp = tcmpi__alloc(cap);
		if (!tmp)
			return tcmpi__error(comm, MPI_ERR_NO_MEM, __func__, "out of memory");
	}
	int tcrc = tc_recv(tcmpi__self->proc, source, b, cap, &got);
	if (!tcrc && tmp)
		tcmpi__unpack(tmp, got / (t->size ? t->size : 1), t, buf);
	free(tmp);
	if (tcrc)
		return tcmpi__tc_error(comm, tcrc, __func__);
	set_status(status, source, tag, got);
	return MPI_SUCCESS;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
	struct tcmpi__comm *c;
	int rc = check(comm, dest, 0, __func__, &c);
	if (!rc)
		rc = check(comm, source, 1, __func__, &c);
	if (rc)
		return rc;
	const struct tcmpi__dtype *st = tcmpi__dt(sendtype), *rt = tcmpi__dt(recvtype);
	if (!st || !rt || sendcount < 0 || recvcount < 0 || sendtag < 0 ||
	    (recvtag < 0 && recvtag != MPI_ANY_TAG))
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "invalid datatype, count or tag");
	if (dest == MPI_PROC_NULL)
		return MPI_Recv(recvbuf, recvcount, recvtype, source, recvtag, comm, status);
	if (source == MPI_PROC_NULL) {
		set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
		return MPI_Send(sendbuf, sendcount, sendtype, dest, sendtag, comm);
	}
	size_t sbytes = (size_t)sendcount * st->size, cap = (size_t)recvcount * rt->size, got = 0;
	void *stmp = tcmpi__alloc(sbytes), *rtmp = tcmpi__alloc(cap);
	if (!stmp || !rtmp) {
		free(stmp);
		free(rtmp);
		return tcmpi__error(comm, MPI_ERR_NO_MEM, __func__, "out of memory");
	}
	/* Packed copies on both sides: tc_sendrecv refuses overlapping buffers. */
	tcmpi__pack(sendbuf, (size_t)sendcount, st, stmp);
	int tcrc = tc_sendrecv(tcmpi__self->proc, dest, stmp, sbytes, source, rtmp, cap, &got);
	if (!tcrc)
		tcmpi__unpack(rtmp, got / (rt->size ? rt->size : 1), rt, recvbuf);
	free(stmp);
	free(rtmp);
	if (tcrc)
		return tcmpi__tc_error(comm, tcrc, __func__);
	set_status(status, source, recvtag, got);
	return MPI_SUCCESS;
}
