/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/gen.c - what the algorithms' generators share (gen.h): a
 * transfer added to a schedule, a message cut into blocks, a multicast's
 * canonical member set, the closed form of a direct round, and the limit of
 * the schedules that number p^2 pieces.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "coll/coll_internal.h"
#include "coll/gen.h"

int tc__emit(struct tc__sched *s, int src, int dst, int sbuf, uint64_t soff, int rbuf,
             uint64_t roff, uint64_t bytes, int op)
{
	struct tc__xfer x = {.src = src,
	                     .dst = dst,
	                     .sbuf = (uint8_t)sbuf,
	                     .rbuf = (uint8_t)rbuf,
	                     .op = (uint8_t)op,
	                     .soff = soff,
	                     .roff = roff,
	                     .bytes = bytes};
	return tc__sched_add(s, &x);
}

int tc__emit_from(struct tc__sched *s, int src, int dst, int sbuf, uint64_t soff, int rbuf,
                  uint64_t roff, uint64_t bytes, int op, int abuf)
{
	struct tc__xfer x = {.src = src,
	                     .dst = dst,
	                     .sbuf = (uint8_t)sbuf,
	                     .rbuf = (uint8_t)rbuf,
	                     .op = (uint8_t)op,
	                     .abuf = (uint8_t)(abuf == rbuf ? 0 : abuf + 1),
	                     .soff = soff,
	                     .roff = roff,
	                     .bytes = bytes};
	return tc__sched_add(s, &x);
}

int tc__members_canon(int p, int root, const int *members, int n, int *out, int *nout)
{
	if (n < 0 || (n > 0 && !members))
		return TC_EINVAL;
	for (int i = 0; i < n; i++)
		if (members[i] < 0 || members[i] >= p)
			return TC_ERANK;
	if (n) { /* out may be NULL then (UBSan: qsort's argument is nonnull) */
		memcpy(out, members, (size_t)n * sizeof *out);
		qsort(out, (size_t)n, sizeof *out, tc__int_cmp);
	}
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (i && out[i] == out[i - 1])
			return TC_EINVAL;
		if (out[i] != root)
			out[k++] = out[i];
	}
	*nout = k;
	return TC_OK;
}

double tc__direct_round_ns(const struct tc__gen *g)
{
	if (g->p == 1)
		return 0;
	if (tc_topo_props(g->t)->diameter > 1 || g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_direct_round(g->md, g->p, (double)g->bytes);
}

void tc__block(uint64_t bytes, uint64_t esize, int nblk, int k, uint64_t *off, uint64_t *len)
{
	uint64_t n = bytes / esize, q = n / (uint64_t)nblk, r = n % (uint64_t)nblk;
	uint64_t uk = (uint64_t)k;
	uint64_t first = uk * q + (uk < r ? uk : r);
	*off = first * esize;
	*len = (q + (uk < r ? 1 : 0)) * esize;
}

int tc__pieces_p2(const struct tc__gen *g, const char *alg)
{
	const int64_t p = g->p, lim = 46340; /* the largest p with p^2 <= INT32_MAX */
	if (p <= lim)
		return TC_OK;
	tc__set_detail("%s %s on %lld ranks: its schedule tracks p^2 = %lld blocks, over the "
	               "limit of 2^31 - 1 (at most %lld ranks): choose another algorithm "
	               "(--alg) or fewer ranks",
	               tc_coll_name(g->coll), alg, (long long)p, (long long)(p * p), (long long)lim);
	return TC_ELIMIT;
}
