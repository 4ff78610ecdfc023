/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/peers.h - what the programs of the peers benchmark share: the
 * cases, the clocks, the measurement plan and the result line.
 *
 * One program per implementation (ours.c: topocoll; openmp.c: libgomp;
 * mpi.c: Open MPI and MPICH, built twice) runs every case of one team size p
 * and prints one result line per case and variant; driver.c launches them in
 * turn, several times, and takes the medians.
 *
 * A measurement is a sequence of chunks of back-to-back operations.  After
 * each chunk every rank contributes (start, end, CPU time, error) of its own
 * chunk; the span of the chunk is max(end) - min(start) over the ranks (the
 * clock is CLOCK_MONOTONIC, common to every thread and process of the
 * machine), its CPU time the sum over the ranks.  Every rank feeds the same
 * combined figures to pr_plan_next(), a pure function, so all of them agree
 * on the size of the next chunk and on when to stop without any extra
 * message.  The exchange between chunks is not timed.
 *
 * Plan: warm-up chunks of 1, 2, 4, ... operations until one lasts budget/8
 * (not counted); then chunks of about budget/4 until budget is counted.  A
 * case whose single operation exceeds the hard cap (3 budgets) counts its
 * warm-up chunk and stops, so a peer that crawls (busy-polling processes on
 * too few cores) costs about 3 budgets, not hours.
 *
 * Everything here is static inline: header-only, no library.
 */
#ifndef PEERS_H
#define PEERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum pr_kind {
	PR_BARRIER,
	PR_BCAST,
	PR_ALLREDUCE,
	PR_LATENCY,
	PR_BANDWIDTH,
	PR_ALLGATHER,
	PR_ALLTOALL
};

static const char *const pr_kind_name[] = {"barrier",   "bcast",     "allreduce", "latency",
                                           "bandwidth", "allgather", "alltoall"};

struct pr_case {
	enum pr_kind kind;
	size_t bytes; /* message (bcast, latency, bandwidth) or vector (allreduce) bytes;
	                 allgather: the block each rank contributes (the result is p
	                 blocks); alltoall: the block from each rank to each rank */
};

/* Dedicated: p = 2, one rank per core. */
static const struct pr_case pr_cases_dedicated[] = {
        {PR_BARRIER, 0},
        {PR_BCAST, 8},
        {PR_BCAST, (size_t)64 << 10},
        {PR_BCAST, (size_t)1 << 20},
        {PR_ALLREDUCE, 8},
        {PR_ALLREDUCE, (size_t)8 << 10},
        {PR_ALLREDUCE, (size_t)512 << 10},
        {PR_ALLREDUCE, (size_t)8 << 20},
        {PR_LATENCY, 8},
        {PR_BANDWIDTH, (size_t)1 << 20},
        {PR_BANDWIDTH, (size_t)16 << 20},
        {PR_ALLGATHER, 8},
        {PR_ALLGATHER, (size_t)64 << 10},
        {PR_ALLTOALL, 8},
        {PR_ALLTOALL, (size_t)4 << 10},
};

/* Oversubscribed: p > cores. */
static const struct pr_case pr_cases_oversub[] = {
        {PR_BARRIER, 0},
        {PR_ALLREDUCE, 8},
        {PR_ALLREDUCE, (size_t)8 << 10},
        {PR_ALLGATHER, 8},
        {PR_ALLGATHER, (size_t)64 << 10},
        {PR_ALLTOALL, 8},
        {PR_ALLTOALL, (size_t)4 << 10},
};

#define PR_NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The cases of a team of p ranks: the dedicated list for p <= 2. */
static inline const struct pr_case *pr_cases(int p, int *n)
{
	if (p <= 2) {
		*n = PR_NELEM(pr_cases_dedicated);
		return pr_cases_dedicated;
	}
	*n = PR_NELEM(pr_cases_oversub);
	return pr_cases_oversub;
}

/* "allreduce:8" style name of a case (filter on the command line). */
static inline void pr_case_name(const struct pr_case *c, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s:%zu", pr_kind_name[c->kind], c->bytes);
}

/* Non-zero when filter (NULL: everything) selects c: a comma-separated
 * list of "allreduce" or "allreduce:8" (bytes in the result lines' unit). */
static inline int pr_case_selected(const struct pr_case *c, const char *filter)
{
	if (!filter || !*filter)
		return 1;
	char name[64];
	pr_case_name(c, name, sizeof name);
	const char *kind = pr_kind_name[c->kind];
	for (const char *s = filter; *s;) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if ((len == strlen(name) && !strncmp(s, name, len)) ||
		    (len == strlen(kind) && !strncmp(s, kind, len)))
			return 1;
		if (!e)
			break;
		s = e + 1;
	}
	return 0;
}

/* Ping-pong cases time a round trip; their figures are per one-way message. */
static inline int pr_is_p2p(const struct pr_case *c)
{
	return c->kind == PR_LATENCY || c->kind == PR_BANDWIDTH;
}

static inline double pr_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline double pr_tv_ns(struct timeval tv)
{
	return (double)tv.tv_sec * 1e9 + (double)tv.tv_usec * 1e3;
}

/* CPU time (user + system) of who: RUSAGE_THREAD for one rank that is a
 * thread, RUSAGE_SELF for one that is a process. */
static inline double pr_cpu_ns(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return pr_tv_ns(ru.ru_utime) + pr_tv_ns(ru.ru_stime);
}

/* What one rank did in one chunk. */
struct pr_chunk {
	double start, end; /* ns, CLOCK_MONOTONIC */
	double cpu;        /* ns of CPU */
	int err;           /* 0, or the implementation's error code */
};

/* Folds a rank's chunk into the combined one (start at +inf initially). */
static inline void pr_chunk_fold(struct pr_chunk *all, const struct pr_chunk *one)
{
	if (one->start < all->start)
		all->start = one->start;
	if (one->end > all->end)
		all->end = one->end;
	all->cpu += one->cpu;
	if (one->err && !all->err)
		all->err = one->err;
}

static inline struct pr_chunk pr_chunk_empty(void)
{
	struct pr_chunk c = {1e300, -1e300, 0, 0};
	return c;
}

/* Leaves a rank's chunk out of the measurement (ranks 2.. of a ping-pong),
 * keeping its error. */
static inline void pr_chunk_exclude(struct pr_chunk *c)
{
	int err = c->err;
	*c = pr_chunk_empty();
	c->err = err;
}

struct pr_plan {
	double budget; /* ns of counted chunks to aim for */
	int measuring; /* 0: warming up */
	long n;        /* operations of the chunk to run next */
	long iters;    /* counted operations */
	double span;   /* counted ns */
	double cpu;    /* counted CPU ns */
	double spent;  /* every chunk's span, counted or not */
};

static inline void pr_plan_init(struct pr_plan *pl, double budget_ns)
{
	memset(pl, 0, sizeof *pl);
	pl->budget = budget_ns;
	pl->n = 1;
}

static inline long pr_plan_chunk(const struct pr_plan *pl, double per_op)
{
	double n = pl->budget / 4 / (per_op > 1 ? per_op : 1);
	return n < 1 ? 1 : n > 1e7 ? 10000000 : (long)n;
}

/* Feeds the combined chunk that just ran; returns the size of the next chunk,
 * 0 when the measurement is complete.  Same inputs, same outputs on every
 * rank. */
static inline long pr_plan_next(struct pr_plan *pl, const struct pr_chunk *c)
{
	double span = c->end - c->start;
	if (span < 0)
		span = 0;
	pl->spent += span;
	if (!pl->measuring) {
		if (pl->spent >= 3 * pl->budget) { /* crawling: count this chunk, stop */
			pl->iters += pl->n;
			pl->span += span;
			pl->cpu += c->cpu;
			return 0;
		}
		if (span < pl->budget / 8) {
			pl->n *= span < pl->budget / 256 ? 8 : 2;
			return pl->n;
		}
		pl->measuring = 1;
		pl->n = pr_plan_chunk(pl, span / (double)pl->n);
		return pl->n;
	}
	pl->iters += pl->n;
	pl->span += span;
	pl->cpu += c->cpu;
	if (pl->span >= pl->budget || pl->spent >= 3 * pl->budget)
		return 0;
	pl->n = pr_plan_chunk(pl, pl->span / (double)pl->iters);
	double left = pl->budget - pl->span, per = pl->span / (double)pl->iters;
	if ((double)pl->n * per > left + pl->budget / 8) /* do not overshoot much */
		pl->n = left / per < 1 ? 1 : (long)(left / per) + 1;
	return pl->n;
}

/*
 * The result line, parsed by driver.c:
 *   R <case> <p> <bytes> <variant> <wall_ns> <cpu_ns> <iters> <note>
 * wall_ns and cpu_ns are per operation (per one-way message for latency and
 * bandwidth); variant names what was measured (a topology, a design); note is
 * the algorithm that ran, "-", or "error:<what>" (then the figures are nan).
 */
static inline void pr_print(const struct pr_case *c, int p, const char *variant,
                            const struct pr_plan *pl, const char *note)
{
	double div = (double)pl->iters * (pr_is_p2p(c) ? 2.0 : 1.0);
	printf("R %s %d %zu %s %.1f %.1f %ld %s\n", pr_kind_name[c->kind], p, c->bytes, variant,
	       pl->iters ? pl->span / div : 0.0, pl->iters ? pl->cpu / div : 0.0, pl->iters,
	       note && *note ? note : "-");
	fflush(stdout);
}

static inline void pr_print_error(const struct pr_case *c, int p, const char *variant, const char *what)
{
	printf("R %s %d %zu %s nan nan 0 error:%s\n", pr_kind_name[c->kind], p, c->bytes, variant, what);
	fflush(stdout);
}

/* Command line shared by the programs: -p P, -b BUDGET_MS, -c CASES (filter:
 * a comma-separated list, pr_case_selected), -v (print where each rank
 * runs), -w (written inputs: pr_write_input before every call). */
struct pr_args {
	int p;
	double budget_ns;
	const char *filter;
	int verbose;
};

/* -w, set by pr_parse_args before any rank runs, read-only after. */
static int pr_write_inputs;

static inline int pr_parse_args(int argc, char **argv, struct pr_args *a)
{
	a->p = 2;
	a->budget_ns = 30e6;
	a->filter = NULL;
	a->verbose = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < argc)
			a->p = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-b") && i + 1 < argc)
			a->budget_ns = atof(argv[++i]) * 1e6;
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			a->filter = argv[++i];
		else if (!strcmp(argv[i], "-v"))
			a->verbose = 1;
		else if (!strcmp(argv[i], "-w"))
			pr_write_inputs = 1;
		else {
			fprintf(stderr, "usage: %s [-p P] [-b BUDGET_MS] [-c CASE,...] [-v] [-w]\n",
			        argv[0]);
			return -1;
		}
	}
	if (a->p < 1 || a->budget_ns <= 0) {
		fprintf(stderr, "%s: bad -p or -b\n", argv[0]);
		return -1;
	}
	return 0;
}

/* Input of rank r, element i, of an allreduce; sums are exact in double. */
static inline double pr_in(int r, size_t i)
{
	return (double)(r + 1) * (double)(i % 7 + 1);
}

static inline double pr_sum(int p, size_t i)
{
	return (double)p * (double)(p + 1) / 2 * (double)(i % 7 + 1);
}

/* Byte i of the root's broadcast buffer. */
static inline unsigned char pr_byte(size_t i)
{
	return (unsigned char)(i * 131u + 7u);
}

/* Byte i of the block rank r sends to rank j in an alltoall (j = 0 in an
 * allgather, whose block goes to every rank): differs between neighbouring
 * ranks, destinations and bytes, so that a misplaced block shows. */
static inline unsigned char pr_block_byte(int r, int j, size_t i)
{
	uint32_t x = (uint32_t)r * 2654435761u ^ (uint32_t)j * 40503u ^ (uint32_t)i * 2246822519u;
	x ^= x >> 15;
	x *= 2246822507u;
	x ^= x >> 13;
	return (unsigned char)(x >> 24);
}

/* The buffers of rank me of p for case c, filled with the case's inputs:
 * buf for a broadcast (the root's data) or point-to-point, or the send
 * buffer of an allgather (one block) or an alltoall (p blocks); in and out
 * for an allreduce; rbuf the receive buffer (p blocks, zeroed) of an
 * allgather or an alltoall.  The caller frees them. */
/* n bytes and a line to spare, on a 64-byte boundary (C11's
 * aligned_alloc takes a size that is a multiple of the alignment). */
static inline void *pr_alloc(size_t n)
{
	return aligned_alloc(64, (n + 64 + 63) & ~(size_t)63);
}

static inline void pr_buffers(const struct pr_case *c, int p, int me, unsigned char **buf,
                              double **in, double **out, unsigned char **rbuf)
{
	size_t count = c->bytes / sizeof(double);
	*buf = *rbuf = NULL;
	*in = *out = NULL;
	if (c->kind == PR_BCAST || pr_is_p2p(c)) {
		*buf = pr_alloc(c->bytes);
		for (size_t i = 0; i < c->bytes; i++)
			(*buf)[i] = me == 0 ? pr_byte(i) : 0;
	}
	if (c->kind == PR_ALLREDUCE) {
		*in = pr_alloc(count * sizeof(double));
		*out = pr_alloc(count * sizeof(double));
		for (size_t i = 0; i < count; i++) {
			(*in)[i] = pr_in(me, i);
			(*out)[i] = 0;
		}
	}
	if (c->kind == PR_ALLGATHER || c->kind == PR_ALLTOALL) {
		int blocks = c->kind == PR_ALLTOALL ? p : 1;
		*buf = pr_alloc((size_t)blocks * c->bytes);
		*rbuf = pr_alloc((size_t)p * c->bytes);
		for (int j = 0; j < blocks; j++)
			for (size_t i = 0; i < c->bytes; i++)
				(*buf)[(size_t)j * c->bytes + i] = pr_block_byte(me, j, i);
		memset(*rbuf, 0, (size_t)p * c->bytes);
	}
}

/* Non-zero when the buffers (pr_buffers) of rank me do not hold the result
 * of case c on p ranks: the root's bytes after a broadcast, the sums after
 * an allreduce, every rank's block in rank order after an allgather, block
 * me of every rank in rank order after an alltoall. */
static inline int pr_wrong_result(const struct pr_case *c, int p, int me, const unsigned char *buf,
                                  const double *out, const unsigned char *rbuf)
{
	int bad = 0;
	if (c->kind == PR_BCAST)
		for (size_t i = 0; i < c->bytes; i++)
			bad |= buf[i] != pr_byte(i);
	if (c->kind == PR_ALLREDUCE)
		for (size_t i = 0; i < c->bytes / sizeof(double); i++)
			bad |= out[i] != pr_sum(p, i);
	if (c->kind == PR_ALLGATHER || c->kind == PR_ALLTOALL)
		for (int r = 0; r < p; r++)
			for (size_t i = 0; i < c->bytes; i++)
				bad |= rbuf[(size_t)r * c->bytes + i] !=
				       pr_block_byte(r, c->kind == PR_ALLTOALL ? me : 0, i);
	return bad;
}

/*
 * -w: before every call rank me stores into every cache line of its input
 * (the root's buffer of a broadcast, the allreduce's IN, the send buffer of
 * an allgather or an alltoall), the values unchanged: the input is then in
 * the rank's own cache and modified, as a program's inputs are when it
 * computed them between calls.  Without it the inputs never change, and
 * after the first call every core that read a peer's input keeps a copy,
 * which favours the algorithms that read whole peer inputs (OpenMP's
 * "direct", topocoll's shm_flag and hypercube) over those that read a
 * slice of each (topocoll's shm).  The stores cost every peer the same:
 * one per 64 bytes.
 */
static inline void pr_write_input(const struct pr_case *c, int p, int me, unsigned char *buf, double *in)
{
	unsigned char *x = NULL;
	size_t n = 0;
	if (c->kind == PR_BCAST && me == 0)
		x = buf, n = c->bytes;
	else if (c->kind == PR_ALLREDUCE)
		x = (unsigned char *)in, n = c->bytes;
	else if (c->kind == PR_ALLGATHER)
		x = buf, n = c->bytes;
	else if (c->kind == PR_ALLTOALL)
		x = buf, n = (size_t)p * c->bytes;
	volatile unsigned char *v = x;
	for (size_t i = 0; i < n; i += 64)
		v[i] = v[i];
}

#endif /* PEERS_H */
