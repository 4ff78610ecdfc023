/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_predict.c - topocoll predict: the cost of a collective without
 * running it (tc_predict), beside the source's formula and the lower bound.
 */
#include <math.h>
#include <string.h>

#include "cli.h"
#include "cli_coll.h"
#include "topocoll/calibrate.h"

const char predict_help[] =
        "usage: topocoll predict --topo SPEC --coll C [--alg A|all] [--bytes N] [options]\n"
        "\n"
        "Predicts a collective without running threads: generates the algorithm's\n"
        "schedule, applies the logical clock of the model and the checker, and\n"
        "prints the modelled time, the source's closed form and a lower bound valid\n"
        "for every algorithm.  Over the simulator's limit: the exact closed form\n"
        "alone (not counted or checked), or a refusal naming the limit (--alg\n"
        "all: in its line; exit status 0 if one is priced).\n"
        "  --topo SPEC       topology: ring:16, mesh:4x4, torus:4x4, hypercube:4,\n"
        "                    chain:P, star:P, tree:K:P, complete:P; or a family\n"
        "                    (ring, torus, ...) with --p P\n"
        "  --p P             node count (with a family, or to check a full SPEC)\n"
        "  --coll C          @COLLS@\n"
        "  --alg A           an algorithm of the registry, auto (the cheapest\n"
        "                    predicted, default) or all (one line per algorithm that\n"
        "                    applies; the others are listed after the table):\n"
        "                    @ALGS@\n"
        "  --bytes N         m, the block of one rank: what each rank contributes,\n"
        "                    or gets from each rank (a buffer of p blocks, as\n"
        "                    allgather's result or alltoall's buffers, holds p m):\n"
        "                    0, 8, 4K, 16M (K = 1024); not needed for barrier\n"
        "  --root R          root of a rooted collective [0]: @ROOTED@\n"
        "  --q Q             the shift: rank i's block goes to rank (i + Q) mod p, any\n"
        "                    Q (negative: the other way) [0]\n"
        "  --along-ring      the shift counts positions along the topology's ring\n"
        "                    (a hypercube's is the Gray code: rank G(i) sends to\n"
        "                    G(i + Q)), as [Barnat-IB109] and [Gergel-shift] do\n"
        "  --members LIST    the multicast's destinations: ranks and ranges, e.g.\n"
        "                    1,4,6-9 (the root may be listed) [every rank]\n"
        "  --counts LIST     the v-collectives' elements (of --dtype) per block, in\n"
        "                    rank order: p numbers (allgatherv, gatherv, scatterv:\n"
        "                    what rank i contributes or gets), p x p row-major\n"
        "                    (alltoallv: row i is what rank i sends); uniform:N, or\n"
        "                    ramp (block i: i + 1; alltoallv i to j: i + j + 1);\n"
        "                    --bytes N instead: every block N bytes\n"
        "  --dtype T         element type [double; byte if 8 does not divide N]\n"
        "  --calibration F   price it also as F's machine (calibrate --save F);\n"
        "                    auto: the cheapest so\n"
        "  --json            one JSON object (an array of them with --alg all):\n"
        "                    modelled_ns, formula_ns, lower_bound_ns (null: none),\n"
        "                    lower_bound_steps, rounds, transfers, simulated (false:\n"
        "                    over the simulator's limit, the closed form: see\n"
        "                    not_counted), messages, hop_messages, bytes (moved end\n"
        "                    to end), msg_bytes (N), algorithm, the checker's counts,\n"
        "                    the model; calibrated_ns; not priced: error,\n"
        "                    not_priced (why), figures null\n" CLI_MODEL_HELP "examples:\n"
        "  topocoll predict --topo hypercube:10 --coll bcast --alg hypercube \\\n"
        "      --bytes 4096 --ts 1000 --tw 0.5 --th 10 --ports one --switching sf --json\n"
        "  topocoll predict --topo ring:16 --coll bcast --alg all --bytes 1M\n"
        "  topocoll predict --topo torus --p 64 --coll allreduce --bytes 64K \\\n"
        "      --switching ct --th 50\n"
        "  topocoll predict --topo ring:8 --coll allgather --alg ring --bytes 1K --json\n"
        "  topocoll predict --topo ring:5 --coll allgatherv --counts 1,2,3,4,5\n";

/* What a prediction by the closed form alone leaves out. */
#define CLI_NOT_COUNTED                                                                   \
	"rounds, transfers, messages, hops, bytes and the checks: closed form only (the " \
	"schedule is over the simulator's limit, and is not built to count them)"

void cli_prediction_json(struct cli_json *w, const struct tc_prediction *pr)
{
	double mod = (double)pr->modelled_ps / TC_PS_PER_NS;
	cli_json_str(w, "algorithm", pr->algorithm);
	cli_json_num(w, "modelled_ns", mod);
	cli_json_num(w, "formula_ns", pr->formula_ns);
	cli_json_num(w, "formula_rel_diff",
	             isfinite(pr->formula_ns) && pr->formula_ns != 0
	                     ? (mod - pr->formula_ns) / pr->formula_ns
	                     : (isfinite(pr->formula_ns) && mod == 0 ? 0 : NAN));
	cli_json_num(w, "lower_bound_ns", pr->lower_bound_ns);
	if (pr->lower_bound_steps >= 0)
		cli_json_int(w, "lower_bound_steps", pr->lower_bound_steps);
	else
		cli_json_null(w, "lower_bound_steps");
	cli_json_bool(w, "simulated", pr->simulated);
	if (!pr->simulated) { /* the closed form alone: nothing counted, nothing checked */
		cli_json_null(w, "rounds");
		cli_json_null(w, "transfers");
		cli_json_null(w, "messages");
		cli_json_null(w, "hop_messages");
		cli_json_null(w, "bytes");
		cli_json_null(w, "checker");
		cli_json_str(w, "not_counted", CLI_NOT_COUNTED);
		return;
	}
	cli_json_int(w, "rounds", pr->rounds);
	cli_json_int(w, "transfers", pr->transfers);
	cli_json_int(w, "messages", pr->messages);
	cli_json_int(w, "hop_messages", pr->hop_messages);
	cli_json_uint(w, "bytes", pr->bytes);
	cli_json_obj(w, "checker");
	cli_json_int(w, "oneport_violations", pr->oneport_violations);
	cli_json_int(w, "nodup_violations", pr->nodup_violations);
	cli_json_int(w, "noho_violations", pr->noho_violations);
	cli_json_int(w, "contention", pr->contention);
	cli_json_end_obj(w);
}

const char *cli_lb_note(double mod_ns, const struct tc_prediction *pr)
{
	/* The bound holds for every algorithm under the model: above the
	 * modelled time it is wrong, and says so rather than hide it.  The
	 * logical clock rounds each message's time to the picosecond, the
	 * bound does not: half a picosecond per round is that rounding. */
	const double slack = 0.5e-3 * (pr->rounds > 0 ? pr->rounds : 1);
	if (isfinite(pr->lower_bound_ns) && pr->lower_bound_ns > mod_ns * (1 + 1e-12) + slack)
		return "\n                 ABOVE the modelled time: the bound does not hold here "
		       "(a defect: please report it)";
	return "";
}

const char *cli_vs_formula(double mod_ns, double formula_ns, char *buf)
{
	if (!isfinite(formula_ns))
		strcpy(buf, "-");
	else if (fabs(mod_ns - formula_ns) <= 1e-9 * fabs(formula_ns) + 1e-3)
		strcpy(buf, "exact");
	else
		snprintf(buf, 32, "%+.3g%%", formula_ns ? 100 * (mod_ns - formula_ns) / formula_ns : 0);
	return buf;
}

static void predict_text_one(const struct cli_case *cs, const struct tc_prediction *pr)
{
	char b1[32], b2[32], b3[32];
	double mod = (double)pr->modelled_ps / TC_PS_PER_NS;
	printf("%s on %s, %s%s", tc_coll_name(cs->coll), cli_topo_name(cs->t),
	       tc_coll_flags(cs->coll) & TC_CF_VCOUNT ? "blocks up to " : "",
	       cli_bytes(cs->bytes, b1, sizeof b1));
	if (!(tc_coll_flags(cs->coll) & TC_CF_VCOUNT))
		printf(" block per rank");
	cli_case_args_print(cs);
	printf("\n");
	printf("algorithm        %s\n", pr->algorithm);
	printf("modelled         %s ns  (%s)\n", cli_num(mod, b1), cli_time(mod, b2));
	if (isfinite(pr->formula_ns))
		printf("formula (source)   %s ns  (%s, %s)\n", cli_num(pr->formula_ns, b1),
		       cli_time(pr->formula_ns, b2), cli_vs_formula(mod, pr->formula_ns, b3));
	else
		printf("formula (source)   none for this call\n");
	if (isfinite(pr->lower_bound_ns))
		printf("lower bound      %s ns  (%s, %ld steps)%s\n", cli_num(pr->lower_bound_ns, b1),
		       cli_time(pr->lower_bound_ns, b2), pr->lower_bound_steps, cli_lb_note(mod, pr));
	else
		printf("lower bound      none applies\n");
	if (!pr->simulated) {
		printf("simulated        no: the schedule is over the simulator's limit; the "
		       "modelled time is\n                 the algorithm's closed form, exact for "
		       "this topology and model\n");
		printf("not counted      rounds, transfers, messages, hops, bytes; not checked "
		       "(closed form only)\n");
		return;
	}
	printf("rounds           %d\n", pr->rounds);
	printf("messages         %ld end-to-end, %ld link crossings\n", pr->messages, pr->hop_messages);
	printf("bytes moved      %llu\n", (unsigned long long)pr->bytes);
	printf("checker          1-port violations %ld, NODUP %ld, NOHO %ld, contention %ld\n",
	       pr->oneport_violations, pr->nodup_violations, pr->noho_violations, pr->contention);
}

void cli_prediction_header(void)
{
	printf("%-15s %14s %14s %8s %14s %7s %9s %9s %s\n", "algorithm", "modelled_ns",
	       "formula_ns", "vs", "lower_bound_ns", "rounds", "messages", "hops", "checks");
}

void cli_prediction_row(const struct tc_prediction *pr)
{
	char b1[32], b2[32], b3[32], b4[32], r[32] = "-", msg[32] = "-", hops[32] = "-";
	char checks[64] = "not checked (closed form only)";
	double mod = (double)pr->modelled_ps / TC_PS_PER_NS;
	if (pr->simulated) {
		snprintf(r, sizeof r, "%d", pr->rounds);
		snprintf(msg, sizeof msg, "%ld", pr->messages);
		snprintf(hops, sizeof hops, "%ld", pr->hop_messages);
		/* Which checks fail (their counts: --alg A, or --json). */
		const struct {
			long n;
			const char *name;
		} v[] = {{pr->oneport_violations, "1-port"},
		         {pr->nodup_violations, "NODUP"},
		         {pr->noho_violations, "NOHO"}};
		strcpy(checks, "ok");
		for (size_t k = 0, any = 0; k < sizeof v / sizeof v[0]; k++)
			if (v[k].n) {
				size_t l = any ? strlen(checks) : 0;
				snprintf(checks + l, sizeof checks - l, "%s%s",
				         any ? "," : "VIOLATES ", v[k].name);
				any = 1;
			}
	}
	printf("%-15s %14s %14s %8s %14s %7s %9s %9s %s\n", pr->algorithm, cli_num(mod, b1),
	       isfinite(pr->formula_ns) ? cli_num(pr->formula_ns, b2) : "-",
	       cli_vs_formula(mod, pr->formula_ns, b4),
	       isfinite(pr->lower_bound_ns) ? cli_num(pr->lower_bound_ns, b3) : "-", r, msg, hops,
	       checks);
}

/* --alg all: the row of an algorithm that applies but was not priced (err,
 * why: cli_coll_reason), its figures "-" as where there are none. */
static void predict_unpriced_row(const char *alg, const char *why)
{
	printf("%-15s %14s %14s %8s %14s %7s %9s %9s not priced: %s\n", alg, "-", "-", "-", "-",
	       "-", "-", "-", why);
}

/* Its object in the JSON array: the figures null, the error's name (as a
 * sweep's row of a failed run has it) and why. */
static void predict_unpriced_json(struct cli_json *w, const char *alg, int err, const char *why)
{
	static const char *const nulls[] = {"modelled_ns",
	                                    "formula_ns",
	                                    "formula_rel_diff",
	                                    "lower_bound_ns",
	                                    "lower_bound_steps",
	                                    "simulated",
	                                    "rounds",
	                                    "transfers",
	                                    "messages",
	                                    "hop_messages",
	                                    "bytes",
	                                    "checker"};
	cli_json_str(w, "algorithm", alg);
	for (size_t k = 0; k < sizeof nulls / sizeof nulls[0]; k++)
		cli_json_null(w, nulls[k]);
	cli_json_str(w, "error", tc_err_name(err));
	cli_json_str(w, "not_priced", why);
}

/* predict's own option: --calibration FILE. */
static int predict_extra(int argc, char **argv, int *i, void *ctx)
{
	const char **file = ctx, *v;
	int r = cli_opt(argc, argv, i, "--calibration", &v);
	if (r == 1)
		*file = v;
	return r;
}

/* The calibrated price of the case's call as algorithm alg: *ns, or NAN
 * where the calibration cannot price it. */
static double predict_calibrated(const struct cli_case *cs, const struct tc_calibration *cal,
                                 const char *alg)
{
	struct tc_call call = cli_case_call(cs, alg);
	double ns = NAN;
	if (tc_calibration_predict(cal, cs->t, &call, NULL, NULL, &ns) != 0)
		return NAN;
	return ns;
}

/* AUTO under the calibration: the algorithm of the cheapest calibrated
 * price among those that apply (as AUTO on a native team given the
 * calibration picks, here without a placement: a round among more than
 * two ranks pays the farthest hand-off class); NULL when none prices. */
static const char *predict_calibrated_pick(const struct cli_case *cs, const struct tc_calibration *cal)
{
	const char *best = NULL, *a;
	double best_ns = INFINITY;
	for (int i = 0; (a = tc_alg_name(cs->coll, i)) != NULL; i++) {
		const double ns = predict_calibrated(cs, cal, a);
		if (isfinite(ns) && ns < best_ns)
			best_ns = ns, best = a;
	}
	return best;
}

int cmd_predict(int argc, char **argv)
{
	struct cli_case cs;
	int json = 0;
	const char *cal_file = NULL;
	int err = cli_case_parse("predict", argc, argv, CLI_CASE_ALG_ALL, &cs, &json, predict_extra,
	                         &cal_file);
	if (err)
		return err == -1 ? CLI_OK : err;

	int status = CLI_OK;
	struct cli_json w;
	cli_json_init(&w, stdout);
	struct tc_calibration cal;
	if (cal_file && ((status = cli_calibration_read("predict", cal_file, &cal)) != 0 ||
	                 (status = cli_calibrated_model("predict", &cal, cs.bytes, &cs.model.md)) != 0)) {
		cli_case_free(&cs);
		return status;
	}
	if (!cs.all) {
		struct tc_prediction pr;
		if (cal_file && !cs.alg && !(cs.alg = predict_calibrated_pick(&cs, &cal))) {
			status = cli_coll_error(TC_ENOTSUP, cs.coll, NULL, cs.t, cs.root);
			cli_case_free(&cs);
			return status;
		}
		status = cli_case_predict(&cs, &pr);
		const double cal_ns =
		        cal_file && !status ? predict_calibrated(&cs, &cal, pr.algorithm) : NAN;
		if (!status && json) {
			cli_json_obj(&w, NULL);
			cli_case_json(&w, &cs);
			cli_prediction_json(&w, &pr);
			if (cal_file) {
				cli_json_num(&w, "calibrated_ns", cal_ns);
				cli_json_str(&w, "calibration_file", cal_file);
			}
			cli_json_end_obj(&w);
		} else if (!status) {
			predict_text_one(&cs, &pr);
			if (cal_file) {
				char b1[32];
				if (isfinite(cal_ns))
					printf("calibrated       %.1f ns  (%s; the machine of %s: o_call, "
					       "shares of its bandwidth and its rounds included)\n",
					       cal_ns, cli_time(cal_ns, b1), cal_file);
				else
					printf("calibrated       not priced by %s\n", cal_file);
			}
		}
		cli_case_free(&cs);
		return status;
	}

	/* --alg all: every algorithm of the registry that applies; one that
	 * applies but cannot be priced (over the simulator's limit, ...) keeps
	 * its row, which says why, and the others are still priced. */
	struct tc_prediction pr[64];
	int perr[64], n = 0, priced = 0;
	char skipped[512] = "", why[64][200];
	const char *a;
	for (int i = 0; (a = tc_alg_name(cs.coll, i)) != NULL && n < 64; i++) {
		struct tc_call call = cli_case_call(&cs, a);
		err = tc_predict_call(cs.t, &cs.model.md, &call, &pr[n]);
		if (err == TC_ENOTSUP) {
			size_t l = strlen(skipped);
			snprintf(skipped + l, sizeof skipped - l, "%s%s", l ? ", " : "", a);
			continue;
		}
		if (err) {
			memset(&pr[n], 0, sizeof pr[n]);
			pr[n].algorithm = a;
			cli_coll_reason(err, why[n], sizeof why[n]);
		}
		priced += !err;
		perr[n++] = err;
	}
	if (n && !priced) {
		/* None priced: the first one's error, as --alg names it (asked
		 * again: the library's detail is the last call's). */
		const char *first = pr[0].algorithm;
		struct tc_call call = cli_case_call(&cs, first);
		err = tc_predict_call(cs.t, &cs.model.md, &call, &pr[0]);
		status = cli_coll_error(err ? err : perr[0], cs.coll, first, cs.t, cs.root);
	} else if (n == 0) {
		status = cli_coll_error(TC_ENOTSUP, cs.coll, NULL, cs.t, cs.root);
	} else if (json) {
		w.nl_depth = 1;
		cli_json_arr(&w, NULL);
		for (int k = 0; k < n; k++) {
			cli_json_obj(&w, NULL);
			cli_case_json(&w, &cs);
			if (perr[k])
				predict_unpriced_json(&w, pr[k].algorithm, perr[k], why[k]);
			else
				cli_prediction_json(&w, &pr[k]);
			if (cal_file)
				cli_json_num(&w, "calibrated_ns",
				             predict_calibrated(&cs, &cal, pr[k].algorithm));
			cli_json_end_obj(&w);
		}
		cli_json_end_arr(&w);
	} else {
		char b[32];
		printf("%s on %s, %s block per rank", tc_coll_name(cs.coll), cli_topo_name(cs.t),
		       cli_bytes(cs.bytes, b, sizeof b));
		cli_case_args_print(&cs);
		printf("\n");
		cli_prediction_header();
		for (int k = 0; k < n; k++)
			if (perr[k])
				predict_unpriced_row(pr[k].algorithm, why[k]);
			else
				cli_prediction_row(&pr[k]);
		if (*skipped)
			printf("not applicable to %s: %s\n", cli_topo_name(cs.t), skipped);
		if (cal_file) {
			printf("calibrated (the machine of %s):\n", cal_file);
			for (int k = 0; k < n; k++) {
				const double ns = predict_calibrated(&cs, &cal, pr[k].algorithm);
				if (isfinite(ns))
					printf("  %-15s %14.1f ns\n", pr[k].algorithm, ns);
				else
					printf("  %-15s %14s\n", pr[k].algorithm, "not priced");
			}
		}
	}
	cli_case_free(&cs);
	return status;
}
