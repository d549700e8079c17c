/* SPDX-License-Identifier: MIT */
/*
 * uv_coalesce.h - a libuv loop and an hrt base driven together, with
 * hrt_base_loop's coalesced sleep (coalesce_sleep.h): uv_coalesce_run()
 * takes the place of uv_run(loop, UV_RUN_DEFAULT).  Each iteration runs
 * libuv without sleeping (UV_RUN_NOWAIT: due timers, ready I/O, prepare
 * and check handles), then sleeps in one epoll on libuv's epoll fd
 * (uv_backend_fd) and hrt's, for at most libuv's timeout
 * (uv_backend_timeout), then runs hrt's pass.  Starts from other threads
 * need nothing more (hrt_base_hold_fd).  As with any embedding of libuv,
 * a watcher started in a check callback is polled from the next iteration
 * on (libuv adds it to its epoll in its poll phase).
 * examples/uv_timers.c and bench/coalesce.c --uv use it.
 */
#ifndef HRT_UV_COALESCE_H
#define HRT_UV_COALESCE_H

#include <uv.h>

#include "coalesce_sleep.h"

struct uv_coalesce {
	struct cs_sleep sleep;
	int stop;                               /* uv_coalesce_stop() */
	void (*passed)(int idle, ssize_t n);    /* after each pass, or NULL */
};

/* Runs loop and base until uv_coalesce_stop(c): 0, or a negative errno. */
static inline int uv_coalesce_run(struct uv_coalesce *c, uv_loop_t *loop,
				  struct hrt_base *base)
{
	int ev, t, err = cs_init(&c->sleep, base, uv_backend_fd(loop));
	ssize_t n;

	while (!err && !c->stop) {
		uv_run(loop, UV_RUN_NOWAIT);
		if (c->stop)
			break;
		uv_update_time(loop);           /* the timeout counts from now */
		t = uv_loop_alive(loop) ? uv_backend_timeout(loop) : -1;
		ev = cs_sleep(&c->sleep, t < 0 ? -1 : (int64_t)t * 1000000);
		n = ev < 0 ? ev : cs_pass(&c->sleep, ev);
		if (n < 0)
			err = (int)n;
		else if (c->passed && (ev & (CS_FD | CS_WINDOW)))
			c->passed(!(ev & CS_HOST), n);
	}
	c->stop = 0;                            /* for the next run */
	t = cs_done(&c->sleep);
	return err ? err : t;
}

/* From any callback on the loop's thread: uv_coalesce_run returns. */
static inline void uv_coalesce_stop(struct uv_coalesce *c)
{
	c->stop = 1;
}

#endif /* HRT_UV_COALESCE_H */
