/* SPDX-License-Identifier: MIT */
/*
 * uv_cross_thread.c - a start from another thread wakes a libuv host in
 * time, with no uv_async_t: the host (uv_coalesce_run, uv_coalesce.h)
 * sleeps on a plan made for a far window; another thread starts a timer
 * due long before it.  The held timerfd (hrt_base_hold_fd) is armed at the
 * new timer's hard expiry, which ends the host's sleep.  Self-checking:
 * exits 0 only if the new timer ran between its soft and (a scheduling
 * margin past) its hard expiry, and the far one had not run.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <uv.h>

#include "uv_coalesce.h"

#define MS 1000000LL
#define MARGIN (100 * MS)       /* past hard: a stuck wake-up, not jitter */

static struct uv_coalesce co;
static struct hrt_base *base;
static struct hrt_timer far, near;
static hrt_time_t near_soft, near_hard, near_ran;

static enum hrt_restart on_near(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	near_ran = now;
	uv_coalesce_stop(&co);          /* the host's thread */
	return HRT_NORESTART;
}

static enum hrt_restart on_far(struct hrt_timer *t, hrt_time_t now)
{
	(void)t, (void)now;
	uv_coalesce_stop(&co);
	return HRT_NORESTART;
}

/* Another thread: once the host sleeps, a timer due in 20-30 ms. */
static void *starter(void *arg)
{
	struct timespec nap = { 0, 50 * MS };

	(void)arg;
	nanosleep(&nap, NULL);
	hrt_base_now(base, &near_soft);
	near_soft += 20 * MS;
	near_hard = near_soft + 10 * MS;
	hrt_timer_start_range(&near, base, near_soft, 10 * MS, HRT_MODE_ABS);
	return NULL;
}

int main(void)
{
	uv_loop_t loop;
	pthread_t th;
	int err, ok;

	if ((err = hrt_base_new(&base, CLOCK_MONOTONIC, 0)) < 0 ||
	    (err = uv_loop_init(&loop)) < 0) {
		fprintf(stderr, "uv_cross_thread: FAIL: setup: %d\n", err);
		return 1;
	}
	hrt_timer_init(&far, on_far);
	hrt_timer_init(&near, on_near);
	hrt_timer_start_range(&far, base, 5000 * MS, 1000 * MS, HRT_MODE_REL);
	if (pthread_create(&th, NULL, starter, NULL)) {
		fprintf(stderr, "uv_cross_thread: FAIL: pthread_create\n");
		return 1;
	}
	err = uv_coalesce_run(&co, &loop, base);
	pthread_join(th, NULL);
	ok = !err && near_ran >= near_soft && near_ran <= near_hard + MARGIN &&
	     hrt_timer_is_queued(&far);
	printf("uv_cross_thread: run %d; the other thread's timer ran %.3f ms after its hard "
	       "expiry (window %.0f ms)\nuv_cross_thread: %s\n", err,
	       (double)(near_ran - near_hard) / 1e6, (double)(near_hard - near_soft) / 1e6,
	       ok ? "ok" : "FAIL");
	hrt_timer_cancel(&far);
	hrt_base_free(base);
	uv_loop_close(&loop);
	return ok ? 0 : 1;
}
