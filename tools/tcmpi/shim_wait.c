/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_wait.c - the completion of requests: MPI_Wait, MPI_Test,
 * MPI_Waitall, MPI_Testall, MPI_Waitany, MPI_Testany, MPI_Waitsome,
 * MPI_Testsome and MPI_Request_get_status, for messages, send-receive
 * pairs and collectives alike (the requests themselves: shim_p2p.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "shim_p2p.h"

static void empty_status(MPI_Status *st)
{
	set_status(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
}

/* The status of an operation MPI_Cancel cancelled: nothing sent or
 * received. */
static void cancelled_status(MPI_Status *st)
{
	empty_status(st);
	if (st && st != MPI_STATUS_IGNORE)
		st->tcmpi_cancelled = 1;
}

/* After the tc request of q completed with tcrc: its status, the unpacked
 * data; MPI_SUCCESS or the error (reported on q's communicator). */
static int req_finish(struct tcmpi__req *q, int tcrc, MPI_Status *st, const char *fn)
{
	tc_status ts = {0};
	q->active = 0;
	/* Once per start: MPI_Request_get_status may have finished it. */
	const int unpack = !q->unpacked;
	q->unpacked = 1;
	if (q->kind == TCMPI_REQ_COLL) {
		if (q->tmp && !tcrc && q->t && unpack)
			tcmpi__unpack((unsigned char *)q->tmp + q->toff, q->ucount, q->t, q->ubuf);
		if (q->v && !tcrc && unpack)
			tcmpi__vreq_finish(q);
		set_status(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
		if (tcrc && q->nb)
			return tcmpi__nbr_error(q->nb, tcrc, fn);
		return tcrc ? tcmpi__tc_error(q->comm, tcrc, fn) : MPI_SUCCESS;
	}
	if (tc_request_status(&q->tr, &ts) != 0)
		ts.bytes = 0;
	if (tcrc == TC_ECANCELED) { /* MPI_Cancel: nothing moved */
		cancelled_status(st);
		return MPI_SUCCESS;
	}
	if (tcrc)
		return tcmpi__tc_error(q->comm, tcrc, fn);
	if (q->kind == TCMPI_REQ_RECV && q->tmp && unpack)
		tcmpi__unpack_bytes(q->tmp, ts.bytes, q->t, q->ubuf);
	if (q->kind == TCMPI_REQ_RECV)
		set_status(st, ts.source, ts.tag, ts.bytes);
	else
		set_status(st, q->peer, q->tag, ts.bytes);
	return MPI_SUCCESS;
}

/* Completes handle *h after req_finish: frees it unless persistent. */
static void req_release(MPI_Request *h)
{
	struct tcmpi__req *q = tcmpi__req_of(*h);
	if (q && !q->persistent)
		tcmpi__req_drop(h);
	else if (q)
		q->done = 0;
}

/* The status of a request found complete before (q->done): its tc request
 * completed by an MPI_Testall that did not complete them all (2: finished
 * now, its data unpacked), or none (1, 3). */
static int done_status(struct tcmpi__req *q, MPI_Status *st, const char *fn)
{
	if (q->done == 4) { /* a pair: its errors were reported as its parts completed */
		set_status(st, q->peer, q->tag, q->ucount);
		return q->selferr;
	}
	if (q->done == 2)
		return req_finish(q, q->tcrc, st, fn);
	if (q->done == 3 && q->cancelled) {
		cancelled_status(st);
		return MPI_SUCCESS;
	}
	if (q->done == 3)
		set_status(st, q->peer, q->tag, q->ucount);
	else if (q->kind == TCMPI_REQ_COLL) /* a collective's: MPI's empty status */
		set_status(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
	else
		set_status(st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
	if (q->done == 3 && q->selferr)
		return tcmpi__error(q->comm, q->selferr, fn,
		                    "a message of %zu bytes into a buffer of %zu bytes", q->ucount,
		                    q->cap);
	return MPI_SUCCESS;
}

static int test_one(MPI_Request *h, int *flag, MPI_Status *st, const char *fn);

/* Makes progress on active request q's topocoll requests (block: until
 * they complete): *done = 1 and their outcome once they have. */
int tcmpi__part_test(struct tcmpi__req *q, int block, int *done)
{
	if (q->nb)
		return tcmpi__nbr_progress(q->nb, block, done);
	*done = 1;
	return block ? tc_wait(q->proc, &q->tr, NULL) : tc_test(q->proc, &q->tr, done);
}

/* The receive of request q that only the calling rank's own send could
 * complete, on a communicator of one rank: q itself, or a pair's posted
 * receive once its send is complete; NULL when none. */
static struct tcmpi__req *self_blocked(struct tcmpi__req *q)
{
	if (!q || q->selfpend)
		return q;
	if (q->kind != TCMPI_REQ_PAIR || !q->active)
		return NULL;
	struct tcmpi__req *r = tcmpi__req_of(q->psub[0]);
	return r && r->selfpend && q->psub[1] == MPI_REQUEST_NULL ? r : NULL;
}

/* Completes what it can of pair q (waiting, with block): each part
 * completed releases its handle, the receive's status kept; once both
 * are, q is complete (done 4).  An error of a part is kept in q->selferr
 * (reported already); a blocking wait on a receive that nothing can
 * satisfy returns its error and leaves q as it was. */
int tcmpi__pair_progress(struct tcmpi__req *q, int block, const char *fn)
{
	for (int i = 0; i < 2; i++) {
		if (q->psub[i] == MPI_REQUEST_NULL)
			continue;
		MPI_Status st = {.MPI_SOURCE = q->peer, .MPI_TAG = q->tag};
		int f = 1;
		int rc = block ? tcmpi__wait_one(&q->psub[i], &st, fn)
		               : test_one(&q->psub[i], &f, &st, fn);
		if (q->psub[i] != MPI_REQUEST_NULL) {
			if (rc)
				return rc; /* not completed: the deadlock's error */
			continue;
		}
		if (i == 0) {
			q->peer = st.MPI_SOURCE;
			q->tag = st.MPI_TAG;
			q->ucount = (size_t)st.tcmpi_count;
		}
		if (rc && !q->selferr)
			q->selferr = rc;
	}
	if (q->psub[0] == MPI_REQUEST_NULL && q->psub[1] == MPI_REQUEST_NULL) {
		q->active = 0;
		q->done = 4;
	}
	return MPI_SUCCESS;
}

/* Tests one request without blocking: *flag = 1 when complete (status
 * filled, handle released). */
static int test_one(MPI_Request *h, int *flag, MPI_Status *st, const char *fn)
{
	struct tcmpi__req *q = tcmpi__req_of(*h);
	*flag = 1;
	if (q && q->selfpend) { /* a receive on a communicator of one rank */
		*flag = 0;
		return MPI_SUCCESS;
	}
	if (q && q->kind == TCMPI_REQ_PAIR && q->active) {
		(void)tcmpi__pair_progress(q, 0, fn);
		if (q->active) {
			*flag = 0;
			return MPI_SUCCESS;
		}
	}
	if (!q || (!q->active && !q->done)) {
		/* MPI_REQUEST_NULL or an inactive persistent request. */
		empty_status(st);
		return MPI_SUCCESS;
	}
	int rc = MPI_SUCCESS;
	if (q->active) {
		int done = 0;
		int tcrc = tcmpi__part_test(q, 0, &done);
		if (!done) {
			*flag = 0;
			return MPI_SUCCESS;
		}
		rc = req_finish(q, tcrc, st, fn);
	} else {
		rc = done_status(q, st, fn);
	}
	req_release(h);
	return rc;
}

int tcmpi__wait_one(MPI_Request *h, MPI_Status *st, const char *fn)
{
	struct tcmpi__req *q = tcmpi__req_of(*h);
	if (q && q->selfpend)
		return tcmpi__self_wait_error(q, fn);
	if (q && q->kind == TCMPI_REQ_PAIR && q->active) {
		int rc = tcmpi__pair_progress(q, 1, fn);
		if (rc)
			return rc;
	}
	if (!q || (!q->active && !q->done)) {
		empty_status(st);
		return MPI_SUCCESS;
	}
	int rc = MPI_SUCCESS;
	if (q->active) {
		int done;
		rc = req_finish(q, tcmpi__part_test(q, 1, &done), st, fn);
	} else {
		rc = done_status(q, st, fn);
	}
	req_release(h);
	return rc;
}

int tcmpi__check_req(MPI_Request *h, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (!h)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "NULL request");
	if (*h != MPI_REQUEST_NULL && !tcmpi__req_of(*h))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_REQUEST, fn, "invalid request %d", *h);
	return MPI_SUCCESS;
}

static MPI_Status *nth(MPI_Status *sts, int i)
{
	return sts == MPI_STATUSES_IGNORE || !sts ? MPI_STATUS_IGNORE : &sts[i];
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	int rc = tcmpi__check_req(request, __func__);
	return rc ? rc : tcmpi__wait_one(request, status, __func__);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	int rc = tcmpi__check_req(request, __func__);
	if (rc)
		return rc;
	if (!flag)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL flag");
	return test_one(request, flag, status, __func__);
}

int tcmpi__check_reqs(int count, MPI_Request *a, const char *fn)
{
	if (count < 0 || (count > 0 && !a))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
		                    "invalid count %d or NULL array", count);
	for (int i = 0; i < count; i++) {
		int rc = tcmpi__check_req(&a[i], fn);
		if (rc)
			return rc;
	}
	return tcmpi__check_init(fn);
}

/* A request of MPI_Waitall or MPI_Testall completed with rc: its status's
 * MPI_ERROR (a failed request's status holds only that), and the call's
 * outcome *first: MPI_ERR_IN_STATUS once any failed (each failure has
 * been reported through the error handler already). */
static void in_status(MPI_Status *st, int rc, int *first)
{
	if (!rc)
		return;
	if (st != MPI_STATUS_IGNORE && st)
		st->MPI_ERROR = rc;
	*first = MPI_ERR_IN_STATUS;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
	int rc = tcmpi__check_reqs(count, array_of_requests, __func__), first = MPI_SUCCESS;
	if (rc)
		return rc;
	for (int i = 0; i < count; i++) {
		MPI_Status *st = nth(array_of_statuses, i);
		rc = tcmpi__wait_one(&array_of_requests[i], st, __func__);
		in_status(st, rc, &first);
	}
	return first;
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status *array_of_statuses)
{
	int rc = tcmpi__check_reqs(count, array_of_requests, __func__);
	if (rc)
		return rc;
	if (!flag)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL flag");
	/* Completes the requests only when every one is done: the tc requests
	 * that finish meanwhile keep their outcome in the request (done). */
	int all = 1;
	for (int i = 0; i < count; i++) {
		struct tcmpi__req *q = tcmpi__req_of(array_of_requests[i]);
		if (q && q->selfpend)
			all = 0;
		if (q && q->kind == TCMPI_REQ_PAIR && q->active)
			(void)tcmpi__pair_progress(q, 0, __func__);
		if (q && q->kind == TCMPI_REQ_PAIR && q->active)
			all = 0;
		if (!q || !q->active || q->kind == TCMPI_REQ_PAIR)
			continue;
		int done = 0;
		q->tcrc = tcmpi__part_test(q, 0, &done);
		if (done) {
			q->active = 0;
			q->done = 2; /* tc request complete, MPI request not yet */
		} else {
			all = 0;
		}
	}
	*flag = all;
	if (!all)
		return MPI_SUCCESS;
	int first = MPI_SUCCESS;
	for (int i = 0; i < count; i++) {
		struct tcmpi__req *q = tcmpi__req_of(array_of_requests[i]);
		MPI_Status *st = nth(array_of_statuses, i);
		if (!q || !q->done) {
			empty_status(st);
			continue;
		}
		rc = done_status(q, st, __func__);
		req_release(&array_of_requests[i]);
		in_status(st, rc, &first);
	}
	return first;
}

static int any(int count, MPI_Request a[], int *index, int *flag, MPI_Status *status, int block,
               const char *fn)
{
	int rc = tcmpi__check_reqs(count, a, fn);
	if (rc)
		return rc;
	if (!index || (!block && !flag))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL index or flag");
	for (;;) {
		int live = 0, pend = -1;
		for (int i = 0; i < count; i++) {
			struct tcmpi__req *q = tcmpi__req_of(a[i]);
			if (self_blocked(q)) {
				pend = pend < 0 ? i : pend;
				continue;
			}
			if (!q || (!q->active && !q->done))
				continue;
			live = 1;
			int f = 0;
			rc = test_one(&a[i], &f, status, fn);
			if (f || rc) {
				*index = i;
				if (flag)
					*flag = 1;
				return rc;
			}
		}
		if (!live && block && pend >= 0) {
			/* Only receives on communicators of one rank remain. */
			struct tcmpi__req *q = self_blocked(tcmpi__req_of(a[pend]));
			return tcmpi__self_wait_error(q, fn);
		}
		if (pend >= 0)
			live = 1;
		if (!live || !block) {
			*index = MPI_UNDEFINED;
			if (flag)
				*flag = !live;
			empty_status(status);
			return MPI_SUCCESS;
		}
		tc_yield(tcmpi__self->proc);
	}
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
	return any(count, array_of_requests, index, NULL, status, 1, __func__);
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
	return any(count, array_of_requests, index, flag, status, 0, __func__);
}

/* Whether handle h names a request that has an operation to complete:
 * active, complete and not yet waited for, or a receive posted on a
 * communicator of one rank (MPI's "active" request). */
static int req_live(MPI_Request h)
{
	const struct tcmpi__req *q = tcmpi__req_of(h);
	return q && (q->active || q->done || q->selfpend);
}

/* MPI_Waitsome and MPI_Testsome: completes every request of a[] that is
 * complete now (block: after waiting until one is); *outcount of them,
 * their indices and statuses in order, or MPI_UNDEFINED when none of a[]
 * is active.  A failed request is among them, its status's MPI_ERROR set,
 * and the call returns MPI_ERR_IN_STATUS, as MPI_Waitall does. */
static int some(int count, MPI_Request a[], int *outcount, int idx[], MPI_Status *sts, int block,
                const char *fn)
{
	int rc = tcmpi__check_reqs(count, a, fn);
	if (rc)
		return rc;
	if (!outcount || (count > 0 && !idx))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL outcount or indices");
	for (;;) {
		int live = 0, pend = -1, n = 0, first = MPI_SUCCESS;
		for (int i = 0; i < count; i++) {
			struct tcmpi__req *q = tcmpi__req_of(a[i]);
			if (!req_live(a[i]))
				continue;
			live = 1;
			if (self_blocked(q)) {
				pend = pend < 0 ? i : pend;
				continue;
			}
			int f = 0;
			MPI_Status *st = nth(sts, n);
			rc = test_one(&a[i], &f, st, fn);
			if (!f && !rc)
				continue;
			idx[n++] = i;
			in_status(st, rc, &first);
		}
		if (n || !live) {
			*outcount = n ? n : MPI_UNDEFINED;
			return first;
		}
		if (!block) {
			*outcount = 0;
			return MPI_SUCCESS;
		}
		if (pend >= 0 && live) {
			/* Are only receives on communicators of one rank left? */
			int other = 0;
			for (int i = 0; i < count && !other; i++)
				other = req_live(a[i]) && !self_blocked(tcmpi__req_of(a[i]));
			if (!other) {
				struct tcmpi__req *q = self_blocked(tcmpi__req_of(a[pend]));
				return tcmpi__self_wait_error(q, fn);
			}
		}
		tc_yield(tcmpi__self->proc);
	}
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
	return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1,
	            __func__);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                 int array_of_indices[], MPI_Status array_of_statuses[])
{
	return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0,
	            __func__);
}

/* Tests a request without completing it: *flag = 1 and its status when
 * its operation is complete (or it is MPI_REQUEST_NULL or inactive: an
 * empty status); the request stays as it was, for a wait or test to
 * complete.  A receive's data are in its buffer once *flag is 1. */
int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
	int rc = tcmpi__check_req(&request, __func__);
	if (rc)
		return rc;
	if (!flag)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL flag");
	struct tcmpi__req *q = tcmpi__req_of(request);
	*flag = 1;
	if (!req_live(request)) {
		empty_status(status);
		return MPI_SUCCESS;
	}
	if (q->kind == TCMPI_REQ_PAIR && q->active)
		(void)tcmpi__pair_progress(q, 0, __func__);
	if (q->selfpend || (q->kind == TCMPI_REQ_PAIR && q->active)) {
		*flag = 0;
		return MPI_SUCCESS;
	}
	if (q->active) {
		int done = 0;
		int tcrc = tcmpi__part_test(q, 0, &done);
		if (!done) {
			*flag = 0;
			return MPI_SUCCESS;
		}
		q->tcrc = tcrc;
		q->active = 0;
		q->done = 2; /* as MPI_Testall leaves it */
	}
	return done_status(q, status, __func__);
}
