/* SPDX-License-Identifier: MIT */
/*
 * uv_coalesce.h - coalesce_plan.h in a libuv loop (examples/uv_timers.c
 * and bench/coalesce.c --uv use it): a uv_prepare_t plans before each
 * poll and starts a libuv timer at the window's start, so the poll's
 * millisecond timeout ends there under the thread's slack; the host's
 * uv_check_t asks uv_coalesce_due() after the poll and runs a pass.
 */
#ifndef HRT_UV_COALESCE_H
#define HRT_UV_COALESCE_H

#include <uv.h>

#include "coalesce_plan.h"

struct uv_coalesce {
	struct co_plan plan;
	uv_prepare_t prepare;           /* plans before each poll */
	uv_timer_t timer;               /* ends the poll at the window's start */
};

static inline void uv_co_noop(uv_timer_t *h)
{
	(void)h;                        /* the host's check phase runs the pass */
}

static inline void uv_co_plan(uv_prepare_t *h)
{
	struct uv_coalesce *c = (struct uv_coalesce *)h->data;
	uint64_t ms;

	if (!co_plan(&c->plan, &ms)) {
		uv_timer_stop(&c->timer);
		return;
	}
	uv_update_time(h->loop);        /* the timeout counts from now */
	uv_timer_start(&c->timer, uv_co_noop, ms, 0);
}

/* 0 or a negative libuv error.  The base must be CLOCK_MONOTONIC. */
static inline int uv_coalesce_init(struct uv_coalesce *c, uv_loop_t *loop,
				   struct hrt_base *base)
{
	int err;

	co_init(&c->plan, base);
	if ((err = uv_timer_init(loop, &c->timer)) < 0 ||
	    (err = uv_prepare_init(loop, &c->prepare)) < 0)
		return err;
	c->prepare.data = c;
	return uv_prepare_start(&c->prepare, uv_co_plan);
}

static inline int uv_coalesce_due(struct uv_coalesce *c, hrt_time_t now)
{
	return co_due(&c->plan, now);
}

/* The handles close with the loop's others. */
static inline void uv_coalesce_done(struct uv_coalesce *c)
{
	co_done(&c->plan);
}

#endif /* HRT_UV_COALESCE_H */
