/* SPDX-License-Identifier: MIT */
/*
 * ev_timers.c - hrt range timers in a libev loop.
 *
 * The base's timerfd (hrt_base_fd) is watched by an ev_io at EV_MAXPRI.
 * libev first collects every watcher that became ready in this iteration,
 * then invokes them highest priority first, so the hrt watcher runs before
 * the host's own watchers and ev_pending_count() tells how many of those
 * are still waiting behind it:
 *
 *     idle = (ev_pending_count(loop) == 0)
 *
 * Timers that are due run at once either way (the leftmost run); the greedy
 * walk, which runs soft-expired timers early, is kept for wake-ups with
 * nothing else to do.  (The other way round - hrt at EV_MINPRI - would run
 * it after everything else had been invoked, when ev_pending_count() is
 * always 0, so idle would carry no information.)
 *
 * The coalesced path (ev_coalesce.h): while the timers' window is wider
 * than libev's millisecond (its epoll backend sleeps in whole ms, rounded
 * up), an ev_prepare holds the timerfd disarmed, starts an ev_timer at the
 * window's start and sets the loop thread's slack to the rest of it; the
 * timer runs a pass when the window has opened.  Otherwise the timerfd
 * path above.  HRT_COALESCE=off in the environment keeps the timerfd path.
 *
 * The workload and the self-check live in example.h; here only the loop.
 */
#include <ev.h>

#include "example.h"
#include "ev_coalesce.h"

static struct hrt_base *base;
static struct ev_coalesce co;   /* the coalesced path */

/* --- the integration ---------------------------------------------------- */

static void on_hrt_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	/* Others wait behind us?  (The coalesced path's timer is not host
	 * work.) */
	int idle = ev_pending_count(loop) - (ev_is_pending(&co.timer) != 0) == 0;
	ssize_t n;

	(void)w;
	if (revents & EV_ERROR) {
		ex_error("ev_io(hrt)", -EBADF);
		ev_break(loop, EVBREAK_ALL);
		return;
	}
	n = hrt_base_dispatch(base, idle);  /* drains the fd, runs timers, re-arms */
	ex_dispatched(idle, n);
	if (ex_all_fired())
		ev_break(loop, EVBREAK_ALL);
}

/* After the coalesced path's pass (idle: after the sleep). */
static void on_co_pass(struct ev_loop *loop, ssize_t n)
{
	ex_dispatched(1, n);
	if (co.plan.err)
		ex_error("hrt_base_hold_fd", co.plan.err);
	if (ex_all_fired() || ex.failed)
		ev_break(loop, EVBREAK_ALL);
}

/* --- the host loop's own work ------------------------------------------- */

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	if (ex.failed || ex_overdue())
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
	ev_io hrt_io, pipe_io;
	ev_timer tick;
	int fd;

	base = ex_start("ev_timers");
	if (!base)
		return ex_finish();
	fd = hrt_base_fd(base);
	if (fd < 0) {
		ex_error("hrt_base_fd", fd);
		return ex_finish();
	}
	loop = ev_loop_new(EVFLAG_AUTO);
	if (!loop) {
		ex_error("ev_loop_new", -ENOMEM);
		return ex_finish();
	}

	ev_io_init(&hrt_io, on_hrt_readable, fd, EV_READ);
	ev_set_priority(&hrt_io, EV_MAXPRI);    /* before the host's watchers */
	ev_io_start(loop, &hrt_io);

	co.passed = on_co_pass;
	ev_coalesce_start(&co, loop, base);

	ev_io_init(&pipe_io, on_pipe, ex.pipe[0], EV_READ);
	ev_io_start(loop, &pipe_io);
	ev_timer_init(&tick, on_tick, EX_TICK_MS / 1e3, EX_TICK_MS / 1e3);
	ev_timer_start(loop, &tick);

	ev_run(loop, 0);                /* until ev_break() */

	ev_coalesce_stop(&co, loop);
	ev_io_stop(loop, &hrt_io);      /* before hrt_base_free closes the fd */
	ev_io_stop(loop, &pipe_io);
	ev_timer_stop(loop, &tick);
	ev_loop_destroy(loop);
	return ex_finish();
}
