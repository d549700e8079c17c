/* SPDX-License-Identifier: MIT */
/*
 * test_realtime.c - relative timers on a CLOCK_REALTIME base keep their
 * length when the wall clock is set; absolute ones follow the set.
 *
 * The base reads both clocks through its clock seam (a fake wall clock and
 * a fake monotonic one) and its timerfd makes its system calls through the
 * device's seam: settime is recorded, read reports the fake timer firing,
 * or ECANCELED after a set of the fake wall clock (as CANCEL_ON_SET does).
 * The machine's clock is never set.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>

#include "unit.h"

#include "hrt.h"
#include "base.h"
#include "timerfd.h"

#define MS 1000000LL
#define S  1000000000LL

#include "fake_clock.h"

static const struct hrt_timerfd_sys fake_sys = { fake_read, fake_settime };

static void advance(hrt_time_t d)
{
	rt_now += d;
	mono_now += d;
}

static void set_clock(hrt_time_t d)
{
	fake_set_clock(d);
}

/* A realtime base on the fakes, empty; its wall clock at 1000 s, its
 * monotonic one at 50 s. */
static struct hrt_base *new_base(void)
{
	struct hrt_base *b;

	rt_now = 1000 * S;
	mono_now = 50 * S;
	set_pending = 0;
	armed_at = HRT_TIME_MAX;
	armed_flags = -1;
	assert_int_equal(hrt_base_new(&b, CLOCK_REALTIME, 0), 0);
	hrt__base_set_gettime(b, fake_gettime);
	assert_true(hrt_base_fd(b) >= 0);
	hrt__timerfd_set_sys(hrt__base_device(b), &fake_sys);
	return b;
}

/* Callbacks record the order they ran in. */
#define NT 8
static struct rec {
	struct hrt_timer t;
	int id;
} recs[NT];
static int order[32], n_ran;
static hrt_time_t cb_now;

static enum hrt_restart cb(struct hrt_timer *t, hrt_time_t now)
{
	struct rec *r = HRT_CONTAINER_OF(t, struct rec, t);

	if (n_ran < 32)
		order[n_ran] = r->id;
	n_ran++;
	cb_now = now;
	return HRT_NORESTART;
}

static void init_recs(void)
{
	n_ran = 0;
	for (int i = 0; i < NT; i++) {
		hrt_timer_init(&recs[i].t, cb);
		recs[i].id = i;
	}
}

static void checked(struct hrt_base *b)
{
	char why[128] = "";

	if (hrt_base_check(b, why, sizeof(why)))
		fail_msg("check: %s", why);
}

static void drop(struct hrt_base *b)
{
	for (int i = 0; i < NT; i++)
		hrt_timer_cancel(&recs[i].t);
	assert_int_equal(hrt_base_free(b), 0);
}

/* The tests ---------------------------------------------------------------- */

static void test_set_forward_keeps_length(void **state)
{
	struct hrt_base *b = new_base();
	hrt_time_t soft;

	(void)state;
	init_recs();
	assert_int_equal(hrt_timer_start(&recs[0].t, b, 1 * S, HRT_MODE_REL), 0);
	assert_int_equal(armed_at, 1001 * S);
	assert_true(armed_flags & TFD_TIMER_CANCEL_ON_SET);
	set_clock(20 * S);
	assert_true(hrt_base_dispatch(b, 0) >= 0);      /* ECANCELED: a pass */
	assert_int_equal(n_ran, 0);
	assert_int_equal(armed_at, 1021 * S);           /* still 1 s away */
	assert_int_equal(hrt_timer_get_soft(&recs[0].t, &soft), 0);
	assert_int_equal(soft, 1021 * S);
	advance(999 * MS);
	assert_int_equal(hrt_base_dispatch(b, 0), 0);
	assert_int_equal(n_ran, 0);
	advance(1 * MS);
	assert_int_equal(hrt_base_dispatch(b, 0), 1);
	assert_int_equal(n_ran, 1);
	assert_int_equal(cb_now, 1021 * S);             /* the base's clock */
	checked(b);
	drop(b);
}

static void test_set_back_keeps_length(void **state)
{
	struct hrt_base *b = new_base();

	(void)state;
	init_recs();
	assert_int_equal(hrt_timer_start(&recs[0].t, b, 200 * MS, HRT_MODE_REL), 0);
	set_clock(-10 * S);
	assert_true(hrt_base_dispatch(b, 0) >= 0);
	assert_int_equal(n_ran, 0);
	assert_int_equal(armed_at, 990 * S + 200 * MS);
	advance(200 * MS);
	assert_int_equal(hrt_base_dispatch(b, 0), 1);
	assert_int_equal(n_ran, 1);
	drop(b);
}

static void test_absolute_follows_set(void **state)
{
	struct hrt_base *b = new_base();

	(void)state;
	init_recs();
	assert_int_equal(hrt_timer_start(&recs[0].t, b, 1005 * S, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_timer_start(&recs[1].t, b, 5 * S, HRT_MODE_REL), 0);
	set_clock(20 * S);
	assert_int_equal(hrt_base_dispatch(b, 0), 1);   /* the absolute one only */
	assert_int_equal(order[0], 0);
	assert_int_equal(armed_at, 1025 * S);
	assert_int_equal(hrt_base_count(b), 1);
	drop(b);
}

/* next_event is the earlier of both sets in the base's clock, over two
 * sets of the clock in a row. */
static void test_next_event_both_sets(void **state)
{
	struct hrt_base *b = new_base();
	hrt_time_t when;

	(void)state;
	init_recs();
	assert_int_equal(hrt_timer_start(&recs[0].t, b, 1000 * S + 300 * MS, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_timer_start(&recs[1].t, b, 100 * MS, HRT_MODE_REL), 0);
	assert_int_equal(hrt_base_next_event(b, &when), 1);
	assert_int_equal(when, 1000 * S + 100 * MS);
	assert_int_equal(armed_at, when);
	set_clock(-10 * S);
	assert_true(hrt_base_dispatch(b, 0) >= 0);
	assert_int_equal(hrt_base_next_event(b, &when), 1);
	assert_int_equal(when, 990 * S + 100 * MS);
	assert_int_equal(armed_at, when);
	set_clock(20 * S);                              /* 1010 s: the absolute one is due */
	assert_int_equal(hrt_base_dispatch(b, 0), 1);
	assert_int_equal(order[0], 0);
	assert_int_equal(hrt_base_next_event(b, &when), 1);
	assert_int_equal(when, 1010 * S + 100 * MS);
	assert_int_equal(hrt_base_count(b), 1);
	checked(b);
	drop(b);
}

static void test_soft_hard_in_base_clock(void **state)
{
	struct hrt_base *b = new_base();
	hrt_time_t soft, hard;

	(void)state;
	init_recs();
	assert_int_equal(hrt_timer_start_range(&recs[0].t, b, 1 * S, 10 * MS, HRT_MODE_REL), 0);
	assert_int_equal(hrt_timer_get_soft(&recs[0].t, &soft), 0);
	assert_int_equal(hrt_timer_get_hard(&recs[0].t, &hard), 0);
	assert_int_equal(soft, 1001 * S);
	assert_int_equal(hard, 1001 * S + 10 * MS);
	set_clock(-10 * S);
	assert_true(hrt_base_dispatch(b, 0) >= 0);
	assert_int_equal(hrt_timer_get_soft(&recs[0].t, &soft), 0);
	assert_int_equal(soft, 991 * S);
	/* Cancelled, it still answers in the base's clock. */
	assert_int_equal(hrt_timer_cancel(&recs[0].t), 1);
	assert_int_equal(hrt_timer_get_hard(&recs[0].t, &hard), 0);
	assert_int_equal(hard, 991 * S + 10 * MS);
	drop(b);
}

/* The pass takes the earlier hard expiry of the two sets' candidates (the
 * absolute one on a tie), in the leftmost run and in the greedy walk. */
static void test_pass_order_across_sets(void **state)
{
	struct hrt_base *b = new_base();

	(void)state;
	init_recs();
	set_clock(-10 * S);                             /* offsets differ from the start */
	assert_true(hrt_base_dispatch(b, 0) >= 0);
	/* rt 990 s: hard expiries 990.3 (abs), 990.1 (rel), 990.2 (abs),
	 * 990.2 (rel), 990.05 (rel) */
	hrt_timer_start(&recs[0].t, b, 990 * S + 300 * MS, HRT_MODE_ABS);
	hrt_timer_start(&recs[1].t, b, 100 * MS, HRT_MODE_REL);
	hrt_timer_start(&recs[2].t, b, 990 * S + 200 * MS, HRT_MODE_ABS);
	hrt_timer_start(&recs[3].t, b, 200 * MS, HRT_MODE_REL);
	hrt_timer_start(&recs[4].t, b, 50 * MS, HRT_MODE_REL);
	advance(400 * MS);
	assert_int_equal(hrt_base_dispatch(b, 0), 5);
	assert_int_equal(order[0], 4);
	assert_int_equal(order[1], 1);
	assert_int_equal(order[2], 2);
	assert_int_equal(order[3], 3);
	assert_int_equal(order[4], 0);

	/* Greedy: soft-due timers behind a later hard one, in both sets. */
	n_ran = 0;
	hrt_timer_start_range(&recs[0].t, b, 1 * S, 0, HRT_MODE_REL);          /* hard +1 s */
	hrt_timer_start_range(&recs[1].t, b, 10 * MS, 5 * S, HRT_MODE_REL);    /* hard +5.01 s */
	hrt_timer_start_range(&recs[2].t, b, rt_now + 20 * MS, 3 * S, HRT_MODE_ABS);
	advance(1 * S);
	assert_int_equal(hrt_base_dispatch(b, 1), 3);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 2);                  /* hard +3.02 s before +5.01 s */
	assert_int_equal(order[2], 1);
	checked(b);
	drop(b);
}

/* Greedy off, the leftmost run is one run over both sets in hard order: a
 * due relative timer behind an absolute one that is not due waits, and so
 * does the coalescing window's start (issue 32, defect 3: it ran, and the
 * window opened at the relative timer's soft expiry). */
static void test_leftmost_run_ends_at_either_sets_first_not_due(void **state)
{
	struct hrt_base *b = new_base();
	hrt_time_t owner, soft, hard;

	(void)state;
	init_recs();
	assert_int_equal(hrt_base_set_greedy(b, HRT_GREEDY_OFF), 0);
	/* absolute: soft +1 s, hard +1.05 s; relative: soft +0.1 s, hard +1.1 s */
	hrt_timer_start_range(&recs[0].t, b, rt_now + 1 * S, 50 * MS, HRT_MODE_ABS);
	hrt_timer_start_range(&recs[1].t, b, 100 * MS, 1 * S, HRT_MODE_REL);
	assert_int_equal(hrt__base_window(b, &owner, &soft, &hard), 1);
	assert_int_equal(hard, rt_now + 1 * S + 50 * MS);
	assert_int_equal(owner, rt_now + 1 * S);
	assert_int_equal(soft, rt_now + 1 * S);         /* not +0.1 s */
	advance(120 * MS);
	assert_int_equal(hrt_base_run(b, rt_now, 0), 0); /* the relative one waits */
	assert_int_equal(hrt_base_set_greedy(b, HRT_GREEDY_ALWAYS), 0);
	assert_int_equal(hrt__base_window(b, &owner, &soft, &hard), 1);
	assert_int_equal(soft, rt_now - 20 * MS);       /* greedy: the relative one's */
	assert_int_equal(hrt_base_run(b, rt_now, 0), 1); /* the walk runs it */
	assert_int_equal(order[0], 1);
	advance(1 * S);
	assert_int_equal(hrt_base_run(b, rt_now, 0), 1);
	assert_int_equal(order[1], 0);
	checked(b);
	drop(b);
}

/* Re-arm between the sets; forward keeps the set's clock. */
static enum hrt_restart fwd_cb(struct hrt_timer *t, hrt_time_t now)
{
	n_ran++;
	cb_now = now;
	return hrt_timer_forward(t, now, 100 * MS) == 1 ? HRT_RESTART : HRT_NORESTART;
}

static void test_rearm_between_sets_and_forward(void **state)
{
	struct hrt_base *b = new_base();
	hrt_time_t when, soft;

	(void)state;
	init_recs();
	hrt_timer_start(&recs[0].t, b, 2 * S, HRT_MODE_REL);
	hrt_timer_start(&recs[0].t, b, 1000 * S + 500 * MS, HRT_MODE_ABS);
	assert_int_equal(hrt_base_count(b), 1);
	checked(b);
	set_clock(20 * S);
	assert_int_equal(hrt_base_dispatch(b, 0), 1);   /* absolute now: it ran */
	hrt_timer_start(&recs[0].t, b, 1 * S, HRT_MODE_ABS);        /* long past */
	hrt_timer_start(&recs[0].t, b, 300 * MS, HRT_MODE_REL);
	assert_int_equal(hrt_base_count(b), 1);
	assert_int_equal(hrt_base_next_event(b, &when), 1);
	assert_int_equal(when, rt_now + 300 * MS);
	checked(b);
	hrt_timer_cancel(&recs[0].t);

	/* A periodic relative timer: forward from the callback's now (the
	 * base's clock) keeps its keys monotonic, so a set between periods
	 * does not move it. */
	n_ran = 0;
	hrt_timer_init(&recs[5].t, fwd_cb);
	hrt_timer_start(&recs[5].t, b, 100 * MS, HRT_MODE_REL);
	advance(100 * MS);
	assert_int_equal(hrt_base_dispatch(b, 0), 1);
	assert_int_equal(hrt_timer_get_soft(&recs[5].t, &soft), 0);
	assert_int_equal(soft, rt_now + 100 * MS);
	set_clock(30 * S);
	assert_true(hrt_base_dispatch(b, 0) >= 0);
	assert_int_equal(n_ran, 1);
	assert_int_equal(hrt_timer_get_soft(&recs[5].t, &soft), 0);
	assert_int_equal(soft, rt_now + 100 * MS);
	advance(100 * MS);
	assert_int_equal(hrt_base_dispatch(b, 0), 1);
	assert_int_equal(n_ran, 2);
	hrt_timer_cancel(&recs[5].t);
	drop(b);
}

static int n_walked;

static void walk_fn(const struct hrt_tree_node *n, void *ctx)
{
	(void)n;
	(void)ctx;
	n_walked++;
}

static void test_walk_count_check_both(void **state)
{
	struct hrt_base *b = new_base();
	struct hrt_stats st;

	(void)state;
	init_recs();
	for (int i = 0; i < NT; i++)
		hrt_timer_start(&recs[i].t, b, (i + 1) * S * (i % 2 ? 1 : 100),
				i % 2 ? HRT_MODE_REL : HRT_MODE_ABS);
	assert_int_equal(hrt_base_count(b), NT);
	n_walked = 0;
	assert_int_equal(hrt_base_walk_tree(b, walk_fn, NULL), NT);
	assert_int_equal(n_walked, NT);
	checked(b);
	assert_int_equal(hrt_base_get_stats(b, &st, sizeof(st)), 0);
	assert_int_equal(st.starts, NT);
	assert_int_equal(hrt_base_free(b), -EBUSY);
	drop(b);
}

/* A virtual realtime base has one time: relative is from it, one set. */
static void test_virtual_realtime_unchanged(void **state)
{
	struct hrt_base *b;
	hrt_time_t soft;

	(void)state;
	init_recs();
	assert_int_equal(hrt_base_new(&b, CLOCK_REALTIME, HRT_BASE_VIRTUAL), 0);
	assert_int_equal(hrt_base_set_time(b, 1000 * S), 0);
	assert_int_equal(hrt_timer_start(&recs[0].t, b, 1 * S, HRT_MODE_REL), 0);
	assert_int_equal(hrt_timer_get_soft(&recs[0].t, &soft), 0);
	assert_int_equal(soft, 1001 * S);
	assert_int_equal(hrt_base_run(b, 1001 * S, 0), 1);
	drop(b);
}

/* A set of a few microseconds - less than two clock reads can tell from
 * noise - is still followed when the kernel reports it (ECANCELED), and
 * one made while the timerfd was disarmed (no report) is measured by the
 * next arm: relative timers keep their length to the nanosecond. */
static void test_small_sets_are_followed(void **state)
{
	struct hrt_base *b = new_base();
	struct hrt_stats st;

	(void)state;
	init_recs();
	set_clock(-15000);                      /* disarmed: not reported */
	assert_int_equal(set_pending, 0);
	assert_int_equal(hrt_timer_start(&recs[0].t, b, 1 * S, HRT_MODE_REL), 0);
	assert_int_equal(armed_at, 1001 * S - 15000);
	set_clock(10000);                       /* armed: reported by the read */
	assert_int_equal(hrt_base_dispatch(b, 0), 0);
	assert_int_equal(armed_at, 1001 * S - 5000);
	hrt_base_get_stats(b, &st, sizeof(st));
	assert_int_equal(st.clock_jumps, 1);
	advance(1 * S - 1);
	assert_int_equal(hrt_base_dispatch(b, 0), 0);   /* 1 ns early: nothing */
	assert_int_equal(n_ran, 0);
	advance(1);
	assert_int_equal(hrt_base_dispatch(b, 0), 1);
	checked(b);
	drop(b);
}

/* A host that holds the timerfd (hrt_base_hold_fd) disarms it, so a set of
 * the wall clock meanwhile is never reported: giving the fd back measures
 * the offset before the re-arm. */
static void test_set_while_held_is_measured(void **state)
{
	struct hrt_base *b = new_base();

	(void)state;
	init_recs();
	assert_int_equal(hrt_timer_start(&recs[0].t, b, 10 * S, HRT_MODE_REL), 0);
	assert_int_equal(armed_at, 1010 * S);
	assert_int_equal(hrt_base_hold_fd(b, 1), 0);
	assert_int_equal(armed_at, HRT_TIME_MAX);
	set_clock(-1 * S);                      /* disarmed: not reported */
	assert_int_equal(set_pending, 0);
	assert_int_equal(hrt_base_hold_fd(b, 0), 0);
	assert_int_equal(armed_at, 1009 * S);   /* still 10 s after its start */
	checked(b);
	drop(b);
}

/* A set the re-arm is told of (ECANCELED from timerfd_settime, which
 * consumes it): the base measures the offset again then and there, so the
 * relative timers keep their length and no read ever reports the set. */
static void test_set_told_by_rearm_keeps_length(void **state)
{
	struct hrt_base *b = new_base();
	long told = set_at_arm;
	struct hrt_stats st;

	(void)state;
	init_recs();
	assert_int_equal(hrt_timer_start(&recs[0].t, b, 1 * S, HRT_MODE_REL), 0);
	set_clock(20 * S);
	assert_int_equal(hrt_timer_start(&recs[1].t, b, 500 * MS, HRT_MODE_REL), 0);
	assert_int_equal(set_at_arm, told + 1);
	assert_int_equal(set_pending, 0);
	assert_int_equal(armed_at, 1020 * S + 500 * MS);        /* 500 ms away */
	hrt_base_get_stats(b, &st, sizeof(st));
	assert_int_equal(st.clock_jumps, 1);
	advance(500 * MS);
	assert_int_equal(hrt_base_dispatch(b, 0), 1);
	assert_int_equal(order[0], 1);
	assert_int_equal(armed_at, 1021 * S);                   /* 1 s after its start */
	advance(500 * MS);
	assert_int_equal(hrt_base_dispatch(b, 0), 1);
	assert_int_equal(order[1], 0);
	checked(b);
	drop(b);
}

/* A callback that re-arms its timer in the other mode moves it to the
 * base's other set, and it is due there: it still runs once in this pass
 * (hrt.h: a timer re-queued during a pass waits for the next one), in both
 * directions, from the leftmost run and from the greedy walk. */
static int switch_to_rel;

static enum hrt_restart switch_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct hrt_base *b = NULL;

	assert_int_equal(hrt_timer_get_base(t, &b), 0);
	cb(t, now);
	if (switch_to_rel)
		assert_int_equal(hrt_timer_start(t, b, 0, HRT_MODE_REL), 0);
	else
		assert_int_equal(hrt_timer_start(t, b, now, HRT_MODE_ABS), 0);
	return HRT_NORESTART;
}

static void test_mode_switch_in_callback_runs_once_per_pass(void **state)
{
	(void)state;
	for (int greedy = 0; greedy < 2; greedy++)
		for (switch_to_rel = 0; switch_to_rel < 2; switch_to_rel++) {
			struct hrt_base *b = new_base();

			init_recs();
			hrt_timer_init(&recs[0].t, switch_cb);
			assert_int_equal(hrt_base_set_greedy(b, greedy ? HRT_GREEDY_ALWAYS
								      : HRT_GREEDY_OFF), 0);
			if (switch_to_rel)
				assert_int_equal(hrt_timer_start(&recs[0].t, b, rt_now + MS,
								 HRT_MODE_ABS), 0);
			else
				assert_int_equal(hrt_timer_start(&recs[0].t, b, MS, HRT_MODE_REL), 0);
			advance(2 * MS);
			assert_int_equal(hrt_base_dispatch(b, 1), 1);
			assert_int_equal(n_ran, 1);
			assert_int_equal(hrt_timer_is_queued(&recs[0].t), 1);
			checked(b);
			assert_int_equal(hrt_base_dispatch(b, 1), 1);     /* the next pass runs it */
			assert_int_equal(n_ran, 2);
			drop(b);
		}
}

/* A relative timer whose hard expiry overflows the wall clock (a slack of
 * centuries, or HRT_TIME_MAX: "as late as possible", hrt.h) can run like
 * any other: it is the candidate of its set in every pass, and its wake-up
 * is armed at the latest instant, as an absolute one's hard expiry is
 * capped; greedy off and on. */
static void test_relative_timer_with_endless_slack_runs(void **state)
{
	(void)state;
	for (int greedy = 0; greedy < 2; greedy++) {
		struct hrt_base *b = new_base();
		hrt_time_t hard, when;

		init_recs();
		assert_int_equal(hrt_base_set_greedy(b, greedy ? HRT_GREEDY_ALWAYS : HRT_GREEDY_OFF), 0);
		assert_int_equal(hrt_timer_start_range(&recs[0].t, b, S / 1000, HRT_TIME_MAX,
						       HRT_MODE_REL), 0);
		assert_int_equal(hrt_timer_get_hard(&recs[0].t, &hard), 0);
		assert_true(hard > rt_now && hard < HRT_TIME_MAX);
		assert_int_equal(hrt_base_next_event(b, &when), 1);
		assert_int_equal(when, hard);
		assert_true(armed_at == hard);
		advance(S);
		assert_int_equal(hrt_base_run(b, rt_now, 0), 1);
		assert_int_equal(n_ran, 1);
		assert_int_equal(hrt_timer_is_queued(&recs[0].t), 0);
		checked(b);
		drop(b);
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_forward_keeps_length),
		cmocka_unit_test(test_set_back_keeps_length),
		cmocka_unit_test(test_absolute_follows_set),
		cmocka_unit_test(test_next_event_both_sets),
		cmocka_unit_test(test_soft_hard_in_base_clock),
		cmocka_unit_test(test_pass_order_across_sets),
		cmocka_unit_test(test_leftmost_run_ends_at_either_sets_first_not_due),
		cmocka_unit_test(test_rearm_between_sets_and_forward),
		cmocka_unit_test(test_walk_count_check_both),
		cmocka_unit_test(test_virtual_realtime_unchanged),
		cmocka_unit_test(test_set_told_by_rearm_keeps_length),
		cmocka_unit_test(test_set_while_held_is_measured),
		cmocka_unit_test(test_small_sets_are_followed),
		cmocka_unit_test(test_mode_switch_in_callback_runs_once_per_pass),
		cmocka_unit_test(test_relative_timer_with_endless_slack_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
