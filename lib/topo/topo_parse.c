/* SPDX-License-Identifier: MIT */
/*
 * lib/topo/topo_parse.c - the topology specification parser.
 *
 * Grammar (no white space, names in lower case, sizes in decimal):
 *
 *   spec   = "complete:" num | "ring:" num | "chain:" num | "star:" num
 *          | "mesh:" dims | "torus:" dims | "hypercube:" num
 *          | "tree:" num ":" num
 *   dims   = num *("x" num)            ; 1 .. TC_TOPO_MAX_DIMS numbers
 *   num    = 1*DIGIT                   ; no sign
 *
 * tc_topo_parse_p() also takes a family alone ("ring", "hypercube",
 * "tree:K", ...) with the node count p, and says in words what is wrong
 * with a spec it refuses.
 *
 * The parser reads the string once, left to right, and never past its
 * terminating NUL; a number too large for an int is rejected as it is read,
 * so any input string is safe.  The range checks are made here, where they
 * can be explained, before tc_topo_create() repeats them.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error_detail.h"
#include "topo/topo_internal.h"
#include "topocoll/error.h"

_Static_assert((long long)TC_TOPO_MAX_COMPLETE *(TC_TOPO_MAX_COMPLETE - 1) <= TC__TOPO_MAX_ARCS &&
                       (long long)(TC_TOPO_MAX_COMPLETE + 1) * TC_TOPO_MAX_COMPLETE > TC__TOPO_MAX_ARCS,
               "TC_TOPO_MAX_COMPLETE is the largest complete graph within the arc limit");

/* Reads a decimal number at *s; returns 0 and advances *s, 1 when there is
 * no digit, 2 when the value exceeds INT_MAX (*s then past the digits). */
static int tc__parse_num(const char **s, int *val)
{
	const char *c = *s;
	long long v = 0;
	int big = 0;

	if (*c < '0' || *c > '9')
		return 1;
	for (; *c >= '0' && *c <= '9'; c++) {
		if (!big)
			v = v * 10 + (*c - '0');
		if (v > INT_MAX)
			big = 1;
	}
	*s = c;
	if (big)
		return 2;
	*val = (int)v;
	return 0;
}

static const struct {
	const char *name;
	enum tc_topo_kind kind;
	const char *form; /* the spec's form, for messages */
} tc__spec_kinds[] = {
        {"complete", TC_TOPO_COMPLETE, "complete:P"},
        {"ring", TC_TOPO_RING, "ring:P"},
        {"chain", TC_TOPO_CHAIN, "chain:P"},
        {"mesh", TC_TOPO_MESH, "mesh:AxB..."},
        {"torus", TC_TOPO_TORUS, "torus:AxB..."},
        {"hypercube", TC_TOPO_HYPERCUBE, "hypercube:D"},
        {"star", TC_TOPO_STAR, "star:P"},
        {"tree", TC_TOPO_TREE, "tree:K:P"},
};
#define TC__NKINDS (int)(sizeof tc__spec_kinds / sizeof tc__spec_kinds[0])

/* Writes a message into why (when not NULL) and returns err. */
static int tc__why(int err, char *why, size_t len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int tc__why(int err, char *why, size_t len, const char *fmt, ...)
{
	if (why && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

int tc_topo_squarest(int p, int *a, int *b)
{
	tc__clear_detail();
	if (!a || !b) {
		tc__set_detail("tc_topo_squarest: %s is NULL", !a ? "a" : "b");
		return TC_EINVAL;
	}
	if (p < 1)
		return TC_EINVAL;
	int best = 1;
	for (long k = 2; k * k <= p; k++)
		if (p % k == 0)
			best = (int)k;
	*a = best;
	*b = p / best;
	return best >= 2 || p == 1 ? 0 : TC_ETOPO;
}

/* The spec of a family given p, written into buf; 0 or TC_ETOPO (why). */
static int tc__family_spec(int k, int arity, int p, char *buf, size_t blen, char *why, size_t len)
{
	const char *name = tc__spec_kinds[k].name;
	int a, b;

	if (p > TC_TOPO_MAX_NODES)
		return tc__why(TC_ETOPO, why, len, "%s of p = %d nodes: at most %d nodes", name, p,
		               TC_TOPO_MAX_NODES);
	switch (tc__spec_kinds[k].kind) {
	case TC_TOPO_HYPERCUBE:
		if (p & (p - 1))
			return tc__why(TC_ETOPO, why, len, "hypercube needs p a power of two, got %d", p);
		snprintf(buf, blen, "hypercube:%d", __builtin_ctz((unsigned)p));
		return 0;
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
		if (tc_topo_squarest(p, &a, &b))
			return tc__why(TC_ETOPO, why, len,
			               "%s needs p = a x b with a, b >= 2, got the prime %d; give the "
			               "shape (e.g. %s:1x%d)",
			               name, p, name, p);
		snprintf(buf, blen, "%s:%dx%d", name, a, b);
		return 0;
	case TC_TOPO_TREE:
		snprintf(buf, blen, "tree:%d:%d", arity, p);
		return 0;
	default:
		snprintf(buf, blen, "%s:%d", name, p);
		return 0;
	}
}

/* What is wrong with a number of the spec (tc__parse_num's code c). */
static int tc__bad_num(int c, const char *spec, const char *what, int k, char *why, size_t len)
{
	if (c == 2)
		return tc__why(TC_ETOPO, why, len, "'%s': the %s is too large (at most %d nodes)",
		               spec, what, TC_TOPO_MAX_NODES);
	return tc__why(TC_ETOPO, why, len, "'%s': expected the %s, a decimal number (the form is %s)",
	               spec, what, tc__spec_kinds[k].form);
}

/* Parses a full spec (the family's k and the text after its colon, s) and
 * builds it, explaining any refusal. */
static int tc__parse_full(const char *spec, int k, const char *s, struct tc_topo **out, char *why,
                          size_t len)
{
	const enum tc_topo_kind kind = tc__spec_kinds[k].kind;
	const char *name = tc__spec_kinds[k].name;
	int dims[TC_TOPO_MAX_DIMS];
	int ndims = 0, arity = 0, c;
	long long nodes = 1;

	switch (kind) {
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
		for (;;) {
			if (ndims == TC_TOPO_MAX_DIMS)
				return tc__why(TC_ETOPO, why, len, "'%s': at most %d dimensions",
				               spec, TC_TOPO_MAX_DIMS);
			if ((c = tc__parse_num(&s, &dims[ndims])))
				return tc__bad_num(c, spec, "side", k, why, len);
			if (dims[ndims] < 1)
				return tc__why(TC_ETOPO, why, len, "'%s': every side is at least 1", spec);
			nodes *= dims[ndims];
			if (nodes > TC_TOPO_MAX_NODES)
				return tc__why(TC_ETOPO, why, len, "'%s' has too many nodes: at most %d",
				               spec, TC_TOPO_MAX_NODES);
			ndims++;
			if (*s != 'x')
				break;
			s++;
		}
		break;
	case TC_TOPO_TREE:
		if ((c = tc__parse_num(&s, &arity)))
			return tc__bad_num(c, spec, "arity K", k, why, len);
		if (arity < 1)
			return tc__why(TC_ETOPO, why, len, "'%s': the arity K is at least 1", spec);
		if (*s == '\0')
			return tc__why(TC_ETOPO, why, len,
			               "'%s' gives the arity K = %d but not the node count P: the form "
			               "is tree:K:P (e.g. tree:%d:%d), or give p",
			               spec, arity, arity, arity + 1);
		if (*s != ':')
			break;
		s++;
		/* fall through */
	default:
		if ((c = tc__parse_num(&s, &dims[0])))
			return tc__bad_num(c, spec,
			                   kind == TC_TOPO_HYPERCUBE ? "dimension D" : "node count P",
			                   k, why, len);
		ndims = 1;
		if (kind == TC_TOPO_HYPERCUBE) {
			if (dims[0] > 20 || (1 << dims[0]) > TC_TOPO_MAX_NODES)
				return tc__why(TC_ETOPO, why, len,
				               "'%s': hypercube:D has 2^D nodes, at most %d (D <= 20)",
				               spec, TC_TOPO_MAX_NODES);
			break;
		}
		if (dims[0] < 1)
			return tc__why(TC_ETOPO, why, len, "'%s': the node count is at least 1", spec);
		if (dims[0] > TC_TOPO_MAX_NODES)
			return tc__why(TC_ETOPO, why, len, "'%s' has too many nodes: at most %d",
			               spec, TC_TOPO_MAX_NODES);
		if (kind == TC_TOPO_COMPLETE && dims[0] > TC_TOPO_MAX_COMPLETE)
			return tc__why(TC_ENOMEM, why, len,
			               "'%s': a complete graph has at most %d nodes (its p(p-1) "
			               "channels would not fit in memory)",
			               spec, TC_TOPO_MAX_COMPLETE);
		break;
	}
	if (*s != '\0')
		return tc__why(TC_ETOPO, why, len, "'%s': unexpected '%s' after the %s (the form is %s)",
		               spec, s, ndims > 1 ? "sides" : "size", tc__spec_kinds[k].form);
	int err = tc_topo_create(kind, ndims, dims, arity, out);
	if (err == TC_ENOMEM)
		return tc__why(err, why, len, "'%s': out of memory", spec);
	if (err)
		return tc__why(err, why, len, "'%s' is not a valid %s topology", spec, name);
	return 0;
}

int tc_topo_parse_p(const char *spec, int p, struct tc_topo **out, char *why, size_t len)
{
	tc__clear_detail();
	char buf[64];
	int k = -1, arity = 2;
	const char *rest = NULL;

	if (why && len)
		why[0] = '\0';
	if (!out || p < 0)
		return tc__why(TC_EINVAL, why, len, "%s", !out ? "no output topology" : "p < 0");
	if (!spec)
		spec = "complete";
	for (int i = 0; i < TC__NKINDS && k < 0; i++) {
		size_t n = strlen(tc__spec_kinds[i].name);
		if (!strncmp(spec, tc__spec_kinds[i].name, n) && (spec[n] == ':' || !spec[n])) {
			k = i;
			rest = spec[n] ? spec + n + 1 : NULL;
		}
	}
	if (k < 0)
		return tc__why(TC_ETOPO, why, len,
		               "unknown topology '%s' (complete:P ring:P chain:P mesh:AxB torus:AxB "
		               "hypercube:D star:P tree:K:P)",
		               spec);
	/* The family alone, or a tree's arity alone: p gives the size. */
	int family = !rest;
	if (rest && tc__spec_kinds[k].kind == TC_TOPO_TREE && p > 0) {
		const char *s = rest;
		if (!tc__parse_num(&s, &arity) && *s == '\0')
			family = 1;
	}
	if (family) {
		if (p == 0) {
			if (rest) /* tree:K: explained by the full parse */
				return tc__parse_full(spec, k, rest, out, why, len);
			return tc__why(TC_ETOPO, why, len,
			               "topology '%s' needs its size: the form is %s, or give p",
			               spec, tc__spec_kinds[k].form);
		}
		if (arity < 1)
			return tc__why(TC_ETOPO, why, len, "'%s': the arity K is at least 1", spec);
		int err = tc__family_spec(k, arity, p, buf, sizeof buf, why, len);
		if (err)
			return err;
		return tc__parse_full(buf, k, strchr(buf, ':') + 1, out, why, len);
	}
	struct tc_topo *t;
	int err = tc__parse_full(spec, k, rest, &t, why, len);
	if (err)
		return err;
	if (p > 0 && t->p != p) {
		int n = t->p;
		tc_topo_destroy(t);
		return tc__why(TC_EINVAL, why, len, "p = %d does not fit %s (%d nodes)", p, spec, n);
	}
	*out = t;
	return 0;
}

int tc_topo_parse(const char *spec, struct tc_topo **out)
{
	tc__clear_detail();
	if (!spec || !out)
		return TC_EINVAL;
	return tc_topo_parse_p(spec, 0, out, NULL, 0);
}
