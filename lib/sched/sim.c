/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/sim.c - predicting a schedule without threads, and checking it.
 *
 * The logical clock is exactly the one of the runtime: every time below comes
 * from the inline rules of lib/model/clock.h, applied in the order in which
 * the executor applies them.  Every rank starts at clock 0 with its port
 * resources free at 0; the rounds run in order; in round r:
 *
 *   1. sends: every non-local transfer, in schedule order, is posted by its
 *      source at the clock the source had at the start of the round:
 *      tc__clock_send() on the send resource of the first link of its route
 *      gives its arrival and the time the sender is done with it;
 *   2. end of the round, for every rank u: the clock becomes the latest of
 *      its sends' completions; then its receives, in order of arrival (ties:
 *      schedule order), each tc__clock_recv() on the receive resource of the
 *      last link of the route; then every combining transfer into u (local or
 *      not), in schedule order, adds bytes * t_c.  Local copies are free.
 *
 * Since a rank's sends touch only its own clock and resources, and receives
 * depend only on arrivals and the receiver's resources, processing all sends
 * of the round in schedule order, then all receives grouped by receiver,
 * then all combines, is the same as processing rank by rank.  Intermediate
 * ranks of a routed transfer are charged nothing.
 *
 * Checks (see sched.h for the counters):
 *   - 1-port: per round and rank, (sends - 1) when above 1, plus the same
 *     for receives; counted only under the 1-port model.
 *   - Contention: hop k of a transfer with start time s (its arrival minus
 *     T(m, l)) holds its directed link during [a_k, a_k + L(m)), a_k = s + k L
 *     (store-and-forward) or s + k t_h (cut-through).  Overlaps are looked for
 *     across the whole schedule, not only inside a round, because rounds are
 *     per rank and logical time is the common reference; a pair is reported
 *     with the round of its later transfer.  The sweep is described above
 *     tc__sweep_link().
 *   - NODUP / NOHO: the pieces a rank receives, as intervals; see
 *     tc__pieces_check().
 *
 * Cost: O(H log H) time and O(nx + H + p + arcs) memory for H link crossings;
 * no per-piece memory, so piece ids may be as large as int32 allows.
 *
 * Thread-safety: reads the schedule, topology and model only; concurrent
 * simulations of the same schedule are safe.
 */
#include <stdlib.h>
#include <string.h>

#include "model/clock.h"
#include "sched/sched.h"
#include "topo/charge.h"
#include "topocoll/error.h"

/* Most contentions stored in tc__sim.contention (all are counted). */
#define TC__SIM_MAX_CONTENTION 64

/* One link crossing: transfer xfer holds directed link `link` during [a, b). */
struct tc__hop {
	int32_t link, xfer;
	tc_time_t a, b;
};

/* One receive of a round, sorted by (dst, arrival, schedule index). */
struct tc__rcv {
	tc_time_t arr;
	int32_t dst, idx;
};

/* Pieces [lo, hi) received by rank dst. */
struct tc__pcs {
	int32_t dst;
	int64_t lo, hi;
};

/* A transfer still holding a link during the sweep: busy until b. */
struct tc__busy {
	tc_time_t b;
	int32_t xfer;
};

/* Everything a simulation needs besides its output; freed by tc__ctx_free. */
struct tc__simctx {
	const struct tc__sched *s;
	const struct tc_topo *t;
	struct tc__mps q;
	int p;
	long narcs;
	long *arc_off;   /* p + 1: first arc id of each node (CSR order) */
	long *res_off;   /* p + 1: first resource of each node */
	tc_time_t *res;  /* res_off[p] port resources, free-at times */
	tc_time_t *arr;  /* per transfer: arrival */
	tc_time_t *done; /* per transfer: sender done */
	int32_t *last;   /* per transfer: the node before dst on the route */
	int *route;      /* route buffer, rcap nodes */
	int rcap;
	struct tc__rcv *rcv; /* receives of one round */
	int *nsend, *nrecv;  /* per rank counters for the 1-port check */
	struct tc__hop *hops;
	size_t nhops, hcap;
	struct tc__pcs *pcs;
	size_t npcs;
};

/* Frees the simulation's temporaries (not its output). */
static void tc__ctx_free(struct tc__simctx *c)
{
	free(c->arc_off);
	free(c->res_off);
	free(c->res);
	free(c->arr);
	free(c->done);
	free(c->last);
	free(c->route);
	free(c->rcv);
	free(c->nsend);
	free(c->nrecv);
	free(c->hops);
	free(c->pcs);
}

/* Frees what a simulation owns and zeroes it; NULL is a no-op. */
void tc__sim_free(struct tc__sim *sim)
{
	if (sim == NULL)
		return;
	free(sim->clock);
	free(sim->contention);
	free(sim->arrival);
	memset(sim, 0, sizeof *sim);
}

/* Checks the schedule against the topology; returns 0 or TC_EINVAL (or the
 * schedule's sticky build error).  Sets *maxround to the largest round size
 * and *ntracked to the number of non-local transfers carrying pieces. */
static int tc__validate(const struct tc__sched *s, const struct tc_topo *t, int *maxround, size_t *ntracked)
{
	if (s->err)
		return s->err;
	if (s->p < 1 || s->p != tc_topo_nodes(t) || s->nrounds < 0 || s->nx < 0)
		return TC_EINVAL;
	if (s->nrounds == 0 && s->nx != 0)
		return TC_EINVAL;
	if (s->nrounds > 0) {
		if (s->round_at == NULL || s->round_at[0] != 0 || s->round_at[s->nrounds] != s->nx)
			return TC_EINVAL;
		for (int r = 0; r < s->nrounds; r++) {
			if (s->round_at[r + 1] < s->round_at[r])
				return TC_EINVAL;
			int n = s->round_at[r + 1] - s->round_at[r];
			if (n > *maxround)
				*maxround = n;
		}
	}
	if (s->nx > 0 && s->x == NULL)
		return TC_EINVAL;
	for (int i = 0; i < s->nx; i++) {
		const struct tc__xfer *x = &s->x[i];
		if (x->src < 0 || x->src >= s->p || x->dst < 0 || x->dst >= s->p ||
		    x->sbuf > TC__BUF_TMP || x->rbuf > TC__BUF_TMP ||
		    x->op > TC__XOP_COMBINE_RIGHT || x->info_lo < 0 || x->info_n < 0)
			return TC_EINVAL;
		if (x->src != x->dst && x->info_n > 0)
			(*ntracked)++;
	}
	if ((s->init_lo == NULL) != (s->init_n == NULL))
		return TC_EINVAL;
	if (s->init_lo != NULL)
		for (int r = 0; r < s->p; r++)
			if (s->init_lo[r] < 0 || s->init_n[r] < 0)
				return TC_EINVAL;
	return 0;
}

/* Allocates the per-node tables: arc and resource offsets, resources, and
 * the route buffer (diameter + 1 nodes). */
static int tc__ctx_nodes(struct tc__simctx *c)
{
	int p = c->p;
	c->arc_off = malloc(((size_t)p + 1) * sizeof *c->arc_off);
	c->res_off = malloc(((size_t)p + 1) * sizeof *c->res_off);
	if (c->arc_off == NULL || c->res_off == NULL)
		return TC_ENOMEM;
	c->arc_off[0] = c->res_off[0] = 0;
	for (int u = 0; u < p; u++) {
		const int *nb;
		int deg = tc_topo_neighbors(c->t, u, &nb);
		if (deg < 0)
			return deg;
		c->arc_off[u + 1] = c->arc_off[u] + deg;
		c->res_off[u + 1] = c->res_off[u] + tc__nres(&c->q, deg);
	}
	c->narcs = c->arc_off[p];
	c->res = calloc((size_t)c->res_off[p] + 1, sizeof *c->res);
	c->rcap = tc_topo_props(c->t)->diameter + 1;
	if (c->rcap < 2)
		c->rcap = 2;
	c->route = malloc((size_t)c->rcap * sizeof *c->route);
	if (c->res == NULL || c->route == NULL)
		return TC_ENOMEM;
	return 0;
}

/* Link crossings a simulation records at most (about 200 MiB). */
#define TC__SIM_MAX_HOPS ((size_t)1 << 23)

/* Appends one link crossing; zero-length occupations are dropped since they
 * never overlap anything. */
static int tc__hop_push(struct tc__simctx *c, long link, int xfer, tc_time_t a, tc_time_t b)
{
	if (a >= b)
		return 0;
	if (c->nhops >= TC__SIM_MAX_HOPS)
		return TC_EOVERFLOW; /* too large to simulate (e.g. linear on ring:65536) */
	if (c->nhops == c->hcap) {
		size_t ncap = c->hcap ? 2 * c->hcap : 1024;
		struct tc__hop *n = realloc(c->hops, ncap * sizeof *n);
		if (n == NULL)
			return TC_ENOMEM;
		c->hops = n;
		c->hcap = ncap;
	}
	c->hops[c->nhops++] = (struct tc__hop){.link = (int32_t)link, .xfer = xfer, .a = a, .b = b};
	return 0;
}

/* Step 1 of a round for transfer i (non-local): routes it, posts the send
 * on the source's port, records arrival, sender completion, the last hop's
 * origin and the link occupations.  The transfer is charged as its route's
 * links' weights (lib/topo/charge.h): its hop count on a team's own
 * topology, the parent's hops on a sub-team's general subset; a link of
 * weight w is held from the time the route's earlier links let the data
 * reach it, and link crossings count weights. */
static int tc__sim_send(struct tc__simctx *c, struct tc__sim *out, int i)
{
	const tc_time_t *clock = out->clock;
	const struct tc__xfer *x = &c->s->x[i];
	int l = tc_topo_route(c->t, x->src, x->dst, c->route, c->rcap);
	if (l < 0)
		return l;
	if (l < 1)
		return TC_EINVAL;
	int nbr = tc_topo_neighbor_index(c->t, x->src, c->route[1]);
	if (nbr < 0)
		return TC_EINVAL;
	const int weighted = tc__topo_weighted(c->t);
	int w = l;
	if (weighted) {
		w = 0;
		for (int k = 0; k < l; k++) {
			int j = tc_topo_neighbor_index(c->t, c->route[k], c->route[k + 1]);
			if (j < 0)
				return TC_EINVAL;
			w += tc__topo_link_charge(c->t, c->route[k], j);
		}
	}
	tc_time_t *rf = &c->res[c->res_off[x->src] + tc__res_send(&c->q, nbr)];
	c->arr[i] = tc__clock_send(&c->q, clock[x->src], rf, x->bytes, w, &c->done[i]);
	c->last[i] = c->route[l - 1];
	out->hop_messages += w;

	tc_time_t start = c->arr[i] - tc__xfer_time(&c->q, x->bytes, w);
	tc_time_t L = tc__link_time(&c->q, x->bytes);
	tc_time_t step = c->q.ct ? c->q.th : L;
	int before = 0; /* weight of the route's links before hop k */
	for (int k = 0; k < l; k++) {
		int j = tc_topo_neighbor_index(c->t, c->route[k], c->route[k + 1]);
		if (j < 0)
			return TC_EINVAL;
		/* Saturating: times at TC__TIME_MAX (absurd models) stay there. */
		tc_time_t a = tc__sat_add(start, tc__sat_mul((uint64_t)before, step));
		int rc = tc__hop_push(c, c->arc_off[c->route[k]] + j, i, a, tc__sat_add(a, L));
		if (rc)
			return rc;
		before += weighted ? tc__topo_link_charge(c->t, c->route[k], j) : 1;
	}
	return 0;
}

/* qsort order of a round's receives: by receiver, arrival, schedule index. */
static int tc__rcv_cmp(const void *pa, const void *pb)
{
	const struct tc__rcv *a = pa, *b = pb;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	if (a->arr != b->arr)
		return a->arr < b->arr ? -1 : 1;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Runs round r: sends, end-of-round completions, receives, combines, the
 * 1-port count and the pieces received. */
static int tc__run_round(struct tc__simctx *c, struct tc__sim *out, int r)
{
	const struct tc__sched *s = c->s;
	tc_time_t *clock = out->clock;
	int lo = s->round_at[r], hi = s->round_at[r + 1], nr = 0;

	for (int i = lo; i < hi; i++) {
		const struct tc__xfer *x = &s->x[i];
		if (x->src == x->dst)
			continue;
		int rc = tc__sim_send(c, out, i);
		if (rc)
			return rc;
		c->rcv[nr++] = (struct tc__rcv){.arr = c->arr[i], .dst = x->dst, .idx = i};
		c->nsend[x->src]++;
		c->nrecv[x->dst]++;
		out->messages++;
		out->bytes += x->bytes;
	}
	/* End of round: sender completions, then receives by arrival. */
	for (int k = 0; k < nr; k++) {
		const struct tc__xfer *x = &s->x[c->rcv[k].idx];
		clock[x->src] = tc__max_time(clock[x->src], c->done[c->rcv[k].idx]);
	}
	qsort(c->rcv, (size_t)nr, sizeof *c->rcv, tc__rcv_cmp);
	for (int k = 0; k < nr; k++) {
		int i = c->rcv[k].idx;
		const struct tc__xfer *x = &s->x[i];
		int nbr = tc_topo_neighbor_index(c->t, x->dst, c->last[i]);
		if (nbr < 0)
			return TC_EINVAL;
		tc_time_t *rf = &c->res[c->res_off[x->dst] + tc__res_recv(&c->q, nbr)];
		tc_time_t fin = tc__clock_recv(&c->q, c->arr[i], rf, x->bytes);
		clock[x->dst] = tc__max_time(clock[x->dst], fin);
		if (x->info_n > 0)
			c->pcs[c->npcs++] = (struct tc__pcs){.dst = x->dst,
			                                     .lo = x->info_lo,
			                                     .hi = (int64_t)x->info_lo + x->info_n};
	}
	for (int i = lo; i < hi; i++) {
		const struct tc__xfer *x = &s->x[i];
		if (x->op != TC__XOP_COPY)
			clock[x->dst] = tc__sat_add(clock[x->dst], tc__combine_time(&c->q, x->bytes));
	}
	/* 1-port: count each rank once, then reset its counters. */
	for (int k = 0; k < nr; k++) {
		const struct tc__xfer *x = &s->x[c->rcv[k].idx];
		if (c->nsend[x->src] > 1)
			out->oneport_violations += c->nsend[x->src] - 1;
		if (c->nrecv[x->dst] > 1)
			out->oneport_violations += c->nrecv[x->dst] - 1;
		c->nsend[x->src] = c->nrecv[x->dst] = 0;
	}
	return 0;
}

/* qsort order of one link's occupations: by start, then transfer index. */
static int tc__hop_cmp(const void *pa, const void *pb)
{
	const struct tc__hop *a = pa, *b = pb;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return (a->xfer > b->xfer) - (a->xfer < b->xfer);
}

/* The round of transfer i: the last round starting at or before i. */
static int tc__round_of(const struct tc__sched *s, int i)
{
	int lo = 0, hi = s->nrounds - 1;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (s->round_at[mid] <= i)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Min-heap of busy transfers keyed by b: push v. */
static void tc__heap_push(struct tc__busy *h, int *n, struct tc__busy v)
{
	int i = (*n)++;
	while (i > 0 && h[(i - 1) / 2].b > v.b) {
		h[i] = h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h[i] = v;
}

/* Min-heap: remove the root (the smallest b). */
static void tc__heap_pop(struct tc__busy *h, int *n)
{
	struct tc__busy v = h[--(*n)];
	int i = 0;
	for (;;) {
		int k = 2 * i + 1;
		if (k >= *n)
			break;
		if (k + 1 < *n && h[k + 1].b < h[k].b)
			k++;
		if (h[k].b >= v.b)
			break;
		h[i] = h[k];
		i = k;
	}
	if (*n > 0)
		h[i] = v;
}

/*
 * The contention sweep over the occupations h[0..n) of one directed link
 * from -> to, already sorted by start a (ties by transfer index).
 *
 * Walking the occupations in that order, every earlier one started at or
 * before the current one R = [a, b) (a < b: zero-length ones were dropped),
 * so an earlier [a', b') overlaps R exactly when b' > a (a' <= a < b gives
 * the other half of the condition).  A min-heap keyed by b holds the earlier
 * occupations: popping those with b' <= a leaves exactly the ones overlapping
 * R, and those popped can never overlap a later occupation either, since
 * later ones start at or after a.  So each occupation costs O(log n) plus
 * the pairs it reports, and reports stop after the first 64 (the count does
 * not need to look at the pairs: it is the heap's size).
 */
static void tc__sweep_link(const struct tc__sched *s, struct tc__sim *out, const struct tc__hop *h,
                           int n, struct tc__busy *heap, int from, int to)
{
	int nh = 0;
	for (int k = 0; k < n; k++) {
		while (nh > 0 && heap[0].b <= h[k].a)
			tc__heap_pop(heap, &nh);
		out->contention_total += nh;
		for (int j = 0; j < nh && out->ncontention < TC__SIM_MAX_CONTENTION; j++) {
			int xa = heap[j].xfer < h[k].xfer ? heap[j].xfer : h[k].xfer;
			int xb = heap[j].xfer < h[k].xfer ? h[k].xfer : heap[j].xfer;
			out->contention[out->ncontention++] =
			        (struct tc__contention){.round = tc__round_of(s, xb),
			                                .from = from,
			                                .to = to,
			                                .xa = xa,
			                                .xb = xb};
		}
		tc__heap_push(heap, &nh, (struct tc__busy){.b = h[k].b, .xfer = h[k].xfer});
	}
}

/* qsort order of the stored contentions: round, xa, xb, link. */
static int tc__cont_cmp(const void *pa, const void *pb)
{
	const struct tc__contention *a = pa, *b = pb;
	if (a->round != b->round)
		return a->round < b->round ? -1 : 1;
	if (a->xa != b->xa)
		return a->xa < b->xa ? -1 : 1;
	if (a->xb != b->xb)
		return a->xb < b->xb ? -1 : 1;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return (a->to > b->to) - (a->to < b->to);
}

/* Groups the occupations by link (a counting sort on the arc id), sorts each
 * link's occupations by start and sweeps it; finally orders the stored
 * contentions by (round, xa, xb). */
static int tc__contention(struct tc__simctx *c, struct tc__sim *out)
{
	int rc = TC_ENOMEM;
	size_t n = c->nhops;
	size_t *cnt = calloc((size_t)c->narcs + 1, sizeof *cnt);
	struct tc__hop *by = malloc((n ? n : 1) * sizeof *by);
	struct tc__busy *heap = NULL;
	if (cnt == NULL || by == NULL)
		goto out;
	for (size_t i = 0; i < n; i++)
		cnt[c->hops[i].link + 1]++;
	size_t maxb = 0;
	for (long a = 0; a < c->narcs; a++) {
		if (cnt[a + 1] > maxb)
			maxb = cnt[a + 1];
		cnt[a + 1] += cnt[a];
	}
	for (size_t i = 0; i < n; i++)
		by[cnt[c->hops[i].link]++] = c->hops[i];
	/* cnt[a] is now the end of arc a's bucket, i.e. the start of arc a + 1's. */
	if (maxb > 1) {
		heap = malloc(maxb * sizeof *heap);
		out->contention = malloc(TC__SIM_MAX_CONTENTION * sizeof *out->contention);
		if (heap == NULL || out->contention == NULL)
			goto out;
		size_t beg = 0;
		for (int u = 0; u < c->p; u++) {
			const int *nb;
			int deg = tc_topo_neighbors(c->t, u, &nb);
			for (int j = 0; j < deg; j++) {
				size_t end = cnt[c->arc_off[u] + j];
				if (end - beg > 1) {
					qsort(by + beg, end - beg, sizeof *by, tc__hop_cmp);
					tc__sweep_link(c->s, out, by + beg, (int)(end - beg), heap,
					               u, nb[j]);
				}
				beg = end;
			}
		}
		qsort(out->contention, (size_t)out->ncontention, sizeof *out->contention, tc__cont_cmp);
	}
	rc = 0;
out:
	free(cnt);
	free(by);
	free(heap);
	return rc;
}

/* qsort order of received piece ranges: by rank, then lo, then hi. */
static int tc__pcs_cmp(const void *pa, const void *pb)
{
	const struct tc__pcs *a = pa, *b = pb;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return (a->hi > b->hi) - (a->hi < b->hi);
}

/* Size of the intersection of [a0, a1) and [b0, b1). */
static int64_t tc__overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
	return hi > lo ? hi - lo : 0;
}

/*
 * NODUP / NOHO from the received intervals.  The piece-by-piece rule (a
 * piece of the initial range: NOHO; else already received: NODUP; then mark)
 * does not depend on the order of receptions: for rank u with initial range
 * I, received intervals R_1..R_k and their union U (& is intersection,
 * \ difference),
 *   noho  = sum |R_j & I|,
 *   nodup = sum |R_j \ I| - |U \ I| = (sum |R_j| - noho) - (|U| - |U & I|).
 * Sorting the intervals by (rank, lo) and merging them gives U per rank.
 */
static void tc__pieces_check(struct tc__simctx *c, struct tc__sim *out)
{
	const struct tc__sched *s = c->s;
	qsort(c->pcs, c->npcs, sizeof *c->pcs, tc__pcs_cmp);
	for (size_t k = 0; k < c->npcs;) {
		int u = c->pcs[k].dst;
		int64_t i0 = 0, i1 = 0;
		if (s->init_lo != NULL) {
			i0 = s->init_lo[u];
			i1 = i0 + s->init_n[u];
		}
		int64_t sum = 0, noho = 0, uni = 0, uni_init = 0;
		int64_t m0 = c->pcs[k].lo, m1 = c->pcs[k].lo; /* current merged block */
		for (; k < c->npcs && c->pcs[k].dst == u; k++) {
			int64_t lo = c->pcs[k].lo, hi = c->pcs[k].hi;
			sum += hi - lo;
			noho += tc__overlap(lo, hi, i0, i1);
			if (lo > m1) {
				uni += m1 - m0;
				uni_init += tc__overlap(m0, m1, i0, i1);
				m0 = lo;
				m1 = hi;
			} else if (hi > m1) {
				m1 = hi;
			}
		}
		uni += m1 - m0;
		uni_init += tc__overlap(m0, m1, i0, i1);
		out->noho_violations += (long)noho;
		out->nodup_violations += (long)((sum - noho) - (uni - uni_init));
	}
}

/* Simulates s on t under md (see sched.h and the head of this file).
 * Returns 0, TC_EINVAL, TC_ENOMEM, or an error of the topology queries;
 * *out is zeroed on error (and safe to tc__sim_free()). */
int tc__sched_simulate(const struct tc__sched *s, const struct tc_topo *t,
                       const struct tc_model *md, struct tc__sim *out)
{
	if (out == NULL)
		return TC_EINVAL;
	memset(out, 0, sizeof *out);
	if (s == NULL || t == NULL || md == NULL)
		return TC_EINVAL;
	int maxround = 0;
	size_t ntracked = 0;
	int rc = tc__validate(s, t, &maxround, &ntracked);
	if (rc)
		return rc;

	struct tc__simctx c = {.s = s, .t = t, .p = s->p};
	tc__mps_from_model(&c.q, md);
	rc = tc__ctx_nodes(&c);
	if (rc)
		goto fail;
	rc = TC_ENOMEM;
	size_t nx = s->nx > 0 ? (size_t)s->nx : 1;
	c.arr = calloc(nx, sizeof *c.arr);
	c.done = malloc(nx * sizeof *c.done);
	c.last = malloc(nx * sizeof *c.last);
	c.rcv = malloc((maxround > 0 ? (size_t)maxround : 1) * sizeof *c.rcv);
	c.nsend = calloc((size_t)c.p, sizeof *c.nsend);
	c.nrecv = calloc((size_t)c.p, sizeof *c.nrecv);
	c.pcs = malloc((ntracked ? ntracked : 1) * sizeof *c.pcs);
	out->clock = calloc((size_t)c.p, sizeof *out->clock);
	if (c.arr == NULL || c.done == NULL || c.last == NULL || c.rcv == NULL || c.nsend == NULL ||
	    c.nrecv == NULL || c.pcs == NULL || out->clock == NULL)
		goto fail;

	out->rounds = s->nrounds;
	for (int r = 0; r < s->nrounds; r++) {
		rc = tc__run_round(&c, out, r);
		if (rc)
			goto fail;
	}
	if (md->ports != TC_PORTS_ONE)
		out->oneport_violations = 0;
	rc = tc__contention(&c, out);
	if (rc)
		goto fail;
	tc__pieces_check(&c, out);
	for (int u = 0; u < c.p; u++)
		out->makespan = tc__max_time(out->makespan, out->clock[u]);
	out->arrival = c.arr; /* handed over: per transfer arrival, 0 for local ones */
	c.arr = NULL;
	tc__ctx_free(&c);
	return 0;
fail:
	tc__ctx_free(&c);
	tc__sim_free(out);
	return rc;
}
