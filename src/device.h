/* SPDX-License-Identifier: MIT */
/*
 * device.h - the wake-up device below a timer base (internal), as
 * clockevents is below hrtimer: the base programs it for its earliest hard
 * expiry and answers its interrupt; the device knows nothing of timers.
 *
 * A real base has one device, made by hrt_base_fd and kept until
 * hrt_base_free (a virtual base has none); wakeup.c alone programs it.
 * It calls arm() with the base lock held, so a device needs no lock of
 * its own for arm(); ack() never blocks, is called without the lock by
 * dispatch and with it by hrt_base_plan_sleep's pass (pass.c), and must be
 * safe beside a concurrent arm(), as read(2) and timerfd_settime(2) on one
 * fd are.  The device's handler - whoever polls
 * fd() - calls the base's one entry point for a wake-up (hrt_base_dispatch,
 * or hrt__base_wakeup after hrt__wake_ack), which does the bookkeeping, the
 * pass and the re-arm in one critical section.  How the base uses it
 * (lazily, and who else may ask it to wake) is wakeup.c's.
 *
 * Implementations: timerfd.c (a Linux timerfd) and the tests' fakes.
 */
#ifndef HRT_DEVICE_H
#define HRT_DEVICE_H

#include <stdint.h>
#include <sys/types.h>
#include "hrt.h"

/* arm() results. */
#define HRT_DEV_ARMED   0       /* programmed (counts in stats.reprograms) */
#define HRT_DEV_JUMPED  1       /* programmed, and a wall-clock change was seen */
/* ack() results (and hrt__base_wakeup's events). */
#define HRT_DEV_FIRED   1       /* it fired */
#define HRT_DEV_NOTHING 0       /* nothing to read (EAGAIN, EINTR) */
/* hrt__base_wakeup only, from the coalescing loop: its window was open
 * already, so it did not sleep (a pass, but no wake-up: stats.wakeups
 * counts sleeps that ended); or its ranged sleep ended (a wake-up). */
#define HRT_DEV_NOSLEEP 2
#define HRT_DEV_SLEPT   3
/* -ECANCELED: the wall clock was set; any other -errno: the device failed. */

struct hrt_device;

struct hrt_device_ops {
	/* Program the device for the absolute instant `when` on the base's
	 * clock (>= 1); HRT_TIME_MAX disarms.  An HRT_DEV_* result, or
	 * -errno (nothing programmed: the base retries at its next update). */
	int (*arm)(struct hrt_device *d, hrt_time_t when);
	/* Consume a wake-up: HRT_DEV_FIRED, HRT_DEV_NOTHING, -ECANCELED, or
	 * -errno; never blocks. */
	int (*ack)(struct hrt_device *d);
	/* The descriptor that polls readable when the device fires. */
	int (*fd)(const struct hrt_device *d);
	/* The base is done with it (hrt_base_free, or replaced). */
	void (*close)(struct hrt_device *d);
};

struct hrt_device {
	const struct hrt_device_ops *ops;
};

#endif /* HRT_DEVICE_H */
