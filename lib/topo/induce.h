/* SPDX-License-Identifier: MIT */
/*
 * lib/topo/induce.h - the topology a subset of a topology's nodes induces
 * (sub-teams, lib/coll/split.c).  Not installed.
 */
#ifndef TC_TOPO_INDUCE_H
#define TC_TOPO_INDUCE_H

#include <stddef.h>

#include "topocoll/topo.h"

/*
 * The subset members[0..k) of t's nodes (distinct), numbered 0..k-1 in
 * that order.  Writes into spec the named topology of k nodes whose links
 * are exactly t's links between members (in that numbering), trying in
 * turn complete, hypercube, torus and mesh of 2 and 3 dimensions, ring,
 * chain, star and trees of arity 2 to 4: a row of a torus in row order
 * is a ring, of a mesh a chain, a sub-cube of a hypercube in rank order a
 * hypercube.  Returns 1 then; 0 when none matches (spec is then
 * "complete:k", whose links other than t's cross t's routes); TC_ENOMEM;
 * TC_ELIMIT when none matches and k is over TC_TOPO_MAX_COMPLETE.
 */
int tc__topo_induce(const struct tc_topo *t, const int *members, int k, char *spec, size_t len);

#endif
