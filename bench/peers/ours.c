/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/ours.c - topocoll in the peers benchmark: the cases of peers.h
 * with tc_barrier, tc_bcast (root 0, TC_BYTE), tc_allreduce (TC_DOUBLE,
 * TC_OP_SUM, separate send and receive buffers), tc_allgather and
 * tc_alltoall (TC_BYTE, separate buffers) and a tc_send/tc_recv
 * ping-pong, all with TC_ALG_AUTO (opts NULL), the default wait policy
 * (TC_WAIT_AUTO) and tc_run's pinning (rank r on the (r mod n)-th CPU).
 *
 * Each collective runs on the complete graph, on the hypercube when p is a
 * power of two and on the ring (p >= 3), one team per topology; the variant
 * of the result line is the topology, the note the algorithm AUTO chose
 * (read after the case's own calls, before the untimed synchronisation).
 * The barrier and allreduce of at most PR_SHM_TREE_MAX bytes also run
 * `shm_tree` by name on the complete graph from p = 4 (variant
 * "complete:P/shm_tree"), which AUTO does not choose: a run on many cores
 * shows whether the cache-domain tree beats the flat flags.
 * A collective that has no algorithm for a topology yet fails its case
 * with the error (e.g. error:TC_ENOTSUP); the driver shows it as
 * unavailable.  Point-to-point runs on complete:2.  Every rank is a thread: CPU time is
 * getrusage(RUSAGE_THREAD) of each rank, summed.
 * Usage: peer_ours [-p P] [-b BUDGET_MS] [-c CASE] [-v]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers.h"
#include "topocoll.h"
#include "tc_ops.h"

#define MAXP 1024
#define PR_SHM_TREE_MAX 64 /* shm_tree's largest allreduce, bytes (docs/algorithms.md) */

struct shared {
	const struct pr_case *c;
	const struct tc_coll_opts *opts; /* NULL: AUTO */
	double budget;
	pthread_barrier_t bar; /* threads; fibres use tc_barrier */
	int fibres;
	struct pr_chunk slot[2][MAXP]; /* by chunk parity: read after the barrier */
	struct pr_plan result;         /* rank 0's plan */
	char alg[64];
	int err; /* first error (topocoll code) */
	int bad; /* a rank saw a wrong result */
};

/* Between chunks (untimed): a kernel-level barrier on threads, as
 * always; on fibres that would block the CPU's other ranks, so tc_barrier
 * (which orders the slots as well). */
static void pr_sync(struct shared *sh, struct tc_proc *proc)
{
	if (sh->fibres)
		tc_barrier(proc, NULL);
	else
		pthread_barrier_wait(&sh->bar);
}

static int run_chunk(struct tc_proc *proc, const struct shared *sh, long n, void *buf,
                     const double *in, double *out, void *rbuf)
{
	return pr_tc_ops(proc, tc_rank(proc), sh->c, n, buf, in, out, rbuf, sh->opts);
}

static int case_fn(struct tc_proc *proc, void *argp)
{
	struct shared *sh = argp;
	const struct pr_case *c = sh->c;
	int me = tc_rank(proc), p = tc_size(proc);
	unsigned char *buf, *rbuf;
	double *in, *out;
	pr_buffers(c, p, me, &buf, &in, &out, &rbuf);
	struct pr_plan pl;
	pr_plan_init(&pl, sh->budget);
	int err = 0;
	/* The algorithm AUTO chose for the case, read right after a chunk:
	 * on fibres pr_sync is a tc_barrier, whose algorithm tc_last_coll
	 * would name after it. */
	struct tc_coll_info info = {0};
	pr_sync(sh, proc);
	for (long n = pl.n, k = 0; n; k++) {
		struct pr_chunk *mine = &sh->slot[k & 1][me];
		mine->start = pr_now_ns();
		double c0 = pr_cpu_ns(RUSAGE_THREAD);
		mine->err = run_chunk(proc, sh, n, buf, in, out, rbuf);
		mine->end = pr_now_ns();
		mine->cpu = pr_cpu_ns(RUSAGE_THREAD) - c0;
		if (!mine->err && !pr_is_p2p(c))
			tc_last_coll(proc, &info);
		if (pr_is_p2p(c) && me > 1)
			pr_chunk_exclude(mine);
		/* The barrier orders every slot write before every read. */
		pr_sync(sh, proc);
		struct pr_chunk all = pr_chunk_empty();
		for (int r = 0; r < p; r++)
			pr_chunk_fold(&all, &sh->slot[k & 1][r]);
		if (all.err) {
			err = all.err;
			break;
		}
		n = pr_plan_next(&pl, &all);
	}
	if (!err && pr_wrong_result(c, p, me, buf, out, rbuf))
		sh->bad = 1; /* racy but only ever set to 1; read after tc_run */
	if (me == 0) {
		sh->result = pl;
		sh->err = err;
		snprintf(sh->alg, sizeof sh->alg, "%s", info.algorithm ? info.algorithm : "-");
	}
	free(buf);
	free(in);
	free(out);
	free(rbuf);
	return 0; /* errors are reported through sh, never abort the team */
}

static struct tc_team *team_of(const char *spec)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.wait = TC_WAIT_AUTO;
	cfg.timeout_ms = 60000; /* a hang fails the case instead of the run */
	/* TC_BENCH_NO_CHECK=1: mismatch detection off (its cost, README). */
	const char *nc = getenv("TC_BENCH_NO_CHECK");
	cfg.no_mismatch_check = nc && *nc && *nc != '0';
	struct tc_team *t = NULL;
	int err = tc_team_create(&cfg, &t);
	if (err) {
		fprintf(stderr, "peer_ours: %s: %s\n", spec, tc_strerror(err));
		return NULL;
	}
	return t;
}

/* Case c on a team of topology spec, with the algorithm alg (NULL: AUTO);
 * the result line's variant is spec, or "spec/alg". */
static void run_case(const struct pr_case *c, int p, const char *spec, const char *alg, double budget)
{
	char variant[32];
	snprintf(variant, sizeof variant, "%s%s%s", spec, alg ? "/" : "", alg ? alg : "");
	struct tc_team *t = team_of(spec);
	if (!t) {
		pr_print_error(c, p, variant, "team");
		return;
	}
	struct tc_coll_opts opts = {.alg = alg};
	struct shared *sh = calloc(1, sizeof *sh);
	sh->c = c;
	sh->opts = alg ? &opts : NULL;
	sh->budget = budget;
	pthread_barrier_init(&sh->bar, NULL, (unsigned)p);
	struct tc_team_info ti;
	tc_team_get_info(t, &ti);
	sh->fibres = ti.exec == TC_EXEC_FIBRES;
	int err = tc_run(t, case_fn, sh);
	if (!err)
		err = sh->err;
	if (err)
		pr_print_error(c, p, variant, tc_err_name(err));
	else if (sh->bad)
		pr_print_error(c, p, variant, "wrong-result");
	else
		pr_print(c, p, variant, &sh->result, sh->alg);
	pthread_barrier_destroy(&sh->bar);
	free(sh);
	tc_team_destroy(t);
}

int main(int argc, char **argv)
{
	struct pr_args a;
	if (pr_parse_args(argc, argv, &a))
		return 2;
	if (a.p > MAXP) {
		fprintf(stderr, "peer_ours: p <= %d\n", MAXP);
		return 2;
	}
	if (a.verbose) {
		struct tc_team *t = team_of("complete:2");
		struct tc_team_info info;
		if (t) {
			tc_team_get_info(t, &info);
			fprintf(stderr, "topocoll %s: cpus %d, spin %llu ns, yield %llu ns\n",
			        TC_VERSION_STRING, info.cpus, (unsigned long long)info.spin_ns,
			        (unsigned long long)info.yield_ns);
			tc_team_destroy(t);
		}
	}
	/* The topologies to try: complete, hypercube (p a power of two), ring. */
	char specs[3][32];
	int nspec = 0, d = 0;
	snprintf(specs[nspec++], sizeof specs[0], "complete:%d", a.p);
	while ((1 << d) < a.p)
		d++;
	if ((1 << d) == a.p && a.p > 1)
		snprintf(specs[nspec++], sizeof specs[0], "hypercube:%d", d);
	if (a.p >= 3)
		snprintf(specs[nspec++], sizeof specs[0], "ring:%d", a.p);

	int n;
	const struct pr_case *cases = pr_cases(a.p, &n);
	for (int i = 0; i < n; i++) {
		const struct pr_case *c = &cases[i];
		if (!pr_case_selected(c, a.filter))
			continue;
		if (pr_is_p2p(c)) {
			if (a.p == 2)
				run_case(c, 2, "complete:2", NULL, a.budget_ns);
			continue;
		}
		for (int s = 0; s < nspec; s++)
			run_case(c, a.p, specs[s], NULL, a.budget_ns);
		int tree = c->kind == PR_BARRIER ||
		           (c->kind == PR_ALLREDUCE && c->bytes <= PR_SHM_TREE_MAX);
		if (tree && a.p >= 4)
			run_case(c, a.p, specs[0], "shm_tree", a.budget_ns);
	}
	return 0;
}
