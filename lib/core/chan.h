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
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TC__LINE 64
#define TC__BODY 56
#define TC__HDR 32
/* Bytes of payload that fit in a packet of n lines. */
#define TC__PAYLOAD_IN_LINES(n) ((size_t)(n) * TC__BODY - TC__HDR)

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
	uint64_t mask;   /* N - 1 */
	uint64_t nlines; /* N */
	struct tc__doorbell *cons_db; /* rung when data is published */
	struct tc__doorbell *prod_db; /* rung when space is freed */
	int src, dst;                 /* ranks at the two ends */

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
_Static_assert(offsetof(struct tc__chan, want_space) - offsetof(struct tc__chan, want_data) >=
                       TC__LINE,
               "wait hints apart");

/* Creates the ring: nlines must be a power of two >= 2.  Returns 0 or -1. */
int tc__chan_init(struct tc__chan *ch, uint64_t nlines, int src, int dst);
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

/* Copies len bytes into the body stream starting at stream offset off of the
 * packet whose first line is at absolute position pos.  Writes every touched
 * line's seq too (relaxed: the header's release store publishes them). */
static inline void tc__chan_put(struct tc__chan *ch, uint64_t pos, size_t off, const void *src,
                                size_t len)
{
	const unsigned char *s = src;
	if (off + len <= TC__BODY) { /* small packets: one line, no division */
		memcpy(ch->ring[pos & ch->mask].body + off, s, len);
		return;
	}
	while (len) {
		uint64_t li = pos + off / TC__BODY;
		size_t lo = off % TC__BODY;
		size_t n = TC__BODY - lo < len ? TC__BODY - lo : len;
		struct tc__line *l = &ch->ring[li & ch->mask];
		memcpy(l->body + lo, s, n);
		s += n;
		off += n;
		len -= n;
	}
}

/* Copies len bytes out of the body stream (the consumer's twin of put). */
static inline void tc__chan_get(const struct tc__chan *ch, uint64_t pos, size_t off, void *dst,
                                size_t len)
{
	unsigned char *d = dst;
	if (off + len <= TC__BODY) { /* small packets: one line, no division */
		memcpy(d, ch->ring[pos & ch->mask].body + off, len);
		return;
	}
	while (len) {
		uint64_t li = pos + off / TC__BODY;
		size_t lo = off % TC__BODY;
		size_t n = TC__BODY - lo < len ? TC__BODY - lo : len;
		const struct tc__line *l = &ch->ring[li & ch->mask];
		memcpy(d, l->body + lo, n);
		d += n;
		off += n;
		len -= n;
	}
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
	tc__chan_put(ch, pos, 0, hdr, TC__HDR);
	if (len)
		tc__chan_put(ch, pos, TC__HDR, payload, len);
	for (uint64_t i = 1; i < n; i++)
		/* Relaxed: published by the release store of the first line's
		 * seq below; only keeps stale payload from looking like a seq. */
		atomic_store_explicit(&ch->ring[(pos + i) & ch->mask].seq, pos + i + 1,
		                      memory_order_relaxed);
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
