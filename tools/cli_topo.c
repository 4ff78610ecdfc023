/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_topo.c - topocoll topo: properties, lower bounds, routes and
 * pictures of a topology.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char topo_help[] =
        "usage: topocoll topo SPEC [--json] [--route SRC DST] [--dot] [--png FILE]\n"
        "                     [--svg FILE] [--bytes M] [model options]\n"
        "       topocoll topo SPEC SPEC...\n"
        "\n"
        "Prints the properties of a topology: nodes, links, degree, diameter,\n"
        "bisection width, arc connectivity, and [KKA-I]'s lower bounds (steps, work\n"
        "and time) for one-to-all broadcast, all-to-all broadcast, scatter and\n"
        "all-to-all scatter under 1-port and all-port; with several SPECs, one table\n"
        "row of properties each.\n"
        "  SPEC            complete:P ring:P chain:P mesh:AxB[x..] torus:AxB[x..]\n"
        "                  hypercube:D star:P tree:K:P\n"
        "  --json          one JSON object (keys nodes, links, degree, diameter,\n"
        "                  bisection_width, arc_connectivity, lower_bounds)\n"
        "  --route S D     the deterministic route from S to D (red in pictures)\n"
        "  --dot           the graph in Graphviz dot, with a layout for its kind\n"
        "  --png FILE      render the graph with Graphviz (apt-get install graphviz)\n"
        "  --svg FILE      same, as SVG\n"
        "  --bytes M       message (block) size of the lower bounds' time [1]\n"
        "  the model options of topocoll predict (--ts, --tw, --th, --switching,\n"
        "  --duplex, --combining) set the lower bounds' time; --ports is ignored:\n"
        "  both 1-port and all-port are shown\n"
        "examples:\n"
        "  topocoll topo hypercube:4\n"
        "  topocoll topo torus:4x4 --json\n"
        "  topocoll topo mesh:3x5 --route 0 14\n"
        "  topocoll topo torus:4x4 --route 0 10 --svg torus.svg\n"
        "  topocoll topo ring:16 mesh:4x4 hypercube:4\n";

/* Several specs: one table row each. */
static int topo_table(int n, char **specs)
{
	struct tc_topo *ts[64];
	for (int i = 0; i < n; i++)
		if (cli_topo(specs[i], 0, &ts[i])) {
			while (i--)
				tc_topo_destroy(ts[i]);
			return CLI_USAGE;
		}
	printf("%-16s %7s %7s %7s %9s %10s %13s\n", "topology", "nodes", "links", "degree",
	       "diameter", "bisection", "connectivity");
	for (int i = 0; i < n; i++) {
		const struct tc_topo_props *pr = tc_topo_props(ts[i]);
		printf("%-16s %7d %7ld %7d %9d %10ld %13d\n", cli_topo_name(ts[i]), pr->nodes, pr->links,
		       pr->max_degree, pr->diameter, pr->bisection_width, pr->arc_connectivity);
		tc_topo_destroy(ts[i]);
	}
	return CLI_OK;
}

long cli_arc_id(const struct tc_topo *t, int u, int v)
{
	int i = tc_topo_neighbor_index(t, u, v);
	if (i < 0)
		return -1;
	long id = 0;
	for (int w = 0; w < u; w++) {
		const int *nb;
		id += tc_topo_neighbors(t, w, &nb);
	}
	return id + i;
}

void cli_topo_dot(FILE *f, const struct tc_topo *t, const struct cli_dot *d)
{
	int p = tc_topo_nodes(t);
	enum tc_topo_kind kind = tc_topo_kind(t);
	int dims[TC_TOPO_MAX_DIMS];
	int nd = tc_topo_dims(t, dims);
	int grid = (kind == TC_TOPO_MESH || kind == TC_TOPO_TORUS) && nd == 2;
	fprintf(f, "graph \"%s\" {\n", cli_topo_name(t));
	switch (kind) {
	case TC_TOPO_RING:
	case TC_TOPO_COMPLETE:
		fprintf(f, "  layout=circo;\n");
		break;
	case TC_TOPO_CHAIN:
		fprintf(f, "  rankdir=LR;\n");
		break;
	case TC_TOPO_STAR:
		fprintf(f, "  layout=twopi; root=0;\n");
		break;
	case TC_TOPO_TREE:
		break;
	default:
		fprintf(f, "  layout=neato;%s\n", grid ? " splines=true;" : "");
		break;
	}
	if (d && d->title) {
		fprintf(f, "  labelloc=t; label=");
		cli_json_quote(f, d->title);
		fprintf(f, ";\n");
	}
	fprintf(f, "  node [shape=%s, fontname=\"Helvetica\"];\n",
	        d && d->node_label ? "box, style=rounded" : "circle");
	fprintf(f, "  edge [fontname=\"Helvetica\", fontsize=10];\n");
	for (int u = 0; u < p; u++) {
		int hl = d && d->node_hl && d->node_hl[u];
		fprintf(f, "  %d [", u);
		if (d && d->node_label) {
			fprintf(f, "label=");
			cli_json_quote(f, d->node_label[u]);
		} else {
			fprintf(f, "label=\"%d\"", u);
		}
		if (grid) {
			int c[TC_TOPO_MAX_DIMS];
			tc_topo_coords(t, u, c);
			/* neato reads positions in inches. */
			double sp = d && d->node_label ? 2.2 : 1.0;
			fprintf(f, ", pos=\"%g,%g!\"", sp * c[1], -sp * c[0]);
		}
		if (kind == TC_TOPO_HYPERCUBE && nd <= 6) {
			/* A projection in which every dimension has its own direction:
			 * the usual drawing of Q_3 and Q_4 as nested cubes. */
			static const double vx[6] = {1.6, 0, 0.7, 3.6, 0.25, 7.5};
			static const double vy[6] = {0, 1.6, 0.55, 0.25, 3.6, 2.0};
			double x = 0, y = 0, sp = d && d->node_label ? 1.6 : 1.0;
			for (int k = 0; k < nd; k++)
				if (u >> k & 1) {
					x += vx[k];
					y += vy[k];
				}
			fprintf(f, ", pos=\"%g,%g!\"", sp * x, sp * y);
		}
		if (hl)
			fprintf(f, ", color=red, penwidth=2");
		fprintf(f, "];\n");
	}
	/* Arc ids: the CSR order, node by node, neighbours ascending. */
	long *first = malloc((size_t)(p + 1) * sizeof *first);
	if (!first)
		return;
	first[0] = 0;
	for (int u = 0; u < p; u++) {
		const int *nb;
		first[u + 1] = first[u] + tc_topo_neighbors(t, u, &nb);
	}
	for (int u = 0; u < p; u++) {
		const int *nb;
		int deg = tc_topo_neighbors(t, u, &nb);
		for (int i = 0; i < deg; i++) {
			int v = nb[i];
			if (v < u)
				continue;
			const char *fw = d && d->arc_label ? d->arc_label[first[u] + i] : NULL;
			int j = tc_topo_neighbor_index(t, v, u);
			const char *bw = d && d->arc_label && j >= 0 ? d->arc_label[first[v] + j] : NULL;
			fprintf(f, "  %d -- %d", u, v);
			if (fw || bw) {
				fprintf(f, " [color=red, penwidth=2.5, dir=%s",
				        fw && bw ? "both"
				        : fw     ? "forward"
				                 : "back");
				if ((fw && *fw) || (bw && *bw)) {
					char lab[512];
					snprintf(lab, sizeof lab, "%s%s%s", fw ? fw : "",
					         fw && bw && *fw && *bw ? "\n" : "", bw ? bw : "");
					fprintf(f, ", label=");
					cli_json_quote(f, lab);
				}
				fprintf(f, "]");
			} else if (d && d->arc_label) {
				fprintf(f, " [color=gray70]");
			}
			fprintf(f, ";\n");
		}
	}
	free(first);
	fprintf(f, "}\n");
}

/* The topology with the route `path` (hops + 1 nodes, may be NULL) in red. */
static void topo_dot(FILE *f, const struct tc_topo *t, const int *path, int hops)
{
	if (!path) {
		cli_topo_dot(f, t, NULL);
		return;
	}
	int p = tc_topo_nodes(t);
	long arcs = tc_topo_props(t)->arcs;
	unsigned char *hl = calloc((size_t)p, 1);
	char **lab = calloc(arcs ? (size_t)arcs : 1, sizeof *lab);
	if (hl && lab) {
		for (int k = 0; k <= hops; k++)
			hl[path[k]] = 1;
		for (int k = 0; k < hops; k++)
			lab[cli_arc_id(t, path[k], path[k + 1])] = "";
		struct cli_dot d = {.node_hl = hl};
		d.arc_label = lab;
		cli_topo_dot(f, t, &d);
	}
	free(hl);
	free(lab);
}

int cli_render(const char *dot_text, size_t len, const char *fmt, const char *file)
{
	if (!cli_have_program("dot"))
		return cli_fail("Graphviz is not installed, so no %s: sudo apt-get install graphviz "
		                "(or write the graph with --dot and render it elsewhere)",
		                fmt);
	char tflag[16], oflag[4096];
	snprintf(tflag, sizeof tflag, "-T%s", fmt);
	snprintf(oflag, sizeof oflag, "-o%s", file);
	char *argv[] = {"dot", tflag, oflag, NULL};
	int st = cli_pipe_to(argv, dot_text, len);
	if (st != 0)
		return cli_fail("Graphviz 'dot' failed (status %d) writing %s", st, file);
	return CLI_OK;
}

static int topo_render(const struct tc_topo *t, const int *path, int hops, const char *fmt,
                       const char *file)
{
	if (!cli_have_program("dot"))
		return cli_render("", 0, fmt, file);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return cli_fail("out of memory");
	topo_dot(f, t, path, hops);
	fclose(f);
	int st = cli_render(text, len, fmt, file);
	free(text);
	return st;
}

static const struct {
	enum tc_lb_coll c;
	const char *name, *term; /* [KKA-I]'s name of the collective */
} topo_lbs[] = {
        {TC_LB_OAB, "bcast", "one-to-all broadcast"},
        {TC_LB_AAB, "allgather", "all-to-all broadcast"},
        {TC_LB_OAS, "scatter", "one-to-all scatter"},
        {TC_LB_AAS, "alltoall", "all-to-all scatter"},
};

/* Lower bounds under 1-port and all-port; returns 0 or TC_ENOTSUP (trees). */
static int topo_bounds(const struct tc_topo *t, const struct cli_model *m, double bytes,
                       struct tc_lower_bound lb[4][2])
{
	for (int k = 0; k < 4; k++)
		for (int ports = 0; ports < 2; ports++) {
			struct tc_model md = m->md;
			md.ports = ports ? TC_PORTS_ALL : TC_PORTS_ONE;
			int err = cli_lower_bound(t, topo_lbs[k].c, -1, bytes, &md, &lb[k][ports]);
			if (err)
				return err;
		}
	return 0;
}

int cmd_topo(int argc, char **argv)
{
	char *specs[64];
	int nspecs = 0;
	int json = 0, dot = 0;
	long rs = -1, rd = -1;
	const char *route[2] = {NULL, NULL}; /* --route SRC DST, read once the topology is known */
	const char *png = NULL, *svg = NULL;
	uint64_t bytes = 1;
	struct cli_model m;
	cli_model_init(&m);
	for (int i = 0; i < argc; i++) {
		const char *v;
		int r;
		if (cli_is_help(argv[i])) {
			cli_help_print(stdout, topo_help);
			return CLI_OK;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--dot")) {
			dot = 1;
		} else if (!strcmp(argv[i], "--route")) {
			if (i + 2 >= argc)
				return cli_usage("--route needs two node numbers");
			if (route[0])
				return cli_usage("--route is given twice ('%s %s', then '%s %s'); give "
				                 "it once",
				                 route[0], route[1], argv[i + 1], argv[i + 2]);
			route[0] = argv[i + 1];
			route[1] = argv[i + 2];
			i += 2;
		} else if ((r = cli_opt(argc, argv, &i, "--png", &v)) != 0) {
			if (r != 1)
				return r;
			png = v;
		} else if ((r = cli_opt(argc, argv, &i, "--svg", &v)) != 0) {
			if (r != 1)
				return r;
			svg = v;
		} else if ((r = cli_opt(argc, argv, &i, "--bytes", &v)) != 0) {
			if (r != 1 || cli_parse_size("--bytes", v, TC_MAX_MESSAGE, &bytes))
				return CLI_USAGE;
		} else if ((r = cli_model_opt(argc, argv, &i, &m)) != 0) {
			if (r != 1)
				return r;
		} else if (argv[i][0] == '-') {
			return cli_unknown("topo", argv[i]);
		} else if (nspecs < 64) {
			specs[nspecs++] = argv[i];
		} else {
			return cli_usage("topo: too many topologies (64 at most)");
		}
	}
	if (nspecs > 1) {
		if (json || dot || route[0] || png || svg)
			return cli_usage("topo: --json, --dot, --png, --svg and --route take one SPEC");
		return topo_table(nspecs, specs);
	}
	if (!nspecs)
		return cli_usage("topo: missing topology SPEC (see topocoll topo --help)");
	if (json && dot)
		return cli_usage("topo: choose one of --json and --dot");
	struct tc_topo *t;
	if (cli_topo(specs[0], 0, &t))
		return CLI_USAGE;
	const struct tc_topo_props *pr = tc_topo_props(t);
	int p = pr->nodes;
	if (route[0] && (cli_parse_node("--route", route[0], t, &rs) ||
	                 cli_parse_node("--route", route[1], t, &rd))) {
		tc_topo_destroy(t);
		return CLI_USAGE;
	}
	int *path = NULL, hops = 0;
	if (rs >= 0) {
		hops = tc_topo_route(t, (int)rs, (int)rd, NULL, 0);
		path = malloc((size_t)(hops + 1) * sizeof *path);
		if (!path) {
			tc_topo_destroy(t);
			return cli_fail("out of memory");
		}
		tc_topo_route(t, (int)rs, (int)rd, path, hops + 1);
	}
	int status = CLI_OK;
	if (png && (status = topo_render(t, path, hops, "png", png)) != CLI_OK)
		goto out;
	if (svg && (status = topo_render(t, path, hops, "svg", svg)) != CLI_OK)
		goto out;

	const char *canon = cli_topo_name(t);
	struct tc_lower_bound lb[4][2];
	int lb_err = topo_bounds(t, &m, (double)bytes, lb);
	char b1[32], b2[32];
	if (dot) {
		topo_dot(stdout, t, path, hops);
	} else if (json) {
		struct cli_json w;
		cli_json_init(&w, stdout);
		cli_json_obj(&w, NULL);
		cli_json_str(&w, "topology", canon);
		cli_json_int(&w, "nodes", p);
		cli_json_int(&w, "links", pr->links);
		cli_json_int(&w, "arcs", pr->arcs);
		cli_json_int(&w, "degree", pr->max_degree);
		cli_json_int(&w, "min_degree", pr->min_degree);
		cli_json_int(&w, "diameter", pr->diameter);
		cli_json_int(&w, "bisection_width", pr->bisection_width);
		cli_json_int(&w, "arc_connectivity", pr->arc_connectivity);
		if (path) {
			cli_json_arr(&w, "route");
			for (int k = 0; k <= hops; k++)
				cli_json_int(&w, NULL, path[k]);
			cli_json_end_arr(&w);
		}
		if (lb_err) {
			cli_json_null(&w, "lower_bounds");
		} else {
			cli_json_obj(&w, "lower_bounds");
			cli_json_uint(&w, "msg_bytes", bytes);
			cli_model_json(&w, &m);
			for (int k = 0; k < 4; k++) {
				cli_json_obj(&w, topo_lbs[k].name);
				for (int ports = 0; ports < 2; ports++) {
					const struct tc_lower_bound *l = &lb[k][ports];
					cli_json_obj(&w, ports ? "all_port" : "one_port");
					cli_json_int(&w, "steps", l->steps);
					cli_json_int(&w, "work", l->work);
					cli_json_int(&w, "path", l->path);
					cli_json_num(&w, "time_ns", l->time_ns);
					cli_json_end_obj(&w);
				}
				cli_json_end_obj(&w);
			}
			cli_json_end_obj(&w);
		}
		cli_json_end_obj(&w);
	} else {
		printf("topology          %s\n", canon);
		printf("nodes             %d\n", p);
		printf("links             %ld (%ld directed channels)\n", pr->links, pr->arcs);
		printf("degree            %d (min %d)\n", pr->max_degree, pr->min_degree);
		printf("diameter          %d\n", pr->diameter);
		printf("bisection width   %ld\n", pr->bisection_width);
		printf("arc connectivity  %d\n", pr->arc_connectivity);
		if (lb_err) {
			printf("lower bounds      none ([KKA-I] does not cover %s)\n",
			       tc_topo_kind_name(tc_topo_kind(t)));
		} else {
			printf("\nlower bounds ([KKA-I]), m = %s, t_s = %s ns, t_w = %s ns/B, %s%s:\n",
			       cli_bytes(bytes, b1, sizeof b1), cli_num(m.md.ts_ns, b2),
			       cli_num(m.md.tw_ns, (char[32]){0}),
			       m.md.switching == TC_SWITCH_CT ? "cut-through" : "store-and-forward",
			       m.md.combining ? ", combining" : ", non-combining");
			printf("  %-32s %16s %16s\n", "", "1-port", "all-port");
			printf("  %-32s %6s %9s %6s %9s %14s\n", "collective", "steps", "time",
			       "steps", "time", "work");
			for (int k = 0; k < 4; k++) {
				char t0[32], t1[32], nm[64];
				snprintf(nm, sizeof nm, "%s (%s)", topo_lbs[k].name, topo_lbs[k].term);
				printf("  %-32s %6ld %9s %6ld %9s %14lld\n", nm, lb[k][0].steps,
				       cli_time(lb[k][0].time_ns, t0), lb[k][1].steps,
				       cli_time(lb[k][1].time_ns, t1), lb[k][0].work);
			}
		}
	}
	if (!dot && !json) {
		if (png)
			printf("picture           %s\n", png);
		if (svg)
			printf("picture           %s\n", svg);
	}
	if (path && !dot && !json) {
		printf("\nroute %ld -> %ld   ", rs, rd);
		for (int i = 0; i <= hops; i++)
			printf("%s%d", i ? " -> " : "", path[i]);
		printf("  (%d hops)\n", hops);
	}
out:
	free(path);
	tc_topo_destroy(t);
	return status;
}
