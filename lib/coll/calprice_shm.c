/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/calprice_shm.c - the calibrated price of the machine's own
 * algorithms (TC__ALG_SHM, lib/coll/shm.h) on a native team whose ranks
 * each have a CPU: their rounds of cache-line flags, and the readers'
 * copies and combines out of the writers' buffers at their share of the
 * copy bandwidth (docs/calibration.md, "The machine's own algorithms").
 * lib/coll/calprice.c takes it in place of the pair's prediction.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/calprice.h"
#include "coll/coll_internal.h"
#include "coll/machine.h"
#include "coll/shm.h"
#include "topocoll.h"
#include "topocoll/calibrate.h"

/* The hand-off a round of the machine's own algorithms pays, tr[0..n) its
 * transfers: with a placement (np entries) that says every pair's class,
 * the class of its farthest pair between two ranks
 * (tc__machine_handoff_class_ns(): a class not measured takes the next
 * farther one's), so that a tree's level inside a cache domain pays that
 * domain's hand-off and its leaders' level the one across caches or
 * packages; otherwise, or where no class applies, tc__machine_handoff_ns()
 * of the round's q ranks. */
static double tc__cal_round_handoff(const struct tc_calibration *cal, const struct tc_transfer *tr,
                                    int n, int np, const struct tc_rank_place *place, int q)
{
	int far = -1;
	for (int i = 0; place && i < n; i++) {
		const struct tc_transfer *x = &tr[i];
		if (x->src == x->dst || x->src < 0 || x->dst < 0 || x->src >= np || x->dst >= np)
			continue;
		int c = tc__place_class(&place[x->src], &place[x->dst]);
		if (c < 0) {
			far = -1;
			break;
		}
		far = c > far ? c : far;
	}
	double h = far >= 0 ? tc__machine_handoff_class_ns(cal, far) : NAN;
	return isfinite(h) ? h : tc__machine_handoff_ns(cal, q);
}

/* The calibration's smallest combine: the time of the combine point of
 * fewest bytes (tc_reduce_local of a few bytes, a call each: 7-9 ns on
 * the VMs measured), NAN where none was measured. */
static double tc__cal_least_combine(const struct tc_calibration *cal)
{
	double least = NAN, least_b = 0;
	for (int i = 0; i < cal->npoints; i++) {
		const struct tc_calibration_point *pt = &cal->points[i];
		if (isfinite(pt->combine_ns) && pt->combine_ns > 0 && pt->bytes &&
		    (!isfinite(least) || (double)pt->bytes < least_b))
			least = pt->combine_ns, least_b = (double)pt->bytes;
	}
	return least;
}

/* What adding m bytes of cached data into a rank's own costs: m t_c, but
 * at least the calibration's smallest combine, least
 * (tc__cal_least_combine(), NAN: no floor), where m t_c says a fraction
 * of a nanosecond: a combine's call and loop, which a reduction of small
 * blocks pays once per operand (the 8-byte allreduce `shm_flag` at
 * p = 16 combines 15 of them).  0 for m = 0. */
static double tc__cal_add_ns(uint64_t m, double tc, double least)
{
	const double fit = (double)m * tc;
	return m && isfinite(least) && least > fit ? least : fit;
}

/* The cache-line misses a core keeps in flight, about: its line fill
 * buffers (10-16 on x86 cores of the last decade).  A reader whose swept
 * waits find many flags changed fetches their lines in waves of so many. */
#define TC__CAL_MISSES 10

/* How a round's ranks meet: every rank awaits every other's flag (flat), the
 * readers await one writer's (fan-out: a bcast's, a scatter's), or one
 * reader awaits the writers' (fan-in: a gather's, the root's wait for a
 * bcast's readers). */
enum tc__cal_shape { TC__CAL_FLAT, TC__CAL_FAN_OUT, TC__CAL_FAN_IN };

/* The synchronisation of such a round among q ranks, flags measured.  A
 * flat round is F(q).  A fan-in's one reader sweeps q - 1 flags: F(2), and
 * a hand-off h for each further wave of TC__CAL_MISSES of them.  A fan-out
 * is priced as a flat round, though each reader awaits one flag: the
 * writer's line goes to q - 1 readers at once, and on a 16-vCPU guest a
 * bcast of 8 bytes (0.55-0.66 us at q = 4, 8 and 16) cost more than F(2)
 * and o_call (0.28-0.43) and, up to q = 8, about F(q) and o_call. */
static double tc__cal_sync_ns(const struct tc_calibration *cal, enum tc__cal_shape shape, int q, double h)
{
	if (shape != TC__CAL_FAN_IN || q <= 2)
		return tc__machine_flag_ns(cal, q);
	double f = tc__machine_flag_ns(cal, 2);
	if (isfinite(h))
		f += (double)((q - 2) / TC__CAL_MISSES) * h;
	return f;
}

/* A source block of a schedule: the rank, buffer, offset and size a
 * transfer between two ranks reads, and the transfer's index. */
struct tc__cal_block {
	int src, buf, idx;
	uint64_t off, bytes;
};

static int tc__cal_block_cmp(const void *a, const void *b)
{
	const struct tc__cal_block *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	if (x->buf != y->buf)
		return x->buf < y->buf ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return 0;
}

/* readers[i] for each transfer i of tr[0..n) between two ranks: how many
 * of the schedule's transfers between two ranks read its source block
 * (the same rank, buffer, offset and size): an allgather's block p - 1,
 * an alltoall's 1.  0 for a local one.  TC_ENOMEM or TC_OK. */
static int tc__cal_readers(const struct tc_transfer *tr, int n, int *readers)
{
	struct tc__cal_block *b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
	if (!b)
		return TC_ENOMEM;
	int m = 0;
	for (int i = 0; i < n; i++) {
		readers[i] = 0;
		if (tr[i].src != tr[i].dst)
			b[m++] = (struct tc__cal_block){tr[i].src, tr[i].src_buf, i, tr[i].src_off,
			                                tr[i].bytes};
	}
	qsort(b, (size_t)m, sizeof *b, tc__cal_block_cmp);
	for (int i = 0; i < m;) {
		int j = i;
		while (j < m && !tc__cal_block_cmp(&b[i], &b[j]))
			j++;
		for (int x = i; x < j; x++)
			readers[b[x].idx] = j - i;
		i = j;
	}
	free(b);
	return TC_OK;
}

/*
 * The price of a schedule of the machine's own algorithms (TC__ALG_SHM) on
 * a native team whose ranks each have a CPU: there the reader copies (out of
 * the writer's buffer or flag), so a rank's reads in a round follow one
 * another while the readers run at once, every reader at its share of the
 * copy bandwidth.  A round r among q_r ranks, k_r of them reading, costs
 *   S_r + max over readers d of sum over d's transfers x of
 *            (h_x + c(k_r, m_x))            (a copy)
 *            (h_x + c'(k_r, m_x))           (a combine)
 * plus m_x t_c for each local combine (m_x: the part of its block the
 * reader copies itself, tc__shm_layout()'s reader_bytes; a bcast's root
 * copies the rest at the same time, in as long).  S_r is the round's
 * synchronisation by its shape (tc__cal_sync_ns(): F(q_r), the calibrated round of
 * cache-line flags among q_r ranks, each writing its flag and sweeping the
 * others'; F(2) and the sweep's further waves where one reader awaits
 * many).  c(k, m) is the time one of k readers at once takes for m
 * bytes (tc__machine_copy_ns) at the bandwidth of the size where the call's
 * data live (the block's own size where the footprint is roomy; else
 * tc__cal_col: all that d reads in the call, or the memory-sized block's
 * when the footprint exceeds the last-level cache); c'(k, m) the
 * same for k ranks combining at once (tc__machine_combine_ns: the
 * combine table), or without that table c(k, m) + m t_c, t_c measured on
 * data in the combining core's cache, so that a combine out of another's
 * buffer pays the read besides (on 16-vCPU guests the reduce_scatter of
 * 64 KiB blocks at p = 16, whose ranks each combine 15 blocks, took 2.5
 * times the allgather's copy of as many, where that price said 1.3).
 * A reduction that stages its operands (tc__shm_layout()'s staged:
 * copied into the reader's own buffer as each flag is found, combined
 * there) pays c(k, m_x) + m_x t_c for each instead of c'(k, m_x).
 * Every add of cached data (m_x t_c above, a local combine's) costs at
 * least the calibration's smallest combine (tc__cal_add_ns()).
 * h_x, a cache line's hand-off (tc__cal_round_handoff(): with a
 * placement, the class of the round's
 * farthest pair; without, the pair's at q = 2, else the farthest class),
 * follows where the run puts the data (tc__shm_layout()):
 * - in the writer's flag or area: the round brought the flag's first
 *   line; every further line d reads (the payload's beyond that line, the
 *   area's) is a miss, at what a further flag adds to the calibrated
 *   round, (F(q) - F(2)) / (q - 2) (q > 2), whether the reader copies its
 *   block as the sweep finds the writer's flag or reduces its operands
 *   after the sweep, in rank order (on 16-vCPU guests the alltoall of 8
 *   bytes took 300-490 ns more than the allgather of 8 at p = 8, where
 *   readers 3 to 7 read 7 second lines, and 290-840 more at p = 16, 15
 *   area lines: 20-70 ns a line, as that slope, where a hand-off per wave
 *   of TC__CAL_MISSES lines said 80-120 and 150-240 in all).  Among two
 *   ranks, without that slope, one h per such wave;
 * - in its buffer: one h for each block after d's first.
 * The run's synchronisations beyond the schedule's rounds (the readers
 * done with IN: tc__shm_layout()'s syncs) each cost the reverse of the data
 * round's shape (the readers' flags to a bcast's root: a fan-in).  Local
 * copies are charged by the caller.  A calibration without the flag
 * rounds (nflag 0) prices a round as R(q), the round of messages, and a
 * reader's hand-offs as before them: with swept waits (swept: every
 * algorithm but shm_tree, whose leaders read their members' flags one at a
 * time) one at its first read of a round and at each TC__CAL_MISSES-th
 * after, as many misses overlapping as its core keeps in flight
 * (lib/coll/shm.c, tc__shm_sweep()).
 * The pair's one-port or all-port model describes neither: one port
 * serialises a broadcast's reads at the root, all ports lets a rank read its
 * p - 1 blocks at once.  *ns gets NAN without the concurrency tables.
 */
int tc__cal_shm_ns(const struct tc_calibration *cal, const struct tc_transfer *tr, int n, int np,
                   const struct tc__cal_data *data, const struct tc_rank_place *place,
                   bool unstaged, const struct tc_call *call, const char *alg, double tc, double *ns)
{
	*ns = NAN;
	if (np < 1 || !data->vol || !isfinite(tc__machine_r_ns(cal, 2)) ||
	    !isfinite(tc__machine_copy_ns(cal, 2, 64)))
		return TC_OK;
	const bool swept = strcmp(alg, "shm_tree") != 0;
	/* Every add of cached data costs at least this (tc__cal_add_ns()). */
	const double least = tc__cal_least_combine(cal);
	/* Rounds of flags measured (a calibration without them: rounds of
	 * messages, R(q), and the readers' hand-offs as before). */
	const bool flags = isfinite(tc__machine_flag_ns(cal, 2));
	struct tc__shm_layout lay = tc__shm_layout(call->coll, alg, np, call->bytes);
	lay.staged = lay.staged && !unstaged;
	const enum tc__shm_via via = lay.via;
	int *stamp = calloc((size_t)np, sizeof *stamp), *seen = calloc((size_t)np, sizeof *seen);
	int *wrote = calloc((size_t)np, sizeof *wrote);
	int *reads = calloc((size_t)np, sizeof *reads), *lines = calloc((size_t)np, sizeof *lines);
	/* How many read each block: only where a block of several readers
	 * may be priced by the shared table (below). */
	const bool shared = data->roomy && isfinite(tc__machine_shared_ns(cal, 2, 64));
	int *readers = shared ? malloc((size_t)(n > 0 ? n : 1) * sizeof *readers) : NULL;
	double *busy = calloc((size_t)np, sizeof *busy);
	double total = 0, h_last = NAN;
	int err = TC_OK;
	if (!stamp || !seen || !wrote || !reads || !lines || (shared && !readers) || !busy ||
	    (shared && tc__cal_readers(tr, n, readers))) {
		err = TC_ENOMEM;
		goto out;
	}
	int rounds = 0, q_last = 0;
	enum tc__cal_shape shape_last = TC__CAL_FLAT;
	for (int i = 0; i < n;) {
		const int r = tr[i].round, id = i + 1, first = i;
		int k = 0, q = 0, w = 0;
		for (; i < n && tr[i].round == r; i++) {
			const struct tc_transfer *x = &tr[i];
			if (x->src < 0 || x->dst < 0 || x->src >= np || x->dst >= np)
				continue;
			if (x->src != x->dst && stamp[x->dst] != id)
				stamp[x->dst] = id, k++;
			if (x->src != x->dst && wrote[x->src] != id)
				wrote[x->src] = id, w++;
			if (seen[x->src] != id)
				seen[x->src] = id, q++;
			if (seen[x->dst] != id)
				seen[x->dst] = id, q++;
		}
		const double h = tc__cal_round_handoff(cal, tr + first, i - first, np, place, q);
		/* A flag line more in a sweep of q: what F(q) adds to F(2) per
		 * further flag (none where a noisy F(q) lies below F(2)). */
		const double line = flags && q > 2 ? fmax(0.0, (tc__machine_flag_ns(cal, q) -
		                                                tc__machine_flag_ns(cal, 2)) /
		                                                       (double)(q - 2))
		                                   : NAN;
		const enum tc__cal_shape shape = w == 1 && k > 1   ? TC__CAL_FAN_OUT
		                                 : k == 1 && w > 1 ? TC__CAL_FAN_IN
		                                                   : TC__CAL_FLAT;
		double most = 0;
		for (int j = first; j < i; j++) {
			const struct tc_transfer *x = &tr[j];
			if (x->src < 0 || x->dst < 0 || x->src >= np || x->dst >= np)
				continue;
			if (seen[x->dst] == id) /* the round's first charge to d */
				seen[x->dst] = -id, busy[x->dst] = 0;
			double t;
			if (x->src == x->dst) {
				t = x->combine ? tc__cal_add_ns(x->bytes, tc, least) : 0;
			} else {
				const size_t at = data->roomy && x->bytes
				                          ? (size_t)x->bytes
				                          : tc__cal_col(data, x->dst, x->bytes);
				/* The part the reader copies itself (a helped
				 * bcast's head; the writer's copy of the rest
				 * runs at the same time and takes as long). */
				const double own = lay.reader_bytes < call->bytes
				                           ? (double)x->bytes * (double)lay.reader_bytes /
				                                     (double)call->bytes
				                           : (double)x->bytes;
				/* A combine read out of another's block: at the
				 * combiners' rate where it was measured, else as
				 * a copy and an add of data in the cache; staged
				 * (tc__shm_stages()), as the copy into the
				 * reader's stage and the add there. */
				const double comb = x->combine && !lay.staged
				                            ? tc__machine_combine_ns(cal, k, at)
				                            : NAN;
				/* A copy of a block that n ranks read, in a
				 * roomy call: the first reader's at the copy
				 * table's rate, the n - 1 after it at the
				 * shared table's, where measured; each reader
				 * is priced at their mean (in an allgather
				 * every reader comes first to one block, its
				 * first).  Past half the cache the other
				 * ranks' data evict the block between its
				 * readers, as for the row above. */
				double cp = tc__machine_copy_ns(cal, k, at);
				const double sh = shared && !x->combine && readers[j] > 1
				                          ? tc__machine_shared_ns(cal, k, at)
				                          : NAN;
				if (isfinite(sh))
					cp = (cp + (readers[j] - 1) * sh) / readers[j];
				if (!x->bytes)
					t = 0;
				else if (isfinite(comb))
					t = comb * own / (double)at;
				else
					t = cp * own / (double)at +
					    (x->combine ? tc__cal_add_ns(x->bytes, tc, least) : 0);
				if (stamp[x->dst] == id) /* d's first read of the round */
					stamp[x->dst] = -id, reads[x->dst] = 0, lines[x->dst] = 0;
				if (flags && via != TC__SHM_VIA_IN) {
					/* In the writer's flag (its payload after
					 * TC__SHM_DATA_OFF; the first line is the
					 * round's) or area. */
					const uint64_t off =
					        (lay.per_reader ? (uint64_t)x->dst * x->bytes : 0) +
					        (via == TC__SHM_VIA_FLAG ? TC__SHM_DATA_OFF : 0);
					const uint64_t lo = off / 64, hi = (off + x->bytes - 1) / 64;
					for (uint64_t l = lo; x->bytes && l <= hi; l++) {
						if (via == TC__SHM_VIA_FLAG && l == 0)
							continue;
						if (isfinite(line))
							t += line;
						else if (isfinite(h) &&
						         lines[x->dst] % TC__CAL_MISSES == 0)
							t += h;
						lines[x->dst]++;
					}
				} else if (isfinite(h) &&
				           (flags ? reads[x->dst] > 0
				                  : !swept || reads[x->dst] % TC__CAL_MISSES == 0)) {
					t += h;
				}
				reads[x->dst]++;
			}
			busy[x->dst] += t;
			most = busy[x->dst] > most ? busy[x->dst] : most;
		}
		if (q) {
			total += (flags ? tc__cal_sync_ns(cal, shape, q, h) : tc__machine_r_ns(cal, q)) +
			         most;
			rounds++;
			q_last = q, shape_last = shape, h_last = h;
		}
	}
	if (flags && lay.syncs > rounds && q_last) {
		const enum tc__cal_shape back = shape_last == TC__CAL_FAN_OUT  ? TC__CAL_FAN_IN
		                                : shape_last == TC__CAL_FAN_IN ? TC__CAL_FAN_OUT
		                                                               : TC__CAL_FLAT;
		total += (lay.syncs - rounds) * tc__cal_sync_ns(cal, back, q_last, h_last);
	}
	*ns = isfinite(total) ? total : NAN;
out:
	free(stamp);
	free(seen);
	free(wrote);
	free(reads);
	free(lines);
	free(readers);
	free(busy);
	return err;
}
