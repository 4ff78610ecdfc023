/* SPDX-License-Identifier: MIT */
/*
 * mpi_graph.c - graph topologies and their neighbourhood collectives:
 * MPI_Graph_create of a ring with every edge given twice (the whole graph
 * back from MPI_Graphdims_get, MPI_Graph_get, MPI_Graph_neighbors_count and
 * MPI_Graph_neighbors, MPI_Topo_test, MPI_Graph_map, the ranks beyond
 * nnodes left out); MPI_Dist_graph_create_adjacent of a directed graph with
 * weights (two destinations ahead, two sources behind) and
 * MPI_Dist_graph_create with every edge given by one rank and by its
 * head's next rank; one on MPI_COMM_SELF whose rank is its own neighbour
 * three times; their neighbours and weights, kept by MPI_Comm_dup;
 * MPI_Neighbor_alltoall, allgather, alltoallv and allgatherv on each,
 * every block checked against what its source sent to this rank (for the
 * k-th edge between two ranks, the k-th block between them); the errors
 * of a bad edge, a bad rank and a query of the other kind of graph under
 * MPI_ERRORS_RETURN.  Exit status 0 when all hold; each failure printed.
 * Written against MPI alone: but for its errors and MPI_Graph_map's
 * MPI_UNDEFINED under TCMPI, it runs the same under Open MPI (the order of
 * a distributed graph's neighbours made by MPI_Dist_graph_create is MPI's
 * to choose: the test reads it).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define B 2 /* elements per block */

/* Element e of the o-th block rank s sends to rank d. */
static int val(int s, int d, int o, int e)
{
	return s * 1000000 + d * 10000 + o * 100 + e;
}

/* The occurrence of x among a[0..i). */
static int occ(const int *a, int i, int x)
{
	int o = 0;
	for (int j = 0; j < i; j++)
		o += a[j] == x;
	return o;
}

/* The four neighbourhood collectives on comm, whose rank me has sources
 * in[0..ni) and destinations out[0..no). */
static void exchange(MPI_Comm comm, int me, const int *in, int ni, const int *out, int no,
                     const char *name)
{
	int *sb = malloc((size_t)(no * B + B) * sizeof *sb);
	int *rb = malloc((size_t)(ni * (B + 2) + 1) * sizeof *rb);
	int *sc = malloc((size_t)(no + 1) * sizeof *sc), *sd = malloc((size_t)(no + 1) * sizeof *sd);
	int *rc = malloc((size_t)(ni + 1) * sizeof *rc), *rd = malloc((size_t)(ni + 1) * sizeof *rd);
	for (int j = 0; j < no; j++)
		for (int e = 0; e < B; e++)
			sb[j * B + e] = val(me, out[j], occ(out, j, out[j]), e);
	memset(rb, 0xff, (size_t)(ni * (B + 2) + 1) * sizeof *rb);
	MPI_Neighbor_alltoall(sb, B, MPI_INT, rb, B, MPI_INT, comm);
	for (int i = 0; i < ni; i++)
		for (int e = 0; e < B; e++) {
			const int want = val(in[i], me, occ(in, i, in[i]), e);
			CHECK(rb[i * B + e] == want, "%s alltoall: block %d [%d] = %d, want %d",
			      name, i, e, rb[i * B + e], want);
		}
	for (int e = 0; e < B; e++)
		sb[e] = val(me, 99, 0, e);
	memset(rb, 0xff, (size_t)(ni * (B + 2) + 1) * sizeof *rb);
	MPI_Neighbor_allgather(sb, B, MPI_INT, rb, B, MPI_INT, comm);
	for (int i = 0; i < ni; i++)
		for (int e = 0; e < B; e++) {
			const int want = val(in[i], 99, 0, e);
			CHECK(rb[i * B + e] == want, "%s allgather: block %d [%d] = %d, want %d",
			      name, i, e, rb[i * B + e], want);
		}
	/* v forms: one element to each destination, B to each source...
	 * both ends agree on an edge's count: 1 + (the edge's occurrence)
	 * % B; received blocks from the end, with a gap after each. */
	int at = 0;
	for (int j = 0; j < no; j++) {
		const int o = occ(out, j, out[j]);
		sc[j] = 1 + o % B;
		sd[j] = at;
		for (int e = 0; e < sc[j]; e++)
			sb[at + e] = val(me, out[j], o, e);
		at += sc[j];
	}
	at = 0;
	for (int i = ni - 1; i >= 0; i--) {
		rc[i] = 1 + occ(in, i, in[i]) % B;
		rd[i] = at;
		at += rc[i] + 1;
	}
	memset(rb, 0xff, (size_t)(ni * (B + 2) + 1) * sizeof *rb);
	MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm);
	for (int i = 0; i < ni; i++)
		for (int e = 0; e < rc[i]; e++) {
			const int want = val(in[i], me, occ(in, i, in[i]), e);
			CHECK(rb[rd[i] + e] == want, "%s alltoallv: block %d [%d] = %d, want %d",
			      name, i, e, rb[rd[i] + e], want);
		}
	for (int i = 0; i < ni; i++)
		rc[i] = B;
	for (int e = 0; e < B; e++)
		sb[e] = val(me, 98, 0, e);
	memset(rb, 0xff, (size_t)(ni * (B + 2) + 1) * sizeof *rb);
	MPI_Neighbor_allgatherv(sb, B, MPI_INT, rb, rc, rd, MPI_INT, comm);
	for (int i = 0; i < ni; i++)
		for (int e = 0; e < B; e++) {
			const int want = val(in[i], 98, 0, e);
			CHECK(rb[rd[i] + e] == want, "%s allgatherv: block %d [%d] = %d, want %d",
			      name, i, e, rb[rd[i] + e], want);
		}
	free(sb);
	free(rb);
	free(sc);
	free(sd);
	free(rc);
	free(rd);
}

/* A distributed graph's lists, checked against the sources and
 * destinations expected (as multisets; weights w(s, d) where weighted). */
static void dist_check(MPI_Comm g, int me, const int *win, int ni, const int *wout, int no,
                       int weighted, const char *name)
{
	int i_n = -1, o_n = -1, w = -1;
	MPI_Dist_graph_neighbors_count(g, &i_n, &o_n, &w);
	CHECK(i_n == ni && o_n == no && w == weighted, "%s: %d in, %d out, weighted %d", name, i_n,
	      o_n, w);
	if (i_n != ni || o_n != no)
		return;
	int in[8], out[8], inw[8], outw[8], used[8] = {0};
	MPI_Dist_graph_neighbors(g, ni, in, inw, no, out, outw);
	for (int i = 0; i < ni; i++) {
		int found = 0;
		for (int k = 0; k < ni && !found; k++)
			if (!used[k] && win[k] == in[i])
				found = used[k] = 1;
		CHECK(found, "%s: source %d unexpected", name, in[i]);
		if (weighted)
			CHECK(inw[i] == in[i] * 10 + me, "%s: source %d weight %d", name, in[i], inw[i]);
	}
	memset(used, 0, sizeof used);
	for (int j = 0; j < no; j++) {
		int found = 0;
		for (int k = 0; k < no && !found; k++)
			if (!used[k] && wout[k] == out[j])
				found = used[k] = 1;
		CHECK(found, "%s: destination %d unexpected", name, out[j]);
		if (weighted)
			CHECK(outw[j] == me * 10 + out[j], "%s: destination %d weight %d", name,
			      out[j], outw[j]);
	}
	exchange(g, me, in, ni, out, no, name);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const int p = size;

	/* A ring of all ranks but the last (at P > 2), every edge twice:
	 * node r's neighbours r - 1, r + 1, r - 1, r + 1. */
	const int nn = p > 2 ? p - 1 : p;
	int *index = malloc((size_t)nn * sizeof *index), *edges = malloc((size_t)nn * 4 * sizeof *edges);
	for (int r = 0; r < nn; r++) {
		index[r] = 4 * (r + 1);
		for (int k = 0; k < 4; k++)
			edges[4 * r + k] = k % 2 ? (r + 1) % nn : (r + nn - 1) % nn;
	}
	MPI_Comm gc;
	MPI_Graph_create(MPI_COMM_WORLD, nn, index, edges, 1, &gc);
	int newrank = -2;
	MPI_Graph_map(MPI_COMM_WORLD, nn, index, edges, &newrank);
#ifdef TCMPI /* Open MPI 4.1 gives the ranks beyond the graph their own rank */
	CHECK(newrank == (rank < nn ? rank : MPI_UNDEFINED), "Graph_map: %d", newrank);
#endif
	if (rank >= nn) {
		CHECK(gc == MPI_COMM_NULL, "a rank beyond nnodes: not MPI_COMM_NULL");
	} else {
		int st = -1, nodes = -1, ne = -1;
		MPI_Topo_test(gc, &st);
		CHECK(st == MPI_GRAPH, "Topo_test: %d, want MPI_GRAPH", st);
		MPI_Graphdims_get(gc, &nodes, &ne);
		CHECK(nodes == nn && ne == 4 * nn, "Graphdims_get: %d nodes %d edges", nodes, ne);
		int *gi = malloc((size_t)nn * sizeof *gi), *ge = malloc((size_t)nn * 4 * sizeof *ge);
		MPI_Graph_get(gc, nn, 4 * nn, gi, ge);
		CHECK(!memcmp(gi, index, (size_t)nn * sizeof *gi) &&
		              !memcmp(ge, edges, (size_t)nn * 4 * sizeof *ge),
		      "Graph_get differs");
		for (int r = 0; r < nn; r++) {
			int cnt = -1, nb[4];
			MPI_Graph_neighbors_count(gc, r, &cnt);
			MPI_Graph_neighbors(gc, r, 4, nb);
			CHECK(cnt == 4 && !memcmp(nb, edges + 4 * r, sizeof nb),
			      "node %d: %d neighbours", r, cnt);
		}
		exchange(gc, rank, edges + 4 * rank, 4, edges + 4 * rank, 4, "graph ring");
		free(gi);
		free(ge);
		MPI_Comm_free(&gc);
	}

	/* A directed graph: to r + 1 and r + 2, from r - 1 and r - 2,
	 * weights 10 s + d. */
	int src[2] = {(rank + p - 1) % p, (rank + p - 2) % p},
	    dst[2] = {(rank + 1) % p, (rank + 2) % p};
	int sw[2] = {src[0] * 10 + rank, src[1] * 10 + rank},
	    dw[2] = {rank * 10 + dst[0], rank * 10 + dst[1]};
	MPI_Comm dg, dd;
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &dg);
	int st = -1;
	MPI_Topo_test(dg, &st);
	CHECK(st == MPI_DIST_GRAPH, "Topo_test: %d, want MPI_DIST_GRAPH", st);
	dist_check(dg, rank, src, 2, dst, 2, 1, "adjacent");
	MPI_Comm_dup(dg, &dd);
	dist_check(dd, rank, src, 2, dst, 2, 1, "adjacent's duplicate");
	MPI_Comm_free(&dd);
	MPI_Comm_free(&dg);

	/* The same graph by MPI_Dist_graph_create, unweighted: rank 0 gives
	 * every edge to r + 1, every rank its next rank's edge to r + 3. */
	int *nodes = malloc((size_t)(p + 1) * sizeof *nodes),
	    *deg = malloc((size_t)(p + 1) * sizeof *deg);
	int *tg = malloc((size_t)(p + 1) * sizeof *tg);
	int n = 0;
	if (rank == 0)
		for (int r = 0; r < p; r++, n++) {
			nodes[n] = r;
			deg[n] = 1;
			tg[n] = (r + 1) % p;
		}
	nodes[n] = (rank + 1) % p;
	deg[n] = 1;
	tg[n] = (rank + 4) % p;
	n++;
	MPI_Dist_graph_create(MPI_COMM_WORLD, n, nodes, deg, tg, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
	int win[2] = {(rank + p - 1) % p, ((rank - 3) % p + p) % p},
	    wout[2] = {(rank + 1) % p, (rank + 3) % p};
	dist_check(dg, rank, win, 2, wout, 2, 0, "dist graph");
	MPI_Comm_free(&dg);

	/* A distributed graph on MPI_COMM_SELF, the rank its own neighbour
	 * three times: the k-th edge out meets the k-th edge in. */
	int self3[3] = {0, 0, 0};
	MPI_Dist_graph_create_adjacent(MPI_COMM_SELF, 3, self3, MPI_UNWEIGHTED, 3, self3,
	                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
	int sme;
	MPI_Comm_rank(dg, &sme);
	dist_check(dg, sme, self3, 3, self3, 3, 0, "self");
	MPI_Comm_free(&dg);

	/* Errors, returned (MPI leaves them erroneous: under TCMPI). */
#ifdef TCMPI
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int cls = -1, e = MPI_SUCCESS;
	MPI_Comm bad = MPI_COMM_NULL;
	edges[0] = nn;
	e = MPI_Graph_create(MPI_COMM_WORLD, nn, index, edges, 0, &bad);
	MPI_Error_class(e, &cls);
	CHECK(cls == MPI_ERR_ARG, "an edge to node %d of %d: class %d", nn, nn, cls);
	src[0] = p;
	e = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 0, dst,
	                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad);
	MPI_Error_class(e, &cls);
	CHECK(cls == MPI_ERR_RANK, "a source of rank %d: class %d", p, cls);
	MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, src, MPI_UNWEIGHTED, 0, dst,
	                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg);
	MPI_Comm_set_errhandler(dg, MPI_ERRORS_RETURN);
	int cnt = 0;
	e = MPI_Graph_neighbors_count(dg, 0, &cnt);
	MPI_Error_class(e, &cls);
	CHECK(cls == MPI_ERR_TOPOLOGY, "Graph_neighbors_count of a distributed graph: class %d", cls);
	MPI_Comm_free(&dg);
#endif
	free(index);
	free(edges);
	free(nodes);
	free(deg);
	free(tg);

	int all = 0;
	MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_graph: p = %d: %s\n", size, all ? "FAILED" : "ok");
	MPI_Finalize();
	return all != 0;
}
