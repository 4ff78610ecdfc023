/* SPDX-License-Identifier: MIT */
/* lib/base/error.c - tc_strerror() and tc_error_detail(): the messages of
 * the TC_E* codes and the thread's detail text behind the last error. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/error_detail.h"
#include "topocoll/error.h"

static _Thread_local char tc__detail[640];
/* This thread's text is counted in tc__details_set. */
static _Thread_local bool tc__detail_counted;

atomic_uint tc__details_set;

const char *tc_error_detail(void)
{
	return tc__detail;
}

void tc__set_detail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tc__detail, sizeof tc__detail, fmt, ap);
	va_end(ap);
	/* Relaxed: a thread reads its own count (error_detail.h); another's
	 * only decides whether it looks at its own text. */
	if (!tc__detail_counted) {
		tc__detail_counted = true;
		atomic_fetch_add_explicit(&tc__details_set, 1, memory_order_relaxed);
	}
}

void tc__clear_detail_set(void)
{
	tc__detail[0] = 0;
	if (tc__detail_counted) {
		tc__detail_counted = false;
		atomic_fetch_sub_explicit(&tc__details_set, 1, memory_order_relaxed);
	}
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
