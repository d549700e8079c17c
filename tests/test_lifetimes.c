/* SPDX-License-Identifier: MIT */
/*
 * test_lifetimes.c - hrt.h's "A timer that is not queued" (since 1.3): a
 * cancel, try_cancel, is_queued or is_running of a timer that is neither
 * queued nor running - never started, cancelled, run with HRT_NORESTART,
 * cancelled by its own callback - answers from the timer alone, also
 * after its base was freed; and a cancel from another thread returns only
 * once the callback is over, whether it found the timer queued, running
 * or done.
 *  - After hrt_base_free: on a61a9b3 the cancel read the freed base (a
 *    heap-use-after-free under ASan, `make test SANITIZE=1`); the test of
 *    a reused address sees it in a plain build too: the base's memory,
 *    allocated again and overwritten, made it follow garbage (SIGSEGV).
 *  - Another thread's cancel or query of an idle timer of an unlocked
 *    base: 0, reading nothing (a61a9b3: -EPERM); of a queued one, -EPERM.
 *  - Threads: a pass thread runs callbacks that restart or end, the main
 *    thread cancels and starts again; after each cancel the callback is
 *    not inside and the timer is neither queued nor running.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"
#include "base_priv.h"      /* sizeof(struct hrt_base): its memory reused */

static int ran;

static enum hrt_restart once(struct hrt_timer *t, hrt_time_t now)
{
	(void)t, (void)now;
	ran++;
	return HRT_NORESTART;
}

/* A close from the callback: cancel itself, return HRT_RESTART (void). */
static enum hrt_restart close_self(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	ran++;
	assert_int_equal(hrt_timer_cancel(t), 0);
	return HRT_RESTART;
}

/* The four kinds of base a timer's state word can name: locked and
 * unlocked, virtual and real, and a real CLOCK_REALTIME base's second set
 * (its relative timers). */
struct kind {
	const char *name;
	clockid_t clock;
	unsigned flags;
};

static const struct kind kinds[] = {
	{ "virtual", CLOCK_MONOTONIC, HRT_BASE_VIRTUAL },
	{ "virtual unlocked", CLOCK_MONOTONIC, HRT_BASE_VIRTUAL | HRT_BASE_UNLOCKED },
	{ "monotonic", CLOCK_MONOTONIC, 0 },
	{ "realtime, relative", CLOCK_REALTIME, 0 },
	{ "realtime unlocked", CLOCK_REALTIME, HRT_BASE_UNLOCKED },
};

/* Every way a timer ends up idle, each on a base then freed: the calls
 * that may be made on such a timer answer 0. */
static void test_idle_timer_of_a_freed_base_answers_without_it(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct hrt_timer never, stopped, done, closed, self;
		struct hrt_timer *idle[] = { &never, &stopped, &done, &closed, &self };
		struct hrt_base *b = tv_new(kinds[k].clock, kinds[k].flags);
		hrt_time_t now;

		assert_non_null(b);
		assert_int_equal(hrt_timer_init(&never, once), 0);
		assert_int_equal(hrt_timer_init(&stopped, once), 0);
		assert_int_equal(hrt_timer_init(&done, once), 0);
		assert_int_equal(hrt_timer_init(&closed, close_self), 0);
		assert_int_equal(hrt_timer_init(&self, once), 0);
		/* stopped: started, cancelled; done: run with HRT_NORESTART;
		 * closed: cancelled itself in its callback; self: cancelled
		 * twice (the second finds it idle). */
		assert_int_equal(hrt_timer_start(&stopped, b, 1000000000, HRT_MODE_REL), 0);
		assert_int_equal(hrt_timer_cancel(&stopped), 1);
		assert_int_equal(hrt_timer_start(&done, b, 0, HRT_MODE_REL), 0);
		assert_int_equal(hrt_timer_start(&closed, b, 0, HRT_MODE_REL), 0);
		assert_int_equal(hrt_timer_start(&self, b, 5000, HRT_MODE_REL), 0);
		assert_int_equal(hrt_timer_try_cancel(&self), 1);
		assert_int_equal(hrt_timer_cancel(&self), 0);
		ran = 0;
		now = tv_now(b);        /* a real clock moved since they started */
		assert_int_equal(hrt_base_run(b, now, 1), 2);
		assert_int_equal(ran, 2);
		assert_int_equal(hrt_base_count(b), 0);
		assert_int_equal(hrt_base_free(b), 0);
		for (size_t i = 0; i < sizeof(idle) / sizeof(idle[0]); i++) {
			assert_int_equal(hrt_timer_cancel(idle[i]), 0);
			assert_int_equal(hrt_timer_try_cancel(idle[i]), 0);
			assert_int_equal(hrt_timer_is_queued(idle[i]), 0);
			assert_int_equal(hrt_timer_is_running(idle[i]), 0);
			/* and made new, as hrt.h says before any other call */
			assert_int_equal(hrt_timer_init(idle[i], once), 0);
		}
		print_message("  %s: 5 idle timers answered after hrt_base_free\n", kinds[k].name);
	}
}

/* The base's memory, once freed, taken by the next allocation of its
 * size and filled with a pattern: a call that reads the base follows
 * 0xa5a5... pointers (SIGSEGV).  A cancel of an idle timer reads nothing
 * of it.  Under ASan the memory is not reused (quarantine): then ASan
 * would report the read. */
static void test_idle_cancel_reads_no_base_at_a_reused_address(void **state)
{
	int reused = 0;

	(void)state;
	for (int tries = 0; tries < 8 && !reused; tries++) {
		struct hrt_base *b = tv_virtual(0);
		struct hrt_timer t;
		void *p;

		assert_non_null(b);
		assert_int_equal(hrt_timer_init(&t, once), 0);
		assert_int_equal(hrt_timer_start(&t, b, 100, HRT_MODE_ABS), 0);
		assert_int_equal(hrt_timer_cancel(&t), 1);
		assert_int_equal(hrt_base_free(b), 0);
		p = aligned_alloc(_Alignof(struct hrt_base), sizeof(struct hrt_base));
		assert_non_null(p);
		reused = p == (void *)b;
		memset(p, 0xa5, sizeof(struct hrt_base));
		assert_int_equal(hrt_timer_cancel(&t), 0);
		assert_int_equal(hrt_timer_try_cancel(&t), 0);
		assert_int_equal(hrt_timer_is_queued(&t), 0);
		assert_int_equal(hrt_timer_is_running(&t), 0);
		free(p);
	}
	print_message("  the freed base's address %s\n",
		      reused ? "was reused and overwritten" :
		      "was not reused (the allocator's choice, ASan's quarantine)");
}

/* hrt.h (HRT_BASE_UNLOCKED, hrt_timer_cancel): another thread's cancel or
 * query of a timer that was cancelled answers 0 and reads nothing of the
 * base; of a queued one, or one that ran while its base lives (the base
 * is asked), it is refused, -EPERM, as before. */
static struct hrt_timer fidle, fqueued, fran;
static int foreign_res[8];

static void *foreign_thread(void *arg)
{
	(void)arg;
	foreign_res[0] = hrt_timer_cancel(&fidle);
	foreign_res[1] = hrt_timer_try_cancel(&fidle);
	foreign_res[2] = hrt_timer_is_queued(&fidle);
	foreign_res[3] = hrt_timer_is_running(&fidle);
	foreign_res[4] = hrt_timer_cancel(&fqueued);
	foreign_res[5] = hrt_timer_is_queued(&fqueued);
	foreign_res[6] = hrt_timer_cancel(&fran);
	foreign_res[7] = hrt_timer_is_queued(&fran);
	return NULL;
}

static void test_idle_timer_of_another_threads_unlocked_base_answers_zero(void **state)
{
	struct hrt_base *ub = tv_virtual(HRT_BASE_UNLOCKED);
	pthread_t th;

	(void)state;
	assert_non_null(ub);
	assert_int_equal(hrt_timer_init(&fidle, once), 0);
	assert_int_equal(hrt_timer_init(&fqueued, once), 0);
	assert_int_equal(hrt_timer_start(&fidle, ub, 10, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_timer_cancel(&fidle), 1);
	assert_int_equal(hrt_timer_start(&fqueued, ub, 20, HRT_MODE_ABS), 0);
	/* Ran with HRT_NORESTART: its base, alive, is asked (running.h). */
	assert_int_equal(hrt_timer_init(&fran, once), 0);
	assert_int_equal(hrt_timer_start(&fran, ub, 5, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_run(ub, 5, 0), 1);
	assert_int_equal(pthread_create(&th, NULL, foreign_thread, NULL), 0);
	pthread_join(th, NULL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(foreign_res[i], 0);
	assert_int_equal(foreign_res[4], -EPERM);
	assert_int_equal(foreign_res[5], -EPERM);
	/* One that ran: its live base answers, as for a queued one; its
	 * state word says it is not queued, which needs no base. */
	assert_int_equal(foreign_res[6], -EPERM);
	assert_int_equal(foreign_res[7], 0);
	assert_int_equal(hrt_timer_cancel(&fran), 0);           /* the owner's: idle */
	assert_int_equal(hrt_timer_is_queued(&fqueued), 1);     /* untouched */
	assert_int_equal(hrt_timer_cancel(&fqueued), 1);
	assert_int_equal(hrt_base_free(ub), 0);
}

/* Threads: callbacks that restart (a period) or end, on a pass thread;
 * cancels from the main thread. */
#define N_TIMERS 4
static struct hrt_base *tb;
static struct hrt_repeat rt[N_TIMERS];
static atomic_int inside[N_TIMERS];
static atomic_int stop_passes;
static atomic_long calls;

static enum hrt_restart busy(struct hrt_timer *t, hrt_time_t now)
{
	int i = (int)(HRT_CONTAINER_OF(t, struct hrt_repeat, timer) - rt);

	(void)now;
	atomic_store(&inside[i], 1);
	for (volatile int spin = 0; spin < 200; spin++)
		;
	atomic_fetch_add(&calls, 1);
	atomic_store(&inside[i], 0);
	return i % 2 ? HRT_RESTART : HRT_NORESTART;
}

static void *passes(void *arg)
{
	hrt_time_t now = 0;

	(void)arg;
	while (!atomic_load(&stop_passes))
		hrt_base_run(tb, now += 1, 1);
	return NULL;
}

static void test_cancel_from_another_thread_returns_after_the_callback(void **state)
{
	long rounds = 0, was_queued = 0;
	pthread_t th;

	(void)state;
	tb = tv_virtual(0);
	assert_non_null(tb);
	for (int i = 0; i < N_TIMERS; i++) {
		assert_int_equal(hrt_repeat_init(&rt[i], busy), 0);
		assert_int_equal(hrt_repeat_start(&rt[i], tb, 1, 1, 0, HRT_MODE_REL), 0);
	}
	atomic_store(&stop_passes, 0);
	assert_int_equal(pthread_create(&th, NULL, passes, NULL), 0);
	/* Until the passes ran enough callbacks too (the pass thread may
	 * start late), within a bound. */
	for (; rounds < 20000 || (atomic_load(&calls) < 2000 && rounds < 5000000); rounds++) {
		int i = (int)(rounds % N_TIMERS), r = hrt_timer_cancel(&rt[i].timer);

		assert_true(r == 0 || r == 1);
		was_queued += r;
		assert_int_equal(atomic_load(&inside[i]), 0);
		assert_int_equal(hrt_timer_is_queued(&rt[i].timer), 0);
		assert_int_equal(hrt_timer_is_running(&rt[i].timer), 0);
		assert_int_equal(hrt_repeat_again(&rt[i]), 0);
	}
	atomic_store(&stop_passes, 1);
	pthread_join(th, NULL);
	print_message("  %ld cancels (%ld found it queued), %ld callbacks\n", rounds, was_queued,
		      atomic_load(&calls));
	assert_true(atomic_load(&calls) >= 2000);
	for (int i = 0; i < N_TIMERS; i++)
		hrt_timer_cancel(&rt[i].timer);
	assert_int_equal(hrt_base_free(tb), 0);
	for (int i = 0; i < N_TIMERS; i++)
		assert_int_equal(hrt_timer_cancel(&rt[i].timer), 0);
}

/* test_lifetimes [PATTERN]: all tests, or those matching PATTERN. */
int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_timer_of_a_freed_base_answers_without_it),
		cmocka_unit_test(test_idle_cancel_reads_no_base_at_a_reused_address),
		cmocka_unit_test(test_idle_timer_of_another_threads_unlocked_base_answers_zero),
		cmocka_unit_test(test_cancel_from_another_thread_returns_after_the_callback),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
