/* SPDX-License-Identifier: MIT */
/*
 * Synchronous sends (tc_ssend, tc_issend and their tagged forms): a send
 * is not complete before its receive is posted (the receiver posts it only
 * once the sender has tested the send and told it so by another message)
 * and is complete after, to a neighbour and to a rank that is not one, at
 * 0 bytes, 8 bytes and above single_copy_min; blocking pairs around a
 * ring; the order with standard sends of the same tag; cancelling one no
 * receive has claimed; sends to oneself; argument errors.  Threads and
 * fibres.  No time is measured.
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

static unsigned char pat(int src, int tag, size_t k)
{
	return (unsigned char)(src * 37 + tag * 11 + (int)k);
}

static void fill(unsigned char *b, int src, int tag, size_t n)
{
	for (size_t k = 0; k < n; k++)
		b[k] = pat(src, tag, k);
}

static int same(const unsigned char *b, int src, int tag, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (b[k] != pat(src, tag, k))
			return 0;
	return 1;
}

/* What a rank function checks: the line of the first failed check. */
struct arg {
	size_t bytes;
	int dst; /* the sender's destination (rank 0 sends) */
	_Atomic int bad_line;
	_Atomic int flag; /* cancel_fn: rank 0 has cancelled */
};

#define CHECK(a, cond)                                                                    \
	do {                                                                              \
		if (!(cond)) {                                                            \
			int zero_ = 0;                                                    \
			atomic_compare_exchange_strong(&(a)->bad_line, &zero_, __LINE__); \
			return 0;                                                         \
		}                                                                         \
	} while (0)

static void run_both(const char *spec, int (*fn)(struct tc_proc *, void *), size_t bytes, int dst)
{
	enum tc_exec ex[] = {TC_EXEC_THREADS, TC_EXEC_FIBRES};
	for (int e = 0; e < 2; e++) {
		struct tc_team *team = make(spec, ex[e]);
		struct arg a = {.bytes = bytes, .dst = dst};
		int err = tc_run(team, fn, &a);
		cr_assert_eq(err, 0, "%s %s %zu B to %d: %s (%s)", spec, e ? "fibres" : "threads",
		             bytes, dst, tc_strerror(err), tc_error_detail());
		cr_assert_eq(atomic_load(&a.bad_line), 0, "%s %s %zu B to %d: check at line %d failed",
		             spec, e ? "fibres" : "threads", bytes, dst, atomic_load(&a.bad_line));
		tc_team_destroy(team);
	}
}

/* ---- not complete before the receive is posted ---------------------------- */

/* Rank 0 starts a synchronous send (tag 5) to a->dst and tests it three
 * times: not done, and its status pending.  Then it says so to a->dst by a
 * standard message (tag 9), which is what a->dst waits for before it posts
 * the receive of tag 5; then the send completes, the data intact. */
static int pending_fn(struct tc_proc *proc, void *argp)
{
	struct arg *a = argp;
	const int me = tc_rank(proc);
	unsigned char *b = malloc(a->bytes + 1);
	if (me == 0) {
		tc_request r;
		fill(b, 0, 5, a->bytes);
		CHECK(a, tc_issend_tag(proc, a->dst, 5, b, a->bytes, &r) == 0);
		unsigned char notdone = 1;
		for (int k = 0; k < 3; k++) {
			int done = -1;
			CHECK(a, tc_test(proc, &r, &done) == 0);
			notdone &= done == 0;
		}
		tc_status st;
		CHECK(a, tc_request_status(&r, &st) == TC_EPENDING);
		CHECK(a, tc_send_tag(proc, a->dst, 9, &notdone, 1) == 0);
		CHECK(a, tc_wait(proc, &r, NULL) == 0);
		CHECK(a, tc_request_status(&r, &st) == 0 && st.source == a->dst && st.tag == 5 &&
		                 st.bytes == a->bytes);
		/* The receiver has taken it: its own test after says so. */
		unsigned char ok = 0;
		CHECK(a, tc_recv_tag(proc, a->dst, 10, &ok, 1, NULL) == 0 && ok == 1);
	} else if (me == a->dst) {
		unsigned char notdone = 0;
		CHECK(a, tc_recv_tag(proc, 0, 9, &notdone, 1, NULL) == 0);
		CHECK(a, notdone == 1);
		tc_status st;
		memset(b, 0xee, a->bytes + 1);
		CHECK(a, tc_recv_tag(proc, 0, 5, b, a->bytes + 1, &st) == 0);
		CHECK(a, st.source == 0 && st.tag == 5 && st.bytes == a->bytes);
		CHECK(a, same(b, 0, 5, a->bytes) && b[a->bytes] == 0xee);
		unsigned char ok = 1;
		CHECK(a, tc_send_tag(proc, 0, 10, &ok, 1) == 0);
	}
	free(b);
	return 0;
}

/* To a neighbour (1 on ring:4) and to a rank that is not one (2). */
Test(sync, pending_until_received, .timeout = 300)
{
	const size_t sizes[] = {0, 8, 5000};
	for (int z = 0; z < 3; z++) {
		run_both("ring:4", pending_fn, sizes[z], 1);
		run_both("ring:4", pending_fn, sizes[z], 2);
	}
}

/* ---- blocking pairs around a ring ------------------------------------------ */

/* Each rank sends to the rank a->dst places to its right by tc_ssend_tag and
 * receives from the one as far to its left; in each chain of ranks so
 * linked, the even positions send first and the odd ones receive first
 * (every chain's length is even here), so no send waits on a rank that is
 * itself sending. */
static int ring_fn(struct tc_proc *proc, void *argp)
{
	struct arg *a = argp;
	const int p = tc_size(proc), me = tc_rank(proc), d = a->dst;
	const int right = (me + d) % p, left = (me - d + p) % p;
	unsigned char *sb = malloc(a->bytes + 1), *rb = malloc(a->bytes + 1);
	fill(sb, me, 3, a->bytes);
	tc_status st;
	if ((me / d) % 2 == 0) {
		CHECK(a, tc_ssend_tag(proc, right, 3, sb, a->bytes) == 0);
		CHECK(a, tc_recv_tag(proc, left, 3, rb, a->bytes, &st) == 0);
	} else {
		CHECK(a, tc_recv_tag(proc, left, 3, rb, a->bytes, &st) == 0);
		CHECK(a, tc_ssend_tag(proc, right, 3, sb, a->bytes) == 0);
	}
	CHECK(a, st.source == left && st.bytes == a->bytes && same(rb, left, 3, a->bytes));
	free(sb);
	free(rb);
	return 0;
}

/* ring_fn with the odd positions' send untagged: tc_ssend sends tag 0. */
static int ring_untagged_fn(struct tc_proc *proc, void *argp)
{
	struct arg *a = argp;
	const int p = tc_size(proc), me = tc_rank(proc), d = a->dst;
	const int right = (me + d) % p, left = (me - d + p) % p;
	unsigned char *sb = malloc(a->bytes + 1), *rb = malloc(a->bytes + 1);
	fill(sb, me, 0, a->bytes);
	size_t got = 0;
	if ((me / d) % 2 == 0) {
		CHECK(a, tc_ssend(proc, right, sb, a->bytes) == 0);
		CHECK(a, tc_recv(proc, left, rb, a->bytes, &got) == 0);
	} else {
		CHECK(a, tc_recv(proc, left, rb, a->bytes, &got) == 0);
		CHECK(a, tc_ssend(proc, right, sb, a->bytes) == 0);
	}
	CHECK(a, got == a->bytes && same(rb, left, 0, a->bytes));
	free(sb);
	free(rb);
	return 0;
}

/* Neighbours (ring:6, 1 to the right) and routed (ring:8, 2 to the right:
 * two chains of four). */
Test(sync, blocking_ring, .timeout = 300)
{
	const size_t sizes[] = {0, 8, 1000, 1 << 16};
	for (int z = 0; z < 4; z++) {
		run_both("ring:6", ring_fn, sizes[z], 1);
		run_both("ring:8", ring_fn, sizes[z], 2);
		run_both("ring:6", ring_untagged_fn, sizes[z], 1);
		run_both("ring:8", ring_untagged_fn, sizes[z], 2);
	}
}

/* ---- the order with standard sends ----------------------------------------- */

/* Rank 0 sends a->dst five messages of tag 4, standard and synchronous in
 * turn and of several sizes (the synchronous ones 0 bytes and a->bytes);
 * a->dst receives them in the order sent. */
static int order_fn(struct tc_proc *proc, void *argp)
{
	struct arg *a = argp;
	const int me = tc_rank(proc);
	const size_t len[5] = {3, a->bytes, 0, 0, 4096};
	const int sync[5] = {0, 1, 0, 1, 0};
	unsigned char *b[5];
	for (int i = 0; i < 5; i++) {
		b[i] = malloc(len[i] + 1);
		fill(b[i], i, 4, len[i]);
	}
	if (me == 0) {
		tc_request r[5];
		for (int i = 0; i < 5; i++)
			CHECK(a, (sync[i] ? tc_issend_tag : tc_isend_tag)(proc, a->dst, 4, b[i],
			                                                  len[i], &r[i]) == 0);
		CHECK(a, tc_waitall(proc, 5, r) == 0);
	} else if (me == a->dst) {
		unsigned char *rb = malloc(8192);
		for (int i = 0; i < 5; i++) {
			tc_status st;
			CHECK(a, tc_recv_tag(proc, 0, 4, rb, 8192, &st) == 0);
			CHECK(a, st.bytes == len[i] && same(rb, i, 4, len[i]));
		}
		free(rb);
	}
	for (int i = 0; i < 5; i++)
		free(b[i]);
	return 0;
}

Test(sync, order_with_standard, .timeout = 300)
{
	run_both("ring:4", order_fn, 8, 1);
	run_both("ring:4", order_fn, 8, 2);
	run_both("ring:4", order_fn, 3000, 1);
	run_both("ring:4", order_fn, 3000, 2);
}

/* ---- cancelling one no receive has claimed ---------------------------------- */

/* Rank 0 starts a synchronous send of tag 6 to a->dst, which enters the
 * library only once rank 0 has cancelled it (a->flag): the cancel
 * succeeds and the wait says TC_ECANCELED.  Then a standard message of
 * the same tag is the one a->dst receives, and nothing else is left. */
static int cancel_fn(struct tc_proc *proc, void *argp)
{
	struct arg *a = argp;
	const int me = tc_rank(proc);
	unsigned char b[16];
	if (me == 0) {
		tc_request r;
		fill(b, 0, 6, sizeof b);
		CHECK(a, tc_issend_tag(proc, a->dst, 6, b, a->bytes, &r) == 0);
		CHECK(a, tc_cancel(proc, &r) == 0);
		CHECK(a, tc_wait(proc, &r, NULL) == TC_ECANCELED);
		atomic_store(&a->flag, 1);
		unsigned char two[2] = {2, 2};
		CHECK(a, tc_send_tag(proc, a->dst, 6, two, 2) == 0);
	} else if (me == a->dst) {
		/* Not in the library until the cancel is done (a fibre lets the
		 * others run; a thread waits on its own CPU). */
		for (long k = 0; !atomic_load(&a->flag); k++) {
			CHECK(a, k < 2000000000L);
			tc_yield(proc);
		}
		tc_status st;
		memset(b, 0, sizeof b);
		CHECK(a, tc_recv_tag(proc, 0, 6, b, sizeof b, &st) == 0);
		CHECK(a, st.bytes == 2 && b[0] == 2 && b[1] == 2);
		int flag = 1;
		CHECK(a, tc_iprobe(proc, TC_ANY_SOURCE, TC_ANY_TAG, &flag, NULL) == 0 && flag == 0);
	}
	return 0;
}

Test(sync, cancel_unclaimed, .timeout = 300)
{
	run_both("ring:4", cancel_fn, 0, 1);
	run_both("ring:4", cancel_fn, 8, 1);
	run_both("ring:4", cancel_fn, 0, 2);
	run_both("ring:4", cancel_fn, 8, 2);
}

/* ---- to oneself -------------------------------------------------------------- */

/* A blocking synchronous send to oneself is refused (the detail names the
 * deadlock); a nonblocking one is not complete until the rank's own receive
 * takes it: not after a probe that finds it, nor after a receive too small
 * for it; its cancel before any receive takes it back. */
static int self_fn(struct tc_proc *proc, void *argp)
{
	struct arg *a = argp;
	const int me = tc_rank(proc);
	const size_t n = a->bytes;
	unsigned char *b = malloc(n + 1), *rb = malloc(n + 1);
	fill(b, me, 7, n);
	CHECK(a, tc_ssend_tag(proc, me, 7, b, n) == TC_EINVAL);
	CHECK(a, strstr(tc_error_detail(), "deadlock") != NULL);
	CHECK(a, tc_ssend(proc, me, b, n) == TC_EINVAL);
	int flag = 1;
	CHECK(a, tc_iprobe(proc, me, TC_ANY_TAG, &flag, NULL) == 0 && flag == 0);

	tc_request r;
	int done = -1;
	CHECK(a, tc_issend_tag(proc, me, 7, b, n, &r) == 0);
	CHECK(a, tc_test(proc, &r, &done) == 0 && done == 0);
	tc_status st;
	CHECK(a, tc_iprobe(proc, me, 7, &flag, &st) == 0 && flag == 1 && st.bytes == n);
	CHECK(a, tc_test(proc, &r, &done) == 0 && done == 0);
	if (n) {
		CHECK(a, tc_recv_tag(proc, me, 7, rb, n - 1, &st) == TC_ETRUNCATE);
		CHECK(a, tc_test(proc, &r, &done) == 0 && done == 0);
	}
	memset(rb, 0, n + 1);
	CHECK(a, tc_recv_tag(proc, me, 7, rb, n + 1, &st) == 0);
	CHECK(a, st.source == me && st.tag == 7 && st.bytes == n && same(rb, me, 7, n));
	CHECK(a, tc_test(proc, &r, &done) == 0 && done == 1);

	/* A receive posted first takes it at once. */
	tc_request q;
	CHECK(a, tc_irecv_tag(proc, me, 8, rb, n, &q) == 0);
	CHECK(a, tc_issend_tag(proc, me, 8, b, n, &r) == 0);
	CHECK(a, tc_test(proc, &r, &done) == 0 && done == 1);
	CHECK(a, tc_wait(proc, &q, NULL) == 0);

	/* Cancelled before any receive: gone. */
	CHECK(a, tc_issend_tag(proc, me, 9, b, n, &r) == 0);
	CHECK(a, tc_cancel(proc, &r) == 0);
	CHECK(a, tc_wait(proc, &r, NULL) == TC_ECANCELED);
	CHECK(a, tc_iprobe(proc, me, TC_ANY_TAG, &flag, NULL) == 0 && flag == 0);
	free(b);
	free(rb);
	return 0;
}

Test(sync, to_oneself, .timeout = 300)
{
	run_both("complete:1", self_fn, 0, 0);
	run_both("ring:3", self_fn, 0, 0);
	run_both("ring:3", self_fn, 8, 0);
	run_both("ring:3", self_fn, 5000, 0);
}

/* ---- argument errors ---------------------------------------------------------- */

/* Those of tc_isend_tag: nothing sent (the peers' receives below take the
 * only message sent). */
static int args_fn(struct tc_proc *proc, void *argp)
{
	struct arg *a = argp;
	const int me = tc_rank(proc), p = tc_size(proc);
	unsigned char b[4] = {1, 2, 3, 4};
	tc_request r;
	CHECK(a, tc_issend_tag(NULL, 0, 0, b, 4, &r) == TC_EINVAL);
	CHECK(a, tc_ssend_tag(NULL, 0, 0, b, 4) == TC_EINVAL);
	CHECK(a, tc_issend_tag(proc, (me + 1) % p, 0, b, 4, NULL) == TC_EINVAL);
	CHECK(a, tc_issend_tag(proc, p, 0, b, 4, &r) == TC_ERANK);
	CHECK(a, tc_ssend_tag(proc, -1, 0, b, 4) == TC_ERANK);
	CHECK(a, tc_issend(proc, TC_ANY_SOURCE, b, 4, &r) == TC_ERANK);
	CHECK(a, tc_ssend(proc, TC_ANY_SOURCE, b, 4) == TC_ERANK);
	CHECK(a, tc_issend_tag(proc, (me + 1) % p, -1, b, 4, &r) == TC_EINVAL);
	CHECK(a, strstr(tc_error_detail(), "tag") != NULL);
	CHECK(a, tc_ssend_tag(proc, (me + 1) % p, TC_ANY_TAG, b, 4) == TC_EINVAL);
	CHECK(a, tc_issend_tag(proc, (me + 1) % p, 0, NULL, 4, &r) == TC_ENULLBUF);
	CHECK(a, tc_ssend(proc, (me + 1) % p, NULL, 4) == TC_ENULLBUF);
	CHECK(a, tc_issend(proc, (me + 1) % p, b, TC_MAX_MESSAGE + 1, &r) == TC_EOVERFLOW);
	CHECK(a, tc_ssend_tag(proc, (me + 1) % p, 0, b, TC_MAX_MESSAGE + 1) == TC_EOVERFLOW);
	/* A request still active is not started again. */
	tc_request q;
	CHECK(a, tc_issend_tag(proc, (me + 1) % p, 2, b, 4, &q) == 0);
	CHECK(a, tc_issend_tag(proc, (me + 1) % p, 2, b, 4, &q) == TC_EPENDING);
	unsigned char rb[8];
	tc_status st;
	CHECK(a, tc_recv_tag(proc, (me + p - 1) % p, TC_ANY_TAG, rb, sizeof rb, &st) == 0);
	CHECK(a, st.tag == 2 && st.bytes == 4 && rb[3] == 4);
	CHECK(a, tc_wait(proc, &q, NULL) == 0);
	int flag = 1;
	CHECK(a, tc_iprobe(proc, TC_ANY_SOURCE, TC_ANY_TAG, &flag, NULL) == 0 && flag == 0);
	return 0;
}

Test(sync, argument_errors, .timeout = 300)
{
	run_both("ring:4", args_fn, 0, 0);
	run_both("ring:2", args_fn, 0, 0);
}
