/* SPDX-License-Identifier: MIT */
/*
 * lib/calibrate/concurrency.c - the measurements of concurrency (contract
 * in include/topocoll/calibrate.h): hand-offs, shared bandwidth, chained
 * steps, rounds.  Natively, unless opts->max_copiers is -1, a complete:K
 * team over the process's CPUs passes a cache line between rank 0 and
 * every other rank in turn, copies and combines blocks of four sizes with
 * k concurrent copiers (and, K >= 3, copies blocks another core has read
 * first), passes blocks of three sizes around rings of q
 * ranks over the channels, and runs synchronised rounds among q ranks, of
 * messages and of cache-line flags; rank 0 keeps the median of each
 * figure's samples.  tc_model_calibrate (lib/calibrate/calibrate.c) runs
 * it once the pair's team is gone.
 */
#include "topocoll/calibrate.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate/calibrate_internal.h"
#include "coll/machine.h"
#include "topocoll.h"

/* Round trips per hand-off sample, samples per figure, round trips per
 * sync sample, and how long a hand-off wait spins before it also yields
 * (a loaded machine: the partner may not be running) and gives up. */
#define TC__CONC_HANDOFF_TRIPS 200
#define TC__CONC_REPS 7
#define TC__CONC_SYNC_ROUNDS 200
#define TC__CONC_SPIN_YIELD 4096u
#define TC__CONC_WAIT_NS 5000000000u
/* The copy sizes: blocks that fit a core's L1 and L2 caches (64 and 512
 * KiB, source and destination), one that fits only a large shared cache
 * (4 MiB: a 300 MiB L3 holds 16 copiers' two), and a memory-sized one: at
 * least TC__CONC_BIG_MIN, and so large that K copiers' sources alone
 * exceed the last-level cache, at most TC__CONC_BIG_MAX (a large shared L3
 * seen by few CPUs, a VM's, is not worth seconds of copying), halved until
 * K ranks' two buffers fit TC__CONC_MEM_CAP and a quarter of the machine's
 * memory; the fixed sizes not below it are left out. */
#define TC__CONC_MEM_CAP ((size_t)1 << 30)
#define TC__CONC_BIG_MAX ((size_t)32 << 20)
static const size_t tc__conc_sizes[TC_CALIBRATE_COPY_SIZES - 1] = {(size_t)64 << 10, (size_t)512 << 10,
                                                                   (size_t)4 << 20};
/* The smallest memory-sized block: above the last of tc__conc_sizes. */
#define TC__CONC_BIG_MIN ((size_t)8 << 20)
/* The chained steps: blocks of the sizes a ring's or a pipeline's steps
 * carry (at most the smallest memory-sized block, so that the copy
 * buffers hold two), and the steps of a sample. */
static const size_t tc__conc_chain_sizes[TC_CALIBRATE_CHAIN_SIZES] = {(size_t)64 << 10, (size_t)256 << 10,
                                                                      (size_t)1 << 20};
#define TC__CONC_CHAIN_STEPS 8

struct tc__conc_ctx {
	_Alignas(64) _Atomic uint64_t line; /* the hand-off word */
	_Alignas(64) int K;
	int npartners; /* ranks 1 .. K - 1: partner[i] = i + 1 */
	int partner[TC_CALIBRATE_MAX_COPIERS];
	double handoff[TC_CALIBRATE_MAX_COPIERS][TC__CONC_REPS]; /* one-way, ns */
	int nsizes;
	size_t sizes[TC_CALIBRATE_COPY_SIZES];
	int ncopiers;
	int copiers[TC_CALIBRATE_MAX_COPIERS];
	double copy[TC_CALIBRATE_COPY_SIZES][TC_CALIBRATE_MAX_COPIERS][TC__CONC_REPS]; /* slowest, ns */
	double combine[TC_CALIBRATE_COPY_SIZES][TC_CALIBRATE_MAX_COPIERS][TC__CONC_REPS]; /* the same */
	double shared[TC_CALIBRATE_COPY_SIZES][TC_CALIBRATE_MAX_COPIERS][TC__CONC_REPS]; /* the same */
	int nsync;
	int sync_q[TC_CALIBRATE_MAX_SYNC];
	int nchain_sizes;                                  /* the chain sizes the buffers hold */
	double sync[TC_CALIBRATE_MAX_SYNC][TC__CONC_REPS]; /* per round, ns */
	double sync_mean[TC_CALIBRATE_MAX_SYNC][TC__CONC_REPS]; /* the same, mean */
	double pairs[TC_CALIBRATE_MAX_SYNC][TC__CONC_REPS];     /* per round, ns */
	double flag[TC_CALIBRATE_MAX_SYNC][TC__CONC_REPS];      /* per round, ns */
	double chain[TC_CALIBRATE_CHAIN_SIZES][TC_CALIBRATE_MAX_SYNC][TC__CONC_REPS]; /* per step */
	unsigned char **src, **dst; /* per rank, sizes[nsizes - 1] each */
	double *d;                  /* per rank: its last timed interval */
	double *dm;                 /* per rank: its last mean round */
	uint64_t *stamps;           /* per rank, TC__CONC_SYNC_ROUNDS + 1 */
	_Atomic uint64_t *flags;    /* per rank, 128 bytes apart */
};

/* The stride of c->flags, in words: 128 bytes, a pair of cache lines each,
 * as the machine's own algorithms keep a rank's flag (lib/coll/shm.h): a
 * core's spatial prefetcher fetches a line's 128-byte pair with it, and
 * flags a line apart would move in pairs. */
#define TC__CONC_FLAG_STRIDE (128 / sizeof(uint64_t))

/* Waits until the hand-off word holds v; TC_ETIMEDOUT after
 * TC__CONC_WAIT_NS.  Acquire: pairs with the release store of the other
 * rank in tc__conc_handoff(). */
/* A spinning wait's n-th pass: every TC__CONC_SPIN_YIELD passes it yields
 * (a loaded machine: the partner may not be running), and it gives up with
 * TC_ETIMEDOUT TC__CONC_WAIT_NS after the first such pass (*t0, 0 at the
 * start). */
static int tc__conc_patience(unsigned n, uint64_t *t0)
{
	if (n % TC__CONC_SPIN_YIELD)
		return TC_OK;
	uint64_t now = tc__cal_now();
	if (!*t0)
		*t0 = now;
	else if (now - *t0 > TC__CONC_WAIT_NS)
		return TC_ETIMEDOUT;
	sched_yield();
	return TC_OK;
}

static int tc__conc_wait(struct tc__conc_ctx *c, uint64_t v)
{
	uint64_t t0 = 0;
	int err = TC_OK;
	for (unsigned n = 1; !err && atomic_load_explicit(&c->line, memory_order_acquire) != v; n++)
		err = tc__conc_patience(n, &t0);
	return err;
}

/* Rank 0 and rank j pass the word back and forth: rank 0 writes odd
 * values, j even ones.  Rank 0 keeps the one-way time of each sample. */
static int tc__conc_handoff(struct tc_proc *proc, struct tc__conc_ctx *c, int i)
{
	const int me = tc_rank(proc), j = c->partner[i];
	int err = TC_OK;
	uint64_t v = 0;
	for (int r = 0; r < TC__CONC_REPS && !err; r++) {
		uint64_t t0 = tc__cal_now();
		for (int k = 0; k < TC__CONC_HANDOFF_TRIPS && !err; k++, v += 2) {
			if (me == 0) {
				/* Release: publishes the turn; pairs with the
				 * acquire load in rank j's tc__conc_wait(). */
				atomic_store_explicit(&c->line, v + 1, memory_order_release);
				err = tc__conc_wait(c, v + 2);
			} else if (me == j) {
				if (!(err = tc__conc_wait(c, v + 1)))
					/* Release: pairs with rank 0's acquire. */
					atomic_store_explicit(&c->line, v + 2, memory_order_release);
			}
		}
		if (me == 0)
			c->handoff[i][r] = (double)(tc__cal_now() - t0) / (2.0 * TC__CONC_HANDOFF_TRIPS);
	}
	return err;
}

/* The median of a rank's intervals between its TC__CONC_SYNC_ROUNDS + 1
 * stamps: the time per round that a stall of the machine during a few of
 * them (a 16-vCPU guest's CPU not running for tens of microseconds) does
 * not move, where the mean over the rounds would carry it. */
static double tc__conc_round_median(const uint64_t *stamps)
{
	double v[TC__CONC_SYNC_ROUNDS];
	for (int k = 0; k < TC__CONC_SYNC_ROUNDS; k++)
		v[k] = (double)(stamps[k + 1] - stamps[k]);
	return tc__cal_median(v, TC__CONC_SYNC_ROUNDS);
}

/* One round of flags among ranks 0 .. q-1 (q <= 64): rank me publishes
 * round v in its flag, then sweeps the others' until each shows v or more,
 * as the machine's own algorithms wait (lib/coll/shm.c, tc__shm_sweep):
 * from rank me + 1 on, so that the ranks do not all look at one flag
 * first, every flag still awaited looked at in each pass, so that their
 * misses overlap, and a flag seen not again (a rank already in its next
 * round has taken its line back; a look at it would be a miss the
 * algorithms do not make).  TC_ETIMEDOUT after TC__CONC_WAIT_NS. */
_Static_assert(TC_CALIBRATE_MAX_COPIERS <= 64, "a round's awaited flags are one word's bits");

static int tc__conc_flag_round(struct tc__conc_ctx *c, int me, int q, uint64_t v)
{
	/* Release: publishes the round; pairs with the acquire loads of the
	 * other ranks' sweeps. */
	atomic_store_explicit(&c->flags[(size_t)me * TC__CONC_FLAG_STRIDE], v, memory_order_release);
	/* Bit i: the flag of rank me + i (mod q), i = 1 .. q - 1. */
	uint64_t left = (q >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << q) - 1) & ~UINT64_C(1);
	uint64_t t0 = 0;
	for (unsigned n = 1;; n++) {
		for (uint64_t bits = left; bits; bits &= bits - 1) {
			const int i = __builtin_ctzll(bits), j = (me + i) % q;
			if (atomic_load_explicit(&c->flags[(size_t)j * TC__CONC_FLAG_STRIDE],
			                         memory_order_acquire) >= v)
				left &= ~(UINT64_C(1) << i);
		}
		if (!left)
			return TC_OK;
		int err = tc__conc_patience(n, &t0);
		if (err)
			return err;
	}
}

/* The kinds of synchronised round (tc__conc_rounds). */
enum tc__conc_round { TC__CONC_DISSEMINATION, TC__CONC_FLAGS, TC__CONC_PAIRS };

/* The synchronised rounds (calibrate.h): for each q of sync_q, TC__CONC_REPS
 * samples of TC__CONC_SYNC_ROUNDS rounds among ranks 0 .. q-1, of 8-byte
 * messages (TC__CONC_DISSEMINATION: tc_sendrecv with the partners of a
 * dissemination, distances 1, 2, 4, ... < q in turn, so that a round's
 * partners span the team, as a hypercube's or a tree's do, not only
 * next-door CPUs; TC__CONC_PAIRS: tc_sendrecv both ways with the partner
 * me XOR d, a hypercube's exchange, for q a power of two only, else NAN),
 * or of cache-line flags (TC__CONC_FLAGS: tc__conc_flag_round); a sample
 * is the slowest rank's median round (tc__conc_round_median), kept by rank
 * 0 in out[i][sample], and with mean the slowest rank's mean round
 * (stalls included) in mean[i][sample].  The flag rounds of every sample
 * carry values above the last sample's, so no flag needs resetting (every
 * rank counts alike). */
static int tc__conc_rounds(struct tc_proc *proc, struct tc__conc_ctx *c, enum tc__conc_round kind,
                           double (*out)[TC__CONC_REPS], double (*mean)[TC__CONC_REPS])
{
	const int me = tc_rank(proc);
	uint64_t x = (uint64_t)me, y = 0, v = 0;
	int err = TC_OK;
	for (int i = 0; i < c->nsync && !err; i++)
		for (int r = 0; r < TC__CONC_REPS && !err; r++, v += TC__CONC_SYNC_ROUNDS) {
			const int q = c->sync_q[i];
			if (kind == TC__CONC_PAIRS && (q & (q - 1))) {
				if (me == 0)
					out[i][r] = NAN; /* every rank skips alike */
				continue;
			}
			if ((err = tc_barrier(proc, NULL)) != 0)
				break;
			if (me < q) {
				int lg = 0;
				while ((1 << lg) < q)
					lg++;
				uint64_t *st = c->stamps + (size_t)me * (TC__CONC_SYNC_ROUNDS + 1);
				st[0] = tc__cal_now();
				for (int k = 0; k < TC__CONC_SYNC_ROUNDS && !err; k++) {
					const int d = (1 << (k % lg)) % q;
					if (kind == TC__CONC_FLAGS)
						err = tc__conc_flag_round(c, me, q, v + (uint64_t)k + 1);
					else if (kind == TC__CONC_PAIRS)
						err = tc_sendrecv(proc, me ^ d, &x, sizeof x,
						                  me ^ d, &y, sizeof y, NULL);
					else
						err = tc_sendrecv(proc, (me + d) % q, &x, sizeof x,
						                  (me + q - d) % q, &y, sizeof y, NULL);
					st[k + 1] = tc__cal_now();
				}
				if (!err) {
					c->d[me] = tc__conc_round_median(st);
					c->dm[me] = (double)(st[TC__CONC_SYNC_ROUNDS] - st[0]) /
					            TC__CONC_SYNC_ROUNDS;
				}
			}
			if (!err && (err = tc_barrier(proc, NULL)) == 0 && me == 0) {
				double w = 0, wm = 0;
				for (int k = 0; k < q; k++)
					w = fmax(w, c->d[k]), wm = fmax(wm, c->dm[k]);
				out[i][r] = w;
				if (mean)
					mean[i][r] = wm;
			}
		}
	return err;
}

/* The slowest time (c->d) of the n ranks from off on, mod K: a sample's. */
static double tc__conc_slowest(const struct tc__conc_ctx *c, int off, int n)
{
	double w = 0;
	for (int i = 0; i < n; i++)
		w = fmax(w, c->d[(off + i) % c->K]);
	return w;
}

/* The chained steps (calibrate.h, "chain"): for each ring size q and block
 * size m, the q ranks from an offset that moves on at each sample (as the
 * copiers' do) write their block, meet the others at a barrier, then
 * TC__CONC_CHAIN_STEPS times send the block they hold to the next rank of
 * the ring and receive the previous rank's into their other buffer, which
 * they send on at the next step; each keeps its time per step, and rank 0
 * the slowest.  A first pass (r = -1) is not timed. */
static int tc__conc_chains(struct tc_proc *proc, struct tc__conc_ctx *c)
{
	const int me = tc_rank(proc), K = c->K;
	int err = TC_OK;
	for (int r = -1; r < TC__CONC_REPS && !err; r++)
		for (int s = 0; s < c->nchain_sizes && !err; s++)
			for (int qi = 0; qi < c->nsync && !err; qi++) {
				const int q = c->sync_q[qi];
				const int off = r < 0 ? 0 : (int)((long)r * K / TC__CONC_REPS + qi) % K;
				const int j = (me - off + K) % K;
				const size_t m = tc__conc_chain_sizes[s];
				unsigned char *hold = c->src[me], *into = c->dst[me];
				if (j < q)
					memset(hold, (int)((r + s + qi) & 0xff), m);
				if ((err = tc_barrier(proc, NULL)) != 0)
					break;
				if (j < q) {
					const int next = (off + (j + 1) % q) % K;
					const int prev = (off + (j + q - 1) % q) % K;
					uint64_t t0 = tc__cal_now();
					for (int k = 0; k < TC__CONC_CHAIN_STEPS && !err; k++) {
						err = tc_sendrecv(proc, next, hold, m, prev, into,
						                  m, NULL);
						unsigned char *t = hold;
						hold = into;
						into = t;
					}
					c->d[me] = (double)(tc__cal_now() - t0) / TC__CONC_CHAIN_STEPS;
				}
				if (err || (err = tc_barrier(proc, NULL)) != 0)
					break;
				if (me == 0 && r >= 0)
					c->chain[s][qi][r] = tc__conc_slowest(c, off, q);
			}
	return err;
}

/* The byte a copy sample's sources are written with: never 0 (see the
 * copies in tc__conc_spmd), another for each sample, size and count. */
static int tc__conc_fill(int r, int s, int ki)
{
	return 0x40 | ((r + s + ki) & 0x3f);
}

/* One sample of the shared table (tc__conc_spmd): size s, copier count
 * c->copiers[ki], sample r (< 0: untimed), the copiers from rank off on.
 * K >= 3: the block's writer, its first reader and the timed copier are
 * three ranks. */
static int tc__conc_shared_copy(struct tc_proc *proc, struct tc__conc_ctx *c, int s, int ki, int r, int off)
{
	const int me = tc_rank(proc), k = c->copiers[ki], K = c->K;
	const int w = k > 3 ? k : 3, j = (me - off + K) % K;
	const size_t m = c->sizes[s];
	int err = TC_OK;
	/* Each rank's bytes its own, so that the timed copy does not store
	 * what the first read left in the destination. */
	if (j < w)
		memset(c->src[me], tc__conc_fill(r + 1 + j, s, ki), m);
	if ((err = tc_barrier(proc, NULL)) != 0)
		return err;
	/* The first read (it writes the reader's destination too, as the
	 * other samples' memset does). */
	if (j < w)
		tc__cal_memcpy(c->dst[me], c->src[(off + (j + 2) % w) % K], m);
	if ((err = tc_barrier(proc, NULL)) != 0)
		return err;
	if (j < k) {
		uint64_t t0 = tc__cal_now();
		tc__cal_memcpy(c->dst[me], c->src[(off + (j + 1) % w) % K], m);
		c->d[me] = (double)(tc__cal_now() - t0);
	}
	if ((err = tc_barrier(proc, NULL)) != 0)
		return err;
	if (me == 0 && r >= 0)
		c->shared[s][ki][r] = tc__conc_slowest(c, off, k);
	return TC_OK;
}

/* The whole concurrency team's script: every rank runs every phase,
 * phases separated by barriers. */
static int tc__conc_spmd(struct tc_proc *proc, void *arg)
{
	struct tc__conc_ctx *c = arg;
	const int me = tc_rank(proc);
	int err = TC_OK;
	for (int i = 0; i < c->npartners && !err; i++) {
		if (me == 0)
			atomic_store_explicit(&c->line, 0, memory_order_relaxed); /* the barrier orders it */
		if (!(err = tc_barrier(proc, NULL)) && (me == 0 || me == c->partner[i]))
			err = tc__conc_handoff(proc, c, i);
	}
	/* The copies.  A sample's k copiers are k consecutive ranks from an
	 * offset that moves on at each sample, and the samples of one (size,
	 * copiers) pair are taken a pass over every pair apart: the slowest
	 * copier decides a sample, so a CPU slow for a while (another
	 * guest's work on its host core) would otherwise decide every sample
	 * of every count that includes it (on a 16-vCPU guest the aggregate
	 * rate of 4 and more copiers, every size, came out half of other
	 * runs' in one calibration, 6 and more in another, while the
	 * collectives timed after it ran as in those runs).  A first pass
	 * (r = -1) copies once untimed: the first copy of a size met a core
	 * that had been waiting (one copier of 64 KiB measured half the rate
	 * of each of two).
	 * Each copier writes its source and its destination before the
	 * sample, as a program writes its input and output buffers before
	 * a call (bench/fidelity_native.c does): a sample times the copy of
	 * data just written by another core into lines the copier holds.
	 * Without the destination's write, a sample's rate depended on which
	 * ranks the samples before it had picked: the offset moves by one at
	 * each count, so up to about K / 2 + 1 copiers every sample had two
	 * whose destination no sample of that size had touched, and the
	 * memory-sized samples of the pass before had evicted it.  On
	 * 16-vCPU guests each copier of 64 KiB and 512 KiB ran at 5-7 GB/s
	 * up to 9 copiers and at 8-13 GB/s from 10 on, in every one of nine
	 * calibrations.
	 * Each sample's copiers then combine the same blocks (a sum of
	 * doubles into their own, both written again first): the combine
	 * table, B_c.  Then, with three ranks or more, they copy blocks that
	 * another core has read since their writer wrote them: max(k, 3)
	 * ranks write their block and copy, untimed, the block two ranks
	 * on, then the k copiers copy the next one's, which the rank before
	 * them has just read: the shared table, B_s, what a block that
	 * several ranks read (an allgather's, a bcast's) costs after its
	 * first reader. */
	for (int r = -1; r < TC__CONC_REPS && !err; r++)
		for (int s = 0; s < c->nsizes && !err; s++)
			for (int ki = 0; ki < c->ncopiers && !err; ki++) {
				const int k = c->copiers[ki], K = c->K;
				const int off = r < 0 ? 0 : (int)((long)r * K / TC__CONC_REPS + ki) % K;
				const int j = (me - off + K) % K; /* this rank's place among the copiers */
				const size_t m = c->sizes[s];
				/* A copier reads the next copier's source; one copier
				 * alone the next rank's, which writes it but does not
				 * copy (its own would be a copy within its cache). */
				const int w = k > 1 ? k : 2;
				const int from = (off + (j + 1) % w) % K;
				/* The copy, then the combine (bytes 0x3f: doubles
				 * of about 5e-4, added into the zeros of the
				 * destination).  No buffer is written with zeros
				 * over zeros, nor a sum of zeros stored over them:
				 * Intel cores drop such stores (Downs, "Hardware
				 * store elimination"), which a program's data do
				 * not meet. */
				for (int op = 0; op < 2 && !err; op++) {
					if (j < w)
						memset(c->src[me],
						       op ? 0x3f : tc__conc_fill(r, s, ki), m);
					if (j < k)
						memset(c->dst[me], 0, m);
					if ((err = tc_barrier(proc, NULL)) != 0)
						break;
					if (j < k) {
						uint64_t t0 = tc__cal_now();
						if (op)
							tc_reduce_local(c->src[from], c->dst[me],
							                m / sizeof(double),
							                TC_DOUBLE, TC_OP_SUM, NULL);
						else
							tc__cal_memcpy(c->dst[me], c->src[from], m);
						c->d[me] = (double)(tc__cal_now() - t0);
					}
					if ((err = tc_barrier(proc, NULL)) != 0)
						break;
					if (me == 0 && r >= 0)
						(op ? c->combine : c->copy)[s][ki][r] =
						        tc__conc_slowest(c, off, k);
				}
				if (!err && K >= 3)
					err = tc__conc_shared_copy(proc, c, s, ki, r, off);
			}
	if (!err)
		err = tc__conc_chains(proc, c);
	if (!err)
		err = tc__conc_rounds(proc, c, TC__CONC_DISSEMINATION, c->sync, c->sync_mean);
	if (!err)
		err = tc__conc_rounds(proc, c, TC__CONC_FLAGS, c->flag, NULL);
	if (!err)
		err = tc__conc_rounds(proc, c, TC__CONC_PAIRS, c->pairs, NULL);
	return err;
}

/* B(k, m) of a table's samples t (the slowest copier's time of each) for
 * size s and count ki: k m over their median, NAN where that is 0. */
static double tc__conc_rate(const struct tc__conc_ctx *c, int s, int ki, double *t)
{
	const double med = tc__cal_median(t, TC__CONC_REPS);
	return med > 0 ? (double)c->copiers[ki] * (double)c->sizes[s] / med : NAN;
}

/* Measures the concurrency tables into out (calibrate.h); out->conc_ranks
 * stays 0 when there is nothing to measure. */
int tc__cal_concurrency(const struct tc_calibrate_opts *o, struct tc_calibration *out)
{
	for (int c = 0; c < TC_HANDOFF_CLASSES; c++) {
		out->handoff_ns[c] = NAN;
		out->handoff_rank[c] = -1;
	}
	out->handoff_pair_ns = NAN;
	for (int j = 0; j < TC_CALIBRATE_MAX_COPIERS; j++)
		out->handoff_by_rank_ns[j] = NAN;
	for (int i = 0; i < TC_CALIBRATE_MAX_SYNC; i++)
		out->sync_mean_ns[i] = out->pairs_ns[i] = NAN;
	out->conc_ranks = 0;
	out->nflag = 0;
	out->nchain = out->nchain_sizes = 0;
	out->ncombine = 0;
	out->nshared = 0;
	if (o->max_copiers < 0 || o->mode == TC_MODE_EMULATED)
		return TC_OK;
	cpu_set_t set;
	CPU_ZERO(&set);
	int K = sched_getaffinity(getpid(), sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
	int cap = o->max_copiers ? o->max_copiers : TC_CALIBRATE_MAX_COPIERS;
	K = K < cap ? K : cap;
	K = K < TC_CALIBRATE_MAX_COPIERS ? K : TC_CALIBRATE_MAX_COPIERS;
	if (K < 2)
		return TC_OK;
	/* Aligned for the hand-off word's own cache line. */
	const size_t csize = (sizeof(struct tc__conc_ctx) + 63) / 64 * 64;
	struct tc__conc_ctx *c = aligned_alloc(64, csize);
	if (!c)
		return TC_ENOMEM;
	memset(c, 0, csize);
	c->K = K;
	char spec[32];
	snprintf(spec, sizeof spec, "complete:%d", K);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.p = K;
	cfg.topology = spec;
	cfg.no_pin = o->no_pin;
	cfg.single_copy_min = o->single_copy_min;
	cfg.timeout_ms = o->timeout_ms ? o->timeout_ms : TC__CAL_TIMEOUT_DEFAULT;
	cfg.mode = TC_MODE_NATIVE;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	if (err)
		goto done;
	struct tc_team_info info;
	tc_team_get_info(team, &info);
	/* The partners: every other rank, rank 1 (the pair) first; each class
	 * takes its first rank's. */
	for (int j = 1; j < K; j++) {
		c->partner[c->npartners++] = j;
		int cl = info.place ? tc__place_class(&info.place[0], &info.place[j]) : -1;
		if (cl >= 0 && out->handoff_rank[cl] < 0)
			out->handoff_rank[cl] = j;
	}
	size_t big = TC__CONC_BIG_MIN, llc = 0, mem_cap = TC__CONC_MEM_CAP;
	for (int i = 0; i < 3; i++)
		llc = out->cache_bytes[i] > llc ? out->cache_bytes[i] : llc;
	if (llc / (size_t)K >= big)
		big = (llc / (size_t)K / ((size_t)1 << 20) + 1) << 20; /* whole MiB above */
	big = big < TC__CONC_BIG_MAX ? big : TC__CONC_BIG_MAX;
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psize > 0 && (size_t)pages / 4 < mem_cap / (size_t)psize)
		mem_cap = (size_t)pages / 4 * (size_t)psize;
	while (big > tc__conc_sizes[0] && 2 * (size_t)K * big > mem_cap)
		big /= 2;
	for (int s = 0; s < TC_CALIBRATE_COPY_SIZES - 1 && tc__conc_sizes[s] < big; s++)
		c->sizes[c->nsizes++] = tc__conc_sizes[s];
	c->sizes[c->nsizes++] = big;
	while (c->nchain_sizes < TC_CALIBRATE_CHAIN_SIZES && tc__conc_chain_sizes[c->nchain_sizes] <= big)
		c->nchain_sizes++;
	/* Copier counts: every k up to 16, then steps of a quarter. */
	for (int k = 1; k <= K; k = k < 16 ? k + 1 : k + k / 4)
		c->copiers[c->ncopiers++] = k;
	if (c->copiers[c->ncopiers - 1] != K)
		c->copiers[c->ncopiers++] = K;
	for (int q = 2; q <= K && c->nsync < TC_CALIBRATE_MAX_SYNC - 1; q *= 2)
		c->sync_q[c->nsync++] = q;
	if (c->sync_q[c->nsync - 1] != K)
		c->sync_q[c->nsync++] = K;
	c->src = calloc((size_t)K, sizeof *c->src);
	c->dst = calloc((size_t)K, sizeof *c->dst);
	c->d = calloc((size_t)K, sizeof *c->d);
	c->dm = calloc((size_t)K, sizeof *c->dm);
	c->stamps = calloc((size_t)K * (TC__CONC_SYNC_ROUNDS + 1), sizeof *c->stamps);
	c->flags = aligned_alloc(128, (size_t)K * 128);
	if (c->flags)
		for (size_t w = 0; w < (size_t)K * TC__CONC_FLAG_STRIDE; w++)
			atomic_init(&c->flags[w], 0);
	if (!c->src || !c->dst || !c->d || !c->dm || !c->stamps || !c->flags) {
		err = TC_ENOMEM;
		goto done;
	}
	for (int r = 0; r < K; r++) {
		c->src[r] = malloc(big);
		c->dst[r] = malloc(big);
		if (!c->src[r] || !c->dst[r]) {
			err = TC_ENOMEM;
			goto done;
		}
		memset(c->src[r], 0x5a, big); /* every page touched before a sample */
		memset(c->dst[r], 0xa5, big);
	}
	if ((err = tc_run(team, tc__conc_spmd, c)) != 0)
		goto done;
	out->conc_ranks = K;
	for (int i = 0; i < c->npartners; i++)
		out->handoff_by_rank_ns[c->partner[i]] = tc__cal_median(c->handoff[i], TC__CONC_REPS);
	out->handoff_pair_ns = out->handoff_by_rank_ns[1];
	for (int cl = 0; cl < TC_HANDOFF_CLASSES; cl++)
		if (out->handoff_rank[cl] > 0)
			out->handoff_ns[cl] = out->handoff_by_rank_ns[out->handoff_rank[cl]];
	out->ncopy_sizes = c->nsizes;
	out->ncopiers = c->ncopiers;
	for (int s = 0; s < c->nsizes; s++) {
		out->copy_sizes[s] = c->sizes[s];
		for (int ki = 0; ki < c->ncopiers; ki++) {
			out->copiers[ki] = c->copiers[ki];
			out->copy_bytes_per_ns[s][ki] = tc__conc_rate(c, s, ki, c->copy[s][ki]);
			out->combine_bytes_per_ns[s][ki] = tc__conc_rate(c, s, ki, c->combine[s][ki]);
			out->shared_bytes_per_ns[s][ki] =
			        K >= 3 ? tc__conc_rate(c, s, ki, c->shared[s][ki]) : NAN;
		}
	}
	out->ncombine = c->ncopiers;
	out->nshared = K >= 3 ? c->ncopiers : 0;
	out->nsync = c->nsync;
	for (int i = 0; i < c->nsync; i++) {
		out->sync_ranks[i] = c->sync_q[i];
		out->sync_ns[i] = tc__cal_median(c->sync[i], TC__CONC_REPS);
		out->flag_ns[i] = tc__cal_median(c->flag[i], TC__CONC_REPS);
		out->sync_mean_ns[i] = tc__cal_median(c->sync_mean[i], TC__CONC_REPS);
		out->pairs_ns[i] = c->sync_q[i] & (c->sync_q[i] - 1)
		                           ? NAN
		                           : tc__cal_median(c->pairs[i], TC__CONC_REPS);
	}
	out->nflag = c->nsync;
	out->nchain_sizes = c->nchain_sizes;
	for (int s = 0; s < c->nchain_sizes; s++) {
		out->chain_sizes[s] = tc__conc_chain_sizes[s];
		for (int i = 0; i < c->nsync; i++)
			out->chain_ns[s][i] = tc__cal_median(c->chain[s][i], TC__CONC_REPS);
	}
	out->nchain = c->nchain_sizes > 0 ? c->nsync : 0;
done:
	tc_team_destroy(team);
	for (int r = 0; c->src && r < K; r++)
		free(c->src[r]);
	for (int r = 0; c->dst && r < K; r++)
		free(c->dst[r]);
	free(c->src);
	free(c->dst);
	free(c->d);
	free(c->dm);
	free(c->stamps);
	free(c->flags);
	free(c);
	return err;
}
