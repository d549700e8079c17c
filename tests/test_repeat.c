/* SPDX-License-Identifier: MIT */
/*
 * test_repeat.c - struct hrt_repeat (hrt.h) and the self-cancel rule, on
 * virtual bases whose passes run at chosen instants:
 *  - a periodic range timer runs once per period, at soft = first + k *
 *    interval exactly (no drift, whatever instant in its window the pass
 *    ran it), never twice in one window, the periods it could not run in
 *    skipped; HRT_NORESTART ends it; windows 0 to 100 % of the period and
 *    wider;
 *  - hrt_repeat_again re-arms with the last delay and window, from the
 *    base's now, without the base or the numbers; keeps the period;
 *    -ENOENT before any start; a relative and an absolute start;
 *  - a callback that cancels its own timer (a close) and returns
 *    HRT_RESTART is not restarted, and the library touches the timer no
 *    more (the struct is freed in the callback: ASan sees a use after
 *    free if it does); on d4ebe1c it was re-queued inside freed memory;
 *  - hrt_repeat_periods (since 1.3): in the callback, the periods since
 *    its last run, which the restart then skips; outside it, at any now;
 *    once, saturated, refused for a plain timer;
 *  - hrt_repeat_again on a periodic timer moves its grid to now + delay;
 *    an interval-0 repeat that restarts runs in each next pass, never
 *    twice in one;
 *  - bad arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"

#define MS 1000000LL

struct rec {
	struct hrt_repeat r;
	long runs;
	hrt_time_t soft[64], now[64];   /* the soft expiry each run had, and its pass */
	int stop_after;                 /* HRT_NORESTART on this run (0: never) */
};

static enum hrt_restart record(struct hrt_timer *t, hrt_time_t now)
{
	struct rec *c = HRT_CONTAINER_OF(HRT_CONTAINER_OF(t, struct hrt_repeat, timer), struct rec, r);

	if (c->runs < 64) {
		c->soft[c->runs] = tv_soft(t);
		c->now[c->runs] = now;
	}
	c->runs++;
	return c->stop_after && c->runs >= c->stop_after ? HRT_NORESTART : HRT_RESTART;
}

/* Passes at random instants: each run's soft expiry is first + k * iv for
 * a k above the last run's, the pass inside [soft, ...), and no two runs
 * in one window (a later run's soft is after the earlier run's pass). */
static void test_periodic_runs_once_per_period_without_drift(void **state)
{
	static const hrt_time_t windows_pct[] = { 0, 1, 10, 50, 100, 250 };

	(void)state;
	unit_rng_state = 7;
	for (unsigned w = 0; w < sizeof(windows_pct) / sizeof(windows_pct[0]); w++) {
		struct hrt_base *b = tv_virtual(0);
		struct rec c = { 0 };
		const hrt_time_t first = 5 * MS, iv = 10 * MS, win = iv * windows_pct[w] / 100;
		hrt_time_t now = 0, k_last = -1;

		assert_int_equal(hrt_repeat_init(&c.r, record), 0);
		assert_int_equal(hrt_repeat_start(&c.r, b, first, iv, win, HRT_MODE_REL), 0);
		assert_int_equal(tv_soft(&c.r.timer), first);
		assert_int_equal(tv_hard(&c.r.timer), first + win);
		while (c.runs < 60 && now < 100000 * MS) {
			now += (hrt_time_t)(unit_rng() % (uint64_t)(3 * iv));  /* skips periods too */
			assert_true(hrt_base_run(b, now, unit_rng() % 2) >= 0);
		}
		for (long i = 0; i < c.runs && i < 64; i++) {
			hrt_time_t k = (c.soft[i] - first) / iv;

			assert_int_equal(c.soft[i], first + k * iv);    /* no drift */
			assert_true(k > k_last);                        /* once per period */
			assert_true(c.now[i] >= c.soft[i]);
			if (i > 0)      /* never twice in one window: after the last pass */
				assert_true(c.soft[i] > c.now[i - 1]);
			k_last = k;
		}
		print_message("  window %3lld %% of the period: %ld runs, periods 0..%lld\n",
			      (long long)windows_pct[w], c.runs, (long long)k_last);
		assert_true(c.runs >= 20);
		assert_true(hrt_timer_is_queued(&c.r.timer) == 1);
		assert_int_equal(hrt_timer_cancel(&c.r.timer), 1);
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* HRT_NORESTART ends it; an exact pass at each soft expiry gives runs at
 * exactly first, first + iv, ... */
static void test_periodic_ends_on_norestart_runs_on_the_grid(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	struct rec c = { 0 };

	(void)state;
	assert_int_equal(hrt_repeat_init(&c.r, record), 0);
	c.stop_after = 4;
	assert_int_equal(hrt_repeat_start(&c.r, b, 100, 50, 5, HRT_MODE_ABS), 0);
	for (hrt_time_t t = 100; t <= 400; t += 50)
		assert_true(hrt_base_run(b, t, 1) >= 0);
	assert_int_equal(c.runs, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(c.now[i], 100 + 50 * i);
	assert_int_equal(hrt_timer_is_queued(&c.r.timer), 0);
	assert_int_equal(hrt_base_free(b), 0);
}

/* again: the last start's delay and window from the base's now. */
static void test_again_rearms_with_last_delay_and_window(void **state)
{
	struct hrt_base *b = tv_virtual(0), *b2 = tv_virtual(0);
	struct rec c = { 0 };

	(void)state;
	assert_int_equal(hrt_repeat_init(&c.r, record), 0);
	assert_int_equal(hrt_repeat_again(&c.r), -ENOENT);     /* never started */
	assert_int_equal(hrt_repeat_start(&c.r, b, 10 * MS, 0, MS, HRT_MODE_REL), 0);
	assert_int_equal(hrt_base_set_time(b, 3 * MS), 0);
	assert_int_equal(hrt_repeat_again(&c.r), 0);           /* pushed on: 13..14 ms */
	assert_int_equal(tv_soft(&c.r.timer), 13 * MS);
	assert_int_equal(tv_hard(&c.r.timer), 14 * MS);
	assert_int_equal(hrt_base_run(b, 13 * MS, 1), 1);      /* once: interval 0 */
	assert_int_equal(c.runs, 1);
	assert_int_equal(hrt_timer_is_queued(&c.r.timer), 1);  /* HRT_RESTART: where it was */
	assert_int_equal(hrt_timer_cancel(&c.r.timer), 1);
	assert_int_equal(hrt_repeat_again(&c.r), 0);           /* 23..24 ms */
	assert_int_equal(tv_soft(&c.r.timer), 23 * MS);
	/* An absolute start: its delay from the base's now then. */
	assert_int_equal(hrt_repeat_start(&c.r, b, 50 * MS, 0, 2 * MS, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_set_time(b, 20 * MS), 0);
	assert_int_equal(hrt_repeat_again(&c.r), 0);           /* delay 37 ms from 13 */
	assert_int_equal(tv_soft(&c.r.timer), 57 * MS);
	assert_int_equal(tv_hard(&c.r.timer), 59 * MS);
	/* An instant more than INT64_MAX before now: the delay saturates, and
	 * again stays in the past (due at once), not at the end of time. */
	assert_int_equal(hrt_repeat_start(&c.r, b, INT64_MIN + 5, 0, 0, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_repeat_again(&c.r), 0);
	assert_true(tv_soft(&c.r.timer) < 0);
	/* The base it was last started on, and the period kept. */
	assert_int_equal(hrt_repeat_start(&c.r, b2, MS, 5 * MS, 0, HRT_MODE_REL), 0);
	assert_int_equal(hrt_repeat_again(&c.r), 0);
	assert_ptr_equal(tv_base(&c.r.timer), b2);
	assert_int_equal(hrt_base_run(b2, MS, 1), 1);
	assert_int_equal(tv_soft(&c.r.timer), 6 * MS);         /* the period: periodic */
	assert_int_equal(hrt_timer_cancel(&c.r.timer), 1);
	assert_int_equal(hrt_base_free(b), 0);
	assert_int_equal(hrt_base_free(b2), 0);
}

/* hrt_repeat_periods in the callback: the periods since the last run, the
 * number the restart then skips (since 1.3). */
struct counted {
	struct hrt_repeat r;
	long runs;
	int64_t periods[8];             /* hrt_repeat_periods(r, now) per run */
	hrt_time_t soft[8];             /* the soft expiry each run had */
};

static enum hrt_restart count_periods(struct hrt_timer *t, hrt_time_t now)
{
	struct hrt_repeat *r = HRT_CONTAINER_OF(t, struct hrt_repeat, timer);
	struct counted *c = HRT_CONTAINER_OF(r, struct counted, r);

	if (c->runs < 8) {
		c->periods[c->runs] = hrt_repeat_periods(r, now);
		c->soft[c->runs] = tv_soft(t);
	}
	c->runs++;
	return HRT_RESTART;
}

static void test_periods_tell_the_callback_how_many_elapsed(void **state)
{
	/* Grid 5, 15, 25, ... ms, windows of 1 ms; passes at these instants. */
	static const hrt_time_t at[] = { 5, 15, 47, 48, 55, 126 };
	static const int64_t want[] = { 1, 1, 3, 0, 1, 7 };     /* 0: no run */
	struct hrt_base *b = tv_virtual(0);
	struct counted c = { 0 };
	long run = 0;

	(void)state;
	assert_int_equal(hrt_repeat_init(&c.r, count_periods), 0);
	assert_int_equal(hrt_repeat_periods(&c.r, 0), -ENOENT);        /* never started */
	assert_int_equal(hrt_repeat_start(&c.r, b, 5 * MS, 10 * MS, MS, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_repeat_periods(&c.r, 4 * MS), 0);         /* none due yet */
	assert_int_equal(hrt_repeat_periods(&c.r, 5 * MS), 1);
	assert_int_equal(hrt_repeat_periods(&c.r, 25 * MS), 3);        /* outside: any now */
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		hrt_time_t before = tv_soft(&c.r.timer);

		assert_int_equal(hrt_base_run(b, at[i] * MS, 1), want[i] > 0);
		if (!want[i])
			continue;
		assert_int_equal(c.periods[run], want[i]);
		assert_int_equal(c.soft[run], before);
		/* The restart skipped exactly those periods. */
		assert_int_equal(tv_soft(&c.r.timer), before + want[i] * 10 * MS);
		run++;
	}
	assert_int_equal(c.runs, run);
	assert_int_equal(hrt_timer_cancel(&c.r.timer), 1);
	/* Once (interval 0): 1 when due, else 0. */
	assert_int_equal(hrt_repeat_start(&c.r, b, 200 * MS, 0, 0, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_repeat_periods(&c.r, 199 * MS), 0);
	assert_int_equal(hrt_repeat_periods(&c.r, 900 * MS), 1);
	assert_int_equal(hrt_timer_cancel(&c.r.timer), 1);
	/* The end of time: saturated, never wrapped. */
	assert_int_equal(hrt_repeat_start(&c.r, b, INT64_MIN + 1, 1, 0, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_repeat_periods(&c.r, HRT_TIME_MAX), INT64_MAX);
	assert_int_equal(hrt_timer_cancel(&c.r.timer), 1);
	/* Bad arguments: NULL; a struct hrt_repeat whose timer hrt_timer_init
	 * made plain (its interval word means nothing). */
	assert_int_equal(hrt_repeat_periods(NULL, 0), -EINVAL);
	assert_int_equal(hrt_timer_init(&c.r.timer, record), 0);
	assert_int_equal(hrt_repeat_periods(&c.r, 0), -EINVAL);
	assert_int_equal(hrt_base_free(b), 0);
}

/* hrt.h: hrt_repeat_again moves a periodic timer's grid to now + delay;
 * the periods after it follow from there, the first start's grid
 * forgotten. */
static void test_again_moves_a_periodic_grid_to_now_plus_delay(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	struct counted c = { 0 };

	(void)state;
	assert_int_equal(hrt_repeat_init(&c.r, count_periods), 0);
	/* delay 5 ms, period 10 ms: grid 5, 15, 25, ... */
	assert_int_equal(hrt_repeat_start(&c.r, b, 5 * MS, 10 * MS, MS, HRT_MODE_REL), 0);
	assert_int_equal(hrt_base_run(b, 5 * MS, 1), 1);
	assert_int_equal(tv_soft(&c.r.timer), 15 * MS);
	assert_int_equal(hrt_base_set_time(b, 12 * MS), 0);
	assert_int_equal(hrt_repeat_again(&c.r), 0);            /* now 12 + delay 5 */
	assert_int_equal(tv_soft(&c.r.timer), 17 * MS);
	assert_int_equal(tv_hard(&c.r.timer), 18 * MS);
	assert_int_equal(hrt_base_run(b, 15 * MS, 1), 0);       /* the old grid: nothing */
	assert_int_equal(hrt_base_run(b, 17 * MS, 1), 1);
	assert_int_equal(tv_soft(&c.r.timer), 27 * MS);         /* 17 + 10, not 25 */
	assert_int_equal(hrt_base_run(b, 58 * MS, 1), 1);       /* 27, 37, 47, 57 due */
	assert_int_equal(c.periods[2], 4);
	assert_int_equal(tv_soft(&c.r.timer), 67 * MS);
	assert_int_equal(hrt_timer_cancel(&c.r.timer), 1);
	assert_int_equal(hrt_base_free(b), 0);
}

/* hrt.h: an interval-0 repeat that returns HRT_RESTART stays where it is,
 * due, and runs again in the next pass - never twice in one (GCD's and
 * libuv's one-shot timers cannot ask for more). */
static void test_interval_zero_restart_runs_in_each_next_pass(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	struct counted c = { 0 };

	(void)state;
	assert_int_equal(hrt_repeat_init(&c.r, count_periods), 0);
	assert_int_equal(hrt_repeat_start(&c.r, b, 10, 0, 5, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_run(b, 10, 1), 1);
	assert_int_equal(hrt_timer_is_queued(&c.r.timer), 1);
	assert_int_equal(tv_soft(&c.r.timer), 10);              /* where it was */
	assert_int_equal(hrt_base_run(b, 10, 1), 1);            /* the next pass, same now */
	assert_int_equal(hrt_base_run(b, 11, 0), 1);
	assert_int_equal(c.runs, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(c.periods[i], 1);
	assert_int_equal(hrt_timer_cancel(&c.r.timer), 1);
	assert_int_equal(hrt_base_free(b), 0);
}

static void test_repeat_bad_arguments(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	struct rec c = { 0 };

	(void)state;
	assert_int_equal(hrt_repeat_init(NULL, record), -EINVAL);
	assert_int_equal(hrt_repeat_init(&c.r, NULL), -EINVAL);
	assert_int_equal(hrt_repeat_init(&c.r, record), 0);
	assert_int_equal(hrt_repeat_start(NULL, b, 1, 1, 0, HRT_MODE_REL), -EINVAL);
	assert_int_equal(hrt_repeat_start(&c.r, NULL, 1, 1, 0, HRT_MODE_REL), -EINVAL);
	assert_int_equal(hrt_repeat_start(&c.r, b, 1, -1, 0, HRT_MODE_REL), -EINVAL);
	assert_int_equal(hrt_repeat_start(&c.r, b, 1, 1, -1, HRT_MODE_REL), -EINVAL);
	assert_int_equal(hrt_repeat_start(&c.r, b, 1, 1, 0, (enum hrt_mode)7), -EINVAL);
	assert_int_equal(hrt_repeat_again(NULL), -EINVAL);
	assert_int_equal(hrt_timer_is_queued(&c.r.timer), 0);  /* refused: nothing queued */
	assert_int_equal(hrt_repeat_again(&c.r), -ENOENT);
	/* A refused start keeps what the last one left (again's numbers). */
	assert_int_equal(hrt_repeat_start(&c.r, b, 10 * MS, 0, MS, HRT_MODE_REL), 0);
	assert_int_equal(hrt_repeat_start(&c.r, b, 20 * MS, 5 * MS, -1, HRT_MODE_REL), -EINVAL);
	assert_int_equal(hrt_repeat_start(&c.r, b, 20 * MS, 5 * MS, MS, (enum hrt_mode)7), -EINVAL);
	assert_int_equal(hrt_repeat_again(&c.r), 0);
	assert_int_equal(tv_soft(&c.r.timer), 10 * MS);
	assert_int_equal(tv_hard(&c.r.timer), 11 * MS);
	assert_int_equal(hrt_timer_cancel(&c.r.timer), 1);
	assert_int_equal(hrt_base_free(b), 0);
}

/* A connection whose heartbeat's send fails closes it: the close cancels
 * the connection's timers (its own included) and frees the connection,
 * then the callback returns HRT_RESTART as its idiom does.  The cancel
 * wins: nothing is queued, nothing touched (ASan), for a plain timer, a
 * struct hrt_repeat, on a locked and an unlocked base.  A close that only
 * marks the connection closed (freed after the pass) shows the rule
 * without ASan: the timer stays off the queue. */
struct conn {
	struct hrt_timer plain;
	struct rec hb;
	struct hrt_timer idle;
	int which;                      /* 0: plain, 1: repeat */
	int frees;                      /* the close frees it at once */
};

static long closes;

static void conn_close(struct conn *c)
{
	hrt_timer_cancel(&c->idle);
	hrt_timer_cancel(c->which ? &c->hb.r.timer : &c->plain);
	closes++;
	if (c->frees) {
		memset(c, 0xa5, sizeof(*c));
		free(c);
	}
}

static struct conn *cur;        /* the connection whose heartbeat runs */

static enum hrt_restart heartbeat_fails(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	assert_true(t == (cur->which ? &cur->hb.r.timer : &cur->plain));
	conn_close(cur);
	return HRT_RESTART;
}

static enum hrt_restart nop(struct hrt_timer *t, hrt_time_t now)
{
	(void)t, (void)now;
	return HRT_NORESTART;
}

static void test_self_cancel_wins_over_restart(void **state)
{
	(void)state;
	for (int k = 0; k < 8; k++) {
		int unlocked = k & 1, which = (k >> 1) & 1, frees = k >> 2;
		struct hrt_base *b = tv_virtual(unlocked ? HRT_BASE_UNLOCKED : 0);
		struct conn *c = calloc(1, sizeof(*c));
		struct hrt_stats st;

		assert_non_null(c);
		c->which = which;
		c->frees = frees;
		cur = c;
		hrt_timer_init(&c->idle, nop);
		assert_int_equal(hrt_timer_start(&c->idle, b, 100 * MS, HRT_MODE_ABS), 0);
		if (which) {
			assert_int_equal(hrt_repeat_init(&c->hb.r, heartbeat_fails), 0);
			assert_int_equal(hrt_repeat_start(&c->hb.r, b, MS, MS, 0, HRT_MODE_ABS), 0);
		} else {
			hrt_timer_init(&c->plain, heartbeat_fails);
			assert_int_equal(hrt_timer_start(&c->plain, b, MS, HRT_MODE_ABS), 0);
		}
		closes = 0;
		assert_int_equal(hrt_base_run(b, MS, 1), 1);
		assert_int_equal(closes, 1);
		if (!frees) {
			assert_int_equal(hrt_timer_is_queued(which ? &c->hb.r.timer : &c->plain), 0);
			free(c);
		}
		assert_int_equal(hrt_base_count(b), 0);
		assert_int_equal(hrt_base_get_stats(b, &st, sizeof(st)), 0);
		assert_int_equal(st.restarts, 0);
		assert_int_equal(hrt_base_check(b, NULL, 0), 0);
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* The rule's edges: a start after the self-cancel queues it (the start
 * wins, as before); a cancel after a start in the callback dequeues it and
 * the restart is void. */
static enum hrt_restart cancel_then_start(struct hrt_timer *t, hrt_time_t now)
{
	assert_int_equal(hrt_timer_cancel(t), 0);
	assert_int_equal(hrt_timer_start(t, tv_base(t), now + 5, HRT_MODE_ABS), 0);
	return HRT_RESTART;
}

static enum hrt_restart start_then_cancel(struct hrt_timer *t, hrt_time_t now)
{
	assert_int_equal(hrt_timer_start(t, tv_base(t), now + 5, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_timer_try_cancel(t), 1);
	return HRT_RESTART;
}

static void test_self_cancel_then_start_keeps_the_start(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	struct hrt_timer a, z;

	(void)state;
	hrt_timer_init(&a, cancel_then_start);
	hrt_timer_init(&z, start_then_cancel);
	assert_int_equal(hrt_timer_start(&a, b, 10, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_timer_start(&z, b, 10, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_run(b, 10, 1), 2);
	assert_int_equal(hrt_timer_is_queued(&a), 1);
	assert_int_equal(tv_soft(&a), 15);
	assert_int_equal(hrt_timer_is_queued(&z), 0);
	assert_int_equal(hrt_timer_cancel(&a), 1);
	assert_int_equal(hrt_base_free(b), 0);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_periodic_runs_once_per_period_without_drift),
		cmocka_unit_test(test_periodic_ends_on_norestart_runs_on_the_grid),
		cmocka_unit_test(test_again_rearms_with_last_delay_and_window),
		cmocka_unit_test(test_periods_tell_the_callback_how_many_elapsed),
		cmocka_unit_test(test_again_moves_a_periodic_grid_to_now_plus_delay),
		cmocka_unit_test(test_interval_zero_restart_runs_in_each_next_pass),
		cmocka_unit_test(test_repeat_bad_arguments),
		cmocka_unit_test(test_self_cancel_wins_over_restart),
		cmocka_unit_test(test_self_cancel_then_start_keeps_the_start),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
