/* SPDX-License-Identifier: MIT */
/*
 * bench/copies - k concurrent copies of blocks that other cores wrote,
 * by how the blocks are shared: what the calibration's copy table measures
 * (each copier's block its own, fresh from its writer) beside what an
 * allgather's and a bcast's readers meet (a block several readers take).
 * On a native team of one rank per CPU, for k = 2, 4, 8, ... up to the
 * CPUs less one and blocks of --sizes:
 *   own      copier j copies the block rank j + 1 has just written (the
 *            copy table's sample, lib/calibrate/concurrency.c);
 *   read     the same block after rank j + 2 has copied it once (its
 *            lines shared and clean: an allgather's block after its first
 *            reader);
 *   one      every copier copies the block one rank (not copying) has
 *            just written (a bcast's readers);
 *   convoy   copier j copies block j of k that one rank (not copying) has
 *            just written, all at once (a reduction's readers, which take
 *            their operands in rank order: every reader at rank 0's
 *            buffer, then at rank 1's); "-" where k blocks exceed
 *            CONVOY_MAX bytes;
 *   zeros    own, every block and destination written with zeros, what a
 *            benchmark that rewrites its buffers with zeros copies: where
 *            Intel cores drop stores of zeros over zeros (Downs, "Hardware
 *            store elimination"), faster than own.
 * Each figure is GB/s per copier (the block over the slowest copier's
 * time), the median of --samples; every copier writes its destination
 * first, as the table's do.  The last line is one JSON object.
 * Usage: copies [--sizes LIST] [--samples N]   (sizes: 64K, 1M, ...)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topocoll.h"
#include "stats.h"

enum { MAX_SIZES = 8, MAX_SAMPLES = 101 };
enum mode { M_OWN, M_READ, M_ONE, M_CONVOY, M_ZEROS, NMODE };
static const char *const mode_name[NMODE] = {"own", "read", "one", "convoy", "zeros"};
/* The largest buffer of k blocks that convoy's writer fills. */
#define CONVOY_MAX ((size_t)64 << 20)

struct ctx {
	int k, samples;
	enum mode mode;
	size_t m;
	unsigned char **src, **dst, **scratch; /* per rank, m bytes each */
	unsigned char *wide;                   /* convoy's k blocks, CONVOY_MAX bytes */
	double t[MAX_SAMPLES][64];             /* per sample, per copier: ns */
};

/* The rank whose block copier j copies: j + 1 (own, read; the last
 * copier's is rank k, which copies nothing), or rank k for all (one).  In
 * read, rank j + 2 (mod k + 1) has copied that block once before. */
static int source_of(const struct ctx *c, int j)
{
	return c->mode == M_ONE ? c->k : (j + 1) % (c->k + 1); /* zeros: as own */
}

static int rank_fn(struct tc_proc *proc, void *arg)
{
	struct ctx *c = arg;
	const int me = tc_rank(proc), k = c->k;
	const size_t m = c->m;
	int err = TC_OK;
	for (int s = -1; s < c->samples && !err; s++) { /* s = -1: warm-up */
		/* Writers: every rank that is some copier's source (convoy:
		 * rank k, all k blocks). */
		if (c->mode == M_CONVOY && me == k)
			memset(c->wide, (int)((s + 2) & 0xff), (size_t)k * m);
		else
			memset(c->src[me], c->mode == M_ZEROS ? 0 : (int)((s + 2) & 0xff), m);
		if (me < k)
			memset(c->dst[me], 0, m);
		if ((err = tc_barrier(proc, NULL)) != 0)
			break;
		/* read: rank j + 2 reads copier j's source, then the copy. */
		if (c->mode == M_READ && me < k + 1) {
			const int j = (me + k + 1 - 2) % (k + 1); /* the copier whose source me reads */
			if (j < k)
				memcpy(c->scratch[me], c->src[source_of(c, j)], m);
		}
		if ((err = tc_barrier(proc, NULL)) != 0)
			break;
		if (me < k) {
			const double t0 = bench_now_ns();
			memcpy(c->dst[me],
			       c->mode == M_CONVOY ? c->wide + (size_t)me * m : c->src[source_of(c, me)],
			       m);
			if (s >= 0)
				c->t[s][me] = bench_now_ns() - t0;
		}
		if ((err = tc_barrier(proc, NULL)) != 0)
			break;
	}
	return err;
}

static size_t parse_size(const char *t)
{
	char *end;
	const double v = strtod(t, &end);
	const double mul = *end == 'K' || *end == 'k'   ? 1024.0
	                   : *end == 'M' || *end == 'm' ? 1048576.0
	                                                : 1.0;
	if (end == t || v <= 0 || (*end && end[1]) || (*end && mul == 1.0))
		return 0;
	return (size_t)(v * mul);
}

int main(int argc, char **argv)
{
	size_t sizes[MAX_SIZES] = {(size_t)64 << 10, (size_t)1 << 20};
	int nsizes = 2, samples = 21;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			nsizes = 0;
			char *copy = strdup(argv[++i]);
			for (char *t = copy ? strtok(copy, ",") : NULL; t; t = strtok(NULL, ",")) {
				const size_t v = nsizes < MAX_SIZES ? parse_size(t) : 0;
				if (!v) {
					fprintf(stderr,
					        "copies: --sizes takes up to %d sizes such as 64K,1M, not "
					        "'%s'\n",
					        MAX_SIZES, t);
					free(copy);
					return 2;
				}
				sizes[nsizes++] = v;
			}
			free(copy);
		} else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
			samples = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: copies [--sizes LIST] [--samples N]\n");
			return 2;
		}
	}
	if (samples < 1 || samples > MAX_SAMPLES || !nsizes) {
		fprintf(stderr, "copies: --samples 1 .. %d and one size at least\n", MAX_SAMPLES);
		return 2;
	}
	const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const int p = cpus < 3 ? 3 : cpus > 64 ? 64 : (int)cpus;
	size_t maxm = 0;
	for (int i = 0; i < nsizes; i++)
		maxm = sizes[i] > maxm ? sizes[i] : maxm;
	struct ctx *c = calloc(1, sizeof *c);
	int rc = c ? 0 : 1;
	if (c) {
		c->samples = samples;
		c->src = calloc((size_t)p, sizeof *c->src);
		c->dst = calloc((size_t)p, sizeof *c->dst);
		c->scratch = calloc((size_t)p, sizeof *c->scratch);
		for (int r = 0; !rc && r < p; r++) {
			if (!c->src || !c->dst || !c->scratch || !(c->src[r] = aligned_alloc(64, maxm)) ||
			    !(c->dst[r] = aligned_alloc(64, maxm)) ||
			    !(c->scratch[r] = aligned_alloc(64, maxm)))
				rc = 1;
		}
		if (!rc && !(c->wide = aligned_alloc(64, CONVOY_MAX)))
			rc = 1;
	}
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.p = p;
	struct tc_team *team = NULL;
	int err = rc ? TC_ENOMEM : tc_team_create(&cfg, &team);
	if (err) {
		fprintf(stderr, "copies: %s\n", tc_strerror(err));
		rc = 1;
	}
	char json[8192];
	size_t jl = 0;
	if (!rc) {
		printf("# copies: GB/s per copier, median of %d samples; a team of %d ranks on %ld CPUs%s\n",
		       samples, p, cpus, p > cpus ? " (more ranks than CPUs: not a measurement)" : "");
		printf("%-9s %4s", "bytes", "k");
		for (int md = 0; md < NMODE; md++)
			printf(" %9s", mode_name[md]);
		printf("\n");
		jl += (size_t)snprintf(json, sizeof json,
		                       "{\"bench\":\"copies\",\"cpus\":%ld,\"rows\":[", cpus);
	}
	/* The copier counts: 2, 4, 8, ... below p - 1, then p - 1 (one rank
	 * more writes what `one` reads, and `read`'s blocks need k + 1). */
	int ks[8], nk = 0;
	for (int k = 2; k < p - 1 && nk < 7; k *= 2)
		ks[nk++] = k;
	ks[nk++] = p - 1;
	int first = 1;
	for (int si = 0; !rc && si < nsizes; si++)
		for (int ki = 0; !rc && ki < nk; ki++) {
			double gb[NMODE];
			c->m = sizes[si];
			c->k = ks[ki];
			const int k = c->k;
			for (int md = 0; !rc && md < NMODE; md++) {
				c->mode = (enum mode)md;
				gb[md] = -1; /* not measured */
				if (c->mode == M_CONVOY && (size_t)k * c->m > CONVOY_MAX)
					continue;
				if ((err = tc_run(team, rank_fn, c)) != 0) {
					fprintf(stderr, "copies: %s\n", tc_strerror(err));
					rc = 1;
					break;
				}
				double v[MAX_SAMPLES];
				for (int s = 0; s < samples; s++) {
					double w = 0;
					for (int j = 0; j < k; j++)
						w = c->t[s][j] > w ? c->t[s][j] : w;
					v[s] = w;
				}
				qsort(v, (size_t)samples, sizeof *v, bench_cmp_double);
				gb[md] = (double)c->m / v[samples / 2];
			}
			if (rc)
				break;
			/* A figure, or "-" (null) where not measured. */
			printf("%-9zu %4d", c->m, k);
			if (jl < sizeof json)
				jl += (size_t)snprintf(json + jl, sizeof json - jl,
				                       "%s{\"bytes\":%zu,\"k\":%d",
				                       first ? "" : ",", c->m, k);
			for (int md = 0; md < NMODE; md++) {
				if (gb[md] >= 0)
					printf(" %9.2f", gb[md]);
				else
					printf(" %9s", "-");
				if (jl < sizeof json)
					jl += (size_t)(gb[md] >= 0
					                       ? snprintf(json + jl, sizeof json - jl,
					                                  ",\"%s\":%.3f",
					                                  mode_name[md], gb[md])
					                       : snprintf(json + jl, sizeof json - jl,
					                                  ",\"%s\":null", mode_name[md]));
			}
			printf("\n");
			if (jl < sizeof json)
				jl += (size_t)snprintf(json + jl, sizeof json - jl, "}");
			first = 0;
		}
	if (!rc)
		printf("%s]}\n", jl < sizeof json ? json : "{\"bench\":\"copies\",\"rows\":[");
	tc_team_destroy(team);
	for (int r = 0; c && r < p; r++) {
		if (c->src)
			free(c->src[r]);
		if (c->dst)
			free(c->dst[r]);
		if (c->scratch)
			free(c->scratch[r]);
	}
	if (c) {
		free(c->src);
		free(c->dst);
		free(c->scratch);
		free(c->wide);
	}
	free(c);
	return rc;
}
