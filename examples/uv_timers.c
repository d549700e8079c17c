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
 * The coalesced path (uv_coalesce.h): while the timers' window is wider
 * than libuv's millisecond, a uv_prepare_t holds the timerfd disarmed,
 * starts a libuv timer at the window's start and sets the loop thread's
 * slack to the rest of it; the check phase then runs a pass once the
 * window has opened.  Otherwise the timerfd path above.  HRT_COALESCE=off
 * in the environment keeps the timerfd path.
 *
 * The workload and the self-check live in example.h; here only the loop.
 */
#include <uv.h>

#include "example.h"
#include "uv_coalesce.h"

static struct hrt_base *base;
static uv_poll_t hrt_poll;      /* hrt_base_fd(base) is readable */
static uv_check_t hrt_check;    /* after this iteration's I/O callbacks */
static int hrt_readable;        /* hrt_poll fired in this iteration */
static int host_busy;           /* another callback ran in this iteration */
static struct uv_coalesce co;   /* the coalesced path */

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

static void on_check(uv_check_t *h)
{
	int idle = !host_busy;          /* no other callback in this iteration */
	ssize_t n;

	host_busy = 0;
	if (hrt_readable) {
		hrt_readable = 0;
		n = hrt_base_dispatch(base, idle);  /* drains the fd, runs timers, re-arms */
		ex_dispatched(idle, n);
	} else if (uv_coalesce_due(&co, ex_now())) {    /* the window opened */
		n = hrt_base_run(base, ex_now(), idle);
		ex_dispatched(idle, n);
	}
	if (co.plan.err)
		ex_error("hrt_base_hold_fd", co.plan.err);
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
	EX_TRY(uv_coalesce_init(&co, &loop, base));

	EX_TRY(uv_poll_init(&loop, &pipe_poll, ex.pipe[0]));
	EX_TRY(uv_poll_start(&pipe_poll, UV_READABLE, on_pipe));
	EX_TRY(uv_timer_init(&loop, &tick));
	EX_TRY(uv_timer_start(&tick, on_tick, EX_TICK_MS, EX_TICK_MS));

	uv_run(&loop, UV_RUN_DEFAULT);  /* until stop_loop() */
out:
	uv_coalesce_done(&co);
	stop_loop(&loop);               /* no-op after a normal stop */
	uv_run(&loop, UV_RUN_DEFAULT);  /* runs the close callbacks */
	if (uv_loop_close(&loop) < 0)
		ex_error("uv_loop_close", -EBUSY);
	return ex_finish();
}
