/* SPDX-License-Identifier: MIT */
/*
 * ngx_event_timer.c - nginx's event timers as hrt range timers.  Written
 * here against the interface nginx's sources call (ngx_event_timer.h);
 * build.sh copies it over nginx's own, which kept a red-black tree.
 *
 *  - One hrt base per process that runs an event loop (a worker, the cache
 *    manager and loader, a single process), single-thread (nginx touches
 *    timers only from its event loop), greedy policy idle.
 *  - ngx_add_timer(ev, t): soft expiry ngx_current_msec + t, on nginx's
 *    cached clock (the same CLOCK_MONOTONIC, in ms) as an absolute start,
 *    so no clock is read; window min(t / 10, NGX_TIMER_LAZY_DELAY ms).  A
 *    timer that is set and whose hard expiry already lies inside the new
 *    window is left alone: nginx's lazy re-arm, but never later than the
 *    new hard expiry (nginx's allowed 300 ms either way).
 *  - ngx_del_timer: a cancel.  ngx_event_expire_timers: one pass at the
 *    cached clock, idle when no posted event waits (the greedy walk).
 *  - The epoll module's sleep (ngx_event_timer_epoll_wait, which build.sh
 *    puts in place of its epoll_wait call): hrt_base_plan_sleep runs what
 *    is due, holds hrt's timerfd and sets the thread's slack to the
 *    window; one epoll_wait for nginx's I/O and the window's start, the
 *    thread's slack given back after it.  The timerfd sits in nginx's
 *    epoll set behind a connection of its own (the planned sleep's safety
 *    net: hrt arms it when no ranged sleep fits).
 *  - Graceful shutdown waits for non-cancelable timers only: a count of
 *    them, kept as they are set, cancelled and run (no walk over timers).
 *  - timer_resolution: no plan; the alarm's ticks end the sleep and each
 *    pass runs at the clock the tick cached, as nginx's own.
 */
#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#define NGX_HRT_NS_PER_MS  1000000

static struct hrt_base  *ngx_hrt_base;         /* NULL: no event loop here */
static pid_t             ngx_hrt_pid;          /* the process that made it */
static ngx_uint_t        ngx_hrt_non_cancelable;

#if (NGX_HAVE_EPOLL)
static int               ngx_hrt_watched_ep = -1;
static ngx_uint_t        ngx_hrt_busy;         /* I/O ended the last sleep */
static ngx_connection_t  ngx_hrt_conn;
static ngx_event_t       ngx_hrt_rev, ngx_hrt_wev;
#endif


static hrt_time_t
ngx_hrt_ns(ngx_msec_t ms)
{
    if (ms > (ngx_msec_t) (HRT_TIME_MAX / NGX_HRT_NS_PER_MS)) {
        return HRT_TIME_MAX;
    }

    return (hrt_time_t) ms * NGX_HRT_NS_PER_MS;
}


/* The window of a timer of t ms: a tenth of it, at most the lazy delay. */
static hrt_time_t
ngx_hrt_window(ngx_msec_t t)
{
    if (t >= NGX_TIMER_LAZY_DELAY * 10) {
        return (hrt_time_t) NGX_TIMER_LAZY_DELAY * NGX_HRT_NS_PER_MS;
    }

    return (hrt_time_t) t * (NGX_HRT_NS_PER_MS / 10);
}


static void
ngx_hrt_count(ngx_event_t *ev, unsigned counted)
{
    ngx_hrt_non_cancelable += counted;
    ngx_hrt_non_cancelable -= ev->timer.counted;
    ev->timer.counted = counted;
}


static enum hrt_restart
ngx_hrt_fire(struct hrt_timer *t, hrt_time_t now)
{
    ngx_event_t  *ev = HRT_CONTAINER_OF(t, ngx_event_t, timer.hrt);

    (void) now;

    /*
     * A pass of the plan runs at the clock it reads, which may be past
     * nginx's cached one: handlers compare their keys with the cache.
     */
    if ((ngx_msec_int_t) (ev->timer.key - ngx_current_msec) > 0) {
        ngx_time_update();
    }

    ngx_log_debug2(NGX_LOG_DEBUG_EVENT, ev->log, 0,
                   "event timer run: %d: %M",
                   ngx_event_ident(ev->data), ev->timer.key);

    ngx_hrt_count(ev, 0);
    ev->timer_set = 0;
    ev->timedout = 1;

    /* it may free ev, or set its timer again: both are the handler's */
    ev->handler(ev);

    return HRT_NORESTART;
}


ngx_int_t
ngx_event_timer_init(ngx_log_t *log)
{
    int  rc;

    /* another cycle of this process keeps its timers */
    if (ngx_hrt_base != NULL && ngx_hrt_pid == getpid()) {
        return NGX_OK;
    }

    /* a base of the parent's (single-process mode forks none) is left */
    rc = hrt_base_new(&ngx_hrt_base, CLOCK_MONOTONIC, HRT_BASE_UNLOCKED);
    if (rc < 0) {
        ngx_hrt_base = NULL;
        ngx_log_error(NGX_LOG_EMERG, log, -rc, "hrt_base_new() failed");
        return NGX_ERROR;
    }

    ngx_hrt_pid = getpid();
    ngx_hrt_non_cancelable = 0;
#if (NGX_HAVE_EPOLL)
    ngx_hrt_watched_ep = -1;
#endif

    return NGX_OK;
}


void
ngx_event_add_timer(ngx_event_t *ev, ngx_msec_t timer)
{
    int         rc;
    ngx_msec_t  key;
    hrt_time_t  soft, window, hard;

    key = ngx_current_msec + timer;
    soft = ngx_hrt_ns(key);
    window = ngx_hrt_window(timer);

    if (ev->timer_set) {

        /* nginx's lazy re-arm: the queued timer still ends in the window */
        if (hrt_timer_get_hard(&ev->timer.hrt, &hard) == 0
            && hard >= soft && hard - soft <= window)
        {
            ngx_log_debug3(NGX_LOG_DEBUG_EVENT, ev->log, 0,
                           "event timer: %d, old: %M, new: %M",
                           ngx_event_ident(ev->data), ev->timer.key, key);
            return;
        }

    } else {
        (void) hrt_timer_init(&ev->timer.hrt, ngx_hrt_fire);
        ev->timer.counted = 0;
    }

    ev->timer.key = key;
    ev->timer_set = 1;

    ngx_log_debug3(NGX_LOG_DEBUG_EVENT, ev->log, 0,
                   "event timer add: %d: %M:%M",
                   ngx_event_ident(ev->data), timer, key);

    if (ngx_hrt_base == NULL) {
        /* no event loop in this process (the master): never runs, as in nginx */
        return;
    }

    rc = hrt_timer_start_range(&ev->timer.hrt, ngx_hrt_base, soft, window,
                               HRT_MODE_ABS);
    if (rc < 0) {
        ngx_log_error(NGX_LOG_ALERT, ev->log, -rc,
                      "hrt_timer_start_range() failed");
        ngx_hrt_count(ev, 0);
        ev->timer_set = 0;
        return;
    }

    ngx_hrt_count(ev, !ev->cancelable);
}


void
ngx_event_del_timer(ngx_event_t *ev)
{
    ngx_log_debug2(NGX_LOG_DEBUG_EVENT, ev->log, 0,
                   "event timer del: %d: %M",
                   ngx_event_ident(ev->data), ev->timer.key);

    (void) hrt_timer_cancel(&ev->timer.hrt);

    ngx_hrt_count(ev, 0);
    ev->timer_set = 0;
}


/*
 * ms from nginx's cached clock to the earliest hard expiry, rounded up:
 * the longest sleep.  The epoll hook shortens it to the window's start
 * (nginx alerts when a sleep it asked to be endless times out).
 */
ngx_msec_t
ngx_event_find_timer(void)
{
    hrt_time_t  when, d;

    if (ngx_hrt_base == NULL || hrt_base_next_event(ngx_hrt_base, &when) <= 0) {
        return NGX_TIMER_INFINITE;
    }

    d = when - ngx_hrt_ns(ngx_current_msec);

    return d <= 0 ? 0 : (ngx_msec_t) ((d + NGX_HRT_NS_PER_MS - 1) / NGX_HRT_NS_PER_MS);
}


void
ngx_event_expire_timers(void)
{
    int      idle;
    ssize_t  n;

    if (ngx_hrt_base == NULL) {
        return;
    }

    idle = ngx_queue_empty(&ngx_posted_events)
           && ngx_queue_empty(&ngx_posted_next_events);

    n = hrt_base_run(ngx_hrt_base, ngx_hrt_ns(ngx_current_msec), idle);
    if (n < 0) {
        ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, (ngx_err_t) -n,
                      "hrt_base_run() failed");
    }
}


ngx_int_t
ngx_event_no_timers_left(void)
{
    return ngx_hrt_non_cancelable ? NGX_AGAIN : NGX_OK;
}


#if (NGX_HAVE_EPOLL)

/* hrt's timerfd is readable: the next plan drains it, the pass runs timers */
static void
ngx_hrt_fd_handler(ngx_event_t *ev)
{
    (void) ev;

    ngx_hrt_busy = 0;
}


/* hrt's timerfd in nginx's epoll set, as a connection the loop knows */
static ngx_int_t
ngx_hrt_watch(int ep)
{
    int                 fd;
    struct epoll_event  ee;

    if (ngx_hrt_watched_ep == ep) {
        return NGX_OK;
    }

    fd = hrt_base_fd(ngx_hrt_base);
    if (fd < 0) {
        ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, -fd, "hrt_base_fd() failed");
        return NGX_ERROR;
    }

    ngx_hrt_conn.fd = fd;
    ngx_hrt_conn.read = &ngx_hrt_rev;
    ngx_hrt_conn.write = &ngx_hrt_wev;
    ngx_hrt_rev.data = &ngx_hrt_conn;
    ngx_hrt_rev.log = ngx_cycle->log;
    ngx_hrt_rev.handler = ngx_hrt_fd_handler;
    ngx_hrt_rev.active = 1;
    ngx_hrt_wev.data = &ngx_hrt_conn;
    ngx_hrt_wev.log = ngx_cycle->log;

    ee.events = EPOLLIN;
    ee.data.ptr = &ngx_hrt_conn;        /* instance 0, as ngx_hrt_rev's */

    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ee) == -1) {
        ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, ngx_errno,
                      "epoll_ctl(EPOLL_CTL_ADD, %d) of hrt's timerfd failed", fd);
        return NGX_ERROR;
    }

    ngx_hrt_watched_ep = ep;

    return NGX_OK;
}


int
ngx_event_timer_epoll_wait(int ep, struct epoll_event *list, int n,
    ngx_msec_t timer, ngx_uint_t flags)
{
    int         rc, events;
    ngx_err_t   err;
    ngx_msec_t  ms;
    hrt_time_t  delay;

    /*
     * timer_resolution (no NGX_UPDATE_TIME): the alarm ends the sleep.
     * A loop that I/O woke last time sleeps to the earliest hard expiry
     * (nginx's timeout) without a plan: I/O most likely ends this sleep
     * too, and a plan costs system calls (the slack set and given back,
     * the timerfd drained).  A sleep the timers ended, or the timerfd,
     * makes the next one planned.
     */
    if (ngx_hrt_base == NULL || !(flags & NGX_UPDATE_TIME)
        || ngx_hrt_watch(ep) != NGX_OK)
    {
        return epoll_wait(ep, list, n, (int) timer);
    }

    if (ngx_hrt_busy) {
        events = epoll_wait(ep, list, n, (int) timer);
        ngx_hrt_busy = events > 0;
        return events;
    }

    rc = hrt_base_plan_sleep(ngx_hrt_base, NGX_HRT_NS_PER_MS, &delay);

    ms = timer;                         /* at most the earliest hard expiry */

    if (!ngx_queue_empty(&ngx_posted_events)
        || !ngx_queue_empty(&ngx_posted_next_events))
    {
        ms = 0;                         /* a timer the plan ran posted work */

    } else if (rc == 1) {
        if ((ngx_msec_t) (delay / NGX_HRT_NS_PER_MS) < ms) {
            ms = (ngx_msec_t) (delay / NGX_HRT_NS_PER_MS);
        }

    } else if (rc < 0) {
        ngx_log_error(NGX_LOG_ALERT, ngx_cycle->log, -rc,
                      "hrt_base_plan_sleep() failed");
    }

    /* rc 0: no ranged sleep fits; the timerfd is armed at the hard expiry */

    events = epoll_wait(ep, list, n, (int) ms);
    err = ngx_errno;
    ngx_hrt_busy = events > 0;          /* the timerfd's handler clears it */

    if (rc >= 0) {
        (void) hrt_base_plan_wake(ngx_hrt_base);
    }

    ngx_set_errno(err);

    return events;
}

#endif
