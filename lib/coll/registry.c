/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/registry.c - the registry: the algorithms (algorithms.def) and
 * the collectives (topocoll/collectives.def) as tables, a collective's name
 * and flags, an algorithm's restrictions checked against a call, its entry
 * found by name, and its schedule generated (the duals: dual.c).
 */
#include <stdio.h>
#include <string.h>

#include "base/error_detail.h"
#include "coll/coll_internal.h"
#include "coll/gen.h"

const struct tc__alg tc__algs[] = {
#define TC__ALG(coll, name, gen, formula, flags, req, topos) \
	{coll, #name, gen, formula, flags, req, topos},
#include "coll/algorithms.def"
#undef TC__ALG
};
const int tc__nalgs = (int)(sizeof tc__algs / sizeof tc__algs[0]);

enum { TC__DUAL_NONE = -1, TC__DUAL_COPY = 1, TC__DUAL_COMBINE = 0 };
const struct tc__coll_desc tc__colls[TC_COLL_COUNT] = {
#define TC_COLL(NAME, name, shape, bound, dual_of, dual_op) \
	[TC_COLL_##NAME] = {#name, shape, TC__LB_COL_##bound, TC__DUAL_OF_##dual_of, TC__DUAL_##dual_op},
#define TC__LB_COL_OAB TC_LB_OAB
#define TC__LB_COL_AAB TC_LB_AAB
#define TC__LB_COL_OAS TC_LB_OAS
#define TC__LB_COL_AAS TC_LB_AAS
#define TC__LB_COL_PERM TC__LB_PERM
#define TC__LB_COL_MC TC__LB_MC
#define TC__LB_COL_NONE TC__LB_NONE
#define TC__DUAL_OF_NONE TC__DUAL_NONE
#define TC__DUAL_OF_BCAST TC_COLL_BCAST
#define TC__DUAL_OF_SCATTER TC_COLL_SCATTER
#include "topocoll/collectives.def"
#undef TC_COLL
};

const char *tc_coll_name(enum tc_coll c)
{
	return (unsigned)c < TC_COLL_COUNT ? tc__colls[c].name : NULL;
}

unsigned tc_coll_flags(enum tc_coll c)
{
	return (unsigned)c < TC_COLL_COUNT ? tc__colls[c].flags : 0;
}

/* The first of a's registry restrictions (req) that g fails, in words
 * written into buf ("" when len is 0), or NULL when a applies. */
static const char *tc__alg_fails(const struct tc__alg *a, const struct tc__gen *g, char *buf, size_t len)
{
	const enum tc_topo_kind kind = tc_topo_kind(g->t);
	unsigned kinds = a->req & TC__R_KINDS;
	if (len)
		buf[0] = '\0';
	if (kinds && !(kinds & TC__R_KIND(kind))) {
		if (len)
			snprintf(buf, len, "it runs on %s (not %s)", a->topologies,
			         tc_topo_kind_name(kind));
		return len ? buf : "";
	}
	if ((a->req & TC__R_POW2) && tc__log2_exact(g->p) < 0) {
		if (len)
			snprintf(buf, len, "it needs p a power of two, not %d", g->p);
		return len ? buf : "";
	}
	if ((a->req & TC__R_COMBINING) && !g->md->combining) {
		if (len)
			snprintf(buf, len, "it needs the combining model (combining is off)");
		return len ? buf : "";
	}
	if ((a->req & TC__R_ALLPORT) && g->md->ports != TC_PORTS_ALL) {
		if (len)
			snprintf(buf, len, "it needs the all-port model (ports: one)");
		return len ? buf : "";
	}
	if ((a->req & TC__R_ONEPORT) && g->md->ports != TC_PORTS_ONE) {
		if (len)
			snprintf(buf, len, "it needs the one-port model (ports: all)");
		return len ? buf : "";
	}
	if ((a->req & TC__R_2D) && tc_topo_dims(g->t, NULL) != 2) {
		if (len)
			snprintf(buf, len, "it needs two dimensions, not %d", tc_topo_dims(g->t, NULL));
		return len ? buf : "";
	}
	if ((a->req & TC__R_CUBE_BY_RING) && kind == TC_TOPO_HYPERCUBE && !g->shift_ring) {
		if (len)
			snprintf(buf, len,
			         "on a hypercube it shifts along the Gray-code ring only "
			         "(shift_ring)");
		return len ? buf : "";
	}
	if ((a->req & TC__R_HRING) && !tc__hring_embeds(g->t)) {
		if (len)
			snprintf(buf, len,
			         tc_topo_dims(g->t, NULL) > 2
			                 ? "it needs a ring through every node, embedded in 2-D grids only"
			                 : "it needs a ring through every node: a 2-D mesh has one only "
			                   "with an even side and no side of 1");
		return len ? buf : "";
	}
	return NULL;
}

int tc__alg_check(const struct tc__alg *a, const struct tc__gen *g)
{
	char why[160], list[160], spec[64];
	if (!tc__alg_fails(a, g, why, sizeof why))
		return TC_OK;
	size_t n = 0;
	list[0] = '\0';
	for (int i = 0; i < tc__nalgs && n < sizeof list; i++) {
		const struct tc__alg *b = &tc__algs[i];
		if (b->coll == a->coll && !tc__alg_fails(b, g, NULL, 0))
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", b->name);
	}
	tc_topo_spec(g->t, spec, sizeof spec);
	tc__set_detail("algorithm '%s' of %s does not apply to %s: %s; %s%s", a->name,
	               tc_coll_name(a->coll), spec, why, n ? "algorithms that apply: " : "",
	               n ? list : "no algorithm of it applies");
	return TC_ENOTSUP;
}

int tc__alg_check_quiet(const struct tc__alg *a, const struct tc__gen *g)
{
	return tc__alg_fails(a, g, NULL, 0) ? TC_ENOTSUP : TC_OK;
}

int tc__coll_generate(const struct tc__alg *a, const struct tc__gen *g, struct tc__sched *s)
{
	int err = tc__alg_check(a, g);
	if (err)
		return err;
	if (g->max_x > 0 && tc__sched_size_lb(a, g) > g->max_x)
		return TC__ELIMIT; /* known to be over: not generated (size.c) */
	tc__sched_generated_add();
	if (!(a->flags & TC__ALG_DUAL)) {
		err = tc__sched_init(s, g->p);
		if (err)
			return err;
		s->max_x = g->max_x;
		s->max_moving = g->max_moving;
		s->count_only = g->count_only;
		err = a->gen(g, s);
		if (!err)
			err = s->err;
		if (err)
			tc__sched_free(s);
		return err;
	}
	const struct tc__coll_desc *cd = &tc__colls[g->coll];
	struct tc__sched b;
	struct tc__gen gb = *g;
	gb.coll = (enum tc_coll)cd->dual_of;
	err = tc__sched_init(&b, g->p);
	if (err)
		return err;
	b.max_x = g->max_x;
	b.max_moving = g->max_moving;
	b.count_only = g->count_only;
	err = a->gen(&gb, &b);
	if (!err)
		err = b.err;
	if (!err)
		err = tc__dual(&b, cd->dual_copy, g->root, g->bytes, s);
	tc__sched_free(&b);
	return err;
}

const struct tc__alg *tc__alg_find(enum tc_coll coll, const char *name)
{
	for (int i = 0; i < tc__nalgs; i++)
		if (tc__algs[i].coll == coll && !strcmp(tc__algs[i].name, name))
			return &tc__algs[i];
	return NULL;
}
