/* SPDX-License-Identifier: MIT */
/*
 * lib/core/subteam.c - sub-teams as team objects: a team of some of a
 * parent's ranks, with channels, procs, sequence numbers and mismatch
 * signatures of its own, run by the threads or fibres of the parent's
 * ranks.  Deciding who belongs to which sub-team and over which topology
 * is lib/coll/split.c's (a collective over the parent); starting,
 * resetting and marking ranks returned is driven by lib/run/run.c through
 * the calls here.
 *
 * Its topology's links are weighed by the parent's routes between their
 * ends (lib/topo/charge.h): what the clock charges a message of the
 * sub-team is what the parent's network would carry.
 *
 * Every sub-team is listed on its root (the team tc_team_create made), in
 * creation order, under the root's sub_mu: an abort of any of them aborts
 * the root and all of them (lib/core/team.c), a start of the root resets
 * them all, tc_team_destroy of the root frees those left.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "core/internal.h"
#include "fibre/runq.h"
#include "topo/charge.h"

int tc__team_sub_create(struct tc_team *parent, const char *spec, const int *parent_rank, int k,
                        struct tc_team **out)
{
	struct tc_team *root = tc__root(parent);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.p = k;
	cfg.topology = spec;
	cfg.wait = parent->wait;
	cfg.ring_bytes = parent->ring_bytes;
	cfg.packet_bytes = parent->packet_bytes;
	cfg.single_copy_min = parent->single_copy_min;
	cfg.model = parent->model;
	cfg.mode = parent->emulate ? TC_MODE_EMULATED : TC_MODE_NATIVE;
	cfg.no_mismatch_check = !parent->check;
	cfg.exec = parent->exec;
	cfg.attach_timeout_ms = 0;
	struct tc_team *t = NULL;
	int err = tc_team_create(&cfg, &t);
	if (err)
		return err;
	t->parent_rank = malloc((size_t)k * sizeof *t->parent_rank);
	if (!t->parent_rank) {
		tc__team_free(t);
		return TC_ENOMEM;
	}
	memcpy(t->parent_rank, parent_rank, (size_t)k * sizeof *parent_rank);
	/* Each link is the parent's route between its ends' parent ranks, and
	 * is charged as such: 1 for the parent's own links (an induced
	 * topology), the route's charge for the others (lib/topo/charge.h). */
	err = tc__topo_weigh(t->topo, parent->topo, parent_rank);
	if (err) {
		tc__team_free(t);
		return err;
	}
	/* The parent's resolved policy, not one resolved again for k ranks:
	 * the sub-team's ranks share the root's CPUs with all its ranks.
	 * cpus is set so that "p <= cpus" (a CPU per rank: spin, poll the
	 * eager paths, sleep precisely) reads as on the root. */
	t->wait = parent->wait;
	t->spin_ns = parent->spin_ns;
	t->yield_ns = parent->yield_ns;
	t->may_block = parent->may_block;
	t->asym_fence = parent->asym_fence;
	t->fibre_stack = parent->fibre_stack;
	t->cpus = root->p <= root->cpus ? (root->cpus > k ? root->cpus : k) : k - 1;
	t->timeout_cfg_ns = parent->timeout_cfg_ns;
	atomic_store(&t->timeout_ns, parent->timeout_cfg_ns);
	t->attach_timeout_ns = 0;
	t->wd_fn = parent->wd_fn;
	t->wd_arg = parent->wd_arg;
	t->epoch_ns = root->epoch_ns;
	t->parent = parent;
	t->root = root;
	t->njoined = k;
	/* Never run, attached or destroyed on its own (TC_EBUSY, TC_EINVAL). */
	atomic_store(&t->running, 1);
	for (int r = 0; r < k; r++) {
		struct tc_proc *pr = &t->procs[r], *pp = &parent->procs[parent_rank[r]];
		pr->base = pp->base ? pp->base : pp;
		pr->db.task = pp->db.task;
		/* Clock 0: its first call takes the rank's (tc__clock_pull,
		 * on the rank's own thread). */
		atomic_store_explicit(&pr->attached, 1, memory_order_relaxed);
		atomic_store_explicit(&pr->joined, 1, memory_order_relaxed);
	}
	/* Listed last: after its parent, which is listed (or the root). */
	pthread_mutex_lock(&root->sub_mu);
	struct tc_team **at = &root->sub_head;
	while (*at)
		at = &(*at)->sub_next;
	*at = t;
	atomic_store_explicit(&root->has_subs, true, memory_order_release);
	/* An abort of the run may have come before the team was listed. */
	if (atomic_load(&root->aborted))
		atomic_store(&t->aborted, 1);
	pthread_mutex_unlock(&root->sub_mu);
	*out = t;
	return TC_OK;
}

void tc__team_sub_destroy(struct tc_team *t)
{
	if (!t)
		return;
	struct tc_team *root = t->root;
	pthread_mutex_lock(&root->sub_mu);
	for (struct tc_team **at = &root->sub_head; *at; at = &(*at)->sub_next)
		if (*at == t) {
			*at = t->sub_next;
			break;
		}
	/* Its own sub-teams go with it (unlisted here, freed below). */
	struct tc_team **at = &root->sub_head;
	struct tc_team *mine = NULL, **mine_tail = &mine;
	while (*at) {
		struct tc_team *s = *at, *a = s->parent;
		while (a && a != t)
			a = a->parent;
		if (a == t) {
			*at = s->sub_next;
			s->sub_next = NULL;
			*mine_tail = s;
			mine_tail = &s->sub_next;
		} else {
			at = &s->sub_next;
		}
	}
	atomic_store_explicit(&root->has_subs, root->sub_head != NULL, memory_order_relaxed);
	pthread_mutex_unlock(&root->sub_mu);
	t->sub_next = NULL;
	t->sub_head = mine; /* tc__team_free frees a team's list, children first */
	tc__team_free(t);
}

void tc__team_sub_tasks(struct tc_team *root)
{
	pthread_mutex_lock(&root->sub_mu);
	for (struct tc_team *s = root->sub_head; s; s = s->sub_next)
		for (int r = 0; r < s->p; r++)
			s->procs[r].db.task = s->parent->procs[s->parent_rank[r]].db.task;
	pthread_mutex_unlock(&root->sub_mu);
}

void tc__team_sub_start(struct tc_team *root, void (*reset_proc)(struct tc_proc *))
{
	pthread_mutex_lock(&root->sub_mu);
	for (struct tc_team *s = root->sub_head; s; s = s->sub_next) {
		const bool aborted = atomic_load(&s->aborted);
		for (long i = 0; i < s->nchans; i++)
			if (aborted || s->chans[i].tail != atomic_load_explicit(&s->chans[i].head,
			                                                        memory_order_relaxed))
				tc__chan_reset(&s->chans[i]);
		for (int r = 0; r < s->p; r++) {
			reset_proc(&s->procs[r]);
			s->procs[r].clock = 0;
			s->procs[r].ext_clock = 0;
		}
		s->epoch_ns = root->epoch_ns;
		if (s->shared && s->shared_start)
			s->shared_start(s->shared);
		atomic_store(&s->aborted, 0);
		atomic_store(&s->wd_fired, 0);
		atomic_store(&s->first_err, 0);
	}
	pthread_mutex_unlock(&root->sub_mu);
}

/* Every rank of a run passes here as it returns, all of them at once when
 * they end at one deadline; without sub-teams it takes no lock.  On fibres
 * a CPU whose thread sleeps on a contended mutex runs none of its other
 * ranks meanwhile, and a guest's idle vCPU takes tens of microseconds to
 * wake: with 64 ranks on 16 vCPUs of a KVM guest the runs whose ranks all
 * returned at one deadline ended 34-70 us after it, those that ended with
 * one rank within 10 us (without sub-teams; with them, the fibres below
 * yield instead of sleeping, not measured there).  A sub-team of proc's
 * was listed before proc's tc_team_split returned (lib/coll/split.c: its
 * maker lists it, then the members learn of it), so the acquire load below
 * sees has_subs set. */
void tc__team_sub_returned(struct tc_team *root, const struct tc_proc *proc)
{
	if (!atomic_load_explicit(&root->has_subs, memory_order_acquire))
		return;
	/* With sub-teams the lock is taken: on fibres, a rank that finds it
	 * held gives its CPU to the next fibre and tries again, rather than
	 * put the CPU's thread to sleep in the kernel; the holder never yields
	 * inside.  A thread rank blocks as before. */
	if (proc->db.task) {
		while (pthread_mutex_trylock(&root->sub_mu))
			tc__task_yield(proc->db.task);
	} else {
		pthread_mutex_lock(&root->sub_mu);
	}
	for (struct tc_team *s = root->sub_head; s; s = s->sub_next)
		for (int r = 0; r < s->p; r++)
			if (s->procs[r].base == proc)
				/* Release: as the root proc's own mark (lib/run/run.c). */
				atomic_store_explicit(&s->procs[r].ws.state, TC__WS_RETURNED,
				                      memory_order_release);
	pthread_mutex_unlock(&root->sub_mu);
}

struct tc_team *tc_team_parent(const struct tc_team *team)
{
	return team ? team->parent : NULL;
}

int tc_team_parent_rank(const struct tc_team *team, int rank)
{
	tc__clear_detail();
	if (!team || rank < 0 || rank >= team->p)
		return TC_ERANK;
	return team->parent ? team->parent_rank[rank] : rank;
}
