/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz_team.c - libFuzzer target for tc_team_create's configuration
 * checks: every field of struct tc_team_config from the input (the topology
 * from a list or as raw text), without running the team.  The call must
 * refuse the configuration with a TC_E* code or create a team that
 * tc_team_get_info describes consistently and tc_team_destroy frees (the
 * leak checker sees the rest).  Teams above 256 ranks or whose channels
 * would take more than 64 MiB are not created (a fuzzer's memory is small;
 * tc_team_create's own limit is the memory available, tests/test_scale.c).
 */
#include <stdint.h>
#include <stdio.h>
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

static const char *const topos[] = {"ring:4",    "complete:3", "hypercube:2", "mesh:2x3",
                                    "torus:3x3", "tree:2:5",   "star:6",      "chain:1"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size};
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	char spec[33];
	uint64_t k = take(&in, 1);
	if (k < 128) {
		cfg.topology = topos[k % 8];
	} else if (k < 160) {
		cfg.topology = NULL;
	} else {
		size_t l = (size_t)(k - 160) % 33;
		for (size_t i = 0; i < l; i++)
			spec[i] = (char)take(&in, 1);
		spec[l] = '\0';
		cfg.topology = spec;
	}
	cfg.p = (int)(int32_t)take(&in, 1) - 8; /* -8 .. 247 */
	uint64_t f = take(&in, 2);
	cfg.wait = (enum tc_wait_policy)(f & 7);
	cfg.mode = (enum tc_mode)(f >> 3 & 3);
	cfg.no_pin = (int)(f >> 5 & 1);
	cfg.model.ports = (enum tc_ports)(f >> 6 & 3);
	cfg.model.duplex = (enum tc_duplex)(f >> 8 & 3);
	cfg.model.switching = (enum tc_switching)(f >> 10 & 3);
	if (f & (1u << 12)) {
		double v[4];
		for (int i = 0; i < 4; i++) {
			uint64_t b = take(&in, 8);
			memcpy(&v[i], &b, sizeof b);
		}
		cfg.model.ts_ns = v[0];
		cfg.model.tw_ns = v[1];
		cfg.model.th_ns = v[2];
		cfg.model.tc_ns = v[3];
	}
	cfg.model.mu = (size_t)take(&in, 4);
	/* Sizes: small ones mostly, any 64-bit value sometimes. */
	uint64_t *u64[] = {&cfg.spin_ns, &cfg.yield_ns, &cfg.timeout_ms};
	for (int i = 0; i < 3; i++)
		*u64[i] = (f & (1u << 13)) ? take(&in, 8) : take(&in, 2);
	size_t *sz[] = {&cfg.ring_bytes, &cfg.packet_bytes, &cfg.single_copy_min, &cfg.stack_bytes,
	                &cfg.trace_events};
	for (int i = 0; i < 5; i++)
		*sz[i] = (size_t)((f & (1u << 14)) ? take(&in, 8) : take(&in, 3));

	/* What the fuzzer can afford to create (see the header). */
	struct tc_topo *t = NULL;
	const char *s = cfg.topology;
	char cspec[40];
	if (!s && cfg.p >= 1) {
		snprintf(cspec, sizeof cspec, "complete:%d", cfg.p);
		s = cspec;
	}
	/* As tc_team_create parses it: a family ("mesh") sized by cfg.p. */
	if (s && tc_topo_parse_p(s, cfg.p > 0 ? cfg.p : 0, &t, NULL, 0) == 0) {
		const int n = tc_topo_nodes(t);
		const double chans = (double)tc_topo_props(t)->arcs;
		double ring = cfg.ring_bytes ? (double)cfg.ring_bytes : 65536;
		tc_topo_destroy(t);
		if (n > 256 || chans * ring > 64.0 * (1 << 20) ||
		    (double)cfg.trace_events * n * sizeof(struct tc_event) > 64.0 * (1 << 20))
			return 0;
	}

	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	if (err > 0 || !strcmp(tc_err_name(err), "TC_E?"))
		abort();
	if (err) {
		if (team)
			abort(); /* *out untouched on an error */
		return 0;
	}
	struct tc_team_info info;
	tc_team_get_info(team, &info);
	if (info.p < 1 || (cfg.p && info.p != cfg.p) || info.packet_bytes < 1 ||
	    info.packet_bytes > info.ring_bytes || info.ring_bytes < 128 ||
	    (info.ring_bytes & (info.ring_bytes - 1)) || tc_team_size(team) != info.p ||
	    tc_model_check(tc_team_model(team)))
		abort();
	tc_team_destroy(team);
	return 0;
}
