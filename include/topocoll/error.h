/* SPDX-License-Identifier: MIT */
/*
 * topocoll/error.h - error codes.
 *
 * Every function that can fail returns 0 on success and one of the negative
 * codes below on error.  The list is one X-macro so that the enum, the names
 * and the messages cannot drift apart.  tc_strerror() and tc_err_name() are
 * thread-safe and return static strings.
 */
#ifndef TOPOCOLL_ERROR_H
#define TOPOCOLL_ERROR_H

#include "topocoll/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(NAME, value, message).  No call returns TC_ENOTNEIGHBOR or TC_ESELF
 * any more: a message to a rank that is not a neighbour is routed, one to
 * oneself goes to the rank's own queue (topocoll/p2p.h); their values stay
 * reserved so that the other codes keep theirs. */
#define TC_ERRNO_MAP(X)                                                                               \
	X(EINVAL, -1, "invalid argument")                                                             \
	X(ENOMEM, -2, "out of memory")                                                                \
	X(ERANK, -3, "rank out of range")                                                             \
	X(ENOTNEIGHBOR, -4, "peer is not a neighbour in the team's topology")                         \
	X(ETRUNCATE, -5, "message larger than the receive buffer (nothing received)")                 \
	X(ENULLBUF, -6, "null buffer with a non-zero size")                                           \
	X(EOVERFLOW, -7, "size or count overflow")                                                    \
	X(ENOTSUP, -8, "not supported for this topology, size or configuration")                      \
	X(ETOPO, -9, "malformed topology specification or size out of range")                         \
	X(EBUSY, -10, "rank already attached or team already running")                                \
	X(ETIMEDOUT, -11, "timed out waiting for a peer")                                             \
	X(ESYS, -12, "system call failed (thread creation, affinity, futex)")                         \
	X(EABORTED, -13, "the team was aborted because another rank failed")                          \
	X(EMISMATCH, -14, "mismatched collective call (operation, root, size or type)")               \
	X(EROOT, -15, "root out of range")                                                            \
	X(ESELF, -16, "a rank cannot send to or receive from itself")                                 \
	X(EALG, -17, "unknown algorithm name")                                                        \
	X(EPENDING, -18, "operation still pending")                                                   \
	X(ELIMIT, -19, "over a limit (schedule size, memory, threads): tc_error_detail() says which") \
	X(ECANCELED, -20, "request cancelled (tc_cancel)")

enum tc_errno {
	TC_OK = 0,
#define TC__ERR_ENUM(name, val, msg) TC_##name = (val),
	TC_ERRNO_MAP(TC__ERR_ENUM)
#undef TC__ERR_ENUM
};

/* A human-readable message for err ("success" for 0, "unknown error" for a
 * value outside the list). */
TC_API const char *tc_strerror(int err);
/* The symbolic name ("TC_ETRUNCATE"), "TC_OK" for 0, "TC_E?" if unknown. */
TC_API const char *tc_err_name(int err);
/* What the last error this thread got was about, where the call says it
 * sets it (TC_ELIMIT: which limit, by how much, and what to do;
 * tc_team_create's TC_EINVAL: which field and what it should be;
 * tc_team_destroy's TC_EBUSY: which rank; a calibration refused: the field,
 * and the line of a record read); "" when the call that failed set none:
 * every call that can fail clears it as it starts, so it is never an
 * earlier call's.  After a call that succeeds it may hold anything.
 * Thread-local, and on fibres each fibre's own (a rank's, whichever ranks
 * its CPU runs meanwhile); valid until this thread's next call into the
 * library. */
TC_API const char *tc_error_detail(void);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_ERROR_H */
