/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_steps.c - topocoll steps: a collective round by round, as the
 * seeds draw it: what every node holds after each round and which links
 * carry which message; ASCII on the terminal, one Graphviz picture per round.
 *
 * What a node holds is tracked per element of its buffer as the set of ranks
 * whose data it contains (a bit mask, so at most 64 ranks): a broadcast
 * starts with {root} at the root, a reduction with {r} at rank r; a copy
 * transfer replaces the destination's sets by the source's as they were at
 * the start of the round, a combining one adds them.  The schedule comes from
 * tc_schedule(); all of its transfers work on one buffer per rank (the
 * convention of lib/coll/gen.h), which struct tc_transfer does not state.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_coll.h"

const char steps_help[] =
	"usage: topocoll steps --topo SPEC --coll C --alg A [--bytes N] [--root R]\n"
	"                      [--dot DIR [--png|--svg]] [--json] [options]\n"
	"\n"
	"Shows a collective round by round, like the figures of the seeds: for each\n"
	"round the messages (source, destination, elements, route) and then what\n"
	"every node holds: one character per group of elements, '#' complete (the\n"
	"broadcast data, or every rank's contribution combined), '.' nothing, a\n"
	"digit 1-9 the number of contributions combined so far (+ for more).\n"
	"At most 64 nodes.\n"
	"  --topo SPEC --p P --coll C --alg A --root R --dtype T   as for predict\n"
	"  --bytes N         bytes per rank [8 x p: one double per rank]\n"
	"  --dot DIR         write DIR/round_000.dot, ... (one Graphviz file per\n"
	"                    round; round_init.dot is the start): nodes labelled\n"
	"                    with what they hold, links carrying a message in red\n"
	"                    with its content\n"
	"  --png, --svg      also render every file with Graphviz (apt-get install\n"
	"                    graphviz)\n"
	"  --json            the rounds as JSON: transfers and holdings per round\n" CLI_MODEL_HELP
	"examples:\n"
	"  topocoll steps --topo hypercube:3 --coll bcast --alg hypercube\n"
	"  topocoll steps --topo ring:8 --coll allreduce --alg ring --dot steps --png\n"
	"  topocoll steps --topo mesh:3x3 --coll reduce --alg mesh --root 4\n";

struct steps_opts {
	const char *dir;
	const char *fmt; /* NULL, "png" or "svg" */
};

static int steps_extra(int argc, char **argv, int *i, void *ctx)
{
	struct steps_opts *o = ctx;
	const char *v;
	int r = cli_opt(argc, argv, i, "--dot", &v);
	if (r == 1)
		o->dir = v;
	else if (r)
		return r;
	else if (!strcmp(argv[*i], "--png"))
		o->fmt = "png";
	else if (!strcmp(argv[*i], "--svg"))
		o->fmt = "svg";
	else
		return 0;
	return 1;
}

/* "0-3,6" for a set of ranks. */
static const char *set_str(uint64_t s, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < 64 && n < len;) {
		if (!(s >> i & 1)) {
			i++;
			continue;
		}
		int j = i;
		while (j + 1 < 64 && (s >> (j + 1) & 1))
			j++;
		n += (size_t)snprintf(buf + n, len - n, n ? ",%d" : "%d", i);
		if (j > i && n < len)
			n += (size_t)snprintf(buf + n, len - n, j == i + 1 ? ",%d" : "-%d", j);
		i = j + 1;
	}
	if (!n)
		snprintf(buf, len, "-");
	return buf;
}

struct steps {
	int p, ncell;
	size_t nelem, es;
	uint64_t full;   /* the set a complete element holds */
	uint64_t *hold;  /* p x nelem */
	uint64_t *prev;  /* copy at the start of a round */
	int token;       /* barrier: every message carries element 0 */
};

/* One character per cell of rank r's buffer. */
static void steps_cells(const struct steps *st, int r, char *out)
{
	for (int c = 0; c < st->ncell; c++) {
		size_t lo = st->nelem * (size_t)c / (size_t)st->ncell;
		size_t hi = st->nelem * (size_t)(c + 1) / (size_t)st->ncell;
		int all = 1, none = 1, minc = 64;
		for (size_t e = lo; e < hi; e++) {
			uint64_t h = st->hold[(size_t)r * st->nelem + e];
			all &= (h & st->full) == st->full;
			none &= h == 0;
			int k = __builtin_popcountll(h);
			minc = k < minc ? k : minc;
		}
		out[c] = all ? '#' : none ? '.' : minc == 0 ? '+' : minc < 10 ? (char)('0' + minc) : '+';
	}
	out[st->ncell] = '\0';
}

/* Applies the transfers [a, b) of one round. */
static void steps_apply(struct steps *st, const struct tc_transfer *x, int a, int b)
{
	memcpy(st->prev, st->hold, (size_t)st->p * st->nelem * sizeof *st->hold);
	for (int i = a; i < b; i++) {
		size_t n = st->token ? 1 : (size_t)(x[i].bytes / st->es);
		size_t so = st->token ? 0 : (size_t)(x[i].src_off / st->es);
		size_t d = st->token ? 0 : (size_t)(x[i].dst_off / st->es);
		for (size_t k = 0; k < n && so + k < st->nelem && d + k < st->nelem; k++) {
			uint64_t v = st->prev[(size_t)x[i].src * st->nelem + so + k];
			uint64_t *h = &st->hold[(size_t)x[i].dst * st->nelem + d + k];
			*h = x[i].combine || st->token ? *h | v : v;
		}
	}
}

/* The sources' union of sets over a transfer's elements (at round start). */
static uint64_t steps_content(const struct steps *st, const struct tc_transfer *x)
{
	uint64_t s = 0;
	size_t n = st->token ? 1 : (size_t)(x->bytes / st->es);
	size_t so = st->token ? 0 : (size_t)(x->src_off / st->es);
	for (size_t k = 0; k < n && so + k < st->nelem; k++)
		s |= st->prev[(size_t)x->src * st->nelem + so + k];
	return s;
}

static int steps_write_dot(const struct tc_topo *t, const struct steps *st, const char *dir,
                           const char *name, const char *title, char **arc_label,
                           const char *fmt)
{
	int p = st->p;
	char **labels = calloc((size_t)p, sizeof *labels);
	char path[4096];
	int status = CLI_OK;
	if (!labels)
		return cli_fail("out of memory");
	for (int r = 0; r < p; r++) {
		char cells[80];
		steps_cells(st, r, cells);
		labels[r] = malloc(96);
		if (labels[r])
			snprintf(labels[r], 96, "%d\n%s", r, cells);
	}
	snprintf(path, sizeof path, "%s/%s.dot", dir, name);
	char *text = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&text, &len);
	if (!mf) {
		status = cli_fail("out of memory");
		goto out;
	}
	struct cli_dot d = {.title = title, .node_label = labels, .arc_label = arc_label};
	cli_topo_dot(mf, t, &d);
	fclose(mf);
	FILE *f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len) {
		if (f)
			fclose(f);
		status = cli_fail("steps: cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	fclose(f);
	if (fmt) {
		snprintf(path, sizeof path, "%s/%s.%s", dir, name, fmt);
		status = cli_render(text, len, fmt, path);
	}
out:
	free(text);
	for (int r = 0; r < p; r++)
		free(labels[r]);
	free(labels);
	return status;
}

int cmd_steps(int argc, char **argv)
{
	struct cli_case cs;
	struct steps_opts o = {NULL, NULL};
	int json = 0;
	/* --bytes is optional here: 8 x p unless given. */
	int have_bytes = 0;
	for (int i = 0; i < argc; i++)
		have_bytes |= !strncmp(argv[i], "--bytes", 7);
	char **av = malloc((size_t)(argc + 2) * sizeof *av);
	if (!av)
		return cli_fail("out of memory");
	memcpy(av, argv, (size_t)argc * sizeof *av);
	int ac = argc;
	if (!have_bytes) {
		av[ac++] = "--bytes";
		av[ac++] = "0";
	}
	int err = cli_case_parse("steps", ac, av, 0, &cs, &json, steps_extra, &o);
	free(av);
	if (err)
		return err == -1 ? CLI_OK : err;
	int p = tc_topo_nodes(cs.t);
	int status = CLI_OK;
	struct tc_transfer *x = NULL;
	int nx = 0;
	struct steps st = {.p = p};
	char **arc_label = NULL;
	if (p > 64) {
		status = cli_usage("steps: draws at most 64 nodes (%s has %d)", cli_topo_name(cs.t), p);
		goto out;
	}
	if (o.fmt && !o.dir) {
		status = cli_usage("steps: --%s renders the files of --dot DIR; give --dot DIR", o.fmt);
		goto out;
	}
	st.es = tc_dtype_size(cs.dt);
	if (!have_bytes && cs.coll != TC_COLL_BARRIER)
		cs.bytes = st.es * (uint64_t)p;
	st.nelem = (size_t)(cs.bytes / st.es);
	if (st.nelem > 65536) {
		status = cli_usage("steps: at most 65536 elements per rank (use a smaller --bytes)");
		goto out;
	}
	if (cs.coll == TC_COLL_BARRIER) {
		st.nelem = 1; /* a token per rank: who has heard from whom */
		st.token = 1;
	}

	struct tc_prediction pr;
	err = tc_predict(cs.t, &cs.model.md, cs.coll, cs.alg, cs.bytes, st.es, cs.root,
	                 cs.model.packets, &pr);
	if (!err)
		err = tc_schedule(cs.t, &cs.model.md, cs.coll, cs.alg, cs.bytes, st.es, cs.root,
		                  cs.model.packets, &x, &nx);
	if (err) {
		status = cli_coll_error(err, cs.coll, cs.alg, cs.t, cs.root);
		goto out;
	}
	st.ncell = st.nelem < 16 ? (int)st.nelem : 16;
	st.hold = calloc((size_t)p * (st.nelem ? st.nelem : 1), sizeof *st.hold);
	st.prev = calloc((size_t)p * (st.nelem ? st.nelem : 1), sizeof *st.prev);
	long arcs = tc_topo_props(cs.t)->arcs;
	arc_label = calloc(arcs ? (size_t)arcs : 1, sizeof *arc_label);
	if (!st.hold || !st.prev || !arc_label) {
		status = cli_fail("out of memory");
		goto out;
	}
	int bc = cs.coll == TC_COLL_BCAST;
	st.full = bc ? (uint64_t)1 << cs.root : (p == 64 ? ~(uint64_t)0 : ((uint64_t)1 << p) - 1);
	for (int r = 0; r < p; r++)
		for (size_t e = 0; e < st.nelem; e++)
			st.hold[(size_t)r * st.nelem + e] = bc ? (r == cs.root ? st.full : 0)
			                                        : (uint64_t)1 << r;
	int nrounds = nx ? x[nx - 1].round + 1 : 0;
	if (o.dir && mkdir(o.dir, 0777) && errno != EEXIST) {
		status = cli_fail("steps: cannot create %s: %s", o.dir, strerror(errno));
		goto out;
	}

	char b1[32], b2[32], title[256];
	struct cli_json w;
	cli_json_init(&w, stdout);
	if (json) {
		cli_json_obj(&w, NULL);
		cli_case_json(&w, &cs);
		cli_json_str(&w, "algorithm", pr.algorithm);
		cli_json_int(&w, "rounds", nrounds);
		cli_json_int(&w, "predicted_rounds", pr.rounds);
		cli_json_num(&w, "modelled_ns", (double)pr.modelled_ps / TC_PS_PER_NS);
		cli_json_int(&w, "elements", (long long)st.nelem);
		cli_json_arr(&w, "steps");
	} else {
		printf("%s %s on %s, %s per rank (%zu %s)", tc_coll_name(cs.coll), pr.algorithm,
		       cli_topo_name(cs.t), cli_bytes(cs.bytes, b1, sizeof b1), st.nelem,
		       tc_dtype_name(cs.dt));
		if (cs.coll == TC_COLL_BCAST || cs.coll == TC_COLL_REDUCE)
			printf(", root %d", cs.root);
		printf(": %d rounds, modelled %s\n", nrounds,
		       cli_time((double)pr.modelled_ps / TC_PS_PER_NS, b2));
		printf("holdings: one character per %s: # complete, . nothing, "
		       "1-9 contributions combined\n",
		       st.ncell == (int)st.nelem ? "element" : "group of elements");
		printf("\nstart\n");
		for (int r = 0; r < p; r++) {
			char cells[80];
			steps_cells(&st, r, cells);
			printf("  %3d %s\n", r, cells);
		}
	}
	if (o.dir) {
		snprintf(title, sizeof title, "%s %s on %s: start", tc_coll_name(cs.coll), pr.algorithm,
		         cli_topo_name(cs.t));
		if ((status = steps_write_dot(cs.t, &st, o.dir, "round_init", title, arc_label, o.fmt)))
			goto out;
	}
	for (int r = 0, i = 0; r < nrounds; r++) {
		int a = i;
		while (i < nx && x[i].round == r)
			i++;
		int b = i;
		tc_time_t t0 = INT64_MAX, t1 = 0;
		long msgs = 0;
		for (int k = a; k < b; k++) {
			if (x[k].src == x[k].dst)
				continue;
			msgs++;
			t0 = x[k].start_ps < t0 ? x[k].start_ps : t0;
			t1 = x[k].arrival_ps > t1 ? x[k].arrival_ps : t1;
		}
		if (!msgs)
			t0 = t1 = 0;
		/* Contents are what the sources hold at the start of the round. */
		memcpy(st.prev, st.hold, (size_t)p * st.nelem * sizeof *st.hold);
		for (long k = 0; k < arcs; k++) {
			free(arc_label[k]);
			arc_label[k] = NULL;
		}
		if (json) {
			cli_json_obj(&w, NULL);
			cli_json_int(&w, "round", r);
			cli_json_int(&w, "messages", msgs);
			cli_json_num(&w, "start_ns", (double)t0 / TC_PS_PER_NS);
			cli_json_num(&w, "end_ns", (double)t1 / TC_PS_PER_NS);
			cli_json_arr(&w, "transfers");
		} else {
			printf("\nround %d: %ld message%s, %s .. %s\n", r, msgs, msgs == 1 ? "" : "s",
			       cli_time((double)t0 / TC_PS_PER_NS, b1), cli_time((double)t1 / TC_PS_PER_NS, b2));
		}
		for (int k = a; k < b; k++) {
			const struct tc_transfer *y = &x[k];
			char set[160], rng[64], route[512];
			uint64_t e0 = y->src_off / st.es, e1 = (y->src_off + y->bytes) / st.es;
			if (st.token)
				snprintf(rng, sizeof rng, "token");
			else
				snprintf(rng, sizeof rng, e1 == e0 + 1 ? "[%llu]" : "[%llu..%llu)",
				         (unsigned long long)e0, (unsigned long long)e1);
			set_str(steps_content(&st, y), set, sizeof set);
			int hops = y->hops;
			int path[TC_TOPO_MAX_NODES > 4096 ? 4096 : TC_TOPO_MAX_NODES];
			int np = 0;
			route[0] = '\0';
			if (y->src != y->dst) {
				int h = tc_topo_route(cs.t, y->src, y->dst, NULL, 0);
				if (h >= 0 && h < 4096) {
					tc_topo_route(cs.t, y->src, y->dst, path, h + 1);
					np = h + 1;
				}
				size_t n = 0;
				for (int q = 0; q < np && n < sizeof route; q++)
					n += (size_t)snprintf(route + n, sizeof route - n, q ? "-%d" : "%d", path[q]);
				char lab[128];
				snprintf(lab, sizeof lab, "%d>%d %s%s%s", y->src, y->dst, rng,
				         bc ? "" : " {", bc ? "" : set);
				if (!bc)
					strncat(lab, "}", sizeof lab - strlen(lab) - 1);
				for (int q = 0; q + 1 < np; q++) {
					long id = cli_arc_id(cs.t, path[q], path[q + 1]);
					if (id < 0)
						continue;
					if (!arc_label[id]) {
						arc_label[id] = strdup(lab);
					} else {
						size_t l = strlen(arc_label[id]) + strlen(lab) + 2;
						char *m2 = malloc(l);
						if (m2) {
							snprintf(m2, l, "%s\n%s", arc_label[id], lab);
							free(arc_label[id]);
							arc_label[id] = m2;
						}
					}
				}
			}
			if (json) {
				cli_json_obj(&w, NULL);
				cli_json_int(&w, "src", y->src);
				cli_json_int(&w, "dst", y->dst);
				cli_json_int(&w, "hops", hops);
				cli_json_bool(&w, "combine", y->combine);
				cli_json_uint(&w, "bytes", y->bytes);
				cli_json_uint(&w, "src_off", y->src_off);
				cli_json_uint(&w, "dst_off", y->dst_off);
				cli_json_num(&w, "start_ns", (double)y->start_ps / TC_PS_PER_NS);
				cli_json_num(&w, "arrival_ns", (double)y->arrival_ps / TC_PS_PER_NS);
				cli_json_arr(&w, "route");
				for (int q = 0; q < np; q++)
					cli_json_int(&w, NULL, path[q]);
				cli_json_end_arr(&w);
				cli_json_str(&w, "contributions", set);
				cli_json_end_obj(&w);
			} else if (y->src == y->dst) {
				printf("  %3d local %s elements %s\n", y->src, y->combine ? "combine" : "copy",
				       rng);
			} else {
				if (st.token)
					printf("  %3d -> %-3d token", y->src, y->dst);
				else
					printf("  %3d -> %-3d %s %s, elements %s", y->src, y->dst,
					       y->combine ? "combine" : "copy", cli_bytes(y->bytes, b1, sizeof b1),
					       rng);
				if (!bc)
					printf(" of {%s}", set);
				if (hops > 1)
					printf("  via %s (%d hops)", route, hops);
				printf("\n");
			}
		}
		steps_apply(&st, x, a, b);
		if (json) {
			cli_json_end_arr(&w);
			cli_json_arr(&w, "holds");
			for (int q = 0; q < p; q++) {
				char cells[80];
				steps_cells(&st, q, cells);
				cli_json_str(&w, NULL, cells);
			}
			cli_json_end_arr(&w);
			cli_json_end_obj(&w);
		} else {
			printf("  holds after round %d:\n", r);
			for (int q = 0; q < p; q++) {
				char cells[80];
				steps_cells(&st, q, cells);
				printf("  %3d %s\n", q, cells);
			}
		}
		if (o.dir) {
			char name[32];
			snprintf(name, sizeof name, "round_%03d", r);
			snprintf(title, sizeof title, "%s %s on %s: round %d of %d (%ld messages)",
			         tc_coll_name(cs.coll), pr.algorithm, cli_topo_name(cs.t), r, nrounds, msgs);
			if ((status = steps_write_dot(cs.t, &st, o.dir, name, title, arc_label, o.fmt)))
				goto out;
		}
	}
	if (json) {
		cli_json_end_arr(&w);
		cli_json_end_obj(&w);
	} else if (o.dir) {
		printf("\nwrote %s/round_init.dot and round_000..%03d.dot%s%s\n", o.dir,
		       nrounds ? nrounds - 1 : 0, o.fmt ? " with " : "", o.fmt ? o.fmt : "");
	}
out:
	if (arc_label) {
		for (long k = 0; k < tc_topo_props(cs.t)->arcs; k++)
			free(arc_label[k]);
		free(arc_label);
	}
	free(st.hold);
	free(st.prev);
	tc_schedule_free(x);
	cli_case_free(&cs);
	return status;
}
