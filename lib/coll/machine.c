/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/machine.c - the machine's price of waiting, for TC_ALG_AUTO on
 * oversubscribed teams.  Described in lib/coll/machine.h.
 */
#include "coll/machine.h"

#include <string.h>

#include "coll/coll_internal.h"

#include "core/internal.h"

int tc__shared_cpus(const struct tc_team *team)
{
	return team->p > team->cpus && !team->emulate ? team->cpus : 0;
}

uint64_t tc__wait_level_ns(const struct tc_team *team)
{
	if (!tc__shared_cpus(team) || team->wait == TC_WAIT_SPIN)
		return 0;
	uint64_t per_cpu = ((uint64_t)team->p + (uint64_t)team->cpus - 1) / (uint64_t)team->cpus;
	return per_cpu * (team->exec == TC_EXEC_FIBRES ? TC__FIBRE_WAIT_NS : TC__SWITCH_NS);
}

/* allreduce: the largest vector that AUTO reduces whole on every rank
 * (`shm_flag`) rather than by slices (`shm`). */
#define TC__SHM_FLAT_MAX 4096u

int tc__shm_team(const struct tc_team *team)
{
	return !team->emulate && team->p <= team->cpus && team->wait != TC_WAIT_BLOCK;
}

const struct tc__alg *tc__shm_pick(const struct tc__gen *g, int need_ordered)
{
	if (!g->shm || need_ordered)
		return NULL;
	const char *want = g->coll != TC_COLL_ALLREDUCE ? "shm"
	                   : g->bytes <= TC__SHM_FLAT_MAX ? "shm_flag"
	                                                  : "shm";
	const struct tc__alg *a = tc__alg_find(g->coll, want);
	return a && (a->flags & TC__ALG_SHM) && !tc__alg_check_quiet(a, g) ? a : NULL;
}
