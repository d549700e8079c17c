/* SPDX-License-Identifier: MIT */
/*
 * uv_plan.h - an hrt base inside a libuv loop that keeps its own uv_run:
 * uv_plan_start() before uv_run, uv_plan_stop() to let uv_run end (it
 * closes the glue's handles).  This is all the glue; copy it.  The one
 * README recommends for libuv: a wake-up costs libuv's own epoll_wait and
 * nothing else (uv_host.h makes two epoll calls a wake-up).
 *
 * The same shape as ev_host.h:
 *   prepare  hrt_base_plan_sleep runs what is due (hrt's callbacks run
 *            here, at idle: libuv's callbacks of this wake-up have run)
 *            and plans the sleep: a uv_timer at the window's start rounded
 *            up to libuv's millisecond, the rest of the window as the
 *            thread's slack; a window too narrow for that takes the
 *            timerfd path (the uv_poll on hrt_base_fd, which also wakes
 *            the loop when another thread starts a timer earlier than the
 *            plan: no uv_async_t);
 *   check    hrt_base_plan_wake: the thread's own slack back after the
 *            sleep (libuv runs its I/O callbacks inside its poll, before
 *            the check, so those still see the window's).
 * libuv computes its poll timeout after the prepare handles run, so the
 * timer started there bounds that very sleep.  uv_stop works as in libuv;
 * hrt_base_stop is not needed (no hrt loop runs).  Used by uv_echo.c and
 * bench/server (server-hrt-plan).
 */
#ifndef HRT_UV_PLAN_H
#define HRT_UV_PLAN_H

#include <uv.h>

#include "hrt.h"

struct uv_plan {
	uv_prepare_t prepare;
	uv_check_t check;
	uv_timer_t timer;               /* the window's start */
	uv_poll_t poll;                 /* hrt_base_fd readable */
	struct hrt_base *base;
	int err;                        /* the first error of plan_sleep */
};

/* The timer and the poll only wake the loop: the next prepare runs hrt.
 * The check, after the sleep: the thread's own timer slack back. */
static inline void uv_plan_nothing(uv_timer_t *t) { (void)t; }
static inline void uv_plan_readable(uv_poll_t *p, int s, int e) { (void)p, (void)s, (void)e; }
static inline void uv_plan_woke(uv_check_t *c)
{ hrt_base_plan_wake(HRT_CONTAINER_OF(c, struct uv_plan, check)->base); }

static inline void uv_plan_plan(uv_prepare_t *p)
{
	struct uv_plan *h = HRT_CONTAINER_OF(p, struct uv_plan, prepare);
	hrt_time_t delay;
	int r;

	uv_update_time(p->loop);        /* the timer counts from now */
	r = hrt_base_plan_sleep(h->base, 1000000, &delay);
	if (r == 1)                     /* rounded up: never before the window */
		uv_timer_start(&h->timer, uv_plan_nothing, (uint64_t)(delay + 999999) / 1000000, 0);
	else                            /* 0: the timerfd wakes the loop */
		uv_timer_stop(&h->timer);
	if (r < 0 && h->err == 0) {
		h->err = r;
		uv_stop(p->loop);       /* uv_run returns; uv_plan_stop says why */
	}
}

/* 0 or a negative errno (hrt's or libuv's: the same on Linux). */
static inline int uv_plan_start(struct uv_plan *h, uv_loop_t *loop, struct hrt_base *base)
{
	int fd = hrt_base_fd(base);
	int err = fd < 0 ? fd : uv_poll_init(loop, &h->poll, fd);

	if (err < 0)
		return err;
	h->base = base;
	h->err = 0;
	uv_prepare_init(loop, &h->prepare);
	uv_check_init(loop, &h->check);
	uv_timer_init(loop, &h->timer);
	uv_prepare_start(&h->prepare, uv_plan_plan);
	uv_check_start(&h->check, uv_plan_woke);
	return uv_poll_start(&h->poll, UV_READABLE, uv_plan_readable);
}

/* Closes the glue's handles (uv_run runs their closes); the timerfd armed
 * again, the thread's slack its own.  0 or the first error of the plan. */
static inline int uv_plan_stop(struct uv_plan *h)
{
	int err = hrt_base_plan_done(h->base);

	uv_close((uv_handle_t *)&h->prepare, NULL);
	uv_close((uv_handle_t *)&h->check, NULL);
	uv_close((uv_handle_t *)&h->timer, NULL);
	uv_close((uv_handle_t *)&h->poll, NULL);
	return h->err ? h->err : err;
}

#endif /* HRT_UV_PLAN_H */
