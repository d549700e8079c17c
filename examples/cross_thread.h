/* SPDX-License-Identifier: MIT */
/*
 * cross_thread.h - the workload the two cross-thread examples share
 * (uv_cross_thread.c, ev_cross_thread.c), so that each shows only its
 * loop: the host sleeps on a plan made for a far window (a timer 5 s
 * ahead); 50 ms in, another thread starts a timer due 20-30 ms later.  The
 * held timerfd (hrt_base_hold_fd) is armed at the new timer's hard expiry,
 * which ends the host's sleep: no uv_async_t, no ev_async.  xt_finish()
 * is the self-check: 0 only if the new timer ran between its soft and (a
 * scheduling margin past) its hard expiry, and the far one had not run.
 */
#ifndef HRT_CROSS_THREAD_H
#define HRT_CROSS_THREAD_H

#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "hrt.h"

#define XT_MS 1000000LL
#define XT_MARGIN (100 * XT_MS)         /* past hard: a stuck wake-up, not jitter */

static struct {
	const char *name;
	struct hrt_base *base;
	struct hrt_timer far, near;
	hrt_time_t near_soft, near_hard, near_ran;
	void (*stop)(void);             /* the host loop's stop */
	pthread_t starter;
} xt;

static enum hrt_restart xt_fired(struct hrt_timer *t, hrt_time_t now)
{
	if (t == &xt.near)
		xt.near_ran = now;
	xt.stop();                      /* on the host's thread */
	return HRT_NORESTART;
}

/* The other thread: once the host sleeps, a timer due in 20-30 ms. */
static void *xt_starter(void *arg)
{
	struct timespec nap = { 0, 50 * XT_MS };

	(void)arg;
	nanosleep(&nap, NULL);
	hrt_base_now(xt.base, &xt.near_soft);
	xt.near_soft += 20 * XT_MS;
	xt.near_hard = xt.near_soft + 10 * XT_MS;
	hrt_timer_start_range(&xt.near, xt.base, xt.near_soft, 10 * XT_MS, HRT_MODE_ABS);
	return NULL;
}

/* The base, the far timer and the other thread: the base, or NULL. */
static inline struct hrt_base *xt_start(const char *name, void (*stop)(void))
{
	xt.name = name;
	xt.stop = stop;
	if (hrt_base_new(&xt.base, CLOCK_MONOTONIC, 0) < 0 || hrt_base_fd(xt.base) < 0)
		return NULL;
	hrt_timer_init(&xt.far, xt_fired);
	hrt_timer_init(&xt.near, xt_fired);
	hrt_timer_start_range(&xt.far, xt.base, 5000 * XT_MS, 1000 * XT_MS, HRT_MODE_REL);
	if (pthread_create(&xt.starter, NULL, xt_starter, NULL))
		return NULL;
	return xt.base;
}

/* After the host loop returned err: the self-check; main's exit status. */
static inline int xt_finish(int err)
{
	int ok;

	pthread_join(xt.starter, NULL);
	ok = !err && xt.near_ran >= xt.near_soft && xt.near_ran <= xt.near_hard + XT_MARGIN &&
	     hrt_timer_is_queued(&xt.far);
	printf("%s: loop %d; the other thread's timer ran %.3f ms after its hard expiry "
	       "(window %.0f ms)\n%s: %s\n", xt.name, err,
	       (double)(xt.near_ran - xt.near_hard) / 1e6,
	       (double)(xt.near_hard - xt.near_soft) / 1e6, xt.name, ok ? "ok" : "FAIL");
	hrt_timer_cancel(&xt.far);
	hrt_base_free(xt.base);
	return ok ? 0 : 1;
}

#endif /* HRT_CROSS_THREAD_H */
