/* SPDX-License-Identifier: MIT */
/*
 * lib/core/group.c - sub-teams made by their members alone
 * (tc_team_create_group; MPI_Comm_create_group).
 *
 * tc_team_split is a collective of the whole team; here only the members
 * call, and none waits for another.  The root team keeps a list of the
 * groups being made: the first member to call makes the sub-team and
 * lists it with the members that have picked it up; each later member
 * takes the first listed group of the same parent, members and tag that
 * it has not picked up yet, and the last one unlists it.  So the k-th call
 * of a rank with given members and tag joins the k-th sub-team made with
 * them, whatever the order in which the members arrive.  The list is the
 * root's, under its group_mu (held while a sub-team is made, which takes
 * no other rank's help); a start of the root empties it (a run that ended
 * before every member came leaves no half-joined group to the next).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "core/internal.h"
#include "topo/induce.h"

struct tc__group {
	struct tc__group *next;
	const struct tc_team *parent;
	int tag, n, npicked;
	struct tc_team *sub;
	int *members;  /* n ranks of parent */
	bool picked[]; /* per member: has taken its proc */
};

void tc__team_groups_clear(struct tc_team *root)
{
	pthread_mutex_lock(&root->group_mu);
	while (root->groups) {
		struct tc__group *g = root->groups;
		root->groups = g->next;
		free(g->members);
		free(g);
	}
	pthread_mutex_unlock(&root->group_mu);
}

/* The checks of the arguments: the calling rank's index among the members
 * (*at), or an error with its detail. */
static int tc__group_args(const struct tc_proc *proc, const int *members, int n, int tag, int *at)
{
	const int p = proc->team->p;
	if (n < 1 || n > p || !members) {
		tc__set_detail("tc_team_create_group: %d members%s (1 to the team's %d ranks)", n,
		               members ? "" : " at NULL", p);
		return TC_EINVAL;
	}
	if (tag < 0) {
		tc__set_detail("tc_team_create_group: tag %d is negative", tag);
		return TC_EINVAL;
	}
	bool *seen = calloc((size_t)p, sizeof *seen);
	if (!seen)
		return TC_ENOMEM;
	int err = TC_OK;
	*at = -1;
	for (int i = 0; i < n && !err; i++) {
		const int r = members[i];
		if (r < 0 || r >= p) {
			tc__set_detail("tc_team_create_group: member %d is rank %d, out of 0..%d",
			               i, r, p - 1);
			err = TC_ERANK;
		} else if (seen[r]) {
			tc__set_detail("tc_team_create_group: rank %d is a member twice", r);
			err = TC_EINVAL;
		} else {
			seen[r] = true;
			if (r == proc->rank)
				*at = i;
		}
	}
	free(seen);
	if (!err && *at < 0) {
		tc__set_detail("tc_team_create_group: the calling rank %d is not among the %d "
		               "members (only they call)",
		               proc->rank, n);
		err = TC_EINVAL;
	}
	return err;
}

int tc_team_create_group(struct tc_proc *proc, const int *members, int n, int tag, struct tc_proc **out)
{
	tc__clear_detail();
	if (out)
		*out = NULL;
	if (!proc || !out)
		return TC_EINVAL;
	int at, err = tc__group_args(proc, members, n, tag, &at);
	if (err)
		return err;
	struct tc_team *team = proc->team, *root = tc__root(team), *sub = NULL;
	pthread_mutex_lock(&root->group_mu);
	struct tc__group **g = &root->groups;
	while (*g && ((*g)->parent != team || (*g)->tag != tag || (*g)->n != n || (*g)->picked[at] ||
	              memcmp((*g)->members, members, (size_t)n * sizeof *members)))
		g = &(*g)->next;
	if (*g) {
		struct tc__group *e = *g;
		sub = e->sub;
		e->picked[at] = true;
		if (++e->npicked == n) {
			*g = e->next;
			free(e->members);
			free(e);
		}
	} else {
		char spec[64];
		err = tc__topo_induce(team->topo, members, n, spec, sizeof spec);
		if (err >= 0)
			err = tc__team_sub_create(team, spec, members, n, &sub);
		struct tc__group *e = NULL;
		if (!err && n > 1) {
			e = calloc(1, sizeof *e + (size_t)n * sizeof e->picked[0]);
			int *m = e ? malloc((size_t)n * sizeof *m) : NULL;
			if (!m) {
				free(e);
				tc__team_sub_destroy(sub); /* seen by nobody else */
				sub = NULL;
				err = TC_ENOMEM;
			} else {
				memcpy(m, members, (size_t)n * sizeof *m);
				*e = (struct tc__group){.parent = team,
				                        .tag = tag,
				                        .n = n,
				                        .npicked = 1,
				                        .sub = sub,
				                        .members = m};
				e->picked[at] = true;
				*g = e; /* last: the groups made earlier are found first */
			}
		}
		if (err) {
			char why[sizeof(((struct tc__detail *)0)->text)];
			snprintf(why, sizeof why, "%s",
			         *tc_error_detail() ? tc_error_detail() : tc_strerror(err));
			tc__set_detail("tc_team_create_group: the sub-team of %d members over '%s': %s",
			               n, spec, why);
		}
	}
	pthread_mutex_unlock(&root->group_mu);
	if (err)
		return err;
	*out = &sub->procs[at];
	return TC_OK;
}
