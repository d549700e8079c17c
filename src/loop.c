/* SPDX-License-Identifier: MIT */
/*
 * loop.c - a standalone loop for programs without an event loop, and the
 * same loop with another one inside it (hrt_base_loop_host): epoll on the
 * base's timerfd, on an eventfd that hrt_base_stop() writes, and on the
 * hosted loop's fd.  This file owns that state (struct hrt_loop, loop.h):
 * it makes and sets it up, takes the base's wake-up device for the loop
 * and gives it back, and answers the public calls; the iterations - the
 * host's turn, one sleep, its pass - are loop_sleep.c's.  One loop per
 * base at a time (they would share the stop and the eventfd).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base.h"
#include "loop.h"

struct hrt_loop *hrt__loop_new(int unlocked)
{
	struct hrt_loop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->unlocked = unlocked;
	l->epfd = l->efd = -1;
	l->host.fd = -1;
	if (!unlocked && pthread_mutex_init(&l->lock, NULL)) {
		free(l);
		return NULL;
	}
	return l;
}

void hrt__loop_free(struct hrt_loop *l)
{
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->efd >= 0)
		close(l->efd);
	if (!l->unlocked)
		pthread_mutex_destroy(&l->lock);
	free(l);
}

int hrt__loop_busy(struct hrt_loop *l)
{
	int busy;

	loop_lock(l);
	busy = l->looping;
	loop_unlock(l);
	return busy;
}

/* Set-up and stop --------------------------------------------------------- */

/* Set-up and stop --------------------------------------------------------- */

/* The eventfd and the epoll on it and the timerfd, each made once (the
 * epoll again if a loop had to drop it: host_del).  0 or -errno. */
static int loop_setup(struct hrt_loop *l, int tfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err = 0;

	loop_lock(l);
	if (l->efd < 0 && (l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
		goto out_errno;
	if (l->epfd >= 0)
		goto out;
	if ((l->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		goto out_errno;
	ev.data.fd = tfd;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, tfd, &ev) < 0)
		goto out_close_epfd;
	ev.data.fd = l->efd;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->efd, &ev) < 0)
		goto out_close_epfd;
	goto out;

out_close_epfd:
	err = -errno;
	close(l->epfd);
	l->epfd = -1;
	goto out;
out_errno:
	err = -errno;
out:
	loop_unlock(l);
	return err;
}

void hrt__loop_set_pwait2(struct hrt_base *b, hrt__pwait2_fn fn, void *ctx)
{
	struct hrt_loop *l = hrt__base_loop(b);

	loop_lock(l);
	l->pwait2 = fn;
	l->pwait2_ctx = ctx;
	loop_unlock(l);
}

/* The host's fd joins the loop's epoll for one loop: 0 or -errno. */
static int host_add(struct hrt_loop *l, int tfd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (l->host.fd < 0)
		return 0;
	if (l->host.fd == tfd || l->host.fd == l->efd || l->host.fd == l->epfd)
		return -EINVAL;         /* hrt's own: it would be read as the host's */
	ev.data.fd = l->host.fd;
	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->host.fd, &ev) < 0 ? -errno : 0;
}

/*
 * ...and leaves it.  An epoll watches an open file, not a number: a host
 * that closed its fd while a dup keeps the file open leaves it in the
 * epoll, where the fd number no longer reaches it (EPOLL_CTL_DEL: EBADF),
 * and a later plain loop would spin on its readiness for ever.  So an
 * epoll the host cannot leave is dropped; the next loop makes another.
 */
static void host_del(struct hrt_loop *l)
{
	if (l->host.fd < 0 || epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->host.fd, NULL) == 0)
		return;
	loop_lock(l);
	close(l->epfd);
	l->epfd = -1;
	loop_unlock(l);
}

static int loop_run(struct hrt_base *b, struct hrt_loop *l)
{
	int tfd, err, co;

	tfd = hrt__wake_fd(b);
	if (tfd < 0)
		return tfd;
	err = loop_setup(l, tfd);
	if (!err)
		err = host_add(l, tfd);
	if (err)
		return err;
	loop_lock(l);
	co = hrt__base_coalesce(b) == 1 && hrt__base_clock(b) == CLOCK_MONOTONIC && !l->nosys;
	loop_unlock(l);
	/* The device is the loop's now; a host's hold (hrt_base_hold_fd)
	 * keeps it: -EBUSY. */
	if ((err = hrt__wake_take(b, HRT_WAKE_LOOP, co, hrt__loop_kick, l)))
		goto out;
	err = co ? hrt__loop_coalesced(b, l, tfd) : 1;
	if (err == 1) {
		if (co)                 /* not coalescing now: the base arms */
			hrt__wake_take(b, HRT_WAKE_LOOP, 0, hrt__loop_kick, l);
		err = hrt__loop_timerfd(b, l, tfd);
	}
	hrt__wake_give(b, HRT_WAKE_LOOP);
out:
	host_del(l);
	return err;
}

/* One loop per base: a second would share the stop and the eventfd. */
static int loop_enter(struct hrt_base *b, const struct hrt_loop_host *host)
{
	struct hrt_loop *l;
	int err, busy;

	if ((err = hrt__base_guard_fd(b)))
		return err;
	l = hrt__base_loop(b);
	/* A second loop (the loop's own callback included), or a callback of
	 * a pass of this thread's: it would wait for the pass it is in. */
	if (hrt__loop_busy(l) || hrt__base_in_own_pass(b))
		return -EBUSY;
	loop_lock(l);
	busy = l->looping;
	l->looping = 1;
	loop_unlock(l);
	if (busy)
		return -EBUSY;
	l->host = *host;        /* ours alone now: `looping` is */
	err = loop_run(b, l);
	l->host.fd = -1;
	loop_lock(l);
	l->looping = 0;
	loop_unlock(l);
	return err;
}

HRT_EXTERN int hrt_base_loop(struct hrt_base *b)
{
	static const struct hrt_loop_host none = { -1, NULL, NULL, NULL };

	return loop_enter(b, &none);
}

HRT_EXTERN int hrt_base_loop_host(struct hrt_base *b, int fd,
				  hrt_time_t (*timeout)(void *arg), int (*run)(void *arg),
				  void *arg)
{
	struct hrt_loop_host host = { fd, timeout, run, arg };

	if (fd < 0 || !timeout || !run)
		return -EINVAL;
	return loop_enter(b, &host);
}

HRT_EXTERN int hrt_base_stop(struct hrt_base *b)
{
	struct hrt_loop *l;
	uint64_t one = 1;
	int err;

	if ((err = hrt__base_guard_fd(b)))      /* a child's stop would end the parent's loop */
		return err;
	l = hrt__base_loop(b);
	loop_lock(l);
	l->stop = 1;
	if (l->efd >= 0 && write(l->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		err = -errno;
	loop_unlock(l);
	return err;
}
