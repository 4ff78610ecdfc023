/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/coll.c - the collective entry points: argument checks, the
 * registry, generation (the duals: dual.c), the per-rank plan from the
 * cache (cache.c, which selects through select.c), and the call into the
 * executor.
 *
 * Cache: each rank keeps its own last TC__CACHE schedules (no sharing, no
 * locks); a hit costs a few comparisons.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/cache.h"
#include "coll/coll_internal.h"
#include "base/error_detail.h"
#include "coll/gen.h"
#include "coll/machine.h"
#include "coll/shm.h"
#include "core/internal.h"
#include "sched/exec.h"
#include "sched/nbc.h"
#include "p2p/p2p.h"
#include "p2p/request.h"

const struct tc__alg tc__algs[] = {
#define TC__ALG(coll, name, gen, formula, flags, req, topos) \
	{coll, #name, gen, formula, flags, req, topos},
#include "coll/algorithms.def"
#undef TC__ALG
};
const int tc__nalgs = (int)(sizeof tc__algs / sizeof tc__algs[0]);

enum { TC__DUAL_NONE = -1, TC__DUAL_COPY = 1, TC__DUAL_COMBINE = 0 };
const struct tc__coll_desc tc__colls[TC_COLL_COUNT] = {
#define TC_COLL(NAME, name, shape, bound, dual_of, dual_op) \
	[TC_COLL_##NAME] = {#name, shape, TC__LB_COL_##bound, TC__DUAL_OF_##dual_of, TC__DUAL_##dual_op},
#define TC__LB_COL_OAB TC_LB_OAB
#define TC__LB_COL_AAB TC_LB_AAB
#define TC__LB_COL_OAS TC_LB_OAS
#define TC__LB_COL_AAS TC_LB_AAS
#define TC__LB_COL_PERM TC__LB_PERM
#define TC__LB_COL_MC TC__LB_MC
#define TC__LB_COL_NONE TC__LB_NONE
#define TC__DUAL_OF_NONE TC__DUAL_NONE
#define TC__DUAL_OF_BCAST TC_COLL_BCAST
#define TC__DUAL_OF_SCATTER TC_COLL_SCATTER
#include "topocoll/collectives.def"
#undef TC_COLL
};

const char *tc_coll_name(enum tc_coll c)
{
	return (unsigned)c < TC_COLL_COUNT ? tc__colls[c].name : NULL;
}

unsigned tc_coll_flags(enum tc_coll c)
{
	return (unsigned)c < TC_COLL_COUNT ? tc__colls[c].flags : 0;
}

/* The first of a's registry restrictions (req) that g fails, in words
 * written into buf ("" when len is 0), or NULL when a applies. */
static const char *tc__alg_fails(const struct tc__alg *a, const struct tc__gen *g, char *buf, size_t len)
{
	const enum tc_topo_kind kind = tc_topo_kind(g->t);
	unsigned kinds = a->req & TC__R_KINDS;
	if (len)
		buf[0] = '\0';
	if (kinds && !(kinds & TC__R_KIND(kind))) {
		if (len)
			snprintf(buf, len, "it runs on %s (not %s)", a->topologies,
			         tc_topo_kind_name(kind));
		return len ? buf : "";
	}
	if ((a->req & TC__R_POW2) && tc__log2_exact(g->p) < 0) {
		if (len)
			snprintf(buf, len, "it needs p a power of two, not %d", g->p);
		return len ? buf : "";
	}
	if ((a->req & TC__R_COMBINING) && !g->md->combining) {
		if (len)
			snprintf(buf, len, "it needs the combining model (combining is off)");
		return len ? buf : "";
	}
	if ((a->req & TC__R_ALLPORT) && g->md->ports != TC_PORTS_ALL) {
		if (len)
			snprintf(buf, len, "it needs the all-port model (ports: one)");
		return len ? buf : "";
	}
	if ((a->req & TC__R_ONEPORT) && g->md->ports != TC_PORTS_ONE) {
		if (len)
			snprintf(buf, len, "it needs the one-port model (ports: all)");
		return len ? buf : "";
	}
	if ((a->req & TC__R_2D) && tc_topo_dims(g->t, NULL) != 2) {
		if (len)
			snprintf(buf, len, "it needs two dimensions, not %d", tc_topo_dims(g->t, NULL));
		return len ? buf : "";
	}
	if ((a->req & TC__R_CUBE_BY_RING) && kind == TC_TOPO_HYPERCUBE && !g->shift_ring) {
		if (len)
			snprintf(buf, len,
			         "on a hypercube it shifts along the Gray-code ring only "
			         "(shift_ring)");
		return len ? buf : "";
	}
	if ((a->req & TC__R_HRING) && !tc__hring_embeds(g->t)) {
		if (len)
			snprintf(buf, len,
			         tc_topo_dims(g->t, NULL) > 2
			                 ? "it needs a ring through every node, embedded in 2-D grids only"
			                 : "it needs a ring through every node: a 2-D mesh has one only "
			                   "with an even side and no side of 1");
		return len ? buf : "";
	}
	return NULL;
}

int tc__alg_check(const struct tc__alg *a, const struct tc__gen *g)
{
	char why[160], list[160], spec[64];
	if (!tc__alg_fails(a, g, why, sizeof why))
		return TC_OK;
	size_t n = 0;
	list[0] = '\0';
	for (int i = 0; i < tc__nalgs && n < sizeof list; i++) {
		const struct tc__alg *b = &tc__algs[i];
		if (b->coll == a->coll && !tc__alg_fails(b, g, NULL, 0))
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", b->name);
	}
	tc_topo_spec(g->t, spec, sizeof spec);
	tc__set_detail("algorithm '%s' of %s does not apply to %s: %s; %s%s", a->name,
	               tc_coll_name(a->coll), spec, why, n ? "algorithms that apply: " : "",
	               n ? list : "no algorithm of it applies");
	return TC_ENOTSUP;
}

int tc__alg_check_quiet(const struct tc__alg *a, const struct tc__gen *g)
{
	return tc__alg_fails(a, g, NULL, 0) ? TC_ENOTSUP : TC_OK;
}

int tc__emit(struct tc__sched *s, int src, int dst, int sbuf, uint64_t soff, int rbuf,
             uint64_t roff, uint64_t bytes, int op)
{
	struct tc__xfer x = {.src = src,
	                     .dst = dst,
	                     .sbuf = (uint8_t)sbuf,
	                     .rbuf = (uint8_t)rbuf,
	                     .op = (uint8_t)op,
	                     .soff = soff,
	                     .roff = roff,
	                     .bytes = bytes};
	return tc__sched_add(s, &x);
}

int tc__emit_from(struct tc__sched *s, int src, int dst, int sbuf, uint64_t soff, int rbuf,
                  uint64_t roff, uint64_t bytes, int op, int abuf)
{
	struct tc__xfer x = {.src = src,
	                     .dst = dst,
	                     .sbuf = (uint8_t)sbuf,
	                     .rbuf = (uint8_t)rbuf,
	                     .op = (uint8_t)op,
	                     .abuf = (uint8_t)(abuf == rbuf ? 0 : abuf + 1),
	                     .soff = soff,
	                     .roff = roff,
	                     .bytes = bytes};
	return tc__sched_add(s, &x);
}

static int tc__int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Whether rank r is in a canonical (ascending) member set. */
static bool tc__in_set(int r, const int *members, int n)
{
	return n > 0 && bsearch(&r, members, (size_t)n, sizeof *members, tc__int_cmp);
}

/* One step of FNV-1a over 64-bit values: the call's tag and the multicast's
 * agreement hash. */
#define TC__FNV_BASIS 1469598103934665603ull
static uint64_t tc__fnv(uint64_t h, uint64_t v)
{
	return (h ^ v) * 1099511628211ull;
}

int tc__members_canon(int p, int root, const int *members, int n, int *out, int *nout)
{
	if (n < 0 || (n > 0 && !members))
		return TC_EINVAL;
	for (int i = 0; i < n; i++)
		if (members[i] < 0 || members[i] >= p)
			return TC_ERANK;
	if (n) { /* out may be NULL then (UBSan: qsort's argument is nonnull) */
		memcpy(out, members, (size_t)n * sizeof *out);
		qsort(out, (size_t)n, sizeof *out, tc__int_cmp);
	}
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (i && out[i] == out[i - 1])
			return TC_EINVAL;
		if (out[i] != root)
			out[k++] = out[i];
	}
	*nout = k;
	return TC_OK;
}

double tc__direct_round_ns(const struct tc__gen *g)
{
	if (g->p == 1)
		return 0;
	if (tc_topo_props(g->t)->diameter > 1 || g->md->duplex != TC_DUPLEX_FULL)
		return NAN;
	return tc_cost_direct_round(g->md, g->p, (double)g->bytes);
}

void tc__block(uint64_t bytes, uint64_t esize, int nblk, int k, uint64_t *off, uint64_t *len)
{
	uint64_t n = bytes / esize, q = n / (uint64_t)nblk, r = n % (uint64_t)nblk;
	uint64_t uk = (uint64_t)k;
	uint64_t first = uk * q + (uk < r ? uk : r);
	*off = first * esize;
	*len = (q + (uk < r ? 1 : 0)) * esize;
}

int tc__pieces_p2(const struct tc__gen *g, const char *alg)
{
	const int64_t p = g->p, lim = 46340; /* the largest p with p^2 <= INT32_MAX */
	if (p <= lim)
		return TC_OK;
	tc__set_detail("%s %s on %lld ranks: its schedule tracks p^2 = %lld blocks, over the "
	               "limit of 2^31 - 1 (at most %lld ranks): choose another algorithm "
	               "(--alg) or fewer ranks",
	               tc_coll_name(g->coll), alg, (long long)p, (long long)(p * p), (long long)lim);
	return TC_ELIMIT;
}

int tc__coll_generate(const struct tc__alg *a, const struct tc__gen *g, struct tc__sched *s)
{
	int err = tc__alg_check(a, g);
	if (err)
		return err;
	if (g->max_x > 0 && tc__sched_size_lb(a, g) > g->max_x)
		return TC__ELIMIT; /* known to be over: not generated (size.c) */
	tc__sched_generated_add();
	if (!(a->flags & TC__ALG_DUAL)) {
		err = tc__sched_init(s, g->p);
		if (err)
			return err;
		s->max_x = g->max_x;
		s->max_moving = g->max_moving;
		s->count_only = g->count_only;
		err = a->gen(g, s);
		if (!err)
			err = s->err;
		if (err)
			tc__sched_free(s);
		return err;
	}
	const struct tc__coll_desc *cd = &tc__colls[g->coll];
	struct tc__sched b;
	struct tc__gen gb = *g;
	gb.coll = (enum tc_coll)cd->dual_of;
	err = tc__sched_init(&b, g->p);
	if (err)
		return err;
	b.max_x = g->max_x;
	b.max_moving = g->max_moving;
	b.count_only = g->count_only;
	err = a->gen(&gb, &b);
	if (!err)
		err = b.err;
	if (!err)
		err = tc__dual(&b, cd->dual_copy, g->root, g->bytes, s);
	tc__sched_free(&b);
	return err;
}

const struct tc__alg *tc__alg_find(enum tc_coll coll, const char *name)
{
	for (int i = 0; i < tc__nalgs; i++)
		if (tc__algs[i].coll == coll && !strcmp(tc__algs[i].name, name))
			return &tc__algs[i];
	return NULL;
}

/* ---- entry points -------------------------------------------------------- */

struct tc__combine_ctx {
	enum tc_dtype dt;
	enum tc_op op;
	const struct tc_user_op *user;
	int eshift; /* log2 of the element size (every datatype's is 1, 2,
	               4 or 8 bytes): no division on every combine's path */
};

#define TC__DT_POW2(name, type) \
	_Static_assert((sizeof(type) & (sizeof(type) - 1)) == 0, #name ": size a power of two");
TC_DTYPE_MAP(TC__DT_POW2)
#undef TC__DT_POW2

static void tc__combine(void *out, const void *left, const void *right, size_t bytes, void *ctxp)
{
	const struct tc__combine_ctx *c = ctxp;
	tc__reduce3(out, left, right, bytes >> c->eshift, c->dt, c->op, c->user);
}

/* The 64-bit signature of the call (lib/sched/exec.c, mismatch detection):
 * everything that shapes its schedule and the meaning of its data. */
static uint64_t tc__sig(const struct tc__gen *g, const struct tc__alg *a, int op)
{
	uint64_t h = TC__FNV_BASIS;
	uint64_t v[] = {(uint64_t)g->coll,
	                (uint64_t)(a - tc__algs),
	                g->bytes,
	                (uint64_t)g->root,
	                (uint64_t)op,
	                g->esize,
	                (uint64_t)g->q,
	                (uint64_t)g->nmembers,
	                (uint64_t)g->shift_ring};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
		h = tc__fnv(h, v[i]);
	for (int i = 0; i < g->nmembers; i++)
		h = tc__fnv(h, (uint64_t)g->members[i]);
	return h;
}

/* Its 15 bits (plus the collective bit): the whole signature that messages
 * carry when the team's mismatch detection is off. */
static int tc__tag(uint64_t sig)
{
	return (int)(0x8000u | (unsigned)(sig & 0x7fffu) | 1u);
}

/* ---- buffers, and collective calls as requests ----------------------------- */

/* A call's shape, as the buffer set-up needs it. */
struct tc__call {
	enum tc_coll coll;
	unsigned f;
	const void *sbuf;
	void *rbuf;
	size_t bytes, sbytes, rbytes;
	int me, root, p;
	bool recvs, sends, scatter_ip, in_place;
	const struct tc__sched *s;
	const struct tc__alg *alg;
};

/* The scratch slots of the entry points (the executor's are below them). */
enum { TC__SLOT_OUT = TC__SCRATCH_SLOTS - 1, TC__SLOT_IN = TC__SCRATCH_SLOTS - 2 };
typedef void *(*tc__buf_fn)(void *ctx, int slot, size_t bytes);

static void *tc__scratch_get(void *ctx, int slot, size_t bytes)
{
	return tc__scratch(ctx, slot, bytes);
}

static bool tc__overlaps(const void *a, size_t an, const void *b, size_t bn)
{
	uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
	return an && bn && a0 < b0 + bn && b0 < a0 + an;
}

/* io's IN and OUT for call c, with the copies it needs from get (the
 * proc's scratch for a blocking call, the request's own buffers for a
 * collective request, made at each start). */
static int tc__call_bufs(struct tc_proc *proc, const struct tc__call *c, tc__buf_fn get, void *ctx,
                         struct tc__exec_io *io)
{
	(void)proc;
	const unsigned f = c->f;
	const size_t bytes = c->bytes;
	/* OUT: the caller's buffer; scratch on the ranks of a reduction that
	 * get no result (reduce's non-roots accumulate there), on a multicast's
	 * ranks outside the set (they may forward), and at scatter's root in
	 * place. */
	void *out = c->recvs && !c->scatter_ip ? c->rbuf : NULL;
	if (c->rbytes && (c->scatter_ip || (!c->recvs && (f & (TC_CF_REDUCES | TC_CF_MEMBERS))))) {
		out = get(ctx, TC__SLOT_OUT, c->rbytes);
		if (!out)
			return TC_ENOMEM;
	}
	/* IN: the caller's input.  In place it is in rbuf (allgather: at this
	 * rank's block; gather: at the root's); an algorithm that reads IN
	 * while it writes OUT gets a copy then, and when the caller's buffers
	 * overlap.  A reduction whose schedule does not read IN starts with
	 * its input copied into OUT. */
	const void *in = c->sbuf;
	size_t inoff = c->coll == TC_COLL_ALLGATHER ? (size_t)c->me * bytes
	               : c->coll == TC_COLL_GATHER  ? (size_t)c->root * bytes
	                                            : 0;
	if (c->in_place && !c->scatter_ip)
		in = (const char *)c->rbuf + inoff;
	if (!c->sends || !bytes) {
		in = NULL;
	} else if ((f & TC_CF_REDUCES) && c->s->reads_in && in == out) {
		/* In place at a reduce's root: the dual reads IN only where
		 * it first writes OUT, in the same pass (lib/coll/dual.c). */
	} else if ((f & TC_CF_REDUCES) && !(c->alg->flags & TC__ALG_READS_IN) && !c->s->reads_in) {
		if (in != out)
			memmove(out, in, bytes);
		in = out;
	} else if (c->p == 1 && c->coll == TC_COLL_ALLREDUCE) {
		if (out != in)
			memmove(out, in, bytes); /* an empty schedule */
	} else if (tc__overlaps(in, c->sbytes, out, c->rbytes)) {
		/* In place, or the caller's buffers overlap. */
		void *copy = get(ctx, TC__SLOT_IN, c->sbytes);
		if (!copy)
			return TC_ENOMEM;
		memcpy(copy, in, c->sbytes);
		in = copy;
	}
	io->in = in;
	io->out = out;
	if (c->coll == TC_COLL_BCAST || c->coll == TC_COLL_MULTICAST)
		io->in = io->out = out;
	return TC_OK;
}

/* A collective request: nonblocking (xr->persistent 0) or persistent; or,
 * built set, an operation made and handed back in *built, neither started
 * nor bound (a phase of a call made of several: tc_imulticast). */
struct tc__xreq {
	tc_request *req;
	int persistent;
	struct tc__creq **built;
};

/* What a collective request holds: the queue's operation (lib/sched/
 * nbc.h), the plan and schedule it runs (held: an eviction of the cache
 * entry leaves them), the call, its combine context, its own copies. */
struct tc__cop {
	struct tc__creq x;
	struct tc__chold *hold;
	struct tc__call c;
	struct tc__combine_ctx cc;
	void *own[2];
	size_t own_n[2];
};

static void *tc__cop_get(void *ctx, int slot, size_t bytes)
{
	struct tc__cop *o = ctx;
	int k = slot == TC__SLOT_OUT;
	if (o->own_n[k] < bytes) {
		void *p = realloc(o->own[k], bytes);
		if (!p)
			return NULL;
		o->own[k] = p;
		o->own_n[k] = bytes;
	}
	return o->own[k];
}

static int tc__cop_prepare(struct tc__creq *x)
{
	struct tc__cop *o = (struct tc__cop *)x;
	return tc__call_bufs(NULL, &o->c, tc__cop_get, o, &o->x.io);
}

static void tc__cop_release(struct tc__creq *x)
{
	struct tc__cop *o = (struct tc__cop *)x;
	tc__chold_put(o->hold);
	free(o->own[0]);
	free(o->own[1]);
	free(o);
}

/* The call as a request: started (nonblocking), bound inactive
 * (persistent), or, xr NULL, a blocking call queued behind the started
 * ones and waited for. */
static int tc__cop_new(struct tc_proc *proc, struct tc__centry *e, const struct tc__call *c,
                       const struct tc__combine_ctx *cc, const struct tc__exec_io *io,
                       const struct tc__xreq *xr)
{
	const size_t head = (sizeof(struct tc__cop) + 63) / 64 * 64;
	struct tc__cop *o = calloc(1, head + tc__run_size());
	if (!o)
		return TC_ENOMEM;
	o->hold = tc__chold_get(e);
	o->c = *c;
	o->cc = *cc;
	o->x.s = e->s;
	o->x.pl = e->plan;
	o->x.io = *io;
	o->x.io.combine_ctx = &o->cc;
	o->x.persistent = xr && xr->persistent;
	o->x.prepare = tc__cop_prepare;
	o->x.release = tc__cop_release;
	o->x.run = (struct tc__run *)(void *)((char *)o + head);
	if (xr && xr->built) {
		*xr->built = &o->x;
		return TC_OK;
	}
	if (!xr)
		return tc__creq_run(proc, &o->x);
	return tc__creq_launch(proc, &o->x, xr->req, xr->persistent);
}

/*
 * Every collective's entry: the arguments checked from the collective's
 * shape (collectives.def), the schedule from the cache, the buffers set up,
 * the plan run.  sbuf and rbuf as the public calls take them (bcast: rbuf is
 * the buffer; barrier: neither).
 */
struct tc__coll_extra {
	int q;              /* shift: q mod p */
	int shift_ring;     /* shift: along the topology's ring */
	const int *members; /* multicast: canonical (tc__members_canon) */
	int nmembers;
};

/* The generator's view of a call (its schedule's key and signature). */
static struct tc__gen tc__coll_gen(const struct tc_team *team, enum tc_coll coll, size_t bytes,
                                   size_t es, int root, int packets, const struct tc__coll_extra *x)
{
	return (struct tc__gen){.coll = coll,
	                        .t = team->topo,
	                        .p = team->p,
	                        .bytes = bytes,
	                        .esize = es,
	                        .root = root,
	                        .md = &team->model,
	                        .packets = packets,
	                        .me = -1,
	                        .q = x->q,
	                        .shift_ring = x->shift_ring,
	                        .members = x->members,
	                        .nmembers = x->nmembers};
}

/* Whether the blocking call is the one m keeps: every argument equal (the
 * algorithm's name by its text too), so that its checks, which depend on
 * nothing else, would find what they found then. */
static bool tc__memo_hit(const struct tc__cmemo *m, enum tc_coll coll, const void *sbuf, void *rbuf,
                         size_t count, enum tc_dtype dt, enum tc_op op, int root,
                         const struct tc_coll_opts *opts, const struct tc__coll_extra *x)
{
	const char *alg = opts ? opts->alg : NULL;
	const int packets = opts ? opts->packets : 0;
	return m && m->e && m->coll == coll && m->count == count && m->sbuf == sbuf &&
	       m->rbuf == rbuf && m->dt == dt && m->op == op && m->root == root &&
	       m->packets == packets && m->alg == alg && !x->nmembers && !x->q && !x->shift_ring &&
	       (!alg || !strncmp(m->e->key.name, alg, sizeof m->e->key.name));
}

static int tc__coll_x(struct tc_proc *proc, enum tc_coll coll, const void *sbuf, void *rbuf, size_t count,
                      enum tc_dtype dt, enum tc_op op, int root, const struct tc_coll_opts *opts,
                      const struct tc__coll_extra *x, const struct tc__xreq *xr)
{
	if (xr && !xr->req)
		return TC_EINVAL;
	if (xr) /* not started until it is: a wait on it says TC_EINVAL */
		memset(tc__req(xr->req), 0, sizeof(struct tc__req));
	if (!proc)
		return TC_EINVAL;
	struct tc_team *team = proc->team;
	const unsigned f = tc__colls[coll].flags;
	const int p = team->p, me = proc->rank;
	struct tc_coll_opts none = {0};
	if (!opts)
		opts = &none;
	struct tc__cmemo *memos = xr ? NULL : tc__coll_memo(proc), *memo = NULL;
	struct tc__centry *e;
	size_t es, bytes, sbytes, rbytes;
	bool sends, recvs, scatter_ip, in_place;
	int err;
	for (int k = 0; memos && k < TC__MEMOS && !memo; k++)
		if (tc__memo_hit(&memos[k], coll, sbuf, rbuf, count, dt, op, root, opts, x))
			memo = &memos[k];
	if (memo) {
		/* The same blocking call as one of the last: checked then. */
		e = memo->e;
		if (!(f & TC_CF_REDUCES))
			op = TC_OP_BOR;
		root = memo->root_used;
		es = memo->es;
		bytes = memo->bytes;
		sbytes = memo->sbytes;
		rbytes = memo->rbytes;
		sends = memo->sends;
		recvs = memo->recvs;
		scatter_ip = memo->scatter_ip;
		in_place = memo->in_place;
	} else {
		const enum tc_op op_given = op;
		const int root_given = root;
		es = tc_dtype_size(dt);
		if (!es)
			return TC_EINVAL;
		if (f & TC_CF_REDUCES) {
			if ((unsigned)op >= TC_OP_COUNT)
				return TC_EINVAL;
			if (op == TC_OP_USER && (!opts->user_op || !opts->user_op->fn))
				return TC_EINVAL;
			if (op != TC_OP_USER && tc__op_check(dt, op))
				return TC_ENOTSUP;
		} else {
			op = TC_OP_BOR; /* not used: the tag ignores what the call has no use for */
		}
		if (count > TC_MAX_MESSAGE / es)
			return TC_EOVERFLOW;
		bytes = count * es;
		if ((f & (TC_CF_SEND_P | TC_CF_RECV_P)) && bytes > TC_MAX_MESSAGE / (size_t)p)
			return TC_EOVERFLOW;
		if (f & TC_CF_ROOTED) {
			if (root < 0 || root >= p)
				return TC_EROOT;
		} else {
			root = 0;
		}
		/* What this rank reads and writes. */
		const bool is_root = me == root;
		const bool member =
		        is_root || ((f & TC_CF_MEMBERS) && tc__in_set(me, x->members, x->nmembers));
		sends = !(f & TC_CF_NO_SEND) && (!(f & TC_CF_SEND_ROOT) || is_root);
		recvs = !(f & TC_CF_NO_DATA) && (!(f & TC_CF_RECV_ROOT) || is_root) &&
		        !((f & TC_CF_RECV_NOT0) && me == 0) && (!(f & TC_CF_MEMBERS) || member);
		sbytes = (f & TC_CF_SEND_P) ? bytes * (size_t)p : bytes;
		rbytes = (f & TC_CF_RECV_P) ? bytes * (size_t)p : bytes;
		/* In place: sbuf == TC_IN_PLACE (the input is in rbuf), or, for
		 * scatter's root, rbuf == TC_IN_PLACE (its block stays in sbuf). */
		scatter_ip = coll == TC_COLL_SCATTER && rbuf == (void *)TC_IN_PLACE;
		in_place = sbuf == TC_IN_PLACE || scatter_ip;
		if (rbuf == (void *)TC_IN_PLACE && !scatter_ip)
			return TC_EINVAL; /* not a buffer (only scatter's root takes it there) */
		if (in_place) {
			if ((f & (TC_CF_NO_SEND | TC_CF_NO_DATA)) || (coll == TC_COLL_SCATTER) != scatter_ip)
				return TC_EINVAL;
			if ((f & TC_CF_ROOTED) && !is_root)
				return TC_EINVAL; /* only the root may (MPI) */
		}
		if (bytes && recvs && !scatter_ip && !rbuf)
			return TC_ENULLBUF;
		if (bytes && sends && !in_place && !sbuf)
			return TC_ENULLBUF;
		if (bytes && sends && in_place && !scatter_ip && !rbuf)
			return TC_ENULLBUF; /* the input is in rbuf (exscan's rank 0 too) */
		if (bytes && sends && recvs && !in_place && (f & (TC_CF_SEND_P | TC_CF_RECV_P)) &&
		    tc__overlaps(sbuf, sbytes, rbuf, rbytes))
			return TC_EINVAL; /* aliased p-block buffers without TC_IN_PLACE */
		if (opts->packets < 0)
			return TC_EINVAL;

		const struct tc__gen g = tc__coll_gen(team, coll, bytes, es, root, opts->packets, x);
		const int ordered = op == TC_OP_USER && !opts->user_op->commutative;
		err = tc__coll_plan(proc, &g, opts->alg, ordered, &e);
		if (err)
			return err;
		memos = xr ? NULL : tc__coll_memo(proc); /* made by the first call */
		if (memos && op != TC_OP_USER && !x->nmembers && !x->q && !x->shift_ring) {
			/* The memo of the same collective, else the first: the
			 * other collective kept moves to the second. */
			memo = &memos[0];
			for (int k = 0; k < TC__MEMOS; k++)
				if (memos[k].e && memos[k].coll == coll)
					memo = &memos[k];
			if (memo == &memos[0] && memos[0].e && memos[0].coll != coll) {
				memmove(&memos[1], &memos[0], sizeof memos[0] * (TC__MEMOS - 1));
				memo = &memos[0];
			}
			*memo = (struct tc__cmemo){.e = e,
			                           .coll = coll,
			                           .dt = dt,
			                           .op = op_given,
			                           .root = root_given,
			                           .packets = opts->packets,
			                           .count = count,
			                           .sbuf = sbuf,
			                           .rbuf = rbuf,
			                           .alg = opts->alg,
			                           .root_used = root,
			                           .es = es,
			                           .bytes = bytes,
			                           .sbytes = sbytes,
			                           .rbytes = rbytes,
			                           .sends = sends,
			                           .recvs = recvs,
			                           .scatter_ip = scatter_ip,
			                           .in_place = in_place};
		}
	}
	/* Only now, after every check of the arguments and of the algorithm
	 * (the plan is a pure function of the call): ranks given the same bad
	 * call all return its code, whichever of them fails first and aborts
	 * the team (README, "Errors"). */
	if (atomic_load_explicit(&team->aborted, memory_order_relaxed))
		return TC_EABORTED;

	struct tc__call c = {.coll = coll,
	                     .f = f,
	                     .sbuf = sbuf,
	                     .rbuf = rbuf,
	                     .bytes = bytes,
	                     .sbytes = sbytes,
	                     .rbytes = rbytes,
	                     .me = me,
	                     .root = root,
	                     .p = p,
	                     .recvs = recvs,
	                     .sends = sends,
	                     .scatter_ip = scatter_ip,
	                     .in_place = in_place,
	                     .s = e->s,
	                     .alg = e->alg};
	struct tc__combine_ctx cc = {dt, op, opts->user_op, __builtin_ctzll(es)};
	/* The tag of the last op and datatype seen is kept (the entry's key
	 * has the element size, not the type). */
	const int tag_op = ((int)dt << 8 | (int)op) + 1;
	if (e->tag_op != tag_op) {
		const struct tc__gen g = tc__coll_gen(team, coll, bytes, es, root, opts->packets, x);
		e->sig = tc__sig(&g, e->alg, tag_op);
		e->tag = tc__tag(e->sig);
		e->tag_op = tag_op;
	}
	struct tc__exec_io io = {.combine = tc__combine,
	                         .combine_ctx = &cc,
	                         .tag = e->tag,
	                         .sig = e->sig,
	                         .call = tc__colls[coll].name,
	                         .alg = e->alg->name,
	                         .user_code = op == TC_OP_USER};
	proc->last_alg = e->alg->name;
	proc->last_rounds = e->s->nrounds;
	proc->last_modelled = e->makespan;
	/* The machine's own algorithms run natively only as blocking calls
	 * (a nonblocking one runs their schedule over the channels; MPI's
	 * rule that a blocking call matches only blocking ones makes every
	 * rank of a call take the same path): the calls queued before one
	 * finish first. */
	const bool shm = (e->alg->flags & TC__ALG_SHM) && !team->emulate && !team->engine_run;
	if (!xr && shm && tc__creq_pending(proc) && (err = tc__creq_drain(proc)))
		return err;
	if (xr || tc__creq_pending(proc))
		return tc__cop_new(proc, e, &c, &cc, &io, xr);
	/* Blocking, nothing queued before it: run here. */
	err = tc__call_bufs(proc, &c, tc__scratch_get, proc, &io);
	if (err)
		return err;
	tc__clock_pull(proc); /* a sub-team's proc: the rank's clock */
	if (shm)
		err = tc__shm_exec(proc, tc__coll_shm(proc), e, &io);
	else if (team->engine_run)
		err = team->engine_run(proc, e->s, &io);
	else
		err = tc__plan_exec(proc, e->s, e->plan, &io);
	tc__clock_push(proc);
	return err;
}

static int tc__coll(struct tc_proc *proc, enum tc_coll coll, const void *sbuf, void *rbuf,
                    size_t count, enum tc_dtype dt, enum tc_op op, int root,
                    const struct tc_coll_opts *opts, const struct tc__xreq *xr)
{
	const struct tc__coll_extra none = {0};
	return tc__coll_x(proc, coll, sbuf, rbuf, count, dt, op, root, opts, &none, xr);
}

int tc__allgather_marked(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                         enum tc_dtype dt, int mark)
{
	const struct tc__coll_extra x = {.q = mark};
	return tc__coll_x(proc, TC_COLL_ALLGATHER, sbuf, rbuf, count, dt, TC_OP_BOR, 0, NULL, &x, NULL);
}

/* Each collective three ways: blocking (tc_NAME), nonblocking (tc_iNAME)
 * and persistent (tc_NAME_init), from one list of their arguments. */
#define TC__COLL3(name, NAME, params, sbuf, rbuf, count, dt, op, root)                              \
	int tc_##name params                                                                        \
	{                                                                                           \
		return tc__coll(proc, TC_COLL_##NAME, sbuf, rbuf, count, dt, op, root, opts, NULL); \
	}                                                                                           \
	int tc_i##name(TC__UNPAREN params, tc_request *req)                                         \
	{                                                                                           \
		const struct tc__xreq xr = {req, 0, NULL};                                          \
		return tc__coll(proc, TC_COLL_##NAME, sbuf, rbuf, count, dt, op, root, opts, &xr);  \
	}                                                                                           \
	int tc_##name##_init(TC__UNPAREN params, tc_request *req)                                   \
	{                                                                                           \
		const struct tc__xreq xr = {req, 1, NULL};                                          \
		return tc__coll(proc, TC_COLL_##NAME, sbuf, rbuf, count, dt, op, root, opts, &xr);  \
	}
#define TC__UNPAREN(...) __VA_ARGS__

TC__COLL3(bcast, BCAST,
          (struct tc_proc * proc, void *buf, size_t count, enum tc_dtype dt, int root,
           const struct tc_coll_opts *opts),
          NULL, buf, count, dt, TC_OP_SUM, root)
TC__COLL3(reduce, REDUCE,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           enum tc_op op, int root, const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, op, root)
TC__COLL3(allreduce, ALLREDUCE,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           enum tc_op op, const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, op, 0)
TC__COLL3(barrier, BARRIER, (struct tc_proc * proc, const struct tc_coll_opts *opts), NULL, NULL, 0,
          TC_BYTE, TC_OP_BOR, 0)
TC__COLL3(allgather, ALLGATHER,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, TC_OP_BOR, 0)
TC__COLL3(reduce_scatter, REDUCE_SCATTER,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           enum tc_op op, const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, op, 0)
TC__COLL3(scan, SCAN,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           enum tc_op op, const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, op, 0)
TC__COLL3(exscan, EXSCAN,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           enum tc_op op, const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, op, 0)
TC__COLL3(scatter, SCATTER,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           int root, const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, TC_OP_BOR, root)
TC__COLL3(gather, GATHER,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           int root, const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, TC_OP_BOR, root)
TC__COLL3(alltoall, ALLTOALL,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, TC_OP_BOR, 0)
TC__COLL3(gray2binary, GRAY2BINARY,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, TC_OP_BOR, 0)
TC__COLL3(binary2gray, BINARY2GRAY,
          (struct tc_proc * proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
           const struct tc_coll_opts *opts),
          sbuf, rbuf, count, dt, TC_OP_BOR, 0)

void tc_last_coll(const struct tc_proc *proc, struct tc_coll_info *out)
{
	out->algorithm = proc->last_alg;
	out->rounds = proc->last_rounds;
	out->modelled_ps = proc->last_modelled;
}

static int tc__shift(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
                     int q, const struct tc_coll_opts *opts, const struct tc__xreq *xr)
{
	if (!proc)
		return TC_EINVAL;
	const long p = proc->team->p;
	const struct tc__coll_extra x = {.q = (int)((((long)q % p) + p) % p),
	                                 .shift_ring = opts && opts->shift_ring};
	return tc__coll_x(proc, TC_COLL_SHIFT, sbuf, rbuf, count, dt, TC_OP_BOR, 0, opts, &x, xr);
}

int tc_shift(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
             int q, const struct tc_coll_opts *opts)
{
	return tc__shift(proc, sbuf, rbuf, count, dt, q, opts, NULL);
}

int tc_ishift(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count, enum tc_dtype dt,
              int q, const struct tc_coll_opts *opts, tc_request *req)
{
	const struct tc__xreq xr = {req, 0, NULL};
	return tc__shift(proc, sbuf, rbuf, count, dt, q, opts, &xr);
}

int tc_shift_init(struct tc_proc *proc, const void *sbuf, void *rbuf, size_t count,
                  enum tc_dtype dt, int q, const struct tc_coll_opts *opts, tc_request *req)
{
	const struct tc__xreq xr = {req, 1, NULL};
	return tc__shift(proc, sbuf, rbuf, count, dt, q, opts, &xr);
}

/*
 * The multicast's member set, checked here and agreed by every rank before
 * any data moves: each rank reduces its (root, set) to a 64-bit hash (a
 * rank whose own list is bad contributes a value no good list gives) and an
 * allreduce of (h, ~h) under band tells every rank whether all hashes were
 * equal (band(h) == ~band(~h) exactly then).  The hash covers the count,
 * datatype and algorithm name too ("auto" for none).  A failed agreement writes
 * nothing; a bad list (or another argument error of one rank: NULL buffer,
 * datatype, size) fails on its rank with its own code, elsewhere with
 * TC_EMISMATCH.
 *
 * tc__mcast_input() makes this rank's part: the canonical set (*canon,
 * freed by the caller, and *n), the hash *h (0 when bad) and, returned, the
 * rank's own argument error or TC_OK.
 */
static int tc__mcast_input(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                           const int *members, int nmembers, const struct tc_coll_opts *opts,
                           int **canon_out, int *n_out, uint64_t *h_out)
{
	const int p = proc->team->p;
	int *canon = NULL, n = 0;
	int bad = nmembers < 0 || nmembers > p ? TC_EINVAL : TC_OK;
	if (!bad && nmembers > 0) {
		canon = malloc((size_t)nmembers * sizeof *canon);
		if (!canon)
			bad = TC_ENOMEM; /* still agreed: nobody waits for this rank */
	}
	if (!bad && (root < 0 || root >= p))
		bad = TC_EROOT;
	if (!bad)
		bad = tc__members_canon(p, root, members, nmembers, canon, &n);
	/* The arguments that tc__coll_x() would refuse on this rank alone are
	 * refused here, agreed: the others must not wait for it. */
	const size_t es = tc_dtype_size(dt);
	const int me = proc->rank;
	if (!bad && !es)
		bad = TC_EINVAL;
	if (!bad && count > TC_MAX_MESSAGE / es)
		bad = TC_EOVERFLOW;
	if (!bad && count && !buf && (me == root || tc__in_set(me, canon, n)))
		bad = TC_ENULLBUF;
	if (!bad && buf == (void *)TC_IN_PLACE)
		bad = TC_EINVAL;
	if (!bad && opts && opts->packets < 0)
		bad = TC_EINVAL;
	uint64_t h = tc__fnv(TC__FNV_BASIS, (uint64_t)(uint32_t)root);
	for (int i = 0; i < n; i++)
		h = tc__fnv(h, (uint64_t)canon[i]);
	h = tc__fnv(h, (uint64_t)n);
	/* And the rest of the call, so that ranks outside the set, which may
	 * move no data, take part in the mismatch detection too. */
	h = tc__fnv(h, (uint64_t)count);
	h = tc__fnv(h, (uint64_t)dt);
	for (const char *s = opts && opts->alg ? opts->alg : "auto"; *s; s++)
		h = tc__fnv(h, (uint64_t)(unsigned char)*s);
	if (bad)
		h = 0; /* and ~h is 0 too below: no agreement with any good list */
	*canon_out = canon;
	*n_out = bad ? 0 : n;
	*h_out = h;
	return bad;
}

int tc_multicast(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                 const int *members, int nmembers, const struct tc_coll_opts *opts)
{
	if (!proc)
		return TC_EINVAL;
	int *canon, n;
	uint64_t h;
	int bad = tc__mcast_input(proc, buf, count, dt, root, members, nmembers, opts, &canon, &n, &h);
	uint64_t v[2] = {h, bad ? 0 : ~h};
	const struct tc_coll_opts ao = {0};
	int err = tc_allreduce(proc, TC_IN_PLACE, v, 2, TC_UINT64, TC_OP_BAND, &ao);
	if (!err && bad)
		err = bad;
	else if (!err && (v[0] != h || v[1] != ~h))
		err = TC_EMISMATCH;
	if (!err) {
		const struct tc__coll_extra x = {.members = canon, .nmembers = n};
		err = tc__coll_x(proc, TC_COLL_MULTICAST, NULL, buf, count, dt, TC_OP_BOR, root,
		                 opts, &x, NULL);
	}
	free(canon);
	return err;
}

/*
 * The multicast as a request: two phases one after the other, each an
 * operation of its own made at the call (lib/sched/nbc.h), the agreement's
 * allreduce of (h, ~h) and then the data's multicast.  A persistent one
 * agrees once, at its first start (a failed agreement is retried and fails
 * again at each start), and then runs only the data's plan.  A rank whose
 * own arguments are bad takes part in the agreement and its wait returns
 * their error.
 */
struct tc__mop {
	struct tc__creq x;
	struct tc__creq *agree, *data; /* data NULL when bad */
	uint64_t h, v[2];
	int bad;
	bool agreed, in_data;
};

static void tc__mop_release(struct tc__creq *x)
{
	struct tc__mop *o = (struct tc__mop *)x;
	if (o->agree)
		o->agree->release(o->agree);
	if (o->data)
		o->data->release(o->data);
	free(o);
}

/* x runs phase ph (prepared for this start). */
static int tc__mop_phase(struct tc__mop *o, struct tc__creq *ph)
{
	int err = ph->prepare(ph);
	if (err)
		return err;
	o->x.s = ph->s;
	o->x.pl = ph->pl;
	o->x.io = ph->io;
	o->in_data = ph == o->data;
	return TC_OK;
}

static int tc__mop_prepare(struct tc__creq *x)
{
	struct tc__mop *o = (struct tc__mop *)x;
	if (o->agreed)
		return tc__mop_phase(o, o->data);
	o->v[0] = o->h;
	o->v[1] = o->bad ? 0 : ~o->h;
	return tc__mop_phase(o, o->agree);
}

static int tc__mop_then(struct tc_proc *proc, struct tc__creq *x)
{
	struct tc__mop *o = (struct tc__mop *)x;
	(void)proc;
	if (o->in_data)
		return TC_OK; /* the data moved: done */
	if (o->bad)
		return o->bad;
	if (o->v[0] != o->h || o->v[1] != ~o->h) {
		tc__set_detail("multicast: the ranks' roots, member sets, counts, datatypes or "
		               "algorithms differ");
		return TC_EMISMATCH;
	}
	o->agreed = true;
	int err = tc__mop_phase(o, o->data);
	return err ? err : 1;
}

static int tc__multicast_req(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt,
                             int root, const int *members, int nmembers,
                             const struct tc_coll_opts *opts, tc_request *req, int persistent)
{
	if (!proc || !req)
		return TC_EINVAL;
	/* not started until it is: a wait on it says TC_EINVAL */
	memset(tc__req(req), 0, sizeof(struct tc__req));
	const size_t head = (sizeof(struct tc__mop) + 63) / 64 * 64;
	struct tc__mop *o = calloc(1, head + tc__run_size());
	if (!o)
		return TC_ENOMEM;
	o->x.persistent = persistent;
	o->x.prepare = tc__mop_prepare;
	o->x.then = tc__mop_then;
	o->x.release = tc__mop_release;
	o->x.run = (struct tc__run *)(void *)((char *)o + head);
	int *canon, n;
	o->bad = tc__mcast_input(proc, buf, count, dt, root, members, nmembers, opts, &canon, &n, &o->h);
	const struct tc_coll_opts ao = {0};
	const struct tc__coll_extra none = {0};
	struct tc__xreq xr = {req, persistent, &o->agree};
	int err = tc__coll_x(proc, TC_COLL_ALLREDUCE, TC_IN_PLACE, o->v, 2, TC_UINT64, TC_OP_BAND,
	                     0, &ao, &none, &xr);
	if (!err && !o->bad) {
		/* The data's plan, made now: a failure here is this rank's
		 * argument error, reported after the agreement as the blocking
		 * call does. */
		const struct tc__coll_extra x = {.members = canon, .nmembers = n};
		xr.built = &o->data;
		o->bad = tc__coll_x(proc, TC_COLL_MULTICAST, NULL, buf, count, dt, TC_OP_BOR, root,
		                    opts, &x, &xr);
		if (o->bad)
			o->h = 0;
	}
	free(canon);
	memset(tc__req(req), 0, sizeof(struct tc__req));
	if (err) {
		tc__mop_release(&o->x);
		return err;
	}
	return tc__creq_launch(proc, &o->x, req, persistent);
}

int tc_imulticast(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                  const int *members, int nmembers, const struct tc_coll_opts *opts, tc_request *req)
{
	return tc__multicast_req(proc, buf, count, dt, root, members, nmembers, opts, req, 0);
}

int tc_multicast_init(struct tc_proc *proc, void *buf, size_t count, enum tc_dtype dt, int root,
                      const int *members, int nmembers, const struct tc_coll_opts *opts, tc_request *req)
{
	return tc__multicast_req(proc, buf, count, dt, root, members, nmembers, opts, req, 1);
}
