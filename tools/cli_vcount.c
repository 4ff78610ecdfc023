/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_vcount.c - the counts of the variable-count collectives
 * (allgatherv, gatherv, scatterv, alltoallv) on the command line (--counts)
 * and the layout of their buffers: every block packed, in rank order, as
 * struct tc_call implies (cli.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Numbers a v-collective's counts hold: p, or p * p for alltoallv. */
static size_t vlen(enum tc_coll c, int p)
{
	return c == TC_COLL_ALLTOALLV ? (size_t)p * (size_t)p : (size_t)p;
}

int cli_vcounts_parse(const char *s, enum tc_coll c, int p, size_t es, size_t **out)
{
	const size_t n = vlen(c, p);
	const char *name = tc_coll_name(c);
	*out = NULL;
	size_t *v = calloc(n, sizeof *v);
	if (!v)
		return cli_fail("out of memory");
	const uint64_t max = TC_MAX_MESSAGE / es;
	if (!strncmp(s, "uniform:", 8)) {
		long x;
		if (cli_parse_long("--counts uniform:N", s + 8, 0,
		                   (long)(max < LONG_MAX ? max : LONG_MAX), &x)) {
			free(v);
			return CLI_USAGE;
		}
		for (size_t i = 0; i < n; i++)
			v[i] = (size_t)x;
	} else if (!strcmp(s, "ramp")) {
		for (size_t i = 0; i < n; i++)
			v[i] = c == TC_COLL_ALLTOALLV ? i / (size_t)p + i % (size_t)p + 1 : i + 1;
	} else if (!strchr(s, ',') && !strchr("+-0123456789", *s)) {
		/* One item, no number: a form misspelt (ramp:3), not a list one
		 * count long. */
		free(v);
		return cli_usage("--counts: expected a list of %zu counts, uniform:N or ramp (ramp "
		                 "takes no value), got '%s'",
		                 n, s);
	} else {
		size_t len = strlen(s);
		char *buf = malloc(len + 1);
		char **items = malloc((n + 1) * sizeof *items);
		if (!buf || !items) {
			free(buf);
			free(items);
			free(v);
			return cli_fail("out of memory");
		}
		memcpy(buf, s, len + 1);
		size_t given = 1;
		for (const char *q = s; *q; q++)
			given += *q == ',';
		int k = given == n ? cli_split(buf, items, (int)n) : 0;
		int st = CLI_OK;
		if (given != n)
			st = cli_usage("--counts: %s on %d ranks takes %zu counts%s, got %zu", name,
			               p, n,
			               c == TC_COLL_ALLTOALLV ? " (p x p, row i: what rank i sends to each)"
			                                      : " (one per rank)",
			               given);
		else if (k < 0)
			st = cli_usage("--counts: bad list '%s' (comma-separated numbers of elements, "
			               "uniform:N or ramp)",
			               s);
		for (int i = 0; !st && i < k; i++) {
			long x;
			if (cli_parse_long("--counts", items[i], 0,
			                   (long)(max < LONG_MAX ? max : LONG_MAX), &x))
				st = CLI_USAGE;
			else
				v[i] = (size_t)x;
		}
		free(buf);
		free(items);
		if (st) {
			free(v);
			return st;
		}
	}
	*out = v;
	return CLI_OK;
}

size_t *cli_vcounts_uniform(enum tc_coll c, int p, size_t elems)
{
	size_t n = vlen(c, p), *v = malloc(n * sizeof *v);
	for (size_t i = 0; v && i < n; i++)
		v[i] = elems;
	return v;
}

struct tc_call cli_vcall(struct tc_call call, const size_t *v)
{
	if (tc_coll_flags(call.coll) & TC_CF_VCOUNT) {
		call.counts = call.coll == TC_COLL_ALLTOALLV ? NULL : v;
		call.matrix = call.coll == TC_COLL_ALLTOALLV ? v : NULL;
	}
	return call;
}

uint64_t cli_v_elems(enum tc_coll c, int p, int root, const size_t *v, int i, int j)
{
	switch (c) {
	case TC_COLL_ALLGATHERV:
		return v[i];
	case TC_COLL_GATHERV:
		return j == root ? v[i] : 0;
	case TC_COLL_SCATTERV:
		return i == root ? v[j] : 0;
	default:
		return v[(size_t)i * (size_t)p + (size_t)j];
	}
}

uint64_t cli_v_soff(enum tc_coll c, int p, int root, const size_t *v, int i, int j)
{
	if (c == TC_COLL_ALLGATHERV || c == TC_COLL_GATHERV)
		return 0; /* one block, sent to every rank (the root) */
	uint64_t o = 0;
	for (int k = 0; k < j; k++)
		o += cli_v_elems(c, p, root, v, i, k);
	return o;
}

uint64_t cli_v_send_elems(enum tc_coll c, int p, int root, const size_t *v, int r)
{
	if (c == TC_COLL_ALLGATHERV || c == TC_COLL_GATHERV)
		return v[r];
	return cli_v_soff(c, p, root, v, r, p);
}

uint64_t cli_v_roff(enum tc_coll c, int p, int root, const size_t *v, int i, int j)
{
	uint64_t o = 0;
	for (int k = 0; k < i; k++)
		o += cli_v_elems(c, p, root, v, k, j);
	return o;
}

uint64_t cli_v_recv_elems(enum tc_coll c, int p, int root, const size_t *v, int r)
{
	return cli_v_roff(c, p, root, v, p, r);
}

uint64_t cli_v_max_block(enum tc_coll c, int p, const size_t *v)
{
	uint64_t m = 0;
	for (size_t i = 0; i < vlen(c, p); i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

const char *cli_vcounts_str(enum tc_coll c, int p, const size_t *v, char *buf, size_t len)
{
	size_t n = vlen(c, p), at = 0, i = 0;
	buf[0] = '\0';
	for (; i < n && at + 28 < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%zu", i ? "," : "", v[i]);
	if (i < n)
		snprintf(buf + at, len - at, ",...");
	return buf;
}
