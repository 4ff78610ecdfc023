/* SPDX-License-Identifier: MIT */
/* tools/cli_run_ref.h - the inputs and the sequential reference of
 * topocoll run (tools/cli_run_ref.c), for the runs of tools/cli_run_coll.c. */
#ifndef TC_TOOLS_CLI_RUN_REF_H
#define TC_TOOLS_CLI_RUN_REF_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* A 64-bit hash of x: the bytes of the inputs and of the guard patterns. */
uint64_t cli_run_mix(uint64_t x);
/* Rank r's input of count elements for a reduction with op, into buf. */
void cli_run_gen_input(unsigned char *buf, size_t count, enum tc_dtype dt, enum tc_op op, int r, int p);
/* Rank r's receive buffer after the call, from every rank's input in[], into dst. */
void cli_run_ref_result(const struct cli_run_args *a, int p, int r, unsigned char *const *in,
                        size_t count, unsigned char *dst);

#endif
