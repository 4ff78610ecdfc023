/* SPDX-License-Identifier: MIT */
/*
 * lib/coll/coll.c - the collective entry points: argument checks, the
 * per-rank plan from the cache (cache.c, which selects through select.c,
 * which generates through registry.c), the call's buffers, and the call
 * into the executor, blocking or as a request.  Every collective call takes
 * the path of tc__coll_x(), the shift's and the multicast's too (their own
 * entry points: shift/shift.c, multicast/multicast.c).
 *
 * Cache: each rank keeps its own last TC__CACHE schedules (no sharing, no
 * locks); a hit costs a few comparisons.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/error_detail.h"
#include "coll/cache.h"
#include "coll/coll_internal.h"
#include "coll/gen.h"
#include "coll/machine.h"
#include "coll/shm.h"
#include "core/internal.h"
#include "sched/exec.h"
#include "sched/nbc.h"
#include "p2p/p2p.h"
#include "p2p/request.h"

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
	/* Run natively (x.native): the machine's own algorithm's call, the
	 * team's flags and the request's state (lib/coll/shm_step.c). */
	struct tc__shm_call shm_call;
	const struct tc__shm *shm;
	struct tc__shm_req *nat;
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
	free(o->nat);
	free(o);
}

static int tc__cop_begin(struct tc_proc *proc, struct tc__creq *x)
{
	struct tc__cop *o = (struct tc__cop *)x;
	return tc__shm_req_begin(o->nat, proc, o->shm, &o->shm_call, &o->x.io);
}

static int tc__cop_step(struct tc_proc *proc, struct tc__creq *x, bool spin)
{
	(void)proc;
	return tc__shm_req_step(((struct tc__cop *)x)->nat, spin);
}

static int tc__cop_run(struct tc_proc *proc, struct tc__creq *x)
{
	struct tc__cop *o = (struct tc__cop *)x;
	return tc__shm_run(proc, o->shm, &o->shm_call, &o->x.io);
}

static const struct tc__creq_native tc__cop_native = {.begin = tc__cop_begin,
                                                      .step = tc__cop_step,
                                                      .run = tc__cop_run};

/* The call as a request: started (nonblocking), bound inactive
 * (persistent), or, xr NULL, a blocking call queued behind the started
 * ones and waited for.  shm: e's algorithm would run natively as a
 * blocking call; as a request it does where tc__shm_steppable() says. */
static int tc__cop_new(struct tc_proc *proc, struct tc__centry *e, const struct tc__call *c,
                       const struct tc__combine_ctx *cc, const struct tc__exec_io *io,
                       const struct tc__xreq *xr, bool shm)
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
	if (shm && xr && !xr->built) {
		o->shm_call = tc__shm_call_of(e);
		if (tc__shm_steppable(&o->shm_call, proc->team->p)) {
			o->nat = tc__shm_req_new();
			if (!o->nat) {
				tc__cop_release(&o->x);
				return TC_ENOMEM;
			}
			o->shm = tc__coll_shm(proc);
			o->x.native = &tc__cop_native;
		}
	}
	if (xr && xr->built) {
		*xr->built = &o->x;
		return TC_OK;
	}
	if (!xr)
		return tc__creq_run(proc, &o->x);
	return tc__creq_launch(proc, &o->x, xr->req, xr->persistent);
}

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

/*
 * Every collective's entry: the arguments checked from the collective's
 * shape (collectives.def), the schedule from the cache, the buffers set up,
 * the plan run.  sbuf and rbuf as the public calls take them (bcast: rbuf is
 * the buffer; barrier: neither).
 */
int tc__coll_x(struct tc_proc *proc, enum tc_coll coll, const void *sbuf, void *rbuf, size_t count,
               enum tc_dtype dt, enum tc_op op, int root, const struct tc_coll_opts *opts,
               const struct tc__coll_extra *x, const struct tc__xreq *xr)
{
	if (xr && !xr->req)
		return TC_EINVAL;
	/* A request still active stays as it is (its queue holds it); the
	 * layers that build their request from this call's check theirs. */
	if (xr && !xr->built && proc && tc__req_busy(proc, xr->req))
		return tc__req_busy_error(xr->persistent ? "tc_" : "tc_i", tc__colls[coll].name,
		                          xr->persistent ? "_init" : "");
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
		if (bytes && sends && (!in_place || scatter_ip) && !sbuf)
			return TC_ENULLBUF; /* scatter's root in place reads every block from sbuf */
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
	/* The machine's own algorithms run natively as blocking calls, the
	 * calls queued before one finished first, and as requests where one
	 * round of flags completes them (tc__shm_steppable()); other
	 * requests of theirs run their schedule over the channels.  The rule
	 * depends on the call alone, so every rank of it takes the same
	 * path. */
	const bool shm = (e->alg->flags & TC__ALG_SHM) && !team->emulate && !team->engine_run;
	if (!xr && shm && tc__creq_pending(proc) && (err = tc__creq_drain(proc)))
		return err;
	if (xr)
		io.sig ^= TC__SIG_REQUEST; /* a request form never matches a blocking call */
	if (xr || tc__creq_pending(proc))
		return tc__cop_new(proc, e, &c, &cc, &io, xr, shm);
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
	tc__clear_detail(); /* a public call's start (the internal ones take tc__coll_x) */
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
	if (!out)
		return;
	out->algorithm = proc->last_alg;
	out->rounds = proc->last_rounds;
	out->modelled_ps = proc->last_modelled;
}
