/* SPDX-License-Identifier: MIT */
/* tools/cli_mpi_none.c - `--engine mpi` in a topocoll built without an MPI. */
#include "cli.h"
#include "cli_mpi.h"

int cli_run_mpi(const struct cli_case *cs, const struct cli_mpi_opts *mo)
{
	(void)cs;
	(void)mo;
	return cli_usage("run: --engine mpi: this topocoll was built without MPI (install Open MPI "
	                 "or MPICH and rebuild: meson option mpi, docs/mpi.md)");
}
