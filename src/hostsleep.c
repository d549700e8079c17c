/* SPDX-License-Identifier: MIT */
/*
 * hostsleep.c - the coalesced sleep for a host loop that sleeps itself
 * with a coarse timeout and cannot be driven from outside (libev: its
 * epoll backend sleeps in whole milliseconds and tells neither its fd nor
 * its timeout).  Such a sleep, under the thread's timer slack, is the
 * kernel window hrt needs whenever the timers' window is wider than the
 * host's resolution: hrt_base_plan_sleep holds the timerfd (wakeup.c),
 * reads the window (coalesce.c), rounds its start up to the resolution
 * and sets the planning thread's slack to what is left; first it runs
 * what is due, so the host's own timer and fd watcher only wake it.  A
 * host that can be driven (libuv) gets nanosecond sleeps instead:
 * hrt_base_loop_host.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/prctl.h>

#include "base.h"
#include "baselock.h"
#include "base_priv.h"

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

static void plan_slack(struct hrt_base *b, unsigned long ns)
{
	if (ns != b->plan_slack_set && prctl(PR_SET_TIMERSLACK, ns ? ns : 1, 0, 0, 0) == 0)
		b->plan_slack_set = ns;
}

/* The window, 1 if still wide enough after its start is rounded up to
 * res: *delay from now and the slack left. */
static int plan_window(struct hrt_base *b, hrt_time_t res, hrt_time_t *delay,
		       hrt_time_t *slack)
{
	hrt_time_t now, soft, hard;
	uint64_t d;

	if (hrt_base_get_coalesce(b) != 1 || hrt_base_wait_window(b, &soft, &hard) != 1 ||
	    hrt_base_now(b, &now) || hard <= now)
		return 0;
	/* Rounded up in 64 unsigned bits: soft - now + res - 1 overflows a
	 * hrt_time_t for a res near HRT_TIME_MAX (a start past hard, not a
	 * delay that wrapped to 0 or below). */
	d = soft > now ? (uint64_t)(soft - now) : 0;
	d = (d + (uint64_t)res - 1) / (uint64_t)res * (uint64_t)res;
	if (d >= (uint64_t)(hard - now))
		return 0;
	*delay = (hrt_time_t)d;
	*slack = hard - (now + *delay) - PLAN_MARGIN_NS;
	return *slack >= PLAN_MIN_SLACK_NS;
}

/* Back to the timerfd path: armed, the thread's slack its own. */
static int plan_off(struct hrt_base *b)
{
	plan_slack(b, b->plan_slack_orig);
	return hrt_base_hold_fd(b, 0);
}

/* What is due before the next sleep, as a pass at idle (the host ran its
 * callbacks for this wake-up): what the timerfd says (the timerfd path, or
 * a start from another thread while held), then, coalescing, an open
 * window (the host woke for it, or for anything else once it had opened;
 * without coalescing the timerfd alone decides, as with dispatch). */
static int plan_pass(struct hrt_base *b)
{
	hrt_time_t owner, soft, hard, now;
	ssize_t n = hrt_base_dispatch(b, 1);

	/* The timers' own window, not the planned sleep (whose start the
	 * slack's rounding may push later). */
	if (n >= 0 && hrt_base_get_coalesce(b) == 1 && hrt__base_window(b, &owner, &soft, &hard) &&
	    hrt_base_now(b, &now) == 0 && soft <= now)
		n = hrt_base_run(b, now, 1);
	return n < 0 ? (int)n : 0;
}

/* The calling thread is the base's planner (the first to plan since the
 * last hrt_base_plan_done): 0, or -EPERM. */
static int plan_claim(struct hrt_base *b)
{
	uint64_t me = hrt__thread_id_get(), none = 0;

	if (__atomic_load_n(&b->plan_tid, __ATOMIC_ACQUIRE) == me)
		return 0;
	if (!__atomic_compare_exchange_n(&b->plan_tid, &none, me, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return -EPERM;
	b->plan_slack_orig = b->plan_slack_set =
		(unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	return 0;
}

/*
 * What is due runs first.  The hold comes before the window is read (a
 * start after it arms the timerfd), but a timerfd not held is held only
 * for a wide window: no arm and disarm in turn while the timerfd path runs.
 */
static int plan(struct hrt_base *b, hrt_time_t res, hrt_time_t *delay)
{
	int who = hrt__wake_who(b);
	hrt_time_t d, slack;
	int err, wide;

	/* hrt_base_loop's device: its timerfd is not ours to read or hold. */
	if (who == HRT_WAKE_LOOP)
		return -EBUSY;
	if ((err = plan_pass(b)))
		return err;
	*delay = HRT_TIME_MAX;
	wide = who == HRT_WAKE_HOLD || plan_window(b, res, &d, &slack);
	if (wide) {
		if ((err = hrt_base_hold_fd(b, 1)) < 0)
			return err;
		wide = plan_window(b, res, &d, &slack);
	}
	if (!wide)
		return (err = plan_off(b)) < 0 ? err : 0;
	plan_slack(b, (unsigned long)slack);
	*delay = d;
	return 1;
}

/* The planner's errors stick until hrt_base_plan_done, which reports the
 * first: a host that only wakes up for hrt need not keep them. */
HRT_EXTERN int hrt_base_plan_sleep(struct hrt_base *b, hrt_time_t res, hrt_time_t *delay)
{
	int r;

	if ((r = hrt_base_fd(b)) < 0)           /* the guard; makes the timerfd */
		return r;
	if (res <= 0 || !delay)
		return -EINVAL;
	if ((r = plan_claim(b)))
		return r;
	r = plan(b, res, delay);
	if (r < 0 && !b->plan_err)
		b->plan_err = r;
	return r;
}

HRT_EXTERN int hrt_base_plan_done(struct hrt_base *b)
{
	int err, first;

	if ((err = hrt_base_fd(b)) < 0)
		return err;
	if (__atomic_load_n(&b->plan_tid, __ATOMIC_ACQUIRE) != hrt__thread_id_get())
		return -EPERM;
	err = plan_off(b);
	first = b->plan_err;
	b->plan_err = 0;
	__atomic_store_n(&b->plan_tid, 0, __ATOMIC_RELEASE);
	return first ? first : err;
}
