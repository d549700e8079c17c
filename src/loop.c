/*
 * loop.c - a standalone loop for programs without an event loop: epoll on
 * the base's timerfd and on an eventfd that hrt_base_stop() writes.
 *
 * Starts and cancels from other threads need no wake-up of their own: they
 * re-arm the timerfd, and the epoll_wait already blocked on it sees the new
 * instant.  The thread is idle whenever it wakes from waiting, so every
 * dispatch here passes idle = 1 (the IDLE policy walks greedily).
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
	uint64_t v;
	int stop;

	base_lock(b);
	stop = b->stop;
	b->stop = 0;
	if (stop && read(b->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing written yet; the flag is what counts. */
	}
	base_unlock(b);
	return stop;
}

HRT_EXTERN int hrt_base_loop(struct hrt_base *b)
{
	struct epoll_event evs[2];
	int tfd, err, n, i;

	if (!b)
		return -EINVAL;
	tfd = hrt_base_fd(b);
	if (tfd < 0)
		return tfd;
	err = loop_setup(b, tfd);
	if (err)
		return err;
	for (;;) {
		if (take_stop(b))
			return 0;
		n = epoll_wait(b->epfd, evs, 2, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < n; i++)
			if (evs[i].data.fd == tfd)
				hrt_base_dispatch(b, 1);
	}
}

HRT_EXTERN int hrt_base_stop(struct hrt_base *b)
{
	uint64_t one = 1;
	int err = 0;

	if (!b)
		return -EINVAL;
	base_lock(b);
	b->stop = 1;
	if (b->efd >= 0 && write(b->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		err = -errno;
	base_unlock(b);
	return err;
}
