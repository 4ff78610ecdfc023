/* SPDX-License-Identifier: MIT */
/*
 * lib/core/internal.h - the team and proc structures shared by lib/core and
 * lib/p2p.  Not installed.
 */
#ifndef TC_CORE_INTERNAL_H
#define TC_CORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/chan.h"
#include "core/wait.h"
#include "model/clock.h"
#include "topocoll.h"

/*
 * What moving data costs on a machine of the kind topocoll runs on
 * (DESIGN.md's 2-vCPU VMs, the fits of lib/model/calibrate.c): a
 * collective's one-packet message about 200 ns one way from call to call
 * (the channel's 100-160 ns plus a round's bookkeeping); a byte about
 * 0.15 ns, copied or combined once (single-copy fits 0.05-0.25 ns/B; memcpy
 * of 1-256 MiB in one core 0.02-0.08 ns/B, out of another core's cache
 * 0.10-0.13 ns/B).  Used where the library must guess the machine, not the
 * model: AUTO's price on oversubscribed teams (lib/coll/coll.c) and how
 * long a sender waits for a peer's copy before it sleeps (lib/p2p/p2p.c).
 */
#define TC__MACHINE_TS_NS 200.0
#define TC__MACHINE_TW_NS 0.15

/* n rounded up to whole cache lines. */
static inline size_t tc__line_up(size_t n)
{
	return (n + TC__LINE - 1) / TC__LINE * TC__LINE;
}

/* Request states. */
enum {
	TC__REQ_IDLE = 0,
	TC__REQ_QUEUED,    /* in its port's queue, nothing moved yet */
	TC__REQ_STREAMING, /* some packets moved */
	TC__REQ_RNDV_WAIT, /* send: descriptor posted, receiver copying */
	TC__REQ_DONE,
};
enum { TC__KIND_SEND = 1, TC__KIND_RECV = 2 };
/* Packet kinds: what the message belongs to. */
enum { TC__MSG_USER = 0 };

enum { TC__SCRATCH_SLOTS = 8 };

/* One neighbour as seen by a proc: the two channels and the request queues. */
struct tc__port {
	struct tc__chan *out;  /* this proc -> neighbour */
	struct tc__chan *in;   /* neighbour -> this proc */
	tc_request *sq_head, *sq_tail; /* pending sends, FIFO */
	tc_request *rq_head, *rq_tail; /* pending receives, FIFO */
	int active;            /* listed in proc->active */
	int peer;
};

struct tc_proc {
	struct tc__doorbell db; /* first: its own cache line */
	struct tc_team *team;
	int rank;
	int deg;
	const int *nbrs;       /* sorted neighbour ranks (owned by the topology) */
	struct tc__port *ports; /* deg entries, same order as nbrs */
	int *active;           /* indices of ports with pending requests */
	int nactive;
	int npending_rndv;     /* own sends waiting for a receiver's copy */
	uint64_t spin_until_ns; /* tc__now_ns() before which a wait keeps
	                          spinning while npending_rndv: a peer may still
	                          be copying a long single-copy send of ours
	                          (lib/p2p/p2p.c) */
	_Atomic int rndv_reading; /* inside another rank's buffer (single copy);
	                             see tc__rndv_quiesce() */
	uint64_t nposts;       /* requests posted so far (lib/core/wait.c) */
	_Atomic int attached;
	struct tc_stats stats;
	tc_time_t clock;       /* logical clock, ps */
	tc_time_t *res_free;   /* port resources (lib/model/clock.h) */
	uint64_t wall_end_ns;  /* when the SPMD function returned */
	struct {
		void *p;
		size_t n;
	} scratch[TC__SCRATCH_SLOTS]; /* grow-only buffers for the layers above */
	void *ext;                     /* lib/coll's per-rank state (schedule cache) */
	void (*ext_free)(void *);
	struct tc_event *ev;           /* trace buffer (topocoll/trace.h) */
	int nev;
	uint64_t ev_dropped;
	uint64_t ncalls;               /* collective calls made by this rank */
	const char *last_alg;          /* the last collective (tc_last_coll) */
	int last_rounds;
	tc_time_t last_modelled;
	pthread_t thread;
	int run_err;
};

struct tc_team {
	int p;
	struct tc_topo *topo;
	struct tc_model model;
	struct tc__mps mps;     /* the model in picoseconds */
	bool emulate;
	uint64_t epoch_ns;      /* wall-clock time of logical time 0 */
	struct tc_run_info last_run;
	void *hot_store;        /* every rank's ports, active list and port
	                           resources, each rank's from a line of its own */
	size_t hot_bytes;
	struct tc__chan *chans; /* one per arc, CSR order of the topology */
	long nchans;
	struct tc_proc *procs;
	size_t memory_bytes;
	size_t ring_bytes;
	size_t packet_bytes;    /* mu */
	size_t single_copy_min;
	enum tc_wait_policy wait;
	uint64_t spin_ns, yield_ns;
	uint64_t timeout_ns;
	size_t stack_bytes;
	size_t trace_cap;
	int cpus;
	int *cpu_list;
	bool no_pin;
	bool may_block;         /* some rank may sleep: wakers must check hints */
	bool asym_fence;        /* membarrier on the sleeper side, none on the
	                           waker side (lib/core/wait.h) */
	_Atomic int aborted;
	_Atomic int running;
	_Atomic int first_err;
	tc_spmd_fn fn;
	void *fn_arg;
	pthread_mutex_t gate_mu;  /* emulated start gate (tc_run) */
	pthread_cond_t gate_cv;
	int gate_open;
	/* State the layers above keep per team (the collectives' schedule
	 * cache, lib/coll/cache.c): created under shared_mu by its first
	 * user, freed by shared_free after every rank's ext. */
	pthread_mutex_t shared_mu;
	void *shared;
	void (*shared_free)(void *);
	_Atomic size_t shared_bytes;  /* what it holds (tc_team_get_info) */
	_Atomic int shared_entries;
};

/*
 * Waits until cond(proc, ctx) holds, making progress on every pending
 * request of the proc meanwhile.  Returns 0, TC_EABORTED or TC_ETIMEDOUT.
 * Called only from the proc's own thread.
 */
typedef bool (*tc__cond_fn)(struct tc_proc *proc, void *ctx);
int tc__wait_for(struct tc_proc *proc, tc__cond_fn cond, void *ctx);

/*
 * Raw point-to-point for the layers above (lib/sched): no argument checks, no
 * clock rule (the caller computed the arrival time, and the request is not
 * applied to the clock when it completes); sends go by single copy from
 * tc__coll_single_copy_min() bytes on.  nbr is the neighbour index; tag
 * is carried in the packet header and a receive whose next message has
 * another tag completes with TC_EMISMATCH without consuming it.
 */
void tc__post_send(struct tc_proc *proc, int nbr, const void *buf, size_t bytes, int tag,
                   tc_time_t arrival, tc_request *req);
void tc__post_recv(struct tc_proc *proc, int nbr, void *buf, size_t cap, int tag,
                   tc_request *req);
/* The same, for a message of exactly bytes bytes that the sender sends by
 * single copy (bytes >= the team's single_copy_min): deliver(req, src,
 * bytes) consumes it from the sender's buffer in place of a copy (req's
 * deliver_ctx is ctx).  Any other message completes it with TC_EMISMATCH,
 * left in place. */
void tc__post_recv_direct(struct tc_proc *proc, int nbr, size_t bytes, int tag,
                          void (*deliver)(tc_request *, const void *, size_t), void *ctx,
                          tc_request *req);
/* Messages of the layers above (collectives) from this many bytes on go by
 * single copy: the smaller of the team's threshold and 256 bytes (measured
 * on 2 cores: from about 128 B a descriptor and one pass over the sender's
 * buffer beat streaming through the ring), never when the team streams
 * everything. */
enum { TC__COLL_SINGLE_COPY = 256 };
static inline size_t tc__coll_single_copy_min(const struct tc_team *t)
{
	return t->single_copy_min < TC__COLL_SINGLE_COPY || t->single_copy_min == SIZE_MAX
	               ? t->single_copy_min
	               : TC__COLL_SINGLE_COPY;
}

/*
 * Request-free fast paths for messages of one packet.  tc__send_eager pushes
 * the whole message when its port has no queued send, the message fits one
 * packet and is below single_copy_min, and the ring has room; it then counts
 * it as sent and returns true (false: nothing done, use a request).
 * tc__recv_eager takes the next message of the port when no receive is
 * queued there and that message is one packet with this tag and at most cap
 * bytes: returns 1; 0 when no message is there yet; -1 when the request path
 * must take it (nothing consumed either way).  No clock rule, no argument
 * checks.
 */
/* Polls of a late message on the eager paths before it becomes a request,
 * for teams whose ranks may poll (tc__eager_polls): every rank has a CPU of
 * its own and a policy that spins.  Otherwise one look. */
enum { TC__EAGER_SPINS = 512 };
static inline int tc__eager_polls(const struct tc_team *t)
{
	return t->p <= t->cpus && t->wait != TC_WAIT_BLOCK && t->wait != TC_WAIT_YIELD
	               ? TC__EAGER_SPINS
	               : 1;
}
bool tc__send_eager(struct tc_proc *proc, int nbr, const void *buf, size_t bytes, int tag,
                    tc_time_t arrival, size_t single_copy_min);
int tc__recv_eager(struct tc_proc *proc, int nbr, void *buf, size_t cap, int tag,
                   size_t *received, tc_time_t *arrival);

/* True when req is complete (progress is made by the wait loop). */
bool tc__req_complete(struct tc_proc *proc, tc_request *req);

/* A grow-only scratch buffer of at least bytes bytes, owned by the proc
 * (freed with the team), in whole cache lines of its own; NULL when out of
 * memory.  Contents are kept when it does not grow. */
void *tc__scratch_grow(struct tc_proc *proc, int slot, size_t bytes);
static inline void *tc__scratch(struct tc_proc *proc, int slot, size_t bytes)
{
	if (proc->scratch[slot].n >= bytes && proc->scratch[slot].p)
		return proc->scratch[slot].p;
	return tc__scratch_grow(proc, slot, bytes);
}

/* Appends an event to the proc's trace buffer (no-op when tracing is off). */
static inline void tc__trace(struct tc_proc *proc, const struct tc_event *e)
{
	if (!proc->ev)
		return;
	if ((size_t)proc->nev < proc->team->trace_cap)
		proc->ev[proc->nev++] = *e;
	else
		proc->ev_dropped++;
}

/* Wall-clock ns since the team's epoch. */
static inline uint64_t tc__wall(const struct tc_team *t)
{
	uint64_t n = tc__now_ns();
	return n > t->epoch_ns ? n - t->epoch_ns : 0;
}

/* Emulated mode: waits until epoch + the proc's clock. */
void tc__emulate_sync(struct tc_proc *proc);

/*
 * Abort handshake for single-copy messages.  A receiver reads a sender's
 * buffer only between raising its rndv_reading flag, after which it checks
 * that the team is not aborted (tc__rndv_read_begin), and lowering it once
 * it has set the sender's rndv_done (tc__rndv_read_end).  A sender that
 * leaves the library on an aborted team with single-copy sends still
 * outstanding calls tc__rndv_quiesce(), which waits until no neighbour is
 * inside a buffer; afterwards every receiver sees the abort and no longer
 * reads (store-buffering pair: the receiver's fence against the aborter's,
 * asymmetric where membarrier is available).  So a rank whose collective
 * failed may free its buffers the moment the call returns.
 */
static inline bool tc__rndv_read_begin(struct tc_proc *proc)
{
	/* Relaxed: ordered by the fence below. */
	atomic_store_explicit(&proc->rndv_reading, 1, memory_order_relaxed);
	tc__waker_fence(tc__asym_fence != 0); /* pairs with tc__rndv_quiesce() */
	if (!atomic_load_explicit(&proc->team->aborted, memory_order_relaxed))
		return true;
	atomic_store_explicit(&proc->rndv_reading, 0, memory_order_relaxed);
	return false;
}
static inline void tc__rndv_read_end(struct tc_proc *proc)
{
	/* Release: our reads of the sender's buffer and our store to its
	 * request come before the aborter may see the flag down. */
	atomic_store_explicit(&proc->rndv_reading, 0, memory_order_release);
}
void tc__rndv_quiesce(struct tc_proc *proc);

/* Progress on every port with pending requests (lib/p2p); none once the
 * team is aborted. */
void tc__progress(struct tc_proc *proc);
/* Raise the wait hints of every channel the proc is waiting on (lib/p2p);
 * up == false lowers them again. */
void tc__set_hints(struct tc_proc *proc, bool up);

#endif /* TC_CORE_INTERNAL_H */
