/* SPDX-License-Identifier: MIT */
/*
 * fake_clock.h - fake realtime and monotonic clocks and a fake timerfd for
 * the tests of a CLOCK_REALTIME base (test_realtime.c,
 * test_diff_realtime.c): rt_now and mono_now are the clocks, a set of the
 * wall clock (fake_set_clock) is set_pending when the fd listens for one
 * (the next read of the timerfd fails with ECANCELED, as Linux's
 * TFD_TIMER_CANCEL_ON_SET does, or the next arm does: fake_settime),
 * armed_at is the last absolute arm (HRT_TIME_MAX: disarmed).  Install with the base's
 * and the device's seams (hrt__base_set_gettime, hrt__timerfd_set_sys).
 */
#ifndef HRT_TESTS_FAKE_CLOCK_H
#define HRT_TESTS_FAKE_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>

#include "hrt.h"

#define FAKE_S 1000000000LL

static hrt_time_t rt_now, mono_now;
static int set_pending;                 /* the wall clock was set, not read */
static hrt_time_t armed_at;             /* last settime: absolute, or MAX */
static int armed_flags;

static int fake_gettime(clockid_t c, struct timespec *ts)
{
	hrt_time_t v = c == CLOCK_REALTIME ? rt_now : mono_now;

	ts->tv_sec = v / FAKE_S;
	ts->tv_nsec = v % FAKE_S;
	return 0;
}

static ssize_t fake_read(int fd, void *buf, size_t len)
{
	uint64_t one = 1;

	(void)fd;
	if (set_pending) {
		set_pending = 0;
		errno = ECANCELED;
		return -1;
	}
	if (armed_at == HRT_TIME_MAX || armed_at > rt_now || len < sizeof(one)) {
		errno = EAGAIN;
		return -1;
	}
	memcpy(buf, &one, sizeof(one));
	armed_at = HRT_TIME_MAX;
	return sizeof(one);
}

/* As Linux (fs/timerfd.c): an fd last set with CANCEL_ON_SET hears of a
 * set of the wall clock (fake_set_clock), disarmed (flags 0) it hears of
 * none; the set is reported by the next read, or by the next arm, which
 * then arms *and* fails with ECANCELED (timerfd_settime(2) NOTES).
 * set_at_arm counts sets told by an arm, fresh_arms arms of an fd that
 * heard of no set (the base measures the offset itself then). */
static long set_at_arm, fresh_arms;

static void fake_set_clock(hrt_time_t d)
{
	rt_now += d;
	if (armed_flags > 0 && (armed_flags & TFD_TIMER_CANCEL_ON_SET))
		set_pending = 1;
}

static int fake_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *ov)
{
	int arm = nv->it_value.tv_sec || nv->it_value.tv_nsec;
	int listening = armed_flags > 0 && (armed_flags & TFD_TIMER_CANCEL_ON_SET);

	(void)fd;
	(void)ov;
	armed_flags = flags;
	armed_at = arm ? (hrt_time_t)nv->it_value.tv_sec * FAKE_S + nv->it_value.tv_nsec
		       : HRT_TIME_MAX;
	if (!(flags & TFD_TIMER_CANCEL_ON_SET))
		set_pending = 0;        /* off the kernel's list */
	else if (!listening && arm)
		fresh_arms++;
	if (arm && set_pending) {
		set_pending = 0;
		set_at_arm++;
		errno = ECANCELED;
		return -1;
	}
	return 0;
}

#endif /* HRT_TESTS_FAKE_CLOCK_H */
