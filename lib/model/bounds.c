/* SPDX-License-Identifier: MIT */
/*
 * lib/model/bounds.c - lower bounds of [KKA-I] (lemmas 1, 2, 4, 5, 7, 8).
 *
 * The bounds need a few graph quantities (node and link counts, degrees,
 * diameter, eccentricity, sums of distances).  They are computed here in
 * closed form from the topology kind and its dims, without building a graph:
 * a mesh is the Cartesian product of chains, a torus of rings and Q_d of d
 * two-node chains, and in a product graph node counts multiply while
 * degrees, distances and eccentricities add up over the factors.  For a
 * factor of size z inside N nodes, its links appear N/z times, its distance
 * sum from one node N/z times and its all-pairs distance sum (N/z)^2 times.
 *
 * See include/topocoll/cost.h for the formulas of every bound.
 */
#include "topocoll/cost.h"
#include "topocoll/error.h"

#include <stddef.h>

#include "base/error_detail.h"

/* One factor of a product graph: a chain or a ring of z nodes, and the
 * coordinate a of the root in it (a < 0: no root). */
struct factor {
	long links; /* links of the factor */
	int deg_min, deg_max, deg_root;
	long diam, exc;      /* exc(a), or the radius for a < 0 */
	long long dist_root; /* sum_x dist(a, x), or its minimum over a */
	long long dist_all;  /* sum_{x,y} dist(x, y) */
};

static long long chain_dist(long long z, long long a)
{
	return a * (a + 1) / 2 + (z - 1 - a) * (z - a) / 2;
}

static void chain_factor(long z, long a, struct factor *f)
{
	f->links = z - 1;
	f->deg_max = z >= 3 ? 2 : (int)(z - 1);
	f->deg_min = z >= 2 ? 1 : 0;
	if (a < 0)
		f->deg_root = f->deg_max;
	else
		f->deg_root = z == 1 ? 0 : (a == 0 || a == z - 1) ? 1 : 2;
	f->diam = z - 1;
	if (a < 0) {
		f->exc = z / 2;
		f->dist_root = chain_dist(z, (z - 1) / 2); /* the median */
	} else {
		f->exc = a > z - 1 - a ? a : z - 1 - a;
		f->dist_root = chain_dist(z, a);
	}
	f->dist_all = ((long long)z * z * z - z) / 3;
}

static void ring_factor(long z, struct factor *f)
{
	f->links = z >= 3 ? z : z - 1; /* a 2-node ring has one link (topo.h) */
	f->deg_max = f->deg_min = f->deg_root = z >= 3 ? 2 : (int)(z - 1);
	f->diam = f->exc = z / 2;
	f->dist_root = (long long)z * z / 4;
	f->dist_all = (long long)z * f->dist_root;
}

/* Folds factor f of size z into the product graph g of n nodes. */
static void add_factor(struct tc_lb_graph *g, long n, long z, const struct factor *f)
{
	long long k = n / z;
	g->links += f->links * k;
	g->min_degree += f->deg_min;
	g->max_degree += f->deg_max;
	g->root_degree += f->deg_root;
	g->diameter += f->diam;
	g->exc += f->exc;
	g->dist_root += k * f->dist_root;
	g->dist_all += k * k * f->dist_all;
}

static int single_size(int ndims, const int *dims, long *p)
{
	if (ndims != 1 || dims[0] < 1 || dims[0] > TC_TOPO_MAX_NODES)
		return TC_ETOPO;
	*p = dims[0];
	return 0;
}

int tc_lb_graph_metrics(enum tc_topo_kind kind, int ndims, const int *dims, int root,
                        struct tc_lb_graph *out)
{
	tc__clear_detail();
	if (dims == NULL || out == NULL)
		return TC_EINVAL;
	struct tc_lb_graph g = {0};
	struct factor f;
	long p = 0;
	int rc;

	switch (kind) {
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
	case TC_TOPO_RING:
	case TC_TOPO_CHAIN: {
		int nd = ndims;
		if (kind == TC_TOPO_RING || kind == TC_TOPO_CHAIN) {
			if ((rc = single_size(ndims, dims, &p)) != 0)
				return rc;
		} else if (ndims < 1 || ndims > TC_TOPO_MAX_DIMS) {
			return TC_ETOPO;
		}
		long n = 1;
		for (int i = 0; i < nd; i++) {
			if (dims[i] < 1)
				return TC_ETOPO;
			n *= dims[i];
			if (n > TC_TOPO_MAX_NODES)
				return TC_ETOPO;
		}
		if (root >= n)
			return TC_EROOT;
		long coord[TC_TOPO_MAX_DIMS];
		long r = root;
		for (int i = nd - 1; i >= 0; i--) {
			coord[i] = root < 0 ? -1 : r % dims[i];
			r /= dims[i];
		}
		int torus = kind == TC_TOPO_TORUS || kind == TC_TOPO_RING;
		g.nodes = n;
		for (int i = 0; i < nd; i++) {
			if (torus)
				ring_factor(dims[i], &f);
			else
				chain_factor(dims[i], coord[i], &f);
			add_factor(&g, n, dims[i], &f);
		}
		break;
	}
	case TC_TOPO_HYPERCUBE: {
		if (ndims != 1 || dims[0] < 0 || (1L << (dims[0] < 30 ? dims[0] : 30)) > TC_TOPO_MAX_NODES)
			return TC_ETOPO;
		long n = 1L << dims[0];
		if (root >= n)
			return TC_EROOT;
		g.nodes = n;
		chain_factor(2, root < 0 ? -1 : 0, &f); /* vertex-symmetric */
		for (int i = 0; i < dims[0]; i++)
			add_factor(&g, n, 2, &f);
		break;
	}
	case TC_TOPO_COMPLETE:
		if ((rc = single_size(ndims, dims, &p)) != 0)
			return rc;
		if (root >= p)
			return TC_EROOT;
		g.nodes = p;
		g.links = (long long)p * (p - 1) / 2;
		g.min_degree = g.max_degree = g.root_degree = (int)(p - 1);
		g.diameter = g.exc = p >= 2 ? 1 : 0;
		g.dist_root = p - 1;
		g.dist_all = (long long)p * (p - 1);
		break;
	case TC_TOPO_STAR:
		if ((rc = single_size(ndims, dims, &p)) != 0)
			return rc;
		if (root >= p)
			return TC_EROOT;
		g.nodes = p;
		g.links = p - 1;
		g.max_degree = (int)(p - 1);
		g.min_degree = p >= 2 ? 1 : 0;
		g.diameter = p >= 3 ? 2 : p - 1;
		if (root <= 0) { /* the hub, or no root: the hub is the best */
			g.root_degree = g.max_degree;
			g.exc = p >= 2 ? 1 : 0;
			g.dist_root = p - 1;
		} else {
			g.root_degree = 1;
			g.exc = p >= 3 ? 2 : 1;
			g.dist_root = 1 + 2LL * (p - 2);
		}
		g.dist_all = 2LL * (p - 1) * (p - 1);
		break;
	case TC_TOPO_TREE:
		return TC_ENOTSUP;
	default:
		return TC_EINVAL;
	}
	*out = g;
	return 0;
}

long tc_cost_eccentricity(enum tc_topo_kind kind, int ndims, const int *dims, int root)
{
	struct tc_lb_graph g;
	if (tc_lb_graph_metrics(kind, ndims, dims, root, &g) != 0)
		return -1;
	return g.exc;
}

/* Smallest k with base^k >= x (0 for x <= 1); base >= 2. */
static long ceil_log_base(long long x, long long base)
{
	long k = 0;
	long long v = 1;
	while (v < x) {
		/* v * base >= x exactly when v >= ceil(x / base); never overflows. */
		v = v >= x / base + (x % base != 0) ? x : v * base;
		k++;
	}
	return k;
}

static long long ceil_div(long long a, long long b)
{
	return (a + b - 1) / b;
}

/* What both bounds check and measure first: the arguments, the graph's
 * metrics (from the root for the rooted collectives), and the trivial team.
 * Returns 0 with *g filled, 1 when *out is set already (one node: every
 * bound 0), or a TC_E* code. */
static int tc__lb_start(enum tc_lb_coll c, enum tc_topo_kind kind, int ndims, const int *dims,
                        int root, double m, const struct tc_model *md, struct tc_lower_bound *out,
                        struct tc_lb_graph *g)
{
	if (md == NULL || out == NULL || dims == NULL || !(m >= 0.0))
		return TC_EINVAL;
	if (c != TC_LB_OAB && c != TC_LB_AAB && c != TC_LB_OAS && c != TC_LB_AAS)
		return TC_ENOTSUP;
	int rooted = c == TC_LB_OAB || c == TC_LB_OAS;
	int rc = tc_lb_graph_metrics(kind, ndims, dims, rooted ? root : -1, g);
	if (rc != 0)
		return rc;
	if (g->nodes <= 1) {
		*out = (struct tc_lower_bound){0, 0, 0, 0.0};
		return 1;
	}
	return 0;
}

static long long llmax(long long a, long long b)
{
	return a > b ? a : b;
}

int tc_lower_bound_root(enum tc_lb_coll c, enum tc_topo_kind kind, int ndims, const int *dims,
                        int root, double m, const struct tc_model *md, struct tc_lower_bound *out)
{
	tc__clear_detail();
	struct tc_lb_graph g;
	int rc = tc__lb_start(c, kind, ndims, dims, root, m, md, out, &g);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	struct tc_lower_bound b = {0, 0, 0, 0.0};
	long long n = g.nodes;
	int one = md->ports == TC_PORTS_ONE;
	int wh = md->switching == TC_SWITCH_CT;
	long long d_grow = one ? 1 : g.max_degree;
	long long d_root = one ? 1 : g.root_degree;
	long long d_recv = one ? 1 : g.min_degree;
	double unit = md->ts_ns + m * md->tw_ns;
	double th = wh ? md->th_ns : 0.0;
	long log_grow = ceil_log_base(n, d_grow + 1);
	/* OAB steps: Lemma 2 (SF) adds the eccentricity, Lemma 4 (WH) does not. */
	long long rho_oab = wh ? log_grow : llmax(g.exc, log_grow);

	switch (c) {
	case TC_LB_OAB: /* Lemmas 2 and 4 */
		b.steps = (long)rho_oab;
		b.work = n - 1;
		b.path = g.exc;
		b.time_ns = (double)b.steps * unit + (double)b.path * th;
		break;
	case TC_LB_OAS: {
		long long k = ceil_div(n - 1, d_root);
		b.work = g.dist_root;
		if (md->combining) { /* Lemma 8 */
			b.steps = (long)rho_oab;
			b.path = g.exc;
			b.time_ns = (double)b.steps * md->ts_ns + (double)k * m * md->tw_ns +
			            (double)b.path * th;
		} else { /* Lemma 7 */
			b.steps = (long)(wh ? k : llmax(k, g.exc));
			b.path = llmax(g.exc, k);
			b.time_ns = (double)b.steps * unit + (double)b.path * th;
		}
		break;
	}
	case TC_LB_AAB:
	case TC_LB_AAS: { /* Lemma 1's counting arguments on G */
		long long arcs = md->duplex == TC_DUPLEX_FULL ? 2 * g.links : g.links;
		long long cap = wh ? arcs : (one && n < arcs ? n : arcs);
		long long k = ceil_div(n - 1, d_recv);
		b.work = c == TC_LB_AAB ? n * (n - 1) : g.dist_all;
		b.path = g.diameter;
		if (md->combining) {
			double w = (double)b.work / (double)cap;
			if (w < (double)k)
				w = (double)k;
			b.steps = (long)(wh ? log_grow : llmax(log_grow, g.diameter));
			b.time_ns = (double)b.steps * md->ts_ns + w * m * md->tw_ns + (double)b.path * th;
		} else {
			long long s = llmax(k, ceil_div(b.work, cap));
			if (!wh)
				s = llmax(s, g.diameter);
			b.steps = (long)s;
			b.time_ns = (double)b.steps * unit + (double)b.path * th;
		}
		break;
	}
	}
	*out = b;
	return 0;
}

int tc_lower_bound(enum tc_lb_coll c, enum tc_topo_kind kind, int ndims, const int *dims, double m,
                   const struct tc_model *md, struct tc_lower_bound *out)
{
	tc__clear_detail();
	return tc_lower_bound_root(c, kind, ndims, dims, -1, m, md, out);
}

/*
 * The bound of every packetisation (cost.h): under the logical clock a
 * message of b bytes over l links arrives no earlier than l (t_s + b t_w)
 * (SF) or t_s + b t_w + l t_h (CT) after its start, a one-port node takes
 * its receives (and its sends) one after the other, each holding the port
 * L(b) = t_s + b t_w, and an all-port node has one such resource per link.
 * Three arguments follow, each holding whatever an algorithm cuts its data
 * into:
 *   lat:  a node reaches (or hears from) at most d_grow + 1 times more nodes
 *         per t_s, so ceil(log_{d_grow+1} N) t_s;
 *   dist: the E links between the two farthest nodes that must talk are
 *         crossed by every byte of the m the far one needs from the other;
 *         every message carrying them into that node starts after (E - l)
 *         t_s (SF) or (E - l) t_h (CT), l its links, and they share its r
 *         receive resources: E t_s + (m / r) t_w (SF) or t_s + (m / r) t_w
 *         + E t_h (CT);
 *   vol:  the bytes one port must carry: t_s + (V / r) t_w.
 */
int tc_lower_bound_any(enum tc_lb_coll c, enum tc_topo_kind kind, int ndims, const int *dims,
                       int root, double m, const struct tc_model *md, struct tc_lower_bound *out)
{
	tc__clear_detail();
	struct tc_lb_graph g;
	int rc = tc__lb_start(c, kind, ndims, dims, root, m, md, out, &g);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	int rooted = c == TC_LB_OAB || c == TC_LB_OAS;
	struct tc_lower_bound b = {0, 0, 0, 0.0};
	long long n = g.nodes;
	int one = md->ports == TC_PORTS_ONE;
	int wh = md->switching == TC_SWITCH_CT;
	double r = one ? 1.0 : (double)g.max_degree;
	double r_root = one ? 1.0 : (double)(g.root_degree > 0 ? g.root_degree : 1);
	long lat = ceil_log_base(n, (one ? 1 : g.max_degree) + 1);
	/* The farthest pair that must exchange data: the root's eccentricity
	 * (the radius without a root) for OAB and OAS, the diameter when every
	 * node needs every other's data. */
	long e = rooted ? g.exc : g.diameter;
	double dist = wh ? md->ts_ns + m / r * md->tw_ns + (double)e * md->th_ns
	                 : (double)e * md->ts_ns + m / r * md->tw_ns;
	/* Bytes one port carries: OAB a whole message; OAS the root's p - 1
	 * blocks; AAS and a gathering AAB the p - 1 blocks every node receives;
	 * a reducing AAB (reduce_scatter) the p - 1 contributions every node
	 * sends (each carries its data for p - 1 blocks, combined or not). */
	double v;
	switch (c) {
	case TC_LB_OAB:
		v = m / r;
		break;
	case TC_LB_OAS:
		v = (double)(n - 1) * m / r_root;
		break;
	default:
		v = (double)(n - 1) * m / r;
		break;
	}
	double vol = md->ts_ns + v * md->tw_ns;
	b.steps = wh || lat > e ? lat : e;
	b.work = 0;
	b.path = e;
	b.time_ns = (double)lat * md->ts_ns;
	if (dist > b.time_ns)
		b.time_ns = dist;
	if (vol > b.time_ns)
		b.time_ns = vol;
	*out = b;
	return 0;
}

int tc_lower_bound_multicast(long nmembers, int ports, long exc_m, double m,
                             const struct tc_model *md, struct tc_lower_bound *out)
{
	tc__clear_detail();
	if (md == NULL || out == NULL || nmembers < 0 || ports < 1 || exc_m < 0 || !(m >= 0.0))
		return TC_EINVAL;
	struct tc_lower_bound b;
	b.steps = ceil_log_base((long long)nmembers + 1, (long long)ports + 1);
	b.work = nmembers;
	b.path = nmembers > 0 ? exc_m : 0;
	b.time_ns = (double)b.steps * (md->ts_ns + m * md->tw_ns) + (double)b.path * md->th_ns;
	*out = b;
	return 0;
}
