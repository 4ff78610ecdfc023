/* SPDX-License-Identifier: MIT */
/*
 * tests/common/harness.h - one test source, two harnesses.
 *
 * Criterion 2.4 aborts at start-up under ThreadSanitizer (Snaipe/Criterion#274),
 * so the concurrency tests are also built as plain executables: with
 * TC_PLAIN_TEST defined, Test() registers the function in a table run by
 * tests/common/plain_main.c, and the cr_assert* subset below checks and aborts.
 * Test files include this header instead of <criterion/criterion.h> and use only
 * Test(), cr_assert(), cr_assert_eq/neq/lt/leq/gt/geq(), cr_assert_null/not_null(),
 * cr_assert_str_eq() and cr_assert_str_neq().
 */
#ifndef TC_TESTS_HARNESS_H
#define TC_TESTS_HARNESS_H

#ifndef TC_PLAIN_TEST
#include <criterion/criterion.h>
#else
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*tc_test_fn)(void);
void tc_test_register(const char *suite, const char *name, tc_test_fn fn);

/* Every macro takes its arguments as one variadic list with a 0 appended, so
 * that calls without a message stay ISO C (pedantic) clean.  The condition,
 * file and line are printed, then the message when there is one: the list
 * after the operands is either (0, ...) or (format, arguments..., 0, ...), and
 * tc_test_msg() prints the second kind (the trailing zeros are ignored). */
void tc_test_msg(const char *fmt, ...);

#define Test(...) TC__TEST(__VA_ARGS__, 0)
#define TC__TEST(suite, name, ...)                                          \
	static void suite##_##name(void);                                   \
	__attribute__((constructor)) static void suite##_##name##_reg(void) \
	{                                                                   \
		tc_test_register(#suite, #name, suite##_##name);            \
	}                                                                   \
	static void suite##_##name(void)

#define TC__CHECK(cond, text, ...)                                                                  \
	do {                                                                                        \
		if (!(cond)) {                                                                      \
			fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, text); \
			tc_test_msg(__VA_ARGS__);                                                   \
			abort();                                                                    \
		}                                                                                   \
	} while (0)
#define TC__A1(c, ...) TC__CHECK(c, #c, __VA_ARGS__)
#define TC__A2(a, b, op, ...) TC__CHECK((a)op(b), #a " " #op " " #b, __VA_ARGS__)
#define cr_assert(...) TC__A1(__VA_ARGS__, 0)
#define TC__NOT(c, ...) TC__CHECK(!(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_not(...) TC__NOT(__VA_ARGS__, 0)
#define TC__CMP(op, a, b, ...) TC__A2(a, b, op, __VA_ARGS__)
#define cr_assert_eq(...) TC__CMP(==, __VA_ARGS__, 0)
#define cr_assert_neq(...) TC__CMP(!=, __VA_ARGS__, 0)
#define cr_assert_lt(...) TC__CMP(<, __VA_ARGS__, 0)
#define cr_assert_leq(...) TC__CMP(<=, __VA_ARGS__, 0)
#define cr_assert_gt(...) TC__CMP(>, __VA_ARGS__, 0)
#define cr_assert_geq(...) TC__CMP(>=, __VA_ARGS__, 0)
#define TC__NULL(p, ...) TC__CHECK((p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_null(...) TC__NULL(__VA_ARGS__, 0)
#define TC__NNULL(p, ...) TC__CHECK((p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_not_null(...) TC__NNULL(__VA_ARGS__, 0)
#define TC__STREQ(a, b, ...) TC__CHECK(strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)
#define cr_assert_str_eq(...) TC__STREQ(__VA_ARGS__, 0)
#define TC__STRNEQ(a, b, ...) TC__CHECK(strcmp((a), (b)) != 0, #a " != " #b, __VA_ARGS__)
#define cr_assert_str_neq(...) TC__STRNEQ(__VA_ARGS__, 0)
/* Criterion's skip: the test function returns, saying why (called from
 * the test function itself, not from a function it calls). */
#define cr_skip_test(...)                                   \
	do {                                                \
		fprintf(stderr, "%s: skipped: ", __func__); \
		tc_test_msg(__VA_ARGS__, 0);                \
		return;                                     \
	} while (0)
#endif

#endif /* TC_TESTS_HARNESS_H */
