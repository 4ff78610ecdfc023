/* SPDX-License-Identifier: MIT */
/*
 * topocoll.h - the one public header of topocoll.
 *
 * A team is p virtual processors (ranks) joined by a topology; every directed
 * link of the topology is a lock-free single-producer/single-consumer channel.
 * Ranks are threads: either the library spawns and pins them (tc_run) or
 * threads the program already has attach to a rank each (tc_attach).
 *
 * Conventions (see also topocoll/error.h):
 *  - 0 is success, a negative TC_E* code is an error.
 *  - Buffers passed to a call are borrowed for that call and never kept,
 *    except the buffers of tc_isend/tc_irecv, borrowed until the request
 *    completes (tc_wait, tc_waitall or tc_test reporting done).
 *  - A struct tc_proc belongs to the thread running that rank: every call
 *    taking a proc must be made from that thread.  Calls on different procs
 *    run concurrently.  Team-level calls are thread-safe where stated.
 */
#ifndef TOPOCOLL_H
#define TOPOCOLL_H

#include <stddef.h>
#include <stdint.h>

#include "topocoll/calibrate.h"
#include "topocoll/coll.h"
#include "topocoll/error.h"
#include "topocoll/model.h"
#include "topocoll/topo.h"
#include "topocoll/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TC_VERSION_STRING "0.1.0"

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
	uint64_t spin_ns;     /* TC_WAIT_AUTO: spin this long before yielding or
	                         blocking, or longer while a peer copies a long
	                         message of ours (0: the default, see
	                         tc_team_info) */
	uint64_t yield_ns;    /* TC_WAIT_AUTO: yield this long before blocking
	                         (0: the default) */
	int no_pin;           /* non-zero: tc_run does not pin its threads */
	size_t ring_bytes;    /* per channel, rounded up to a power of two
	                         cache lines (0: default, shrinks for large teams) */
	size_t packet_bytes;  /* mu: largest payload per packet (0: default) */
	size_t single_copy_min; /* messages of at least this many bytes are
	                           copied once, straight from the sender's buffer
	                           (0: the default, 1 KiB; SIZE_MAX: always stream).
	                           Collectives use the smaller of this and 1 KiB
	                           (their receives are always posted in time) */
	uint64_t timeout_ms;  /* a wait longer than this fails with TC_ETIMEDOUT
	                         and aborts the team (0: wait forever) */
	size_t stack_bytes;   /* stack of tc_run threads (0: system default) */
	struct tc_model model; /* communication model (topocoll/model.h) */
	enum tc_mode mode;
	size_t trace_events;  /* per rank capacity of the event buffer of
	                         topocoll/trace.h (0: no tracing) */
};

/* Fills cfg with the defaults (every field 0 or its default). */
void tc_team_config_default(struct tc_team_config *cfg);

/*
 * Creates a team: parses the topology, allocates one channel per directed
 * link and the per-rank state.  *out is owned by the caller; free it with
 * tc_team_destroy().  p ranges over 1..TC_TOPO_MAX_NODES.
 * Errors: TC_EINVAL (null argument, p != the topology's node count, bad
 * sizes), TC_ETOPO (bad spec), TC_ELIMIT (checked before allocating: the
 * channels and ranks would need more memory than is available, or the
 * threads more than the system allows or their stacks more address space
 * than RLIMIT_AS; tc_error_detail() says which and by how much), TC_ENOMEM.
 * Thread-safety: may run concurrently with calls on other teams.
 */
int tc_team_create(const struct tc_team_config *cfg, struct tc_team **out);

/* Frees a team.  No rank may be running or attached.  NULL is a no-op. */
void tc_team_destroy(struct tc_team *team);

/* What a team resolved its configuration to, and what it costs in memory. */
struct tc_team_info {
	int p;
	long channels;          /* directed links = channels */
	size_t memory_bytes;    /* everything the team allocated */
	size_t ring_bytes;      /* per channel */
	size_t packet_bytes;    /* mu */
	size_t single_copy_min;
	enum tc_wait_policy wait; /* as configured */
	uint64_t spin_ns;       /* resolved thresholds in force */
	uint64_t yield_ns;
	int cpus;               /* CPUs in the process's affinity set */
	int oversubscribed;     /* p > cpus */
	int asym_fence;         /* waker side free of fences (membarrier) */
	size_t sched_cache_bytes; /* the team's schedule cache: bytes held
	                             (schedules, per-rank indices), bounded */
	int sched_cache_entries;  /* distinct calls it holds */
};
void tc_team_get_info(const struct tc_team *team, struct tc_team_info *info);

int tc_team_size(const struct tc_team *team);
const struct tc_topo *tc_team_topo(const struct tc_team *team);
const struct tc_model *tc_team_model(const struct tc_team *team);

/* The SPMD function: runs once per rank, returns 0 or a negative code. */
typedef int (*tc_spmd_fn)(struct tc_proc *proc, void *arg);

/*
 * Spawns p threads, pins rank r to the (r mod n)-th CPU of the process's
 * affinity set (unless no_pin), runs fn(proc, arg) on each, joins them all.
 * Returns 0, or the first error a rank returned (in time); a rank that fails
 * aborts the team so that ranks waiting for it return TC_EABORTED instead of
 * hanging.  Errors of its own: TC_EBUSY (already running or ranks attached),
 * TC_ESYS (thread creation failed; the started threads are aborted and joined).
 * Not thread-safe for one team; teams are independent.
 */
int tc_run(struct tc_team *team, tc_spmd_fn fn, void *arg);

/*
 * Makes the calling thread rank `rank` of the team (for pthreads or OpenMP
 * threads the program already has).  The thread is not pinned.  The proc is
 * owned by the team and valid until tc_detach().  Errors: TC_ERANK, TC_EBUSY
 * (rank already attached or tc_run in progress), TC_EINVAL.
 * Thread-safety: different ranks may attach concurrently.
 */
int tc_attach(struct tc_team *team, int rank, struct tc_proc **out);
/* Gives the rank back; every request must be complete.  TC_EPENDING
 * otherwise (the rank stays attached). */
int tc_detach(struct tc_proc *proc);

/* Aborts the team: every rank waiting in the library returns TC_EABORTED,
 * and so does every later call that would wait.  Thread-safe. */
void tc_team_abort(struct tc_team *team);

int tc_rank(const struct tc_proc *proc);
int tc_size(const struct tc_proc *proc);
struct tc_team *tc_proc_team(const struct tc_proc *proc);

/* ---------------------------------------------------------------------
 * Logical time (lib/model/clock.h has the rules).  Each rank's clock starts
 * at 0 when tc_run starts (or at tc_attach) and advances with every message
 * by the team's model; in emulated mode a rank completing a receive waits
 * in wall-clock time until epoch + its clock (see enum tc_mode).
 */

/* The calling rank's logical clock, in picoseconds. */
tc_time_t tc_clock(const struct tc_proc *proc);
/* Charges ns nanoseconds of computation to the rank's clock (and, emulated,
 * waits them out).  TC_EINVAL for a negative or non-finite ns. */
int tc_clock_advance(struct tc_proc *proc, double ns);

/* What the last tc_run measured. */
struct tc_run_info {
	uint64_t wall_ns;       /* from the common start (epoch) to the last rank's end */
	tc_time_t makespan_ps;  /* largest final logical clock over the ranks */
	int mode;               /* enum tc_mode */
};
void tc_team_last_run(const struct tc_team *team, struct tc_run_info *out);

/* Neighbours of the calling rank, sorted; the array belongs to the team. */
int tc_neighbors(const struct tc_proc *proc, const int **nbrs);

/* ---------------------------------------------------------------------
 * Point-to-point between neighbours.  Messages between two ranks are
 * delivered in the order they were sent (per directed link, FIFO); there are
 * no tags.  Sizes range over 0..TC_MAX_MESSAGE bytes.
 *
 * Errors common to every call: TC_ERANK (peer out of range), TC_ESELF (peer
 * is the caller), TC_ENOTNEIGHBOR (no link to the peer), TC_ENULLBUF (NULL
 * buffer with a non-zero size), TC_EOVERFLOW (size above TC_MAX_MESSAGE),
 * TC_EABORTED, TC_ETIMEDOUT.  On any of these nothing was sent or received.
 */
#define TC_MAX_MESSAGE ((size_t)1 << 48)

/* Request for a nonblocking call: storage owned by the caller, valid and
 * unmoved from tc_isend/tc_irecv until it completes.  Fields are private. */
typedef struct tc_request {
	struct tc_request *next;
	const void *sbuf;
	void *rbuf;
	size_t bytes;    /* send: message size; receive: capacity */
	size_t moved;    /* bytes pushed or copied so far */
	size_t received; /* receive: size of the message */
	int64_t clock;   /* arrival time (logical, ps) of the message */
	int64_t done_at; /* send: when the sender's port is done (logical, ps) */
	int hops;        /* links the message crosses */
	int peer;
	int nbr;
	int kind;
	int state;
	int status;
	int clocked;     /* applied to the rank's logical clock */
	int tag;         /* what the message belongs to (user or a collective) */
	int single_copy; /* send: by single copy rather than streamed */
	_Atomic int rndv_done; /* single copy: set by the receiver */
	/* Internal (lib/sched receives): takes a single-copy message straight
	 * from the sender's buffer instead of copying it to rbuf. */
	void (*deliver)(struct tc_request *req, const void *src, size_t bytes);
	void *deliver_ctx;
} tc_request;

/* Blocking send: returns when buf may be reused (the message is in the
 * channel or, for a single-copy message, copied out by the receiver). */
int tc_send(struct tc_proc *proc, int dst, const void *buf, size_t bytes);

/* Blocking receive of the next message from src into buf (capacity cap).
 * *received (may be NULL) gets its size.  TC_ETRUNCATE when the message is
 * larger than cap: nothing is written to buf, the message stays queued, and
 * *received gets its size so that a larger buffer can take it. */
int tc_recv(struct tc_proc *proc, int src, void *buf, size_t cap, size_t *received);

/* Sends to dst and receives from src at once (no deadlock when two ranks
 * exchange, whatever the sizes). */
int tc_sendrecv(struct tc_proc *proc, int dst, const void *sbuf, size_t sbytes, int src,
                void *rbuf, size_t rcap, size_t *received);

/* Nonblocking variants: start the transfer and return; complete with
 * tc_wait/tc_waitall/tc_test.  The argument errors above are returned at
 * once (and the request is not started). */
int tc_isend(struct tc_proc *proc, int dst, const void *buf, size_t bytes, tc_request *req);
int tc_irecv(struct tc_proc *proc, int src, void *buf, size_t cap, tc_request *req);

/* Waits for one request; returns its status (0, TC_ETRUNCATE, ...).  For a
 * receive, *received (may be NULL) gets the message size. */
int tc_wait(struct tc_proc *proc, tc_request *req, size_t *received);
/* Waits for n requests; returns 0 or the first non-zero status. */
int tc_waitall(struct tc_proc *proc, int n, tc_request *reqs);
/* Makes progress; *done = 1 when req has completed (then its status is
 * returned as by tc_wait). */
int tc_test(struct tc_proc *proc, tc_request *req, int *done);

/* ---------------------------------------------------------------------
 * Statistics.  Per proc: read from the rank's own thread, or after tc_run
 * returned / the rank detached.  Team totals: same rule for every rank.
 */
struct tc_stats {
	uint64_t msgs_sent, bytes_sent;
	uint64_t msgs_recv, bytes_recv;
	uint64_t packets_sent; /* channel packets (a message is >= 1 packet) */
	uint64_t single_copy;  /* messages moved by the single-copy path */
	uint64_t waits_blocked; /* times the rank slept on its futex */
	uint64_t rounds;         /* collective rounds executed */
	uint64_t transfers_sent; /* collective transfers sourced (end to end) */
	uint64_t transfers_recv; /* collective transfers received (end to end) */
	uint64_t forwarded;      /* routed transfers forwarded (hops through us) */
	uint64_t hops;           /* links crossed by the transfers we sourced */
	tc_time_t busy_ps;       /* logical time our ports spent sending and
	                            receiving (L(m) each) and combining (m t_c) */
};
void tc_proc_stats(const struct tc_proc *proc, struct tc_stats *out);
void tc_team_stats(const struct tc_team *team, struct tc_stats *out);
void tc_proc_stats_reset(struct tc_proc *proc);

#ifdef __cplusplus
}
#endif
#endif /* TOPOCOLL_H */
