/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_core.c - the rank's entry point, MPI_Init/Finalize,
 * communicators, timers and the --report counters (errors and error
 * handlers: shim_error.c).
 *
 * Every variable here is per rank: each rank runs its own copy of the
 * program and of this layer (shim.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

struct tcmpi_launch *tcmpi__self;
int tcmpi__initialized, tcmpi__finalized, tcmpi__live;
static jmp_buf end_jmp;
static int end_status;

/* MPI_COMM_WORLD (1) and MPI_COMM_SELF (2), then the communicators made
 * by the program, each allocated on its own (comm_new), in a table that
 * doubles as it fills. */
static struct tcmpi__comm world_comm = {.used = 1, .errh = MPI_ERRORS_ARE_FATAL, .name = "MPI_COMM_WORLD"};
static struct tcmpi__comm self_comm = {.used = 1,
                                       .self = 1,
                                       .errh = MPI_ERRORS_ARE_FATAL,
                                       .name = "MPI_COMM_SELF",
                                       .size = 1};
static struct tcmpi__comm *first_commv[64] = {[1] = &world_comm, [2] = &self_comm};
struct tcmpi__comm **tcmpi__commv = first_commv;
int tcmpi__ncomms = 64;

extern int main(int argc, char **argv);

/* Exported: tcmpirun calls it once per rank (launch.h). */
__attribute__((visibility("default"))) int tcmpi_rank_main(struct tcmpi_launch *l);
int tcmpi_rank_main(struct tcmpi_launch *l)
{
	if (!l || l->abi != TCMPI_LAUNCH_ABI)
		return 127;
	tcmpi__self = l;
	world_comm.proc = l->proc;
	world_comm.size = tc_size(l->proc);
	world_comm.rank = tc_rank(l->proc);
	if (setjmp(end_jmp) == 0)
		end_status = main(l->argc, l->argv);
	l->finalized = tcmpi__finalized;
	return end_status;
}

_Noreturn void tcmpi__end_rank(int status, int abort_team)
{
	if (abort_team && tcmpi__self) {
		int expect = 0;
		if (atomic_compare_exchange_strong(&tcmpi__self->shared->aborted, &expect, 1))
			atomic_store(&tcmpi__self->shared->abort_code, status);
		tc_team_abort(tcmpi__self->shared->team);
	}
	end_status = status;
	longjmp(end_jmp, 1);
}

void *tcmpi__alloc(size_t n)
{
	return malloc(n ? n : 1);
}

double tcmpi__now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void tcmpi__count(enum tcmpi_coll c, double t0_ns, double model_ns)
{
	struct tcmpi_stats *s = tcmpi__self ? tcmpi__self->stats : NULL;
	if (!s)
		return;
	s->calls[c]++;
	s->wall_ns[c] += tcmpi__now_ns() - t0_ns;
	s->model_ns[c] += model_ns;
}

/* ---------------------------------------------------------------------
 * Start and end.
 */
int MPI_Init(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!tcmpi__self) {
		fprintf(stderr, "tcmpi: MPI_Init: this program was built with tcmpicc; "
		                "run it with tcmpirun -np P PROGRAM\n");
		exit(1);
	}
	if (tcmpi__initialized)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_OTHER, __func__, "called twice");
	tcmpi__dtype_setup();
	tcmpi__initialized = 1;
	tcmpi__live = 1;
	return MPI_SUCCESS;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = MPI_Init(argc, argv);
	/* Each rank is one thread or fibre running its own copy of the program;
	 * more threads of one rank calling MPI are not supported. */
	if (rc == MPI_SUCCESS && provided)
		*provided = required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED;
	return rc;
}

int MPI_Finalize(void)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	/* First MPI_COMM_SELF's attributes are deleted, the last set first, as
	 * MPI says (libraries hang their clean-up there); a callback's
	 * failure is reported and returned after the rest of the call. */
	const int arc = tcmpi__attrs_delete(MPI_COMM_SELF, __func__);
	/* MPI_Finalize is collective: no rank leaves while another still
	 * needs it. */
	rc = tc_barrier(tcmpi__self->proc, NULL);
	tcmpi__orphans_end();
	for (int i = 0; i < tcmpi__ncomms; i++)
		if (tcmpi__commv[i] && tcmpi__commv[i]->used)
			tcmpi__selfq_free(tcmpi__commv[i]);
	tcmpi__groups_end();
	tcmpi__finalized = 1;
	tcmpi__live = 0;
	return rc ? tcmpi__tc_error(MPI_COMM_WORLD, rc, __func__) : arc;
}

int MPI_Initialized(int *flag)
{
	if (!flag)
		return MPI_ERR_ARG;
	*flag = tcmpi__initialized;
	return MPI_SUCCESS;
}

int MPI_Finalized(int *flag)
{
	if (!flag)
		return MPI_ERR_ARG;
	*flag = tcmpi__finalized;
	return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
	(void)comm;
	int rank = tcmpi__self ? tc_rank(tcmpi__self->proc) : -1;
	fprintf(stderr, "tcmpi: rank %d called MPI_Abort(%d)\n", rank, errorcode);
	tcmpi__end_rank(errorcode ? errorcode : 1, 1);
}

int MPI_Query_thread(int *provided)
{
	if (!provided)
		return MPI_ERR_ARG;
	*provided = MPI_THREAD_SERIALIZED;
	return MPI_SUCCESS;
}

int MPI_Is_thread_main(int *flag)
{
	if (!flag)
		return MPI_ERR_ARG;
	*flag = 1;
	return MPI_SUCCESS;
}

double MPI_Wtime(void)
{
	double origin = tcmpi__self ? tcmpi__self->shared->wtime_origin : 0.0;
	return tcmpi__now_ns() * 1e-9 - origin;
}

int TCMPI_Compute_ns(double ns)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!(ns >= 0 && ns <= 1e15)) /* negative, NaN, infinite or too long */
		return tcmpi__error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__,
		                    "%g ns: the time charged must be in 0 .. 1e15 ns", ns);
	rc = tc_clock_advance(tcmpi__self->proc, ns);
	return rc ? tcmpi__tc_error(MPI_COMM_WORLD, rc, __func__) : MPI_SUCCESS;
}

double TCMPI_Clock_ns(void)
{
	return tcmpi__self ? (double)tc_clock(tcmpi__self->proc) / TC_PS_PER_NS : 0.0;
}

double MPI_Wtick(void)
{
	struct timespec ts;
	clock_getres(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int MPI_Get_processor_name(char *name, int *resultlen)
{
	if (!name || !resultlen)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL argument");
	char host[MPI_MAX_PROCESSOR_NAME - 16];
	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "localhost");
	host[sizeof host - 1] = '\0';
	int rank = tcmpi__self ? tc_rank(tcmpi__self->proc) : 0;
	*resultlen = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s:rank%d", host, rank);
	return MPI_SUCCESS;
}

int MPI_Get_version(int *version, int *subversion)
{
	if (!version || !subversion)
		return MPI_ERR_ARG;
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}

int MPI_Get_library_version(char *version, int *resultlen)
{
	if (!version || !resultlen)
		return MPI_ERR_ARG;
	*resultlen = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
	                      "topocoll %s MPI layer (tcmpi): a subset of MPI %d.%d",
	                      TC_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
	return MPI_SUCCESS;
}

/* ---------------------------------------------------------------------
 * Communicators: MPI_COMM_WORLD (the team), MPI_COMM_SELF, and the
 * sub-teams made from them (duplicates, splits; Cartesian ones in
 * shim_cart.c).
 */
#define COMM_OR_FAIL(c, comm)                                                                 \
	int rc_ = tcmpi__check_init(__func__);                                                \
	if (rc_)                                                                              \
		return rc_;                                                                   \
	struct tcmpi__comm *c = tcmpi__comm(comm);                                            \
	if (!c)                                                                               \
	return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, __func__, "invalid communicator %d", \
	                    (int)(comm))

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
	COMM_OR_FAIL(c, comm);
	if (!rank)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL rank");
	*rank = tcmpi__comm_rank(c);
	return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int *size)
{
	COMM_OR_FAIL(c, comm);
	if (!size)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL size");
	*size = tcmpi__comm_size(c);
	return MPI_SUCCESS;
}

int tcmpi__world_rank(const struct tcmpi__comm *c, int r)
{
	if (c->self)
		return tc_rank(tcmpi__self->proc);
	for (const struct tc_team *t = tc_proc_team(c->proc); t && tc_team_parent(t);
	     t = tc_team_parent(t))
		r = tc_team_parent_rank(t, r);
	return r;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
	COMM_OR_FAIL(a, comm1);
	struct tcmpi__comm *b = tcmpi__comm(comm2);
	if (!b || !result)
		return tcmpi__error(comm1, MPI_ERR_COMM, __func__,
		                    "invalid communicator %d or NULL", comm2);
	int p = tcmpi__comm_size(a);
	if (comm1 == comm2) {
		*result = MPI_IDENT;
		return MPI_SUCCESS;
	}
	if (p != tcmpi__comm_size(b)) {
		*result = MPI_UNEQUAL;
		return MPI_SUCCESS;
	}
	/* Same ranks in the same order: congruent; the same set: similar. */
	int congruent = 1, similar = 1;
	for (int i = 0; i < p; i++) {
		int w = tcmpi__world_rank(a, i), found = 0;
		congruent &= w == tcmpi__world_rank(b, i);
		for (int j = 0; j < p && !found; j++)
			found = w == tcmpi__world_rank(b, j);
		similar &= found;
	}
	*result = congruent ? MPI_CONGRUENT : similar ? MPI_SIMILAR : MPI_UNEQUAL;
	return MPI_SUCCESS;
}

static int comm_new(const struct tcmpi__comm *from, MPI_Comm *out, const char *fn)
{
	int i = 3;
	while (i < tcmpi__ncomms && tcmpi__commv[i])
		i++;
	if (i == tcmpi__ncomms) {
		struct tcmpi__comm **v = calloc((size_t)tcmpi__ncomms * 2, sizeof *v);
		if (!v)
			return tcmpi__error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn,
			                    "no memory for more than %d communicators", i);
		memcpy(v, tcmpi__commv, (size_t)tcmpi__ncomms * sizeof *v);
		if (tcmpi__commv != first_commv)
			free(tcmpi__commv);
		tcmpi__commv = v;
		tcmpi__ncomms *= 2;
	}
	struct tcmpi__comm *c = malloc(sizeof *c);
	if (!c)
		return tcmpi__error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
	*c = *from;
	c->sub = 0;
	c->selfq = NULL;
	c->cart.on = 0;
	c->nbr = NULL;
	c->graph = NULL;
	c->name[0] = 0;
	c->attrs = NULL;
	c->hints = MPI_INFO_NULL;
	tcmpi__errh_hold(c->errh);
	tcmpi__commv[i] = c;
	*out = i;
	return MPI_SUCCESS;
}

/* A communicator of a new sub-team (proc, NULL: none), with c's error
 * handler. */
static int comm_sub(const struct tcmpi__comm *c, struct tc_proc *proc, MPI_Comm *out, const char *fn)
{
	*out = MPI_COMM_NULL;
	if (!proc)
		return MPI_SUCCESS;
	int rc = comm_new(c, out, fn);
	if (rc) {
		(void)tc_team_free(proc);
		return rc;
	}
	struct tcmpi__comm *n = tcmpi__commv[*out];
	n->self = 0;
	n->proc = proc;
	n->size = tc_size(proc);
	n->rank = tc_rank(proc);
	/* Every rank has its new team in hand before any starts a call on it:
	 * without this barrier, a first collective on a new sub-team on
	 * fibres was seen to fail as a mismatch in the machine's own barrier
	 * (p = 2, mpi_coll's duplicate). */
	int rc2 = tc_barrier(proc, NULL);
	if (rc2)
		return tcmpi__tc_error(MPI_COMM_WORLD, rc2, fn);
	n->sub = 1;
	return MPI_SUCCESS;
}

/* Drops a communicator made by a call that then failed, on this rank
 * alone: its sub-team, which the other ranks may hold, is left to the
 * world's end. */
static void comm_discard(MPI_Comm *comm)
{
	struct tcmpi__comm *c = tcmpi__commv[*comm];
	tcmpi__graph_free(c->graph);
	tcmpi__info_drop(&c->hints);
	tcmpi__errh_drop(c->errh);
	free(c);
	tcmpi__commv[*comm] = NULL;
	*comm = MPI_COMM_NULL;
}

/* A duplicate is a sub-team of the same ranks and topology with a context
 * of its own: its messages and collectives never match its parent's.  It
 * keeps the topology, gets the attributes by their copy callbacks and the
 * hints: comm's, or info's alone when with_info (MPI_Comm_dup_with_info). */
static int comm_dup(MPI_Comm comm, int with_info, MPI_Info info, MPI_Comm *newcomm, const char *fn)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, fn, &c);
	if (rc)
		return rc;
	if (!newcomm)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL newcomm");
	if (with_info && (rc = tcmpi__info_arg(comm, info, fn)))
		return rc;
	struct tc_proc *np = NULL;
	rc = c->self ? MPI_SUCCESS : tc_team_dup(c->proc, &np);
	if (rc)
		return tcmpi__tc_error(comm, rc, fn);
	rc = c->self ? comm_new(c, newcomm, fn) : comm_sub(c, np, newcomm, fn);
	if (rc)
		return rc;
	struct tcmpi__comm *n = tcmpi__commv[*newcomm];
	n->cart = c->cart;
	if (c->graph && !(n->graph = tcmpi__graph_copy(c->graph))) {
		rc = tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
		goto fail;
	}
	if ((rc = tcmpi__info_merge(comm, MPI_INFO_NULL, with_info ? info : c->hints, &n->hints, fn)))
		goto fail;
	if ((rc = tcmpi__attrs_copy(comm, *newcomm, fn)))
		goto fail;
	return MPI_SUCCESS;
fail:
	comm_discard(newcomm);
	return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	return comm_dup(comm, 0, MPI_INFO_NULL, newcomm, __func__);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	return comm_dup(comm, 1, info, newcomm, __func__);
}

/* The nonblocking forms duplicate at once: the request is complete when
 * they return, which MPI allows (the program's wait or test completes
 * it). */
static int comm_idup(MPI_Comm comm, int with_info, MPI_Info info, MPI_Comm *newcomm,
                     MPI_Request *request, const char *fn)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, fn, &c);
	if (rc)
		return rc;
	if (!request)
		return tcmpi__error(comm, MPI_ERR_REQUEST, fn, "NULL request");
	struct tcmpi__req *q = tcmpi__req_new(comm, TCMPI_REQ_COLL, request, fn);
	if (!q)
		return MPI_ERR_NO_MEM;
	if ((rc = comm_dup(comm, with_info, info, newcomm, fn))) {
		tcmpi__req_drop(request);
		return rc;
	}
	q->done = 1;
	return MPI_SUCCESS;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	return comm_idup(comm, 0, MPI_INFO_NULL, newcomm, request, __func__);
}

int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
	return comm_idup(comm, 1, info, newcomm, request, __func__);
}

/* Whether a live communicator other than c has a team made from c's. */
static int team_has_descendant(const struct tcmpi__comm *c)
{
	const struct tc_team *t = tc_proc_team(c->proc);
	for (int i = 3; i < tcmpi__ncomms; i++) {
		const struct tcmpi__comm *d = tcmpi__commv[i];
		if (!d || d == c || !d->used || d->self)
			continue;
		for (const struct tc_team *u = tc_team_parent(tc_proc_team(d->proc)); u;
		     u = tc_team_parent(u))
			if (u == t)
				return 1;
	}
	return 0;
}

/* The attributes' delete callbacks run first: when one fails, its error is
 * returned and the communicator stays (with the attributes not yet
 * deleted). */
int MPI_Comm_free(MPI_Comm *comm)
{
	if (!comm)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_ARG, __func__, "NULL comm");
	COMM_OR_FAIL(c, *comm);
	if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
		return tcmpi__error(*comm, MPI_ERR_COMM, __func__,
		                    "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed");
	int rc = tcmpi__attrs_delete(*comm, __func__);
	if (rc)
		return rc;
	/* Its pending operations complete first, as MPI says they do. */
	tcmpi__comm_settle(*comm);
	if (c->nbr) {
		rc = tc_team_free(c->nbr);
		if (rc)
			return tcmpi__tc_error(*comm, rc, __func__);
		c->nbr = NULL;
	}
	if (c->sub) {
		/* tc_team_free frees the sub-teams made from the team too, so
		 * the team of a communicator with live descendants (a duplicate
		 * or split of it not yet freed) stays until the world's end.
		 * The ranks decide together, as the free is collective and
		 * only some of them may hold a descendant. */
		int32_t mine = team_has_descendant(c), any = 0;
		rc = tc_allreduce(c->proc, &mine, &any, 1, TC_INT32, TC_OP_MAX, NULL);
		if (!rc && !any)
			rc = tc_team_free(c->proc);
		if (rc)
			return tcmpi__tc_error(*comm, rc, __func__);
	}
	tcmpi__selfq_free(c);
	tcmpi__graph_free(c->graph);
	tcmpi__info_drop(&c->hints);
	tcmpi__errh_drop(c->errh);
	free(c);
	tcmpi__commv[*comm] = NULL;
	*comm = MPI_COMM_NULL;
	return MPI_SUCCESS;
}

/* The ranks of one colour form a sub-team of the communicator's team,
 * ordered by key, ties by rank, over the topology that team induces. */
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	COMM_OR_FAIL(c, comm);
	if (!newcomm)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL newcomm");
	if (color < 0 && color != MPI_UNDEFINED)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "negative colour %d", color);
	if (c->self) {
		*newcomm = MPI_COMM_NULL;
		return color == MPI_UNDEFINED ? MPI_SUCCESS : comm_new(c, newcomm, __func__);
	}
	struct tc_proc *np = NULL;
	int rc = tc_team_split(c->proc, color == MPI_UNDEFINED ? TC_UNDEFINED : color, key, NULL, &np);
	if (rc)
		return tcmpi__tc_error(comm, rc, __func__);
	return comm_sub(c, np, newcomm, __func__);
}

int MPI_Comm_set_name(MPI_Comm comm, const char *name)
{
	COMM_OR_FAIL(c, comm);
	if (!name)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL name");
	snprintf(c->name, sizeof c->name, "%s", name);
	return MPI_SUCCESS;
}

int MPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
	COMM_OR_FAIL(c, comm);
	if (!name || !resultlen)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL argument");
	*resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c->name);
	return MPI_SUCCESS;
}

int MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	COMM_OR_FAIL(c, comm);
	(void)c;
	if (!flag)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL flag");
	*flag = 0;
	return MPI_SUCCESS;
}

int tcmpi__comm_arg(MPI_Comm comm, const char *fn, struct tcmpi__comm **c)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	*c = tcmpi__comm(comm);
	if (!*c)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator %d",
		                    (int)comm);
	return MPI_SUCCESS;
}

int tcmpi__comm_new(const struct tcmpi__comm *c, MPI_Comm *out, const char *fn)
{
	return comm_new(c, out, fn);
}

int tcmpi__comm_sub(const struct tcmpi__comm *c, struct tc_proc *proc, MPI_Comm *out, const char *fn)
{
	return comm_sub(c, proc, out, fn);
}

/* ---------------------------------------------------------------------
 * Memory, profiling control and Fortran handles.
 */
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if ((rc = tcmpi__info_arg(MPI_COMM_WORLD, info, __func__)))
		return rc;
	if (size < 0 || !baseptr)
		return tcmpi__error(MPI_COMM_WORLD, MPI_ERR_ARG, __func__,
		                    baseptr ? "negative size %lld" : "NULL baseptr", (long long)size);
	void *p = malloc(size ? (size_t)size : 1);
	if (!p)
		return tcmpi__error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, __func__,
		                    "no memory for %lld bytes", (long long)size);
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	free(base);
	return MPI_SUCCESS;
}

/* No profiling library is attached: every level is accepted and nothing
 * changes, as MPI allows. */
int MPI_Pcontrol(const int level, ...)
{
	(void)level;
	return MPI_SUCCESS;
}

/* Handles are ints in C as in Fortran, so a handle converts to itself; a
 * Fortran handle that names no object converts to the null handle. */
MPI_Fint MPI_Comm_c2f(MPI_Comm comm)
{
	return (MPI_Fint)comm;
}

MPI_Comm MPI_Comm_f2c(MPI_Fint comm)
{
	return tcmpi__comm((MPI_Comm)comm) ? (MPI_Comm)comm : MPI_COMM_NULL;
}

MPI_Fint MPI_Type_c2f(MPI_Datatype datatype)
{
	return (MPI_Fint)datatype;
}

/* A datatype not yet committed is a datatype too. */
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype)
{
	return datatype > 0 && datatype < tcmpi__ndts && tcmpi__dts[datatype].used
	               ? (MPI_Datatype)datatype
	               : MPI_DATATYPE_NULL;
}

MPI_Fint MPI_Op_c2f(MPI_Op op)
{
	return (MPI_Fint)op;
}

/* MPI_REPLACE and MPI_NO_OP, which no reduction takes, are operators. */
MPI_Op MPI_Op_f2c(MPI_Fint op)
{
	return (op > 0 && op < TCMPI_OP_PREDEFINED) || tcmpi__op_valid((MPI_Op)op) ? (MPI_Op)op
	                                                                           : MPI_OP_NULL;
}
