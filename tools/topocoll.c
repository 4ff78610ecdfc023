/* SPDX-License-Identifier: MIT */
/*
 * tools/topocoll.c - the topocoll command-line tool.
 *
 * Exit codes: 0 success, 1 failure while running, 2 usage error (bad flag,
 * bad topology, bad size): one line on stderr says which.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topocoll.h"

#define EXIT_USAGE 2

static const char *prog = "topocoll";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

/* Parses a non-negative int in [lo, hi]; returns 0 or -1. */
static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* ---- topocoll topo ------------------------------------------------------ */

static const char topo_help[] =
	"usage: topocoll topo SPEC [--json] [--route SRC DST] [--dot]\n"
	"       topocoll topo SPEC SPEC...\n"
	"\n"
	"Prints the properties of a topology: nodes, links, degree, diameter,\n"
	"bisection width, arc connectivity; with several SPECs, one table row each.\n"
	"  SPEC            complete:P ring:P chain:P mesh:AxB[x..] torus:AxB[x..]\n"
	"                  hypercube:D star:P tree:K:P\n"
	"  --json          one JSON object (keys nodes, links, degree, diameter,\n"
	"                  bisection_width, arc_connectivity)\n"
	"  --route S D     the deterministic route from S to D\n"
	"  --dot           the graph in Graphviz dot\n"
	"examples:\n"
	"  topocoll topo hypercube:4\n"
	"  topocoll topo torus:4x4 --json\n"
	"  topocoll topo mesh:3x5 --route 0 14\n"
	"  topocoll topo ring:16 mesh:4x4 hypercube:4\n";

/* Several specs: one table row each. */
static int topo_table(int n, char **specs)
{
	printf("%-16s %7s %7s %7s %9s %10s %13s\n", "topology", "nodes", "links", "degree",
	       "diameter", "bisection", "connectivity");
	for (int i = 0; i < n; i++) {
		struct tc_topo *t;
		if (tc_topo_parse(specs[i], &t))
			return usage_error("bad topology '%s' (e.g. ring:8, mesh:4x4, hypercube:3)",
			                   specs[i]);
		const struct tc_topo_props *pr = tc_topo_props(t);
		char canon[128];
		tc_topo_spec(t, canon, sizeof canon);
		printf("%-16s %7d %7ld %7d %9d %10ld %13d\n", canon, pr->nodes, pr->links,
		       pr->max_degree, pr->diameter, pr->bisection_width, pr->arc_connectivity);
		tc_topo_destroy(t);
	}
	return 0;
}

static int cmd_topo(int argc, char **argv)
{
	const char *spec = NULL;
	char *specs[64];
	int nspecs = 0;
	int json = 0, dot = 0;
	long rs = -1, rd = -1;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(topo_help, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--dot")) {
			dot = 1;
		} else if (!strcmp(argv[i], "--route")) {
			if (i + 2 >= argc || parse_int(argv[i + 1], 0, TC_TOPO_MAX_NODES, &rs) ||
			    parse_int(argv[i + 2], 0, TC_TOPO_MAX_NODES, &rd))
				return usage_error("--route needs two node numbers%s", "");
			i += 2;
		} else if (argv[i][0] == '-') {
			return usage_error("topo: unknown option '%s' (see topocoll topo --help)", argv[i]);
		} else if (nspecs < 64) {
			specs[nspecs++] = argv[i];
			spec = specs[0];
		} else {
			return usage_error("topo: too many topologies (64 at most)%s", "");
		}
	}
	if (nspecs > 1) {
		if (json || dot || rs >= 0)
			return usage_error("topo: --json, --dot and --route take one SPEC%s", "");
		return topo_table(nspecs, specs);
	}
	if (!spec)
		return usage_error("topo: missing topology SPEC (see topocoll topo --help)%s", "");
	struct tc_topo *t;
	int err = tc_topo_parse(spec, &t);
	if (err)
		return usage_error("bad topology '%s' (e.g. ring:8, mesh:4x4, hypercube:3, tree:2:15)",
		                   spec);
	const struct tc_topo_props *pr = tc_topo_props(t);
	int p = pr->nodes;
	if ((rs >= 0 && rs >= p) || (rd >= 0 && rd >= p)) {
		tc_topo_destroy(t);
		return usage_error("--route: node out of range for %s", spec);
	}
	char canon[128];
	tc_topo_spec(t, canon, sizeof canon);
	if (dot) {
		printf("graph \"%s\" {\n", canon);
		for (int u = 0; u < p; u++) {
			const int *nb;
			int deg = tc_topo_neighbors(t, u, &nb);
			if (!deg)
				printf("  %d;\n", u);
			for (int i = 0; i < deg; i++)
				if (nb[i] > u)
					printf("  %d -- %d;\n", u, nb[i]);
		}
		printf("}\n");
	} else if (json) {
		printf("{\"topology\": \"%s\", \"nodes\": %d, \"links\": %ld, \"arcs\": %ld, "
		       "\"degree\": %d, \"min_degree\": %d, \"diameter\": %d, \"bisection_width\": %ld, "
		       "\"arc_connectivity\": %d",
		       canon, p, pr->links, pr->arcs, pr->max_degree, pr->min_degree, pr->diameter,
		       pr->bisection_width, pr->arc_connectivity);
	} else {
		printf("topology          %s\n", canon);
		printf("nodes             %d\n", p);
		printf("links             %ld (%ld directed channels)\n", pr->links, pr->arcs);
		printf("degree            %d (min %d)\n", pr->max_degree, pr->min_degree);
		printf("diameter          %d\n", pr->diameter);
		printf("bisection width   %ld\n", pr->bisection_width);
		printf("arc connectivity  %d\n", pr->arc_connectivity);
	}
	if (rs >= 0 && !dot) {
		int hops = tc_topo_route(t, (int)rs, (int)rd, NULL, 0);
		int *path = malloc((size_t)(hops + 1) * sizeof *path);
		tc_topo_route(t, (int)rs, (int)rd, path, hops + 1);
		if (json) {
			printf(", \"route\": [");
			for (int i = 0; i <= hops; i++)
				printf("%s%d", i ? ", " : "", path[i]);
			printf("]");
		} else {
			printf("route %ld -> %ld   ", rs, rd);
			for (int i = 0; i <= hops; i++)
				printf("%s%d", i ? " -> " : "", path[i]);
			printf("  (%d hops)\n", hops);
		}
		free(path);
	}
	if (json && !dot)
		printf("}\n");
	tc_topo_destroy(t);
	return 0;
}

/* ---- main --------------------------------------------------------------- */

static const char main_help[] =
	"usage: topocoll COMMAND [options]\n"
	"\n"
	"commands:\n"
	"  topo SPEC       properties, routes and pictures of a topology\n"
	"  version         print the version\n"
	"\n"
	"topocoll COMMAND --help shows the options and examples of each command.\n"
	"Exit status: 0 ok, 1 failure while running, 2 usage error.\n";

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(main_help, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "topo"))
		return cmd_topo(argc - 2, argv + 2);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("topocoll %s\n", TC_VERSION_STRING);
		return 0;
	}
	return usage_error("unknown command '%s' (see topocoll --help)", argv[1]);
}
