/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_run.c - topocoll run: one collective run for real over the
 * channels (tools/cli_run_coll.c), its result checked against a sequential
 * reference computed by the tool (tools/cli_run_ref.c), its measured time
 * beside the modelled time and the source's formula.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_coll.h"
#include "cli_mpi.h"

const char run_help[] =
        "usage: topocoll run --topo SPEC --coll C [--alg A] [--bytes N] [options]\n"
        "\n"
        "Creates a team of p threads joined by the topology's channels, runs the\n"
        "collective for real, checks every rank's result against a sequential\n"
        "reference computed by the tool from the collective's MPI definition\n"
        "(every receive buffer, and nothing written where the collective writes\n"
        "nothing), and prints the measured time beside the modelled time, the\n"
        "closed form and the lower bound.  Exit status 1 when a result is wrong.\n"
        "  --topo SPEC --p P --coll C --alg A --bytes N --root R --q Q --along-ring\n"
        "  --members LIST --counts LIST --dtype T\n"
        "                    as for topocoll predict (--alg all is not accepted;\n"
        "                    with more ranks than CPUs, native, auto prices this\n"
        "                    machine instead of the model: the output says what ran)\n"
        "  --op OP           sum prod min max band bor bxor land lor [sum]; only for\n"
        "                    the reducing collectives (@REDUCING@)\n"
        "  --mode M          native: channels at full speed; emulated: every message\n"
        "                    takes the model's time in wall-clock time [native]\n"
        "  --repeat N        timed runs, the median is reported [1]\n"
        "  --warmup N        untimed runs first [1]\n"
        "  --calls N         native: calls back to back per run, timed together\n"
        "                    [as many as fit in 10 ms, at most 1000]\n"
        "  --warmup-calls N  native: untimed calls first in each run [1]\n"
        "  --in-place        send buffer TC_IN_PLACE (allreduce, reduce, allgather,\n"
        "                    gather, scan, shift, gray2binary, binary2gray)\n"
        "  --wait W          how ranks wait: auto spin yield block [auto]\n"
        "  --no-pin          do not pin the threads to CPUs\n"
        "  --timeout MS      a wait longer than this fails the run [60000; 0: never]\n"
        "  --stack BYTES     each rank's thread's stack, e.g. 256K for p = 4096\n"
        "                    [the system's default, often 8M]\n"
        "  --calibrated      native: calibrate this machine first (about a second)\n"
        "                    and model with it (t_s, t_w of the block's segment,\n"
        "                    t_c, o_call: a call's cost past its messages), AUTO\n"
        "                    too (a CPU per rank); ignores oversubscription\n"
        "  --calibration F   as --calibrated, from F (calibrate --save F)\n"
        "  --json            one JSON object: measured_ns, modelled_ns, algorithm,\n"
        "                    verified, call_avg_ns, busbw_gbps, model_source, ...\n"
        "measured: per call, median of the runs; native: from every rank ready (a\n"
        "tool barrier) to the last rank's last call's end, over the calls (in place\n"
        "from 16 KiB: spans a barrier apart); emulated: from logical time 0\n"
        "to the last rank's end.  A run's first and last call are checked; stats\n"
        "per call.\n"
        "algbw, busbw: nccl-tests' definitions, GB/s.\n"
        "modelled: under the model named beside it (native: the default or given\n"
        "model, not this machine's, unless --calibrated); the run's largest logical\n"
        "clock (tc_team_last_run) over its calls; for the v-collectives that holds\n"
        "the ranks' agreement on the counts, the next line the data's schedule alone\n"
        "(as predicted, against the formula).\n" CLI_MODEL_HELP "examples:\n"
        "  topocoll run --topo ring:16 --coll allreduce --alg ring --bytes 8192 \\\n"
        "      --root 0 --mode emulated --ts 50000 --tw 1 --json\n"
        "  topocoll run --topo hypercube:3 --coll bcast --bytes 1M --repeat 10\n"
        "  topocoll run --topo torus:4x4 --coll reduce --bytes 4K --dtype int32 \\\n"
        "      --op max --root 5\n"
        "  topocoll run --topo torus:3x3 --coll alltoallv --counts ramp --dtype int32\n"
        "  topocoll run --topo chain:2 --coll allreduce --bytes 64K --repeat 9 --calibrated\n";

/* ---- topocoll run ------------------------------------------------------ */

struct run_opts {
	int emulated;
	long repeat, warmup;
	long timeout_ms;
	enum tc_wait_policy wait;
	int no_pin;
	uint64_t stack_bytes;
	int calibrated;
	const char *cal_file;     /* --calibration: read, not measured */
	long calls, warmup_calls; /* -1: the default */
	int in_place;
	/* --engine threads|mpi, --route forward|direct, --vs-mpi: docs/mpi.md
	 * (run_help is at the 4095 characters a C99 string may hold). */
	int engine_mpi; /* --engine mpi (tools/cli_mpi.c) */
	int direct;     /* --route direct */
	int route;      /* --route given (for --engine mpi only, as --vs-mpi) */
	int vs_mpi;
};

static int run_extra(int argc, char **argv, int *i, void *ctx)
{
	struct run_opts *o = ctx;
	const char *v;
	int r;
	if (!strcmp(argv[*i], "--no-pin")) {
		o->no_pin = 1;
		return 1;
	}
	if (!strcmp(argv[*i], "--calibrated")) {
		o->calibrated = 1;
		return 1;
	}
	if ((r = cli_opt(argc, argv, i, "--calibration", &v)) != 0) {
		if (r != 1)
			return r;
		o->calibrated = 1;
		o->cal_file = v;
		return 1;
	}
	if (!strcmp(argv[*i], "--in-place")) {
		o->in_place = 1;
		return 1;
	}
	if (!strcmp(argv[*i], "--vs-mpi")) {
		o->vs_mpi = 1;
		return 1;
	}
	if ((r = cli_opt(argc, argv, i, "--engine", &v)) == 1)
		return cli_choice("--engine", v, "threads", "mpi", &o->engine_mpi) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--route", &v)) == 1) {
		o->route = 1;
		return cli_choice("--route", v, "forward", "direct", &o->direct) ? CLI_USAGE : 1;
	}
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--calls", &v)) == 1)
		return cli_parse_long("--calls", v, 1, 1000000, &o->calls) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--warmup-calls", &v)) == 1)
		return cli_parse_long("--warmup-calls", v, 0, 1000000, &o->warmup_calls) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--mode", &v)) == 1)
		return cli_choice("--mode", v, "native", "emulated", &o->emulated) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--repeat", &v)) == 1)
		return cli_parse_long("--repeat", v, 1, 1000000, &o->repeat) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--warmup", &v)) == 1)
		return cli_parse_long("--warmup", v, 0, 1000000, &o->warmup) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--timeout", &v)) == 1)
		return cli_parse_long("--timeout", v, 0, 86400000, &o->timeout_ms) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--stack", &v)) == 1) {
		if (cli_parse_size("--stack", v, (uint64_t)1 << 30, &o->stack_bytes))
			return CLI_USAGE;
		if (o->stack_bytes && o->stack_bytes < 64 * 1024)
			return cli_usage("--stack: at least 64K, got '%s'", v);
		return 1;
	}
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--wait", &v)) == 1) {
		static const char *const names[] = {"auto", "spin", "yield", "block"};
		for (int k = 0; k < 4; k++)
			if (!strcmp(v, names[k])) {
				o->wait = (enum tc_wait_policy)k;
				return 1;
			}
		return cli_usage("--wait: expected auto, spin, yield or block, got '%s'", v);
	}
	return r;
}

/* Largest memory the run's buffers may take: half the physical memory. */
static uint64_t run_mem_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || psz <= 0)
		return (uint64_t)1 << 32;
	return (uint64_t)pages * (uint64_t)psz / 2;
}

int cli_run_wrong(const char *cmd, const struct cli_run_result *rr)
{
	if (rr->mismatch_rank >= 0)
		return cli_fail("%s: wrong result on rank %d at element %llu", cmd,
		                rr->mismatch_rank, (unsigned long long)rr->mismatch_elem);
	if (rr->barrier_early)
		return cli_fail("%s: a rank left the barrier before every rank had entered it", cmd);
	return cli_fail("%s: the ranks report different algorithms", cmd);
}

int cli_run_check_memory(int p, enum tc_coll coll, uint64_t bytes)
{
	/* Send and receive buffers of every rank, and the references (at most
	 * one per receive buffer), in blocks of m; root 0 (the most). */
	uint64_t blocks = 1;
	unsigned f = tc_coll_flags(coll);
	for (int r = 0; r < p; r++) {
		uint64_t in = cli_send_bytes(coll, p, 0, r, 1) +
		              ((f & (TC_CF_NO_SEND | TC_CF_NO_DATA)) == TC_CF_NO_SEND && r == 0);
		blocks += in + 2 * cli_recv_bytes(coll, p, 0, r, 1);
	}
	uint64_t need = bytes * blocks;
	if (bytes && need / bytes != blocks)
		need = UINT64_MAX;
	uint64_t lim = run_mem_limit();
	if (need > lim) {
		char b1[32], b2[32];
		return cli_usage("run: %d ranks x %s per block need %s of buffers, above the limit of "
		                 "%s (half the memory)",
		                 p, cli_bytes(bytes, b1, sizeof b1), cli_bytes(need, b2, sizeof b2),
		                 cli_bytes(lim, (char[32]){0}, 32));
	}
	return 0;
}

int cli_run_check_memory_v(int p, enum tc_coll coll, int root, const size_t *v, size_t es)
{
	/* Send and receive buffers, and the references. */
	uint64_t elems = 0;
	for (int r = 0; r < p; r++)
		elems += cli_v_send_elems(coll, p, root, v, r) +
		         2 * cli_v_recv_elems(coll, p, root, v, r);
	uint64_t lim = run_mem_limit();
	if (elems > lim / es) {
		char b1[32];
		return cli_usage("run: the buffers of these counts need %llu elements of %zu bytes, "
		                 "above the limit of %s (half the memory)",
		                 (unsigned long long)elems, es, cli_bytes(lim, b1, sizeof b1));
	}
	return 0;
}

void cli_stats_json(struct cli_json *w, const struct tc_stats *s)
{
	cli_json_obj(w, "stats");
	cli_json_uint(w, "msgs_sent", s->msgs_sent);
	cli_json_uint(w, "bytes_sent", s->bytes_sent);
	cli_json_uint(w, "msgs_recv", s->msgs_recv);
	cli_json_uint(w, "bytes_recv", s->bytes_recv);
	cli_json_uint(w, "packets_sent", s->packets_sent);
	cli_json_uint(w, "single_copy", s->single_copy);
	cli_json_uint(w, "waits_blocked", s->waits_blocked);
	cli_json_uint(w, "rounds", s->rounds);
	cli_json_uint(w, "transfers_sent", s->transfers_sent);
	cli_json_uint(w, "transfers_recv", s->transfers_recv);
	cli_json_uint(w, "forwarded", s->forwarded);
	cli_json_end_obj(w);
}

/* Where the model's figures come from: "calibrated" (this machine, measured
 * by --calibrated), "default" (the library's default model, not this
 * machine's) or "options" (the model options given). */
static const char *model_source(const struct tc_model *md, int calibrated)
{
	struct tc_model d;
	tc_model_default(&d);
	if (calibrated)
		return "calibrated";
	return md->ts_ns == d.ts_ns && md->tw_ns == d.tw_ns && md->th_ns == d.th_ns &&
	                       md->tc_ns == d.tc_ns && md->mu == d.mu && md->ports == d.ports &&
	                       md->duplex == d.duplex && md->switching == d.switching &&
	                       md->combining == d.combining
	               ? "default"
	               : "options";
}

/* "default model (t_s 1000 ns, t_w 1 ns/B)", the parameters that price a
 * message (t_h and t_c when not 0). */
static const char *model_desc(const struct tc_model *md, const char *src, char *buf, size_t len)
{
	int o = snprintf(buf, len, "%s model (t_s %.4g ns, t_w %.4g ns/B",
	                 !strcmp(src, "calibrated") ? "calibrated"
	                 : !strcmp(src, "default")  ? "default"
	                                            : "given",
	                 md->ts_ns, md->tw_ns);
	if (md->th_ns > 0 && o > 0 && (size_t)o < len)
		o += snprintf(buf + o, len - (size_t)o, ", t_h %.4g ns", md->th_ns);
	if (md->tc_ns > 0 && o > 0 && (size_t)o < len)
		o += snprintf(buf + o, len - (size_t)o, ", t_c %.4g ns/B", md->tc_ns);
	if (o > 0 && (size_t)o < len)
		snprintf(buf + o, len - (size_t)o, ")");
	return buf;
}

int cli_busbw(enum tc_coll c, int p, uint64_t m, double t_ns, double *algbw, double *busbw, double *factor)
{
	double s, f;
	switch (c) {
	case TC_COLL_ALLREDUCE:
		s = (double)m, f = 2.0 * (p - 1) / p;
		break;
	case TC_COLL_ALLGATHER:
	case TC_COLL_REDUCE_SCATTER:
	case TC_COLL_ALLTOALL:
	case TC_COLL_GATHER:
	case TC_COLL_SCATTER:
		s = (double)m * p, f = (double)(p - 1) / p;
		break;
	case TC_COLL_BCAST:
	case TC_COLL_REDUCE:
	case TC_COLL_SHIFT:
		s = (double)m, f = 1;
		break;
	default:
		*algbw = *busbw = *factor = NAN;
		return -1;
	}
	/* Bytes per ns are GB/s. */
	*algbw = t_ns > 0 ? s / t_ns : NAN;
	*busbw = *algbw * f;
	*factor = f;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct cli_case cs;
	struct run_opts o = {.repeat = 1, .warmup = -1, .timeout_ms = 60000, .calls = -1, .warmup_calls = -1};
	int json = 0;
	int err = cli_case_parse("run", argc, argv, CLI_CASE_DATA, &cs, &json, run_extra, &o);
	if (err)
		return err == -1 ? CLI_OK : err;
	int status = CLI_OK;
	struct tc_team *team = NULL;
	int p = tc_topo_nodes(cs.t);
	const int vc = !!(tc_coll_flags(cs.coll) & TC_CF_VCOUNT);
	if (!o.engine_mpi && (o.route || o.vs_mpi)) {
		status = cli_usage("run: %s is for --engine mpi (docs/mpi.md)",
		                   o.route ? "--route" : "--vs-mpi");
		goto out;
	}
	if (o.engine_mpi) {
		const struct cli_mpi_opts mo = {.direct = o.direct,
		                                .emulated = o.emulated,
		                                .vs_mpi = o.vs_mpi,
		                                .calls = o.calls,
		                                .repeat = o.repeat > 1 ? o.repeat : 5,
		                                .timeout_ms = o.timeout_ms};
		status = cli_run_mpi(&cs, &mo, argc, argv);
		goto out;
	}
	if (o.emulated && (o.calls > 1 || o.warmup_calls > 0)) {
		status = cli_usage("run: --calls and --warmup-calls are for native mode (emulated mode "
		                   "times one call per run against its logical clock)");
		goto out;
	}
	if (o.in_place && !cli_run_in_place(cs.coll)) {
		char list[256];
		status = cli_usage("run: --in-place: %s has no in-place form here (those that have: %s)",
		                   tc_coll_name(cs.coll), cli_run_in_place_list(list, sizeof list));
		goto out;
	}
	/* Two timestamps per rank and timed call. */
	if (o.calls > 0 && (uint64_t)o.calls * (uint64_t)p > ((uint64_t)1 << 26)) {
		status = cli_usage("run: --calls %ld on %d ranks: more than 2^26 timestamps (at most "
		                   "%llu calls)",
		                   o.calls, p, (unsigned long long)(((uint64_t)1 << 26) / (uint64_t)p));
		goto out;
	}
	if ((status = vc ? cli_run_check_memory_v(p, cs.coll, cs.root, cs.vcounts, tc_dtype_size(cs.dt))
	                 : cli_run_check_memory(p, cs.coll, cs.bytes)) != 0)
		goto out;

	/* --calibrated: this machine's parameters become the model (t_h 0:
	 * the channels are one hop), before anything is predicted. */
	struct tc_calibration cal;
	if (o.calibrated) {
		if (o.emulated) {
			status = cli_usage("run: --calibrated measures the native channels; not with "
			                   "--mode emulated");
			goto out;
		}
		if (o.cal_file) {
			if ((status = cli_calibration_read("run", o.cal_file, &cal)) != 0)
				goto out;
		} else {
			struct tc_calibrate_opts co;
			memset(&co, 0, sizeof co);
			co.no_pin = o.no_pin;
			if (cs.bytes > ((uint64_t)4 << 20))
				co.max_bytes = cs.bytes < ((uint64_t)64 << 20) ? (size_t)cs.bytes
				                                               : (size_t)64 << 20;
			err = tc_model_calibrate(&co, &cal);
			if (err) {
				status = cli_fail("run: calibration failed: %s", tc_strerror(err));
				goto out;
			}
		}
		/* The model of the segment holding the block size (the
		 * calibrated model, calibrate.h); the rest of the user's model
		 * (ports, duplex, switching) stays. */
		if ((status = cli_calibrated_model("run", &cal, cs.bytes, &cs.model.md)) != 0)
			goto out;
	}

	/* Predict first: an algorithm that does not apply is a usage error,
	 * found before any thread starts; and it gives the formula. */
	struct tc_prediction pr;
	if ((status = cli_case_predict(&cs, &pr)) != 0)
		goto out;

	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = cli_topo_name(cs.t);
	cfg.model = cs.model.md;
	cfg.mode = o.emulated ? TC_MODE_EMULATED : TC_MODE_NATIVE;
	cfg.wait = o.wait;
	cfg.no_pin = o.no_pin;
	cfg.timeout_ms = (uint64_t)o.timeout_ms;
	/* --calibrated: the team prices AUTO's candidates with it where its
	 * ranks each have a CPU (tc_team_config.calibration). */
	if (o.calibrated)
		cfg.calibration = &cal;
	cfg.stack_bytes = (size_t)o.stack_bytes;
	err = tc_team_create(&cfg, &team);
	if (err) {
		/* The library names stacks only where smaller ones would help: the
		 * hint says how, and never proposes what was given. */
		const char *hint = !strstr(tc_error_detail(), "stack") ? ""
		                   : !o.stack_bytes ? " (here: --stack BYTES, e.g. --stack 256K)"
		                   : o.stack_bytes > 64 * 1024
		                           ? " (here: a --stack below the one given, at least 64K)"
		                           : "";
		status = err == TC_EINVAL
		                 ? cli_usage("run: the team rejects this configuration: %s",
		                             *tc_error_detail() ? tc_error_detail() : tc_strerror(err))
		         : err == TC_ELIMIT
		                 ? cli_fail("run: cannot create the team: %s%s", tc_error_detail(), hint)
		                 : cli_fail("run: cannot create the team: %s", tc_strerror(err));
		goto out;
	}
	struct cli_run_args ra = {.coll = cs.coll,
	                          .alg = cs.alg,
	                          .bytes = cs.bytes,
	                          .dt = cs.dt,
	                          .op = cs.op,
	                          .root = cs.root,
	                          .q = cs.q,
	                          .shift_ring = cs.shift_ring,
	                          .gray_ring = cs.shift_ring && tc_topo_kind(cs.t) == TC_TOPO_HYPERCUBE,
	                          .members = cs.members,
	                          .nmembers = cs.nmembers,
	                          .repeat = (int)o.repeat,
	                          /* Emulated too: a team's first run also starts its
	                           * fibre CPUs and stacks (p = 64 fibres on
	                           * 2 CPUs at t_s = 100 us: 1-4 ms late, not 10 us). */
	                          .warmup = (int)(o.warmup >= 0 ? o.warmup : 1),
	                          .packets = cs.model.packets,
	                          .emulated = o.emulated,
	                          .vcounts = cs.vcounts,
	                          .calls = o.emulated    ? 1
	                                   : o.calls > 0 ? (int)o.calls
	                                                 : 0,
	                          .warmup_calls = o.warmup_calls >= 0 ? (int)o.warmup_calls
	                                          : o.emulated        ? 0
	                                                              : -1,
	                          .in_place = o.in_place};
	struct cli_run_result rr;
	err = cli_run_coll(team, &ra, &rr);
	if (err) {
		status = cli_coll_error(err, cs.coll, cs.alg, cs.t, cs.root);
		goto out;
	}
	/* AUTO on ranks that share CPUs may take another algorithm than the
	 * model's (a v-call takes `direct` there): the prediction, formula
	 * and bound reported are those of the algorithm that ran. */
	if (rr.algorithm && pr.algorithm && strcmp(rr.algorithm, pr.algorithm)) {
		struct cli_case ran = cs;
		ran.alg = rr.algorithm;
		if ((status = cli_case_predict(&ran, &pr)) != 0)
			goto out;
	}
	/* A v-call agrees on its counts (an exchange) before its schedule:
	 * the run's makespan holds both, the prediction and the formula the
	 * schedule (tc_last_coll) only. */
	const double vs_ns = vc ? rr.coll_modelled_ns : rr.modelled_ns;
	struct tc_team_info ti;
	tc_team_get_info(team, &ti);
	double err_pct =
	        rr.modelled_ns > 0 ? 100 * (rr.measured_ns - rr.modelled_ns) / rr.modelled_ns : NAN;
	/* --calibrated: measured against the prediction with this machine's
	 * parameters (that of the algorithm that ran: the model picked it). */
	double pred_ns = (double)pr.modelled_ps / TC_PS_PER_NS;
	int cal_seg = -1;
	double conc_share = 0, conc_sync = 0;
	if (o.calibrated) {
		/* The calibrated prediction: the segment of the schedule's mean
		 * message, plus o_call (tc_calibration_predict). */
		struct tc_call call = cli_case_call(&cs, rr.algorithm);
		err = tc_calibration_predict_placed(&cal, cs.t, &call, ti.place, NULL, &cal_seg, &pred_ns);
		if (!err) /* its concurrency charges (0 at p = 2), reported apart */
			err = tc_calibration_concurrency_ns(&cal, cs.t, &call, &conc_share, &conc_sync);
		if (err) {
			status = cli_coll_error(err, cs.coll, rr.algorithm, cs.t, cs.root);
			goto out;
		}
	}
	double cal_pct = o.calibrated && pred_ns > 0 ? 100 * (rr.measured_ns - pred_ns) / pred_ns : NAN;
	/* Where the modelled figures come from, and what the model leaves out. */
	const char *msrc = model_source(&cs.model.md, o.calibrated);
	char mdesc[160], mnote[256] = "";
	model_desc(&cs.model.md, msrc, mdesc, sizeof mdesc);
	if (!o.emulated && !o.calibrated)
		snprintf(mnote, sizeof mnote,
		         "the %s, not this machine's: --calibrated measures it", mdesc);
	else if (o.calibrated && ti.oversubscribed)
		snprintf(mnote, sizeof mnote,
		         "%d ranks on %d CPUs: the calibrated model prices messages as if every rank "
		         "had a CPU; it ignores the oversubscription, whose waits for a CPU the "
		         "measured time includes",
		         p, ti.cpus);
	double algbw, busbw, bwf;
	int has_bw = !vc && cli_busbw(cs.coll, p, cs.bytes, rr.measured_ns, &algbw, &busbw, &bwf) == 0;
	if (json) {
		struct cli_json w;
		cli_json_init(&w, stdout);
		cli_json_obj(&w, NULL);
		cli_case_json(&w, &cs);
		cli_json_str(&w, "mode", o.emulated ? "emulated" : "native");
		cli_json_str(&w, "algorithm", rr.algorithm);
		cli_json_bool(&w, "verified", rr.verified);
		cli_json_num(&w, "measured_ns", rr.measured_ns);
		cli_json_num(&w, "measured_min_ns", rr.measured_min_ns);
		cli_json_num(&w, "measured_max_ns", rr.measured_max_ns);
		cli_json_int(&w, "repeat", ra.repeat);
		cli_json_int(&w, "warmup", ra.warmup);
		cli_json_int(&w, "calls", rr.calls);
		cli_json_int(&w, "warmup_calls", rr.warmup_calls);
		cli_json_bool(&w, "in_place", ra.in_place);
		cli_json_num(&w, "call_avg_ns", rr.call_avg_ns);
		cli_json_num(&w, "call_min_ns", rr.call_min_ns);
		cli_json_num(&w, "call_max_ns", rr.call_max_ns);
		cli_json_num(&w, "algbw_gbps", has_bw ? algbw : NAN);
		cli_json_num(&w, "busbw_gbps", has_bw ? busbw : NAN);
		cli_json_num(&w, "busbw_factor", has_bw ? bwf : NAN);
		cli_json_str(&w, "model_source", msrc);
		cli_json_str(&w, "model_note", *mnote ? mnote : NULL);
		cli_json_num(&w, "run_modelled_ns", rr.run_modelled_ns);
		cli_json_num(&w, "modelled_ns", rr.modelled_ns);
		cli_json_num(&w, "coll_modelled_ns", rr.coll_modelled_ns);
		cli_json_num(&w, "predicted_ns", (double)pr.modelled_ps / TC_PS_PER_NS);
		cli_json_num(&w, "formula_ns", pr.formula_ns);
		cli_json_num(&w, "lower_bound_ns", pr.lower_bound_ns);
		cli_json_num(&w, "emulation_error_pct", o.emulated ? err_pct : NAN);
		if (o.calibrated) {
			cli_json_obj(&w, "calibration");
			cli_json_num(&w, "ts_ns", cal.ts_ns);
			cli_json_num(&w, "tw_ns_per_byte", cal.tw_ns_per_byte);
			cli_json_num(&w, "tc_ns_per_byte", cal.tc_ns_per_byte);
			cli_json_num(&w, "r2", cal.r2);
			cli_json_num(&w, "max_rel_residual", cal.max_rel_residual);
			cli_json_uint(&w, "hockney_max_bytes", cal.hockney_max_bytes);
			cli_json_num(&w, "piecewise_r2", cal.piecewise.r2);
			cli_json_num(&w, "piecewise_max_rel_residual", cal.piecewise.max_rel_residual);
			cli_json_int(&w, "segment", cal_seg);
			cli_json_num(&w, "segment_ts_ns", cal.segments[cal_seg].fit.ts_ns);
			cli_json_num(&w, "segment_tw_ns_per_byte",
			             cal.segments[cal_seg].fit.tw_ns_per_byte);
			cli_json_num(&w, "call_ns", cal.call_ns);
			cli_json_int(&w, "concurrency_ranks", cal.conc_ranks);
			cli_json_num(&w, "concurrency_share_ns", conc_share);
			cli_json_num(&w, "concurrency_sync_ns", conc_sync);
			cli_json_end_obj(&w);
			cli_json_num(&w, "calibrated_predicted_ns", pred_ns);
			cli_json_num(&w, "calibrated_error_pct", cal_pct);
		}
		cli_json_int(&w, "rounds", rr.rounds);
		cli_json_int(&w, "messages", pr.messages);
		cli_stats_json(&w, &rr.stats);
		cli_json_obj(&w, "team");
		cli_json_int(&w, "cpus", ti.cpus);
		cli_json_bool(&w, "oversubscribed", ti.oversubscribed);
		cli_json_uint(&w, "memory_bytes", ti.memory_bytes);
		cli_json_uint(&w, "spin_ns", ti.spin_ns);
		cli_json_uint(&w, "yield_ns", ti.yield_ns);
		cli_json_end_obj(&w);
		cli_json_end_obj(&w);
	} else {
		char b1[32], b2[32], b3[32];
		unsigned cf = tc_coll_flags(cs.coll);
		printf("%s on %s, %s%s%s (%s", tc_coll_name(cs.coll), cli_topo_name(cs.t),
		       vc ? "blocks up to " : "", cli_bytes(cs.bytes, b1, sizeof b1),
		       vc ? "" : " block per rank", tc_dtype_name(cs.dt));
		if (cf & TC_CF_REDUCES)
			printf(" %s", tc_op_name(cs.op));
		printf(")");
		cli_case_args_print(&cs);
		printf(", %s mode, %d CPUs%s\n", o.emulated ? "emulated" : "native", ti.cpus,
		       ti.oversubscribed ? " (oversubscribed)" : "");
		printf("algorithm        %s\n", rr.algorithm ? rr.algorithm : "?");
		printf("verified         %s\n", rr.verified ? "yes (every rank equals the sequential "
		                                              "reference)"
		                                            : "NO");
		printf("measured         %s  per call (median of %d run%s; min %s, max %s)\n",
		       cli_time(rr.measured_ns, b1), ra.repeat, ra.repeat == 1 ? "" : "s",
		       cli_time(rr.measured_min_ns, b2), cli_time(rr.measured_max_ns, b3));
		if (!o.emulated)
			printf("calls            %d per run back to back after %d warm-up%s%s: average "
			       "%s, fastest %s, slowest %s\n",
			       rr.calls, rr.warmup_calls, rr.warmup_calls == 1 ? "" : "s",
			       ra.in_place ? ", in place" : "", cli_time(rr.call_avg_ns, b1),
			       cli_time(rr.call_min_ns, b2), cli_time(rr.call_max_ns, b3));
		if (has_bw)
			printf("bandwidth        algbw %.3f GB/s, busbw %.3f GB/s (nccl-tests' "
			       "definitions: busbw = algbw x %.4g)\n",
			       algbw, busbw, bwf);
		printf("modelled         %s", cli_time(rr.modelled_ns, b1));
		if (o.emulated)
			printf("  (measured %+.1f%%) under the %s", err_pct, mdesc);
		else if (!o.calibrated)
			printf("  under %s", mnote);
		else
			printf("  under the %s", mdesc);
		printf("\n");
		if (o.calibrated) {
			const struct tc_calibration_segment *g = &cal.segments[cal_seg];
			printf("calibrated       segment %d (%s..%s): t_s %.1f ns, t_w %.4g ns/B; t_c %.4g "
			       "ns/B; o_call %.0f ns (piecewise fit R^2 %.3f, worst residual %.0f%%)\n",
			       cal_seg, cli_size_str(g->lo_bytes, b1, sizeof b1),
			       cli_size_str(g->hi_bytes, b2, sizeof b2), g->fit.ts_ns,
			       g->fit.tw_ns_per_byte, cs.model.md.tc_ns, cal.call_ns,
			       cal.piecewise.r2, 100 * cal.piecewise.max_rel_residual);
			printf("predicted        %s  with them (measured %+.1f%%)\n",
			       cli_time(pred_ns, b1), cal_pct);
			if (*mnote)
				printf("note             %s\n", mnote);
		}
		if (vc)
			printf("  of which data  %s  (the schedule of the counts, as predicted: %s; "
			       "before it the counts' agreement)\n",
			       cli_time(rr.coll_modelled_ns, b1),
			       cli_time((double)pr.modelled_ps / TC_PS_PER_NS, b2));
		printf("formula (source)   %s  (%s)\n", cli_time(pr.formula_ns, b1),
		       cli_vs_formula(vs_ns, pr.formula_ns, b2));
		printf("lower bound      %s%s\n", cli_time(pr.lower_bound_ns, b1),
		       cli_lb_note((double)pr.modelled_ps / TC_PS_PER_NS, &pr));
		printf("rounds           %d\n", rr.rounds);
		printf("stats            %llu messages, %llu bytes sent, %llu packets, %llu forwarded, "
		       "%llu sleeps (per call)\n",
		       (unsigned long long)rr.stats.msgs_sent, (unsigned long long)rr.stats.bytes_sent,
		       (unsigned long long)rr.stats.packets_sent, (unsigned long long)rr.stats.forwarded,
		       (unsigned long long)rr.stats.waits_blocked);
	}
	if (!rr.verified)
		status = cli_run_wrong("run", &rr);
out:
	tc_team_destroy(team);
	cli_case_free(&cs);
	return status;
}
