/* SPDX-License-Identifier: MIT */
/*
 * uv_timers.c - hrt range timers in a libuv loop.
 *
 * uv_host_run() (uv_host.h, all the glue) runs the loop in place of
 * uv_run(UV_RUN_DEFAULT): hrt_base_loop_host sleeps for both loops, in one
 * epoll on libuv's epoll fd and hrt_base_fd, for at most libuv's timeout
 * and with nanosecond resolution, so hrt's wake-ups coalesce as in
 * hrt_base_loop (the thread's timer slack is the timers' window while it
 * waits for them).  After each sleep it runs hrt's pass, then libuv's
 * iteration (UV_RUN_NOWAIT):
 *
 *     idle = 1  if nothing of libuv's was ready (no I/O, no host timer),
 *     idle = 0  otherwise,
 *
 * so with the default greedy policy (idle) the extra work of running timers
 * early is done on wake-ups that were for timers only; when the loop is busy
 * with its own I/O, only the timers that are due (the leftmost run) run.
 * HRT_COALESCE=off in the environment: the timerfd ends the sleep exactly.
 *
 * The workload and the self-check live in example.h; here only the loop.
 */
#include <uv.h>

#include "example.h"
#include "uv_host.h"

static uv_loop_t loop;
static struct hrt_base *base;

static void stop_loop(void);

/* --- the host loop's own work ------------------------------------------ */

static void on_tick(uv_timer_t *h)
{
	(void)h;
	if (ex_all_fired() || ex_overdue())     /* done, or overdue: failed */
		stop_loop();
	else
		ex_host_tick();
}

static void on_pipe(uv_poll_t *h, int status, int events)
{
	(void)h;
	(void)events;
	if (status < 0)
		ex_error("uv_poll(pipe)", status);
	else
		ex_host_readable();
	if (ex.failed)
		stop_loop();
}

static void close_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* uv_host_run returns; the handles close in main's last uv_run. */
static void stop_loop(void)
{
	hrt_base_stop(base);
	uv_walk(&loop, close_handle, NULL);
}

int main(void)
{
	static uv_poll_t pipe_poll;
	static uv_timer_t tick;
	int err;

	base = ex_start("uv_timers");
	if (!base)
		return ex_finish();
	err = uv_loop_init(&loop);
	if (err < 0) {
		ex_error("uv_loop_init", err);
		return ex_finish();
	}
	EX_TRY(uv_poll_init(&loop, &pipe_poll, ex.pipe[0]));
	EX_TRY(uv_poll_start(&pipe_poll, UV_READABLE, on_pipe));
	EX_TRY(uv_timer_init(&loop, &tick));
	EX_TRY(uv_timer_start(&tick, on_tick, EX_TICK_MS, EX_TICK_MS));

	EX_TRY(uv_host_run(&loop, base));       /* until stop_loop() */
out:
	stop_loop();                    /* no-op after a normal stop */
	uv_run(&loop, UV_RUN_DEFAULT);  /* runs the close callbacks */
	if (uv_loop_close(&loop) < 0)
		ex_error("uv_loop_close", -EBUSY);
	return ex_finish();
}
