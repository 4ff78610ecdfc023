/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_calibrate.c - topocoll calibrate: t_s and t_w of this machine's
 * channels, fitted to ping-pong times (tc_model_calibrate).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "topocoll/calibrate.h"

const char calibrate_help[] =
	"usage: topocoll calibrate [--min-bytes N] [--max-bytes N] [--points K]\n"
	"                          [--reps R] [--regime all|stream|single_copy]\n"
	"                          [--mode native|emulated] [--json] [options]\n"
	"\n"
	"Measures the native channels between two pinned threads by ping-pong over\n"
	"a range of sizes and fits the Hockney model t_s + m t_w by least squares on\n"
	"relative residuals; prints t_s, t_w, R^2, the worst relative residual, the\n"
	"fits of the two transfer paths (streamed through the ring below the\n"
	"single-copy threshold, copied once above it) and every point.  The\n"
	"fitted values can be passed to the other commands as --ts and --tw.\n"
	"  --min-bytes N     smallest size [8]\n"
	"  --max-bytes N     largest size [1M; at most 64M]\n"
	"  --points K        sizes, spaced geometrically [one per power of two]\n"
	"  --reps R          samples per size, the median is kept [15]\n"
	"  --regime R        which fit is reported as ts_ns / tw_ns_per_byte:\n"
	"                    all points, stream or single_copy [all]\n"
	"  --mode M          native [default], or emulated: calibrate an emulated\n"
	"                    team against the model options (--ts, --tw) to check\n"
	"                    the fit\n"
	"  --no-pin          do not pin the two threads\n"
	"  --single-copy-min N  the team's single-copy threshold: messages of N\n"
	"                    bytes and more are copied once, smaller ones\n"
	"                    streamed; never: stream everything [library default]\n"
	"  --json            one JSON object: ts_ns, tw_ns_per_byte, r2,\n"
	"                    max_rel_residual, fits, points\n"
	"  model options (--ts, --tw, ...) as for predict; used with --mode emulated\n"
	"examples:\n"
	"  topocoll calibrate\n"
	"  topocoll calibrate --json --max-bytes 16M\n"
	"  topocoll calibrate --mode emulated --ts 20000 --tw 2 --max-bytes 64K\n";

static void fit_json(struct cli_json *w, const char *key, const struct tc_calibration_fit *f)
{
	cli_json_obj(w, key);
	cli_json_int(w, "points", f->npoints);
	cli_json_num(w, "ts_ns", f->ts_ns);
	cli_json_num(w, "tw_ns_per_byte", f->tw_ns_per_byte);
	cli_json_num(w, "r2", f->r2);
	cli_json_num(w, "max_rel_residual", f->max_rel_residual);
	cli_json_end_obj(w);
}

static void fit_text(const char *name, const struct tc_calibration_fit *f)
{
	if (f->npoints < 2) {
		printf("  %-12s %3d points  (no fit)\n", name, f->npoints);
		return;
	}
	printf("  %-12s %3d points  t_s %9.1f ns  t_w %8.4g ns/B  R^2 %.4f  worst residual %.1f%%\n",
	       name, f->npoints, f->ts_ns, f->tw_ns_per_byte, f->r2, 100 * f->max_rel_residual);
}

int cmd_calibrate(int argc, char **argv)
{
	struct tc_calibrate_opts co;
	memset(&co, 0, sizeof co);
	struct cli_model m;
	cli_model_init(&m);
	int json = 0;
	for (int i = 0; i < argc; i++) {
		const char *v;
		int r;
		uint64_t u;
		long l;
		if (cli_is_help(argv[i])) {
			cli_help_print(stdout, calibrate_help);
			return CLI_OK;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--no-pin")) {
			co.no_pin = 1;
		} else if ((r = cli_opt(argc, argv, &i, "--single-copy-min", &v)) != 0) {
			if (r != 1)
				return r;
			if (!strcmp(v, "never"))
				co.single_copy_min = SIZE_MAX;
			else if (cli_parse_size("--single-copy-min", v, (uint64_t)1 << 40, &u))
				return CLI_USAGE;
			else
				co.single_copy_min = (size_t)u;
		} else if ((r = cli_opt(argc, argv, &i, "--min-bytes", &v)) != 0) {
			if (r != 1 || cli_parse_size("--min-bytes", v, (uint64_t)64 << 20, &u))
				return CLI_USAGE;
			if (!u)
				return cli_usage("--min-bytes: at least 1 byte");
			co.min_bytes = (size_t)u;
		} else if ((r = cli_opt(argc, argv, &i, "--max-bytes", &v)) != 0) {
			if (r != 1 || cli_parse_size("--max-bytes", v, (uint64_t)64 << 20, &u))
				return CLI_USAGE;
			if (!u)
				return cli_usage("--max-bytes: at least 1 byte");
			co.max_bytes = (size_t)u;
		} else if ((r = cli_opt(argc, argv, &i, "--points", &v)) != 0) {
			if (r != 1 || cli_parse_long("--points", v, 2, TC_CALIBRATE_MAX_POINTS, &l))
				return CLI_USAGE;
			co.npoints = (int)l;
		} else if ((r = cli_opt(argc, argv, &i, "--reps", &v)) != 0) {
			if (r != 1 || cli_parse_long("--reps", v, 1, 100000, &l))
				return CLI_USAGE;
			co.reps = (int)l;
		} else if ((r = cli_opt(argc, argv, &i, "--regime", &v)) != 0) {
			if (r != 1)
				return r;
			if (!strcmp(v, "all"))
				co.regime = TC_CALIBRATE_ALL;
			else if (!strcmp(v, "stream"))
				co.regime = TC_CALIBRATE_STREAM;
			else if (!strcmp(v, "single_copy"))
				co.regime = TC_CALIBRATE_SINGLE_COPY;
			else
				return cli_usage("--regime: expected all, stream or single_copy, got '%s'", v);
		} else if ((r = cli_opt(argc, argv, &i, "--mode", &v)) != 0) {
			if (r != 1)
				return r;
			if (!strcmp(v, "native"))
				co.mode = TC_MODE_NATIVE;
			else if (!strcmp(v, "emulated"))
				co.mode = TC_MODE_EMULATED;
			else
				return cli_usage("--mode: expected native or emulated, got '%s'", v);
		} else if ((r = cli_model_opt(argc, argv, &i, &m)) != 0) {
			if (r != 1)
				return r;
		} else {
			return cli_unknown("calibrate", argv[i]);
		}
	}
	if (co.min_bytes && co.max_bytes && co.min_bytes > co.max_bytes)
		return cli_usage("calibrate: --min-bytes is above --max-bytes");
	co.model = m.md;
	struct tc_calibration c;
	int err = tc_model_calibrate(&co, &c);
	if (err == TC_EINVAL)
		return cli_usage("calibrate: the library rejects these options: %s", tc_strerror(err));
	if (err)
		return cli_fail("calibrate failed: %s (%s)", tc_strerror(err), tc_err_name(err));
	static const char *const regimes[] = {"all", "stream", "single_copy"};
	const char *regime = (unsigned)c.regime < 3 ? regimes[c.regime] : "?";
	if (json) {
		struct cli_json w;
		cli_json_init(&w, stdout);
		cli_json_obj(&w, NULL);
		cli_json_str(&w, "mode", c.mode == TC_MODE_EMULATED ? "emulated" : "native");
		cli_json_str(&w, "regime", regime);
		cli_json_num(&w, "ts_ns", c.ts_ns);
		cli_json_num(&w, "tw_ns_per_byte", c.tw_ns_per_byte);
		cli_json_num(&w, "r2", c.r2);
		cli_json_num(&w, "max_rel_residual", c.max_rel_residual);
		cli_json_uint(&w, "single_copy_min", c.single_copy_min);
		cli_json_obj(&w, "fits");
		fit_json(&w, "all", &c.all);
		fit_json(&w, "stream", &c.stream);
		fit_json(&w, "single_copy", &c.single_copy);
		cli_json_end_obj(&w);
		cli_json_arr(&w, "points");
		for (int k = 0; k < c.npoints; k++) {
			const struct tc_calibration_point *q = &c.points[k];
			cli_json_obj(&w, NULL);
			cli_json_uint(&w, "bytes", q->bytes);
			cli_json_num(&w, "one_way_ns", q->one_way_ns);
			cli_json_num(&w, "min_ns", q->min_ns);
			cli_json_num(&w, "max_ns", q->max_ns);
			cli_json_bool(&w, "single_copy", q->single_copy);
			cli_json_num(&w, "residual", q->residual);
			cli_json_end_obj(&w);
		}
		cli_json_end_arr(&w);
		cli_json_end_obj(&w);
		return CLI_OK;
	}
	char b1[32], b2[32], b3[32], b4[32];
	printf("channels of this machine (%s mode), Hockney fit t_s + m t_w on %s points:\n",
	       c.mode == TC_MODE_EMULATED ? "emulated" : "native", regime);
	printf("  t_s  %.1f ns\n  t_w  %.4g ns/B  (%.3g GB/s)\n  R^2  %.4f, worst relative residual "
	       "%.1f%%\n",
	       c.ts_ns, c.tw_ns_per_byte,
	       c.tw_ns_per_byte > 0 ? 1 / c.tw_ns_per_byte : INFINITY, c.r2,
	       100 * c.max_rel_residual);
	printf("fits (single-copy threshold %s):\n", cli_bytes(c.single_copy_min, b1, sizeof b1));
	fit_text("all", &c.all);
	fit_text("stream", &c.stream);
	fit_text("single_copy", &c.single_copy);
	printf("points:\n  %10s %12s %12s %12s %9s %s\n", "bytes", "one-way", "min", "max", "residual",
	       "path");
	for (int k = 0; k < c.npoints; k++) {
		const struct tc_calibration_point *q = &c.points[k];
		printf("  %10s %12s %12s %12s %8.1f%% %s\n", cli_size_str(q->bytes, b1, sizeof b1),
		       cli_time(q->one_way_ns, b2), cli_time(q->min_ns, b3), cli_time(q->max_ns, b4),
		       100 * q->residual, q->single_copy ? "single-copy" : "stream");
	}
	printf("use: --ts %s --tw %s\n", cli_num(round(c.ts_ns * 10) / 10, b1),
	       cli_num(round(c.tw_ns_per_byte * 1e4) / 1e4, b2));
	return CLI_OK;
}
