/* SPDX-License-Identifier: MIT */
/*
 * Channel tests: the raw SPSC ring (wrap-around, peek/pop) and messages of
 * random sizes through a team of two, with every waiting policy, streamed
 * and single-copy, and 64 pairs at once on 2 cores.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/chan.h"
#include "harness.h"
#include "topocoll.h"
#include "util.h"

/* ---- the raw ring, one thread ------------------------------------------ */

Test(chan, ring_wraps_and_keeps_packets_whole, .timeout = 30)
{
	struct tc__chan ch;
	cr_assert_eq(tc__chan_init(&ch, 16, 0, 1), 0);
	unsigned char in[400], out[400];
	uint64_t seed = 7;
	/* 16 lines hold 16*56 - 32 = 864 payload bytes in one packet; push and
	 * pop packets of sizes that land the head at every line offset, many
	 * laps round. */
	for (int it = 0; it < 5000; it++) {
		size_t len = tc_test_rand(&seed) % sizeof in;
		for (size_t i = 0; i < len; i++)
			in[i] = (unsigned char)(it + i * 31);
		struct tc__pkt_hdr h = {.len = (uint32_t)len,
		                        .flags = TC__PKT_FIRST,
		                        .total = len,
		                        .clock = it};
		cr_assert_eq(tc__chan_try_push(&ch, &h, in, len), 1);
		struct tc__pkt_hdr g;
		cr_assert_eq(tc__chan_peek(&ch, &g), 1);
		cr_assert_eq(g.len, len);
		cr_assert_eq(g.clock, it);
		memset(out, 0xAA, sizeof out);
		tc__chan_copy_out(&ch, 0, out, len);
		cr_assert_eq(memcmp(in, out, len), 0, "iteration %d", it);
		tc__chan_pop(&ch, len);
		cr_assert_eq(tc__chan_peek(&ch, &g), 0, "empty after pop");
	}
	tc__chan_fini(&ch);
}

/* The line-wise copies (chan.h): a packet read back in pieces at every
 * offset and length, so that the first partial body, the whole bodies and the
 * last partial one are each taken at every alignment, across the wrap; and
 * every line after the first carries its position + 1 as seq. */
Test(chan, pieces_at_every_offset_across_the_wrap, .timeout = 30)
{
	struct tc__chan ch;
	cr_assert_eq(tc__chan_init(&ch, 16, 0, 1), 0);
	unsigned char in[800], out[800];
	for (int lap = 0; lap < 3; lap++) {
		/* A small packet first moves the start of the next one so that
		 * it wraps at a different line each lap. */
		struct tc__pkt_hdr h = {.len = (uint32_t)(lap * 60), .flags = TC__PKT_FIRST};
		cr_assert_eq(tc__chan_try_push(&ch, &h, in, (size_t)lap * 60), 1);
		struct tc__pkt_hdr g;
		cr_assert_eq(tc__chan_peek(&ch, &g), 1);
		tc__chan_pop(&ch, g.len);
		size_t len = 700 + (size_t)lap * 13;
		for (size_t i = 0; i < len; i++)
			in[i] = (unsigned char)(lap * 7 + i * 13 + 1);
		h.len = (uint32_t)len;
		uint64_t pos = ch.tail;
		cr_assert_eq(tc__chan_try_push(&ch, &h, in, len), 1);
		for (uint64_t k = 1; k < tc__lines_for(len); k++)
			cr_assert_eq(atomic_load(&ch.ring[(pos + k) & ch.mask].seq), pos + k + 1);
		cr_assert_eq(tc__chan_peek(&ch, &g), 1);
		for (size_t off = 0; off < 120; off++)
			for (size_t n = 0; off + n <= len; n += 1 + n / 3) {
				memset(out, 0xAA, n + 1);
				tc__chan_copy_out(&ch, off, out, n);
				cr_assert_eq(memcmp(in + off, out, n), 0, "lap %d off %zu n %zu",
				             lap, off, n);
				cr_assert_eq(out[n], 0xAA, "wrote past the end");
			}
		tc__chan_pop(&ch, len);
	}
	tc__chan_fini(&ch);
}

Test(chan, full_ring_refuses_then_accepts, .timeout = 30)
{
	struct tc__chan ch;
	cr_assert_eq(tc__chan_init(&ch, 8, 0, 1), 0);
	struct tc__pkt_hdr h = {.len = 8, .flags = TC__PKT_FIRST};
	uint64_t v = 1;
	int pushed = 0;
	while (tc__chan_try_push(&ch, &h, &v, 8))
		pushed++;
	cr_assert_eq(pushed, 8, "an 8-byte packet takes one line: 8 fit");
	struct tc__pkt_hdr g;
	cr_assert(tc__chan_peek(&ch, &g));
	tc__chan_pop(&ch, g.len);
	cr_assert_eq(tc__chan_try_push(&ch, &h, &v, 8), 1, "room again after one pop");
	cr_assert_eq(tc__chan_try_push(&ch, &h, &v, 8), 0);
	tc__chan_fini(&ch);
}

/* Payload bytes that look exactly like the sequence word of a later lap must
 * not be taken for a packet. */
Test(chan, payload_never_mistaken_for_sequence, .timeout = 30)
{
	struct tc__chan ch;
	cr_assert_eq(tc__chan_init(&ch, 4, 0, 1), 0);
	uint64_t forged[28];
	for (int i = 0; i < 28; i++)
		forged[i] = (uint64_t)i + 1 + 4; /* seq values of the next lap */
	struct tc__pkt_hdr h = {.len = 180, .flags = TC__PKT_FIRST};
	cr_assert_eq(tc__chan_try_push(&ch, &h, forged, 180), 1); /* (32 + 180) / 56 -> 4 lines */
	struct tc__pkt_hdr g;
	cr_assert(tc__chan_peek(&ch, &g));
	tc__chan_pop(&ch, g.len);
	for (int i = 0; i < 4; i++) {
		/* The consumer now stands on line 4 (slot 0): nothing is there. */
		cr_assert_eq(tc__chan_peek(&ch, &g), 0);
	}
	tc__chan_fini(&ch);
}

/* ---- messages through a team of two ------------------------------------ */

struct stream_arg {
	long n;          /* messages */
	size_t max;      /* largest message */
	uint64_t sum_tx; /* checksum of everything sent */
	uint64_t sum_rx;
	long got;
	int err;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

static int stream_fn(struct tc_proc *proc, void *argp)
{
	struct stream_arg *a = argp;
	unsigned char *buf = malloc(a->max + 8);
	uint64_t seed = 12345;
	int err = 0;
	if (tc_rank(proc) == 0) {
		uint64_t sum = 0;
		for (long i = 0; i < a->n && !err; i++) {
			size_t len = tc_test_rand(&seed) % (a->max + 1);
			for (size_t k = 0; k < len; k++)
				buf[k] = (unsigned char)(tc_test_rand(&seed) >> 56);
			if (len >= 8)
				memcpy(buf, &i, 8); /* sequence number */
			for (size_t k = 0; k < len; k++)
				sum = mix(sum, buf[k]);
			sum = mix(sum, len);
			err = tc_send(proc, 1, buf, len);
		}
		a->sum_tx = sum;
	} else {
		uint64_t sum = 0;
		for (long i = 0; i < a->n && !err; i++) {
			size_t got = 0;
			err = tc_recv(proc, 0, buf, a->max, &got);
			if (err)
				break;
			if (got >= 8) {
				long s;
				memcpy(&s, buf, 8);
				if (s != i) {
					err = TC_EINVAL; /* out of order or lost */
					break;
				}
			}
			for (size_t k = 0; k < got; k++)
				sum = mix(sum, buf[k]);
			sum = mix(sum, got);
			a->got++;
		}
		a->sum_rx = sum;
	}
	free(buf);
	return err;
}

static void run_stream(enum tc_wait_policy pol, long n, size_t ring, size_t single_copy_min)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "chain:2";
	cfg.wait = pol;
	cfg.ring_bytes = ring;
	cfg.single_copy_min = single_copy_min;
	cfg.timeout_ms = 120000;
	struct tc_team *team;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	struct tc_team_info info;
	tc_team_get_info(team, &info);
	struct stream_arg a = {.n = n, .max = 3 * info.ring_bytes};
	int err = tc_run(team, stream_fn, &a);
	cr_assert_eq(err, 0, "tc_run: %s", tc_strerror(err));
	cr_assert_eq(a.got, n);
	cr_assert_eq(a.sum_tx, a.sum_rx, "checksums differ");
	struct tc_stats st;
	tc_team_stats(team, &st);
	cr_assert_eq(st.msgs_sent, (uint64_t)n);
	cr_assert_eq(st.msgs_recv, (uint64_t)n);
	cr_assert_eq(st.bytes_sent, st.bytes_recv);
	tc_team_destroy(team);
}

static long scaled(long n)
{
	/* The race build (ThreadSanitizer) runs the same tests, slower. */
	const char *s = getenv("TC_TEST_SCALE");
	return s ? n / atol(s) : n;
}

Test(chan, million_messages_fifo_checksum_auto, .timeout = 240)
{
	run_stream(TC_WAIT_AUTO, scaled(1000000), 1024, SIZE_MAX);
}

Test(chan, random_sizes_single_copy_path, .timeout = 120)
{
	/* 1 KiB ring, messages up to 3 KiB, single copy from 512 bytes on. */
	run_stream(TC_WAIT_AUTO, scaled(200000), 1024, 512);
}

Test(chan, spin_policy, .timeout = 120)
{
	run_stream(TC_WAIT_SPIN, scaled(200000), 1024, SIZE_MAX);
}

Test(chan, yield_policy, .timeout = 120)
{
	run_stream(TC_WAIT_YIELD, scaled(100000), 1024, SIZE_MAX);
}

Test(chan, block_policy, .timeout = 120)
{
	run_stream(TC_WAIT_BLOCK, scaled(4000), 1024, SIZE_MAX);
	run_stream(TC_WAIT_BLOCK, scaled(2000), 1024, 256);
}

/* 64 producer/consumer pairs (r, r ^ 1) of a 128-node hypercube on 2 cores. */
struct pairs_arg {
	long n;
	_Atomic long bad;
};

static int pairs_fn(struct tc_proc *proc, void *argp)
{
	struct pairs_arg *a = argp;
	int r = tc_rank(proc);
	int peer = r ^ 1;
	uint64_t v[40];
	for (long i = 0; i < a->n; i++) {
		size_t len = (size_t)(i % 40) * 8;
		if (r & 1) {
			size_t got;
			int err = tc_recv(proc, peer, v, sizeof v, &got);
			if (err)
				return err;
			if (got != len || (len && v[0] != (uint64_t)i) ||
			    (len / 8 > 1 && v[len / 8 - 1] != (uint64_t)(i ^ peer)))
				atomic_fetch_add(&a->bad, 1);
		} else {
			for (size_t k = 0; k < len / 8; k++)
				v[k] = (uint64_t)(i ^ r);
			if (len)
				v[0] = (uint64_t)i;
			if (len / 8 > 1)
				v[len / 8 - 1] = (uint64_t)(i ^ r);
			int err = tc_send(proc, peer, v, len);
			if (err)
				return err;
		}
	}
	return 0;
}

Test(chan, sixty_four_pairs_on_two_cores, .timeout = 240)
{
	enum tc_wait_policy pols[] = {TC_WAIT_AUTO, TC_WAIT_BLOCK, TC_WAIT_YIELD};
	for (int k = 0; k < 3; k++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = "hypercube:7";
		cfg.wait = pols[k];
		cfg.timeout_ms = 120000;
		struct tc_team *team;
		cr_assert_eq(tc_team_create(&cfg, &team), 0);
		struct pairs_arg a = {.n = scaled(k == 1 ? 2000 : 20000)};
		int err = tc_run(team, pairs_fn, &a);
		cr_assert_eq(err, 0, "policy %d: %s", k, tc_strerror(err));
		cr_assert_eq(atomic_load(&a.bad), 0);
		tc_team_destroy(team);
	}
}
