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
 * what is due, so the host's own timer and fd watcher only wake it.
 * hrt_base_plan_wake gives the thread its own slack back once the sleep
 * ended, so the host's callbacks run with it.  A host that can be driven
 * (libuv) gets nanosecond sleeps instead: hrt_base_loop_host.
 *
 * A client of the base, as the loop is: it calls base.h and the public
 * calls, and owns its state (struct hrt_host), which lifecycle.c makes
 * with the base and the base only keeps.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "base.h"
#include "baselock.h"
#include "hostsleep.h"

/* The planner: the thread that plans (0: none, taken by compare-and-swap),
 * its timer slack before it planned and now, and the first error a plan
 * returned (hrt_base_plan_done reports it). */
struct hrt_host {
	uint64_t tid;
	unsigned long slack_own, slack_set;
	int err;
};

struct hrt_host *hrt__host_new(void)
{
	return calloc(1, sizeof(struct hrt_host));
}

void hrt__host_free(struct hrt_host *h)
{
	free(h);
}

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

static void plan_slack(struct hrt_host *h, unsigned long ns)
{
	if (ns != h->slack_set && hrt__slack_set(ns) == 0)
		h->slack_set = ns;
}

/* The window, 1 if still wide enough after its start is rounded up to
 * res: *delay from now and the slack left.  Only CLOCK_MONOTONIC bases
 * coalesce (hrt.h): a ranged sleep is relative on that clock. */
static int plan_window(struct hrt_base *b, hrt_time_t res, hrt_time_t *delay,
		       hrt_time_t *slack)
{
	hrt_time_t now, soft, hard;
	uint64_t d;

	if (hrt__base_clock(b) != CLOCK_MONOTONIC || hrt_base_get_coalesce(b) != 1 ||
	    hrt_base_wait_window(b, &soft, &hard) != 1 || hrt_base_now(b, &now) || hard <= now)
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
static int plan_off(struct hrt_base *b, struct hrt_host *h)
{
	plan_slack(h, h->slack_own);
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

/* Whether the calling thread may plan: it is the planner, or there is none
 * (-EPERM: another thread plans). */
static int plan_may_claim(const struct hrt_host *h)
{
	uint64_t tid = __atomic_load_n(&h->tid, __ATOMIC_ACQUIRE);

	return !tid || tid == hrt__thread_id_get() ? 0 : -EPERM;
}

/* The calling thread is the base's planner (the first to plan since the
 * last hrt_base_plan_done): 0, or -EPERM (another thread took it). */
static int plan_claim(struct hrt_host *h)
{
	uint64_t me = hrt__thread_id_get(), none = 0;

	if (__atomic_load_n(&h->tid, __ATOMIC_ACQUIRE) == me)
		return 0;
	if (!__atomic_compare_exchange_n(&h->tid, &none, me, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return -EPERM;
	h->slack_own = h->slack_set = hrt__slack_own();
	return 0;
}

/* The calling thread planned for the base: 0, or -EPERM. */
static int plan_mine(const struct hrt_host *h)
{
	return __atomic_load_n(&h->tid, __ATOMIC_ACQUIRE) == hrt__thread_id_get() ? 0 : -EPERM;
}

/*
 * What is due runs first.  The hold comes before the window is read (a
 * start after it arms the timerfd), but a timerfd not held is held only
 * for a wide window: no arm and disarm in turn while the timerfd path runs.
 */
static int plan(struct hrt_base *b, struct hrt_host *h, hrt_time_t res, hrt_time_t *delay)
{
	hrt_time_t d, slack;
	int who, err, wide;

	/* hrt_base_loop's device: its timerfd is not ours to read or hold. */
	if ((who = hrt__wake_who(b)) == HRT_WAKE_LOOP)
		return -EBUSY;
	if ((err = hrt_base_fd(b)) < 0 || (err = plan_pass(b)))
		return err;
	*delay = HRT_TIME_MAX;
	wide = who == HRT_WAKE_HOLD || plan_window(b, res, &d, &slack);
	if (wide) {
		if ((err = hrt_base_hold_fd(b, 1)) < 0)
			return err;
		wide = plan_window(b, res, &d, &slack);
	}
	if (!wide)
		return (err = plan_off(b, h)) < 0 ? err : 0;
	plan_slack(h, (unsigned long)slack);
	*delay = d;
	return 1;
}

/* The entry checks in hrt.h's order, then the kind of base: nothing is
 * made (the timerfd) for a call that is refused. */
static int plan_guard(struct hrt_base *b, int bad)
{
	int err;

	if (bad || !b)
		return -EINVAL;
	if ((err = hrt__base_guard_fd(b)))
		return err;
	return hrt__base_is_virtual(b) ? -EOPNOTSUPP : 0;
}

/* The planner's errors stick until hrt_base_plan_done, which reports the
 * first: a host that only wakes up for hrt need not keep them. */
HRT_EXTERN int hrt_base_plan_sleep(struct hrt_base *b, hrt_time_t res, hrt_time_t *delay)
{
	struct hrt_host *h;
	int r;

	if ((r = plan_guard(b, res <= 0 || !delay)))
		return r;
	h = hrt__base_host(b);
	if ((r = plan_may_claim(h)))
		return r;
	/* Refusals (hrt.h's order): nothing made, the caller not the planner. */
	if (hrt__wake_who(b) == HRT_WAKE_LOOP || hrt__base_in_own_pass(b))
		return -EBUSY;
	if ((r = plan_claim(h)))
		return r;
	r = plan(b, h, res, delay);
	if (r < 0 && !h->err)
		h->err = r;
	return r;
}

HRT_EXTERN int hrt_base_plan_wake(struct hrt_base *b)
{
	struct hrt_host *h;
	int r;

	if ((r = plan_guard(b, 0)))
		return r;
	h = hrt__base_host(b);
	if ((r = plan_mine(h)))
		return r;
	plan_slack(h, h->slack_own);
	return 0;
}

HRT_EXTERN int hrt_base_plan_done(struct hrt_base *b)
{
	struct hrt_host *h;
	int err, first;

	if ((err = plan_guard(b, 0)))
		return err;
	h = hrt__base_host(b);
	if ((err = plan_mine(h)))
		return err;
	err = plan_off(b, h);
	first = h->err;
	h->err = 0;
	__atomic_store_n(&h->tid, 0, __ATOMIC_RELEASE);
	return first ? first : err;
}
