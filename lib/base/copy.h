/* SPDX-License-Identifier: MIT */
/*
 * lib/base/copy.h - a copy whose stores go around the caches (streaming,
 * non-temporal stores), for data written where nothing will read them
 * before they would be evicted anyway: a collective's output larger than
 * the last-level cache its ranks share.  A cached store first reads the
 * line it writes (a third of a copy's memory traffic, and the line then
 * evicts one that is still wanted); a streaming store does not.  On the
 * 2-vCPU VM (AMD EPYC, 32 MiB L3) an allgather of 64 KiB blocks at p = 64,
 * 256 MiB of output a call, took 10.1-10.5 ms with it against 11.9-13.0
 * (the peers benchmark, three alternating runs; peer_ours alone, five:
 * 6.4-7.0 against 9.3-13.3).
 *
 * x86-64 only (SSE2, which every x86-64 CPU has); elsewhere, and under the
 * sanitizers, whose checks do not see these stores, memcpy.  Ends with a
 * store fence: the data are visible to other CPUs before what the caller
 * stores next, as a memcpy's would be.
 */
#ifndef TC_BASE_COPY_H
#define TC_BASE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__) && !defined(__SANITIZE_ADDRESS__) && \
        !defined(__SANITIZE_THREAD__)
#include <emmintrin.h>
#define TC__COPY_STREAMS 1
#else
#define TC__COPY_STREAMS 0
#endif

/* Below this a copy is left to memcpy (the aligned head, the tail and the
 * fence would be most of it). */
#define TC__COPY_STREAM_MIN 4096u

static inline void tc__copy_stream(void *dst, const void *src, size_t n)
{
#if TC__COPY_STREAMS
	unsigned char *d = dst;
	const unsigned char *s = src;
	const size_t head = (size_t)(-(uintptr_t)d & 15u);
	if (n < TC__COPY_STREAM_MIN + head) {
		memcpy(d, s, n);
		return;
	}
	memcpy(d, s, head);
	d += head;
	s += head;
	n -= head;
	for (; n >= 64; n -= 64, d += 64, s += 64) {
		const __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
		const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
		const __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
		const __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
		_mm_stream_si128((__m128i *)(void *)d, a);
		_mm_stream_si128((__m128i *)(void *)(d + 16), b);
		_mm_stream_si128((__m128i *)(void *)(d + 32), c);
		_mm_stream_si128((__m128i *)(void *)(d + 48), e);
	}
	memcpy(d, s, n);
	_mm_sfence();
#else
	memcpy(dst, src, n);
#endif
}

#endif
