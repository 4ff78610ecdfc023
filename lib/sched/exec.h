/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/exec.h - runs a schedule (lib/sched/sched.h) over the channels.
 *
 * Every rank of the team calls tc__sched_exec() with the same schedule.  Per
 * round a rank posts its own sends (logical arrival computed by the clock
 * rules of lib/model/clock.h, in schedule order), pre-posts every receive it
 * takes part in (its own, and the hops it forwards for routed transfers), and
 * forwards routed data as it arrives: store-and-forward as whole messages,
 * cut-through as packets of `chunk` bytes sent on as soon as each arrives.
 * On every outgoing link, messages leave in schedule order (transfer index,
 * then packet), and receivers post in the same order, so the FIFO channels
 * match them without tags; the tag only catches mismatched collectives.
 * A combining receive of a single-copy message whose destination no other
 * transfer of the round touches is combined straight out of the sender's
 * buffer (one pass over the data); other combining receives are staged and
 * combined at the end of the round.
 *
 * Thread-safety: called by each rank's own thread; the schedule is shared
 * read-only.
 */
#ifndef TC_SCHED_EXEC_H
#define TC_SCHED_EXEC_H

#include <stdbool.h>
#include <stddef.h>

#include "core/internal.h"
#include "sched/sched.h"

/* out = left (+) right over `bytes` bytes; out may be left or right
 * (exactly) or a third region. */
typedef void (*tc__combine_fn)(void *out, const void *left, const void *right, size_t bytes, void *ctx);

struct tc__exec_io {
	const void *in;         /* TC__BUF_IN */
	void *out;              /* TC__BUF_OUT */
	tc__combine_fn combine; /* needed when the schedule combines */
	void *combine_ctx;
	int tag;      /* the collective call's tag (with mismatch
	                           detection off, the whole signature) */
	uint64_t sig; /* its 64-bit signature (0: the tag alone);
	                           see tc__plan_exec() */
	/* For the watchdog's report (NULL: "collective"); and whether combine
	 * runs user code (a user operator: then never on a sender's buffer,
	 * lib/p2p's copy_first). */
	const char *call, *alg;
	int user_code;
};

/* A schedule compiled for one rank (its own items only); built once, run
 * many times.  Cut-through packets are the model's mu when set, else the
 * team's packet size. */
struct tc__plan;
/* mine[0..nmine): the indices of the transfers the rank takes part in
 * (source, destination or forwarder), ascending (tc__sched_index); NULL:
 * found by a scan of the whole schedule. */
int tc__plan_build(struct tc_proc *proc, const struct tc__sched *s, const int *mine, int nmine,
                   struct tc__plan **out);
void tc__plan_free(struct tc__plan *pl);
int tc__plan_exec(struct tc_proc *proc, const struct tc__sched *s, const struct tc__plan *pl,
                  const struct tc__exec_io *io);

/* The call's tags and signature set on the proc (mismatch detection),
 * before its run; and after it: the end-of-call scan, the tags cleared.
 * tc__plan_exec() is begin, the blocking run, end. */
void tc__exec_begin(struct tc_proc *proc, const struct tc__exec_io *io);
int tc__exec_end(struct tc_proc *proc, int err);

/*
 * A plan run as a state machine (nonblocking and persistent collectives,
 * lib/sched/nbc.c): tc__run_start() gets the executor's scratch (the
 * proc's: one run at a time per proc) and returns 0 or TC_ENOMEM; then
 * tc__run_step() posts what is ready, looks at what completed, ends the
 * rounds that are complete and starts the next ones, and returns true once
 * the plan is done (tc__run_err() then says how it ended: 0,
 * TC_EMISMATCH with the team aborted, ...).  A step never waits; with
 * may_block it may sleep to an emulated deadline (TC_MODE_EMULATED),
 * without it it only looks at the wall clock.  The caller makes progress
 * between steps (tc__progress, tc__progress_wait with the step as its
 * condition); tc__run_fail() ends a run whose wait failed (TC_EABORTED,
 * TC_ETIMEDOUT).  The run's storage is tc__run_size() bytes, the caller's;
 * s, pl and io are borrowed until it is done.  The clock it advances is
 * proc->clock.
 */
struct tc__run;
size_t tc__run_size(void);
int tc__run_start(struct tc_proc *proc, struct tc__run *run, const struct tc__sched *s,
                  const struct tc__plan *pl, const struct tc__exec_io *io);
bool tc__run_step(struct tc_proc *proc, struct tc__run *run, bool may_block);
int tc__run_fail(struct tc_proc *proc, struct tc__run *run, int err);
int tc__run_err(const struct tc__run *run);

/*
 * Runs s on the calling rank (build, run and free its plan).  Returns 0; TC_EMISMATCH when a peer sent
 * something else (another collective, other sizes) - the team is then
 * aborted; TC_EABORTED, TC_ETIMEDOUT; TC_ENOMEM.
 */
int tc__sched_exec(struct tc_proc *proc, const struct tc__sched *s, const struct tc__exec_io *io);

#endif /* TC_SCHED_EXEC_H */
