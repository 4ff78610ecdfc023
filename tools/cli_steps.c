/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_steps.c - topocoll steps: a collective round by round, as the
 * course notes of docs/references.md draw it: what every node holds after
 * each round and which links carry which message; ASCII on the terminal, one
 * Graphviz picture per round.
 *
 * What a node holds is tracked per element of its buffer as the set of ranks
 * whose data it contains (a bit mask, so at most 64 ranks): a broadcast
 * starts with {root} at the root, a reduction with {r} at rank r; a copy
 * transfer replaces the destination's sets by the source's as they were at
 * the start of the round, a combining one adds them.  The schedule comes from
 * tc_schedule_call().
 *
 * Collectives of one block in and one block out on every rank (bcast,
 * reduce, allreduce, barrier, scan, multicast) are drawn as the sources draw
 * them: one buffer per rank, whatever buffer a transfer names.  The others
 * (a buffer of p blocks, buffers on some ranks only: the shape flags say;
 * or a permutation, shift and the Gray-code ones, whose output is another
 * rank's input) are
 * drawn per buffer, IN (send), OUT (receive) and TMP (the algorithm's
 * scratch), following src_buf and dst_buf of each transfer: a p-block
 * buffer one character per block, giving the rank its data came from (or,
 * for a reduction, how many contributions it combines).
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
        "Shows a collective round by round, like the figures of the sources: for each\n"
        "round the messages (source, destination, elements, route) and then what\n"
        "every node holds: one character per group of elements, '#' complete (the\n"
        "broadcast data, or every rank's contribution combined), '.' nothing, a\n"
        "digit 1-9 the number of contributions combined so far (+ for more).\n"
        "Collectives whose send and receive buffers differ in shape (p blocks, or\n"
        "some ranks only) show each rank's buffers, IN (send), OUT (receive) and\n"
        "TMP (the algorithm's scratch), a character per block of a p-block buffer:\n"
        "the rank whose data it holds (0-9a-zA-Z; a reduction: contributions\n"
        "combined), and each transfer's source and destination buffers.\n"
        "At most 64 nodes.\n"
        "  --topo SPEC --p P --coll C --alg A --root R --q Q --along-ring\n"
        "  --members LIST --counts LIST --dtype T\n"
        "                    as for predict\n"
        "  --bytes N         the block m per rank [8 x p: one double per rank; with\n"
        "                    a buffer of p blocks, 8: one double per block; the\n"
        "                    v-collectives: every block 8 x p unless --counts]\n"
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
        "  topocoll steps --topo mesh:3x3 --coll reduce --alg mesh --root 4\n"
        "  topocoll steps --topo ring:8 --coll allgather --alg ring\n";

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

#define STEPS_NBUF 3 /* IN, OUT, TMP: tc_transfer's src_buf and dst_buf */
static const char *const steps_buf_name[STEPS_NBUF] = {"IN", "OUT", "TMP"};

struct steps {
	int p;
	int bufs;    /* 1: one buffer per rank (the sources' pictures); 3: IN OUT TMP */
	int reduces; /* per-buffer view: cells count contributions */
	size_t es;
	size_t nel[STEPS_NBUF];     /* elements of each buffer (the largest rank's) */
	int ncell[STEPS_NBUF];      /* characters per buffer */
	uint64_t full;              /* the set a complete element holds */
	uint64_t *hold[STEPS_NBUF]; /* p x nel[b] */
	uint64_t *prev[STEPS_NBUF]; /* copy at the start of a round */
	unsigned char *used;        /* p x STEPS_NBUF: the rank has this buffer */
	int token;                  /* barrier: every message carries element 0 */
};

/* The buffer a transfer names, in the view. */
static int steps_buf(const struct steps *st, int b)
{
	return st->bufs == 1 || b < 0 || b >= STEPS_NBUF ? 0 : b;
}

static char steps_rank_char(int r)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	return r < 62 ? digits[r] : '+';
}

/* One character per cell of buffer b of rank r. */
static void steps_cells_buf(const struct steps *st, int b, int r, char *out)
{
	size_t nel = st->nel[b];
	int nc = st->ncell[b];
	const uint64_t *hold = st->hold[b] + (size_t)r * nel;
	for (int c = 0; c < nc; c++) {
		size_t lo = nel * (size_t)c / (size_t)nc;
		size_t hi = nel * (size_t)(c + 1) / (size_t)nc;
		int all = 1, none = 1, minc = 64;
		uint64_t same = hi > lo ? hold[lo] : 0;
		for (size_t e = lo; e < hi; e++) {
			uint64_t h = hold[e];
			all &= (h & st->full) == st->full;
			none &= h == 0;
			same = h == same ? same : ~(uint64_t)0;
			int k = __builtin_popcountll(h);
			minc = k < minc ? k : minc;
		}
		if (st->bufs > 1 && !st->reduces) /* data: the rank it came from */
			out[c] = none ? '.'
			         : __builtin_popcountll(same) == 1
			                 ? steps_rank_char(__builtin_ctzll(same))
			                 : '*';
		else
			out[c] = all         ? '#'
			         : none      ? '.'
			         : minc == 0 ? '+'
			         : minc < 10 ? (char)('0' + minc)
			                     : '+';
	}
	out[nc] = '\0';
}

/* What rank r holds: its buffer (one-buffer view), or "IN x OUT y TMP z"
 * for the buffers it has (sep between them). */
static void steps_cells(const struct steps *st, int r, char *out, size_t len, const char *sep)
{
	if (st->bufs == 1) {
		steps_cells_buf(st, 0, r, out);
		return;
	}
	size_t n = 0;
	out[0] = '\0';
	for (int b = 0; b < STEPS_NBUF && n < len; b++) {
		if (!st->used[(size_t)r * STEPS_NBUF + b])
			continue;
		char cells[80];
		steps_cells_buf(st, b, r, cells);
		n += (size_t)snprintf(out + n, len - n, "%s%s %s", n ? sep : "", steps_buf_name[b], cells);
	}
}

static void steps_save(struct steps *st)
{
	for (int b = 0; b < st->bufs; b++)
		memcpy(st->prev[b], st->hold[b], (size_t)st->p * st->nel[b] * sizeof *st->hold[b]);
}

/* Applies the transfers [a, b) of one round. */
static void steps_apply(struct steps *st, const struct tc_transfer *x, int a, int b)
{
	steps_save(st);
	for (int i = a; i < b; i++) {
		int sb = steps_buf(st, x[i].src_buf), db = steps_buf(st, x[i].dst_buf);
		size_t n = st->token ? 1 : (size_t)(x[i].bytes / st->es);
		size_t so = st->token ? 0 : (size_t)(x[i].src_off / st->es);
		size_t d = st->token ? 0 : (size_t)(x[i].dst_off / st->es);
		for (size_t k = 0; k < n && so + k < st->nel[sb] && d + k < st->nel[db]; k++) {
			uint64_t v = st->prev[sb][(size_t)x[i].src * st->nel[sb] + so + k];
			uint64_t *h = &st->hold[db][(size_t)x[i].dst * st->nel[db] + d + k];
			*h = x[i].combine || st->token ? *h | v : v;
		}
	}
}

/* The sources' union of sets over a transfer's elements (at round start). */
static uint64_t steps_content(const struct steps *st, const struct tc_transfer *x)
{
	uint64_t s = 0;
	int sb = steps_buf(st, x->src_buf);
	size_t n = st->token ? 1 : (size_t)(x->bytes / st->es);
	size_t so = st->token ? 0 : (size_t)(x->src_off / st->es);
	for (size_t k = 0; k < n && so + k < st->nel[sb]; k++)
		s |= st->prev[sb][(size_t)x->src * st->nel[sb] + so + k];
	return s;
}

static int steps_write_dot(const struct tc_topo *t, const struct steps *st, const char *dir,
                           const char *name, const char *title, char **arc_label, const char *fmt)
{
	int p = st->p;
	char **labels = calloc((size_t)p, sizeof *labels);
	char path[4096];
	int status = CLI_OK;
	if (!labels)
		return cli_fail("out of memory");
	for (int r = 0; r < p; r++) {
		char cells[256];
		steps_cells(st, r, cells, sizeof cells, "\n");
		labels[r] = malloc(300);
		if (labels[r])
			snprintf(labels[r], 300, "%d\n%s", r, cells);
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
		have_bytes |= !strncmp(argv[i], "--bytes", 7) || !strncmp(argv[i], "--counts", 8);
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
	unsigned cf = tc_coll_flags(cs.coll);
	/* One buffer per rank unless the send and receive buffers differ in
	 * shape (p blocks, or present on some ranks only) or in content (a
	 * permutation: neither reducing nor a broadcast, the block goes
	 * elsewhere). */
	st.bufs = (cf & (TC_CF_SEND_P | TC_CF_RECV_P | TC_CF_SEND_ROOT | TC_CF_RECV_NOT0)) ||
	                          !(cf & (TC_CF_REDUCES | TC_CF_NO_SEND))
	                  ? STEPS_NBUF
	                  : 1;
	st.reduces = !!(cf & TC_CF_REDUCES);
	int pblocks = !!(cf & (TC_CF_SEND_P | TC_CF_RECV_P));
	/* Default size: one element per rank in every buffer of p blocks, else
	 * one per rank in the one block. */
	if (!have_bytes && !(cf & TC_CF_NO_DATA))
		cs.bytes = pblocks ? st.es : st.es * (uint64_t)p;
	size_t count = (size_t)(cs.bytes / st.es);
	if (count > 65536 || (pblocks && count * (size_t)p > 65536)) {
		status = cli_usage("steps: at most 65536 elements per buffer (use a smaller --bytes)");
		goto out;
	}
	if (cf & TC_CF_NO_DATA) {
		count = 1; /* a token per rank: who has heard from whom */
		st.token = 1;
	}

	struct tc_prediction pr;
	struct tc_call call = cli_case_call(&cs, cs.alg);
	call.esize = st.es;
	err = tc_predict_call(cs.t, &cs.model.md, &call, &pr);
	if (!err)
		err = tc_schedule_call(cs.t, &cs.model.md, &call, &x, &nx);
	if (err) {
		status = cli_coll_error(err, cs.coll, cs.alg, cs.t, cs.root);
		goto out;
	}
	if (st.bufs == 1) {
		st.nel[0] = count;
		st.ncell[0] = count < 16 ? (int)count : 16;
	} else {
		st.nel[0] = cf & TC_CF_SEND_P ? count * (size_t)p : count;
		st.nel[1] = cf & TC_CF_RECV_P ? count * (size_t)p : count;
		if (cf & TC_CF_VCOUNT) { /* the largest buffers of the counts */
			st.nel[0] = st.nel[1] = 0;
			for (int r = 0; r < p; r++) {
				size_t a = cli_v_send_elems(cs.coll, p, cs.root, cs.vcounts, r);
				size_t b = cli_v_recv_elems(cs.coll, p, cs.root, cs.vcounts, r);
				st.nel[0] = a > st.nel[0] ? a : st.nel[0];
				st.nel[1] = b > st.nel[1] ? b : st.nel[1];
			}
			if (st.nel[0] > 65536 || st.nel[1] > 65536) {
				status = cli_usage("steps: at most 65536 elements per buffer (use smaller "
				                   "--counts)");
				goto out;
			}
		}
		for (int k = 0; k < nx; k++) { /* the scratch the schedule uses */
			size_t n = (size_t)(x[k].bytes / st.es);
			if (x[k].src_buf == 2 && (size_t)(x[k].src_off / st.es) + n > st.nel[2])
				st.nel[2] = (size_t)(x[k].src_off / st.es) + n;
			if (x[k].dst_buf == 2 && (size_t)(x[k].dst_off / st.es) + n > st.nel[2])
				st.nel[2] = (size_t)(x[k].dst_off / st.es) + n;
		}
		if (st.nel[2] > 65536 * 4) {
			status = cli_usage("steps: the algorithm's scratch is too large to draw (use a "
			                   "smaller --bytes)");
			goto out;
		}
		/* A p-block buffer: a character per block; one block: up to 8;
		 * the v-collectives' blocks differ: an element each, up to 16. */
		for (int b = 0; b < STEPS_NBUF; b++) {
			size_t per = st.nel[b] > count && count ? st.nel[b] / count : 0;
			st.ncell[b] = per ? (int)per : st.nel[b] < 8 ? (int)st.nel[b] : 8;
			if (cf & TC_CF_VCOUNT)
				st.ncell[b] = st.nel[b] < 16 ? (int)st.nel[b] : 16;
		}
	}
	st.used = calloc((size_t)p * STEPS_NBUF, 1);
	for (int b = 0; b < st.bufs; b++) {
		st.hold[b] = calloc((size_t)p * (st.nel[b] ? st.nel[b] : 1), sizeof *st.hold[b]);
		st.prev[b] = calloc((size_t)p * (st.nel[b] ? st.nel[b] : 1), sizeof *st.prev[b]);
		if (!st.hold[b] || !st.prev[b])
			st.used = (free(st.used), NULL);
	}
	long arcs = tc_topo_props(cs.t)->arcs;
	arc_label = calloc(arcs ? (size_t)arcs : 1, sizeof *arc_label);
	if (!st.used || !arc_label) {
		status = cli_fail("out of memory");
		goto out;
	}
	/* bcast: the root's buffer is the input. */
	int bc = (cf & (TC_CF_NO_SEND | TC_CF_NO_DATA)) == TC_CF_NO_SEND;
	st.full = bc ? (uint64_t)1 << cs.root : (p == 64 ? ~(uint64_t)0 : ((uint64_t)1 << p) - 1);
	if (st.bufs == 1) {
		for (int r = 0; r < p; r++)
			for (size_t e = 0; e < count; e++)
				st.hold[0][(size_t)r * count + e] =
				        bc ? (r == cs.root ? st.full : 0) : (uint64_t)1 << r;
	} else {
		/* IN holds the rank's data (scatter's root: block j is rank j's);
		 * OUT and TMP nothing.  A rank has the buffers its shape gives it,
		 * and any the schedule touches on it. */
		for (int r = 0; r < p; r++) {
			unsigned char *u = st.used + (size_t)r * STEPS_NBUF;
			u[0] = cli_send_bytes(cs.coll, p, cs.root, r, cs.bytes) > 0;
			u[1] = cli_recv_bytes(cs.coll, p, cs.root, r, cs.bytes) > 0;
			if (cf & TC_CF_VCOUNT) {
				u[0] = cli_v_send_elems(cs.coll, p, cs.root, cs.vcounts, r) > 0;
				u[1] = cli_v_recv_elems(cs.coll, p, cs.root, cs.vcounts, r) > 0;
			}
			for (size_t e = 0; u[0] && e < st.nel[0]; e++) {
				int from = cf & TC_CF_SEND_ROOT && count ? (int)(e / count) : r;
				if ((cf & TC_CF_VCOUNT) && (cf & TC_CF_SEND_ROOT)) /* block j: rank j's */
					for (from = 0;
					     from < p - 1 && cli_v_soff(cs.coll, p, cs.root,
					                                cs.vcounts, r, from + 1) <= e;
					     from++)
						;
				st.hold[0][(size_t)r * st.nel[0] + e] = (uint64_t)1 << from;
			}
		}
		for (int k = 0; k < nx; k++) {
			st.used[(size_t)x[k].src * STEPS_NBUF + steps_buf(&st, x[k].src_buf)] = 1;
			st.used[(size_t)x[k].dst * STEPS_NBUF + steps_buf(&st, x[k].dst_buf)] = 1;
		}
	}
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
		cli_json_int(&w, "elements", (long long)count);
		if (st.bufs > 1) {
			cli_json_obj(&w, "buffer_elements");
			for (int b = 0; b < STEPS_NBUF; b++)
				cli_json_int(&w, steps_buf_name[b], (long long)st.nel[b]);
			cli_json_end_obj(&w);
		}
		cli_json_arr(&w, "steps");
	} else {
		if (cf & TC_CF_VCOUNT)
			printf("%s %s on %s, blocks up to %s (%zu %s)", tc_coll_name(cs.coll),
			       pr.algorithm, cli_topo_name(cs.t),
			       cli_bytes(cs.bytes, b1, sizeof b1), count, tc_dtype_name(cs.dt));
		else
			printf("%s %s on %s, %s%s per rank (%zu %s)", tc_coll_name(cs.coll),
			       pr.algorithm, cli_topo_name(cs.t), cli_bytes(cs.bytes, b1, sizeof b1),
			       st.bufs > 1 ? " block" : "", count, tc_dtype_name(cs.dt));
		cli_case_args_print(&cs);
		printf(": %d rounds, modelled %s\n", nrounds,
		       cli_time((double)pr.modelled_ps / TC_PS_PER_NS, b2));
		if (st.bufs == 1)
			printf("holdings: one character per %s: # complete, . nothing, "
			       "1-9 contributions combined\n",
			       st.ncell[0] == (int)count ? "element" : "group of elements");
		else if (st.reduces)
			printf("holdings per buffer (IN send, OUT receive, TMP scratch), one character per "
			       "block\nof a p-block buffer: # every rank's contribution, . nothing, 1-9 "
			       "contributions combined\n");
		else if (cf & TC_CF_VCOUNT)
			printf("holdings per buffer (IN send, OUT receive, TMP scratch), one character per "
			       "element\n(or group of elements, past 16): the rank whose data it is "
			       "(0-9a-zA-Z), . nothing,\n* mixed\n");
		else
			printf("holdings per buffer (IN send, OUT receive, TMP scratch), one character per "
			       "block\nof a p-block buffer: the rank whose data it is (0-9a-zA-Z), . "
			       "nothing, * mixed\n");
		printf("\nstart\n");
		for (int r = 0; r < p; r++) {
			char cells[300];
			steps_cells(&st, r, cells, sizeof cells, "  ");
			printf("  %3d %s\n", r, cells);
		}
	}
	if (o.dir) {
		snprintf(title, sizeof title, "%s %s on %s: start", tc_coll_name(cs.coll),
		         pr.algorithm, cli_topo_name(cs.t));
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
		steps_save(&st);
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
			printf("\nround %d: %ld message%s, %s .. %s\n", r, msgs,
			       msgs == 1 ? "" : "s", cli_time((double)t0 / TC_PS_PER_NS, b1),
			       cli_time((double)t1 / TC_PS_PER_NS, b2));
		}
		for (int k = a; k < b; k++) {
			const struct tc_transfer *y = &x[k];
			char set[160], rng[96], route[512];
			uint64_t e0 = y->src_off / st.es, e1 = (y->src_off + y->bytes) / st.es;
			uint64_t d0 = y->dst_off / st.es, d1 = (y->dst_off + y->bytes) / st.es;
			if (st.token)
				snprintf(rng, sizeof rng, "token");
			else if (st.bufs == 1)
				snprintf(rng, sizeof rng, e1 == e0 + 1 ? "[%llu]" : "[%llu..%llu)",
				         (unsigned long long)e0, (unsigned long long)e1);
			else if (e1 == e0 + 1)
				snprintf(rng, sizeof rng, "%s[%llu] to %s[%llu]",
				         steps_buf_name[steps_buf(&st, y->src_buf)],
				         (unsigned long long)e0,
				         steps_buf_name[steps_buf(&st, y->dst_buf)],
				         (unsigned long long)d0);
			else
				snprintf(rng, sizeof rng, "%s[%llu..%llu) to %s[%llu..%llu)",
				         steps_buf_name[steps_buf(&st, y->src_buf)],
				         (unsigned long long)e0, (unsigned long long)e1,
				         steps_buf_name[steps_buf(&st, y->dst_buf)],
				         (unsigned long long)d0, (unsigned long long)d1);
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
					n += (size_t)snprintf(route + n, sizeof route - n,
					                      q ? "-%d" : "%d", path[q]);
				char lab[300]; /* "src>dst", rng and " {set}" whole */
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
				cli_json_str(&w, "src_buf",
				             y->src_buf >= 0 && y->src_buf < STEPS_NBUF
				                     ? steps_buf_name[y->src_buf]
				                     : NULL);
				cli_json_str(&w, "dst_buf",
				             y->dst_buf >= 0 && y->dst_buf < STEPS_NBUF
				                     ? steps_buf_name[y->dst_buf]
				                     : NULL);
				cli_json_num(&w, "start_ns", (double)y->start_ps / TC_PS_PER_NS);
				cli_json_num(&w, "arrival_ns", (double)y->arrival_ps / TC_PS_PER_NS);
				cli_json_arr(&w, "route");
				for (int q = 0; q < np; q++)
					cli_json_int(&w, NULL, path[q]);
				cli_json_end_arr(&w);
				cli_json_str(&w, "contributions", set);
				cli_json_end_obj(&w);
			} else if (y->src == y->dst) {
				printf("  %3d local %s elements %s\n", y->src,
				       y->combine ? "combine" : "copy", rng);
			} else {
				if (st.token)
					printf("  %3d -> %-3d token", y->src, y->dst);
				else
					printf("  %3d -> %-3d %s %s, elements %s", y->src, y->dst,
					       y->combine ? "combine" : "copy",
					       cli_bytes(y->bytes, b1, sizeof b1), rng);
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
			/* holds: the buffer (one-buffer view) or OUT, the result. */
			cli_json_arr(&w, "holds");
			for (int q = 0; q < p; q++) {
				char cells[300];
				int b = st.bufs == 1 ? 0 : 1;
				if (st.bufs == 1 || st.used[(size_t)q * STEPS_NBUF + 1])
					steps_cells_buf(&st, b, q, cells);
				else
					cells[0] = '\0';
				cli_json_str(&w, NULL, cells);
			}
			cli_json_end_arr(&w);
			if (st.bufs > 1) {
				cli_json_arr(&w, "buffers");
				for (int q = 0; q < p; q++) {
					cli_json_obj(&w, NULL);
					for (int b = 0; b < STEPS_NBUF; b++) {
						char cells[80];
						if (!st.used[(size_t)q * STEPS_NBUF + b])
							continue;
						steps_cells_buf(&st, b, q, cells);
						cli_json_str(&w, steps_buf_name[b], cells);
					}
					cli_json_end_obj(&w);
				}
				cli_json_end_arr(&w);
			}
			cli_json_end_obj(&w);
		} else {
			printf("  holds after round %d:\n", r);
			for (int q = 0; q < p; q++) {
				char cells[300];
				steps_cells(&st, q, cells, sizeof cells, "  ");
				printf("  %3d %s\n", q, cells);
			}
		}
		if (o.dir) {
			char name[32];
			snprintf(name, sizeof name, "round_%03d", r);
			snprintf(title, sizeof title, "%s %s on %s: round %d of %d (%ld messages)",
			         tc_coll_name(cs.coll), pr.algorithm, cli_topo_name(cs.t), r,
			         nrounds, msgs);
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
	for (int b = 0; b < STEPS_NBUF; b++) {
		free(st.hold[b]);
		free(st.prev[b]);
	}
	free(st.used);
	tc_schedule_free(x);
	cli_case_free(&cs);
	return status;
}
