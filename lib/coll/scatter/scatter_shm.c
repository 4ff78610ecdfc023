/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/scatter/scatter_shm.c - one-to-all personalised communication in
 * one round in which every rank copies its block straight out of the root's
 * buffer, and its dual, the gather in which the root copies every rank's
 * block straight out of that rank's buffer (the shared-memory scatter and
 * gather of OpenMP runtimes and of Open MPI's coll/sm; [Barnat-IB109]'s
 * direct one-to-all personalised communication on the completely connected
 * network that shared memory is).
 *
 * Schedule (prediction, emulated runs): the root copies its own block IN ->
 * OUT (a local transfer) and sends block j of IN to rank j's OUT, j = root
 * + 1, ..., root + p - 1 (mod p), in one round (bcast_shm.c's round with a
 * block per destination).  Gather (the dual, TC__ALG_DUAL): every rank's IN
 * to its block of the root's OUT, received in one round.
 * Native run (lib/coll/shm_flat.c):
 *   scatter  the root publishes its IN; every other rank copies block `me`
 *            out of it once the root's flag says it is there, and says so
 *            (a second flag), for which the root waits.  When the p blocks
 *            fit in TC__SHM_INLINE bytes they travel in the root's flag,
 *            when they fit in TC__SHM_AREA bytes (p m <= 1 KiB) in the
 *            root's area, double-buffered like the flag: the root then
 *            returns without waiting (as bcast `shm`'s small messages).
 *   gather   every rank publishes its IN; the root copies each block out
 *            of it once the rank's flag says it is there, then says so, for
 *            which the others wait.  A block of at most TC__SHM_INLINE bytes
 *            travels in its owner's flag, one with p m <= TC__SHM_AREA in
 *            its owner's area: the owner then returns at once, and only the
 *            root waits (for every block).
 * One copy per block; no channel.
 *
 * Cost (tc_cost_scatter_shm, tc_cost_gather_shm): all ports, one message
 * time t_s + m t_w (+ t_h); one port, the root's p - 1 sends (the gather:
 * receives) back to back, (p - 2)(t_s + m t_w) + msg(1, m).  NAN under half
 * duplex.
 * Restrictions: the complete graph (every pair shares memory); any root.
 * Memory: none besides the buffers and the team's flags and areas.
 *
 * Trace, p = 3, root 1 (b_j: block j of the root's IN):
 *   scatter  1 -> 1 b1 (local), 1 -> 2 b2, 1 -> 0 b0   (one round)
 *   gather   1 -> 1 (local), 2 -> 1 into block 2, 0 -> 1 into block 0
 */
#include "coll/gen.h"

int tc__gen_scatter_shm(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p, root = g->root;
	const uint64_t m = g->bytes;
	int err = tc__sched_initial(s, root, 0, p);
	if (!err)
		err = tc__sched_round(s);
	if (!err)
		err = tc__emit(s, root, root, TC__BUF_IN, (uint64_t)root * m, TC__BUF_OUT, 0, m,
		               TC__XOP_COPY);
	for (int k = 1; k < p && !err; k++) {
		const int j = (root + k) % p;
		struct tc__xfer x = {.src = root,
		                     .dst = j,
		                     .sbuf = TC__BUF_IN,
		                     .rbuf = TC__BUF_OUT,
		                     .op = TC__XOP_COPY,
		                     .info_lo = j,
		                     .info_n = 1,
		                     .soff = (uint64_t)j * m,
		                     .bytes = m};
		err = tc__sched_add(s, &x);
	}
	return err;
}

double tc__f_scatter_shm(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_scatter_shm(g->md, g->p, (double)g->bytes);
}

double tc__f_gather_shm(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_gather_shm(g->md, g->p, (double)g->bytes);
}
