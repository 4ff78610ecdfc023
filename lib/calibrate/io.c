/* SPDX-License-Identifier: MIT */
/*
 * lib/calibrate/io.c - a calibration written as text and read back
 * (tc_calibration_write, tc_calibration_read: topocoll/calibrate.h), so
 * that a calibration made on one machine can price runs on another, and
 * one made by an older build still reads once struct tc_calibration has
 * grown.
 *
 * One record:
 *   topocoll-calibration 1
 *   ts_ns 309.60000000000002
 *   points.0.bytes 8
 *   segments.1.fit.tw_ns_per_byte 0.085360000000000005
 *   copy_bytes_per_ns.2.15 140.30000000000001
 *   ...
 *   end
 * a line per field, "key value", the key the field's name in the struct
 * (members of a nested struct after a dot, array elements by their index);
 * doubles with 17 significant digits (they read back bit for bit; "nan"
 * where not measured), the arrays up to their count.  Lines starting with
 * '#' and blank lines are skipped.  A reader takes every field it knows;
 * a field the record lacks keeps its "not measured" value (NAN, a count
 * of 0, a rank of -1), so a record of an older version describes what it
 * measured and nothing more.  A field given twice, or an array element
 * beyond its count, is refused, and so is a record that the check of every
 * consumer of a calibration refuses (lib/model/calibration.h: a team's, the
 * prediction's), each naming the line.  The version rises when a field
 * changes meaning; a record of a later version than the build's is
 * refused.
 */
#include "topocoll/calibrate.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "base/error_detail.h"
#include "model/calibration.h"
#include "topocoll.h"

/* The version this build writes and the latest it reads. */
#define TC__CAL_FILE_VERSION 1
#define TC__CAL_FILE_MAGIC "topocoll-calibration"

/* The longest key (segments.7.fit.max_rel_residual and the like). */
#define TC__CAL_KEY_MAX 64

/* A field added to the calibration must be added to tc__cal_visit() (and
 * the sizes below with it): these fail to compile until then, on the
 * x86-64 builds that CI runs. */
#if defined(__x86_64__) && defined(__LP64__)
_Static_assert(sizeof(struct tc_calibration) == 14872, "a field of tc_calibration not written");
_Static_assert(sizeof(struct tc_calibration_point) == 96, "a field of a point not written");
_Static_assert(sizeof(struct tc_calibration_segment) == 96, "a field of a segment not written");
#endif

/* The regime, an enum, is written and read as the int it is. */
_Static_assert(sizeof(enum tc_calibrate_regime) == sizeof(int), "regime read as an int");

enum tc__cal_type { TC__CAL_D, TC__CAL_I, TC__CAL_Z };

/* One field: its key, its type and where it lies; the count its array
 * element is within (NULL: not an element of a counted array); for the
 * reader, the line that gave it (0: none) and whether it lies within its
 * count. */
struct tc__cal_field {
	char key[TC__CAL_KEY_MAX];
	enum tc__cal_type type;
	void *at;
	const char *count;
	int line;
	bool counted;
};

/* A visit of the fields: in write order, each array up to its count
 * (writing) or its capacity (reading, defaults).  fn is called for each
 * field until it fails; err keeps that first error. */
struct tc__cal_visit {
	int full;
	int (*fn)(struct tc__cal_visit *v, const struct tc__cal_field *f);
	int err;
	const char *count; /* the count of the array being visited */
	/* the writer's file, the reader's table (and its second visit's
	 * place in it) */
	FILE *out;
	struct tc__cal_field *fields;
	int nfields, cap, next;
};

/* The field of the given type at `at`, its key printf's fmt. */
static void tc__cal_emit(struct tc__cal_visit *v, enum tc__cal_type type, void *at, const char *fmt,
                         ...) __attribute__((format(printf, 4, 5)));
static void tc__cal_emit(struct tc__cal_visit *v, enum tc__cal_type type, void *at, const char *fmt, ...)
{
	if (v->err)
		return;
	struct tc__cal_field f = {.type = type, .at = at, .count = v->count};
	va_list ap;
	va_start(ap, fmt);
	const int n = vsnprintf(f.key, sizeof f.key, fmt, ap);
	va_end(ap);
	/* No key of the struct is that long. */
	v->err = n < 0 || (size_t)n >= sizeof f.key ? TC_EINVAL : v->fn(v, &f);
}

static void tc__cal_fit(struct tc__cal_visit *v, const char *pre, struct tc_calibration_fit *f)
{
	tc__cal_emit(v, TC__CAL_I, &f->npoints, "%s.npoints", pre);
	tc__cal_emit(v, TC__CAL_D, &f->ts_ns, "%s.ts_ns", pre);
	tc__cal_emit(v, TC__CAL_D, &f->tw_ns_per_byte, "%s.tw_ns_per_byte", pre);
	tc__cal_emit(v, TC__CAL_D, &f->r2, "%s.r2", pre);
	tc__cal_emit(v, TC__CAL_D, &f->max_rel_residual, "%s.max_rel_residual", pre);
}

/* n clamped to [0, cap] (a count read from a file may be anything until
 * checked). */
static int tc__cal_upto(const struct tc__cal_visit *v, int n, int cap)
{
	return v->full || n > cap ? cap : n < 0 ? 0 : n;
}

static void tc__cal_point(struct tc__cal_visit *v, int i, struct tc_calibration_point *pt)
{
#define TC__CAL_PT(name, type) tc__cal_emit(v, (type), &pt->name, "points.%d." #name, i)
	TC__CAL_PT(bytes, TC__CAL_Z);
	TC__CAL_PT(one_way_ns, TC__CAL_D);
	TC__CAL_PT(min_ns, TC__CAL_D);
	TC__CAL_PT(max_ns, TC__CAL_D);
	TC__CAL_PT(single_copy, TC__CAL_I);
	TC__CAL_PT(residual, TC__CAL_D);
	TC__CAL_PT(combine_ns, TC__CAL_D);
	TC__CAL_PT(cache_level, TC__CAL_I);
	TC__CAL_PT(segment, TC__CAL_I);
	TC__CAL_PT(seg_residual, TC__CAL_D);
	TC__CAL_PT(exchange_ns, TC__CAL_D);
	TC__CAL_PT(copy_ns, TC__CAL_D);
	TC__CAL_PT(reduce_ns, TC__CAL_D);
#undef TC__CAL_PT
}

static void tc__cal_segment(struct tc__cal_visit *v, int i, struct tc_calibration_segment *s)
{
#define TC__CAL_SEG(name, type) tc__cal_emit(v, (type), &s->name, "segments.%d." #name, i)
	TC__CAL_SEG(lo_bytes, TC__CAL_Z);
	TC__CAL_SEG(hi_bytes, TC__CAL_Z);
	TC__CAL_SEG(first, TC__CAL_I);
	TC__CAL_SEG(npoints, TC__CAL_I);
	TC__CAL_SEG(single_copy, TC__CAL_I);
	TC__CAL_SEG(cache_level, TC__CAL_I);
	char pre[TC__CAL_KEY_MAX];
	snprintf(pre, sizeof pre, "segments.%d.fit", i);
	tc__cal_fit(v, pre, &s->fit);
	TC__CAL_SEG(exchange_ratio, TC__CAL_D);
	TC__CAL_SEG(recv_ts_ns, TC__CAL_D);
	TC__CAL_SEG(recv_tc_ns_per_byte, TC__CAL_D);
#undef TC__CAL_SEG
}

/* A table of rates, [size][count] (the copies', the combines', the shared
 * copies'): key.i.j for nsizes x ncounts. */
static void tc__cal_rates(struct tc__cal_visit *v, const char *key,
                          double (*rate)[TC_CALIBRATE_MAX_COPIERS], int nsizes, int ncounts)
{
	for (int i = 0; i < nsizes; i++)
		for (int j = 0; j < ncounts; j++)
			tc__cal_emit(v, TC__CAL_D, &rate[i][j], "%s.%d.%d", key, i, j);
}

/* Every field of c, in the order they are written; v->err the first
 * error. */
static void tc__cal_visit(struct tc__cal_visit *v, struct tc_calibration *c)
{
	/* A field of c, and element i of an array field. */
#define TC__CAL_F(name, type) tc__cal_emit(v, (type), &c->name, #name)
#define TC__CAL_A(name, type, i) tc__cal_emit(v, (type), &c->name[i], #name ".%d", (i))
	TC__CAL_F(ts_ns, TC__CAL_D);
	TC__CAL_F(tw_ns_per_byte, TC__CAL_D);
	TC__CAL_F(r2, TC__CAL_D);
	TC__CAL_F(max_rel_residual, TC__CAL_D);
	TC__CAL_F(regime, TC__CAL_I);
	tc__cal_fit(v, "all", &c->all);
	tc__cal_fit(v, "stream", &c->stream);
	tc__cal_fit(v, "single_copy", &c->single_copy);
	TC__CAL_F(single_copy_min, TC__CAL_Z);
	TC__CAL_F(mode, TC__CAL_I);
	tc__cal_fit(v, "combine", &c->combine);
	TC__CAL_F(tc_ns_per_byte, TC__CAL_D);
	for (int i = 0; i < 3; i++)
		TC__CAL_A(cache_bytes, TC__CAL_Z, i);
	TC__CAL_F(hockney_max_bytes, TC__CAL_Z);
	TC__CAL_F(npoints, TC__CAL_I);
	v->count = "npoints";
	for (int i = 0; i < tc__cal_upto(v, c->npoints, TC_CALIBRATE_MAX_POINTS); i++)
		tc__cal_point(v, i, &c->points[i]);
	v->count = NULL;
	TC__CAL_F(nsegments, TC__CAL_I);
	v->count = "nsegments";
	for (int i = 0; i < tc__cal_upto(v, c->nsegments, TC_CALIBRATE_MAX_SEGMENTS); i++)
		tc__cal_segment(v, i, &c->segments[i]);
	v->count = NULL;
	tc__cal_fit(v, "piecewise", &c->piecewise);
	TC__CAL_F(piecewise_max_bytes, TC__CAL_Z);
	TC__CAL_F(call_ns, TC__CAL_D);
	TC__CAL_F(call_measured_ns, TC__CAL_D);
	TC__CAL_F(call_predicted_ns, TC__CAL_D);
	tc__cal_fit(v, "copy", &c->copy);
	TC__CAL_F(tcopy_ns_per_byte, TC__CAL_D);
	TC__CAL_F(conc_ranks, TC__CAL_I);
	for (int i = 0; i < TC_HANDOFF_CLASSES; i++) {
		TC__CAL_A(handoff_ns, TC__CAL_D, i);
		TC__CAL_A(handoff_rank, TC__CAL_I, i);
	}
	TC__CAL_F(handoff_pair_ns, TC__CAL_D);
	v->count = "conc_ranks";
	for (int j = 0; j < tc__cal_upto(v, c->conc_ranks, TC_CALIBRATE_MAX_COPIERS); j++)
		TC__CAL_A(handoff_by_rank_ns, TC__CAL_D, j);
	v->count = NULL;
	TC__CAL_F(ncopy_sizes, TC__CAL_I);
	const int nsizes = tc__cal_upto(v, c->ncopy_sizes, TC_CALIBRATE_COPY_SIZES);
	v->count = "ncopy_sizes";
	for (int i = 0; i < nsizes; i++)
		TC__CAL_A(copy_sizes, TC__CAL_Z, i);
	v->count = NULL;
	TC__CAL_F(ncopiers, TC__CAL_I);
	const int ncopiers = tc__cal_upto(v, c->ncopiers, TC_CALIBRATE_MAX_COPIERS);
	v->count = "ncopiers";
	for (int i = 0; i < ncopiers; i++)
		TC__CAL_A(copiers, TC__CAL_I, i);
	v->count = "ncopy_sizes and ncopiers";
	tc__cal_rates(v, "copy_bytes_per_ns", c->copy_bytes_per_ns, nsizes, ncopiers);
	v->count = NULL;
	TC__CAL_F(ncombine, TC__CAL_I);
	v->count = "ncopy_sizes and ncombine";
	tc__cal_rates(v, "combine_bytes_per_ns", c->combine_bytes_per_ns, nsizes,
	              tc__cal_upto(v, c->ncombine, TC_CALIBRATE_MAX_COPIERS));
	v->count = NULL;
	TC__CAL_F(nshared, TC__CAL_I);
	v->count = "ncopy_sizes and nshared";
	tc__cal_rates(v, "shared_bytes_per_ns", c->shared_bytes_per_ns, nsizes,
	              tc__cal_upto(v, c->nshared, TC_CALIBRATE_MAX_COPIERS));
	v->count = NULL;
	TC__CAL_F(nsync, TC__CAL_I);
	v->count = "nsync";
	for (int i = 0; i < tc__cal_upto(v, c->nsync, TC_CALIBRATE_MAX_SYNC); i++) {
		TC__CAL_A(sync_ranks, TC__CAL_I, i);
		TC__CAL_A(sync_ns, TC__CAL_D, i);
	}
	v->count = NULL;
	TC__CAL_F(nflag, TC__CAL_I);
	v->count = "nflag";
	for (int i = 0; i < tc__cal_upto(v, c->nflag, TC_CALIBRATE_MAX_SYNC); i++)
		TC__CAL_A(flag_ns, TC__CAL_D, i);
	v->count = "nsync";
	for (int i = 0; i < tc__cal_upto(v, c->nsync, TC_CALIBRATE_MAX_SYNC); i++) {
		TC__CAL_A(sync_mean_ns, TC__CAL_D, i);
		TC__CAL_A(pairs_ns, TC__CAL_D, i);
	}
	v->count = NULL;
	TC__CAL_F(nchain, TC__CAL_I);
	TC__CAL_F(nchain_sizes, TC__CAL_I);
	const int nchain = tc__cal_upto(v, c->nchain, TC_CALIBRATE_MAX_SYNC);
	const int nchain_sizes = tc__cal_upto(v, c->nchain_sizes, TC_CALIBRATE_CHAIN_SIZES);
	v->count = "nchain_sizes";
	for (int s = 0; s < nchain_sizes; s++)
		TC__CAL_A(chain_sizes, TC__CAL_Z, s);
	v->count = "nchain_sizes and nchain";
	for (int s = 0; s < nchain_sizes; s++)
		for (int i = 0; i < nchain; i++)
			tc__cal_emit(v, TC__CAL_D, &c->chain_ns[s][i], "chain_ns.%d.%d", s, i);
	v->count = NULL;
#undef TC__CAL_F
#undef TC__CAL_A
}

static int tc__cal_put(struct tc__cal_visit *v, const struct tc__cal_field *f)
{
	int n;
	switch (f->type) {
	case TC__CAL_D:
		n = fprintf(v->out, "%s %.17g\n", f->key, *(const double *)f->at);
		break;
	case TC__CAL_I:
		n = fprintf(v->out, "%s %d\n", f->key, *(const int *)f->at);
		break;
	default:
		n = fprintf(v->out, "%s %zu\n", f->key, *(const size_t *)f->at);
		break;
	}
	return n < 0 ? TC_ESYS : TC_OK;
}

int tc_calibration_write(const struct tc_calibration *cal, FILE *f)
{
	tc__clear_detail();
	if (!cal || !f)
		return TC_EINVAL;
	/* The visit takes the fields by address; it writes none of them. */
	struct tc_calibration copy = *cal;
	struct tc__cal_visit v = {.fn = tc__cal_put, .out = f};
	if (fprintf(f, "%s %d\n", TC__CAL_FILE_MAGIC, TC__CAL_FILE_VERSION) < 0)
		return TC_ESYS;
	tc__cal_visit(&v, &copy);
	int err = v.err;
	if (!err && fprintf(f, "end\n") < 0)
		err = TC_ESYS;
	return err ? err : ferror(f) ? TC_ESYS : TC_OK;
}

/* The reader's table: every field of the struct up to its arrays'
 * capacities, set to "not measured" on the way. */
static int tc__cal_add(struct tc__cal_visit *v, const struct tc__cal_field *f)
{
	if (v->nfields == v->cap) {
		int cap = v->cap ? 2 * v->cap : 1024;
		struct tc__cal_field *n = realloc(v->fields, (size_t)cap * sizeof *n);
		if (!n)
			return TC_ENOMEM;
		v->fields = n, v->cap = cap;
	}
	v->fields[v->nfields++] = *f;
	switch (f->type) {
	case TC__CAL_D:
		*(double *)f->at = NAN;
		break;
	case TC__CAL_I:
		*(int *)f->at = 0;
		break;
	default:
		*(size_t *)f->at = 0;
		break;
	}
	return TC_OK;
}

/* The value text s as field f's type, stored; TC_EINVAL where it is not
 * one. */
static int tc__cal_parse(const struct tc__cal_field *f, const char *s)
{
	char *end;
	errno = 0;
	switch (f->type) {
	case TC__CAL_D: {
		double d = strtod(s, &end);
		/* Beyond a double's range ("1e400"): not a value written (an
		 * infinity is written "inf"). */
		if (end == s || *end || (errno == ERANGE && isinf(d)))
			return TC_EINVAL;
		*(double *)f->at = d;
		return TC_OK;
	}
	case TC__CAL_I: {
		long l = strtol(s, &end, 10);
		if (end == s || *end || errno || l < -(1L << 30) || l > (1L << 30))
			return TC_EINVAL;
		*(int *)f->at = (int)l;
		return TC_OK;
	}
	default: {
		if (*s == '-')
			return TC_EINVAL;
		unsigned long long u = strtoull(s, &end, 10);
		if (end == s || *end || errno || u > SIZE_MAX)
			return TC_EINVAL;
		*(size_t *)f->at = (size_t)u;
		return TC_OK;
	}
	}
}

/* The second visit of the reader: marks the fields within their counts
 * (the visit up to the counts takes a subsequence of the fields the full
 * one listed, in the same order). */
static int tc__cal_mark(struct tc__cal_visit *v, const struct tc__cal_field *f)
{
	while (v->next < v->nfields && v->fields[v->next].at != f->at)
		v->next++;
	if (v->next < v->nfields)
		v->fields[v->next++].counted = true;
	return TC_OK;
}

/* Whether p is one of c's counts (the check names those first). */
static bool tc__cal_is_count(const struct tc_calibration *c, const void *p)
{
	const int *counts[] = {&c->npoints,  &c->nsegments, &c->conc_ranks,  &c->ncopy_sizes,
	                       &c->ncopiers, &c->ncombine,  &c->nshared,     &c->nsync,
	                       &c->nflag,    &c->nchain,    &c->nchain_sizes};
	for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
		if (p == (const void *)counts[i])
			return true;
	return false;
}

/* A record read into c (its fields, with their lines, v->fields): a line
 * of an array element beyond its count, and the check of every consumer
 * (lib/model/calibration.h: values out of range, parts that disagree),
 * each naming the line that gave the field.  0 or TC_EINVAL. */
static int tc__cal_read_check(struct tc__cal_visit *v, struct tc_calibration *c)
{
	struct tc__cal_fault fault;
	int err = tc__calibration_valid(c, false, &fault);
	if (!err || !tc__cal_is_count(c, fault.at)) {
		struct tc__cal_visit m = {.fn = tc__cal_mark, .fields = v->fields, .nfields = v->nfields};
		tc__cal_visit(&m, c);
		for (int i = 0; i < v->nfields; i++) {
			const struct tc__cal_field *fd = &v->fields[i];
			if (fd->line && fd->count && !fd->counted) {
				tc__set_detail("tc_calibration_read: line %d: %s lies beyond its array's "
				               "count (%s)",
				               fd->line, fd->key, fd->count);
				return TC_EINVAL;
			}
		}
	}
	if (!err)
		return TC_OK;
	int line = 0;
	for (int i = 0; i < v->nfields && !line; i++)
		if (v->fields[i].at == fault.at)
			line = v->fields[i].line;
	if (line)
		tc__set_detail("tc_calibration_read: line %d: %s", line, fault.what);
	else
		tc__set_detail("tc_calibration_read: %s (a field the record lacks)", fault.what);
	return err;
}

int tc_calibration_read(FILE *f, struct tc_calibration *out)
{
	tc__clear_detail();
	if (!f || !out)
		return TC_EINVAL;
	struct tc_calibration c;
	memset(&c, 0, sizeof c);
	struct tc__cal_visit v = {.full = 1, .fn = tc__cal_add};
	tc__cal_visit(&v, &c);
	int err = v.err;
	for (int i = 0; i < TC_HANDOFF_CLASSES; i++)
		c.handoff_rank[i] = -1;
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0, version = -1, ended = 0;
	ssize_t got;
	while (!err && !ended && (got = getline(&line, &cap, f)) >= 0) {
		lineno++;
		size_t n = (size_t)got;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
			line[--n] = 0;
		if (!n || line[0] == '#')
			continue;
		char *val = strchr(line, ' ');
		if (val)
			*val++ = 0;
		if (version < 0) {
			char *end = NULL;
			long ver = val ? strtol(val, &end, 10) : -1;
			if (strcmp(line, TC__CAL_FILE_MAGIC) || !val || *end || ver < 1) {
				tc__set_detail("tc_calibration_read: line %d: not a calibration (it should "
				               "start with \"%s %d\")",
				               lineno, TC__CAL_FILE_MAGIC, TC__CAL_FILE_VERSION);
				err = TC_EINVAL;
			} else if (ver > TC__CAL_FILE_VERSION) {
				tc__set_detail("tc_calibration_read: line %d: version %ld, this build reads "
				               "up to %d",
				               lineno, ver, TC__CAL_FILE_VERSION);
				err = TC_ENOTSUP;
			}
			version = (int)ver;
			continue;
		}
		if (!strcmp(line, "end") && !val) {
			ended = 1;
			break;
		}
		struct tc__cal_field *fd = NULL;
		for (int i = 0; val && i < v.nfields && !fd; i++)
			if (!strcmp(v.fields[i].key, line))
				fd = &v.fields[i];
		if (!fd) {
			tc__set_detail("tc_calibration_read: line %d: %s \"%s\"", lineno,
			               val ? "unknown field" : "no value for", line);
			err = TC_EINVAL;
		} else if (fd->line) {
			tc__set_detail("tc_calibration_read: line %d: %s again (first on line %d)",
			               lineno, line, fd->line);
			err = TC_EINVAL;
		} else if (tc__cal_parse(fd, val)) {
			tc__set_detail("tc_calibration_read: line %d: \"%s\" is not a value of %s",
			               lineno, val, line);
			err = TC_EINVAL;
		}
		if (fd)
			fd->line = lineno;
	}
	const int read_errno = errno;
	free(line);
	if (!err && ferror(f)) {
		/* A directory, say: opened for reading, read as none. */
		tc__set_detail("tc_calibration_read: cannot read line %d: %s", lineno + 1,
		               strerror(read_errno));
		err = TC_ESYS;
	}
	if (!err && !ended) {
		tc__set_detail("tc_calibration_read: %s", version < 0 ? "no calibration (empty input)"
		                                                      : "the record has no \"end\" line");
		err = TC_EINVAL;
	}
	if (!err)
		err = tc__cal_read_check(&v, &c);
	free(v.fields);
	if (!err)
		*out = c;
	return err;
}
