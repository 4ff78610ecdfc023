/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_util.c - shared helpers of the topocoll tool (see cli.h): its
 * error messages, options and their values, the model's options,
 * topologies and calibrations.  The collectives' arguments are in
 * tools/cli_coll_args.c, what the tool prints (help, numbers, JSON,
 * progress) and the programs it runs in tools/cli_output.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- calibrations ---------------------------------------------------- */

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
