/* SPDX-License-Identifier: MIT */
/*
 * lib/base/error_detail.h - the text behind an error (tc_error_detail()):
 * set where the error is found, cleared where a public call that can fail
 * starts, so that after a call that fails it is that call's or "".
 */
#ifndef TC_BASE_ERROR_DETAIL_H
#define TC_BASE_ERROR_DETAIL_H

#include <stdatomic.h>
#include <stdbool.h>

/* Sets this thread's tc_error_detail() text (printf format): a kernel
 * thread's own, or on a fibre the fibre's (tc__detail_fibre). */
void tc__set_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The text of one thread of control.  A kernel thread has its own; the
 * fibre layer gives each fibre one (lib/fibre/runq.h), which the other
 * fibres of its CPU do not touch: a rank's detail is its own whether it
 * runs as a thread or as a fibre, through the waits in which its CPU runs
 * other ranks.  A kernel thread that runs fibres points tc__detail_fibre,
 * once, at where its fibre layer keeps the running fibre's text (NULL
 * there while none runs: the kernel thread's own), which the fibre layer
 * updates as it switches, a plain store; read only where a text is set,
 * read or cleared, never on the clearing's fast path.  tc__detail_forget
 * uncounts the text of a fibre that is freed.
 */
struct tc__detail {
	char text[640];
	bool counted; /* counted in tc__details_set */
};
extern _Thread_local struct tc__detail *const *tc__detail_fibre;
void tc__detail_forget(struct tc__detail *d);

/*
 * Work inside a call that may call the library's public functions (a
 * schedule's build: topology queries), each of which clears the text as
 * it starts: tc__detail_keep copies this thread's text, if it has one, and
 * tc__detail_restore puts it back if the work left none, so that words a
 * call set before such work (a rank's own argument error, agreed in an
 * exchange) reach its caller.  Costs one load of a word while no thread
 * has a text.
 */
struct tc__detail_kept {
	bool set;
	char text[sizeof(((struct tc__detail *)0)->text)];
};
void tc__detail_keep(struct tc__detail_kept *k);
void tc__detail_restore(const struct tc__detail_kept *k);

/* How many threads' text is not "" (error.c), and the clearing of this
 * thread's. */
extern atomic_uint tc__details_set;
void tc__clear_detail_set(void);

/*
 * Clears this thread's text, at the start of a public call that can fail
 * (every collective and point-to-point call among them).  While no thread
 * has a text, as on every path without an error, that is one load of a
 * word that no thread writes: the thread's own storage, which from a
 * shared library costs a call into the dynamic linker (a few ns, against a
 * message's 100 or so), is reached only while some thread has a text
 * (tc__clear_detail_set).  A thread that ends with a text set keeps the
 * count up, and every call then takes that way: a rank clears its own as
 * it returns (lib/run/run.c).
 */
static inline void tc__clear_detail(void)
{
	if (atomic_load_explicit(&tc__details_set, memory_order_relaxed))
		tc__clear_detail_set();
}

#endif
