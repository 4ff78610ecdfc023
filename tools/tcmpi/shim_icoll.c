/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_icoll.c - the nonblocking (MPI_Iallreduce, ...) and
 * persistent (MPI_Allreduce_init, ..., MPI_Start) forms of MPI's
 * fixed-count collectives over topocoll's tc_iNAME and tc_NAME_init; the
 * requests complete with MPI_Wait and its kin (shim_p2p.c).
 *
 * Their buffers are borrowed by topocoll until the request completes, so
 * they must be contiguous (every predefined datatype and contiguous derived
 * ones), and a reduction's operator must be one topocoll applies to the
 * datatype (tcmpi__op_native); anything else fails with
 * MPI_ERR_UNSUPPORTED_OPERATION and a message saying why.  The
 * variable-count calls (MPI_Iallgatherv, MPI_Igatherv, MPI_Iscatterv,
 * MPI_Ialltoallv, MPI_Ireduce_scatter, the w forms, their _init) have no
 * request form in topocoll: they are unsupported.
 */
#include <stdint.h>
#include <string.h>

#include "shim.h"

enum icoll {
	IC_BARRIER,
	IC_BCAST,
	IC_ALLREDUCE,
	IC_REDUCE,
	IC_SCAN,
	IC_EXSCAN,
	IC_REDUCE_SCATTER_BLOCK,
	IC_ALLGATHER,
	IC_GATHER,
	IC_SCATTER,
	IC_ALLTOALL,
};

struct icall {
	enum icoll which;
	const void *sbuf;
	void *rbuf;
	int scount, rcount;
	MPI_Datatype stype, rtype;
	MPI_Op op;
	int root;
	MPI_Comm comm;
	int persistent;
	MPI_Request *req;
	const char *fn;
};

static int is_red(enum icoll w)
{
	return w >= IC_ALLREDUCE && w <= IC_REDUCE_SCATTER_BLOCK;
}

static int has_root(enum icoll w)
{
	return w == IC_BCAST || w == IC_REDUCE || w == IC_GATHER || w == IC_SCATTER;
}

static int start_call(struct tcmpi__req *q, const struct icall *a, int p, int r, size_t sb,
                      size_t rb, int tdt, enum tc_op tcop)
{
	struct tc_proc *pr = q->proc;
	const void *s = a->sbuf == MPI_IN_PLACE ? TC_IN_PLACE : a->sbuf;
	const struct tc_coll_opts *o = &q->opts;
	tc_request *tr = &q->tr;
	int ps = a->persistent;
	size_t n = (size_t)a->rcount;
	enum tc_dtype d = (enum tc_dtype)tdt;
	void *scat_r = a->rbuf == MPI_IN_PLACE ? (void *)(uintptr_t)TC_IN_PLACE : a->rbuf;
	(void)p;
	(void)r;
	switch (a->which) {
	case IC_BARRIER:
		return ps ? tc_barrier_init(pr, o, tr) : tc_ibarrier(pr, o, tr);
	case IC_BCAST:
		return ps ? tc_bcast_init(pr, a->rbuf, rb, TC_BYTE, a->root, o, tr)
		          : tc_ibcast(pr, a->rbuf, rb, TC_BYTE, a->root, o, tr);
	case IC_ALLREDUCE:
		return ps ? tc_allreduce_init(pr, s, a->rbuf, n, d, tcop, o, tr)
		          : tc_iallreduce(pr, s, a->rbuf, n, d, tcop, o, tr);
	case IC_REDUCE:
		return ps ? tc_reduce_init(pr, s, a->rbuf, n, d, tcop, a->root, o, tr)
		          : tc_ireduce(pr, s, a->rbuf, n, d, tcop, a->root, o, tr);
	case IC_SCAN:
		return ps ? tc_scan_init(pr, s, a->rbuf, n, d, tcop, o, tr)
		          : tc_iscan(pr, s, a->rbuf, n, d, tcop, o, tr);
	case IC_EXSCAN:
		return ps ? tc_exscan_init(pr, s, a->rbuf, n, d, tcop, o, tr)
		          : tc_iexscan(pr, s, a->rbuf, n, d, tcop, o, tr);
	case IC_REDUCE_SCATTER_BLOCK:
		return ps ? tc_reduce_scatter_init(pr, s, a->rbuf, n, d, tcop, o, tr)
		          : tc_ireduce_scatter(pr, s, a->rbuf, n, d, tcop, o, tr);
	case IC_ALLGATHER:
		return ps ? tc_allgather_init(pr, s, a->rbuf, rb, TC_BYTE, o, tr)
		          : tc_iallgather(pr, s, a->rbuf, rb, TC_BYTE, o, tr);
	case IC_GATHER:
		return ps ? tc_gather_init(pr, s, a->rbuf, sb, TC_BYTE, a->root, o, tr)
		          : tc_igather(pr, s, a->rbuf, sb, TC_BYTE, a->root, o, tr);
	case IC_SCATTER:
		return ps ? tc_scatter_init(pr, a->sbuf, scat_r, rb ? rb : sb, TC_BYTE, a->root, o, tr)
		          : tc_iscatter(pr, a->sbuf, scat_r, rb ? rb : sb, TC_BYTE, a->root, o, tr);
	case IC_ALLTOALL:
		return ps ? tc_alltoall_init(pr, s, a->rbuf, rb, TC_BYTE, o, tr)
		          : tc_ialltoall(pr, s, a->rbuf, rb, TC_BYTE, o, tr);
	}
	return TC_EINVAL;
}

static int icall(const struct icall *a)
{
	const char *fn = a->fn;
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	struct tcmpi__comm *c = tcmpi__comm(a->comm);
	if (!c)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator %d", a->comm);
	MPI_Comm comm = a->comm;
	if (!a->req)
		return tcmpi__error(comm, MPI_ERR_REQUEST, fn, "NULL request");
	int p = tcmpi__comm_size(c), r = tcmpi__comm_rank(c);
	if (has_root(a->which) && (a->root < 0 || a->root >= p))
		return tcmpi__error(comm, MPI_ERR_ROOT, fn, "root %d out of range 0..%d", a->root, p - 1);
	/* The sides this rank uses, and their bytes per rank. */
	int uses_s = a->which != IC_BARRIER && a->which != IC_BCAST &&
	             !(a->which == IC_SCATTER && r != a->root) && a->sbuf != MPI_IN_PLACE;
	int uses_r = a->which != IC_BARRIER && a->rbuf != MPI_IN_PLACE &&
	             !((a->which == IC_GATHER || a->which == IC_REDUCE) && r != a->root);
	if (is_red(a->which))
		uses_r = 1; /* the datatype and count of every rank */
	const struct tcmpi__dtype *st = uses_s ? tcmpi__dt(a->stype) : NULL;
	const struct tcmpi__dtype *rt = uses_r ? tcmpi__dt(a->rtype) : NULL;
	if ((uses_s && !st) || (uses_r && !rt))
		return tcmpi__error(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype");
	if (a->scount < 0 || a->rcount < 0)
		return tcmpi__error(comm, MPI_ERR_COUNT, fn, "negative count");
	if ((st && !st->contig) || (rt && !rt->contig))
		return tcmpi__error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
		                    "a datatype that is not contiguous (the nonblocking and "
		                    "persistent forms take contiguous buffers only)");
	size_t sb = st ? (size_t)a->scount * st->size : 0;
	size_t rb = rt ? (size_t)a->rcount * rt->size : 0;
	if (st && rt && !is_red(a->which) && sb != rb)
		return tcmpi__error(comm, MPI_ERR_TRUNCATE, fn,
		                    "the send and receive sides differ in bytes (%zu, %zu)", sb, rb);
	int tdt = -1;
	enum tc_op tcop = TC_OP_SUM;
	struct tcmpi__req *q = NULL;
	struct tc_user_op user;
	if (is_red(a->which)) {
		if (!tcmpi__op_valid(a->op))
			return tcmpi__error(comm, MPI_ERR_OP, fn, "invalid operator %d", a->op);
		tdt = tcmpi__tc_dtype(a->rtype);
		if (tdt < 0 || tcmpi__op_native(a->op, a->rtype, &tcop, &user) != 0)
			return tcmpi__error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
			                    "this operator on this datatype is reduced by the MPI "
			                    "layer itself, which has no nonblocking form: use the "
			                    "blocking call");
	}
	q = tcmpi__req_new(comm, TCMPI_REQ_COLL, a->req, fn);
	if (!q)
		return MPI_ERR_NO_MEM;
	q->persistent = a->persistent;
	if (is_red(a->which)) {
		q->user = user;
		q->opts.user_op = tcop == TC_OP_USER ? &q->user : NULL;
	}
	if (!c->proc) {
		/* MPI_COMM_SELF and its kin: the result is the rank's own data. */
		if (a->which == IC_EXSCAN || a->sbuf == MPI_IN_PLACE || a->which == IC_BARRIER ||
		    a->which == IC_BCAST) {
			q->lbytes = 0;
		} else {
			q->lsrc = a->sbuf;
			q->ldst = a->rbuf;
			q->lbytes = rb;
		}
		if (!a->persistent) {
			if (q->lbytes)
				memmove(q->ldst, q->lsrc, q->lbytes);
			q->done = 1;
		}
		return MPI_SUCCESS;
	}
	q->proc = c->proc;
	int tcrc = start_call(q, a, p, r, sb, rb, tdt, tcop);
	if (tcrc) {
		tcmpi__req_drop(a->req);
		return tcmpi__tc_error(comm, tcrc, fn);
	}
	q->active = !a->persistent;
	return MPI_SUCCESS;
}

#define ICALL(...) return icall(&(struct icall){__VA_ARGS__, .fn = __func__})

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	ICALL(.which = IC_BARRIER, .comm = comm, .req = request);
}

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	(void)info;
	ICALL(.which = IC_BARRIER, .comm = comm, .req = request, .persistent = 1);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
	ICALL(.which = IC_BCAST, .rbuf = buffer, .rcount = count, .rtype = datatype, .root = root,
	      .comm = comm, .req = request);
}

int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request)
{
	(void)info;
	ICALL(.which = IC_BCAST, .rbuf = buffer, .rcount = count, .rtype = datatype, .root = root,
	      .comm = comm, .req = request, .persistent = 1);
}

#define RED_FORMS(name, Name, WHICH)                                                                \
	int MPI_I##name(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,       \
	                MPI_Op op, MPI_Comm comm, MPI_Request *request)                             \
	{                                                                                           \
		ICALL(.which = WHICH, .sbuf = sendbuf, .rbuf = recvbuf, .scount = count,            \
		      .rcount = count, .stype = datatype, .rtype = datatype, .op = op,              \
		      .comm = comm, .req = request);                                                \
	}                                                                                           \
	int MPI_##Name##_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, \
	                      MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)        \
	{                                                                                           \
		(void)info;                                                                         \
		ICALL(.which = WHICH, .sbuf = sendbuf, .rbuf = recvbuf, .scount = count,            \
		      .rcount = count, .stype = datatype, .rtype = datatype, .op = op,              \
		      .comm = comm, .req = request, .persistent = 1);                               \
	}
RED_FORMS(allreduce, Allreduce, IC_ALLREDUCE)
RED_FORMS(scan, Scan, IC_SCAN)
RED_FORMS(exscan, Exscan, IC_EXSCAN)

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	ICALL(.which = IC_REDUCE_SCATTER_BLOCK, .sbuf = sendbuf, .rbuf = recvbuf,
	      .scount = recvcount, .rcount = recvcount, .stype = datatype, .rtype = datatype,
	      .op = op, .comm = comm, .req = request);
}

int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	(void)info;
	ICALL(.which = IC_REDUCE_SCATTER_BLOCK, .sbuf = sendbuf, .rbuf = recvbuf,
	      .scount = recvcount, .rcount = recvcount, .stype = datatype, .rtype = datatype,
	      .op = op, .comm = comm, .req = request, .persistent = 1);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
	ICALL(.which = IC_REDUCE, .sbuf = sendbuf, .rbuf = recvbuf, .scount = count,
	      .rcount = count, .stype = datatype, .rtype = datatype, .op = op, .root = root,
	      .comm = comm, .req = request);
}

int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	(void)info;
	ICALL(.which = IC_REDUCE, .sbuf = sendbuf, .rbuf = recvbuf, .scount = count,
	      .rcount = count, .stype = datatype, .rtype = datatype, .op = op, .root = root,
	      .comm = comm, .req = request, .persistent = 1);
}

#define MOVE_FORMS(name, Name, WHICH)                                                              \
	int MPI_I##name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,  \
	                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) \
	{                                                                                          \
		ICALL(.which = WHICH, .sbuf = sendbuf, .rbuf = recvbuf, .scount = sendcount,       \
		      .rcount = recvcount, .stype = sendtype, .rtype = recvtype, .comm = comm,     \
		      .req = request);                                                             \
	}                                                                                          \
	int MPI_##Name##_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,           \
	                      void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,  \
	                      MPI_Info info, MPI_Request *request)                                 \
	{                                                                                          \
		(void)info;                                                                        \
		ICALL(.which = WHICH, .sbuf = sendbuf, .rbuf = recvbuf, .scount = sendcount,       \
		      .rcount = recvcount, .stype = sendtype, .rtype = recvtype, .comm = comm,     \
		      .req = request, .persistent = 1);                                            \
	}
MOVE_FORMS(allgather, Allgather, IC_ALLGATHER)
MOVE_FORMS(alltoall, Alltoall, IC_ALLTOALL)

#define ROOTED_FORMS(name, Name, WHICH)                                                           \
	int MPI_I##name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, \
	                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,            \
	                MPI_Request *request)                                                     \
	{                                                                                         \
		ICALL(.which = WHICH, .sbuf = sendbuf, .rbuf = recvbuf, .scount = sendcount,      \
		      .rcount = recvcount, .stype = sendtype, .rtype = recvtype, .root = root,    \
		      .comm = comm, .req = request);                                              \
	}                                                                                         \
	int MPI_##Name##_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,          \
	                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,      \
	                      MPI_Comm comm, MPI_Info info, MPI_Request *request)                 \
	{                                                                                         \
		(void)info;                                                                       \
		ICALL(.which = WHICH, .sbuf = sendbuf, .rbuf = recvbuf, .scount = sendcount,      \
		      .rcount = recvcount, .stype = sendtype, .rtype = recvtype, .root = root,    \
		      .comm = comm, .req = request, .persistent = 1);                             \
	}
ROOTED_FORMS(gather, Gather, IC_GATHER)
ROOTED_FORMS(scatter, Scatter, IC_SCATTER)
