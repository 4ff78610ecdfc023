/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/openmp.c - the OpenMP (libgomp) peer: the collective cases of
 * peers.h as an OpenMP program would write them, in one parallel region of p
 * threads (OMP_NUM_THREADS, OMP_PROC_BIND, OMP_PLACES, OMP_WAIT_POLICY come
 * from the launcher).  Each design is measured; the driver keeps the best:
 *
 *   barrier            #pragma omp barrier.
 *   bcast "copy"       the root copies its buffer into shared[k % 2], one
 *                      barrier, every other thread copies it out.  Two shared
 *                      buffers: the root overwrites shared[k % 2] only in
 *                      call k + 2, after barrier k + 1, which no thread
 *                      passes before it finished copying out of call k.
 *   bcast "ptr"        the root publishes a pointer to its own buffer,
 *                      barrier, every other thread copies, barrier (the root
 *                      may change its buffer once the call returns).
 *   allreduce "reduction"  the array reduction of OpenMP:
 *                      #pragma omp for reduction(+:acc[:m]) over one
 *                      iteration per thread, each adding its input; the
 *                      implicit barrier completes acc; every thread copies
 *                      acc into its own output.  Three shared accumulators
 *                      in turn, so that the only barrier per call is the
 *                      implicit one: call k zeroes (each thread a slice)
 *                      acc[(k + 2) % 3], last read in call k - 1 (before
 *                      barrier k) and next merged into in call k + 2 (after
 *                      barrier k + 1).
 *   allreduce "direct" barrier, every thread sums the p inputs straight
 *                      into its own output, barrier (inputs may change once
 *                      the call returns).
 *   allgather "copy"   every thread copies its block into its slot of the
 *                      shared array gath[k % 2] (p blocks), one barrier,
 *                      every thread copies the whole array into its own
 *                      receive buffer.  Two arrays, as for bcast "copy": a
 *                      thread writes gath[k % 2] again only in call k + 2,
 *                      after barrier k + 1, which no thread passes before it
 *                      finished reading call k's.
 *   allgather "ptr"    every thread publishes a pointer to its send buffer,
 *                      barrier, copies every peer's block straight from the
 *                      peers' buffers, barrier (send buffers may change once
 *                      the call returns; pointers are republished at every
 *                      call, as a program whose buffers move must).
 *   alltoall "ptr"     the same pointer exchange: publish, barrier, copy
 *                      block me of every peer's send buffer, barrier.
 *   alltoall "copy"    every thread copies its p blocks into its row of the
 *                      shared matrix a2a[k % 2] (p x p blocks), one barrier,
 *                      every thread copies its column out (two copies of
 *                      every byte but one barrier; rotation as above).
 * Every thread ends with the result in its own buffer, as with MPI and
 * topocoll.  There is no OpenMP point-to-point: latency and bandwidth are
 * not measured.  CPU time: getrusage(RUSAGE_THREAD) of each thread, summed.
 * Usage: peer_openmp [-p P] [-b BUDGET_MS] [-c CASE] [-v]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peers.h"

#define MAXP 1024

static struct pr_chunk slot[2][MAXP];

/* The shared state of one measurement. */
static unsigned char *shared_buf[2];
static unsigned char *root_ptr; /* ordered by the barriers (they flush) */
static double *acc0, *acc1, *acc2;
static double **inputs;
static unsigned char *gath[2];          /* allgather "copy", alltoall "copy" */
static const unsigned char **send_ptrs; /* allgather/alltoall "ptr" */

enum design {
	D_PLAIN,
	D_COPY,
	D_PTR,
	D_REDUCTION,
	D_DIRECT,
	D_AG_COPY,
	D_AG_PTR,
	D_A2A_COPY,
	D_A2A_PTR
};
static const char *const design_name[] = {"omp",  "copy", "ptr",  "reduction", "direct",
                                          "copy", "ptr",  "copy", "ptr"};

/* The array reduction of one call into the shared accumulator acc (an
 * orphaned worksharing construct: every thread calls it with the same acc).
 * A function of its own because GCC allocates each thread's private copy
 * with alloca, released only when the enclosing function returns. */
__attribute__((noinline)) static void reduce_into(double *acc, size_t m, int nth)
{
#pragma omp for reduction(+ : acc[:m]) schedule(static)
	for (int t = 0; t < nth; t++) {
		const double *x = inputs[t];
		for (size_t i = 0; i < m; i++)
			acc[i] += x[i];
	}
}

/* One chunk of n calls (inside the parallel region); k0 numbers the calls
 * so that the rotations continue across chunks. */
static void run_chunk(const struct pr_case *c, enum design d, long n, long k0, unsigned char *buf,
                      double *out, unsigned char *rbuf)
{
	const int me = omp_get_thread_num(), nth = omp_get_num_threads();
	const size_t m = c->bytes / sizeof(double), b = c->bytes;
	const size_t row = (size_t)nth * b; /* p blocks */
	for (long k = k0; k < k0 + n; k++) {
		if (pr_write_inputs)
			pr_write_input(c, nth, me, buf, c->kind == PR_ALLREDUCE ? inputs[me] : NULL);
		switch (d) {
		case D_PLAIN: { /* barrier */
#pragma omp barrier
			break;
		}
		case D_COPY: {
			unsigned char *s = shared_buf[k & 1];
			if (me == 0)
				memcpy(s, buf, c->bytes);
#pragma omp barrier
			if (me != 0)
				memcpy(buf, s, c->bytes);
			break;
		}
		case D_PTR:
			if (me == 0)
				root_ptr = buf;
#pragma omp barrier
			if (me != 0)
				memcpy(buf, root_ptr, c->bytes);
#pragma omp barrier
			break;
		case D_REDUCTION: {
			double *z;
			switch (k % 3) {
			case 0:
				reduce_into(acc0, m, nth);
				memcpy(out, acc0, m * sizeof(double));
				z = acc2;
				break;
			case 1:
				reduce_into(acc1, m, nth);
				memcpy(out, acc1, m * sizeof(double));
				z = acc0;
				break;
			default:
				reduce_into(acc2, m, nth);
				memcpy(out, acc2, m * sizeof(double));
				z = acc1;
				break;
			}
			size_t lo = m * (size_t)me / (size_t)nth,
			       hi = m * (size_t)(me + 1) / (size_t)nth;
			memset(z + lo, 0, (hi - lo) * sizeof(double));
			break;
		}
		case D_DIRECT: {
#pragma omp barrier
			memcpy(out, inputs[0], m * sizeof(double));
			for (int t = 1; t < nth; t++) {
				const double *x = inputs[t];
				for (size_t i = 0; i < m; i++)
					out[i] += x[i];
			}
#pragma omp barrier
			break;
		}
		case D_AG_COPY: {
			unsigned char *s = gath[k & 1];
			memcpy(s + (size_t)me * b, buf, b);
#pragma omp barrier
			memcpy(rbuf, s, row);
			break;
		}
		case D_AG_PTR:
			send_ptrs[me] = buf;
#pragma omp barrier
			for (int t = 0; t < nth; t++)
				memcpy(rbuf + (size_t)t * b, send_ptrs[t], b);
#pragma omp barrier
			break;
		case D_A2A_COPY: {
			unsigned char *s = gath[k & 1];
			memcpy(s + (size_t)me * row, buf, row);
#pragma omp barrier
			for (int t = 0; t < nth; t++)
				memcpy(rbuf + (size_t)t * b, s + (size_t)t * row + (size_t)me * b, b);
			break;
		}
		case D_A2A_PTR:
			send_ptrs[me] = buf;
#pragma omp barrier
			for (int t = 0; t < nth; t++)
				memcpy(rbuf + (size_t)t * b, send_ptrs[t] + (size_t)me * b, b);
#pragma omp barrier
			break;
		}
	}
}

static void run_case(const struct pr_case *c, enum design d, int p, double budget)
{
	const size_t m = c->bytes / sizeof(double);
	struct pr_plan result;
	int bad = 0;
	if (c->kind == PR_BCAST) {
		shared_buf[0] = pr_alloc(c->bytes);
		shared_buf[1] = pr_alloc(c->bytes);
	}
	if (c->kind == PR_ALLREDUCE) {
		acc0 = pr_alloc(m * sizeof(double));
		acc1 = pr_alloc(m * sizeof(double));
		acc2 = pr_alloc(m * sizeof(double));
		memset(acc0, 0, m * sizeof(double));
		memset(acc1, 0, m * sizeof(double));
		memset(acc2, 0, m * sizeof(double));
		inputs = calloc((size_t)p, sizeof *inputs);
	}
	if (d == D_AG_COPY || d == D_A2A_COPY) {
		size_t len = (size_t)p * c->bytes * (d == D_A2A_COPY ? (size_t)p : 1);
		gath[0] = pr_alloc(len);
		gath[1] = pr_alloc(len);
	}
	if (d == D_AG_PTR || d == D_A2A_PTR)
		send_ptrs = calloc((size_t)p, sizeof *send_ptrs);
#pragma omp parallel num_threads(p) reduction(| : bad)
	{
		const int me = omp_get_thread_num(), nth = omp_get_num_threads();
		unsigned char *buf, *rbuf;
		double *in, *out;
		pr_buffers(c, p, me, &buf, &in, &out, &rbuf);
		if (c->kind == PR_ALLREDUCE)
			inputs[me] = in;
		struct pr_plan pl;
		pr_plan_init(&pl, budget);
		long k0 = 0;
#pragma omp barrier
		for (long n = pl.n, k = 0; n; k++) {
			struct pr_chunk *mine = &slot[k & 1][me];
			mine->start = pr_now_ns();
			double c0 = pr_cpu_ns(RUSAGE_THREAD);
			run_chunk(c, d, n, k0, buf, out, rbuf);
			mine->end = pr_now_ns();
			mine->cpu = pr_cpu_ns(RUSAGE_THREAD) - c0;
			mine->err = 0;
			k0 += n;
#pragma omp barrier
			struct pr_chunk all = pr_chunk_empty();
			for (int r = 0; r < nth; r++)
				pr_chunk_fold(&all, &slot[k & 1][r]);
			n = pr_plan_next(&pl, &all);
		}
		bad |= pr_wrong_result(c, nth, me, buf, out, rbuf);
		if (me == 0)
			result = pl;
		if (nth != p)
			bad = 1;
#pragma omp barrier /* nobody frees an input another still reads */
		free(buf);
		free(in);
		free(out);
		free(rbuf);
	}
	if (bad)
		pr_print_error(c, p, design_name[d], "wrong-result");
	else
		pr_print(c, p, design_name[d], &result, "-");
	if (c->kind == PR_BCAST) {
		free(shared_buf[0]);
		free(shared_buf[1]);
	}
	if (c->kind == PR_ALLREDUCE) {
		free(acc0);
		free(acc1);
		free(acc2);
		free(inputs);
	}
	if (d == D_AG_COPY || d == D_A2A_COPY) {
		free(gath[0]);
		free(gath[1]);
	}
	free(send_ptrs);
	send_ptrs = NULL;
}

int main(int argc, char **argv)
{
	struct pr_args a;
	if (pr_parse_args(argc, argv, &a))
		return 2;
	if (a.p > MAXP) {
		fprintf(stderr, "peer_openmp: p <= %d\n", MAXP);
		return 2;
	}
	omp_set_dynamic(0);
	if (a.verbose) {
#pragma omp parallel num_threads(a.p)
		{
			cpu_set_t set;
			sched_getaffinity(0, sizeof set, &set);
			char cpus[256] = "";
			for (int c = 0, k = 0; c < CPU_SETSIZE && k < (int)sizeof cpus - 8; c++)
				if (CPU_ISSET(c, &set))
					k += snprintf(cpus + k, sizeof cpus - (size_t)k, "%d,", c);
			fprintf(stderr, "thread %d of %d: cpus %s\n", omp_get_thread_num(),
			        omp_get_num_threads(), cpus);
		}
	}
	int n;
	const struct pr_case *cases = pr_cases(a.p, &n);
	for (int i = 0; i < n; i++) {
		const struct pr_case *c = &cases[i];
		if (!pr_case_selected(c, a.filter))
			continue;
		switch (c->kind) {
		case PR_BARRIER:
			run_case(c, D_PLAIN, a.p, a.budget_ns);
			break;
		case PR_BCAST:
			run_case(c, D_COPY, a.p, a.budget_ns);
			run_case(c, D_PTR, a.p, a.budget_ns);
			break;
		case PR_ALLREDUCE:
			run_case(c, D_REDUCTION, a.p, a.budget_ns);
			run_case(c, D_DIRECT, a.p, a.budget_ns);
			break;
		case PR_ALLGATHER:
			run_case(c, D_AG_COPY, a.p, a.budget_ns);
			run_case(c, D_AG_PTR, a.p, a.budget_ns);
			break;
		case PR_ALLTOALL:
			run_case(c, D_A2A_PTR, a.p, a.budget_ns);
			run_case(c, D_A2A_COPY, a.p, a.budget_ns);
			break;
		default:
			break; /* no point-to-point in OpenMP */
		}
	}
	return 0;
}
