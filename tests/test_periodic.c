/* SPDX-License-Identifier: MIT */
/*
 * test_periodic.c - the README's periodic idiom (in the callback,
 * hrt_timer_forward(t, now, period) and return HRT_RESTART) with windows:
 * a periodic range timer runs exactly once per period, and two runs are
 * never closer than period - slack, whichever pass runs it inside its
 * window.  On a virtual base: several passes inside every window, under
 * every greedy policy, idle or not, windows from 0 to 100 % of the period.
 * On real bases: hrt_base_loop (coalesced and not) and hrt_base_dispatch
 * polled, counting runs and the smallest gap against the time each run
 * started late, so a loaded machine cannot make them fail.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"

#define MS 1000000LL

struct periodic {
	struct hrt_timer t;             /* first: the callback casts */
	hrt_time_t period;
	long runs, max_runs;
	hrt_time_t last_run, last_soft;
	hrt_time_t min_gap;             /* least now - last run */
	long short_gaps;                /* gaps below period - (last run - its soft) */
	struct hrt_base *stop;          /* stopped after max_runs, if set */
};

/* The idiom, and its two checks: the gap since the last run is at least
 * period - (how far past its soft expiry the last run came): the next soft
 * expiry is one period after the last one, and a run never comes before
 * its soft expiry. */
static enum hrt_restart tick(struct hrt_timer *t, hrt_time_t now)
{
	struct periodic *p = (struct periodic *)t;
	hrt_time_t soft = tv_soft(t);

	assert_true(now >= soft);
	if (p->runs) {
		hrt_time_t gap = now - p->last_run;

		if (gap < p->min_gap)
			p->min_gap = gap;
		if (gap < p->period - (p->last_run - p->last_soft))
			p->short_gaps++;
	}
	p->runs++;
	p->last_run = now;
	p->last_soft = soft;
	if (p->max_runs && p->runs >= p->max_runs) {
		if (p->stop)
			hrt_base_stop(p->stop);
		return HRT_NORESTART;
	}
	hrt_timer_forward(t, now, p->period);      /* the idiom, as README has it */
	return HRT_RESTART;
}

static void periodic_init(struct periodic *p, hrt_time_t period)
{
	memset(p, 0, sizeof(*p));
	p->period = period;
	p->min_gap = HRT_TIME_MAX;
	assert_int_equal(hrt_timer_init(&p->t, tick), 0);
}

/* Virtual time: a period of 10 ms with slack 0, 50 us, 1, 10, 50 and
 * 100 % of it; passes every period / 5 (five inside each window, which is
 * where the old rule - forward until hard > now - ran it five times a
 * period), for 200 periods, under each policy and idle flag. */
static void test_virtual_passes_inside_window_run_once_per_period(void **state)
{
	static const hrt_time_t slacks[] = { 0, 50000, MS / 10, MS, 5 * MS, 10 * MS };
	static const enum hrt_greedy pol[] = { HRT_GREEDY_OFF, HRT_GREEDY_IDLE, HRT_GREEDY_ALWAYS };
	const hrt_time_t period = 10 * MS, step = period / 5;
	const long periods = 200;

	(void)state;
	for (unsigned s = 0; s < sizeof(slacks) / sizeof(slacks[0]); s++) {
		for (unsigned g = 0; g < 3; g++) {
			for (int idle = 0; idle < 2; idle++) {
				struct hrt_base *b = tv_virtual(g % 2 ? HRT_BASE_UNLOCKED : 0);
				struct periodic p;
				hrt_time_t now;

				assert_int_equal(hrt_base_set_greedy(b, pol[g]), 0);
				periodic_init(&p, period);
				assert_int_equal(hrt_timer_start_range(&p.t, b, period, slacks[s],
								       HRT_MODE_ABS), 0);
				for (now = step; now <= periods * period; now += step)
					assert_true(hrt_base_run(b, now, idle) >= 0);
				/* Soft expiries k * period, k = 1..periods: one run each. */
				if (p.runs != periods)
					fail_msg("slack %lld, policy %d, idle %d: %ld runs in %ld periods",
						 (long long)slacks[s], (int)pol[g], idle, p.runs, periods);
				assert_int_equal(p.short_gaps, 0);
				assert_true(p.min_gap >= period - slacks[s]);
				assert_int_equal(hrt_timer_cancel(&p.t), 1);
				assert_int_equal(hrt_base_free(b), 0);
			}
		}
	}
}

/* A window wider than the period (slack 3 periods): still once per period
 * (its windows overlap; soft expiries stay a period apart). */
static void test_window_wider_than_period_runs_once_per_period(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	struct periodic p;
	hrt_time_t now;

	(void)state;
	assert_int_equal(hrt_base_set_greedy(b, HRT_GREEDY_ALWAYS), 0);
	periodic_init(&p, 10 * MS);
	hrt_timer_start_range(&p.t, b, 10 * MS, 30 * MS, HRT_MODE_ABS);
	for (now = MS; now <= 1000 * MS; now += MS)
		hrt_base_run(b, now, 1);
	assert_int_equal(p.runs, 100);
	assert_true(p.min_gap >= 10 * MS);
	assert_int_equal(hrt_timer_cancel(&p.t), 1);
	assert_int_equal(hrt_base_free(b), 0);
}

static hrt_time_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The real loop: a 10 ms timer with 2 ms slack (and 1 ms with 0.5 ms)
 * for 30 runs, coalesced and not.  It must take at least 29 periods
 * (a burst would take microseconds) and never leave a gap below what the
 * last run's lateness allows. */
static void test_loop_runs_once_per_period(void **state)
{
	static const struct { hrt_time_t period, slack; } cases[] = {
		{ 10 * MS, 2 * MS }, { MS, MS / 2 }, { 5 * MS, 5 * MS },
	};

	(void)state;
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int co = 0; co < 2; co++) {
			struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);
			struct periodic p;
			hrt_time_t t0, took;

			assert_int_equal(hrt_base_set_coalesce(b, co), 0);
			periodic_init(&p, cases[c].period);
			p.max_runs = 30;
			p.stop = b;
			t0 = mono_now();
			assert_int_equal(hrt_timer_start_range(&p.t, b, cases[c].period, cases[c].slack,
							       HRT_MODE_REL), 0);
			assert_int_equal(hrt_base_loop(b), 0);
			took = mono_now() - t0;
			if (p.runs != 30 || took < 29 * cases[c].period || p.short_gaps)
				fail_msg("period %lld slack %lld coalesce %d: %ld runs in %lld ns, "
					 "%ld short gaps, least gap %lld", (long long)cases[c].period,
					 (long long)cases[c].slack, co, p.runs, (long long)took,
					 p.short_gaps, (long long)p.min_gap);
			assert_int_equal(hrt_base_free(b), 0);
		}
	}
}

/* The fd path: poll the timerfd, dispatch, for 20 runs of 5 ms with 1 ms
 * slack. */
static void test_dispatch_runs_once_per_period(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);
	struct periodic p;
	struct pollfd pfd;
	hrt_time_t t0, took;

	(void)state;
	periodic_init(&p, 5 * MS);
	p.max_runs = 20;
	pfd.fd = hrt_base_fd(b);
	pfd.events = POLLIN;
	assert_true(pfd.fd >= 0);
	t0 = mono_now();
	hrt_timer_start_range(&p.t, b, 5 * MS, MS, HRT_MODE_REL);
	while (p.runs < p.max_runs) {
		assert_true(poll(&pfd, 1, 1000) == 1);
		assert_true(hrt_base_dispatch(b, 1) >= 0);
	}
	took = mono_now() - t0;
	assert_true(took >= 19 * 5 * MS);
	assert_int_equal(p.short_gaps, 0);
	assert_int_equal(hrt_base_free(b), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_virtual_passes_inside_window_run_once_per_period),
		cmocka_unit_test(test_window_wider_than_period_runs_once_per_period),
		cmocka_unit_test(test_loop_runs_once_per_period),
		cmocka_unit_test(test_dispatch_runs_once_per_period),
	};

	return cmocka_run_seeded_tests(tests, argc, argv, 1);
}
