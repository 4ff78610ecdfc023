/* SPDX-License-Identifier: MIT */
/*
 * lib/model/calibration.h - the check of a calibration (struct
 * tc_calibration, include/topocoll/calibrate.h): the one check that every
 * consumer applies, so that a calibration read from text
 * (tc_calibration_read), one a team is to carry
 * (tc_team_config.calibration) and one given to the calibrated model and
 * prediction (tc_calibration_model, tc_calibration_predict, ...) are
 * refused alike, with the same words.  Beside tc_model_check() (model.c),
 * below the layers that consume a calibration.  Not installed.
 */
#ifndef TC_MODEL_CALIBRATION_H
#define TC_MODEL_CALIBRATION_H

#include <stdbool.h>

struct tc_calibration;

/* What the check found wrong: the field, by its address in the
 * calibration (so that the reader can name the line it came from), and a
 * sentence naming it by its key in the text ("segments.1.first", as
 * lib/calibrate/io.c writes it). */
struct tc__cal_fault {
	const void *at;
	char what[256];
};

/*
 * Checks c as include/topocoll/calibrate.h says ("The check"): what the
 * calibrated model and prediction read within its ranges, and the parts in
 * agreement; need_line: some line too (a segment, else the line of all
 * points), which the model needs and a record read need not have.
 * Returns 0, or TC_EINVAL with *fault filled (the first fault: the counts,
 * the fits and the points, the segments, then the rates and the tables).
 * Pure; thread-safe.
 */
int tc__calibration_valid(const struct tc_calibration *c, bool need_line, struct tc__cal_fault *fault);

/* tc__calibration_valid() for a public call: 0, or TC_EINVAL with
 * tc_error_detail() "who: " and the fault (c NULL: "who: no calibration"). */
int tc__calibration_check(const struct tc_calibration *c, bool need_line, const char *who);

#endif
