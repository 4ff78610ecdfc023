/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_p2p.h - what the point-to-point files of the layer
 * share (shim_p2p.c: messages and requests; shim_probe.c: the probes;
 * shim_persist.c: persistent messages; shim_sendrecv.c: send-receive
 * pairs; shim_wait.c: the completion of requests):
 * the checks of a call's arguments, the mapping of MPI's wildcards, a
 * status filled, the queue of a communicator of one rank, and the calls
 * the send modes (shim_sendmodes.c) build on.  Private to those files.
 */
#ifndef TCMPI_SHIM_P2P_H
#define TCMPI_SHIM_P2P_H

#include "shim.h"

static inline int check(MPI_Comm comm, int peer, int is_recv, const char *fn, struct tcmpi__comm **out)
{
	*out = NULL;
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	struct tcmpi__comm *c = tcmpi__comm(comm);
	if (!c)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
	int p = tcmpi__comm_size(c);
	if (peer == MPI_PROC_NULL || (peer == MPI_ANY_SOURCE && is_recv)) {
		*out = c;
		return MPI_SUCCESS;
	}
	if (peer < 0 || peer >= p)
		return tcmpi__error(comm, MPI_ERR_RANK, fn, "rank %d out of range 0..%d", peer, p - 1);
	*out = c;
	return MPI_SUCCESS;
}

static inline int tc_src(int source)
{
	return source == MPI_ANY_SOURCE ? TC_ANY_SOURCE : source;
}

static inline int tc_tag(int tag)
{
	return tag == MPI_ANY_TAG ? TC_ANY_TAG : tag;
}

static inline void set_status(MPI_Status *st, int src, int tag, size_t bytes)
{
	if (st == MPI_STATUS_IGNORE || !st)
		return;
	st->MPI_SOURCE = src;
	st->MPI_TAG = tag;
	st->MPI_ERROR = MPI_SUCCESS;
	st->tcmpi_cancelled = 0;
	st->tcmpi_count = (MPI_Count)bytes;
}

static inline int check_args(const struct tcmpi__dtype *t, int count, int tag, int is_recv,
                             MPI_Comm comm, const char *fn)
{
	if (!t)
		return tcmpi__error(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype");
	if (count < 0)
		return tcmpi__error(comm, MPI_ERR_COUNT, fn, "negative count %d", count);
	if (tag < 0 && !(is_recv && tag == MPI_ANY_TAG))
		return tcmpi__error(comm, MPI_ERR_TAG, fn, "invalid tag %d", tag);
	return MPI_SUCCESS;
}

/* check() and check_args() of a message's call: *c its communicator, *t
 * its datatype (committed), or the error reported. */
static inline int check_msg(MPI_Comm comm, int peer, int is_recv, MPI_Datatype datatype, int count,
                            int tag, const char *fn, struct tcmpi__comm **c,
                            const struct tcmpi__dtype **t)
{
	*t = NULL;
	int rc = check(comm, peer, is_recv, fn, c);
	if (rc)
		return rc;
	*t = tcmpi__dt(datatype);
	return check_args(*t, count, tag, is_recv, comm, fn);
}

/* A message queued on a communicator of one rank (shim_p2p.c, "Communicators
 * of one rank"). */
struct tcmpi__self_msg {
	struct tcmpi__self_msg *next;
	int tag;
	size_t bytes;
	void *data;              /* packed; NULL when empty */
	struct tcmpi__req *sreq; /* its synchronous send, complete once it is taken */
};

/* The first queued message of c whose tag matches tag, or NULL; taken
 * out of the queue when take, which completes its synchronous send
 * (shim_p2p.c). */
struct tcmpi__self_msg *tcmpi__self_find(struct tcmpi__comm *c, int tag, int take);
/* A send of bytes packed at data with tag on c, a communicator of one
 * rank: to the first posted receive that matches, or queued (copied).
 * MPI_SUCCESS or the error (reported as fn's; shim_p2p.c). */
int tcmpi__self_send(struct tcmpi__comm *c, MPI_Comm comm, int tag, const void *data, size_t bytes,
                     const char *fn);
/* The same in synchronous mode for send request q (its peer, tag and
 * ucount set): complete (q->done 3) when a posted receive takes the
 * message at once, else queued and q pending (selfpend) until a receive
 * takes it; q NULL (MPI_Ssend): nothing queued, and the deadlock's error
 * when no posted receive takes it. */
int tcmpi__self_ssend(struct tcmpi__comm *c, MPI_Comm comm, int tag, const void *data, size_t bytes,
                      struct tcmpi__req *q, const char *fn);
/* MPI_Send, MPI_Isend and MPI_Irecv, their errors named as fn's
 * (shim_p2p.c): the ready mode's calls are the standard ones; with sync,
 * MPI_Ssend and MPI_Issend (shim_sendmodes.c). */
int tcmpi__send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                int sync, const char *fn);
int tcmpi__isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request *request, int sync, const char *fn);
int tcmpi__irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                 MPI_Request *request, const char *fn);
/* MPI_Bsend, its errors named as fn's (shim_sendmodes.c): the message
 * copied into the attached buffer and its send started. */
int tcmpi__bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, const char *fn);
/* The same once the arguments are checked (c the communicator of comm, t
 * the datatype, dest a rank of it): MPI_Bsend_init's start. */
int tcmpi__bsend_checked(struct tcmpi__comm *c, MPI_Comm comm, const void *buf, size_t count,
                         const struct tcmpi__dtype *t, int dest, int tag, const char *fn);

/* Waits for the buffered messages sent on proc's team and takes them out
 * of the attached buffer (shim_sendmodes.c): before the team of a
 * communicator is freed. */
void tcmpi__bsend_settle(struct tc_proc *proc);

/* The error of a call that would wait forever on a communicator of one
 * rank (shim_p2p.c). */
int tcmpi__self_deadlock(MPI_Comm comm, int source, int tag, const char *fn);
/* The same for a synchronous send to the calling rank (shim_p2p.c). */
int tcmpi__ssend_deadlock(MPI_Comm comm, int tag, const char *fn);

/* Requests (shim_p2p.c), for the files that make and complete them
 * (shim_persist.c, shim_sendrecv.c): the request of a handle, or NULL;
 * the checks of one handle and of an array of them (the error reported);
 * a receive posted on a communicator of one rank; a nonblocking call's
 * request made active, or dropped with the error of a failed post (tcrc);
 * the wait of one request; a send-receive pair moved on (block: until
 * complete), and a receive taken back before it could match. */
struct tcmpi__req *tcmpi__req_of(MPI_Request h);
int tcmpi__check_req(MPI_Request *h, const char *fn);
int tcmpi__check_reqs(int count, MPI_Request *a, const char *fn);
int tcmpi__self_irecv(struct tcmpi__comm *c, MPI_Comm comm, struct tcmpi__req *q, const char *fn);
int tcmpi__req_posted(MPI_Comm comm, struct tcmpi__req *q, MPI_Request *request, int tcrc,
                      const char *fn);
int tcmpi__wait_one(MPI_Request *h, MPI_Status *st, const char *fn);
int tcmpi__pair_progress(struct tcmpi__req *q, int block, const char *fn);
void tcmpi__undo_recv(MPI_Request *h);
/* q's topocoll part tested (block: waited for): its tc request, or a
 * neighbourhood request's several; *done once complete, the topocoll
 * error returned (shim_wait.c).  The error of a wait on q pending on a
 * communicator of one rank, the deadlock named (shim_p2p.c). */
int tcmpi__part_test(struct tcmpi__req *q, int block, int *done);
int tcmpi__self_wait_error(const struct tcmpi__req *q, const char *fn);

#endif /* TCMPI_SHIM_P2P_H */
