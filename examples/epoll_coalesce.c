/* SPDX-License-Identifier: MIT */
/*
 * epoll_coalesce.c - a hand-written epoll loop that lets the kernel
 * coalesce hrt's wake-ups (hrt_base_wait_window), instead of watching the
 * base's timerfd.
 *
 * The loop never calls hrt_base_fd: a timerfd armed at the earliest hard
 * expiry is a kernel timer without slack and would pin every wake-up to
 * that instant.  Each iteration asks for the window, sets this thread's
 * timer slack to its width (only when it changes) and sleeps in
 * epoll_pwait2 until its start or the host's own tick, whichever is first;
 * the kernel may end the sleep anywhere up to the window's end.  On waking
 * it runs one pass, hrt_base_run(base, now, idle), idle as in
 * epoll_timers.c.  Without epoll_pwait2 (Linux < 5.11) it sleeps until the
 * earliest hard expiry with a millisecond epoll_wait (a real program would
 * watch hrt_base_fd then).  Single-threaded: a start from another thread
 * would need a wake-up of this loop (an eventfd) to be seen before the
 * current sleep ends.  The workload and self-check are example.h's.
 */
#include <sys/epoll.h>
#include <sys/prctl.h>

#include "example.h"

static int watch(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* Sleeps until `until` (absolute, CLOCK_MONOTONIC) at most. */
static int sleep_until(int epfd, struct epoll_event *evs, int n, hrt_time_t until)
{
	hrt_time_t d = until - ex_now();
	struct timespec ts;
	int r;

	if (d < 0)
		d = 0;
	ts.tv_sec = d / 1000000000;
	ts.tv_nsec = d % 1000000000;
	r = epoll_pwait2(epfd, evs, n, &ts, NULL);
	if (r < 0 && errno == ENOSYS)
		r = epoll_wait(epfd, evs, n, (int)((d + 999999) / 1000000));
	return r;
}

int main(void)
{
	struct hrt_base *base;
	struct epoll_event evs[8];
	hrt_time_t now, next_tick, soft, hard, slack = 0, wake;
	int epfd = -1, n, i, w;

	base = ex_start("epoll_coalesce");
	if (!base)
		return ex_finish();
	epfd = epoll_create1(EPOLL_CLOEXEC);
	EX_TRY(epfd < 0 ? -errno : 0);
	EX_TRY(watch(epfd, ex.pipe[0]));

	next_tick = ex_now() + EX_TICK_MS * 1000000;
	while (!ex_all_fired() && !ex.failed) {
		now = ex_now();
		if (now >= next_tick) {                 /* the host's own timer */
			if (ex_overdue())
				break;
			ex_host_tick();
			next_tick += EX_TICK_MS * 1000000;
			continue;
		}
		EX_TRY(w = hrt_base_wait_window(base, &soft, &hard));
		/* 1: a ranged sleep [soft, hard]; 0: sleep exactly until hard. */
		if (w == 1 && hard - soft != slack && hard > soft &&
		    prctl(PR_SET_TIMERSLACK, (unsigned long)(hard - soft), 0, 0, 0) == 0)
			slack = hard - soft;
		wake = w == 1 ? soft : hard;
		if (w == 0 && slack != 1 && prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) == 0)
			slack = 1;              /* exact: no slack */
		n = sleep_until(epfd, evs, 8, wake < next_tick ? wake : next_tick);
		if (n < 0 && errno == EINTR)
			continue;
		EX_TRY(n < 0 ? -errno : 0);
		for (i = 0; i < n; i++)
			ex_host_readable();
		/* A pass whenever the window has opened; idle if no I/O came. */
		if (ex_now() >= wake)
			ex_dispatched(n == 0, hrt_base_run(base, ex_now(), n == 0));
	}
out:
	if (epfd >= 0)
		close(epfd);
	return ex_finish();
}
