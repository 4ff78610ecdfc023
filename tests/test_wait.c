/* SPDX-License-Identifier: MIT */
/*
 * Waiting (lib/core/wait.h, lib/p2p/progress.c): what a rank does while it
 * waits, seen from its statistics.  A suite of its own, never run beside
 * another (tests/meson.build): it times copies, and other tests' threads on
 * the same CPUs would slow them.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

/* A rank with a CPU to itself whose long single-copy message a peer is
 * copying keeps its CPU for as long as the copy can take instead of
 * sleeping after the spin budget (20 us, against ~2 ms for 16 MiB here):
 * the wake-up would be on the critical path.  Rank 1 posts its receive and
 * says so before rank 0 sends, so the wait is the copy alone.  Without the
 * rule every send sleeps; with it, only a copy slowed past the bound
 * (2.5x its time here) by a preempted CPU may. */
enum { LONG_BYTES = 16 << 20, LONG_REPS = 10 };

struct long_arg {
	int sleeps; /* rank 0's */
	_Atomic int bad;
};

static int long_fn(struct tc_proc *proc, void *argp)
{
	struct long_arg *a = argp;
	unsigned char *buf = malloc(LONG_BYTES);
	uint64_t token = 0;
	if (!buf)
		return TC_ENOMEM;   /* a failing rank aborts the team: no hang */
	memset(buf, 0, LONG_BYTES); /* no page faults inside the copy */
	int err = 0;
	for (int k = 0; k < LONG_REPS && !err; k++) {
		if (tc_rank(proc) == 0) {
			memset(buf, k + 1, LONG_BYTES);
			err = tc_recv(proc, 1, &token, sizeof token, NULL);
			if (err)
				break;
			struct tc_stats before, after;
			tc_proc_stats(proc, &before);
			err = tc_send(proc, 1, buf, LONG_BYTES);
			tc_proc_stats(proc, &after);
			a->sleeps += after.waits_blocked > before.waits_blocked;
		} else {
			tc_request r;
			err = tc_irecv(proc, 0, buf, LONG_BYTES, &r);
			if (!err)
				err = tc_send(proc, 0, &token, sizeof token);
			if (!err)
				err = tc_wait(proc, &r, NULL);
			if (!err && (buf[0] != k + 1 || buf[LONG_BYTES - 1] != k + 1)) {
				a->bad = 1;
				err = -1;
			}
		}
	}
	free(buf);
	return err;
}

/* Two thread ranks with a CPU each (the test is skipped on one CPU). */
static struct tc_team *pair_team(void)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "chain:2";
	cfg.timeout_ms = 10000;     /* a hang fails with a message, not the suite's timeout */
	cfg.exec = TC_EXEC_THREADS; /* the spin of a thread with a core of its own */
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	struct tc_team_info info;
	tc_team_get_info(team, &info);
	if (info.oversubscribed) {
		tc_team_destroy(team);
		cr_skip_test("one CPU: the ranks of chain:2 share it");
	}
	return team;
}

Test(wait, sender_keeps_its_cpu_while_the_peer_copies, .timeout = 60)
{
	struct tc_team *team = pair_team();
	struct long_arg a = {0};
	int err = tc_run(team, long_fn, &a);
	cr_assert_not(atomic_load(&a.bad), "rank 1 received the wrong data");
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	cr_assert_leq(a.sleeps, LONG_REPS - 3, "the sender slept in %d of %d sends", a.sleeps, LONG_REPS);
	tc_team_destroy(team);
}

/* A wait that keeps making progress is not idle: a rank that waits for
 * all of PACED_MSGS messages in one tc_waitall, while its peer sends one
 * every PACED_GAP_NS, spins and yields between them and sleeps only when
 * nothing arrives for the spin and yield budget (about 1 ms).  Counted
 * from the wait's start instead, every look past its first millisecond
 * would sleep: one sleep and wake-up per message, on the critical path of
 * any collective longer than that (a whole collective is one wait).  A
 * loaded machine may stall the sender for a millisecond now and then, not
 * for half of the messages. */
enum { PACED_MSGS = 100, PACED_GAP_NS = 100000 };

struct paced_arg {
	int sleeps; /* the receiver's, in its one wait */
	_Atomic int bad;
};

static int paced_fn(struct tc_proc *proc, void *argp)
{
	struct paced_arg *a = argp;
	uint64_t vals[PACED_MSGS];
	int err = 0;
	if (tc_rank(proc) == 0) {
		uint64_t token;
		err = tc_recv(proc, 1, &token, sizeof token, NULL); /* rank 1 has posted */
		for (int k = 0; k < PACED_MSGS && !err; k++) {
			uint64_t until = tc_test_now_ns() + PACED_GAP_NS;
			while (tc_test_now_ns() < until)
				;
			vals[k] = (uint64_t)k * 7 + 1;
			err = tc_send(proc, 1, &vals[k], sizeof vals[k]);
		}
		return err;
	}
	tc_request reqs[PACED_MSGS];
	for (int k = 0; k < PACED_MSGS && !err; k++)
		err = tc_irecv(proc, 0, &vals[k], sizeof vals[k], &reqs[k]);
	uint64_t token = 1;
	if (!err)
		err = tc_send(proc, 0, &token, sizeof token);
	struct tc_stats before, after;
	tc_proc_stats(proc, &before);
	if (!err)
		err = tc_waitall(proc, PACED_MSGS, reqs);
	tc_proc_stats(proc, &after);
	a->sleeps = (int)(after.waits_blocked - before.waits_blocked);
	for (int k = 0; k < PACED_MSGS && !err; k++)
		if (vals[k] != (uint64_t)k * 7 + 1)
			a->bad = 1;
	return err;
}

Test(wait, a_wait_that_progresses_does_not_sleep, .timeout = 60)
{
	struct tc_team *team = pair_team();
	struct paced_arg a = {0};
	int err = tc_run(team, paced_fn, &a);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	cr_assert_not(atomic_load(&a.bad), "rank 1 received the wrong values");
	cr_assert_leq(a.sleeps, PACED_MSGS / 2,
	              "the receiver slept %d times in one wait for %d paced messages", a.sleeps,
	              PACED_MSGS);
	tc_team_destroy(team);
}
