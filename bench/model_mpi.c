/* SPDX-License-Identifier: MIT */
/*
 * bench/model_mpi - emulated against modelled time on a team over MPI
 * processes (topocoll/mpi.h): the fidelity of the emulated mode over
 * processes, as bench/model_fidelity measures it on threads.  Started by
 * `./tools/bench model --engine mpi` (np = 2 and 8) or by hand:
 *   mpirun -np P model_mpi [--reps N] [--ts NS] [--bytes N] [--case LIST]
 *
 * On complete:P, ring:P and hypercube:log2(P) (P a power of two), each in
 * TC_MODE_EMULATED with t_s = 1 ms (--ts), t_w = 1 ns/B, m = 8 KiB
 * (--bytes), store-and-forward, routed transfers forwarded hop by hop:
 *   bcast, reduce, allreduce, allgather, barrier   TC_ALG_AUTO;
 *   linear_sf   tc_bcast "linear" (p - 1 routed transfers from the root).
 * Each run is one call that every process starts at an agreed logical time
 * its wall clock has not passed yet (its clock advanced to it:
 * tc_clock_advance); emulated is the last process's end minus that start
 * (wall, since the epoch agreed at the team's creation), modelled the
 * largest logical clock at the end minus the start.  Per case the median of
 * --reps runs (default 5) of emulated / modelled.  Process 0 prints a table
 * and one JSON object as the last line (p, cases, max_rel_error).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topocoll/mpi.h"
#include "stats.h"

enum { C_BCAST, C_REDUCE, C_ALLREDUCE, C_ALLGATHER, C_BARRIER, C_LINEAR, C_N };
static const char *const case_name[C_N] = {"bcast",     "reduce",  "allreduce",
                                           "allgather", "barrier", "linear_sf"};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int call(struct tc_proc *proc, int k, const double *in, double *out, size_t n, int p)
{
	struct tc_coll_opts lin = {.alg = "linear"};
	switch (k) {
	case C_BCAST:
		return tc_bcast(proc, out, n, TC_DOUBLE, 0, NULL);
	case C_REDUCE:
		return tc_reduce(proc, in, out, n, TC_DOUBLE, TC_OP_SUM, 0, NULL);
	case C_ALLREDUCE:
		return tc_allreduce(proc, in, out, n, TC_DOUBLE, TC_OP_SUM, NULL);
	case C_ALLGATHER:
		(void)p;
		return tc_allgather(proc, in, out, n, TC_DOUBLE, NULL);
	case C_BARRIER:
		return tc_barrier(proc, NULL);
	default:
		return tc_bcast(proc, out, n, TC_DOUBLE, 0, &lin);
	}
}

/* One run: every process at the agreed start, one call; *emu and *mod in
 * ns (the same on every process). */
static int run_once(struct tc_team *team, struct tc_proc *proc, int k, const double *in,
                    double *out, size_t n, int p, double *emu, double *mod)
{
	const uint64_t epoch = tc_mpi_epoch_ns(team);
	tc_time_t c = tc_clock(proc), floor = (tc_time_t)(now_ns() - epoch + 2000000u) * 1000, start;
	if (c < floor)
		c = floor;
	MPI_Allreduce(&c, &start, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	int err = 0;
	if (start > tc_clock(proc))
		err = tc_clock_advance(proc, (double)(start - tc_clock(proc)) / 1000.0);
	if (!err)
		err = call(proc, k, in, out, n, p);
	int64_t v[3] = {(int64_t)(now_ns() - epoch), (int64_t)tc_clock(proc), err != 0}, mx[3];
	MPI_Allreduce(v, mx, 3, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	*emu = (double)mx[0] - (double)start / 1000.0;
	*mod = (double)(mx[1] - start) / 1000.0;
	return mx[2] ? (err ? err : TC_EABORTED) : 0;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	int reps = 5;
	double ts = 1e6;
	size_t bytes = 8192;
	const char *only = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ts") && i + 1 < argc)
			ts = atof(argv[++i]);
		else if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
			bytes = (size_t)atol(argv[++i]);
		else if (!strcmp(argv[i], "--case") && i + 1 < argc)
			only = argv[++i];
		else {
			if (me == 0)
				fprintf(stderr, "usage: mpirun -np P model_mpi [--reps N] [--ts NS] "
				                "[--bytes N] [--case LIST]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (reps < 1 || reps > 1000 || ts <= 0 || bytes < 8 || bytes % 8) {
		if (me == 0)
			fprintf(stderr, "model_mpi: --reps 1..1000, --ts > 0, --bytes a multiple of 8\n");
		MPI_Finalize();
		return 2;
	}
	char specs[3][32];
	int nt = 0;
	snprintf(specs[nt++], sizeof specs[0], "complete:%d", np);
	if (np > 2)
		snprintf(specs[nt++], sizeof specs[0], "ring:%d", np);
	if (np > 2 && !(np & (np - 1))) {
		int d = 0;
		while ((1 << d) < np)
			d++;
		snprintf(specs[nt++], sizeof specs[0], "hypercube:%d", d);
	}
	const size_t n = bytes / 8;
	double *in = calloc(n, sizeof *in), *out = calloc(n * (size_t)np, sizeof *out);
	double *ratio = calloc((size_t)reps, sizeof *ratio), *emus = calloc((size_t)reps, sizeof *emus);
	if (!in || !out || !ratio || !emus) {
		fprintf(stderr, "model_mpi: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (size_t i = 0; i < n; i++)
		in[i] = (double)(me + 1);
	if (me == 0) {
		printf("# model_mpi: %d processes, t_s %.0f ns, t_w 1 ns/B, m %zu B, "
		       "store-and-forward, forwarded; median of %d runs of one call\n",
		       np, ts, bytes, reps);
		printf("%-14s %-10s %-13s %12s %12s %8s %9s\n", "topology", "case", "algorithm",
		       "modelled", "emulated", "ratio", "rel.err");
	}
	double worst = 0;
	int ncases = 0, failures = 0;
	for (int t = 0; t < nt; t++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = specs[t];
		cfg.mode = TC_MODE_EMULATED;
		cfg.timeout_ms = 60000;
		cfg.model.ts_ns = ts;
		cfg.model.tw_ns = 1.0;
		cfg.model.switching = TC_SWITCH_SF;
		struct tc_team *team = NULL;
		struct tc_proc *proc = NULL;
		int err = tc_team_create_mpi(MPI_COMM_WORLD, &cfg, NULL, &team, &proc);
		if (err) {
			if (me == 0)
				fprintf(stderr, "model_mpi: %s: %s (%s)\n", specs[t],
				        tc_strerror(err), tc_error_detail());
			failures++;
			continue;
		}
		for (int k = 0; k < C_N; k++) {
			if (only && !strstr(only, case_name[k]))
				continue;
			double mod = 0, emu = 0;
			for (int r = 0; r < reps && !err; r++) {
				err = run_once(team, proc, k, in, out, n, np, &emus[r], &mod);
				ratio[r] = mod > 0 ? emus[r] / mod : NAN;
			}
			if (err) {
				if (me == 0)
					printf("%-14s %-10s %-13s %12s %12s %8s %9s  %s\n", specs[t],
					       case_name[k], "-", "-", "-", "-", "-", tc_err_name(err));
				failures++;
				break; /* the team is aborted */
			}
			struct tc_coll_info ci;
			tc_last_coll(proc, &ci);
			qsort(ratio, (size_t)reps, sizeof *ratio, bench_cmp_double);
			qsort(emus, (size_t)reps, sizeof *emus, bench_cmp_double);
			emu = emus[reps / 2];
			double q = ratio[reps / 2];
			if (fabs(q - 1) > worst)
				worst = fabs(q - 1);
			ncases++;
			if (me == 0)
				printf("%-14s %-10s %-13s %10.3f ms %10.3f ms %8.3f %+8.1f%%\n",
				       specs[t], case_name[k], ci.algorithm ? ci.algorithm : "?",
				       mod / 1e6, emu / 1e6, q, 100 * (q - 1));
		}
		tc_team_destroy_mpi(team);
	}
	if (me == 0)
		printf("{\"bench\": \"model_mpi\", \"p\": %d, \"ts_ns\": %.0f, \"bytes\": %zu, "
		       "\"reps\": %d, \"cases\": %d, \"failures\": %d, \"max_rel_error\": %.4f}\n",
		       np, ts, bytes, reps, ncases, failures, worst);
	free(in);
	free(out);
	free(ratio);
	free(emus);
	MPI_Finalize();
	return failures ? 1 : 0;
}
