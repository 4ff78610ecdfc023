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

int tc_test_bfs(const struct tc_topo *t, int src, int *dist)
{
	int p = tc_topo_nodes(t), head = 0, tail = 0, ecc = 0;
	int *queue = malloc((size_t)p * sizeof *queue);
	if (!queue)
		abort();
	for (int i = 0; i < p; i++)
		dist[i] = -1;
	dist[src] = 0;
	queue[tail++] = src;
	while (head < tail) {
		int u = queue[head++];
		const int *nb;
		int deg = tc_topo_neighbors(t, u, &nb);
		for (int i = 0; i < deg; i++)
			if (dist[nb[i]] < 0) {
				dist[nb[i]] = dist[u] + 1;
				ecc = dist[nb[i]];
				queue[tail++] = nb[i];
			}
	}
	free(queue);
	return tail == p ? ecc : -1;
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

void tc_test_wd_capture(void *arg, const char *report)
{
	struct tc_test_wd *wd = arg;
	pthread_mutex_lock(&wd->mu);
	snprintf(wd->text, sizeof wd->text, "%s", report);
	wd->calls++;
	pthread_mutex_unlock(&wd->mu);
}
