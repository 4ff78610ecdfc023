/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/gray/gray_direct3.c - Gray-to-binary permutation in two routed
 * steps of thirds ([HJR-TR-20-92], section 3.5, circuit-switched 2-port variant).
 *
 * Each block is cut into three parts of whole elements (tc__block()), 0, 1
 * and 2.  With d(v) = G^-1(v) and v' = v ^ 2^(n-1):
 *   step 0: v sends part 0 straight to d(v) (e-cube routed) and part 1 to
 *     v' (one link, dimension n-1);
 *   step 1: v sends part 2 straight to d(v), and forwards the part 1 it got
 *     from v' to d(v').
 * d(v) has the same bit n-1 as v, so the direct routes never use dimension
 * n-1; they are edge-disjoint ([HJR-TR-20-92]); the forwarded routes, from v' to
 * d(v), are too, and they meet the direct ones on no link under our e-cube
 * routing (lowest dimension first): tests/test_coll_gray.c checks that the
 * contention checker finds no shared link for n = 2 .. 10.  Every node sends
 * and receives at most two messages per step, on distinct links.
 *
 * Cost: the source's 2-port circuit-switched 2 tau + (2K/3) t_c.  Our model
 * has one port or all ports (no 2-port); under all-port and cut-through
 * both messages of a step go at once, and the modelled time is
 *     2 (t_s + (K/3) t_w) + H t_h,
 * with H the longest chain of hops H: a node's step-1 sends start
 * when its step-0 receives are complete (the longest direct route into it,
 * or the one link from v'), then cross up to n links (the forward from v'
 * to d(v) crosses dimension n-1 and the low bits of v ^ d(v) ^ (2^(n-1) -
 * 1)); H <= 2n - 1 (tests/test_coll_gray.c computes H from the routes and
 * asserts the time).  With t_h = 0 and 3 dividing count it is the source's
 * 2 tau + (2K/3) t_c exactly.  With uneven thirds (tc__block: the first
 * count mod 3 parts one element larger) step 0 costs part 0 and step 1
 * part 1: at t_h = 0, 2 t_s + (|part 0| + |part 1|) t_w.  No closed form
 * exists in topocoll/cost.h: formula NAN.
 * Under store-and-forward every link costs a whole t_s + K/3 t_w.
 * Binary-to-Gray: not provided.  With the direct routes v -> G(v) of parts
 * 0 and 2 fixed by our lowest-first e-cube routing, no choice of an
 * intermediate node for part 1 (v -> w in step 0, w -> G(v) in step 1)
 * avoids sharing a link: an exhaustive search over every w for every v
 * finds none for n = 3 and 4 (n = 2 works through v ^ 2).  The source's
 * "easily derived" counterpart needs another routing order.
 * Restrictions: p = 2^n, hypercube, all-port model (registry).  n <= 1: the
 * identity, a local copy.
 * Buffers: parts 0 and 2 go IN -> OUT of d(v), part 1 IN -> TMP of v' ->
 * OUT of d(v); nodes 0 and 1 (d(v) = v) copy all three parts locally in
 * step 0 (no detour through v', which would bring part 1 back).
 * Memory: TMP, K bytes (only part 1's region is used).
 *
 * Trace, hypercube:2 (d = 0 1 3 2): step 0: 0 -> 0, 1 -> 1, 2 -> 3, 3 -> 2
 * (part 0), 0 -> 0, 1 -> 1 (local), 2 -> 0, 3 -> 1 (part 1); step 1: 0 -> 0,
 * 1 -> 1, 2 -> 3, 3 -> 2 (part 2), 0 -> 3, 1 -> 2 (the parts 1 of 2 and 3).
 */
#include "coll/gen.h"

static int add(struct tc__sched *s, int src, int dst, int sbuf, int rbuf, int piece, uint64_t off,
               uint64_t len)
{
	struct tc__xfer x = {.src = src,
	                     .dst = dst,
	                     .sbuf = (uint8_t)sbuf,
	                     .rbuf = (uint8_t)rbuf,
	                     .op = TC__XOP_COPY,
	                     .info_lo = piece,
	                     .info_n = 1,
	                     .soff = off,
	                     .roff = off,
	                     .bytes = len};
	return tc__sched_add(s, &x);
}

int tc__gen_gray_direct3(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p, n = tc__log2_exact(p);
	if (n < 0 || g->coll != TC_COLL_GRAY2BINARY || tc_topo_kind(g->t) != TC_TOPO_HYPERCUBE)
		return TC_ENOTSUP;
	int err = tc__sched_round(s);
	for (int v = 0; v < p && !err; v++)
		err = tc__sched_initial(s, v, 3 * v, 3);
	if (n <= 1) {
		for (int v = 0; v < p && !err; v++)
			for (int j = 0; j < 3 && !err; j++) {
				uint64_t off, len;
				tc__block(g->bytes, g->esize, 3, j, &off, &len);
				err = add(s, v, v, TC__BUF_IN, TC__BUF_OUT, 3 * v + j, off, len);
			}
		return err;
	}
	const int top = 1 << (n - 1);
	uint64_t off[3], len[3];
	for (int j = 0; j < 3; j++)
		tc__block(g->bytes, g->esize, 3, j, &off[j], &len[j]);
	for (int v = 0; v < p && !err; v++) {
		int d = (int)tc_gray_inverse((uint32_t)v);
		err = add(s, v, d, TC__BUF_IN, TC__BUF_OUT, 3 * v, off[0], len[0]);
		/* nodes whose block stays keep part 1 too (no detour) */
		if (!err && d == v)
			err = add(s, v, v, TC__BUF_IN, TC__BUF_OUT, 3 * v + 1, off[1], len[1]);
		else if (!err)
			err = add(s, v, v ^ top, TC__BUF_IN, TC__BUF_TMP, 3 * v + 1, off[1], len[1]);
	}
	if (!err)
		err = tc__sched_round(s);
	for (int v = 0; v < p && !err; v++) {
		int d = (int)tc_gray_inverse((uint32_t)v);
		int w = v ^ top, dw = (int)tc_gray_inverse((uint32_t)w);
		err = add(s, v, d, TC__BUF_IN, TC__BUF_OUT, 3 * v + 2, off[2], len[2]);
		if (!err && dw != w)
			err = add(s, v, dw, TC__BUF_TMP, TC__BUF_OUT, 3 * w + 1, off[1], len[1]);
	}
	s->tmp_bytes = g->bytes;
	return err;
}

double tc__f_gray_direct3(const struct tc__gen *g)
{
	(void)g;
	return NAN; /* no closed form in topocoll/cost.h (see the header) */
}
