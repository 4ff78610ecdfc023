/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_calibrate.c - topocoll calibrate: t_s and t_w of this machine's
 * channels, fitted to ping-pong times (tc_model_calibrate).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "topocoll/calibrate.h"

const char calibrate_help[] =
        "usage: topocoll calibrate [--min-bytes N] [--max-bytes N] [--points K]\n"
        "                          [--reps R] [--regime all|stream|single_copy]\n"
        "                          [--mode native|emulated] [--json] [--plot FILE]\n"
        "                          [options]\n"
        "\n"
        "Measures the native channels between two pinned threads by ping-pong over\n"
        "a range of sizes and fits the Hockney model t_s + m t_w by least squares on\n"
        "relative residuals; prints t_s, t_w, R^2, the worst relative residual, the\n"
        "fits of the two transfer paths (streamed through the ring below the\n"
        "single-copy threshold, copied once above it) and every point.  Natively\n"
        "it also fits t_c, the time per byte combined by a reduction (double sum),\n"
        "and says up to which size the line holds (every residual within 15%)\n"
        "beside the CPU's cache sizes.  The fitted values can be passed to the\n"
        "other commands as --ts, --tw and --tc.\n"
        "The calibrated model (what run --calibrated and bench model --native\n"
        "predict with): a line per segment of sizes, the segments split where the\n"
        "path or the cache level holding a round trip's buffers changes (at least\n"
        "3 points each), judged on every point (R^2, worst residual); o_call,\n"
        "the cost of a collective call beyond its messages (an 8-byte allreduce\n"
        "after a barrier, measured minus predicted); and t_copy, the time per byte\n"
        "of a local copy (a rank's own block, free in the model).\n"
        "  --min-bytes N     smallest size [8]\n"
        "  --max-bytes N     largest size [4M; at most 64M]\n"
        "  --points K        sizes, spaced geometrically [one per power of two]\n"
        "  --reps R          samples per size, the median is kept [15]\n"
        "  --regime R        which fit is reported as ts_ns / tw_ns_per_byte:\n"
        "                    all points, stream or single_copy [all]\n"
        "  --mode M          native [default], or emulated: calibrate an emulated\n"
        "                    team against the model options (--ts, --tw) to check\n"
        "                    the fit\n"
        "  --no-pin          do not pin the threads\n"
        "  --copiers N       concurrency: a team of at most N ranks, one per CPU,\n"
        "                    measures cache-line hand-offs from rank 0 to each, the\n"
        "                    aggregate copy and combine bandwidth of 1..N ranks (and\n"
        "                    the copy of blocks another rank has read, N >= 3), the\n"
        "                    cost of a synchronised round and a step of a ring over\n"
        "                    the channels as ranks grow [the CPUs]\n"
        "  --no-concurrency  do not measure concurrency (the pair's model alone)\n"
        "  --single-copy-min N  the team's single-copy threshold: messages of N\n"
        "                    bytes and more are copied once, smaller ones\n"
        "                    streamed; never: stream everything [library default]\n"
        "  --save FILE       also write the calibration to FILE as text, for run\n"
        "                    --calibration FILE here or on another machine\n"
        "  --json            one JSON object: ts_ns, tw_ns_per_byte, tc_ns_per_byte,\n"
        "                    r2, max_rel_residual, hockney_max_bytes, caches, fits\n"
        "                    (all, stream, single_copy, combine, copy), piecewise,\n"
        "                    segments, call_ns (o_call), tcopy_ns_per_byte, points,\n"
        "                    machine (structure, placement), concurrency; format 2\n"
        "  --plot FILE       one-way time against bytes, log-log (.svg or .png):\n"
        "                    measured points of each path, the fitted lines and\n"
        "                    segments, the\n"
        "                    cache sizes; writes FILE's data (.dat) and script\n"
        "                    (.gp) beside it and runs gnuplot (gnuplot-nox)\n"
        "  model options (--ts, --tw, ...) as for predict; used with --mode emulated\n"
        "examples:\n"
        "  topocoll calibrate\n"
        "  topocoll calibrate --json --max-bytes 16M\n"
        "  topocoll calibrate --plot calibrate.svg\n"
        "  topocoll calibrate --mode emulated --ts 20000 --tw 2 --max-bytes 64K\n";

static const char *const handoff_names[TC_HANDOFF_CLASSES] = {"smt", "cache", "package", "remote"};
static const char *const place_sources[] = {"affinity", "hwloc", "hwloc-xml"};

/* The placement a team of every CPU gets (topocoll/team.h) and the
 * machine's structure; NULL when no team can be made. */
static struct tc_team *machine_team(struct tc_team_info *info)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.p = 1;
	cfg.topology = "chain:1";
	struct tc_team *t = NULL;
	if (tc_team_create(&cfg, &t))
		return NULL;
	tc_team_get_info(t, info);
	int cpus = info->cpus;
	tc_team_destroy(t);
	char spec[32];
	snprintf(spec, sizeof spec, "chain:%d", cpus);
	cfg.p = cpus;
	cfg.topology = spec;
	if (tc_team_create(&cfg, &t))
		return NULL;
	tc_team_get_info(t, info);
	return t;
}

/* A table of aggregate rates measured only since some version (the
 * combines', the shared copies'; n counts, 0 when not measured): a line
 * per size, "name SIZE KiB  aggregate GB/s by WHAT: k:rate ...". */
static void rates_text(const struct tc_calibration *c, const char *name, const char *what,
                       const double (*rate)[TC_CALIBRATE_MAX_COPIERS], int n)
{
	for (int s = 0; s < c->ncopy_sizes && n > 0; s++) {
		printf("  %s %5zu KiB  aggregate GB/s by %s:", name, c->copy_sizes[s] >> 10, what);
		for (int k = 0; k < n; k++)
			printf(" %d:%.1f", c->copiers[k], rate[s][k]);
		printf("\n");
	}
}

/* The same in JSON: an array key of {bytes, count_key, aggregate_bytes_per_ns}. */
static void rates_json(struct cli_json *w, const struct tc_calibration *c, const char *key,
                       const char *count_key, const double (*rate)[TC_CALIBRATE_MAX_COPIERS], int n)
{
	cli_json_arr(w, key);
	for (int s = 0; s < c->ncopy_sizes; s++)
		for (int k = 0; k < n; k++) {
			cli_json_obj(w, NULL);
			cli_json_uint(w, "bytes", c->copy_sizes[s]);
			cli_json_int(w, count_key, c->copiers[k]);
			cli_json_num(w, "aggregate_bytes_per_ns", rate[s][k]);
			cli_json_end_obj(w);
		}
	cli_json_end_arr(w);
}

static void machine_text(const struct tc_calibration *c)
{
	struct tc_team_info in;
	struct tc_team *t = machine_team(&in);
	if (t) {
		printf("machine (%s): %d CPUs here; %d PUs, %d cores, %d packages, %d NUMA nodes, "
		       "%d cache domains (L%d); caches L1d %zu KiB x %d, L2 %zu KiB x %d, L3 %zu KiB x %d\n",
		       place_sources[in.place_source], in.cpus, in.pus, in.cores, in.packages,
		       in.numa_nodes, in.cache_domains, in.cache_domain_level,
		       in.cache_bytes[0] >> 10, in.cache_count[0], in.cache_bytes[1] >> 10,
		       in.cache_count[1], in.cache_bytes[2] >> 10, in.cache_count[2]);
		printf("placement (rank: CPU/core/smt/cache/NUMA/package):");
		for (int r = 0; r < in.p; r++)
			printf(" %d:%d/%d/%d/%d/%d/%d", r, in.place[r].pu, in.place[r].core,
			       in.place[r].smt, in.place[r].cache, in.place[r].numa,
			       in.place[r].package);
		printf("\n");
		tc_team_destroy(t);
	}
	if (c->conc_ranks < 2) {
		printf("concurrency: not measured\n");
		return;
	}
	printf("concurrency (%d ranks, one per CPU; the prediction charges shares and rounds):\n",
	       c->conc_ranks);
	printf("  hand-off   pair (ranks 0, 1) %.1f ns;", c->handoff_pair_ns);
	for (int k = 0; k < TC_HANDOFF_CLASSES; k++)
		if (c->handoff_rank[k] >= 0)
			printf(" %s (rank %d) %.1f ns;", handoff_names[k], c->handoff_rank[k],
			       c->handoff_ns[k]);
	printf("\n  hand-off   from rank 0, ns by rank:");
	for (int j = 1; j < c->conc_ranks; j++)
		printf(" %d:%.0f", j, c->handoff_by_rank_ns[j]);
	printf("\n");
	for (int s = 0; s < c->ncopy_sizes; s++) {
		printf("  copy %5zu KiB  aggregate GB/s by copiers:", c->copy_sizes[s] >> 10);
		for (int k = 0; k < c->ncopiers; k++)
			printf(" %d:%.1f", c->copiers[k], c->copy_bytes_per_ns[s][k]);
		printf("  (share at %d: %.2fx)\n", c->conc_ranks,
		       tc_calibration_share(c, c->conc_ranks, c->copy_sizes[s]));
	}
	rates_text(c, "combine", "combiners", c->combine_bytes_per_ns, c->ncombine);
	rates_text(c, "shared", "copiers of read blocks", c->shared_bytes_per_ns, c->nshared);
	printf("  round      ns per synchronised round by ranks:");
	for (int i = 0; i < c->nsync; i++)
		printf(" %d:%.0f", c->sync_ranks[i], c->sync_ns[i]);
	printf("\n  round      its mean (stalls included), not priced:");
	for (int i = 0; i < c->nsync; i++)
		printf(" %d:%.0f", c->sync_ranks[i], c->sync_mean_ns[i]);
	printf("\n  pairs      ns per round of hypercube pairs by ranks, not priced:");
	for (int i = 0; i < c->nsync; i++)
		if (isfinite(c->pairs_ns[i]))
			printf(" %d:%.0f", c->sync_ranks[i], c->pairs_ns[i]);
	printf("\n");
	if (c->nflag > 0) {
		printf("  flags      ns per round of cache-line flags by ranks:");
		for (int i = 0; i < c->nflag; i++)
			printf(" %d:%.0f", c->sync_ranks[i], c->flag_ns[i]);
		printf("\n");
	}
	for (int s = 0; s < c->nchain_sizes && c->nchain > 0; s++) {
		printf("  chain %4zu KiB  ns per step of a ring over the channels by ranks:",
		       c->chain_sizes[s] >> 10);
		for (int i = 0; i < c->nchain; i++)
			printf(" %d:%.0f", c->sync_ranks[i], c->chain_ns[s][i]);
		printf("  (at %d: %.2fx)\n", c->sync_ranks[c->nchain - 1],
		       tc_calibration_chain_share(c, c->sync_ranks[c->nchain - 1], c->chain_sizes[s]));
	}
}

static void machine_json(struct cli_json *w, const struct tc_calibration *c)
{
	struct tc_team_info in;
	struct tc_team *t = machine_team(&in);
	cli_json_obj(w, "machine");
	if (t) {
		cli_json_str(w, "placement_source", place_sources[in.place_source]);
		cli_json_int(w, "cpus", in.cpus);
		cli_json_int(w, "pus", in.pus);
		cli_json_int(w, "cores", in.cores);
		cli_json_int(w, "packages", in.packages);
		cli_json_int(w, "numa_nodes", in.numa_nodes);
		cli_json_int(w, "cache_domains", in.cache_domains);
		cli_json_int(w, "cache_domain_level", in.cache_domain_level);
		cli_json_arr(w, "caches");
		for (int k = 0; k < 3; k++) {
			cli_json_obj(w, NULL);
			cli_json_int(w, "level", k + 1);
			cli_json_uint(w, "bytes", in.cache_bytes[k]);
			cli_json_int(w, "count", in.cache_count[k]);
			cli_json_end_obj(w);
		}
		cli_json_end_arr(w);
		cli_json_arr(w, "placement");
		for (int r = 0; r < in.p; r++) {
			cli_json_obj(w, NULL);
			cli_json_int(w, "rank", r);
			cli_json_int(w, "cpu", in.place[r].pu);
			cli_json_int(w, "core", in.place[r].core);
			cli_json_int(w, "smt", in.place[r].smt);
			cli_json_int(w, "cache", in.place[r].cache);
			cli_json_int(w, "numa", in.place[r].numa);
			cli_json_int(w, "package", in.place[r].package);
			cli_json_end_obj(w);
		}
		cli_json_end_arr(w);
		tc_team_destroy(t);
	}
	cli_json_end_obj(w);
	cli_json_obj(w, "concurrency");
	cli_json_int(w, "ranks", c->conc_ranks);
	if (c->conc_ranks >= 2) {
		cli_json_num(w, "handoff_pair_ns", c->handoff_pair_ns);
		cli_json_obj(w, "handoff_ns");
		for (int k = 0; k < TC_HANDOFF_CLASSES; k++)
			cli_json_num(w, handoff_names[k], c->handoff_ns[k]);
		cli_json_end_obj(w);
		cli_json_arr(w, "handoff_by_rank_ns"); /* ranks 1 .. ranks - 1 */
		for (int j = 1; j < c->conc_ranks; j++)
			cli_json_num(w, NULL, c->handoff_by_rank_ns[j]);
		cli_json_end_arr(w);
		cli_json_arr(w, "copy");
		for (int s = 0; s < c->ncopy_sizes; s++)
			for (int k = 0; k < c->ncopiers; k++) {
				cli_json_obj(w, NULL);
				cli_json_uint(w, "bytes", c->copy_sizes[s]);
				cli_json_int(w, "copiers", c->copiers[k]);
				cli_json_num(w, "aggregate_bytes_per_ns", c->copy_bytes_per_ns[s][k]);
				cli_json_num(w, "share",
				             tc_calibration_share(c, c->copiers[k], c->copy_sizes[s]));
				cli_json_end_obj(w);
			}
		cli_json_end_arr(w);
		rates_json(w, c, "combine", "combiners", c->combine_bytes_per_ns, c->ncombine);
		rates_json(w, c, "shared", "copiers", c->shared_bytes_per_ns, c->nshared);
		cli_json_arr(w, "sync");
		for (int i = 0; i < c->nsync; i++) {
			cli_json_obj(w, NULL);
			cli_json_int(w, "ranks", c->sync_ranks[i]);
			cli_json_num(w, "round_ns", c->sync_ns[i]);
			cli_json_num(w, "extra_ns", tc_calibration_sync_ns(c, c->sync_ranks[i]));
			if (i < c->nflag)
				cli_json_num(w, "flag_round_ns", c->flag_ns[i]);
			cli_json_num(w, "mean_round_ns", c->sync_mean_ns[i]);
			cli_json_num(w, "pairs_round_ns", c->pairs_ns[i]);
			cli_json_end_obj(w);
		}
		cli_json_end_arr(w);
		cli_json_arr(w, "chain");
		for (int s = 0; s < c->nchain_sizes && c->nchain > 0; s++)
			for (int i = 0; i < c->nchain; i++) {
				cli_json_obj(w, NULL);
				cli_json_uint(w, "bytes", c->chain_sizes[s]);
				cli_json_int(w, "ranks", c->sync_ranks[i]);
				cli_json_num(w, "step_ns", c->chain_ns[s][i]);
				cli_json_num(w, "share",
				             tc_calibration_chain_share(c, c->sync_ranks[i],
				                                        c->chain_sizes[s]));
				cli_json_end_obj(w);
			}
		cli_json_end_arr(w);
	}
	cli_json_end_obj(w);
}

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

static const char *seg_path(const struct tc_calibration_segment *g)
{
	return g->single_copy < 0 ? "both" : g->single_copy ? "single_copy" : "stream";
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

/* Writes base.dat and base.gp and runs gnuplot: measured points per path,
 * the all / stream / single_copy lines, the cache sizes as vertical lines
 * (at m = size / 2: the two buffers of a round trip fill it). */
static int calibrate_plot(const char *file, const struct tc_calibration *c)
{
	size_t fl = strlen(file);
	int svg = fl > 4 && !strcmp(file + fl - 4, ".svg");
	int png = fl > 4 && !strcmp(file + fl - 4, ".png");
	if (!svg && !png)
		return cli_usage("--plot: expected a .svg or .png file, got '%s'", file);
	char dat[4096], gp[4096];
	snprintf(dat, sizeof dat, "%.*s.dat", (int)(fl - 4), file);
	snprintf(gp, sizeof gp, "%.*s.gp", (int)(fl - 4), file);
	FILE *fd = fopen(dat, "w");
	FILE *fg = fd ? fopen(gp, "w") : NULL;
	if (!fd || !fg) {
		if (fd)
			fclose(fd);
		return cli_fail("--plot: cannot write %s", fd ? gp : dat);
	}
	fprintf(fd, "# topocoll calibrate: bytes one_way_ns(stream) one_way_ns(single copy) min_ns "
	            "max_ns combine_ns\n");
	for (int k = 0; k < c->npoints; k++) {
		const struct tc_calibration_point *q = &c->points[k];
		fprintf(fd, "%zu %.6g %.6g %.6g %.6g %.6g\n", q->bytes,
		        q->single_copy ? NAN : q->one_way_ns, q->single_copy ? q->one_way_ns : NAN,
		        q->min_ns, q->max_ns, q->combine_ns);
	}
	fclose(fd);
	fprintf(fg, "# topocoll calibrate plot: gnuplot %s\n", gp);
	fprintf(fg, svg ? "set terminal svg size 1000,650 dynamic background rgb 'white'\n"
	                : "set terminal pngcairo size 1000,650\n");
	fprintf(fg, "set output '%s'\nset logscale xy\nset grid\nset key left top noenhanced\n", file);
	fprintf(fg, "set xlabel 'message bytes m'\nset ylabel 'one-way time (ns)'\n");
	fprintf(fg,
	        "set title \"calibrate: t_s %.1f ns, t_w %.4g ns/B, R^2 %.4f, worst residual "
	        "%.1f%%\" noenhanced\n",
	        c->ts_ns, c->tw_ns_per_byte, c->r2, 100 * c->max_rel_residual);
	static const char *const lv[3] = {"L1d", "L2", "L3"};
	for (int k = 0; k < 3; k++)
		if (c->cache_bytes[k] && c->cache_bytes[k] / 2 >= c->points[0].bytes &&
		    c->cache_bytes[k] / 2 <= c->points[c->npoints - 1].bytes)
			fprintf(fg,
			        "set arrow from first %zu, graph 0 to first %zu, graph 1 nohead dt 2 lw 1.5 "
			        "lc rgb '#707070'\n"
			        "set label '%s / 2' at %zu, graph 0.95 right offset -0.5,0\n",
			        c->cache_bytes[k] / 2, c->cache_bytes[k] / 2, lv[k],
			        c->cache_bytes[k] / 2);
	fprintf(fg, "set xrange [%g:%g]\n", (double)c->points[0].bytes / 1.5,
	        (double)c->points[c->npoints - 1].bytes * 1.5);
	fprintf(fg,
	        "plot '%s' using 1:($2==$2 ? $2 : $3):4:5 with yerrorbars pt 0 lc rgb '#aaaaaa' "
	        "title 'min..max', \\\n"
	        "  '' using 1:2 with points pt 7 ps 1.2 lc 1 title 'streamed', \\\n"
	        "  '' using 1:3 with points pt 5 ps 1.2 lc 2 title 'single copy'",
	        dat);
	const struct tc_calibration_fit *fits[3] = {&c->all, &c->stream, &c->single_copy};
	static const char *const names[3] = {"all", "stream", "single_copy"};
	for (int k = 0; k < 3; k++)
		if (fits[k]->npoints >= 2 && isfinite(fits[k]->ts_ns))
			fprintf(fg, ", \\\n  (%.6g + %.6g * x) with lines lw %d lc %d title 'fit %s'",
			        fits[k]->ts_ns, fits[k]->tw_ns_per_byte, k ? 1 : 2, k + 3, names[k]);
	for (int k = 0; k < c->nsegments; k++) {
		const struct tc_calibration_segment *g = &c->segments[k];
		if (g->fit.npoints >= 2 && isfinite(g->fit.ts_ns))
			fprintf(fg,
			        ", \\\n  (x >= %zu && x <= %zu ? %.6g + %.6g * x : 1/0) with lines lw 2 "
			        "dt 3 lc rgb '#d00000' title '%s'",
			        g->lo_bytes, g->hi_bytes, g->fit.ts_ns, g->fit.tw_ns_per_byte,
			        k ? "" : "segments (calibrated model)");
	}
	fprintf(fg, "\n");
	fclose(fg);
	return cli_gnuplot(file, gp, dat);
}

int cmd_calibrate(int argc, char **argv)
{
	struct tc_calibrate_opts co;
	memset(&co, 0, sizeof co);
	struct cli_model m;
	cli_model_init(&m);
	int json = 0;
	const char *plot = NULL, *save = NULL;
	for (int i = 0; i < argc; i++) {
		const char *v;
		int r;
		uint64_t u;
		long l;
		if (cli_is_help(argv[i])) {
			cli_help_print(stdout, calibrate_help);
			return CLI_OK;
		} else if ((r = cli_opt(argc, argv, &i, "--save", &v)) != 0) {
			if (r != 1)
				return r;
			save = v;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if ((r = cli_opt(argc, argv, &i, "--plot", &v)) != 0) {
			if (r != 1)
				return r;
			size_t vl = strlen(v);
			if (vl < 5 || (strcmp(v + vl - 4, ".svg") && strcmp(v + vl - 4, ".png")))
				return cli_usage("--plot: expected a .svg or .png file, got '%s'", v);
			plot = v;
		} else if (!strcmp(argv[i], "--no-pin")) {
			co.no_pin = 1;
		} else if (!strcmp(argv[i], "--no-concurrency")) {
			co.max_copiers = -1;
		} else if ((r = cli_opt(argc, argv, &i, "--copiers", &v)) != 0) {
			if (r != 1 || cli_parse_long("--copiers", v, 2, TC_CALIBRATE_MAX_COPIERS, &l))
				return CLI_USAGE;
			co.max_copiers = (int)l;
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
				return cli_usage("--regime: expected all, stream or single_copy, got '%s'",
				                 v);
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
	/* Opened first: a file that cannot be written fails before the
	 * measurement, not after it. */
	FILE *sf = save ? fopen(save, "w") : NULL;
	if (save && !sf)
		return cli_usage("--save: cannot write %s: %s", save, strerror(errno));
	struct tc_calibration c;
	int err = tc_model_calibrate(&co, &c);
	if (!err && sf && (tc_calibration_write(&c, sf) || fflush(sf))) {
		fclose(sf);
		return cli_fail("--save: writing %s failed", save);
	}
	if (sf && fclose(sf) && !err)
		return cli_fail("--save: writing %s failed", save);
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
		cli_json_int(&w, "format", 2); /* 2: machine and concurrency added */
		cli_json_str(&w, "mode", c.mode == TC_MODE_EMULATED ? "emulated" : "native");
		cli_json_str(&w, "regime", regime);
		cli_json_num(&w, "ts_ns", c.ts_ns);
		cli_json_num(&w, "tw_ns_per_byte", c.tw_ns_per_byte);
		cli_json_num(&w, "tc_ns_per_byte", c.tc_ns_per_byte);
		cli_json_num(&w, "r2", c.r2);
		cli_json_num(&w, "max_rel_residual", c.max_rel_residual);
		cli_json_uint(&w, "single_copy_min", c.single_copy_min);
		cli_json_uint(&w, "hockney_max_bytes", c.hockney_max_bytes);
		cli_json_num(&w, "residual_ok", TC_CALIBRATE_RESIDUAL_OK);
		cli_json_obj(&w, "caches");
		cli_json_uint(&w, "l1d_bytes", c.cache_bytes[0]);
		cli_json_uint(&w, "l2_bytes", c.cache_bytes[1]);
		cli_json_uint(&w, "l3_bytes", c.cache_bytes[2]);
		cli_json_end_obj(&w);
		cli_json_obj(&w, "fits");
		fit_json(&w, "all", &c.all);
		fit_json(&w, "stream", &c.stream);
		fit_json(&w, "single_copy", &c.single_copy);
		fit_json(&w, "combine", &c.combine);
		fit_json(&w, "copy", &c.copy);
		cli_json_end_obj(&w);
		cli_json_num(&w, "tcopy_ns_per_byte", c.tcopy_ns_per_byte);
		cli_json_obj(&w, "piecewise");
		cli_json_int(&w, "points", c.piecewise.npoints);
		cli_json_int(&w, "segments", c.nsegments);
		cli_json_num(&w, "r2", c.piecewise.r2);
		cli_json_num(&w, "max_rel_residual", c.piecewise.max_rel_residual);
		cli_json_uint(&w, "max_bytes", c.piecewise_max_bytes);
		cli_json_end_obj(&w);
		cli_json_arr(&w, "segments");
		for (int k = 0; k < c.nsegments; k++) {
			const struct tc_calibration_segment *g = &c.segments[k];
			cli_json_obj(&w, NULL);
			cli_json_uint(&w, "lo_bytes", g->lo_bytes);
			cli_json_uint(&w, "hi_bytes", g->hi_bytes);
			cli_json_int(&w, "points", g->npoints);
			cli_json_str(&w, "path", seg_path(g));
			cli_json_int(&w, "cache_level", g->cache_level);
			cli_json_num(&w, "ts_ns", g->fit.ts_ns);
			cli_json_num(&w, "tw_ns_per_byte", g->fit.tw_ns_per_byte);
			cli_json_num(&w, "r2", g->fit.r2);
			cli_json_num(&w, "max_rel_residual", g->fit.max_rel_residual);
			cli_json_num(&w, "exchange_ratio", g->exchange_ratio);
			cli_json_num(&w, "recv_ts_ns", g->recv_ts_ns);
			cli_json_num(&w, "recv_tc_ns_per_byte", g->recv_tc_ns_per_byte);
			cli_json_end_obj(&w);
		}
		cli_json_end_arr(&w);
		cli_json_num(&w, "call_ns", c.call_ns);
		cli_json_num(&w, "call_measured_ns", c.call_measured_ns);
		cli_json_num(&w, "call_predicted_ns", c.call_predicted_ns);
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
			cli_json_num(&w, "combine_ns", q->combine_ns);
			cli_json_int(&w, "cache_level", q->cache_level);
			cli_json_int(&w, "segment", q->segment);
			cli_json_num(&w, "seg_residual", q->seg_residual);
			cli_json_num(&w, "exchange_ns", q->exchange_ns);
			cli_json_num(&w, "reduce_ns", q->reduce_ns);
			cli_json_num(&w, "copy_ns", q->copy_ns);
			cli_json_end_obj(&w);
		}
		cli_json_end_arr(&w);
		machine_json(&w, &c);
		cli_json_end_obj(&w);
		return plot ? calibrate_plot(plot, &c) : CLI_OK;
	}
	char b1[32], b2[32], b3[32], b4[32];
	printf("channels of this machine (%s mode), Hockney fit t_s + m t_w on %s points:\n",
	       c.mode == TC_MODE_EMULATED ? "emulated" : "native", regime);
	printf("  t_s  %.1f ns\n  t_w  %.4g ns/B  (%.3g GB/s)\n  R^2  %.4f, worst relative residual "
	       "%.1f%%\n",
	       c.ts_ns, c.tw_ns_per_byte, c.tw_ns_per_byte > 0 ? 1 / c.tw_ns_per_byte : INFINITY,
	       c.r2, 100 * c.max_rel_residual);
	printf("fits (single-copy threshold %s):\n", cli_bytes(c.single_copy_min, b1, sizeof b1));
	fit_text("all", &c.all);
	fit_text("stream", &c.stream);
	fit_text("single_copy", &c.single_copy);
	if (c.combine.npoints >= 2)
		printf("  %-12s %3d points  fixed %7.1f ns  t_c %8.4g ns/B  R^2 %.4f  worst residual "
		       "%.1f%%\n",
		       "combine", c.combine.npoints, c.combine.ts_ns, c.combine.tw_ns_per_byte,
		       c.combine.r2, 100 * c.combine.max_rel_residual);
	static const char *const lv[5] = {"?", "L1d", "L2", "L3", "mem"};
	printf("calibrated model (a line per path and cache level; run --calibrated and bench model "
	       "--native predict with it):\n");
	printf("  piecewise    %3d points  %d segments  R^2 %.4f  worst residual %.1f%%  ",
	       c.piecewise.npoints, c.nsegments, c.piecewise.r2, 100 * c.piecewise.max_rel_residual);
	if (c.piecewise_max_bytes)
		printf("(every residual within %.0f%% up to %s)\n", 100 * TC_CALIBRATE_RESIDUAL_OK,
		       cli_bytes(c.piecewise_max_bytes, b1, sizeof b1));
	else
		printf("(a residual above %.0f%% from the smallest size on)\n",
		       100 * TC_CALIBRATE_RESIDUAL_OK);
	for (int k = 0; k < c.nsegments; k++) {
		const struct tc_calibration_segment *g = &c.segments[k];
		char name[64];
		snprintf(name, sizeof name, "%s..%s %s %s", cli_size_str(g->lo_bytes, b1, sizeof b1),
		         cli_size_str(g->hi_bytes, b2, sizeof b2), seg_path(g),
		         g->cache_level < 0 ? "mixed"
		                            : lv[(unsigned)g->cache_level <= 4 ? g->cache_level : 0]);
		printf("  %d %-26s %3d points  t_s %9.1f ns  t_w %8.4g ns/B  R^2 %.4f  worst residual "
		       "%.1f%%  exchange %.2fx one-way, combining receive +%.1f ns +%.4g ns/B\n",
		       k, name, g->fit.npoints, g->fit.ts_ns, g->fit.tw_ns_per_byte, g->fit.r2,
		       100 * g->fit.max_rel_residual, g->exchange_ratio, g->recv_ts_ns,
		       g->recv_tc_ns_per_byte);
	}
	if (c.copy.npoints >= 2)
		printf("  t_copy       %.4g ns/B local copy (a rank's own block; fixed %.1f ns, R^2 "
		       "%.4f, worst residual %.1f%%)\n",
		       c.copy.tw_ns_per_byte, c.copy.ts_ns, c.copy.r2, 100 * c.copy.max_rel_residual);
	if (c.mode == TC_MODE_EMULATED)
		printf("  o_call       0 ns (emulated: nothing is charged per call)\n");
	else
		printf("  o_call       %.1f ns per collective call (an 8 B allreduce after a barrier: "
		       "%s measured, %s predicted by the segments)\n",
		       c.call_ns, cli_time(c.call_measured_ns, b1), cli_time(c.call_predicted_ns, b2));
	printf("caches (L1d / L2 / L3): %s / %s / %s; ",
	       c.cache_bytes[0] ? cli_bytes(c.cache_bytes[0], b1, sizeof b1) : "?",
	       c.cache_bytes[1] ? cli_bytes(c.cache_bytes[1], b2, sizeof b2) : "?",
	       c.cache_bytes[2] ? cli_bytes(c.cache_bytes[2], b3, sizeof b3) : "?");
	if (c.hockney_max_bytes)
		printf("the fit holds (every residual within %.0f%%) up to %s\n",
		       100 * TC_CALIBRATE_RESIDUAL_OK, cli_bytes(c.hockney_max_bytes, b4, sizeof b4));
	else
		printf("the fit of all points misses the smallest size by more than %.0f%%: use "
		       "the segments\n",
		       100 * TC_CALIBRATE_RESIDUAL_OK);
	printf("points (residual: against the line of all points; seg: against its segment's):\n"
	       "  %10s %12s %12s %12s %9s %-11s %5s %12s %4s %8s %12s\n",
	       "bytes", "one-way", "min", "max", "residual", "path", "cache", "combine", "seg",
	       "seg res", "exchange");
	for (int k = 0; k < c.npoints; k++) {
		const struct tc_calibration_point *q = &c.points[k];
		char b5[32];
		char b6[32];
		printf("  %10s %12s %12s %12s %8.1f%% %-11s %5s %12s %4d %7.1f%% %12s\n",
		       cli_size_str(q->bytes, b1, sizeof b1), cli_time(q->one_way_ns, b2),
		       cli_time(q->min_ns, b3), cli_time(q->max_ns, b4), 100 * q->residual,
		       q->single_copy ? "single-copy" : "stream",
		       lv[(unsigned)q->cache_level <= 4 ? q->cache_level : 0],
		       isfinite(q->combine_ns) ? cli_time(q->combine_ns, b5) : "-", q->segment,
		       100 * q->seg_residual,
		       isfinite(q->exchange_ns) ? cli_time(q->exchange_ns, b6) : "-");
	}
	if (isfinite(c.tc_ns_per_byte))
		printf("use: --ts %s --tw %s --tc %s\n", cli_num(round(c.ts_ns * 10) / 10, b1),
		       cli_num(round(c.tw_ns_per_byte * 1e4) / 1e4, b2),
		       cli_num(round(c.tc_ns_per_byte * 1e4) / 1e4, b3));
	else
		printf("use: --ts %s --tw %s\n", cli_num(round(c.ts_ns * 10) / 10, b1),
		       cli_num(round(c.tw_ns_per_byte * 1e4) / 1e4, b2));
	machine_text(&c);
	return plot ? calibrate_plot(plot, &c) : CLI_OK;
}
