/* SPDX-License-Identifier: MIT */
/*
 * lib/sched/sched.h - the schedule IR: a collective algorithm as rounds of
 * transfers.
 *
 * A generator (lib/coll/) emits, for one (topology, p, m, root, model), the
 * rounds of transfers of an algorithm.  One representation then serves:
 *   - execution over the channels (lib/sched/exec.c), routed transfers
 *     expanded into hops that the intermediate ranks forward;
 *   - prediction without threads (tc__sched_simulate): the logical clock of
 *     lib/model/clock.h applied to the schedule gives exactly the times a
 *     real run gives;
 *   - checks: 1-port compliance, link contention, NODUP and NOHO ([KKA-I]),
 *     and pictures and traces.
 *
 * Semantics of a round, for each rank: it posts every transfer it sources in
 * the round (in schedule order), receives every transfer it is the
 * destination of, and finishes the round when all are done; then the
 * received data are stored (copy) or combined into their destination regions
 * in schedule order.  Sends read their source regions as they were at the
 * start of the round.  A transfer whose src == dst is local: a copy (free)
 * or a combine (m t_c) done at the end of the round.
 *
 * Buffers of a rank: TC__BUF_IN (the caller's input, read only), TC__BUF_OUT
 * (the caller's output), TC__BUF_TMP (scratch of tmp_bytes, owned by the
 * executor).  Offsets and sizes are in bytes.
 *
 * Not thread-safe: one thread builds a schedule; once built it is read-only
 * and may be simulated or executed by many threads at once.
 */
#ifndef TC_SCHED_SCHED_H
#define TC_SCHED_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "topocoll/model.h"
#include "topocoll/topo.h"

enum tc__buf { TC__BUF_IN = 0, TC__BUF_OUT = 1, TC__BUF_TMP = 2 };

enum tc__xop {
	TC__XOP_COPY = 0,      /* dst region = received bytes */
	TC__XOP_COMBINE_LEFT,  /* dst region = received (+) other operand */
	TC__XOP_COMBINE_RIGHT, /* dst region = other operand (+) received */
};

struct tc__xfer {
	int32_t src, dst;        /* ranks; routed when not neighbours */
	uint8_t sbuf, rbuf;      /* enum tc__buf */
	uint8_t op;              /* enum tc__xop */
	uint8_t abuf;            /* combines: 1 + the buffer (enum tc__buf) of the
	                            other operand, at roff at dst; 0: the dst
	                            region itself (see tc__xfer_abuf) */
	int32_t info_lo, info_n; /* checker: the pieces of information carried,
	                            [info_lo, info_lo + info_n); info_n = 0: untracked */
	uint64_t soff, roff, bytes;
};

/* The buffer holding a combine's other operand at the destination. */
static inline int tc__xfer_abuf(const struct tc__xfer *x)
{
	return x->abuf ? x->abuf - 1 : x->rbuf;
}

struct tc__sched {
	int p;
	int nrounds;
	int nx;
	int xcap, rcap;
	int *round_at; /* transfers of round r: x[round_at[r] .. round_at[r+1]) */
	struct tc__xfer *x;
	uint64_t tmp_bytes; /* scratch per rank */
	int reads_in;       /* a reduction's schedule that reads each rank's
	                            contribution from IN itself (lib/coll/dual.c) */
	/* Checker: the pieces of information each rank holds before round 0,
	 * [init_lo[r], init_lo[r] + init_n[r]); NULL when untracked. */
	int32_t *init_lo, *init_n;
	int err; /* sticky: first error while building */
	/* Limits of a schedule built only to be priced (AUTO): 0 means none.
	 * Past max_x transfers, or max_moving rounds that move data, the
	 * build stops with the sticky error TC__ELIMIT. */
	int max_x, max_moving;
	int nmoving;      /* rounds so far with a transfer between ranks */
	int moving_round; /* 1 + the last round counted in nmoving */
	/* Count only (set after tc__sched_init): transfers are checked and
	 * counted, not stored (x, init_lo stay NULL), and rounds counted in
	 * nrounds without round_at, to say how large a schedule over the
	 * limits would be (its memory stays constant however many rounds);
	 * max_x, when set, bounds the count (TC__ELIMIT past it). */
	int count_only;
	int64_t counted; /* transfers, count_only */
};

/* The sticky error of a schedule that went over its limits (never returned
 * to a user: AUTO skips such a candidate). */
#define TC__ELIMIT (-1000)

/* Starts an empty schedule for p ranks.  Returns 0 or TC_ENOMEM. */
int tc__sched_init(struct tc__sched *s, int p);
void tc__sched_free(struct tc__sched *s);
/* Opens a new round; transfers added next belong to it. */
int tc__sched_round(struct tc__sched *s);
/* Appends a transfer to the current round (opening round 0 if none). */
int tc__sched_add(struct tc__sched *s, const struct tc__xfer *x);
/* Declares the pieces of information rank r starts with (checker). */
int tc__sched_initial(struct tc__sched *s, int r, int32_t lo, int32_t n);

/*
 * Which transfers each rank takes part in: its sources, destinations and
 * the transfers it forwards (the ranks inside a transfer's route on t), so
 * that a rank compiles its plan in time proportional to its own share
 * (lib/sched/index.c).  Rank r's transfers are x[at[r] .. at[r + 1]),
 * ascending.  Returns 0, TC_ENOMEM or TC_EOVERFLOW (more than INT_MAX
 * entries); free both arrays with free().
 */
int tc__sched_index(const struct tc__sched *s, const struct tc_topo *t, int **at, int **x);
/* The same for one rank, by a scan of the whole schedule. */
int tc__sched_rank_xfers(const struct tc__sched *s, const struct tc_topo *t, int rank, int **x, int *n);

/* One link busy with two transfers at overlapping logical times. */
struct tc__contention {
	int round;
	int from, to; /* the directed link */
	int xa, xb;   /* indices of the two transfers in s->x */
};

struct tc__sim {
	tc_time_t makespan; /* largest final clock over the ranks (ps) */
	tc_time_t *clock;   /* per rank final clock (p entries, owned) */
	tc_time_t *arrival; /* per transfer logical arrival (nx entries, owned;
	                        0 for local transfers) */
	long messages;      /* end-to-end transfers (local ones excluded) */
	long hop_messages;  /* link crossings */
	uint64_t bytes;     /* end-to-end bytes */
	int rounds;
	/* Checker. */
	long oneport_violations; /* a rank sourcing or receiving two transfers
	                            in one round */
	long nodup_violations;   /* a rank receiving a piece it already got */
	long noho_violations;    /* a rank receiving a piece it started with */
	int ncontention;
	struct tc__contention *contention; /* owned; at most the first 64 */
	long contention_total;
};

/*
 * Simulates the schedule on the topology with the model: the logical clock of
 * every rank, every rank starting at 0, plus the checks.  out is owned by the
 * caller; free with tc__sim_free().  Returns 0, TC_ENOMEM, TC_EINVAL
 * (malformed schedule: rank out of range, p different from the topology),
 * TC_EOVERFLOW (more than 2^23 link crossings: too large to simulate).
 */
int tc__sched_simulate(const struct tc__sched *s, const struct tc_topo *t,
                       const struct tc_model *md, struct tc__sim *out);
void tc__sim_free(struct tc__sim *sim);

#endif /* TC_SCHED_SCHED_H */
