/* SPDX-License-Identifier: MIT */
/*
 * lib/topo/induce.c - the named topology a subset of nodes induces
 * (lib/topo/induce.h): each candidate of the subset's size is built and
 * compared link for link with the subgraph (O(links log degree) each).
 */
#include <stdio.h>
#include <stdlib.h>

#include "topo/induce.h"
#include "topocoll/error.h"

/* Whether the topology of spec has exactly the links of t among members
 * (arcs: the subgraph's arc count). */
static int tc__matches(const char *spec, const struct tc_topo *t, const int *members, long arcs)
{
	struct tc_topo *c;
	int err = tc_topo_parse(spec, &c);
	if (err)
		return err == TC_ENOMEM ? TC_ENOMEM : 0;
	int ok = tc_topo_props(c)->arcs == arcs;
	for (int u = 0; ok && u < tc_topo_nodes(c); u++) {
		const int *nb;
		int d = tc_topo_neighbors(c, u, &nb);
		for (int i = 0; ok && i < d; i++)
			ok = tc_topo_neighbor_index(t, members[u], members[nb[i]]) >= 0;
	}
	tc_topo_destroy(c);
	return ok;
}

int tc__topo_induce(const struct tc_topo *t, const int *members, int k, char *spec, size_t len)
{
	const int n = tc_topo_nodes(t);
	int *pos = malloc((size_t)n * sizeof *pos);
	if (!pos)
		return TC_ENOMEM;
	for (int v = 0; v < n; v++)
		pos[v] = -1;
	for (int i = 0; i < k; i++)
		pos[members[i]] = i;
	long arcs = 0;
	for (int i = 0; i < k; i++) {
		const int *nb;
		int d = tc_topo_neighbors(t, members[i], &nb);
		for (int j = 0; j < d; j++)
			arcs += pos[nb[j]] >= 0;
	}
	/* Candidates, best connected first. */
	char cand[64];
	int r = 0;
#define TRY(...)                                          \
	do {                                              \
		snprintf(cand, sizeof cand, __VA_ARGS__); \
		r = tc__matches(cand, t, members, arcs);  \
		if (r)                                    \
			goto out;                         \
	} while (0)
	if (k <= TC_TOPO_MAX_COMPLETE && arcs == (long)k * (k - 1))
		TRY("complete:%d", k);
	if ((k & (k - 1)) == 0 && k > 1)
		TRY("hypercube:%d", __builtin_ctz((unsigned)k));
	for (int pass = 0; pass < 2; pass++) {
		const char *kind = pass ? "mesh" : "torus";
		for (int a = 2; a * 2 <= k; a++) {
			if (k % a)
				continue;
			int rest = k / a;
			TRY("%s:%dx%d", kind, a, rest);
			for (int b = 2; b * 2 <= rest; b++)
				if (rest % b == 0)
					TRY("%s:%dx%dx%d", kind, a, b, rest / b);
		}
	}
	TRY("ring:%d", k);
	TRY("chain:%d", k);
	TRY("star:%d", k);
	for (int K = 2; K <= 4; K++)
		TRY("tree:%d:%d", K, k);
#undef TRY
	r = k <= TC_TOPO_MAX_COMPLETE ? 0 : TC_ELIMIT;
	snprintf(cand, sizeof cand, "complete:%d", k);
out:
	free(pos);
	if (r >= 0)
		snprintf(spec, len, "%s", cand);
	return r;
}
