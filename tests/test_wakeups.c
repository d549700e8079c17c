/* SPDX-License-Identifier: MIT */
/*
 * test_wakeups.c - measured real wake-ups against the virtual-clock engine.
 *
 * 1,000 range timers on CLOCK_MONOTONIC with overlapping ranges (the
 * workload of wakeups.h, shared with bench/wakeups.c: soft expiries t0 +
 * 30 ms + [0, 400 ms), slack [0, 20 ms], from a seeded RNG; the seed is
 * printed, argv[1] replays it) run through hrt_base_loop; the callback of
 * the last one stops the loop, and a watchdog thread stops it at a deadline
 * so the test cannot hang.  For
 * HRT_GREEDY_OFF and HRT_GREEDY_IDLE it checks:
 *   - no callback ran before its soft expiry (clock_gettime inside it, and
 *     the `now` the pass passed);
 *   - every timer ran exactly once;
 *   - stats.wakeups <= P + ALLOWANCE, where P is the number of passes the
 *     virtual engine needs for the same timers (HRT_BASE_VIRTUAL base, the
 *     same offsets relative to 0, the same policy, started in the same
 *     order, driven by hrt_base_run(vb, tv_next(vb), 1) until
 *     empty; idle = 1 because hrt_base_loop always dispatches with idle = 1).
 *
 * Why ALLOWANCE is 0.  Notation: timers are totally ordered by (hard expiry,
 * start order) - the queue's order, the same on both bases since both start
 * them in the same order, and shifting every expiry by t0 changes nothing.
 * A pass at time t on a set S runs (src/base.c, no callback here starts or
 * cancels anything):
 *   OFF:  the longest prefix of S in that order whose soft expiries are all
 *         <= t (the leftmost run), so x in S runs iff every y <= x in S has
 *         soft(y) <= t;
 *   IDLE (idle = 1): the leftmost run, then the greedy walk: every x in S
 *         with soft(x) <= t.
 * Virtual engine: pass k runs at v_k = the least hard expiry left, so its
 * first timer always runs (soft <= hard = v_k); under either policy a pass
 * at v_k removes every timer with hard <= v_k (they head the order and their
 * soft expiries are <= v_k), so v_1 < v_2 < ... < v_P and every timer runs
 * at some v_k <= its hard expiry.
 * (a) Real pass at r on the remaining set R (any R): if x in R was run by
 *     the virtual engine at some v_k <= r, the real pass runs it.  IDLE:
 *     soft(x) <= v_k <= r.  OFF: every y <= x has soft(y) <= r (y ran in
 *     the virtual run at or before v_k, or was still queued at v_k and
 *     preceded x there; either way soft(y) <= v_k), so the real prefix
 *     reaches x.  Hence after a real pass at r, every timer left is one the
 *     virtual engine had not run by r.
 * (b) Real wake-up j, whose pass runs at r_j: let r' be the last real pass
 *     before it (r' = -infinity for the first; r' >= r_{j-1}).  After r'
 *     (or after the starts) the fd is armed at the least hard expiry a_j of
 *     the set R left, and nothing changes R until it fires (only this
 *     thread touches the base).  The timerfd never fires before a_j and
 *     dispatch reads the clock after the read, so r_j >= a_j.  The first
 *     timer x of R (hard a_j) had not run virtually by r' (by (a)) and runs
 *     virtually at some v_k <= a_j: some virtual pass lies in (r', r_j],
 *     hence in (r_{j-1}, r_j].
 * Those intervals are disjoint for different wake-ups, so wake-ups map one
 * to one onto virtual passes: wakeups <= P, allowance 0.  The argument
 * assumes every timerfd_settime succeeds (a failed arm makes the loop poll
 * and dispatch with a backoff, passes that are not wake-ups: the test
 * checks passes == wakeups) and that the clock the pass reads is the
 * timerfd's (both CLOCK_MONOTONIC).
 *
 * A corollary it also checks: the virtual engine needs the same number of
 * passes under OFF and IDLE.  The first timer y the leftmost run leaves has
 * soft(y) > v_k, so the greedy walk leaves it too; IDLE's remaining set is a
 * subset of OFF's (it removes a superset at the same instants), both hold
 * y, which heads OFF's: the next event is hard(y) under both, and by
 * induction the pass instants coincide.  When passes happen only at the
 * next hard expiry, the greedy walk runs timers earlier but cannot save a
 * wake-up; it saves them only when passes also happen at other instants.
 *
 * Prints, per policy: real wake-ups, real passes, virtual passes.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"
#include "wakeups.h"

#define MS WK_MS
#define NT 1000
#define DEADLINE (3000 * MS)    /* after t0; the watchdog stops the loop then */
#define ALLOWANCE 0             /* see the argument above */

static struct wk_set set;

static void run_policy(enum hrt_greedy policy, const char *name, uint64_t vpasses)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);
	struct hrt_stats st;
	hrt_time_t t0, started;
	int rc, timed_out, once = 0, never = 0, more = 0, early = 0;

	assert_non_null(b);
	assert_int_equal(hrt_base_set_greedy(b, policy), 0);
	/* The argument is about wake-ups at the earliest hard expiry: the
	 * timerfd path.  The coalesced one hands the kernel the whole window
	 * from the earliest soft expiry, and other interrupts on a busy CPU
	 * end it earlier, by design (test_coalesce checks that path). */
	assert_int_equal(hrt_base_set_coalesce(b, 0), 0);
	assert_true(hrt_base_fd(b) >= 0);
	t0 = wk_now();
	assert_int_equal(wk_start(&set, b, t0), 0);
	started = wk_now();
	rc = wk_loop(b, t0 + DEADLINE, &timed_out);

	hrt_base_get_stats(b, &st, sizeof(st));
	for (int i = 0; i < NT; i++) {
		const struct wk_timer *w = &set.timers[i];

		once += w->fired == 1;
		never += w->fired == 0;
		more += w->fired > 1;
		/* Early by the clock inside the callback or by the pass's now. */
		if (w->fired && (w->fired_at < w->soft || w->now_arg < w->soft) && early++ < 5)
			fprintf(stderr, "timer %d ran %lld ns before its soft expiry\n", i,
				(long long)(w->soft - (w->fired_at < w->now_arg ? w->fired_at
									: w->now_arg)));
	}
	printf("%-5s real wakeups %4" PRIu64 ", real passes %4" PRIu64 ", virtual passes %4" PRIu64
	       " (allowance %d); %d timers, %d ran once, %d never, %d more than once, %d early;"
	       " started in %.1f ms, %" PRIu64 " reprograms\n",
	       name, st.wakeups, st.passes, vpasses, ALLOWANCE, NT, once, never, more, early,
	       (double)(started - t0) / MS, st.reprograms);
	if (timed_out)
		fprintf(stderr, "%s: the watchdog had to stop the loop\n", name);
	assert_false(timed_out);
	assert_int_equal(rc, 0);
	assert_int_equal(early, 0);
	assert_int_equal(once, NT);
	assert_int_equal(st.expired, NT);
	assert_int_equal(hrt_base_count(b), 0);
	/* The argument's premises: every arm worked, each pass was a wake-up. */
	assert_int_equal(st.passes, st.wakeups);
	assert_int_equal(st.clock_jumps, 0);
	assert_true(st.wakeups >= 1);
	assert_true(st.wakeups <= vpasses + ALLOWANCE);
	hrt_base_free(b);
}

static uint64_t seed;
static uint64_t voff, vidle;    /* the model's passes under OFF and IDLE */
static size_t ran_off, ran_idle;

/* See the header: with passes only at the next event, greedy cannot save
 * one. */
static void test_greedy_saves_no_pass_when_passes_follow_next_event(void **state)
{
	(void)state;
	assert_int_equal(ran_off, NT);
	assert_int_equal(ran_idle, NT);
	assert_int_equal(voff, vidle);
}

static void test_loop_wakes_no_more_than_model_passes_greedy_off(void **state)
{
	(void)state;
	run_policy(HRT_GREEDY_OFF, "off", voff);
}

static void test_loop_wakes_no_more_than_model_passes_greedy_idle(void **state)
{
	(void)state;
	run_policy(HRT_GREEDY_IDLE, "idle", vidle);
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greedy_saves_no_pass_when_passes_follow_next_event),
		cmocka_unit_test(test_loop_wakes_no_more_than_model_passes_greedy_off),
		cmocka_unit_test(test_loop_wakes_no_more_than_model_passes_greedy_idle),
	};
	int failed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1) {
		char *end;

		errno = 0;
		seed = strtoull(argv[1], &end, 0);
		if (errno || *end || end == argv[1]) {
			fprintf(stderr, "usage: %s [seed]\n", argv[0]);
			return 2;
		}
	} else {
		seed = (uint64_t)wk_now() ^ ((uint64_t)getpid() << 32);
	}
	printf("seed %" PRIu64 " (replay: %s %" PRIu64 ")\n", seed, argv[0], seed);
	if (wk_set_init(&set, NT, seed)) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	voff = wk_virtual_passes(&set, HRT_GREEDY_OFF, &ran_off);
	vidle = wk_virtual_passes(&set, HRT_GREEDY_IDLE, &ran_idle);
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	wk_set_free(&set);
	if (failed)
		printf("failed with seed %" PRIu64 "\n", seed);
	return failed ? 1 : 0;
}
