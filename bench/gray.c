/* SPDX-License-Identifier: MIT */
/*
 * bench/gray - the reproduction of [HJR-TR-20-92]'s measurements (Ho, Johnsson and
 * Raghunath, TR-20-92, figures 4 and 5): Gray-to-binary permutation by
 * algorithms GB1, GB2 and GB3 on n-cubes, n = 4, 5, 6, time against the
 * bytes per node K, modelled and emulated, under the parameters of an
 * Intel iPSC/2.
 *
 * The machine: the source's model is one-port, full duplex, nearest-neighbour
 * exchanges of tau + K t_c each (store-and-forward costing: every algorithm
 * here moves data one link at a time).  For the iPSC/2 we take Intel's
 * published figures for its Direct-Connect routing modules: 2.8 MB/s in each
 * direction (t_c = 1 / 2.8e6 s = 0.357 us/B) and a target zero-byte latency
 * of 350 us (tau); see README.md for the source.  --ts and --tw change them.
 *
 * For each (n, K, algorithm):
 *   modelled   tc_predict_call(): the schedule's logical clock, and the
 *              source's closed form beside it (formulas (1), (2), (3));
 *   emulated   the real threads, 2^n of them, in TC_MODE_EMULATED with the
 *              same model: every link delays each message by the model, the
 *              wall time is tc_team_last_run().wall_ns, median of --reps.
 * Then the GB3/GB1 speedups at K = 64 KiB against the paper's measured
 * 1.63, 1.67, 1.79, and the break-even K where GB3 overtakes GB1 (closed
 * form: K* = tau / (t_c (n/2 - 1)); emulated: interpolated between the
 * sizes measured) against the paper's measured ~485 B and predicted 1.4 KB.
 *
 * Writes the table to stdout, FILE.csv with --csv FILE.csv, and with
 * --plot FILE.svg the data (FILE.dat), the gnuplot script (FILE.gp) and, when
 * gnuplot is installed, the SVG.  The last line is one JSON object.
 * Usage: gray [--quick] [--reps N] [--ts NS] [--tw NS_PER_BYTE] [--no-emulate]
 *             [--csv FILE] [--plot FILE.svg]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topocoll.h"
#include "stats.h"

#define IPSC2_TS_NS 350000.0      /* Intel: target zero-byte latency */
#define IPSC2_TW_NS (1e9 / 2.8e6) /* Intel: 2.8 MB/s per direction */
#define MAX_SIZES 16
#define NALG 3

static const char *const algs[NALG] = {"gb1", "gb2", "gb3"};
static const int dims[] = {4, 5, 6};
#define NDIM ((int)(sizeof dims / sizeof dims[0]))
/* The paper's measured GB3/GB1 speedups at K = 64 KiB (section 3.4). */
static const double paper_speedup[NDIM] = {1.63, 1.67, 1.79};
#define PAPER_BREAK_EVEN_MEASURED 485.0
#define PAPER_BREAK_EVEN_PREDICTED 1400.0

struct cell {
	int ok;
	double modelled_ns, formula_ns, bound_ns, emulated_ns;
};

struct job {
	const char *alg;
	size_t bytes;
};

static int rank_fn(struct tc_proc *proc, void *arg)
{
	const struct job *j = arg;
	size_t n = j->bytes;
	unsigned char *in = malloc(n ? n : 1), *out = malloc(n ? n : 1);
	if (!in || !out) {
		free(in);
		free(out);
		return TC_ENOMEM;
	}
	memset(in, tc_rank(proc) & 0xff, n);
	struct tc_coll_opts o = {.alg = j->alg};
	int err = tc_gray2binary(proc, in, out, n, TC_BYTE, &o);
	/* The block of rank G(r) must have arrived. */
	unsigned want = (unsigned)tc_rank(proc) ^ ((unsigned)tc_rank(proc) >> 1);
	if (!err && n && (out[0] != (want & 0xff) || out[n - 1] != (want & 0xff)))
		err = TC_EINVAL;
	free(in);
	free(out);
	return err;
}

/* Median emulated wall time of reps runs, ns; NAN on a failure. */
static double emulate(struct tc_team *team, const char *alg, size_t bytes, int reps)
{
	double t[64];
	if (reps > 64)
		reps = 64;
	for (int i = 0; i < reps; i++) {
		struct job j = {alg, bytes};
		if (tc_run(team, rank_fn, &j))
			return NAN;
		struct tc_run_info ri;
		tc_team_last_run(team, &ri);
		t[i] = (double)ri.wall_ns;
	}
	qsort(t, (size_t)reps, sizeof t[0], bench_cmp_double);
	return t[reps / 2];
}

/* K where series a (GB1) stops being faster than b (GB3), interpolated on
 * log K between the two sizes around the crossing; NAN if none. */
static double break_even(const size_t *K, int nk, const double *a, const double *b)
{
	for (int i = 1; i < nk; i++) {
		double d0 = b[i - 1] - a[i - 1], d1 = b[i] - a[i];
		if (isfinite(d0) && isfinite(d1) && d0 > 0 && d1 <= 0) {
			double f = d0 / (d0 - d1);
			return exp(log((double)K[i - 1]) +
			           f * (log((double)K[i]) - log((double)K[i - 1])));
		}
	}
	return NAN;
}

static int write_plot(const char *svg, const size_t *K, int nk,
                      struct cell c[NDIM][NALG][MAX_SIZES], int emulated, double ts, double tw)
{
	char base[1024], path[1100];
	snprintf(base, sizeof base, "%s", svg);
	char *dot = strrchr(base, '.');
	if (dot && !strcmp(dot, ".svg"))
		*dot = 0;
	snprintf(path, sizeof path, "%s.dat", base);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	/* One gnuplot index per (n, algorithm): K, modelled ms, emulated ms. */
	for (int d = 0; d < NDIM; d++)
		for (int a = 0; a < NALG; a++) {
			fprintf(f, "# n=%d %s\n", dims[d], algs[a]);
			for (int k = 0; k < nk; k++)
				if (c[d][a][k].ok)
					fprintf(f, "%zu %.6f %.6f\n", K[k], c[d][a][k].modelled_ns / 1e6,
					        emulated ? c[d][a][k].emulated_ns / 1e6 : NAN);
			fprintf(f, "\n\n");
		}
	fclose(f);
	snprintf(path, sizeof path, "%s.gp", base);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f,
	        "set terminal svg size 1200,420 dynamic font 'sans,11'\n"
	        "set output '%s'\n"
	        "set multiplot layout 1,%d title 'Gray-to-binary on an n-cube, iPSC/2 model "
	        "(tau %.0f us, t_c %.3f us/B): lines modelled, points emulated'\n"
	        "set logscale xy\nset xlabel 'K (bytes per node)'\nset ylabel 'time (ms)'\n"
	        "set key top left\nset grid\n",
	        svg, NDIM, ts / 1e3, tw / 1e3);
	for (int d = 0; d < NDIM; d++) {
		fprintf(f, "set title 'n = %d (%d nodes)'\nplot ", dims[d], 1 << dims[d]);
		for (int a = 0; a < NALG; a++) {
			int idx = d * NALG + a;
			fprintf(f, "%s'%s.dat' index %d using 1:2 with lines lc %d lw 2 title '%s'",
			        a ? ", " : "", base, idx, a + 1, algs[a]);
			if (emulated)
				fprintf(f, ", '%s.dat' index %d using 1:3 with points lc %d pt 7 notitle",
				        base, idx, a + 1);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "unset multiplot\n");
	fclose(f);
	char cmd[2300];
	snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>/dev/null", path);
	if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
		fprintf(stderr,
		        "gray: gnuplot not found (apt-get install gnuplot-nox); wrote %s.dat "
		        "and %s.gp\n",
		        base, base);
		return 1;
	}
	return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int quick = 0, reps = 3, emul = 1;
	double ts = IPSC2_TS_NS, tw = IPSC2_TW_NS;
	const char *csv = NULL, *plot = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = 1;
		} else if (!strcmp(argv[i], "--no-emulate")) {
			emul = 0;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--ts") && i + 1 < argc) {
			ts = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--tw") && i + 1 < argc) {
			tw = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
			csv = argv[++i];
		} else if (!strcmp(argv[i], "--plot") && i + 1 < argc) {
			plot = argv[++i];
		} else {
			fprintf(stderr, "usage: gray [--quick] [--reps N] [--ts NS] [--tw NS_PER_BYTE] "
			                "[--no-emulate] [--csv FILE] [--plot FILE.svg]\n");
			return 2;
		}
	}
	if (reps < 1 || !(ts >= 0) || !(tw >= 0)) {
		fprintf(stderr, "gray: --reps >= 1, --ts and --tw >= 0\n");
		return 2;
	}
	if (quick)
		reps = 1;
	/* K: 16 B .. 64 KiB doubling (quick: 64 B .. 64 KiB by 8). */
	size_t K[MAX_SIZES];
	int nk = 0;
	for (size_t k = quick ? 64 : 16; k <= 65536; k *= quick ? 8 : 2)
		K[nk++] = k;
	if (K[nk - 1] != 65536)
		K[nk++] = 65536;

	struct tc_model md;
	tc_model_default(&md);
	md.ts_ns = ts;
	md.tw_ns = tw;
	md.th_ns = 0;
	md.tc_ns = 0;
	md.ports = TC_PORTS_ONE;
	md.duplex = TC_DUPLEX_FULL;
	md.switching = TC_SWITCH_SF;

	static struct cell c[NDIM][NALG][MAX_SIZES];
	int failures = 0, missing = 0;
	printf("# [HJR-TR-20-92] reproduction: Gray-to-binary, GB1/GB2/GB3, iPSC/2 model tau = %.1f us, "
	       "t_c = %.4f us/B (one-port, full duplex, SF)\n",
	       ts / 1e3, tw / 1e3);
	printf("%-3s %8s %-4s %14s %14s %14s %14s %8s\n", "n", "K", "alg", "modelled_ms",
	       "formula_ms", "emulated_ms", "bound_ms", "emu/mod");
	for (int d = 0; d < NDIM; d++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", dims[d]);
		struct tc_topo *t = NULL;
		if (tc_topo_parse(spec, &t))
			return 1;
		struct tc_team *team = NULL;
		if (emul) {
			struct tc_team_config cfg;
			tc_team_config_default(&cfg);
			cfg.topology = spec;
			cfg.model = md;
			cfg.mode = TC_MODE_EMULATED;
			cfg.timeout_ms = 600000;
			if (tc_team_create(&cfg, &team)) {
				fprintf(stderr, "gray: cannot create an emulated team on %s\n", spec);
				return 1;
			}
		}
		for (int a = 0; a < NALG; a++)
			for (int k = 0; k < nk; k++) {
				struct cell *x = &c[d][a][k];
				struct tc_call call = {.coll = TC_COLL_GRAY2BINARY,
				                       .alg = algs[a],
				                       .bytes = K[k],
				                       .esize = 1};
				struct tc_prediction pr;
				int err = tc_predict_call(t, &md, &call, &pr);
				if (err) {
					missing++;
					printf("%-3d %8zu %-4s %s\n", dims[d], K[k], algs[a],
					       tc_err_name(err));
					continue;
				}
				x->ok = 1;
				x->modelled_ns = (double)pr.modelled_ps / TC_PS_PER_NS;
				x->formula_ns = pr.formula_ns;
				x->bound_ns = pr.lower_bound_ns;
				x->emulated_ns = emul ? emulate(team, algs[a], K[k], reps) : NAN;
				if (emul && !isfinite(x->emulated_ns))
					failures++;
				printf("%-3d %8zu %-4s %14.3f %14.3f %14.3f %14.3f %8.3f\n",
				       dims[d], K[k], algs[a], x->modelled_ns / 1e6,
				       x->formula_ns / 1e6, x->emulated_ns / 1e6, x->bound_ns / 1e6,
				       x->emulated_ns / x->modelled_ns);
				fflush(stdout);
			}
		tc_team_destroy(team);
		tc_topo_destroy(t);
	}

	/* Speedups at 64 KiB and break-even points. */
	printf("\n%-3s %12s %12s %12s %10s | %12s %12s %12s %12s\n", "n", "GB3/GB1 mod", "GB3/GB1 emu",
	       "paper meas.", "2(n-1)/n", "K* formula", "K* modelled", "K* emulated", "paper");
	double sp_mod[NDIM], sp_emu[NDIM], be_f[NDIM], be_m[NDIM], be_e[NDIM];
	for (int d = 0; d < NDIM; d++) {
		int n = dims[d], last = nk - 1;
		const struct cell *g1 = c[d][0], *g3 = c[d][2];
		sp_mod[d] = g1[last].ok && g3[last].ok ? g1[last].modelled_ns / g3[last].modelled_ns
		                                       : NAN;
		sp_emu[d] = g1[last].ok && g3[last].ok ? g1[last].emulated_ns / g3[last].emulated_ns
		                                       : NAN;
		be_f[d] = n > 2 && tw > 0 ? ts / (tw * (n / 2.0 - 1)) : NAN;
		double m1[MAX_SIZES], m3[MAX_SIZES], e1[MAX_SIZES], e3[MAX_SIZES];
		for (int k = 0; k < nk; k++) {
			m1[k] = g1[k].ok ? g1[k].modelled_ns : NAN;
			m3[k] = g3[k].ok ? g3[k].modelled_ns : NAN;
			e1[k] = g1[k].ok ? g1[k].emulated_ns : NAN;
			e3[k] = g3[k].ok ? g3[k].emulated_ns : NAN;
		}
		be_m[d] = break_even(K, nk, m1, m3);
		be_e[d] = break_even(K, nk, e1, e3);
		printf("%-3d %12.3f %12.3f %12.2f %10.3f | %10.0f B %10.0f B %10.0f B %s\n", n,
		       sp_mod[d], sp_emu[d], paper_speedup[d], 2.0 * (n - 1) / n, be_f[d], be_m[d],
		       be_e[d], n == 6 ? "485 B measured, 1.4 KB predicted" : "-");
	}

	if (csv) {
		FILE *f = fopen(csv, "w");
		if (!f) {
			fprintf(stderr, "gray: cannot write %s\n", csv);
			return 1;
		}
		fprintf(f, "n,K,algorithm,modelled_ns,formula_ns,emulated_ns,lower_bound_ns\n");
		for (int d = 0; d < NDIM; d++)
			for (int a = 0; a < NALG; a++)
				for (int k = 0; k < nk; k++)
					if (c[d][a][k].ok)
						fprintf(f, "%d,%zu,%s,%.1f,%.1f,%.1f,%.1f\n",
						        dims[d], K[k], algs[a],
						        c[d][a][k].modelled_ns, c[d][a][k].formula_ns,
						        c[d][a][k].emulated_ns, c[d][a][k].bound_ns);
		fclose(f);
	}
	int plot_rc = 0;
	if (plot)
		plot_rc = write_plot(plot, K, nk, c, emul, ts, tw);

	printf("{\"bench\": \"gray\", \"ts_ns\": %.1f, \"tw_ns\": %.4f, \"reps\": %d", ts, tw, reps);
	for (int d = 0; d < NDIM; d++)
		printf(", \"n%d\": {\"speedup_modelled\": %.4f, \"speedup_emulated\": %.4f, "
		       "\"speedup_paper\": %.2f, \"break_even_formula\": %.1f, \"break_even_modelled\": "
		       "%.1f, \"break_even_emulated\": %.1f}",
		       dims[d], sp_mod[d], isfinite(sp_emu[d]) ? sp_emu[d] : -1, paper_speedup[d],
		       be_f[d], isfinite(be_m[d]) ? be_m[d] : -1, isfinite(be_e[d]) ? be_e[d] : -1);
	printf(", \"paper_break_even_measured\": %.0f, \"paper_break_even_predicted\": %.0f, "
	       "\"missing\": %d, \"failures\": %d}\n",
	       PAPER_BREAK_EVEN_MEASURED, PAPER_BREAK_EVEN_PREDICTED, missing, failures);
	return failures || plot_rc < 0 ? 1 : 0;
}
