/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz_call.c - libFuzzer target for a collective's argument checking
 * without threads: tc_predict_call (and, for one input in four,
 * tc_schedule_call) with every field of struct tc_call taken from the input
 * (collective, algorithm name from the registry or raw bytes, bytes, esize,
 * root, packets, q, member set, v-counts), on a topology of at most 16
 * nodes, under a model also taken from the input.  The call must return 0
 * or a TC_E* code; on 0 the prediction must be sane.  Memory stays bounded
 * by the predictor's own limits (TC_ELIMIT), which is what the run checks:
 * ./tools/test runs it with -rss_limit_mb and -malloc_limit_mb.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topocoll.h"

struct in {
	const uint8_t *d;
	size_t n;
};

static uint64_t take(struct in *in, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++) {
		v = v << 8 | (in->n ? *in->d : 0);
		if (in->n) {
			in->d++;
			in->n--;
		}
	}
	return v;
}

static const char *const topos[] = {"complete:1", "complete:5",  "ring:6",      "chain:7",
                                    "star:4",     "tree:2:9",    "hypercube:3", "hypercube:4",
                                    "mesh:3x4",   "torus:4x4",   "torus:2x2x2", "mesh:1x1",
                                    "ring:2",     "complete:16", "tree:3:13",   "mesh:2x3"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size};
	struct tc_topo *t = NULL;
	if (tc_topo_parse(topos[take(&in, 1) % 16], &t))
		abort();
	const int p = tc_topo_nodes(t);
	struct tc_model md;
	tc_model_default(&md);
	uint64_t mflags = take(&in, 1);
	md.ports = (enum tc_ports)(mflags & 1);
	md.duplex = (enum tc_duplex)(mflags >> 1 & 1);
	md.switching = (enum tc_switching)(mflags >> 2 & 1);
	md.combining = (int)(mflags >> 3 & 1);
	if (mflags & 0x10) { /* raw times, NaN and negatives included */
		double v[4];
		for (int i = 0; i < 4; i++) {
			uint64_t b = take(&in, 8);
			memcpy(&v[i], &b, sizeof b);
		}
		md.ts_ns = v[0];
		md.tw_ns = v[1];
		md.th_ns = v[2];
		md.tc_ns = v[3];
	}
	if (mflags & 0x20)
		md.mu = (size_t)take(&in, 4);
	if (mflags & 0x40)
		md.ports = (enum tc_ports)take(&in, 1); /* out of the enum too */

	struct tc_call c = {0};
	c.coll = (enum tc_coll)(take(&in, 1) % (TC_COLL_COUNT + 2));
	char alg[17];
	uint64_t ak = take(&in, 1);
	if (ak < 200) {
		c.alg = tc_alg_name(c.coll, (int)(ak % 8)); /* NULL past the last: auto */
	} else if (ak < 240) {
		c.alg = "auto";
	} else {
		size_t l = (size_t)(ak - 240);
		for (size_t i = 0; i < l; i++)
			alg[i] = (char)take(&in, 1);
		alg[l] = '\0';
		c.alg = alg;
	}
	/* bytes: small mostly, up to beyond TC_MAX_MESSAGE sometimes. */
	uint64_t bk = take(&in, 1);
	c.bytes = (size_t)(bk < 192 ? take(&in, 2) : take(&in, 8) >> (bk & 15));
	c.esize = (size_t)(take(&in, 1) % 17);
	c.root = (int)(take(&in, 1) % (p + 3)) - 1;
	uint64_t pk = take(&in, 1);
	c.packets = pk < 200 ? (int)(pk % 9) : (int)(int32_t)take(&in, 4);
	c.q = (long)(int64_t)take(&in, 8);
	c.shift_ring = (int)(take(&in, 1) & 1);
	int members[24];
	int nm = (int)(take(&in, 1) % 26) - 1; /* -1 .. 24 */
	for (int i = 0; i < (nm > 0 ? nm : 0); i++)
		members[i] = (int)(take(&in, 1) % (p + 2)) - 1;
	c.members = take(&in, 1) & 1 ? members : NULL;
	c.nmembers = nm;
	size_t *counts = calloc((size_t)p * (size_t)p, sizeof *counts);
	if (!counts)
		abort();
	uint64_t ck = take(&in, 1);
	for (int i = 0; i < p * p && (ck & 3); i++)
		counts[i] = (size_t)((ck & 4) ? take(&in, 8) >> (ck >> 4) : take(&in, 1));
	if (ck & 1)
		c.counts = counts;
	if (ck & 2)
		c.matrix = counts;

	struct tc_prediction pr;
	int err = tc_predict_call(t, &md, &c, &pr);
	if (err > 0 || !strcmp(tc_err_name(err), "TC_E?"))
		abort();
	if (!err && (pr.modelled_ps < 0 || !pr.algorithm ||
	             (pr.simulated && (pr.rounds < 0 || pr.transfers < 0))))
		abort();
	if (!err && tc_model_check(&md))
		abort(); /* predicted under a model the library refuses */
	if (!err && (take(&in, 1) & 3) == 0) {
		struct tc_transfer *x = NULL;
		int n = 0;
		int e2 = tc_schedule_call(t, &md, &c, &x, &n);
		if (e2 > 0 || (!e2 && n < 0))
			abort();
		for (int i = 0; !e2 && i < n; i++)
			if (x[i].src < 0 || x[i].src >= p || x[i].dst < 0 || x[i].dst >= p)
				abort();
		tc_schedule_free(x);
	}
	free(counts);
	tc_topo_destroy(t);
	return 0;
}
