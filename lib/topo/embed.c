/* SPDX-License-Identifier: MIT */
/* lib/topo/embed.c - rings and grids of the topologies (contract in embed.h). */
#include "topo/embed.h"

#include "topo/topo_internal.h"

int tc__ring_embeds(const struct tc_topo *t)
{
	return t->kind == TC_TOPO_RING || t->kind == TC_TOPO_COMPLETE || t->kind == TC_TOPO_HYPERCUBE;
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

/* How t embeds a 2-D ring: 0 none, 1 the identity order (a ring, a line
 * of a torus, p <= 2), 2 the comb of rows x cols, 3 the comb of the
 * transpose. */
static int tc__hring_kind(const struct tc_topo *t)
{
	if (t->p <= 2)
		return 1;
	if (t->kind != TC_TOPO_MESH && t->kind != TC_TOPO_TORUS)
		return 0;
	int torus = t->kind == TC_TOPO_TORUS;
	if (t->ndims == 1)
		return torus;
	if (t->ndims != 2)
		return 0;
	int a = t->dims[0], b = t->dims[1];
	if (a == 1 || b == 1)
		return torus;
	if (a % 2 == 0)
		return 2;
	if (b % 2 == 0)
		return 3;
	return torus ? 2 : 0;
}

int tc__hring_embeds(const struct tc_topo *t)
{
	return tc__ring_embeds(t) || tc__hring_kind(t) != 0;
}

/* Position pos of the comb of an a x b grid, as (row, col). */
static void tc__comb(int a, int b, int pos, int *row, int *col)
{
	int snake = (a - 1) * (b - 1);
	if (pos < b) {
		*row = 0;
		*col = pos;
	} else if (pos < b + snake) {
		int k = pos - b, j = k % (b - 1);
		*row = 1 + k / (b - 1);
		*col = *row % 2 ? b - 1 - j : 1 + j;
	} else {
		*row = a - 1 - (pos - b - snake);
		*col = 0;
	}
}

int tc__hring_node(const struct tc_topo *t, int pos)
{
	if (tc__ring_embeds(t))
		return tc__ring_node(t, pos);
	int k = tc__hring_kind(t);
	if (!k)
		return -1;
	pos %= t->p;
	if (pos < 0)
		pos += t->p;
	if (k == 1)
		return pos;
	int a = t->dims[0], b = t->dims[1], r, c;
	if (k == 2) {
		tc__comb(a, b, pos, &r, &c);
		return r * b + c;
	}
	tc__comb(b, a, pos, &c, &r); /* the transpose: its rows are columns */
	return r * b + c;
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
