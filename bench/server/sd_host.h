/* SPDX-License-Identifier: MIT */
/*
 * bench/server/sd_host.h - an sd-event loop inside hrt_base_loop_host, as
 * examples/uv_host.h puts libuv there: sd_host_run(e, base) takes the place
 * of sd_event_loop(e) and returns after hrt_base_stop(base).
 *
 * sd-event's own iteration (sd_event_run) is prepare, wait, dispatch; here
 * they are split so that hrt sleeps for both loops, in one epoll_pwait2 on
 * sd-event's epoll fd (sd_event_get_fd: every source of the loop, its
 * timerfds included, makes it readable) and hrt's, with the timers'
 * window as the thread's slack:
 *   timeout  sd_event_prepare (once per iteration): arms sd-event's
 *            timerfds and says whether a source is pending already
 *            (sleep 0) or not (no limit: its timers end the sleep through
 *            its fd);
 *   run      sd_event_wait(e, 0) collects what is ready without sleeping,
 *            then sd_event_dispatch runs the pending sources, up to
 *            SD_HOST_BATCH of them (each dispatch runs one; the prepare
 *            after it finds the next), as libuv's UV_RUN_NOWAIT runs
 *            every ready callback - one hrt iteration per source would
 *            cost an epoll_pwait2 each.
 * sd-event itself polls its epoll once per source dispatched
 * (sd_event_prepare waits with timeout 0 while a source is pending), so
 * its loop costs an epoll call per source, hosted or not; hrt adds one
 * per wake-up.
 */
#ifndef HRT_BENCH_SERVER_SD_HOST_H
#define HRT_BENCH_SERVER_SD_HOST_H

#include <errno.h>
#include <systemd/sd-event.h>

#include "hrt.h"

#define SD_HOST_BATCH 64

/* 0: something is pending, do not sleep; -1: no limit of sd-event's.  A
 * failed prepare leaves the loop INITIAL, where run() meets it again and
 * ends the loop with its error. */
static inline hrt_time_t sd_host_timeout(void *e)
{
	switch (sd_event_get_state(e)) {
	case SD_EVENT_INITIAL:
		return sd_event_prepare(e) == 0 ? -1 : 0;
	case SD_EVENT_ARMED:            /* prepared by run(): nothing pending */
		return -1;
	default:                        /* pending, or exiting: run() next */
		return 0;
	}
}

/* sd-event's iteration without sleeping: what is ready, then up to
 * SD_HOST_BATCH pending sources.  0, or a negative errno. */
static inline int sd_host_iterate(void *e)
{
	int r, k;

	switch (sd_event_get_state(e)) {
	case SD_EVENT_INITIAL:          /* the first iteration, or prepare failed */
		r = sd_event_prepare(e);
		if (r == 0)
			r = sd_event_wait(e, 0);
		break;
	case SD_EVENT_ARMED:
		r = sd_event_wait(e, 0);        /* 0: nothing ready, INITIAL again */
		break;
	case SD_EVENT_PENDING:
		r = 1;
		break;
	default:                        /* exiting or finished: not ours to run */
		return -ECANCELED;
	}
	for (k = 0; r > 0 && k < SD_HOST_BATCH; k++) {
		r = sd_event_dispatch(e);       /* one source (> 0); INITIAL again */
		/* > 0: another source is pending (PENDING); 0: none (ARMED) */
		if (r > 0 && k + 1 < SD_HOST_BATCH)
			r = sd_event_prepare(e);
	}
	return r < 0 ? r : 0;
}

/* Runs e and base until hrt_base_stop(base): 0, or a negative errno. */
static inline int sd_host_run(sd_event *e, struct hrt_base *base)
{
	int fd = sd_event_get_fd(e);

	if (fd < 0)
		return fd;
	return hrt_base_loop_host(base, fd, sd_host_timeout, sd_host_iterate, e);
}

#endif /* HRT_BENCH_SERVER_SD_HOST_H */
