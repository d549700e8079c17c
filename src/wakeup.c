/* SPDX-License-Identifier: MIT */
/*
 * wakeup.c - the base's side of the wake-up device (device.h), on the way
 * down, as hrtimer_reprogram and clockevents_program_event are: keeping
 * the device armed at the earliest hard expiry (hrt__base_wakeup_update,
 * after every change of the sets and at the end of every pass), making
 * the timerfd (hrt_base_fd), installing another device (the loop stacks
 * itself on the timerfd) and the hold (hrt_base_hold_fd).  The way back
 * up, a wake-up that runs the pass, is pass.c's.
 */
#include "clock.h"
#include "guard.h"
#include "timerfd.h"

/* Arming ---------------------------------------------------------------- */

/* Lock held: program the device for `when`.  A failure marks it expired,
 * so the next update (or dispatch, or the loop's retry) tries again. */
static int device_arm(struct hrt_base *b, hrt_time_t when)
{
	int r;

	base_assert_locked(b);
	r = b->dev->ops->arm(b->dev, when);

	if (r < 0) {
		b->arm_err = r;
		b->armed = HRT_ARMED_EXPIRED;
		return r;
	}
	b->armed = when;
	b->arm_err = 0;
	if (r != HRT_DEV_NOTED)
		b->stats.reprograms++;
	if (r == HRT_DEV_JUMPED)
		b->stats.clock_jumps++;
	return r;
}

/* The earliest hard expiry of every set, in the base's clock (each set's
 * keys moved by its offset, as the kernel's __hrtimer_next_event_base). */
hrt_time_t hrt__base_next(struct hrt_base *b)
{
	hrt_time_t when = HRT_TIME_MAX;

	base_assert_locked(b);
	base_for_each_set(b, ts) {
		hrt_time_t v = key_to_base(hrt__tset_next(ts), set_offset(ts));

		if (v < when)
			when = v;
	}
	return when;
}

/* hrt__base_next as the device takes it: armed as 1 ns at the earliest (0
 * disarms a timerfd), so never equal to HRT_ARMED_EXPIRED either. */
static hrt_time_t arm_at(struct hrt_base *b)
{
	hrt_time_t when = hrt__base_next(b);

	return when < 1 ? 1 : when;
}

/*
 * Only a change of the earliest instant costs an arm, so a start that
 * does not become the earliest, or a cancel of a later timer, costs no
 * system call (base.c tests that before it calls here).  One
 * CLOCK_REALTIME timerfd with CANCEL_ON_SET serves a split base: a set of
 * the clock, which moves the relative timers' instants in it, comes back
 * as ECANCELED (or as an arm that saw it: HRT_DEV_JUMPED) and the re-arm
 * takes the new offset.
 */
void hrt__base_wakeup_update(struct hrt_base *b)
{
	hrt_time_t when;

	base_assert_locked(b);
	if (!b->dev || hrt__tset_in_pass(&b->set) || base_is_forked(b))
		return;
	when = arm_at(b);
	if (b->split && b->armed == HRT_TIME_MAX && when != HRT_TIME_MAX) {
		/* Disarmed, the timerfd heard of no set: measure. */
		hrt__base_sync_offset(b, 1);
		when = arm_at(b);
	}
	if (when != b->armed && device_arm(b, when) == HRT_DEV_JUMPED && b->split) {
		/* The set this arm consumed moved the relative timers'
		 * instants: arm again with the new offset. */
		hrt__base_sync_offset(b, 1);
		if ((when = arm_at(b)) != b->armed)
			device_arm(b, when);
	}
}

/* Devices --------------------------------------------------------------- */

int hrt__base_guard_fd(const struct hrt_base *b)
{
	return base_guard(b, G_FD, 0);
}

struct hrt_loop *hrt__base_loop(struct hrt_base *b)
{
	return b->loop;
}

struct hrt_device *hrt__base_device(struct hrt_base *b)
{
	return __atomic_load_n(&b->dev, __ATOMIC_ACQUIRE);
}

/* Lock held: d installed, armed for what `holds` says. */
static void install_device(struct hrt_base *b, struct hrt_device *d, int holds)
{
	base_assert_locked(b);
	__atomic_store_n(&b->dev, d, __ATOMIC_RELEASE);
	if (holds == HRT_DEV_NEW)
		b->armed = HRT_TIME_MAX;
	else if (holds != HRT_DEV_SAME)
		b->armed = HRT_ARMED_EXPIRED;
	hrt__base_wakeup_update(b);
}

struct hrt_device *hrt__base_set_device(struct hrt_base *b, struct hrt_device *d, int holds)
{
	struct hrt_device *old;

	base_lock(b);
	old = b->dev;
	install_device(b, d, holds);
	base_unlock(b);
	return old;
}

int hrt__base_replace_device(struct hrt_base *b, struct hrt_device *old, struct hrt_device *d,
			     int holds)
{
	int err = 0;

	base_lock(b);
	if (b->dev == old)
		install_device(b, d, holds);
	else
		err = -EBUSY;
	base_unlock(b);
	return err;
}

/* The hold ------------------------------------------------------------ */

/*
 * Stacked on the timerfd: the base's arms are noted, not programmed (a
 * timer without slack would end the host's ranged sleep exactly), and
 * hrt_base_hold_fd(b, 1) disarms the timerfd below - at the hold and again
 * before each of the host's sleeps.  One arm is programmed: an instant
 * earlier than the one noted (a start that moved the earliest hard expiry
 * earlier, perhaps from another thread while the host sleeps on a plan
 * made for the later one) arms the timerfd at it, so the sleep ends by
 * then; a later instant leaves it armed at the earlier one (a spurious
 * wake-up at worst, never a late one).  The host's next hold(1) disarms it
 * again: a start from the host's own thread, which plans anew before it
 * sleeps, costs two arms and no interrupt.  Called under the base lock.
 */
static int hold_arm(struct hrt_device *d, hrt_time_t when)
{
	struct hrt_base *b = HRT_CONTAINER_OF(d, struct hrt_base, hold);
	int r;

	base_assert_locked(b);
	if (when >= b->armed)
		return HRT_DEV_NOTED;
	r = b->hold_below->ops->arm(b->hold_below, when);
	if (r >= 0)
		b->hold_disarmed = 0;
	return r;
}

/* Lock held: the timerfd below disarmed, the earliest expiry noted anew. */
static int hold_disarm(struct hrt_base *b)
{
	int r;

	base_assert_locked(b);
	if (!b->hold_disarmed) {
		r = b->hold_below->ops->arm(b->hold_below, HRT_TIME_MAX);
		if (r < 0)
			return r;
		b->hold_disarmed = 1;
	}
	b->armed = HRT_ARMED_EXPIRED;   /* notes any instant: no arm */
	hrt__base_wakeup_update(b);
	return 0;
}

/* Whatever the timerfd had before the hold (a disarmed one follows no
 * wall-clock change). */
static int hold_ack(struct hrt_device *d)
{
	struct hrt_base *b = HRT_CONTAINER_OF(d, struct hrt_base, hold);

	return b->hold_below->ops->ack(b->hold_below);
}

static int hold_fd(const struct hrt_device *d)
{
	const struct hrt_base *b = HRT_CONTAINER_OF(d, struct hrt_base, hold);

	return b->hold_below->ops->fd(b->hold_below);
}

/* hrt_base_free of a held base closes the timerfd. */
static void hold_close(struct hrt_device *d)
{
	struct hrt_base *b = HRT_CONTAINER_OF(d, struct hrt_base, hold);

	b->hold_below->ops->close(b->hold_below);
}

static const struct hrt_device_ops hold_ops = { hold_arm, hold_ack, hold_fd, hold_close };

HRT_EXTERN int hrt_base_hold_fd(struct hrt_base *b, int hold)
{
	int err = hrt_base_fd(b);       /* the guard; makes the timerfd */

	if (err < 0)
		return err;
	err = 0;
	base_lock(b);
	if (hold && b->dev != &b->hold) {
		if (!hrt__timerfd_is(b->dev)) {
			err = -EBUSY;   /* hrt_base_loop's device: it holds itself */
		} else {
			b->hold.ops = &hold_ops;
			b->hold_below = b->dev;
			b->hold_disarmed = 0;
			__atomic_store_n(&b->dev, &b->hold, __ATOMIC_RELEASE);
			err = hold_disarm(b);
		}
	} else if (hold) {
		err = hold_disarm(b);   /* before the host's next sleep */
	} else if (b->dev == &b->hold) {
		__atomic_store_n(&b->dev, b->hold_below, __ATOMIC_RELEASE);
		/* Armed at the earliest expiry.  A timerfd the hold disarmed
		 * is disarmed (and heard of no set of the wall clock:
		 * hrt__base_wakeup_update measures a split base's offset). */
		b->armed = b->hold_disarmed ? HRT_TIME_MAX : HRT_ARMED_EXPIRED;
		hrt__base_wakeup_update(b);
		err = b->armed == HRT_ARMED_EXPIRED ? b->arm_err : 0;
	}
	base_unlock(b);
	return err;
}

HRT_EXTERN int hrt_base_fd(struct hrt_base *b)
{
	struct hrt_device *d;
	int fd = base_guard(b, G_FD, 0);

	if (fd)
		return fd;
	if (base_is_virtual(b))
		return -EOPNOTSUPP;
	base_lock(b);
	if (!b->dev) {
		d = hrt__timerfd_new(b->clock, NULL);
		if (!d) {
			fd = -errno;
			base_unlock(b);
			return fd;
		}
		__atomic_store_n(&b->dev, d, __ATOMIC_RELEASE);
		b->armed = HRT_TIME_MAX;        /* a new timerfd is disarmed */
		hrt__base_wakeup_update(b);
	}
	fd = b->dev->ops->fd(b->dev);
	base_unlock(b);
	return fd;
}

int hrt__base_rearm(struct hrt_base *b)
{
	int err;

	base_lock(b);
	if (b->armed == HRT_ARMED_EXPIRED)
		hrt__base_wakeup_update(b);
	/* EXPIRED without an arm error: the device fired and a pass running
	 * on another thread re-arms at its end (a failure there pokes us). */
	err = b->armed == HRT_ARMED_EXPIRED ? b->arm_err : 0;
	base_unlock(b);
	return err;
}
