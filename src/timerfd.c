/*
 * timerfd.c - the wake-up device: a Linux timerfd kept armed (absolute) at
 * the base's earliest hard expiry, and hrt_base_dispatch(), the "timer
 * interrupt" a host event loop calls when the fd is readable.
 *
 * The fd is re-armed only when that instant changes.  0 is never used to
 * mean "now" (0 disarms a timerfd); an instant <= 0 is armed as 1 ns.
 * CLOCK_REALTIME bases arm with TFD_TIMER_CANCEL_ON_SET so a change of the
 * wall clock surfaces as ECANCELED on read: the clock is read again, what is
 * now due runs, and the fd is re-armed.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base.h"

/* Seams for the tests (ECANCELED without touching the machine's clock). */
ssize_t (*hrt__timerfd_read)(int fd, void *buf, size_t len) = read;
int (*hrt__timerfd_settime)(int fd, int flags, const struct itimerspec *new_value,
			    struct itimerspec *old_value) = timerfd_settime;

void hrt__wakeup_arm(struct hrt_base *b, hrt_time_t when)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	int flags = TFD_TIMER_ABSTIME;

	if (when != HRT_TIME_MAX) {
		hrt_time_t t = when > 0 ? when : 1;

		its.it_value.tv_sec = t / 1000000000;
		its.it_value.tv_nsec = t % 1000000000;
	}
	if (b->clock == CLOCK_REALTIME)
		flags |= TFD_TIMER_CANCEL_ON_SET;
	/* Failure leaves `armed` stale, so the next update tries again. */
	if (hrt__timerfd_settime(b->tfd, flags, &its, NULL) == 0) {
		b->armed = when;
		b->stats.reprograms++;
	} else {
		b->armed = HRT_ARMED_EXPIRED;
	}
}

void hrt__wakeup_close(struct hrt_base *b)
{
	if (b->tfd >= 0)
		close(b->tfd);
	if (b->epfd >= 0)
		close(b->epfd);
	if (b->efd >= 0)
		close(b->efd);
	b->tfd = b->epfd = b->efd = -1;
}

HRT_EXTERN int hrt_base_fd(struct hrt_base *b)
{
	int fd;

	if (!b || base_is_virtual(b))
		return -EINVAL;
	base_lock(b);
	if (b->tfd < 0) {
		fd = timerfd_create(b->clock, TFD_NONBLOCK | TFD_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
			base_unlock(b);
			return fd;
		}
		b->tfd = fd;
		b->armed = HRT_ARMED_EXPIRED;   /* force the first arm */
		base_wakeup_update(b);
	}
	fd = b->tfd;
	base_unlock(b);
	return fd;
}

HRT_EXTERN size_t hrt_base_dispatch(struct hrt_base *b, int idle)
{
	uint64_t ticks;
	ssize_t r;
	size_t n;

	if (!b || b->tfd < 0)
		return 0;
	r = hrt__timerfd_read(b->tfd, &ticks, sizeof(ticks));
	base_lock(b);
	if (r == (ssize_t)sizeof(ticks)) {
		b->stats.wakeups++;
		b->armed = HRT_ARMED_EXPIRED;   /* fired: any next instant re-arms */
	} else if (r < 0 && errno == ECANCELED) {
		b->stats.clock_jumps++;
		b->armed = HRT_ARMED_EXPIRED;
	}
	base_unlock(b);
	/* One clock read, one pass; the pass re-arms at its end. */
	n = hrt_base_run(b, hrt__clock_now(b->clock), idle);
	base_lock(b);
	base_wakeup_update(b);
	base_unlock(b);
	return n;
}
