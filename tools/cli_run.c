/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_run.c - topocoll run: one collective run for real over the
 * channels, its result checked against a sequential reference computed here,
 * its measured time beside the modelled time and the source's formula.
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
#include "cli_mpi.h"

const char run_help[] =
        "usage: topocoll run --topo SPEC --coll C [--alg A] [--bytes N] [options]\n"
        "\n"
        "Creates a team of p threads joined by the topology's channels, runs the\n"
        "collective for real, checks every rank's result against a sequential\n"
        "reference computed by the tool from the collective's MPI definition\n"
        "(every receive buffer, and nothing written where the collective writes\n"
        "nothing), and prints the measured time beside the modelled time, the\n"
        "closed form and the lower bound.  Exit status 1 when a result is wrong.\n"
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
        "  --calls N         native: calls back to back per run, timed together\n"
        "                    [as many as fit in 10 ms, at most 1000]\n"
        "  --warmup-calls N  native: untimed calls first in each run [1]\n"
        "  --in-place        send buffer TC_IN_PLACE (allreduce, reduce, allgather,\n"
        "                    gather, scan, shift, gray2binary, binary2gray)\n"
        "  --wait W          how ranks wait: auto spin yield block [auto]\n"
        "  --no-pin          do not pin the threads to CPUs\n"
        "  --timeout MS      a wait longer than this fails the run [60000; 0: never]\n"
        "  --stack BYTES     each rank's thread's stack, e.g. 256K for p = 4096\n"
        "                    [the system's default, often 8M]\n"
        "  --calibrated      native: calibrate this machine first (about a second)\n"
        "                    and model with it (t_s, t_w of the block's segment,\n"
        "                    t_c, o_call: a call's cost past its messages), AUTO\n"
        "                    too (a CPU per rank); ignores oversubscription\n"
        "  --json            one JSON object: measured_ns, modelled_ns, algorithm,\n"
        "                    verified, call_avg_ns, busbw_gbps, model_source, ...\n"
        "measured: per call, median of the runs; native: from every rank ready (a\n"
        "tool barrier) to the last rank's last call's end, over the calls; emulated:\n"
        "from logical time 0 to the last rank's end.  A run's first and last call\n"
        "are checked; stats per call.\n"
        "algbw, busbw: nccl-tests' definitions, GB/s.\n"
        "modelled: under the model named beside it (native: the default or given\n"
        "model, not this machine's, unless --calibrated); the run's largest logical\n"
        "clock (tc_team_last_run) over its calls; for the v-collectives that holds\n"
        "the ranks' agreement on the counts, the next line the data's schedule alone\n"
        "(as predicted, compared with the formula).\n" CLI_MODEL_HELP "examples:\n"
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
static void gen_input(unsigned char *buf, size_t count, enum tc_dtype dt, enum tc_op op, int r, int p)
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
	int calls, wcalls;   /* timed and warm-up calls of this run (calls, with
	                        auto_calls: those made, set by rank 0) */
	int auto_calls;      /* timed calls in doubling batches until their
	                        time reaches the budget (native only) */
	int next_batch;      /* the next batch (rank 0 between two barriers) */
	double timed_ns;     /* auto_calls: the batches' time (rank 0) */
	uint64_t *first_bad; /* rank r: the first wrong byte after its first
	                        call of the run, UINT64_MAX if none */
	int ccap;            /* calls the timestamps have room for */
	uint64_t *t0, *t1;   /* rank r's timed call k: [r * ccap + k] */
	unsigned char **exp; /* the expected receive buffers */
	const size_t *rlen;  /* their lengths */
	struct tc_coll_info *info;
	_Atomic unsigned bar_count, bar_gen;
	_Atomic int bar_sleepers; /* ranks asleep in tool_barrier */
	_Atomic int failed;       /* a rank failed: tool_barrier lets all go */
	int fibres;               /* the team runs its ranks as fibres */
	_Atomic int arrived;      /* barrier check */
	_Atomic int barrier_bad;
	/* The v-collectives: rank r's counts and displacements (elements). */
	size_t **vsc, **vsd, **vrc, **vrd;
	int solo; /* one rank of the case, outside tc_run (cli_rank_run) */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The tool's own barrier before the timed calls (native mode), so that the
 * measurement starts when every rank is ready; outside the library, so the
 * logical clocks do not move.  Returns non-zero when a rank has failed
 * (tool_fail): the barrier then holds no more. */
static int tool_barrier(struct run_ctx *c, struct tc_proc *proc)
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
		return atomic_load_explicit(&c->failed, memory_order_seq_cst);
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
	return atomic_load_explicit(&c->failed, memory_order_seq_cst);
}

/* A rank failed (its call returned an error): the ranks in or on their way
 * to a tool_barrier leave it (the others' calls return TC_EABORTED). */
static void tool_fail(struct run_ctx *c)
{
	/* Seq_cst: read by tool_barrier after it leaves the wait. */
	atomic_store_explicit(&c->failed, 1, memory_order_seq_cst);
	/* A new generation releases every waiter, asleep or not. */
	atomic_fetch_add_explicit(&c->bar_gen, 1, memory_order_seq_cst);
	syscall(SYS_futex, &c->bar_gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static int starts_done(const struct cli_run_args *a, int r);

int cli_run_in_place(enum tc_coll c)
{
	switch (c) {
	case TC_COLL_ALLREDUCE:
	case TC_COLL_REDUCE:
	case TC_COLL_ALLGATHER:
	case TC_COLL_GATHER:
	case TC_COLL_SCAN:
	case TC_COLL_SHIFT:
	case TC_COLL_GRAY2BINARY:
	case TC_COLL_BINARY2GRAY:
		return 1;
	default:
		return 0;
	}
}

const char *cli_run_in_place_list(char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int c = 0; c < TC_COLL_COUNT && o < len; c++)
		if (cli_run_in_place((enum tc_coll)c))
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
			                      tc_coll_name((enum tc_coll)c));
	return buf;
}

/* Does rank r pass TC_IN_PLACE (the rooted ones: at the root only)? */
static int in_place_here(const struct cli_run_args *a, int r)
{
	if (!a->in_place)
		return 0;
	if (a->coll == TC_COLL_REDUCE || a->coll == TC_COLL_GATHER)
		return r == a->root;
	return cli_run_in_place(a->coll);
}

/* Where the call takes rank r's input in its receive buffer, in place. */
static size_t in_place_off(const struct cli_run_args *a, int r)
{
	if (a->coll == TC_COLL_ALLGATHER)
		return (size_t)r * (size_t)a->bytes;
	if (a->coll == TC_COLL_GATHER)
		return (size_t)a->root * (size_t)a->bytes;
	return 0;
}

/* Rank r's buffers before a call: the receive buffer poisoned (the
 * complement of what it should hold; as it should end where the call leaves
 * it untouched), then, in place, the input copied where the call takes it. */
static void prep_buffers(struct run_ctx *c, int r, int poison)
{
	const struct cli_run_args *a = c->a;
	unsigned char *out = c->out[r];
	if (!out)
		return;
	if (poison) {
		if (starts_done(a, r))
			memcpy(out, c->exp[r], c->rlen[r]);
		else
			for (size_t i = 0; i < c->rlen[r]; i++)
				out[i] = (unsigned char)~c->exp[r][i];
	}
	if (c->in[r] && in_place_here(a, r))
		memcpy(out + in_place_off(a, r), c->in[r], (size_t)a->bytes);
}

/* Call k of the run on this rank (sbuf TC_IN_PLACE where asked). */
static int call_coll(struct run_ctx *c, struct tc_proc *proc, const struct tc_coll_opts *opts, int k)
{
	const struct cli_run_args *a = c->a;
	int r = tc_rank(proc);
	const void *in = in_place_here(a, r) ? TC_IN_PLACE : c->in[r];
	int err;
	void *out = c->out[r];
	/* The entry points by signature; the buffers come from the shape. */
	switch (a->coll) {
	case TC_COLL_BCAST:
		err = tc_bcast(proc, out, c->count, a->dt, a->root, opts);
		break;
	case TC_COLL_REDUCE:
		err = tc_reduce(proc, in, out, c->count, a->dt, a->op, a->root, opts);
		break;
	case TC_COLL_ALLREDUCE:
		err = tc_allreduce(proc, in, out, c->count, a->dt, a->op, opts);
		break;
	case TC_COLL_ALLGATHER:
		err = tc_allgather(proc, in, out, c->count, a->dt, opts);
		break;
	case TC_COLL_REDUCE_SCATTER:
		err = tc_reduce_scatter(proc, in, out, c->count, a->dt, a->op, opts);
		break;
	case TC_COLL_SCAN:
		err = tc_scan(proc, in, out, c->count, a->dt, a->op, opts);
		break;
	case TC_COLL_EXSCAN:
		err = tc_exscan(proc, in, out, c->count, a->dt, a->op, opts);
		break;
	case TC_COLL_SCATTER:
		err = tc_scatter(proc, in, out, c->count, a->dt, a->root, opts);
		break;
	case TC_COLL_GATHER:
		err = tc_gather(proc, in, out, c->count, a->dt, a->root, opts);
		break;
	case TC_COLL_ALLTOALL:
		err = tc_alltoall(proc, in, out, c->count, a->dt, opts);
		break;
	case TC_COLL_SHIFT:
		/* q as the library takes it (an int), reduced mod p first. */
		err = tc_shift(proc, in, out, c->count, a->dt, (int)(a->q % c->p), opts);
		break;
	case TC_COLL_GRAY2BINARY:
		err = tc_gray2binary(proc, in, out, c->count, a->dt, opts);
		break;
	case TC_COLL_BINARY2GRAY:
		err = tc_binary2gray(proc, in, out, c->count, a->dt, opts);
		break;
	case TC_COLL_MULTICAST:
		err = tc_multicast(proc, out, c->count, a->dt, a->root, a->members, a->nmembers, opts);
		break;
	case TC_COLL_ALLGATHERV:
		err = tc_allgatherv(proc, in, c->vsc[r][0], out, c->vrc[r], c->vrd[r], a->dt, opts);
		break;
	case TC_COLL_GATHERV:
		err = tc_gatherv(proc, in, c->vsc[r][a->root], out, c->vrc[r], c->vrd[r], a->dt,
		                 a->root, opts);
		break;
	case TC_COLL_SCATTERV:
		err = tc_scatterv(proc, in, c->vsc[r], c->vsd[r], out, c->vrc[r][a->root], a->dt,
		                  a->root, opts);
		break;
	case TC_COLL_ALLTOALLV:
		err = tc_alltoallv(proc, in, c->vsc[r], c->vsd[r], out, c->vrc[r], c->vrd[r], a->dt, opts);
		break;
	case TC_COLL_BARRIER:
		/* Release: this rank's arrival is visible to whoever leaves the
		 * barrier after it; pairs with the acquire load below. */
		atomic_fetch_add_explicit(&c->arrived, 1, memory_order_release);
		err = tc_barrier(proc, opts);
		/* Acquire: pairs with the other ranks' release increments. */
		/* Every rank has entered barrier k: k + 1 arrivals each. */
		if (!err && !c->solo &&
		    atomic_load_explicit(&c->arrived, memory_order_acquire) < (k + 1) * c->p)
			atomic_store_explicit(&c->barrier_bad, 1, memory_order_relaxed);
		break;
	default:
		err = TC_EINVAL;
		break;
	}
	return err;
}

static void call_span(const struct run_ctx *c, int j, uint64_t *lo, uint64_t *hi);

/* The first call of the run, from poisoned buffers, is checked by each rank
 * at once (after its time was taken; later calls overwrite the result); the
 * last by the tool after the run. */
static void first_check(struct run_ctx *c, int r, int k)
{
	if (k == 0 && c->out[r] && memcmp(c->out[r], c->exp[r], c->rlen[r])) {
		size_t i = 0;
		while (c->out[r][i] == c->exp[r][i])
			i++;
		c->first_bad[r] = i;
	}
}

/* Rank 0 after a batch of auto_calls (every rank at a barrier): adds the
 * batch's time, from the first rank's entry into its first call to the last
 * rank's exit from its last, and sets the next batch: as many calls as made
 * so far (doubling), none once the budget or the room is reached. */
static void next_batch(struct run_ctx *c, int batch, int done)
{
	uint64_t lo, hi, l, h;
	call_span(c, done - batch, &lo, &hi);
	for (int j = done - batch + 1; j < done; j++) {
		call_span(c, j, &l, &h);
		lo = l < lo ? l : lo;
		hi = h > hi ? h : hi;
	}
	c->timed_ns += (double)(hi - lo);
	c->calls = done;
	c->next_batch = c->timed_ns >= CLI_RUN_CALLS_BUDGET_NS || done >= c->ccap ? 0
	                : done < c->ccap - done                                   ? done
	                                                                          : c->ccap - done;
}

static int run_rank(struct tc_proc *proc, void *arg)
{
	struct run_ctx *c = arg;
	const struct cli_run_args *a = c->a;
	int r = tc_rank(proc);
	struct tc_coll_opts opts = {.alg = a->alg, .packets = a->packets, .shift_ring = a->shift_ring};
	int err = 0;
	const int bar = !c->emulated; /* emulated: the logical time 0 is the start */
	tc_proc_stats_reset(proc);
	prep_buffers(c, r, 1);
	if (bar && tool_barrier(c, proc))
		return TC_EABORTED;
	/* Warm-up calls, then the timed calls: one batch of c->calls, or
	 * (auto_calls) batches of 1, 1, 2, 4, ... calls until their time
	 * reaches the budget.  After a batch rank 0 adds its time and sets the
	 * next between two barriers (untimed), so that every rank makes the
	 * same calls; the next batch starts at the second. */
	int k = 0, done = 0, batch = c->auto_calls ? 1 : c->calls;
	for (; k < c->wcalls && !err; k++) {
		if (k)
			prep_buffers(c, r, 0);
		err = call_coll(c, proc, &opts, k);
		first_check(c, r, k);
	}
	/* The timed calls start together, after the warm-up calls. */
	if (!err && c->wcalls && bar && tool_barrier(c, proc))
		err = TC_EABORTED;
	while (batch > 0 && !err) {
		for (int j = 0; j < batch && !err; j++, k++) {
			if (k)
				prep_buffers(c, r, 0); /* in place: the input again */
			uint64_t t = now_ns();
			err = call_coll(c, proc, &opts, k);
			c->t0[(size_t)r * (size_t)c->ccap + (size_t)(done + j)] = t;
			c->t1[(size_t)r * (size_t)c->ccap + (size_t)(done + j)] = now_ns();
			first_check(c, r, k);
		}
		done += batch;
		if (!c->auto_calls || err || !bar)
			break;
		if (tool_barrier(c, proc)) {
			err = TC_EABORTED;
			break;
		}
		if (r == 0)
			next_batch(c, batch, done);
		/* Orders rank 0's writes before every read. */
		if (tool_barrier(c, proc)) {
			err = TC_EABORTED;
			break;
		}
		batch = c->next_batch;
	}
	if (err)
		tool_fail(c);
	tc_last_coll(proc, &c->info[r]);
	return err;
}

/* Timed call j of the run spans from the first rank's entry [*lo] to the
 * last rank's exit [*hi]. */
static void call_span(const struct run_ctx *c, int j, uint64_t *lo, uint64_t *hi)
{
	const size_t cc = (size_t)c->ccap;
	uint64_t l = c->t0[j], h = c->t1[j];
	for (int r = 1; r < c->p; r++) {
		l = c->t0[(size_t)r * cc + (size_t)j] < l ? c->t0[(size_t)r * cc + (size_t)j] : l;
		h = c->t1[(size_t)r * cc + (size_t)j] > h ? c->t1[(size_t)r * cc + (size_t)j] : h;
	}
	*lo = l;
	*hi = h;
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

/* Every rank's input and expected receive buffer (ranks expecting what an
 * earlier rank expects share its copy: exp_own[r] == 0), and the receive
 * buffers; c->a, c->p, c->count, c->in and c->out (zeroed) set.  0, or -1
 * when out of memory (what was allocated is in c, exp and exp_own). */
static int ctx_data(struct run_ctx *c, unsigned char **exp, unsigned char *exp_own, size_t *rlen)
{
	const struct cli_run_args *a = c->a;
	const int p = c->p;
	const size_t es = tc_dtype_size(a->dt);
	const unsigned flags = tc_coll_flags(a->coll);
	int reduces = !!(flags & TC_CF_REDUCES);
	const int v = !!(flags & TC_CF_VCOUNT);
	if (v && v_arrays(c, a))
		return -1;
	for (int r = 0; r < p; r++) {
		size_t il = (size_t)input_bytes(a, p, r);
		rlen[r] = v ? (size_t)(cli_v_recv_elems(a->coll, p, a->root, a->vcounts, r) * es)
		            : (size_t)cli_recv_bytes(a->coll, p, a->root, r, a->bytes);
		if (!cli_takes_part(a->coll, a->root, a->members, a->nmembers, r))
			rlen[r] = 0; /* a multicast's non-member passes no buffer */
		if (il && !(c->in[r] = malloc(il)))
			return -1;
		if (rlen[r] && !(c->out[r] = malloc(rlen[r])))
			return -1;
		if (!il)
			continue;
		if (reduces)
			gen_input(c->in[r], il / es, a->dt, a->op, r, p);
		else
			for (size_t i = 0; i < il; i++)
				c->in[r][i] = (unsigned char)mix(((uint64_t)r << 40) ^ i);
	}
	/* The references. */
	for (int r = 0; r < p; r++) {
		if (!rlen[r])
			continue;
		unsigned char *e = malloc(rlen[r]);
		if (!e)
			return -1;
		if (flags & TC_CF_RECV_NOT0 && r == 0) {
			for (size_t i = 0; i < rlen[r]; i++) /* untouched: a guard pattern */
				e[i] = (unsigned char)mix(((uint64_t)0xabcdu << 40) ^ i);
		} else {
			ref_result(a, p, r, c->in, c->count, e);
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
	return 0;
}

int cli_run_coll(struct tc_team *team, const struct cli_run_args *a, struct cli_run_result *res)
{
	int p = tc_team_size(team);
	size_t es = tc_dtype_size(a->dt);
	size_t bytes = (size_t)a->bytes;
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
	/* Timed calls per run: as asked, or (0) batches until the budget in
	 * the timed runs (native; one call in the warm-up runs, and in
	 * emulated mode), at most CLI_RUN_CALLS_MAX and 2^20 timestamps. */
	const int auto_calls = a->calls <= 0 && !a->emulated;
	c.ccap = a->calls > 0 ? a->calls : auto_calls ? CLI_RUN_CALLS_MAX : 1;
	if (auto_calls && (long)c.ccap * p > (1L << 20))
		c.ccap = (int)((1L << 20) / p) > 1 ? (int)((1L << 20) / p) : 1;
	int nrun = a->repeat > 0 ? a->repeat : 1;
	/* Warm-up calls: as asked, or (-1) one before several timed calls. */
	const int auto_wcalls = a->warmup_calls < 0;
	c.t0 = calloc((size_t)p * (size_t)c.ccap, sizeof *c.t0);
	c.t1 = calloc((size_t)p * (size_t)c.ccap, sizeof *c.t1);
	c.info = calloc((size_t)p, sizeof *c.info);
	c.first_bad = malloc((size_t)p * sizeof *c.first_bad);
	c.exp = exp;
	c.rlen = rlen;
	double *meas = calloc((size_t)nrun, sizeof *meas);
	if (!c.in || !c.out || !exp || !exp_own || !rlen || !c.t0 || !c.t1 || !c.info || !meas ||
	    !c.first_bad)
		goto out;
	if (ctx_data(&c, exp, exp_own, rlen))
		goto out;

	res->verified = 1;
	res->call_min_ns = INFINITY;
	res->call_max_ns = 0;
	double call_sum = 0;
	long call_n = 0;
	int run_calls = 1;
	int total = (a->warmup > 0 ? a->warmup : 0) + nrun;
	for (int k = 0; k < total; k++) {
		/* Each rank poisons its own buffers (prep_buffers): the bcast
		 * root holds the data, every other output the complement of the
		 * expected bytes. */
		const int timed_run = k >= total - nrun;
		c.auto_calls = auto_calls && timed_run;
		c.calls = a->calls > 0 ? a->calls : 1;
		c.timed_ns = 0;
		c.wcalls = auto_wcalls ? c.auto_calls || c.calls > 1 : a->warmup_calls;
		for (int r = 0; r < p; r++)
			c.first_bad[r] = UINT64_MAX;
		atomic_store(&c.arrived, 0);
		atomic_store(&c.barrier_bad, 0);
		err = tc_run(team, run_rank, &c);
		if (err)
			goto out;
		res->runs++;
		/* Check: the first call (checked by the ranks), the last. */
		for (int r = 0; r < p && res->mismatch_rank < 0; r++)
			if (c.first_bad[r] != UINT64_MAX) {
				res->mismatch_rank = r;
				res->mismatch_elem = c.first_bad[r] / es;
			}
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
		/* The run's calls span from the first entry into the first to
		 * the last exit from the last; their average is that over the
		 * calls (auto_calls: the same per batch). */
		double m;
		uint64_t lo = UINT64_MAX, hi = 0;
		for (int j = 0; j < c.calls; j++) {
			uint64_t l, h;
			call_span(&c, j, &l, &h);
			lo = l < lo ? l : lo;
			hi = h > hi ? h : hi;
			if (timed_run && ri.mode != TC_MODE_EMULATED) {
				res->call_min_ns = fmin(res->call_min_ns, (double)(h - l));
				res->call_max_ns = fmax(res->call_max_ns, (double)(h - l));
			}
		}
		/* Batches: their times (from each one's start) over the calls. */
		if (ri.mode == TC_MODE_EMULATED)
			m = (double)ri.wall_ns / c.calls;
		else if (c.auto_calls)
			m = c.timed_ns / c.calls;
		else
			m = (double)(hi - lo) / c.calls;
		if (timed_run) {
			meas[k - (total - nrun)] = m;
			call_sum += m * c.calls;
			call_n += c.calls;
			if (ri.mode == TC_MODE_EMULATED) {
				res->call_min_ns = fmin(res->call_min_ns, m);
				res->call_max_ns = fmax(res->call_max_ns, m);
			}
		}
		res->calls = c.calls;
		res->run_modelled_ns = (double)ri.makespan_ps / TC_PS_PER_NS;
		run_calls = c.wcalls + c.calls;
		res->warmup_calls = c.wcalls;
	}
	qsort(meas, (size_t)nrun, sizeof *meas, cmp_double);
	res->measured_ns = nrun % 2 ? meas[nrun / 2] : (meas[nrun / 2 - 1] + meas[nrun / 2]) / 2;
	res->measured_min_ns = meas[0];
	res->measured_max_ns = meas[nrun - 1];
	/* The logical clock of one call: the run's makespan over its calls. */
	res->modelled_ns = (double)ri.makespan_ps / TC_PS_PER_NS / run_calls;
	res->call_avg_ns = call_n ? call_sum / (double)call_n : NAN;
	res->coll_modelled_ns = (double)c.info[0].modelled_ps / TC_PS_PER_NS;
	res->rounds = c.info[0].rounds;
	res->algorithm = c.info[0].algorithm;
	/* Per call: the run's totals over its calls (the counts of a call
	 * are the same in every call; the waits an average). */
	tc_team_stats(team, &res->stats);
	uint64_t *st[] = {&res->stats.msgs_sent,      &res->stats.bytes_sent,
	                  &res->stats.msgs_recv,      &res->stats.bytes_recv,
	                  &res->stats.packets_sent,   &res->stats.single_copy,
	                  &res->stats.waits_blocked,  &res->stats.rounds,
	                  &res->stats.transfers_sent, &res->stats.transfers_recv,
	                  &res->stats.forwarded,      &res->stats.hops};
	for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
		*st[i] /= (uint64_t)run_calls;
	res->stats.busy_ps /= run_calls;
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
	free(c.first_bad);
	free(meas);
	size_t **varr[4] = {c.vsc, c.vsd, c.vrc, c.vrd};
	for (int k = 0; k < 4; k++) {
		for (int r = 0; varr[k] && r < p; r++)
			free(varr[k][r]);
		free(varr[k]);
	}
	return err;
}

/* ---- one rank of a case, outside tc_run ------------------------------- */

struct cli_rank_run {
	struct run_ctx c;
	int r;
	unsigned char **exp, *exp_own;
	size_t *rlen;
	struct tc_coll_opts opts;
};

void cli_rank_run_free(struct cli_rank_run *x)
{
	if (!x)
		return;
	const int p = x->c.p;
	for (int r = 0; x->c.in && r < p; r++)
		free(x->c.in[r]);
	for (int r = 0; x->c.out && r < p; r++)
		free(x->c.out[r]);
	for (int r = 0; x->exp && x->exp_own && r < p; r++)
		if (x->exp_own[r])
			free(x->exp[r]);
	size_t **varr[4] = {x->c.vsc, x->c.vsd, x->c.vrc, x->c.vrd};
	for (int k = 0; k < 4; k++) {
		for (int r = 0; varr[k] && r < p; r++)
			free(varr[k][r]);
		free(varr[k]);
	}
	free(x->exp);
	free(x->exp_own);
	free(x->rlen);
	free(x->c.in);
	free(x->c.out);
	free(x);
}

struct cli_rank_run *cli_rank_run_new(const struct cli_run_args *a, int p, int r)
{
	struct cli_rank_run *x = calloc(1, sizeof *x);
	if (!x)
		return NULL;
	x->r = r;
	x->c.a = a;
	x->c.p = p;
	x->c.count = (size_t)a->bytes / tc_dtype_size(a->dt);
	x->c.emulated = a->emulated;
	x->c.solo = 1;
	x->c.in = calloc((size_t)p, sizeof *x->c.in);
	x->c.out = calloc((size_t)p, sizeof *x->c.out);
	x->exp = calloc((size_t)p, sizeof *x->exp);
	x->exp_own = calloc((size_t)p, 1);
	x->rlen = calloc((size_t)p, sizeof *x->rlen);
	x->c.exp = x->exp;
	x->c.rlen = x->rlen;
	x->opts = (struct tc_coll_opts){.alg = a->alg, .packets = a->packets, .shift_ring = a->shift_ring};
	if (!x->c.in || !x->c.out || !x->exp || !x->exp_own || !x->rlen ||
	    ctx_data(&x->c, x->exp, x->exp_own, x->rlen)) {
		cli_rank_run_free(x);
		return NULL;
	}
	return x;
}

void cli_rank_run_prep(struct cli_rank_run *x, int poison)
{
	prep_buffers(&x->c, x->r, poison);
}

int cli_rank_run_call(struct cli_rank_run *x, struct tc_proc *proc, int k)
{
	return call_coll(&x->c, proc, &x->opts, k);
}

long long cli_rank_run_check(const struct cli_rank_run *x)
{
	const int r = x->r;
	const unsigned char *o = x->c.out[r], *e = x->exp[r];
	if (!o || !memcmp(o, e, x->rlen[r]))
		return -1;
	size_t i = 0;
	while (o[i] == e[i])
		i++;
	return (long long)(i / tc_dtype_size(x->c.a->dt));
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
	long calls, warmup_calls; /* -1: the default */
	int in_place;
	/* --engine threads|mpi, --route forward|direct, --vs-mpi: docs/mpi.md
	 * (run_help is at the 4095 characters a C99 string may hold). */
	int engine_mpi; /* --engine mpi (tools/cli_mpi.c) */
	int direct;     /* --route direct */
	int vs_mpi;
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
	if (!strcmp(argv[*i], "--in-place")) {
		o->in_place = 1;
		return 1;
	}
	if (!strcmp(argv[*i], "--vs-mpi")) {
		o->vs_mpi = 1;
		return 1;
	}
	if ((r = cli_opt(argc, argv, i, "--engine", &v)) == 1)
		return cli_choice("--engine", v, "threads", "mpi", &o->engine_mpi) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--route", &v)) == 1)
		return cli_choice("--route", v, "forward", "direct", &o->direct) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--calls", &v)) == 1)
		return cli_parse_long("--calls", v, 1, 1000000, &o->calls) ? CLI_USAGE : 1;
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--warmup-calls", &v)) == 1)
		return cli_parse_long("--warmup-calls", v, 0, 1000000, &o->warmup_calls) ? CLI_USAGE : 1;
	if (r)
		return r;
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
		return cli_fail("%s: wrong result on rank %d at element %llu", cmd,
		                rr->mismatch_rank, (unsigned long long)rr->mismatch_elem);
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

/* Where the model's figures come from: "calibrated" (this machine, measured
 * by --calibrated), "default" (the library's default model, not this
 * machine's) or "options" (the model options given). */
static const char *model_source(const struct tc_model *md, int calibrated)
{
	struct tc_model d;
	tc_model_default(&d);
	if (calibrated)
		return "calibrated";
	return md->ts_ns == d.ts_ns && md->tw_ns == d.tw_ns && md->th_ns == d.th_ns &&
	                       md->tc_ns == d.tc_ns && md->mu == d.mu && md->ports == d.ports &&
	                       md->duplex == d.duplex && md->switching == d.switching &&
	                       md->combining == d.combining
	               ? "default"
	               : "options";
}

/* "default model (t_s 1000 ns, t_w 1 ns/B)", the parameters that price a
 * message (t_h and t_c when not 0). */
static const char *model_desc(const struct tc_model *md, const char *src, char *buf, size_t len)
{
	int o = snprintf(buf, len, "%s model (t_s %.4g ns, t_w %.4g ns/B",
	                 !strcmp(src, "calibrated") ? "calibrated"
	                 : !strcmp(src, "default")  ? "default"
	                                            : "given",
	                 md->ts_ns, md->tw_ns);
	if (md->th_ns > 0 && o > 0 && (size_t)o < len)
		o += snprintf(buf + o, len - (size_t)o, ", t_h %.4g ns", md->th_ns);
	if (md->tc_ns > 0 && o > 0 && (size_t)o < len)
		o += snprintf(buf + o, len - (size_t)o, ", t_c %.4g ns/B", md->tc_ns);
	if (o > 0 && (size_t)o < len)
		snprintf(buf + o, len - (size_t)o, ")");
	return buf;
}

int cli_busbw(enum tc_coll c, int p, uint64_t m, double t_ns, double *algbw, double *busbw, double *factor)
{
	double s, f;
	switch (c) {
	case TC_COLL_ALLREDUCE:
		s = (double)m, f = 2.0 * (p - 1) / p;
		break;
	case TC_COLL_ALLGATHER:
	case TC_COLL_REDUCE_SCATTER:
	case TC_COLL_ALLTOALL:
	case TC_COLL_GATHER:
	case TC_COLL_SCATTER:
		s = (double)m * p, f = (double)(p - 1) / p;
		break;
	case TC_COLL_BCAST:
	case TC_COLL_REDUCE:
	case TC_COLL_SHIFT:
		s = (double)m, f = 1;
		break;
	default:
		*algbw = *busbw = *factor = NAN;
		return -1;
	}
	/* Bytes per ns are GB/s. */
	*algbw = t_ns > 0 ? s / t_ns : NAN;
	*busbw = *algbw * f;
	*factor = f;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct cli_case cs;
	struct run_opts o = {.repeat = 1, .warmup = -1, .timeout_ms = 60000, .calls = -1, .warmup_calls = -1};
	int json = 0;
	int err = cli_case_parse("run", argc, argv, CLI_CASE_DATA, &cs, &json, run_extra, &o);
	if (err)
		return err == -1 ? CLI_OK : err;
	int status = CLI_OK;
	struct tc_team *team = NULL;
	int p = tc_topo_nodes(cs.t);
	const int vc = !!(tc_coll_flags(cs.coll) & TC_CF_VCOUNT);
	if (o.engine_mpi) {
		const struct cli_mpi_opts mo = {.direct = o.direct,
		                                .emulated = o.emulated,
		                                .vs_mpi = o.vs_mpi,
		                                .calls = o.calls,
		                                .repeat = o.repeat > 1 ? o.repeat : 5,
		                                .timeout_ms = o.timeout_ms};
		status = cli_run_mpi(&cs, &mo, argc, argv);
		goto out;
	}
	if (o.emulated && (o.calls > 1 || o.warmup_calls > 0)) {
		status = cli_usage("run: --calls and --warmup-calls are for native mode (emulated mode "
		                   "times one call per run against its logical clock)");
		goto out;
	}
	if (o.in_place && !cli_run_in_place(cs.coll)) {
		char list[256];
		status = cli_usage("run: --in-place: %s has no in-place form here (those that have: %s)",
		                   tc_coll_name(cs.coll), cli_run_in_place_list(list, sizeof list));
		goto out;
	}
	/* Two timestamps per rank and timed call. */
	if (o.calls > 0 && (uint64_t)o.calls * (uint64_t)p > ((uint64_t)1 << 26)) {
		status = cli_usage("run: --calls %ld on %d ranks: more than 2^26 timestamps (at most "
		                   "%llu calls)",
		                   o.calls, p, (unsigned long long)(((uint64_t)1 << 26) / (uint64_t)p));
		goto out;
	}
	if ((status = vc ? cli_run_check_memory_v(p, cs.coll, cs.root, cs.vcounts, tc_dtype_size(cs.dt))
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
			co.max_bytes = cs.bytes < ((uint64_t)64 << 20) ? (size_t)cs.bytes
			                                               : (size_t)64 << 20;
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
		/* A segment fitted with no start-up time (t_s clamped at 0,
		 * as a 16-core guest's 1-4 MiB were) would make a pipeline
		 * send a packet per element: the team's model, which counts
		 * the packets, takes the whole range's t_s then (the
		 * calibrated prediction counts the packets under the whole
		 * range's line too, then prices them with the segment of the
		 * mean packet: lib/coll/calprice.c, docs/calibration.md). */
		if (!(seg.ts_ns > 0) && isfinite(cal.ts_ns) && cal.ts_ns > 0)
			seg.ts_ns = cal.ts_ns;
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
	/* --calibrated: the team prices AUTO's candidates with it where its
	 * ranks each have a CPU (tc_team_config.calibration). */
	if (o.calibrated)
		cfg.calibration = &cal;
	cfg.stack_bytes = (size_t)o.stack_bytes;
	err = tc_team_create(&cfg, &team);
	if (err) {
		/* The library names stacks only where smaller ones would help: the
		 * hint says how, and never proposes what was given. */
		const char *hint = !strstr(tc_error_detail(), "stack") ? ""
		                   : !o.stack_bytes ? " (here: --stack BYTES, e.g. --stack 256K)"
		                   : o.stack_bytes > 64 * 1024
		                           ? " (here: a --stack below the one given, at least 64K)"
		                           : "";
		status = err == TC_EINVAL
		                 ? cli_usage("run: the team rejects this configuration: %s",
		                             *tc_error_detail() ? tc_error_detail() : tc_strerror(err))
		         : err == TC_ELIMIT
		                 ? cli_fail("run: cannot create the team: %s%s", tc_error_detail(), hint)
		                 : cli_fail("run: cannot create the team: %s", tc_strerror(err));
		goto out;
	}
	struct cli_run_args ra = {.coll = cs.coll,
	                          .alg = cs.alg,
	                          .bytes = cs.bytes,
	                          .dt = cs.dt,
	                          .op = cs.op,
	                          .root = cs.root,
	                          .q = cs.q,
	                          .shift_ring = cs.shift_ring,
	                          .gray_ring = cs.shift_ring && tc_topo_kind(cs.t) == TC_TOPO_HYPERCUBE,
	                          .members = cs.members,
	                          .nmembers = cs.nmembers,
	                          .repeat = (int)o.repeat,
	                          .warmup = (int)(o.warmup >= 0 ? o.warmup : !o.emulated),
	                          .packets = cs.model.packets,
	                          .emulated = o.emulated,
	                          .vcounts = cs.vcounts,
	                          .calls = o.emulated    ? 1
	                                   : o.calls > 0 ? (int)o.calls
	                                                 : 0,
	                          .warmup_calls = o.warmup_calls >= 0 ? (int)o.warmup_calls
	                                          : o.emulated        ? 0
	                                                              : -1,
	                          .in_place = o.in_place};
	struct cli_run_result rr;
	err = cli_run_coll(team, &ra, &rr);
	if (err) {
		status = cli_coll_error(err, cs.coll, cs.alg, cs.t, cs.root);
		goto out;
	}
	/* AUTO on ranks that share CPUs may take another algorithm than the
	 * model's (a v-call takes `direct` there): the prediction, formula
	 * and bound reported are those of the algorithm that ran. */
	if (rr.algorithm && pr.algorithm && strcmp(rr.algorithm, pr.algorithm)) {
		struct cli_case ran = cs;
		ran.alg = rr.algorithm;
		if ((status = cli_case_predict(&ran, &pr)) != 0)
			goto out;
	}
	/* A v-call agrees on its counts (an exchange) before its schedule:
	 * the run's makespan holds both, the prediction and the formula the
	 * schedule (tc_last_coll) only. */
	const double vs_ns = vc ? rr.coll_modelled_ns : rr.modelled_ns;
	struct tc_team_info ti;
	tc_team_get_info(team, &ti);
	double err_pct =
	        rr.modelled_ns > 0 ? 100 * (rr.measured_ns - rr.modelled_ns) / rr.modelled_ns : NAN;
	/* --calibrated: measured against the prediction with this machine's
	 * parameters (that of the algorithm that ran: the model picked it). */
	double pred_ns = (double)pr.modelled_ps / TC_PS_PER_NS;
	int cal_seg = -1;
	double conc_share = 0, conc_sync = 0;
	if (o.calibrated) {
		/* The calibrated prediction: the segment of the schedule's mean
		 * message, plus o_call (tc_calibration_predict). */
		struct tc_call call = cli_case_call(&cs, rr.algorithm);
		err = tc_calibration_predict_placed(&cal, cs.t, &call, ti.place, NULL, &cal_seg, &pred_ns);
		if (!err) /* its concurrency charges (0 at p = 2), reported apart */
			err = tc_calibration_concurrency_ns(&cal, cs.t, &call, &conc_share, &conc_sync);
		if (err) {
			status = cli_coll_error(err, cs.coll, rr.algorithm, cs.t, cs.root);
			goto out;
		}
	}
	double cal_pct = o.calibrated && pred_ns > 0 ? 100 * (rr.measured_ns - pred_ns) / pred_ns : NAN;
	/* Where the modelled figures come from, and what the model leaves out. */
	const char *msrc = model_source(&cs.model.md, o.calibrated);
	char mdesc[160], mnote[256] = "";
	model_desc(&cs.model.md, msrc, mdesc, sizeof mdesc);
	if (!o.emulated && !o.calibrated)
		snprintf(mnote, sizeof mnote,
		         "the %s, not this machine's: --calibrated measures it", mdesc);
	else if (o.calibrated && ti.oversubscribed)
		snprintf(mnote, sizeof mnote,
		         "%d ranks on %d CPUs: the calibrated model prices messages as if every rank "
		         "had a CPU; it ignores the oversubscription, whose waits for a CPU the "
		         "measured time includes",
		         p, ti.cpus);
	double algbw, busbw, bwf;
	int has_bw = !vc && cli_busbw(cs.coll, p, cs.bytes, rr.measured_ns, &algbw, &busbw, &bwf) == 0;
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
		cli_json_int(&w, "calls", rr.calls);
		cli_json_int(&w, "warmup_calls", rr.warmup_calls);
		cli_json_bool(&w, "in_place", ra.in_place);
		cli_json_num(&w, "call_avg_ns", rr.call_avg_ns);
		cli_json_num(&w, "call_min_ns", rr.call_min_ns);
		cli_json_num(&w, "call_max_ns", rr.call_max_ns);
		cli_json_num(&w, "algbw_gbps", has_bw ? algbw : NAN);
		cli_json_num(&w, "busbw_gbps", has_bw ? busbw : NAN);
		cli_json_num(&w, "busbw_factor", has_bw ? bwf : NAN);
		cli_json_str(&w, "model_source", msrc);
		cli_json_str(&w, "model_note", *mnote ? mnote : NULL);
		cli_json_num(&w, "run_modelled_ns", rr.run_modelled_ns);
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
			cli_json_int(&w, "concurrency_ranks", cal.conc_ranks);
			cli_json_num(&w, "concurrency_share_ns", conc_share);
			cli_json_num(&w, "concurrency_sync_ns", conc_sync);
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
		printf("measured         %s  per call (median of %d run%s; min %s, max %s)\n",
		       cli_time(rr.measured_ns, b1), ra.repeat, ra.repeat == 1 ? "" : "s",
		       cli_time(rr.measured_min_ns, b2), cli_time(rr.measured_max_ns, b3));
		if (!o.emulated)
			printf("calls            %d per run back to back after %d warm-up%s%s: average "
			       "%s, fastest %s, slowest %s\n",
			       rr.calls, rr.warmup_calls, rr.warmup_calls == 1 ? "" : "s",
			       ra.in_place ? ", in place" : "", cli_time(rr.call_avg_ns, b1),
			       cli_time(rr.call_min_ns, b2), cli_time(rr.call_max_ns, b3));
		if (has_bw)
			printf("bandwidth        algbw %.3f GB/s, busbw %.3f GB/s (nccl-tests' "
			       "definitions: busbw = algbw x %.4g)\n",
			       algbw, busbw, bwf);
		printf("modelled         %s", cli_time(rr.modelled_ns, b1));
		if (o.emulated)
			printf("  (measured %+.1f%%) under the %s", err_pct, mdesc);
		else if (!o.calibrated)
			printf("  under %s", mnote);
		else
			printf("  under the %s", mdesc);
		printf("\n");
		if (o.calibrated) {
			const struct tc_calibration_segment *g = &cal.segments[cal_seg];
			printf("calibrated       segment %d (%s..%s): t_s %.1f ns, t_w %.4g ns/B; t_c %.4g "
			       "ns/B; o_call %.0f ns (piecewise fit R^2 %.3f, worst residual %.0f%%)\n",
			       cal_seg, cli_size_str(g->lo_bytes, b1, sizeof b1),
			       cli_size_str(g->hi_bytes, b2, sizeof b2), g->fit.ts_ns,
			       g->fit.tw_ns_per_byte, cs.model.md.tc_ns, cal.call_ns,
			       cal.piecewise.r2, 100 * cal.piecewise.max_rel_residual);
			printf("predicted        %s  with them (measured %+.1f%%)\n",
			       cli_time(pred_ns, b1), cal_pct);
			if (*mnote)
				printf("note             %s\n", mnote);
		}
		if (vc)
			printf("  of which data  %s  (the schedule of the counts, as predicted: %s; "
			       "before it the counts' agreement)\n",
			       cli_time(rr.coll_modelled_ns, b1),
			       cli_time((double)pr.modelled_ps / TC_PS_PER_NS, b2));
		printf("formula (source)   %s  (%s)\n", cli_time(pr.formula_ns, b1),
		       cli_vs_formula(vs_ns, pr.formula_ns, b2));
		printf("lower bound      %s%s\n", cli_time(pr.lower_bound_ns, b1),
		       cli_lb_note((double)pr.modelled_ps / TC_PS_PER_NS, &pr));
		printf("rounds           %d\n", rr.rounds);
		printf("stats            %llu messages, %llu bytes sent, %llu packets, %llu forwarded, "
		       "%llu sleeps (per call)\n",
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
