/* SPDX-License-Identifier: MIT */
/*
 * test_shapes.c - the shapes servers make cost no work that grows with the
 * number of timers, counted, not timed: stats.wheel_scanned (far timers
 * visited to find a wheel slot's earliest hard expiry again) and
 * stats.nodes_visited, against the ops and the timers run.
 *  - FIFO: same-length timeouts (a window of 10 % of the delay), all in
 *    one wheel slot, cancelled in start order;
 *  - LRU: the earliest of them re-armed 10 s on, over and over (a
 *    keep-alive pushed on, the oldest connection's request);
 *  - periodic restart: 5,000 due timers and 50,000 far ones in one slot,
 *    and a periodic timer whose restart lands in that slot as its earliest
 *    hard expiry, through the README's idiom (forward, HRT_RESTART);
 *  - random: timers 1-10 s ahead re-armed at random, scans bounded by the
 *    ops (amortised O(1); tests/test_op_search.c bounds each search).
 * Each on a virtual base and on a real one with its fd (where every op
 * also decides whether the wake-up moves), with next_event after every op,
 * as a loop that plans its sleep asks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define NMAX 60000

static struct hrt_timer tms[NMAX];
static long runs;

static enum hrt_restart count_run(struct hrt_timer *t, hrt_time_t now)
{
	(void)t, (void)now;
	runs++;
	return HRT_NORESTART;
}

static struct hrt_base *new_base(int real)
{
	struct hrt_base *b = real ? tv_new(CLOCK_MONOTONIC, 0) : tv_virtual(0);

	assert_non_null(b);
	if (real)
		assert_true(hrt_base_fd(b) >= 0);
	for (int i = 0; i < NMAX; i++)
		assert_int_equal(hrt_timer_init(&tms[i], count_run), 0);
	runs = 0;
	return b;
}

static struct hrt_stats stats(const struct hrt_base *b)
{
	struct hrt_stats s;

	assert_int_equal(hrt_base_get_stats(b, &s, sizeof(s)), 0);
	return s;
}

static void drop(struct hrt_base *b, int n)
{
	for (int i = 0; i < n; i++)
		hrt_timer_cancel(&tms[i]);
	assert_int_equal(hrt_base_check(b, NULL, 0), 0);
	assert_int_equal(hrt_base_free(b), 0);
}

/* n timeouts of one length, started 1 us apart: one wheel slot (30 s
 * ahead, on a level-2 slot of 4.3 s), hard expiries in start order. */
static void start_same_length(struct hrt_base *b, int n, hrt_time_t t0)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(hrt_timer_start_range(&tms[i], b, t0 + 30 * SEC + i * 1000,
						       3 * SEC, HRT_MODE_ABS), 0);
}

static void fifo(int real, int n)
{
	struct hrt_base *b = new_base(real);
	hrt_time_t t0 = tv_now(b);
	uint64_t scanned;

	start_same_length(b, n, t0);
	scanned = stats(b).wheel_scanned;
	for (int i = 0; i < n; i++) {
		assert_int_equal(hrt_timer_cancel(&tms[i]), 1);
		assert_int_equal(tv_next(b), i + 1 < n ? tv_hard(&tms[i + 1]) : HRT_TIME_MAX);
	}
	scanned = stats(b).wheel_scanned - scanned;
	print_message("  FIFO %s n=%d: %d cancels, %llu timers scanned\n", real ? "fd     " : "virtual",
		      n, n, (unsigned long long)scanned);
	assert_int_equal(scanned, 0);
	drop(b, n);
}

static void lru(int real, int n)
{
	struct hrt_base *b = new_base(real);
	hrt_time_t t0 = tv_now(b);
	uint64_t scanned;
	int ops = 4 * n;

	start_same_length(b, n, t0);
	scanned = stats(b).wheel_scanned;
	for (int k = 0; k < ops; k++) {
		struct hrt_timer *t = &tms[k % n];       /* the earliest */

		assert_int_equal(tv_next(b), tv_hard(t));
		assert_int_equal(hrt_timer_start_range(t, b, tv_soft(t) + 10 * SEC, 3 * SEC,
						       HRT_MODE_ABS), 0);
	}
	scanned = stats(b).wheel_scanned - scanned;
	print_message("  LRU  %s n=%d: %d re-arms, %llu timers scanned\n", real ? "fd     " : "virtual",
		      n, ops, (unsigned long long)scanned);
	assert_int_equal(scanned, 0);
	drop(b, n);
}

static void test_fifo_and_lru_find_each_next_expiry_without_a_scan(void **state)
{
	(void)state;
	for (int real = 0; real < 2; real++) {
		fifo(real, 1000);
		fifo(real, NMAX);
		lru(real, 1000);
		lru(real, NMAX);
	}
}

/* The periodic timer: its own period, forwarded past the pass's now. */
static hrt_time_t period;
static long periodic_runs;

static enum hrt_restart periodic(struct hrt_timer *t, hrt_time_t now)
{
	periodic_runs++;
	hrt_timer_forward(t, now, period);
	return HRT_RESTART;
}

/*
 * One pass over `due` due timers, with or without the periodic one.  The
 * due timers' windows reach past the far slot's start (hard 31 s ahead),
 * so each step of the leftmost run asks the wheel whether a far timer
 * comes first; the periodic timer's restart lands in the far slot as its
 * earliest hard expiry (30.001 s).  The pass visits no far timer,
 * whatever the slot holds.
 */
static void periodic_restart(int real, int due, int far, int with)
{
	struct hrt_base *b = new_base(real);
	struct hrt_timer *p = &tms[due + far];
	hrt_time_t t0 = tv_now(b), at = t0 + 10 * MS;
	struct hrt_stats s0, s1;
	ssize_t n;

	assert_true(due + far + 1 <= NMAX);
	for (int i = 0; i < due; i++)
		assert_int_equal(hrt_timer_start_range(&tms[i], b, at + i, t0 + 31 * SEC - at - i,
						       HRT_MODE_ABS), 0);
	for (int i = 0; i < far; i++)           /* one slot, 30 s ahead */
		assert_int_equal(hrt_timer_start_range(&tms[due + i], b, t0 + 30 * SEC + i * 1000,
						       3 * SEC, HRT_MODE_ABS), 0);
	period = 30 * SEC - 9 * MS;             /* its restart: before all of them */
	periodic_runs = 0;
	if (with) {
		assert_int_equal(hrt_timer_init(p, periodic), 0);
		assert_int_equal(hrt_timer_start(p, b, at - 1, HRT_MODE_ABS), 0);
	}
	s0 = stats(b);
	n = hrt_base_run(b, at + due, 0);
	s1 = stats(b);
	print_message("  restart %s %d due + %d far%s: one pass ran %zd, %llu timers scanned, "
		      "%llu nodes visited\n", real ? "fd     " : "virtual", due, far,
		      with ? " + periodic" : "", n,
		      (unsigned long long)(s1.wheel_scanned - s0.wheel_scanned),
		      (unsigned long long)(s1.nodes_visited - s0.nodes_visited));
	assert_int_equal(n, due + with);
	assert_int_equal(periodic_runs, with);
	assert_int_equal(s1.wheel_scanned - s0.wheel_scanned, 0);
	if (with)                               /* restarted into the far slot, first */
		assert_int_equal(tv_next(b), tv_hard(p));
	hrt_timer_cancel(p);
	drop(b, due + far);
}

static void test_periodic_restart_into_a_big_slot_costs_the_pass_nothing(void **state)
{
	(void)state;
	for (int real = 0; real < 2; real++) {
		periodic_restart(real, 5000, 50000, 0);
		periodic_restart(real, 5000, 50000, 1);
	}
}

/* Random: 20,000 timers 1-10 s ahead, 50,000 re-arms of random ones to
 * random instants, next_event after each: a slot of timers in no order
 * is scanned only when its earliest leaves, one op in n or so, so the
 * scans stay within a few timers per op.  (A slot of timers in no order
 * too big for one search answers with its bound, and is not scanned
 * again until it leaves: wheel.h, W5; tests/test_op_search.c.) */
static void test_random_rearms_scan_amortised_constant(void **state)
{
	(void)state;
	for (int real = 0; real < 2; real++) {
		struct hrt_base *b = new_base(real);
		hrt_time_t t0 = tv_now(b);
		uint64_t scanned, seed = 12345;
		const int n = 20000, ops = 50000;

		for (int i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			assert_int_equal(hrt_timer_start_range(&tms[i], b, t0 + SEC +
					 (hrt_time_t)(seed >> 33) % (9 * SEC), 0, HRT_MODE_ABS), 0);
		}
		scanned = stats(b).wheel_scanned;
		for (int k = 0; k < ops; k++) {
			struct hrt_timer *t;

			(void)tv_next(b);
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			t = &tms[(seed >> 33) % (uint64_t)n];
			assert_int_equal(hrt_timer_start_range(t, b, t0 + SEC +
					 (hrt_time_t)(seed >> 20) % (9 * SEC), 0, HRT_MODE_ABS), 0);
		}
		scanned = stats(b).wheel_scanned - scanned;
		print_message("  random %s: %d re-arms, %llu timers scanned (%.2f per op)\n",
			      real ? "fd     " : "virtual", ops, (unsigned long long)scanned,
			      (double)scanned / ops);
		assert_true(scanned <= 4 * (uint64_t)ops);
		drop(b, n);
	}
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_and_lru_find_each_next_expiry_without_a_scan),
		cmocka_unit_test(test_periodic_restart_into_a_big_slot_costs_the_pass_nothing),
		cmocka_unit_test(test_random_rearms_scan_amortised_constant),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
