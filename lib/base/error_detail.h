/* SPDX-License-Identifier: MIT */
/* lib/base/error_detail.h - the text behind TC_ELIMIT (tc_error_detail()). */
#ifndef TC_BASE_ERROR_DETAIL_H
#define TC_BASE_ERROR_DETAIL_H

/* Sets this thread's tc_error_detail() text (printf format). */
void tc__set_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
