/* SPDX-License-Identifier: MIT */
/*
 * bench/replay_native - a recorded native run priced again: the measured
 * cases of `model_fidelity --native` (its last line, the JSON object) against
 * the calibrated prediction of this build, from the calibration that run
 * made (`--save-calibration FILE`; the many-core report keeps one per p,
 * calibration-pP.cal beside native-pP.txt).  So a change of the calibrated
 * model can be judged against a machine's measured times where the machine
 * is not at hand.
 *
 * Usage: replay_native CALIBRATION NATIVE_OUTPUT [--cases]
 *   CALIBRATION     the file --save-calibration wrote (text,
 *                   tc_calibration_read()); its first record is used (a
 *                   run with --no-recal, as the report's, has one); a
 *                   record of an older build reads with the fields it
 *                   lacks not measured
 *   NATIVE_OUTPUT   what that run printed (its last line starting with '{')
 *   --cases         a line per case: collective, topology, algorithm, bytes,
 *                   measured, recorded prediction, prediction now, the two
 *                   concurrency charges in it (tc_calibration_concurrency_ns:
 *                   share, sync), error
 * Prints the share of cases within 15%, 20% and 25% of the prediction now
 * and as recorded, then one JSON object: cases, within_15pct, within_20pct,
 * within_25pct, recorded_within_20pct, unchanged (cases whose prediction is
 * the recorded one within 1e-6), skipped (a case whose algorithm differed
 * between sweeps, or that failed).  Exit status 0, or 2 on bad input.
 *
 * The error of a case is (measured - predicted) / predicted with measured
 * the median over the run's sweeps, which is what model_fidelity reports
 * when the calibration was made once (--no-recal).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fidelity_native.h"
#include "topocoll.h"

/* The value after "\"key\": " in s, up to the next field, copied into out
 * (strings without their quotes); NULL when absent. */
static const char *field(const char *s, const char *end, const char *key, char *out, size_t len)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": ", key);
	const char *p = strstr(s, pat);
	if (!p || p >= end)
		return NULL;
	p += strlen(pat);
	size_t n = 0;
	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 1 < len; p++)
			out[n++] = *p;
	} else {
		for (; *p && *p != ',' && *p != '}' && n + 1 < len; p++)
			out[n++] = *p;
	}
	out[n] = 0;
	return out;
}

/* The last line of path that starts with '{' (malloc'd), or NULL. */
static char *last_json_line(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *line = NULL, *keep = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0)
		if (line[0] == '{') {
			free(keep);
			keep = strdup(line);
		}
	free(line);
	fclose(f);
	return keep;
}

int main(int argc, char **argv)
{
	int cases_out = 0;
	const char *cal_path = NULL, *out_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cases"))
			cases_out = 1;
		else if (!cal_path)
			cal_path = argv[i];
		else if (!out_path)
			out_path = argv[i];
		else
			cal_path = NULL, i = argc;
	}
	if (!cal_path || !out_path) {
		fprintf(stderr, "usage: replay_native CALIBRATION NATIVE_OUTPUT [--cases]\n");
		return 2;
	}
	struct tc_calibration cal;
	FILE *f = fopen(cal_path, "r");
	int err = f ? tc_calibration_read(f, &cal) : TC_ESYS;
	if (f)
		fclose(f);
	if (err) {
		fprintf(stderr, "replay_native: %s: %s%s%s\n", cal_path,
		        f ? tc_strerror(err) : "cannot open", f ? ": " : "", f ? tc_error_detail() : "");
		return 2;
	}
	/* The team's model of the run: the default one with the calibration's
	 * line, as model_fidelity --native ran it. */
	struct tc_model md;
	tc_model_default(&md);
	fidelity_line_model(&cal, &md);
	char *json = last_json_line(out_path);
	if (!json || !strstr(json, "\"cases\": [")) {
		fprintf(stderr, "replay_native: %s: no native run's JSON line\n", out_path);
		free(json);
		return 2;
	}
	int n = 0, skipped = 0, unchanged = 0, within[3] = {0}, rec20 = 0;
	static const double bound[3] = {0.15, 0.20, 0.25};
	char coll_s[32], topo_s[64], alg_s[64], buf[64], failed[32];
	for (const char *c = strstr(json, "{\"coll\": "); c; c = strstr(c + 1, "{\"coll\": ")) {
		const char *end = strchr(c, '}');
		if (!end)
			break;
		if (!field(c, end, "coll", coll_s, sizeof coll_s) ||
		    !field(c, end, "topology", topo_s, sizeof topo_s) ||
		    !field(c, end, "algorithm", alg_s, sizeof alg_s) ||
		    !field(c, end, "bytes", buf, sizeof buf) ||
		    field(c, end, "error", failed, sizeof failed)) {
			skipped++;
			continue;
		}
		const size_t bytes = strtoull(buf, NULL, 10);
		double measured = field(c, end, "measured_ns", buf, sizeof buf) ? atof(buf) : NAN;
		double recorded = field(c, end, "predicted_ns", buf, sizeof buf) ? atof(buf) : NAN;
		enum tc_coll coll;
		struct tc_topo *t = NULL;
		if (tc_coll_parse(coll_s, &coll) || tc_topo_parse(topo_s, &t) || !(measured > 0)) {
			tc_topo_destroy(t);
			skipped++;
			continue;
		}
		struct tc_call call = {.coll = coll, .alg = alg_s, .bytes = bytes, .esize = sizeof(double)};
		/* As model_fidelity priced it: a pipeline with the packets the
		 * run counted under the team's model (the calibration's line). */
		if (!strcmp(alg_s, "ring_pipelined"))
			call.packets = tc_cost_ring_r_opt(&md, tc_topo_nodes(t), (double)bytes);
		double pred = NAN, share = NAN, sync = NAN;
		err = tc_calibration_predict(&cal, t, &call, NULL, NULL, &pred);
		if (!err)
			err = tc_calibration_concurrency_ns(&cal, t, &call, &share, &sync);
		tc_topo_destroy(t);
		if (err || !(pred > 0)) {
			skipped++;
			continue;
		}
		const double rel = (measured - pred) / pred, rrel = (measured - recorded) / recorded;
		n++;
		unchanged += fabs(pred - recorded) <= 1e-6 * fmax(1.0, fabs(recorded)) + 0.05;
		for (int b = 0; b < 3; b++)
			within[b] += fabs(rel) <= bound[b];
		rec20 += fabs(rrel) <= 0.20;
		if (cases_out)
			printf("%-14s %-12s %-15s %9zu  measured %12.1f  recorded %12.1f  now %12.1f  "
			       "share %10.1f  sync %7.1f  %+7.1f%%\n",
			       coll_s, topo_s, alg_s, bytes, measured, recorded, pred, share, sync,
			       100 * rel);
	}
	free(json);
	printf("# %d cases (%d skipped): within 15%% %d, 20%% %d, 25%% %d of the prediction now; "
	       "within 20%% of the recorded one %d; %d priced as recorded\n",
	       n, skipped, within[0], within[1], within[2], rec20, unchanged);
	printf("{\"cases\": %d, \"within_15pct\": %d, \"within_20pct\": %d, \"within_25pct\": %d, "
	       "\"recorded_within_20pct\": %d, \"unchanged\": %d, \"skipped\": %d}\n",
	       n, within[0], within[1], within[2], rec20, unchanged, skipped);
	return 0;
}
