/* SPDX-License-Identifier: MIT */
/*
 * bench/model_fidelity - emulated wall time against modelled time.
 *
 * For p in {2, 8, 16, 64} on ring:p, a 2-D torus (torus:2x4, 4x4, 8x8) and
 * hypercube:log2(p), every case runs in TC_MODE_EMULATED with t_s = 1 ms,
 * t_w = 1 ns/B (t_h = t_s / 100 under cut-through), m = 8 KiB:
 *   exchange   every rank tc_sendrecv()s m bytes with a neighbour (ring and
 *              torus: shift by one along the last dimension; hypercube: the
 *              partner across dimension 0); modelled t_s + m t_w;
 *   relay_sf   rank 0 sends m bytes to the farthest rank along the
 *              topology's route, every rank on the way receiving the whole
 *              message and sending it on with tc_send (store-and-forward
 *              written with the public point-to-point calls); l (t_s + m t_w);
 *   linear_sf, linear_ct
 *              tc_bcast with algorithm "linear" (the root sends p - 1 routed
 *              transfers, forwarded by the intermediate ranks of each route)
 *              under store-and-forward and cut-through;
 *   bcast, reduce, allreduce, barrier
 *              each collective with TC_ALG_AUTO (SF).
 * A case whose algorithm the library does not provide yet (tc_predict says
 * TC_ENOTSUP) is skipped and listed as such.
 *
 * The emulated time is tc_team_last_run().wall_ns (from the run's common epoch
 * to the last rank's return), the modelled time its makespan_ps; the
 * relative error is (wall - modelled) / modelled, median of `reps` runs.
 * Then, for each p, t_s is halved from 1 ms while every case of that p stays
 * within 10%: the smallest such t_s is the figure better waiting strategies
 * should lower.  When 1 ms already misses, t_s is doubled instead (up to
 * 128 ms), re-running only the cases still outside 10%, and the figure is
 * the first t_s at which all are within: then it is above 1 ms.  Two diagnostics per p show the emulation's floor on ring:p:
 * `start` (every rank returns at once: the lateness of the common start,
 * and of p ranks returning at one moment; the line also says by when every
 * CPU had run its first rank, the start's own share) and
 * `wake` (every rank charges t_s with tc_clock_advance and returns: p ranks
 * waking at one deadline).
 *
 * Prints a table, then one JSON object as the last line: cases (run at
 * 1 ms), max_rel_error and max_rel_error_p64 (largest |error| at 1 ms),
 * min_ts_ns_p64 (the figure above for p = 64; above 1e6 when 1 ms misses,
 * null when even 128 ms misses), min_ts_ns per p, skipped, failures.
 * --settle US makes every rank first idle US microseconds of logical time
 * (tc_clock_advance) and subtracts them from both times: the start then no
 * longer depends on whether all p threads were up by the epoch, which
 * separates that effect from the wake-up pattern of the case itself.
 *
 * --native: measured native collectives against their prediction
 * with this machine's calibrated parameters.  tc_model_calibrate (8 B ..
 * 4 MiB) gives t_s, t_w and t_c of one line, the piecewise model (a line per
 * path and cache level) and o_call; a native team on chain:2 with the line's
 * model runs bcast, reduce, allreduce, allgather and alltoall (double, sum;
 * the algorithm auto picks) for m = 8 B, 32 B, ..., 2 MiB, 4 MiB, every rank
 * writing its buffers before the call (untimed); measured is the median over
 * reps calls of (last rank's end - last rank's start after a tc_barrier),
 * the calls made in 3 runs (tc_run) of 1 + reps / 3 calls each, every rank
 * writing its buffers before each call; the first call of each run is not
 * among them: it comes just after the parked threads woke and costs
 * several hundred ns more whatever the call (a plain tc_send of 8 B too),
 * a cost of tc_run's start that no model of the channel contains; its
 * median is printed as first_ns;
 * predicted is the calibrated prediction, tc_calibration_predict() of the
 * algorithm that ran (the segment's model plus o_call; a ring_pipelined
 * with the packets the run counted under the team's model, the line); the line's
 * prediction (tc_last_coll().modelled_ps, one t_s and t_w, no o_call) is
 * printed beside it for comparison, and so is the calibrated prediction
 * without its concurrency charges (flat_err; flat_predicted_ns, share_ns and
 * sync_ns in the JSON, within_20pct and flat_within_20pct counting both;
 * tc_calibration_concurrency_ns(): 0 at p = 2).  The calibration is repeated before
 * each collective's sizes (--recal, the default; --no-recal: once), so that
 * the parameters and the runs they predict come from the same minute of a
 * machine whose speed drifts.  --sweeps K (default 5, --quick 1) runs the
 * whole sweep K times; each case then reports the median over the sweeps of
 * its paired relative error and their range (rel_err_min/max in the JSON),
 * and within_15pct counts the medians.  Prints a table and one JSON object
 * (cases, sweeps, within_15pct, worst_rel_error, and the same for the
 * line).
 * Native teams of more ranks (one per CPU, pinned as tc_run pins them):
 * --p LIST runs each listed p on complete:p and hypercube:log2(p) (a power
 * of two) instead of chain:2, or on the kinds --topo chain,complete,hypercube
 * names; --case LIST picks among bcast, reduce, allreduce, allgather,
 * alltoall and reduce_scatter (default: all but reduce_scatter), --bytes
 * LIST the sizes (8, 64K, 1M, ...; multiples of 8).  The measured time of a
 * call is then (last rank's end - last rank's start), the calibration is
 * the pair's as above, repeated before each collective of each team
 * (--recal), and a case whose p-block buffer would exceed 16 MiB per rank
 * is skipped and counted (skipped in the JSON).  The table gets a line per
 * team, each case of the JSON its p and topology, and within_25pct counts
 * the medians within 25%.
 * Emulated-mode options: --p LIST replaces the team sizes
 * (e.g. --p 64,256; ring:p, torus a x b with a the largest divisor of p up
 * to sqrt p, hypercube when p is a power of two); --ts LIST (ns, or with a
 * us / ms suffix) runs every case at each listed t_s instead of halving
 * from 1 ms, prints every row, and reports per p the smallest listed t_s
 * from which every larger listed one keeps every case within 10%
 * (worst_by_ts in the JSON: the largest |error| of each p at each t_s);
 * --case LIST and --topo ring,torus,hypercube select cases.  The JSON gains
 * max_rel_error_p256 and min_ts_ns_p256 when p = 256 runs.
 * --save-calibration FILE (native) appends each calibration made, raw, to
 * FILE (bench/replay_native prices the run again).  The native mode is
 * bench/fidelity_native.c.
 * Usage: model_fidelity [--quick] [--reps N] [--settle US]
 *                       [--native [--no-recal] [--sweeps K] [--bytes LIST]
 *                                 [--save-calibration FILE]]
 *                       [--p LIST] [--ts LIST] [--case LIST] [--topo LIST]
 */
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fidelity_native.h"
#include "topocoll.h"

#define TS0_NS 1000000.0 /* t_s of the table */
#define TW_NS 1.0        /* t_w, ns per byte */
#define MSG_BYTES 8192u  /* m */
#define TOLERANCE 0.10
#define MAX_HALVINGS 10 /* t_s down to about 1 us */
#define MAX_DOUBLINGS 7 /* t_s up to 128 ms */

enum kind {
	K_EXCHANGE,
	K_RELAY_SF,
	K_LINEAR_SF,
	K_LINEAR_CT,
	K_BCAST,
	K_REDUCE,
	K_ALLREDUCE,
	K_BARRIER,
	K_NKINDS,
	K_START = K_NKINDS, /* diagnostics */
	K_WAKE,
};

static const char *kind_name[] = {"exchange", "relay_sf",  "linear_sf", "linear_ct", "bcast",
                                  "reduce",   "allreduce", "barrier",   "start",     "wake"};

/* The CPUs the start diagnostic tells apart (sched_getcpu() below it). */
#define MAX_CPUS 1024

struct job {
	enum kind kind;
	const struct tc_topo *topo;
	double ts_ns;
	int *path; /* relay: the route from 0 to the farthest rank */
	int hops;
	int err; /* first error a rank saw */
	/* start: when each CPU ran its first rank and when the last rank
	 * returned (CLOCK_MONOTONIC ns; 0: not yet). */
	_Atomic uint64_t first_on_cpu[MAX_CPUS];
	_Atomic uint64_t last_return;
};

static int quick, reps = 3;
static double settle_ns; /* --settle: idle logical time charged at the start */

/* The neighbours a rank exchanges with: right = send, left = receive. */
static void shift_peers(const struct tc_topo *t, int r, int *right, int *left)
{
	int p = tc_topo_nodes(t);
	switch (tc_topo_kind(t)) {
	case TC_TOPO_HYPERCUBE:
		*right = *left = r ^ 1;
		return;
	case TC_TOPO_TORUS: {
		int nd = tc_topo_dims(t, NULL), dims[TC_TOPO_MAX_DIMS], c[TC_TOPO_MAX_DIMS];
		tc_topo_dims(t, dims);
		tc_topo_coords(t, r, c);
		int k = nd - 1, v = c[k];
		c[k] = (v + 1) % dims[k];
		*right = tc_topo_rank_of(t, c);
		c[k] = (v + dims[k] - 1) % dims[k];
		*left = tc_topo_rank_of(t, c);
		return;
	}
	default: /* ring */
		*right = (r + 1) % p;
		*left = (r + p - 1) % p;
		return;
	}
}

/* *w = max(*w, v) (below: min over nonzero values where least is set). */
static void atomic_extreme(_Atomic uint64_t *w, uint64_t v, int least)
{
	uint64_t cur = atomic_load_explicit(w, memory_order_relaxed);
	while ((least ? cur == 0 || v < cur : v > cur) &&
	       !atomic_compare_exchange_weak_explicit(w, &cur, v, memory_order_relaxed,
	                                              memory_order_relaxed))
		;
}

static int spmd(struct tc_proc *proc, void *arg)
{
	struct job *j = arg;
	int r = tc_rank(proc), err = TC_OK;
	static _Thread_local unsigned char sbuf[MSG_BYTES], rbuf[MSG_BYTES];
	struct tc_coll_opts lin = {.alg = "linear"};
	if (settle_ns > 0 && j->kind != K_START)
		err = tc_clock_advance(proc, settle_ns);
	if (err)
		return err;
	switch (j->kind) {
	case K_EXCHANGE: {
		int right, left;
		shift_peers(j->topo, r, &right, &left);
		err = tc_sendrecv(proc, right, sbuf, MSG_BYTES, left, rbuf, MSG_BYTES, NULL);
		break;
	}
	case K_RELAY_SF:
		for (int k = 0; k <= j->hops && !err; k++) {
			if (j->path[k] != r)
				continue;
			if (k > 0)
				err = tc_recv(proc, j->path[k - 1], rbuf, MSG_BYTES, NULL);
			if (!err && k < j->hops)
				err = tc_send(proc, j->path[k + 1], k ? rbuf : sbuf, MSG_BYTES);
		}
		break;
	case K_LINEAR_SF:
	case K_LINEAR_CT:
		err = tc_bcast(proc, rbuf, MSG_BYTES, TC_BYTE, 0, &lin);
		break;
	case K_BCAST:
		err = tc_bcast(proc, rbuf, MSG_BYTES, TC_BYTE, 0, NULL);
		break;
	case K_REDUCE:
		err = tc_reduce(proc, sbuf, rbuf, MSG_BYTES / 8, TC_DOUBLE, TC_OP_SUM, 0, NULL);
		break;
	case K_ALLREDUCE:
		err = tc_allreduce(proc, sbuf, rbuf, MSG_BYTES / 8, TC_DOUBLE, TC_OP_SUM, NULL);
		break;
	case K_BARRIER:
		err = tc_barrier(proc, NULL);
		break;
	case K_START: {
		/* When this rank's CPU ran its first rank, and (the last of them)
		 * when the ranks returned: the start's own lateness, and what
		 * returning at one moment adds. */
		const int cpu = sched_getcpu();
		const uint64_t now = fidelity_now_ns();
		if (cpu >= 0 && cpu < MAX_CPUS)
			atomic_extreme(&j->first_on_cpu[cpu], now, 1);
		atomic_extreme(&j->last_return, now, 0);
		break;
	}
	case K_WAKE:
		err = tc_clock_advance(proc, j->ts_ns);
		break;
	default:
		err = TC_EINVAL;
	}
	return err;
}

static void model_for(struct tc_model *md, enum kind k, double ts)
{
	tc_model_default(md);
	md->ts_ns = ts;
	md->tw_ns = TW_NS;
	md->th_ns = k == K_LINEAR_CT ? ts / 100.0 : 0.0;
	md->switching = k == K_LINEAR_CT ? TC_SWITCH_CT : TC_SWITCH_SF;
}

/* Whether the library provides the case for this topology (without running
 * anything): 0, or the error of tc_predict. */
static int available(enum kind k, const struct tc_topo *t)
{
	enum tc_coll coll;
	const char *alg = NULL;
	size_t bytes = MSG_BYTES, es = 1;
	switch (k) {
	case K_LINEAR_SF:
	case K_LINEAR_CT:
		coll = TC_COLL_BCAST;
		alg = "linear";
		break;
	case K_BCAST:
		coll = TC_COLL_BCAST;
		break;
	case K_REDUCE:
		coll = TC_COLL_REDUCE;
		es = 8;
		break;
	case K_ALLREDUCE:
		coll = TC_COLL_ALLREDUCE;
		es = 8;
		break;
	case K_BARRIER:
		coll = TC_COLL_BARRIER;
		bytes = 0;
		break;
	default:
		return 0;
	}
	struct tc_model md;
	model_for(&md, k, TS0_NS);
	struct tc_prediction pr;
	return tc_predict(t, &md, coll, alg, bytes, es, 0, 0, &pr);
}

struct result {
	double wall_ns, model_ns, err;
	double begin_ns; /* start: every CPU ran its first rank by epoch + this */
	int rc;
};

/* Runs case k on spec with t_s = ts: median over reps of the relative error. */
static struct result run_case(const char *spec, enum kind k, double ts)
{
	struct result res = {0};
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.mode = TC_MODE_EMULATED;
	cfg.timeout_ms = 10000; /* a hang fails the case, not the whole run */
	model_for(&cfg.model, k, ts);
	struct tc_team *team = NULL;
	res.rc = tc_team_create(&cfg, &team);
	if (res.rc)
		return res;
	const struct tc_topo *t = tc_team_topo(team);
	int p = tc_topo_nodes(t);
	struct job j = {.kind = k, .topo = t, .ts_ns = ts};
	int far = 0;
	for (int v = 1; v < p; v++)
		if (tc_topo_distance(t, 0, v) > tc_topo_distance(t, 0, far))
			far = v;
	j.path = malloc(((size_t)p + 1) * sizeof *j.path);
	j.hops = tc_topo_route(t, 0, far, j.path, p + 1);
	double walls[64], models[64], errs[64], begins[64];
	int n = reps < 64 ? reps : 64;
	for (int i = 0; i < n && !res.rc; i++) {
		for (int c = 0; c < MAX_CPUS; c++)
			atomic_store_explicit(&j.first_on_cpu[c], 0, memory_order_relaxed);
		atomic_store_explicit(&j.last_return, 0, memory_order_relaxed);
		res.rc = tc_run(team, spmd, &j);
		struct tc_run_info ri;
		tc_team_last_run(team, &ri);
		double settle = k == K_START ? 0.0 : settle_ns;
		walls[i] = (double)ri.wall_ns - settle;
		models[i] = (double)ri.makespan_ps / TC_PS_PER_NS - settle;
		errs[i] = models[i] > 0 ? (walls[i] - models[i]) / models[i] : 0.0;
		/* start: the epoch is the last return less wall_ns (the rank's
		 * end follows its return by the tail of tc_run's rank loop). */
		uint64_t last_cpu = 0, ret = atomic_load(&j.last_return);
		for (int c = 0; c < MAX_CPUS; c++) {
			uint64_t v = atomic_load_explicit(&j.first_on_cpu[c], memory_order_relaxed);
			last_cpu = v > last_cpu ? v : last_cpu;
		}
		begins[i] = k == K_START && ret && last_cpu
		                    ? fmax(0.0, (double)ri.wall_ns - (double)(ret - last_cpu))
		                    : NAN;
	}
	if (!res.rc) {
		qsort(walls, (size_t)n, sizeof *walls, bench_cmp_double);
		qsort(models, (size_t)n, sizeof *models, bench_cmp_double);
		qsort(errs, (size_t)n, sizeof *errs, bench_cmp_double);
		qsort(begins, (size_t)n, sizeof *begins, bench_cmp_double);
		res.wall_ns = walls[n / 2];
		res.model_ns = models[n / 2];
		res.err = errs[n / 2];
		res.begin_ns = begins[n / 2];
	}
	free(j.path);
	tc_team_destroy(team);
	return res;
}

/* Wall time of tc_run of an empty SPMD function on a native ring:p (the
 * cost of spawning and joining p threads), median of reps, in ns. */
static double spawn_ns(int p)
{
	char spec[32];
	snprintf(spec, sizeof spec, "ring:%d", p);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	struct tc_team *team = NULL;
	if (tc_team_create(&cfg, &team))
		return NAN;
	double v[5];
	int n = 5;
	for (int i = 0; i < n; i++) {
		const uint64_t a = fidelity_now_ns();
		struct job j = {.kind = K_START};
		tc_run(team, spmd, &j);
		v[i] = (double)(fidelity_now_ns() - a);
	}
	tc_team_destroy(team);
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	return v[n / 2];
}

static int make_specs(int p, char specs[3][32])
{
	int n = 0, d = 0;
	snprintf(specs[n++], 32, "ring:%d", p);
	if (p >= 8) {
		int a = 1;
		for (int i = 1; i * i <= p; i++)
			if (p % i == 0)
				a = i;
		snprintf(specs[n++], 32, "torus:%dx%d", a, p / a);
	}
	while ((1 << d) < p)
		d++;
	if ((1 << d) == p)
		snprintf(specs[n++], 32, "hypercube:%d", d);
	return n;
}

/* ---- emulated mode: the table, the t_s search or sweep ------------------- */

#define MAX_PS 16
#define MAX_TS 32

static int nps = 4, nts; /* --p, --ts */
static int ps[MAX_PS] = {2, 8, 16, 64};
static double ts_list[MAX_TS];                    /* --ts, descending */
static unsigned case_mask = (1u << K_NKINDS) - 1; /* --case */
static unsigned topo_mask = 7;                    /* --topo: ring 1, torus 2, hypercube 4 */

/* A number with an optional unit (ns, us, ms), in ns; < 0: not one. */
static double parse_ns(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v > 0))
		return -1;
	if (!*end || !strcmp(end, "ns"))
		return v;
	if (!strcmp(end, "us"))
		return v * 1e3;
	if (!strcmp(end, "ms"))
		return v * 1e6;
	return -1;
}

/* Splits a comma-separated list in place: calls f(item) for each; 0 on success. */
static int each_item(char *list, int (*f)(const char *))
{
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
		if (f(tok))
			return -1;
	return 0;
}

static int add_p(const char *s)
{
	int p = atoi(s);
	if (p < 2 || p > 4096 || nps >= MAX_PS)
		return -1;
	ps[nps++] = p;
	return 0;
}

static int add_ts(const char *s)
{
	double v = parse_ns(s);
	if (v <= 0 || nts >= MAX_TS)
		return -1;
	ts_list[nts++] = v;
	return 0;
}

static int add_case(const char *s)
{
	return fidelity_mask_add(kind_name, K_NKINDS, s, &case_mask);
}

static int add_topo(const char *s)
{
	static const char *const names[] = {"ring", "torus", "hypercube"};
	return fidelity_mask_add(names, 3, s, &topo_mask);
}

static int cmp_double_desc(const void *a, const void *b)
{
	return bench_cmp_double(b, a);
}

/* Whether the spec (ring, torus, hypercube) is selected by --topo. */
static int topo_selected(const char *spec)
{
	int bit = !strncmp(spec, "ring", 4) ? 1 : !strncmp(spec, "torus", 5) ? 2 : 4;
	return (topo_mask & (unsigned)bit) != 0;
}

/* The diagnostics of the first level of each p (ring:p): spawn, start, wake. */
static void diagnostics(int p, const char *spec, double ts)
{
	double sp = spawn_ns(p);
	printf("%-4d %-14s %-10s %12s %12.1f %9s  (diagnostic: native tc_run of an empty function, "
	       "%.1f us per rank)\n",
	       p, spec, "spawn", "", sp / 1e3, "", sp / 1e3 / p);
	for (int k = K_START; k <= K_WAKE; k++) {
		struct result r = run_case(spec, (enum kind)k, ts);
		if (r.rc)
			continue;
		printf("%-4d %-14s %-10s %12.1f %12.1f %9s  (diagnostic: lateness %.1f us", p, spec,
		       kind_name[k], r.model_ns / 1e3, r.wall_ns / 1e3, "",
		       (r.wall_ns - r.model_ns) / 1e3);
		if (k == K_START && isfinite(r.begin_ns))
			printf("; every CPU ran its first rank by %.1f us after the epoch",
			       r.begin_ns / 1e3);
		printf(")\n");
	}
}

int main(int argc, char **argv)
{
	int native = 0, reps_set = 0, recal = 1, p_set = 0, sweeps = 0;
	/* --case and --topo name cases of either mode: read once the mode is known. */
	enum { MAX_LISTS = 8 };
	char *case_args[MAX_LISTS], *topo_args[MAX_LISTS], *bytes_args[MAX_LISTS];
	int ncase_args = 0, ntopo_args = 0, nbytes_args = 0;
	for (int i = 1; i < argc; i++) {
		int bad = 0;
		if (!strcmp(argv[i], "--quick")) {
			quick = 1;
		} else if (!strcmp(argv[i], "--settle") && i + 1 < argc) {
			settle_ns = atof(argv[++i]) * 1e3;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
			if (reps < 1)
				reps = 1;
			reps_set = 1;
		} else if (!strcmp(argv[i], "--native")) {
			native = 1;
		} else if (!strcmp(argv[i], "--sweeps") && i + 1 < argc) {
			sweeps = atoi(argv[++i]);
			bad = sweeps < 1 || sweeps > FIDELITY_MAX_SWEEPS;
		} else if (!strcmp(argv[i], "--no-recal")) {
			recal = 0;
		} else if (!strcmp(argv[i], "--save-calibration") && i + 1 < argc) {
			fidelity_native_save_to(argv[++i]);
		} else if (!strcmp(argv[i], "--p") && i + 1 < argc) {
			if (!p_set)
				nps = 0;
			p_set = 1;
			bad = each_item(argv[++i], add_p);
		} else if (!strcmp(argv[i], "--ts") && i + 1 < argc) {
			bad = each_item(argv[++i], add_ts);
		} else if (!strcmp(argv[i], "--case") && i + 1 < argc && ncase_args < MAX_LISTS) {
			case_args[ncase_args++] = argv[++i];
		} else if (!strcmp(argv[i], "--topo") && i + 1 < argc && ntopo_args < MAX_LISTS) {
			topo_args[ntopo_args++] = argv[++i];
		} else if (!strcmp(argv[i], "--bytes") && i + 1 < argc && nbytes_args < MAX_LISTS) {
			bytes_args[nbytes_args++] = argv[++i];
		} else {
			bad = 1;
		}
		if (!bad && i + 1 == argc) {
			/* The lists, in the mode's terms. */
			if (ncase_args) {
				if (native)
					fidelity_native_no_colls();
				else
					case_mask = 0;
			}
			if (ntopo_args && !native)
				topo_mask = 0;
			for (int k = 0; k < ncase_args && !bad; k++)
				bad = each_item(case_args[k],
				                native ? fidelity_native_add_coll : add_case);
			for (int k = 0; k < ntopo_args && !bad; k++)
				bad = each_item(topo_args[k],
				                native ? fidelity_native_add_topo : add_topo);
			for (int k = 0; k < nbytes_args && !bad; k++)
				bad = !native || each_item(bytes_args[k], fidelity_native_add_size);
		}
		if (bad) {
			fprintf(stderr,
			        "usage: model_fidelity [--quick] [--reps N] [--settle US] "
			        "[--native [--no-recal] [--sweeps K] [--bytes LIST]\n"
			        "       [--save-calibration FILE]] [--p LIST] [--ts LIST] [--case LIST] [--topo LIST]\n"
			        "  --p 64,256   the team sizes (default 2,8,16,64; --native: 2)\n"
			        "  --ts 1ms,250us,100us   run every case at each t_s (ns, us, "
			        "ms) instead of halving from 1 ms\n"
			        "  --case exchange,allreduce   --topo ring,torus,hypercube\n"
			        "  --native: --case bcast,reduce,allreduce,allgather,alltoall,"
			        "reduce_scatter\n"
			        "            --topo chain,complete,hypercube   --bytes 8,64K,1M "
			        "(multiples of 8, up to 64M)\n");
			return 2;
		}
	}
	if (!sweeps)
		sweeps = quick ? 1 : 5;
	if (native)
		return fidelity_native_main(reps_set ? reps
		                            : quick  ? 5
		                                     : 21,
		                            recal, sweeps, p_set ? ps : NULL, p_set ? nps : 0);
	if (quick && !reps_set)
		reps = 1;
	qsort(ts_list, (size_t)nts, sizeof *ts_list, cmp_double_desc);
	double min_ts[MAX_PS], max_err_p[MAX_PS];
	int cases = 0, skipped = 0, failures = 0;
	double max_err = 0;

	printf("# model_fidelity: emulated wall time vs modelled time, t_s = %.0f ns, "
	       "t_w = %.0f ns/B, m = %u B, median of %d run%s, settle %.0f us\n",
	       nts ? ts_list[0] : TS0_NS, TW_NS, MSG_BYTES, reps, reps > 1 ? "s" : "", settle_ns / 1e3);
	printf("%-4s %-14s %-10s %12s %12s %9s\n", "p", "topology", "case", "modelled_us",
	       "emulated_us", "rel_err");
	/* The JSON's sweep: the worst |error| of each p at each listed t_s. */
	static char sweep[16 * 1024];
	size_t sl = 0;
	for (int pi = 0; pi < nps; pi++) {
		int p = ps[pi];
		char specs[3][32];
		int nspecs = make_specs(p, specs);
		struct tc_topo *topos[3] = {0};
		for (int s = 0; s < nspecs; s++)
			tc_topo_parse(specs[s], &topos[s]);
		max_err_p[pi] = 0;
		min_ts[pi] = NAN;
		if (sl < sizeof sweep - 64)
			sl += (size_t)snprintf(sweep + sl, sizeof sweep - sl, "%s\"%d\": {",
			                       pi ? ", " : "", p);
		/* Levels: the --ts list, or t_s halved from 1 ms. */
		int nlevels = nts ? nts : (quick ? 2 : MAX_HALVINGS) + 1, ok_so_far = 1;
		double ts = TS0_NS;
		for (int level = 0; level < nlevels; level++, ts /= 2) {
			if (nts)
				ts = ts_list[level];
			double worst = 0;
			const char *worst_case = "", *worst_topo = "";
			int print = level == 0 || nts;
			for (int s = 0; s < nspecs; s++) {
				if (!topo_selected(specs[s]))
					continue;
				for (int k = 0; k < K_NKINDS; k++) {
					if (!(case_mask & (1u << k)))
						continue;
					int av = available((enum kind)k, topos[s]);
					if (av) {
						if (level == 0) {
							printf("%-4d %-14s %-10s %12s %12s %9s  (%s)\n",
							       p, specs[s], kind_name[k], "-", "-",
							       "skipped", tc_err_name(av));
							skipped++;
						}
						continue;
					}
					struct result r = run_case(specs[s], (enum kind)k, ts);
					if (r.rc) {
						printf("%-4d %-14s %-10s failed: %s\n", p, specs[s],
						       kind_name[k], tc_strerror(r.rc));
						failures++;
						worst = INFINITY;
						continue;
					}
					if (fabs(r.err) > worst) {
						worst = fabs(r.err);
						worst_case = kind_name[k];
						worst_topo = specs[s];
					}
					if (print)
						printf("%-4d %-14s %-10s %12.1f %12.1f %+8.1f%%\n",
						       p, specs[s], kind_name[k], r.model_ns / 1e3,
						       r.wall_ns / 1e3, 100 * r.err);
					fflush(stdout);
					if (level == 0) {
						cases++;
						if (fabs(r.err) > max_err)
							max_err = fabs(r.err);
						if (fabs(r.err) > max_err_p[pi])
							max_err_p[pi] = fabs(r.err);
					}
				}
			}
			if (level == 0)
				diagnostics(p, specs[0], ts);
			if (sl < sizeof sweep - 64)
				sl += (size_t)snprintf(sweep + sl, sizeof sweep - sl,
				                       "%s\"%.0f\": %.4f", level ? ", " : "", ts,
				                       isinf(worst) ? -1.0 : worst);
			if (worst > TOLERANCE) {
				printf("# p=%d: t_s = %.0f ns misses %.0f%%: %s on %s at %+.1f%%\n",
				       p, ts, 100 * TOLERANCE, worst_case, worst_topo, 100 * worst);
				ok_so_far = 0;
				if (!nts)
					break;
			} else {
				if (nts)
					printf("# p=%d: t_s = %.0f ns: every case within %.0f%% (worst %s on %s "
					       "at %.1f%%)\n",
					       p, ts, 100 * TOLERANCE, worst_case, worst_topo,
					       100 * worst);
				if (ok_so_far)
					min_ts[pi] = ts;
			}
		}
		if (sl < sizeof sweep - 8)
			sl += (size_t)snprintf(sweep + sl, sizeof sweep - sl, "}");
		if (isnan(min_ts[pi]) && !nts) {
			/* 1 ms misses: double t_s, re-running only the cases still
			 * outside the tolerance (the lateness is roughly a constant,
			 * so a case within it stays within at a larger t_s). */
			int failing[3][K_NKINDS], nfail = 0;
			for (int s = 0; s < nspecs; s++)
				for (int k = 0; k < K_NKINDS; k++)
					if ((failing[s][k] = topo_selected(specs[s]) &&
					                     (case_mask & (1u << k)) &&
					                     available((enum kind)k, topos[s]) == 0))
						nfail++;
			ts = TS0_NS;
			for (int level = 1; level <= (quick ? 2 : MAX_DOUBLINGS) && nfail; level++) {
				ts *= 2;
				for (int s = 0; s < nspecs; s++)
					for (int k = 0; k < K_NKINDS; k++) {
						if (!failing[s][k])
							continue;
						struct result r = run_case(specs[s], (enum kind)k, ts);
						if (!r.rc && fabs(r.err) <= TOLERANCE) {
							failing[s][k] = 0;
							nfail--;
						}
					}
				if (!nfail)
					min_ts[pi] = ts;
			}
			if (nfail) {
				printf("# p=%d: no t_s up to %.0f ns keeps every case within %.0f%%:", p,
				       ts, 100 * TOLERANCE);
				for (int s = 0; s < nspecs; s++)
					for (int k = 0; k < K_NKINDS; k++)
						if (failing[s][k])
							printf(" %s/%s", kind_name[k], specs[s]);
				printf("\n");
			} else {
				printf("# p=%d: 1 ms misses; every case is within %.0f%% from t_s = %.0f ns "
				       "(doubling)\n",
				       p, 100 * TOLERANCE, min_ts[pi]);
			}
		} else if (isnan(min_ts[pi])) {
			printf("# p=%d: the largest listed t_s already misses %.0f%%\n", p,
			       100 * TOLERANCE);
		} else {
			printf("# p=%d: smallest t_s with every case within %.0f%%: %.0f ns%s\n", p,
			       100 * TOLERANCE, min_ts[pi], nts ? " (of the listed ones)" : "");
		}
		for (int s = 0; s < nspecs; s++)
			tc_topo_destroy(topos[s]);
	}

	printf("{\"cases\": %d, \"skipped\": %d, \"failures\": %d, \"max_rel_error\": %.4f, ",
	       cases, skipped, failures, max_err);
	for (int pi = 0; pi < nps; pi++)
		if (ps[pi] == 64 || ps[pi] == 256) {
			printf("\"max_rel_error_p%d\": %.4f, ", ps[pi], max_err_p[pi]);
			if (isnan(min_ts[pi]))
				printf("\"min_ts_ns_p%d\": null, ", ps[pi]);
			else
				printf("\"min_ts_ns_p%d\": %.0f, ", ps[pi], min_ts[pi]);
		}
	printf("\"min_ts_ns\": {");
	for (int pi = 0; pi < nps; pi++) {
		if (isnan(min_ts[pi]))
			printf("%s\"%d\": null", pi ? ", " : "", ps[pi]);
		else
			printf("%s\"%d\": %.0f", pi ? ", " : "", ps[pi], min_ts[pi]);
	}
	printf("}, \"worst_by_ts\": {%s}, \"ts_ns\": %.0f, \"tw_ns_per_byte\": %.1f, \"bytes\": %u, "
	       "\"tolerance\": %.2f, \"settle_us\": %.0f}\n",
	       sweep, nts ? ts_list[0] : TS0_NS, TW_NS, MSG_BYTES, TOLERANCE, settle_ns / 1e3);
	return failures ? 1 : 0;
}
