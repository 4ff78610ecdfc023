/* SPDX-License-Identifier: MIT */
/*
 * check.h - what the MPI test programs share: the failure count, the
 * rank and size (set by the program), and CHECK(cond, fmt, ...), which
 * counts and prints a failed condition with the rank and line.
 */
#ifndef TCMPI_TESTS_CHECK_H
#define TCMPI_TESTS_CHECK_H

#include <stdio.h>

__attribute__((unused)) static int fails, rank, size;

#define CHECK(cond, ...)                                              \
	do {                                                          \
		if (!(cond)) {                                        \
			fails++;                                      \
			printf("rank %d: line %d: ", rank, __LINE__); \
			printf(__VA_ARGS__);                          \
			printf("\n");                                 \
		}                                                     \
	} while (0)

#endif
