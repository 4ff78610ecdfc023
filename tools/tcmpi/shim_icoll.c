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
 * MPI_ERR_UNSUPPORTED_OPERATION and a message saying why.
 *
 * The variable-count calls (MPI_Iallgatherv, MPI_Igatherv, MPI_Iscatterv,
 * MPI_Ialltoallv, MPI_Ialltoallw, their _init) run over tc_iallgatherv,
 * tc_allgatherv_init, ...: they take any committed datatype, as the
 * blocking v-calls do (a non-contiguous side is packed at each start and
 * unpacked at completion).  MPI_Ireduce_scatter and
 * MPI_Reduce_scatter_init (recvcounts per rank) are the block form's
 * when the counts are equal, otherwise an allreduce of the whole vector
 * into the request's buffer, of which the rank's part is copied out at
 * each completion (the blocking MPI_Reduce_scatter's way, shim_coll.c).
 */
#include <stdint.h>
#include <stdlib.h>
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
		/* A root in place has no send side: its block is the
		 * receive side's. */
		return ps ? tc_gather_init(pr, s, a->rbuf, sb ? sb : rb, TC_BYTE, a->root, o, tr)
		          : tc_igather(pr, s, a->rbuf, sb ? sb : rb, TC_BYTE, a->root, o, tr);
	case IC_SCATTER:
		return ps ? tc_scatter_init(pr, a->sbuf, scat_r, rb ? rb : sb, TC_BYTE, a->root, o, tr)
		          : tc_iscatter(pr, a->sbuf, scat_r, rb ? rb : sb, TC_BYTE, a->root, o, tr);
	case IC_ALLTOALL:
		return ps ? tc_alltoall_init(pr, s, a->rbuf, rb, TC_BYTE, o, tr)
		          : tc_ialltoall(pr, s, a->rbuf, rb, TC_BYTE, o, tr);
	}
	return TC_EINVAL;
}

/* The prologue of every request form: the layer initialised, comm a
 * communicator, req not NULL, root (when rooted) in range; *c gets the
 * communicator, *p and *r its size and this rank.  MPI_SUCCESS or the
 * error (reported). */
static int icall_begin(const char *fn, MPI_Comm comm, const MPI_Request *req, int rooted, int root,
                       struct tcmpi__comm **c, int *p, int *r)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	if (!(*c = tcmpi__comm(comm)))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
	if (!req)
		return tcmpi__error(comm, MPI_ERR_REQUEST, fn, "NULL request");
	*p = tcmpi__comm_size(*c);
	*r = tcmpi__comm_rank(*c);
	if (rooted && (root < 0 || root >= *p))
		return tcmpi__error(comm, MPI_ERR_ROOT, fn, "root %d out of range 0..%d", root, *p - 1);
	return MPI_SUCCESS;
}

/* MPI_IN_PLACE where the call allows it: as the send buffer of the
 * reductions, the allgather and the alltoall, and at the root of a gather
 * or reduce; as the receive buffer of a scatter's root.  MPI_SUCCESS, or
 * MPI_ERR_BUFFER reported. */
static int in_place_check(const struct icall *a, int r)
{
	const int root = has_root(a->which) && r == a->root;
	const char *bad = NULL;
	if (a->rbuf == MPI_IN_PLACE && !(a->which == IC_SCATTER && root))
		bad = a->which == IC_BCAST ? "as the buffer" : "as the receive buffer";
	else if (a->sbuf == MPI_IN_PLACE &&
	         (a->which == IC_SCATTER || ((a->which == IC_GATHER || a->which == IC_REDUCE) && !root)))
		bad = a->which == IC_SCATTER ? "as the send buffer" : "at a rank other than the root";
	return bad ? tcmpi__error(a->comm, MPI_ERR_BUFFER, a->fn, "MPI_IN_PLACE %s", bad) : MPI_SUCCESS;
}

static int icall(const struct icall *a)
{
	const char *fn = a->fn;
	const MPI_Comm comm = a->comm;
	struct tcmpi__comm *c;
	int p = 0, r = 0; /* set by icall_begin unless it fails */
	int rc = icall_begin(fn, comm, a->req, has_root(a->which), a->root, &c, &p, &r);
	if (rc)
		return rc;
	if ((rc = in_place_check(a, r)) != MPI_SUCCESS)
		return rc;
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
		const int orc = tcmpi__op_applies(comm, a->op, a->rtype, fn);
		if (orc)
			return orc;
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
		q->uop = a->op;
		tcmpi__op_hold(a->op);
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
	if (tcmpi__info_arg(comm, info, __func__))
		return MPI_ERR_INFO;
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
	if (tcmpi__info_arg(comm, info, __func__))
		return MPI_ERR_INFO;
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
		if (tcmpi__info_arg(comm, info, __func__))                                          \
			return MPI_ERR_INFO;                                                        \
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
	if (tcmpi__info_arg(comm, info, __func__))
		return MPI_ERR_INFO;
	ICALL(.which = IC_REDUCE_SCATTER_BLOCK, .sbuf = sendbuf, .rbuf = recvbuf,
	      .scount = recvcount, .rcount = recvcount, .stype = datatype, .rtype = datatype,
	      .op = op, .comm = comm, .req = request, .persistent = 1);
}

/* MPI_Ireduce_scatter and MPI_Reduce_scatter_init: equal counts go to
 * the block form (tc_ireduce_scatter); others to tc_iallreduce (or
 * tc_allreduce_init) of the sum of the counts into q->tmp, of which
 * req_finish (shim_p2p.c) copies this rank's part (at q->toff) to recvbuf.
 * MPI_IN_PLACE: the whole vector is in recvbuf, read by the allreduce and
 * overwritten only at completion.  The block form's restrictions hold
 * (contiguous datatype, an operator topocoll applies). */
static int ireduce_scatter(const void *sbuf, void *rbuf, const int *counts, MPI_Datatype dt,
                           MPI_Op op, MPI_Comm comm, int persistent, MPI_Request *req, const char *fn)
{
	struct tcmpi__comm *c;
	int p = 0, r = 0;
	int rc = icall_begin(fn, comm, req, 0, 0, &c, &p, &r);
	if (rc)
		return rc;
	if (!counts)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL recvcounts");
	size_t total = 0, before = 0;
	int equal = 1;
	for (int i = 0; i < p; i++) {
		if (counts[i] < 0)
			return tcmpi__error(comm, MPI_ERR_COUNT, fn, "negative recvcounts[%d] = %d",
			                    i, counts[i]);
		if (i < r)
			before += (size_t)counts[i];
		total += (size_t)counts[i];
		equal &= counts[i] == counts[0];
	}
	if (equal)
		return icall(&(struct icall){.which = IC_REDUCE_SCATTER_BLOCK,
		                             .sbuf = sbuf,
		                             .rbuf = rbuf,
		                             .scount = counts[0],
		                             .rcount = counts[0],
		                             .stype = dt,
		                             .rtype = dt,
		                             .op = op,
		                             .comm = comm,
		                             .persistent = persistent,
		                             .req = req,
		                             .fn = fn});
	/* Several ranks (one rank's counts are equal). */
	const struct tcmpi__dtype *t = tcmpi__dt(dt);
	if (!t)
		return tcmpi__error(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted datatype");
	if (!t->contig)
		return tcmpi__error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
		                    "a datatype that is not contiguous (the nonblocking and "
		                    "persistent forms take contiguous buffers only)");
	const int orc = tcmpi__op_applies(comm, op, dt, fn);
	if (orc)
		return orc;
	enum tc_op tcop = TC_OP_SUM;
	struct tc_user_op user;
	int tdt = tcmpi__tc_dtype(dt);
	if (tdt < 0 || tcmpi__op_native(op, dt, &tcop, &user) != 0)
		return tcmpi__error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
		                    "this operator on this datatype is reduced by the MPI layer "
		                    "itself, which has no nonblocking form: use the blocking call");
	struct tcmpi__req *q = tcmpi__req_new(comm, TCMPI_REQ_COLL, req, fn);
	if (!q)
		return MPI_ERR_NO_MEM;
	q->persistent = persistent;
	q->user = user;
	q->uop = op;
	tcmpi__op_hold(op);
	q->opts.user_op = tcop == TC_OP_USER ? &q->user : NULL;
	if (!(q->tmp = tcmpi__alloc(total * t->size))) {
		tcmpi__req_drop(req);
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	q->toff = before * t->size;
	q->ucount = (size_t)counts[r];
	if (!(q->t = tcmpi__dtype_hold(t))) {
		tcmpi__req_drop(req);
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	q->ubuf = rbuf;
	q->proc = c->proc;
	const void *s = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
	enum tc_dtype d = (enum tc_dtype)tdt;
	int tcrc = persistent ? tc_allreduce_init(c->proc, s, q->tmp, total, d, tcop, &q->opts, &q->tr)
	                      : tc_iallreduce(c->proc, s, q->tmp, total, d, tcop, &q->opts, &q->tr);
	if (tcrc) {
		tcmpi__req_drop(req);
		return tcmpi__tc_error(comm, tcrc, fn);
	}
	q->active = !persistent;
	return MPI_SUCCESS;
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	return ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, 0, request, __func__);
}

int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request)
{
	if (tcmpi__info_arg(comm, info, __func__))
		return MPI_ERR_INFO;
	return ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, 1, request, __func__);
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
	if (tcmpi__info_arg(comm, info, __func__))
		return MPI_ERR_INFO;
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
		if (tcmpi__info_arg(comm, info, __func__))                                         \
			return MPI_ERR_INFO;                                                       \
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
		if (tcmpi__info_arg(comm, info, __func__))                                        \
			return MPI_ERR_INFO;                                                      \
		ICALL(.which = WHICH, .sbuf = sendbuf, .rbuf = recvbuf, .scount = sendcount,      \
		      .rcount = recvcount, .stype = sendtype, .rtype = recvtype, .root = root,    \
		      .comm = comm, .req = request, .persistent = 1);                             \
	}
ROOTED_FORMS(gather, Gather, IC_GATHER)
ROOTED_FORMS(scatter, Scatter, IC_SCATTER)

/* ---------------------------------------------------------------------
 * The variable-count forms.  Each side of the call (what this rank sends,
 * what it receives) is n blocks, n = p or 1, block i being counts[i]
 * elements of types[i] at displacement displs[i] (in the type's extents,
 * or in bytes for the w form).  topocoll moves bytes (TC_BYTE): its count
 * and displacement arrays are the blocks' bytes and byte offsets, made
 * once at the call and kept in the request with the datatypes' handles.
 * A side whose blocks are all contiguous at non-negative offsets is passed
 * to topocoll as the user's buffer itself; any other is packed into a
 * buffer of the request (the send side at each start, tcmpi__vreq_start)
 * or received into one and unpacked at completion (tcmpi__vreq_finish).
 */
enum ivshape { IV_GATHER, IV_SCATTER, IV_ALLGATHER, IV_ALLTOALL };

struct ivside {
	int n;      /* blocks */
	int packed; /* through buf rather than the user's buffer */
	void *user; /* the user's buffer */
	MPI_Datatype *types;
	/* Each block's datatype, the request's own copies (one per run of
	 * blocks of one handle), which outlive MPI_Type_free. */
	struct tcmpi__dtype **held;
	size_t *counts;      /* elements per block */
	MPI_Aint *at;        /* byte displacement of each block in user */
	size_t *bytes, *off; /* what topocoll gets, in bytes */
	unsigned char *buf;  /* the packed side (packed) */
	size_t total;
};

struct tcmpi__vreq {
	struct ivside s, d;
	int uses_s, uses_r;
};

static void ivside_free(struct ivside *v)
{
	for (int i = 0; v->held && i < v->n; i++)
		if (!i || v->held[i] != v->held[i - 1])
			tcmpi__dtype_drop(v->held[i]);
	free(v->held);
	free(v->types);
	free(v->counts);
	free(v->at);
	free(v->bytes);
	free(v->off);
	free(v->buf);
}

void tcmpi__vreq_free(struct tcmpi__vreq *v)
{
	if (!v)
		return;
	ivside_free(&v->s);
	ivside_free(&v->d);
	free(v);
}

/* The side of n blocks; counts and displs int arrays, displs NULL: one
 * block at 0; types NULL: every block of type one.  MPI_SUCCESS, or the
 * MPI error with *what saying what was wrong. */
static int ivside_make(struct ivside *v, int n, const void *buf, const int *counts, const int *displs,
                       const MPI_Datatype *types, MPI_Datatype one, int bytes_displ, const char **what)
{
	size_t un = (size_t)n;
	v->n = n;
	v->user = (void *)(uintptr_t)buf;
	v->types = tcmpi__alloc(sizeof *v->types * un);
	v->held = calloc(un ? un : 1, sizeof *v->held);
	v->counts = tcmpi__alloc(sizeof *v->counts * un);
	v->at = tcmpi__alloc(sizeof *v->at * un);
	v->bytes = tcmpi__alloc(sizeof *v->bytes * un);
	v->off = tcmpi__alloc(sizeof *v->off * un);
	if (!v->types || !v->held || !v->counts || !v->at || !v->bytes || !v->off) {
		*what = "out of memory";
		return MPI_ERR_NO_MEM;
	}
	if (!counts || (n > 1 && !displs)) {
		*what = "NULL count or displacement array";
		return MPI_ERR_ARG;
	}
	for (int i = 0; i < n; i++) {
		v->types[i] = types ? types[i] : one;
		const struct tcmpi__dtype *t = tcmpi__dt(v->types[i]);
		if (!t) {
			*what = "invalid or uncommitted datatype";
			return MPI_ERR_TYPE;
		}
		if (i && v->types[i] == v->types[i - 1]) {
			v->held[i] = v->held[i - 1];
		} else if (!(v->held[i] = tcmpi__dtype_hold(t))) {
			*what = "out of memory";
			return MPI_ERR_NO_MEM;
		}
		if (counts[i] < 0) {
			*what = "negative count";
			return MPI_ERR_COUNT;
		}
		MPI_Aint d = displs ? displs[i] : 0;
		v->counts[i] = (size_t)counts[i];
		v->at[i] = bytes_displ ? d : d * t->extent;
		v->bytes[i] = v->counts[i] * t->size;
		v->off[i] = v->total;
		v->total += v->bytes[i];
		if (!t->contig || v->at[i] < 0)
			v->packed = 1;
	}
	if (!v->packed) {
		for (int i = 0; i < n; i++)
			v->off[i] = (size_t)v->at[i];
		return MPI_SUCCESS;
	}
	v->buf = tcmpi__alloc(v->total);
	if (!v->buf) {
		*what = "out of memory";
		return MPI_ERR_NO_MEM;
	}
	return MPI_SUCCESS;
}

/* The side's bytes as topocoll takes them. */
static void *ivside_ptr(const struct ivside *v)
{
	return v->packed ? (void *)v->buf : v->user;
}

static void ivside_pack(struct ivside *v)
{
	for (int i = 0; i < v->n && v->packed; i++) {
		const struct tcmpi__dtype *t = v->held[i];
		if (t)
			tcmpi__pack((const unsigned char *)v->user + v->at[i], v->counts[i], t,
			            v->buf + v->off[i]);
	}
}

static void ivside_unpack(struct ivside *v)
{
	for (int i = 0; i < v->n && v->packed; i++) {
		const struct tcmpi__dtype *t = v->held[i];
		if (t)
			tcmpi__unpack(v->buf + v->off[i], v->counts[i], t,
			              (unsigned char *)v->user + v->at[i]);
	}
}

void tcmpi__vreq_start(struct tcmpi__req *q)
{
	struct tcmpi__vreq *v = q->v;
	if (v->uses_s)
		ivside_pack(&v->s);
	if (q->proc)
		return;
	/* One rank: its one send block is its one receive block (the sizes
	 * were checked at the call). */
	const unsigned char *from = (const unsigned char *)ivside_ptr(&v->s) + v->s.off[0];
	unsigned char *to = (unsigned char *)ivside_ptr(&v->d) + v->d.off[0];
	if (v->s.bytes[0])
		memmove(to, from, v->s.bytes[0]);
	ivside_unpack(&v->d);
	q->done = 1;
}

void tcmpi__vreq_finish(struct tcmpi__req *q)
{
	if (q->v->uses_r)
		ivside_unpack(&q->v->d);
}

struct ivcall {
	enum ivshape sh;
	const void *sbuf;
	const int *scounts, *sdispls;
	const MPI_Datatype *stypes;
	MPI_Datatype stype;
	void *rbuf;
	const int *rcounts, *rdispls;
	const MPI_Datatype *rtypes;
	MPI_Datatype rtype;
	int bytes_displ; /* the w form */
	int root;
	MPI_Comm comm;
	int persistent;
	MPI_Request *req;
	const char *fn;
};

static int ivstart(struct tcmpi__req *q, const struct ivcall *a)
{
	struct tc_proc *pr = q->proc;
	struct tcmpi__vreq *v = q->v;
	struct ivside *s = &v->s, *d = &v->d;
	const void *sp = v->uses_s ? ivside_ptr(s) : NULL;
	void *rp = v->uses_r ? ivside_ptr(d) : NULL;
	const struct tc_coll_opts *o = NULL;
	tc_request *tr = &q->tr;
	int ps = a->persistent;
	switch (a->sh) {
	case IV_GATHER: {
		const size_t *rc = v->uses_r ? d->bytes : NULL, *rd = v->uses_r ? d->off : NULL;
		return ps ? tc_gatherv_init(pr, sp, s->bytes[0], rp, rc, rd, TC_BYTE, a->root, o, tr)
		          : tc_igatherv(pr, sp, s->bytes[0], rp, rc, rd, TC_BYTE, a->root, o, tr);
	}
	case IV_SCATTER: {
		const size_t *sc = v->uses_s ? s->bytes : NULL, *sd = v->uses_s ? s->off : NULL;
		return ps ? tc_scatterv_init(pr, sp, sc, sd, rp, d->bytes[0], TC_BYTE, a->root, o, tr)
		          : tc_iscatterv(pr, sp, sc, sd, rp, d->bytes[0], TC_BYTE, a->root, o, tr);
	}
	case IV_ALLGATHER:
		return ps ? tc_allgatherv_init(pr, sp, s->bytes[0], rp, d->bytes, d->off, TC_BYTE, o, tr)
		          : tc_iallgatherv(pr, sp, s->bytes[0], rp, d->bytes, d->off, TC_BYTE, o, tr);
	case IV_ALLTOALL:
		return ps ? tc_alltoallv_init(pr, sp, s->bytes, s->off, rp, d->bytes, d->off,
		                              TC_BYTE, o, tr)
		          : tc_ialltoallv(pr, sp, s->bytes, s->off, rp, d->bytes, d->off, TC_BYTE, o, tr);
	}
	return TC_EINVAL;
}

static int ivcall(const struct ivcall *a)
{
	const char *fn = a->fn;
	const MPI_Comm comm = a->comm;
	const int rooted = a->sh == IV_GATHER || a->sh == IV_SCATTER;
	struct tcmpi__comm *c;
	int p = 0, r = 0; /* set by icall_begin unless it fails */
	int rc = icall_begin(fn, comm, a->req, rooted, a->root, &c, &p, &r);
	if (rc)
		return rc;
	if (a->sbuf == MPI_IN_PLACE || a->rbuf == MPI_IN_PLACE)
		return tcmpi__error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
		                    "MPI_IN_PLACE is not supported in the v and w forms yet");
	struct tcmpi__vreq *v = calloc(1, sizeof *v);
	if (!v)
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	/* The v sides have a block per rank and their displacements, also
	 * at p = 1; the others one block at 0. */
	const int sv = a->sh == IV_SCATTER || a->sh == IV_ALLTOALL, rv = a->sh != IV_SCATTER;
	int sn = sv ? p : 1;
	int rn = rv ? p : 1;
	v->uses_s = !(a->sh == IV_SCATTER && r != a->root);
	v->uses_r = !(a->sh == IV_GATHER && r != a->root);
	const char *what = NULL;
	int mrc = MPI_SUCCESS;
	if (v->uses_s)
		mrc = ivside_make(&v->s, sn, a->sbuf, a->scounts, sv ? a->sdispls : NULL, a->stypes,
		                  a->stype, a->bytes_displ, &what);
	if (!mrc && v->uses_r)
		mrc = ivside_make(&v->d, rn, a->rbuf, a->rcounts, rv ? a->rdispls : NULL, a->rtypes,
		                  a->rtype, a->bytes_displ, &what);
	/* One rank: the call is a copy of its one block. */
	int local = !c->proc || p == 1;
	if (!mrc && local && v->s.bytes[0] != v->d.bytes[0]) {
		mrc = MPI_ERR_TRUNCATE;
		what = "the send and receive sides differ in bytes";
	}
	if (mrc) {
		tcmpi__vreq_free(v);
		return tcmpi__error(comm, mrc, fn, "%s", what);
	}
	struct tcmpi__req *q = tcmpi__req_new(comm, TCMPI_REQ_COLL, a->req, fn);
	if (!q) {
		tcmpi__vreq_free(v);
		return MPI_ERR_NO_MEM;
	}
	q->v = v;
	q->persistent = a->persistent;
	if (local) {
		if (!a->persistent)
			tcmpi__vreq_start(q);
		return MPI_SUCCESS;
	}
	q->proc = c->proc;
	if (!a->persistent && v->uses_s)
		ivside_pack(&v->s);
	int tcrc = ivstart(q, a);
	if (tcrc) {
		tcmpi__req_drop(a->req);
		return tcmpi__tc_error(comm, tcrc, fn);
	}
	q->active = !a->persistent;
	return MPI_SUCCESS;
}

#define IVCALL(...) return ivcall(&(struct ivcall){__VA_ARGS__, .fn = __func__})

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
	IVCALL(.sh = IV_GATHER, .sbuf = sendbuf, .scounts = &sendcount, .stype = sendtype,
	       .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype,
	       .root = root, .comm = comm, .req = request);
}

int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	if (tcmpi__info_arg(comm, info, __func__))
		return MPI_ERR_INFO;
	IVCALL(.sh = IV_GATHER, .sbuf = sendbuf, .scounts = &sendcount, .stype = sendtype,
	       .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype,
	       .root = root, .comm = comm, .req = request, .persistent = 1);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
	IVCALL(.sh = IV_SCATTER, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs,
	       .stype = sendtype, .rbuf = recvbuf, .rcounts = &recvcount, .rtype = recvtype,
	       .root = root, .comm = comm, .req = request);
}

int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	if (tcmpi__info_arg(comm, info, __func__))
		return MPI_ERR_INFO;
	IVCALL(.sh = IV_SCATTER, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = displs,
	       .stype = sendtype, .rbuf = recvbuf, .rcounts = &recvcount, .rtype = recvtype,
	       .root = root, .comm = comm, .req = request, .persistent = 1);
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
	IVCALL(.sh = IV_ALLGATHER, .sbuf = sendbuf, .scounts = &sendcount, .stype = sendtype,
	       .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype,
	       .comm = comm, .req = request);
}

int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	if (tcmpi__info_arg(comm, info, __func__))
		return MPI_ERR_INFO;
	IVCALL(.sh = IV_ALLGATHER, .sbuf = sendbuf, .scounts = &sendcount, .stype = sendtype,
	       .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype,
	       .comm = comm, .req = request, .persistent = 1);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	IVCALL(.sh = IV_ALLTOALL, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
	       .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,
	       .rtype = recvtype, .comm = comm, .req = request);
}

int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
	if (tcmpi__info_arg(comm, info, __func__))
		return MPI_ERR_INFO;
	IVCALL(.sh = IV_ALLTOALL, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
	       .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,
	       .rtype = recvtype, .comm = comm, .req = request, .persistent = 1);
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
	IVCALL(.sh = IV_ALLTOALL, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
	       .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,
	       .rtypes = recvtypes, .bytes_displ = 1, .comm = comm, .req = request);
}

int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
	if (tcmpi__info_arg(comm, info, __func__))
		return MPI_ERR_INFO;
	IVCALL(.sh = IV_ALLTOALL, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,
	       .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,
	       .rtypes = recvtypes, .bytes_displ = 1, .comm = comm, .req = request, .persistent = 1);
}
