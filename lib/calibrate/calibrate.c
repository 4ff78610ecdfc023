/* SPDX-License-Identifier: MIT */
/*
 * lib/calibrate/calibrate.c - Hockney fit of the native channels (contract in
 * include/topocoll/calibrate.h): the measuring on a chain:2 team and
 * tc_model_calibrate, which runs it, fits the samples (lib/calibrate/fit.c)
 * and measures the concurrency (lib/calibrate/concurrency.c).
 *
 * Protocol on a chain:2 team.  Rank 0 drives: a warm-up batch per size, then
 * `reps` passes over all the sizes (interleaved, so that a burst of noise on
 * the machine spoils one sample of several sizes rather than the median of
 * one).  Before every batch it sends rank 1 a control message {bytes, count},
 * then times `count` round trips of `bytes` bytes (send, then receive the
 * echo).  Rank 1 loops: receive a control message; count 0 ends the run;
 * otherwise echo `count` messages.  The control message is outside the timed
 * interval.
 *
 * Native samples: a batch long enough to last sample_ns (estimated from the
 * fastest warm-up round trip of the same size; one round trip from
 * single_copy_min on), wall time / (2 count); before the batch both ranks
 * rewrite their send buffers and rank 1 sends an 8-byte "ready", and the
 * round trips use separate send and receive buffers
 * (tc__cal_batch_native).  Then the o_call probe and the exchanges
 * (calibrate.h) follow, rank 1 told by the control message's fields.
 *
 * Emulated samples: one round trip, which the emulation stretches to
 * 2 (t_s + m t_w).  Timing it from rank 0's wake-up at its start to its
 * wake-up at its end would cancel the wake-up lateness, but a late start
 * (a loaded machine) that outlasts the time to the next deadline shortens
 * the sample instead (the rank catches up without sleeping), and such bursts
 * come in clusters that a median does not remove.  So a sample is timed from
 * the round trip's logical start: wall end - (E + logical start), where E is
 * the smallest wall - clock offset rank 0 saw right after a wake-up over the
 * whole run (the epoch plus the smallest lateness; lateness is never
 * negative).  A sample is then 2 (t_s + m t_w) plus the lateness of its end
 * beyond the smallest one: never shortened, lengthened by noise.  So the
 * point of a size is its fastest sample (the least disturbed), not the
 * median; with the defaults this recovers t_s and t_w within about 1% even at
 * a load average of 100 on 2 CPUs (measured).  Rank 0 also idles
 * TC__CAL_EMU_GAP_NS of logical time before each emulated sample, so that a
 * late wake-up is absorbed before the timed round trip starts.
 *
 * Combine samples (t_c): after the ping-pong, rank 0 (pinned, the other
 * rank idle) times tc_reduce_local of bytes / 8 doubles (sum) from its
 * buffer into an accumulator of its own, in batches sized like the round
 * trips' (about sample_ns; one combine from single_copy_min on), both
 * buffers rewritten before each batch, reps passes over the sizes; the
 * median per size is fitted like the one-way times, on the combines of
 * 100 ns or more (TC__CAL_COPY_MIN_NS, lib/calibrate/fit.c).  The local
 * copies (t_copy) the same way with memcpy.  Cache sizes come from the
 * kernel, /sys/devices/system/cpu/cpu0/cache/index<k>/{level,type,size}
 * (what hwloc reads too), else from sysconf (_SC_LEVEL1_DCACHE_SIZE ...):
 * on a 2-vCPU AMD EPYC guest glibc's sysconf says 320 MiB of L3 where the
 * kernel and hwloc say 32 MiB.
 *
 * Layering: calibration is the top layer of the library (tests/check_layers.py),
 * a client of the rest: it drives a team through the public API of
 * topocoll.h (teams, messages, collectives, prediction) and nothing internal.
 */
#include "topocoll/calibrate.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "base/error_detail.h"
#include "calibrate/calibrate_internal.h"
#include "calibrate/fit.h"
#include "topocoll.h"

#define TC__CAL_MIN_DEFAULT 8u
#define TC__CAL_MAX_DEFAULT ((size_t)4 << 20)
#define TC__CAL_MAX_LIMIT ((size_t)64 << 20)
#define TC__CAL_REPS_DEFAULT 15
#define TC__CAL_WARMUP_DEFAULT 4
#define TC__CAL_SAMPLE_NS_DEFAULT 20000u
/* Emulated: idle logical time before every sample, so that a late wake-up
 * (a loaded machine) is absorbed before the timed round trip starts. */
#define TC__CAL_EMU_GAP_NS 500000.0
/* A native batch never exceeds this many round trips. */
#define TC__CAL_MAX_BATCH 100000u

/* The control message from rank 0 to rank 1. */
struct tc__cal_ctl {
	uint64_t bytes; /* TC__CAL_CALL_PROBE: count allreduces instead */
	uint64_t count; /* 0: stop */
	uint64_t xch;   /* non-zero: one exchange of bytes, sample xch - 1 */
	uint64_t red;   /* non-zero: one combining receive of bytes, sample red - 1 */
};
/* bytes of a control message asking for the o_call probe's warm-up (its
 * timed calls: | 1). */
#define TC__CAL_CALL_PROBE (UINT64_MAX - 1)

struct tc__cal_ctx {
	const size_t *sizes;
	uint64_t *batch; /* round trips per sample, per size */
	int nsizes;
	int reps;
	int warmup;
	uint64_t sample_ns;
	int emulated;
	unsigned char *buf[2];     /* one per rank, max_bytes each (emulated: sent
	                          and received; native: received into) */
	unsigned char *sbuf[2];    /* native: each rank's send buffer, rewritten by
	                           its rank before every round trip */
	double clock_ns;           /* native: the cost of an empty timed interval */
	unsigned char fill, fill1; /* native: the byte rank 0's (rank 1's) next
	                              rewrite writes */
	unsigned char *acc;        /* rank 0's accumulator for the combine samples */
	double *combine;           /* nsizes x reps combine times, ns (native) */
	double *copy;              /* nsizes x reps local copy times, ns (native) */
	double *samples;           /* nsizes x reps one-way times, ns (rank 0);
	                          emulated: (wall end - logical start) / 2, until
	                          the epoch estimate is subtracted after the run */
	double *offs;              /* emulated: wall - clock right after the wake-ups
	                          at both ends of every sample (rank 0) */
	size_t noffs, offs_cap;
	double *call_t[2][2];   /* native, o_call probe: [rank][start, end] of
	                          each timed call (CLOCK_MONOTONIC ns) */
	int ncalls;             /* timed calls of the probe */
	double *xch_t[2][2];    /* native, exchanges: [rank][start, end] of each
	                          sample, nsizes x reps */
	double *red_t[2][2];    /* native, combining receives: as xch_t */
	size_t single_copy_min; /* the team's threshold (native batches) */
	const char *call_alg;   /* the algorithm the probe's allreduce ran */
};

uint64_t tc__cal_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Emulated: records wall minus logical time right after a wake-up, i.e. the
 * epoch plus that wake-up's lateness. */
static void tc__cal_offset(struct tc_proc *proc, struct tc__cal_ctx *c, uint64_t wall)
{
	if (c->noffs < c->offs_cap)
		c->offs[c->noffs++] = (double)wall - (double)tc_clock(proc) / TC_PS_PER_NS;
}

/* Native batches as a program's data move (calibrate.h): before a batch,
 * both ranks rewrite their send buffers and rank 1 says it is ready (8 B),
 * outside the timed interval; then count round trips back to back, rank 0
 * sending its send buffer and receiving the echo into its receive buffer,
 * rank 1 receiving into its receive buffer and echoing its own send buffer:
 * a receive never writes lines the other core holds, and the first round
 * trip of a batch (the only one from 256 KiB on: batches last about
 * sample_ns) reads data its sender has just written.  *ns: the wall time of
 * the count round trips, less the cost of an empty timed interval. */
static int tc__cal_batch_native(struct tc_proc *proc, struct tc__cal_ctx *c, size_t bytes,
                                uint64_t count, double *ns)
{
	uint64_t ready;
	memset(c->sbuf[0], c->fill++, bytes);
	int err = tc_recv(proc, 1, &ready, sizeof ready, NULL);
	uint64_t t0 = tc__cal_now();
	for (uint64_t k = 0; k < count && !err; k++) {
		err = tc_send(proc, 1, c->sbuf[0], bytes);
		if (!err)
			err = tc_recv(proc, 1, c->buf[0], bytes, NULL);
	}
	uint64_t t1 = tc__cal_now();
	*ns = (double)(t1 - t0) - c->clock_ns;
	return err;
}

/* Rank 1's side of tc__cal_batch_native. */
static int tc__cal_echo_native(struct tc_proc *proc, struct tc__cal_ctx *c, size_t bytes, uint64_t count)
{
	uint64_t ready = count;
	memset(c->sbuf[1], c->fill1++, bytes);
	int err = tc_send(proc, 0, &ready, sizeof ready);
	for (uint64_t k = 0; k < count && !err; k++) {
		err = tc_recv(proc, 0, c->buf[1], bytes, NULL);
		if (!err)
			err = tc_send(proc, 0, c->sbuf[1], bytes);
	}
	return err;
}

/* The cost of an empty timed interval (two clock reads), median of 101. */
static double tc__cal_clock_cost(void)
{
	double v[101];
	for (int k = 0; k < 101; k++) {
		uint64_t t0 = tc__cal_now();
		uint64_t t1 = tc__cal_now();
		v[k] = (double)(t1 - t0);
	}
	for (int i = 1; i < 101; i++) /* insertion sort: 101 values */
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return v[50];
}

/* Rank 0: one control message, then count round trips; *ns gets their wall
 * time (measured after the control message completed).  Emulated, *ns is
 * instead the wall time at the end minus the logical time at the start (the
 * caller subtracts the epoch estimate once the run is over). */
static int tc__cal_batch(struct tc_proc *proc, struct tc__cal_ctx *c, size_t bytes, uint64_t count,
                         double *ns)
{
	struct tc__cal_ctl ctl = {.bytes = bytes, .count = count};
	int err = tc_send(proc, 1, &ctl, sizeof ctl);
	if (!err && c->emulated)
		err = tc_clock_advance(proc, TC__CAL_EMU_GAP_NS);
	if (err)
		return err;
	if (!c->emulated)
		return tc__cal_batch_native(proc, c, bytes, count, ns);
	uint64_t t0 = tc__cal_now();
	double start = (double)tc_clock(proc) / TC_PS_PER_NS;
	if (c->emulated)
		tc__cal_offset(proc, c, t0);
	for (uint64_t k = 0; k < count && !err; k++) {
		err = tc_send(proc, 1, c->buf[0], bytes);
		if (!err)
			err = tc_recv(proc, 1, c->buf[0], bytes, NULL);
	}
	uint64_t t1 = tc__cal_now();
	if (c->emulated) {
		tc__cal_offset(proc, c, t1);
		*ns = (double)t1 - start;
	} else {
		*ns = (double)(t1 - t0);
	}
	return err;
}

/* memcpy through a volatile pointer: a batch of identical copies is not
 * merged into one. */
void *(*volatile tc__cal_memcpy)(void *, const void *, size_t) = memcpy;

/* The combine samples (top of the file), then the local copy samples
 * (memcpy of bytes from rank 0's buffer into its accumulator); both
 * buffers freshly written before each; rank 1 is idle by then. */
static void tc__cal_combine(struct tc__cal_ctx *c)
{
	uint64_t batch[TC_CALIBRATE_MAX_POINTS];
	memset(c->acc, 0, c->sizes[c->nsizes - 1]);
	for (int i = 0; i < c->nsizes; i++) {
		size_t count = c->sizes[i] / sizeof(double);
		batch[i] = 1;
		if (!count)
			continue;
		uint64_t fastest = UINT64_MAX;
		for (int w = 0; w < c->warmup; w++) {
			uint64_t t0 = tc__cal_now();
			tc_reduce_local(c->buf[0], c->acc, count, TC_DOUBLE, TC_OP_SUM, NULL);
			uint64_t d = tc__cal_now() - t0;
			fastest = d < fastest ? d : fastest;
		}
		uint64_t b = fastest ? c->sample_ns / fastest + 1 : TC__CAL_MAX_BATCH;
		batch[i] = b > TC__CAL_MAX_BATCH ? TC__CAL_MAX_BATCH : b;
	}
	/* Combines as a collective makes them: both buffers freshly written
	 * (before the batch, untimed; doubles 0.0 and 1.0, so the sums stay
	 * finite), one combine per batch from single_copy_min on. */
	for (int r = 0; r < c->reps; r++)
		for (int i = 0; i < c->nsizes; i++) {
			size_t count = c->sizes[i] / sizeof(double);
			double *out = &c->combine[(size_t)i * (size_t)c->reps + (size_t)r];
			if (!count) {
				*out = NAN;
				continue;
			}
			uint64_t b = c->sizes[i] >= c->single_copy_min ? 1 : batch[i];
			memset(c->buf[0], 0, count * sizeof(double));
			for (size_t k = 0; k < count; k++)
				((double *)(void *)c->acc)[k] = 1.0;
			uint64_t t0 = tc__cal_now();
			for (uint64_t k = 0; k < b; k++)
				tc_reduce_local(c->buf[0], c->acc, count, TC_DOUBLE, TC_OP_SUM, NULL);
			double d = (double)(tc__cal_now() - t0) - c->clock_ns;
			*out = (d > 0 ? d : 0) / (double)b;
		}
	/* Copies as a collective makes them: both buffers freshly written
	 * (before the batch, untimed), one copy per batch from
	 * single_copy_min on (as the round trips). */
	for (int r = 0; r < c->reps; r++)
		for (int i = 0; i < c->nsizes; i++) {
			uint64_t b = c->sizes[i] >= c->single_copy_min ? 1 : batch[i];
			memset(c->buf[0], (int)(r & 0xff), c->sizes[i]);
			memset(c->acc, (int)(~r & 0xff), c->sizes[i]);
			uint64_t t0 = tc__cal_now();
			for (uint64_t k = 0; k < b; k++)
				tc__cal_memcpy(c->acc, c->buf[0], c->sizes[i]);
			double d = (double)(tc__cal_now() - t0) - c->clock_ns;
			c->copy[(size_t)i * (size_t)c->reps + (size_t)r] = (d > 0 ? d : 0) / (double)b;
		}
}

/* Both ranks: count single allreduces of one double, each after a
 * tc_barrier, its start and end times kept per rank (the o_call probe;
 * timed = non-zero: the samples, else the warm-up). */
static int tc__cal_allreduces(struct tc_proc *proc, struct tc__cal_ctx *c, uint64_t count, int timed)
{
	const int me = tc_rank(proc);
	double x = 1.0, y = 0.0;
	int err = TC_OK;
	for (uint64_t k = 0; k < count && !err; k++) {
		err = tc_barrier(proc, NULL);
		uint64_t t0 = tc__cal_now();
		if (!err)
			err = tc_allreduce(proc, &x, &y, 1, TC_DOUBLE, TC_OP_SUM, NULL);
		uint64_t t1 = tc__cal_now();
		if (timed && k < (uint64_t)c->ncalls) {
			c->call_t[me][0][k] = (double)t0;
			c->call_t[me][1][k] = (double)t1;
		}
	}
	if (me == 0) {
		struct tc_coll_info ci;
		tc_last_coll(proc, &ci);
		c->call_alg = ci.algorithm;
	}
	return err;
}

/* Both ranks: one exchange sample (calibrate.h): rewrite the send buffer,
 * a barrier, then tc_sendrecv of bytes with the other rank, its start and
 * end kept at index k. */
static int tc__cal_exchange(struct tc_proc *proc, struct tc__cal_ctx *c, size_t bytes, size_t k)
{
	const int me = tc_rank(proc);
	memset(c->sbuf[me], (int)(k & 0xff), bytes);
	int err = tc_barrier(proc, NULL);
	uint64_t t0 = tc__cal_now();
	if (!err)
		err = tc_sendrecv(proc, 1 - me, c->sbuf[me], bytes, 1 - me, c->buf[me], bytes, NULL);
	uint64_t t1 = tc__cal_now();
	c->xch_t[me][0][k] = (double)t0;
	c->xch_t[me][1][k] = (double)t1;
	return err;
}

/* Both ranks: one combining receive sample (calibrate.h, reduce_ns): twice,
 * both rewrite their input (doubles of one value, normal numbers: a
 * denormal would slow the adds), a barrier, then a tc_reduce of bytes / 8
 * doubles from rank 1 to rank 0; the second call's start and end are kept
 * at index k.  The first is not timed: the samples take the sizes in turn,
 * more of them than a rank's cache keeps calls (lib/coll/cache.c), so the
 * first call of a size plans its schedule again (about 2 us on a 2-CPU
 * VM), which a program's repeated calls do not. */
static int tc__cal_reduce(struct tc_proc *proc, struct tc__cal_ctx *c, size_t bytes, size_t k)
{
	const int me = tc_rank(proc);
	int err = TC_OK;
	for (int pass = 0; pass < 2 && !err; pass++) {
		memset(c->sbuf[me], 0x3f, bytes);
		err = tc_barrier(proc, NULL);
		uint64_t t0 = tc__cal_now();
		if (!err)
			err = tc_reduce(proc, c->sbuf[me], me == 0 ? c->buf[0] : NULL,
			                bytes / sizeof(double), TC_DOUBLE, TC_OP_SUM, 0, NULL);
		uint64_t t1 = tc__cal_now();
		c->red_t[me][0][k] = (double)t0;
		c->red_t[me][1][k] = (double)t1;
	}
	return err;
}

/* Rank 0: the o_call probe (calibrate.h): warm-up calls, then ncalls
 * timed ones; the main thread reads the times after the run. */
static int tc__cal_call_probe(struct tc_proc *proc, struct tc__cal_ctx *c)
{
	struct tc__cal_ctl ctl = {.bytes = TC__CAL_CALL_PROBE, .count = (uint64_t)c->warmup + 1};
	int err = tc_send(proc, 1, &ctl, sizeof ctl);
	if (!err)
		err = tc__cal_allreduces(proc, c, ctl.count, 0);
	ctl = (struct tc__cal_ctl){.bytes = TC__CAL_CALL_PROBE | 1u, .count = (uint64_t)c->ncalls};
	if (!err)
		err = tc_send(proc, 1, &ctl, sizeof ctl);
	if (!err)
		err = tc__cal_allreduces(proc, c, ctl.count, 1);
	return err;
}

static int tc__cal_rank0(struct tc_proc *proc, struct tc__cal_ctx *c)
{
	int err = TC_OK;
	/* Warm-up of every size, one round trip at a time; natively the
	 * fastest of them sizes the batches (the first ones after the team
	 * started can be slower by orders of magnitude). */
	for (int i = 0; i < c->nsizes && !err; i++) {
		double fastest = INFINITY;
		for (int w = 0; w < c->warmup && !err; w++) {
			double ns = 0;
			err = tc__cal_batch(proc, c, c->sizes[i], 1, &ns);
			if (ns < fastest)
				fastest = ns;
		}
		c->batch[i] = 1;
		if (!err && !c->emulated) {
			uint64_t rt = (uint64_t)fastest;
			uint64_t b = rt ? (c->sample_ns + rt - 1) / rt : TC__CAL_MAX_BATCH;
			c->batch[i] = b < 1 ? 1 : b > TC__CAL_MAX_BATCH ? TC__CAL_MAX_BATCH : b;
			/* A single-copy receive reads the sender's buffer: each
			 * round trip must move freshly written data, so one per
			 * batch (a batch rewrites the buffers first). */
			if (c->sizes[i] >= c->single_copy_min)
				c->batch[i] = 1;
		}
	}
	/* Repetition after repetition over the sizes, so that a burst of noise
	 * spoils one sample of several sizes, not every sample of one. */
	for (int r = 0; r < c->reps && !err; r++)
		for (int i = 0; i < c->nsizes && !err; i++) {
			double ns = 0;
			err = tc__cal_batch(proc, c, c->sizes[i], c->batch[i], &ns);
			c->samples[(size_t)i * (size_t)c->reps + (size_t)r] =
			        ns / (2.0 * (double)c->batch[i]);
		}
	if (!err && !c->emulated)
		err = tc__cal_call_probe(proc, c);
	/* Exchanges, interleaved like the round trips. */
	for (int r = 0; r < c->reps && !err && !c->emulated; r++)
		for (int i = 0; i < c->nsizes && !err; i++) {
			size_t k = (size_t)i * (size_t)c->reps + (size_t)r;
			struct tc__cal_ctl ctl = {.bytes = c->sizes[i], .count = 1, .xch = k + 1};
			err = tc_send(proc, 1, &ctl, sizeof ctl);
			if (!err)
				err = tc__cal_exchange(proc, c, c->sizes[i], k);
		}
	/* Combining receives, likewise (sizes of a double and more). */
	for (int r = 0; r < c->reps && !err && !c->emulated; r++)
		for (int i = 0; i < c->nsizes && !err; i++) {
			size_t k = (size_t)i * (size_t)c->reps + (size_t)r;
			if (c->sizes[i] < sizeof(double))
				continue;
			struct tc__cal_ctl ctl = {.bytes = c->sizes[i], .count = 1, .red = k + 1};
			err = tc_send(proc, 1, &ctl, sizeof ctl);
			if (!err)
				err = tc__cal_reduce(proc, c, c->sizes[i], k);
		}
	struct tc__cal_ctl stop = {0, 0, 0, 0};
	int err2 = tc_send(proc, 1, &stop, sizeof stop);
	if (!err && !err2 && !c->emulated)
		tc__cal_combine(c);
	return err ? err : err2;
}

static int tc__cal_rank1(struct tc_proc *proc, struct tc__cal_ctx *c)
{
	for (;;) {
		struct tc__cal_ctl ctl;
		int err = tc_recv(proc, 0, &ctl, sizeof ctl, NULL);
		if (err)
			return err;
		if (ctl.count == 0)
			return TC_OK;
		if ((ctl.bytes | 1u) == (TC__CAL_CALL_PROBE | 1u)) {
			if ((err = tc__cal_allreduces(proc, c, ctl.count, ctl.bytes & 1u)) != 0)
				return err;
			continue;
		}
		if (ctl.xch) {
			if ((err = tc__cal_exchange(proc, c, (size_t)ctl.bytes, ctl.xch - 1)) != 0)
				return err;
			continue;
		}
		if (ctl.red) {
			if ((err = tc__cal_reduce(proc, c, (size_t)ctl.bytes, ctl.red - 1)) != 0)
				return err;
			continue;
		}
		if (!c->emulated) {
			if ((err = tc__cal_echo_native(proc, c, (size_t)ctl.bytes, ctl.count)) != 0)
				return err;
			continue;
		}
		for (uint64_t k = 0; k < ctl.count; k++) {
			size_t got = 0;
			err = tc_recv(proc, 0, c->buf[1], ctl.bytes, &got);
			if (!err)
				err = tc_send(proc, 0, c->buf[1], got);
			if (err)
				return err;
		}
	}
}

static int tc__cal_spmd(struct tc_proc *proc, void *arg)
{
	struct tc__cal_ctx *c = arg;
	return tc_rank(proc) == 0 ? tc__cal_rank0(proc, c) : tc__cal_rank1(proc, c);
}

int tc__cal_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double tc__cal_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, tc__cal_cmp);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The sizes: npoints geometric steps from lo to hi, or (npoints 0) lo, the
 * powers of two strictly between, and hi.  Returns the number of distinct
 * sizes, or TC_EINVAL when there would be more than the maximum. */
static int tc__cal_sizes(size_t lo, size_t hi, int npoints, size_t *sizes)
{
	int n = 0;
	if (npoints == 0) {
		sizes[n++] = lo;
		size_t v = 1;
		while (v <= lo)
			v <<= 1;
		for (; v < hi; v <<= 1) {
			if (n == TC_CALIBRATE_MAX_POINTS)
				return TC_EINVAL;
			sizes[n++] = v;
		}
		if (hi != lo) {
			if (n == TC_CALIBRATE_MAX_POINTS)
				return TC_EINVAL;
			sizes[n++] = hi;
		}
		return n;
	}
	double ratio = (double)hi / (double)lo;
	for (int k = 0; k < npoints; k++) {
		double e = npoints > 1 ? (double)k / (double)(npoints - 1) : 0.0;
		size_t s = k == npoints - 1 ? hi : (size_t)llround((double)lo * pow(ratio, e));
		if (s < lo)
			s = lo;
		if (s > hi)
			s = hi;
		if (n == 0 || s > sizes[n - 1])
			sizes[n++] = s;
	}
	return n;
}

/* Data cache sizes (L1d, L2, L3) of the CPU: sysfs (cpu0), else sysconf. */
static void tc__cal_caches(size_t out[3])
{
	out[0] = out[1] = out[2] = 0;
	for (int idx = 0; idx < 8; idx++) {
		char path[96], type[32] = "";
		int level = 0;
		unsigned long kb = 0;
		char unit = 0;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
		FILE *f = fopen(path, "r");
		if (!f)
			break;
		int ok = fscanf(f, "%d", &level) == 1;
		fclose(f);
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
		if (ok && (f = fopen(path, "r"))) {
			ok = fscanf(f, "%31s", type) == 1;
			fclose(f);
		}
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
		if (ok && (f = fopen(path, "r"))) {
			ok = fscanf(f, "%lu%c", &kb, &unit) >= 1;
			fclose(f);
		}
		if (!ok || level < 1 || level > 3 || !strcmp(type, "Instruction"))
			continue;
		size_t bytes = unit == 'M' ? (size_t)kb << 20 : unit == 'K' ? (size_t)kb << 10 : kb;
		if (!out[level - 1])
			out[level - 1] = bytes;
	}
#ifdef _SC_LEVEL1_DCACHE_SIZE
	const long v[3] = {sysconf(_SC_LEVEL1_DCACHE_SIZE), sysconf(_SC_LEVEL2_CACHE_SIZE),
	                   sysconf(_SC_LEVEL3_CACHE_SIZE)};
	for (int k = 0; k < 3; k++)
		if (!out[k] && v[k] > 0)
			out[k] = (size_t)v[k];
#endif
}

static int tc__cal_check(const struct tc_calibrate_opts *o)
{
	if (o->npoints < 0 || o->reps < 0 || o->warmup < 0 ||
	    o->npoints > TC_CALIBRATE_MAX_POINTS || o->npoints == 1)
		return TC_EINVAL;
	if ((unsigned)o->regime > TC_CALIBRATE_SINGLE_COPY ||
	    (o->mode != TC_MODE_NATIVE && o->mode != TC_MODE_EMULATED))
		return TC_EINVAL;
	return TC_OK;
}

/* o_call from the probe's samples: their median minus the prediction of
 * that allreduce under the segment model (calibrate.h). */
static int tc__cal_call_cost(struct tc_calibration *out, const struct tc__cal_ctx *c)
{
	/* Each call as the benchmarks time one: from the later rank's start to
	 * the later rank's end. */
	const int n = c->ncalls;
	double *v = c->call_t[0][0]; /* reused: rank 0's starts are read first */
	for (int k = 0; k < n; k++)
		v[k] = fmax(c->call_t[0][1][k], c->call_t[1][1][k]) -
		       fmax(c->call_t[0][0][k], c->call_t[1][0][k]);
	out->call_measured_ns = tc__cal_median(v, n);
	struct tc_topo *t = NULL;
	int err = tc_topo_parse("chain:2", &t);
	if (err)
		return err;
	struct tc_call call = {.coll = TC_COLL_ALLREDUCE,
	                       .alg = c->call_alg,
	                       .bytes = sizeof(double),
	                       .esize = sizeof(double)};
	double pred = NAN;
	struct tc_calibration tmp = *out;
	tmp.call_ns = 0;
	err = tc_calibration_predict(&tmp, t, &call, NULL, NULL, &pred);
	tc_topo_destroy(t);
	if (err == TC_EINVAL)
		return TC_OK; /* no finite line: no o_call either */
	if (err)
		return err;
	out->call_predicted_ns = pred;
	out->call_ns = out->call_measured_ns > pred ? out->call_measured_ns - pred : 0;
	return TC_OK;
}

/* The median over size i's n samples of a two-rank measurement whose
 * [rank][start, end] times t holds (an exchange's, a combining receive's):
 * the later end less the later start; uses c->samples' row i as scratch
 * (its values are consumed by then). */
static double tc__cal_paired_median(struct tc__cal_ctx *c, double *t[2][2], int i, int n)
{
	double *xs = c->samples + (size_t)i * (size_t)c->reps;
	for (int r = 0; r < n; r++) {
		size_t k = (size_t)i * (size_t)c->reps + (size_t)r;
		xs[r] = fmax(t[0][1][k], t[1][1][k]) - fmax(t[0][0][k], t[1][0][k]);
	}
	return tc__cal_median(xs, n);
}

/* Each segment's recv_ts_ns and recv_tc_ns_per_byte (calibrate.h): the
 * least-squares line over its points of y = max(0, reduce_ns - call_ns -
 * one_way_ns) against bytes, slope and intercept at least 0 (a negative
 * slope: the mean as intercept; a negative intercept: the line through the
 * origin).  A tc_reduce is a collective call, so its o_call is taken off,
 * and so is the plain receive: what is left is what combining adds. */
static void tc__cal_recv_combine(struct tc_calibration *out)
{
	const double call = isfinite(out->call_ns) ? out->call_ns : 0;
	for (int k = 0; k < out->nsegments; k++) {
		struct tc_calibration_segment *g = &out->segments[k];
		double sx = 0, sy = 0, sxx = 0, sxy = 0;
		int n = 0;
		for (int i = g->first; i < g->first + g->npoints && i < out->npoints; i++) {
			const struct tc_calibration_point *pt = &out->points[i];
			if (!isfinite(pt->reduce_ns) || !isfinite(pt->one_way_ns))
				continue;
			const double x = (double)pt->bytes,
			             y = fmax(0, pt->reduce_ns - call - pt->one_way_ns);
			sx += x, sy += y, sxx += x * x, sxy += x * y, n++;
		}
		g->recv_ts_ns = g->recv_tc_ns_per_byte = NAN;
		if (!n)
			continue;
		const double d = n * sxx - sx * sx;
		double b = n > 1 && d > 0 ? (n * sxy - sx * sy) / d : 0, a = (sy - b * sx) / n;
		if (b < 0)
			b = 0, a = sy / n;
		if (a < 0)
			a = 0, b = sxx > 0 ? sxy / sxx : 0;
		g->recv_ts_ns = a;
		g->recv_tc_ns_per_byte = b;
	}
}

int tc_model_calibrate(const struct tc_calibrate_opts *opts, struct tc_calibration *out)
{
	tc__clear_detail();
	struct tc_calibrate_opts o;
	if (opts)
		o = *opts;
	else
		memset(&o, 0, sizeof o);
	if (!out)
		return TC_EINVAL;
	int err = tc__cal_check(&o);
	if (err)
		return err;
	size_t lo = o.min_bytes ? o.min_bytes : TC__CAL_MIN_DEFAULT;
	size_t hi = o.max_bytes ? o.max_bytes : TC__CAL_MAX_DEFAULT;
	if (lo > hi || hi > TC__CAL_MAX_LIMIT)
		return TC_EINVAL;
	size_t sizes[TC_CALIBRATE_MAX_POINTS];
	uint64_t batch[TC_CALIBRATE_MAX_POINTS];
	int nsizes = tc__cal_sizes(lo, hi, o.npoints, sizes);
	if (nsizes < 2)
		return TC_EINVAL;

	struct tc__cal_ctx c = {
	        .sizes = sizes,
	        .batch = batch,
	        .nsizes = nsizes,
	        .reps = o.reps ? o.reps : TC__CAL_REPS_DEFAULT,
	        .warmup = o.warmup ? o.warmup : TC__CAL_WARMUP_DEFAULT,
	        .sample_ns = o.sample_ns ? o.sample_ns : TC__CAL_SAMPLE_NS_DEFAULT,
	        .emulated = o.mode == TC_MODE_EMULATED,
	};
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.p = 2;
	cfg.topology = "chain:2";
	cfg.no_pin = o.no_pin;
	cfg.single_copy_min = o.single_copy_min;
	cfg.timeout_ms = o.timeout_ms ? o.timeout_ms : TC__CAL_TIMEOUT_DEFAULT;
	cfg.mode = c.emulated ? TC_MODE_EMULATED : TC_MODE_NATIVE;
	if (c.emulated)
		cfg.model = o.model;

	struct tc_team *team = NULL;
	c.buf[0] = malloc(hi);
	c.buf[1] = malloc(hi);
	if (!c.emulated) {
		c.sbuf[0] = malloc(hi);
		c.sbuf[1] = malloc(hi);
		c.clock_ns = tc__cal_clock_cost();
	}
	c.samples = malloc((size_t)nsizes * (size_t)c.reps * sizeof *c.samples);
	if (!c.emulated) {
		c.acc = malloc(hi);
		c.combine = malloc((size_t)nsizes * (size_t)c.reps * sizeof *c.combine);
		c.copy = malloc((size_t)nsizes * (size_t)c.reps * sizeof *c.copy);
		c.ncalls = 2 * c.reps + 1;
		for (int r = 0; r < 2; r++)
			for (int e = 0; e < 2; e++) {
				c.call_t[r][e] = malloc((size_t)c.ncalls * sizeof(double));
				c.xch_t[r][e] =
				        malloc((size_t)nsizes * (size_t)c.reps * sizeof(double));
				c.red_t[r][e] =
				        malloc((size_t)nsizes * (size_t)c.reps * sizeof(double));
			}
	}
	if (c.emulated) { /* two per batch: reps samples and warmup warm-ups per size */
		c.offs_cap = 2 * (size_t)nsizes * ((size_t)c.reps + (size_t)c.warmup);
		c.offs = malloc(c.offs_cap * sizeof *c.offs);
	}
	if (!c.buf[0] || !c.buf[1] || !c.samples || (c.emulated && !c.offs) ||
	    (!c.emulated && (!c.acc || !c.combine || !c.copy || !c.sbuf[0] || !c.sbuf[1] ||
	                     !c.call_t[0][0] || !c.call_t[0][1] || !c.call_t[1][0] || !c.call_t[1][1] ||
	                     !c.xch_t[0][0] || !c.xch_t[0][1] || !c.xch_t[1][0] || !c.xch_t[1][1] ||
	                     !c.red_t[0][0] || !c.red_t[0][1] || !c.red_t[1][0] || !c.red_t[1][1]))) {
		err = TC_ENOMEM;
		goto done;
	}
	/* Touch every page now, not inside the first timed round trip. */
	memset(c.buf[0], 0x5a, hi);
	memset(c.buf[1], 0xa5, hi);
	if (!c.emulated) {
		memset(c.sbuf[0], 0x5a, hi);
		memset(c.sbuf[1], 0xa5, hi);
	}
	err = tc_team_create(&cfg, &team);
	if (err)
		goto done;
	struct tc_team_info tinfo;
	tc_team_get_info(team, &tinfo);
	c.single_copy_min = tinfo.single_copy_min;
	err = tc_run(team, tc__cal_spmd, &c);
	if (err)
		goto done;

	struct tc_team_info info;
	tc_team_get_info(team, &info);
	memset(out, 0, sizeof *out);
	out->single_copy_min = info.single_copy_min;
	out->mode = cfg.mode;
	out->regime = o.regime;
	out->npoints = nsizes;
	tc__cal_caches(out->cache_bytes);
	if (c.emulated) {
		/* The epoch plus the smallest lateness: the smallest offset. */
		double epoch = INFINITY;
		for (size_t k = 0; k < c.noffs; k++)
			if (c.offs[k] < epoch)
				epoch = c.offs[k];
		for (size_t k = 0; k < (size_t)nsizes * (size_t)c.reps; k++)
			c.samples[k] -= epoch / 2.0; /* samples are halves */
	}
	for (int i = 0; i < nsizes; i++) {
		double *s = c.samples + (size_t)i * (size_t)c.reps;
		qsort(s, (size_t)c.reps, sizeof *s, tc__cal_cmp);
		int n = c.reps;
		struct tc_calibration_point *pt = &out->points[i];
		pt->bytes = sizes[i];
		/* Native: the median.  Emulated: the fastest sample, the one a
		 * loaded machine disturbed least (samples are never shortened,
		 * see the top of the file). */
		pt->one_way_ns = c.emulated ? s[0]
		                 : n % 2    ? s[n / 2]
		                            : 0.5 * (s[n / 2 - 1] + s[n / 2]);
		pt->min_ns = s[0];
		pt->max_ns = s[n - 1];
		pt->single_copy = sizes[i] >= info.single_copy_min;
		pt->combine_ns = NAN;
		if (!c.emulated && sizes[i] >= sizeof(double))
			pt->combine_ns = tc__cal_median(c.combine + (size_t)i * (size_t)c.reps, n);
		pt->copy_ns = NAN;
		if (!c.emulated)
			pt->copy_ns = tc__cal_median(c.copy + (size_t)i * (size_t)c.reps, n);
		pt->exchange_ns = c.emulated ? NAN : tc__cal_paired_median(&c, c.xch_t, i, n);
		pt->reduce_ns = c.emulated || sizes[i] < sizeof(double)
		                        ? NAN
		                        : tc__cal_paired_median(&c, c.red_t, i, n);
		pt->cache_level = 0;
		for (int k = 0; k < 3 && out->cache_bytes[k]; k++)
			if (2 * sizes[i] < out->cache_bytes[k]) {
				pt->cache_level = k + 1;
				break;
			}
		if (!pt->cache_level && out->cache_bytes[0])
			pt->cache_level = 4;
	}
	tc__cal_fit(out, -1, &out->all);
	tc__cal_fit(out, 0, &out->stream);
	tc__cal_fit(out, 1, &out->single_copy);
	tc__cal_fit(out, -2, &out->combine);
	tc__cal_fit(out, -3, &out->copy);
	out->tcopy_ns_per_byte = out->copy.tw_ns_per_byte;
	out->tc_ns_per_byte = out->combine.tw_ns_per_byte;
	const struct tc_calibration_fit *f = o.regime == TC_CALIBRATE_STREAM        ? &out->stream
	                                     : o.regime == TC_CALIBRATE_SINGLE_COPY ? &out->single_copy
	                                                                            : &out->all;
	out->ts_ns = f->ts_ns;
	out->tw_ns_per_byte = f->tw_ns_per_byte;
	out->r2 = f->r2;
	out->max_rel_residual = f->max_rel_residual;
	for (int i = 0; i < nsizes; i++) {
		struct tc_calibration_point *pt = &out->points[i];
		pt->residual = (pt->one_way_ns - (f->ts_ns + f->tw_ns_per_byte * (double)pt->bytes)) /
		               (pt->one_way_ns > 1e-3 ? pt->one_way_ns : 1e-3);
	}
	out->hockney_max_bytes = 0;
	for (int i = 0; i < nsizes && fabs(out->points[i].residual) <= TC_CALIBRATE_RESIDUAL_OK; i++)
		out->hockney_max_bytes = out->points[i].bytes;
	tc__cal_segments(out);
	out->call_ns = 0;
	out->call_measured_ns = out->call_predicted_ns = NAN;
	if (!c.emulated)
		err = tc__cal_call_cost(out, &c);
	if (!err && !c.emulated)
		tc__cal_recv_combine(out);
	/* The pair's team first: the concurrency team takes every CPU. */
	tc_team_destroy(team);
	team = NULL;
	if (!err)
		err = tc__cal_concurrency(&o, out);
done:
	tc_team_destroy(team);
	free(c.buf[0]);
	free(c.buf[1]);
	free(c.sbuf[0]);
	free(c.sbuf[1]);
	free(c.samples);
	free(c.offs);
	free(c.acc);
	free(c.combine);
	free(c.copy);
	for (int r = 0; r < 2; r++)
		for (int e = 0; e < 2; e++) {
			free(c.call_t[r][e]);
			free(c.xch_t[r][e]);
			free(c.red_t[r][e]);
		}
	return err;
}
