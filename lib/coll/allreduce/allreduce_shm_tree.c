/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/allreduce/allreduce_shm_tree.c - allreduce of small vectors (at
 * most TC__SHM_TREE_MAX = 64 bytes, a cache line's payload) over the
 * two-level tree of barrier_shm_tree.c, the vectors in the flags' lines
 * (Open MPI's coll/xhc reduces small vectors in its flags the same way
 *): every member's vector travels in its flag to its group's
 * leader, which reduces the group's vectors in rank order; the leaders
 * read each other's results and reduce them in rank order; each leader's
 * result travels in its release flag to its members.
 *
 * The order: a group [a, b) gives P = ((x_a + x_a+1) + ...) + x_b-1, and
 * every rank gets ((P_0 + P_1) + P_2) ... over the groups in rank order:
 * the same bits on every rank, every operand in rank order (right for
 * non-commutative operators, hence `ordered`).  For an associative operator
 * (integers, min, max, bitwise, a non-commutative associative one) that is
 * the sequential definition's result; for floating-point sums it is
 * deterministic for a given team shape but not bit for bit the sequential
 * ((x_0 + x_1) + x_2) ... of `shm_flag` once there are two groups (p > 8,
 * or two cache domains natively).
 *
 * Schedule (prediction, emulated runs), groups as barrier_shm_tree.c's
 * (q = ceil(p / 8) groups of consecutive ranks, sizes within one):
 * round 0, every leader copies its IN to TMP (OUT when q = 1) and every
 * member's IN is combined into it as the right operand, in rank order;
 * round 1 (q >= 2), every leader receives every leader's TMP in rank order
 * into its OUT, the first copied, the others combined as the right operand;
 * round 2, every leader's OUT to each of its members' OUT.
 * Native run (lib/coll/shm_tree.c, tc__shm_tree()): the groups of the team's
 * placement; a member's vector in its flag, a group's result in its
 * leader's area, the team's result in the leader's flag.
 *
 * Cost (tc_cost_allreduce_shm_tree), all ports, full duplex, g the largest
 * group:  T = 3 msg(1, m) + (g - 1 + q - 1) m t_c   (q >= 2),
 *         T = 2 msg(1, m) + (p - 1) m t_c           (2 <= p <= 8),
 * 0 for p = 1.  NAN under one port and half duplex (the simulator prices
 * those).
 * Restrictions: the complete graph (every pair shares memory); m at most
 * 64 bytes (TC_ENOTSUP beyond).
 * Memory: m bytes of scratch per leader (TMP; natively its area).
 *
 * Trace, p = 10 (groups {0..4}, {5..9}): round 0: 0: IN -> TMP, 1..4 -> 0
 * (+); 5: IN -> TMP, 6..9 -> 5 (+).  Round 1: 0: TMP -> OUT, 5 -> 0 (+);
 * 5: 0 -> 5 copy, TMP -> OUT (+).  Round 2: 0 -> 1..4, 5 -> 6..9.
 */
#include "base/error_detail.h"
#include "coll/gen.h"
#include "coll/shm.h"

/* The end of the group that starts at lo among p ranks of unknown
 * structure (the next group's leader). */
static int tc__tree_hi(int p, int lo)
{
	int a, b;
	tc__shm_tree_group(NULL, p, lo, &a, &b);
	return b;
}

int tc__gen_shm_tree(const struct tc__gen *g, struct tc__sched *s, uint64_t m)
{
	const int p = g->p, one = tc__tree_hi(p, 0) == p;
	const int part = one || !m ? TC__BUF_OUT : TC__BUF_TMP, in = m ? TC__BUF_IN : TC__BUF_OUT;
	const int x = m ? TC__XOP_COMBINE_RIGHT : TC__XOP_COPY;
	int err = TC_OK;
	if (p == 1)
		return err; /* the framework copies IN to OUT */
	if (!one)
		s->tmp_bytes = m;
	err = tc__sched_round(s);
	for (int lo = 0, hi; lo < p && !err; lo = hi) {
		hi = tc__tree_hi(p, lo);
		if (m)
			err = tc__emit(s, lo, lo, in, 0, part, 0, m, TC__XOP_COPY);
		for (int r = lo + 1; r < hi && !err; r++)
			err = tc__emit_from(s, r, lo, in, 0, part, 0, m, x, part);
	}
	if (!err && !one)
		err = tc__sched_round(s);
	for (int j = 0, hj; j < p && !err && !one; j = hj) {
		hj = tc__tree_hi(p, j);
		for (int i = 0, hi; i < p && !err; i = hi) {
			hi = tc__tree_hi(p, i);
			if (m || i != j)
				err = tc__emit_from(s, i, j, part, 0, TC__BUF_OUT, 0, m,
				                    i && m ? x : TC__XOP_COPY, TC__BUF_OUT);
		}
	}
	if (!err)
		err = tc__sched_round(s);
	for (int lo = 0, hi; lo < p && !err; lo = hi) {
		hi = tc__tree_hi(p, lo);
		for (int r = lo + 1; r < hi && !err; r++)
			err = tc__emit(s, lo, r, TC__BUF_OUT, 0, TC__BUF_OUT, 0, m, TC__XOP_COPY);
	}
	return err;
}

int tc__gen_allreduce_shm_tree(const struct tc__gen *g, struct tc__sched *s)
{
	if (g->bytes > TC__SHM_TREE_MAX) {
		tc__set_detail("allreduce shm_tree: %llu bytes per rank, at most %u (a cache line)",
		               (unsigned long long)g->bytes, TC__SHM_TREE_MAX);
		return TC_ENOTSUP;
	}
	return tc__gen_shm_tree(g, s, g->bytes);
}

double tc__f_allreduce_shm_tree(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL || g->bytes > TC__SHM_TREE_MAX)
		return NAN;
	return tc_cost_allreduce_shm_tree(g->md, g->p, (double)g->bytes, TC__SHM_TREE_FANIN);
}
