/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/multicast/multicast.c - the multicast's entry points: the
 * member set checked and agreed by every rank, then the data moved by the
 * path of every collective call (tc__coll_x, lib/coll/coll.c); blocking
 * (tc_multicast), and as a request of two phases (tc_imulticast,
 * tc_multicast_init).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "coll/coll_internal.h"
#include "core/internal.h"
#include "p2p/p2p.h"
#include "p2p/request.h"
#include "sched/exec.h"
#include "sched/nbc.h"

/*
 * The multicast's member set, checked here and agreed by every rank before
 * any data moves: each rank reduces its (root, set) to a 64-bit hash (a
 * rank whose own list is bad contributes a value no good list gives) and an
 * allreduce of (h, ~h) under band tells every rank whether all hashes were
 * equal (band(h) == ~band(~h) exactly then).  The hash covers the count,
 * datatype and algorithm name too ("auto" for none).  A failed agreement writes
 * nothing; a bad list (or another argument error of one rank: NULL buffer,
 * datatype, size) fails on its rank with its own code, elsewhere with
 * TC_EMISMATCH.
 *
 * tc__mcast_input() makes this rank's part: the canonical set (*canon,
 * freed by the caller, and *n), the hash *h (0 when bad) and, returned, the
 * rank's own argument error or TC_OK.
 */
static int tc__mcast_input(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                           const int *members, int nmembers, const struct tc_coll_opts *opts,
                           int **canon_out, int *n_out, uint64_t *h_out)
{
	const int p = proc->team->p;
	int *canon = NULL, n = 0;
	int bad = nmembers < 0 || nmembers > p ? TC_EINVAL : TC_OK;
	if (!bad && nmembers > 0) {
		canon = malloc((size_t)nmembers * sizeof *canon);
		if (!canon)
			bad = TC_ENOMEM; /* still agreed: nobody waits for this rank */
	}
	if (!bad && (root < 0 || root >= p))
		bad = TC_EROOT;
	if (!bad)
		bad = tc__members_canon(p, root, members, nmembers, canon, &n);
	/* The arguments that tc__coll_x() would refuse on this rank alone are
	 * refused here, agreed: the others must not wait for it. */
	const size_t es = tc_dtype_size(dt);
	const int me = proc->rank;
	if (!bad && !es)
		bad = TC_EINVAL;
	if (!bad && count > TC_MAX_MESSAGE / es)
		bad = TC_EOVERFLOW;
	if (!bad && count && !buf && (me == root || tc__in_set(me, canon, n)))
		bad = TC_ENULLBUF;
	if (!bad && buf == (void *)TC_IN_PLACE)
		bad = TC_EINVAL;
	if (!bad && opts && opts->packets < 0)
		bad = TC_EINVAL;
	uint64_t h = tc__fnv(TC__FNV_BASIS, (uint64_t)(uint32_t)root);
	for (int i = 0; i < n; i++)
		h = tc__fnv(h, (uint64_t)canon[i]);
	h = tc__fnv(h, (uint64_t)n);
	/* And the rest of the call, so that ranks outside the set, which may
	 * move no data, take part in the mismatch detection too. */
	h = tc__fnv(h, (uint64_t)count);
	h = tc__fnv(h, (uint64_t)dt);
	for (const char *s = opts && opts->alg ? opts->alg : "auto"; *s; s++)
		h = tc__fnv(h, (uint64_t)(unsigned char)*s);
	if (bad)
		h = 0; /* and ~h is 0 too below: no agreement with any good list */
	*canon_out = canon;
	*n_out = bad ? 0 : n;
	*h_out = h;
	return bad;
}

int tc_multicast(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                 const int *members, int nmembers, const struct tc_coll_opts *opts)
{
	tc__clear_detail();
	if (!proc)
		return TC_EINVAL;
	int *canon, n;
	uint64_t h;
	int bad = tc__mcast_input(proc, buf, count, dt, root, members, nmembers, opts, &canon, &n, &h);
	uint64_t v[2] = {h, bad ? 0 : ~h};
	const struct tc_coll_opts ao = {0};
	int err = tc_allreduce(proc, TC_IN_PLACE, v, 2, TC_UINT64, TC_OP_BAND, &ao);
	if (!err && bad)
		err = bad;
	else if (!err && (v[0] != h || v[1] != ~h))
		err = TC_EMISMATCH;
	if (!err) {
		const struct tc__coll_extra x = {.members = canon, .nmembers = n};
		err = tc__coll_x(proc, TC_COLL_MULTICAST, NULL, buf, count, dt, TC_OP_BOR, root,
		                 opts, &x, NULL);
	}
	free(canon);
	return err;
}

/*
 * The multicast as a request: two phases one after the other, each an
 * operation of its own made at the call (lib/sched/nbc.h), the agreement's
 * allreduce of (h, ~h) and then the data's multicast.  A persistent one
 * agrees once, at its first start (a failed agreement is retried and fails
 * again at each start), and then runs only the data's plan.  A rank whose
 * own arguments are bad takes part in the agreement and its wait returns
 * their error.
 */
struct tc__mop {
	struct tc__creq x;
	struct tc__creq *agree, *data; /* data NULL when bad */
	uint64_t h, v[2];
	int bad;
	bool agreed, in_data;
};

static void tc__mop_release(struct tc__creq *x)
{
	struct tc__mop *o = (struct tc__mop *)x;
	if (o->agree)
		o->agree->release(o->agree);
	if (o->data)
		o->data->release(o->data);
	free(o);
}

/* x runs phase ph (prepared for this start). */
static int tc__mop_phase(struct tc__mop *o, struct tc__creq *ph)
{
	int err = ph->prepare(ph);
	if (err)
		return err;
	o->x.s = ph->s;
	o->x.pl = ph->pl;
	o->x.io = ph->io;
	o->in_data = ph == o->data;
	return TC_OK;
}

static int tc__mop_prepare(struct tc__creq *x)
{
	struct tc__mop *o = (struct tc__mop *)x;
	if (o->agreed)
		return tc__mop_phase(o, o->data);
	o->v[0] = o->h;
	o->v[1] = o->bad ? 0 : ~o->h;
	return tc__mop_phase(o, o->agree);
}

static int tc__mop_then(struct tc_proc *proc, struct tc__creq *x)
{
	struct tc__mop *o = (struct tc__mop *)x;
	(void)proc;
	if (o->in_data)
		return TC_OK; /* the data moved: done */
	if (o->bad)
		return o->bad;
	if (o->v[0] != o->h || o->v[1] != ~o->h) {
		tc__set_detail("multicast: the ranks' roots, member sets, counts, datatypes or "
		               "algorithms differ");
		return TC_EMISMATCH;
	}
	o->agreed = true;
	int err = tc__mop_phase(o, o->data);
	return err ? err : 1;
}

static int tc__multicast_req(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt,
                             int root, const int *members, int nmembers,
                             const struct tc_coll_opts *opts, tc_request *req, int persistent)
{
	if (!proc || !req)
		return TC_EINVAL;
	if (tc__req_busy(proc, req)) /* left as it is: its queue holds it */
		return tc__req_busy_error(persistent ? "tc_" : "tc_i", "multicast",
		                          persistent ? "_init" : "");
	/* not started until it is: a wait on it says TC_EINVAL */
	memset(tc__req(req), 0, sizeof(struct tc__req));
	const size_t head = (sizeof(struct tc__mop) + 63) / 64 * 64;
	struct tc__mop *o = calloc(1, head + tc__run_size());
	if (!o)
		return TC_ENOMEM;
	o->x.persistent = persistent;
	o->x.prepare = tc__mop_prepare;
	o->x.then = tc__mop_then;
	o->x.release = tc__mop_release;
	o->x.run = (struct tc__run *)(void *)((char *)o + head);
	int *canon, n;
	o->bad = tc__mcast_input(proc, buf, count, dt, root, members, nmembers, opts, &canon, &n, &o->h);
	const struct tc_coll_opts ao = {0};
	const struct tc__coll_extra none = {0};
	struct tc__xreq xr = {req, persistent, &o->agree};
	int err = tc__coll_x(proc, TC_COLL_ALLREDUCE, TC_IN_PLACE, o->v, 2, TC_UINT64, TC_OP_BAND,
	                     0, &ao, &none, &xr);
	if (!err && !o->bad) {
		/* The data's plan, made now: a failure here is this rank's
		 * argument error, reported after the agreement as the blocking
		 * call does. */
		const struct tc__coll_extra x = {.members = canon, .nmembers = n};
		xr.built = &o->data;
		o->bad = tc__coll_x(proc, TC_COLL_MULTICAST, NULL, buf, count, dt, TC_OP_BOR, root,
		                    opts, &x, &xr);
		if (o->bad)
			o->h = 0;
	}
	free(canon);
	memset(tc__req(req), 0, sizeof(struct tc__req));
	if (err) {
		tc__mop_release(&o->x);
		return err;
	}
	return tc__creq_launch(proc, &o->x, req, persistent);
}

int tc_imulticast(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                  const int *members, int nmembers, const struct tc_coll_opts *opts, tc_request *req)
{
	tc__clear_detail();
	return tc__multicast_req(proc, buf, count, dt, root, members, nmembers, opts, req, 0);
}

int tc_multicast_init(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                      const int *members, int nmembers, const struct tc_coll_opts *opts, tc_request *req)
{
	tc__clear_detail();
	return tc__multicast_req(proc, buf, count, dt, root, members, nmembers, opts, req, 1);
}
