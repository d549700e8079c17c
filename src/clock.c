/* SPDX-License-Identifier: MIT */
/*
 * clock.c - a base's clocks: the clock reads (through the tests' seam),
 * the offset of a split base's relative set (clock.h), and the calls that
 * answer the clock and the time or set a virtual base's.  Each public
 * call opens with the entry guard (guard.h).
 */
#include <time.h>

#include "clock.h"
#include "guard.h"

hrt_time_t hrt__clock_now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

hrt_time_t hrt__base_clock_read(const struct hrt_base *b, clockid_t clock)
{
	struct timespec ts;

	if (!b->gettime)
		return hrt__clock_now(clock);
	b->gettime(clock, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Read noise: two clock reads a few hundred ns apart, or preempted. */
#define OFF_NOISE 20000

/* The offset moves only when the wall clock is set.  A set the kernel
 * reported (told), or one it could not report (the timerfd was disarmed),
 * takes any clean reading; otherwise a reading within the noise of the
 * kept one keeps it, so that the armed instant and next_event agree. */
void hrt__base_sync_offset(struct hrt_base *b, int told)
{
	hrt_time_t r1, m, r2, off, kept;

	for (int i = 0; i < 3; i++) {
		r1 = base_now(b);
		m = base_mono_now(b);
		r2 = base_now(b);
		if (r2 - r1 < OFF_NOISE)
			break;
	}
	off = r1 + (r2 - r1) / 2 - m;
	kept = set_offset(b->rel);
	if ((told && r2 - r1 < OFF_NOISE) || off - kept >= OFF_NOISE || kept - off >= OFF_NOISE)
		__atomic_store_n(&b->rel->off, off, __ATOMIC_RELAXED);
}

void hrt__base_set_gettime(struct hrt_base *b, int (*gettime)(clockid_t, struct timespec *))
{
	base_lock(b);
	b->gettime = gettime;
	b->now_slow = b->virt || b->split || gettime;
	if (b->split)
		hrt__base_sync_offset(b, 1);
	base_unlock(b);
}

clockid_t hrt__base_clock(const struct hrt_base *b)
{
	return b->clock;
}

HRT_EXTERN int hrt_base_get_clock(const struct hrt_base *b, clockid_t *clock)
{
	int err = base_guard(b, G_QUERY, !clock);

	if (!err)
		*clock = b->clock;
	return err;
}

HRT_EXTERN int hrt_base_now(const struct hrt_base *b, hrt_time_t *now)
{
	int err = base_guard(b, G_QUERY, !now);

	if (!err)
		*now = base_now(b);
	return err;
}

HRT_EXTERN int hrt_base_set_time(struct hrt_base *b, hrt_time_t now)
{
	int ret = base_guard(b, G_CHANGE, 0);

	if (ret)
		return ret;
	if (!base_is_virtual(b))
		return -EOPNOTSUPP;
	base_lock(b);
	if (now < b->vnow)
		ret = -EINVAL;
	else
		__atomic_store_n(&b->vnow, now, __ATOMIC_RELAXED);
	base_unlock(b);
	return ret;
}
