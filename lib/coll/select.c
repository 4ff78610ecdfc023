/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/select.c - choosing a collective's algorithm: a named one from
 * the registry, or TC_ALG_AUTO over every applicable one, with the pricing
 * of a team whose ranks share CPUs (tc__machine_score).
 *
 * Selection: an explicit algorithm name is looked up in the registry; "auto"
 * (or none) generates and simulates every applicable algorithm of the
 * collective for this (topology, p, m, root, model) and takes the lowest
 * predicted makespan (the first in registry order on a tie).  On a team
 * whose ranks outnumber its CPUs each level of dependent waits of a schedule
 * (a round, or a hop of a routed transfer) also costs every CPU a pass over
 * its ranks, tc__wait_level_ns() (lib/coll/machine.h), and the data are priced
 * as the shared CPUs move them, not as the model does (tc__machine_score);
 * the predictor, which has no team, prices the model alone.  A native team
 * with a CPU per rank that carries a calibration prices every candidate
 * with the calibrated prediction on its placement (tc__coll_auto_cal).  The
 * choice is a pure function of the arguments and of the team's
 * configuration, so every rank makes the same one.
 */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "coll/machine.h"
#include "base/error_detail.h"
#include "core/internal.h"
#include "topo/charge.h"
#include "topocoll.h"

/* Levels of waiting of a schedule (lib/coll/machine.h, tc__wait_level_ns()):
 * over the rounds that move anything, the longest route of the round in
 * links (every forwarder of a routed transfer waits for it in turn). */
static long tc__sched_levels(const struct tc__sched *s, const struct tc_topo *t)
{
	long n = 0;
	for (int r = 0; r < s->nrounds; r++) {
		int hmax = 0;
		for (int i = s->round_at[r]; i < s->round_at[r + 1]; i++) {
			const struct tc__xfer *x = &s->x[i];
			if (x->src == x->dst)
				continue;
			int h = tc_topo_distance(t, x->src, x->dst);
			if (h > hmax)
				hmax = h;
		}
		n += hmax;
	}
	return n;
}

/* The model AUTO prices the machine with: the user's ports, duplex and
 * switching at the TC__MACHINE_* rates (lib/coll/machine.h). */
static struct tc_model tc__machine_model(const struct tc_model *md)
{
	struct tc_model mm = *md;
	mm.ts_ns = TC__MACHINE_TS_NS;
	mm.tw_ns = TC__MACHINE_TW_NS;
	mm.th_ns = 0;
	mm.tc_ns = 0;
	return mm;
}

/*
 * AUTO's price of a schedule on a native team whose ranks outnumber its
 * CPUs, in ps: the wall clock there is the CPUs' work, not the model's.
 * Priced on the machine (the user's ports, duplex and switching at the
 * TC__MACHINE_* rates of lib/coll/machine.h): the run cannot end before
 * its longest chain of transfers (the makespan) nor before the CPUs have
 * done its work, every link crossing copied once by the receiving rank,
 * L(m), shared over the CPUs; and each level of dependent waits costs every
 * CPU a pass over its ranks (tc__wait_level_ns).  The user's model would
 * price the data ~10x above the waits on such machines and pick a schedule
 * of log p levels over a flat one that moves p times less data (allreduce,
 * 8 KiB, p = 64 on 2 CPUs: hypercube 0.9 ms against linear's 0.23 ms).
 */
int tc__machine_score(const struct tc__sched *s, const struct tc__gen *g, tc_time_t *score)
{
	const struct tc_model mm = tc__machine_model(g->md);
	struct tc__sim sim;
	int err = tc__sched_simulate(s, g->t, &mm, &sim);
	if (err)
		return err;
	/* In double: p^2 crossings of 2^48 bytes would overflow ps. */
	double work = 0;
	for (int i = 0; i < s->nx; i++) {
		const struct tc__xfer *x = &s->x[i];
		if (x->src != x->dst)
			work += tc_topo_distance(g->t, x->src, x->dst) *
			        (mm.ts_ns + (double)x->bytes * mm.tw_ns) * TC_PS_PER_NS;
	}
	double t = fmax((double)sim.makespan, work / g->cpus) +
	           (double)tc__sched_levels(s, g->t) * (double)g->wait_ns * TC_PS_PER_NS;
	*score = t < 0x1p62 ? (tc_time_t)t : (tc_time_t)0x1p62;
	tc__sim_free(&sim);
	return 0;
}

/* AUTO's limit on the transfers of a schedule built only to price it, and
 * on its link crossings when simulated (~50 MB, ~2 s of simulation at
 * most); a larger candidate is not considered.  The exact closed forms
 * (TC__ALG_EXACT) price the large rings and direct exchanges without
 * building them. */
#define TC__AUTO_MAX_X (1 << 20)

long tc__sched_crossings(const struct tc__sched *s, const struct tc_topo *t)
{
	long n = 0;
	for (int i = 0; i < s->nx; i++)
		if (s->x[i].src != s->x[i].dst)
			n += tc_topo_distance(t, s->x[i].src, s->x[i].dst);
	return n;
}

/* An algorithm AUTO weighs, and what it knows of it so far. */
struct tc__cand {
	const struct tc__alg *a;
	int idx;         /* registry order: the tie-break */
	tc_time_t price; /* the model's makespan (ps), -1 until known */
	tc_time_t lb;    /* machine pricing: a lower bound of the score */
	int built;       /* s holds its schedule */
	struct tc__sched s;
};

/* The closed form of c under model md, in ps, or -1 where it is not the
 * exact modelled time (not TC__ALG_EXACT, NAN, or a topology whose links
 * weigh more than one link: lib/topo/charge.h; the closed forms count a
 * link as one). */
static tc_time_t tc__exact_ps(const struct tc__alg *a, const struct tc__gen *g, const struct tc_model *md)
{
	if (!(a->flags & TC__ALG_EXACT) || tc__topo_weighted(g->t))
		return -1;
	struct tc__gen gm = *g;
	gm.md = md;
	double f = a->formula(&gm);
	if (!(f >= 0) || f * TC_PS_PER_NS >= 0x1p62)
		return -1;
	return (tc_time_t)llround(f * TC_PS_PER_NS);
}

/* Whether (score, idx) beats the best so far. */
static bool tc__better(tc_time_t score, int idx, const struct tc__cand *best, tc_time_t best_score)
{
	return !best || score < best_score || (score == best_score && idx < best->idx);
}

/*
 * AUTO: the cheapest applicable algorithm, as if every candidate had been
 * generated and simulated, without doing so where it need not:
 *   - priced by the model: an exact closed form (TC__ALG_EXACT) is the
 *     makespan; the others are built (at most TC__AUTO_MAX_X transfers)
 *     and simulated;
 *   - priced on the machine (g->cpus, tc__machine_score): the candidates in
 *     the order of a lower bound of their score (the exact closed form at
 *     the machine's rates: the score is at least the makespan), one whose
 *     bound cannot beat the best is never built, and a build stops as soon
 *     as its rounds that move data, each at least one level of waits,
 *     price it above the best.
 * Ties go to the first in the registry, as a full evaluation would.
 * Skipping a candidate is a pure function of the call: every rank (and the
 * predictor) decides alike.
 */
static int tc__coll_auto(const struct tc__gen *g, int need_ordered, const struct tc__alg **alg,
                         struct tc__sched *s, tc_time_t *makespan)
{
	struct tc__cand *cs = malloc((size_t)tc__nalgs * sizeof *cs);
	unsigned char *refused = calloc((size_t)tc__nalgs, 1);
	int err = cs && refused ? TC_OK : TC_ENOMEM;
	int limited = 0; /* candidates over the limits of pricing */
	struct tc__cand *best = NULL;
	const struct tc_model mm = tc__machine_model(g->md);
	const tc_time_t wait_ps = (tc_time_t)g->wait_ns * TC_PS_PER_NS;
	/* Pass 0: the algorithms that compete; pass 1, only when none of them
	 * applies: the fallbacks (TC__ALG_FALLBACK).  Priced on the machine
	 * (g->cpus), every algorithm competes in pass 0: the fallbacks' one or
	 * two levels of waits are what that price is about (a direct alltoall
	 * of 4 KiB on 64 ranks over 2 CPUs: 2.2 ms against hypercube's 7.2).
	 * A pass runs again without a winner that refuses the call when built
	 * after a closed form priced it (rare: its tokens let the call in). */
	for (int pass = 0; pass < 2 && !best && !err;) {
		tc_time_t best_score = 0;
		int n = 0;
		for (int i = 0; i < tc__nalgs; i++) {
			const struct tc__alg *a = &tc__algs[i];
			if (a->coll != g->coll || refused[i] || (a->flags & TC__ALG_SHM) ||
			    (need_ordered && !(a->flags & TC__ALG_ORDERED)) ||
			    (g->cpus ? pass : !(a->flags & TC__ALG_FALLBACK) != !pass) ||
			    tc__alg_check_quiet(a, g))
				continue;
			struct tc__cand *c = &cs[n++];
			memset(c, 0, sizeof *c);
			c->a = a;
			c->idx = i;
			c->price = tc__exact_ps(a, g, g->md);
			if (g->cpus) {
				/* Less a nanosecond: the formula sums in double. */
				tc_time_t m = tc__exact_ps(a, g, &mm);
				c->lb = m > TC_PS_PER_NS ? m - TC_PS_PER_NS : 0;
			}
		}
		/* Machine pricing: by increasing lower bound (insertion sort of a
		 * few; equal bounds keep the registry order). */
		for (int i = 1; g->cpus && i < n; i++)
			for (int j = i; j > 0 && cs[j].lb < cs[j - 1].lb; j--) {
				struct tc__cand t = cs[j];
				cs[j] = cs[j - 1];
				cs[j - 1] = t;
			}
		for (int i = 0; i < n && !err; i++) {
			struct tc__cand *c = &cs[i];
			if (!g->cpus && c->price >= 0) {
				if (tc__better(c->price, c->idx, best, best_score)) {
					if (best && best->built)
						tc__sched_free(&best->s);
					best = c;
					best_score = c->price;
				}
				continue;
			}
			if (g->cpus && !tc__better(c->lb, c->idx, best, best_score))
				continue;
			struct tc__gen gl = *g;
			gl.max_x = TC__AUTO_MAX_X;
			if (g->cpus && best && wait_ps > 0) {
				/* Each round that moves data is a level of waits at
				 * least: past k of them the score is above the best. */
				tc_time_t k = best_score / wait_ps;
				gl.max_moving = k < INT_MAX - 1 ? (int)k + 1 : 0;
			}
			err = tc__coll_generate(c->a, &gl, &c->s);
			limited += err == TC__ELIMIT;
			if (err) {
				/* Over the limits, or not for this call: not a
				 * candidate.  Out of memory fails the call (skipping
				 * would let ranks differ). */
				if (err != TC_ENOMEM)
					err = TC_OK;
				continue;
			}
			c->built = 1;
			tc_time_t score = 0;
			if (tc__sched_crossings(&c->s, g->t) > TC__AUTO_MAX_X) {
				limited++;
				tc__sched_free(&c->s); /* too long to simulate */
				c->built = 0;
				continue;
			}
			if (g->cpus) {
				err = tc__machine_score(&c->s, g, &score);
			} else {
				struct tc__sim sim;
				err = tc__sched_simulate(&c->s, g->t, g->md, &sim);
				if (!err) {
					score = c->price = sim.makespan;
					tc__sim_free(&sim);
				}
			}
			if (!err && tc__better(score, c->idx, best, best_score)) {
				if (best && best->built)
					tc__sched_free(&best->s);
				best = c;
				best_score = score;
				continue;
			}
			tc__sched_free(&c->s);
			c->built = 0;
			if (err != TC_ENOMEM) /* too large to simulate: not a candidate */
				err = TC_OK;
		}
		if (err || !best) {
			pass++;
			continue;
		}
		if (!best->built) { /* a closed form priced it */
			err = tc__coll_generate(best->a, g, &best->s);
			if (err == TC__ELIMIT) { /* over the caller's limits */
				*alg = best->a;
				*makespan = best->price;
				break;
			}
			if (err && err != TC_ENOMEM) {
				refused[best->idx] = 1;
				best = NULL;
				err = TC_OK;
				continue;
			}
			best->built = !err;
		}
	}
	if (!err && !best && limited) {
		tc__set_detail("%s on %d ranks: every algorithm that applies is over AUTO's limit "
		               "of %d transfers or link crossings to price it, and none has an "
		               "exact closed form here: choose one by name (--alg)",
		               tc_coll_name(g->coll), g->p, TC__AUTO_MAX_X);
		err = TC_ELIMIT;
	}
	if (!err && !best)
		err = TC_ENOTSUP;
	if (!err && best->price < 0) {
		/* Priced on the machine: the time reported is the model's. */
		best->price = tc__exact_ps(best->a, g, g->md);
		if (best->price < 0) {
			struct tc__sim sim;
			err = tc__sched_simulate(&best->s, g->t, g->md, &sim);
			if (!err) {
				best->price = sim.makespan;
				tc__sim_free(&sim);
			}
		}
	}
	if (!err) {
		*alg = best->a;
		*s = best->s;
		*makespan = best->price;
	} else if (best && best->built && err != TC__ELIMIT) {
		tc__sched_free(&best->s);
	}
	free(cs);
	free(refused);
	return err;
}

/*
 * AUTO on a native team with a CPU per rank that carries a calibration
 * (g->cal, tc_team_config.calibration): every algorithm of the collective
 * that applies to the call (its registry line's restrictions; rank-ordered
 * where the operator needs it), the machine's own (TC__ALG_SHM) and the
 * fallbacks included, priced by the calibrated prediction on the team's
 * placement (tc__cal_price(), lib/coll/calprice.c: the pair's prediction
 * under the calibrated model with its concurrency charges, or the
 * shared-memory price whose rounds pay their farthest pair's hand-off);
 * the cheapest, the first in registry order on a tie.  NULL where none
 * could be priced (a variable-count call, which the prediction's call does
 * not carry here, or every price failed): the caller keeps the rule of an
 * uncalibrated team.  Pure function of the call, the calibration and the
 * placement: every rank picks alike.  TC_ENOMEM only.
 */
static int tc__coll_auto_cal(const struct tc__gen *g, int need_ordered, const struct tc__alg **out)
{
	*out = NULL;
	if (g->vmx || g->p < 2)
		return TC_OK;
	double best = 0;
	for (int i = 0; i < tc__nalgs; i++) {
		const struct tc__alg *a = &tc__algs[i];
		if (a->coll != g->coll || (need_ordered && !(a->flags & TC__ALG_ORDERED)) ||
		    tc__alg_check_quiet(a, g))
			continue;
		struct tc_call call = {.coll = g->coll,
		                       .alg = a->name,
		                       .bytes = (size_t)g->bytes,
		                       .esize = (size_t)g->esize,
		                       .root = g->root,
		                       .packets = g->packets,
		                       .q = g->q,
		                       .shift_ring = g->shift_ring,
		                       .members = g->members,
		                       .nmembers = g->nmembers};
		double ns = NAN, share = 0, sync = 0;
		int err = tc__cal_price(g->cal, g->t, &call, g->place, g->unstaged, NULL, NULL, &ns,
		                        &share, &sync);
		if (err == TC_ENOMEM)
			return err;
		const double t = ns + share + sync;
		if (err || !isfinite(t))
			continue; /* not for this call, or not priced: not a candidate */
		if (!*out || t < best) {
			*out = a;
			best = t;
		}
	}
	return TC_OK;
}

/* Algorithm a, named for a non-commutative operator, does not combine in
 * rank order: TC_ENOTSUP, the detail naming the restriction and the
 * algorithms of the collective that keep the order and apply to g. */
static int tc__unordered(const struct tc__alg *a, const struct tc__gen *g)
{
	char list[160], spec[64];
	size_t n = 0;
	list[0] = '\0';
	for (int i = 0; i < tc__nalgs && n < sizeof list; i++) {
		const struct tc__alg *b = &tc__algs[i];
		if (b->coll == a->coll && (b->flags & TC__ALG_ORDERED) && !tc__alg_check_quiet(b, g))
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", b->name);
	}
	tc_topo_spec(g->t, spec, sizeof spec);
	if (n)
		tc__set_detail("algorithm '%s' of %s does not combine in rank order, which a "
		               "non-commutative user operator needs; algorithms that do on %s: %s",
		               a->name, tc_coll_name(a->coll), spec, list);
	else
		tc__set_detail("algorithm '%s' of %s does not combine in rank order, which a "
		               "non-commutative user operator needs; no algorithm of it does on %s",
		               a->name, tc_coll_name(a->coll), spec);
	return TC_ENOTSUP;
}

int tc__coll_select(const struct tc__gen *g, const char *name, int need_ordered,
                    const struct tc__alg **alg, struct tc__sched *s, tc_time_t *makespan)
{
	if (name && strcmp(name, "auto")) {
		const struct tc__alg *a = tc__alg_find(g->coll, name);
		if (!a)
			return TC_EALG;
		if (need_ordered && !(a->flags & TC__ALG_ORDERED))
			return tc__unordered(a, g);
		int err = tc__coll_generate(a, g, s);
		/* Under a limit (prediction), its link crossings too: few
		 * transfers on long routes take as long to simulate. */
		if (!err && g->max_hops && tc__sched_crossings(s, g->t) > g->max_hops) {
			tc__sched_free(s);
			err = TC__ELIMIT;
		}
		if (err == TC__ELIMIT) {
			*alg = a;
			*makespan = tc__exact_ps(a, g, g->md);
		}
		if (err)
			return err;
		struct tc__sim sim;
		err = tc__sched_simulate(s, g->t, g->md, &sim);
		if (err) {
			tc__sched_free(s);
			return err;
		}
		*makespan = sim.makespan;
		tc__sim_free(&sim);
		*alg = a;
		return TC_OK;
	}
	/* A calibrated team prices every candidate with its calibration
	 * (tc__coll_auto_cal()); otherwise the machine's own algorithms only
	 * where tc__shm_pick() says, and there before every other
	 * (lib/coll/machine.h). */
	const struct tc__alg *a = NULL;
	if (g->cal && g->shm) {
		int err = tc__coll_auto_cal(g, need_ordered, &a);
		if (err)
			return err;
	}
	if (!a)
		a = tc__shm_pick(g, need_ordered);
	if (a)
		return tc__coll_select(g, a->name, need_ordered, alg, s, makespan);
	return tc__coll_auto(g, need_ordered, alg, s, makespan);
}
