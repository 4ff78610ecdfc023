/* SPDX-License-Identifier: MIT */
/*
 * tools/tcmpi/shim_libc.c - the C library state a program keeps per
 * process and an MPI program expects per rank, made per rank.
 *
 * These definitions are linked into the program itself (libtcmpi.a, made
 * hidden by tcmpicc's --exclude-libs and bound in the program by
 * -Bsymbolic), so that the program's own calls reach them instead of the
 * C library's, in every rank's copy separately:
 *   - exit, _exit, _Exit, quick_exit, abort and a failed assert end the
 *     rank (its thread or fibre), not the process;
 *   - getopt, getopt_long, getopt_long_only with optind, optarg, opterr,
 *     optopt of the copy's own (POSIX order: options stop at the first
 *     operand, as with POSIXLY_CORRECT; "--" ends them);
 *   - rand, srand, random, srandom: the C library's generator (random_r)
 *     on a state of the copy's own, so each rank gets glibc's sequence;
 *   - strtok: strtok_r on a position of the copy's own;
 *   - sleep, usleep, nanosleep: on fibres they let the CPU's other ranks
 *     run until the time is over instead of blocking them.
 * Calls made from inside the C library (or other libraries) still reach
 * the C library's own functions.
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

/* ---------------------------------------------------------------------
 * Ending a rank.
 */
static _Noreturn void end(int status, const char *how)
{
	fflush(NULL);
	int mid = tcmpi__initialized && !tcmpi__finalized;
	if (mid && tcmpi__self && !atomic_load(&tcmpi__self->shared->aborted))
		fprintf(stderr,
		        "tcmpi: rank %d called %s(%d) between MPI_Init and MPI_Finalize; "
		        "aborting the run\n",
		        tc_rank(tcmpi__self->proc), how, status);
	if (!tcmpi__self) {
		fprintf(stderr, "tcmpi: %s(%d) outside tcmpirun\n", how, status);
		_exit(status);
	}
	tcmpi__end_rank(status, mid);
}

void exit(int status)
{
	end(status, "exit");
}

void _exit(int status)
{
	end(status, "_exit");
}

void _Exit(int status)
{
	end(status, "_Exit");
}

void quick_exit(int status)
{
	end(status, "quick_exit");
}

void abort(void)
{
	fflush(NULL);
	if (tcmpi__self)
		fprintf(stderr, "tcmpi: rank %d called abort()\n", tc_rank(tcmpi__self->proc));
	if (!tcmpi__self)
		_exit(134);
	tcmpi__end_rank(134, 1);
}

void __assert_fail(const char *expr, const char *file, unsigned int line, const char *func)
{
	fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, func, expr);
	abort();
}

/* ---------------------------------------------------------------------
 * getopt.
 */
char *optarg;
int optind = 1, opterr = 1, optopt = '?';
static int pos; /* next character of argv[optind] in a group (-abc) */

static int long_opt(int argc, char *const argv[], const char *arg, const struct option *lo,
                    int *longindex, int colon)
{
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	int found = -1, ambiguous = 0;
	for (int i = 0; lo[i].name; i++) {
		if (strncmp(lo[i].name, arg, len) != 0)
			continue;
		if (strlen(lo[i].name) == len) {
			found = i;
			ambiguous = 0;
			break;
		}
		if (found >= 0)
			ambiguous = 1;
		else
			found = i;
	}
	const char *prog = argv[0];
	optind++;
	if (found < 0 || ambiguous) {
		if (opterr && !colon)
			fprintf(stderr, "%s: %s option '--%.*s'\n", prog,
			        ambiguous ? "ambiguous" : "unrecognized", (int)len, arg);
		optopt = 0;
		return '?';
	}
	const struct option *o = &lo[found];
	if (longindex)
		*longindex = found;
	if (o->has_arg == no_argument && eq) {
		if (opterr && !colon)
			fprintf(stderr, "%s: option '--%s' doesn't allow an argument\n", prog, o->name);
		optopt = o->flag ? 0 : o->val;
		return '?';
	}
	if (eq) {
		optarg = (char *)(uintptr_t)(eq + 1);
	} else if (o->has_arg == required_argument) {
		if (optind >= argc) {
			if (opterr && !colon)
				fprintf(stderr, "%s: option '--%s' requires an argument\n", prog,
				        o->name);
			optopt = o->flag ? 0 : o->val;
			return colon ? ':' : '?';
		}
		optarg = argv[optind++];
	}
	if (o->flag) {
		*o->flag = o->val;
		return 0;
	}
	return o->val;
}

static int getopt_any(int argc, char *const argv[], const char *optstring, const struct option *lo,
                      int *longindex, int long_only)
{
	if (optind == 0) {
		optind = 1;
		pos = 0;
	}
	optarg = NULL;
	const char *os = optstring;
	if (*os == '+' || *os == '-')
		os++;
	int colon = *os == ':';
	if (pos == 0) {
		if (optind >= argc || !argv[optind] || argv[optind][0] != '-' || argv[optind][1] == '\0')
			return -1;
		if (strcmp(argv[optind], "--") == 0) {
			optind++;
			return -1;
		}
		if (lo && argv[optind][1] == '-')
			return long_opt(argc, argv, argv[optind] + 2, lo, longindex, colon);
		if (lo && long_only) {
			/* -name is a long option unless it is a short one alone */
			const char *a = argv[optind] + 1;
			int is_long = 0;
			for (int i = 0; lo[i].name; i++)
				if (strncmp(lo[i].name, a, strcspn(a, "=")) == 0)
					is_long = 1;
			if (is_long && !(a[1] == '\0' && strchr(os, a[0])))
				return long_opt(argc, argv, a, lo, longindex, colon);
		}
		pos = 1;
	}
	const char *arg = argv[optind];
	int ch = (unsigned char)arg[pos++];
	const char *spec = ch == ':' ? NULL : strchr(os, ch);
	if (!spec) {
		optopt = ch;
		if (opterr && !colon)
			fprintf(stderr, "%s: invalid option -- '%c'\n", argv[0], ch);
		if (!arg[pos]) {
			optind++;
			pos = 0;
		}
		return '?';
	}
	if (spec[1] == ':') {
		if (arg[pos]) {
			optarg = (char *)(uintptr_t)&arg[pos];
			optind++;
		} else if (spec[2] == ':') {
			optind++;
		} else if (optind + 1 < argc) {
			optarg = argv[optind + 1];
			optind += 2;
		} else {
			optopt = ch;
			optind++;
			pos = 0;
			if (opterr && !colon)
				fprintf(stderr, "%s: option requires an argument -- '%c'\n", argv[0], ch);
			return colon ? ':' : '?';
		}
		pos = 0;
	} else if (!arg[pos]) {
		optind++;
		pos = 0;
	}
	return ch;
}

int getopt(int argc, char *const argv[], const char *optstring)
{
	return getopt_any(argc, argv, optstring, NULL, NULL, 0);
}

int getopt_long(int argc, char *const argv[], const char *optstring, const struct option *longopts,
                int *longindex)
{
	return getopt_any(argc, argv, optstring, longopts, longindex, 0);
}

int getopt_long_only(int argc, char *const argv[], const char *optstring,
                     const struct option *longopts, int *longindex)
{
	return getopt_any(argc, argv, optstring, longopts, longindex, 1);
}

/* ---------------------------------------------------------------------
 * rand.
 */
static struct random_data rnd;
static char rnd_state[128];
static int rnd_ready;

static void rnd_seed(unsigned seed)
{
	memset(&rnd, 0, sizeof rnd);
	initstate_r(seed, rnd_state, sizeof rnd_state, &rnd);
	rnd_ready = 1;
}

long random(void)
{
	if (!rnd_ready)
		rnd_seed(1);
	int32_t v;
	random_r(&rnd, &v);
	return v;
}

void srandom(unsigned seed)
{
	rnd_seed(seed);
}

int rand(void)
{
	return (int)random();
}

void srand(unsigned seed)
{
	rnd_seed(seed);
}

/* ---------------------------------------------------------------------
 * strtok: the C library keeps one position per process, which ranks
 * parsing their options at the same time would share.
 */
static char *tok_pos;

char *strtok(char *restrict str, const char *restrict delim)
{
	return strtok_r(str, delim, &tok_pos);
}

/* ---------------------------------------------------------------------
 * Sleeping.
 */
static int sleep_ns(uint64_t ns, struct timespec *rem)
{
	if (rem)
		*rem = (struct timespec){0, 0};
	if (!tcmpi__self || !tcmpi__self->shared->fibres) {
		struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
		return clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) == 0 ? 0 : -1;
	}
	/* A fibre must not block its kernel thread: let the CPU's other ranks
	 * run until the time is over. */
	double until = tcmpi__now_ns() + (double)ns;
	while (tcmpi__now_ns() < until)
		tc_yield(tcmpi__self->proc);
	return 0;
}

unsigned int sleep(unsigned int seconds)
{
	sleep_ns((uint64_t)seconds * 1000000000u, NULL);
	return 0;
}

int usleep(useconds_t usec)
{
	return sleep_ns((uint64_t)usec * 1000u, NULL);
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (!req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000L || req->tv_sec < 0) {
		errno = EINVAL;
		return -1;
	}
	return sleep_ns((uint64_t)req->tv_sec * 1000000000u + (uint64_t)req->tv_nsec, rem);
}
