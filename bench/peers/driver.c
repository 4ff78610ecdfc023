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
 * and prints a table, its goals, and one JSON line per case and peer
 * (bench/peers/report.c).
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
#include "driver.h"
#include "../stats.h"

const char *const impl_name[NIMPL] = {"ours",  "openmp",       "openmpi",
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

const int group_p[NGROUP] = {2, 8, 16, 64};

static char dir[4096];
static int ncpu;
int reps = 5;
static double budget_dedicated_ms = 30, budget_oversub_ms = 60;
static double limit_s = 240;    /* stop starting repetitions after this */
static double allowance_s = 25; /* per implementation and p */
int available[NIMPL];
static int want_markdown;
static const char *case_filter; /* --case: NULL for every case */
static int write_inputs;        /* --write-inputs: -w to every peer program */
int want_p[NGROUP];             /* --p: the team sizes to run */
char why_missing[NIMPL][128];
int skipped[NIMPL][NGROUP]; /* 1: timed out, 2: allowance used up */
static double spent[NIMPL][NGROUP];
int done_reps[NIMPL][NGROUP];

/* ---- selection ------------------------------------------------------------ */

/* Non-zero when the report covers case c at group g. */
int selected(int g, const struct pr_case *c)
{
	return want_p[g] && pr_case_selected(c, case_filter);
}

bool next_case(struct case_it *it)
{
	for (; it->g < NGROUP; it->g++, it->cases = NULL) {
		if (!it->cases) {
			it->p = group_p[it->g];
			it->cases = pr_cases(it->p, &it->n);
			it->ci = 0;
		}
		while (it->ci < it->n) {
			const struct pr_case *c = &it->cases[it->ci++];
			if (selected(it->g, c)) {
				it->c = c;
				return true;
			}
		}
	}
	return false;
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

int group_of(int p)
{
	for (int g = 0; g < NGROUP; g++)
		if (group_p[g] == p)
			return g;
	return -1;
}

/* ---- results ------------------------------------------------------------ */

struct rec *recs;
int nrecs;
static int caprecs;

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

double median(const double *v, int n)
{
	if (n <= 0)
		return NAN;
	double s[MAXREPS];
	memcpy(s, v, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, bench_cmp_double);
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
