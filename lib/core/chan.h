/* SPDX-License-Identifier: MIT */
/*
 * lib/core/chan.h - the SPSC link channel: one producer, one consumer.
 *
 * A channel is a bounded ring of N cache lines (N a power of two).  Each line
 * starts with a 64-bit sequence word followed by 56 bytes of body.  A packet is
 * a 32-byte header (struct tc__pkt_hdr) followed by its payload, laid out as
 * one byte stream over the bodies of n = lines_for(len) consecutive lines
 * (wrapping at the end of the ring).  The line at absolute position i carries
 * seq = i + 1 when it was written in the current lap; the consumer, which
 * always stands on the first line of the next packet, knows a packet is there
 * when that line's seq equals its position + 1.  Every line of a packet gets
 * its seq written, so payload bytes can never be mistaken for a sequence word.
 *
 * Progress: wait-free for one producer and one consumer (every call finishes
 * in a bounded number of its own steps; the "try" calls fail instead of
 * waiting).  Parking and waking live in lib/core/wait.h, the wait that
 * makes progress in lib/p2p/progress.c.
 *
 * Concurrency contract: exactly one thread at a time calls the producer
 * functions (tc__chan_try_push and friends) and one the consumer functions
 * (tc__chan_peek, tc__chan_copy_out, tc__chan_pop).  Handing a side to another
 * thread needs a happens-before edge (the team's thread start and join give
 * one).
 */
#ifndef TC_CORE_CHAN_H
#define TC_CORE_CHAN_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TC__LINE 64
#define TC__BODY 56
#define TC__HDR 32
/* Bytes of payload that fit in a packet of n lines. */
#define TC__PAYLOAD_IN_LINES(n) ((size_t)(n)*TC__BODY - TC__HDR)

/*
 * Where a message stops being streamed through the ring and is copied once,
 * straight out of the sender's buffer (the rendezvous of lib/p2p/p2p.c): the
 * default single_copy_min of a team (lib/core/team.c) and the threshold of
 * the collectives (tc__coll_single_copy_min, lib/p2p/p2p.h) alike.
 *
 * Why 1 KiB: it is the crossover of `./tools/bench channel --crossover`
 * (ping-pong on chain:2, a team that streams everything against one that
 * copies everything once, interleaved, fastest of 15 repetitions; 2-vCPU
 * EPYC VM, 2026-11-24, busy machine).  A streamed message costs two copies
 * (into the ring, out of it) that cannot overlap within one packet, the
 * single copy one copy plus a descriptor and the sender's wait for the
 * receiver's copy, so streaming wins for small messages and loses for large
 * ones.  Measured one-way times (ns) in three machine states:
 *
 *              512 B        1 KiB        2 KiB        4 KiB
 *   quiet      185 / 197    275 / 221    428 / 243    765 / 386
 *   slow       623 / 666   1000 / 801   1545 / 921   2830 / 1485
 *   loaded     900 / 1640  1360 / 1480  2730 / 1150  6880 / 2050
 *   (streamed / single copy)
 *
 * So single copy wins from 512 B - 1 KiB when each rank has its core and
 * from 1-2 KiB when the machine is loaded (the sender's wait then includes
 * the receiver's scheduling); 1 KiB is within 25% of the better path in
 * every state.  A constant rather than a measurement at team creation: the
 * latter costs milliseconds per team and its answer is the noise of the
 * moment.  Re-measure on another machine with the command above.
 */
#define TC__CHAN_SINGLE_COPY_MIN 1024u

/* Packet flags. */
enum {
	TC__PKT_FIRST = 1u << 0, /* first packet of a message: total is valid */
	TC__PKT_LAST = 1u << 1,  /* last packet of a message */
	TC__PKT_RNDV = 1u << 2,  /* single copy: aux points at the sender's request */
};

struct tc__pkt_hdr {
	uint32_t len;   /* payload bytes in this packet */
	uint16_t flags; /* TC__PKT_* */
	uint16_t kind;  /* user message (0) or a collective's tag (lib/p2p/p2p.h) */
	uint64_t total; /* bytes of the whole message (in the first packet) */
	int64_t clock;  /* sender's logical time (ps) */
	uint64_t aux;   /* TC__PKT_RNDV: the sender's struct tc_request * (a
	                   collective's signature is then the 8-byte payload);
	                   otherwise a collective's signature, or 0 */
};
_Static_assert(sizeof(struct tc__pkt_hdr) == TC__HDR, "packet header is 32 bytes");

struct tc__line {
	_Atomic uint64_t seq;
	unsigned char body[TC__BODY];
};
_Static_assert(sizeof(struct tc__line) == TC__LINE, "a ring line is one cache line");

struct tc__doorbell;

struct tc__chan {
	/* Read-only after tc__chan_init(): read by both sides, never written. */
	alignas(TC__LINE) struct tc__line *ring;
	uint64_t mask;                /* N - 1 */
	uint64_t nlines;              /* N */
	struct tc__doorbell *cons_db; /* rung when data is published */
	struct tc__doorbell *prod_db; /* rung when space is freed */
	int src, dst;                 /* ranks at the two ends */
	bool ring_owned;              /* tc__chan_init's ring, freed by tc__chan_fini */

	/* Producer-private. */
	alignas(TC__LINE) uint64_t tail; /* next line the producer writes */
	uint64_t head_cache;             /* producer's copy of head */

	/* Consumer-private. */
	alignas(TC__LINE) uint64_t chead; /* next line the consumer reads */

	/* Written by the consumer, read by the producer when the ring looks full. */
	alignas(TC__LINE) _Atomic uint64_t head;

	/* Wait hints, each written by the side that waits and read by the other. */
	alignas(TC__LINE) _Atomic uint32_t want_data;  /* consumer sleeps on an empty ring */
	alignas(TC__LINE) _Atomic uint32_t want_space; /* producer sleeps on a full ring */
};
_Static_assert(offsetof(struct tc__chan, tail) % TC__LINE == 0, "tail on its own line");
_Static_assert(offsetof(struct tc__chan, chead) - offsetof(struct tc__chan, tail) >= TC__LINE,
               "producer and consumer lines apart");
_Static_assert(offsetof(struct tc__chan, head) - offsetof(struct tc__chan, chead) >= TC__LINE,
               "published head apart from the consumer's private line");
_Static_assert(offsetof(struct tc__chan, want_space) - offsetof(struct tc__chan, want_data) >= TC__LINE,
               "wait hints apart");

/* Creates the ring: nlines must be a power of two >= 2.  Returns 0 or -1. */
int tc__chan_init(struct tc__chan *ch, uint64_t nlines, int src, int dst);
/* The same on a ring the caller owns: nlines zeroed lines at ring (a team's
 * rings are one anonymous mapping, lib/core/team.c).  Returns 0 or -1. */
int tc__chan_init_at(struct tc__chan *ch, struct tc__line *ring, uint64_t nlines, int src, int dst);
void tc__chan_fini(struct tc__chan *ch);
/* Empties a channel whose two sides are both quiescent (no thread inside). */
void tc__chan_reset(struct tc__chan *ch);
/* Bytes of memory the channel owns besides the struct itself. */
static inline size_t tc__chan_ring_bytes(const struct tc__chan *ch)
{
	return (size_t)ch->nlines * TC__LINE;
}

/* Lines needed by a packet with len payload bytes. */
static inline uint64_t tc__lines_for(size_t len)
{
	return (uint64_t)((len + TC__HDR + TC__BODY - 1) / TC__BODY);
}

/*
 * The copies into and out of the ring.  A body is 56 bytes at offset 8 of its
 * line, so a byte stream over bodies is a first partial body, whole bodies,
 * and a last partial one.  Whole bodies are copied with a constant size
 * (the compiler inlines it as a few vector moves; a memcpy call of a
 * variable 56 bytes per line cost more than the copy itself), and the line
 * index advances by one instead of a division per line.
 */

/* Copies len bytes into the body stream starting at stream offset off of the
 * packet whose first line is at absolute position pos, and stores the seq
 * (position + 1, relaxed) of every line after the first that it writes, in
 * the same pass as the line's body (tc__chan_try_push publishes them with
 * the first line's release store).  Producer only; off >= TC__HDR (the first
 * line's seq is the packet's publication, never written here). */
static inline void tc__chan_put(struct tc__chan *ch, uint64_t pos, size_t off, const void *src, size_t len)
{
	const unsigned char *s = src;
	uint64_t li = pos + off / TC__BODY;
	size_t lo = off % TC__BODY;
	if (lo + len <= TC__BODY) { /* within one line */
		memcpy(ch->ring[li & ch->mask].body + lo, s, len);
		return;
	}
	if (lo) {
		size_t n = TC__BODY - lo;
		memcpy(ch->ring[li & ch->mask].body + lo, s, n);
		s += n;
		len -= n;
		li++;
	}
	for (; len >= TC__BODY; len -= TC__BODY, s += TC__BODY, li++) {
		struct tc__line *l = &ch->ring[li & ch->mask];
		/* Relaxed: published by the release store of the first line's
		 * seq in tc__chan_try_push(); only keeps stale payload from
		 * looking like a seq. */
		atomic_store_explicit(&l->seq, li + 1, memory_order_relaxed);
		memcpy(l->body, s, TC__BODY);
	}
	if (len) {
		struct tc__line *l = &ch->ring[li & ch->mask];
		atomic_store_explicit(&l->seq, li + 1, memory_order_relaxed); /* as above */
		memcpy(l->body, s, len);
	}
}

/* Copies len bytes out of the body stream (the consumer's twin of put),
 * prefetching a few lines ahead: the lines come from the producer's cache,
 * and asking for several at once overlaps their transfers. */
#define TC__PREFETCH_LINES 4
static inline void tc__chan_get(const struct tc__chan *ch, uint64_t pos, size_t off, void *dst, size_t len)
{
	unsigned char *d = dst;
	uint64_t li = pos + off / TC__BODY;
	size_t lo = off % TC__BODY;
	if (lo + len <= TC__BODY) { /* within one line */
		memcpy(d, ch->ring[li & ch->mask].body + lo, len);
		return;
	}
	uint64_t last = li + (lo + len - 1) / TC__BODY;
	for (uint64_t k = li + 1; k <= last && k <= li + TC__PREFETCH_LINES; k++)
		__builtin_prefetch(&ch->ring[k & ch->mask], 0, 3);
	if (lo) {
		size_t n = TC__BODY - lo;
		memcpy(d, ch->ring[li & ch->mask].body + lo, n);
		d += n;
		len -= n;
		li++;
	}
	for (; len >= TC__BODY; len -= TC__BODY, d += TC__BODY, li++) {
		if (li + TC__PREFETCH_LINES <= last)
			__builtin_prefetch(&ch->ring[(li + TC__PREFETCH_LINES) & ch->mask], 0, 3);
		memcpy(d, ch->ring[li & ch->mask].body, TC__BODY);
	}
	if (len)
		memcpy(d, ch->ring[li & ch->mask].body, len);
}

/* Free lines as the producer sees them, refreshing its cached head when the
 * cached value does not leave room for want lines. */
static inline uint64_t tc__chan_space(struct tc__chan *ch, uint64_t want)
{
	uint64_t free_lines = ch->nlines - (ch->tail - ch->head_cache);
	if (free_lines < want) {
		/* Acquire: the consumer's release store of head in tc__chan_pop()
		 * ordered its reads of the freed lines before it; we may now
		 * overwrite them. */
		ch->head_cache = atomic_load_explicit(&ch->head, memory_order_acquire);
		free_lines = ch->nlines - (ch->tail - ch->head_cache);
	}
	return free_lines;
}

/*
 * Producer: appends one packet (header + len payload bytes from payload) if
 * there is room.  Returns 1 when published, 0 when the ring has no room
 * (nothing written).  len must satisfy tc__lines_for(len) <= nlines.
 */
static inline int tc__chan_try_push(struct tc__chan *ch, const struct tc__pkt_hdr *hdr,
                                    const void *payload, size_t len)
{
	uint64_t n = tc__lines_for(len);
	if (tc__chan_space(ch, n) < n)
		return 0;
	uint64_t pos = ch->tail;
	/* The header, then the payload line by line (put stores the seq of
	 * every line after the first). */
	memcpy(ch->ring[pos & ch->mask].body, hdr, TC__HDR);
	if (len)
		tc__chan_put(ch, pos, TC__HDR, payload, len);
	/* Release: publishes the header, the payload and the other lines' seq;
	 * pairs with the acquire load of seq in tc__chan_peek(). */
	atomic_store_explicit(&ch->ring[pos & ch->mask].seq, pos + 1, memory_order_release);
	ch->tail = pos + n;
	return 1;
}

/*
 * Consumer: the header of the next packet, copied into *hdr, or 0 when the
 * ring is empty.  Does not consume it.
 */
static inline int tc__chan_peek(struct tc__chan *ch, struct tc__pkt_hdr *hdr)
{
	uint64_t pos = ch->chead;
	/* Acquire: pairs with the release store in tc__chan_try_push(); makes
	 * the header and payload of this packet visible. */
	if (atomic_load_explicit(&ch->ring[pos & ch->mask].seq, memory_order_acquire) != pos + 1)
		return 0;
	tc__chan_get(ch, pos, 0, hdr, TC__HDR);
	return 1;
}

/* Consumer: copies len bytes of the current packet's payload from offset off. */
static inline void tc__chan_copy_out(const struct tc__chan *ch, size_t off, void *dst, size_t len)
{
	tc__chan_get(ch, ch->chead, TC__HDR + off, dst, len);
}

/* Consumer: releases the current packet (of len payload bytes) to the producer. */
static inline void tc__chan_pop(struct tc__chan *ch, size_t len)
{
	ch->chead += tc__lines_for(len);
	/* Release: orders our reads of the packet's lines before the producer
	 * may reuse them; pairs with the acquire load of head in
	 * tc__chan_space(). */
	atomic_store_explicit(&ch->head, ch->chead, memory_order_release);
}

#endif /* TC_CORE_CHAN_H */
