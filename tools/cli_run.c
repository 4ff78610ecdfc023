/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_run.c - topocoll run: one collective run for real over the
 * channels, its result checked against a sequential reference computed here,
 * its measured time beside the modelled time and the seed's formula.
 *
 * Inputs are chosen so that every result is exact whatever the order of
 * combination (small integers for sums, powers of two for products, any
 * values for min and max, random bits for the bitwise operators), so the
 * check is a byte comparison for every datatype and operator.
 */
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_coll.h"

const char run_help[] =
	"usage: topocoll run --topo SPEC --coll C [--alg A] [--bytes N] [options]\n"
	"\n"
	"Creates a team of p threads joined by the topology's channels, runs the\n"
	"collective for real, checks every rank's result against a sequential\n"
	"reference computed by the tool from the collective's MPI definition\n"
	"(verified: every receive buffer, and nothing written where the collective\n"
	"writes nothing), and prints the measured time\n"
	"(median over --repeat runs) beside the modelled time (the logical clock of\n"
	"the run), the seed's formula and the lower bound.  Exit status 1 when a\n"
	"result is wrong.\n"
	"  --topo SPEC --p P --coll C --alg A --bytes N --root R --q Q --along-ring\n"
	"  --members LIST --counts LIST --dtype T\n"
	"                    as for topocoll predict (--alg all is not accepted;\n"
	"                    with more ranks than CPUs, native, auto prices this\n"
	"                    machine instead of the model: the output says what ran)\n"
	"  --op OP           sum prod min max band bor bxor land lor [sum]; only for\n"
	"                    the reducing collectives (@REDUCING@)\n"
	"  --mode M          native: channels at full speed; emulated: every message\n"
	"                    takes the model's time in wall-clock time [native]\n"
	"  --repeat N        timed runs, the median is reported [1]\n"
	"  --warmup N        untimed runs first [1 native, 0 emulated]\n"
	"  --wait W          how ranks wait: auto spin yield block [auto]\n"
	"  --no-pin          do not pin the threads to CPUs\n"
	"  --timeout MS      a wait longer than this fails the run [60000; 0: never]\n"
	"  --stack BYTES     stack of each rank's thread, e.g. 256K for p = 4096\n"
	"                    [the system's default, often 8M]\n"
	"  --calibrated      native mode: first calibrate this machine (topocoll\n"
	"                    calibrate, about a second), use the calibrated model as\n"
	"                    the model (t_s and t_w of the segment of sizes holding\n"
	"                    the block, t_c), and print the measured time beside the\n"
	"                    calibrated prediction (that segment's makespan plus\n"
	"                    o_call, the cost of a call beyond its messages)\n"
	"  --json            one JSON object: measured_ns, modelled_ns, formula_ns,\n"
	"                    lower_bound_ns, algorithm, verified, rounds, stats, ...\n"
	"measured: native mode, from the moment every rank is ready (a barrier of the\n"
	"tool, outside the library) to the end of the last rank; emulated mode, from\n"
	"the run's common start (its logical time 0) to the end of the last rank.\n"
	"modelled: the largest logical clock at the end (tc_team_last_run); for the\n"
	"v-collectives (allgatherv, gatherv, scatterv, alltoallv) that includes the\n"
	"exchange in which the ranks agree on the counts, and the line after it\n"
	"gives the data's schedule alone (what predict predicts, and what the\n"
	"formula is compared with).\n" CLI_MODEL_HELP
	"examples:\n"
	"  topocoll run --topo ring:16 --coll allreduce --alg ring --bytes 8192 \\\n"
	"      --root 0 --mode emulated --ts 50000 --tw 1 --json\n"
	"  topocoll run --topo hypercube:3 --coll bcast --bytes 1M --repeat 10\n"
	"  topocoll run --topo torus:4x4 --coll reduce --bytes 4K --dtype int32 \\\n"
	"      --op max --root 5\n"
	"  topocoll run --coll allgather --alg ring --topo ring:8 --bytes 1K --mode emulated\n"
	"  topocoll run --topo torus:3x3 --coll alltoallv --counts ramp --dtype int32\n"
	"  topocoll run --topo chain:2 --coll allreduce --bytes 64K --repeat 9 --calibrated\n";

/* ---- inputs and the reference ------------------------------------------ */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int is_float(enum tc_dtype dt)
{
	return dt == TC_FLOAT || dt == TC_DOUBLE;
}

static int is_signed(enum tc_dtype dt)
{
	return dt == TC_INT8 || dt == TC_INT16 || dt == TC_INT32 || dt == TC_INT64;
}

/* Element i of buf as integer bits (zero-extended) or as a double. */
static uint64_t get_u(const unsigned char *buf, size_t i, size_t es)
{
	uint8_t a;
	uint16_t b;
	uint32_t c;
	uint64_t d = 0;
	switch (es) {
	case 1:
		memcpy(&a, buf + i, 1);
		return a;
	case 2:
		memcpy(&b, buf + 2 * i, 2);
		return b;
	case 4:
		memcpy(&c, buf + 4 * i, 4);
		return c;
	default:
		memcpy(&d, buf + 8 * i, 8);
		return d;
	}
}

static void put_u(unsigned char *buf, size_t i, size_t es, uint64_t v)
{
	uint8_t a = (uint8_t)v;
	uint16_t b = (uint16_t)v;
	uint32_t c = (uint32_t)v;
	switch (es) {
	case 1:
		memcpy(buf + i, &a, 1);
		break;
	case 2:
		memcpy(buf + 2 * i, &b, 2);
		break;
	case 4:
		memcpy(buf + 4 * i, &c, 4);
		break;
	default:
		memcpy(buf + 8 * i, &v, 8);
		break;
	}
}

static double get_f(const unsigned char *buf, size_t i, enum tc_dtype dt)
{
	if (dt == TC_FLOAT) {
		float f;
		memcpy(&f, buf + 4 * i, 4);
		return f;
	}
	double d;
	memcpy(&d, buf + 8 * i, 8);
	return d;
}

static void put_f(unsigned char *buf, size_t i, enum tc_dtype dt, double v)
{
	if (dt == TC_FLOAT) {
		float f = (float)v;
		memcpy(buf + 4 * i, &f, 4);
	} else {
		memcpy(buf + 8 * i, &v, 8);
	}
}

/* Signed value of integer bits of width es. */
static int64_t sext(uint64_t v, size_t es)
{
	if (es == 8)
		return (int64_t)v;
	uint64_t sign = (uint64_t)1 << (8 * es - 1);
	uint64_t mask = (sign << 1) - 1;
	v &= mask;
	return v & sign ? (int64_t)(v | ~mask) : (int64_t)v;
}

/* Rank r's contribution at element i: exact under any combination order. */
static void gen_input(unsigned char *buf, size_t count, enum tc_dtype dt, enum tc_op op, int r,
                      int p)
{
	size_t es = tc_dtype_size(dt);
	int sg = is_signed(dt) || is_float(dt);
	for (size_t i = 0; i < count; i++) {
		uint64_t h = mix(((uint64_t)r << 40) ^ i ^ ((uint64_t)op << 56));
		int64_t v;
		switch (op) {
		case TC_OP_SUM:
			v = (int64_t)(h % 11) - (sg ? 5 : 0);
			break;
		case TC_OP_PROD:
			/* 1 mostly, 2 on one rank per element, -1 sometimes; floats
			 * also 0.5 (below). */
			v = (i % (size_t)p) == (size_t)r ? 2 : (sg && h % 7 == 0 ? -1 : 1);
			break;
		case TC_OP_MIN:
		case TC_OP_MAX:
			v = sg ? (int64_t)(h % 201) - 100 : (int64_t)(h % 251);
			break;
		case TC_OP_LAND:
		case TC_OP_LOR:
			v = h % 5 == 0 ? 0 : (int64_t)(h % 3) + 1;
			break;
		default: /* bitwise: every bit random */
			put_u(buf, i, es, h);
			continue;
		}
		if (is_float(dt)) {
			double d = (double)v;
			if (op == TC_OP_PROD && v == 1 && h % 5 == 1)
				d = 0.5;
			put_f(buf, i, dt, d);
		} else {
			put_u(buf, i, es, (uint64_t)v);
		}
	}
}

/* acc = acc (op) x, element-wise: the sequential reference. */
static void ref_combine(unsigned char *acc, const unsigned char *x, size_t count, enum tc_dtype dt,
                        enum tc_op op)
{
	size_t es = tc_dtype_size(dt);
	for (size_t i = 0; i < count; i++) {
		if (is_float(dt)) {
			double a = get_f(acc, i, dt), b = get_f(x, i, dt), c;
			switch (op) {
			case TC_OP_SUM:
				c = a + b;
				break;
			case TC_OP_PROD:
				c = a * b;
				break;
			case TC_OP_MIN:
				c = b < a ? b : a;
				break;
			default:
				c = b > a ? b : a;
				break;
			}
			put_f(acc, i, dt, c);
			continue;
		}
		uint64_t a = get_u(acc, i, es), b = get_u(x, i, es), c;
		int64_t sa = sext(a, es), sb = sext(b, es);
		int sg = is_signed(dt);
		switch (op) {
		case TC_OP_SUM:
			c = a + b;
			break;
		case TC_OP_PROD:
			c = a * b;
			break;
		case TC_OP_MIN:
			c = sg ? (sb < sa ? b : a) : (b < a ? b : a);
			break;
		case TC_OP_MAX:
			c = sg ? (sb > sa ? b : a) : (b > a ? b : a);
			break;
		case TC_OP_BAND:
			c = a & b;
			break;
		case TC_OP_BOR:
			c = a | b;
			break;
		case TC_OP_BXOR:
			c = a ^ b;
			break;
		case TC_OP_LAND:
			c = (sext(a, es) != 0) && (sext(b, es) != 0);
			break;
		default:
			c = (sext(a, es) != 0) || (sext(b, es) != 0);
			break;
		}
		put_u(acc, i, es, c);
	}
}

/* ---- the SPMD function ------------------------------------------------- */

struct run_ctx {
	const struct cli_run_args *a;
	int p;
	size_t count;
	int emulated;
	unsigned char **in;  /* send buffers (NULL where the rank has none) */
	unsigned char **out; /* receive buffers (bcast: the buffer) */
	uint64_t *t0, *t1;
	struct tc_coll_info *info;
	_Atomic unsigned bar_count, bar_gen;
	_Atomic int bar_sleepers; /* ranks asleep in tool_barrier */
	int fibres;               /* the team runs its ranks as fibres */
	_Atomic int arrived; /* barrier check */
	_Atomic int barrier_bad;
	/* The v-collectives: rank r's counts and displacements (elements). */
	size_t **vsc, **vsd, **vrc, **vrd;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The tool's own barrier before the timed call (native mode), so that the
 * measurement starts when every rank is ready; outside the library, so the
 * logical clocks do not move. */
static void tool_barrier(struct run_ctx *c, struct tc_proc *proc)
{
	/* Acquire: pairs with the release store of bar_gen by the last arriver. */
	unsigned gen = atomic_load_explicit(&c->bar_gen, memory_order_acquire);
	/* Acq_rel: the last arriver sees every earlier arrival. */
	if (atomic_fetch_add_explicit(&c->bar_count, 1, memory_order_acq_rel) == (unsigned)c->p - 1) {
		/* Relaxed: published by the release store below. */
		atomic_store_explicit(&c->bar_count, 0, memory_order_relaxed);
		/* Release: pairs with the acquire loads of the waiters. */
		atomic_store_explicit(&c->bar_gen, gen + 1, memory_order_release);
		if (atomic_load_explicit(&c->bar_sleepers, memory_order_seq_cst))
			syscall(SYS_futex, &c->bar_gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
		return;
	}
	/* Acquire: pairs with the release store of the last arriver.  A few
	 * yields, then sleep: with thousands of ranks on a few CPUs, ranks that
	 * yield in a loop starve the ones still on their way (each yield a pass
	 * over every thread of the CPU). */
	for (int i = 0; atomic_load_explicit(&c->bar_gen, memory_order_acquire) == gen; i++) {
		/* On fibres a futex wait would block the CPU's other ranks (the
		 * last arriver may be one of them): tc_yield runs them. */
		if (i < 64 || c->fibres) {
			tc_yield(proc);
			continue;
		}
		/* Seq_cst: the waker reads bar_sleepers after its store of
		 * bar_gen, we read bar_gen (in the futex call) after this. */
		atomic_fetch_add_explicit(&c->bar_sleepers, 1, memory_order_seq_cst);
		syscall(SYS_futex, &c->bar_gen, FUTEX_WAIT_PRIVATE, gen, NULL, NULL, 0);
		atomic_fetch_sub_explicit(&c->bar_sleepers, 1, memory_order_seq_cst);
	}
}

static int run_rank(struct tc_proc *proc, void *arg)
{
	struct run_ctx *c = arg;
	const struct cli_run_args *a = c->a;
	int r = tc_rank(proc);
	struct tc_coll_opts opts = {.alg = a->alg, .packets = a->packets,
	                            .shift_ring = a->shift_ring};
	tc_proc_stats_reset(proc);
	if (!c->emulated)
		tool_barrier(c, proc);
	c->t0[r] = now_ns();
	int err;
	const void *in = c->in[r];
	void *out = c->out[r];
	/* The entry points by signature; the buffers come from the shape. */
	switch (a->coll) {
	case TC_COLL_BCAST:
		err = tc_bcast(proc, out, c->count, a->dt, a->root, &opts);
		break;
	case TC_COLL_REDUCE:
		err = tc_reduce(proc, in, out, c->count, a->dt, a->op, a->root, &opts);
		break;
	case TC_COLL_ALLREDUCE:
		err = tc_allreduce(proc, in, out, c->count, a->dt, a->op, &opts);
		break;
	case TC_COLL_ALLGATHER:
		err = tc_allgather(proc, in, out, c->count, a->dt, &opts);
		break;
	case TC_COLL_REDUCE_SCATTER:
		err = tc_reduce_scatter(proc, in, out, c->count, a->dt, a->op, &opts);
		break;
	case TC_COLL_SCAN:
		err = tc_scan(proc, in, out, c->count, a->dt, a->op, &opts);
		break;
	case TC_COLL_EXSCAN:
		err = tc_exscan(proc, in, out, c->count, a->dt, a->op, &opts);
		break;
	case TC_COLL_SCATTER:
		err = tc_scatter(proc, in, out, c->count, a->dt, a->root, &opts);
		break;
	case TC_COLL_GATHER:
		err = tc_gather(proc, in, out, c->count, a->dt, a->root, &opts);
		break;
	case TC_COLL_ALLTOALL:
		err = tc_alltoall(proc, in, out, c->count, a->dt, &opts);
		break;
	case TC_COLL_SHIFT:
		/* q as the library takes it (an int), reduced mod p first. */
		err = tc_shift(proc, in, out, c->count, a->dt, (int)(a->q % c->p), &opts);
		break;
	case TC_COLL_GRAY2BINARY:
		err = tc_gray2binary(proc, in, out, c->count, a->dt, &opts);
		break;
	case TC_COLL_BINARY2GRAY:
		err = tc_binary2gray(proc, in, out, c->count, a->dt, &opts);
		break;
	case TC_COLL_MULTICAST:
		err = tc_multicast(proc, out, c->count, a->dt, a->root, a->members, a->nmembers,
		                   &opts);
		break;
	case TC_COLL_ALLGATHERV:
		err = tc_allgatherv(proc, in, c->vsc[r][0], out, c->vrc[r], c->vrd[r], a->dt, &opts);
		break;
	case TC_COLL_GATHERV:
		err = tc_gatherv(proc, in, c->vsc[r][a->root], out, c->vrc[r], c->vrd[r], a->dt,
		                 a->root, &opts);
		break;
	case TC_COLL_SCATTERV:
		err = tc_scatterv(proc, in, c->vsc[r], c->vsd[r], out, c->vrc[r][a->root], a->dt,
		                  a->root, &opts);
		break;
	case TC_COLL_ALLTOALLV:
		err = tc_alltoallv(proc, in, c->vsc[r], c->vsd[r], out, c->vrc[r], c->vrd[r], a->dt,
		                   &opts);
		break;
	case TC_COLL_BARRIER:
		/* Release: this rank's arrival is visible to whoever leaves the
		 * barrier after it; pairs with the acquire load below. */
		atomic_fetch_add_explicit(&c->arrived, 1, memory_order_release);
		err = tc_barrier(proc, &opts);
		/* Acquire: pairs with the other ranks' release increments. */
		if (!err && atomic_load_explicit(&c->arrived, memory_order_acquire) != c->p)
			atomic_store_explicit(&c->barrier_bad, 1, memory_order_relaxed);
		break;
	default:
		err = TC_EINVAL;
		break;
	}
	c->t1[r] = now_ns();
	tc_last_coll(proc, &c->info[r]);
	return err;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* The input of rank r (send buffer; for bcast, the root's buffer), in
 * bytes, 0 when it has none. */
static uint64_t input_bytes(const struct cli_run_args *a, int p, int r)
{
	unsigned f = tc_coll_flags(a->coll);
	if (f & TC_CF_VCOUNT)
		return cli_v_send_elems(a->coll, p, a->root, a->vcounts, r) * tc_dtype_size(a->dt);
	if ((f & (TC_CF_NO_SEND | TC_CF_NO_DATA)) == TC_CF_NO_SEND)
		return r == a->root ? a->bytes : 0;
	return cli_send_bytes(a->coll, p, a->root, r, a->bytes);
}

/* Rank r's receive buffer is never written (exscan's rank 0) or holds the
 * input at the start (bcast's root): it starts as it should end. */
static int starts_done(const struct cli_run_args *a, int r)
{
	unsigned f = tc_coll_flags(a->coll);
	return (f & TC_CF_RECV_NOT0 && r == 0) || (f & TC_CF_NO_SEND && r == a->root);
}

/* dst = block b of the inputs of ranks lo..hi combined in rank order. */
static void ref_fold(unsigned char *dst, unsigned char *const *in, int lo, int hi, size_t b,
                     const struct cli_run_args *a, size_t count)
{
	size_t m = (size_t)a->bytes;
	memcpy(dst, in[lo] + b * m, m);
	for (int q = lo + 1; q <= hi; q++)
		ref_combine(dst, in[q] + b * m, count, a->dt, a->op);
}

/* The sequential reference: rank r's receive buffer after the call, by the
 * MPI definition of the collective (ranks with a receive buffer only). */
static void ref_result(const struct cli_run_args *a, int p, int r, unsigned char *const *in,
                       size_t count, unsigned char *dst)
{
	size_t m = (size_t)a->bytes;
	if (tc_coll_flags(a->coll) & TC_CF_VCOUNT) {
		/* Rank i's block for r, at its packed place. */
		const size_t es = tc_dtype_size(a->dt);
		for (int i = 0; i < p; i++) {
			uint64_t n = cli_v_elems(a->coll, p, a->root, a->vcounts, i, r);
			if (n)
				memcpy(dst + cli_v_roff(a->coll, p, a->root, a->vcounts, i, r) * es,
				       in[i] + cli_v_soff(a->coll, p, a->root, a->vcounts, i, r) * es,
				       (size_t)n * es);
		}
		return;
	}
	switch (a->coll) {
	case TC_COLL_BCAST:
	case TC_COLL_MULTICAST:
		memcpy(dst, in[a->root], m);
		break;
	case TC_COLL_SHIFT:
	case TC_COLL_GRAY2BINARY:
	case TC_COLL_BINARY2GRAY:
		memcpy(dst, in[cli_perm_source(a->coll, p, a->q, a->gray_ring, r)], m);
		break;
	case TC_COLL_REDUCE:
	case TC_COLL_ALLREDUCE:
		ref_fold(dst, in, 0, p - 1, 0, a, count);
		break;
	case TC_COLL_ALLGATHER:
	case TC_COLL_GATHER:
		for (int i = 0; i < p; i++)
			memcpy(dst + (size_t)i * m, in[i], m);
		break;
	case TC_COLL_REDUCE_SCATTER:
		ref_fold(dst, in, 0, p - 1, (size_t)r, a, count);
		break;
	case TC_COLL_SCAN:
		ref_fold(dst, in, 0, r, 0, a, count);
		break;
	case TC_COLL_EXSCAN:
		ref_fold(dst, in, 0, r - 1, 0, a, count);
		break;
	case TC_COLL_SCATTER:
		memcpy(dst, in[a->root] + (size_t)r * m, m);
		break;
	case TC_COLL_ALLTOALL:
		for (int i = 0; i < p; i++)
			memcpy(dst + (size_t)i * m, in[i] + (size_t)r * m, m);
		break;
	default:
		break;
	}
}

/* The v-collectives: every rank's counts and displacements, as MPI's
 * v-calls take them (packed); 0, or -1 out of memory (freed by the caller). */
static int v_arrays(struct run_ctx *c, const struct cli_run_args *a)
{
	const int p = c->p;
	size_t ***arr[4] = {&c->vsc, &c->vsd, &c->vrc, &c->vrd};
	for (int k = 0; k < 4; k++)
		if (!(*arr[k] = calloc((size_t)p, sizeof **arr[k])))
			return -1;
	for (int r = 0; r < p; r++) {
		for (int k = 0; k < 4; k++)
			if (!((*arr[k])[r] = malloc((size_t)p * sizeof(size_t))))
				return -1;
		for (int j = 0; j < p; j++) {
			c->vsc[r][j] = (size_t)cli_v_elems(a->coll, p, a->root, a->vcounts, r, j);
			c->vsd[r][j] = (size_t)cli_v_soff(a->coll, p, a->root, a->vcounts, r, j);
			c->vrc[r][j] = (size_t)cli_v_elems(a->coll, p, a->root, a->vcounts, j, r);
			c->vrd[r][j] = (size_t)cli_v_roff(a->coll, p, a->root, a->vcounts, j, r);
		}
	}
	return 0;
}

int cli_run_coll(struct tc_team *team, const struct cli_run_args *a, struct cli_run_result *res)
{
	int p = tc_team_size(team);
	size_t es = tc_dtype_size(a->dt);
	size_t bytes = (size_t)a->bytes;
	unsigned flags = tc_coll_flags(a->coll);
	struct run_ctx c = {.a = a, .p = p, .count = bytes / es};
	memset(res, 0, sizeof *res);
	res->mismatch_rank = -1;
	struct tc_run_info ri;
	c.emulated = a->emulated;
	struct tc_team_info ti;
	tc_team_get_info(team, &ti);
	c.fibres = ti.exec == TC_EXEC_FIBRES;
	int err = TC_ENOMEM;
	c.in = calloc((size_t)p, sizeof *c.in);
	c.out = calloc((size_t)p, sizeof *c.out);
	/* The expected receive buffers; ranks expecting what rank 0 expects
	 * share its copy (exp_own[r] == 0). */
	unsigned char **exp = calloc((size_t)p, sizeof *exp);
	unsigned char *exp_own = calloc((size_t)p, 1);
	size_t *rlen = calloc((size_t)p, sizeof *rlen);
	c.t0 = calloc((size_t)p, sizeof *c.t0);
	c.t1 = calloc((size_t)p, sizeof *c.t1);
	c.info = calloc((size_t)p, sizeof *c.info);
	int nrun = a->repeat > 0 ? a->repeat : 1;
	double *meas = calloc((size_t)nrun, sizeof *meas);
	if (!c.in || !c.out || !exp || !exp_own || !rlen || !c.t0 || !c.t1 || !c.info || !meas)
		goto out;
	int reduces = !!(flags & TC_CF_REDUCES);
	const int v = !!(flags & TC_CF_VCOUNT);
	if (v && v_arrays(&c, a))
		goto out;
	for (int r = 0; r < p; r++) {
		size_t il = (size_t)input_bytes(a, p, r);
		rlen[r] = v ? (size_t)(cli_v_recv_elems(a->coll, p, a->root, a->vcounts, r) * es)
		            : (size_t)cli_recv_bytes(a->coll, p, a->root, r, a->bytes);
		if (!cli_takes_part(a->coll, a->root, a->members, a->nmembers, r))
			rlen[r] = 0; /* a multicast's non-member passes no buffer */
		if (il && !(c.in[r] = malloc(il)))
			goto out;
		if (rlen[r] && !(c.out[r] = malloc(rlen[r])))
			goto out;
		if (!il)
			continue;
		if (reduces)
			gen_input(c.in[r], il / es, a->dt, a->op, r, p);
		else
			for (size_t i = 0; i < il; i++)
				c.in[r][i] = (unsigned char)mix(((uint64_t)r << 40) ^ i);
	}
	/* The references. */
	for (int r = 0; r < p; r++) {
		if (!rlen[r])
			continue;
		unsigned char *e = malloc(rlen[r]);
		if (!e)
			goto out;
		if (flags & TC_CF_RECV_NOT0 && r == 0) {
			for (size_t i = 0; i < rlen[r]; i++) /* untouched: a guard pattern */
				e[i] = (unsigned char)mix(((uint64_t)0xabcdu << 40) ^ i);
		} else {
			ref_result(a, p, r, c.in, c.count, e);
		}
		int r0 = 0;
		while (r0 < r && !(exp[r0] && exp_own[r0]))
			r0++;
		if (r0 < r && rlen[r0] == rlen[r] && !memcmp(exp[r0], e, rlen[r])) {
			free(e);
			exp[r] = exp[r0];
		} else {
			exp[r] = e;
			exp_own[r] = 1;
		}
	}

	res->verified = 1;
	int total = (a->warmup > 0 ? a->warmup : 0) + nrun;
	for (int k = 0; k < total; k++) {
		/* Fresh buffers: the bcast root holds the data, every other
		 * output holds the complement of the expected bytes. */
		for (int r = 0; r < p; r++) {
			if (!c.out[r])
				continue;
			if (starts_done(a, r))
				memcpy(c.out[r], exp[r], rlen[r]);
			else
				for (size_t i = 0; i < rlen[r]; i++)
					c.out[r][i] = (unsigned char)~exp[r][i];
		}
		atomic_store(&c.arrived, 0);
		atomic_store(&c.barrier_bad, 0);
		err = tc_run(team, run_rank, &c);
		if (err)
			goto out;
		res->runs++;
		/* Check. */
		for (int r = 0; r < p && res->mismatch_rank < 0; r++) {
			if (!c.out[r] || !memcmp(c.out[r], exp[r], rlen[r]))
				continue;
			size_t i = 0;
			while (c.out[r][i] == exp[r][i])
				i++;
			res->mismatch_rank = r;
			res->mismatch_elem = i / es;
		}
		if (atomic_load(&c.barrier_bad))
			res->barrier_early = 1;
		for (int r = 1; r < p; r++)
			if (!c.info[r].algorithm || !c.info[0].algorithm ||
			    strcmp(c.info[r].algorithm, c.info[0].algorithm))
				res->alg_disagree = 1;
		if (res->mismatch_rank >= 0 || res->barrier_early || res->alg_disagree)
			res->verified = 0;
		tc_team_last_run(team, &ri);
		if (k < total - nrun)
			continue;
		double m;
		if (ri.mode == TC_MODE_EMULATED) {
			m = (double)ri.wall_ns;
		} else {
			uint64_t lo = c.t0[0], hi = c.t1[0];
			for (int r = 1; r < p; r++) {
				lo = c.t0[r] < lo ? c.t0[r] : lo;
				hi = c.t1[r] > hi ? c.t1[r] : hi;
			}
			m = (double)(hi - lo);
		}
		meas[k - (total - nrun)] = m;
	}
	qsort(meas, (size_t)nrun, sizeof *meas, cmp_double);
	res->measured_ns = nrun % 2 ? meas[nrun / 2] : (meas[nrun / 2 - 1] + meas[nrun / 2]) / 2;
	res->measured_min_ns = meas[0];
	res->measured_max_ns = meas[nrun - 1];
	res->modelled_ns = (double)ri.makespan_ps / TC_PS_PER_NS;
	res->coll_modelled_ns = (double)c.info[0].modelled_ps / TC_PS_PER_NS;
	res->rounds = c.info[0].rounds;
	res->algorithm = c.info[0].algorithm;
	tc_team_stats(team, &res->stats);
	err = 0;
out:
	for (int r = 0; c.in && r < p; r++)
		free(c.in[r]);
	for (int r = 0; c.out && r < p; r++)
		free(c.out[r]);
	for (int r = 0; exp && exp_own && r < p; r++)
		if (exp_own[r])
			free(exp[r]);
	free(exp);
	free(exp_own);
	free(rlen);
	free(c.in);
	free(c.out);
	free(c.t0);
	free(c.t1);
	free(c.info);
	free(meas);
	size_t **varr[4] = {c.vsc, c.vsd, c.vrc, c.vrd};
	for (int k = 0; k < 4; k++) {
		for (int r = 0; varr[k] && r < p; r++)
			free(varr[k][r]);
		free(varr[k]);
	}
	return err;
}

/* ---- topocoll run ------------------------------------------------------ */

struct run_opts {
	int emulated;
	long repeat, warmup;
	long timeout_ms;
	enum tc_wait_policy wait;
	int no_pin;
	uint64_t stack_bytes;
	int calibrated;
};

static int run_extra(int argc, char **argv, int *i, void *ctx)
{
	struct run_opts *o = ctx;
	const char *v;
	int r;
	if (!strcmp(argv[*i], "--no-pin")) {
		o->no_pin = 1;
		return 1;
	}
	if (!strcmp(argv[*i], "--calibrated")) {
		o->calibrated = 1;
		return 1;
	}
	if ((r = cli_opt(argc, argv, i, "--mode", &v)) == 1)
		return cli_choice("--mode", v, "native", "emulated", &o->emulated) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--repeat", &v)) == 1)
		return cli_parse_long("--repeat", v, 1, 1000000, &o->repeat) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--warmup", &v)) == 1)
		return cli_parse_long("--warmup", v, 0, 1000000, &o->warmup) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--timeout", &v)) == 1)
		return cli_parse_long("--timeout", v, 0, 86400000, &o->timeout_ms) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--stack", &v)) == 1) {
		if (cli_parse_size("--stack", v, (uint64_t)1 << 30, &o->stack_bytes))
			return CLI_USAGE;
		if (o->stack_bytes && o->stack_bytes < 64 * 1024)
			return cli_usage("--stack: at least 64K, got '%s'", v);
		return 1;
	}
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--wait", &v)) == 1) {
		static const char *const names[] = {"auto", "spin", "yield", "block"};
		for (int k = 0; k < 4; k++)
			if (!strcmp(v, names[k])) {
				o->wait = (enum tc_wait_policy)k;
				return 1;
			}
		return cli_usage("--wait: expected auto, spin, yield or block, got '%s'", v);
	}
	return r;
}

/* Largest memory the run's buffers may take: half the physical memory. */
static uint64_t run_mem_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || psz <= 0)
		return (uint64_t)1 << 32;
	return (uint64_t)pages * (uint64_t)psz / 2;
}

int cli_run_wrong(const char *cmd, const struct cli_run_result *rr)
{
	if (rr->mismatch_rank >= 0)
		return cli_fail("%s: wrong result on rank %d at element %llu", cmd, rr->mismatch_rank,
		                (unsigned long long)rr->mismatch_elem);
	if (rr->barrier_early)
		return cli_fail("%s: a rank left the barrier before every rank had entered it", cmd);
	return cli_fail("%s: the ranks report different algorithms", cmd);
}

int cli_run_check_memory(int p, enum tc_coll coll, uint64_t bytes)
{
	/* Send and receive buffers of every rank, and the references (at most
	 * one per receive buffer), in blocks of m; root 0 (the most). */
	uint64_t blocks = 1;
	unsigned f = tc_coll_flags(coll);
	for (int r = 0; r < p; r++) {
		uint64_t in = cli_send_bytes(coll, p, 0, r, 1) +
		              ((f & (TC_CF_NO_SEND | TC_CF_NO_DATA)) == TC_CF_NO_SEND && r == 0);
		blocks += in + 2 * cli_recv_bytes(coll, p, 0, r, 1);
	}
	uint64_t need = bytes * blocks;
	if (bytes && need / bytes != blocks)
		need = UINT64_MAX;
	uint64_t lim = run_mem_limit();
	if (need > lim) {
		char b1[32], b2[32];
		return cli_usage("run: %d ranks x %s per block need %s of buffers, above the limit of "
		                 "%s (half the memory)",
		                 p, cli_bytes(bytes, b1, sizeof b1), cli_bytes(need, b2, sizeof b2),
		                 cli_bytes(lim, (char[32]){0}, 32));
	}
	return 0;
}

int cli_run_check_memory_v(int p, enum tc_coll coll, int root, const size_t *v, size_t es)
{
	/* Send and receive buffers, and the references. */
	uint64_t elems = 0;
	for (int r = 0; r < p; r++)
		elems += cli_v_send_elems(coll, p, root, v, r) +
		         2 * cli_v_recv_elems(coll, p, root, v, r);
	uint64_t lim = run_mem_limit();
	if (elems > lim / es) {
		char b1[32];
		return cli_usage("run: the buffers of these counts need %llu elements of %zu bytes, "
		                 "above the limit of %s (half the memory)",
		                 (unsigned long long)elems, es, cli_bytes(lim, b1, sizeof b1));
	}
	return 0;
}

void cli_stats_json(struct cli_json *w, const struct tc_stats *s)
{
	cli_json_obj(w, "stats");
	cli_json_uint(w, "msgs_sent", s->msgs_sent);
	cli_json_uint(w, "bytes_sent", s->bytes_sent);
	cli_json_uint(w, "msgs_recv", s->msgs_recv);
	cli_json_uint(w, "bytes_recv", s->bytes_recv);
	cli_json_uint(w, "packets_sent", s->packets_sent);
	cli_json_uint(w, "single_copy", s->single_copy);
	cli_json_uint(w, "waits_blocked", s->waits_blocked);
	cli_json_uint(w, "rounds", s->rounds);
	cli_json_uint(w, "transfers_sent", s->transfers_sent);
	cli_json_uint(w, "transfers_recv", s->transfers_recv);
	cli_json_uint(w, "forwarded", s->forwarded);
	cli_json_end_obj(w);
}

int cmd_run(int argc, char **argv)
{
	struct cli_case cs;
	struct run_opts o = {.repeat = 1, .warmup = -1, .timeout_ms = 60000};
	int json = 0;
	int err = cli_case_parse("run", argc, argv, CLI_CASE_DATA, &cs, &json, run_extra, &o);
	if (err)
		return err == -1 ? CLI_OK : err;
	int status = CLI_OK;
	struct tc_team *team = NULL;
	int p = tc_topo_nodes(cs.t);
	const int vc = !!(tc_coll_flags(cs.coll) & TC_CF_VCOUNT);
	if ((status = vc ? cli_run_check_memory_v(p, cs.coll, cs.root, cs.vcounts,
	                                          tc_dtype_size(cs.dt))
	                 : cli_run_check_memory(p, cs.coll, cs.bytes)) != 0)
		goto out;

	/* --calibrated: this machine's parameters become the model (t_h 0:
	 * the channels are one hop), before anything is predicted. */
	struct tc_calibration cal;
	if (o.calibrated) {
		if (o.emulated) {
			status = cli_usage("run: --calibrated measures the native channels; not with "
			                   "--mode emulated");
			goto out;
		}
		struct tc_calibrate_opts co;
		memset(&co, 0, sizeof co);
		co.no_pin = o.no_pin;
		if (cs.bytes > ((uint64_t)4 << 20))
			co.max_bytes = cs.bytes < ((uint64_t)64 << 20) ? (size_t)cs.bytes : (size_t)64 << 20;
		err = tc_model_calibrate(&co, &cal);
		if (err) {
			status = cli_fail("run: calibration failed: %s", tc_strerror(err));
			goto out;
		}
		/* The model of the segment holding the block size (the
		 * calibrated model, calibrate.h); the rest of the user's model
		 * (ports, duplex, switching) stays. */
		struct tc_model seg;
		if (tc_calibration_model(&cal, cs.bytes, &seg, NULL) != 0) {
			status = cli_fail("run: the calibration fitted no line");
			goto out;
		}
		cs.model.md.ts_ns = seg.ts_ns;
		cs.model.md.tw_ns = seg.tw_ns;
		cs.model.md.tc_ns = seg.tc_ns;
		cs.model.md.th_ns = 0;
	}

	/* Predict first: an algorithm that does not apply is a usage error,
	 * found before any thread starts; and it gives the formula. */
	struct tc_prediction pr;
	if ((status = cli_case_predict(&cs, &pr)) != 0)
		goto out;

	struct tc_team_config cfg;
	tc_team_config_default(&cfg);
	cfg.topology = cli_topo_name(cs.t);
	cfg.model = cs.model.md;
	cfg.mode = o.emulated ? TC_MODE_EMULATED : TC_MODE_NATIVE;
	cfg.wait = o.wait;
	cfg.no_pin = o.no_pin;
	cfg.timeout_ms = (uint64_t)o.timeout_ms;
	cfg.stack_bytes = (size_t)o.stack_bytes;
	err = tc_team_create(&cfg, &team);
	if (err) {
		status = err == TC_EINVAL ? cli_usage("run: the team rejects this configuration: %s",
		                                      tc_strerror(err))
		         : err == TC_ELIMIT ? cli_fail("run: cannot create the team: %s%s", tc_error_detail(),
		                                       strstr(tc_error_detail(), "stack")
		                                           ? " (here: --stack BYTES, e.g. --stack 256K)"
		                                           : "")
		                            : cli_fail("run: cannot create the team: %s", tc_strerror(err));
		goto out;
	}
	struct cli_run_args ra = {.coll = cs.coll, .alg = cs.alg, .bytes = cs.bytes, .dt = cs.dt,
	                          .op = cs.op, .root = cs.root, .q = cs.q,
	                          .shift_ring = cs.shift_ring,
	                          .gray_ring = cs.shift_ring && tc_topo_kind(cs.t) == TC_TOPO_HYPERCUBE,
	                          .members = cs.members,
	                          .nmembers = cs.nmembers, .repeat = (int)o.repeat,
	                          .warmup = (int)(o.warmup >= 0 ? o.warmup : !o.emulated),
	                          .packets = cs.model.packets, .emulated = o.emulated,
	                          .vcounts = cs.vcounts};
	struct cli_run_result rr;
	err = cli_run_coll(team, &ra, &rr);
	if (err) {
		status = cli_coll_error(err, cs.coll, cs.alg, cs.t, cs.root);
		goto out;
	}
	/* A v-call agrees on its counts (an exchange) before its schedule:
	 * the run's makespan holds both, the prediction and the formula the
	 * schedule (tc_last_coll) only. */
	const double vs_ns = vc ? rr.coll_modelled_ns : rr.modelled_ns;
	struct tc_team_info ti;
	tc_team_get_info(team, &ti);
	double err_pct = rr.modelled_ns > 0 ? 100 * (rr.measured_ns - rr.modelled_ns) / rr.modelled_ns
	                                    : NAN;
	/* --calibrated: measured against the prediction with this machine's
	 * parameters (that of the algorithm that ran: the model picked it). */
	double pred_ns = (double)pr.modelled_ps / TC_PS_PER_NS;
	int cal_seg = -1;
	if (o.calibrated) {
		/* The calibrated prediction: the segment of the schedule's mean
		 * message, plus o_call (tc_calibration_predict). */
		struct tc_call call = cli_case_call(&cs, rr.algorithm);
		err = tc_calibration_predict(&cal, cs.t, &call, NULL, &cal_seg, &pred_ns);
		if (err) {
			status = cli_coll_error(err, cs.coll, rr.algorithm, cs.t, cs.root);
			goto out;
		}
	}
	double cal_pct = o.calibrated && pred_ns > 0 ? 100 * (rr.measured_ns - pred_ns) / pred_ns : NAN;
	if (json) {
		struct cli_json w;
		cli_json_init(&w, stdout);
		cli_json_obj(&w, NULL);
		cli_case_json(&w, &cs);
		cli_json_str(&w, "mode", o.emulated ? "emulated" : "native");
		cli_json_str(&w, "algorithm", rr.algorithm);
		cli_json_bool(&w, "verified", rr.verified);
		cli_json_num(&w, "measured_ns", rr.measured_ns);
		cli_json_num(&w, "measured_min_ns", rr.measured_min_ns);
		cli_json_num(&w, "measured_max_ns", rr.measured_max_ns);
		cli_json_int(&w, "repeat", ra.repeat);
		cli_json_int(&w, "warmup", ra.warmup);
		cli_json_num(&w, "modelled_ns", rr.modelled_ns);
		cli_json_num(&w, "coll_modelled_ns", rr.coll_modelled_ns);
		cli_json_num(&w, "predicted_ns", (double)pr.modelled_ps / TC_PS_PER_NS);
		cli_json_num(&w, "formula_ns", pr.formula_ns);
		cli_json_num(&w, "lower_bound_ns", pr.lower_bound_ns);
		cli_json_num(&w, "emulation_error_pct", o.emulated ? err_pct : NAN);
		if (o.calibrated) {
			cli_json_obj(&w, "calibration");
			cli_json_num(&w, "ts_ns", cal.ts_ns);
			cli_json_num(&w, "tw_ns_per_byte", cal.tw_ns_per_byte);
			cli_json_num(&w, "tc_ns_per_byte", cal.tc_ns_per_byte);
			cli_json_num(&w, "r2", cal.r2);
			cli_json_num(&w, "max_rel_residual", cal.max_rel_residual);
			cli_json_uint(&w, "hockney_max_bytes", cal.hockney_max_bytes);
			cli_json_num(&w, "piecewise_r2", cal.piecewise.r2);
			cli_json_num(&w, "piecewise_max_rel_residual", cal.piecewise.max_rel_residual);
			cli_json_int(&w, "segment", cal_seg);
			cli_json_num(&w, "segment_ts_ns", cal.segments[cal_seg].fit.ts_ns);
			cli_json_num(&w, "segment_tw_ns_per_byte",
			             cal.segments[cal_seg].fit.tw_ns_per_byte);
			cli_json_num(&w, "call_ns", cal.call_ns);
			cli_json_end_obj(&w);
			cli_json_num(&w, "calibrated_predicted_ns", pred_ns);
			cli_json_num(&w, "calibrated_error_pct", cal_pct);
		}
		cli_json_int(&w, "rounds", rr.rounds);
		cli_json_int(&w, "messages", pr.messages);
		cli_stats_json(&w, &rr.stats);
		cli_json_obj(&w, "team");
		cli_json_int(&w, "cpus", ti.cpus);
		cli_json_bool(&w, "oversubscribed", ti.oversubscribed);
		cli_json_uint(&w, "memory_bytes", ti.memory_bytes);
		cli_json_uint(&w, "spin_ns", ti.spin_ns);
		cli_json_uint(&w, "yield_ns", ti.yield_ns);
		cli_json_end_obj(&w);
		cli_json_end_obj(&w);
	} else {
		char b1[32], b2[32], b3[32];
		unsigned cf = tc_coll_flags(cs.coll);
		printf("%s on %s, %s%s%s (%s", tc_coll_name(cs.coll), cli_topo_name(cs.t),
		       vc ? "blocks up to " : "", cli_bytes(cs.bytes, b1, sizeof b1),
		       vc ? "" : " block per rank", tc_dtype_name(cs.dt));
		if (cf & TC_CF_REDUCES)
			printf(" %s", tc_op_name(cs.op));
		printf(")");
		cli_case_args_print(&cs);
		printf(", %s mode, %d CPUs%s\n", o.emulated ? "emulated" : "native", ti.cpus,
		       ti.oversubscribed ? " (oversubscribed)" : "");
		printf("algorithm        %s\n", rr.algorithm ? rr.algorithm : "?");
		printf("verified         %s\n", rr.verified ? "yes (every rank equals the sequential "
		                                              "reference)"
		                                            : "NO");
		printf("measured         %s  (median of %d; min %s, max %s)\n",
		       cli_time(rr.measured_ns, b1), ra.repeat, cli_time(rr.measured_min_ns, b2),
		       cli_time(rr.measured_max_ns, b3));
		printf("modelled         %s", cli_time(rr.modelled_ns, b1));
		if (o.emulated)
			printf("  (measured %+.1f%%)", err_pct);
		printf("\n");
		if (o.calibrated) {
			const struct tc_calibration_segment *g = &cal.segments[cal_seg];
			printf("calibrated       segment %d (%s..%s): t_s %.1f ns, t_w %.4g ns/B; t_c %.4g "
			       "ns/B; o_call %.0f ns (piecewise fit R^2 %.3f, worst residual %.0f%%)\n",
			       cal_seg, cli_size_str(g->lo_bytes, b1, sizeof b1),
			       cli_size_str(g->hi_bytes, b2, sizeof b2), g->fit.ts_ns,
			       g->fit.tw_ns_per_byte, cs.model.md.tc_ns, cal.call_ns, cal.piecewise.r2,
			       100 * cal.piecewise.max_rel_residual);
			printf("predicted        %s  with them (measured %+.1f%%; the first call of a "
			       "run also pays the threads' wake-up)\n",
			       cli_time(pred_ns, b1), cal_pct);
		}
		if (vc)
			printf("  of which data  %s  (the schedule of the counts, as predicted: %s; "
			       "before it the counts' agreement)\n",
			       cli_time(rr.coll_modelled_ns, b1),
			       cli_time((double)pr.modelled_ps / TC_PS_PER_NS, b2));
		printf("formula (seed)   %s  (%s)\n", cli_time(pr.formula_ns, b1),
		       cli_vs_formula(vs_ns, pr.formula_ns, b2));
		printf("lower bound      %s%s\n", cli_time(pr.lower_bound_ns, b1),
		       cli_lb_note((double)pr.modelled_ps / TC_PS_PER_NS, &pr));
		printf("rounds           %d\n", rr.rounds);
		printf("stats            %llu messages, %llu bytes sent, %llu packets, %llu forwarded, "
		       "%llu sleeps\n",
		       (unsigned long long)rr.stats.msgs_sent, (unsigned long long)rr.stats.bytes_sent,
		       (unsigned long long)rr.stats.packets_sent, (unsigned long long)rr.stats.forwarded,
		       (unsigned long long)rr.stats.waits_blocked);
	}
	if (!rr.verified)
		status = cli_run_wrong("run", &rr);
out:
	tc_team_destroy(team);
	cli_case_free(&cs);
	return status;
}
