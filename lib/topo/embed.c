/* SPDX-License-Identifier: MIT */
/* lib/topo/embed.c - rings and grids of the topologies (contract in embed.h). */
#include "topo/embed.h"

#include "topo/topo_internal.h"

int tc__ring_embeds(const struct tc_topo *t)
{
	return t->kind == TC_TOPO_RING || t->kind == TC_TOPO_COMPLETE ||
	       t->kind == TC_TOPO_HYPERCUBE;
}

int tc__ring_node(const struct tc_topo *t, int pos)
{
	if (!tc__ring_embeds(t))
		return -1;
	pos %= t->p;
	if (pos < 0)
		pos += t->p;
	return t->kind == TC_TOPO_HYPERCUBE ? (int)tc_gray((uint32_t)pos) : pos;
}

int tc__ring_pos(const struct tc_topo *t, int v)
{
	if (!tc__ring_embeds(t) || v < 0 || v >= t->p)
		return -1;
	return t->kind == TC_TOPO_HYPERCUBE ? (int)tc_gray_inverse((uint32_t)v) : v;
}

int tc__grid_of(const struct tc_topo *t, struct tc__grid *g)
{
	switch (t->kind) {
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
		g->nd = t->ndims;
		for (int i = 0; i < t->ndims; i++) {
			g->dims[i] = t->dims[i];
			g->stride[i] = t->stride[i];
		}
		g->wrap = t->kind == TC_TOPO_TORUS;
		return g->nd;
	case TC_TOPO_RING:
	case TC_TOPO_CHAIN:
		g->nd = 1;
		g->dims[0] = t->p;
		g->stride[0] = 1;
		g->wrap = t->kind == TC_TOPO_RING;
		return 1;
	case TC_TOPO_HYPERCUBE:
		g->nd = t->param;
		for (int i = 0; i < g->nd; i++) {
			g->dims[i] = 2;
			g->stride[i] = 1 << i;
		}
		g->wrap = 0;
		return g->nd;
	default:
		g->nd = 0;
		return 0;
	}
}
