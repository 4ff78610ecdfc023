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
 * takes from each source) to an exchange of equal rows (the same pairwise
 * schedule, which applies to every topology).  Every rank then checks the same p x p matrix: what i sends to
 * j must be what j expects from i, or the call fails with TC_EMISMATCH on
 * every rank and nothing is written.  The schedule is then a pure function
 * of the matrix (vcount_pairwise.c), built, planned and run for this call
 * (not cached: the counts usually change from call to call).
 *
 * Cost: one exchange of 32 p bytes per rank, plus O(p^2) work per rank to
 * check the matrix and build the schedule; fine for the team sizes the
 * v-calls are used with here (p <= a few hundred).
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "coll/vcount/vcount.h"
#include "core/internal.h"
#include "sched/exec.h"
#include "sched/nbc.h"

enum { TC__V_SEND = 0, TC__V_SOFF, TC__V_RECV, TC__V_ROFF, TC__V_N };

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

/* Runs the pairwise schedule of mx on this rank. */
static int tc__v_run(struct tc_proc *proc, const struct tc__vmatrix *mx, const void *in,
                     void *out, int tag)
{
	struct tc__sched s;
	int err = tc__gen_vcount_pairwise(proc->team->topo, mx, &s);
	if (err)
		return err;
	struct tc__plan *plan;
	err = tc__plan_build(proc, &s, NULL, 0, &plan);
	if (!err) {
		struct tc__exec_io io = {.in = in, .out = out, .tag = tag};
		tc__clock_pull(proc); /* a sub-team's proc: the rank's clock */
		err = proc->team->engine_run ? proc->team->engine_run(proc, &s, &io)
		                             : tc__exec_ordered(proc, &s, plan, &io);
		tc__clock_push(proc);
		tc__plan_free(plan);
		proc->last_alg = "pairwise";
		proc->last_rounds = s.nrounds;
		struct tc__sim sim;
		proc->last_modelled = 0;
		if (!tc__sched_simulate(&s, proc->team->topo, &proc->team->model, &sim)) {
			proc->last_modelled = sim.makespan;
			tc__sim_free(&sim);
		}
	}
	tc__sched_free(&s);
	return err;
}

/* Every rank's row of rowb bytes into all (p rows): the same pairwise
 * schedule with equal blocks, so that it works on every topology. */
static int tc__v_exchange(struct tc_proc *proc, const uint64_t *row, uint64_t *all,
                          size_t rowb)
{
	struct tc__vmatrix mx = {.p = proc->team->p, .uniform = rowb};
	return tc__v_run(proc, &mx, row, all, 0x8000 | 0x4001);
}

static const enum tc_coll tc__vcolls[] = {
	[TC__V_ALLGATHERV] = TC_COLL_ALLGATHERV, [TC__V_GATHERV] = TC_COLL_GATHERV,
	[TC__V_SCATTERV] = TC_COLL_SCATTERV, [TC__V_ALLTOALLV] = TC_COLL_ALLTOALLV};

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

int tc__vcoll(struct tc_proc *proc, const struct tc__vcall *v, const struct tc_coll_opts *opts)
{
	if (!proc)
		return TC_EINVAL;
	struct tc_team *team = proc->team;
	const int p = team->p, me = proc->rank;
	const size_t es = tc_dtype_size(v->dt);
	if (!es)
		return TC_EINVAL;
	/* The registry's algorithms of the collective (only `pairwise`). */
	if (opts && opts->alg && strcmp(opts->alg, "auto") &&
	    !tc__alg_find(tc__vcolls[v->kind], opts->alg))
		return TC_EALG;
	const bool rooted = v->kind == TC__V_GATHERV || v->kind == TC__V_SCATTERV;
	if (rooted && (v->root < 0 || v->root >= p))
		return TC_EROOT;
	if (v->sbuf == TC_IN_PLACE || v->rbuf == (void *)TC_IN_PLACE)
		return TC_EINVAL; /* not supported by the v-calls */
	const bool root = me == v->root;
	/* The arrays this rank must pass. */
	const bool need_rc = v->kind == TC__V_ALLGATHERV || v->kind == TC__V_ALLTOALLV ||
	                     (v->kind == TC__V_GATHERV && root);
	const bool need_sc = v->kind == TC__V_ALLTOALLV || (v->kind == TC__V_SCATTERV && root);
	if (atomic_load_explicit(&team->aborted, memory_order_relaxed))
		return TC_EABORTED;
	/* Errors only this rank can see (its arrays) go through the exchange. */
	const bool arrays = !(need_rc && (!v->rcounts || !v->rdispls)) &&
	                    !(need_sc && (!v->scounts || !v->sdispls));

	/* This rank's row: [4][p] numbers.  Then everybody's. */
	size_t rowb = (size_t)TC__V_N * (size_t)p * sizeof(uint64_t);
	uint64_t *row = calloc((size_t)TC__V_N * (size_t)p, sizeof *row);
	uint64_t *all = malloc(rowb * (size_t)p);
	int err = !row || !all ? TC_ENOMEM : arrays ? TC_OK : TC_EINVAL;
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
	/* An argument error of this rank is told to the others through the
	 * exchange (its row: UINT64_MAX, then the code), so that every rank
	 * returns the same code rather than waiting for it. */
	int local_err = err;
	if (!row || !all) {
		free(row);
		free(all);
		return TC_ENOMEM;
	}
	if (local_err) {
		memset(row, 0, rowb);
		row[0] = UINT64_MAX;
		row[1] = (uint64_t)-local_err;
	}
	err = tc__v_exchange(proc, row, all, rowb);
	if (err)
		goto out;
	if (local_err) {
		err = local_err;
		goto out;
	}
	/* Every rank checks the same matrix, so they agree on the outcome. */
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
	if (err)
		goto out;
	struct tc__vmatrix mx = {.p = p, .rows = all, .stride = TC__V_N * (size_t)p};
	/* The signature: the v-call's kind and a hash of the matrix. */
	uint64_t h = 1469598103934665603ull ^ (uint64_t)v->kind;
	for (size_t k = 0; k < (size_t)p * TC__V_N * (size_t)p; k += TC__V_N)
		h = (h ^ all[k]) * 1099511628211ull;
	err = tc__v_run(proc, &mx, v->sbuf, v->rbuf, (int)(0x8000u | (unsigned)(h & 0x7fffu) | 1u));
out:
	free(row);
	free(all);
	return err;
}

int tc_allgatherv(struct tc_proc *proc, const void *sbuf, size_t scount, void *rbuf,
                  const size_t *rcounts, const size_t *displs, enum tc_dtype dt,
                  const struct tc_coll_opts *opts)
{
	struct tc__vcall v = {.kind = TC__V_ALLGATHERV, .sbuf = sbuf, .scount = scount,
	                      .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs, .dt = dt};
	return tc__vcoll(proc, &v, opts);
}

int tc_gatherv(struct tc_proc *proc, const void *sbuf, size_t scount, void *rbuf,
               const size_t *rcounts, const size_t *displs, enum tc_dtype dt, int root,
               const struct tc_coll_opts *opts)
{
	struct tc__vcall v = {.kind = TC__V_GATHERV, .sbuf = sbuf, .scount = scount, .rbuf = rbuf,
	                      .rcounts = rcounts, .rdispls = displs, .dt = dt, .root = root};
	return tc__vcoll(proc, &v, opts);
}

int tc_scatterv(struct tc_proc *proc, const void *sbuf, const size_t *scounts,
                const size_t *displs, void *rbuf, size_t rcount, enum tc_dtype dt, int root,
                const struct tc_coll_opts *opts)
{
	struct tc__vcall v = {.kind = TC__V_SCATTERV, .sbuf = sbuf, .scounts = scounts,
	                      .sdispls = displs, .rbuf = rbuf, .rcount = rcount, .dt = dt,
	                      .root = root};
	return tc__vcoll(proc, &v, opts);
}

int tc_alltoallv(struct tc_proc *proc, const void *sbuf, const size_t *scounts,
                 const size_t *sdispls, void *rbuf, const size_t *rcounts,
                 const size_t *rdispls, enum tc_dtype dt, const struct tc_coll_opts *opts)
{
	struct tc__vcall v = {.kind = TC__V_ALLTOALLV, .sbuf = sbuf, .scounts = scounts,
	                      .sdispls = sdispls, .rbuf = rbuf, .rcounts = rcounts,
	                      .rdispls = rdispls, .dt = dt};
	return tc__vcoll(proc, &v, opts);
}
