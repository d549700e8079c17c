/* SPDX-License-Identifier: MIT */
/*
 * ev_coalesce.h - coalesce_plan.h in a libev loop (examples/ev_timers.c
 * and bench/coalesce.c --ev use it): an ev_prepare plans before each
 * sleep and starts an ev_timer at the window's start rounded up to the
 * millisecond (libev's epoll backend sleeps in whole ms), so the sleep ends
 * in the window under the thread's slack, and the timer runs hrt's pass.
 * The host's own ev_io on hrt_base_fd dispatches as usual: the timerfd
 * path (narrow windows, coalescing off) and starts from other threads,
 * which arm the held timerfd (hrt_base_hold_fd).
 */
#ifndef HRT_EV_COALESCE_H
#define HRT_EV_COALESCE_H

#include <ev.h>

#include "coalesce_plan.h"

struct ev_coalesce {
	struct co_plan plan;
	ev_prepare prepare;             /* plans before each sleep */
	ev_timer timer;                 /* at the window's start: the pass */
	void (*passed)(struct ev_loop *loop, ssize_t n);        /* or NULL */
};

static inline void ev_co_plan(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct ev_coalesce *c = (struct ev_coalesce *)w->data;
	uint64_t ms;

	(void)revents;
	ev_timer_stop(loop, &c->timer);
	if (co_plan(&c->plan, &ms)) {
		ev_now_update(loop);    /* the timeout counts from now */
		ev_timer_set(&c->timer, (double)ms / 1e3, 0.);
		ev_timer_start(loop, &c->timer);
	}
}

static inline void ev_co_pass(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ev_coalesce *c = (struct ev_coalesce *)w->data;
	hrt_time_t now;
	ssize_t n;

	(void)revents;
	if (hrt_base_now(c->plan.base, &now) == 0 && co_due(&c->plan, now)) {
		n = hrt_base_run(c->plan.base, now, 1);
		if (c->passed)
			c->passed(loop, n);
	}
}

/* Starts the watchers (c->passed set before, or NULL); the base must be
 * CLOCK_MONOTONIC. */
static inline void ev_coalesce_start(struct ev_coalesce *c, struct ev_loop *loop,
				     struct hrt_base *base)
{
	co_init(&c->plan, base);
	ev_timer_init(&c->timer, ev_co_pass, 0., 0.);
	ev_prepare_init(&c->prepare, ev_co_plan);
	c->prepare.data = c->timer.data = c;
	ev_prepare_start(loop, &c->prepare);
}

/* Stops them; gives the timerfd back and the thread its slack. */
static inline void ev_coalesce_stop(struct ev_coalesce *c, struct ev_loop *loop)
{
	ev_prepare_stop(loop, &c->prepare);
	ev_timer_stop(loop, &c->timer);
	co_done(&c->plan);
}

#endif /* HRT_EV_COALESCE_H */
