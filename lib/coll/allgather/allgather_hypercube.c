/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allgather/allgather_hypercube.c - all-to-all broadcast on a
 * hypercube by recursive doubling ([Barnat-IB109], "hypercube: the mesh algorithm
 * extended to d dimensions; after each of the d phases the volume of the
 * messages doubles").
 *
 * Step k = 0 .. d-1: node v exchanges with v ^ 2^k everything it holds.
 * Before step k, v holds the 2^k blocks of the ranks that share its bits
 * above k - 1, i.e. the contiguous range [v & ~(2^k - 1), + 2^k) of OUT;
 * after it the range of 2^(k+1) blocks.  Step 0 reads the own block from IN
 * (it is copied IN -> OUT by a local transfer in the same round).
 *
 * Cost: tc_cost_allgather_hypercube() (include/topocoll/cost.h): step i =
 * 1 .. d sends one message of the 2^{i-1} blocks held each way.  Exact under
 * full duplex; under half duplex an exchange shares one link (or one port)
 * both ways and costs twice as much (NAN).
 * Restrictions: p a power of two, on a hypercube or a complete graph (the
 * partners are neighbours); TC_ENOTSUP elsewhere.
 * Memory: none besides the buffers.
 *
 * Trace, p = 4: step 0: 0<->1 b0 / b1, 2<->3 b2 / b3;
 *               step 1: 0<->2 b0..1 / b2..3, 1<->3 b0..1 / b2..3.
 */
#include "allgather_lines.h"

int tc__gen_allgather_hypercube(const struct tc__gen *g, struct tc__sched *s)
{
	enum tc_topo_kind kind = tc_topo_kind(g->t);
	const int p = g->p, d = tc__log2_exact(p);
	if (d < 0 || (kind != TC_TOPO_HYPERCUBE && kind != TC_TOPO_COMPLETE))
		return TC_ENOTSUP;
	const uint64_t m = g->bytes;
	int err = tc__sched_round(s);
	if (!err)
		err = tc__allgather_own(g, s);
	for (int k = 0; k < d && !err; k++) {
		if (k)
			err = tc__sched_round(s);
		const int n = 1 << k;
		for (int v = 0; v < p && !err; v++) {
			const int lo = v & ~(n - 1);
			struct tc__xfer x = {.src = v,
			                     .dst = v ^ n,
			                     .sbuf = k ? TC__BUF_OUT : TC__BUF_IN,
			                     .rbuf = TC__BUF_OUT,
			                     .op = TC__XOP_COPY,
			                     .info_lo = lo,
			                     .info_n = n,
			                     .soff = k ? (uint64_t)lo * m : 0,
			                     .roff = (uint64_t)lo * m,
			                     .bytes = (uint64_t)n * m};
			err = tc__sched_add(s, &x);
		}
	}
	return err;
}

double tc__f_allgather_hypercube(const struct tc__gen *g)
{
	if (g->p > 1 && g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_allgather_hypercube(g->md, g->p, (double)g->bytes);
}
