/* SPDX-License-Identifier: MIT */
/*
 * bench_libevent.c - libevent under the shared workload (workload.h): timer
 * events from evtimer_new (one allocation each) in a min-heap of pointers;
 * re-arm is event_add on a pending event; expiry through
 * event_base_loop(EVLOOP_NONBLOCK).  Deadlines are relative timevals.
 * The timeout workload uses a common timeout (see lib_timeout).
 */
#define LIB_NAME "libevent"
#include <event2/event.h>
#include "workload.h"

static struct event_base *evb;
static struct event **items;
static int64_t t0;
static const struct timeval *common;	/* the common timeout of common_off */
static int64_t common_off;

static void on_fire(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	fired++;
}

static struct timeval to_tv(int64_t off)
{
	int64_t us = (off + 999) / 1000;
	struct timeval tv = { (time_t)(us / 1000000), (suseconds_t)(us % 1000000) };

	return tv;
}

static void lib_loop_new(void)
{
	evb = event_base_new();
	if (!evb)
		die("event_base_new", -1);
	common = NULL;
}

static void lib_loop_free(void)
{
	event_base_free(evb);
}

static void lib_timers_new(size_t n)
{
	size_t i;

	items = xmalloc((n + 1) * sizeof(*items));
	for (i = 0; i <= n; i++) {
		items[i] = evtimer_new(evb, on_fire, NULL);
		if (!items[i])
			die("evtimer_new", -1);
	}
}

static void lib_timers_free(size_t n)
{
	size_t i;

	for (i = 0; i <= n; i++)
		event_free(items[i]);
	free(items);
}

static void lib_begin(void)
{
	t0 = now_ns();
}

/*
 * libevent counts a timeout from the moment of event_add.  The range
 * workload (slack > 0) needs its deadlines at the same instants t0 + off as
 * in the other libraries however long arming takes, so it subtracts the
 * time already gone; the op workloads use the plain relative call.
 */
static void lib_arm(size_t i, int64_t off, int64_t slack)
{
	struct timeval tv;

	if (slack > 0) {
		off = t0 + off - now_ns();
		if (off < 0)
			off = 0;
	}
	tv = to_tv(off);
	evtimer_add(items[i], &tv);
}

static void lib_rearm(size_t i, int64_t off, int64_t slack)
{
	(void)slack;	/* no windows here: the deadline at soft */
	struct timeval tv = to_tv(off);

	evtimer_add(items[i], &tv);
}

/*
 * The timeout is what libevent's common timeouts are for: many events
 * re-added with one duration.  event_base_init_common_timeout registers
 * the duration once and returns a magic timeval; an event added with it
 * joins that duration's FIFO list (deadlines only grow, so appending keeps
 * it sorted) and only the list's head sits in the heap.  This is the fair
 * way to use libevent for this pattern.  The first re-arm of a timer
 * armed with a plain timeout still removes it from the heap.  The deadline
 * counts from libevent's clock read in event_add (outside its loop it has
 * no cached time), not from lib_begin.
 */
static void lib_timeout(size_t i, int64_t off, int64_t slack)
{
	(void)slack;
	if (!common || off != common_off) {
		struct timeval tv = to_tv(off);

		common = event_base_init_common_timeout(evb, &tv);
		if (!common)
			die("event_base_init_common_timeout", -1);
		common_off = off;
	}
	evtimer_add(items[i], common);
}

static void lib_cancel(size_t i)
{
	evtimer_del(items[i]);
}

static void lib_pass(void)
{
	/* Nothing deferred: every call left the structure complete. */
}

static void lib_dispatch_nowait(void)
{
	event_base_loop(evb, EVLOOP_NONBLOCK);
}

static void lib_run_until(size_t n)
{
	while (fired < n)
		event_base_loop(evb, EVLOOP_ONCE);
}

static size_t lib_struct_size(void)
{
	return event_get_struct_event_size();
}
