/* SPDX-License-Identifier: MIT */
/*
 * examples/ring_sum.c - the minimal SPMD program of the README: 8 virtual
 * processors on a ring pass a running sum along it, from rank 0 to rank 7,
 * each adding its rank; the last rank (7) prints the total.
 */
#include <stdio.h>

#include "topocoll.h"

static int ring_sum(struct tc_proc *proc, void *arg)
{
	(void)arg;
	int me = tc_rank(proc), p = tc_size(proc);
	long sum = 0;
	int err = 0;
	if (me > 0)
		err = tc_recv(proc, me - 1, &sum, sizeof sum, NULL); /* from the left */
	sum += me;
	if (!err && me < p - 1)
		err = tc_send(proc, me + 1, &sum, sizeof sum); /* to the right */
	if (!err && me == p - 1)
		printf("sum of ranks 0..%d = %ld\n", p - 1, sum);
	return err;
}

int main(void)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:8";
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	if (!err)
		err = tc_run(team, ring_sum, NULL); /* 8 pinned threads, joined */
	if (err)
		fprintf(stderr, "ring_sum: %s\n", tc_strerror(err));
	tc_team_destroy(team);
	return err ? 1 : 0;
}
