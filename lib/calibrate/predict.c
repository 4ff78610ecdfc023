/* SPDX-License-Identifier: MIT */
/*
 * lib/calibrate/predict.c - the calibrated prediction's public functions
 * (topocoll/calibrate.h; docs/calibration.md), on the price of
 * lib/coll/calprice.c, which TC_ALG_AUTO shares.  The measuring is
 * lib/calibrate/calibrate.c's and concurrency.c's, the fits fit.c's.
 */
#include "topocoll/calibrate.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/error_detail.h"
#include "coll/coll_internal.h"
#include "coll/gen.h"
#include "coll/machine.h"
#include "model/calibration.h"
#include "topocoll.h"

/* A public call's start: no detail yet, and the calibration checked
 * (lib/model/calibration.h; what tc__cal_price reads is then in range),
 * the detail naming the call and the field where it is not. */
static int tc__cal_start(const struct tc_calibration *cal, const char *who)
{
	tc__clear_detail();
	return tc__calibration_check(cal, true, who);
}

/* A calibration the check refuses is no measurement to these four
 * (calibrate.h): they have no error to return. */
double tc_calibration_share(const struct tc_calibration *cal, int k, size_t bytes)
{
	struct tc__cal_fault f;
	return cal && !tc__calibration_valid(cal, false, &f) ? tc__machine_share(cal, k, bytes) : 1.0;
}

double tc_calibration_chain_share(const struct tc_calibration *cal, int k, size_t bytes)
{
	struct tc__cal_fault f;
	return cal && !tc__calibration_valid(cal, false, &f) ? tc__machine_chain_share(cal, k, bytes)
	                                                     : 1.0;
}

double tc_calibration_chain_step_share(const struct tc_calibration *cal, int k, size_t bytes)
{
	struct tc__cal_fault f;
	return cal && !tc__calibration_valid(cal, true, &f) ? tc__machine_chain_step(cal, k, bytes) : 1.0;
}

double tc_calibration_sync_ns(const struct tc_calibration *cal, int q)
{
	struct tc__cal_fault f;
	return cal && !tc__calibration_valid(cal, true, &f) ? tc__machine_sync_ns(cal, q) : 0.0;
}

int tc_calibration_round_ns(const struct tc_calibration *cal, int k, size_t bytes, int q, double *ns)
{
	struct tc_model md;
	int err = tc__cal_start(cal, "tc_calibration_round_ns");
	if (!err && !ns)
		err = TC_EINVAL;
	if (!err)
		err = tc__cal_model(cal, bytes, &md, NULL);
	if (err)
		return err;
	*ns = tc__machine_round_ns(cal, &md, k, bytes, q);
	return TC_OK;
}

int tc_calibration_predict(const struct tc_calibration *cal, const struct tc_topo *t,
                           const struct tc_call *call, struct tc_prediction *pr, int *segment,
                           double *ns)
{
	double share = 0, sync = 0;
	int err = tc__cal_start(cal, "tc_calibration_predict");
	if (!err)
		err = tc__cal_price(cal, t, call, NULL, false, pr, segment, ns, &share, &sync);
	if (!err)
		*ns += share + sync;
	return err;
}

int tc_calibration_concurrency_ns(const struct tc_calibration *cal, const struct tc_topo *t,
                                  const struct tc_call *call, double *share_ns, double *sync_ns)
{
	double ns, share = 0, sync = 0;
	int err = tc__cal_start(cal, "tc_calibration_concurrency_ns");
	if (!err)
		err = tc__cal_price(cal, t, call, NULL, false, NULL, NULL, &ns, &share, &sync);
	if (err)
		return err;
	if (share_ns)
		*share_ns = share;
	if (sync_ns)
		*sync_ns = sync;
	return TC_OK;
}

int tc_calibration_predict_placed(const struct tc_calibration *cal, const struct tc_topo *t,
                                  const struct tc_call *call, const struct tc_rank_place *place,
                                  struct tc_prediction *pr, int *segment, double *ns)
{
	double share = 0, sync = 0;
	int err = tc__cal_start(cal, "tc_calibration_predict_placed");
	if (!err)
		err = tc__cal_price(cal, t, call, place, false, pr, segment, ns, &share, &sync);
	if (!err)
		*ns += share + sync;
	return err;
}
