/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_mpi_exec.c - `--engine mpi` in topocoll, which links no MPI:
 * it replaces itself with topocoll-mpi from its own folder (the same
 * command line; the MPI launcher's environment goes with it), or says
 * that this topocoll was built without MPI.  The other calls of
 * cli_mpi.h are never reached here (topocoll-mpi has them).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_mpi.h"

/* Runs topocoll-mpi CMD argv...; returns only when it cannot. */
static int exec_mpi(const char *cmd, int argc, char **argv)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
	if (n > 0) {
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			strcpy(slash + 1, "topocoll-mpi");
			char **av = calloc((size_t)argc + 3, sizeof *av);
			if (av && access(self, X_OK) == 0) {
				av[0] = self;
				av[1] = (char *)cmd;
				for (int i = 0; i < argc; i++)
					av[i + 2] = argv[i];
				execv(self, av);
				free(av);
				return cli_fail("%s: --engine mpi: cannot run %s: %s", cmd, self,
				                strerror(errno));
			}
			free(av);
		}
	}
	return cli_usage("%s: --engine mpi: this topocoll was built without MPI (no "
	                 "topocoll-mpi beside it: install Open MPI or MPICH and rebuild; "
	                 "docs/mpi.md)",
	                 cmd);
}

int cli_run_mpi(const struct cli_case *cs, const struct cli_mpi_opts *mo, int argc, char **argv)
{
	(void)cs;
	(void)mo;
	return exec_mpi("run", argc, argv);
}

int cli_mpi_begin(const char *cmd, int argc, char **argv, int *me, int *np)
{
	*me = 0;
	*np = 1;
	return exec_mpi(cmd, argc, argv);
}

int cli_mpi_end(int status)
{
	return status;
}

int cli_mpi_team(const struct tc_team_config *cfg, int direct, struct tc_team **team)
{
	(void)cfg;
	(void)direct;
	*team = NULL;
	return TC_ENOTSUP;
}

void cli_mpi_team_destroy(struct tc_team *team)
{
	(void)team;
}

int cli_mpi_run_coll(struct tc_team *team, const struct cli_run_args *a, struct cli_run_result *r)
{
	(void)team;
	(void)a;
	memset(r, 0, sizeof *r);
	return TC_ENOTSUP;
}

int cli_mpi_gather_events(struct tc_team *team, struct tc_event ***ev, int **n, uint64_t *dropped)
{
	(void)team;
	*ev = NULL;
	*n = NULL;
	*dropped = 0;
	return TC_ENOTSUP;
}
