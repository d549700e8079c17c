/* SPDX-License-Identifier: MIT */
/*
 * uv_coalesce.h - the coalesced wake-up for an hrt base inside a libuv
 * loop (examples/uv_timers.c and bench/coalesce.c --uv use it).
 *
 * libuv sleeps in epoll_wait with a millisecond timeout under the thread's
 * timer slack: the kernel window hrt needs, whenever the timers' window is
 * wider than that millisecond.  Before each poll (a uv_prepare_t) the
 * helper asks for the window (hrt_base_wait_window).  Wide enough: it holds
 * the timerfd disarmed (hrt_base_hold_fd: a timer without slack would end
 * the poll exactly), starts a libuv timer at the window's start rounded up
 * to the loop's millisecond, and sets the loop thread's slack (prctl
 * PR_SET_TIMERSLACK) to what is left of the window, so the kernel may end
 * the poll on an interrupt that happens anyway.  Too narrow (or coalescing
 * off): it gives the timerfd back, armed, and the host's uv_poll_t on
 * hrt_base_fd wakes it as usual.  After the poll the host asks
 * uv_coalesce_due() whether the window has opened and runs a pass.
 *
 * Limits: the slack widens the host's own libuv timers too while it is set
 * (by at most the window's width, never past hrt's hard expiries); a start
 * from another thread that moves the earliest hard expiry must wake the
 * loop itself (a uv_async_t) so that the helper plans again.
 */
#ifndef HRT_UV_COALESCE_H
#define HRT_UV_COALESCE_H

#include <sys/prctl.h>
#include <uv.h>

#include "hrt.h"

/* Time between the plan and the kernel's hrtimer (the rest of the prepare
 * phase and epoll_wait's entry): kept out of the slack, so the sleep ends
 * by the hard expiry. */
#define UV_CO_MARGIN_NS 100000
/* Less slack than this is not worth the ranged path. */
#define UV_CO_MIN_SLACK_NS 200000

struct uv_coalesce {
	struct hrt_base *base;
	uv_prepare_t prepare;           /* plans before each poll */
	uv_timer_t timer;               /* ends the poll at the window's start */
	hrt_time_t soft;                /* the planned window's start (MAX: none) */
	int held;                       /* the timerfd is held disarmed */
	int err;                        /* the first error (< 0), or 0 */
	unsigned long slack_set, slack_orig;
};

static inline void uv_co_slack(struct uv_coalesce *c, unsigned long ns)
{
	if (ns != c->slack_set && prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) == 0)
		c->slack_set = ns;
}

static inline void uv_co_hold(struct uv_coalesce *c, int hold)
{
	int err;

	if (c->held == hold)
		return;
	err = hrt_base_hold_fd(c->base, hold);
	if (err < 0 && !c->err)
		c->err = err;
	if (!err)
		c->held = hold;
}

static inline void uv_co_noop(uv_timer_t *h)
{
	(void)h;                        /* the host's check phase runs the pass */
}

static inline void uv_co_plan(uv_prepare_t *h)
{
	struct uv_coalesce *c = (struct uv_coalesce *)h->data;
	hrt_time_t soft, hard, now, start = 0;
	uint64_t ms = 0;
	int w = 0;

	if (hrt_base_get_coalesce(c->base) == 1)
		w = hrt_base_wait_window(c->base, &soft, &hard);
	if (w == 1 && hrt_base_now(c->base, &now) == 0) {
		ms = soft > now ? (uint64_t)(soft - now + 999999) / 1000000 : 0;
		start = now + (hrt_time_t)ms * 1000000;
		if (hard - start - UV_CO_MARGIN_NS < UV_CO_MIN_SLACK_NS)
			w = 0;          /* too narrow at millisecond resolution */
	} else {
		w = 0;
	}
	if (!w) {
		c->soft = HRT_TIME_MAX;
		uv_timer_stop(&c->timer);
		uv_co_slack(c, c->slack_orig);
		uv_co_hold(c, 0);
		return;
	}
	uv_co_hold(c, 1);
	if (!c->held)
		return;
	c->soft = soft;
	uv_co_slack(c, (unsigned long)(hard - start - UV_CO_MARGIN_NS));
	uv_update_time(h->loop);        /* the timeout counts from now */
	uv_timer_start(&c->timer, uv_co_noop, ms, 0);
}

/* 0 or a negative libuv error.  The base must be CLOCK_MONOTONIC. */
static inline int uv_coalesce_init(struct uv_coalesce *c, uv_loop_t *loop,
				   struct hrt_base *base)
{
	int err;

	c->base = base;
	c->soft = HRT_TIME_MAX;
	c->held = 0;
	c->err = 0;
	c->slack_orig = c->slack_set = (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if ((err = uv_timer_init(loop, &c->timer)) < 0 ||
	    (err = uv_prepare_init(loop, &c->prepare)) < 0)
		return err;
	c->prepare.data = c;
	return uv_prepare_start(&c->prepare, uv_co_plan);
}

/* After the poll (a uv_check_t): 1 if the planned window has opened (run
 * a pass: hrt_base_run(base, now, idle)), else 0. */
static inline int uv_coalesce_due(struct uv_coalesce *c, hrt_time_t now)
{
	if (now < c->soft)
		return 0;
	c->soft = HRT_TIME_MAX;
	return 1;
}

/* Gives the timerfd back and the thread its slack (the handles close with
 * the loop's others). */
static inline void uv_coalesce_done(struct uv_coalesce *c)
{
	uv_co_slack(c, c->slack_orig);
	uv_co_hold(c, 0);
}

#endif /* HRT_UV_COALESCE_H */
