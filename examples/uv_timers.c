/* SPDX-License-Identifier: MIT */
/*
 * uv_timers.c - hrt range timers in a libuv loop.
 *
 * The base's timerfd (hrt_base_fd) is watched by a uv_poll_t.  Its callback
 * only notes that the fd is readable; the dispatch happens in a uv_check_t,
 * which libuv runs once per iteration after all I/O callbacks.  By then we
 * know whether anything else woke the loop in this iteration:
 *
 *     idle = 1  if no other I/O (or host timer) callback ran in it,
 *     idle = 0  otherwise.
 *
 * (libuv up to 1.44, Debian 12's, runs timers before the check phase; from
 * 1.45 on they run after it, so a host timer then marks the next
 * iteration busy instead - still a correct, if later, idle.)
 *
 * So with the default greedy policy (idle) the extra work of running timers
 * early is done on wake-ups that were for timers only; when the loop is busy
 * with its own I/O, only the timers that are due (the leftmost run) run.
 * Every host callback therefore sets host_busy.
 *
 * The coalesced path (ranged_plan): libuv sleeps in epoll_wait with a
 * millisecond timeout under the thread's timer slack, which is the kernel
 * window hrt needs whenever the timers' window is wider than that
 * millisecond.  Before each poll (a uv_prepare_t) the helper asks for the
 * window (hrt_base_wait_window); if it is wide enough it holds the timerfd
 * disarmed (hrt_base_hold_fd), starts a libuv timer at the window's start
 * (rounded up to the loop's millisecond) and sets the loop thread's slack
 * (prctl PR_SET_TIMERSLACK) to what is left of the window, so the kernel
 * may end the poll on an interrupt that happens anyway; the check phase
 * then runs a pass if the window has opened.  Otherwise it gives the
 * timerfd back (the path above).  The slack also widens the host's own
 * timers while it is set (up to the window's width, never past hrt's hard
 * expiries); a start from another thread would need a uv_async_t to make
 * the loop ask again.  HRT_COALESCE=off in the environment keeps the
 * timerfd path.
 *
 * The workload and the self-check live in example.h; here only the loop.
 */
#include <sys/prctl.h>
#include <uv.h>

#include "example.h"

static struct hrt_base *base;
static uv_poll_t hrt_poll;      /* hrt_base_fd(base) is readable */
static uv_check_t hrt_check;    /* after this iteration's I/O callbacks */
static int hrt_readable;        /* hrt_poll fired in this iteration */
static int host_busy;           /* another callback ran in this iteration */
static uv_prepare_t hrt_prepare;        /* plans the coalesced sleep */
static uv_timer_t hrt_window;           /* ends the poll at the window's start */
static hrt_time_t window_soft = HRT_TIME_MAX;  /* the planned window's start */
static int held;                        /* the timerfd is held disarmed */
static unsigned long slack_set, slack_orig;

static void stop_loop(uv_loop_t *loop);

/* --- the integration ---------------------------------------------------- */

static void on_hrt_readable(uv_poll_t *h, int status, int events)
{
	(void)h;
	(void)events;
	if (status < 0)
		ex_error("uv_poll(hrt)", status);       /* on_check stops */
	hrt_readable = 1;               /* dispatch in on_check, after other I/O */
}

/* Time the poll may take past its timeout before the kernel's hrtimer is
 * set (the prepare-to-epoll_wait path): kept out of the slack. */
#define RANGED_MARGIN_NS 100000
/* Below this much slack the ranged sleep is not worth a prctl. */
#define RANGED_MIN_SLACK_NS 200000

static void on_window(uv_timer_t *h)
{
	(void)h;                        /* the check phase runs the pass */
}

static void set_slack(unsigned long ns)
{
	if (ns != slack_set && prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) == 0)
		slack_set = ns;
}

/* Before each poll: the ranged sleep if the window allows it, else the
 * timerfd path.  The window's start is rounded up to the loop's
 * millisecond; what is left of the window after it is the slack. */
static void ranged_plan(uv_prepare_t *h)
{
	hrt_time_t soft, hard, now, start;
	uint64_t ms;
	int w, err;

	w = hrt_base_get_coalesce(base) == 1 ? hrt_base_wait_window(base, &soft, &hard) : 0;
	now = ex_now();
	if (w == 1) {
		ms = soft > now ? (uint64_t)(soft - now + 999999) / 1000000 : 0;
		start = now + (hrt_time_t)ms * 1000000;
		if (hard - start - RANGED_MARGIN_NS < RANGED_MIN_SLACK_NS)
			w = 0;          /* too narrow at millisecond resolution */
	}
	if (w != 1) {
		window_soft = HRT_TIME_MAX;
		uv_timer_stop(&hrt_window);
		set_slack(slack_orig);
		if (held && (err = hrt_base_hold_fd(base, 0)) < 0)
			ex_error("hrt_base_hold_fd", err);
		held = 0;
		return;
	}
	if (!held && (err = hrt_base_hold_fd(base, 1)) < 0) {
		ex_error("hrt_base_hold_fd", err);
		return;
	}
	held = 1;
	window_soft = soft;
	set_slack((unsigned long)(hard - start - RANGED_MARGIN_NS));
	uv_update_time(h->loop);        /* the timeout counts from now */
	uv_timer_start(&hrt_window, on_window, ms, 0);
}

static void on_check(uv_check_t *h)
{
	int idle = !host_busy;          /* no other callback in this iteration */
	ssize_t n;

	host_busy = 0;
	if (hrt_readable) {
		hrt_readable = 0;
		n = hrt_base_dispatch(base, idle);  /* drains the fd, runs timers, re-arms */
		ex_dispatched(idle, n);
	} else if (ex_now() >= window_soft) {   /* the ranged sleep ended */
		window_soft = HRT_TIME_MAX;
		n = hrt_base_run(base, ex_now(), idle);
		ex_dispatched(idle, n);
	}
	if (ex_all_fired() || ex.failed)
		stop_loop(h->loop);
}

/* --- the host loop's own work: each callback sets host_busy ------------- */

static void on_tick(uv_timer_t *h)
{
	(void)h;
	host_busy = 1;
	if (!ex_overdue())              /* overdue: failed, on_check stops */
		ex_host_tick();
}

static void on_pipe(uv_poll_t *h, int status, int events)
{
	(void)h;
	(void)events;
	host_busy = 1;
	if (status < 0)
		ex_error("uv_poll(pipe)", status);
	else
		ex_host_readable();
}

static void close_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* Closing every handle makes uv_run return. */
static void stop_loop(uv_loop_t *loop)
{
	uv_walk(loop, close_handle, NULL);
}

int main(void)
{
	static uv_poll_t pipe_poll;
	static uv_timer_t tick;
	uv_loop_t loop;
	int fd, err;

	base = ex_start("uv_timers");
	if (!base)
		return ex_finish();
	fd = hrt_base_fd(base);
	if (fd < 0) {
		ex_error("hrt_base_fd", fd);
		return ex_finish();
	}
	err = uv_loop_init(&loop);
	if (err < 0) {
		ex_error("uv_loop_init", err);
		return ex_finish();
	}

	EX_TRY(uv_poll_init(&loop, &hrt_poll, fd));
	EX_TRY(uv_poll_start(&hrt_poll, UV_READABLE, on_hrt_readable));
	EX_TRY(uv_check_init(&loop, &hrt_check));
	EX_TRY(uv_check_start(&hrt_check, on_check));
	slack_orig = slack_set = (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	EX_TRY(uv_timer_init(&loop, &hrt_window));
	EX_TRY(uv_prepare_init(&loop, &hrt_prepare));
	EX_TRY(uv_prepare_start(&hrt_prepare, ranged_plan));

	EX_TRY(uv_poll_init(&loop, &pipe_poll, ex.pipe[0]));
	EX_TRY(uv_poll_start(&pipe_poll, UV_READABLE, on_pipe));
	EX_TRY(uv_timer_init(&loop, &tick));
	EX_TRY(uv_timer_start(&tick, on_tick, EX_TICK_MS, EX_TICK_MS));

	uv_run(&loop, UV_RUN_DEFAULT);  /* until stop_loop() */
out:
	set_slack(slack_orig);
	stop_loop(&loop);               /* no-op after a normal stop */
	uv_run(&loop, UV_RUN_DEFAULT);  /* runs the close callbacks */
	if (uv_loop_close(&loop) < 0)
		ex_error("uv_loop_close", -EBUSY);
	return ex_finish();
}
