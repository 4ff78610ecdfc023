/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_trace.c - topocoll trace: runs one collective with the team's
 * event buffers on (topocoll/trace.h) and writes Chrome trace-event JSON
 * (the format Perfetto and chrome://tracing open).
 *
 * Layout: one process per virtual processor ("rank R"), and in it one track
 * per kind of event (send, receive, forward, combine, wait).  Events of one
 * kind that overlap in time (all-port sends, say) go to further tracks of the
 * same kind ("send 2"), so that the slices of a track never overlap and
 * therefore nest trivially.  Each message is a flow: it starts at its send
 * slice, steps through the forward slices of the ranks on its route and ends
 * at its receive slice.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_coll.h"
#include "cli_mpi.h"

const char trace_help[] =
        "usage: topocoll trace --topo SPEC --coll C [--alg A] [--bytes N] [--out FILE]\n"
        "                      [--clock logical|wall] [--mode native|emulated] [options]\n"
        "\n"
        "Runs one collective for real with event recording and writes Chrome\n"
        "trace-event JSON: a process per virtual processor with tracks for send,\n"
        "receive, forward, combine and wait slices, and a flow arrow per message\n"
        "from its send through its forwards to its receive.  Open the file in\n"
        "https://ui.perfetto.dev or chrome://tracing.  The result is checked as by\n"
        "topocoll run (exit status 1 if wrong).\n"
        "  --topo SPEC --p P --coll C --alg A --bytes N --root R --q Q --along-ring\n"
        "  --members LIST --counts LIST\n"
        "  --dtype T --op OP\n"
        "                    as for topocoll run\n"
        "  --out FILE        write the trace to FILE (default: stdout)\n"
        "  --clock C         logical: the model's logical clock (deterministic) or\n"
        "                    wall: wall-clock time since the run's start [logical]\n"
        "  --mode M          native or emulated [native]\n"
        "  --events N        per-rank event buffer [enough for the schedule]\n"
        "  --timeout MS      as for run [60000]\n"
        "  --engine E        threads, or mpi: the ranks are the processes of an MPI\n"
        "                    job (mpirun -np P topocoll trace --engine mpi, --topo of\n"
        "                    P nodes); process 0 gathers every process's events and\n"
        "                    writes the trace [threads]\n"
        "  --route R         --engine mpi: forward (hop by hop) or direct [forward]\n" CLI_MODEL_HELP
        "examples:\n"
        "  topocoll trace --topo hypercube:3 --coll allreduce --bytes 4K --out ar.json\n"
        "  topocoll trace --topo ring:8 --coll bcast --alg ring_pipelined --bytes 64K \\\n"
        "      --mode emulated --ts 20000 --clock wall --out bcast.json\n"
        "  topocoll trace --topo ring:5 --coll alltoallv --counts ramp --out a2av.json\n"
        "  mpirun -np 4 topocoll trace --engine mpi --topo ring:4 --coll allreduce \\\n"
        "      --bytes 1K --clock wall --out ar-mpi.json\n";

struct trace_opts {
	const char *out;
	int wall;
	int emulated;
	long events;
	long timeout_ms;
	int engine_mpi, direct; /* --engine mpi, --route direct (docs/mpi.md) */
	int route;              /* --route given (for --engine mpi only) */
};

static int trace_extra(int argc, char **argv, int *i, void *ctx)
{
	struct trace_opts *o = ctx;
	const char *v;
	int r;
	if ((r = cli_opt(argc, argv, i, "--out", &v)) == 1) {
		o->out = v;
		return 1;
	}
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--clock", &v)) == 1) {
		if (!strcmp(v, "logical"))
			o->wall = 0;
		else if (!strcmp(v, "wall"))
			o->wall = 1;
		else
			return cli_usage("--clock: expected logical or wall, got '%s'", v);
		return 1;
	}
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--mode", &v)) == 1)
		return cli_choice("--mode", v, "native", "emulated", &o->emulated) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--events", &v)) == 1)
		return cli_parse_long("--events", v, 16, 1L << 26, &o->events) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--timeout", &v)) == 1)
		return cli_parse_long("--timeout", v, 0, 86400000, &o->timeout_ms) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--engine", &v)) == 1)
		return cli_choice("--engine", v, "threads", "mpi", &o->engine_mpi) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--route", &v)) == 1) {
		o->route = 1;
		return cli_choice("--route", v, "forward", "direct", &o->direct) ? CLI_USAGE : 1;
	}
	return r;
}

static const char *const kind_name[] = {"send", "recv", "forward", "combine", "wait"};
#define TRACE_KINDS 5
#define TRACE_LANES 64

struct slice {
	int rank, kind, lane;
	double ts, dur; /* us */
	const struct tc_event *e;
};

static int slice_cmp(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->dur > y->dur) - (x->dur < y->dur);
}

/* Flow steps of one message: its slices in time order. */
static int flow_cmp(const void *a, const void *b)
{
	const struct slice *const *x = a, *const *y = b;
	const struct tc_event *ex = (*x)->e, *ey = (*y)->e;
	if (ex->call != ey->call)
		return ex->call < ey->call ? -1 : 1;
	if (ex->xfer != ey->xfer)
		return ex->xfer - ey->xfer;
	/* send first, then forwards in time, then the receive */
	int ox = ex->kind == TC_EV_SEND ? 0 : ex->kind == TC_EV_FORWARD ? 1 : 2;
	int oy = ey->kind == TC_EV_SEND ? 0 : ey->kind == TC_EV_FORWARD ? 1 : 2;
	if (ox != oy)
		return ox - oy;
	if ((*x)->ts != (*y)->ts)
		return (*x)->ts < (*y)->ts ? -1 : 1;
	return 0;
}

static void ev_common(FILE *f, const char *ph, const char *name, const char *cat, int pid, int tid,
                      double ts)
{
	char b[32];
	fprintf(f, "{\"ph\": \"%s\", \"name\": ", ph);
	cli_json_quote(f, name);
	fprintf(f, ", \"cat\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": %s", cat, pid, tid,
	        cli_num(ts, b));
}

/* mpi: started as topocoll-mpi with --engine mpi, process me of np_mpi
 * (the other processes print nothing: cli_mpi_begin). */
static int trace_main(int argc, char **argv, int mpi, int me, int np_mpi)
{
	struct cli_case cs;
	struct trace_opts o = {.timeout_ms = 60000};
	int err = cli_case_parse("trace", argc, argv, CLI_CASE_DATA, &cs, NULL, trace_extra, &o);
	if (err)
		return err == -1 ? CLI_OK : err;
	int status = CLI_OK;
	struct tc_team *team = NULL;
	struct slice *sl = NULL;
	struct slice **fl = NULL;
	FILE *f = NULL;
	struct tc_event **gev = NULL; /* over MPI: every process's events (process 0) */
	int *gn = NULL;
	int p = tc_topo_nodes(cs.t);
	if (o.route && !o.engine_mpi) {
		status = cli_usage("trace: --route is for --engine mpi (docs/mpi.md)");
		goto out;
	}
	if (mpi && p != np_mpi) {
		status = cli_usage("trace: --engine mpi: --topo %s has %d nodes but the launcher "
		                   "started %d processes (mpirun -np %d, or --topo for %d)",
		                   cli_topo_name(cs.t), p, np_mpi, p, np_mpi);
		goto out;
	}
	if ((status = tc_coll_flags(cs.coll) & TC_CF_VCOUNT
	                      ? cli_run_check_memory_v(p, cs.coll, cs.root, cs.vcounts,
	                                               tc_dtype_size(cs.dt))
	                      : cli_run_check_memory(p, cs.coll, cs.bytes)) != 0)
		goto out;
	struct tc_prediction pr;
	if ((status = cli_case_predict(&cs, &pr)) != 0)
		goto out;
	long cap = o.events ? o.events : 4 * (pr.hop_messages + pr.messages) + 8L * pr.rounds + 64;

	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = cli_topo_name(cs.t);
	cfg.model = cs.model.md;
	cfg.mode = o.emulated ? TC_MODE_EMULATED : TC_MODE_NATIVE;
	cfg.timeout_ms = (uint64_t)o.timeout_ms;
	cfg.trace_events = (size_t)cap;
	err = mpi ? cli_mpi_team(&cfg, o.direct, &team) : tc_team_create(&cfg, &team);
	if (err) {
		status = cli_fail("trace: cannot create the team: %s",
		                  err == TC_ELIMIT ? tc_error_detail() : tc_strerror(err));
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
	                          .repeat = 1,
	                          .warmup = 0,
	                          .packets = cs.model.packets,
	                          .emulated = o.emulated,
	                          .vcounts = cs.vcounts,
	                          .calls = 1,
	                          .warmup_calls = 0};
	struct cli_run_result rr;
	err = mpi ? cli_mpi_run_coll(team, &ra, &rr) : cli_run_coll(team, &ra, &rr);
	if (err) {
		status = cli_coll_error(err, cs.coll, cs.alg, cs.t, cs.root);
		goto out;
	}

	/* Collect the slices: each rank's events, over MPI each process's,
	 * gathered to process 0, which writes the trace. */
	long n = 0;
	uint64_t dropped = 0;
	if (mpi && (err = cli_mpi_gather_events(team, &gev, &gn, &dropped)) != 0) {
		status = cli_fail("trace: --engine mpi: gathering the events: %s", tc_strerror(err));
		goto out;
	}
	if (me != 0) {
		status = rr.verified ? CLI_OK : CLI_FAIL;
		goto out;
	}
	for (int r = 0; r < p; r++) {
		const struct tc_event *ev;
		uint64_t d = 0;
		int k = mpi ? gn[r] : tc_trace_events(team, r, &ev, &d);
		n += k > 0 ? k : 0;
		dropped += d;
	}
	sl = calloc(n ? (size_t)n : 1, sizeof *sl);
	fl = calloc(n ? (size_t)n : 1, sizeof *fl);
	if (!sl || !fl) {
		status = cli_fail("out of memory");
		goto out;
	}
	long ns = 0;
	for (int r = 0; r < p; r++) {
		const struct tc_event *ev = mpi ? gev[r] : NULL;
		int k = mpi ? gn[r] : tc_trace_events(team, r, &ev, NULL);
		for (int j = 0; j < k; j++) {
			const struct tc_event *e = &ev[j];
			if (e->kind < 0 || e->kind >= TRACE_KINDS)
				continue;
			double t0 = o.wall ? (double)e->wt0 / 1e3 : (double)e->lt0 / 1e6;
			double t1 = o.wall ? (double)e->wt1 / 1e3 : (double)e->lt1 / 1e6;
			sl[ns++] = (struct slice){.rank = r,
			                          .kind = e->kind,
			                          .ts = t0,
			                          .dur = t1 > t0 ? t1 - t0 : 0,
			                          .e = e};
		}
	}
	qsort(sl, (size_t)ns, sizeof *sl, slice_cmp);
	/* Lanes: the first lane of the same (rank, kind) whose last slice has
	 * ended. */
	int maxlane[TRACE_KINDS] = {0};
	for (long i = 0; i < ns;) {
		long j = i;
		double end[TRACE_LANES];
		int nl = 0;
		while (j < ns && sl[j].rank == sl[i].rank && sl[j].kind == sl[i].kind) {
			int l = 0;
			while (l < nl && end[l] > sl[j].ts)
				l++;
			if (l == nl && nl < TRACE_LANES)
				nl++;
			if (l == TRACE_LANES)
				l = TRACE_LANES - 1; /* cannot happen with sane buffers */
			end[l] = sl[j].ts + sl[j].dur;
			sl[j].lane = l;
			j++;
		}
		if (nl > maxlane[sl[i].kind])
			maxlane[sl[i].kind] = nl;
		i = j;
	}

	f = o.out ? fopen(o.out, "w") : stdout;
	if (!f) {
		status = cli_fail("trace: cannot write %s: %s", o.out, strerror(errno));
		goto out;
	}
	char b1[32], title[256];
	const int vc = !!(tc_coll_flags(cs.coll) & TC_CF_VCOUNT);
	snprintf(title, sizeof title, "%s %s on %s, %s%s%s", tc_coll_name(cs.coll),
	         rr.algorithm ? rr.algorithm : "?", cli_topo_name(cs.t), vc ? "blocks up to " : "",
	         cli_bytes(cs.bytes, b1, sizeof b1), vc ? "" : " block per rank");
	fprintf(f, "{\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"title\": ");
	cli_json_quote(f, title);
	/* The algorithm that ran, and whether AUTO chose it. */
	const int chosen = !cs.alg || !strcmp(cs.alg, "auto");
	fprintf(f, ", \"algorithm\": ");
	cli_json_quote(f, rr.algorithm ? rr.algorithm : "?");
	fprintf(f, ", \"algorithm_requested\": ");
	cli_json_quote(f, chosen ? "auto" : cs.alg);
	if (mpi)
		fprintf(f, ", \"engine\": \"mpi\", \"processes\": %d", rr.processes);
	else
		fprintf(f, ", \"engine\": \"threads\"");
	fprintf(f,
	        ", \"clock\": \"%s\", \"mode\": \"%s\", \"verified\": %s, \"modelled_ns\": %s, "
	        "\"events\": %ld, \"dropped\": %llu},\n\"traceEvents\": [\n",
	        o.wall ? "wall" : "logical", o.emulated ? "emulated" : "native",
	        rr.verified ? "true" : "false", cli_num(rr.modelled_ns, b1), ns,
	        (unsigned long long)dropped);
	/* Metadata: names and order of processes and tracks. */
	for (int r = 0; r < p; r++) {
		fprintf(f,
		        "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": {\"name\": "
		        "\"rank %d\"}},\n",
		        r, r);
		fprintf(f,
		        "{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": %d, \"args\": "
		        "{\"sort_index\": %d}},\n",
		        r, r);
		for (int k = 0; k < TRACE_KINDS; k++)
			for (int l = 0; l < (maxlane[k] ? maxlane[k] : 1); l++) {
				int tid = k * TRACE_LANES + l;
				fprintf(f,
				        "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, "
				        "\"args\": {\"name\": \"%s%s\"}},\n",
				        r, tid, kind_name[k],
				        l ? (char[8]){' ', (char)('1' + l % 9), 0} : "");
				fprintf(f,
				        "{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": %d, "
				        "\"tid\": %d, \"args\": {\"sort_index\": %d}},\n",
				        r, tid, tid);
			}
	}
	/* Slices. */
	long nflow = 0;
	for (long i = 0; i < ns; i++) {
		const struct slice *s = &sl[i];
		const struct tc_event *e = s->e;
		char name[96], b2[32];
		switch (e->kind) {
		case TC_EV_SEND:
			snprintf(name, sizeof name, "send %d->%d", e->src, e->dst);
			break;
		case TC_EV_RECV:
			snprintf(name, sizeof name, "recv %d->%d", e->src, e->dst);
			break;
		case TC_EV_FORWARD:
			snprintf(name, sizeof name, "forward %d->%d via %d", e->src, e->dst, e->peer);
			break;
		case TC_EV_COMBINE:
			snprintf(name, sizeof name, "combine from %d", e->src);
			break;
		default:
			snprintf(name, sizeof name, "wait round %d", e->round);
			break;
		}
		ev_common(f, "X", name, kind_name[e->kind], s->rank,
		          e->kind * TRACE_LANES + s->lane, s->ts);
		fprintf(f, ", \"dur\": %s, \"args\": {\"round\": %d, \"call\": %llu, \"bytes\": %llu",
		        cli_num(s->dur, b2), e->round, (unsigned long long)e->call,
		        (unsigned long long)e->bytes);
		if (e->xfer >= 0)
			fprintf(f, ", \"xfer\": %d, \"src\": %d, \"dst\": %d, \"peer\": %d",
			        e->xfer, e->src, e->dst, e->peer);
		fprintf(f, ", \"logical_ns\": [%s, %s], \"wall_ns\": [%llu, %llu]}},\n",
		        cli_num((double)e->lt0 / TC_PS_PER_NS, b1),
		        cli_num((double)e->lt1 / TC_PS_PER_NS, b2), (unsigned long long)e->wt0,
		        (unsigned long long)e->wt1);
		if (e->xfer >= 0 && e->src != e->dst &&
		    (e->kind == TC_EV_SEND || e->kind == TC_EV_RECV || e->kind == TC_EV_FORWARD))
			fl[nflow++] = &sl[i];
	}
	/* Flows: per message, s at the send, t at each forward, f at the
	 * receive; only messages with both ends recorded. */
	qsort(fl, (size_t)nflow, sizeof *fl, flow_cmp);
	long flows = 0;
	for (long i = 0; i < nflow;) {
		long j = i;
		while (j < nflow && fl[j]->e->call == fl[i]->e->call && fl[j]->e->xfer == fl[i]->e->xfer)
			j++;
		if (fl[i]->e->kind == TC_EV_SEND && fl[j - 1]->e->kind == TC_EV_RECV && j - i >= 2) {
			unsigned long long id = (unsigned long long)fl[i]->e->call * 100000000ULL +
			                        (unsigned long long)fl[i]->e->xfer + 1;
			for (long k = i; k < j; k++) {
				const struct slice *s = fl[k];
				const char *ph = k == i ? "s" : k == j - 1 ? "f" : "t";
				char name[64];
				snprintf(name, sizeof name, "msg %d->%d", s->e->src, s->e->dst);
				ev_common(f, ph, name, "message", s->rank,
				          s->e->kind * TRACE_LANES + s->lane, s->ts);
				fprintf(f, ", \"id\": %llu%s},\n", id,
				        k == j - 1 ? ", \"bp\": \"e\"" : "");
			}
			flows++;
		}
		i = j;
	}
	/* A last metadata event closes the array without a trailing comma. */
	fprintf(f, "{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 0, \"args\": {\"labels\": ");
	cli_json_quote(f, title);
	fprintf(f, "}}\n]}\n");
	if (o.out) {
		if (fclose(f)) {
			f = NULL;
			status = cli_fail("trace: cannot write %s: %s", o.out, strerror(errno));
			goto out;
		}
		f = NULL;
		printf("wrote %s: %s %s%s, %ld slices, %ld message flows, %s clock%s; open it in "
		       "https://ui.perfetto.dev or chrome://tracing\n",
		       o.out, tc_coll_name(cs.coll), rr.algorithm ? rr.algorithm : "?",
		       chosen ? " (chosen by auto)" : "", ns, flows, o.wall ? "wall" : "logical",
		       dropped ? " (some events dropped: raise --events)" : "");
	} else {
		/* The trace is on stdout: the choice goes beside it. */
		fprintf(stderr, "trace: %s %s%s\n", tc_coll_name(cs.coll),
		        rr.algorithm ? rr.algorithm : "?", chosen ? " (chosen by auto)" : "");
	}
	if (!rr.verified)
		status = cli_run_wrong("trace", &rr);
	else if (dropped)
		status = cli_fail("trace: %llu events did not fit the buffers; raise --events",
		                  (unsigned long long)dropped);
out:
	if (f && f != stdout)
		fclose(f);
	free(sl);
	free(fl);
	for (int r = 0; gev && r < p; r++)
		free(gev[r]);
	free(gev);
	free(gn);
	if (mpi)
		cli_mpi_team_destroy(team);
	else
		tc_team_destroy(team);
	cli_case_free(&cs);
	return status;
}

int cmd_trace(int argc, char **argv)
{
	if (!cli_wants_mpi(argc, argv))
		return trace_main(argc, argv, 0, 0, 1);
	int me = 0, np = 1;
	int status = cli_mpi_begin("trace", argc, argv, &me, &np);
	if (status)
		return status;
	return cli_mpi_end(trace_main(argc, argv, 1, me, np));
}
