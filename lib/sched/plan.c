/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/plan.c - building a rank's plan from a schedule (the layout is
 * lib/sched/plan.h, the contract lib/sched/exec.h): its own items per
 * round, the staging and direct-combine decisions, the packets of
 * cut-through transfers and the rounds that may run eagerly.
 */
#include "sched/plan.h"
#include "topo/charge.h"

#include <stdlib.h>
#include <string.h>

static bool tc__overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return an && bn && a < b + bn && b < a + an;
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

/* The charge of path[0..hops]'s first `upto` links (all of them when
 * upto < 0): what the clock charges for them (lib/topo/charge.h). */
static int tc__path_charge(const struct tc_topo *t, const int *path, int hops, int upto)
{
	const int n = upto < 0 ? hops : upto;
	if (!tc__topo_weighted(t))
		return n;
	int c = 0;
	for (int h = 0; h < n; h++)
		c += tc__topo_link_charge(t, path[h], tc_topo_neighbor_index(t, path[h], path[h + 1]));
	return c;
}

/* Whether another transfer of its round touches the regions that
 * transfer i writes (or reads as its other operand) at rank me: one of me's
 * sends or local transfers reads the destination region, a combine of me's
 * reads it as its other operand, or a receive or a local transfer of me's
 * writes the destination or the other operand.  Such
 * a receive must wait for the end of the round (staged).  ids[0..nids):
 * me's transfers of the round (the others cannot touch me's regions). */
static bool tc__clashes(const struct tc__sched *s, const int *ids, int nids, int i, int me)
{
	const struct tc__xfer *x = &s->x[i];
	const int abuf = tc__xfer_abuf(x);
	const bool combine = x->op != TC__XOP_COPY;
	for (int k = 0; k < nids; k++) {
		const int j = ids[k];
		const struct tc__xfer *y = &s->x[j];
		if (j == i)
			continue;
		if (y->src == me && y->sbuf == x->rbuf &&
		    tc__overlap(y->soff, y->bytes, x->roff, x->bytes))
			return true;
		if (y->dst != me)
			continue;
		/* Another receive into the region is the schedule's business
		 * for copies (it orders them), a clash for combines, whose
		 * order decides the result. */
		if (y->rbuf == x->rbuf && tc__overlap(y->roff, y->bytes, x->roff, x->bytes) &&
		    (combine || y->src == me))
			return true;
		if (combine && y->rbuf == abuf && tc__overlap(y->roff, y->bytes, x->roff, x->bytes))
			return true;
		/* A combine of the round reads its other operand at the end. */
		if (y->op != TC__XOP_COPY && tc__xfer_abuf(y) == x->rbuf &&
		    tc__overlap(y->roff, y->bytes, x->roff, x->bytes))
			return true;
	}
	return false;
}

/* Growable arrays of the plan under construction. */
struct tc__pbuild {
	struct tc__pitem *it;
	int n, cap;
	struct tc__papply *ap;
	int na, acap;
};

static int tc__pb_item(struct tc__pbuild *b, const struct tc__pitem *x)
{
	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 16;
		void *p = realloc(b->it, (size_t)cap * sizeof *b->it);
		if (!p)
			return TC_ENOMEM;
		b->it = p;
		b->cap = cap;
	}
	b->it[b->n++] = *x;
	return TC_OK;
}

static int tc__pb_apply(struct tc__pbuild *b, int xi, int item)
{
	if (b->na == b->acap) {
		int cap = b->acap ? 2 * b->acap : 16;
		void *p = realloc(b->ap, (size_t)cap * sizeof *b->ap);
		if (!p)
			return TC_ENOMEM;
		b->ap = p;
		b->acap = cap;
	}
	b->ap[b->na++] = (struct tc__papply){xi, item};
	return TC_OK;
}

/* Adds the items of one transfer's packets. */
static int tc__pb_packets(struct tc__pbuild *b, struct tc__pitem proto, uint64_t bytes,
                          uint64_t plen, uint64_t npk)
{
	int err = TC_OK;
	for (uint64_t k = 0; k < npk && !err; k++) {
		struct tc__pitem x = proto;
		uint64_t o = k * plen;
		x.chunk = (int)k;
		x.boff = proto.boff + o;
		x.len = bytes - o < plen ? bytes - o : plen;
		err = tc__pb_item(b, &x);
	}
	return err;
}

void tc__plan_free(struct tc__plan *pl)
{
	if (!pl)
		return;
	free(pl->it_at);
	free(pl->it);
	free(pl->ap_at);
	free(pl->ap);
	free(pl->simple);
	free(pl);
}

/* The link of its route that item x crosses: 0 for an own send, h - 1 and h
 * for the in- and out-item of a forward at hop h, hops - 1 for a receive. */
static int tc__item_leg(const struct tc__pitem *x)
{
	switch (x->kind) {
	case TC__IT_SEND:
		return 0;
	case TC__IT_FWD_IN:
		return x->hop - 1;
	case TC__IT_FWD_OUT:
		return x->hop;
	default:
		return x->hops - 1;
	}
}

struct tc__leg_key {
	int leg, at;
};

static int tc__leg_cmp(const void *pa, const void *pb)
{
	const struct tc__leg_key *a = pa, *b = pb;
	if (a->leg != b->leg)
		return (a->leg > b->leg) - (a->leg < b->leg);
	return (a->at > b->at) - (a->at < b->at);
}

/*
 * A round's items with routed transfers, ordered by the leg of the route
 * each crosses, then in schedule order: every link carries its messages in
 * the order of its items (lib/sched/exec.c), and both of its ends order
 * them by this same key, so the own sends go first on every link, then
 * the first forwards, and so on.  In schedule order instead, a forward
 * whose data has not arrived holds up every later message on its link,
 * own sends included; the chains this makes across ranks cost a hand-off
 * per link (a fibre's turn on its CPU, or a wake-up) where the leg order
 * costs one per leg.  The logical clock does not depend on the order (each
 * transfer's arrival is computed by its source; receives are ordered by
 * arrival, ties by schedule order).  The items of one transfer's packets
 * stay together and in order; the out-items' in-items and the applies'
 * items are renumbered.
 */
static int tc__order_legs(struct tc__pbuild *b, int it0, int ap0)
{
	const int n = b->n - it0;
	bool routed = false;
	for (int i = 0; i < n && !routed; i++)
		routed = b->it[it0 + i].hops > 1;
	if (!routed)
		return TC_OK;
	struct tc__leg_key *key = malloc((size_t)n * sizeof *key);
	struct tc__pitem *old = malloc((size_t)n * sizeof *old);
	int *pos = malloc((size_t)n * sizeof *pos);
	if (!key || !old || !pos) {
		free(key);
		free(old);
		free(pos);
		return TC_ENOMEM;
	}
	memcpy(old, b->it + it0, (size_t)n * sizeof *old);
	for (int i = 0; i < n; i++)
		key[i] = (struct tc__leg_key){tc__item_leg(&old[i]), i};
	qsort(key, (size_t)n, sizeof *key, tc__leg_cmp);
	for (int k = 0; k < n; k++)
		pos[key[k].at] = k;
	for (int k = 0; k < n; k++) {
		struct tc__pitem x = old[key[k].at];
		if (x.kind == TC__IT_FWD_OUT)
			x.link = pos[x.link];
		b->it[it0 + k] = x;
	}
	for (int a = ap0; a < b->na; a++)
		if (b->ap[a].item >= 0)
			b->ap[a].item = pos[b->ap[a].item];
	free(key);
	free(old);
	free(pos);
	return TC_OK;
}

int tc__plan_build(struct tc_proc *proc, const struct tc__sched *s, const int *mine, int nmine,
                   struct tc__plan **out)
{
	struct tc_team *team = proc->team;
	const struct tc_topo *t = team->topo;
	const struct tc__mps *q = &team->mps;
	const int me = proc->rank;
	if (s->p != team->p)
		return TC_EINVAL;
	struct tc__plan *pl = calloc(1, sizeof *pl);
	int *path = malloc((size_t)team->p * sizeof *path);
	int *own = NULL;
	struct tc__pbuild b = {0};
	int err = TC_ENOMEM;
	if (!pl || !path)
		goto fail;
	if (!mine) { /* no index: this rank's transfers, by a scan of all */
		err = tc__sched_rank_xfers(s, t, me, &own, &nmine);
		if (err)
			goto fail;
		mine = own;
		err = TC_ENOMEM;
	}
	pl->nrounds = s->nrounds;
	pl->it_at = malloc(((size_t)s->nrounds + 1) * sizeof *pl->it_at);
	pl->ap_at = malloc(((size_t)s->nrounds + 1) * sizeof *pl->ap_at);
	pl->simple = calloc((size_t)s->nrounds + 1, 1);
	if (!pl->it_at || !pl->ap_at || !pl->simple)
		goto fail;
	pl->chunk = q->ct && team->model.mu ? team->model.mu : team->packet_bytes;
	err = TC_OK;
	bool tiny = true;

	for (int r = 0, k0 = 0; r < s->nrounds && !err; r++) {
		const int x1 = s->round_at[r + 1];
		int k1 = k0;
		while (k1 < nmine && mine[k1] < x1)
			k1++;
		const int *ids = mine + k0;
		const int nids = k1 - k0;
		k0 = k1;
		pl->it_at[r] = b.n;
		pl->ap_at[r] = b.na;
		uint64_t stage = 0;
		for (int k = 0; k < nids && !err; k++) {
			const int i = ids[k];
			const struct tc__xfer *x = &s->x[i];
			if (x->src == x->dst) {
				if (x->src == me)
					err = tc__pb_apply(&b, i, -1);
				continue;
			}
			/* A one-hop transfer between two other ranks is not ours. */
			if (x->src != me && x->dst != me && tc_topo_neighbor_index(t, x->src, x->dst) >= 0)
				continue;
			int hops = tc__xroute(t, x, path, team->p);
			int charge = tc__path_charge(t, path, hops, -1);
			bool split = q->ct && hops > 1 && pl->chunk && x->bytes > pl->chunk;
			uint64_t plen = split ? pl->chunk : x->bytes;
			/* At most TC__MAX_PACKETS packets per transfer: a tiny mu
			 * on a long transfer takes larger ones (the logical clock
			 * does not depend on them: every packet carries the
			 * arrival of the whole transfer). */
			if (split && (x->bytes + plen - 1) / plen > TC__MAX_PACKETS)
				plen = (x->bytes + TC__MAX_PACKETS - 1) / TC__MAX_PACKETS;
			uint64_t npk = split ? (x->bytes + plen - 1) / plen : 1;
			if (x->src == me) {
				struct tc__pitem p = {.kind = TC__IT_SEND,
				                      .xi = i,
				                      .hops = hops,
				                      .charge = charge,
				                      .nbr = tc_topo_neighbor_index(t, me, path[1]),
				                      .buf = x->sbuf,
				                      .boff = x->soff};
				err = tc__pb_packets(&b, p, x->bytes, plen, npk);
			}
			for (int h = 1; h < hops && !err; h++) {
				if (path[h] != me)
					continue;
				int first = b.n;
				struct tc__pitem in = {.kind = TC__IT_FWD_IN,
				                       .xi = i,
				                       .hop = h,
				                       .hops = hops,
				                       .charge = charge,
				                       .at = tc__path_charge(t, path, hops, h),
				                       .nbr = tc_topo_neighbor_index(t, me, path[h - 1]),
				                       .buf = TC__BUF_STAGE,
				                       .boff = stage};
				struct tc__pitem fo = in;
				fo.kind = TC__IT_FWD_OUT;
				fo.nbr = tc_topo_neighbor_index(t, me, path[h + 1]);
				/* Interleaved in, out, in, out: out-item k's in-item is
				 * the one just before it. */
				for (uint64_t k = 0; k < npk && !err; k++) {
					uint64_t o = k * plen;
					in.chunk = fo.chunk = (int)k;
					in.boff = fo.boff = stage + o;
					in.len = fo.len = x->bytes - o < plen ? x->bytes - o : plen;
					fo.link = first + 2 * (int)k - pl->it_at[r];
					err = tc__pb_item(&b, &in);
					if (!err)
						err = tc__pb_item(&b, &fo);
				}
				stage += x->bytes;
			}
			if (x->dst == me && !err) {
				bool combine = x->op != TC__XOP_COPY;
				bool clash = tc__clashes(s, ids, nids, i, me);
				/* A copy lands in place unless the round touches its
				 * region; a combine of a single-copy message is done
				 * on arrival under the same condition; other
				 * combines are staged. */
				bool direct = combine && !clash && hops == 1 && npk == 1 &&
				              x->bytes >= tc__coll_single_copy_min(team) && x->bytes;
				bool staged = clash || (combine && !direct);
				struct tc__pitem p = {.kind = TC__IT_RECV,
				                      .xi = i,
				                      .hops = hops,
				                      .charge = charge,
				                      .nbr = tc_topo_neighbor_index(t, me, path[hops - 1]),
				                      .staged = staged,
				                      .direct = direct,
				                      .buf = staged ? TC__BUF_STAGE : x->rbuf,
				                      .boff = staged ? stage : x->roff};
				int first = b.n;
				err = tc__pb_packets(&b, p, x->bytes, plen, npk);
				if (!err && (staged || direct))
					err = tc__pb_apply(&b, i, first - pl->it_at[r]);
				if (!err && staged)
					stage += x->bytes;
			}
		}
		if (stage > pl->stage_max)
			pl->stage_max = stage;
		if (!err)
			err = tc__order_legs(&b, pl->it_at[r], pl->ap_at[r]);
		if (!err) {
			const struct tc__pitem *it = b.it + pl->it_at[r];
			const int n = b.n - pl->it_at[r];
			int ns = 0, nr = 0;
			for (int i = 0; i < n; i++) {
				ns += it[i].kind == TC__IT_SEND;
				nr += it[i].kind == TC__IT_RECV;
			}
			pl->simple[r] = tc__round_simple(team, it, n);
			tiny = tiny && pl->simple[r] && ns <= 1 && nr <= 1;
		}
		if (b.n - pl->it_at[r] > pl->max_round_items)
			pl->max_round_items = b.n - pl->it_at[r];
	}
	if (err)
		goto fail;
	pl->it_at[s->nrounds] = b.n;
	pl->ap_at[s->nrounds] = b.na;
	pl->tiny = tiny;
	pl->it = b.it;
	pl->ap = b.ap;
	pl->nitems = b.n;
	free(path);
	free(own);
	*out = pl;
	return TC_OK;
fail:
	free(path);
	free(own);
	free(b.it);
	free(b.ap);
	tc__plan_free(pl);
	return err ? err : TC_ENOMEM;
}
