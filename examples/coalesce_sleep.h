/* SPDX-License-Identifier: MIT */
/*
 * coalesce_sleep.h - the coalesced sleep of hrt_base_loop for a host loop
 * that can be driven from outside: one whose I/O waits behind a pollable
 * fd, which tells how long it may sleep, and which runs one iteration
 * without sleeping (libuv: uv_backend_fd, uv_backend_timeout,
 * uv_run(UV_RUN_NOWAIT); examples/uv_coalesce.h).  The host's own sleep
 * has millisecond resolution; this one has the nanosecond resolution of
 * epoll_pwait2 (Linux 5.11), so the kernel gets the timers' whole window.
 *
 * cs_sleep() is the one sleep: it holds the timerfd disarmed
 * (hrt_base_hold_fd, again before every sleep), asks for the window
 * (hrt_base_wait_window) and waits in one epoll on hrt's fd and the host's
 * until the earlier of the window's start and the host's timeout, with the
 * thread's timer slack (prctl PR_SET_TIMERSLACK) the window - cut at the
 * host's timeout, so the host's timers end the sleep on time.  No window
 * (coalescing off, one too narrow, or ENOSYS): the timerfd, given back
 * armed, ends the sleep exactly.  cs_pass() then runs hrt's pass: a
 * dispatch if the fd is readable (a start from another thread arms it:
 * hrt_base_hold_fd), else a pass once the window has opened; idle when
 * nothing of the host's was ready.  The host's timers are not widened
 * (the sleep is cut at their deadline), but other sleeps of the thread
 * (in its callbacks) see the slack while it is set, as in hrt_base_loop;
 * cs_done() gives the thread its own back.  CLOCK_MONOTONIC bases only
 * (a relative sleep).
 */
#ifndef HRT_COALESCE_SLEEP_H
#define HRT_COALESCE_SLEEP_H

#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hrt.h"

#define CS_FD     1                     /* cs_sleep: hrt's fd is readable */
#define CS_WINDOW 2                     /* the window has opened */
#define CS_HOST   4                     /* the host's fd, or its timeout */

struct cs_sleep {
	struct hrt_base *base;
	int epfd, hrt_fd, ranged;       /* ranged: coalescing (and no ENOSYS) */
	int held;                       /* the timerfd is held */
	int slept;                      /* the last wait could block */
	unsigned long slack, slack_orig;
	unsigned long long wakeups;     /* passes after such a wait (what
					 * hrt_base_loop counts in stats.wakeups) */
};

/* 0 or -errno. */
static inline int cs_init(struct cs_sleep *c, struct hrt_base *base, int host_fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	c->base = base;
	c->epfd = -1;
	c->held = c->slept = 0;
	c->wakeups = 0;
	c->ranged = hrt_base_get_coalesce(base) == 1;
	c->slack = c->slack_orig = (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if ((c->hrt_fd = hrt_base_fd(base)) < 0)
		return c->hrt_fd;
	if ((c->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -errno;
	ev.data.fd = c->hrt_fd;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->hrt_fd, &ev) < 0)
		return -errno;
	ev.data.fd = host_fd;
	return epoll_ctl(c->epfd, EPOLL_CTL_ADD, host_fd, &ev) < 0 ? -errno : 0;
}

static inline void cs_set_slack(struct cs_sleep *c, unsigned long ns)
{
	if (ns != c->slack && prctl(PR_SET_TIMERSLACK, ns ? ns : 1, 0, 0, 0) == 0)
		c->slack = ns;
}

/* The wait: t ns (< 0: none); ENOSYS (Linux < 5.11) ends the ranged path. */
static inline int cs_wait(struct cs_sleep *c, struct epoll_event *evs, int64_t t)
{
	struct timespec ts = { t / 1000000000, t % 1000000000 };
	int n = -1;

#ifdef SYS_epoll_pwait2
	if (c->ranged)
		n = (int)syscall(SYS_epoll_pwait2, c->epfd, evs, 2, t < 0 ? NULL : &ts, NULL,
				 (size_t)0);
	if (n < 0 && errno == ENOSYS)
#endif
		c->ranged = 0;
	if (!c->ranged)
		n = epoll_wait(c->epfd, evs, 2, t < 0 ? -1 : (int)((t + 999999) / 1000000));
	return n;
}

/* One sleep, for at most host_ns (< 0: no limit): CS_* bits, or -errno. */
static inline int cs_sleep(struct cs_sleep *c, int64_t host_ns)
{
	hrt_time_t now, soft = HRT_TIME_MAX, hard = HRT_TIME_MAX, end, until;
	struct epoll_event evs[2];
	int n, i, r = 0;

	/* The hold before the window is read (a start after it arms the
	 * timerfd), but a timerfd not held is held only for a window. */
	if (c->ranged && (c->held || hrt_base_wait_window(c->base, &soft, &hard) == 1))
		c->held = hrt_base_hold_fd(c->base, 1) == 0;
	if (!c->held || hrt_base_wait_window(c->base, &soft, &hard) != 1) {
		soft = HRT_TIME_MAX;    /* no window: the timerfd, armed */
		if ((n = hrt_base_hold_fd(c->base, 0)) < 0)
			return n;
		c->held = 0;
	}
	if ((n = hrt_base_now(c->base, &now)) < 0)
		return n;
	end = host_ns < 0 ? HRT_TIME_MAX : now + host_ns;
	/* The window first: its slack, cut at the host's deadline; else the
	 * host's deadline, with the thread's own slack. */
	if (soft != HRT_TIME_MAX && soft <= end)
		cs_set_slack(c, (unsigned long)((hard < end ? hard : end) - soft));
	else
		cs_set_slack(c, c->slack_orig);
	until = soft < end ? soft : end;
	c->slept = until > now;
	n = cs_wait(c, evs, until == HRT_TIME_MAX ? -1 : c->slept ? until - now : 0);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++)
		r |= evs[i].data.fd == c->hrt_fd ? CS_FD : CS_HOST;
	if ((n = hrt_base_now(c->base, &now)) < 0)
		return n;
	return r | (now >= soft ? CS_WINDOW : 0) | (now >= end ? CS_HOST : 0);
}

/* After cs_sleep returned ev: hrt's pass (idle if nothing of the host's
 * was ready), what it returned; 0 if none was due. */
static inline ssize_t cs_pass(struct cs_sleep *c, int ev)
{
	hrt_time_t now;

	c->wakeups += c->slept && (ev & (CS_FD | CS_WINDOW));
	if (ev & CS_FD)
		return hrt_base_dispatch(c->base, !(ev & CS_HOST));
	if ((ev & CS_WINDOW) && hrt_base_now(c->base, &now) == 0)
		return hrt_base_run(c->base, now, !(ev & CS_HOST));
	return 0;
}

/* Gives the timerfd back (armed) and the thread its slack: 0 or -errno. */
static inline int cs_done(struct cs_sleep *c)
{
	cs_set_slack(c, c->slack_orig);
	if (c->epfd >= 0)
		close(c->epfd);
	return hrt_base_hold_fd(c->base, 0);
}

#endif /* HRT_COALESCE_SLEEP_H */
