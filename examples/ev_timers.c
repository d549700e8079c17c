/* SPDX-License-Identifier: MIT */
/*
 * ev_timers.c - hrt range timers in a libev loop.
 *
 * ev_host_start() (ev_host.h, all the glue) adds three watchers: an
 * ev_prepare that, before each sleep, runs what is due in hrt
 * (hrt_base_plan_sleep) and plans the next sleep - while the timers'
 * window is wider than libev's millisecond (its epoll backend sleeps in
 * whole ms), an ev_timer at the window's start rounded up to the ms with
 * the loop thread's slack the rest of it, so the kernel may end the sleep
 * on an interrupt that happens anyway; otherwise the timerfd path, an
 * ev_io on hrt_base_fd, which also wakes the loop when another thread
 * starts an earlier timer.  The pass runs in the prepare, after the host's
 * own callbacks of that wake-up: idle, so the greedy walk may run.
 * HRT_COALESCE=off in the environment keeps the timerfd path.
 *
 * The workload and the self-check live in example.h; here only the loop.
 */
#include <ev.h>

#include "example.h"
#include "ev_host.h"

static struct hrt_base *base;
static struct ev_host host;     /* the integration */

/* --- the host loop's own work ------------------------------------------- */

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	if (ex.failed || ex_all_fired() || ex_overdue())
		ev_break(loop, EVBREAK_ALL);
	else
		ex_host_tick();
}

static void on_pipe(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)w;
	if (revents & EV_ERROR) {
		ex_error("ev_io(pipe)", -EBADF);
		ev_break(loop, EVBREAK_ALL);
		return;
	}
	ex_host_readable();
}

int main(void)
{
	struct ev_loop *loop;
	ev_io pipe_io;
	ev_timer tick;
	int err;

	base = ex_start("ev_timers");
	if (!base)
		return ex_finish();
	loop = ev_loop_new(EVFLAG_AUTO);
	if (!loop) {
		ex_error("ev_loop_new", -ENOMEM);
		return ex_finish();
	}

	ev_host_start(&host, loop, base);

	ev_io_init(&pipe_io, on_pipe, ex.pipe[0], EV_READ);
	ev_io_start(loop, &pipe_io);
	ev_timer_init(&tick, on_tick, EX_TICK_MS / 1e3, EX_TICK_MS / 1e3);
	ev_timer_start(loop, &tick);

	ev_run(loop, 0);                /* until ev_break() */

	err = ev_host_stop(&host, loop);        /* before hrt_base_free closes the fd */
	if (err < 0)
		ex_error("hrt_base_plan_sleep", err);
	ev_io_stop(loop, &pipe_io);
	ev_timer_stop(loop, &tick);
	ev_loop_destroy(loop);
	return ex_finish();
}
