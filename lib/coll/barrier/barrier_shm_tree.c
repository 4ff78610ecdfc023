/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/barrier/barrier_shm_tree.c - barrier on cache-line flags over a
 * tree of two levels shaped by the cache domains (Open MPI's coll/xhc
 * builds its barrier the same way): the members of a group raise
 * their flags, which the group's leader reads; the leaders run the flat
 * flag barrier among themselves; each leader then raises its release flag,
 * which its members read.  Every flag is read by the ranks of one group or
 * by the leaders, never by all p - 1 peers as in `shm`.
 *
 * Groups (tc__shm_tree_group(), lib/coll/shm.h): runs of consecutive ranks
 * in one cache domain, cut into groups of at most TC__SHM_TREE_FANIN (8)
 * ranks of sizes that differ by at most one; the first rank of each is its
 * leader.  The schedule knows no machine: it takes the groups of a team of
 * unknown structure, q = ceil(p / 8) groups of consecutive ranks.  Native
 * runs (lib/coll/shm_tree.c, tc__shm_tree()) take the team's placement
 * (tc_team_info.place): on a machine of two cache domains of 8 cores,
 * p = 16 makes the groups {0..7} and {8..15}, as the schedule does.
 *
 * Schedule (prediction, emulated runs): round 0, every member sends an
 * empty message to its leader; round 1 (q >= 2 only), every leader to every
 * other leader; round 2, every leader to each of its members.
 *
 * Cost (tc_cost_barrier_shm_tree), all ports, full duplex: the three
 * rounds' messages of each rank at once, 3 msg(1, 0) for p > 8, 2 msg(1, 0)
 * for 2 <= p <= 8, 0 for p = 1.  NAN under one port and half duplex (the
 * simulator prices those).  The all-port model prices the tree above `shm`
 * (msg(1, 0)): it sees the rounds, not the p - 1 hand-offs of every flag
 * that the tree saves.
 * Restrictions: the complete graph (every pair shares memory).
 * Memory: none besides the team's flags.
 *
 * Trace, p = 10 (groups {0..4}, {5..9}):  round 0: 1, 2, 3, 4 -> 0;
 * 6, 7, 8, 9 -> 5.  Round 1: 0 -> 5, 5 -> 0.  Round 2: 0 -> 1, 2, 3, 4;
 * 5 -> 6, 7, 8, 9.
 */
#include "coll/gen.h"
#include "coll/shm.h"

int tc__gen_barrier_shm_tree(const struct tc__gen *g, struct tc__sched *s)
{
	return tc__gen_shm_tree(g, s, 0);
}

double tc__f_barrier_shm_tree(const struct tc__gen *g)
{
	if (g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_barrier_shm_tree(g->md, g->p, TC__SHM_TREE_FANIN);
}
