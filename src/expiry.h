/* SPDX-License-Identifier: MIT */
/*
 * expiry.h - a timer's expiries as arithmetic (internal): the saturating
 * sum a relative start takes, the cap that keeps a runnable timer's hard
 * expiry reachable, and the step to the next period that
 * hrt_timer_forward (base.c) and a repeating timer's restart (pass.c)
 * share.  Pure functions of their arguments: no base, no lock.
 */
#ifndef HRT_EXPIRY_H
#define HRT_EXPIRY_H

#include <stdint.h>
#include "queue.h"

static inline hrt_time_t sat_add(hrt_time_t a, hrt_time_t b)
{
	hrt_time_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? HRT_TIME_MAX : INT64_MIN;
	return r;
}

/* A timer that can run (soft <= the pass cap) gets a hard expiry a pass
 * can reach, so its wake-up is armed: a saturated soft + slack means "as
 * late as possible", not "never". */
static inline hrt_time_t cap_hard(hrt_time_t soft, hrt_time_t hard)
{
	if (__builtin_expect(hard > HRT_QUEUE_NOW_MAX, 0) && soft <= HRT_QUEUE_NOW_MAX)
		return HRT_QUEUE_NOW_MAX;
	return hard;
}

/* v + n * interval, saturated at HRT_TIME_MAX; interval > 0.  Unsigned,
 * so a negative v cannot overflow the subtraction. */
static inline hrt_time_t add_intervals(hrt_time_t v, uint64_t n, hrt_time_t interval)
{
	uint64_t room = (uint64_t)HRT_TIME_MAX - (uint64_t)v;  /* exact: v <= MAX */

	if (n > room / (uint64_t)interval)
		return HRT_TIME_MAX;
	return (hrt_time_t)((uint64_t)v + n * (uint64_t)interval);
}

/* *soft..*hard moved on by whole intervals (> 0) past the window they ran
 * in: until soft > now - not only hard, a range timer runs before its
 * hard expiry and would be due again at once.  The number of intervals
 * (0 if soft > now already; saturated). */
static inline uint64_t expiry_advance(hrt_time_t *soft, hrt_time_t *hard, hrt_time_t now,
				      hrt_time_t interval)
{
	uint64_t q, n;

	if (*soft > now)
		return 0;
	q = ((uint64_t)now - (uint64_t)*soft) / (uint64_t)interval;     /* exact: now >= soft */
	n = q == UINT64_MAX ? q : q + 1;
	*soft = add_intervals(*soft, n, interval);
	*hard = cap_hard(*soft, add_intervals(*hard, n, interval));
	return n;
}

#endif /* HRT_EXPIRY_H */
