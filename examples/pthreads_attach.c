/* SPDX-License-Identifier: MIT */
/*
 * examples/pthreads_attach.c - threads a program creates itself (pthreads)
 * take a rank each with tc_attach, and use point-to-point calls and
 * collectives to pack variable-sized outputs into one array.
 *
 * What it shows.  P worker threads (pthread_create) attach to ranks 0..P-1 of
 * a "ring:P" team.  Worker t produces a variable number of items c_t (here a
 * few squares); to write them contiguously into one shared output array every
 * worker needs its offset, the sum of c_0 .. c_{t-1}: tc_exscan computes it,
 * and tc_allreduce the total, which the workers check against each other with
 * tc_allgather of the counts.  Then a token goes once round the ring with
 * tc_send/tc_recv (each worker adds its rank), the way a program passes work
 * along a pipeline.  Each worker detaches (tc_detach) before it returns; the
 * main thread joins them and checks the packed array, the offsets and the
 * token against a sequential computation (exit status 1 on a mismatch).  A
 * worker that fails calls tc_team_abort so that the others, waiting for it in
 * a collective, return TC_EABORTED instead of hanging: attached threads have
 * no tc_run to do it for them.
 *
 * Run:   build/examples/pthreads_attach 8 1000        (P, then BASE items per worker)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topocoll.h"

struct shared {
	struct tc_team *team;
	int p;
	long base;
	int64_t *out; /* the packed items: worker t writes [offset, offset + c_t) */
	long capacity;
};

struct worker {
	struct shared *s;
	pthread_t th;
	int rank;
	int err;
	int64_t offset, total, token;
};

/* c_t: how many items worker t produces (deterministic, uneven). */
static long count_of(int t, long base)
{
	return base + (t * 37) % 11 - (t % 3) * 2 + 2;
}

/* Item i of worker t. */
static int64_t item(int t, long i)
{
	return (int64_t)t * 1000000 + i * i;
}

static int work(struct worker *w, struct tc_proc *proc)
{
	struct shared *s = w->s;
	int t = w->rank, p = s->p;
	int64_t c = count_of(t, s->base), zero = 0;
	/* Offsets: exclusive prefix sum (rank 0's is left untouched: 0). */
	w->offset = zero;
	int err = tc_exscan(proc, &c, &w->offset, 1, TC_INT64, TC_OP_SUM, NULL);
	if (!err)
		err = tc_allreduce(proc, &c, &w->total, 1, TC_INT64, TC_OP_SUM, NULL);
	int64_t *counts = malloc((size_t)p * sizeof *counts);
	if (!counts)
		return TC_ENOMEM;
	if (!err)
		err = tc_allgather(proc, &c, counts, 1, TC_INT64, NULL);
	if (!err) { /* every worker can check the others' sums */
		int64_t pre = 0, tot = 0;
		for (int r = 0; r < p; r++) {
			pre += r < t ? counts[r] : 0;
			tot += counts[r];
		}
		if (pre != w->offset || tot != w->total || w->total > s->capacity)
			err = TC_EMISMATCH;
	}
	free(counts);
	if (err)
		return err;
	for (long i = 0; i < c; i++)
		s->out[w->offset + i] = item(t, i);
	/* A token once round the ring: 0 starts it, p - 1 hands it back. */
	int64_t tok = 0;
	if (p > 1) {
		if (t > 0)
			err = tc_recv(proc, t - 1, &tok, sizeof tok, NULL);
		tok += t;
		if (!err)
			err = tc_send(proc, (t + 1) % p, &tok, sizeof tok);
		if (!err && t == 0)
			err = tc_recv(proc, p - 1, &tok, sizeof tok, NULL);
	}
	w->token = tok;
	return err;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct tc_proc *proc;
	w->err = tc_attach(w->s->team, w->rank, &proc);
	if (w->err) {
		tc_team_abort(w->s->team);
		return NULL;
	}
	w->err = work(w, proc);
	if (w->err)
		tc_team_abort(w->s->team); /* the others would wait for us */
	int e = tc_detach(proc);
	w->err = w->err ? w->err : e;
	return NULL;
}

int main(int argc, char **argv)
{
	int p = argc > 1 ? atoi(argv[1]) : 8;
	long base = argc > 2 ? atol(argv[2]) : 1000;
	if (p < 1 || base < 0) {
		fprintf(stderr, "usage: pthreads_attach [P BASE]\n");
		return 2;
	}
	char spec[32];
	snprintf(spec, sizeof spec, "ring:%d", p);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	struct shared s = {.p = p, .base = base};
	int err = tc_team_create(&cfg, &s.team);
	if (err) {
		fprintf(stderr, "pthreads_attach: %s\n", tc_strerror(err));
		return 1;
	}
	long total = 0, cmin = count_of(0, base), cmax = cmin;
	for (int t = 0; t < p; t++) {
		long c = count_of(t, base);
		total += c;
		cmin = c < cmin ? c : cmin;
		cmax = c > cmax ? c : cmax;
	}
	s.capacity = total;
	s.out = calloc((size_t)total + 1, sizeof *s.out);
	struct worker *w = calloc((size_t)p, sizeof *w);
	if (!s.out || !w) {
		fprintf(stderr, "pthreads_attach: out of memory\n");
		return 1;
	}
	int started = 0;
	for (int t = 0; t < p; t++, started++) {
		w[t] = (struct worker){.s = &s, .rank = t};
		if (pthread_create(&w[t].th, NULL, worker_main, &w[t]) != 0) {
			fprintf(stderr, "pthreads_attach: pthread_create failed\n");
			tc_team_abort(s.team); /* the started ones return TC_EABORTED */
			break;
		}
	}
	for (int t = 0; t < started; t++)
		pthread_join(w[t].th, NULL);
	int failed = started < p;
	/* The sequential reference. */
	long off = 0;
	for (int t = 0; t < started; t++) {
		if (w[t].err) {
			fprintf(stderr, "pthreads_attach: worker %d: %s\n", t, tc_strerror(w[t].err));
			failed = 1;
			continue;
		}
		long c = count_of(t, base);
		if (w[t].offset != off || w[t].total != total)
			failed = 1;
		for (long i = 0; i < c && !failed; i++)
			if (s.out[off + i] != item(t, i)) {
				fprintf(stderr,
				        "pthreads_attach: item %ld of worker %d misplaced\n", i, t);
				failed = 1;
			}
		off += c;
	}
	int64_t tok = (int64_t)p * (p - 1) / 2;
	if (!failed && p > 1 && w[0].token != tok) {
		fprintf(stderr, "pthreads_attach: token %lld, expected %lld\n",
		        (long long)w[0].token, (long long)tok);
		failed = 1;
	}
	printf("pthreads_attach: %d pthreads on %s packed %ld items (%ld..%ld per worker); "
	       "token round the ring = %lld\n",
	       p, spec, total, cmin, cmax, (long long)w[0].token);
	printf("%s\n", failed ? "FAILED" : "ok: offsets, total, items and token as computed sequentially");
	tc_team_destroy(s.team);
	free(s.out);
	free(w);
	return failed;
}
