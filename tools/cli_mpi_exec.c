/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_mpi_exec.c - `--engine mpi` in topocoll, which links no MPI:
 * it replaces itself with topocoll-mpi from its own folder (the same
 * command line; the MPI launcher's environment goes with it), or says
 * that this topocoll was built without MPI.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_mpi.h"

int cli_run_mpi(const struct cli_case *cs, const struct cli_mpi_opts *mo, int argc, char **argv)
{
	(void)cs;
	(void)mo;
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
				av[1] = "run";
				for (int i = 0; i < argc; i++)
					av[i + 2] = argv[i];
				execv(self, av);
				free(av);
				return cli_fail("run: --engine mpi: cannot run %s: %s", self,
				                strerror(errno));
			}
			free(av);
		}
	}
	return cli_usage("run: --engine mpi: this topocoll was built without MPI (no "
	                 "topocoll-mpi beside it: install Open MPI or MPICH and rebuild; "
	                 "docs/mpi.md)");
}
