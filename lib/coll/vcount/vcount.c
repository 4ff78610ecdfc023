/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/vcount/vcount.c - the variable-count collectives (allgatherv,
 * gatherv, scatterv, alltoallv): argument checks, the agreement of the
 * counts, and the run of their schedule.
 *
 * Like MPI, each rank knows only its own side of a v-call: what it sends to
 * whom and from where, and what it receives from whom and where to.  A
 * schedule must be the same on every rank, so the call first makes the
 * whole picture common: every rank contributes one row of 4p numbers (bytes
 * and offset of its block for each destination, bytes and offset of what it
 * takes from each source) to an exchange of equal rows (an allgatherv of
 * equal blocks: pairwise, or direct's one round where the ranks share CPUs;
 * both apply to every topology).  Every rank then checks the same p x p matrix: what i sends to
 * j must be what j expects from i, or the call fails with TC_EMISMATCH on
 * every rank and nothing is written.  The schedule is then a pure function
 * of the matrix and of the algorithm (vcount_pairwise.c, vcount_direct.c;
 * AUTO as for the other collectives, lib/coll/select.c).  Schedules go
 * through the collectives' caches (lib/coll/cache.h) keyed by the agreed
 * matrix: a call with the same counts as an earlier one (a loop, the
 * agreement's own exchange every time) runs the team's schedule and the
 * rank's plan from then, and a new matrix is decided, built and simulated
 * once for the team, each rank planning its own share.  Matrices of more
 * than TC__V_CACHE_WORDS numbers (p > 256) are built by every rank for
 * the call instead.
 *
 * Cost: one exchange of 32 p bytes per rank, plus O(p^2) work per rank to
 * check and compare the matrix; fine for the team sizes the v-calls are
 * used with here (p <= a few hundred).
 */
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "coll/cache.h"
#include "coll/coll_internal.h"
#include "coll/machine.h"
#include "coll/vcount/vcount.h"
#include "coll/vcount/vplan.h"
#include "core/internal.h"
#include "sched/exec.h"
#include "sched/nbc.h"
#include "p2p/p2p.h"
#include "p2p/request.h"

/* Whether off + n elements of es bytes stay within TC_MAX_MESSAGE bytes;
 * sets *bytes and *boff. */
static int tc__v_region(size_t n, size_t off, size_t es, uint64_t *bytes, uint64_t *boff)
{
	if (n > TC_MAX_MESSAGE / es || off > TC_MAX_MESSAGE / es || n * es + off * es > TC_MAX_MESSAGE)
		return TC_EOVERFLOW;
	*bytes = n * es;
	*boff = off * es;
	return TC_OK;
}

static const enum tc_coll tc__vcolls[] =
        {[TC__V_ALLGATHERV] = TC_COLL_ALLGATHERV, [TC__V_GATHERV] = TC_COLL_GATHERV, [TC__V_SCATTERV] = TC_COLL_SCATTERV, [TC__V_ALLTOALLV] = TC_COLL_ALLTOALLV};

/* The registry's name of the algorithm asked for (the checks made sure it
 * exists), NULL for AUTO. */
static const char *tc__v_named(enum tc__vkind kind, const char *alg)
{
	const struct tc__alg *a = alg && strcmp(alg, "auto") ? tc__alg_find(tc__vcolls[kind], alg) : NULL;
	return a ? a->name : NULL;
}

int tc__vmatrix_of_call(enum tc_coll coll, int p, int root, size_t esize, const size_t *counts,
                        const size_t *matrix, struct tc__vmatrix *mx, uint64_t **rows)
{
	*rows = NULL;
	const bool a2a = coll == TC_COLL_ALLTOALLV;
	if (!esize || p < 1 || (a2a ? !matrix || counts : !counts || matrix))
		return TC_EINVAL;
	const size_t P = (size_t)p, stride = TC__V_N * P;
	bool same = true; /* an alltoallv's counts all the same */
	for (size_t k = 1; a2a && k < P * P && same; k++)
		same = matrix[k] == matrix[0];
	if (!a2a || same) { /* the compact form: each block and its offset */
		uint64_t *bl = calloc(2 * P, sizeof *bl);
		if (!bl)
			return TC_ENOMEM;
		*rows = bl;
		uint64_t off = 0;
		for (int i = 0; i < p; i++) {
			uint64_t b, o;
			int err = tc__v_region(a2a ? matrix[0] : counts[i], 0, esize, &b, &o);
			if (err)
				return err;
			bl[i] = b;
			bl[P + (size_t)i] = off;
			off += b;
			if (off > TC_MAX_MESSAGE)
				return TC_EOVERFLOW;
		}
		*mx = (struct tc__vmatrix){.p = p, .blocks = bl, .coll = coll, .root = root};
		return TC_OK;
	}
	if (P > SIZE_MAX / stride / P / sizeof **rows)
		return TC_EOVERFLOW;
	uint64_t *all = calloc(P * stride, sizeof *all);
	if (!all)
		return TC_ENOMEM;
	*rows = all;
	/* An alltoallv: i's blocks packed in its send buffer in the order of j,
	 * j's in its receive buffer in the order of i. */
	for (int i = 0; i < p; i++) {
		uint64_t *ri = all + (size_t)i * stride;
		uint64_t soff = 0;
		for (int j = 0; j < p; j++) {
			uint64_t b, o;
			int err = tc__v_region(matrix[(size_t)i * P + (size_t)j], 0, esize, &b, &o);
			if (err)
				return err;
			ri[TC__V_SEND * P + (size_t)j] = b;
			ri[TC__V_SOFF * P + (size_t)j] = soff;
			soff += b;
			if (soff > TC_MAX_MESSAGE)
				return TC_EOVERFLOW;
		}
	}
	for (int j = 0; j < p; j++) {
		uint64_t *rj = all + (size_t)j * stride, roff = 0;
		for (int i = 0; i < p; i++) {
			uint64_t b = all[(size_t)i * stride + TC__V_SEND * P + (size_t)j];
			rj[TC__V_RECV * P + (size_t)i] = b;
			rj[TC__V_ROFF * P + (size_t)i] = roff;
			roff += b;
			if (roff > TC_MAX_MESSAGE)
				return TC_EOVERFLOW;
		}
	}
	*mx = (struct tc__vmatrix){.p = p, .rows = all, .stride = stride};
	return TC_OK;
}

/* The checks every rank makes alike before the agreement (datatype,
 * algorithm, root, in place): 0 or the code, returned at once. */
static int tc__v_check(struct tc_proc *proc, const struct tc__vcall *v, const struct tc_coll_opts *opts)
{
	if (!proc)
		return TC_EINVAL;
	const int p = proc->team->p;
	if (!tc_dtype_size(v->dt))
		return TC_EINVAL;
	/* The registry's algorithms of the collective. */
	if (opts && opts->alg && strcmp(opts->alg, "auto") &&
	    !tc__alg_find(tc__vcolls[v->kind], opts->alg))
		return TC_EALG;
	const bool rooted = v->kind == TC__V_GATHERV || v->kind == TC__V_SCATTERV;
	if (rooted && (v->root < 0 || v->root >= p))
		return TC_EROOT;
	if (v->sbuf == TC_IN_PLACE || v->rbuf == (void *)TC_IN_PLACE)
		return TC_EINVAL; /* not supported by the v-calls */
	if (atomic_load_explicit(&proc->team->aborted, memory_order_relaxed))
		return TC_EABORTED;
	return TC_OK;
}

/* This rank's row of v ([4][p] numbers, zeroed by the caller).  An error
 * only this rank can see (its arrays, its sizes, a NULL buffer) is written
 * into the row instead (UINT64_MAX, then the code), so that the agreement
 * tells every rank and they all return it rather than wait. */
static void tc__v_row(struct tc_proc *proc, const struct tc__vcall *v, uint64_t *row)
{
	const int p = proc->team->p, me = proc->rank;
	const size_t es = tc_dtype_size(v->dt);
	const bool root = me == v->root;
	/* The arrays this rank must pass. */
	const bool need_rc = v->kind == TC__V_ALLGATHERV || v->kind == TC__V_ALLTOALLV ||
	                     (v->kind == TC__V_GATHERV && root);
	const bool need_sc = v->kind == TC__V_ALLTOALLV || (v->kind == TC__V_SCATTERV && root);
	const bool arrays = !(need_rc && (!v->rcounts || !v->rdispls)) &&
	                    !(need_sc && (!v->scounts || !v->sdispls));
	int err = arrays ? TC_OK : TC_EINVAL;
	uint64_t *snd = row, *soff = row + p, *rcv = row + 2 * p, *roff = row + 3 * p;
	uint64_t stotal = 0, rtotal = 0;
	for (int j = 0; j < p && !err; j++) {
		uint64_t b = 0, o = 0;
		bool sends_j = v->kind == TC__V_ALLGATHERV || v->kind == TC__V_ALLTOALLV ||
		               (v->kind == TC__V_GATHERV && j == v->root) ||
		               (v->kind == TC__V_SCATTERV && root);
		if (sends_j) {
			size_t n = need_sc ? v->scounts[j] : v->scount;
			size_t off = need_sc ? v->sdispls[j] : 0;
			err = tc__v_region(n, off, es, &b, &o);
			snd[j] = b;
			soff[j] = o;
			stotal += b;
		}
		bool recvs_j = v->kind == TC__V_ALLGATHERV || v->kind == TC__V_ALLTOALLV ||
		               (v->kind == TC__V_GATHERV && root) ||
		               (v->kind == TC__V_SCATTERV && j == v->root);
		if (recvs_j && !err) {
			size_t n = need_rc ? v->rcounts[j] : v->rcount;
			size_t off = need_rc ? v->rdispls[j] : 0;
			err = tc__v_region(n, off, es, &b, &o);
			rcv[j] = b;
			roff[j] = o;
			rtotal += b;
		}
	}
	if (!err && ((stotal && !v->sbuf) || (rtotal && !v->rbuf)))
		err = TC_ENULLBUF;
	if (err) {
		memset(row, 0, (size_t)TC__V_N * (size_t)p * sizeof *row);
		row[0] = UINT64_MAX;
		row[1] = (uint64_t)-err;
	}
}

/* The outcome of the agreement, the same on every rank (every rank checks
 * the same matrix): 0, a rank's argument error, or TC_EMISMATCH when what
 * i sends to j is not what j expects from i.  *tag: the data's tag (the
 * v-call's kind and a hash of the matrix). */
static int tc__v_agree(const uint64_t *all, int p, enum tc__vkind kind, int *tag)
{
	int err = TC_OK;
	for (int i = 0; i < p && !err; i++) {
		const uint64_t *ri = all + (size_t)i * TC__V_N * (size_t)p;
		if (ri[0] == UINT64_MAX)
			err = -(int)ri[1]; /* rank i's arguments were bad */
	}
	for (int i = 0; i < p && !err; i++) {
		const uint64_t *ri = all + (size_t)i * TC__V_N * (size_t)p;
		for (int j = 0; j < p && !err; j++) {
			const uint64_t *rj = all + (size_t)j * TC__V_N * (size_t)p;
			if (ri[TC__V_SEND * p + j] != rj[TC__V_RECV * p + i])
				err = TC_EMISMATCH;
		}
	}
	uint64_t h = 1469598103934665603ull ^ (uint64_t)kind;
	for (size_t k = 0; !err && k < (size_t)p * TC__V_N * (size_t)p; k += TC__V_N)
		h = (h ^ all[k]) * 1099511628211ull;
	*tag = (int)(0x8000u | (unsigned)(h & 0x7fffu) | 1u);
	return err;
}

int tc__vcoll(struct tc_proc *proc, const struct tc__vcall *v, const struct tc_coll_opts *opts)
{
	int err = tc__v_check(proc, v, opts);
	if (err)
		return err;
	const int p = proc->team->p;
	/* This rank's row: [4][p] numbers.  Then everybody's. */
	size_t rowb = (size_t)TC__V_N * (size_t)p * sizeof(uint64_t);
	uint64_t *row = calloc((size_t)TC__V_N * (size_t)p, sizeof *row);
	uint64_t *all = malloc(rowb * (size_t)p);
	if (!row || !all) {
		free(row);
		free(all);
		return TC_ENOMEM;
	}
	tc__v_row(proc, v, row);
	const char *name = tc__v_named(v->kind, opts ? opts->alg : NULL);
	int tag = 0;
	struct tc__vplan dp = {0};
	bool same = false;
	if (tc__v_keeps(p)) {
		/* The same matrix as the last call's, on every rank? */
		uint64_t flags[2], *fall = malloc(2 * sizeof *fall * (size_t)p);
		struct tc__vplan fp;
		err = fall ? tc__v_flags(proc, v->kind, v->root, name, row, flags, &dp, &tag) : TC_ENOMEM;
		if (!err && !(err = tc__v_flags_plan(proc, &fp))) {
			err = tc__v_run_plan(proc, &fp, flags, fall, TC__V_AGREE_TAG);
			tc__v_plan_free(&fp);
		}
		same = !err && tc__v_flags_same(fall, p);
		free(fall);
		if (!same)
			tc__v_plan_free(&dp);
	}
	if (!err && !same) {
		err = tc__v_exchange(proc, row, all, rowb);
		if (!err)
			err = tc__v_agree(all, p, v->kind, &tag);
		struct tc__vmatrix mx = {.p = p, .rows = all, .stride = TC__V_N * (size_t)p};
		if (!err)
			err = tc__v_plan(proc, &mx, tc__vcolls[v->kind], v->root, name, false, &dp);
		if (!err)
			tc__v_remember(proc, v->kind, v->root, name, &dp, tag);
	}
	if (!err)
		err = tc__v_run_plan(proc, &dp, v->sbuf, v->rbuf, tag);
	tc__v_plan_free(&dp);
	free(row);
	free(all);
	return err;
}

/* ---- the v-calls as requests (lib/sched/nbc.h) --------------------------- */

/* A v-call as a request: two plans one after the other, the agreement (the
 * exchange of the rows) and then the data's, built from the agreed matrix
 * when the agreement completes.  A persistent one keeps its row (the counts
 * read at init) and, once agreed, the data's schedule and plan: its later
 * starts run only those. */
struct tc__vop {
	struct tc__creq x;
	enum tc__vkind kind;
	const void *sbuf;
	void *rbuf;
	uint64_t *row, *all;
	struct tc__vplan xp, dp; /* the agreement's and the data's */
	/* The check for the same matrix (where the rows are kept): its plan,
	 * this rank's flags and everybody's, the last call's plan held. */
	struct tc__vplan fp, prev;
	uint64_t flags[2], *fall;
	int prev_tag;
	bool checking; /* the check is the phase that runs */
	bool agreed;
	int tag;
	struct tc_proc *proc;
	int root;
	const char *alg;  /* the registry's name asked for, NULL: AUTO */
	const char *xalg; /* the agreement's algorithm */
	struct tc__run *run_mem;
};

static void tc__vop_release(struct tc__creq *x)
{
	struct tc__vop *o = (struct tc__vop *)x;
	tc__v_plan_free(&o->xp);
	tc__v_plan_free(&o->dp);
	tc__v_plan_free(&o->fp);
	tc__v_plan_free(&o->prev);
	free(o->row);
	free(o->all);
	free(o->fall);
	free(o);
}

/* vp's plan as the phase that runs, from in to out with tag (alg: the
 * algorithm it reports). */
static void tc__vop_phase(struct tc__vop *o, const struct tc__vplan *vp, const void *in, void *out,
                          int tag, const char *alg)
{
	o->x.s = vp->s;
	o->x.pl = vp->pl;
	o->x.io = (struct tc__exec_io){.in = in,
	                               .out = out,
	                               .tag = tag,
	                               .sig = TC__SIG_REQUEST, /* not a blocking call's */
	                               .call = tc_coll_name(tc__vcolls[o->kind]),
	                               .alg = alg};
}

static void tc__vop_data(struct tc__vop *o, const char *alg)
{
	tc__vop_phase(o, &o->dp, o->sbuf, o->rbuf, o->tag, alg);
}

/* The exchange of the rows as the phase that runs. */
static void tc__vop_rows(struct tc__vop *o)
{
	o->checking = false;
	tc__vop_phase(o, &o->xp, o->row, o->all, TC__V_AGREE_TAG, o->xalg);
}

static int tc__vop_prepare(struct tc__creq *x)
{
	struct tc__vop *o = (struct tc__vop *)x;
	if (o->agreed) {
		tc__vop_data(o, o->x.io.alg);
		return TC_OK;
	}
	tc__v_plan_free(&o->prev);
	if (!o->fp.s) {
		tc__vop_rows(o);
		return TC_OK;
	}
	/* The flags against the last call of the kind when this one starts
	 * (the plan they name is held: it may be replaced before the check
	 * ends by a call started earlier). */
	int err = tc__v_flags(o->proc, o->kind, o->root, o->alg, o->row, o->flags, &o->prev, &o->prev_tag);
	if (err)
		return err;
	o->checking = true;
	tc__vop_phase(o, &o->fp, o->flags, o->fall, TC__V_AGREE_TAG, o->fp.alg);
	return TC_OK;
}

/* The check done: the data's plan, or the exchange of the rows; those
 * agreed: the data's plan (built here, once). */
static int tc__vop_then(struct tc_proc *proc, struct tc__creq *x)
{
	struct tc__vop *o = (struct tc__vop *)x;
	if (o->agreed)
		return TC_OK; /* the data moved: done */
	const int p = proc->team->p;
	if (o->checking) {
		if (!tc__v_flags_same(o->fall, p)) {
			tc__v_plan_free(&o->prev);
			tc__vop_rows(o);
			return 1;
		}
		o->dp = o->prev;
		o->prev = (struct tc__vplan){0};
		o->tag = o->prev_tag;
	} else {
		int err = tc__v_agree(o->all, p, o->kind, &o->tag);
		if (err)
			return err;
		struct tc__vmatrix mx = {.p = p, .rows = o->all, .stride = TC__V_N * (size_t)p};
		err = tc__v_plan(proc, &mx, tc__vcolls[o->kind], o->root, o->alg, false, &o->dp);
		if (err)
			return err;
		tc__v_remember(proc, o->kind, o->root, o->alg, &o->dp, o->tag);
	}
	o->agreed = true;
	proc->last_alg = o->dp.alg;
	proc->last_rounds = o->dp.s->nrounds;
	proc->last_modelled = o->dp.makespan;
	tc__vop_data(o, o->dp.alg);
	return 1;
}

/* The request form of v: started (persistent 0) or bound inactive. */
static int tc__vcoll_req(struct tc_proc *proc, const struct tc__vcall *v,
                         const struct tc_coll_opts *opts, tc_request *req, int persistent)
{
	if (!req)
		return TC_EINVAL;
	if (proc && tc__req_busy(proc, req)) /* left as it is: its queue holds it */
		return tc__req_busy_error(persistent ? "tc_" : "tc_i",
		                          tc_coll_name(tc__vcolls[v->kind]), persistent ? "_init" : "");
	/* not started until it is: a wait on it says TC_EINVAL */
	memset(tc__req(req), 0, sizeof(struct tc__req));
	int err = tc__v_check(proc, v, opts);
	if (err)
		return err;
	const int p = proc->team->p;
	const size_t head = (sizeof(struct tc__vop) + 63) / 64 * 64;
	struct tc__vop *o = calloc(1, head + tc__run_size());
	if (!o)
		return TC_ENOMEM;
	o->kind = v->kind;
	o->root = v->root;
	o->proc = proc;
	/* The registry's name (static), not the caller's string: a persistent
	 * request outlives opts. */
	const struct tc__alg *named = opts && opts->alg && strcmp(opts->alg, "auto")
	                                      ? tc__alg_find(tc__vcolls[v->kind], opts->alg)
	                                      : NULL;
	o->alg = named ? named->name : NULL;
	o->sbuf = v->sbuf;
	o->rbuf = v->rbuf;
	o->x.persistent = persistent;
	o->x.prepare = tc__vop_prepare;
	o->x.then = tc__vop_then;
	o->x.release = tc__vop_release;
	o->x.run = (struct tc__run *)(void *)((char *)o + head);
	const size_t rowb = (size_t)TC__V_N * (size_t)p * sizeof(uint64_t);
	o->row = calloc((size_t)TC__V_N * (size_t)p, sizeof *o->row);
	o->all = malloc(rowb * (size_t)p);
	err = !o->row || !o->all ? TC_ENOMEM : TC_OK;
	if (!err) {
		tc__v_row(proc, v, o->row);
		struct tc__vmatrix mx = {.p = p, .uniform = rowb};
		err = tc__v_plan(proc, &mx, TC_COLL_ALLGATHERV, 0, NULL, true, &o->xp);
		o->xalg = o->xp.alg;
	}
	if (!err && tc__v_keeps(p)) {
		o->fall = malloc(2 * sizeof *o->fall * (size_t)p);
		err = o->fall ? tc__v_flags_plan(proc, &o->fp) : TC_ENOMEM;
	}
	if (err) {
		tc__vop_release(&o->x);
		return err;
	}
	return tc__creq_launch(proc, &o->x, req, persistent);
}

/* Each v-call three ways: blocking (tc_NAME), nonblocking (tc_iNAME) and
 * persistent (tc_NAME_init), from one list of their arguments. */
#define TC__VCOLL3(name, params, ...)                              \
	int tc_##name params                                       \
	{                                                          \
		tc__clear_detail();                                \
		const struct tc__vcall v = __VA_ARGS__;            \
		return tc__vcoll(proc, &v, opts);                  \
	}                                                          \
	int tc_i##name(TC__VUNPAREN params, tc_request *req)       \
	{                                                          \
		tc__clear_detail();                                \
		const struct tc__vcall v = __VA_ARGS__;            \
		return tc__vcoll_req(proc, &v, opts, req, 0);      \
	}                                                          \
	int tc_##name##_init(TC__VUNPAREN params, tc_request *req) \
	{                                                          \
		tc__clear_detail();                                \
		const struct tc__vcall v = __VA_ARGS__;            \
		return tc__vcoll_req(proc, &v, opts, req, 1);      \
	}
#define TC__VUNPAREN(...) __VA_ARGS__

TC__VCOLL3(allgatherv,
           (struct tc_proc * proc, const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
            const size_t *displs, enum tc_dtype dt, const struct tc_coll_opts *opts),
           {.kind = TC__V_ALLGATHERV,
            .sbuf = sbuf,
            .scount = scount,
            .rbuf = rbuf,
            .rcounts = rcounts,
            .rdispls = displs,
            .dt = dt})
TC__VCOLL3(gatherv,
           (struct tc_proc * proc, const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
            const size_t *displs, enum tc_dtype dt, int root, const struct tc_coll_opts *opts),
           {.kind = TC__V_GATHERV,
            .sbuf = sbuf,
            .scount = scount,
            .rbuf = rbuf,
            .rcounts = rcounts,
            .rdispls = displs,
            .dt = dt,
            .root = root})
TC__VCOLL3(scatterv,
           (struct tc_proc * proc, const void *sbuf, const size_t *scounts, const size_t *displs,
            void *rbuf, size_t rcount, enum tc_dtype dt, int root, const struct tc_coll_opts *opts),
           {.kind = TC__V_SCATTERV,
            .sbuf = sbuf,
            .scounts = scounts,
            .sdispls = displs,
            .rbuf = rbuf,
            .rcount = rcount,
            .dt = dt,
            .root = root})
TC__VCOLL3(alltoallv,
           (struct tc_proc * proc, const void *sbuf, const size_t *scounts, const size_t *sdispls,
            void *rbuf, const size_t *rcounts, const size_t *rdispls, enum tc_dtype dt,
            const struct tc_coll_opts *opts),
           {.kind = TC__V_ALLTOALLV,
            .sbuf = sbuf,
            .scounts = scounts,
            .sdispls = sdispls,
            .rbuf = rbuf,
            .rcounts = rcounts,
            .rdispls = rdispls,
            .dt = dt})
