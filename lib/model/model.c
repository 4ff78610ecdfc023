/* SPDX-License-Identifier: MIT */
/*
 * lib/model/model.c - default communication model parameters.
 */
#include "topocoll/model.h"

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
