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
 * The parser reads the string once, left to right, and never past its
 * terminating NUL; a number too large for an int is rejected as it is read,
 * so any input string is safe.  Range checks (sizes >= 1, node count) are
 * left to tc_topo_create().
 */
#include <limits.h>
#include <string.h>

#include "topo/topo_internal.h"
#include "topocoll/error.h"

/* Reads a decimal number at *s; returns 0 and advances *s, or TC_ETOPO when
 * there is no digit or the value exceeds INT_MAX. */
static int tc__parse_num(const char **s, int *val)
{
	const char *c = *s;
	long long v = 0;

	if (*c < '0' || *c > '9')
		return TC_ETOPO;
	while (*c >= '0' && *c <= '9') {
		v = v * 10 + (*c - '0');
		if (v > INT_MAX)
			return TC_ETOPO;
		c++;
	}
	*val = (int)v;
	*s = c;
	return 0;
}

static const struct {
	const char *name;
	enum tc_topo_kind kind;
} tc__spec_kinds[] = {
	{"complete:", TC_TOPO_COMPLETE}, {"ring:", TC_TOPO_RING},
	{"chain:", TC_TOPO_CHAIN},       {"mesh:", TC_TOPO_MESH},
	{"torus:", TC_TOPO_TORUS},       {"hypercube:", TC_TOPO_HYPERCUBE},
	{"star:", TC_TOPO_STAR},         {"tree:", TC_TOPO_TREE},
};

int tc_topo_parse(const char *spec, struct tc_topo **out)
{
	int dims[TC_TOPO_MAX_DIMS];
	int ndims = 0, arity = 0;
	const char *s = NULL;
	enum tc_topo_kind kind = TC_TOPO_COMPLETE;

	if (!spec || !out)
		return TC_EINVAL;
	for (size_t i = 0; i < sizeof tc__spec_kinds / sizeof tc__spec_kinds[0]; i++) {
		size_t n = strlen(tc__spec_kinds[i].name);
		if (strncmp(spec, tc__spec_kinds[i].name, n) == 0) {
			kind = tc__spec_kinds[i].kind;
			s = spec + n;
			break;
		}
	}
	if (!s)
		return TC_ETOPO;

	switch (kind) {
	case TC_TOPO_MESH:
	case TC_TOPO_TORUS:
		for (;;) {
			if (ndims == TC_TOPO_MAX_DIMS || tc__parse_num(&s, &dims[ndims]))
				return TC_ETOPO;
			ndims++;
			if (*s != 'x')
				break;
			s++;
		}
		break;
	case TC_TOPO_TREE:
		if (tc__parse_num(&s, &arity) || *s != ':')
			return TC_ETOPO;
		s++;
		/* fall through */
	default:
		if (tc__parse_num(&s, &dims[0]))
			return TC_ETOPO;
		ndims = 1;
		break;
	}
	if (*s != '\0')
		return TC_ETOPO;
	return tc_topo_create(kind, ndims, dims, arity, out);
}
