/* SPDX-License-Identifier: MIT */
/*
 * lib/p2p/watchdog.c - the watchdog's report: the first rank of a run whose
 * wait times out (lib/p2p/progress.c) writes what every rank is doing, from
 * the state each publishes as it waits, to the team's watchdog callback
 * (tc_team_set_watchdog) or stderr.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "p2p/p2p.h"

void tc_team_set_watchdog(struct tc_team *team, tc_watchdog_fn fn, void *arg)
{
	team->wd_fn = fn;
	team->wd_arg = arg;
}

/* Appends to a growing report; drops what does not fit. */
struct tc__text {
	char *p;
	size_t n, cap;
};
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
tc__text_add(struct tc__text *b, const char *fmt, ...)
{
	if (!b->p || b->n >= b->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		b->n = b->n + (size_t)k < b->cap ? b->n + (size_t)k : b->cap - 1;
}

/* One rank's line of the report, from its published state (relaxed loads:
 * a snapshot of a team that is still running). */
static void tc__watchdog_line(struct tc__text *b, const struct tc_proc *pr)
{
	const struct tc__wstate *ws = &pr->ws;
	int state = atomic_load_explicit(&ws->state, memory_order_relaxed);
	const char *call = atomic_load_explicit(&ws->call, memory_order_relaxed);
	tc__text_add(b, "  rank %d: ", pr->rank);
	if (!atomic_load_explicit(&pr->joined, memory_order_relaxed)) {
		tc__text_add(b, "not attached: no thread has attached it since the team "
		                "started (tc_attach)\n");
		return;
	}
	if (!atomic_load_explicit(&pr->attached, memory_order_relaxed)) {
		tc__text_add(b, "not attached (detached)\n");
		return;
	}
	if (state == TC__WS_RETURNED) {
		tc__text_add(b, "not in the library: its SPMD function returned\n");
		return;
	}
	if (state != TC__WS_WAITING) {
		tc__text_add(b, "not waiting in the library (in its own code)%s%s\n",
		             call ? "; its last wait was in " : "", call ? call : "");
		return;
	}
	const char *alg = atomic_load_explicit(&ws->alg, memory_order_relaxed);
	int round = atomic_load_explicit(&ws->round, memory_order_relaxed);
	int peer = atomic_load_explicit(&ws->peer, memory_order_relaxed);
	int sending = atomic_load_explicit(&ws->sending, memory_order_relaxed);
	unsigned long long bytes = atomic_load_explicit(&ws->bytes, memory_order_relaxed);
	int pending = atomic_load_explicit(&ws->pending, memory_order_relaxed);
	tc__text_add(b, "waiting in %s", call ? call : "?");
	if (alg)
		tc__text_add(b, " (algorithm %s)", alg);
	if (round >= 0)
		tc__text_add(b, ", round %d", round);
	if (peer >= 0)
		tc__text_add(b, ", %s rank %d on link %d->%d, %llu bytes outstanding",
		             sending ? "sending to" : "receiving from", peer,
		             sending ? pr->rank : peer, sending ? peer : pr->rank, bytes);
	else if (pending)
		tc__text_add(b, ", for a peer to copy a single-copy send");
	tc__text_add(b, ", %d request%s pending\n", pending, pending == 1 ? "" : "s");
}

void tc__watchdog_fire(struct tc_proc *proc, uint64_t waited_ns)
{
	struct tc_team *t = proc->team;
	int expect = 0;
	/* One report per run, and none when the team failed otherwise first.
	 * A rank whose wait timed out too while the report is being written
	 * waits for it before it aborts and returns, so that the report shows
	 * it still waiting (1: being written, 2: out). */
	if (atomic_load(&t->aborted))
		return;
	if (!atomic_compare_exchange_strong(&t->wd_fired, &expect, 1)) {
		while (atomic_load(&t->wd_fired) == 1 && !atomic_load(&t->aborted))
			tc_yield(proc);
		return;
	}
	struct tc__text b = {.cap = 256 + (size_t)t->p * 192};
	b.p = malloc(b.cap);
	if (!b.p) {
		atomic_store(&t->wd_fired, 2);
		return;
	}
	b.p[0] = 0;
	int missing = 0;
	for (int r = 0; r < t->p; r++)
		missing += !atomic_load_explicit(&t->procs[r].joined, memory_order_relaxed);
	tc__text_add(&b,
	             "topocoll watchdog: rank %d waited %.1f ms without progress (timeout %.0f ms) "
	             "in %s; "
	             "the team of %d ranks is aborted.",
	             proc->rank, (double)waited_ns / 1e6, (double)atomic_load(&t->timeout_ns) / 1e6,
	             proc->cur_call ? proc->cur_call : "?", t->p);
	if (missing)
		tc__text_add(&b,
		             "  %d rank%s never attached (%.1f s after the team started; "
		             "attach_timeout_ms %.0f): fewer threads attached than the team's "
		             "%d ranks?",
		             missing, missing == 1 ? "" : "s", (double)(tc__now_ns() - t->start_ns) / 1e9,
		             (double)t->attach_timeout_ns / 1e6, t->p);
	tc__text_add(&b, "  Every rank:\n");
	for (int r = 0; r < t->p; r++)
		tc__watchdog_line(&b, &t->procs[r]);
	if (t->wd_fn)
		t->wd_fn(t->wd_arg, b.p);
	else
		fputs(b.p, stderr);
	free(b.p);
	atomic_store(&t->wd_fired, 2);
}
