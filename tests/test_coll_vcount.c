/* SPDX-License-Identifier: MIT */
/*
 * The variable-count collectives (allgatherv, gatherv, scatterv, alltoallv):
 * random counts (zeros included) and displacements with gaps, every
 * topology kind over the p of the matrix, results checked element by
 * element against the MPI definitions and the gaps untouched; errors
 * (disagreeing counts, overflowing counts, missing arrays, in place,
 * unknown algorithm) reported on every rank with nothing written.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_ref.h"
#include "harness.h"
#include "topocoll.h"
#include "util.h"

enum { AGV, GV, SV, A2AV, NKINDS };
static const char *const kind_names[]
        __attribute__((unused)) = {"allgatherv", "gatherv", "scatterv", "alltoallv"};

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
	size_t *cnt;     /* p x p: elements i sends to k */
	const char *alg; /* the algorithm asked for (NULL: AUTO) */
	const char *ran; /* rank 0's tc_last_coll() algorithm */
	int bad;         /* 0 ok; 1: rank 1 expects one more element from 0;
	                       2: rank 0's count overflows; 3: in place; 4: bad alg;
	                       5: missing array at rank 0 */
	atomic_int nfail;
	char msg[200];
	int *errs;     /* per rank */
	uint32_t **rb; /* per rank receive buffer */
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
	struct tc_coll_opts o = {.alg = v->bad == 4 ? "nope" : v->alg};
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
		err = tc_gatherv(proc, s == sb ? sb + sd[root] : s, sc[root], rb,
		                 r == root && !miss ? rc : NULL, r == root ? rd : NULL, TC_UINT32,
		                 root, &o);
		break;
	case SV:
		if (v->bad == 2 && r == 0)
			rc[root] = SIZE_MAX / 2;
		err = tc_scatterv(proc, s, r == root && !miss ? sc : NULL, r == root ? sd : NULL,
		                  rb + rd[root], rc[root], TC_UINT32, root, &o);
		break;
	default:
		err = tc_alltoallv(proc, s, miss ? NULL : sc, sd, rb, rc, rd, TC_UINT32, &o);
		break;
	}
	v->errs[r] = err;
	if (r == 0 && !err) {
		struct tc_coll_info info;
		tc_last_coll(proc, &info);
		v->ran = info.algorithm;
	}
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

static void run_case_alg(struct tc_team *team, int kind, int root, uint64_t seed, int bad,
                         size_t maxc, const char *alg)
{
	int p = tc_team_size(team);
	struct vcase v = {.kind = kind, .p = p, .root = root, .bad = bad, .alg = alg};
	v.cnt = calloc((size_t)p * (size_t)p, sizeof *v.cnt);
	v.errs = calloc((size_t)p, sizeof *v.errs);
	v.rb = calloc((size_t)p, sizeof *v.rb);
	v.rlen = calloc((size_t)p, sizeof *v.rlen);
	for (int i = 0; i < p; i++) {
		size_t c0 = (size_t)(tc_test_rand(&seed) % (maxc + 1));
		for (int k = 0; k < p; k++) {
			size_t c = kind == AGV || kind == GV
			                   ? c0
			                   : (size_t)(tc_test_rand(&seed) % (maxc + 1));
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
		cr_assert_eq(v.errs[r], want[bad], "%s p=%d bad=%d rank %d: %s", kind_names[kind],
		             p, bad, r, tc_err_name(v.errs[r]));
		uint32_t *e = malloc(v.rlen[r] * 4);
		expect(&v, r, e, v.rlen[r]);
		for (size_t j = 0; j < v.rlen[r]; j++)
			cr_assert_eq(v.rb[r][j], e[j], "%s p=%d root=%d rank %d elem %zu: %x want %x",
			             kind_names[kind], p, root, r, j, v.rb[r][j], e[j]);
		free(e);
		free(v.rb[r]);
	}
	if (!bad && alg)
		cr_assert_str_eq(v.ran, alg, "%s p=%d", kind_names[kind], p);
	if (!bad && !alg)
		cr_assert(!strcmp(v.ran, "pairwise") || !strcmp(v.ran, "direct"), "%s", v.ran);
	free(v.cnt);
	free(v.errs);
	free(v.rb);
	free(v.rlen);
}

static void run_case(struct tc_team *team, int kind, int root, uint64_t seed, int bad, size_t maxc)
{
	run_case_alg(team, kind, root, seed, bad, maxc, NULL);
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
					run_case(t, k, root,
					         (uint64_t)(p * 100 + si * 10 + k + root) + 1, 0,
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

/* Every algorithm of the registry (and AUTO) on threads and on fibres:
 * random counts with zeros, and every count zero, over every topology kind of a few p (64 on fibres only: 64 threads on
 * the test machines' few CPUs would only be slower). */
Test(vcount, algorithms_threads_and_fibres, .timeout = 600)
{
	static const int ps[] = {1, 2, 3, 5, 8, 13, 64};
	static const char *const algs[] = {"pairwise", "direct", NULL};
	for (int ex = 0; ex < 2; ex++)
		for (int pi = 0; pi < (int)(sizeof ps / sizeof ps[0]); pi++) {
			const int p = ps[pi];
			if (tc_test_p_skipped(p) || (p > 13 && ex == 0))
				continue;
			char specs[16][32];
			int ns = tc_test_specs_for(p, specs, 16);
			for (int si = 0; si<ns; si += p> 8 ? 4 : 1) {
				struct tc_team_config cfg;
				tc_team_config_default(&cfg);
				cfg.topology = specs[si];
				cfg.timeout_ms = 60000;
				cfg.exec = ex ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
				struct tc_team *t;
				cr_assert_eq(tc_team_create(&cfg, &t), 0, "%s", specs[si]);
				for (int a = 0; a < 3; a++)
					for (int k = 0; k < NKINDS; k++) {
						const int root = p > 1 ? (k + a) % p : 0;
						const uint64_t seed =
						        (uint64_t)(p * 1000 + si * 100 + a * 10 + k) + 3;
						/* uneven with zeros; then every count zero */
						run_case_alg(t, k, root, seed, 0, p > 13 ? 5 : 40,
						             algs[a]);
						run_case_alg(t, k, root, seed, 0, 0, algs[a]);
					}
				tc_team_destroy(t);
			}
		}
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

/* ---- the same counts again ------------------------------------------------- */

/* One alltoallv of a rank in the test of calls repeated: counts
 * (i + w k) % 5 from i to k, rank `shifted`'s send blocks one gap further
 * apart (its row alone changes), its buffers and their check. */
struct again_call {
	size_t sc[16], sd[16], rc[16], rd[16];
	uint32_t sb[512], rb[512];
};

static size_t again_cnt(int i, int k, int w)
{
	return (size_t)((i + w * k) % 5);
}

static void again_setup(struct again_call *c, int r, int p, int w, int shifted)
{
	size_t so = 1, ro = 2;
	for (int k = 0; k < p; k++) {
		c->sc[k] = again_cnt(r, k, w);
		c->sd[k] = so;
		so += c->sc[k] + (r == shifted ? 4 : 2);
		c->rc[k] = again_cnt(k, r, w);
		c->rd[k] = ro;
		ro += c->rc[k] + 3;
	}
	for (size_t j = 0; j < 512; j++)
		c->sb[j] = c->rb[j] = POISON;
	for (int k = 0; k < p; k++)
		for (size_t j = 0; j < c->sc[k]; j++)
			c->sb[c->sd[k] + j] = val(r, k, j, A2AV);
}

/* 0 when c's receive buffer holds every block in place and nothing else. */
static int again_check(const struct again_call *c, int r, int p)
{
	uint32_t want[512];
	for (size_t j = 0; j < 512; j++)
		want[j] = POISON;
	for (int i = 0; i < p; i++)
		for (size_t j = 0; j < c->rc[i]; j++)
			want[c->rd[i] + j] = val(i, r, j, A2AV);
	return memcmp(want, c->rb, sizeof want) != 0;
}

struct again {
	atomic_int nfail;
	char msg[240];
};

#define AGAIN_EXPECT(a, cond, ...)                                       \
	do {                                                             \
		if (!(cond) && atomic_fetch_add(&(a)->nfail, 1) == 0)    \
			snprintf((a)->msg, sizeof(a)->msg, __VA_ARGS__); \
	} while (0)

/* A blocking alltoallv (weights w, rank `shifted`'s sends spread); returns
 * the messages this rank sent in it. */
static uint64_t again_blocking(struct tc_proc *proc, struct again *a, int w, int shifted, const char *what)
{
	const int r = tc_rank(proc), p = tc_size(proc);
	struct again_call c;
	again_setup(&c, r, p, w, shifted);
	struct tc_stats s0, s1;
	tc_proc_stats(proc, &s0);
	int err = tc_alltoallv(proc, c.sb, c.sc, c.sd, c.rb, c.rc, c.rd, TC_UINT32, NULL);
	tc_proc_stats(proc, &s1);
	AGAIN_EXPECT(a, !err, "%s: rank %d: %s", what, r, tc_err_name(err));
	AGAIN_EXPECT(a, err || !again_check(&c, r, p), "%s: rank %d: wrong data", what, r);
	return s1.msgs_sent - s0.msgs_sent;
}

static int again_fn(struct tc_proc *proc, void *arg)
{
	struct again *a = arg;
	const int r = tc_rank(proc), p = tc_size(proc);
	/* The same counts again: the rows are not exchanged again (fewer
	 * messages: p > 1 sends rows and data, then flags and data). */
	uint64_t first = again_blocking(proc, a, 1, -1, "first");
	uint64_t again = again_blocking(proc, a, 1, -1, "again");
	AGAIN_EXPECT(a, p == 1 || again < first, "rank %d sent %llu messages again, %llu first", r,
	             (unsigned long long)again, (unsigned long long)first);
	/* Other counts, then the first ones back. */
	again_blocking(proc, a, 2, -1, "other counts");
	again_blocking(proc, a, 1, -1, "first counts back");
	/* Only rank 0's row changes (its send displacements): it must be
	 * seen, and kept. */
	uint64_t moved = again_blocking(proc, a, 1, 0, "rank 0's sends moved");
	uint64_t kept = again_blocking(proc, a, 1, 0, "rank 0's sends moved, again");
	AGAIN_EXPECT(a, p == 1 || kept < moved, "rank %d: a changed row not exchanged", r);
	/* Nonblocking, three at once (same, other, same), and persistent. */
	struct again_call c[3];
	tc_request q[3];
	for (int i = 0; i < 3; i++) {
		again_setup(&c[i], r, p, i == 1 ? 3 : 1, 0);
		int err = tc_ialltoallv(proc, c[i].sb, c[i].sc, c[i].sd, c[i].rb, c[i].rc, c[i].rd,
		                        TC_UINT32, NULL, &q[i]);
		AGAIN_EXPECT(a, !err, "ialltoallv %d: rank %d: %s", i, r, tc_err_name(err));
	}
	int err = tc_waitall(proc, 3, q);
	AGAIN_EXPECT(a, !err, "waitall: rank %d: %s", r, tc_err_name(err));
	for (int i = 0; i < 3; i++)
		AGAIN_EXPECT(a, err || !again_check(&c[i], r, p),
		             "ialltoallv %d: rank %d: wrong data", i, r);
	again_setup(&c[0], r, p, 4, -1);
	err = tc_alltoallv_init(proc, c[0].sb, c[0].sc, c[0].sd, c[0].rb, c[0].rc, c[0].rd,
	                        TC_UINT32, NULL, &q[0]);
	for (int k = 0; k < 3 && !err; k++) {
		for (size_t j = 0; j < 512; j++)
			c[0].rb[j] = POISON;
		if (!(err = tc_start(proc, &q[0])))
			err = tc_wait(proc, &q[0], NULL);
		AGAIN_EXPECT(a, err || !again_check(&c[0], r, p), "persistent start %d: rank %d", k, r);
	}
	AGAIN_EXPECT(a, !err, "persistent: rank %d: %s", r, tc_err_name(err));
	tc_request_free(proc, &q[0]);
	again_blocking(proc, a, 4, -1, "the persistent call's counts, blocking");
	/* Counts that disagree after the same counts: the rows are exchanged
	 * and every rank fails. */
	if (p > 1) {
		struct again_call d;
		again_setup(&d, r, p, 1, -1);
		if (r == 1)
			d.rc[0]++;
		err = tc_alltoallv(proc, d.sb, d.sc, d.sd, d.rb, d.rc, d.rd, TC_UINT32, NULL);
		AGAIN_EXPECT(a, err == TC_EMISMATCH, "disagreeing counts: rank %d: %s", r,
		             tc_err_name(err));
	}
	return 0;
}

/* A loop of v-calls with the same counts skips the exchange of the rows,
 * and any rank's change (counts or displacements) is seen: threads and
 * fibres, several topologies. */
Test(vcount, same_counts_again, .timeout = 300)
{
	static const char *const specs[] = {"complete:1",  "ring:2",    "ring:5",
	                                    "hypercube:3", "torus:3x4", "complete:16"};
	for (int ex = 0; ex < 2; ex++)
		for (size_t si = 0; si < sizeof specs / sizeof specs[0]; si++) {
			struct tc_team_config cfg;
			tc_team_config_default(&cfg);
			cfg.topology = specs[si];
			cfg.timeout_ms = 60000;
			cfg.exec = ex ? TC_EXEC_FIBRES : TC_EXEC_AUTO;
			struct tc_team *t;
			cr_assert_eq(tc_team_create(&cfg, &t), 0, "%s", specs[si]);
			struct again a = {0};
			int err = tc_run(t, again_fn, &a);
			cr_assert(err == 0 && a.nfail == 0, "%s (%s): %s %s", specs[si],
			          ex ? "fibres" : "auto", tc_err_name(err), a.msg);
			tc_team_destroy(t);
		}
}

/* ---- prediction (tc_predict_call, tc_schedule_call) ------------------------ */

static const enum tc_coll vcolls[NKINDS] = {TC_COLL_ALLGATHERV, TC_COLL_GATHERV, TC_COLL_SCATTERV,
                                            TC_COLL_ALLTOALLV};

/* The tc_call of kind with counts c (p numbers) or matrix c (p * p). */
static struct tc_call vcall(int kind, const size_t *c, size_t esize, int root)
{
	return (struct tc_call){.coll = vcolls[kind],
	                        .alg = "pairwise",
	                        .esize = esize,
	                        .root = root,
	                        .counts = kind == A2AV ? NULL : c,
	                        .matrix = kind == A2AV ? c : NULL};
}

static struct tc_topo *topo(const char *spec)
{
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse(spec, &t), 0, "%s", spec);
	return t;
}

/* The closed-form tests' team sizes, models (t_s, t_w, t_h in ns and the
 * switching) and counts per block. */
static const int cf_ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 31};
static const struct {
	double ts, tw, th;
	enum tc_switching sw;
} cf_ms[] = {{1000, 2, 0, TC_SWITCH_SF},
             {50, 0.5, 7, TC_SWITCH_CT},
             {0, 1, 3, TC_SWITCH_SF},
             {330, 0.25, 11, TC_SWITCH_CT}};
static const size_t cf_counts[] = {0, 1, 7, 64, 1000};

/* Equal counts on a complete graph: the pairwise header's (p-1)(t_s + m t_w)
 * (plus t_h per message under cut-through: one link), computed here. */
Test(vcount, predict_equal_counts_closed_form, .timeout = 60)
{
	for (int pi = 0; pi < (int)(sizeof cf_ps / sizeof cf_ps[0]); pi++) {
		int p = cf_ps[pi];
		char spec[32];
		snprintf(spec, sizeof spec, "complete:%d", p);
		struct tc_topo *t = topo(spec);
		size_t *c = malloc((size_t)p * (size_t)p * sizeof *c);
		for (int mi = 0; mi < (int)(sizeof cf_ms / sizeof cf_ms[0]); mi++) {
			struct tc_model md = ct_model(cf_ms[mi].ts, cf_ms[mi].tw, cf_ms[mi].th,
			                              TC_PORTS_ONE, TC_DUPLEX_FULL, cf_ms[mi].sw);
			for (int ci = 0; ci < (int)(sizeof cf_counts / sizeof cf_counts[0]); ci++)
				for (int k = 0; k < NKINDS; k++) {
					for (int i = 0; i < p * p; i++)
						c[i] = cf_counts[ci];
					const size_t es = 4;
					const double m = (double)(cf_counts[ci] * es);
					int root = (k == GV || k == SV) ? p / 2 : 0;
					struct tc_call call = vcall(k, c, es, root);
					struct tc_prediction pr;
					cr_assert_eq(tc_predict_call(t, &md, &call, &pr), 0,
					             "%s p=%d", kind_names[k], p);
					double hop = cf_ms[mi].ts + m * cf_ms[mi].tw +
					             (cf_ms[mi].sw == TC_SWITCH_CT ? cf_ms[mi].th : 0);
					double want_ns = m ? (p - 1) * hop : 0;
					/* Cut-through: a gatherv's (scatterv's) root streams its
					 * blocks through its port, t_h paid once (vcount.h); the
					 * formula is NAN there. */
					const bool root_ct =
					        (k == GV || k == SV) && cf_ms[mi].sw == TC_SWITCH_CT;
					if (root_ct && m && p > 1)
						want_ns = (p - 1) * (cf_ms[mi].ts + m * cf_ms[mi].tw) +
						          cf_ms[mi].th;
					cr_assert_eq(pr.modelled_ps, (tc_time_t)llround(want_ns * 1000),
					             "%s p=%d m=%g model %d: %lld cf_ps, want %.0f",
					             kind_names[k], p, m, mi,
					             (long long)pr.modelled_ps, want_ns * 1000);
					cr_assert(root_ct && p > 1 && m
					                  ? isnan(pr.formula_ns)
					                  : fabs(pr.formula_ns - want_ns) <= 1e-9 * want_ns,
					          "%s p=%d m=%g: formula %g, want %g",
					          kind_names[k], p, m, pr.formula_ns, want_ns);
					cr_assert_str_eq(pr.algorithm, "pairwise");
					cr_assert(isnan(pr.lower_bound_ns) && pr.lower_bound_steps == -1);
					cr_assert_eq(pr.oneport_violations, 0);
					/* AUTO is the one algorithm. */
					call.alg = NULL;
					struct tc_prediction pa;
					cr_assert_eq(tc_predict_call(t, &md, &call, &pa), 0);
					cr_assert_eq(pa.modelled_ps, pr.modelled_ps);
				}
		}
		free(c);
		tc_topo_destroy(t);
	}
}

/* direct, equal counts on a complete graph, full duplex: one port, the p - 1
 * messages through the busiest port back to back, t_h once (cut-through):
 * (p - 2)(t_s + m t_w) + t_s + m t_w + t_h; all ports, one message time
 * t_s + m t_w + t_h; computed here.  Half duplex and unequal counts: no
 * closed form.  Priced by the model, AUTO keeps pairwise (direct is a
 * fallback). */
Test(vcount, predict_direct_closed_form, .timeout = 60)
{
	for (int pi = 0; pi < (int)(sizeof cf_ps / sizeof cf_ps[0]); pi++) {
		int p = cf_ps[pi];
		char spec[32];
		snprintf(spec, sizeof spec, "complete:%d", p);
		struct tc_topo *t = topo(spec);
		size_t *c = malloc((size_t)p * (size_t)p * sizeof *c);
		for (int mi = 0; mi < (int)(sizeof cf_ms / sizeof cf_ms[0]); mi++)
			for (int port = 0; port < 3; port++) {
				struct tc_model md =
				        ct_model(cf_ms[mi].ts, cf_ms[mi].tw, cf_ms[mi].th,
				                 port == 1 ? TC_PORTS_ALL : TC_PORTS_ONE,
				                 port == 2 ? TC_DUPLEX_HALF : TC_DUPLEX_FULL,
				                 cf_ms[mi].sw);
				for (int ci = 0; ci < (int)(sizeof cf_counts / sizeof cf_counts[0]); ci++)
					for (int k = 0; k < NKINDS; k++) {
						for (int i = 0; i < p * p; i++)
							c[i] = cf_counts[ci];
						const size_t es = 4;
						const double m = (double)(cf_counts[ci] * es);
						int root = (k == GV || k == SV) ? p / 2 : 0;
						struct tc_call call = vcall(k, c, es, root);
						call.alg = "direct";
						struct tc_prediction pr;
						cr_assert_eq(tc_predict_call(t, &md, &call, &pr), 0,
						             "%s p=%d", kind_names[k], p);
						cr_assert_str_eq(pr.algorithm, "direct");
						cr_assert_eq(pr.rounds, 1);
						const double l = cf_ms[mi].ts + m * cf_ms[mi].tw;
						const double msg = l + (cf_ms[mi].sw == TC_SWITCH_CT
						                                ? cf_ms[mi].th
						                                : 0);
						double want_ns = port == 1 ? msg : (p - 2) * l + msg;
						if (!m || p == 1)
							want_ns = 0;
						if (port == 2 && want_ns) {
							cr_assert(isnan(pr.formula_ns),
							          "%s p=%d half", kind_names[k], p);
							continue;
						}
						cr_assert_eq(pr.modelled_ps,
						             (tc_time_t)llround(want_ns * 1000),
						             "%s p=%d m=%g model %d port %d: %lld cf_ps, want "
						             "%.0f",
						             kind_names[k], p, m, mi, port,
						             (long long)pr.modelled_ps, want_ns * 1000);
						cr_assert(fabs(pr.formula_ns - want_ns) <= 1e-9 * want_ns,
						          "%s p=%d m=%g port %d: formula %g, want %g",
						          kind_names[k], p, m, port, pr.formula_ns,
						          want_ns);
						/* AUTO, priced by the model: pairwise. */
						call.alg = NULL;
						cr_assert_eq(tc_predict_call(t, &md, &call, &pr), 0);
						cr_assert_str_eq(pr.algorithm, "pairwise");
					}
			}
		free(c);
		tc_topo_destroy(t);
	}
	/* Unequal counts: no closed form. */
	struct tc_model md = ct_model(100, 1, 0, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	struct tc_topo *t3 = topo("complete:3");
	size_t agv[] = {1, 2, 3};
	struct tc_call call = vcall(AGV, agv, 4, 0);
	call.alg = "direct";
	struct tc_prediction pr;
	cr_assert_eq(tc_predict_call(t3, &md, &call, &pr), 0);
	cr_assert(isnan(pr.formula_ns));
	tc_topo_destroy(t3);
}

/* Unequal counts, by hand (t_s 100 ns, t_w 1 ns/B, SF, one-port, full
 * duplex, complete graphs).  The pairwise rounds: k = 1 .. p-1, i -> i+k. */
Test(vcount, predict_unequal_counts_by_hand, .timeout = 60)
{
	struct tc_model md = ct_model(100, 1, 0, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	struct tc_prediction pr;
	struct tc_topo *t3 = topo("complete:3"), *t4 = topo("complete:4");
	/* allgatherv, counts {1, 2, 3} of 4 bytes: blocks 4, 8, 12 B.  Round 1:
	 * 0->1 4 B, 1->2 8 B, 2->0 12 B; round 2: 0->2, 1->0, 2->1 the same
	 * sizes.  Rank 2 sends 12 B in both rounds, its second send starting when
	 * its first has left (112 ns; it got its round-1 block at 108): 224 ns,
	 * the sum over the rounds of the slowest transfer. */
	size_t agv[] = {1, 2, 3};
	struct tc_call c = vcall(AGV, agv, 4, 0);
	cr_assert_eq(tc_predict_call(t3, &md, &c, &pr), 0);
	cr_assert_eq(pr.modelled_ps, 224000, "%lld", (long long)pr.modelled_ps);
	cr_assert(isnan(pr.formula_ns)); /* unequal blocks: no closed form */
	cr_assert_eq(pr.rounds, 3);
	cr_assert_eq(pr.messages, 6); /* the local copies are not messages */
	/* gatherv to root 0, counts {5, 1, 3, 2} of 8 bytes: the root takes one
	 * block a round, from 3 (16 B), 2 (24 B), 1 (8 B), its receives in turn:
	 * 116, 116 + 124 = 240, 240 + 108 = 348 ns. */
	size_t gv[] = {5, 1, 3, 2};
	c = vcall(GV, gv, 8, 0);
	cr_assert_eq(tc_predict_call(t4, &md, &c, &pr), 0);
	cr_assert_eq(pr.modelled_ps, 348000, "%lld", (long long)pr.modelled_ps);
	/* scatterv from root 3, counts {2, 0, 4, 9} of 1 byte: round k the root
	 * sends to 3 + k: 0 (2 B), nothing to 1, 2 (4 B): 102, then 102 + 104. */
	size_t sv[] = {2, 0, 4, 9};
	c = vcall(SV, sv, 1, 3);
	cr_assert_eq(tc_predict_call(t4, &md, &c, &pr), 0);
	cr_assert_eq(pr.modelled_ps, 206000, "%lld", (long long)pr.modelled_ps);
	cr_assert_eq(pr.messages, 2);
	/* alltoallv on 3, elements of 1 byte, rows {0 1 2, 3 0 1, 2 2 0}: round
	 * 1: 0->1 1 B, 1->2 1 B, 2->0 2 B (arrivals 101, 101, 102); round 2:
	 * 0->2 2 B, 1->0 3 B, 2->1 2 B.  Rank 1's 3 B leave at 101 (its round-1
	 * send has left, its round-1 block arrived) but rank 0's one receive
	 * port is busy until 102, so they are in at 102 + 103 = 205; rank 0's
	 * and 2's 2 B start at 102 and are in at 204.  205: the sum over the
	 * rounds of the slowest transfer, 102 + 103. */
	size_t a2a[] = {0, 1, 2, 3, 0, 1, 2, 2, 0};
	c = vcall(A2AV, a2a, 1, 0);
	cr_assert_eq(tc_predict_call(t3, &md, &c, &pr), 0);
	cr_assert_eq(pr.modelled_ps, 205000, "%lld", (long long)pr.modelled_ps);
	/* tc_schedule_call: the same transfers, packed offsets. */
	struct tc_transfer *x;
	int n;
	cr_assert_eq(tc_schedule_call(t3, &md, &c, &x, &n), 0);
	cr_assert_eq(n, 6); /* 2 local copies (rank 0's and 2's are empty), 4 + ... */
	tc_time_t last = 0;
	for (int i = 0; i < n; i++) {
		if (x[i].src == 1 && x[i].dst == 0) {
			cr_assert_eq(x[i].bytes, 3);
			cr_assert_eq(x[i].src_off, 0); /* row 1: 3 to 0 first */
			cr_assert_eq(x[i].dst_off, 0); /* at 0: from 0 (none), then 1 */
		}
		if (x[i].src == 2 && x[i].dst == 1) {
			cr_assert_eq(x[i].src_off, 2);
			cr_assert_eq(x[i].dst_off, 1);
		}
		last = x[i].arrival_ps > last ? x[i].arrival_ps : last;
	}
	cr_assert_eq(last, 204000); /* arrival; 1 -> 0 completes at 205 */
	tc_schedule_free(x);
	tc_topo_destroy(t3);
	tc_topo_destroy(t4);
}

/* A real run's modelled time (tc_last_coll) is the prediction's. */
struct lastrun {
	int kind;
	size_t *cnt; /* p x p elements i -> k */
	tc_time_t modelled[64];
	const char *alg[64]; /* what AUTO ran (the machine's pricing may differ
	                        from the predictor's model) */
	int errs[64];
};

static int last_fn(struct tc_proc *proc, void *arg)
{
	struct lastrun *L = arg;
	int r = tc_rank(proc), p = tc_size(proc);
	size_t sc[64], sd[64], rc[64], rd[64], s = 0, q = 0;
	for (int k = 0; k < p; k++) {
		sc[k] = L->cnt[r * p + k];
		sd[k] = s;
		s += sc[k];
		rc[k] = L->cnt[k * p + r];
		rd[k] = q;
		q += rc[k];
	}
	uint32_t *sb = calloc(s + 1, 4), *rb = calloc(q + 1, 4);
	int err;
	switch (L->kind) {
	case AGV:
		err = tc_allgatherv(proc, sb, sc[0], rb, rc, rd, TC_UINT32, NULL);
		break;
	case GV:
		err = tc_gatherv(proc, sb, sc[1], rb, rc, rd, TC_UINT32, 1, NULL);
		break;
	case SV:
		err = tc_scatterv(proc, sb, sc, sd, rb, rc[1], TC_UINT32, 1, NULL);
		break;
	default:
		err = tc_alltoallv(proc, sb, sc, sd, rb, rc, rd, TC_UINT32, NULL);
		break;
	}
	struct tc_coll_info info;
	tc_last_coll(proc, &info);
	L->errs[r] = err;
	L->modelled[r] = info.modelled_ps;
	L->alg[r] = info.algorithm;
	free(sb);
	free(rb);
	return 0;
}

Test(vcount, run_matches_prediction, .timeout = 60)
{
	static const char *const specs[] = {"ring:5", "mesh:2x3", "hypercube:3", "star:4"};
	for (int si = 0; si < 4; si++) {
		struct tc_model md = ct_model(500, 0.5, 20, TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_CT);
		char msg[256];
		struct tc_team *team = ct_team(specs[si], &md, msg, sizeof msg);
		cr_assert(team, "%s", msg);
		struct tc_topo *t = topo(specs[si]);
		int p = tc_team_size(team);
		uint64_t seed = (uint64_t)si + 7;
		for (int k = 0; k < NKINDS; k++) {
			struct lastrun L = {.kind = k};
			L.cnt = calloc((size_t)p * (size_t)p, sizeof *L.cnt);
			size_t counts[64];
			for (int i = 0; i < p; i++)
				counts[i] = (size_t)(tc_test_rand(&seed) % 50);
			for (int i = 0; i < p; i++) {
				for (int j = 0; j < p; j++)
					L.cnt[i * p + j] = k == A2AV ? (size_t)(tc_test_rand(&seed) % 50)
					                   : k == AGV ? counts[i]
					                   : k == GV  ? (j == 1 ? counts[i] : 0)
					                              : (i == 1 ? counts[j] : 0);
			}
			cr_assert_eq(tc_run(team, last_fn, &L), 0);
			struct tc_call c = vcall(k, k == A2AV ? L.cnt : counts, 4, 1);
			c.alg = L.alg[0];
			struct tc_prediction pr;
			cr_assert_eq(tc_predict_call(t, &md, &c, &pr), 0);
			for (int r = 0; r < p; r++) {
				cr_assert_str_eq(L.alg[r], L.alg[0]);
				cr_assert_eq(L.errs[r], 0, "%s on %s rank %d: %s", kind_names[k],
				             specs[si], r, tc_err_name(L.errs[r]));
				cr_assert_eq(L.modelled[r], pr.modelled_ps,
				             "%s on %s rank %d: %lld vs %lld", kind_names[k], specs[si],
				             r, (long long)L.modelled[r], (long long)pr.modelled_ps);
			}
			free(L.cnt);
		}
		tc_topo_destroy(t);
		tc_team_destroy(team);
	}
}

/* Missing, misplaced or overflowing counts; the registry's pairwise. */
Test(vcount, predict_errors_and_registry, .timeout = 60)
{
	struct tc_model md;
	tc_model_default(&md);
	struct tc_topo *t = topo("ring:4");
	size_t c4[16] = {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4};
	struct tc_prediction pr;
	struct tc_transfer *x;
	int n;
	for (int k = 0; k < NKINDS; k++) {
		int root = k == GV || k == SV ? 2 : 0;
		struct tc_call c = vcall(k, c4, 4, root);
		cr_assert_eq(tc_predict_call(t, &md, &c, &pr), 0, "%s", kind_names[k]);
		/* Missing counts. */
		struct tc_call m = c;
		m.counts = m.matrix = NULL;
		m.bytes = 64;
		cr_assert_eq(tc_predict_call(t, &md, &m, &pr), TC_EINVAL, "%s", kind_names[k]);
		cr_assert_eq(tc_schedule_call(t, &md, &m, &x, &n), TC_EINVAL, "%s", kind_names[k]);
		cr_assert_eq(tc_predict(t, &md, vcolls[k], NULL, 64, 8, root, 0, &pr), TC_EINVAL);
		/* The wrong array (or both). */
		m = c;
		m.counts = k == A2AV ? c4 : NULL;
		m.matrix = k == A2AV ? NULL : c4;
		cr_assert_eq(tc_predict_call(t, &md, &m, &pr), TC_EINVAL, "%s", kind_names[k]);
		m = c;
		m.counts = m.matrix = c4;
		cr_assert_eq(tc_predict_call(t, &md, &m, &pr), TC_EINVAL, "%s", kind_names[k]);
		/* Overflow: a block, and a buffer of blocks each within the limit. */
		size_t big[16], half[16];
		for (int i = 0; i < 16; i++) {
			big[i] = SIZE_MAX / 2;
			half[i] = (size_t)(TC_MAX_MESSAGE / 4 / 3);
		}
		m = vcall(k, big, 4, root);
		cr_assert_eq(tc_predict_call(t, &md, &m, &pr), TC_EOVERFLOW, "%s", kind_names[k]);
		m = vcall(k, half, 4, root);
		cr_assert_eq(tc_predict_call(t, &md, &m, &pr), TC_EOVERFLOW, "%s", kind_names[k]);
		/* Bad root; unknown algorithm. */
		if (k == GV || k == SV) {
			m = vcall(k, c4, 4, 4);
			cr_assert_eq(tc_predict_call(t, &md, &m, &pr), TC_EROOT);
		}
		m = c;
		m.alg = "ring";
		cr_assert_eq(tc_predict_call(t, &md, &m, &pr), TC_EALG);
		/* The registry lists pairwise and direct, which apply everywhere. */
		cr_assert_str_eq(tc_alg_name(vcolls[k], 0), "pairwise");
		cr_assert_str_eq(tc_alg_name(vcolls[k], 1), "direct");
		cr_assert_null(tc_alg_name(vcolls[k], 2));
		enum tc_coll back;
		cr_assert_eq(tc_coll_parse(kind_names[k], &back), 0);
		cr_assert_eq(back, vcolls[k]);
		cr_assert(tc_coll_flags(vcolls[k]) & TC_CF_VCOUNT);
		static const char *const specs[] = {"ring:5",    "chain:3",     "mesh:2x3",
		                                    "torus:3x3", "hypercube:3", "star:6",
		                                    "tree:2:7",  "complete:1"};
		for (int si = 0; si < 8; si++) {
			struct tc_topo *u = topo(specs[si]);
			for (int port = 0; port < 2; port++) {
				md.ports = port ? TC_PORTS_ALL : TC_PORTS_ONE;
				cr_assert_eq(tc_alg_applies(u, &md, vcolls[k], "pairwise"), 0, "%s",
				             specs[si]);
				cr_assert_eq(tc_alg_applies(u, &md, vcolls[k], "direct"), 0, "%s",
				             specs[si]);
				cr_assert_eq(tc_alg_applies(u, &md, vcolls[k], "ring"), TC_EALG);
			}
			md.ports = TC_PORTS_ONE;
			tc_topo_destroy(u);
		}
	}
	/* Counts on a collective that takes none. */
	struct tc_call b = {.coll = TC_COLL_ALLGATHER, .bytes = 8, .esize = 8, .counts = c4};
	cr_assert_eq(tc_predict_call(t, &md, &b, &pr), TC_EINVAL);
	tc_topo_destroy(t);
}
