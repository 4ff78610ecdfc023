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

#include "harness.h"
#include "topocoll.h"

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

Test(wait, sender_keeps_its_cpu_while_the_peer_copies, .timeout = 60)
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
	struct long_arg a = {0};
	int err = tc_run(team, long_fn, &a);
	cr_assert_not(atomic_load(&a.bad), "rank 1 received the wrong data");
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	cr_assert_leq(a.sleeps, LONG_REPS - 3, "the sender slept in %d of %d sends", a.sleeps, LONG_REPS);
	tc_team_destroy(team);
}
