/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_sweep.c - topocoll sweep: predictions and runs over a grid of
 * topologies, p, collectives, algorithms, sizes and modes; a table, CSV or
 * JSON, and a gnuplot plot (tools/cli_sweep_plot.c).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_coll.h"
#include "cli_mpi.h"
#include "cli_sweep.h"

const char sweep_help[] =
        "usage: topocoll sweep --topo LIST --coll LIST [--p LIST] [--bytes LIST]\n"
        "                      [--alg LIST|all|auto] [--mode LIST] [--csv|--json]\n"
        "                      [--plot FILE.png|FILE.svg] [options]\n"
        "\n"
        "Predicts (and with --mode native or emulated, runs and checks) every\n"
        "combination of topology, collective, algorithm, size and mode, printing\n"
        "one row per case as it completes.  Algorithms that do not apply to a\n"
        "topology, and cases that cannot be priced (the reason once on stderr),\n"
        "are skipped and counted.  Progress goes to stderr: a bar on a terminal,\n"
        "one line per case otherwise (--quiet: none).\n"
        "  --topo LIST       comma-separated specs (ring:16, torus:4x4) or families\n"
        "                    (ring, chain, complete, star, hypercube, mesh, torus,\n"
        "                    tree:K) that take each p of --p\n"
        "  --p LIST          node counts for the families: 8,16 or LO:HI (doubling)\n"
        "                    or LO:HI:F (times F); a full SPEC must have one of them\n"
        "  --coll LIST       @COLLS@\n"
        "  --alg LIST        algorithm names, all (default) or auto\n"
        "  --bytes LIST      block sizes m per rank (as for predict): 8,1K or LO:HI\n"
        "                    (doubling: 8:16M) or LO:HI:F; not needed for barrier;\n"
        "                    the v-collectives: every block m (equal counts), their\n"
        "                    modelled time the data's schedule (as predicted)\n"
        "  --mode LIST       predict (default), native, emulated: predict only\n"
        "                    predicts; the others also run the collective for real\n"
        "  --root R --dtype T --op OP   as for topocoll run; the root goes to the\n"
        "                    rooted collectives, the operator to the reducing ones\n"
        "  --q Q --along-ring --members LIST   as for topocoll run: the shift's q, the\n"
        "                    multicast's member set (default: every rank of each\n"
        "                    topology)\n"
        "  --repeat N --warmup N --wait W --no-pin --timeout MS   as for run\n"
        "  --engine mpi --route forward|direct   runs on the processes of an MPI\n"
        "                    job (mpirun -np P; P-node topologies; docs/mpi.md)\n"
        "  --csv             CSV on stdout: topology,p,coll,algorithm,mode,bytes,\n"
        "                    measured_ns,modelled_ns,formula_ns,lower_bound_ns,\n"
        "                    rounds,messages, the model (ts_ns,tw_ns_per_byte,th_ns,\n"
        "                    tc_ns_per_byte,mu,ports,duplex,switching,combining,\n"
        "                    packets), command (the command line), verified (empty\n"
        "                    where not measured)\n"
        "  --json            a JSON array, one object per case, each with the model\n"
        "                    and the command line\n"
        "  --plot FILE       time against bytes (against p when p varies and the\n"
        "                    size does not), log-log, one colour, dash and point\n"
        "                    shape per algorithm: modelled lines, measured points\n"
        "                    (native: filled circles, emulated: filled squares), the\n"
        "                    model and the command line written on it and in FILE's\n"
        "                    data (.dat) and script (.gp) beside it and runs gnuplot\n"
        "                    (apt-get install gnuplot-nox; without it the data and\n"
        "                    script are still written and the exit status is 1)\n"
        "  --quiet           no progress on stderr\n" CLI_MODEL_HELP "examples:\n"
        "  topocoll sweep --topo hypercube:6 --coll bcast --bytes 8:16M --plot bcast.png\n"
        "  topocoll sweep --topo ring,torus,hypercube --p 16,64 --coll allreduce \\\n"
        "      --bytes 1K:1M:4 --csv > allreduce.csv\n"
        "  topocoll sweep --topo ring:8 --coll bcast,reduce --bytes 64:64K:8 \\\n"
        "      --mode predict,native --repeat 3 --plot ring8.svg\n";

#define SWEEP_MAX_LIST 64
#define SWEEP_MAX_SIZES 256

/* LIST of sizes or counts: items v or LO:HI[:F]. */
static int sweep_values(const char *what, const char *list, int counts, uint64_t max, uint64_t *out,
                        int cap, int *n)
{
	char buf[1024];
	char *items[SWEEP_MAX_SIZES];
	if (strlen(list) >= sizeof buf)
		return cli_usage("%s: list too long", what);
	strcpy(buf, list);
	int k = cli_split(buf, items, SWEEP_MAX_SIZES);
	if (k < 0)
		return cli_usage("%s: bad list '%s' (comma-separated, no empty items)", what, list);
	*n = 0;
	for (int i = 0; i < k; i++) {
		char *parts[3];
		int np = 0;
		for (char *s = items[i]; np < 3;) {
			parts[np++] = s;
			char *c = strchr(s, ':');
			if (!c)
				break;
			*c = '\0';
			s = c + 1;
		}
		if (strchr(parts[np - 1], ':'))
			return cli_usage("%s: bad range in '%s' (LO:HI or LO:HI:F)", what, list);
		uint64_t v[2];
		for (int j = 0; j < (np < 2 ? np : 2); j++) {
			if (counts) {
				long l;
				if (cli_parse_long(what, parts[j], 1, (long)max, &l))
					return CLI_USAGE;
				v[j] = (uint64_t)l;
			} else if (cli_parse_size(what, parts[j], max, &v[j])) {
				return CLI_USAGE;
			}
		}
		if (np == 1) {
			if (*n >= cap)
				return cli_usage("%s: more than %d values", what, cap);
			out[(*n)++] = v[0];
			continue;
		}
		long f = 2;
		if (np == 3) {
			char *end;
			errno = 0;
			f = strtol(parts[2], &end, 10);
			if (errno || end == parts[2] || *end || f < 2 || f > 1 << 20)
				return cli_usage("%s: the factor F of LO:HI:F must be an integer in "
				                 "2..%d, got '%s'",
				                 what, 1 << 20, parts[2]);
		}
		if (v[0] > v[1])
			return cli_usage("%s: range %s:%s goes down", what, parts[0], parts[1]);
		uint64_t x = v[0];
		for (;;) {
			if (*n >= cap)
				return cli_usage("%s: more than %d values", what, cap);
			out[(*n)++] = x;
			if (x == 0)
				x = 1; /* 0:HI goes 0, 1, 2, 4, ... */
			else if (x > v[1] / (uint64_t)f)
				break;
			else
				x *= (uint64_t)f;
			if (x > v[1])
				break;
		}
	}
	return 0;
}

static const char *const sweep_modes[] = {"predict", "native", "emulated"};

static void sweep_csv_header(void)
{
	printf("topology,p,coll,algorithm,mode,bytes,measured_ns,modelled_ns,formula_ns,"
	       "lower_bound_ns,rounds,messages,ts_ns,tw_ns_per_byte,th_ns,tc_ns_per_byte,mu,ports,"
	       "duplex,switching,combining,packets,command,verified\n");
}

/* The model's columns, and the command line as a quoted CSV field (before
 * verified, which stays the last column). */
static void sweep_csv_meta(const struct sweep_meta *meta)
{
	const struct tc_model *md = &meta->m->md;
	char b[4][32];
	printf(",%s,%s,%s,%s,%zu,%s,%s,%s,%s,%d,\"", cli_num(md->ts_ns, b[0]),
	       cli_num(md->tw_ns, b[1]), cli_num(md->th_ns, b[2]), cli_num(md->tc_ns, b[3]), md->mu,
	       md->ports == TC_PORTS_ALL ? "all" : "one", md->duplex == TC_DUPLEX_HALF ? "half" : "full",
	       md->switching == TC_SWITCH_CT ? "ct" : "sf", md->combining ? "on" : "off",
	       meta->m->packets);
	for (const char *c = meta->command; *c; c++) {
		if (*c == '"')
			putchar('"');
		putchar(*c);
	}
	putchar('"');
}

static void csv_num(double v)
{
	char b[32];
	if (isfinite(v))
		fputs(cli_num(v, b), stdout);
}

static void sweep_csv_row(const struct sweep_row *r, const struct sweep_meta *meta)
{
	printf("%s,%d,%s,%s,%s,%llu,", r->topo, r->p, tc_coll_name(r->coll), r->alg,
	       sweep_modes[r->mode], (unsigned long long)r->bytes);
	csv_num(r->measured_ns);
	putchar(',');
	csv_num(r->modelled_ns);
	putchar(',');
	csv_num(r->formula_ns);
	putchar(',');
	csv_num(r->lower_bound_ns);
	printf(",%d,%ld", r->rounds, r->messages);
	sweep_csv_meta(meta);
	printf(",%s\n", r->verified < 0 ? "" : r->verified ? "true" : "false");
	fflush(stdout);
}

static void sweep_json_row(struct cli_json *w, const struct sweep_row *r, const struct sweep_meta *meta)
{
	cli_json_obj(w, NULL);
	cli_json_str(w, "topology", r->topo);
	cli_json_int(w, "p", r->p);
	cli_json_str(w, "coll", tc_coll_name(r->coll));
	cli_json_str(w, "algorithm", r->alg);
	cli_json_str(w, "mode", sweep_modes[r->mode]);
	cli_json_uint(w, "bytes", r->bytes);
	cli_json_num(w, "measured_ns", r->measured_ns);
	cli_json_num(w, "modelled_ns", r->modelled_ns);
	cli_json_num(w, "formula_ns", r->formula_ns);
	cli_json_num(w, "lower_bound_ns", r->lower_bound_ns);
	cli_json_int(w, "rounds", r->rounds);
	cli_json_int(w, "messages", r->messages);
	if (r->verified < 0)
		cli_json_null(w, "verified");
	else
		cli_json_bool(w, "verified", r->verified);
	if (r->error)
		cli_json_str(w, "error", r->error);
	if (r->processes)
		cli_json_int(w, "processes", r->processes);
	cli_model_json(w, meta->m);
	cli_json_str(w, "command", meta->command);
	cli_json_end_obj(w);
	fflush(w->f);
}

static void sweep_text_header(void)
{
	printf("%-14s %5s %-11s %-15s %-8s %9s %11s %11s %11s %11s %6s %s\n", "topology", "p",
	       "coll", "algorithm", "mode", "bytes", "measured", "modelled", "formula", "lower bd",
	       "rounds", "ok");
}

static void sweep_text_row(const struct sweep_row *r)
{
	char b[5][32];
	printf("%-14s %5d %-11s %-15s %-8s %9s %11s %11s %11s %11s %6d %s\n", r->topo, r->p,
	       tc_coll_name(r->coll), r->alg, sweep_modes[r->mode], cli_size_str(r->bytes, b[0], 32),
	       cli_time(r->measured_ns, b[1]), cli_time(r->modelled_ns, b[2]),
	       cli_time(r->formula_ns, b[3]), cli_time(r->lower_bound_ns, b[4]), r->rounds,
	       r->error          ? r->error
	       : r->verified < 0 ? "-"
	       : r->verified     ? "yes"
	                         : "WRONG");
	fflush(stdout);
}

/* The command line, each argument shell-quoted where it needs it. */
static void sweep_command(int argc, char **argv, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "topocoll sweep");
	for (int i = 0; i < argc && o + 4 < len; i++) {
		const char *a = argv[i];
		int plain = *a != '\0';
		for (const char *c = a; *c; c++)
			plain &= !!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			                  "-_.,:/=+@%",
			                  *c);
		buf[o++] = ' ';
		if (!plain)
			buf[o++] = '\'';
		for (const char *c = a; *c && o + 6 < len; c++) {
			if (*c == '\'' && !plain) {
				memcpy(buf + o, "'\\''", 4);
				o += 4;
			} else {
				buf[o++] = *c;
			}
		}
		if (!plain)
			buf[o++] = '\'';
		buf[o] = '\0';
	}
}

/* ---- topocoll sweep ---------------------------------------------------- */

struct sweep_opts {
	const char *topo, *p, *coll, *alg, *bytes, *mode, *root, *dtype, *op, *plot, *q, *members;
	int csv, json, quiet, along_ring;
	long repeat, warmup, timeout_ms;
	enum tc_wait_policy wait;
	int no_pin;
	int engine_mpi, direct; /* --engine mpi, --route direct (docs/mpi.md) */
	int route;              /* --route given (for --engine mpi only) */
};

/* mpi: started as topocoll-mpi with --engine mpi, process me of np (the
 * other processes print nothing: cli_mpi_begin). */
static int sweep_main(int argc, char **argv, int mpi, int me, int np_mpi)
{
	struct sweep_opts o = {.repeat = 1, .warmup = -1, .timeout_ms = 60000, .quiet = me != 0};
	struct cli_model m;
	cli_model_init(&m);
	for (int i = 0; i < argc; i++) {
		static const char *const names[] = {"--topo",  "--p",    "--coll", "--alg",
		                                    "--bytes", "--mode", "--root", "--dtype",
		                                    "--op",    "--plot", "--q",    "--members"};
		const char **slots[] = {&o.topo, &o.p,     &o.coll, &o.alg,  &o.bytes, &o.mode,
		                        &o.root, &o.dtype, &o.op,   &o.plot, &o.q,     &o.members};
		const char *v;
		int r, done = 0;
		if (cli_is_help(argv[i])) {
			cli_help_print(stdout, sweep_help);
			return CLI_OK;
		}
		if (!strcmp(argv[i], "--csv")) {
			o.csv = 1;
			continue;
		}
		if (!strcmp(argv[i], "--json")) {
			o.json = 1;
			continue;
		}
		if (!strcmp(argv[i], "--quiet")) {
			o.quiet = 1;
			continue;
		}
		if (!strcmp(argv[i], "--along-ring")) {
			o.along_ring = 1;
			continue;
		}
		if (!strcmp(argv[i], "--no-pin")) {
			o.no_pin = 1;
			continue;
		}
		for (int k = 0; k < 12 && !done; k++) {
			r = cli_opt(argc, argv, &i, names[k], &v);
			if (r == 1) {
				*slots[k] = v;
				done = 1;
			} else if (r) {
				return r;
			}
		}
		if (done)
			continue;
		static const char *const lnames[] = {"--repeat", "--warmup", "--timeout"};
		long *lslots[] = {&o.repeat, &o.warmup, &o.timeout_ms};
		static const long lo[] = {1, 0, 0}, hi[] = {1000000, 1000000, 86400000};
		for (int k = 0; k < 3 && !done; k++) {
			r = cli_opt(argc, argv, &i, lnames[k], &v);
			if (r == 1) {
				if (cli_parse_long(lnames[k], v, lo[k], hi[k], lslots[k]))
					return CLI_USAGE;
				done = 1;
			} else if (r) {
				return r;
			}
		}
		if (done)
			continue;
		if ((r = cli_opt(argc, argv, &i, "--engine", &v)) == 1) {
			if (cli_choice("--engine", v, "threads", "mpi", &o.engine_mpi))
				return CLI_USAGE;
			continue;
		} else if (r) {
			return r;
		}
		if ((r = cli_opt(argc, argv, &i, "--route", &v)) == 1) {
			o.route = 1;
			if (cli_choice("--route", v, "forward", "direct", &o.direct))
				return CLI_USAGE;
			continue;
		} else if (r) {
			return r;
		}
		if ((r = cli_opt(argc, argv, &i, "--wait", &v)) == 1) {
			static const char *const wn[] = {"auto", "spin", "yield", "block"};
			int k = 0;
			while (k < 4 && strcmp(v, wn[k]))
				k++;
			if (k == 4)
				return cli_usage("--wait: expected auto, spin, yield or block, got '%s'",
				                 v);
			o.wait = (enum tc_wait_policy)k;
			continue;
		} else if (r) {
			return r;
		}
		r = cli_model_opt(argc, argv, &i, &m);
		if (r == 1)
			continue;
		if (r)
			return r;
		return cli_unknown("sweep", argv[i]);
	}
	if (o.csv && o.json)
		return cli_usage("sweep: choose one of --csv and --json");
	if (o.route && !o.engine_mpi)
		return cli_usage("sweep: --route is for --engine mpi (docs/mpi.md)");
	if (!o.topo)
		return cli_usage("sweep: missing --topo LIST (e.g. ring:16 or ring,torus --p 16,64)");
	if (!o.coll)
		return cli_usage("sweep: missing --coll LIST (bcast, reduce, allreduce, barrier)");
	if (o.plot) {
		size_t l = strlen(o.plot);
		if (l < 5 || (strcmp(o.plot + l - 4, ".png") && strcmp(o.plot + l - 4, ".svg")))
			return cli_usage("--plot: the file must end in .png or .svg, got '%s'", o.plot);
		int st = cli_sweep_plot_check(o.plot);
		if (st)
			return st;
	}
	char command[4096];
	sweep_command(argc, argv, command, sizeof command);
	const struct sweep_meta meta = {.command = command, .m = &m};

	/* Lists. */
	char cbuf[256], abuf[1024], mbuf[128], tbuf[2048];
	char *colls_s[8], *algs[SWEEP_MAX_LIST], *modes_s[3], *topos_s[SWEEP_MAX_LIST];
	enum tc_coll colls[8];
	int ncoll, nalg = 0, nmode = 1, ntopo, all = 1;
	int modes[3] = {0, 0, 0};
	if (strlen(o.coll) >= sizeof cbuf || (ncoll = cli_split(strcpy(cbuf, o.coll), colls_s, 8)) < 0)
		return cli_usage("--coll: bad list '%s'", o.coll);
	int only_barrier = 1;
	for (int k = 0; k < ncoll; k++) {
		if (cli_coll(colls_s[k], &colls[k]))
			return CLI_USAGE;
		only_barrier &= !!(tc_coll_flags(colls[k]) & TC_CF_NO_DATA);
	}
	if (o.alg && strcmp(o.alg, "all")) {
		all = 0;
		if (strlen(o.alg) >= sizeof abuf ||
		    (nalg = cli_split(strcpy(abuf, o.alg), algs, SWEEP_MAX_LIST)) < 0)
			return cli_usage("--alg: bad list '%s'", o.alg);
		for (int k = 0; k < nalg; k++) {
			if (!strcmp(algs[k], "auto"))
				continue;
			int found = 0;
			for (int c = 0; c < ncoll; c++)
				found |= cli_alg_index(colls[c], algs[k]) >= 0;
			if (!found) {
				char list[512];
				return cli_usage("unknown algorithm '%s' for %s (available: %s)",
				                 algs[k], tc_coll_name(colls[0]),
				                 cli_alg_list(colls[0], list, sizeof list));
			}
		}
	}
	if (o.mode) {
		if (strlen(o.mode) >= sizeof mbuf ||
		    (nmode = cli_split(strcpy(mbuf, o.mode), modes_s, 3)) < 0)
			return cli_usage("--mode: bad list '%s' (predict, native, emulated)", o.mode);
		for (int k = 0; k < nmode; k++) {
			int x = 0;
			while (x < 3 && strcmp(modes_s[k], sweep_modes[x]))
				x++;
			if (x == 3)
				return cli_usage("--mode: expected predict, native or emulated, got '%s'",
				                 modes_s[k]);
			modes[k] = x;
		}
	}
	uint64_t sizes[SWEEP_MAX_SIZES], ps[SWEEP_MAX_LIST];
	int nsize = 1, np = 0;
	sizes[0] = 0;
	if (!o.bytes && !only_barrier)
		return cli_usage("sweep: missing --bytes LIST (e.g. 8:16M, or 1K,64K)");
	if (o.bytes && sweep_values("--bytes", o.bytes, 0, TC_MAX_MESSAGE, sizes, SWEEP_MAX_SIZES, &nsize))
		return CLI_USAGE;
	if (o.p && sweep_values("--p", o.p, 1, TC_TOPO_MAX_NODES, ps, SWEEP_MAX_LIST, &np))
		return CLI_USAGE;
	if (mpi && !o.p) /* over MPI, a family is sized by the job */
		ps[np++] = (uint64_t)np_mpi;
	enum tc_dtype dt = TC_DOUBLE;
	int dt_given = o.dtype != NULL;
	if (dt_given && cli_dtype(o.dtype, &dt))
		return CLI_USAGE;
	for (int k = 0; dt_given && k < nsize; k++)
		if (sizes[k] % tc_dtype_size(dt))
			return cli_usage("--bytes %llu is not a multiple of the size of %s (%zu bytes)",
			                 (unsigned long long)sizes[k], tc_dtype_name(dt),
			                 tc_dtype_size(dt));
	for (int k = 0; !only_barrier && k < nsize; k++)
		if (cli_packets_check(&m, sizes[k], dt_given ? dt : cli_default_dtype(sizes[k])))
			return CLI_USAGE;
	enum tc_op op = TC_OP_SUM;
	if (o.op && cli_op(o.op, &op))
		return CLI_USAGE;
	if (o.op && dt_given && !cli_op_fits(op, dt))
		return cli_usage("--op %s is not defined for %s", o.op, tc_dtype_name(dt));
	long root = 0;
	if (o.root && cli_parse_node("--root", o.root, NULL, &root)) /* each topology's: below */
		return CLI_USAGE;
	long q = 0;
	if (o.q && cli_parse_long("--q", o.q, LONG_MIN, LONG_MAX, &q))
		return CLI_USAGE;

	/* Topologies: specs as they are, families once per p. */
	if (strlen(o.topo) >= sizeof tbuf ||
	    (ntopo = cli_split(strcpy(tbuf, o.topo), topos_s, SWEEP_MAX_LIST)) < 0)
		return cli_usage("--topo: bad list '%s'", o.topo);
	struct tc_topo *topos[SWEEP_MAX_LIST * 4];
	char *names[SWEEP_MAX_LIST * 4];
	int nt = 0, status = CLI_OK;
	for (int k = 0; k < ntopo && status == CLI_OK; k++) {
		const char *colon = strchr(topos_s[k], ':');
		int family = !colon || (!strncmp(topos_s[k], "tree:", 5) && !strchr(colon + 1, ':'));
		int reps = family ? (np ? np : 1) : 1;
		for (int j = 0; j < reps && status == CLI_OK; j++) {
			if (nt >= SWEEP_MAX_LIST * 4) {
				status = cli_usage("sweep: too many topologies");
				break;
			}
			/* A full SPEC with --p must have one of its p, as predict's
			 * --p checks a SPEC (one p: the same message). */
			long pk = family && np                ? (long)ps[j]
			          : !family && o.p && np == 1 ? (long)ps[0]
			                                      : 0;
			if (cli_topo(topos_s[k], pk, &topos[nt])) {
				status = CLI_USAGE;
				break;
			}
			names[nt] = strdup(cli_topo_name(topos[nt]));
			int fits = family || !o.p;
			for (int x = 0; x < np && !fits; x++)
				fits = ps[x] == (uint64_t)tc_topo_nodes(topos[nt]);
			if (!fits) {
				status = cli_usage("--p %s: no p fits %s (%d nodes); --p sizes the "
				                   "families, a full SPEC must have one of its p",
				                   o.p, names[nt], tc_topo_nodes(topos[nt]));
				nt++;
				break;
			}
			if (root >= tc_topo_nodes(topos[nt])) {
				status = cli_usage("root %ld out of range for %s (0..%d)", root,
				                   names[nt], tc_topo_nodes(topos[nt]) - 1);
				nt++;
				break;
			}
			nt++;
		}
	}
	int runs = 0;
	for (int k = 0; k < nmode; k++)
		runs |= modes[k] != 0;
	for (int k = 0; k < nt && status == CLI_OK && runs && mpi; k++)
		if (tc_topo_nodes(topos[k]) != np_mpi)
			status = cli_usage("sweep: --engine mpi: %s has %d nodes but the launcher started "
			                   "%d processes (mpirun -np %d, or topologies of %d nodes)",
			                   names[k], tc_topo_nodes(topos[k]), np_mpi,
			                   tc_topo_nodes(topos[k]), np_mpi);
	for (int k = 0; k < nt && status == CLI_OK && runs; k++)
		for (int c = 0; c < ncoll && status == CLI_OK; c++)
			for (int s = 0; s < nsize && status == CLI_OK; s++)
				status = cli_run_check_memory(tc_topo_nodes(topos[k]), colls[c],
				                              sizes[s]);

	/* The grid. */
	long total = 0;
	for (int c = 0; c < ncoll; c++) {
		int na = 0;
		if (all)
			while (tc_alg_name(colls[c], na))
				na++;
		else
			na = nalg;
		total += (long)nt * na * (tc_coll_flags(colls[c]) & TC_CF_NO_DATA ? 1 : nsize) * nmode;
	}
	struct sweep_row *rows = calloc(total ? (size_t)total : 1, sizeof *rows);
	if (!rows && status == CLI_OK)
		status = cli_fail("out of memory");
	int nrows = 0, skipped = 0, unpriced = 0, wrong = 0, failed = 0;
	struct cli_progress pg;
	cli_progress_init(&pg, total, o.quiet);
	struct cli_json w;
	cli_json_init(&w, stdout);
	if (status == CLI_OK) {
		if (o.csv)
			sweep_csv_header();
		else if (o.json) {
			w.nl_depth = 1;
			cli_json_arr(&w, NULL);
		} else {
			sweep_text_header();
		}
	}
	int *members = NULL, nmembers = 0;
	for (int k = 0; k < nt && status == CLI_OK; k++) {
		struct tc_team *teams[3] = {NULL, NULL, NULL};
		int p = tc_topo_nodes(topos[k]);
		/* The multicast's set on this topology: --members, or every rank. */
		free(members);
		status = cli_parse_members(o.members, p, &members, &nmembers);
		if (status)
			break;
		for (int c = 0; c < ncoll && status == CLI_OK; c++) {
			int na = all ? 0 : nalg;
			if (all)
				while (tc_alg_name(colls[c], na))
					na++;
			for (int a = 0; a < na && status == CLI_OK; a++) {
				const char *alg = all ? tc_alg_name(colls[c], a) : algs[a];
				int said = 0; /* a case not priced was reported */
				unsigned cf = tc_coll_flags(colls[c]);
				int ns = cf & TC_CF_NO_DATA ? 1 : nsize;
				if (!all && strcmp(alg, "auto") && cli_alg_index(colls[c], alg) < 0) {
					/* Named for another collective of the list. */
					for (int x = 0; x < ns * nmode; x++)
						cli_progress_step(&pg, "skipped");
					continue;
				}
				for (int s = 0; s < ns && status == CLI_OK; s++) {
					uint64_t bytes = cf & TC_CF_NO_DATA ? 0 : sizes[s];
					enum tc_dtype cdt = dt_given ? dt : cli_default_dtype(bytes);
					enum tc_op cop = cli_op_fits(op, cdt) ? op : TC_OP_SUM;
					int croot = cf & TC_CF_ROOTED ? (int)root : 0;
					struct tc_prediction pr;
					/* The v-collectives: every block of the size. */
					size_t *vcounts = NULL;
					if ((cf & TC_CF_VCOUNT) &&
					    !(vcounts = cli_vcounts_uniform(colls[c], p,
					                                    bytes / tc_dtype_size(cdt)))) {
						status = cli_fail("out of memory");
						break;
					}
					struct tc_call call = {.coll = colls[c],
					                       .alg = strcmp(alg, "auto") ? alg : NULL,
					                       .bytes = bytes,
					                       .esize = tc_dtype_size(cdt),
					                       .root = croot,
					                       .packets = m.packets,
					                       .q = q,
					                       .shift_ring = o.along_ring,
					                       .members = members,
					                       .nmembers = nmembers};
					call = cli_vcall(call, vcounts);
					int err = tc_predict_call(topos[k], &m.md, &call, &pr);
					for (int x = 0; x < nmode && status == CLI_OK; x++) {
						char what[160];
						char b[32];
						snprintf(what, sizeof what, "%s %s %s %s %s",
						         names[k], tc_coll_name(colls[c]), alg,
						         cli_size_str(bytes, b, sizeof b),
						         sweep_modes[modes[x]]);
						cli_progress_step(&pg, what);
						if (err == TC_ENOTSUP) {
							skipped++;
							continue;
						}
						if (err == TC_ELIMIT || err == TC_EOVERFLOW ||
						    err == TC_ENOMEM) {
							/* Not priced (over the simulator's
							 * limit, buffers over the largest
							 * message): skipped, the reason said
							 * once per algorithm. */
							char why[200];
							if (!said && me == 0 && pg.tty && !o.quiet)
								fputs("\r\033[K", stderr); /* over the bar */
							if (!said && me == 0)
								fprintf(stderr,
								        "sweep: %s %s %s %s not "
								        "priced, skipped: %s\n",
								        names[k],
								        tc_coll_name(colls[c]), alg, b,
								        cli_coll_reason(err, why,
								                        sizeof why));
							said = 1;
							unpriced++;
							continue;
						}
						if (err) {
							status = cli_coll_error(err, colls[c], alg,
							                        topos[k], croot);
							break;
						}
						struct sweep_row *r = &rows[nrows];
						*r = (struct sweep_row){.topo = names[k],
						                        .p = p,
						                        .coll = colls[c],
						                        .alg = pr.algorithm,
						                        .mode = modes[x],
						                        .bytes = bytes,
						                        .measured_ns = NAN,
						                        .modelled_ns = (double)pr.modelled_ps /
						                                       TC_PS_PER_NS,
						                        .formula_ns = pr.formula_ns,
						                        .lower_bound_ns = pr.lower_bound_ns,
						                        .rounds = pr.rounds,
						                        .messages = pr.messages,
						                        .verified = -1};
						if (modes[x]) {
							int mi = modes[x];
							if (!teams[mi]) {
								struct tc_team_config cfg;
								tc_team_config_default(&cfg);
								cfg.topology = names[k];
								cfg.model = m.md;
								cfg.mode = mi == 2 ? TC_MODE_EMULATED
								                   : TC_MODE_NATIVE;
								cfg.wait = o.wait;
								cfg.no_pin = o.no_pin;
								cfg.timeout_ms = (uint64_t)o.timeout_ms;
								int e = mpi ? cli_mpi_team(&cfg, o.direct,
								                           &teams[mi])
								            : tc_team_create(&cfg,
								                             &teams[mi]);
								if (e) {
									status = cli_fail("sweep: cannot create a team on %s: %s",
									                  names[k],
									                  tc_strerror(e));
									break;
								}
							}
							struct cli_run_args ra =
							        {.coll = colls[c],
							         .alg = strcmp(alg, "auto") ? alg : NULL,
							         .bytes = bytes,
							         .dt = cdt,
							         .op = cop,
							         .root = croot,
							         .q = q,
							         .members = members,
							         .nmembers = nmembers,
							         .shift_ring = o.along_ring,
							         .gray_ring = o.along_ring &&
							                      tc_topo_kind(topos[k]) ==
							                              TC_TOPO_HYPERCUBE,
							         .repeat = (int)o.repeat,
							         .warmup = (int)(o.warmup >= 0 ? o.warmup
							                                       : 1),
							         .packets = m.packets,
							         .emulated = mi == 2,
							         .vcounts = vcounts,
							         .calls = mi == 2 ? 1 : 0,
							         .warmup_calls = mi == 1 ? -1 : 0};
							struct cli_run_result rr;
							int e = mpi ? cli_mpi_run_coll(teams[mi],
							                               &ra, &rr)
							            : cli_run_coll(teams[mi], &ra, &rr);
							if (e) {
								r->error = tc_err_name(e);
								r->verified = 0;
								failed++;
							} else {
								r->measured_ns = rr.measured_ns;
								/* A v-call's schedule, without the
								 * agreement of its counts. */
								r->modelled_ns =
								        cf & TC_CF_VCOUNT
								                ? rr.coll_modelled_ns
								                : rr.modelled_ns;
								r->verified = rr.verified;
								r->rounds = rr.rounds;
								r->processes = rr.processes;
								wrong += !rr.verified;
							}
						}
						if (pg.tty && !o.quiet && isatty(1))
							fputs("\r\033[K", stderr); /* the bar shares the terminal */
						if (o.csv)
							sweep_csv_row(r, &meta);
						else if (o.json)
							sweep_json_row(&w, r, &meta);
						else
							sweep_text_row(r);
						nrows++;
					}
					free(vcounts);
				}
			}
		}
		for (int x = 0; x < 3; x++) {
			if (mpi)
				cli_mpi_team_destroy(teams[x]);
			else
				tc_team_destroy(teams[x]);
		}
	}
	cli_progress_end(&pg);
	if (o.json && status != CLI_USAGE && (status == CLI_OK || nrows))
		cli_json_end_arr(&w);
	if (status == CLI_OK && nrows == 0 && unpriced)
		status = cli_fail("sweep: no case could be priced (%d not priced, as said above; %d "
		                  "not applicable)",
		                  unpriced, skipped);
	if (status == CLI_OK && nrows == 0)
		status = cli_usage("sweep: no algorithm applies to any case (%d skipped)", skipped);
	if (status == CLI_OK && !o.quiet && unpriced)
		fprintf(stderr,
		        "sweep: %d rows, %d cases skipped (%d algorithm not applicable, %d not "
		        "priced)\n",
		        nrows, skipped + unpriced, skipped, unpriced);
	else if (status == CLI_OK && !o.quiet && skipped)
		fprintf(stderr, "sweep: %d rows, %d cases skipped (algorithm not applicable)\n",
		        nrows, skipped);
	if (status == CLI_OK && o.plot && me == 0)
		status = cli_sweep_plot(o.plot, rows, nrows, &meta);
	if (status == CLI_OK && (wrong || failed))
		status = cli_fail("sweep: %d cases gave a wrong result, %d runs failed", wrong, failed);
	free(rows);
	free(members);
	for (int k = 0; k < nt; k++) {
		tc_topo_destroy(topos[k]);
		free(names[k]);
	}
	return status;
}

int cmd_sweep(int argc, char **argv)
{
	if (!cli_wants_mpi(argc, argv))
		return sweep_main(argc, argv, 0, 0, 1);
	int me = 0, np = 1;
	int status = cli_mpi_begin("sweep", argc, argv, &me, &np);
	if (status)
		return status;
	return cli_mpi_end(sweep_main(argc, argv, 1, me, np));
}
