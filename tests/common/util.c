/* SPDX-License-Identifier: MIT */
#include "util.h"

#include <stdlib.h>

static int tour_from(const struct tc_topo *t, int u, const int *parent, int *walk, int len)
{
	const int *nb;
	int deg = tc_topo_neighbors(t, u, &nb);
	walk[len++] = u;
	for (int i = 0; i < deg; i++) {
		if (parent[nb[i]] == u && nb[i] != 0) {
			len = tour_from(t, nb[i], parent, walk, len);
			walk[len++] = u;
		}
	}
	return len;
}

int tc_test_tour(const struct tc_topo *t, int *walk)
{
	int p = tc_topo_nodes(t);
	int *parent = malloc((size_t)p * sizeof *parent);
	int *queue = malloc((size_t)p * sizeof *queue);
	for (int i = 0; i < p; i++)
		parent[i] = -1;
	parent[0] = 0;
	int qh = 0, qt = 0;
	queue[qt++] = 0;
	while (qh < qt) {
		int u = queue[qh++];
		const int *nb;
		int deg = tc_topo_neighbors(t, u, &nb);
		for (int i = 0; i < deg; i++)
			if (parent[nb[i]] < 0) {
				parent[nb[i]] = u;
				queue[qt++] = nb[i];
			}
	}
	int len = tour_from(t, 0, parent, walk, 0);
	free(parent);
	free(queue);
	return len;
}
