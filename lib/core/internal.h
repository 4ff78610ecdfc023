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
	unsigned char data[]; /* streamed: the message */
};

struct tc__port {
	struct tc__chan *out;  /* this proc -> neighbour */
	struct tc__chan *in;   /* neighbour -> this proc */
	struct tc__req *sq_head, *sq_tail; /* pending sends (both kinds), FIFO */
	struct tc__req *rq_head, *rq_tail; /* pending receives of collective messages, FIFO */
	struct tc__req *urq_head, *urq_tail; /* pending point-to-point receives, FIFO */
	struct tc__aside *ua_head, *ua_tail; /* point-to-point messages taken aside */
	struct tc__req *rs_head; /* single-copy sends whose descriptor is in the
	                          channel, not yet seen complete (lib/p2p) */
	int active;            /* listed in proc->active */
	int hinted;            /* its wait hints raised (lib/p2p/p2p.c) */
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
	uint64_t nposts;       /* requests posted so far (lib/p2p/progress.c) */
	_Atomic int attached;
	_Atomic(uintptr_t) owner; /* the attached thread's token (tc_attach) */
	_Atomic int joined;    /* attached (or run) since the team's last start:
	                          written under the team's attach_mu, read
	                          (relaxed) by the watchdog's report */
	/* The call being made, for the watchdog: set by the proc's own thread
	 * before it waits (plain: read only by that thread, which publishes
	 * them in ws). */
	const char *cur_call, *cur_alg;
	int cur_round;
	struct tc__wstate ws;
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
	/* The collective call running (lib/sched/exec.c): its tag (0: none)
	 * and 64-bit signature, which its messages carry (lib/p2p/p2p.h). */
	int coll_tag;
	uint64_t coll_sig;
	uint64_t coll_seq;             /* its sequence number (ncalls at its start) */
	int scan_at;                   /* the next link tc__coll_scan looks at */
	/* The signatures of the last TC__CALLS_SEEN collective calls this rank
	 * entered, each packed with its sequence number (tc__call_seen), for
	 * the mismatch probe of a peer that waits on this rank (lib/p2p/
	 * progress.c); written by the rank at each call's start, 0 at a start
	 * of the team. */
	_Atomic uint64_t calls_seen[8];
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
	/* The timeout in force for a wait that starts now (0: none): the
	 * configured one (timeout_cfg_ns), or while a rank of an attached team
	 * has not attached since the start, the shorter of it and
	 * attach_timeout_ns (tc_attach).  Seq_cst: written under attach_mu,
	 * read by every wait as it starts (lib/p2p). */
	_Atomic uint64_t timeout_ns;
	uint64_t timeout_cfg_ns;
	uint64_t attach_timeout_ns; /* 0: a missing rank does not shorten waits */
	size_t stack_bytes;
	enum tc_exec exec;      /* resolved: TC_EXEC_THREADS or TC_EXEC_FIBRES */
	bool run_unattached;    /* tc_run leaves attached ranks to their threads */
	size_t fibre_stack;     /* fibres: each rank's usable stack */
	struct tc__runq *runq;    /* fibres: the last run's scheduler and
	                             stacks, kept for the next (lib/fibre/runq.h) */
	size_t trace_cap;
	int cpus;
	int *cpu_list;          /* CPUs in placement order (lib/core/place.h) */
	struct tc__machine machine; /* the placement's machine (TC_HWLOC_XML's) */
	struct tc_rank_place *place; /* p entries: rank r's slot r mod nslots */
	bool no_pin;
	bool may_block;         /* some rank may sleep: wakers must check hints */
	bool asym_fence;        /* membarrier on the sleeper side, none on the
	                           waker side (lib/core/wait.h) */
	bool check;             /* mismatch detection (tc_team_config's
	                           no_mismatch_check == 0; lib/sched/exec.c) */
	_Atomic int aborted;
	_Atomic int running;
	_Atomic int first_err;
	tc_spmd_fn fn;
	void *fn_arg;
	pthread_mutex_t gate_mu;  /* emulated start gate (tc_run) */
	pthread_cond_t gate_cv;
	int gate_open;
	/* Attaching and starting (tc_run, tc_attach, tc_detach): nattached and
	 * the reset at a start are under attach_mu. */
	pthread_mutex_t attach_mu;
	int nattached;
	int njoined;              /* ranks with joined set */
	uint64_t start_ns;        /* when the team last started (tc__now_ns()) */
	tc_watchdog_fn wd_fn;     /* NULL: stderr */
	void *wd_arg;
	_Atomic int wd_fired;     /* this run's report: 0 none, 1 being written, 2 out */
	/* State the layers above keep per team (the collectives' schedule
	 * cache, lib/coll/cache.c): created under shared_mu by its first
	 * user, freed by shared_free after every rank's ext. */
	pthread_mutex_t shared_mu;
	void *shared;
	void (*shared_free)(void *);
	_Atomic size_t shared_bytes;  /* what it holds (tc_team_get_info) */
	_Atomic int shared_entries;
};

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

/* Emulated mode: waits until epoch + the proc's clock; returns early once
 * the team is aborted. */
void tc__emulate_sync(struct tc_proc *proc);

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


#endif /* TC_CORE_INTERNAL_H */
