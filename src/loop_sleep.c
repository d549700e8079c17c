/* SPDX-License-Identifier: MIT */
/*
 * loop_sleep.c - the iterations of hrt_base_loop (loop.c runs them): the
 * top of each (a stop, the hosted loop's turn), one sleep, and the pass it
 * ends in.  The loop takes no base lock: it calls the base's entry points
 * (base.h), and has the base's wake-up device while it runs, with one
 * hook, hrt__loop_kick, which writes the loop's eventfd.
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
 * and T as early as that allows (q = H - s rounded down to four bits):
 * the kernel gets the widest window the timers allow, and the greedy pass
 * takes whatever is due when the sleep ends.  An interrupt of our own is
 * what costs; a wake-up that rides on another's is close to free even if
 * it runs fewer timers.  If no T >= s fits, that one sleep is the exact
 * timerfd one.  The kernel reads its clock after ours, so a sleep may end
 * up to a system call's latency after H: that is the OS's lateness, as a
 * late timerfd is.  This path is NOTE mode: the loop tells the base the
 * instant it sleeps until (hrt__wake_sleep), and a start from another
 * thread that moves H before it kicks (pokes the eventfd) in place of the
 * re-arm it would have cost; a cancel costs nothing (the loop wakes in the
 * old window, finds nothing and plans again).  ENOSYS from epoll_pwait2
 * (Linux < 5.11) switches the base to the timerfd path.
 *
 * The window's slack is the thread's only for the sleep itself: set just
 * before the wait and the thread's own given back just after it, so every
 * callback - hrt's, and a hosted loop's in its turn - runs with the
 * thread's own slack, read exactly (hrt__slack_own) at any size.
 *
 * The thread is idle whenever it wakes from waiting, so every pass here is
 * an idle one (the IDLE policy walks greedily) unless a hosted loop had
 * work.  Hosting (hrt_base_loop_host): the host's fd shares the epoll, its
 * iteration runs at the top of each of ours (loop_turn), and its deadline
 * cuts the sleep (hrt__host_cut, coalesce.c).  Its fd may be ready on
 * every wake-up, so the window's opening is then read off the clock, not
 * off the sleep's end.  The passes beside a host (base.h, HRT_PASS_*; the
 * article's rule): a wake-up with host work waiting runs only the hard-due
 * timers, the host's turn comes next, and the soft-due timers right after
 * it, without a poll in between; every idle pass beside a host stops its
 * soft-due callbacks after the default budget, and what it leaves runs
 * after the host's next turn (the window is open: a sleep of 0).  A sleep
 * that the host's I/O ended before its window began makes the loop busy:
 * its next sleep runs to the window's end with the thread's own slack, no
 * prctl (hrt__base_sleep_plan).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base.h"
#include "loop.h"

/*
 * The loop's hook (base.h), called under the base lock: in NOTE mode when
 * a start needs a wake-up before the sleep planned ends, in ARM mode when
 * an arm failed (the epoll_wait on a timerfd that keeps its old instant,
 * or none, would never end: the loop retries with its backoff).  Wakes the
 * epoll_wait at once: the loop is awake from then on, as far as the base
 * need know.  The eventfd is the loop's from its first run to the base's
 * free, so no loop lock.
 */
hrt_time_t hrt__loop_kick(void *ctx, hrt_time_t when)
{
	struct hrt_loop *l = ctx;
	uint64_t one = 1;

	(void)when;
	if (write(l->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, a wake is due. */
	}
	return HRT_WAKE_AWAKE;
}

/* The top of each iteration ------------------------------------------ */

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
 * A stop, then the host's turn - its iteration without sleeping, which may
 * start timers or ask for the stop, then how long it may sleep - as an
 * instant on the base's clock in *host_end (HRT_TIME_MAX: no limit, or no
 * host).  1: stopped; 0: go on; < 0: the host's run failed, the loop
 * returns that.
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

/* Coalesced path ------------------------------------------------------- */

int hrt__pwait2_sys(void *ctx, int epfd, struct epoll_event *evs, int n,
		    hrt_time_t now, hrt_time_t timeout)
{
	struct timespec ts = { timeout / 1000000000, timeout % 1000000000 };

	(void)ctx;
	(void)now;
	/* A sleep of 0 has no timer to range: the plain poll, whose fast path
	 * made hrt_base_loop's iteration with nothing to do 597 -> 465 ns
	 * (bench/peers hrt-loop loop_iter, fastest of 5; libuv 239). */
	if (timeout == 0)
		return epoll_wait(epfd, evs, n, 0);
#ifdef SYS_epoll_pwait2
	return (int)syscall(SYS_epoll_pwait2, epfd, evs, n, &ts, NULL, (size_t)0);
#else
	(void)epfd, (void)evs, (void)n, (void)ts;
	errno = ENOSYS;
	return -1;
#endif
}

/* One coalesced sleep, as planned. */
struct sleep_plan {
	struct hrt__sleep s;            /* now, timeout (< 0: the timerfd's), slack */
	hrt_time_t opens;               /* the window's start; HRT_TIME_MAX: none */
	hrt_time_t host_end;            /* the host's deadline; HRT_TIME_MAX: none */
	int host_cut;                   /* the sleep ends by host_end, not the window */
};

/*
 * The plan: the window, a ranged sleep or the exact timerfd one, and the
 * sleeper's bound, in one critical section (coalesce.c), cut at the host's
 * deadline.  `busy`: the host's I/O ended the last sleep before its window
 * began (base.h).  Nonzero: the fd could not be set.
 */
static int plan(struct hrt_base *b, int div, unsigned long own, int busy, struct sleep_plan *p)
{
	int err = hrt__base_sleep_plan(b, div, (hrt_time_t)own, busy, &p->s);

	p->opens = p->s.timeout >= 0 ? p->s.now + p->s.timeout : HRT_TIME_MAX;
	p->host_cut = hrt__host_cut(p->s.now, p->host_end, (hrt_time_t)own, &p->s.timeout,
				    &p->s.slack);
	return err;
}

/* The sleep, with the window's slack for it alone: n events, or -1 with
 * errno.  The base hears that the loop is awake. */
static int wait(struct hrt_base *b, struct hrt_loop *l, unsigned long own,
		const struct sleep_plan *p, hrt__pwait2_fn fn, void *ctx, struct epoll_event *evs)
{
	int n, set = 0, err;

	if (p->s.timeout < 0)
		return epoll_wait(l->epfd, evs, 3, -1);
	/* A sleep of 0 (work waiting) has no timer for the slack to widen,
	 * and a busy one's is the thread's own: no prctl for either. */
	if (p->s.timeout > 0 && p->s.slack > 0 && (unsigned long)p->s.slack != own)
		set = hrt__slack_set((unsigned long)p->s.slack) == 0;
	n = fn(ctx, l->epfd, evs, 3, p->s.now, p->s.timeout);
	err = errno;
	if (set)
		hrt__slack_set(own);
	hrt__wake_sleep(b, HRT_WAKE_AWAKE, HRT_WAKE_KEEP);
	errno = err;
	return n;
}

/* The kind of pass (base.h) after a wake-up: only the hard-due timers
 * while host work waits; else an idle one, bounded by the default budget
 * when a host's I/O may arrive meanwhile. */
static int pass_kind(const struct hrt_loop *l, int host_ready)
{
	if (host_ready)
		return HRT_PASS_HARD;
	return HRT_PASS_IDLE | (l->host.fd >= 0 ? HRT_PASS_YIELD : 0);
}

/*
 * What the sleep ended in: in *event the pass to run (an HRT_DEV_* event
 * for hrt__base_wakeup, or -1: none), in *how its kind; in *busy whether
 * the host's fd ended a ranged sleep before its window (kept as it was if
 * the sleep was not ranged); 0, or the timerfd read's -errno, which ends
 * the loop as on the timerfd path.  The window opened at the sleep's own
 * end, or - with a host, whose fd may be ready on every wake-up - by the
 * clock.
 */
static int classify(struct hrt_base *b, struct hrt_loop *l, const struct sleep_plan *p,
		    const struct epoll_event *evs, int n, int tfd, int *event, int *how,
		    int *busy)
{
	int host_ready = 0, fired, ev = -1;

	fired = p->opens != HRT_TIME_MAX && n == 0 && !p->host_cut;
	if (sort_events(l, evs, n, tfd, &host_ready) && (ev = hrt__wake_ack(b)) < 0)
		return ev;
	/* Not busy once a sleep lasted to its planned end: a sleep of 0 or
	 * one the host's deadline cut says nothing of the host's I/O. */
	if (n == 0 && p->s.timeout > 0 && !p->host_cut)
		*busy = 0;
	if (l->host.fd >= 0 && (p->opens != HRT_TIME_MAX || p->host_end != HRT_TIME_MAX)) {
		hrt_time_t after = hrt__clock_now(hrt__base_clock(b));

		if (host_ready && p->opens != HRT_TIME_MAX)
			*busy = after < p->opens;
		/* Open once a timer is soft-due, whatever the sleep's end (a
		 * busy one's runs to the window's end). */
		if (!fired && after >= (p->s.soft < p->opens ? p->s.soft : p->opens))
			fired = 1;
		/* hrt.h: not idle once the host's deadline passed (its timers
		 * wait behind the pass), also when the window's sleep, its
		 * slack cut there, ended by it. */
		if (after >= p->host_end)
			host_ready = 1;
	}
	if (p->host_cut && n == 0)
		host_ready = 1;
	*how = pass_kind(l, host_ready);
	if (ev == HRT_DEV_FIRED)
		*event = ev;
	else if (!fired)
		*event = -1;
	else
		*event = p->s.timeout == 0 ? HRT_DEV_NOSLEEP : HRT_DEV_SLEPT;
	return 0;
}

int hrt__loop_coalesced(struct hrt_base *b, struct hrt_loop *l, int tfd)
{
	struct epoll_event evs[3];
	struct sleep_plan p;
	hrt__pwait2_fn fn;
	void *ctx;
	unsigned long own = hrt__slack_own();
	int div = hrt__slack_div(), ret, n, ev, how, busy = 0, after_host = 0;

	loop_lock(l);
	fn = l->pwait2 ? l->pwait2 : hrt__pwait2_sys;
	ctx = l->pwait2_ctx;
	loop_unlock(l);
	for (;;) {
		if ((ret = loop_turn(b, l, &p.host_end)))
			return ret > 0 ? 0 : ret;
		/* The soft-due timers a pass left to the host's turn: theirs
		 * now, with no poll in between (the budget bounds them). */
		if (after_host) {
			after_host = 0;
			hrt__base_wakeup(b, HRT_DEV_NOSLEEP, pass_kind(l, 0));
		}
		if (plan(b, div, own, busy, &p))
			return 1;       /* the timerfd path retries and reports */
		n = wait(b, l, own, &p, fn, ctx, evs);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOSYS && p.s.timeout >= 0) {
				loop_lock(l);
				l->nosys = 1;
				loop_unlock(l);
				return 1;
			}
			return -errno;
		}
		if ((ret = classify(b, l, &p, evs, n, tfd, &ev, &how, &busy)))
			return ret;
		if (ev >= 0)
			hrt__base_wakeup(b, ev, how);
		after_host = ev >= 0 && how == HRT_PASS_HARD;
	}
}

/* Timerfd path --------------------------------------------------------- */

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

int hrt__loop_timerfd(struct hrt_base *b, struct hrt_loop *l, int tfd)
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
			timeout = hrt__host_ms(-1, now, retry_at, &host_cut);
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
			hrt__base_dispatch(b, pass_kind(l, host_ready), &err);
			if (err)
				return err;
		}
	}
}
