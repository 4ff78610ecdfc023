/* SPDX-License-Identifier: MIT */
/*
 * topocoll/calibrate.h - measuring the native channels: a Hockney model
 * (one-way time = t_s + m t_w) fitted to ping-pong times.
 *
 * tc_model_calibrate() creates its own team of two ranks on "chain:2" (rank
 * 0 and rank 1 pinned to the first two CPUs of the process), has rank 0
 * ping-pong messages of each size with rank 1 (all sizes in turn, `reps`
 * times over), takes the median one-way time per size (half a round trip),
 * and fits t_s and t_w by weighted least squares.  Natively the data move
 * as a program's do: each rank sends a buffer it has just written (rewritten
 * before every batch, outside the timed interval) and receives into a buffer
 * only it writes; a single-copy size takes one round trip per batch, so
 * that each moves fresh data (echoing the received buffer would make every
 * receive write lines the other core held: 4-5x the collectives' time per
 * byte).  In emulated mode (for
 * testing) a sample is timed from the round trip's logical start, so that a
 * late wake-up can only lengthen it, and the fastest sample of a size is
 * kept instead of the median (lib/calibrate/calibrate.c explains why).
 *
 * The fit.  Sizes span several decades (8 B .. 4 MiB by default), so an
 * ordinary least-squares line would be decided by the largest sizes alone and
 * could give a negative t_s.  Each point is weighted by 1 / y_i^2 instead,
 * i.e. the fit minimises the sum of squared *relative* residuals
 * ((y_i - t_s - m_i t_w) / y_i)^2; r2 is the coefficient of determination of
 * that weighted problem (1 - weighted residual sum of squares / weighted
 * total sum of squares about the weighted mean).  The worst relative residual
 * max_i |y_i - t_s - m_i t_w| / y_i is reported beside it: it is the figure
 * that says whether one straight line describes the channel.
 *
 * Two regimes, honestly.  A native channel moves a message of fewer than
 * single_copy_min bytes (1 KiB by default, tc_team_info; 16 KiB when the
 * figures of this paragraph were taken) through the ring in
 * packets of up to 4 KiB: the sender copies in, the receiver copies out, so
 * t_w is about two copies per byte.  From single_copy_min bytes on, the
 * receiver copies straight out of the sender's buffer once it has read a
 * descriptor, and the sender waits for that copy: one copy per byte.  The
 * one-way time therefore drops at the switch (8 KiB streamed took about as
 * long as 32 KiB single-copy here), and one line through both regimes is a
 * compromise.  Measured on the 2-vCPU VMs of DESIGN.md with the defaults,
 * nine runs on a quiet machine: all points t_s 210-650 ns, t_w 0.05-0.25
 * ns/B, r2 0.56-0.84, worst residual 55-98%; streamed points only t_s
 * 180-570 ns, t_w 0.23-1.05 ns/B, r2 0.73-0.96 (the ring is not linear
 * either: flat up to ~128 B, then steeper); single-copy points only t_w
 * 0.05-0.25 ns/B (4-20 GB/s), r2 0.60-0.99, and a t_s the fit cannot pin
 * down (-330..820 ns: single copies start at 16 KiB, far from m = 0).
 * Consecutive runs differ by up to 3x: the machine's state drifts.
 * tc_model_calibrate therefore fits all three: every point (all), the
 * streamed points only (stream) and the single-copy points only
 * (single_copy); opts->regime picks which one is copied to the top-level
 * ts_ns / tw_ns_per_byte / r2 / max_rel_residual.  For the model of an
 * emulated run, the stream fit describes small messages best.  In emulated
 * mode (opts->mode, for testing) there is one regime: the model's.
 *
 * The channels switch to single copy at 1 KiB, where the
 * single copy starts to beat the ring (lib/core/chan.h gives the
 * measurement), and the ring's copies are whole-line copies, so the one-way
 * time grows with the size and the "all" fit is the one line to use (--ts,
 * --tw); the stream and single_copy fits stay to show the two paths, and
 * the calibrated model (below) is a line per path and cache level.
 *
 * The rest of the model.  t_c, the time per byte combined by a reduction,
 * is fitted the same way (weighted least squares, a fixed cost per call plus
 * t_c per byte) to the time rank 0 takes to combine each size with
 * tc_reduce_local (double, sum) into a buffer of its own, median of the
 * samples (the fit "combine": ts_ns is the call's fixed cost, tw_ns_per_byte
 * is t_c).  Both buffers are freshly written before each
 * sample, one combine per sample from single_copy_min on, as in a
 * collective, and only combines of 100 ns or more are fitted (when at
 * least two are).  Where Hockney stops holding: each point says which level of
 * rank 0's cache holds the two buffers of a round trip (2 m bytes: sysconf,
 * else sysfs), and hockney_max_bytes is the largest size up to which every
 * point's residual against the top-level fit is within
 * TC_CALIBRATE_RESIDUAL_OK.  Above the last-level cache, or where the copies
 * start to miss in L2 (1 MiB here), the time per byte rises and one line no
 * longer describes the channel.
 *
 * The calibrated model.  One line cannot describe a channel
 * whose time per byte changes with the path and with the cache level the
 * data sit in, and the collectives pay a per-call cost that no ping-pong
 * contains.  So the calibration also reports, as LogGP users and MPI tuning
 * tables do, a model by size range:
 *   segments  the points are split where the path (streamed, single copy)
 *             or the cache level of 2 m changes; a run of fewer than
 *             TC_CALIBRATE_SEGMENT_MIN points joins the segment before it
 *             (the first such run the one after it), so every line is fitted
 *             on at least that many points; each segment gets its own
 *             weighted least-squares line t_s,k + m t_w,k (the same fit as
 *             above, on its points).  `piecewise` is that fit judged on
 *             every point: r2 of the weighted problem (residual of each
 *             point against its own segment's line, every point counted) and
 *             the worst relative residual; each point carries its segment
 *             and that residual;
 *   exchange  natively, each size is also exchanged (both ranks
 *             tc_sendrecv at once after a barrier, fresh data, timed from
 *             the later start to the later end, median), and each segment
 *             reports the median ratio of exchange to one-way time: whether
 *             the two directions overlap (full duplex, ratio near 1) or not
 *             (near 2).  The model stays full duplex; the calibrated
 *             prediction charges the ratio of a single-copy segment to a
 *             schedule of copying exchanges only (below).  Single-copy
 *             exchanges measure 1.0-1.4; the streamed sizes' 1.8-1.9 come
 *             from timing one exchange after a barrier, which the batched
 *             ping-pong does not pay, and are not used;
 *   call_ns   o_call, the cost of a collective call beyond its messages
 *             (argument checks, the mismatch signature, the schedule
 *             lookup, the executor's round and the call's end): natively,
 *             the median time per call of back-to-back tc_allreduce calls
 *             of one double on the same two ranks, minus what the segment
 *             model predicts for that call; clamped at 0.  0 in emulated
 *             mode (the emulation charges nothing per call).
 *   t_copy    the time per byte of a local copy (memcpy between two
 *             buffers rank 0 has just written, one copy per sample from
 *             single_copy_min on; fitted like t_c, on the points whose
 *             copy takes 100 ns or more when at least two do: below, the
 *             clock's cost and resolution decide, and such copies hardly
 *             matter): a schedule's local copies (a rank's own block of an
 *             allgather or alltoall) are free in the model, but at p = 2
 *             they cost about what the
 *             transfer does (allgather = tc_sendrecv + memcpy of the own
 *             block, measured within 3%);
 *   reduce_ns, recv_ts_ns, recv_tc_ns_per_byte
 *             what combining adds to a receive: a tc_reduce of each size
 *             from rank 1 to rank 0, both writing their input first (the
 *             second of two calls: the first of a size plans its
 *             schedule), the median per point; per segment the line of
 *             reduce_ns - call_ns - one_way_ns against bytes (slope and
 *             intercept at least 0).
 * tc_calibration_model() gives the struct tc_model of the segment holding a
 * message size, tc_calibration_predict() the calibrated prediction of a
 * call: the schedule's makespan under the model of the segment holding its
 * mean message (bytes / messages), plus call_ns, plus t_copy times the most
 * bytes one rank copies locally in the schedule (beyond two ranks, at one
 * of p copiers' share of the copy table where that is slower: data beyond
 * a core's L2 or a footprint beyond the last-level cache); when every message of the
 * schedule between ranks copies and has its reverse in its round (an
 * exchange: allgather and alltoall at p = 2) and the segment is single
 * copy, plus (exchange_ratio - 1) times the makespan without combines
 * (both directions at once contend for the cores' caches; a combining
 * exchange, allreduce at p = 2, measures what the model adds: its receives
 * combine out of the sender's buffer, a pass priced by t_c); when the
 * schedule's combines go one way (a reduce's tree or pipeline), t_c
 * replaced by the segment's recv_tc_ns_per_byte and each message's start-up
 * raised by recv_ts_ns (without them, NAN: t_c less t_w, the combine taken
 * as hidden in the read).  The top-level single line
 * (regime) is kept: it is what --ts / --tw of the other commands take.
 * A per-round overhead is not fitted: every collective at p = 2 is one
 * round, so it cannot be told apart from o_call there.
 *
 * Concurrency (docs/calibration.md, "Many cores").  The pair cannot see what
 * p ranks at once pay: their copies share the caches' and the memory's
 * bandwidth, and every round of a schedule hands cache lines between more
 * and farther cores.  Natively, unless opts->max_copiers is -1, a second
 * team of K ranks (K = the process's CPUs, at most opts->max_copiers and
 * TC_CALIBRATE_MAX_COPIERS; none when K < 2), placed as tc_run places
 * ranks (topocoll/team.h: cores first, compact by cache domain), measures:
 *   handoff   the one-way time of a cache line passed between rank 0 and
 *             every other rank (handoff_by_rank_ns), half the median of
 *             batches of round trips on one atomic word; per distance
 *             class (enum tc_calibrate_handoff: SMT sibling, same cache
 *             domain, same package across caches, across packages) that of
 *             the nearest rank of the class (NAN where the machine has no
 *             such rank, or hwloc does not say);
 *   copy      the aggregate copy bandwidth B(k, m) of k = 1 .. K ranks
 *             copying at once, for m in copy_sizes (64 KiB, 512 KiB, 4 MiB
 *             and a memory-sized block: more than 4 MiB, K blocks larger
 *             than the last-level cache, at most 32 MiB): the i-th of k
 *             copiers copies m bytes that the (i + 1) mod k-th has just
 *             written into a buffer of its own that it has just written (a
 *             collective's single copy into a program's output), after a
 *             barrier; B = k m / the slowest copier's time, median
 *             of the samples after one untimed copy, in bytes/ns.  The k
 *             copiers of a sample are k consecutive ranks from an offset
 *             that moves on at each sample, and one pair's samples are a
 *             pass over every pair apart, so that one CPU slow for a while
 *             does not decide them all;
 *   combine   the same samples' k copiers combining instead of copying
 *             (a sum of doubles, tc_reduce_local(): the block the next
 *             has just written into the buffer of its own it has just
 *             written, as the machine's own algorithms reduce a peer's
 *             block into theirs), after the copy: B_c(k, m),
 *             combine_bytes_per_ns;
 *   shared    the same samples' k copiers copying a block that another
 *             core has read since its writer wrote it (each of max(k, 3)
 *             ranks writes its block, copies once, untimed, the block two
 *             ranks on, then the k copiers copy the next one's): the
 *             blocks that several ranks read (an allgather's, a bcast's),
 *             read after the first reader, B_s(k, m),
 *             shared_bytes_per_ns;
 *   sync      the time of one synchronised round among q = 2, 4, 8, ..., K
 *             ranks: each round every rank sends 8 bytes d ranks to its
 *             right and receives from d to its left (tc_sendrecv), d the
 *             distances of a dissemination, 1, 2, 4, ... < q in turn, so
 *             that a round's partners span the team as a hypercube's do;
 *             200 rounds; each rank's median time per round (a stall of
 *             the machine during a few rounds does not count), the
 *             slowest rank's, median of the samples: sync_ns;
 *   flag      the same for a round of cache-line flags among q ranks
 *             (the machine's own algorithms synchronise so): each round
 *             every rank writes its own flag (in a 128-byte block of its
 *             own) and waits until every other rank's shows the round,
 *             looking at them from the next rank on, as those algorithms
 *             do; flag_ns;
 *   chain     a step of a ring of q ranks over the channels, for m in
 *             chain_sizes (64 KiB, 256 KiB, 1 MiB): each rank writes m
 *             bytes, then 8 times sends the block it holds to the next
 *             rank and receives the previous rank's (tc_sendrecv, single
 *             copy), so that every step reads a block its sender has just
 *             received, as a ring or a pipeline does; the slowest rank's
 *             time over the 8 steps, per step, median of the samples:
 *             chain_ns.
 * The calibrated prediction charges them (tc_calibration_concurrency_ns):
 * a round whose transfers k ranks receive at once, the busiest receiver v
 * bytes in all (c of them combined), among q distinct ranks, costs beyond
 * the pair model
 *   (v t_w + c t_c) (max(s(k, m), z(k, v)) - 1) + e(q),
 * for the round's busiest receiver (one that takes the round's most bytes,
 * v; where several do, the dearest one's price),
 * z replaced by z1(k, v) = max(1, C(k, v) / (t_s + v t_w)) when that
 * receiver also sends in the round to another rank than the one it
 * receives from (a ring's or a pipeline's step: C measures just that, and
 * the pair's model priced it as one one-way message; t_s + v t_w under
 * tc_calibration_model() of v, the ratio interpolated as z's),
 * and the schedule e(2) less (the sum at least 0: o_call, measured on one
 * round at p = 2, holds one round's excess), with s(k, m) = max(1, (k / 2)
 * B(2, m) / B(k, m)) for k > 2, else 1 (tc_calibration_share: the pair's
 * one-way and exchange times already describe up to two copies at once),
 * z(k, v) = max(1, C(k, v) / C(2, v)) for k > 2, else 1 (a ring of k
 * ranks each receiving v bytes from a sender that has just received them,
 * against an exchange between two: tc_calibration_chain_share), C
 * interpolated linearly in log2 q between the measured rings and the ratio
 * in log2 v between chain_sizes (clamped at the ends; 1 without the chain
 * table), B interpolated linearly in log2 m between copy_sizes and in k between
 * the measured counts (clamped at the ends; for k >= 2 the per-copier
 * rates B / k of each size from k = 2 on first replaced by their
 * non-increasing least-squares fit: a copier more cannot make each faster,
 * so a rate above a smaller count's is noise), m where the call's data
 * live: all that the receiver takes in over the call, at most the largest
 * copy size whose K copiers' two buffers fit the last-level cache
 * (cache_bytes; no cap when it is unknown), or the memory-sized block when
 * the call's footprint (each buffer's span of the offsets its transfers
 * touch, counted once) exceeds that cache; t_w and t_c the prediction's
 * segment's; and e(q) = max(0, R(q) - (t_s + 8 t_w)), the synchronised
 * round less the segment model's 8-byte message, R interpolated linearly
 * in log2 q and clamped (tc_calibration_sync_ns() is e(q) for q > 2).
 * At p = 2 both are 0: the pair's prediction is unchanged.  The machine's
 * own algorithms (`shm`, where the reader copies) are priced instead, when
 * the tables exist, as rounds of flags, F(q) each, plus the busiest
 * reader's copies at its share of the bandwidth where the call's data live
 * (as above) and a hand-off for each block after its first, a combine's
 * read followed by its add at t_c (docs/calibration.md, "The machine's own
 * algorithms"); no charge is added to that.
 *
 * Native times on a shared VM drift (DESIGN.md: the core-to-core cache-line
 * latency jumps from ~34 ns to ~160 ns for seconds at a time); repeat a
 * calibration and compare before trusting a t_s below a microsecond.
 */
#ifndef TOPOCOLL_CALIBRATE_H
#define TOPOCOLL_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "topocoll/export.h"
#include "topocoll/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most sizes one calibration measures (the points are kept in the result). */
#define TC_CALIBRATE_MAX_POINTS 64
/* A point whose relative residual is at most this is described by the fit
 * (hockney_max_bytes). */
#define TC_CALIBRATE_RESIDUAL_OK 0.15

/* Most segments of the piecewise fit, and the fewest points a segment's line
 * is fitted on. */
#define TC_CALIBRATE_MAX_SEGMENTS 8
#define TC_CALIBRATE_SEGMENT_MIN 3

/* Which points the top-level fit of struct tc_calibration is made on. */
enum tc_calibrate_regime {
	TC_CALIBRATE_ALL = 0,         /* every size (one line for both paths) */
	TC_CALIBRATE_STREAM = 1,      /* sizes below single_copy_min */
	TC_CALIBRATE_SINGLE_COPY = 2, /* sizes of single_copy_min and more */
};

/* Options; zero-initialise (or pass NULL to tc_model_calibrate) for the
 * defaults given in brackets. */
struct tc_calibrate_opts {
	size_t min_bytes;                /* smallest size [8]; 0 means the default, so a
	                         0-byte point is never measured */
	size_t max_bytes;                /* largest size [4 MiB, so that the points of
	                         1 MiB and above, past a 1 MiB L2, form a segment
	                         of their own]; at most 64 MiB (each rank holds
	                         one buffer of this size) */
	int npoints;                     /* sizes, spaced geometrically from min to max and
	                         rounded to whole bytes (duplicates dropped)
	                         [one per power of two, min and max included];
	                         at most TC_CALIBRATE_MAX_POINTS */
	int reps;                        /* samples per size; the median is kept [15] */
	int warmup;                      /* unmeasured round trips before each size [4] */
	uint64_t sample_ns;              /* native: a sample times enough round trips to
	                         last about this long, to rise above the clock's
	                         resolution [20000]; emulated: one round trip */
	enum tc_calibrate_regime regime; /* the top-level fit [ALL] */
	int mode;                        /* enum tc_mode: TC_MODE_NATIVE [default], or
	                         TC_MODE_EMULATED to calibrate an emulated team
	                         against `model` (for testing the fit) */
	struct tc_model model;           /* the emulated team's model (ignored in native
	                          mode); zero t_s and t_w are taken as given */
	size_t single_copy_min;          /* the team's single-copy threshold [0: the
	                           library default]; SIZE_MAX: always stream */
	int no_pin;                      /* non-zero: do not pin the two ranks */
	uint64_t timeout_ms;             /* a rank waiting longer fails with TC_ETIMEDOUT
	                         [0: 60000] */
	int max_copiers;                 /* concurrency (top of the file): at most this
	                         many ranks [0: the process's CPUs, at most
	                         TC_CALIBRATE_MAX_COPIERS]; -1: not measured */
};

/* Concurrency's tables (top of the file). */
#define TC_CALIBRATE_MAX_COPIERS 64
#define TC_CALIBRATE_COPY_SIZES 4
#define TC_CALIBRATE_MAX_SYNC 8
#define TC_CALIBRATE_CHAIN_SIZES 3

/* The distance classes of the cache-line hand-off. */
enum tc_calibrate_handoff {
	TC_HANDOFF_SMT = 0,     /* SMT sibling: the same core */
	TC_HANDOFF_CACHE = 1,   /* another core of the same cache domain */
	TC_HANDOFF_PACKAGE = 2, /* another cache domain of the same package */
	TC_HANDOFF_REMOTE = 3,  /* another package */
	TC_HANDOFF_CLASSES = 4
};

/* One size measured. */
struct tc_calibration_point {
	size_t bytes;
	double one_way_ns;   /* median over the samples of half a round trip
	                         (emulated: the fastest sample) */
	double min_ns;       /* fastest sample */
	double max_ns;       /* slowest sample */
	int single_copy;     /* moved by the single-copy path (native) */
	double residual;     /* (one_way_ns - fit) / one_way_ns against the
	                         top-level fit */
	double combine_ns;   /* tc_reduce_local of bytes / 8 doubles (sum) on
	                         rank 0, median; NAN below 8 bytes or emulated */
	int cache_level;     /* smallest cache level of rank 0's CPU holding
	                         2 x bytes (1, 2, 3), 4: above the last level, 0:
	                         the sizes are unknown; a level exactly 2 x
	                         bytes large does not hold them (it holds the
	                         ring, the stacks and the channel's state too:
	                         16 KiB on a 32 KiB L1d costs per byte what
	                         32 KiB does, as measured) */
	int segment;         /* index of its segment in the piecewise fit */
	double seg_residual; /* (one_way_ns - its segment's line) / one_way_ns */
	double exchange_ns;  /* native: median time of a tc_sendrecv of bytes
	                         both ways at once (calibrate.h); NAN emulated */
	double copy_ns;      /* native: memcpy of bytes on rank 0 between two
	                         buffers it has just written, median; NAN
	                         emulated */
	double reduce_ns;    /* native: median time of a tc_reduce of bytes / 8
	                         doubles (sum) from rank 1 to rank 0, both
	                         ranks writing their input first: one receive
	                         that combines as it reads; NAN emulated or
	                         below 8 bytes */
};

/* One least-squares fit (see the header comment). */
struct tc_calibration_fit {
	int npoints; /* points it was made on; 0 or 1: no fit, and the
	                         doubles below are NAN */
	double ts_ns;
	double tw_ns_per_byte;
	double r2;
	double max_rel_residual;
};

/* One segment of the piecewise fit: consecutive points. */
struct tc_calibration_segment {
	size_t lo_bytes, hi_bytes;              /* its first and last point */
	int first, npoints;                     /* its points: points[first .. first+npoints) */
	int single_copy;                        /* path of its points; -1: both (merged) */
	int cache_level;                        /* cache level of its points; -1: several */
	struct tc_calibration_fit fit;          /* its line (npoints, t_s, t_w, r2, worst) */
	double exchange_ratio;                  /* median of exchange_ns / one_way_ns over its
	                              points (NAN: not measured); charged to
	                              copying exchanges by the calibrated
	                              prediction of a single-copy segment */
	double recv_ts_ns, recv_tc_ns_per_byte; /* what a receive that combines as
	                              it reads adds to a plain one: the line
	                              fitted over its points to max(0,
	                              reduce_ns - call_ns - one_way_ns) against
	                              bytes, by least squares, slope and
	                              intercept at least 0 (NAN: not measured);
	                              the t_c of one-way combines and their
	                              messages' extra start-up in the calibrated
	                              prediction of a single-copy segment */
};

struct tc_calibration {
	/* The fit opts->regime asked for (copied from all, stream or
	 * single_copy). */
	double ts_ns;
	double tw_ns_per_byte;
	double r2;
	double max_rel_residual;
	enum tc_calibrate_regime regime;
	struct tc_calibration_fit all, stream, single_copy;
	size_t single_copy_min; /* the threshold in force (team info) */
	int mode;               /* enum tc_mode the measurement ran in */
	/* t_c: the fit of the combine times (ts_ns: fixed cost per call,
	 * tw_ns_per_byte: t_c); npoints 0 in emulated mode. */
	struct tc_calibration_fit combine;
	double tc_ns_per_byte; /* combine.tw_ns_per_byte */
	/* Data cache sizes of the CPU (L1d, L2, L3; 0: unknown) and the largest
	 * size up to which every residual is within TC_CALIBRATE_RESIDUAL_OK
	 * (0: not even the smallest). */
	size_t cache_bytes[3];
	size_t hockney_max_bytes;
	int npoints;
	struct tc_calibration_point points[TC_CALIBRATE_MAX_POINTS];
	/* The piecewise fit (top of the file): its segments, and the fit judged
	 * on every point (npoints, r2, max_rel_residual; ts_ns and
	 * tw_ns_per_byte are NAN: there is one line per segment); the largest
	 * size up to which every point is within TC_CALIBRATE_RESIDUAL_OK of
	 * its segment's line. */
	int nsegments;
	struct tc_calibration_segment segments[TC_CALIBRATE_MAX_SEGMENTS];
	struct tc_calibration_fit piecewise;
	size_t piecewise_max_bytes;
	/* o_call (top of the file): call_ns = max(0, call_measured_ns -
	 * call_predicted_ns); emulated: 0, and the other two NAN. */
	double call_ns;
	double call_measured_ns;  /* median time per tc_allreduce of 8 B */
	double call_predicted_ns; /* its prediction under the segment model */
	/* t_copy: the fit of the local copy times of 100 ns or more (ts_ns:
	 * fixed cost per copy, tw_ns_per_byte: t_copy); npoints 0 in emulated
	 * mode. */
	struct tc_calibration_fit copy;
	double tcopy_ns_per_byte; /* copy.tw_ns_per_byte */
	/* Concurrency (top of the file); conc_ranks 0: not measured (emulated,
	 * max_copiers -1, one CPU), every charge then 0. */
	int conc_ranks;                        /* K: the ranks of the concurrency team */
	double handoff_ns[TC_HANDOFF_CLASSES]; /* one way; NAN: no such rank */
	int handoff_rank[TC_HANDOFF_CLASSES];  /* the rank measured, -1: none */
	double handoff_pair_ns;                /* ranks 0 and 1 (the pair of the channel fit) */
	/* Rank 0 to rank j, one way, for j = 1 .. conc_ranks - 1 ([0] and
	 * the rest NAN): a map of the machine as the hand-offs see it, which
	 * shows what a virtual machine may not say (two vCPUs that share a
	 * core, a host's other socket).  Reported; not priced. */
	double handoff_by_rank_ns[TC_CALIBRATE_MAX_COPIERS];
	int ncopy_sizes;
	size_t copy_sizes[TC_CALIBRATE_COPY_SIZES]; /* increasing */
	int ncopiers;
	int copiers[TC_CALIBRATE_MAX_COPIERS]; /* increasing, from 1 */
	double copy_bytes_per_ns[TC_CALIBRATE_COPY_SIZES][TC_CALIBRATE_MAX_COPIERS];
	/* B(k, m), aggregate; [size][copier count] */
	/* B_c(k, m): the same samples' copiers combining instead (top of the
	 * file), aggregate, [size][copier count]; ncombine is ncopiers when
	 * measured, 0 when not (a calibration made before it: a combine is
	 * then priced as a copy and m t_c). */
	int ncombine;
	double combine_bytes_per_ns[TC_CALIBRATE_COPY_SIZES][TC_CALIBRATE_MAX_COPIERS];
	/* B_s(k, m): the same samples' copiers copying blocks another core
	 * has read (top of the file), aggregate, [size][copier count];
	 * nshared is ncopiers when measured, 0 when not (a block of several
	 * readers is then priced as the copy table's). */
	int nshared;
	double shared_bytes_per_ns[TC_CALIBRATE_COPY_SIZES][TC_CALIBRATE_MAX_COPIERS];
	int nsync;
	int sync_ranks[TC_CALIBRATE_MAX_SYNC]; /* q, increasing, from 2 */
	double sync_ns[TC_CALIBRATE_MAX_SYNC]; /* R(q): time per round */
	/* F(q): a round of flags among sync_ranks[i] ranks (top of the file);
	 * nflag 0: not measured (the machine's own algorithms are then priced
	 * with R(q) and a hand-off instead). */
	int nflag;
	double flag_ns[TC_CALIBRATE_MAX_SYNC];
	/* Reported, not priced (for nsync ranks as sync_ranks[]; NAN where not
	 * measured): the mean round of the same messages, the rounds in which
	 * a CPU was not running included (R(q) is the median); and a round of
	 * hypercube pairs, each rank exchanging 8 bytes both ways with rank
	 * me XOR d, d = 1, 2, 4, ... (q a power of two only). */
	double sync_mean_ns[TC_CALIBRATE_MAX_SYNC];
	double pairs_ns[TC_CALIBRATE_MAX_SYNC];
	/* C(q, m): a step of a ring of q = sync_ranks[i] ranks, i < nchain,
	 * each receiving chain_sizes[s] bytes over the channels (top of the
	 * file); chain_ns[s][i] ns per step.  nchain 0: not measured (the
	 * channel schedules are then charged by the copy table alone). */
	int nchain;
	int nchain_sizes;
	size_t chain_sizes[TC_CALIBRATE_CHAIN_SIZES]; /* increasing */
	double chain_ns[TC_CALIBRATE_CHAIN_SIZES][TC_CALIBRATE_MAX_SYNC];
};

/*
 * Measures the channels and fits t_s and t_w (see the top of this file).
 * opts may be NULL (every default).  *out is filled on success; on error its
 * contents are unspecified.  Takes about reps x npoints x (sample_ns + a
 * round trip) plus the team's start, and the concurrency team's tables
 * (4 sizes x the copier counts x 8 copies and 8 combines, the largest block
 * memory-sized, log2 K rings of 200 rounds of messages and as many of
 * flags, the hand-offs): 1-4 s with the
 * defaults natively as measured before the combines, which repeat every
 * copy sample, were added; in emulated mode every round trip costs 2 (t_s + m t_w) of wall
 * time.
 *
 * Errors: TC_EINVAL (out NULL; min_bytes > max_bytes; max_bytes above
 * 64 MiB; npoints, reps or warmup negative; npoints above
 * TC_CALIBRATE_MAX_POINTS or leaving fewer than 2 distinct sizes; regime or
 * mode out of range; a bad model), TC_ENOMEM, and what tc_team_create() and
 * tc_run() return (TC_ESYS, TC_ETIMEDOUT, ...).  A regime whose fit has
 * fewer than 2 points is not an error: its fields are NAN.
 *
 * Ownership: opts is borrowed for the call; out belongs to the caller (the
 * points are stored inside it; nothing to free).
 * Thread-safety: thread-safe (each call has its own team and threads), but
 * two calibrations, or any other load on the two CPUs, running at the same
 * time distort each other's measurements.  Must not be called from inside an
 * SPMD function whose team is pinned to the same CPUs, for the same reason.
 */
TC_API int tc_model_calibrate(const struct tc_calibrate_opts *opts, struct tc_calibration *out);

/*
 * The check.  Every call that takes a calibration checks it the same way
 * (lib/model/calibration.h): tc_calibration_read() a record, tc_team_create()
 * tc_team_config.calibration, and the calibrated model and prediction below
 * the struct they are given, so that a calibration built by hand is held to
 * what one read from text is.  Refused, TC_EINVAL with tc_error_detail()
 * naming the call and the field by its key in the text ("segments.1.first";
 * the reader also its line):
 * - a count beyond its array (nflag beyond nsync); regime or mode outside
 *   its enum;
 * - a fit (all, stream, single_copy, combine, copy, piecewise, a
 *   segment's) whose t_s and t_w are not both NAN (no fit) or both finite
 *   within the model's bounds (|t_s| <= 10^12 ns, |t_w| <= 10^9 ns/B, as
 *   tc_model_check); a top-level ts_ns or tw_ns_per_byte other than the
 *   fit `regime` names (they are its copy);
 * - point sizes that do not increase; segments that do not take the points
 *   in order (each first where the one before ends, the last ending at
 *   npoints, lo_bytes and hi_bytes their first and last point's sizes); a
 *   segment without a line, or whose line is a negative time at either end
 *   (a negative t_s or t_w alone is kept: see tc_calibration_model); a
 *   path or cache level out of range; an exchange_ratio, recv_ts_ns or
 *   recv_tc_ns_per_byte negative or infinite;
 * - tc_ns_per_byte, tcopy_ns_per_byte or call_ns negative, infinite or
 *   over those bounds;
 * - with concurrency tables (conc_ranks >= 2): none of a table; sizes,
 *   copier counts and ranks that do not increase (from 1, 1 and 2, at most
 *   conc_ranks); a bandwidth, round time or the pair's hand-off not finite
 *   and above 0; a class's hand-off neither NAN nor that.
 * NAN stays "not measured" wherever a field is documented so.  The model,
 * the prediction and a team also need a line: a segment, or without
 * segments the line of all points (then a time of 0 or more at the first
 * and last point).  The figures only reported (a point's times and
 * residuals, r2, the hand-offs by rank, the rounds' means) are not
 * checked.
 */
struct tc_topo;
struct tc_call;
struct tc_prediction;

/*
 * The model of the segment holding a message of `bytes` bytes (the last
 * segment whose first point is at most bytes, else the first segment): the
 * defaults of tc_model_default() with t_s and t_w of that segment's line
 * (no segments: the "all" fit's; a negative t_w taken as 0; a
 * negative t_s, which a segment of the largest sizes can have, taken as 0
 * with t_w = the line's time at `bytes` / bytes, so that a message of that
 * size costs what the line says), t_c = tc_ns_per_byte (0 when not
 * fitted) and t_h = 0 (the channels are one hop).  *segment, when not NULL, gets the index.
 * Returns 0, or TC_EINVAL (out NULL; cal NULL, refused by the check above
 * or without a line; tc_error_detail() says which).
 * Thread-safe; cal is borrowed.
 */
TC_API int tc_calibration_model(const struct tc_calibration *cal, size_t bytes,
                                struct tc_model *out, int *segment);

/*
 * The calibrated prediction of a call on topology t: tc_predict_call()
 * under tc_calibration_model() of the call's block size, then, when the
 * schedule's mean message (bytes / messages) falls in another segment,
 * once more under that segment's model, with the algorithm the first
 * prediction picked (no iteration); *ns = the makespan + cal->call_ns + the
 * most bytes one rank copies locally in that schedule (tc_schedule_call,
 * transfers with src == dst that do not combine) x tcopy_ns_per_byte.  *pr
 * (may be NULL) gets the prediction used, *segment (may be NULL) the
 * segment.  Name the algorithm in call->alg to predict what ran.  With a
 * concurrency measurement, *ns also includes the two charges of
 * tc_calibration_concurrency_ns() (both 0 at p = 2).
 * Returns 0, TC_EINVAL (as tc_calibration_model, or ns NULL), TC_ENOMEM, or
 * what tc_predict_call() and tc_schedule_call() return.  Thread-safe; every pointer is borrowed.
 */
TC_API int tc_calibration_predict(const struct tc_calibration *cal, const struct tc_topo *t,
                                  const struct tc_call *call, struct tc_prediction *pr,
                                  int *segment, double *ns);

/*
 * tc_calibration_predict() of a call on a machine whose ranks sit as place
 * says (tc_team_info.place of a team on t: tc_topo_nodes(t) entries; NULL:
 * unknown, which is tc_calibration_predict()).  The placement changes the
 * price of the machine's own algorithms only: each of their rounds pays the
 * cache-line hand-off of the distance class of its farthest pair
 * (handoff_ns[], enum tc_calibrate_handoff, a class not measured priced as
 * the next farther one that is), where without a placement a round among
 * more than two ranks pays the farthest class the machine has.  So the
 * levels of `shm_tree` inside a cache domain pay that domain's hand-off and
 * its leaders' level the one across caches or packages, while a flat `shm`
 * round pays that of the team's farthest pair (docs/calibration.md, "The
 * machine's own algorithms").  Their reductions are priced as a team
 * whose waiters spin runs them, their operands staged (docs/algorithms.md,
 * reduce_scatter); AUTO on a team set to yield prices them
 * unstaged, as it runs them.  Returns what tc_calibration_predict()
 * returns.  Thread-safe; every pointer is borrowed.
 */
struct tc_rank_place;
TC_API int tc_calibration_predict_placed(const struct tc_calibration *cal, const struct tc_topo *t,
                                         const struct tc_call *call, const struct tc_rank_place *place,
                                         struct tc_prediction *pr, int *segment, double *ns);

/*
 * The concurrency model's pieces (top of the file), for pricing rounds on a
 * native team whose ranks each have a CPU:
 * - tc_calibration_share(): s(k, m) >= 1, the factor by which k copies of
 *   m bytes at once stretch each one's time per byte; 1 for k <= 2, for no
 *   measurement, or cal NULL or refused by the check (above);
 * - tc_calibration_chain_share(): z(k, m) >= 1, the factor by which k
 *   ranks that each receive m bytes from a rank that has just received
 *   them stretch a step; 1 for k <= 2, without the chain table, or cal NULL
 *   or refused by the check;
 * - tc_calibration_chain_step_share(): z1(k, m) >= 1, such a step of k
 *   ranks against the pair's one-way message of m bytes under
 *   tc_calibration_model() of m; 1 as z (and for a calibration without a
 *   line);
 * - tc_calibration_sync_ns(): rho(q) >= 0, what a synchronised round among
 *   q ranks costs beyond the pair's price of its 8-byte message (e(q) at
 *   the top of the file); 0 for q <= 2, no measurement, or a calibration
 *   the check refuses;
 * - tc_calibration_round_ns(): the whole price of one round of k transfers
 *   received at once, the largest of m bytes, among q ranks:
 *   t_s + m t_w s(k, m) + rho(q) under tc_calibration_model() of m (in
 *   *ns); returns 0 or what tc_calibration_model() returns (TC_EINVAL for
 *   ns NULL too).
 * Pure; thread-safe; cal is borrowed.
 */
TC_API double tc_calibration_share(const struct tc_calibration *cal, int k, size_t bytes);
TC_API double tc_calibration_chain_share(const struct tc_calibration *cal, int k, size_t bytes);
TC_API double tc_calibration_chain_step_share(const struct tc_calibration *cal, int k, size_t bytes);
TC_API double tc_calibration_sync_ns(const struct tc_calibration *cal, int q);
TC_API int tc_calibration_round_ns(const struct tc_calibration *cal, int k, size_t bytes, int q,
                                   double *ns);

/*
 * What tc_calibration_predict() adds for concurrency to the pair's
 * prediction of a call on topology t (call->alg as run; AUTO: the pair's
 * choice): over the rounds of its schedule (tc_schedule_call under the
 * segment model of the call's block), *share_ns gets the sum of
 * v_r t_w (s(k_r, m_r) - 1) and *sync_ns the sum of e(q_r) less e(2)
 * (at least 0; the top of the file), where k_r is
 * the number of ranks receiving in round r, m_r its largest transfer, v_r
 * the most bytes one rank receives in it and q_r the ranks it involves
 * (local copies do not count).  Either pointer may be NULL.  Both 0 when
 * the calibration has no concurrency measurement, and for the machine's own
 * algorithms, whose price holds the concurrency.
 * Returns 0, TC_EINVAL, TC_ENOMEM, or what tc_schedule_call() returns.
 * Thread-safe; every pointer is borrowed.
 */
TC_API int tc_calibration_concurrency_ns(const struct tc_calibration *cal, const struct tc_topo *t,
                                         const struct tc_call *call, double *share_ns, double *sync_ns);

/*
 * A calibration as text, to keep it or to price runs with it on another
 * machine (bench/replay_native; lib/calibrate/io.c gives the format: a
 * line "key value" per field, between "topocoll-calibration VERSION" and
 * "end", doubles that read back bit for bit).
 * - tc_calibration_write(): appends one record of cal to f.  Returns 0,
 *   TC_EINVAL (cal or f NULL) or TC_ESYS (a write failed).
 * - tc_calibration_read(): reads the next record of f (lines starting
 *   with '#' and blank lines skipped) into *out, up to its "end" line.  A
 *   field the record lacks is "not measured": NAN, a count of 0, a
 *   hand-off's rank -1; so a record written by an older build, before a
 *   field was added, reads with that field absent.  Returns 0, TC_EINVAL
 *   (f or out NULL; not a record; an unknown field, a value that is not
 *   one of its field's type (a number beyond a double's range among
 *   them), a field given twice or beyond its array's count, a record
 *   without its "end", one the check above refuses (a record without a
 *   line is not refused: it reads as nothing measured); tc_error_detail()
 *   names the line), TC_ENOTSUP (a record of a later version than this
 *   build reads), TC_ENOMEM, TC_ESYS (a read failed, as of a directory:
 *   tc_error_detail() says why).  *out is written only on success.
 * Thread-safe for distinct files; cal is borrowed.
 */
TC_API int tc_calibration_write(const struct tc_calibration *cal, FILE *f);
TC_API int tc_calibration_read(FILE *f, struct tc_calibration *out);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_CALIBRATE_H */
