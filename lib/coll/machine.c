/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/machine.c - the machine's price of waiting, for TC_ALG_AUTO on
 * oversubscribed teams.  Described in lib/coll/machine.h.
 */
#include "coll/machine.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "coll/shm.h"

#include "core/internal.h"
#include "topocoll/calibrate.h"
#include "topocoll/team.h"

int tc__shared_cpus(const struct tc_team *team)
{
	return team->p > team->cpus && !team->emulate ? team->cpus : 0;
}

uint64_t tc__wait_level_ns(const struct tc_team *team)
{
	if (!tc__shared_cpus(team) || team->wait == TC_WAIT_SPIN)
		return 0;
	uint64_t per_cpu = ((uint64_t)team->p + (uint64_t)team->cpus - 1) / (uint64_t)team->cpus;
	return per_cpu * (team->exec == TC_EXEC_FIBRES ? TC__FIBRE_WAIT_NS : TC__SWITCH_NS);
}

/* ---- Concurrency: the calibrated price of a round (machine.h) ---- */

/* Linear interpolation of y over increasing x at v, clamped at the ends;
 * NAN when n < 1. */
static double tc__machine_interp(const double *x, const double *y, int n, double v)
{
	if (n < 1)
		return NAN;
	if (v <= x[0] || n == 1)
		return y[0];
	for (int i = 1; i < n; i++)
		if (v <= x[i])
			return y[i - 1] + (y[i] - y[i - 1]) * (v - x[i - 1]) / (x[i] - x[i - 1]);
	return y[n - 1];
}

/* The per-copier rates b(k) = B(k, m) / k of one size's row, for the
 * copier counts k >= 2 (ks[], increasing), made non-increasing in k by the
 * least-squares isotonic fit (pool adjacent violators): one copier more
 * cannot make each copier faster, so a rate above a smaller count's is the
 * measurement's noise (a copier started late, alone on the bus), and the
 * fit pools it with its neighbours instead of trusting one sample.  In
 * place; n rates; entries not finite or not positive were left out by the
 * caller. */
static void tc__machine_isotonic(double *b, int n)
{
	double sum[TC_CALIBRATE_MAX_COPIERS];
	int len[TC_CALIBRATE_MAX_COPIERS], nb = 0;
	for (int i = 0; i < n; i++) {
		sum[nb] = b[i];
		len[nb++] = 1;
		/* A block above its predecessor's mean violates the order: merge. */
		while (nb > 1 && sum[nb - 1] / len[nb - 1] > sum[nb - 2] / len[nb - 2]) {
			sum[nb - 2] += sum[nb - 1];
			len[nb - 2] += len[nb - 1];
			nb--;
		}
	}
	for (int j = 0, i = 0; j < nb; j++)
		for (int e = 0; e < len[j]; e++)
			b[i++] = sum[j] / len[j];
}

/* B(k, m) of a table (the copies' or the combines', [size][count]): in k
 * at each size (for k >= 2 the counts from 2 on, their per-copier rates
 * made non-increasing, above), then in log2 m between the sizes. */
static double tc__machine_table_bw(const struct tc_calibration *cal,
                                   const double (*table)[TC_CALIBRATE_MAX_COPIERS], int k, size_t m)
{
	double xs[TC_CALIBRATE_COPY_SIZES], bs[TC_CALIBRATE_COPY_SIZES], ks[TC_CALIBRATE_MAX_COPIERS];
	double rate[TC_CALIBRATE_MAX_COPIERS];
	int n = cal->ncopiers < TC_CALIBRATE_MAX_COPIERS ? cal->ncopiers : TC_CALIBRATE_MAX_COPIERS;
	int ns = cal->ncopy_sizes < TC_CALIBRATE_COPY_SIZES ? cal->ncopy_sizes : TC_CALIBRATE_COPY_SIZES;
	for (int s = 0; s < ns; s++) {
		xs[s] = log2((double)(cal->copy_sizes[s] ? cal->copy_sizes[s] : 1));
		int nk = 0;
		for (int i = 0; i < n; i++) {
			double v = table[s][i];
			if ((cal->copiers[i] >= 2 || k < 2) && cal->copiers[i] > 0 && v > 0 &&
			    isfinite(v)) {
				ks[nk] = cal->copiers[i];
				rate[nk++] = v / cal->copiers[i];
			}
		}
		if (k >= 2)
			tc__machine_isotonic(rate, nk);
		for (int i = 0; i < nk; i++)
			rate[i] *= ks[i]; /* back to B, interpolated in k */
		bs[s] = tc__machine_interp(ks, rate, nk, (double)k);
	}
	return tc__machine_interp(xs, bs, ns, log2((double)(m ? m : 1)));
}

static double tc__machine_bw(const struct tc_calibration *cal, int k, size_t m)
{
	return tc__machine_table_bw(cal, cal->copy_bytes_per_ns, k, m);
}

double tc__machine_share(const struct tc_calibration *cal, int k, size_t bytes)
{
	if (!cal || cal->conc_ranks < 2 || k <= 2 || cal->ncopiers < 1 || cal->ncopy_sizes < 1)
		return 1.0;
	double b2 = tc__machine_bw(cal, 2, bytes), bk = tc__machine_bw(cal, k, bytes);
	if (!(b2 > 0) || !(bk > 0) || !isfinite(b2) || !isfinite(bk))
		return 1.0;
	double s = 0.5 * (double)k * b2 / bk;
	return s > 1.0 ? s : 1.0;
}

/* C(k, m) over a base per chain size, k > 2: against C(2, m) (one_way
 * false) or against the pair's one-way message of m under the
 * calibration's model of m; interpolated in log2 k, the ratio in log2 m,
 * clamped; at least 1, and 1 without the table (machine.h). */
static double tc__machine_chain(const struct tc_calibration *cal, int k, size_t bytes, bool one_way)
{
	if (!cal || cal->conc_ranks < 2 || k <= 2 || cal->nchain < 1 || cal->nchain > cal->nsync ||
	    cal->nchain > TC_CALIBRATE_MAX_SYNC || cal->nchain_sizes < 1 ||
	    cal->nchain_sizes > TC_CALIBRATE_CHAIN_SIZES || cal->sync_ranks[0] != 2)
		return 1.0;
	double qs[TC_CALIBRATE_MAX_SYNC], ms[TC_CALIBRATE_CHAIN_SIZES], zs[TC_CALIBRATE_CHAIN_SIZES];
	for (int i = 0; i < cal->nchain; i++)
		qs[i] = log2((double)(cal->sync_ranks[i] > 0 ? cal->sync_ranks[i] : 1));
	for (int s = 0; s < cal->nchain_sizes; s++) {
		const size_t m = cal->chain_sizes[s];
		const double ck =
		        tc__machine_interp(qs, cal->chain_ns[s], cal->nchain, log2((double)k));
		double base = cal->chain_ns[s][0];
		if (one_way) {
			struct tc_model md;
			base = tc__cal_model(cal, m, &md, NULL) ? NAN : md.ts_ns + (double)m * md.tw_ns;
		}
		zs[s] = base > 0 && isfinite(base) && isfinite(ck) ? ck / base : 1.0;
		ms[s] = log2((double)(m ? m : 1));
	}
	double z = tc__machine_interp(ms, zs, cal->nchain_sizes, log2((double)(bytes ? bytes : 1)));
	return isfinite(z) && z > 1.0 ? z : 1.0;
}

double tc__machine_chain_share(const struct tc_calibration *cal, int k, size_t bytes)
{
	return tc__machine_chain(cal, k, bytes, false);
}

double tc__machine_chain_step(const struct tc_calibration *cal, int k, size_t bytes)
{
	return tc__machine_chain(cal, k, bytes, true);
}

double tc__machine_round_excess(const struct tc_calibration *cal, int q)
{
	struct tc_model m8;
	double r = tc__machine_r_ns(cal, q);
	if (!isfinite(r) || tc__cal_model(cal, 8, &m8, NULL))
		return 0.0;
	double x = r - (m8.ts_ns + 8 * m8.tw_ns);
	return isfinite(x) && x > 0 ? x : 0.0;
}

double tc__machine_sync_ns(const struct tc_calibration *cal, int q)
{
	return q > 2 ? tc__machine_round_excess(cal, q) : 0.0;
}

/* m max(k, 2) / B(max(k, 2), m) of a table (machine.h). */
static double tc__machine_table_ns(const struct tc_calibration *cal,
                                   const double (*table)[TC_CALIBRATE_MAX_COPIERS], int k, size_t bytes)
{
	if (bytes == 0)
		return 0.0;
	int c = k > 2 ? k : 2;
	double b = tc__machine_table_bw(cal, table, c, bytes);
	return b > 0 && isfinite(b) ? (double)bytes * (double)c / b : NAN;
}

/* tc__machine_table_ns() of a table that has n counts (the copy table's
 * ncopiers; the others' ncombine, nshared: 0 when not measured); NAN
 * without it. */
static double tc__machine_counted_ns(const struct tc_calibration *cal, int n,
                                     const double (*table)[TC_CALIBRATE_MAX_COPIERS], int k, size_t bytes)
{
	if (cal->conc_ranks < 2 || n < 1 || n != cal->ncopiers || cal->ncopy_sizes < 1)
		return NAN;
	return tc__machine_table_ns(cal, table, k, bytes);
}

double tc__machine_copy_ns(const struct tc_calibration *cal, int k, size_t bytes)
{
	return cal ? tc__machine_counted_ns(cal, cal->ncopiers, cal->copy_bytes_per_ns, k, bytes) : NAN;
}

double tc__machine_combine_ns(const struct tc_calibration *cal, int k, size_t bytes)
{
	return cal ? tc__machine_counted_ns(cal, cal->ncombine, cal->combine_bytes_per_ns, k, bytes)
	           : NAN;
}

double tc__machine_shared_ns(const struct tc_calibration *cal, int k, size_t bytes)
{
	return cal ? tc__machine_counted_ns(cal, cal->nshared, cal->shared_bytes_per_ns, k, bytes) : NAN;
}

/* ys[0 .. n) at the team sizes sync_ranks[], interpolated in log2 q and
 * clamped (q < 2 as 2); NAN without the tables or n < 1. */
static double tc__machine_by_ranks(const struct tc_calibration *cal, int n, const double *ys, int q)
{
	if (!cal || cal->conc_ranks < 2 || n < 1 || n > cal->nsync || cal->sync_ranks[0] != 2)
		return NAN;
	double xs[TC_CALIBRATE_MAX_SYNC];
	n = n < TC_CALIBRATE_MAX_SYNC ? n : TC_CALIBRATE_MAX_SYNC;
	for (int i = 0; i < n; i++)
		xs[i] = log2((double)(cal->sync_ranks[i] > 0 ? cal->sync_ranks[i] : 1));
	return tc__machine_interp(xs, ys, n, log2((double)(q > 2 ? q : 2)));
}

double tc__machine_r_ns(const struct tc_calibration *cal, int q)
{
	return cal ? tc__machine_by_ranks(cal, cal->nsync, cal->sync_ns, q) : NAN;
}

double tc__machine_flag_ns(const struct tc_calibration *cal, int q)
{
	return cal ? tc__machine_by_ranks(cal, cal->nflag, cal->flag_ns, q) : NAN;
}

double tc__machine_handoff_ns(const struct tc_calibration *cal, int q)
{
	if (!cal || cal->conc_ranks < 2)
		return NAN;
	double h = cal->handoff_pair_ns;
	if (q > 2)
		for (int c = 0; c < TC_HANDOFF_CLASSES; c++)
			if (isfinite(cal->handoff_ns[c]) && !(cal->handoff_ns[c] <= h))
				h = cal->handoff_ns[c];
	return isfinite(h) && h > 0 ? h : NAN;
}

double tc__machine_handoff_class_ns(const struct tc_calibration *cal, int c)
{
	if (!cal || cal->conc_ranks < 2 || c < 0)
		return NAN;
	for (; c < TC_HANDOFF_CLASSES; c++)
		if (isfinite(cal->handoff_ns[c]) && cal->handoff_ns[c] > 0)
			return cal->handoff_ns[c];
	return NAN;
}

int tc__place_class(const struct tc_rank_place *a, const struct tc_rank_place *b)
{
	if (a->core < 0 || b->core < 0)
		return -1;
	if (a->core == b->core)
		return TC_HANDOFF_SMT;
	if (a->cache >= 0 && a->cache == b->cache)
		return TC_HANDOFF_CACHE;
	if (a->package < 0 || a->package == b->package)
		return TC_HANDOFF_PACKAGE;
	return TC_HANDOFF_REMOTE;
}

double tc__machine_round_ns(const struct tc_calibration *cal, const struct tc_model *seg, int k,
                            size_t bytes, int q)
{
	return seg->ts_ns + (double)bytes * seg->tw_ns * tc__machine_share(cal, k, bytes) +
	       tc__machine_sync_ns(cal, q);
}

/* allreduce: AUTO reduces the whole vector on every rank (`shm_flag`)
 * rather than by slices (`shm`) up to TC__SHM_FLAT_MAX bytes, or while the
 * p - 1 vectors a rank reads hold at most TC__SHM_FLAT_READ bytes: at p = 2
 * on a 16-CPU KVM guest, 8 KiB took 1.29 us whole and 2.39 us by slices
 * when `shm` synchronised three times per call (it now does twice up to
 * 64 KiB slices; the bound has not been measured again there).
 * Not beyond, even for two ranks, where the whole vector is the faster
 * while the inputs stay unchanged between calls (2-vCPU guest, 512 KiB:
 * 18-23 us against 48-58 by slices; 8 MiB 540-590 against 760-810) but
 * the slower once every rank writes its input before each call, as a
 * program does (bench/peers -w: 512 KiB 135-141 us against 85-92, 8 MiB
 * 2.15-2.19 ms against 1.28-1.55): every line of the peer's input must
 * then come from its cache, twice the slice's share. */
#define TC__SHM_FLAT_MAX 4096u
#define TC__SHM_FLAT_READ 8192u

int tc__shm_team(const struct tc_team *team)
{
	if (team->emulate || team->engine_run || team->wait == TC_WAIT_BLOCK)
		return TC__SHM_NONE;
	if (team->p <= team->cpus)
		return TC__SHM_CPUS;
	return team->exec == TC_EXEC_FIBRES ? TC__SHM_FIBRES : TC__SHM_NONE;
}

/* The calls AUTO gives the machine's own algorithms on a team of fibres
 * with more ranks than CPUs (tc__shm_team(), TC__SHM_FIBRES). */
static int tc__shm_fibres_take(const struct tc__gen *g)
{
	switch (g->coll) {
	case TC_COLL_BARRIER:
	case TC_COLL_ALLGATHER:
	case TC_COLL_ALLTOALL:
	case TC_COLL_REDUCE_SCATTER:
		return 1;
	case TC_COLL_BCAST:
		return g->bytes <= TC__SHM_INLINE; /* in the root's ring */
	case TC_COLL_ALLREDUCE:
		return g->bytes <= TC__SHM_TREE_MAX; /* in the flags */
	default:
		return 0;
	}
}

/* On a team of fibres, the barrier and a small allreduce take `shm_tree`
 * where more than this many ranks share a CPU, the flat `shm` and
 * `shm_flag` up to it: a flat call has each of the p ranks sweep the other
 * p - 1 flags, and the ranks of a CPU sweep one after another; the tree
 * reads each flag once or twice.  On 2 CPUs (`./tools/bench fibres --coll`,
 * ns a call, flat against tree): barrier p = 3 498/773, 4 657/876, 5
 * 277/366, 6 327/364, 8 1402/1182, 16 1554/1227, 32 3972/2804, 64
 * 10972/5771; allreduce of 8 bytes p = 5 357/388, 6 449/424, 8 1457/1332,
 * 16 2411/1384, 64 22732/6640 (its schedule over the channels, which AUTO
 * took before: 1109, 1700, 4009, 4364 and 17410). */
#define TC__SHM_TREE_FIBRES 3

const struct tc__alg *tc__shm_pick(const struct tc__gen *g, int need_ordered)
{
	if (!g->shm || (g->shm == TC__SHM_FIBRES && !tc__shm_fibres_take(g)))
		return NULL;
	const bool tree = g->shm == TC__SHM_FIBRES && g->p > TC__SHM_TREE_FIBRES * g->cpus &&
	                  (g->coll == TC_COLL_BARRIER || g->coll == TC_COLL_ALLREDUCE);
	const char *want = tree                           ? "shm_tree"
	                   : g->coll != TC_COLL_ALLREDUCE ? "shm"
	                   : g->bytes <= TC__SHM_FLAT_MAX || g->bytes * (size_t)(g->p - 1) <= TC__SHM_FLAT_READ
	                           ? "shm_flag"
	                           : "shm";
	const struct tc__alg *a = tc__alg_find(g->coll, want);
	if (!a || !(a->flags & TC__ALG_SHM) || (need_ordered && !(a->flags & TC__ALG_ORDERED)))
		return NULL;
	return tc__alg_check_quiet(a, g) ? NULL : a;
}
