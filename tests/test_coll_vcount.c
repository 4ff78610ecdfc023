/* SPDX-License-Identifier: MIT */
/*
 * The variable-count collectives (allgatherv, gatherv, scatterv, alltoallv):
 * random counts (zeros included) and displacements with gaps, every
 * topology kind over the p of the matrix, results checked element by
 * element against the MPI definitions and the gaps untouched; errors
 * (disagreeing counts, overflowing counts, missing arrays, in place,
 * unknown algorithm) reported on every rank with nothing written.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "util.h"

enum { AGV, GV, SV, A2AV, NKINDS };
static const char *const kind_names[] __attribute__((unused)) = {"allgatherv", "gatherv", "scatterv", "alltoallv"};

#define POISON 0xdeadbeefu

/* The element j of the block rank i sends to rank k. */
static uint32_t val(int i, int k, size_t j, int kind)
{
	if (kind == AGV || kind == GV)
		k = 0; /* one block for everybody */
	return (uint32_t)(i * 1000003u + (uint32_t)k * 7919u + (uint32_t)j * 13u + 1u);
}

struct vcase {
	int kind, p, root;
	size_t *cnt;        /* p x p: elements i sends to k */
	int bad;            /* 0 ok; 1: rank 1 expects one more element from 0;
	                       2: rank 0's count overflows; 3: in place; 4: bad alg;
	                       5: missing array at rank 0 */
	atomic_int nfail;
	char msg[200];
	int *errs;          /* per rank */
	uint32_t **rb;      /* per rank receive buffer */
	size_t *rlen;
};

static size_t C(const struct vcase *v, int i, int k)
{
	return v->cnt[(size_t)i * (size_t)v->p + (size_t)k];
}

/* Rank r's layout: receive displacement of the block from i (gaps of 3). */
static size_t rdisp(const struct vcase *v, int r, int i)
{
	size_t d = 2;
	for (int a = 0; a < i; a++)
		d += C(v, a, r) + 3;
	return d;
}

static size_t sdisp(const struct vcase *v, int r, int k)
{
	size_t d = 1;
	for (int a = 0; a < k; a++)
		d += C(v, r, a) + 2;
	return d;
}

static int fn(struct tc_proc *proc, void *arg)
{
	struct vcase *v = arg;
	int r = tc_rank(proc), p = v->p;
	size_t *sc = calloc((size_t)p, sizeof *sc), *sd = calloc((size_t)p, sizeof *sd);
	size_t *rc = calloc((size_t)p, sizeof *rc), *rd = calloc((size_t)p, sizeof *rd);
	size_t slen = sdisp(v, r, p) + 4;
	uint32_t *sb = malloc(slen * 4);
	for (size_t j = 0; j < slen; j++)
		sb[j] = POISON;
	for (int k = 0; k < p; k++) {
		sc[k] = C(v, r, k);
		sd[k] = sdisp(v, r, k);
		rc[k] = C(v, k, r);
		rd[k] = rdisp(v, r, k);
		for (size_t j = 0; j < sc[k]; j++)
			sb[sd[k] + j] = val(r, k, j, v->kind);
	}
	if (v->bad == 1 && r == 1)
		rc[0]++;
	if (v->bad == 2 && r == 0)
		sc[p - 1] = rc[p - 1] = SIZE_MAX / 2;
	uint32_t *rb = v->rb[r];
	/* bad 5: a missing array where one is needed (at the root for the
	 * rooted calls, which need none elsewhere). */
	const int miss = v->bad == 5 && r == (v->kind == GV || v->kind == SV ? v->root : 0);
	struct tc_coll_opts o = {.alg = v->bad == 4 ? "nope" : NULL};
	const void *s = v->bad == 3 ? TC_IN_PLACE : sb;
	int root = v->root, err;
	switch (v->kind) {
	case AGV:
		if (v->bad == 2 && r == 0)
			sc[0] = SIZE_MAX / 2;
		err = tc_allgatherv(proc, s == sb ? sb + sd[0] : s, sc[0], rb, miss ? NULL : rc, rd,
		                    TC_UINT32, &o);
		break;
	case GV:
		if (v->bad == 2 && r == 0)
			sc[root] = SIZE_MAX / 2;
		err = tc_gatherv(proc, s == sb ? sb + sd[root] : s, sc[root], rb, r == root && !miss ? rc : NULL,
		                 r == root ? rd : NULL, TC_UINT32, root, &o);
		break;
	case SV:
		if (v->bad == 2 && r == 0)
			rc[root] = SIZE_MAX / 2;
		err = tc_scatterv(proc, s, r == root && !miss ? sc : NULL,
		                  r == root ? sd : NULL, rb + rd[root], rc[root], TC_UINT32, root, &o);
		break;
	default:
		err = tc_alltoallv(proc, s, miss ? NULL : sc, sd, rb, rc, rd,
		                   TC_UINT32, &o);
		break;
	}
	v->errs[r] = err;
	free(sc);
	free(sd);
	free(rc);
	free(rd);
	free(sb);
	return 0;
}

/* The expected receive buffer of rank r. */
static void expect(const struct vcase *v, int r, uint32_t *e, size_t len)
{
	for (size_t j = 0; j < len; j++)
		e[j] = POISON;
	if (v->bad)
		return;
	for (int i = 0; i < v->p; i++) {
		int gets = v->kind == AGV || v->kind == A2AV || (v->kind == GV && r == v->root) ||
		           (v->kind == SV && i == v->root);
		if (!gets)
			continue;
		size_t d = rdisp(v, r, i);
		for (size_t j = 0; j < C(v, i, r); j++)
			e[d + j] = val(i, r, j, v->kind);
	}
}

static void run_case(struct tc_team *team, int kind, int root, uint64_t seed, int bad,
                     size_t maxc)
{
	int p = tc_team_size(team);
	struct vcase v = {.kind = kind, .p = p, .root = root, .bad = bad};
	v.cnt = calloc((size_t)p * (size_t)p, sizeof *v.cnt);
	v.errs = calloc((size_t)p, sizeof *v.errs);
	v.rb = calloc((size_t)p, sizeof *v.rb);
	v.rlen = calloc((size_t)p, sizeof *v.rlen);
	for (int i = 0; i < p; i++) {
		size_t c0 = (size_t)(tc_test_rand(&seed) % (maxc + 1));
		for (int k = 0; k < p; k++) {
			size_t c = kind == AGV || kind == GV ? c0 : (size_t)(tc_test_rand(&seed) % (maxc + 1));
			if ((kind == GV && k != root) || (kind == SV && i != root))
				c = 0;
			v.cnt[(size_t)i * (size_t)p + (size_t)k] = c;
		}
	}
	for (int r = 0; r < p; r++) {
		v.rlen[r] = rdisp(&v, r, p) + 4;
		v.rb[r] = malloc(v.rlen[r] * 4);
		for (size_t j = 0; j < v.rlen[r]; j++)
			v.rb[r][j] = POISON;
	}
	int err = tc_run(team, fn, &v);
	cr_assert(err == 0 || bad, "%s p=%d: tc_run %s", kind_names[kind], p, tc_err_name(err));
	static const int want[] = {0, TC_EMISMATCH, TC_EOVERFLOW, TC_EINVAL, TC_EALG, TC_EINVAL};
	for (int r = 0; r < p; r++) {
		cr_assert_eq(v.errs[r], want[bad], "%s p=%d bad=%d rank %d: %s", kind_names[kind], p,
		             bad, r, tc_err_name(v.errs[r]));
		uint32_t *e = malloc(v.rlen[r] * 4);
		expect(&v, r, e, v.rlen[r]);
		for (size_t j = 0; j < v.rlen[r]; j++)
			cr_assert_eq(v.rb[r][j], e[j], "%s p=%d root=%d rank %d elem %zu: %x want %x",
			             kind_names[kind], p, root, r, j, v.rb[r][j], e[j]);
		free(e);
		free(v.rb[r]);
	}
	free(v.cnt);
	free(v.errs);
	free(v.rb);
	free(v.rlen);
}

static struct tc_team *team_for(const char *spec)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.timeout_ms = 60000;
	struct tc_team *t;
	cr_assert_eq(tc_team_create(&cfg, &t), 0, "%s", spec);
	return t;
}

static void matrix(int pmax)
{
	for (int pi = 0; pi < TC_TEST_NPS && tc_test_ps[pi] <= pmax; pi++) {
		int p = tc_test_ps[pi];
		char specs[16][32];
		int ns = tc_test_specs_for(p, specs, 16);
		for (int si = 0; si < ns; si += (p > 8 ? 3 : 1)) {
			struct tc_team *t = team_for(specs[si]);
			for (int k = 0; k < NKINDS; k++)
				for (int root = 0; root < p; root += (p > 2 ? p - 1 : 1))
					run_case(t, k, root, (uint64_t)(p * 100 + si * 10 + k + root) + 1, 0,
					         p > 16 ? 9 : 70);
			tc_team_destroy(t);
		}
	}
}

Test(vcount, small_p, .timeout = 120)
{
	matrix(4);
}

Test(vcount, results, .timeout = 600)
{
	matrix(64);
}

Test(vcount, errors_on_every_rank, .timeout = 300)
{
	struct tc_team *t = team_for("torus:2x3");
	for (int k = 0; k < NKINDS; k++)
		for (int bad = 1; bad <= 5; bad++) {
			if (bad == 1 && (k == GV || k == SV))
				continue; /* rank 1 is not the root there: no count to disagree */
			run_case(t, k, 2, (uint64_t)(k * 10 + bad), bad, 9);
		}
	/* After the failed calls the team still works. */
	run_case(t, A2AV, 0, 99, 0, 9);
	tc_team_destroy(t);
}
