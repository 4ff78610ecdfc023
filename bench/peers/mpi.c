/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/mpi.c - the MPI peer: the cases of peers.h with MPI_Barrier,
 * MPI_Bcast (root 0), MPI_Allreduce (MPI_DOUBLE, MPI_SUM, separate send and
 * receive buffers), MPI_Allgather and MPI_Alltoall (MPI_BYTE, separate
 * buffers) and an MPI_Send/MPI_Recv ping-pong between ranks 0 and 1.
 * Built twice, with mpicc.openmpi and mpicc.mpich; the launcher (driver.c)
 * chooses binding and yielding.  Each rank reports its own CPU time
 * (getrusage(RUSAGE_SELF): the rank and any helper thread its MPI runs);
 * rank 0 prints the sums.
 * Usage: mpirun -np P peer_mpi [-b BUDGET_MS] [-c CASE] [-v]  (-p is ignored:
 * the team is MPI_COMM_WORLD)
 *
 * Built with -DPEERS_OURS_MPI (peer_ours_openmpi, peer_ours_mpich, linked
 * with the topocoll over MPI of the build: topocoll/mpi.h), the same
 * program runs topocoll's collectives on a team over MPI_COMM_WORLD
 * instead (complete:P, TC_ALG_AUTO, forwarded routing; tc_barrier,
 * tc_bcast, tc_allreduce, tc_allgather, tc_alltoall and a tc_send/tc_recv
 * ping-pong with the same buffers): ours over MPI, under the same launcher
 * and placement as MPI's own.  Its variant is the topology, its note the
 * algorithm AUTO chose.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers.h"

static int me, np;

#ifdef PEERS_OURS_MPI
#include "topocoll/mpi.h"
#include "tc_ops.h"

static struct tc_proc *proc;
static char variant[32] = "mpi";
static struct tc_coll_info info;

/* One chunk of n operations of case c on the team over MPI. */
static int run_chunk(const struct pr_case *c, long n, void *buf, void *in, void *out, void *rbuf)
{
	int err = pr_tc_ops(proc, me, c, n, buf, in, out, rbuf, NULL);
	if (!err && !pr_is_p2p(c))
		tc_last_coll(proc, &info);
	return err;
}
#else
static const char variant[] = "mpi";

/* One chunk of n operations of case c. */
static int run_chunk(const struct pr_case *c, long n, void *buf, void *in, void *out, void *rbuf)
{
	int err = MPI_SUCCESS;
	size_t count = c->bytes / sizeof(double);
	for (long i = 0; i < n && err == MPI_SUCCESS; i++) {
		if (pr_write_inputs)
			pr_write_input(c, np, me, buf, in);
		switch (c->kind) {
		case PR_BARRIER:
			err = MPI_Barrier(MPI_COMM_WORLD);
			break;
		case PR_BCAST:
			err = MPI_Bcast(buf, (int)c->bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
			break;
		case PR_ALLREDUCE:
			err = MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			break;
		case PR_ALLGATHER:
			err = MPI_Allgather(buf, (int)c->bytes, MPI_BYTE, rbuf, (int)c->bytes,
			                    MPI_BYTE, MPI_COMM_WORLD);
			break;
		case PR_ALLTOALL:
			err = MPI_Alltoall(buf, (int)c->bytes, MPI_BYTE, rbuf, (int)c->bytes,
			                   MPI_BYTE, MPI_COMM_WORLD);
			break;
		case PR_LATENCY:
		case PR_BANDWIDTH:
			if (me == 0) {
				err = MPI_Send(buf, (int)c->bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
				if (err == MPI_SUCCESS)
					err = MPI_Recv(buf, (int)c->bytes, MPI_BYTE, 1, 0,
					               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else if (me == 1) {
				err = MPI_Recv(buf, (int)c->bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
				               MPI_STATUS_IGNORE);
				if (err == MPI_SUCCESS)
					err = MPI_Send(buf, (int)c->bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
			}
			break;
		}
	}
	return err;
}
#endif

/* Combines every rank's chunk in one collective (not timed). */
static struct pr_chunk combine(const struct pr_chunk *mine)
{
	double v[4] = {mine->start, mine->end, mine->cpu, (double)(mine->err != 0)};
	static double *all;
	if (!all)
		all = malloc(sizeof v * (size_t)np);
	MPI_Allgather(v, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, MPI_COMM_WORLD);
	struct pr_chunk c = pr_chunk_empty();
	for (int r = 0; r < np; r++) {
		struct pr_chunk one = {all[4 * r], all[4 * r + 1], all[4 * r + 2], all[4 * r + 3] != 0};
		pr_chunk_fold(&c, &one);
	}
	return c;
}

static void run_case(const struct pr_case *c, const struct pr_args *a)
{
	if (pr_is_p2p(c) && np < 2) {
		if (me == 0)
			pr_print_error(c, np, variant, "needs-2-ranks");
		return;
	}
	unsigned char *buf, *rbuf;
	double *in, *out;
	pr_buffers(c, np, me, &buf, &in, &out, &rbuf);
	/* Only ranks 0 and 1 play ping-pong; the others wait in the combine. */
	struct pr_plan pl;
	pr_plan_init(&pl, a->budget_ns);
	MPI_Barrier(MPI_COMM_WORLD);
	int err = 0;
	for (long n = pl.n; n;) {
		struct pr_chunk mine;
		mine.start = pr_now_ns();
		double c0 = pr_cpu_ns(RUSAGE_SELF);
		mine.err = run_chunk(c, n, buf, in, out, rbuf);
		mine.end = pr_now_ns();
		mine.cpu = pr_cpu_ns(RUSAGE_SELF) - c0;
		if (pr_is_p2p(c) && me > 1)
			pr_chunk_exclude(&mine);
		struct pr_chunk all = combine(&mine);
		if (all.err) {
			err = 1;
			break;
		}
		n = pr_plan_next(&pl, &all);
	}
	/* Check the result. */
	int bad = !err && pr_wrong_result(c, np, me, buf, out, rbuf);
	int anybad = 0;
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	const char *note = "-";
#ifdef PEERS_OURS_MPI
	if (!pr_is_p2p(c) && info.algorithm)
		note = info.algorithm;
#endif
	if (me == 0) {
		if (err)
			pr_print_error(c, np, variant, "mpi-error");
		else if (anybad)
			pr_print_error(c, np, variant, "wrong-result");
		else
			pr_print(c, np, variant, &pl, note);
	}
	free(buf);
	free(in);
	free(out);
	free(rbuf);
}

int main(int argc, char **argv)
{
	struct pr_args a;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (pr_parse_args(argc, argv, &a)) {
		MPI_Finalize();
		return 2;
	}
	if (a.verbose) {
		cpu_set_t set;
		sched_getaffinity(0, sizeof set, &set);
		char cpus[256] = "";
		for (int c = 0, k = 0; c < CPU_SETSIZE && k < (int)sizeof cpus - 8; c++)
			if (CPU_ISSET(c, &set))
				k += snprintf(cpus + k, sizeof cpus - (size_t)k, "%d,", c);
		fprintf(stderr, "rank %d of %d: cpus %s\n", me, np, cpus);
	}
#ifdef PEERS_OURS_MPI
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	snprintf(variant, sizeof variant, "complete:%d", np);
	cfg.topology = variant;
	cfg.timeout_ms = 60000;
	struct tc_team *team = NULL;
	int terr = tc_team_create_mpi(MPI_COMM_WORLD, &cfg, NULL, &team, &proc);
	if (terr) {
		if (me == 0)
			fprintf(stderr, "peer_ours_mpi: tc_team_create_mpi: %s (%s)\n",
			        tc_strerror(terr), tc_error_detail());
		MPI_Finalize();
		return 1;
	}
#endif
	int n;
	const struct pr_case *cases = pr_cases(np, &n);
	for (int i = 0; i < n; i++)
		if (pr_case_selected(&cases[i], a.filter))
			run_case(&cases[i], &a);
#ifdef PEERS_OURS_MPI
	tc_team_destroy_mpi(team);
#endif
	MPI_Finalize();
	return 0;
}
