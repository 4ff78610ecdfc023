/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz_cli.c - libFuzzer target for the tool's argument vectors (one
 * argument per line of the input): the case parser that predict, run,
 * steps and trace share (cli_case_parse, with and without --op), and, when
 * it accepts a case of at most 64 ranks, `topocoll predict` itself
 * (cmd_predict, whose output goes to stdout: run with -close_fd_mask=3).
 * No team is ever run.  Every status must be CLI_OK, CLI_FAIL or
 * CLI_USAGE; the leak checker sees what an error path forgets to free.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/cli.h"
#include "../tools/cli_coll.h"
#include "fuzz_argv.h"
#include "topocoll.h"

/* The subcommand table of tools/topocoll.c (which has main()): the help
 * texts are all the case parser asks of it. */
const struct cli_cmd cli_cmds[] = {
        {"predict", cmd_predict, "", predict_help},
        {NULL, NULL, NULL, NULL},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *argv[FUZZ_MAXARGS + 1], *buf;
	int argc = fuzz_argv(data + 1, size - 1, argv, &buf);
	if (!buf)
		return 0;
	struct cli_case cs;
	int json = 0;
	const unsigned flags = data[0] & 1 ? CLI_CASE_DATA : CLI_CASE_ALG_ALL;
	int err = cli_case_parse("predict", argc, argv, flags, &cs, &json, NULL, NULL);
	if (err != 0 && err != -1 && err != CLI_USAGE && err != CLI_FAIL)
		abort();
	if (err == 0) {
		const int p = tc_topo_nodes(cs.t);
		if (!cs.t || p < 1)
			abort();
		cli_case_free(&cs);
		if (p <= 64 && !(data[0] & 1)) {
			int st = cmd_predict(argc, argv);
			if (st != CLI_OK && st != CLI_FAIL && st != CLI_USAGE)
				abort();
		}
	}
	free(buf);
	return 0;
}
