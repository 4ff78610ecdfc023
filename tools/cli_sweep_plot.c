/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_sweep_plot.c - topocoll sweep --plot: the rows as gnuplot data
 * and a script beside the picture, and gnuplot run on them (cli_sweep.h).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_sweep.h"

/* The family of a topology spec: "ring" of "ring:16", "tree:2" of
 * "tree:2:15", into buf. */
static const char *topo_family(const char *spec, char *buf, size_t len)
{
	snprintf(buf, len, "%s", spec);
	char *c = strrchr(buf, ':');
	if (c)
		*c = '\0';
	return buf;
}

/* Rows of one series, in the order of x; ties in row order. */
static const struct sweep_row *sort_rows;
static int sort_by_p;
static int series_cmp(const void *x, const void *y)
{
	const struct sweep_row *a = &sort_rows[*(const int *)x], *b = &sort_rows[*(const int *)y];
	uint64_t u = sort_by_p ? (uint64_t)a->p : a->bytes, v = sort_by_p ? (uint64_t)b->p : b->bytes;
	if (u != v)
		return u < v ? -1 : 1;
	return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

#define SWEEP_MAX_SERIES 256

/* Writes base.dat and base.gp for the rows and runs gnuplot.  The x axis is
 * the block size, or p when the sizes are one and p varies.  One series (a
 * gnuplot index) per (topology, coll, algorithm), the topology's family when
 * x is p; each algorithm its colour, dash and point shape, so that equal
 * times stay visible.  The data and the script record the command line and
 * the model; the picture names the model. */
int cli_sweep_plot(const char *file, const struct sweep_row *rows, int n, const struct sweep_meta *meta)
{
	size_t fl = strlen(file);
	int svg = fl > 4 && !strcmp(file + fl - 4, ".svg");
	char base[4000], dat[4096], gp[4096];
	snprintf(base, sizeof base, "%.*s", (int)(fl - 4), file);
	snprintf(dat, sizeof dat, "%s.dat", base);
	snprintf(gp, sizeof gp, "%s.gp", base);
	int *idx = malloc((n ? (size_t)n : 1) * sizeof *idx);
	int *ser = malloc((n ? (size_t)n : 1) * sizeof *ser);
	if (!idx || !ser) {
		free(idx);
		free(ser);
		return cli_fail("out of memory");
	}
	FILE *fd = fopen(dat, "w");
	FILE *fg = fd ? fopen(gp, "w") : NULL;
	if (!fd || !fg) {
		if (fd)
			fclose(fd);
		free(idx);
		free(ser);
		return cli_fail("--plot: cannot write %s: %s", fd ? gp : dat, strerror(errno));
	}
	const char *algs[64];
	int nalgs = 0;
	int multi_coll = 0, multi_topo = 0, multi_bytes = 0, multi_p = 0, has_meas[3] = {0, 0, 0};
	for (int i = 0; i < n; i++) {
		multi_coll |= rows[i].coll != rows[0].coll;
		multi_topo |= !!strcmp(rows[i].topo, rows[0].topo);
		multi_bytes |= rows[i].bytes != rows[0].bytes;
		multi_p |= rows[i].p != rows[0].p;
		if (isfinite(rows[i].measured_ns))
			has_meas[rows[i].mode] = 1;
	}
	const int by_p = !multi_bytes && multi_p;
	char fa[64], fb[64];
	if (by_p) { /* one line per family: ring:4 .. ring:64 are one topology */
		multi_topo = 0;
		for (int i = 0; i < n; i++)
			multi_topo |= !!strcmp(topo_family(rows[i].topo, fa, sizeof fa),
			                       topo_family(rows[0].topo, fb, sizeof fb));
	}
	uint64_t xmin = UINT64_MAX, xmax = 0;
	for (int i = 0; i < n; i++) {
		uint64_t x = by_p ? (uint64_t)rows[i].p : rows[i].bytes;
		if (x > 0) {
			xmin = x < xmin ? x : xmin;
			xmax = x > xmax ? x : xmax;
		}
	}
	/* The series: rows with the same key, wherever they are. */
	int nser = 0, first[SWEEP_MAX_SERIES];
	for (int i = 0; i < n; i++) {
		int k = 0;
		for (; k < nser; k++) {
			const struct sweep_row *f = &rows[first[k]];
			if (f->coll == rows[i].coll && !strcmp(f->alg, rows[i].alg) &&
			    !strcmp(by_p ? topo_family(f->topo, fa, sizeof fa) : f->topo,
			            by_p ? topo_family(rows[i].topo, fb, sizeof fb) : rows[i].topo))
				break;
		}
		if (k == nser && nser < SWEEP_MAX_SERIES)
			first[nser++] = i;
		ser[i] = k < SWEEP_MAX_SERIES ? k : -1;
	}
	char mdesc[200];
	const struct tc_model *md = &meta->m->md;
	snprintf(mdesc, sizeof mdesc,
	         "model: t_s %g ns, t_w %g ns/B, t_h %g ns, t_c %g ns/B, mu %zu, %s-port, %s duplex, "
	         "%s, combining %s%s",
	         md->ts_ns, md->tw_ns, md->th_ns, md->tc_ns, md->mu,
	         md->ports == TC_PORTS_ALL ? "all" : "one", md->duplex == TC_DUPLEX_HALF ? "half" : "full",
	         md->switching == TC_SWITCH_CT ? "cut-through" : "store-and-forward",
	         md->combining ? "on" : "off", meta->m->packets ? ", packets set" : "");
	fprintf(fd, "# %s\n# %s\n", meta->command, mdesc);
	fprintf(fd, "# %s modelled_ns native_ns emulated_ns, one block per series\n",
	        by_p ? "p" : "bytes");
	static const int pts[] = {6, 4, 8, 12, 10, 14, 1, 2, 3};
	int color[SWEEP_MAX_SERIES], dash[SWEEP_MAX_SERIES], pt[SWEEP_MAX_SERIES];
	char titles[SWEEP_MAX_SERIES][96];
	for (int sx = 0; sx < nser; sx++) {
		const struct sweep_row *f = &rows[first[sx]];
		int a = 0;
		while (a < nalgs && strcmp(algs[a], f->alg))
			a++;
		if (a == nalgs && nalgs < 64)
			algs[nalgs++] = f->alg;
		color[sx] = a + 1;
		dash[sx] = a % 5 + 1;
		pt[sx] = pts[sx % (int)(sizeof pts / sizeof pts[0])];
		snprintf(titles[sx], sizeof titles[sx], "%s%s%s%s%s", f->alg, multi_coll ? " " : "",
		         multi_coll ? tc_coll_name(f->coll) : "", multi_topo ? " " : "",
		         multi_topo ? (by_p ? topo_family(f->topo, fa, sizeof fa) : f->topo) : "");
		fprintf(fd, "# %s\n", titles[sx]);
		int m = 0;
		for (int i = 0; i < n; i++)
			if (ser[i] == sx)
				idx[m++] = i;
		sort_rows = rows;
		sort_by_p = by_p;
		qsort(idx, (size_t)m, sizeof *idx, series_cmp);
		/* The modes of one x are merged into one line. */
		for (int k = 0; k < m;) {
			const struct sweep_row *rk = &rows[idx[k]];
			uint64_t x = by_p ? (uint64_t)rk->p : rk->bytes;
			double v[3] = {NAN, NAN, NAN};
			int l = k;
			for (; l < m && (by_p ? (uint64_t)rows[idx[l]].p : rows[idx[l]].bytes) == x; l++) {
				const struct sweep_row *rl = &rows[idx[l]];
				if (isfinite(rl->modelled_ns))
					v[0] = rl->modelled_ns;
				if (rl->mode && isfinite(rl->measured_ns))
					v[rl->mode] = rl->measured_ns;
			}
			if (x > 0) {
				char b[3][32];
				fprintf(fd, "%llu %s %s %s\n", (unsigned long long)x,
				        isfinite(v[0]) && v[0] > 0 ? cli_num(v[0], b[0]) : "NaN",
				        isfinite(v[1]) && v[1] > 0 ? cli_num(v[1], b[1]) : "NaN",
				        isfinite(v[2]) && v[2] > 0 ? cli_num(v[2], b[2]) : "NaN");
			}
			k = l;
		}
		fprintf(fd, "\n\n");
	}
	fclose(fd);

	fprintf(fg, "# topocoll sweep plot: gnuplot %s\n# %s\n# %s\n", gp, meta->command, mdesc);
	if (svg)
		fprintf(fg, "set terminal svg size 1000,650 dynamic background rgb 'white'\n");
	else
		fprintf(fg, "set terminal pngcairo size 1000,650\n");
	fprintf(fg, "set output '%s'\n", file);
	fprintf(fg, "set logscale x 2\nset logscale y 10\nset format y '10^{%%L}'\n");
	/* x tics at powers of 4 (or 16 over wide ranges), written as sizes
	 * (bytes) or numbers (p). */
	if (xmax >= xmin && xmin != UINT64_MAX) {
		int step = 2;
		uint64_t lo = 1, hi = 1;
		while (lo * 2 <= xmin)
			lo *= 2;
		while (hi < xmax && hi < ((uint64_t)1 << 62))
			hi *= 2;
		int span = 0;
		for (uint64_t x = lo; x < hi; x *= 2)
			span++;
		if (span > 16)
			step = 4;
		else if (span <= 8)
			step = 1;
		fprintf(fg, "set xtics (");
		int firstt = 1;
		for (uint64_t x = lo; x <= hi; x <<= step) {
			char b[32];
			if (by_p)
				snprintf(b, sizeof b, "%llu", (unsigned long long)x);
			fprintf(fg, "%s\"%s\" %llu", firstt ? "" : ", ",
			        by_p ? b : cli_size_str(x, b, sizeof b), (unsigned long long)x);
			firstt = 0;
			if (x > (UINT64_MAX >> step))
				break;
		}
		fprintf(fg, ")\n");
		fprintf(fg, "set xrange [%g:%g]\n", (double)xmin / 1.25, (double)xmax * 1.25);
	}
	if (by_p) {
		char b[32];
		fprintf(fg, "set xlabel 'p (ranks), block m = %s per rank'\n",
		        n ? cli_size_str(rows[0].bytes, b, sizeof b) : "-");
	} else {
		fprintf(fg, "set xlabel 'bytes per rank (block m)'\n");
	}
	fprintf(fg, "set ylabel 'time (ns)'\n");
	fprintf(fg, "set grid\nset key outside right top noenhanced\n");
	fprintf(fg, "set title \"");
	if (!multi_coll && n)
		fprintf(fg, "%s", tc_coll_name(rows[0].coll));
	if (!multi_topo && n)
		fprintf(fg, " on %s", by_p ? topo_family(rows[0].topo, fa, sizeof fa) : rows[0].topo);
	fprintf(fg, " (lines: modelled");
	if (has_meas[1])
		fprintf(fg, "; filled circles: measured, native");
	if (has_meas[2])
		fprintf(fg, "; filled squares: measured, emulated");
	fprintf(fg, ")\" noenhanced\n");
	/* The model and the command line, at the foot of the picture. */
	fprintf(fg, "set label 2 \"%s\" at screen 0.01, screen 0.045 font ',8' noenhanced\n", mdesc);
	fprintf(fg, "set label 1 \"");
	for (const char *c = meta->command; *c; c++) {
		if (*c == '"' || *c == '\\')
			fputc('\\', fg);
		fputc(*c, fg);
	}
	fprintf(fg, "\" at screen 0.01, screen 0.015 font ',8' noenhanced\n");
	fprintf(fg, "set bmargin 6\n");
	fprintf(fg, "plot \\\n");
	for (int sx = 0; sx < nser; sx++) {
		/* Open shapes, the earlier series larger: equal points nest. */
		fprintf(fg,
		        "  '%s' index %d using 1:2 with linespoints lc %d dt %d pt %d ps %.2g lw 2 "
		        "title '%s'",
		        dat, sx, color[sx], dash[sx], pt[sx], 1 + 0.35 * ((nser - 1 - sx) % 6),
		        titles[sx]);
		if (has_meas[1])
			fprintf(fg, ", \\\n  '' index %d using 1:3 with points lc %d pt 7 notitle",
			        sx, color[sx]);
		if (has_meas[2])
			fprintf(fg, ", \\\n  '' index %d using 1:4 with points lc %d pt 5 notitle",
			        sx, color[sx]);
		fprintf(fg, "%s\n", sx + 1 < nser ? ", \\" : "");
	}
	fclose(fg);
	free(idx);
	free(ser);
	if (!nser)
		return cli_fail("--plot: nothing to plot");
	return cli_gnuplot(file, gp, dat);
}

/* Whether the plot and its .dat and .gp can be written: the folder exists and
 * is writable, and so is each file that exists.  0 or CLI_USAGE (printed),
 * before anything is swept. */
int cli_sweep_plot_check(const char *file)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", file);
	char *sl = strrchr(dir, '/');
	if (!sl)
		strcpy(dir, ".");
	else if (sl == dir)
		dir[1] = '\0';
	else
		*sl = '\0';
	if (access(dir, W_OK | X_OK))
		return cli_usage("--plot: cannot write in the folder '%s' of %s: %s", dir, file,
		                 strerror(errno));
	size_t fl = strlen(file);
	char other[4200];
	const char *ext[3] = {"", ".dat", ".gp"};
	for (int k = 0; k < 3; k++) {
		snprintf(other, sizeof other, "%.*s%s", (int)(k ? fl - 4 : fl), file, ext[k]);
		if (!access(other, F_OK) && access(other, W_OK))
			return cli_usage("--plot: cannot write %s: %s", other, strerror(errno));
	}
	return 0;
}
