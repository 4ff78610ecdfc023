/* SPDX-License-Identifier: MIT */
/*
 * Probing point-to-point messages (tc_probe, tc_iprobe): a probe then a
 * receive sized by its status, on every topology kind (neighbours and
 * routed sources), threads and fibres; wildcards; the order of probes
 * equal to the order of receives per source; tc_iprobe saying no while
 * nothing is there, then yes; a probe's progress of the rank's own sends;
 * a probe that nothing matches timing out.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

static struct tc_team *make(const char *spec, enum tc_exec exec, size_t scm, uint64_t timeout_ms)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	cfg.timeout_ms = timeout_ms;
	if (scm)
		cfg.single_copy_min = scm;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	return team;
}

static const enum tc_exec execs[] = {TC_EXEC_THREADS, TC_EXEC_FIBRES};

/* ---- every rank sends every other messages of sizes the receiver learns
 * from a probe ------------------------------------------------------------- */

enum { PER_PEER = 4 };

/* The size of message k from src to dst: none, one packet, several
 * packets, single copy (from 2048 B). */
static size_t size_of(int src, int dst, int k)
{
	static const size_t base[PER_PEER] = {0, 9, 700, 5000};
	return base[k] + (size_t)((src * 7 + dst * 3) % 5);
}
static unsigned char pat(int src, int k, size_t i)
{
	return (unsigned char)(src * 31 + k * 17 + (int)i);
}

struct sized_arg {
	int mode; /* 0: receive with the probe's wildcards; 1: with the status's source and tag */
	_Atomic int bad;
};

/* Each rank sends message k (tag k) of size_of() to every other rank, then
 * probes from any source with any tag PER_PEER * (p - 1) times, receiving
 * each message into a buffer of exactly the size the probe reported; per
 * source the tags must come in order 0, 1, ... */
static int sized_fn(struct tc_proc *proc, void *argp)
{
	struct sized_arg *a = argp;
	int p = tc_size(proc), me = tc_rank(proc), n = (p - 1) * PER_PEER, err = 0;
	if (p == 1)
		return 0;
	tc_request *req = calloc((size_t)n, sizeof *req);
	unsigned char **out = calloc((size_t)n, sizeof *out);
	int *next = calloc((size_t)p, sizeof *next), k = 0;
	for (int j = 1; j < p && !err; j++) {
		int dst = (me + j) % p;
		for (int t = 0; t < PER_PEER && !err; t++, k++) {
			size_t z = size_of(me, dst, t);
			out[k] = malloc(z + 1);
			for (size_t i = 0; i < z; i++)
				out[k][i] = pat(me, t, i);
			err = tc_isend_tag(proc, dst, t, out[k], z, &req[k]);
		}
	}
	for (int m = 0; m < n && !err; m++) {
		tc_status st, rs;
		err = tc_probe(proc, TC_ANY_SOURCE, TC_ANY_TAG, &st);
		if (err)
			break;
		int s = st.source;
		if (s < 0 || s >= p || s == me || st.tag != next[s] || st.error ||
		    st.bytes != size_of(s, me, st.tag)) {
			atomic_fetch_add(&a->bad, 1);
			break;
		}
		unsigned char *b = malloc(st.bytes + 1);
		err = a->mode ? tc_recv_tag(proc, s, st.tag, b, st.bytes, &rs)
		              : tc_recv_tag(proc, TC_ANY_SOURCE, TC_ANY_TAG, b, st.bytes, &rs);
		if (!err && (rs.source != s || rs.tag != st.tag || rs.bytes != st.bytes))
			atomic_fetch_add(&a->bad, 1);
		for (size_t i = 0; !err && i < st.bytes; i++)
			if (b[i] != pat(s, st.tag, i)) {
				atomic_fetch_add(&a->bad, 1);
				break;
			}
		free(b);
		next[s]++;
	}
	if (!err)
		err = tc_waitall(proc, n, req);
	for (int i = 0; i < n; i++)
		free(out[i]);
	free(out);
	free(next);
	free(req);
	return err;
}

static void sized_on(const int *ps, int nps)
{
	for (int e = 0; e < 2; e++)
		for (int k = 0; k < nps; k++) {
			char specs[16][32];
			int ns = tc_test_specs_for(ps[k], specs, 16);
			for (int i = 0; i < ns; i++)
				for (int mode = 0; mode < 2; mode++) {
					struct tc_team *team = make(specs[i], execs[e], 2048, 60000);
					struct sized_arg a = {.mode = mode};
					int err = tc_run(team, sized_fn, &a);
					cr_assert_eq(err, 0, "%s exec %d mode %d: %s", specs[i], e,
					             mode, tc_strerror(err));
					cr_assert_eq(atomic_load(&a.bad), 0, "%s exec %d mode %d",
					             specs[i], e, mode);
					tc_team_destroy(team);
				}
		}
}

Test(probe, sized_by_status_small, .timeout = 600)
{
	sized_on((int[]){2, 3, 5, 8}, 4);
}

Test(probe, sized_by_status_larger_p, .timeout = 600)
{
	sized_on((int[]){13, 16}, 2);
}

/* ---- wildcards and the order per source ----------------------------------- */

enum { ORDER_N = 80 };

/* Message i's size tells i: 4 + i bytes, every 10th by single copy. */
static size_t order_bytes(int i)
{
	return (i % 10 == 9 ? 2000 : 4) + (size_t)i;
}
static int order_index(size_t bytes)
{
	return (int)(bytes >= 2000 ? bytes - 2000 : bytes - 4);
}

/* Rank 0 receives ORDER_N messages (tag i % 4) from a neighbour (1) and
 * from the last rank (routed on chains, rings and tori of more than 3
 * ranks).  Before each receive it probes with the receive's source and
 * tag (twice: a probe takes nothing) and the receive must get the message
 * the probe reported: first tag 3 from each, then tag 1 from any source,
 * then the rest per source with any tag.  A receive too small for the
 * probed message fails with TC_ETRUNCATE and a probe finds it again. */
static int order_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	int p = tc_size(proc), me = tc_rank(proc), err = 0;
	if (me == 1 || me == p - 1) {
		tc_request *req = calloc(ORDER_N, sizeof *req);
		char *msg = calloc(ORDER_N, 2100);
		for (int i = 0; i < ORDER_N && !err; i++) {
			memcpy(msg + 2100 * i, &i, sizeof i);
			err = tc_isend_tag(proc, 0, i % 4, msg + 2100 * i, order_bytes(i), &req[i]);
		}
		if (!err)
			err = tc_waitall(proc, ORDER_N, req);
		free(req);
		free(msg);
		return err;
	}
	if (me != 0)
		return 0;
	int srcs[2] = {1, p - 1}, last[2] = {-1, -1};
	char buf[2100];
	/* One step: probe (src, tag) twice, check, receive with the same
	 * arguments, check the receive took the probed message.  Returns the
	 * index received, or a negative error. */
#define STEP(SRC, TAG, CAP, OUT)                                                                    \
	do {                                                                                        \
		tc_status p1, p2, rs;                                                               \
		int e1 = tc_probe(proc, (SRC), (TAG), &p1), e2 = tc_probe(proc, (SRC), (TAG), &p2); \
		if (e1 || e2)                                                                       \
			return e1 ? e1 : e2;                                                        \
		if (p1.source != p2.source || p1.tag != p2.tag || p1.bytes != p2.bytes)             \
			return -10;                                                                 \
		int er = tc_recv_tag(proc, (SRC), (TAG), buf, (CAP), &rs);                          \
		int v = -1;                                                                         \
		memcpy(&v, buf, sizeof v);                                                          \
		if (er || rs.source != p1.source || rs.tag != p1.tag || rs.bytes != p1.bytes ||     \
		    v != order_index(p1.bytes) || v % 4 != p1.tag)                                  \
			return er ? er : -11;                                                       \
		(OUT) = rs;                                                                         \
	} while (0)
	for (int s = 0; s < 2; s++)
		for (int i = 3; i < ORDER_N; i += 4) {
			tc_status st;
			STEP(srcs[s], 3, sizeof buf, st);
			if (order_index(st.bytes) != i || st.source != srcs[s])
				return -1000 - i;
		}
	for (int i = 0; i < 2 * (ORDER_N / 4); i++) {
		tc_status st;
		STEP(TC_ANY_SOURCE, 1, sizeof buf, st);
		int s = st.source == srcs[0] ? 0 : 1, v = order_index(st.bytes);
		if (st.tag != 1 || v <= last[s])
			return -2000 - i;
		last[s] = v;
	}
	for (int s = 0; s < 2; s++) {
		/* A receive too small: TC_ETRUNCATE, the message stays. */
		tc_status st;
		err = tc_probe(proc, srcs[s], TC_ANY_TAG, &st);
		if (err || order_index(st.bytes) != 0)
			return err ? err : -3;
		if (tc_recv_tag(proc, srcs[s], TC_ANY_TAG, buf, 2, NULL) != TC_ETRUNCATE)
			return -4;
		for (int i = 0; i < ORDER_N; i++) {
			if (i % 4 == 1 || i % 4 == 3)
				continue;
			STEP(srcs[s], TC_ANY_TAG, sizeof buf, st);
			if (order_index(st.bytes) != i)
				return -3000 - i;
		}
	}
#undef STEP
	/* Nothing left. */
	int flag = 1;
	err = tc_iprobe(proc, TC_ANY_SOURCE, TC_ANY_TAG, &flag, NULL);
	return err ? err : flag ? -5 : 0;
}

Test(probe, order_per_source_small, .timeout = 300)
{
	const char *specs[] = {"chain:4", "ring:7", "hypercube:3", "torus:3x3", "complete:4"};
	for (int e = 0; e < 2; e++)
		for (int i = 0; i < 5; i++) {
			struct tc_team *team = make(specs[i], execs[e], 256, 60000);
			int err = tc_run(team, order_fn, NULL);
			cr_assert_eq(err, 0, "%s exec %d: %d %s", specs[i], e, err, tc_strerror(err));
			tc_team_destroy(team);
		}
}

/* ---- tc_iprobe: no while nothing is there, then yes ----------------------- */

/* Rank 0 finds nothing from 1 (a neighbour), from the last rank (routed)
 * or from anyone; then tells both to send and polls until each message is
 * there.  The senders are blocked in a receive meanwhile, so a "yes"
 * before the go would be wrong. */
static int iprobe_fn(struct tc_proc *proc, void *argp)
{
	size_t bytes = *(size_t *)argp;
	int p = tc_size(proc), me = tc_rank(proc), err = 0;
	char *b = calloc(1, bytes + 1);
	if (me == 1 || me == p - 1) {
		err = tc_recv_tag(proc, 0, 5, NULL, 0, NULL);
		memset(b, me, bytes);
		if (!err)
			err = tc_send_tag(proc, 0, 6, b, bytes);
		free(b);
		return err;
	}
	if (me != 0) {
		free(b);
		return 0;
	}
	int srcs[3] = {1, p - 1, TC_ANY_SOURCE}, flag = 1;
	for (int s = 0; s < 3 && !err; s++) {
		err = tc_iprobe(proc, srcs[s], TC_ANY_TAG, &flag, NULL);
		if (!err && flag)
			err = -1;
	}
	for (int s = 0; s < 2 && !err; s++)
		err = tc_send_tag(proc, srcs[s], 5, NULL, 0);
	for (int s = 0; s < 2 && !err; s++) {
		tc_status st;
		/* Another tag than the message's: never found. */
		err = tc_iprobe(proc, srcs[s], 7, &flag, &st);
		if (!err && flag)
			err = -2;
		for (flag = 0; !err && !flag;)
			err = tc_iprobe(proc, srcs[s], 6, &flag, &st);
		if (!err && (st.source != srcs[s] || st.tag != 6 || st.bytes != bytes))
			err = -3;
		if (!err)
			err = tc_recv_tag(proc, srcs[s], 6, b, bytes, &st);
		if (!err && bytes && b[bytes - 1] != (char)srcs[s])
			err = -4;
	}
	free(b);
	return err;
}

Test(probe, iprobe_no_then_yes_small, .timeout = 300)
{
	const char *specs[] = {"chain:5", "ring:6", "torus:3x3", "hypercube:3"};
	size_t sizes[] = {8, 5000};
	for (int e = 0; e < 2; e++)
		for (int i = 0; i < 4; i++)
			for (int z = 0; z < 2; z++) {
				struct tc_team *team = make(specs[i], execs[e], 2048, 60000);
				int err = tc_run(team, iprobe_fn, &sizes[z]);
				cr_assert_eq(err, 0, "%s exec %d %zu B: %d %s", specs[i], e,
				             sizes[z], err, tc_strerror(err));
				tc_team_destroy(team);
			}
}

/* ---- a probe makes progress on the rank's own sends ----------------------- */

enum { BIG = 256 * 1024 };

/* Rank 0 starts a streamed send far larger than the channel's ring, then
 * probes for the reply rank 1 sends once it has received it all: the send
 * moves only while rank 0 is in the library, here only in its probe. */
static int progress_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	int me = tc_rank(proc), err = 0;
	char *b = calloc(1, BIG);
	if (me == 0) {
		tc_request r;
		tc_status st;
		err = tc_isend_tag(proc, 1, 1, b, BIG, &r);
		if (!err)
			err = tc_probe(proc, 1, 2, &st);
		if (!err && (st.bytes != 3 || st.tag != 2))
			err = -1;
		if (!err)
			err = tc_recv_tag(proc, 1, 2, b, 3, NULL);
		if (!err)
			err = tc_wait(proc, &r, NULL);
	} else if (me == 1) {
		err = tc_recv_tag(proc, 0, 1, b, BIG, NULL);
		if (!err)
			err = tc_send_tag(proc, 0, 2, "abc", 3);
	}
	free(b);
	return err;
}

Test(probe, progresses_own_sends_small, .timeout = 120)
{
	for (int e = 0; e < 2; e++) {
		/* SIZE_MAX: every message streamed through the ring. */
		struct tc_team *team = make("chain:3", execs[e], SIZE_MAX, 60000);
		int err = tc_run(team, progress_fn, NULL);
		cr_assert_eq(err, 0, "exec %d: %d %s", e, err, tc_strerror(err));
		tc_team_destroy(team);
	}
}

/* ---- a probe that nothing matches times out -------------------------------- */

struct timeout_arg {
	int src;
	_Atomic int err0;
};

static int timeout_fn(struct tc_proc *proc, void *argp)
{
	struct timeout_arg *a = argp;
	if (tc_rank(proc) != 0) {
		/* A message of another tag: no match either. */
		return tc_rank(proc) == 1 ? tc_send_tag(proc, 0, 3, "x", 1) : 0;
	}
	tc_status st;
	int err = tc_probe(proc, a->src, 4, &st);
	atomic_store(&a->err0, err);
	return err;
}

static void watch_report(void *arg, const char *report)
{
	_Atomic int *seen = arg;
	if (strstr(report, "tc_probe"))
		atomic_store(seen, 1);
}

Test(probe, unmatched_times_out, .timeout = 120)
{
	/* From a neighbour, a routed source, any source. */
	int srcs[3] = {1, 3, TC_ANY_SOURCE};
	for (int e = 0; e < 2; e++)
		for (int s = 0; s < 3; s++) {
			struct tc_team *team = make("chain:4", execs[e], 0, 200);
			_Atomic int seen = 0;
			tc_team_set_watchdog(team, watch_report, &seen);
			struct timeout_arg a = {.src = srcs[s]};
			int err = tc_run(team, timeout_fn, &a);
			cr_assert_eq(err, TC_ETIMEDOUT, "exec %d src %d: %s", e, srcs[s],
			             tc_strerror(err));
			cr_assert_eq(atomic_load(&a.err0), TC_ETIMEDOUT);
			cr_assert_eq(atomic_load(&seen), 1, "the watchdog's report names tc_probe");
			tc_team_destroy(team);
		}
}

/* ---- argument errors ----------------------------------------------------- */

static int args_fn(struct tc_proc *proc, void *argp)
{
	(void)argp;
	int flag = 7, p = tc_size(proc), me = tc_rank(proc);
	tc_status st;
	if (tc_probe(proc, p, 0, &st) != TC_ERANK || tc_probe(proc, me, -5, &st) != TC_EINVAL ||
	    tc_probe(proc, (me + 1) % p, -5, &st) != TC_EINVAL ||
	    tc_iprobe(proc, (me + 1) % p, 0, NULL, &st) != TC_EINVAL ||
	    tc_iprobe(proc, -7, 0, &flag, &st) != TC_ERANK || flag != 0 ||
	    tc_probe(NULL, 0, 0, &st) != TC_EINVAL)
		return -1;
	return 0;
}

Test(probe, argument_errors, .timeout = 60)
{
	struct tc_team *team = make("ring:3", TC_EXEC_AUTO, 0, 60000);
	cr_assert_eq(tc_run(team, args_fn, NULL), 0);
	tc_team_destroy(team);
}
