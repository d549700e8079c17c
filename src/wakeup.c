/* SPDX-License-Identifier: MIT */
/*
 * wakeup.c - the base's side of the wake-up device (device.h), as
 * hrtimer_interrupt is the hrtimer side of clockevents: making the timerfd
 * (hrt_base_fd), installing another device (the loop stacks itself on the
 * timerfd), and the one way a wake-up comes back up, hrt__base_wakeup,
 * which counts it, runs the pass and re-arms in one critical section.  The
 * arm on the way down is base_wakeup_update (base_priv.h), inline because
 * every start and cancel ends with it.
 */
#include "base_priv.h"
#include "timerfd.h"

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
	__atomic_store_n(&b->dev, d, __ATOMIC_RELEASE);
	if (holds == HRT_DEV_NEW)
		b->armed = HRT_TIME_MAX;
	else if (holds != HRT_DEV_SAME)
		b->armed = HRT_ARMED_EXPIRED;
	base_wakeup_update(b);
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

	if (!b->hold_disarmed) {
		r = b->hold_below->ops->arm(b->hold_below, HRT_TIME_MAX);
		if (r < 0)
			return r;
		b->hold_disarmed = 1;
	}
	b->armed = HRT_ARMED_EXPIRED;   /* notes any instant: no arm */
	base_wakeup_update(b);
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
		 * base_wakeup_update measures a split base's offset). */
		b->armed = b->hold_disarmed ? HRT_TIME_MAX : HRT_ARMED_EXPIRED;
		base_wakeup_update(b);
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
		base_wakeup_update(b);
	}
	fd = b->dev->ops->fd(b->dev);
	base_unlock(b);
	return fd;
}

/*
 * One critical section per wake-up.  The clock is read after the device
 * was drained, so the pass never runs at an instant earlier than the
 * expiry that woke it: a late wake-up can only merge passes, never add one.
 * An ack that found nothing (another thread re-armed the device between
 * the host's poll and the read, e.g. by cancelling the timer it fired for)
 * runs no pass unless something is hard-due or the last arm failed: the
 * device did not fire, so there is no interrupt to answer.
 */
ssize_t hrt__base_wakeup(struct hrt_base *b, int event, int idle)
{
	hrt_time_t now;
	ssize_t n = 0;
	int due, err;

	base_lock(b);
	now = base_now(b);
	if (event == HRT_DEV_FIRED) {
		b->stats.wakeups++;
		b->armed = HRT_ARMED_EXPIRED;   /* fired: any next instant re-arms */
		due = 1;
	} else if (event == HRT_DEV_NOSLEEP) {
		due = 1;
	} else if (event == -ECANCELED) {
		b->stats.clock_jumps++;
		if (b->split)                   /* told: any clean reading */
			hrt__base_sync_offset(b, 1);
		b->armed = HRT_ARMED_EXPIRED;   /* re-arm: renews CANCEL_ON_SET */
		due = 1;
	} else {
		due = b->armed == HRT_ARMED_EXPIRED || base_next(b) <= now;
	}
	if (due)
		n = hrt__base_run_locked(b, now, idle);   /* re-arms at its end */
	base_wakeup_update(b);                  /* retries an arm that failed */
	err = b->armed == HRT_ARMED_EXPIRED ? b->arm_err : 0;
	base_unlock(b);
	return err ? err : n;
}

ssize_t hrt__base_dispatch(struct hrt_base *b, int idle, int *read_err)
{
	struct hrt_device *d;
	int err, ev;

	*read_err = 0;
	if ((err = base_guard(b, G_FD, 0)))
		return err;
	d = hrt__base_device(b);
	if (!d)
		return base_is_virtual(b) ? -EOPNOTSUPP : -EINVAL;
	ev = d->ops->ack(d);
	if (ev < 0 && ev != -ECANCELED) {       /* EBADF: the host closed our fd */
		*read_err = ev;
		return ev;
	}
	return hrt__base_wakeup(b, ev, idle);
}

HRT_EXTERN ssize_t hrt_base_dispatch(struct hrt_base *b, int idle)
{
	int read_err;

	return hrt__base_dispatch(b, idle, &read_err);
}

int hrt__base_rearm(struct hrt_base *b)
{
	int err;

	base_lock(b);
	if (b->armed == HRT_ARMED_EXPIRED)
		base_wakeup_update(b);
	/* EXPIRED without an arm error: the device fired and a pass running
	 * on another thread re-arms at its end (a failure there pokes us). */
	err = b->armed == HRT_ARMED_EXPIRED ? b->arm_err : 0;
	base_unlock(b);
	return err;
}
