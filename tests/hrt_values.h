/* SPDX-License-Identifier: MIT */
/*
 * hrt_values.h - the tests' shorthands for hrt.h's out-parameter queries:
 * each returns the value itself, or what a failed query leaves (NULL for
 * a base that could not be made, 0 for a time, HRT_TIME_MAX for "no next
 * event"), so that an assertion reads as one expression.  The tests that
 * check the calls' own results (test_entry_guard.c, test_rules.c) call
 * hrt.h directly.
 */
#ifndef HRT_TEST_VALUES_H
#define HRT_TEST_VALUES_H

#include "hrt.h"

/* A new base, or NULL. */
static inline struct hrt_base *tv_new(clockid_t clock, unsigned flags)
{
	struct hrt_base *b = NULL;

	return hrt_base_new(&b, clock, flags) == 0 ? b : NULL;
}

/* A virtual base (its time stands for CLOCK_MONOTONIC), or NULL. */
static inline struct hrt_base *tv_virtual(unsigned flags)
{
	return tv_new(CLOCK_MONOTONIC, HRT_BASE_VIRTUAL | flags);
}

static inline hrt_time_t tv_now(const struct hrt_base *b)
{
	hrt_time_t t = 0;

	hrt_base_now(b, &t);
	return t;
}

/* The earliest hard expiry queued; HRT_TIME_MAX if none. */
static inline hrt_time_t tv_next(const struct hrt_base *b)
{
	hrt_time_t t = HRT_TIME_MAX;

	hrt_base_next_event(b, &t);
	return t;
}

static inline hrt_time_t tv_soft(const struct hrt_timer *t)
{
	hrt_time_t v = 0;

	hrt_timer_get_soft(t, &v);
	return v;
}

static inline hrt_time_t tv_hard(const struct hrt_timer *t)
{
	hrt_time_t v = 0;

	hrt_timer_get_hard(t, &v);
	return v;
}

/* The base t was last started on; NULL if never. */
static inline struct hrt_base *tv_base(const struct hrt_timer *t)
{
	struct hrt_base *b = NULL;

	hrt_timer_get_base(t, &b);
	return b;
}

static inline clockid_t tv_clock(const struct hrt_base *b)
{
	clockid_t c = (clockid_t)-1;

	hrt_base_get_clock(b, &c);
	return c;
}

#endif /* HRT_TEST_VALUES_H */
