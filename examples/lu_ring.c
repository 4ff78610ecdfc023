/* SPDX-License-Identifier: MIT */
/*
 * examples/lu_ring.c - LU factorisation on a ring with cyclic column
 * allocation and a pipelined pivot broadcast, with and without look-ahead
 * ([Goubault-ring], slides 36-53).
 *
 * What it shows.  A = L U without pivoting (A is made diagonally dominant, so
 * no pivot is small).  Column j lives on rank j mod p (cyclic allocation keeps
 * the work balanced as the active matrix shrinks, slides 39-45).  At step k the
 * owner of column k computes the multipliers, prep(k): a[i][k] /= a[k][k] for
 * i > k, and sends them (n - k - 1 doubles) to its right neighbour; every other
 * rank receives them from the left and passes them on to the right (unless its
 * right neighbour is the owner): the broadcast is pipelined along the ring
 * (slide 49).  Then each rank does update(k, j): a[i][j] -= a[i][k] a[k][j]
 * (i > k) for each of its columns j > k.  Three variants run for every n:
 *   blocking   slide 49 as slides 50-51 draw it: tc_send, the send occupies
 *              the rank (its clock moves on by t_s + m t_w) before it updates;
 *   overlap    the same program with tc_isend: the send goes on while the
 *              rank updates (slide 53's `send || up`), still in slide 49's
 *              order: the owner of column k + 1 first updates all its columns
 *              with pivot k and only then computes prep(k + 1), so the ring
 *              waits for it (the defect of slides 50-51);
 *   lookahead  slides 52-53: the owner of column k + 1 updates that column
 *              first, computes prep(k + 1) and sends it at once, and then
 *              updates its other columns with pivot k while the next pivot
 *              travels.
 *
 * Times.  Computation is charged to the logical clock with tc_clock_advance:
 * t_a per division or multiply-add (one charge per stretch of computation
 * between two communication calls), t_a measured on the sequential LU of the
 * same n (or --ta).  For each n the program prints
 *   slide 48  the decomposition of slide 48 counted exactly: the n - 1 pivot
 *             messages (t_s + (n-k-1) t_w' each, t_w' = 8 t_w per double) and
 *             preps ((n-k-1) t_a each) one after the other, plus the updates
 *             of the busiest rank; t_s and t_w are the team's model's;
 *   modelled  the logical clock (tc_team_last_run) of each variant: the
 *             model's prediction, deterministic (checked equal in the native
 *             and the emulated run);
 *   emulated  wall time in TC_MODE_EMULATED (waits as the model says);
 *   measured  wall time of the native run (the real computation);
 *   eff_*     efficiency: operations x t_a / (p x modelled or emulated time),
 *             and the measured sequential time / (p x measured time);
 *   checksum  sum of the factors' entries f[k] (k mod 7 + 1), column-major,
 *             to compare with other versions (examples/mpi/lu_ring.c);
 * and the look-ahead's gain (time of blocking or overlap / time of lookahead)
 * predicted by the model beside the emulated and measured ones.  Wall times are
 * the minimum over --reps runs.
 *
 * Checks (exit status 1 when one fails): the factors of every run equal those
 * of a sequential LU within 1e-12 relative (the operations are the same, so
 * they are normally identical), and the residual max|A - L U| / max|A| of the
 * sequential LU is below 1e-12.
 *
 * Run:   build/examples/lu_ring --p 4 64 128 256
 *        build/examples/lu_ring --p 4 --ts 100000 --tw 10 --ta 1000 16 32 64 128
 * Options: --p P (ranks on ring:P, default 4), --ts NS --tw NS (model; default
 * the library's 1000 ns and 1 ns/B), --ta NS (t_a instead of the measured
 * one), --reps R (default 3), --data FILE (n, efficiencies and gains, for
 * docs/examples_efficiency.gp).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topocoll.h"

/* The three programs compared. */
enum variant {
	V_BLOCKING,  /* slides 49-51: blocking sends, the send occupies the rank */
	V_OVERLAP,   /* slide 49 with nonblocking sends: send || update */
	V_LOOKAHEAD, /* slides 52-53: nonblocking sends and look-ahead */
	V_COUNT
};
static const char *const variant_name[V_COUNT] = {"blocking", "overlap", "lookahead"};

struct lu {
	int n;
	enum variant variant;
	double ta_ns;
	const double *a; /* the input, column-major n x n */
	double *f;       /* the factors, column-major: each rank writes its columns */
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* prep(k) on column k (n entries): the multipliers below the diagonal. */
static void prep(double *colk, int n, int k)
{
	double d = colk[k];
	for (int i = k + 1; i < n; i++)
		colk[i] /= d;
}

/* update(k, j): column j minus its pivot-row entry times the multipliers
 * mult[0 .. n-k-1) (rows k+1 .. n-1). */
static void update(double *colj, const double *mult, int n, int k)
{
	double akj = colj[k];
	for (int i = k + 1; i < n; i++)
		colj[i] -= mult[i - k - 1] * akj;
}

/* The sequential LU: the reference, and t_a. */
static void lu_seq(double *a, int n)
{
	for (int k = 0; k < n - 1; k++) {
		prep(a + (size_t)k * n, n, k);
		for (int j = k + 1; j < n; j++)
			update(a + (size_t)j * n, a + (size_t)k * n + k + 1, n, k);
	}
}

/* Charges the elementary operations done since the last communication call
 * (*ops of them) to the logical clock, in one tc_clock_advance: the clock is
 * the same as with a charge per column, and an emulated run waits once per
 * stretch of computation instead of once per column. */
static int charge(struct tc_proc *proc, const struct lu *m, long *ops)
{
	long c = *ops;
	*ops = 0;
	return c > 0 ? tc_clock_advance(proc, (double)c * m->ta_ns) : 0;
}

/* update(k, j) for the local columns l >= from (global j = q + l p > k). */
static void update_from(const struct lu *m, double *col, int nloc, int from, const double *mult,
                        int k, long *ops)
{
	int n = m->n;
	for (int l = from; l < nloc; l++) {
		update(col + (size_t)l * n, mult, n, k);
		*ops += n - k - 1;
	}
}

/* Sends bytes of buf to dst: blocking (V_BLOCKING: the rank's clock moves on
 * by t_s + m t_w, as in slide 51), or started with tc_isend (*busy set: the
 * caller waits for req before buf is reused). */
static int send_pivot(struct tc_proc *proc, const struct lu *m, int dst, const double *buf, int len,
                      tc_request *req, int *busy)
{
	if (m->variant == V_BLOCKING)
		return tc_send(proc, dst, buf, (size_t)len * sizeof *buf);
	int err = tc_isend(proc, dst, buf, (size_t)len * sizeof *buf, req);
	*busy = !err;
	return err;
}

/* Completes req if it is in flight. */
static int finish(struct tc_proc *proc, tc_request *req, int *busy)
{
	if (!*busy)
		return 0;
	*busy = 0;
	return tc_wait(proc, req, NULL);
}

/* The SPMD program of slide 49, with the look-ahead of slide 52 when asked. */
static int lu_ring(struct tc_proc *proc, void *arg)
{
	const struct lu *m = arg;
	int q = tc_rank(proc), p = tc_size(proc), n = m->n;
	int right = (q + 1) % p, left = (q + p - 1) % p;
	int nloc = q < n ? (n - q + p - 1) / p : 0; /* columns q, q + p, ... */
	double *col = malloc(((size_t)nloc * n + 2 * (size_t)n) * sizeof *col);
	if (!col)
		return TC_ENOMEM;
	double *rbuf[2] = {col + (size_t)nloc * n, col + (size_t)nloc * n + n};
	for (int l = 0; l < nloc; l++)
		memcpy(col + (size_t)l * n, m->a + (size_t)(q + l * p) * n, (size_t)n * sizeof *col);
	/* Requests: our own pivot's send (its column is final, so it may stay
	 * in flight) and the forwards out of rbuf[0], rbuf[1]. */
	tc_request own, fwd[2];
	int own_busy = 0, fwd_busy[2] = {0, 0}, err = 0;
	long ops = 0; /* computation not yet charged */
	int next = 0; /* first local column not yet factored: global q + next p */
	for (int k = 0; k < n - 1 && !err; k++) {
		int owner = k % p;
		const double *mult;
		int ahead = m->variant == V_LOOKAHEAD && p > 1;
		if (q == owner) {
			double *ck = col + (size_t)next * n;
			if (!ahead || k == 0) { /* with look-ahead done at step k - 1 */
				prep(ck, n, k);
				ops += n - k - 1;
				err = charge(proc, m, &ops);
				if (!err)
					err = finish(proc, &own, &own_busy);
				if (!err && p > 1)
					err = send_pivot(proc, m, right, ck + k + 1, n - k - 1,
					                 &own, &own_busy);
			}
			mult = ck + k + 1;
			next++;
		} else {
			int b = k % 2;
			err = charge(proc, m, &ops);
			if (!err) /* rbuf[b] is free once pivot k - 2's forward is done */
				err = finish(proc, &fwd[b], &fwd_busy[b]);
			if (!err)
				err = tc_recv(proc, left, rbuf[b],
				              (size_t)(n - k - 1) * sizeof *rbuf[b], NULL);
			if (!err && right != owner)
				err = send_pivot(proc, m, right, rbuf[b], n - k - 1, &fwd[b],
				                 &fwd_busy[b]);
			mult = rbuf[b];
		}
		if (err)
			break;
		if (ahead && q == (k + 1) % p && k + 1 < n - 1) {
			/* Look-ahead: column k + 1 (our local column `next`) first,
			 * then its pivot out, then the rest. */
			double *c1 = col + (size_t)next * n;
			update(c1, mult, n, k);
			prep(c1, n, k + 1);
			ops += (n - k - 1) + (n - k - 2);
			err = charge(proc, m, &ops);
			if (!err)
				err = finish(proc, &own, &own_busy);
			if (!err)
				err = send_pivot(proc, m, right, c1 + k + 2, n - k - 2, &own, &own_busy);
			update_from(m, col, nloc, next + 1, mult, k, &ops);
		} else {
			update_from(m, col, nloc, next, mult, k, &ops);
		}
	}
	/* Complete every send before the buffers go. */
	int e = err ? 0 : charge(proc, m, &ops);
	err = err ? err : e;
	e = finish(proc, &own, &own_busy);
	err = err ? err : e;
	for (int b = 0; b < 2; b++) {
		e = finish(proc, &fwd[b], &fwd_busy[b]);
		err = err ? err : e;
	}
	if (!err) /* results back to the caller's (shared) matrix */
		for (int l = 0; l < nloc; l++)
			memcpy(m->f + (size_t)(q + l * p) * n, col + (size_t)l * n,
			       (size_t)n * sizeof *col);
	free(col);
	return err;
}

struct run {
	struct tc_model model; /* the team's (tc_team_model): the source's formula uses it */
	uint64_t wall_ns;
	double modelled_ns;
};

static double max_rel_diff(const double *x, const double *y, size_t len)
{
	double d = 0, s = 0;
	for (size_t i = 0; i < len; i++) {
		d = fmax(d, fabs(x[i] - y[i]));
		s = fmax(s, fabs(y[i]));
	}
	return s > 0 ? d / s : d;
}

static int run_team(const char *topo, int p, const struct tc_model *md, enum tc_mode mode,
                    struct lu *m, int reps, const double *fref, struct run *out)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = topo;
	cfg.p = p;
	cfg.model = *md;
	cfg.mode = mode;
	struct tc_team *team;
	int err = tc_team_create(&cfg, &team);
	if (err)
		return err;
	out->model = *tc_team_model(team);
	size_t len = (size_t)m->n * m->n;
	out->wall_ns = UINT64_MAX;
	for (int k = 0; k < reps && !err; k++) {
		memset(m->f, 0, len * sizeof *m->f);
		err = tc_run(team, lu_ring, m);
		if (err)
			break;
		double d = max_rel_diff(m->f, fref, len);
		if (d > 1e-12) {
			fprintf(stderr,
			        "lu_ring: n = %d (%s): factors differ from the sequential LU by %g\n",
			        m->n, variant_name[m->variant], d);
			err = TC_EINVAL;
			break;
		}
		struct tc_run_info ri;
		tc_team_last_run(team, &ri);
		out->wall_ns = ri.wall_ns < out->wall_ns ? ri.wall_ns : out->wall_ns;
		out->modelled_ns = (double)ri.makespan_ps / TC_PS_PER_NS;
	}
	tc_team_destroy(team);
	return err;
}

/* A checksum of the factors, printed so that other versions' results can
 * be compared (examples/mpi/lu_ring.c): sum of f[k] (k mod 7 + 1), f
 * column-major, summed in that order. */
static double checksum(const double *f, size_t len)
{
	double s = 0;
	for (size_t k = 0; k < len; k++)
		s += f[k] * (double)(k % 7 + 1);
	return s;
}

/* max|A - L U| / max|A|, f holding L (unit, below) and U (on and above). */
static double residual(const double *a, const double *f, int n)
{
	double d = 0, s = 0;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++) {
			double v = 0;
			int kmax = i < j ? i : j;
			for (int k = 0; k <= kmax; k++) {
				double l = k == i ? 1.0 : f[(size_t)k * n + i];
				v += l * f[(size_t)j * n + k];
			}
			d = fmax(d, fabs(a[(size_t)j * n + i] - v));
			s = fmax(s, fabs(a[(size_t)j * n + i]));
		}
	return d / s;
}

/* Slide 48 of [Goubault-ring] counted exactly: pivots and preps in
 * sequence, then the busiest rank's updates. */
static double slide48_ns(const struct tc_model *md, int n, int p, double ta)
{
	double chain = 0, upd_max = 0;
	for (int k = 0; k < n - 1; k++)
		chain += (p > 1 ? md->ts_ns + 8.0 * (n - k - 1) * md->tw_ns : 0) + (n - k - 1) * ta;
	for (int q = 0; q < p; q++) {
		double u = 0;
		for (int k = 0; k < n - 1; k++)
			for (int j = q; j < n; j += p)
				if (j > k)
					u += (n - k - 1) * ta;
		upd_max = fmax(upd_max, u);
	}
	return chain + upd_max;
}

static void usage(void)
{
	fprintf(stderr, "usage: lu_ring [--p P] [--ts NS] [--tw NS] [--ta NS] [--reps R] "
	                "[--data FILE] N...\n");
}

int main(int argc, char **argv)
{
	int p = 4, reps = 3, nn = 0;
	double ta_opt = 0;
	const char *data = NULL;
	int ns[64];
	struct tc_model md;
	tc_model_default(&md);
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--p") && v)
			p = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ts") && v)
			md.ts_ns = atof(argv[++i]);
		else if (!strcmp(argv[i], "--tw") && v)
			md.tw_ns = atof(argv[++i]);
		else if (!strcmp(argv[i], "--ta") && v)
			ta_opt = atof(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && v)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--data") && v)
			data = argv[++i];
		else if (argv[i][0] != '-' && nn < 64)
			ns[nn++] = atoi(argv[i]);
		else {
			usage();
			return 2;
		}
	}
	if (nn == 0) {
		static const int dflt[] = {64, 128, 256};
		for (nn = 0; nn < 3; nn++)
			ns[nn] = dflt[nn];
	}
	if (p < 1 || reps < 1) {
		usage();
		return 2;
	}
	char topo[32];
	snprintf(topo, sizeof topo, "ring:%d", p);
	FILE *df = data ? fopen(data, "w") : NULL;
	if (data && !df) {
		perror(data);
		return 2;
	}
	if (df)
		fprintf(df,
		        "# lu_ring --p %d --ts %g --tw %g: n, then efficiency modelled, "
		        "emulated, measured of blocking, overlap, lookahead (9 columns), then "
		        "the gain of lookahead over blocking and over overlap, each modelled, "
		        "emulated, measured\n",
		        p, md.ts_ns, md.tw_ns);
	printf("lu_ring on %s, t_s = %g ns, t_w = %g ns/B; times in us\n", topo, md.ts_ns, md.tw_ns);
	int failed = 0;
	for (int t = 0; t < nn; t++) {
		int n = ns[t];
		if (n < 2) {
			fprintf(stderr, "lu_ring: n = %d: need n >= 2\n", n);
			failed = 1;
			continue;
		}
		size_t len = (size_t)n * n;
		double *a = malloc(len * sizeof *a), *f = malloc(len * sizeof *f);
		double *fref = malloc(len * sizeof *fref);
		if (!a || !f || !fref) {
			fprintf(stderr, "lu_ring: out of memory at n = %d\n", n);
			free(a), free(f), free(fref);
			return 1;
		}
		uint32_t s = 12345u + (uint32_t)n;
		for (int j = 0; j < n; j++)
			for (int i = 0; i < n; i++) {
				s = s * 1664525u + 1013904223u;
				a[(size_t)j * n + i] = (double)(s >> 8) / (double)(1u << 24) * 2 -
				                       1 + (i == j ? n : 0);
			}
		uint64_t seq = UINT64_MAX;
		for (int rep = 0; rep < reps; rep++) {
			memcpy(fref, a, len * sizeof *a);
			uint64_t t0 = now_ns();
			lu_seq(fref, n);
			uint64_t dt = now_ns() - t0;
			seq = dt < seq ? dt : seq;
		}
		/* Elementary operations: n(n-1)/2 divisions, sum (n-k-1)^2 updates. */
		double ops = 0;
		for (int k = 0; k < n - 1; k++)
			ops += (double)(n - k - 1) * (n - k);
		double ta = ta_opt > 0 ? ta_opt : (double)seq / ops;
		double res = residual(a, fref, n);
		double work = ops * ta;
		printf("n = %d: t_a = %.3f ns, sequential %.1f, residual %.2e\n", n, ta,
		       (double)seq / 1e3, res);
		printf("  %-10s %10s %10s %10s %7s %7s %7s %20s\n", "variant", "modelled",
		       "emulated", "measured", "eff_mo", "eff_em", "eff_me", "checksum");
		struct lu m = {.n = n, .ta_ns = ta, .a = a, .f = f};
		struct run r[V_COUNT][2]; /* [variant][native, emulated] */
		int err = 0;
		if (df)
			fprintf(df, "%d", n);
		for (int v = 0; v < V_COUNT && !err; v++) {
			m.variant = (enum variant)v;
			err = run_team(topo, p, &md, TC_MODE_NATIVE, &m, reps, fref, &r[v][0]);
			if (!err)
				err = run_team(topo, p, &md, TC_MODE_EMULATED, &m, reps, fref, &r[v][1]);
			if (err)
				break;
			double mo = r[v][0].modelled_ns, em = (double)r[v][1].wall_ns;
			double me = (double)r[v][0].wall_ns;
			printf("  %-10s %10.1f %10.1f %10.1f %7.3f %7.3f %7.3f %20.17g\n",
			       variant_name[v], mo / 1e3, em / 1e3, me / 1e3, work / (p * mo),
			       work / (p * em), (double)seq / (p * me), checksum(m.f, len));
			if (df)
				fprintf(df, " %.4f %.4f %.4f", work / (p * mo), work / (p * em),
				        (double)seq / (p * me));
			if (r[v][0].modelled_ns != r[v][1].modelled_ns) {
				fprintf(stderr,
				        "lu_ring: n = %d (%s): the logical clock differs between "
				        "the native and the emulated run\n",
				        n, variant_name[v]);
				failed = 1;
			}
		}
		if (err) {
			fprintf(stderr, "lu_ring: n = %d: %s\n", n, tc_strerror(err));
			failed = 1;
		} else {
			/* Slide 48 from the team's model (tc_team_model). */
			printf("  %-10s %10.1f\n", "slide 48",
			       slide48_ns(&r[0][0].model, n, p, ta) / 1e3);
			/* Gain = time without / time with look-ahead. */
			double g[3], o[3];
			for (int w = 0; w < 2; w++) {
				g[w] = r[V_BLOCKING][w].wall_ns / (double)r[V_LOOKAHEAD][w].wall_ns;
				o[w] = r[V_OVERLAP][w].wall_ns / (double)r[V_LOOKAHEAD][w].wall_ns;
			}
			g[2] = r[V_BLOCKING][0].modelled_ns / r[V_LOOKAHEAD][0].modelled_ns;
			o[2] = r[V_OVERLAP][0].modelled_ns / r[V_LOOKAHEAD][0].modelled_ns;
			printf("  look-ahead gain over blocking: predicted %.3f, emulated %.3f, "
			       "measured %.3f\n",
			       g[2], g[1], g[0]);
			printf("  look-ahead gain over overlap:  predicted %.3f, emulated %.3f, "
			       "measured %.3f\n",
			       o[2], o[1], o[0]);
			if (df)
				fprintf(df, " %.4f %.4f %.4f %.4f %.4f %.4f\n", g[2], g[1], g[0],
				        o[2], o[1], o[0]);
		}
		if (!(res < 1e-12)) {
			fprintf(stderr, "lu_ring: n = %d: residual %g too large\n", n, res);
			failed = 1;
		}
		free(a), free(f), free(fref);
	}
	if (df)
		fclose(df);
	printf("%s\n", failed ? "FAILED"
	                      : "ok: every run's factors = the sequential LU's, residual < 1e-12");
	return failed;
}
