/* SPDX-License-Identifier: MIT */
/*
 * tests/mpi/test_mpi.c - teams over MPI processes (topocoll/mpi.h), run
 * under an MPI launcher: `mpirun -np P test_mpi MODE...` (the modes in
 * turn, in one launch).  Rank 0 prints TAP;
 * every check is agreed by all processes (a case passes when it passes on
 * every one).  Modes:
 *   coll, coll:direct  every collective x every algorithm that applies (and
 *                  auto) x the topologies of P nodes, 5 elements and 1600
 *                  (over the executor's packing size), against the
 *                  sequential reference (tests/common/coll_ref.c), with
 *                  routed transfers forwarded hop by hop (default) or
 *                  direct;
 *   threads        order-sensitive double sums (inputs whose sums round)
 *                  of every reducing algorithm, bit for bit against the
 *                  same call on a team of threads (rank 0 runs it), and
 *                  the logical makespan against tc_predict;
 *   emulated       t_s = 2 ms: no process completes a call before epoch +
 *                  its logical clock, and the clocks are the prediction's;
 *   mismatch       process 0 calls another size, or another collective:
 *                  every process fails with TC_EMISMATCH, then the team
 *                  refuses further calls (TC_EABORTED); point-to-point
 *                  calls are refused (TC_ENOTSUP);
 *   early          the last process returns before a collective: the
 *                  others fail with TC_ETIMEDOUT or TC_EABORTED within the
 *                  team's timeout, none hangs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topocoll.h"
#include "topocoll/mpi.h"

#include "../common/coll_ref.h"
#include "../common/util.h"

static int me, np, ntap, nfail;

/* Agrees ok over every process; rank 0 prints the TAP line. */
static int check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int check(int ok, const char *fmt, ...)
{
	int all = 0;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	ntap++;
	if (!all)
		nfail++;
	if (me == 0) {
		va_list ap;
		va_start(ap, fmt);
		printf("%s %d - np%d ", all ? "ok" : "not ok", ntap, np);
		vprintf(fmt, ap);
		printf("\n");
		va_end(ap);
		fflush(stdout);
	}
	return all;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct tc_team *make_team(const char *spec, const struct tc_model *md, enum tc_mode mode,
                                 uint64_t timeout_ms, enum tc_mpi_route route, struct tc_proc **proc)
{
	struct tc_team_config c;
	tc_team_config_default(&c);
	c.topology = spec;
	if (md)
		c.model = *md;
	c.mode = mode;
	c.timeout_ms = timeout_ms;
	struct tc_mpi_opts o = {.route = route};
	struct tc_team *t = NULL;
	int err = tc_team_create_mpi(MPI_COMM_WORLD, &c, &o, &t, proc);
	if (err && me == 0)
		fprintf(stderr, "# tc_team_create_mpi(%s): %s: %s\n", spec, tc_strerror(err),
		        tc_error_detail());
	return err ? NULL : t;
}

/* One case on this process; 1 passed, 0 failed, -1 not applicable
 * (TC_ENOTSUP on every process). */
static int run_case(struct tc_proc *proc, const struct ct_case *c, char *why, size_t len)
{
	size_t sb = ct_sbytes(c, np, me), rb = ct_rbytes(c, np, me);
	unsigned char *s = malloc(sb + 1), *r = malloc(rb + 1), *e = malloc(rb + 1);
	size_t es = tc_dtype_size(c->dt);
	for (size_t i = 0; i < sb / es; i++)
		ct_input(c, me, i, s + i * es);
	memset(r, 0x5a, rb + 1);
	if ((c->coll == TC_COLL_BCAST || c->coll == TC_COLL_MULTICAST) && me == c->root)
		for (size_t i = 0; i < c->count; i++) /* its one buffer is the input */
			ct_input(c, me, i, r + i * es);
	int err = ct_call(proc, c, s, r);
	int ok = 1;
	if (err == TC_ENOTSUP) {
		ok = -1;
	} else if (err) {
		snprintf(why, len, "rank %d: %s (%s)", me, tc_strerror(err), tc_error_detail());
		ok = 0;
	} else if (ct_expect(c, np, me, e) == 0 && memcmp(e, r, rb)) {
		snprintf(why, len, "rank %d: result differs from the reference", me);
		ok = 0;
	}
	free(s);
	free(r);
	free(e);
	return ok;
}

static void mode_coll(enum tc_mpi_route route)
{
	char specs[16][32];
	int ns = tc_test_specs_for(np, specs, 16);
	int members[2] = {0, np - 1};
	for (int k = 0; k < ns; k++) {
		/* To keep the suite short: chain and tree:3 route as ring and
		 * tree:2 do; direct routes nothing on a complete graph; at 8
		 * processes (on fewer CPUs) the mesh is left to the torus and
		 * the large size to the ring (the packing threshold is the
		 * executor's, not the topology's). */
		if (!strncmp(specs[k], "tree:3", 6) || !strncmp(specs[k], "chain", 5) ||
		    (route == TC_MPI_DIRECT && !strncmp(specs[k], "complete", 8)) ||
		    (np >= 8 && !strncmp(specs[k], "mesh", 4)))
			continue;
		const int nbig = np < 8 || !strncmp(specs[k], "ring", 4) ? 2 : 1;
		struct tc_proc *proc;
		struct tc_team *t = make_team(specs[k], NULL, TC_MODE_NATIVE, 20000, route, &proc);
		if (!check(t != NULL, "%s: team created", specs[k]))
			continue;
		const struct tc_model md =
		        ct_model(1000, 1, 0, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
		struct tc_topo *topo;
		tc_topo_parse(specs[k], &topo);
		int passed = 0, failed = 0;
		char first[256] = "";
		for (int coll = 0; coll <= TC_COLL_MULTICAST; coll++) {
			for (int a = -1;; a++) {
				const char *alg = a < 0 ? NULL : tc_alg_name((enum tc_coll)coll, a);
				if (a >= 0 && !alg)
					break;
				if (alg && tc_alg_applies(topo, &md, (enum tc_coll)coll, alg))
					continue;
				for (int big = 0; big < nbig; big++) {
					struct ct_case c = {.coll = (enum tc_coll)coll,
					                    .alg = alg,
					                    .count = big ? 1600 : 5,
					                    .dt = TC_INT32,
					                    .op = TC_OP_SUM,
					                    .root = np - 1,
					                    .q = 1,
					                    .seed = 7 + (uint64_t)coll,
					                    .members = members,
					                    .nmembers = np > 1 ? 2 : 1};
					char why[256] = "";
					int ok = run_case(proc, &c, why, sizeof why), all = 0;
					MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
					if (all < 0 && ok < 0)
						continue; /* not applicable everywhere */
					if (all > 0) {
						passed++;
						continue;
					}
					failed++;
					if (!first[0])
						snprintf(first, sizeof first, "%s %s count %zu: %s",
						         tc_coll_name(c.coll), alg ? alg : "auto",
						         c.count, why[0] ? why : "(on another rank)");
					if (ok == 0)
						fprintf(stderr, "# %s %s %s count %zu: %s\n",
						        specs[k], tc_coll_name(c.coll),
						        alg ? alg : "auto", c.count, why);
				}
			}
		}
		MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
		check(failed == 0 && passed > 0, "%s %s: %d cases against the reference%s%s",
		      specs[k], route == TC_MPI_DIRECT ? "direct" : "forward", passed + failed,
		      failed ? "; first failure: " : "", first);
		tc_topo_destroy(topo);
		tc_team_destroy_mpi(t);
	}
}

/* Order-sensitive inputs: sums round, so any other order of combining
 * gives other bits. */
static void rough_input(int rank, double *v, size_t n)
{
	uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
	for (size_t i = 0; i < n; i++)
		v[i] = (double)(tc_test_rand(&s) >> 11) * 0x1p-53 * 1e6 / (double)(i + 1);
}

struct thr_arg {
	enum tc_coll coll;
	const char *alg;
	size_t n;
	double *out; /* p blocks of n */
};

static int call_red(struct tc_proc *proc, enum tc_coll coll, const char *alg, const double *in,
                    double *out, size_t n)
{
	struct tc_coll_opts o = {.alg = alg};
	switch (coll) {
	case TC_COLL_ALLREDUCE:
		return tc_allreduce(proc, in, out, n, TC_DOUBLE, TC_OP_SUM, &o);
	case TC_COLL_REDUCE:
		return tc_reduce(proc, in, out, n, TC_DOUBLE, TC_OP_SUM, 0, &o);
	case TC_COLL_SCAN:
		return tc_scan(proc, in, out, n, TC_DOUBLE, TC_OP_SUM, &o);
	case TC_COLL_REDUCE_SCATTER:
		return tc_reduce_scatter(proc, in, out, n / (size_t)tc_size(proc), TC_DOUBLE,
		                         TC_OP_SUM, &o);
	default:
		return TC_EINVAL;
	}
}

static int thr_fn(struct tc_proc *proc, void *argp)
{
	struct thr_arg *a = argp;
	int r = tc_rank(proc);
	double *in = malloc(a->n * sizeof *in);
	rough_input(r, in, a->n);
	int err = call_red(proc, a->coll, a->alg, in, a->out + (size_t)r * a->n, a->n);
	free(in);
	return err;
}

static void mode_threads(void)
{
	const char *specs[3];
	char ring[32], cube[32];
	snprintf(ring, sizeof ring, "ring:%d", np);
	specs[0] = ring;
	specs[1] = "complete";
	int nsp = 2;
	if ((np & (np - 1)) == 0 && np > 1) {
		int d = 0;
		while ((1 << d) < np)
			d++;
		snprintf(cube, sizeof cube, "hypercube:%d", d);
		specs[nsp++] = cube;
	}
	static const enum tc_coll colls[] = {TC_COLL_ALLREDUCE, TC_COLL_REDUCE, TC_COLL_SCAN,
	                                     TC_COLL_REDUCE_SCATTER};
	const size_t n = (size_t)np * 700; /* 5.6 KB per rank at np 1 */
	for (int k = 0; k < nsp; k++) {
		struct tc_proc *proc;
		struct tc_team *t =
		        make_team(specs[k], NULL, TC_MODE_NATIVE, 20000, TC_MPI_FORWARD, &proc);
		if (!check(t != NULL, "%s: team created", specs[k]))
			continue;
		struct tc_team *tt = NULL;
		if (me == 0) {
			struct tc_team_config c;
			tc_team_config_default(&c);
			c.topology = specs[k];
			c.p = np;
			c.timeout_ms = 20000;
			tc_team_create(&c, &tt);
		}
		int same = 1, ncase = 0;
		char first[160] = "";
		for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++)
			for (int a = 0; tc_alg_name(colls[ci], a); a++) {
				const char *alg = tc_alg_name(colls[ci], a);
				double *in = malloc(n * sizeof *in), *out = calloc(n, sizeof *out);
				double *all = me == 0 ? calloc((size_t)np * n, sizeof *all) : NULL;
				double *thr = me == 0 ? calloc((size_t)np * n, sizeof *thr) : NULL;
				rough_input(me, in, n);
				int err = call_red(proc, colls[ci], alg, in, out, n), any = 0;
				MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
				MPI_Gather(out, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, 0,
				           MPI_COMM_WORLD);
				int ok = 1;
				if (!any && err == 0 && me == 0) {
					struct thr_arg ta = {colls[ci], alg, n, thr};
					int terr = tt ? tc_run(tt, thr_fn, &ta) : TC_ENOMEM;
					/* reduce: only the root's result is defined; reduce_scatter:
					 * each rank's block */
					size_t cmp = colls[ci] == TC_COLL_REDUCE_SCATTER
					                     ? n / (size_t)np
					                     : n;
					for (int r = 0; r < np && ok; r++) {
						if (colls[ci] == TC_COLL_REDUCE && r != 0)
							continue;
						ok = !terr && !memcmp(all + (size_t)r * n,
						                      thr + (size_t)r * n,
						                      cmp * sizeof(double));
					}
					if (!ok && !first[0])
						snprintf(first, sizeof first, "%s %s (thread run: %s)",
						         tc_coll_name(colls[ci]), alg,
						         tc_strerror(terr));
				}
				if (!any && err == 0)
					ncase++;
				else if (err && err != TC_ENOTSUP) {
					ok = 0;
					if (me == 0 && !first[0])
						snprintf(first, sizeof first, "%s %s: %s",
						         tc_coll_name(colls[ci]), alg,
						         tc_strerror(err));
				}
				same &= ok;
				free(in);
				free(out);
				free(all);
				free(thr);
			}
		MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
		MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
		check(same && ncase > 0, "%s: %d rounding double sums bit for bit as on threads%s%s",
		      specs[k], ncase, first[0] ? ": " : "", first);
		if (tt)
			tc_team_destroy(tt);
		tc_team_destroy_mpi(t);
	}
}

static void mode_emulated(void)
{
	char spec[32];
	snprintf(spec, sizeof spec, "ring:%d", np);
	const struct tc_model md = ct_model(2000000, 1, 0, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	for (int route = 0; route < 2; route++) {
		struct tc_proc *proc;
		struct tc_team *t =
		        make_team(spec, &md, TC_MODE_EMULATED, 60000, (enum tc_mpi_route)route, &proc);
		if (!check(t != NULL, "%s emulated: team created", spec))
			continue;
		double v[4] = {1, 2, 3, (double)me}, w[4];
		struct tc_coll_opts o = {.alg = "ring"};
		int err = tc_allreduce(proc, v, w, 4, TC_DOUBLE, TC_OP_SUM, &o);
		uint64_t end = now_ns();
		tc_time_t clk = tc_clock(proc), mx = 0;
		MPI_Allreduce(&clk, &mx, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
		struct tc_topo *topo;
		tc_topo_parse(spec, &topo);
		struct tc_prediction pr;
		int perr = tc_predict(topo, &md, TC_COLL_ALLREDUCE, "ring", 4 * sizeof(double),
		                      sizeof(double), 0, 0, &pr);
		/* The epoch is the team's; logical 0 is its creation: the wall
		 * clock at the end is at least epoch + this process's clock. */
		uint64_t epoch = tc_mpi_epoch_ns(t);
		int ok = !err && !perr && (uint64_t)(end - epoch) + 100000u >= (uint64_t)(clk / 1000);
		check(ok,
		      "%s emulated %s: no process done before epoch + its clock "
		      "(%.3f ms wall, %.3f ms modelled)",
		      spec, route ? "direct" : "forward", (double)(end - epoch) / 1e6,
		      (double)clk / 1e9);
		check(!perr && mx == pr.modelled_ps, "%s emulated %s: makespan %lld ps = prediction %lld",
		      spec, route ? "direct" : "forward", (long long)mx, (long long)pr.modelled_ps);
		tc_topo_destroy(topo);
		tc_team_destroy_mpi(t);
	}
}

static void mode_mismatch(void)
{
	char spec[32];
	snprintf(spec, sizeof spec, "ring:%d", np);
	for (int kind = 0; kind < 2; kind++) {
		struct tc_proc *proc;
		struct tc_team *t = make_team(spec, NULL, TC_MODE_NATIVE, 30000, TC_MPI_FORWARD, &proc);
		if (!check(t != NULL, "%s mismatch: team created", spec))
			continue;
		int v[64] = {0}, w[64];
		int err;
		if (me != 0)
			err = tc_allreduce(proc, v, w, 8, TC_INT32, TC_OP_SUM, NULL);
		else if (kind == 0)
			err = tc_allreduce(proc, v, w, 16, TC_INT32, TC_OP_SUM, NULL);
		else
			err = tc_bcast(proc, v, 8, TC_INT32, 0, NULL);
		/* The bcast's root only sends: it may return before anything
		 * tells it; its next call fails. */
		const int sender_only = kind == 1 && me == 0;
		int ok = np == 1 ? err == 0 : err == TC_EMISMATCH || (sender_only && err == 0);
		if (!ok)
			fprintf(stderr, "# rank %d: %s (%s)\n", me, tc_strerror(err), tc_error_detail());
		check(ok, "%s: %s on process 0: every process gets TC_EMISMATCH%s", spec,
		      kind ? "bcast against allreduce" : "16 elements against 8",
		      kind ? " (the root, which only sends, 0 or TC_EMISMATCH)" : "");
		int again = tc_barrier(proc, NULL);
		check(np == 1 ? again == 0
		              : again == TC_EABORTED || (sender_only && err == 0 && again == TC_EMISMATCH),
		      "%s: the team refuses the next call (TC_EABORTED%s)", spec,
		      kind ? "; the root told now: TC_EMISMATCH" : "");
		tc_team_destroy_mpi(t);
	}
	/* Point-to-point between processes: refused, with its reason. */
	struct tc_proc *proc;
	struct tc_team *t = make_team(spec, NULL, TC_MODE_NATIVE, 30000, TC_MPI_FORWARD, &proc);
	if (!check(t != NULL, "%s p2p: team created", spec))
		return;
	int v = 0;
	tc_request q;
	int e1 = tc_send(proc, (me + 1) % np, &v, sizeof v);
	int e2 = tc_irecv(proc, (me + np - 1) % np, &v, sizeof v, &q);
	check(np == 1 || (e1 == TC_ENOTSUP && e2 == TC_ENOTSUP && strstr(tc_error_detail(), "MPI")),
	      "%s: tc_send and tc_irecv between processes: TC_ENOTSUP, named", spec);
	tc_team_destroy_mpi(t);
}

static void mode_early(void)
{
	char spec[32];
	snprintf(spec, sizeof spec, "ring:%d", np);
	struct tc_proc *proc;
	struct tc_team *t = make_team(spec, NULL, TC_MODE_NATIVE, 1500, TC_MPI_FORWARD, &proc);
	if (!check(t != NULL, "%s early: team created", spec))
		return;
	int err = 0;
	uint64_t t0 = now_ns();
	if (me != np - 1 || np == 1) {
		int v[4] = {1, 2, 3, 4}, w[4];
		err = tc_allreduce(proc, v, w, 4, TC_INT32, TC_OP_SUM, NULL);
	}
	double s = (double)(now_ns() - t0) / 1e9;
	int ok = np == 1 || me == np - 1 ? err == 0 : (err == TC_ETIMEDOUT || err == TC_EABORTED);
	if (!ok)
		fprintf(stderr, "# rank %d: %s after %.2f s\n", me, tc_strerror(err), s);
	check(ok,
	      "%s: process %d returns early: the others fail with TC_ETIMEDOUT or "
	      "TC_EABORTED",
	      spec, np - 1);
	tc_team_destroy_mpi(t);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	/* Each argument a mode, run in turn (coll:direct: coll with direct
	 * routes); none: coll. */
	for (int a = 1; a < argc || a == 1; a++) {
		const char *mode = a < argc ? argv[a] : "coll";
		if (!strcmp(mode, "coll"))
			mode_coll(TC_MPI_FORWARD);
		else if (!strcmp(mode, "coll:direct"))
			mode_coll(TC_MPI_DIRECT);
		else if (!strcmp(mode, "threads"))
			mode_threads();
		else if (!strcmp(mode, "emulated"))
			mode_emulated();
		else if (!strcmp(mode, "mismatch")) {
			/* MPICH raises a failed request's error (a longer message
			 * than the receive: truncation) on MPI_COMM_WORLD's handler,
			 * not on the team's communicator's: a program that wants
			 * TC_EMISMATCH there rather than MPICH's abort says so
			 * (docs/mpi.md). */
			MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
			mode_mismatch();
		} else if (!strcmp(mode, "early"))
			mode_early();
		else
			check(0, "unknown mode %s", mode);
	}
	if (me == 0)
		printf("1..%d\n", ntap);
	MPI_Finalize();
	return nfail ? 1 : 0;
}
