/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_coll_args.c - the topocoll tool's collectives (see cli.h):
 * their names, algorithms, datatypes and operators as arguments, the
 * members of a call and the bytes each rank sends and receives, the
 * messages of a refused call, and the lower bounds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- collectives, datatypes -------------------------------------------- */

int cli_coll(const char *s, enum tc_coll *out)
{
	if (!tc_coll_parse(s, out))
		return 0;
	char list[256];
	return cli_usage("unknown collective '%s' (available: %s)", s,
	                 cli_coll_list(0, list, sizeof list));
}

const char *cli_coll_list(unsigned flags, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int c = 0; c < TC_COLL_COUNT && n < len; c++)
		if ((tc_coll_flags((enum tc_coll)c) & flags) == flags)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
			                      tc_coll_name((enum tc_coll)c));
	return buf;
}

uint64_t cli_send_bytes(enum tc_coll c, int p, int root, int r, uint64_t m)
{
	unsigned f = tc_coll_flags(c);
	if (f & (TC_CF_NO_DATA | TC_CF_NO_SEND) || (f & TC_CF_SEND_ROOT && r != root))
		return 0;
	return f & TC_CF_SEND_P ? m * (uint64_t)p : m;
}

uint64_t cli_recv_bytes(enum tc_coll c, int p, int root, int r, uint64_t m)
{
	unsigned f = tc_coll_flags(c);
	if (f & TC_CF_NO_DATA || (f & TC_CF_RECV_ROOT && r != root))
		return 0;
	return f & TC_CF_RECV_P ? m * (uint64_t)p : m;
}

int cli_takes_part(enum tc_coll c, int root, const int *members, int n, int r)
{
	if (!(tc_coll_flags(c) & TC_CF_MEMBERS) || r == root || !members)
		return 1;
	for (int i = 0; i < n; i++)
		if (members[i] == r)
			return 1;
	return 0;
}

int cli_parse_members(const char *s, int p, int **out, int *n)
{
	*out = NULL;
	*n = 0;
	unsigned char *seen = calloc((size_t)p, 1);
	int *m = malloc((size_t)p * sizeof *m);
	int k = 0;
	const char *c = s;
	if (!seen || !m) {
		free(seen);
		free(m);
		return cli_fail("out of memory");
	}
	for (int r = 0; !s && r < p; r++) /* no list: every rank */
		m[k++] = r;
	while (c && *c) {
		char *end;
		errno = 0;
		long lo = strtol(c, &end, 10), hi = lo;
		if (end == c || errno)
			goto bad;
		if (*end == '-') {
			c = end + 1;
			hi = strtol(c, &end, 10);
			if (end == c || errno || hi < lo)
				goto bad;
		}
		if (lo < 0 || hi >= p) {
			free(seen);
			free(m);
			return cli_usage("--members: rank %ld out of range (0..%d)",
			                 lo < 0 ? lo : hi, p - 1);
		}
		for (long v = lo; v <= hi; v++) {
			if (seen[v]) {
				free(seen);
				free(m);
				return cli_usage("--members: rank %ld listed twice", v);
			}
			seen[v] = 1;
			m[k++] = (int)v;
		}
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		c = end;
	}
	free(seen);
	*out = m;
	*n = k;
	return 0;
bad:
	free(seen);
	free(m);
	return cli_usage("--members: expected a comma list of ranks and ranges (e.g. 1,4,6-9), "
	                 "got '%s'",
	                 s);
}

int cli_perm_source(enum tc_coll c, int p, long q, int gray_ring, int r)
{
	switch (c) {
	case TC_COLL_SHIFT:
		if (gray_ring)
			return (int)tc_gray(
			        (uint32_t)(((long)tc_gray_inverse((uint32_t)r) - q % p) % p + p) %
			        (uint32_t)p);
		return (int)((((long)r - q % p) % p + p) % p);
	case TC_COLL_GRAY2BINARY:
		return (int)tc_gray((uint32_t)r);
	case TC_COLL_BINARY2GRAY:
		return (int)tc_gray_inverse((uint32_t)r);
	default:
		return r;
	}
}

const char *cli_alg_list(enum tc_coll coll, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	const char *a;
	for (int i = 0; (a = tc_alg_name(coll, i)) != NULL && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", a);
	if (!n)
		snprintf(buf, len, "none yet");
	return buf;
}

int cli_alg_index(enum tc_coll coll, const char *alg)
{
	const char *a;
	for (int i = 0; (a = tc_alg_name(coll, i)) != NULL; i++)
		if (!strcmp(a, alg))
			return i;
	return -1;
}

/* The index *out of s among the n names at(0 .. n-1); else the usage
 * error of option opt, naming the n as the kind it lists. */
static int cli_named(const char *opt, const char *kind, const char *s, int n,
                     const char *(*at)(int), int *out)
{
	char list[256] = "";
	size_t used = 0;
	for (int i = 0; i < n; i++) {
		const char *name = at(i);
		if (!strcmp(s, name)) {
			*out = i;
			return 0;
		}
		if (used < sizeof list)
			used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
			                         i ? ", " : "", name);
	}
	return cli_usage("%s: unknown %s '%s' (available: %s)", opt, kind, s, list);
}

static const char *cli_dtype_at(int i)
{
	return tc_dtype_name((enum tc_dtype)i);
}

static const char *cli_op_at(int i)
{
	return tc_op_name((enum tc_op)i);
}

int cli_dtype(const char *s, enum tc_dtype *out)
{
	int i, err = cli_named("--dtype", "datatype", s, TC_DTYPE_COUNT, cli_dtype_at, &i);
	if (!err)
		*out = (enum tc_dtype)i;
	return err;
}

int cli_op(const char *s, enum tc_op *out)
{
	int i, err = cli_named("--op", "operator", s, TC_OP_USER, cli_op_at, &i);
	if (!err)
		*out = (enum tc_op)i;
	return err;
}

int cli_coll_error(int err, enum tc_coll coll, const char *alg, const struct tc_topo *t, int root)
{
	char list[512];
	const char *cn = tc_coll_name(coll);
	switch (err) {
	case TC_EALG:
		return cli_usage("unknown algorithm '%s' for %s (available: %s)", alg, cn,
		                 cli_alg_list(coll, list, sizeof list));
	case TC_ENOTSUP:
		if (!tc_alg_name(coll, 0))
			return cli_usage("%s has no algorithm in this build yet", cn);
		if (!alg || !strcmp(alg, "auto"))
			return cli_usage("no %s algorithm applies to %s", cn, cli_topo_name(t));
		/* The library says which restriction fails and what applies:
		 * in this thread's detail when the call was made here, or by
		 * asking again (a run's ranks are other threads). */
		if (strncmp(tc_error_detail(), "algorithm '", 11)) {
			struct tc_model md;
			tc_model_default(&md);
			tc_alg_applies(t, &md, coll, alg);
		}
		if (!strncmp(tc_error_detail(), "algorithm '", 11))
			return cli_usage("%s", tc_error_detail());
		return cli_usage("algorithm '%s' of %s does not apply to %s", alg, cn, cli_topo_name(t));
	case TC_EROOT:
		return cli_usage("root %d out of range for %s (0..%d)", root, cli_topo_name(t),
		                 tc_topo_nodes(t) - 1);
	case TC_EOVERFLOW:
	case TC_EINVAL:
		return cli_usage("%s on %s: %s", cn, cli_topo_name(t), tc_strerror(err));
	case TC_ELIMIT:
		return cli_fail("%s", tc_error_detail());
	default:
		return cli_fail("%s on %s failed: %s (%s)", cn, cli_topo_name(t), tc_strerror(err),
		                tc_err_name(err));
	}
}

const char *cli_coll_reason(int err, char *buf, size_t len)
{
	/* The library's line names the call ("allreduce linear on 1048576
	 * ranks: ") and ends with advice ("; no exact closed form ...",
	 * ": choose another algorithm ..."): the row keeps what lies between. */
	const char *d = tc_error_detail(), *s = strstr(d, " ranks: "), *e = NULL;
	if (err == TC_ELIMIT && s) {
		s += strlen(" ranks: ");
		if (!(e = strstr(s, "; ")) && !(e = strstr(s, ": choose")))
			e = s + strlen(s);
		snprintf(buf, len, "%.*s", (int)(e - s), s);
	} else {
		snprintf(buf, len, "%s", tc_strerror(err));
	}
	return buf;
}

int cli_lower_bound(const struct tc_topo *t, enum tc_lb_coll c, int root, double m,
                    const struct tc_model *md, struct tc_lower_bound *out)
{
	enum tc_topo_kind kind = tc_topo_kind(t);
	int dims[TC_TOPO_MAX_DIMS];
	int nd = 1;
	if (kind == TC_TOPO_HYPERCUBE) {
		dims[0] = tc_topo_dims(t, NULL);
	} else if (kind == TC_TOPO_MESH || kind == TC_TOPO_TORUS) {
		nd = tc_topo_dims(t, dims);
	} else {
		dims[0] = tc_topo_nodes(t);
	}
	if (root < 0)
		return tc_lower_bound(c, kind, nd, dims, m, md, out);
	return tc_lower_bound_root(c, kind, nd, dims, root, m, md, out);
}
