/* SPDX-License-Identifier: MIT */
/* lib/coll/vcount/vcount.h - the variable-count collectives' call and matrix
 * (vcount.c), and their schedule generators (vcount_pairwise.c, p rounds;
 * vcount_direct.c, the same transfers in one round: its contract and closed
 * form in its header). */
#ifndef TC_COLL_VCOUNT_H
#define TC_COLL_VCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"
#include "topocoll.h"

enum tc__vkind { TC__V_ALLGATHERV, TC__V_GATHERV, TC__V_SCATTERV, TC__V_ALLTOALLV };
/* A rank's row of the agreed matrix: four arrays of p numbers, in this
 * order (struct tc__vmatrix). */
enum { TC__V_SEND = 0, TC__V_SOFF, TC__V_RECV, TC__V_ROFF, TC__V_N };

/* A v-call as the public functions take it (counts and displacements in
 * elements; the arrays a kind does not use are NULL). */
struct tc__vcall {
	enum tc__vkind kind;
	const void *sbuf;
	size_t scount;                   /* allgatherv, gatherv */
	const size_t *scounts, *sdispls; /* scatterv (root), alltoallv */
	void *rbuf;
	size_t rcount;                   /* scatterv */
	const size_t *rcounts, *rdispls; /* allgatherv, gatherv (root), alltoallv */
	enum tc_dtype dt;
	int root;
};
int tc__vcoll(struct tc_proc *proc, const struct tc__vcall *v, const struct tc_coll_opts *opts);

/* The agreed matrix of a v-call: rank i's row is rows + i stride, four
 * arrays of p numbers: bytes it sends to each j, their offset in its send
 * buffer, bytes it receives from each j, their offset in its receive
 * buffer (all in bytes). */
struct tc__vmatrix {
	int p;
	const uint64_t *rows;
	size_t stride;
	uint64_t uniform; /* rows and blocks NULL: every rank sends `uniform`
	                      bytes from offset 0 to every rank, which stores
	                      rank i's at i uniform (an allgather of any topology) */
	/* rows NULL, blocks not: the 2p numbers of a predicted allgatherv,
	 * gatherv or scatterv (coll, root): the bytes of rank i's block, then
	 * its offset in the packed buffer of blocks.  Allgatherv: i sends its
	 * block from offset 0 to every j, stored at offset i; gatherv: only to
	 * the root; scatterv: the root sends block j from offset j to j, stored
	 * at 0; alltoallv (every count the same, blocks[0] bytes): i sends to j
	 * from offset j, stored at offset i.  O(p) memory where the rows take 4 p^2 numbers (512 MB at
	 * p = 4096). */
	const uint64_t *blocks;
	enum tc_coll coll;
	int root;
	uint64_t hash; /* of the rows (tc__vm_hash), for the schedule caches */
};

/* The numbers of p rows of stride (a matrix's rows). */
static inline size_t tc__vm_words(int p, size_t stride)
{
	return (size_t)p * stride;
}

/* A hash of mx's rows (FNV-1a over the numbers; 0 without rows). */
static inline uint64_t tc__vm_hash(const struct tc__vmatrix *mx)
{
	if (!mx->rows)
		return 0;
	uint64_t h = 1469598103934665603ull;
	const size_t n = tc__vm_words(mx->p, mx->stride);
	for (size_t k = 0; k < n; k++)
		h = (h ^ mx->rows[k]) * 1099511628211ull;
	return h;
}

/* What rank i sends to rank j under mx: bytes (0: nothing), the offset in
 * i's send buffer and in j's receive buffer. */
static inline uint64_t tc__vm_block(const struct tc__vmatrix *mx, int i, int j, uint64_t *soff,
                                    uint64_t *roff)
{
	if (mx->rows) {
		const uint64_t *ri = mx->rows + (size_t)i * mx->stride;
		const uint64_t *rj = mx->rows + (size_t)j * mx->stride;
		*soff = ri[(size_t)mx->p + (size_t)j];
		*roff = rj[3 * (size_t)mx->p + (size_t)i];
		return ri[j];
	}
	if (!mx->blocks) {
		*soff = 0;
		*roff = (uint64_t)i * mx->uniform;
		return mx->uniform;
	}
	const uint64_t *b = mx->blocks, *off = mx->blocks + mx->p;
	*soff = *roff = 0;
	switch (mx->coll) {
	case TC_COLL_ALLGATHERV:
		*roff = off[i];
		return b[i];
	case TC_COLL_GATHERV:
		*roff = off[i];
		return j == mx->root ? b[i] : 0;
	case TC_COLL_ALLTOALLV:
		*soff = off[j];
		*roff = off[i];
		return b[0];
	default: /* scatterv */
		*soff = off[j];
		return i == mx->root ? b[j] : 0;
	}
}

/* The pairwise schedule of a v-call: round 0 every rank copies what it sends
 * itself; round k = 1 .. p-1 rank i sends its block for (i + k) mod p
 * straight there (routed where not a neighbour), skipping empty blocks.  At
 * most one send and one receive per rank and round, so the one-port model
 * holds.  Cost: sum over rounds of the slowest transfer; for equal blocks
 * of m bytes on a complete graph tc_cost_alltoall_pairwise()
 * (include/topocoll/cost.h).  Any topology. */
int tc__gen_vcount_pairwise(const struct tc_topo *t, const struct tc__vmatrix *mx, struct tc__sched *s);

/*
 * The v-collectives in the registry (algorithms.def, `pairwise` of
 * allgatherv, gatherv, scatterv, alltoallv): the generator of the call's
 * matrix g->vmx (TC_EINVAL without one) and its closed form.  The closed
 * form, where it holds: every non-empty block between two different ranks
 * of the same m bytes, and each of the rounds 1 .. p-1 moving one at least
 * (equal counts: allgatherv, alltoallv, and gatherv and scatterv whose
 * root takes or gives one block a round), on a topology of diameter 1,
 * one-port, full duplex: tc_cost_alltoall_pairwise() (the p-1 rounds of one
 * message per rank, t_h once per message under cut-through), 0 when
 * nothing moves or p = 1; NAN elsewhere: gatherv and scatterv under cut-through (the root's port streams the p-1 blocks, t_h
 * paid once: (p-1)(t_s + m t_w) + t_h, asserted by the tests), all-port (a
 * gatherv's root takes its p-1 blocks at once), half duplex (a round's two
 * directions share a link), unequal blocks (the sum over the rounds of the
 * slowest transfer where every rank moves in every round, less where
 * rounds overlap), diameter above 1 (routes share links).
 */
struct tc__gen;
int tc__gen_vcount(const struct tc__gen *g, struct tc__sched *s);
double tc__f_vcount_pairwise(const struct tc__gen *g);
int tc__gen_vcount_direct(const struct tc__gen *g, struct tc__sched *s);
double tc__f_vcount_direct(const struct tc__gen *g);

/*
 * The matrix of a predicted v-call (struct tc_call's counts and matrix, in
 * elements of esize bytes, displacements packed): *rows gets the numbers of
 * mx (the caller frees it, also on an error): the 2p blocks of the compact
 * form, or for an alltoallv whose counts differ 4p x p.  TC_EINVAL (the
 * array the collective takes missing, the other given), TC_EOVERFLOW (a
 * block, or a buffer of blocks, above TC_MAX_MESSAGE bytes), TC_ENOMEM.
 */
int tc__vmatrix_of_call(enum tc_coll coll, int p, int root, size_t esize, const size_t *counts,
                        const size_t *matrix, struct tc__vmatrix *mx, uint64_t **rows);

#endif
