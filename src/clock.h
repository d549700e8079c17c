/* SPDX-License-Identifier: MIT */
/*
 * clock.h - a base's time (clock.c has the reads and the offset's
 * measure): its clock's now, the monotonic now of a split base's relative
 * set, and each set's offset, which turns the set's keys into the base's
 * clock and the base's now into the set's.  Every set but a split base's
 * relative one has offset 0, so the loops over sets (pass.c, coalesce.c,
 * wakeup.c) treat all sets alike, as the kernel does its clock bases.
 */
#ifndef HRT_CLOCK_H
#define HRT_CLOCK_H

#include "base_priv.h"

/* A clock through b's seam. */
hrt_time_t hrt__base_clock_read(const struct hrt_base *b, clockid_t clock);

/* The base's time: its clock's, or a virtual base's own. */
static inline hrt_time_t base_now(const struct hrt_base *b)
{
	if (__builtin_expect(b->now_slow, 0)) {
		if (base_is_virtual(b))
			return __atomic_load_n(&b->vnow, __ATOMIC_RELAXED);
		return hrt__base_clock_read(b, b->clock);
	}
	return hrt__clock_now(b->clock);
}

/* The clock of the relative set's keys (split bases). */
static inline hrt_time_t base_mono_now(const struct hrt_base *b)
{
	return hrt__base_clock_read(b, CLOCK_MONOTONIC);
}

/* ts's offset: its keys + it = the base's clock.  Only a split base's
 * relative set has one, the wall clock minus the monotonic one as last
 * measured (the two are slewed alike: only a set of the wall clock
 * changes it).  Kept, not re-read, so that the armed instant and
 * next_event agree. */
static inline hrt_time_t set_offset(const struct hrt_tset *ts)
{
	return __atomic_load_n(&ts->off, __ATOMIC_RELAXED);
}

/* The offset as the current pass began: the pass compares its sets with
 * that one throughout, though a -ECANCELED dispatch may measure a new one
 * while a callback runs. */
static inline hrt_time_t set_pass_offset(const struct hrt_tset *ts)
{
	return ts->pass_off;
}

/* clock.c: measure the offset again: after a set the kernel reported
 * (told), any clean reading; else kept if it moved by read noise only. */
void hrt__base_sync_offset(struct hrt_base *b, int told);

/* A key of a set with offset off as an instant of the base's clock: the
 * key itself at offset 0 (a first set's).  HRT_TIME_MAX stays "never";
 * any other key that the offset carries past the latest instant a pass
 * runs at saturates there, as an absolute start's hard expiry is capped
 * (a timer that can run must stay a candidate, its wake-up armed). */
static inline hrt_time_t key_to_base(hrt_time_t v, hrt_time_t off)
{
	hrt_time_t r;

	if (v == HRT_TIME_MAX || off == 0)
		return v;
	if (__builtin_add_overflow(v, off, &r))
		return off > 0 ? HRT_QUEUE_NOW_MAX : INT64_MIN;
	return r > HRT_QUEUE_NOW_MAX ? HRT_QUEUE_NOW_MAX : r;
}

/* The base's instant now as a key of a set with offset off, saturated
 * and capped where soft expiries mean never (a pass's now). */
static inline hrt_time_t base_to_key(hrt_time_t now, hrt_time_t off)
{
	hrt_time_t r;

	if (__builtin_sub_overflow(now, off, &r) || r > HRT_QUEUE_NOW_MAX)
		return off > 0 ? INT64_MIN : HRT_QUEUE_NOW_MAX;
	return r;
}

#endif /* HRT_CLOCK_H */
