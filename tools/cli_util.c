/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_util.c - shared helpers of the topocoll tool (see cli.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "topocoll/calibrate.h"

/* ---- errors ------------------------------------------------------------ */

int cli_msg_quiet;

static int cli_vmsg(int status, const char *fmt, va_list ap)
{
	if (cli_msg_quiet)
		return status;
	fputs("topocoll: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	return status;
}

int cli_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int s = cli_vmsg(CLI_USAGE, fmt, ap);
	va_end(ap);
	return s;
}

int cli_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int s = cli_vmsg(CLI_FAIL, fmt, ap);
	va_end(ap);
	return s;
}

/* ---- options ----------------------------------------------------------- */

int cli_is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

int cli_opt_last_wins;

/* Is a the option name, written "--name" or "--name=VALUE"? */
static int cli_is_opt(const char *a, const char *name, size_t n)
{
	return !strncmp(a, name, n) && (a[n] == '=' || !a[n]);
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (!cli_is_opt(a, name, n))
		return 0;
	if (!a[n] && *i + 1 >= argc)
		return cli_usage("%s needs a value", name);
	*val = a[n] ? a + n + 1 : argv[*i + 1];
	/* Every such option holds one value: given twice, it is refused
	 * rather than the last one winning unsaid. */
	for (int j = 0; j < *i && !cli_opt_last_wins; j++)
		if (cli_is_opt(argv[j], name, n))
			return cli_usage("%s is given twice ('%s', then '%s'); give it once", name,
			                 argv[j][n]     ? argv[j] + n + 1
			                 : j + 1 < argc ? argv[j + 1]
			                                : "",
			                 *val);
	*i += !a[n];
	return 1;
}

int cli_wants_mpi(int argc, char **argv)
{
	int mpi = 0;
	for (int i = 0; i < argc; i++) {
		if (cli_is_help(argv[i]))
			return 0;
		if (!strcmp(argv[i], "--engine=mpi") ||
		    (!strcmp(argv[i], "--engine") && i + 1 < argc && !strcmp(argv[i + 1], "mpi")))
			mpi = 1;
	}
	return mpi;
}

int cli_unknown(const char *cmd, const char *arg)
{
	if (arg[0] == '-')
		return cli_usage("%s: unknown option '%s' (see topocoll %s --help)", cmd, arg, cmd);
	return cli_usage("%s: unexpected argument '%s' (see topocoll %s --help)", cmd, arg, cmd);
}

/*
 * A size in bytes: a decimal integer, or a decimal number with an exponent
 * that makes it an integer (1e6, 2.5e3), then an optional unit, any case:
 * k, kb, kib (2^10), m, mb, mib (2^20), g.. (2^30), t.. (2^40), b (bytes).
 * The units are binary, as everywhere in the tool (4K = 4096).
 */
int cli_parse_size(const char *what, const char *s, uint64_t max, uint64_t *out)
{
	const char *p = s;
	uint64_t v = 0;
	int frac = 0; /* digits after the point */
	int big = 0;
	if (*p < '0' || *p > '9')
		goto bad;
	for (; (*p >= '0' && *p <= '9') || (*p == '.' && !frac); p++) {
		if (*p == '.') {
			frac = -1;
			continue;
		}
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			big = 1;
		else
			v = v * 10 + d;
		if (frac < 0 || frac > 0)
			frac = frac < 0 ? 1 : frac + 1;
	}
	if (frac < 0)
		goto bad; /* "4." */
	long e = 0;
	if (*p == 'e' || *p == 'E') {
		char *end;
		errno = 0;
		if (p[1] < '0' || p[1] > '9')
			goto bad;
		e = strtol(p + 1, &end, 10);
		if (errno || e > 30)
			goto big;
		p = end;
	}
	if (big)
		goto big;
	/* v * 10^(e - frac) must be an integer. */
	for (; e < frac; frac--) {
		if (v % 10)
			goto bad;
		v /= 10;
	}
	for (; e > frac; e--) {
		if (v > UINT64_MAX / 10)
			goto big;
		v *= 10;
	}
	int shift = 0;
	switch (*p | 0x20) {
	case 'k':
		shift = 10;
		break;
	case 'm':
		shift = 20;
		break;
	case 'g':
		shift = 30;
		break;
	case 't':
		shift = 40;
		break;
	default:
		break;
	}
	if (shift) {
		p++;
		if (*p == 'i' || *p == 'I')
			p++;
	}
	if (*p == 'b' || *p == 'B')
		p++;
	if (*p)
		goto bad;
	if (shift && v > (UINT64_MAX >> shift))
		goto big;
	v <<= shift;
	if (v > max)
		goto big;
	*out = v;
	return 0;
bad:
	return cli_usage("%s: '%s' is not a size in bytes (e.g. 0, 8, 4K, 4kb, 16M, 1MiB, 2GiB, 1e6)",
	                 what, s);
big:;
	char b[32];
	return cli_usage("%s: '%s' is too large (at most %s)", what, s, cli_size_str(max, b, sizeof b));
}

const char *cli_size_str(uint64_t v, char *buf, size_t len)
{
	static const char suf[] = {'T', 'G', 'M', 'K'};
	for (int k = 0; k < 4; k++) {
		int shift = 40 - 10 * k;
		if (v && v % ((uint64_t)1 << shift) == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(v >> shift), suf[k]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

const char *cli_bytes(uint64_t v, char *buf, size_t len)
{
	static const char *const suf[] = {"TiB", "GiB", "MiB", "KiB"};
	for (int k = 0; k < 4; k++) {
		int shift = 40 - 10 * k;
		if (v && v % ((uint64_t)1 << shift) == 0) {
			snprintf(buf, len, "%llu %s", (unsigned long long)(v >> shift), suf[k]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu B", (unsigned long long)v);
	return buf;
}

int cli_parse_long(const char *what, const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return cli_usage("%s: expected an integer in %ld..%ld, got '%s'", what, lo, hi, s);
	*out = v;
	return 0;
}

int cli_parse_node(const char *what, const char *s, const struct tc_topo *t, long *out)
{
	if (!t)
		return cli_parse_long(what, s, 0, TC_TOPO_MAX_NODES - 1, out);
	const int n = tc_topo_nodes(t);
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v >= n)
		return cli_usage("%s: expected a node of %s (0..%d), got '%s'", what,
		                 cli_topo_name(t), n - 1, s);
	*out = v;
	return 0;
}

int cli_parse_double(const char *what, const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return cli_usage("%s: expected a number in %g..%g, got '%s'", what, lo, hi, s);
	*out = v;
	return 0;
}

int cli_split(char *s, char **items, int max)
{
	int n = 0;
	for (char *tok = s;; n++) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = '\0';
		if (!*tok || n >= max)
			return -1;
		items[n] = tok;
		if (!comma)
			return n + 1;
		tok = comma + 1;
	}
}

/* ---- the model --------------------------------------------------------- */

void cli_model_init(struct cli_model *m)
{
	memset(m, 0, sizeof *m);
	tc_model_default(&m->md);
}

int cli_choice(const char *what, const char *v, const char *a, const char *b, int *out)
{
	if (!strcmp(v, a))
		*out = 0;
	else if (!strcmp(v, b))
		*out = 1;
	else
		return cli_usage("%s: expected %s or %s, got '%s'", what, a, b, v);
	return 0;
}

int cli_model_opt(int argc, char **argv, int *i, struct cli_model *m)
{
	static const char *const dbl[] = {"--ts", "--tw", "--th", "--tc"};
	static const double hi[] = {1e12, 1e9, 1e12, 1e9};
	double *dst[] = {&m->md.ts_ns, &m->md.tw_ns, &m->md.th_ns, &m->md.tc_ns};
	const char *v = NULL;
	int r;
	for (int k = 0; k < 4; k++) {
		if ((r = cli_opt(argc, argv, i, dbl[k], &v)) != 1) {
			if (r)
				return r;
			continue;
		}
		return cli_parse_double(dbl[k], v, 0, hi[k], dst[k]) ? CLI_USAGE : 1;
	}
	if ((r = cli_opt(argc, argv, i, "--mu", &v)) == 1) {
		uint64_t mu;
		if (cli_parse_size("--mu", v, (uint64_t)1 << 30, &mu))
			return CLI_USAGE;
		if (mu == 0)
			return cli_usage("--mu: the packet size must be at least 1 byte");
		m->md.mu = (size_t)mu;
		m->set_mu = 1;
		return 1;
	}
	if (r)
		return r;
	int c = 0;
	if ((r = cli_opt(argc, argv, i, "--ports", &v)) == 1) {
		if (!strcmp(v, "1"))
			v = "one";
		if (cli_choice("--ports", v, "one", "all", &c))
			return CLI_USAGE;
		m->md.ports = c ? TC_PORTS_ALL : TC_PORTS_ONE;
		return 1;
	}
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--duplex", &v)) == 1) {
		if (cli_choice("--duplex", v, "full", "half", &c))
			return CLI_USAGE;
		m->md.duplex = c ? TC_DUPLEX_HALF : TC_DUPLEX_FULL;
		return 1;
	}
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--switching", &v)) == 1) {
		if (!strcmp(v, "wh"))
			v = "ct";
		if (cli_choice("--switching", v, "sf", "ct", &c))
			return CLI_USAGE;
		m->md.switching = c ? TC_SWITCH_CT : TC_SWITCH_SF;
		return 1;
	}
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--combining", &v)) == 1) {
		if (cli_choice("--combining", v, "off", "on", &c))
			return CLI_USAGE;
		m->md.combining = c;
		return 1;
	}
	if (r)
		return r;
	if ((r = cli_opt(argc, argv, i, "--packets", &v)) == 1) {
		long pk = 0;
		if (cli_parse_long("--packets", v, 1, 1L << 30, &pk))
			return CLI_USAGE;
		m->packets = (int)pk;
		return 1;
	}
	return r;
}

int cli_packets_check(const struct cli_model *m, uint64_t bytes, enum tc_dtype dt)
{
	/* A packet is whole elements: more packets than elements would be cut
	 * down to them, the model's JSON still saying the number asked for. */
	const uint64_t elems = bytes / tc_dtype_size(dt), most = elems ? elems : 1;
	char b[32];
	if (!m->packets || (uint64_t)m->packets <= most)
		return 0;
	return cli_usage("--packets %d: a block of %s holds %llu element%s of %s, so at most %llu "
	                 "packet%s",
	                 m->packets, cli_bytes(bytes, b, sizeof b), (unsigned long long)elems,
	                 elems == 1 ? "" : "s", tc_dtype_name(dt), (unsigned long long)most,
	                 most == 1 ? "" : "s");
}

void cli_model_json(struct cli_json *w, const struct cli_model *m)
{
	cli_json_obj(w, "model");
	cli_json_num(w, "ts_ns", m->md.ts_ns);
	cli_json_num(w, "tw_ns_per_byte", m->md.tw_ns);
	cli_json_num(w, "th_ns", m->md.th_ns);
	cli_json_num(w, "tc_ns_per_byte", m->md.tc_ns);
	if (m->md.mu)
		cli_json_uint(w, "mu", m->md.mu);
	else
		cli_json_null(w, "mu");
	cli_json_str(w, "ports", m->md.ports == TC_PORTS_ALL ? "all" : "one");
	cli_json_str(w, "duplex", m->md.duplex == TC_DUPLEX_HALF ? "half" : "full");
	cli_json_str(w, "switching", m->md.switching == TC_SWITCH_CT ? "ct" : "sf");
	cli_json_bool(w, "combining", m->md.combining);
	if (m->packets)
		cli_json_int(w, "packets", m->packets);
	cli_json_end_obj(w);
}

/* ---- topologies -------------------------------------------------------- */

int cli_topo(const char *spec, long p, struct tc_topo **out)
{
	char why[256];
	if (p > TC_TOPO_MAX_NODES)
		return cli_usage("p = %ld does not fit: at most %d nodes", p, TC_TOPO_MAX_NODES);
	int err = tc_topo_parse_p(spec, p > 0 ? (int)p : 0, out, why, sizeof why);
	size_t n = strlen(why), k = strlen("or give p");
	if (n >= k && !strcmp(why + n - k, "or give p"))
		return cli_usage("%s (--p P)", why);
	if (err)
		return cli_usage("%s", why);
	return 0;
}

const char *cli_topo_name(const struct tc_topo *t)
{
	static char buf[128];
	tc_topo_spec(t, buf, sizeof buf);
	return buf;
}

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

/* Writes the items of a comma list from column col, wrapping under col0. */
static int help_words(FILE *f, const char *list, int col, int col0)
{
	const char *s = list;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t l = e ? (size_t)(e - s) + 1 : strlen(s);
		if (col > col0 && col + (int)l + 1 > 79) {
			fprintf(f, "\n%*s", col0, "");
			col = col0;
		} else if (col > col0) {
			fputc(' ', f);
			col++;
		}
		fwrite(s, 1, l, f);
		col += (int)l;
		s += l;
		while (*s == ' ')
			s++;
	}
	return col;
}

void cli_help_print(FILE *f, const char *text)
{
	const char *s = text;
	int col = 0;
	while (*s) {
		const char *at = strchr(s, '@');
		const char *end = at ? strchr(at + 1, '@') : NULL;
		if (!at || !end) {
			fputs(s, f);
			return;
		}
		for (const char *q = s; q < at; q++)
			col = *q == '\n' ? 0 : col + 1;
		fwrite(s, 1, (size_t)(at - s), f);
		size_t kl = (size_t)(end - at - 1);
		char list[512];
		if (kl == 5 && !strncmp(at + 1, "COLLS", 5)) {
			col = help_words(f, cli_coll_list(0, list, sizeof list), col, col);
		} else if (kl == 6 && !strncmp(at + 1, "ROOTED", 6)) {
			col = help_words(f, cli_coll_list(TC_CF_ROOTED, list, sizeof list), col, col);
		} else if (kl == 6 && !strncmp(at + 1, "VCOUNT", 6)) {
			col = help_words(f, cli_coll_list(TC_CF_VCOUNT, list, sizeof list), col, col);
		} else if (kl == 8 && !strncmp(at + 1, "REDUCING", 8)) {
			col = help_words(f, cli_coll_list(TC_CF_REDUCES, list, sizeof list), col, col);
		} else if (kl == 4 && !strncmp(at + 1, "ALGS", 4)) {
			int col0 = col;
			for (int c = 0; c < TC_COLL_COUNT; c++) {
				if (c)
					fprintf(f, "\n%*s", col0, "");
				fprintf(f, "%s:", tc_coll_name((enum tc_coll)c));
				col = col0 + (int)strlen(tc_coll_name((enum tc_coll)c)) + 1;
				cli_alg_list((enum tc_coll)c, list, sizeof list);
				if (!strcmp(list, "none yet"))
					strcpy(list, "(none yet)");
				col = help_words(f, list, col, col0 + 2);
			}
		} else {
			fwrite(at, 1, kl + 1, f);
			col += (int)kl + 1;
			s = end;
			continue;
		}
		s = end + 1;
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

int cli_dtype(const char *s, enum tc_dtype *out)
{
	char list[160] = "";
	for (int d = 0; d < TC_DTYPE_COUNT; d++) {
		const char *n = tc_dtype_name((enum tc_dtype)d);
		if (!strcmp(s, n)) {
			*out = (enum tc_dtype)d;
			return 0;
		}
		if (d)
			strcat(list, ", ");
		strcat(list, n);
	}
	return cli_usage("--dtype: unknown datatype '%s' (available: %s)", s, list);
}

int cli_op(const char *s, enum tc_op *out)
{
	char list[160] = "";
	for (int o = 0; o < TC_OP_USER; o++) {
		const char *n = tc_op_name((enum tc_op)o);
		if (!strcmp(s, n)) {
			*out = (enum tc_op)o;
			return 0;
		}
		if (o)
			strcat(list, ", ");
		strcat(list, n);
	}
	return cli_usage("--op: unknown operator '%s' (available: %s)", s, list);
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

/* ---- numbers ----------------------------------------------------------- */

const char *cli_num(double v, char *buf)
{
	if (!isfinite(v))
		strcpy(buf, "null");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, 32, "%.0f", v == 0 ? 0.0 : v);
	else
		snprintf(buf, 32, "%.15g", v);
	return buf;
}

const char *cli_time(double ns, char *buf)
{
	if (!isfinite(ns))
		strcpy(buf, "-");
	else if (fabs(ns) < 1e3)
		snprintf(buf, 32, "%.4g ns", ns);
	else if (fabs(ns) < 1e6)
		snprintf(buf, 32, "%.4g us", ns / 1e3);
	else if (fabs(ns) < 1e9)
		snprintf(buf, 32, "%.4g ms", ns / 1e6);
	else
		snprintf(buf, 32, "%.4g s", ns / 1e9);
	return buf;
}

/* ---- JSON -------------------------------------------------------------- */

void cli_json_init(struct cli_json *w, FILE *f)
{
	memset(w, 0, sizeof *w);
	w->f = f;
}

void cli_json_quote(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void cli_json_key(struct cli_json *w, const char *key)
{
	int d = w->depth;
	if (w->count[d]++)
		fputs(", ", w->f);
	if (d && d == w->nl_depth)
		fputs("\n  ", w->f);
	if (key) {
		cli_json_quote(w->f, key);
		fputs(": ", w->f);
	}
}

void cli_json_obj(struct cli_json *w, const char *key)
{
	cli_json_key(w, key);
	fputc('{', w->f);
	if (w->depth < 15)
		w->count[++w->depth] = 0;
}

void cli_json_arr(struct cli_json *w, const char *key)
{
	cli_json_key(w, key);
	fputc('[', w->f);
	if (w->depth < 15)
		w->count[++w->depth] = 0;
}

void cli_json_end_obj(struct cli_json *w)
{
	fputc('}', w->f);
	if (w->depth > 0)
		w->depth--;
	if (w->depth == 0)
		fputc('\n', w->f);
}

void cli_json_end_arr(struct cli_json *w)
{
	if (w->nl_depth && w->depth == w->nl_depth && w->count[w->depth])
		fputc('\n', w->f);
	fputc(']', w->f);
	if (w->depth > 0)
		w->depth--;
	if (w->depth == 0)
		fputc('\n', w->f);
}

void cli_json_num(struct cli_json *w, const char *key, double v)
{
	char b[32];
	cli_json_key(w, key);
	fputs(cli_num(v, b), w->f);
}

void cli_json_int(struct cli_json *w, const char *key, long long v)
{
	cli_json_key(w, key);
	fprintf(w->f, "%lld", v);
}

void cli_json_uint(struct cli_json *w, const char *key, unsigned long long v)
{
	cli_json_key(w, key);
	fprintf(w->f, "%llu", v);
}

void cli_json_str(struct cli_json *w, const char *key, const char *s)
{
	cli_json_key(w, key);
	if (s)
		cli_json_quote(w->f, s);
	else
		fputs("null", w->f);
}

void cli_json_bool(struct cli_json *w, const char *key, int v)
{
	cli_json_key(w, key);
	fputs(v ? "true" : "false", w->f);
}

void cli_json_null(struct cli_json *w, const char *key)
{
	cli_json_key(w, key);
	fputs("null", w->f);
}

/* ---- external programs ------------------------------------------------- */

int cli_have_program(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/bin:/bin";
	char buf[4096];
	for (const char *p = path; p;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		if (n && n + strlen(prog) + 2 < sizeof buf) {
			memcpy(buf, p, n);
			buf[n] = '/';
			strcpy(buf + n + 1, prog);
			struct stat st;
			if (!stat(buf, &st) && S_ISREG(st.st_mode) && !access(buf, X_OK))
				return 1;
		}
		p = colon ? colon + 1 : NULL;
	}
	return 0;
}

int cli_pipe_to(char *const argv[], const char *input, size_t len)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[0], 0);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[0]);
	size_t off = 0;
	while (off < len) {
		ssize_t k = write(fd[1], input + off, len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		off += (size_t)k;
	}
	close(fd[1]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int cli_gnuplot(const char *file, const char *gp, const char *dat)
{
	if (!cli_have_program("gnuplot"))
		return cli_fail("gnuplot is not installed, so no %s: sudo apt-get install gnuplot-nox, "
		                "then gnuplot %s (the data are in %s)",
		                file, gp, dat);
	char *argv[] = {"gnuplot", (char *)gp, NULL};
	int st = cli_pipe_to(argv, "", 0);
	if (st != 0)
		return cli_fail("gnuplot failed (status %d) on %s", st, gp);
	return CLI_OK;
}

/* ---- progress ---------------------------------------------------------- */

void cli_progress_init(struct cli_progress *pg, long total, int quiet)
{
	pg->tty = isatty(2);
	pg->quiet = quiet;
	pg->total = total;
	pg->done = 0;
	pg->last_s = 0;
}

void cli_progress_step(struct cli_progress *pg, const char *what)
{
	pg->done++;
	if (pg->quiet)
		return;
	if (!pg->tty) {
		/* Plain lines, at most one a second (and the last one). */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (pg->done < pg->total && pg->last_s && ts.tv_sec < pg->last_s + 1)
			return;
		pg->last_s = ts.tv_sec ? ts.tv_sec : 1;
		fprintf(stderr, "sweep: %ld/%ld %s\n", pg->done, pg->total, what);
		return;
	}
	enum { W = 30 };
	int fill = pg->total ? (int)(W * pg->done / pg->total) : W;
	char bar[W + 1];
	for (int k = 0; k < W; k++)
		bar[k] = k < fill ? '#' : '.';
	bar[W] = '\0';
	fprintf(stderr, "\r[%s] %3d%% %ld/%ld %-40.40s", bar,
	        pg->total ? (int)(100 * pg->done / pg->total) : 100, pg->done, pg->total, what);
	fflush(stderr);
}

void cli_progress_end(struct cli_progress *pg)
{
	if (pg->tty && !pg->quiet && pg->done)
		fputc('\n', stderr);
}

int cli_calibration_read(const char *cmd, const char *path, struct tc_calibration *cal)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return cli_usage("%s: --calibration %s: %s", cmd, path, strerror(errno));
	int err = tc_calibration_read(f, cal);
	fclose(f);
	if (err)
		return cli_usage("%s: --calibration %s: %s", cmd, path,
		                 *tc_error_detail() ? tc_error_detail() : tc_strerror(err));
	if (cal->mode != TC_MODE_NATIVE)
		return cli_usage("%s: --calibration %s: a calibration of an emulated team (calibrate "
		                 "--mode emulated), not of a machine",
		                 cmd, path);
	return CLI_OK;
}

int cli_calibrated_model(const char *cmd, const struct tc_calibration *cal, uint64_t bytes,
                         struct tc_model *md)
{
	struct tc_model seg;
	if (tc_calibration_model(cal, (size_t)bytes, &seg, NULL) != 0)
		return cli_fail("%s: the calibration fitted no line", cmd);
	/* A segment fitted with no start-up time (t_s clamped at 0, as a
	 * 16-core guest's 1-4 MiB were) would make a pipeline send a packet
	 * per element: the whole range's t_s then (the calibrated prediction
	 * counts the packets under the whole range's line too, then prices
	 * them with the segment of the mean packet: lib/coll/calprice.c). */
	if (!(seg.ts_ns > 0) && isfinite(cal->ts_ns) && cal->ts_ns > 0)
		seg.ts_ns = cal->ts_ns;
	md->ts_ns = seg.ts_ns;
	md->tw_ns = seg.tw_ns;
	md->tc_ns = seg.tc_ns;
	md->th_ns = 0;
	return CLI_OK;
}
