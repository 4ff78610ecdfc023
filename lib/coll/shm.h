/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shm.h - the machine's own algorithms (TC__ALG_SHM, the `shm`
 * and `shm_flag` lines of algorithms.def) run natively: every rank reads
 * what it needs straight out of its peers' buffers, or out of their
 * cache-line flags, instead of receiving messages over the channels.
 *
 * Each of these algorithms has a schedule like any other (one round of
 * direct transfers, two for allreduce `shm`), which the prediction, the
 * simulator's checks and emulated runs use, so their modelled and emulated
 * times mean what they mean for every algorithm.  Only a native run takes
 * the path below (tc__shm_exec, called by lib/coll/coll.c instead of the
 * schedule's executor).
 *
 * The flags.  Every rank owns a slot of two blocks of 128 bytes, one per
 * parity of its collective call number k (proc->ncalls).  Block k & 1
 * carries a step word, published with release order, and the call's data
 * for the readers: the rank's logical clock at the start, the call's
 * signature, its IN and OUT pointers, and up to TC__SHM_INLINE bytes of
 * payload (a small call's data travel in the flag's lines: one cache miss
 * per peer, no copy out of the user's buffers, no wait for the readers).
 * A small bcast's root writes its data, with the step word, clock and
 * signature, into an entry of its ring instead (TC__SHM_RING blocks of the
 * same shape, entry k mod TC__SHM_RING), under the same rule (below), so
 * that a root of back-to-back small broadcasts reads its readers' done
 * words once every few calls rather than at every other one.  A peer
 * waiting for a rank's block of call k also looks, when it has waited
 * long, at that rank's ring entry of call k, and a small bcast's reader
 * at the root's block of call k: a call k there, and none in the word
 * awaited, is another call (TC_EMISMATCH).
 * Behind the p slots every rank owns an area of TC__SHM_AREA bytes per
 * parity, for the allgather, alltoall, gather, scatter and reduce_scatter
 * calls whose published data (m, p m) exceed the flag and whose p m bytes
 * fit there: the rank copies
 * its input into its area of parity k & 1, and the readers copy out of
 * it, so that the call needs no wait for the readers either (they would
 * otherwise read the caller's input buffer, which it may change once the
 * call returns).  The area of a parity is rewritten under the rule of the
 * flag's block of the same parity, below.  So is a rank's slice buffer of
 * that parity (allreduce `shm`, TC__SHM_SLICE): its reduced slice, which
 * the peers copy out of it instead of the rank's OUT.
 * The step word packs 16 bits of the team's start time (0 on a
 * sub-team), 8 bits of the call's signature, k and a phase; every start
 * of the team clears the step and done words (tc__shm_restart), so that a
 * value left by an earlier run never passes (16 bits of a start time
 * repeat once in 65536 runs, and a sub-team kept across runs starts its
 * calls at 0 again); a rank's steps only grow during a run, and "peer reached (k, ph)"
 * is a comparison.  A peer whose step for call k carries another
 * signature makes another call: TC_EMISMATCH, and the team is aborted.
 *
 * When a block may be rewritten: the peers read a rank's block of call L
 * during their own call L only, and every rank stores, at the end of each
 * of these calls, that it is done with it (its `done` word).  A rank
 * rewrites block k & 1 once every peer is done with L, the last call that
 * wrote that block: known without a look where it saw every peer reach a
 * later step (a flat call after L: every peer at (j, 1) is done with every
 * call before j), otherwise read from the peers' done words (a bcast's
 * root, which waits for nobody when the message is small).  No call
 * waits for a peer's later call, so whatever runs in between (other
 * collectives, point-to-point) cannot deadlock it.
 *
 * Waiting: spin, then yield (the team's policy and thresholds); a waiter
 * never parks, since nothing rings a doorbell when a flag changes.  It
 * observes the team's abort and timeout as every wait does.  Not used in
 * emulated mode (the schedule's messages carry the model's delays there).
 * TC_ALG_AUTO takes these algorithms on native teams with a CPU per rank
 * (tc__shm_pick, lib/coll/machine.c; on a team carrying a calibration,
 * where their calibrated price is the lowest, lib/coll/select.c), and the
 * barrier, allgather, alltoall, reduce_scatter and a bcast of at most
 * TC__SHM_INLINE bytes on native teams of fibres with more ranks
 * than CPUs (tc__shm_team); named, they run anywhere their registry line
 * allows (the complete graph), also on oversubscribed teams.
 *
 * The logical clock: every rank's clock becomes the latest start clock it
 * saw (its own and those of the peers it read) plus the schedule's
 * makespan: exact when the ranks enter the call with equal clocks and idle
 * ports, as a prediction assumes; no earlier than the exact clock's start
 * otherwise.
 *
 * Not installed; called by each rank's own thread.
 */
#ifndef TC_COLL_SHM_H
#define TC_COLL_SHM_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/cache.h"

/* Payload bytes a flag's block carries (the rest of its 128 bytes is the
 * step word, clock, signature and pointers). */
#define TC__SHM_INLINE 88u

/* Where that payload starts in the block: the first of its two cache
 * lines holds the step word, clock, signature, pointers and the payload's
 * first 24 bytes. */
#define TC__SHM_DATA_OFF 40u

/* The entries of a rank's ring, the flags of its small broadcasts as
 * root: how many calls ahead of its slowest reader a root of back-to-back
 * small broadcasts may run.  With the two blocks of the flag, a reader of
 * call k - 2 late by one hand-off held the root of call k at every other
 * call (complete:2, bcast of 8 bytes: 300-360 ns a call against 180 for
 * the channels' ring of many packets). */
#define TC__SHM_RING 8

/* The entries after the one it read that a small bcast's reader prefetches
 * (lib/coll/shm_flat.c, tc__shm_bcast). */
#define TC__SHM_RING_AHEAD 2u

/* Bytes of a rank's area of one parity, and the bound on the output of an
 * allgather or alltoall (p m bytes) whose data beyond the flag's travel
 * through the areas rather than the input buffers.  The area saves the
 * wait for every reader, one synchronisation of the team; but its lines,
 * held by the readers of the call before the last, move to the publisher
 * and then to the readers again at every call (a reader copies (p - 1) m
 * bytes out of the areas), where the readers of an unchanged input buffer
 * keep its lines in their caches: a cost that grows with p m while the
 * saving does not.  Measured between two CPUs (complete:2, 9 runs each),
 * alltoall m = 64: 0.66-0.67 us against 0.83-0.87 through IN, m = 512:
 * 0.69-0.78 against 0.84-0.90, m = 768 even, m = 1024 (beyond the bound)
 * 1.05 against 0.93-1.03; allgather m = 512: 0.73-0.76 against 0.84-0.91,
 * m = 1024 0.97-1.08 against 0.90-0.92.  16 lines, below that crossover. */
#define TC__SHM_AREA 1024u

/* allreduce `shm`: the largest slice (bytes) that its owner publishes in
 * its slice buffer of the call's parity, library memory, rather than in
 * its OUT.  The readers then copy out of memory the caller does not own,
 * and the owner returns as soon as it has copied the others' slices,
 * without waiting for its readers (two synchronisations instead of three);
 * the price is one more copy of the slice (buffer to OUT) while it is in
 * the owner's cache, and up to 2 TC__SHM_SLICE bytes per rank.  Measured
 * between two CPUs of a loaded 2-CPU machine (complete:2, 10-12 runs each,
 * median of the runs' medians): 8 KiB 2.42 us against 4.01 through OUT,
 * 64 KiB 27.6 against 31.6, 1 MiB (512 KiB slices) 445 against 496 but
 * within the runs' spread.  64 KiB: a slice a core's L2 keeps. */
#define TC__SHM_SLICE (64u * 1024u)

/* The reductions (reduce_scatter `shm`, allreduce `shm` and `shm_flag`):
 * the most bytes of the peers' operands, (p - 1) times the block each rank
 * reduces, that a rank copies into its own buffer (its stage) as the
 * sweep finds each peer's flag, from the peer after it on, before it
 * combines them in rank order out of that buffer (tc__shm_stages()).
 * Read in rank order out of the peers' buffers, every rank takes its
 * operand out of rank 0's buffer, then all out of rank 1's: a convoy at
 * one core's cache at a time, and none of it while the later flags are
 * awaited.  On 16-vCPU guests the reduce_scatter of 1 KiB blocks took
 * 1.15, 1.47 and 1.66 times the alltoall's (p = 4, 8, 16; 22 runs'
 * medians), which reads as many bytes, staggered, as each flag is found,
 * and writes p - 1 times as many; at p = 2, one peer, 1.01.  The stage
 * costs one copy of the operands into this core's cache: 256 KiB, which
 * an L2 of 512 KiB or more keeps beside the call's own blocks. */
#define TC__SHM_STAGE (256u * 1024u)

/* bcast: the most ranks, and the fewest bytes, at which the root of a
 * message beyond the flag copies part of it into the readers' buffers
 * while they copy the rest out of its own (tc__shm_bcast_cut()), where it
 * would only wait for them.  Measured between two CPUs (a 2-vCPU VM, two
 * pinned threads copying back to back): 1 MiB 24-27 us a call with the
 * reader copying it all, 15-17 with the root copying 40-50% of it; 64 KiB
 * 1.6-1.7 against 1.0-1.1; 16 KiB 0.5 against 0.4; 4 KiB even.  The root's
 * copies, remote writes, took about 1.25 times the reader's remote reads
 * per byte.  The library's bcast with and without it (topocoll run --topo
 * complete:2 --alg shm --calls 20000, four alternating runs, us a call):
 * 16 KiB 0.92-1.01 against 1.06-1.82, 32 KiB 1.34-1.66 against 1.61-1.83
 * (8 KiB, below the bound: 0.79-1.17 either way).  With more readers each
 * one's share of the root shrinks and the root's copies run one after
 * another: 4 ranks, where the root copies about a fifth of each reader's
 * message, is the most it is used for (not measured beyond 2). */
#define TC__SHM_HELP_MAX_P 4
#define TC__SHM_HELP_MIN (16u * 1024u)

/* `shm_tree` (barrier, allreduce): the most ranks of a group, whose first
 * rank (its leader) reads their flags.  8: the cores of a common cache
 * domain (a chiplet's L3, a small socket), so that on such machines the
 * groups are the domains; where the structure is unknown or one domain
 * holds every rank, groups of at most 8 consecutive ranks.  Not measured
 * against other fan-ins on a many-core machine. */
#define TC__SHM_TREE_FANIN 8

/* `shm_tree` allreduce: the largest vector (bytes), a cache line's worth;
 * the leader's result travels in its flag's data, the group's partial
 * result in its area. */
#define TC__SHM_TREE_MAX 64u

struct tc__shm_block {
	alignas(128) _Atomic uint64_t step;
	tc_time_t clock;
	uint64_t sig;
	const void *in;
	void *out; /* allreduce `shm`: where the rank's reduced slice lies */
	unsigned char data[TC__SHM_INLINE];
};
_Static_assert(sizeof(struct tc__shm_block) == 128, "a flag's block is two cache lines");
_Static_assert(offsetof(struct tc__shm_block, data) == TC__SHM_DATA_OFF, "TC__SHM_DATA_OFF");

/* What a rank knows of its peers, kept in its own slot (never read by
 * them), for the run `run`: the last call every peer is known to be done
 * with, and the last call that wrote each block (-1: none).  And, kept
 * across runs, its slice buffer of each parity (allreduce `shm`):
 * slices_cap bytes (at most TC__SHM_SLICE rounded up to a cache line; NULL
 * and 0 until a call needs it), written by this rank, read by the peers
 * through its block, freed with the slots; and its stage, as the slices
 * but never read by the peers. */
struct tc__shm_own {
	alignas(128) uint64_t run;
	int64_t seen_done;
	int64_t last_written[2];
	int64_t ring_written[TC__SHM_RING];
	unsigned char *slices[2];
	size_t slices_cap[2];
	unsigned char *stage; /* the reductions' (TC__SHM_STAGE) */
	size_t stage_cap;
};

struct tc__shm_slot {
	struct tc__shm_block b[2];
	struct tc__shm_block ring[TC__SHM_RING]; /* small bcasts as root */
	struct tc__shm_own own;
	/* The run's bits and 1 + the last call this rank is done with
	 * (written at the end of each of these calls, release). */
	alignas(128) _Atomic uint64_t done;
};
_Static_assert(sizeof(struct tc__shm_slot) % 128 == 0 && TC__SHM_AREA % 128 == 0,
               "the slots and the areas behind them are whole pairs of cache lines");

struct tc_rank_place;

/* A team's state for these algorithms: its flags and `shm_tree`'s groups,
 * derived once from the team's placement when the team first runs a
 * collective, written before any rank reads them and never changed. */
struct tc__shm {
	/* The p slots, zeroed, in whole cache lines, followed by the p ranks'
	 * areas (2 TC__SHM_AREA bytes each, whole cache lines, not cleared:
	 * only read where a call wrote them). */
	struct tc__shm_slot *slots;
	int p;
	/* shm_tree's groups (tc__shm_tree_group() of the placement): group j
	 * is the ranks [lead[j], lead[j + 1]), j < ngroups, lead[ngroups] = p;
	 * group[r] is rank r's. */
	int ngroups;
	int *lead;
	int *group;
};

/* Whether an allgather's or alltoall's blocks of m bytes go into OUT around
 * the caches (lib/base/copy.h): the p m bytes of OUT of every rank that
 * shares a last-level cache (the team's ranks spread evenly over the
 * machine's domains of that cache) exceed it, so that the lines written
 * would leave it before the caller reads them.  Never where the cache is
 * unknown (no hwloc) or the copy cannot stream (TC__COPY_STREAMS 0). */
int tc__shm_streams(const struct tc_team *t, uint64_t m);

/* The state of a team of p ranks placed as place (p entries, or NULL: the
 * structure unknown); NULL when out of memory.  place is read during the
 * call only.  Freed with tc__shm_free(), once no rank runs a call on it
 * (NULL: nothing). */
struct tc__shm *tc__shm_new(int p, const struct tc_rank_place *place);
void tc__shm_free(struct tc__shm *shm);

/* At a start of the team (no rank runs): every flag's step word and done
 * word back to zero, what each rank knows of its peers forgotten.  A
 * flag written in the run before would otherwise pass for one of this
 * run's: a sub-team's run bits are always 0 and its call numbers start
 * again at 0, and a root team's are 16 bits of its start time. */
void tc__shm_restart(struct tc__shm *shm);

/* `shm_tree`: the group [*lo, *hi) of rank r among p.  The ranks are cut
 * into runs of consecutive ranks of one cache domain (place[r].cache,
 * tc_team_info.place), each run into ceil(n / TC__SHM_TREE_FANIN) groups of
 * consecutive ranks whose sizes differ by at most one; where place is NULL,
 * a rank's domain is unknown (< 0) or every rank is in one domain, the
 * whole team is one run (the schedule's groups, which the prediction uses).
 * A group's first rank is its leader.  Pure function; O(p). */
void tc__shm_tree_group(const struct tc_rank_place *place, int p, int r, int *lo, int *hi);

/* Where a native call of these algorithms puts the bytes its readers
 * take, by the rules of lib/coll/shm_flat.c: in the writer's flag (its block's
 * data, TC__SHM_INLINE bytes behind the step word, clock, signature and
 * pointers, or a small bcast's ring entry of the same shape), in its area,
 * or in the caller's buffer (IN, or a slice buffer: allreduce `shm`). */
enum tc__shm_via { TC__SHM_VIA_FLAG, TC__SHM_VIA_AREA, TC__SHM_VIA_IN };

/* How a native call of these algorithms lays out and reads its data, by
 * the rules of lib/coll/shm_flat.c: for the calibrated price
 * (lib/coll/calprice_shm.c). */
struct tc__shm_layout {
	enum tc__shm_via via;
	/* The synchronisations of the team it makes: 1, 2 where the readers
	 * copy out of IN (the owner waits until they are done), 3 for
	 * allreduce `shm` with a slice beyond TC__SHM_SLICE. */
	int syncs;
	/* Reader d's block is block d of the writer's p published (alltoall,
	 * scatter, reduce_scatter); else every reader's is the same. */
	bool per_reader;
	/* The readers take their operands after the sweep of the flags, in
	 * rank order (the reductions, unless staged); else each block as its
	 * flag is found. */
	bool after_sweep;
	/* A reduction's readers copy their operands into their stages as
	 * each flag is found and combine them there (tc__shm_stages()). */
	bool staged;
	/* The bytes of its block a reader copies itself: m, or less where the
	 * writer copies the rest into the reader's buffer at the same time
	 * (a bcast's root, tc__shm_bcast_cut()). */
	uint64_t reader_bytes;
};

/* A bcast of m bytes among p ranks natively, of more than
 * TC__SHM_INLINE bytes: the offset from which the root copies the message
 * into each reader's OUT itself while the readers copy the bytes before it
 * out of its buffer; m where it does not help (more than
 * TC__SHM_HELP_MAX_P ranks, fewer than TC__SHM_HELP_MIN bytes).  A
 * multiple of 64.  Pure function. */
uint64_t tc__shm_bcast_cut(int p, uint64_t m);

/* Whether a reduction in which each rank combines len bytes of every
 * one of p ranks' operands stages them (TC__SHM_STAGE): from p = 3 on (at
 * p = 2 a rank reads one peer, no convoy to avoid), len > 0 and (p - 1)
 * len at most TC__SHM_STAGE, where the team's waiters spin (by default,
 * where its ranks each have a CPU: the run asks it, lib/coll/shm_flat.c,
 * the price assumes it).  Each rank decides for its own operands (its
 * reads are its own).  Pure function. */
static inline bool tc__shm_stages(int p, uint64_t len)
{
	return p >= 3 && len > 0 && (uint64_t)(p - 1) * len <= TC__SHM_STAGE;
}

/* The layout of collective coll run as algorithm alg (its registry name)
 * by p ranks on blocks of m bytes (the call's bytes per rank).  Pure
 * function. */
struct tc__shm_layout tc__shm_layout(enum tc_coll coll, const char *alg, int p, uint64_t m);

struct tc__gen;
struct tc__sched;

/* `shm_tree`'s schedule for vectors of m bytes (m = 0: the barrier's empty
 * messages) over the groups of a team of unknown structure
 * (lib/coll/allreduce/allreduce_shm_tree.c).  0 or TC_ENOMEM. */
int tc__gen_shm_tree(const struct tc__gen *g, struct tc__sched *s, uint64_t m);

/* What a native call takes of its cache entry, copied: a request may
 * outlive the entry (an eviction leaves only the schedule it holds). */
struct tc__shm_call {
	enum tc_coll coll;
	const char *alg; /* the registry's name */
	uint64_t bytes;  /* per rank (the entry's key) */
	uint64_t esize;
	int root;
	int nrounds; /* the schedule's */
	tc_time_t makespan;
};

struct tc__shm_call tc__shm_call_of(const struct tc__centry *e);

/* Runs call (TC__ALG_SHM) natively on the calling rank with the call's
 * buffers io, over the team's state shm (its flags and groups); _exec:
 * entry e's call.  Returns 0, TC_EMISMATCH (the team is aborted),
 * TC_EABORTED, TC_ETIMEDOUT. */
int tc__shm_run(struct tc_proc *proc, const struct tc__shm *shm, const struct tc__shm_call *call,
                const struct tc__exec_io *io);
int tc__shm_exec(struct tc_proc *proc, const struct tc__shm *shm, const struct tc__centry *e,
                 const struct tc__exec_io *io);

/*
 * Nonblocking and persistent calls (lib/coll/shm_step.c).  A call whose
 * every rank publishes its flag once and is done when it has seen every
 * peer's (one round, its data in the flags or the areas: the barrier
 * `shm`, allgather and alltoall up to TC__SHM_AREA bytes of output,
 * reduce_scatter likewise, allreduce `shm_flag` up to TC__SHM_INLINE bytes)
 * runs natively as a request too: tc__shm_req_begin() sets it up, and each
 * tc__shm_req_step() publishes this rank's flag once its block is free
 * and takes the peers' as they come, never waiting.  Other calls of these
 * algorithms run their schedule over the channels as requests.
 */
struct tc__shm_req;

/* Whether call runs natively as a request among p ranks. */
bool tc__shm_steppable(const struct tc__shm_call *call, int p);
/* A request's state, freed with free(); NULL when out of memory. */
struct tc__shm_req *tc__shm_req_new(void);
/* Sets q up for call on proc (its k-th collective call, k = proc->ncalls)
 * with buffers io (read until the call is done); its steps follow. */
int tc__shm_req_begin(struct tc__shm_req *q, struct tc_proc *proc, const struct tc__shm *shm,
                      const struct tc__shm_call *call, const struct tc__exec_io *io);
/* 1 when the call is done (proc->ncalls and its clock moved on), 0 when
 * a peer has yet to publish or to be done with an earlier call, or the
 * error: TC_EMISMATCH (the team aborted).  spin: a wait's step, which
 * looks again at the peer's flag a while before it returns 0, as a
 * blocking call's sweep does (not on fibres, nor on a team whose waits
 * do not spin). */
int tc__shm_req_step(struct tc__shm_req *q, bool spin);

#endif /* TC_COLL_SHM_H */
