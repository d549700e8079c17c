/* SPDX-License-Identifier: MIT */
/*
 * bench/server/uv_plan_host.h - server-hrt-plan's glue: libuv sleeps in
 * its own epoll_wait and hrt plans that sleep, so a wake-up costs one
 * epoll call (hrt_base_loop_host, examples/uv_host.h, makes two: its own
 * and libuv's UV_RUN_NOWAIT).  The same shape as examples/ev_host.h:
 *   prepare  hrt_base_plan_sleep runs what is due and plans the sleep: a
 *            uv_timer at the window's start rounded up to libuv's
 *            millisecond, the rest of the window as the thread's slack;
 *            a window too narrow for that takes the timerfd path (the
 *            uv_poll on hrt_base_fd, which also wakes the loop when
 *            another thread starts a timer earlier than the plan);
 *   check    hrt_base_plan_wake: libuv's callbacks after the sleep run
 *            with the thread's own slack.
 * The timer and the poll only wake the loop; the next prepare runs hrt.
 * libuv 1.44 computes its poll timeout after the prepare handles run, so
 * the timer started there bounds that very sleep.
 */
#ifndef HRT_BENCH_SERVER_UV_PLAN_HOST_H
#define HRT_BENCH_SERVER_UV_PLAN_HOST_H

#include <uv.h>

#include "hrt.h"

struct uv_plan_host {
	uv_prepare_t prepare;
	uv_check_t check;
	uv_timer_t timer;               /* the window's start */
	uv_poll_t poll;                 /* hrt_base_fd readable */
	struct hrt_base *base;
	int err;                        /* the first error of plan_sleep */
};

static inline void uv_plan_nothing(uv_timer_t *t) { (void)t; }
static inline void uv_plan_readable(uv_poll_t *p, int s, int e) { (void)p, (void)s, (void)e; }

static inline void uv_plan_woke(uv_check_t *c)
{
	hrt_base_plan_wake(((struct uv_plan_host *)c->data)->base);
}

static inline void uv_plan_plan(uv_prepare_t *p)
{
	struct uv_plan_host *h = p->data;
	hrt_time_t delay;
	int r;

	uv_update_time(p->loop);        /* the timer counts from now */
	r = hrt_base_plan_sleep(h->base, 1000000, &delay);
	if (r == 1) {                   /* rounded up: never before the window */
		uv_timer_start(&h->timer, uv_plan_nothing, (uint64_t)(delay + 999999) / 1000000, 0);
		return;
	}
	uv_timer_stop(&h->timer);       /* 0: the timerfd wakes the loop */
	if (r < 0 && h->err == 0) {
		h->err = r;
		uv_stop(p->loop);
	}
}

/* 0 or a negative errno (libuv's or hrt's). */
static inline int uv_plan_start(struct uv_plan_host *h, uv_loop_t *loop, struct hrt_base *base)
{
	int err;

	h->base = base;
	h->err = 0;
	h->prepare.data = h->check.data = h;
	uv_prepare_init(loop, &h->prepare);
	uv_check_init(loop, &h->check);
	uv_timer_init(loop, &h->timer);
	err = uv_poll_init(loop, &h->poll, hrt_base_fd(base));
	if (err < 0)
		return err;
	uv_prepare_start(&h->prepare, uv_plan_plan);
	uv_check_start(&h->check, uv_plan_woke);
	return uv_poll_start(&h->poll, UV_READABLE, uv_plan_readable);
}

/* Closes the handles (the loop runs their closes); the timerfd armed
 * again, the thread's slack its own.  0 or the first error. */
static inline int uv_plan_stop(struct uv_plan_host *h)
{
	int err = hrt_base_plan_done(h->base);

	uv_close((uv_handle_t *)&h->prepare, NULL);
	uv_close((uv_handle_t *)&h->check, NULL);
	uv_close((uv_handle_t *)&h->timer, NULL);
	uv_close((uv_handle_t *)&h->poll, NULL);
	return h->err ? h->err : err;
}

#endif /* HRT_BENCH_SERVER_UV_PLAN_HOST_H */
