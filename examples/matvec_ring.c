/* SPDX-License-Identifier: MIT */
/*
 * examples/matvec_ring.c - y = A x on a ring of p virtual processors, with the
 * communication overlapped by the computation ([Goubault-ring], slides 33-35).
 *
 * What it shows.  A (n x n, n = p r) is distributed by blocks of r rows: rank
 * q holds rows q r .. q r + r - 1 and the q-th block of x.  In each of p steps
 * every rank starts sending its current block of x to the right (tc_isend),
 * starts receiving the next one from the left (tc_irecv), multiplies its r x r
 * block of A by the block it holds, and only then waits for both transfers
 * (tc_waitall): the communication goes on while the rank computes.  After p
 * steps every block of x has visited every rank and rank q holds y's q-th
 * block.  The computation is charged to the logical clock with
 * tc_clock_advance(r^2 t_a), t_a (ns per multiply-add) being measured on a
 * sequential product of the same n (or given with --ta), so the modelled time
 * is [Goubault-ring]'s
 *
 *     T(n, p) = p max(r^2 t_a, t_s + r t_w')        (t_w' = 8 t_w: per double)
 *
 * where t_s and t_w come from the team's model (tc_team_model); the program
 * checks that the logical clock equals it (up to the picosecond rounding of the
 * charges) and that y equals the sequential product exactly (integer-valued
 * entries, so every sum is exact whatever the order); it prints a checksum
 * of y (sum of y[i] (i mod 7 + 1)) to compare with other versions
 * (examples/mpi/matvec_ring.c).  Efficiency is the
 * sequential time over p times the parallel time: n^2 t_a / (p T) in the
 * model, which tends to 1 as n grows (slide 35), and the sequential product's
 * measured time over p times the run's wall time for the emulated and the
 * measured runs.
 *
 * Each n runs twice: natively (measured: the channels at full speed, the
 * product really computed) and emulated (TC_MODE_EMULATED: no message is taken
 * before the model has delivered it, and tc_clock_advance waits the charged
 * computation out, so the wall time follows the model once the modelled times
 * are well above the machine's wake-up latency: with t_s = 1 ms and t_a = 100
 * ns it stayed within 2% on a busy 2-core machine).  The wall time is the
 * minimum over --reps runs.
 *
 * Run:   build/examples/matvec_ring --p 4 64 128 256 512 1024
 *        build/examples/matvec_ring --p 4 --ts 1000000 --tw 100 --ta 100 --data eff.dat \
 *            64 128 256 512 1024 2048
 * Options: --p P (ranks, default 4), --ts NS --tw NS (the model's t_s and t_w
 * per byte; default the library's 1000 ns and 1 ns/B), --ta NS (t_a instead of
 * the measured one), --reps R (default 3), --data FILE (n and the three
 * efficiencies, for docs/examples_efficiency.gp).  Every n must be a multiple of
 * p.  Exit status 0 when every check passed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topocoll.h"

struct mv {
	int n, r;
	const double *a; /* n x n, row-major: rank q reads only its r rows */
	const double *x; /* n: rank q reads only its block to start with */
	double *y;       /* n: rank q writes only its block */
	double ta_ns;    /* charged per multiply-add */
};

/* A checksum of y, printed so that other versions' results can be
 * compared (examples/mpi/matvec_ring.c): sum of y[i] (i mod 7 + 1), exact. */
static double checksum(const double *y, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += y[i] * (i % 7 + 1);
	return s;
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* y[0..r) += A[rows, c0 .. c0 + r) x[0..r), A row-major with n columns. */
static void block_mv(const double *a, int n, int r, int c0, const double *x, double *y)
{
	for (int i = 0; i < r; i++) {
		double s = y[i];
		for (int j = 0; j < r; j++)
			s += a[(size_t)i * n + c0 + j] * x[j];
		y[i] = s;
	}
}

/* The SPMD program of slide 34, with nonblocking transfers. */
static int matvec(struct tc_proc *proc, void *arg)
{
	const struct mv *m = arg;
	int q = tc_rank(proc), p = tc_size(proc), r = m->r, n = m->n;
	int right = (q + 1) % p, left = (q + p - 1) % p;
	double *buf = malloc(2 * (size_t)r * sizeof *buf), *y = calloc((size_t)r, sizeof *y);
	if (!buf || !y) {
		free(buf);
		free(y);
		return TC_ENOMEM;
	}
	double *x = buf, *next = buf + r;
	memcpy(x, m->x + (size_t)q * r, (size_t)r * sizeof *x);
	const double *rows = m->a + (size_t)q * r * n;
	int err = 0;
	for (int step = 0; step < p && !err; step++) {
		tc_request req[2];
		int nreq = 0;
		if (p > 1) {
			err = tc_isend(proc, right, x, (size_t)r * sizeof *x, &req[nreq]);
			if (!err)
				nreq++;
			if (!err)
				err = tc_irecv(proc, left, next, (size_t)r * sizeof *next, &req[nreq]);
			if (!err)
				nreq++;
		}
		/* The block held at this step started on rank q - step. */
		int c0 = ((q - step) % p + p) % p * r;
		block_mv(rows, n, r, c0, x, y);
		int e = tc_clock_advance(proc, (double)r * r * m->ta_ns);
		err = err ? err : e;
		e = nreq ? tc_waitall(proc, nreq, req) : 0;
		err = err ? err : e;
		double *t = x;
		x = next;
		next = t;
	}
	if (!err)
		memcpy(m->y + (size_t)q * r, y, (size_t)r * sizeof *y);
	free(buf);
	free(y);
	return err;
}

struct run {
	struct tc_model model; /* the team's (tc_team_model): the source's formula uses it */
	uint64_t wall_ns;      /* minimum over the reps */
	double modelled_ns;
};

static int run_team(const char *topo, int p, const struct tc_model *md, enum tc_mode mode,
                    struct mv *m, int reps, const double *yref, struct run *out)
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
	out->wall_ns = UINT64_MAX;
	for (int k = 0; k < reps && !err; k++) {
		memset(m->y, 0, (size_t)m->n * sizeof *m->y);
		err = tc_run(team, matvec, m);
		if (err)
			break;
		if (memcmp(m->y, yref, (size_t)m->n * sizeof *yref) != 0) {
			fprintf(stderr,
			        "matvec_ring: n = %d: y differs from the sequential product\n", m->n);
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

static void usage(void)
{
	fprintf(stderr, "usage: matvec_ring [--p P] [--ts NS] [--tw NS] [--ta NS] [--reps R] "
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
		static const int dflt[] = {64, 128, 256, 512, 1024};
		for (nn = 0; nn < 5; nn++)
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
		        "# matvec_ring --p %d --ts %g --tw %g: n, efficiency modelled, "
		        "emulated, measured\n",
		        p, md.ts_ns, md.tw_ns);
	printf("matvec_ring on %s, t_s = %g ns, t_w = %g ns/B (t_w' = %g ns per double)\n", topo,
	       md.ts_ns, md.tw_ns, 8 * md.tw_ns);
	printf("%6s %5s %7s %12s %12s %12s %12s %12s %6s %6s %6s %20s\n", "n", "r", "t_a",
	       "formula_ns", "modelled_ns", "emulated_ns", "measured_ns", "seq_ns", "eff_mo",
	       "eff_em", "eff_me", "checksum");
	int failed = 0;
	for (int k = 0; k < nn; k++) {
		int n = ns[k];
		if (n < p || n % p) {
			fprintf(stderr,
			        "matvec_ring: n = %d is not a positive multiple of p = %d\n", n, p);
			failed = 1;
			continue;
		}
		int r = n / p;
		double *a = malloc((size_t)n * n * sizeof *a), *x = malloc((size_t)n * sizeof *x);
		double *y = malloc((size_t)n * sizeof *y), *yref = malloc((size_t)n * sizeof *yref);
		if (!a || !x || !y || !yref) {
			fprintf(stderr, "matvec_ring: out of memory at n = %d\n", n);
			free(a), free(x), free(y), free(yref);
			return 1;
		}
		for (int i = 0; i < n; i++) {
			x[i] = (double)(i % 5 - 2);
			for (int j = 0; j < n; j++)
				a[(size_t)i * n + j] = (double)((i * 7 + j * 3) % 11 - 5);
		}
		/* The sequential product: the reference and t_a (best of reps). */
		uint64_t seq = UINT64_MAX;
		for (int rep = 0; rep < reps; rep++) {
			memset(yref, 0, (size_t)n * sizeof *yref);
			uint64_t t0 = now_ns();
			for (int i = 0; i < n; i += r)
				for (int c = 0; c < n; c += r)
					block_mv(a + (size_t)i * n, n, r, c, x + c, yref + i);
			uint64_t t = now_ns() - t0;
			seq = t < seq ? t : seq;
		}
		double ta = ta_opt > 0 ? ta_opt : (double)seq / ((double)n * n);
		struct mv m = {.n = n, .r = r, .a = a, .x = x, .y = y, .ta_ns = ta};
		struct run nat, emu;
		int err = run_team(topo, p, &md, TC_MODE_NATIVE, &m, reps, yref, &nat);
		if (!err)
			err = run_team(topo, p, &md, TC_MODE_EMULATED, &m, reps, yref, &emu);
		if (err) {
			fprintf(stderr, "matvec_ring: n = %d: %s\n", n, tc_strerror(err));
			failed = 1;
		} else {
			/* [Goubault-ring]'s formula from the team's model (tc_team_model). */
			const struct tc_model *tm = &nat.model;
			double comm = p > 1 ? tm->ts_ns + 8.0 * r * tm->tw_ns : 0;
			double comp = (double)r * r * ta;
			double formula = p * (comp > comm ? comp : comm);
			double work = (double)n * n * ta;
			printf("%6d %5d %7.3f %12.0f %12.0f %12.0f %12.0f %12.0f %6.3f %6.3f %6.3f "
			       "%20.17g\n",
			       n, r, ta, formula, nat.modelled_ns, (double)emu.wall_ns,
			       (double)nat.wall_ns, (double)seq, work / (p * nat.modelled_ns),
			       work / (p * (double)emu.wall_ns),
			       (double)seq / (p * (double)nat.wall_ns), checksum(y, n));
			if (df)
				fprintf(df, "%d %.4f %.4f %.4f\n", n, work / (p * nat.modelled_ns),
				        work / (p * (double)emu.wall_ns),
				        (double)seq / (p * (double)nat.wall_ns));
			/* The clock keeps integer picoseconds (topocoll/model.h): t_s,
			 * t_w and every charge are rounded to 0.5 ps, so each of the p
			 * steps may be off by (2 + 8 r) 0.5 ps. */
			if (fabs(nat.modelled_ns - formula) > p * (2.0 + 8.0 * r) * 0.5e-3 + 1e-9 ||
			    nat.modelled_ns != emu.modelled_ns) {
				fprintf(stderr,
				        "matvec_ring: n = %d: modelled %.3f ns (emulated %.3f) "
				        "!= [Goubault-ring]'s %.3f ns\n",
				        n, nat.modelled_ns, emu.modelled_ns, formula);
				failed = 1;
			}
		}
		free(a), free(x), free(y), free(yref);
	}
	if (df)
		fclose(df);
	printf("%s\n", failed ? "FAILED"
	                      : "ok: y = A x exactly, modelled time = [Goubault-ring]'s formula");
	return failed;
}
