/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/machine.c - the machine's price of waiting, for TC_ALG_AUTO on
 * oversubscribed teams.  Described in lib/coll/machine.h.
 */
#include "coll/machine.h"

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
