/* SPDX-License-Identifier: MIT */
/*
 * Point-to-point tests: a token walked over every topology that admits each p
 * of the matrix, an exchange with every neighbour, and every error case.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "p2p/request.h" /* a request's received size, read after tc_waitall */
#include "topocoll.h"
#include "util.h"

static struct tc_team *make_team(const char *spec, enum tc_wait_policy pol)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.wait = pol;
	cfg.timeout_ms = 60000;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	return team;
}

/* ---- a token along the depth-first tour ------------------------------- */

struct tour_arg {
	int *walk;
	int len;
	size_t bytes; /* token size */
	_Atomic int visits;
};

static int tour_fn(struct tc_proc *proc, void *argp)
{
	struct tour_arg *a = argp;
	int me = tc_rank(proc);
	unsigned char *tok = calloc(1, a->bytes + 1);
	int err = 0;
	/* Step s moves the token from walk[s] to walk[s + 1]; each rank takes
	 * part in the steps that touch it, in order. */
	for (int s = 0; s + 1 < a->len && !err; s++) {
		int from = a->walk[s], to = a->walk[s + 1];
		if (me == from) {
			if (s == 0 && a->bytes)
				tok[0] = 0;
			err = tc_send(proc, to, tok, a->bytes);
		} else if (me == to) {
			size_t got;
			err = tc_recv(proc, from, tok, a->bytes, &got);
			if (!err && got != a->bytes)
				err = TC_EINVAL;
			if (!err && a->bytes) {
				if (tok[0] != (unsigned char)s)
					err = TC_EINVAL;
				tok[0]++;
				tok[a->bytes - 1] = (unsigned char)me;
			}
			atomic_fetch_add(&a->visits, 1);
		}
	}
	free(tok);
	return err;
}

static void walk_all(size_t bytes, enum tc_wait_policy pol)
{
	for (int k = 0; k < TC_TEST_NPS; k++) {
		int p = tc_test_ps[k];
		char specs[16][32];
		int ns = tc_test_specs_for(p, specs, 16);
		for (int i = 0; i < ns; i++) {
			struct tc_team *team = make_team(specs[i], pol);
			struct tour_arg a = {.walk = malloc((size_t)(2 * p) * sizeof(int)),
			                     .bytes = bytes};
			a.len = tc_test_tour(tc_team_topo(team), a.walk);
			cr_assert_eq(a.len, 2 * p - 1, "%s: tour covers every node", specs[i]);
			int err = tc_run(team, tour_fn, &a);
			cr_assert_eq(err, 0, "%s: %s", specs[i], tc_strerror(err));
			cr_assert_eq(atomic_load(&a.visits), a.len - 1, "%s", specs[i]);
			free(a.walk);
			tc_team_destroy(team);
		}
	}
}

Test(p2p, token_tour_every_topology_small, .timeout = 240)
{
	walk_all(8, TC_WAIT_AUTO);
}

Test(p2p, token_tour_every_topology_streamed_and_single_copy, .timeout = 240)
{
	walk_all(5000, TC_WAIT_AUTO);   /* streamed in packets */
	walk_all(40000, TC_WAIT_BLOCK); /* single copy */
}

Test(p2p, token_tour_zero_bytes, .timeout = 240)
{
	walk_all(0, TC_WAIT_YIELD);
}

/* ---- exchange with every neighbour ------------------------------------ */

struct xchg_arg {
	size_t bytes;
	_Atomic int bad;
};

static void fill(unsigned char *b, size_t n, int from, int to)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(from * 131 + to * 7 + i);
}

static int xchg_fn(struct tc_proc *proc, void *argp)
{
	struct xchg_arg *a = argp;
	const int *nb;
	int deg = tc_neighbors(proc, &nb);
	int me = tc_rank(proc);
	unsigned char *sb = malloc((size_t)deg * a->bytes + 1);
	unsigned char *rb = malloc((size_t)deg * a->bytes + 1);
	unsigned char *want = malloc(a->bytes + 1);
	tc_request *reqs = malloc((size_t)(2 * deg + 1) * sizeof *reqs);
	int err = 0;
	/* All sends and receives posted at once, then one waitall: must not
	 * deadlock whatever the sizes. */
	for (int i = 0; i < deg && !err; i++) {
		fill(sb + (size_t)i * a->bytes, a->bytes, me, nb[i]);
		err = tc_isend(proc, nb[i], sb + (size_t)i * a->bytes, a->bytes, &reqs[2 * i]);
		if (!err)
			err = tc_irecv(proc, nb[i], rb + (size_t)i * a->bytes, a->bytes,
			               &reqs[2 * i + 1]);
	}
	if (!err)
		err = tc_waitall(proc, 2 * deg, reqs);
	for (int i = 0; i < deg && !err; i++) {
		fill(want, a->bytes, nb[i], me);
		if (memcmp(want, rb + (size_t)i * a->bytes, a->bytes) ||
		    tc__req(&reqs[2 * i + 1])->received != a->bytes)
			atomic_fetch_add(&a->bad, 1);
	}
	/* And once more with blocking sendrecv, in a ring order over the
	 * neighbour list (send to nb[i], receive from nb[i]). */
	for (int i = 0; i < deg && !err; i++) {
		size_t got;
		err = tc_sendrecv(proc, nb[i], sb + (size_t)i * a->bytes, a->bytes, nb[i],
		                  rb + (size_t)i * a->bytes, a->bytes, &got);
		fill(want, a->bytes, nb[i], me);
		if (!err && (got != a->bytes || memcmp(want, rb + (size_t)i * a->bytes, a->bytes)))
			atomic_fetch_add(&a->bad, 1);
	}
	free(sb);
	free(rb);
	free(want);
	free(reqs);
	return err;
}

Test(p2p, exchange_with_every_neighbour, .timeout = 300)
{
	size_t sizes[] = {0, 7, 3000, 70000};
	for (int z = 0; z < 4; z++)
		for (int k = 0; k < TC_TEST_NPS; k++) {
			int p = tc_test_ps[k];
			if (sizes[z] > 3000 && p > 16)
				continue; /* complete:64 with 70 kB to each of 63 peers is slow under TSan */
			char specs[16][32];
			int ns = tc_test_specs_for(p, specs, 16);
			for (int i = 0; i < ns; i++) {
				struct tc_team *team = make_team(specs[i], TC_WAIT_AUTO);
				struct xchg_arg a = {.bytes = sizes[z]};
				int err = tc_run(team, xchg_fn, &a);
				cr_assert_eq(err, 0, "%s %zu: %s", specs[i], sizes[z], tc_strerror(err));
				cr_assert_eq(atomic_load(&a.bad), 0, "%s %zu", specs[i], sizes[z]);
				tc_team_destroy(team);
			}
		}
}

/* ---- errors ------------------------------------------------------------ */

static int errors_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	int me = tc_rank(proc);
	char buf[64], big[256];
	size_t got = 123;
	if (me == 0) {
		/* ring:6 - neighbours of 0 are 1 and 5; tags are 0.. or the
		 * receive's wildcard, and a send has no wildcard source. */
		if (tc_send_tag(proc, 1, -2, buf, 8) != TC_EINVAL ||
		    tc_send_tag(proc, 3, TC_ANY_TAG, buf, 8) != TC_EINVAL ||
		    tc_recv_tag(proc, 1, -7, buf, 8, NULL) != TC_EINVAL ||
		    tc_send(proc, TC_ANY_SOURCE, buf, 8) != TC_ERANK)
			return -100;
		if (tc_send(proc, 6, buf, 8) != TC_ERANK || tc_send(proc, -1, buf, 8) != TC_ERANK)
			return -101;
		if (tc_send_tag(proc, 0, -1, buf, 8) != TC_EINVAL) /* to oneself: checked alike */
			return -102;
		if (tc_send(proc, 1, NULL, 8) != TC_ENULLBUF)
			return -103;
		if (tc_send(proc, 1, buf, TC_MAX_MESSAGE + 1) != TC_EOVERFLOW)
			return -104;
		if (tc_recv(proc, 1, NULL, 8, &got) != TC_ENULLBUF)
			return -105;
		if (tc_recv_tag(proc, 6, 0, buf, 8, NULL) != TC_ERANK ||
		    tc_recv_tag(proc, 0, -7, buf, 8, NULL) != TC_EINVAL)
			return -106;
		if (tc_isend(proc, 1, buf, 8, NULL) != TC_EINVAL)
			return -107;
		/* NULL with size 0 is fine. */
		if (tc_send(proc, 1, NULL, 0) != 0)
			return -108;
		for (int i = 0; i < 200; i++)
			big[i] = (char)i;
		if (tc_send(proc, 1, big, 120) != 0) /* streamed */
			return -109;
		if (tc_send(proc, 5, big, 200) != 0) /* single copy (see config) */
			return -110;
	} else if (me == 1) {
		if (tc_recv(proc, 0, NULL, 0, &got) != 0 || got != 0)
			return -200;
		/* Truncation: nothing written, the message stays queued. */
		memset(buf, 0x5A, sizeof buf);
		got = 0;
		if (tc_recv(proc, 0, buf, 16, &got) != TC_ETRUNCATE || got != 120)
			return -201;
		for (size_t i = 0; i < sizeof buf; i++)
			if (buf[i] != 0x5A)
				return -202;
		if (tc_recv(proc, 0, big, sizeof big, &got) != 0 || got != 120)
			return -203;
		for (int i = 0; i < 120; i++)
			if (big[i] != (char)i)
				return -204;
	} else if (me == 5) {
		memset(buf, 0x5A, sizeof buf);
		if (tc_recv(proc, 0, buf, 16, &got) != TC_ETRUNCATE || got != 200)
			return -301;
		for (size_t i = 0; i < sizeof buf; i++)
			if (buf[i] != 0x5A)
				return -302;
		if (tc_recv(proc, 0, big, sizeof big, &got) != 0 || got != 200 || big[199] != (char)199)
			return -303;
	}
	return 0;
}

Test(p2p, error_codes, .timeout = 60)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:6";
	cfg.single_copy_min = 150; /* 120 bytes stream, 200 bytes go single copy */
	cfg.timeout_ms = 30000;
	struct tc_team *team;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	int err = tc_run(team, errors_fn, NULL);
	cr_assert_eq(err, 0, "rank check %d (%s)", err, tc_strerror(err));
	tc_team_destroy(team);
}

/* A rank that fails aborts the team: a peer blocked in tc_recv returns
 * TC_EABORTED instead of hanging, and tc_run reports the first error. */
static int abort_fn(struct tc_proc *proc, void *argp)
{
	_Atomic int *peer_err = argp;
	if (tc_rank(proc) == 0)
		return TC_EMISMATCH;
	char b[8];
	int err = tc_recv(proc, 0, b, sizeof b, NULL);
	atomic_store(peer_err, err);
	return err;
}

Test(p2p, failing_rank_aborts_waiters, .timeout = 60)
{
	enum tc_wait_policy pols[] = {TC_WAIT_AUTO, TC_WAIT_SPIN, TC_WAIT_YIELD, TC_WAIT_BLOCK};
	for (int k = 0; k < 4; k++) {
		struct tc_team *team = make_team("star:4", pols[k]);
		_Atomic int peer_err = 0;
		cr_assert_eq(tc_run(team, abort_fn, &peer_err), TC_EMISMATCH);
		cr_assert_eq(atomic_load(&peer_err), TC_EABORTED);
		/* The team is usable again afterwards. */
		struct xchg_arg a = {.bytes = 100};
		cr_assert_eq(tc_run(team, xchg_fn, &a), 0);
		cr_assert_eq(atomic_load(&a.bad), 0);
		tc_team_destroy(team);
	}
}

static int timeout_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	char b[8];
	if (tc_rank(proc) == 1)
		return tc_recv(proc, 0, b, sizeof b, NULL); /* nobody sends */
	return 0;
}

Test(p2p, wait_times_out, .timeout = 60)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "chain:2";
	cfg.timeout_ms = 200;
	struct tc_team *team;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	cr_assert_eq(tc_run(team, timeout_fn, NULL), TC_ETIMEDOUT);
	tc_team_destroy(team);
}

/* ---- a request started again while active ---------------------------- */

/* An active request given to tc_irecv or tc_isend again: TC_EPENDING with
 * the detail, the request left as it was (it completes with its own
 * message) and the queues whole (the next receive gets the next message);
 * the same for a single-copy send its receiver has not taken.  Once waited
 * for, it starts again.  A copy of an active request's bytes is storage,
 * not that request: a call starts a request there. */
static int reuse_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	const int me = tc_rank(proc);
	double x = -1, y = -1, one = 1, two = 2, three = 3;
	static char big[2][4096];
	tc_request r, s;
	if (me == 1) {
		/* Each go ahead comes after rank 0's refused calls: its
		 * receive, and its big send, are still outstanding then. */
		int err = tc_recv_tag(proc, 0, 8, &x, sizeof x, NULL);
		err = err ? err : tc_send(proc, 0, &one, sizeof one);
		err = err ? err : tc_send(proc, 0, &two, sizeof two);
		err = err ? err : tc_send(proc, 0, &three, sizeof three);
		err = err ? err : tc_recv_tag(proc, 0, 7, &x, sizeof x, NULL);
		err = err ? err : tc_recv(proc, 0, big[1], sizeof big[1], NULL);
		return err ? err : big[1][4095] == 9 ? 0 : -10;
	}
	if (tc_irecv(proc, 1, &x, sizeof x, &r) != 0)
		return -1;
	tc_request copy;
	memcpy(&copy, &r, sizeof copy);
	if (tc_irecv(proc, 1, &y, sizeof y, &copy) != 0 || tc_cancel(proc, &copy) != 0)
		return -12;
	if (tc_irecv(proc, 1, &y, sizeof y, &r) != TC_EPENDING ||
	    !strstr(tc_error_detail(), "tc_irecv: the request is still active"))
		return -2;
	if (tc_isend(proc, 1, &one, sizeof one, &r) != TC_EPENDING ||
	    !strstr(tc_error_detail(), "tc_isend: the request is still active"))
		return -3;
	if (tc_send_tag(proc, 1, 8, &one, sizeof one) != 0)
		return -11;
	if (tc_wait(proc, &r, NULL) != 0 || x != 1 || y != -1)
		return -4;
	if (tc_recv(proc, 1, &y, sizeof y, NULL) != 0 || y != 2)
		return -5;
	if (tc_irecv(proc, 1, &x, sizeof x, &r) != 0 || tc_wait(proc, &r, NULL) != 0 || x != 3)
		return -6; /* started again once complete */
	big[0][4095] = 9;
	if (tc_isend(proc, 1, big[0], sizeof big[0], &s) != 0)
		return -7;
	if (tc_isend(proc, 1, &one, sizeof one, &s) != TC_EPENDING)
		return -8;
	if (tc_send_tag(proc, 1, 7, &one, sizeof one) != 0 || tc_wait(proc, &s, NULL) != 0)
		return -9;
	return 0;
}

/* A request a run left active (its rank returned an error, which aborted
 * the team) is storage like any other in the next run: started, not
 * refused. */
static tc_request left_active;

static int left_fn(struct tc_proc *proc, void *argp)
{
	const int *run = argp;
	double x = -1, five = 5;
	if (tc_rank(proc) == 1)
		return *run ? tc_send(proc, 0, &five, sizeof five) : 0;
	int err = tc_irecv(proc, 1, &x, sizeof x, &left_active);
	if (!*run)
		return err ? err : TC_EINVAL; /* left active: the team is aborted */
	err = err ? err : tc_wait(proc, &left_active, NULL);
	return err ? err : x == 5 ? 0 : -1;
}

Test(p2p, active_request_not_started_again, .timeout = 60)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "chain:2";
	cfg.single_copy_min = 1024;
	cfg.timeout_ms = 30000;
	struct tc_team *team;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	int err = tc_run(team, reuse_fn, NULL);
	cr_assert_eq(err, 0, "rank check %d (%s)", err, tc_strerror(err));
	int run = 0;
	cr_assert_eq(tc_run(team, left_fn, &run), TC_EINVAL);
	run = 1;
	err = tc_run(team, left_fn, &run);
	cr_assert_eq(err, 0, "the next run: %d (%s)", err, tc_strerror(err));
	tc_team_destroy(team);
}

static int stats_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	char b[100] = {0};
	int err = 0;
	if (tc_rank(proc) == 0)
		for (int i = 0; i < 3 && !err; i++)
			err = tc_send(proc, 1, b, 100);
	else
		for (int i = 0; i < 3 && !err; i++)
			err = tc_recv(proc, 0, b, 100, NULL);
	return err;
}

Test(p2p, stats_count_messages_and_bytes, .timeout = 30)
{
	struct tc_team *team = make_team("chain:2", TC_WAIT_AUTO);
	cr_assert_eq(tc_run(team, stats_fn, NULL), 0);
	struct tc_stats st;
	tc_team_stats(team, &st);
	cr_assert_eq(st.msgs_sent, 3);
	cr_assert_eq(st.bytes_sent, 300);
	cr_assert_eq(st.msgs_recv, 3);
	cr_assert_eq(st.bytes_recv, 300);
	cr_assert_eq(st.hops, 3);
	/* Default model t_s = 1000 ns, t_w = 1 ns/B: each 100-byte message keeps
	 * the sender's and the receiver's port busy 1100 ns. */
	cr_assert_eq(st.busy_ps, 2 * 3 * 1100000);
	tc_team_destroy(team);
}

/* ---- blocking calls behind pending requests ----------------------------- */

/* tc_send and tc_recv take a request-free path when their link has nothing
 * queued; with requests pending on the link they must still keep its order:
 * a message goes after the ones posted before it, and a blocking receive
 * gets the message after the ones pending receives are waiting for.  On
 * complete:3, rank 2 tells rank 0 when rank 1's receive is posted, so that
 * the data arrive behind a pending receive. */
struct order_arg {
	_Atomic int bad;
};

static int order_fn(struct tc_proc *proc, void *argp)
{
	struct order_arg *a = argp;
	enum { BIG = 64 << 10 };
	unsigned char *big = malloc(BIG);
	uint64_t v[4] = {11, 22, 33, 44}, got[4] = {0}, token = 0;
	tc_request r[3];
	int err = 0;
	if (tc_rank(proc) == 0) {
		memset(big, 0x5a, BIG);
		err = tc_recv(proc, 2, &token, 8, NULL); /* rank 1's receive is posted */
		if (!err)
			err = tc_send(proc, 1, &v[0], 8);
		if (!err)
			err = tc_send(proc, 1, &v[1], 8);
		/* A big message (single copy: held until the receiver copies
		 * it), then small ones, queued and blocking. */
		if (!err)
			err = tc_isend(proc, 1, big, BIG, &r[0]);
		if (!err)
			err = tc_isend(proc, 1, &v[2], 8, &r[1]);
		if (!err)
			err = tc_send(proc, 1, &v[3], 8);
		if (!err)
			err = tc_waitall(proc, 2, r);
	} else if (tc_rank(proc) == 1) {
		err = tc_irecv(proc, 0, &got[0], 8, &r[2]);
		if (!err)
			err = tc_send(proc, 2, &token, 8);
		/* Let both messages arrive while the first receive is pending
		 * (nothing progresses it meanwhile). */
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
		if (!err)
			err = tc_recv(proc, 0, &got[1], 8, NULL);
		if (!err)
			err = tc_wait(proc, &r[2], NULL);
		if (!err)
			err = tc_irecv(proc, 0, big, BIG, &r[0]);
		if (!err)
			err = tc_irecv(proc, 0, &got[2], 8, &r[1]);
		if (!err)
			err = tc_recv(proc, 0, &got[3], 8, NULL);
		if (!err)
			err = tc_waitall(proc, 2, r);
		if (!err && (got[0] != 11 || got[1] != 22 || got[2] != 33 || got[3] != 44 ||
		             big[0] != 0x5a || big[BIG - 1] != 0x5a))
			atomic_fetch_add(&a->bad, 1);
	} else {
		err = tc_recv(proc, 1, &token, 8, NULL);
		if (!err)
			err = tc_send(proc, 0, &token, 8);
	}
	free(big);
	return err;
}

Test(p2p, blocking_calls_keep_the_order_of_pending_requests, .timeout = 60)
{
	static const enum tc_wait_policy pols[] = {TC_WAIT_AUTO, TC_WAIT_BLOCK};
	for (int k = 0; k < 2; k++) {
		struct tc_team *team = make_team("complete:3", pols[k]);
		for (int rep = 0; rep < 200; rep++) {
			struct order_arg a = {0};
			int err = tc_run(team, order_fn, &a);
			cr_assert_eq(err, 0, "%s", tc_strerror(err));
			cr_assert_eq(atomic_load(&a.bad), 0, "messages out of order");
		}
		tc_team_destroy(team);
	}
}

/* ---- point-to-point and collective messages on one link --------------- */

/* Point-to-point and collective traffic on one link do not disturb each
 * other: a receive posted before a collective is matched by the message
 * sent after it (the collective's messages pass it), and a message sent
 * before a collective its receiver makes first is taken aside by the
 * collective and received afterwards, in order. */
struct mix_arg {
	size_t bytes;
	int order; /* 0: receive posted before the collective, sent after;
	              1: sent (nonblocking) before, received after */
	int rc[2], rc_coll[2];
	int64_t sum[2];
	size_t got[2];
	int bad[2];
};

static void mix_fill(unsigned char *b, size_t n, int salt)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 7 + (size_t)salt);
}

static int mix_fn(struct tc_proc *proc, void *argp)
{
	struct mix_arg *a = argp;
	const int me = tc_rank(proc);
	const size_t n = a->bytes;
	unsigned char *m1 = malloc(n + 1), *m2 = malloc(n + 1);
	mix_fill(m1, n, 1);
	mix_fill(m2, n, 2);
	int64_t v = me + 1;
	tc_request rq[2];
	int err = 0;
	if (a->order == 0) {
		if (me == 1) {
			memset(m1, 0, n);
			err = tc_irecv(proc, 0, m1, n, &rq[0]);
		}
		a->rc_coll[me] = tc_allreduce(proc, &v, &a->sum[me], 1, TC_INT64, TC_OP_SUM, NULL);
		if (me == 0 && !err)
			err = tc_send(proc, 1, m1, n);
		if (me == 1 && !err) {
			err = tc_wait(proc, &rq[0], &a->got[me]);
			unsigned char *e = malloc(n + 1);
			mix_fill(e, n, 1);
			a->bad[me] = memcmp(m1, e, n) != 0;
			free(e);
		}
	} else {
		/* Two messages ahead of the collective's on rank 0's side. */
		if (me == 0) {
			err = tc_isend(proc, 1, m1, n, &rq[0]);
			if (!err)
				err = tc_isend(proc, 1, m2, n, &rq[1]);
		}
		a->rc_coll[me] = tc_allreduce(proc, &v, &a->sum[me], 1, TC_INT64, TC_OP_SUM, NULL);
		if (me == 0 && !err)
			err = tc_waitall(proc, 2, rq);
		if (me == 1) {
			unsigned char *e = malloc(n + 1);
			for (int k = 0; k < 2 && !err; k++) {
				memset(m1, 0, n);
				err = tc_recv(proc, 0, m1, n, &a->got[me]);
				mix_fill(e, n, k + 1);
				a->bad[me] |= !err && memcmp(m1, e, n) != 0;
			}
			free(e);
		}
	}
	a->rc[me] = err;
	free(m1);
	free(m2);
	return 0;
}

Test(p2p, user_and_collective_messages_on_one_link, .timeout = 300)
{
	static const size_t sizes[] = {0, 8, 1016, 2400, 65536};
	/* The sanitizer builds (TC_TEST_SCALE) run each path once: 8 B and
	 * 64 KiB with the check on; the plain build every case. */
	const bool scaled = getenv("TC_TEST_SCALE") != NULL;
	for (int exec = 0; exec < 2; exec++)
		for (int check = 0; check < (scaled ? 1 : 2); check++)
			for (int streamed = 0; streamed < 2; streamed++)
				for (size_t i = scaled; i < sizeof sizes / sizeof *sizes;
				     i += scaled ? 3 : 1)
					for (int order = 0; order < 2; order++) {
						struct tc_team_config cfg;
						tc_team_config_default(&cfg);
						cfg.topology = "complete:2";
						cfg.exec = exec ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
						cfg.no_mismatch_check = check;
						if (streamed)
							cfg.single_copy_min = SIZE_MAX;
						cfg.timeout_ms = 20000; /* a hang fails as TC_ETIMEDOUT */
						struct tc_team *team;
						cr_assert_eq(tc_team_create(&cfg, &team), 0);
						struct mix_arg a = {.bytes = sizes[i], .order = order};
						cr_assert_eq(tc_run(team, mix_fn, &a), 0);
						for (int r = 0; r < 2; r++) {
							cr_assert_eq(a.rc_coll[r], 0,
							             "%zu B order %d check %d streamed %d exec %d "
							             "rank %d: allreduce %s",
							             sizes[i], order, !check,
							             streamed, exec, r,
							             tc_err_name(a.rc_coll[r]));
							cr_assert_eq(a.sum[r], 3);
							cr_assert_eq(a.rc[r], 0,
							             "%zu B order %d check %d streamed %d exec %d "
							             "rank %d: %s",
							             sizes[i], order, !check, streamed,
							             exec, r, tc_err_name(a.rc[r]));
						}
						cr_assert_eq(a.got[1], sizes[i]);
						cr_assert(!a.bad[1], "%zu B order %d: wrong bytes",
						          sizes[i], order);
						tc_team_destroy(team);
					}
}

/* ---- cancelling a single-copy send -------------------------------------- */

/* A 64 KiB send (single copy: its descriptor is in the channel) that no
 * receive has touched is cancelled; the receiver never sees it, gets the
 * next message, and the rank can detach. */
Test(p2p, cancel_untouched_single_copy_send, .timeout = 60)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:2";
	cfg.timeout_ms = 20000;
	struct tc_team *t;
	cr_assert_eq(tc_team_create(&cfg, &t), 0);
	struct tc_proc *p0, *p1;
	cr_assert_eq(tc_attach(t, 0, &p0), 0);
	cr_assert_eq(tc_attach(t, 1, &p1), 0);
	size_t n = 64 << 10;
	unsigned char *big = malloc(n), *in = calloc(1, n);
	memset(big, 0xab, n);
	tc_request s, r;
	cr_assert_eq(tc_isend(p0, 1, big, n, &s), 0);
	cr_assert_eq(tc_cancel(p0, &s), 0);
	cr_assert_eq(tc_wait(p0, &s, NULL), TC_ECANCELED);
	int done = 0;
	cr_assert_eq(tc_test(p0, &s, &done), TC_ECANCELED);
	cr_assert(done);
	/* The next message is what rank 1 receives. */
	uint64_t v = 42;
	cr_assert_eq(tc_send(p0, 1, &v, sizeof v), 0);
	size_t got = 0;
	cr_assert_eq(tc_recv(p1, 0, in, n, &got), 0);
	cr_assert_eq(got, sizeof v);
	cr_assert_eq(memcmp(in, &v, sizeof v), 0);
	/* A second one cancelled behind a posted-then-cancelled receive, and one
	 * that a receive takes: that one completes. */
	cr_assert_eq(tc_irecv(p1, 0, in, n, &r), 0);
	cr_assert_eq(tc_cancel(p1, &r), 0);
	cr_assert_eq(tc_isend(p0, 1, big, n, &s), 0);
	cr_assert_eq(tc_cancel(p0, &s), 0);
	cr_assert_eq(tc_isend(p0, 1, big, n, &s), 0);
	cr_assert_eq(tc_recv(p1, 0, in, n, &got), 0);
	cr_assert_eq(got, n);
	cr_assert_eq(memcmp(in, big, n), 0);
	cr_assert_eq(tc_cancel(p0, &s), 0); /* complete already: left as it is */
	cr_assert_eq(tc_wait(p0, &s, NULL), 0);
	cr_assert_eq(tc_detach(p0), 0);
	cr_assert_eq(tc_detach(p1), 0);
	free(big);
	free(in);
	tc_team_destroy(t);
}

/* A cancel racing a receive: either the send is cancelled and the receiver
 * gets only the marker behind it, or the cancel is refused (TC_EPENDING),
 * the send completes and the receiver gets all of it, never part. */
enum { RACE_ROUNDS = 200 };
struct race_arg {
	size_t bytes;
	int cancelled[RACE_ROUNDS], received[RACE_ROUNDS], bad[RACE_ROUNDS];
	int rc[2];
};

static int race_fn(struct tc_proc *proc, void *argp)
{
	struct race_arg *a = argp;
	const size_t n = a->bytes;
	unsigned char *buf = malloc(n);
	int err = 0;
	for (int i = 0; i < RACE_ROUNDS && !err; i++) {
		if (tc_rank(proc) == 0) {
			memset(buf, i + 1, n);
			tc_request s;
			err = tc_isend(proc, 1, buf, n, &s);
			if (err)
				break;
			if (i % 3) { /* let the receiver start now and then */
				struct timespec ts = {0, (i % 5) * 2000};
				nanosleep(&ts, NULL);
			}
			int c = tc_cancel(proc, &s);
			int w = tc_wait(proc, &s, NULL);
			a->cancelled[i] = w == TC_ECANCELED;
			if (c != 0 && c != TC_EPENDING)
				err = c;
			else if (w != 0 && w != TC_ECANCELED)
				err = w;
			uint32_t mark = (uint32_t)i;
			if (!err)
				err = tc_send(proc, 1, &mark, sizeof mark);
		} else {
			size_t got = 0;
			err = tc_recv(proc, 0, buf, n, &got);
			if (!err && got == n) {
				a->received[i] = 1;
				for (size_t k = 0; k < n; k++)
					a->bad[i] |= buf[k] != (unsigned char)(i + 1);
				err = tc_recv(proc, 0, buf, n, &got);
			}
			if (!err && (got != sizeof(uint32_t) || memcmp(buf, &i, sizeof i) != 0))
				a->bad[i] = 1;
		}
	}
	a->rc[tc_rank(proc)] = err;
	free(buf);
	return 0;
}

Test(p2p, cancel_races_a_receive, .timeout = 120)
{
	for (int exec = 0; exec < 2; exec++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = "complete:2";
		cfg.exec = exec ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
		cfg.timeout_ms = 20000;
		struct tc_team *t;
		cr_assert_eq(tc_team_create(&cfg, &t), 0);
		struct race_arg *a = calloc(1, sizeof *a);
		a->bytes = 64 << 10;
		cr_assert_eq(tc_run(t, race_fn, a), 0);
		cr_assert_eq(a->rc[0], 0, "%s", tc_err_name(a->rc[0]));
		cr_assert_eq(a->rc[1], 0, "%s", tc_err_name(a->rc[1]));
		int nc = 0;
		for (int i = 0; i < RACE_ROUNDS; i++) {
			cr_assert(!a->bad[i], "round %d: wrong bytes", i);
			cr_assert_eq(a->received[i], !a->cancelled[i], "round %d", i);
			nc += a->cancelled[i];
		}
		cr_assert_gt(nc, 0);
		free(a);
		tc_team_destroy(t);
	}
}
