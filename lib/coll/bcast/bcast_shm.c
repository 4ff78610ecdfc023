/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/bcast/bcast_shm.c - one-to-all broadcast in one round in which
 * every rank copies the message straight out of the root's buffer (the
 * shared-memory broadcast of OpenMP runtimes; Open MPI's coll/xhc reads the
 * root's buffer the same way).
 *
 * Schedule (prediction, emulated runs): the root sends to root + 1, ...,
 * root + p - 1 (mod p) in one round.  Native run (lib/coll/shm_flat.c): a
 * message of at most TC__SHM_INLINE bytes travels in the root's flag: the
 * root writes it there and returns, every other rank copies it out (the
 * root's next call first waits until every rank is done with the one
 * before last); a larger one is copied out of the root's buffer, and the
 * root waits until every rank has done so.  Among at most 4 ranks, from
 * 16 KiB, the root meanwhile copies the message's tail into each reader's
 * buffer itself, and the readers copy only the head (tc__shm_bcast_cut()
 * in lib/coll/shm.h).
 *
 * Cost (tc_cost_bcast_shm): all ports, one message time t_s + m t_w
 * (+ t_h); one port, the root's p - 1 serialised sends,
 * (p - 2)(t_s + m t_w) + t_s + m t_w (+ t_h).  NAN under half duplex.
 * Restrictions: the complete graph (every pair shares memory).
 * Memory: none besides the buffer and the team's flags.
 *
 * Trace, p = 3, root 1:  1 -> 2, 1 -> 0 (one round).
 */
#include "coll/gen.h"

int tc__gen_bcast_shm(const struct tc__gen *g, struct tc__sched *s)
{
	const int p = g->p, root = g->root;
	int err = tc__sched_round(s);
	if (!err)
		err = tc__sched_initial(s, root, 0, 1);
	for (int k = 1; k < p && !err; k++) {
		struct tc__xfer x = {.src = root,
		                     .dst = (root + k) % p,
		                     .sbuf = TC__BUF_OUT,
		                     .rbuf = TC__BUF_OUT,
		                     .op = TC__XOP_COPY,
		                     .info_lo = 0,
		                     .info_n = 1,
		                     .bytes = g->bytes};
		err = tc__sched_add(s, &x);
	}
	return err;
}

double tc__f_bcast_shm(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_bcast_shm(g->md, g->p, (double)g->bytes);
}
