/* SPDX-License-Identifier: MIT */
/*
 * bench/peers/driver.c - the peers benchmark: topocoll against OpenMP
 * (libgomp), Open MPI and MPICH, measured in the same run on the same machine.
 *
 * For each team size p (2, then 8, 16, 64: oversubscribed on small
 * machines) and each repetition, it launches the program of every
 * implementation in turn: ours first, then the peers in an order that
 * rotates with the repetition, so that every figure of ours has the peers'
 * figures measured next to it in time (this VM's speed drifts for seconds at
 * a time, and other work may share it).  Each program runs every case of p
 * and prints one result line per case and variant (peers.h); the driver
 * keeps the median of each over the repetitions, takes the best variant of
 * each implementation (ours: the best topology; OpenMP: the best design),
 * and prints a table, its goals, and one JSON line per case and
 * peer.
 *
 * Launchers (never tuned down: the fastest settings we know of each):
 *   openmp   OMP_NUM_THREADS=p OMP_PROC_BIND=close OMP_PLACES=cores,
 *            OMP_WAIT_POLICY=active when p <= CPUs, passive otherwise;
 *            stack limits raised for the private copies of the array
 *            reduction (GCC puts them on the stack).
 *   openmpi  mpirun.openmpi -np p --bind-to core --map-by core (as root
 *            --allow-run-as-root); oversubscribed: --oversubscribe
 *            --bind-to core:overload-allowed --mca mpi_yield_when_idle 1.
 *   mpich    mpiexec.mpich -n p -bind-to core.  MPICH (ch4) busy-polls and
 *            has no switch that makes it yield: MPIR_CVAR_POLLS_BEFORE_YIELD
 *            is set to 1 when oversubscribed but measured to change nothing.
 * A launch that outlives its timeout is killed (its process group) and the
 * peer is skipped for that p from then on; a peer that takes more than its
 * allowance for one p stops repeating (at least one repetition always runs).
 *
 * Usage: peers [--dir DIR] [--reps N] [--quick] [--limit SECONDS] [--only NAME]
 *              [--case LIST] [--p LIST] [--markdown] [--write-inputs]
 *   DIR holds peer_ours, peer_openmp, peer_openmpi, peer_mpich and ours over
 *   each MPI, peer_ours_openmpi and peer_ours_mpich (default: the driver's
 *   own directory); a missing program or launcher skips that peer.  --only
 *   openmpi or mpich keeps ours over that MPI too.
 * Ours over MPI (a team over MPI_COMM_WORLD) is launched exactly as that
 * MPI's own peer and reported in a table of its own beside MPI's figures.
 *   --case: comma-separated cases, "allgather" or "allgather:8" (bytes as in
 *   the JSON), passed to the programs as -c; --p: comma-separated team sizes
 *   among 2, 8, 16, 64; --markdown: the table again in Markdown;
 *   --write-inputs: every rank of every peer writes its input before each
 *   call (-w, pr_write_input in peers.h), as a program that computes its
 *   inputs between calls; the header says so.
 * Cases: allgather's size is the block each rank contributes (each rank gets
 * p blocks), alltoall's the block from each rank to each rank.  A case ours
 * has no algorithm for yet (TC_ENOTSUP) is shown as n/a with the error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "peers.h"

/* The peers (NPEER: ours on threads and the three others), then ours over
 * each MPI (a team over MPI_COMM_WORLD, bench/peers/mpi.c -DPEERS_OURS_MPI),
 * launched as that MPI's own peer is. */
enum {
	IMPL_OURS,
	IMPL_OPENMP,
	IMPL_OPENMPI,
	IMPL_MPICH,
	NPEER,
	IMPL_OURS_OPENMPI = NPEER,
	IMPL_OURS_MPICH,
	NIMPL
};
static const char *const impl_name[NIMPL] = {"ours",  "openmp",       "openmpi",
                                             "mpich", "ours-openmpi", "ours-mpich"};
static const char *const impl_prog[NIMPL] = {"peer_ours",  "peer_openmp",       "peer_openmpi",
                                             "peer_mpich", "peer_ours_openmpi", "peer_ours_mpich"};
static const char *const impl_launcher[NIMPL] =
        {NULL, NULL, "mpirun.openmpi", "mpiexec.mpich", "mpirun.openmpi", "mpiexec.mpich"};

/* The MPI whose launcher runs impl (IMPL_OPENMPI, IMPL_MPICH), or -1. */
static int impl_mpi(int impl)
{
	return impl == IMPL_OPENMPI || impl == IMPL_OURS_OPENMPI ? IMPL_OPENMPI
	       : impl == IMPL_MPICH || impl == IMPL_OURS_MPICH   ? IMPL_MPICH
	                                                         : -1;
}

static const int group_p[] = {2, 8, 16, 64};
#define NGROUP PR_NELEM(group_p)
#define MAXREPS 32

static char dir[4096];
static int ncpu;
static int reps = 5;
static double budget_dedicated_ms = 30, budget_oversub_ms = 60;
static double limit_s = 240;    /* stop starting repetitions after this */
static double allowance_s = 25; /* per implementation and p */
static int available[NIMPL];
static int want_markdown;
static const char *case_filter; /* --case: NULL for every case */
static int write_inputs;        /* --write-inputs: -w to every peer program */
static int want_p[NGROUP];      /* --p: the team sizes to run */
static char why_missing[NIMPL][128];

/* ---- selection ------------------------------------------------------------ */

/* Non-zero when the report covers case c at group g. */
static int selected(int g, const struct pr_case *c)
{
	return want_p[g] && pr_case_selected(c, case_filter);
}

/* The number of cases a launch for group g runs. */
static int nselected(int g)
{
	int n, k = 0;
	const struct pr_case *cases = pr_cases(group_p[g], &n);
	for (int i = 0; i < n; i++)
		k += selected(g, &cases[i]);
	return k;
}

static int group_of(int p)
{
	for (int g = 0; g < NGROUP; g++)
		if (group_p[g] == p)
			return g;
	return -1;
}

/* ---- results ------------------------------------------------------------ */

struct rec {
	int impl;
	enum pr_kind kind;
	int p;
	size_t bytes;
	char variant[32];
	char note[64]; /* algorithm, or the error */
	int n, nerr;
	double wall[MAXREPS], cpu[MAXREPS];
};

static struct rec *recs;
static int nrecs, caprecs;

static struct rec *rec_get(int impl, enum pr_kind kind, int p, size_t bytes, const char *variant)
{
	for (int i = 0; i < nrecs; i++) {
		struct rec *r = &recs[i];
		if (r->impl == impl && r->kind == kind && r->p == p && r->bytes == bytes &&
		    !strcmp(r->variant, variant))
			return r;
	}
	if (nrecs == caprecs) {
		caprecs = caprecs ? 2 * caprecs : 64;
		recs = realloc(recs, (size_t)caprecs * sizeof *recs);
		if (!recs) {
			perror("peers");
			exit(1);
		}
	}
	struct rec *r = &recs[nrecs++];
	memset(r, 0, sizeof *r);
	r->impl = impl;
	r->kind = kind;
	r->p = p;
	r->bytes = bytes;
	snprintf(r->variant, sizeof r->variant, "%s", variant);
	return r;
}

static int parse_kind(const char *s, enum pr_kind *k)
{
	for (int i = 0; i < PR_NELEM(pr_kind_name); i++)
		if (!strcmp(s, pr_kind_name[i])) {
			*k = (enum pr_kind)i;
			return 0;
		}
	return -1;
}

/* "R <case> <p> <bytes> <variant> <wall_ns> <cpu_ns> <iters> <note>" */
static void take_line(int impl, const char *line)
{
	char kind_s[32], variant[32], wall_s[32], cpu_s[32], note[64];
	int p;
	size_t bytes;
	long iters;
	enum pr_kind kind;
	if (sscanf(line, "R %31s %d %zu %31s %31s %31s %ld %63s", kind_s, &p, &bytes, variant,
	           wall_s, cpu_s, &iters, note) != 8 ||
	    parse_kind(kind_s, &kind))
		return;
	struct rec *r = rec_get(impl, kind, p, bytes, variant);
	if (!strncmp(note, "error:", 6) || iters <= 0) {
		r->nerr++;
		snprintf(r->note, sizeof r->note, "%s", note);
		return;
	}
	if (r->n < MAXREPS) {
		r->wall[r->n] = atof(wall_s);
		r->cpu[r->n] = atof(cpu_s);
		r->n++;
	}
	snprintf(r->note, sizeof r->note, "%s", note);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	if (n <= 0)
		return NAN;
	double s[MAXREPS];
	memcpy(s, v, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, cmp_double);
	return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* ---- launching ---------------------------------------------------------- */

static double now_s(void)
{
	return pr_now_ns() * 1e-9;
}

/* The 1-minute load average before the run: other work on the machine skews
 * every figure (during the run, our own 64 ranks raise it). */
static double loadavg(void)
{
	double l = NAN;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = NAN;
		fclose(f);
	}
	return l;
}

static int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	char buf[4096];
	for (const char *s = path; *s;) {
		const char *e = strchr(s, ':');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		snprintf(buf, sizeof buf, "%.*s/%s", (int)len, s, prog);
		if (access(buf, X_OK) == 0)
			return 1;
		if (!e)
			break;
		s = e + 1;
	}
	return 0;
}

struct argv_buf {
	char *v[64];
	char store[64][512];
	int n;
};

static void arg(struct argv_buf *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->store[a->n], sizeof a->store[0], fmt, ap);
	va_end(ap);
	a->v[a->n] = a->store[a->n];
	a->n++;
	a->v[a->n] = NULL;
}

/* The command line and environment of implementation impl for p ranks. */
static void command(int impl, int p, double budget_ms, struct argv_buf *a, struct argv_buf *env)
{
	int over = p > ncpu;
	a->n = env->n = 0;
	switch (impl) {
	case IMPL_OPENMP:
		arg(env, "OMP_NUM_THREADS=%d", p);
		arg(env, "OMP_PROC_BIND=close");
		arg(env, "OMP_PLACES=cores");
		arg(env, "OMP_WAIT_POLICY=%s", over ? "passive" : "active");
		arg(env, "OMP_STACKSIZE=256M");
		break;
	case IMPL_OPENMPI:
	case IMPL_OURS_OPENMPI:
		arg(a, "mpirun.openmpi");
		if (geteuid() == 0)
			arg(a, "--allow-run-as-root");
		arg(a, "-np");
		arg(a, "%d", p);
		arg(a, "--map-by");
		arg(a, "core");
		if (over) {
			arg(a, "--oversubscribe");
			arg(a, "--bind-to");
			arg(a, "core:overload-allowed");
			arg(a, "--mca");
			arg(a, "mpi_yield_when_idle");
			arg(a, "1");
		} else {
			arg(a, "--bind-to");
			arg(a, "core");
		}
		break;
	case IMPL_MPICH:
	case IMPL_OURS_MPICH:
		arg(a, "mpiexec.mpich");
		arg(a, "-n");
		arg(a, "%d", p);
		arg(a, "-bind-to");
		arg(a, "core");
		if (over)
			arg(env, "MPIR_CVAR_POLLS_BEFORE_YIELD=1");
		break;
	default:
		break;
	}
	arg(a, "%s/%s", dir, impl_prog[impl]);
	arg(a, "-p");
	arg(a, "%d", p);
	arg(a, "-b");
	arg(a, "%g", budget_ms);
	if (case_filter) {
		arg(a, "-c");
		arg(a, "%s", case_filter);
	}
	if (write_inputs)
		arg(a, "-w");
}

static void print_command(int impl, int p)
{
	struct argv_buf a, env;
	command(impl, p, p > ncpu ? budget_oversub_ms : budget_dedicated_ms, &a, &env);
	printf("#   %-8s p=%-3d", impl_name[impl], p);
	for (int i = 0; i < env.n; i++)
		printf(" %s", env.v[i]);
	for (int i = 0; i < a.n; i++)
		printf(" %s", i == 0 && strchr(a.v[i], '/') ? strrchr(a.v[i], '/') + 1 : a.v[i]);
	printf("\n");
}

/* Runs one launch; returns 0, or -1 on timeout (the launch was killed), or
 * 1 when it failed otherwise.  Result lines go to take_line(). */
static int launch(int impl, int p, double budget_ms, double timeout_s)
{
	struct argv_buf a, env;
	command(impl, p, budget_ms, &a, &env);
	int fd[2];
	if (pipe(fd)) {
		perror("peers: pipe");
		return 1;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("peers: fork");
		return 1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		for (int i = 0; i < env.n; i++)
			putenv(env.v[i]);
		if (impl == IMPL_OPENMP) {
			/* The main thread's stack holds a private copy of the
			 * reduced array (8 MiB for 1 Mi doubles). */
			struct rlimit rl = {(rlim_t)1 << 30, (rlim_t)1 << 30};
			struct rlimit cur;
			getrlimit(RLIMIT_STACK, &cur);
			if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < rl.rlim_max)
				rl.rlim_cur = rl.rlim_max = cur.rlim_max;
			setrlimit(RLIMIT_STACK, &rl);
		}
		execvp(a.v[0], a.v);
		fprintf(stderr, "peers: %s: %s\n", a.v[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(fd[1]);
	char buf[1 << 16];
	size_t have = 0;
	int timed_out = 0;
	double deadline = now_s() + timeout_s;
	char diag[2048] = "";
	for (;;) {
		double left = deadline - now_s();
		if (left <= 0) {
			timed_out = 1;
			break;
		}
		struct pollfd pfd = {fd[0], POLLIN, 0};
		int r = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t k = read(fd[0], buf + have, sizeof buf - 1 - have);
		if (k <= 0)
			break;
		have += (size_t)k;
		buf[have] = '\0';
		char *s = buf, *nl;
		while ((nl = strchr(s, '\n'))) {
			*nl = '\0';
			if (s[0] == 'R' && s[1] == ' ')
				take_line(impl, s);
			else if (*s && strlen(diag) + strlen(s) + 2 < sizeof diag) {
				strcat(diag, s);
				strcat(diag, "\n");
			}
			s = nl + 1;
		}
		have = strlen(s);
		memmove(buf, s, have);
		if (have == sizeof buf - 1)
			have = 0; /* an absurdly long line: drop it */
	}
	close(fd[0]);
	int status = 0;
	if (timed_out) {
		kill(-pid, SIGTERM);
		for (int i = 0; i < 20 && waitpid(pid, &status, WNOHANG) == 0; i++)
			usleep(100000);
		kill(-pid, SIGKILL); /* the whole group: MPI ranks included */
		waitpid(pid, &status, 0);
		return -1;
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "peers: %s p=%d failed (status %d)%s%s", impl_name[impl], p, status,
		        *diag ? ":\n" : "\n", diag);
		return 1;
	}
	return 0;
}

/* ---- report --------------------------------------------------------------- */

static const char *human(double ns, char *buf)
{
	if (!isfinite(ns))
		snprintf(buf, 16, "-");
	else if (ns < 1e3)
		snprintf(buf, 16, "%.0fns", ns);
	else if (ns < 1e4)
		snprintf(buf, 16, "%.2fus", ns / 1e3);
	else if (ns < 1e6)
		snprintf(buf, 16, "%.1fus", ns / 1e3);
	else if (ns < 1e7)
		snprintf(buf, 16, "%.2fms", ns / 1e6);
	else if (ns < 1e9)
		snprintf(buf, 16, "%.1fms", ns / 1e6);
	else
		snprintf(buf, 16, "%.2fs", ns / 1e9);
	return buf;
}

static const char *size_str(size_t b, char *buf, size_t cap)
{
	if (b >= ((size_t)1 << 20) && b % ((size_t)1 << 20) == 0)
		snprintf(buf, cap, "%zuMiB", b >> 20);
	else if (b >= 1024 && b % 1024 == 0)
		snprintf(buf, cap, "%zuKiB", b >> 10);
	else
		snprintf(buf, cap, "%zuB", b);
	return buf;
}

/* The best variant of impl for a case: lowest median wall time. */
struct best {
	int ok;
	double wall, cpu;
	int n;
	const struct rec *r;
	const char *err; /* when !ok: why */
};

static struct best best_of(int impl, enum pr_kind kind, int p, size_t bytes, const char *only)
{
	struct best b = {0, NAN, NAN, 0, NULL, NULL};
	for (int i = 0; i < nrecs; i++) {
		const struct rec *r = &recs[i];
		if (r->impl != impl || r->kind != kind || r->p != p || r->bytes != bytes)
			continue;
		if (only && strcmp(r->variant, only))
			continue;
		if (!r->n) {
			if (!b.ok && !b.err)
				b.err = r->note;
			continue;
		}
		double w = median(r->wall, r->n);
		if (!b.ok || w < b.wall) {
			b.ok = 1;
			b.wall = w;
			b.cpu = median(r->cpu, r->n);
			b.n = r->n;
			b.r = r;
		}
	}
	return b;
}

/* Why ours has no figure for a case: its error without the "error:" prefix
 * (TC_ENOTSUP: no algorithm yet for that collective). */
static const char *ours_missing(const struct best *o)
{
	if (!o->err)
		return available[IMPL_OURS] ? "not measured" : "not built";
	return strncmp(o->err, "error:", 6) ? o->err : o->err + 6;
}

static int skipped[NIMPL][NGROUP]; /* 1: timed out, 2: allowance used up */
static double spent[NIMPL][NGROUP];
static int done_reps[NIMPL][NGROUP];

static void json_str(const char *key, const char *v)
{
	printf(", \"%s\": \"", key);
	for (; *v; v++)
		putchar(*v == '"' || *v == '\\' ? '_' : *v);
	putchar('"');
}

static void json_num(const char *key, double v)
{
	if (isfinite(v))
		printf(", \"%s\": %.1f", key, v);
	else
		printf(", \"%s\": null", key);
}

static const char *peer_missing(int impl, int g, const struct best *b)
{
	if (!available[impl])
		return why_missing[impl];
	if (skipped[impl][g] == 1)
		return "timeout";
	if (b->err)
		return b->err;
	if (impl == IMPL_OPENMP)
		return "n/a (no point-to-point)";
	return "not measured";
}

static void report(void)
{
	char b1[32], b2[16], b3[16], b4[16];
	printf("\n%-9s %3s %6s | %8s %8s %-12s %-13s %8s |", "case", "p", "size", "ours", "cpu",
	       "topology", "algorithm", "complete");
	for (int i = 1; i < NPEER; i++)
		printf(" %-8s %8s %7s |", impl_name[i], "cpu", "ratio");
	printf("\n");
	for (int g = 0; g < NGROUP; g++) {
		int p = group_p[g], n;
		const struct pr_case *cases = pr_cases(p, &n);
		for (int ci = 0; ci < n; ci++) {
			const struct pr_case *c = &cases[ci];
			if (!selected(g, c))
				continue;
			struct best o = best_of(IMPL_OURS, c->kind, p, c->bytes, NULL);
			char cname[32];
			snprintf(cname, sizeof cname, "complete:%d", p);
			struct best oc = best_of(IMPL_OURS, c->kind, p, c->bytes, cname);
			printf("%-9s %3d %6s | %8s %8s %-12s %-13s %8s |", pr_kind_name[c->kind], p,
			       size_str(c->bytes, b1, sizeof b1), o.ok ? human(o.wall, b2) : "n/a",
			       human(o.cpu, b3), o.ok ? o.r->variant : ours_missing(&o),
			       o.ok ? o.r->note : "", human(oc.wall, b4));
			for (int i = 1; i < NPEER; i++) {
				struct best b = best_of(i, c->kind, p, c->bytes, NULL);
				if (!b.ok) {
					const char *why = peer_missing(i, g, &b);
					printf(" %-26.26s |", why);
					continue;
				}
				if (o.ok)
					printf(" %8s %8s %6.3gx |", human(b.wall, b1),
					       human(b.cpu, b2), o.wall / b.wall);
				else
					printf(" %8s %8s %7s |", human(b.wall, b1),
					       human(b.cpu, b2), "-");
			}
			printf("\n");
		}
	}
	printf("(time per operation, median of the repetitions; latency and bandwidth: per one-way "
	       "message of a ping-pong; cpu: CPU time of all ranks per operation; ratio = "
	       "ours/peer, < 1 is ours faster; complete: ours on complete:p; size: allgather "
	       "the block of each rank, alltoall the block of each rank for each rank; ours n/a: "
	       "the error, TC_ENOTSUP when no algorithm exists yet)\n");
	printf("repetitions (");
	for (int i = 0; i < NIMPL; i++)
		printf("%s%s", i ? ", " : "", impl_name[i]);
	printf(") per p:");
	for (int g = 0; g < NGROUP; g++) {
		if (!want_p[g])
			continue;
		printf(" p=%d:", group_p[g]);
		for (int i = 0; i < NIMPL; i++)
			printf("%s%d", i ? "," : "", done_reps[i][g]);
	}
	printf("\n");
	for (int g = 0; g < NGROUP; g++)
		for (int i = 1; i < NIMPL; i++)
			if (skipped[i][g] == 1)
				printf("note: %s at p=%d timed out and was skipped from then on\n",
				       impl_name[i], group_p[g]);
}

/* One goal: ours <= factor * peer. */
static void goal(const char *what, enum pr_kind kind, int p, size_t bytes, int peer, double factor,
                 int strict)
{
	struct pr_case c = {kind, bytes};
	int g = group_of(p);
	if (g < 0 || !selected(g, &c))
		return; /* not asked for (--case, --p) */
	struct best o = best_of(IMPL_OURS, kind, p, bytes, NULL);
	struct best b = best_of(peer, kind, p, bytes, NULL);
	char b1[16], b2[16];
	if (!o.ok || !b.ok) {
		printf("  %-52s ours %-8s %-7s %-8s: not measured\n", what,
		       o.ok ? human(o.wall, b1) : "n/a", impl_name[peer],
		       b.ok ? human(b.wall, b2) : "n/a");
		return;
	}
	int met = strict ? o.wall < factor * b.wall : o.wall <= factor * b.wall;
	printf("  %-52s ours %-8s %-7s %-8s ratio %6.3g: %s\n", what, human(o.wall, b1),
	       impl_name[peer], human(b.wall, b2), o.wall / b.wall, met ? "met" : "NOT MET");
}

static void goals(void)
{
	/* The goals are all on barrier and allreduce: none when --case or --p
	 * leaves them out. */
	struct pr_case ar = {PR_ALLREDUCE, 8}, big = {PR_ALLREDUCE, (size_t)8 << 20},
	               ba = {PR_BARRIER, 0};
	int any = 0;
	for (int g = 0; g < NGROUP; g++)
		any |= selected(g, &ar) || selected(g, &ba) || (g == 0 && selected(g, &big));
	if (!any)
		return;
	printf("\ngoals (ours is the best topology of each case):\n");
	goal("p=2 allreduce 1 double <= 0.5x Open MPI", PR_ALLREDUCE, 2, 8, IMPL_OPENMPI, 0.5, 0);
	goal("p=2 allreduce 1 double <= OpenMP", PR_ALLREDUCE, 2, 8, IMPL_OPENMP, 1, 0);
	goal("p=2 allreduce 1 Mi doubles <= OpenMP", PR_ALLREDUCE, 2, (size_t)8 << 20, IMPL_OPENMP, 1, 0);
	goal("p=2 barrier <= OpenMP", PR_BARRIER, 2, 0, IMPL_OPENMP, 1, 0);
	for (int g = 1; g < NGROUP; g++)
		for (int i = 1; i < NPEER; i++) {
			char what[96];
			snprintf(what, sizeof what, "p=%d allreduce 1 double < %s", group_p[g],
			         impl_name[i]);
			goal(what, PR_ALLREDUCE, group_p[g], 8, i, 1, 1);
			snprintf(what, sizeof what, "p=%d barrier < %s", group_p[g], impl_name[i]);
			goal(what, PR_BARRIER, group_p[g], 0, i, 1, 1);
		}
}

static const char *ratio_str(double r, char *buf, size_t cap)
{
	snprintf(buf, cap, r >= 0.01 ? "%.2f" : "%.2g", r);
	return buf;
}

/* The table again in Markdown, for the README: wall / CPU time per
 * operation, the design or topology that gave the best time, ours/peer. */
static void markdown(void)
{
	char b1[32], b2[16], b3[16], b4[16];
	printf("\n| case | p | size | topocoll: wall / CPU (topology, algorithm) | OpenMP | ratio | "
	       "Open MPI | ratio | MPICH | ratio |\n|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
	for (int g = 0; g < NGROUP; g++) {
		int p = group_p[g], n;
		const struct pr_case *cases = pr_cases(p, &n);
		for (int ci = 0; ci < n; ci++) {
			const struct pr_case *c = &cases[ci];
			if (!selected(g, c))
				continue;
			struct best o = best_of(IMPL_OURS, c->kind, p, c->bytes, NULL);
			printf("| %s | %d | %s | ", pr_kind_name[c->kind], p,
			       size_str(c->bytes, b1, sizeof b1));
			if (o.ok)
				printf("%s / %s (%s%s%s) |", human(o.wall, b2), human(o.cpu, b3),
				       o.r->variant, strcmp(o.r->note, "-") ? ", " : "",
				       strcmp(o.r->note, "-") ? o.r->note : "");
			else
				printf("n/a (%s) |", ours_missing(&o));
			for (int i = 1; i < NPEER; i++) {
				struct best b = best_of(i, c->kind, p, c->bytes, NULL);
				if (!b.ok) {
					printf(" - | |");
					continue;
				}
				int named = strcmp(b.r->variant, "mpi") && strcmp(b.r->variant, "omp");
				printf(" %s / %s%s%s%s |", human(b.wall, b2), human(b.cpu, b3),
				       named ? " (" : "", named ? b.r->variant : "", named ? ")" : "");
				if (o.ok)
					printf(" %s |", ratio_str(o.wall / b.wall, b4, sizeof b4));
				else
					printf(" |");
			}
			printf("\n");
		}
	}
}

/* Every variant's medians: what the best-of columns were chosen from. */
static void variants(void)
{
	char b1[32], b2[16], b3[16];
	printf("\nevery variant (median wall, cpu; runs):\n");
	for (int g = 0; g < NGROUP; g++) {
		int p = group_p[g], n;
		const struct pr_case *cases = pr_cases(p, &n);
		for (int ci = 0; ci < n; ci++) {
			const struct pr_case *c = &cases[ci];
			if (!selected(g, c))
				continue;
			printf("  %-9s p=%-2d %-6s", pr_kind_name[c->kind], p,
			       size_str(c->bytes, b1, sizeof b1));
			for (int i = 0; i < NIMPL; i++)
				for (int k = 0; k < nrecs; k++) {
					const struct rec *r = &recs[k];
					if (r->impl != i || r->kind != c->kind || r->p != p ||
					    r->bytes != c->bytes)
						continue;
					if (r->n)
						printf(" | %s %s %s %s (%d)", impl_name[i],
						       r->variant, human(median(r->wall, r->n), b2),
						       human(median(r->cpu, r->n), b3), r->n);
					else
						printf(" | %s %s %s", impl_name[i], r->variant, r->note);
				}
			printf("\n");
		}
	}
}

/* Ours over each MPI against that MPI's own collectives: the same
 * launcher and placement, the same cases; nothing when neither was run. */
static void ours_mpi_report(void)
{
	const int mine[2] = {IMPL_OURS_OPENMPI, IMPL_OURS_MPICH}, own[2] = {IMPL_OPENMPI, IMPL_MPICH};
	if (!available[IMPL_OURS_OPENMPI] && !available[IMPL_OURS_MPICH]) {
		printf("\nours over MPI: not run (%s; %s)\n", why_missing[IMPL_OURS_OPENMPI],
		       why_missing[IMPL_OURS_MPICH]);
		return;
	}
	char b1[32], b2[16], b3[16];
	printf("\nours over MPI against MPI's own (the same launcher and placement; ours: a team "
	       "over the processes, complete:p, auto):\n");
	printf("%-9s %3s %6s |", "case", "p", "size");
	for (int m = 0; m < 2; m++)
		printf(" %-12s %-13s %8s %7s |", impl_name[mine[m]], "algorithm", impl_name[own[m]],
		       "ratio");
	printf("\n");
	for (int g = 0; g < NGROUP; g++) {
		int p = group_p[g], n;
		const struct pr_case *cases = pr_cases(p, &n);
		for (int ci = 0; ci < n; ci++) {
			const struct pr_case *c = &cases[ci];
			if (!selected(g, c))
				continue;
			printf("%-9s %3d %6s |", pr_kind_name[c->kind], p,
			       size_str(c->bytes, b1, sizeof b1));
			for (int m = 0; m < 2; m++) {
				struct best o = best_of(mine[m], c->kind, p, c->bytes, NULL);
				struct best b = best_of(own[m], c->kind, p, c->bytes, NULL);
				if (!o.ok) {
					printf(" %-12.12s %-13s %8s %7s |",
					       peer_missing(mine[m], g, &o), "",
					       b.ok ? human(b.wall, b3) : "-", "-");
					continue;
				}
				printf(" %-12s %-13s %8s ", human(o.wall, b2), o.r->note,
				       b.ok ? human(b.wall, b3) : "-");
				if (b.ok)
					printf("%6.3gx |", o.wall / b.wall);
				else
					printf("%7s |", "-");
			}
			printf("\n");
		}
	}
	printf("(time per operation, median of the repetitions; ratio = ours over MPI / MPI's "
	       "own, < 1 is ours faster)\n");
}

static void json_lines(void)
{
	printf("\n");
	for (int g = 0; g < NGROUP; g++) {
		int p = group_p[g], n;
		const struct pr_case *cases = pr_cases(p, &n);
		for (int ci = 0; ci < n; ci++) {
			const struct pr_case *c = &cases[ci];
			if (!selected(g, c))
				continue;
			struct best o = best_of(IMPL_OURS, c->kind, p, c->bytes, NULL);
			char cname[32];
			snprintf(cname, sizeof cname, "complete:%d", p);
			struct best oc = best_of(IMPL_OURS, c->kind, p, c->bytes, cname);
			for (int i = 1; i < NPEER; i++) {
				struct best b = best_of(i, c->kind, p, c->bytes, NULL);
				if (i == IMPL_OPENMP && pr_is_p2p(c))
					continue; /* OpenMP has no point-to-point */
				printf("{\"case\": \"%s\", \"p\": %d, \"bytes\": %zu",
				       pr_kind_name[c->kind], p, c->bytes);
				json_num("ours_ns", o.ok ? o.wall : NAN);
				json_num("ours_cpu_ns", o.ok ? o.cpu : NAN);
				if (o.ok) {
					json_str("topology", o.r->variant);
					json_str("algorithm", o.r->note);
				} else {
					json_str("ours_error", o.err ? o.err : "not measured");
					json_str("ours_unavailable", ours_missing(&o));
				}
				json_num("ours_complete_ns", oc.ok ? oc.wall : NAN);
				json_str("peer", impl_name[i]);
				json_num("peer_ns", b.ok ? b.wall : NAN);
				json_num("peer_cpu_ns", b.ok ? b.cpu : NAN);
				if (b.ok)
					json_str("peer_variant", b.r->variant);
				else
					json_str("peer_error", peer_missing(i, g, &b));
				if (o.ok && b.ok)
					printf(", \"ratio\": %.4f", o.wall / b.wall);
				else
					printf(", \"ratio\": null");
				printf(", \"reps\": [%d, %d]}\n", o.ok ? o.n : 0, b.ok ? b.n : 0);
			}
		}
	}
}

/* One JSON line per case and MPI that ours ran over. */
static void json_lines_ours_mpi(void)
{
	const int mine[2] = {IMPL_OURS_OPENMPI, IMPL_OURS_MPICH}, own[2] = {IMPL_OPENMPI, IMPL_MPICH};
	for (int g = 0; g < NGROUP; g++) {
		int p = group_p[g], n;
		const struct pr_case *cases = pr_cases(p, &n);
		for (int ci = 0; ci < n; ci++) {
			const struct pr_case *c = &cases[ci];
			if (!selected(g, c))
				continue;
			for (int m = 0; m < 2; m++) {
				if (!available[mine[m]])
					continue;
				struct best o = best_of(mine[m], c->kind, p, c->bytes, NULL);
				struct best b = best_of(own[m], c->kind, p, c->bytes, NULL);
				printf("{\"case\": \"%s\", \"p\": %d, \"bytes\": %zu",
				       pr_kind_name[c->kind], p, c->bytes);
				json_str("ours_over", impl_name[own[m]]);
				json_num("ours_mpi_ns", o.ok ? o.wall : NAN);
				json_num("ours_mpi_cpu_ns", o.ok ? o.cpu : NAN);
				json_str("algorithm", o.ok ? o.r->note : peer_missing(mine[m], g, &o));
				json_num("mpi_ns", b.ok ? b.wall : NAN);
				if (o.ok && b.ok)
					printf(", \"ratio\": %.4f", o.wall / b.wall);
				else
					printf(", \"ratio\": null");
				printf(", \"reps\": [%d, %d]}\n", o.ok ? o.n : 0, b.ok ? b.n : 0);
			}
		}
	}
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	int ps_given = 0;
	snprintf(dir, sizeof dir, "%s", argv[0]);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			snprintf(dir, sizeof dir, "%s", argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--limit") && i + 1 < argc)
			limit_s = atof(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--markdown"))
			want_markdown = 1;
		else if (!strcmp(argv[i], "--write-inputs"))
			write_inputs = 1;
		else if (!strcmp(argv[i], "--case") && i + 1 < argc)
			case_filter = argv[++i];
		else if (!strcmp(argv[i], "--p") && i + 1 < argc) {
			for (char *s = argv[++i], *e; *s; s = *e ? e + 1 : e) {
				long v = strtol(s, &e, 10);
				int g = group_of((int)v);
				if (e == s || (*e && *e != ',') || g < 0) {
					fprintf(stderr, "peers: --p takes a list among 2,8,16,64\n");
					return 2;
				}
				want_p[g] = 1;
			}
			ps_given = 1;
		} else if (!strcmp(argv[i], "--quick")) {
			reps = 3;
			budget_dedicated_ms = 15;
			budget_oversub_ms = 30;
			allowance_s = 10;
			limit_s = 90;
		} else {
			fprintf(stderr, "usage: peers [--dir DIR] [--reps N] [--quick] [--limit SECONDS] "
			                "[--only openmp|openmpi|mpich] [--case LIST] [--p LIST] "
			                "[--markdown] [--write-inputs]\n");
			return 2;
		}
	}
	if (!ps_given)
		for (int g = 0; g < NGROUP; g++)
			want_p[g] = 1;
	if (case_filter) {
		int any = 0;
		for (int g = 0; g < NGROUP; g++)
			any |= want_p[g] && nselected(g) > 0;
		if (!any) {
			fprintf(stderr,
			        "peers: --case %s selects no case (known: barrier, bcast, "
			        "allreduce, latency, bandwidth, allgather, alltoall, or NAME:BYTES)\n",
			        case_filter);
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;
	if (reps > MAXREPS)
		reps = MAXREPS;
	cpu_set_t set;
	sched_getaffinity(0, sizeof set, &set);
	ncpu = CPU_COUNT(&set);

	for (int i = 0; i < NIMPL; i++) {
		char path[4200];
		snprintf(path, sizeof path, "%s/%s", dir, impl_prog[i]);
		available[i] = access(path, X_OK) == 0;
		if (!available[i])
			snprintf(why_missing[i], sizeof why_missing[i], "not built");
		else if (impl_launcher[i] && !on_path(impl_launcher[i])) {
			available[i] = 0;
			snprintf(why_missing[i], sizeof why_missing[i], "no %s", impl_launcher[i]);
		}
		if (only && i != IMPL_OURS && strcmp(only, impl_name[i]) &&
		    (impl_mpi(i) < 0 || strcmp(only, impl_name[impl_mpi(i)]))) {
			available[i] = 0;
			snprintf(why_missing[i], sizeof why_missing[i], "not selected");
		}
	}
	if (!available[IMPL_OURS]) {
		fprintf(stderr, "peers: %s/peer_ours not found\n", dir);
		return 1;
	}
	double l0 = loadavg();
	printf("# load average before: %.2f\n", l0);
	if (l0 > 0.5 * ncpu)
		printf("# WARNING: the machine is busy (load average %.2f on %d CPUs): other work "
		       "shares the CPUs and skews every figure\n",
		       l0, ncpu);
	printf("# peers: %d CPUs; p = 2 (one rank per core) and 8, 16, 64 (%s); up to %d "
	       "repetitions; %g ms (p <= CPUs) or %g ms of operations per case and run\n",
	       ncpu, 64 > ncpu ? "oversubscribed" : "not oversubscribed here", reps,
	       budget_dedicated_ms, budget_oversub_ms);
	if (case_filter || ps_given) {
		printf("# selected: cases %s; p =", case_filter ? case_filter : "all");
		for (int g = 0; g < NGROUP; g++)
			if (want_p[g])
				printf(" %d", group_p[g]);
		printf("\n");
	}
	if (write_inputs)
		printf("# written inputs: every rank writes its input before each call (-w)\n");
	printf("# commands:\n");
	for (int g = 0, shown = 0; g < NGROUP && shown < 2; g++) {
		if (!want_p[g] || !nselected(g))
			continue;
		for (int i = 0; i < NIMPL; i++)
			if (available[i])
				print_command(i, group_p[g]);
		shown++;
	}
	for (int i = 1; i < NIMPL; i++)
		if (!available[i])
			printf("# %s: skipped (%s)\n", impl_name[i], why_missing[i]);
	fflush(stdout);

	double t0 = now_s();
	for (int r = 0; r < reps; r++) {
		if (r > 0 && now_s() - t0 > limit_s) {
			printf("# time limit: %d repetitions\n", r);
			break;
		}
		for (int g = 0; g < NGROUP; g++) {
			int p = group_p[g], ncases = nselected(g);
			if (!want_p[g] || !ncases)
				continue;
			double budget = p > ncpu ? budget_oversub_ms : budget_dedicated_ms;
			/* 30 s for the 11 cases of p = 2 (3 per case since
			 * allgather and alltoall joined), 60 s for 3 oversubscribed
			 * ones (20 per case): a crawling MPI spends seconds per
			 * operation there. */
			double timeout = p > ncpu ? 20.0 * ncases : 3.0 * ncases;
			if (timeout < (p > ncpu ? 60 : 30))
				timeout = p > ncpu ? 60 : 30;
			for (int k = 0; k < NIMPL; k++) {
				/* ours first, then the peers rotating with r */
				int i = k == 0 ? IMPL_OURS : 1 + (k - 1 + r) % (NIMPL - 1);
				if (!available[i] || skipped[i][g])
					continue;
				if (r > 0 && spent[i][g] > allowance_s) {
					skipped[i][g] = 2;
					continue;
				}
				double s = now_s();
				int rc = launch(i, p, budget, timeout);
				spent[i][g] += now_s() - s;
				if (rc < 0) {
					skipped[i][g] = 1;
					fprintf(stderr, "peers: %s p=%d timed out after %.0f s; skipped\n",
					        impl_name[i], p, timeout);
				} else if (rc == 0) {
					done_reps[i][g]++;
				}
			}
		}
		fprintf(stderr, "peers: repetition %d done at %.0f s\n", r + 1, now_s() - t0);
	}
	report();
	ours_mpi_report();
	goals();
	if (want_markdown)
		markdown();
	variants();
	json_lines();
	json_lines_ours_mpi();
	printf("# peers: measured in %.0f s\n", now_s() - t0);
	return 0;
}
