/* SPDX-License-Identifier: MIT */
/*
 * sdevent_timers.c - hrt range timers in an sd-event loop.
 *
 * The base's timerfd (hrt_base_fd) is an sd_event_add_io source at
 * SD_EVENT_PRIORITY_IDLE.  sd-event dispatches one source per iteration,
 * highest priority first, so the hrt source runs only once the host's own
 * pending sources have been served; a burst of host work delays timers by
 * at most that burst.  A host source that stays ready for ever (a socket
 * that never drains) would starve the timers: such a program should put
 * the hrt source at SD_EVENT_PRIORITY_NORMAL, where sd-event serves equal
 * priorities in pending order, and accept a less exact idle.  sd-event cannot count pending sources, so the host's
 * callbacks report themselves (host_ran): if one was dispatched while the
 * hrt source was already pending, this wake-up was contended:
 *
 *     idle = 0  if host work ran while the hrt source was pending,
 *     idle = 1  if the hrt wake-up had the loop to itself.
 *
 * Due timers run either way (the leftmost run); the greedy walk, which runs
 * soft-expired timers early, is kept for uncontended wake-ups, so a loop in
 * a busy stretch gets short timer passes.
 *
 * The workload and the self-check live in example.h; here only the loop.
 */
#include <systemd/sd-event.h>

#include "example.h"

static struct hrt_base *base;
static sd_event_source *hrt_src;
static int hrt_contended;       /* host work ran while hrt_src was pending */

/* --- the integration ---------------------------------------------------- */

static int on_hrt_readable(sd_event_source *s, int fd, uint32_t revents, void *u)
{
	int idle = !hrt_contended;
	ssize_t n;

	(void)fd;
	(void)revents;
	(void)u;
	hrt_contended = 0;
	n = hrt_base_dispatch(base, idle);  /* drains the fd, runs timers, re-arms */
	ex_dispatched(idle, n);
	if (ex_all_fired())
		return sd_event_exit(sd_event_source_get_event(s), 0);
	return 0;
}

/* Every host callback calls this first. */
static void host_ran(void)
{
	if (sd_event_source_get_pending(hrt_src) > 0)
		hrt_contended = 1;
}

/* --- the host loop's own work ------------------------------------------- */

static int on_tick(sd_event_source *s, uint64_t usec, void *u)
{
	int err;

	(void)usec;
	(void)u;
	host_ran();
	if (ex.failed || ex_overdue())
		return sd_event_exit(sd_event_source_get_event(s), 1);
	ex_host_tick();
	/* Time sources are one-shot: re-arm for the next tick. */
	err = sd_event_source_set_time_relative(s, EX_TICK_MS * 1000);
	if (err >= 0)
		err = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	if (err < 0)
		ex_error("re-arming the tick", err);
	return err;                     /* < 0: sd-event disables the source */
}

static int on_pipe(sd_event_source *s, int fd, uint32_t revents, void *u)
{
	(void)s;
	(void)fd;
	(void)revents;
	(void)u;
	host_ran();
	ex_host_readable();
	if (ex.failed)
		return sd_event_exit(sd_event_source_get_event(s), 1);
	return 0;
}

int main(void)
{
	sd_event *e = NULL;
	sd_event_source *pipe_src = NULL, *tick = NULL;
	int fd;

	base = ex_start("sdevent_timers");
	if (!base)
		return ex_finish();
	fd = hrt_base_fd(base);
	if (fd < 0) {
		ex_error("hrt_base_fd", fd);
		return ex_finish();
	}
	EX_TRY(sd_event_new(&e));

	EX_TRY(sd_event_add_io(e, &hrt_src, fd, EPOLLIN, on_hrt_readable, NULL));
	EX_TRY(sd_event_source_set_priority(hrt_src, SD_EVENT_PRIORITY_IDLE));

	EX_TRY(sd_event_add_io(e, &pipe_src, ex.pipe[0], EPOLLIN, on_pipe, NULL));
	/* accuracy 1 us: 0 would mean sd-event's default of 250 ms */
	EX_TRY(sd_event_add_time_relative(e, &tick, CLOCK_MONOTONIC, EX_TICK_MS * 1000, 1,
					  on_tick, NULL));

	EX_TRY(sd_event_loop(e));       /* until sd_event_exit() */
out:
	/* Sources first: hrt_src watches the fd that hrt_base_free closes. */
	sd_event_source_unref(hrt_src);
	sd_event_source_unref(pipe_src);
	sd_event_source_unref(tick);
	sd_event_unref(e);
	return ex_finish();
}
