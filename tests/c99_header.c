/* SPDX-License-Identifier: MIT */
/*
 * tests/c99_header.c - the public headers in strict C99: built with
 * -std=c99 -pedantic -Werror (tests/meson.build, tests/test_install.sh),
 * it includes <topocoll.h> and runs a ping between two ranks with a
 * request of the caller's storage.
 */
#include <stdio.h>

#include <topocoll.h>

static int ping(struct tc_proc *proc, void *arg)
{
	int v = 42, got = 0, err;
	tc_request req;
	(void)arg;
	if (tc_rank(proc) == 0)
		return tc_send(proc, 1, &v, sizeof v);
	err = tc_irecv(proc, 0, &got, sizeof got, &req);
	if (!err)
		err = tc_wait(proc, &req, NULL);
	return err ? err : got == 42 ? 0 : TC_EINVAL;
}

int main(void)
{
	struct tc_team_config cfg;
	struct tc_team *team = NULL;
	int err;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:2";
	err = tc_team_create(&cfg, &team);
	if (!err)
		err = tc_run(team, ping, NULL);
	tc_team_destroy(team);
	if (err) {
		fprintf(stderr, "c99_header: %s\n", tc_strerror(err));
		return 1;
	}
	printf("c99_header: ok (tc_request: %u bytes)\n", (unsigned)sizeof(tc_request));
	return 0;
}
