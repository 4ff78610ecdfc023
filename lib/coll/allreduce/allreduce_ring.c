/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allreduce/allreduce_ring.c - allreduce around a ring:
 * reduce-scatter, then allgather (DESIGN.md catalogue; [Barnat-IB109]'s ring
 * all-to-all reduction followed by its ring all-to-all broadcast, on blocks
 * of m/p bytes).
 *
 * The buffer is cut into p blocks of whole elements (tc__block: the first
 * count mod p blocks have one element more).  Position i of the ring sends
 * to position i+1 (mod p).
 *   reduce-scatter, rounds s = 0 .. p-2: position i sends block (i - s) mod p,
 *     which position i+1 combines into its own copy of that block; block b
 *     thus starts at position b and collects one contribution per hop, and
 *     after p-1 rounds position i holds block (i + 1) mod p fully reduced;
 *   allgather, rounds s = 0 .. p-2: position i sends block (i + 1 - s) mod p
 *     (the one it finished, then the ones it received), the next position
 *     copies it.
 * Every block is reduced once, on one chain, and then only copied, so every
 * rank holds bit-identical results.  For each pair the lower rank's data is
 * the left operand (gen.h); the order of a block is a rotation of the rank
 * order, so the operator must be commutative (not TC__ALG_ORDERED).
 *
 * Cost: tc_cost_allreduce_ring() (2(p-1) neighbour messages of m/p bytes
 * and p-1 combines of them) when p divides the element count.
 * Otherwise every round lasts as long as its largest block B = ceil(count/p)
 * elements: a largest block travels 2(p-1) hops back to back, and no round
 * can take longer, so the makespan is exactly tc_cost_allreduce_ring() with
 * m = p B; tc__f_allreduce_ring() returns that.  Counts below p leave empty
 * blocks, which still cost a start-up each.  Half duplex (one port shared by
 * both directions, or p = 2 with its single link) makes a round cost more:
 * the formula is then NAN.
 * Restrictions: a Hamiltonian ring (tc__hring_node(), lib/topo/embed.h):
 * ring; complete graph (ring order 0, 1, ..., p-1); hypercube through the
 * binary-reflected Gray code (position i is node tc_gray(i), so consecutive
 * positions are neighbours); 2-D torus, and 2-D mesh with an even side and
 * none of 1, through the comb of embed.h.  TC_ENOTSUP elsewhere.
 * Buffers (TC__ALG_READS_IN): position i combines block b for the first and
 * only time in reduce-scatter round (i - 1 - b) mod p, from its own
 * contribution in IN and the received partial result, into OUT; the block
 * it sends in that round is another one.  No round writes what its sends
 * read, so a large block is combined straight out of the sender's buffer.
 * Memory: none besides the buffers.
 *
 * Trace, p = 3, 4 elements (blocks b0 = 2 elements, b1 = b2 = 1):
 *   reduce-scatter 0:  0 -> 1 b0,  1 -> 2 b1,  2 -> 0 b2
 *   reduce-scatter 1:  0 -> 1 b2,  1 -> 2 b0,  2 -> 0 b1
 *                      (0 holds b1, 1 holds b2, 2 holds b0, all reduced)
 *   allgather 0:       0 -> 1 b1,  1 -> 2 b2,  2 -> 0 b0
 *   allgather 1:       0 -> 1 b0,  1 -> 2 b1,  2 -> 0 b2
 */
#include "coll/gen.h"

int tc__gen_allreduce_ring(const struct tc__gen *g, struct tc__sched *s)
{
	if (!tc__hring_embeds(g->t))
		return TC_ENOTSUP;
	int p = g->p;
	int err = 0;
	for (int phase = 0; phase < 2 && !err; phase++) {
		for (int st = 0; st < p - 1 && !err; st++) {
			err = tc__sched_round(s);
			for (int i = 0; i < p && !err; i++) {
				int src = tc__hring_node(g->t, i);
				int dst = tc__hring_node(g->t, i + 1);
				int blk = phase == 0 ? (i - st + p) % p : (i + 1 - st + p) % p;
				uint64_t off, len;
				tc__block(g->bytes, g->esize, p, blk, &off, &len);
				int op = phase == 1  ? TC__XOP_COPY
				         : src < dst ? TC__XOP_COMBINE_LEFT
				                     : TC__XOP_COMBINE_RIGHT;
				/* Reduce-scatter: a block is first sent from IN, and
				 * its receiver has not touched it yet (its own
				 * contribution is still in IN). */
				int sb = phase == 0 && st == 0 ? TC__BUF_IN : TC__BUF_OUT;
				int ab = phase == 0 ? TC__BUF_IN : TC__BUF_OUT;
				err = tc__emit_from(s, src, dst, sb, off, TC__BUF_OUT, off, len, op, ab);
			}
		}
	}
	return err;
}

/* Where tc_cost_allreduce_ring() is the modelled time (the header): a
 * Hamiltonian ring, full duplex or all ports on 3 or more ranks. */
static int tc__ar_ring_exact(const struct tc__gen *g)
{
	const struct tc_model *md = g->md;
	return tc__hring_embeds(g->t) &&
	       (g->p == 1 || md->duplex == TC_DUPLEX_FULL || (md->ports == TC_PORTS_ALL && g->p >= 3));
}

double tc__f_allreduce_ring(const struct tc__gen *g)
{
	const uint64_t p = (uint64_t)g->p;
	if (!tc__ar_ring_exact(g))
		return NAN;
	uint64_t block = (g->bytes / g->esize + p - 1) / p * g->esize; /* the largest */
	return tc_cost_allreduce_ring(g->md, g->p, (double)block * (double)p);
}
