/* SPDX-License-Identifier: MIT */
/*
 * loop.c - a standalone loop for programs without an event loop: epoll on
 * the base's timerfd and on an eventfd that hrt_base_stop() writes.  It
 * owns the epoll, the eventfd and the stop (struct hrt_loop, loop.h), and
 * takes no base lock: it calls the base's entry points (base.h), and while
 * it runs it has the base's wake-up device (hrt__wake_take, HRT_WAKE_LOOP)
 * with one hook, loop_kick, which writes the eventfd.
 *
 * Two ways to sleep.  The timerfd path (ARM mode): starts from other
 * threads need no wake-up of their own, they re-arm the timerfd when they
 * need an earlier wake-up and the epoll_wait already blocked on it sees
 * the new instant; only a failed re-arm kicks, so the loop can retry it.
 *
 * The coalesced path (default on CLOCK_MONOTONIC bases): after each pass
 * the loop computes the window and sleeps in epoll_pwait2 with the
 * thread's timer slack, the timerfd disarmed, so the kernel's own range
 * timer may end the sleep on an interrupt that happens anyway.  The rule
 * (also in hrt.h): H = the earliest hard expiry, s = the earliest soft
 * expiry queued (bounded search: some timer's, <= H).  Sleep until T with
 * slack q where
 *   T >= s           so every wake-up runs at least one timer,
 *   T + q = H        so nothing runs after its hard expiry by our choice,
 *   T + (T - now) / div <= H   the kernel's own widening of the slack
 *                    (select_estimate_accuracy: length / 1000, / 200 at
 *                    nice > 0, the larger of that and the thread slack),
 * and T as early as that allows (q = H - s rounded down to four bits so
 * the prctl is rare): the kernel gets the widest window the timers allow,
 * and the greedy pass takes whatever is due when the sleep ends.  An
 * interrupt of our own is what costs; a wake-up that rides on another's is
 * close to free even if it runs fewer timers.  If no T >= s fits, that one
 * sleep is the exact timerfd one.  The kernel reads its clock after ours,
 * so a sleep may end up to a system call's latency after H: that is the
 * OS's lateness, as a late timerfd is.  This path is NOTE mode: the loop
 * tells the base the instant it sleeps until (hrt__wake_sleep), and a
 * start from another thread that moves H before it kicks (pokes the
 * eventfd) in place of the re-arm it would have cost; a cancel costs
 * nothing (the loop wakes in the old window, finds nothing and plans
 * again).  ENOSYS from epoll_pwait2 (Linux < 5.11) switches the base to
 * the timerfd path.
 *
 * The loop's own small lock (none on an unlocked base) guards only the
 * stop, `looping` and the test seam.  It is innermost: the loop never
 * holds it while it calls the base.
 *
 * The thread is idle whenever it wakes from waiting, so every pass here
 * passes idle = 1 (the IDLE policy walks greedily).  One loop per base at a
 * time (they would share the stop and the eventfd).
 *
 * Hosting (hrt_base_loop_host): another loop's fd joins the epoll, its
 * iteration runs at the top of each of ours (loop_turn), and its deadline
 * cuts the sleep (hrt__host_cut, coalesce.c).  Its fd may be ready on
 * every wake-up, so the window's opening is then read off the clock, not
 * off the sleep's end; a pass is idle unless the host had work.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"
#include "loop.h"

/* Another event loop run inside this one (hrt_base_loop_host): its fd
 * shares the epoll, its iteration runs between sleeps, its deadline cuts
 * them.  Set before the loop starts and cleared after it ends, by the
 * loop's thread: no lock. */
struct loop_host {
	int fd;
	hrt_time_t (*timeout)(void *arg);
	int (*run)(void *arg);
	void *arg;
};

struct hrt_loop {
	pthread_mutex_t lock;           /* stop, looping, nosys, the seam; not
					 * taken if unlocked */
	int unlocked;                   /* the base is HRT_BASE_UNLOCKED */
	int epfd, efd;                  /* -1 until the first loop */
	int stop;                       /* hrt_base_stop asked */
	int looping;                    /* a loop runs (a second: -EBUSY) */
	int nosys;                      /* epoll_pwait2 said ENOSYS */
	hrt__pwait2_fn pwait2;          /* test seam; NULL: the system call */
	void *pwait2_ctx;
	struct loop_host host;          /* hrt_base_loop_host's; fd -1: none */
};

static inline void loop_lock(struct hrt_loop *l)
{
	if (!l->unlocked)
		pthread_mutex_lock(&l->lock);
}

static inline void loop_unlock(struct hrt_loop *l)
{
	if (!l->unlocked)
		pthread_mutex_unlock(&l->lock);
}

/*
 * The loop's hook (base.h), called under the base lock: in NOTE mode when
 * a start needs a wake-up before the sleep planned ends, in ARM mode when
 * an arm failed (the epoll_wait on a timerfd that keeps its old instant,
 * or none, would never end: the loop retries with its backoff).  Wakes the
 * epoll_wait at once: the loop is awake from then on, as far as the base
 * need know.  The eventfd is the loop's from its first run to the base's
 * free, so no loop lock.
 */
static hrt_time_t loop_kick(void *ctx, hrt_time_t when)
{
	struct hrt_loop *l = ctx;
	uint64_t one = 1;

	(void)when;
	if (write(l->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, a wake is due. */
	}
	return HRT_WAKE_AWAKE;
}

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

static int loop_setup(struct hrt_loop *l, int tfd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err = 0;

	loop_lock(l);
	if (l->epfd >= 0)
		goto out;
	l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l->efd < 0)
		goto out_errno;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		goto out_close_efd;
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
	close(l->efd);
	l->efd = -1;
	goto out;
out_close_efd:
	err = -errno;
	close(l->efd);
	l->efd = -1;
	goto out;
out_errno:
	err = -errno;
out:
	loop_unlock(l);
	return err;
}

/* Returns 1 (and clears the request) if a stop was asked for. */
static int take_stop(struct hrt_loop *l)
{
	int stop;

	loop_lock(l);
	stop = l->stop;
	l->stop = 0;
	loop_unlock(l);
	return stop;
}

static void drain_eventfd(struct hrt_loop *l)
{
	uint64_t v;

	if (read(l->efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: another wake already drained it. */
	}
}

/*
 * The top of every iteration: a stop, then the host's turn - its
 * iteration without sleeping, which may start timers or ask for the stop,
 * then how long it may sleep - as an instant on the base's clock in
 * *host_end (HRT_TIME_MAX: no limit, or no host).  1: stopped; 0: go on;
 * < 0: the host's run failed, the loop returns that.
 */
static int loop_turn(struct hrt_base *b, struct hrt_loop *l, hrt_time_t *host_end)
{
	hrt_time_t t, now;
	int err;

	*host_end = HRT_TIME_MAX;
	if (take_stop(l))
		goto stop;
	if (l->host.fd < 0)
		return 0;
	if ((err = l->host.run(l->host.arg)) < 0)
		return err;
	if (take_stop(l))
		goto stop;
	t = l->host.timeout(l->host.arg);
	if (t >= 0) {
		now = hrt__clock_now(hrt__base_clock(b));
		/* A timeout past HRT_TIME_MAX - now is no limit: the sum
		 * would overflow into the past, a loop that never sleeps. */
		*host_end = t < HRT_TIME_MAX - now ? now + t : HRT_TIME_MAX;
	}
	return 0;
stop:
	drain_eventfd(l);       /* the stop's wake-up, not the next loop's */
	return 1;
}

/* Sorts what epoll returned: the host's fd raises *host_ready, the eventfd
 * is drained, the timerfd counted in the return value. */
static int sort_events(struct hrt_loop *l, const struct epoll_event *evs, int n, int tfd,
		       int *host_ready)
{
	int i, timer = 0;

	for (i = 0; i < n; i++) {
		if (evs[i].data.fd == tfd)
			timer = 1;
		else if (evs[i].data.fd == l->host.fd)
			*host_ready = 1;
		else
			drain_eventfd(l);
	}
	return timer;
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
	int e = hrt__base_rearm(b);

	if (!e) {
		*failures = 0;
		return -1;
	}
	if (++*failures > HRT_LOOP_ARM_RETRIES) {
		*err = e;
		return -1;
	}
	return 1 << (*failures < 7 ? *failures - 1 : 6);
}

/* Coalesced path ------------------------------------------------------- */

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

void hrt__loop_set_pwait2(struct hrt_base *b, hrt__pwait2_fn fn, void *ctx)
{
	struct hrt_loop *l = hrt__base_loop(b);

	loop_lock(l);
	l->pwait2 = fn;
	l->pwait2_ctx = ctx;
	loop_unlock(l);
}

/*
 * One sleep: *timeout < 0 for the epoll_wait on the timerfd (armed
 * exactly, or idle if nothing is queued), else the ranged sleep's length
 * with *slack.  Nonzero: the fd could not be set.  While it plans, the
 * loop sleeps until "never" as far as the base knows, so a start that
 * moves the earliest hard expiry meanwhile kicks and the sleep ends at
 * once; then it sleeps until the window's hard expiry.
 */
static int coalesce_plan_sleep(struct hrt_base *b, int div, hrt_time_t *now,
			       hrt_time_t *timeout, hrt_time_t *slack)
{
	hrt_time_t owner, soft, hard = HRT_TIME_MAX, until;
	int have, ranged = 0, err;

	hrt__wake_sleep(b, HRT_TIME_MAX, HRT_WAKE_KEEP);
	have = hrt__base_window(b, &owner, &soft, &hard);
	*now = hrt__clock_now(hrt__base_clock(b));
	if (have)
		ranged = hrt__coalesce_plan(*now, soft, hard, div, &until, slack);
	err = hrt__wake_sleep(b, hard, have && !ranged ? hard : HRT_TIME_MAX);
	*timeout = ranged ? (until > *now ? until - *now : 0) : -1;
	return err;
}

/* 0 (stopped) or -errno to return, or 1: go on with the timerfd path. */
static int coalesce_loop(struct hrt_base *b, struct hrt_loop *l, int tfd)
{
	struct epoll_event evs[3];
	hrt_time_t now, timeout, slack, cur, host_end, opens;
	hrt__pwait2_fn wait;
	void *wait_ctx;
	int div = hrt__slack_div(), ret, n, fired, tfd_fired, ev, host_cut, host_ready;
	long old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);

	loop_lock(l);
	wait = l->pwait2 ? l->pwait2 : hrt__pwait2_sys;
	wait_ctx = l->pwait2_ctx;
	loop_unlock(l);
	cur = old;
	for (;;) {
		if ((ret = loop_turn(b, l, &host_end))) {
			ret = ret > 0 ? 0 : ret;
			break;
		}
		if (coalesce_plan_sleep(b, div, &now, &timeout, &slack)) {
			ret = 1;        /* the timerfd path retries and reports */
			break;
		}
		opens = timeout >= 0 ? now + timeout : HRT_TIME_MAX;    /* the window */
		host_cut = hrt__host_cut(now, host_end, old, &timeout, &slack);
		if (timeout >= 0 && slack > 0 && slack != cur &&
		    prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0) == 0)
			cur = slack;
		if (timeout >= 0)
			n = wait(wait_ctx, l->epfd, evs, 3, now, timeout);
		else
			n = epoll_wait(l->epfd, evs, 3, -1);
		hrt__wake_sleep(b, HRT_WAKE_AWAKE, HRT_WAKE_KEEP);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			if (ret == -ENOSYS && timeout >= 0) {
				loop_lock(l);
				l->nosys = 1;
				loop_unlock(l);
				ret = 1;
			}
			break;
		}
		/* The window opened: the sleep's own end, or - with a host,
		 * whose fd may be ready on every wake-up - the clock. */
		host_ready = host_cut && n == 0;
		fired = opens != HRT_TIME_MAX && n == 0 && !host_cut;
		tfd_fired = 0;
		if (sort_events(l, evs, n, tfd, &host_ready)) {
			ev = hrt__wake_ack(b);
			if (ev == HRT_DEV_FIRED) {
				fired = tfd_fired = 1;
			} else if (ev < 0) {
				ret = ev;       /* as the timerfd path: the error ends it */
				break;
			}
		}
		if (l->host.fd >= 0 && (opens != HRT_TIME_MAX || host_end != HRT_TIME_MAX)) {
			hrt_time_t after = hrt__clock_now(hrt__base_clock(b));

			if (!fired && after >= opens)
				fired = 1;
			/* hrt.h: not idle once the host's deadline passed
			 * (its timers wait behind the pass), also when the
			 * window's sleep, its slack cut there, ended by it. */
			if (after >= host_end)
				host_ready = 1;
		}
		if (fired)
			hrt__base_wakeup(b, tfd_fired ? HRT_DEV_FIRED : timeout == 0 ? HRT_DEV_NOSLEEP
					 : HRT_DEV_SLEPT, !host_ready);
	}
	if (cur != old && old > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)old, 0, 0, 0);
	return ret;
}

/* Timerfd path --------------------------------------------------------- */

static int timerfd_loop(struct hrt_base *b, struct hrt_loop *l, int tfd)
{
	struct epoll_event evs[3];
	hrt_time_t host_end, now, retry_at = 0;
	unsigned failures = 0;
	int err = 0, n, timeout, fired, host_cut, host_ready;

	for (;;) {
		if ((n = loop_turn(b, l, &host_end)))
			return n > 0 ? 0 : n;
		/* While arms fail, the next retry is due at retry_at: a host
		 * (or a poke) that wakes the loop sooner neither retries nor
		 * counts a failure, so giving up takes the backoff's time. */
		now = hrt__clock_now(hrt__base_clock(b));
		if (!failures || now >= retry_at) {
			timeout = loop_timeout(b, &failures, &err);
			if (err)
				return err;
			retry_at = timeout >= 0 ? now + (hrt_time_t)timeout * 1000000 : HRT_TIME_MAX;
		} else {
			timeout = (int)((retry_at - now + 999999) / 1000000);
		}
		timeout = hrt__host_ms(timeout, now, host_end, &host_cut);
		n = epoll_wait(l->epfd, evs, 3, timeout);
		if (n < 0) {
			if (errno != EINTR)
				return -errno;
			if (timeout < 0)
				continue;
			n = 0;          /* a signal cut a retry wait short */
		}
		/* An arm-retry timeout counts as a wake; the host's does not.
		 * Past the host's deadline its work waits: not idle. */
		host_ready = (host_cut && n == 0) ||
			     (host_end != HRT_TIME_MAX && hrt__clock_now(hrt__base_clock(b)) >= host_end);
		fired = sort_events(l, evs, n, tfd, &host_ready) || (n == 0 && !host_cut);
		/* Arm errors are loop_timeout's business; read errors end it. */
		if (fired) {
			hrt__base_dispatch(b, !host_ready, &err);
			if (err)
				return err;
		}
	}
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

static int loop_run(struct hrt_base *b, struct hrt_loop *l)
{
	int tfd, err, co;

	tfd = hrt_base_fd(b);
	if (tfd < 0)
		return tfd;
	err = loop_setup(l, tfd);
	if (!err)
		err = host_add(l, tfd);
	if (err)
		return err;
	loop_lock(l);
	co = hrt_base_get_coalesce(b) == 1 && hrt__base_clock(b) == CLOCK_MONOTONIC && !l->nosys;
	loop_unlock(l);
	/* The device is the loop's now; a host's hold (hrt_base_hold_fd)
	 * keeps it: -EBUSY. */
	if ((err = hrt__wake_take(b, HRT_WAKE_LOOP, co, loop_kick, l)))
		goto out;
	err = co ? coalesce_loop(b, l, tfd) : 1;
	if (err == 1) {
		if (co)                 /* not coalescing now: the base arms */
			hrt__wake_take(b, HRT_WAKE_LOOP, 0, loop_kick, l);
		err = timerfd_loop(b, l, tfd);
	}
	hrt__wake_give(b, HRT_WAKE_LOOP);
out:
	/* A host fd closed meanwhile left the epoll by itself. */
	if (l->host.fd >= 0)
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->host.fd, NULL);
	return err;
}

/* One loop per base: a second would share the stop and the eventfd. */
static int loop_enter(struct hrt_base *b, const struct loop_host *host)
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
	static const struct loop_host none = { -1, NULL, NULL, NULL };

	return loop_enter(b, &none);
}

HRT_EXTERN int hrt_base_loop_host(struct hrt_base *b, int fd,
				  hrt_time_t (*timeout)(void *arg), int (*run)(void *arg),
				  void *arg)
{
	struct loop_host host = { fd, timeout, run, arg };

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
