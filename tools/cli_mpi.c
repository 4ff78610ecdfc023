/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_mpi.c - `topocoll run|sweep|trace --engine mpi` (topocoll-mpi,
 * which topocoll starts: tools/cli_mpi_exec.c).  run: the case run by a team
 * over the processes of an MPI job (topocoll/mpi.h, docs/mpi.md), started
 * as `mpirun -np P topocoll run --engine mpi --topo SPEC:P ...`.  Process
 * 0 prints: the result checked against the same call on a team of threads
 * (every process's buffer), the measured time per call, the modelled
 * time, with --mode emulated the emulated time of one call against it,
 * and with --vs-mpi the MPI library's own collective of the same shape
 * timed the same way.  sweep and trace: a team over the job's processes
 * in place of a team of threads (cli_mpi_team), the case run on it by
 * every process (cli_mpi_run_coll) and the events gathered to process 0
 * (cli_mpi_gather_events); process 0 prints.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_coll.h"
#include "cli_mpi.h"
#include "topocoll/mpi.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Element i of rank r's input: small integers, exact in every type. */
static void fill(void *buf, size_t n, enum tc_dtype dt, int r)
{
	for (size_t i = 0; i < n; i++) {
		int v = (int)((size_t)(r * 7) + i) % 13 + 1;
		switch (dt) {
#define FILL(name, type)                    \
	case TC_##name:                     \
		((type *)buf)[i] = (type)v; \
		break;
			TC_DTYPE_MAP(FILL)
#undef FILL
		default:
			break;
		}
	}
}

struct mpi_call {
	const struct cli_case *cs;
	size_t count; /* elements of one block */
	size_t sbytes, rbytes;
	const char *alg;
};

static int call(struct tc_proc *proc, const struct mpi_call *c, const void *s, void *r)
{
	const struct cli_case *cs = c->cs;
	struct tc_coll_opts o = {.alg = c->alg, .packets = cs->model.packets, .shift_ring = cs->shift_ring};
	switch (cs->coll) {
	case TC_COLL_BCAST:
		return tc_bcast(proc, r, c->count, cs->dt, cs->root, &o);
	case TC_COLL_REDUCE:
		return tc_reduce(proc, s, r, c->count, cs->dt, cs->op, cs->root, &o);
	case TC_COLL_ALLREDUCE:
		return tc_allreduce(proc, s, r, c->count, cs->dt, cs->op, &o);
	case TC_COLL_BARRIER:
		return tc_barrier(proc, &o);
	case TC_COLL_ALLGATHER:
		return tc_allgather(proc, s, r, c->count, cs->dt, &o);
	case TC_COLL_REDUCE_SCATTER:
		return tc_reduce_scatter(proc, s, r, c->count, cs->dt, cs->op, &o);
	case TC_COLL_SCAN:
		return tc_scan(proc, s, r, c->count, cs->dt, cs->op, &o);
	case TC_COLL_EXSCAN:
		return tc_exscan(proc, s, r, c->count, cs->dt, cs->op, &o);
	case TC_COLL_SCATTER:
		return tc_scatter(proc, s, r, c->count, cs->dt, cs->root, &o);
	case TC_COLL_GATHER:
		return tc_gather(proc, s, r, c->count, cs->dt, cs->root, &o);
	case TC_COLL_ALLTOALL:
		return tc_alltoall(proc, s, r, c->count, cs->dt, &o);
	case TC_COLL_SHIFT:
		return tc_shift(proc, s, r, c->count, cs->dt, (int)cs->q, &o);
	case TC_COLL_GRAY2BINARY:
		return tc_gray2binary(proc, s, r, c->count, cs->dt, &o);
	case TC_COLL_BINARY2GRAY:
		return tc_binary2gray(proc, s, r, c->count, cs->dt, &o);
	default:
		return TC_ENOTSUP;
	}
}

static MPI_Datatype mpi_type(enum tc_dtype dt)
{
	switch (dt) {
	case TC_INT8:
		return MPI_INT8_T;
	case TC_INT16:
		return MPI_INT16_T;
	case TC_INT32:
		return MPI_INT32_T;
	case TC_INT64:
		return MPI_INT64_T;
	case TC_UINT8:
		return MPI_UINT8_T;
	case TC_UINT16:
		return MPI_UINT16_T;
	case TC_UINT32:
		return MPI_UINT32_T;
	case TC_UINT64:
		return MPI_UINT64_T;
	case TC_FLOAT:
		return MPI_FLOAT;
	case TC_DOUBLE:
		return MPI_DOUBLE;
	default:
		return MPI_BYTE;
	}
}

static MPI_Op mpi_op(enum tc_op op)
{
	switch (op) {
	case TC_OP_SUM:
		return MPI_SUM;
	case TC_OP_PROD:
		return MPI_PROD;
	case TC_OP_MIN:
		return MPI_MIN;
	case TC_OP_MAX:
		return MPI_MAX;
	case TC_OP_BAND:
		return MPI_BAND;
	case TC_OP_BOR:
		return MPI_BOR;
	case TC_OP_BXOR:
		return MPI_BXOR;
	default:
		return MPI_OP_NULL;
	}
}

/* MPI's own collective of the same shape; MPI_ERR_OTHER where it has none. */
static int mpi_own(const struct mpi_call *c, const void *s, void *r, MPI_Comm comm)
{
	const struct cli_case *cs = c->cs;
	const int n = (int)c->count;
	const MPI_Datatype t = mpi_type(cs->dt);
	switch (cs->coll) {
	case TC_COLL_BCAST:
		return MPI_Bcast(r, n, t, cs->root, comm);
	case TC_COLL_REDUCE:
		return MPI_Reduce(s, r, n, t, mpi_op(cs->op), cs->root, comm);
	case TC_COLL_ALLREDUCE:
		return MPI_Allreduce(s, r, n, t, mpi_op(cs->op), comm);
	case TC_COLL_BARRIER:
		return MPI_Barrier(comm);
	case TC_COLL_ALLGATHER:
		return MPI_Allgather(s, n, t, r, n, t, comm);
	case TC_COLL_REDUCE_SCATTER:
		return MPI_Reduce_scatter_block(s, r, n, t, mpi_op(cs->op), comm);
	case TC_COLL_SCAN:
		return MPI_Scan(s, r, n, t, mpi_op(cs->op), comm);
	case TC_COLL_EXSCAN:
		return MPI_Exscan(s, r, n, t, mpi_op(cs->op), comm);
	case TC_COLL_SCATTER:
		return MPI_Scatter(s, n, t, r, n, t, cs->root, comm);
	case TC_COLL_GATHER:
		return MPI_Gather(s, n, t, r, n, t, cs->root, comm);
	case TC_COLL_ALLTOALL:
		return MPI_Alltoall(s, n, t, r, n, t, comm);
	default:
		return MPI_ERR_OTHER;
	}
}

struct thr_ctx {
	const struct mpi_call *c;
	unsigned char *out; /* p receive buffers */
};

static int thr_fn(struct tc_proc *proc, void *arg)
{
	struct thr_ctx *x = arg;
	const struct mpi_call *c = x->c;
	int r = tc_rank(proc);
	unsigned char *s = calloc(1, c->sbytes + 1);
	unsigned char *o = x->out + (size_t)r * c->rbytes;
	fill(s, c->sbytes / tc_dtype_size(c->cs->dt), c->cs->dt, r);
	if (c->cs->coll == TC_COLL_BCAST && r == c->cs->root)
		fill(o, c->count, c->cs->dt, r);
	int err = call(proc, c, s, o);
	free(s);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Median over `repeat` of the slowest process's time per call of `calls`
 * calls (ns); fn 0: ours, 1: MPI's own.  Returns the error or 0. */
static int time_calls(struct tc_proc *proc, const struct mpi_call *c, int own, long calls,
                      long repeat, void *s, void *r, double *med, double *best)
{
	uint64_t *t = calloc((size_t)repeat, sizeof *t);
	int err = 0;
	for (long k = 0; k < repeat && !err; k++) {
		MPI_Barrier(MPI_COMM_WORLD);
		uint64_t t0 = mono_ns();
		for (long i = 0; i < calls && !err; i++)
			err = own ? (mpi_own(c, s, r, MPI_COMM_WORLD) != MPI_SUCCESS ? TC_ESYS : 0)
			          : call(proc, c, s, r);
		uint64_t d = mono_ns() - t0;
		MPI_Allreduce(&d, &t[k], 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
	}
	qsort(t, (size_t)repeat, sizeof *t, cmp_u64);
	*med = (double)t[repeat / 2] / (double)calls;
	*best = (double)t[0] / (double)calls;
	free(t);
	return err;
}

int cli_run_mpi(const struct cli_case *cs, const struct cli_mpi_opts *mo, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!tc_mpi_launched())
		return cli_usage("run: --engine mpi: this process was not started by an MPI launcher; "
		                 "start it as: mpirun -np P topocoll run --engine mpi --topo SPEC ... "
		                 "(P processes, the topology's node count)");
	MPI_Init(NULL, NULL);
	int me, np, status = CLI_OK, err = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	char spec[64];
	tc_topo_spec(cs->t, spec, sizeof spec);
	if (tc_topo_nodes(cs->t) != np) {
		if (me == 0)
			cli_usage("run: --engine mpi: --topo %s has %d nodes but the launcher started %d "
			          "processes (mpirun -np %d, or --topo for %d)",
			          spec, tc_topo_nodes(cs->t), np, tc_topo_nodes(cs->t), np);
		MPI_Finalize();
		return CLI_USAGE;
	}
	const unsigned f = tc_coll_flags(cs->coll);
	const size_t es = tc_dtype_size(cs->dt);
	struct mpi_call c = {.cs = cs, .count = (size_t)cs->bytes / es, .alg = cs->alg};
	c.sbytes = (f & TC_CF_NO_SEND)  ? 0
	           : (f & TC_CF_SEND_P) ? cs->bytes * (size_t)np
	                                : cs->bytes;
	c.rbytes = (f & TC_CF_NO_DATA)  ? 0
	           : (f & TC_CF_RECV_P) ? cs->bytes * (size_t)np
	                                : cs->bytes;
	if (cs->coll == TC_COLL_BCAST)
		c.rbytes = cs->bytes;

	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.model = cs->model.md;
	cfg.timeout_ms = (uint64_t)mo->timeout_ms;
	struct tc_mpi_opts opts = {.route = mo->direct ? TC_MPI_DIRECT : TC_MPI_FORWARD};
	struct tc_team *team = NULL;
	struct tc_proc *proc = NULL;
	err = tc_team_create_mpi(MPI_COMM_WORLD, &cfg, &opts, &team, &proc);
	unsigned char *s = calloc(1, c.sbytes + 1), *r = calloc(1, c.rbytes + 1);
	unsigned char *all = NULL, *thr = NULL;
	if (err) {
		if (me == 0)
			status = cli_fail("run: --engine mpi: %s (%s)", tc_strerror(err),
			                  tc_error_detail());
		goto out;
	}
	fill(s, c.sbytes / es, cs->dt, me);
	if (cs->coll == TC_COLL_BCAST && me == cs->root)
		fill(r, c.count, cs->dt, me);
	err = call(proc, &c, s, r);
	struct tc_coll_info ci;
	tc_last_coll(proc, &ci);
	tc_time_t clk = ci.modelled_ps;

	/* The result against the thread engine's, on process 0. */
	int same = 1;
	if (me == 0) {
		all = calloc((size_t)np, c.rbytes + 1);
		thr = calloc((size_t)np, c.rbytes + 1);
	}
	MPI_Gather(r, (int)c.rbytes, MPI_BYTE, all, (int)c.rbytes, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (me == 0 && !err) {
		struct tc_team *tt = NULL;
		struct tc_team_config tcfg = cfg;
		tcfg.p = np;
		struct thr_ctx x = {&c, thr};
		int terr = tc_team_create(&tcfg, &tt);
		if (!terr)
			terr = tc_run(tt, thr_fn, &x);
		same = !terr && !memcmp(all, thr, (size_t)np * c.rbytes);
		if (tt)
			tc_team_destroy(tt);
	}
	int any = 0;
	MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (any) {
		if (me == 0 || err)
			status = cli_fail("run: --engine mpi: process %d: %s (%s)", me,
			                  tc_strerror(err ? err : any), tc_error_detail());
		goto out;
	}
	char vers[MPI_MAX_LIBRARY_VERSION_STRING] = "";
	int vl = 0;
	MPI_Get_library_version(vers, &vl);
	char *nl = strchr(vers, '\n');
	if (nl)
		*nl = '\0';
	if (strlen(vers) > 40)
		vers[40] = '\0';
	if (me == 0) {
		printf("engine     mpi (%s), %d processes, routed transfers %s\n", vers, np,
		       mo->direct ? "direct" : "forwarded hop by hop");
		printf("topology   %s\n", spec);
		printf("call       %s %llu B %s, algorithm %s%s\n", tc_coll_name(cs->coll),
		       (unsigned long long)cs->bytes, tc_dtype_name(cs->dt), ci.algorithm,
		       cs->alg ? "" : " (auto)");
		printf("result     %s\n", same ? "every process's buffer equals the thread engine's"
		                               : "DIFFERS from the thread engine's");
	}
	if (!same)
		status = CLI_FAIL;
	long calls = mo->calls > 0 ? mo->calls : (cs->bytes >= 65536 ? 50 : 500);
	double med = 0, best = 0, omed = 0, obest = 0;
	for (long w = 0; w < 20 && !err; w++)
		err = call(proc, &c, s, r);
	if (!err)
		err = time_calls(proc, &c, 0, calls, mo->repeat, s, r, &med, &best);
	tc_time_t mx = 0;
	MPI_Allreduce(&clk, &mx, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	if (me == 0) {
		char b1[32], b2[32];
		printf("measured   %s per call (median of %ld runs of %ld calls; best %s)\n",
		       cli_time(med, b1), mo->repeat, calls, cli_time(best, b2));
		printf("modelled   %s\n", cli_time((double)ci.modelled_ps / 1000.0, b1));
	}
	if (mo->vs_mpi && !err) {
		for (long w = 0; w < 20; w++)
			mpi_own(&c, s, r, MPI_COMM_WORLD);
		if (time_calls(proc, &c, 1, calls, mo->repeat, s, r, &omed, &obest) == 0 && me == 0) {
			char b1[32], b2[32];
			printf("mpi's own  %s per call (best %s); ours / MPI's: %.2f (best %.2f)\n",
			       cli_time(omed, b1), cli_time(obest, b2), med / omed, best / obest);
		} else if (me == 0) {
			printf("mpi's own  none for %s\n", tc_coll_name(cs->coll));
		}
	}
	tc_team_destroy_mpi(team);
	team = NULL;
	if (mo->emulated && !err) {
		/* One call per run, started together at a logical time every
		 * process's wall clock has not passed yet. */
		cfg.mode = TC_MODE_EMULATED;
		err = tc_team_create_mpi(MPI_COMM_WORLD, &cfg, &opts, &team, &proc);
		uint64_t *wl = calloc((size_t)mo->repeat, sizeof *wl);
		for (long k = 0; k < mo->repeat && !err; k++) {
			uint64_t epoch = tc_mpi_epoch_ns(team);
			uint64_t ahead = mono_ns() - epoch, start = 0;
			MPI_Allreduce(&ahead, &start, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
			start += 2000000u; /* 2 ms for the slowest to get there */
			tc_time_t c0 = tc_clock(proc);
			if ((tc_time_t)start * 1000 > c0)
				err = tc_clock_advance(proc, (double)((tc_time_t)start * 1000 - c0) /
				                                     1000.0);
			c0 = tc_clock(proc);
			if (!err)
				err = call(proc, &c, s, r);
			uint64_t end = mono_ns() - epoch, wend = 0;
			MPI_Allreduce(&end, &wend, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
			tc_time_t c1 = tc_clock(proc), cm = 0;
			MPI_Allreduce(&c1, &cm, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
			wl[k] = wend - (uint64_t)(c0 / 1000);
			(void)cm;
		}
		if (!err && me == 0) {
			qsort(wl, (size_t)mo->repeat, sizeof *wl, cmp_u64);
			char b1[32];
			double mod = (double)ci.modelled_ps / 1000.0;
			printf("emulated   %s (median of %ld calls) = %.3f x modelled\n",
			       cli_time((double)wl[mo->repeat / 2], b1), mo->repeat,
			       (double)wl[mo->repeat / 2] / mod);
		}
		free(wl);
	}
	if (err && me == 0)
		status = cli_fail("run: --engine mpi: %s (%s)", tc_strerror(err), tc_error_detail());
out:
	free(s);
	free(r);
	free(all);
	free(thr);
	tc_team_destroy_mpi(team);
	MPI_Finalize();
	return status;
}

/* ---- sweep and trace over MPI ------------------------------------------ */

int cli_mpi_begin(const char *cmd, int argc, char **argv, int *me, int *np)
{
	(void)argc;
	(void)argv;
	if (!tc_mpi_launched())
		return cli_usage("%s: --engine mpi: this process was not started by an MPI launcher; "
		                 "start it as: mpirun -np P topocoll %s --engine mpi --topo SPEC ... "
		                 "(P processes, the topology's node count)",
		                 cmd, cmd);
	MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, me);
	MPI_Comm_size(MPI_COMM_WORLD, np);
	if (*me != 0) {
		fflush(stdout);
		if (!freopen("/dev/null", "w", stdout))
			fclose(stdout);
		cli_msg_quiet = 1;
	}
	return CLI_OK;
}

int cli_mpi_end(int status)
{
	int worst = status;
	MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	fflush(stdout);
	MPI_Finalize();
	return worst;
}

/* The teams of cli_mpi_team and this process's rank of each. */
#define CLI_MPI_TEAMS 8
static struct {
	struct tc_team *team;
	struct tc_proc *proc;
} mpi_teams[CLI_MPI_TEAMS];

static struct tc_proc *proc_of(const struct tc_team *team)
{
	for (int i = 0; i < CLI_MPI_TEAMS; i++)
		if (team && mpi_teams[i].team == team)
			return mpi_teams[i].proc;
	return NULL;
}

int cli_mpi_team(const struct tc_team_config *cfg, int direct, struct tc_team **team)
{
	*team = NULL;
	int slot = 0;
	while (slot < CLI_MPI_TEAMS && mpi_teams[slot].team)
		slot++;
	if (slot == CLI_MPI_TEAMS)
		return TC_ELIMIT; /* the same everywhere: no process calls MPI */
	struct tc_mpi_opts opts = {.route = direct ? TC_MPI_DIRECT : TC_MPI_FORWARD};
	struct tc_proc *proc = NULL;
	int err = tc_team_create_mpi(MPI_COMM_WORLD, cfg, &opts, team, &proc);
	if (!err) {
		mpi_teams[slot].team = *team;
		mpi_teams[slot].proc = proc;
	}
	return err;
}

void cli_mpi_team_destroy(struct tc_team *team)
{
	for (int i = 0; i < CLI_MPI_TEAMS; i++)
		if (team && mpi_teams[i].team == team)
			mpi_teams[i].team = NULL, mpi_teams[i].proc = NULL;
	tc_team_destroy_mpi(team);
}

/* The error of the lowest process that has one (every process gets it),
 * or 0. */
static int agree_err(int err)
{
	int me, who, first = INT_MAX;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	who = err ? me : INT_MAX;
	MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (first == INT_MAX)
		return 0;
	int e = err;
	MPI_Bcast(&e, 1, MPI_INT, first, MPI_COMM_WORLD);
	return e;
}

/* Raises every process's logical clock to the largest of them and floor;
 * *c0 is that common start.  Emulated: waits for it. */
static int align_clock(struct tc_proc *proc, tc_time_t floor, tc_time_t *c0)
{
	tc_time_t c = tc_clock(proc), mx = 0;
	if (c < floor)
		c = floor;
	MPI_Allreduce(&c, &mx, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	*c0 = mx;
	tc_time_t now = tc_clock(proc);
	return mx > now ? tc_clock_advance(proc, (double)(mx - now) / 1000.0) : 0;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

int cli_mpi_run_coll(struct tc_team *team, const struct cli_run_args *a, struct cli_run_result *res)
{
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	memset(res, 0, sizeof *res);
	res->mismatch_rank = -1;
	struct tc_proc *proc = proc_of(team);
	const int nrun = a->repeat > 0 ? a->repeat : 1;
	const int total = (a->warmup > 0 ? a->warmup : 0) + nrun;
	const int auto_calls = a->calls <= 0 && !a->emulated;
	struct cli_rank_run *x = proc ? cli_rank_run_new(a, np, me) : NULL;
	double *meas = calloc((size_t)nrun, sizeof *meas);
	int err = agree_err(!proc ? TC_EINVAL : !x || !meas ? TC_ENOMEM : 0);
	struct tc_coll_info ci = {0};
	long long bad = -1;
	double call_sum = 0;
	long call_n = 0;
	res->verified = 1;
	res->call_min_ns = INFINITY;
	for (int k = 0; k < total && !err; k++) {
		const int timed = k >= total - nrun;
		int wcalls = 0, done = 0, kk = 0;
		tc_time_t c0 = 0;
		double m = 0;
		if (a->emulated) {
			/* One call, every process starting at a logical time no
			 * wall clock has passed yet (2 ms for the slowest to get
			 * there). */
			const uint64_t epoch = tc_mpi_epoch_ns(team);
			const tc_time_t floor = (tc_time_t)(mono_ns() - epoch + 2000000u) * 1000;
			err = align_clock(proc, floor, &c0);
			cli_rank_run_prep(x, 1);
			if (!err)
				err = cli_rank_run_call(x, proc, kk++);
			/* The result is checked after the run's time is taken
			 * (below: the last call's). */
			int64_t v[2] = {(int64_t)(mono_ns() - epoch), err != 0}, mx[2];
			MPI_Allreduce(v, mx, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
			if (mx[1] && (err = agree_err(err)))
				break;
			m = (double)mx[0] - (double)c0 / 1000.0;
			done = 1;
		} else {
			const int calls = a->calls > 0 ? a->calls : 1;
			const int batches = auto_calls && timed;
			wcalls = a->warmup_calls < 0 ? batches || calls > 1 : a->warmup_calls;
			err = align_clock(proc, 0, &c0);
			cli_rank_run_prep(x, 1);
			for (; kk < wcalls && !err; kk++) {
				if (kk)
					cli_rank_run_prep(x, 0);
				err = cli_rank_run_call(x, proc, kk);
				if (!err && kk == 0 && bad < 0)
					bad = cli_rank_run_check(x);
			}
			if ((err = agree_err(err)))
				break;
			/* Batches of 1, 1, 2, 4, ... calls until their time
			 * reaches the budget (as cli_run_coll), else one. */
			int batch = batches ? 1 : calls;
			double timed_ns = 0;
			while (batch > 0 && !err) {
				MPI_Barrier(MPI_COMM_WORLD);
				const uint64_t t0 = mono_ns();
				uint64_t checking = 0; /* not the calls' time */
				for (int j = 0; j < batch && !err; j++, kk++) {
					if (kk)
						cli_rank_run_prep(x, 0);
					err = cli_rank_run_call(x, proc, kk);
					if (!err && kk == 0 && bad < 0) {
						const uint64_t c = mono_ns();
						bad = cli_rank_run_check(x);
						checking += mono_ns() - c;
					}
				}
				int64_t v[3] = {-(int64_t)t0, (int64_t)(mono_ns() - checking), err != 0},
				        mx[3];
				MPI_Allreduce(v, mx, 3, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
				if (mx[2] && (err = agree_err(err)))
					break;
				timed_ns += (double)(mx[1] + mx[0]);
				done += batch;
				if (!batches)
					break;
				batch = timed_ns >= CLI_RUN_CALLS_BUDGET_NS || done >= CLI_RUN_CALLS_MAX
				                ? 0
				        : done < CLI_RUN_CALLS_MAX - done ? done
				                                          : CLI_RUN_CALLS_MAX - done;
			}
			if (err)
				break;
			m = timed_ns / done;
		}
		res->runs++;
		/* The last call's result, the first wrong process, the
		 * algorithm's agreement, the largest clock. */
		if (bad < 0)
			bad = cli_rank_run_check(x);
		tc_last_coll(proc, &ci);
		int who = bad >= 0 ? me : INT_MAX, first = INT_MAX;
		MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		if (first != INT_MAX && res->mismatch_rank < 0) {
			long long el = bad;
			MPI_Bcast(&el, 1, MPI_LONG_LONG, first, MPI_COMM_WORLD);
			res->mismatch_rank = first;
			res->mismatch_elem = (uint64_t)el;
			res->verified = 0;
		}
		uint64_t h[2] = {str_hash(ci.algorithm), ~str_hash(ci.algorithm)}, hm[2];
		tc_time_t cl = tc_clock(proc), cm = 0;
		MPI_Allreduce(h, hm, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
		MPI_Allreduce(&cl, &cm, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
		if (hm[0] != h[0] || hm[1] != h[1]) {
			res->alg_disagree = 1;
			res->verified = 0;
		}
		res->run_modelled_ns = (double)(cm - c0) / TC_PS_PER_NS;
		res->modelled_ns = res->run_modelled_ns / (wcalls + done);
		res->calls = done;
		res->warmup_calls = wcalls;
		if (timed) {
			meas[k - (total - nrun)] = m;
			call_sum += m * done;
			call_n += done;
			res->call_min_ns = fmin(res->call_min_ns, m);
			res->call_max_ns = fmax(res->call_max_ns, m);
		}
		bad = -1;
	}
	if (!err) {
		qsort(meas, (size_t)nrun, sizeof *meas, cmp_double);
		res->measured_ns = nrun % 2 ? meas[nrun / 2] : (meas[nrun / 2 - 1] + meas[nrun / 2]) / 2;
		res->measured_min_ns = meas[0];
		res->measured_max_ns = meas[nrun - 1];
		res->call_avg_ns = call_n ? call_sum / (double)call_n : NAN;
		res->coll_modelled_ns = (double)ci.modelled_ps / TC_PS_PER_NS;
		res->rounds = ci.rounds;
		res->algorithm = ci.algorithm;
		int ran = res->runs > 0;
		MPI_Allreduce(&ran, &res->processes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	}
	free(meas);
	cli_rank_run_free(x);
	return err;
}

int cli_mpi_gather_events(struct tc_team *team, struct tc_event ***ev, int **n, uint64_t *dropped)
{
	int me, np;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	*ev = NULL;
	*n = NULL;
	*dropped = 0;
	const struct tc_event *mine = NULL;
	uint64_t d = 0, dsum = 0;
	int k = tc_trace_events(team, me, &mine, &d);
	if (k < 0)
		k = 0;
	/* Bytes, as MPI counts them: at most INT_MAX per process. */
	const int esz = (int)sizeof(struct tc_event);
	if (k > INT_MAX / esz)
		k = INT_MAX / esz;
	int *cnt = NULL, *bc = NULL, *displ = NULL;
	unsigned char *all = NULL;
	int err = 0;
	if (me == 0) {
		cnt = calloc((size_t)np, sizeof *cnt);
		bc = calloc((size_t)np, sizeof *bc);
		displ = calloc((size_t)np, sizeof *displ);
		if (!cnt || !bc || !displ)
			err = TC_ENOMEM;
	}
	if ((err = agree_err(err)))
		goto out;
	MPI_Gather(&k, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Reduce(&d, &dsum, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	size_t sum = 0;
	if (me == 0) {
		for (int r = 0; r < np; r++) {
			bc[r] = cnt[r] * esz;
			displ[r] = (int)sum;
			sum += (size_t)bc[r];
		}
		if (sum > INT_MAX || !(all = malloc(sum ? sum : 1)))
			err = TC_ENOMEM;
	}
	if ((err = agree_err(err)))
		goto out;
	MPI_Gatherv(mine, k * esz, MPI_BYTE, all, bc, displ, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (me == 0) {
		struct tc_event **e = calloc((size_t)np, sizeof *e);
		for (int r = 0; e && r < np; r++) {
			e[r] = malloc((size_t)bc[r] + 1);
			if (!e[r]) {
				for (int j = 0; j < r; j++)
					free(e[j]);
				free(e);
				e = NULL;
				break;
			}
			memcpy(e[r], all + displ[r], (size_t)bc[r]);
		}
		if (!e) {
			err = TC_ENOMEM;
		} else {
			*ev = e;
			*n = cnt;
			cnt = NULL;
			*dropped = dsum;
		}
	}
	err = agree_err(err);
out:
	free(cnt);
	free(bc);
	free(displ);
	free(all);
	return err;
}
