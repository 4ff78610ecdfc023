/* SPDX-License-Identifier: MIT */
/* lib/base/error.c - tc_strerror() and tc_error_detail(): the messages of
 * the TC_E* codes and the thread's detail text behind the last error. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/error_detail.h"
#include "topocoll/error.h"

/* The kernel thread's text (its fibres have their own). */
static _Thread_local struct tc__detail tc__thread_detail;

_Thread_local struct tc__detail *const *tc__detail_fibre;

atomic_uint tc__details_set;

/* This thread of control's text. */
static struct tc__detail *tc__detail_here(void)
{
	struct tc__detail *d = tc__detail_fibre ? *tc__detail_fibre : NULL;
	return d ? d : &tc__thread_detail;
}

const char *tc_error_detail(void)
{
	return tc__detail_here()->text;
}

void tc__set_detail(const char *fmt, ...)
{
	struct tc__detail *d = tc__detail_here();
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->text, sizeof d->text, fmt, ap);
	va_end(ap);
	/* Relaxed: a thread reads its own count (error_detail.h); another's
	 * only decides whether it looks at its own text. */
	if (!d->counted) {
		d->counted = true;
		atomic_fetch_add_explicit(&tc__details_set, 1, memory_order_relaxed);
	}
}

void tc__detail_forget(struct tc__detail *d)
{
	d->text[0] = 0;
	if (d->counted) {
		d->counted = false;
		atomic_fetch_sub_explicit(&tc__details_set, 1, memory_order_relaxed);
	}
}

void tc__detail_keep(struct tc__detail_kept *k)
{
	k->set = false;
	if (!atomic_load_explicit(&tc__details_set, memory_order_relaxed))
		return;
	const struct tc__detail *d = tc__detail_here();
	if (!d->text[0])
		return;
	memcpy(k->text, d->text, sizeof k->text);
	k->set = true;
}

void tc__detail_restore(const struct tc__detail_kept *k)
{
	if (k->set && !tc__detail_here()->text[0])
		tc__set_detail("%s", k->text);
}

void tc__clear_detail_set(void)
{
	tc__detail_forget(tc__detail_here());
}

const char *tc_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
#define TC__ERR_MSG(name, val, msg) \
	case (val):                 \
		return msg;
		TC_ERRNO_MAP(TC__ERR_MSG)
#undef TC__ERR_MSG
	default:
		return "unknown error";
	}
}

const char *tc_err_name(int err)
{
	switch (err) {
	case 0:
		return "TC_OK";
#define TC__ERR_NAME(name, val, msg) \
	case (val):                  \
		return "TC_" #name;
		TC_ERRNO_MAP(TC__ERR_NAME)
#undef TC__ERR_NAME
	default:
		return "TC_E?";
	}
}
