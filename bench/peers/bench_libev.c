/* SPDX-License-Identifier: MIT */
/*
 * bench_libev.c - libev under the shared workload (workload.h): ev_timer
 * watchers in a 4-ary heap, started, stopped and re-armed with
 * ev_timer_again (also the timeout, relative to ev_now); expiry through
 * ev_run(EVRUN_NOWAIT); the loop workloads from an ev_idle in ev_run.
 */
#define LIB_NAME "libev"
#define LIB_LOOP 1
#include <ev.h>
#include "workload.h"

static struct ev_loop *loop;
static ev_timer *items;

static void on_fire(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	fired++;
}

static void lib_loop_new(void)
{
	loop = ev_loop_new(EVBACKEND_EPOLL);
	if (!loop)
		die("ev_loop_new", -1);
}

static void lib_loop_free(void)
{
	ev_loop_destroy(loop);
}

static void lib_timers_new(size_t n)
{
	size_t i;

	items = xmalloc((n + 1) * sizeof(*items));
	for (i = 0; i <= n; i++)
		ev_timer_init(&items[i], on_fire, 1., 0.);
}

static void lib_timers_free(size_t n)
{
	size_t i;

	for (i = 0; i <= n; i++)
		ev_timer_stop(loop, &items[i]);
	free(items);
}

static void lib_begin(void)
{
	ev_now_update(loop);
}

static void lib_arm(size_t i, int64_t off, int64_t slack)
{
	(void)slack;
	ev_timer_set(&items[i], (ev_tstamp)off * 1e-9, 0.);
	ev_timer_start(loop, &items[i]);
}

static void lib_rearm(size_t i, int64_t off, int64_t slack)
{
	(void)slack;	/* no windows here: the deadline at soft */
	items[i].repeat = (ev_tstamp)off * 1e-9;
	ev_timer_again(loop, &items[i]);
}

/* libev's idiom for an inactivity timeout ("be smart about timeouts" in
 * ev.pod): repeat = the timeout, ev_timer_again re-arms to ev_now + repeat,
 * the now ev_now_update (lib_begin) refreshed. */
static void lib_timeout(size_t i, int64_t off, int64_t slack)
{
	lib_rearm(i, off, slack);
}

static void lib_cancel(size_t i)
{
	ev_timer_stop(loop, &items[i]);
}

static void lib_pass(void)
{
	/* Nothing deferred: every call left the structure complete. */
}

static void lib_dispatch_nowait(void)
{
	ev_run(loop, EVRUN_NOWAIT);
}

static void lib_run_until(size_t n)
{
	while (fired < n)
		ev_run(loop, EVRUN_ONCE);
}

static size_t lib_struct_size(void)
{
	return sizeof(ev_timer);
}

/* The loop workloads: ev_run, the ops from an ev_idle watcher's callback
 * (an active idle watcher makes each iteration poll with a timeout of 0). */
static ev_idle idler;

static void idle_cb(struct ev_loop *l, ev_idle *w, int revents)
{
	(void)revents;
	if (!loop_step()) {
		ev_idle_stop(l, w);
		ev_break(l, EVBREAK_ALL);
	}
}

static void lib_loop_drive(void)
{
	ev_idle_init(&idler, idle_cb);
	ev_idle_start(loop, &idler);
	ev_run(loop, 0);
}

static long lib_rearms(void)
{
	return -1;      /* libev arms no timer device: its epoll_wait's timeout */
}
