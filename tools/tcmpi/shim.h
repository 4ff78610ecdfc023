/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim.h - internals of the MPI layer (libtcmpi.a).
 *
 * The layer is a static archive linked into every program by tcmpicc, so
 * that each rank's private copy of the program has its own copy of the
 * layer's state too: the variables below are per rank without thread- or
 * fibre-local storage.  Everything here is hidden in the program
 * (tcmpicc links with --exclude-libs); only the MPI functions the program
 * calls, and tcmpi_rank_main, are reached from outside.
 */
#ifndef TCMPI_SHIM_H
#define TCMPI_SHIM_H

#include <stddef.h>
#include <stdint.h>

#include <topocoll.h>

#include "launch.h"
#include "mpi.h"

/* This rank's hand-over from tcmpirun (NULL before tcmpi_rank_main). */
extern struct tcmpi_launch *tcmpi__self;
extern int tcmpi__initialized, tcmpi__finalized;
/* 1 from MPI_Init to MPI_Finalize in a rank started by tcmpirun: what
 * tcmpi__check_init() proves, read in one load on every call. */
extern int tcmpi__live;

/* One contiguous run of bytes of a datatype's element, at off from its
 * start. */
struct tcmpi__block {
	MPI_Aint off;
	size_t len;
};

struct tcmpi__dtype {
	int used;
	int committed;
	size_t size;         /* bytes of data in one element */
	MPI_Aint lb, extent; /* as MPI_Type_get_extent */
	MPI_Aint true_lb, true_extent;
	int nblocks;
	struct tcmpi__block *blocks; /* one element, merged, in type order */
	int basic;                   /* the predefined type every byte belongs to, or 0 */
	int combiner;
	int contig; /* one block, at 0, of extent bytes */
	char name[MPI_MAX_OBJECT_NAME];
	/* The sizes of the basic elements of one element, in type-map order
	 * (runs of equal sizes merged), which MPI_Get_elements counts. */
	int nemap;
	struct tcmpi__erun *emap;
	/* The constructor call that made it (NULL: predefined), kept for
	 * MPI_Type_get_envelope and MPI_Type_get_contents. */
	struct tcmpi__dtargs *args;
	/* One element's basic elements by type, in type-map order: what
	 * MPI_Pack_external converts. */
	int ntmap;
	struct tcmpi__trun *tmap;
	/* Made by MPI_Type_create_f90_integer, _real or _complex: predefined,
	 * never freed. */
	int keep;
};

/* n basic elements of size bytes each. */
struct tcmpi__erun {
	size_t size, n;
};
/* n adjacent basic elements of predefined type type (not a pair type) at
 * off. */
struct tcmpi__trun {
	MPI_Aint off;
	MPI_Datatype type;
	size_t n;
};

/* A derived datatype's constructor call (shim_typeinfo.c): its combiner,
 * its integer and address arguments as given, and its datatypes, each a
 * predefined handle (types[k], args[k] NULL) or the constructor call of a
 * derived one (args[k], shared and counted), so that the call can be
 * answered and made again after the program has freed the types. */
struct tcmpi__dtargs {
	int refs;
	int combiner;
	int ni, na, nd;
	int *ints;
	MPI_Aint *aints;
	MPI_Datatype *types;
	struct tcmpi__dtargs **args;
};
/* Keeps the call that made the new derived type h (MPI_SUCCESS), or frees
 * h and reports MPI_ERR_NO_MEM (fn named). */
int tcmpi__dtype_record(MPI_Datatype h, int combiner, int ni, const int *ints, int na,
                        const MPI_Aint *aints, int nd, const MPI_Datatype *types, const char *fn);
/* Drops one reference to a; NULL does nothing. */
void tcmpi__dtargs_drop(struct tcmpi__dtargs *a);

/* Datatypes (shim_dtype.c): the table by handle, tcmpi__ndts entries. */
void tcmpi__dtype_setup(void);
extern struct tcmpi__dtype *tcmpi__dts;
extern int tcmpi__ndts;
/* The datatype of a handle, committed or predefined, or NULL. */
static inline const struct tcmpi__dtype *tcmpi__dt(MPI_Datatype dt)
{
	if (dt <= 0 || dt >= tcmpi__ndts || !tcmpi__dts[dt].used || !tcmpi__dts[dt].committed)
		return NULL;
	return &tcmpi__dts[dt];
}
/* A request's own copy of a datatype (its runs of bytes too), which
 * MPI_Type_free of the handle and the table's growth leave alone: MPI
 * lets a program free a datatype while operations that use it are
 * pending.  NULL when out of memory; tcmpi__dtype_drop(NULL) does
 * nothing. */
struct tcmpi__dtype *tcmpi__dtype_hold(const struct tcmpi__dtype *t);
void tcmpi__dtype_drop(struct tcmpi__dtype *t);
/* Packs count elements at buf into out (count * size bytes); unpacks. */
void tcmpi__pack(const void *buf, size_t count, const struct tcmpi__dtype *t, void *out);
void tcmpi__unpack(const void *in, size_t count, const struct tcmpi__dtype *t, void *buf);
/* Unpacks a message of bytes bytes (count * size and more): its whole
 * elements, then the first bytes of the next, which a message may end
 * inside (MPI_Get_elements counts them). */
void tcmpi__unpack_bytes(const void *in, size_t bytes, const struct tcmpi__dtype *t, void *buf);
/* A new derived type *out of count parts, part k n[k] elements of
 * types[k] at byte displacement disp[k], made by combiner (the other
 * constructors' core); or an error reported with fn named. */
int tcmpi__dtype_build(int count, const size_t *n, const MPI_Aint *disp, const MPI_Datatype *types,
                       int combiner, MPI_Datatype *out, const char *fn);
/* Sets the bounds of a derived type just built to lb and extent, explicit
 * (as MPI_Type_create_resized sets them). */
void tcmpi__dtype_set_bounds(MPI_Datatype h, MPI_Aint lb, MPI_Aint extent);
/* The datatype of a handle in use, committed or not, or NULL. */
struct tcmpi__dtype *tcmpi__dt_any(MPI_Datatype dt);
/* The topocoll datatype of a predefined type whose elements topocoll
 * reduces, or -1. */
int tcmpi__tc_dtype(MPI_Datatype dt);

/* Operators (shim_op.c).  inout = in (op) inout on count elements of dt. */
int tcmpi__reduce_local(const void *in, void *inout, size_t count, MPI_Datatype dt, MPI_Op op);
int tcmpi__op_valid(MPI_Op op);
/* MPI_SUCCESS when op can reduce (tcmpi__op_valid), else the error of a
 * call fn on comm that names what is wrong with it (tcmpi__error,
 * MPI_ERR_OP: MPI_REPLACE and MPI_NO_OP are the one-sided accumulates'). */
int tcmpi__op_check(MPI_Comm comm, MPI_Op op, const char *fn);
/* Whether op can reduce (tcmpi__op_check) and applies to datatype dt (a
 * user operator to every one), for a collective to check on every rank
 * before any data moves: a rank that combines one contribution or none
 * would not see it.  MPI_SUCCESS or MPI_ERR_OP, reported (comm's handler,
 * fn named). */
int tcmpi__op_applies(MPI_Comm comm, MPI_Op op, MPI_Datatype dt, const char *fn);
int tcmpi__op_commutative(MPI_Op op);
/* A pending reduction's hold on a user operator, which MPI_Op_free then
 * leaves working until the last hold is dropped (nothing for a predefined
 * operator). */
void tcmpi__op_hold(MPI_Op op);
void tcmpi__op_drop(MPI_Op op);
/* The topocoll operator and options that reduce dt by op in place of the
 * layer, 0; or -1 when the layer must reduce itself. */
int tcmpi__op_native(MPI_Op op, MPI_Datatype dt, enum tc_op *tcop, struct tc_user_op *user);

/* A communicator's Cartesian topology (shim_cart.c): ndims sides and
 * periodic flags, ranks in row-major order (the last dimension fastest). */
#define TCMPI_MAX_DIMS TC_TOPO_MAX_DIMS
struct tcmpi__cart {
	int on; /* the communicator has one (MPI_Topo_test: MPI_CART) */
	int ndims;
	int dims[TCMPI_MAX_DIMS];
	int periods[TCMPI_MAX_DIMS];
};

/* A communicator's graph topology (shim_graph.c): MPI_GRAPH (the whole
 * graph, every rank's neighbours in and out the same) or MPI_DIST_GRAPH
 * (the calling rank's sources and destinations alone). */
struct tcmpi__graph {
	int kind;
	int nin, nout;      /* neighbours in and out */
	int *in, *out;      /* their ranks, in MPI's order */
	int weighted;       /* MPI_DIST_GRAPH: weights given (not MPI_UNWEIGHTED) */
	int *inw, *outw;    /* and then their weights */
	int nnodes, nedges; /* MPI_GRAPH: MPI_Graph_create's graph */
	int *index, *edges;
};
void tcmpi__graph_free(struct tcmpi__graph *g);
/* A copy of g (MPI_Comm_dup), or NULL when out of memory. */
struct tcmpi__graph *tcmpi__graph_copy(const struct tcmpi__graph *g);

/* Communicators (shim_core.c). */
struct tcmpi__comm {
	int used;
	int self;             /* a communicator of the calling rank alone */
	struct tc_proc *proc; /* the rank's proc in the communicator's team
	                         (NULL when self) */
	int sub;              /* proc is of a sub-team the communicator owns */
	MPI_Errhandler errh;
	char name[MPI_MAX_OBJECT_NAME];
	struct tcmpi__cart cart; /* kept by MPI_Comm_dup, by no other call */
	/* The neighbourhood collectives' context (shim_neighbor.c): a
	 * duplicate of proc's team made by the first of them, or NULL. */
	struct tc_proc *nbr;
	/* Its graph topology, or NULL (shim_graph.c; kept by
	 * MPI_Comm_dup). */
	struct tcmpi__graph *graph;
	/* A communicator of one rank (self): its messages sent and not yet
	 * received, and its receives posted and not yet matched (shim_p2p.c);
	 * NULL until its first message. */
	struct tcmpi__selfq *selfq;
	/* The rank's size and rank in it: 1 and 0 when self, else proc's
	 * (set with proc, read on every call). */
	int size, rank;
	/* Its attributes, the last set first (shim_attr.c), or NULL. */
	struct tcmpi__attr *attrs;
	/* Its info hints (MPI_Comm_set_info): an info object the
	 * communicator owns (shim_info.c), or MPI_INFO_NULL. */
	MPI_Info hints;
};
/* The communicators by handle (shim_core.c): tcmpi__ncomms entries, NULL
 * where free; a communicator never moves while it lives. */
extern struct tcmpi__comm **tcmpi__commv;
extern int tcmpi__ncomms;
/* The communicator of a handle in use, or NULL. */
static inline struct tcmpi__comm *tcmpi__comm(MPI_Comm c)
{
	if (c <= 0 || c >= tcmpi__ncomms || !tcmpi__commv[c] || !tcmpi__commv[c]->used)
		return NULL;
	return tcmpi__commv[c];
}
static inline int tcmpi__comm_size(const struct tcmpi__comm *c)
{
	return c->size;
}
static inline int tcmpi__comm_rank(const struct tcmpi__comm *c)
{
	return c->rank;
}
/* The call's prologue: MPI live and comm a communicator (*c), else the
 * error reported (its message names fn). */
int tcmpi__comm_arg(MPI_Comm comm, const char *fn, struct tcmpi__comm **c);
/* A new communicator like c (its error handler; a communicator of the
 * calling rank alone when c is), without topology: *out, or an error. */
int tcmpi__comm_new(const struct tcmpi__comm *c, MPI_Comm *out, const char *fn);
/* A new communicator like c of the sub-team whose proc is proc (NULL:
 * *out = MPI_COMM_NULL), which it owns from then on, even on error. */
int tcmpi__comm_sub(const struct tcmpi__comm *c, struct tc_proc *proc, MPI_Comm *out, const char *fn);
/* The rank in MPI_COMM_WORLD of rank r of c. */
int tcmpi__world_rank(const struct tcmpi__comm *c, int r);
/* Frees every group (shim_group.c): at MPI_Finalize. */
void tcmpi__groups_end(void);
/* Attributes (shim_attr.c).  Copies from's attributes to to by their copy
 * callbacks (MPI_Comm_dup); on a callback's failure, deletes those copied
 * and returns its error (reported on from, fn named). */
int tcmpi__attrs_copy(MPI_Comm from, MPI_Comm to, const char *fn);
/* Deletes comm's attributes, the last set first, by their delete
 * callbacks (MPI_Comm_free, MPI_Finalize for MPI_COMM_SELF); stops at a
 * callback's failure, whose error it returns (reported, fn named). */
int tcmpi__attrs_delete(MPI_Comm comm, const char *fn);
/* The largest error code or class in use (MPI_LASTUSEDCODE; shim_core.c). */
extern int tcmpi__lastusedcode;
/* Info objects (shim_info.c).  MPI_SUCCESS when info is MPI_INFO_NULL or
 * an info object, else MPI_ERR_INFO reported on comm (fn named). */
int tcmpi__info_arg(MPI_Comm comm, MPI_Info info, const char *fn);
/* *out = a new info object holding to's keys (MPI_INFO_NULL: none)
 * updated by from's (MPI_INFO_NULL: none), in order; *out is left alone
 * on error (MPI_ERR_NO_MEM, reported on comm). */
int tcmpi__info_merge(MPI_Comm comm, MPI_Info to, MPI_Info from, MPI_Info *out, const char *fn);
/* Frees an info object of the layer's (MPI_INFO_NULL: nothing). */
void tcmpi__info_drop(MPI_Info *info);
/* User error handlers (shim_core.c): one more and one fewer reference to
 * handler h (nothing for a predefined one). */
void tcmpi__errh_hold(MPI_Errhandler h);
void tcmpi__errh_drop(MPI_Errhandler h);
/* Frees the messages a communicator of one rank holds (shim_p2p.c): at
 * MPI_Comm_free and MPI_Finalize.  Receives still posted on it stay
 * pending (they can never complete) and no longer refer to it. */
void tcmpi__selfq_free(struct tcmpi__comm *c);

/* Requests (shim_p2p.c): a message, or a collective, nonblocking or
 * persistent.  The handle is an index; the request never moves. */
enum { TCMPI_REQ_SEND = 1, TCMPI_REQ_RECV, TCMPI_REQ_COLL, TCMPI_REQ_PAIR };
struct tcmpi__req {
	int kind;
	int persistent;
	int active; /* the tc request is started and not completed */
	int done;   /* complete without a tc request (MPI_PROC_NULL, a
	                         communicator of one rank), or 2: tc request
	                         complete, MPI request not yet, or 3: complete
	                         without a tc request, its status the source
	                         peer, tag and ucount bytes (MPI_Imrecv) */
	int tcrc;   /* the tc request's outcome when done == 2 */
	int peer, tag;
	MPI_Comm comm;
	struct tc_proc *proc;
	tc_request tr;
	void *tmp;   /* packed receive side (unpacked into ubuf) */
	size_t toff; /* a collective's: where in tmp the part for ubuf begins */
	void *tmp2;  /* packed send side (packed from sbuf at start) */
	void *ubuf;
	const void *sbuf;
	size_t ucount;
	struct tcmpi__dtype *t; /* the request's own copy (tcmpi__dtype_hold), or NULL */
	const void *lsrc;       /* the call on a communicator of one rank: */
	void *ldst;             /* lbytes copied from lsrc to ldst at the start */
	size_t lbytes;
	struct tc_user_op user; /* borrowed by the tc request */
	MPI_Op uop;             /* its operator, held (tcmpi__op_hold) until the request goes */
	struct tc_coll_opts opts;
	struct tcmpi__vreq *v; /* a variable-count collective's sides, or NULL */
	/* A receive on a communicator of one rank (shim_p2p.c): */
	int selfpend;             /* posted, no message matched yet */
	int orphan;               /* freed by MPI_Request_free while pending */
	int selferr;              /* its outcome when done == 3 (MPI_ERR_TRUNCATE) */
	int stag;                 /* the tag it asks for (or MPI_ANY_TAG) */
	size_t cap;               /* bytes it can take */
	struct tcmpi__req *snext; /* the next receive posted on the communicator */
	struct tcmpi__req *onext; /* the next request freed while active */
	int unpacked;             /* its data unpacked since its start (shim_p2p.c) */
	/* A persistent message (shim_persist.c): its send mode, count, peer and
	 * tag as given to its MPI_*_init. */
	int pmode, pcount, ppeer, ptag;
	/* MPI_Isendrecv's (TCMPI_REQ_PAIR, shim_sendrecv.c): its receive and send,
	 * requests of the layer the program never sees, MPI_REQUEST_NULL once
	 * complete; then done 4, the receive's status in peer, tag and ucount,
	 * the first error in selferr. */
	MPI_Request psub[2];
	int cancelled; /* done 3: cancelled by MPI_Cancel before any message matched */
	/* A synchronous send on a communicator of one rank whose message no
	 * receive has taken yet (selfpend set; shim_p2p.c): that message, in
	 * the communicator's queue, or NULL once the queue is gone. */
	struct tcmpi__self_msg *selfmsg;
	struct tcmpi__nbr *nb; /* a neighbourhood collective's (TCMPI_REQ_COLL), or NULL */
};
struct tcmpi__req *tcmpi__req_new(MPI_Comm comm, int kind, MPI_Request *h, const char *fn);
void tcmpi__req_drop(MPI_Request *h);
/* Completes the requests freed by MPI_Request_free while active
 * (MPI_Finalize): a receive no message has reached is cancelled, any other
 * waited for. */
void tcmpi__orphans_end(void);
/* Completes the requests active on comm, and those freed while active,
 * before its team is freed (MPI_Comm_free: operations pending on a
 * communicator complete normally): each keeps its outcome for the wait or
 * test that then completes its handle (shim_p2p.c). */
void tcmpi__comm_settle(MPI_Comm comm);
/* A variable-count collective's request (shim_icoll.c): at each start,
 * packs its send side (and on a communicator of one rank, moves the data
 * and completes); at completion, unpacks its receive side; frees it. */
void tcmpi__vreq_start(struct tcmpi__req *q);
void tcmpi__vreq_finish(struct tcmpi__req *q);
void tcmpi__vreq_free(struct tcmpi__vreq *v);

/* Neighbourhood collectives (shim_neighbor.c).  One side of a call:
 * block k is side_count elements of its datatype at its place in buf. */
struct tcmpi__nbr_side {
	const struct tcmpi__dtype *t;   /* every block's datatype (ts NULL) */
	const struct tcmpi__dtype **ts; /* block k's (alltoallw), or NULL */
	int nts;                        /* entries of ts a plan holds */
	const char *buf;                /* the buffer's start */
	const int *counts, *displs;     /* per neighbour (v forms), or NULL */
	const MPI_Aint *bdispls;        /* per neighbour, in bytes (w forms), or NULL */
	int count;                      /* every neighbour's (counts NULL) */
	int stride;                     /* block k at k * stride * extent (displs NULL;
	                                    0: the same block for all, an allgather's send) */
};
/* A call set up: checked, its arrays and datatypes copied, its context
 * made (a collective over the communicator the first time); *out, or the
 * error reported.  Posted (its send blocks packed then; on a communicator
 * of one rank, complete at once); progressed (block: until complete),
 * *done once every message has completed and the received blocks are
 * unpacked, returning the first topocoll error; freed. */
struct tcmpi__nbr;
int tcmpi__nbr_new(MPI_Comm comm, const struct tcmpi__nbr_side *snd,
                   const struct tcmpi__nbr_side *rcv, const char *fn, struct tcmpi__nbr **out);
int tcmpi__nbr_post(struct tcmpi__nbr *n, const char *fn);
int tcmpi__nbr_progress(struct tcmpi__nbr *n, int block, int *done);
void tcmpi__nbr_free(struct tcmpi__nbr *n);
/* A topocoll error of the call, reported as fn's MPI error. */
int tcmpi__nbr_error(const struct tcmpi__nbr *n, int tcerr, const char *fn);
/* The sides of an alltoallw call (their datatype arrays allocated), or
 * the error reported; freed by tcmpi__nbr_w_free. */
int tcmpi__nbr_w_sides(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       struct tcmpi__nbr_side *s, struct tcmpi__nbr_side *r, const char *fn);
void tcmpi__nbr_w_free(struct tcmpi__nbr_side *s, struct tcmpi__nbr_side *r);
/* Starts neighbourhood request q (MPI_Start and the nonblocking calls,
 * shim_ineighbor.c): active, or complete at once on a communicator of
 * one rank. */
int tcmpi__nbr_start(struct tcmpi__req *q, const char *fn);

/* Errors: records "fn: message", then applies comm's error handler
 * (MPI_COMM_NULL: MPI_COMM_WORLD's): ends the run (MPI_ERRORS_ARE_FATAL,
 * MPI_ERRORS_ABORT) or returns code (MPI_ERRORS_RETURN). */
int tcmpi__error(MPI_Comm comm, int code, const char *fn, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* A topocoll error of a call on comm, as an MPI error (tcmpi__error). */
int tcmpi__tc_error(MPI_Comm comm, int tcerr, const char *fn);
/* Fails unless MPI is initialized and not finalized: the failure's
 * error and message (tcmpi__check_init() calls it when tcmpi__live is 0). */
int tcmpi__check_init_fail(const char *fn);
static inline int tcmpi__check_init(const char *fn)
{
	return __builtin_expect(tcmpi__live, 1) ? MPI_SUCCESS : tcmpi__check_init_fail(fn);
}
/* The stub of every function the layer does not implement. */
int tcmpi__unsupported(const char *fn);
/* Ends the calling rank with status (exit(), MPI_Abort, a fatal error):
 * aborts the team first when abort_team. */
_Noreturn void tcmpi__end_rank(int status, int abort_team);

/* --report counters around a collective. */
double tcmpi__now_ns(void);
void tcmpi__count(enum tcmpi_coll c, double t0_ns, double model_ns);

/* Scratch memory; NULL only when out of memory. */
void *tcmpi__alloc(size_t n);

#endif /* TCMPI_SHIM_H */
