/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/gen.h - what an algorithm file provides: a schedule generator and
 * the seed's closed form.  The registry (algorithms.def) lists them; dispatch,
 * names and the CLI list come from it (lib/coll/coll.c).
 *
 * Buffer convention of the generated schedules (lib/sched/sched.h):
 *   bcast      the data is in TC__BUF_OUT on every rank (the root's holds it
 *              at the start); the schedule moves OUT regions to OUT regions.
 *   reduce     derived from the broadcast of the same name (its dual: rounds
 *              reversed, every transfer reversed and combining).
 *   allreduce  TC__BUF_OUT of every rank holds its contribution at the start
 *   barrier    (the framework copies the input there) and the result at the
 *              end; transfers combine with COMBINE_LEFT/RIGHT so that, for
 *              each pair, the lower ranks' data is the left operand.  An
 *              algorithm flagged TC__ALG_READS_IN instead finds its
 *              contribution in TC__BUF_IN (never written; the framework
 *              passes a copy when the call is in place) and names, in each
 *              combining transfer, the buffer of the other operand
 *              (tc__emit_from): the first combine then reads IN and writes
 *              OUT, and no copy of the input is made (except at p = 1,
 *              where the schedule is empty and the framework copies).
 * TC__BUF_TMP is free scratch (the schedule sets tmp_bytes).  Every region
 * holds whole elements (offsets and sizes multiples of esize).
 *
 * A generator returns 0, TC_ENOTSUP when the algorithm does not apply to the
 * topology or p (never a wrong schedule), or TC_ENOMEM.  It must give the
 * same schedule on every rank (pure function of its arguments).
 */
#ifndef TC_COLL_GEN_H
#define TC_COLL_GEN_H

#include <math.h>
#include <stdint.h>

#include "sched/sched.h"
#include "topocoll.h"
#include "topocoll/coll.h"
#include "topocoll/cost.h"
#include "topo/embed.h"

struct tc__gen {
	enum tc_coll coll;
	const struct tc_topo *t;
	int p;
	uint64_t bytes;  /* m: bytes per rank */
	uint64_t esize;  /* element size */
	int root;
	const struct tc_model *md;
	int packets;     /* ring_pipelined: r (0: r_opt) */
	uint64_t wait_ns; /* AUTO: price of one level of waits, tc__wait_level_ns()
	                     (0: none; the predictor leaves it 0) */
	int cpus;         /* AUTO: the CPUs that a native team's ranks share when
	                     they outnumber them (0: a CPU per rank, an emulated
	                     team, or the predictor) */
};

typedef int (*tc__gen_fn)(const struct tc__gen *g, struct tc__sched *s);
/* The seed's closed form for this call, ns; NAN where the seed has none. */
typedef double (*tc__formula_fn)(const struct tc__gen *g);

enum {
	TC__ALG_DUAL = 1u << 0,    /* reduce: the dual of the bcast generator */
	TC__ALG_ORDERED = 1u << 1, /* combines in rank order (non-commutative ops) */
	TC__ALG_SPLITS = 1u << 2,  /* splits the message (packets, blocks): the
	                              unsplit-message lower bounds of seed 001 do
	                              not apply */
	TC__ALG_READS_IN = 1u << 3, /* allreduce: reads its contribution from
	                               TC__BUF_IN itself (the framework does not
	                               copy it into OUT first) */
};

struct tc__alg {
	enum tc_coll coll;
	const char *name;
	tc__gen_fn gen;
	tc__formula_fn formula;
	unsigned flags;
	const char *topologies; /* where it applies, for --help and the README */
};

#define TC__ALG(coll, name, gen, formula, flags, topos)                              \
	int gen(const struct tc__gen *g, struct tc__sched *s);                       \
	double formula(const struct tc__gen *g);
#include "coll/algorithms.def"
#undef TC__ALG

extern const struct tc__alg tc__algs[];
extern const int tc__nalgs;

/* Helpers for generators. */
/* Adds a transfer of bytes from (src, sbuf, soff) to (dst, rbuf, roff). */
int tc__emit(struct tc__sched *s, int src, int dst, int sbuf, uint64_t soff, int rbuf,
             uint64_t roff, uint64_t bytes, int op);
/* The same for a combine whose other operand is in buffer abuf at (dst,
 * roff) rather than in the destination region itself; the result goes to
 * (rbuf, roff). */
int tc__emit_from(struct tc__sched *s, int src, int dst, int sbuf, uint64_t soff, int rbuf,
                  uint64_t roff, uint64_t bytes, int op, int abuf);
/* The linear gather and release (allreduce_linear.c, barrier_linear.c):
 * round 0 every rank i > 0 sends g->bytes to 0 (gather_op: combine or
 * copy), round 1 rank 0 sends them back to every rank. */
int tc__gen_linear_gather_release(const struct tc__gen *g, struct tc__sched *s, int gather_op);
/* Whether every rank of [1, p) is a neighbour of rank 0 both ways. */
int tc__neighbours_of_0(const struct tc_topo *t, int p);
/* Splits count elements into nblk blocks as evenly as possible; block k is
 * [*off, *off + *len) in bytes. */
void tc__block(uint64_t bytes, uint64_t esize, int nblk, int k, uint64_t *off, uint64_t *len);
/* Recursive halving on positions [lo, hi] held by h: emits through
 * emit(ctx, from, to) the transfers of round `depth` (bcast_ring_rd.c; shared
 * with bcast_mesh.c, which runs it on every line of a dimension). */
int tc__rd_halving_round(int lo, int hi, int h, int depth,
                         int (*emit)(void *ctx, int from, int to), void *ctx);

#endif /* TC_COLL_GEN_H */
