/* SPDX-License-Identifier: MIT */
/*
 * test_loop_yield.c - the loops' passes beside a host's I/O (hrt.h, "The
 * loops' passes"), as orders and counts, never timings:
 *  - hrt_base_loop_host: a host fd that became ready during a burst of
 *    soft-due callbacks is served before the burst's second callback (the
 *    default budget; each callback here outlasts it); hard-due timers all
 *    run before the host's turn however long they take, and so do those
 *    within HRT_PASS_URGENT_NS of their hard expiry; a wake-up with the
 *    host's fd ready runs a soft-due timer only after the host's turn, and
 *    with the fd ready for ever it still runs (nothing starves); a user's
 *    pass limit replaces the budget;
 *  - hrt_base_plan_sleep: its pass stops after the budget with *delay 0
 *    (the rest runs at the next plan, after the host's turn), and runs
 *    every hard-due timer at once.
 * A callback "outlasts the budget" by spinning on the clock past
 * HRT_PASS_BUDGET_NS: that makes the cut certain, it is not a bound the
 * test asserts.  The coalesced sleeps go through the loop's wait seam
 * (hrt__loop_set_pwait2), which ends each at its start, as a kernel with
 * other interrupts would: alone on a CPU it ends at the window's end.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"
#include "base.h"
#include "base_priv.h"
#include "loop.h"

#define MS 1000000LL
#define US 1000LL
#define SEC 1000000000LL
#define N 6

static hrt_time_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

/* Past a budget of ns, whatever the machine's speed. */
static void outlast(hrt_time_t ns)
{
	hrt_time_t end = mono() + 2 * ns;

	while (mono() < end)
		;
}

/* The log of one loop: 'T' a timer's callback, 'H' the host's turn that
 * found its fd ready (and drained it). */
struct run {
	struct hrt_base *b;
	int fd;                         /* the host's I/O: an eventfd */
	int drain;                      /* the host reads it (0: ready for ever) */
	int poke;                       /* each callback makes the fd ready */
	hrt_time_t spin;                /* each callback outlasts a budget of this */
	int left;                       /* callbacks to go; 0: stop */
	char log[256];
	size_t len;
	long turns;                     /* host turns */
	long waits;                     /* coalesced sleeps */
	long turns_at, waits_at;        /* both, at the first callback */
	hrt_time_t at[N];               /* each callback's now */
	struct hrt_timer t[N];
};

static struct run *cur;

static void note(struct run *r, char c)
{
	if (r->len + 1 < sizeof(r->log))
		r->log[r->len++] = c;
	r->log[r->len] = '\0';
}

static enum hrt_restart cb(struct hrt_timer *t, hrt_time_t now)
{
	struct run *r = cur;
	uint64_t one = 1;

	r->at[t - r->t] = now;
	if (!r->len) {
		r->turns_at = r->turns;
		r->waits_at = r->waits;
	}
	note(r, 'T');
	if (r->poke)
		assert_int_equal(write(r->fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	if (r->spin)
		outlast(r->spin);
	if (--r->left == 0)
		assert_int_equal(hrt_base_stop(r->b), 0);
	return HRT_NORESTART;
}

static int host_run(void *arg)
{
	struct run *r = arg;
	uint64_t v;

	r->turns++;
	if (r->drain && read(r->fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		note(r, 'H');
	return 0;
}

static hrt_time_t host_timeout(void *arg)
{
	(void)arg;
	return -1;
}

/* The sleep ends at its planned start (after any I/O already there). */
static int wait_seam(void *ctx, int epfd, struct epoll_event *evs, int n, hrt_time_t now,
		     hrt_time_t timeout)
{
	struct run *r = ctx;
	struct timespec ts = { (now + timeout) / SEC, (now + timeout) % SEC };
	long old;
	int got;

	r->waits++;
	if ((got = hrt__pwait2_sys(NULL, epfd, evs, n, now, 0)) != 0 || timeout == 0)
		return got;
	/* Exactly: the window's slack is the thread's during the wait. */
	old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	prctl(PR_SET_TIMERSLACK, (unsigned long)old, 0, 0, 0);
	return hrt__pwait2_sys(NULL, epfd, evs, n, now, 0);
}

static void run_init(struct run *r, int n)
{
	memset(r, 0, sizeof(*r));
	cur = r;
	r->b = tv_new(CLOCK_MONOTONIC, 0);
	assert_non_null(r->b);
	r->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(r->fd >= 0);
	r->drain = 1;
	r->left = n;
	hrt__loop_set_pwait2(r->b, wait_seam, r);
	for (int i = 0; i < n; i++)
		hrt_timer_init(&r->t[i], cb);
}

static void run_loop(struct run *r)
{
	assert_int_equal(hrt_base_loop_host(r->b, r->fd, host_timeout, host_run, r), 0);
	print_message("  log %s, %ld host turns, %ld sleeps\n", r->log, r->turns, r->waits);
}

static void run_done(struct run *r)
{
	for (int i = 0; i < N; i++)
		hrt_timer_cancel(&r->t[i]);
	close(r->fd);
	assert_int_equal(hrt_base_free(r->b), 0);
}

/* Timers i < n: soft at `soft`, hard at `hard` (absolute). */
static void start_all(struct run *r, int n, hrt_time_t soft, hrt_time_t hard)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(hrt_timer_start_range(&r->t[i], r->b, soft, hard - soft,
						       HRT_MODE_ABS), 0);
}

/* In the log, a 'T' that came while the host had unserved I/O from an
 * earlier callback: every 'T' after the first must follow an 'H'. */
static int served_between(const struct run *r)
{
	for (size_t i = 1; i < r->len; i++)
		if (r->log[i] == 'T' && r->log[i - 1] != 'H')
			return 0;
	return 1;
}

static void test_host_io_served_before_the_second_soft_due_callback(void **state)
{
	struct run r;
	hrt_time_t t0;
	struct hrt_stats st;

	(void)state;
	run_init(&r, N);
	r.poke = 1;
	r.spin = HRT_PASS_BUDGET_MAX_NS;
	t0 = mono();
	start_all(&r, N, t0 + 2 * MS, t0 + 2 * SEC);   /* one wide window */
	run_loop(&r);
	assert_int_equal(r.left, 0);
	assert_true(served_between(&r));
	assert_int_equal(hrt_base_get_stats(r.b, &st, sizeof(st)), 0);
	assert_true(st.passes_cut >= N - 1);
	run_done(&r);
}

/* Hard-due at the wake-up: all of them in one pass, the host after. */
static void test_hard_due_timers_never_wait_for_host_io(void **state)
{
	struct run r;
	hrt_time_t t0;

	(void)state;
	run_init(&r, N);
	r.poke = 1;
	r.spin = HRT_PASS_BUDGET_NS;
	t0 = mono();
	start_all(&r, N, t0 + 2 * MS, t0 + 2 * MS);    /* exact */
	run_loop(&r);
	assert_int_equal(r.left, 0);
	assert_int_equal(strncmp(r.log, "TTTTTT", N), 0);
	run_done(&r);
}

/* Soft-due, but within HRT_PASS_URGENT_NS of their hard expiry when the
 * window opens: hard-due for the budget, all in one pass - a deferral
 * would make them late under load. */
static void test_timers_near_their_hard_expiry_are_never_cut(void **state)
{
	struct run r;
	hrt_time_t t0;

	(void)state;
	run_init(&r, N);
	r.poke = 1;
	r.spin = HRT_PASS_BUDGET_NS;
	t0 = mono();
	start_all(&r, N, t0 + 2 * MS, t0 + 2 * MS + HRT_PASS_URGENT_NS / 2);
	run_loop(&r);
	assert_int_equal(r.left, 0);
	assert_int_equal(strncmp(r.log, "TTTTTT", N), 0);
	run_done(&r);
}

/* The host's fd ready for ever: the wake-up that finds the timer soft-due
 * (its window opened) runs only hard-due ones; the timer runs in the idle
 * pass right after the host's turn - one turn more than sleeps - and so
 * never starves. */
static void test_soft_due_timer_runs_after_the_hosts_turn_never_starves(void **state)
{
	struct run r;
	hrt_time_t t0, soft, hard;
	uint64_t one = 1;

	(void)state;
	run_init(&r, 1);
	r.drain = 0;
	assert_int_equal(write(r.fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	t0 = mono();
	soft = t0 + 2 * MS;
	hard = t0 + 200 * MS;
	start_all(&r, 1, soft, hard);
	run_loop(&r);
	assert_int_equal(r.left, 0);
	print_message("  ran %lld us after its soft expiry; %ld turns, %ld sleeps before it\n",
		      (long long)((r.at[0] - soft) / US), r.turns_at, r.waits_at);
	assert_true(r.at[0] >= soft);
	assert_int_equal(r.turns_at, r.waits_at + 1);
	run_done(&r);
}

/* The user's pass limit replaces the default budget: 3 callbacks a pass,
 * however long each takes. */
static void test_user_pass_limit_replaces_the_budget(void **state)
{
	struct run r;
	hrt_time_t t0;

	(void)state;
	run_init(&r, N);
	r.poke = 1;
	r.spin = HRT_PASS_BUDGET_MAX_NS;
	assert_int_equal(hrt_base_set_pass_limit(r.b, 3, 0), 0);
	t0 = mono();
	start_all(&r, N, t0 + 2 * MS, t0 + 2 * SEC);
	run_loop(&r);
	assert_int_equal(r.left, 0);
	assert_int_equal(strncmp(r.log, "TTTH", 4), 0);
	run_done(&r);
}

/* The plan path ------------------------------------------------------------ */

static void test_plan_sleep_pass_yields_after_the_budget(void **state)
{
	struct run r;
	hrt_time_t t0, delay;
	int calls = 0;

	(void)state;
	run_init(&r, N);
	r.spin = HRT_PASS_BUDGET_MAX_NS;
	t0 = mono();
	start_all(&r, N, t0 + 1 * MS, t0 + 2 * SEC);
	while (mono() < t0 + 2 * MS)
		usleep(500);
	/* One callback a plan; the window still open: no sleep. */
	while (r.left > 0 && calls < 2 * N) {
		/* 1 while timers are left (a window), 0 once none is. */
		int want = r.left > 1;

		assert_int_equal(hrt_base_plan_sleep(r.b, MS, &delay), want);
		calls++;
		assert_int_equal((int)r.len, calls);
		if (r.left > 0)
			assert_int_equal(delay, 0);
	}
	assert_int_equal(calls, N);
	assert_int_equal(hrt_base_plan_done(r.b), 0);
	run_done(&r);
}

/* The budget doubles after each pass it cut (up to its maximum) and is
 * the default again after one it did not: a backlog catches up. */
static void test_budget_doubles_after_a_cut_and_resets(void **state)
{
	struct run r;
	hrt_time_t t0, delay, want = HRT_PASS_BUDGET_NS;

	(void)state;
	run_init(&r, N);
	r.spin = HRT_PASS_BUDGET_MAX_NS;
	t0 = mono();
	start_all(&r, N, t0 + 1 * MS, t0 + 20 * SEC);
	while (mono() < t0 + 2 * MS)
		usleep(500);
	for (int i = 0; i < N - 2; i++) {
		assert_int_equal(hrt_base_plan_sleep(r.b, MS, &delay), 1);
		want = want >= HRT_PASS_BUDGET_MAX_NS / 2 ? HRT_PASS_BUDGET_MAX_NS : 2 * want;
		assert_int_equal(r.b->pass_budget, want);
	}
	r.spin = 0;             /* the last two fit: no cut */
	assert_int_equal(hrt_base_plan_sleep(r.b, MS, &delay), 0);
	assert_int_equal(r.left, 0);
	assert_int_equal(r.b->pass_budget, 0);
	assert_int_equal(hrt_base_plan_done(r.b), 0);
	run_done(&r);
}

static void test_plan_sleep_runs_every_hard_due_timer_at_once(void **state)
{
	struct run r;
	hrt_time_t t0, delay;

	(void)state;
	run_init(&r, N);
	r.spin = HRT_PASS_BUDGET_NS;
	t0 = mono();
	start_all(&r, N, t0 + 1 * MS, t0 + 1 * MS);
	while (mono() < t0 + 2 * MS)
		usleep(500);
	assert_true(hrt_base_plan_sleep(r.b, MS, &delay) >= 0);
	assert_int_equal(r.left, 0);
	assert_int_equal(hrt_base_plan_done(r.b), 0);
	run_done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_io_served_before_the_second_soft_due_callback),
		cmocka_unit_test(test_hard_due_timers_never_wait_for_host_io),
		cmocka_unit_test(test_timers_near_their_hard_expiry_are_never_cut),
		cmocka_unit_test(test_soft_due_timer_runs_after_the_hosts_turn_never_starves),
		cmocka_unit_test(test_user_pass_limit_replaces_the_budget),
		cmocka_unit_test(test_plan_sleep_pass_yields_after_the_budget),
		cmocka_unit_test(test_budget_doubles_after_a_cut_and_resets),
		cmocka_unit_test(test_plan_sleep_runs_every_hard_due_timer_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
