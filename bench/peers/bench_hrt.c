/* SPDX-License-Identifier: MIT */
/*
 * bench_hrt.c - hrt under the shared workload (workload.h).
 *
 * Built three times.  "hrt": a virtual base (HRT_BASE_VIRTUAL), so the
 * expiry pass is hrt_base_run at an instant when all are due and the range
 * workload is simulated exactly (each pass at hrt_base_next_event(), the
 * greedy walk on: wake-ups are passes).  Its time follows the real clock
 * at each lib_begin, so "now" advances in the timeout workload as the
 * peers' does.  "hrt-st" (HRT_ST=1): the same on a single-thread base
 * (HRT_BASE_UNLOCKED: no mutex, no atomic read-modify-write).  "hrt-fd"
 * (HRT_FD=1): a CLOCK_MONOTONIC base with its timerfd, expiry through
 * hrt_base_dispatch and the range workload through hrt_base_loop in real
 * time, as the peers; its loop workloads (workload.h, run_loop) run in a
 * host's epoll loop on hrt_base_fd, dispatching when it is readable (the
 * fd path).  "hrt-loop" (HRT_LOOP=1): the same base, its loop workloads
 * in hrt_base_loop, the ops from a timer's callback at every pass (only
 * those workloads differ from hrt-fd's).
 */
#ifndef HRT_FD
#define HRT_FD 0
#endif
#ifndef HRT_ST
#define HRT_ST 0
#endif
#ifndef HRT_LOOP
#define HRT_LOOP 0
#endif
#define HRT_REAL (HRT_FD || HRT_LOOP)  /* a CLOCK_MONOTONIC base with its fd */
#define LIB_NAME (HRT_LOOP ? "hrt-loop" : HRT_FD ? "hrt-fd" : HRT_ST ? "hrt-st" : "hrt")
#include "hrt.h"
/* The loop workloads need 1.0's API (before-after.sh also links this file
 * against older ones, whose hrt-fd runs the other workloads). */
#if HRT_REAL && defined(HRT_BASE_VIRTUAL) && HRT_VERSION_MAJOR + 0 >= 1
#define LIB_LOOP 1
#include <sys/epoll.h>
#include <unistd.h>
#elif HRT_LOOP
#error "hrt-loop needs hrt 1.0's API"
#endif
#include "workload.h"

struct item {
	struct hrt_timer t;
};

static struct hrt_base *base;
static struct item *items;
static hrt_time_t t0;
static int64_t real0;	/* virtual bases: the real instant of virtual time 0 (-1: none yet) */
static size_t target = SIZE_MAX;

static enum hrt_restart on_fire(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	if (++fired >= target && HRT_REAL)
		hrt_base_stop(base);
	return HRT_NORESTART;
}

/*
 * before-after.sh links this file against the libhrt of an older commit
 * and its hrt.h, from before the 0.2.0 API (no HRT_BASE_VIRTUAL then: a
 * virtual clock id, hrt_base_new_flags, values returned): the calls whose
 * shape changed go through these three.
 */
#ifdef HRT_BASE_VIRTUAL
static int base_make(void)
{
	/* HRT_BASE_ENV: HRT_GREEDY and HRT_COALESCE may tune a run. */
	return hrt_base_new(&base, CLOCK_MONOTONIC, (HRT_REAL ? 0 : HRT_BASE_VIRTUAL) |
			    (HRT_ST ? HRT_BASE_UNLOCKED : 0) | HRT_BASE_ENV);
}

static hrt_time_t base_now(void)
{
	hrt_time_t t = 0;

	hrt_base_now(base, &t);
	return t;
}

static hrt_time_t base_next(void)
{
	hrt_time_t t = HRT_TIME_MAX;

	hrt_base_next_event(base, &t);
	return t;
}
#else
#if HRT_ST && !defined(HRT_BASE_UNLOCKED)
#error "hrt-st needs HRT_BASE_UNLOCKED, which this hrt.h predates"
#endif
static int base_make(void)
{
#ifdef HRT_BASE_UNLOCKED
	base = hrt_base_new_flags(HRT_REAL ? CLOCK_MONOTONIC : HRT_CLOCK_VIRTUAL,
				  HRT_ST ? HRT_BASE_UNLOCKED : 0);
#else
	base = hrt_base_new(HRT_REAL ? CLOCK_MONOTONIC : HRT_CLOCK_VIRTUAL);
#endif
	return base ? 0 : -1;
}

static hrt_time_t base_now(void)
{
	return hrt_base_now(base);
}

static hrt_time_t base_next(void)
{
	return hrt_base_next_event(base);
}
#endif

static void lib_loop_new(void)
{
	int err = base_make();

	if (err)
		die("hrt_base_new", err);
	real0 = -1;
	if (HRT_REAL && hrt_base_fd(base) < 0)
		die("hrt_base_fd", -1);
}

static void lib_loop_free(void)
{
	hrt_base_free(base);
}

static void lib_timers_new(size_t n)
{
	size_t i;

	items = xmalloc((n + 1) * sizeof(*items));
	for (i = 0; i <= n; i++)
		hrt_timer_init(&items[i].t, on_fire);
}

static void lib_timers_free(size_t n)
{
	size_t i;

	for (i = 0; i <= n; i++)
		hrt_timer_cancel(&items[i].t);
	free(items);
}

/*
 * A virtual base is told the real time elapsed since its first lib_begin
 * (never backwards: after a pass ahead of the real clock it keeps its
 * time), so virtual time 0 is the first arming, as it always was here.
 * That phase matters to the engine: at N = 10^6 its expiry pass costs
 * about 1.4x more with the first arming at some instants (20 ms, 175 ms,
 * 17 s) than at others (0 to 12 ms, 1.07 s) (docs/PERFORMANCE.md); hrt-fd
 * runs at the real clock's phase.
 */
static void lib_begin(void)
{
	if (!HRT_REAL) {
		int64_t real = now_ns();

		if (real0 < 0)
			real0 = real;
		if (real - real0 > base_now())
			hrt_base_set_time(base, real - real0);
	}
	t0 = base_now();
}

static void lib_arm(size_t i, int64_t off, int64_t slack)
{
	int err = hrt_timer_start_range(&items[i].t, base, t0 + off, slack, HRT_MODE_ABS);

	if (err)
		die("hrt_timer_start_range", err);
}

static void lib_rearm(size_t i, int64_t off, int64_t slack)
{
	hrt_timer_start_range(&items[i].t, base, t0 + off, slack, HRT_MODE_ABS);
}

/* No structure for one constant duration: the re-arm at t0 + off. */
static void lib_timeout(size_t i, int64_t off, int64_t slack)
{
	lib_rearm(i, off, slack);
}

static void lib_cancel(size_t i)
{
	hrt_timer_cancel(&items[i].t);
}

/* A pass at the instant armed-from, when nothing is due: it moves the
 * timers started since the last pass into the tree. */
static void lib_pass(void)
{
	hrt_base_run(base, t0, 0);
}

static void lib_dispatch_nowait(void)
{
	if (HRT_REAL)
		hrt_base_dispatch(base, 0);
	else
		hrt_base_run(base, t0 + EXP_BASE + EXP_SPAN + 2 * NS_MS, 0);
}

static void lib_run_until(size_t n)
{
	target = n;
	if (HRT_REAL) {
		int err = hrt_base_loop(base);

		if (err)
			die("hrt_base_loop", err);
	} else {
		long passes = 0;

		while (fired < n) {
			hrt_base_run(base, base_next(), 1);
			passes++;
		}
		sim_wakeups = passes;
	}
	target = SIZE_MAX;
}

static size_t lib_struct_size(void)
{
	return sizeof(struct hrt_timer);
}

#if HRT_LOOP && defined(LIB_LOOP)
/* hrt_base_loop, the ops from a timer's callback: it runs at every pass
 * (forwarded 1 ns past the pass's now, so the window is open at once and
 * the loop's next sleep is an epoll_pwait2 of 0), as a server's handler
 * re-arms its connections' timers. */
static struct hrt_timer driver;

static enum hrt_restart drive_cb(struct hrt_timer *t, hrt_time_t now)
{
	if (!loop_step()) {
		hrt_base_stop(base);
		return HRT_NORESTART;
	}
	hrt_timer_forward(t, now, 1);
	return HRT_RESTART;
}

static void lib_loop_drive(void)
{
	int err;

	hrt_timer_init(&driver, drive_cb);
	if ((err = hrt_timer_start(&driver, base, 0, HRT_MODE_REL)))
		die("hrt_timer_start", err);
	if ((err = hrt_base_loop(base)))
		die("hrt_base_loop", err);
}
#elif HRT_FD && defined(LIB_LOOP)
/* The fd path: a host's epoll loop on hrt_base_fd that dispatches when it
 * is readable; its handlers (loop_step) re-arm timers after that.  Work
 * is pending, so it polls with a timeout of 0, as libev and libuv do with
 * an idle watcher. */
static void lib_loop_drive(void)
{
	struct epoll_event ev = { .events = EPOLLIN }, evs[4];
	int ep = epoll_create1(EPOLL_CLOEXEC), n;
	ssize_t r;

	if (ep < 0)
		die("epoll_create1", -1);
	ev.data.fd = hrt_base_fd(base);
	if (epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev))
		die("epoll_ctl", -1);
	do {
		n = epoll_wait(ep, evs, 4, 0);
		if (n > 0 && (r = hrt_base_dispatch(base, 0)) < 0)
			die("hrt_base_dispatch", (int)r);
	} while (loop_step());
	close(ep);
}
#endif

#ifdef LIB_LOOP
static long lib_rearms(void)
{
	struct hrt_stats s;

	if (hrt_base_get_stats(base, &s, sizeof(s)))
		die("hrt_base_get_stats", -1);
	return (long)s.reprograms;
}
#endif
