/* SPDX-License-Identifier: MIT */
/*
 * test_timerfd_armed_by_next_event.c - on real bases (timerfd devices),
 * after every start, cancel, re-arm, pass and callback, the timerfd is
 * armed at or before hrt_base_next_event, never later and never disarmed
 * while a timer is queued (the lazy re-arm: the base's one compare against
 * the instant its fd wakes by never leaves a late wake-up), and right
 * after a pass of a base exactly at its next_event (disarmed if none), so
 * an early wake-up is followed by an exact one.  Two bases, so callbacks
 * move timers between them; times an hour ahead, so nothing fires by
 * itself: passes run at made-up times (hrt_base_run).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>

#include "unit.h"
#include "hrt.h"

#define NT 64
#define UNIT 4000000LL          /* 4 ms: ties common, far above timer noise */
static struct hrt_base *B[2];
static int FD[2];
static struct hrt_timer T[NT];
static hrt_time_t T0;

static long rr(long n)
{
	return (long)(unit_rng() % (uint64_t)n);
}

static hrt_time_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static hrt_time_t vnow;         /* the synthetic time of the passes */

static hrt_time_t pick(void)
{
	switch (rr(4)) {
	case 0: return vnow + rr(20) * UNIT;                 /* near: tree */
	case 1: return vnow + rr(200) * UNIT;                /* around the horizon */
	case 2: return vnow + rr(5000) * UNIT;               /* wheel */
	default: return vnow + (hrt_time_t)rr(100) * 1000 * UNIT; /* far levels */
	}
}

static void check(int b, const char *what, int exact)
{
	hrt_time_t next, lo, hi, armed_lo, armed_hi;
	struct itimerspec its;

	assert_int_equal(hrt_base_next_event(B[b], &next) >= 0, 1);
	lo = mono();
	assert_int_equal(timerfd_gettime(FD[b], &its), 0);
	hi = mono();
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) {
		if (next != HRT_TIME_MAX)
			fail_msg("step %ld %s base %d: timerfd disarmed, next_event %lld (+%lld ms)",
				 unit_step, what, b, (long long)next, (long long)((next - T0) / 1000000));
		return;
	}
	if (next == HRT_TIME_MAX && !exact)
		return;                 /* lazy: armed for a timer cancelled since */
	armed_lo = lo + its.it_value.tv_sec * 1000000000LL + its.it_value.tv_nsec;
	armed_hi = hi + its.it_value.tv_sec * 1000000000LL + its.it_value.tv_nsec;
	if (next < armed_lo - 1000000 || (exact && next > armed_hi + 1000000))
		fail_msg("step %ld %s base %d: timerfd armed ~+%lld us, next_event +%lld us",
			 unit_step, what, b, (long long)((armed_lo - T0) / 1000),
			 next == HRT_TIME_MAX ? -1LL : (long long)((next - T0) / 1000));
}

static enum hrt_restart cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	switch (rr(6)) {
	case 0: hrt_timer_start_range(t, B[rr(2)], pick(), rr(3) ? 0 : rr(50) * UNIT, HRT_MODE_ABS); return HRT_NORESTART;
	case 1: hrt_timer_start_range(&T[rr(NT)], B[rr(2)], pick(), rr(3) ? 0 : rr(50) * UNIT, HRT_MODE_ABS); return HRT_NORESTART;
	case 2: hrt_timer_cancel(&T[rr(NT)]); return HRT_NORESTART;
	case 3: hrt_timer_forward(t, now, (1 + rr(100)) * UNIT); return HRT_RESTART;
	default: return HRT_NORESTART;
	}
}

static void test_timerfd_armed_by_next_event_exactly_after_a_pass(void **state)
{
	(void)state;
	unit_rng_state = unit_seed;
	T0 = mono() + 3600LL * 1000000000;
	vnow = T0;
	for (int b = 0; b < 2; b++) {
		assert_int_equal(hrt_base_new(&B[b], CLOCK_MONOTONIC, 0), 0);
		FD[b] = hrt_base_fd(B[b]);
		assert_true(FD[b] >= 0);
		hrt_base_run(B[b], vnow, 0);
	}
	for (int i = 0; i < NT; i++)
		hrt_timer_init(&T[i], cb);
	for (unit_step = 0; unit_step < unit_steps; unit_step++) {
		int i = (int)rr(NT), b = (int)rr(2);
		const char *what;

		switch (rr(10)) {
		case 0: case 1: case 2: case 3:
			hrt_timer_start_range(&T[i], B[b], pick(), rr(3) ? 0 : rr(50) * UNIT, HRT_MODE_ABS);
			what = "start";
			break;
		case 4: case 5:
			hrt_timer_cancel(&T[i]);
			what = "cancel";
			break;
		case 6: {       /* re-arm on its own base, same hard (FIFO move) */
			struct hrt_base *ob;
			hrt_time_t s, h;

			if (hrt_timer_get_base(&T[i], &ob) || hrt_timer_get_soft(&T[i], &s) ||
			    hrt_timer_get_hard(&T[i], &h) || s < vnow)
				continue;
			hrt_timer_start_range(&T[i], ob, s, h - s, HRT_MODE_ABS);
			what = "rearm-same";
			break;
		}
		case 7:
			if (rr(3) == 0)
				vnow += rr(40) * UNIT;
			hrt_base_run(B[b], vnow, (int)rr(2));
			what = "pass";
			break;
		default:
			hrt_base_next_event(B[b], &(hrt_time_t){0});
			what = "next_event";
			break;
		}
		check(0, what, !strcmp(what, "pass") && b == 0);
		check(1, what, !strcmp(what, "pass") && b == 1);
		if (vnow > T0 + 1800LL * 1000000000)
			break;
	}
	print_message("steps %ld, vnow +%lld s\n", unit_step, (long long)((vnow - T0) / 1000000000));
	for (int i = 0; i < NT; i++)
		hrt_timer_cancel(&T[i]);
	for (int b = 0; b < 2; b++)
		assert_int_equal(hrt_base_free(B[b]), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timerfd_armed_by_next_event_exactly_after_a_pass),
	};

	return cmocka_run_seeded_tests(tests, argc, argv, 200000);
}
