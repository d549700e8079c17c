/* SPDX-License-Identifier: MIT */
/*
 * timerfd.c - the wake-up device: a Linux timerfd kept armed (absolute) at
 * the base's earliest hard expiry, and hrt_base_dispatch(), the "timer
 * interrupt" a host event loop calls when the fd is readable.  While
 * hrt_base_loop coalesces (loop.c) the fd is left alone and the contract
 * below is the loop's (hrt__wakeup_arm only notes the instant).
 *
 * Contract:
 *  1. The fd is re-armed only when the armed instant changes, and every
 *     re-arm counts in stats.reprograms.  A start that does not become the
 *     earliest, or a cancel of a later timer, costs no system call.
 *  2. 0 is never used to mean "now" (0 disarms a timerfd); an instant <= 0
 *     is armed as 1 ns.  A base with no timers leaves the fd disarmed.
 *  3. CLOCK_REALTIME bases arm with TFD_TIMER_CANCEL_ON_SET, so a change of
 *     the wall clock surfaces as ECANCELED on read: dispatch reads the clock
 *     again, runs what is now due and re-arms.
 *  4. Dispatch reads the clock after draining the fd, so the pass never
 *     runs at an instant earlier than the expiry that woke it: a late
 *     wake-up can only merge passes, never add one.
 *  5. Dispatch reads only the fd it made (same device and inode, fstat at
 *     entry), and nothing in a forked child (the fd is the parent's).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base.h"

/* Seams for the tests (ECANCELED without touching the machine's clock, and
 * system-call counts in the benchmark).  Reassign only while no other thread
 * uses the library. */
ssize_t (*hrt__timerfd_read)(int fd, void *buf, size_t len) = read;
int (*hrt__timerfd_settime)(int fd, int flags, const struct itimerspec *new_value,
			    struct itimerspec *old_value) = timerfd_settime;

/*
 * Lock held; when >= 1 (base_wakeup_update clamps: 0 would disarm).
 * While hrt_base_loop coalesces (loop.c) the fd stays idle and `armed` is
 * the instant the loop will handle: a new earliest hard expiry before the
 * end of the current sleep pokes the loop (once) to plan again, in place
 * of the re-arm it would have cost; a later one costs nothing.
 */
int hrt__timerfd_set(int fd, clockid_t clock, hrt_time_t when)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	int flags = 0;

	if (when != HRT_TIME_MAX) {
		its.it_value.tv_sec = when / 1000000000;
		its.it_value.tv_nsec = when % 1000000000;
		flags = TFD_TIMER_ABSTIME;
		/* Nothing to follow while disarmed: no wall-clock wake-ups then. */
		if (clock == CLOCK_REALTIME)
			flags |= TFD_TIMER_CANCEL_ON_SET;
	}
	return hrt__timerfd_settime(fd, flags, &its, NULL);
}

void hrt__wakeup_arm(struct hrt_base *b, hrt_time_t when)
{

	if (b->c_loop) {
		uint64_t one = 1;

		b->armed = when;
		if (b->c_sleeping && when < b->c_hard) {
			b->c_sleeping = 0;
			if (write(b->efd, &one, sizeof(one)) < 0) {
				/* EAGAIN: a wake is already due. */
			}
		}
		return;
	}
	/* Failure marks the device expired, so the next update (or dispatch,
	 * or the standalone loop's retry) tries again.  A loop blocked in
	 * epoll_wait would not notice (the fd keeps its old instant, or none),
	 * so the first failure in a row pokes its eventfd: it wakes, sees the
	 * failure and retries with its backoff (which further pokes would cut
	 * short). */
	int r = hrt__timerfd_set(b->tfd, b->clock, when);

	/* timerfd_settime(2) NOTES: with CANCEL_ON_SET, after a wall-clock
	 * change not yet read, settime re-arms the timer *and* fails with
	 * ECANCELED (consuming the notification): that is a successful arm. */
	if (r < 0 && errno == ECANCELED && when != HRT_TIME_MAX && b->clock == CLOCK_REALTIME) {
		b->stats.clock_jumps++;
		r = 0;
	}
	if (r == 0) {
		b->armed = when;
		b->arm_err = 0;
		b->stats.reprograms++;
	} else {
		uint64_t one = 1;
		int first = b->arm_err == 0;    /* later ones: the loop is retrying */

		b->arm_err = -errno;
		b->armed = HRT_ARMED_EXPIRED;
		if (first && b->efd >= 0 && write(b->efd, &one, sizeof(one)) < 0) {
			/* EAGAIN: the counter is already non-zero, a wake is due. */
		}
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

	struct stat st;

	if (!b || base_is_virtual(b))
		return -EINVAL;
	if ((fd = base_fd_entry(b)))
		return fd;
	base_lock(b);
	if (b->tfd < 0) {
		fd = timerfd_create(b->clock, TFD_NONBLOCK | TFD_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			int err = -errno;

			if (fd >= 0)
				close(fd);
			base_unlock(b);
			return err;
		}
		b->tfd = fd;
		b->tfd_dev = st.st_dev;
		b->tfd_ino = st.st_ino;
		b->armed = HRT_TIME_MAX;        /* a new timerfd is disarmed */
		base_wakeup_update(b);
	}
	fd = b->tfd;
	base_unlock(b);
	return fd;
}

/*
 * A read that finds nothing (EAGAIN: another thread re-armed the fd between
 * the host's poll and this read, e.g. by cancelling the timer it fired for)
 * runs no pass unless something is hard-due or the last arm failed: the
 * device did not fire, so there is no interrupt to answer.  Any other read
 * error (EBADF: the host closed our fd) runs nothing and is returned in
 * *read_err.
 */
ssize_t hrt__dispatch(struct hrt_base *b, int idle, int *read_err)
{
	struct stat st;
	uint64_t ticks;
	hrt_time_t now;
	size_t n = 0;
	ssize_t r;
	int fd, err, due;

	*read_err = 0;
	if ((err = base_fd_entry(b)))
		return err;
	base_lock(b);
	fd = b->tfd;
	base_unlock(b);
	if (fd < 0)
		return -EINVAL;
	/* A number closed behind our back and reused by the caller: never read
	 * (or block on) their file.  Catches every file but another anonymous
	 * inode (eventfd, epoll, another timerfd), which share one inode. */
	if (fstat(fd, &st) < 0 || st.st_dev != b->tfd_dev || st.st_ino != b->tfd_ino) {
		*read_err = -EBADF;
		return -EBADF;
	}
	r = hrt__timerfd_read(fd, &ticks, sizeof(ticks));
	err = r < 0 ? errno : 0;
	if (r < 0 && err != EAGAIN && err != EINTR && err != ECANCELED) {
		*read_err = -err;
		return -err;
	}
	now = hrt__clock_now(b->clock);         /* the one clock read (4) */
	base_lock(b);
	if (r == (ssize_t)sizeof(ticks)) {
		b->stats.wakeups++;
		b->armed = HRT_ARMED_EXPIRED;   /* fired: any next instant re-arms */
		due = 1;
	} else if (err == ECANCELED) {
		b->stats.clock_jumps++;
		b->armed = HRT_ARMED_EXPIRED;   /* re-arm: renews CANCEL_ON_SET */
		due = 1;
	} else {
		due = b->armed == HRT_ARMED_EXPIRED || hrt__base_next_locked(b) <= now;
	}
	base_unlock(b);
	if (due)
		n = hrt_base_run(b, now, idle);  /* re-arms at its end */
	base_lock(b);
	base_wakeup_update(b);                  /* retries an arm that failed */
	err = b->armed == HRT_ARMED_EXPIRED ? b->arm_err : 0;
	base_unlock(b);
	return err ? err : (ssize_t)n;
}

HRT_EXTERN ssize_t hrt_base_dispatch(struct hrt_base *b, int idle)
{
	int read_err;

	if (!b)
		return -EINVAL;
	return hrt__dispatch(b, idle, &read_err);
}
