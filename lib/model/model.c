/* SPDX-License-Identifier: MIT */
/*
 * lib/model/model.c - default communication model parameters and their
 * validation (tc_model_check: the one check of a model given by a user,
 * shared by tc_team_create and the predictor).
 */
#include "topocoll.h"

#include "base/error_detail.h"

void tc_model_default(struct tc_model *m)
{
	if (m == NULL)
		return;
	*m = (struct tc_model){
	        .ts_ns = 1000.0,
	        .tw_ns = 1.0,
	        .th_ns = 0.0,
	        .tc_ns = 0.0,
	        .mu = 0,
	        .ports = TC_PORTS_ONE,
	        .duplex = TC_DUPLEX_FULL,
	        .switching = TC_SWITCH_SF,
	        .combining = 1,
	};
}

int tc_model_check(const struct tc_model *m)
{
	tc__clear_detail();
	/* The ranges keep every product of the clock in range: t_s and t_h up
	 * to 1000 s, t_w and t_c up to 1 s per byte (NaN fails every test). */
	if (!m || !(m->ts_ns >= 0 && m->ts_ns <= 1e12) || !(m->tw_ns >= 0 && m->tw_ns <= 1e9) ||
	    !(m->th_ns >= 0 && m->th_ns <= 1e12) || !(m->tc_ns >= 0 && m->tc_ns <= 1e9))
		return TC_EINVAL;
	/* A packet above the largest message means no packets (any mu is as
	 * good); near SIZE_MAX the executor's packet count, (bytes + mu - 1) /
	 * mu, wrapped to 0 and a routed cut-through transfer sent nothing. */
	if (m->mu > TC_MAX_MESSAGE)
		return TC_EINVAL;
	if ((unsigned)m->ports > TC_PORTS_ALL || (unsigned)m->duplex > TC_DUPLEX_HALF ||
	    (unsigned)m->switching > TC_SWITCH_CT)
		return TC_EINVAL;
	return TC_OK;
}
