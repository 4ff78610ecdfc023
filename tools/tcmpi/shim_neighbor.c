/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_neighbor.c - neighbourhood collectives on Cartesian and
 * graph communicators: MPI_Neighbor_allgather, MPI_Neighbor_allgatherv,
 * MPI_Neighbor_alltoall and MPI_Neighbor_alltoallv (blocking).
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

/* One block of a neighbourhood call: count elements at buf. */
struct nbr_side {
	const struct tcmpi__dtype *t;
	const char *buf;            /* the buffer's start */
	const int *counts, *displs; /* per neighbour (v forms), or NULL */
	int count;                  /* every neighbour's (counts NULL) */
	int stride;                 /* block k at k * stride * extent (displs NULL; 0:
	                               the same block for all, an allgather's send) */
};

static size_t side_count(const struct nbr_side *s, int k)
{
	return (size_t)(s->counts ? s->counts[k] : s->count);
}

static const char *side_at(const struct nbr_side *s, int k)
{
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
	if (!s->t)
		return tcmpi__error(comm, MPI_ERR_TYPE, fn, "invalid or uncommitted %stype", what);
	for (int k = 0; k < n; k++) {
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
	const size_t esz = rcv->t->size ? rcv->t->size : 1;
	tcmpi__unpack(from, bytes / esz, rcv->t, (char *)side_at(rcv, i));
}

/* The exchange: block j of snd to destination j, block i of rcv from
 * source i. */
static int exchange(MPI_Comm comm, const struct nbr_side *snd, const struct nbr_side *rcv, const char *fn)
{
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
	struct nbrs l;
	if ((rc = nbrs_of(comm, c, &l, fn)) != MPI_SUCCESS)
		return rc;
	const int no = l.nout, ni = l.nin;
	if ((rc = side_check(comm, snd, no, "send", fn)) ||
	    (rc = side_check(comm, rcv, ni, "recv", fn))) {
		nbrs_free(&l);
		return rc;
	}
	/* Packed blocks, each at its offset: the sends' (no), then the
	 * receives' (ni); the requests and which block each is. */
	size_t *off = malloc((size_t)(no + ni + 1) * sizeof *off), total = 0;
	tc_request *req = malloc((size_t)(no + ni + 1) * sizeof *req);
	int *idx = malloc((size_t)(no + ni + 1) * sizeof *idx);
	char *tmp = NULL;
	if (off && req && idx) {
		for (int k = 0; k < no + ni; k++) {
			const int send = k < no, b = send ? k : k - no;
			const struct nbr_side *s = send ? snd : rcv;
			off[k] = total;
			if ((send ? l.out[b] : l.in[b]) != MPI_PROC_NULL)
				total += side_count(s, b) * s->t->size;
		}
		off[no + ni] = total;
		tmp = tcmpi__alloc(total ? total : 1);
	}
	if (!tmp) {
		rc = tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "no memory for %zu bytes", total);
		goto out;
	}
	if (c->self) {
		/* A communicator of one rank: every neighbour is the rank
		 * itself or none; a receive takes the first send not yet
		 * taken whose tag it asks for, as messages match (idx: the
		 * sends taken). */
		memset(idx, 0, (size_t)no * sizeof *idx);
		for (int i = 0; i < ni && rc == MPI_SUCCESS; i++) {
			if (l.in[i] == MPI_PROC_NULL)
				continue;
			int j = 0;
			while (j < no &&
			       (l.out[j] == MPI_PROC_NULL || idx[j] || l.outtag[j] != l.intag[i]))
				j++;
			if (j == no) {
				rc = tcmpi__error(comm, MPI_ERR_TOPOLOGY, fn,
				                  "source %d has no edge sent to it", i);
				break;
			}
			const size_t want = off[no + i + 1] - off[no + i], got = off[j + 1] - off[j];
			if (got > want) {
				rc = tcmpi__error(comm, MPI_ERR_TRUNCATE, fn,
				                  "block %d: %zu bytes sent, room for %zu", i, got,
				                  want);
				break;
			}
			idx[j] = 1;
			tcmpi__pack(side_at(snd, j), side_count(snd, j), snd->t, tmp + off[j]);
			unpack_block(rcv, i, tmp + off[j], got);
		}
		goto out;
	}
	if (!c->nbr) {
		/* The first neighbourhood call on the communicator: its own
		 * context (every rank of the communicator makes the call). */
		struct tc_proc *np = NULL;
		int e = tc_team_dup(c->proc, &np);
		if (e) {
			rc = tcmpi__tc_error(comm, e, fn);
			goto out;
		}
		c->nbr = np;
	}
	int nreq = 0, err = 0;
	for (int i = 0; i < ni && !err; i++) {
		if (l.in[i] == MPI_PROC_NULL)
			continue;
		idx[nreq] = no + i;
		err = tc_irecv_tag(c->nbr, l.in[i], l.intag[i], tmp + off[no + i],
		                   off[no + i + 1] - off[no + i], &req[nreq]);
		nreq += !err;
	}
	for (int j = 0; j < no && !err; j++) {
		if (l.out[j] == MPI_PROC_NULL)
			continue;
		tcmpi__pack(side_at(snd, j), side_count(snd, j), snd->t, tmp + off[j]);
		idx[nreq] = j;
		err = tc_isend_tag(c->nbr, l.out[j], l.outtag[j], tmp + off[j], off[j + 1] - off[j],
		                   &req[nreq]);
		nreq += !err;
	}
	const int werr = nreq ? tc_waitall(c->nbr, nreq, req) : 0;
	err = err ? err : werr;
	for (int r = 0; r < nreq && !err; r++) {
		if (idx[r] < no)
			continue;
		tc_status st;
		tc_request_status(&req[r], &st);
		unpack_block(rcv, idx[r] - no, tmp + off[idx[r]], st.bytes);
	}
	if (err == TC_ETRUNCATE)
		rc = tcmpi__error(comm, MPI_ERR_TRUNCATE, fn,
		                  "a neighbour sent more than its block of the receive buffer holds");
	else if (err)
		rc = tcmpi__tc_error(comm, err, fn);
out:
	free(tmp);
	free(off);
	free(req);
	free(idx);
	nbrs_free(&l);
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
