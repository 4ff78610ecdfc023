/* SPDX-License-Identifier: MIT */
/*
 * bench/rounds - what a synchronised round among q ranks costs, measured
 * several ways on native teams of one rank per CPU, q = 2, 4, 8, ... up to
 * the CPUs: where the calibrated model's round of cache-line flags
 * (topocoll calibrate's "flags") and the library's own calls part.
 *
 * Each figure is ns per round or per call, the median of --samples samples:
 *   b2b (back to back): a sample is --calls rounds or calls in a row, each
 *       rank's time over them divided by their number, the slowest rank's;
 *   iso (isolated, as bench/model_fidelity --native times a call): a
 *       sample is one round or call after tc_barrier, from the last rank's
 *       start to the last rank's end;
 *   last: in the same samples, the time of the rank that started last,
 *       which finds every peer's flag already set: the work of a call
 *       (the library's per call and per peer, and the misses of reading
 *       the q - 1 flags) without its waits.  On more ranks than CPUs too,
 *       where the other two are waits (fibres), it still says what a
 *       call's work costs at that team size.
 * The rounds and calls:
 *   flag        each rank stores the round's number in its own cache line
 *               (a 128-byte block each) and sweeps the others' from the
 *               next rank on until each shows it (the calibration's
 *               round: lib/calibrate/concurrency.c);
 *   flag64      the same with the flags a line apart, every rank sweeping
 *               from rank 0 on (two ranks' flags share the 128-byte pair a
 *               spatial prefetcher fetches together; every rank looks at
 *               one flag first): how the calibration's round was laid out
 *               in the reports of docs/manycore/2026-11-28;
 *   flag+8      the same, 8 bytes of payload in the flag's line, copied
 *               out of every peer's line as its flag is seen (an 8-byte
 *               allgather's round, by hand);
 *   flag+line   the payload in the line after the flag's, a word for
 *               each reader (reader r takes word r mod 8): an alltoall's or
 *               a reduce_scatter's read of its block past the flag;
 *   flag2       the flag's line alternating between two by the round's
 *               parity, as the library's flags do (lib/coll/shm.h);
 *   barrier, allgather 8 B, alltoall 8 B, allreduce 8 B: the library's
 *               calls (AUTO's algorithm, printed);
 *   sendrecv    a round of 8-byte messages over the channels, tc_sendrecv
 *               to me + d from me - d, d = 1, 2, 4, ... in turn (the
 *               calibration's R(q), "sync_ns");
 *   xor         the same both ways with me XOR d (a hypercube's exchange,
 *               the calibration's "pairs_ns"; q a power of two);
 *   allreduce-hc  an 8-byte allreduce by `hypercube` over the channels: a
 *               call of log2 q such exchanges (q a power of two), what the
 *               calibrated prediction prices with R(q) per round.
 * A kind that needs q a power of two is left out at other q.
 * Usage: rounds [--q LIST] [--only KINDS] [--calls N] [--samples N]
 *   --only flag,allgather   the kinds to run (names as in the table)
 * The last line is one JSON object.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topocoll.h"
#include "stats.h"

enum { MAX_Q = 64, MAX_SAMPLES = 101, LINE = 64 };

enum kind {
	K_FLAG,
	K_FLAG64,
	K_FLAG8,
	K_FLAG_LINE,
	K_FLAG2,
	K_BARRIER,
	K_ALLGATHER,
	K_ALLTOALL,
	K_ALLREDUCE,
	K_SENDRECV,
	K_XOR,
	K_ALLREDUCE_HC,
	NKIND
};
static const char *const kind_name[NKIND] = {"flag",      "flag64",   "flag+8",    "flag+line",
                                             "flag2",     "barrier",  "allgather", "alltoall",
                                             "allreduce", "sendrecv", "xor",       "allreduce-hc"};

/* Whether kind k runs among q ranks (xor and allreduce-hc: q a power of
 * two). */
static int kind_fits(int k, int q)
{
	return (k != K_XOR && k != K_ALLREDUCE_HC) || !(q & (q - 1));
}

/* The log2 of q rounded up (at least 1). */
static int log2_up(int q)
{
	int lg = 1;
	while ((1 << lg) < q)
		lg++;
	return lg;
}

/* A rank's flag block: two pairs of lines (flag2 alternates between
 * them); the payload of flag+8 in the flag's line, flag+line's in the
 * next. */
struct block {
	_Alignas(128) _Atomic uint64_t step;
	_Atomic uint64_t pay; /* relaxed: ordered by step's release */
	unsigned char pad[LINE - 16];
	_Atomic uint64_t line[LINE / 8];
};
_Static_assert(sizeof(struct block) == 128, "a block is two cache lines");

struct ctx {
	int q, calls, samples;
	enum kind kind;
	int iso;
	struct block (*blk)[2];              /* per rank */
	_Atomic uint64_t (*tight)[LINE / 8]; /* flag64's flags, a line each */
	uint64_t base;                       /* the first round's number of this measurement */
	double t0[MAX_Q][MAX_SAMPLES], t1[MAX_Q][MAX_SAMPLES];
	double per[MAX_Q][MAX_SAMPLES]; /* b2b: each rank's ns per round */
	char alg[MAX_Q][32];
};

/* One hand-made round v among the q ranks (kinds flag .. flag2); 0, or
 * TC_ETIMEDOUT when a peer has not come for HAND_WAIT_NS (it failed). */
#define HAND_WAIT_NS 10e9
static int hand_round(struct tc_proc *proc, struct ctx *c, int me, uint64_t v, uint64_t *sink)
{
	const int q = c->q, par = c->kind == K_FLAG2 ? (int)(v & 1) : 0;
	struct block *mine = &c->blk[me][par];
	const int tight = c->kind == K_FLAG64;
	if (c->kind == K_FLAG8)
		atomic_store_explicit(&mine->pay, v, memory_order_relaxed);
	else if (c->kind == K_FLAG_LINE)
		for (int r = 0; r < q && r < LINE / 8; r++)
			atomic_store_explicit(&mine->line[r], v + (uint64_t)r, memory_order_relaxed);
	/* Release: the payload before the flag; pairs with the acquire
	 * loads of the peers' sweeps. */
	atomic_store_explicit(tight ? &c->tight[me][0] : &mine->step, v, memory_order_release);
	uint64_t left[MAX_Q / 64 + 1] = {0};
	int n = q - 1;
	for (int i = 1; i < q; i++)
		left[i / 64] |= UINT64_C(1) << (i % 64);
	double t0 = 0;
	for (unsigned pass = 1; n; pass++) {
		if (pass % 4096 == 0) {
			tc_yield(proc); /* more ranks than CPUs: let the awaited run */
			const double t = bench_now_ns();
			if (!t0)
				t0 = t;
			else if (t - t0 > HAND_WAIT_NS)
				return TC_ETIMEDOUT;
		}
		for (int w = 0; w * 64 < q; w++)
			for (uint64_t bits = left[w]; bits; bits &= bits - 1) {
				/* Bit i (1 .. q - 1): rank me + i, or for
				 * flag64 the ranks other than me in order. */
				const int i = w * 64 + __builtin_ctzll(bits);
				const int r = tight ? (i <= me ? i - 1 : i) : (me + i) % q;
				struct block *b = &c->blk[r][par];
				if (atomic_load_explicit(tight ? &c->tight[r][0] : &b->step,
				                         memory_order_acquire) < v)
					continue;
				if (c->kind == K_FLAG8)
					sink[r] = atomic_load_explicit(&b->pay, memory_order_relaxed);
				else if (c->kind == K_FLAG_LINE)
					sink[r] = atomic_load_explicit(&b->line[me % (LINE / 8)],
					                               memory_order_relaxed);
				left[w] &= ~(UINT64_C(1) << (i % 64));
				n--;
			}
	}
	return TC_OK;
}

static int one(struct tc_proc *proc, struct ctx *c, uint64_t v, double *in, double *out)
{
	switch (c->kind) {
	case K_BARRIER:
		return tc_barrier(proc, NULL);
	case K_ALLGATHER:
		return tc_allgather(proc, in, out, 1, TC_DOUBLE, NULL);
	case K_ALLTOALL:
		return tc_alltoall(proc, in, out, 1, TC_DOUBLE, NULL);
	case K_ALLREDUCE:
		return tc_allreduce(proc, in, out, 1, TC_DOUBLE, TC_OP_SUM, NULL);
	case K_SENDRECV: {
		const int q = c->q, me = tc_rank(proc), d = (1 << (int)(v % (uint64_t)log2_up(q))) % q;
		return tc_sendrecv(proc, (me + d) % q, in, 8, (me + q - d) % q, out, 8, NULL);
	}
	case K_XOR: {
		const int me = tc_rank(proc), d = 1 << (int)(v % (uint64_t)log2_up(c->q));
		return tc_sendrecv(proc, me ^ d, in, 8, me ^ d, out, 8, NULL);
	}
	case K_ALLREDUCE_HC: {
		const struct tc_coll_opts o = {.alg = "hypercube"};
		return tc_allreduce(proc, in, out, 1, TC_DOUBLE, TC_OP_SUM, &o);
	}
	default: {
		uint64_t sink[MAX_Q];
		return hand_round(proc, c, tc_rank(proc), v, sink);
	}
	}
}

static int rank_fn(struct tc_proc *proc, void *arg)
{
	struct ctx *c = arg;
	const int me = tc_rank(proc);
	double in[MAX_Q], out[MAX_Q];
	for (int i = 0; i < MAX_Q; i++)
		in[i] = me + i;
	uint64_t v = c->base;
	int err = TC_OK;
	for (int s = -1; s < c->samples && !err; s++) { /* s = -1: warm-up */
		if ((err = tc_barrier(proc, NULL)) != 0)
			break;
		const int n = c->iso ? 1 : c->calls;
		const double t0 = bench_now_ns();
		for (int k = 0; k < n && !err; k++)
			err = one(proc, c, ++v, in, out);
		const double t1 = bench_now_ns();
		if (s >= 0) {
			c->t0[me][s] = t0;
			c->t1[me][s] = t1;
			c->per[me][s] = (t1 - t0) / n;
		}
	}
	struct tc_coll_info ci;
	if (c->kind >= K_BARRIER && c->kind != K_SENDRECV && c->kind != K_XOR) {
		tc_last_coll(proc, &ci);
		if (ci.algorithm)
			snprintf(c->alg[me], sizeof c->alg[me], "%s", ci.algorithm);
	}
	return err;
}

/* Appends to the JSON line, which keeps its terminating NUL when full. */
static void json_add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	const int n = *len < cap ? vsnprintf(buf + *len, cap - *len, fmt, ap) : 0;
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < cap ? *len + (size_t)n : cap - 1;
}

/* A measurement's figure: the median over the samples of the slowest
 * rank's time per round (b2b), of the last rank's start to the last
 * rank's end (iso), or of the last starter's own time (last: iso's
 * samples). */
enum fig { FIG_B2B, FIG_ISO, FIG_LAST };

static double figure(const struct ctx *c, enum fig f)
{
	double v[MAX_SAMPLES];
	for (int s = 0; s < c->samples; s++) {
		double a = 0, b = 0, w = 0;
		int last = 0;
		for (int r = 0; r < c->q; r++) {
			a = c->t0[r][s] > a ? c->t0[r][s] : a;
			b = c->t1[r][s] > b ? c->t1[r][s] : b;
			w = c->per[r][s] > w ? c->per[r][s] : w;
			if (c->t0[r][s] > c->t0[last][s])
				last = r;
		}
		v[s] = f == FIG_B2B ? w : f == FIG_ISO ? b - a : c->t1[last][s] - c->t0[last][s];
	}
	qsort(v, (size_t)c->samples, sizeof *v, bench_cmp_double);
	return v[c->samples / 2];
}

/* The kinds --only names (comma-separated), as a mask; 0 on a name not
 * known. */
static unsigned parse_kinds(const char *list)
{
	unsigned mask = 0;
	char *copy = strdup(list);
	for (char *t = copy ? strtok(copy, ",") : NULL; t; t = strtok(NULL, ",")) {
		int k = 0;
		while (k < NKIND && strcmp(t, kind_name[k]))
			k++;
		if (k == NKIND) {
			fprintf(stderr,
			        "rounds: --only: no kind '%s' (flag, flag64, flag+8, flag+line, flag2, "
			        "barrier, allgather, alltoall, allreduce, sendrecv, xor, allreduce-hc)\n",
			        t);
			free(copy);
			return 0;
		}
		mask |= 1u << k;
	}
	free(copy);
	return mask;
}

int main(int argc, char **argv)
{
	int qs[8], nq = 0, calls = 200, samples = 51;
	unsigned only = (1u << NKIND) - 1;
	const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *qlist = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--q") && i + 1 < argc)
			qlist = argv[++i];
		else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			if (!(only = parse_kinds(argv[++i])))
				return 2;
		} else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			samples = atoi(argv[++i]);
		else {
			fprintf(stderr,
			        "usage: rounds [--q LIST] [--only KINDS] [--calls N] [--samples N]\n");
			return 2;
		}
	}
	if (calls < 1 || samples < 1 || samples > MAX_SAMPLES) {
		fprintf(stderr, "rounds: --calls at least 1, --samples 1 .. %d\n", MAX_SAMPLES);
		return 2;
	}
	if (qlist) {
		char *copy = strdup(qlist);
		int over = 0;
		for (char *t = copy ? strtok(copy, ",") : NULL; t; t = strtok(NULL, ","))
			if (nq < 8)
				qs[nq++] = atoi(t);
			else
				over = 1;
		free(copy);
		if (!nq || over) {
			fprintf(stderr, "rounds: --q takes one to eight team sizes, such as 2,4,8\n");
			return 2;
		}
	} else {
		for (int q = 2; q <= cpus && q <= MAX_Q && nq < 8; q *= 2)
			qs[nq++] = q;
	}
	for (int i = 0; i < nq; i++)
		if (qs[i] < 2 || qs[i] > MAX_Q) {
			fprintf(stderr, "rounds: a team of %d ranks: --q takes 2 .. %d\n", qs[i], MAX_Q);
			return 2;
		}
	struct ctx *c = calloc(1, sizeof *c);
	struct block(*blk)[2] = aligned_alloc(128, MAX_Q * sizeof *blk);
	_Atomic uint64_t(*tight)[LINE / 8] = aligned_alloc(128, MAX_Q * sizeof *tight);
	if (!c || !blk || !tight) {
		fprintf(stderr, "rounds: out of memory\n");
		free(c);
		free(blk);
		free(tight);
		return 1;
	}
	for (int r = 0; r < MAX_Q; r++)
		for (int w = 0; w < LINE / 8; w++)
			atomic_init(&tight[r][w], 0);
	for (int r = 0; r < MAX_Q; r++)
		for (int b = 0; b < 2; b++) {
			atomic_init(&blk[r][b].step, 0);
			atomic_init(&blk[r][b].pay, 0);
			for (int w = 0; w < LINE / 8; w++)
				atomic_init(&blk[r][b].line[w], 0);
		}
	c->blk = blk;
	c->tight = tight;
	c->calls = calls;
	c->samples = samples;
	printf("# rounds: ns per round or call, median of %d samples; b2b: %d in a row, iso: one "
	       "after a barrier, last: the last starter's own time in those; %ld CPUs\n",
	       samples, calls, cpus);
	printf("%-4s %-12s %9s %9s %9s  %s\n", "q", "kind", "b2b", "iso", "last", "algorithm");
	char json[16384];
	size_t jl = 0;
	json_add(json, sizeof json, &jl,
	         "{\"bench\":\"rounds\",\"calls\":%d,\"samples\":%d,\"cpus\":%ld,\"q\":{", calls,
	         samples, cpus);
	int rc = 0;
	for (int i = 0; i < nq && !rc; i++) {
		const int q = qs[i];
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.p = q;
		struct tc_team *team = NULL;
		int err = tc_team_create(&cfg, &team);
		if (err) {
			fprintf(stderr, "rounds: team of %d: %s\n", q, tc_strerror(err));
			rc = 1;
			break;
		}
		c->q = q;
		json_add(json, sizeof json, &jl, "%s\"%d\":{", i ? "," : "", q);
		int first = 1;
		for (int k = 0; k < NKIND && !err; k++) {
			if (!(only >> k & 1) || !kind_fits(k, q))
				continue;
			double f[3] = {0, 0, 0};
			for (int iso = 0; iso < 2 && !err; iso++) {
				c->kind = (enum kind)k;
				c->iso = iso;
				c->base += (uint64_t)(calls + 1) * (uint64_t)(samples + 1) + 1;
				if ((err = tc_run(team, rank_fn, c)) != 0)
					break;
				f[iso] = figure(c, iso ? FIG_ISO : FIG_B2B);
				if (iso)
					f[2] = figure(c, FIG_LAST);
			}
			if (err)
				break;
			const char *alg = k == K_SENDRECV || k == K_XOR ? "tc_sendrecv"
			                  : k >= K_BARRIER              ? c->alg[0]
			                                                : "by hand";
			printf("%-4d %-12s %9.0f %9.0f %9.0f  %s%s\n", q, kind_name[k], f[0], f[1],
			       f[2], alg,
			       q > cpus ? "  (more ranks than CPUs: b2b and iso are waits)" : "");
			json_add(json, sizeof json, &jl,
			         "%s\"%s\":{\"b2b\":%.0f,\"iso\":%.0f,\"last\":%.0f,\"algorithm\":\"%s\"}",
			         first ? "" : ",", kind_name[k], f[0], f[1], f[2], alg);
			first = 0;
		}
		json_add(json, sizeof json, &jl, "}");
		tc_team_destroy(team);
		if (err) {
			fprintf(stderr, "rounds: q = %d: %s\n", q, tc_strerror(err));
			rc = 1;
		}
	}
	printf("%s}}\n", json);
	free(blk);
	free(tight);
	free(c);
	return rc;
}
