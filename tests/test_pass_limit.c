/* SPDX-License-Identifier: MIT */
/*
 * test_pass_limit.c - hrt_base_set_pass_limit (hrt.h): a pass ends after
 * its bound of callbacks or of time, the rest stays due and runs in the
 * next passes, in queue order, the leftmost run first; the greedy walk
 * runs only in a pass that got through its leftmost run; a real base's fd
 * is readable at once after a cut pass; a hosted loop runs its host
 * between the cut passes of one burst; bad arguments.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"

#define MS 1000000LL
#define N 100

static struct hrt_timer tms[N];
static int order[N], ran;
static hrt_time_t spin_ns;      /* each callback's own time */

static hrt_time_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static enum hrt_restart note(struct hrt_timer *t, hrt_time_t now)
{
	hrt_time_t end = mono() + spin_ns;

	(void)now;
	if (ran < N)
		order[ran] = (int)(t - tms);
	ran++;
	while (spin_ns && mono() < end)
		;
	return HRT_NORESTART;
}

static struct hrt_stats stats(const struct hrt_base *b)
{
	struct hrt_stats s;

	assert_int_equal(hrt_base_get_stats(b, &s, sizeof(s)), 0);
	return s;
}

/* 100 due timers, 10 a pass: ten passes in queue order, nine cut. */
static void test_callback_bound_leaves_the_rest_due_in_order(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	unsigned cb;
	hrt_time_t ns;

	(void)state;
	ran = 0;
	spin_ns = 0;
	for (int i = 0; i < N; i++) {
		hrt_timer_init(&tms[i], note);
		/* hard in reverse of index: queue order is 99, 98, ... */
		assert_int_equal(hrt_timer_start_range(&tms[i], b, 10, 1000 - i, HRT_MODE_ABS), 0);
	}
	assert_int_equal(hrt_base_set_pass_limit(b, 10, 0), 0);
	assert_int_equal(hrt_base_get_pass_limit(b, &cb, &ns), 0);
	assert_int_equal(cb, 10);
	assert_int_equal(ns, 0);
	for (int p = 0; p < 10; p++) {
		assert_int_equal(hrt_base_run(b, 2000, 1), 10);
		assert_int_equal(hrt_base_count(b), N - 10 * (p + 1));
		assert_int_equal(stats(b).passes_cut, (uint64_t)(p < 9 ? p + 1 : 9));
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(order[i], N - 1 - i);
	assert_int_equal(hrt_base_run(b, 2000, 1), 0);
	assert_int_equal(hrt_base_free(b), 0);
}

/* Soft-due only (hard far): the greedy walk's work, bounded too, and the
 * walk is not started by a pass cut in its leftmost run. */
static void test_greedy_walk_bounded_and_after_the_leftmost_run(void **state)
{
	struct hrt_base *b = tv_virtual(0);

	(void)state;
	ran = 0;
	spin_ns = 0;
	for (int i = 0; i < 30; i++) {
		hrt_timer_init(&tms[i], note);
		/* 0..9 hard-due (leftmost run), 10..29 soft-due, hard far,
		 * behind a not-due one that ends the leftmost run */
		assert_int_equal(hrt_timer_start_range(&tms[i], b, i < 10 ? 10 + i : 100 + i,
						       i < 10 ? 0 : 10000, HRT_MODE_ABS), 0);
	}
	hrt_timer_init(&tms[30], note);
	assert_int_equal(hrt_timer_start_range(&tms[30], b, 5000, 0, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_set_pass_limit(b, 8, 0), 0);
	assert_int_equal(hrt_base_run(b, 1000, 1), 8);  /* cut in the leftmost run */
	assert_int_equal(stats(b).greedy_walks, 0);
	assert_int_equal(hrt_base_run(b, 1000, 1), 8);  /* 2 leftmost, 6 greedy */
	assert_int_equal(stats(b).greedy_walks, 1);
	assert_int_equal(stats(b).expired_greedy, 6);
	assert_int_equal(hrt_base_run(b, 1000, 1), 8);
	assert_int_equal(hrt_base_run(b, 1000, 1), 6);  /* the last of them */
	assert_int_equal(ran, 30);
	assert_int_equal(stats(b).passes_cut, 3);
	assert_int_equal(hrt_timer_cancel(&tms[30]), 1);
	assert_int_equal(hrt_base_free(b), 0);
}

/* A time bound: callbacks of 1 ms each, 3 ms a pass: each pass runs at
 * least one and stops soon after its bound (loosely: the machine may be
 * slow, never faster than the clock). */
static void test_time_bound_ends_a_pass_after_its_time(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	int passes = 0;
	ssize_t n;

	(void)state;
	ran = 0;
	spin_ns = MS;
	for (int i = 0; i < 20; i++) {
		hrt_timer_init(&tms[i], note);
		assert_int_equal(hrt_timer_start(&tms[i], b, 10, HRT_MODE_ABS), 0);
	}
	assert_int_equal(hrt_base_set_pass_limit(b, 0, 3 * MS), 0);
	while ((n = hrt_base_run(b, 10, 1)) > 0) {
		assert_true(n >= 1 && n <= 4);  /* 3 ms of 1 ms callbacks, the 4th starts at 3 */
		passes++;
	}
	assert_int_equal(ran, 20);
	print_message("  20 callbacks of 1 ms, a 3 ms bound: %d passes\n", passes);
	assert_true(passes >= 5);
	assert_int_equal(hrt_base_free(b), 0);
}

/* A real base: after a cut pass the fd is readable at once (the rest is
 * hard-due), and dispatch runs it. */
static void test_cut_pass_leaves_the_fd_readable(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);
	struct pollfd p;
	hrt_time_t now = tv_now(b);
	int fd = hrt_base_fd(b);

	(void)state;
	ran = 0;
	spin_ns = 0;
	assert_true(fd >= 0);
	for (int i = 0; i < 10; i++) {
		hrt_timer_init(&tms[i], note);
		assert_int_equal(hrt_timer_start(&tms[i], b, now - 1000 + i, HRT_MODE_ABS), 0);
	}
	assert_int_equal(hrt_base_set_pass_limit(b, 3, 0), 0);
	assert_int_equal(hrt_base_dispatch(b, 1), 3);
	p.fd = fd;
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 1000), 1);
	assert_int_equal(hrt_base_dispatch(b, 1), 3);
	assert_int_equal(hrt_base_dispatch(b, 1), 3);
	assert_int_equal(poll(&p, 1, 1000), 1);
	assert_int_equal(hrt_base_dispatch(b, 1), 1);
	assert_int_equal(ran, 10);
	assert_int_equal(poll(&p, 1, 0), 0);    /* nothing queued: disarmed */
	assert_int_equal(hrt_base_free(b), 0);
}

/* hrt_base_loop_host: a burst of 50 expiries, 5 a pass, and the host runs
 * between the passes (its run() count grows with them), coalescing on
 * and off. */
static int host_runs, host_fd;
static struct hrt_base *hb;

static int host_run(void *arg)
{
	(void)arg;
	host_runs++;
	if (ran >= 50)
		hrt_base_stop(hb);
	return 0;
}

static hrt_time_t host_timeout(void *arg)
{
	(void)arg;
	return -1;
}

static void test_hosted_loop_runs_its_host_between_cut_passes(void **state)
{
	(void)state;
	for (int co = 0; co < 2; co++) {
		hrt_time_t now;

		hb = tv_new(CLOCK_MONOTONIC, 0);
		host_fd = eventfd(0, EFD_CLOEXEC);
		assert_true(host_fd >= 0);
		assert_int_equal(hrt_base_set_coalesce(hb, co), 0);
		ran = host_runs = 0;
		spin_ns = 0;
		now = tv_now(hb);
		for (int i = 0; i < 50; i++) {
			hrt_timer_init(&tms[i], note);
			assert_int_equal(hrt_timer_start(&tms[i], hb, now + 20 * MS, HRT_MODE_ABS), 0);
		}
		assert_int_equal(hrt_base_set_pass_limit(hb, 5, 0), 0);
		alarm(30);
		assert_int_equal(hrt_base_loop_host(hb, host_fd, host_timeout, host_run, NULL), 0);
		alarm(0);
		print_message("  coalescing %s: 50 callbacks, 5 a pass: %d host turns, %llu passes cut\n",
			      co ? "on " : "off", host_runs, (unsigned long long)stats(hb).passes_cut);
		assert_int_equal(ran, 50);
		assert_true(stats(hb).passes_cut >= 9);
		assert_true(host_runs >= 10);           /* one between every two passes */
		close(host_fd);
		assert_int_equal(hrt_base_free(hb), 0);
	}
}

static void test_pass_limit_bad_arguments(void **state)
{
	struct hrt_base *b = tv_virtual(0);
	unsigned cb;
	hrt_time_t ns;

	(void)state;
	assert_int_equal(hrt_base_set_pass_limit(NULL, 1, 0), -EINVAL);
	assert_int_equal(hrt_base_set_pass_limit(b, 1, -1), -EINVAL);
	assert_int_equal(hrt_base_get_pass_limit(NULL, &cb, &ns), -EINVAL);
	assert_int_equal(hrt_base_get_pass_limit(b, NULL, &ns), -EINVAL);
	assert_int_equal(hrt_base_get_pass_limit(b, &cb, NULL), -EINVAL);
	assert_int_equal(hrt_base_get_pass_limit(b, &cb, &ns), 0);
	assert_int_equal(cb, 0);
	assert_int_equal(ns, 0);
	assert_int_equal(hrt_base_free(b), 0);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callback_bound_leaves_the_rest_due_in_order),
		cmocka_unit_test(test_greedy_walk_bounded_and_after_the_leftmost_run),
		cmocka_unit_test(test_time_bound_ends_a_pass_after_its_time),
		cmocka_unit_test(test_cut_pass_leaves_the_fd_readable),
		cmocka_unit_test(test_hosted_loop_runs_its_host_between_cut_passes),
		cmocka_unit_test(test_pass_limit_bad_arguments),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
