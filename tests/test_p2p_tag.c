/* SPDX-License-Identifier: MIT */
/*
 * Point-to-point between any two ranks, with tags: every pair of ranks on
 * every topology kind (threads and fibres), wildcards, the order per
 * source, many requests outstanding, truncation, cancelling a routed send,
 * and the modelled time of a routed message.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

static struct tc_team *make(const char *spec, enum tc_exec exec, size_t scm)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	cfg.timeout_ms = 60000;
	if (scm)
		cfg.single_copy_min = scm;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	return team;
}

/* The byte k of the message src sends to dst with tag tag. */
static unsigned char pat(int src, int dst, int tag, size_t k)
{
	return (unsigned char)(src * 31 + dst * 7 + tag * 13 + (int)k);
}
static int tag_of(int src, int dst)
{
	return (src * 5 + dst * 3) % 7;
}

/* ---- every pair: each rank sends one message to every other -------------- */

struct pairs_arg {
	size_t bytes;
	_Atomic int bad;
};

/* Receives: from a source with its tag, from a source with any tag, then
 * (posted last, so that they take only what the others leave) from any
 * source with any tag; each status must name the sender and its tag. */
static int pairs_fn(struct tc_proc *proc, void *argp)
{
	struct pairs_arg *a = argp;
	int p = tc_size(proc), me = tc_rank(proc), n = p - 1, err = 0;
	if (!n)
		return 0;
	tc_request *req = calloc((size_t)(2 * n), sizeof *req);
	unsigned char *sb = malloc((size_t)n * a->bytes + 1), *rb = malloc((size_t)n * a->bytes + 1);
	int *srcof = calloc((size_t)n, sizeof *srcof);
	int k = 0;
	for (int mode = 0; mode < 3; mode++)
		for (int j = 1; j <= n; j++) {
			int src = (me + j) % p;
			if ((me + j) % 3 != mode)
				continue;
			int s = mode == 2 ? TC_ANY_SOURCE : src;
			int t = mode == 0 ? tag_of(src, me) : TC_ANY_TAG;
			srcof[k] = s;
			err = err ? err
			          : tc_irecv_tag(proc, s, t, rb + (size_t)k * a->bytes, a->bytes,
			                         &req[k]);
			k++;
		}
	for (int j = 1; j <= n; j++) {
		int dst = (me + p - j) % p; /* another order than the receives' */
		unsigned char *m = sb + (size_t)(j - 1) * a->bytes;
		for (size_t b = 0; b < a->bytes; b++)
			m[b] = pat(me, dst, tag_of(me, dst), b);
		err = err ? err
		          : tc_isend_tag(proc, dst, tag_of(me, dst), m, a->bytes, &req[n + j - 1]);
	}
	if (!err)
		err = tc_waitall(proc, 2 * n, req);
	char *seen = calloc((unsigned)p, 1);
	for (int i = 0; i < n && !err; i++) {
		tc_status st;
		if (tc_request_status(&req[i], &st) || st.error || st.bytes != a->bytes ||
		    st.source < 0 || st.source >= p || st.source == me || seen[st.source] ||
		    (srcof[i] != TC_ANY_SOURCE && st.source != srcof[i]) ||
		    st.tag != tag_of(st.source, me)) {
			atomic_fetch_add(&a->bad, 1);
			break;
		}
		seen[st.source] = 1;
		for (size_t b = 0; b < a->bytes; b++)
			if (rb[(size_t)i * a->bytes + b] != pat(st.source, me, st.tag, b)) {
				atomic_fetch_add(&a->bad, 1);
				break;
			}
	}
	free(seen);
	free(srcof);
	free(sb);
	free(rb);
	free(req);
	return err;
}

static void pairs_on(const int *ps, int nps, const size_t *sizes, int nsz)
{
	enum tc_exec ex[] = {TC_EXEC_THREADS, TC_EXEC_FIBRES};
	for (int e = 0; e < 2; e++)
		for (int z = 0; z < nsz; z++)
			for (int k = 0; k < nps; k++) {
				char specs[16][32];
				int ns = tc_test_specs_for(ps[k], specs, 16);
				for (int i = 0; i < ns; i++) {
					struct tc_team *team = make(specs[i], ex[e], 2048);
					struct pairs_arg a = {.bytes = sizes[z]};
					int err = tc_run(team, pairs_fn, &a);
					cr_assert_eq(err, 0, "%s %zu B exec %d: %s", specs[i],
					             sizes[z], e, tc_strerror(err));
					cr_assert_eq(atomic_load(&a.bad), 0, "%s %zu B exec %d",
					             specs[i], sizes[z], e);
					tc_team_destroy(team);
				}
			}
}

Test(anyp2p, all_pairs_small_p, .timeout = 300)
{
	/* 0 B, one packet, several packets, single copy (from 2048 B). */
	pairs_on((int[]){2, 3, 5, 8}, 4, (size_t[]){0, 8, 700, 5000}, 4);
}

Test(anyp2p, all_pairs_larger_p, .timeout = 600)
{
	pairs_on((int[]){13, 16, 31}, 3, (size_t[]){8, 5000}, 2);
}

/* ---- the order per source, with tags ------------------------------------ */

enum { ORDER_N = 120 };

/* Rank 0 receives ORDER_N messages from a neighbour (1) and from the rank
 * at the end of the chain (routed): first every message of tag 3, then of
 * tag 1 from any source, then the rest with any tag; each receive must get
 * the earliest message of its source that it matches. */
static int order_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	int p = tc_size(proc), me = tc_rank(proc), err = 0;
	if (me == 1 || me == p - 1) {
		tc_request *req = calloc(ORDER_N, sizeof *req);
		char *msg = calloc(ORDER_N, 1000);
		for (int i = 0; i < ORDER_N && !err; i++) {
			/* Every 10th message goes by single copy (above 256 B). */
			memcpy(msg + 1000 * i, &i, sizeof i);
			err = tc_isend_tag(proc, 0, i % 4, msg + 1000 * i, i % 10 == 9 ? 1000 : 16,
			                   &req[i]);
		}
		if (!err)
			err = tc_waitall(proc, ORDER_N, req);
		free(req);
		free(msg);
		return err;
	}
	if (me != 0)
		return 0;
	int last[2][4], next_any[2] = {0, 0};
	memset(last, 0xff, sizeof last);
	char buf[1000];
	int srcs[2] = {1, p - 1};
	for (int s = 0; s < 2 && !err; s++)
		for (int i = 3; i < ORDER_N && !err; i += 4) {
			tc_status st;
			err = tc_recv_tag(proc, srcs[s], 3, buf, sizeof buf, &st);
			int v;
			memcpy(&v, buf, sizeof v);
			if (!err && (v != i || st.tag != 3 || st.source != srcs[s]))
				err = -1000 - i;
		}
	for (int i = 0; i < 2 * (ORDER_N / 4) && !err; i++) {
		tc_status st;
		err = tc_recv_tag(proc, TC_ANY_SOURCE, 1, buf, sizeof buf, &st);
		int v, s = st.source == 1 ? 0 : 1;
		memcpy(&v, buf, sizeof v);
		if (!err && (st.tag != 1 || v % 4 != 1 || v <= last[s][1]))
			err = -2000 - i;
		last[s][1] = v;
	}
	for (int s = 0; s < 2 && !err; s++)
		for (int i = 0; i < ORDER_N / 2 && !err; i++) {
			tc_status st;
			err = tc_recv_tag(proc, srcs[s], TC_ANY_TAG, buf, sizeof buf, &st);
			int v;
			memcpy(&v, buf, sizeof v);
			/* What is left, in sending order: tags 0 and 2. */
			while (next_any[s] % 4 == 1 || next_any[s] % 4 == 3)
				next_any[s]++;
			if (!err && (v != next_any[s] || st.tag != v % 4 ||
			             st.bytes != (v % 10 == 9 ? 1000u : 16u)))
				err = -3000 - i;
			next_any[s]++;
		}
	return err;
}

Test(anyp2p, order_per_source_small, .timeout = 120)
{
	enum tc_exec ex[] = {TC_EXEC_THREADS, TC_EXEC_FIBRES};
	const char *specs[] = {"chain:4", "ring:7", "hypercube:3", "torus:3x3"};
	for (int e = 0; e < 2; e++)
		for (int i = 0; i < 4; i++) {
			struct tc_team *team = make(specs[i], ex[e], 256);
			int err = tc_run(team, order_fn, NULL);
			cr_assert_eq(err, 0, "%s exec %d: %d %s", specs[i], e, err, tc_strerror(err));
			tc_team_destroy(team);
		}
}

/* ---- many outstanding: every rank sends to rank 0, which posts them all
 * first from any source ------------------------------------------------------ */

enum { MANY = 40 };

static int many_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	int p = tc_size(proc), me = tc_rank(proc), err = 0;
	int n = (p - 1) * MANY;
	if (me == 0) {
		tc_request *req = calloc((size_t)n, sizeof *req);
		long *v = calloc((size_t)n, sizeof *v);
		long sum = 0, want = 0;
		for (int i = 0; i < n && !err; i++)
			err = tc_irecv_tag(proc, TC_ANY_SOURCE, TC_ANY_TAG, &v[i], sizeof v[i], &req[i]);
		if (!err)
			err = tc_waitall(proc, n, req);
		for (int i = 0; i < n; i++)
			sum += v[i];
		for (int r = 1; r < p; r++)
			for (int k = 0; k < MANY; k++)
				want += r * 1000 + k;
		free(req);
		free(v);
		return err ? err : sum == want ? 0 : -1;
	}
	for (int k = 0; k < MANY && !err; k++) {
		long v = me * 1000 + k;
		err = tc_send_tag(proc, 0, k, &v, sizeof v);
	}
	return err;
}

Test(anyp2p, many_outstanding_small, .timeout = 120)
{
	enum tc_exec ex[] = {TC_EXEC_THREADS, TC_EXEC_FIBRES};
	const char *specs[] = {"ring:8", "star:5", "mesh:3x4", "complete:16"};
	for (int e = 0; e < 2; e++)
		for (int i = 0; i < 4; i++) {
			struct tc_team *team = make(specs[i], ex[e], 0);
			int err = tc_run(team, many_fn, NULL);
			cr_assert_eq(err, 0, "%s exec %d: %s", specs[i], e, tc_strerror(err));
			tc_team_destroy(team);
		}
}

/* ---- truncation, routed and not ---------------------------------------- */

static int trunc_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	int me = tc_rank(proc), p = tc_size(proc);
	char big[3000], small[16];
	if (me == 1 || me == p - 1) { /* a neighbour of 0 and a routed sender */
		for (int i = 0; i < 3000; i++)
			big[i] = (char)(i + me);
		int err = tc_send_tag(proc, 0, 9, big, 100);           /* copied */
		return err ? err : tc_send_tag(proc, 0, 9, big, 3000); /* single copy */
	}
	if (me != 0)
		return 0;
	int srcs[2] = {1, p - 1};
	size_t sizes[2] = {100, 3000};
	for (int s = 0; s < 2; s++)
		for (int z = 0; z < 2; z++) {
			tc_status st;
			memset(small, 0x5a, sizeof small);
			int err = tc_recv_tag(proc, srcs[s], 9, small, sizeof small, &st);
			if (err != TC_ETRUNCATE || st.bytes != sizes[z] || st.source != srcs[s] ||
			    st.tag != 9)
				return -100 - 10 * s - z;
			for (size_t i = 0; i < sizeof small; i++)
				if (small[i] != 0x5a)
					return -200;
			/* Still queued: a large enough buffer takes it. */
			err = tc_recv_tag(proc, srcs[s], TC_ANY_TAG, big, sizeof big, &st);
			if (err || st.bytes != sizes[z] ||
			    big[sizes[z] - 1] != (char)(sizes[z] - 1 + srcs[s]))
				return -300 - 10 * s - z;
		}
	return 0;
}

Test(anyp2p, truncation_small, .timeout = 60)
{
	struct tc_team *team = make("chain:5", TC_EXEC_AUTO, 1024);
	int err = tc_run(team, trunc_fn, NULL);
	cr_assert_eq(err, 0, "%d %s", err, tc_strerror(err));
	tc_team_destroy(team);
}

/* ---- cancelling a single-copy send ----------------------------------------- */

/* Rank 0 sends rank p - 1 a single-copy message (all 1s), cancels it and
 * then sends a second one.  The receiver may have claimed the first
 * before the cancel (it waits in its receive from the start): then the
 * send completes (the cancel says TC_EPENDING, or 0 once the copy is
 * done), and the receiver gets both.
 * The second message says which happened (byte 0: 2 cancelled, 3 not), so
 * that a receiver reading a send whose cancel succeeded shows. */
static int cancel_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	int me = tc_rank(proc), p = tc_size(proc);
	static char first[4096], second[4096];
	int err = 0;
	if (me == 0) {
		tc_request r;
		memset(first, 1, sizeof first);
		err = tc_isend_tag(proc, p - 1, 4, first, sizeof first, &r);
		if (err)
			return err;
		/* Cancelled; or claimed, the copy under way (TC_EPENDING) or
		 * done (0, as MPI_Cancel of a completed request): sent. */
		const int c = tc_cancel(proc, &r), w = tc_wait(proc, &r, NULL);
		if (!(c == 0 && w == TC_ECANCELED) && !((c == 0 || c == TC_EPENDING) && w == 0))
			return -1001;
		memset(second, w == TC_ECANCELED ? 2 : 3, sizeof second);
		return tc_send_tag(proc, p - 1, 4, second, sizeof second);
	}
	if (me == p - 1) {
		char got[4096];
		tc_status st;
		err = tc_recv_tag(proc, 0, 4, got, sizeof got, &st);
		if (!err && got[0] == 1) { /* the first: its cancel must have failed */
			if (got[4095] != 1 || st.bytes != sizeof got)
				return -1002;
			err = tc_recv_tag(proc, 0, 4, got, sizeof got, &st);
			if (!err && got[0] != 3)
				return -1003; /* read a send whose cancel succeeded */
		} else if (!err && got[0] != 2) {
			return -1004;
		}
		if (!err && (got[4095] != got[0] || st.bytes != sizeof got))
			err = -1005;
	}
	return err;
}

/* Between neighbours (ring:6: 0 and 5 are) through the channel's
 * descriptor, and routed (chain:6) through the receiver's mailbox. */
Test(anyp2p, cancel_single_copy_send_small, .timeout = 60)
{
	const char *specs[] = {"ring:6", "chain:6"};
	enum tc_exec ex[] = {TC_EXEC_THREADS, TC_EXEC_FIBRES};
	for (int t = 0; t < 2; t++)
		for (int e = 0; e < 2; e++) {
			struct tc_team *team = make(specs[t], ex[e], 1024);
			int err = tc_run(team, cancel_fn, NULL);
			cr_assert_eq(err, 0, "%s exec %d: %d %s", specs[t], e, err,
			             err > -1000 ? tc_strerror(err) : "(the test's own code)");
			tc_team_destroy(team);
		}
}

/* ---- a rank blocked in a receive holds no routed message up --------------- */

static int blocked_fn(struct tc_proc *proc, void *argp)
{
	size_t bytes = *(size_t *)argp;
	int me = tc_rank(proc);
	char *b = calloc(1, bytes + 1);
	int err = 0;
	/* chain:3: 1 waits for 2, which first needs 0's message through 1. */
	if (me == 0)
		err = tc_send_tag(proc, 2, 1, b, bytes);
	else if (me == 1)
		err = tc_recv_tag(proc, 2, 2, b, bytes, NULL);
	else {
		err = tc_recv_tag(proc, 0, 1, b, bytes, NULL);
		if (!err)
			err = tc_send_tag(proc, 1, 2, b, bytes);
	}
	free(b);
	return err;
}

Test(anyp2p, blocked_rank_on_the_route_small, .timeout = 60)
{
	size_t sizes[] = {8, 100000};
	for (int z = 0; z < 2; z++) {
		struct tc_team *team = make("chain:3", TC_EXEC_AUTO, 0);
		int err = tc_run(team, blocked_fn, &sizes[z]);
		cr_assert_eq(err, 0, "%zu B: %s", sizes[z], tc_strerror(err));
		tc_team_destroy(team);
	}
}

/* ---- the modelled time of a routed message --------------------------------- */

struct timed_arg {
	size_t bytes;
	tc_time_t got;
};

static int timed_fn(struct tc_proc *proc, void *argp)
{
	struct timed_arg *a = argp;
	int me = tc_rank(proc), p = tc_size(proc);
	char *b = calloc(1, a->bytes + 1);
	int err = 0;
	if (me == 0)
		err = tc_send_tag(proc, p - 1, 0, b, a->bytes);
	else if (me == p - 1) {
		err = tc_recv_tag(proc, TC_ANY_SOURCE, TC_ANY_TAG, b, a->bytes, NULL);
		a->got = tc_clock(proc);
	}
	free(b);
	return err;
}

Test(anyp2p, routed_time_is_the_models, .timeout = 60)
{
	/* chain:5, 0 -> 4: four links.  t_s = 1000 ns, t_w = 1 ns/B, t_h = 50 ns. */
	size_t sizes[] = {100, 5000};
	for (int sw = 0; sw < 2; sw++)
		for (int z = 0; z < 2; z++) {
			struct tc_team_config cfg;
			tc_team_config_default(&cfg);
			cfg.topology = "chain:5";
			cfg.timeout_ms = 60000;
			cfg.model.th_ns = 50;
			cfg.model.switching = sw ? TC_SWITCH_CT : TC_SWITCH_SF;
			struct tc_team *team;
			cr_assert_eq(tc_team_create(&cfg, &team), 0);
			struct timed_arg a = {.bytes = sizes[z]};
			cr_assert_eq(tc_run(team, timed_fn, &a), 0);
			double link = 1000.0 + (double)sizes[z];
			double want = sw ? link + 4 * 50.0 : 4 * link;
			cr_assert_eq(a.got, (tc_time_t)(want * 1000), "%s %zu B: %lld ps, want %.0f",
			             sw ? "CT" : "SF", sizes[z], (long long)a.got, want * 1000);
			tc_team_destroy(team);
		}
}
