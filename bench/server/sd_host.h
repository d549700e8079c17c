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
 *   timeout  sd_event_prepare: arms sd-event's timerfds and says whether a
 *            source is pending already (sleep 0) or not (no limit: its
 *            timers end the sleep through its fd);
 *   run      sd_event_wait(e, 0) collects what is ready without sleeping,
 *            then sd_event_dispatch runs one source, as sd_event_run does.
 * Two epoll calls per wake-up (hrt's and sd-event's wait), as with libuv.
 */
#ifndef HRT_BENCH_SERVER_SD_HOST_H
#define HRT_BENCH_SERVER_SD_HOST_H

#include <errno.h>
#include <systemd/sd-event.h>

#include "hrt.h"

/* 0: something is pending, do not sleep; -1: no limit of sd-event's.  A
 * failed prepare leaves the loop INITIAL, where run() meets it again and
 * ends the loop with its error. */
static inline hrt_time_t sd_host_timeout(void *e)
{
	return sd_event_prepare(e) == 0 ? -1 : 0;
}

/* One sd-event iteration without sleeping: 0, or its negative errno. */
static inline int sd_host_iterate(void *e)
{
	int r;

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
	if (r > 0)
		r = sd_event_dispatch(e);
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
