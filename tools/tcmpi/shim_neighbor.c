/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_neighbor.c - neighbourhood collectives on Cartesian
 * communicators: MPI_Neighbor_allgather, MPI_Neighbor_allgatherv,
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
 * on a periodic side is both its own neighbours.
 *
 * Each block is a message over the grid's link (a Cartesian communicator's
 * sub-team is the grid's mesh or torus, shim_cart.c), tagged with the
 * receiving block's index, on a duplicate of the communicator's team made
 * by its first neighbourhood collective: no message of the program (a
 * point-to-point one of any tag on the communicator) can match them.  So
 * the emulation and the logical clock charge each block one link, as a
 * halo exchange's messages are.
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

/* The grid neighbours of the calling rank: 2 ndims of them. */
static int neighbours(MPI_Comm comm, const struct tcmpi__comm *c, int *nbr)
{
	for (int d = 0; d < c->cart.ndims; d++) {
		int rc = MPI_Cart_shift(comm, d, 1, &nbr[2 * d], &nbr[2 * d + 1]);
		if (rc)
			return rc;
	}
	return MPI_SUCCESS;
}

/* Checks a side's datatype and counts (n neighbours). */
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

/* The exchange: block k of snd to neighbour k, block k of rcv from it. */
static int exchange(MPI_Comm comm, const struct nbr_side *snd, const struct nbr_side *rcv, const char *fn)
{
	int rc = tcmpi__check_init(fn);
	if (rc)
		return rc;
	struct tcmpi__comm *c = tcmpi__comm(comm);
	if (!c)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator %d",
		                    (int)comm);
	if (!c->cart.on)
		return tcmpi__error(comm, MPI_ERR_TOPOLOGY, fn,
		                    "communicator %d has no Cartesian topology (graph topologies "
		                    "are not supported)",
		                    (int)comm);
	if (snd->buf == MPI_IN_PLACE || rcv->buf == MPI_IN_PLACE)
		return tcmpi__error(comm, MPI_ERR_BUFFER, fn,
		                    "MPI_IN_PLACE is not allowed in a neighbourhood collective");
	const int n = 2 * c->cart.ndims;
	if ((rc = side_check(comm, snd, n, "send", fn)) || (rc = side_check(comm, rcv, n, "recv", fn)))
		return rc;
	int nbr[2 * TCMPI_MAX_DIMS];
	if ((rc = neighbours(comm, c, nbr)) != MPI_SUCCESS)
		return rc;
	/* Packed blocks: the sends' then the receives', each at its offset. */
	size_t off[4 * TCMPI_MAX_DIMS + 1], total = 0;
	for (int k = 0; k < 2 * n; k++) {
		const struct nbr_side *s = k < n ? snd : rcv;
		off[k] = total;
		if (nbr[k % n] != MPI_PROC_NULL)
			total += side_count(s, k % n) * s->t->size;
	}
	off[2 * n] = total;
	char *tmp = total ? tcmpi__alloc(total) : NULL;
	if (total && !tmp)
		return tcmpi__error(comm, MPI_ERR_NO_MEM, fn, "no memory for %zu bytes", total);
	if (c->self) {
		/* A grid of one rank: every neighbour is the rank itself or
		 * none, and block k comes from its own block k ^ 1. */
		for (int k = 0; k < n; k++) {
			if (nbr[k] == MPI_PROC_NULL)
				continue;
			const size_t want = side_count(rcv, k) * rcv->t->size,
			             got = side_count(snd, k ^ 1) * snd->t->size;
			if (got > want) {
				free(tmp);
				return tcmpi__error(comm, MPI_ERR_TRUNCATE, fn,
				                    "block %d: %zu bytes sent, room for %zu", k,
				                    got, want);
			}
			tcmpi__pack(side_at(snd, k ^ 1), side_count(snd, k ^ 1), snd->t,
			            tmp + off[n + k]);
			tcmpi__unpack(tmp + off[n + k], got / (rcv->t->size ? rcv->t->size : 1),
			              rcv->t, (char *)side_at(rcv, k));
		}
		free(tmp);
		return MPI_SUCCESS;
	}
	if (!c->nbr) {
		/* The first neighbourhood call on the communicator: its own
		 * context (every rank of the communicator makes the call). */
		struct tc_proc *np = NULL;
		int e = tc_team_dup(c->proc, &np);
		if (e) {
			free(tmp);
			return tcmpi__tc_error(comm, e, fn);
		}
		c->nbr = np;
	}
	tc_request req[4 * TCMPI_MAX_DIMS];
	int idx[4 * TCMPI_MAX_DIMS], nreq = 0, err = 0;
	for (int k = 0; k < n && !err; k++) {
		if (nbr[k] == MPI_PROC_NULL)
			continue;
		idx[nreq] = n + k;
		err = tc_irecv_tag(c->nbr, nbr[k], k, tmp + off[n + k], off[n + k + 1] - off[n + k],
		                   &req[nreq]);
		nreq += !err;
	}
	for (int k = 0; k < n && !err; k++) {
		if (nbr[k] == MPI_PROC_NULL)
			continue;
		tcmpi__pack(side_at(snd, k), side_count(snd, k), snd->t, tmp + off[k]);
		idx[nreq] = k;
		err = tc_isend_tag(c->nbr, nbr[k], k ^ 1, tmp + off[k], off[k + 1] - off[k], &req[nreq]);
		nreq += !err;
	}
	int werr = nreq ? tc_waitall(c->nbr, nreq, req) : 0;
	err = err ? err : werr;
	for (int i = 0; i < nreq && !err; i++) {
		const int k = idx[i] - n;
		if (k < 0)
			continue;
		tc_status st;
		tc_request_status(&req[i], &st);
		const size_t esz = rcv->t->size ? rcv->t->size : 1;
		tcmpi__unpack(tmp + off[n + k], st.bytes / esz, rcv->t, (char *)side_at(rcv, k));
	}
	free(tmp);
	if (err == TC_ETRUNCATE)
		return tcmpi__error(comm, MPI_ERR_TRUNCATE, fn,
		                    "a neighbour sent more than its block of the receive buffer holds");
	return err ? tcmpi__tc_error(comm, err, fn) : MPI_SUCCESS;
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
