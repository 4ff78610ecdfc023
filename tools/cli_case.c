/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_case.c - parsing and validation of one collective case, shared by
 * predict, run, steps and trace (see cli_coll.h).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli_coll.h"

const char *cli_help_of(const char *cmd)
{
	for (const struct cli_cmd *c = cli_cmds; c->name; c++)
		if (!strcmp(c->name, cmd))
			return c->help;
	return "";
}

enum tc_dtype cli_default_dtype(uint64_t bytes)
{
	return bytes % sizeof(double) ? TC_BYTE : TC_DOUBLE;
}

int cli_op_fits(enum tc_op op, enum tc_dtype dt)
{
	if (dt != TC_FLOAT && dt != TC_DOUBLE)
		return op < TC_OP_USER;
	return op == TC_OP_SUM || op == TC_OP_PROD || op == TC_OP_MIN || op == TC_OP_MAX;
}

void cli_case_free(struct cli_case *cs)
{
	tc_topo_destroy(cs->t);
	cs->t = NULL;
	free(cs->members);
	cs->members = NULL;
	free(cs->vcounts);
	cs->vcounts = NULL;
}

int cli_case_parse(const char *cmd, int argc, char **argv, unsigned flags, struct cli_case *cs,
                   int *json, cli_extra_fn extra, void *ctx)
{
	const char *topo = NULL, *coll = NULL, *alg = NULL, *bytes = NULL, *root = NULL;
	const char *dtype = NULL, *op = NULL, *pstr = NULL, *qstr = NULL, *mstr = NULL;
	const char *cstr = NULL;
	memset(cs, 0, sizeof *cs);
	cli_model_init(&cs->model);
	for (int i = 0; i < argc; i++) {
		int r;
		const char **slot = NULL;
		const char *v;
		if (cli_is_help(argv[i])) {
			cli_help_print(stdout, cli_help_of(cmd));
			return -1;
		}
		if (json && !strcmp(argv[i], "--json")) {
			*json = 1;
			continue;
		}
		if (!strcmp(argv[i], "--along-ring")) {
			cs->shift_ring = 1;
			continue;
		}
		static const char *const names[] = {"--topo", "--coll",    "--alg",   "--bytes",
		                                    "--root", "--dtype",   "--op",    "--p",
		                                    "--q",    "--members", "--counts"};
		const char **slots[] = {&topo, &coll, &alg,  &bytes, &root, &dtype,
		                        &op,   &pstr, &qstr, &mstr,  &cstr};
		for (int k = 0; k < 11 && !slot; k++) {
			if (k == 6 && !(flags & CLI_CASE_DATA))
				continue;
			r = cli_opt(argc, argv, &i, names[k], &v);
			if (r == 1) {
				slot = slots[k];
				*slot = v;
			} else if (r) {
				return r;
			}
		}
		if (slot)
			continue;
		r = cli_model_opt(argc, argv, &i, &cs->model);
		if (r == 1)
			continue;
		if (r)
			return r;
		if (extra) {
			r = extra(argc, argv, &i, ctx);
			if (r == 1)
				continue;
			if (r)
				return r;
		}
		return cli_unknown(cmd, argv[i]);
	}

	char names_buf[256];
	if (!coll)
		return cli_usage("%s: missing --coll (%s)", cmd,
		                 cli_coll_list(0, names_buf, sizeof names_buf));
	if (cli_coll(coll, &cs->coll))
		return CLI_USAGE;
	unsigned cf = tc_coll_flags(cs->coll);
	if (!topo)
		return cli_usage("%s: missing --topo SPEC (e.g. ring:8, torus:4x4, hypercube:3)", cmd);
	long p = 0;
	if (pstr && cli_parse_long("--p", pstr, 1, TC_TOPO_MAX_NODES, &p))
		return CLI_USAGE;
	if (cf & TC_CF_VCOUNT) {
		/* --counts, or --bytes N: every block N bytes. */
		if (!cstr && !bytes)
			return cli_usage("%s: missing --counts LIST (elements of each block, or "
			                 "uniform:N, ramp) for %s",
			                 cmd, tc_coll_name(cs->coll));
		if (cstr && bytes)
			return cli_usage("%s: --counts and --bytes exclude each other (--bytes N: "
			                 "every block N bytes)",
			                 cmd);
		if (cstr)
			bytes = NULL;
	} else if (cstr) {
		return cli_usage("--counts applies to %s only, not %s",
		                 cli_coll_list(TC_CF_VCOUNT, names_buf, sizeof names_buf),
		                 tc_coll_name(cs->coll));
	}
	if (!bytes && !cstr && !(cf & TC_CF_NO_DATA))
		return cli_usage("%s: missing --bytes N (bytes of one block per rank, e.g. 8, 4K, 1M)",
		                 cmd);
	if (bytes && cli_parse_size("--bytes", bytes, TC_MAX_MESSAGE, &cs->bytes))
		return CLI_USAGE;
	if (cf & TC_CF_NO_DATA)
		cs->bytes = 0;
	cs->dt = cli_default_dtype(cs->bytes);
	if (dtype && cli_dtype(dtype, &cs->dt))
		return CLI_USAGE;
	size_t es = tc_dtype_size(cs->dt);
	if (cs->bytes % es)
		return cli_usage("--bytes %s is not a multiple of the size of %s (%zu bytes)",
		                 bytes, tc_dtype_name(cs->dt), es);
	cs->op = TC_OP_SUM;
	if (op && cli_op(op, &cs->op))
		return CLI_USAGE;
	if (op && !(cf & TC_CF_REDUCES))
		return cli_usage("--op applies to reducing collectives only (%s), not %s",
		                 cli_coll_list(TC_CF_REDUCES, names_buf, sizeof names_buf),
		                 tc_coll_name(cs->coll));
	if (op && !cli_op_fits(cs->op, cs->dt))
		return cli_usage("--op %s is not defined for %s (bitwise and logical operators take "
		                 "integer types)",
		                 op, tc_dtype_name(cs->dt));
	if (alg) {
		if (!strcmp(alg, "all")) {
			if (!(flags & CLI_CASE_ALG_ALL))
				return cli_usage("%s: --alg all is not available here; name one algorithm",
				                 cmd);
			cs->all = 1;
		} else if (strcmp(alg, "auto")) {
			if (cli_alg_index(cs->coll, alg) < 0) {
				char list[512];
				return cli_usage("unknown algorithm '%s' for %s (available: %s)",
				                 alg, tc_coll_name(cs->coll),
				                 cli_alg_list(cs->coll, list, sizeof list));
			}
			cs->alg = alg;
		}
	}
	if (qstr) {
		if (cli_parse_long("--q", qstr, LONG_MIN, LONG_MAX, &cs->q))
			return CLI_USAGE;
		if (!(cf & TC_CF_Q))
			return cli_usage("--q applies to %s only, not %s",
			                 cli_coll_list(TC_CF_Q, names_buf, sizeof names_buf),
			                 tc_coll_name(cs->coll));
	}
	if (cs->shift_ring && !(cf & TC_CF_Q))
		return cli_usage("--along-ring applies to %s only, not %s",
		                 cli_coll_list(TC_CF_Q, names_buf, sizeof names_buf),
		                 tc_coll_name(cs->coll));
	if (mstr && !(cf & TC_CF_MEMBERS))
		return cli_usage("--members applies to %s only, not %s",
		                 cli_coll_list(TC_CF_MEMBERS, names_buf, sizeof names_buf),
		                 tc_coll_name(cs->coll));
	if (cli_topo(topo, p, &cs->t))
		return CLI_USAGE;
	/* The root, a node of the topology (its range in the message). */
	long rt = 0;
	if (root && cli_parse_node("--root", root, cs->t, &rt)) {
		cli_case_free(cs);
		return CLI_USAGE;
	}
	if (rt && !(cf & TC_CF_ROOTED)) {
		cli_case_free(cs);
		return cli_usage("--root applies to rooted collectives only (%s), not %s",
		                 cli_coll_list(TC_CF_ROOTED, names_buf, sizeof names_buf),
		                 tc_coll_name(cs->coll));
	}
	cs->root = (int)rt;
	if (cf & TC_CF_VCOUNT) {
		int n = tc_topo_nodes(cs->t);
		cs->vcounts = cstr ? NULL : cli_vcounts_uniform(cs->coll, n, (size_t)(cs->bytes / es));
		int st = cstr          ? cli_vcounts_parse(cstr, cs->coll, n, es, &cs->vcounts)
		         : cs->vcounts ? CLI_OK
		                       : cli_fail("out of memory");
		if (st) {
			cli_case_free(cs);
			return st;
		}
		cs->bytes = cli_v_max_block(cs->coll, n, cs->vcounts) * es;
	}
	if (!(cf & TC_CF_NO_DATA) && cli_packets_check(&cs->model, cs->bytes, cs->dt)) {
		cli_case_free(cs);
		return CLI_USAGE;
	}
	if (cf & TC_CF_MEMBERS) { /* without --members: a multicast to every rank */
		int st = cli_parse_members(mstr, tc_topo_nodes(cs->t), &cs->members, &cs->nmembers);
		if (st) {
			cli_case_free(cs);
			return st;
		}
	}
	return 0;
}

void cli_case_args_print(const struct cli_case *cs)
{
	unsigned cf = tc_coll_flags(cs->coll);
	if (cf & TC_CF_ROOTED)
		printf(", root %d", cs->root);
	if (cf & TC_CF_Q)
		printf(", q %ld%s", cs->q, cs->shift_ring ? " along the ring" : "");
	if (cf & TC_CF_VCOUNT) {
		char b[160];
		printf(", counts %s",
		       cli_vcounts_str(cs->coll, tc_topo_nodes(cs->t), cs->vcounts, b, sizeof b));
	}
	if (cf & TC_CF_MEMBERS) {
		printf(", members ");
		if (cs->nmembers == tc_topo_nodes(cs->t)) {
			printf("all");
		} else if (cs->nmembers > 16) {
			printf("%d ranks", cs->nmembers);
		} else {
			for (int i = 0; i < cs->nmembers; i++)
				printf("%s%d", i ? "," : "", cs->members[i]);
			if (!cs->nmembers)
				printf("none");
		}
	}
}

struct tc_call cli_case_call(const struct cli_case *cs, const char *alg)
{
	struct tc_call call = {.coll = cs->coll,
	                       .alg = alg,
	                       .bytes = cs->bytes,
	                       .esize = tc_dtype_size(cs->dt),
	                       .root = cs->root,
	                       .packets = cs->model.packets,
	                       .q = cs->q,
	                       .members = cs->members,
	                       .nmembers = cs->nmembers,
	                       .shift_ring = cs->shift_ring};
	return cli_vcall(call, cs->vcounts);
}

int cli_case_predict(const struct cli_case *cs, struct tc_prediction *pr)
{
	struct tc_call call = cli_case_call(cs, cs->alg);
	int err = tc_predict_call(cs->t, &cs->model.md, &call, pr);
	return err ? cli_coll_error(err, cs->coll, cs->alg, cs->t, cs->root) : CLI_OK;
}

void cli_case_json(struct cli_json *w, const struct cli_case *cs)
{
	cli_json_str(w, "topology", cli_topo_name(cs->t));
	cli_json_int(w, "p", tc_topo_nodes(cs->t));
	cli_json_str(w, "coll", tc_coll_name(cs->coll));
	cli_json_uint(w, "msg_bytes", cs->bytes);
	cli_json_int(w, "root", cs->root);
	cli_json_str(w, "dtype", tc_dtype_name(cs->dt));
	if (tc_coll_flags(cs->coll) & TC_CF_Q) {
		cli_json_int(w, "q", cs->q);
		cli_json_bool(w, "along_ring", cs->shift_ring);
	}
	if (tc_coll_flags(cs->coll) & TC_CF_REDUCES)
		cli_json_str(w, "op", tc_op_name(cs->op));
	if (tc_coll_flags(cs->coll) & TC_CF_VCOUNT) {
		int p = tc_topo_nodes(cs->t);
		size_t n = cs->coll == TC_COLL_ALLTOALLV ? (size_t)p * (size_t)p : (size_t)p;
		cli_json_arr(w, "counts");
		for (size_t i = 0; i < n; i++)
			cli_json_uint(w, NULL, cs->vcounts[i]);
		cli_json_end_arr(w);
	}
	cli_model_json(w, &cs->model);
}
