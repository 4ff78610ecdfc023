/* SPDX-License-Identifier: MIT */
/*
 * Messages to oneself (MPI_Send to one's own rank): a blocking send with
 * no receive posted completes (buffered), whatever its size; receives
 * posted first, tags, wildcards, probes and the order of sending hold as
 * for any sender; tc_sendrecv with oneself; messages to oneself mixed
 * with a neighbour's; no modelled time.  Threads and fibres, several
 * topologies and sizes.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

static struct tc_team *make(const char *spec, enum tc_exec exec)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	cfg.timeout_ms = 60000;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	return team;
}

static unsigned char pat(int me, int tag, size_t k)
{
	return (unsigned char)(me * 29 + tag * 11 + (int)k);
}

static void fill(unsigned char *b, int me, int tag, size_t n)
{
	for (size_t k = 0; k < n; k++)
		b[k] = pat(me, tag, k);
}

static int same(const unsigned char *b, int me, int tag, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (b[k] != pat(me, tag, k))
			return 0;
	return 1;
}

static const char *const specs[] = {"complete:1", "ring:2", "ring:5", "hypercube:3", "torus:3x3"};
static const size_t sizes[] = {0, 1, 7, 64, 1000, 1 << 20};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

/* ---- blocking sends before any receive, taken by tag and wildcard -------- */

/* Three blocking sends to oneself (tags 1, 2, 3, every size at once: the
 * largest beyond the single-copy threshold), then receives: tag 3 first,
 * then any tag twice, which takes 1 then 2 (the order sent). */
static int buffered_fn(struct tc_proc *proc, void *argp)
{
	size_t n = *(size_t *)argp;
	int me = tc_rank(proc);
	unsigned char *s = malloc(3 * n + 1), *r = malloc(n + 1);
	int rc = 0;
	tc_time_t c0 = tc_clock(proc);
	for (int tag = 1; tag <= 3 && !rc; tag++) {
		fill(s + (size_t)(tag - 1) * n, me, tag, n);
		if (tc_send_tag(proc, me, tag, s + (size_t)(tag - 1) * n, n) != 0)
			rc = -1;
	}
	/* The sender's buffers are free again: overwrite them. */
	memset(s, 0xee, 3 * n + 1);
	tc_status st;
	if (!rc && (tc_recv_tag(proc, me, 3, r, n, &st) != 0 || st.source != me || st.tag != 3 ||
	            st.bytes != n || !same(r, me, 3, n)))
		rc = -2;
	for (int tag = 1; tag <= 2 && !rc; tag++)
		if (tc_recv_tag(proc, TC_ANY_SOURCE, TC_ANY_TAG, r, n, &st) != 0 ||
		    st.source != me || st.tag != tag || st.bytes != n || !same(r, me, tag, n))
			rc = -3 - tag;
	/* No link crossed: the model charges nothing. */
	if (!rc && tc_clock(proc) != c0)
		rc = -6;
	free(s);
	free(r);
	return rc;
}

Test(self, blocking_send_buffered, .timeout = 300)
{
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
			for (int z = 0; z < NSIZES; z++) {
				size_t n = sizes[z];
				struct tc_team *team =
				        make(specs[i], e ? TC_EXEC_FIBRES : TC_EXEC_THREADS);
				int rc = tc_run(team, buffered_fn, &n);
				cr_assert_eq(rc, 0, "%s %s %zu bytes: %d (%s)", specs[i],
				             e ? "fibres" : "threads", n, rc, tc_error_detail());
				tc_team_destroy(team);
			}
}

/* ---- receives posted first, sendrecv, probes, a neighbour's messages too -- */

struct mix_arg {
	size_t n;
};

/* A receive from oneself and one from any source posted first; the
 * neighbour (me + 1) sends tag 9, we send ourselves tags 4 and 9; then
 * tc_sendrecv with oneself; then tc_iprobe/tc_probe find a message to
 * oneself, and the receive that follows takes it. */
static int mix_fn(struct tc_proc *proc, void *argp)
{
	size_t n = ((struct mix_arg *)argp)->n;
	int me = tc_rank(proc), p = tc_size(proc);
	int right = (me + 1) % p, left = (me + p - 1) % p;
	unsigned char *s4 = malloc(n + 1), *s9 = malloc(n + 1);
	unsigned char *r4 = malloc(n + 1), *r9 = malloc(n + 1), *rn = malloc(n + 1);
	int rc = 0;
	tc_request q[4];
	tc_status st;
	fill(s4, me, 4, n);
	fill(s9, me, 9, n);
	/* Posted first: from oneself with tag 4; from any source with tag 9. */
	if (tc_irecv_tag(proc, me, 4, r4, n, &q[0]) ||
	    tc_irecv_tag(proc, TC_ANY_SOURCE, 9, r9, n, &q[1]))
		rc = -1;
	if (!rc && (tc_isend_tag(proc, me, 9, s9, n, &q[2]) || tc_isend_tag(proc, me, 4, s4, n, &q[3])))
		rc = -2;
	if (!rc && tc_waitall(proc, 4, q))
		rc = -3;
	if (!rc &&
	    (tc_request_status(&q[0], &st) || st.source != me || st.tag != 4 || !same(r4, me, 4, n)))
		rc = -4;
	if (!rc &&
	    (tc_request_status(&q[1], &st) || st.source != me || st.tag != 9 || !same(r9, me, 9, n)))
		rc = -5;
	/* A neighbour's message and one to oneself, both tag 9, taken by
	 * source (oneself first, though the neighbour's may be there first). */
	if (p > 1) {
		unsigned char *m = malloc(n + 1);
		fill(m, me, 9, n);
		/* Every rank's receives above are complete before any
		 * neighbour's message is sent. */
		if (!rc && tc_barrier(proc, NULL))
			rc = -6;
		if (!rc && (tc_isend_tag(proc, right, 9, m, n, &q[0]) || tc_send_tag(proc, me, 9, s9, n)))
			rc = -6;
		if (!rc &&
		    (tc_recv_tag(proc, me, 9, r9, n, &st) || st.source != me || !same(r9, me, 9, n)))
			rc = -7;
		if (!rc && (tc_recv_tag(proc, TC_ANY_SOURCE, 9, rn, n, &st) || st.source != left ||
		            !same(rn, left, 9, n)))
			rc = -8;
		if (!rc && tc_wait(proc, &q[0], NULL))
			rc = -9;
		free(m);
	}
	/* tc_sendrecv with oneself. */
	size_t got = 0;
	if (!rc && (tc_sendrecv(proc, me, s4, n, me, r4, n, &got) || got != n || !same(r4, me, 4, n)))
		rc = -10;
	/* Probes: the message to oneself is found, by source and by wildcard,
	 * with its size, and the receive after takes it. */
	int flag = 0;
	if (!rc && (tc_iprobe(proc, me, 5, &flag, &st) || flag))
		rc = -11; /* nothing yet */
	if (!rc && tc_send_tag(proc, me, 5, s4, n))
		rc = -12;
	if (!rc && (tc_iprobe(proc, me, TC_ANY_TAG, &flag, &st) || !flag || st.source != me ||
	            st.tag != 5 || st.bytes != n))
		rc = -13;
	if (!rc && (tc_probe(proc, TC_ANY_SOURCE, 5, &st) || st.source != me || st.bytes != n))
		rc = -14;
	memset(r4, 0, n + 1);
	if (!rc && (tc_recv_tag(proc, st.source, st.tag, r4, n, &st) || !same(r4, me, 4, n)))
		rc = -15;
	if (!rc && (tc_iprobe(proc, me, TC_ANY_TAG, &flag, &st) || flag))
		rc = -16; /* taken */
	/* Truncation: a message to oneself larger than the receive stays for
	 * a larger one. */
	if (!rc && n &&
	    (tc_send_tag(proc, me, 6, s4, n) || tc_recv_tag(proc, me, 6, r4, n - 1, &st) != TC_ETRUNCATE ||
	     tc_recv_tag(proc, me, 6, r4, n, &st) || !same(r4, me, 4, n)))
		rc = -17;
	free(s4);
	free(s9);
	free(r4);
	free(r9);
	free(rn);
	return rc;
}

Test(self, posted_first_sendrecv_probe, .timeout = 300)
{
	for (int e = 0; e < 2; e++)
		for (size_t i = 0; i < sizeof specs / sizeof *specs; i++)
			for (int z = 0; z < NSIZES; z++) {
				struct mix_arg a = {.n = sizes[z]};
				struct tc_team *team =
				        make(specs[i], e ? TC_EXEC_FIBRES : TC_EXEC_THREADS);
				int rc = tc_run(team, mix_fn, &a);
				cr_assert_eq(rc, 0, "%s %s %zu bytes: %d (%s)", specs[i],
				             e ? "fibres" : "threads", a.n, rc, tc_error_detail());
				tc_team_destroy(team);
			}
}

/* ---- many ranks on few CPUs: a loop of messages to oneself and around ---- */

static int many_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	int me = tc_rank(proc), p = tc_size(proc);
	for (int it = 0; it < 20; it++) {
		int v = me * 1000 + it, w = -1, x = -1;
		if (tc_send_tag(proc, me, it, &v, sizeof v) ||
		    tc_send_tag(proc, (me + 1) % p, it, &v, sizeof v))
			return -1;
		if (tc_recv_tag(proc, TC_ANY_SOURCE, it, &w, sizeof w, NULL) ||
		    tc_recv_tag(proc, TC_ANY_SOURCE, it, &x, sizeof x, NULL))
			return -2;
		int from_left = ((me + p - 1) % p) * 1000 + it;
		if (!((w == v && x == from_left) || (x == v && w == from_left)))
			return -3;
	}
	return 0;
}

Test(self, many_ranks, .timeout = 300)
{
	for (int e = 0; e < 2; e++) {
		struct tc_team *team = make("ring:64", e ? TC_EXEC_FIBRES : TC_EXEC_THREADS);
		int rc = tc_run(team, many_fn, NULL);
		cr_assert_eq(rc, 0, "%s: %d (%s)", e ? "fibres" : "threads", rc, tc_error_detail());
		tc_team_destroy(team);
	}
}
