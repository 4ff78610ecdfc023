/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/calprice.c - the calibrated price of a call (topocoll/calibrate.h,
 * docs/calibration.md): a calibration's model of a message size, the pair's
 * prediction under it, and the concurrency charges of the schedule's rounds,
 * or the price of a shared-memory schedule.  Here rather than in
 * lib/calibrate so that TC_ALG_AUTO (lib/coll/select.c) can price a team's
 * candidates with the calibration the team carries; lib/calibrate/predict.c
 * gives the public prediction on top of it.  Described in lib/coll/machine.h.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "coll/coll_internal.h"
#include "coll/gen.h"
#include "coll/machine.h"
#include "coll/shm.h"
#include "model/calibration.h"
#include "topocoll.h"
#include "topocoll/calibrate.h"

/* The last-level cache the calibration saw (its largest known cache
 * size), 0 when unknown. */
static size_t tc__cal_llc_bytes(const struct tc_calibration *cal)
{
	size_t b = 0;
	for (int i = 0; i < 3; i++)
		b = cal->cache_bytes[i] > b ? cal->cache_bytes[i] : b;
	return b;
}

/*
 * Where a schedule's data live, for the copy table's price: the bytes the
 * call touches, each buffer of each rank counted once over the span of its
 * offsets that the transfers read or write (a block that every rank reads,
 * an allgather's, counts once; the blocks of an alltoall each), and the
 * bytes each rank receives over the whole call (vol[np]).  When the
 * footprint exceeds the last-level cache the data come from memory: every
 * read is priced at the table's memory-sized block (mem).  Otherwise a
 * rank's reads are priced at the size of all it receives in the call,
 * capped at the largest block of the table that the table's copiers, all
 * at once, hold in the last-level cache (cached; no cap when the cache is
 * unknown): what a rank takes in over the call is what stays in, or
 * streams through, its caches (a pipeline's packets arrive one after
 * another, but a 4 MiB vector of them passes through L3, not L1), and a
 * footprint within the last level is read from there, not from memory.
 * tc__cal_col() gives that size for a rank.  The machine's own algorithms
 * read each block out of its writer's buffer, and where the call's
 * footprint takes at most half the last-level cache (roomy) such a read is
 * priced at the size of the block itself: the block sits where its writer
 * left it, as the table's source of that size does, whatever else the
 * reader takes in (on 16-vCPU guests the allgather, alltoall, allreduce
 * and reduce_scatter of 1 MiB blocks at p = 8, 72 MiB of a 300 MiB L3,
 * ran 30-45% under a price read at what each rank took in; past half the
 * cache, the other ranks' data and the call's own outputs evict it).
 */
struct tc__cal_data {
	bool mem;      /* the footprint exceeds the last-level cache */
	size_t big;    /* the table's memory-sized block (0: no table) */
	size_t cached; /* its largest block held in that cache (0: no cap) */
	uint64_t *vol; /* per rank, bytes received over the call */
	bool roomy;    /* the footprint is at most half the last-level cache */
};

static int tc__cal_data_init(const struct tc_calibration *cal, const struct tc_transfer *tr, int n,
                             int np, struct tc__cal_data *d)
{
	const double llc = (double)tc__cal_llc_bytes(cal);
	d->mem = false;
	d->big = cal->ncopy_sizes > 0 ? cal->copy_sizes[cal->ncopy_sizes - 1] : 0;
	/* The largest block whose copiers' two buffers, all of the table's
	 * ranks at once, fit the last-level cache (none known: no cap). */
	d->cached = 0;
	for (int s = 0; llc > 0 && s < cal->ncopy_sizes; s++)
		if (s == 0 || 2.0 * (double)cal->conc_ranks * (double)cal->copy_sizes[s] <= llc)
			d->cached = cal->copy_sizes[s];
	d->vol = calloc((size_t)(np > 0 ? np : 1), sizeof *d->vol);
	uint64_t *lo = malloc((size_t)(np > 0 ? np : 1) * 3 * sizeof *lo);
	uint64_t *hi = calloc((size_t)(np > 0 ? np : 1) * 3, sizeof *hi);
	if (!d->vol || !lo || !hi) {
		free(d->vol);
		free(lo);
		free(hi);
		d->vol = NULL;
		return TC_ENOMEM;
	}
	for (int i = 0; i < np * 3; i++)
		lo[i] = UINT64_MAX;
	for (int i = 0; i < n; i++) {
		const struct tc_transfer *x = &tr[i];
		if (x->src < 0 || x->dst < 0 || x->src >= np || x->dst >= np || !x->bytes)
			continue;
		if (x->src != x->dst)
			d->vol[x->dst] += x->bytes;
		/* Both ends: the source's buffer and offset, the destination's. */
		const int rank[2] = {x->src, x->dst}, buf[2] = {x->src_buf, x->dst_buf};
		const uint64_t offs[2] = {x->src_off, x->dst_off};
		for (int e = 0; e < 2; e++) {
			const int b = buf[e] >= 0 && buf[e] < 3 ? buf[e] : 2;
			const size_t at = (size_t)rank[e] * 3 + (size_t)b;
			const uint64_t off = offs[e];
			lo[at] = off < lo[at] ? off : lo[at];
			hi[at] = off + x->bytes > hi[at] ? off + x->bytes : hi[at];
		}
	}
	double foot = 0;
	for (int i = 0; i < np * 3; i++)
		if (hi[i] > lo[i])
			foot += (double)(hi[i] - lo[i]);
	d->mem = llc > 0 && foot > llc && d->big > 0;
	d->roomy = llc > 0 && foot <= llc / 2;
	free(lo);
	free(hi);
	return TC_OK;
}

/* The block size at which the copy table prices rank r's reads (above). */
static size_t tc__cal_col(const struct tc__cal_data *d, int r, uint64_t bytes)
{
	if (d->mem)
		return d->big;
	uint64_t v = d->vol[r] > bytes ? d->vol[r] : bytes;
	return d->cached > 0 && v > d->cached ? d->cached : (size_t)v;
}

/* The concurrency charges of a schedule tr[0..n) over np ranks, at the
 * segment's t_w and t_c (calibrate.h), its data where data says. */
static int tc__conc_terms(const struct tc_calibration *cal, const struct tc_transfer *tr, int n,
                          int np, const struct tc__cal_data *data, double tw, double tc,
                          double *share, double *sync)
{
	*share = *sync = 0;
	if (cal->conc_ranks < 2 || n < 1 || np < 3)
		return TC_OK;
	int *recv = calloc((size_t)np, sizeof *recv), *seen = calloc((size_t)np, sizeof *seen);
	int *sent = calloc((size_t)np, sizeof *sent), *from = calloc((size_t)np, sizeof *from);
	int *back = calloc((size_t)np, sizeof *back);
	uint64_t *vol = calloc((size_t)np * 2, sizeof *vol), *cvol = vol + np;
	if (!recv || !seen || !sent || !from || !back || !vol) {
		free(recv);
		free(seen);
		free(sent);
		free(from);
		free(back);
		free(vol);
		return TC_ENOMEM;
	}
	for (int i = 0; i < n;) {
		int r = tr[i].round, stamp = i + 1, k = 0, q = 0, first = i;
		uint64_t v = 0;
		for (; i < n && tr[i].round == r; i++) {
			const struct tc_transfer *x = &tr[i];
			if (x->src == x->dst || x->src < 0 || x->dst < 0 || x->src >= np || x->dst >= np)
				continue;
			if (recv[x->dst] != stamp)
				recv[x->dst] = stamp, vol[x->dst] = 0, cvol[x->dst] = 0, k++;
			if (x->combine)
				cvol[x->dst] += x->bytes;
			sent[x->src] = stamp;
			from[x->dst] = x->src;
			if (seen[x->src] != stamp)
				seen[x->src] = stamp, q++;
			if (seen[x->dst] != stamp)
				seen[x->dst] = stamp, q++;
			vol[x->dst] += x->bytes;
			v = vol[x->dst] > v ? vol[x->dst] : v;
		}
		if (!q)
			continue;
		/* Every byte a busiest receiver (one that takes the round's
		 * most bytes) takes in the round is slowed by the k copies at
		 * once, at the share of the size where the call's data live
		 * (tc__cal_col), or as a ring of k ranks over the channels is
		 * at the round's size, where that is slower (each receiver
		 * reads a block its sender has just written, and waits for
		 * it), and so is its combining of them: a combine out of
		 * another rank's buffer moves the same bytes through the
		 * shared caches as the copy.  A receiver that also sends in
		 * the round, to another rank than the one it receives from (a
		 * ring's or a pipeline's step), is such a ring's step: its
		 * time against the pair's one-way message (z1); otherwise (a
		 * tree's receiver, a pairwise exchange, whose exchange the
		 * pair's fit prices) against a ring of two (z).  The round
		 * pays its dearest busiest receiver's price: a pipeline's root
		 * receives as much as its other ranks but sends nothing, and
		 * the ranks that pass the block on set the step's pace. */
		for (int j = first; j < i; j++) /* receivers that answer their sender */
			if (tr[j].src >= 0 && tr[j].src < np && recv[tr[j].src] == stamp &&
			    tr[j].dst == from[tr[j].src])
				back[tr[j].src] = stamp;
		double most = 0;
		for (int j = first; v > 0 && j < i; j++) {
			const int d = tr[j].dst;
			if (tr[j].src == d || d < 0 || d >= np || recv[d] != stamp || vol[d] != v)
				continue;
			recv[d] = -stamp; /* priced once */
			double s = tc__machine_share(cal, k, tc__cal_col(data, d, v));
			const double z = sent[d] == stamp && back[d] != stamp
			                         ? tc__machine_chain_step(cal, k, (size_t)v)
			                         : tc__machine_chain_share(cal, k, (size_t)v);
			s = z > s ? z : s;
			const double c = ((double)v * tw + (double)cvol[d] * tc) * (s - 1.0);
			most = c > most ? c : most;
		}
		*share += most;
		*sync += tc__machine_round_excess(cal, q);
	}
	/* o_call holds one round's excess already (measured on one round at
	 * p = 2). */
	if (*sync > 0)
		*sync = fmax(0, *sync - tc__machine_round_excess(cal, 2));
	free(recv);
	free(seen);
	free(sent);
	free(from);
	free(back);
	free(vol);
	return TC_OK;
}

int tc__cal_model(const struct tc_calibration *cal, size_t bytes, struct tc_model *out, int *segment)
{
	int k = 0;
	while (k + 1 < cal->nsegments && cal->segments[k + 1].lo_bytes <= bytes)
		k++;
	/* Checked (lib/model/calibration.h): every segment has a finite line. */
	const struct tc_calibration_fit *f = k < cal->nsegments ? &cal->segments[k].fit : &cal->all;
	if (!isfinite(f->ts_ns) || !isfinite(f->tw_ns_per_byte))
		return TC_EINVAL;
	tc_model_default(out);
	out->ts_ns = f->ts_ns > 0 ? f->ts_ns : 0;
	out->tw_ns = f->tw_ns_per_byte > 0 ? f->tw_ns_per_byte : 0;
	/* A negative intercept (a segment of large sizes, steeper than its
	 * start): t_s 0 and the t_w that keeps the line's time at this size,
	 * rather than the line raised by |t_s| everywhere. */
	if (f->ts_ns < 0 && bytes > 0) {
		double at = f->ts_ns + f->tw_ns_per_byte * (double)bytes;
		out->tw_ns = at > 0 ? at / (double)bytes : 0;
	}
	out->tc_ns = isfinite(cal->tc_ns_per_byte) && cal->tc_ns_per_byte > 0 ? cal->tc_ns_per_byte : 0;
	out->th_ns = 0;
	if (segment)
		*segment = k;
	return tc_model_check(out);
}

int tc_calibration_model(const struct tc_calibration *cal, size_t bytes, struct tc_model *out, int *segment)
{
	tc__clear_detail();
	if (!out)
		return TC_EINVAL;
	int err = tc__calibration_check(cal, true, "tc_calibration_model");
	return err ? err : tc__cal_model(cal, bytes, out, segment);
}

/* Calibrated prediction's shapes of a schedule (tr[0..n), tc_schedule_call);
 * schedules of more than TC__CAL_XCH_MAX transfers have neither (the tests
 * are quadratic; calibration is for a few ranks). */
#define TC__CAL_XCH_MAX 4096

/* Whether transfer i between two ranks has its reverse in its round (of the
 * same bytes when same_bytes). */
static bool tc__cal_reversed(const struct tc_transfer *tr, int n, int i, bool same_bytes)
{
	for (int j = 0; j < n; j++)
		if (tr[j].round == tr[i].round && tr[j].src == tr[i].dst &&
		    tr[j].dst == tr[i].src && (!same_bytes || tr[j].bytes == tr[i].bytes))
			return true;
	return false;
}

/* Copying exchanges only: every transfer between two ranks copies (no
 * combine) and has its reverse (same bytes) in its round; at least one. */
static bool tc__cal_exchange_only(const struct tc_transfer *tr, int n)
{
	int moving = 0;
	if (n > TC__CAL_XCH_MAX)
		return false;
	for (int i = 0; i < n; i++) {
		if (tr[i].src == tr[i].dst)
			continue;
		if (tr[i].combine || !tc__cal_reversed(tr, n, i, true))
			return false;
		moving++;
	}
	return moving > 0;
}

/* One-way combines: the schedule combines, and no combining message between
 * ranks has its reverse in its round (a reduce's tree, not an allreduce's
 * exchange). */
static bool tc__cal_combines_one_way(const struct tc_transfer *tr, int n)
{
	int combines = 0;
	if (n > TC__CAL_XCH_MAX)
		return false;
	for (int i = 0; i < n; i++) {
		if (tr[i].src == tr[i].dst || !tr[i].combine)
			continue;
		if (tc__cal_reversed(tr, n, i, false))
			return false;
		combines++;
	}
	return combines > 0;
}

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
static int tc__cal_shm_ns(const struct tc_calibration *cal, const struct tc_transfer *tr, int n,
                          int np, const struct tc__cal_data *data, const struct tc_rank_place *place,
                          const struct tc_call *call, const char *alg, double tc, double *ns)
{
	*ns = NAN;
	if (np < 1 || !data->vol || !isfinite(tc__machine_r_ns(cal, 2)) ||
	    !isfinite(tc__machine_copy_ns(cal, 2, 64)))
		return TC_OK;
	const bool swept = strcmp(alg, "shm_tree") != 0;
	/* Rounds of flags measured (a calibration without them: rounds of
	 * messages, R(q), and the readers' hand-offs as before). */
	const bool flags = isfinite(tc__machine_flag_ns(cal, 2));
	const struct tc__shm_layout lay = tc__shm_layout(call->coll, alg, np, call->bytes);
	const enum tc__shm_via via = lay.via;
	int *stamp = calloc((size_t)np, sizeof *stamp), *seen = calloc((size_t)np, sizeof *seen);
	int *wrote = calloc((size_t)np, sizeof *wrote);
	int *reads = calloc((size_t)np, sizeof *reads), *lines = calloc((size_t)np, sizeof *lines);
	/* How many read each block: only where a block of several readers
	 * may be priced by the shared table (below). */
	const bool shared = data->roomy && isfinite(tc__machine_shared_ns(cal, 2, 64));
	int *readers = shared ? malloc((size_t)(n > 0 ? n : 1) * sizeof *readers) : NULL;
	double *busy = calloc((size_t)np, sizeof *busy);
	if (!stamp || !seen || !wrote || !reads || !lines || (shared && !readers) || !busy ||
	    (shared && tc__cal_readers(tr, n, readers))) {
		free(stamp);
		free(seen);
		free(wrote);
		free(reads);
		free(lines);
		free(readers);
		free(busy);
		return TC_ENOMEM;
	}
	double total = 0, h_last = NAN;
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
				t = x->combine ? (double)x->bytes * tc : 0;
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
					    (x->combine ? (double)x->bytes * tc : 0);
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
	free(stamp);
	free(seen);
	free(wrote);
	free(reads);
	free(lines);
	free(readers);
	free(busy);
	*ns = isfinite(total) ? total : NAN;
	return TC_OK;
}

int tc__cal_price(const struct tc_calibration *cal, const struct tc_topo *t,
                  const struct tc_call *call, const struct tc_rank_place *place,
                  struct tc_prediction *pr, int *segment, double *ns, double *share, double *sync)
{
	struct tc_prediction p;
	struct tc_model md;
	int k = 0, k2 = 0;
	if (!ns || !call)
		return TC_EINVAL;
	int err = tc__cal_model(cal, call->bytes, &md, &k);
	if (!err)
		err = tc_predict_call(t, &md, call, &p);
	if (err == TC_ELIMIT && !(md.ts_ns > 0) && !call->packets && isfinite(cal->ts_ns) &&
	    cal->ts_ns > 0 && isfinite(cal->tw_ns_per_byte) && cal->tw_ns_per_byte > 0) {
		/* A segment fitted with no start-up time (clamped at 0) has no
		 * best packet count: a pipeline's r_opt = sqrt((p - 2) m t_w /
		 * t_s) is unbounded, and its schedule of a packet per element
		 * exceeds the simulator.  The packets are then counted under the
		 * whole range's line (ts_ns, tw_ns_per_byte), a first step that
		 * the model of the mean packet's segment replaces. */
		struct tc_model line = md;
		line.ts_ns = cal->ts_ns;
		line.tw_ns = cal->tw_ns_per_byte;
		struct tc_call again = *call;
		if (!(err = tc_predict_call(t, &line, call, &p)) && p.messages > 0) {
			again.alg = p.algorithm;
			err = tc__cal_model(cal, (size_t)(p.bytes / (uint64_t)p.messages), &md, &k);
			if (!err)
				err = tc_predict_call(t, &md, &again, &p);
		}
	}
	if (err)
		return err;
	/* The schedule's mean message may sit in another segment (a block of
	 * m split in p parts, say): predict again under that one's model, once
	 * (no iteration), the algorithm picked for the block kept. */
	if (p.messages > 0 &&
	    !tc__cal_model(cal, (size_t)(p.bytes / (uint64_t)p.messages), &md, &k2) && k2 != k) {
		struct tc_call again = *call;
		again.alg = p.algorithm;
		k = k2;
		if ((err = tc_predict_call(t, &md, &again, &p)) != 0)
			return err;
	}
	*ns = (double)p.modelled_ps / TC_PS_PER_NS + (isfinite(cal->call_ns) ? cal->call_ns : 0);
	struct tc_call again = *call;
	struct tc_transfer *tr = NULL;
	int n = 0, np = tc_topo_nodes(t);
	again.alg = p.algorithm;
	uint64_t *mine = calloc((size_t)(np > 0 ? np : 1), sizeof *mine);
	if (!mine)
		return TC_ENOMEM;
	err = tc_schedule_call(t, &md, &again, &tr, &n);
	/* Where the call's data live, for every price that reads the
	 * concurrency tables below. */
	struct tc__cal_data data = {0};
	if (!err && cal->conc_ranks >= 2)
		err = tc__cal_data_init(cal, tr, n, np, &data);
	/* The schedule's local copies (a rank's own block, a pack into
	 * scratch), free in the model: the most bytes one rank copies, at
	 * t_copy, measured on one core's own cached data.  They run while
	 * every other rank copies too: at one of p copiers' share of the
	 * table's bandwidth where the data live (tc__cal_col's rule: the
	 * memory-sized block, or the rank's bytes up to the largest block the
	 * cache holds for all), if that is slower, beyond two ranks, and at
	 * two where that rank's copies exceed its L2 or the call's footprint
	 * the last-level cache.  (A hypercube alltoall of 1 MiB blocks on 16
	 * ranks packs and unpacks 80 MiB per rank: 2 ms at t_copy, 43-60 ms
	 * measured on a 16-vCPU guest; of 64 KiB blocks on 8, 1.5 MiB per
	 * rank within its L2, about 7-9 GB/s a core there, the table's rate,
	 * not t_copy's 33.  At p = 2 the allgathers and alltoalls of 4 MiB
	 * blocks took 1.4 to 2.6 times their price with the own block at
	 * t_copy, on that guest and on a 2-CPU VM, while on the VM the table
	 * put those of 64 KiB and 1 MiB, within a core's caches, 9-39% above
	 * their time.) */
	uint64_t most = 0;
	for (int i = 0; !err && i < n; i++)
		if (tr[i].src == tr[i].dst && !tr[i].combine && tr[i].src >= 0 && tr[i].src < np &&
		    (mine[tr[i].src] += tr[i].bytes) > most)
			most = mine[tr[i].src];
	if (!err && isfinite(cal->tcopy_ns_per_byte) && cal->tcopy_ns_per_byte > 0) {
		double per = cal->tcopy_ns_per_byte;
		if (most > 0 && data.vol) {
			const size_t l2 = cal->cache_bytes[1];
			const size_t col =
			        data.mem ? data.big
			        : np > 2 || (l2 > 0 && most > l2)
			                ? (data.cached && most > data.cached ? data.cached : (size_t)most)
			                : 0;
			const double c = col ? tc__machine_copy_ns(cal, np, col) / (double)col : NAN;
			if (isfinite(c) && c > per)
				per = c;
		}
		*ns += (double)most * per;
	}
	/* In a single-copy segment, what the channel does that the model does
	 * not say:
	 * - a copying exchange (every message between ranks has its reverse
	 *   in its round): its transfers take the segment's measured exchange
	 *   time, exchange_ratio one-way times (calibrate.h), where the
	 *   model's full duplex charges one;
	 * - one-way combines: each receive combines out of the sender's buffer
	 *   as it reads it (lib/sched/exec.c's direct receives): the model adds
	 *   m t_c to the receive's m t_w, where the pair measured what it adds,
	 *   the segment's recv_ts_ns + m recv_tc_ns_per_byte (calibrate.h) a
	 *   message; without
	 *   that (a calibration made before it was measured), one pass that
	 *   costs the slower of the two, m max(t_w, t_c): t_c less t_w.
	 * A combining exchange (allreduce at p = 2) measures the model's sum:
	 * both cores' passes at once. */
	const struct tc__alg *alg = tc__alg_find(call->coll, p.algorithm);
	double shm = NAN;
	if (!err && alg && (alg->flags & TC__ALG_SHM))
		err = tc__cal_shm_ns(cal, tr, n, np, &data, place, &again, alg->name, md.tc_ns, &shm);
	if (!err && isfinite(shm)) {
		/* The shared-memory price replaces the pair's makespan and holds
		 * the concurrency (above). */
		*ns += shm - (double)p.modelled_ps / TC_PS_PER_NS;
	} else if (!err) {
		err = tc__conc_terms(cal, tr, n, np, &data, md.tw_ns, md.tc_ns, share, sync);
	}
	const struct tc_calibration_segment *g = k < cal->nsegments ? &cal->segments[k] : NULL;
	if (!err && !isfinite(shm) && g && g->single_copy == 1) {
		struct tc_model m1 = md;
		struct tc_prediction p1;
		if (isfinite(g->exchange_ratio) && g->exchange_ratio > 1 && tc__cal_exchange_only(tr, n)) {
			m1.tc_ns = 0;
			if (!(err = tc_predict_call(t, &m1, &again, &p1)))
				*ns += (g->exchange_ratio - 1) * (double)p1.modelled_ps / TC_PS_PER_NS;
		} else if (md.tc_ns > 0 && tc__cal_combines_one_way(tr, n)) {
			if (isfinite(g->recv_tc_ns_per_byte) && g->recv_tc_ns_per_byte >= 0 &&
			    isfinite(g->recv_ts_ns) && g->recv_ts_ns >= 0) {
				/* Measured: what combining adds to a receive. */
				m1.ts_ns += g->recv_ts_ns;
				m1.tc_ns = g->recv_tc_ns_per_byte;
				if (!(err = tc_predict_call(t, &m1, &again, &p1)))
					*ns += (double)(p1.modelled_ps - p.modelled_ps) / TC_PS_PER_NS;
			} else {
				m1.tc_ns = md.tc_ns > md.tw_ns ? md.tc_ns - md.tw_ns : 0;
				if (!(err = tc_predict_call(t, &m1, &again, &p1)))
					*ns += (double)(p1.modelled_ps - p.modelled_ps) / TC_PS_PER_NS;
			}
		}
	}
	tc_schedule_free(tr);
	free(data.vol);
	free(mine);
	if (err)
		return err;
	if (pr)
		*pr = p;
	if (segment)
		*segment = k;
	return TC_OK;
}
