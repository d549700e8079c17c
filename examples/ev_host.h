/* SPDX-License-Identifier: MIT */
/*
 * ev_host.h - an hrt base inside a libev loop: ev_host_start() before
 * ev_run, ev_host_stop() after.  This is all the glue; copy it.
 *
 * Before each sleep an ev_prepare calls hrt_base_plan_sleep, which runs
 * what is due and plans the next sleep: libev's epoll backend sleeps in
 * whole milliseconds, so an ev_timer at the window's start rounded up to
 * the millisecond, with the loop thread's timer slack the rest of the
 * window (the kernel ends the sleep on an interrupt that happens anyway).
 * A window narrower than that allows takes the timerfd path: an ev_io on
 * hrt_base_fd, which also wakes the loop when another thread starts a
 * timer earlier than the plan (no ev_async).  The timer and the ev_io only
 * wake the loop; the next prepare runs the pass, after the host's own
 * callbacks of that wake-up (so at idle: the greedy walk may run).  An
 * ev_check of the highest priority gives the thread its own timer slack
 * back as the sleep ends, so libev's callbacks run with it.
 * Used by ev_timers.c, ev_cross_thread.c and bench/coalesce.c.
 */
#ifndef HRT_EV_HOST_H
#define HRT_EV_HOST_H

#include <ev.h>

#include "hrt.h"

struct ev_host {
	ev_prepare prepare;             /* data: the base */
	ev_check check;                 /* the sleep ended */
	ev_io io;                       /* hrt_base_fd readable */
	ev_timer timer;                 /* the window's start */
};

/* The ev_io and the timer only wake the loop: the next prepare runs hrt.
 * The check, first after the sleep: libev's callbacks get the thread's own
 * timer slack back. */
static inline void ev_host_io(struct ev_loop *l, ev_io *w, int e) { (void)l, (void)w, (void)e; }
static inline void ev_host_tm(struct ev_loop *l, ev_timer *w, int e) { (void)l, (void)w, (void)e; }
static inline void ev_host_woke(struct ev_loop *l, ev_check *w, int e)
{ (void)l, (void)e, hrt_base_plan_wake(w->data); }

static inline void ev_host_plan(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct ev_host *h = HRT_CONTAINER_OF(w, struct ev_host, prepare);
	hrt_time_t delay;

	(void)revents;
	ev_now_update(loop);            /* the delay counts from now */
	/* ev_timer_again: a repeat of 0 stops the timer (no plan, or an error:
	 * at the end); +1 ns keeps a delay of 0 (something due now) a timer. */
	h->timer.repeat = hrt_base_plan_sleep(w->data, 1000000, &delay) == 1 ? (delay + 1) / 1e9 : 0.;
	ev_timer_again(loop, &h->timer);
}

static inline void ev_host_start(struct ev_host *h, struct ev_loop *loop, struct hrt_base *base)
{
	ev_prepare_init(&h->prepare, ev_host_plan);
	ev_check_init(&h->check, ev_host_woke);
	h->prepare.data = h->check.data = base;
	ev_set_priority(&h->check, EV_MAXPRI);
	ev_io_init(&h->io, ev_host_io, hrt_base_fd(base), EV_READ);
	ev_init(&h->timer, ev_host_tm);
	ev_prepare_start(loop, &h->prepare);
	ev_check_start(loop, &h->check);
	ev_io_start(loop, &h->io);
}

/* Stops the watchers; the timerfd armed again, the thread's slack its own.
 * 0, or the first error of hrt_base_plan_sleep (hrt_base_plan_done). */
static inline int ev_host_stop(struct ev_host *h, struct ev_loop *loop)
{
	ev_prepare_stop(loop, &h->prepare);
	ev_check_stop(loop, &h->check);
	ev_io_stop(loop, &h->io);
	ev_timer_stop(loop, &h->timer);
	return hrt_base_plan_done(h->prepare.data);
}

#endif /* HRT_EV_HOST_H */
