/* SPDX-License-Identifier: MIT */
/*
 * wakeups.h - the one-shot wake-up workload: N range timers with
 * overlapping ranges (soft expiries t0 + WK_LEAD + [0, WK_SPREAD), slack
 * [0, WK_MAX_SLACK], from a seed) run through hrt_base_loop on
 * CLOCK_MONOTONIC, and the number of passes the virtual-clock engine needs
 * for the same set.  tests/test_wakeups.c asserts the bound between the
 * two; bench/wakeups.c measures them.
 */
#ifndef HRT_TEST_WAKEUPS_H
#define HRT_TEST_WAKEUPS_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "hrt.h"
#include "hrt_values.h"

#define WK_MS 1000000LL
#define WK_LEAD (30 * WK_MS)            /* t0 to the earliest soft expiry: time to start them */
#define WK_SPREAD (400 * WK_MS)         /* soft expiries spread over this */
#define WK_MAX_SLACK (20 * WK_MS)

struct wk_set;

struct wk_timer {
	struct hrt_timer t;             /* first member: the callbacks cast back */
	struct wk_set *set;
	hrt_time_t soft, hard;          /* as started */
	hrt_time_t now_arg;             /* the `now` the pass gave the callback */
	hrt_time_t fired_at;            /* clock_gettime inside the callback */
	int fired;
};

struct wk_set {
	size_t n;
	hrt_time_t *soft_off, *slack;   /* soft expiry relative to t0; slack */
	struct wk_timer *timers;
	size_t nfired;                  /* callbacks of the current real run */
	struct hrt_base *base;          /* of the current real run */
};

static inline hrt_time_t wk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t wk_rng;

static inline uint64_t wk_rnd(void)     /* xorshift64* */
{
	wk_rng ^= wk_rng >> 12;
	wk_rng ^= wk_rng << 25;
	wk_rng ^= wk_rng >> 27;
	return wk_rng * 0x2545f4914f6cdd1dull;
}

/* Allocates the set and draws it from `seed` (0 counts as 1); 0 or -ENOMEM. */
static inline int wk_set_init(struct wk_set *s, size_t n, uint64_t seed)
{
	s->n = n;
	s->nfired = 0;
	s->base = NULL;
	s->soft_off = calloc(n, sizeof(*s->soft_off));
	s->slack = calloc(n, sizeof(*s->slack));
	s->timers = calloc(n, sizeof(*s->timers));
	if (!s->soft_off || !s->slack || !s->timers)
		return -ENOMEM;
	wk_rng = seed ? seed : 1;
	for (size_t i = 0; i < n; i++) {
		s->soft_off[i] = WK_LEAD + (hrt_time_t)(wk_rnd() % (uint64_t)WK_SPREAD);
		s->slack[i] = (hrt_time_t)(wk_rnd() % (uint64_t)(WK_MAX_SLACK + 1));
	}
	return 0;
}

static inline void wk_set_free(struct wk_set *s)
{
	free(s->soft_off);
	free(s->slack);
	free(s->timers);
}

static inline enum hrt_restart wk_nop(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	return HRT_NORESTART;
}

/* Drives a virtual base the way hrt_base_loop drives a real one: a pass at
 * each next event, idle = 1, until it is empty.  Returns the callbacks run. */
static inline size_t wk_drive_virtual(struct hrt_base *vb)
{
	size_t ran = 0;

	while (hrt_base_count(vb) > 0)
		ran += hrt_base_run(vb, tv_next(vb), 1);
	return ran;
}

/* Passes the virtual engine needs for the set (offsets taken as absolute
 * times) under `policy`; *ran: the callbacks it ran, s->n unless a set-up
 * call failed. */
static inline uint64_t wk_virtual_passes(const struct wk_set *s, enum hrt_greedy policy,
					 size_t *ran)
{
	struct hrt_timer *vt = calloc(s->n, sizeof(*vt));
	struct hrt_base *vb = tv_virtual(0);
	struct hrt_stats st = { 0 };

	*ran = 0;
	if (vt && vb && hrt_base_set_greedy(vb, policy) == 0) {
		for (size_t i = 0; i < s->n; i++) {
			hrt_timer_init(&vt[i], wk_nop);
			hrt_timer_start_range(&vt[i], vb, s->soft_off[i], s->slack[i], HRT_MODE_ABS);
		}
		*ran = wk_drive_virtual(vb);
		hrt_base_get_stats(vb, &st, sizeof(st));
	}
	hrt_base_free(vb);
	free(vt);
	return st.passes;
}

/* The last timer's callback stops the loop. */
static inline enum hrt_restart wk_fire(struct hrt_timer *t, hrt_time_t now)
{
	struct wk_timer *w = (struct wk_timer *)t;

	w->fired_at = wk_now();
	w->now_arg = now;
	w->fired++;
	if (++w->set->nfired == w->set->n)
		hrt_base_stop(w->set->base);
	return HRT_NORESTART;
}

/* Starts the set on the real base b at t0 + offsets; 0 or the first error. */
static inline int wk_start(struct wk_set *s, struct hrt_base *b, hrt_time_t t0)
{
	int err = 0;

	s->base = b;
	s->nfired = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct wk_timer *w = &s->timers[i];
		int e;

		hrt_timer_init(&w->t, wk_fire);
		w->set = s;
		w->soft = t0 + s->soft_off[i];
		w->hard = w->soft + s->slack[i];
		w->now_arg = w->fired_at = 0;
		w->fired = 0;
		e = hrt_timer_start_range(&w->t, b, w->soft, s->slack[i], HRT_MODE_ABS);
		if (e && !err)
			err = e;
	}
	return err;
}

struct wk_watchdog {
	struct hrt_base *base;
	hrt_time_t deadline;
	int done;       /* atomic: the loop returned */
	int fired;      /* atomic: the watchdog had to stop it */
};

static inline void *wk_watchdog_main(void *arg)
{
	struct wk_watchdog *w = arg;
	struct timespec nap = { 0, 5 * WK_MS };

	while (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
		if (wk_now() >= w->deadline) {
			__atomic_store_n(&w->fired, 1, __ATOMIC_RELEASE);
			hrt_base_stop(w->base);
			break;
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* hrt_base_loop(b), with a watchdog thread that stops it at `deadline`
 * (CLOCK_MONOTONIC) so that a bug fails the caller instead of hanging it.
 * Returns what the loop returned (-EAGAIN: no thread for the watchdog);
 * *timed_out: the watchdog had to stop it. */
static inline int wk_loop(struct hrt_base *b, hrt_time_t deadline, int *timed_out)
{
	struct wk_watchdog wd = { b, deadline, 0, 0 };
	pthread_t th;
	int rc;

	*timed_out = 0;
	if (pthread_create(&th, NULL, wk_watchdog_main, &wd))
		return -EAGAIN;
	rc = hrt_base_loop(b);
	__atomic_store_n(&wd.done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	*timed_out = __atomic_load_n(&wd.fired, __ATOMIC_ACQUIRE);
	return rc;
}

#endif
