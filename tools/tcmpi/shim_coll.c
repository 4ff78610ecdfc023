/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_coll.c - every blocking collective of MPI over
 * topocoll's collectives on the team (MPI_COMM_WORLD and its duplicates)
 * or locally (a communicator of one rank).
 *
 * Data moves as bytes (TC_BYTE): a buffer whose datatype is contiguous is
 * passed as it is, any other is packed into a contiguous run before the
 * call and unpacked after (shim_dtype.c).  Reductions run inside topocoll
 * where it has the datatype and the operator (tcmpi__op_native); the
 * others (MPI_LXOR, MINLOC/MAXLOC, long double, complex, bool, derived
 * datatypes) gather the contributions and reduce them here in rank order,
 * which is right for every associative operator, commutative or not, and
 * costs p times the data in memory and traffic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

const char *tcmpi__op_name(MPI_Op op);

/* The proc of the communicator of the call under way (COLL_BEGIN_AS). */
static struct tc_proc *coll_proc;
#define PROC (coll_proc)

/* The communicator of a call, NULL when MPI is not initialised (or
 * finalised) or the handle is none in use: one load and a few compares on
 * the path every call takes, with the checks' order and errors of
 * coll_bad() when it fails. */
static inline struct tcmpi__comm *coll_comm(MPI_Comm comm)
{
	return __builtin_expect(tcmpi__live, 1) ? tcmpi__comm(comm) : NULL;
}

/* Why coll_comm() gave NULL, as an MPI error naming fn. */
static int coll_bad(MPI_Comm comm, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator %d", (int)comm);
}

/* The --report counters' start: a clock read only under --report. */
static inline double coll_t0(void)
{
	return __builtin_expect(tcmpi__self->stats != NULL, 0) ? tcmpi__now_ns() : 0.0;
}

/* A collective's prologue: initialised, valid communicator (c, p, r), the
 * start time t0; errors name fn. */
#define COLL_BEGIN_AS(comm, fn)                               \
	struct tcmpi__comm *c = coll_comm(comm);              \
	if (__builtin_expect(!c, 0))                          \
		return coll_bad(comm, fn);                    \
	coll_proc = c->proc;                                  \
	int p = tcmpi__comm_size(c), r = tcmpi__comm_rank(c); \
	(void)p;                                              \
	(void)r;                                              \
	double t0 = coll_t0()
#define COLL_BEGIN(comm) COLL_BEGIN_AS(comm, __func__)

#define DT_OR_FAIL(t, dt, comm)                                                                 \
	const struct tcmpi__dtype *t = tcmpi__dt(dt);                                           \
	if (!t)                                                                                 \
	return tcmpi__error(comm, MPI_ERR_TYPE, __func__, "invalid or uncommitted datatype %d", \
	                    (int)(dt))

#define COUNT_OR_FAIL(n, comm) \
	if ((n) < 0)           \
	return tcmpi__error(comm, MPI_ERR_COUNT, __func__, "negative count %lld", (long long)(n))

#define ROOT_OR_FAIL(root, comm)       \
	if ((root) < 0 || (root) >= p) \
	return tcmpi__error(comm, MPI_ERR_ROOT, __func__, "root %d out of range 0..%d", (root), p - 1)

static double model_ns(void)
{
	struct tc_coll_info info;
	tc_last_coll(PROC, &info);
	return (double)info.modelled_ps / TC_PS_PER_NS;
}

/* Ends a collective: the report's counters, the error handler. */
static int done(MPI_Comm comm, int tcrc, int mpirc, enum tcmpi_coll which, double t0, int p,
                const char *fn)
{
	if (__builtin_expect(tcrc, 0))
		return tcmpi__tc_error(comm, tcrc, fn);
	if (__builtin_expect(mpirc, 0))
		return tcmpi__error(comm, mpirc, fn, "%s",
		                    mpirc == MPI_ERR_NO_MEM     ? "out of memory"
		                    : mpirc == MPI_ERR_TRUNCATE ? "the send and receive sides "
		                                                  "differ in bytes"
		                                                : "the operator does not apply "
		                                                  "to the datatype");
	if (__builtin_expect(tcmpi__self->stats != NULL, 0)) /* --report */
		tcmpi__count(which, t0, p > 1 ? model_ns() : 0.0);
	return MPI_SUCCESS;
}

/* What stands for a buffer of no bytes that a program gives as NULL (as
 * MPI allows): the calls below take a NULL result for a failed
 * allocation. */
static unsigned char no_bytes;

/* Whether a buffer of bytes bytes is NULL: MPI_ERR_BUFFER, reported. */
static int null_buffer(MPI_Comm comm, const void *buf, size_t bytes, const char *what, const char *fn)
{
	return !buf && bytes
	               ? tcmpi__error(comm, MPI_ERR_BUFFER, fn, "NULL %s of %zu bytes", what, bytes)
	               : MPI_SUCCESS;
}

/* count elements of t at buf as bytes: buf itself when t is contiguous,
 * else packed into a new *tmp.  NULL only when out of memory (or buf is
 * NULL with data, which the callers refuse first). */
static const void *in_bytes(const void *buf, size_t count, const struct tcmpi__dtype *t, void **tmp)
{
	*tmp = NULL;
	if (t->contig)
		return buf || count * t->size != 0 ? buf : &no_bytes;
	*tmp = tcmpi__alloc(count * t->size);
	if (*tmp)
		tcmpi__pack(buf, count, t, *tmp);
	return *tmp;
}

/* Where count elements of t for buf arrive as bytes: buf itself, or a new
 * *tmp that out_done() unpacks into buf. */
static void *out_bytes(void *buf, size_t count, const struct tcmpi__dtype *t, void **tmp)
{
	*tmp = NULL;
	if (t->contig)
		return buf || count * t->size != 0 ? buf : &no_bytes;
	*tmp = tcmpi__alloc(count * t->size);
	return *tmp;
}

static void out_done(void *tmp, size_t count, const struct tcmpi__dtype *t, void *buf)
{
	if (tmp)
		tcmpi__unpack(tmp, count, t, buf);
	free(tmp);
}

/* ---------------------------------------------------------------------
 * Barrier, broadcast.
 */
int MPI_Barrier(MPI_Comm comm)
{
	struct tcmpi__comm *fc = coll_comm(comm);
	if (fc && fc->size > 1 && !tcmpi__self->stats) { /* the common call */
		int tcrc = tc_barrier(fc->proc, NULL);
		return __builtin_expect(tcrc, 0) ? tcmpi__tc_error(comm, tcrc, __func__) : MPI_SUCCESS;
	}
	COLL_BEGIN(comm);
	return done(comm, p > 1 ? tc_barrier(PROC, NULL) : 0, 0, TCMPI_COLL_BARRIER, t0, p, __func__);
}

static __attribute__((noinline)) int bcast(void *buf, size_t count, MPI_Datatype datatype, int root,
                                           MPI_Comm comm, const char *fn)
{
	COLL_BEGIN_AS(comm, fn);
	const struct tcmpi__dtype *t = tcmpi__dt(datatype);
	if (!t)
		return tcmpi__error(comm, MPI_ERR_TYPE, fn, "invalid datatype %d", datatype);
	if (root < 0 || root >= p)
		return tcmpi__error(comm, MPI_ERR_ROOT, fn, "root %d out of range 0..%d", root, p - 1);
	if (buf == MPI_IN_PLACE)
		return tcmpi__error(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE as the buffer");
	if (p == 1)
		return done(comm, 0, 0, TCMPI_COLL_BCAST, t0, p, fn);
	if (t->contig) /* the buffer as it is */
		return done(comm, tc_bcast(PROC, buf, count * t->size, TC_BYTE, root, NULL), 0,
		            TCMPI_COLL_BCAST, t0, p, fn);
	/* Packed: the root packs, the others unpack what arrives. */
	void *tmp = tcmpi__alloc(count * t->size);
	if (!tmp)
		return done(comm, 0, MPI_ERR_NO_MEM, TCMPI_COLL_BCAST, t0, p, fn);
	if (r == root)
		tcmpi__pack(buf, count, t, tmp);
	int tcrc = tc_bcast(PROC, tmp, count * t->size, TC_BYTE, root, NULL);
	if (r != root && !tcrc)
		tcmpi__unpack(tmp, count, t, buf);
	free(tmp);
	return done(comm, tcrc, 0, TCMPI_COLL_BCAST, t0, p, fn);
}

/* The common broadcast, or bcast() for the rest: p > 1, no --report, a
 * valid contiguous datatype, the root in range: the checks bcast() makes
 * hold on this path, and the buffer goes to topocoll as it is. */
static inline __attribute__((always_inline)) int bcast_fast(void *buf, size_t count, MPI_Datatype dt,
                                                            int root, MPI_Comm comm, const char *fn)
{
	struct tcmpi__comm *c = coll_comm(comm);
	const struct tcmpi__dtype *t;
	if (c && c->size > 1 && !tcmpi__self->stats && root >= 0 && root < c->size &&
	    buf != MPI_IN_PLACE && (t = tcmpi__dt(dt)) != NULL && t->contig) {
		int tcrc = tc_bcast(c->proc, buf, count * t->size, TC_BYTE, root, NULL);
		return __builtin_expect(tcrc, 0) ? tcmpi__tc_error(comm, tcrc, fn) : MPI_SUCCESS;
	}
	return bcast(buf, count, dt, root, comm, fn);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	if (count < 0)
		return tcmpi__error(comm, MPI_ERR_COUNT, __func__, "negative count");
	return bcast_fast(buffer, (size_t)count, datatype, root, comm, __func__);
}

int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	if (count < 0)
		return tcmpi__error(comm, MPI_ERR_COUNT, __func__, "negative count");
	return bcast_fast(buffer, (size_t)count, datatype, root, comm, __func__);
}

/* ---------------------------------------------------------------------
 * Reductions.
 */
enum red { RED_ALL, RED_ROOT, RED_SCAN, RED_EXSCAN };

/* Folds p packed contributions of n elements (stride bytes apart) of ranks
 * lo..hi-1 in rank order into out. */
static int fold(const unsigned char *all, size_t stride, int lo, int hi, size_t n, MPI_Datatype dt,
                MPI_Op op, void *out)
{
	if (hi <= lo)
		return MPI_SUCCESS;
	memcpy(out, all + (size_t)(hi - 1) * stride, stride);
	for (int i = hi - 2; i >= lo; i--) {
		int rc = tcmpi__reduce_local(all + (size_t)i * stride, out, n, dt, op);
		if (rc)
			return rc;
	}
	return MPI_SUCCESS;
}

static __attribute__((noinline)) int reduction(const void *sbuf, void *rbuf, size_t count,
                                               MPI_Datatype dt, MPI_Op op, int root, enum red kind,
                                               MPI_Comm comm, enum tcmpi_coll which, const char *fn)
{
	COLL_BEGIN_AS(comm, fn);
	const struct tcmpi__dtype *t = tcmpi__dt(dt);
	if (!t)
		return tcmpi__error(comm, MPI_ERR_TYPE, fn, "invalid datatype %d", dt);
	int rc_ = tcmpi__op_check(comm, op, fn); /* the operator's own error before the root's */
	if (rc_)
		return rc_;
	if (kind == RED_ROOT && (root < 0 || root >= p))
		return tcmpi__error(comm, MPI_ERR_ROOT, fn, "root %d out of range 0..%d", root, p - 1);
	rc_ = tcmpi__op_applies(comm, op, dt, fn);
	if (rc_)
		return rc_;
	int gets = kind != RED_ROOT || r == root; /* writes rbuf */
	int inplace = sbuf == MPI_IN_PLACE;
	if (inplace && kind == RED_ROOT && r != root)
		return tcmpi__error(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is for the root only");
	if (gets && rbuf == MPI_IN_PLACE)
		return tcmpi__error(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE as the receive buffer");
	enum tc_op tcop;
	struct tc_user_op user;
	size_t bytes = count * t->size;
	if ((rc_ = null_buffer(comm, inplace ? rbuf : sbuf, bytes, "send buffer", fn)) ||
	    (gets && (rc_ = null_buffer(comm, rbuf, bytes, "receive buffer", fn))))
		return rc_;
	int tcrc = 0, mrc = 0;
	if (p > 1 && t->contig && tcmpi__op_native(op, dt, &tcop, &user) == 0) {
		int tdt = tcmpi__tc_dtype(dt);
		struct tc_coll_opts o = {.user_op = tcop == TC_OP_USER ? &user : NULL};
		const void *s = inplace ? TC_IN_PLACE : sbuf;
		if (kind == RED_ALL)
			tcrc = tc_allreduce(PROC, s, rbuf, count, (enum tc_dtype)tdt, tcop, &o);
		else if (kind == RED_ROOT)
			tcrc = tc_reduce(PROC, s, rbuf, count, (enum tc_dtype)tdt, tcop, root, &o);
		else if (kind == RED_SCAN)
			tcrc = tc_scan(PROC, s, rbuf, count, (enum tc_dtype)tdt, tcop, &o);
		else
			tcrc = tc_exscan(PROC, s, rbuf, count, (enum tc_dtype)tdt, tcop, &o);
		return done(comm, tcrc, 0, which, t0, p, fn);
	}
	/* The layer's own: every contribution to every rank (the root), then
	 * a fold in rank order. */
	void *stmp = NULL, *rtmp = NULL;
	const void *mine = in_bytes(inplace ? rbuf : sbuf, count, t, &stmp);
	unsigned char *all = tcmpi__alloc(bytes * (size_t)p);
	void *res = gets ? out_bytes(rbuf, count, t, &rtmp) : NULL;
	if (!mine || !all || (gets && !res)) {
		mrc = MPI_ERR_NO_MEM;
	} else {
		if (p == 1)
			memcpy(all, mine, bytes);
		else if (kind == RED_ROOT)
			tcrc = tc_gather(PROC, mine, all, bytes, TC_BYTE, root, NULL);
		else
			tcrc = tc_allgather(PROC, mine, all, bytes, TC_BYTE, NULL);
		if (!tcrc && gets) {
			int hi = kind == RED_SCAN ? r + 1 : kind == RED_EXSCAN ? r : p;
			mrc = fold(all, bytes, 0, hi, count, dt, op, res);
			if (!mrc && hi > 0)
				out_done(rtmp, count, t, rbuf);
			else
				free(rtmp);
			rtmp = NULL;
		}
	}
	free(stmp);
	free(rtmp);
	free(all);
	return done(comm, tcrc, mrc, which, t0, p, fn);
}

/* The topocoll operator and datatype of a predefined operator on a
 * predefined datatype that topocoll reduces, as tcmpi__op_native() and
 * tcmpi__tc_dtype() find them, 0; else -1.  Both are constant for a
 * pair, so the last pair's are kept (op 0: none yet). */
static int red_native(MPI_Op op, MPI_Datatype dt, enum tc_op *tcop, enum tc_dtype *tdt)
{
	static struct {
		MPI_Op op;
		MPI_Datatype dt;
		enum tc_op tcop;
		enum tc_dtype tdt;
	} last;
	if (op == last.op && dt == last.dt) {
		*tcop = last.tcop;
		*tdt = last.tdt;
		return 0;
	}
	struct tc_user_op user;
	if (op <= 0 || op >= TCMPI_OP_PREDEFINED || dt <= 0 || dt >= TCMPI_DT_PREDEFINED ||
	    tcmpi__op_native(op, dt, tcop, &user) != 0)
		return -1;
	*tdt = (enum tc_dtype)tcmpi__tc_dtype(dt);
	last.op = op;
	last.dt = dt;
	last.tcop = *tcop;
	last.tdt = *tdt;
	return 0;
}

/* The common reduction, or reduction() for the rest: p > 1, no --report,
 * a predefined operator and datatype that topocoll reduces, the root in
 * range; the checks reduction() makes hold on this path (the datatype is
 * valid, the operator too, MPI_IN_PLACE only where MPI allows it). */
static inline __attribute__((always_inline)) int
reduction_fast(const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt, MPI_Op op, int root,
               enum red kind, MPI_Comm comm, enum tcmpi_coll which, const char *fn)
{
	struct tcmpi__comm *c = coll_comm(comm);
	enum tc_op tcop;
	enum tc_dtype tdt;
	if (c && c->size > 1 && !tcmpi__self->stats && red_native(op, dt, &tcop, &tdt) == 0 &&
	    rbuf != MPI_IN_PLACE &&
	    (kind != RED_ROOT ||
	     (root >= 0 && root < c->size && (sbuf != MPI_IN_PLACE || c->rank == root)))) {
		const void *s = sbuf == MPI_IN_PLACE ? TC_IN_PLACE : sbuf;
		int tcrc;
		if (kind == RED_ALL)
			tcrc = tc_allreduce(c->proc, s, rbuf, count, tdt, tcop, NULL);
		else if (kind == RED_ROOT)
			tcrc = tc_reduce(c->proc, s, rbuf, count, tdt, tcop, root, NULL);
		else if (kind == RED_SCAN)
			tcrc = tc_scan(c->proc, s, rbuf, count, tdt, tcop, NULL);
		else
			tcrc = tc_exscan(c->proc, s, rbuf, count, tdt, tcop, NULL);
		return __builtin_expect(tcrc, 0) ? tcmpi__tc_error(comm, tcrc, fn) : MPI_SUCCESS;
	}
	return reduction(sbuf, rbuf, count, dt, op, root, kind, comm, which, fn);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
	COUNT_OR_FAIL(count, comm);
	return reduction_fast(sendbuf, recvbuf, (size_t)count, datatype, op, 0, RED_ALL, comm,
	                      TCMPI_COLL_ALLREDUCE, __func__);
}

int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm)
{
	COUNT_OR_FAIL(count, comm);
	return reduction_fast(sendbuf, recvbuf, (size_t)count, datatype, op, 0, RED_ALL, comm,
	                      TCMPI_COLL_ALLREDUCE, __func__);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm)
{
	COUNT_OR_FAIL(count, comm);
	return reduction_fast(sendbuf, recvbuf, (size_t)count, datatype, op, root, RED_ROOT, comm,
	                      TCMPI_COLL_REDUCE, __func__);
}

int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, int root, MPI_Comm comm)
{
	COUNT_OR_FAIL(count, comm);
	return reduction_fast(sendbuf, recvbuf, (size_t)count, datatype, op, root, RED_ROOT, comm,
	                      TCMPI_COLL_REDUCE, __func__);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	COUNT_OR_FAIL(count, comm);
	return reduction_fast(sendbuf, recvbuf, (size_t)count, datatype, op, 0, RED_SCAN, comm,
	                      TCMPI_COLL_SCAN, __func__);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm)
{
	COUNT_OR_FAIL(count, comm);
	return reduction_fast(sendbuf, recvbuf, (size_t)count, datatype, op, 0, RED_EXSCAN, comm,
	                      TCMPI_COLL_EXSCAN, __func__);
}

/* Reduce-scatter with counts[i] elements for rank i: an allreduce of the
 * whole vector (topocoll's or the layer's), of which each rank keeps its
 * part.  The equal-count form goes to tc_reduce_scatter where topocoll
 * reduces the datatype. */
static int reduce_scatter(const void *sbuf, void *rbuf, const size_t *counts, size_t equal,
                          MPI_Datatype dt, MPI_Op op, MPI_Comm comm, enum tcmpi_coll which,
                          const char *fn)
{
	COLL_BEGIN_AS(comm, fn);
	const struct tcmpi__dtype *t = tcmpi__dt(dt);
	if (!t)
		return tcmpi__error(comm, MPI_ERR_TYPE, fn, "invalid datatype %d", dt);
	int rc_ = tcmpi__op_applies(comm, op, dt, fn);
	if (rc_)
		return rc_;
	if (rbuf == MPI_IN_PLACE)
		return tcmpi__error(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE as the receive buffer");
	enum tc_op tcop;
	struct tc_user_op user;
	int inplace = sbuf == MPI_IN_PLACE;
	if (!counts && p > 1 && t->contig && tcmpi__op_native(op, dt, &tcop, &user) == 0) {
		struct tc_coll_opts o = {.user_op = tcop == TC_OP_USER ? &user : NULL};
		int tcrc = tc_reduce_scatter(PROC, inplace ? TC_IN_PLACE : sbuf, rbuf, equal,
		                             (enum tc_dtype)tcmpi__tc_dtype(dt), tcop, &o);
		return done(comm, tcrc, 0, which, t0, p, fn);
	}
	size_t total = 0, before = 0;
	for (int i = 0; i < p; i++) {
		size_t n = counts ? counts[i] : equal;
		if (i < r)
			before += n;
		total += n;
	}
	size_t mine_n = counts ? counts[r] : equal;
	if ((rc_ = null_buffer(comm, inplace ? rbuf : sbuf, total * t->size, "send buffer", fn)) ||
	    (rc_ = null_buffer(comm, rbuf, mine_n * t->size, "receive buffer", fn)))
		return rc_;
	void *stmp = NULL;
	const void *in = in_bytes(inplace ? rbuf : sbuf, total, t, &stmp);
	unsigned char *whole = tcmpi__alloc(total * t->size);
	int tcrc = 0, mrc = 0;
	if (!in || !whole) {
		mrc = MPI_ERR_NO_MEM;
	} else {
		unsigned char *all = NULL;
		if (p > 1 && t->contig && tcmpi__op_native(op, dt, &tcop, &user) == 0) {
			struct tc_coll_opts o = {.user_op = tcop == TC_OP_USER ? &user : NULL};
			tcrc = tc_allreduce(PROC, in, whole, total,
			                    (enum tc_dtype)tcmpi__tc_dtype(dt), tcop, &o);
		} else if ((all = tcmpi__alloc(total * t->size * (size_t)p)) == NULL) {
			mrc = MPI_ERR_NO_MEM;
		} else {
			if (p > 1)
				tcrc = tc_allgather(PROC, in, all, total * t->size, TC_BYTE, NULL);
			else
				memcpy(all, in, total * t->size);
			if (!tcrc)
				mrc = fold(all, total * t->size, 0, p, total, dt, op, whole);
		}
		free(all);
		if (!tcrc && !mrc)
			tcmpi__unpack(whole + before * t->size, mine_n, t, rbuf);
	}
	free(stmp);
	free(whole);
	return done(comm, tcrc, mrc, which, t0, p, fn);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	COUNT_OR_FAIL(recvcount, comm);
	return reduce_scatter(sendbuf, recvbuf, NULL, (size_t)recvcount, datatype, op, comm,
	                      TCMPI_COLL_REDUCE_SCATTER_BLOCK, __func__);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	struct tcmpi__comm *c = tcmpi__comm(comm);
	if (!c)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, __func__,
		                    "invalid communicator %d", (int)comm);
	if (!recvcounts)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL recvcounts");
	int p = tcmpi__comm_size(c);
	size_t *n = tcmpi__alloc(sizeof *n * (size_t)p);
	if (!n)
		return tcmpi__error(comm, MPI_ERR_NO_MEM, __func__, "out of memory");
	for (int i = 0; i < p; i++) {
		if (recvcounts[i] < 0) {
			free(n);
			return tcmpi__error(comm, MPI_ERR_COUNT, __func__, "negative recvcounts[%d]", i);
		}
		n[i] = (size_t)recvcounts[i];
	}
	rc = reduce_scatter(sendbuf, recvbuf, n, 0, datatype, op, comm, TCMPI_COLL_REDUCE_SCATTER,
	                    __func__);
	free(n);
	return rc;
}

/* ---------------------------------------------------------------------
 * Gather, scatter, allgather, alltoall (equal blocks).  The send and
 * receive sides must agree in bytes per block (the type signatures MPI
 * asks to match).
 */
enum shape { SH_GATHER, SH_SCATTER, SH_ALLGATHER, SH_ALLTOALL };

static __attribute__((noinline)) int blocks(const void *sbuf, size_t scount, MPI_Datatype stype,
                                            void *rbuf, size_t rcount, MPI_Datatype rtype, int root,
                                            enum shape sh, MPI_Comm comm, enum tcmpi_coll which,
                                            const char *fn)
{
	COLL_BEGIN_AS(comm, fn);
	int rooted = sh == SH_GATHER || sh == SH_SCATTER;
	if (rooted && (root < 0 || root >= p))
		return tcmpi__error(comm, MPI_ERR_ROOT, fn, "root %d out of range 0..%d", root, p - 1);
	int sinplace = sbuf == MPI_IN_PLACE, rinplace = rbuf == MPI_IN_PLACE;
	if ((sinplace && (sh == SH_SCATTER || (sh == SH_GATHER && r != root))) ||
	    (rinplace && (sh != SH_SCATTER || r != root)))
		return tcmpi__error(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE where MPI allows none");
	/* The sides this rank uses: gather's receive and scatter's send are
	 * the root's; MPI_IN_PLACE takes the input from the other side. */
	int uses_s = !(sh == SH_SCATTER && r != root) && !sinplace;
	int uses_r = !(sh == SH_GATHER && r != root) && !rinplace;
	const struct tcmpi__dtype *st = uses_s ? tcmpi__dt(stype) : NULL;
	const struct tcmpi__dtype *rt = uses_r ? tcmpi__dt(rtype) : NULL;
	if ((uses_s && !st) || (uses_r && !rt))
		return tcmpi__error(comm, MPI_ERR_TYPE, fn, "invalid datatype %d",
		                    uses_s && !st ? stype : rtype);
	size_t sb = st ? scount * st->size : 0, rb = rt ? rcount * rt->size : 0;
	if (st && rt && sb != rb)
		return tcmpi__error(comm, MPI_ERR_TRUNCATE, fn,
		                    "a block is %zu bytes sent but %zu bytes received", sb, rb);
	size_t blk = rt ? rb : sb, pn = (size_t)p;
	int sp = sh == SH_ALLTOALL || sh == SH_SCATTER; /* send side of p blocks */
	int rp = sh != SH_SCATTER;                      /* receive side of p blocks */
	size_t rn = rp ? rcount * pn : rcount;          /* receive elements */
	int nrc = uses_s ? null_buffer(comm, sbuf, sp ? sb * pn : sb, "send buffer", fn) : 0;
	if (!nrc && (uses_r || sinplace))
		nrc = null_buffer(comm, rbuf, rp ? blk * pn : blk, "receive buffer", fn);
	if (nrc)
		return nrc;
	void *stmp = NULL, *rtmp = NULL, *scratch = NULL;
	const void *s = NULL;
	void *d = NULL;
	int tcrc = 0, mrc = 0;
	if (sinplace) {
		/* gather (root), allgather, alltoall: the input is in rbuf, and
		 * the result goes to a scratch buffer first */
		s = in_bytes(rbuf, rn, rt, &stmp);
		if (s && sh != SH_ALLTOALL)
			s = (const unsigned char *)s + (size_t)r * blk;
		d = scratch = tcmpi__alloc(blk * pn);
	} else if (rinplace) {
		/* scatter at the root: its block stays where it is in sbuf */
		s = in_bytes(sbuf, scount * pn, st, &stmp);
		d = scratch = tcmpi__alloc(blk);
	} else {
		if (uses_s)
			s = in_bytes(sbuf, sp ? scount * pn : scount, st, &stmp);
		if (uses_r)
			d = out_bytes(rbuf, rn, rt, &rtmp);
	}
	if ((uses_s || sinplace) && !s)
		mrc = MPI_ERR_NO_MEM;
	if ((uses_r || sinplace || rinplace) && !d)
		mrc = MPI_ERR_NO_MEM;
	if (mrc)
		goto out;
	if (p == 1) {
		memcpy(d, s, blk);
	} else {
		switch (sh) {
		case SH_GATHER:
			tcrc = tc_gather(PROC, s, d, blk, TC_BYTE, root, NULL);
			break;
		case SH_SCATTER:
			tcrc = tc_scatter(PROC, s, d, blk, TC_BYTE, root, NULL);
			break;
		case SH_ALLGATHER:
			tcrc = tc_allgather(PROC, s, d, blk, TC_BYTE, NULL);
			break;
		case SH_ALLTOALL:
			tcrc = tc_alltoall(PROC, s, d, blk, TC_BYTE, NULL);
			break;
		}
	}
	if (tcrc)
		goto out;
	if (sinplace)
		tcmpi__unpack(scratch, rn, rt, rbuf);
	else if (uses_r) {
		out_done(rtmp, rn, rt, rbuf);
		rtmp = NULL;
	}
out:
	free(scratch);
	free(stmp);
	free(rtmp);
	return done(comm, tcrc, mrc, which, t0, p, fn);
}

/* The common call, or blocks() for the rest: p > 1, no --report, no
 * MPI_IN_PLACE, the root in range, valid contiguous datatypes of equal
 * bytes per block on the sides this rank uses: the checks blocks()
 * makes hold on this path, and the buffers go to topocoll as they are. */
static inline __attribute__((always_inline)) int blocks_fast(const void *sbuf, size_t scount,
                                                             MPI_Datatype stype, void *rbuf,
                                                             size_t rcount, MPI_Datatype rtype,
                                                             int root, enum shape sh, MPI_Comm comm,
                                                             enum tcmpi_coll which, const char *fn)
{
	struct tcmpi__comm *c = coll_comm(comm);
	if (c && c->size > 1 && !tcmpi__self->stats && sbuf != MPI_IN_PLACE && rbuf != MPI_IN_PLACE) {
		const int p = c->size, r = c->rank;
		const int rooted = sh == SH_GATHER || sh == SH_SCATTER;
		const int uses_s = !(sh == SH_SCATTER && r != root);
		const int uses_r = !(sh == SH_GATHER && r != root);
		const struct tcmpi__dtype *st = uses_s ? tcmpi__dt(stype) : NULL;
		const struct tcmpi__dtype *rt = uses_r ? tcmpi__dt(rtype) : NULL;
		const size_t sb = st ? scount * st->size : 0, rb = rt ? rcount * rt->size : 0;
		if ((!rooted || (root >= 0 && root < p)) && (!uses_s || (st && st->contig)) &&
		    (!uses_r || (rt && rt->contig)) && (!st || !rt || sb == rb)) {
			const void *s = uses_s ? sbuf : NULL;
			void *d = uses_r ? rbuf : NULL;
			const size_t blk = rt ? rb : sb;
			int tcrc;
			if (sh == SH_GATHER)
				tcrc = tc_gather(c->proc, s, d, blk, TC_BYTE, root, NULL);
			else if (sh == SH_SCATTER)
				tcrc = tc_scatter(c->proc, s, d, blk, TC_BYTE, root, NULL);
			else if (sh == SH_ALLGATHER)
				tcrc = tc_allgather(c->proc, s, d, blk, TC_BYTE, NULL);
			else
				tcrc = tc_alltoall(c->proc, s, d, blk, TC_BYTE, NULL);
			return __builtin_expect(tcrc, 0) ? tcmpi__tc_error(comm, tcrc, fn) : MPI_SUCCESS;
		}
	}
	return blocks(sbuf, scount, stype, rbuf, rcount, rtype, root, sh, comm, which, fn);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	COUNT_OR_FAIL(sendcount, comm);
	COUNT_OR_FAIL(recvcount, comm);
	return blocks_fast(sendbuf, (size_t)sendcount, sendtype, recvbuf, (size_t)recvcount,
	                   recvtype, root, SH_GATHER, comm, TCMPI_COLL_GATHER, __func__);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	COUNT_OR_FAIL(sendcount, comm);
	COUNT_OR_FAIL(recvcount, comm);
	return blocks_fast(sendbuf, (size_t)sendcount, sendtype, recvbuf, (size_t)recvcount,
	                   recvtype, root, SH_SCATTER, comm, TCMPI_COLL_SCATTER, __func__);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	COUNT_OR_FAIL(sendcount, comm);
	COUNT_OR_FAIL(recvcount, comm);
	return blocks_fast(sendbuf, (size_t)sendcount, sendtype, recvbuf, (size_t)recvcount,
	                   recvtype, 0, SH_ALLGATHER, comm, TCMPI_COLL_ALLGATHER, __func__);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	COUNT_OR_FAIL(sendcount, comm);
	COUNT_OR_FAIL(recvcount, comm);
	return blocks_fast(sendbuf, (size_t)sendcount, sendtype, recvbuf, (size_t)recvcount,
	                   recvtype, 0, SH_ALLTOALL, comm, TCMPI_COLL_ALLTOALL, __func__);
}

/* ---------------------------------------------------------------------
 * The variable forms: a side of p blocks (counts[i] elements of types[i]
 * at byte displacement displs[i]) as packed bytes and byte counts.
 */
struct vside {
	size_t *bytes, *off; /* per block, in the packed buffer */
	unsigned char *packed;
	size_t total;
};

static void vside_free(struct vside *v)
{
	free(v->bytes);
	free(v->off);
	free(v->packed);
}

/* ints: counts/displs are int arrays (else MPI_Count / MPI_Aint);
 * types NULL: every block of type one, displs in its extents. */
static int vside_make(struct vside *v, int p, const void *counts, const void *displs, int ints,
                      int bytes_displ, const MPI_Datatype *types, MPI_Datatype one, const void *buf,
                      int pack)
{
	memset(v, 0, sizeof *v);
	v->bytes = tcmpi__alloc(sizeof(size_t) * (size_t)p);
	v->off = tcmpi__alloc(sizeof(size_t) * (size_t)p);
	if (!v->bytes || !v->off)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < p; i++) {
		const struct tcmpi__dtype *t = tcmpi__dt(types ? types[i] : one);
		long long n = ints ? ((const int *)counts)[i] : ((const MPI_Count *)counts)[i];
		if (!t)
			return MPI_ERR_TYPE;
		if (n < 0)
			return MPI_ERR_COUNT;
		v->off[i] = v->total;
		v->bytes[i] = (size_t)n * t->size;
		v->total += v->bytes[i];
	}
	v->packed = tcmpi__alloc(v->total);
	if (!v->packed)
		return MPI_ERR_NO_MEM;
	if (!pack)
		return MPI_SUCCESS;
	for (int i = 0; i < p; i++) {
		const struct tcmpi__dtype *t = tcmpi__dt(types ? types[i] : one);
		long long n = ints ? ((const int *)counts)[i] : ((const MPI_Count *)counts)[i];
		long long dsp = ints ? ((const int *)displs)[i] : ((const MPI_Aint *)displs)[i];
		MPI_Aint at = bytes_displ ? (MPI_Aint)dsp : (MPI_Aint)dsp * t->extent;
		tcmpi__pack((const unsigned char *)buf + at, (size_t)n, t, v->packed + v->off[i]);
	}
	return MPI_SUCCESS;
}

static void vside_unpack(const struct vside *v, int p, const void *counts, const void *displs, int ints,
                         int bytes_displ, const MPI_Datatype *types, MPI_Datatype one, void *buf)
{
	for (int i = 0; i < p; i++) {
		const struct tcmpi__dtype *t = tcmpi__dt(types ? types[i] : one);
		long long n = ints ? ((const int *)counts)[i] : ((const MPI_Count *)counts)[i];
		long long dsp = ints ? ((const int *)displs)[i] : ((const MPI_Aint *)displs)[i];
		MPI_Aint at = bytes_displ ? (MPI_Aint)dsp : (MPI_Aint)dsp * t->extent;
		tcmpi__unpack(v->packed + v->off[i], (size_t)n, t, (unsigned char *)buf + at);
	}
}

enum vshape { V_GATHER, V_SCATTER, V_ALLGATHER, V_ALLTOALL };

/* One implementation of the v and w forms.  The single-block side of
 * gatherv/scatterv/allgatherv is given as count and type with p = 1. */
static int vcoll(const void *sbuf, const void *scounts, const void *sdispls, const MPI_Datatype *stypes,
                 MPI_Datatype stype, void *rbuf, const void *rcounts, const void *rdispls,
                 const MPI_Datatype *rtypes, MPI_Datatype rtype, int ints, int bytes_displ,
                 int root, enum vshape sh, MPI_Comm comm, enum tcmpi_coll which, const char *fn)
{
	COLL_BEGIN_AS(comm, fn);
	int rooted = sh == V_GATHER || sh == V_SCATTER;
	if (rooted && (root < 0 || root >= p))
		return tcmpi__error(comm, MPI_ERR_ROOT, fn, "root %d out of range 0..%d", root, p - 1);
	if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE)
		return tcmpi__error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn,
		                    "MPI_IN_PLACE is not supported in the v and w forms yet");
	int sp = sh == V_SCATTER || sh == V_ALLTOALL, rp = sh != V_SCATTER;
	int uses_s = !(sh == V_SCATTER && r != root), uses_r = !(sh == V_GATHER && r != root);
	struct vside s = {0}, d = {0};
	int mrc = 0, tcrc = 0;
	static const int zero = 0;
	if (uses_s)
		mrc = vside_make(&s, sp ? p : 1, scounts, sp ? sdispls : &zero, ints, bytes_displ,
		                 stypes, stype, sbuf, 1);
	if (!mrc && uses_r)
		mrc = vside_make(&d, rp ? p : 1, rcounts, rp ? rdispls : &zero, ints, bytes_displ,
		                 rtypes, rtype, rbuf, 0);
	if (mrc) {
		vside_free(&s);
		vside_free(&d);
		if (mrc == MPI_ERR_NO_MEM)
			return done(comm, 0, mrc, which, t0, p, fn);
		return tcmpi__error(comm, mrc, fn, "%s",
		                    mrc == MPI_ERR_TYPE ? "invalid datatype" : "negative count");
	}
	if (p == 1) {
		if (s.total != d.total)
			mrc = MPI_ERR_TRUNCATE;
		else
			memcpy(d.packed, s.packed, s.total);
	} else {
		switch (sh) {
		case V_GATHER:
			tcrc = tc_gatherv(PROC, s.packed, s.total, d.packed, uses_r ? d.bytes : NULL,
			                  uses_r ? d.off : NULL, TC_BYTE, root, NULL);
			break;
		case V_SCATTER:
			tcrc = tc_scatterv(PROC, s.packed, uses_s ? s.bytes : NULL, uses_s ? s.off : NULL,
			                   d.packed, d.total, TC_BYTE, root, NULL);
			break;
		case V_ALLGATHER:
			tcrc = tc_allgatherv(PROC, s.packed, s.total, d.packed, d.bytes, d.off,
			                     TC_BYTE, NULL);
			break;
		case V_ALLTOALL:
			tcrc = tc_alltoallv(PROC, s.packed, s.bytes, s.off, d.packed, d.bytes,
			                    d.off, TC_BYTE, NULL);
			break;
		}
	}
	if (!tcrc && !mrc && uses_r)
		vside_unpack(&d, rp ? p : 1, rcounts, rp ? rdispls : &zero, ints, bytes_displ,
		             rtypes, rtype, rbuf);
	vside_free(&s);
	vside_free(&d);
	return done(comm, tcrc, mrc, which, t0, p, fn);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
	return vcoll(sendbuf, &sendcount, NULL, NULL, sendtype, recvbuf, recvcounts, displs, NULL,
	             recvtype, 1, 0, root, V_GATHER, comm, TCMPI_COLL_GATHERV, __func__);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	return vcoll(sendbuf, sendcounts, displs, NULL, sendtype, recvbuf, &recvcount, NULL, NULL,
	             recvtype, 1, 0, root, V_SCATTER, comm, TCMPI_COLL_SCATTERV, __func__);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
	return vcoll(sendbuf, &sendcount, NULL, NULL, sendtype, recvbuf, recvcounts, displs, NULL,
	             recvtype, 1, 0, 0, V_ALLGATHER, comm, TCMPI_COLL_ALLGATHERV, __func__);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm)
{
	return vcoll(sendbuf, sendcounts, sdispls, NULL, sendtype, recvbuf, recvcounts, rdispls,
	             NULL, recvtype, 1, 0, 0, V_ALLTOALL, comm, TCMPI_COLL_ALLTOALLV, __func__);
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	return vcoll(sendbuf, sendcounts, sdispls, sendtypes, 0, recvbuf, recvcounts, rdispls,
	             recvtypes, 0, 1, 1, 0, V_ALLTOALL, comm, TCMPI_COLL_ALLTOALLW, __func__);
}
