/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/nbc.h - collective calls as requests (nonblocking and
 * persistent collectives): an operation that a tc_request stands for, the
 * proc's queue of started operations, and the hooks through which lib/p2p's
 * waits and tests drive them (lib/sched/nbc.c).  Not installed.
 *
 * Order: the collective calls of a rank run one after the other, in the
 * order they were started (MPI's rule that every rank starts a team's
 * collectives in the same order makes it the same order on every rank, so
 * that each link carries one call's messages before the next's and the
 * executor's matching by link order holds).  Only the queue's head runs;
 * its plan advances at every progress of the proc (every wait, test or
 * other call that makes progress), and the next one starts when it is
 * done.  Requests may be waited for in any order.
 *
 * Clocks: an operation has a logical clock of its own, the proc's at its
 * start (or the end of the operation before it, if later, whether that
 * one is still queued or has completed unwaited: proc->ext_clock);
 * its rounds advance that clock, not the proc's, so that computation
 * charged between the start and the wait (tc_clock_advance) overlaps it;
 * the wait raises the proc's clock to the operation's end.
 *
 * Every call is made by the proc's own thread.
 */
#ifndef TC_SCHED_NBC_H
#define TC_SCHED_NBC_H

#include "core/internal.h"
#include "sched/exec.h"

struct tc__creq;

/* A call that the layer above runs itself instead of a plan: the machine's
 * own algorithms, whose ranks meet on shared flags rather than over the
 * channels (lib/coll/shm_step.c).  begin sets the call up as the queue's
 * head and step moves it on, neither ever waiting (a step of a wait, with
 * spin, looks again at what it awaits for a few hundred ns, where the
 * rank has a CPU of its own): step returns 1 when the
 * call is done, 0 when it needs its peers to move first, or an error.  run
 * is the call made the blocking way, for a head a wait finds not started.
 * Nothing rings a doorbell when such a call's peers move: while one is
 * queued the proc's waits yield instead of parking (ext_native). */
struct tc__creq_native {
	int (*begin)(struct tc_proc *proc, struct tc__creq *op);
	int (*step)(struct tc_proc *proc, struct tc__creq *op, bool spin);
	int (*run)(struct tc_proc *proc, struct tc__creq *op);
};

struct tc__creq {
	struct tc__creq *next; /* in the proc's queue */
	tc_request *req;       /* the request it completes, while active */
	const struct tc__sched *s;
	const struct tc__plan *pl;
	struct tc__exec_io io;
	int persistent;      /* kept (and restartable) after its wait */
	int active;          /* started, not yet ended by a wait or test */
	int queued, running; /* in the queue; its plan started */
	uint64_t gen;        /* the proc's ext_gen when queued */
	tc_time_t clock;     /* its own logical clock */
	/* Set up at every start (the layer above: the input copies a
	 * collective makes); returns 0 or an error (nothing queued then). */
	int (*prepare)(struct tc__creq *op);
	/* Optional: called when op's plan has completed without error; may set
	 * op's s, pl and io to the plan that follows (a call made of phases:
	 * the v-calls' agreement, then their data) and return 1, and op stays
	 * the head and runs it; returns 0 (op done) or an error (op done with
	 * it). */
	int (*then)(struct tc_proc *proc, struct tc__creq *op);
	/* Frees the operation (and what holds it). */
	void (*release)(struct tc__creq *op);
	struct tc__run *run; /* tc__run_size() bytes */
	/* Run natively instead of s and pl (NULL: the plan). */
	const struct tc__creq_native *native;
	void *est; /* running on team->engine_nbc: its state */
	/* A persistent op: in its proc's owned list until tc_request_free
	 * (or the team's destruction) releases it. */
	struct tc__owned own;
	struct tc_proc *owner;
};

/* Starts op on proc as request req: op's schedule, plan and io are set
 * (io's buffers and contexts are op's, or the caller's for as long as the
 * request is active).  Returns 0; TC_EPENDING when op is active already;
 * the error of op->prepare.  A persistent op is left to the caller to free
 * (tc_request_free); a nonblocking one is released by the wait or test that
 * completes it. */
int tc__creq_start(struct tc_proc *proc, struct tc__creq *op, tc_request *req);
/* Makes req a persistent request for op, inactive (tc_start starts it). */
void tc__creq_bind(struct tc__creq *op, tc_request *req);
/* tc__creq_bind for a persistent op of proc, which proc's team releases if
 * tc_request_free does not. */
void tc__creq_keep(struct tc_proc *proc, struct tc__creq *op, tc_request *req);
/* A new op as request req: kept inactive (persistent) or started; when the
 * start fails, op is released and a wait on req says TC_EINVAL.  Returns 0
 * or what tc__creq_start returns. */
int tc__creq_launch(struct tc_proc *proc, struct tc__creq *op, tc_request *req, int persistent);
/* Whether proc has started collective calls still running or queued (a
 * blocking collective then queues behind them: tc__creq_run). */
static inline bool tc__creq_pending(const struct tc_proc *proc)
{
	return proc->ext_pending != 0;
}
/* A blocking collective made while others are queued: started as op and
 * waited for (its order among the team's calls kept).  Returns its
 * status. */
int tc__creq_run(struct tc_proc *proc, struct tc__creq *op);

/* Waits until every collective call proc started has completed (their
 * requests stay for their waits to retire).  Returns 0, or the error that
 * ended the wait (abort, timeout). */
int tc__creq_drain(struct tc_proc *proc);
/* The team is going with collective calls of proc started and not
 * completed: the running call is failed with status (its messages
 * dropped; on a team with another engine, that engine's fail, which tells
 * the other processes) and every call leaves the queue.  Their requests are never touched (their storage
 * may be gone); the operations stay in proc's owned list, which the team
 * releases. */
void tc__creq_abandon(struct tc_proc *proc, int status);
/* tc__plan_exec(), queued behind the started requests when there are
 * any (a blocking call of the layer above that has no request form). */
int tc__exec_ordered(struct tc_proc *proc, const struct tc__sched *s, const struct tc__plan *pl,
                     const struct tc__exec_io *io);

#endif /* TC_SCHED_NBC_H */
