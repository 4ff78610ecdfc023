/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_graph.c - graph topologies: MPI_Graph_create and its
 * queries (MPI_Graphdims_get, MPI_Graph_get, MPI_Graph_neighbors_count,
 * MPI_Graph_neighbors, MPI_Graph_map), MPI_Dist_graph_create,
 * MPI_Dist_graph_create_adjacent and theirs (MPI_Dist_graph_neighbors_count,
 * MPI_Dist_graph_neighbors).
 *
 * topocoll's topologies are regular families (rings, meshes, tori,
 * hypercubes, trees, the complete graph), so a graph communicator keeps its
 * old communicator's topology: MPI_Graph_create takes the old
 * communicator's first nnodes ranks in their order (a split, reorder
 * ignored; the others get MPI_COMM_NULL), the distributed graphs all its
 * ranks (a duplicate), and the graph itself is the list of each rank's
 * neighbours that the queries return and the neighbourhood collectives
 * (shim_neighbor.c) exchange with, each message routed over the old
 * topology as any message between those ranks is.  The graph's arguments
 * are checked on each rank before the communicator is made: ranks giving
 * the same bad arguments all return the error.
 *
 * MPI_Dist_graph_create's edges may be given by any rank: they are sent to
 * both their ends (an alltoall of counts and an alltoallv of the edges over
 * the old team, not counted as the program's collectives), and each rank
 * lists its neighbours in the order they arrive, by the giving rank and
 * then in its order.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY (mpi.h): only their addresses
 * count. */
int tcmpi_unweighted[1], tcmpi_weights_empty[1];

void tcmpi__graph_free(struct tcmpi__graph *g)
{
	if (!g)
		return;
	free(g->in);
	free(g->out);
	free(g->inw);
	free(g->outw);
	free(g->index);
	free(g->edges);
	free(g);
}

/* A copy of n ints (at least one allocated), NULL when out of memory;
 * a NULL a gives n zeros. */
static int *ints(const int *a, int n)
{
	int *b = calloc((size_t)(n > 0 ? n : 1), sizeof *b);
	if (b && a && n > 0)
		memcpy(b, a, (size_t)n * sizeof *b);
	return b;
}

struct tcmpi__graph *tcmpi__graph_copy(const struct tcmpi__graph *g)
{
	struct tcmpi__graph *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	*h = *g;
	h->in = ints(g->in, g->nin);
	h->out = ints(g->out, g->nout);
	h->inw = g->weighted ? ints(g->inw, g->nin) : NULL;
	h->outw = g->weighted ? ints(g->outw, g->nout) : NULL;
	h->index = g->kind == MPI_GRAPH ? ints(g->index, g->nnodes) : NULL;
	h->edges = g->kind == MPI_GRAPH ? ints(g->edges, g->nedges) : NULL;
	if (!h->in || !h->out || (g->weighted && (!h->inw || !h->outw)) ||
	    (g->kind == MPI_GRAPH && (!h->index || !h->edges))) {
		tcmpi__graph_free(h);
		return NULL;
	}
	return h;
}

static struct tcmpi__graph *graph_new(int kind, int nin, int nout, int weighted)
{
	struct tcmpi__graph *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->kind = kind;
	g->nin = nin;
	g->nout = nout;
	g->weighted = weighted;
	g->in = ints(NULL, nin);
	g->out = ints(NULL, nout);
	if (weighted) {
		g->inw = ints(NULL, nin);
		g->outw = ints(NULL, nout);
	}
	if (!g->in || !g->out || (weighted && (!g->inw || !g->outw))) {
		tcmpi__graph_free(g);
		return NULL;
	}
	return g;
}

/* comm's graph of the given kind in *g, or MPI_ERR_TOPOLOGY. */
static int graph_of(MPI_Comm comm, int kind, const char *fn, const struct tcmpi__graph **g)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, fn, &c);
	if (rc)
		return rc;
	if (!c->graph || c->graph->kind != kind)
		return tcmpi__error(comm, MPI_ERR_TOPOLOGY, fn, "communicator %d has no %s topology",
		                    (int)comm, kind == MPI_GRAPH ? "graph" : "distributed graph");
	*g = c->graph;
	return MPI_SUCCESS;
}

/* The communicator of graph g (taken over): c's ranks in their order, all
 * of them (dup) or the members, as a split; *out MPI_COMM_NULL for the
 * others. */
static int graph_make(struct tcmpi__comm *c, MPI_Comm comm, int dup, int member,
                      struct tcmpi__graph *g, MPI_Comm *out, const char *fn)
{
	*out = MPI_COMM_NULL;
	int rc = MPI_SUCCESS;
	if (c->self) {
		rc = member ? tcmpi__comm_new(c, out, fn) : MPI_SUCCESS;
	} else {
		struct tc_proc *np = NULL;
		const int tcrc = dup ? tc_team_dup(c->proc, &np)
		                     : tc_team_split(c->proc, member ? 0 : TC_UNDEFINED,
		                                     tcmpi__comm_rank(c), NULL, &np);
		rc = tcrc ? tcmpi__tc_error(comm, tcrc, fn) : tcmpi__comm_sub(c, np, out, fn);
	}
	if (rc || *out == MPI_COMM_NULL) {
		tcmpi__graph_free(g);
		return rc;
	}
	tcmpi__comm(*out)->graph = g;
	return MPI_SUCCESS;
}

/* ---------------------------------------------------------------------
 * MPI_Graph_create: every rank gives the whole graph.
 */

/* Checks a graph of nnodes nodes on a communicator of p ranks. */
static int graph_check(MPI_Comm comm, int p, int nnodes, const int index[], const int edges[],
                       const char *fn)
{
	if (nnodes < 0 || nnodes > p)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "nnodes = %d, for a communicator of %d",
		                    nnodes, p);
	if (nnodes > 0 && (!index || (index[nnodes - 1] > 0 && !edges)))
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL index or edges");
	for (int i = 0; i < nnodes; i++)
		if (index[i] < (i ? index[i - 1] : 0))
			return tcmpi__error(comm, MPI_ERR_ARG, fn,
			                    "index[%d] = %d: the indices must not decrease from 0",
			                    i, index[i]);
	for (int e = 0; nnodes > 0 && e < index[nnodes - 1]; e++)
		if (edges[e] < 0 || edges[e] >= nnodes)
			return tcmpi__error(comm, MPI_ERR_ARG, fn,
			                    "edges[%d] = %d is not a node of %d", e, edges[e], nnodes);
	return MPI_SUCCESS;
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph)
{
	(void)reorder; /* the ranks keep their order */
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm_old, __func__, &c);
	if (rc)
		return rc;
	if (!comm_graph)
		return tcmpi__error(comm_old, MPI_ERR_ARG, __func__, "NULL comm_graph");
	if ((rc = graph_check(comm_old, tcmpi__comm_size(c), nnodes, index, edges, __func__)))
		return rc;
	const int me = tcmpi__comm_rank(c), member = me < nnodes;
	const int lo = member && me ? index[me - 1] : 0, hi = member ? index[me] : 0;
	struct tcmpi__graph *g = graph_new(MPI_GRAPH, hi - lo, hi - lo, 0);
	if (g) {
		g->nnodes = nnodes;
		g->nedges = nnodes ? index[nnodes - 1] : 0;
		g->index = ints(index, nnodes);
		g->edges = ints(edges, g->nedges);
	}
	if (!g || !g->index || !g->edges) {
		tcmpi__graph_free(g);
		return tcmpi__error(comm_old, MPI_ERR_NO_MEM, __func__, "out of memory");
	}
	for (int e = lo; e < hi; e++)
		g->in[e - lo] = g->out[e - lo] = edges[e];
	return graph_make(c, comm_old, 0, member, g, comm_graph, __func__);
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm, __func__, &c);
	if (rc)
		return rc;
	if (!newrank)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL newrank");
	if ((rc = graph_check(comm, tcmpi__comm_size(c), nnodes, index, edges, __func__)))
		return rc;
	*newrank = tcmpi__comm_rank(c) < nnodes ? tcmpi__comm_rank(c) : MPI_UNDEFINED;
	return MPI_SUCCESS;
}

int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
	const struct tcmpi__graph *g = NULL;
	int rc = graph_of(comm, MPI_GRAPH, __func__, &g);
	if (rc)
		return rc;
	if (!nnodes || !nedges)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL nnodes or nedges");
	*nnodes = g->nnodes;
	*nedges = g->nedges;
	return MPI_SUCCESS;
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
	const struct tcmpi__graph *g = NULL;
	int rc = graph_of(comm, MPI_GRAPH, __func__, &g);
	if (rc)
		return rc;
	if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && !index) || (maxedges > 0 && !edges))
		return tcmpi__error(comm, MPI_ERR_ARG, __func__,
		                    "maxindex %d, maxedges %d, or NULL", maxindex, maxedges);
	for (int i = 0; i < maxindex && i < g->nnodes; i++)
		index[i] = g->index[i];
	for (int e = 0; e < maxedges && e < g->nedges; e++)
		edges[e] = g->edges[e];
	return MPI_SUCCESS;
}

/* Node rank's neighbours in g: *lo and *hi in g->edges. */
static int node_of(MPI_Comm comm, const struct tcmpi__graph *g, int rank, int *lo, int *hi,
                   const char *fn)
{
	if (rank < 0 || rank >= g->nnodes)
		return tcmpi__error(comm, MPI_ERR_RANK, fn, "rank %d is not a node of %d", rank,
		                    g->nnodes);
	*lo = rank ? g->index[rank - 1] : 0;
	*hi = g->index[rank];
	return MPI_SUCCESS;
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
	const struct tcmpi__graph *g = NULL;
	int rc = graph_of(comm, MPI_GRAPH, __func__, &g), lo, hi;
	if (rc || (rc = node_of(comm, g, rank, &lo, &hi, __func__)))
		return rc;
	if (!nneighbors)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL nneighbors");
	*nneighbors = hi - lo;
	return MPI_SUCCESS;
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
	const struct tcmpi__graph *g = NULL;
	int rc = graph_of(comm, MPI_GRAPH, __func__, &g), lo, hi;
	if (rc || (rc = node_of(comm, g, rank, &lo, &hi, __func__)))
		return rc;
	if (maxneighbors < 0 || (maxneighbors > 0 && !neighbors))
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "maxneighbors %d, or NULL", maxneighbors);
	for (int e = lo; e < hi && e - lo < maxneighbors; e++)
		neighbors[e - lo] = g->edges[e];
	return MPI_SUCCESS;
}

/* ---------------------------------------------------------------------
 * Distributed graphs.
 */

/* Whether weights w (MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY or an array) of n
 * edges are given: 1, 0 (unweighted), or -1 after reporting an error. */
static int weights_check(MPI_Comm comm, const int *w, int n, const char *what, const char *fn)
{
	if (w == MPI_UNWEIGHTED)
		return 0;
	if (w == MPI_WEIGHTS_EMPTY) {
		if (n > 0) {
			(void)tcmpi__error(comm, MPI_ERR_ARG, fn, "MPI_WEIGHTS_EMPTY for %d %s", n, what);
			return -1;
		}
		return 1;
	}
	if (n > 0 && !w) {
		(void)tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL %s weights", what);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (w[i] < 0) {
			(void)tcmpi__error(comm, MPI_ERR_ARG, fn, "%s weight [%d] = %d is negative",
			                   what, i, w[i]);
			return -1;
		}
	return 1;
}

/* Checks n ranks of a communicator of p. */
static int ranks_check(MPI_Comm comm, const int *r, int n, int p, const char *what, const char *fn)
{
	if (n < 0)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "negative %s count %d", what, n);
	if (n > 0 && !r)
		return tcmpi__error(comm, MPI_ERR_ARG, fn, "NULL %s", what);
	for (int i = 0; i < n; i++)
		if (r[i] < 0 || r[i] >= p)
			return tcmpi__error(comm, MPI_ERR_RANK, fn,
			                    "%s[%d] = %d out of range 0..%d", what, i, r[i], p - 1);
	return MPI_SUCCESS;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *comm_dist_graph)
{
	(void)reorder;
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm_old, __func__, &c);
	if (rc)
		return rc;
	if ((rc = tcmpi__info_arg(comm_old, info, __func__)))
		return rc;
	if (!comm_dist_graph)
		return tcmpi__error(comm_old, MPI_ERR_ARG, __func__, "NULL comm_dist_graph");
	const int p = tcmpi__comm_size(c);
	if ((rc = ranks_check(comm_old, sources, indegree, p, "sources", __func__)) ||
	    (rc = ranks_check(comm_old, destinations, outdegree, p, "destinations", __func__)))
		return rc;
	const int wi = weights_check(comm_old, sourceweights, indegree, "source", __func__);
	const int wo =
	        wi < 0 ? -1 : weights_check(comm_old, destweights, outdegree, "destination", __func__);
	if (wi < 0 || wo < 0)
		return MPI_ERR_ARG;
	if (wi != wo)
		return tcmpi__error(comm_old, MPI_ERR_ARG, __func__, "MPI_UNWEIGHTED for one side only");
	struct tcmpi__graph *g = graph_new(MPI_DIST_GRAPH, indegree, outdegree, wi);
	if (!g)
		return tcmpi__error(comm_old, MPI_ERR_NO_MEM, __func__, "out of memory");
	for (int i = 0; i < indegree; i++) {
		g->in[i] = sources[i];
		if (wi)
			g->inw[i] = sourceweights[i];
	}
	for (int i = 0; i < outdegree; i++) {
		g->out[i] = destinations[i];
		if (wo)
			g->outw[i] = destweights[i];
	}
	return graph_make(c, comm_old, 1, 1, g, comm_dist_graph, __func__);
}

/* An edge as sent to one of its ends: the other end, its weight, and
 * whether it leaves (1) or enters (0) the receiving rank. */
struct edge_msg {
	int32_t other, weight, leaves;
};

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int nodes[], const int degrees[],
                          const int targets[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm *comm_dist_graph)
{
	(void)reorder;
	struct tcmpi__comm *c;
	int rc = tcmpi__comm_arg(comm_old, __func__, &c);
	if (rc)
		return rc;
	if ((rc = tcmpi__info_arg(comm_old, info, __func__)))
		return rc;
	if (!comm_dist_graph)
		return tcmpi__error(comm_old, MPI_ERR_ARG, __func__, "NULL comm_dist_graph");
	const int p = tcmpi__comm_size(c);
	if ((rc = ranks_check(comm_old, nodes, n, p, "nodes", __func__)))
		return rc;
	if (n > 0 && !degrees)
		return tcmpi__error(comm_old, MPI_ERR_ARG, __func__, "NULL degrees");
	long long m = 0;
	for (int i = 0; i < n; i++) {
		if (degrees[i] < 0)
			return tcmpi__error(comm_old, MPI_ERR_ARG, __func__, "degrees[%d] = %d", i,
			                    degrees[i]);
		m += degrees[i];
	}
	if (m > (1 << 28))
		return tcmpi__error(comm_old, MPI_ERR_ARG, __func__, "%lld edges", m);
	if ((rc = ranks_check(comm_old, targets, (int)m, p, "targets", __func__)))
		return rc;
	const int w = weights_check(comm_old, weights, (int)m, "edge", __func__);
	if (w < 0)
		return MPI_ERR_ARG;
	/* Each edge to its two ends, by rank: counts, then the edges. */
	size_t *cnt = calloc((size_t)p * 4, sizeof *cnt), *rcnt = cnt + p, *sdsp = rcnt + p,
	       *rdsp = sdsp + p;
	struct edge_msg *sm = calloc((size_t)(2 * m + 1), sizeof *sm), *rm = NULL;
	struct tcmpi__graph *g = NULL;
	int tcrc = 0;
	if (!cnt || !sm) {
		rc = tcmpi__error(comm_old, MPI_ERR_NO_MEM, __func__, "out of memory");
		goto out;
	}
	for (int i = 0, e = 0; i < n; i++)
		for (int d = 0; d < degrees[i]; d++, e++) {
			cnt[nodes[i]]++;
			cnt[targets[e]]++;
		}
	for (int q = 1; q < p; q++)
		sdsp[q] = sdsp[q - 1] + cnt[q - 1];
	/* rdsp, not yet needed: where the next edge to each rank goes. */
	memcpy(rdsp, sdsp, (size_t)p * sizeof *rdsp);
	for (int i = 0, e = 0; i < n; i++)
		for (int d = 0; d < degrees[i]; d++, e++) {
			const int s = nodes[i], t = targets[e], wt = w ? weights[e] : 1;
			sm[rdsp[s]++] = (struct edge_msg){t, wt, 1};
			sm[rdsp[t]++] = (struct edge_msg){s, wt, 0};
		}
	size_t total = 0;
	if (c->self) {
		total = cnt[0];
		rm = sm;
		sm = NULL;
	} else {
		if ((tcrc = tc_alltoall(c->proc, cnt, rcnt, 1, TC_UINT64, NULL)))
			goto out;
		for (int q = 0; q < p; q++) {
			rdsp[q] = total;
			total += rcnt[q];
		}
		rm = calloc(total + 1, sizeof *rm);
		if (!rm) {
			rc = tcmpi__error(comm_old, MPI_ERR_NO_MEM, __func__, "out of memory");
			goto out;
		}
		/* In ints: three a record. */
		for (int q = 0; q < p; q++) {
			cnt[q] *= 3;
			rcnt[q] *= 3;
			sdsp[q] *= 3;
			rdsp[q] *= 3;
		}
		if ((tcrc = tc_alltoallv(c->proc, sm, cnt, sdsp, rm, rcnt, rdsp, TC_INT32, NULL)))
			goto out;
	}
	int nin = 0, nout = 0;
	for (size_t i = 0; i < total; i++)
		rm[i].leaves ? nout++ : nin++;
	if (!(g = graph_new(MPI_DIST_GRAPH, nin, nout, w))) {
		rc = tcmpi__error(comm_old, MPI_ERR_NO_MEM, __func__, "out of memory");
		goto out;
	}
	nin = nout = 0;
	for (size_t i = 0; i < total; i++) {
		if (rm[i].leaves) {
			g->out[nout] = rm[i].other;
			if (w)
				g->outw[nout] = rm[i].weight;
			nout++;
		} else {
			g->in[nin] = rm[i].other;
			if (w)
				g->inw[nin] = rm[i].weight;
			nin++;
		}
	}
	rc = graph_make(c, comm_old, 1, 1, g, comm_dist_graph, __func__);
	g = NULL;
out:
	free(cnt);
	free(sm);
	free(rm);
	tcmpi__graph_free(g);
	if (tcrc)
		rc = tcmpi__tc_error(comm_old, tcrc, __func__);
	return rc;
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
	const struct tcmpi__graph *g = NULL;
	int rc = graph_of(comm, MPI_DIST_GRAPH, __func__, &g);
	if (rc)
		return rc;
	if (!indegree || !outdegree || !weighted)
		return tcmpi__error(comm, MPI_ERR_ARG, __func__, "NULL argument");
	*indegree = g->nin;
	*outdegree = g->nout;
	*weighted = g->weighted;
	return MPI_SUCCESS;
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[])
{
	const struct tcmpi__graph *g = NULL;
	int rc = graph_of(comm, MPI_DIST_GRAPH, __func__, &g);
	if (rc)
		return rc;
	if (maxindegree < 0 || maxoutdegree < 0 || (maxindegree > 0 && !sources) ||
	    (maxoutdegree > 0 && !destinations))
		return tcmpi__error(comm, MPI_ERR_ARG, __func__,
		                    "maxindegree %d, maxoutdegree %d, or NULL", maxindegree,
		                    maxoutdegree);
	const int win = g->weighted && sourceweights && sourceweights != MPI_UNWEIGHTED &&
	                sourceweights != MPI_WEIGHTS_EMPTY;
	const int wout = g->weighted && destweights && destweights != MPI_UNWEIGHTED &&
	                 destweights != MPI_WEIGHTS_EMPTY;
	for (int i = 0; i < maxindegree && i < g->nin; i++) {
		sources[i] = g->in[i];
		if (win)
			sourceweights[i] = g->inw[i];
	}
	for (int i = 0; i < maxoutdegree && i < g->nout; i++) {
		destinations[i] = g->out[i];
		if (wout)
			destweights[i] = g->outw[i];
	}
	return MPI_SUCCESS;
}
