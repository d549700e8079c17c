/* SPDX-License-Identifier: MIT */
/*
 * uv_host.h - a libuv loop and an hrt base run together: uv_host_run()
 * takes the place of uv_run(loop, UV_RUN_DEFAULT) and returns after
 * hrt_base_stop(base).  This is all the glue; copy it.
 *
 * hrt_base_loop_host does the sleeping for both loops: one epoll on
 * libuv's epoll fd (uv_backend_fd) and hrt's timerfd, for at most libuv's
 * timeout (uv_backend_timeout), with nanosecond resolution and the timers'
 * window as the thread's slack, so hrt's wake-ups coalesce as they do in
 * hrt_base_loop; libuv's iteration runs between sleeps without sleeping
 * (UV_RUN_NOWAIT).  hrt's pass is idle unless libuv had I/O or a due timer
 * on that wake-up.  Starts from other threads need no uv_async_t.  Do not
 * also watch hrt_base_fd in the loop; stop with hrt_base_stop, not
 * uv_stop.  Used by uv_timers.c, uv_cross_thread.c and bench/coalesce.c.
 */
#ifndef HRT_UV_HOST_H
#define HRT_UV_HOST_H

#include <uv.h>

#include "hrt.h"

/* How long libuv may sleep from now, in ns; -1: no limit (libuv says 0
 * when nothing keeps it alive). */
static inline hrt_time_t uv_host_timeout(void *loop)
{
	int ms;

	uv_update_time(loop);           /* its timeout counts from now */
	ms = uv_loop_alive(loop) ? uv_backend_timeout(loop) : -1;
	return ms < 0 ? -1 : (hrt_time_t)ms * 1000000;
}

/* libuv's iteration without sleeping: due timers, ready I/O, callbacks. */
static inline int uv_host_iterate(void *loop)
{
	uv_run(loop, UV_RUN_NOWAIT);
	return 0;
}

/* Runs loop and base until hrt_base_stop(base): 0, or a negative errno. */
static inline int uv_host_run(uv_loop_t *loop, struct hrt_base *base)
{
	return hrt_base_loop_host(base, uv_backend_fd(loop), uv_host_timeout,
				  uv_host_iterate, loop);
}

#endif /* HRT_UV_HOST_H */
