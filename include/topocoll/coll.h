/* SPDX-License-Identifier: MIT */
/*
 * topocoll/coll.h - datatypes, reduction operators and collective operations.
 *
 * Every rank of the team calls the same collective with the same arguments
 * (count, datatype, operator, root, algorithm); like MPI, collectives on one
 * team are matched in the order they are called.  A rank whose peers called
 * something else gets TC_EMISMATCH (the team is aborted so that nobody hangs)
 * as soon as a message of the other call reaches it.
 *
 * Buffers are borrowed for the call.  count is in elements of the datatype.
 * Thread-safety: like every call on a proc, from the rank's own thread.
 */
#ifndef TOPOCOLL_COLL_H
#define TOPOCOLL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "topocoll/model.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tc_proc;

/* X(NAME, C type) */
#define TC_DTYPE_MAP(X)                                                              \
	X(INT8, int8_t)                                                                  \
	X(INT16, int16_t)                                                                \
	X(INT32, int32_t)                                                                \
	X(INT64, int64_t)                                                                \
	X(UINT8, uint8_t)                                                                \
	X(UINT16, uint16_t)                                                              \
	X(UINT32, uint32_t)                                                              \
	X(UINT64, uint64_t)                                                              \
	X(FLOAT, float)                                                                  \
	X(DOUBLE, double)                                                                \
	X(BYTE, unsigned char)

enum tc_dtype {
#define TC__DT_ENUM(name, type) TC_##name,
	TC_DTYPE_MAP(TC__DT_ENUM)
#undef TC__DT_ENUM
	TC_DTYPE_COUNT
};

/* X(NAME, name) */
#define TC_OP_MAP(X)                                                                 \
	X(SUM, sum)                                                                      \
	X(PROD, prod)                                                                    \
	X(MIN, min)                                                                      \
	X(MAX, max)                                                                      \
	X(BAND, band)                                                                    \
	X(BOR, bor)                                                                      \
	X(BXOR, bxor)                                                                    \
	X(LAND, land)                                                                    \
	X(LOR, lor)                                                                      \
	X(USER, user)

enum tc_op {
#define TC__OP_ENUM(name, lname) TC_OP_##name,
	TC_OP_MAP(TC__OP_ENUM)
#undef TC__OP_ENUM
	TC_OP_COUNT
};

/* A user-defined operator: inout[i] = in[i] (op) inout[i] for i < count.
 * Declared commutative or not; a non-commutative operator is applied in rank
 * order (rank 0's value leftmost), and only algorithms that keep that order
 * accept it. */
struct tc_user_op {
	void (*fn)(const void *in, void *inout, size_t count, enum tc_dtype dt, void *ctx);
	void *ctx;
	int commutative;
};

/* Bytes of one element; 0 for an unknown datatype. */
size_t tc_dtype_size(enum tc_dtype dt);
const char *tc_dtype_name(enum tc_dtype dt); /* "int32", ...; NULL if unknown */
const char *tc_op_name(enum tc_op op);       /* "sum", ...; NULL if unknown */

/*
 * inout = in (op) inout, element-wise, on count elements.  Bitwise ops and
 * land/lor on float and double return TC_ENOTSUP; TC_OP_USER needs user.
 * Returns 0, TC_EINVAL, TC_ENOTSUP.
 */
int tc_reduce_local(const void *in, void *inout, size_t count, enum tc_dtype dt, enum tc_op op,
                    const struct tc_user_op *user);

/* Per-call options; all-zero (or a NULL pointer) means the defaults. */
struct tc_coll_opts {
	const char *alg;       /* canonical algorithm name (DESIGN.md catalogue),
	                          NULL or "auto": the cheapest predicted one
	                          (priced on the machine when ranks outnumber
	                          CPUs, see tc_predict) */
	int packets;           /* ring_pipelined: packets r (0: r_opt of seed 003) */
	const struct tc_user_op *user_op; /* with TC_OP_USER */
};

/* Passed as the send buffer: the input is taken from (and the result left
 * in) the receive buffer. */
#define TC_IN_PLACE ((const void *)(uintptr_t)1)

/* The collectives of the catalogue. */
enum tc_coll {
	TC_COLL_BCAST,
	TC_COLL_REDUCE,
	TC_COLL_ALLREDUCE,
	TC_COLL_BARRIER,
	TC_COLL_COUNT
};
const char *tc_coll_name(enum tc_coll c); /* "bcast", ... */

/*
 * One-to-all broadcast of count elements of buf from root.
 * Errors: TC_EROOT, TC_ENULLBUF, TC_EOVERFLOW (count * size overflows or is
 * above TC_MAX_MESSAGE), TC_EINVAL (datatype), TC_EALG (unknown algorithm),
 * TC_ENOTSUP (the algorithm does not apply to this topology or p),
 * TC_EMISMATCH, TC_EABORTED, TC_ETIMEDOUT.  Argument errors are detected
 * before any message moves, identically on every rank given identical
 * arguments.
 */
int tc_bcast(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
             const struct tc_coll_opts *opts);

/* All-to-one reduction into rbuf at root (rbuf is ignored elsewhere and may
 * be NULL there); sbuf may be TC_IN_PLACE at the root. */
int tc_reduce(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
              enum tc_op op, int root, const struct tc_coll_opts *opts);

/* Reduction whose result every rank gets in rbuf; sbuf may be TC_IN_PLACE. */
int tc_allreduce(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                 enum tc_dtype dt, enum tc_op op, const struct tc_coll_opts *opts);

/* Returns once every rank has entered it. */
int tc_barrier(struct tc_proc *proc, const struct tc_coll_opts *opts);

/* What the last collective of the calling rank did. */
struct tc_coll_info {
	const char *algorithm; /* canonical name of the algorithm that ran */
	int rounds;
	tc_time_t modelled_ps; /* makespan predicted for the call */
};
void tc_last_coll(const struct tc_proc *proc, struct tc_coll_info *out);

/* ---------------------------------------------------------------------
 * The registry and prediction without threads.
 */

/* The i-th algorithm name of a collective (registry order, i from 0), or
 * NULL past the last. */
const char *tc_alg_name(enum tc_coll coll, int i);
/* Parses "bcast", "reduce", "allreduce", "barrier".  0 or TC_EINVAL. */
int tc_coll_parse(const char *name, enum tc_coll *out);

struct tc_topo;
struct tc_prediction {
	const char *algorithm;   /* what ran (AUTO resolved) */
	tc_time_t modelled_ps;   /* makespan of the schedule under the model */
	double formula_ns;       /* the seed's closed form (NAN: none) */
	double lower_bound_ns;   /* seed 001 lemma bound (NAN: none applies, e.g.
	                            for algorithms that split the message) */
	long lower_bound_steps;  /* -1: none */
	int rounds;
	long messages;           /* end-to-end transfers */
	long hop_messages;       /* link crossings */
	uint64_t bytes;          /* end-to-end bytes */
	long oneport_violations;
	long nodup_violations;
	long noho_violations;
	long contention;         /* link conflicts (lib/sched) */
	/* The first conflict, when contention > 0: the directed link, the two
	 * transfers (schedule indices, as in tc_schedule) and the round. */
	int contention_from, contention_to, contention_xa, contention_xb, contention_round;
};

/*
 * Predicts a collective of `bytes` bytes per rank (elements of esize bytes)
 * on topology t under md, without running any thread: generates the schedule
 * and applies the logical clock, exactly as a real run would.  alg NULL or
 * "auto" picks the cheapest by the model alone; a team whose ranks outnumber
 * its CPUs (and is not emulated) prices what its CPUs will do instead: the
 * data at the machine's rates and, unless it spins (TC_WAIT_SPIN), a pass
 * of context switches per level of waits (tc_last_coll() says what it ran),
 * so predict that algorithm by name to match such a run.
 * Returns 0, TC_EALG, TC_ENOTSUP, TC_EROOT, TC_EINVAL, TC_ENOMEM.
 * Thread-safe.
 */
int tc_predict(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll,
               const char *alg, size_t bytes, size_t esize, int root, int packets,
               struct tc_prediction *out);

/* One transfer of a collective's schedule (tc_schedule). */
struct tc_transfer {
	int round;
	int src, dst;          /* ranks (src == dst: a local copy or combine) */
	int hops;              /* links on its route (0 for local) */
	int combine;           /* the receiver combines (reduction) */
	uint64_t bytes;
	uint64_t src_off, dst_off; /* byte offsets in the two ranks' buffers */
	tc_time_t start_ps;    /* logical time it leaves src */
	tc_time_t arrival_ps;  /* logical time it has fully arrived */
};

/*
 * The schedule of a collective, as tc_predict would run it: *out gets an
 * array of *n transfers in schedule order (rounds ascending), owned by the
 * caller (free with tc_schedule_free).  Same arguments and errors as
 * tc_predict.  Used by the tool's `steps` and `trace` pictures.
 */
int tc_schedule(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll,
                const char *alg, size_t bytes, size_t esize, int root, int packets,
                struct tc_transfer **out, int *n);
void tc_schedule_free(struct tc_transfer *x);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_COLL_H */
