/* SPDX-License-Identifier: MIT */
/*
 * Fibres (lib/fibre/fibre.h): the switch keeps every callee-saved register,
 * the stack and each context's floating-point control state; a fibre's
 * stack holds deep recursion up to about 90% of its size; running into the
 * guard page is reported and aborts.  Built at the project's -O2, so the
 * values kept across switches live in registers.
 */
#include <fenv.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fibre/fibre.h"
#include "fibre/runq.h"
#include "harness.h"
#include "topocoll.h"

/* ---- ping-pong between two fibres ------------------------------------- */

enum { PINGS = 100000 };

struct pp {
	struct tc__fibre main;
	struct tc__fibre *a, *b;
	long count_a, count_b;
	int order_bad;
};

static void pp_a(struct tc__fibre *self, void *arg)
{
	struct pp *s = arg;
	for (int i = 0; i < PINGS; i++) {
		if (s->count_a != s->count_b)
			s->order_bad = 1;
		s->count_a++;
		tc__fibre_switch(self, s->b);
	}
}

static void pp_b(struct tc__fibre *self, void *arg)
{
	struct pp *s = arg;
	for (int i = 0; i < PINGS; i++) {
		if (s->count_b + 1 != s->count_a)
			s->order_bad = 1;
		s->count_b++;
		tc__fibre_switch(self, s->a);
	}
}

Test(fibre, ping_pong, .timeout = 60)
{
	struct pp s = {0};
	cr_assert_eq(tc__fibre_thread_init(&s.main), TC_OK);
	cr_assert_eq(tc__fibre_create(&s.main, 0, pp_a, &s, &s.a), TC_OK);
	cr_assert_eq(tc__fibre_create(&s.main, 0, pp_b, &s, &s.b), TC_OK);
	cr_assert_eq(s.a->stack_bytes, (size_t)TC__FIBRE_STACK_DEFAULT);
	/* a runs, hands over to b, ...; a returns first (to main), b is left
	 * suspended in its last switch, after its last count. */
	tc__fibre_switch(&s.main, s.a);
	cr_assert(tc__fibre_done(s.a));
	cr_assert(!tc__fibre_done(s.b));
	cr_assert_eq(s.count_a, PINGS);
	cr_assert_eq(s.count_b, PINGS);
	cr_assert_eq(s.order_bad, 0);
	tc__fibre_destroy(s.a);
	tc__fibre_destroy(s.b); /* suspended: dropped */
	tc__fibre_thread_fini(&s.main);
}

/* ---- resume and return, many fibres ----------------------------------- */

static void counter(struct tc__fibre *self, void *arg)
{
	long *n = arg;
	for (int i = 0; i < 10; i++) {
		(*n)++;
		tc__fibre_switch(self, self->back);
	}
}

Test(fibre, many_fibres_round_robin, .timeout = 60)
{
	enum { N = 300 };
	struct tc__fibre main;
	struct tc__fibre *f[N];
	long n[N] = {0};
	cr_assert_eq(tc__fibre_thread_init(&main), TC_OK);
	for (int i = 0; i < N; i++)
		cr_assert_eq(tc__fibre_create(&main, 16384, counter, &n[i], &f[i]), TC_OK);
	for (int round = 0; round < 11; round++)
		for (int i = 0; i < N; i++) {
			cr_assert(!tc__fibre_done(f[i]));
			tc__fibre_switch(&main, f[i]);
			cr_assert_eq(n[i], round < 10 ? round + 1 : 10);
		}
	for (int i = 0; i < N; i++) {
		cr_assert(tc__fibre_done(f[i]));
		tc__fibre_destroy(f[i]);
	}
	tc__fibre_thread_fini(&main);
}

/* ---- callee-saved registers ------------------------------------------- */

/* Twelve values live across every switch; the empty asm makes the compiler
 * hold them in registers at that point, so they cross the call in
 * callee-saved registers (or in the frame: the stack pointer is then what
 * is tested).  The two fibres hold different values in the same registers. */
struct regs {
	struct tc__fibre main;
	struct tc__fibre *f[2];
	int bad[2];
};

#define KEEP(...) __asm__ volatile("" : __VA_ARGS__)

static void holder(struct tc__fibre *self, void *arg)
{
	struct regs *s = arg;
	int me = self == s->f[1];
	struct tc__fibre *other = s->f[!me];
	uint64_t k = me ? 0x9e3779b97f4a7c15u : 0xc2b2ae3d27d4eb4fu;
	uint64_t r0 = k * 1, r1 = k * 3, r2 = k * 5, r3 = k * 7, r4 = k * 11, r5 = k * 13;
	uint64_t r6 = k * 17, r7 = k * 19, r8 = k * 23, r9 = k * 29, r10 = k * 31, r11 = k * 37;
	double d0 = me ? 1.5 : -2.25, d1 = d0 * 3, d2 = d0 * 5, d3 = d0 * 7;
	for (int i = 0; i < 1000; i++) {
		KEEP("+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4), "+r"(r5));
		KEEP("+r"(r6), "+r"(r7), "+r"(r8), "+r"(r9), "+r"(r10), "+r"(r11));
		tc__fibre_switch(self, other);
		KEEP("+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4), "+r"(r5));
		KEEP("+r"(r6), "+r"(r7), "+r"(r8), "+r"(r9), "+r"(r10), "+r"(r11));
		uint64_t x = (r0 ^ (k * 1)) | (r1 ^ (k * 3)) | (r2 ^ (k * 5)) | (r3 ^ (k * 7)) |
		             (r4 ^ (k * 11)) | (r5 ^ (k * 13)) | (r6 ^ (k * 17)) | (r7 ^ (k * 19)) |
		             (r8 ^ (k * 23)) | (r9 ^ (k * 29)) | (r10 ^ (k * 31)) | (r11 ^ (k * 37));
		if (x || d1 != d0 * 3 || d2 != d0 * 5 || d3 != d0 * 7)
			s->bad[me]++;
	}
	/* f[0] finishes first (to main); f[1] stays suspended, dropped. */
}

Test(fibre, callee_saved_registers, .timeout = 60)
{
	struct regs s = {0};
	cr_assert_eq(tc__fibre_thread_init(&s.main), TC_OK);
	cr_assert_eq(tc__fibre_create(&s.main, 0, holder, &s, &s.f[0]), TC_OK);
	cr_assert_eq(tc__fibre_create(&s.main, 0, holder, &s, &s.f[1]), TC_OK);
	/* The main context keeps values of its own across the whole run. */
	uint64_t m0 = 0x0123456789abcdefu, m1 = ~m0, m2 = m0 * 3, m3 = m0 * 5, m4 = m0 * 7;
	uint64_t m5 = m0 * 9;
	KEEP("+r"(m0), "+r"(m1), "+r"(m2), "+r"(m3), "+r"(m4), "+r"(m5));
	tc__fibre_switch(&s.main, s.f[0]);
	KEEP("+r"(m0), "+r"(m1), "+r"(m2), "+r"(m3), "+r"(m4), "+r"(m5));
	cr_assert_eq(m0, 0x0123456789abcdefu);
	cr_assert_eq(m1, ~0x0123456789abcdefu);
	cr_assert_eq(m2 + m3 + m4 + m5, 0x0123456789abcdefu * (3 + 5 + 7 + 9));
	cr_assert(tc__fibre_done(s.f[0]));
	cr_assert_eq(s.bad[0], 0);
	cr_assert_eq(s.bad[1], 0);
	tc__fibre_destroy(s.f[0]);
	tc__fibre_destroy(s.f[1]);
	tc__fibre_thread_fini(&s.main);
}

/* ---- floating-point control state ------------------------------------- */

/* Each context keeps its own rounding mode (MXCSR and the x87 control word
 * on x86-64, FPCR on AArch64: callee-saved in both ABIs, so switched): a
 * fibre that rounds toward zero does not make its peer or the main context
 * do so, and keeps rounding toward zero itself across switches. */
struct fp {
	struct tc__fibre main;
	struct tc__fibre *z, *n;
	int bad;
};

static volatile double one = 1.0, ten = 10.0;

static void fp_zero(struct tc__fibre *self, void *arg)
{
	struct fp *s = arg;
	fesetround(FE_TOWARDZERO);
	for (int i = 0; i < 100; i++) {
		tc__fibre_switch(self, s->n);
		if (fegetround() != FE_TOWARDZERO)
			s->bad |= 1;
		/* 0.1's nearest double is above 1/10: toward zero is below. */
		if (!(one / ten < 0.1))
			s->bad |= 2;
#if defined(__x86_64__)
		uint16_t cw;
		__asm__ volatile("fnstcw %0" : "=m"(cw));
		if ((cw >> 10 & 3) != 3) /* RC = toward zero in the x87 unit too */
			s->bad |= 4;
#endif
	}
}

static void fp_nearest(struct tc__fibre *self, void *arg)
{
	struct fp *s = arg;
	for (;;) {
		if (fegetround() != FE_TONEAREST)
			s->bad |= 8;
		if (one / ten != 0.1)
			s->bad |= 16;
#if defined(__x86_64__)
		uint16_t cw;
		__asm__ volatile("fnstcw %0" : "=m"(cw));
		if ((cw >> 10 & 3) != 0)
			s->bad |= 32;
#endif
		tc__fibre_switch(self, s->z);
	}
}

Test(fibre, floating_point_control, .timeout = 60)
{
	struct fp s = {0};
	cr_assert_eq(fegetround(), FE_TONEAREST);
	cr_assert_eq(tc__fibre_thread_init(&s.main), TC_OK);
	cr_assert_eq(tc__fibre_create(&s.main, 0, fp_zero, &s, &s.z), TC_OK);
	cr_assert_eq(tc__fibre_create(&s.main, 0, fp_nearest, &s, &s.n), TC_OK);
	tc__fibre_switch(&s.main, s.z);
	cr_assert(tc__fibre_done(s.z));
	cr_assert_eq(s.bad, 0, "bad flags %d", s.bad);
	cr_assert_eq(fegetround(), FE_TONEAREST);
	tc__fibre_destroy(s.z);
	tc__fibre_destroy(s.n);
	/* A fibre starts with its creator's control state. */
	fesetround(FE_DOWNWARD);
	struct tc__fibre *u;
	cr_assert_eq(tc__fibre_create(&s.main, 0, fp_nearest, &s, &u), TC_OK);
	fesetround(FE_TONEAREST);
	s.z = &s.main; /* fp_nearest switches back here */
	s.bad = 0;
	tc__fibre_switch(&s.main, u);
	cr_assert_eq(s.bad & (8 | 16), 8 | 16); /* it rounded downward */
	cr_assert_eq(fegetround(), FE_TONEAREST);
	tc__fibre_destroy(u);
	tc__fibre_thread_fini(&s.main);
}

/* ---- deep recursion, stack overflow ----------------------------------- */

struct deep {
	uintptr_t top; /* an address near the top of the fibre's stack */
	size_t limit;  /* recurse until this many bytes are in use */
	size_t used;   /* the most reached */
	unsigned long sum;
};

/* A frame of a few hundred bytes that the compiler cannot drop or turn into
 * a loop (the buffer is read after the call). */
static __attribute__((noinline)) unsigned long dig(struct deep *d, unsigned depth)
{
	volatile unsigned char buf[200];
	for (size_t i = 0; i < sizeof buf; i += 32)
		buf[i] = (unsigned char)depth;
	size_t used = d->top - (uintptr_t)&buf[0];
	if (used > d->used)
		d->used = used;
	unsigned long r = 0;
	if (used < d->limit)
		r = dig(d, depth + 1);
	return r + buf[0] + buf[sizeof buf - 32];
}

static void deep_fn(struct tc__fibre *self, void *arg)
{
	struct deep *d = arg;
	volatile char here;
	d->top = (uintptr_t)&here;
	d->sum = dig(d, 0);
	(void)self;
}

Test(fibre, deep_recursion, .timeout = 60)
{
	static const size_t sizes[] = {8192, 65536, 1 << 20};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		struct tc__fibre main, *f;
		struct deep d = {0};
		cr_assert_eq(tc__fibre_thread_init(&main), TC_OK);
		cr_assert_eq(tc__fibre_create(&main, sizes[k], deep_fn, &d, &f), TC_OK);
		d.limit = f->stack_bytes * 9 / 10;
		tc__fibre_switch(&main, f);
		cr_assert(tc__fibre_done(f));
		cr_assert_geq(d.used, d.limit);
		cr_assert_lt(d.used, f->stack_bytes);
		cr_assert_neq(d.sum, 0);
		tc__fibre_destroy(f);
		tc__fibre_thread_fini(&main);
	}
}

/* Runs in a child: recursion without end on a 16 KiB stack. */
static void overflow_child(void)
{
	struct tc__fibre main, *f;
	struct deep d = {0};
	if (tc__fibre_thread_init(&main) || tc__fibre_create(&main, 16384, deep_fn, &d, &f))
		_exit(3);
	d.limit = SIZE_MAX;
	tc__fibre_switch(&main, f);
	_exit(4); /* not reached: the guard page stops it */
}

Test(fibre, guard_page_reported, .timeout = 60)
{
	int fd[2];
	cr_assert_eq(pipe(fd), 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fd[0]);
		dup2(fd[1], STDERR_FILENO);
		unsetenv("TC_FIBRE_STACK");
		overflow_child();
	}
	close(fd[1]);
	char msg[512];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof msg - 1 && (r = read(fd[0], msg + n, sizeof msg - 1 - n)) > 0)
		n += (size_t)r;
	msg[n] = '\0';
	close(fd[0]);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status), "child status %#x, said: %s", status, msg);
	cr_assert_eq(WTERMSIG(status), SIGABRT);
	cr_assert_not_null(strstr(msg, "topocoll: fibre stack overflow (stack size 16384 bytes; "
	                               "raise it with TC_FIBRE_STACK"),
	                   "said: %s", msg);
}

/* A fault outside any guard page is not ours: the default action, SIGSEGV. */
Test(fibre, other_faults_not_reported, .timeout = 60)
{
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct tc__fibre main, *f;
		signal(SIGSEGV, SIG_DFL);
		/* Installs ours over SIG_DFL; a guard page is registered. */
		if (tc__fibre_thread_init(&main) || tc__fibre_create(&main, 0, deep_fn, NULL, &f))
			_exit(3);
		volatile int *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (none == MAP_FAILED)
			_exit(3);
		*none = 1; /* a PROT_NONE page that is no fibre's guard */
		_exit(4);
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status));
	cr_assert_eq(WTERMSIG(status), SIGSEGV);
}

/* ---- stack sizes ------------------------------------------------------ */

Test(fibre, stack_sizes, .timeout = 60)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsetenv("TC_FIBRE_STACK");
	cr_assert_eq(tc__fibre_stack_size(0), (size_t)TC__FIBRE_STACK_DEFAULT);
	cr_assert_eq(tc__fibre_stack_size(1), pg);
	cr_assert_eq(tc__fibre_stack_size(pg + 1), 2 * pg);
	setenv("TC_FIBRE_STACK", "256k", 1);
	cr_assert_eq(tc__fibre_stack_size(0), (size_t)256 << 10);
	cr_assert_eq(tc__fibre_stack_size(4096), (size_t)256 << 10); /* a floor */
	cr_assert_eq(tc__fibre_stack_size((size_t)1 << 20), (size_t)1 << 20);
	unsetenv("TC_FIBRE_STACK");
	struct tc__fibre main, *f;
	cr_assert_eq(tc__fibre_create(NULL, 0, deep_fn, NULL, &f), TC_EINVAL);
	cr_assert_eq(tc__fibre_create(&main, 0, NULL, NULL, &f), TC_EINVAL);
}

/* The margin by which a precise sleep wakes before its deadline
 * (lib/fibre/runq.h): the mean lateness plus 3 us up to 4 CPUs, within
 * 100 us; beyond, the mean plus sqrt(2 ln n) mean deviations, within 1 ms;
 * a sample counts up to twice the margin plus 5 us. */
Test(fibre, early_margin, .timeout = 10)
{
	/* 2 CPUs: 20 us wake-ups, then one of 10 ms (a preempted sleep). */
	tc__early_reset(2);
	for (int i = 0; i < 200; i++)
		tc__early_learn(20000);
	uint64_t m = tc__early_margin();
	cr_assert(m >= 22000 && m <= 24000, "2 CPUs, 20 us wake-ups: %llu ns", (unsigned long long)m);
	tc__early_learn(10000000);
	m = tc__early_margin();
	cr_assert(m < 40000, "one preempted sleep counts for at most 2 m + 5 us: %llu ns",
	          (unsigned long long)m);
	for (int i = 0; i < 500; i++)
		tc__early_learn(400000);
	cr_assert_eq(tc__early_margin(), 100000, "the bound up to 4 CPUs");
	/* 16 CPUs: wake-ups of 20 and 40 us in turn, mean 30 us, mean
	 * deviation 10 us: 30 + 3 + sqrt(2 ln 16) 10 = 56.5 us. */
	tc__early_reset(16);
	for (int i = 0; i < 400; i++)
		tc__early_learn(i % 2 ? 40000 : 20000);
	m = tc__early_margin();
	const double want = 33000 + sqrt(2 * log(16.0)) * 10000;
	cr_assert(fabs((double)m - want) < 2500, "16 CPUs: %llu ns, not about %.0f",
	          (unsigned long long)m, want);
	for (int i = 0; i < 500; i++)
		tc__early_learn(5000000);
	cr_assert_eq(tc__early_margin(), 1000000, "the bound beyond 4 CPUs");
	tc__early_reset(sysconf(_SC_NPROCESSORS_ONLN));
}
