/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_coll.h - one collective case (topology, collective, algorithm,
 * size, root, datatype, model) as the subcommands predict, run, steps and
 * trace parse it, and the prediction printers shared with sweep.
 */
#ifndef TC_TOOLS_CLI_COLL_H
#define TC_TOOLS_CLI_COLL_H

#include "cli.h"

struct cli_case {
	struct tc_topo *t; /* owned (cli_case_free) */
	enum tc_coll coll;
	const char *alg; /* NULL: auto */
	int all;         /* --alg all */
	uint64_t bytes;  /* m: one block per rank (a p-block buffer holds p m) */
	int root;
	enum tc_dtype dt;
	enum tc_op op;
	struct cli_model model;
	long q;         /* --q (shift) */
	int shift_ring; /* --along-ring (shift) */
	int *members;   /* --members (multicast; owned); NULL: every rank */
	int nmembers;
	size_t *vcounts; /* --counts (v-collectives; owned): p or p x p
	                        elements (cli.h); bytes is then the largest
	                        block's bytes */
};

enum {
	CLI_CASE_ALG_ALL = 1u << 0, /* --alg all is accepted */
	CLI_CASE_DATA = 1u << 1,    /* --op is accepted (runs real data) */
};

/* A subcommand's own options: 0 (not one), 1 (consumed) or CLI_USAGE. */
typedef int (*cli_extra_fn)(int argc, char **argv, int *i, void *ctx);

/*
 * Parses the options of a case: --topo --p --coll --alg --bytes --root
 * --dtype [--op] --json, the model options, and extra's.  Validates them
 * together from the shape flags of the collective (tc_coll_flags: size a
 * multiple of the datatype, a non-zero root only for rooted collectives,
 * --op only for reducing ones, no --bytes for those without data),
 * algorithm in the registry, operator defined for the datatype).  Returns 0, -1 when --help was printed (exit 0), or CLI_USAGE.
 * json may be NULL (no --json).  On 0, free with cli_case_free().
 */
int cli_case_parse(const char *cmd, int argc, char **argv, unsigned flags, struct cli_case *cs,
                   int *json, cli_extra_fn extra, void *ctx);
void cli_case_free(struct cli_case *cs);
/* topology, p, coll, msg_bytes, root, dtype and the model, as JSON members. */
void cli_case_json(struct cli_json *w, const struct cli_case *cs);
/* ", root R", ", q Q", ", members LIST" as the collective takes them. */
void cli_case_args_print(const struct cli_case *cs);
/* The tc_call of the case (algorithm alg). */
struct tc_call cli_case_call(const struct cli_case *cs, const char *alg);
/* tc_predict_call of the case's call (its algorithm, dtype, root, packets).
 * CLI_OK, or the status of cli_coll_error() (message printed). */
int cli_case_predict(const struct cli_case *cs, struct tc_prediction *pr);

/* The help text of a subcommand. */
const char *cli_help_of(const char *cmd);

/* Prediction printers (cli_predict.c). */
void cli_prediction_json(struct cli_json *w, const struct tc_prediction *pr);
void cli_prediction_header(void);
void cli_prediction_row(const struct tc_prediction *pr);
/* A note when the lower bound exceeds the modelled time, else "". */
const char *cli_lb_note(double mod_ns, const struct tc_prediction *pr);
/* "exact", "+1.25%" or "-" (no formula). */
const char *cli_vs_formula(double mod_ns, double formula_ns, char *buf);

/* Default datatype for a size: double when it divides, else byte. */
enum tc_dtype cli_default_dtype(uint64_t bytes);

#endif
