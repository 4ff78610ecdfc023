/* SPDX-License-Identifier: MIT */
/*
 * lib/mpi/nbc.c - nonblocking and persistent collectives on a team over
 * MPI processes: team->engine_nbc, through which lib/sched/nbc.c runs the
 * head of a process's queue of started collective calls.
 *
 * A call runs the blocking executor's rounds (lib/mpi/exec.c: the same
 * compiled schedule, the same posting, clock and application code) as a
 * state machine: each step posts the current round if it has not been
 * posted (after the sends a drain waits for), tests its requests once
 * (MPI_Testsome), and when its receives (and the sends a sync waits for)
 * have completed applies the round, advances the clock and goes on to
 * the next; at the end it waits for the call's last sends.  A blocking
 * step (a wait for the request) runs the rest with the executor's own
 * wait.  lib/sched/nbc.c runs one call at a time per process, in the
 * order they were started (as on threads), so that the executor's
 * scratch (staging, requests, compiled schedules) serves the running call
 * alone, and its tag (the call's number, taken when it completes) is the
 * blocking call's: calls outstanding are not bounded by the tag's bits.
 * A test while nothing completes looks for aborts and other calls'
 * messages every probe_ms and fails with TC_ETIMEDOUT (reported as a
 * blocking call's) after the team's timeout without progress.
 */
#include "mpi/engine.h"

#include <stdlib.h>

#include "base/error_detail.h"
#include "sched/sched.h"

struct tc__mnbc {
	struct tc__mcall c;
	const struct tc__exec_io *io; /* the request's, for as long as it runs */
	int nrounds;
	int r;      /* the current round (nrounds: the last sends) */
	int posted; /* round r posted */
	int lo, hi; /* requests that may be open (exec.c's tc__mpi_run) */
	struct tc__mpost ps;
	uint64_t idle_since, next_probe; /* tests without progress */
};

static int tc__mnbc_start(struct tc_proc *proc, const struct tc__sched *s,
                          const struct tc__exec_io *io, void **st)
{
	struct tc__mnbc *q = calloc(1, sizeof *q);
	if (!q)
		return TC_ENOMEM;
	int err = tc__mpi_begin(proc, s, io, &q->c);
	if (err) {
		free(q);
		return tc__mpi_fail(proc, 0, 0, err);
	}
	q->io = io;
	q->nrounds = s->nrounds;
	*st = q;
	return TC_OK;
}

/* Without blocking: whether items it[0 .. n) have arrived (and with all
 * every request of [lo, hi) has completed), one MPI_Testsome made. */
static int tc__mnbc_ready(struct tc_proc *proc, struct tc__mnbc *q, struct tc__mitem *it, int n,
                          int lo, int hi, int all, bool *ready)
{
	struct tc__mpi *m = proc->team->engine;
	int pending = 0, out = 0;
	int rleft = tc__mpi_left(proc, it, n, lo, hi, &pending);
	if (rleft > 0 || (all && pending > 0)) {
		int err = tc__mpi_poll(proc, q->c.pl, lo, hi, q->c.sig, q->c.seq, &rleft, &pending, &out);
		if (err)
			return err;
	}
	*ready = rleft <= 0 && (!all || pending <= 0);
	if (*ready || out) {
		q->idle_since = 0;
		return TC_OK;
	}
	const uint64_t now = tc__now_ns();
	const uint64_t probe_ns = (uint64_t)m->probe_ms * 1000000u;
	const uint64_t timeout = proc->team->timeout_cfg_ns;
	if (!q->idle_since) {
		q->idle_since = now;
		q->next_probe = now + probe_ns;
		return TC_OK;
	}
	if (now >= q->next_probe) {
		q->next_probe = now + probe_ns;
		int err = tc__mpi_probe(m, q->c.pl, it, n, q->c.seq);
		if (err)
			return err;
	}
	if (timeout && now - q->idle_since > timeout) {
		tc__mpi_report(proc, it, n, q->r, q->io, now - q->idle_since);
		return TC_ETIMEDOUT;
	}
	return TC_OK;
}

/* Until items it[0 .. n) (and with all, requests [lo, hi)) are done: the
 * executor's wait (block), or one test; *ready says which. */
static int tc__mnbc_until(struct tc_proc *proc, struct tc__mnbc *q, struct tc__mitem *it, int n,
                          int lo, int hi, int all, bool block, bool *ready)
{
	if (!block)
		return tc__mnbc_ready(proc, q, it, n, lo, hi, all, ready);
	*ready = true;
	return tc__mpi_wait(proc, q->c.pl, it, n, lo, hi, all, q->r < q->nrounds ? q->r : q->r - 1,
	                    q->io, q->c.sig, q->c.seq);
}

static bool tc__mnbc_step(struct tc_proc *proc, void *st, bool block, int *errp)
{
	struct tc__mnbc *q = st;
	struct tc__mplan *pl = q->c.pl;
	bool ready = true;
	int err = TC_OK;
	while (q->r < q->nrounds) {
		const struct tc__mround *R = &pl->r[q->r];
		if (!q->posted) {
			/* A round that writes what an earlier send reads in
			 * place waits for the sends first. */
			if (R->drain && q->lo < R->rq0) {
				err = tc__mnbc_until(proc, q, NULL, 0, q->lo, R->rq0, 1, block, &ready);
				if (err)
					goto fail;
				if (!ready)
					return false;
				q->lo = R->rq0;
			}
			q->hi = R->rq0 + R->nreq;
			err = tc__mpi_post(proc, pl, q->r, q->c.bufs, q->c.sig, q->c.seq, &q->ps);
			if (err)
				goto fail;
			q->posted = 1;
		}
		if (R->nwait || R->sync) {
			err = tc__mnbc_until(proc, q, pl->it + R->it0, R->n, q->lo, q->hi, R->sync,
			                     block, &ready);
			if (err)
				goto fail;
			if (!ready)
				return false;
		}
		tc__mpi_finish(proc, pl, q->r, q->c.bufs, q->io, &q->ps);
		if (R->sync)
			q->lo = q->hi;
		q->posted = 0;
		q->r++;
	}
	if (pl->nreq > q->lo) {
		err = tc__mnbc_until(proc, q, NULL, 0, q->lo, pl->nreq, 1, block, &ready);
		if (err)
			goto fail;
		if (!ready)
			return false;
	}
	proc->ncalls++;
	free(q);
	*errp = TC_OK;
	return true;
fail:
	tc__mpi_fail(proc, q->lo, q->hi, err);
	free(q);
	*errp = err;
	return true;
}

static void tc__mnbc_fail(struct tc_proc *proc, void *st, int err)
{
	struct tc__mnbc *q = st;
	tc__mpi_fail(proc, q->lo, q->hi, err);
	free(q);
}

const struct tc__engine_nbc tc__mpi_nbc = {
        .start = tc__mnbc_start,
        .step = tc__mnbc_step,
        .fail = tc__mnbc_fail,
};
