/* SPDX-License-Identifier: MIT */
/*
 * lib/topo/charge.h - what crossing a topology's links costs, in links of
 * the network underneath.  Not installed.
 *
 * A topology made by tc_topo_create() or parsed from a spec lies on its own
 * links: each link is charged as one link, and a route of h hops as h.  A
 * sub-team's topology lies on its parent's network (docs/subteams.md): each
 * of its links (u, v) stands for the parent's route between the parent
 * ranks of u and v, and is charged as that route's charge, its weight
 * (tc__topo_weigh).  Links that are links of the parent weigh 1, so an
 * induced topology (a row of a torus, a sub-cube of a hypercube) is charged
 * exactly as the parent charges it; a general subset's complete graph
 * weighs each link by the parent's hop count.  The logical clock's T(m, l)
 * takes l = tc__topo_charge() (lib/model/clock.h): under store-and-forward
 * every parent link costs t_s + m t_w, under cut-through t_h.
 *
 * The weights are set once, before the topology is shared (the sub-team's
 * creation), and read without synchronisation afterwards, like the rest of
 * the topology.
 */
#ifndef TC_TOPO_CHARGE_H
#define TC_TOPO_CHARGE_H

#include "topocoll/topo.h"

/*
 * Weighs t's links as routes of parent: the link from u to v weighs
 * tc__topo_charge(parent, members[u], members[v]), members[0..nodes(t))
 * distinct nodes of parent.  When every weight is 1 nothing is stored (t
 * stays unweighted).  0, TC_ENOMEM, TC_EINVAL (t already weighted, or a
 * member out of parent's range).
 */
int tc__topo_weigh(struct tc_topo *t, const struct tc_topo *parent, const int *members);

/* Whether some link of t weighs more than one. */
int tc__topo_weighted(const struct tc_topo *t);

/* The weight of the link from u to its neighbour of index nbr
 * (tc_topo_neighbors()); 1 on an unweighted topology.  Valid u and nbr. */
int tc__topo_link_charge(const struct tc_topo *t, int u, int nbr);

/* The charge of the route from u to v (tc_topo_route()): the sum of its
 * links' weights, tc_topo_distance() on an unweighted topology; 0 when
 * u == v.  Valid u and v.  O(hops) steps of tc_topo_next_hop(). */
int tc__topo_charge(const struct tc_topo *t, int u, int v);

/* tc_topo_next_hop() of valid u != v or u == v, without touching the
 * calling thread's error detail (a send or receive in progress may have
 * set it). */
int tc__topo_next_hop(const struct tc_topo *t, int u, int v);

#endif /* TC_TOPO_CHARGE_H */
