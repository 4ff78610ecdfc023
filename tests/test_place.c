/* SPDX-License-Identifier: MIT */
/*
 * tests/test_place.c - where ranks run (lib/core/place.h, tc_team_info's
 * placement): on a machine described by an hwloc XML file
 * (tests/data/2socket-16core.xml: 2 packages, each a NUMA node and one
 * 16 MiB L3 over 8 cores of 2 hardware threads, PUs 2c and 2c + 1 on core c)
 * the order is every core's first PU, cores grouped by cache domain, then
 * the SMT siblings; on this machine every rank runs on the CPU the team
 * reports for it.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"

static struct tc_team *make(const char *spec, int p, int no_pin, int *err)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.p = p;
	cfg.no_pin = no_pin;
	cfg.timeout_ms = 60000;
	struct tc_team *t = NULL;
	*err = tc_team_create(&cfg, &t);
	return t;
}

/* Points TC_HWLOC_XML at the file of tests/data (TC_TEST_DATA). */
static void use_xml(const char *name)
{
	const char *dir = getenv("TC_TEST_DATA");
	cr_assert(dir, "TC_TEST_DATA is not set (run through meson test)");
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	setenv("TC_HWLOC_XML", path, 1);
}

Test(place, two_sockets_from_xml, .timeout = 60)
{
	use_xml("2socket-16core.xml");
	int err;
	struct tc_team *t = make("complete:40", 40, 1, &err);
	if (err) { /* built without hwloc: the file cannot be read, and says so */
		cr_assert_eq(err, TC_EINVAL, "%s", tc_strerror(err));
		cr_assert(strstr(tc_error_detail(), "hwloc"), "detail: %s", tc_error_detail());
		return;
	}
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	cr_assert_eq(info.place_source, TC_PLACE_HWLOC_XML);
	cr_assert_eq(info.pus, 32);
	cr_assert_eq(info.cores, 16);
	cr_assert_eq(info.packages, 2);
	cr_assert_eq(info.numa_nodes, 2);
	cr_assert_eq(info.cache_domains, 2);
	cr_assert_eq(info.cache_domain_level, 3);
	cr_assert_eq(info.cache_bytes[0], (size_t)32 << 10);
	cr_assert_eq(info.cache_bytes[1], (size_t)4 << 20);
	cr_assert_eq(info.cache_bytes[2], (size_t)16 << 20);
	cr_assert_eq(info.cache_count[0], 16);
	cr_assert_eq(info.cache_count[1], 16);
	cr_assert_eq(info.cache_count[2], 2);
	cr_assert(info.place);
	for (int r = 0; r < 40; r++) {
		const struct tc_rank_place *pl = &info.place[r];
		int s = r % 32, core = s % 16, smt = s / 16, half = core / 8;
		cr_assert_eq(pl->pu, 2 * core + smt, "rank %d: PU %d", r, pl->pu);
		cr_assert_eq(pl->core, core, "rank %d: core %d", r, pl->core);
		cr_assert_eq(pl->smt, smt, "rank %d: smt %d", r, pl->smt);
		cr_assert_eq(pl->cache, half, "rank %d: cache %d", r, pl->cache);
		cr_assert_eq(pl->numa, half, "rank %d: NUMA %d", r, pl->numa);
		cr_assert_eq(pl->package, half, "rank %d: package %d", r, pl->package);
	}
	/* The description is reported, not pinned to: this machine's CPUs
	 * still decide whether ranks share them. */
	int cpus = info.cpus;
	tc_team_destroy(t);
	unsetenv("TC_HWLOC_XML");
	t = make("complete:40", 40, 1, &err);
	cr_assert_eq(err, 0);
	tc_team_get_info(t, &info);
	cr_assert_eq(info.cpus, cpus);
	tc_team_destroy(t);
}

Test(place, unreadable_xml_is_an_error, .timeout = 30)
{
	use_xml("no-such-machine.xml");
	int err;
	struct tc_team *t = make("ring:4", 4, 1, &err);
	cr_assert_eq(err, TC_EINVAL, "%s", tc_strerror(err));
	cr_assert_null(t);
	cr_assert(strstr(tc_error_detail(), "no-such-machine.xml") ||
	                  strstr(tc_error_detail(), "without hwloc"),
	          "detail: %s", tc_error_detail());
}

struct where {
	int cpu[64];
};

static int where_fn(struct tc_proc *proc, void *arg)
{
	struct where *w = arg;
	w->cpu[tc_rank(proc)] = sched_getcpu();
	return tc_barrier(proc, NULL);
}

Test(place, ranks_run_where_reported, .timeout = 60)
{
	unsetenv("TC_HWLOC_XML");
	int err;
	struct tc_team *t = make("complete:1", 1, 0, &err);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	tc_team_destroy(t);
	/* A rank per CPU (up to 4): threads, each pinned to its CPU. */
	const int p = info.cpus < 4 ? info.cpus : 4;
	char spec[32];
	snprintf(spec, sizeof spec, "complete:%d", p);
	t = make(spec, p, 0, &err);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	tc_team_get_info(t, &info);
	cr_assert(info.place_source == TC_PLACE_AFFINITY || info.place_source == TC_PLACE_HWLOC);
	cr_assert(info.pus >= info.cpus || info.place_source == TC_PLACE_AFFINITY);
	struct where w;
	memset(&w, -1, sizeof w);
	if (info.exec == TC_EXEC_THREADS) {
		cr_assert_eq(tc_run(t, where_fn, &w), 0);
		for (int r = 0; r < p; r++)
			cr_assert_eq(w.cpu[r], info.place[r].pu, "rank %d on CPU %d, placed on %d",
			             r, w.cpu[r], info.place[r].pu);
	}
	/* Cores first: the first ranks up to the cores each have a core of
	 * their own (on a machine with SMT siblings in the affinity set). */
	for (int a = 0; a < p; a++)
		for (int b = a + 1; b < p; b++)
			if (info.place[a].core >= 0 && info.place[a].smt == 0 && info.place[b].smt == 0)
				cr_assert_neq(info.place[a].core, info.place[b].core);
	cpu_set_t set;
	CPU_ZERO(&set);
	cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
	for (int r = 0; r < p; r++)
		cr_assert(CPU_ISSET(info.place[r].pu, &set), "rank %d on CPU %d, outside the set",
		          r, info.place[r].pu);
	tc_team_destroy(t);
}
