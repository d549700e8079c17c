/* SPDX-License-Identifier: MIT */
/*
 * test_lazy_rearm.c - the lazy re-arm (hrt.h at hrt_base_fd; src/wakeup.c)
 * on every real path: poll + hrt_base_dispatch, hrt_base_loop coalescing
 * and not, hrt_base_loop_host, and a host that sleeps itself with
 * hrt_base_plan_sleep.
 *  - A start or cancel that moves the earliest hard expiry later reaches
 *    the kernel in at most 1 % of ops, in the shapes servers make: the
 *    earliest timer re-armed (LRU, a heartbeat, keep-alive pushed on) and
 *    same-length timeouts cancelled in start order (FIFO), with 1 to 1,000
 *    timers.  "Reaches the kernel" is counted where it happens: every
 *    timerfd_settime through the device's seam, every eventfd poke of the
 *    op's thread in /proc/thread-self/io (syscw).
 *  - A start that moves it earlier still arms at once, from another thread:
 *    the poller, blocked on a plan for a far timer, wakes by the new hard
 *    expiry, after pushes of that far timer that woke nothing.
 *  - A timeout pushed back by 100 ms every 1 ms for a second costs about
 *    one fd wake-up per 100 ms, none running a timer, each one counted in
 *    stats.early_wakeups, the fd re-armed after each.
 * Lateness bounds are generous (a loaded machine, nice 19); the counts are
 * exact.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"
#include "base.h"
#include "timerfd.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define OPS 10000

static hrt_time_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

/* The kernel's side, counted -------------------------------------------- */

static long settimes;           /* every timerfd_settime of a seamed base */

static int count_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *ov)
{
	__atomic_add_fetch(&settimes, 1, __ATOMIC_RELAXED);
	return timerfd_settime(fd, flags, nv, ov);
}

static const struct hrt_timerfd_sys count_sys = { read, count_settime };

static long settime_count(void)
{
	return __atomic_load_n(&settimes, __ATOMIC_RELAXED);
}

/* This thread's write(2) calls so far (an eventfd poke is one). */
static long writes_of_this_thread(void)
{
	char line[128];
	long n = -1;
	FILE *f = fopen("/proc/thread-self/io", "r");

	assert_non_null(f);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "syscw: %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	assert_true(n >= 0);
	return n;
}

/* A base with an fd whose settime calls are counted. */
static struct hrt_base *counted_base(void)
{
	struct hrt_base *b = tv_new(CLOCK_MONOTONIC, 0);

	assert_non_null(b);
	assert_true(hrt_base_fd(b) >= 0);
	hrt__timerfd_set_sys(hrt__base_device(b), &count_sys);
	return b;
}

/* The paths, each served by a thread --------------------------------------- */

enum path { P_POLL, P_LOOP, P_LOOP_TFD, P_HOST, P_PLAN, P_NPATHS };
static const char *const path_names[P_NPATHS] = {
	"poll + dispatch", "hrt_base_loop", "hrt_base_loop, timerfd path",
	"hrt_base_loop_host", "hrt_base_plan_sleep",
};

struct runner {
	struct hrt_base *b;
	enum path p;
	int stopfd;                     /* P_POLL, P_PLAN: written to stop */
	int hostfd;                     /* P_HOST: the host's I/O, never ready */
	pthread_t th;
	long rc;
};

static hrt_time_t host_forever(void *arg)
{
	(void)arg;
	return -1;
}

static int host_nothing(void *arg)
{
	(void)arg;
	return 0;
}

/* Waits on the hrt fd (or the plan's delay) and the stop fd; 1 if stopped. */
static int wait_once(struct runner *r, int ep, int ms)
{
	struct epoll_event evs[2];
	int n = epoll_wait(ep, evs, 2, ms), i;

	for (i = 0; i < n; i++)
		if (evs[i].data.fd == r->stopfd)
			return 1;
	if (r->p == P_POLL && n > 0)
		assert_true(hrt_base_dispatch(r->b, 1) >= 0);
	return 0;
}

static void *serve(void *arg)
{
	struct runner *r = arg;
	struct epoll_event ev = { .events = EPOLLIN };
	hrt_time_t delay;
	int ep, plan;

	switch (r->p) {
	case P_LOOP:
	case P_LOOP_TFD:
		r->rc = hrt_base_loop(r->b);
		return NULL;
	case P_HOST:
		r->rc = hrt_base_loop_host(r->b, r->hostfd, host_forever, host_nothing, NULL);
		return NULL;
	default:
		break;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = hrt_base_fd(r->b);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev), 0);
	ev.data.fd = r->stopfd;
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev), 0);
	for (;;) {
		int ms = -1;

		if (r->p == P_PLAN) {   /* the host of examples/ev_host.h, in short */
			plan = hrt_base_plan_sleep(r->b, MS, &delay);
			assert_true(plan >= 0);
			if (plan == 1)
				ms = delay / MS > 60000 ? 60000 : (int)(delay / MS);
		}
		if (wait_once(r, ep, ms))
			break;
	}
	if (r->p == P_PLAN)
		r->rc = hrt_base_plan_done(r->b);
	close(ep);
	return NULL;
}

static void runner_start(struct runner *r, struct hrt_base *b, enum path p)
{
	memset(r, 0, sizeof(*r));
	r->b = b;
	r->p = p;
	r->stopfd = eventfd(0, EFD_CLOEXEC);
	r->hostfd = eventfd(0, EFD_CLOEXEC);
	assert_true(r->stopfd >= 0 && r->hostfd >= 0);
	assert_int_equal(hrt_base_set_coalesce(b, p != P_LOOP_TFD), 0);
	assert_int_equal(pthread_create(&r->th, NULL, serve, r), 0);
	usleep(20000);                  /* asleep on its first plan */
}

static void runner_stop(struct runner *r)
{
	uint64_t one = 1;

	if (r->p == P_POLL || r->p == P_PLAN)
		assert_int_equal(write(r->stopfd, &one, sizeof(one)), (ssize_t)sizeof(one));
	else
		assert_int_equal(hrt_base_stop(r->b), 0);
	assert_int_equal(pthread_join(r->th, NULL), 0);
	assert_int_equal(r->rc, 0);
	close(r->stopfd);
	close(r->hostfd);
}

/* Timers --------------------------------------------------------------- */

struct ltm {
	struct hrt_timer t;
	long runs;
	hrt_time_t ran_at;
};

static enum hrt_restart count_run(struct hrt_timer *t, hrt_time_t now)
{
	struct ltm *m = HRT_CONTAINER_OF(t, struct ltm, t);

	(void)now;
	__atomic_store_n(&m->ran_at, mono(), __ATOMIC_RELEASE);
	__atomic_add_fetch(&m->runs, 1, __ATOMIC_RELEASE);
	return HRT_NORESTART;
}

#define NMAX 1000
static struct ltm tms[NMAX];

static void init_timers(int n)
{
	for (int i = 0; i < n; i++) {
		memset(&tms[i], 0, sizeof(tms[i]));
		assert_int_equal(hrt_timer_init(&tms[i].t, count_run), 0);
	}
}

static void cancel_timers(int n)
{
	for (int i = 0; i < n; i++)
		hrt_timer_cancel(&tms[i].t);
}

/*
 * OPS ops in a shape on b, served by path p, from this thread: 1 % of
 * them at most may reach the kernel.  LRU: n timers 10 s and more ahead
 * (a window of 10 % of the delay on every other one), the one due first
 * re-armed 10 s and more ahead, over and over.  FIFO: n same-length
 * timeouts started, then cancelled in start order, then again.
 */
static void ops_reach_the_kernel_rarely(enum path p, int n, int fifo)
{
	struct hrt_base *b = counted_base();
	struct runner r;
	long st0, w0, st, w;
	hrt_time_t base = mono() + 10 * SEC;
	int ops = 0, i;

	init_timers(n);
	for (i = 0; i < n; i++)
		assert_int_equal(hrt_timer_start_range(&tms[i].t, b, base + i * MS,
						       i % 2 ? SEC : 0, HRT_MODE_ABS), 0);
	runner_start(&r, b, p);
	st0 = settime_count();
	w0 = writes_of_this_thread();
	while (ops < OPS) {
		if (!fifo) {            /* the earliest (in start order), 10 s on */
			i = ops % n;
			hrt_timer_start_range(&tms[i].t, b, mono() + 10 * SEC, i % 2 ? SEC : 0,
					      HRT_MODE_REL);
			ops++;
			continue;
		}
		for (i = 0; i < n && ops < OPS; i++, ops++)
			assert_int_equal(hrt_timer_cancel(&tms[i].t), 1);
		for (i = 0; i < n && ops < OPS; i++, ops++)
			hrt_timer_start_range(&tms[i].t, b, 10 * SEC, SEC, HRT_MODE_REL);
	}
	st = settime_count() - st0;
	w = writes_of_this_thread() - w0;
	print_message("  %-28s %s n=%-4d %d ops: %ld timerfd_settime, %ld eventfd writes\n",
		      path_names[p], fifo ? "FIFO" : "LRU ", n, ops, st, w);
	assert_true((st + w) * 100 <= ops);
	runner_stop(&r);
	for (i = 0; i < n; i++)
		assert_int_equal(tms[i].runs, 0);
	cancel_timers(n);
	assert_int_equal(hrt_base_free(b), 0);
}

static void test_later_moves_reach_the_kernel_in_one_percent_of_ops(void **state)
{
	static const int ns[] = { 1, 10, 1000 };

	(void)state;
	for (int p = 0; p < P_NPATHS; p++)
		for (unsigned k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
			ops_reach_the_kernel_rarely((enum path)p, ns[k], 0);
			if (ns[k] > 1)
				ops_reach_the_kernel_rarely((enum path)p, ns[k], 1);
		}
}

/* A far timer pushed on 1,000 times (no system call), then a near one
 * started from this thread while the path's thread sleeps: one arm or
 * poke, and the near timer runs by its hard expiry (late only by the OS:
 * bounded generously), the far one not at all. */
static void test_earlier_start_from_another_thread_wakes_the_sleeper_in_time(void **state)
{
	(void)state;
	for (int p = 0; p < P_NPATHS; p++) {
		struct hrt_base *b = counted_base();
		struct runner r;
		hrt_time_t soft, hard;
		long st0, w0, st, w;
		int i;

		init_timers(2);
		assert_int_equal(hrt_timer_start(&tms[0].t, b, 10 * SEC, HRT_MODE_REL), 0);
		runner_start(&r, b, (enum path)p);
		st0 = settime_count();
		w0 = writes_of_this_thread();
		for (i = 0; i < 1000; i++)
			hrt_timer_start(&tms[0].t, b, 10 * SEC + i * MS, HRT_MODE_REL);
		assert_int_equal(settime_count() - st0 + writes_of_this_thread() - w0, 0);
		soft = mono() + 30 * MS;
		hard = soft + 10 * MS;
		assert_int_equal(hrt_timer_start_range(&tms[1].t, b, soft, hard - soft, HRT_MODE_ABS), 0);
		st = settime_count() - st0;
		w = writes_of_this_thread() - w0;
		for (i = 0; i < 5000 && !__atomic_load_n(&tms[1].runs, __ATOMIC_ACQUIRE); i++)
			usleep(1000);
		print_message("  %-28s %ld timerfd_settime + %ld eventfd writes; ran %+.3f ms "
			      "after its hard expiry\n", path_names[p], st, w,
			      (double)(__atomic_load_n(&tms[1].ran_at, __ATOMIC_ACQUIRE) - hard) / MS);
		assert_int_equal(st + w, 1);
		assert_int_equal(__atomic_load_n(&tms[1].runs, __ATOMIC_ACQUIRE), 1);
		assert_true(tms[1].ran_at >= soft);
		assert_true(tms[1].ran_at < hard + SEC);      /* the OS's lateness, generously */
		runner_stop(&r);
		assert_int_equal(tms[0].runs, 0);
		cancel_timers(2);
		assert_int_equal(hrt_base_free(b), 0);
	}
}

/* hrt.h's figure: a timeout 100 ms ahead pushed back every 1 ms for a
 * second wakes the fd about ten times, early each time, running nothing. */
static void pushed_back_timeout(enum path p)
{
	struct hrt_base *b = counted_base();
	struct hrt_stats s0, s1;
	struct runner r;
	hrt_time_t t0, last, gap = 0, elapsed;
	long st0, st, pushes = 0;

	init_timers(1);
	assert_int_equal(hrt_timer_start(&tms[0].t, b, 100 * MS, HRT_MODE_REL), 0);
	runner_start(&r, b, p);
	assert_int_equal(hrt_base_get_stats(b, &s0, sizeof(s0)), 0);
	st0 = settime_count();
	t0 = last = mono();
	while (mono() - t0 < SEC) {
		hrt_time_t now;

		usleep(1000);
		now = mono();
		if (now - last > gap)
			gap = now - last;
		last = now;
		assert_int_equal(hrt_timer_start(&tms[0].t, b, 100 * MS, HRT_MODE_REL), 0);
		pushes++;
	}
	elapsed = mono() - t0;
	usleep(5000);
	assert_int_equal(hrt_base_get_stats(b, &s1, sizeof(s1)), 0);
	st = settime_count() - st0;
	print_message("  %-28s %ld pushes in %.0f ms (longest gap %.1f ms): %llu fd wake-ups "
		      "(%llu early), %llu callbacks, %ld timerfd_settime\n", path_names[p], pushes,
		      (double)elapsed / MS, (double)gap / MS,
		      (unsigned long long)(s1.wakeups - s0.wakeups),
		      (unsigned long long)(s1.early_wakeups - s0.early_wakeups),
		      (unsigned long long)(s1.expired - s0.expired), st);
	/* One per old instant: at most one per 100 ms of pushing, and each
	 * re-arms once (at the pushed instant). */
	assert_true((hrt_time_t)(s1.wakeups - s0.wakeups) <= elapsed / (100 * MS) + 2);
	assert_true(s1.wakeups - s0.wakeups >= 1);
	assert_int_equal(s1.early_wakeups - s0.early_wakeups, s1.wakeups - s0.wakeups);
	assert_true(st <= (long)(s1.wakeups - s0.wakeups) + 1);
	/* Nothing ran, unless this thread stalled past the timeout itself. */
	if (gap < 90 * MS)
		assert_int_equal(s1.expired - s0.expired, 0);
	runner_stop(&r);
	cancel_timers(1);
	assert_int_equal(hrt_base_free(b), 0);
}

static void test_pushed_back_timeout_wakes_once_per_old_instant_running_nothing(void **state)
{
	(void)state;
	pushed_back_timeout(P_POLL);
	pushed_back_timeout(P_LOOP_TFD);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_later_moves_reach_the_kernel_in_one_percent_of_ops),
		cmocka_unit_test(test_earlier_start_from_another_thread_wakes_the_sleeper_in_time),
		cmocka_unit_test(test_pushed_back_timeout_wakes_once_per_old_instant_running_nothing),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
