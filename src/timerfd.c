/* SPDX-License-Identifier: MIT */
/*
 * timerfd.c - the wake-up device of a real base: one Linux timerfd, armed
 * absolute.  It owns only its fd; what to arm for, and what a wake-up
 * means, are the base's (wakeup.c keeps it at the earliest hard expiry,
 * pass.c answers hrt_base_dispatch).
 *
 * Contract:
 *  1. 0 is never used to mean "now" (0 disarms a timerfd): the base arms
 *     instants >= 1.  HRT_TIME_MAX disarms.
 *  2. CLOCK_REALTIME devices arm with TFD_TIMER_CANCEL_ON_SET, so a change
 *     of the wall clock surfaces as ECANCELED on read, and the base runs
 *     what is now due and re-arms.
 *  3. ack() reads only the fd it made (same device and inode, by fstat):
 *     a number closed behind our back and reused is never read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "timerfd.h"

struct hrt_timerfd {
	struct hrt_device dev;
	int fd;
	clockid_t clock;
	dev_t st_dev;                   /* fd's identity, checked by ack */
	ino_t st_ino;
	const struct hrt_timerfd_sys *sys;
};

static const struct hrt_timerfd_sys real_sys = { read, timerfd_settime };

static inline struct hrt_timerfd *to_tfd(const struct hrt_device *d)
{
	return HRT_CONTAINER_OF(d, struct hrt_timerfd, dev);
}

/* The one place an instant becomes an itimerspec and its flags. */
static int tfd_arm(struct hrt_device *d, hrt_time_t when)
{
	struct hrt_timerfd *t = to_tfd(d);
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	int flags = 0;

	if (when != HRT_TIME_MAX) {
		its.it_value.tv_sec = when / 1000000000;
		its.it_value.tv_nsec = when % 1000000000;
		flags = TFD_TIMER_ABSTIME;
		/* Nothing to follow while disarmed: no wall-clock wake-ups then. */
		if (t->clock == CLOCK_REALTIME)
			flags |= TFD_TIMER_CANCEL_ON_SET;
	}
	if (t->sys->settime(t->fd, flags, &its, NULL) == 0)
		return HRT_DEV_ARMED;
	/* timerfd_settime(2) NOTES: with CANCEL_ON_SET, after a wall-clock
	 * change not yet read, settime re-arms the timer *and* fails with
	 * ECANCELED (consuming the notification): a successful arm. */
	if (errno == ECANCELED && (flags & TFD_TIMER_CANCEL_ON_SET))
		return HRT_DEV_JUMPED;
	return -errno;
}

static int tfd_ack(struct hrt_device *d)
{
	struct hrt_timerfd *t = to_tfd(d);
	struct stat st;
	uint64_t ticks;
	ssize_t r;

	/* Catches every file but another anonymous inode (eventfd, epoll,
	 * another timerfd), which share one inode. */
	if (fstat(t->fd, &st) < 0 || st.st_dev != t->st_dev || st.st_ino != t->st_ino)
		return -EBADF;
	r = t->sys->read(t->fd, &ticks, sizeof(ticks));
	if (r == (ssize_t)sizeof(ticks))
		return HRT_DEV_FIRED;
	if (r >= 0 || errno == EAGAIN || errno == EINTR)
		return HRT_DEV_NOTHING;
	return -errno;          /* ECANCELED: the wall clock was set */
}

static int tfd_fd(const struct hrt_device *d)
{
	return to_tfd(d)->fd;
}

static void tfd_close(struct hrt_device *d)
{
	struct hrt_timerfd *t = to_tfd(d);

	close(t->fd);
	free(t);
}

static const struct hrt_device_ops tfd_ops = { tfd_arm, tfd_ack, tfd_fd, tfd_close };

struct hrt_device *hrt__timerfd_new(clockid_t clock, const struct hrt_timerfd_sys *sys)
{
	struct hrt_timerfd *t = malloc(sizeof(*t));
	struct stat st;
	int err;

	if (!t)
		return NULL;
	t->fd = timerfd_create(clock, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->fd < 0 || fstat(t->fd, &st) < 0) {
		err = errno;
		if (t->fd >= 0)
			close(t->fd);
		free(t);
		errno = err;
		return NULL;
	}
	t->dev.ops = &tfd_ops;
	t->clock = clock;
	t->st_dev = st.st_dev;
	t->st_ino = st.st_ino;
	t->sys = sys ? sys : &real_sys;
	return &t->dev;
}

void hrt__timerfd_set_sys(struct hrt_device *d, const struct hrt_timerfd_sys *sys)
{
	to_tfd(d)->sys = sys ? sys : &real_sys;
}
