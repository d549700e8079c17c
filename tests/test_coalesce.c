/* SPDX-License-Identifier: MIT */
/*
 * test_coalesce.c - the coalesced sleep of hrt_base_loop (src/loop.c) and
 * its window (hrt_base_wait_window, base.c):
 *  - the planning rule against brute force: every ranged sleep starts
 *    ending at or after the owner's soft expiry and ends (slack, or the
 *    kernel's own length/div widening, whichever is larger) by the earliest
 *    hard expiry; "no ranged sleep" only when none exists;
 *  - the window's soft end against a linear scan on virtual bases;
 *  - a real loop with re-arming range timers, every sleep checked through
 *    the per-base wait seam against the queued timers themselves, every
 *    callback never early; lateness past hard is only printed (the OS's);
 *  - the thread's timer slack is restored, ENOSYS falls back to the timerfd
 *    path (once per base), a narrow far window sleeps exactly, a pass run
 *    without sleeping (the window open already) counts as no wake-up, a
 *    start from another thread pokes a long sleep, HRT_COALESCE and the
 *    switch;
 *  - hrt_base_hold_fd keeps the timerfd disarmed for a host loop that
 *    sleeps for the window itself, gives it back armed, and arms it for a
 *    start from another thread that moves the earliest expiry earlier.
 * Seeds are fixed and printed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"
#include "base.h"
#include "loop.h"

#define MS 1000000LL
#define SEC 1000000000LL

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static hrt_time_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

/* The rule, by brute force over random instants: the window [soft, hard]
 * goes to the kernel whole, but for the slack's rounding (< 1/8) and the
 * kernel's own widening. */
static void test_ranged_sleep_starts_after_soft_ends_by_hard(void **state)
{
	int i;

	(void)state;
	printf("  seed %#llx\n", (unsigned long long)rng);
	for (i = 0; i < 200000; i++) {
		int div = rnd() & 1 ? 1000 : 200;
		hrt_time_t now = (hrt_time_t)(rnd() % (1000 * SEC));
		hrt_time_t scale = (hrt_time_t)1 << (rnd() % 40);
		hrt_time_t soft = now + (hrt_time_t)(rnd() % (uint64_t)scale) - scale / 4;
		hrt_time_t hard = soft + (hrt_time_t)(rnd() % (uint64_t)scale);
		hrt_time_t until = -1, slack = -1, est, fit;
		int r = hrt__coalesce_plan(now, soft, hard, div, &until, &slack);

		if (hard <= now) {
			assert_int_equal(r, 1);
			assert_true(until <= now);
			assert_int_equal(slack, 0);
			continue;
		}
		/* The documented bound: T <= now + (hard - now) * div / (div + 1). */
		fit = now + (hrt_time_t)((__int128)(hard - now) * div / (div + 1));
		if (!r) {
			if (soft <= fit)
				printf("  step %d: no sleep, but soft fits (now %lld soft %lld hard %lld)\n",
				       i, (long long)now, (long long)soft, (long long)hard);
			assert_false(soft <= fit);
			continue;
		}
		est = (until > now ? until - now : 0) / div;
		if (until < soft || slack < 1 || until + (slack > est ? slack : est) > hard ||
		    until - soft > (hard - soft) / 8 ||
		    (until < fit && until + slack != hard)) {
			printf("  step %d: now %lld soft %lld hard %lld div %d -> until %lld slack %lld\n",
			       i, (long long)now, (long long)soft, (long long)hard,
			       div, (long long)until, (long long)slack);
			fail();
			break;
		}
	}
}

struct tm_ {
	struct hrt_timer t;
	int fired;
	hrt_time_t at;
};

static enum hrt_restart nop_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	return HRT_NORESTART;
}

/* Window: it starts at the earliest soft expiry queued (exact up to the
 * search bound) and ends at the earliest hard one, and the public call
 * hands the kernel all of it but the rounding: with overlapping timers a
 * start near the latest soft expiry before the earliest hard one (the
 * narrow window) fails. */
static void test_window_is_earliest_soft_to_earliest_hard(void **state)
{
	static struct hrt_timer ts[2000];
	int round;

	(void)state;
	for (round = 0; round < 300; round++) {
		struct hrt_base *b = tv_virtual(0);
		int n = round < 250 ? 1 + (int)(rnd() % 30) : 2000, i, minh = -1, some;
		hrt_time_t owner, soft, hard, least = HRT_TIME_MAX, ws, wh;

		assert_int_equal(hrt_base_wait_window(b, &ws, &wh), 0);
		assert_int_equal(ws, HRT_TIME_MAX);
		assert_int_equal(wh, HRT_TIME_MAX);
		hrt_base_set_time(b, 1000 * MS);
		for (i = 0; i < n; i++) {
			hrt_time_t s = 1000 * MS + (hrt_time_t)(rnd() % (200 * MS));

			hrt_timer_init(&ts[i], nop_cb);
			hrt_timer_start_range(&ts[i], b, s, (hrt_time_t)(rnd() % (20 * MS)), HRT_MODE_ABS);
			if (minh < 0 || tv_hard(&ts[i]) < tv_hard(&ts[minh]))
				minh = i;
			if (tv_soft(&ts[i]) < least)
				least = tv_soft(&ts[i]);
		}
		assert_int_equal(hrt__base_window(b, &owner, &soft, &hard), 1);
		assert_int_equal(hard, tv_hard(&ts[minh]));
		assert_int_equal(owner, tv_soft(&ts[minh]));
		if (n <= 30)
			assert_int_equal(soft, least);
		for (i = 0, some = 0; i < n; i++)
			some |= tv_soft(&ts[i]) == soft;
		assert_true(some && soft >= least && soft <= owner);
		i = hrt_base_wait_window(b, &ws, &wh);
		assert_true(i == 0 || i == 1);
		if (i == 1) {
			assert_true(ws >= soft && wh <= hard && ws <= wh);
			/* Wide: the start within an eighth of the window. */
			assert_true(ws - soft <= (hard - soft) / 8);
		} else {
			assert_int_equal(ws, hard);
			assert_int_equal(wh, hard);
		}
		for (i = 0; i < n; i++)
			hrt_timer_cancel(&ts[i]);
		assert_int_equal(hrt_base_free(b), 0);
	}
	assert_int_equal(hrt_base_wait_window(NULL, &(hrt_time_t){ 0 }, &(hrt_time_t){ 0 }), -EINVAL);
}

/* A real loop; the seam checks every ranged sleep against the timers. */
#define NT 24
struct run {
	struct hrt_base *b;
	struct tm_ tm[NT];
	long calls, fired, early, late, bad, enosys, limit;
	long zero, zero_events;         /* waits with timeout 0; of them, with events */
	long slack_seen;                /* sleeps whose thread slack was ours */
	hrt_time_t worst_late;
	long orig_slack;
	struct hrt_timer *xt[2];        /* other timers the rule must see */
};

static struct run *cur;

static enum hrt_restart rearm_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct tm_ *m = HRT_CONTAINER_OF(t, struct tm_, t);
	struct run *r = cur;

	if (now < tv_soft(t))
		r->early++;
	if (now > tv_hard(t)) {
		r->late++;
		if (now - tv_hard(t) > r->worst_late)
			r->worst_late = now - tv_hard(t);
	}
	m->fired++;
	if (++r->fired >= r->limit) {
		hrt_base_stop(r->b);
		return HRT_NORESTART;
	}
	/* Ranges from 0 to 4 ms, 0.1 to 6 ms ahead. */
	hrt_timer_start_range(t, r->b, (hrt_time_t)(rnd() % (6 * MS)) + MS / 10,
			      (hrt_time_t)(rnd() % (4 * MS)), HRT_MODE_REL);
	return HRT_NORESTART;
}

static int check_wait(void *ctx, int epfd, struct epoll_event *evs, int n,
		      hrt_time_t now, hrt_time_t timeout)
{
	struct run *r = ctx;
	hrt_time_t hard = HRT_TIME_MAX, least = HRT_TIME_MAX, end, slack, est;
	int i;

	r->calls++;
	if (r->enosys) {
		errno = ENOSYS;
		return -1;
	}
	r->zero += timeout == 0;
	for (i = 0; i < NT + 2; i++) {
		struct hrt_timer *t = i < NT ? &r->tm[i].t : r->xt[i - NT];

		if (!t)
			continue;
		if (hrt_timer_is_queued(t) && tv_hard(t) < hard)
			hard = tv_hard(t);
		if (hrt_timer_is_queued(t) && tv_soft(t) < least)
			least = tv_soft(t);
	}
	slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (slack != r->orig_slack)
		r->slack_seen++;
	est = timeout / 1000;           /* this test runs at nice 0 */
	/* A zero timeout does not sleep: right only if a timer is due. */
	end = now + timeout + (slack > est ? slack : est);
	if (hard == HRT_TIME_MAX || now + timeout < least || (timeout && end > hard)) {
		if (r->bad++ < 5)
			fprintf(stderr, "  sleep now %lld +%lld slack %lld: soft %lld hard %lld\n",
				(long long)now, (long long)timeout, (long long)slack,
				(long long)least, (long long)hard);
	}
	n = hrt__pwait2_sys(NULL, epfd, evs, n, now, timeout);
	r->zero_events += timeout == 0 && n != 0;
	return n;
}

static void run_init(struct run *r, long limit)
{
	int i;

	memset(r, 0, sizeof(*r));
	r->b = tv_new(CLOCK_MONOTONIC, 0);
	r->limit = limit;
	r->orig_slack = 50000;
	prctl(PR_SET_TIMERSLACK, 50000UL, 0, 0, 0);
	hrt__loop_set_pwait2(r->b, check_wait, r);
	cur = r;
	for (i = 0; i < NT; i++) {
		hrt_timer_init(&r->tm[i].t, rearm_cb);
		hrt_timer_start_range(&r->tm[i].t, r->b, (hrt_time_t)(rnd() % (6 * MS)) + MS,
				      (hrt_time_t)(rnd() % (4 * MS)), HRT_MODE_REL);
	}
}

static void run_done(struct run *r)
{
	int i;

	for (i = 0; i < NT; i++)
		hrt_timer_cancel(&r->tm[i].t);
	hrt_base_free(r->b);
	cur = NULL;
}

static void test_loop_sleeps_within_every_timer_range(void **state)
{
	struct run r;
	struct hrt_stats s;

	(void)state;
	run_init(&r, 3000);
	assert_true(hrt_base_get_coalesce(r.b));
	assert_int_equal(hrt_base_loop(r.b), 0);
	hrt_base_get_stats(r.b, &s, sizeof(s));
	printf("  %ld callbacks, %ld ranged sleeps, %llu wake-ups, %ld past hard (worst %lld us)\n",
	       r.fired, r.calls, (unsigned long long)s.wakeups, r.late,
	       (long long)(r.worst_late / 1000));
	assert_true(r.fired >= 3000 && r.fired < 3000 + NT);  /* the stopping pass ends */
	assert_true(r.calls > 100);           /* it did sleep the coalesced way */
	assert_int_equal(r.bad, 0);             /* every sleep within the rule */
	assert_int_equal(r.early, 0);
	assert_true(r.slack_seen > 0);        /* it set the slack ... */
	assert_int_equal(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), 50000);  /* ... and put it back */
	/* hrt_base_fd's, the disarm as the loop starts coalescing and the
	 * hand-back: none for the 3000 starts (lazy, and NOTE mode). */
	printf("  %llu re-arms\n", (unsigned long long)s.reprograms);
	assert_true(s.reprograms <= 3);
	/* A pass run without sleeping (the window was open) is no wake-up. */
	printf("  %llu passes, %ld of them without a sleep\n", (unsigned long long)s.passes,
	       r.zero - r.zero_events);
	assert_int_equal(s.passes, s.wakeups + (uint64_t)(r.zero - r.zero_events));
	assert_int_equal(hrt_base_check(r.b, NULL, 0), 0);
	run_done(&r);
}

/* ENOSYS: the same loop runs on the timerfd path, the seam is asked once
 * per base, the slack is back. */
static void test_enosys_falls_back_to_timerfd_once_per_base(void **state)
{
	struct run r;
	struct hrt_stats s;
	long calls;

	(void)state;
	run_init(&r, 300);
	r.enosys = 1;
	assert_int_equal(hrt_base_loop(r.b), 0);
	assert_true(r.fired >= 300 && r.fired < 300 + NT);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.early, 0);
	hrt_base_get_stats(r.b, &s, sizeof(s));
	printf("  fallback: %llu re-arms for %llu passes\n", (unsigned long long)s.reprograms,
	       (unsigned long long)s.passes);
	assert_true(s.reprograms > 10 && s.reprograms + 2 >= s.passes);  /* the timerfd did the work */
	assert_int_equal(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), 50000);
	calls = r.calls;
	r.limit = 600;
	hrt_timer_start_range(&r.tm[0].t, r.b, MS, MS, HRT_MODE_REL);
	assert_int_equal(hrt_base_loop(r.b), 0);
	assert_int_equal(r.calls, calls);       /* remembered: no second try */
	assert_true(r.fired >= 600 && r.fired < 600 + NT);
	run_done(&r);
}

/* Off: the switch and the environment. */
static void test_coalesce_off_by_switch_and_environment(void **state)
{
	struct run r;
	struct hrt_base *b;

	(void)state;
	run_init(&r, 200);
	assert_int_equal(hrt_base_set_coalesce(r.b, 0), 0);
	assert_int_equal(hrt_base_get_coalesce(r.b), 0);
	assert_int_equal(hrt_base_loop(r.b), 0);
	assert_true(r.fired >= 200 && r.fired < 200 + NT);
	assert_int_equal(r.calls, 0);
	run_done(&r);
	assert_int_equal(hrt_base_set_coalesce(NULL, 1), -EINVAL);
	assert_int_equal(hrt_base_get_coalesce(NULL), -EINVAL);
	setenv("HRT_COALESCE", "off", 1);
	b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
	assert_int_equal(hrt_base_get_coalesce(b), 0);
	hrt_base_free(b);
	b = tv_new(CLOCK_MONOTONIC, 0);         /* no flag: the environment is not read */
	assert_int_equal(hrt_base_get_coalesce(b), 1);
	hrt_base_free(b);
	setenv("HRT_COALESCE", "on", 1);
	b = tv_new(CLOCK_MONOTONIC, HRT_BASE_ENV);
	assert_int_equal(hrt_base_get_coalesce(b), 1);
	hrt_base_free(b);
	unsetenv("HRT_COALESCE");
}

/* A window narrower than the kernel's widening of a long sleep: that sleep
 * is the exact timerfd one (no ranged wait), never early. */
static enum hrt_restart stop_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct tm_ *m = HRT_CONTAINER_OF(t, struct tm_, t);

	m->fired++;
	m->at = now;
	hrt_base_stop(cur->b);
	return HRT_NORESTART;
}

static void test_narrow_far_window_sleeps_exactly(void **state)
{
	struct run r;
	struct tm_ x;
	hrt_time_t soft;

	(void)state;
	run_init(&r, 1);
	for (int i = 0; i < NT; i++)
		hrt_timer_cancel(&r.tm[i].t);
	memset(&x, 0, sizeof(x));
	hrt_timer_init(&x.t, stop_cb);
	soft = mono() + 200 * MS;
	hrt_timer_start_range(&x.t, r.b, soft, 10000, HRT_MODE_ABS);  /* 10 us << 200 us */
	assert_int_equal(hrt_base_loop(r.b), 0);
	assert_int_equal(x.fired, 1);
	assert_true(x.at >= soft + 10000);    /* the timerfd fired at hard */
	assert_int_equal(r.calls, 0);
	assert_int_equal(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), 50000);
	run_done(&r);
}

/* A callback that overruns past another timer's soft expiry leaves the
 * window open when the pass ends: the loop runs the next pass at once,
 * which is a pass but no wake-up (no sleep ended, no interrupt). */
static long zero_waits;

static int count_wait(void *ctx, int epfd, struct epoll_event *evs, int n, hrt_time_t now,
		      hrt_time_t timeout)
{
	(void)ctx;
	n = hrt__pwait2_sys(NULL, epfd, evs, n, now, timeout);
	zero_waits += timeout == 0 && n == 0;
	return n;
}

static struct hrt_timer *spin_next;     /* started by the spinner */

/* Starts spin_next with a window [now + 1 ms, now + 21 ms] from the
 * callback's own now (so a late wake-up cannot make it due in this pass),
 * then overruns past its soft expiry and the slack's rounding. */
static enum hrt_restart spin_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct hrt_base *b = NULL;

	assert_int_equal(hrt_timer_get_base(t, &b), 0);
	hrt_timer_start_range(spin_next, b, now + MS, 20 * MS, HRT_MODE_ABS);
	while (mono() < now + 6 * MS)
		;
	return HRT_NORESTART;
}

static void test_pass_without_sleep_is_no_wakeup(void **state)
{
	struct run r;
	struct tm_ spin, x;
	struct hrt_stats s;
	hrt_time_t t0;

	(void)state;
	run_init(&r, 1);
	for (int i = 0; i < NT; i++)
		hrt_timer_cancel(&r.tm[i].t);
	hrt__loop_set_pwait2(r.b, count_wait, NULL);
	zero_waits = 0;
	memset(&spin, 0, sizeof(spin));
	memset(&x, 0, sizeof(x));
	hrt_timer_init(&spin.t, spin_cb);
	hrt_timer_init(&x.t, stop_cb);
	spin_next = &x.t;
	t0 = mono();
	hrt_timer_start_range(&spin.t, r.b, t0 + 2 * MS, 0, HRT_MODE_ABS);
	hrt_base_reset_stats(r.b);
	assert_int_equal(hrt_base_loop(r.b), 0);
	assert_int_equal(x.fired, 1);
	hrt_base_get_stats(r.b, &s, sizeof(s));
	printf("  %llu passes, %llu wake-ups, %ld passes without a sleep\n",
	       (unsigned long long)s.passes, (unsigned long long)s.wakeups, zero_waits);
	assert_true(zero_waits >= 1);
	assert_int_equal(s.passes, s.wakeups + (uint64_t)zero_waits);
	run_done(&r);
}

/* Another thread starts an earlier timer while the loop sleeps toward a
 * far window: the poke gets it run in time. */
struct poker {
	struct hrt_base *b;
	struct tm_ *m;
	hrt_time_t soft;
};

static void *poker_main(void *arg)
{
	struct poker *p = arg;
	struct timespec nap = { 0, 50 * MS };

	nanosleep(&nap, NULL);
	p->soft = mono() + 5 * MS;
	hrt_timer_start_range(&p->m->t, p->b, p->soft, MS, HRT_MODE_ABS);
	return NULL;
}

static void test_start_from_other_thread_wakes_long_sleep(void **state)
{
	struct run r;
	struct tm_ far, near;
	struct poker p;
	pthread_t th;

	(void)state;
	run_init(&r, 1);
	for (int i = 0; i < NT; i++)
		hrt_timer_cancel(&r.tm[i].t);
	memset(&far, 0, sizeof(far));
	memset(&near, 0, sizeof(near));
	hrt_timer_init(&far.t, nop_cb);
	hrt_timer_init(&near.t, stop_cb);
	hrt_timer_start_range(&far.t, r.b, 5 * SEC, SEC, HRT_MODE_REL);
	r.xt[0] = &far.t;
	r.xt[1] = &near.t;
	p.b = r.b;
	p.m = &near;
	assert_int_equal(pthread_create(&th, NULL, poker_main, &p), 0);
	assert_int_equal(hrt_base_loop(r.b), 0);
	pthread_join(th, NULL);
	assert_int_equal(near.fired, 1);
	assert_true(near.at >= p.soft);
	assert_true(near.at < p.soft + 1000 * MS);    /* not the far window's wake-up */
	assert_int_equal(r.bad, 0);
	assert_true(hrt_timer_is_queued(&far.t));
	hrt_timer_cancel(&far.t);
	run_done(&r);
}

/* What the timerfd holds: ns left, 0 if disarmed. */
static hrt_time_t tfd_left(int fd)
{
	struct itimerspec its;

	assert_int_equal(timerfd_gettime(fd, &its), 0);
	return its.it_value.tv_sec * SEC + its.it_value.tv_nsec;
}

static void test_hold_fd_keeps_timerfd_disarmed(void **state)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0), *vb = tv_virtual(0);
	struct hrt_timer t, u;
	struct pollfd pfd;
	hrt_time_t left;
	int fd;

	(void)state;
	assert_non_null(b);
	fd = hrt_base_fd(b);
	assert_true(fd >= 0);
	hrt_timer_init(&t, nop_cb);
	hrt_timer_init(&u, nop_cb);
	assert_int_equal(hrt_timer_start_range(&t, b, 50 * MS, 10 * MS, HRT_MODE_REL), 0);
	assert_true(tfd_left(fd) > 0);
	assert_int_equal(hrt_base_hold_fd(b, 1), 0);
	assert_int_equal(tfd_left(fd), 0);
	/* A later expiry arms nothing; a new earliest one arms the timerfd
	 * at it (a host asleep on the old plan must wake), until the next
	 * hold, before the host's next sleep, disarms it again; a due one
	 * then does not fire. */
	assert_int_equal(hrt_timer_start(&u, b, 100 * MS, HRT_MODE_REL), 0);
	assert_int_equal(tfd_left(fd), 0);
	assert_int_equal(hrt_timer_start(&u, b, 2 * MS, HRT_MODE_REL), 0);
	left = tfd_left(fd);
	assert_true(left > 0 && left <= 2 * MS);
	/* The earliest moving later again leaves it armed (early, not late). */
	assert_int_equal(hrt_timer_start(&u, b, 20 * MS, HRT_MODE_REL), 0);
	left = tfd_left(fd);
	assert_true(left > 0 && left <= 2 * MS);
	assert_int_equal(hrt_base_hold_fd(b, 1), 0);
	assert_int_equal(tfd_left(fd), 0);
	assert_int_equal(hrt_timer_start(&u, b, MS, HRT_MODE_REL), 0);
	assert_true(tfd_left(fd) > 0);
	assert_int_equal(hrt_base_hold_fd(b, 1), 0);
	assert_int_equal(tfd_left(fd), 0);
	assert_int_equal(hrt_base_fd(b), fd);
	pfd.fd = fd;
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 5), 0);
	/* hrt_base_loop would sleep on a disarmed fd: refused. */
	assert_int_equal(hrt_base_loop(b), -EBUSY);
	/* A pass still runs what is due. */
	assert_int_equal(hrt_base_run(b, mono(), 1), 1);
	/* Given back: armed at the earliest hard expiry. */
	assert_int_equal(hrt_base_hold_fd(b, 0), 0);
	left = tfd_left(fd);
	assert_true(left > 0 && left <= 60 * MS);
	assert_int_equal(hrt_base_hold_fd(b, 0), 0);
	/* Freed while held: the timerfd goes with it (the sanitizers see). */
	assert_int_equal(hrt_base_hold_fd(b, 1), 0);
	hrt_timer_cancel(&t);
	assert_int_equal(hrt_base_free(b), 0);
	assert_int_equal(hrt_base_hold_fd(vb, 1), -EOPNOTSUPP);
	assert_int_equal(hrt_base_hold_fd(NULL, 1), -EINVAL);
	assert_int_equal(hrt_base_free(vb), 0);
}

/* hrt.h (hrt_base_hold_fd): a host that planned its sleep for a far
 * window on a held fd, and sleeps on the fd until then, wakes by the hard
 * expiry of a timer another thread starts meanwhile. */
struct late_start {
	struct hrt_base *b;
	struct hrt_timer t;
	hrt_time_t hard;
};

static void *late_start_main(void *arg)
{
	struct late_start *ls = arg;
	struct timespec nap = { 0, 30 * MS };

	nanosleep(&nap, NULL);          /* the host sleeps by now */
	ls->hard = mono() + 20 * MS;
	hrt_timer_start_range(&ls->t, ls->b, ls->hard - 10 * MS, 10 * MS, HRT_MODE_ABS);
	return NULL;
}

static void test_hold_fd_start_from_other_thread_wakes_host(void **state)
{
	struct late_start ls = { .b = tv_new(CLOCK_MONOTONIC, 0) };
	struct hrt_timer far;
	struct pollfd pfd;
	hrt_time_t soft, hard, woke;
	pthread_t th;

	(void)state;
	assert_non_null(ls.b);
	hrt_timer_init(&far, nop_cb);
	hrt_timer_init(&ls.t, nop_cb);
	assert_int_equal(hrt_timer_start_range(&far, ls.b, 2 * SEC, 100 * MS, HRT_MODE_REL), 0);
	pfd.fd = hrt_base_fd(ls.b);
	pfd.events = POLLIN;
	assert_int_equal(hrt_base_hold_fd(ls.b, 1), 0);
	assert_int_equal(hrt_base_wait_window(ls.b, &soft, &hard), 1);
	assert_true(soft > mono() + SEC);
	assert_int_equal(pthread_create(&th, NULL, late_start_main, &ls), 0);
	/* The host's sleep, planned for the far window. */
	assert_int_equal(poll(&pfd, 1, (int)((soft - mono()) / MS)), 1);
	woke = mono();
	pthread_join(th, NULL);
	printf("  woke %.3f ms after the new hard expiry\n", (double)(woke - ls.hard) / 1e6);
	assert_true(woke >= ls.hard);
	assert_true(woke < ls.hard + 500 * MS);         /* not the far window's */
	assert_int_equal(hrt_base_dispatch(ls.b, 1), 1);
	assert_false(hrt_timer_is_queued(&ls.t));
	hrt_timer_cancel(&far);
	assert_int_equal(hrt_base_free(ls.b), 0);
}

/* hrt.h: a held timerfd refuses hrt_base_loop (-EBUSY), and a hold while
 * the loop runs is refused (-EBUSY): of a hold and a loop's start racing
 * each other exactly one wins.  The loop runs on a thread until stopped
 * after the hold returned, so both returning 0 means the loop ran on a
 * held base.  Before, the loop looked at the device without the lock and
 * installed itself later: a hold landing in between returned 0 and the
 * loop stacked on it, sleeping on a disarmed timerfd (issue 32, defect 1). */
struct hold_race {
	struct hrt_base *b;
	atomic_int go;
	int r;
};

static void *loop_racer(void *p)
{
	struct hold_race *h = p;

	atomic_store(&h->go, 1);        /* about to start */
	h->r = hrt_base_loop(h->b);
	return NULL;
}

static void test_hold_and_loop_start_racing_one_wins(void **state)
{
	int both = 0, holds = 0, loops = 0;

	(void)state;
	for (int i = 0; i < 1000; i++) {
		struct hold_race h = { .b = tv_new(CLOCK_MONOTONIC, 0), .r = 1 };
		pthread_t th;
		hrt_time_t t0;
		int r;

		assert_non_null(h.b);
		assert_true(hrt_base_fd(h.b) >= 0);
		assert_int_equal(hrt_base_set_coalesce(h.b, i % 2), 0);
		assert_int_equal(pthread_create(&th, NULL, loop_racer, &h), 0);
		while (!atomic_load(&h.go))
			;
		t0 = mono();            /* the hold anywhere in the loop's first 60 us */
		for (hrt_time_t d = (hrt_time_t)(rnd() % 60000); mono() - t0 < d;)
			;
		r = hrt_base_hold_fd(h.b, 1);
		assert_true(r == 0 || r == -EBUSY);
		assert_int_equal(hrt_base_stop(h.b), 0);
		assert_int_equal(pthread_join(th, NULL), 0);
		assert_true(h.r == 0 || h.r == -EBUSY);
		both += r == 0 && h.r == 0;
		holds += r == 0;
		loops += h.r == 0;
		assert_int_equal(hrt_base_free(h.b), 0);
	}
	printf("1000 races: the hold won %d, the loop ran %d, both %d\n", holds, loops, both);
	assert_int_equal(both, 0);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranged_sleep_starts_after_soft_ends_by_hard),
		cmocka_unit_test(test_window_is_earliest_soft_to_earliest_hard),
		cmocka_unit_test(test_loop_sleeps_within_every_timer_range),
		cmocka_unit_test(test_enosys_falls_back_to_timerfd_once_per_base),
		cmocka_unit_test(test_coalesce_off_by_switch_and_environment),
		cmocka_unit_test(test_narrow_far_window_sleeps_exactly),
		cmocka_unit_test(test_pass_without_sleep_is_no_wakeup),
		cmocka_unit_test(test_start_from_other_thread_wakes_long_sleep),
		cmocka_unit_test(test_hold_fd_keeps_timerfd_disarmed),
		cmocka_unit_test(test_hold_fd_start_from_other_thread_wakes_host),
		cmocka_unit_test(test_hold_and_loop_start_racing_one_wins),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("HRT_COALESCE");
	alarm(60);                      /* a hung loop fails, not hangs */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
