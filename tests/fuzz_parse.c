/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz_parse.c - libFuzzer target for the parsers that take user text:
 * topology specs (tc_topo_parse) and the tool's sizes (cli_parse_size,
 * "4K", "16Mi", "1G").  Built and run for a bounded time by ./tools/test
 * (clang -fsanitize=fuzzer,address,undefined); any crash, leak, sanitizer
 * report or violated invariant below fails it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/cli.h"
#include "topocoll.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256)
		return 0;
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	struct tc_topo *t = NULL;
	if (tc_topo_parse(s, &t) == 0) {
		const struct tc_topo_props *pr = tc_topo_props(t);
		int p = tc_topo_nodes(t);
		if (p < 1 || p > TC_TOPO_MAX_NODES || pr->arcs != 2 * pr->links || pr->diameter < 0)
			abort();
		/* The canonical spec parses back to the same graph. */
		char canon[256];
		tc_topo_spec(t, canon, sizeof canon);
		struct tc_topo *u = NULL;
		if (tc_topo_parse(canon, &u) != 0 || tc_topo_nodes(u) != p ||
		    tc_topo_props(u)->links != pr->links)
			abort();
		tc_topo_destroy(u);
		if (p <= 4096) {
			int path[64];
			int hops = tc_topo_route(t, 0, p - 1, NULL, 0);
			if (hops < 0 || hops > pr->diameter)
				abort();
			if (hops < 64)
				tc_topo_route(t, 0, p - 1, path, 64);
		}
		tc_topo_destroy(t);
	}
	uint64_t v;
	if (cli_parse_size("--bytes", s, UINT64_MAX, &v) == 0 && strlen(s) == 0)
		abort(); /* an empty size must be refused */
	free(s);
	return 0;
}
