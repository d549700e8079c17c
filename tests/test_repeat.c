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
		cmocka_unit_test(test_repeat_bad_arguments),
		cmocka_unit_test(test_self_cancel_wins_over_restart),
		cmocka_unit_test(test_self_cancel_then_start_keeps_the_start),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
