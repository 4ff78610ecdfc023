/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/calprice.h - what the calibrated price's two files share
 * (lib/coll/calprice.c: a call's price, the pair's prediction with the
 * concurrency charges of its rounds; lib/coll/calprice_shm.c: the price of
 * the machine's own algorithms).  Private to those two.
 */
#ifndef TC_COLL_CALPRICE_H
#define TC_COLL_CALPRICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tc_calibration;
struct tc_transfer;
struct tc_rank_place;
struct tc_call;

/*
 * Where a schedule's data live, for the copy table's price: the bytes the
 * call touches, each buffer of each rank counted once over the span of its
 * offsets that the transfers read or write (a block that every rank reads,
 * an allgather's, counts once; the blocks of an alltoall each), and the
 * bytes each rank receives over the whole call (vol[np]).  When the
 * footprint exceeds the last-level cache the data come from memory: every
 * read is priced at the table's memory-sized block (mem).  Otherwise a
 * rank's reads are priced at the size of all it receives in the call,
 * capped at the largest block of the table that the table's copiers, all
 * at once, hold in the last-level cache (cached; no cap when the cache is
 * unknown): what a rank takes in over the call is what stays in, or
 * streams through, its caches (a pipeline's packets arrive one after
 * another, but a 4 MiB vector of them passes through L3, not L1), and a
 * footprint within the last level is read from there, not from memory.
 * tc__cal_col() gives that size for a rank.  The machine's own algorithms
 * read each block out of its writer's buffer, and where the call's
 * footprint takes at most half the last-level cache (roomy) such a read is
 * priced at the size of the block itself: the block sits where its writer
 * left it, as the table's source of that size does, whatever else the
 * reader takes in (on 16-vCPU guests the allgather, alltoall, allreduce
 * and reduce_scatter of 1 MiB blocks at p = 8, 72 MiB of a 300 MiB L3,
 * ran 30-45% under a price read at what each rank took in; past half the
 * cache, the other ranks' data and the call's own outputs evict it).
 */
struct tc__cal_data {
	bool mem;      /* the footprint exceeds the last-level cache */
	size_t big;    /* the table's memory-sized block (0: no table) */
	size_t cached; /* its largest block held in that cache (0: no cap) */
	uint64_t *vol; /* per rank, bytes received over the call */
	bool roomy;    /* the footprint is at most half the last-level cache */
};

/* Sets *d for the schedule tr[0..n) over np ranks (d->vol allocated: the
 * caller frees it).  TC_OK or TC_ENOMEM. */
int tc__cal_data_init(const struct tc_calibration *cal, const struct tc_transfer *tr, int n, int np,
                      struct tc__cal_data *d);

/* The block size at which the copy table prices rank r's reads of
 * `bytes` (above). */
size_t tc__cal_col(const struct tc__cal_data *d, int r, uint64_t bytes);

/* The shared-memory price of a schedule tr[0..n) of algorithm alg (a
 * TC__ALG_SHM one) of call over np ranks, its data where data says, each
 * round's hand-off from place (NULL: unknown), local combines at tc ns a
 * byte, the reductions unstaged where `unstaged` (else staged where
 * tc__shm_layout() says): *ns, NAN without the concurrency tables
 * (lib/coll/calprice_shm.c describes it).  TC_OK or TC_ENOMEM. */
int tc__cal_shm_ns(const struct tc_calibration *cal, const struct tc_transfer *tr, int n, int np,
                   const struct tc__cal_data *data, const struct tc_rank_place *place, bool unstaged,
                   const struct tc_call *call, const char *alg, double tc, double *ns);

#endif /* TC_COLL_CALPRICE_H */
