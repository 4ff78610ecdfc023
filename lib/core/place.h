/* SPDX-License-Identifier: MIT */
/*
 * lib/core/place.h - where ranks run: the order of the CPUs a team pins its
 * ranks to, and the machine's cache and NUMA structure, from hwloc [hwloc]
 * when the library is built with it (meson option hwloc), else the
 * affinity set's order with the structure unknown.
 *
 * The order: one hardware thread (PU) of every core first, the cores in
 * hwloc's logical order (the machine's tree: package, cache, core), so that
 * consecutive ranks share the innermost caches (compact by cache domain);
 * then every core's second PU in the same order (its SMT sibling), and so
 * on.  Only PUs of the process's affinity set count.
 *
 * TC_HWLOC_XML=file: tc__machine_probe describes the machine of that hwloc
 * XML file instead (every PU of it counts, source TC_PLACE_HWLOC_XML), for
 * tests of a machine this one is not; the team then reports that placement
 * but pins as the affinity probe says (lib/core/team.c).
 *
 * Not thread-safe for one struct; probes are independent.
 */
#ifndef TC_CORE_PLACE_H
#define TC_CORE_PLACE_H

#include <sched.h>

#include "topocoll/team.h"

struct tc__machine {
	enum tc_place_source source;
	int nslots;                 /* PUs in placement order */
	struct tc_rank_place *slot; /* nslots entries */
	int pus, cores, packages, numa_nodes, cache_domains, cache_domain_level;
	size_t cache_bytes[3];
	int cache_count[3];
};

/*
 * Fills *m for the CPUs of `allowed` (this machine), or for the file named by
 * xml (not NULL: every PU of the file).  Without hwloc, or when hwloc fails
 * on this machine, the fallback: the allowed CPUs in increasing order, the
 * structure unknown (-1 and 0).  Returns 0, TC_ENOMEM, or TC_EINVAL (xml
 * given but unreadable, or the library built without hwloc; the detail
 * names the file).  tc__machine_free() releases it.
 */
int tc__machine_probe(const cpu_set_t *allowed, const char *xml, struct tc__machine *m);
void tc__machine_free(struct tc__machine *m);

#endif /* TC_CORE_PLACE_H */
