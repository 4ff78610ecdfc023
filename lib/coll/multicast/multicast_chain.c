/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/multicast/multicast_chain.c - recursive doubling on a
 * dimension-ordered chain (multicast_chain.h).
 */
#include "coll/multicast/multicast_chain.h"

/* The node that [lo, hi] held at h sends to: the first of the upper half
 * when h is in the lower half (ceil(len/2) nodes), else the last of the
 * lower half. */
static int tc__mc_partner(int lo, int hi, int h)
{
	int mid = lo + (hi - lo + 2) / 2; /* first of the upper half */
	return h < mid ? mid : mid - 1;
}

static int tc__mc_round(const struct tc__gen *g, struct tc__sched *s, const int *c, int lo, int hi,
                        int h, int depth)
{
	if (hi <= lo)
		return 0;
	int to = tc__mc_partner(lo, hi, h);
	if (depth == 0) {
		struct tc__xfer x = {.src = c[h],
		                     .dst = c[to],
		                     .sbuf = TC__BUF_OUT,
		                     .rbuf = TC__BUF_OUT,
		                     .op = TC__XOP_COPY,
		                     .info_lo = 0,
		                     .info_n = 1,
		                     .bytes = g->bytes};
		return tc__sched_add(s, &x);
	}
	int mid = lo + (hi - lo + 2) / 2;
	int hl = h < mid ? h : to, hu = h < mid ? to : h;
	int err = tc__mc_round(g, s, c, lo, mid - 1, hl, depth - 1);
	return err ? err : tc__mc_round(g, s, c, mid, hi, hu, depth - 1);
}

int tc__mc_chain_rd(const struct tc__gen *g, struct tc__sched *s, const int *c, int n, int hpos)
{
	int err = tc__sched_initial(s, c[hpos], 0, 1);
	int steps = tc__log2_ceil(n > 0 ? n : 1);
	for (int t = 0; t < steps && !err; t++) {
		err = tc__sched_round(s);
		if (!err)
			err = tc__mc_round(g, s, c, 0, n - 1, hpos, t);
	}
	return err;
}

/* Walks the recursion: the holder of [lo, hi] reached its first send after
 * k transfers of its chain, whose receives crossed H links (CT) and which
 * cost sf link shares (SF).  Updates the maxima of the ranks' final states. */
struct tc__mc_walk {
	const struct tc__gen *g;
	const int *c;
	long steps;
	long ct_path, sf_path;
};

static void tc__mc_walk(struct tc__mc_walk *w, int lo, int hi, int h, long k, long H, long sf)
{
	if (hi <= lo) {
		if (k == w->steps && H > w->ct_path)
			w->ct_path = H;
		if (sf > w->sf_path)
			w->sf_path = sf;
		return;
	}
	int to = tc__mc_partner(lo, hi, h);
	int mid = lo + (hi - lo + 2) / 2;
	long d = tc_topo_distance(w->g->t, w->c[h], w->c[to]);
	/* the holder is free again after t_s + m t_w (one link's share); the
	 * receiver has the data after the whole route */
	long Hs = H, sfs = sf + 1, Hr = H + d, sfr = sf + d;
	if (h < mid) {
		tc__mc_walk(w, lo, mid - 1, h, k + 1, Hs, sfs);
		tc__mc_walk(w, mid, hi, to, k + 1, Hr, sfr);
	} else {
		tc__mc_walk(w, lo, mid - 1, to, k + 1, Hr, sfr);
		tc__mc_walk(w, mid, hi, h, k + 1, Hs, sfs);
	}
}

long tc__mc_chain_path(const struct tc__gen *g, const int *c, int n, int hpos)
{
	if (n < 2)
		return -1;
	struct tc__mc_walk w = {.g = g, .c = c, .steps = tc__log2_ceil(n), .ct_path = 0, .sf_path = 0};
	tc__mc_walk(&w, 0, n - 1, hpos, 0, 0, 0);
	return g->md->switching == TC_SWITCH_CT ? w.ct_path : w.sf_path;
}
