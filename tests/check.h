/* SPDX-License-Identifier: MIT */
/*
 * check.h - the non-fatal CHECK macros of the tests that are not cmocka
 * programs (they run threads, loops and seams, and report every failed
 * check before exiting non-zero).  Each failure prints file:line and counts
 * in `failures`; main returns failures ? 1 : 0.
 */
#ifndef HRT_TEST_CHECK_H
#define HRT_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,     \
				__LINE__, #c);                                     \
			failures++;                                                \
		}                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                             \
	do {                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                \
		if (a_ != b_) {                                                    \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
				__FILE__, __LINE__, #a, #b, a_, b_);               \
			failures++;                                                \
		}                                                                  \
	} while (0)

#endif
