/* SPDX-License-Identifier: MIT */
/* Runs the tests registered by tests/common/harness.h in plain mode and prints
 * TAP, so meson reads these executables like the Criterion ones.  An argument
 * selects the tests whose "suite/name" contains it. */
#include "harness.h"

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

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	char full[256];
	int run = 0;

	printf("TAP version 13\n");
	for (int i = 0; i < ntests; i++) {
		snprintf(full, sizeof full, "%s/%s", tests[i].suite, tests[i].name);
		if (filter && !strstr(full, filter))
			continue;
		run++;
	}
	printf("1..%d\n", run);
	run = 0;
	for (int i = 0; i < ntests; i++) {
		snprintf(full, sizeof full, "%s/%s", tests[i].suite, tests[i].name);
		if (filter && !strstr(full, filter))
			continue;
		fflush(stdout);
		tests[i].fn(); /* a failed assertion aborts the whole executable */
		printf("ok %d - %s\n", ++run, full);
	}
	return 0;
}
