/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/gen.h - what an algorithm file provides: a schedule generator and
 * the source's closed form.  The registry (algorithms.def) lists them; dispatch,
 * names and the CLI list come from it (lib/coll/registry.c).  The functions
 * the generators share are defined in lib/coll/gen.c, but for those whose
 * comment names another file.
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
 *   The collectives whose input and output differ in shape read their
 *   input in TC__BUF_IN and write their result in TC__BUF_OUT; IN is never
 *   written, and the framework passes a private copy of it when the call is
 *   in place (so IN never overlaps OUT).  m = g->bytes is one block:
 *   allgather  IN: the rank's block; OUT: p blocks, rank r's at r m.  The
 *              schedule copies IN to OUT's own block itself (a local
 *              transfer, src == dst), also at p = 1.
 *   reduce_scatter  IN: p blocks; OUT: one block, rank r's = block r of
 *              every rank's IN reduced.  Always reads IN (TC__ALG_READS_IN).
 *   scan, exscan  IN and OUT one block.  exscan's rank 0 has a scratch OUT
 *              whose content is discarded (it may accumulate there).
 *   scatter    IN (the root's only; NULL elsewhere): p blocks; OUT one block
 *              on every rank (scratch at the root when it is in place).
 *   gather     the dual of the scatter of the same name (TC__ALG_DUAL,
 *              collectives.def): the scatter's IN is the gather's OUT at
 *              the root, its OUT the gather's IN everywhere; a scatter
 *              schedule must not read IN nor write OUT where the shape has
 *              none (IN off the root) so that its dual is valid.
 *   alltoall   IN: p blocks, block j for rank j; OUT: p blocks, block i
 *              from rank i.  The own block is a local transfer.
 *   shift, gray2binary, binary2gray  IN and OUT one block; rank r's IN goes
 *              to OUT of rank (r + q) mod p, G^-1(r), G(r) respectively
 *              (G: tc_gray()), also when that is r itself (a local
 *              transfer; p = 1 too).
 *   multicast  like bcast, the data in OUT (the root's holds it at the
 *              start), delivered to OUT of g->members; any other rank that
 *              forwards has a scratch OUT.
 *   allgatherv, gatherv, scatterv, alltoallv  (TC_CF_VCOUNT) the blocks'
 *              sizes and places in IN and OUT come from g->vmx
 *              (lib/coll/vcount/vcount.h), not from g->bytes (0 then).
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

struct tc__vmatrix;
struct tc_calibration;
struct tc_rank_place;

struct tc__gen {
	enum tc_coll coll;
	const struct tc_topo *t;
	int p;
	uint64_t bytes; /* m: bytes per rank */
	uint64_t esize; /* element size */
	int root;
	const struct tc_model *md;
	int packets;                       /* ring_pipelined: r (0: r_opt) */
	uint64_t wait_ns;                  /* AUTO: price of one level of waits, tc__wait_level_ns()
	                     (0: none; the predictor leaves it 0) */
	int shm;                           /* AUTO: where it takes the machine's own algorithms
	                     (TC__ALG_SHM, tc__shm_pick()): tc__shm_team(),
	                     TC__SHM_CPUS or TC__SHM_FIBRES; TC__SHM_NONE (0):
	                     never, also in the predictor */
	int cpus;                          /* AUTO: the CPUs that a native team's ranks share when
	                     they outnumber them (0: a CPU per rank, an emulated
	                     team, or the predictor) */
	const struct tc_calibration *cal;  /* AUTO: the team's calibration where it
	                                       prices with it (g->shm and the
	                                       concurrency tables; else NULL) */
	const struct tc_rank_place *place; /* with cal: the team's placement, p
	                                       entries (NULL: unknown) */
	int unstaged;                      /* with cal: the team's waiters do not spin
	                     (spin_ns 0), so its shm reductions run unstaged
	                     (lib/coll/shm_flat.c) and are priced so */
	int me;                            /* the rank building its plan, or -1 (prediction):
	                     nothing may depend on it but what is local */
	int q;                             /* shift: q mod p, in [0, p) */
	int shift_ring;                    /* shift: q counts ring positions (tc__shift_dest) */
	const int *members;                /* multicast: the destinations, ascending, without
	                       the root and without duplicates */
	int nmembers;
	int max_x, max_moving;         /* limits of a schedule built to be priced or
	                          predicted (struct tc__sched; 0: none) */
	long max_hops;                 /* the limit on its link crossings, checked by
	                     tc__coll_select for a named algorithm (0: none) */
	int count_only;                /* count the transfers, store none */
	const struct tc__vmatrix *vmx; /* the variable-count collectives
	                                  (TC_CF_VCOUNT): who sends what to
	                                  whom (lib/coll/vcount/vcount.h) */
};

/* Where rank r's block goes in g's shift: (r + q) mod p, or along the
 * topology's ring (tc__ring_node) with g->shift_ring; -1 when t has no
 * ring then (the generator returns TC_ENOTSUP). */
static inline int tc__shift_dest(const struct tc__gen *g, int r)
{
	if (!g->shift_ring)
		return (r + g->q) % g->p;
	int pos = tc__ring_pos(g->t, r);
	return pos < 0 ? -1 : tc__ring_node(g->t, pos + g->q);
}

/* Where rank r's block goes in a permutation collective: tc__shift_dest()
 * for the shift, G^-1(r) for gray2binary and G(r) for binary2gray (G =
 * tc_gray()); -1 where it has no destination on this team (a shift along a
 * ring the topology lacks; a Gray code outside [0, p) when p is not a power
 * of two).  r itself for the other collectives. */
static inline int tc__perm_dest(const struct tc__gen *g, int r)
{
	uint32_t d;
	switch (g->coll) {
	case TC_COLL_SHIFT:
		return tc__shift_dest(g, r);
	case TC_COLL_GRAY2BINARY:
		d = tc_gray_inverse((uint32_t)r);
		break;
	case TC_COLL_BINARY2GRAY:
		d = tc_gray((uint32_t)r);
		break;
	default:
		return r;
	}
	return d < (uint32_t)g->p ? (int)d : -1;
}

/* The closed form of a `direct` round (allgather, alltoall, reduce_scatter:
 * every rank sends m bytes to each other one in one round), where it holds:
 * tc_cost_direct_round() on a topology of diameter 1 under full duplex, 0 at
 * p = 1, NAN elsewhere (the routes share links there). */
double tc__direct_round_ns(const struct tc__gen *g);

/* The canonical member set of a multicast (tc__gen.members): members[0 ..
 * n) sorted into out (n entries of room), duplicates refused, the root
 * dropped; *nout gets the count.  0, TC_EINVAL (n < 0, members NULL with
 * n > 0, a duplicate), TC_ERANK (a member outside [0, p)). */
int tc__members_canon(int p, int root, const int *members, int n, int *out, int *nout);

/* The size of rank r's block, in bytes (every block is g->bytes today). */
static inline uint64_t tc__gen_block(const struct tc__gen *g, int r)
{
	(void)r;
	return g->bytes;
}

typedef int (*tc__gen_fn)(const struct tc__gen *g, struct tc__sched *s);
/* The source's closed form for this call, ns; NAN where the source has none. */
typedef double (*tc__formula_fn)(const struct tc__gen *g);

enum {
	TC__ALG_DUAL = 1u << 0,     /* the dual (collectives.def) of the generator
	                              of the same name of the dual_of collective */
	TC__ALG_ORDERED = 1u << 1,  /* combines in rank order (non-commutative ops) */
	TC__ALG_SPLITS = 1u << 2,   /* splits the message (packets, blocks): the
	                              unsplit-message lower bounds of [KKA-I] do
	                              not apply */
	TC__ALG_FALLBACK = 1u << 4, /* AUTO prices it by the model only where
	                               no other algorithm of the collective
	                               applies (its modelled time is not
	                               trustworthy enough to compete: `direct`'s
	                               routes share links the simulator does not
	                               charge); priced on the machine
	                               (oversubscribed teams) it competes */
	TC__ALG_EXACT = 1u << 5,    /* its formula, where not NAN, is the
	                               modelled time (to the picosecond), so
	                               AUTO prices it without building the
	                               schedule; tests/test_registry.c proves it
	                               over the test matrix */
	TC__ALG_SHM = 1u << 6,      /* the machine's own algorithm: a native run
	                               reads the peers' buffers and flags
	                               (lib/coll/shm.h) instead of running the
	                               schedule, which serves the prediction and
	                               emulated runs; AUTO takes it only where
	                               tc__shm_pick() (lib/coll/machine.c) says */
	TC__ALG_READS_IN = 1u << 3, /* a reduction that reads its contribution
	                               from TC__BUF_IN itself (the framework does
	                               not copy it into OUT first); implied for
	                               collectives whose input and output differ
	                               in size */
};

/*
 * Restrictions of an algorithm, as tokens of the registry's `req` column,
 * checked once before generation (tc__alg_check) and reused by the tests
 * through tc_alg_applies().  Topology kinds: none listed means any; several
 * mean one of them.  The generator still refuses what it cannot do.
 */
#define TC__R_KIND(k) (1u << (k))
enum {
	TC__R_ANY = 0,
	TC__R_COMPLETE = TC__R_KIND(TC_TOPO_COMPLETE),
	TC__R_RING = TC__R_KIND(TC_TOPO_RING),
	TC__R_CHAIN = TC__R_KIND(TC_TOPO_CHAIN),
	TC__R_MESH = TC__R_KIND(TC_TOPO_MESH),
	TC__R_TORUS = TC__R_KIND(TC_TOPO_TORUS),
	TC__R_HYPERCUBE = TC__R_KIND(TC_TOPO_HYPERCUBE),
	TC__R_STAR = TC__R_KIND(TC_TOPO_STAR),
	TC__R_TREE = TC__R_KIND(TC_TOPO_TREE),
	TC__R_KINDS = 0xffu,
	/* the Hamiltonian rings of lib/topo/embed.h */
	TC__R_RINGS = TC__R_RING | TC__R_COMPLETE | TC__R_HYPERCUBE,
	TC__R_GRIDS = TC__R_MESH | TC__R_TORUS,
	TC__R_POW2 = 1u << 16,         /* p a power of two */
	TC__R_ALLPORT = 1u << 17,      /* the all-port model */
	TC__R_ONEPORT = 1u << 18,      /* the one-port model */
	TC__R_2D = 1u << 19,           /* two dimensions (a 2-D mesh or torus) */
	TC__R_CUBE_BY_RING = 1u << 20, /* on a hypercube only with shift_ring
	                                  (a shift along its Gray-code ring) */
	TC__R_COMBINING = 1u << 21,    /* the combining model (md->combining) */
	TC__R_HRING = 1u << 22,        /* a Hamiltonian ring (tc__hring_embeds(),
	                           lib/topo/embed.h): narrows a mesh or torus
	                           of the listed kinds to those with one */
};

struct tc__alg {
	enum tc_coll coll;
	const char *name;
	tc__gen_fn gen;
	tc__formula_fn formula;
	unsigned flags;
	unsigned req;           /* TC__R_* */
	const char *topologies; /* where it applies, for --help and the README */
};

#define TC__ALG(coll, name, gen, formula, flags, req, topos)   \
	int gen(const struct tc__gen *g, struct tc__sched *s); \
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
/* One routed transfer per rank, IN to OUT of tc__perm_dest(), in one round
 * (shift_direct.c; also gray_direct.c's and hypercube_ct's schedule):
 * TC_ENOTSUP where a rank has no destination. */
int tc__gen_perm_direct(const struct tc__gen *g, struct tc__sched *s);
/* Whether every rank of [1, p) is a neighbour of rank 0 both ways
 * (allreduce_linear.c). */
int tc__neighbours_of_0(const struct tc_topo *t, int p);
/* Splits count elements into nblk blocks as evenly as possible; block k is
 * [*off, *off + *len) in bytes. */
void tc__block(uint64_t bytes, uint64_t esize, int nblk, int k, uint64_t *off, uint64_t *len);
/* Recursive halving on positions [lo, hi] held by h: emits through
 * emit(ctx, from, to) the transfers of round `depth` (bcast_ring_rd.c; shared
 * with bcast_mesh.c, which runs it on every line of a dimension). */
int tc__rd_halving_round(int lo, int hi, int h, int depth, int (*emit)(void *ctx, int from, int to),
                         void *ctx);

/* The checker numbers the p^2 blocks of an alltoall or a reduce_scatter
 * (piece o p + j) in an int32: 0 when p^2 fits, else TC_ELIMIT with
 * tc_error_detail() naming the limit (at most 46340 ranks). */
int tc__pieces_p2(const struct tc__gen *g, const char *alg);

#endif /* TC_COLL_GEN_H */
