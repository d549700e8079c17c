/* SPDX-License-Identifier: MIT */
/*
 * coalesce.c - the coalesced sleep's arithmetic: the base's wake-up
 * window (the timer sets' search, taken under the base lock) and the plan
 * that turns a window into an instant and a slack (the rule is in loop.c's
 * header and hrt.h; the switch is settings.c's).  hrt_base_wait_window
 * hands the same plan to programs with loops of their own.  The loops'
 * plans, each one critical section: hrt_base_loop's sleep (the window,
 * the rule, the sleeper's bound) and hrt_base_plan_sleep's (the window,
 * the rounding, the hold), the device's side of both through wakeup.c.
 * Also how a hosted loop's deadline cuts a sleep (hrt_base_loop_host).
 * Nothing here sleeps.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "guard.h"

/* Keep the top four bits: the slack changes (a prctl) only when the window
 * does by more than a sixteenth, never grows past it, and loses less than
 * an eighth of it (with three bits, up to a quarter: the window started
 * that much later and missed that many interrupts). */
static hrt_time_t slack_round_down(hrt_time_t x)
{
	int k = 63 - __builtin_clzll((unsigned long long)x);

	return k < 4 ? x : x & ~(((hrt_time_t)1 << (k - 3)) - 1);
}

int hrt__base_window(struct hrt_base *b, hrt_time_t *owner, hrt_time_t *soft,
		     hrt_time_t *hard)
{
	int have;

	base_lock(b);
	have = hrt__wake_window(b, owner, soft, hard);
	base_unlock(b);
	return have;
}

int hrt__base_sleep_plan(struct hrt_base *b, int div, hrt_time_t own, int busy,
			 struct hrt__sleep *p)
{
	hrt_time_t owner, soft, hard = HRT_TIME_MAX, until = 0;
	int have, ranged = 0, err;

	base_lock(b);
	have = hrt__wake_window(b, &owner, &soft, &hard);
	p->now = hrt__clock_now(b->clock);
	if (have)
		ranged = hrt__coalesce_plan(p->now, soft, hard, div, &until, &p->slack);
	/* Soft-due timers left after a pass (its budget cut it, or host work
	 * waited): no sleep, whatever the slack's rounding says. */
	if (ranged && soft <= p->now)
		until = p->now;
	/* Busy: host I/O ended the last sleep before its window began, so
	 * the window's slack went unused; this one runs to the window's end
	 * (within `own` of it) with the thread's own slack: no prctl, and the
	 * timers that became due meanwhile run at the next I/O wake-up. */
	if (ranged && busy && until > p->now && own < p->slack) {
		until += p->slack - own;
		p->slack = own;
	}
	err = hrt__wake_sleep_locked(b, hard, have && !ranged ? hard : HRT_TIME_MAX);
	base_unlock(b);
	p->soft = have ? soft : HRT_TIME_MAX;
	p->timeout = ranged ? (until > p->now ? until - p->now : 0) : -1;
	return err;
}

int hrt__slack_div(void)
{
	int nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);    /* this thread's, on Linux */
	return errno == 0 && nice > 0 ? 200 : 1000;
}

/* The calling thread's timer slack, exact at any size: PR_GET_TIMERSLACK
 * returns an int, so 3 s read as a negative number and 5 s as 705 ms;
 * /proc/TID/timerslack_ns (Linux 4.6) has the whole value. */
unsigned long hrt__slack_own(void)
{
	char path[64], buf[32];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/timerslack_ns", (long)syscall(SYS_gettid));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n > 0) {
		buf[n] = '\0';
		return strtoul(buf, NULL, 10);
	}
	return (unsigned int)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
}

/* Sets the calling thread's slack to ns; 0 is the kernel's "back to the
 * default", never what a caller means (a real-time thread reads 0): not
 * set.  0 or -errno. */
int hrt__slack_set(unsigned long ns)
{
	if (!ns)
		return 0;
	return prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) == 0 ? 0 : -errno;
}

int hrt__coalesce_plan(hrt_time_t now, hrt_time_t soft, hrt_time_t hard, int div,
		       hrt_time_t *until, hrt_time_t *slack)
{
	hrt_time_t d, bound, q;

	if (hard <= now) {              /* due: no sleep */
		*until = hard;
		*slack = 0;
		return 1;
	}
	/* The kernel widens the slack to (sleep length) / div: start no later
	 * than `bound`, where that estimate still ends by `hard`. */
	d = hard - now;
	bound = now + d - (d / (div + 1) + (d % (div + 1) != 0));
	if (soft > bound)
		return 0;
	/* The whole window [soft, hard]: what costs is an interrupt of our
	 * own, not a wake-up that runs fewer timers, so the kernel gets every
	 * instant it may end the sleep at; the end stays at `hard` (the
	 * rounding moves the start), so alone on the CPU the loop wakes when
	 * the timerfd would have. */
	q = slack_round_down(hard - soft);      /* >= 1: soft <= bound < hard */
	*until = hard - q < bound ? hard - q : bound;
	*slack = q;
	return 1;
}

/* A query, but the window search may move far timers into the tree (a
 * cache under the lock, as hrt_base_next_event), and it locks the base:
 * a change for the guard (-EDEADLK from a walk callback). */
HRT_EXTERN int hrt_base_wait_window(const struct hrt_base *cb, hrt_time_t *soft,
				    hrt_time_t *hard)
{
	struct hrt_base *b = (struct hrt_base *)cb;
	hrt_time_t owner, s, h, until, slack, now;
	int have = base_guard(b, G_CHANGE, !soft || !hard);

	if (have)
		return have;
	base_lock(b);
	have = hrt__wake_window(b, &owner, &s, &h);
	base_unlock(b);
	if (!have) {
		*soft = *hard = HRT_TIME_MAX;
		return 0;
	}
	now = base_now(b);              /* a virtual base plans on its time */
	if (!hrt__coalesce_plan(now, s, h, hrt__slack_div(), &until, &slack)) {
		*soft = *hard = h;
		return 0;
	}
	*soft = until;
	*hard = until + slack;
	return 1;
}

/* The plan path (hostsleep.c) -------------------------------------------- */

/* Time between the plan and the kernel's hrtimer (the rest of the host's
 * pre-sleep phase, its syscall's entry; 10-20 us in libev): kept out of
 * the slack, so the sleep ends by the hard expiry.  No more: a host that
 * woke on a 1 kHz neighbour's interrupt and plans a 2 ms window rounded
 * up to the millisecond has just under 1 ms of it left, and reaches the
 * neighbour's interrupt after next only if the margin is small (100 us
 * missed it: 0.40 of the timerfd's interrupts instead of 0.01). */
#define PLAN_MARGIN_NS 20000
/* Less slack than this is not worth a ranged sleep: the timerfd instead. */
#define PLAN_MIN_SLACK_NS 200000

/* Lock held: the window, 1 if still wide enough after its start is
 * rounded up to res: *delay from now and the slack left.  Only
 * CLOCK_MONOTONIC bases coalesce (hrt.h): a ranged sleep is relative on
 * that clock.  Busy (as for the loop): the sleep runs to the window's end
 * with the thread's own slack, if that is later than its start. */
static int hold_window(struct hrt_base *b, hrt_time_t res, int div, hrt_time_t own, int busy,
		       hrt_time_t *delay, hrt_time_t *slack)
{
	hrt_time_t owner, s, h, now, until, q;
	uint64_t d, e;

	if (b->clock != CLOCK_MONOTONIC || __atomic_load_n(&b->coalesce, __ATOMIC_RELAXED) != 1 ||
	    !hrt__wake_window(b, &owner, &s, &h))
		return 0;
	now = base_now(b);
	if (!hrt__coalesce_plan(now, s, h, div, &until, &q) || until + q <= now)
		return 0;
	if (s <= now)                   /* soft-due left after the pass: at once */
		until = now;
	h = until + q;                  /* the window's end */
	/* Rounded up in 64 unsigned bits: soft - now + res - 1 overflows a
	 * hrt_time_t for a res near HRT_TIME_MAX (a start past hard, not a
	 * delay that wrapped to 0 or below). */
	d = until > now ? (uint64_t)(until - now) : 0;
	d = (d + (uint64_t)res - 1) / (uint64_t)res * (uint64_t)res;
	if (d >= (uint64_t)(h - now))
		return 0;
	*delay = (hrt_time_t)d;
	*slack = h - (now + *delay) - PLAN_MARGIN_NS;
	if (*slack < PLAN_MIN_SLACK_NS)
		return 0;
	if (busy && own < *slack) {
		/* Rounded down: the host's sleep ends by the window's end. */
		e = (uint64_t)(h - now - PLAN_MARGIN_NS - own) / (uint64_t)res * (uint64_t)res;
		if (e > d) {
			*delay = (hrt_time_t)e;
			*slack = own;
		}
	}
	return 1;
}

int hrt__base_hold_plan(struct hrt_base *b, hrt_time_t res, int div, hrt_time_t own, int busy,
			hrt_time_t *delay, hrt_time_t *slack)
{
	int wide, err;

	base_lock(b);
	/* One section: a start after the window's read finds the timerfd
	 * held, and arms it if it needs an earlier wake-up. */
	wide = hold_window(b, res, div, own, busy, delay, slack);
	err = hrt__wake_hold_locked(b, wide);
	base_unlock(b);
	return err < 0 ? err : wide;
}

/* Hosted loops (loop.c) ---------------------------------------------- */

/*
 * A host's deadline before the end of the planned sleep cuts it.  Ranged
 * (*timeout >= 0): a window opening after the deadline gives way to a
 * sleep until the deadline with the thread's own slack `own`; one opening
 * before keeps its start, its slack cut at the deadline.  On the timerfd
 * path (*timeout < 0) the sleep ends at the deadline, with `own` slack.
 * 1 if the sleep now ends by the host's deadline, not at the window.
 */
int hrt__host_cut(hrt_time_t now, hrt_time_t host_end, hrt_time_t own, hrt_time_t *timeout,
		  hrt_time_t *slack)
{
	hrt_time_t until = *timeout >= 0 ? now + *timeout : HRT_TIME_MAX;
	hrt_time_t q = own > 0 ? own : 1;

	if (host_end == HRT_TIME_MAX)
		return 0;
	if (host_end < until) {
		*timeout = host_end > now ? host_end - now : 0;
		/* The window's sleep ended by until + slack <= the earliest
		 * hard expiry; a thread slack wider than the window (a narrow
		 * one) would carry this earlier sleep past it.  (The timerfd
		 * path, until = MAX, has the timerfd armed at hard.) */
		if (until != HRT_TIME_MAX && q > until + *slack - host_end)
			q = until + *slack - host_end;
		*slack = q;
		return 1;
	}
	if (host_end - until < *slack)
		*slack = host_end > until ? host_end - until : 1;  /* 0 would reset it */
	return 0;
}

/* ms for epoll_wait: the earlier of `ms` (< 0: none) and the host's end. */
int hrt__host_ms(int ms, hrt_time_t now, hrt_time_t host_end, int *host_cut)
{
	hrt_time_t h;

	*host_cut = 0;
	if (host_end == HRT_TIME_MAX)
		return ms;
	h = host_end > now ? (host_end - now + 999999) / 1000000 : 0;
	if (h > INT32_MAX)
		h = INT32_MAX;
	if (ms >= 0 && ms <= h)
		return ms;
	*host_cut = 1;
	return (int)h;
}
