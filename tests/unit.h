/* SPDX-License-Identifier: MIT */
/*
 * unit.h - a small in-tree test runner with the subset of cmocka's API that
 * hrt's tests use, so `make test` needs nothing but the C toolchain.
 *
 *   cmocka_unit_test(fn)                          one entry of a test table
 *   cmocka_unit_test_teardown(fn, teardown)       one with a teardown, run
 *                                                 however the test ends
 *   cmocka_set_test_filter(pattern)               run only the tests whose
 *                                                 name matches (fnmatch)
 *   cmocka_run_group_tests(table, setup, teardown) runs it; returns the
 *                                                 number of failed tests,
 *                                                 or 77 if none failed and
 *                                                 some were skipped
 *   assert_true/false, assert_int_equal/not_equal, assert_ptr_equal,
 *   assert_null/non_null, assert_string_equal, assert_memory_equal,
 *   fail(), fail_msg(fmt, ...), skip(), print_message(fmt, ...)
 *
 * A failed assertion prints "FILE:LINE: what, with the values" and ends the
 * test (longjmp back into the runner); the remaining tests still run.  The
 * runner allocates nothing (test_noalloc counts malloc calls).
 *
 * On any other thread (a worker, a loop thread, a callback run there) there
 * is no way back into the runner: a failed assertion prints the same
 * "FILE:LINE: ..." line (the first UNIT_THREAD_LINES of a test), counts the
 * failure in an atomic counter and returns, so the thread goes on as a
 * non-fatal check would.  The test that is running fails when its function
 * returns, after it has joined its threads.  Outside a test (no test
 * running) such a failure exits the program with status 1.  A failure on
 * the runner's thread while the test's own threads still run leaves them
 * running, unjoined: what they use may be gone, so the program may end
 * early after the FILE:LINE line (tests/run.sh counts it failed either way).
 *
 * The 77 follows the project's skip convention (tests/run.sh): a test that
 * cannot run because a package is missing prints
 * "SKIP: <what> (install <package>)" with print_message, then calls skip().
 *
 * One translation unit per test program includes this header; everything
 * in it is static.
 */
#ifndef HRT_TESTS_UNIT_H
#define HRT_TESTS_UNIT_H

#include <inttypes.h>
#include <pthread.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct CMUnitTest {
	const char *name;
	void (*test_func)(void **state);
	int (*setup_func)(void **state);
	int (*teardown_func)(void **state);
	void *initial_state;
};

#define cmocka_unit_test(f) { #f, f, NULL, NULL, NULL }
#define cmocka_unit_test_teardown(f, t) { #f, f, NULL, t, NULL }

#define cmocka_run_group_tests(tests, setup, teardown) \
	unit_run_group(__FILE__, (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown))

#define UNIT_UNUSED __attribute__((unused))

enum { UNIT_FAILED = 1, UNIT_SKIPPED = 2 };

#define UNIT_THREAD_LINES 40

static jmp_buf unit_jmp;
static atomic_int unit_active;   /* a test is running: unit_jmp is valid */
static pthread_t unit_thread;    /* the thread that runs the group */
static volatile int unit_status; /* how the current test left: UNIT_* */
static atomic_int unit_thread_failures; /* failed assertions off the runner */
static const char *unit_filter;  /* cmocka_set_test_filter's pattern */

static UNIT_UNUSED void cmocka_set_test_filter(const char *pattern)
{
	unit_filter = pattern;
}

static UNIT_UNUSED int unit_on_runner(void)
{
	return atomic_load(&unit_active) && pthread_equal(pthread_self(), unit_thread);
}

/* Ends the current test as failed or skipped (status), on the right thread. */
static UNIT_UNUSED void unit_leave(int status)
{
	fflush(stdout);
	if (!unit_on_runner()) {
		if (status == UNIT_SKIPPED)
			fprintf(stderr, "unit: skip() outside the runner's thread\n");
		exit(1);
	}
	unit_status = status;
	longjmp(unit_jmp, 1);
}

/* Returns only on a thread other than the runner's, during a test. */
static UNIT_UNUSED __attribute__((format(printf, 3, 4)))
void unit_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int off_thread = !unit_on_runner() && atomic_load(&unit_active);

	if (off_thread && atomic_fetch_add(&unit_thread_failures, 1) >= UNIT_THREAD_LINES)
		return;
	fflush(stdout);
	flockfile(stderr);
	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", off_thread ? " (on another thread)" : "");
	funlockfile(stderr);
	if (!off_thread)
		unit_leave(UNIT_FAILED);
}

static UNIT_UNUSED __attribute__((format(printf, 1, 2)))
void print_message(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

#define fail() unit_fail(__FILE__, __LINE__, "fail()")
#define fail_msg(...) unit_fail(__FILE__, __LINE__, __VA_ARGS__)
#define skip() unit_leave(UNIT_SKIPPED)

#define assert_true(c) do { if (!(c)) \
	unit_fail(__FILE__, __LINE__, "assert_true(%s) failed", #c); } while (0)
#define assert_false(c) do { if (c) \
	unit_fail(__FILE__, __LINE__, "assert_false(%s) failed", #c); } while (0)

/* Integers compare as uintmax_t, as cmocka does; printed signed and in hex. */
#define UNIT_INT_CMP(a, b, as, bs, want_equal, op) do { \
	uintmax_t unit_a_ = (uintmax_t)(a), unit_b_ = (uintmax_t)(b); \
	if ((unit_a_ == unit_b_) != (want_equal)) \
		unit_fail(__FILE__, __LINE__, "%s " op " %s: %" PRIdMAX " (%#" PRIxMAX \
			  ") vs %" PRIdMAX " (%#" PRIxMAX ")", as, bs, (intmax_t)unit_a_, \
			  unit_a_, (intmax_t)unit_b_, unit_b_); \
} while (0)
#define assert_int_equal(a, b) UNIT_INT_CMP(a, b, #a, #b, 1, "==")
#define assert_int_not_equal(a, b) UNIT_INT_CMP(a, b, #a, #b, 0, "!=")

#define assert_ptr_equal(a, b) do { \
	const void *unit_a_ = (const void *)(a), *unit_b_ = (const void *)(b); \
	if (unit_a_ != unit_b_) \
		unit_fail(__FILE__, __LINE__, "%s == %s: %p vs %p", #a, #b, unit_a_, unit_b_); \
} while (0)
#define assert_null(p) do { const void *unit_p_ = (const void *)(p); if (unit_p_) \
	unit_fail(__FILE__, __LINE__, "assert_null(%s): %p", #p, unit_p_); } while (0)
#define assert_non_null(p) do { if (!(p)) \
	unit_fail(__FILE__, __LINE__, "assert_non_null(%s) failed", #p); } while (0)

#define assert_string_equal(a, b) do { \
	const char *unit_a_ = (a), *unit_b_ = (b); \
	if (!unit_a_ || !unit_b_ || strcmp(unit_a_, unit_b_) != 0) \
		unit_fail(__FILE__, __LINE__, "%s == %s: \"%s\" vs \"%s\"", #a, #b, \
			  unit_a_ ? unit_a_ : "(null)", unit_b_ ? unit_b_ : "(null)"); \
} while (0)

#define assert_memory_equal(a, b, n) \
	unit_memory_equal(__FILE__, __LINE__, #a, #b, (a), (b), (n))

static UNIT_UNUSED void unit_memory_equal(const char *file, int line, const char *an,
					  const char *bn, const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	size_t i, diff = 0, first = n;

	for (i = 0; i < n; i++)
		if (x[i] != y[i]) {
			if (first == n)
				first = i;
			diff++;
		}
	if (diff)
		unit_fail(file, line, "%s == %s (%zu bytes): %zu differ, first at %zu: %#04x vs %#04x",
			  an, bn, n, diff, first, x[first], y[first]);
}

/* Runs one test (its setup, the test, its teardown); returns its UNIT_*.
 * Kept apart so no counter of the group lives across the setjmp. */
static UNIT_UNUSED int unit_run_one(const char *group, const struct CMUnitTest *t,
				    void *group_state)
{
	/* volatile: read after a longjmp */
	void *volatile state = t->initial_state ? t->initial_state : group_state;
	int status;

	atomic_store(&unit_thread_failures, 0);
	unit_status = 0;
	atomic_store(&unit_active, 1);
	if (setjmp(unit_jmp) == 0) {
		void *s = state;

		if (t->setup_func && t->setup_func(&s) != 0)
			unit_fail(group, 0, "setup of %s failed", t->name);
		state = s;
		t->test_func(&s);
		state = s;
	}
	atomic_store(&unit_active, 0);
	status = unit_status;
	if (status != UNIT_FAILED && atomic_load(&unit_thread_failures) > 0) {
		fprintf(stderr, "%s: %s: %d failed assertion(s) on other threads\n", group,
			t->name, atomic_load(&unit_thread_failures));
		status = UNIT_FAILED;
	}
	if (t->teardown_func) {
		void *s = state;

		if (t->teardown_func(&s) != 0 && status == 0) {
			fprintf(stderr, "%s: teardown of %s failed\n", group, t->name);
			status = UNIT_FAILED;
		}
	}
	return status;
}

/* Runs a table; prints a line per test and a summary; returns the failures. */
static UNIT_UNUSED int unit_run_group(const char *file, const struct CMUnitTest *t, size_t n,
				      int (*setup)(void **), int (*teardown)(void **))
{
	const char *group = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	void *group_state = NULL;
	size_t i, pass = 0, failed = 0, skipped = 0, filtered = 0;

	unit_thread = pthread_self();
	printf("[==========] %s: running %zu test(s)\n", group, n);
	if (setup && setup(&group_state) != 0) {
		printf("[  FAILED  ] %s: group setup failed; %zu test(s) not run\n", group, n);
		return (int)n;
	}
	for (i = 0; i < n; i++) {
		int status;

		if (unit_filter && fnmatch(unit_filter, t[i].name, 0) != 0) {
			filtered++;
			continue;
		}
		printf("[ RUN      ] %s\n", t[i].name);
		fflush(stdout);
		status = unit_run_one(group, &t[i], group_state);
		if (status == UNIT_FAILED) {
			failed++;
			printf("[  FAILED  ] %s\n", t[i].name);
		} else if (status == UNIT_SKIPPED) {
			skipped++;
			printf("[  SKIPPED ] %s\n", t[i].name);
		} else {
			pass++;
			printf("[       OK ] %s\n", t[i].name);
		}
		fflush(stdout);
	}
	if (teardown && teardown(&group_state) != 0) {
		printf("[  FAILED  ] %s: group teardown failed\n", group);
		failed++;
	}
	printf("[==========] %s: %zu passed, %zu failed, %zu skipped", group, pass, failed,
	       skipped);
	if (filtered)
		printf(", %zu not matching %s", filtered, unit_filter);
	printf("\n");
	fflush(stdout);
	if (failed == 0 && skipped > 0)
		return 77;
	return (int)failed;
}

/*
 * Randomized tests: a seed and a step count from the command line
 * ("PROG [SEED [STEPS]]"), a splitmix64 generator, and the line that
 * replays a failure.  The test sets unit_rng_state from unit_seed when it
 * starts and keeps unit_step current, so a failure says where it stopped.
 */
static UNIT_UNUSED unsigned long long unit_seed = 1;
static UNIT_UNUSED long unit_steps, unit_step;
static UNIT_UNUSED uint64_t unit_rng_state;

static UNIT_UNUSED uint64_t unit_rng(void)
{
	uint64_t z = (unit_rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define cmocka_run_seeded_tests(tests, argc, argv, default_steps) \
	unit_run_seeded(__FILE__, (tests), sizeof(tests) / sizeof((tests)[0]), (argc), (argv), \
			(default_steps))

static UNIT_UNUSED int unit_run_seeded(const char *file, const struct CMUnitTest *t, size_t n,
				       int argc, char **argv, long default_steps)
{
	int failed;

	unit_steps = default_steps;
	if (argc > 1)
		unit_seed = strtoull(argv[1], NULL, 0);
	if (argc > 2)
		unit_steps = strtol(argv[2], NULL, 0);
	printf("%s seed %llu, %ld steps\n", argv[0], unit_seed, unit_steps);
	failed = unit_run_group(file, t, n, NULL, NULL);
	if (failed && failed != 77)
		printf("replay: %s %llu %ld (stopped at step %ld)\n", argv[0], unit_seed,
		       unit_steps, unit_step);
	return failed;
}

#endif
