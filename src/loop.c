/*
 * loop.c - a standalone loop for programs without an event loop: epoll on
 * the base's timerfd and on an eventfd that hrt_base_stop() writes.
 *
 * Starts and cancels from other threads need no wake-up of their own: they
 * re-arm the timerfd, and the epoll_wait already blocked on it sees the new
 * instant.  Only a failed re-arm writes the eventfd (timerfd.c), so the loop
 * can retry it.  The thread is idle whenever it wakes from waiting, so every
 * dispatch here passes idle = 1 (the IDLE policy walks greedily).  One
 * loop per base at a time (they would share the stop and the eventfd).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base.h"

static int loop_setup(struct hrt_base *b, int tfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err = 0;

	base_lock(b);
	if (b->epfd >= 0)
		goto out;
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0)
		goto out_errno;
	b->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (b->epfd < 0)
		goto out_close_efd;
	ev.data.fd = tfd;
	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, tfd, &ev) < 0)
		goto out_close_epfd;
	ev.data.fd = b->efd;
	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, b->efd, &ev) < 0)
		goto out_close_epfd;
	goto out;

out_close_epfd:
	err = -errno;
	close(b->epfd);
	b->epfd = -1;
	close(b->efd);
	b->efd = -1;
	goto out;
out_close_efd:
	err = -errno;
	close(b->efd);
	b->efd = -1;
	goto out;
out_errno:
	err = -errno;
out:
	base_unlock(b);
	return err;
}

/* Returns 1 (and clears the request) if a stop was asked for. */
static int take_stop(struct hrt_base *b)
{
	int stop;

	base_lock(b);
	stop = b->stop;
	b->stop = 0;
	base_unlock(b);
	return stop;
}

static void drain_eventfd(struct hrt_base *b)
{
	uint64_t v;

	if (read(b->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: another wake already drained it. */
	}
}

/*
 * How long epoll_wait may block.  Forever while the timerfd is armed: it
 * holds the next instant.  When the last arm failed nothing would ever wake
 * us, so retry the arm, and if it still fails poll with a backoff (1, 2, 4
 * ... 64 ms), dispatching on each timeout; dispatch runs a pass at the
 * clock it reads, so nothing runs early.  After HRT_LOOP_ARM_RETRIES
 * failures in a row the loop gives up and returns the arm's error.
 */
#define HRT_LOOP_ARM_RETRIES 12

static int loop_timeout(struct hrt_base *b, unsigned *failures, int *err)
{
	int timeout = -1;

	base_lock(b);
	if (b->armed == HRT_ARMED_EXPIRED)
		base_wakeup_update(b);
	/* EXPIRED without an arm error: the fd fired and a pass running on
	 * another thread re-arms at its end (a failure there pokes us). */
	if (b->armed != HRT_ARMED_EXPIRED || !b->arm_err) {
		*failures = 0;
	} else if (++*failures > HRT_LOOP_ARM_RETRIES) {
		*err = b->arm_err;
	} else {
		timeout = 1 << (*failures < 7 ? *failures - 1 : 6);
	}
	base_unlock(b);
	return timeout;
}

static int loop_run(struct hrt_base *b)
{
	struct epoll_event evs[2];
	unsigned failures = 0;
	int tfd, err, n, i, timeout, fired;

	tfd = hrt_base_fd(b);
	if (tfd < 0)
		return tfd;
	err = loop_setup(b, tfd);
	if (err)
		return err;
	for (;;) {
		if (take_stop(b)) {
			drain_eventfd(b);       /* the stop's wake-up, not the next loop's */
			return 0;
		}
		timeout = loop_timeout(b, &failures, &err);
		if (err)
			return err;
		n = epoll_wait(b->epfd, evs, 2, timeout);
		if (n < 0) {
			if (errno != EINTR)
				return -errno;
			if (timeout < 0)
				continue;
			n = 0;          /* a signal cut a retry wait short: retry now */
		}
		fired = n == 0;         /* an arm-retry timeout counts as a wake */
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == tfd)
				fired = 1;
			else
				drain_eventfd(b);
		}
		/* Arm errors are loop_timeout's business; read errors end it. */
		if (fired) {
			hrt__dispatch(b, 1, &err);
			if (err)
				return err;
		}
	}
}

/* One loop per base: a second would share the stop and the eventfd. */
HRT_EXTERN int hrt_base_loop(struct hrt_base *b)
{
	int err, busy;

	if (!b)
		return -EINVAL;
	if ((err = base_fd_entry(b)))
		return err;
	base_lock(b);
	busy = b->looping;
	b->looping = 1;
	base_unlock(b);
	if (busy)
		return -EBUSY;
	err = loop_run(b);
	base_lock(b);
	b->looping = 0;
	base_unlock(b);
	return err;
}

HRT_EXTERN int hrt_base_stop(struct hrt_base *b)
{
	uint64_t one = 1;
	int err = 0;

	if (!b)
		return -EINVAL;
	if ((err = base_fd_entry(b)))   /* a child's stop would end the parent's loop */
		return err;
	base_lock(b);
	b->stop = 1;
	if (b->efd >= 0 && write(b->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		err = -errno;
	base_unlock(b);
	return err;
}
