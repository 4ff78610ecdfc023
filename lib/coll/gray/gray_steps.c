/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/gray/gray_steps.c - the schedule builder of the exchange
 * algorithms of [HJR-TR-20-92] (gray_steps.h).
 */
#include "gray_steps.h"

#include <stdlib.h>

int tc__gray_exchanges(const struct tc__gen *g, struct tc__sched *s, int nparts, int nsteps,
                       tc__gray_step_fn who, int track)
{
	const int p = g->p, n = tc__log2_exact(p);
	const enum tc_topo_kind kind = tc_topo_kind(g->t);
	if (n < 0 || (kind != TC_TOPO_HYPERCUBE && kind != TC_TOPO_COMPLETE))
		return TC_ENOTSUP;
	if (n <= 1)
		nsteps = 0; /* G(0) = 0, G(1) = 1: the identity */
	const int rev = g->coll == TC_COLL_BINARY2GRAY;
	/* last[v nparts + j]: the last emitted step in which v receives part j;
	 * loc: the buffer holding it; org: the piece there (origin nparts +
	 * part), for the checker */
	const size_t np = (size_t)p * (size_t)nparts;
	int *last = malloc(np * sizeof *last), *org = malloc(np * sizeof *org);
	uint8_t *loc = malloc(np);
	if (!last || !org || !loc) {
		free(last);
		free(org);
		free(loc);
		return TC_ENOMEM;
	}
	for (size_t i = 0; i < np; i++) {
		last[i] = -1;
		org[i] = (int)i;
		loc[i] = TC__BUF_IN;
	}
	for (int k = 0; k < nsteps; k++)
		for (int v = 0; v < p; v++) {
			int dim, j = who(n, rev ? nsteps - 1 - k : k, v, &dim);
			if (j >= 0)
				last[(v ^ (1 << dim)) * nparts + j] = k;
		}
	int err = tc__sched_round(s);
	for (int v = 0; v < p && !err && track; v++)
		err = tc__sched_initial(s, v, v * nparts, nparts);
	for (int v = 0; v < p && !err; v++)
		for (int j = 0; j < nparts && !err; j++) {
			if (last[v * nparts + j] >= 0)
				continue;
			uint64_t off, len;
			tc__block(g->bytes, g->esize, nparts, j, &off, &len);
			struct tc__xfer x = {.src = v,
			                     .dst = v,
			                     .sbuf = TC__BUF_IN,
			                     .rbuf = TC__BUF_OUT,
			                     .op = TC__XOP_COPY,
			                     .info_lo = v * nparts + j,
			                     .info_n = track,
			                     .soff = off,
			                     .roff = off,
			                     .bytes = len};
			err = tc__sched_add(s, &x);
		}
	for (int k = 0; k < nsteps && !err; k++) {
		if (k)
			err = tc__sched_round(s);
		for (int v = 0; v < p && !err; v++) {
			int dim, j = who(n, rev ? nsteps - 1 - k : k, v, &dim);
			if (j < 0)
				continue;
			int w = v ^ (1 << dim), a = v * nparts + j, b = w * nparts + j;
			uint64_t off, len;
			tc__block(g->bytes, g->esize, nparts, j, &off, &len);
			struct tc__xfer x = {.src = v,
			                     .dst = w,
			                     .sbuf = loc[a],
			                     .rbuf = last[b] == k ? TC__BUF_OUT : TC__BUF_TMP,
			                     .op = TC__XOP_COPY,
			                     .info_lo = org[a],
			                     .info_n = track,
			                     .soff = off,
			                     .roff = off,
			                     .bytes = len};
			err = tc__sched_add(s, &x);
		}
		/* the exchanges are swaps; receives land at the end of the round */
		for (int v = 0; v < p && !err; v++) {
			int dim, j = who(n, rev ? nsteps - 1 - k : k, v, &dim);
			int w = v ^ (1 << dim);
			if (j < 0 || w < v)
				continue;
			int dimw, jw = who(n, rev ? nsteps - 1 - k : k, w, &dimw);
			if (jw != j || dimw != dim) {
				err = TC_EINVAL; /* not an exchange: a bug of `who` */
				break;
			}
			int a = v * nparts + j, b = w * nparts + j, t = org[a];
			org[a] = org[b];
			org[b] = t;
			loc[a] = last[a] == k ? TC__BUF_OUT : TC__BUF_TMP;
			loc[b] = last[b] == k ? TC__BUF_OUT : TC__BUF_TMP;
		}
	}
	if (nsteps > 0)
		s->tmp_bytes = g->bytes;
	free(org);
	free(last);
	free(loc);
	return err;
}

double tc__gray_formula(const struct tc__gen *g, double (*g2b)(const struct tc_model *, int, double),
                        double (*b2g)(const struct tc_model *, int, double))
{
	const int n = tc__log2_exact(g->p);
	if (tc_topo_kind(g->t) != TC_TOPO_HYPERCUBE || (n > 1 && g->md->duplex != TC_DUPLEX_FULL))
		return NAN;
	return (g->coll == TC_COLL_BINARY2GRAY ? b2g : g2b)(g->md, n, (double)g->bytes);
}
