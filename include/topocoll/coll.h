/* SPDX-License-Identifier: MIT */
/*
 * topocoll/coll.h - datatypes, reduction operators and collective operations.
 *
 * Every rank of the team calls the same collective with the same arguments
 * (count, datatype, operator, root, algorithm) in the same form: the
 * blocking call on every rank, or on every rank one of its request forms
 * (tc_iNAME, tc_NAME_init, below, which match each other); as in MPI a
 * blocking call never matches a request.  Like MPI, collectives on one
 * team are matched in the order they are called.  A rank whose peers called
 * something else gets TC_EMISMATCH (the team is aborted so that nobody hangs)
 * as soon as a message of the other call reaches it.
 *
 * Mismatched calls (on unless tc_team_config.no_mismatch_check): every
 * message of a collective carries the rank's call sequence number and a
 * 64-bit signature of the call (collective, algorithm, root, count, element
 * size and datatype, op, shift distance, multicast set, and whether it is
 * the blocking form or a request: tc_error_detail() then says that the
 * forms differ).  Detected, with
 * TC_EMISMATCH on the rank that sees it and TC_EABORTED on every rank still
 * waiting (in this call or a later one of the run):
 *   - a message of another call on a link where the rank expects one;
 *   - while the rank waits, a message of another signature but the same
 *     sequence number, or of an earlier call, on any other incoming link
 *     (waiting ranks of up to 8 links are woken by arrivals on every link
 *     and look at them now and then);
 *   - at the end of the call, any message of this call or an earlier one
 *     still unreceived on some link (a rank of more than 8 links looks at
 *     8 of them per call, in turn, so it may see it some calls later);
 *   - tc_multicast: root, member set, count, datatype and algorithm are
 *     agreed by every rank first (members or not), so a mismatch fails
 *     everywhere with nothing written;
 *   - a rank waiting in the call on a neighbour, to receive from it or for
 *     it to take a message, when that neighbour's SPMD function has
 *     returned, or when it entered the call of the same sequence number
 *     with another signature: the waiting rank looks every 10 ms of its
 *     wait.
 * A rank that returns 0 has the result of a call whose messages all carried
 * its own signature: never a mix of two calls.  Not detected: a rank whose
 * own call received nothing from a disagreeing rank may return 0 before
 * the disagreement is seen (e.g. a rank that sends only, or the others of
 * a bcast whose odd rank names another root); the message it left behind
 * then fails a later call on the rank that finds it.  A disagreement in
 * which every rank waits for a message no rank sends is seen by the probe
 * above, except where a neighbour waited on is in a point-to-point call or
 * its own code (the team's timeout_ms ends those).  p = 1 sends nothing and
 * has nothing to disagree with.  Cost: README, "Mismatch detection".
 *
 * Buffers are borrowed for the call.  count is in elements of the datatype.
 * Thread-safety: like every call on a proc, from the rank's own thread.
 */
#ifndef TOPOCOLL_COLL_H
#define TOPOCOLL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "topocoll/export.h"
#include "topocoll/model.h"
#include "topocoll/p2p.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tc_proc;

/* X(NAME, C type) */
#define TC_DTYPE_MAP(X)     \
	X(INT8, int8_t)     \
	X(INT16, int16_t)   \
	X(INT32, int32_t)   \
	X(INT64, int64_t)   \
	X(UINT8, uint8_t)   \
	X(UINT16, uint16_t) \
	X(UINT32, uint32_t) \
	X(UINT64, uint64_t) \
	X(FLOAT, float)     \
	X(DOUBLE, double)   \
	X(BYTE, unsigned char)

enum tc_dtype {
#define TC__DT_ENUM(name, type) TC_##name,
	TC_DTYPE_MAP(TC__DT_ENUM)
#undef TC__DT_ENUM
	        TC_DTYPE_COUNT
};

/* X(NAME, name) */
#define TC_OP_MAP(X)  \
	X(SUM, sum)   \
	X(PROD, prod) \
	X(MIN, min)   \
	X(MAX, max)   \
	X(BAND, band) \
	X(BOR, bor)   \
	X(BXOR, bxor) \
	X(LAND, land) \
	X(LOR, lor)   \
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
TC_API size_t tc_dtype_size(enum tc_dtype dt);
TC_API const char *tc_dtype_name(enum tc_dtype dt); /* "int32", ...; NULL if unknown */
TC_API const char *tc_op_name(enum tc_op op);       /* "sum", ...; NULL if unknown */

/*
 * inout = in (op) inout, element-wise, on count elements.  Bitwise ops and
 * land/lor on float and double return TC_ENOTSUP; TC_OP_USER needs user.
 * Min and max compare with C's < and >: a NaN in inout stays and one in in
 * is passed over, so a collective's min or max of floating values that
 * hold NaNs depends on its algorithm's order of combination (as MPI
 * implementations' do); sums and products of floating values, too, are
 * rounded in that order.
 * Returns 0, TC_EINVAL, TC_ENOTSUP, TC_EOVERFLOW (count x the element's
 * size wraps or is above TC_MAX_MESSAGE, as for the collectives),
 * TC_ENULLBUF (in or inout NULL with count > 0).
 */
TC_API int tc_reduce_local(const void *in, void *inout, size_t count, enum tc_dtype dt,
                           enum tc_op op, const struct tc_user_op *user);

/* Per-call options; all-zero (or a NULL pointer) means the defaults. */
struct tc_coll_opts {
	const char *alg; /* canonical algorithm name (DESIGN.md catalogue),
	                          NULL or "auto": the cheapest predicted one
	                          (priced on the machine when ranks outnumber
	                          CPUs, see tc_predict) */
	int packets;     /* ring_pipelined: packets r (0: r_opt of [Goubault-ring]) */
	const struct tc_user_op *user_op; /* with TC_OP_USER */
	int shift_ring;                   /* tc_shift: q counts positions along the
	                          topology's ring (tc_shift) */
};

/* Passed as the send buffer: the input is taken from (and the result left
 * in) the receive buffer. */
#define TC_IN_PLACE ((const void *)(uintptr_t)1)

/* Shapes of the collectives (topocoll/collectives.def, tc_coll_flags()).
 * A block is m = count elements; a buffer holds one block, or p blocks
 * (block i at offset i m) where a flag says so. */
enum {
	TC_CF_ROOTED = 1u << 0,    /* takes a root */
	TC_CF_REDUCES = 1u << 1,   /* takes an operator */
	TC_CF_SEND_P = 1u << 2,    /* the send buffer holds p blocks */
	TC_CF_RECV_P = 1u << 3,    /* the receive buffer holds p blocks */
	TC_CF_SEND_ROOT = 1u << 4, /* only the root's send buffer is read */
	TC_CF_RECV_ROOT = 1u << 5, /* only the root's receive buffer is written */
	TC_CF_NO_SEND = 1u << 6,   /* no send buffer (bcast: one buffer, the
	                               root's is the input) */
	TC_CF_NO_DATA = 1u << 7,   /* no buffer at all (barrier) */
	TC_CF_RECV_NOT0 = 1u << 8, /* rank 0's receive buffer is left untouched
	                               (exscan) */
	TC_CF_Q = 1u << 9,         /* takes a shift q (shift) */
	TC_CF_MEMBERS = 1u << 10,  /* takes a member set; only the root's and the
	                               members' buffers are used (multicast) */
	TC_CF_VCOUNT = 1u << 11,   /* variable counts (allgatherv, gatherv,
	                               scatterv, alltoallv): the blocks' sizes
	                               come from tc_call's counts or matrix, not
	                               from m; the other flags say which buffers
	                               are used and where; own public entry
	                               points (tc_allgatherv, ...) */
};

/* The collectives of the catalogue, in the order of collectives.def. */
enum tc_coll {
#define TC_COLL(NAME, name, shape, bound, dual_of, dual_op) TC_COLL_##NAME,
#include "topocoll/collectives.def"
#undef TC_COLL
	TC_COLL_COUNT
};
TC_API const char *tc_coll_name(enum tc_coll c); /* "bcast", ...; NULL if unknown */
/* The TC_CF_* flags of a collective; 0 for an unknown one. */
TC_API unsigned tc_coll_flags(enum tc_coll c);

/*
 * One-to-all broadcast of count elements of buf from root.
 * Errors: TC_EROOT, TC_ENULLBUF, TC_EOVERFLOW (count * size overflows or is
 * above TC_MAX_MESSAGE), TC_EINVAL (datatype), TC_EALG (unknown algorithm),
 * TC_ENOTSUP (the algorithm does not apply to this topology or p),
 * TC_EMISMATCH, TC_EABORTED, TC_ETIMEDOUT.  Argument errors are detected
 * before any message moves, identically on every rank given identical
 * arguments.  A buffer error that only some ranks make (a NULL buffer on
 * one rank) is returned on those ranks alone, with nothing sent: the others
 * wait for them in the call (README, "Errors").  TC_IN_PLACE is never a
 * receive buffer except scatter's at the root (TC_EINVAL).
 */
TC_API int tc_bcast(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                    const struct tc_coll_opts *opts);

/* All-to-one reduction into rbuf at root (rbuf is ignored elsewhere and may
 * be NULL there); sbuf may be TC_IN_PLACE at the root. */
TC_API int tc_reduce(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                     enum tc_dtype dt, enum tc_op op, int root, const struct tc_coll_opts *opts);

/* Reduction whose result every rank gets in rbuf; sbuf may be TC_IN_PLACE. */
TC_API int tc_allreduce(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                        enum tc_dtype dt, enum tc_op op, const struct tc_coll_opts *opts);

/* Returns once every rank has entered it. */
TC_API int tc_barrier(struct tc_proc *proc, const struct tc_coll_opts *opts);

/*
 * The collectives of Collectives II, shaped like MPI's: count is the number
 * of elements of one block (what one rank contributes, or gets from one
 * rank), buffers are borrowed for the call, the errors are tc_bcast's (plus
 * TC_ENOTSUP for an operator the datatype does not support), detected
 * before any message moves, and nothing is written on an error.  sbuf may
 * be TC_IN_PLACE where MPI allows it: the input is then taken from rbuf (at
 * the calling rank's block for allgather, at the root's block for gather).
 * A p-block buffer must not overlap the other buffer unless in place.
 */

/* rbuf (p blocks) gets every rank's sbuf (one block), rank i's at block i. */
TC_API int tc_allgather(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                        enum tc_dtype dt, const struct tc_coll_opts *opts);
/* sbuf holds p blocks; rank i gets block i of every rank's sbuf reduced
 * (MPI_Reduce_scatter_block).  In place: rbuf holds the p blocks and block
 * 0 of it gets the result. */
TC_API int tc_reduce_scatter(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                             enum tc_dtype dt, enum tc_op op, const struct tc_coll_opts *opts);
/* Inclusive prefix reduction: rank i gets sbuf of ranks 0..i reduced, in
 * rank order. */
TC_API int tc_scan(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, enum tc_op op, const struct tc_coll_opts *opts);
/* Exclusive prefix reduction: rank i > 0 gets sbuf of ranks 0..i-1 reduced;
 * rank 0's rbuf is left untouched (and may be NULL). */
TC_API int tc_exscan(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                     enum tc_dtype dt, enum tc_op op, const struct tc_coll_opts *opts);
/* The root's sbuf holds p blocks; rank i gets block i in rbuf.  sbuf is
 * ignored elsewhere (may be NULL); at the root rbuf may be TC_IN_PLACE (its
 * block stays where it is in sbuf, which must then be a buffer: NULL with
 * count > 0 is TC_ENULLBUF there, in place or not). */
TC_API int tc_scatter(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                      enum tc_dtype dt, int root, const struct tc_coll_opts *opts);
/* The root's rbuf (p blocks) gets every rank's sbuf, rank i's at block i;
 * rbuf is ignored elsewhere (may be NULL). */
TC_API int tc_gather(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                     enum tc_dtype dt, int root, const struct tc_coll_opts *opts);
/* Block j of rank i's sbuf goes to block i of rank j's rbuf. */
TC_API int tc_alltoall(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                       enum tc_dtype dt, const struct tc_coll_opts *opts);

/*
 * The permutations of Collectives III ([Barnat-IB109], [HJR-TR-20-92], [Gergel-shift]): every rank
 * sends one block of count elements and receives one; sbuf may be
 * TC_IN_PLACE (the block is taken from, and the result left in, rbuf).
 * Errors as tc_allgather's.
 */

/*
 * Circular q-shift: rank i's block goes to rank (i + q) mod p, for any q
 * (negative: the other way; reduced mod p).  With opts->shift_ring, q counts
 * positions along the topology's Hamiltonian ring instead, as [Barnat-IB109] and
 * 004 shift on a hypercube: the node at ring position i sends to the node at
 * position i + q, where position i is rank i on a ring or a complete graph
 * and rank G(i) (the binary-reflected Gray code) on a hypercube; other
 * topologies have no such ring (TC_ENOTSUP).
 */
TC_API int tc_shift(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                    enum tc_dtype dt, int q, const struct tc_coll_opts *opts);
/*
 * [HJR-TR-20-92]'s permutations on p = 2^n ranks, with G(i) = i ^ (i >> 1) the
 * binary-reflected Gray code.  Gray-to-binary: block i of an array held in
 * the Gray-code mapping (at rank G(i)) moves to the binary mapping (rank i):
 * rank r's sbuf goes to rank G^-1(r)'s rbuf.  Binary-to-Gray is the inverse:
 * rank r's sbuf goes to rank G(r).  TC_ENOTSUP when p is not a power of two.
 */
TC_API int tc_gray2binary(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                          enum tc_dtype dt, const struct tc_coll_opts *opts);
TC_API int tc_binary2gray(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                          enum tc_dtype dt, const struct tc_coll_opts *opts);

/*
 * Multicast ([KKA-I]): root's buf (count elements) goes to the buf of every
 * rank listed in members[0 .. nmembers) (listing the root too is allowed;
 * nmembers 0 moves nothing).  Every rank passes the same root and the same
 * set (in any order); ranks outside it may forward the data through scratch
 * space, their buf is never touched (it may be NULL).  The set is checked on
 * every rank, and agreed among the ranks by a small allreduce before the
 * data move: a rank whose list has a rank out of range gets TC_ERANK, one
 * with a duplicate (or nmembers < 0, or members NULL with nmembers > 0)
 * TC_EINVAL, and the others TC_EMISMATCH then (likewise a NULL buf on the
 * root or a member with count > 0: TC_ENULLBUF there, a bad datatype or
 * size); lists or roots that differ between ranks give TC_EMISMATCH on
 * every rank.  Nothing is written then.
 */
TC_API int tc_multicast(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                        const int *members, int nmembers, const struct tc_coll_opts *opts);
/* tc_multicast's nonblocking and persistent forms (below: "Nonblocking
 * and persistent collectives"): the member list is read at the call (it
 * may be reused at once), buf is borrowed until the request completes
 * (persistent: until tc_request_free).  The call's run is two steps, the
 * agreement and then the data, each advanced like any other call; a
 * persistent request agrees once, at its first start (a failed agreement
 * is retried, and fails again, at each start), and then runs only the
 * data's plan, made at the call.  A rank's own argument error (a bad list,
 * root, buffer, datatype or size) is returned by its wait, TC_EMISMATCH by
 * the others', as tc_multicast returns them; NULL proc or req, TC_ENOMEM,
 * and TC_ENOTSUP on a team over MPI processes are returned at once, the
 * request not started. */
TC_API int tc_imulticast(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                         const int *members, int nmembers, const struct tc_coll_opts *opts,
                         tc_request *req);
TC_API int tc_multicast_init(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt,
                             int root, const int *members, int nmembers,
                             const struct tc_coll_opts *opts, tc_request *req);

/*
 * The variable-count forms (MPI's "v" calls): counts and displacements in
 * elements, as size_t arrays of p entries; each rank passes its own side
 * (what it sends where, what it receives from whom), as in MPI, and the
 * arrays a rank does not use may be NULL (gatherv's rcounts/displs and
 * scatterv's scounts/displs off the root).  The call first agrees on the
 * counts (an allgather of 4p numbers per rank): if what rank i sends to j is
 * not what j expects from i, every rank returns TC_EMISMATCH and nothing is
 * written; a count or displacement whose bytes overflow TC_MAX_MESSAGE is
 * TC_EOVERFLOW on every rank.  One algorithm, "pairwise" (opts->alg NULL,
 * "auto" or "pairwise"; see lib/coll/vcount/vcount.h): p rounds of direct
 * transfers, routed where not neighbours.  TC_IN_PLACE is not supported
 * (TC_EINVAL).  In the registry of collectives (TC_COLL_ALLGATHERV, ...,
 * flag TC_CF_VCOUNT): tc_predict_call() and tc_schedule_call() take their
 * counts in struct tc_call (counts, matrix); tc_last_coll() reports the
 * run's modelled time (of the data's schedule, not of the agreement).
 */
TC_API int tc_allgatherv(struct tc_proc *proc, const void *sbuf, size_t scount, void *rbuf,
                         const size_t *rcounts, const size_t *displs, enum tc_dtype dt,
                         const struct tc_coll_opts *opts);
TC_API int tc_gatherv(struct tc_proc *proc, const void *sbuf, size_t scount, void *rbuf,
                      const size_t *rcounts, const size_t *displs, enum tc_dtype dt, int root,
                      const struct tc_coll_opts *opts);
TC_API int tc_scatterv(struct tc_proc *proc, const void *sbuf, const size_t *scounts,
                       const size_t *displs, void *rbuf, size_t rcount, enum tc_dtype dt, int root,
                       const struct tc_coll_opts *opts);
TC_API int tc_alltoallv(struct tc_proc *proc, const void *sbuf, const size_t *scounts,
                        const size_t *sdispls, void *rbuf, const size_t *rcounts,
                        const size_t *rdispls, enum tc_dtype dt, const struct tc_coll_opts *opts);

/* ---------------------------------------------------------------------
 * Nonblocking and persistent collectives (MPI 3's MPI_Iallreduce, MPI 4's
 * MPI_Allreduce_init).  tc_iNAME takes tc_NAME's arguments and a request,
 * starts the call and returns; tc_wait, tc_test and tc_waitall
 * (topocoll/p2p.h) complete it, alone or with point-to-point requests.
 * tc_NAME_init makes a persistent request of the call, inactive: the
 * arguments are checked and the algorithm, schedule and this rank's plan
 * made once, there; each tc_start runs the call once (the buffers' contents
 * at the start are what it sends), each wait or test completes it; free it
 * with tc_request_free when it is not active (before tc_team_destroy).
 *
 * Every rank starts a team's collectives, blocking or not, in the same
 * order, as in MPI, and each in the same form: a request (nonblocking or
 * persistent, the two match) where the others start a request, the
 * blocking call where they call it (mismatch detection, above, fails a
 * call whose ranks made both: TC_EMISMATCH; with it off they may wait for
 * each other until timeout_ms); the calls then run one after the other in that order,
 * each advanced whenever its rank makes progress in the library (any wait
 * or test, any send, receive or collective, on this team or any other of
 * the rank's: a root team's and its sub-teams'), so a rank that computes
 * and tests now and then completes them.  Requests may be waited for in any
 * order; a blocking collective made while requests are outstanding runs
 * after them.  Logical clock: a call runs on a clock of its own, from the
 * rank's clock at its start (or the end of the call before it, if later),
 * so that computation charged meanwhile (tc_clock_advance) overlaps it; the
 * wait sets the rank's clock to the later of the two.  Emulated teams hold
 * each round to the model's time as the blocking calls do.
 *
 * Errors: the blocking call's argument errors, returned at once with the
 * request not started (a wait on it then says TC_EINVAL); its run's errors
 * (TC_EMISMATCH, TC_EABORTED, TC_ETIMEDOUT: mismatch detection, the
 * watchdog and the team's timeout hold for outstanding calls too) from the
 * wait or test.  A request that is not active (already completed by a wait
 * or test, or a persistent one not started) gives TC_EINVAL from a wait or
 * test, with tc_error_detail() saying so; tc_cancel does not apply to them
 * (TC_EINVAL).  A request still active given to tc_iNAME or tc_NAME_init
 * gives TC_EPENDING, as tc_start does, with nothing started and the request
 * left as it was.  Buffers and opts->user_op are borrowed until the request
 * completes (persistent: until tc_request_free).
 *
 * The variable-count calls (tc_iallgatherv, tc_allgatherv_init, ...) read
 * their counts and displacements when called (the arrays may be reused at
 * once); their run is two steps, the agreement on the counts and then the
 * data, each advanced like any other call.  A persistent one agrees once,
 * at its first start (a failed agreement, TC_EMISMATCH or a rank's
 * argument error, is retried and failed again at each start), and then
 * runs only the data's plan, made once.  tc_imulticast and
 * tc_multicast_init (declared with tc_multicast) run likewise: the
 * agreement on the root and member set, then the data.
 */
#define TC__COLL_REQ_FORMS(name, ...)                        \
	TC_API int tc_i##name(__VA_ARGS__, tc_request *req); \
	TC_API int tc_##name##_init(__VA_ARGS__, tc_request *req);
TC__COLL_REQ_FORMS(bcast, struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                   const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(reduce, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, enum tc_op op, int root, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(allreduce, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, enum tc_op op, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(barrier, struct tc_proc *proc, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(allgather, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(reduce_scatter, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, enum tc_op op, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(scan, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, enum tc_op op, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(exscan, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, enum tc_op op, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(scatter, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, int root, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(gather, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, int root, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(alltoall, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(shift, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, int q, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(gray2binary, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(binary2gray, struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                   enum tc_dtype dt, const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(allgatherv, struct tc_proc *proc, const void *sbuf, size_t scount, void *rbuf,
                   const size_t *rcounts, const size_t *displs, enum tc_dtype dt,
                   const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(gatherv, struct tc_proc *proc, const void *sbuf, size_t scount, void *rbuf,
                   const size_t *rcounts, const size_t *displs, enum tc_dtype dt, int root,
                   const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(scatterv, struct tc_proc *proc, const void *sbuf, const size_t *scounts,
                   const size_t *displs, void *rbuf, size_t rcount, enum tc_dtype dt, int root,
                   const struct tc_coll_opts *opts)
TC__COLL_REQ_FORMS(alltoallv, struct tc_proc *proc, const void *sbuf, const size_t *scounts,
                   const size_t *sdispls, void *rbuf, const size_t *rcounts, const size_t *rdispls,
                   enum tc_dtype dt, const struct tc_coll_opts *opts)
#undef TC__COLL_REQ_FORMS

/* Starts an inactive persistent request (tc_NAME_init) once.  Returns 0;
 * TC_EPENDING when it is active (started and not yet completed by a wait
 * or test); TC_EINVAL when req is not a persistent collective request;
 * TC_ENOMEM (an input copy).  From the rank's own thread. */
TC_API int tc_start(struct tc_proc *proc, tc_request *req);
/* Frees a persistent request (its plan reference and copies); req may be
 * reused afterwards.  TC_EPENDING when it is active (nothing freed);
 * TC_EINVAL when it is not a persistent collective request (or was freed
 * already). */
TC_API int tc_request_free(struct tc_proc *proc, tc_request *req);

/* What the last collective of the calling rank did. */
struct tc_coll_info {
	const char *algorithm; /* canonical name of the algorithm that ran */
	int rounds;
	tc_time_t modelled_ps; /* makespan predicted for the call */
};
/* out NULL: nothing is written. */
TC_API void tc_last_coll(const struct tc_proc *proc, struct tc_coll_info *out);

/* ---------------------------------------------------------------------
 * The registry and prediction without threads.
 */

/* The i-th algorithm name of a collective (registry order, i from 0), or
 * NULL past the last. */
TC_API const char *tc_alg_name(enum tc_coll coll, int i);
/* Parses a collective's name ("bcast", "allgather", ...) into *out.  0 or
 * TC_EINVAL (an unknown name; out NULL, tc_error_detail() says so). */
TC_API int tc_coll_parse(const char *name, enum tc_coll *out);

struct tc_topo;
struct tc_prediction {
	const char *algorithm;  /* what ran (AUTO resolved) */
	tc_time_t modelled_ps;  /* makespan of the schedule under the model */
	double formula_ns;      /* the source's closed form (NAN: none) */
	double lower_bound_ns;  /* the collective's lower bound under md, valid
	                            for every algorithm however it cuts its data
	                            (tc_lower_bound_any(); for a permutation the
	                            longest route of a block, or [HJR-TR-20-92]'s
	                            Lemma 3 for gray2binary and binary2gray under
	                            SF and one-port; for a multicast Lemma 5's
	                            steps).  NAN: none applies (trees, and the
	                            variable-count collectives: none known for
	                            unequal blocks) */
	long lower_bound_steps; /* -1: none */
	int rounds;
	long messages;     /* end-to-end transfers */
	long hop_messages; /* link crossings */
	uint64_t bytes;    /* end-to-end bytes */
	long oneport_violations;
	long nodup_violations;
	long noho_violations;
	long contention; /* link conflicts (lib/sched) */
	/* The first conflict, when contention > 0: the directed link, the two
	 * transfers (schedule indices, as in tc_schedule) and the round. */
	int contention_from, contention_to, contention_xa, contention_xb, contention_round;
	/* 1: the schedule was simulated.  0: it is over the simulator's limit
	 * (tc_predict_call) and its algorithm's closed form, exact for this
	 * topology and model, gave modelled_ps without building the schedule:
	 * rounds and transfers are -1 (not counted), the messages, bytes and
	 * checker fields 0 (not run). */
	int simulated;
	long transfers; /* in the schedule, local copies included */
};

/*
 * One call of a collective, as tc_predict_call() and tc_schedule_call() take
 * it.  Zero-initialise it (designated initialisers) and set what applies:
 * later collectives add fields at the end, whose zero is the old meaning, so
 * existing callers keep compiling and meaning the same.
 */
struct tc_call {
	enum tc_coll coll;
	const char *alg;    /* canonical name; NULL or "auto": the cheapest */
	size_t bytes;       /* m: bytes of one block (per rank; for allgather,
	                      scatter, gather, alltoall, reduce_scatter the block
	                      one rank holds for one other rank) */
	size_t esize;       /* bytes of one element (0: 1) */
	int root;           /* rooted collectives */
	int packets;        /* ring_pipelined: packets r (0: r_opt) */
	long q;             /* shift: any value, taken mod p */
	const int *members; /* multicast: the member set (any order, the root
	                       may be listed; duplicates or ranks out of range:
	                       TC_EINVAL) */
	int nmembers;
	int shift_ring; /* shift: q along the topology's ring (tc_shift) */
	/* The variable-count collectives (TC_CF_VCOUNT; bytes is ignored for
	 * them, esize is the element size), in elements; displacements are
	 * implied packed (a prediction does not depend on where the bytes sit):
	 * counts  allgatherv, gatherv, scatterv: p numbers, counts[i] the
	 *         elements of rank i's block (what it contributes to every rank,
	 *         to the root, or gets from the root);
	 * matrix  alltoallv: p * p numbers, row-major, matrix[i p + j] the
	 *         elements rank i sends to rank j.
	 * The one a collective does not take must be NULL, the one it takes
	 * must not (TC_EINVAL); a block, or a buffer holding blocks, above
	 * TC_MAX_MESSAGE bytes is TC_EOVERFLOW.  Both NULL for the other
	 * collectives. */
	const size_t *counts;
	const size_t *matrix;
};

/*
 * Predicts a call on topology t under md, without running any thread:
 * generates the schedule and applies the logical clock, exactly as a real
 * run would.  alg NULL or "auto" picks the cheapest by the model alone; a
 * team whose ranks outnumber its CPUs (and is not emulated) prices what its
 * CPUs will do instead: the data at the machine's rates and, unless it spins
 * (TC_WAIT_SPIN), a pass of context switches per level of waits
 * (tc_last_coll() says what it ran), so predict that algorithm by name to
 * match such a run.
 * Returns 0, TC_EALG, TC_ENOTSUP, TC_EROOT, TC_EINVAL, TC_EOVERFLOW (the
 * buffers would exceed TC_MAX_MESSAGE), TC_ELIMIT (the schedule is over the
 * simulator's limit and no exact closed form replaces it: tc_error_detail()
 * says by how much), TC_ENOMEM.  Over that limit with an exact closed form
 * it succeeds with out->simulated 0.  Thread-safe.
 */
TC_API int tc_predict_call(const struct tc_topo *t, const struct tc_model *md,
                           const struct tc_call *call, struct tc_prediction *out);
/* tc_predict_call() with the call's fields as arguments. */
TC_API int tc_predict(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll,
                      const char *alg, size_t bytes, size_t esize, int root, int packets,
                      struct tc_prediction *out);

/*
 * Whether algorithm alg of collective coll applies to topology t under md
 * (its restrictions in the registry: topology kinds, p a power of two, the
 * port model): 0, TC_ENOTSUP, or TC_EALG for an unknown name.  An algorithm
 * that applies may still refuse a call it cannot carry (TC_EOVERFLOW).
 * Thread-safe.
 */
TC_API int tc_alg_applies(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll,
                          const char *alg);

/* One transfer of a collective's schedule (tc_schedule). */
struct tc_transfer {
	int round;
	int src, dst; /* ranks (src == dst: a local copy or combine) */
	int hops;     /* links on its route (0 for local); on a sub-team's
	                 topology, the parent's links they stand for */
	int combine;  /* the receiver combines (reduction) */
	uint64_t bytes;
	uint64_t src_off, dst_off; /* byte offsets in the two ranks' buffers */
	tc_time_t start_ps;        /* logical time it leaves src */
	tc_time_t arrival_ps;      /* logical time it has fully arrived */
	int src_buf, dst_buf;      /* 0: the send buffer, 1: the receive buffer,
	                          2: the algorithm's scratch */
};

/*
 * The schedule of a collective, as tc_predict would run it: *out gets an
 * array of *n transfers in schedule order (rounds ascending), owned by the
 * caller (free with tc_schedule_free).  Same arguments and errors as
 * tc_predict_call; on error *out is NULL and *n 0 (when they are not
 * NULL).  Used by the tool's `steps` and `trace` pictures.
 */
TC_API int tc_schedule_call(const struct tc_topo *t, const struct tc_model *md,
                            const struct tc_call *call, struct tc_transfer **out, int *n);
/* tc_schedule_call() with the call's fields as arguments. */
TC_API int tc_schedule(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll,
                       const char *alg, size_t bytes, size_t esize, int root, int packets,
                       struct tc_transfer **out, int *n);
TC_API void tc_schedule_free(struct tc_transfer *x);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_COLL_H */
