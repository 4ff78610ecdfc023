/* SPDX-License-Identifier: MIT */
/*
 * lib/core/internal.h - the team and proc structures shared by lib/core and
 * the layers above (lib/p2p declares its own calls in lib/p2p/p2p.h).  Not
 * installed.
 */
#ifndef TC_CORE_INTERNAL_H
#define TC_CORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/chan.h"
#include "core/place.h"
#include "core/wait.h"
#include "model/clock.h"

struct tc__runq;
struct tc__sched;      /* lib/sched/sched.h */
struct tc__exec_io;    /* lib/sched/exec.h */
struct tc__p2p_engine; /* lib/p2p/p2p.h */
struct tc__engine_nbc; /* below */
#include "topocoll.h"

/* n rounded up to whole cache lines. */
static inline size_t tc__line_up(size_t n)
{
	return (n + TC__LINE - 1) / TC__LINE * TC__LINE;
}

enum { TC__SCRATCH_SLOTS = 8 };

/* One neighbour as seen by a proc: the two channels and the request queues. */
/* A point-to-point message that a collective's receive took out of the
 * channel to reach the collective message behind it (lib/p2p/p2p.c:
 * point-to-point and collective messages are matched separately), kept
 * for the next point-to-point receive of the port. */
struct tc__req; /* a request's contents: lib/p2p/request.h */
struct tc__aside {
	struct tc__aside *next;
	size_t total;         /* bytes of the message */
	size_t have;          /* streamed: bytes taken so far (< total: more
	                         packets to come, at the channel's head) */
	int64_t clock;        /* its arrival time (logical, ps) */
	struct tc__req *sreq; /* single copy: the sender's request (claimed:
	                         no longer cancellable), else NULL */
	int tag;              /* its point-to-point tag */
	unsigned char data[]; /* streamed: the message */
};

/*
 * A point-to-point message to a rank that is not a neighbour
 * (lib/p2p/far.c): pushed by its sender onto the receiver's
 * mailbox (tc_proc.mail, many producers), then kept by the receiver in its
 * list of such messages (tc_proc.fx_head) until a receive matches it.
 * Eager (sreq NULL): the payload follows, owned by the receiver alone
 * (refs 1).  Rendezvous (sreq set): the receiver copies straight out of
 * the sender's buffer after claiming claim (OPEN -> TAKEN) against the
 * sender's tc_cancel (OPEN -> CANCELLED); the sender and the receiver each
 * hold one of refs, and the last to drop it frees the node, so that either
 * may look at claim while the other is done with it.
 */
struct tc__far {
	struct tc__far *next;  /* mailbox, then the receiver's list */
	struct tc__far *snext; /* rendezvous: the sender's list of its own */
	struct tc__req *sreq;  /* rendezvous: the sender's request, else NULL */
	size_t total;          /* bytes of the message */
	int64_t clock;         /* its arrival time (logical, ps) */
	int src;
	int tag;
	_Atomic uint64_t claim; /* rendezvous: TC__CLAIM_* (lib/p2p/p2p_internal.h) */
	_Atomic int refs;
	unsigned char data[]; /* eager: the message */
};

/* Drops one reference to n; frees it with the last.  Acq_rel: the last
 * dropper's free comes after every other holder's accesses. */
static inline void tc__far_unref(struct tc__far *n)
{
	if (atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) == 1)
		free(n);
}

struct tc__port {
	struct tc__chan *out;                /* this proc -> neighbour */
	struct tc__chan *in;                 /* neighbour -> this proc */
	struct tc__req *sq_head, *sq_tail;   /* pending sends (both kinds), FIFO */
	struct tc__req *rq_head, *rq_tail;   /* pending receives of collective messages, FIFO */
	struct tc__req *urq_head, *urq_tail; /* pending point-to-point receives, FIFO */
	struct tc__aside *ua_head, *ua_tail; /* point-to-point messages taken aside */
	struct tc__req *rs_head;             /* single-copy sends whose descriptor is in the
	                          channel, not yet seen complete (lib/p2p) */
	int active;                          /* listed in proc->active */
	int hinted;                          /* its wait hints raised (lib/p2p/p2p.c) */
	int peer;
};

/*
 * What a rank is doing, for the watchdog's report (tc__watchdog_fire): the
 * rank's own thread publishes it when one of its waits goes past its first
 * spins (lib/p2p/progress.c) and when its SPMD function returns; the rank
 * whose wait times out reads every rank's.  Relaxed: a diagnostic
 * snapshot, each field atomic so that the reading is no data race.
 */
enum { TC__WS_OUTSIDE = 0, TC__WS_WAITING, TC__WS_RETURNED };
struct tc__wstate {
	_Atomic int state;          /* TC__WS_* */
	_Atomic(const char *) call; /* "tc_recv", "allreduce", ...: the last wait's */
	_Atomic(const char *) alg;  /* a collective's algorithm, or NULL */
	_Atomic int round;          /* a collective's round, or -1 */
	_Atomic int peer;           /* the neighbour waited on, or -1 */
	_Atomic int sending;        /* 1: waits to send to peer; 0: to receive */
	_Atomic uint64_t bytes;     /* outstanding on that link */
	_Atomic int pending;        /* requests queued on all ports */
};

/* Something a rank's caller made and is to free (a persistent collective
 * request: lib/sched/nbc.c), linked into its proc so that the team frees
 * what the caller did not (tc_team_destroy). */
struct tc__owned {
	struct tc__owned *next, *prev;
	void (*release)(struct tc__owned *o);
	/* The request it stands for while active (started, not yet ended
	 * by a wait or test), else NULL: how lib/p2p tells a request still
	 * active (tc__req_busy) without reading storage it cannot trust. */
	const void *handle;
};

struct tc_proc {
	struct tc__doorbell db; /* first: its own cache line */
	struct tc_team *team;
	int rank;
	int deg;
	const int *nbrs;        /* sorted neighbour ranks (owned by the topology) */
	struct tc__port *ports; /* deg entries, same order as nbrs */
	int *active;            /* indices of ports with pending requests */
	int nactive;
	int npending_rndv;        /* own sends waiting for a receiver's copy */
	uint64_t spin_until_ns;   /* tc__now_ns() before which a wait keeps
	                          spinning while npending_rndv: a peer may still
	                          be copying a long single-copy send of ours
	                          (lib/p2p/p2p.c) */
	_Atomic int rndv_reading; /* inside another rank's buffer (single copy);
	                             see tc__rndv_quiesce() */
	uint64_t nposts;          /* requests posted so far (lib/p2p/progress.c) */
	_Atomic int attached;
	_Atomic(uintptr_t) owner; /* the attached thread's token (tc_attach) */
	_Atomic int joined;       /* attached (or run) since the team's last start:
	                          written under the team's attach_mu, read
	                          (relaxed) by the watchdog's report */
	/* The call being made, for the watchdog: set by the proc's own thread
	 * before it waits (plain: read only by that thread, which publishes
	 * them in ws). */
	const char *cur_call, *cur_alg;
	int cur_round;
	struct tc__wstate ws;
	struct tc_stats stats;
	tc_time_t clock;      /* logical clock, ps */
	tc_time_t *res_free;  /* port resources (lib/model/clock.h) */
	uint64_t wall_end_ns; /* when the SPMD function returned */
	struct {
		void *p;
		size_t n;
	} scratch[TC__SCRATCH_SLOTS]; /* grow-only buffers for the layers above */
	void *ext;                    /* lib/coll's per-rank state (schedule cache) */
	void (*ext_free)(void *);
	struct tc_event *ev; /* trace buffer (topocoll/trace.h) */
	int nev;
	uint64_t ev_dropped;
	uint64_t ncalls; /* collective calls made by this rank */
	/* The collective call running (lib/sched/exec.c): its tag (0: none)
	 * and 64-bit signature, which its messages carry (lib/p2p/p2p.h). */
	int coll_tag;
	uint64_t coll_sig;
	uint64_t coll_seq; /* its sequence number (ncalls at its start) */
	/* Requests completed by a layer above (lib/sched's collective
	 * requests, kind TC__KIND_EXT of lib/p2p): how many are outstanding,
	 * the progress step that layer installs (called by every progress of
	 * lib/p2p while ext_pending; it never blocks), its wait for one of
	 * them (may_block steps, lib/p2p's tc_wait), and its end of one that
	 * a wait or test completed or retired with status.  ext_queue is the
	 * layer's own; ext_busy guards against a step re-entering itself.
	 * ext_native: how many of the queued ones wait on the machine's own
	 * flags (lib/coll/shm_step.c), which ring no doorbell: while there
	 * are any, a wait of lib/p2p yields where it would park. */
	int ext_pending, ext_busy, ext_native;
	void (*ext_progress)(struct tc_proc *proc);
	int (*ext_wait)(struct tc_proc *proc, void *req);
	void (*ext_end)(struct tc_proc *proc, void *req, int status);
	void *ext_queue;
	/* Suspended in tc_test's yield on a fibre: the CPU's list of such
	 * procs (lib/p2p/progress.c, tc__test_yield), which other fibres of
	 * the CPU progress; test_helped: one is progressing it now. */
	struct tc_proc *test_next;
	int test_helped;
	struct tc__owned *owned; /* what the team frees with it (struct tc__owned) */
	uint64_t ext_gen;        /* raised when the queue is dropped (an abort's reset) */
	tc_time_t ext_clock;     /* the end of the last call that left the queue */
	int scan_at;             /* the next link tc__coll_scan looks at */
	/* The signatures of the last TC__CALLS_SEEN collective calls this rank
	 * entered, each packed with its sequence number (tc__call_seen), for
	 * the mismatch probe of a peer that waits on this rank (lib/p2p/
	 * progress.c); written by the rank at each call's start, 0 at a start
	 * of the team. */
	_Atomic uint64_t calls_seen[8];
	/* The last mismatch found to be the same call made in the other form
	 * (lib/p2p, tc__mismatch_form): the peer + 1 (0: none this run), the
	 * call and algorithm, so that the wait of a request that failed so
	 * during another call still says why. */
	int form_peer;
	const char *form_call, *form_alg;
	const char *last_alg; /* the last collective (tc_last_coll) */
	int last_rounds;
	tc_time_t last_modelled;
	pthread_t thread;
	int run_err;
	/* Point-to-point with ranks that are not neighbours, and receives
	 * from any source (lib/p2p/far.c). */
	_Alignas(64) _Atomic(struct tc__far *) mail; /* pushed by any rank (a
	                          Treiber stack, newest first), taken whole by
	                          this proc's thread */
	_Atomic uint32_t want_mail;                  /* wait hint: a sender rings db */
	struct tc__far *fx_head, *fx_tail;           /* taken from mail, not yet
	                          received, in order of arrival */
	struct tc__req *grq_head, *grq_tail;         /* receives from a non-neighbour
	                          or from any source, in order of posting */
	int nany;                                    /* receives from any source queued in grq */
	int nfar_rndv;            /* own rendezvous sends to non-neighbours out */
	struct tc__far *far_sent; /* their nodes (snext) */
	uint64_t useq;            /* point-to-point receives posted (matching order) */
	int any_hinted;           /* every link's data hint raised for nany */
	/* The message the last probe found (tc_probe, tc_iprobe:
	 * lib/p2p/probe.c), which the next point-to-point receive the proc
	 * posts takes when it asks for it: an entry of port probed_nbr's
	 * aside list, or (probed_nbr -1) a routed node of fx; NULL when none.
	 * probed_src and probed_tag are the message's, probed_asked_src and
	 * probed_asked_tag what the probe asked for. */
	void *probed;
	int probed_nbr, probed_src, probed_tag, probed_asked_src, probed_asked_tag;
	/* A blocking probe's wait (tc__set_hints): 0 none; i + 1: port i's
	 * data; -1: the mailbox; -2: every link and the mailbox. */
	int probe_wait;
	/* A sub-team's proc (lib/core/subteam.c): the root team's proc of the
	 * same rank's thread, which holds the rank's clock between calls on
	 * the sub-team (tc__clock_pull, tc__clock_push); NULL on a root team. */
	struct tc_proc *base;
	/* The rank's procs, on any of its teams, with collective requests
	 * queued (lib/sched/nbc.c), listed on its root team's proc
	 * (xq_others, linked by xq_next): every progress of any of them steps
	 * the others' queues too (tc__progress), so that a call started on
	 * one team moves on while the rank waits on another.  Touched by the
	 * rank's own thread only. */
	struct tc_proc *xq_others, *xq_next;
	int xq_walking; /* the root's list is being walked */
	/* The stamp a request the rank starts through a public call carries
	 * (lib/p2p, tc__req_busy): on the rank's root team's proc, unique in
	 * the process (tc__stamp_new) and renewed whenever the proc's queues
	 * are forgotten, so that only a request started since then, never
	 * storage left over from an earlier team or run, can pass for an
	 * active one of the rank's. */
	uint64_t req_stamp;
};

struct tc_team {
	int p;
	struct tc_topo *topo;
	struct tc_model model;
	struct tc__mps mps; /* the model in picoseconds */
	bool emulate;
	uint64_t epoch_ns; /* wall-clock time of logical time 0 */
	struct tc_run_info last_run;
	void *hot_store; /* every rank's ports, active list and port
	                           resources, each rank's from a line of its own */
	size_t hot_bytes;
	struct tc__chan *chans; /* one per arc, CSR order of the topology */
	long nchans;
	void *ring_store; /* every channel's ring: one anonymous mapping */
	size_t ring_store_bytes;
	struct tc_proc *procs;
	size_t memory_bytes;
	size_t ring_bytes;
	size_t packet_bytes; /* mu */
	size_t single_copy_min;
	enum tc_wait_policy wait;
	uint64_t spin_ns, yield_ns;
	/* The timeout in force for a wait that starts now (0: none): the
	 * configured one (timeout_cfg_ns), or while a rank of an attached team
	 * has not attached since the start, the shorter of it and
	 * attach_timeout_ns (tc_attach).  Seq_cst: written under attach_mu,
	 * read by every wait as it starts (lib/p2p). */
	_Atomic uint64_t timeout_ns;
	uint64_t timeout_cfg_ns;
	uint64_t attach_timeout_ns; /* 0: a missing rank does not shorten waits */
	size_t stack_bytes;
	enum tc_exec exec;     /* resolved: TC_EXEC_THREADS or TC_EXEC_FIBRES */
	bool run_unattached;   /* tc_run leaves attached ranks to their threads */
	size_t fibre_stack;    /* fibres: each rank's usable stack */
	struct tc__runq *runq; /* fibres: the last run's scheduler and
	                             stacks, kept for the next (lib/fibre/runq.h) */
	size_t trace_cap;
	int cpus;
	int *cpu_list;               /* CPUs in placement order (lib/core/place.h) */
	struct tc__machine machine;  /* the placement's machine (TC_HWLOC_XML's) */
	struct tc_rank_place *place; /* p entries: rank r's slot r mod nslots */
	struct tc_calibration *cal;  /* tc_team_config.calibration, copied; NULL */
	bool no_pin;
	bool may_block;  /* some rank may sleep: wakers must check hints */
	bool asym_fence; /* membarrier on the sleeper side, none on the
	                           waker side (lib/core/wait.h) */
	bool check;      /* mismatch detection (tc_team_config's
	                           no_mismatch_check == 0; lib/sched/exec.c) */
	_Atomic int aborted;
	_Atomic int running;
	_Atomic int first_err;
	/* tc_error_detail() of the rank whose error is first_err, as "rank R:
	 * text" ("" when it had none): written by that rank alone, as it
	 * returns, and read by tc_run once every rank has. */
	char first_detail[704];
	tc_spmd_fn fn;
	void *fn_arg;
	_Atomic int gate_open; /* emulated start gate (tc_run), a futex word */
	/* Attaching and starting (tc_run, tc_attach, tc_detach): nattached and
	 * the reset at a start are under attach_mu. */
	pthread_mutex_t attach_mu;
	int nattached;
	int njoined;          /* ranks with joined set */
	uint64_t start_ns;    /* when the team last started (tc__now_ns()) */
	tc_watchdog_fn wd_fn; /* NULL: stderr */
	void *wd_arg;
	_Atomic int wd_fired; /* this run's report: 0 none, 1 being written, 2 out */
	/* State the layers above keep per team (the collectives' schedule
	 * cache, lib/coll/cache.c): created under shared_mu by its first
	 * user, freed by shared_free after every rank's ext. */
	pthread_mutex_t shared_mu;
	void *shared;
	void (*shared_free)(void *);
	/* Called with shared at every start of the team (tc_run, the first
	 * tc_attach; a sub-team's at its root's), while no rank runs: what
	 * the last run left there must not pass for this run's (the flags of
	 * the machine's own algorithms, lib/coll/shm.h).  NULL: nothing. */
	void (*shared_start)(void *);
	_Atomic size_t shared_bytes; /* what it holds (tc_team_get_info) */
	_Atomic int shared_entries;
	/* Sub-teams (tc_team_split, tc_team_dup; lib/core/subteam.c).  A root
	 * team (tc_team_create) has parent == root == NULL and lists every
	 * team made from it, at any depth, in creation order (sub_head, each
	 * linked by sub_next: a parent before its children), under its sub_mu.
	 * A sub-team's rank r is its parent's rank parent_rank[r]. */
	struct tc_team *parent, *root;
	int *parent_rank;
	struct tc_team *sub_head, *sub_next;
	pthread_mutex_t sub_mu;
	/* A root's groups being made by their members (lib/core/group.c),
	 * under group_mu. */
	struct tc__group *groups;
	pthread_mutex_t group_mu;
	/* sub_head != NULL, written under sub_mu at every change of the list:
	 * a returning rank looks at it before taking sub_mu (lib/core/subteam.c,
	 * tc__team_sub_returned). */
	_Atomic bool has_subs;
	_Atomic int sub_leaving; /* tc_team_free: members that have left */
	/* Another engine that runs the team's collective schedules, NULL for
	 * the channels (lib/sched/exec.c): a team over MPI processes
	 * (lib/mpi/) runs them with engine as its state.  Set at creation. */
	int (*engine_run)(struct tc_proc *proc, const struct tc__sched *s, const struct tc__exec_io *io);
	void *engine;
	/* The engine of its point-to-point calls (lib/p2p/p2p.h), NULL for
	 * the channels.  Set at creation. */
	const struct tc__p2p_engine *p2p_engine;
	/* With engine_run: how that engine runs the collective requests of
	 * lib/sched/nbc.c (NULL: the channels' state machine).  Set at
	 * creation. */
	const struct tc__engine_nbc *engine_nbc;
};

/* A collective request's plan run by another engine than the channels
 * (team->engine_nbc), one at a time per proc as lib/sched/nbc.h orders
 * them: start makes its state *st (its first round posted); step
 * advances it without blocking, or with block until it ends, and returns
 * true when it has ended (*err: 0 or how it failed: the engine has then
 * aborted the team and released st); fail ends it early (a wait that
 * failed: err says why) and releases st. */
struct tc__engine_nbc {
	int (*start)(struct tc_proc *proc, const struct tc__sched *s, const struct tc__exec_io *io,
	             void **st);
	bool (*step)(struct tc_proc *proc, void *st, bool block, int *err);
	void (*fail)(struct tc_proc *proc, void *st, int err);
};

/* The team whose runs a team's ranks belong to: itself, or a sub-team's
 * root. */
static inline struct tc_team *tc__root(struct tc_team *t)
{
	return t->root ? t->root : t;
}

/* A sub-team's proc takes the rank's clock from its root proc before a
 * call and gives it back after (a no-op on a root team's proc): one clock
 * per rank, whichever team it calls on. */
static inline void tc__clock_pull(struct tc_proc *proc)
{
	if (proc->base && proc->base->clock > proc->clock)
		proc->clock = proc->base->clock;
}
static inline void tc__clock_push(struct tc_proc *proc)
{
	if (proc->base && proc->clock > proc->base->clock)
		proc->base->clock = proc->clock;
}

/*
 * Sub-teams (lib/core/subteam.c).  tc__team_sub_create makes a team of k
 * ranks over the topology spec whose rank r is the parent's rank
 * parent_rank[r], with the parent's resolved configuration (model, mode,
 * rings, packets, waiting policy, threads or fibres, timeout, mismatch
 * check, watchdog), no trace buffers; its procs take their doorbell's
 * fibre from the parent's procs and are joined; it is listed on the root.
 * Called by one rank's thread while the parent runs; nobody else sees the
 * team until that thread publishes it.  Errors as tc_team_create's.
 * tc__team_sub_destroy unlists and frees one (no rank may use it any
 * more); tc_team_destroy of the root frees all that are left.
 */
int tc__team_sub_create(struct tc_team *parent, const char *spec, const int *parent_rank, int k,
                        struct tc_team **out);
void tc__team_sub_destroy(struct tc_team *t);
/* Forgets a root's groups being made (lib/core/group.c): at each start and
 * at its end; their sub-teams stay listed on the root. */
void tc__team_groups_clear(struct tc_team *root);
/* Frees a team and, for a root, its sub-teams (lib/core/team.c). */
void tc__team_free(struct tc_team *t);
/* For the layer that starts ranks (lib/run), on a root team while no rank
 * runs, or (returned) from the rank's own thread: every sub-team proc's
 * doorbell takes the fibre of its parent's proc (after tc_run set or
 * cleared the root's); a start resets every sub-team as the root is reset
 * (reset_proc for each proc, the channels emptied as the root's, the abort
 * cleared); a rank whose SPMD function returned is marked returned on
 * every sub-team (for its peers' mismatch probes). */
void tc__team_sub_tasks(struct tc_team *root);
void tc__team_sub_start(struct tc_team *root, void (*reset_proc)(struct tc_proc *));
void tc__team_sub_returned(struct tc_team *root, const struct tc_proc *proc);

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
	uint64_t n = tc__now_ns(), e = (t->root ? t->root : t)->epoch_ns;
	return n > e ? n - e : 0;
}

/* Emulated mode: waits until epoch + the proc's clock; returns early once
 * the team is aborted. */
void tc__emulate_sync(struct tc_proc *proc);

/* The root team's proc of proc's rank (proc itself on a root team). */
static inline struct tc_proc *tc__proc_root(struct tc_proc *proc)
{
	return proc->base ? proc->base : proc;
}

/* proc's queue has requests: listed for the rank's other waits (once). */
static inline void tc__xq_list(struct tc_proc *proc)
{
	struct tc_proc *root = tc__proc_root(proc);
	for (struct tc_proc *q = root->xq_others; q; q = q->xq_next)
		if (q == proc)
			return;
	proc->xq_next = root->xq_others;
	root->xq_others = proc;
}

/* proc off its rank's list (its queue emptied, or the proc going). */
static inline void tc__xq_unlist(struct tc_proc *proc)
{
	struct tc_proc *root = tc__proc_root(proc);
	for (struct tc_proc **pp = &root->xq_others; *pp; pp = &(*pp)->xq_next)
		if (*pp == proc) {
			*pp = proc->xq_next;
			proc->xq_next = NULL;
			return;
		}
}

/* A new value for tc_proc.req_stamp: never one returned before in the
 * process, never 0.  Thread-safe. */
uint64_t tc__stamp_new(void);

/* Empties a proc's request queues and port state (nothing is waited for or
 * pending any more).  The caller makes sure no peer reads its buffers: the
 * team reset (no rank runs), or p2p's tc__proc_drop_requests (after its
 * single-copy quiesce). */
static inline void tc__proc_clear_ports(struct tc_proc *pr)
{
	for (int i = 0; i < pr->deg; i++) {
		struct tc__port *pt = &pr->ports[i];
		pt->sq_head = pt->sq_tail = NULL;
		pt->rq_head = pt->rq_tail = NULL;
		pt->urq_head = pt->urq_tail = NULL;
		pt->rs_head = NULL;
		while (pt->ua_head) {
			struct tc__aside *a = pt->ua_head;
			pt->ua_head = a->next;
			free(a);
		}
		pt->ua_tail = NULL;
		pt->active = 0;
		pt->hinted = 0;
	}
	pr->nactive = 0;
	pr->npending_rndv = 0;
	/* The layer above's requests are forgotten too (never touched: their
	 * storage may be gone); they find themselves dropped by ext_gen. */
	pr->ext_pending = 0;
	pr->ext_native = 0;
	pr->ext_queue = NULL;
	if (pr->base)
		tc__xq_unlist(pr);
	else
		pr->xq_others = NULL;
	pr->xq_next = NULL;
	pr->xq_walking = 0;
	pr->ext_gen++;
	/* The requests forgotten stop passing for active ones (a sub-team's
	 * are the rank's root proc's to renew: cleared with it at a start). */
	if (!pr->base)
		pr->req_stamp = tc__stamp_new();
	for (struct tc__owned *o = pr->owned; o; o = o->next)
		o->handle = NULL;
	/* Routed messages: ours to drop a reference to, received or sent. */
	struct tc__far *n = atomic_exchange_explicit(&pr->mail, NULL, memory_order_acquire);
	while (n) {
		struct tc__far *next = n->next;
		tc__far_unref(n);
		n = next;
	}
	for (n = pr->fx_head; n;) {
		struct tc__far *next = n->next;
		tc__far_unref(n);
		n = next;
	}
	for (n = pr->far_sent; n;) {
		struct tc__far *next = n->snext;
		tc__far_unref(n);
		n = next;
	}
	pr->fx_head = pr->fx_tail = NULL;
	pr->far_sent = NULL;
	pr->grq_head = pr->grq_tail = NULL;
	pr->nany = 0;
	pr->nfar_rndv = 0;
	pr->any_hinted = 0;
	pr->probed = NULL;
	pr->probe_wait = 0;
}

/* An entry of tc_proc.calls_seen: a valid bit, 23 bits of the call's
 * sequence number and 40 bits of its signature, in one word so that a
 * reader never sees one call's number with another's signature.  A reader
 * that finds another number in the slot knows nothing; one that finds the
 * number and other signature bits knows the calls differ (40 equal bits
 * say only that they probably agree). */
enum { TC__CALLS_SEEN = 8 };
static inline uint64_t tc__call_seen(uint64_t seq, uint64_t sig)
{
	return (uint64_t)1 << 63 | (seq & 0x7fffffu) << 40 | (sig & 0xffffffffffull);
}

/* The mark a collective's request forms (tc_iNAME, tc_NAME_init) put on
 * the call's signature (lib/coll): a blocking call and a request of the
 * same collective never match, as in MPI, and mismatch detection tells
 * ranks that made different forms apart (the machine's own algorithms run
 * the two forms differently: unmatched, they would wait on each other for
 * good).  Bit 0 clear, so that proc->coll_sig, the signature with bit 0
 * set, differs by this mark exactly; its low byte, which the machine's own
 * algorithms' flags carry, not 0.  tc__other_form: whether a peer's
 * signature sig (or, with seq, its calls_seen entry) is that of proc's
 * running call made in the other form. */
#define TC__SIG_REQUEST UINT64_C(0x5bd1e9955bd1e9a6)
static inline bool tc__other_form(const struct tc_proc *proc, uint64_t sig)
{
	return proc->coll_sig && sig == (proc->coll_sig ^ TC__SIG_REQUEST);
}
static inline bool tc__other_form_seen(const struct tc_proc *proc, uint64_t seq, uint64_t seen)
{
	return proc->coll_sig && seen == tc__call_seen(seq, proc->coll_sig ^ TC__SIG_REQUEST);
}

#endif /* TC_CORE_INTERNAL_H */
