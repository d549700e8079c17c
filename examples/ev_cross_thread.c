/* SPDX-License-Identifier: MIT */
/*
 * ev_cross_thread.c - a start from another thread wakes a libev host
 * (ev_host.h) in time, with no ev_async.
 * The workload and the self-check live in cross_thread.h; here only the
 * loop.
 */
#include <ev.h>

#include "cross_thread.h"
#include "ev_host.h"

static struct ev_loop *loop;

static void stop(void)
{
	ev_break(loop, EVBREAK_ALL);
}

int main(void)
{
	struct ev_host host;
	struct hrt_base *base;
	int err;

	if (!(loop = ev_loop_new(EVFLAG_AUTO)) || !(base = xt_start("ev_cross_thread", stop))) {
		fprintf(stderr, "ev_cross_thread: FAIL: setup\n");
		return 1;
	}
	ev_host_start(&host, loop, base);
	ev_run(loop, 0);                /* until a timer ran */
	err = ev_host_stop(&host, loop);
	ev_loop_destroy(loop);
	return xt_finish(err);
}
