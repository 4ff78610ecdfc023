/* SPDX-License-Identifier: MIT */
/*
 * tools/cli_output.c - what the topocoll tool prints (see cli.h): its help
 * texts, numbers and times, JSON, the programs it pipes to (gnuplot) and
 * its progress line.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* ---- help -------------------------------------------------------------- */

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
