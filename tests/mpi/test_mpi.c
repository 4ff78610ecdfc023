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
 *   ct             routed transfers forwarded in packets under a
 *                  cut-through model (ring:P, chain:P; linear bcast,
 *                  scatter, gather, allgather, allreduce): against the
 *                  reference, bit for bit against threads (results and
 *                  clocks), and the messages each forwarded transfer took;
 *   threads        order-sensitive double sums (inputs whose sums round)
 *                  of every reducing algorithm, bit for bit against the
 *                  same call on a team of threads (rank 0 runs it), and
 *                  the logical makespan against tc_predict;
 *   emulated       t_s = 2 ms: no process completes a call before epoch +
 *                  its logical clock, and the clocks are the prediction's;
 *   mismatch       process 0 calls another size, or another collective:
 *                  every process fails with TC_EMISMATCH, then the team
 *                  refuses further calls (TC_EABORTED);
 *   p2p            the examples' point-to-point patterns (ring_sum's chain
 *                  of tc_recv/tc_send, a blocking ring shift, matvec_ring's
 *                  tc_isend/tc_irecv rotation with tc_waitall and tc_wait,
 *                  packed and split sizes, tags out of order, truncation,
 *                  a routed message) on ring:P: the results, and every
 *                  rank's logical clock equal to a team of threads'
 *                  running the same function (rank 0 runs it); receives
 *                  from any source, tc_cancel, and the argument errors of
 *                  threads; tc_probe sizing messages of every sender
 *                  (packed and split) for the receive that takes them,
 *                  tc_iprobe no then yes, tags told apart;
 *   p2p:emulated   the same with t_s = 1 ms: no receive done before
 *                  epoch + its logical clock, no tc_iprobe finding a
 *                  message before it either;
 *   early          the last process returns before a collective: the
 *                  others fail with TC_ETIMEDOUT or TC_EABORTED within the
 *                  team's timeout, none hangs;
 *   nbc            tc_iallreduce, tc_ibcast, tc_iallgather outstanding
 *                  together, waited for in reverse or tested in a shuffled
 *                  order of each rank's own: the sequential reference, the
 *                  blocking calls' results bit for bit and their logical
 *                  clock; 40 outstanding (more than the tags' call
 *                  numbers) with a blocking call among them;
 *   persistent     the same calls made once with tc_*_init, started five
 *                  times (tc_waitall, or tc_test in reverse), then freed:
 *                  reference, blocking results and clocks, TC_EPENDING of
 *                  a start while active;
 *   destroy        teams destroyed with nonblocking and persistent calls
 *                  outstanding: the others told (TC_EABORTED), a fresh
 *                  team afterwards right;
 *   probe:timeout  a tc_probe nothing matches: TC_ETIMEDOUT within the
 *                  team's timeout (the report names the probe), the team
 *                  aborted everywhere.
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
		char first[512] = ""; /* names and counts, then why (256) */
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
}

/* What one rank of p2p_pattern got (a team of threads fills all p). */
struct p2p_out {
	long sum;      /* ring_sum's running sum */
	long shifted;  /* the left neighbour's value, by a blocking shift */
	double rot[2]; /* matvec_ring's rotation: the sum of every block seen */
	int tags_ok, trunc_ok, routed_ok;
	int err;         /* the first call that failed */
	tc_time_t clock; /* the logical clock at the end */
	int late;        /* emulated: a receive done before epoch + its clock */
};

#define P2P_TRY(call)                                                                          \
	do {                                                                                   \
		int e_ = (call);                                                               \
		if (e_ && !o->err) {                                                           \
			o->err = e_;                                                           \
			fprintf(stderr, "# rank %d: %s: %s (%s)\n", r, #call, tc_strerror(e_), \
			        tc_error_detail());                                            \
		}                                                                              \
	} while (0)

/* Emulated teams: right after a receive, the wall clock is at least
 * epoch + the rank's logical clock (epoch 0: not checked).  Not after a
 * send: a send's port time enters the clock without a wait, as on
 * threads. */
static uint64_t p2p_epoch;
static void p2p_after_recv(struct tc_proc *proc, struct p2p_out *o)
{
	if (!p2p_epoch)
		return;
	uint64_t t = now_ns() - p2p_epoch;
	if (t + 100000u < (uint64_t)(tc_clock(proc) / 1000))
		o->late = 1;
}

/* The examples' patterns on a ring (examples/ring_sum.c, matvec_ring.c),
 * the same function on threads and on processes. */
static int p2p_pattern(struct tc_proc *proc, void *argp)
{
	const int r = tc_rank(proc), p = tc_size(proc);
	struct p2p_out *o = (struct p2p_out *)argp + r;
	memset(o, 0, sizeof *o);
	const int left = (r + p - 1) % p, right = (r + 1) % p;
	/* ring_sum: a chain from 0 to p - 1. */
	long sum = 0;
	if (r > 0)
		P2P_TRY(tc_recv(proc, r - 1, &sum, sizeof sum, NULL));
	p2p_after_recv(proc, o);
	sum += r;
	if (r < p - 1)
		P2P_TRY(tc_send(proc, r + 1, &sum, sizeof sum));
	o->sum = sum;
	if (p == 1)
		goto out;
	/* A blocking shift to the right: even ranks send first. */
	long v = 10L * r, got = -1;
	if (r % 2 == 0)
		P2P_TRY(tc_send(proc, right, &v, sizeof v));
	P2P_TRY(tc_recv(proc, left, &got, sizeof got, NULL));
	p2p_after_recv(proc, o);
	if (r % 2 != 0)
		P2P_TRY(tc_send(proc, right, &v, sizeof v));
	o->shifted = got;
	/* matvec_ring: p steps of isend right, irecv left, waitall; 4
	 * doubles (packed) and 1000 (split); the second with tc_wait each. */
	static const size_t nb[2] = {4, 1000};
	for (int k = 0; k < 2; k++) {
		double *cur = malloc(nb[k] * sizeof *cur), *next = malloc(nb[k] * sizeof *next);
		for (size_t i = 0; i < nb[k]; i++)
			cur[i] = 1000.0 * r + (double)i;
		for (int step = 0; step < p; step++) {
			tc_request q[2];
			P2P_TRY(tc_isend(proc, right, cur, nb[k] * sizeof *cur, &q[0]));
			P2P_TRY(tc_irecv(proc, left, next, nb[k] * sizeof *next, &q[1]));
			if (k == 0) {
				P2P_TRY(tc_waitall(proc, 2, q));
				p2p_after_recv(proc, o);
			} else {
				size_t n = 0;
				P2P_TRY(tc_wait(proc, &q[1], &n));
				p2p_after_recv(proc, o);
				P2P_TRY(tc_wait(proc, &q[0], NULL));
				if (n != nb[k] * sizeof *next)
					P2P_TRY(TC_EINVAL);
			}
			for (size_t i = 0; i < nb[k]; i++)
				o->rot[k] += next[i];
			double *t = cur;
			cur = next;
			next = t;
		}
		free(cur);
		free(next);
	}
	/* Tags: 7 then 8 to the right; taken 8 first. */
	int a = 70 + r, b = 80 + r, ga = -1, gb = -1;
	tc_request q8;
	tc_status st;
	P2P_TRY(tc_send_tag(proc, right, 7, &a, sizeof a));
	P2P_TRY(tc_send_tag(proc, right, 8, &b, sizeof b));
	P2P_TRY(tc_irecv_tag(proc, left, 8, &gb, sizeof gb, &q8));
	P2P_TRY(tc_recv_tag(proc, left, 7, &ga, sizeof ga, &st));
	P2P_TRY(tc_wait(proc, &q8, NULL));
	o->tags_ok = ga == 70 + left && gb == 80 + left && st.tag == 7 && st.source == left;
	/* Truncation: 16 bytes into 8, then into 16; 5000 into 2500, then
	 * into 5000 (the message is kept for the next receive). */
	static const size_t tb[2] = {16, 5000};
	o->trunc_ok = 1;
	for (int k = 0; k < 2; k++) {
		unsigned char *sb = malloc(tb[k]), *rb = calloc(1, tb[k]);
		for (size_t i = 0; i < tb[k]; i++)
			sb[i] = (unsigned char)(r + i);
		tc_request qs;
		P2P_TRY(tc_isend(proc, right, sb, tb[k], &qs));
		size_t n = 0;
		int e = tc_recv(proc, left, rb, tb[k] / 2, &n);
		o->trunc_ok &= e == TC_ETRUNCATE && n == tb[k];
		P2P_TRY(tc_recv(proc, left, rb, tb[k], &n));
		P2P_TRY(tc_wait(proc, &qs, NULL));
		for (size_t i = 0; i < tb[k]; i++)
			o->trunc_ok &= rb[i] == (unsigned char)(left + i);
		free(sb);
		free(rb);
	}
	/* A routed message: 0 to p/2, not a neighbour from p = 4 on. */
	o->routed_ok = 1;
	if (p >= 4) {
		double big[700];
		if (r == 0) {
			for (int i = 0; i < 700; i++)
				big[i] = i;
			P2P_TRY(tc_send_tag(proc, p / 2, 3, big, sizeof big));
		} else if (r == p / 2) {
			P2P_TRY(tc_recv_tag(proc, 0, 3, big, sizeof big, &st));
			p2p_after_recv(proc, o);
			o->routed_ok = st.source == 0 && st.tag == 3 && big[699] == 699;
		}
	}
out:
	o->clock = tc_clock(proc);
	return o->err;
}

/* After the pattern (not in the clocks: the order of receives from any
 * source is the machine's): a synchronous send not complete before its
 * receive is posted; every rank sends its rank to 0 with tag r, 0 takes
 * them from any source; tc_cancel of a receive nothing matches; messages
 * to oneself; the argument errors.  Returns 1 when all held here. */
static int p2p_more(struct tc_proc *proc, int codes[4])
{
	const int r = tc_rank(proc), p = tc_size(proc);
	int ok = 1;
	/* A synchronous send to the right (p = 1: to oneself) is not complete
	 * until that rank, told so by another message, posts its receive, and
	 * is complete after; a blocking one to oneself is refused.  First, so
	 * that the receives from any source below take none of these. */
	const int sl = (r + p - 1) % p, sv = 200 + r;
	int sg = -1, told = 0, notdone = 1;
	tc_request ssq, nq;
	ok &= tc_issend_tag(proc, (r + 1) % p, 11, &sv, sizeof sv, &ssq) == 0;
	for (int k = 0; k < 3; k++) {
		int done = -1;
		ok &= tc_test(proc, &ssq, &done) == 0;
		notdone &= done == 0;
	}
	ok &= tc_isend_tag(proc, (r + 1) % p, 12, &notdone, sizeof notdone, &nq) == 0;
	ok &= tc_recv_tag(proc, sl, 12, &told, sizeof told, NULL) == 0 && told == 1;
	ok &= tc_recv_tag(proc, sl, 11, &sg, sizeof sg, NULL) == 0 && sg == 200 + sl;
	ok &= tc_wait(proc, &nq, NULL) == 0 && tc_wait(proc, &ssq, NULL) == 0 && notdone == 1;
	ok &= tc_ssend_tag(proc, r, 11, &sv, sizeof sv) == TC_EINVAL;
	if (r != 0) {
		ok &= tc_send_tag(proc, 0, r, &r, sizeof r) == 0;
	} else {
		long seen = 0;
		for (int k = 1; k < p; k++) {
			int v = -1;
			tc_status st;
			ok &= tc_recv_tag(proc, TC_ANY_SOURCE, TC_ANY_TAG, &v, sizeof v, &st) == 0;
			ok &= st.source == v && st.tag == v && st.bytes == sizeof v;
			seen += v;
		}
		ok &= seen == (long)p * (p - 1) / 2;
	}
	int dummy = 0;
	if (p > 1) {
		tc_request q;
		ok &= tc_irecv_tag(proc, (r + 1) % p, 4242, &dummy, sizeof dummy, &q) == 0;
		ok &= tc_cancel(proc, &q) == 0 && tc_wait(proc, &q, NULL) == TC_ECANCELED;
	}
	/* Messages to oneself: a small blocking send before its receive,
	 * 40000 bytes by tc_isend then tc_recv from any source. */
	int self_in = 100 + r, self_out = -1;
	tc_status sst;
	ok &= tc_send_tag(proc, r, 9, &self_in, sizeof self_in) == 0;
	ok &= tc_recv_tag(proc, r, 9, &self_out, sizeof self_out, &sst) == 0 &&
	      self_out == self_in && sst.source == r && sst.tag == 9;
	enum { SELF_BIG = 10000 };
	int *sb = malloc(sizeof(int) * SELF_BIG), *rb = calloc(SELF_BIG, sizeof(int));
	for (int i = 0; i < SELF_BIG; i++)
		sb[i] = r * 3 + i;
	tc_request sq;
	ok &= sb && rb && tc_isend_tag(proc, r, 10, sb, sizeof(int) * SELF_BIG, &sq) == 0;
	ok &= tc_recv_tag(proc, TC_ANY_SOURCE, 10, rb, sizeof(int) * SELF_BIG, &sst) == 0 &&
	      tc_wait(proc, &sq, NULL) == 0 && sst.source == r &&
	      rb[SELF_BIG - 1] == r * 3 + SELF_BIG - 1;
	free(sb);
	free(rb);
	codes[0] = tc_send_tag(proc, r, -3, &dummy, sizeof dummy);
	codes[1] = tc_send(proc, p, &dummy, sizeof dummy);
	codes[2] = tc_send_tag(proc, (r + 1) % p, -5, &dummy, sizeof dummy);
	codes[3] = tc_recv(proc, -7, &dummy, sizeof dummy, NULL);
	return ok;
}

struct p2p_thr {
	struct p2p_out *out;
	int (*codes)[4];
	int *more_ok;
};

static int p2p_thr_fn(struct tc_proc *proc, void *argp)
{
	struct p2p_thr *a = argp;
	int err = p2p_pattern(proc, a->out);
	a->more_ok[tc_rank(proc)] = p2p_more(proc, a->codes[tc_rank(proc)]);
	return err;
}

/* tc_probe (any source, any tag) for every message of the others: each
 * process sends message k (tag k) of size_of_probe() to every other one,
 * then probes and receives them into buffers of exactly the probed size,
 * with the probe's wildcards (mode 0) or the status's source and tag
 * (mode 1); per sender the tags come in order.  Returns 0 when all held. */
static size_t size_of_probe(int src, int dst, int k)
{
	static const size_t base[4] = {0, 9, 700, 5000}; /* packed, and split from 1 KiB */
	return base[k] + (size_t)((src * 7 + dst * 3) % 5);
}

static int probe_sized(struct tc_proc *proc, int mode)
{
	const int p = tc_size(proc), r = tc_rank(proc), n = (p - 1) * 4;
	if (p == 1)
		return 0;
	tc_request *req = calloc((size_t)n, sizeof *req);
	unsigned char **out = calloc((size_t)n, sizeof *out);
	int *next = calloc((size_t)p, sizeof *next), k = 0, bad = 0, err = 0;
	/* Every process done with the messages of the mode before. */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int j = 1; j < p && !err; j++) {
		const int dst = (r + j) % p;
		for (int t = 0; t < 4 && !err; t++, k++) {
			const size_t z = size_of_probe(r, dst, t);
			out[k] = malloc(z + 1);
			for (size_t i = 0; i < z; i++)
				out[k][i] = (unsigned char)(r * 31 + t * 17 + (int)i);
			err = tc_isend_tag(proc, dst, t, out[k], z, &req[k]);
		}
	}
	for (int m = 0; m < n && !err && !bad; m++) {
		tc_status st, rs;
		err = tc_probe(proc, TC_ANY_SOURCE, TC_ANY_TAG, &st);
		if (err)
			break;
		const int s = st.source;
		if (s < 0 || s >= p || s == r || st.tag != next[s] || st.error ||
		    st.bytes != size_of_probe(s, r, st.tag)) {
			fprintf(stderr, "# rank %d: probe: source %d tag %d (%d next) %zu B\n", r,
			        s, st.tag, s >= 0 && s < p ? next[s] : -1, st.bytes);
			bad = 1;
			break;
		}
		unsigned char *b = malloc(st.bytes + 1);
		err = mode ? tc_recv_tag(proc, s, st.tag, b, st.bytes, &rs)
		           : tc_recv_tag(proc, TC_ANY_SOURCE, TC_ANY_TAG, b, st.bytes, &rs);
		if (!err && (rs.source != s || rs.tag != st.tag || rs.bytes != st.bytes))
			bad = 1;
		for (size_t i = 0; !err && i < st.bytes; i++)
			if (b[i] != (unsigned char)(s * 31 + st.tag * 17 + (int)i)) {
				bad = 1;
				break;
			}
		free(b);
		next[s]++;
	}
	if (!err)
		err = tc_waitall(proc, n, req);
	if (err)
		fprintf(stderr, "# rank %d: probe: %s (%s)\n", r, tc_strerror(err), tc_error_detail());
	for (int i = 0; i < n; i++)
		free(out[i]);
	free(out);
	free(next);
	free(req);
	return bad || err;
}

/* tc_iprobe says no while nothing of the tag is there (a message of
 * another tag is), then yes once its sender has sent it; a probe twice
 * finds the same message; the left neighbour's message of tag 6 (2000 B,
 * split) and of tag 7.  Returns 1 when all held. */
static int probe_look(struct tc_proc *proc)
{
	const int p = tc_size(proc), r = tc_rank(proc);
	if (p == 1)
		return 1;
	const int right = (r + 1) % p, left = (r + p - 1) % p;
	int ok = 1, flag = 1;
	static unsigned char big[2000], got[2000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(r + i);
	int seven = 700 + r;
	ok &= tc_send_tag(proc, right, 7, &seven, sizeof seven) == 0;
	MPI_Barrier(MPI_COMM_WORLD); /* tag 7 sent everywhere, tag 6 not yet */
	tc_status st, st2;
	/* Tag 7 is there (MPI delivers it on its own time: poll). */
	const uint64_t t0 = now_ns();
	do
		ok &= tc_iprobe(proc, left, 7, &flag, &st) == 0;
	while (ok && !flag && now_ns() - t0 < 10000000000ull);
	ok &= flag && st.source == left && st.tag == 7 && st.bytes == sizeof seven;
	flag = 1;
	ok &= tc_iprobe(proc, left, 6, &flag, &st) == 0 && !flag;
	ok &= tc_iprobe(proc, TC_ANY_SOURCE, 5, &flag, &st) == 0 && !flag;
	MPI_Barrier(MPI_COMM_WORLD);
	tc_request q;
	ok &= tc_isend_tag(proc, right, 6, big, sizeof big, &q) == 0;
	ok &= tc_probe(proc, left, 6, &st) == 0 && tc_probe(proc, TC_ANY_SOURCE, 6, &st2) == 0;
	ok &= st.source == left && st.tag == 6 && st.bytes == sizeof big && st2.source == left &&
	      st2.tag == 6 && st2.bytes == sizeof big;
	/* Any tag from the left: tag 7 came first. */
	ok &= tc_probe(proc, left, TC_ANY_TAG, &st) == 0 && st.tag == 7;
	int v = -1;
	ok &= tc_recv_tag(proc, left, TC_ANY_TAG, &v, sizeof v, &st) == 0 && v == 700 + left &&
	      st.tag == 7;
	ok &= tc_recv_tag(proc, TC_ANY_SOURCE, 6, got, sizeof got, &st) == 0 &&
	      st.bytes == sizeof got && got[1999] == (unsigned char)(left + 1999);
	ok &= tc_wait(proc, &q, NULL) == 0;
	ok &= tc_iprobe(proc, TC_ANY_SOURCE, TC_ANY_TAG, &flag, &st) == 0 && !flag;
	return ok;
}

/* Emulated, on a fresh team (every clock at 0): the left neighbour's
 * message found by tc_iprobe no earlier than epoch + its logical arrival
 * (the clock after its receive, before the send's wait). */
static int probe_emulated(const char *spec, const struct tc_model *md)
{
	struct tc_proc *proc;
	struct tc_team *t = make_team(spec, md, TC_MODE_EMULATED, 30000, TC_MPI_FORWARD, &proc);
	if (!t)
		return 0;
	const uint64_t epoch = tc_mpi_epoch_ns(t);
	const int p = tc_size(proc), r = tc_rank(proc);
	int v = r, w = -1, flag = 0, ok = p > 1;
	tc_status st;
	tc_request q;
	ok &= tc_isend_tag(proc, (r + 1) % p, 11, &v, sizeof v, &q) == 0;
	const uint64_t t0 = now_ns();
	while (ok && !flag && now_ns() - t0 < 20000000000ull)
		ok &= tc_iprobe(proc, (r + p - 1) % p, 11, &flag, &st) == 0;
	const uint64_t found = now_ns() - epoch;
	ok &= flag && tc_recv_tag(proc, (r + p - 1) % p, 11, &w, sizeof w, NULL) == 0 &&
	      w == (r + p - 1) % p;
	const tc_time_t arrival = tc_clock(proc);
	ok &= tc_wait(proc, &q, NULL) == 0;
	if (ok && found + 100000u < (uint64_t)(arrival / 1000)) {
		fprintf(stderr, "# rank %d: found at %llu ns, arrival %lld ps\n", r,
		        (unsigned long long)found, (long long)arrival);
		ok = 0;
	}
	tc_team_destroy_mpi(t);
	return ok;
}

/* A probe nothing matches, on a team of a 300 ms timeout: TC_ETIMEDOUT on
 * every process (or TC_EABORTED where another's abort came first), the
 * report (the watchdog's) naming tc_probe, and the team aborted. */
static void probe_report(void *arg, const char *report)
{
	if (strstr(report, "tc_probe") && strstr(report, "(probe, tag 4)"))
		*(int *)arg = 1;
}

static void mode_probe_timeout(void)
{
	char spec[32];
	snprintf(spec, sizeof spec, "ring:%d", np);
	struct tc_proc *proc;
	struct tc_team *t = make_team(spec, NULL, TC_MODE_NATIVE, 300, TC_MPI_FORWARD, &proc);
	if (!check(t != NULL, "%s probe timeout: team created", spec))
		return;
	int seen = 0;
	tc_team_set_watchdog(t, probe_report, &seen);
	tc_status st;
	/* A message of another tag: no match either. */
	int x = 1;
	int err = tc_send_tag(proc, (me + 1) % np, 3, &x, sizeof x);
	const uint64_t t0 = now_ns();
	if (!err)
		err = tc_probe(proc, me == 0 ? (np - 1) : TC_ANY_SOURCE, 4, &st);
	const uint64_t waited = now_ns() - t0;
	int timed = err == TC_ETIMEDOUT && seen, ok = err == TC_ETIMEDOUT || err == TC_EABORTED;
	int any = 0;
	MPI_Allreduce(&timed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	const int after = tc_probe(proc, TC_ANY_SOURCE, 3, &st);
	check(ok && any && waited < 10000000000ull && after == TC_EABORTED,
	      "%s: a probe nothing matches: TC_ETIMEDOUT (report names tc_probe and its tag) or "
	      "TC_EABORTED everywhere, then TC_EABORTED (here %s after %.0f ms)",
	      spec, tc_strerror(err), (double)waited / 1e6);
	tc_team_destroy_mpi(t);
}

static void mode_p2p(int emulated)
{
	char spec[32];
	snprintf(spec, sizeof spec, "ring:%d", np);
	const struct tc_model md =
	        emulated ? ct_model(1000000, 1, 0, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF)
	                 : ct_model(1000, 1, 50, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	const char *what = emulated ? "p2p emulated" : "p2p";
	struct tc_proc *proc;
	struct tc_team *t = make_team(spec, &md, emulated ? TC_MODE_EMULATED : TC_MODE_NATIVE,
	                              30000, TC_MPI_FORWARD, &proc);
	if (!check(t != NULL, "%s %s: team created", spec, what))
		return;
	struct p2p_out *mine = calloc((size_t)np, sizeof *mine);
	p2p_epoch = emulated ? tc_mpi_epoch_ns(t) : 0;
	int err = p2p_pattern(proc, mine);
	p2p_epoch = 0;
	struct p2p_out o = mine[me];
	int codes[4];
	int more_ok = p2p_more(proc, codes);
	struct p2p_out *all = calloc((size_t)np, sizeof *all);
	MPI_Gather(&o, (int)sizeof o, MPI_BYTE, all, (int)sizeof o, MPI_BYTE, 0, MPI_COMM_WORLD);
	/* The thread engine's, on rank 0: the same function, configuration
	 * and model. */
	struct p2p_out *thr = calloc((size_t)np, sizeof *thr);
	int(*tcodes)[4] = calloc((size_t)np, sizeof *tcodes);
	int *tmore = calloc((size_t)np, sizeof *tmore);
	int terr = 0;
	if (me == 0 && !emulated) {
		struct tc_team_config c;
		tc_team_config_default(&c);
		c.topology = spec;
		c.model = md;
		c.timeout_ms = 30000;
		struct tc_team *tt = NULL;
		terr = tc_team_create(&c, &tt);
		struct p2p_thr a = {thr, tcodes, tmore};
		if (!terr)
			terr = tc_run(tt, p2p_thr_fn, &a);
		tc_team_destroy(tt);
	}
	int ok = !err && o.sum == (long)me * (me + 1) / 2 &&
	         (np == 1 || o.shifted == 10L * ((me + np - 1) % np));
	check(ok, "%s %s: ring_sum's chain and a blocking shift by tc_send/tc_recv", spec, what);
	double want[2] = {0, 0};
	for (int q = 0; q < np && np > 1; q++)
		for (int k = 0; k < 2; k++)
			for (size_t i = 0; i < (k ? 1000u : 4u); i++)
				want[k] += 1000.0 * q + (double)i;
	check(np == 1 || (o.rot[0] == want[0] && o.rot[1] == want[1]),
	      "%s %s: matvec_ring's rotation by tc_isend/tc_irecv and tc_waitall (32 B), tc_wait "
	      "(8000 B)",
	      spec, what);
	check(np == 1 || (o.tags_ok && o.trunc_ok && o.routed_ok),
	      "%s %s: tags out of order, TC_ETRUNCATE then the message (16 B, 5000 B), a routed "
	      "message",
	      spec, what);
	check(more_ok,
	      "%s %s: a synchronous send pending until its receive, receives from any source "
	      "with their status, tc_cancel, messages to oneself",
	      spec, what);
	if (!emulated) {
		int bad = 0;
		for (int mode = 0; mode < 2; mode++)
			bad |= probe_sized(proc, mode);
		check(!bad,
		      "%s %s: tc_probe from any source sizes every message (0 to 5000 B, tags in "
		      "order per sender), the receive takes exactly it (wildcards, the status's "
		      "source and tag)",
		      spec, what);
		check(probe_look(proc),
		      "%s %s: tc_iprobe no then yes, tags told apart, probing twice "
		      "finds the same message",
		      spec, what);
	} else {
		check(np == 1 || probe_emulated(spec, &md),
		      "%s %s: tc_iprobe finds a message no earlier than epoch + its arrival", spec,
		      what);
	}
	if (emulated) {
		check(!o.late, "%s %s: no receive done before epoch + its logical clock (%.3f ms)",
		      spec, what, (double)o.clock / 1e9);
	} else {
		int same = !terr;
		for (int q = 0; me == 0 && q < np; q++) {
			if (all[q].clock != thr[q].clock || all[q].sum != thr[q].sum ||
			    all[q].rot[1] != thr[q].rot[1] || !tmore[q])
				same = 0;
			if (all[q].clock != thr[q].clock)
				fprintf(stderr, "# rank %d: clock %lld over MPI, %lld on threads\n",
				        q, (long long)all[q].clock, (long long)thr[q].clock);
		}
		check(same,
		      "%s %s: results and every rank's logical clock equal the thread engine's "
		      "(rank %d: %lld ps)",
		      spec, what, np - 1, me == 0 ? (long long)all[np - 1].clock : 0LL);
		int codes_same = 1;
		if (me == 0)
			for (int k = 0; k < 4; k++)
				codes_same &= codes[k] == tcodes[0][k] && codes[k] != 0;
		check(codes_same,
		      "%s %s: to itself with tag -3, to rank p, tag -5, from -7: the thread engine's "
		      "errors",
		      spec, what);
	}
	free(mine);
	free(all);
	free(thr);
	free(tcodes);
	free(tmore);
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

/* ---- nbc, persistent ------------------------------------------------------ */

/* The calls of the nbc and persistent modes: call k is, by k mod 4, an
 * int64 allreduce, an int64 bcast from a root that moves, an int64
 * allgather, a double allreduce of rounding sums (bit for bit against the
 * blocking call). */
enum { NB_CALLS = 8 };

struct nb_call {
	int64_t *in, *out; /* out: bcast's buffer */
	double *din, *dout;
};

static int nb_root(int k)
{
	return (k / 4 + 1) % np;
}

static void nb_fill(struct nb_call *c, int k, size_t n, int iter)
{
	for (size_t i = 0; i < n; i++)
		c->in[i] = (int64_t)me * 1000003 + (int64_t)i * 7 + k + iter * 11;
	if (k % 4 == 1)
		for (size_t i = 0; i < n; i++)
			c->out[i] = me == nb_root(k) ? c->in[i] : -1;
	if (k % 4 == 3) {
		rough_input(me + 100 * k + 1000 * iter, c->din, n);
		memset(c->dout, 0, n * sizeof *c->dout);
	}
}

static void nb_alloc(struct nb_call *c, size_t n)
{
	for (int k = 0; k < NB_CALLS; k++) {
		c[k].in = malloc(n * sizeof(int64_t));
		c[k].out = calloc(n * (size_t)np, sizeof(int64_t));
		c[k].din = malloc(n * sizeof(double));
		c[k].dout = calloc(n, sizeof(double));
	}
}

static void nb_free(struct nb_call *c)
{
	for (int k = 0; k < NB_CALLS; k++) {
		free(c[k].in);
		free(c[k].out);
		free(c[k].din);
		free(c[k].dout);
	}
}

/* Call k blocking (req NULL), nonblocking or persistent (init). */
static int nb_call(struct tc_proc *proc, struct nb_call *c, int k, size_t n, tc_request *req, int init)
{
	switch (k % 4) {
	case 0:
		return !req ? tc_allreduce(proc, c->in, c->out, n, TC_INT64, TC_OP_SUM, NULL)
		       : init ? tc_allreduce_init(proc, c->in, c->out, n, TC_INT64, TC_OP_SUM, NULL, req)
		              : tc_iallreduce(proc, c->in, c->out, n, TC_INT64, TC_OP_SUM, NULL, req);
	case 1:
		return !req   ? tc_bcast(proc, c->out, n, TC_INT64, nb_root(k), NULL)
		       : init ? tc_bcast_init(proc, c->out, n, TC_INT64, nb_root(k), NULL, req)
		              : tc_ibcast(proc, c->out, n, TC_INT64, nb_root(k), NULL, req);
	case 2:
		return !req   ? tc_allgather(proc, c->in, c->out, n, TC_INT64, NULL)
		       : init ? tc_allgather_init(proc, c->in, c->out, n, TC_INT64, NULL, req)
		              : tc_iallgather(proc, c->in, c->out, n, TC_INT64, NULL, req);
	default:
		return !req   ? tc_allreduce(proc, c->din, c->dout, n, TC_DOUBLE, TC_OP_SUM, NULL)
		       : init ? tc_allreduce_init(proc, c->din, c->dout, n, TC_DOUBLE, TC_OP_SUM,
		                                  NULL, req)
		              : tc_iallreduce(proc, c->din, c->dout, n, TC_DOUBLE, TC_OP_SUM, NULL, req);
	}
}

/* Whether call k's int64 result is the sequential one. */
static int nb_ref_ok(const struct nb_call *c, int k, size_t n, int iter)
{
	for (size_t i = 0; i < n; i++) {
		const int64_t base = (int64_t)i * 7 + k + iter * 11;
		switch (k % 4) {
		case 0:
			if (c->out[i] != 1000003 * (int64_t)np * (np - 1) / 2 + (int64_t)np * base)
				return 0;
			break;
		case 1:
			if (c->out[i] != (int64_t)nb_root(k) * 1000003 + base)
				return 0;
			break;
		case 2:
			for (int r = 0; r < np; r++)
				if (c->out[(size_t)r * n + i] != (int64_t)r * 1000003 + base)
					return 0;
			break;
		default:
			break;
		}
	}
	return 1;
}

/* A permutation of 0 .. n-1 of this rank's own. */
static void nb_shuffle(int *o, int n, uint64_t seed)
{
	for (int i = 0; i < n; i++)
		o[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(tc_test_rand(&seed) % (uint64_t)(i + 1));
		int t = o[i];
		o[i] = o[j];
		o[j] = t;
	}
}

/* The NB_CALLS calls: blocking (how 0), started and waited for in reverse
 * order (1), or tested in a shuffled order until all are done (2). */
static int nb_run(struct tc_proc *proc, struct nb_call *c, size_t n, int how, int iter)
{
	tc_request req[NB_CALLS];
	for (int k = 0; k < NB_CALLS; k++)
		nb_fill(&c[k], k, n, iter);
	int err = 0;
	for (int k = 0; k < NB_CALLS && !err; k++)
		err = nb_call(proc, &c[k], k, n, how ? &req[k] : NULL, 0);
	if (err || !how)
		return err;
	if (how == 1) {
		for (int k = NB_CALLS - 1; k >= 0 && !err; k--)
			err = tc_wait(proc, &req[k], NULL);
		return err;
	}
	int order[NB_CALLS], done[NB_CALLS] = {0}, left = NB_CALLS;
	nb_shuffle(order, NB_CALLS, 0x5eedull + (uint64_t)me * 977 + (uint64_t)iter);
	while (left && !err)
		for (int i = 0; i < NB_CALLS && !err; i++) {
			int k = order[i], d = 0;
			if (done[k])
				continue;
			err = tc_test(proc, &req[k], &d);
			if (d) {
				done[k] = 1;
				left--;
			}
		}
	return err;
}

static void mode_nbc(void)
{
	char ring[32];
	snprintf(ring, sizeof ring, "ring:%d", np);
	const char *specs[] = {ring, "complete"};
	const size_t sizes[] = {5, 1600};
	for (int si = 0; si < 2; si++) {
		struct tc_proc *pa, *pb;
		struct tc_team *ta =
		        make_team(specs[si], NULL, TC_MODE_NATIVE, 20000, TC_MPI_FORWARD, &pa);
		struct tc_team *tb =
		        make_team(specs[si], NULL, TC_MODE_NATIVE, 20000, TC_MPI_FORWARD, &pb);
		if (!check(ta && tb, "%s: teams created", specs[si]))
			continue;
		for (int zi = 0; zi < 2; zi++) {
			const size_t n = sizes[zi];
			struct nb_call a[NB_CALLS], b[NB_CALLS];
			nb_alloc(a, n);
			nb_alloc(b, n);
			for (int how = 1; how <= 2; how++) {
				int ea = nb_run(pa, a, n, 0, how);
				int eb = nb_run(pb, b, n, how, how);
				int ref = !ea && !eb, same = ref;
				for (int k = 0; k < NB_CALLS && ref; k++) {
					ref = nb_ref_ok(&b[k], k, n, how);
					same = !memcmp(a[k].out, b[k].out,
					               n * (size_t)np * sizeof(int64_t)) &&
					       !memcmp(a[k].dout, b[k].dout, n * sizeof(double));
					ref &= same;
				}
				check(ref, "%s n=%zu: %d nonblocking calls %s: the sequential reference%s%s",
				      specs[si], n, NB_CALLS,
				      how == 1 ? "waited in reverse" : "tested shuffled",
				      ea || eb ? ": " : "", ea || eb ? tc_strerror(ea ? ea : eb) : "");
				check(same, "%s n=%zu: nonblocking (%s) results bit for bit the blocking calls'",
				      specs[si], n, how == 1 ? "reverse waits" : "shuffled tests");
				check(tc_clock(pa) == tc_clock(pb),
				      "%s n=%zu: clock after the calls %lld ps = the blocking calls' %lld",
				      specs[si], n, (long long)tc_clock(pb), (long long)tc_clock(pa));
			}
			nb_free(a);
			nb_free(b);
		}
		/* A call stepped to its end by tests of another request, a
		 * second one started before the first is waited for: the
		 * clock of the blocking calls in turn. */
		{
			int64_t v[64], w[64], u = me, uo = 0;
			for (int i = 0; i < 64; i++)
				v[i] = me + i;
			tc_time_t a0 = tc_clock(pa), b0 = tc_clock(pb);
			int e1 = tc_allreduce(pa, v, w, 64, TC_INT64, TC_OP_SUM, NULL);
			if (!e1)
				e1 = tc_allreduce(pa, &u, &uo, 1, TC_INT64, TC_OP_SUM, NULL);
			tc_request ra, rb;
			int e2 = tc_iallreduce(pb, v, w, 64, TC_INT64, TC_OP_SUM, NULL, &ra);
			/* Tests of a receive nobody sends to step the call. */
			char never;
			tc_request rr;
			if (!e2)
				e2 = tc_irecv_tag(pb, (me + 1) % np, 77, &never, 1, &rr);
			for (int i = 0; i < 20 && !e2; i++) {
				int flag = 0;
				e2 = tc_test(pb, &rr, &flag);
				MPI_Barrier(MPI_COMM_WORLD);
			}
			if (!e2 && !(e2 = tc_cancel(pb, &rr)))
				e2 = tc_wait(pb, &rr, NULL) == TC_ECANCELED ? 0 : TC_EINVAL;
			if (!e2)
				e2 = tc_iallreduce(pb, &u, &uo, 1, TC_INT64, TC_OP_SUM, NULL, &rb);
			if (!e2)
				e2 = tc_wait(pb, &rb, NULL);
			if (!e2)
				e2 = tc_wait(pb, &ra, NULL);
			check(!e1 && !e2 && tc_clock(pb) - b0 == tc_clock(pa) - a0,
			      "%s: calls stepped by tests of another request: clock +%lld ps, "
			      "blocking +%lld%s%s",
			      specs[si], (long long)(tc_clock(pb) - b0), (long long)(tc_clock(pa) - a0),
			      e1 || e2 ? ": " : "", e1 || e2 ? tc_error_detail() : "");
		}
		/* More outstanding than the tags' 16 call numbers, a blocking call
		 * queued behind them, completed by one tc_waitall. */
		enum { MANY = 40 };
		int64_t in[MANY][3], out[MANY][3], bin[3] = {me, 1, 2}, bout[3] = {0};
		tc_request rq[MANY];
		int err = 0;
		for (int k = 0; k < MANY && !err; k++) {
			for (int i = 0; i < 3; i++)
				in[k][i] = (int64_t)me * 31 + k * 3 + i;
			err = tc_iallreduce(pb, in[k], out[k], 3, TC_INT64, TC_OP_SUM, NULL, &rq[k]);
			if (!err && k == MANY / 2)
				err = tc_allreduce(pb, bin, bout, 3, TC_INT64, TC_OP_SUM, NULL);
		}
		if (!err)
			err = tc_waitall(pb, MANY, rq);
		int ok = !err && bout[0] == (int64_t)np * (np - 1) / 2 && bout[2] == 2 * np;
		for (int k = 0; k < MANY && ok; k++)
			for (int i = 0; i < 3; i++)
				ok &= out[k][i] ==
				      31 * (int64_t)np * (np - 1) / 2 + (int64_t)np * (k * 3 + i);
		check(ok,
		      "%s: %d outstanding tc_iallreduce and a blocking call among them: the "
		      "reference%s%s",
		      specs[si], MANY, err ? ": " : "", err ? tc_strerror(err) : "");
		tc_team_destroy_mpi(ta);
		tc_team_destroy_mpi(tb);
	}
}

static void mode_persistent(void)
{
	char ring[32];
	snprintf(ring, sizeof ring, "ring:%d", np);
	const size_t n = 1600;
	struct tc_proc *pa, *pb;
	struct tc_team *ta = make_team(ring, NULL, TC_MODE_NATIVE, 20000, TC_MPI_FORWARD, &pa);
	struct tc_team *tb = make_team(ring, NULL, TC_MODE_NATIVE, 20000, TC_MPI_FORWARD, &pb);
	if (!check(ta && tb, "%s: teams created", ring))
		return;
	struct nb_call a[NB_CALLS], b[NB_CALLS];
	nb_alloc(a, n);
	nb_alloc(b, n);
	tc_request req[NB_CALLS];
	int err = 0, ninit = 0;
	for (int k = 0; k < NB_CALLS && !err; k++, ninit++)
		err = nb_call(pb, &b[k], k, n, &req[k], 1);
	int ref = !err, same = !err, clocks = !err, pend = 1;
	for (int iter = 0; iter < 5 && !err; iter++) {
		for (int k = 0; k < NB_CALLS; k++) {
			nb_fill(&a[k], k, n, iter);
			nb_fill(&b[k], k, n, iter);
		}
		for (int k = 0; k < NB_CALLS && !err; k++)
			err = nb_call(pa, &a[k], k, n, NULL, 0);
		for (int k = 0; k < NB_CALLS && !err; k++)
			err = tc_start(pb, &req[k]);
		if (!err && iter == 0)
			pend = tc_start(pb, &req[0]) == TC_EPENDING;
		if (!err && iter % 2 == 0) {
			err = tc_waitall(pb, NB_CALLS, req);
		} else {
			for (int k = NB_CALLS - 1; k >= 0 && !err; k--) {
				int d = 0;
				while (!err && !d)
					err = tc_test(pb, &req[k], &d);
			}
		}
		for (int k = 0; k < NB_CALLS && !err; k++) {
			ref &= nb_ref_ok(&b[k], k, n, iter);
			same &= !memcmp(a[k].out, b[k].out, n * (size_t)np * sizeof(int64_t)) &&
			        !memcmp(a[k].dout, b[k].dout, n * sizeof(double));
		}
		clocks &= tc_clock(pa) == tc_clock(pb);
	}
	check(!err && ref, "%s: %d persistent calls started 5 times: the sequential reference%s%s",
	      ring, NB_CALLS, err ? ": " : "", err ? tc_strerror(err) : "");
	check(!err && same, "%s: persistent results bit for bit the blocking calls'", ring);
	check(!err && clocks, "%s: clock after each start's waits = the blocking calls' (%lld ps)",
	      ring, (long long)tc_clock(pb));
	check(pend, "%s: tc_start of an active request: TC_EPENDING", ring);
	int ferr = 0;
	for (int k = 0; k < ninit; k++)
		ferr |= tc_request_free(pb, &req[k]);
	check(!ferr, "%s: tc_request_free of every persistent request", ring);
	nb_free(a);
	nb_free(b);
	tc_team_destroy_mpi(ta);
	tc_team_destroy_mpi(tb);
}

/* destroy: teams destroyed with collective requests not complete.
 * Process 0 starts tc_iallreduce and a persistent call behind it, and
 * destroys its team at once, before the others start theirs: their wait
 * fails with TC_EABORTED (the destruction told them), well before the
 * team's 5 s timeout, and they destroy theirs with the persistent request
 * still queued.  Then every process destroys a team holding a call still
 * outstanding, one completed and never waited for, and a persistent
 * request never freed; a fresh team afterwards computes the reference.
 * (That nothing of them stays allocated: under valgrind, docs/mpi.md.) */
static void mode_destroy(void)
{
	char spec[32];
	snprintf(spec, sizeof spec, "ring:%d", np);
	enum { N = 1600 };
	int64_t *in = malloc(N * sizeof *in), *out = calloc(N, sizeof *out),
	        *out2 = calloc(N, sizeof *out2);
	for (int i = 0; i < N; i++)
		in[i] = (int64_t)me * 1000 + i;
	const struct tc_coll_opts ring = {.alg = "ring"};
	struct tc_proc *proc;
	struct tc_team *t;
	if (np > 1) {
		t = make_team(spec, NULL, TC_MODE_NATIVE, 5000, TC_MPI_FORWARD, &proc);
		if (!check(t != NULL, "%s destroy: team created", spec))
			goto out;
		tc_request a, b;
		int err = 0, werr = 0;
		if (me != 0)
			MPI_Barrier(MPI_COMM_WORLD);
		const uint64_t t0 = now_ns();
		err = tc_iallreduce(proc, in, out, N, TC_INT64, TC_OP_SUM, &ring, &a);
		if (!err)
			err = tc_allreduce_init(proc, in, out2, N, TC_INT64, TC_OP_SUM, &ring, &b);
		if (!err)
			err = tc_start(proc, &b);
		if (me == 0) {
			tc_team_destroy_mpi(t);
			MPI_Barrier(MPI_COMM_WORLD);
		} else {
			werr = tc_wait(proc, &a, NULL);
			tc_team_destroy_mpi(t);
		}
		const uint64_t waited = now_ns() - t0;
		check(!err && (me == 0 || werr == TC_EABORTED) && waited < 4000000000u,
		      "%s: process 0 destroys its team with tc_iallreduce and a started persistent "
		      "call outstanding: the others' wait TC_EABORTED (here %s after %.0f ms)",
		      spec, tc_strerror(werr), (double)waited / 1e6);
	}
	t = make_team(spec, NULL, TC_MODE_NATIVE, 5000, TC_MPI_FORWARD, &proc);
	if (!check(t != NULL, "%s destroy: team created", spec))
		goto out;
	tc_request c, d, e;
	int err = tc_iallreduce(proc, in, out, N, TC_INT64, TC_OP_SUM, &ring, &c);
	if (!err) /* runs after c: c completes, never waited for */
		err = tc_allreduce(proc, in, out2, N, TC_INT64, TC_OP_SUM, &ring);
	if (!err)
		err = tc_iallreduce(proc, in, out, N, TC_INT64, TC_OP_SUM, &ring, &d);
	if (!err)
		err = tc_allreduce_init(proc, in, out2, N, TC_INT64, TC_OP_SUM, NULL, &e);
	tc_team_destroy_mpi(t);
	MPI_Barrier(MPI_COMM_WORLD);
	t = make_team(spec, NULL, TC_MODE_NATIVE, 5000, TC_MPI_FORWARD, &proc);
	int ok = t != NULL && !err;
	if (t) {
		ok &= tc_allreduce(proc, in, out, N, TC_INT64, TC_OP_SUM, &ring) == 0;
		for (int i = 0; i < N && ok; i++)
			ok &= out[i] == 1000 * (int64_t)np * (np - 1) / 2 + (int64_t)np * i;
		tc_team_destroy_mpi(t);
	}
	check(ok,
	      "%s: every process destroys a team with a call outstanding, one never waited for "
	      "and a persistent request never freed; a fresh team then computes the reference",
	      spec);
out:
	free(in);
	free(out);
	free(out2);
}

/* Cut-through forwarding: one case on a team of threads (rank 0), every
 * rank's result at r * rb and its clock's advance over the call. */
struct ctf_arg {
	const struct ct_case *c;
	size_t rb;
	unsigned char *out;
	tc_time_t *adv;
};

static int ctf_fn(struct tc_proc *proc, void *argp)
{
	struct ctf_arg *a = argp;
	const int r = tc_rank(proc), p = tc_size(proc);
	const struct ct_case *c = a->c;
	size_t sb = ct_sbytes(c, p, r), es = tc_dtype_size(c->dt);
	unsigned char *s = malloc(sb + 1), *out = a->out + (size_t)r * a->rb;
	for (size_t i = 0; i < sb / es; i++)
		ct_input(c, r, i, s + i * es);
	memset(out, 0x5a, a->rb);
	if (c->coll == TC_COLL_BCAST && r == c->root)
		for (size_t i = 0; i < c->count; i++)
			ct_input(c, r, i, out + i * es);
	tc_time_t t0 = tc_clock(proc);
	int err = ct_call(proc, c, s, out);
	a->adv[r] = tc_clock(proc) - t0;
	free(s);
	return err;
}

/* ct: routed transfers forwarded under a cut-through model with 512-byte
 * packets, on ring:P and chain:P: linear broadcasts, scatter, gather and
 * allgather, allreduce of 1600 int32 (routed transfers of 6400 B: 13
 * packets) and a broadcast of 16000 (64 packets of 1000 B: the cap), against the reference and bit for bit (results and
 * every rank's logical clock) against a team of threads; the processes on
 * the routes sent each routed transfer on in that many messages (the
 * engine's count), and under the same model but store-and-forward in one. */
static void mode_ct(void)
{
	char ring[32], chain[32];
	snprintf(ring, sizeof ring, "ring:%d", np);
	snprintf(chain, sizeof chain, "chain:%d", np);
	const char *specs[] = {ring, chain};
	static const struct {
		enum tc_coll coll;
		const char *alg;
		int root;
		size_t count;
		int packets; /* per forwarded transfer (0: at least 13) */
	} cases[] = {
	        {TC_COLL_BCAST, "linear", 0, 1600, 13},
	        {TC_COLL_BCAST, "linear", 1, 1600, 13},
	        {TC_COLL_SCATTER, "linear", 0, 1600, 13},
	        {TC_COLL_GATHER, "linear", 2, 1600, 13},
	        {TC_COLL_ALLGATHER, "linear", 0, 1600, 0},
	        {TC_COLL_ALLREDUCE, "linear", 1, 1600, 13},
	        /* 64000 B: 64 packets of 1000 B, not 125 of 512. */
	        {TC_COLL_BCAST, "linear", 0, 16000, 64},
	};
	for (int sw = 0; sw < 2; sw++)
		for (int k = 0; k < 2; k++) {
			struct tc_model md = ct_model(1000, 1, 10, TC_PORTS_ONE, TC_DUPLEX_FULL,
			                              sw ? TC_SWITCH_SF : TC_SWITCH_CT);
			md.mu = 512;
			const char *swn = sw ? "store-and-forward" : "cut-through";
			for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
				/* Fresh teams: every clock starts at 0 on both. */
				struct tc_proc *proc;
				struct tc_team *t = make_team(specs[k], &md, TC_MODE_NATIVE, 20000,
				                              TC_MPI_FORWARD, &proc);
				if (!check(t != NULL, "%s %s: team created", specs[k], swn))
					continue;
				struct tc_team *tt = NULL;
				if (me == 0) {
					struct tc_team_config tc;
					tc_team_config_default(&tc);
					tc.topology = specs[k];
					tc.p = np;
					tc.model = md;
					tc.timeout_ms = 20000;
					tc_team_create(&tc, &tt);
				}
				struct ct_case c = {.coll = cases[ci].coll,
				                    .alg = cases[ci].alg,
				                    .count = cases[ci].count,
				                    .dt = TC_INT32,
				                    .op = TC_OP_SUM,
				                    .root = cases[ci].root % np,
				                    .seed = 7 + ci};
				struct tc_stats st0, st1;
				tc_proc_stats(proc, &st0);
				const uint64_t f0 = tc_mpi_forwarded_msgs(t);
				const tc_time_t t0 = tc_clock(proc);
				char why[200] = "";
				int ok = run_case(proc, &c, why, sizeof why);
				const tc_time_t adv = tc_clock(proc) - t0;
				tc_proc_stats(proc, &st1);
				uint64_t fw[2] = {st1.forwarded - st0.forwarded,
				                  tc_mpi_forwarded_msgs(t) - f0},
				         tot[2] = {0, 0};
				MPI_Allreduce(fw, tot, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
				/* The results and clocks against a team of threads. */
				size_t rb = 0;
				for (int r = 0; r < np; r++)
					if (ct_rbytes(&c, np, r) > rb)
						rb = ct_rbytes(&c, np, r);
				unsigned char *mine = malloc(rb + 1), *all = NULL, *thr = NULL;
				tc_time_t *advs = NULL, *tadv = NULL;
				memset(mine, 0, rb + 1);
				if (ok == 1) {
					/* run_case frees its buffers: the call again. */
					size_t sb = ct_sbytes(&c, np, me), es = tc_dtype_size(c.dt);
					unsigned char *sbuf = malloc(sb + 1);
					for (size_t i = 0; i < sb / es; i++)
						ct_input(&c, me, i, sbuf + i * es);
					memset(mine, 0x5a, rb);
					if (c.coll == TC_COLL_BCAST && me == c.root)
						for (size_t i = 0; i < c.count; i++)
							ct_input(&c, me, i, mine + i * es);
					if (ct_call(proc, &c, sbuf, mine))
						ok = 0;
					free(sbuf);
				}
				if (me == 0) {
					all = malloc((size_t)np * rb + 1);
					thr = malloc((size_t)np * rb + 1);
					advs = calloc((size_t)np, sizeof *advs);
					tadv = calloc((size_t)np, sizeof *tadv);
				}
				MPI_Gather(mine, (int)rb, MPI_BYTE, all, (int)rb, MPI_BYTE, 0,
				           MPI_COMM_WORLD);
				MPI_Gather(&adv, (int)sizeof adv, MPI_BYTE, advs, (int)sizeof adv,
				           MPI_BYTE, 0, MPI_COMM_WORLD);
				int same = 1;
				if (me == 0) {
					struct ctf_arg a = {&c, rb, thr, tadv};
					int terr = tt ? tc_run(tt, ctf_fn, &a) : TC_ENOMEM;
					same = !terr && !memcmp(all, thr, (size_t)np * rb) &&
					       !memcmp(advs, tadv, (size_t)np * sizeof *advs);
					if (!same && !why[0])
						snprintf(why, sizeof why, "differs from threads (%s)",
						         tc_strerror(terr));
				}
				MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
				/* Packets of 512 B: a transfer of 1600 int32 in 13;
				 * allgather's bcast of P blocks in more. */
				const int pk = sw ? 1 : cases[ci].packets;
				const bool msgs = pk ? tot[1] == (uint64_t)pk * tot[0]
				                     : tot[1] >= 13 * tot[0];
				check(ok == 1 && same && tot[0] > 0 && msgs,
				      "%s %s %s %s root %d: reference and threads%s, %llu routed "
				      "transfers forwarded in %llu messages%s%s",
				      specs[k], swn, tc_coll_name(c.coll), c.alg ? c.alg : "auto",
				      c.root, same ? "" : " (differs)", (unsigned long long)tot[0],
				      (unsigned long long)tot[1], why[0] ? ": " : "", why);
				free(mine);
				free(all);
				free(thr);
				free(advs);
				free(tadv);
				if (tt)
					tc_team_destroy(tt);
				tc_team_destroy_mpi(t);
			}
		}
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
		else if (!strcmp(mode, "ct"))
			mode_ct();
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
		} else if (!strcmp(mode, "p2p"))
			mode_p2p(0);
		else if (!strcmp(mode, "p2p:emulated"))
			mode_p2p(1);
		else if (!strcmp(mode, "early"))
			mode_early();
		else if (!strcmp(mode, "nbc"))
			mode_nbc();
		else if (!strcmp(mode, "persistent"))
			mode_persistent();
		else if (!strcmp(mode, "destroy"))
			mode_destroy();
		else if (!strcmp(mode, "probe:timeout"))
			mode_probe_timeout();
		else
			check(0, "unknown mode %s", mode);
	}
	if (me == 0)
		printf("1..%d\n", ntap);
	MPI_Finalize();
	return nfail ? 1 : 0;
}
