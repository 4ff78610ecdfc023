/* SPDX-License-Identifier: MIT */
/*
 * lib/fibre/fibre.h - fibres: user-level contexts with stacks of their own,
 * and the switch between them (the foundation of ranks as
 * fibres; lib/fibre/runq.h runs them).
 *
 * A fibre is a function running on a stack from mmap() with a PROT_NONE guard
 * page below it.  tc__fibre_switch(from, to) saves the running context into
 * from and resumes to, in user space: the callee-saved registers, the stack
 * pointer and the floating-point control state (x86-64: MXCSR and the x87
 * control word; AArch64: FPCR) are saved and restored by a routine of a few
 * instructions per architecture (lib/fibre/switch_x86_64.S,
 * switch_aarch64.S).  So each context has its own floating-point control
 * state: a rounding mode set in one fibre is not seen by another, as with
 * threads (and as the ABIs make these registers callee-saved).  The status
 * flags (MXCSR exception bits, FPSR) are not switched.
 *
 * The thread that switches to fibres is itself a context: it calls
 * tc__fibre_thread_init() on a struct tc__fibre of its own first (which also
 * gives the thread the alternate signal stack on which a stack overflow is
 * reported) and tc__fibre_thread_fini() when done.  A fibre whose function
 * returns (or that calls tc__fibre_exit()) is finished and switches to its
 * creator's context for good; a finished or never-started fibre is destroyed
 * with tc__fibre_destroy().
 *
 * Stack overflow: a fibre that runs into its guard page is reported on
 * stderr, "topocoll: fibre stack overflow (stack size N bytes; raise it with
 * TC_FIBRE_STACK=bytes)", and the process aborts (SIGABRT).  The report needs
 * the running thread's alternate signal stack (tc__fibre_thread_init); any
 * other SIGSEGV goes to the handler installed before ours.
 *
 * Thread-safety: create and destroy may be called from any thread,
 * concurrently.  A fibre runs on one thread at a time; it may be resumed by
 * another thread than the one it last ran on, once it has switched away.
 * Not async-signal-safe.  Nothing here is public.
 */
#ifndef TC_FIBRE_FIBRE_H
#define TC_FIBRE_FIBRE_H

#include <stdbool.h>
#include <stddef.h>

/* ThreadSanitizer must be told about every switch (its fibre API), or it
 * sees one thread's accesses on many stacks and reports nonsense. */
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define TC__FIBRE_TSAN 1
#endif
/* So must AddressSanitizer (start/finish_switch_fiber), or it takes a
 * fibre's stack for a wild region of the thread's and its no-return and
 * fake-stack handling write outside it. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang says so this way */
#define TC__FIBRE_ASAN_CLANG 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(TC__FIBRE_ASAN_CLANG)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define TC__FIBRE_ASAN 1
#endif

/* Default usable stack of a fibre; TC_FIBRE_STACK (bytes, or with a k or m
 * suffix) replaces it and is a floor for explicit sizes too. */
enum { TC__FIBRE_STACK_DEFAULT = 64 * 1024 };

struct tc__fibre;
typedef void (*tc__fibre_fn)(struct tc__fibre *self, void *arg);

struct tc__fibre {
	void *sp;               /* saved stack pointer while not running */
	struct tc__fibre *back; /* the context switched to when fn returns */
	tc__fibre_fn fn;
	void *arg;
	void *map; /* the mapping: guard page, then the stack */
	size_t map_bytes;
	size_t stack_bytes; /* usable, whole pages */
	int slot;           /* guard-page registry slot (fibre.c), -1: none */
	bool done;
	void *tsan; /* ThreadSanitizer's fibre (TSan builds only) */
	/* AddressSanitizer builds only: the stack's bounds (a thread's own,
	 * or the fibre's below its guard page) and the fake stack saved
	 * while the context does not run. */
	const void *asan_bottom;
	size_t asan_size;
	void *asan_fake;
};

/* The switch routine (assembly): stores the current stack pointer, with the
 * context saved below it, into *save_sp and resumes the context saved at
 * load_sp.  Returns when some context switches back to the saved one. */
void tc__fibre_jump(void **save_sp, void *load_sp);

/*
 * Makes self the calling thread's own context, to switch from and back to,
 * and gives the thread an alternate signal stack (unless it has one) so a
 * fibre's stack overflow can be reported.  Returns 0 or TC_ENOMEM.  Paired
 * with tc__fibre_thread_fini(), on the same thread, once no fibre of the
 * thread is running.
 */
int tc__fibre_thread_init(struct tc__fibre *self);
void tc__fibre_thread_fini(struct tc__fibre *self);

/*
 * Creates a fibre that will run fn(fibre, arg) the first time it is switched
 * to, on a stack of stack_bytes (0: the default), rounded up to whole pages
 * and raised to TC_FIBRE_STACK if set; when fn returns the fibre switches to
 * back (usually the creator's context) and never runs again.  Returns 0,
 * TC_EINVAL (no back or fn) or TC_ENOMEM.  *out is owned by the caller until
 * tc__fibre_destroy().  Thread-safe.
 */
int tc__fibre_create(struct tc__fibre *back, size_t stack_bytes, tc__fibre_fn fn, void *arg,
                     struct tc__fibre **out);

/* Makes a fibre that is not running (finished, never started, or switched
 * away from for good) start afresh: fn(fibre, arg) runs on its stack the
 * next time it is switched to (fn, arg and back may be changed before). */
void tc__fibre_restart(struct tc__fibre *f);

/* Frees a fibre that is not running (finished, never started, or switched
 * away from for good: what is on its stack is dropped).  NULL is a no-op.
 * Thread-safe. */
void tc__fibre_destroy(struct tc__fibre *f);

/* Saves the running context into from (the fibre or thread context that is
 * running now) and runs to: returns when some context switches back to from.
 * to must not be running, nor finished. */
static inline void tc__fibre_switch(struct tc__fibre *from, struct tc__fibre *to)
{
#ifdef TC__FIBRE_TSAN
	__tsan_switch_to_fiber(to->tsan, 0);
#endif
#ifdef TC__FIBRE_ASAN
	__sanitizer_start_switch_fiber(&from->asan_fake, to->asan_bottom, to->asan_size);
#endif
	tc__fibre_jump(&from->sp, to->sp);
#ifdef TC__FIBRE_ASAN
	__sanitizer_finish_switch_fiber(from->asan_fake, NULL, NULL);
#endif
}

/* Ends the running fibre self: marks it finished and switches to self->back
 * for good.  What returning from fn does. */
_Noreturn void tc__fibre_exit(struct tc__fibre *self);

static inline bool tc__fibre_done(const struct tc__fibre *f)
{
	return f->done;
}

/* The usable stack size a fibre created with stack_bytes gets (see
 * tc__fibre_create). */
size_t tc__fibre_stack_size(size_t stack_bytes);

#endif /* TC_FIBRE_FIBRE_H */
