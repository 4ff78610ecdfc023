/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_sendmodes.c - MPI's send modes beside the standard one:
 * ready (MPI_Rsend, MPI_Irsend), synchronous (MPI_Ssend, MPI_Issend; the
 * persistent MPI_Ssend_init in shim_persist.c) and buffered (MPI_Bsend,
 * MPI_Ibsend, with MPI_Buffer_attach and MPI_Buffer_detach).
 *
 * Ready mode: a ready send may be used only when the matching receive is
 * already posted, and MPI lets it behave as a standard send; it is one
 * here (shim_p2p.c's), so a ready send with no receive posted is not
 * detected, and works.
 *
 * Buffered mode: the program attaches one buffer per rank; a buffered
 * send copies its message into it (packed, for a datatype that is not
 * contiguous) and sends that copy with a nonblocking send, so it returns
 * at once whatever the receiver does, and the program may reuse its own
 * buffer.  Each message takes, in the attached buffer, a header (the
 * tc_request of its send, the next message by address, its span) and its
 * packed bytes, both rounded to ALIGN bytes: MPI_BSEND_OVERHEAD (mpi.h)
 * covers the header and the rounding, so that a buffer of the sum over
 * the messages of their packed size plus MPI_BSEND_OVERHEAD holds them
 * all (MPI's rule for sizing it; MPI_Pack_size gives the packed size).
 * Messages live in address order; a new one takes the first gap large
 * enough (first fit).  When none is, the messages whose sends have
 * completed are taken out first (a streamed message's send completes at
 * once; a single-copy one's when its receiver has copied it, p2p.h); if
 * still none is, the call fails with MPI_ERR_BUFFER, saying how much the
 * message needs and how much is free: MPI makes a buffer too small an
 * error, and waiting for space could wait for ever (the receiver may be
 * waiting for this very rank).  MPI_Buffer_detach waits for every message
 * still in the buffer to be sent (its tc_request complete) and gives the
 * buffer back.  On a communicator of one rank the message is queued by
 * the layer at once (shim_p2p.c), so it needs the space only for the
 * call.  MPI_Comm_free waits for the messages sent on its communicator
 * (tcmpi__bsend_settle), whose team it then frees.  MPI_Finalize does
 * not detach the buffer: a message still in it is one its receiver has
 * yet to copy, which a correct program's receive does before the
 * finalize's barrier.
 *
 * Synchronous mode (MPI_Ssend, MPI_Issend, MPI_Ssend_init): the send
 * completes only once a receive has taken its message.  On a communicator
 * with a team it is topocoll's synchronous send (tc_ssend_tag,
 * tc_issend_tag; p2p.h), whose receiver copies the message out of the
 * sender's buffer (packed, for a datatype that is not contiguous, as a
 * standard send's) and only then completes it, whatever its size; so
 * MPI_Ssend returns, and MPI_Test of an MPI_Issend says true, only once the
 * receiver's matching receive has taken the message (a probe does not).
 * MPI_Ssend_init's starts make that MPI_Issend.  MPI_Cancel cancels one
 * that no receive has claimed, as it does a single-copy send.  A blocking
 * MPI_Ssend to the calling rank could complete only by that rank's own
 * receive, which cannot be posted while it waits: it fails at once with
 * MPI_ERR_OTHER naming the deadlock (MPI would wait forever); MPI_Issend
 * to it completes when the rank's receive takes the message.  On a
 * communicator of one rank the layer queues the message itself
 * (shim_p2p.c, "Communicators of one rank"): the request completes when a
 * receive takes it, MPI_Ssend when a receive already posted does (else
 * the same error, nothing queued).
 */
#include <stdint.h>
#include <string.h>

#include "shim.h"
#include "shim_p2p.h"

int MPI_Rsend(const void *ibuf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	return tcmpi__send(ibuf, count, datatype, dest, tag, comm, 0, __func__);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
	return tcmpi__isend(buf, count, datatype, dest, tag, comm, request, 0, __func__);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	return tcmpi__send(buf, count, datatype, dest, tag, comm, 1, __func__);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
	return tcmpi__isend(buf, count, datatype, dest, tag, comm, request, 1, __func__);
}

/* ---------------------------------------------------------------------
 * The attached buffer.
 */
#define ALIGN 16
#define ROUND(n) (((n) + (ALIGN - 1)) & ~(size_t)(ALIGN - 1))

/* A message in the attached buffer, at an ALIGN boundary; its packed
 * bytes follow at HDR. */
struct bmsg {
	tc_request tr;        /* its send, started on proc */
	struct tc_proc *proc; /* the proc of its communicator's team */
	struct bmsg *next;    /* the next message, by address */
	size_t span;          /* bytes of the buffer it takes, header included */
};
#define HDR ROUND(sizeof(struct bmsg))

/* Every message takes at most HDR + its packed size + ALIGN - 1 bytes
 * (its rounding), and the buffer's start loses at most ALIGN - 1 bytes
 * once (its alignment). */
_Static_assert(HDR + 2 * (ALIGN - 1) <= MPI_BSEND_OVERHEAD,
               "MPI_BSEND_OVERHEAD must cover a message's header and rounding");

static struct {
	int on;          /* a buffer is attached */
	void *user;      /* as given to MPI_Buffer_attach */
	int size;        /* its size, as given */
	char *lo, *hi;   /* the part used: aligned start, end */
	struct bmsg *in; /* messages in the buffer, by address */
} bbuf;

int MPI_Buffer_attach(void *buffer, int size)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (bbuf.on)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_BUFFER, __func__,
		                    "a buffer of %d bytes is attached already (MPI_Buffer_detach "
		                    "it first)",
		                    bbuf.size);
	if (size < 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_BUFFER, __func__, "negative size %d", size);
	if (!buffer && size > 0)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_BUFFER, __func__,
		                    "NULL buffer of %d bytes", size);
	char *lo = (char *)ROUND((uintptr_t)buffer), *hi = (char *)buffer + size;
	bbuf.on = 1;
	bbuf.user = buffer;
	bbuf.size = size;
	bbuf.lo = lo < hi ? lo : hi;
	bbuf.hi = hi;
	bbuf.in = NULL;
	return MPI_SUCCESS;
}

/* Takes out of the buffer the messages whose sends have completed. */
static void reclaim(void)
{
	for (struct bmsg **pp = &bbuf.in; *pp;) {
		struct bmsg *m = *pp;
		int done = 0;
		/* A failed send (an aborted team) has nobody to report to: the
		 * program learns of the abort from its next call that waits. */
		(void)tc_test(m->proc, &m->tr, &done);
		if (done)
			*pp = m->next;
		else
			pp = &m->next;
	}
}

void tcmpi__bsend_settle(struct tc_proc *proc)
{
	for (struct bmsg **pp = &bbuf.in; *pp;) {
		struct bmsg *m = *pp;
		if (m->proc != proc) {
			pp = &m->next;
			continue;
		}
		/* Its outcome has nobody to go to, as in reclaim(). */
		(void)tc_wait(m->proc, &m->tr, NULL);
		*pp = m->next;
	}
}

/* The first gap of span bytes (a multiple of ALIGN) in the buffer, linked
 * in; NULL when none. */
static struct bmsg *place(size_t span)
{
	char *at = bbuf.lo;
	struct bmsg **pp = &bbuf.in;
	for (;;) {
		char *end = *pp ? (char *)*pp : bbuf.hi;
		if (end >= at && (size_t)(end - at) >= span) {
			struct bmsg *m = (struct bmsg *)(void *)at;
			/* topocoll looks at a request before starting it: the
			 * program's bytes there must not look like one. */
			memset(&m->tr, 0, sizeof m->tr);
			m->next = *pp;
			m->span = span;
			*pp = m;
			return m;
		}
		if (!*pp)
			return NULL;
		at = (char *)*pp + (*pp)->span;
		pp = &(*pp)->next;
	}
}

static void unlink_msg(struct bmsg *m)
{
	for (struct bmsg **pp = &bbuf.in; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			return;
		}
}

/* Bytes of the buffer no message takes. */
static size_t free_bytes(void)
{
	size_t used = 0;
	for (const struct bmsg *m = bbuf.in; m; m = m->next)
		used += m->span;
	const size_t all = (size_t)(bbuf.hi - bbuf.lo);
	return used < all ? all - used : 0;
}

int tcmpi__bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, const char *fn)
{
	struct tcmpi__comm *c;
	const struct tcmpi__dtype *t;
	int rc = check_msg(comm, dest, 0, datatype, count, tag, fn, &c, &t);
	if (rc)
		return rc;
	if (dest == MPI_PROC_NULL)
		return MPI_SUCCESS;
	return tcmpi__bsend_checked(c, comm, buf, (size_t)count, t, dest, tag, fn);
}

int tcmpi__bsend_checked(struct tcmpi__comm *c, MPI_Comm comm, const void *buf, size_t count,
                         const struct tcmpi__dtype *t, int dest, int tag, const char *fn)
{
	const size_t bytes = count * t->size;
	if (!bbuf.on)
		return tcmpi__error(comm, MPI_ERR_BUFFER, fn,
		                    "no buffer attached (MPI_Buffer_attach) for a message of %zu "
		                    "bytes",
		                    bytes);
	const size_t span = HDR + ROUND(bytes);
	struct bmsg *m = span >= bytes ? place(span) : NULL;
	if (!m) {
		reclaim();
		m = span >= bytes ? place(span) : NULL;
	}
	if (!m)
		return tcmpi__error(comm, MPI_ERR_BUFFER, fn,
		                    "the attached buffer of %d bytes cannot hold a message of %zu "
		                    "bytes plus MPI_BSEND_OVERHEAD (%d): %zu bytes free, in "
		                    "gaps between messages not yet sent",
		                    bbuf.size, bytes, MPI_BSEND_OVERHEAD, free_bytes());
	char *data = (char *)m + HDR;
	if (bytes && t->contig)
		memcpy(data, buf, bytes);
	else if (bytes)
		tcmpi__pack(buf, count, t, data);
	if (!c->proc) { /* one rank: queued by the layer at once */
		unlink_msg(m);
		return tcmpi__self_send(c, comm, tag, data, bytes, fn);
	}
	m->proc = c->proc;
	int tcrc = tc_isend_tag(c->proc, dest, tag, data, bytes, &m->tr);
	if (tcrc) {
		unlink_msg(m);
		return tcmpi__tc_error(comm, tcrc, fn);
	}
	return MPI_SUCCESS;
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	return tcmpi__bsend(buf, count, datatype, dest, tag, comm, __func__);
}

/* The message is in the attached buffer when the call returns: the
 * request is complete at once (its status: the destination, the tag and
 * the size). */
int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!request)
		return tcmpi__error(comm, MPI_ERR_REQUEST, __func__, "NULL request");
	if ((rc = tcmpi__bsend(buf, count, datatype, dest, tag, comm, __func__)))
		return rc;
	struct tcmpi__req *q = tcmpi__req_new(comm, TCMPI_REQ_SEND, request, __func__);
	if (!q)
		return MPI_ERR_NO_MEM;
	q->peer = dest;
	q->tag = tag;
	q->ucount = (size_t)count * tcmpi__dt(datatype)->size;
	q->done = dest == MPI_PROC_NULL ? 1 : 3;
	return MPI_SUCCESS;
}

int MPI_Buffer_detach(void *buffer_addr, int *size)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!buffer_addr || !size)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL buffer address or size");
	if (!bbuf.on) { /* nothing attached: as MPICH, a NULL buffer of 0 bytes */
		*(void **)buffer_addr = NULL;
		*size = 0;
		return MPI_SUCCESS;
	}
	int tcrc = 0;
	for (struct bmsg *m = bbuf.in, *n; m; m = n) {
		n = m->next; /* read before the wait: nothing else moves it */
		const int e = tc_wait(m->proc, &m->tr, NULL);
		tcrc = tcrc ? tcrc : e;
	}
	*(void **)buffer_addr = bbuf.user;
	*size = bbuf.size;
	memset(&bbuf, 0, sizeof bbuf);
	return tcrc ? tcmpi__tc_error(MPI_COMM_WORLD, tcrc, __func__) : MPI_SUCCESS;
}
