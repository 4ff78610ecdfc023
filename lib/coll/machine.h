/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/machine.h - what the machine charges, where TC_ALG_AUTO must
 * price the machine rather than the model: on native teams whose ranks
 * outnumber the CPUs (lib/coll/select.c, tc__machine_score).  The rates are
 * guesses of the machine kind topocoll runs on, not calibrations.
 *
 * Not installed; every function is a pure function of the team's
 * configuration (every rank gets the same answer) and thread-safe.
 */
#ifndef TC_COLL_MACHINE_H
#define TC_COLL_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What moving data costs on a machine of the kind topocoll runs on
 * (DESIGN.md's 2-vCPU VMs, the fits of lib/calibrate/fit.c): a
 * collective's one-packet message about 200 ns one way from call to call
 * (the channel's 100-160 ns plus a round's bookkeeping); a byte about
 * 0.15 ns, copied or combined once (single-copy fits 0.05-0.25 ns/B; memcpy
 * of 1-256 MiB in one core 0.02-0.08 ns/B, out of another core's cache
 * 0.10-0.13 ns/B).  (p2p's spin budget for a peer's copy,
 * TC__RNDV_SPIN_NS_PER_BYTE in lib/p2p/p2p.h, is twice this byte rate.)
 */
#define TC__MACHINE_TS_NS 200.0
#define TC__MACHINE_TW_NS 0.15

/*
 * One wait that gives the CPU away, measured on these VMs with 32 ranks per
 * CPU (p = 64 on 2 CPUs, sched_yield waits): 2.2 us for the yield and the
 * switch alone, 2.6-3.1 us of CPU per context switch in a barrier once the
 * rank's own work (progress, the round's bookkeeping) is counted
 * (dissemination: 828 us of CPU and 270 switches per barrier; linear: 203 us
 * and 78).
 */
#define TC__SWITCH_NS 3000u

/*
 * The same wait on a fibre team (team->exec resolved to TC_EXEC_FIBRES,
 * lib/fibre/runq.h): a rank that waits parks and its CPU switches to its
 * next ready rank in user space (13 ns), and the message that wakes it makes
 * it ready with a store (same CPU) or a push on a lock-free list (another
 * CPU).  Measured (./tools/bench fibres --coll, 2 CPUs, load 1.2-1.5): a
 * token passed round ring:p costs 216-240 ns a hop at p = 8, 16, 64, a
 * linear barrier 284-290 ns per rank and level at p = 8, 16; each includes
 * a message, which AUTO's score prices at TC__MACHINE_TS_NS (200 ns) in its
 * work term already: the wait itself is the rest, about 80 ns.  Priced as
 * the kernel switch is, per rank of a CPU and level, 37 times cheaper.
 * With it AUTO picks the measured best named algorithm, or one within 4%,
 * for barrier and allreduce of 8 bytes on complete:p and hypercube at p = 8,
 * 16, 64 on fibres (three runs), but for complete:8's barrier (dissemination, 1.2x
 * recursive doubling's time: both 3 levels of 8 messages, but
 * dissemination's cross the two CPUs' blocks of ranks 14 times against 8,
 * which this price does not see).  At 100 ns: hypercube on complete:8 and
 * hypercube:3 (1.1-1.2x reduce_bcast); at 3 us (the kernel switch):
 * hypercube on hypercube:6, 3x reduce_bcast's 19.5 us.
 */
#define TC__FIBRE_WAIT_NS 80u

/*
 * What one level of waiting costs the team's wall clock, in ns, as seen by
 * an algorithm's choice (TC_ALG_AUTO).  A level is a step of a schedule's
 * longest chain of dependent waits: a round, or one hop of a routed transfer
 * (each forwarder waits for it).  0 when every rank has its own CPU (a wait
 * spins about a message's time, which the model already charges), in
 * emulated mode (the model's delays are the point) and under TC_WAIT_SPIN.
 * Otherwise ranks outnumber CPUs and a rank that waits gives its CPU away:
 * each level then costs every CPU about one pass over its ranks, each of
 * them switched in and out once, ceil(p / cpus) * TC__SWITCH_NS (kernel
 * threads) or ceil(p / cpus) * TC__FIBRE_WAIT_NS (fibres).  So a
 * schedule of many levels (dissemination: ceil(log2 p)) loses to a flatter
 * one with more, serialised messages (linear: 2 levels).  AUTO adds this to
 * the schedule's price at the machine's rates (tc__machine_score, lib/coll/
 * select.c); on 2 CPUs that picks the linear barrier from p = 5 on and
 * dissemination for p = 3, 4, as measured (p = 4: 6 against 8 us; p = 5: 15
 * against 10 us; p = 64: 420 against 100 us, dissemination first).  Pure
 * function of the team's configuration: every rank gets the same answer.
 * Thread-safe.
 */
struct tc_team;
uint64_t tc__wait_level_ns(const struct tc_team *team);

/* The CPUs a native team's ranks share when they outnumber them, else 0 (a
 * CPU per rank, or emulated: the model's delays are the point).  Where this
 * is not 0, the wall clock is the CPUs' work and TC_ALG_AUTO prices the
 * machine rather than the model (lib/coll/select.c).  Thread-safe. */
int tc__shared_cpus(const struct tc_team *team);

/*
 * The price of concurrency on a native team whose ranks each have a CPU,
 * from a calibration's tables (include/topocoll/calibrate.h, "Concurrency";
 * docs/calibration.md): the public tc_calibration_share(),
 * tc_calibration_sync_ns() and tc_calibration_round_ns() are these, kept
 * here so that the selection (lib/coll) can price rounds without calling
 * up into lib/calibrate.
 * - tc__machine_share(cal, k, m): s(k, m) = max(1, (k/2) B(2, m) / B(k, m))
 *   for k > 2, else 1 (and 1 without the tables or cal NULL); B, the
 *   aggregate copy bandwidth of k copiers, interpolated linearly in k and
 *   in log2 m, clamped at the tables' ends; for k >= 2 the counts from 2
 *   on, their per-copier rates B(k, m) / k first made non-increasing in k
 *   (the least-squares isotonic fit, pooling adjacent violators: a copier
 *   more cannot make each faster, so a rate above a smaller count's is the
 *   measurement's noise);
 * - tc__machine_chain_share(cal, k, m): z(k, m) = max(1, C(k, m) /
 *   C(2, m)) for k > 2, else 1 (and 1 without the chain table or cal
 *   NULL); C the time of a step of a ring of k ranks over the channels,
 *   interpolated in log2 k between the measured rings (clamped), the
 *   ratio interpolated in log2 m between the chain sizes (clamped);
 * - tc__machine_chain_step(cal, k, m): z1(k, m) = max(1, C(k, m) /
 *   (t_s + m t_w)) for k > 2, else 1 (and 1 as above), t_s + m t_w the
 *   pair's one-way message of m bytes under tc_calibration_model() of m,
 *   the ratio interpolated as z's: what a step of a ring costs against
 *   the message the pair's model charges it;
 * - tc__machine_round_excess(cal, q): e(q) = max(0, R(q) - (t_s + 8 t_w)),
 *   R the time of a synchronised round among q ranks (8-byte exchanges,
 *   back to back; q < 2 as 2), interpolated in log2 q, clamped, less the
 *   price of its 8-byte message under tc_calibration_model() of 8 bytes;
 *   0 without the tables;
 * - tc__machine_sync_ns(cal, q): rho(q) = e(q) for q > 2, else 0 (the pair
 *   fit and o_call describe two ranks);
 * - tc__machine_round_ns(cal, seg, k, m, q): one round of k transfers
 *   received at once, the largest of m bytes, among q ranks, under the
 *   pair's model seg (tc_calibration_model() of m):
 *   seg->ts_ns + m seg->tw_ns s(k, m) + rho(q).
 * Pure; thread-safe; the pointers are borrowed.
 */
struct tc_calibration;
struct tc_model;
double tc__machine_share(const struct tc_calibration *cal, int k, size_t bytes);
double tc__machine_chain_share(const struct tc_calibration *cal, int k, size_t bytes);
double tc__machine_chain_step(const struct tc_calibration *cal, int k, size_t bytes);
double tc__machine_round_excess(const struct tc_calibration *cal, int q);
double tc__machine_sync_ns(const struct tc_calibration *cal, int q);
double tc__machine_round_ns(const struct tc_calibration *cal, const struct tc_model *seg, int k,
                            size_t bytes, int q);

/*
 * The pieces of a shared-memory round (the machine's own algorithms,
 * TC__ALG_SHM: the reader copies, so a rank's reads serialise while the
 * readers run at once; lib/calibrate/predict.c prices their schedules):
 * - tc__machine_copy_ns(cal, k, m): the time one of k ranks copying at once
 *   takes to read m bytes another rank has just written, m max(k, 2) /
 *   B(max(k, 2), m) (B(1, m) measures a rank reading its own fresh data,
 *   which no such read does); 0 for m = 0;
 * - tc__machine_combine_ns(cal, k, m): the same for k ranks combining at
 *   once (B_c, combine_bytes_per_ns): reading m bytes another rank has
 *   just written and adding them into m of their own; NAN when the
 *   calibration did not measure it (ncombine 0);
 * - tc__machine_shared_ns(cal, k, m): the same for k ranks copying at once
 *   blocks that another rank has read since their writer wrote them (B_s,
 *   shared_bytes_per_ns): a block of several readers after its first;
 *   NAN when not measured (nshared 0);
 * - tc__machine_r_ns(cal, q): R(q), the time of a synchronised round among
 *   q ranks (q < 2 as 2), interpolated in log2 q and clamped;
 * - tc__machine_flag_ns(cal, q): F(q), the same for a round of cache-line
 *   flags (NAN when the calibration has none: nflag 0);
 * - tc__machine_handoff_ns(cal, q): one cache line's hand-off, the pair's
 *   for q <= 2, else the farthest distance class the machine has;
 * - tc__machine_handoff_class_ns(cal, c): the hand-off of distance class c
 *   (enum tc_calibrate_handoff), or where that class was not measured the
 *   next farther class's that was; NAN when none was.
 * NAN without the tables (or cal NULL).  Pure; thread-safe.
 */
double tc__machine_copy_ns(const struct tc_calibration *cal, int k, size_t bytes);
double tc__machine_combine_ns(const struct tc_calibration *cal, int k, size_t bytes);
double tc__machine_shared_ns(const struct tc_calibration *cal, int k, size_t bytes);
double tc__machine_r_ns(const struct tc_calibration *cal, int q);
double tc__machine_flag_ns(const struct tc_calibration *cal, int q);
double tc__machine_handoff_ns(const struct tc_calibration *cal, int q);
double tc__machine_handoff_class_ns(const struct tc_calibration *cal, int c);

/* The distance class (enum tc_calibrate_handoff) between the CPUs of two
 * ranks placed at a and b: SMT siblings (one core), one cache domain, one
 * package, or across packages (an unknown package: the same); -1 when the
 * placement does not say (a core unknown).  Pure. */
struct tc_rank_place;
int tc__place_class(const struct tc_rank_place *a, const struct tc_rank_place *b);

/*
 * tc_calibration_model() of a calibration already checked
 * (lib/model/calibration.h: a team's, or the public calls' after their
 * check): the model of the segment holding `bytes`; 0, or TC_EINVAL (no
 * line, or a model tc_model_check() refuses).  Thread-safe.
 */
int tc__cal_model(const struct tc_calibration *cal, size_t bytes, struct tc_model *out, int *segment);

/*
 * The calibrated price of a call on topology t (lib/coll/calprice.c; the
 * public tc_calibration_predict() and tc_calibration_predict_placed() are
 * this with the two charges added): in *ns the pair's prediction under the
 * calibrated model, o_call, local copies and the exchange or one-way
 * combine corrections, or, for the machine's own algorithms with the
 * concurrency tables, their shared-memory price (each round's hand-off
 * from place, tc_calibration_predict_placed(); place NULL: unknown; the
 * reductions priced unstaged where `unstaged`, as a team whose waiters do
 * not spin runs them, lib/coll/shm_flat.c); in
 * *share and *sync the concurrency charges of the other schedules (0
 * otherwise); *pr and *segment (either may be NULL) as
 * tc_calibration_predict().  cal is checked already, as for
 * tc__cal_model().  Returns what that returns.  Thread-safe.
 */
struct tc_topo;
struct tc_call;
struct tc_prediction;
int tc__cal_price(const struct tc_calibration *cal, const struct tc_topo *t,
                  const struct tc_call *call, const struct tc_rank_place *place, bool unstaged,
                  struct tc_prediction *pr, int *segment, double *ns, double *share, double *sync);

/* Whether TC_ALG_AUTO takes the machine's own algorithms (TC__ALG_SHM,
 * lib/coll/shm.h) on this team, and which of them:
 *   TC__SHM_CPUS: native, every rank a CPU of its own (not
 *     oversubscribed), a waiting policy that may spin.  There a flag
 *     hand-off costs one cache-line transfer between CPUs and a copy runs
 *     at the memory's speed, while a message through a channel costs a
 *     ring slot's hand-offs and, from the single-copy threshold on, a
 *     descriptor and an acknowledgement besides; waiters spin, so the flags
 *     need no doorbell.  Every collective that has one.
 *   TC__SHM_FIBRES: native, more ranks than CPUs, run as fibres, a policy
 *     other than TC_WAIT_BLOCK.  A waiter yields to its CPU's next fibre
 *     (a switch, no system call), and the ranks of a CPU run one after
 *     another: one synchronisation of the team and each byte copied once
 *     beat the channels' rounds, where every message waits for its
 *     receiver's turn.  Measured on 2 CPUs (bench/peers, complete:p, p = 3,
 *     4, 8, 16, 64): barrier, allgather and alltoall of 8 B to 64 KiB take
 *     0.2-0.85 times the best of AUTO's channel algorithms on the complete
 *     graph, the hypercube and the ring; bcast and reduce_scatter of 64 B
 *     and 64 KiB 0.2-0.82 times (back-to-back calls, p = 8 and 64, one run
 *     each).  With every rank writing its input before each call,
 *     reduce_scatter of 64 KiB still 0.7-0.86 times, but bcast of 64 KiB at
 *     p = 8 1.55 times (the readers copy out of the root's cache): bcast
 *     only where the data travel in the root's ring (TC__SHM_INLINE bytes).
 *     Not allreduce (`shm` 1.6 times `reduce_bcast` on hypercube:6 at
 *     p = 64), nor gather and scatter, which lose at 64 B and p = 8 (1.9-2.5
 *     times) though they win at 64 KiB.
 *   TC__SHM_NONE: otherwise.
 * Thread-safe. */
enum { TC__SHM_NONE, TC__SHM_CPUS, TC__SHM_FIBRES };
int tc__shm_team(const struct tc_team *team);

/* The algorithm AUTO takes for call g on a team where tc__shm_team() is
 * not TC__SHM_NONE (g->shm): the collective's TC__ALG_SHM algorithm that
 * applies, or NULL (none applies, the call needs a rank-ordered algorithm
 * and it is not TC__ALG_ORDERED, or a fibre team's collective is not
 * barrier, allgather, alltoall, reduce_scatter or a bcast of at most
 * TC__SHM_INLINE bytes).  allreduce:
 * `shm_flag` (every rank reduces the whole vector: one or two flag phases)
 * up to TC__SHM_FLAT_MAX bytes, `shm` (slices: three phases, 1/p of the
 * combining each) above.  The one place that decides on a team
 * without a calibration; a team carrying one prices every candidate
 * instead (tc__coll_auto_cal, lib/coll/select.c). */
struct tc__gen;
struct tc__alg;
const struct tc__alg *tc__shm_pick(const struct tc__gen *g, int need_ordered);

#endif /* TC_COLL_MACHINE_H */
