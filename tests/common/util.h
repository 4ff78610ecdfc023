/* SPDX-License-Identifier: MIT */
/* tests/common/util.h - helpers shared by the tests: the topologies that admit
 * a given p, walks over them, deterministic random numbers, the wall clock. */
#ifndef TC_TESTS_UTIL_H
#define TC_TESTS_UTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "topocoll.h"

/* The p values of the test matrix (STYLE.md), in increasing order. */
static const int tc_test_ps_all[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 32, 64};
#define TC_TEST_PS_ALL ((int)(sizeof tc_test_ps_all / sizeof tc_test_ps_all[0]))

/* The entries of the matrix a run covers, in order: those that TC_TEST_PS
 * (a comma-separated list of p) names when it is set, else all of them.
 * ./tools/test's main stage leaves out p = 31 and 32, whose code paths
 * (prime and not, power of two and not, grids) p = 7, 13, 16 and 64 take. */
static struct {
	int ps[TC_TEST_PS_ALL];
	int n;
	pthread_once_t once;
} tc_test_matrix_ = {.once = PTHREAD_ONCE_INIT};

static inline void tc_test_matrix_init_(void)
{
	const char *s = getenv("TC_TEST_PS");
	for (int i = 0; i < TC_TEST_PS_ALL; i++) {
		int p = tc_test_ps_all[i];
		bool named = !s || !*s;
		for (const char *c = s; c && *c && !named;) {
			char *end;
			long v = strtol(c, &end, 10);
			if (end == c)
				break;
			named = v == p;
			c = *end == ',' ? end + 1 : end;
		}
		if (named)
			tc_test_matrix_.ps[tc_test_matrix_.n++] = p;
	}
	if (!tc_test_matrix_.n) /* nothing of the matrix named: its first p */
		tc_test_matrix_.ps[tc_test_matrix_.n++] = tc_test_ps_all[0];
}

static inline const int *tc_test_ps_run(void)
{
	pthread_once(&tc_test_matrix_.once, tc_test_matrix_init_);
	return tc_test_matrix_.ps;
}
/* tc_test_ps[k], k < TC_TEST_NPS: the k-th p of the run's matrix. */
#define tc_test_ps (tc_test_ps_run())

/* The largest team size a run covers: TC_TEST_PMAX when set, else every p.
 * The plain build runs the whole matrix; ./tools/test's sanitizer stages
 * (whose bugs do not depend on the team's size past a few ranks) and its
 * fibre stage (larger teams than CPUs already ran on fibres) set it. */
static inline int tc_test_pmax(void)
{
	const char *s = getenv("TC_TEST_PMAX");
	int v = s ? atoi(s) : 0;
	return v > 0 ? v : 1 << 30;
}

/* Whether a test that names its team size p skips it (tc_test_pmax()). */
static inline bool tc_test_p_skipped(int p)
{
	return p > tc_test_pmax();
}

/* How many entries of tc_test_ps the run covers: those up to
 * tc_test_pmax(), at least the first. */
static inline int tc_test_nps(void)
{
	const int *ps = tc_test_ps_run();
	int n = 1;
	while (n < tc_test_matrix_.n && ps[n] <= tc_test_pmax())
		n++;
	return n;
}
#define TC_TEST_NPS tc_test_nps()

/* Writes the specs of every topology kind that admits p nodes into
 * specs[0..n) (each up to 32 chars); returns n. */
static inline int tc_test_specs_for(int p, char specs[][32], int max)
{
	int n = 0;
#define ADD(...)                                               \
	do {                                                   \
		if (n < max)                                   \
			snprintf(specs[n++], 32, __VA_ARGS__); \
	} while (0)
	ADD("complete:%d", p);
	ADD("ring:%d", p);
	ADD("chain:%d", p);
	ADD("star:%d", p);
	ADD("tree:2:%d", p);
	ADD("tree:3:%d", p);
	if ((p & (p - 1)) == 0) {
		int d = 0;
		while ((1 << d) < p)
			d++;
		ADD("hypercube:%d", d);
	}
	int a = 1;
	for (int i = 1; i * i <= p; i++)
		if (p % i == 0)
			a = i;
	ADD("mesh:%dx%d", a, p / a);
	ADD("torus:%dx%d", a, p / a);
	if (p == 8)
		ADD("torus:2x2x2");
	if (p == 64) {
		ADD("mesh:4x4x4");
		ADD("torus:4x4x4");
	}
#undef ADD
	return n;
}

/* Hop distances from src over the neighbour lists (breadth-first search);
 * dist holds p entries, -1 for a node src cannot reach.  Returns the
 * eccentricity of src, or -1 when some node is unreachable. */
int tc_test_bfs(const struct tc_topo *t, int src, int *dist);

/* A closed walk that visits every node of a connected topology, moving only
 * along links: the depth-first tour of a BFS spanning tree (each tree edge
 * twice).  walk must hold 2p - 1 entries; returns the walk's length (nodes),
 * walk[0] = walk[len-1] = 0. */
int tc_test_tour(const struct tc_topo *t, int *walk);

/* xorshift64* */
static inline uint64_t tc_test_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 2685821657736338717ull;
}

/* A watchdog callback (tc_team_set_watchdog) that keeps the last report:
 * pass a struct tc_test_wd as its argument; read text and calls under mu. */
struct tc_test_wd {
	pthread_mutex_t mu;
	char text[16384];
	int calls;
};
void tc_test_wd_capture(void *arg, const char *report);

/* CLOCK_MONOTONIC in nanoseconds: the tests' wall clock. */
static inline uint64_t tc_test_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
