/* SPDX-License-Identifier: MIT */
/*
 * coalesce_plan.h - the coalesced wake-up for an hrt base inside a host
 * loop that sleeps itself, with a millisecond timeout, under the thread's
 * timer slack, and cannot be driven from outside (libev: it tells neither
 * its epoll fd nor its timeout; ev_coalesce.h wraps this in its watchers).
 * A loop that can be driven gets nanosecond sleeps: coalesce_sleep.h.
 *
 * Such a loop's sleep is the kernel window hrt needs whenever the timers'
 * window is wider than the loop's millisecond.  Before each sleep,
 * co_plan() holds the timerfd disarmed (hrt_base_hold_fd: a timer without
 * slack would end the sleep exactly) and asks for the window
 * (hrt_base_wait_window).  Wide enough: it sets the loop thread's slack
 * (prctl PR_SET_TIMERSLACK) to what is left of the window after its start
 * rounded up to the millisecond, and returns that many milliseconds for
 * the host's own timer.  Too narrow (or coalescing off): it gives the
 * timerfd back, armed, and the host's watcher on hrt_base_fd wakes it as
 * usual.  After the sleep, co_due() says whether the window has opened
 * (run a pass).  A start from another thread that moves the earliest hard
 * expiry earlier arms the held timerfd (hrt_base_hold_fd), so the host's
 * watcher wakes it in time: no ev_async needed.
 *
 * Limits: the rounding up costs up to a millisecond of each window (and a
 * window narrower than that takes the timerfd); the slack widens the
 * host's own timers too while it is set (by at most the window's width,
 * never past hrt's hard expiries).
 */
#ifndef HRT_COALESCE_PLAN_H
#define HRT_COALESCE_PLAN_H

#include <stdint.h>
#include <sys/prctl.h>

#include "hrt.h"

/* Time between the plan and the kernel's hrtimer (the rest of the host's
 * pre-sleep phase and epoll_wait's entry): kept out of the slack, so the
 * sleep ends by the hard expiry. */
#define CO_MARGIN_NS 100000
/* Less slack than this is not worth the ranged path. */
#define CO_MIN_SLACK_NS 200000

struct co_plan {
	struct hrt_base *base;
	hrt_time_t soft;                /* the planned window's start (MAX: none) */
	int held;                       /* the timerfd is held disarmed */
	int err;                        /* the first error (< 0), or 0 */
	int slept;                      /* the planned sleep could block */
	unsigned long slack_set, slack_orig;
	unsigned long long wakeups;     /* co_due after such a sleep */
};

static inline void co_init(struct co_plan *c, struct hrt_base *base)
{
	c->base = base;
	c->soft = HRT_TIME_MAX;
	c->held = c->err = c->slept = 0;
	c->wakeups = 0;
	c->slack_orig = c->slack_set = (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
}

static inline void co_slack(struct co_plan *c, unsigned long ns)
{
	if (ns != c->slack_set && prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) == 0)
		c->slack_set = ns;
}

/* hold = 1 before every sleep: it disarms a timerfd a start re-armed. */
static inline void co_hold(struct co_plan *c, int hold)
{
	int err;

	if (c->held == hold && !hold)
		return;
	err = hrt_base_hold_fd(c->base, hold);
	if (err < 0 && !c->err)
		c->err = err;
	if (!err)
		c->held = hold;
}

/* The window, 1 if wide enough at millisecond resolution (*ms, *start). */
static inline int co_window(struct co_plan *c, uint64_t *ms, hrt_time_t *soft,
			    hrt_time_t *hard, hrt_time_t *start)
{
	hrt_time_t now;

	if (hrt_base_get_coalesce(c->base) != 1 ||
	    hrt_base_wait_window(c->base, soft, hard) != 1 || hrt_base_now(c->base, &now))
		return 0;
	*ms = *soft > now ? (uint64_t)(*soft - now + 999999) / 1000000 : 0;
	*start = now + (hrt_time_t)*ms * 1000000;
	return *hard - *start - CO_MARGIN_NS >= CO_MIN_SLACK_NS;
}

/* Before the sleep: 1 with *ms for the host's own timer (the ranged
 * path), or 0 (the timerfd path: stop that timer).  The hold comes before
 * the window is read (a start after it arms the timerfd), but a timerfd
 * not held is held only once the window is wide: no arm and disarm in
 * turn while the timerfd path runs. */
static inline int co_plan(struct co_plan *c, uint64_t *ms)
{
	hrt_time_t soft, hard, start;
	int w = c->held || co_window(c, ms, &soft, &hard, &start);

	if (w) {
		co_hold(c, 1);
		w = c->held && co_window(c, ms, &soft, &hard, &start);
	}
	if (!w) {
		c->soft = HRT_TIME_MAX;
		co_slack(c, c->slack_orig);
		co_hold(c, 0);
		return 0;
	}
	c->soft = soft;
	c->slept = *ms > 0;
	co_slack(c, (unsigned long)(hard - start - CO_MARGIN_NS));
	return 1;
}

/* After the sleep: 1 if the planned window has opened (run a pass:
 * hrt_base_run(base, now, idle)), else 0. */
static inline int co_due(struct co_plan *c, hrt_time_t now)
{
	if (now < c->soft)
		return 0;
	c->soft = HRT_TIME_MAX;
	c->wakeups += c->slept;
	return 1;
}

/* Gives the timerfd back and the thread its slack. */
static inline void co_done(struct co_plan *c)
{
	co_slack(c, c->slack_orig);
	co_hold(c, 0);
}

#endif /* HRT_COALESCE_PLAN_H */
