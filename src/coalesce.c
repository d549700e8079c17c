/* SPDX-License-Identifier: MIT */
/*
 * coalesce.c - the coalesced sleep's arithmetic: the base's wake-up
 * window (the timer sets' search, taken under the base lock) and the plan
 * that turns a window into an instant and a slack (the rule is in loop.c's
 * header and hrt.h; the switch is settings.c's).  hrt_base_wait_window
 * hands the same plan to programs with loops of their own.  Also how a
 * hosted loop's deadline cuts a sleep (hrt_base_loop_host).  Nothing here
 * sleeps or arms.
 */
#include <fcntl.h>
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

/* Lock held: the window over every set, in the base's clock: the earliest
 * hard expiry's, and the earliest soft start if greedy (a pass walks every
 * set); else the owner's (greedy off, a pass runs the leftmost run of all
 * sets in one order: nothing before the owner's soft expiry, another
 * set's may be earlier but behind it). */
static int window_locked(struct hrt_base *b, hrt_time_t *owner, hrt_time_t *soft,
			 hrt_time_t *hard)
{
	int greedy = __atomic_load_n(&b->greedy, __ATOMIC_RELAXED) != HRT_GREEDY_OFF;
	hrt_time_t o, s, h, off;
	int have = 0;

	base_assert_locked(b);
	base_for_each_set(b, ts) {
		if (!hrt__tset_window(ts, greedy, &o, &s, &h))
			continue;
		off = set_offset(ts);
		o = key_to_base(o, off);
		s = key_to_base(s, off);
		h = key_to_base(h, off);
		if (!have || h < *hard) {
			*owner = o;
			*hard = h;
		}
		if (!have || s < *soft)
			*soft = s;
		have = 1;
	}
	if (have && !greedy)
		*soft = *owner;
	return have;
}

int hrt__base_window(struct hrt_base *b, hrt_time_t *owner, hrt_time_t *soft,
		     hrt_time_t *hard)
{
	int have;

	base_lock(b);
	have = window_locked(b, owner, soft, hard);
	base_unlock(b);
	return have;
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
	have = window_locked(b, &owner, &s, &h);
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
