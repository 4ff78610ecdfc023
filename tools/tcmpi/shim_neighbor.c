/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_neighbor.c - neighbourhood collectives on Cartesian and
 * graph communicators: MPI_Neighbor_allgather, MPI_Neighbor_allgatherv,
 * MPI_Neighbor_alltoall, MPI_Neighbor_alltoallv and MPI_Neighbor_alltoallw
 * (blocking), and the exchange the nonblocking and persistent forms share
 * with them (shim_ineighbor.c).
 *
 * A grid's rank has 2 ndims neighbours, in MPI's order: for each
 * dimension d, the rank at -1 along d (MPI_Cart_shift's source) and then
 * the one at +1 (its destination); MPI_PROC_NULL off a non-periodic edge,
 * whose blocks are neither sent nor received.  Block k goes to neighbour k
 * and block k of the receive buffer comes from neighbour k, as that rank
 * sent it to its neighbour k ^ 1 (the same edge seen from the other end):
 * so along a periodic side of 2 ranks, where both neighbours are one rank,
 * the block sent towards -1 arrives as the one from +1, and a rank alone
 * on a periodic side is both its own neighbours.  A graph's rank sends
 * block j to its j-th destination and receives block i from its i-th
 * source (shim_graph.c): MPI_Graph_create's neighbours both ways, a
 * distributed graph's as given; an edge given twice between two ranks
 * pairs with the other end's in order.
 *
 * Each block is one message, tagged to meet its receive, on a duplicate of
 * the communicator's team made by its first neighbourhood collective: no
 * message of the program (a point-to-point one of any tag on the
 * communicator) can match them.  A grid's messages cross one link of its
 * mesh or torus (shim_cart.c), so the emulation and the logical clock
 * charge a halo exchange's blocks one link each; a graph's travel over the
 * old communicator's topology, as any message between those ranks does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define nbr_side tcmpi__nbr_side

static size_t side_count(const struct nbr_side *s, int k)
{
	return (size_t)(s->counts ? s->counts[k] : s->count);
}

static const struct tcmpi__dtype *side_type(const struct nbr_side *s, int k)
{
	return s->ts ? s->ts[k] : s->t;
}

static const char *side_at(const struct nbr_side *s, int k)
{
	if (s->bdispls)
		return s->buf + s->bdispls[k];
	const MPI_Aint at = s->displs ? (MPI_Aint)s->displs[k] : (MPI_Aint)k * s->stride;
	return s->buf + at * s->t->extent;
}

/* The calling rank's neighbourhood: nin sources and nout destinations,
 * each message tagged so that it meets its receive (malloc'ed arrays). */
struct nbrs {
	int nin, nout;
	int *in, *out;       /* ranks, MPI_PROC_NULL for none */
	int *intag, *outtag; /* a receive from in[i] takes tag intag[i] */
};

static void nbrs_free(struct nbrs *l)
{
	free(l->in);
	free(l->out);
	free(l->intag);
	free(l->outtag);
}

/* The neighbours of a grid (2 ndims, in and out alike; block k meets the
 * neighbour's block k ^ 1, by its tag) or of a graph (one tag: the k-th
 * edge from r to q in r's list meets the k-th edge from r in q's, as
 * messages between two ranks match in order, so edges given twice pair
 * in order). */
static int nbrs_of(MPI_Comm comm, const struct tcmpi__comm *c, struct nbrs *l, const char *fn)
{
	const struct tcmpi__graph *g = c->graph;
	l->nin = g ? g->nin : 2 * c->cart.ndims;
	l->nout = g ? g->nout : 2 * c->cart.ndims;
	const size_t ni = (size_t)(l->nin > 0 ? l->nin : 1), no = (size_t)(l->nout > 0 ? l->nout : 1);
	l->in = malloc(ni * sizeof(int));
	l->intag = malloc(ni * sizeof(int));
	l->out = malloc(no * sizeof(int));
	l->outtag = malloc(no * sizeof(int));
	if (!l->in || !l->intag || !l->out || !l->outtag) {
		nbrs_free(l);
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	if (!g) {
		for (int d = 0; d < c->cart.ndims; d++) {
			int rc = MPI_Cart_shift(comm, d, 1, &l->in[2 * d], &l->in[2 * d + 1]);
			if (rc) {
				nbrs_free(l);
				return rc;
			}
		}
		for (int k = 0; k < l->nin; k++) {
			l->out[k] = l->in[k];
			l->intag[k] = k;
			l->outtag[k] = k ^ 1;
		}
		return MPI_SUCCESS;
	}
	memcpy(l->in, g->in, (size_t)g->nin * sizeof(int));
	memset(l->intag, 0, ni * sizeof(int));
	memcpy(l->out, g->out, (size_t)g->nout * sizeof(int));
	memset(l->outtag, 0, no * sizeof(int));
	return MPI_SUCCESS;
}

/* Checks a side's datatype and counts (n blocks). */
static int side_check(MPI_Comm comm, const struct nbr_side *s, int n, const char *what, const char *fn)
{
	if (!s->ts && !s->t)
		return tcmpi__error(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted %stype", what);
	for (int k = 0; k < n; k++) {
		if (s->ts && !s->ts[k])
			return tcmpi__error(comm, MPI_ERR_TYPE, fn,
			                    "invalid or uncommitted %stypes[%d]", what, k);
		const long long m = s->counts ? s->counts[k] : s->count;
		if (m < 0)
			return tcmpi__error(comm, MPI_ERR_COUNT, fn, "negative %scount %lld", what, m);
		if (m > 0 && !s->buf)
			return tcmpi__error(comm, MPI_ERR_BUFFER, fn, "NULL %sbuf", what);
	}
	return MPI_SUCCESS;
}

/* Moves the packed block at from (bytes) into block i of rcv. */
static void unpack_block(const struct nbr_side *rcv, int i, const char *from, size_t bytes)
{
	tcmpi__unpack_bytes(from, bytes, side_type(rcv, i), (char *)side_at(rcv, i));
}

static void pack_block(const struct nbr_side *snd, int j, char *to)
{
	tcmpi__pack(side_at(snd, j), side_count(snd, j), side_type(snd, j), to);
}

/* ---------------------------------------------------------------------
 * The exchange, in three steps that the blocking calls make at once and
 * the nonblocking and persistent ones (shim_ineighbor.c) apart:
 * tcmpi__nbr_new checks the call and sets it up (the neighbours and their
 * tags, its own copy of the counts, displacements and datatypes, a buffer
 * of packed blocks, the context), tcmpi__nbr_post packs the send blocks
 * and posts every receive and then every send, tcmpi__nbr_progress
 * completes the messages and unpacks the received blocks once all have
 * arrived.
 */
struct tcmpi__nbr {
	MPI_Comm comm;
	int self;             /* a communicator of one rank: no messages */
	struct tc_proc *proc; /* the neighbourhood context's proc (c->nbr) */
	struct nbrs l;
	struct nbr_side snd, rcv; /* their arrays and datatypes the plan's own */
	size_t *off;              /* packed block k at off[k]: sends, then receives */
	char *tmp;
	tc_request *req; /* the messages posted: nreq, block idx[r] each */
	int *idx;
	char *rdone; /* per message: completed */
	int nreq, left, err, finished;
};

/* The plan's own copy of side s of n blocks (its arrays and datatypes);
 * 0, or -1 when out of memory. */
static int side_keep(struct nbr_side *d, const struct nbr_side *s, int n)
{
	*d = *s;
	d->counts = d->displs = NULL;
	d->bdispls = NULL;
	d->ts = NULL;
	d->t = NULL;
	const size_t m = (size_t)(n > 0 ? n : 1);
	if (s->counts) {
		int *a = malloc(m * sizeof *a);
		if (!a)
			return -1;
		memcpy(a, s->counts, (size_t)n * sizeof *a);
		d->counts = a;
	}
	if (s->displs) {
		int *a = malloc(m * sizeof *a);
		if (!a)
			return -1;
		memcpy(a, s->displs, (size_t)n * sizeof *a);
		d->displs = a;
	}
	if (s->bdispls) {
		MPI_Aint *a = malloc(m * sizeof *a);
		if (!a)
			return -1;
		memcpy(a, s->bdispls, (size_t)n * sizeof *a);
		d->bdispls = a;
	}
	if (s->ts) {
		const struct tcmpi__dtype **a = calloc(m, sizeof *a);
		if (!a)
			return -1;
		d->ts = a;
		d->nts = n;
		for (int k = 0; k < n; k++)
			if (!(a[k] = tcmpi__dtype_hold(s->ts[k])))
				return -1;
	} else if (!(d->t = tcmpi__dtype_hold(s->t))) {
		return -1;
	}
	return 0;
}

static void side_drop(struct nbr_side *d)
{
	free((void *)(uintptr_t)d->counts);
	free((void *)(uintptr_t)d->displs);
	free((void *)(uintptr_t)d->bdispls);
	for (int k = 0; d->ts && k < d->nts; k++)
		tcmpi__dtype_drop((struct tcmpi__dtype *)(uintptr_t)d->ts[k]);
	free((void *)(uintptr_t)d->ts);
	tcmpi__dtype_drop((struct tcmpi__dtype *)(uintptr_t)d->t);
}

void tcmpi__nbr_free(struct tcmpi__nbr *n)
{
	if (!n)
		return;
	side_drop(&n->snd);
	side_drop(&n->rcv);
	nbrs_free(&n->l);
	free(n->off);
	free(n->tmp);
	free(n->req);
	free(n->idx);
	free(n->rdone);
	free(n);
}

int tcmpi__nbr_new(MPI_Comm comm, const struct nbr_side *snd, const struct nbr_side *rcv,
                   const char *fn, struct tcmpi__nbr **out)
{
	*out = NULL;
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, fn, &c);
	if (rc)
		return rc;
	if (!c->cart.on && !c->graph)
		return tcmpi__error(comm, MPI_ERR_TOPOLOGY, fn,
		                    "communicator %d has no Cartesian or graph topology", (int)comm);
	if (snd->buf == MPI_IN_PLACE || rcv->buf == MPI_IN_PLACE)
		return tcmpi__error(comm, MPI_ERR_BUFFER, fn,
		                    "MPI_IN_PLACE is not allowed in a neighbourhood collective");
	struct tcmpi__nbr *n = calloc(1, sizeof *n);
	if (!n)
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	n->comm = comm;
	n->self = c->self;
	if ((rc = nbrs_of(comm, c, &n->l, fn)) != MPI_SUCCESS) {
		free(n);
		return rc;
	}
	const int no = n->l.nout, ni = n->l.nin;
	if ((rc = side_check(comm, snd, no, "send", fn)) || (rc = side_check(comm, rcv, ni, "recv", fn)))
		goto fail;
	if (side_keep(&n->snd, snd, no) || side_keep(&n->rcv, rcv, ni)) {
		rc = tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
		goto fail;
	}
	const size_t nb = (size_t)(no + ni + 1);
	n->off = malloc(nb * sizeof *n->off);
	n->req = calloc(nb, sizeof *n->req);
	n->idx = malloc(nb * sizeof *n->idx);
	n->rdone = malloc(nb);
	size_t total = 0;
	if (n->off && n->req && n->idx && n->rdone) {
		for (int k = 0; k < no + ni; k++) {
			const int send = k < no, b = send ? k : k - no;
			const struct nbr_side *s = send ? &n->snd : &n->rcv;
			n->off[k] = total;
			if ((send ? n->l.out[b] : n->l.in[b]) != MPI_PROC_NULL)
				total += side_count(s, b) * side_type(s, b)->size;
		}
		n->off[no + ni] = total;
		n->tmp = tcmpi__alloc(total ? total : 1);
	}
	if (!n->tmp) {
		rc = tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "no memory for %zu bytes", total);
		goto fail;
	}
	if (!c->self && !c->nbr) {
		/* The first neighbourhood call on the communicator: its own
		 * context (every rank of the communicator makes the call). */
		struct tc_proc *np = NULL;
		int e = tc_team_dup(c->proc, &np);
		if (e) {
			rc = tcmpi__tc_error(comm, e, fn);
			goto fail;
		}
		c->nbr = np;
	}
	n->proc = c->self ? NULL : c->nbr;
	*out = n;
	return MPI_SUCCESS;
fail:
	tcmpi__nbr_free(n);
	return rc;
}

/* A communicator of one rank: every neighbour is the rank itself or
 * none; a receive takes the first send not yet taken whose tag it asks
 * for, as messages match (idx: the sends taken). */
static int self_exchange(struct tcmpi__nbr *n, const char *fn)
{
	const int no = n->l.nout, ni = n->l.nin;
	const struct nbr_side *snd = &n->snd, *rcv = &n->rcv;
	const struct nbrs *l = &n->l;
	memset(n->idx, 0, (size_t)(no > 0 ? no : 1) * sizeof *n->idx);
	for (int i = 0; i < ni; i++) {
		if (l->in[i] == MPI_PROC_NULL)
			continue;
		int j = 0;
		while (j < no &&
		       (l->out[j] == MPI_PROC_NULL || n->idx[j] || l->outtag[j] != l->intag[i]))
			j++;
		if (j == no)
			return tcmpi__error(n->comm, MPI_ERR_TOPOLOGY, fn,
			                    "source %d has no edge sent to it", i);
		const size_t want = n->off[no + i + 1] - n->off[no + i],
		             got = n->off[j + 1] - n->off[j];
		if (got > want)
			return tcmpi__error(n->comm, MPI_ERR_TRUNCATE, fn,
			                    "block %d: %zu bytes sent, room for %zu", i, got, want);
		n->idx[j] = 1;
		pack_block(snd, j, n->tmp + n->off[j]);
		unpack_block(rcv, i, n->tmp + n->off[j], got);
	}
	return MPI_SUCCESS;
}

int tcmpi__nbr_post(struct tcmpi__nbr *n, const char *fn)
{
	n->nreq = n->left = n->err = 0;
	n->finished = 0;
	if (n->self) {
		n->finished = 1;
		return self_exchange(n, fn);
	}
	const int no = n->l.nout, ni = n->l.nin;
	int err = 0;
	for (int i = 0; i < ni && !err; i++) {
		if (n->l.in[i] == MPI_PROC_NULL)
			continue;
		n->idx[n->nreq] = no + i;
		err = tc_irecv_tag(n->proc, n->l.in[i], n->l.intag[i], n->tmp + n->off[no + i],
		                   n->off[no + i + 1] - n->off[no + i], &n->req[n->nreq]);
		n->nreq += !err;
	}
	for (int j = 0; j < no && !err; j++) {
		if (n->l.out[j] == MPI_PROC_NULL)
			continue;
		pack_block(&n->snd, j, n->tmp + n->off[j]);
		n->idx[n->nreq] = j;
		err = tc_isend_tag(n->proc, n->l.out[j], n->l.outtag[j], n->tmp + n->off[j],
		                   n->off[j + 1] - n->off[j], &n->req[n->nreq]);
		n->nreq += !err;
	}
	memset(n->rdone, 0, (size_t)(n->nreq + 1));
	n->left = n->nreq;
	if (err) {
		/* The messages posted complete before the error is reported:
		 * their buffer is the plan's. */
		int done;
		(void)tcmpi__nbr_progress(n, 1, &done);
		return tcmpi__nbr_error(n, err, fn);
	}
	return MPI_SUCCESS;
}

int tcmpi__nbr_progress(struct tcmpi__nbr *n, int block, int *done)
{
	for (int r = 0; r < n->nreq && n->left; r++) {
		if (n->rdone[r])
			continue;
		int d = 1;
		const int e = block ? tc_wait(n->proc, &n->req[r], NULL)
		                    : tc_test(n->proc, &n->req[r], &d);
		if (!d)
			continue;
		n->rdone[r] = 1;
		n->left--;
		n->err = n->err ? n->err : e;
	}
	if (!n->left && !n->finished) {
		const int no = n->l.nout;
		for (int r = 0; r < n->nreq && !n->err; r++) {
			if (n->idx[r] < no)
				continue;
			tc_status st;
			tc_request_status(&n->req[r], &st);
			unpack_block(&n->rcv, n->idx[r] - no, n->tmp + n->off[n->idx[r]], st.bytes);
		}
		n->finished = 1;
	}
	*done = n->finished;
	return n->finished ? n->err : 0;
}

int tcmpi__nbr_error(const struct tcmpi__nbr *n, int tcerr, const char *fn)
{
	if (tcerr == TC_ETRUNCATE)
		return tcmpi__error(n->comm, MPI_ERR_TRUNCATE, fn,
		                    "a neighbour sent more than its block of the receive buffer holds");
	return tcmpi__tc_error(n->comm, tcerr, fn);
}

/* The blocking call: set up, posted, completed. */
static int exchange(MPI_Comm comm, const struct nbr_side *snd, const struct nbr_side *rcv, const char *fn)
{
	struct tcmpi__nbr *n;
	int rc = tcmpi__nbr_new(comm, snd, rcv, fn, &n);
	if (rc)
		return rc;
	rc = tcmpi__nbr_post(n, fn);
	if (!rc) {
		int done;
		const int e = tcmpi__nbr_progress(n, 1, &done);
		rc = e ? tcmpi__nbr_error(n, e, fn) : MPI_SUCCESS;
	}
	tcmpi__nbr_free(n);
	return rc;
}

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	const struct nbr_side s = {.t = tcmpi__dt(sendtype), .buf = sendbuf, .count = sendcount};
	const struct nbr_side r = {.t = tcmpi__dt(recvtype),
	                           .buf = recvbuf,
	                           .count = recvcount,
	                           .stride = recvcount};
	return exchange(comm, &s, &r, __func__);
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!recvcounts || !displs)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL recvcounts or displs");
	const struct nbr_side s = {.t = tcmpi__dt(sendtype), .buf = sendbuf, .count = sendcount};
	const struct nbr_side r = {.t = tcmpi__dt(recvtype),
	                           .buf = recvbuf,
	                           .counts = recvcounts,
	                           .displs = displs};
	return exchange(comm, &s, &r, __func__);
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
	const struct nbr_side s = {.t = tcmpi__dt(sendtype),
	                           .buf = sendbuf,
	                           .count = sendcount,
	                           .stride = sendcount};
	const struct nbr_side r = {.t = tcmpi__dt(recvtype),
	                           .buf = recvbuf,
	                           .count = recvcount,
	                           .stride = recvcount};
	return exchange(comm, &s, &r, __func__);
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	int rc = tcmpi__check_init(__func__);
	if (rc)
		return rc;
	if (!sendcounts || !sdispls || !recvcounts || !rdispls)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL counts or displacements");
	const struct nbr_side s = {.t = tcmpi__dt(sendtype),
	                           .buf = sendbuf,
	                           .counts = sendcounts,
	                           .displs = sdispls};
	const struct nbr_side r = {.t = tcmpi__dt(recvtype),
	                           .buf = recvbuf,
	                           .counts = recvcounts,
	                           .displs = rdispls};
	return exchange(comm, &s, &r, __func__);
}

/* The sides of an alltoallw: the datatypes looked up by handle into
 * arrays of the call's (MPI_DATATYPE_NULL's entry NULL, refused by the
 * side's check).  The number of entries is the communicator's neighbours
 * in and out. */
int tcmpi__nbr_w_sides(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       struct tcmpi__nbr_side *s, struct tcmpi__nbr_side *r, const char *fn)
{
	memset(s, 0, sizeof *s);
	memset(r, 0, sizeof *r);
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, fn, &c);
	if (rc)
		return rc;
	if (!sendcounts || !sdispls || !sendtypes || !recvcounts || !rdispls || !recvtypes)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL counts, displacements or datatypes");
	const struct tcmpi__graph *g = c->graph;
	const int nin = g ? g->nin : 2 * c->cart.ndims, nout = g ? g->nout : 2 * c->cart.ndims;
	const struct tcmpi__dtype **st = calloc((size_t)(nout > 0 ? nout : 1), sizeof *st);
	const struct tcmpi__dtype **rt = calloc((size_t)(nin > 0 ? nin : 1), sizeof *rt);
	if (!st || !rt) {
		free(st);
		free(rt);
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "out of memory");
	}
	for (int k = 0; k < nout; k++)
		st[k] = tcmpi__dt(sendtypes[k]);
	for (int k = 0; k < nin; k++)
		rt[k] = tcmpi__dt(recvtypes[k]);
	*s = (struct tcmpi__nbr_side){.ts = st, .buf = sendbuf, .counts = sendcounts, .bdispls = sdispls};
	*r = (struct tcmpi__nbr_side){.ts = rt, .buf = recvbuf, .counts = recvcounts, .bdispls = rdispls};
	return MPI_SUCCESS;
}

void tcmpi__nbr_w_free(struct tcmpi__nbr_side *s, struct tcmpi__nbr_side *r)
{
	free((void *)(uintptr_t)s->ts);
	free((void *)(uintptr_t)r->ts);
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
	struct tcmpi__nbr_side s, r;
	int rc = tcmpi__nbr_w_sides(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
	                            rdispls, recvtypes, comm, &s, &r, __func__);
	if (!rc)
		rc = exchange(comm, &s, &r, __func__);
	tcmpi__nbr_w_free(&s, &r);
	return rc;
}
