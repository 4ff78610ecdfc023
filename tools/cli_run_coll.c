/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_run_coll.c - the collective of topocoll run (and of sweep and
 * trace) run on a team: every rank's inputs and expected result
 * (tools/cli_run_ref.c), the warm-up and timed calls of each run with a
 * barrier of the tool before them, their times, and every rank's result
 * checked after the run's first and last calls; and one rank of such a
 * case outside tc_run, as a process of a team over MPI runs it
 * (cli_rank_run, tools/cli_mpi.c).
 */
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run_ref.h"

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
	/* Acquire: pairs with the release store of bar_gen by the last arriver
	 * and with tool_fail()'s increment. */
	unsigned gen = atomic_load_explicit(&c->bar_gen, memory_order_acquire);
	/* A rank that failed before this generation never arrives: leave
	 * (tool_fail() stores failed before its new generation, so a
	 * generation read after that one says failed). */
	if (atomic_load_explicit(&c->failed, memory_order_seq_cst))
		return 1;
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

/* Rank r's receive buffer is never written (exscan's rank 0) or holds the
 * input at the start (bcast's root): it starts as it should end. */
static int starts_done(const struct cli_run_args *a, int r)
{
	unsigned f = tc_coll_flags(a->coll);
	return (f & TC_CF_RECV_NOT0 && r == 0) || (f & TC_CF_NO_SEND && r == a->root);
}

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

/* In place, from CLI_APART_BYTES on, every rank copies its input back
 * before each timed call and the calls run a tool barrier apart: back to
 * back, a rank's copy fell inside the span of the call its peers had
 * entered (a ring allreduce of 1 MiB at p = 16 measured 802 us in place
 * against 494).  Below, the copy costs about what the barrier's exit adds
 * to each call's span (an 8-byte allreduce at p = 2: 620 against 170 ns),
 * and the calls stay back to back. */
#define CLI_APART_BYTES ((uint64_t)16 << 10)

static int calls_apart(const struct cli_run_args *a)
{
	return a->in_place && (uint64_t)a->bytes >= CLI_APART_BYTES;
}

/* The time of calls [j0, j1): from the first rank's entry into the first to
 * the last rank's exit from the last (back to back, a call may start while
 * its predecessor ends elsewhere); calls a barrier apart (calls_apart),
 * the sum of each call's own span, the barrier and the inputs' copies
 * between them left out. */
static double calls_time(const struct run_ctx *c, int j0, int j1)
{
	uint64_t lo = UINT64_MAX, hi = 0, l, h;
	double sum = 0;
	for (int j = j0; j < j1; j++) {
		call_span(c, j, &l, &h);
		sum += (double)(h - l);
		lo = l < lo ? l : lo;
		hi = h > hi ? h : hi;
	}
	return j1 <= j0 ? 0.0 : calls_apart(c->a) ? sum : (double)(hi - lo);
}

/* The first call of the run, from poisoned buffers, is checked by each rank
 * at once (after its time was taken; later calls overwrite the result); the
 * last by the tool after the run (emulated, a run of one call: only then). */
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
 * batch's time (calls_time), and sets the next batch: as many calls as made
 * so far (doubling), none once the budget or the room is reached. */
static void next_batch(struct run_ctx *c, int batch, int done)
{
	c->timed_ns += calls_time(c, done - batch, done);
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
	/* Emulated: the buffers were made ready before the run (its epoch is
	 * logical time 0, and what a rank does before its first call would
	 * count as the call's time). */
	if (!c->emulated)
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
			if (k) {
				prep_buffers(c, r, 0); /* in place: the input again */
				if (calls_apart(a) && bar && tool_barrier(c, proc)) {
					err = TC_EABORTED;
					break;
				}
			}
			uint64_t t = now_ns();
			err = call_coll(c, proc, &opts, k);
			c->t0[(size_t)r * (size_t)c->ccap + (size_t)(done + j)] = t;
			c->t1[(size_t)r * (size_t)c->ccap + (size_t)(done + j)] = now_ns();
			/* Emulated (one call a run): checked after the run, as
			 * the check would count as the call's time. */
			if (!c->emulated)
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
			cli_run_gen_input(c->in[r], il / es, a->dt, a->op, r, p);
		else
			for (size_t i = 0; i < il; i++)
				c->in[r][i] = (unsigned char)cli_run_mix(((uint64_t)r << 40) ^ i);
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
				e[i] = (unsigned char)cli_run_mix(((uint64_t)0xabcdu << 40) ^ i);
		} else {
			cli_run_ref_result(a, p, r, c->in, c->count, e);
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
		/* Each rank poisons its own buffers (prep_buffers; emulated,
		 * this thread before the run): the bcast root holds the data,
		 * every other output the complement of the expected bytes. */
		const int timed_run = k >= total - nrun;
		c.auto_calls = auto_calls && timed_run;
		c.calls = a->calls > 0 ? a->calls : 1;
		c.timed_ns = 0;
		c.wcalls = auto_wcalls ? c.auto_calls || c.calls > 1 : a->warmup_calls;
		for (int r = 0; r < p; r++)
			c.first_bad[r] = UINT64_MAX;
		atomic_store(&c.arrived, 0);
		atomic_store(&c.barrier_bad, 0);
		if (c.emulated)
			for (int r = 0; r < p; r++)
				prep_buffers(&c, r, 1);
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
		/* The run's calls' time (calls_time) over the calls
		 * (auto_calls: the same per batch). */
		double m;
		for (int j = 0; j < c.calls; j++) {
			uint64_t l, h;
			call_span(&c, j, &l, &h);
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
			m = calls_time(&c, 0, c.calls) / c.calls;
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
