/* SPDX-License-Identifier: MIT */
/*
 * base.h - what the base layer offers the layers above it (internal): the
 * loop (loop.c) and the tests.  struct hrt_base and every field of it are
 * the base's alone (base_priv.h); the device below is device.h, and the
 * functions here that install one are the base's side of it.  Nothing here
 * names the loop's functions: the base never calls the loop, except as
 * its device.
 */
#ifndef HRT_BASE_H
#define HRT_BASE_H

#include <sys/types.h>
#include "device.h"

struct hrt_loop;

/* wakeup.c.  The entry guard (guard.h) of a call that uses the
 * device: -EINVAL for NULL, -EPERM from another thread on an unlocked
 * base, -EDEADLK from a hrt_base_walk_tree callback (the lock is held),
 * -ECHILD in a child forked after the base was made (the fds are the
 * parent's); else 0. */
int hrt__base_guard_fd(const struct hrt_base *b);
/* pass.c.  The guard's last step for hrt_base_loop: this thread runs a
 * pass of b (it is inside one of b's callbacks: -EBUSY). */
int hrt__base_in_own_pass(struct hrt_base *b);
/* wakeup.c.  Installs d as b's device (NULL: none) and returns the one it
 * had, which the caller now owns (loop.c puts it back; a test closes it).
 * `holds` says what d is armed for: HRT_DEV_NEW (disarmed, as a new
 * timerfd), HRT_DEV_SAME (what the old device was: d is stacked on it), or
 * HRT_DEV_UNKNOWN (the base re-arms it at once).  Safe beside other
 * threads' calls: a dispatch that already read the old device acks it, so
 * a replaced device must stay valid until the caller closes it. */
#define HRT_DEV_NEW     0
#define HRT_DEV_SAME    1
#define HRT_DEV_UNKNOWN 2
struct hrt_device *hrt__base_set_device(struct hrt_base *b, struct hrt_device *d, int holds);
/* hrt__base_set_device only if b's device is still `old` (tested and
 * installed under the base lock): 0, or -EBUSY with nothing changed.  The
 * loop stacks itself so, and a hold (hrt_base_hold_fd) landing between
 * its look at the device and its install makes it refuse, not stack on
 * the hold. */
int hrt__base_replace_device(struct hrt_base *b, struct hrt_device *old, struct hrt_device *d,
			     int holds);
/* b's device, NULL if none yet. */
struct hrt_device *hrt__base_device(struct hrt_base *b);
/* The base's loop state (loop.h): made and freed with the base
 * (lifecycle.c), only kept by it. */
struct hrt_loop *hrt__base_loop(struct hrt_base *b);
/* pass.c.  The device's handler: one wake-up, `event` an ack() result (device.h).
 * In one critical section: counts it, reads the clock, runs the pass if
 * anything is due (idle as for hrt_base_run), re-arms.  The callbacks
 * run, -EBUSY if a pass of b runs already, or -errno of an arm that keeps
 * failing. */
ssize_t hrt__base_wakeup(struct hrt_base *b, int event, int idle);
/* hrt_base_dispatch: acks the device, then hrt__base_wakeup; a failed ack
 * is returned and also lands in *read_err (arm errors do not). */
ssize_t hrt__base_dispatch(struct hrt_base *b, int idle, int *read_err);
/* wakeup.c.  Retries an arm that failed: 0 once the device is armed (or a pass that
 * runs will arm it at its end), else the arm's -errno. */
int hrt__base_rearm(struct hrt_base *b);
/* coalesce.c.  The coalesced sleep's window (loop.c header): 0 if nothing is queued;
 * else 1 with the earliest hard expiry *hard, the soft expiry *owner of
 * the timer that has it, and *soft, the earliest soft expiry found (<=
 * *owner, some queued timer's; a bounded search), or *owner if the base's
 * greedy policy is off (the loop's passes are idle ones: IDLE walks). */
int hrt__base_window(struct hrt_base *b, hrt_time_t *owner, hrt_time_t *soft,
		     hrt_time_t *hard);

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
/* hrt_base_loop_host's deadline (coalesce.c): cuts a planned sleep (the
 * ranged one's *timeout >= 0 and *slack, or the timerfd's, < 0) at
 * host_end; 1 if the sleep now ends by it.  The timerfd path's epoll_wait
 * ms likewise, *host_cut as that 1. */
int hrt__host_cut(hrt_time_t now, hrt_time_t host_end, hrt_time_t own, hrt_time_t *timeout,
		  hrt_time_t *slack);
int hrt__host_ms(int ms, hrt_time_t now, hrt_time_t host_end, int *host_cut);

#endif /* HRT_BASE_H */
