/* SPDX-License-Identifier: MIT */
/*
 * test_noalloc.c - no timer operation allocates: only hrt_base_new does.
 * Linked with -Wl,--wrap for every allocator entry point, so each call the
 * (statically linked) library makes is counted here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"

static long allocs;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__real_aligned_alloc(size_t a, size_t n);
int __real_posix_memalign(void **p, size_t a, size_t n);

void *__wrap_malloc(size_t n) { allocs++; return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { allocs++; return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { allocs++; return __real_realloc(p, n); }
void __wrap_free(void *p) { __real_free(p); }
void *__wrap_aligned_alloc(size_t a, size_t n) { allocs++; return __real_aligned_alloc(a, n); }
int __wrap_posix_memalign(void **p, size_t a, size_t n) { allocs++; return __real_posix_memalign(p, a, n); }

enum { NT = 100000 };
static struct hrt_timer *timers;
static struct hrt_base *base;

static enum hrt_restart cb(struct hrt_timer *t, hrt_time_t now)
{
	long i = t - timers;

	/* Callbacks start and cancel others, and restart themselves. */
	hrt_timer_start_range(&timers[(i * 7 + 1) % NT], base, 50, 10, HRT_MODE_REL);
	hrt_timer_cancel(&timers[(i * 13 + 5) % NT]);
	hrt_timer_forward(t, now, 1000);
	return i % 3 ? HRT_RESTART : HRT_NORESTART;
}

static void test_no_allocation(void **s)
{
	long before;
	hrt_time_t now = 0;

	(void)s;
	timers = __real_calloc(NT, sizeof(*timers));    /* the test's own memory */
	before = allocs;
	base = tv_virtual(0);
	assert_non_null(base);
	assert_true(allocs - before >= 1);             /* the counter works */
	before = allocs;
	for (int i = 0; i < NT; i++) {
		hrt_timer_init(&timers[i], cb);
		hrt_timer_start_range(&timers[i], base, (i * 7919) % 100000, i % 500, HRT_MODE_ABS);
	}
	for (int i = 0; i < NT; i += 3)
		hrt_timer_start_range(&timers[i], base, (i * 31) % 100000, 100, HRT_MODE_ABS);
	for (int i = 0; i < NT; i += 5)
		hrt_timer_cancel(&timers[i]);
	for (int p = 0; p < 60; p++) {
		now += 500;
		hrt_base_set_greedy(base, (enum hrt_greedy)(p % 3));
		hrt_base_run(base, now, p & 1);
	}
	for (int i = 0; i < NT; i++)
		hrt_timer_try_cancel(&timers[i]);
	assert_int_equal(allocs - before, 0);
	assert_int_equal(hrt_base_count(base), 0);
	hrt_base_free(base);
	__real_free(timers);
	printf("%d timers: no allocation after hrt_base_new\n", NT);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_no_allocation) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
