/* SPDX-License-Identifier: MIT */
/*
 * tests/test_model.c - the cost-model engine over real runs: logical clocks
 * of neighbour exchanges and routed transfers against their closed forms,
 * determinism, computation charges, emulated wall time, calibration, and the
 * checker's contention and 1-port diagnostics.
 *
 * Model of the file (unless a test says otherwise): t_s = 1000 ns,
 * t_w = 2 ns/B, t_h = 50 ns, in integer picoseconds
 *   L(m)     = t_s + m t_w             one link's share
 *   SF(m, l) = l (t_s + m t_w)         store-and-forward over l hops
 *   CT(m, l) = t_s + m t_w + l t_h     cut-through over l hops.
 * Hop counts come from a breadth-first search written here, not from the
 * topology's routing.  Sizes include 0, packet-sized and single-copy ones
 * (>= 16 KiB), so every path of the channels is under the clock.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll_internal.h"
#include "harness.h"
#include "p2p/p2p.h"
#include "sched/exec.h"
#include "sched/plan.h"
#include "sched/sched.h"
#include "topocoll.h"
#include "topocoll/calibrate.h"
#include "util.h"

#define MAXP 64
#define TS 1000000LL /* ps */
#define TW 2000LL    /* ps per byte */
#define TH 50000LL   /* ps */
#define TC 3000LL    /* ps per byte combined */

static tc_time_t Lt(uint64_t m)
{
	return TS + (tc_time_t)m * TW;
}
static tc_time_t SFt(uint64_t m, int l)
{
	return (tc_time_t)l * Lt(m);
}
static tc_time_t CTt(uint64_t m, int l)
{
	return Lt(m) + (tc_time_t)l * TH;
}
static tc_time_t maxt(tc_time_t a, tc_time_t b)
{
	return a > b ? a : b;
}

static struct tc_model mdl(enum tc_ports ports, enum tc_duplex dx, enum tc_switching sw)
{
	struct tc_model m;
	tc_model_default(&m);
	m.ts_ns = 1000.0;
	m.tw_ns = 2.0;
	m.th_ns = 50.0;
	m.tc_ns = 3.0;
	m.ports = ports;
	m.duplex = dx;
	m.switching = sw;
	return m;
}

static struct tc_team *team_new(const char *spec, const struct tc_model *md, enum tc_mode mode)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = spec;
	cfg.model = *md;
	cfg.mode = mode;
	cfg.timeout_ms = 10000;
	struct tc_team *team = NULL;
	int err = tc_team_create(&cfg, &team);
	cr_assert_eq(err, 0, "%s: %s", spec, tc_strerror(err));
	return team;
}

/* What every program records: each rank's final clock and its return. */
struct rec {
	tc_time_t clock[MAXP];
	int err[MAXP];
};

static int finish(struct rec *r, struct tc_proc *proc, int err)
{
	r->clock[tc_rank(proc)] = tc_clock(proc);
	r->err[tc_rank(proc)] = err;
	return err;
}

static void run(struct tc_team *team, tc_spmd_fn fn, void *ctx, const char *what)
{
	int err = tc_run(team, fn, ctx);
	(void)what; /* only in Criterion's message */
	cr_assert_eq(err, 0, "%s: %s", what, tc_strerror(err));
}

/* Read-only source data shared by every sender (large enough for every
 * message of the file). */
static unsigned char src_data[1 << 16];

/* ---- neighbour exchanges ---------------------------------------------- */

struct nbr_ctx {
	struct rec rec;
	int mode; /* 0: exchange with partner[r]; 1: with every neighbour */
	const int *partner;
	size_t m;
};

static int nbr_fn(struct tc_proc *proc, void *arg)
{
	struct nbr_ctx *c = arg;
	int r = tc_rank(proc), err = 0;
	if (c->mode == 0) {
		if (c->partner[r] >= 0) {
			unsigned char *rb = malloc(c->m + 1);
			size_t got = 0;
			err = tc_sendrecv(proc, c->partner[r], src_data, c->m, c->partner[r], rb,
			                  c->m, &got);
			if (!err && got != c->m)
				err = TC_EINVAL;
			free(rb);
		}
		return finish(&c->rec, proc, err);
	}
	const int *nb;
	int deg = tc_neighbors(proc, &nb);
	tc_request *rq = malloc(2 * (size_t)deg * sizeof *rq);
	unsigned char *rb = malloc((size_t)deg * c->m + 1);
	for (int i = 0; i < deg && !err; i++)
		err = tc_isend(proc, nb[i], src_data, c->m, &rq[i]);
	for (int i = 0; i < deg && !err; i++)
		err = tc_irecv(proc, nb[i], rb + (size_t)i * c->m, c->m, &rq[deg + i]);
	if (!err)
		err = tc_waitall(proc, 2 * deg, rq);
	free(rq);
	free(rb);
	return finish(&c->rec, proc, err);
}

/* A maximal matching: each rank in turn takes its smallest free neighbour. */
static void matching(const struct tc_topo *t, int *partner)
{
	int p = tc_topo_nodes(t);
	for (int u = 0; u < p; u++)
		partner[u] = -1;
	for (int u = 0; u < p; u++) {
		if (partner[u] >= 0)
			continue;
		const int *nb;
		int deg = tc_topo_neighbors(t, u, &nb);
		for (int i = 0; i < deg; i++)
			if (partner[nb[i]] < 0) {
				partner[u] = nb[i];
				partner[nb[i]] = u;
				break;
			}
	}
}

/* The clock of rank u after sending to and receiving from every neighbour
 * (sends posted first, in neighbour order), by the rules of the model:
 * all-port: L (full) or 2L (half: one resource per link for both
 * directions); one-port: the k-th send starts at kL, so the message of v
 * arrives at (index of u among v's neighbours + 1) L, and the receives take
 * the port in order of arrival, each L, after the sends under half duplex. */
static tc_time_t all_nbrs_expected(const struct tc_topo *t, int u, size_t m, int ports_all, int half)
{
	const int *nb;
	int deg = tc_topo_neighbors(t, u, &nb);
	tc_time_t L = Lt(m);
	if (ports_all)
		return half ? 2 * L : L;
	tc_time_t arr[MAXP];
	for (int i = 0; i < deg; i++)
		arr[i] = (tc_time_t)(tc_topo_neighbor_index(t, nb[i], u) + 1) * L;
	for (int i = 1; i < deg; i++) /* insertion sort */
		for (int j = i; j > 0 && arr[j] < arr[j - 1]; j--) {
			tc_time_t x = arr[j];
			arr[j] = arr[j - 1];
			arr[j - 1] = x;
		}
	tc_time_t sends = (tc_time_t)deg * L, free_at = half ? sends : 0;
	for (int i = 0; i < deg; i++)
		free_at = maxt(arr[i], free_at + L);
	return maxt(sends, free_at);
}

Test(model, neighbour_exchange_closed_form, .timeout = 240)
{
	static const int ps[] = {2, 3, 5, 8, 13, 16};
	static const size_t ms[] = {0, 1, 1000, 20000};
	for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
		char specs[16][32];
		int ns = tc_test_specs_for(ps[pi], specs, 16);
		for (int s = 0; s < ns; s++)
			for (int mi = 0; mi < 4; mi++) {
				int ports_all = mi & 1, half = mi >> 1;
				struct tc_model md =
				        mdl(ports_all ? TC_PORTS_ALL : TC_PORTS_ONE,
				            half ? TC_DUPLEX_HALF : TC_DUPLEX_FULL, TC_SWITCH_SF);
				struct tc_team *team = team_new(specs[s], &md, TC_MODE_NATIVE);
				const struct tc_topo *t = tc_team_topo(team);
				int p = tc_topo_nodes(t), partner[MAXP];
				matching(t, partner);
				for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
					struct nbr_ctx c = {.mode = 0, .partner = partner, .m = ms[k]};
					run(team, nbr_fn, &c, specs[s]);
					for (int u = 0; u < p; u++) {
						/* Full duplex: both directions at once; half: one
						 * after the other, whatever the ports. */
						tc_time_t want =
						        partner[u] < 0 ? 0 : (half ? 2 : 1) * Lt(ms[k]);
						cr_assert_eq(c.rec.clock[u], want,
						             "%s ports=%d half=%d m=%zu rank %d: %lld != %lld",
						             specs[s], ports_all, half, ms[k], u,
						             (long long)c.rec.clock[u], (long long)want);
					}
					struct tc_run_info ri;
					tc_team_last_run(team, &ri);
					cr_assert_eq(ri.makespan_ps, (half ? 2 : 1) * Lt(ms[k]));

					struct nbr_ctx a = {.mode = 1, .m = ms[k]};
					run(team, nbr_fn, &a, specs[s]);
					for (int u = 0; u < p; u++) {
						tc_time_t want = all_nbrs_expected(t, u, ms[k],
						                                   ports_all, half);
						cr_assert_eq(a.rec.clock[u], want,
						             "%s all nbrs ports=%d half=%d m=%zu rank %d: %lld != %lld",
						             specs[s], ports_all, half, ms[k], u,
						             (long long)a.rec.clock[u], (long long)want);
					}
				}
				tc_team_destroy(team);
			}
	}
}

/* ---- routed transfers -------------------------------------------------- */

struct sched_ctx {
	struct rec rec;
	const struct tc__sched *s;
	uint64_t max_bytes;
	int reps;             /* runs of the schedule in one SPMD call */
	uint64_t jitter_seed; /* non-zero: random physical delays */
};

static void combine_add(void *out, const void *left, const void *right, size_t bytes, void *ctx)
{
	(void)ctx;
	unsigned char *o = out;
	const unsigned char *a = left, *b = right;
	for (size_t k = 0; k < bytes; k++)
		o[k] = (unsigned char)(a[k] + b[k]);
}

static void jitter(uint64_t *seed)
{
	uint64_t r = tc_test_rand(seed);
	if (r % 3 == 0) {
		struct timespec ts = {0, (long)(r >> 40) % 200000};
		nanosleep(&ts, NULL);
	}
}

static int sched_fn(struct tc_proc *proc, void *arg)
{
	struct sched_ctx *c = arg;
	unsigned char *out = calloc(1, c->max_bytes + 1);
	struct tc__exec_io io = {.in = src_data, .out = out, .combine = combine_add, .tag = 0x7e01};
	uint64_t seed = c->jitter_seed * 7919 + (uint64_t)tc_rank(proc) + 1;
	int err = 0;
	for (int k = 0; k < (c->reps ? c->reps : 1) && !err; k++) {
		if (c->jitter_seed)
			jitter(&seed);
		err = tc__sched_exec(proc, c->s, &io);
	}
	free(out);
	return finish(&c->rec, proc, err);
}

static struct tc__sched one_round(int p)
{
	struct tc__sched s;
	cr_assert_eq(tc__sched_init(&s, p), 0);
	cr_assert_eq(tc__sched_round(&s), 0);
	return s;
}

static void add_xfer(struct tc__sched *s, int src, int dst, uint64_t bytes, int op)
{
	struct tc__xfer x = {.src = src,
	                     .dst = dst,
	                     .sbuf = TC__BUF_IN,
	                     .rbuf = TC__BUF_OUT,
	                     .op = (uint8_t)op,
	                     .bytes = bytes};
	cr_assert_eq(tc__sched_add(s, &x), 0);
}

/* ---- the order of a routed round's messages on each link ----------------- */

#define LEG_P 12
#define LEG_MAX 512

/* Per rank and peer: the (transfer, packet) of its out-items to the peer
 * and of its in-items from it, in plan order, and the out-items' legs. */
struct legs {
	const struct tc__sched *s;
	int nout[LEG_P][LEG_P], nin[LEG_P][LEG_P];
	int out[LEG_P][LEG_P][LEG_MAX][2], in[LEG_P][LEG_P][LEG_MAX][2];
	int leg[LEG_P][LEG_P][LEG_MAX];
	int err[LEG_P];
};

static int legs_fn(struct tc_proc *proc, void *arg)
{
	struct legs *L = arg;
	const int me = tc_rank(proc);
	const struct tc_topo *t = tc_team_topo(tc_proc_team(proc));
	const int *nb;
	tc_topo_neighbors(t, me, &nb);
	struct tc__plan *pl;
	L->err[me] = tc__plan_build(proc, L->s, NULL, 0, &pl);
	if (L->err[me])
		return 0;
	for (int i = 0; i < pl->nitems; i++) {
		const struct tc__pitem *x = &pl->it[i];
		const int peer = nb[x->nbr];
		const bool out = x->kind == TC__IT_SEND || x->kind == TC__IT_FWD_OUT;
		int *n = out ? &L->nout[me][peer] : &L->nin[me][peer];
		if (*n == LEG_MAX) {
			L->err[me] = TC_ELIMIT;
			break;
		}
		int(*slot)[2] = out ? L->out[me][peer] : L->in[me][peer];
		slot[*n][0] = x->xi;
		slot[*n][1] = x->chunk;
		if (out)
			L->leg[me][peer][*n] = x->kind == TC__IT_SEND ? 0 : x->hop;
		(*n)++;
	}
	tc__plan_free(pl);
	return 0;
}

/* A round of routed transfers (every ordered pair, in the order of a
 * direct all-to-all: distance k = 1 .. p-1, then source): on every link
 * the sender's out-items and the receiver's in-items name the same
 * transfers in the same order (the channel matches them in order), and a
 * link carries the own sends first, then the first forwards, and so on (a
 * forward waiting for its data holds up no send behind it of an earlier
 * leg).  Store-and-forward and cut-through packets. */
Test(model, routed_round_links_in_leg_order, .timeout = 120)
{
	static const char *const specs[] = {"torus:3x4",   "mesh:3x4", "ring:12",
	                                    "hypercube:3", "chain:5",  "tree:2:7"};
	for (size_t si = 0; si < sizeof specs / sizeof specs[0]; si++)
		for (int ct = 0; ct < 2; ct++) {
			struct tc_model md =
			        mdl(TC_PORTS_ALL, TC_DUPLEX_FULL, ct ? TC_SWITCH_CT : TC_SWITCH_SF);
			md.mu = 64;
			struct tc_team *team = team_new(specs[si], &md, TC_MODE_NATIVE);
			const int p = tc_team_size(team);
			cr_assert(p <= LEG_P);
			struct tc__sched s = one_round(p);
			for (int k = 1; k < p; k++)
				for (int i = 0; i < p; i++)
					add_xfer(&s, i, (i + k) % p, ct ? 200 : 8, TC__XOP_COPY);
			struct legs *L = calloc(1, sizeof *L);
			L->s = &s;
			cr_assert_eq(tc_run(team, legs_fn, L), 0);
			for (int a = 0; a < p; a++) {
				cr_assert_eq(L->err[a], 0, "%s rank %d: %s", specs[si], a,
				             tc_err_name(L->err[a]));
				for (int b = 0; b < p; b++) {
					cr_assert_eq(L->nout[a][b], L->nin[b][a],
					             "%s %d -> %d: %d sent, %d taken", specs[si], a,
					             b, L->nout[a][b], L->nin[b][a]);
					for (int k = 0; k < L->nout[a][b]; k++) {
						cr_assert(L->out[a][b][k][0] == L->in[b][a][k][0] &&
						                  L->out[a][b][k][1] == L->in[b][a][k][1],
						          "%s %d -> %d: message %d is transfer %d at one end, %d at the other",
						          specs[si], a, b, k, L->out[a][b][k][0],
						          L->in[b][a][k][0]);
						cr_assert(k == 0 || L->leg[a][b][k - 1] <=
						                            L->leg[a][b][k],
						          "%s %d -> %d: message %d of leg %d after one of leg %d",
						          specs[si], a, b, k, L->leg[a][b][k],
						          L->leg[a][b][k - 1]);
					}
				}
			}
			free(L);
			tc__sched_free(&s);
			tc_team_destroy(team);
		}
}

Test(model, routed_sf_and_ct_closed_form, .timeout = 240)
{
	static const int ps[] = {2, 3, 5, 8, 13, 16};
	static const uint64_t ms[] = {0, 100, 10000, 20000}; /* 10000: CT packets */
	for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
		int p = ps[pi];
		char specs[16][32];
		int ns = tc_test_specs_for(p, specs, 16);
		for (int s = 0; s < ns; s++)
			for (int ct = 0; ct < 2; ct++) {
				struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL,
				                         ct ? TC_SWITCH_CT : TC_SWITCH_SF);
				struct tc_team *team = team_new(specs[s], &md, TC_MODE_NATIVE);
				const struct tc_topo *t = tc_team_topo(team);
				int dist[MAXP][MAXP];
				for (int u = 0; u < p; u++)
					tc_test_bfs(t, u, dist[u]);
				for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++) {
					uint64_t m = ms[k];
#define T_OF(l) (ct ? CTt(m, (l)) : SFt(m, (l)))
					/* One transfer to the farthest rank: the source is done
					 * after L, the destination at T(m, l), the ranks that
					 * forward it are charged nothing. */
					int far = 0;
					for (int v = 1; v < p; v++)
						if (dist[0][v] > dist[0][far])
							far = v;
					struct tc__sched one = one_round(p);
					add_xfer(&one, 0, far, m, TC__XOP_COPY);
					struct sched_ctx c1 = {.s = &one, .max_bytes = m};
					run(team, sched_fn, &c1, specs[s]);
					for (int u = 0; u < p; u++) {
						tc_time_t want = u == 0     ? Lt(m)
						                 : u == far ? T_OF(dist[0][far])
						                            : 0;
						cr_assert_eq(c1.rec.clock[u], want,
						             "%s %s m=%llu 0->%d rank %d: %lld != %lld",
						             specs[s], ct ? "ct" : "sf",
						             (unsigned long long)m, far, u,
						             (long long)c1.rec.clock[u],
						             (long long)want);
					}
					tc__sched_free(&one);

					/* Every rank at once: u -> u + q (routed, many transfers
					 * crossing the same forwarding ranks).  Each rank sends
					 * one and receives one: its clock is T(m, l_in). */
					int qs[3] = {1, p / 2, p - 1};
					for (int qi = 0; qi < 3; qi++) {
						int q = qs[qi];
						if (q < 1 || (qi && q == qs[qi - 1]))
							continue;
						struct tc__sched perm = one_round(p);
						for (int u = 0; u < p; u++)
							add_xfer(&perm, u, (u + q) % p, m, TC__XOP_COPY);
						struct sched_ctx c2 = {.s = &perm, .max_bytes = m};
						run(team, sched_fn, &c2, specs[s]);
						for (int u = 0; u < p; u++) {
							int from = (u + p - q) % p;
							tc_time_t want =
							        maxt(Lt(m), T_OF(dist[from][u]));
							cr_assert_eq(c2.rec.clock[u], want,
							             "%s %s m=%llu shift %d rank %d: %lld != %lld",
							             specs[s], ct ? "ct" : "sf",
							             (unsigned long long)m, q, u,
							             (long long)c2.rec.clock[u],
							             (long long)want);
						}
						tc__sched_free(&perm);
					}
#undef T_OF
				}
				tc_team_destroy(team);
			}
	}
}

/* tc_bcast with the routed "linear" algorithm (bcast_linear.c: the root
 * sends to root-1, ..., 0, root+1, ..., p-1 in that order, one round):
 * the k-th destination v ends at k L + T(m, l_v), the root at (p-1) L. */
struct bcast_ctx {
	struct rec rec;
	size_t m;
	int root;
};

static int bcast_fn(struct tc_proc *proc, void *arg)
{
	struct bcast_ctx *c = arg;
	unsigned char *buf = malloc(c->m + 1);
	if (tc_rank(proc) == c->root)
		memcpy(buf, src_data, c->m);
	struct tc_coll_opts o = {.alg = "linear"};
	int err = tc_bcast(proc, buf, c->m, TC_BYTE, c->root, &o);
	if (!err && memcmp(buf, src_data, c->m))
		err = TC_EINVAL;
	free(buf);
	return finish(&c->rec, proc, err);
}

Test(model, routed_linear_bcast_closed_form, .timeout = 120)
{
	static const char *specs[] = {"ring:2",      "ring:7", "chain:6",  "mesh:3x4",  "torus:3x3",
	                              "hypercube:3", "star:6", "tree:2:9", "complete:5"};
	for (size_t si = 0; si < sizeof specs / sizeof specs[0]; si++)
		for (int ct = 0; ct < 2; ct++) {
			struct tc_model md =
			        mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, ct ? TC_SWITCH_CT : TC_SWITCH_SF);
			struct tc_team *team = team_new(specs[si], &md, TC_MODE_NATIVE);
			const struct tc_topo *t = tc_team_topo(team);
			int p = tc_topo_nodes(t);
			struct tc_prediction pr;
			if (tc_predict(t, &md, TC_COLL_BCAST, "linear", 100, 1, 0, 0, &pr) == TC_ENOTSUP) {
				tc_team_destroy(team); /* not provided by this build */
				continue;
			}
			for (int root = 0; root<p; root += p / 2> 0 ? p / 2 : 1)
				for (size_t m = 0; m <= 10000; m = m ? m * 100 : 1) {
					int dist[MAXP];
					tc_test_bfs(t, root, dist);
					struct bcast_ctx c = {.m = m, .root = root};
					run(team, bcast_fn, &c, specs[si]);
					for (int k = 0; k < p - 1; k++) {
						int v = k < root ? root - 1 - k : k + 1;
						tc_time_t want =
						        (tc_time_t)k * Lt(m) +
						        (ct ? CTt(m, dist[v]) : SFt(m, dist[v]));
						cr_assert_eq(c.rec.clock[v], want,
						             "%s %s root %d m=%zu rank %d",
						             specs[si], ct ? "ct" : "sf", root, m, v);
					}
					cr_assert_eq(c.rec.clock[root], (tc_time_t)(p - 1) * Lt(m));
					/* The prediction without threads agrees. */
					struct tc_run_info ri;
					tc_team_last_run(team, &ri);
					cr_assert_eq(tc_predict(t, &md, TC_COLL_BCAST, "linear", m,
					                        1, root, 0, &pr),
					             0);
					cr_assert_eq(pr.modelled_ps, ri.makespan_ps,
					             "%s predict vs run", specs[si]);
				}
			tc_team_destroy(team);
		}
}

/* ---- prediction = real run, on random routed schedules ----------------- */

static struct tc__sched random_sched(int p, uint64_t *seed, uint64_t *max_bytes)
{
	static const uint64_t sizes[] = {0, 1, 64, 3000, 9000, 20000};
	struct tc__sched s;
	cr_assert_eq(tc__sched_init(&s, p), 0);
	*max_bytes = 0;
	int rounds = 1 + (int)(tc_test_rand(seed) % 3);
	for (int r = 0; r < rounds; r++) {
		cr_assert_eq(tc__sched_round(&s), 0);
		int n = 1 + (int)(tc_test_rand(seed) % (uint64_t)(2 * p));
		for (int i = 0; i < n; i++) {
			int a = (int)(tc_test_rand(seed) % (uint64_t)p);
			int b = (int)(tc_test_rand(seed) % (uint64_t)(p - 1));
			if (b >= a)
				b++;
			uint64_t m = sizes[tc_test_rand(seed) % 6];
			int op = tc_test_rand(seed) % 4 == 0 ? TC__XOP_COMBINE_LEFT : TC__XOP_COPY;
			add_xfer(&s, a, b, m, op);
			if (m > *max_bytes)
				*max_bytes = m;
		}
	}
	return s;
}

Test(model, prediction_equals_real_run, .timeout = 240)
{
	static const char *specs[] = {"ring:7",      "chain:5", "mesh:3x4",  "torus:3x3",
	                              "hypercube:3", "star:6",  "tree:2:10", "complete:5"};
	uint64_t seed = 0x5eed;
	for (size_t si = 0; si < sizeof specs / sizeof specs[0]; si++)
		for (int mi = 0; mi < 8; mi++) {
			struct tc_model md = mdl(mi & 1 ? TC_PORTS_ALL : TC_PORTS_ONE,
			                         mi & 2 ? TC_DUPLEX_HALF : TC_DUPLEX_FULL,
			                         mi & 4 ? TC_SWITCH_CT : TC_SWITCH_SF);
			struct tc_team *team = team_new(specs[si], &md, TC_MODE_NATIVE);
			const struct tc_topo *t = tc_team_topo(team);
			int p = tc_topo_nodes(t);
			for (int trial = 0; trial < 3; trial++) {
				uint64_t maxb;
				struct tc__sched s = random_sched(p, &seed, &maxb);
				struct tc__sim sim;
				cr_assert_eq(tc__sched_simulate(&s, t, &md, &sim), 0);
				struct sched_ctx c = {.s = &s, .max_bytes = maxb, .reps = 2};
				run(team, sched_fn, &c, specs[si]);
				/* Two runs of the schedule back to back: the second starts
				 * from the clocks and ports the first left, so compare the
				 * first with the simulation through a separate run. */
				struct sched_ctx c1 = {.s = &s, .max_bytes = maxb};
				run(team, sched_fn, &c1, specs[si]);
				for (int u = 0; u < p; u++) {
					cr_assert_eq(c1.rec.clock[u], sim.clock[u],
					             "%s model %d trial %d rank %d: run %lld, predicted %lld",
					             specs[si], mi, trial, u,
					             (long long)c1.rec.clock[u],
					             (long long)sim.clock[u]);
					cr_assert_geq(c.rec.clock[u], c1.rec.clock[u]);
				}
				tc__sim_free(&sim);
				tc__sched_free(&s);
			}
			tc_team_destroy(team);
		}
}

/* ---- determinism -------------------------------------------------------- */

/* Star hub 0 takes one message from every leaf with tc_waitall over irecvs
 * (leaves post after random physical delays, so the messages land in a
 * different order each run), then sends one back to each. */
struct star_ctx {
	struct rec rec;
	uint64_t seed;
};

#define STAR_P 9
static tc_time_t star_delay(int v)
{
	return (tc_time_t)((v * 37) % 4) * 500000;
}
static size_t star_bytes(int v)
{
	return (size_t)(v % 3) * 100 + (v == 5 ? 20000 : 0);
}

static int star_fn(struct tc_proc *proc, void *arg)
{
	struct star_ctx *c = arg;
	int r = tc_rank(proc), p = tc_size(proc), err = 0;
	uint64_t seed = c->seed * 131 + (uint64_t)r + 1;
	unsigned char *buf = malloc((size_t)p * 20400);
	if (r == 0) {
		tc_request rq[STAR_P];
		for (int v = 1; v < p && !err; v++)
			err = tc_irecv(proc, v, buf + (size_t)v * 20400, 20400, &rq[v - 1]);
		if (!err)
			err = tc_waitall(proc, p - 1, rq);
		for (int v = 1; v < p && !err; v++)
			err = tc_isend(proc, v, src_data, 64, &rq[v - 1]);
		if (!err)
			err = tc_waitall(proc, p - 1, rq);
	} else {
		jitter(&seed);
		err = tc_clock_advance(proc, (double)star_delay(r) / TC_PS_PER_NS);
		jitter(&seed);
		if (!err)
			err = tc_send(proc, 0, src_data, star_bytes(r));
		if (!err)
			err = tc_recv(proc, 0, buf, 64, NULL);
	}
	free(buf);
	return finish(&c->rec, proc, err);
}

/* All-to-all on complete:6 with nonblocking calls, sizes by (sender,
 * receiver, iteration), physical jitter between posts, tc_test polling. */
struct a2a_ctx {
	struct rec rec;
	uint64_t seed;
};

static int a2a_fn(struct tc_proc *proc, void *arg)
{
	struct a2a_ctx *c = arg;
	int r = tc_rank(proc), p = tc_size(proc), err = 0;
	uint64_t seed = c->seed * 977 + (uint64_t)r + 1;
	unsigned char *buf = malloc((size_t)p * 20000);
	tc_request rq[2 * MAXP];
	for (int it = 0; it < 3 && !err; it++) {
		int n = 0;
		for (int v = 0; v < p && !err; v++) {
			if (v == r)
				continue;
			jitter(&seed);
			err = tc_irecv(proc, v, buf + (size_t)v * 20000, 20000, &rq[n++]);
		}
		for (int v = 0; v < p && !err; v++) {
			if (v == r)
				continue;
			size_t m = (size_t)((r * 7 + v * 3 + it) % 5) * 5000;
			err = tc_isend(proc, v, src_data, m, &rq[n++]);
		}
		int done = 0;
		while (!err && !done) {
			err = tc_test(proc, &rq[0], &done);
			jitter(&seed);
		}
		if (!err)
			err = tc_waitall(proc, n, rq);
		if (!err)
			err = tc_clock_advance(proc, 10.0 * (r + 1));
	}
	free(buf);
	return finish(&c->rec, proc, err);
}

Test(model, deterministic_clocks_over_repeated_runs, .timeout = 120)
{
	struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	uint64_t run_seed = (uint64_t)time(NULL);

	/* Star: identical clocks every run, and the hub's the rule's. */
	struct tc_team *star = team_new("star:9", &md, TC_MODE_NATIVE);
	struct rec first;
	for (int k = 0; k < 5; k++) {
		struct star_ctx c = {.seed = run_seed + (uint64_t)k};
		run(star, star_fn, &c, "star:9");
		if (k == 0)
			first = c.rec;
		for (int u = 0; u < STAR_P; u++)
			cr_assert_eq(c.rec.clock[u], first.clock[u], "star run %d rank %d", k, u);
	}
	/* The hub receives in order of arrival (ties: post order), one at a time. */
	tc_time_t arr[STAR_P], hub = 0;
	for (int v = 1; v < STAR_P; v++)
		arr[v - 1] = star_delay(v) + Lt(star_bytes(v));
	int order[STAR_P - 1];
	for (int i = 0; i < STAR_P - 1; i++)
		order[i] = i;
	for (int i = 1; i < STAR_P - 1; i++) /* stable insertion sort by arrival */
		for (int j = i; j > 0 && arr[order[j]] < arr[order[j - 1]]; j--) {
			int x = order[j];
			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (int i = 0; i < STAR_P - 1; i++)
		hub = maxt(arr[order[i]], hub + Lt(star_bytes(order[i] + 1)));
	cr_assert_eq(first.clock[0], hub + (STAR_P - 1) * Lt(64));
	for (int v = 1; v < STAR_P; v++)
		cr_assert_eq(first.clock[v], maxt(arr[v - 1], hub + v * Lt(64)), "leaf %d", v);
	tc_team_destroy(star);

	/* All-to-all with polling. */
	struct tc_team *cpl = team_new("complete:6", &md, TC_MODE_NATIVE);
	for (int k = 0; k < 5; k++) {
		struct a2a_ctx c = {.seed = run_seed + 100 + (uint64_t)k};
		run(cpl, a2a_fn, &c, "complete:6");
		if (k == 0)
			first = c.rec;
		for (int u = 0; u < 6; u++)
			cr_assert_eq(c.rec.clock[u], first.clock[u], "a2a run %d rank %d", k, u);
	}
	tc_team_destroy(cpl);

	/* A routed random schedule with jitter, SF and CT. */
	for (int ct = 0; ct < 2; ct++) {
		struct tc_model m2 = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, ct ? TC_SWITCH_CT : TC_SWITCH_SF);
		struct tc_team *team = team_new("torus:3x4", &m2, TC_MODE_NATIVE);
		uint64_t seed = 42 + (uint64_t)ct, maxb;
		struct tc__sched s = random_sched(12, &seed, &maxb);
		for (int k = 0; k < 5; k++) {
			struct sched_ctx c = {.s = &s,
			                      .max_bytes = maxb,
			                      .reps = 3,
			                      .jitter_seed = run_seed + 200 + (uint64_t)k};
			run(team, sched_fn, &c, "torus:3x4");
			if (k == 0)
				first = c.rec;
			for (int u = 0; u < 12; u++)
				cr_assert_eq(c.rec.clock[u], first.clock[u], "sched run %d rank %d",
				             k, u);
		}
		tc__sched_free(&s);
		tc_team_destroy(team);
	}
}

/* ---- computation and emulated time --------------------------------------- */

struct adv_ctx {
	struct rec rec;
	int errs[4];
};

static int adv_fn(struct tc_proc *proc, void *arg)
{
	struct adv_ctx *c = arg;
	int err = 0;
	if (tc_rank(proc) == 0) {
		c->errs[0] = tc_clock_advance(proc, -1.0);
		c->errs[1] = tc_clock_advance(proc, NAN);
		c->errs[2] = tc_clock_advance(proc, 0.0);
		err = tc_clock_advance(proc, 1234.5);
		if (!err)
			err = tc_send(proc, 1, src_data, 100);
	} else {
		unsigned char buf[100];
		err = tc_recv(proc, 0, buf, sizeof buf, NULL);
		if (!err)
			err = tc_clock_advance(proc, 10.0);
	}
	return finish(&c->rec, proc, err);
}

Test(model, clock_advance_charges_computation, .timeout = 30)
{
	struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	struct tc_team *team = team_new("chain:2", &md, TC_MODE_NATIVE);
	struct adv_ctx c;
	memset(&c, 0, sizeof c);
	run(team, adv_fn, &c, "chain:2");
	cr_assert_eq(c.errs[0], TC_EINVAL);
	cr_assert_eq(c.errs[1], TC_EINVAL);
	cr_assert_eq(c.errs[2], 0);
	cr_assert_eq(c.rec.clock[0], 1234500 + Lt(100));
	cr_assert_eq(c.rec.clock[1], 1234500 + Lt(100) + 10000);
	tc_team_destroy(team);
}

struct pp_ctx {
	struct rec rec;
	int rounds;
};

static int pp_fn(struct tc_proc *proc, void *arg)
{
	struct pp_ctx *c = arg;
	unsigned char buf[64];
	int err = 0, r = tc_rank(proc);
	for (int i = 0; i < c->rounds && !err; i++) {
		if (r == 0) {
			err = tc_send(proc, 1, src_data, 64);
			if (!err)
				err = tc_recv(proc, 1, buf, 64, NULL);
		} else {
			err = tc_recv(proc, 0, buf, 64, NULL);
			if (!err)
				err = tc_send(proc, 0, buf, 64);
		}
	}
	return finish(&c->rec, proc, err);
}

Test(model, emulated_ping_pong_follows_the_model, .timeout = 60)
{
	struct tc_model md;
	tc_model_default(&md);
	md.ts_ns = 2e6;
	md.tw_ns = 1.0;
	struct tc_team *team = team_new("chain:2", &md, TC_MODE_EMULATED);
	struct pp_ctx c = {.rounds = 5};
	run(team, pp_fn, &c, "chain:2 emulated");
	struct tc_run_info ri;
	tc_team_last_run(team, &ri);
	tc_time_t L = tc__ns_to_ps(2e6) + 64 * 1000;
	cr_assert_eq(ri.mode, TC_MODE_EMULATED);
	cr_assert_eq(ri.makespan_ps, 10 * L);
	cr_assert_eq(c.rec.clock[0], 10 * L);
	uint64_t modelled_ns = (uint64_t)(ri.makespan_ps / TC_PS_PER_NS);
	/* Never early: deadlines are absolute and ranks sleep until them.  How
	 * late a loaded machine makes it is bench/model_fidelity's subject. */
	cr_assert_geq(ri.wall_ns, modelled_ns, "wall %llu < modelled %llu",
	              (unsigned long long)ri.wall_ns, (unsigned long long)modelled_ns);
	tc_team_destroy(team);
}

/* ---- calibration ------------------------------------------------------------- */

Test(model, calibration_recovers_emulated_parameters, .timeout = 60)
{
	struct tc_calibrate_opts o;
	memset(&o, 0, sizeof o);
	o.mode = TC_MODE_EMULATED;
	tc_model_default(&o.model);
	o.model.ts_ns = 200000.0;
	o.model.tw_ns = 50.0;
	o.max_bytes = 64 << 10;
	struct tc_calibration cal;
	int err = tc_model_calibrate(&o, &cal);
	cr_assert_eq(err, 0, "%s", tc_strerror(err));
	cr_assert_eq(cal.mode, TC_MODE_EMULATED);
	cr_assert_eq(cal.npoints, 14); /* 8 B .. 64 KiB */
	/* What holds on a loaded machine: no sample is early (a receive is not
	 * complete before its modelled arrival), so every point and the fit's
	 * line lie on or above the model's.  How close above is the machine's
	 * load (`topocoll calibrate --mode emulated --ts 200000 --tw 50` prints
	 * it); a quiet machine recovers both within a few percent. */
	for (int i = 0; i < cal.npoints; i++) {
		double model_ns = 200000.0 + 50.0 * (double)cal.points[i].bytes;
		cr_assert_geq(cal.points[i].min_ns, model_ns * (1 - 1e-9), "%zu B: %.0f ns < %.0f",
		              cal.points[i].bytes, cal.points[i].min_ns, model_ns);
	}
	cr_assert_gt(cal.tw_ns_per_byte, 0.0, "t_w %.3f ns/B", cal.tw_ns_per_byte);
	cr_assert_eq(cal.all.npoints, 14);
	cr_assert_eq(cal.stream.npoints + cal.single_copy.npoints, 14);
	cr_assert_eq(cal.ts_ns, cal.all.ts_ns);
}

Test(model, calibration_native_and_errors, .timeout = 60)
{
	struct tc_calibrate_opts o;
	memset(&o, 0, sizeof o);
	struct tc_calibration cal;
	cr_assert_eq(tc_model_calibrate(&o, NULL), TC_EINVAL);
	o.min_bytes = 1000;
	o.max_bytes = 100;
	cr_assert_eq(tc_model_calibrate(&o, &cal), TC_EINVAL);
	o.min_bytes = o.max_bytes = 100;
	cr_assert_eq(tc_model_calibrate(&o, &cal), TC_EINVAL); /* one size */
	o.min_bytes = 8;
	o.max_bytes = (size_t)1 << 30;
	cr_assert_eq(tc_model_calibrate(&o, &cal), TC_EINVAL);
	o.max_bytes = 0;
	o.npoints = 1;
	cr_assert_eq(tc_model_calibrate(&o, &cal), TC_EINVAL);
	o.npoints = TC_CALIBRATE_MAX_POINTS + 1;
	cr_assert_eq(tc_model_calibrate(&o, &cal), TC_EINVAL);
	o.npoints = 0;
	o.reps = -1;
	cr_assert_eq(tc_model_calibrate(&o, &cal), TC_EINVAL);
	o.reps = 0;
	o.regime = (enum tc_calibrate_regime)7;
	cr_assert_eq(tc_model_calibrate(&o, &cal), TC_EINVAL);

	/* Defaults: 8 B .. 4 MiB by powers of two, natively; both regimes. */
	cr_assert_eq(tc_model_calibrate(NULL, &cal), 0);
	cr_assert_eq(cal.mode, TC_MODE_NATIVE);
	cr_assert_eq(cal.npoints, 20);
	for (int i = 0; i < cal.npoints; i++) {
		cr_assert_eq(cal.points[i].bytes, (size_t)8 << i);
		cr_assert_gt(cal.points[i].one_way_ns, 0.0);
		cr_assert_leq(cal.points[i].min_ns, cal.points[i].one_way_ns);
		cr_assert_geq(cal.points[i].max_ns, cal.points[i].one_way_ns);
		cr_assert_eq(cal.points[i].single_copy, cal.points[i].bytes >= cal.single_copy_min);
	}
	cr_assert_eq(cal.stream.npoints + cal.single_copy.npoints, 20);
	cr_assert(isfinite(cal.ts_ns) && isfinite(cal.tw_ns_per_byte) && isfinite(cal.r2));
	cr_assert(isfinite(cal.stream.ts_ns) && isfinite(cal.single_copy.tw_ns_per_byte));

	/* Geometric sizes, one regime picked for the top-level fit. */
	o.min_bytes = 100;
	o.max_bytes = 10000;
	o.npoints = 5;
	o.reps = 3;
	o.regime = TC_CALIBRATE_STREAM;
	o.single_copy_min = SIZE_MAX; /* every size streamed */
	cr_assert_eq(tc_model_calibrate(&o, &cal), 0);
	static const size_t want[] = {100, 316, 1000, 3162, 10000};
	cr_assert_eq(cal.npoints, 5);
	for (int i = 0; i < 5; i++)
		cr_assert_eq(cal.points[i].bytes, want[i]);
	cr_assert_eq(cal.regime, TC_CALIBRATE_STREAM);
	cr_assert_eq(cal.ts_ns, cal.stream.ts_ns);
	cr_assert_eq(cal.single_copy.npoints, 0);
	cr_assert(isnan(cal.single_copy.ts_ns));
}

/* The rest of the model: t_c from the combine times, the cache
 * sizes, where the line holds; and the coarse, noise-tolerant shape of the
 * channel's cost: the fastest sample at 64 KiB is not below a quarter of the
 * fastest at 1 KiB (the fine goal, a non-decreasing time, lives in
 * ./tools/bench channel --crossover). */
Test(model, calibration_combine_caches_and_shape, .timeout = 120)
{
	struct tc_calibrate_opts o;
	memset(&o, 0, sizeof o);
	o.min_bytes = 1024;
	o.max_bytes = 64 << 10;
	o.npoints = 2;
	o.reps = 5;
	struct tc_calibration cal;
	cr_assert_eq(tc_model_calibrate(&o, &cal), 0);
	cr_assert_eq(cal.npoints, 2);
	cr_assert_eq(cal.combine.npoints, 2);
	cr_assert(isfinite(cal.tc_ns_per_byte));
	cr_assert_eq(cal.tc_ns_per_byte, cal.combine.tw_ns_per_byte);
	for (int i = 0; i < 2; i++) {
		cr_assert(isfinite(cal.points[i].combine_ns) && cal.points[i].combine_ns > 0);
		cr_assert(cal.points[i].cache_level >= 0 && cal.points[i].cache_level <= 4);
		cr_assert_eq(cal.points[i].single_copy, cal.points[i].bytes >= cal.single_copy_min);
	}
	/* Sizes the combine and the copy touch grow 64-fold: neither may
	 * shrink below a quarter (a coarse bound that load cannot break:
	 * noise only lengthens a fastest sample). */
	cr_assert_geq(cal.points[1].min_ns, cal.points[0].min_ns / 4,
	              "%g ns at 64 KiB, %g at 1 KiB", cal.points[1].min_ns, cal.points[0].min_ns);
	cr_assert_geq(cal.points[1].combine_ns, cal.points[0].combine_ns / 4);
	/* Two points: the line goes through both, so it holds up to the last. */
	cr_assert_eq(cal.hockney_max_bytes, (size_t)64 << 10);
	/* Cache sizes, when the system reports them, grow with the level. */
	if (cal.cache_bytes[0] && cal.cache_bytes[1])
		cr_assert_leq(cal.cache_bytes[0], cal.cache_bytes[1]);
	if (cal.cache_bytes[0])
		cr_assert_eq(cal.points[0].cache_level, 2 * 1024 < cal.cache_bytes[0] ? 1 : 2);

	/* Emulated: no combine times, no t_c. */
	o.mode = TC_MODE_EMULATED;
	tc_model_default(&o.model);
	o.model.ts_ns = 20000;
	o.model.tw_ns = 0.01;
	o.min_bytes = 8;
	o.max_bytes = 64;
	o.reps = 3;
	cr_assert_eq(tc_model_calibrate(&o, &cal), 0);
	cr_assert_eq(cal.combine.npoints, 0);
	cr_assert(isnan(cal.tc_ns_per_byte) && isnan(cal.points[0].combine_ns));
}

/* The switch point chosen by the rule of lib/core/chan.h: one constant,
 * the team's default and the collectives' threshold alike, and the path the
 * messages take follows it. */
Test(model, single_copy_switch_point, .timeout = 60)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "chain:2";
	struct tc_team *t = NULL;
	cr_assert_eq(tc_team_create(&cfg, &t), 0);
	struct tc_team_info info;
	tc_team_get_info(t, &info);
	cr_assert_eq(info.single_copy_min, (size_t)TC__CHAN_SINGLE_COPY_MIN);
	cr_assert_eq(info.single_copy_min, (size_t)1024, "the crossover measured in chan.h");
	cr_assert_eq(tc__coll_single_copy_min((const struct tc_team *)t), info.single_copy_min);
	tc_team_destroy(t);

	struct tc_calibrate_opts o;
	memset(&o, 0, sizeof o);
	o.min_bytes = TC__CHAN_SINGLE_COPY_MIN / 2;
	o.max_bytes = 2 * TC__CHAN_SINGLE_COPY_MIN;
	o.npoints = 3;
	o.reps = 1;
	o.warmup = 1;
	struct tc_calibration cal;
	cr_assert_eq(tc_model_calibrate(&o, &cal), 0);
	cr_assert_eq(cal.single_copy_min, (size_t)TC__CHAN_SINGLE_COPY_MIN);
	cr_assert_eq(cal.npoints, 3);
	cr_assert_eq(cal.points[0].single_copy, 0);
	cr_assert_eq(cal.points[1].single_copy, 1); /* exactly the threshold */
	cr_assert_eq(cal.points[2].single_copy, 1);
	cr_assert_eq(cal.stream.npoints, 1);
	cr_assert_eq(cal.single_copy.npoints, 2);
}

/* ---- contention and the 1-port checker ----------------------------------- */

static struct tc_topo *topo(const char *spec)
{
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse(spec, &t), 0, "%s", spec);
	return t;
}

Test(model, contention_found_on_colliding_pattern, .timeout = 60)
{
	/* mesh:3x3, dimension 0 first: 1 -> 4 -> 5 and 3 -> 4 -> 5 both take link
	 * 4 -> 5 as their second hop, at the same logical time. */
	struct tc_topo *t = topo("mesh:3x3");
	int pa[4], pb[4];
	cr_assert_eq(tc_topo_route(t, 1, 5, pa, 4), 2);
	cr_assert_eq(tc_topo_route(t, 3, 5, pb, 4), 2);
	cr_assert(pa[1] == 4 && pb[1] == 4 && pa[2] == 5 && pb[2] == 5);
	for (int ct = 0; ct < 2; ct++) {
		struct tc_model md = mdl(TC_PORTS_ALL, TC_DUPLEX_FULL, ct ? TC_SWITCH_CT : TC_SWITCH_SF);
		struct tc__sched s = one_round(9);
		add_xfer(&s, 1, 5, 1000, TC__XOP_COPY);
		add_xfer(&s, 3, 5, 1000, TC__XOP_COPY);
		struct tc__sim sim;
		cr_assert_eq(tc__sched_simulate(&s, t, &md, &sim), 0);
		cr_assert_eq(sim.contention_total, 1);
		cr_assert_eq(sim.ncontention, 1);
		cr_assert_eq(sim.contention[0].from, 4);
		cr_assert_eq(sim.contention[0].to, 5);
		cr_assert_eq(sim.contention[0].xa, 0);
		cr_assert_eq(sim.contention[0].xb, 1);
		cr_assert_eq(sim.contention[0].round, 0);
		/* Contention is a diagnostic: the clocks of a real run are those of
		 * the simulation all the same. */
		struct tc_team *team = team_new("mesh:3x3", &md, TC_MODE_NATIVE);
		struct sched_ctx c = {.s = &s, .max_bytes = 1000};
		run(team, sched_fn, &c, "mesh:3x3");
		for (int u = 0; u < 9; u++)
			cr_assert_eq(c.rec.clock[u], sim.clock[u]);
		tc_team_destroy(team);
		tc__sim_free(&sim);
		tc__sched_free(&s);
	}
	/* The same through tc_predict: the hypercube allreduce's exchanges at
	 * distance 2 on a ring share a link, under cut-through at overlapping
	 * times (0 -> 2 and 1 -> 3 both cross 1 -> 2); on the hypercube itself
	 * every exchange is one link, without conflict. */
	struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_CT);
	struct tc_topo *ring = topo("ring:8"), *cube = topo("hypercube:3");
	struct tc_prediction pr;
	int rc = tc_predict(ring, &md, TC_COLL_ALLREDUCE, "hypercube", 800, 8, 0, 0, &pr);
	if (rc != TC_ENOTSUP && rc != TC_EALG) {
		cr_assert_eq(rc, 0);
		cr_assert_gt(pr.contention, 0);
		cr_assert_eq(tc_predict(cube, &md, TC_COLL_ALLREDUCE, "hypercube", 800, 8, 0, 0, &pr), 0);
		cr_assert_eq(pr.contention, 0);
	}
	tc_topo_destroy(ring);
	tc_topo_destroy(cube);
	tc_topo_destroy(t);
}

Test(model, no_contention_on_ecube_permutations, .timeout = 60)
{
	/* i -> i XOR q, e-cube routed, for every q: edge-disjoint ([Gergel-shift]),
	 * under both switching modes and both port models. */
	for (int d = 1; d <= 6; d++) {
		char spec[32];
		snprintf(spec, sizeof spec, "hypercube:%d", d);
		struct tc_topo *t = topo(spec);
		int p = 1 << d;
		for (int q = 1; q < p; q++)
			for (int mi = 0; mi < 4; mi++) {
				struct tc_model md =
				        mdl(mi & 1 ? TC_PORTS_ALL : TC_PORTS_ONE, TC_DUPLEX_FULL,
				            mi & 2 ? TC_SWITCH_CT : TC_SWITCH_SF);
				struct tc__sched s = one_round(p);
				for (int i = 0; i < p; i++)
					add_xfer(&s, i, i ^ q, 4096, TC__XOP_COPY);
				struct tc__sim sim;
				cr_assert_eq(tc__sched_simulate(&s, t, &md, &sim), 0);
				cr_assert_eq(sim.contention_total, 0, "%s q=%d model %d", spec, q, mi);
				cr_assert_eq(sim.oneport_violations, 0);
				int l = __builtin_popcount((unsigned)q);
				cr_assert_eq(sim.makespan, mi & 2 ? CTt(4096, l) : SFt(4096, l));
				tc__sim_free(&sim);
				tc__sched_free(&s);
			}
		tc_topo_destroy(t);
	}
	/* The hypercube broadcast through tc_predict: no conflict either. */
	struct tc_topo *t = topo("hypercube:5");
	struct tc_model md = mdl(TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
	struct tc_prediction pr;
	cr_assert_eq(tc_predict(t, &md, TC_COLL_BCAST, "hypercube", 1000, 1, 3, 0, &pr), 0);
	cr_assert_eq(pr.contention, 0);
	cr_assert_eq(pr.oneport_violations, 0);
	cr_assert_eq(pr.modelled_ps, 5 * Lt(1000));
	tc_topo_destroy(t);
}

Test(model, checker_flags_one_port_violation, .timeout = 30)
{
	struct tc_topo *t = topo("complete:4");
	for (int all = 0; all < 2; all++) {
		struct tc_model md =
		        mdl(all ? TC_PORTS_ALL : TC_PORTS_ONE, TC_DUPLEX_FULL, TC_SWITCH_SF);
		/* Rank 0 sources two transfers in one round. */
		struct tc__sched s = one_round(4);
		add_xfer(&s, 0, 1, 10, TC__XOP_COPY);
		add_xfer(&s, 0, 2, 10, TC__XOP_COPY);
		struct tc__sim sim;
		cr_assert_eq(tc__sched_simulate(&s, t, &md, &sim), 0);
		cr_assert_eq(sim.oneport_violations, all ? 0 : 1);
		tc__sim_free(&sim);
		/* ... and rank 1 receives two more in the same round. */
		add_xfer(&s, 3, 1, 10, TC__XOP_COPY);
		cr_assert_eq(tc__sched_simulate(&s, t, &md, &sim), 0);
		cr_assert_eq(sim.oneport_violations, all ? 0 : 2);
		tc__sim_free(&sim);
		tc__sched_free(&s);
		/* The same transfers spread over rounds are compliant. */
		cr_assert_eq(tc__sched_init(&s, 4), 0);
		cr_assert_eq(tc__sched_round(&s), 0);
		add_xfer(&s, 0, 1, 10, TC__XOP_COPY);
		cr_assert_eq(tc__sched_round(&s), 0);
		add_xfer(&s, 0, 2, 10, TC__XOP_COPY);
		add_xfer(&s, 3, 1, 10, TC__XOP_COPY);
		cr_assert_eq(tc__sched_simulate(&s, t, &md, &sim), 0);
		cr_assert_eq(sim.oneport_violations, 0);
		tc__sim_free(&sim);
		tc__sched_free(&s);
	}
	tc_topo_destroy(t);
}

/* ---- the prediction's lower bound holds for every algorithm -------------- */

/* The pattern whose bound a collective takes (collectives.def): 0 one-to-all
 * broadcast, 1 one-to-all scatter, 2 all-to-all broadcast, 3 all-to-all
 * scatter; -1 permutation or multicast. */
static int lb_pattern(enum tc_coll c)
{
	switch (c) {
	case TC_COLL_BCAST:
	case TC_COLL_REDUCE:
	case TC_COLL_ALLREDUCE:
	case TC_COLL_BARRIER:
	case TC_COLL_SCAN:
	case TC_COLL_EXSCAN:
		return 0;
	case TC_COLL_SCATTER:
	case TC_COLL_GATHER:
		return 1;
	case TC_COLL_ALLGATHER:
	case TC_COLL_REDUCE_SCATTER:
		return 2;
	case TC_COLL_ALLTOALL:
		return 3;
	default:
		return -1;
	}
}

/*
 * The bound of every packetisation, written here from the topology's
 * neighbour lists and a breadth-first search (cost.h, tc_lower_bound_any):
 * max(ceil(log_{r'+1} p) t_s, E t_s + (m/r) t_w (SF) or t_s + (m/r) t_w +
 * E t_h (CT), t_s + (V/r) t_w).
 */
static double lb_expected(const struct tc_topo *t, const struct tc_model *md, int pat, int root, double m)
{
	int p = tc_topo_nodes(t);
	if (p == 1)
		return 0;
	int *dist = malloc(sizeof *dist * (size_t)p);
	int maxdeg = 0, diam = 0, rad = p, exc_root = 0;
	for (int v = 0; v < p; v++) {
		const int *nb;
		int deg = tc_topo_neighbors(t, v, &nb);
		maxdeg = deg > maxdeg ? deg : maxdeg;
		int e = tc_test_bfs(t, v, dist);
		diam = e > diam ? e : diam;
		rad = e < rad ? e : rad;
		if (v == root)
			exc_root = e;
	}
	free(dist);
	const int one = md->ports == TC_PORTS_ONE;
	const double r = one ? 1 : maxdeg;
	const int *nb;
	const double r_root = one ? 1 : tc_topo_neighbors(t, root, &nb);
	long steps = 0;
	for (long long v = 1; v < p; v *= (one ? 1 : maxdeg) + 1)
		steps++;
	long e = pat == 0 ? (root >= 0 ? exc_root : rad) : pat == 1 ? exc_root : diam;
	double lat = (double)steps * md->ts_ns;
	double dst = md->switching == TC_SWITCH_CT ? md->ts_ns + m / r * md->tw_ns + (double)e * md->th_ns
	                                           : (double)e * md->ts_ns + m / r * md->tw_ns;
	double v = pat == 0 ? m / r : pat == 1 ? (p - 1) * m / r_root : (p - 1) * m / r;
	double vol = md->ts_ns + v * md->tw_ns;
	return fmax(lat, fmax(dst, vol));
}

Test(model, lower_bound_holds_for_every_algorithm, .timeout = 300)
{
	static const int ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 16};
	static const size_t sizes[] = {0, 8, 1000, 1 << 16};
	struct tc_model models[3];
	tc_model_default(&models[0]); /* SF, one-port */
	models[0].ts_ns = 1000, models[0].tw_ns = 2, models[0].th_ns = 50;
	models[1] = models[0];
	models[1].switching = TC_SWITCH_CT;
	models[1].ports = TC_PORTS_ALL;
	models[2] = models[0];
	models[2].ports = TC_PORTS_ALL;
	models[2].duplex = TC_DUPLEX_HALF;
	long checked = 0;
	for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
		char specs[16][32];
		int ns = tc_test_specs_for(ps[pi], specs, 16);
		for (int si = 0; si < ns; si++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[si], &t), 0, "%s", specs[si]);
			int p = tc_topo_nodes(t);
			int *members = malloc(sizeof *members * (size_t)p);
			for (int i = 0; i < p; i++)
				members[i] = i;
			for (int c = 0; c < TC_COLL_COUNT; c++) {
				if (tc_coll_flags((enum tc_coll)c) & TC_CF_VCOUNT)
					continue;
				const char *alg;
				for (int ai = 0; (alg = tc_alg_name((enum tc_coll)c, ai)); ai++)
					for (size_t zi = 0; zi < sizeof sizes / sizeof sizes[0]; zi++)
						for (int mi = 0; mi < 3; mi++) {
							int root = tc_coll_flags((enum tc_coll)c) & TC_CF_ROOTED
							                   ? p - 1
							                   : -1;
							struct tc_call call = {.coll = (enum tc_coll)c,
							                       .alg = alg,
							                       .bytes = sizes[zi],
							                       .esize = 8,
							                       .root = root < 0 ? 0 : root,
							                       .q = 1,
							                       .members = members,
							                       .nmembers = p};
							if (c == TC_COLL_BARRIER)
								call.bytes = 0;
							struct tc_prediction pr;
							int err = tc_predict_call(t, &models[mi],
							                          &call, &pr);
							if (err == TC_ENOTSUP || err == TC_ELIMIT)
								continue;
							cr_assert_eq(err, 0, "%s %s %s: %s", specs[si],
							             tc_coll_name((enum tc_coll)c),
							             alg, tc_strerror(err));
							int pat = lb_pattern((enum tc_coll)c);
							if (strncmp(specs[si], "tree", 4) == 0) {
								cr_assert(isnan(pr.lower_bound_ns) ||
								          pat < 0);
								if (isnan(pr.lower_bound_ns))
									continue;
							}
							cr_assert(!isnan(pr.lower_bound_ns),
							          "%s %s %s: no bound", specs[si],
							          tc_coll_name((enum tc_coll)c), alg);
							if (pat >= 0) {
								double want =
								        lb_expected(t, &models[mi],
								                    pat, root,
								                    (double)call.bytes);
								cr_assert(fabs(pr.lower_bound_ns - want) <=
								                  1e-9 * want + 1e-6,
								          "%s %s %s m %zu model %d: bound %.3f, want %.3f",
								          specs[si],
								          tc_coll_name((enum tc_coll)c),
								          alg, call.bytes, mi,
								          pr.lower_bound_ns, want);
							}
							cr_assert(pr.lower_bound_ns * 1000 <=
							                  (double)pr.modelled_ps + 1,
							          "%s %s %s m %zu model %d: modelled %lld ps below the "
							          "bound %.3f ns",
							          specs[si],
							          tc_coll_name((enum tc_coll)c),
							          alg, call.bytes, mi,
							          (long long)pr.modelled_ps,
							          pr.lower_bound_ns);
							checked++;
						}
			}
			free(members);
			tc_topo_destroy(t);
		}
	}
	cr_assert_gt(checked, 1000, "%ld predictions checked", checked);
}

/* Over the simulator's limit with an exact closed form, a prediction is the
 * closed form alone: the schedule is not built to count it (an alltoall of
 * 2^20 ranks has ~2^41 transfers: counting them took minutes), so rounds
 * and transfers say "not counted" (-1).  Where the schedule cannot exist
 * (ecube and ring track p^2 blocks in 31 bits), the refusal names the
 * limit. */
Test(model, closed_form_without_schedule_at_hypercube_20, .timeout = 120)
{
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse("hypercube:20", &t), 0);
	struct tc_model md;
	tc_model_default(&md);
	md.ts_ns = 1000, md.tw_ns = 2;
	const double p = 1 << 20, d = 20, m = 8;
	/* [Barnat-IB109]: d (t_s + t_w m p / 2). */
	const double want = d * (md.ts_ns + md.tw_ns * m * p / 2);
	static const char *const algs[] = {"hypercube", "auto"};
	for (int i = 0; i < 2; i++) {
		struct tc_call call = {.coll = TC_COLL_ALLTOALL, .alg = algs[i], .bytes = 8, .esize = 8};
		struct tc_prediction pr;
		cr_assert_eq(tc_predict_call(t, &md, &call, &pr), 0, "%s: %s", algs[i],
		             tc_error_detail());
		cr_assert_str_eq(pr.algorithm, "hypercube");
		cr_assert_eq(pr.simulated, 0);
		cr_assert_eq(pr.modelled_ps, (tc_time_t)llround(want * 1000), "%s: %lld", algs[i],
		             (long long)pr.modelled_ps);
		cr_assert_eq(pr.rounds, -1, "%s: rounds counted", algs[i]);
		cr_assert_eq(pr.transfers, -1, "%s: transfers counted", algs[i]);
		cr_assert_eq(pr.messages, 0);
	}
	static const char *const refused[] = {"ecube", "ring"};
	for (int i = 0; i < 2; i++) {
		struct tc_call call = {.coll = TC_COLL_ALLTOALL, .alg = refused[i], .bytes = 8, .esize = 8};
		struct tc_prediction pr;
		cr_assert_eq(tc_predict_call(t, &md, &call, &pr), TC_ELIMIT, "%s", refused[i]);
		cr_assert(strstr(tc_error_detail(), "at most 46340 ranks"), "%s: '%s'", refused[i],
		          tc_error_detail());
		cr_assert(strstr(tc_error_detail(), refused[i]), "%s", tc_error_detail());
	}
	tc_topo_destroy(t);
}

/* A prediction over the simulator's limit that the closed form answers
 * generates no schedule at all (not even up to the limit, half a second at
 * 2^20 transfers): the registry's bound of the schedule's size
 * (tc__sched_size_lb, lib/coll/size.c) refuses it first.  Counted by
 * tc__sched_generated(), never timed. */
Test(model, closed_form_prediction_generates_no_schedule, .timeout = 120)
{
	struct tc_model md;
	tc_model_default(&md);
	static const char *const specs[] = {"hypercube:11", "hypercube:13", "hypercube:16",
	                                    "complete:4096", "torus:64x64"};
	static const char *const algs[] = {"auto", "hypercube", "mesh", "ecube", "direct"};
	int answered = 0;
	for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
		struct tc_topo *t;
		cr_assert_eq(tc_topo_parse(specs[i], &t), 0);
		for (size_t j = 0; j < sizeof algs / sizeof *algs; j++) {
			/* (Past 46340 ranks only hypercube's schedule can exist:
			 * the others' refusal is closed_form_without_schedule_at_
			 * hypercube_20's.) */
			if (strcmp(algs[j], "auto") &&
			    (tc_alg_applies(t, &md, TC_COLL_ALLTOALL, algs[j]) != 0 ||
			     (tc_topo_nodes(t) > 46340 && strcmp(algs[j], "hypercube"))))
				continue;
			struct tc_call call = {.coll = TC_COLL_ALLTOALL,
			                       .alg = algs[j],
			                       .bytes = 8,
			                       .esize = 8};
			struct tc_prediction pr;
			const long long before = tc__sched_generated();
			cr_assert_eq(tc_predict_call(t, &md, &call, &pr), 0, "%s %s: %s", specs[i],
			             algs[j], tc_error_detail());
			cr_assert_eq(pr.simulated, 0, "%s %s", specs[i], algs[j]);
			cr_assert_eq(pr.transfers, -1, "%s %s", specs[i], algs[j]);
			cr_assert_eq(tc__sched_generated(), before, "%s %s: %lld schedules generated",
			             specs[i], algs[j], tc__sched_generated() - before);
			cr_assert_eq(pr.modelled_ps, (tc_time_t)llround(pr.formula_ns * 1000),
			             "%s %s", specs[i], algs[j]);
			answered++;
		}
		tc_topo_destroy(t);
	}
	cr_assert_geq(answered, 10);
	/* A small team is still simulated (and its schedule generated). */
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse("hypercube:4", &t), 0);
	struct tc_call call = {.coll = TC_COLL_ALLTOALL, .alg = "hypercube", .bytes = 8, .esize = 8};
	struct tc_prediction pr;
	const long long before = tc__sched_generated();
	cr_assert_eq(tc_predict_call(t, &md, &call, &pr), 0);
	cr_assert_eq(pr.simulated, 1);
	cr_assert_gt(tc__sched_generated(), before);
	tc_topo_destroy(t);
}

/* The bound of a schedule's size known before generating it never exceeds
 * the transfers its generator emits: every algorithm with a bound, on every
 * topology of the matrix, sizes 0 and 8. */
Test(model, schedule_size_bounds_hold, .timeout = 120)
{
	struct tc_model md;
	tc_model_default(&md);
	int checked = 0;
	for (int k = 0; k < TC_TEST_NPS; k++) {
		const int p = tc_test_ps[k];
		char specs[16][32];
		const int ns = tc_test_specs_for(p, specs, 16);
		for (int si = 0; si < ns; si++) {
			struct tc_topo *t;
			cr_assert_eq(tc_topo_parse(specs[si], &t), 0, "%s", specs[si]);
			for (int i = 0; i < tc__nalgs; i++)
				for (uint64_t bytes = 0; bytes <= 8; bytes += 8) {
					const struct tc__alg *a = &tc__algs[i];
					struct tc__gen g = {.coll = a->coll,
					                    .t = t,
					                    .p = p,
					                    .bytes = bytes,
					                    .esize = 8,
					                    .md = &md,
					                    .me = -1};
					const int64_t lb = tc__sched_size_lb(a, &g);
					if (lb == 0 || tc__alg_check_quiet(a, &g))
						continue;
					struct tc__sched sc;
					int err = tc__coll_generate(a, &g, &sc);
					if (err == TC_ENOTSUP)
						continue;
					cr_assert_eq(err, 0, "%s %s on %s", tc_coll_name(a->coll),
					             a->name, specs[si]);
					cr_assert_geq(sc.nx, lb,
					              "%s %s on %s, %d B: %d transfers, bound %lld",
					              tc_coll_name(a->coll), a->name, specs[si],
					              (int)bytes, sc.nx, (long long)lb);
					tc__sched_free(&sc);
					checked++;
				}
			tc_topo_destroy(t);
		}
	}
	cr_assert_gt(checked, 20);
}

/* A per-byte time that is not a whole number of picoseconds (a calibrated
 * t_w of 0.0960875 ns/B, t_c 0.0339 ns/B) prices a message as the product
 * rounded once, not as t_w rounded to 96 ps per byte: the alltoall `shm`
 * of 4 MiB blocks on complete:2 (one round, t_s + m t_w) and a ring reduce
 * on chain:2 (t_s + m t_w + m t_c) equal their closed forms to the
 * picosecond. */
Test(model, per_byte_times_are_not_rounded_per_byte, .timeout = 30)
{
	struct tc_model md;
	tc_model_default(&md);
	md.ts_ns = 250.4;
	md.tw_ns = 0.0960875;
	md.tc_ns = 0.0339;
	const double m = 4194304;
	struct tc_topo *t = NULL;
	cr_assert_eq(tc_topo_parse("complete:2", &t), 0);
	struct tc_prediction pr;
	cr_assert_eq(tc_predict(t, &md, TC_COLL_ALLTOALL, "shm", (size_t)m, 8, 0, 0, &pr), 0);
	const double want = 250400 + m * 96.0875; /* ps */
	cr_assert(fabs((double)pr.modelled_ps - want) <= 1.0, "%lld ps against %.1f",
	          (long long)pr.modelled_ps, want);
	cr_assert(fabs(pr.formula_ns * 1000 - want) <= 1.0, "formula %.3f ns", pr.formula_ns);
	cr_assert((double)pr.modelled_ps >= pr.lower_bound_ns * 1000 - 1.0, "bound %.3f ns",
	          pr.lower_bound_ns);
	tc_topo_destroy(t);
	cr_assert_eq(tc_topo_parse("chain:2", &t), 0);
	cr_assert_eq(tc_predict(t, &md, TC_COLL_REDUCE, "linear", (size_t)m, 8, 0, 0, &pr), 0);
	const double want_r = 250400 + m * 96.0875 + m * 33.9;
	cr_assert(fabs((double)pr.modelled_ps - want_r) <= 1.0, "reduce: %lld ps against %.1f",
	          (long long)pr.modelled_ps, want_r);
	tc_topo_destroy(t);
}
