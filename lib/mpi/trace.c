/* SPDX-License-Identifier: MIT */
/*
 * lib/mpi/trace.c - the events of a team over MPI processes
 * (topocoll/trace.h): each process records its own rank's, with the same
 * logical intervals as lib/sched/exec.c gives a rank of threads (the clock
 * rules of lib/model/clock.h) and wall intervals since the team's epoch,
 * which the processes agreed at creation.  lib/mpi/exec.c calls these at
 * the end of each round when the team records events.
 */
#include "mpi/engine.h"

#include "sched/sched.h"

/* A send (its source) or a forward (a process on its route) of transfer xi
 * in round r: peer the process it went to, arrival the logical arrival of
 * the whole transfer at its destination. */
void tc__mpi_trace_out(struct tc_proc *proc, const struct tc__xfer *xs, int r, int xi, int peer,
                       tc_time_t arrival, uint64_t w0, uint64_t w1)
{
	struct tc__mpi *m = proc->team->engine;
	const struct tc__mps *q = &proc->team->mps;
	const struct tc_topo *t = proc->team->topo;
	const struct tc__xfer *x = &xs[xi];
	const int me = proc->rank;
	int hops = tc_topo_neighbor_index(t, x->src, x->dst) >= 0
	                   ? 1
	                   : tc_topo_distance(t, x->src, x->dst);
	const tc_time_t L = tc__link_time(q, x->bytes);
	const tc_time_t start = arrival - tc__xfer_time(q, x->bytes, hops);
	struct tc_event e = {.round = r,
	                     .xfer = xi,
	                     .peer = peer,
	                     .src = x->src,
	                     .dst = x->dst,
	                     .bytes = x->bytes,
	                     .call = proc->ncalls,
	                     .wt0 = w0,
	                     .wt1 = w1};
	if (x->src == me) {
		e.kind = TC_EV_SEND;
		e.lt0 = start;
	} else {
		/* Hop h of the route (the source sends hop 0). */
		int n = 1 + tc_topo_route(t, x->src, x->dst, m->route, tc_topo_props(t)->diameter + 1);
		int h = 1;
		while (h < n && m->route[h] != me)
			h++;
		e.kind = TC_EV_FORWARD;
		e.lt0 = start + (tc_time_t)h * (q->ct ? q->th : L);
	}
	e.lt1 = e.lt0 + L;
	tc__trace(proc, &e);
}

/* A receive of transfer xi in round r, complete at logical time fin. */
void tc__mpi_trace_recv(struct tc_proc *proc, const struct tc__xfer *xs, int r, int xi,
                        tc_time_t fin, uint64_t w0, uint64_t w1)
{
	const struct tc__xfer *x = &xs[xi];
	struct tc_event e = {.kind = TC_EV_RECV,
	                     .round = r,
	                     .xfer = xi,
	                     .peer = x->src,
	                     .src = x->src,
	                     .dst = x->dst,
	                     .bytes = x->bytes,
	                     .call = proc->ncalls,
	                     .lt0 = fin - tc__link_time(&proc->team->mps, x->bytes),
	                     .lt1 = fin,
	                     .wt0 = w0,
	                     .wt1 = w1};
	tc__trace(proc, &e);
}

/* Round r's combines, in schedule order from logical time from (the clock
 * after the receives), and its wait, from c0 (the clock at the round's
 * start) to the clock now. */
void tc__mpi_trace_end(struct tc_proc *proc, const struct tc__xfer *xs, const int *round_at, int r,
                       tc_time_t c0, tc_time_t from, uint64_t w0, uint64_t w1)
{
	const struct tc__mps *q = &proc->team->mps;
	for (int xi = round_at[r]; xi < round_at[r + 1]; xi++) {
		const struct tc__xfer *x = &xs[xi];
		if (x->dst != proc->rank || x->op == TC__XOP_COPY)
			continue;
		const tc_time_t to = tc__sat_add(from, tc__combine_time(q, x->bytes));
		if (x->bytes) {
			struct tc_event e = {.kind = TC_EV_COMBINE,
			                     .round = r,
			                     .xfer = xi,
			                     .peer = x->src,
			                     .src = x->src,
			                     .dst = x->dst,
			                     .bytes = x->bytes,
			                     .call = proc->ncalls,
			                     .lt0 = from,
			                     .lt1 = to,
			                     .wt0 = w1,
			                     .wt1 = w1};
			tc__trace(proc, &e);
		}
		from = to;
	}
	struct tc_event e = {.kind = TC_EV_WAIT,
	                     .round = r,
	                     .xfer = -1,
	                     .peer = -1,
	                     .src = -1,
	                     .dst = -1,
	                     .call = proc->ncalls,
	                     .lt0 = c0,
	                     .lt1 = proc->clock,
	                     .wt0 = w0,
	                     .wt1 = w1};
	tc__trace(proc, &e);
}
