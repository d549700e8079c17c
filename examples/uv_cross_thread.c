/* SPDX-License-Identifier: MIT */
/*
 * uv_cross_thread.c - a start from another thread wakes a libuv host
 * (uv_host_run, uv_host.h) in time, with no uv_async_t.  The
 * workload and the self-check live in cross_thread.h; here only the loop.
 */
#include <uv.h>

#include "cross_thread.h"
#include "uv_host.h"

static void stop(void)
{
	hrt_base_stop(xt.base);
}

int main(void)
{
	struct hrt_base *base = xt_start("uv_cross_thread", stop);
	uv_loop_t loop;
	int err;

	if (!base || uv_loop_init(&loop) < 0) {
		fprintf(stderr, "uv_cross_thread: FAIL: setup\n");
		return 1;
	}
	err = uv_host_run(&loop, base); /* until a timer ran */
	uv_loop_close(&loop);
	return xt_finish(err);
}
