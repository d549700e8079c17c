/* SPDX-License-Identifier: MIT */
/*
 * base.h - what the base layer offers the layers above it (internal): the
 * loop (loop.c), the host plan (hostsleep.c) and the tests.  struct
 * hrt_base and every field of it are the base's alone (base_priv.h); the
 * device below is device.h.  Nothing here names the loop's functions: the
 * base never calls the loop, except through the hook the loop hands over
 * (hrt__wake_take).
 */
#ifndef HRT_BASE_H
#define HRT_BASE_H

#include <sys/types.h>
#include "device.h"

struct hrt_loop;
struct hrt_host;

/* introspect.c, for the clients.  The entry guard (guard.h) of a call that uses the
 * device: -EINVAL for NULL, -EPERM from another thread on an unlocked
 * base, -EDEADLK from a hrt_base_walk_tree callback (the lock is held),
 * -ECHILD in a child forked after the base was made (the fds are the
 * parent's); else 0. */
int hrt__base_guard_fd(const struct hrt_base *b);
/* pass.c.  The guard's last step for hrt_base_loop: this thread runs a
 * pass of b (it is inside one of b's callbacks: -EBUSY). */
int hrt__base_in_own_pass(struct hrt_base *b);

/*
 * wakeup.c.  The wake-up has one device (device.h: the timerfd that
 * hrt_base_fd makes) and at most one sleeper that takes it over: by
 * default the base arms it itself for whoever polls its fd; hrt_base_loop
 * (HRT_WAKE_LOOP) and a host holding the fd (HRT_WAKE_HOLD, wakeup.c)
 * take it while they run.  Two modes, and one hook:
 *   ARM   (note = 0) the base keeps the device armed at or before the
 *         earliest hard expiry, lazily: only a start that needs an
 *         earlier wake-up arms it; a failed arm calls kick().
 *   NOTE  (note = 1) the sleeper plans its own sleeps (hrt__wake_sleep,
 *         which may also arm the device for it); a start that needs a
 *         wake-up before the sleeper's `by` calls kick(ctx, when), under
 *         the base lock, which returns the instant the sleeper now wakes
 *         by (the loop pokes its eventfd: at once; the hold arms the
 *         timerfd: `when`).
 * Go's runtime has the same shape: one netpoller, and wakeNetPoller(when)
 * when a timer lands before the poller's sleep ends.
 */
#define HRT_WAKE_LOOP 1
#define HRT_WAKE_HOLD 2
typedef hrt_time_t (*hrt__kick_fn)(void *ctx, hrt_time_t when);
/* The device for `who` in mode `note` with hook kick(ctx) (NULL: none):
 * 0, or -EBUSY if another sleeper has it.  In NOTE mode the sleeper is
 * taken as awake until its first hrt__wake_sleep. */
int hrt__wake_take(struct hrt_base *b, int who, int note, hrt__kick_fn kick, void *ctx);
/* The device back to the base (ARM, no hook), armed at the earliest hard
 * expiry: 0, or the arm's -errno. */
int hrt__wake_give(struct hrt_base *b, int who);
/* NOTE mode: the sleeper wakes by `by` (HRT_WAKE_AWAKE: it is awake; no
 * kick until it plans again), and the device is to hold `arm` (an
 * instant, HRT_TIME_MAX to disarm, HRT_WAKE_KEEP to leave it): 0, or the
 * arm's -errno. */
#define HRT_WAKE_AWAKE INT64_MIN
#define HRT_WAKE_KEEP  INT64_MIN
int hrt__wake_sleep(struct hrt_base *b, hrt_time_t by, hrt_time_t arm);
/* The device's ack (device.h), read without the lock: -EOPNOTSUPP for a
 * virtual base, -EINVAL before hrt_base_fd (the one device check of
 * dispatch). */
int hrt__wake_ack(struct hrt_base *b);
/* The device, NULL if none yet (the tests' seams reach the timerfd so). */
struct hrt_device *hrt__base_device(struct hrt_base *b);
/* hrt_base_fd and hrt_base_hold_fd behind the guard (the clients ran
 * theirs): the timerfd made, its fd or -errno; held or given back, 0 or
 * -errno. */
int hrt__wake_fd(struct hrt_base *b);
int hrt__wake_hold(struct hrt_base *b, int hold);
/* Retries an arm that failed: 0 once the device is armed (or a pass that
 * runs will arm it at its end), else the arm's -errno. */
int hrt__base_rearm(struct hrt_base *b);

/* introspect.c.  The states of the base's clients (loop.h, hostsleep.h):
 * made and freed with the base (lifecycle.c), only kept by it.  And its
 * kind: a virtual base has no device. */
struct hrt_loop *hrt__base_loop(struct hrt_base *b);
struct hrt_host *hrt__base_host(struct hrt_base *b);
int hrt__base_is_virtual(const struct hrt_base *b);
/*
 * pass.c.  The kinds of pass a loop asks for (hrt.h, "The loops' passes"):
 *   HRT_PASS_IDLE   the thread is idle: greedy policy IDLE walks;
 *   HRT_PASS_HARD   host work waits (its fd was ready): only the hard-due
 *                   timers run, the soft-due ones at the next idle pass;
 *   HRT_PASS_YIELD  host work may arrive meanwhile: once the hard-due
 *                   timers ran, the soft-due ones run for at most
 *                   HRT_PASS_BUDGET_NS (unless the user set a pass limit,
 *                   which then bounds every callback instead); the rest
 *                   stays due and runs after the host's next turn.
 * 0 is hrt_base_run(idle = 0)'s: the leftmost run, no budget.
 */
#define HRT_PASS_IDLE  1
#define HRT_PASS_HARD  2
#define HRT_PASS_YIELD 4
#define HRT_PASS_BUDGET_NS 50000
/* A budget that cut a pass doubles for the next one, up to this; a pass it
 * did not cut resets it: under a backlog the timers catch up (never late
 * by the budget's doing) at the price of a longer burst. */
#define HRT_PASS_BUDGET_MAX_NS 2000000
/* Beside a host, a timer within this of its hard expiry counts as
 * hard-due (runs before the host's I/O, never cut by the budget), so a
 * timer the budget deferred under load is not made late by it. */
#define HRT_PASS_URGENT_NS 2000000
/* The device's handler: one wake-up, `event` an ack() result or
 * HRT_DEV_NOSLEEP / HRT_DEV_SLEPT (device.h).  In one critical section:
 * counts it, reads the clock, runs a pass of kind `how` if anything is
 * due, re-arms.  The callbacks run, -EBUSY if a pass of b runs already,
 * or -errno of an arm that keeps failing. */
ssize_t hrt__base_wakeup(struct hrt_base *b, int event, int how);
/* hrt_base_dispatch: acks the device, then hrt__base_wakeup; a failed ack
 * is returned and also lands in *read_err (arm errors do not). */
ssize_t hrt__base_dispatch(struct hrt_base *b, int how, int *read_err);
/* hrt_base_plan_sleep's pass (hostsleep.c), one critical section: -EBUSY
 * (nothing made) while hrt_base_loop has the device or from a callback of
 * this thread's pass of b; else the timerfd made, read only if it may have
 * fired, and a pass of kind `how` if anything is due or the coalesced
 * window opened.  The callbacks run, or -errno. */
ssize_t hrt__base_pass_due(struct hrt_base *b, int how);
/* coalesce.c.  The coalesced sleep's window (loop.c header): 0 if nothing is queued;
 * else 1 with the earliest hard expiry *hard, the soft expiry *owner of
 * the timer that has it, and *soft, the earliest soft expiry found (<=
 * *owner, some queued timer's; a bounded search), or *owner if the base's
 * greedy policy is off (the loop's passes are idle ones: IDLE walks). */
int hrt__base_window(struct hrt_base *b, hrt_time_t *owner, hrt_time_t *soft,
		     hrt_time_t *hard);
/*
 * hrt_base_loop's coalesced sleep, planned in one critical section: the
 * window read, the clock, the rule (hrt__coalesce_plan with `div`), and the
 * sleeper's bound set (the device armed at the hard expiry when no ranged
 * sleep fits, disarmed otherwise), so a start from another thread either
 * comes before and is in the window, or after and kicks.  `busy`: the last
 * sleep was ended by host I/O before its window: the slack would not have
 * been used, so the sleep runs to the window's end with the thread's own
 * slack `own` (no prctl).  0, or the arm's -errno.
 */
struct hrt__sleep {
	hrt_time_t now;                 /* the clock the plan read */
	hrt_time_t timeout;             /* < 0: the timerfd's epoll_wait; else ns */
	hrt_time_t slack;               /* the thread's slack for it (timeout >= 0) */
	hrt_time_t soft;                /* the window's start (the earliest soft
					 * expiry); HRT_TIME_MAX: nothing queued */
};
int hrt__base_sleep_plan(struct hrt_base *b, int div, hrt_time_t own, int busy,
			 struct hrt__sleep *p);
/*
 * hrt_base_plan_sleep's plan (hostsleep.c), one critical section: the
 * window read once, its start rounded up to `res`, and the timerfd held
 * for it (1: *delay from now, *slack for the thread) or given back, armed
 * (0: the window too narrow, coalescing off, not CLOCK_MONOTONIC, nothing
 * queued); `busy` as for the loop's.  Or the hold's -errno.
 */
int hrt__base_hold_plan(struct hrt_base *b, hrt_time_t res, int div, hrt_time_t own, int busy,
			hrt_time_t *delay, hrt_time_t *slack);

/* settings.c.  Whether the base coalesces (hrt_base_get_coalesce's
 * answer, for a client that ran the guard). */
int hrt__base_coalesce(const struct hrt_base *b);

/* clock.c.  The clock a base reads (for a virtual one, the clock it
 * stands for). */
clockid_t hrt__base_clock(const struct hrt_base *b);
/* The clock's time now, in ns. */
hrt_time_t hrt__clock_now(clockid_t clock);
/* The tests' clock seam: b reads every clock through gettime (NULL: the
 * real clock_gettime).  Only while no other thread uses b. */
struct timespec;
void hrt__base_set_gettime(struct hrt_base *b, int (*gettime)(clockid_t, struct timespec *));
/* The rule (loop.c header): 1 with the instant to sleep until and the
 * thread slack to sleep with, or 0 if no ranged sleep fits (sleep exactly
 * until `hard`).  `div` is the kernel's slack estimate divisor. */
int hrt__coalesce_plan(hrt_time_t now, hrt_time_t soft, hrt_time_t hard, int div,
		       hrt_time_t *until, hrt_time_t *slack);
int hrt__slack_div(void);
/* The calling thread's own timer slack, exact at any size, and setting it
 * (0: nothing done - the kernel would take it as "the default"). */
unsigned long hrt__slack_own(void);
int hrt__slack_set(unsigned long ns);
/* hrt_base_loop_host's deadline (coalesce.c): cuts a planned sleep (the
 * ranged one's *timeout >= 0 and *slack, or the timerfd's, < 0) at
 * host_end; 1 if the sleep now ends by it.  The timerfd path's epoll_wait
 * ms likewise, *host_cut as that 1. */
int hrt__host_cut(hrt_time_t now, hrt_time_t host_end, hrt_time_t own, hrt_time_t *timeout,
		  hrt_time_t *slack);
int hrt__host_ms(int ms, hrt_time_t now, hrt_time_t host_end, int *host_cut);

#endif /* HRT_BASE_H */
