/* SPDX-License-Identifier: MIT */
/*
 * ngx_event_timer.h - nginx's event-timer interface, implemented on libhrt
 * (ngx_event_timer.c; written here against the interface nginx's sources
 * call, no nginx code).  build.sh puts it in place of nginx's own.
 *
 * ngx_add_timer(ev, ms) starts a range timer: soft expiry ngx_current_msec
 * + ms, hard expiry soft + min(ms / 10, NGX_TIMER_LAZY_DELAY).
 * ngx_del_timer cancels it.  ngx_event_expire_timers is one hrt pass.
 * ngx_event_timer_epoll_wait is the epoll module's sleep, planned by hrt.
 */
#ifndef _NGX_EVENT_TIMER_H_INCLUDED_
#define _NGX_EVENT_TIMER_H_INCLUDED_

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_event.h>

#define NGX_TIMER_INFINITE  (ngx_msec_t) -1

/* nginx's lazy delay: here the widest window a timer gets (ms). */
#define NGX_TIMER_LAZY_DELAY  300

ngx_int_t ngx_event_timer_init(ngx_log_t *log);
ngx_msec_t ngx_event_find_timer(void);
void ngx_event_expire_timers(void);
ngx_int_t ngx_event_no_timers_left(void);

void ngx_event_add_timer(ngx_event_t *ev, ngx_msec_t timer);
void ngx_event_del_timer(ngx_event_t *ev);

#if (NGX_HAVE_EPOLL)
int ngx_event_timer_epoll_wait(int ep, struct epoll_event *list, int n,
    ngx_msec_t timer, ngx_uint_t flags);
#endif

#endif /* _NGX_EVENT_TIMER_H_INCLUDED_ */
