/* SPDX-License-Identifier: MIT */
/*
 * mpi_ineighbor.c - the nonblocking and persistent neighbourhood
 * collectives against the blocking ones: MPI_Ineighbor_allgather,
 * allgatherv, alltoall, alltoallv and alltoallw, and their
 * MPI_Neighbor_..._init forms (started three times, the send buffers
 * changed between starts), beside MPI_Neighbor_alltoallw, on grids of 1,
 * 2 and 3 dimensions shaped for the run's size (periodic, not and mixed),
 * on MPI_COMM_SELF's periodic grid (the rank its own neighbour both
 * ways), on MPI_Graph_create's ring with every edge given twice, on a
 * directed distributed graph with two sources and three destinations per
 * rank, and on a graph on MPI_COMM_SELF whose rank is its own neighbour
 * three times.  Each result is compared element by element with the
 * blocking call's on the same data (receive buffers filled with a marker
 * first, so that blocks of MPI_PROC_NULL neighbours must stay as they
 * were); the v and w forms with counts per neighbour and displacements in
 * reverse order with gaps, a strided send type, and the five operations
 * outstanding at once, completed by MPI_Waitall, MPI_Testall or
 * MPI_Waitsome.  Errors under MPI_ERRORS_RETURN: a communicator without a
 * topology, a negative count, MPI_DATATYPE_NULL in an alltoallw, a NULL
 * request, and MPI_Cancel of such a request.  Exit status 0 when all
 * hold; each failure printed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define B 3      /* elements per block */
#define MARK -77 /* an element no call writes */
#define NOPS 5

/* Element e of block k of rank r's send buffer, in round t. */
static int val(int r, int k, int e, int t)
{
	return t * 1000000 + r * 1000 + k * 10 + e;
}

/* The buffers of one operation: the blocking call's result (ref) and
 * the nonblocking or persistent one's (got). */
struct bufs {
	int *snd, *ref, *got;
	int *sc, *sd, *rc, *rd;  /* v forms' counts and displacements */
	MPI_Aint *sdb, *rdb;     /* w form's displacements in bytes */
	MPI_Datatype *sty, *rty; /* w form's datatypes */
	size_t ns, nr;           /* elements of snd and of ref and got */
};

static int nin, nout;
static MPI_Datatype strided; /* B ints, every other one */

/* Fills round t's send data and marks both receive buffers. */
static void fill(struct bufs *b, int me, int t)
{
	for (size_t i = 0; i < b->ns; i++)
		b->snd[i] = val(me, (int)(i / (2 * B)), (int)(i % (2 * B)), t);
	for (size_t i = 0; i < b->nr; i++)
		b->ref[i] = b->got[i] = MARK;
}

static void setup(struct bufs *b)
{
	const int n = nin > nout ? nin : nout, m = n > 0 ? n : 1;
	/* Sends: block k at 2 B k (room for the strided type); receives:
	 * block i at (nin - 1 - i) (B + 1), in reverse with a gap. */
	b->ns = (size_t)(2 * B * m);
	b->nr = (size_t)((B + 1) * m);
	b->snd = malloc(sizeof(int) * b->ns);
	b->ref = malloc(sizeof(int) * b->nr);
	b->got = malloc(sizeof(int) * b->nr);
	b->sc = malloc(sizeof(int) * (size_t)m);
	b->sd = malloc(sizeof(int) * (size_t)m);
	b->rc = malloc(sizeof(int) * (size_t)m);
	b->rd = malloc(sizeof(int) * (size_t)m);
	b->sdb = malloc(sizeof(MPI_Aint) * (size_t)m);
	b->rdb = malloc(sizeof(MPI_Aint) * (size_t)m);
	b->sty = malloc(sizeof(MPI_Datatype) * (size_t)m);
	b->rty = malloc(sizeof(MPI_Datatype) * (size_t)m);
	for (int k = 0; k < m; k++) {
		/* B elements a block (one strided element of B in the w
		 * form), so that every block a rank sends fits the block of
		 * the receive buffer it arrives in. */
		b->sc[k] = B;
		b->sd[k] = 2 * B * k;
		b->rc[k] = B;
		b->rd[k] = (nin - 1 - k) * (B + 1);
		b->sdb[k] = (MPI_Aint)sizeof(int) * 2 * B * k;
		b->rdb[k] = (MPI_Aint)sizeof(int) * (nin - 1 - k) * (B + 1);
		b->sty[k] = strided;
		b->rty[k] = MPI_INT;
	}
}

static void release(struct bufs *b)
{
	free(b->snd);
	free(b->ref);
	free(b->got);
	free(b->sc);
	free(b->sd);
	free(b->rc);
	free(b->rd);
	free(b->sdb);
	free(b->rdb);
	free(b->sty);
	free(b->rty);
}

/* Operation op, blocking into ref, or its nonblocking (persistent 0) or
 * persistent (1) form into got, *q its request. */
static int run(int op, struct bufs *b, MPI_Comm comm, int form, MPI_Request *q)
{
	int *out = form < 0 ? b->ref : b->got;
	switch (op) {
	case 0: /* allgather: the strided send type's B elements */
		if (form < 0)
			return MPI_Neighbor_allgather(b->snd, 1, strided, out, B, MPI_INT, comm);
		if (!form)
			return MPI_Ineighbor_allgather(b->snd, 1, strided, out, B, MPI_INT, comm, q);
#if MPI_VERSION >= 4 /* the persistent forms are MPI 4.0's (Open MPI 4 lacks them) */
		return MPI_Neighbor_allgather_init(b->snd, 1, strided, out, B, MPI_INT, comm,
		                                   MPI_INFO_NULL, q);
#else
		return MPI_ERR_OTHER;
#endif
	case 1: /* allgatherv into reversed blocks */
		if (form < 0)
			return MPI_Neighbor_allgatherv(b->snd, B, MPI_INT, out, b->rc, b->rd,
			                               MPI_INT, comm);
		if (!form)
			return MPI_Ineighbor_allgatherv(b->snd, B, MPI_INT, out, b->rc, b->rd,
			                                MPI_INT, comm, q);
#if MPI_VERSION >= 4 /* the persistent forms are MPI 4.0's (Open MPI 4 lacks them) */
		return MPI_Neighbor_allgatherv_init(b->snd, B, MPI_INT, out, b->rc, b->rd, MPI_INT,
		                                    comm, MPI_INFO_NULL, q);
#else
		return MPI_ERR_OTHER;
#endif
	case 2: /* alltoall: block k at 2 B k as B + B ints, received as 2 B */
		if (form < 0)
			return MPI_Neighbor_alltoall(b->snd, B, MPI_INT, out, B, MPI_INT, comm);
		if (!form)
			return MPI_Ineighbor_alltoall(b->snd, B, MPI_INT, out, B, MPI_INT, comm, q);
#if MPI_VERSION >= 4 /* the persistent forms are MPI 4.0's (Open MPI 4 lacks them) */
		return MPI_Neighbor_alltoall_init(b->snd, B, MPI_INT, out, B, MPI_INT, comm,
		                                  MPI_INFO_NULL, q);
#else
		return MPI_ERR_OTHER;
#endif
	case 3: /* alltoallv */
		if (form < 0)
			return MPI_Neighbor_alltoallv(b->snd, b->sc, b->sd, MPI_INT, out, b->rc,
			                              b->rd, MPI_INT, comm);
		if (!form)
			return MPI_Ineighbor_alltoallv(b->snd, b->sc, b->sd, MPI_INT, out, b->rc,
			                               b->rd, MPI_INT, comm, q);
#if MPI_VERSION >= 4 /* the persistent forms are MPI 4.0's (Open MPI 4 lacks them) */
		return MPI_Neighbor_alltoallv_init(b->snd, b->sc, b->sd, MPI_INT, out, b->rc, b->rd,
		                                   MPI_INT, comm, MPI_INFO_NULL, q);
#else
		return MPI_ERR_OTHER;
#endif
	default: /* alltoallw: one strided element out, B ints in */
		if (form < 0)
			return MPI_Neighbor_alltoallw(b->snd, b->sc, b->sdb, b->sty, out, b->rc,
			                              b->rdb, b->rty, comm);
		for (int k = 0; k < (nout > 0 ? nout : 1); k++)
			b->sc[k] = 1;
		if (!form)
			return MPI_Ineighbor_alltoallw(b->snd, b->sc, b->sdb, b->sty, out, b->rc,
			                               b->rdb, b->rty, comm, q);
#if MPI_VERSION >= 4 /* the persistent forms are MPI 4.0's (Open MPI 4 lacks them) */
		return MPI_Neighbor_alltoallw_init(b->snd, b->sc, b->sdb, b->sty, out, b->rc,
		                                   b->rdb, b->rty, comm, MPI_INFO_NULL, q);
#else
		return MPI_ERR_OTHER;
#endif
	}
}

static const char *const names[NOPS] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};

static int compare(const struct bufs *b, int op, const char *what, const char *name, int t)
{
	int bad = 0, first = -1;
	for (size_t i = 0; i < b->nr; i++)
		if (b->ref[i] != b->got[i]) {
			bad++;
			first = first < 0 ? (int)i : first;
		}
	CHECK(!bad,
	      "%s: %s %s round %d: %d elements differ from the blocking call's, first %d: "
	      "%d, want %d",
	      name, what, names[op], t, bad, first, first < 0 ? 0 : b->got[first],
	      first < 0 ? 0 : b->ref[first]);
	return bad;
}

/* The blocking result of round t of op into ref (the w form's send
 * counts set back for it). */
static void reference(int op, struct bufs *b, MPI_Comm comm)
{
	for (int k = 0; k < (nout > 0 ? nout : 1); k++)
		b->sc[k] = op == 4 ? 1 : B;
	int rc = run(op, b, comm, -1, NULL);
	CHECK(rc == MPI_SUCCESS, "blocking %s: error %d", names[op], rc);
}

static void neighbours(MPI_Comm comm)
{
	int topo, me;
	MPI_Topo_test(comm, &topo);
	MPI_Comm_rank(comm, &me);
	if (topo == MPI_CART) {
		int nd;
		MPI_Cartdim_get(comm, &nd);
		nin = nout = 2 * nd;
	} else if (topo == MPI_GRAPH) {
		MPI_Graph_neighbors_count(comm, me, &nin);
		nout = nin;
	} else {
		int w;
		MPI_Dist_graph_neighbors_count(comm, &nin, &nout, &w);
	}
}

/* The sources of the calling rank on comm, in MPI's order (nin of
 * them, malloc'ed), read with MPI's queries: what the blocking
 * allgather's result is checked against, apart from the layer's own
 * exchange. */
static int *sources(MPI_Comm comm, int me)
{
	int topo, *src = malloc(sizeof(int) * (size_t)(nin > 0 ? nin : 1));
	MPI_Topo_test(comm, &topo);
	if (topo == MPI_CART) {
		for (int d = 0; d < nin / 2; d++)
			MPI_Cart_shift(comm, d, 1, &src[2 * d], &src[2 * d + 1]);
	} else if (topo == MPI_GRAPH) {
		MPI_Graph_neighbors(comm, me, nin, src);
	} else {
		int *dst = malloc(sizeof(int) * (size_t)(nout > 0 ? nout : 1));
		MPI_Dist_graph_neighbors(comm, nin, src, MPI_UNWEIGHTED, nout, dst, MPI_UNWEIGHTED);
		free(dst);
	}
	return src;
}

/* Every operation on comm in both forms against the blocking one. */
static void on(MPI_Comm comm, const char *name)
{
	int me;
	MPI_Comm_rank(comm, &me);
	neighbours(comm);
	struct bufs b[NOPS];
	for (int op = 0; op < NOPS; op++)
		setup(&b[op]);

	/* The blocking allgather itself: block i is source i's strided
	 * elements 0, 2, 4 (MPI_PROC_NULL's left marked). */
	int *src = sources(comm, me), bad = 0;
	fill(&b[0], me, 9);
	reference(0, &b[0], comm);
	for (int i = 0; i < nin; i++)
		for (int e = 0; e < B; e++)
			bad += b[0].ref[i * B + e] !=
			       (src[i] == MPI_PROC_NULL ? MARK : val(src[i], 0, 2 * e, 9));
	CHECK(!bad, "%s: the blocking allgather: %d wrong elements", name, bad);
	free(src);

	/* Nonblocking, one at a time. */
	for (int op = 0; op < NOPS; op++) {
		fill(&b[op], me, 0);
		reference(op, &b[op], comm);
		MPI_Request q = MPI_REQUEST_NULL;
		int rc = run(op, &b[op], comm, 0, &q);
		MPI_Status st;
		int rc2 = MPI_Wait(&q, &st);
		CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && q == MPI_REQUEST_NULL,
		      "%s: I%s: errors %d %d", name, names[op], rc, rc2);
		compare(&b[op], op, "nonblocking", name, 0);
	}

	/* All five outstanding at once, round 1, completed by Waitsome. */
	MPI_Request q[NOPS];
	for (int op = 0; op < NOPS; op++) {
		fill(&b[op], me, 1);
		reference(op, &b[op], comm);
	}
	for (int op = 0; op < NOPS; op++)
		run(op, &b[op], comm, 0, &q[op]);
	int left = NOPS, idx[NOPS], n;
	while (left > 0) {
		MPI_Waitsome(NOPS, q, &n, idx, MPI_STATUSES_IGNORE);
		if (n == MPI_UNDEFINED || n < 1)
			break;
		left -= n;
	}
	CHECK(left == 0, "%s: Waitsome left %d", name, left);
	for (int op = 0; op < NOPS; op++)
		compare(&b[op], op, "outstanding", name, 1);

#if MPI_VERSION >= 4
	/* Persistent: made once, started three times with new data, all five
	 * at once, completed by Testall and then Waitall. */
	for (int op = 0; op < NOPS; op++)
		run(op, &b[op], comm, 1, &q[op]);
	for (int t = 2; t < 5; t++) {
		for (int op = 0; op < NOPS; op++) {
			fill(&b[op], me, t);
			reference(op, &b[op], comm);
			if (op == 4)
				for (int k = 0; k < (nout > 0 ? nout : 1); k++)
					b[op].sc[k] = 1;
		}
		MPI_Startall(NOPS, q);
		int flag = 0;
		if (t == 3)
			while (!flag)
				MPI_Testall(NOPS, q, &flag, MPI_STATUSES_IGNORE);
		else
			MPI_Waitall(NOPS, q, MPI_STATUSES_IGNORE);
		for (int op = 0; op < NOPS; op++) {
			compare(&b[op], op, "persistent", name, t);
			CHECK(q[op] != MPI_REQUEST_NULL, "%s: persistent %s freed by its wait",
			      name, names[op]);
		}
	}
	for (int op = 0; op < NOPS; op++)
		MPI_Request_free(&q[op]);
#endif
	for (int op = 0; op < NOPS; op++)
		release(&b[op]);
}

static void grid(MPI_Comm base, int ndims, const int *periods, const char *name)
{
	int dims[3] = {0, 0, 0}, p;
	MPI_Comm_size(base, &p);
	MPI_Dims_create(p, ndims, dims);
#ifndef TCMPI
	/* A periodic side of 1 or 2 ranks, where a rank's two neighbours
	 * along it are one rank: Open MPI 4 was seen to order the blocks of
	 * its nonblocking alltoall there otherwise than its blocking one's
	 * (block k to neighbour k, the block sent towards -1 arriving as the
	 * one from +1, as the layer's blocking and nonblocking calls both
	 * do), so the comparison is the layer's alone. */
	for (int d = 0; d < ndims; d++)
		if (periods[d] && dims[d] < 3)
			return;
#endif
	MPI_Comm g;
	MPI_Cart_create(base, ndims, dims, periods, 0, &g);
	on(g, name);
	MPI_Comm_free(&g);
}

/* The ring with every edge given twice (MPI_Graph_create). */
static void ring_graph(void)
{
	int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 4 * (size_t)size);
	for (int r = 0; r < size; r++) {
		index[r] = 4 * (r + 1);
		edges[4 * r] = edges[4 * r + 2] = (r + 1) % size;
		edges[4 * r + 1] = edges[4 * r + 3] = (r + size - 1) % size;
	}
	MPI_Comm g;
	MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
	on(g, "ring graph");
	MPI_Comm_free(&g);
	free(index);
	free(edges);
}

/* A directed distributed graph: three destinations ahead (rank + 1, + 2,
 * + 3), so three sources behind. */
static void dist_graph(void)
{
	int src[3], dst[3];
	for (int k = 0; k < 3; k++) {
		src[k] = (rank + 3 * size - 1 - k) % size;
		dst[k] = (rank + 1 + k) % size;
	}
	MPI_Comm g;
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, src, MPI_UNWEIGHTED, 3, dst,
	                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
	on(g, "distributed graph");
	MPI_Comm_free(&g);
}

/* A graph on MPI_COMM_SELF: the rank its own neighbour three times. */
static void self_graph(void)
{
	int index[1] = {3}, edges[3] = {0, 0, 0};
	MPI_Comm g;
	MPI_Graph_create(MPI_COMM_SELF, 1, index, edges, 0, &g);
	on(g, "self graph");
	MPI_Comm_free(&g);
}

static void errors(void)
{
	int periods[1] = {1}, dims[1] = {size}, v[8] = {0};
	MPI_Comm g;
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &g);
	MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
	MPI_Request q = MPI_REQUEST_NULL;
	int rc;
#ifdef TCMPI /* Open MPI 4 gives MPI_ERR_ARG */
	rc = MPI_Ineighbor_allgather(v, 1, MPI_INT, v + 2, 1, MPI_INT, MPI_COMM_WORLD, &q);
	CHECK(rc == MPI_ERR_TOPOLOGY, "Ineighbor_allgather on a communicator without a topology: %d", rc);
#endif
	rc = MPI_Ineighbor_alltoall(v, -1, MPI_INT, v + 2, 1, MPI_INT, g, &q);
	CHECK(rc == MPI_ERR_COUNT, "Ineighbor_alltoall of a negative count: %d", rc);
	int c[2] = {1, 1};
	MPI_Aint d[2] = {0, sizeof(int)};
	MPI_Datatype t[2] = {MPI_INT, MPI_DATATYPE_NULL};
	rc = MPI_Ineighbor_alltoallw(v, c, d, t, v + 4, c, d, t, g, &q);
	CHECK(rc == MPI_ERR_TYPE, "Ineighbor_alltoallw of MPI_DATATYPE_NULL: %d", rc);
#if MPI_VERSION >= 4
	rc = MPI_Neighbor_alltoallw_init(v, c, d, t, v + 4, c, d, t, g, MPI_INFO_NULL, &q);
	CHECK(rc == MPI_ERR_TYPE, "Neighbor_alltoallw_init of MPI_DATATYPE_NULL: %d", rc);
#endif
	CHECK(q == MPI_REQUEST_NULL, "a failed call left a request");
#ifdef TCMPI
	rc = MPI_Ineighbor_allgather(v, 1, MPI_INT, v + 2, 1, MPI_INT, g, NULL);
	CHECK(rc == MPI_ERR_REQUEST, "Ineighbor_allgather with NULL request: %d", rc);
	/* MPI makes the cancel of a collective's request erroneous. */
	rc = MPI_Ineighbor_allgather(v, 1, MPI_INT, v + 2, 1, MPI_INT, g, &q);
	int rc2 = MPI_Cancel(&q);
	CHECK(rc == MPI_SUCCESS && rc2 == MPI_ERR_REQUEST, "Cancel of an Ineighbor request: %d", rc2);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	/* A persistent request whose communicator is gone: refused. */
	MPI_Neighbor_alltoall_init(v, 1, MPI_INT, v + 2, 1, MPI_INT, g, MPI_INFO_NULL, &q);
	MPI_Comm_free(&g);
	rc = MPI_Start(&q);
	CHECK(rc == MPI_ERR_COMM, "Start with the communicator freed: %d", rc);
	MPI_Request_free(&q);
#else
	MPI_Comm_free(&g);
#endif
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Type_vector(B, 1, 2, MPI_INT, &strided);
	MPI_Type_commit(&strided);

	const int per1[1] = {1}, mixed[2] = {1, 0}, none[3] = {0, 0, 0};
	grid(MPI_COMM_WORLD, 1, per1, "ring grid");
	grid(MPI_COMM_WORLD, 2, mixed, "2-D grid, periodic rows");
	grid(MPI_COMM_WORLD, 3, none, "3-D mesh");
	grid(MPI_COMM_SELF, 1, per1, "MPI_COMM_SELF's grid");
	ring_graph();
	dist_graph();
	self_graph();
	errors();

	MPI_Type_free(&strided);
	MPI_Finalize();
	if (rank == 0 && !fails)
		printf("mpi_ineighbor: p = %d: ok\n", size);
	return fails != 0;
}
