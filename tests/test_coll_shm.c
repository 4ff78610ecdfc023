/* SPDX-License-Identifier: MIT */
/*
 * The machine's own algorithms (`shm`, `shm_flag`, `shm_tree`:
 * lib/coll/shm.h): every
 * one against the sequential reference of tests/common/coll_ref for every p
 * of the matrix on the complete graph, on threads and on fibres, natively
 * (the flags and the peers' buffers) and emulated (their schedules), in
 * place and not, several sizes (in the flags and through the buffers) and
 * roots, back to back; alltoall and allgather on both sides of the flag's
 * and the area's bounds, back to back with data that change at every call;
 * interleaved with the other collectives' algorithms
 * and with each other (the flags' reuse); allreduce by slices with its
 * buffers overwritten right after every return, slices in the library's
 * buffers and in OUT; their modelled time against the
 * prediction; AUTO's rule (taken on native teams with a CPU per rank, and
 * for barrier, allgather, alltoall, reduce_scatter and a small bcast on
 * oversubscribed teams of fibres);
 * a mismatched call; the swept waits on teams whose waiters spin (p = 3
 * and 70); a refused call's detail on every rank.  gather, scatter and
 * reduce_scatter also with every
 * root of small teams, reduce_scatter with a non-commutative operator and
 * with inexact double sums compared bit for bit with the sum in rank
 * order, their buffers overwritten right after every return; the
 * reductions that stage their operands (p = 3 and 5, spinning waiters)
 * likewise, either side of the stage's bound.  shm_tree:
 * its groups without a known structure and on the two cache domains of
 * tests/data/2socket-16core.xml, and its runs on those groups (threads,
 * fibres, a non-commutative operator); vectors beyond a cache line refused.
 * A bcast whose root copies part of the message into the readers'
 * buffers: the split against its closed form, and its runs at p = 2-4
 * with the buffers overwritten right after every return.  The copy around
 * the caches against memcpy, and the allgather and alltoall that take it
 * (outputs beyond the last-level cache).
 */
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "base/copy.h"
#include "coll/coll_internal.h"
#include "coll/gen.h"
#include "coll/shm.h"
#include "coll_ref.h"
#include "topocoll.h"
#include "topocoll/calibrate.h"
#include "util.h"

struct shm_alg {
	enum tc_coll coll;
	const char *alg;
};

static const struct shm_alg shm_algs[] = {
        {TC_COLL_BCAST, "shm"},          {TC_COLL_ALLREDUCE, "shm"},
        {TC_COLL_ALLREDUCE, "shm_flag"}, {TC_COLL_BARRIER, "shm"},
        {TC_COLL_ALLGATHER, "shm"},      {TC_COLL_ALLTOALL, "shm"},
        {TC_COLL_GATHER, "shm"},         {TC_COLL_SCATTER, "shm"},
        {TC_COLL_REDUCE_SCATTER, "shm"}, {TC_COLL_BARRIER, "shm_tree"},
        {TC_COLL_ALLREDUCE, "shm_tree"},
};

/* allreduce shm_tree: vectors of at most a cache line (64 bytes). */
static int small_only(const struct shm_alg *s)
{
	return s->coll == TC_COLL_ALLREDUCE && !strcmp(s->alg, "shm_tree");
}
#define NSHM ((int)(sizeof shm_algs / sizeof shm_algs[0]))

/* The spin of the teams shm_team() makes (0: the library's choice). */
static uint64_t team_spin_ns;

static struct tc_team *shm_team(int p, enum tc_exec exec, enum tc_mode mode)
{
	char spec[32];
	snprintf(spec, sizeof spec, "complete:%d", p);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	cfg.mode = mode;
	cfg.timeout_ms = 60000;
	cfg.spin_ns = team_spin_ns;
	if (mode == TC_MODE_EMULATED) {
		cfg.model.ts_ns = 2000;
		cfg.model.tw_ns = 0.01;
	}
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	return team;
}

/* Every shm algorithm on complete:p, the sizes and options of the case
 * list, each case `iters` calls back to back. */
static void run_all(int p, enum tc_exec exec, enum tc_mode mode, const size_t *counts, int ncounts)
{
	struct tc_team *team = shm_team(p, exec, mode);
	char msg[256];
	for (int a = 0; a < NSHM; a++)
		for (int ci = 0; ci < ncounts; ci++)
			for (int ip = 0; ip < 2; ip++) {
				const struct shm_alg *s = &shm_algs[a];
				if (s->coll == TC_COLL_BARRIER && (ci || ip))
					continue;
				if (ip && s->coll == TC_COLL_ALLTOALL)
					continue; /* no in-place alltoall */
				struct ct_case c = {.coll = s->coll,
				                    .alg = s->alg,
				                    .count = counts[ci],
				                    .dt = ci & 1 ? TC_DOUBLE : TC_INT32,
				                    .op = TC_OP_SUM,
				                    .root = ip ? p - 1 : ci % p,
				                    .in_place = ip,
				                    .iters = 3,
				                    .seed = (uint64_t)(a * 100 + ci)};
				if (s->coll == TC_COLL_BCAST)
					c.dt = TC_BYTE;
				if (small_only(s) && c.count * tc_dtype_size(c.dt) > 64)
					c.count = 64 / tc_dtype_size(c.dt); /* its largest */
				int err = ct_run(team, &c, msg, sizeof msg);
				cr_assert_eq(err, 0, "p=%d %s %s exec %d mode %d count %zu ip %d: %s",
				             p, tc_coll_name(s->coll), s->alg, (int)exec, (int)mode,
				             counts[ci], ip, msg);
				if (s->coll != TC_COLL_REDUCE_SCATTER && !small_only(s))
					continue;
				/* Rank-ordered: a non-commutative operator. */
				c.dt = TC_UINT64;
				if (small_only(s) && c.count > 8)
					c.count = 8;
				c.op = CT_OP_AFFINE;
				err = ct_run(team, &c, msg, sizeof msg);
				cr_assert_eq(err, 0, "p=%d %s affine exec %d mode %d count %zu ip %d: %s",
				             p, s->alg, (int)exec, (int)mode, counts[ci], ip, msg);
			}
	tc_team_destroy(team);
}

/* In the flags (<= 88 bytes), just above (in the areas, up to 1 KiB),
 * through the buffers. */
static const size_t counts_small[] = {0, 1, 7, 22, 23, 250};
static const size_t counts_large[] = {1, 1000};

/* Every p of the matrix, natively, on exec. */
static void run_matrix(enum tc_exec exec)
{
	for (int k = 0; k < TC_TEST_NPS; k++) {
		int p = tc_test_ps[k];
		if (p > 16)
			run_all(p, exec, TC_MODE_NATIVE, counts_large, 2);
		else
			run_all(p, exec, TC_MODE_NATIVE, counts_small, 6);
	}
}

Test(shm, results_threads, .timeout = 600)
{
	run_matrix(TC_EXEC_THREADS);
}

Test(shm, results_fibres, .timeout = 600)
{
	run_matrix(TC_EXEC_FIBRES);
}

/* The schedules (emulated mode runs them, not the flags). */
/* The waits that look at every awaited peer's flag in each pass
 * (lib/coll/shm.c, tc__shm_sweep) run where the waiters spin: every
 * algorithm, native threads, with the team's spin set, at p = 3 and at
 * p = 70 (the awaited peers in two words of the sweep's set; a team of
 * more ranks than CPUs, which would not spin by default). */
Test(shm, swept_waits, .timeout = 600)
{
	team_spin_ns = 20000;
	run_all(3, TC_EXEC_THREADS, TC_MODE_NATIVE, counts_small, 6);
	run_all(70, TC_EXEC_THREADS, TC_MODE_NATIVE, counts_large, 1);
	team_spin_ns = 0;
}

Test(shm, results_emulated, .timeout = 300)
{
	static const int ps[] = {1, 2, 3, 5};
	for (int k = 0; k < 4; k++)
		run_all(ps[k], TC_EXEC_AUTO, TC_MODE_EMULATED, counts_large, 2);
}

/* A large case: 1 MiB per rank through the buffers. */
Test(shm, one_mebibyte, .timeout = 300)
{
	struct tc_team *team = shm_team(3, TC_EXEC_THREADS, TC_MODE_NATIVE);
	char msg[256];
	for (int a = 0; a < NSHM; a++) {
		if (small_only(&shm_algs[a]))
			continue;
		struct ct_case c = {.coll = shm_algs[a].coll,
		                    .alg = shm_algs[a].alg,
		                    .count = shm_algs[a].coll == TC_COLL_ALLTOALL ? 1000 : 131072,
		                    .dt = TC_DOUBLE,
		                    .op = TC_OP_SUM,
		                    .root = 1,
		                    .iters = 2};
		cr_assert_eq(ct_run(team, &c, msg, sizeof msg), 0, "%s %s: %s",
		             tc_coll_name(c.coll), c.alg, msg);
	}
	tc_team_destroy(team);
}

/* The copy around the caches (lib/base/copy.h) against memcpy: sizes below,
 * at and beyond its threshold, misalignments of either side (destination
 * 0, 5, 10, 15 bytes past a 16-byte boundary, source 0 to 15 by 3), and
 * the bytes next to the destination untouched. */
Test(shm, stream_copy, .timeout = 30)
{
	static const size_t sizes[] = {0,    1,    63,   64,         4095,
	                               4096, 4097, 5000, 65536 + 13, (1u << 20) + 7};
	enum { GUARD = 64 };
	const size_t cap = ((size_t)1 << 20) + 7 + 2 * GUARD + 16;
	unsigned char *src = malloc(cap), *dst = malloc(cap), *want = malloc(cap);
	cr_assert(src && dst && want);
	for (size_t i = 0; i < cap; i++)
		src[i] = (unsigned char)(i * 131 + 7);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
		for (int da = 0; da < 16; da += 5)
			for (int sa = 0; sa < 16; sa += 3) {
				const size_t n = sizes[k];
				memset(dst, 0xA5, cap);
				memset(want, 0xA5, cap);
				memcpy(want + GUARD + da, src + sa, n);
				tc__copy_stream(dst + GUARD + da, src + sa, n);
				cr_assert(!memcmp(dst, want, cap),
				          "%zu bytes, destination +%d, source +%d: not memcpy's bytes",
				          n, da, sa);
			}
	free(src);
	free(dst);
	free(want);
}

/* allgather and alltoall whose outputs exceed the last-level cache, where
 * their blocks go into OUT around the caches (tc__shm_streams): p = 8
 * ranks, each block just over what puts the outputs of the ranks sharing
 * one such cache beyond it, against the reference; the decision itself
 * asserted where the copy can stream (x86-64, no sanitizer).  Skipped
 * where the cache is unknown (no hwloc) or so large that the blocks would
 * pass 8 MiB. */
Test(shm, outputs_beyond_the_cache, .timeout = 300)
{
	enum { P = 8 };
	struct tc_team *team = shm_team(P, TC_EXEC_AUTO, TC_MODE_NATIVE);
	struct tc_team_info info;
	tc_team_get_info(team, &info);
	size_t llc = 0;
	int domains = 1;
	for (int k = 0; k < 3; k++)
		if (info.cache_bytes[k] > llc) {
			llc = info.cache_bytes[k];
			domains = info.cache_count[k] > 0 ? info.cache_count[k] : 1;
		}
	const size_t sharing = ((size_t)P + (size_t)domains - 1) / (size_t)domains;
	const size_t block = (llc / (sharing * P) + 65536) / 8 * 8;
	if (!llc || block > ((size_t)8 << 20)) {
		tc_team_destroy(team);
		cr_skip_test("last-level cache %zu bytes: unknown or too large for this test", llc);
	}
	cr_assert_eq(tc__shm_streams(team, block), TC__COPY_STREAMS,
	             "%zu-byte blocks, %zu-byte cache shared by %zu ranks", block, llc, sharing);
	static const enum tc_coll colls[] = {TC_COLL_ALLGATHER, TC_COLL_ALLTOALL};
	char msg[256];
	for (int i = 0; i < 2; i++) {
		struct ct_case c = {.coll = colls[i],
		                    .alg = "shm",
		                    .count = block / sizeof(double),
		                    .dt = TC_DOUBLE,
		                    .iters = 2};
		cr_assert_eq(ct_run(team, &c, msg, sizeof msg), 0, "%s of %zu-byte blocks: %s",
		             tc_coll_name(c.coll), block, msg);
	}
	tc_team_destroy(team);
}

/* ---- interleaved calls: the flags' reuse ------------------------------------ */

struct mix_arg {
	atomic_int bad;
	char msg[160];
};

static void mix_fail(struct mix_arg *a, const char *what, int me, int it, int err)
{
	if (atomic_fetch_add(&a->bad, 1) == 0)
		snprintf(a->msg, sizeof a->msg, "rank %d iter %d %s: %s", me, it, what,
		         err ? tc_strerror(err) : "wrong result");
}

/* Small broadcasts from rotating roots (the root waits for nobody) between
 * flat calls, other algorithms and point-to-point: every block is
 * rewritten only once every peer is done with it. */
static int mix_fn(struct tc_proc *proc, void *argp)
{
	struct mix_arg *a = argp;
	const int p = tc_size(proc), me = tc_rank(proc);
	struct tc_coll_opts shm = {.alg = "shm"}, flag = {.alg = "shm_flag"},
	                    tree = {.alg = "shm_tree"}, diss = {.alg = "dissemination"},
	                    bin = {.alg = "binomial"};
	int64_t v[3], sum[3];
	unsigned char *in = malloc(200), *out = malloc(200 * (size_t)p);
	for (int it = 0; it < 60 && !atomic_load(&a->bad); it++) {
		const int root = it % p;
		int64_t b = me == root ? it * 7 + root : -1;
		int err = tc_bcast(proc, &b, 1, TC_INT64, root, &shm);
		if (err || b != it * 7 + root)
			mix_fail(a, "bcast shm", me, it, err);
		if (it % 3 == 0 && (err = tc_barrier(proc, &diss)))
			mix_fail(a, "barrier dissemination", me, it, err);
		for (int j = 0; j < 3; j++)
			v[j] = (int64_t)(me + 1) * (it + j);
		err = tc_allreduce(proc, v, sum, 3, TC_INT64, TC_OP_SUM,
		                   it % 3 == 2 ? &tree
		                   : it & 1    ? &shm
		                               : &flag);
		int wrong = 0;
		for (int j = 0; j < 3 && !err; j++)
			wrong |= sum[j] != (int64_t)p * (p + 1) / 2 * (it + j);
		if (err || wrong)
			mix_fail(a, "allreduce", me, it, err);
		b = me == root ? it : -1;
		if ((err = tc_bcast(proc, &b, 1, TC_INT64, root, &bin)) || b != it)
			mix_fail(a, "bcast binomial", me, it, err);
		const size_t n = it & 2 ? 200 : 8;
		memset(in, me + it, n);
		if ((err = tc_allgather(proc, in, out, n, TC_BYTE, &shm)))
			mix_fail(a, "allgather shm", me, it, err);
		for (int r = 0; r < p && !err; r++)
			if (out[(size_t)r * n] != (unsigned char)(r + it) ||
			    out[(size_t)r * n + n - 1] != (unsigned char)(r + it)) {
				mix_fail(a, "allgather shm", me, it, 0);
				break;
			}
		if (p > 1 && it % 5 == 0) {
			int peer = me ^ 1, x = me;
			int y = -1;
			if (peer < p &&
			    (err = tc_sendrecv(proc, peer, &x, sizeof x, peer, &y, sizeof y, NULL)))
				mix_fail(a, "sendrecv", me, it, err);
		}
		if (it % 4 == 1 && (err = tc_barrier(proc, &shm)))
			mix_fail(a, "barrier shm", me, it, err);
		if (it % 4 == 3 && (err = tc_barrier(proc, &tree)))
			mix_fail(a, "barrier shm_tree", me, it, err);
	}
	free(in);
	free(out);
	return 0;
}

Test(shm, interleaved, .timeout = 300)
{
	static const int ps[] = {2, 3, 5, 8, 16};
	for (int k = 0; k < 5; k++)
		for (int fib = 0; fib < 2; fib++) {
			struct tc_team *team =
			        shm_team(ps[k], fib ? TC_EXEC_FIBRES : TC_EXEC_THREADS, TC_MODE_NATIVE);
			for (int run = 0; run < 2; run++) { /* a second run of the same team */
				struct mix_arg a = {.bad = 0};
				cr_assert_eq(tc_run(team, mix_fn, &a), 0);
				cr_assert_eq(atomic_load(&a.bad), 0, "p=%d fibres %d run %d: %s",
				             ps[k], fib, run, a.msg);
			}
			tc_team_destroy(team);
		}
}

/* The published bytes (alltoall p m, allgather m) a flag carries, and the
 * output (p m) for which they travel through the ranks' areas beyond that
 * (lib/coll/shm.h: TC__SHM_INLINE, TC__SHM_AREA). */
enum { FLAG_BYTES = 88, AREA_BYTES = 1024 };

/* ---- small broadcasts back to back: the root's ring ------------------------ */

/* Byte i of a small broadcast's message at call it from root. */
static unsigned char ring_byte(int it, size_t i, int root)
{
	return (unsigned char)(it * 31 + (int)i * 7 + root);
}

/* Runs of 5 TC__SHM_RING + 3 small broadcasts back to back from one root,
 * every size up to the flag's, the root changing between runs with no
 * other call between; each reader is late now and then (the root runs
 * ahead of it, up to the ring's depth), and everyone overwrites its buffer
 * right after each return, so that a reader copying an entry the root has
 * rewritten, or a root rewriting an entry not yet read, shows. */
static int ring_fn(struct tc_proc *proc, void *argp)
{
	struct mix_arg *a = argp;
	const int p = tc_size(proc), me = tc_rank(proc);
	const struct tc_coll_opts shm = {.alg = "shm"};
	unsigned char buf[FLAG_BYTES];
	const int run = 5 * TC__SHM_RING + 3;
	for (int it = 0; it < 4 * run && !atomic_load(&a->bad); it++) {
		const int root = (it / run) % p;
		const size_t n = (size_t)(it * 13) % (FLAG_BYTES + 1);
		for (size_t i = 0; i < n; i++)
			buf[i] = me == root ? ring_byte(it, i, root) : 0xee;
		if (me != root && it % 7 == me % 7) {
			struct timespec ts = {0, 50 * 1000};
			nanosleep(&ts, NULL);
		}
		int err = tc_bcast(proc, buf, n, TC_BYTE, root, &shm), wrong = 0;
		for (size_t i = 0; i < n && !err && !wrong; i++)
			wrong = buf[i] != ring_byte(it, i, root);
		if (err || wrong) {
			mix_fail(a, "bcast shm", me, it, err);
			break;
		}
		memset(buf, 0x5a, sizeof buf);
	}
	return 0;
}

Test(shm, bcast_ring, .timeout = 300)
{
	for (int k = 0; k < TC_TEST_NPS; k++)
		for (int fib = 0; fib < 2; fib++) {
			struct tc_team *team =
			        shm_team(tc_test_ps[k], fib ? TC_EXEC_FIBRES : TC_EXEC_THREADS,
			                 TC_MODE_NATIVE);
			for (int run = 0; run < 2; run++) { /* the entries of the run before */
				struct mix_arg a = {.bad = 0};
				cr_assert_eq(tc_run(team, ring_fn, &a), 0);
				cr_assert_eq(atomic_load(&a.bad), 0, "p=%d fibres %d run %d: %s",
				             tc_test_ps[k], fib, run, a.msg);
			}
			tc_team_destroy(team);
		}
}

/* A small broadcast's root against a flat call, with the call checks off
 * (no_mismatch_check) and the rank making the other call still in its
 * SPMD function: the ring's entry and the block of the same call are all
 * that tells the waiting ranks.  flip 0: rank 0 broadcasts, the others
 * wait in a barrier for its block, then it waits until they have
 * returned; flip 1: rank 0 waits in a barrier, the others wait for its
 * ring's entry. */
struct ring_mismatch_arg {
	int flip;
	atomic_int returned, bad;
};

static int ring_mismatch_fn(struct tc_proc *proc, void *argp)
{
	struct ring_mismatch_arg *a = argp;
	const struct tc_coll_opts shm = {.alg = "shm"};
	const int me = tc_rank(proc), p = tc_size(proc);
	unsigned char b[8] = {0};
	const int bcasts = (me == 0) != a->flip;
	int err = bcasts ? tc_bcast(proc, b, sizeof b, TC_BYTE, 0, &shm) : tc_barrier(proc, &shm);
	if (me == 0 && !a->flip) {
		/* The root returned at once; it stays in the team until the
		 * others have seen the other call. */
		if (err)
			atomic_fetch_add(&a->bad, 1);
		for (int i = 0; i < 5000 && atomic_load(&a->returned) < p - 1; i++) {
			struct timespec ts = {0, 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		return 0;
	}
	if (err != TC_EMISMATCH && err != TC_EABORTED)
		atomic_fetch_add(&a->bad, 1);
	atomic_fetch_add(&a->returned, 1);
	return 0;
}

Test(shm, bcast_ring_mismatch, .timeout = 120)
{
	for (int flip = 0; flip < 2; flip++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = "complete:3";
		cfg.timeout_ms = 20000;
		cfg.no_mismatch_check = 1;
		struct tc_team *team = NULL;
		cr_assert_eq(tc_team_create(&cfg, &team), 0);
		struct ring_mismatch_arg a = {.flip = flip};
		const int err = tc_run(team, ring_mismatch_fn, &a);
		cr_assert(err == 0 || err == TC_EABORTED || err == TC_EMISMATCH, "flip %d: %s",
		          flip, tc_strerror(err));
		cr_assert_eq(atomic_load(&a.bad), 0, "flip %d", flip);
		cr_assert_eq(atomic_load(&a.returned), flip ? 3 : 2, "flip %d", flip);
		tc_team_destroy(team);
	}
}

/* ---- alltoall and allgather across the flag's and the area's bounds --------- */

struct a2a_arg {
	int nsizes;
	size_t sizes[8]; /* alltoall block bytes */
	atomic_int bad;
	char msg[200];
};

/* Byte i of rank r's block for rank j at call it: every call's data differ,
 * so that a block read from a parity's earlier call shows. */
static unsigned char a2a_byte(int r, int j, size_t i, int it)
{
	return (unsigned char)(r * 131 + j * 31 + (int)i * 7 + it * 17 + (int)(i >> 8) * 3 + 1);
}

static void a2a_fail(struct a2a_arg *a, const char *what, int me, int it, size_t m, int err)
{
	if (atomic_fetch_add(&a->bad, 1) == 0)
		snprintf(a->msg, sizeof a->msg, "rank %d call %d %s m=%zu: %s", me, it, what, m,
		         err ? tc_strerror(err) : "wrong result");
}

/* One call, checked: alltoall (a2a) or allgather of m bytes per block;
 * OUT has guard bytes on either side.  Returns 0 or -1. */
static int a2a_call(struct tc_proc *proc, struct a2a_arg *a, int a2a, size_t m, int it,
                    unsigned char *in, unsigned char *out)
{
	const int p = tc_size(proc), me = tc_rank(proc);
	const size_t nout = (size_t)p * m;
	for (int j = 0; j < (a2a ? p : 1); j++)
		for (size_t i = 0; i < m; i++)
			in[(size_t)j * m + i] = a2a_byte(me, a2a ? j : 0, i, it);
	memset(out, 0xa5, nout + 128);
	struct tc_coll_opts o = {.alg = "shm"};
	int err = a2a ? tc_alltoall(proc, in, out + 64, m, TC_BYTE, &o)
	              : tc_allgather(proc, in, out + 64, m, TC_BYTE, &o);
	const char *what = a2a ? "alltoall" : "allgather";
	if (err) {
		a2a_fail(a, what, me, it, m, err);
		return -1;
	}
	for (int r = 0; r < p; r++)
		for (size_t i = 0; i < m; i++)
			if (out[64 + (size_t)r * m + i] != a2a_byte(r, a2a ? me : 0, i, it)) {
				a2a_fail(a, what, me, it, m, 0);
				return -1;
			}
	for (size_t i = 0; i < 64; i++)
		if (out[i] != 0xa5 || out[64 + nout + i] != 0xa5) {
			a2a_fail(a, "guard byte written by", me, it, m, 0);
			return -1;
		}
	for (int j = 0; j < (a2a ? p : 1); j++)
		for (size_t i = 0; i < m; i++)
			if (in[(size_t)j * m + i] != a2a_byte(me, a2a ? j : 0, i, it)) {
				a2a_fail(a, "input written by", me, it, m, 0);
				return -1;
			}
	return 0;
}

/* Each size 6 calls back to back (a parity's data rewritten while a late
 * reader may still read the other's), then the sizes in turn, so that the
 * flag, the area and IN follow each other; allgathers in between. */
static int a2a_fn(struct tc_proc *proc, void *argp)
{
	struct a2a_arg *a = argp;
	const int p = tc_size(proc);
	size_t most = 0;
	for (int s = 0; s < a->nsizes; s++)
		most = a->sizes[s] > most ? a->sizes[s] : most;
	if (most < AREA_BYTES + 1)
		most = AREA_BYTES + 1;
	unsigned char *in = malloc((size_t)p * most + 1), *out = malloc((size_t)p * most + 129);
	int it = 0;
	for (int s = 0; s < a->nsizes && !atomic_load(&a->bad); s++)
		for (int n = 0; n < 6; n++, it++)
			if (a2a_call(proc, a, 1, a->sizes[s], it, in, out))
				goto done;
	const size_t ag[] = {FLAG_BYTES, FLAG_BYTES + 1, AREA_BYTES / (size_t)p,
	                     AREA_BYTES / (size_t)p + 1};
	for (int n = 0; n < 4 * a->nsizes && !atomic_load(&a->bad); n++, it++) {
		if (a2a_call(proc, a, 1, a->sizes[n % a->nsizes], it, in, out))
			goto done;
		if (n % 3 == 0 && a2a_call(proc, a, 0, ag[n / 3 % 4], it, in, out))
			goto done;
	}
done:
	free(in);
	free(out);
	return 0;
}

/* The alltoall block sizes of team size p: nothing, a byte, the most the
 * flag carries and one more, the most the area holds and one more, and a
 * size through IN. */
static int a2a_sizes(int p, size_t *sizes)
{
	const size_t want[] = {0,
	                       1,
	                       FLAG_BYTES / p,
	                       FLAG_BYTES / p + 1,
	                       AREA_BYTES / p,
	                       AREA_BYTES / p + 1,
	                       2 * AREA_BYTES / p + 3};
	int n = 0;
	for (int i = 0; i < 7; i++) {
		int dup = 0;
		for (int j = 0; j < n; j++)
			dup |= sizes[j] == want[i];
		if (!dup)
			sizes[n++] = want[i];
	}
	return n;
}

static void a2a_bounds(const int *ps, int nps, int execs)
{
	for (int k = 0; k < nps; k++) {
		if (tc_test_p_skipped(ps[k]))
			continue;
		for (int fib = 0; fib < 2; fib++) {
			if (!(execs & (1 << fib)))
				continue;
			struct tc_team *team =
			        shm_team(ps[k], fib ? TC_EXEC_FIBRES : TC_EXEC_THREADS, TC_MODE_NATIVE);
			for (int run = 0; run < 2; run++) { /* a second run of the same team */
				struct a2a_arg a = {.bad = 0};
				a.nsizes = a2a_sizes(ps[k], a.sizes);
				cr_assert_eq(tc_run(team, a2a_fn, &a), 0);
				cr_assert_eq(atomic_load(&a.bad), 0, "p=%d fibres %d run %d: %s",
				             ps[k], fib, run, a.msg);
			}
			tc_team_destroy(team);
		}
	}
}

/* Every p of the matrix, threads and fibres. */
Test(shm, alltoall_bounds, .timeout = 600)
{
	a2a_bounds(tc_test_ps, TC_TEST_NPS, 3);
}

/* The same on small teams of threads (the race suite runs this one). */
Test(shm, alltoall_bounds_small_p, .timeout = 300)
{
	static const int ps[] = {2, 3, 5, 8};
	a2a_bounds(ps, 4, 1);
}

/* ---- allreduce by slices: buffers reused right after the return ------------ */

/* The largest slice (bytes) an owner keeps in its slice buffer rather than
 * its OUT (lib/coll/shm.h: TC__SHM_SLICE). */
enum { SLICE_BYTES = 65536 };

/* The argument of the reuse tests (allreduce; gather, scatter,
 * reduce_scatter): sizes, calls, the first failure. */
struct reuse_arg {
	int nsizes;
	size_t counts[12]; /* doubles per rank or per block */
	int iters;         /* calls per size, or rounds over the sizes */
	atomic_int bad;
	char msg[200];
};

/* Runs fn over teams of every p of ps (threads: execs bit 0, fibres: bit 1),
 * twice per team, with the sizes counts_of gives for p. */
static void reuse_teams(const int *ps, int nps, int execs, int iters,
                        int (*fn)(struct tc_proc *, void *), int (*counts_of)(int, size_t *))
{
	for (int k = 0; k < nps; k++) {
		if (tc_test_p_skipped(ps[k]))
			continue;
		for (int fib = 0; fib < 2; fib++) {
			if (!(execs & (1 << fib)))
				continue;
			struct tc_team *team =
			        shm_team(ps[k], fib ? TC_EXEC_FIBRES : TC_EXEC_THREADS, TC_MODE_NATIVE);
			for (int run = 0; run < 2; run++) { /* a second run of the same team */
				struct reuse_arg a = {.bad = 0, .iters = iters};
				a.nsizes = counts_of(ps[k], a.counts);
				cr_assert_eq(tc_run(team, fn, &a), 0);
				cr_assert_eq(atomic_load(&a.bad), 0, "p=%d fibres %d run %d: %s",
				             ps[k], fib, run, a.msg);
			}
			tc_team_destroy(team);
		}
	}
}

/* Element i of rank r's input at call it: inexact quotients of changing
 * magnitude, so that a sum in another order, or an element of another
 * call, shows in the bits. */
static double ar_x(int r, size_t i, int it)
{
	return (double)((r * 131 + (int)(i % 4093) * 7 + it * 17) % 1009 + 1) /
	       (double)(r % 7 + 3) * (double)(1 << ((r + it) % 9));
}

static void ar_fail(struct reuse_arg *a, const char *what, int me, int it, size_t n, size_t at, int err)
{
	if (atomic_fetch_add(&a->bad, 1) == 0)
		snprintf(a->msg, sizeof a->msg, "rank %d call %d %s count %zu (element %zu): %s",
		         me, it, what, n, at, err ? tc_strerror(err) : "wrong result");
}

/* Every size `iters` calls back to back, alternately in place, with one
 * pair of buffers: right after each return the rank checks OUT against
 * the sum in rank order, bit for bit, and overwrites IN and OUT at once (a
 * peer still reading either would copy the new bytes); one rank per call
 * enters late.  Then the sizes in turn, so that slices in the buffers and
 * in OUT follow each other. */
static int ar_fn(struct tc_proc *proc, void *argp)
{
	struct reuse_arg *a = argp;
	const int p = tc_size(proc), me = tc_rank(proc);
	size_t most = 0;
	for (int s = 0; s < a->nsizes; s++)
		most = a->counts[s] > most ? a->counts[s] : most;
	double *in = malloc((most + 1) * sizeof *in), *out = malloc((most + 1) * sizeof *out);
	const struct tc_coll_opts o = {.alg = "shm"};
	const int ncalls = a->nsizes * a->iters * 2;
	for (int it = 0; it < ncalls && !atomic_load(&a->bad); it++) {
		const int phase2 = it >= ncalls / 2;
		const size_t n = a->counts[phase2 ? it % a->nsizes : it / a->iters % a->nsizes];
		const int ip = it & 1;
		double *src = ip ? out : in;
		for (size_t i = 0; i < n; i++)
			src[i] = ar_x(me, i, it);
		if (!ip)
			for (size_t i = 0; i < n; i++)
				out[i] = -1.0;
		if (me == it % p)
			for (int y = 0; y < 3; y++)
				sched_yield();
		int err = tc_allreduce(proc, ip ? TC_IN_PLACE : in, out, n, TC_DOUBLE, TC_OP_SUM, &o);
		if (err) {
			ar_fail(a, "allreduce", me, it, n, 0, err);
			break;
		}
		size_t bad_at = n;
		for (size_t i = 0; i < n && bad_at == n; i++) {
			double want = ar_x(0, i, it);
			for (int r = 1; r < p; r++)
				want = want + ar_x(r, i, it);
			if (memcmp(&want, &out[i], sizeof want))
				bad_at = i;
		}
		if (bad_at != n) {
			ar_fail(a, ip ? "allreduce in place" : "allreduce", me, it, n, bad_at, 0);
			break;
		}
		/* The caller owns both buffers again. */
		memset(in, 0x5a, (most + 1) * sizeof *in);
		memset(out, 0xa5, (most + 1) * sizeof *out);
	}
	free(in);
	free(out);
	return 0;
}

/* The counts of team size p: empty slices (count < p), small slices, the
 * largest slice at the bound of the slice buffer and an element above it
 * for rank 0 only (owners of both kinds in one call), every slice above
 * it; the large ones only on small teams. */
static int ar_counts(int p, size_t *counts)
{
	const size_t per = SLICE_BYTES / sizeof(double);
	int n = 0;
	counts[n++] = 0;
	counts[n++] = 1;
	counts[n++] = (size_t)p + 3;
	counts[n++] = 1000;
	if (p <= 5) {
		counts[n++] = (size_t)p * per;
		counts[n++] = (size_t)p * per + 1;
		counts[n++] = 2 * (size_t)p * per + 5;
	}
	return n;
}

static void ar_reuse(const int *ps, int nps, int execs, int iters)
{
	reuse_teams(ps, nps, execs, iters, ar_fn, ar_counts);
}

/* Every p of the matrix, threads and fibres. */
Test(shm, allreduce_reuse, .timeout = 600)
{
	ar_reuse(tc_test_ps, TC_TEST_NPS, 3, 4);
}

/* Small teams of threads, more calls (the race suite runs this one). */
Test(shm, allreduce_reuse_small_p, .timeout = 300)
{
	static const int ps[] = {2, 3, 5};
	ar_reuse(ps, 3, 1, 8);
}

/* ---- gather, scatter, reduce_scatter: buffers reused right after the return */

static void rooted_fail(struct reuse_arg *a, const char *what, int me, int it, size_t n, int root, int err)
{
	if (atomic_fetch_add(&a->bad, 1) == 0)
		snprintf(a->msg, sizeof a->msg, "rank %d call %d %s count %zu root %d: %s", me, it,
		         what, n, root, err ? tc_strerror(err) : "wrong result");
}

/* Every size, each of the three collectives with a rotating root,
 * alternately in place: right after each return the rank checks OUT (the
 * reduce_scatter's block against the sum in rank order of ar_x()'s
 * inexact values, bit for bit) and overwrites IN and OUT at once, so that
 * a peer still reading either would copy the new bytes; one rank per call
 * enters late.  Element i of rank r's p blocks at call it: ar_x(r, i, it). */
static int rooted_fn(struct tc_proc *proc, void *argp)
{
	struct reuse_arg *a = argp;
	const int p = tc_size(proc), me = tc_rank(proc);
	size_t most = 0;
	for (int s = 0; s < a->nsizes; s++)
		most = a->counts[s] > most ? a->counts[s] : most;
	const size_t cap = (most * (size_t)p + 1) * sizeof(double);
	double *in = malloc(cap), *out = malloc(cap);
	const struct tc_coll_opts o = {.alg = "shm"};
	int it = 0;
	for (int round = 0; round < a->iters; round++)
		for (int s = 0; s < a->nsizes; s++)
			for (int k = 0; k < 3 && !atomic_load(&a->bad); k++, it++) {
				const size_t n = a->counts[s], np = n * (size_t)p;
				const int root = it % p, ip = (it / 3) & 1;
				const int is_root = me == root;
				for (size_t i = 0; i < np; i++)
					in[i] = ar_x(me, i, it);
				for (size_t i = 0; i < np; i++)
					out[i] = -1.0;
				if (me == (it + 1) % p)
					for (int y = 0; y < 3; y++)
						sched_yield();
				int err;
				const char *what;
				if (k == 0) {
					what = "gather";
					/* In place: the root's block already in OUT. */
					if (ip && is_root)
						memcpy(out + (size_t)root * n, in, n * sizeof *in);
					err = tc_gather(proc, ip && is_root ? TC_IN_PLACE : in, out,
					                n, TC_DOUBLE, root, &o);
				} else if (k == 1) {
					what = "scatter";
					err = tc_scatter(proc, is_root ? in : NULL,
					                 ip && is_root ? (void *)TC_IN_PLACE : out,
					                 n, TC_DOUBLE, root, &o);
				} else {
					what = "reduce_scatter";
					if (ip)
						memcpy(out, in, np * sizeof *in);
					err = tc_reduce_scatter(proc, ip ? TC_IN_PLACE : in, out, n,
					                        TC_DOUBLE, TC_OP_SUM, &o);
				}
				if (err) {
					rooted_fail(a, what, me, it, n, root, err);
					break;
				}
				int ok = 1;
				if (k == 0 && is_root) {
					for (int r = 0; r < p && ok; r++)
						for (size_t i = 0; i < n && ok; i++) {
							const double want = ar_x(r, i, it);
							ok = !memcmp(&want, &out[(size_t)r * n + i],
							             sizeof want);
						}
				} else if (k == 1 && !(ip && is_root)) {
					for (size_t i = 0; i < n && ok; i++) {
						const double want = ar_x(root, (size_t)me * n + i, it);
						ok = !memcmp(&want, &out[i], sizeof want);
					}
				} else if (k == 2) {
					for (size_t i = 0; i < n && ok; i++) {
						const size_t at = (size_t)me * n + i;
						double want = ar_x(0, at, it);
						for (int r = 1; r < p; r++)
							want = want + ar_x(r, at, it);
						ok = !memcmp(&want, &out[i], sizeof want);
					}
				}
				if (!ok) {
					rooted_fail(a, what, me, it, n, root, 0);
					break;
				}
				/* The caller owns both buffers again. */
				memset(in, 0x5a, cap);
				memset(out, 0xa5, cap);
			}
	free(in);
	free(out);
	return 0;
}

/* The block counts (doubles) of team size p: nothing, one, the most the
 * flag carries and one more (gather publishes a block, scatter and
 * reduce_scatter p blocks), the most the areas hold (p blocks of 1 KiB
 * in all) and one more, and a size through the buffers. */
static int rooted_counts(int p, size_t *counts)
{
	const size_t flag = FLAG_BYTES / sizeof(double), area = AREA_BYTES / sizeof(double);
	const size_t want[] = {0,
	                       1,
	                       flag,
	                       flag + 1,
	                       flag / (size_t)p,
	                       flag / (size_t)p + 1,
	                       area / (size_t)p,
	                       area / (size_t)p + 1,
	                       2 * area / (size_t)p + 3};
	int n = 0;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		int dup = 0;
		for (int j = 0; j < n; j++)
			dup |= counts[j] == want[i];
		if (!dup)
			counts[n++] = want[i];
	}
	return n;
}

static void rooted_reuse(const int *ps, int nps, int execs, int iters)
{
	reuse_teams(ps, nps, execs, iters, rooted_fn, rooted_counts);
}

/* Every p of the matrix, threads and fibres. */
Test(shm, rooted_reuse, .timeout = 600)
{
	rooted_reuse(tc_test_ps, TC_TEST_NPS, 3, 2);
}

/* Small teams of threads, more calls (the race suite runs this one). */
Test(shm, rooted_reuse_small_p, .timeout = 300)
{
	static const int ps[] = {2, 3, 5};
	rooted_reuse(ps, 3, 1, 4);
}

/* The staged reductions (TC__SHM_STAGE): on a team whose waiters spin,
 * the counts of rooted_counts() and of ar_counts(), and those whose staged
 * operands are just within the stage and just beyond it (reduce_scatter:
 * blocks of (p - 1) m bytes either side of TC__SHM_STAGE; allreduce by
 * slices: slices likewise), each result bit for bit the sum in rank
 * order, the buffers overwritten right after every return. */
static size_t stage_block(int p)
{
	return TC__SHM_STAGE / (size_t)(p - 1) / sizeof(double);
}

static int staged_rooted_counts(int p, size_t *counts)
{
	int n = rooted_counts(p, counts);
	counts[n++] = stage_block(p);
	counts[n++] = stage_block(p) + 1;
	return n;
}

static int staged_ar_counts(int p, size_t *counts)
{
	int n = ar_counts(p, counts);
	counts[n++] = (size_t)p * stage_block(p);
	counts[n++] = (size_t)p * (stage_block(p) + 1);
	return n;
}

Test(shm, staged_reductions, .timeout = 300)
{
	static const int ps[] = {3, 5};
	cr_assert(!tc__shm_stages(2, 8), "one peer: nothing to stage");
	cr_assert(tc__shm_stages(3, 8) && !tc__shm_stages(3, 0));
	cr_assert(tc__shm_stages(5, TC__SHM_STAGE / 4) && !tc__shm_stages(5, TC__SHM_STAGE / 4 + 1));
	team_spin_ns = 20000;
	reuse_teams(ps, 2, 1, 2, rooted_fn, staged_rooted_counts);
	reuse_teams(ps, 2, 1, 2, ar_fn, staged_ar_counts);
	team_spin_ns = 0;
}

/* A bcast whose root copies the tail of each reader's message itself
 * (lib/coll/shm_flat.c, tc__shm_bcast_cut()): the sizes on both sides of
 * TC__SHM_HELP_MIN, one not a multiple of a cache line, one of 1 MiB and
 * more; the root rotating, one rank late at each call; right after each
 * return a rank checks its buffer and overwrites it, so that a root
 * returning while a reader still copies, or a reader returning before the
 * root's copy into its buffer is over, shows; a small allgather between
 * the bcasts moves the flags' blocks on. */
static const size_t help_bytes[] = {TC__SHM_HELP_MIN - 8, TC__SHM_HELP_MIN, TC__SHM_HELP_MIN + 8,
                                    65536 + 40 + 3, ((size_t)1 << 20) + 24};
#define NHELP (sizeof help_bytes / sizeof help_bytes[0])

static unsigned char help_byte(int it, size_t i)
{
	return (unsigned char)((i * 131 + (size_t)it * 29 + i / 4096) % 251 + 1);
}

static int help_fn(struct tc_proc *proc, void *argp)
{
	struct reuse_arg *a = argp;
	const int p = tc_size(proc), me = tc_rank(proc);
	unsigned char *buf = malloc(help_bytes[NHELP - 1]);
	uint64_t *ag = malloc((size_t)p * sizeof *ag);
	const struct tc_coll_opts o = {.alg = "shm"};
	int it = 0;
	for (int round = 0; round < a->iters && buf && ag; round++)
		for (size_t s = 0; s < NHELP && !atomic_load(&a->bad); s++, it++) {
			const size_t n = help_bytes[s];
			const int root = it % p;
			for (size_t i = 0; i < n; i++)
				buf[i] = me == root ? help_byte(it, i) : 0xee;
			if (me == (it + 1) % p)
				for (int y = 0; y < 3; y++)
					sched_yield();
			int err = tc_bcast(proc, buf, n, TC_BYTE, root, &o);
			size_t bad = n;
			for (size_t i = 0; !err && i < n && bad == n; i++)
				if (buf[i] != help_byte(it, i))
					bad = i;
			if (err || bad < n) {
				if (atomic_fetch_add(&a->bad, 1) == 0)
					snprintf(a->msg, sizeof a->msg,
					         "rank %d call %d bcast of %zu bytes from %d: %s at byte %zu",
					         me, it, n, root, err ? tc_strerror(err) : "wrong", bad);
				break;
			}
			memset(buf, 0x5a, n); /* the caller owns it again */
			const uint64_t mine = (uint64_t)it << 8 | (uint64_t)me;
			if ((err = tc_allgather(proc, &mine, ag, sizeof mine, TC_BYTE, &o)) != 0) {
				if (atomic_fetch_add(&a->bad, 1) == 0)
					snprintf(a->msg, sizeof a->msg, "rank %d call %d allgather: %s",
					         me, it, tc_strerror(err));
				break;
			}
			for (int r = 0; r < p; r++)
				if (ag[r] != ((uint64_t)it << 8 | (uint64_t)r) &&
				    atomic_fetch_add(&a->bad, 1) == 0)
					snprintf(a->msg, sizeof a->msg,
					         "rank %d call %d allgather: wrong", me, it);
		}
	if ((!buf || !ag) && atomic_fetch_add(&a->bad, 1) == 0)
		snprintf(a->msg, sizeof a->msg, "out of memory");
	free(buf);
	free(ag);
	return 0;
}

static int help_counts(int p, size_t *counts)
{
	(void)p;
	counts[0] = 0; /* the sizes are help_bytes[] */
	return 1;
}

/* The split's offset against its closed form, m 5 (p - 1) / (5 (p - 1) +
 * 4) rounded up to a cache line, computed here in long double; none (m)
 * outside 2 .. TC__SHM_HELP_MAX_P ranks or below TC__SHM_HELP_MIN bytes. */
Test(shm, bcast_help_cut, .timeout = 30)
{
	static const uint64_t ms[] = {TC__SHM_HELP_MIN,         TC__SHM_HELP_MIN + 1,
	                              65536 + 40 + 3,           (uint64_t)1 << 20,
	                              ((uint64_t)1 << 20) + 24, (uint64_t)3 << 30,
	                              ((uint64_t)1 << 40) + 777};
	for (int p = 1; p <= TC__SHM_HELP_MAX_P + 2; p++)
		for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
			const uint64_t m = ms[i], cut = tc__shm_bcast_cut(p, m);
			if (p < 2 || p > TC__SHM_HELP_MAX_P) {
				cr_assert_eq(cut, m, "p=%d m=%" PRIu64, p, m);
				continue;
			}
			const long double n = 5.0L * (p - 1), x = (long double)m * n / (n + 4);
			uint64_t want = (uint64_t)ceill(x / 64) * 64;
			cr_assert_eq(cut, want, "p=%d m=%" PRIu64 ": %" PRIu64 ", not %" PRIu64, p,
			             m, cut, want);
			cr_assert(cut % 64 == 0 && cut > 0 && cut < m);
		}
	cr_assert_eq(tc__shm_bcast_cut(2, TC__SHM_HELP_MIN - 1), TC__SHM_HELP_MIN - 1);
	cr_assert_eq(tc__shm_bcast_cut(3, 0), 0);
}

/* p = 5 is beyond the help: the same calls the plain way beside it. */
Test(shm, bcast_helped_reuse, .timeout = 300)
{
	static const int ps[] = {2, 3, 4, 5};
	reuse_teams(ps, 4, 3, 3, help_fn, help_counts);
}

/* ---- modelled time, AUTO, mismatch ---------------------------------------- */

struct auto_arg {
	const char *alg; /* NULL: AUTO */
	enum tc_coll coll;
	int ordered; /* reduce_scatter: a non-commutative operator */
	size_t bytes;
	char got[32];
	uint64_t modelled_ps;
	int err;
};

/* x (+) y = x: associative, not commutative. */
static void first_fn(const void *in, void *inout, size_t count, enum tc_dtype dt, void *ctx)
{
	(void)ctx;
	memcpy(inout, in, count * tc_dtype_size(dt));
}
static const struct tc_user_op first_op = {first_fn, NULL, 0};

static int auto_fn(struct tc_proc *proc, void *argp)
{
	struct auto_arg *a = argp;
	const int p = tc_size(proc);
	unsigned char *in = calloc(a->bytes * (size_t)p + 8, 1);
	unsigned char *out = calloc(a->bytes * (size_t)p + 8, 1);
	struct tc_coll_opts o = {.alg = a->alg};
	size_t n = a->bytes;
	int err = 0;
	switch (a->coll) {
	case TC_COLL_BCAST:
		err = tc_bcast(proc, out, n, TC_BYTE, 0, &o);
		break;
	case TC_COLL_ALLREDUCE:
		err = tc_allreduce(proc, in, out, n / 8, TC_DOUBLE, TC_OP_SUM, &o);
		break;
	case TC_COLL_BARRIER:
		err = tc_barrier(proc, &o);
		break;
	case TC_COLL_ALLGATHER:
		err = tc_allgather(proc, in, out, n, TC_BYTE, &o);
		break;
	case TC_COLL_ALLTOALL:
		err = tc_alltoall(proc, in, out, n, TC_BYTE, &o);
		break;
	case TC_COLL_GATHER:
		err = tc_gather(proc, in, out, n, TC_BYTE, 0, &o);
		break;
	case TC_COLL_SCATTER:
		err = tc_scatter(proc, in, out, n, TC_BYTE, 0, &o);
		break;
	case TC_COLL_REDUCE_SCATTER:
		o.user_op = a->ordered ? &first_op : NULL;
		err = tc_reduce_scatter(proc, in, out, n / 8, TC_DOUBLE,
		                        a->ordered ? TC_OP_USER : TC_OP_SUM, &o);
		break;
	default:
		err = TC_EINVAL;
		break;
	}
	if (tc_rank(proc) == 0) {
		struct tc_coll_info info;
		tc_last_coll(proc, &info);
		snprintf(a->got, sizeof a->got, "%s", info.algorithm ? info.algorithm : "-");
		a->modelled_ps = (uint64_t)info.modelled_ps;
		a->err = err;
	}
	free(in);
	free(out);
	return 0;
}

/* A native run's modelled time is the schedule's (the ranks start
 * together): the prediction's, and tc_last_coll's. */
Test(shm, modelled_equals_prediction, .timeout = 120)
{
	static const int ps[] = {2, 5, 13}; /* 13: two groups of shm_tree */
	for (int k = 0; k < 3; k++) {
		struct tc_team *team = shm_team(ps[k], TC_EXEC_THREADS, TC_MODE_NATIVE);
		for (int i = 0; i < NSHM; i++) {
			struct auto_arg a = {.alg = shm_algs[i].alg, .coll = shm_algs[i].coll, .bytes = 64};
			cr_assert_eq(tc_run(team, auto_fn, &a), 0);
			cr_assert_eq(a.err, 0, "%s", tc_strerror(a.err));
			struct tc_prediction pr;
			struct tc_model md;
			tc_model_default(&md);
			cr_assert_eq(tc_predict(tc_team_topo(team), &md, a.coll, a.alg,
			                        a.coll == TC_COLL_BARRIER ? 0 : 64,
			                        a.coll == TC_COLL_ALLREDUCE || a.coll == TC_COLL_REDUCE_SCATTER
			                                ? 8
			                                : 1,
			                        0, 0, &pr),
			             0);
			cr_assert_eq(a.modelled_ps, (uint64_t)pr.modelled_ps, "p=%d %s %s", ps[k],
			             tc_coll_name(a.coll), a.alg);
			struct tc_run_info ri;
			tc_team_last_run(team, &ri);
			cr_assert_eq((uint64_t)ri.makespan_ps, (uint64_t)pr.modelled_ps,
			             "p=%d %s %s", ps[k], tc_coll_name(a.coll), a.alg);
		}
		tc_team_destroy(team);
	}
}

/* The algorithm AUTO should take for collective coll of `bytes` on a team
 * (lib/coll/machine.c): NULL, none of the machine's own. */
static const char *auto_rule_want(const struct tc_team_info *info, int emulated, enum tc_coll coll,
                                  size_t bytes)
{
	if (emulated)
		return NULL;
	if (!info->oversubscribed)
		return coll == TC_COLL_ALLREDUCE && bytes <= 8192 ? "shm_flag" : "shm";
	if (info->exec != TC_EXEC_FIBRES)
		return NULL;
	/* The tree where more than 3 ranks share a CPU. */
	const bool crowded = info->p > 3 * info->cpus;
	if (coll == TC_COLL_BARRIER)
		return crowded ? "shm_tree" : "shm";
	if (coll == TC_COLL_ALLREDUCE)
		return bytes > 64 ? NULL : crowded ? "shm_tree" : "shm_flag";
	if ((coll == TC_COLL_BCAST && bytes <= FLAG_BYTES) || coll == TC_COLL_ALLGATHER ||
	    coll == TC_COLL_ALLTOALL || coll == TC_COLL_REDUCE_SCATTER)
		return "shm";
	return NULL;
}

/* AUTO takes them on a native team with a CPU per rank, and barrier,
 * allgather and alltoall on an oversubscribed team of fibres; never on an
 * emulated team, an oversubscribed one of threads, nor in a prediction.
 * mode 0: p = 2, native; 1: p = 2, emulated; 2: p = 64, native (fibres
 * where that oversubscribes the machine); 3: p = 64, threads. */
Test(shm, auto_rule, .timeout = 120)
{
	static const enum tc_coll colls[] = {TC_COLL_BCAST,    TC_COLL_ALLREDUCE,
	                                     TC_COLL_BARRIER,  TC_COLL_ALLGATHER,
	                                     TC_COLL_ALLTOALL, TC_COLL_GATHER,
	                                     TC_COLL_SCATTER,  TC_COLL_REDUCE_SCATTER};
	const int ncolls = (int)(sizeof colls / sizeof colls[0]);
	for (int mode = 0; mode < 4; mode++) {
		int p = mode >= 2 ? 64 : 2;
		struct tc_team *team = shm_team(p, mode == 3 ? TC_EXEC_THREADS : TC_EXEC_AUTO,
		                                mode == 1 ? TC_MODE_EMULATED : TC_MODE_NATIVE);
		struct tc_team_info info;
		tc_team_get_info(team, &info);
		for (int c = 0; c < ncolls; c++)
			for (int big = 0; big < (mode == 3 ? 1 : 3); big++) { /* 64 threads: one size */
				/* p = 2: whole vectors up to 8 KiB (machine.c). */
				static const size_t sizes[3] = {8, 8192, 65536};
				struct auto_arg a = {.coll = colls[c], .bytes = sizes[big]};
				cr_assert_eq(tc_run(team, auto_fn, &a), 0);
				cr_assert_eq(a.err, 0);
				const char *want = auto_rule_want(&info, mode == 1, colls[c], a.bytes);
				if (want)
					cr_assert_str_eq(a.got, want, "mode %d %s %zu B", mode,
					                 tc_coll_name(colls[c]), a.bytes);
				else
					cr_assert(strncmp(a.got, "shm", 3), "mode %d %s %zu B: %s",
					          mode, tc_coll_name(colls[c]), a.bytes, a.got);
				struct tc_prediction pr;
				struct tc_model md;
				tc_model_default(&md);
				cr_assert_eq(tc_predict(tc_team_topo(team), &md, colls[c], NULL, 8,
				                        colls[c] == TC_COLL_ALLREDUCE || colls[c] == TC_COLL_REDUCE_SCATTER
				                                ? 8
				                                : 1,
				                        0, 0, &pr),
				             0);
				cr_assert(strncmp(pr.algorithm, "shm", 3), "predicted %s", pr.algorithm);
			}
		/* reduce_scatter `shm` is rank-ordered: AUTO takes it for a
		 * non-commutative operator too. */
		struct auto_arg a = {.coll = TC_COLL_REDUCE_SCATTER, .ordered = 1, .bytes = 64};
		cr_assert_eq(tc_run(team, auto_fn, &a), 0);
		cr_assert_eq(a.err, 0, "%s", tc_strerror(a.err));
		if (auto_rule_want(&info, mode == 1, TC_COLL_REDUCE_SCATTER, 64))
			cr_assert_str_eq(a.got, "shm");
		else
			cr_assert(strncmp(a.got, "shm", 3), "mode %d: %s", mode, a.got);
		tc_team_destroy(team);
	}
}

/* Rank 0 broadcasts while the others gather: the gatherers fail with a
 * mismatch (or the abort it causes), none hangs; the root of a small
 * broadcast waits for nobody and may return first (as an eager send). */
static int mismatch_fn(struct tc_proc *proc, void *argp)
{
	atomic_int *bad = argp;
	struct tc_coll_opts o = {.alg = "shm"};
	unsigned char buf[64] = {0}, out[64 * 8];
	int err = tc_rank(proc) == 0 ? tc_bcast(proc, buf, 8, TC_BYTE, 0, &o)
	                             : tc_allgather(proc, buf, out, 8, TC_BYTE, &o);
	if (err != TC_EMISMATCH && err != TC_EABORTED && (err || tc_rank(proc) != 0))
		atomic_fetch_add(bad, 1);
	return 0;
}

Test(shm, mismatched_call, .timeout = 120)
{
	char spec[] = "complete:3";
	/* The library's waits, then spinning ones, whose sweeps find the
	 * root's flag of another call (tc__shm_sweep). */
	for (int spin = 0; spin < 2; spin++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = spec;
		cfg.timeout_ms = 3000;
		cfg.spin_ns = spin ? 1000000 : 0;
		struct tc_team *team = NULL;
		cr_assert_eq(tc_team_create(&cfg, &team), 0);
		atomic_int bad = 0;
		int err = tc_run(team, mismatch_fn, &bad);
		cr_assert(err == 0 || err == TC_EABORTED || err == TC_EMISMATCH, "spin %d: %s",
		          spin, tc_strerror(err));
		cr_assert_eq(atomic_load(&bad), 0, "spin %d", spin);
		tc_team_destroy(team);
	}
}

/* The first call on a new sub-team, one rank late: the other must wait
 * for it, not take the late rank's untouched flags for a word of another
 * call. */
static int late_on_dup_rank(struct tc_proc *proc, void *arg)
{
	atomic_int *bad = arg;
	for (int it = 0; it < 5; it++) {
		struct tc_proc *dup = NULL;
		int err = tc_team_dup(proc, &dup);
		if (!err && tc_rank(proc) == 1) {
			struct timespec ts = {0, 30 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		if (!err)
			err = tc_barrier(dup, NULL);
		struct tc_coll_info info = {0};
		if (!err)
			tc_last_coll(dup, &info);
		if (!err && (!info.algorithm || strcmp(info.algorithm, "shm") != 0))
			err = TC_EINVAL; /* not the algorithm this test is about */
		if (dup && tc_team_free(dup) && !err)
			err = TC_EINVAL;
		if (err) {
			atomic_fetch_add(bad, 1);
			return err;
		}
	}
	return 0;
}

/* Two ranks on threads, a wait that fails after 20 s instead of hanging. */
static struct tc_team *pair_team(void)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "complete:2";
	cfg.exec = TC_EXEC_THREADS;
	cfg.timeout_ms = 20000;
	struct tc_team *team = NULL;
	cr_assert_eq(tc_team_create(&cfg, &team), 0);
	return team;
}

Test(shm, first_call_on_a_sub_team_one_rank_late, .timeout = 120)
{
	struct tc_team *team = pair_team();
	atomic_int bad = 0;
	int err = tc_run(team, late_on_dup_rank, &bad);
	cr_assert_eq(err, 0, "%s: %s", tc_strerror(err), tc_error_detail());
	cr_assert_eq(atomic_load(&bad), 0);
	tc_team_destroy(team);
}

/* A sub-team kept across runs of its root: every start resets its call
 * sequence, and the flags its ranks wrote in the run before must not pass
 * for this run's.  Run 1 makes the sub-team and calls on it (the flags of
 * calls 0, 1, 2 written); run 2, rank 1 enters late: rank 0's barrier
 * must wait for it, and its broadcast must carry run 2's value. */
struct across_arg {
	int run;
	struct tc_proc *dup[2];
	uint64_t entered1, left0; /* run 2: rank 1 enters the barrier, rank 0 leaves it */
	int64_t got0;             /* run 2: what rank 0 received */
	atomic_int bad;
};

static int across_fn(struct tc_proc *proc, void *argp)
{
	struct across_arg *a = argp;
	const struct tc_coll_opts shm = {.alg = "shm"};
	const int me = tc_rank(proc);
	int64_t v = me == 1 ? 100 * a->run : -1;
	int err = 0;
	if (a->run == 1) {
		err = tc_team_dup(proc, &a->dup[me]);
		if (!err)
			err = tc_barrier(a->dup[me], &shm);
		if (!err)
			err = tc_bcast(a->dup[me], &v, 1, TC_INT64, 1, &shm);
		if (!err)
			err = tc_barrier(a->dup[me], &shm);
	} else {
		if (me == 1) {
			struct timespec ts = {0, 30 * 1000 * 1000};
			nanosleep(&ts, NULL);
			a->entered1 = tc_test_now_ns();
		}
		err = tc_barrier(a->dup[me], &shm);
		if (me == 0)
			a->left0 = tc_test_now_ns();
		if (!err)
			err = tc_bcast(a->dup[me], &v, 1, TC_INT64, 1, &shm);
		if (me == 0)
			a->got0 = v;
		if (!err)
			err = tc_team_free(a->dup[me]);
	}
	if (err)
		atomic_fetch_add(&a->bad, 1);
	return 0;
}

Test(shm, sub_team_across_runs, .timeout = 60)
{
	struct tc_team *team = pair_team();
	struct across_arg a = {.run = 1};
	cr_assert_eq(tc_run(team, across_fn, &a), 0);
	cr_assert_eq(atomic_load(&a.bad), 0, "run 1");
	a.run = 2;
	cr_assert_eq(tc_run(team, across_fn, &a), 0);
	cr_assert_eq(atomic_load(&a.bad), 0, "run 2");
	cr_assert(a.left0 >= a.entered1, "rank 0 left the barrier %.3f ms before rank 1 entered",
	          (double)(a.entered1 - a.left0) / 1e6);
	cr_assert_eq(a.got0, 200, "rank 0 received %lld", (long long)a.got0);
	tc_team_destroy(team);
}

/* A new sub-team's first calls: its flags start unknown.  A sub-team's run
 * bits are 0, and its freshly zeroed slots once passed for "every peer
 * done with call 0", so that a rank rewrote its block at call 2 (after a
 * call over the channels) while a late peer still read call 0's: that
 * peer's allreduce took call 2's value.  Five of sixteen fibre ranks, an
 * allreduce of each one's clock-like value (MAX) and a linear bcast in
 * turn, every result checked. */
static int fresh_fn(struct tc_proc *proc, void *argp)
{
	atomic_int *bad = argp;
	static const int mem[5] = {15, 0, 6, 9, 3};
	int pos = -1;
	for (int i = 0; i < 5; i++)
		if (mem[i] == tc_rank(proc))
			pos = i;
	for (int round = 0; round < 8; round++) {
		struct tc_proc *sub = NULL;
		int err = tc_team_split(proc, pos >= 0 ? 0 : TC_UNDEFINED, pos, NULL, &sub);
		if (err || !sub) {
			if (err)
				atomic_fetch_add(bad, 1);
			continue;
		}
		const struct tc_coll_opts flag = {.alg = "shm_flag"}, lin = {.alg = "linear"};
		unsigned char buf[64] = {0};
		for (int it = 0; it < 6 && !err; it++) {
			int64_t v = 1000 * it + tc_rank(sub), mx = -1;
			err = tc_allreduce(sub, &v, &mx, 1, TC_INT64, TC_OP_MAX, &flag);
			if (!err && mx != 1000 * it + tc_size(sub) - 1)
				atomic_fetch_add(bad, 1);
			if (!err)
				err = tc_bcast(sub, buf, sizeof buf, TC_BYTE, it % tc_size(sub), &lin);
		}
		if (err || tc_team_free(sub))
			atomic_fetch_add(bad, 1);
	}
	return 0;
}

Test(shm, sub_team_fresh_flags, .timeout = 120)
{
	for (int e = 0; e < 2; e++) {
		struct tc_team_config cfg;
		tc_team_config_default(&cfg);
		cfg.topology = "mesh:4x4";
		cfg.exec = e ? TC_EXEC_FIBRES : TC_EXEC_THREADS;
		cfg.timeout_ms = 60000;
		struct tc_team *team = NULL;
		cr_assert_eq(tc_team_create(&cfg, &team), 0);
		atomic_int bad = 0;
		cr_assert_eq(tc_run(team, fresh_fn, &bad), 0);
		cr_assert_eq(atomic_load(&bad), 0, "%s: %d wrong results or errors",
		             e ? "fibres" : "threads", atomic_load(&bad));
		tc_team_destroy(team);
	}
}

/* ---- shm_tree: the groups of the cache domains ------------------------------ */

/* Rank r's group [lo, hi) by tc__shm_tree_group() of place. */
static void tree_group(const struct tc_rank_place *place, int p, int r, int *lo, int *hi)
{
	*lo = *hi = -1;
	tc__shm_tree_group(place, p, r, lo, hi);
	cr_assert(*lo >= 0 && *lo <= r && r < *hi && *hi <= p, "p=%d rank %d: [%d, %d)", p, r, *lo, *hi);
}

/* Without a known structure (no placement, a domain unknown, one domain
 * for all): ceil(p / 8) groups of consecutive ranks, sizes within one. */
Test(shm, tree_groups_unknown_structure, .timeout = 30)
{
	struct tc_rank_place place[70];
	for (int p = 1; p <= 70; p++)
		for (int kind = 0; kind < 3; kind++) {
			for (int r = 0; r < p; r++)
				place[r] = (struct tc_rank_place){
				        .cache = kind == 1 && r == p / 2 ? -1 : 0};
			const int q = (p + 7) / 8;
			int groups = 0, smallest = p, largest = 0;
			for (int s = 0, lo, hi; s < p; s = hi, groups++) {
				tree_group(kind ? place : NULL, p, s, &lo, &hi);
				cr_assert_eq(lo, s, "p=%d: a group starts at %d", p, s);
				for (int r = lo; r < hi; r++) {
					int l2, h2;
					tree_group(kind ? place : NULL, p, r, &l2, &h2);
					cr_assert(l2 == lo && h2 == hi, "p=%d rank %d", p, r);
				}
				smallest = hi - lo < smallest ? hi - lo : smallest;
				largest = hi - lo > largest ? hi - lo : largest;
			}
			cr_assert_eq(groups, q, "p=%d kind %d: %d groups", p, kind, groups);
			cr_assert(largest <= 8 && largest - smallest <= 1, "p=%d: sizes %d..%d", p,
			          smallest, largest);
		}
}

/* The machine of tests/data/2socket-16core.xml (two L3 domains of 8 cores,
 * SMT siblings after every core): rank r of a team of p is on domain
 * (r mod 32) / 8 mod 2, so the groups are the runs of 8 ranks. */
static const int xml_ps[] = {12, 16, 40};

static struct tc_team *xml_team(int p, enum tc_exec exec)
{
	const char *dir = getenv("TC_TEST_DATA");
	cr_assert(dir, "TC_TEST_DATA is not set (run through meson test)");
	char path[1024], spec[32];
	snprintf(path, sizeof path, "%s/2socket-16core.xml", dir);
	snprintf(spec, sizeof spec, "complete:%d", p);
	setenv("TC_HWLOC_XML", path, 1);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.exec = exec;
	cfg.no_pin = 1;
	cfg.timeout_ms = 60000;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	unsetenv("TC_HWLOC_XML");
	if (err) { /* built without hwloc: the file cannot be read */
		cr_assert_eq(err, TC_EINVAL, "%s", tc_strerror(err));
		return NULL;
	}
	return team;
}

Test(shm, tree_groups_from_xml, .timeout = 60)
{
	for (int k = 0; k < 3; k++) {
		const int p = xml_ps[k];
		struct tc_team *team = xml_team(p, TC_EXEC_AUTO);
		if (!team)
			return;
		struct tc_team_info info;
		tc_team_get_info(team, &info);
		cr_assert_eq(info.cache_domains, 2);
		for (int r = 0; r < p; r++) {
			int lo, hi;
			tree_group(info.place, p, r, &lo, &hi);
			/* Runs of 8 (the last one of 12 is 8..11). */
			const int want_lo = r / 8 * 8, want_hi = want_lo + 8 < p ? want_lo + 8 : p;
			cr_assert(lo == want_lo && hi == want_hi, "p=%d rank %d: [%d, %d), not [%d, %d)",
			          p, r, lo, hi, want_lo, want_hi);
		}
		tc_team_destroy(team);
	}
	/* A domain of 20 consecutive ranks: three groups of 6, 7, 7. */
	struct tc_rank_place place[24];
	for (int r = 0; r < 24; r++)
		place[r] = (struct tc_rank_place){.cache = r < 20 ? 0 : 1};
	static const int starts[] = {0, 6, 13, 20, 24};
	for (int g = 0; g < 4; g++)
		for (int r = starts[g]; r < starts[g + 1]; r++) {
			int lo, hi;
			tree_group(place, 24, r, &lo, &hi);
			cr_assert(lo == starts[g] && hi == starts[g + 1], "rank %d: [%d, %d)", r, lo, hi);
		}
}

/* The groups a team keeps (tc__shm_new(), derived once from its
 * placement) are tc__shm_tree_group()'s: lead[] the leaders in rank order,
 * group[r] rank r's, for no placement, the placement of the two-domain
 * machine of 16 cores, and a domain of 20 ranks beside one of 4. */
static void check_kept_groups(const struct tc_rank_place *place, int p)
{
	struct tc__shm *shm = tc__shm_new(p, place);
	cr_assert(shm, "p=%d: out of memory", p);
	int j = 0;
	for (int s = 0, lo, hi; s < p; s = hi, j++) {
		tree_group(place, p, s, &lo, &hi);
		cr_assert(j < shm->ngroups && shm->lead[j] == lo && shm->lead[j + 1] == hi,
		          "p=%d group %d: not [%d, %d)", p, j, lo, hi);
		for (int r = lo; r < hi; r++)
			cr_assert_eq(shm->group[r], j, "p=%d rank %d", p, r);
	}
	cr_assert_eq(shm->ngroups, j, "p=%d: %d groups, not %d", p, shm->ngroups, j);
	cr_assert_eq(shm->lead[j], p);
	tc__shm_free(shm);
}

Test(shm, tree_groups_kept_with_team, .timeout = 60)
{
	for (int p = 1; p <= 70; p++)
		check_kept_groups(NULL, p);
	struct tc_rank_place place[24];
	for (int r = 0; r < 24; r++)
		place[r] = (struct tc_rank_place){.cache = r < 20 ? 0 : 1};
	check_kept_groups(place, 24);
	for (int k = 0; k < 3; k++) {
		struct tc_team *team = xml_team(xml_ps[k], TC_EXEC_AUTO);
		if (!team)
			return;
		struct tc_team_info info;
		tc_team_get_info(team, &info);
		check_kept_groups(info.place, xml_ps[k]);
		tc_team_destroy(team);
	}
}

/* Natively on that placement (groups other than the schedule's at p = 12,
 * 40), threads and fibres: the barrier and allreduce against the sequential
 * reference, with a non-commutative operator, and the modelled time still
 * the schedule's. */
Test(shm, tree_on_cache_domains, .timeout = 600)
{
	char msg[256];
	for (int k = 0; k < 3; k++)
		for (int fib = 0; fib < 2; fib++) {
			const int p = xml_ps[k];
			struct tc_team *team = xml_team(p, fib ? TC_EXEC_FIBRES : TC_EXEC_THREADS);
			if (!team)
				return;
			static const struct {
				enum tc_coll coll;
				size_t count;
				enum tc_dtype dt;
				enum tc_op op;
			} cases[] = {{TC_COLL_BARRIER, 0, TC_INT32, TC_OP_SUM},
			             {TC_COLL_ALLREDUCE, 1, TC_DOUBLE, TC_OP_SUM},
			             {TC_COLL_ALLREDUCE, 16, TC_INT32, TC_OP_SUM},
			             {TC_COLL_ALLREDUCE, 8, TC_UINT64, CT_OP_AFFINE},
			             {TC_COLL_ALLREDUCE, 3, TC_INT64, TC_OP_MAX}};
			for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
				for (int ip = 0; ip < 2; ip++) {
					struct ct_case c = {.coll = cases[i].coll,
					                    .alg = "shm_tree",
					                    .count = cases[i].count,
					                    .dt = cases[i].dt,
					                    .op = cases[i].op,
					                    .in_place = ip,
					                    .iters = 4,
					                    .seed = (uint64_t)(k * 10 + i)};
					int err = ct_run(team, &c, msg, sizeof msg);
					cr_assert_eq(err, 0, "p=%d fibres %d case %zu ip %d: %s", p,
					             fib, i, ip, msg);
				}
			struct auto_arg a = {.alg = "shm_tree", .coll = TC_COLL_ALLREDUCE, .bytes = 64};
			cr_assert_eq(tc_run(team, auto_fn, &a), 0);
			cr_assert_eq(a.err, 0, "%s", tc_strerror(a.err));
			struct tc_prediction pr;
			struct tc_model md;
			tc_model_default(&md);
			cr_assert_eq(tc_predict(tc_team_topo(team), &md, TC_COLL_ALLREDUCE,
			                        "shm_tree", 64, 8, 0, 0, &pr),
			             0);
			cr_assert_eq(a.modelled_ps, (uint64_t)pr.modelled_ps, "p=%d", p);
			tc_team_destroy(team);
		}
}

/* ---- AUTO on a calibrated team -------------------------------------------- */

/* A calibration written by hand: the channels one line, t_s ts ns and
 * 0.2 ns/B, t_c 0.04 ns/B, o_call 50 ns; a copy bandwidth of 20 B/ns per
 * copier at every size; a synchronised round R(q) = 100, 150, 200, 300 ns
 * at q = 2, 4, 8, 16; the pair's hand-off and that of the shared cache hc,
 * the SMT sibling's 20 ns, none measured across caches of one package, and
 * hr across packages. */
static void cal_by_hand(struct tc_calibration *c, double ts, double hc, double hr)
{
	memset(c, 0, sizeof *c);
	c->all = (struct tc_calibration_fit){.npoints = 8, .ts_ns = ts, .tw_ns_per_byte = 0.2};
	c->ts_ns = ts;
	c->tw_ns_per_byte = 0.2;
	/* Its 8 points, 8 B .. 1 MiB, one segment. */
	c->npoints = 8;
	for (int i = 0; i < 8; i++)
		c->points[i].bytes = (size_t)8 << (17 * i / 7);
	c->nsegments = 1;
	c->segments[0] = (struct tc_calibration_segment){.lo_bytes = 8,
	                                                 .hi_bytes = 1 << 20,
	                                                 .npoints = 8,
	                                                 .single_copy = 0,
	                                                 .fit = c->all};
	c->segments[0].exchange_ratio = NAN;
	c->segments[0].recv_ts_ns = c->segments[0].recv_tc_ns_per_byte = NAN;
	c->tc_ns_per_byte = 0.04;
	c->call_ns = 50;
	c->tcopy_ns_per_byte = NAN;
	c->conc_ranks = 16;
	c->ncopy_sizes = 2;
	c->copy_sizes[0] = 64 << 10;
	c->copy_sizes[1] = 4 << 20;
	c->ncopiers = 5;
	static const int k[5] = {1, 2, 4, 8, 16};
	for (int i = 0; i < 5; i++) {
		c->copiers[i] = k[i];
		c->copy_bytes_per_ns[0][i] = c->copy_bytes_per_ns[1][i] = 20.0 * k[i];
	}
	c->handoff_pair_ns = hc;
	c->handoff_ns[TC_HANDOFF_SMT] = 20;
	c->handoff_ns[TC_HANDOFF_CACHE] = hc;
	c->handoff_ns[TC_HANDOFF_PACKAGE] = NAN;
	c->handoff_ns[TC_HANDOFF_REMOTE] = hr;
	c->nsync = 4;
	static const int q[4] = {2, 4, 8, 16};
	static const double r[4] = {100, 150, 200, 300};
	for (int i = 0; i < 4; i++) {
		c->sync_ranks[i] = q[i];
		c->sync_ns[i] = r[i];
	}
}

/* AUTO's choice for a call of `bytes` on a native team with a CPU per
 * rank, placed as place, carrying cal (tc__coll_select() as the team's
 * cache calls it: g.shm set, g.cal and g.place the team's). */
static const char *auto_cal(const struct tc_topo *t, enum tc_coll coll, size_t bytes,
                            const struct tc_calibration *cal, const struct tc_rank_place *place)
{
	struct tc_model md;
	tc_model_default(&md);
	struct tc__gen g = {.coll = coll,
	                    .t = t,
	                    .p = tc_topo_nodes(t),
	                    .bytes = bytes,
	                    .esize = 8,
	                    .md = &md,
	                    .shm = 1,
	                    .cal = cal,
	                    .place = place,
	                    .me = -1};
	const struct tc__alg *a = NULL;
	struct tc__sched s;
	tc_time_t ms = 0;
	int err = tc__coll_select(&g, NULL, 0, &a, &s, &ms);
	cr_assert_eq(err, 0, "%s: %s", tc_strerror(err), tc_error_detail());
	tc__sched_free(&s);
	return a->name;
}

/* The calibrated prices of barrier at p = 16 on the placement of
 * tests/data/2socket-16core.xml (two packages of one cache domain of 8
 * cores, ranks 0..7 and 8..15), channels at t_s = 1.5 us (docs/
 * calibration.md gives the formulas):
 *   shm       50 + R(16) + 2 h,   h the farthest pair's (15 flags swept,
 *                                 in waves of 10)
 *   shm_tree  50 + (R(16) + 7 hc) + (R(2) + hr) + (R(16) + hc)
 *   dissemination and the others: 4 rounds or more of 1.5 us.
 * Hand-offs across packages of 2 us, 60 ns inside a domain: the tree
 * (3230 ns against 4350); uniform hand-offs of 40 ns: the flat one (430
 * against 1110).  Without a
 * calibration AUTO takes `shm` (tc__shm_pick()).  Results stay right:
 * tree_on_cache_domains runs shm_tree on these teams. */
Test(shm, auto_calibrated_picks_by_handoff, .timeout = 60)
{
	struct tc_team *team = xml_team(16, TC_EXEC_AUTO);
	if (!team)
		return;
	struct tc_team_info info;
	tc_team_get_info(team, &info);
	cr_assert_eq(info.cache_domains, 2);
	struct tc_calibration far, flat;
	cal_by_hand(&far, 1500, 60, 2000);
	cal_by_hand(&flat, 1500, 40, 40);
	const struct tc_topo *t = tc_team_topo(team);
	cr_assert_str_eq(auto_cal(t, TC_COLL_BARRIER, 0, &far, info.place), "shm_tree");
	cr_assert_str_eq(auto_cal(t, TC_COLL_BARRIER, 0, &flat, info.place), "shm");
	cr_assert_str_eq(auto_cal(t, TC_COLL_ALLREDUCE, 8, &far, info.place), "shm_tree");
	/* No placement: every round of more than two ranks pays the farthest
	 * class, the tree's among two leaders the pair's: 50 + (300 + 7 x 2000)
	 * + (100 + 60) + (300 + 2000) = 16810 ns, above dissemination's four
	 * rounds of 1.5 us and rho(16) = 200 ns each (6850 ns), itself above
	 * the flat 50 + 300 + 2 x 2000 = 4350 ns. */
	cr_assert_str_eq(auto_cal(t, TC_COLL_BARRIER, 0, &far, NULL), "shm");
	/* Without a calibration: tc__shm_pick()'s rule. */
	cr_assert_str_eq(auto_cal(t, TC_COLL_BARRIER, 0, NULL, info.place), "shm");
	/* Beyond shm_tree's 64 bytes: not a candidate. */
	cr_assert_str_neq(auto_cal(t, TC_COLL_ALLREDUCE, 1024, &far, info.place), "shm_tree");
	tc_team_destroy(team);
}

/* A team of two ranks (a CPU each here) carrying a calibration: AUTO's
 * choice follows it, and the results are the sequential reference's.
 * Channels of 1 ns and 0.001 ns/B against a flag round of 140 ns: a
 * channel algorithm; channels of 1.5 us: `shm`.  Without a calibration:
 * `shm` whatever the channels. */
static int cal_team(int p, const struct tc_calibration *cal, struct tc_team **out)
{
	char spec[32];
	snprintf(spec, sizeof spec, "complete:%d", p);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.timeout_ms = 60000;
	cfg.calibration = cal;
	*out = NULL;
	return tc_team_create(&cfg, out);
}

Test(shm, auto_calibrated_team_runs, .timeout = 120)
{
	struct tc_calibration cheap, dear;
	cal_by_hand(&cheap, 1, 40, 40);
	cheap.segments[0].fit.tw_ns_per_byte = cheap.all.tw_ns_per_byte = cheap.tw_ns_per_byte = 0.001;
	cheap.call_ns = 0;
	cal_by_hand(&dear, 1500, 40, 40);
	const struct tc_calibration *cals[3] = {NULL, &cheap, &dear};
	char msg[256];
	for (int k = 0; k < 3; k++) {
		struct tc_team *team = NULL;
		cr_assert_eq(cal_team(2, cals[k], &team), 0, "%s", tc_error_detail());
		struct tc_team_info info;
		tc_team_get_info(team, &info);
		if (info.oversubscribed) { /* one CPU: the calibration is not used */
			tc_team_destroy(team);
			cr_skip_test("one CPU: the team is oversubscribed");
		}
		struct auto_arg a = {.alg = NULL, .coll = TC_COLL_BARRIER};
		cr_assert_eq(tc_run(team, auto_fn, &a), 0);
		cr_assert_eq(a.err, 0, "%s", tc_strerror(a.err));
		if (k == 1)
			cr_assert(strncmp(a.got, "shm", 3), "cheap channels: %s", a.got);
		else
			cr_assert_str_eq(a.got, "shm", "calibration %d", k);
		static const struct {
			enum tc_coll coll;
			size_t count;
			enum tc_dtype dt;
			enum tc_op op;
		} cases[] = {{TC_COLL_BARRIER, 0, TC_INT32, TC_OP_SUM},
		             {TC_COLL_ALLREDUCE, 1, TC_DOUBLE, TC_OP_SUM},
		             {TC_COLL_ALLREDUCE, 1000, TC_INT64, TC_OP_SUM},
		             {TC_COLL_ALLREDUCE, 8, TC_UINT64, CT_OP_AFFINE},
		             {TC_COLL_ALLGATHER, 7, TC_INT32, TC_OP_SUM},
		             {TC_COLL_ALLTOALL, 64, TC_BYTE, TC_OP_SUM},
		             {TC_COLL_BCAST, 1000, TC_BYTE, TC_OP_SUM}};
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			struct ct_case c = {.coll = cases[i].coll,
			                    .count = cases[i].count,
			                    .dt = cases[i].dt,
			                    .op = cases[i].op,
			                    .iters = 3,
			                    .seed = (uint64_t)(k * 10 + i)};
			int err = ct_run(team, &c, msg, sizeof msg);
			cr_assert_eq(err, 0, "calibration %d case %zu: %s", k, i, msg);
		}
		tc_team_destroy(team);
	}
}

/* A calibration that cannot be priced with: TC_EINVAL and a message naming
 * the field, and no team. */
Test(shm, auto_calibration_bad_input, .timeout = 30)
{
	static const struct {
		const char *field;
		int what;
	} bad[] = {{"sync_ns.2", 0},
	           {"ncopiers", 1},
	           {"segments.0.fit.ts_ns", 2},
	           {"copy_bytes_per_ns.1.4", 3},
	           {"handoff_ns.3", 4},
	           {"copiers.1", 5},
	           {"nsegments", 6},
	           {"call_ns", 7},
	           {"nflag", 8},
	           {"flag_ns.1", 9},
	           {"recv_tc_ns_per_byte", 10},
	           {"handoff_pair_ns", 11}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tc_calibration c;
		cal_by_hand(&c, 1500, 60, 2000);
		switch (bad[i].what) {
		case 0:
			c.sync_ns[2] = NAN;
			break;
		case 1:
			c.ncopiers = TC_CALIBRATE_MAX_COPIERS + 1;
			break;
		case 2:
			c.segments[0].fit.ts_ns = NAN;
			break;
		case 3:
			c.copy_bytes_per_ns[1][4] = -1;
			break;
		case 4:
			c.handoff_ns[3] = INFINITY;
			break;
		case 5:
			c.copiers[1] = 1;
			break;
		case 6:
			c.nsegments = -1;
			break;
		case 7:
			c.call_ns = -5;
			break;
		case 8:
			c.nflag = c.nsync + 1;
			break;
		case 9:
			c.nflag = 2;
			c.flag_ns[0] = 100;
			c.flag_ns[1] = 0;
			break;
		case 10:
			c.segments[0].recv_tc_ns_per_byte = -0.5;
			break;
		default:
			c.handoff_pair_ns = NAN;
			break;
		}
		struct tc_team *team = (struct tc_team *)&c;
		int err = cal_team(2, &c, &team);
		cr_assert_eq(err, TC_EINVAL, "%s: %s", bad[i].field, tc_strerror(err));
		cr_assert_null(team, "%s", bad[i].field);
		cr_assert(strstr(tc_error_detail(), bad[i].field), "%s: \"%s\"", bad[i].field,
		          tc_error_detail());
	}
	/* Not measured is not bad: no concurrency tables, NAN t_c. */
	struct tc_calibration c;
	cal_by_hand(&c, 1500, 60, 2000);
	c.conc_ranks = 0;
	c.sync_ns[0] = NAN;
	c.tc_ns_per_byte = NAN;
	struct tc_team *team = NULL;
	cr_assert_eq(cal_team(2, &c, &team), 0, "%s", tc_error_detail());
	tc_team_destroy(team);
}

/* Beyond a cache line: refused with a message, never a wrong result. */
static int big_fn(struct tc_proc *proc, void *argp)
{
	int *got = argp;
	double x[9] = {0}, y[9];
	struct tc_coll_opts o = {.alg = "shm_tree"};
	int err = tc_allreduce(proc, x, y, 9, TC_DOUBLE, TC_OP_SUM, &o);
	if (tc_rank(proc) == 0) {
		*got = err;
		if (!strstr(tc_error_detail(), "64"))
			*got = 1;
	}
	return 0;
}

Test(shm, tree_allreduce_too_big, .timeout = 60)
{
	struct tc_team *team = shm_team(3, TC_EXEC_THREADS, TC_MODE_NATIVE);
	int got = 0;
	tc_run(team, big_fn, &got);
	cr_assert_eq(got, TC_ENOTSUP, "%d: %s", got, got < 0 ? tc_strerror(got) : "no detail");
	tc_team_destroy(team);
}

/* Every rank of a refused call gets the refusal's words, not only the one
 * that built the team's entry for it while the others waited for it
 * (lib/coll/cache.c): each rank, many calls, each call's entry built anew
 * (a failed one leaves the team's table). */
static int big_every_rank(struct tc_proc *proc, void *argp)
{
	atomic_int *bad = argp;
	double x[9] = {0}, y[9];
	struct tc_coll_opts o = {.alg = "shm_tree"};
	for (int i = 0; i < 200; i++) {
		int err = tc_allreduce(proc, x, y, 9, TC_DOUBLE, TC_OP_SUM, &o);
		if (err != TC_ENOTSUP || !strstr(tc_error_detail(), "64"))
			atomic_fetch_add(bad, 1);
	}
	return 0;
}

Test(shm, refusal_detail_on_every_rank, .timeout = 60)
{
	struct tc_team *team = shm_team(8, TC_EXEC_THREADS, TC_MODE_NATIVE);
	atomic_int bad = 0;
	tc_run(team, big_every_rank, &bad);
	cr_assert_eq(atomic_load(&bad), 0, "%d calls without the refusal's detail", atomic_load(&bad));
	tc_team_destroy(team);
}
