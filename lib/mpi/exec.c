/* SPDX-License-Identifier: MIT */
/*
 * lib/mpi/exec.c - runs a schedule (lib/sched/sched.h) over MPI messages:
 * the executor of a team whose ranks are processes (topocoll/mpi.h).
 *
 * Per round, a process
 *   1. gives each of its own sends its logical arrival, in schedule order,
 *      from its clock at the start of the round (the rules of
 *      lib/model/clock.h, as lib/sched/exec.c does);
 *   2. posts an MPI_Irecv for every transfer it receives or forwards, then
 *      an MPI_Isend for every transfer it sends (MPI_Send up to
 *      TC__MPI_EAGER bytes): a header (struct tc__mpi_hdr: logical
 *      arrival, the call's signature and number) and the data, packed into
 *      one message up to TC__MPI_SPLIT bytes, else a derived datatype (the
 *      data straight from its region, and received straight into its
 *      destination where nothing else of the round touches that);
 *   3. waits for all of them (MPI_Testsome), sending each forwarded
 *      transfer on, unchanged, as soon as it has all arrived
 *      (store-and-forward, TC_MPI_FORWARD; with TC_MPI_DIRECT a routed
 *      transfer is one message from its source to its destination).
 *      Under a cut-through model a forwarded transfer of more than one
 *      packet travels in packets (the header in the first), each process
 *      on its route sending each packet on as it arrives, in order;
 *   4. takes its receives into its clock in order of arrival, then applies
 *      the received and its local transfers in schedule order: copies, and
 *      combines that cost m t_c; a local transfer reads its source now.
 * A call whose rounds all have eager sends and at most one receive, packed
 * (bcast, allreduce and the like of small messages), runs each round
 * through tc__mpi_lean: the same steps without the bookkeeping for many
 * requests, the receive tested in place before the general wait.
 * Sends read their sources as they were at the start of the round: the
 * small ones are packed then, and no large one's source is written before
 * the round's sends have completed.
 *
 * Errors (the waits, lib/mpi/wait.c): a header of another call, a message
 * of another size, or (looked for after probe_ms without progress) a
 * message of another call from a process this one still waits for:
 * TC_EMISMATCH.  A wait longer than the
 * team's timeout_ms: TC_ETIMEDOUT and a report on stderr naming this
 * process, its host and the processes it waits for.  Either tells every
 * other process (a message on TC__MPI_TAG_ABORT), which then fails its call
 * with TC_EMISMATCH or TC_EABORTED; the team is aborted everywhere.
 */
#include "mpi/engine.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error_detail.h"
#include "sched/sched.h"

static inline size_t tc__up64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

static int tc__grow(void **p, size_t *cap, size_t need)
{
	if (*cap >= need)
		return TC_OK;
	size_t n = *cap ? *cap : 4096;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n);
	if (!q)
		return TC_ENOMEM;
	*p = q;
	*cap = n;
	return TC_OK;
}

static bool tc__overlap(const unsigned char *a, uint64_t an, const unsigned char *b, uint64_t bn)
{
	return an && bn && a < b + bn && b < a + an;
}

/* Whether an own copy receive of transfer xi may land in its destination:
 * no other transfer of the round that this process sends, receives,
 * combines or applies locally touches the region. */
static bool tc__may_land(const struct tc__sched *s, int me, int r, int xi, unsigned char **bufs)
{
	const struct tc__xfer *x = &s->x[xi];
	const unsigned char *d = bufs[x->rbuf] + x->roff;
	if (s->round_at[r + 1] - s->round_at[r] > 64)
		return false; /* a quadratic check: large rounds are staged */
	for (int k = s->round_at[r]; k < s->round_at[r + 1]; k++) {
		const struct tc__xfer *y = &s->x[k];
		if (k == xi || (y->src != me && y->dst != me))
			continue;
		if (y->src == me && tc__overlap(d, x->bytes, bufs[y->sbuf] + y->soff, y->bytes))
			return false;
		if (y->dst == me && tc__overlap(d, x->bytes, bufs[y->rbuf] + y->roff, y->bytes))
			return false;
		if (y->dst == me && y->op != TC__XOP_COPY &&
		    tc__overlap(d, x->bytes, bufs[tc__xfer_abuf(y)] + y->roff, y->bytes))
			return false;
	}
	return true;
}

/* Cancels and frees every request still open (a failed round). */
static void tc__mpi_drop(MPI_Request *req, int n)
{
	for (int i = 0; i < n; i++) {
		if (req[i] == MPI_REQUEST_NULL)
			continue;
		MPI_Cancel(&req[i]);
		MPI_Request_free(&req[i]);
	}
}

struct tc__marr {
	tc_time_t arrival;
	int i;
};

static int tc__marr_cmp(const void *pa, const void *pb)
{
	const struct tc__marr *a = pa, *b = pb;
	if (a->arrival != b->arrival)
		return a->arrival < b->arrival ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* The node before me on the route of x (forward), or -1 when I am not on
 * it; *next the node after me. */
static int tc__mpi_on_route(struct tc__mpi *m, const struct tc_topo *t, const struct tc__xfer *x,
                            int me, int *next)
{
	int n = 1 + tc_topo_route(t, x->src, x->dst, m->route, tc_topo_props(t)->diameter + 1);
	for (int k = 1; k + 1 < n; k++)
		if (m->route[k] == me) {
			*next = m->route[k + 1];
			return m->route[k - 1];
		}
	return -1;
}

/* The node before the destination on the route of x. */
static int tc__mpi_on_route_last(struct tc__mpi *m, const struct tc_topo *t, const struct tc__xfer *x)
{
	int hops = tc_topo_route(t, x->src, x->dst, m->route, tc_topo_props(t)->diameter + 1);
	return hops >= 1 ? m->route[hops - 1] : x->src;
}

/* ---- compiled schedules ------------------------------------------------- */

static void tc__mplan_free(struct tc__mplan *pl)
{
	if (!pl)
		return;
	for (int i = 0; i < pl->nit; i++)
		if (pl->it[i].type != MPI_DATATYPE_NULL)
			MPI_Type_free(&pl->it[i].type);
	free(pl->x);
	free(pl->round_at);
	free(pl->r);
	free(pl->it);
	free(pl->rqi);
	free(pl->ap);
	free(pl);
}

void tc__mpi_exec_free(struct tc__mpi *m)
{
	for (int i = 0; i < TC__MPI_PLANS; i++) {
		tc__mplan_free(m->plans[i]);
		m->plans[i] = NULL;
	}
}

/* Header (in staging) and data (in place) as one datatype on MPI_BOTTOM. */
static int tc__mpi_type(const unsigned char *hdr, const unsigned char *data, uint64_t bytes,
                        MPI_Datatype *out)
{
	MPI_Aint d[2];
	int len[2] = {(int)sizeof(struct tc__mpi_hdr), (int)bytes};
	MPI_Datatype ty[2] = {MPI_BYTE, MPI_BYTE};
	if (MPI_Get_address(hdr, &d[0]) != MPI_SUCCESS || MPI_Get_address(data, &d[1]) != MPI_SUCCESS ||
	    MPI_Type_create_struct(2, len, d, ty, out) != MPI_SUCCESS)
		return TC_ESYS;
	if (MPI_Type_commit(out) != MPI_SUCCESS) {
		MPI_Type_free(out);
		return TC_ESYS;
	}
	return TC_OK;
}

/* Round r's items into pl->it from pl->nit on; their staging from
 * *stage_need on (each round its own: sends outlive their round). */
static int tc__mplan_round(struct tc_proc *proc, const struct tc__sched *s, int r,
                           unsigned char **bufs, struct tc__mplan *pl, size_t *stage_need)
{
	struct tc__mpi *m = proc->team->engine;
	const struct tc_topo *t = proc->team->topo;
	const int me = proc->rank;
	size_t need = *stage_need;
	for (int xi = s->round_at[r]; xi < s->round_at[r + 1]; xi++) {
		const struct tc__xfer *x = &s->x[xi];
		if (x->src == x->dst)
			continue; /* local: applied at the end of the round */
		struct tc__mitem *y = &pl->it[pl->nit];
		const bool near = tc_topo_neighbor_index(t, x->src, x->dst) >= 0;
		const bool big = x->bytes > TC__MPI_SPLIT;
		*y = (struct tc__mitem){.xi = xi, .from = -1, .to = -1, .type = MPI_DATATYPE_NULL};
		if (x->src == me) {
			y->kind = TC__MIT_SEND;
			y->to = m->forward && !near ? tc_topo_next_hop(t, me, x->dst) : x->dst;
			y->hops = near ? 1 : tc_topo_distance(t, me, x->dst);
			y->nbr = tc_topo_neighbor_index(t, me, tc_topo_next_hop(t, me, x->dst));
			y->move = big ? TC__MMOVE_TYPE : TC__MMOVE_PACK;
		} else if (x->dst == me) {
			y->kind = TC__MIT_RECV;
			y->from = m->forward && !near ? tc__mpi_on_route_last(m, t, x) : x->src;
			y->nbr = tc_topo_neighbor_index(t, me,
			                                m->forward ? y->from
			                                           : tc__mpi_on_route_last(m, t, x));
			y->move = big && x->op == TC__XOP_COPY && tc__may_land(s, me, r, xi, bufs)
			                  ? TC__MMOVE_TYPE
			                  : TC__MMOVE_PACK;
		} else if (m->forward && !near) {
			int next = -1, prev = tc__mpi_on_route(m, t, x, me, &next);
			if (prev < 0)
				continue;
			y->kind = TC__MIT_FWD;
			y->from = prev;
			y->to = next;
			y->move = TC__MMOVE_PACK;
		} else {
			continue;
		}
		/* Cut-through: a routed transfer over one packet travels in
		 * packets (at most TC__MPI_PACKETS), forwarded one by one. */
		y->npk = 1;
		if (m->forward && !near && m->packet && x->bytes > m->packet) {
			size_t psz = (size_t)((x->bytes + TC__MPI_PACKETS - 1) / TC__MPI_PACKETS);
			y->psz = psz > m->packet ? psz : m->packet;
			y->npk = (int)((x->bytes + y->psz - 1) / y->psz);
			if (y->npk > 1)
				y->move = TC__MMOVE_PACK;
		}
		y->eager = y->kind == TC__MIT_SEND && y->move == TC__MMOVE_PACK && y->npk == 1 &&
		           x->bytes <= TC__MPI_EAGER;
		y->soff = need;
		need += y->move == TC__MMOVE_PACK ? tc__up64(sizeof(struct tc__mpi_hdr) + x->bytes) : 64;
		pl->nit++;
	}
	*stage_need = need;
	return TC_OK;
}

/* Compiles s for this process and bufs (staging grown to what it needs,
 * so that its datatypes point into the staging every run uses). */
static int tc__mplan_build(struct tc_proc *proc, const struct tc__sched *s, unsigned char **bufs,
                           struct tc__mplan **out)
{
	struct tc__mpi *m = proc->team->engine;
	const int me = proc->rank;
	const int nr = s->nrounds, nx = s->nx;
	struct tc__mplan *pl = calloc(1, sizeof *pl);
	if (!pl)
		return TC_ENOMEM;
	pl->s = s;
	pl->nx = nx;
	pl->nrounds = nr;
	pl->x = malloc((size_t)(nx ? nx : 1) * sizeof *pl->x);
	pl->round_at = malloc((size_t)(nr + 1) * sizeof *pl->round_at);
	pl->r = calloc((size_t)(nr ? nr : 1), sizeof *pl->r);
	/* At most every transfer is an item; at most two requests and one
	 * application each. */
	pl->it = malloc((size_t)(nx ? nx : 1) * sizeof *pl->it);
	size_t rqi_cap = (size_t)(nx ? nx : 1) * 2 * sizeof *pl->rqi;
	pl->rqi = malloc(rqi_cap);
	pl->ap = malloc((size_t)(nx ? nx : 1) * 2 * sizeof *pl->ap);
	if (!pl->x || !pl->round_at || !pl->r || !pl->it || !pl->rqi || !pl->ap) {
		tc__mplan_free(pl);
		return TC_ENOMEM;
	}
	if (nx)
		memcpy(pl->x, s->x, (size_t)nx * sizeof *pl->x);
	memcpy(pl->round_at, s->round_at, (size_t)(nr + 1) * sizeof *pl->round_at);
	memcpy(pl->bufs, bufs, sizeof pl->bufs);
	size_t need = 0;
	int rq = 0, ap = 0, npend = 0;
	/* The source regions of in-place sends not yet drained. */
	struct {
		const unsigned char *p;
		uint64_t n;
	} *pend = malloc((size_t)(nx ? nx : 1) * sizeof *pend);
	if (!pend) {
		tc__mplan_free(pl);
		return TC_ENOMEM;
	}
	for (int r = 0; r < nr; r++) {
		struct tc__mround *R = &pl->r[r];
		/* A round that writes what an earlier send may still read
		 * waits for the sends first. */
		for (int xi = s->round_at[r]; xi < s->round_at[r + 1] && npend && !R->drain; xi++) {
			const struct tc__xfer *x = &s->x[xi];
			if (x->dst != me)
				continue;
			for (int k = 0; k < npend && !R->drain; k++)
				R->drain = tc__overlap(bufs[x->rbuf] + x->roff, x->bytes, pend[k].p,
				                       pend[k].n);
		}
		if (R->drain)
			npend = 0;
		R->it0 = pl->nit;
		tc__mplan_round(proc, s, r, bufs, pl, &need);
		R->n = pl->nit - R->it0;
		R->rq0 = rq;
		for (int i = R->it0; i < pl->nit; i++) {
			struct tc__mitem *y = &pl->it[i];
			const struct tc__xfer *x = &s->x[y->xi];
			const int nq = y->npk * (y->kind == TC__MIT_FWD ? 2 : 1);
			if (tc__grow((void **)&pl->rqi, &rqi_cap,
			             ((size_t)rq + (size_t)nq) * sizeof *pl->rqi)) {
				free(pend);
				tc__mplan_free(pl);
				return TC_ENOMEM;
			}
			y->rq = rq;
			for (int k = 0; k < nq; k++)
				pl->rqi[rq++] = i;
			R->nrecv += y->kind == TC__MIT_RECV;
			R->nwait += y->kind != TC__MIT_SEND;
			if (y->kind == TC__MIT_FWD)
				pl->nsreq += y->npk;
			else if (y->kind == TC__MIT_SEND && !y->eager)
				pl->nsreq += nq;
			if (y->kind == TC__MIT_SEND && y->move == TC__MMOVE_TYPE) {
				pend[npend].p = bufs[x->sbuf] + x->soff;
				pend[npend++].n = x->bytes;
			}
		}
		R->nreq = rq - R->rq0;
		/* Its own in-place sends against what it writes. */
		for (int xi = s->round_at[r]; xi < s->round_at[r + 1] && npend && !R->sync; xi++) {
			const struct tc__xfer *x = &s->x[xi];
			if (x->dst != me)
				continue;
			for (int k = 0; k < npend && !R->sync; k++)
				R->sync = tc__overlap(bufs[x->rbuf] + x->roff, x->bytes, pend[k].p,
				                      pend[k].n);
		}
		if (R->sync)
			npend = 0;
		/* What this process applies: received, not in place, and local. */
		R->ap0 = ap;
		int k = R->it0;
		for (int xi = s->round_at[r]; xi < s->round_at[r + 1]; xi++) {
			const struct tc__xfer *x = &s->x[xi];
			if (x->dst != me)
				continue;
			int item = -1;
			if (x->src != me) {
				while (k < pl->nit &&
				       (pl->it[k].xi != xi || pl->it[k].kind != TC__MIT_RECV))
					k++;
				if (k == pl->nit || pl->it[k].move == TC__MMOVE_TYPE)
					continue;
				item = k - R->it0;
			}
			pl->ap[2 * ap] = xi;
			pl->ap[2 * ap + 1] = item;
			ap++;
		}
		R->nap = ap - R->ap0;
		R->lean = !R->drain && !R->sync && R->nrecv == R->nwait && R->nrecv <= 1;
		for (int i = R->it0; i < pl->nit && R->lean; i++)
			R->lean = pl->it[i].kind == TC__MIT_SEND
			                  ? pl->it[i].eager
			                  : pl->it[i].move == TC__MMOVE_PACK && pl->it[i].npk == 1;
	}
	pl->lean = 1;
	for (int r = 0; r < nr; r++)
		pl->lean &= pl->r[r].lean;
	free(pend);
	pl->nreq = rq;
	int err = tc__grow((void **)&m->stage, &m->stage_cap, need > 64 ? need : 64);
	/* Requests, then their indices and statuses (tc__mpi_wait). */
	if (!err && m->req_cap < (size_t)rq + 1) {
		size_t c = ((size_t)rq + 16) & ~(size_t)7; /* statuses 8-aligned */
		void *a = realloc(m->req, c * sizeof(MPI_Request));
		if (a)
			m->req = a;
		void *b = a ? realloc(m->idx, c * (sizeof(int) + sizeof(MPI_Status))) : NULL;
		if (b) {
			m->idx = b;
			m->req_cap = c;
		}
		err = a && b ? TC_OK : TC_ENOMEM;
	}
	pl->stage = m->stage;
	for (int i = 0; i < pl->nit && !err; i++) {
		struct tc__mitem *y = &pl->it[i];
		if (y->move != TC__MMOVE_TYPE)
			continue;
		const struct tc__xfer *x = &s->x[y->xi];
		const unsigned char *data =
		        y->kind == TC__MIT_SEND ? bufs[x->sbuf] + x->soff : bufs[x->rbuf] + x->roff;
		err = tc__mpi_type(m->stage + y->soff, data, x->bytes, &y->type);
		if (err)
			tc__set_detail("building the datatype of transfer %d failed", y->xi);
	}
	if (err) {
		tc__mplan_free(pl);
		return err;
	}
	*out = pl;
	return TC_OK;
}

/* The compiled s for bufs: found, or built in place of the least recently
 * used. */
static int tc__mplan_get(struct tc_proc *proc, const struct tc__sched *s, unsigned char **bufs,
                         struct tc__mplan **out)
{
	struct tc__mpi *m = proc->team->engine;
	int old = 0;
	for (int i = 0; i < TC__MPI_PLANS; i++) {
		struct tc__mplan *pl = m->plans[i];
		if (!pl) {
			old = i;
			break;
		}
		if (pl->s == s && pl->nx == s->nx && pl->nrounds == s->nrounds &&
		    pl->stage == m->stage && !memcmp(pl->bufs, bufs, sizeof pl->bufs) &&
		    !memcmp(pl->round_at, s->round_at, (size_t)(s->nrounds + 1) * sizeof(int)) &&
		    (!s->nx || !memcmp(pl->x, s->x, (size_t)s->nx * sizeof *s->x))) {
			pl->stamp = ++m->plan_stamp;
			*out = pl;
			return TC_OK;
		}
		if (pl->stamp < m->plans[old]->stamp)
			old = i;
	}
	struct tc__mplan *pl;
	int err = tc__mplan_build(proc, s, bufs, &pl);
	if (err)
		return err;
	/* The build may have moved the staging: plans pointing into the old
	 * one are found no more (their stage differs) and age out. */
	tc__mplan_free(m->plans[old]);
	m->plans[old] = pl;
	pl->stamp = ++m->plan_stamp;
	*out = pl;
	return TC_OK;
}

/* ---- running ------------------------------------------------------------- */

/* Send y of transfer x leaves at the clock of its round's start: its
 * logical arrival, the link's next free time and the counters; returns
 * send_done raised to the time the send is done. */
static inline tc_time_t tc__mpi_stamp(struct tc_proc *proc, const struct tc__mps *q,
                                      struct tc__mitem *y, const struct tc__xfer *x, tc_time_t send_done)
{
	tc_time_t done;
	y->arrival = tc__clock_send(q, proc->clock, &proc->res_free[tc__res_send(q, y->nbr)],
	                            x->bytes, y->hops, &done);
	proc->stats.transfers_sent++;
	proc->stats.hops += (uint64_t)y->hops;
	proc->stats.busy_ps = tc__sat_add(proc->stats.busy_ps, tc__link_time(q, x->bytes));
	return tc__max_time(send_done, done);
}

/* Round r's data: received (staged) and local transfers in schedule order;
 * every combine costs m t_c. */
static void tc__mpi_apply(struct tc_proc *proc, const struct tc__mplan *pl,
                          const struct tc__mround *R, unsigned char **bufs,
                          const struct tc__mitem *it, const struct tc__exec_io *io)
{
	struct tc__mpi *m = proc->team->engine;
	const struct tc__mps *q = &proc->team->mps;
	for (int k = 0; k < R->nap; k++) {
		const int *a = &pl->ap[2 * (R->ap0 + k)];
		const struct tc__xfer *x = &pl->x[a[0]];
		const unsigned char *from =
		        a[1] < 0 ? bufs[x->sbuf] + x->soff
		                 : m->stage + it[a[1]].soff + sizeof(struct tc__mpi_hdr);
		unsigned char *to = bufs[x->rbuf] + x->roff;
		if (x->op == TC__XOP_COPY) {
			if (to != from && x->bytes)
				memmove(to, from, x->bytes);
			continue;
		}
		if (io->combine && x->bytes) {
			const void *other = bufs[tc__xfer_abuf(x)] + x->roff;
			if (x->op == TC__XOP_COMBINE_LEFT)
				io->combine(to, from, other, x->bytes, io->combine_ctx);
			else
				io->combine(to, other, from, x->bytes, io->combine_ctx);
		}
		proc->clock = tc__sat_add(proc->clock, tc__combine_time(q, x->bytes));
		proc->stats.busy_ps = tc__sat_add(proc->stats.busy_ps, tc__combine_time(q, x->bytes));
	}
}

int tc__mpi_post(struct tc_proc *proc, struct tc__mplan *pl, int r, unsigned char **bufs,
                 uint64_t sig, uint64_t seq, struct tc__mpost *ps)
{
	struct tc__mpi *m = proc->team->engine;
	const struct tc__mps *q = &proc->team->mps;
	const struct tc__mround *R = &pl->r[r];
	const struct tc__xfer *xs = pl->x;
	struct tc__mitem *it = pl->it + R->it0;
	const int n = R->n, nreq = R->nreq;
	ps->c0 = proc->clock;
	ps->w0 = proc->ev ? tc__wall(proc->team) : 0;

	/* Own sends' logical arrivals, in schedule order, from the clock at
	 * the start of the round. */
	tc_time_t send_done = proc->clock;
	for (int i = 0; i < n; i++)
		if (it[i].kind == TC__MIT_SEND)
			send_done = tc__mpi_stamp(proc, q, &it[i], &xs[it[i].xi], send_done);
	for (int i = 0; i < nreq; i++)
		m->req[R->rq0 + i] = MPI_REQUEST_NULL;
	/* Receives first, then sends: one message each. */
	int rc = MPI_SUCCESS;
	for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
		struct tc__mitem *y = &it[i];
		if (y->kind == TC__MIT_SEND)
			continue;
		const uint64_t bytes = xs[y->xi].bytes;
		const int tag = tc__mpi_tag(seq, y->xi);
		y->open = 1;
		y->suspect = 0;
		y->left = y->npk;
		y->fwd = 0;
		if (y->move == TC__MMOVE_TYPE) {
			rc = MPI_Irecv(MPI_BOTTOM, 1, y->type, y->from, tag, m->comm, &m->req[y->rq]);
			continue;
		}
		for (int k = 0; k < y->npk && rc == MPI_SUCCESS; k++) {
			size_t off, len;
			tc__mpi_packet(y, bytes, k, &off, &len);
			rc = MPI_Irecv(m->stage + y->soff + off, (int)len, MPI_BYTE, y->from, tag,
			               m->comm, &m->req[y->rq + k]);
		}
	}
	for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
		struct tc__mitem *y = &it[i];
		if (y->kind != TC__MIT_SEND)
			continue;
		const struct tc__xfer *x = &xs[y->xi];
		const int tag = tc__mpi_tag(seq, y->xi);
		unsigned char *h = m->stage + y->soff;
		struct tc__mpi_hdr hd = {.arrival = y->arrival, .sig = sig, .seq = seq};
		memcpy(h, &hd, sizeof hd);
		if (y->move == TC__MMOVE_TYPE) {
			rc = MPI_Isend(MPI_BOTTOM, 1, y->type, y->to, tag, m->comm, &m->req[y->rq]);
			continue;
		}
		if (x->bytes)
			memcpy(h + sizeof hd, bufs[x->sbuf] + x->soff, x->bytes);
		if (y->eager) {
			/* Small: MPI_Send, which buffers it and returns (eager),
			 * without a request to test and free. */
			rc = MPI_Send(h, (int)(sizeof hd + x->bytes), MPI_BYTE, y->to, tag, m->comm);
			continue;
		}
		for (int k = 0; k < y->npk && rc == MPI_SUCCESS; k++) {
			size_t off, len;
			tc__mpi_packet(y, x->bytes, k, &off, &len);
			rc = MPI_Isend(h + off, (int)len, MPI_BYTE, y->to, tag, m->comm,
			               &m->req[y->rq + k]);
		}
	}
	ps->send_done = send_done;
	if (rc != MPI_SUCCESS) {
		tc__set_detail("posting round %d's messages failed (MPI error %d)", r, rc);
		return TC_ESYS;
	}
	return TC_OK;
}

void tc__mpi_finish(struct tc_proc *proc, struct tc__mplan *pl, int r, unsigned char **bufs,
                    const struct tc__exec_io *io, const struct tc__mpost *ps)
{
	struct tc__mpi *m = proc->team->engine;
	const struct tc__mps *q = &proc->team->mps;
	const struct tc__mround *R = &pl->r[r];
	const struct tc__xfer *xs = pl->x;
	struct tc__mitem *it = pl->it + R->it0;
	const int n = R->n;
	const tc_time_t c0 = ps->c0, send_done = ps->send_done; /* c0: trace only */
	const uint64_t w0 = ps->w0;
	const uint64_t w1 = proc->ev ? tc__wall(proc->team) : 0;
	for (int i = 0; proc->ev && i < n; i++)
		if (it[i].kind != TC__MIT_RECV)
			tc__mpi_trace_out(proc, xs, r, it[i].xi, it[i].to, it[i].arrival, w0, w1);
	/* The clock: own sends, then own receives in order of arrival (ties
	 * by schedule order), then the combines in schedule order. */
	proc->clock = send_done;
	struct tc__marr one, *order = &one;
	int nr = 0;
	if (R->nrecv > 1)
		order = (struct tc__marr *)(void *)m->idx; /* free again */
	for (int i = 0; i < n; i++)
		if (it[i].kind == TC__MIT_RECV)
			order[nr++] = (struct tc__marr){it[i].arrival, i};
	if (nr > 1)
		qsort(order, (size_t)nr, sizeof *order, tc__marr_cmp);
	for (int k = 0; k < nr; k++) {
		const struct tc__mitem *y = &it[order[k].i];
		const uint64_t bytes = xs[y->xi].bytes;
		tc_time_t fin =
		        tc__clock_recv(q, y->arrival, &proc->res_free[tc__res_recv(q, y->nbr)], bytes);
		proc->clock = tc__max_time(proc->clock, fin);
		proc->stats.transfers_recv++;
		proc->stats.busy_ps = tc__sat_add(proc->stats.busy_ps, tc__link_time(q, bytes));
		if (proc->ev)
			tc__mpi_trace_recv(proc, xs, r, y->xi, fin, w0, w1);
	}
	const tc_time_t c_recv = proc->clock; /* trace only */
	tc__mpi_apply(proc, pl, R, bufs, it, io);
	if (proc->ev && n)
		tc__mpi_trace_end(proc, xs, pl->round_at, r, c0, c_recv, w0, w1);
	if (n)
		proc->stats.rounds++;
	/* Emulated: a process that received waits until the model delivered
	 * it (and its combines are done); a pure sender runs on. */
	if (nr && proc->team->emulate)
		tc__emulate_sync(proc);
}

/* One round: posts, the wait, the clock, the data. */
static int tc__mpi_round(struct tc_proc *proc, struct tc__mplan *pl, int r, int lo,
                         unsigned char **bufs, const struct tc__exec_io *io, uint64_t sig, uint64_t seq)
{
	const struct tc__mround *R = &pl->r[r];
	struct tc__mpost ps;
	int err = tc__mpi_post(proc, pl, r, bufs, sig, seq, &ps);
	if (!err && (R->nwait || R->sync))
		err = tc__mpi_wait(proc, pl, pl->it + R->it0, R->n, lo, R->rq0 + R->nreq, R->sync,
		                   r, io, sig, seq);
	if (err)
		return err; /* the caller drops the requests */
	tc__mpi_finish(proc, pl, r, bufs, io, &ps);
	return TC_OK;
}

/* A lean round (struct tc__mround's lean) of a call that records no trace:
 * what tc__mpi_round does, without its bookkeeping for many receives,
 * forwards and requests that outlive the round.  The receive is posted,
 * the sends go out with MPI_Send, then the receive is tested up to 64
 * times before the wait of any round (tc__mpi_wait: its timeout and
 * probes) takes over.  The clock, the data and the emulated wait are those
 * of tc__mpi_post and tc__mpi_finish for one receive. */
static int tc__mpi_lean(struct tc_proc *proc, struct tc__mplan *pl, int r, unsigned char **bufs,
                        const struct tc__exec_io *io, uint64_t sig, uint64_t seq)
{
	struct tc__mpi *m = proc->team->engine;
	const struct tc__mps *q = &proc->team->mps;
	const struct tc__mround *R = &pl->r[r];
	const struct tc__xfer *xs = pl->x;
	struct tc__mitem *it = pl->it + R->it0, *in = NULL;
	const size_t h = sizeof(struct tc__mpi_hdr);
	tc_time_t send_done = proc->clock;
	for (int i = 0; i < R->n; i++) {
		if (it[i].kind != TC__MIT_SEND)
			in = &it[i];
		else
			send_done = tc__mpi_stamp(proc, q, &it[i], &xs[it[i].xi], send_done);
	}
	for (int i = 0; i < R->nreq; i++)
		m->req[R->rq0 + i] = MPI_REQUEST_NULL;
	int rc = MPI_SUCCESS;
	if (in) {
		in->open = 1;
		in->suspect = 0;
		in->left = 1;
		in->fwd = 0;
		rc = MPI_Irecv(m->stage + in->soff, (int)(h + xs[in->xi].bytes), MPI_BYTE, in->from,
		               tc__mpi_tag(seq, in->xi), m->comm, &m->req[in->rq]);
	}
	for (int i = 0; i < R->n && rc == MPI_SUCCESS; i++) {
		const struct tc__mitem *y = &it[i];
		if (y->kind != TC__MIT_SEND)
			continue;
		const struct tc__xfer *x = &xs[y->xi];
		unsigned char *hp = m->stage + y->soff;
		const struct tc__mpi_hdr hd = {.arrival = y->arrival, .sig = sig, .seq = seq};
		memcpy(hp, &hd, h);
		if (x->bytes)
			memcpy(hp + h, bufs[x->sbuf] + x->soff, x->bytes);
		rc = MPI_Send(hp, (int)(h + x->bytes), MPI_BYTE, y->to, tc__mpi_tag(seq, y->xi), m->comm);
	}
	if (rc != MPI_SUCCESS) {
		tc__set_detail("posting round %d's messages failed (MPI error %d)", r, rc);
		return TC_ESYS;
	}
	proc->clock = send_done;
	if (!in)
		goto apply;
	MPI_Status st;
	int done = 0;
	for (int k = 0; k < 64 && !done; k++) {
		rc = MPI_Test(&m->req[in->rq], &done, &st);
		if (rc != MPI_SUCCESS) {
			int cls = 0;
			MPI_Error_class(rc, &cls);
			tc__set_detail("transfer %d from process %d: %s", in->xi, in->from,
			               cls == MPI_ERR_TRUNCATE ? "longer than expected (another "
			                                         "collective call, or other sizes)"
			                                       : "MPI failed");
			return cls == MPI_ERR_TRUNCATE ? TC_EMISMATCH : TC_ESYS;
		}
	}
	const uint64_t bytes = xs[in->xi].bytes;
	if (done) {
		int err = tc__mpi_check(in, &st, m->stage, h + bytes, 1, sig, seq);
		if (err)
			return err;
		struct tc__mpi_hdr hd;
		memcpy(&hd, m->stage + in->soff, h);
		in->arrival = hd.arrival;
		in->open = 0;
	} else {
		int err = tc__mpi_wait(proc, pl, it, R->n, R->rq0, R->rq0 + R->nreq, 0, r, io, sig, seq);
		if (err)
			return err;
	}
	const tc_time_t fin =
	        tc__clock_recv(q, in->arrival, &proc->res_free[tc__res_recv(q, in->nbr)], bytes);
	proc->clock = tc__max_time(proc->clock, fin);
	proc->stats.transfers_recv++;
	proc->stats.busy_ps = tc__sat_add(proc->stats.busy_ps, tc__link_time(q, bytes));
apply:
	tc__mpi_apply(proc, pl, R, bufs, it, io);
	if (R->n)
		proc->stats.rounds++;
	if (in && proc->team->emulate)
		tc__emulate_sync(proc);
	return TC_OK;
}

int tc__mpi_begin(struct tc_proc *proc, const struct tc__sched *s, const struct tc__exec_io *io,
                  struct tc__mcall *c)
{
	struct tc__mpi *m = proc->team->engine;
	c->seq = proc->ncalls;
	c->sig = (io->sig ? io->sig : (uint64_t)(unsigned)io->tag) ^ 0x746f706f636f6c6cull;
	c->bufs[0] = (unsigned char *)(uintptr_t)io->in;
	c->bufs[1] = io->out;
	c->bufs[2] = NULL;
	c->pl = NULL;
	int err = TC_OK;
	if (s->tmp_bytes) {
		err = tc__grow((void **)&m->tmp, &m->tmp_cap, s->tmp_bytes);
		c->bufs[TC__BUF_TMP] = m->tmp;
	}
	if (!err)
		err = tc__mplan_get(proc, s, c->bufs, &c->pl);
	return err;
}

int tc__mpi_fail(struct tc_proc *proc, int lo, int hi, int err)
{
	struct tc_team *team = proc->team;
	struct tc__mpi *m = team->engine;
	if (hi > lo)
		tc__mpi_drop(m->req + lo, hi - lo);
	/* An abort another process sent is not sent on. */
	if (m->told)
		atomic_store_explicit(&team->aborted, 1, memory_order_relaxed);
	else
		tc__mpi_abort(team, err);
	return err;
}

int tc__mpi_run(struct tc_proc *proc, const struct tc__sched *s, const struct tc__exec_io *io)
{
	struct tc__mcall c;
	int err = tc__mpi_begin(proc, s, io, &c);
	struct tc__mplan *pl = c.pl;
	unsigned char **bufs = c.bufs;
	const uint64_t sig = c.sig, seq = c.seq;
	/* Requests from lo on may still be open: sends of earlier rounds. */
	int lo = 0, hi = 0, r = 0;
	if (!err && pl->lean && !proc->ev) {
		/* No request outlives its round. */
		for (; r < s->nrounds && !err; r++) {
			lo = pl->r[r].rq0;
			hi = lo + pl->r[r].nreq;
			err = tc__mpi_lean(proc, pl, r, bufs, io, sig, seq);
		}
		if (err)
			return tc__mpi_fail(proc, lo, hi, err);
		proc->ncalls++;
		return TC_OK;
	}
	for (; r < s->nrounds && !err; r++) {
		const struct tc__mround *R = &pl->r[r];
		if (R->drain && lo < R->rq0) {
			err = tc__mpi_wait(proc, pl, NULL, 0, lo, R->rq0, 1, r, io, sig, seq);
			if (err)
				break;
			lo = R->rq0;
		}
		hi = R->rq0 + R->nreq;
		err = tc__mpi_round(proc, pl, r, lo, bufs, io, sig, seq);
		if (!err && R->sync)
			lo = R->rq0 + R->nreq;
	}
	if (!err && pl->nsreq && pl->nreq > lo)
		err = tc__mpi_wait(proc, pl, NULL, 0, lo, pl->nreq, 1, r - 1, io, sig, seq);
	if (err)
		return tc__mpi_fail(proc, lo, hi, err);
	proc->ncalls++;
	return TC_OK;
}
