/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/exec.c - running a rank's plan, the schedule executor (contract
 * in lib/sched/exec.h; the plan, built by lib/sched/plan.c, is laid out in
 * lib/sched/plan.h).
 *
 * An out-item is posted once it is ready and every earlier out-item on the
 * same link has been posted: each link then carries its messages in the
 * order of the plan's items, the order in which its receiver posted them
 * (schedule order, or in a round with routed transfers the order of the
 * legs of their routes, then schedule order: lib/sched/plan.c).  Cut-through transfers
 * of more than one hop travel as packets of `chunk` bytes, each forwarded as
 * soon as it arrives; all packets carry the logical arrival time of the whole
 * transfer, computed once by the source.
 */
#include "sched/plan.h"

#include <stdlib.h>
#include <string.h>

#include "p2p/p2p.h"
#include "p2p/request.h"

enum { TC__SCR_TMP = 0, TC__SCR_STAGE, TC__SCR_REQS, TC__SCR_STATE, TC__SCR_PORTS };

/* Per-item state of a running round. */
struct tc__istate {
	int posted;
	tc_time_t arrival;
	/* Direct receives: result region, other operand, its side. */
	void *out;
	const void *other;
	int recv_left;
	const struct tc__exec_io *io;
};

/* ---- running a plan ------------------------------------------------------ */

struct tc__round {
	const struct tc__pitem *it; /* this round's items */
	struct tc__istate *st;
	tc_request *req;
	unsigned char **bufs; /* IN, OUT, TMP, STAGE base pointers */
	int n;
	int unposted;                /* out-items not yet posted */
	int recvs_posted;            /* in-items posted: forwards may go */
	int first_open;              /* items before it are complete */
	unsigned char *port_blocked; /* per neighbour, scratch of one scan */
	int deg;
	int tag;
	int polls; /* looks at the round (tc__round_done) */
	int err;
};

static void *tc__ptr(const struct tc__round *rd, const struct tc__pitem *x)
{
	return rd->bufs[x->buf] + x->boff;
}

/* A direct receive's delivery, called by the receiving rank's progress with
 * the sender's buffer. */
static void tc__deliver_combine(tc_request *req, const void *src, size_t bytes)
{
	const struct tc__istate *st = tc__req(req)->deliver_ctx;
	const struct tc__exec_io *io = st->io;
	if (!io->combine)
		return;
	if (st->recv_left)
		io->combine(st->out, src, st->other, bytes, io->combine_ctx);
	else
		io->combine(st->out, st->other, src, bytes, io->combine_ctx);
}

/* Posts every out-item that is ready and first on its link. */
static void tc__post_ready(struct tc_proc *proc, struct tc__round *rd)
{
	if (!rd->unposted)
		return;
	memset(rd->port_blocked, 0, (size_t)rd->deg);
	for (int i = 0; i < rd->n; i++) {
		const struct tc__pitem *x = &rd->it[i];
		if (x->kind != TC__IT_SEND && x->kind != TC__IT_FWD_OUT)
			continue;
		if (rd->st[i].posted || rd->port_blocked[x->nbr])
			continue;
		if (x->kind == TC__IT_FWD_OUT) {
			struct tc__req *in = tc__req(&rd->req[x->link]);
			if (!rd->recvs_posted || !tc__req_complete(proc, &rd->req[x->link])) {
				rd->port_blocked[x->nbr] = 1;
				continue;
			}
			if (in->status) {
				rd->err = in->status;
				continue;
			}
			rd->st[i].arrival = in->clock;
		}
		tc__post_send(proc, x->nbr, tc__ptr(rd, x), x->len, rd->tag, rd->st[i].arrival,
		              &rd->req[i]);
		rd->st[i].posted = 1;
		rd->unposted--;
	}
}

/*
 * An eager round (tc__round_simple): sends pushed straight into their rings
 * and receives taken straight out of them, with no request, while the
 * proc's queues are empty; whatever cannot go that way (ring full, queues
 * not empty, message not there after `spin` polls) is posted as a request
 * and left to the wait loop.  The items end up as the request path leaves
 * them: posted, and complete ones marked TC__REQ_DONE with their clock.
 */
static void tc__round_eager(struct tc_proc *proc, struct tc__round *rd, int spin)
{
	const size_t scm = tc__coll_single_copy_min(proc->team);
	int left = 0;
	for (int i = 0; i < rd->n; i++) {
		const struct tc__pitem *x = &rd->it[i];
		struct tc__req *q = tc__req(&rd->req[i]);
		if (x->kind != TC__IT_SEND) {
			q->state = TC__REQ_IDLE;
			left++;
			continue;
		}
		if (tc__send_eager(proc, x->nbr, tc__ptr(rd, x), x->len, rd->tag, rd->st[i].arrival, scm)) {
			q->state = TC__REQ_DONE;
			q->status = TC_OK;
		} else {
			tc__post_send(proc, x->nbr, tc__ptr(rd, x), x->len, rd->tag,
			              rd->st[i].arrival, &rd->req[i]);
		}
		rd->st[i].posted = 1;
		rd->unposted--;
	}
	/* Polling here makes no progress on queued requests: one look only
	 * unless there are none. */
	bool give_up = false;
	for (int k = 0; left && !give_up && k < (proc->nactive ? 1 : spin); k++)
		for (int i = 0; i < rd->n; i++) {
			const struct tc__pitem *x = &rd->it[i];
			struct tc__req *q = tc__req(&rd->req[i]);
			if (x->kind != TC__IT_RECV || q->state != TC__REQ_IDLE)
				continue;
			int taken = tc__recv_eager(proc, x->nbr, tc__ptr(rd, x), x->len, rd->tag,
			                           &q->received, &q->clock);
			if (taken > 0) {
				q->state = TC__REQ_DONE;
				q->status = TC_OK;
				left--;
			}
			give_up |= taken < 0; /* a message for the request path */
		}
	for (int i = 0; i < rd->n && left; i++) {
		const struct tc__pitem *x = &rd->it[i];
		if (x->kind == TC__IT_RECV && tc__req(&rd->req[i])->state == TC__REQ_IDLE) {
			tc__post_recv(proc, x->nbr, tc__ptr(rd, x), x->len, rd->tag, &rd->req[i]);
			left--;
		}
	}
	/* Items complete in schedule order up to the first open one. */
	while (rd->first_open < rd->n && tc__req(&rd->req[rd->first_open])->state == TC__REQ_DONE &&
	       !tc__req(&rd->req[rd->first_open])->status)
		rd->first_open++;
}

/* A wait's look at the links it does not listen on (tc__coll_scan), for
 * its polls in turn: the 2nd and every TC__SCAN_EVERY-th after. */
static int tc__wait_look(struct tc_proc *proc, int *polls)
{
	if ((*polls)++ % TC__SCAN_EVERY != 1 || !tc__coll_watches_all(proc))
		return TC_OK;
	return tc__coll_scan(proc, false);
}

static bool tc__round_done(struct tc_proc *proc, void *ctxp)
{
	struct tc__round *rd = ctxp;
	tc__post_ready(proc, rd);
	if (rd->err)
		return true;
	/* Items complete in any order; the ones before first_open are known
	 * complete (and without error).  Every open item is looked at: a failed
	 * one (a mismatched call) ends the round even while an earlier one
	 * waits for a message that will never come. */
	bool done = true;
	for (int i = rd->first_open; i < rd->n; i++) {
		const struct tc__pitem *x = &rd->it[i];
		if ((!rd->st[i].posted && (x->kind == TC__IT_SEND || x->kind == TC__IT_FWD_OUT)) ||
		    !tc__req_complete(proc, &rd->req[i])) {
			done = false;
			continue;
		}
		if (tc__req(&rd->req[i])->status) {
			rd->err = tc__req(&rd->req[i])->status;
			return true;
		}
		if (done)
			rd->first_open = i + 1;
	}
	/* Still waiting: a mismatched call may send on links this round does
	 * not listen on (the 2nd look and every TC__SCAN_EVERY-th after: most
	 * rounds end without a wait; ranks of up to TC__SCAN_LINKS links
	 * only, the others leave it to the end of the call and the probe). */
	if (!done && (rd->err = tc__wait_look(proc, &rd->polls)))
		return true;
	return done;
}

/* Trace: this round's sends and forwards (receives and combines are recorded
 * where the clock takes them). */
static void tc__trace_round(struct tc_proc *proc, const struct tc__sched *s,
                            const struct tc__round *rd, int r, uint64_t w0, uint64_t w1)
{
	const struct tc__mps *q = &proc->team->mps;
	for (int i = 0; i < rd->n; i++) {
		const struct tc__pitem *x = &rd->it[i];
		if (x->chunk != 0 || (x->kind != TC__IT_SEND && x->kind != TC__IT_FWD_OUT))
			continue;
		const struct tc__xfer *y = &s->x[x->xi];
		tc_time_t L = tc__link_time(q, y->bytes);
		tc_time_t start = rd->st[i].arrival - tc__xfer_time(q, y->bytes, x->charge);
		struct tc_event e = {.round = r,
		                     .xfer = x->xi,
		                     .peer = proc->nbrs[x->nbr],
		                     .src = y->src,
		                     .dst = y->dst,
		                     .bytes = y->bytes,
		                     .call = proc->ncalls,
		                     .wt0 = w0,
		                     .wt1 = w1};
		if (x->kind == TC__IT_SEND) {
			e.kind = TC_EV_SEND;
			e.lt0 = start;
		} else {
			/* Hop h of the route: store-and-forward sends it on once it
			 * has all arrived, cut-through t_h after its head did. */
			e.kind = TC_EV_FORWARD;
			e.lt0 = start + (tc_time_t)x->at * (q->ct ? q->th : L);
		}
		e.lt1 = e.lt0 + L;
		tc__trace(proc, &e);
	}
}

/* A receive's arrival, its transfer (ties go in schedule order: a round's
 * items are not, lib/sched/plan.c) and its item. */
struct tc__arr_idx {
	tc_time_t arrival;
	int xi, i;
};

static int tc__arr_cmp(const void *pa, const void *pb)
{
	const struct tc__arr_idx *a = pa, *b = pb;
	if (a->arrival != b->arrival)
		return a->arrival < b->arrival ? -1 : 1;
	return (a->xi > b->xi) - (a->xi < b->xi);
}

/* The clock and statistics of an own send x (its first packet) in a round
 * that started at proc->clock: returns its logical arrival, and raises
 * *send_done to when the sender is free again. */
static tc_time_t tc__item_sent(struct tc_proc *proc, const struct tc__sched *s,
                               const struct tc__pitem *x, tc_time_t *send_done)
{
	const struct tc__mps *q = &proc->team->mps;
	const struct tc__xfer *y = &s->x[x->xi];
	tc_time_t done;
	tc_time_t arrival = tc__clock_send(q, proc->clock, &proc->res_free[tc__res_send(q, x->nbr)],
	                                   y->bytes, x->charge, &done);
	*send_done = tc__max_time(*send_done, done);
	proc->stats.transfers_sent++;
	proc->stats.hops += (uint64_t)x->charge;
	proc->stats.busy_ps = tc__sat_add(proc->stats.busy_ps, tc__link_time(q, y->bytes));
	return arrival;
}

/* The clock and statistics of an own receive x that arrived at arrival:
 * returns its completion, to which proc->clock has been raised. */
static tc_time_t tc__item_received(struct tc_proc *proc, const struct tc__sched *s,
                                   const struct tc__pitem *x, tc_time_t arrival)
{
	const struct tc__mps *q = &proc->team->mps;
	const struct tc__xfer *y = &s->x[x->xi];
	tc_time_t fin = tc__clock_recv(q, arrival, &proc->res_free[tc__res_recv(q, x->nbr)], y->bytes);
	proc->clock = tc__max_time(proc->clock, fin);
	proc->stats.transfers_recv++;
	proc->stats.busy_ps = tc__sat_add(proc->stats.busy_ps, tc__link_time(q, y->bytes));
	return fin;
}

/* Data of round r: staged receives and local transfers, in schedule order;
 * every combine costs m t_c.  it: the round's items; w_start: the wall
 * clock at the start of the round (trace only). */
static void tc__round_apply(struct tc_proc *proc, const struct tc__sched *s,
                            const struct tc__plan *pl, int r, unsigned char **bufs,
                            const struct tc__pitem *it, const struct tc__exec_io *io, uint64_t w_start)
{
	struct tc_team *team = proc->team;
	const struct tc__mps *q = &team->mps;
	for (int k = pl->ap_at[r]; k < pl->ap_at[r + 1]; k++) {
		const struct tc__papply *a = &pl->ap[k];
		const struct tc__xfer *x = &s->x[a->xi];
		const bool direct = a->item >= 0 && it[a->item].direct;
		const void *from = a->item >= 0 ? bufs[it[a->item].buf] + it[a->item].boff
		                                : bufs[x->sbuf] + x->soff;
		void *to = bufs[x->rbuf] + x->roff;
		if (x->op == TC__XOP_COPY) {
			if (to != from && x->bytes)
				memmove(to, from, x->bytes);
		} else if (io->combine && x->bytes) {
			/* A direct receive was combined on arrival; the clock
			 * and the trace take it here like the others. */
			uint64_t w0 = proc->ev ? tc__wall(team) : 0;
			const void *other = bufs[tc__xfer_abuf(x)] + x->roff;
			if (direct)
				w0 = w_start;
			else if (x->op == TC__XOP_COMBINE_LEFT)
				io->combine(to, from, other, x->bytes, io->combine_ctx);
			else
				io->combine(to, other, from, x->bytes, io->combine_ctx);
			if (proc->ev) {
				struct tc_event e = {TC_EV_COMBINE,
				                     r,
				                     a->xi,
				                     x->src,
				                     x->src,
				                     x->dst,
				                     x->bytes,
				                     proc->ncalls,
				                     proc->clock,
				                     tc__sat_add(proc->clock,
				                                 tc__combine_time(q, x->bytes)),
				                     w0,
				                     tc__wall(team)};
				tc__trace(proc, &e);
			}
		}
		if (x->op != TC__XOP_COPY) {
			proc->clock = tc__sat_add(proc->clock, tc__combine_time(q, x->bytes));
			proc->stats.busy_ps =
			        tc__sat_add(proc->stats.busy_ps, tc__combine_time(q, x->bytes));
		}
	}
}

/* A round that failed with err: a mismatched call (a message of another
 * size or collective) fails every rank; our buffers may be freed on return,
 * so no peer may still be copying out of them. */
static int tc__round_failed(struct tc_proc *proc, int err)
{
	if (err == TC_ETRUNCATE || err == TC_EMISMATCH) {
		err = TC_EMISMATCH;
		tc_team_abort(proc->team);
	}
	tc__rndv_quiesce(proc);
	return err;
}

/* The requests a tiny round fell back to (tc__run_tiny). */
struct tc__tiny_wait {
	tc_request *req[2];
	int n;
	int polls;
	int err;
};

static bool tc__tiny_done(struct tc_proc *proc, void *ctxp)
{
	struct tc__tiny_wait *w = ctxp;
	bool done = true;
	for (int i = 0; i < w->n; i++) {
		if (!tc__req_complete(proc, w->req[i])) {
			done = false;
			continue;
		}
		if (tc__req(w->req[i])->status) { /* a failed one ends the round at once */
			w->err = tc__req(w->req[i])->status;
			return true;
		}
	}
	if (!done && (w->err = tc__wait_look(proc, &w->polls)))
		return true; /* as in tc__round_done() */
	return done;
}

/*
 * A tiny plan (pl->tiny): each round is at most one own send and one own
 * receive of one packet.  The send goes straight into its ring and the
 * receive is taken straight out of its ring (tc__round_eager's rules: a
 * request when the ring is full, the link has requests queued, or the
 * message is not there after the eager polls), with tc__plan_exec's clock
 * rules and statistics: the send's arrival from the clock at the start of
 * the round, the clock then the send's completion, then the receive's.
 */
static int tc__run_tiny(struct tc_proc *proc, const struct tc__sched *s, const struct tc__plan *pl,
                        const struct tc__exec_io *io, unsigned char **bufs, tc_request *req)
{
	const int tag = proc->coll_tag;
	struct tc_team *team = proc->team;
	const size_t scm = tc__coll_single_copy_min(team);
	const int spin = tc__eager_polls(team);
	for (int r = 0; r < pl->nrounds; r++) {
		const struct tc__pitem *it = pl->it + pl->it_at[r], *xs = NULL, *xr = NULL;
		const int n = pl->it_at[r + 1] - pl->it_at[r];
		for (int i = 0; i < n; i++) {
			if (it[i].kind == TC__IT_SEND)
				xs = &it[i];
			else
				xr = &it[i];
		}
		struct tc__tiny_wait w = {.n = 0};
		tc_time_t send_done = proc->clock, arrival = 0;
		bool late = false; /* the receive went the request way */
		if (xs) {
			tc_time_t at = tc__item_sent(proc, s, xs, &send_done);
			void *p = bufs[xs->buf] + xs->boff;
			if (!tc__send_eager(proc, xs->nbr, p, xs->len, tag, at, scm)) {
				tc__post_send(proc, xs->nbr, p, xs->len, tag, at, &req[0]);
				w.req[w.n++] = &req[0];
			}
		}
		if (xr) {
			void *p = bufs[xr->buf] + xr->boff;
			size_t got;
			int taken = 0;
			/* Polling makes no progress on queued requests: one look
			 * only unless there are none. */
			for (int k = 0, polls = proc->nactive ? 1 : spin; !taken && k < polls; k++)
				taken = tc__recv_eager(proc, xr->nbr, p, xr->len, tag, &got, &arrival);
			if (taken <= 0) {
				tc__post_recv(proc, xr->nbr, p, xr->len, tag, &req[1]);
				w.req[w.n++] = &req[1];
				late = true;
			}
		}
		if (w.n) {
			proc->cur_round = r;
			int err = tc__progress_wait(proc, tc__tiny_done, &w);
			if (!err)
				err = w.err;
			if (err)
				return tc__round_failed(proc, err);
			if (late)
				arrival = tc__req(&req[1])->clock;
		}
		proc->clock = send_done;
		if (xr)
			tc__item_received(proc, s, xr, arrival);
		tc__round_apply(proc, s, pl, r, bufs, it, io, 0);
		if (n)
			proc->stats.rounds++;
		if (xr && team->emulate)
			tc__emulate_sync(proc);
	}
	proc->ncalls++;
	return TC_OK;
}

/*
 * A plan as a state machine (contract in lib/sched/exec.h).  Per round:
 * START posts the round (own sends with their logical arrivals, then every
 * receive), WAIT looks whether every item is complete (tc__round_done), and
 * the round's end applies the clock, the data and the trace; SYNC, on an
 * emulated team, holds the next round until the wall clock reaches the
 * rank's logical time (a step that may not block only looks).  The scratch
 * of the executor (requests, item states, staging, TMP) is the proc's:
 * one run at a time per proc, which the queue of lib/sched/nbc.c keeps.
 */
enum { TC__RUN_START = 0, TC__RUN_WAIT, TC__RUN_SYNC, TC__RUN_DONE };

struct tc__run {
	const struct tc__sched *s;
	const struct tc__plan *pl;
	const struct tc__exec_io *io;
	unsigned char *bufs[4];
	tc_request *req;
	struct tc__istate *st;
	struct tc__arr_idx *order;
	unsigned char *blocked;
	struct tc__round rd;
	int r, phase, err, nr;
	tc_time_t send_done, c_start;
	uint64_t w_start;
};

size_t tc__run_size(void)
{
	return sizeof(struct tc__run);
}

/* Round r's start: own sends' arrivals from the clock at the start of the
 * round, own sends posted first (they start the peers' critical paths),
 * then every receive, then forwards as their data arrive. */
static void tc__run_round_begin(struct tc_proc *proc, struct tc__run *run)
{
	const struct tc__plan *pl = run->pl;
	const struct tc__sched *s = run->s;
	const int r = run->r, tag = proc->coll_tag;
	struct tc__istate *st = run->st;
	tc_request *req = run->req;
	struct tc__round *rd = &run->rd;
	*rd = (struct tc__round){.it = pl->it + pl->it_at[r],
	                         .st = st,
	                         .req = req,
	                         .bufs = run->bufs,
	                         .n = pl->it_at[r + 1] - pl->it_at[r],
	                         .port_blocked = run->blocked,
	                         .deg = proc->deg,
	                         .tag = tag};
	run->c_start = proc->clock;
	run->w_start = proc->ev ? tc__wall(proc->team) : 0;
	/* (The other fields of st[i] are set before they are read.) */
	run->send_done = proc->clock;
	for (int i = 0; i < rd->n; i++) {
		const struct tc__pitem *x = &rd->it[i];
		st[i].posted = 0;
		if (x->kind == TC__IT_FWD_OUT)
			rd->unposted++;
		if (x->kind != TC__IT_SEND)
			continue;
		rd->unposted++;
		st[i].arrival = x->chunk == 0 ? tc__item_sent(proc, s, x, &run->send_done)
		                              : st[i - 1].arrival;
	}
	if (pl->simple[r])
		tc__round_eager(proc, rd, tc__eager_polls(proc->team));
	else
		tc__post_ready(proc, rd);
	for (int i = 0; i < rd->n && !pl->simple[r]; i++) {
		const struct tc__pitem *x = &rd->it[i];
		if (x->direct) {
			const struct tc__xfer *y = &s->x[x->xi];
			st[i].out = tc__ptr(rd, x);
			st[i].other = run->bufs[tc__xfer_abuf(y)] + y->roff;
			st[i].recv_left = y->op == TC__XOP_COMBINE_LEFT;
			st[i].io = run->io;
			tc__post_recv_direct(proc, x->nbr, x->len, tag, tc__deliver_combine, &st[i],
			                     run->io->user_code != 0, &req[i]);
		} else if (x->kind == TC__IT_FWD_IN || x->kind == TC__IT_RECV) {
			tc__post_recv(proc, x->nbr, tc__ptr(rd, x), x->len, tag, &req[i]);
		}
		if (x->kind == TC__IT_FWD_IN && x->chunk == 0)
			proc->stats.forwarded++;
	}
	rd->recvs_posted = 1;
	proc->cur_round = r;
}

/* Round r's end, every item complete: the logical clock (own sends, then
 * own receives in order of arrival, ties by schedule order, then combines
 * in schedule order), the data, the trace. */
static void tc__run_round_end(struct tc_proc *proc, struct tc__run *run)
{
	struct tc_team *team = proc->team;
	const struct tc__mps *q = &team->mps;
	const struct tc__sched *s = run->s;
	struct tc__round *rd = &run->rd;
	const int r = run->r;
	const uint64_t w_end = proc->ev ? tc__wall(team) : 0;
	if (proc->ev)
		tc__trace_round(proc, s, rd, r, run->w_start, w_end);
	proc->clock = run->send_done;
	int nr = 0;
	for (int i = 0; i < rd->n; i++)
		if (rd->it[i].kind == TC__IT_RECV && rd->it[i].chunk == 0)
			run->order[nr++] =
			        (struct tc__arr_idx){tc__req(&run->req[i])->clock, rd->it[i].xi, i};
	if (nr > 1)
		qsort(run->order, (size_t)nr, sizeof *run->order, tc__arr_cmp);
	for (int k = 0; k < nr; k++) {
		int i = run->order[k].i;
		const struct tc__xfer *x = &s->x[rd->it[i].xi];
		tc_time_t fin = tc__item_received(proc, s, &rd->it[i], tc__req(&run->req[i])->clock);
		if (proc->ev) {
			struct tc_event e = {TC_EV_RECV,
			                     r,
			                     rd->it[i].xi,
			                     x->src,
			                     x->src,
			                     x->dst,
			                     x->bytes,
			                     proc->ncalls,
			                     fin - tc__link_time(q, x->bytes),
			                     fin,
			                     run->w_start,
			                     w_end};
			tc__trace(proc, &e);
		}
	}
	tc__round_apply(proc, s, run->pl, r, run->bufs, rd->it, run->io, run->w_start);
	if (rd->n) {
		proc->stats.rounds++;
		if (proc->ev) {
			struct tc_event e =
			        {TC_EV_WAIT,   r,    -1,           -1,           -1,
			         -1,           0,    proc->ncalls, run->c_start, proc->clock,
			         run->w_start, w_end};
			tc__trace(proc, &e);
		}
	}
	run->nr = nr;
}

int tc__run_start(struct tc_proc *proc, struct tc__run *run, const struct tc__sched *s,
                  const struct tc__plan *pl, const struct tc__exec_io *io)
{
	size_t mi = (size_t)pl->max_round_items + 1;
	*run = (struct tc__run){.s = s,
	                        .pl = pl,
	                        .io = io,
	                        .bufs = {(unsigned char *)(uintptr_t)io->in, io->out, NULL, NULL}};
	if (s->tmp_bytes && !(run->bufs[TC__BUF_TMP] = tc__scratch(proc, TC__SCR_TMP, s->tmp_bytes)))
		return TC_ENOMEM;
	if (pl->stage_max &&
	    !(run->bufs[TC__BUF_STAGE] = tc__scratch(proc, TC__SCR_STAGE, pl->stage_max)))
		return TC_ENOMEM;
	run->req = tc__scratch(proc, TC__SCR_REQS, mi * sizeof *run->req);
	run->st = tc__scratch(proc, TC__SCR_STATE, mi * (sizeof *run->st + sizeof(struct tc__arr_idx)));
	run->blocked = tc__scratch(proc, TC__SCR_PORTS, (size_t)proc->deg + 1);
	if (!run->req || !run->st || !run->blocked)
		return TC_ENOMEM;
	run->order = (struct tc__arr_idx *)(run->st + mi);
	proc->cur_call = io->call ? io->call : "collective";
	proc->cur_alg = io->alg;
	proc->cur_round = 0;
	return TC_OK;
}

bool tc__run_step(struct tc_proc *proc, struct tc__run *run, bool may_block)
{
	for (;;) {
		switch (run->phase) {
		case TC__RUN_START:
			if (run->r == run->pl->nrounds) {
				run->phase = TC__RUN_DONE;
				proc->ncalls++;
				return true;
			}
			tc__run_round_begin(proc, run);
			run->phase = TC__RUN_WAIT;
			/* fall through */
		case TC__RUN_WAIT:
			if (run->rd.n && run->rd.first_open < run->rd.n) {
				if (!tc__round_done(proc, &run->rd))
					return false;
				if (run->rd.err) {
					run->err = tc__round_failed(proc, run->rd.err);
					run->phase = TC__RUN_DONE;
					return true;
				}
			}
			tc__run_round_end(proc, run);
			run->phase = TC__RUN_SYNC;
			/* fall through */
		case TC__RUN_SYNC:
			/* Emulated: a rank that received waits until the model
			 * delivered it (and its combines are done); a pure sender
			 * runs on. */
			if (run->nr && proc->team->emulate) {
				if (may_block)
					tc__emulate_sync(proc);
				else if (proc->team->epoch_ns + (uint64_t)(proc->clock / TC_PS_PER_NS) >
				         tc__now_ns())
					return false;
			}
			run->r++;
			run->phase = TC__RUN_START;
			break;
		default:
			return true;
		}
	}
}

int tc__run_fail(struct tc_proc *proc, struct tc__run *run, int err)
{
	run->phase = TC__RUN_DONE;
	return run->err = tc__round_failed(proc, err);
}

int tc__run_err(const struct tc__run *run)
{
	return run->err;
}

static bool tc__run_cond(struct tc_proc *proc, void *ctx)
{
	return tc__run_step(proc, ctx, true);
}

/* The blocking run: the state machine's steps, waiting between them. */
static int tc__plan_run(struct tc_proc *proc, const struct tc__sched *s, const struct tc__plan *pl,
                        const struct tc__exec_io *io)
{
	if (pl->tiny && !proc->ev) {
		/* Tiny plans keep their request-free path (most of their time is
		 * instructions). */
		unsigned char *bufs[4] = {(unsigned char *)(uintptr_t)io->in, io->out, NULL, NULL};
		tc_request *req = tc__scratch(proc, TC__SCR_REQS, 2 * sizeof *req);
		if (!req ||
		    (s->tmp_bytes && !(bufs[TC__BUF_TMP] = tc__scratch(proc, TC__SCR_TMP, s->tmp_bytes))) ||
		    (pl->stage_max &&
		     !(bufs[TC__BUF_STAGE] = tc__scratch(proc, TC__SCR_STAGE, pl->stage_max))))
			return TC_ENOMEM;
		proc->cur_call = io->call ? io->call : "collective";
		proc->cur_alg = io->alg;
		proc->cur_round = 0;
		return tc__run_tiny(proc, s, pl, io, bufs, req);
	}
	struct tc__run run;
	int err = tc__run_start(proc, &run, s, pl, io);
	if (err)
		return err;
	if (!tc__run_step(proc, &run, true) && (err = tc__progress_wait(proc, tc__run_cond, &run)))
		return tc__run_fail(proc, &run, err);
	return run.err;
}

/*
 * Mismatch detection (team->check; contract in topocoll/coll.h): the call's
 * messages carry its tag, the collective bit and the rank's call sequence
 * number (equal on every rank while no call failed: a failed call aborts the
 * team for the rest of the run), and its 64-bit signature (lib/p2p/p2p.h).
 * A receive that finds another call's message fails the call; so does a
 * message of another signature, or of an earlier call, that a wait finds on
 * a link it does not listen on (tc__coll_scan, every look but the first);
 * and so does, at the end, any message of this call or an earlier one still
 * waiting on some link.  The cost when nothing is wrong: the signature's
 * compare per received message and one look at each incoming link at the
 * end of the call (README, "Mismatch detection").
 */
void tc__exec_begin(struct tc_proc *proc, const struct tc__exec_io *io)
{
	const bool check = proc->team->check;
	proc->coll_tag = check ? TC__MSG_COLL | (int)(proc->ncalls & TC__MSG_SEQ) : io->tag;
	proc->coll_sig = check ? (io->sig ^ (uint64_t)(unsigned)io->tag * 0x9e3779b97f4a7c15ull) | 1 : 0;
	proc->coll_seq = proc->ncalls;
	if (check) /* relaxed: one self-contained word, read by peers' probes */
		atomic_store_explicit(&proc->calls_seen[proc->ncalls % TC__CALLS_SEEN],
		                      tc__call_seen(proc->ncalls, proc->coll_sig), memory_order_relaxed);
}

int tc__exec_end(struct tc_proc *proc, int err)
{
	if (!err && proc->team->check && (err = tc__coll_scan(proc, true)))
		err = tc__round_failed(proc, err);
	proc->coll_tag = 0;
	return err;
}

int tc__plan_exec(struct tc_proc *proc, const struct tc__sched *s, const struct tc__plan *pl,
                  const struct tc__exec_io *io)
{
	tc__exec_begin(proc, io);
	return tc__exec_end(proc, tc__plan_run(proc, s, pl, io));
}

int tc__sched_exec(struct tc_proc *proc, const struct tc__sched *s, const struct tc__exec_io *io)
{
	struct tc__plan *pl;
	int err = tc__plan_build(proc, s, NULL, 0, &pl);
	if (err)
		return err;
	err = tc__plan_exec(proc, s, pl, io);
	tc__plan_free(pl);
	return err;
}
