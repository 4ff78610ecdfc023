/* SPDX-License-Identifier: MIT */
/* Runs the tests registered by tests/common/harness.h in plain mode and prints
 * TAP, so meson reads these executables like the Criterion ones.  Arguments
 * select the tests whose "suite/name" contains any of them. */
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define TC_PLAIN_MAX 256

static struct {
	const char *suite, *name;
	tc_test_fn fn;
} tests[TC_PLAIN_MAX];
static int ntests;

void tc_test_register(const char *suite, const char *name, tc_test_fn fn)
{
	if (ntests == TC_PLAIN_MAX) {
		fprintf(stderr, "too many tests\n");
		abort();
	}
	tests[ntests].suite = suite;
	tests[ntests].name = name;
	tests[ntests].fn = fn;
	ntests++;
}

void tc_test_msg(const char *fmt, ...)
{
	if (!fmt)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int selected(const char *full, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strstr(full, argv[i]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	char full[256];
	int run = 0;

	printf("TAP version 13\n");
	for (int i = 0; i < ntests; i++) {
		snprintf(full, sizeof full, "%s/%s", tests[i].suite, tests[i].name);
		if (!selected(full, argc, argv))
			continue;
		run++;
	}
	printf("1..%d\n", run);
	run = 0;
	for (int i = 0; i < ntests; i++) {
		snprintf(full, sizeof full, "%s/%s", tests[i].suite, tests[i].name);
		if (!selected(full, argc, argv))
			continue;
		fflush(stdout);
		tests[i].fn(); /* a failed assertion aborts the whole executable */
		printf("ok %d - %s\n", ++run, full);
	}
	return 0;
}
