/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_group.c - groups (MPI_Comm_group, MPI_Group_*) and
 * MPI_Comm_create.
 *
 * A group is an ordered list of distinct ranks of MPI_COMM_WORLD, held by
 * the rank that made it (groups are local objects: making one
 * communicates nothing).  Handles: MPI_GROUP_NULL (0), MPI_GROUP_EMPTY (1,
 * no member), then the table below.  A call whose result has no member
 * returns MPI_GROUP_EMPTY.  MPI_Comm_create is a split of the
 * communicator: the group's members, in the group's order, form the new
 * communicator's sub-team, over the topology its team induces; every
 * other rank gets MPI_COMM_NULL.  MPI_Comm_create_group, which only the
 * group's members call, has no counterpart in topocoll's sub-teams (a
 * split is collective over the parent) and stays unsupported.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

struct group {
	int used;
	int n;
	int *world; /* n ranks of MPI_COMM_WORLD, in group order */
};

/* The table by handle: entries 0 and 1 stand for MPI_GROUP_NULL and
 * MPI_GROUP_EMPTY and are never used. */
static struct group *groups;
static int ngroups;

/* The group of a handle (MPI_GROUP_EMPTY included), or NULL. */
static const struct group *group_of(MPI_Group g)
{
	static const struct group empty = {.used = 1};
	if (g == MPI_GROUP_EMPTY)
		return &empty;
	if (g <= MPI_GROUP_EMPTY || g >= ngroups || !groups[g].used)
		return NULL;
	return &groups[g];
}

/* Checks that MPI is live and g is a group: the group, or NULL with *rc
 * the error. */
static const struct group *group_arg(MPI_Group g, const char *fn, int *rc)
{
	if ((*rc = tcmpi__check_init(fn)) != MPI_SUCCESS)
		return NULL;
	const struct group *gr = group_of(g);
	if (!gr)
		*rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_GROUP, fn, "invalid group %d", (int)g);
	return gr;
}

/* A new group of the n world ranks at w (taken over: freed on error);
 * n == 0 gives MPI_GROUP_EMPTY. */
static int group_new(int *w, int n, MPI_Group *out, const char *fn)
{
	if (n == 0) {
		free(w);
		*out = MPI_GROUP_EMPTY;
		return MPI_SUCCESS;
	}
	int h = MPI_GROUP_EMPTY + 1;
	while (h < ngroups && groups[h].used)
		h++;
	if (h >= ngroups) {
		int grow = ngroups ? 2 * ngroups : 8;
		struct group *g = realloc(groups, (size_t)grow * sizeof *g);
		if (!g) {
			free(w);
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
		}
		memset(g + ngroups, 0, (size_t)(grow - ngroups) * sizeof *g);
		groups = g;
		ngroups = grow;
	}
	groups[h] = (struct group){.used = 1, .n = n, .world = w};
	*out = h;
	return MPI_SUCCESS;
}

/* Room for n ranks (at least one), or NULL after reporting. */
static int *ranks_alloc(int n, const char *fn)
{
	int *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
	if (!w)
		(void)tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
	return w;
}

/* The position of world rank w in g, or -1. */
static int group_find(const struct group *g, int w)
{
	for (int i = 0; i < g->n; i++)
		if (g->world[i] == w)
			return i;
	return -1;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	const struct tcmpi__comm *c = tcmpi__comm(comm);
	if (!c)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, __func__,
		                    "invalid communicator %d", (int)comm);
	if (!group)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL group");
	const int n = tcmpi__comm_size(c);
	int *w = ranks_alloc(n, __func__);
	if (!w)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n; i++)
		w[i] = tcmpi__world_rank(c, i);
	return group_new(w, n, group, __func__);
}

int MPI_Group_size(MPI_Group group, int *size)
{
	int rc;
	const struct group *g = group_arg(group, __func__, &rc);
	if (!g)
		return rc;
	if (!size)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL size");
	*size = g->n;
	return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank)
{
	int rc;
	const struct group *g = group_arg(group, __func__, &rc);
	if (!g)
		return rc;
	if (!rank)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL rank");
	const int at = group_find(g, tc_rank(tcmpi__self->proc));
	*rank = at < 0 ? MPI_UNDEFINED : at;
	return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group *group)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!group)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL group");
	if (!group_of(*group))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_GROUP, __func__, "invalid group %d",
		                    (int)*group);
	if (*group != MPI_GROUP_EMPTY) {
		free(groups[*group].world);
		groups[*group] = (struct group){0};
	}
	*group = MPI_GROUP_NULL;
	return MPI_SUCCESS;
}

/* Checks n ranks of g at ranks[] (each in [0, g->n), none twice): 0, or
 * the error reported.  seen: g->n zeroed flags, left set. */
static int ranks_check(const struct group *g, int n, const int ranks[], char *seen, const char *fn)
{
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= g->n)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_RANK, fn,
			                    "ranks[%d] = %d is not a rank of a group of %d", i,
			                    ranks[i], g->n);
		if (seen[ranks[i]]++)
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_RANK, fn, "rank %d named twice",
			                    ranks[i]);
	}
	return MPI_SUCCESS;
}

/* The common start of incl and excl: the group, n and the list checked;
 * *seen: g->n flags, set for the ranks named (the caller frees it). */
static const struct group *list_arg(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup,
                                    char **seen, const char *fn, int *rc)
{
	*seen = NULL;
	const struct group *g = group_arg(group, fn, rc);
	if (!g)
		return NULL;
	if (!newgroup || (n > 0 && !ranks)) {
		*rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL argument");
		return NULL;
	}
	if (n < 0 || n > g->n) {
		*rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "n = %d, for a group of %d", n, g->n);
		return NULL;
	}
	if (!(*seen = calloc((size_t)g->n + 1, 1))) {
		*rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
		return NULL;
	}
	if ((*rc = ranks_check(g, n, ranks, *seen, fn)) != MPI_SUCCESS) {
		free(*seen);
		*seen = NULL;
		return NULL;
	}
	return g;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	int rc;
	char *seen;
	const struct group *g = list_arg(group, n, ranks, newgroup, &seen, __func__, &rc);
	if (!g)
		return rc;
	free(seen);
	int *w = ranks_alloc(n, __func__);
	if (!w)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < n; i++)
		w[i] = g->world[ranks[i]];
	return group_new(w, n, newgroup, __func__);
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	int rc;
	char *seen;
	const struct group *g = list_arg(group, n, ranks, newgroup, &seen, __func__, &rc);
	if (!g)
		return rc;
	int *w = ranks_alloc(g->n - n, __func__), k = 0;
	if (!w) {
		free(seen);
		return MPI_ERR_NO_MEM;
	}
	for (int i = 0; i < g->n; i++)
		if (!seen[i])
			w[k++] = g->world[i];
	free(seen);
	return group_new(w, k, newgroup, __func__);
}

/* The ranks of n triplets (first, last, stride) of g, in order, checked
 * as MPI_Group_range_incl's: first and last ranks of g, stride not 0 and
 * pointing from first to last, no rank twice.  *out (malloc'ed) and *k,
 * or the error reported. */
static int ranges_expand(const struct group *g, int n, int ranges[][3], int **out, int *k, const char *fn)
{
	*out = NULL;
	*k = 0;
	if (n < 0 || (n > 0 && !ranges))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "n = %d ranges%s", n,
		                    n > 0 ? ", NULL" : "");
	int *r = ranks_alloc(g->n, fn);
	if (!r)
		return MPI_ERR_NO_MEM;
	char *seen = calloc((size_t)g->n + 1, 1);
	if (!seen) {
		free(r);
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	int rc = MPI_SUCCESS;
	for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
		const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
		if (first < 0 || first >= g->n || last < 0 || last >= g->n)
			rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_RANK, fn,
			                  "ranges[%d] = (%d, %d, %d): not ranks of a group of %d",
			                  i, first, last, stride, g->n);
		else if (!stride || (first < last && stride < 0) || (first > last && stride > 0))
			rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn,
			                  "ranges[%d] = (%d, %d, %d): the stride does not lead from "
			                  "first to last",
			                  i, first, last, stride);
		for (long x = first; rc == MPI_SUCCESS && (stride > 0 ? x <= last : x >= last);
		     x += stride) {
			if (seen[x]++)
				rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_RANK, fn,
				                  "rank %ld named twice (ranges[%d])", x, i);
			else
				r[(*k)++] = (int)x;
		}
	}
	free(seen);
	if (rc != MPI_SUCCESS) {
		free(r);
		*k = 0;
		return rc;
	}
	*out = r;
	return MPI_SUCCESS;
}

/* The common start of range_incl and range_excl: the group, newgroup and
 * the ranges checked, their ranks in *r (k of them); NULL with *rc the
 * error. */
static const struct group *ranges_arg(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup,
                                      int **r, int *k, const char *fn, int *rc)
{
	const struct group *g = group_arg(group, fn, rc);
	if (!g)
		return NULL;
	if (!newgroup) {
		*rc = tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL newgroup");
		return NULL;
	}
	*rc = ranges_expand(g, n, ranges, r, k, fn);
	return *rc == MPI_SUCCESS ? g : NULL;
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	int rc, k, *r;
	const struct group *g = ranges_arg(group, n, ranges, newgroup, &r, &k, __func__, &rc);
	if (!g)
		return rc;
	for (int i = 0; i < k; i++)
		r[i] = g->world[r[i]];
	return group_new(r, k, newgroup, __func__);
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	int rc, k, *r;
	const struct group *g = ranges_arg(group, n, ranges, newgroup, &r, &k, __func__, &rc);
	if (!g)
		return rc;
	int *w = ranks_alloc(g->n - k, __func__), m = 0;
	char *out = w ? calloc((size_t)g->n + 1, 1) : NULL;
	if (!out) {
		free(r);
		free(w);
		return w ? tcmpi__error(MPI_COMM_NULL, MPI_ERR_NO_MEM, __func__, "out of memory")
		         : MPI_ERR_NO_MEM;
	}
	for (int i = 0; i < k; i++)
		out[r[i]] = 1;
	for (int i = 0; i < g->n; i++)
		if (!out[i])
			w[m++] = g->world[i];
	free(r);
	free(out);
	return group_new(w, m, newgroup, __func__);
}

/* The set operations: a's members that b holds (INTER), that it does not
 * (DIFF), or a's then b's not in a (UNION), in that order. */
enum { UNION, INTER, DIFF };
static int group_setop(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, int op, const char *fn)
{
	int rc;
	const struct group *a = group_arg(group1, fn, &rc), *b = a ? group_arg(group2, fn, &rc) : NULL;
	if (!b)
		return rc;
	if (!newgroup)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, fn, "NULL newgroup");
	int *w = ranks_alloc(a->n + (op == UNION ? b->n : 0), fn), k = 0;
	if (!w)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < a->n; i++)
		if (op == UNION || (group_find(b, a->world[i]) >= 0) == (op == INTER))
			w[k++] = a->world[i];
	for (int i = 0; op == UNION && i < b->n; i++)
		if (group_find(a, b->world[i]) < 0)
			w[k++] = b->world[i];
	return group_new(w, k, newgroup, fn);
}

int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	return group_setop(group1, group2, newgroup, UNION, __func__);
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	return group_setop(group1, group2, newgroup, INTER, __func__);
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	return group_setop(group1, group2, newgroup, DIFF, __func__);
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
	int rc;
	const struct group *a = group_arg(group1, __func__, &rc),
	                   *b = a ? group_arg(group2, __func__, &rc) : NULL;
	if (!b)
		return rc;
	if (n < 0 || (n > 0 && (!ranks1 || !ranks2)))
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "n = %d%s", n,
		                    n > 0 ? ", NULL ranks" : "");
	for (int i = 0; i < n; i++)
		if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->n))
			return tcmpi__error(MPI_COMM_NULL, MPI_ERR_RANK, __func__,
			                    "ranks1[%d] = %d is not a rank of a group of %d", i,
			                    ranks1[i], a->n);
	for (int i = 0; i < n; i++) {
		if (ranks1[i] == MPI_PROC_NULL) {
			ranks2[i] = MPI_PROC_NULL;
			continue;
		}
		const int at = group_find(b, a->world[ranks1[i]]);
		ranks2[i] = at < 0 ? MPI_UNDEFINED : at;
	}
	return MPI_SUCCESS;
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
	int rc;
	const struct group *a = group_arg(group1, __func__, &rc),
	                   *b = a ? group_arg(group2, __func__, &rc) : NULL;
	if (!b)
		return rc;
	if (!result)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL result");
	if (a->n != b->n) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	int same_order = 1, same_set = 1;
	for (int i = 0; i < a->n; i++) {
		same_order &= a->world[i] == b->world[i];
		same_set &= group_find(b, a->world[i]) >= 0;
	}
	*result = same_order ? MPI_IDENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
	return MPI_SUCCESS;
}

MPI_Fint MPI_Group_c2f(MPI_Group group)
{
	return (MPI_Fint)group;
}

/* A Fortran handle that names no group converts to MPI_GROUP_NULL. */
MPI_Group MPI_Group_f2c(MPI_Fint group)
{
	return group_of((MPI_Group)group) ? (MPI_Group)group : MPI_GROUP_NULL;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	const struct tcmpi__comm *c = tcmpi__comm(comm);
	if (!c)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, __func__,
		                    "invalid communicator %d", (int)comm);
	const struct group *g = group_of(group);
	if (!g)
		return tcmpi__error(comm, MPI_ERR_GROUP, __func__, "invalid group %d", (int)group);
	if (!newcomm)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL newcomm");
	/* Every member must belong to comm (every rank checks alike: the
	 * group is the same everywhere, as MPI requires). */
	const int p = tcmpi__comm_size(c);
	for (int i = 0; i < g->n; i++) {
		int in = 0;
		for (int r = 0; r < p && !in; r++)
			in = tcmpi__world_rank(c, r) == g->world[i];
		if (!in)
			return tcmpi__error(comm, MPI_ERR_GROUP, __func__,
			                    "member %d of the group (rank %d of MPI_COMM_WORLD) is not in "
			                    "the communicator",
			                    i, g->world[i]);
	}
	const int at = group_find(g, tcmpi__world_rank(c, tcmpi__comm_rank(c)));
	*newcomm = MPI_COMM_NULL;
	if (c->self)
		return at < 0 ? MPI_SUCCESS : tcmpi__comm_new(c, newcomm, __func__);
	struct tc_proc *np = NULL;
	rc = tc_team_split(c->proc, at < 0 ? TC_UNDEFINED : 0, at, NULL, &np);
	if (rc)
		return tcmpi__tc_error(comm, rc, __func__);
	return tcmpi__comm_sub(c, np, newcomm, __func__);
}

void tcmpi__groups_end(void)
{
	for (int i = 0; i < ngroups; i++)
		free(groups[i].world);
	free(groups);
	groups = NULL;
	ngroups = 0;
}

/* Called by the group's members alone (tc_team_create_group, whose tag
 * tells apart groups of the same members made at the same time, as MPI's
 * does): a communicator of them, in the group's order, over the topology
 * the communicator's team induces on them.  MPI_GROUP_EMPTY, or a caller
 * outside the group, gets MPI_COMM_NULL. */
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, __func__, &c);
	if (rc)
		return rc;
	const struct group *g = group_of(group);
	if (!g)
		return tcmpi__error(comm, MPI_ERR_GROUP, __func__, "invalid group %d", (int)group);
	if (!newcomm)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL newcomm");
	if (tag < 0)
		return tcmpi__error(comm, MPI_ERR_TAG, __func__, "negative tag %d", tag);
	*newcomm = MPI_COMM_NULL;
	const int p = tcmpi__comm_size(c);
	int *ranks = malloc((size_t)(g->n ? g->n : 1) * sizeof *ranks);
	if (!ranks)
		return tcmpi__error(comm, MPI_ERR_NO_MEM, __func__, "out of memory");
	/* Each member's rank in comm (every member must belong to it). */
	for (int i = 0; i < g->n; i++) {
		ranks[i] = -1;
		for (int r = 0; r < p && ranks[i] < 0; r++)
			if (tcmpi__world_rank(c, r) == g->world[i])
				ranks[i] = r;
		if (ranks[i] < 0) {
			free(ranks);
			return tcmpi__error(comm, MPI_ERR_GROUP, __func__,
			                    "member %d of the group (rank %d of MPI_COMM_WORLD) is not in "
			                    "the communicator",
			                    i, g->world[i]);
		}
	}
	const int at = group_find(g, tcmpi__world_rank(c, tcmpi__comm_rank(c)));
	if (at < 0) {
		free(ranks);
		return MPI_SUCCESS;
	}
	if (c->self) {
		free(ranks);
		return tcmpi__comm_new(c, newcomm, __func__);
	}
	struct tc_proc *np = NULL;
	rc = tc_team_create_group(c->proc, ranks, g->n, tag, &np);
	free(ranks);
	if (rc)
		return tcmpi__tc_error(comm, rc, __func__);
	return tcmpi__comm_sub(c, np, newcomm, __func__);
}
