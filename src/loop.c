/* SPDX-License-Identifier: MIT */
/*
 * loop.c - a standalone loop for programs without an event loop: epoll on
 * the base's timerfd and on an eventfd that hrt_base_stop() writes.
 *
 * Two ways to sleep.  The timerfd path: starts and cancels from other
 * threads need no wake-up of their own, they re-arm the timerfd and the
 * epoll_wait already blocked on it sees the new instant; only a failed
 * re-arm writes the eventfd (timerfd.c), so the loop can retry it.
 *
 * The coalesced path (default on CLOCK_MONOTONIC bases): after each pass
 * the loop computes the window and sleeps in epoll_pwait2 with the
 * thread's timer slack, the timerfd disarmed, so the kernel's own range
 * timer may end the sleep on an interrupt that happens anyway.  The rule
 * (also in hrt.h): H = the earliest hard expiry, s0 = the soft expiry of
 * its timer (the owner), S = the latest soft expiry <= H (bounded search,
 * >= s0).  Sleep until T with slack q where
 *   T >= s0          so every wake-up runs at least the owner,
 *   T + q <= H       so nothing runs after its hard expiry by our choice,
 *   T + (T - now) / div <= H   the kernel's own widening of the slack
 *                    (select_estimate_accuracy: length / 1000, / 200 at
 *                    nice > 0, the larger of that and the thread slack),
 * and T as late as the window allows (min(S, bound), then H - q with q
 * rounded down to three bits so the prctl is rare): one wake-up covers
 * every timer whose soft expiry is <= S.  If no T >= s0 fits, that one
 * sleep is the exact timerfd one.  The kernel reads its clock after ours,
 * so a sleep may end up to a system call's latency after H: that is the
 * OS's lateness, as a late timerfd is.  A start from another thread that
 * moves H before the current sleep's end pokes the eventfd (timerfd.c) in
 * place of the re-arm it would have cost; a cancel costs nothing (the loop
 * wakes in the old window, finds nothing and plans again).  ENOSYS from
 * epoll_pwait2 (Linux < 5.11) switches the base to the timerfd path.
 *
 * The thread is idle whenever it wakes from waiting, so every pass here
 * passes idle = 1 (the IDLE policy walks greedily).  One loop per base at a
 * time (they would share the stop and the eventfd).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
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

/* Coalesced path ------------------------------------------------------- */

/* timerfd.c's read seam (the tests' fake device). */
extern ssize_t (*hrt__timerfd_read)(int fd, void *buf, size_t len);

int hrt__slack_div(void)
{
	int nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);    /* this thread's, on Linux */
	return errno == 0 && nice > 0 ? 200 : 1000;
}

int hrt__pwait2_sys(void *ctx, int epfd, struct epoll_event *evs, int n,
		    hrt_time_t now, hrt_time_t timeout)
{
	struct timespec ts = { timeout / 1000000000, timeout % 1000000000 };

	(void)ctx;
	(void)now;
#ifdef SYS_epoll_pwait2
	return (int)syscall(SYS_epoll_pwait2, epfd, evs, n, &ts, NULL, (size_t)0);
#else
	(void)epfd, (void)evs, (void)n, (void)ts;
	errno = ENOSYS;
	return -1;
#endif
}

void hrt__base_set_pwait2(struct hrt_base *b, hrt__pwait2_fn fn, void *ctx)
{
	base_lock(b);
	b->c_pwait2 = fn;
	b->c_pwait2_ctx = ctx;
	base_unlock(b);
}

/* Lock held: the real timerfd to `when` (HRT_TIME_MAX disarms).  -errno. */
static int tfd_set(struct hrt_base *b, hrt_time_t when)
{
	if (b->c_tfd == when)
		return 0;
	if (hrt__timerfd_set(b->tfd, b->clock, when) < 0)
		return -errno;
	b->c_tfd = when;
	return 0;
}

/* One sleep, planned under the lock: *timeout < 0 for the epoll_wait on
 * the timerfd (armed exactly, or idle if nothing is queued), else the
 * ranged sleep's length with *slack.  Nonzero: the fd could not be set. */
static int coalesce_plan_sleep(struct hrt_base *b, int div, hrt_time_t *now,
			       hrt_time_t *timeout, hrt_time_t *slack)
{
	hrt_time_t owner, soft, hard = HRT_TIME_MAX, until;
	int have, ranged = 0, err;

	base_lock(b);
	have = hrt__base_window_locked(b, &owner, &soft, &hard);
	*now = hrt__clock_now(b->clock);
	if (have)
		ranged = hrt__coalesce_plan(*now, owner, soft, hard, div, &until, slack);
	err = tfd_set(b, have && !ranged ? hard : HRT_TIME_MAX);
	b->armed = hard;
	b->c_hard = hard;
	b->c_sleeping = 1;
	*timeout = ranged ? (until > *now ? until - *now : 0) : -1;
	base_unlock(b);
	return err;
}

/* Runs one pass for a wake-up that the device or the ranged sleep made. */
static void coalesce_pass(struct hrt_base *b)
{
	hrt_time_t now = hrt__clock_now(b->clock);

	base_lock(b);
	b->stats.wakeups++;
	base_unlock(b);
	hrt_base_run(b, now, 1);
}

/* 0 (stopped) or -errno to return, or 1: go on with the timerfd path. */
static int coalesce_loop(struct hrt_base *b, int tfd)
{
	struct epoll_event evs[2];
	hrt_time_t now, timeout, slack, cur;
	hrt__pwait2_fn wait;
	uint64_t ticks;
	ssize_t r;
	int div = hrt__slack_div(), ret, n, i, fired;
	long old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);

	base_lock(b);
	b->c_loop = 1;
	b->c_tfd = b->armed == HRT_ARMED_EXPIRED ? 1 : b->armed;   /* 1: unknown */
	wait = b->c_pwait2 ? b->c_pwait2 : hrt__pwait2_sys;
	base_unlock(b);
	cur = old;
	for (;;) {
		if (take_stop(b)) {
			drain_eventfd(b);
			ret = 0;
			break;
		}
		if (coalesce_plan_sleep(b, div, &now, &timeout, &slack)) {
			ret = 1;        /* the timerfd path retries and reports */
			break;
		}
		if (timeout >= 0 && slack > 0 && slack != cur &&
		    prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0) == 0)
			cur = slack;
		if (timeout >= 0)
			n = wait(b->c_pwait2_ctx, b->epfd, evs, 2, now, timeout);
		else
			n = epoll_wait(b->epfd, evs, 2, -1);
		base_lock(b);
		b->c_sleeping = 0;
		base_unlock(b);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			if (ret == -ENOSYS && timeout >= 0) {
				base_lock(b);
				b->c_nosys = 1;
				base_unlock(b);
				ret = 1;
			}
			break;
		}
		fired = timeout >= 0 && n == 0;
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd != tfd) {
				drain_eventfd(b);
				continue;
			}
			r = hrt__timerfd_read(tfd, &ticks, sizeof(ticks));
			if (r == (ssize_t)sizeof(ticks)) {
				base_lock(b);
				b->c_tfd = HRT_TIME_MAX;        /* one-shot: fired */
				base_unlock(b);
				fired = 1;
			} else if (r < 0 && errno != EAGAIN && errno != EINTR) {
				n = -errno;     /* as the timerfd path: the error ends it */
			}
		}
		if (n < 0) {
			ret = n;
			break;
		}
		if (fired)
			coalesce_pass(b);
	}
	base_lock(b);
	b->c_loop = 0;
	b->c_sleeping = 0;
	b->armed = b->c_tfd == 1 ? HRT_ARMED_EXPIRED : b->c_tfd;
	base_wakeup_update(b);          /* the fd is the base's again */
	base_unlock(b);
	if (cur != old && old > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)old, 0, 0, 0);
	return ret;
}

/* Timerfd path --------------------------------------------------------- */

static int loop_run(struct hrt_base *b)
{
	struct epoll_event evs[2];
	unsigned failures = 0;
	int tfd, err, n, i, timeout, fired, co;

	tfd = hrt_base_fd(b);
	if (tfd < 0)
		return tfd;
	err = loop_setup(b, tfd);
	if (err)
		return err;
	base_lock(b);
	co = __atomic_load_n(&b->coalesce, __ATOMIC_RELAXED) &&
	     b->clock == CLOCK_MONOTONIC && !b->c_nosys;
	base_unlock(b);
	if (co) {
		err = coalesce_loop(b, tfd);
		if (err != 1)
			return err;
		err = 0;
	}
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
