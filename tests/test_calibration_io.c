/* SPDX-License-Identifier: MIT */
/*
 * tests/test_calibration_io.c - a calibration as text
 * (tc_calibration_write, tc_calibration_read: include/topocoll/calibrate.h,
 * lib/calibrate/io.c): every field of a calibration filled with distinct
 * values read back bit for bit (the text written again is the same, the
 * calibrated prices the same to the bit); two records in one file; a
 * record without the fields a later build added reads with them "not
 * measured"; the refusals, each with its code and the line named: of the
 * text, and of values out of range or parts that disagree (the check that
 * a team and the prediction apply too, lib/model/calibration.h); and every
 * calibration stored in docs/manycore reads.
 */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "topocoll.h"
#include "topocoll/calibrate.h"

/* Every field and every array element up to its count gets a value of its
 * own (some NAN, as unmeasured fields are), the counts mid-range. */
static void filled(struct tc_calibration *c)
{
	memset(c, 0, sizeof *c);
	double x = 1.0;
#define NEXT() (x = x * 1.000123 + 0.37)
	struct tc_calibration_fit *fits[] = {&c->all,     &c->stream,    &c->single_copy,
	                                     &c->combine, &c->piecewise, &c->copy};
	for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++)
		*fits[i] = (struct tc_calibration_fit){(int)i + 2, NEXT(), NEXT() / 1000, 0.9, 0.1};
	c->ts_ns = c->all.ts_ns;
	c->tw_ns_per_byte = c->all.tw_ns_per_byte;
	c->r2 = 1.0 / 3;
	c->max_rel_residual = 0.1 + 1e-17;
	c->regime = TC_CALIBRATE_ALL;
	c->single_copy_min = 1024;
	c->mode = TC_MODE_NATIVE;
	c->tc_ns_per_byte = 0.04 / 3;
	c->cache_bytes[0] = 48 << 10, c->cache_bytes[1] = 2 << 20, c->cache_bytes[2] = 300u << 20;
	c->hockney_max_bytes = 512;
	c->npoints = 20;
	for (int i = 0; i < c->npoints; i++) {
		struct tc_calibration_point *p = &c->points[i];
		p->bytes = (size_t)8 << i;
		p->one_way_ns = NEXT() * 100, p->min_ns = p->one_way_ns * 0.9;
		p->max_ns = p->one_way_ns * 1.3;
		p->single_copy = p->bytes >= 1024, p->residual = NEXT() / 1e4;
		p->combine_ns = i ? NEXT() : NAN, p->cache_level = 1 + i / 8;
		p->segment = i / 7, p->seg_residual = -NEXT() / 1e5;
		p->exchange_ns = NEXT() * 120, p->copy_ns = NEXT(), p->reduce_ns = i ? NEXT() * 130 : NAN;
	}
	c->nsegments = 3;
	for (int i = 0; i < c->nsegments; i++) {
		struct tc_calibration_segment *s = &c->segments[i];
		s->first = 7 * i, s->npoints = i < 2 ? 7 : 6;
		s->lo_bytes = c->points[s->first].bytes;
		s->hi_bytes = c->points[s->first + s->npoints - 1].bytes;
		s->single_copy = i > 0, s->cache_level = i ? -1 : 1;
		s->fit = (struct tc_calibration_fit){s->npoints, NEXT() * 100, NEXT() / 1000, 0.99, 0.05};
		s->exchange_ratio = i ? 1 + NEXT() / 100 : NAN;
		s->recv_ts_ns = NEXT(), s->recv_tc_ns_per_byte = NEXT() / 1000;
	}
	c->piecewise_max_bytes = (size_t)4 << 20;
	c->call_ns = 116.25, c->call_measured_ns = 373.0, c->call_predicted_ns = 256.75;
	c->tcopy_ns_per_byte = 0.0269;
	c->conc_ranks = 16;
	for (int i = 0; i < TC_HANDOFF_CLASSES; i++) {
		c->handoff_ns[i] = i == 1 ? 107.0 : i == 2 ? 140.5 : NAN;
		c->handoff_rank[i] = i == 1 ? 1 : i == 2 ? 8 : -1;
	}
	c->handoff_pair_ns = 107.0;
	for (int j = 0; j < TC_CALIBRATE_MAX_COPIERS; j++)
		c->handoff_by_rank_ns[j] = j == 0 || j >= c->conc_ranks ? NAN : 100.0 + j / 3.0;
	c->ncopy_sizes = 4;
	for (int i = 0; i < c->ncopy_sizes; i++)
		c->copy_sizes[i] = (size_t)64 << (3 * i + 10);
	c->ncopiers = 16;
	for (int j = 0; j < c->ncopiers; j++)
		c->copiers[j] = j + 1;
	for (int i = 0; i < c->ncopy_sizes; i++)
		for (int j = 0; j < c->ncopiers; j++)
			c->copy_bytes_per_ns[i][j] = (j + 1) * (10 + i) + NEXT() / 50;
	c->ncombine = 16;
	for (int i = 0; i < c->ncopy_sizes; i++)
		for (int j = 0; j < c->ncombine; j++)
			c->combine_bytes_per_ns[i][j] = (j + 1) * (5 + i) + NEXT() / 50;
	c->nshared = 16;
	for (int i = 0; i < c->ncopy_sizes; i++)
		for (int j = 0; j < c->nshared; j++)
			c->shared_bytes_per_ns[i][j] = (j + 1) * (15 + i) + NEXT() / 50;
	c->nsync = 4;
	c->nflag = 4;
	for (int i = 0; i < c->nsync; i++) {
		c->sync_ranks[i] = 2 << i;
		c->sync_ns[i] = 445 + NEXT();
		c->flag_ns[i] = 224 + NEXT();
		c->sync_mean_ns[i] = 500 + NEXT();
		c->pairs_ns[i] = i == 3 ? NAN : 460 + NEXT();
	}
	c->nchain = 4;
	c->nchain_sizes = 3;
	for (int s = 0; s < c->nchain_sizes; s++) {
		c->chain_sizes[s] = (size_t)64 << (2 * s + 10);
		for (int i = 0; i < c->nchain; i++)
			c->chain_ns[s][i] = 12000.0 * (1 << (2 * s)) * (1 + i / 4.0) + NEXT();
	}
#undef NEXT
}

/* What tc_calibration_write() writes of c (malloc'd, NUL-terminated). */
static char *written(const struct tc_calibration *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert(f);
	cr_assert_eq(tc_calibration_write(c, f), 0);
	cr_assert_eq(fclose(f), 0);
	return buf;
}

/* tc_calibration_read() of the text s: its return, *out on success. */
static int read_text(const char *s, struct tc_calibration *out)
{
	FILE *f = fmemopen((void *)s, strlen(s), "r");
	cr_assert(f);
	int err = tc_calibration_read(f, out);
	fclose(f);
	return err;
}

/* The calibrated prices of a few calls under a and b, equal to the bit. */
static void same_prices(const struct tc_calibration *a, const struct tc_calibration *b)
{
	static const struct {
		const char *topo, *alg;
		enum tc_coll coll;
		size_t bytes;
	} calls[] = {
	        {"hypercube:4", "hypercube", TC_COLL_ALLREDUCE, 8},
	        {"hypercube:4", "ring", TC_COLL_ALLREDUCE, 1 << 20},
	        {"complete:16", "shm", TC_COLL_ALLGATHER, 65536},
	        {"complete:16", "shm_flag", TC_COLL_ALLREDUCE, 8},
	        {"complete:2", "shm", TC_COLL_BCAST, 1 << 20},
	        {"complete:16", "shm", TC_COLL_REDUCE_SCATTER, 65536},
	};
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
		struct tc_topo *t = NULL;
		cr_assert_eq(tc_topo_parse(calls[i].topo, &t), 0);
		struct tc_call call = {.coll = calls[i].coll,
		                       .alg = calls[i].alg,
		                       .bytes = calls[i].bytes,
		                       .esize = 8};
		double x = NAN, y = NAN;
		cr_assert_eq(tc_calibration_predict(a, t, &call, NULL, NULL, &x), 0);
		cr_assert_eq(tc_calibration_predict(b, t, &call, NULL, NULL, &y), 0);
		cr_assert(memcmp(&x, &y, sizeof x) == 0, "%s %s: %.17g against %.17g",
		          calls[i].topo, calls[i].alg, x, y);
		tc_topo_destroy(t);
	}
}

Test(calibration_io, every_field_back, .timeout = 30)
{
	struct tc_calibration c, back;
	filled(&c);
	char *text = written(&c);
	cr_assert_eq(strncmp(text, "topocoll-calibration 1\n", 23), 0, "%.40s", text);
	cr_assert_eq(read_text(text, &back), 0, "%s", tc_error_detail());
	char *again = written(&back);
	cr_assert_str_eq(again, text);
	/* A few fields by hand: doubles to the bit, NAN kept, the counts. */
	cr_assert(memcmp(&back.r2, &c.r2, sizeof c.r2) == 0);
	cr_assert(memcmp(&back.max_rel_residual, &c.max_rel_residual, sizeof c.r2) == 0);
	cr_assert(memcmp(&back.copy_bytes_per_ns[3][15], &c.copy_bytes_per_ns[3][15],
	                 sizeof(double)) == 0);
	cr_assert(isnan(back.points[0].combine_ns) && isnan(back.handoff_ns[3]));
	cr_assert(isnan(back.handoff_by_rank_ns[0]) && isnan(back.handoff_by_rank_ns[16]));
	cr_assert(memcmp(&back.handoff_by_rank_ns[15], &c.handoff_by_rank_ns[15], sizeof(double)) == 0);
	cr_assert_eq(back.handoff_rank[3], -1);
	cr_assert_eq(back.handoff_rank[2], 8);
	cr_assert_eq(back.cache_bytes[2], (size_t)300 << 20);
	cr_assert(back.npoints == 20 && back.nsegments == 3 && back.ncopiers == 16 && back.nflag == 4);
	cr_assert(back.nchain == 4 && back.nchain_sizes == 3 && back.chain_sizes[2] == (size_t)1 << 20);
	cr_assert(memcmp(&back.chain_ns[2][3], &c.chain_ns[2][3], sizeof(double)) == 0);
	cr_assert(back.ncombine == 16 && memcmp(&back.combine_bytes_per_ns[3][15],
	                                        &c.combine_bytes_per_ns[3][15], sizeof(double)) == 0);
	cr_assert(back.nshared == 16 && memcmp(&back.shared_bytes_per_ns[3][15],
	                                       &c.shared_bytes_per_ns[3][15], sizeof(double)) == 0);
	same_prices(&c, &back);
	free(again);
	free(text);
}

/* Records follow one another in a file, comments of any length between
 * them; each read takes the next. */
Test(calibration_io, two_records, .timeout = 30)
{
	struct tc_calibration a, b, got;
	filled(&a);
	filled(&b);
	b.call_ns = 999.5;
	FILE *f = tmpfile();
	cr_assert(f);
	cr_assert_eq(tc_calibration_write(&a, f), 0);
	fputs("# a comment between records\n\n#", f);
	for (int i = 0; i < 1000; i++)
		fputs(" a long comment line", f); /* as a run's output has */
	fputs("\n", f);
	cr_assert_eq(tc_calibration_write(&b, f), 0);
	rewind(f);
	cr_assert_eq(tc_calibration_read(f, &got), 0, "%s", tc_error_detail());
	cr_assert_eq(got.call_ns, 116.25);
	cr_assert_eq(tc_calibration_read(f, &got), 0, "%s", tc_error_detail());
	cr_assert_eq(got.call_ns, 999.5);
	/* After the last: no record. */
	cr_assert_eq(tc_calibration_read(f, &got), TC_EINVAL);
	cr_assert(strstr(tc_error_detail(), "no calibration"), "%s", tc_error_detail());
	fclose(f);
}

/* text less its lines that start with one of the prefixes (a record
 * written before those fields were measured); malloc'ed. */
static char *without_lines(const char *text, const char *const *prefix, int n)
{
	char *older = malloc(strlen(text) + 1), *o = older;
	cr_assert(older);
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
		bool keep = true;
		for (int i = 0; i < n; i++)
			keep = keep && strncmp(line, prefix[i], strlen(prefix[i])) != 0;
		if (keep)
			memcpy(o, line, len), o += len;
		line += len;
	}
	*o = 0;
	cr_assert(strlen(older) < strlen(text));
	return older;
}

/* A record written before the flag rounds were measured (no nflag, no
 * flag_ns): read, they are not measured, and the price is that of the same
 * calibration with nflag 0 (the rounds priced as R(q)); and one written
 * before the chained steps (no nchain, nchain_sizes, chain_*): nchain 0,
 * priced as the same calibration without them; and one written before the
 * combines were measured (no ncombine, combine_*): ncombine 0, priced as
 * the same calibration without them; the same for the shared table
 * (nshared, shared_*). */
Test(calibration_io, older_record_without_a_field, .timeout = 30)
{
	struct tc_calibration c, back;
	filled(&c);
	char *text = written(&c);
	static const char *const flags[] = {"nflag ", "flag_ns."};
	char *older = without_lines(text, flags, 2);
	cr_assert_eq(read_text(older, &back), 0, "%s", tc_error_detail());
	cr_assert_eq(back.nflag, 0);
	cr_assert(isnan(back.flag_ns[0]));
	struct tc_calibration c0 = c;
	c0.nflag = 0;
	same_prices(&c0, &back);
	free(older);
	static const char *const chains[] = {"nchain ", "nchain_sizes ", "chain_"};
	older = without_lines(text, chains, 3);
	cr_assert_eq(read_text(older, &back), 0, "%s", tc_error_detail());
	cr_assert(back.nchain == 0 && back.nchain_sizes == 0);
	c0 = c;
	c0.nchain = c0.nchain_sizes = 0;
	same_prices(&c0, &back);
	free(older);
	static const char *const combines[] = {"ncombine ", "combine_bytes_per_ns."};
	older = without_lines(text, combines, 2);
	cr_assert_eq(read_text(older, &back), 0, "%s", tc_error_detail());
	cr_assert(back.ncombine == 0 && isnan(back.combine_bytes_per_ns[0][0]));
	c0 = c;
	c0.ncombine = 0;
	same_prices(&c0, &back);
	free(older);
	static const char *const shared[] = {"nshared ", "shared_bytes_per_ns."};
	older = without_lines(text, shared, 2);
	cr_assert_eq(read_text(older, &back), 0, "%s", tc_error_detail());
	cr_assert(back.nshared == 0 && isnan(back.shared_bytes_per_ns[0][0]));
	c0 = c;
	c0.nshared = 0;
	same_prices(&c0, &back);
	free(older);
	free(text);
}

/* Each bad input: its code, *out untouched, the detail naming what. */
Test(calibration_io, refusals, .timeout = 30)
{
	static const struct {
		const char *text;
		int err;
		const char *detail;
	} bad[] = {
	        {"", TC_EINVAL, "no calibration"},
	        {"# only a comment\n", TC_EINVAL, "no calibration"},
	        {"topocoll-model 1\nend\n", TC_EINVAL, "line 1: not a calibration"},
	        {"topocoll-calibration x\nend\n", TC_EINVAL, "line 1: not a calibration"},
	        {"topocoll-calibration 2\nend\n", TC_ENOTSUP, "version 2"},
	        {"topocoll-calibration 1\nts_ns 300\n", TC_EINVAL, "no \"end\""},
	        {"topocoll-calibration 1\nts_nanos 300\nend\n", TC_EINVAL, "line 2: unknown field"},
	        {"topocoll-calibration 1\nts_ns\nend\n", TC_EINVAL, "line 2: no value for"},
	        {"topocoll-calibration 1\nts_ns 3x\nend\n", TC_EINVAL, "\"3x\" is not a value of ts_ns"},
	        {"topocoll-calibration 1\nsingle_copy_min -1\nend\n", TC_EINVAL, "single_copy_min"},
	        {"topocoll-calibration 1\nnpoints 2.5\nend\n", TC_EINVAL, "npoints"},
	        {"topocoll-calibration 1\nnpoints 65\nend\n", TC_EINVAL,
	         "line 2: npoints 65 is not in [0, 64]"},
	        {"topocoll-calibration 1\nncopiers -1\nend\n", TC_EINVAL,
	         "line 2: ncopiers -1 is not in [0, 64]"},
	        {"topocoll-calibration 1\npoints.64.bytes 8\nend\n", TC_EINVAL, "unknown field"},
	        {"topocoll-calibration 1\ncopy_bytes_per_ns.4.0 1\nend\n", TC_EINVAL, "unknown field"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct tc_calibration out;
		memset(&out, 0x5a, sizeof out);
		int err = read_text(bad[i].text, &out);
		cr_assert_eq(err, bad[i].err, "case %zu: %s, not %s", i, tc_strerror(err),
		             tc_strerror(bad[i].err));
		cr_assert(strstr(tc_error_detail(), bad[i].detail), "case %zu: detail \"%s\"", i,
		          tc_error_detail());
		cr_assert_eq(out.npoints, 0x5a5a5a5a, "case %zu: *out written", i);
	}
	struct tc_calibration c;
	filled(&c);
	cr_assert_eq(tc_calibration_write(NULL, stdout), TC_EINVAL);
	cr_assert_eq(tc_calibration_write(&c, NULL), TC_EINVAL);
	cr_assert_eq(tc_calibration_read(NULL, &c), TC_EINVAL);
	cr_assert_eq(tc_calibration_read(stdin, NULL), TC_EINVAL);
	/* The smallest record: every field not measured. */
	cr_assert_eq(read_text("topocoll-calibration 1\nend\n", &c), 0);
	cr_assert(c.npoints == 0 && c.conc_ranks == 0 && isnan(c.ts_ns) && c.handoff_rank[0] == -1);
}

/* The text t with the line of key (its first) given value instead, or
 * removed (value NULL), or, for a key not in t, a line "key value" added
 * before "end" (malloc'd); *line gets its line number (0: removed). */
static char *edited(const char *t, const char *key, const char *value, int *line)
{
	const size_t kl = strlen(key);
	char *out = malloc(strlen(t) + kl + (value ? strlen(value) : 0) + 4), *o = out;
	int n = 0, done = 0;
	*line = 0;
	for (const char *l = t; *l;) {
		const char *nl = strchr(l, '\n');
		const size_t len = nl ? (size_t)(nl - l + 1) : strlen(l);
		n++;
		const bool mine = !done && !strncmp(l, key, kl) && l[kl] == ' ';
		const bool end = !done && !strncmp(l, "end\n", 4);
		if ((mine || end) && value) {
			o += sprintf(o, "%s %s\n", key, value);
			*line = n;
		}
		if (end && value)
			n++;
		if (!mine)
			memcpy(o, l, len), o += len;
		done |= mine || end;
		l += len;
	}
	*o = 0;
	return out;
}

/* Values out of range, and parts that disagree: refused as the text's
 * errors are, the line of the field named; each is what a team refuses
 * too (tests/test_coll_shm.c) and the prediction of a struct so made
 * (tests/test_calibrate.c).  A line given twice and an element beyond its
 * array's count are refused as well. */
Test(calibration_io, refusals_of_values, .timeout = 30)
{
	struct tc_calibration c;
	filled(&c);
	char *text = written(&c);
	static const struct {
		const char *key, *value, *detail;
	} bad[] = {
	        {"call_ns", "-1e30", "call_ns -1e+30 is neither NAN"},
	        {"tc_ns_per_byte", "-7", "tc_ns_per_byte -7"},
	        {"tcopy_ns_per_byte", "inf", "tcopy_ns_per_byte inf"},
	        {"segments.0.fit.ts_ns", "nan", "segments.0.fit.ts_ns nan"},
	        {"segments.0.fit.ts_ns", "-100000", "segments.0.fit: its line"},
	        {"segments.1.fit.tw_ns_per_byte", "-5", "segments.1.fit: its line"},
	        {"segments.2.fit.tw_ns_per_byte", "1e300", "segments.2.fit.tw_ns_per_byte 1e+300"},
	        {"segments.1.recv_ts_ns", "-1", "segments.1.recv_ts_ns -1"},
	        {"segments.1.exchange_ratio", "-1", "segments.1.exchange_ratio -1"},
	        {"segments.0.lo_bytes", "99999999", "segments.0.lo_bytes 99999999"},
	        {"segments.0.hi_bytes", "4", "segments.0.hi_bytes 4"},
	        {"segments.1.first", "9999", "segments.1.first 9999"},
	        {"segments.2.npoints", "7", "segments.2.npoints 7 is not in [1, 6]"},
	        {"segments.0.single_copy", "7", "segments.0.single_copy 7"},
	        {"points.4.bytes", "8", "points.4.bytes 8 is not above"},
	        {"ts_ns", "1e400", "\"1e400\" is not a value of ts_ns"},
	        {"ts_ns", "nan", "ts_ns nan is not all.ts_ns"},
	        {"ts_ns", "-500", "ts_ns -500 is not all.ts_ns"},
	        {"tw_ns_per_byte", "-1", "tw_ns_per_byte -1 is not all.tw_ns_per_byte"},
	        {"regime", "3", "regime 3"},
	        {"mode", "2", "mode 2"},
	        {"all.ts_ns", "nan", "all.ts_ns nan"},
	        {"stream.npoints", "65", "stream.npoints 65"},
	        {"nflag", "5", "nflag 5 is not in [0, nsync 4]"},
	        {"nchain", "5", "nchain 5 is not in [0, nsync 4]"},
	        {"chain_sizes.1", "65536", "chain_sizes.1 65536"},
	        {"chain_ns.2.3", "0", "chain_ns.2.3 0"},
	        {"sync_ns.0", "nan", "sync_ns.0 nan"},
	        {"sync_ranks.1", "2", "sync_ranks.1 2"},
	        {"copiers.15", "17", "copiers.15 17"},
	        {"copy_sizes.1", "1", "copy_sizes.1 1"},
	        {"copy_bytes_per_ns.3.15", "-1", "copy_bytes_per_ns.3.15 -1"},
	        {"ncombine", "15", "ncombine 15 is neither 0 nor ncopiers 16"},
	        {"combine_bytes_per_ns.2.7", "inf", "combine_bytes_per_ns.2.7 inf"},
	        {"nshared", "3", "nshared 3 is neither 0 nor ncopiers 16"},
	        {"shared_bytes_per_ns.1.4", "0", "shared_bytes_per_ns.1.4 0"},
	        {"handoff_ns.1", "0", "handoff_ns.1 0"},
	        {"handoff_pair_ns", "nan", "handoff_pair_ns nan"},
	        /* The count said 0 with its elements given. */
	        {"nsegments", "0", "segments.0.lo_bytes lies beyond its array's count (nsegments)"},
	        {"nflag", "2", "flag_ns.2 lies beyond its array's count (nflag)"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int line = 0;
		char *t = edited(text, bad[i].key, bad[i].value, &line);
		cr_assert(line > 0, "case %zu: %s not in the text", i, bad[i].key);
		struct tc_calibration out;
		memset(&out, 0x5a, sizeof out);
		int err = read_text(t, &out);
		cr_assert_eq(err, TC_EINVAL, "case %zu (%s %s): %s", i, bad[i].key, bad[i].value,
		             tc_strerror(err));
		cr_assert(strstr(tc_error_detail(), bad[i].detail), "case %zu: detail \"%s\"", i,
		          tc_error_detail());
		cr_assert_eq(out.npoints, 0x5a5a5a5a, "case %zu: *out written", i);
		/* The line named: the field's own, or for an element beyond its
		 * count the element's (after the count's line). */
		char at[32];
		snprintf(at, sizeof at, "line %d: ", line);
		cr_assert(strstr(tc_error_detail(), "line ") &&
		                  (strstr(tc_error_detail(), at) || strstr(bad[i].detail, "beyond")),
		          "case %zu: \"%s\" does not name line %d", i, tc_error_detail(), line);
		free(t);
	}
	/* A line given twice: the second is refused (the last no longer
	 * wins). */
	size_t n = strlen(text);
	char *twice = malloc(n + 32);
	snprintf(twice, n + 32, "topocoll-calibration 1\nts_ns 1\n%s", text + 23);
	cr_assert_eq(read_text(twice, &c), TC_EINVAL);
	cr_assert(strstr(tc_error_detail(), "line 3: ts_ns again (first on line 2)"), "%s",
	          tc_error_detail());
	free(twice);
	/* Not measured is not bad: NAN where the struct says so (o_call,
	 * t_copy, a segment's exchange ratio and combining receive, a
	 * class's hand-off, the line of a fit), and the prices are those of
	 * the same calibration so made. */
	static const struct {
		const char *key;
	} unmeasured[] = {{"call_ns"},
	                  {"tcopy_ns_per_byte"},
	                  {"tc_ns_per_byte"},
	                  {"segments.1.exchange_ratio"},
	                  {"segments.0.recv_ts_ns"},
	                  {"handoff_ns.2"}};
	for (size_t i = 0; i < sizeof unmeasured / sizeof unmeasured[0]; i++) {
		int line = 0;
		char *t = edited(text, unmeasured[i].key, "nan", &line);
		cr_assert_eq(read_text(t, &c), 0, "%s nan: %s", unmeasured[i].key, tc_error_detail());
		free(t);
	}
	free(text);
}

/* A path that is not a file (a directory opens for reading and reads as
 * none): TC_ESYS, the detail saying why, not a stale one. */
Test(calibration_io, a_directory, .timeout = 30)
{
	FILE *f = fopen(".", "r");
	if (!f)
		cr_skip_test("this system does not open a directory for reading");
	struct tc_calibration c;
	cr_assert_eq(read_text("topocoll-calibration 1\nts_nanos 3\nend\n", &c), TC_EINVAL);
	int err = tc_calibration_read(f, &c);
	fclose(f);
	cr_assert_eq(err, TC_ESYS, "%s", tc_strerror(err));
	cr_assert(strstr(tc_error_detail(), strerror(EISDIR)), "detail \"%s\"", tc_error_detail());
}

/* Every calibration the many-core reports keep (docs/manycore) reads, and
 * writes back as it reads: what was valid stays valid. */
Test(calibration_io, stored_calibrations_read, .timeout = 30)
{
	const char *data = getenv("TC_TEST_DATA");
	cr_assert(data, "TC_TEST_DATA is not set (run through meson test)");
	char pat[4096];
	snprintf(pat, sizeof pat, "%s/../../docs/manycore/*/*/calibration-p*.cal", data);
	glob_t g;
	cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no stored calibration matches %s", pat);
	cr_assert_geq(g.gl_pathc, (size_t)1);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");
		cr_assert(f, "%s", g.gl_pathv[i]);
		struct tc_calibration c, back;
		int err = tc_calibration_read(f, &c);
		fclose(f);
		cr_assert_eq(err, 0, "%s: %s", g.gl_pathv[i], tc_error_detail());
		char *text = written(&c);
		cr_assert_eq(read_text(text, &back), 0, "%s again: %s", g.gl_pathv[i],
		             tc_error_detail());
		free(text);
	}
	globfree(&g);
}
