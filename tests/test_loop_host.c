/* SPDX-License-Identifier: MIT */
/*
 * test_loop_host.c - hrt's loop with another event loop inside it
 * (hrt_base_loop_host, src/loop.c) and the coalesced sleep planned for a
 * host that sleeps itself (hrt_base_plan_sleep / hrt_base_plan_done,
 * src/hostsleep.c), against the rules hrt.h writes down:
 *  - a fake host (an eventfd as its I/O, run/timeout callbacks that count):
 *    run() before every sleep, the host's deadline ends the sleep and is
 *    never early (both paths: the coalesced sleep, and the timerfd one with
 *    its milliseconds rounded up), a write to the host's fd wakes the loop
 *    and the next run() sees it, hrt's timers never early while the host
 *    runs beside them;
 *  - through the wait seam (hrt__loop_set_pwait2): the sleep is cut at the
 *    host's deadline (a window opening before it keeps its start, its slack
 *    cut; one after it gives way to a sleep until the deadline with the
 *    thread's own slack, never past a hard expiry), and the pass is idle
 *    only after a plain window sleep;
 *  - a host fd that never stops being readable does not starve hrt's
 *    timers; stops, errors, re-entry and bad arguments; a start from
 *    another thread; the thread's slack given back;
 *  - hrt_base_plan_sleep: the slack and delay it plans, the held timerfd,
 *    when it declines (and re-arms), one planner per base, bad arguments.
 * Timing bounds are generous (lateness is the OS's: printed, never
 * asserted tight); nothing here asserts speed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"
#include "base.h"
#include "loop.h"

#define MS 1000000LL
#define US 1000LL
#define SEC 1000000000LL
#define OWN_SLACK 77000L        /* the thread's own slack in these tests */

static hrt_time_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

static long slack_now(void)
{
	return prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
}

/* What the timerfd holds: ns left, 0 if disarmed. */
static hrt_time_t tfd_left(int fd)
{
	struct itimerspec its;

	assert_int_equal(timerfd_gettime(fd, &its), 0);
	return its.it_value.tv_sec * SEC + its.it_value.tv_nsec;
}

/* The fake host ------------------------------------------------------- */

struct host {
	struct hrt_base *b;
	int fd;                         /* an eventfd: the host's I/O */
	int drain;                      /* run() reads it */
	hrt_time_t end;                 /* its deadline (mono), HRT_TIME_MAX: none */
	int tmo_fixed;                  /* timeout() returns tmo, not end - now */
	hrt_time_t tmo;
	hrt_time_t tmo_at;              /* the clock timeout() last read */
	long runs, timeouts, waits;
	uint64_t got;                   /* what run() read from fd */
	long bad;                       /* rules broken, seen in the seam */
	int (*on_run)(struct host *h);  /* run()'s own part: its return is run's */
	int (*on_wait)(struct host *h, int epfd, struct epoll_event *evs, int n,
		       hrt_time_t now, hrt_time_t timeout);
	void *x;                        /* the test's */
};

static int host_run(void *arg)
{
	struct host *h = arg;
	uint64_t v;

	h->runs++;
	if (h->drain && read(h->fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		h->got += v;
	return h->on_run ? h->on_run(h) : 0;
}

static hrt_time_t host_timeout(void *arg)
{
	struct host *h = arg;

	h->timeouts++;
	h->tmo_at = mono();
	if (h->tmo_fixed)
		return h->tmo;
	if (h->end == HRT_TIME_MAX)
		return -1;
	return h->end > h->tmo_at ? h->end - h->tmo_at : 0;
}

/* Every coalesced sleep goes through here. */
static int host_wait(void *ctx, int epfd, struct epoll_event *evs, int n, hrt_time_t now,
		     hrt_time_t timeout)
{
	struct host *h = ctx;

	h->waits++;
	if (h->on_wait)
		return h->on_wait(h, epfd, evs, n, now, timeout);
	return hrt__pwait2_sys(NULL, epfd, evs, n, now, timeout);
}

static void host_init(struct host *h)
{
	memset(h, 0, sizeof(*h));
	h->b = tv_new(CLOCK_MONOTONIC, 0);
	assert_non_null(h->b);
	h->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert_true(h->fd >= 0);
	h->end = HRT_TIME_MAX;
	assert_int_equal(prctl(PR_SET_TIMERSLACK, (unsigned long)OWN_SLACK, 0, 0, 0), 0);
	hrt__loop_set_pwait2(h->b, host_wait, h);
}

static int host_loop(struct host *h)
{
	return hrt_base_loop_host(h->b, h->fd, host_timeout, host_run, h);
}

static void host_done(struct host *h)
{
	close(h->fd);
	assert_int_equal(hrt_base_free(h->b), 0);
}

struct tm_ {
	struct hrt_timer t;
	struct host *h;
	int fired;
	hrt_time_t at;
};

static enum hrt_restart nop_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	return HRT_NORESTART;
}

/* Records its run and stops the host's loop. */
static enum hrt_restart stop_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct tm_ *m = HRT_CONTAINER_OF(t, struct tm_, t);

	m->fired++;
	m->at = now;
	assert_int_equal(hrt_base_stop(m->h->b), 0);
	return HRT_NORESTART;
}

static void tm_init(struct tm_ *m, struct host *h, hrt_callback fn)
{
	memset(m, 0, sizeof(*m));
	m->h = h;
	hrt_timer_init(&m->t, fn);
}

/* The seam sleeps exactly `timeout` (its own slack 1 ns) and says the
 * sleep ended by itself: the kernel ending it at the window's start. */
static void sleep_exactly(hrt_time_t until)
{
	long old = slack_now();
	struct timespec ts = { until / SEC, until % SEC };

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	prctl(PR_SET_TIMERSLACK, (unsigned long)old, 0, 0, 0);
}

/* A host beside hrt's timers --------------------------------------------- */

#define NT 16
struct mix {
	struct tm_ tm[NT];
	long fired, early, late, limit, writes, host_fires;
	hrt_time_t worst_late;
	int tfd;
};

static enum hrt_restart mix_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct tm_ *m = HRT_CONTAINER_OF(t, struct tm_, t);
	struct mix *x = m->h->x;
	uint64_t one = 1;

	if (now < tv_soft(t))
		x->early++;
	if (now > tv_hard(t)) {
		x->late++;
		if (now - tv_hard(t) > x->worst_late)
			x->worst_late = now - tv_hard(t);
	}
	if (++x->fired % 7 == 0 && write(m->h->fd, &one, sizeof(one)) == (ssize_t)sizeof(one))
		x->writes++;            /* host I/O, for the next run() */
	if (x->fired >= x->limit) {
		hrt_base_stop(m->h->b);
		return HRT_NORESTART;
	}
	hrt_timer_start_range(t, m->h->b, (hrt_time_t)(unit_rng() % (6 * MS)) + MS / 10,
			      (hrt_time_t)(unit_rng() % (4 * MS)), HRT_MODE_REL);
	return HRT_NORESTART;
}

/* The host's own timer: a deadline 0.3 to 3.3 ms ahead, renewed when due. */
static int mix_run(struct host *h)
{
	struct mix *x = h->x;
	hrt_time_t now = mono();

	if (h->end == HRT_TIME_MAX || now >= h->end) {
		x->host_fires += h->end != HRT_TIME_MAX;
		h->end = now + 300 * US + (hrt_time_t)(unit_rng() % (3 * MS));
	}
	return 0;
}

/* Every sleep: after a run(), by the host's deadline, by the earliest hard
 * expiry (unless the timerfd, armed by then, ends it), and not before the
 * earliest soft expiry or the host's deadline, whichever is first. */
static int mix_wait(struct host *h, int epfd, struct epoll_event *evs, int n, hrt_time_t now,
		    hrt_time_t timeout)
{
	struct mix *x = h->x;
	hrt_time_t hard = HRT_TIME_MAX, least = HRT_TIME_MAX, end = now + timeout;
	hrt_time_t slack = slack_now(), est = timeout / 1000, left, first;
	/* hrt's deadline: timeout()'s answer (0 once h->end passed) from
	 * its own clock, read between tmo_at and now. */
	hrt_time_t host_end = h->end == HRT_TIME_MAX ? h->end
			      : (h->end > h->tmo_at ? h->end : h->tmo_at) + (now - h->tmo_at);
	int i, bad = 0;

	for (i = 0; i < NT; i++) {
		struct hrt_timer *t = &x->tm[i].t;

		if (hrt_timer_is_queued(t) && tv_hard(t) < hard)
			hard = tv_hard(t);
		if (hrt_timer_is_queued(t) && tv_soft(t) < least)
			least = tv_soft(t);
	}
	first = mono();                 /* before the read: left is H - later */
	left = tfd_left(x->tfd);
	bad |= h->runs != h->waits;
	bad |= end > host_end;
	bad |= timeout > 0 && hard != HRT_TIME_MAX && end + (slack > est ? slack : est) > hard &&
	       !(left > 0 && first + left <= hard);
	first = least < h->end ? least : h->end;
	bad |= end < first;
	if (bad && h->bad++ < 5)
		fprintf(stderr, "  sleep now %lld +%lld slack %lld: soft %lld hard %lld host %lld"
			" tfd %lld, runs %ld waits %ld\n", (long long)now, (long long)timeout,
			(long long)slack, (long long)least, (long long)hard, (long long)h->end,
			(long long)left, h->runs, h->waits);
	return hrt__pwait2_sys(NULL, epfd, evs, n, now, timeout);
}

static void test_host_runs_before_every_sleep_timers_never_early(void **state)
{
	struct host h;
	struct mix x;
	struct hrt_stats s;
	uint64_t rest = 0;
	int i;

	(void)state;
	host_init(&h);
	memset(&x, 0, sizeof(x));
	x.limit = 400;
	x.tfd = hrt_base_fd(h.b);
	assert_true(x.tfd >= 0);
	h.x = &x;
	h.drain = 1;
	h.on_run = mix_run;
	h.on_wait = mix_wait;
	for (i = 0; i < NT; i++) {
		tm_init(&x.tm[i], &h, mix_cb);
		hrt_timer_start_range(&x.tm[i].t, h.b, (hrt_time_t)(unit_rng() % (6 * MS)) + MS,
				      (hrt_time_t)(unit_rng() % (4 * MS)), HRT_MODE_REL);
	}
	assert_int_equal(host_loop(&h), 0);
	hrt_base_get_stats(h.b, &s, sizeof(s));
	if (read(h.fd, &rest, sizeof(rest)) != (ssize_t)sizeof(rest))
		rest = 0;               /* written after the last run() */
	printf("  %ld callbacks, %ld runs, %ld sleeps, %ld host deadlines, %llu passes;"
	       " %ld past hard (worst %lld us)\n", x.fired, h.runs, h.waits, x.host_fires,
	       (unsigned long long)s.passes, x.late, (long long)(x.worst_late / 1000));
	assert_true(x.fired >= x.limit && x.fired < x.limit + NT);
	assert_int_equal(x.early, 0);
	assert_int_equal(h.bad, 0);
	assert_true(h.waits > 50);              /* every sleep went through the seam */
	assert_true(x.host_fires > 5);
	assert_true(h.got > 0);
	assert_int_equal(h.got + rest, (uint64_t)x.writes);
	assert_int_equal(slack_now(), OWN_SLACK);
	for (i = 0; i < NT; i++)
		hrt_timer_cancel(&x.tm[i].t);
	host_done(&h);
}

/* The host's deadline --------------------------------------------------- */

/* run() keeps a deadline 2.5 ms ahead (not whole ms: the timerfd path
 * rounds up) and counts the runs before it; the stop after five. */
struct dl {
	long hits, early;
	hrt_time_t worst;
};

static int dl_run(struct host *h)
{
	struct dl *d = h->x;
	hrt_time_t now = mono();

	if (h->end != HRT_TIME_MAX) {
		if (now < h->end) {
			d->early++;
		} else {
			d->hits++;
			if (now - h->end > d->worst)
				d->worst = now - h->end;
		}
	}
	h->end = now + 2500 * US;
	if (d->hits == 5)
		assert_int_equal(hrt_base_stop(h->b), 0);
	return 0;
}

/* variant 0: nothing queued; 1: a far timer (the window after the
 * deadline); 2: coalescing off (the timerfd path, epoll_wait's ms). */
static void deadline_case(int variant)
{
	struct host h;
	struct dl d;
	struct tm_ far;

	host_init(&h);
	memset(&d, 0, sizeof(d));
	h.x = &d;
	h.on_run = dl_run;
	tm_init(&far, &h, nop_cb);
	if (variant >= 1)
		assert_int_equal(hrt_timer_start_range(&far.t, h.b, 10 * SEC, SEC, HRT_MODE_REL), 0);
	if (variant == 2)
		assert_int_equal(hrt_base_set_coalesce(h.b, 0), 0);
	assert_int_equal(host_loop(&h), 0);
	printf("  variant %d: %ld deadlines, %ld runs before one, %ld runs, %ld coalesced"
	       " sleeps, worst %lld us late\n", variant, d.hits, d.early, h.runs, h.waits,
	       (long long)(d.worst / 1000));
	assert_int_equal(d.hits, 5);
	assert_int_equal(d.early, 0);           /* nothing else woke the loop */
	assert_int_equal(h.runs, 6);
	assert_int_equal(h.timeouts, 5);        /* not after the stop */
	if (variant == 2)
		assert_int_equal(h.waits, 0);   /* epoll_wait, not the coalesced sleep */
	else
		assert_int_equal(h.waits, 5);
	assert_int_equal(slack_now(), OWN_SLACK);
	hrt_timer_cancel(&far.t);
	host_done(&h);
}

static void test_host_deadline_ends_sleep_never_early(void **state)
{
	(void)state;
	deadline_case(0);
	deadline_case(1);
}

static void test_timerfd_path_runs_host_deadline_rounded_up(void **state)
{
	(void)state;
	deadline_case(2);
}

/* A huge timeout is no limit, not a deadline in the past (now + t must not
 * overflow): the loop sleeps until hrt's timer, it does not spin. */
static void test_huge_host_timeout_is_no_limit(void **state)
{
	hrt_time_t huge[] = { HRT_TIME_MAX, HRT_TIME_MAX - 1, HRT_TIME_MAX / 2 + 1 };

	(void)state;
	for (unsigned i = 0; i < 2 * sizeof(huge) / sizeof(huge[0]); i++) {
		struct host h;
		struct tm_ x;

		host_init(&h);
		h.tmo_fixed = 1;
		h.tmo = huge[i / 2];
		assert_int_equal(hrt_base_set_coalesce(h.b, i % 2), 0);  /* both paths */
		tm_init(&x, &h, stop_cb);
		assert_int_equal(hrt_timer_start_range(&x.t, h.b, 20 * MS, MS, HRT_MODE_REL), 0);
		assert_int_equal(host_loop(&h), 0);
		printf("  timeout %lld, coalescing %u: %ld runs\n", (long long)huge[i / 2], i % 2,
		       h.runs);
		assert_int_equal(x.fired, 1);
		assert_true(h.runs <= 3);       /* the first, perhaps one per wake-up */
		host_done(&h);
	}
}

/* Host I/O ------------------------------------------------------------ */

/* Another thread acts 30 ms after it starts (the loop sleeps by then):
 * fn(w), at w->at. */
struct meanwhile {
	void (*fn)(struct meanwhile *w);
	struct host *h;
	struct tm_ *m;
	hrt_time_t at;
	pthread_t th;
};

static void *meanwhile_main(void *arg)
{
	struct meanwhile *w = arg;
	struct timespec nap = { 0, 30 * MS };

	nanosleep(&nap, NULL);
	w->at = mono();
	w->fn(w);
	return NULL;
}

static void meanwhile(struct meanwhile *w, void (*fn)(struct meanwhile *w), struct host *h,
		      struct tm_ *m)
{
	w->fn = fn;
	w->h = h;
	w->m = m;
	w->at = 0;
	assert_int_equal(pthread_create(&w->th, NULL, meanwhile_main, w), 0);
}

static void write_host_fd(struct meanwhile *w)
{
	uint64_t one = 1;

	if (write(w->h->fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		w->at = -1;
}

struct io_seen {
	hrt_time_t at;
};

static int io_run(struct host *h)
{
	struct io_seen *s = h->x;

	if (h->got && !s->at) {
		s->at = mono();
		assert_int_equal(hrt_base_stop(h->b), 0);
	}
	return 0;
}

/* No limit from the host, nothing due for 10 s (or nothing queued): only
 * the write can end the sleep. */
static void test_host_fd_write_wakes_loop_next_run_sees_it(void **state)
{
	(void)state;
	for (int variant = 0; variant < 2; variant++) {
		struct host h;
		struct io_seen s = { 0 };
		struct meanwhile w;
		struct tm_ far;

		host_init(&h);
		h.drain = 1;
		h.x = &s;
		h.on_run = io_run;
		tm_init(&far, &h, nop_cb);
		if (variant)
			assert_int_equal(hrt_timer_start_range(&far.t, h.b, 10 * SEC, SEC,
							       HRT_MODE_REL), 0);
		meanwhile(&w, write_host_fd, &h, NULL);
		assert_int_equal(host_loop(&h), 0);
		assert_int_equal(pthread_join(w.th, NULL), 0);
		printf("  %s: seen %.3f ms after the write, %ld runs\n",
		       variant ? "far timer" : "no timer", (double)(s.at - w.at) / 1e6, h.runs);
		assert_true(w.at > 0);
		assert_int_equal(h.got, 1);
		assert_true(s.at >= w.at);
		assert_true(s.at < w.at + SEC);         /* the write woke it, not the timer */
		assert_int_equal(h.runs, 2);            /* before the sleep, after the write */
		hrt_timer_cancel(&far.t);
		host_done(&h);
	}
}

/* A host fd that is readable on every wake-up (never drained) must not keep
 * hrt's timers from running: the loop reads the clock after each wait. */
struct spin {
	hrt_time_t giveup;
	int gave_up;
};

static int spin_run(struct host *h)
{
	struct spin *s = h->x;

	if (!s->gave_up && mono() > s->giveup) {
		s->gave_up = 1;
		hrt_base_stop(h->b);
	}
	return 0;
}

static void test_always_readable_host_fd_does_not_starve_timers(void **state)
{
	struct host h;
	struct spin s;
	struct tm_ x;
	hrt_time_t soft;
	uint64_t one = 1;

	(void)state;
	host_init(&h);
	h.x = &s;
	h.on_run = spin_run;
	assert_int_equal(write(h.fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	tm_init(&x, &h, stop_cb);
	soft = mono() + 20 * MS;
	s.giveup = soft + 2 * SEC;
	s.gave_up = 0;
	assert_int_equal(hrt_timer_start_range(&x.t, h.b, soft, 10 * MS, HRT_MODE_ABS), 0);
	assert_int_equal(host_loop(&h), 0);
	printf("  %ld runs; the timer ran %.3f ms after its soft expiry (hard: 10 ms)\n",
	       h.runs, (double)(x.at - soft) / 1e6);
	assert_false(s.gave_up);
	assert_int_equal(x.fired, 1);
	assert_true(x.at >= soft);
	hrt_timer_cancel(&x.t);
	host_done(&h);
}

/* Through the seam: the sleep asked for ------------------------------- */

struct seen {
	hrt_time_t now, timeout, slack, ws, wh, tmo_at;
	int ws_ok, stop_first;          /* stop at the first sleep (it ends at once) */
	long calls;
	uint64_t passes_at_2nd;
	int tfd;
	hrt_time_t tfd_left;
};

/* The first sleep: what was asked, and the window hrt_base_wait_window
 * gives now; the second: the passes so far, and the stop. */
static int record_wait(struct host *h, int epfd, struct epoll_event *evs, int n,
		       hrt_time_t now, hrt_time_t timeout)
{
	struct seen *s = h->x;
	struct hrt_stats st;

	if (++s->calls == 1) {
		s->now = now;
		s->timeout = timeout;
		s->slack = slack_now();
		s->tmo_at = h->tmo_at;
		s->ws_ok = hrt_base_wait_window(h->b, &s->ws, &s->wh);
		s->tfd_left = tfd_left(s->tfd);
		if (s->stop_first)
			hrt_base_stop(h->b);
	} else {
		hrt_base_get_stats(h->b, &st, sizeof(st));
		s->passes_at_2nd = st.passes;
		hrt_base_stop(h->b);
	}
	return hrt__pwait2_sys(NULL, epfd, evs, n, now, timeout);
}

/* A host whose timeout() is always `tmo`, one timer [soft, soft + range]
 * from now, a loop whose first sleep record_wait records. */
static void seam_loop(struct host *h, struct seen *s, struct tm_ *a, hrt_time_t tmo,
		      hrt_time_t soft, hrt_time_t range)
{
	host_init(h);
	h->x = s;
	h->on_wait = record_wait;
	h->tmo_fixed = 1;
	h->tmo = tmo;
	s->tfd = hrt_base_fd(h->b);
	tm_init(a, h, nop_cb);
	assert_int_equal(hrt_timer_start_range(&a->t, h->b, mono() + soft, range, HRT_MODE_ABS), 0);
	assert_int_equal(host_loop(h), 0);
}

/* A window opening before the host's deadline keeps its start; its slack
 * is cut to end at the deadline. */
static void test_window_before_host_deadline_keeps_start_slack_cut(void **state)
{
	struct host h;
	struct seen s = { .stop_first = 1 };
	struct tm_ a;

	(void)state;
	seam_loop(&h, &s, &a, 400 * MS, 200 * MS, 800 * MS);
	printf("  window [%lld, %lld] us, slept until %lld us with %lld us slack\n",
	       (long long)((s.ws - s.now) / 1000), (long long)((s.wh - s.now) / 1000),
	       (long long)(s.timeout / 1000), (long long)(s.slack / 1000));
	assert_int_equal(s.ws_ok, 1);
	assert_int_equal(s.now + s.timeout, s.ws);              /* its start */
	assert_true(s.slack < s.wh - s.ws);                     /* cut ... */
	assert_true(s.now + s.timeout + s.slack >= s.tmo_at + 400 * MS); /* ... at the deadline */
	assert_true(s.now + s.timeout + s.slack <= s.now + 400 * MS);
	assert_int_equal(s.tfd_left, 0);                        /* the timerfd stays out */
	assert_int_equal(slack_now(), OWN_SLACK);
	hrt_timer_cancel(&a.t);
	host_done(&h);
}

/* A window opening after the host's deadline gives way to a sleep until the
 * deadline with the thread's own slack; that wake-up runs no pass. */
static void test_window_after_host_deadline_sleeps_to_it_with_own_slack(void **state)
{
	struct host h;
	struct seen s = { 0 };
	struct tm_ a;

	(void)state;
	seam_loop(&h, &s, &a, 10 * MS, 500 * MS, 500 * MS);
	assert_int_equal(s.calls, 2);
	assert_true(s.now + s.timeout >= s.tmo_at + 10 * MS);  /* the deadline */
	assert_true(s.now + s.timeout <= s.now + 10 * MS);
	assert_int_equal(s.slack, OWN_SLACK);
	assert_int_equal(s.passes_at_2nd, 0);                  /* the window had not opened */
	assert_int_equal(a.fired, 0);
	assert_int_equal(slack_now(), OWN_SLACK);
	hrt_timer_cancel(&a.t);
	host_done(&h);
}

/* The sleep cut at the host's deadline keeps the thread's own slack only as
 * far as the window allowed: a thread slack (5 ms) wider than a narrow
 * ranged window (400 us, 100 ms ahead) must not carry the sleep past the
 * hard expiry. */
static void test_host_cut_sleep_never_ends_past_hard_expiry(void **state)
{
	struct host h;
	struct seen s = { 0 };
	struct tm_ a;
	/* at nice > 0 the kernel widens a sleep by its length / 200, not / 1000 */
	int niced = getpriority(PRIO_PROCESS, 0) > 0;
	hrt_time_t soft = mono() + 100 * MS, hard = soft + 400 * US + (niced ? 100 * MS / 200 : 0);
	hrt_time_t ws, wh, end, est;

	(void)state;
	host_init(&h);
	assert_int_equal(prctl(PR_SET_TIMERSLACK, 5000000UL, 0, 0, 0), 0);
	h.x = &s;
	h.on_wait = record_wait;
	s.tfd = hrt_base_fd(h.b);
	s.stop_first = 1;
	tm_init(&a, &h, nop_cb);
	assert_int_equal(hrt_timer_start_range(&a.t, h.b, soft, hard - soft, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_wait_window(h.b, &ws, &wh), 1);      /* ranged */
	h.end = ws - MS;                /* the host's deadline just before it */
	assert_int_equal(host_loop(&h), 0);
	end = s.now + s.timeout;
	est = s.timeout / (niced ? 200 : 1000);
	printf("  deadline %lld us before the window; slept to %lld us before hard, slack %lld us\n",
	       (long long)((ws - h.end) / 1000), (long long)((hard - end) / 1000),
	       (long long)(s.slack / 1000));
	assert_true(end <= ws);                 /* cut at the deadline */
	assert_true(end + (s.slack > est ? s.slack : est) <= hard || s.tfd_left > 0);
	assert_int_equal(slack_now(), 5000000);
	hrt_timer_cancel(&a.t);
	host_done(&h);
}

/* Idle or not: HRT_GREEDY_IDLE walks only in idle passes.  B (soft 5 ms,
 * hard 2 s) is soft-due long before A (soft 500, hard 600 ms), which is
 * first in queue order: only the greedy walk runs B in the window (which
 * opens at about 63 ms). */
struct idle {
	int mode;                       /* 0: plain; 1: the host fd turns
					 * ready; 2: the host's deadline ends it */
	struct hrt_stats at_b;          /* when B ran */
};

static int idle_wait(struct host *h, int epfd, struct epoll_event *evs, int n,
		     hrt_time_t now, hrt_time_t timeout)
{
	struct idle *x = h->x;
	uint64_t one = 1;

	if (x->mode == 2 && h->waits == 1) {    /* the sleep ends at the deadline */
		sleep_exactly(now + timeout + slack_now());
		return 0;
	}
	sleep_exactly(now + timeout);           /* the window opened */
	if (x->mode == 1 && h->waits == 1) {
		assert_int_equal(write(h->fd, &one, sizeof(one)), (ssize_t)sizeof(one));
		return hrt__pwait2_sys(NULL, epfd, evs, n, now, 0);
	}
	return 0;
}

static enum hrt_restart idle_b_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct tm_ *m = HRT_CONTAINER_OF(t, struct tm_, t);
	struct idle *x = m->h->x;

	hrt_base_get_stats(m->h->b, &x->at_b, sizeof(x->at_b));
	return stop_cb(t, now);
}

static void idle_case(struct idle *x, hrt_time_t host_tmo)
{
	struct host h;
	struct tm_ a, bt;
	hrt_time_t t0 = mono();

	host_init(&h);
	assert_int_equal(hrt_base_get_greedy(h.b), HRT_GREEDY_IDLE);
	h.x = x;
	h.drain = 1;
	h.on_wait = idle_wait;
	if (host_tmo >= 0) {
		h.tmo_fixed = 1;
		h.tmo = host_tmo;
	}
	tm_init(&a, &h, nop_cb);
	tm_init(&bt, &h, idle_b_cb);
	assert_int_equal(hrt_timer_start_range(&a.t, h.b, t0 + 500 * MS, 100 * MS, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_timer_start_range(&bt.t, h.b, t0 + 5 * MS, 2 * SEC, HRT_MODE_ABS), 0);
	hrt_base_reset_stats(h.b);
	assert_int_equal(host_loop(&h), 0);
	printf("  mode %d: B ran in pass %llu, %llu greedy walks\n", x->mode,
	       (unsigned long long)x->at_b.passes, (unsigned long long)x->at_b.greedy_walks);
	assert_int_equal(bt.fired, 1);
	assert_int_equal(a.fired, 0);
	hrt_timer_cancel(&a.t);
	host_done(&h);
}

static void test_pass_after_plain_window_sleep_is_idle(void **state)
{
	struct idle x = { 0 };

	(void)state;
	idle_case(&x, -1);
	assert_int_equal(x.at_b.passes, 1);     /* the first pass walked */
	assert_int_equal(x.at_b.greedy_walks, 1);
}

static void test_pass_after_host_fd_ready_is_not_idle(void **state)
{
	struct idle x = { .mode = 1 };

	(void)state;
	idle_case(&x, -1);
	assert_int_equal(x.at_b.passes, 2);     /* the first did not walk */
	assert_int_equal(x.at_b.greedy_walks, 1);
}

/* The window opens at about 63 ms; the host's deadline at 80 ms cuts its
 * slack, and the sleep ends there: host work is due, the pass not idle. */
static void test_pass_after_host_deadline_passed_is_not_idle(void **state)
{
	struct idle x = { .mode = 2 };

	(void)state;
	idle_case(&x, 80 * MS);
	assert_int_equal(x.at_b.passes, 2);
	assert_int_equal(x.at_b.greedy_walks, 1);
}

/* Stops, errors, re-entry --------------------------------------------- */

struct stop_at {
	long run;                       /* stop (or fail) on this run */
	int ret;                        /* run()'s return then; 0: stop */
	long slack_changed;             /* sleeps with a slack not the thread's */
};

/* Past this many runs a test that expected the loop to end fails rather
 * than hangs. */
#define BACKSTOP_RUNS 1000

static int stop_at_run(struct host *h)
{
	struct stop_at *s = h->x;

	if (h->runs >= BACKSTOP_RUNS)
		hrt_base_stop(h->b);
	if (h->runs != s->run)
		return 0;
	if (s->ret)
		return s->ret;
	assert_int_equal(hrt_base_stop(h->b), 0);
	return 0;
}

/* Ends the loop (stop, or s->ret) on the first run after a sleep with the
 * window's slack: the loop leaves with the thread's slack not its own. */
static int slack_run(struct host *h)
{
	struct stop_at *s = h->x;

	if (s->slack_changed)
		s->run = h->runs;
	return stop_at_run(h);
}

/* Counts the sleeps with the window's slack; the first ends at once. */
static int slack_wait(struct host *h, int epfd, struct epoll_event *evs, int n,
		      hrt_time_t now, hrt_time_t timeout)
{
	struct stop_at *s = h->x;

	if (slack_now() != OWN_SLACK && s->slack_changed++ == 0)
		return 0;
	return hrt__pwait2_sys(NULL, epfd, evs, n, now, timeout);
}

static void test_run_error_ends_loop_with_it(void **state)
{
	struct host h;
	struct stop_at s = { 3, -EIO, 0 };
	struct tm_ backstop;

	(void)state;
	host_init(&h);
	h.x = &s;
	h.on_run = stop_at_run;
	h.end = mono() + MS;            /* a deadline: sleeps that end */
	tm_init(&backstop, &h, stop_cb);        /* a loop that went on ends */
	assert_int_equal(hrt_timer_start_range(&backstop.t, h.b, 500 * MS, MS, HRT_MODE_REL), 0);
	assert_int_equal(host_loop(&h), -EIO);
	assert_int_equal(h.runs, 3);
	hrt_timer_cancel(&backstop.t);
	/* The loop is free again. */
	s.ret = 0;
	s.run = 4;
	assert_int_equal(host_loop(&h), 0);
	assert_int_equal(h.runs, 4);
	host_done(&h);
}

static void test_stop_from_run_or_callback_returns_zero(void **state)
{
	struct host h;
	struct stop_at s = { 1, 0, 0 };
	struct tm_ x;

	(void)state;
	host_init(&h);
	h.x = &s;
	h.on_run = stop_at_run;
	assert_int_equal(host_loop(&h), 0);
	assert_int_equal(h.runs, 1);            /* returns after that iteration */
	assert_int_equal(h.waits, 0);
	s.run = -1;
	tm_init(&x, &h, stop_cb);
	assert_int_equal(hrt_timer_start_range(&x.t, h.b, 5 * MS, MS, HRT_MODE_REL), 0);
	assert_int_equal(host_loop(&h), 0);
	assert_int_equal(x.fired, 1);
	host_done(&h);
}

/* A stop asked while no loop runs is kept: the loop returns 0 at once,
 * before the host's run() (loop_turn takes the stop first). */
static void test_stop_before_loop_returns_at_once_without_run(void **state)
{
	struct host h;
	struct stop_at s = { 2, 0, 0 };

	(void)state;
	host_init(&h);
	h.x = &s;
	h.on_run = stop_at_run;
	h.end = mono() + MS;
	assert_int_equal(hrt_base_stop(h.b), 0);
	assert_int_equal(host_loop(&h), 0);
	assert_int_equal(h.runs, 0);
	assert_int_equal(h.timeouts, 0);
	/* Taken: the next loop runs until its own stop. */
	assert_int_equal(host_loop(&h), 0);
	assert_int_equal(h.runs, 2);
	host_done(&h);
}

/* From run(): no second loop, no hold of the timerfd, no plan. */
struct reenter {
	int loop, host, hold, plan, plan_done;
};

static int reenter_run(struct host *h)
{
	struct reenter *r = h->x;
	hrt_time_t d;

	r->loop = hrt_base_loop(h->b);
	r->host = hrt_base_loop_host(h->b, h->fd, host_timeout, host_run, h);
	r->hold = hrt_base_hold_fd(h->b, 1);
	r->plan = hrt_base_plan_sleep(h->b, MS, &d);
	r->plan_done = hrt_base_plan_done(h->b);
	assert_int_equal(hrt_base_stop(h->b), 0);
	return 0;
}

static void test_reentry_from_run_is_busy(void **state)
{
	struct host h;
	struct reenter r = { 0 };
	struct tm_ wide;

	(void)state;
	host_init(&h);
	h.x = &r;
	h.on_run = reenter_run;
	tm_init(&wide, &h, nop_cb);     /* a wide window: the plan would hold */
	assert_int_equal(hrt_timer_start_range(&wide.t, h.b, SEC, SEC, HRT_MODE_REL), 0);
	assert_int_equal(host_loop(&h), 0);
	assert_int_equal(h.runs, 1);            /* not the nested loops' */
	assert_int_equal(r.loop, -EBUSY);
	assert_int_equal(r.host, -EBUSY);
	assert_int_equal(r.hold, -EBUSY);
	assert_int_equal(r.plan, -EBUSY);
	assert_int_equal(r.plan_done, -EPERM);  /* a refusal: never the planner */
	assert_int_equal(slack_now(), OWN_SLACK);
	/* After it, hrt_base_loop is free. */
	assert_int_equal(hrt_base_stop(h.b), 0);
	assert_int_equal(hrt_base_loop(h.b), 0);
	hrt_timer_cancel(&wide.t);
	host_done(&h);
}

static int fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* An fd's kind: 1 an eventfd, 2 an epoll fd, else 0. */
static int fd_kind(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = 0;
	return strcmp(link, "anon_inode:[eventfd]") == 0 ? 1
	       : strcmp(link, "anon_inode:[eventpoll]") == 0 ? 2 : 0;
}

/* hrt.h's rule broken: the host closes its fd while the loop runs.  The
 * epoll forgets a closed fd by itself, so the loop goes on (the host's run
 * and deadline still drive it), hrt's timers still run in their windows,
 * and the loop returns 0 at its stop, nothing read from a reused number. */
static int close_run(struct host *h)
{
	if (h->runs == 2) {
		close(h->fd);
		h->fd = open("/dev/null", O_RDONLY | O_CLOEXEC);  /* the number reused */
		assert_true(h->fd >= 0);
	}
	return 0;
}

static void test_host_fd_closed_mid_loop_loses_nothing(void **state)
{
	struct host h;
	struct tm_ a;
	hrt_time_t soft;

	(void)state;
	host_init(&h);
	h.on_run = close_run;
	h.end = mono() + 5 * MS;        /* a host deadline: more than one turn */
	tm_init(&a, &h, stop_cb);
	soft = mono() + 30 * MS;
	assert_int_equal(hrt_timer_start_range(&a.t, h.b, soft, 5 * MS, HRT_MODE_ABS), 0);
	assert_int_equal(host_loop(&h), 0);
	assert_int_equal(a.fired, 1);
	assert_true(a.at >= soft);
	assert_true(h.runs > 2);
	assert_int_equal(hrt_base_count(h.b), 0);
	host_done(&h);
}

static void test_bad_host_arguments_rejected(void **state)
{
	struct host h;
	struct stop_at s = { 1, 0, 0 };
	struct hrt_base *vb = tv_virtual(0);
	unsigned char before[1024];
	int tfd, own[2], nown = 0;
	FILE *f;

	(void)state;
	host_init(&h);
	h.x = &s;
	h.on_run = stop_at_run;
	tfd = hrt_base_fd(h.b);
	assert_true(tfd >= 0);
	/* What is open before hrt's epoll fd and eventfd exist (the first
	 * call that gets past the arguments makes them). */
	for (int i = 0; i < 1024; i++)
		before[i] = (unsigned char)fd_open(i);
	assert_int_equal(hrt_base_loop_host(h.b, -1, host_timeout, host_run, &h), -EINVAL);
	assert_int_equal(hrt_base_loop_host(h.b, h.fd, NULL, host_run, &h), -EINVAL);
	assert_int_equal(hrt_base_loop_host(h.b, h.fd, host_timeout, NULL, &h), -EINVAL);
	assert_int_equal(hrt_base_loop_host(h.b, tfd, host_timeout, host_run, &h), -EINVAL);
	assert_int_equal(hrt_base_loop_host(NULL, h.fd, host_timeout, host_run, &h), -EINVAL);
	assert_int_equal(hrt_base_loop_host(vb, h.fd, host_timeout, host_run, &h), -EOPNOTSUPP);
	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(hrt_base_loop_host(h.b, fileno(f), host_timeout, host_run, &h), -EPERM);
	fclose(f);
	assert_int_equal(h.runs, 0);
	assert_int_equal(host_loop(&h), 0);
	assert_int_equal(h.runs, 1);
	for (int i = 0; i < 1024; i++)         /* hrt's: new, one of each kind */
		if (fd_open(i) && !before[i] && fd_kind(i) && nown < 2)
			own[nown++] = i;
	assert_int_equal(nown, 2);
	assert_int_equal(fd_kind(own[0]) + fd_kind(own[1]), 3);
	for (int i = 0; i < nown; i++)
		assert_int_equal(hrt_base_loop_host(h.b, own[i], host_timeout, host_run, &h),
				 -EINVAL);
	assert_int_equal(h.runs, 1);
	s.run = 2;
	assert_int_equal(host_loop(&h), 0);     /* none left the loop taken */
	assert_int_equal(h.runs, 2);
	assert_int_equal(hrt_base_free(vb), 0);
	host_done(&h);
}

/* Another thread starts a timer while the hosted loop sleeps toward a far
 * window with no host deadline: the poke gets it run in time. */
static void start_near(struct meanwhile *w)
{
	w->at += 5 * MS;                /* its soft expiry */
	hrt_timer_start_range(&w->m->t, w->h->b, w->at, MS, HRT_MODE_ABS);
}

static void test_start_from_other_thread_wakes_hosted_sleep(void **state)
{
	(void)state;
	for (int variant = 0; variant < 2; variant++) {
		struct host h;
		struct tm_ far, near;
		struct meanwhile w;

		host_init(&h);
		if (variant)
			h.end = mono() + 5 * SEC;       /* a far host deadline too */
		tm_init(&far, &h, nop_cb);
		tm_init(&near, &h, stop_cb);
		assert_int_equal(hrt_timer_start_range(&far.t, h.b, 5 * SEC, SEC, HRT_MODE_REL), 0);
		meanwhile(&w, start_near, &h, &near);
		assert_int_equal(host_loop(&h), 0);
		assert_int_equal(pthread_join(w.th, NULL), 0);
		printf("  ran %.3f ms after its soft expiry\n", (double)(near.at - w.at) / 1e6);
		assert_int_equal(near.fired, 1);
		assert_true(near.at >= w.at);
		assert_true(near.at < w.at + SEC);      /* not the far window's */
		assert_true(hrt_timer_is_queued(&far.t));
		hrt_timer_cancel(&far.t);
		host_done(&h);
	}
}

/* The loop sets the thread's slack for its windows and gives it back when
 * it returns, stopped or failed. */
static void test_thread_slack_restored_however_host_loop_ends(void **state)
{
	(void)state;
	for (int variant = 0; variant < 2; variant++) {
		struct host h;
		struct stop_at s = { -1, variant ? -EIO : 0, 0 };
		struct tm_ wide[4];

		host_init(&h);
		h.x = &s;
		h.on_run = slack_run;
		h.on_wait = slack_wait;
		for (int i = 0; i < 4; i++) {   /* windows of 40 ms: slack set */
			tm_init(&wide[i], &h, nop_cb);
			assert_int_equal(hrt_timer_start_range(&wide[i].t, h.b, (i + 5) * 10 * MS,
							       40 * MS, HRT_MODE_REL), 0);
		}
		assert_int_equal(host_loop(&h), variant ? -EIO : 0);
		printf("  %s after %ld sleep(s), the last with the window's slack\n",
		       variant ? "-EIO" : "stop", h.waits);
		assert_int_equal(s.slack_changed, 1);
		assert_int_equal(s.run, h.runs);        /* ended after that sleep */
		assert_int_equal(slack_now(), OWN_SLACK);
		for (int i = 0; i < 4; i++)
			hrt_timer_cancel(&wide[i].t);
		host_done(&h);
	}
}

/* hrt_base_plan_sleep ------------------------------------------------- */

static struct hrt_base *plan_base(int *fd)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);

	assert_non_null(b);
	*fd = hrt_base_fd(b);
	assert_true(*fd >= 0);
	assert_int_equal(prctl(PR_SET_TIMERSLACK, (unsigned long)OWN_SLACK, 0, 0, 0), 0);
	return b;
}

/* 1: delay a multiple of res, the slack what is left of the window after
 * the rounding less hrt.h's 20 us, the timerfd disarmed; done: the slack given
 * back, the timerfd armed at the earliest hard expiry. */
static void test_plan_sleep_wide_window_holds_fd_sets_slack(void **state)
{
	struct hrt_timer a;
	hrt_time_t ws, wh, t0, t1, d = 0, res[] = { MS, 3 * MS, 1 }, hard, left;
	int fd;
	struct hrt_base *b = plan_base(&fd);

	(void)state;
	hrt_timer_init(&a, nop_cb);
	t0 = mono();
	hard = t0 + 400 * MS;
	assert_int_equal(hrt_timer_start_range(&a, b, t0 + 100 * MS, 300 * MS, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_wait_window(b, &ws, &wh), 1);
	for (unsigned i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
		long slack;

		t0 = mono();
		assert_int_equal(hrt_base_plan_sleep(b, res[i], &d), 1);
		t1 = mono();
		slack = slack_now();
		printf("  res %lld: delay %lld us, slack %ld us\n", (long long)res[i],
		       (long long)(d / 1000), slack / 1000);
		assert_int_equal(d % res[i], 0);
		assert_true(t1 + d >= ws);              /* not before the window */
		assert_true(t0 + d < ws + res[i]);      /* its start rounded up */
		assert_true(slack >= wh - (t1 + d) - 20 * US);
		assert_true(slack <= wh - (t0 + d) - 20 * US);
		assert_int_equal(tfd_left(fd), 0);
	}
	assert_int_equal(hrt_base_plan_done(b), 0);
	assert_int_equal(slack_now(), OWN_SLACK);
	t0 = mono();
	left = tfd_left(fd);
	assert_true(left > 0 && t0 + left <= hard);
	hrt_timer_cancel(&a);
	assert_int_equal(hrt_base_free(b), 0);
}

/* 0, *delay HRT_TIME_MAX, the thread's own slack, the timerfd armed at the
 * earliest hard expiry: a window under 200 us after the rounding, one the
 * rounding moves past, coalescing off; nothing queued: disarmed. */
static void plan_declines(struct hrt_base *b, int fd, hrt_time_t res, hrt_time_t hard)
{
	hrt_time_t d = 0, t0 = mono(), left;

	assert_int_equal(hrt_base_plan_sleep(b, res, &d), 0);
	assert_int_equal(d, HRT_TIME_MAX);
	assert_int_equal(slack_now(), OWN_SLACK);
	left = tfd_left(fd);
	if (hard == HRT_TIME_MAX)
		assert_int_equal(left, 0);
	else
		assert_true(left > 0 && t0 + left <= hard);
}

static void test_plan_sleep_declines_and_arms_when_no_window_fits(void **state)
{
	struct hrt_timer wide, narrow;
	hrt_time_t t0, d, narrow_hard, wide_hard;
	int fd;
	struct hrt_base *b = plan_base(&fd);

	(void)state;
	hrt_timer_init(&wide, nop_cb);
	hrt_timer_init(&narrow, nop_cb);
	plan_declines(b, fd, MS, HRT_TIME_MAX);                 /* nothing queued */
	t0 = mono();
	wide_hard = t0 + 400 * MS;
	assert_int_equal(hrt_timer_start_range(&wide, b, t0 + 100 * MS, 300 * MS, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_plan_sleep(b, MS, &d), 1);   /* held, slack set */
	assert_true(slack_now() != OWN_SLACK);
	plan_declines(b, fd, SEC, wide_hard);   /* 1 s rounding: past the window */
	assert_int_equal(hrt_base_plan_sleep(b, MS, &d), 1);
	/* A narrow (210 us) window first: less than 200 us after the margin. */
	narrow_hard = t0 + 50 * MS + 210 * US;
	assert_int_equal(hrt_timer_start_range(&narrow, b, t0 + 50 * MS, 210 * US, HRT_MODE_ABS), 0);
	plan_declines(b, fd, 1, narrow_hard);
	plan_declines(b, fd, MS, narrow_hard);
	hrt_timer_cancel(&narrow);
	assert_int_equal(hrt_base_plan_sleep(b, MS, &d), 1);
	assert_int_equal(hrt_base_set_coalesce(b, 0), 0);
	plan_declines(b, fd, MS, wide_hard);                    /* coalescing off */
	/* A huge resolution is a window missed, not an overflow. */
	assert_int_equal(hrt_base_set_coalesce(b, 1), 0);
	plan_declines(b, fd, HRT_TIME_MAX, wide_hard);
	plan_declines(b, fd, HRT_TIME_MAX / 2 + 1, wide_hard);
	assert_int_equal(hrt_base_plan_done(b), 0);
	hrt_timer_cancel(&wide);
	assert_int_equal(hrt_base_free(b), 0);
}

struct other_plan {
	struct hrt_base *b;
	int plan, done;
};

static void *other_plan_main(void *arg)
{
	struct other_plan *o = arg;
	hrt_time_t d;

	o->plan = hrt_base_plan_sleep(o->b, MS, &d);
	o->done = hrt_base_plan_done(o->b);
	return NULL;
}

static void other_plan(struct other_plan *o)
{
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, other_plan_main, o), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
}

static void test_plan_sleep_one_planner_per_base(void **state)
{
	struct hrt_timer a;
	struct other_plan o;
	hrt_time_t d;
	int fd;
	struct hrt_base *b = plan_base(&fd);

	(void)state;
	o.b = b;
	hrt_timer_init(&a, nop_cb);
	/* Far enough that a slow thread start (TSan, a loaded machine) still
	 * plans a wide window. */
	assert_int_equal(hrt_timer_start_range(&a, b, 500 * MS, SEC, HRT_MODE_REL), 0);
	assert_int_equal(hrt_base_plan_done(b), -EPERM);        /* nobody plans yet */
	assert_int_equal(hrt_base_plan_sleep(b, MS, &d), 1);
	other_plan(&o);
	assert_int_equal(o.plan, -EPERM);
	assert_int_equal(o.done, -EPERM);
	assert_int_equal(tfd_left(fd), 0);      /* still the first one's plan */
	assert_int_equal(hrt_base_plan_done(b), 0);
	other_plan(&o);                         /* free now: plans and ends */
	assert_int_equal(o.plan, 1);
	assert_int_equal(o.done, 0);
	assert_int_equal(hrt_base_plan_done(b), -EPERM);
	assert_int_equal(slack_now(), OWN_SLACK);
	assert_true(tfd_left(fd) > 0);
	hrt_timer_cancel(&a);
	assert_int_equal(hrt_base_free(b), 0);
}

static int counted_runs;

static enum hrt_restart count_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t, (void)now;
	counted_runs++;
	return HRT_NORESTART;
}

/* Before it plans, a plan runs what is due: a timer whose window has
 * opened (soft past, hard ahead: only a pass at idle runs it, the greedy
 * walk) and one the timerfd fired for (hard past); the host only wakes. */
static void test_plan_sleep_runs_what_is_due_first(void **state)
{
	struct hrt_timer open_win, hard_due, later;
	struct timespec nap = { 0, 3 * MS };
	hrt_time_t d;
	int fd;
	struct hrt_base *b = plan_base(&fd);

	(void)state;
	counted_runs = 0;
	hrt_timer_init(&open_win, count_cb);
	hrt_timer_init(&hard_due, count_cb);
	hrt_timer_init(&later, count_cb);
	assert_int_equal(hrt_timer_start_range(&open_win, b, MS, 10 * SEC, HRT_MODE_REL), 0);
	assert_int_equal(hrt_timer_start_range(&hard_due, b, MS, 0, HRT_MODE_REL), 0);
	assert_int_equal(hrt_timer_start_range(&later, b, 10 * SEC, SEC, HRT_MODE_REL), 0);
	nanosleep(&nap, NULL);          /* both due now; the timerfd fired */
	assert_int_equal(hrt_base_plan_sleep(b, MS, &d), 1);
	assert_int_equal(counted_runs, 2);
	assert_false(hrt_timer_is_queued(&open_win));
	assert_false(hrt_timer_is_queued(&hard_due));
	assert_true(hrt_timer_is_queued(&later));
	assert_true(d >= 9 * SEC);      /* the plan is for what is left */
	assert_int_equal(hrt_base_plan_done(b), 0);
	hrt_timer_cancel(&later);
	assert_int_equal(hrt_base_free(b), 0);
}

/* Coalescing off, the timerfd alone decides, as with dispatch: an open
 * window (soft past, hard ahead, the timerfd not fired) waits for its hard
 * expiry; coalescing on, the same plan runs it. */
static void test_plan_sleep_without_coalescing_runs_only_what_the_fd_says(void **state)
{
	struct hrt_timer open_win;
	struct timespec nap = { 0, 3 * MS };
	hrt_time_t d;
	int fd;
	struct hrt_base *b = plan_base(&fd);

	(void)state;
	counted_runs = 0;
	assert_int_equal(hrt_base_set_coalesce(b, 0), 0);
	hrt_timer_init(&open_win, count_cb);
	assert_int_equal(hrt_timer_start_range(&open_win, b, MS, 10 * SEC, HRT_MODE_REL), 0);
	nanosleep(&nap, NULL);
	assert_int_equal(hrt_base_plan_sleep(b, MS, &d), 0);
	assert_int_equal(d, HRT_TIME_MAX);
	assert_int_equal(counted_runs, 0);
	assert_true(hrt_timer_is_queued(&open_win));
	assert_int_equal(hrt_base_set_coalesce(b, 1), 0);
	assert_int_equal(hrt_base_plan_sleep(b, MS, &d), 0);    /* nothing left to plan */
	assert_int_equal(counted_runs, 1);
	assert_false(hrt_timer_is_queued(&open_win));
	assert_int_equal(hrt_base_plan_done(b), 0);
	assert_int_equal(hrt_base_free(b), 0);
}

/* A plan that failed (here: no fd left for its timerfd, -EMFILE) keeps its
 * error for hrt_base_plan_done, which reports it once; the planning still
 * ends (slack back, timerfd armed).  A refusal is not such an error (-EBUSY
 * from a callback of the base's own pass): it keeps nothing. */
static struct hrt_base *err_base;
static int err_plan;

static enum hrt_restart plan_in_pass_cb(struct hrt_timer *t, hrt_time_t now)
{
	hrt_time_t d;

	(void)t, (void)now;
	err_plan = hrt_base_plan_sleep(err_base, MS, &d);
	return HRT_NORESTART;
}

static void test_plan_done_reports_first_plan_error_once(void **state)
{
	struct rlimit had, low;
	struct hrt_timer a, far;
	hrt_time_t d, now;
	int fd, lowest, r;

	(void)state;
	err_base = tv_new(CLOCK_MONOTONIC, 0);          /* no timerfd yet */
	assert_int_equal(prctl(PR_SET_TIMERSLACK, (unsigned long)OWN_SLACK, 0, 0, 0), 0);
	hrt_timer_init(&a, plan_in_pass_cb);
	hrt_timer_init(&far, nop_cb);
	assert_int_equal(hrt_timer_start_range(&far, err_base, 10 * SEC, SEC, HRT_MODE_REL), 0);
	/* No fd left below the limit: the plan's timerfd cannot be made. */
	lowest = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(lowest >= 0);
	close(lowest);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &had), 0);
	low = had;
	low.rlim_cur = (rlim_t)lowest;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	r = hrt_base_plan_sleep(err_base, MS, &d);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &had), 0);
	assert_int_equal(r, -EMFILE);                   /* and the caller is the planner */
	assert_int_equal(slack_now(), OWN_SLACK);
	/* A refusal from a callback of the base's pass keeps nothing. */
	assert_int_equal(hrt_timer_start_range(&a, err_base, 0, 0, HRT_MODE_REL), 0);
	assert_int_equal(hrt_base_now(err_base, &now), 0);
	assert_int_equal(hrt_base_run(err_base, now, 1), 1);
	assert_int_equal(err_plan, -EBUSY);
	assert_int_equal(hrt_base_plan_sleep(err_base, MS, &d), 1);      /* later ones work */
	assert_true(slack_now() != OWN_SLACK);
	fd = hrt_base_fd(err_base);
	assert_true(fd >= 0);
	assert_int_equal(hrt_base_plan_done(err_base), -EMFILE);        /* the first */
	assert_int_equal(slack_now(), OWN_SLACK);
	assert_true(tfd_left(fd) > 0);
	assert_int_equal(hrt_base_plan_sleep(err_base, MS, &d), 1);
	assert_int_equal(hrt_base_plan_done(err_base), 0);              /* reported once */
	hrt_timer_cancel(&far);
	assert_int_equal(hrt_base_free(err_base), 0);
}

static void test_plan_sleep_bad_arguments_einval(void **state)
{
	struct hrt_base *vb = tv_virtual(0);
	hrt_time_t d = 7;
	int fd;
	struct hrt_base *b = plan_base(&fd);

	(void)state;
	assert_int_equal(hrt_base_plan_sleep(b, 0, &d), -EINVAL);
	assert_int_equal(hrt_base_plan_sleep(b, -1, &d), -EINVAL);
	assert_int_equal(hrt_base_plan_sleep(b, MS, NULL), -EINVAL);
	assert_int_equal(hrt_base_plan_sleep(NULL, MS, &d), -EINVAL);
	assert_int_equal(hrt_base_plan_done(NULL), -EINVAL);
	assert_int_equal(hrt_base_plan_sleep(vb, MS, &d), -EOPNOTSUPP);
	assert_int_equal(d, 7);
	/* None of them made this thread the planner. */
	assert_int_equal(hrt_base_plan_done(b), -EPERM);
	assert_int_equal(hrt_base_free(vb), 0);
	assert_int_equal(hrt_base_free(b), 0);
}

/* While planned (the timerfd held), a start from another thread that moves
 * the earliest hard expiry earlier arms the timerfd; a later one does not. */
struct plan_start {
	struct hrt_base *b;
	struct hrt_timer *t;
	hrt_time_t at, range;
};

static void *plan_start_main(void *arg)
{
	struct plan_start *p = arg;

	hrt_timer_start_range(p->t, p->b, p->at, p->range, HRT_MODE_ABS);
	return NULL;
}

static void plan_start(struct plan_start *p)
{
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, plan_start_main, p), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
}

static void test_plan_sleep_other_thread_earlier_start_arms_held_fd(void **state)
{
	struct hrt_timer far, later, near;
	struct plan_start p;
	struct pollfd pfd;
	hrt_time_t d, t0 = mono(), left;
	int fd;
	struct hrt_base *b = plan_base(&fd);

	(void)state;
	hrt_timer_init(&far, nop_cb);
	hrt_timer_init(&later, nop_cb);
	hrt_timer_init(&near, nop_cb);
	assert_int_equal(hrt_timer_start_range(&far, b, t0 + SEC, 500 * MS, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_plan_sleep(b, MS, &d), 1);
	assert_int_equal(tfd_left(fd), 0);
	p = (struct plan_start){ b, &later, t0 + 3 * SEC, MS };
	plan_start(&p);
	assert_int_equal(tfd_left(fd), 0);
	/* 200 ms: far enough that the other thread's start and join (slow
	 * under TSan or load) leave it armed, not fired. */
	p = (struct plan_start){ b, &near, mono() + 200 * MS, 5 * MS };
	plan_start(&p);
	left = tfd_left(fd);
	assert_true(left > 0 && left <= 205 * MS);
	pfd.fd = fd;
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 1000), 1);      /* the host wakes by it */
	assert_true(mono() >= p.at + p.range);
	assert_int_equal(hrt_base_dispatch(b, 1), 1);
	assert_false(hrt_timer_is_queued(&near));
	assert_int_equal(hrt_base_plan_done(b), 0);
	hrt_timer_cancel(&far);
	hrt_timer_cancel(&later);
	assert_int_equal(hrt_base_free(b), 0);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_runs_before_every_sleep_timers_never_early),
		cmocka_unit_test(test_host_deadline_ends_sleep_never_early),
		cmocka_unit_test(test_timerfd_path_runs_host_deadline_rounded_up),
		cmocka_unit_test(test_huge_host_timeout_is_no_limit),
		cmocka_unit_test(test_host_fd_write_wakes_loop_next_run_sees_it),
		cmocka_unit_test(test_always_readable_host_fd_does_not_starve_timers),
		cmocka_unit_test(test_window_before_host_deadline_keeps_start_slack_cut),
		cmocka_unit_test(test_window_after_host_deadline_sleeps_to_it_with_own_slack),
		cmocka_unit_test(test_host_cut_sleep_never_ends_past_hard_expiry),
		cmocka_unit_test(test_pass_after_plain_window_sleep_is_idle),
		cmocka_unit_test(test_pass_after_host_fd_ready_is_not_idle),
		cmocka_unit_test(test_pass_after_host_deadline_passed_is_not_idle),
		cmocka_unit_test(test_run_error_ends_loop_with_it),
		cmocka_unit_test(test_stop_from_run_or_callback_returns_zero),
		cmocka_unit_test(test_stop_before_loop_returns_at_once_without_run),
		cmocka_unit_test(test_reentry_from_run_is_busy),
		cmocka_unit_test(test_host_fd_closed_mid_loop_loses_nothing),
		cmocka_unit_test(test_bad_host_arguments_rejected),
		cmocka_unit_test(test_start_from_other_thread_wakes_hosted_sleep),
		cmocka_unit_test(test_thread_slack_restored_however_host_loop_ends),
		cmocka_unit_test(test_plan_sleep_wide_window_holds_fd_sets_slack),
		cmocka_unit_test(test_plan_sleep_declines_and_arms_when_no_window_fits),
		cmocka_unit_test(test_plan_sleep_one_planner_per_base),
		cmocka_unit_test(test_plan_sleep_bad_arguments_einval),
		cmocka_unit_test(test_plan_sleep_runs_what_is_due_first),
		cmocka_unit_test(test_plan_sleep_without_coalescing_runs_only_what_the_fd_says),
		cmocka_unit_test(test_plan_done_reports_first_plan_error_once),
		cmocka_unit_test(test_plan_sleep_other_thread_earlier_start_arms_held_fd),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("HRT_COALESCE");
	unsetenv("HRT_GREEDY");
	alarm(60);                      /* a hung loop fails, not hangs */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
