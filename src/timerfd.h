/* SPDX-License-Identifier: MIT */
/*
 * timerfd.h - the Linux timerfd as a wake-up device (internal; device.h).
 * The system calls go through a per-device table, so a test can give one
 * device fakes without touching any other base.
 */
#ifndef HRT_TIMERFD_H
#define HRT_TIMERFD_H

#include <sys/timerfd.h>
#include "device.h"

struct hrt_timerfd_sys {
	ssize_t (*read)(int fd, void *buf, size_t len);
	int (*settime)(int fd, int flags, const struct itimerspec *new_value,
		       struct itimerspec *old_value);
};

/* A new disarmed timerfd device on `clock`; sys NULL: the real system
 * calls (sys must outlive the device).  NULL with errno on failure. */
struct hrt_device *hrt__timerfd_new(clockid_t clock, const struct hrt_timerfd_sys *sys);
/* The tests' seam: d (a timerfd device) makes its system calls through sys
 * from now on (NULL: the real ones).  Only while no other thread uses d's
 * base. */
void hrt__timerfd_set_sys(struct hrt_device *d, const struct hrt_timerfd_sys *sys);

#endif /* HRT_TIMERFD_H */
