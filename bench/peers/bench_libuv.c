/* SPDX-License-Identifier: MIT */
/*
 * bench_libuv.c - libuv under the shared workload (workload.h): uv_timer_t
 * handles in a binary heap of intrusive nodes (millisecond deadlines, ties
 * by start order); re-arm is uv_timer_start on an active timer; expiry
 * through uv_run(UV_RUN_NOWAIT); the loop workloads from a uv_idle_t in
 * uv_run.
 */
#define LIB_NAME "libuv"
#define LIB_LOOP 1
#include <uv.h>
#include "workload.h"

static uv_loop_t loop;
static uv_timer_t *items;

static void on_fire(uv_timer_t *t)
{
	(void)t;
	fired++;
}

static uint64_t to_ms(int64_t off)
{
	return (uint64_t)((off + NS_MS - 1) / NS_MS);
}

static void lib_loop_new(void)
{
	int err = uv_loop_init(&loop);

	if (err)
		die("uv_loop_init", err);
}

static void lib_loop_free(void)
{
	int err = uv_loop_close(&loop);

	if (err)
		die("uv_loop_close", err);
}

static void lib_timers_new(size_t n)
{
	size_t i;

	items = xmalloc((n + 1) * sizeof(*items));
	for (i = 0; i <= n; i++)
		uv_timer_init(&loop, &items[i]);
}

static void lib_timers_free(size_t n)
{
	size_t i;

	for (i = 0; i <= n; i++)
		uv_close((uv_handle_t *)&items[i], NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	free(items);
}

static void lib_begin(void)
{
	uv_update_time(&loop);
}

static void lib_arm(size_t i, int64_t off, int64_t slack)
{
	(void)slack;
	uv_timer_start(&items[i], on_fire, to_ms(off), 0);
}

static void lib_rearm(size_t i, int64_t off, int64_t slack)
{
	(void)slack;	/* no windows here: the deadline at soft */
	uv_timer_start(&items[i], on_fire, to_ms(off), 0);
}

/* uv_timer_start counts from the loop's now, which uv_update_time
 * (lib_begin) refreshed: the timeout is the plain re-arm. */
static void lib_timeout(size_t i, int64_t off, int64_t slack)
{
	lib_rearm(i, off, slack);
}

static void lib_cancel(size_t i)
{
	uv_timer_stop(&items[i]);
}

static void lib_pass(void)
{
	/* Nothing deferred: every call left the structure complete. */
}

static void lib_dispatch_nowait(void)
{
	uv_run(&loop, UV_RUN_NOWAIT);
}

static void lib_run_until(size_t n)
{
	while (fired < n)
		uv_run(&loop, UV_RUN_ONCE);
}

static size_t lib_struct_size(void)
{
	return sizeof(uv_timer_t);
}

/* The loop workloads: uv_run, the ops from a uv_idle_t's callback (an
 * active idle handle makes each iteration poll with a timeout of 0). */
static uv_idle_t idler;

static void idle_cb(uv_idle_t *h)
{
	if (!loop_step()) {
		uv_idle_stop(h);
		uv_stop(&loop);
	}
}

static void lib_loop_drive(void)
{
	uv_idle_init(&loop, &idler);
	uv_idle_start(&idler, idle_cb);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&idler, NULL);
	uv_run(&loop, UV_RUN_NOWAIT);   /* the close */
}

static long lib_rearms(void)
{
	return -1;      /* libuv arms no timer device: its epoll_wait's timeout */
}
