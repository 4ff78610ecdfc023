/* SPDX-License-Identifier: MIT */
/*
 * lib/fibre/fibre.c - fibre stacks, their first frame, and the report of a
 * stack overflow.  The contract is in lib/fibre/fibre.h.
 *
 * Why our own switch rather than a library's (README, Dependencies): the
 * switch is two routines of about 25 instructions (switch_x86_64.S,
 * switch_aarch64.S) that save what the ABIs make callee-saved, and nothing
 * else; Boost.Context's fcontext, the one well-kept alternative with C
 * linkage, saves the same registers the same way but comes as part of a C++
 * library (libboost-context-dev, a C++ header-only API whose C symbols
 * jump_fcontext/make_fcontext we would have to declare ourselves, tied to
 * one Boost soname), for no switch that is faster.  ucontext's swapcontext
 * makes a system call (sigprocmask) per switch.
 *
 * Stacks: one mmap() per fibre, a PROT_NONE guard page at its low end, then
 * the usable stack (whole pages; MAP_NORESERVE and untouched pages cost
 * nothing until used).  A new fibre's first frame (the layout the switch
 * routine pops, see the .S files) resumes at tc__fibre_start, which calls
 * tc__fibre_main(fibre).
 *
 * Overflow report: a process-wide SIGSEGV handler (installed once, on the
 * alternate signal stack that tc__fibre_thread_init gives each thread)
 * looks the fault address up in a registry of guard pages.  The registry is
 * an array of slots that is only ever grown (a grown copy is published and
 * the old one kept), so the handler reads it without a lock and without
 * ever touching freed memory; create and destroy update it under a mutex.
 * A fault elsewhere goes to the previous handler, or the default action.
 */
#include "fibre/fibre.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "topocoll.h"

__attribute__((visibility("hidden"))) void tc__fibre_start(void); /* switch_<arch>.S */

/* ---- the guard-page registry ------------------------------------------ */

struct tc__guard {
	_Atomic uintptr_t lo; /* guard page address; 0: free slot */
	_Atomic size_t stack; /* the fibre's usable stack, for the report */
};
struct tc__guards {
	int cap;
	struct tc__guard slot[];
};

static pthread_mutex_t tc__guard_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tc__guards *_Atomic tc__guard_tab; /* never freed */
static int *tc__guard_free;                      /* free slot indices */
static int tc__guard_nfree, tc__guard_used;
static size_t tc__page;

static void *tc__map_rw(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Takes a slot for [lo, lo + page): its index, or -1 when out of memory. */
static int tc__guard_add(uintptr_t lo, size_t stack)
{
	int i = -1;
	pthread_mutex_lock(&tc__guard_mu);
	/* Relaxed: written under the mutex only. */
	struct tc__guards *tab = atomic_load_explicit(&tc__guard_tab, memory_order_relaxed);
	if (tc__guard_nfree) {
		i = tc__guard_free[--tc__guard_nfree];
	} else {
		if (!tab || tc__guard_used == tab->cap) {
			int cap = tab ? 2 * tab->cap : 256;
			struct tc__guards *grown =
			        tc__map_rw(sizeof *grown + (size_t)cap * sizeof grown->slot[0]);
			int *fr = realloc(tc__guard_free, (size_t)cap * sizeof *fr);
			if (!grown || !fr) {
				if (grown)
					munmap(grown,
					       sizeof *grown + (size_t)cap * sizeof grown->slot[0]);
				if (fr)
					tc__guard_free = fr;
				goto out;
			}
			tc__guard_free = fr;
			grown->cap = cap;
			for (int k = 0; tab && k < tab->cap; k++) {
				atomic_init(&grown->slot[k].lo,
				            atomic_load_explicit(&tab->slot[k].lo, memory_order_relaxed));
				atomic_init(&grown->slot[k].stack,
				            atomic_load_explicit(&tab->slot[k].stack,
				                                 memory_order_relaxed));
			}
			/* Release: the copied slots before the table; pairs with the
			 * handler's acquire load.  The old table stays mapped (a
			 * handler may be reading it). */
			atomic_store_explicit(&tc__guard_tab, grown, memory_order_release);
			tab = grown;
		}
		i = tc__guard_used++;
	}
	atomic_store_explicit(&tab->slot[i].stack, stack, memory_order_relaxed);
	/* Release: the size before the address that makes the slot live;
	 * pairs with the handler's acquire load of lo. */
	atomic_store_explicit(&tab->slot[i].lo, lo, memory_order_release);
out:
	pthread_mutex_unlock(&tc__guard_mu);
	return i;
}

static void tc__guard_remove(int i)
{
	pthread_mutex_lock(&tc__guard_mu);
	struct tc__guards *tab = atomic_load_explicit(&tc__guard_tab, memory_order_relaxed);
	/* Relaxed: the slot dies with its stack's munmap, after this. */
	atomic_store_explicit(&tab->slot[i].lo, 0, memory_order_relaxed);
	tc__guard_free[tc__guard_nfree++] = i;
	pthread_mutex_unlock(&tc__guard_mu);
}

/* ---- the overflow report --------------------------------------------- */

static struct sigaction tc__old_segv;
static pthread_once_t tc__segv_once = PTHREAD_ONCE_INIT;

static void tc__say(const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void tc__segv(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	/* Acquire: pairs with the release stores of tc__guard_add(). */
	struct tc__guards *tab = atomic_load_explicit(&tc__guard_tab, memory_order_acquire);
	for (int i = 0; tab && i < tab->cap; i++) {
		uintptr_t lo = atomic_load_explicit(&tab->slot[i].lo, memory_order_acquire);
		if (!lo || a < lo || a - lo >= tc__page)
			continue;
		size_t n = atomic_load_explicit(&tab->slot[i].stack, memory_order_relaxed);
		char num[24], *p = num + sizeof num;
		*--p = '\0';
		do
			*--p = (char)('0' + n % 10);
		while (n /= 10);
		tc__say("topocoll: fibre stack overflow (stack size ");
		tc__say(p);
		tc__say(" bytes; raise it with TC_FIBRE_STACK=bytes)\n");
		abort();
	}
	/* Not ours: the previous handler, or the default action (the fault
	 * repeats on return, then with that action). */
	if (tc__old_segv.sa_flags & SA_SIGINFO && tc__old_segv.sa_sigaction) {
		tc__old_segv.sa_sigaction(sig, si, uc);
	} else if (tc__old_segv.sa_handler != SIG_DFL && tc__old_segv.sa_handler != SIG_IGN) {
		tc__old_segv.sa_handler(sig);
	} else {
		sigaction(SIGSEGV, &tc__old_segv, NULL);
	}
}

static void tc__segv_install(void)
{
	tc__page = (size_t)sysconf(_SC_PAGESIZE);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = tc__segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &tc__old_segv);
}

/* ---- stack sizes ------------------------------------------------------ */

static size_t tc__env_stack(void)
{
	const char *s = getenv("TC_FIBRE_STACK");
	if (!s || !*s)
		return 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end == 'k' || *end == 'K')
		v <<= 10;
	else if (*end == 'm' || *end == 'M')
		v <<= 20;
	return (size_t)v;
}

size_t tc__fibre_stack_size(size_t stack_bytes)
{
	pthread_once(&tc__segv_once, tc__segv_install);
	size_t env = tc__env_stack();
	size_t n = stack_bytes ? stack_bytes : env ? env : TC__FIBRE_STACK_DEFAULT;
	if (n < env)
		n = env;
	return (n + tc__page - 1) / tc__page * tc__page;
}

/* ---- threads, fibres -------------------------------------------------- */

int tc__fibre_thread_init(struct tc__fibre *self)
{
	pthread_once(&tc__segv_once, tc__segv_install);
	memset(self, 0, sizeof *self);
	self->slot = -1;
#ifdef TC__FIBRE_TSAN
	self->tsan = __tsan_get_current_fiber();
#endif
#ifdef TC__FIBRE_ASAN
	pthread_attr_t attr;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *lo = NULL;
		size_t n = 0;
		if (pthread_attr_getstack(&attr, &lo, &n) == 0) {
			self->asan_bottom = lo;
			self->asan_size = n;
		}
		pthread_attr_destroy(&attr);
	}
#endif
	stack_t cur;
	if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
		return TC_OK;     /* the thread has one: ours would replace it */
	size_t bytes = 64 * 1024; /* ample for the handler: a few hundred bytes */
	if (bytes < (size_t)SIGSTKSZ)
		bytes = (size_t)SIGSTKSZ;
	void *p = tc__map_rw(bytes);
	if (!p)
		return TC_ENOMEM;
	stack_t ss = {.ss_sp = p, .ss_size = bytes, .ss_flags = 0};
	if (sigaltstack(&ss, NULL) != 0) {
		munmap(p, bytes);
		return TC_ENOMEM;
	}
	self->map = p;
	self->map_bytes = bytes;
	return TC_OK;
}

void tc__fibre_thread_fini(struct tc__fibre *self)
{
	if (!self->map)
		return;
	stack_t off = {.ss_flags = SS_DISABLE};
	sigaltstack(&off, NULL);
	munmap(self->map, self->map_bytes);
	self->map = NULL;
}

/* The C side of every fibre's first frame (tc__fibre_start). */
__attribute__((visibility("hidden"))) _Noreturn void tc__fibre_main(struct tc__fibre *f);
_Noreturn void tc__fibre_main(struct tc__fibre *f)
{
#ifdef TC__FIBRE_ASAN
	__sanitizer_finish_switch_fiber(NULL, NULL, NULL); /* a new stack: no fake one yet */
#endif
	f->fn(f, f->arg);
	tc__fibre_exit(f);
}

_Noreturn void tc__fibre_exit(struct tc__fibre *self)
{
	self->done = true;
	void *dead;
#ifdef TC__FIBRE_TSAN
	__tsan_switch_to_fiber(self->back->tsan, 0);
#endif
#ifdef TC__FIBRE_ASAN
	/* NULL: this stack's fake frames die with it. */
	__sanitizer_start_switch_fiber(NULL, self->back->asan_bottom, self->back->asan_size);
#endif
	tc__fibre_jump(&dead, self->back->sp);
	abort(); /* nothing switches back to a finished fibre */
}

/* The first frame, as the switch routine pops it (see the .S files). */
static void *tc__first_frame(struct tc__fibre *f, void *top)
{
	uintptr_t *sp = top;
#if defined(__x86_64__)
	uint32_t mxcsr;
	uint16_t fpcw;
	__asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
	__asm__ volatile("fnstcw %0" : "=m"(fpcw));
	*--sp = (uintptr_t)tc__fibre_start; /* return address */
	*--sp = 0;                          /* rbp */
	*--sp = 0;                          /* rbx */
	*--sp = (uintptr_t)f;               /* r12 */
	*--sp = (uintptr_t)tc__fibre_main;  /* r13 */
	*--sp = 0;                          /* r14 */
	*--sp = 0;                          /* r15 */
	*--sp = (uintptr_t)mxcsr | (uintptr_t)fpcw << 32;
#elif defined(__aarch64__)
	uint64_t fpcr;
	__asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
	sp -= 22;
	memset(sp, 0, 22 * sizeof *sp);
	sp[0] = (uintptr_t)f;                /* x19 */
	sp[1] = (uintptr_t)tc__fibre_main;   /* x20 */
	sp[11] = (uintptr_t)tc__fibre_start; /* x30 */
	sp[20] = (uintptr_t)fpcr;
#else
#error "lib/fibre: no switch routine for this architecture (x86-64 and AArch64 only)"
#endif
	return sp;
}

int tc__fibre_create(struct tc__fibre *back, size_t stack_bytes, tc__fibre_fn fn, void *arg,
                     struct tc__fibre **out)
{
	if (!back || !fn || !out)
		return TC_EINVAL;
	size_t stack = tc__fibre_stack_size(stack_bytes);
	struct tc__fibre *f = calloc(1, sizeof *f);
	if (!f)
		return TC_ENOMEM;
	f->map_bytes = tc__page + stack;
	f->map = mmap(NULL, f->map_bytes, PROT_READ | PROT_WRITE,
	              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (f->map == MAP_FAILED) {
		free(f);
		return TC_ENOMEM;
	}
	f->slot = -1;
	if (mprotect(f->map, tc__page, PROT_NONE) != 0 ||
	    (f->slot = tc__guard_add((uintptr_t)f->map, stack)) < 0) {
		tc__fibre_destroy(f);
		return TC_ENOMEM;
	}
	f->stack_bytes = stack;
	f->back = back;
	f->fn = fn;
	f->arg = arg;
	f->sp = tc__first_frame(f, (char *)f->map + f->map_bytes);
#ifdef TC__FIBRE_TSAN
	f->tsan = __tsan_create_fiber(0);
#endif
#ifdef TC__FIBRE_ASAN
	f->asan_bottom = (char *)f->map + tc__page;
	f->asan_size = stack;
	/* The shadow of a mapping that held another stack may still carry
	 * that stack's redzones (frames that were never unwound). */
	__asan_unpoison_memory_region(f->asan_bottom, f->asan_size);
#endif
	*out = f;
	return TC_OK;
}

void tc__fibre_restart(struct tc__fibre *f)
{
	f->done = false;
#ifdef TC__FIBRE_ASAN
	/* Its last run's frames were never unwound: drop their redzones. */
	__asan_unpoison_memory_region(f->asan_bottom, f->asan_size);
#endif
	f->sp = tc__first_frame(f, (char *)f->map + f->map_bytes);
}

void tc__fibre_destroy(struct tc__fibre *f)
{
	if (!f)
		return;
	if (f->slot >= 0)
		tc__guard_remove(f->slot);
#ifdef TC__FIBRE_TSAN
	if (f->tsan)
		__tsan_destroy_fiber(f->tsan);
#endif
#ifdef TC__FIBRE_ASAN
	if (f->asan_bottom)
		__asan_unpoison_memory_region(f->asan_bottom, f->asan_size);
#endif
	munmap(f->map, f->map_bytes);
	free(f);
}
