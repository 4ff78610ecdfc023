/* SPDX-License-Identifier: MIT */
/* lib/coll/predict.c - prediction without threads, and the registry's names. */
#include <math.h>
#include <string.h>

#include "coll/coll_internal.h"

const char *tc_alg_name(enum tc_coll coll, int i)
{
	for (int k = 0; k < tc__nalgs; k++)
		if (tc__algs[k].coll == coll && i-- == 0)
			return tc__algs[k].name;
	return NULL;
}

int tc_coll_parse(const char *name, enum tc_coll *out)
{
	for (int c = 0; name && c < TC_COLL_COUNT; c++)
		if (!strcmp(name, tc_coll_name((enum tc_coll)c))) {
			*out = (enum tc_coll)c;
			return TC_OK;
		}
	return TC_EINVAL;
}

int tc_predict(const struct tc_topo *t, const struct tc_model *md, enum tc_coll coll,
               const char *alg, size_t bytes, size_t esize, int root, int packets,
               struct tc_prediction *out)
{
	if (!t || !md || !out || (unsigned)coll >= TC_COLL_COUNT || esize == 0 ||
	    bytes % esize || packets < 0)
		return TC_EINVAL;
	int p = tc_topo_nodes(t);
	if (coll == TC_COLL_BCAST || coll == TC_COLL_REDUCE) {
		if (root < 0 || root >= p)
			return TC_EROOT;
	} else {
		root = 0;
	}
	if (coll == TC_COLL_BARRIER)
		bytes = 0;
	struct tc__gen g = {.coll = coll, .t = t, .p = p, .bytes = bytes, .esize = esize,
	                    .root = root, .md = md, .packets = packets};
	const struct tc__alg *a;
	struct tc__sched s;
	tc_time_t ms;
	int err = tc__coll_select(&g, alg, 0, &a, &s, &ms);
	if (err)
		return err;
	struct tc__sim sim;
	err = tc__sched_simulate(&s, t, md, &sim);
	if (err) {
		tc__sched_free(&s);
		return err;
	}
	memset(out, 0, sizeof *out);
	out->algorithm = a->name;
	out->modelled_ps = sim.makespan;
	out->formula_ns = a->formula(&g);
	out->rounds = sim.rounds;
	out->messages = sim.messages;
	out->hop_messages = sim.hop_messages;
	out->bytes = sim.bytes;
	out->oneport_violations = sim.oneport_violations;
	out->nodup_violations = sim.nodup_violations;
	out->noho_violations = sim.noho_violations;
	out->contention = sim.contention_total;
	tc__sim_free(&sim);
	tc__sched_free(&s);

	/* Every one of these collectives needs at least a one-to-all broadcast's
	 * (or, dually, an all-to-one reduction's) time: seed 001's OAB bound. */
	int dims[32];
	int nd = tc_topo_dims(t, NULL);
	struct tc_lower_bound lb;
	enum tc_topo_kind kind = tc_topo_kind(t);
	if (kind == TC_TOPO_HYPERCUBE) {
		nd = 1;
		dims[0] = tc__log2_exact(p);
	} else if (kind == TC_TOPO_MESH || kind == TC_TOPO_TORUS) {
		tc_topo_dims(t, dims);
	} else {
		nd = 1;
		dims[0] = p;
	}
	out->lower_bound_ns = NAN;
	out->lower_bound_steps = -1;
	if (nd >= 1 && nd <= 32 &&
	    !(coll == TC_COLL_BCAST || coll == TC_COLL_REDUCE
	              ? tc_lower_bound_root(TC_LB_OAB, kind, nd, dims, root, (double)bytes, md, &lb)
	              : tc_lower_bound(TC_LB_OAB, kind, nd, dims, (double)bytes, md, &lb))) {
		out->lower_bound_ns = lb.time_ns;
		out->lower_bound_steps = lb.steps;
	}
	return TC_OK;
}
