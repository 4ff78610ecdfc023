/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/calprice.c - the calibrated price of a call (topocoll/calibrate.h,
 * docs/calibration.md): a calibration's model of a message size, the pair's
 * prediction under it, and the concurrency charges of the schedule's rounds,
 * or the price of a shared-memory schedule (lib/coll/calprice_shm.c).
 * Here rather than in
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
#include "coll/calprice.h"
#include "coll/machine.h"
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

int tc__cal_data_init(const struct tc_calibration *cal, const struct tc_transfer *tr, int n, int np,
                      struct tc__cal_data *d)
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

size_t tc__cal_col(const struct tc__cal_data *d, int r, uint64_t bytes)
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

int tc__cal_price(const struct tc_calibration *cal, const struct tc_topo *t,
                  const struct tc_call *call, const struct tc_rank_place *place, bool unstaged,
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
		err = tc__cal_shm_ns(cal, tr, n, np, &data, place, unstaged, &again, alg->name,
		                     md.tc_ns, &shm);
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
