/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/exec.c - the schedule executor (contract in lib/sched/exec.h).
 *
 * Per round the calling rank builds two lists from the round's transfers:
 *   in-items   receives it posts at once: its own receives (into the
 *              destination region, or a staging area when the transfer
 *              combines or the region is read by one of its sends this
 *              round) and the receiving half of every hop it forwards;
 *   out-items  sends, in schedule order: its own (ready at once) and the
 *              sending half of every forwarded hop (ready when the matching
 *              in-item has arrived).
 * An out-item is posted once it is ready and every earlier out-item on the
 * same link has been posted: each link then carries its messages in schedule
 * order, the order in which its receiver posted them.
 * Cut-through transfers of more than one hop travel as packets of `chunk`
 * bytes, each forwarded as soon as it arrives; all packets carry the logical
 * arrival time of the whole transfer, computed once by the source.
 */
#include "sched/exec.h"

#include <stdlib.h>
#include <string.h>

enum { TC__SCR_TMP = 0, TC__SCR_STAGE, TC__SCR_ITEMS, TC__SCR_REQS, TC__SCR_PATH, TC__SCR_PORTS };

enum { TC__IT_SEND = 0, TC__IT_FWD_IN, TC__IT_FWD_OUT, TC__IT_RECV };

struct tc__item {
	int kind;
	int xi;          /* transfer index in the schedule */
	int nbr;         /* neighbour index of the link */
	int link;        /* for a forwarded out-item: its in-item */
	int chunk;       /* packet number */
	int hop, hops;   /* forwarded: our position on the route, its length */
	size_t off, len; /* bytes of the packet within the transfer */
	void *buf;       /* where the packet comes from or goes */
	int posted;
	tc_request *req;
	tc_time_t arrival;
};

static void *tc__region(const struct tc__exec_io *io, void *tmp, int buf, uint64_t off)
{
	switch (buf) {
	case TC__BUF_IN:
		return (unsigned char *)(uintptr_t)io->in + off;
	case TC__BUF_OUT:
		return (unsigned char *)io->out + off;
	default:
		return (unsigned char *)tmp + off;
	}
}

static bool tc__overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return an && bn && a < b + bn && b < a + an;
}

struct tc__round {
	struct tc__item *it;
	int n;
	unsigned char *port_blocked; /* per neighbour, scratch of one scan */
	int deg;
	int err;
};

/* Posts every out-item that is ready and first on its link. */
static void tc__post_ready(struct tc_proc *proc, struct tc__round *rd, const struct tc__exec_io *io)
{
	memset(rd->port_blocked, 0, (size_t)rd->deg);
	for (int i = 0; i < rd->n; i++) {
		struct tc__item *x = &rd->it[i];
		if (x->kind != TC__IT_SEND && x->kind != TC__IT_FWD_OUT)
			continue;
		if (x->posted || rd->port_blocked[x->nbr])
			continue;
		if (x->kind == TC__IT_FWD_OUT) {
			struct tc__item *in = &rd->it[x->link];
			if (!tc__req_complete(proc, in->req)) {
				rd->port_blocked[x->nbr] = 1;
				continue;
			}
			if (in->req->status) {
				rd->err = in->req->status;
				continue;
			}
			x->arrival = in->req->clock;
		}
		tc__post_send(proc, x->nbr, x->buf, x->len, io->tag, x->arrival, x->req);
		x->posted = 1;
	}
}

struct tc__round_ctx {
	struct tc__round *rd;
	const struct tc__exec_io *io;
};

static bool tc__round_done(struct tc_proc *proc, void *ctxp)
{
	struct tc__round_ctx *ctx = ctxp;
	struct tc__round *rd = ctx->rd;
	tc__post_ready(proc, rd, ctx->io);
	if (rd->err)
		return true;
	for (int i = 0; i < rd->n; i++) {
		struct tc__item *x = &rd->it[i];
		if (!x->posted && (x->kind == TC__IT_SEND || x->kind == TC__IT_FWD_OUT))
			return false;
		if (!tc__req_complete(proc, x->req))
			return false;
		if (x->req->status) {
			rd->err = x->req->status;
			return true;
		}
	}
	return true;
}

/* The route of transfer x into path; returns hops. */
static int tc__xroute(const struct tc_topo *t, const struct tc__xfer *x, int *path, int cap)
{
	if (tc_topo_neighbor_index(t, x->src, x->dst) >= 0) {
		path[0] = x->src;
		path[1] = x->dst;
		return 1;
	}
	return tc_topo_route(t, x->src, x->dst, path, cap);
}

/* Trace: this round's sends and forwards (receives and combines are recorded
 * where the clock takes them). */
static void tc__trace_round(struct tc_proc *proc, const struct tc__sched *s,
                            const struct tc__item *it, int n, int r, uint64_t w0, uint64_t w1)
{
	const struct tc__mps *q = &proc->team->mps;
	for (int i = 0; i < n; i++) {
		const struct tc__item *x = &it[i];
		if (x->chunk != 0 || (x->kind != TC__IT_SEND && x->kind != TC__IT_FWD_OUT))
			continue;
		const struct tc__xfer *y = &s->x[x->xi];
		tc_time_t L = tc__link_time(q, y->bytes);
		struct tc_event e = {.round = r, .xfer = x->xi, .peer = proc->nbrs[x->nbr],
		                     .src = y->src, .dst = y->dst, .bytes = y->bytes,
		                     .call = proc->ncalls, .wt0 = w0, .wt1 = w1};
		if (x->kind == TC__IT_SEND) {
			e.kind = TC_EV_SEND;
			e.lt0 = x->arrival - tc__xfer_time(q, y->bytes, x->hops ? x->hops : 1);
			e.lt1 = e.lt0 + L;
		} else {
			/* Hop h of the route: store-and-forward sends it on once it
			 * has all arrived, cut-through t_h after its head did. */
			tc_time_t start = x->arrival - tc__xfer_time(q, y->bytes, x->hops);
			e.kind = TC_EV_FORWARD;
			e.lt0 = start + (q->ct ? (tc_time_t)x->hop * q->th : (tc_time_t)x->hop * L);
			e.lt1 = e.lt0 + L;
		}
		tc__trace(proc, &e);
	}
}

int tc__sched_exec(struct tc_proc *proc, const struct tc__sched *s, const struct tc__exec_io *io)
{
	struct tc_team *team = proc->team;
	const struct tc_topo *t = team->topo;
	const struct tc__mps *q = &team->mps;
	const int me = proc->rank;
	if (s->p != team->p)
		return TC_EINVAL;
	size_t chunk = io->chunk ? io->chunk : team->packet_bytes;
	if (q->ct && team->model.mu)
		chunk = team->model.mu;
	void *tmp = s->tmp_bytes ? tc__scratch(proc, TC__SCR_TMP, s->tmp_bytes) : NULL;
	int *path = tc__scratch(proc, TC__SCR_PATH, (size_t)team->p * sizeof(int));
	unsigned char *blocked = tc__scratch(proc, TC__SCR_PORTS, (size_t)proc->deg + 1);
	if ((s->tmp_bytes && !tmp) || !path || !blocked)
		return TC_ENOMEM;

	for (int r = 0; r < s->nrounds; r++) {
		const int x0 = s->round_at[r], x1 = s->round_at[r + 1];
		/* Pass 1: count items and staging bytes. */
		size_t nitems = 0, stage = 0;
		for (int i = x0; i < x1; i++) {
			const struct tc__xfer *x = &s->x[i];
			if (x->src == x->dst)
				continue;
			if (x->src != me && x->dst != me && tc_topo_neighbor_index(t, x->src, x->dst) >= 0)
				continue;
			int hops = tc__xroute(t, x, path, team->p);
			size_t pk = q->ct && hops > 1 && chunk ? (x->bytes + chunk - 1) / chunk : 1;
			if (pk == 0)
				pk = 1;
			for (int k = 1; k < hops; k++)
				if (path[k] == me) {
					nitems += 2 * pk;
					stage += x->bytes;
				}
			if (x->src == me)
				nitems += pk;
			if (x->dst == me) {
				nitems += pk;
				stage += x->bytes;
			}
		}
		struct tc__item *it = tc__scratch(proc, TC__SCR_ITEMS, (nitems + 1) * sizeof *it);
		tc_request *reqs = tc__scratch(proc, TC__SCR_REQS, (nitems + 1) * sizeof *reqs);
		unsigned char *st = tc__scratch(proc, TC__SCR_STAGE, stage + 1);
		if (!it || !reqs || !st)
			return TC_ENOMEM;

		/* Pass 2: the items, in schedule order; own sends get their
		 * logical arrival now, from the clock at the start of the round. */
		int n = 0;
		size_t soff = 0;
		tc_time_t send_done = proc->clock;
		for (int i = x0; i < x1; i++) {
			const struct tc__xfer *x = &s->x[i];
			if (x->src == x->dst)
				continue;
			if (x->src != me && x->dst != me && tc_topo_neighbor_index(t, x->src, x->dst) >= 0)
				continue;
			int hops = tc__xroute(t, x, path, team->p);
			bool split = q->ct && hops > 1 && chunk && x->bytes > chunk;
			size_t pk = split ? (x->bytes + chunk - 1) / chunk : 1;
			size_t plen = split ? chunk : x->bytes;
			if (x->src == me) {
				int nbr = tc_topo_neighbor_index(t, me, path[1]);
				tc_time_t done;
				tc_time_t arr = tc__clock_send(q, proc->clock,
				                               &proc->res_free[tc__res_send(q, nbr)],
				                               x->bytes, hops, &done);
				send_done = tc__max_time(send_done, done);
				proc->stats.hops += (uint64_t)hops;
				proc->stats.busy_ps += tc__link_time(q, x->bytes);
				unsigned char *src = tc__region(io, tmp, x->sbuf, x->soff);
				for (size_t k = 0; k < pk; k++) {
					size_t o = k * plen, l = x->bytes - o < plen ? x->bytes - o : plen;
					it[n] = (struct tc__item){.kind = TC__IT_SEND, .xi = i, .nbr = nbr, .hops = hops,
					                          .chunk = (int)k, .off = o, .len = l,
					                          .buf = src + o, .req = &reqs[n], .arrival = arr};
					n++;
				}
				proc->stats.transfers_sent++;
			}
			for (int h = 1; h < hops; h++) {
				if (path[h] != me)
					continue;
				int pin = tc_topo_neighbor_index(t, me, path[h - 1]);
				int pout = tc_topo_neighbor_index(t, me, path[h + 1]);
				unsigned char *buf = st + soff;
				soff += x->bytes;
				for (size_t k = 0; k < pk; k++) {
					size_t o = k * plen, l = x->bytes - o < plen ? x->bytes - o : plen;
					it[n] = (struct tc__item){.kind = TC__IT_FWD_IN, .xi = i, .nbr = pin,
					                          .chunk = (int)k, .off = o, .len = l,
					                          .buf = buf + o, .req = &reqs[n]};
					it[n + 1] = (struct tc__item){.kind = TC__IT_FWD_OUT, .xi = i,
					                              .nbr = pout, .link = n, .chunk = (int)k,
					                              .hop = h, .hops = hops,
					                              .off = o, .len = l, .buf = buf + o,
					                              .req = &reqs[n + 1]};
					n += 2;
				}
				proc->stats.forwarded++;
			}
			if (x->dst == me) {
				int nbr = tc_topo_neighbor_index(t, me, path[hops - 1]);
				bool staged = x->op != TC__XOP_COPY;
				/* A copy may land in place unless one of our sends or
				 * local transfers of this round touches the region. */
				for (int j = x0; j < x1 && !staged; j++) {
					const struct tc__xfer *y = &s->x[j];
					if (y->src != me)
						continue;
					if (y->sbuf == x->rbuf &&
					    tc__overlap(y->soff, y->bytes, x->roff, x->bytes))
						staged = true; /* read by a send or a local op */
					if (y->dst == me && y->rbuf == x->rbuf &&
					    tc__overlap(y->roff, y->bytes, x->roff, x->bytes))
						staged = true; /* written by a local op */
				}
				unsigned char *buf;
				if (staged) {
					buf = st + soff;
					soff += x->bytes;
				} else {
					buf = tc__region(io, tmp, x->rbuf, x->roff);
				}
				for (size_t k = 0; k < pk; k++) {
					size_t o = k * plen, l = x->bytes - o < plen ? x->bytes - o : plen;
					it[n] = (struct tc__item){.kind = TC__IT_RECV, .xi = i, .nbr = nbr,
					                          .link = staged, .chunk = (int)k, .off = o,
					                          .len = l, .buf = buf + o, .req = &reqs[n]};
					n++;
				}
			}
		}

		/* Post every receive, then the sends that can go. */
		const tc_time_t c_start = proc->clock;
		const uint64_t w_start = proc->ev ? tc__wall(team) : 0;
		for (int i = 0; i < n; i++)
			if (it[i].kind == TC__IT_FWD_IN || it[i].kind == TC__IT_RECV)
				tc__post_recv(proc, it[i].nbr, it[i].buf, it[i].len, io->tag, it[i].req);
		struct tc__round rd = {.it = it, .n = n, .port_blocked = blocked, .deg = proc->deg};
		struct tc__round_ctx ctx = {&rd, io};
		if (n) {
			int err = tc__wait_for(proc, tc__round_done, &ctx);
			if (!err)
				err = rd.err;
			if (err) {
				if (err == TC_ETRUNCATE || err == TC_EMISMATCH) {
					err = TC_EMISMATCH;
					tc_team_abort(team);
				}
				return err;
			}
		}

		const uint64_t w_end = proc->ev ? tc__wall(team) : 0;
		if (proc->ev)
			tc__trace_round(proc, s, it, n, r, w_start, w_end);

		/* Logical clock: own sends, then own receives in order of arrival
		 * (ties by schedule order), then combines in schedule order. */
		proc->clock = send_done;
		for (;;) {
			int best = -1;
			for (int i = 0; i < n; i++)
				if (it[i].kind == TC__IT_RECV && it[i].chunk == 0 && !it[i].posted &&
				    (best < 0 || it[i].req->clock < it[best].req->clock))
					best = i;
			if (best < 0)
				break;
			it[best].posted = 1; /* reused: "clocked" */
			const struct tc__xfer *x = &s->x[it[best].xi];
			tc_time_t fin = tc__clock_recv(q, it[best].req->clock,
			                               &proc->res_free[tc__res_recv(q, it[best].nbr)],
			                               x->bytes);
			proc->clock = tc__max_time(proc->clock, fin);
			proc->stats.transfers_recv++;
			proc->stats.busy_ps += tc__link_time(q, x->bytes);
			if (proc->ev) {
				struct tc_event e = {TC_EV_RECV, r, it[best].xi, x->src, x->src, x->dst,
				                     x->bytes, proc->ncalls, fin - tc__link_time(q, x->bytes),
				                     fin, w_start, w_end};
				tc__trace(proc, &e);
			}
		}

		/* Data: received and local transfers, in schedule order. */
		int k = 0;
		for (int i = x0; i < x1; i++) {
			const struct tc__xfer *x = &s->x[i];
			const void *from = NULL;
			if (x->src == x->dst) {
				if (x->src != me)
					continue;
				from = tc__region(io, tmp, x->sbuf, x->soff);
			} else if (x->dst == me) {
				while (k < n && !(it[k].kind == TC__IT_RECV && it[k].xi == i))
					k++;
				if (k == n || !it[k].link) /* received in place */
					goto charge;
				from = it[k].buf;
			} else {
				continue;
			}
			void *to = tc__region(io, tmp, x->rbuf, x->roff);
			if (x->op == TC__XOP_COPY) {
				if (to != from && x->bytes)
					memmove(to, from, x->bytes);
			} else if (io->combine && x->bytes) {
				uint64_t w0 = proc->ev ? tc__wall(team) : 0;
				io->combine(to, from, x->bytes, x->op == TC__XOP_COMBINE_LEFT, io->combine_ctx);
				if (proc->ev) {
					struct tc_event e = {TC_EV_COMBINE, r, i, x->src, x->src, x->dst, x->bytes,
					                     proc->ncalls, proc->clock,
					                     proc->clock + (tc_time_t)x->bytes * q->tc, w0,
					                     tc__wall(team)};
					tc__trace(proc, &e);
				}
			}
		charge:
			if (x->op != TC__XOP_COPY) {
				proc->clock += (tc_time_t)x->bytes * q->tc;
				proc->stats.busy_ps += (tc_time_t)x->bytes * q->tc;
			}
		}
		proc->stats.rounds++;
		if (proc->ev && n) {
			struct tc_event e = {TC_EV_WAIT, r, -1, -1, -1, -1, 0, proc->ncalls, c_start,
			                     proc->clock, w_start, w_end};
			tc__trace(proc, &e);
		}
		tc__emulate_sync(proc);
	}
	proc->ncalls++;
	return TC_OK;
}
