/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz_argv.h - an argument vector from a fuzzer's input: the bytes
 * split at '\n' (and NUL) into at most FUZZ_MAXARGS strings, copied into one
 * buffer the caller frees.  Shared by tests/fuzz_model.c and fuzz_cli.c.
 */
#ifndef TC_TESTS_FUZZ_ARGV_H
#define TC_TESTS_FUZZ_ARGV_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAXARGS 24

/* Returns argc (0 with *buf NULL when the input is too long or memory
 * is short). */
static inline int fuzz_argv(const uint8_t *data, size_t size, char **argv, char **buf)
{
	*buf = NULL;
	if (size > 512)
		return 0;
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	int argc = 0;
	char *p = s;
	while (argc < FUZZ_MAXARGS && p < s + size) {
		argv[argc++] = p;
		while (p < s + size && *p && *p != '\n')
			p++;
		*p++ = '\0';
	}
	argv[argc] = NULL;
	*buf = s;
	return argc;
}

#endif
