/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_probe.c - the probes of the layer (MPI_Probe,
 * MPI_Iprobe) and the matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv,
 * MPI_Imrecv) over topocoll's tc_probe and tc_iprobe.
 *
 * Matched probes: the probe receives the message it found at once into a
 * buffer of its own (topocoll's probe keeps the message found for the
 * receive that asks for its source and tag), so that no other receive or
 * probe can match it; MPI_Mrecv and MPI_Imrecv copy it out.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "shim_p2p.h"

/* ---------------------------------------------------------------------
 * Probes: tc_probe and tc_iprobe find the message a receive with the
 * same source and tag would take; the receive that follows with the
 * status's source and tag (or the probe's) takes exactly it.
 */
static int probe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status, const char *fn)
{
	struct tcmpi__comm *c;
	int rc = check(comm, source, 1, fn, &c);
	if (rc)
		return rc;
	if (tag < 0 && tag != MPI_ANY_TAG)
		return tcmpi__error(comm, MPI_ERR_TAG, fn, "invalid tag %d", tag);
	if (flag)
		*flag = 0;
	if (source == MPI_PROC_NULL) {
		/* MPI: at once, with source MPI_PROC_NULL, tag MPI_ANY_TAG and
		 * count 0. */
		if (flag)
			*flag = 1;
		set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
		return MPI_SUCCESS;
	}
	if (!c->proc) { /* one rank: the first queued message that matches */
		const struct tcmpi__self_msg *m = tcmpi__self_find(c, tag, 0);
		if (!m)
			return flag ? MPI_SUCCESS : tcmpi__self_deadlock(comm, source, tag, fn);
		if (flag)
			*flag = 1;
		set_status(status, 0, m->tag, m->bytes);
		return MPI_SUCCESS;
	}
	tc_status ts = {0};
	int found = 1;
	int tcrc = flag ? tc_iprobe(c->proc, tc_src(source), tc_tag(tag), &found, &ts)
	                : tc_probe(c->proc, tc_src(source), tc_tag(tag), &ts);
	if (tcrc)
		return tcmpi__tc_error(comm, tcrc, fn);
	if (flag)
		*flag = found;
	if (found)
		set_status(status, ts.source, ts.tag, ts.bytes);
	return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	return probe(source, tag, comm, NULL, status, __func__);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!flag)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL flag");
	return probe(source, tag, comm, flag, status, __func__);
}

/* ---------------------------------------------------------------------
 * Matched probes: a message handle (MPI_Message) 2.. indexes a table of
 * messages received by the probe; MPI_MESSAGE_NULL (0) and
 * MPI_MESSAGE_NO_PROC (1) are none.
 */
struct tcmpi__msg {
	void *data; /* the message's bytes (NULL when empty) */
	size_t bytes;
	int src, tag;
	MPI_Comm comm;
};
static struct tcmpi__msg **msgs;
static int nmsgs;

enum { MSG_FIRST = 2 };

static struct tcmpi__msg *msg_of(MPI_Message h)
{
	return h >= MSG_FIRST && h - MSG_FIRST < nmsgs ? msgs[h - MSG_FIRST] : NULL;
}

/* A new message slot, or -1 (out of memory). */
static int msg_slot(void)
{
	int i;
	for (i = 0; i < nmsgs && msgs[i]; i++)
		;
	if (i == nmsgs) {
		int n = nmsgs ? 2 * nmsgs : 16;
		struct tcmpi__msg **g = realloc(msgs, sizeof *g * (size_t)n);
		if (!g)
			return -1;
		memset(g + nmsgs, 0, sizeof *g * (size_t)(n - nmsgs));
		msgs = g;
		nmsgs = n;
	}
	return (msgs[i] = calloc(1, sizeof *msgs[i])) ? i : -1;
}

static void msg_drop(MPI_Message *h)
{
	struct tcmpi__msg *m = msg_of(*h);
	if (m) {
		free(m->data);
		free(m);
		msgs[*h - MSG_FIRST] = NULL;
	}
	*h = MPI_MESSAGE_NULL;
}

/* MPI_Mprobe (flag NULL) and MPI_Improbe: the probe, then the receive of
 * exactly the message found (topocoll's probe keeps it for the receive
 * that asks for its source and tag) into the message's own buffer. */
static int mprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                  MPI_Status *status, const char *fn)
{
	if (!message)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL message");
	*message = MPI_MESSAGE_NULL;
	if (source == MPI_PROC_NULL) {
		int rc = check(comm, source, 1, fn, &(struct tcmpi__comm *){NULL});
		if (rc)
			return rc;
		if (flag)
			*flag = 1;
		*message = MPI_MESSAGE_NO_PROC;
		set_status(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
		return MPI_SUCCESS;
	}
	MPI_Status ps = {0};
	int rc = probe(source, tag, comm, flag, &ps, fn);
	if (rc || (flag && !*flag))
		return rc;
	struct tcmpi__comm *c = tcmpi__comm(comm);
	size_t bytes = (size_t)ps.tcmpi_count;
	int i = msg_slot();
	if (!c->proc && i >= 0) {
		/* One rank: the probe's message (the first queued with its
		 * tag) moves from the queue into the message handle. */
		struct tcmpi__self_msg *m = tcmpi__self_find(c, ps.MPI_TAG, 1);
		*msgs[i] = (struct tcmpi__msg){.data = m->data,
		                               .bytes = m->bytes,
		                               .src = 0,
		                               .tag = m->tag,
		                               .comm = comm};
		free(m);
		*message = MSG_FIRST + i;
		set_status(status, 0, ps.MPI_TAG, bytes);
		return MPI_SUCCESS;
	}
	void *data = bytes ? malloc(bytes) : NULL;
	if (i < 0 || (bytes && !data)) {
		free(data);
		if (i >= 0) {
			free(msgs[i]);
			msgs[i] = NULL;
		}
		/* The message stays queued: a later receive takes it. */
		if (flag)
			*flag = 0;
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn,
		                    "out of memory for a message of %zu bytes", bytes);
	}
	tc_status ts = {0};
	int tcrc = tc_recv_tag(c->proc, ps.MPI_SOURCE, ps.MPI_TAG, data, bytes, &ts);
	if (!tcrc && (ts.source != ps.MPI_SOURCE || ts.tag != ps.MPI_TAG || ts.bytes != bytes))
		tcrc = TC_EINVAL; /* never: the probe's message is the receive's */
	if (tcrc) {
		free(data);
		free(msgs[i]);
		msgs[i] = NULL;
		if (flag)
			*flag = 0;
		return tcmpi__tc_error(comm, tcrc, fn);
	}
	*msgs[i] =
	        (struct tcmpi__msg){.data = data, .bytes = bytes, .src = ts.source, .tag = ts.tag, .comm = comm};
	*message = MSG_FIRST + i;
	set_status(status, ts.source, ts.tag, bytes);
	return MPI_SUCCESS;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
	return mprobe(source, tag, comm, NULL, message, status, __func__);
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!flag)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL flag");
	*flag = 0;
	return mprobe(source, tag, comm, flag, message, status, __func__);
}

/* MPI_Mrecv and MPI_Imrecv: the message *message copied out into count
 * elements of type at buf; *message becomes MPI_MESSAGE_NULL.  *src, *tag
 * and *bytes get its status.  MPI_ERR_TRUNCATE when it does not fit (the
 * message is consumed, nothing written). */
static int mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, int *src, int *tag,
                 size_t *bytes, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (!message)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL message");
	if (*message == MPI_MESSAGE_NO_PROC) {
		*message = MPI_MESSAGE_NULL;
		*src = MPI_PROC_NULL;
		*tag = MPI_ANY_TAG;
		*bytes = 0;
		return MPI_SUCCESS;
	}
	struct tcmpi__msg *m = msg_of(*message);
	if (!m)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "invalid message %d (MPI_MESSAGE_NULL, or already received)",
		                    *message);
	const struct tcmpi__dtype *t = tcmpi__dt(type);
	if ((rc = check_args(t, count, 0, 1, m->comm, fn)))
		return rc;
	*src = m->src;
	*tag = m->tag;
	*bytes = m->bytes;
	MPI_Comm comm = m->comm;
	size_t cap = (size_t)count * t->size;
	if (m->bytes > cap) {
		msg_drop(message);
		return tcmpi__error(comm, MPI_ERR_TRUNCATE, fn,
		                    "a message of %zu bytes into a buffer of %zu bytes", *bytes, cap);
	}
	if (m->bytes)
		tcmpi__unpack_bytes(m->data, m->bytes, t, buf);
	msg_drop(message);
	return MPI_SUCCESS;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
	int src = 0, tag = 0;
	size_t bytes = 0;
	int rc = mrecv(buf, count, type, message, &src, &tag, &bytes, __func__);
	if (!rc)
		set_status(status, src, tag, bytes);
	return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!request)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_REQUEST, __func__, "NULL request");
	const struct tcmpi__msg *m = message ? msg_of(*message) : NULL;
	MPI_Comm comm = m ? m->comm : MPI_COMM_WORLD;
	int src = 0, tag = 0;
	size_t bytes = 0;
	if ((rc = mrecv(buf, count, type, message, &src, &tag, &bytes, __func__)))
		return rc;
	/* The data are in place already: a request complete at once. */
	struct tcmpi__req *q = tcmpi__req_new(comm, TCMPI_REQ_RECV, request, __func__);
	if (!q)
		return MPI_ERR_NO_MEM;
	q->peer = src;
	q->tag = tag;
	q->ucount = bytes;
	q->done = 3;
	return MPI_SUCCESS;
}

/* Handles are ints in C and Fortran: a message converts to itself, and a
 * Fortran handle that names no message (never made, or received since)
 * to MPI_MESSAGE_NULL (MPI_MESSAGE_NO_PROC to itself). */
MPI_Fint MPI_Message_c2f(MPI_Message message)
{
	return (MPI_Fint)message;
}

MPI_Message MPI_Message_f2c(MPI_Fint message)
{
	const MPI_Message m = (MPI_Message)message;
	return m == MPI_MESSAGE_NO_PROC || msg_of(m) ? m : MPI_MESSAGE_NULL;
}
