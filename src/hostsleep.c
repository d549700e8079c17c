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
 * A client of the base, as the loop is: it calls base.h only (one entry
 * guard per public call, two critical sections per plan: the pass, the
 * plan), and owns its state (struct hrt_host), which lifecycle.c makes
 * with the base and the base only keeps.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "base.h"
#include "baselock.h"
#include "hostsleep.h"

/* The planner: the thread that plans (0: none, taken by compare-and-swap),
 * its timer slack before it planned and now, its nice's slack divisor
 * (read once, when it claims), when its last ranged sleep was planned to
 * end (HRT_TIME_MAX: none) and whether that sleep ended (plan_wake), and
 * the first error a plan returned (hrt_base_plan_done reports it). */
struct hrt_host {
	uint64_t tid;
	unsigned long slack_own, slack_set;
	int div;
	hrt_time_t wake_at;
	int woke;
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

static void plan_slack(struct hrt_host *h, unsigned long ns)
{
	if (ns != h->slack_set && hrt__slack_set(ns) == 0)
		h->slack_set = ns;
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
	h->div = hrt__slack_div();
	h->wake_at = HRT_TIME_MAX;
	return 0;
}

/* The calling thread planned for the base: 0, or -EPERM. */
static int plan_mine(const struct hrt_host *h)
{
	return __atomic_load_n(&h->tid, __ATOMIC_ACQUIRE) == hrt__thread_id_get() ? 0 : -EPERM;
}

/*
 * What is due runs first, as a pass at idle (the host ran its callbacks
 * for this wake-up) bounded by the default budget (host I/O may arrive
 * meanwhile: what is left runs at the next plan); then the plan.  Two
 * critical sections (base.h): hrt__base_pass_due, hrt__base_hold_plan.
 * Busy: the host woke before the planned sleep ended (its own I/O), so the
 * window's slack went unused; the next sleep runs to the window's end with
 * the thread's own slack, and no prctl.
 */
static int plan(struct hrt_base *b, struct hrt_host *h, hrt_time_t res, hrt_time_t *delay)
{
	hrt_time_t d, slack, now = hrt__clock_now(hrt__base_clock(b));
	/* The sleep ended (plan_wake) a quarter of res or more before the
	 * plan's end: not by the host's timer. */
	int busy = h->woke && h->wake_at != HRT_TIME_MAX && now < h->wake_at - res / 4;
	ssize_t n;
	int wide;

	h->wake_at = HRT_TIME_MAX;
	h->woke = 0;
	*delay = HRT_TIME_MAX;
	if ((n = hrt__base_pass_due(b, HRT_PASS_IDLE | HRT_PASS_YIELD)) < 0)
		return (int)n;
	wide = hrt__base_hold_plan(b, res, h->div, (hrt_time_t)h->slack_own, busy, &d, &slack);
	if (wide <= 0) {
		plan_slack(h, h->slack_own);    /* the timerfd path: its own slack */
		return wide;
	}
	plan_slack(h, (unsigned long)slack);
	now = hrt__clock_now(hrt__base_clock(b));
	h->wake_at = now + d;
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
	int r, was;

	if ((r = plan_guard(b, res <= 0 || !delay)))
		return r;
	h = hrt__base_host(b);
	if ((r = plan_may_claim(h)))
		return r;
	was = plan_mine(h) == 0;
	if ((r = plan_claim(h)))
		return r;
	r = plan(b, h, res, delay);
	/* Refusals (hrt.h's order): nothing made or kept, the caller not
	 * made the planner. */
	if (r == -EBUSY) {
		if (!was)
			__atomic_store_n(&h->tid, 0, __ATOMIC_RELEASE);
		return r;
	}
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
	h->woke = 1;
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
	plan_slack(h, h->slack_own);    /* back to the timerfd path: armed */
	err = hrt__wake_hold(b, 0);
	first = h->err;
	h->err = 0;
	__atomic_store_n(&h->tid, 0, __ATOMIC_RELEASE);
	return first ? first : err;
}
