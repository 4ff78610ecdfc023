/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/split.c - making and freeing sub-teams (topocoll/team.h,
 * "Sub-teams"): tc_team_split and its helpers (tc_team_split_dims,
 * tc_team_dup), tc_team_free.  The team object is lib/core/subteam.c's;
 * the topology a subset induces is lib/topo/induce.c's.
 *
 * A split is two allgathers of the parent, each marked as a split's
 * (tc__allgather_marked: mismatch detection tells them from a user's
 * tc_allgather and from each other):
 *   1. every rank's (error, colour, key, topology hash, split hash): every
 *      rank then knows every sub-team's members in order, and whether the
 *      call is good everywhere (an error is agreed, never a hang);
 *   2. each colour's first rank (sub-rank 0) makes the sub-team and
 *      gives (its address, error); every rank then takes its own, or,
 *      when any colour failed, returns that error while each maker frees
 *      what it made (nobody else has touched it).
 * The exchange's buffers are p * 40 and p * 16 bytes, freed before return.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "coll/coll_internal.h"
#include "core/internal.h"
#include "topo/induce.h"

/* The marks of the two exchanges (any value the shift's q never takes
 * in an allgather: it is 0 there). */
enum { TC__SPLIT_MARK_ARGS = 0x53504c31, TC__SPLIT_MARK_MADE = 0x53504c32 };
enum { TC__SPLIT_W = 5 }; /* words per rank in exchange 1 */

static uint64_t tc__split_hash(const char *s, uint64_t h)
{
	h ^= 1469598103934665603ull;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ (s ? 1 : 0)) * 1099511628211ull;
}

/* Members of one colour, ordered by (key, parent rank). */
struct tc__member {
	int64_t key;
	int rank;
};
static int tc__member_cmp(const void *a, const void *b)
{
	const struct tc__member *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/*
 * The split: bad is this rank's own argument error (0: none), agree a
 * value every rank must give alike (which helper, its arguments).
 */
static int tc__split(struct tc_proc *proc, int colour, int key, const char *topology,
                     uint64_t agree, int bad, struct tc_proc **out)
{
	struct tc_team *team = proc->team;
	const int p = team->p, me = proc->rank;
	if (out)
		*out = NULL;
	if (!bad && !out) {
		tc__set_detail("tc_team_split: out is NULL");
		bad = TC_EINVAL;
	}
	if (!bad && colour < 0 && colour != TC_UNDEFINED) {
		tc__set_detail("tc_team_split: colour %d is negative and not TC_UNDEFINED", colour);
		bad = TC_EINVAL;
	}
	/* A named topology is checked where it is made (exchange 2): a bad
	 * spec is then every rank's TC_ETOPO. */
	uint64_t mine[TC__SPLIT_W] = {(uint64_t)(int64_t)bad, (uint64_t)(int64_t)colour,
	                              (uint64_t)(int64_t)key,
	                              tc__split_hash(colour == TC_UNDEFINED ? NULL : topology, 0),
	                              agree};
	uint64_t *all = malloc((size_t)p * sizeof mine);
	struct tc__member *mem = malloc((size_t)p * sizeof *mem);
	int *ranks = malloc((size_t)p * sizeof *ranks);
	uint64_t *made = malloc((size_t)p * 2 * sizeof *made);
	int err = all && mem && ranks && made ? TC_OK : TC_ENOMEM;
	if (err)
		goto done; /* (the others then wait for this rank until the timeout) */
	err = tc__allgather_marked(proc, mine, all, TC__SPLIT_W, TC_UINT64, TC__SPLIT_MARK_ARGS);
	if (err)
		goto done;

	/* 1. Agreed checks: the same verdict on every rank. */
	for (int r = 0; r < p && !err; r++) {
		const uint64_t *v = &all[(size_t)r * TC__SPLIT_W];
		if (v[0] && bad) {
			err = bad; /* its own (and its words), whichever rank is first */
		} else if (v[0]) {
			err = TC_EINVAL;
			tc__set_detail("tc_team_split: rank %d's arguments are bad (%s)", r,
			               tc_strerror((int)(int64_t)v[0]));
		} else if (v[4] != all[4]) {
			err = TC_EINVAL;
			tc__set_detail("tc_team_split: ranks 0 and %d made different splits "
			               "(tc_team_split, tc_team_split_dims with other masks, "
			               "tc_team_dup)",
			               r);
		}
	}
	int k = 0, at = -1;
	if (!err && colour != TC_UNDEFINED) {
		for (int r = 0; r < p; r++) {
			const uint64_t *v = &all[(size_t)r * TC__SPLIT_W];
			if ((int)(int64_t)v[1] != colour)
				continue;
			if (v[3] != mine[3]) {
				err = TC_EINVAL;
				tc__set_detail("tc_team_split: ranks %d and %d of colour %d name "
				               "different topologies",
				               me, r, colour);
				break;
			}
			mem[k++] = (struct tc__member){(int64_t)v[2], r};
		}
		qsort(mem, (size_t)k, sizeof *mem, tc__member_cmp);
		for (int i = 0; i < k; i++) {
			ranks[i] = mem[i].rank;
			if (mem[i].rank == me)
				at = i;
		}
	}
	/* A colour's topology disagreement is seen by its ranks only: agreed
	 * in exchange 2, as a failure to make the sub-team. */

	/* 2. The makers make, everyone learns. */
	struct tc_team *sub = NULL;
	int cerr = err;
	if (!err && at == 0) {
		char spec[64];
		const char *use = topology;
		if (!use) {
			cerr = tc__topo_induce(team->topo, ranks, k, spec, sizeof spec);
			cerr = cerr < 0 ? cerr : TC_OK;
			use = spec;
		}
		if (!cerr)
			cerr = tc__team_sub_create(team, use, ranks, k, &sub);
		if (cerr) {
			char why[sizeof(((struct tc__detail *)0)->text)];
			snprintf(why, sizeof why, "%s",
			         *tc_error_detail() ? tc_error_detail() : tc_strerror(cerr));
			tc__set_detail("tc_team_split: this rank, the first of colour %d, could not "
			               "make its sub-team over '%s': %s",
			               colour, use, why);
			sub = NULL;
		}
	}
	uint64_t w[2] = {(uint64_t)(uintptr_t)sub, (uint64_t)(int64_t)cerr};
	int e2 = tc__allgather_marked(proc, w, made, 2, TC_UINT64, TC__SPLIT_MARK_MADE);
	if (e2) {
		/* Others may hold sub: it stays, freed with the root. */
		err = e2;
		goto done;
	}
	if (err)
		goto done; /* agreed in exchange 1: every rank returns it */
	if (cerr)
		err = cerr; /* this rank's own failure (and its words) first */
	for (int r = 0; r < p && !err; r++) {
		int e = (int)(int64_t)made[2 * r + 1];
		if (e) {
			err = e;
			tc__set_detail("tc_team_split: rank %d could not make its colour's sub-team (%s)",
			               r, tc_strerror(e));
		}
	}
	if (err) {
		tc__team_sub_destroy(sub); /* seen by nobody else */
		goto done;
	}
	if (at >= 0) {
		struct tc_team *s = (struct tc_team *)(uintptr_t)made[2 * ranks[0]];
		*out = &s->procs[at];
	}
done:
	free(all);
	free(mem);
	free(ranks);
	free(made);
	return err;
}

int tc_team_split(struct tc_proc *proc, int colour, int key, const char *topology, struct tc_proc **out)
{
	tc__clear_detail();
	if (out)
		*out = NULL;
	if (!proc)
		return TC_EINVAL;
	return tc__split(proc, colour, key, topology, tc__split_hash("split", 0), 0, out);
}

int tc_team_dup(struct tc_proc *proc, struct tc_proc **out)
{
	tc__clear_detail();
	if (out)
		*out = NULL;
	if (!proc)
		return TC_EINVAL;
	char spec[64];
	tc_topo_spec(proc->team->topo, spec, sizeof spec);
	return tc__split(proc, 0, proc->rank, spec, tc__split_hash("dup", 0), 0, out);
}

int tc_team_split_dims(struct tc_proc *proc, unsigned keep, struct tc_proc **out)
{
	tc__clear_detail();
	if (out)
		*out = NULL;
	if (!proc)
		return TC_EINVAL;
	const struct tc_topo *t = proc->team->topo;
	const enum tc_topo_kind kind = tc_topo_kind(t);
	if (kind != TC_TOPO_MESH && kind != TC_TOPO_TORUS && kind != TC_TOPO_HYPERCUBE) {
		/* The same on every rank: nobody waits. */
		tc__set_detail("tc_team_split_dims: the team's topology is a %s, not a mesh, "
		               "torus or hypercube",
		               tc_topo_kind_name(kind));
		return TC_ENOTSUP;
	}
	int dims[TC_TOPO_MAX_DIMS > 32 ? TC_TOPO_MAX_DIMS : 32];
	const int nd = kind == TC_TOPO_HYPERCUBE ? tc_topo_dims(t, NULL) : tc_topo_dims(t, dims);
	int bad = 0, colour = 0;
	const int me = proc->rank;
	if (!keep || (nd < 32 && keep >> nd)) {
		tc__set_detail("tc_team_split_dims: keep 0x%x names no dimension or one the "
		               "topology's %d lack",
		               keep, nd);
		bad = TC_EINVAL;
	} else if (kind == TC_TOPO_HYPERCUBE) {
		colour = me & ~(int)keep;
	} else {
		int c[TC_TOPO_MAX_DIMS];
		tc_topo_coords(t, me, c);
		for (int d = 0; d < nd; d++)
			if (keep >> d & 1)
				c[d] = 0;
		colour = tc_topo_rank_of(t, c);
	}
	return tc__split(proc, bad ? 0 : colour, me, NULL, tc__split_hash("dims", keep), bad, out);
}

int tc_team_free(struct tc_proc *proc)
{
	tc__clear_detail();
	if (!proc)
		return TC_EINVAL;
	struct tc_team *t = proc->team;
	if (!t->parent) {
		tc__set_detail("tc_team_free: a root team's proc; the team is freed by "
		               "tc_team_destroy");
		return TC_EINVAL;
	}
	int err = tc_barrier(proc, NULL);
	if (err)
		return err;
	tc__xq_unlist(proc); /* its queue is empty: the barrier ran after it */
	/* Acq_rel: the last rank to leave sees every other rank's use of the
	 * team before it frees it (each rank's increment releases it); no
	 * rank reads the team after its increment (k is read before). */
	const int k = t->p;
	if (atomic_fetch_add_explicit(&t->sub_leaving, 1, memory_order_acq_rel) + 1 == k)
		tc__team_sub_destroy(t);
	return TC_OK;
}
