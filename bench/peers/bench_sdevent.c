/* SPDX-License-Identifier: MIT */
/*
 * bench_sdevent.c - sd-event under the shared workload (workload.h): time
 * sources (one allocation each) on CLOCK_MONOTONIC in two priority queues,
 * earliest (the time) and latest (time + accuracy).  Plain timers use an
 * accuracy of 1 us (0 would mean sd-event's default of 250 ms); range
 * timers use the slack as accuracy.  The extra timer of start+cancel is one
 * source toggled with sd_event_source_set_enabled; re-arm is
 * sd_event_source_set_time; expiry is sd_event_run(e, 0), which dispatches
 * one source per call.
 */
#define LIB_NAME "sd-event"
#include <systemd/sd-event.h>
#include "workload.h"

static sd_event *ev;
static sd_event_source **items;
static uint64_t t0_us;

static int on_fire(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	(void)userdata;
	fired++;
	return 0;
}

static uint64_t to_us(int64_t off)
{
	return t0_us + (uint64_t)((off + 999) / 1000);
}

static void lib_loop_new(void)
{
	int err = sd_event_new(&ev);

	if (err < 0)
		die("sd_event_new", err);
}

static void lib_loop_free(void)
{
	sd_event_unref(ev);
}

static void lib_timers_new(size_t n)
{
	items = xmalloc((n + 1) * sizeof(*items));
	memset(items, 0, (n + 1) * sizeof(*items));
}

static void lib_timers_free(size_t n)
{
	size_t i;

	for (i = 0; i <= n; i++)
		sd_event_source_unref(items[i]);
	free(items);
}

static void lib_begin(void)
{
	t0_us = (uint64_t)(now_ns() / 1000);
}

static void lib_arm(size_t i, int64_t off, int64_t slack)
{
	uint64_t acc = slack > 0 ? (uint64_t)(slack / 1000) : 1;
	int err;

	if (!items[i]) {
		err = sd_event_add_time(ev, &items[i], CLOCK_MONOTONIC, to_us(off), acc ? acc : 1,
					on_fire, NULL);
		if (err < 0)
			die("sd_event_add_time", err);
		return;
	}
	sd_event_source_set_time(items[i], to_us(off));
	sd_event_source_set_enabled(items[i], SD_EVENT_ONESHOT);
}

static void lib_rearm(size_t i, int64_t off, int64_t slack)
{
	(void)slack;	/* the accuracy stays as armed: a second call per op */
	sd_event_source_set_time(items[i], to_us(off));
}

/* sd-event caches its now per loop iteration and none runs here, so the
 * deadline counts from the clock read of lib_begin, like every other
 * time of this adapter. */
static void lib_timeout(size_t i, int64_t off, int64_t slack)
{
	lib_rearm(i, off, slack);
}

static void lib_cancel(size_t i)
{
	sd_event_source_set_enabled(items[i], SD_EVENT_OFF);
}

static void lib_pass(void)
{
	/* Nothing deferred: every call left the structure complete. */
}

static void lib_dispatch_nowait(void)
{
	sd_event_run(ev, 0);
}

static void lib_run_until(size_t n)
{
	while (fired < n)
		sd_event_run(ev, UINT64_MAX);
}

static size_t lib_struct_size(void)
{
	return 0;       /* opaque: only the allocations count */
}
