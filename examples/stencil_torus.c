/* SPDX-License-Identifier: MIT */
/*
 * examples/stencil_torus.c - Jacobi sweeps of a 2-D periodic grid on a torus
 * of R x C virtual processors: halo exchanges with the four neighbours and an
 * allreduce of the residual at every sweep.
 *
 * What it shows.  The grid (G x G, periodic: it is itself a torus) is cut into
 * R x C blocks of h = G/R rows and w = G/C columns, block (a, b) on the rank at
 * coordinates (a, b) of "torus:RxC" (tc_topo_coords; neighbours one step
 * along each dimension, wrapping round, are linked).  Each rank keeps its
 * block with a one-cell halo.  A sweep is
 *   1. four tc_sendrecv calls: top row to the north and bottom halo from the
 *      south, then bottom row south / top halo from the north, then the left
 *      column west / right halo from the east, then the right column east /
 *      left halo from the west (columns packed into a buffer).  Every rank
 *      makes the same calls in the same order, so each is a shift along one
 *      dimension and none can deadlock; with R = 2 (or C = 2) the northern and
 *      the southern neighbour are one rank over one link, and the FIFO order
 *      of that link keeps the two messages apart; with R = 1 the halo is a
 *      local copy;
 *   2. u'[i][j] = (u[i-1][j] + u[i+1][j] + u[i][j-1] + u[i][j+1] + g[i][j]) / 4
 *      for the h w interior cells (the computation is charged to the logical
 *      clock with tc_clock_advance at the per-cell time measured on the
 *      sequential sweep);
 *   3. tc_allreduce (sum) of the squared changes: the residual
 *      sqrt(sum (u' - u)^2), identical on every rank, which every rank could
 *      use to stop (here the number of sweeps is fixed so that the run can be
 *      compared with the sequential one).
 * The program runs the same sweeps sequentially on the whole grid and checks
 * that the grids are equal bit for bit (same operations in the same order)
 * and that every sweep's residual agrees within 1e-10 relative (the allreduce
 * sums in another order).  Exit status 1 on a mismatch.  It prints the
 * residual's decrease, the measured and modelled times, and the time of the
 * sequential sweeps.
 *
 * Run:   build/examples/stencil_torus 256 4 4 200        (G R C SWEEPS)
 *        build/examples/stencil_torus 30 2 3 50
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topocoll.h"

struct st {
	int g, rr, cc, sweeps;
	double cell_ns;   /* charged per cell and sweep */
	double *grid;     /* g x g result: each rank writes its block */
	double *residual; /* sweeps entries, written by rank 0 */
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The source term, periodic with zero mean. */
static double source(int i, int j, int g)
{
	const double tau = 6.283185307179586;
	return sin(tau * i / g) * cos(2 * tau * j / g);
}

/* The one update rule, used by both versions. */
static inline double jacobi(double n, double s, double w, double e, double f)
{
	return (n + s + w + e + f) * 0.25;
}

/* Exchanges a halo along one dimension: sends sb to dst, receives rb from
 * src (or copies when the neighbour is this rank). */
static int halo(struct tc_proc *proc, int dst, const double *sb, int src, double *rb, int len)
{
	if (dst == tc_rank(proc)) {
		memcpy(rb, sb, (size_t)len * sizeof *rb);
		return 0;
	}
	return tc_sendrecv(proc, dst, sb, (size_t)len * sizeof *sb, src, rb,
	                   (size_t)len * sizeof *rb, NULL);
}

static int stencil(struct tc_proc *proc, void *arg)
{
	struct st *s = arg;
	int me = tc_rank(proc), g = s->g, h = g / s->rr, w = g / s->cc;
	const struct tc_topo *topo = tc_team_topo(tc_proc_team(proc));
	int c[2], nc[2];
	int err = tc_topo_coords(topo, me, c);
	if (err)
		return err;
	nc[0] = (c[0] + s->rr - 1) % s->rr, nc[1] = c[1];
	int north = tc_topo_rank_of(topo, nc);
	nc[0] = (c[0] + 1) % s->rr;
	int south = tc_topo_rank_of(topo, nc);
	nc[0] = c[0], nc[1] = (c[1] + s->cc - 1) % s->cc;
	int west = tc_topo_rank_of(topo, nc);
	nc[1] = (c[1] + 1) % s->cc;
	int east = tc_topo_rank_of(topo, nc);
	int i0 = c[0] * h, j0 = c[1] * w; /* global position of our block */
	size_t ld = (size_t)w + 2, cells = (size_t)(h + 2) * ld;
	double *u = calloc(2 * cells + (size_t)h * (w + 2) + 2 * (size_t)h, sizeof *u);
	if (!u)
		return TC_ENOMEM;
	double *un = u + cells, *f = un + cells, *cs = f + (size_t)h * (w + 2), *cr = cs + h;
	for (int i = 0; i < h; i++)
		for (int j = 0; j < w; j++)
			f[(size_t)i * (w + 2) + j] = source(i0 + i, j0 + j, g);
	for (int it = 0; it < s->sweeps && !err; it++) {
		/* 1. Halos: rows are contiguous, columns are packed. */
		err = halo(proc, north, u + ld + 1, south, u + (size_t)(h + 1) * ld + 1, w);
		if (!err)
			err = halo(proc, south, u + (size_t)h * ld + 1, north, u + 1, w);
		for (int i = 0; i < h; i++)
			cs[i] = u[(size_t)(i + 1) * ld + 1];
		if (!err)
			err = halo(proc, west, cs, east, cr, h);
		for (int i = 0; i < h && !err; i++)
			u[(size_t)(i + 1) * ld + w + 1] = cr[i];
		for (int i = 0; i < h; i++)
			cs[i] = u[(size_t)(i + 1) * ld + w];
		if (!err)
			err = halo(proc, east, cs, west, cr, h);
		for (int i = 0; i < h && !err; i++)
			u[(size_t)(i + 1) * ld] = cr[i];
		if (err)
			break;
		/* 2. The sweep. */
		double local = 0;
		for (int i = 1; i <= h; i++)
			for (int j = 1; j <= w; j++) {
				size_t x = (size_t)i * ld + j;
				un[x] = jacobi(u[x - ld], u[x + ld], u[x - 1], u[x + 1],
				               f[(size_t)(i - 1) * (w + 2) + j - 1]);
				local += (un[x] - u[x]) * (un[x] - u[x]);
			}
		err = tc_clock_advance(proc, (double)h * w * s->cell_ns);
		/* 3. The residual, on every rank. */
		double total = 0;
		if (!err)
			err = tc_allreduce(proc, &local, &total, 1, TC_DOUBLE, TC_OP_SUM, NULL);
		if (!err && me == 0)
			s->residual[it] = sqrt(total);
		double *t = u;
		u = un;
		un = t;
	}
	if (!err)
		for (int i = 0; i < h; i++)
			memcpy(s->grid + (size_t)(i0 + i) * g + j0, u + (size_t)(i + 1) * ld + 1,
			       (size_t)w * sizeof *u);
	free(u < un ? u : un); /* the one allocation starts at the lower of the two */
	return err;
}

/* The same sweeps on the whole periodic grid; returns the time taken. */
static uint64_t sequential(int g, int sweeps, double *u, double *res)
{
	double *un = malloc((size_t)g * g * sizeof *un), *f = malloc((size_t)g * g * sizeof *f);
	if (!un || !f) {
		free(un);
		free(f);
		return 0;
	}
	for (int i = 0; i < g; i++)
		for (int j = 0; j < g; j++)
			f[(size_t)i * g + j] = source(i, j, g);
	memset(u, 0, (size_t)g * g * sizeof *u);
	uint64_t t0 = now_ns();
	for (int it = 0; it < sweeps; it++) {
		double sum = 0;
		for (int i = 0; i < g; i++)
			for (int j = 0; j < g; j++) {
				size_t x = (size_t)i * g + j;
				double n = u[(size_t)((i + g - 1) % g) * g + j];
				double s = u[(size_t)((i + 1) % g) * g + j];
				double w = u[(size_t)i * g + (j + g - 1) % g];
				double e = u[(size_t)i * g + (j + 1) % g];
				un[x] = jacobi(n, s, w, e, f[x]);
				sum += (un[x] - u[x]) * (un[x] - u[x]);
			}
		res[it] = sqrt(sum);
		memcpy(u, un, (size_t)g * g * sizeof *u);
	}
	uint64_t dt = now_ns() - t0;
	free(un);
	free(f);
	return dt ? dt : 1;
}

int main(int argc, char **argv)
{
	int g = argc > 1 ? atoi(argv[1]) : 64, rr = argc > 2 ? atoi(argv[2]) : 2;
	int cc = argc > 3 ? atoi(argv[3]) : 2, sweeps = argc > 4 ? atoi(argv[4]) : 50;
	if (g < 1 || rr < 1 || cc < 1 || sweeps < 1 || g % rr || g % cc) {
		fprintf(stderr, "usage: stencil_torus [G R C SWEEPS]   (R and C divide G)\n");
		return 2;
	}
	size_t len = (size_t)g * g;
	double *grid = calloc(len, sizeof *grid), *ref = malloc(len * sizeof *ref);
	double *res = malloc((size_t)sweeps * sizeof *res);
	double *rref = malloc((size_t)sweeps * sizeof *rref);
	if (!grid || !ref || !res || !rref) {
		fprintf(stderr, "stencil_torus: out of memory\n");
		return 1;
	}
	uint64_t seq = sequential(g, sweeps, ref, rref);
	if (!seq) {
		fprintf(stderr, "stencil_torus: out of memory\n");
		return 1;
	}
	char spec[48];
	snprintf(spec, sizeof spec, "torus:%dx%d", rr, cc);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	struct tc_team *team;
	int err = tc_team_create(&cfg, &team);
	if (err) {
		fprintf(stderr, "stencil_torus: %s: %s\n", spec, tc_strerror(err));
		return 1;
	}
	struct st s = {.g = g,
	               .rr = rr,
	               .cc = cc,
	               .sweeps = sweeps,
	               .cell_ns = (double)seq / ((double)len * sweeps),
	               .grid = grid,
	               .residual = res};
	err = tc_run(team, stencil, &s);
	struct tc_run_info ri;
	tc_team_last_run(team, &ri);
	tc_team_destroy(team);
	int failed = 0;
	if (err) {
		fprintf(stderr, "stencil_torus: %s\n", tc_strerror(err));
		failed = 1;
	} else {
		if (memcmp(grid, ref, len * sizeof *grid) != 0) {
			fprintf(stderr, "stencil_torus: the grid differs from the sequential sweeps\n");
			failed = 1;
		}
		for (int it = 0; it < sweeps; it++)
			if (fabs(res[it] - rref[it]) > 1e-10 * fabs(rref[it]) + 1e-300) {
				fprintf(stderr,
				        "stencil_torus: sweep %d: residual %.17g, sequential %.17g\n",
				        it, res[it], rref[it]);
				failed = 1;
				break;
			}
		printf("stencil_torus: %d x %d grid on %s, %d sweeps\n", g, g, spec, sweeps);
		for (int it = 0; it < sweeps; it += (sweeps + 4) / 5)
			printf("  sweep %4d  residual %.6e\n", it, res[it]);
		printf("  sweep %4d  residual %.6e\n", sweeps - 1, res[sweeps - 1]);
		printf("  sequential %.0f ns (%.2f ns per cell), measured %.0f ns, modelled %.0f ns\n",
		       (double)seq, s.cell_ns, (double)ri.wall_ns,
		       (double)ri.makespan_ps / TC_PS_PER_NS);
	}
	printf("%s\n", failed ? "FAILED" : "ok: grid = sequential sweeps bit for bit, residuals agree");
	free(grid), free(ref), free(res), free(rref);
	return failed;
}
