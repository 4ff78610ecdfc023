/* SPDX-License-Identifier: MIT */
/* lib/core/place.c - the CPU order and the machine's structure (contract in
 * lib/core/place.h). */
#include "core/place.h"

#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "topocoll/error.h"

#ifdef TC_HAVE_HWLOC
#include <hwloc.h>
#include <pthread.h>
#endif

void tc__machine_free(struct tc__machine *m)
{
	free(m->slot);
	m->slot = NULL;
	m->nslots = 0;
}

/* The affinity set in increasing order, the structure unknown. */
static int tc__machine_plain(const cpu_set_t *allowed, struct tc__machine *m)
{
	memset(m, 0, sizeof *m);
	m->source = TC_PLACE_AFFINITY;
	int n = CPU_COUNT(allowed);
	m->slot = malloc((size_t)(n > 0 ? n : 1) * sizeof *m->slot);
	if (!m->slot)
		return TC_ENOMEM;
	for (int c = 0; c < CPU_SETSIZE && m->nslots < n; c++)
		if (CPU_ISSET(c, allowed))
			m->slot[m->nslots++] = (struct tc_rank_place){.pu = c,
			                                              .core = -1,
			                                              .smt = -1,
			                                              .cache = -1,
			                                              .numa = -1,
			                                              .package = -1};
	m->pus = m->nslots;
	return TC_OK;
}

#ifdef TC_HAVE_HWLOC
static const hwloc_obj_type_t tc__cache_types[3] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE,
                                                    HWLOC_OBJ_L3CACHE};

/* The logical index of the ancestor of obj of that type, -1 when none. */
static int tc__ancestor(hwloc_topology_t topo, hwloc_obj_t obj, hwloc_obj_type_t type)
{
	hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(topo, type, obj);
	return a ? (int)a->logical_index : -1;
}

/* The NUMA node whose cpuset holds the PU (NUMA nodes are memory children
 * in hwloc 2, not ancestors), -1 when none. */
static int tc__numa_of(hwloc_topology_t topo, hwloc_obj_t pu)
{
	int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	for (int i = 0; i < n; i++) {
		hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
		if (node && node->cpuset && hwloc_bitmap_isset(node->cpuset, pu->os_index))
			return (int)node->logical_index;
	}
	return -1;
}

static int tc__machine_hwloc(hwloc_topology_t topo, const cpu_set_t *allowed, struct tc__machine *m)
{
	memset(m, 0, sizeof *m);
	int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	int ncore = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	if (npu < 1)
		return TC_EINVAL;
	m->pus = npu;
	m->cores = ncore > 0 ? ncore : npu;
	m->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
	m->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	hwloc_obj_type_t domain = HWLOC_OBJ_PU;
	for (int k = 0; k < 3; k++) {
		int n = hwloc_get_nbobjs_by_type(topo, tc__cache_types[k]);
		hwloc_obj_t c = n > 0 ? hwloc_get_obj_by_type(topo, tc__cache_types[k], 0) : NULL;
		m->cache_count[k] = n > 0 ? n : 0;
		m->cache_bytes[k] = c && c->attr ? (size_t)c->attr->cache.size : 0;
		if (n > 0) {
			domain = tc__cache_types[k];
			m->cache_domain_level = k + 1;
			m->cache_domains = n;
		}
	}
	m->slot = malloc((size_t)npu * sizeof *m->slot);
	if (!m->slot)
		return TC_ENOMEM;
	/* Pass s takes the s-th PU of every core, cores in logical order. */
	for (int s = 0; m->nslots < npu; s++) {
		int added = 0;
		for (int ci = 0; ci < m->cores; ci++) {
			hwloc_obj_t core =
			        ncore > 0 ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)ci)
			                  : hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)ci);
			if (!core)
				continue;
			hwloc_obj_t pu =
			        ncore > 0 ? hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset,
			                                                        HWLOC_OBJ_PU,
			                                                        (unsigned)s)
			                  : (s == 0 ? core : NULL);
			if (!pu)
				continue;
			added++;
			if (allowed && ((int)pu->os_index >= CPU_SETSIZE ||
			                !CPU_ISSET((int)pu->os_index, allowed)))
				continue;
			m->slot[m->nslots++] =
			        (struct tc_rank_place){.pu = (int)pu->os_index,
			                               .core = ci,
			                               .smt = s,
			                               .cache = domain == HWLOC_OBJ_PU
			                                                ? -1
			                                                : tc__ancestor(topo, pu, domain),
			                               .numa = tc__numa_of(topo, pu),
			                               .package = tc__ancestor(topo, pu,
			                                                       HWLOC_OBJ_PACKAGE)};
		}
		if (!added)
			break;
	}
	return m->nslots > 0 ? TC_OK : TC_EINVAL;
}
#endif

#ifdef TC_HAVE_HWLOC
/* This machine's topology, loaded once per process: a load reads a few
 * hundred files of /sys and loads hwloc's plugins (about 15 ms, which was
 * most of what creating a small team cost).  Read-only once loaded, and
 * hwloc allows concurrent reads of a loaded topology; kept to the end of
 * the process (the machine does not change; the affinity set, which may,
 * is applied at each probe). */
static hwloc_topology_t tc__here;
static int tc__here_ok;
static pthread_once_t tc__here_once = PTHREAD_ONCE_INIT;

static void tc__here_load(void)
{
	if (hwloc_topology_init(&tc__here) != 0)
		return;
	if (hwloc_topology_load(tc__here) != 0) {
		hwloc_topology_destroy(tc__here);
		return;
	}
	tc__here_ok = 1;
}

int tc__machine_probe(const cpu_set_t *allowed, const char *xml, struct tc__machine *m)
{
	if (!xml) { /* this machine: the cached topology, else today's order */
		pthread_once(&tc__here_once, tc__here_load);
		if (tc__here_ok) {
			int err = tc__machine_hwloc(tc__here, allowed, m);
			if (!err) {
				m->source = TC_PLACE_HWLOC;
				return TC_OK;
			}
			tc__machine_free(m);
			if (err == TC_ENOMEM)
				return err;
		}
		return tc__machine_plain(allowed, m);
	}
	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) != 0)
		return TC_ENOMEM;
	int err = TC_OK;
	if (hwloc_topology_set_xml(topo, xml) != 0) {
		tc__set_detail("TC_HWLOC_XML: cannot read the hwloc XML file '%s'", xml);
		err = TC_EINVAL;
	}
	if (!err && hwloc_topology_load(topo) != 0) {
		tc__set_detail("hwloc: cannot load the topology of %s", xml);
		err = TC_EINVAL;
	}
	if (!err)
		err = tc__machine_hwloc(topo, NULL, m);
	hwloc_topology_destroy(topo);
	if (!err)
		m->source = TC_PLACE_HWLOC_XML;
	else
		tc__machine_free(m);
	return err;
}
#else
int tc__machine_probe(const cpu_set_t *allowed, const char *xml, struct tc__machine *m)
{
	if (xml) {
		tc__set_detail("TC_HWLOC_XML is set ('%s') but topocoll was built without hwloc", xml);
		memset(m, 0, sizeof *m);
		return TC_EINVAL;
	}
	return tc__machine_plain(allowed, m);
}
#endif
