/* SPDX-License-Identifier: MIT */
/*
 * examples/transpose.c - transposing a distributed matrix with an all-to-all
 * personalised exchange (tc_alltoall), by every algorithm that applies.
 *
 * What it shows.  A (N x N, N = p b) is distributed by blocks of b rows: rank
 * i holds rows i b .. i b + b - 1.  Its b x b block (i, j) must become block
 * (j, i) of the transpose, on rank j: an all-to-all personalised exchange in
 * which rank i sends a different block to every rank ([Goubault-ring] slide 20,
 * [KKA-I]'s scatter/all-to-all, the ring, mesh, hypercube and direct
 * algorithms of the catalogue).  Each rank packs block j already transposed
 * into block j of its send buffer, calls tc_alltoall once, and copies the p
 * blocks it receives into its rows of A^T.  For every topology given (default:
 * ring:p, complete:p, hypercube if p is a power of two, the squarest 2-D torus
 * and mesh, star:p, chain:p) the program runs every alltoall algorithm of the
 * registry (tc_alg_name) that applies there (tc_alg_applies), then AUTO, and
 * prints
 *   modelled   the collective's logical time (tc_last_coll), equal to
 *   predicted  tc_predict's makespan without threads (checked),
 *   formula    the algorithm's closed form from the sources (tc_predict),
 *   measured   the wall time of the run (tc_team_last_run).
 * Every rank checks its rows of A^T element by element (A[i][j] = i N + j);
 * the exit status is 1 when any run gave a wrong transpose or a modelled
 * time different from the prediction.
 *
 * Run:   build/examples/transpose 64 8                      (N = 64, p = 8)
 *        build/examples/transpose 240 6 torus:2x3 ring:6    (topologies of 6 nodes)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topocoll.h"

struct tr {
	int n, b;
	const char *alg;          /* NULL: AUTO */
	int bad;                  /* ranks that found a wrong element (written by each rank
	                         to its own slot, read after tc_run) */
	int *wrong;               /* p flags */
	struct tc_coll_info info; /* rank 0's */
};

static int transpose(struct tc_proc *proc, void *arg)
{
	struct tr *t = arg;
	int i = tc_rank(proc), p = tc_size(proc), n = t->n, b = t->b;
	size_t blk = (size_t)b * b;
	double *sbuf = malloc(2 * (size_t)p * blk * sizeof *sbuf);
	double *rows = malloc((size_t)b * n * sizeof *rows); /* rows i b.. of A^T */
	if (!sbuf || !rows) {
		free(sbuf);
		free(rows);
		return TC_ENOMEM;
	}
	double *rbuf = sbuf + (size_t)p * blk;
	/* Block j, transposed: sbuf_j[c][r] = A[i b + r][j b + c]. */
	for (int j = 0; j < p; j++)
		for (int c = 0; c < b; c++)
			for (int r = 0; r < b; r++)
				sbuf[j * blk + (size_t)c * b + r] =
				        (double)((long)(i * b + r) * n + (long)j * b + c);
	struct tc_coll_opts o = {.alg = t->alg};
	int err = tc_alltoall(proc, sbuf, rbuf, blk, TC_DOUBLE, &o);
	if (!err) {
		/* Block from rank j is (A_ji)^T = block (i, j) of A^T. */
		for (int j = 0; j < p; j++)
			for (int c = 0; c < b; c++)
				memcpy(rows + (size_t)c * n + (size_t)j * b,
				       rbuf + j * blk + (size_t)c * b, (size_t)b * sizeof *rows);
		int wrong = 0;
		for (int c = 0; c < b && !wrong; c++)
			for (int col = 0; col < n; col++)
				if (rows[(size_t)c * n + col] != (double)((long)col * n + i * b + c)) {
					wrong = 1;
					break;
				}
		t->wrong[i] = wrong;
		if (i == 0)
			tc_last_coll(proc, &t->info);
	}
	free(sbuf);
	free(rows);
	return err;
}

/* Appends the default topologies of p nodes to list[], returns how many. */
static int default_topos(int p, char list[][32])
{
	int k = 0;
	snprintf(list[k++], 32, "ring:%d", p);
	snprintf(list[k++], 32, "complete:%d", p);
	if (p > 1 && (p & (p - 1)) == 0) {
		int d = 0;
		while ((1 << d) < p)
			d++;
		snprintf(list[k++], 32, "hypercube:%d", d);
	}
	int a = 1;
	for (int x = 1; x * x <= p; x++)
		if (p % x == 0)
			a = x;
	if (a > 1) {
		snprintf(list[k++], 32, "torus:%dx%d", a, p / a);
		snprintf(list[k++], 32, "mesh:%dx%d", a, p / a);
	}
	snprintf(list[k++], 32, "star:%d", p);
	snprintf(list[k++], 32, "chain:%d", p);
	return k;
}

static int run_topo(const char *spec, int p, int n, int *failed)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.p = p;
	struct tc_team *team;
	int err = tc_team_create(&cfg, &team);
	if (err) {
		fprintf(stderr, "transpose: %s: %s\n", spec, tc_strerror(err));
		*failed = 1;
		return err;
	}
	const struct tc_topo *topo = tc_team_topo(team);
	const struct tc_model *md = tc_team_model(team);
	int *wrong = calloc((size_t)p, sizeof *wrong);
	if (!wrong) {
		tc_team_destroy(team);
		return TC_ENOMEM;
	}
	int b = n / p;
	size_t bytes = (size_t)b * b * sizeof(double);
	for (int a = 0;; a++) {
		const char *alg = tc_alg_name(TC_COLL_ALLTOALL, a);
		int is_auto = alg == NULL;
		if (!is_auto && tc_alg_applies(topo, md, TC_COLL_ALLTOALL, alg) != 0)
			continue;
		struct tr t = {.n = n, .b = b, .alg = alg, .wrong = wrong};
		memset(wrong, 0, (size_t)p * sizeof *wrong);
		err = tc_run(team, transpose, &t);
		struct tc_run_info ri;
		tc_team_last_run(team, &ri);
		struct tc_prediction pr;
		int perr = err ? err
		               : tc_predict(topo, md, TC_COLL_ALLTOALL, t.info.algorithm, bytes,
		                            sizeof(double), 0, 0, &pr);
		int bad = 0;
		for (int r = 0; r < p; r++)
			bad |= wrong[r];
		if (err || perr) {
			printf("%-14s %-10s error: %s\n", spec, is_auto ? "auto" : alg,
			       tc_strerror(err ? err : perr));
			*failed = 1;
		} else {
			double mo = (double)t.info.modelled_ps / TC_PS_PER_NS;
			double pred = (double)pr.modelled_ps / TC_PS_PER_NS;
			char name[40];
			snprintf(name, sizeof name, "%s%s", is_auto ? "auto=" : "", t.info.algorithm);
			printf("%-14s %-16s %6d %12.0f %12.0f %12.0f %12.0f  %s\n", spec, name,
			       t.info.rounds, mo, pred, pr.formula_ns, (double)ri.wall_ns,
			       bad ? "WRONG" : "ok");
			if (bad || mo != pred)
				*failed = 1;
		}
		if (is_auto)
			break;
	}
	free(wrong);
	tc_team_destroy(team);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: transpose N P [TOPOLOGY...]   (N a multiple of P)\n");
		return 2;
	}
	int n = atoi(argv[1]), p = atoi(argv[2]);
	if (p < 1 || n < p || n % p) {
		fprintf(stderr, "transpose: N = %d must be a positive multiple of P = %d\n", n, p);
		return 2;
	}
	char list[16][32];
	int k = 0;
	if (argc > 3) {
		for (int i = 3; i < argc && k < 16; i++)
			snprintf(list[k++], 32, "%s", argv[i]);
	} else {
		k = default_topos(p, list);
	}
	printf("transpose of a %d x %d matrix of doubles on %d ranks (blocks of %d x %d)\n", n, n,
	       p, n / p, n / p);
	printf("%-14s %-16s %6s %12s %12s %12s %12s  %s\n", "topology", "algorithm", "rounds",
	       "modelled_ns", "predicted_ns", "formula_ns", "measured_ns", "check");
	int failed = 0;
	for (int i = 0; i < k; i++)
		run_topo(list[i], p, n, &failed);
	printf("%s\n", failed ? "FAILED" : "ok: every transpose exact, modelled = predicted");
	return failed;
}
