/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "topocoll.h"

Test(error, every_code_has_a_distinct_name_and_message)
{
	int codes[] = {
#define X(name, val, msg) TC_##name,
	        TC_ERRNO_MAP(X)
#undef X
	};
	int n = (int)(sizeof codes / sizeof codes[0]);
	for (int i = 0; i < n; i++) {
		cr_assert_lt(codes[i], 0);
		cr_assert_neq(strcmp(tc_strerror(codes[i]), "unknown error"), 0);
		cr_assert_eq(strncmp(tc_err_name(codes[i]), "TC_E", 4), 0);
		for (int j = 0; j < i; j++) {
			cr_assert_neq(codes[i], codes[j]);
			cr_assert_neq(strcmp(tc_err_name(codes[i]), tc_err_name(codes[j])), 0);
		}
	}
	cr_assert_str_eq(tc_strerror(0), "success");
	cr_assert_str_eq(tc_err_name(TC_ETRUNCATE), "TC_ETRUNCATE");
	cr_assert_str_eq(tc_strerror(12345), "unknown error");
}

/* ---- the README's error table: team creation, the model, the predictor --------- */
/* (the rows on running teams are in tests/test_errors_api.c) */

static int create_with(void (*edit)(struct tc_team_config *))
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:4";
	edit(&cfg);
	struct tc_team *t = NULL;
	int err = tc_team_create(&cfg, &t);
	if (!err)
		cr_assert_not_null(t);
	tc_team_destroy(t);
	return err;
}

#define EDIT(name, body)                                  \
	static void edit_##name(struct tc_team_config *c) \
	{                                                 \
		body;                                     \
	}
EDIT(none, (void)c)
EDIT(p_not_topology, c->p = 5)
EDIT(hypercube_p, (c->topology = "hypercube:3", c->p = 6))
EDIT(no_topology_no_p, (c->topology = NULL, c->p = 0))
EDIT(no_topology_p_neg, (c->topology = NULL, c->p = -3))
EDIT(no_topology_p_huge, (c->topology = NULL, c->p = TC_TOPO_MAX_NODES + 1))
EDIT(bad_spec, c->topology = "ring:")
EDIT(bad_spec_kind, c->topology = "donut:4")
EDIT(spec_too_big, c->topology = "hypercube:40")
EDIT(ts_neg, c->model.ts_ns = -1)
EDIT(tw_nan, c->model.tw_ns = NAN)
EDIT(th_inf, c->model.th_ns = INFINITY)
EDIT(tc_huge, c->model.tc_ns = 1e10)
EDIT(ports_bad, c->model.ports = (enum tc_ports)2)
EDIT(duplex_bad, c->model.duplex = (enum tc_duplex) - 1)
EDIT(switching_bad, c->model.switching = (enum tc_switching)7)
EDIT(mu_huge, (c->model.mu = SIZE_MAX, c->model.switching = TC_SWITCH_CT))
EDIT(wait_bad, c->wait = (enum tc_wait_policy)9)
EDIT(mode_bad, c->mode = (enum tc_mode)2)
EDIT(ring_tiny, c->ring_bytes = 1)
EDIT(ring_huge, c->ring_bytes = (size_t)1 << 31)
EDIT(packet_over_ring, (c->ring_bytes = 4096, c->packet_bytes = 1 << 20))
EDIT(trace_huge, c->trace_events = (size_t)1 << 33)
EDIT(stack_tiny, c->stack_bytes = 1)
EDIT(trace_terabytes, c->trace_events = (size_t)1 << 32)
EDIT(timeout_huge, c->timeout_ms = UINT64_MAX)

Test(error, team_config_rows, .timeout = 30)
{
	static const struct {
		const char *name;
		void (*edit)(struct tc_team_config *);
		int code;
	} rows[] = {
	        {"valid", edit_none, 0},
	        {"p is not the topology's node count", edit_p_not_topology, TC_EINVAL},
	        {"hypercube:3 with p 6", edit_hypercube_p, TC_EINVAL},
	        {"no topology and p 0", edit_no_topology_no_p, TC_EINVAL},
	        {"no topology and p < 0", edit_no_topology_p_neg, TC_EINVAL},
	        {"no topology and p above the maximum", edit_no_topology_p_huge, TC_ETOPO},
	        {"spec without a size", edit_bad_spec, TC_ETOPO},
	        {"unknown topology kind", edit_bad_spec_kind, TC_ETOPO},
	        {"topology above the maximum size", edit_spec_too_big, TC_ETOPO},
	        {"model: negative t_s", edit_ts_neg, TC_EINVAL},
	        {"model: t_w NaN", edit_tw_nan, TC_EINVAL},
	        {"model: t_h infinite", edit_th_inf, TC_EINVAL},
	        {"model: t_c out of range", edit_tc_huge, TC_EINVAL},
	        {"model: ports", edit_ports_bad, TC_EINVAL},
	        {"model: duplex", edit_duplex_bad, TC_EINVAL},
	        {"model: switching", edit_switching_bad, TC_EINVAL},
	        /* was taken: a routed cut-through bcast then moved nothing, TC_OK */
	        {"model: mu above TC_MAX_MESSAGE", edit_mu_huge, TC_EINVAL},
	        {"wait policy", edit_wait_bad, TC_EINVAL},
	        {"mode", edit_mode_bad, TC_EINVAL},
	        {"ring_bytes below two lines", edit_ring_tiny, TC_EINVAL},
	        {"ring_bytes above 1 GiB", edit_ring_huge, TC_EINVAL},
	        {"packet_bytes above the ring's payload", edit_packet_over_ring, TC_EINVAL},
	        {"trace_events above 2^32", edit_trace_huge, TC_EINVAL},
	        {"stack_bytes below PTHREAD_STACK_MIN", edit_stack_tiny, TC_EINVAL},
	        /* 2^32 events of every rank: refused before allocating (was malloc'ed) */
	        {"trace buffers above the memory available", edit_trace_terabytes, TC_ELIMIT},
	        {"timeout_ms whose nanoseconds wrap: forever", edit_timeout_huge, 0},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int err = create_with(rows[i].edit);
		cr_assert_eq(err, rows[i].code, "%s: %s, not %s", rows[i].name, tc_err_name(err),
		             tc_err_name(rows[i].code));
	}
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	struct tc_team *t = NULL;
	cr_assert_eq(tc_team_create(NULL, &t), TC_EINVAL);
	cr_assert_eq(tc_team_create(&cfg, NULL), TC_EINVAL);
}

/* timeout_ms * 10^6 wrapped: 2^64 / 10^6 + 1 ms became under a millisecond,
 * and a rank waiting 50 ms for a late peer timed out. */
static int late_fn(struct tc_proc *proc, void *arg)
{
	(void)arg;
	if (tc_rank(proc) == 1) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return tc_barrier(proc, NULL);
}

Test(error, timeout_does_not_wrap, .timeout = 30)
{
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:2";
	cfg.wait = TC_WAIT_BLOCK;
	cfg.timeout_ms = UINT64_MAX / 1000000u + 1;
	struct tc_team *t = NULL;
	cr_assert_eq(tc_team_create(&cfg, &t), 0);
	cr_assert_eq(tc_run(t, late_fn, NULL), 0);
	tc_team_destroy(t);
}

Test(error, model_check, .timeout = 10)
{
	struct tc_model md;
	tc_model_default(&md);
	cr_assert_eq(tc_model_check(&md), 0);
	cr_assert_eq(tc_model_check(NULL), TC_EINVAL);
	md.ts_ns = NAN;
	cr_assert_eq(tc_model_check(&md), TC_EINVAL);
	tc_model_default(&md);
	md.tw_ns = -0.5;
	cr_assert_eq(tc_model_check(&md), TC_EINVAL);
	tc_model_default(&md);
	md.ports = (enum tc_ports)5;
	cr_assert_eq(tc_model_check(&md), TC_EINVAL);
	tc_model_default(&md);
	md.mu = (size_t)TC_MAX_MESSAGE;
	cr_assert_eq(tc_model_check(&md), 0);
	md.mu = (size_t)TC_MAX_MESSAGE + 1;
	cr_assert_eq(tc_model_check(&md), TC_EINVAL);
}

Test(error, predictor_rows, .timeout = 30)
{
	struct tc_topo *t;
	cr_assert_eq(tc_topo_parse("ring:6", &t), 0);
	struct tc_model md, bad;
	tc_model_default(&md);
	tc_model_default(&bad);
	bad.ts_ns = NAN;
	struct tc_prediction pr;
	struct tc_call c = {.coll = TC_COLL_BCAST, .bytes = 64, .esize = 8};
	cr_assert_eq(tc_predict_call(t, &md, &c, &pr), 0);
	cr_assert_eq(tc_predict_call(NULL, &md, &c, &pr), TC_EINVAL);
	cr_assert_eq(tc_predict_call(t, NULL, &c, &pr), TC_EINVAL);
	cr_assert_eq(tc_predict_call(t, &md, NULL, &pr), TC_EINVAL);
	cr_assert_eq(tc_predict_call(t, &bad, &c, &pr), TC_EINVAL); /* was predicted */
	struct tc_call x = c;
	x.coll = TC_COLL_COUNT;
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EINVAL);
	x = c;
	x.root = 6;
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EROOT);
	x.root = -1;
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EROOT);
	x = c;
	x.alg = "no_such_algorithm";
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EALG);
	x.alg = "hypercube";
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_ENOTSUP);
	x = c;
	x.bytes = 63; /* not a multiple of the element */
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EINVAL);
	x.bytes = (size_t)TC_MAX_MESSAGE + 8; /* the header's code (was TC_EINVAL) */
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EOVERFLOW);
	x = c;
	x.coll = TC_COLL_ALLGATHER;
	x.bytes = (size_t)TC_MAX_MESSAGE / 4; /* p blocks overflow */
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EOVERFLOW);
	x = c;
	x.packets = -1;
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EINVAL);
	x = c;
	x.coll = TC_COLL_MULTICAST;
	x.members = (const int[]){1, 1};
	x.nmembers = 2;
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EINVAL);
	x.members = (const int[]){1, 6};
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EINVAL); /* a bad member set (struct tc_call) */
	x = c;
	x.counts = (const size_t[6]){1, 1, 1, 1, 1, 1}; /* not a v-collective */
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EINVAL);
	x = c;
	x.coll = TC_COLL_ALLGATHERV;
	cr_assert_eq(tc_predict_call(t, &md, &x, &pr), TC_EINVAL); /* no counts */
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_BCAST, "nope"), TC_EALG);
	cr_assert_eq(tc_alg_applies(t, &md, TC_COLL_BCAST, "hypercube"), TC_ENOTSUP);
	tc_topo_destroy(t);
}

/* A user operator that counts its calls (inout = in + inout on doubles). */
static int count_op_calls;
static void count_fn(const void *in, void *inout, size_t n, enum tc_dtype dt, void *ctx)
{
	(void)dt;
	(void)ctx;
	count_op_calls++;
	for (size_t i = 0; i < n; i++)
		((double *)inout)[i] += ((const double *)in)[i];
}
static const struct tc_user_op count_op = {.fn = count_fn, .commutative = 1};

/* The calls without a team: topology queries and the local reduction. */
Test(error, topology_and_local_rows, .timeout = 10)
{
	struct tc_topo *t, *u = NULL;
	cr_assert_eq(tc_topo_parse("torus:3x4", &t), 0);
	const int *nb;
	int path[16], co[2] = {7, 9}, dims[3] = {0, 3, -1};
	cr_assert_eq(tc_topo_neighbors(t, 12, &nb), TC_ERANK);
	cr_assert_eq(tc_topo_neighbors(t, -1, &nb), TC_ERANK);
	cr_assert_eq(tc_topo_neighbor_index(t, 0, 99), -1);
	cr_assert_eq(tc_topo_next_hop(t, -1, 0), TC_ERANK);
	cr_assert_eq(tc_topo_route(t, 0, 12, path, 16), TC_ERANK);
	cr_assert_eq(tc_topo_route(t, 0, 5, NULL, 4), TC_EINVAL);
	cr_assert_eq(tc_topo_route(t, 0, 5, path, -1), TC_EINVAL);
	cr_assert_eq(tc_topo_distance(t, 0, 12), TC_ERANK);
	cr_assert_eq(tc_topo_coords(t, 12, co), TC_ERANK);
	cr_assert_eq(tc_topo_rank_of(t, co), TC_ERANK);
	cr_assert_eq(tc_topo_create(TC_TOPO_MESH, 2, dims, 0, &u), TC_ETOPO);
	cr_assert_eq(tc_topo_create(TC_TOPO_MESH, -1, dims, 0, &u), TC_ETOPO);
	cr_assert_eq(tc_topo_create((enum tc_topo_kind)99, 1, dims + 1, 0, &u), TC_ETOPO);
	cr_assert_eq(tc_topo_create(TC_TOPO_MESH, 2, NULL, 0, &u), TC_EINVAL);
	cr_assert_eq(tc_topo_parse(NULL, &u), TC_EINVAL);
	cr_assert_eq(tc_topo_parse("ring:4", NULL), TC_EINVAL);
	cr_assert_null(u);
	tc_topo_destroy(t);
	int a[4] = {0}, b[4] = {0};
	cr_assert_eq(tc_reduce_local(NULL, NULL, 4, TC_INT32, TC_OP_SUM, NULL), TC_ENULLBUF);
	cr_assert_eq(tc_reduce_local(NULL, NULL, 0, TC_INT32, TC_OP_SUM, NULL), 0);
	cr_assert_eq(tc_reduce_local(a, b, 4, TC_DTYPE_COUNT, TC_OP_SUM, NULL), TC_EINVAL);
	cr_assert_eq(tc_reduce_local(a, b, 4, TC_INT32, TC_OP_USER, NULL), TC_EINVAL);
	cr_assert_eq(tc_reduce_local(a, b, 4, TC_INT32, (enum tc_op)77, NULL), TC_EINVAL);
	cr_assert_eq(tc_reduce_local(a, b, 4, TC_DOUBLE, TC_OP_BXOR, NULL), TC_ENOTSUP);
	/* count x 8 wraps (was a crash: the kernel ran over the buffers), or is
	 * above TC_MAX_MESSAGE: the collectives' TC_EOVERFLOW, nothing written */
	double x[2] = {1, 1}, y[2] = {2, 2};
	cr_assert_eq(tc_reduce_local(x, y, SIZE_MAX, TC_DOUBLE, TC_OP_SUM, NULL), TC_EOVERFLOW);
	cr_assert_eq(tc_reduce_local(x, y, SIZE_MAX / 8 + 2, TC_DOUBLE, TC_OP_SUM, NULL), TC_EOVERFLOW);
	cr_assert_eq(tc_reduce_local(x, y, TC_MAX_MESSAGE / 8 + 1, TC_DOUBLE, TC_OP_SUM, NULL),
	             TC_EOVERFLOW);
	cr_assert_eq(tc_reduce_local(x, y, SIZE_MAX, TC_DOUBLE, TC_OP_USER, &count_op), TC_EOVERFLOW);
	/* a user operator is not handed NULL buffers (was called with them) */
	cr_assert_eq(tc_reduce_local(NULL, y, 2, TC_DOUBLE, TC_OP_USER, &count_op), TC_ENULLBUF);
	cr_assert_eq(count_op_calls, 0);
	cr_assert(y[0] == 2 && y[1] == 2);
	cr_assert_eq(tc_reduce_local(x, y, 2, TC_DOUBLE, TC_OP_USER, &count_op), 0);
	cr_assert_eq(count_op_calls, 1);
	cr_assert_eq(tc_reduce_local(x, y, 2, TC_DOUBLE, TC_OP_SUM, NULL), 0);
	cr_assert(y[0] == 4 && y[1] == 4);
	cr_assert_eq(tc_coll_parse(NULL, NULL), TC_EINVAL);
	cr_assert_null(tc_alg_name(TC_COLL_COUNT, 0));
	cr_assert_null(tc_alg_name(TC_COLL_BCAST, -1));
}

/* A NULL output pointer: TC_EINVAL, the detail naming it, nothing written
 * (tc_coll_parse and tc_topo_squarest wrote through it).  The calls that
 * return nothing and fill a struct write nothing; tc_neighbors without nbrs
 * gives the degree, as tc_topo_neighbors does. */
Test(error, null_out_pointers, .timeout = 30)
{
	enum tc_coll c = TC_COLL_COUNT;
	cr_assert_eq(tc_coll_parse("bcast", NULL), TC_EINVAL);
	cr_assert(strstr(tc_error_detail(), "out is NULL"), "%s", tc_error_detail());
	cr_assert_eq(tc_coll_parse("bcast", &c), 0);
	cr_assert_eq(c, TC_COLL_BCAST);
	int a = -1, b = -1;
	cr_assert_eq(tc_topo_squarest(7, NULL, NULL), TC_EINVAL);
	cr_assert_eq(tc_topo_squarest(12, &a, NULL), TC_EINVAL);
	cr_assert(strstr(tc_error_detail(), "b is NULL"), "%s", tc_error_detail());
	cr_assert_eq(tc_topo_squarest(12, NULL, &b), TC_EINVAL);
	cr_assert(strstr(tc_error_detail(), "a is NULL"), "%s", tc_error_detail());
	cr_assert(a == -1 && b == -1);
	cr_assert_eq(tc_topo_squarest(12, &a, &b), 0);
	cr_assert(a == 3 && b == 4);

	tc_team_config_default(NULL);
	tc_model_default(NULL);
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:4";
	struct tc_team *t = NULL;
	cr_assert_eq(tc_team_create(&cfg, &t), 0);
	tc_team_get_info(t, NULL);
	tc_team_last_run(t, NULL);
	tc_team_stats(t, NULL);
	struct tc_proc *proc = NULL;
	cr_assert_eq(tc_attach(t, 0, &proc), 0);
	const int *nb = NULL;
	cr_assert_eq(tc_neighbors(proc, NULL), 2);
	cr_assert_eq(tc_neighbors(proc, &nb), 2);
	cr_assert(nb && nb[0] == 1 && nb[1] == 3);
	cr_assert_eq(tc_neighbors(NULL, &nb), TC_EINVAL);
	tc_proc_stats(proc, NULL);
	tc_last_coll(proc, NULL);
	cr_assert_eq(tc_detach(proc), 0);
	cr_assert_eq(tc_team_destroy(t), 0);
}

/* A call that makes an object through **out sets *out to NULL on every
 * error, so that the caller's destroy of it is a no-op (tc_team_create,
 * the splits and tc_attach left a caller's value there). */
Test(error, failed_creators_clear_out, .timeout = 30)
{
	static int junk;
	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = "ring:";
	struct tc_team *t = (struct tc_team *)(void *)&junk;
	cr_assert_eq(tc_team_create(&cfg, &t), TC_ETOPO);
	cr_assert_null(t);
	cr_assert_eq(tc_team_destroy(t), 0);
	t = (struct tc_team *)(void *)&junk;
	cr_assert_eq(tc_team_create(NULL, &t), TC_EINVAL);
	cr_assert_null(t);

	struct tc_proc *s = (struct tc_proc *)(void *)&junk;
	cr_assert_eq(tc_team_split(NULL, 0, 0, NULL, &s), TC_EINVAL);
	cr_assert_null(s);
	s = (struct tc_proc *)(void *)&junk;
	cr_assert_eq(tc_team_split_dims(NULL, 1, &s), TC_EINVAL);
	cr_assert_null(s);
	s = (struct tc_proc *)(void *)&junk;
	cr_assert_eq(tc_team_dup(NULL, &s), TC_EINVAL);
	cr_assert_null(s);

	cfg.topology = "ring:3";
	cr_assert_eq(tc_team_create(&cfg, &t), 0);
	s = (struct tc_proc *)(void *)&junk;
	cr_assert_eq(tc_attach(t, 3, &s), TC_ERANK);
	cr_assert_null(s);
	s = (struct tc_proc *)(void *)&junk;
	cr_assert_eq(tc_attach(NULL, 0, &s), TC_EINVAL);
	cr_assert_null(s);
	cr_assert_eq(tc_team_destroy(t), 0);

	struct tc_topo *topo;
	cr_assert_eq(tc_topo_parse("ring:6", &topo), 0);
	struct tc_model md;
	tc_model_default(&md);
	struct tc_call call = {.coll = TC_COLL_BCAST, .bytes = 64, .esize = 8, .root = 6};
	struct tc_transfer *x = (struct tc_transfer *)(void *)&junk;
	int n = 7;
	cr_assert_eq(tc_schedule_call(topo, &md, &call, &x, &n), TC_EROOT);
	cr_assert(x == NULL && n == 0);
	tc_schedule_free(x);
	x = (struct tc_transfer *)(void *)&junk;
	n = 7;
	cr_assert_eq(tc_schedule(topo, &md, TC_COLL_BCAST, NULL, 64, 0, 0, 0, &x, &n), TC_EINVAL);
	cr_assert(x == NULL && n == 0);
	tc_topo_destroy(topo);
}
