/* SPDX-License-Identifier: MIT */
/*
 * topocoll/team.h - teams of ranks: creating a team over a topology,
 * running an SPMD function on its ranks (tc_run) or attaching threads the
 * program already has (tc_attach), logical time, aborts and the watchdog,
 * statistics.  Included by <topocoll.h>.
 *
 * A team is p virtual processors (ranks) joined by a topology; every directed
 * link of the topology is a lock-free single-producer/single-consumer channel.
 * Ranks are threads: either the library spawns and pins them (tc_run) or
 * threads the program already has attach to a rank each (tc_attach).
 *
 * A struct tc_proc belongs to the thread running that rank: every call
 * taking a proc must be made from that thread.  Calls on different procs
 * run concurrently.  Team-level calls are thread-safe where stated.
 */
#ifndef TOPOCOLL_TEAM_H
#define TOPOCOLL_TEAM_H

#include <stddef.h>
#include <stdint.h>

#include "topocoll/export.h"
#include "topocoll/model.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tc_topo;

struct tc_team;
struct tc_proc;

/* How a rank waits for a peer. */
enum tc_wait_policy {
	TC_WAIT_AUTO = 0, /* spin then block when ranks <= CPUs (a sender whose
	                     long single-copy message is being copied spins
	                     until the copy must be over); yield then block
	                     when ranks outnumber CPUs (never spins then) */
	TC_WAIT_SPIN,     /* busy-poll only (lowest latency, burns the CPU) */
	TC_WAIT_YIELD,    /* sched_yield() between polls, never sleeps */
	TC_WAIT_BLOCK,    /* sleep on a futex at once */
};

/*
 * How tc_run runs the ranks (docs/fibres.md).
 * Threads: one pinned kernel thread per rank.  Fibres: one pinned kernel
 * thread per CPU of the process's affinity set, each running its ranks
 * (a block of consecutive ranks per CPU, for good) as user-level contexts of stack_bytes
 * each; a rank that waits switches to its CPU's next ready rank in user
 * space (tens of ns, no system call when both are fibres of one CPU).
 * The environment variable TC_EXEC=threads|fibres|auto replaces the
 * config's TC_EXEC_AUTO (and only that: a team that asks for threads or
 * fibres gets them), so that any program and test can run either way.
 * Results, logical clocks and the API are the same either way.
 *
 * On fibres, a call that blocks the kernel thread without the library
 * seeing it (sleep, blocking I/O, a pthread or futex wait, a busy loop that
 * waits for another rank) blocks every other rank of its CPU until it
 * returns, and deadlocks when it waits for one of them: let the others run
 * with tc_yield(), synchronise with the library (tc_barrier, messages).
 */
enum tc_exec {
	TC_EXEC_AUTO = 0, /* fibres when ranks outnumber the CPUs, else threads */
	TC_EXEC_THREADS,
	TC_EXEC_FIBRES,
};

/* What the links do with the model's times. */
enum tc_mode {
	TC_MODE_NATIVE = 0,   /* channels at full speed; the logical clock is
	                         still kept (modelled time) */
	TC_MODE_EMULATED = 1, /* a rank takes no message before, in wall-clock
	                         time, the model has delivered it (epoch + the
	                         receive's logical completion); a sender runs
	                         on; tc_clock_advance and the end of the SPMD
	                         function wait until epoch + the clock */
};

struct tc_team_config {
	int p;                /* ranks; 0: the topology's node count */
	const char *topology; /* spec such as "ring:8" (topocoll/topo.h);
	                         NULL: "complete:p".  Copied, not kept. */
	enum tc_wait_policy wait;
	uint64_t spin_ns;       /* TC_WAIT_AUTO: spin this long before yielding or
	                         blocking, or longer while a peer copies a long
	                         message of ours (0: the default, see
	                         tc_team_info) */
	uint64_t yield_ns;      /* TC_WAIT_AUTO: yield this long before blocking
	                         (0: the default) */
	int no_pin;             /* non-zero: tc_run does not pin its threads */
	size_t ring_bytes;      /* per channel, rounded up to a power of two
	                         cache lines (0: default, shrinks for large teams) */
	size_t packet_bytes;    /* mu: largest payload per packet (0: default) */
	size_t single_copy_min; /* messages of at least this many bytes are
	                           copied once, straight from the sender's buffer
	                           (0: the default, 1 KiB; SIZE_MAX: always stream).
	                           Collectives use the smaller of this and 1 KiB
	                           (their receives are always posted in time) */
	uint64_t timeout_ms;    /* a wait in which none of the rank's messages,
	                         requests or rounds completes for longer than
	                         this fails with TC_ETIMEDOUT,
	                         reports every rank's state (tc_team_set_watchdog)
	                         and aborts the team (0: wait forever, or
	                         TC_DEBUG_TIMEOUT_MS from the environment; over
	                         584 years: none; a rank that never attached:
	                         attach_timeout_ms) */
	size_t stack_bytes;     /* stack of tc_run threads (0: system default) */
	struct tc_model model;  /* communication model (topocoll/model.h) */
	enum tc_mode mode;
	size_t trace_events;                      /* per rank capacity of the event buffer of
	                         topocoll/trace.h (0: no tracing) */
	int no_mismatch_check;                    /* non-zero: collectives' messages carry no call
	                          signature and nobody looks for another call's
	                          messages (topocoll/coll.h, "Mismatched calls";
	                          a mismatch may then hang or go unnoticed) */
	enum tc_exec exec;                        /* threads or fibres (enum tc_exec; stack_bytes is
	                         then each fibre's stack, 0: 256 KiB) */
	int run_unattached;                       /* non-zero: tc_run runs only the ranks that no
	                         thread has attached (tc_attach), which take part
	                         from their own threads: a team of fibre ranks
	                         and attached kernel threads */
	uint64_t attach_timeout_ms;               /* while a rank of the team has not attached
	                         since the team started (tc_attach: fewer
	                         threads attach than p), a wait that starts
	                         fails with TC_ETIMEDOUT after at most this long
	                         (or timeout_ms if shorter): the watchdog's
	                         report names the missing ranks and the team is
	                         aborted, as for timeout_ms.  Once every rank has
	                         attached, timeout_ms alone applies (to the waits
	                         that start then).  tc_team_config_default: 10000
	                         (10 s); 0: never */
	const struct tc_calibration *calibration; /* this machine's calibration
	                         (topocoll/calibrate.h, tc_model_calibrate), or
	                         NULL.  Copied by tc_team_create, not kept.  On a
	                         native team whose ranks each have a CPU
	                         (tc_team_info.oversubscribed 0), TC_ALG_AUTO
	                         prices every applicable algorithm, the machine's
	                         own (`shm`, `shm_flag`, `shm_tree`) included,
	                         with tc_calibration_predict_placed() on the
	                         team's placement and takes the cheapest
	                         (docs/calibration.md, "AUTO on a calibrated
	                         team"); elsewhere, and with no concurrency
	                         tables (conc_ranks < 2), it is ignored.  Not
	                         passed on to sub-teams.  A calibration that
	                         tc_calibration_read() would refuse, or that
	                         has no line (topocoll/calibrate.h, "the
	                         check"): TC_EINVAL, tc_error_detail() naming
	                         the field */
};

/* Fills cfg with the defaults: every field 0 but the model
 * (tc_model_default) and attach_timeout_ms (10000).  NULL: a no-op. */
TC_API void tc_team_config_default(struct tc_team_config *cfg);

/*
 * Creates a team: parses the topology, allocates one channel per directed
 * link and the per-rank state.  *out is owned by the caller; free it with
 * tc_team_destroy().  p ranges over 1..TC_TOPO_MAX_NODES.
 * Errors: TC_EINVAL (null argument, p != the topology's node count, bad
 * sizes, a model tc_model_check() refuses, stack_bytes below
 * PTHREAD_STACK_MIN; tc_error_detail() names the field and what it
 * should be), TC_ETOPO (bad spec), TC_ELIMIT (checked before
 * allocating: the channels, rings, ranks, trace buffers and the largest
 * collective's schedules would need more memory than is available less a
 * margin, or the threads more than the system allows or their stacks more
 * address space than RLIMIT_AS; tc_error_detail() says which and by how
 * much), TC_ENOMEM.  On every error *out is NULL (out not NULL), so that
 * tc_team_destroy(*out) after a failed create is a no-op.
 * Thread-safety: may run concurrently with calls on other teams.
 */
TC_API int tc_team_create(const struct tc_team_config *cfg, struct tc_team **out);

/* Frees a team and everything it allocated.  NULL is a no-op (0).
 * TC_EBUSY, and the team is left as it was (still valid, not freed), while
 * tc_run is running on it or a rank is attached: tc_detach every rank
 * first (tc_error_detail() says which).  Not thread-safe against other
 * calls on the same team. */
TC_API int tc_team_destroy(struct tc_team *team);

/* What a team resolved its configuration to, and what it costs in memory. */
/*
 * Where a rank runs (tc_team_info.place): its CPU and the machine's
 * structure around it, as hwloc describes the machine [hwloc].  Indices are
 * hwloc's logical ones (0 .. count - 1 in the machine's tree order), except
 * pu (the operating system's CPU number, what the rank is pinned to); -1:
 * unknown (no hwloc).
 */
struct tc_rank_place {
	int pu;      /* CPU (OS index) */
	int core;    /* core */
	int smt;     /* hardware thread within its core: 0 first, 1 its SMT sibling, ... */
	int cache;   /* cache domain: the last-level cache holding the core */
	int numa;    /* NUMA node */
	int package; /* socket */
};

/* Where the placement comes from (tc_team_info.place_source). */
enum tc_place_source {
	TC_PLACE_AFFINITY = 0, /* no hwloc: rank r on the (r mod n)-th CPU of the
	                          affinity set, the structure unknown */
	TC_PLACE_HWLOC = 1,    /* this machine, by hwloc */
	TC_PLACE_HWLOC_XML = 2 /* a machine described by the hwloc XML file named
	                          by TC_HWLOC_XML: reported, not pinned to (the
	                          threads keep this machine's placement) */
};

struct tc_team_info {
	int p;
	long channels;       /* directed links = channels */
	size_t memory_bytes; /* everything the team allocated (a root team:
	                           its sub-teams' too) */
	size_t ring_bytes;   /* per channel */
	size_t packet_bytes; /* mu */
	size_t single_copy_min;
	enum tc_wait_policy wait; /* as configured */
	uint64_t spin_ns;         /* resolved thresholds in force */
	uint64_t yield_ns;
	int cpus;                     /* CPUs in the process's affinity set */
	int oversubscribed;           /* p > cpus */
	int asym_fence;               /* waker side free of fences (membarrier) */
	size_t sched_cache_bytes;     /* the team's schedule cache: bytes held
	                             (schedules, per-rank indices), bounded */
	int sched_cache_entries;      /* distinct calls it holds */
	enum tc_exec exec;            /* resolved: TC_EXEC_THREADS or TC_EXEC_FIBRES */
	size_t fibre_stack_bytes;     /* fibres: each rank's usable stack */
	size_t memory_estimate_bytes; /* what the team and a run of it hold at
	                           most by tc_team_create's estimate, with its
	                           margin: the figure checked against the memory
	                           available (a program's many schedules aside:
	                           sched_cache_bytes) */
	/* Placement (tc_run pins rank r to the (r mod n)-th CPU of this order):
	 * with hwloc, one hardware thread of every core first, cores grouped by
	 * cache domain (compact: consecutive ranks share a cache), the SMT
	 * siblings after all cores; without it the affinity set's order.  The
	 * machine's structure: its counts (0: unknown), each cache level's size
	 * of one instance and number of instances (L1d, L2, L3), and the level
	 * whose caches are the domains (0: none). */
	enum tc_place_source place_source;
	int pus, cores, packages, numa_nodes, cache_domains;
	int cache_domain_level;
	size_t cache_bytes[3];
	int cache_count[3];
	const struct tc_rank_place *place; /* p entries, owned by the team and
	                                      valid until tc_team_destroy() */
};
/* info NULL: nothing is written. */
TC_API void tc_team_get_info(const struct tc_team *team, struct tc_team_info *info);

TC_API int tc_team_size(const struct tc_team *team);
TC_API const struct tc_topo *tc_team_topo(const struct tc_team *team);
TC_API const struct tc_model *tc_team_model(const struct tc_team *team);

/* The SPMD function: runs once per rank, returns 0 or a negative code. */
typedef int (*tc_spmd_fn)(struct tc_proc *proc, void *arg);

/*
 * Spawns p threads, pins rank r to the (r mod n)-th CPU of the placement
 * order of the process's affinity set (tc_team_info.place: cores first,
 * compact by cache domain, SMT siblings last, with hwloc; the affinity set's
 * order without it) unless no_pin, runs fn(proc, arg) on each, joins them all.
 * Returns 0, or the first error a rank returned (in time), tc_error_detail()
 * then saying what that rank's failing call said ("rank R: ...", or "" when
 * it said nothing); a rank that fails aborts the team so that ranks waiting
 * for it return TC_EABORTED instead of hanging.  Errors of its own: TC_EBUSY (already running or ranks attached),
 * TC_ESYS (thread creation failed; the started threads are aborted and joined).
 * Not thread-safe for one team; teams are independent.
 * On fibres (enum tc_exec) it starts one pinned thread per CPU instead, each
 * running a block of consecutive ranks; with run_unattached it runs only the ranks no
 * thread has attached (TC_ENOMEM also possible: the fibres' stacks).
 */
TC_API int tc_run(struct tc_team *team, tc_spmd_fn fn, void *arg);

/*
 * Makes the calling thread rank `rank` of the team (for pthreads or OpenMP
 * threads the program already has).  The thread is not pinned.  The proc is
 * owned by the team and valid until tc_detach().  Errors: TC_ERANK, TC_EBUSY
 * (rank already attached or tc_run in progress), TC_EINVAL; *out is NULL
 * on every error (out not NULL).  Every rank of the team must attach:
 * until all have, waits are bounded by the config's attach_timeout_ms
 * (10 s by default), after which the waiting rank gets TC_ETIMEDOUT, the
 * others TC_EABORTED, and the watchdog's report names the ranks that never
 * attached.
 * Thread-safety: different ranks may attach concurrently.
 */
TC_API int tc_attach(struct tc_team *team, int rank, struct tc_proc **out);
/* Gives the rank back; every request must be complete.  TC_EPENDING
 * otherwise (the rank stays attached), unless the team was aborted: its
 * requests are then dropped (no peer reads their buffers once this
 * returns).  TC_EINVAL when the calling thread is not the one that attached
 * the rank (a second detach, another thread's, a rank of tc_run). */
TC_API int tc_detach(struct tc_proc *proc);

/* Aborts the team: every rank waiting in the library returns TC_EABORTED,
 * and so does every later call that would wait, until the team starts
 * again (tc_run, or the first tc_attach while no rank is attached: see
 * "Starting" below).  Thread-safe. */
TC_API void tc_team_abort(struct tc_team *team);

/* The proc of the rank running on the calling thread or fibre (a rank of
 * tc_run, or one the thread attached with tc_attach), for code that cannot
 * have it passed down; NULL on any other thread (after tc_detach, or when
 * the SPMD function has returned).  Thread-safe: each thread or fibre gets
 * its own. */
TC_API struct tc_proc *tc_self(void);

TC_API int tc_rank(const struct tc_proc *proc);
TC_API int tc_size(const struct tc_proc *proc);
TC_API struct tc_team *tc_proc_team(const struct tc_proc *proc);

/* ---------------------------------------------------------------------
 * Logical time (lib/model/clock.h has the rules).  Each rank's clock starts
 * at 0 when tc_run starts (or at tc_attach) and advances with every message
 * by the team's model; in emulated mode a rank completing a receive waits
 * in wall-clock time until epoch + its clock (see enum tc_mode).
 */

/* The calling rank's logical clock, in picoseconds. */
TC_API tc_time_t tc_clock(const struct tc_proc *proc);
/* Charges ns nanoseconds of computation to the rank's clock (and, emulated,
 * waits them out; an abort cuts the wait short: TC_EABORTED).  TC_EINVAL
 * for a negative or non-finite ns or one over 1e15; TC_EOVERFLOW (clock
 * unchanged) when the clock would pass 2^63 - 1 ps (about 106 days). */
TC_API int tc_clock_advance(struct tc_proc *proc, double ns);

/* What the last tc_run measured. */
struct tc_run_info {
	uint64_t wall_ns;      /* from the common start (epoch) to the last rank's end */
	tc_time_t makespan_ps; /* largest final logical clock over the ranks */
	int mode;              /* enum tc_mode */
};
/* out NULL: nothing is written. */
TC_API void tc_team_last_run(const struct tc_team *team, struct tc_run_info *out);

/* Neighbours of the calling rank, sorted: returns the degree and sets *nbrs
 * (NULL: the degree only, as tc_topo_neighbors) to an array that belongs to
 * the team.  TC_EINVAL for proc NULL. */
TC_API int tc_neighbors(const struct tc_proc *proc, const int **nbrs);

/* ---------------------------------------------------------------------
 * Reliability: aborts, restarts, the watchdog (README "Reliability");
 * cancelling a request: tc_cancel in topocoll/p2p.h.
 *
 * After an abort (a rank failed, a wait timed out, tc_team_abort) every
 * wait of every rank returns TC_EABORTED or TC_ETIMEDOUT promptly: tc_wait,
 * tc_waitall, tc_test (which then sets *done = 1: the request is dead, its
 * buffer no longer touched), the blocking calls, collectives (forwarding
 * ranks included) and emulated-mode sleeps.  An abort lasts until the team
 * starts again (below).
 *
 * Starting: every start gives a team as tc_team_create made it, whatever
 * the previous run left, as a new MPI job starts clean: the channels are
 * emptied (a message no rank received in one run is dropped, never
 * delivered in the next), queued requests dropped, every rank's collective
 * call sequence restarts at 0, the abort is cleared.  A team starts when
 * tc_run starts (with run_unattached and ranks attached, the run joins the
 * attached ranks' start instead) and at a tc_attach while no rank is
 * attached (an OpenMP parallel region whose threads attach and detach is a
 * run); a rank that detaches and attaches again while another rank stays
 * attached rejoins the same run, its messages kept.  Never at the end of a
 * run, so a tc_team_abort from another thread cannot race with the reset:
 * it aborts the run in progress or, between runs, nothing (the next start
 * clears it).  Leave nothing in flight at the end of a run: a message not
 * received is lost.
 */

/*
 * The watchdog: when a wait of some rank exceeds the team's timeout_ms, that
 * rank calls fn(arg, report) once per run, before the team is aborted, with
 * a report of every rank's state (the call and algorithm it is in, the
 * round, the peer and link it waits on, the bytes outstanding), one line per
 * rank; the text is valid during the call only.  fn runs on the rank's
 * thread and must not call the library on that team.  Default (fn NULL):
 * the report goes to stderr.  The environment variable TC_DEBUG_TIMEOUT_MS
 * sets timeout_ms for every team whose configuration left it 0.  Call
 * between runs (not thread-safe against a running team).
 */
typedef void (*tc_watchdog_fn)(void *arg, const char *report);
TC_API void tc_team_set_watchdog(struct tc_team *team, tc_watchdog_fn fn, void *arg);

/* ---------------------------------------------------------------------
 * Statistics.  Per proc: read from the rank's own thread, or after tc_run
 * returned / the rank detached.  Team totals: same rule for every rank.
 */
struct tc_stats {
	uint64_t msgs_sent, bytes_sent;
	uint64_t msgs_recv, bytes_recv;
	uint64_t packets_sent;   /* channel packets (a message is >= 1 packet) */
	uint64_t single_copy;    /* messages moved by the single-copy path */
	uint64_t waits_blocked;  /* times the rank slept on its futex */
	uint64_t rounds;         /* collective rounds executed */
	uint64_t transfers_sent; /* collective transfers sourced (end to end) */
	uint64_t transfers_recv; /* collective transfers received (end to end) */
	uint64_t forwarded;      /* routed transfers forwarded (hops through us) */
	uint64_t hops;           /* links crossed by the transfers we sourced */
	tc_time_t busy_ps;       /* logical time our ports spent sending and
	                            receiving (L(m) each) and combining (m t_c) */
};
/* The rank's and the team's totals into *out (out NULL: nothing is written). */
TC_API void tc_proc_stats(const struct tc_proc *proc, struct tc_stats *out);
TC_API void tc_team_stats(const struct tc_team *team, struct tc_stats *out);
TC_API void tc_proc_stats_reset(struct tc_proc *proc);

/* ---------------------------------------------------------------------
 * Sub-teams (docs/subteams.md): teams of some of a team's ranks, made by a
 * call every rank of the team makes, as MPI_Comm_split makes
 * communicators.  A sub-team is a team of its own: its ranks numbered
 * 0..k-1, its topology, its channels (one per link of its topology), its
 * collective call sequence and mismatch signatures, its schedule cache.
 * So collectives on different sub-teams, and on a sub-team and its parent,
 * interleave freely: a rank may make a row's broadcast, then a column's
 * reduction, then one on the whole team, in any order that each team's
 * ranks agree on.
 *
 * A sub-team's proc is run by the thread or fibre of the parent's rank it
 * stands for (sub-teams of fibre and thread teams alike), and every call
 * taking it must be made from there.  Its topology is the one the parent
 * induces on its ranks (sub-team rank order): the links are the parent's
 * links between them, named when they form a topology of topocoll/topo.h
 * (a row of a torus in row order is a ring, of a mesh a chain, a sub-cube
 * of a hypercube in rank order a hypercube, a set of a complete graph a
 * complete graph); otherwise, or when the caller names a topology, links
 * that are not links of the parent are links of the sub-team all the same.
 *
 * The model: a sub-team keeps the parent's model, mode, rings, packet and
 * single-copy sizes, waiting policy, threads or fibres, timeout, mismatch
 * check and watchdog (no trace buffers).  Each of its links stands for the
 * parent's route between the parent ranks of its ends and is charged as
 * that route: a link of the parent as one link, so the sub-teams the
 * parent induces (rows, columns, sub-cubes) are charged exactly as the
 * parent's links; any other link (a general subset's complete graph, a
 * named topology's extra links) as the parent's hops between its ends, h
 * (t_s + m t_w) under store-and-forward, t_s + m t_w + h t_h under
 * cut-through, in the logical clock, in emulated mode's waits, in
 * point-to-point calls and in tc_predict_call on the sub-team's topology
 * (tc_team_topo), which then reports no closed form (formula_ns NAN).  Two
 * of its messages crossing one link of the parent at once are not charged
 * for it (the model charges no contention).  Its port resources are its
 * own (its messages and the parent's do not queue for one port), and so
 * are its statistics (tc_proc_stats, tc_team_stats; hops counts the
 * parent's links).  The rank's logical clock is one: a collective on a
 * sub-team starts from the rank's clock and leaves it where the call ended
 * (tc_clock of either proc); a point-to-point call on a sub-team's proc
 * advances that proc's clock, which the rank's clock takes at the proc's
 * next collective.
 *
 * Lifetime: a sub-team lives until its ranks free it (tc_team_free) or its
 * root team (the one tc_team_create made) is destroyed, across runs: every
 * start of the root resets its sub-teams as it resets itself (channels
 * emptied, sequences at 0, abort cleared).  An abort of a sub-team aborts
 * its root and every sub-team of it, and the other way round; a rank whose
 * SPMD function returns is seen as returned on its sub-teams too.
 * tc_run, tc_attach and tc_team_destroy refuse a sub-team (TC_EINVAL).
 */

/* A colour for tc_team_split: the rank joins no sub-team (*out = NULL). */
#define TC_UNDEFINED (-32766)

/*
 * Every rank of proc's team calls it (a collective over the team): the
 * ranks of equal colour (>= 0) form a sub-team, ordered by key, ties by
 * their rank in the team; *out is the calling rank's proc in it (owned by
 * the sub-team), or NULL with colour TC_UNDEFINED.  topology: NULL for
 * the one the team induces (above), or a spec of k nodes (topocoll/topo.h,
 * a full spec or a family such as "ring") that every rank of the colour
 * names alike.  The ranks exchange their colour, key and topology with an
 * allgather of the team (a call of its own: mismatch detection tells it
 * from a user's tc_allgather), and one rank of each colour makes the
 * sub-team.
 * Errors, the same on every rank: TC_EINVAL (out NULL, a colour below 0
 * other than TC_UNDEFINED, ranks of one colour naming different
 * topologies, ranks making different splits; the rank at fault gets its
 * own code, the others TC_EINVAL naming it), TC_ETOPO (a bad spec), and
 * what tc_team_create returns for a sub-team (TC_EINVAL when the spec has
 * not k nodes, TC_ELIMIT, TC_ENOMEM); tc_error_detail() says which rank
 * and colour.  A rank that makes another call instead: TC_EMISMATCH, as
 * for any mismatched collective (topocoll/coll.h); one that never calls
 * it: TC_ETIMEDOUT after the team's timeout_ms, the watchdog's report
 * naming it.  On an error no sub-team is left to free, and *out is NULL
 * (out not NULL; also for tc_team_split_dims and tc_team_dup).
 */
TC_API int tc_team_split(struct tc_proc *proc, int colour, int key, const char *topology,
                         struct tc_proc **out);

/*
 * The sub-teams of a mesh, torus or hypercube that vary along the
 * dimensions of the bit mask keep and hold the others fixed, in rank
 * order: on a 2-D mesh or torus (row-major, topocoll/topo.h), keep = 2
 * gives the rows (the last dimension varies), keep = 1 the columns; on
 * hypercube:D, bit i of keep lets bit i of the rank vary (sub-cubes:
 * hypercube:popcount(keep)).  Every rank of the team calls it with the
 * same keep.  Errors: TC_ENOTSUP (another kind of topology), TC_EINVAL
 * (keep 0 or naming a dimension the topology lacks, keep differing
 * between ranks), and tc_team_split's.
 */
TC_API int tc_team_split_dims(struct tc_proc *proc, unsigned keep, struct tc_proc **out);

/* Every rank of proc's team calls it: a sub-team of the same ranks, rank
 * order and topology, with a context of its own (its collectives never
 * match the team's).  Errors: tc_team_split's. */
TC_API int tc_team_dup(struct tc_proc *proc, struct tc_proc **out);

/*
 * Called by the ranks members[0..n) of proc's team (distinct; the
 * sub-team's rank r is members[r]) and by no other rank: a sub-team of
 * them over the topology the team induces on them (as tc_team_split's),
 * *out the calling rank's proc in it.  The members do not wait for one
 * another: the first to call makes the sub-team, the others join it.  tag
 * (>= 0) tells apart groups of the same members made at the same time:
 * the k-th call of a rank with given members and tag joins the k-th
 * sub-team made with them (MPI_Comm_create_group's meaning).  Freed by
 * tc_team_free, as any sub-team.  Errors, of the calling rank alone:
 * TC_EINVAL (out NULL, n < 1 or over the team's size, members NULL, a rank
 * twice, the calling rank not among them, tag < 0), TC_ERANK (a member out
 * of range), and what making a sub-team returns (TC_ELIMIT, TC_ENOMEM);
 * tc_error_detail() says which.  Members that give different lists or
 * tags make different sub-teams (MPI calls it erroneous): their calls on
 * them then fail as mismatched or time out.
 */
TC_API int tc_team_create_group(struct tc_proc *proc, const int *members, int n, int tag,
                                struct tc_proc **out);

/*
 * Every rank of a sub-team calls it with its proc there (a collective over
 * the sub-team: a barrier, then the last rank to leave frees it): the
 * sub-team and the sub-teams made from it are freed; none of their procs
 * may be used afterwards.  Errors: TC_EINVAL (NULL, or a proc of a root
 * team: tc_team_destroy), the barrier's (TC_EABORTED, TC_ETIMEDOUT,
 * TC_EMISMATCH): the sub-team is then left to its root's tc_team_destroy.
 */
TC_API int tc_team_free(struct tc_proc *proc);

/* The team a sub-team was made from (NULL for a root team), and the rank
 * there of the sub-team's rank (TC_ERANK when out of range; a root team:
 * rank itself). */
TC_API struct tc_team *tc_team_parent(const struct tc_team *team);
TC_API int tc_team_parent_rank(const struct tc_team *team, int rank);

/* Lets other ranks run: on fibres, the calling rank's CPU runs its other
 * ready ranks first (returns at once when there is none); a kernel thread
 * calls sched_yield().  For loops that wait for something outside the
 * library (see enum tc_exec).  From the rank's own thread only. */
TC_API void tc_yield(struct tc_proc *proc);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_TEAM_H */
