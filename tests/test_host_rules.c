/* SPDX-License-Identifier: MIT */
/*
 * test_host_rules.c - what a program that hosts another event loop relies
 * on (hrt.h: hrt_base_loop_host, hrt_base_plan_sleep), each found broken
 * on d4ebe1c by porting a libuv server:
 *  - the host's callbacks (and hrt's own) run with the thread's own timer
 *    slack: the window's is set only around hrt's sleep;
 *  - a thread slack of 2^31 ns and more (3 s, 5 s) is given back exactly,
 *    by hrt_base_loop, hrt_base_loop_host and plan_sleep + plan_done
 *    (PR_GET_TIMERSLACK returns an int);
 *  - a host fd closed while a dup keeps its file open leaves no stale
 *    registration: a later plain hrt_base_loop runs its timers, it does
 *    not spin on the dup's readiness;
 *  - hrt_base_plan_sleep coalesces CLOCK_MONOTONIC bases only, and refuses
 *    in hrt.h's entry-check order without making the timerfd.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define OWN 77000UL             /* the thread's own slack in most tests */

static hrt_time_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrt_time_t)ts.tv_sec * SEC + ts.tv_nsec;
}

/* The calling thread's slack, whole (the test's own reading). */
static unsigned long slack_now(void)
{
	char path[64], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/timerslack_ns", (long)syscall(SYS_gettid));
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	return strtoul(buf, NULL, 10);
}

static void slack_set(unsigned long ns)
{
	assert_int_equal(prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0), 0);
}

/* A host: an eventfd nobody writes, a turn that records the slack it runs
 * with and stops the loop after `turns`. */
struct host {
	struct hrt_base *b;
	int fd;
	long turns, stop_at, bad;
	unsigned long own;
};

static int host_run(void *arg)
{
	struct host *h = arg;

	if (slack_now() != h->own)
		h->bad++;
	if (++h->turns >= h->stop_at)
		hrt_base_stop(h->b);
	return 0;
}

static hrt_time_t host_timeout(void *arg)
{
	(void)arg;
	return 2 * MS;                  /* the host has timers too: a short deadline */
}

/* hrt's own callbacks: the same check, then re-armed with a wide window. */
static struct host *cb_host;
static long cb_runs;

static enum hrt_restart check_slack(struct hrt_timer *t, hrt_time_t now)
{
	if (slack_now() != cb_host->own)
		cb_host->bad++;
	cb_runs++;
	hrt_timer_start_range(t, cb_host->b, now + 3 * MS, 30 * MS, HRT_MODE_ABS);
	return HRT_NORESTART;
}

static void host_loop_with_slack(unsigned long own)
{
	struct host h = { 0 };
	struct hrt_timer t;

	h.b = tv_new(CLOCK_MONOTONIC, 0);
	h.fd = eventfd(0, EFD_CLOEXEC);
	h.stop_at = 60;
	h.own = own;
	assert_true(h.fd >= 0);
	cb_host = &h;
	cb_runs = 0;
	slack_set(own);
	hrt_timer_init(&t, check_slack);
	assert_int_equal(hrt_timer_start_range(&t, h.b, 2 * MS, 30 * MS, HRT_MODE_REL), 0);
	assert_int_equal(hrt_base_loop_host(h.b, h.fd, host_timeout, host_run, &h), 0);
	print_message("  hrt_base_loop_host, own slack %lu ns: %ld host turns, %ld callbacks, "
		      "%ld with another slack; after: %lu\n", own, h.turns, cb_runs, h.bad,
		      slack_now());
	assert_int_equal(h.bad, 0);
	assert_int_equal(slack_now(), own);
	hrt_timer_cancel(&t);
	close(h.fd);
	assert_int_equal(hrt_base_free(h.b), 0);
}

static void test_host_callbacks_run_with_the_threads_own_slack(void **state)
{
	(void)state;
	host_loop_with_slack(OWN);
	host_loop_with_slack(3 * SEC);          /* above 2^31 */
	host_loop_with_slack(5 * SEC);          /* above 2^32 */
	slack_set(OWN);
}

/* hrt_base_loop alone: its callbacks see the own slack, the loop gives it
 * back whole when it returns. */
static enum hrt_restart stop_after_20(struct hrt_timer *t, hrt_time_t now)
{
	check_slack(t, now);
	if (cb_runs >= 20)
		hrt_base_stop(cb_host->b);
	return HRT_NORESTART;
}

static void test_loop_gives_back_any_slack_exactly(void **state)
{
	static const unsigned long owns[] = { OWN, 3 * SEC, 5 * SEC };

	(void)state;
	for (unsigned i = 0; i < sizeof(owns) / sizeof(owns[0]); i++) {
		struct host h = { 0 };
		struct hrt_timer t;

		h.b = tv_new(CLOCK_MONOTONIC, 0);
		h.own = owns[i];
		cb_host = &h;
		cb_runs = 0;
		slack_set(owns[i]);
		hrt_timer_init(&t, stop_after_20);
		assert_int_equal(hrt_timer_start_range(&t, h.b, 2 * MS, 30 * MS, HRT_MODE_REL), 0);
		assert_int_equal(hrt_base_loop(h.b), 0);
		print_message("  hrt_base_loop, own slack %lu: %ld callbacks, %ld with another; "
			      "after: %lu\n", owns[i], cb_runs, h.bad, slack_now());
		assert_int_equal(h.bad, 0);
		assert_int_equal(slack_now(), owns[i]);
		hrt_timer_cancel(&t);
		assert_int_equal(hrt_base_free(h.b), 0);
	}
	slack_set(OWN);
}

/* plan_sleep sets the window's slack; plan_wake and plan_done give the
 * thread's own back whole. */
static void test_plan_gives_back_any_slack_exactly(void **state)
{
	static const unsigned long owns[] = { OWN, 3 * SEC, 5 * SEC };

	(void)state;
	for (unsigned i = 0; i < sizeof(owns) / sizeof(owns[0]); i++) {
		struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);
		struct hrt_timer t;
		hrt_time_t d;

		slack_set(owns[i]);
		hrt_timer_init(&t, check_slack);
		assert_int_equal(hrt_timer_start_range(&t, b, 500 * MS, SEC, HRT_MODE_REL), 0);
		assert_int_equal(hrt_base_plan_sleep(b, MS, &d), 1);
		assert_true(slack_now() != owns[i]);
		assert_int_equal(hrt_base_plan_wake(b), 0);
		assert_int_equal(slack_now(), owns[i]);
		assert_int_equal(hrt_base_plan_sleep(b, MS, &d), 1);
		assert_int_equal(hrt_base_plan_done(b), 0);
		assert_int_equal(slack_now(), owns[i]);
		hrt_timer_cancel(&t);
		assert_int_equal(hrt_base_free(b), 0);
	}
	slack_set(OWN);
}

/* Finding 5a alone: a slack of 2^31 ns or more (hrt run --slack 3s gives
 * one) is the thread's again after hrt_base_loop returns and after
 * plan_sleep + plan_done - whatever the slack while callbacks ran. */
static void test_slack_past_2_31_ns_comes_back_after_loop_and_plan_done(void **state)
{
	static const unsigned long owns[] = { 3 * SEC, 5 * SEC, (1UL << 31) + 1 };

	(void)state;
	for (unsigned i = 0; i < sizeof(owns) / sizeof(owns[0]); i++) {
		struct host h = { 0 };
		struct hrt_timer t;
		hrt_time_t d;

		h.b = tv_new(CLOCK_MONOTONIC, 0);
		h.own = owns[i];
		cb_host = &h;
		cb_runs = 0;
		slack_set(owns[i]);
		hrt_timer_init(&t, stop_after_20);
		assert_int_equal(hrt_timer_start_range(&t, h.b, 2 * MS, 30 * MS, HRT_MODE_REL), 0);
		assert_int_equal(hrt_base_loop(h.b), 0);
		assert_int_equal(slack_now(), owns[i]);
		hrt_timer_cancel(&t);
		hrt_timer_init(&t, check_slack);
		assert_int_equal(hrt_timer_start_range(&t, h.b, 500 * MS, SEC, HRT_MODE_REL), 0);
		assert_int_equal(hrt_base_plan_sleep(h.b, MS, &d), 1);
		assert_int_equal(hrt_base_plan_done(h.b), 0);
		assert_int_equal(slack_now(), owns[i]);
		hrt_timer_cancel(&t);
		assert_int_equal(hrt_base_free(h.b), 0);
	}
	slack_set(OWN);
}

/* The host closes its fd (a dup keeps the file open and readable) and
 * stops; the next plain loop must run its timer, not spin on the stale
 * registration.  Run in a thread, stopped from here after 3 s at most. */
struct spin {
	struct hrt_base *b;
	int fd, dup;
	long turns;
	int ran, rc;
};

static int closing_run(void *arg)
{
	struct spin *s = arg;

	if (++s->turns == 1) {
		close(s->fd);
		hrt_base_stop(s->b);
	}
	return 0;
}

static hrt_time_t no_deadline(void *arg)
{
	(void)arg;
	return -1;
}

static struct spin *spin_cur;

static enum hrt_restart spin_timer(struct hrt_timer *t, hrt_time_t now)
{
	(void)t, (void)now;
	spin_cur->ran = 1;
	hrt_base_stop(spin_cur->b);
	return HRT_NORESTART;
}

static void *plain_loop(void *arg)
{
	struct spin *s = arg;

	s->rc = hrt_base_loop(s->b);
	return NULL;
}

static void test_host_fd_closed_with_a_dup_open_leaves_no_stale_watch(void **state)
{
	for (int co = 0; co < 2; co++) {
		struct spin s = { 0 };
		struct hrt_timer t;
		uint64_t one = 1;
		hrt_time_t t0;
		pthread_t th;
		int i;

		(void)state;
		slack_set(OWN);
		s.b = tv_new(CLOCK_MONOTONIC, 0);
		assert_int_equal(hrt_base_set_coalesce(s.b, co), 0);
		s.fd = eventfd(0, EFD_CLOEXEC);
		s.dup = dup(s.fd);
		assert_true(s.fd >= 0 && s.dup >= 0);
		assert_int_equal(hrt_base_loop_host(s.b, s.fd, no_deadline, closing_run, &s), 0);
		/* The file stays open through the dup, and readable for ever. */
		assert_int_equal(write(s.dup, &one, sizeof(one)), (ssize_t)sizeof(one));
		spin_cur = &s;
		hrt_timer_init(&t, spin_timer);
		assert_int_equal(hrt_timer_start(&t, s.b, 30 * MS, HRT_MODE_REL), 0);
		assert_int_equal(pthread_create(&th, NULL, plain_loop, &s), 0);
		t0 = mono_ns();
		/* 3 s by the clock: a usleep may take the slack a test before left. */
		for (i = 0; i < 3000 && !__atomic_load_n(&s.ran, __ATOMIC_ACQUIRE) &&
			    mono_ns() - t0 < 3 * SEC; i++)
			usleep(1000);
		if (!__atomic_load_n(&s.ran, __ATOMIC_ACQUIRE))
			hrt_base_stop(s.b);     /* it spun: end it, and fail below */
		{
			struct timespec until;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += 5;
			if (pthread_timedjoin_np(th, NULL, &until) != 0)
				fail_msg("coalescing %s: the plain loop spins and does not stop "
					 "(a stale registration of the closed host fd)", co ? "on" : "off");
		}
		print_message("  coalescing %s: the timer %s\n", co ? "on" : "off",
			      s.ran ? "ran" : "never ran (the loop spun)");
		assert_int_equal(s.ran, 1);
		assert_int_equal(s.rc, 0);
		hrt_timer_cancel(&t);
		close(s.dup);
		assert_int_equal(hrt_base_free(s.b), 0);
	}
}

/* Only CLOCK_MONOTONIC bases coalesce: on the others plan_sleep says 0
 * (the timerfd, armed), and the slack stays the thread's. */
static void test_plan_sleep_coalesces_only_monotonic_bases(void **state)
{
	static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_MONOTONIC };

	(void)state;
	slack_set(OWN);
	for (int i = 0; i < 3; i++) {
		struct hrt_base *b = tv_new(clocks[i], 0);
		struct hrt_timer t;
		hrt_time_t d;
		int r;

		hrt_timer_init(&t, check_slack);
		assert_int_equal(hrt_timer_start_range(&t, b, 500 * MS, SEC, HRT_MODE_REL), 0);
		r = hrt_base_plan_sleep(b, MS, &d);
		assert_int_equal(r, clocks[i] == CLOCK_MONOTONIC);
		if (!r) {
			assert_int_equal(d, HRT_TIME_MAX);
			assert_int_equal(slack_now(), OWN);
		}
		assert_int_equal(hrt_base_plan_done(b), 0);
		hrt_timer_cancel(&t);
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* The process's open fds (a timerfd made shows as one more). */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* hrt.h's entry-check order, and nothing made by a refusal. */
static void test_plan_sleep_refuses_in_order_making_nothing(void **state)
{
	struct hrt_base *v = tv_virtual(0), *b = tv_new(CLOCK_MONOTONIC, 0);
	int fds = open_fds();
	hrt_time_t d;

	(void)state;
	assert_int_equal(hrt_base_plan_sleep(v, 0, NULL), -EINVAL);    /* arguments first */
	assert_int_equal(hrt_base_plan_sleep(v, MS, NULL), -EINVAL);
	assert_int_equal(hrt_base_plan_sleep(v, MS, &d), -EOPNOTSUPP);
	assert_int_equal(hrt_base_plan_wake(v), -EOPNOTSUPP);
	assert_int_equal(hrt_base_plan_done(v), -EOPNOTSUPP);
	assert_int_equal(hrt_base_plan_sleep(NULL, MS, &d), -EINVAL);
	assert_int_equal(hrt_base_plan_sleep(b, 0, &d), -EINVAL);
	assert_int_equal(hrt_base_plan_sleep(b, -1, &d), -EINVAL);
	assert_int_equal(hrt_base_plan_wake(b), -EPERM);                /* no planner */
	assert_int_equal(hrt_base_plan_done(b), -EPERM);
	assert_int_equal(open_fds(), fds);                              /* no timerfd made */
	assert_true(hrt_base_fd(b) >= 0);                               /* the count can see one */
	assert_int_equal(open_fds(), fds + 1);
	assert_int_equal(hrt_base_free(v), 0);
	assert_int_equal(hrt_base_free(b), 0);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_callbacks_run_with_the_threads_own_slack),
		cmocka_unit_test(test_loop_gives_back_any_slack_exactly),
		cmocka_unit_test(test_plan_gives_back_any_slack_exactly),
		cmocka_unit_test(test_slack_past_2_31_ns_comes_back_after_loop_and_plan_done),
		cmocka_unit_test(test_host_fd_closed_with_a_dup_open_leaves_no_stale_watch),
		cmocka_unit_test(test_plan_sleep_coalesces_only_monotonic_bases),
		cmocka_unit_test(test_plan_sleep_refuses_in_order_making_nothing),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("HRT_COALESCE");
	slack_set(OWN);
	alarm(120);                     /* a hung loop fails, not hangs */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
