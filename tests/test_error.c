/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "harness.h"
#include "topocoll.h"

Test(error, every_code_has_a_distinct_name_and_message)
{
	int codes[] = {
#define X(name, val, msg) TC_##name,
		TC_ERRNO_MAP(X)
#undef X
	};
	int n = (int)(sizeof codes / sizeof codes[0]);
	for (int i = 0; i < n; i++) {
		cr_assert_lt(codes[i], 0);
		cr_assert_neq(strcmp(tc_strerror(codes[i]), "unknown error"), 0);
		cr_assert_eq(strncmp(tc_err_name(codes[i]), "TC_E", 4), 0);
		for (int j = 0; j < i; j++) {
			cr_assert_neq(codes[i], codes[j]);
			cr_assert_neq(strcmp(tc_err_name(codes[i]), tc_err_name(codes[j])), 0);
		}
	}
	cr_assert_str_eq(tc_strerror(0), "success");
	cr_assert_str_eq(tc_err_name(TC_ETRUNCATE), "TC_ETRUNCATE");
	cr_assert_str_eq(tc_strerror(12345), "unknown error");
}
