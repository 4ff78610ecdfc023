/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/shm_flat.c - the calls of the machine's own algorithms that
 * synchronise the whole team at once (every algorithm but shm_tree, in
 * lib/coll/shm_tree.c), on the flags' protocol of lib/coll/shm.c.
 *
 * Per collective, call k, rank `me`, peers r != me (visited from me + 1 on,
 * so that the ranks do not all read the same peer first):
 *   barrier   publish (k, 1); wait for every (k, 1).
 *   allgather small (m <= TC__SHM_INLINE): the block in the flag; publish
 *             (k, 1); read every peer's flag.  Medium (p m <= TC__SHM_AREA):
 *             the same with the block in this rank's area of parity k & 1.
 *             Else: publish IN; wait for each peer's (k, 1) and copy its
 *             block out of its IN; publish (k, 2); wait for every (k, 2)
 *             (nobody reads our IN after).
 *   alltoall  as allgather, block me of every peer's IN, flag or area (the
 *             p blocks published, p m bytes, decide which; the own block is
 *             not copied there, nobody reads it).
 *   bcast     small: the root writes the data into its ring's entry of
 *             call k and returns; a non-root waits for it, copies,
 *             publishes (k, 2).  Else the root publishes its buffer and
 *             waits for every (k, 2).  Among a few ranks and from
 *             TC__SHM_HELP_MIN bytes (tc__shm_bcast_cut()), the root,
 *             which would only wait, copies the tail of the message into
 *             each reader's buffer meanwhile: a reader publishes (k, 1)
 *             with its OUT, copies the head out of the root's buffer,
 *             publishes (k, 2) and waits for the root's (k, 2); the root
 *             publishes (k, 1), copies each reader's tail as it finds its
 *             (k, 1), publishes (k, 2) and waits for every (k, 2).
 *   allreduce shm: publish IN and where this rank's slice will lie (its
 *             slice buffer of parity k & 1 when the slice is at most
 *             TC__SHM_SLICE, else OUT); wait for every (k, 1); reduce
 *             this rank's slice of every IN in rank order there; publish
 *             (k, 2); copy it to OUT; wait for each (k, 2) (the peer's
 *             reads of our IN are over) and copy the peer's slice.  Two
 *             synchronisations: a slice in the buffer is library memory,
 *             nobody reads the caller's buffers after.  A slice in OUT:
 *             publish done and wait for every peer's done (a third).
 *   allreduce shm_flag: every rank reduces the whole vector, in rank
 *             order, from the flags (small) or from the peers' IN (then a
 *             phase (k, 2) as allgather).
 *   scatter   as bcast, the root's p blocks (p m bytes) in its flag, its
 *             area (p m <= TC__SHM_AREA) or IN; a non-root copies block me.
 *   gather    every rank's block as allgather's (flag, area or IN); the
 *             root reads them all; where they were in IN, it publishes
 *             (k, 2), which the others wait for; else they return at once.
 *   reduce_scatter shm: as alltoall, but every rank reduces block me of
 *             the p contributions, in rank order, into OUT.
 *   The reductions (reduce_scatter, allreduce shm's slices, shm_flag out
 *             of IN) on teams whose waiters spin, from p = 3 on: each
 *             peer's operand is copied into the rank's stage as its flag
 *             is found, and the sums are made there (tc__shm_stages()).
 *   barrier, allreduce shm_tree: members signal their group's leader in
 *             their flags (the vector in the flag's data), the leaders
 *             synchronise flat and release their members with their own
 *             flag (tc__shm_tree()).
 * The reductions are in rank order, (..((x_0 + x_1) + x_2) ..), on every
 * rank: every rank gets the same bits (shm_tree: the groups' results in
 * rank order, ((x_0 + x_1) + ...) + ((x_8 + x_9) + ...), the same bits on
 * every rank).
 */
#include "coll/shm_run.h"

#include <stdlib.h>
#include <string.h>

#include "base/copy.h"
#include "sched/exec.h"

/* ---- the collectives ---------------------------------------------------- */

/* Every peer's (k, 1), with its block's data; calls got(c, r) after each
 * (NULL: none). */
static int tc__shm_read_all(struct tc__shm_ctx *c, void (*got)(struct tc__shm_ctx *, int))
{
	int err = tc__shm_sweep(c, 1, 1, got);
	if (!err)
		tc__shm_seen_done(c, (int64_t)c->k - 1);
	return err;
}

int tc__shm_barrier(struct tc__shm_ctx *c)
{
	int err = tc__shm_round_post(c, TC_COLL_BARRIER);
	return err ? err : tc__shm_read_all(c, NULL);
}

/* allgather and alltoall: rank r's block m of OUT, out of r's flag, area
 * or IN (alltoall: block me of r's p blocks). */
static void tc__shm_got_block(struct tc__shm_ctx *c, int r)
{
	const struct tc__shm_block *pb = tc__shm_blk(c, r);
	const unsigned char *src = c->in_area ? tc__shm_area(c, r)
	                           : c->small ? pb->data
	                                      : (const unsigned char *)pb->in;
	unsigned char *dst = (unsigned char *)c->io->out + (uint64_t)r * c->m;
	if (c->stream)
		tc__copy_stream(dst, src + c->src_off, c->m);
	else if (c->m)
		memcpy(dst, src + c->src_off, c->m);
}

/* Where the call's published bytes travel: the flag (at most
 * TC__SHM_INLINE), this rank's area (the call's output of p m bytes at
 * most TC__SHM_AREA), else the caller's buffer. */
static enum tc__shm_via tc__shm_route_of(int p, uint64_t m, uint64_t published)
{
	return published <= TC__SHM_INLINE       ? TC__SHM_VIA_FLAG
	       : (uint64_t)p * m <= TC__SHM_AREA ? TC__SHM_VIA_AREA
	                                         : TC__SHM_VIA_IN;
}

static void tc__shm_route(struct tc__shm_ctx *c, uint64_t published)
{
	const enum tc__shm_via v = tc__shm_route_of(c->p, c->m, published);
	c->in_area = v == TC__SHM_VIA_AREA;
	c->small = v != TC__SHM_VIA_IN;
}

/* Whether the reductions stage at all: TC_SHM_STAGE=0 in the environment
 * says no, to the runs and to the price (a diagnostic: bench/stage.sh
 * times the staged and the unstaged reductions in one run, and
 * `TC_SHM_STAGE=0 ./tools/bench replay` prices the reports made before
 * the stage as they ran).  Looked up by the first calls, then kept. */
static bool tc__shm_stage_on(void)
{
	static _Atomic int on = -1;
	int v = atomic_load_explicit(&on, memory_order_relaxed);
	if (v < 0) {
		const char *e = getenv("TC_SHM_STAGE");
		v = !(e && !strcmp(e, "0"));
		atomic_store_explicit(&on, v, memory_order_relaxed);
	}
	return v;
}

struct tc__shm_layout tc__shm_layout(enum tc_coll coll, const char *alg, int p, uint64_t m)
{
	struct tc__shm_layout l = {.via = TC__SHM_VIA_IN, .syncs = 1, .reader_bytes = m};
	const uint64_t pm = (uint64_t)(p > 0 ? p : 1) * m;
	switch (coll) {
	case TC_COLL_BARRIER:
		l.via = TC__SHM_VIA_FLAG;
		break;
	case TC_COLL_ALLGATHER:
	case TC_COLL_GATHER:
		l.via = tc__shm_route_of(p, m, m);
		break;
	case TC_COLL_REDUCE_SCATTER:
		l.staged = tc__shm_stages(p, m) && tc__shm_stage_on(); /* tc__shm_reduce_scatter */
		l.after_sweep = !l.staged;
		/* fall through */
	case TC_COLL_ALLTOALL:
	case TC_COLL_SCATTER:
		l.via = tc__shm_route_of(p, m, pm);
		l.per_reader = true;
		break;
	case TC_COLL_BCAST:
		l.via = m <= TC__SHM_INLINE ? TC__SHM_VIA_FLAG : TC__SHM_VIA_IN;
		l.reader_bytes = tc__shm_bcast_cut(p, m);
		break;
	case TC_COLL_ALLREDUCE:
		if (alg && !strcmp(alg, "shm")) {
			/* The slices: a second synchronisation, and a third
			 * where a slice exceeds its buffer (it lies in OUT). */
			const uint64_t slice = m / (uint64_t)(p > 0 ? p : 1);
			l.syncs = slice <= TC__SHM_SLICE ? 2 : 3;
			l.via = TC__SHM_VIA_IN;
			/* The largest slice's owner, within an element (the
			 * layout knows bytes, not elements). */
			l.staged = tc__shm_stages(p, (m + (uint64_t)p - 1) / (uint64_t)(p > 0 ? p : 1)) &&
			           tc__shm_stage_on();
		} else {
			l.via = alg && !strcmp(alg, "shm_tree") ? TC__SHM_VIA_FLAG
			        : m <= TC__SHM_INLINE           ? TC__SHM_VIA_FLAG
			                                        : TC__SHM_VIA_IN;
			l.staged = l.via == TC__SHM_VIA_IN && tc__shm_stages(p, m) &&
			           tc__shm_stage_on();
		}
		/* tc__shm_reduce after tc__shm_read_all, unless staged */
		l.after_sweep = !l.staged;
		break;
	default:
		break;
	}
	/* Readers of IN: a second synchronisation, after which the owner
	 * may change it. */
	if (l.via == TC__SHM_VIA_IN && l.syncs < 2 && m)
		l.syncs = 2;
	return l;
}

/* Copies the published bytes of in into this rank's flag b or area, once
 * tc__shm_fill() has said that no peer reads them any more: `published`
 * bytes, less the block of m at c->src_off where skip is set (this rank's
 * own, which no peer reads). */
static void tc__shm_put(struct tc__shm_ctx *c, struct tc__shm_block *b, const unsigned char *in,
                        uint64_t published, int skip)
{
	if (!c->small || !published)
		return;
	unsigned char *dst = c->in_area ? tc__shm_area(c, c->me) : b->data;
	if (skip) {
		memcpy(dst, in, c->src_off);
		memcpy(dst + c->src_off + c->m, in + c->src_off + c->m, published - c->src_off - c->m);
	} else {
		memcpy(dst, in, published);
	}
}

/* allgather and alltoall up to (k, 1): the own block into OUT, the
 * published ones where the route says. */
static int tc__shm_gather_all_post(struct tc__shm_ctx *c, int a2a)
{
	const uint64_t m = c->m;
	const unsigned char *in = c->io->in;
	c->src_off = a2a ? (uint64_t)c->me * m : 0;
	if (m)
		memcpy((unsigned char *)c->io->out + (uint64_t)c->me * m, in + c->src_off, m);
	const uint64_t published = a2a ? (uint64_t)c->p * m : m;
	tc__shm_route(c, published);
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, in, c->io->out, &b);
	if (err)
		return err;
	tc__shm_put(c, b, in, published, a2a); /* alltoall's own block stays out */
	tc__shm_publish(c, 1);
	return TC_OK;
}

int tc__shm_gather_all(struct tc__shm_ctx *c, int a2a)
{
	int err = tc__shm_gather_all_post(c, a2a);
	if (!err)
		err = tc__shm_read_all(c, tc__shm_got_block);
	if (err || c->small || !c->m)
		return err;
	tc__shm_publish(c, 2);
	return tc__shm_await_all(c, 2, 1);
}

uint64_t tc__shm_bcast_cut(int p, uint64_t m)
{
	if (p < 2 || p > TC__SHM_HELP_MAX_P || m < TC__SHM_HELP_MIN)
		return m;
	/* The root's pushes are remote writes, about 1.25 times a reader's
	 * remote reads per byte (below): the root's p - 1 tails of m - cut
	 * bytes at 1.25 take what a reader's head of cut bytes takes when
	 * cut = m 5 (p - 1) / (5 (p - 1) + 4): the root copies 4/9 of the
	 * message at p = 2, 4/19 of each reader's at p = 4. */
	const uint64_t n = (uint64_t)(p - 1) * 5;
	const uint64_t cut = (m / (n + 4) * n + (m % (n + 4)) * n / (n + 4) + 63) & ~UINT64_C(63);
	return cut < m ? cut : m;
}

/* The root's share of a helped bcast: the tail of rank r's message,
 * written straight into its OUT. */
static void tc__shm_push_tail(struct tc__shm_ctx *c, int r)
{
	const uint64_t cut = tc__shm_bcast_cut(c->p, c->m);
	memcpy((unsigned char *)tc__shm_blk(c, r)->out + cut,
	       (const unsigned char *)c->io->out + cut, c->m - cut);
}

int tc__shm_bcast(struct tc__shm_ctx *c, int root)
{
	const uint64_t m = c->m;
	const int small = m <= TC__SHM_INLINE;
	const uint64_t cut = small ? m : tc__shm_bcast_cut(c->p, m);
	if (c->me == root) {
		struct tc__shm_block *b;
		int err = tc__shm_claim(c, small, c->io->out, c->io->out, &b);
		if (err)
			return err;
		if (!small && cut < m) {
			tc__shm_publish(c, 1);
			err = tc__shm_sweep(c, 1, 1, tc__shm_push_tail);
			if (err)
				return err;
			tc__shm_publish(c, 2);
			return tc__shm_await_all(c, 2, 1);
		}
		if (!small) {
			tc__shm_publish(c, 1);
			return tc__shm_await_all(c, 2, 1);
		}
		if (m)
			memcpy(b->data, c->io->out, m);
		/* Release: the entry's data before its step, as
		 * tc__shm_publish(). */
		atomic_store_explicit(&b->step, tc__shm_step(c, 1), memory_order_release);
		return TC_OK;
	}
	if (cut < m) {
		/* Helped: our OUT for the root, the head out of its buffer;
		 * then its tail in our OUT. */
		struct tc__shm_block *b;
		int err = tc__shm_fill(c, NULL, c->io->out, &b);
		if (err)
			return err;
		tc__shm_publish(c, 1);
		if ((err = tc__shm_await_data(c, root, 1)) != 0)
			return err;
		memcpy(c->io->out, tc__shm_blk(c, root)->in, cut);
		tc__shm_publish(c, 2);
		return tc__shm_await(c, root, 2);
	}
	/* A non-root writes no data of its own, only its step. */
	const struct tc__shm_block *rb = small ? tc__shm_ring(c, root) : tc__shm_blk(c, root);
	int err = small ? tc__shm_await_word(c, root, &rb->step, &tc__shm_blk(c, root)->step,
	                                     tc__shm_pos(c, 1), 1)
	                : tc__shm_await(c, root, 1);
	if (!err)
		err = tc__shm_take_from(c, root, rb);
	if (err)
		return err;
	if (m)
		memcpy(c->io->out, small ? rb->data : (const unsigned char *)rb->in, m);
	/* The root's next entries, in case more small broadcasts of it
	 * follow: where it runs ahead, they are written already, and their
	 * hand-offs overlap this call's end (complete:2, 8 bytes back to back:
	 * 180 -> 105 ns a call; four entries ahead: 130-150). */
	if (small)
		for (unsigned a = 1; a <= TC__SHM_RING_AHEAD; a++)
			__builtin_prefetch(&c->slots[root].ring[(c->k + a) % TC__SHM_RING], 0, 3);
	tc__shm_publish(c, 2);
	return TC_OK;
}

/* scatter: the root's p blocks published (flag, area or IN); every other
 * rank copies its own out and says so, which the root waits for unless
 * they were in the flag or the area (as bcast). */
int tc__shm_scatter(struct tc__shm_ctx *c, int root)
{
	const uint64_t m = c->m, pm = (uint64_t)c->p * m;
	tc__shm_route(c, pm);
	if (c->me == root) {
		const unsigned char *in = c->io->in;
		struct tc__shm_block *b;
		int err = tc__shm_fill(c, in, c->io->out, &b);
		if (err)
			return err;
		c->src_off = (uint64_t)root * m;
		if (m)
			memcpy(c->io->out, in + c->src_off, m);
		tc__shm_put(c, b, in, pm, 1);
		tc__shm_publish(c, 1);
		return c->small || !m ? TC_OK : tc__shm_await_all(c, 2, 1);
	}
	/* A non-root writes no data of its own, only its step. */
	int err = tc__shm_await_data(c, root, 1);
	if (err)
		return err;
	const struct tc__shm_block *rb = tc__shm_blk(c, root);
	const unsigned char *src = c->in_area ? tc__shm_area(c, root)
	                           : c->small ? rb->data
	                                      : (const unsigned char *)rb->in;
	if (m)
		memcpy(c->io->out, src + (uint64_t)c->me * m, m);
	tc__shm_publish(c, 2);
	return TC_OK;
}

/* gather: every rank's block published (flag, area or IN), the root
 * copies them all; a rank whose block is in its flag or area returns at
 * once, one whose IN the root reads waits for the root's (k, 2). */
int tc__shm_gather(struct tc__shm_ctx *c, int root)
{
	const uint64_t m = c->m;
	const unsigned char *in = c->io->in;
	c->src_off = 0;
	tc__shm_route(c, m);
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, in, c->io->out, &b);
	if (err)
		return err;
	if (c->me != root) {
		tc__shm_put(c, b, in, m, 0);
		tc__shm_publish(c, 1);
		return c->small ? TC_OK : tc__shm_await_data(c, root, 2);
	}
	if (m)
		memcpy((unsigned char *)c->io->out + (uint64_t)root * m, in, m);
	tc__shm_publish(c, 1);
	err = tc__shm_read_all(c, tc__shm_got_block);
	if (!err && !c->small)
		tc__shm_publish(c, 2); /* every IN read */
	return err;
}

/* Rank r's contribution to a reduction: our own IN, or r's area, flag or
 * IN. */
static const void *tc__shm_x(const struct tc__shm_ctx *c, int r)
{
	if (r == c->me)
		return c->io->in;
	return c->in_area ? (const void *)tc__shm_area(c, r)
	       : c->small ? (const void *)tc__shm_blk(c, r)->data
	                  : tc__shm_blk(c, r)->in;
}

/* The reduction of len bytes from off of every rank's contribution:
 * staged where tc__shm_stages() says, on a team whose waiters spin (by
 * default those whose ranks each have a CPU; a team configured to spin
 * too, as the sweep), and this rank's stage can hold them (c->stage;
 * else, out of memory, combined out of the peers' buffers as without it).
 * Set before the sweep that takes the peers' operands.  Not, by default,
 * on teams whose ranks share CPUs: there the ranks run one after another,
 * no convoy forms, and each rank's stage is more memory through the
 * shared caches (a 2-vCPU VM, fibres, reduce_scatter of 16 KiB at p = 16
 * and allreduce of 256 KiB: twice the time). */
static void tc__shm_stage_plan(struct tc__shm_ctx *c, uint64_t off, uint64_t len)
{
	c->stage = NULL;
	if (!c->proc->team->spin_ns || !tc__shm_stages(c->p, len) || !tc__shm_stage_on())
		return;
	struct tc__shm_own *own = tc__shm_own(c);
	const uint64_t need = (uint64_t)(c->p - 1) * len;
	if (own->stage_cap < need) {
		free(own->stage);
		const size_t cap = ((size_t)need + 127) & ~(size_t)127;
		own->stage = aligned_alloc(128, cap);
		own->stage_cap = own->stage ? cap : 0;
	}
	c->stage = own->stage;
	c->stage_off = off;
	c->stage_len = len;
}

/* Where peer r's staged operand lies in the stage. */
static unsigned char *tc__shm_staged(const struct tc__shm_ctx *c, int r)
{
	return c->stage + (uint64_t)((r - c->me - 1 + c->p) % c->p) * c->stage_len;
}

/* Rank r's operand of the reduction, [off, off + len) of its
 * contribution: in the stage where the sweep copied it, else where r
 * published it (our own: IN). */
static const unsigned char *tc__shm_operand(const struct tc__shm_ctx *c, int r, uint64_t off)
{
	if (c->stage && r != c->me)
		return tc__shm_staged(c, r);
	return (const unsigned char *)tc__shm_x(c, r) + off;
}

/* The sweep's take of peer r's operand into the stage (none planned:
 * nothing; it is combined where r published it). */
static void tc__shm_got_operand(struct tc__shm_ctx *c, int r)
{
	if (c->stage)
		memcpy(tc__shm_staged(c, r), (const unsigned char *)tc__shm_x(c, r) + c->stage_off,
		       c->stage_len);
}

/* out[0, len) = x_0 + x_1 + ... + x_{p-1} at [off, off + len), in rank
 * order (the staged operands out of the stage). */
static void tc__shm_reduce(const struct tc__shm_ctx *c, unsigned char *out, uint64_t off, uint64_t len)
{
	const struct tc__exec_io *io = c->io;
	if (!len)
		return;
	io->combine(out, tc__shm_operand(c, 0, off), tc__shm_operand(c, 1, off), len, io->combine_ctx);
	for (int r = 2; r < c->p; r++)
		io->combine(out, out, tc__shm_operand(c, r, off), len, io->combine_ctx);
}

/* This rank's slice buffer of call k's parity, of at least len bytes:
 * (re)allocated when smaller, which no peer reads then (tc__shm_fill():
 * every peer is done with the last call of this parity); NULL when out of
 * memory. */
static unsigned char *tc__shm_slice_buf(struct tc__shm_ctx *c, uint64_t len)
{
	struct tc__shm_own *own = tc__shm_own(c);
	const unsigned par = (unsigned)(c->k & 1);
	if (own->slices_cap[par] < len) {
		free(own->slices[par]);
		const size_t cap = (len + 127) & ~(size_t)127;
		own->slices[par] = aligned_alloc(128, cap);
		own->slices_cap[par] = own->slices[par] ? cap : 0;
	}
	return own->slices[par];
}

/* allreduce shm: rank r's reduced slice into OUT. */
static void tc__shm_got_slice(struct tc__shm_ctx *c, int r)
{
	uint64_t off, len;
	tc__block(c->m, c->esize, c->p, r, &off, &len);
	if (len)
		memcpy((unsigned char *)c->io->out + off, tc__shm_blk(c, r)->out, len);
}

/* allreduce shm: this rank's slice of everyone's IN, then the others'.
 * The reduced slice goes where the peers copy it from: this rank's slice
 * buffer of the call's parity where it fits (rewritten at a later call of
 * that parity only once every peer is done with this one, as the block,
 * tc__shm_fill()), else OUT.  IN is free once every peer has reached
 * (k, 2), which this rank waits for to copy the peers' slices; so with the
 * slice in the buffer it returns then.  With the slice in OUT, which the
 * caller may change after the return, it first waits until every peer is
 * done with the call (its done word).  The choice is each rank's own: a
 * rank's readers find the slice through its block (`out`). */
int tc__shm_allreduce_slices(struct tc__shm_ctx *c)
{
	const int p = c->p, me = c->me;
	unsigned char *out = c->io->out;
	uint64_t off, len;
	tc__block(c->m, c->esize, p, me, &off, &len);
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, c->io->in, out, &b);
	if (err)
		return err;
	unsigned char *mine = len && len <= TC__SHM_SLICE ? tc__shm_slice_buf(c, len) : NULL;
	b->out = mine ? mine : out + off;
	tc__shm_stage_plan(c, off, len);
	tc__shm_publish(c, 1);
	if ((err = tc__shm_read_all(c, tc__shm_got_operand)))
		return err;
	tc__shm_reduce(c, b->out, off, len);
	tc__shm_publish(c, 2);
	if (mine)
		memcpy(out + off, mine, len);
	err = tc__shm_sweep(c, 2, 0, tc__shm_got_slice);
	if (err || mine || !len)
		return err; /* nobody reads OUT */
	tc__shm_done(c);
	for (int i = 1; i < p; i++) {
		const int r = (me + i) % p;
		if ((err = tc__shm_await_word(c, r, &c->slots[r].done, NULL, c->k + 1, 0)))
			return err;
	}
	tc__shm_seen_done(c, (int64_t)c->k);
	return TC_OK;
}

/* allreduce shm_flag up to (k, 1): a small vector into the flag. */
static int tc__shm_allreduce_flat_post(struct tc__shm_ctx *c)
{
	c->small = c->m <= TC__SHM_INLINE;
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, c->io->in, c->io->out, &b);
	if (err)
		return err;
	if (c->small && c->m)
		memcpy(b->data, c->io->in, c->m);
	/* In the flags the vectors come with the lines the sweep reads. */
	if (!c->small)
		tc__shm_stage_plan(c, 0, c->m);
	tc__shm_publish(c, 1);
	return TC_OK;
}

/* allreduce shm_flag: the whole vector from every rank, in rank order. */
int tc__shm_allreduce_flat(struct tc__shm_ctx *c)
{
	int err = tc__shm_allreduce_flat_post(c);
	if (err || (err = tc__shm_read_all(c, tc__shm_got_operand)))
		return err;
	tc__shm_reduce(c, c->io->out, 0, c->m);
	if (c->small)
		return TC_OK;
	tc__shm_publish(c, 2);
	return tc__shm_await_all(c, 2, 1);
}

/* reduce_scatter shm up to (k, 1): the p blocks where the route says. */
static int tc__shm_reduce_scatter_post(struct tc__shm_ctx *c)
{
	const uint64_t m = c->m, pm = (uint64_t)c->p * m;
	const unsigned char *in = c->io->in;
	c->src_off = (uint64_t)c->me * m;
	tc__shm_route(c, pm);
	struct tc__shm_block *b;
	int err = tc__shm_fill(c, in, c->io->out, &b);
	if (err)
		return err;
	tc__shm_put(c, b, in, pm, 1);
	tc__shm_stage_plan(c, c->src_off, m);
	tc__shm_publish(c, 1);
	return TC_OK;
}

/* reduce_scatter shm: block `me` of everyone's IN (or of the p blocks in
 * their flags or areas, the own block left out), reduced in rank order
 * into OUT; a second synchronisation where the peers read our IN. */
int tc__shm_reduce_scatter(struct tc__shm_ctx *c)
{
	const uint64_t m = c->m;
	int err = tc__shm_reduce_scatter_post(c);
	if (err || (err = tc__shm_read_all(c, tc__shm_got_operand)))
		return err;
	tc__shm_reduce(c, c->io->out, c->src_off, m);
	if (c->small || !m)
		return TC_OK;
	tc__shm_publish(c, 2);
	return tc__shm_await_all(c, 2, 1);
}

/* ---- the calls one round completes, in halves (tc__shm_steppable()) ---- */

int tc__shm_round_post(struct tc__shm_ctx *c, enum tc_coll coll)
{
	struct tc__shm_block *b;
	int err;
	switch (coll) {
	case TC_COLL_BARRIER:
		err = tc__shm_fill(c, NULL, NULL, &b);
		if (!err)
			tc__shm_publish(c, 1);
		return err;
	case TC_COLL_ALLGATHER:
	case TC_COLL_ALLTOALL:
		return tc__shm_gather_all_post(c, coll == TC_COLL_ALLTOALL);
	case TC_COLL_ALLREDUCE:
		return tc__shm_allreduce_flat_post(c);
	case TC_COLL_REDUCE_SCATTER:
		return tc__shm_reduce_scatter_post(c);
	default:
		return TC_ENOTSUP;
	}
}

void (*tc__shm_round_got(enum tc_coll coll))(struct tc__shm_ctx *, int)
{
	return coll == TC_COLL_ALLGATHER || coll == TC_COLL_ALLTOALL         ? tc__shm_got_block
	       : coll == TC_COLL_ALLREDUCE || coll == TC_COLL_REDUCE_SCATTER ? tc__shm_got_operand
	                                                                     : NULL;
}

void tc__shm_round_combine(struct tc__shm_ctx *c, enum tc_coll coll)
{
	if (coll == TC_COLL_ALLREDUCE)
		tc__shm_reduce(c, c->io->out, 0, c->m);
	else if (coll == TC_COLL_REDUCE_SCATTER)
		tc__shm_reduce(c, c->io->out, c->src_off, c->m);
}
