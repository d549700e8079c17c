/* SPDX-License-Identifier: MIT */
/*
 * ev_cross_thread.c - a start from another thread wakes a libev host
 * (ev_coalesce.h, and an ev_io on hrt_base_fd) in time, with no ev_async.
 * The workload and the self-check live in cross_thread.h; here only the
 * loop.
 */
#include <ev.h>

#include "cross_thread.h"
#include "ev_coalesce.h"

static struct ev_loop *loop;

static void stop(void)
{
	ev_break(loop, EVBREAK_ALL);
}

static void on_fd(struct ev_loop *l, ev_io *w, int revents)
{
	(void)l, (void)w, (void)revents;
	hrt_base_dispatch(xt.base, 1);
}

int main(void)
{
	struct ev_coalesce co = { 0 };
	struct hrt_base *base;
	ev_io io;

	if (!(loop = ev_loop_new(EVFLAG_AUTO)) || !(base = xt_start("ev_cross_thread", stop))) {
		fprintf(stderr, "ev_cross_thread: FAIL: setup\n");
		return 1;
	}
	ev_io_init(&io, on_fd, hrt_base_fd(base), EV_READ);
	ev_io_start(loop, &io);
	ev_coalesce_start(&co, loop, base);
	ev_run(loop, 0);                /* until a timer ran */
	ev_coalesce_stop(&co, loop);
	ev_io_stop(loop, &io);
	ev_loop_destroy(loop);
	return xt_finish(co.plan.err);
}
