/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_ineighbor.c - the nonblocking and persistent
 * neighbourhood collectives: MPI_Ineighbor_allgather, allgatherv,
 * alltoall, alltoallv, alltoallw and their MPI_Neighbor_..._init forms.
 *
 * They mean exactly what the blocking calls of shim_neighbor.c mean: the
 * same neighbours in the same order, the same tags on the same duplicate
 * of the communicator's team, the same handling of a communicator of one
 * rank; they share its set-up (tcmpi__nbr_new).  The request (a
 * collective's, TCMPI_REQ_COLL, so that MPI_Cancel refuses it) holds the
 * call's plan: its own copy of the counts, displacements and datatypes,
 * a buffer of packed blocks, one topocoll request per message.  A start
 * (the nonblocking call itself, or MPI_Start) packs the send blocks from
 * the send buffer as it is then and posts every receive and every send;
 * the waits and tests of shim_p2p.c progress the messages
 * (tcmpi__nbr_progress) and, once all have completed, the received
 * blocks are unpacked into the receive buffer.  On a communicator of one
 * rank the blocks are copied at the start and the request is complete at
 * once.  The first neighbourhood call on a communicator, of any form,
 * makes its context (a collective duplicate of the team, shim_neighbor.c):
 * it returns once every rank of the communicator has made its first
 * neighbourhood call.
 */
#include "shim.h"

int tcmpi__nbr_start(struct tcmpi__req *q, const char *fn)
{
	/* The context the plan was made on must still be the communicator's
	 * (a handle freed and given to a new communicator has another). */
	const struct tcmpi__comm *c = tcmpi__comm(q->comm);
	if (!c || c->nbr != q->proc)
		return tcmpi__error(MPI_COMM_NULL, MPI_ERR_COMM, fn,
		                    "the request's communicator %d has been freed", q->comm);
	int rc = tcmpi__nbr_post(q->nb, fn);
	if (rc)
		return rc;
	int done = 0;
	const int tcrc = tcmpi__nbr_progress(q->nb, 0, &done);
	if (done) { /* a communicator of one rank, or nothing to exchange */
		q->tcrc = tcrc;
		q->done = 2; /* complete: its wait or test gives the status */
		return MPI_SUCCESS;
	}
	q->active = 1;
	return MPI_SUCCESS;
}

/* The request of a nonblocking (started now) or persistent call. */
static int nbr_request(MPI_Comm comm, const struct tcmpi__nbr_side *s, const struct tcmpi__nbr_side *r,
                       int persistent, MPI_Request *request, const char *fn)
{
	if (!request)
		return tcmpi__error(comm, MPI_ERR_REQUEST, fn, "NULL request");
	struct tcmpi__nbr *n;
	int rc = tcmpi__nbr_new(comm, s, r, fn, &n);
	if (rc)
		return rc;
	struct tcmpi__req *q = tcmpi__req_new(comm, TCMPI_REQ_COLL, request, fn);
	if (!q) {
		tcmpi__nbr_free(n);
		return MPI_ERR_NO_MEM;
	}
	q->nb = n;
	q->persistent = persistent;
	q->proc = tcmpi__comm(comm)->nbr;
	if (!persistent && (rc = tcmpi__nbr_start(q, fn)))
		tcmpi__req_drop(request);
	return rc;
}

/* The arguments every form shares, checked before anything else. */
static int nbr_prologue(MPI_Comm comm, const char *fn)
{
	struct tcmpi__comm *c;
	return tcmpi__comm_arg(comm, fn, &c);
}

static int allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, MPI_Comm comm, int persistent,
                     MPI_Request *request, const char *fn)
{
	int rc = nbr_prologue(comm, fn);
	if (rc)
		return rc;
	const struct tcmpi__nbr_side s = {.t = tcmpi__dt(sendtype), .buf = sendbuf, .count = sendcount};
	const struct tcmpi__nbr_side r = {.t = tcmpi__dt(recvtype),
	                                  .buf = recvbuf,
	                                  .count = recvcount,
	                                  .stride = recvcount};
	return nbr_request(comm, &s, &r, persistent, request, fn);
}

static int allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                      MPI_Comm comm, int persistent, MPI_Request *request, const char *fn)
{
	int rc = nbr_prologue(comm, fn);
	if (rc)
		return rc;
	if (!recvcounts || !displs)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL recvcounts or displs");
	const struct tcmpi__nbr_side s = {.t = tcmpi__dt(sendtype), .buf = sendbuf, .count = sendcount};
	const struct tcmpi__nbr_side r = {.t = tcmpi__dt(recvtype),
	                                  .buf = recvbuf,
	                                  .counts = recvcounts,
	                                  .displs = displs};
	return nbr_request(comm, &s, &r, persistent, request, fn);
}

static int alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, int persistent,
                    MPI_Request *request, const char *fn)
{
	int rc = nbr_prologue(comm, fn);
	if (rc)
		return rc;
	const struct tcmpi__nbr_side s = {.t = tcmpi__dt(sendtype),
	                                  .buf = sendbuf,
	                                  .count = sendcount,
	                                  .stride = sendcount};
	const struct tcmpi__nbr_side r = {.t = tcmpi__dt(recvtype),
	                                  .buf = recvbuf,
	                                  .count = recvcount,
	                                  .stride = recvcount};
	return nbr_request(comm, &s, &r, persistent, request, fn);
}

static int alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                     const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, int persistent,
                     MPI_Request *request, const char *fn)
{
	int rc = nbr_prologue(comm, fn);
	if (rc)
		return rc;
	if (!sendcounts || !sdispls || !recvcounts || !rdispls)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL counts or displacements");
	const struct tcmpi__nbr_side s = {.t = tcmpi__dt(sendtype),
	                                  .buf = sendbuf,
	                                  .counts = sendcounts,
	                                  .displs = sdispls};
	const struct tcmpi__nbr_side r = {.t = tcmpi__dt(recvtype),
	                                  .buf = recvbuf,
	                                  .counts = recvcounts,
	                                  .displs = rdispls};
	return nbr_request(comm, &s, &r, persistent, request, fn);
}

static int alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                     int persistent, MPI_Request *request, const char *fn)
{
	struct tcmpi__nbr_side s, r;
	int rc = tcmpi__nbr_w_sides(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
	                            rdispls, recvtypes, comm, &s, &r, fn);
	if (!rc)
		rc = nbr_request(comm, &s, &r, persistent, request, fn);
	tcmpi__nbr_w_free(&s, &r);
	return rc;
}

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0,
	                 request, __func__);
}

int MPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
	(void)info;
	return allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 1,
	                 request, __func__);
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
	                  0, request, __func__);
}

int MPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	(void)info;
	return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
	                  1, request, __func__);
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 0,
	                request, __func__);
}

int MPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Info info, MPI_Request *request)
{
	(void)info;
	return alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, 1,
	                request, __func__);
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
	return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
	                 recvtype, comm, 0, request, __func__);
}

int MPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
	(void)info;
	return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
	                 recvtype, comm, 1, request, __func__);
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request)
{
	return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
	                 recvtypes, comm, 0, request, __func__);
}

int MPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	(void)info;
	return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
	                 recvtypes, comm, 1, request, __func__);
}
