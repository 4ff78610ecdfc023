/* SPDX-License-Identifier: MIT */
/*
 * bench/fidelity_native.c - model_fidelity --native: measured native
 * collectives against the calibrated prediction of this machine (what it
 * runs, measures and prints: the top of bench/model_fidelity.c).
 */
#include "fidelity_native.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topocoll.h"

enum { NAT_COLLS = 6, NAT_RUNS = 3, NAT_MAX_CALLS = 1 + 64, NAT_MAX_P = 256 };
static const char *const nat_names[NAT_COLLS] = {"bcast",     "reduce",   "allreduce",
                                                 "allgather", "alltoall", "reduce_scatter"};
/* The largest buffer of a rank: a case whose p-block buffer is larger
 * (alltoall of 4 MiB blocks at p = 16, say) is skipped and counted. */
#define NAT_BUF_CAP ((size_t)16 << 20)
#define NAT_MAX_BYTES ((size_t)64 << 20)

/* What --native runs: the collectives (--case; the first five unless
 * named), the sizes (--bytes; 8 B, 32 B, ..., 2 MiB, 4 MiB unless given)
 * and the topology kinds (--topo chain,complete,hypercube; chain:2 alone
 * unless given, complete and hypercube when --p is). */
enum { NAT_MAX_SIZES = 16 };
static unsigned nat_coll_mask = 0x1f;
static size_t nat_sizes[NAT_MAX_SIZES];
static int nnat_sizes;
static unsigned nat_topo_mask; /* chain 1, complete 2, hypercube 4 */

struct nat_arg {
	int coll, p;
	size_t bytes;             /* m: per rank, or per block */
	unsigned char *(*buf)[2]; /* per rank: send, receive */
	int calls;                /* calls per run: the first, then the timed */
	double (*t0)[NAT_MAX_CALLS], (*t1)[NAT_MAX_CALLS]; /* per rank */
	int *err;                                          /* per rank: its first error */
	char (*detail)[160];                               /* per rank: tc_error_detail() of it */
	tc_time_t modelled_ps;
	const char *alg;
};

/* The bytes of a rank's send and receive buffers for m-byte blocks. */
static void nat_extent(int coll, int p, size_t m, size_t *sbytes, size_t *rbytes)
{
	size_t pm = (size_t)p * m;
	*sbytes = coll == 4 || coll == 5 ? pm : m; /* alltoall, reduce_scatter */
	*rbytes = coll == 3 || coll == 4 ? pm : m; /* allgather, alltoall */
}

static int nat_fn(struct tc_proc *proc, void *argp)
{
	struct nat_arg *a = argp;
	int me = tc_rank(proc);
	unsigned char *sb = a->buf[me][0], *rb = a->buf[me][1];
	size_t n = a->bytes / sizeof(double), sbytes, rbytes;
	nat_extent(a->coll, a->p, a->bytes, &sbytes, &rbytes);
	/* The data are fresh, as an application's would be and as calibrate's
	 * ping-pong buffers are: written by their rank just before the call
	 * (a clean buffer is copied from the shared cache several times
	 * faster than a dirty one from the other core's), with bytes other
	 * than the call before's and never zeros: Intel cores drop a store of
	 * zeros over zeros (Downs, "Hardware store elimination"), so a buffer
	 * rewritten with zeros stays clean.  Bytes 0x3f and 0x40 make doubles
	 * of about 5e-4 and 32, whose sums stay finite. */
	int err = TC_OK;
	for (int k = 0; k < a->calls && !err; k++) {
		const int fill = k & 1 ? 0x40 : 0x3f;
		memset(sb, fill, sbytes);
		memset(rb, fill, rbytes);
		if ((err = tc_barrier(proc, NULL)) != 0)
			break;
		a->t0[me][k] = (double)fidelity_now_ns();
		switch (a->coll) {
		case 0:
			err = tc_bcast(proc, sb, n, TC_DOUBLE, 0, NULL);
			break;
		case 1:
			err = tc_reduce(proc, sb, rb, n, TC_DOUBLE, TC_OP_SUM, 0, NULL);
			break;
		case 2:
			err = tc_allreduce(proc, sb, rb, n, TC_DOUBLE, TC_OP_SUM, NULL);
			break;
		case 3:
			err = tc_allgather(proc, sb, rb, n, TC_DOUBLE, NULL);
			break;
		case 4:
			err = tc_alltoall(proc, sb, rb, n, TC_DOUBLE, NULL);
			break;
		default:
			err = tc_reduce_scatter(proc, sb, rb, n, TC_DOUBLE, TC_OP_SUM, NULL);
			break;
		}
		a->t1[me][k] = (double)fidelity_now_ns();
	}
	a->err[me] = err;
	if (err)
		snprintf(a->detail[me], sizeof a->detail[me], "%s", tc_error_detail());
	struct tc_coll_info ci;
	tc_last_coll(proc, &ci);
	if (me == 0) {
		a->modelled_ps = ci.modelled_ps;
		a->alg = ci.algorithm;
	}
	return err;
}

/* Calibrates (8 B .. 4 MiB) and makes the line's t_s, t_w, t_c cfg's model. */
/* --save-calibration FILE: every calibration the native mode makes is
 * appended to it as text (tc_calibration_write()), so that the predictions
 * of a run on another machine can be computed again here, against its
 * measured times, by this build or a later one: bench/replay_native. */
static const char *save_cal_path; /* --save-calibration */

static int nat_save_calibration(const struct tc_calibration *cal)
{
	if (!save_cal_path)
		return 0;
	FILE *f = fopen(save_cal_path, "a");
	int ok = f && tc_calibration_write(cal, f) == 0;
	if (f && fclose(f))
		ok = 0;
	if (!ok)
		fprintf(stderr, "model_fidelity: --save-calibration %s: could not write\n", save_cal_path);
	return ok ? 0 : 1;
}

static int nat_calibrate(struct tc_calibration *cal, struct tc_model *md)
{
	struct tc_calibrate_opts co;
	memset(&co, 0, sizeof co);
	co.max_bytes = (size_t)4 << 20;
	int err = tc_model_calibrate(&co, cal);
	if (err) {
		fprintf(stderr, "model_fidelity: calibration: %s\n", tc_strerror(err));
		return err;
	}
	fidelity_line_model(cal, md);
	return nat_save_calibration(cal);
}

static void nat_cal_line(const struct tc_calibration *cal)
{
	printf("# calibration: line t_s %.1f ns, t_w %.4g ns/B, t_c %.4g ns/B (R^2 %.3f, worst %.0f%%); "
	       "piecewise R^2 %.4f, worst %.1f%%, o_call %.0f ns;",
	       cal->ts_ns, cal->tw_ns_per_byte, cal->tc_ns_per_byte, cal->r2, 100 * cal->max_rel_residual,
	       cal->piecewise.r2, 100 * cal->piecewise.max_rel_residual, cal->call_ns);
	for (int k = 0; k < cal->nsegments; k++)
		printf(" [%zu..%zu B: %.0f ns + %.4g ns/B]", cal->segments[k].lo_bytes,
		       cal->segments[k].hi_bytes, cal->segments[k].fit.ts_ns,
		       cal->segments[k].fit.tw_ns_per_byte);
	printf("\n");
}

/* One case (team, collective, size) over the sweeps. */
enum { NAT_MAX_CASES = 2048 };
struct nat_case {
	int p, coll, seg, used, skipped;
	int failed; /* the error of a sweep's run, or 0 */
	const char *topo;
	size_t bytes;
	const char *alg; /* nat_mixed when the sweeps' AUTO differed */
	double pred[FIDELITY_MAX_SWEEPS], meas[FIDELITY_MAX_SWEEPS], line[FIDELITY_MAX_SWEEPS];
	double cold[FIDELITY_MAX_SWEEPS], rel[FIDELITY_MAX_SWEEPS], lrel[FIDELITY_MAX_SWEEPS];
	/* The calibrated prediction without the concurrency charges (the
	 * pair's model alone), its error, and the two charges. */
	double flat[FIDELITY_MAX_SWEEPS], frel[FIDELITY_MAX_SWEEPS];
	double share[FIDELITY_MAX_SWEEPS], sync[FIDELITY_MAX_SWEEPS];
};
static const char nat_mixed[] = "(varies)";

/* The median of n sorted values. */
static double median_sorted(const double *y, int n)
{
	return n % 2 ? y[n / 2] : 0.5 * (y[n / 2 - 1] + y[n / 2]);
}

static double nat_median(const double *x, int n)
{
	double y[FIDELITY_MAX_SWEEPS];
	memcpy(y, x, (size_t)n * sizeof *y);
	qsort(y, (size_t)n, sizeof *y, bench_cmp_double);
	return median_sorted(y, n);
}

static double nat_min(const double *x, int n)
{
	double m = x[0];
	for (int i = 1; i < n; i++)
		m = fmin(m, x[i]);
	return m;
}

static double nat_max(const double *x, int n)
{
	double m = x[0];
	for (int i = 1; i < n; i++)
		m = fmax(m, x[i]);
	return m;
}

/* A row of the table: sweep 0 of e (sweeps 0), or the medians over sweeps
 * with the range of the error. */
static void nat_row(const struct nat_case *e, int sweeps, int header)
{
	int n = sweeps ? sweeps : 1;
	if (header)
		printf("%-10s %-12s %10s %14s %14s %9s %19s %14s %9s %12s %9s\n", "coll",
		       "algorithm", "bytes", "predicted_ns", "measured_ns", "rel_err",
		       sweeps ? "range" : "", "line_pred_ns", "line_err", "first_ns", "flat_err");
	if (e->skipped) {
		printf("%-10s %-12s %10zu  skipped: a buffer of %d blocks above %zu MiB\n",
		       nat_names[e->coll], "-", e->bytes, e->p, NAT_BUF_CAP >> 20);
		fflush(stdout);
		return;
	}
	char range[32] = "";
	if (sweeps)
		snprintf(range, sizeof range, "%+.0f..%+.0f%%", 100 * nat_min(e->rel, n),
		         100 * nat_max(e->rel, n));
	printf("%-10s %-12s %10zu %14.0f %14.0f %+8.1f%% %19s %14.0f %+8.1f%% %12.0f %+8.1f%%\n",
	       nat_names[e->coll], e->alg ? e->alg : "?", e->bytes, nat_median(e->pred, n),
	       nat_median(e->meas, n), 100 * nat_median(e->rel, n), range, nat_median(e->line, n),
	       100 * nat_median(e->lrel, n), nat_median(e->cold, n), 100 * nat_median(e->frel, n));
	fflush(stdout);
}

/* The teams --native runs: spec and p of each; their number. */
enum { NAT_MAX_TEAMS = 3 * 16 };
static int nat_teams(const int *pl, int np, unsigned mask, char (*spec)[32], int *tp)
{
	int n = 0;
	for (int i = 0; i < np; i++) {
		int p = pl[i], d = 0;
		while ((1 << d) < p)
			d++;
		if ((mask & 1) && n < NAT_MAX_TEAMS)
			snprintf(spec[n], 32, "chain:%d", p), tp[n++] = p;
		if ((mask & 2) && n < NAT_MAX_TEAMS)
			snprintf(spec[n], 32, "complete:%d", p), tp[n++] = p;
		if ((mask & 4) && (1 << d) == p && n < NAT_MAX_TEAMS)
			snprintf(spec[n], 32, "hypercube:%d", d), tp[n++] = p;
	}
	return n;
}

/* Rank buffers for a team of p: cap bytes each, zeroed (doubles 0.0). */
static int nat_alloc(struct nat_arg *a, int p, size_t cap)
{
	a->buf = calloc((size_t)p, sizeof *a->buf);
	a->t0 = calloc((size_t)p, sizeof *a->t0);
	a->t1 = calloc((size_t)p, sizeof *a->t1);
	a->err = calloc((size_t)p, sizeof *a->err);
	a->detail = calloc((size_t)p, sizeof *a->detail);
	if (!a->buf || !a->t0 || !a->t1 || !a->err || !a->detail)
		return -1;
	for (int r = 0; r < p; r++)
		for (int k = 0; k < 2; k++)
			if (!(a->buf[r][k] = calloc(1, cap)))
				return -1;
	return 0;
}

static void nat_free(struct nat_arg *a, int p)
{
	for (int r = 0; a->buf && r < p; r++)
		for (int k = 0; k < 2; k++)
			free(a->buf[r][k]);
	free(a->buf);
	free(a->t0);
	free(a->t1);
	free(a->err);
	free(a->detail);
	a->buf = NULL;
	a->t0 = a->t1 = NULL;
	a->err = NULL;
	a->detail = NULL;
}

int fidelity_native_main(int nreps, int recal, int sweeps, const int *pl, int np)
{
	static char spec[NAT_MAX_TEAMS][32];
	int tp[NAT_MAX_TEAMS];
	unsigned tmask = nat_topo_mask ? nat_topo_mask : np ? 6 : 1;
	static const int p_two[] = {2};
	if (!np) {
		pl = p_two;
		np = 1;
	}
	int nteams = nat_teams(pl, np, tmask, spec, tp);
	if (!nteams) {
		fprintf(stderr,
		        "model_fidelity: --native: no team (the hypercube needs a power of two)\n");
		return 2;
	}
	for (int t = 0; t < nteams; t++)
		if (tp[t] > NAT_MAX_P) {
			fprintf(stderr, "model_fidelity: --native: p = %d is above %d\n", tp[t],
			        NAT_MAX_P);
			return 2;
		}
	if (!nnat_sizes)
		for (size_t m = 8; m <= ((size_t)4 << 20); m = m == ((size_t)2 << 20) ? m * 2 : m * 4)
			nat_sizes[nnat_sizes++] = m;
	size_t maxm = 0;
	for (int s = 0; s < nnat_sizes; s++)
		maxm = nat_sizes[s] > maxm ? nat_sizes[s] : maxm;
	int ncolls = 0, nsz = nnat_sizes;
	for (int c = 0; c < NAT_COLLS; c++)
		ncolls += (nat_coll_mask >> c) & 1;
	if (nteams * ncolls * nsz > NAT_MAX_CASES) {
		fprintf(stderr, "model_fidelity: --native: %d cases, at most %d\n",
		        nteams * ncolls * nsz, NAT_MAX_CASES);
		return 2;
	}
	if (nreps > NAT_RUNS * (NAT_MAX_CALLS - 1))
		nreps = NAT_RUNS * (NAT_MAX_CALLS - 1);
	/* NAT_RUNS runs of 1 + per calls: the first call of a run (cold: just
	 * after the threads woke) apart, the others timed (nreps rounded up to
	 * a multiple of NAT_RUNS). */
	const int per = (nreps + NAT_RUNS - 1) / NAT_RUNS;
	double *v = malloc((size_t)(NAT_RUNS * per) * sizeof *v), first[NAT_RUNS];
	if (!v) {
		fprintf(stderr, "model_fidelity: out of memory\n");
		return 1;
	}
	int legacy = nteams == 1 && !strcmp(spec[0], "chain:2");
	if (legacy)
		printf("# model_fidelity --native: chain:2, median of %d calls, calibrated %s, %d "
		       "sweep%s\n",
		       NAT_RUNS * per, recal ? "before each collective" : "once", sweeps,
		       sweeps > 1 ? "s" : "");
	else {
		printf("# model_fidelity --native: median of %d calls, calibrated %s, %d sweep%s; "
		       "teams:",
		       NAT_RUNS * per, recal ? "before each collective" : "once", sweeps,
		       sweeps > 1 ? "s" : "");
		for (int t = 0; t < nteams; t++)
			printf(" %s", spec[t]);
		printf("\n");
	}
	struct tc_calibration cal;
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	if (nat_calibrate(&cal, &cfg.model))
		return 1;
	static struct nat_case cs[NAT_MAX_CASES];
	int ncs = 0, err = 0;
	for (int t = 0; t < nteams && !err; t++) {
		int p = tp[t], base = ncs;
		cfg.topology = spec[t];
		struct tc_team *team = NULL;
		struct tc_topo *topo = NULL;
		struct nat_arg a;
		memset(&a, 0, sizeof a);
		a.p = p;
		size_t cap = (size_t)p * maxm;
		if (cap > NAT_BUF_CAP)
			cap = maxm > NAT_BUF_CAP ? maxm : NAT_BUF_CAP;
		if ((err = tc_team_create(&cfg, &team)) != 0 ||
		    (err = tc_topo_parse(spec[t], &topo)) != 0) {
			fprintf(stderr, "model_fidelity: team %s: %s\n", spec[t], tc_strerror(err));
			tc_team_destroy(team);
			break;
		}
		if (nat_alloc(&a, p, cap)) {
			fprintf(stderr, "model_fidelity: out of memory (%d ranks x 2 x %zu B)\n", p, cap);
			nat_free(&a, p);
			tc_topo_destroy(topo);
			tc_team_destroy(team);
			err = 1;
			break;
		}
		if (!legacy)
			printf("# team %s (p = %d)\n", spec[t], p);
		ncs += ncolls * nsz;
		for (int sw = 0; sw < sweeps && !err; sw++) {
			int sw_within = 0, first_c = 1;
			double sw_worst = 0;
			for (int c = 0, cj = 0; c < NAT_COLLS && !err; c++) {
				if (!((nat_coll_mask >> c) & 1))
					continue;
				if (recal && !(t == 0 && sw == 0 && first_c)) {
					/* The team's threads are parked between runs:
					 * calibrate anew on the same CPUs, for the next
					 * collective. */
					struct tc_model md = cfg.model;
					if ((err = nat_calibrate(&cal, &md)) != 0)
						break;
					tc_team_destroy(team);
					cfg.model = md;
					if ((err = tc_team_create(&cfg, &team)) != 0) {
						fprintf(stderr, "model_fidelity: team: %s\n",
						        tc_strerror(err));
						team = NULL;
						break;
					}
				}
				if (sw == 0 || sweeps == 1)
					nat_cal_line(&cal);
				enum tc_coll coll;
				tc_coll_parse(nat_names[c], &coll);
				for (int si = 0; si < nsz && !err; si++) {
					size_t m = nat_sizes[si], sbytes, rbytes;
					struct nat_case *e = &cs[base + cj * nsz + si];
					e->p = p;
					e->topo = spec[t];
					e->coll = c;
					e->bytes = m;
					e->used = 1;
					nat_extent(c, p, m, &sbytes, &rbytes);
					if (sbytes > cap || rbytes > cap) {
						e->skipped = 1;
						if (sw == 0)
							nat_row(e, 0, first_c && si == 0);
						continue;
					}
					a.coll = c;
					a.bytes = m;
					a.calls = 2; /* warm-up */
					err = tc_run(team, nat_fn, &a);
					int nv = 0;
					a.calls = 1 + per;
					for (int r = 0; r < NAT_RUNS && !err; r++) {
						err = tc_run(team, nat_fn, &a);
						for (int k = 0; k < a.calls; k++) {
							double t0 = a.t0[0][k], t1 = a.t1[0][k];
							for (int q = 1; q < p; q++) {
								t0 = fmax(t0, a.t0[q][k]);
								t1 = fmax(t1, a.t1[q][k]);
							}
							if (k == 0)
								first[r] = t1 - t0;
							else
								v[nv++] = t1 - t0;
						}
					}
					struct tc_call call = {.coll = coll,
					                       .alg = a.alg,
					                       .bytes = m,
					                       .esize = sizeof(double)};
					/* A pipeline counted its packets under the
					 * team's model (the calibration's line): the
					 * prediction prices those packets, not the ones
					 * its segment's model would count. */
					if (a.alg && !strcmp(a.alg, "ring_pipelined"))
						call.packets =
						        tc_cost_ring_r_opt(&cfg.model, p, (double)m);
					double pred = NAN, share = 0, sync = 0;
					int seg = -1;
					const char *what = "run", *detail = "";
					for (int q = 0; err && q < p && !*detail; q++)
						if (a.err[q])
							detail = a.detail[q];
					if (!err) {
						what = "prediction";
						err = tc_calibration_predict(&cal, topo, &call,
						                             NULL, &seg, &pred);
						if (!err)
							err = tc_calibration_concurrency_ns(&cal, topo,
							                                    &call, &share,
							                                    &sync);
						detail = err ? tc_error_detail() : "";
					}
					if (err) {
						/* Recorded as failed (a limit, say): the next
						 * cases still run. */
						printf("%-10s %-12s %10zu  failed (%s): %s%s%s\n",
						       nat_names[c], a.alg ? a.alg : "-", m, what,
						       tc_err_name(err), *detail ? ": " : "", detail);
						fflush(stdout);
						e->failed = err;
						err = 0;
						continue;
					}
					qsort(v, (size_t)nv, sizeof *v, bench_cmp_double);
					qsort(first, NAT_RUNS, sizeof *first, bench_cmp_double);
					if (!e->alg ||
					    (a.alg && strcmp(e->alg, a.alg) && e->alg != nat_mixed))
						e->alg = sw == 0 ? a.alg : nat_mixed;
					e->seg = seg;
					e->pred[sw] = pred;
					e->meas[sw] = median_sorted(v, nv);
					e->line[sw] = (double)a.modelled_ps / TC_PS_PER_NS;
					e->cold[sw] = first[NAT_RUNS / 2];
					e->rel[sw] = pred > 0 ? (e->meas[sw] - pred) / pred : NAN;
					e->share[sw] = share;
					e->sync[sw] = sync;
					e->flat[sw] = pred - share - sync;
					e->frel[sw] = e->flat[sw] > 0 ? (e->meas[sw] - e->flat[sw]) /
					                                        e->flat[sw]
					                              : NAN;
					e->lrel[sw] = e->line[sw] > 0 ? (e->meas[sw] - e->line[sw]) /
					                                        e->line[sw]
					                              : NAN;
					sw_within += fabs(e->rel[sw]) <= 0.15;
					sw_worst = fmax(sw_worst, fabs(e->rel[sw]));
					if (sweeps == 1)
						nat_row(e, 0, first_c && si == 0);
				}
				first_c = 0;
				cj++;
			}
			if (sweeps > 1 && !err) {
				printf("# sweep %d: %d of %d within 15%%, worst %+.1f%%\n", sw + 1,
				       sw_within, ncolls * nsz, 100 * sw_worst);
				fflush(stdout);
			}
		}
		nat_free(&a, p);
		tc_topo_destroy(topo);
		tc_team_destroy(team);
	}
	free(v);
	if (err)
		return 1;
	/* Per case, the median over the sweeps of the paired (measured,
	 * predicted) relative error, and its range. */
	int within = 0, within25 = 0, line_within = 0, skipped = 0, nfailed = 0, of = 0;
	int within20 = 0, flat_within20 = 0, flat_within = 0;
	double worst = 0, line_worst = 0;
	static char json[1024 * 1024];
	size_t jl = 0;
	json[0] = 0;
	if (sweeps > 1)
		printf("# the median over %d sweeps of each sweep's (measured - predicted) / "
		       "predicted, and its range:\n",
		       sweeps);
	for (int i = 0; i < ncs; i++) {
		struct nat_case *e = &cs[i];
		if (!e->used)
			continue;
		if (sweeps > 1 && !legacy && (i == 0 || e->topo != cs[i - 1].topo))
			printf("# team %s (p = %d)\n", e->topo, e->p);
		if (e->skipped) {
			skipped++;
			continue;
		}
		if (e->failed) {
			nfailed++;
			of++;
			if (jl < sizeof json - 512)
				jl += (size_t)snprintf(json + jl, sizeof json - jl,
				                       "%s{\"coll\": \"%s\", \"p\": %d, \"topology\": \"%s\", "
				                       "\"bytes\": %zu, \"error\": \"%s\", \"rel_err\": null}",
				                       jl ? ", " : "", nat_names[e->coll], e->p,
				                       e->topo, e->bytes, tc_err_name(e->failed));
			continue;
		}
		double rel = nat_median(e->rel, sweeps), lrel = nat_median(e->lrel, sweeps);
		double frel = nat_median(e->frel, sweeps);
		of++;
		within20 += fabs(rel) <= 0.20;
		flat_within20 += fabs(frel) <= 0.20;
		flat_within += fabs(frel) <= 0.15;
		within += fabs(rel) <= 0.15;
		within25 += fabs(rel) <= 0.25;
		line_within += fabs(lrel) <= 0.15;
		worst = fmax(worst, fabs(rel));
		line_worst = fmax(line_worst, fabs(lrel));
		if (sweeps > 1)
			nat_row(e, sweeps, i == 0 || e->topo != cs[i - 1].topo);
		if (jl < sizeof json - 512)
			jl += (size_t)
			        snprintf(json + jl, sizeof json - jl,
			                 "%s{\"coll\": \"%s\", \"p\": %d, \"topology\": \"%s\", \"algorithm\": \"%s\", "
			                 "\"bytes\": %zu, \"segment\": %d, "
			                 "\"predicted_ns\": %.1f, \"measured_ns\": %.1f, \"rel_err\": %.4f, "
			                 "\"rel_err_min\": %.4f, \"rel_err_max\": %.4f, \"line_predicted_ns\": %.1f, "
			                 "\"line_rel_err\": %.4f, \"first_call_ns\": %.1f, \"flat_predicted_ns\": %.1f, "
			                 "\"flat_rel_err\": %.4f, \"share_ns\": %.1f, \"sync_ns\": %.1f}",
			                 jl ? ", " : "", nat_names[e->coll], e->p, e->topo,
			                 e->alg ? e->alg : "?", e->bytes, e->seg,
			                 nat_median(e->pred, sweeps), nat_median(e->meas, sweeps),
			                 rel, nat_min(e->rel, sweeps), nat_max(e->rel, sweeps),
			                 nat_median(e->line, sweeps), lrel,
			                 nat_median(e->cold, sweeps), nat_median(e->flat, sweeps), frel,
			                 nat_median(e->share, sweeps), nat_median(e->sync, sweeps));
	}
	printf("{\"cases\": [%s], \"sweeps\": %d, \"recal\": %s, \"ts_ns\": %.2f, "
	       "\"tw_ns_per_byte\": %.5f, "
	       "\"tc_ns_per_byte\": %.5f, \"call_ns\": %.1f, \"calibration_r2\": %.4f, "
	       "\"piecewise_r2\": %.4f, \"within_15pct\": %d, \"within_25pct\": %d, \"of\": %d, "
	       "\"skipped\": %d, \"failed\": %d, \"worst_rel_error\": %.4f, "
	       "\"line_within_15pct\": %d, \"line_worst_rel_error\": %.4f, \"within_20pct\": %d, "
	       "\"flat_within_15pct\": %d, \"flat_within_20pct\": %d, \"concurrency_ranks\": %d}\n",
	       json, sweeps, recal ? "true" : "false", cfg.model.ts_ns, cfg.model.tw_ns, cfg.model.tc_ns,
	       cal.call_ns, cal.r2, cal.piecewise.r2, within, within25, of, skipped, nfailed, worst,
	       line_within, line_worst, within20, flat_within, flat_within20, cal.conc_ranks);
	return 0;
}

void fidelity_native_no_colls(void)
{
	nat_coll_mask = 0;
}

void fidelity_native_save_to(const char *path)
{
	save_cal_path = path;
}

int fidelity_native_add_coll(const char *s)
{
	return fidelity_mask_add(nat_names, NAT_COLLS, s, &nat_coll_mask);
}

int fidelity_native_add_topo(const char *s)
{
	static const char *const names[] = {"chain", "complete", "hypercube"};
	return fidelity_mask_add(names, 3, s, &nat_topo_mask);
}

int fidelity_native_add_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v > 0))
		return -1;
	if (*end == 'K' || *end == 'k')
		v *= 1024, end++;
	else if (*end == 'M' || *end == 'm')
		v *= 1024 * 1024, end++;
	if (*end && strcmp(end, "B") && strcmp(end, "iB"))
		return -1;
	if (v > (double)NAT_MAX_BYTES || fmod(v, 8) != 0 || nnat_sizes >= NAT_MAX_SIZES)
		return -1;
	nat_sizes[nnat_sizes++] = (size_t)v;
	return 0;
}
