/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/alltoall/alltoall_lines.c - the phases of the ring, mesh and
 * hypercube all-to-all personalised algorithms (alltoall_lines.h).
 */
#include "coll/alltoall/alltoall_lines.h"

#include <stdlib.h>

/* Local copies of the super-block of digit c between OUT slots and a packed
 * super-block at (buf, off): to_out = 0 packs OUT -> buf, 1 unpacks. */
static int tc__a2a_runs(struct tc__sched *s, const struct tc__gen *g, const struct tc__a2a_phase *ph,
                        int v, int c, int buf, uint64_t off, int to_out)
{
	const uint64_t m = g->bytes, run = (uint64_t)ph->stride * m;
	const int nhi = g->p / (ph->len * ph->stride);
	int err = 0;
	for (int hi = 0; hi < nhi && !err; hi++) {
		uint64_t slot = ((uint64_t)hi * (uint64_t)ph->len + (uint64_t)c) * (uint64_t)ph->stride;
		uint64_t packed = off + (uint64_t)hi * run;
		if (to_out)
			err = tc__emit(s, v, v, buf, packed, TC__BUF_OUT, slot * m, run, TC__XOP_COPY);
		else
			err = tc__emit(s, v, v, TC__BUF_OUT, slot * m, buf, packed, run, TC__XOP_COPY);
	}
	return err;
}

/* Packs, on every node, the super-blocks for distances 1 .. len-1 into the
 * message region at region_off. */
static int tc__a2a_pack(struct tc__sched *s, const struct tc__gen *g,
                        const struct tc__a2a_phase *ph, uint64_t region_off)
{
	const uint64_t sb = (uint64_t)(g->p / ph->len) * g->bytes;
	int err = 0;
	for (int v = 0; v < g->p && !err; v++) {
		int w = v;
		for (int j = 1; j < ph->len && !err; j++) {
			w = ph->succ[w];
			err = tc__a2a_runs(s, g, ph, v, ph->digit[w], TC__BUF_TMP,
			                   region_off + (uint64_t)(j - 1) * sb, 0);
		}
	}
	return err;
}

int tc__a2a_lines(const struct tc__gen *g, struct tc__sched *s, int nph, const struct tc__a2a_phase *ph)
{
	const int p = g->p;
	const uint64_t m = g->bytes;
	uint64_t region = 0; /* bytes of one message region */
	int nlive = 0;
	for (int i = 0; i < nph; i++) {
		if (ph[i].len <= 1)
			continue;
		nlive++;
		uint64_t b = (uint64_t)(ph[i].len - 1) * (uint64_t)(p / ph[i].len) * m;
		if (b > region)
			region = b;
	}
	s->tmp_bytes = 2 * region;
	/* The checker follows the pieces when there is one phase over all p
	 * nodes: piece o p + j is origin o's block for the node j positions
	 * on, and a message carries consecutive distances. */
	const int track = nlive == 1 && p > 1;
	if (track && tc__pieces_p2(g, nph == 1 ? "ring" : "mesh"))
		return TC_ELIMIT;
	/* pred: the predecessor on the phase's lines; orig[v]: the origin of
	 * the message v sends at the current step, pred^(st-1)(v), kept step
	 * by step (walking the chain for each transfer made the ring's p = 4096
	 * schedule O(p^3): minutes). */
	int *pred = malloc(sizeof *pred * (size_t)p * 2);
	if (!pred)
		return TC_ENOMEM;
	int *orig = pred + p;
	int err = tc__sched_round(s);
	for (int v = 0; v < p && !err; v++)
		err = tc__emit(s, v, v, TC__BUF_IN, 0, TC__BUF_OUT, 0, (uint64_t)p * m, TC__XOP_COPY);
	for (int v = 0; v < p && !err && track; v++)
		err = tc__sched_initial(s, v, v * p, p);
	int t = 0; /* global step: sends from region t % 2 */
	for (int i = 0; i < nph && !err; i++) {
		const struct tc__a2a_phase *f = &ph[i];
		const int len = f->len;
		if (len <= 1)
			continue;
		const uint64_t sb = (uint64_t)(p / len) * m;
		for (int v = 0; v < p; v++) {
			pred[f->succ[v]] = v;
			orig[v] = v;
		}
		/* Pack into the region of the first step (end of the last round). */
		err = tc__a2a_pack(s, g, f, (uint64_t)(t % 2) * region);
		for (int st = 1; st < len && !err; st++, t++) {
			const uint64_t from = (uint64_t)(t % 2) * region + (st > 1 ? sb : 0);
			const uint64_t to = (uint64_t)((t + 1) % 2) * region;
			err = tc__sched_round(s);
			for (int v = 0; v < p && !err; v++) {
				const int o = orig[v]; /* the origin of v's message */
				struct tc__xfer x = {.src = v,
				                     .dst = f->succ[v],
				                     .sbuf = TC__BUF_TMP,
				                     .rbuf = TC__BUF_TMP,
				                     .op = TC__XOP_COPY,
				                     .info_lo = track ? o * p + st : 0,
				                     .info_n = track ? len - st : 0,
				                     .soff = from,
				                     .roff = to,
				                     .bytes = (uint64_t)(len - st) * sb};
				err = tc__sched_add(s, &x);
			}
			/* Unpack the super-block addressed to each receiver. */
			for (int v = 0; v < p && !err; v++)
				err = tc__a2a_runs(s, g, f, v, f->digit[pred[orig[v]]], TC__BUF_TMP,
				                   to, 1);
			for (int v = 0; v < p; v++)
				orig[v] = pred[orig[v]];
		}
		/* The next live phase packs at the end of this one's last round
		 * (after the unpacking: local copies apply in schedule order). */
	}
	free(pred);
	return err;
}
