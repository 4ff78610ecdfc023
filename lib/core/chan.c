/* SPDX-License-Identifier: MIT */
/* lib/core/chan.c - creation and reset of SPSC channels (hot paths are in chan.h). */
#include "core/chan.h"

#include <stdlib.h>

int tc__chan_init_at(struct tc__chan *ch, struct tc__line *ring, uint64_t nlines, int src, int dst)
{
	if (nlines < 2 || (nlines & (nlines - 1)) || !ring)
		return -1;
	memset(ch, 0, sizeof *ch);
	/* Zeroed lines carry seq 0, which no position (seq = position + 1)
	 * ever matches. */
	ch->ring = ring;
	ch->nlines = nlines;
	ch->mask = nlines - 1;
	ch->src = src;
	ch->dst = dst;
	return 0;
}

int tc__chan_init(struct tc__chan *ch, uint64_t nlines, int src, int dst)
{
	if (nlines < 2 || (nlines & (nlines - 1)))
		return -1;
	struct tc__line *ring = aligned_alloc(TC__LINE, (size_t)nlines * TC__LINE);
	if (!ring)
		return -1;
	memset(ring, 0, (size_t)nlines * TC__LINE);
	tc__chan_init_at(ch, ring, nlines, src, dst);
	ch->ring_owned = true;
	return 0;
}

void tc__chan_fini(struct tc__chan *ch)
{
	if (ch->ring_owned)
		free(ch->ring);
	ch->ring = NULL;
}

void tc__chan_reset(struct tc__chan *ch)
{
	memset(ch->ring, 0, (size_t)ch->nlines * TC__LINE);
	ch->tail = ch->head_cache = ch->chead = 0;
	atomic_store_explicit(&ch->head, 0, memory_order_relaxed);
	atomic_store_explicit(&ch->want_data, 0, memory_order_relaxed);
	atomic_store_explicit(&ch->want_space, 0, memory_order_relaxed);
}
