/* SPDX-License-Identifier: MIT */
/*
 * Point-to-point tests: a token walked over every topology that admits each p
 * of the matrix, an exchange with every neighbour, and every error case.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
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
			struct tour_arg a = {.walk = malloc((size_t)(2 * p) * sizeof(int)), .bytes = bytes};
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
			err = tc_irecv(proc, nb[i], rb + (size_t)i * a->bytes, a->bytes, &reqs[2 * i + 1]);
	}
	if (!err)
		err = tc_waitall(proc, 2 * deg, reqs);
	for (int i = 0; i < deg && !err; i++) {
		fill(want, a->bytes, nb[i], me);
		if (memcmp(want, rb + (size_t)i * a->bytes, a->bytes) || reqs[2 * i + 1].received != a->bytes)
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
		/* ring:6 - neighbours of 0 are 1 and 5. */
		if (tc_send(proc, 3, buf, 8) != TC_ENOTNEIGHBOR)
			return -100;
		if (tc_send(proc, 6, buf, 8) != TC_ERANK || tc_send(proc, -1, buf, 8) != TC_ERANK)
			return -101;
		if (tc_send(proc, 0, buf, 8) != TC_ESELF)
			return -102;
		if (tc_send(proc, 1, NULL, 8) != TC_ENULLBUF)
			return -103;
		if (tc_send(proc, 1, buf, TC_MAX_MESSAGE + 1) != TC_EOVERFLOW)
			return -104;
		if (tc_recv(proc, 1, NULL, 8, &got) != TC_ENULLBUF)
			return -105;
		if (tc_recv(proc, 2, buf, 8, &got) != TC_ENOTNEIGHBOR)
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
