/* SPDX-License-Identifier: MIT */
/*
 * wakeup.c - the base's side of the wake-up device (device.h), on the way
 * down, as hrtimer_reprogram and clockevents_program_event are: the one
 * place that arms the device, the one place a sleeper takes it over (the
 * loop, the hold), making the timerfd (hrt_base_fd) and the hold
 * (hrt_base_hold_fd).  The way back up, a wake-up that runs the pass, is
 * pass.c's.
 *
 * Lazy re-arm (the kernel's HRTIMER_MODE_LAZY_REARM, for the same reason:
 * a re-arm is a system call, a wake-up too early is one pass that finds
 * little).  Invariant: outside a pass the sleeper wakes by wake.bound, and
 * wake.bound <= every queued hard expiry.  So
 *   - a cancel, or a start that moves the earliest hard expiry later,
 *     keeps it and costs nothing: the device fires early, once, at the
 *     old instant, and the pass then re-arms exactly (stats.early_wakeups);
 *   - a start before wake.bound arms the device at its hard expiry (ARM),
 *     from any thread, so a poller blocked on the fd wakes in time, or
 *     kicks the sleeper (NOTE);
 *   - a pass ends with an exact update, so after a wake-up the device is
 *     armed at the earliest hard expiry again.
 * A timeout pushed back by 100 ms every 1 ms for a second thus costs ten
 * early wake-ups, not a thousand system calls.
 */
#include "clock.h"
#include "guard.h"
#include "timerfd.h"

/* Arming ---------------------------------------------------------------- */

/* Lock held: program the device for `when`.  A failure marks it unknown,
 * so the next update (or dispatch, or the loop's retry) tries again; in
 * ARM mode the first failure in a row kicks the sleeper, whose poll on a
 * device that will not fire would never end (hrt_base_loop's backoff). */
static int device_arm(struct hrt_base *b, hrt_time_t when)
{
	struct hrt_wake *w = &b->wake;
	int r;

	base_assert_locked(b);
	r = w->dev->ops->arm(w->dev, when);
	if (r < 0) {
		if (w->armed != HRT_ARMED_EXPIRED && !w->note && w->kick)
			w->kick(w->kick_ctx, when);
		w->arm_err = r;
		w->armed = HRT_ARMED_EXPIRED;
		return r;
	}
	w->armed = when;
	w->arm_err = 0;
	b->stats.reprograms++;
	if (r == HRT_DEV_JUMPED)
		b->stats.clock_jumps++;
	return r;
}

/* ARM mode: what the device holds is the bound, or, after a failure,
 * nothing can be promised: every start tries again. */
static void arm_bound(struct hrt_wake *w)
{
	w->bound = w->armed == HRT_ARMED_EXPIRED ? HRT_TIME_MAX : w->armed;
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

/* An instant as the device takes it: 1 ns at the earliest (0 disarms a
 * timerfd), so never equal to HRT_ARMED_EXPIRED either. */
static hrt_time_t arm_at(hrt_time_t when)
{
	return when < 1 ? 1 : when;
}

/* NOTE mode: the sleeper told to wake by `when`. */
static void kick(struct hrt_base *b, hrt_time_t when)
{
	struct hrt_wake *w = &b->wake;

	w->bound = w->kick(w->kick_ctx, when);
}

/* The device is the base's to use: there is one, no pass will update it
 * at its end, and it is this process's. */
static int wake_usable(struct hrt_base *b)
{
	return b->wake.dev && !hrt__tset_in_pass(&b->set) && !base_is_forked(b);
}

/*
 * One CLOCK_REALTIME timerfd with CANCEL_ON_SET serves a split base: a set
 * of the clock, which moves the relative timers' instants in it, comes
 * back as ECANCELED (or as an arm that saw it: HRT_DEV_JUMPED) and the
 * re-arm takes the new offset.  A disarmed timerfd heard of no set, so its
 * first arm measures.
 */
void hrt__wake_update(struct hrt_base *b)
{
	struct hrt_wake *w = &b->wake;
	hrt_time_t when;

	base_assert_locked(b);
	if (!wake_usable(b))
		return;
	when = arm_at(hrt__base_next(b));
	if (w->note) {
		if (when < w->bound)
			kick(b, when);
		return;
	}
	if (b->split && w->armed == HRT_TIME_MAX && when != HRT_TIME_MAX) {
		hrt__base_sync_offset(b, 1);
		when = arm_at(hrt__base_next(b));
	}
	if (when != w->armed && device_arm(b, when) == HRT_DEV_JUMPED && b->split) {
		/* The set this arm consumed moved the relative timers'
		 * instants: arm again with the new offset. */
		hrt__base_sync_offset(b, 1);
		if ((when = arm_at(hrt__base_next(b))) != w->armed)
			device_arm(b, when);
	}
	arm_bound(w);
}

/* The fast paths (base.c) come here only for `when` < wake.bound. */
void hrt__wake_earlier(struct hrt_base *b, hrt_time_t when)
{
	struct hrt_wake *w = &b->wake;

	base_assert_locked(b);
	if (!wake_usable(b))
		return;
	if (w->note) {
		kick(b, arm_at(when));
		return;
	}
	/* Unknown, or a split base's disarmed timerfd: the exact update. */
	if (w->armed == HRT_ARMED_EXPIRED || (b->split && w->armed == HRT_TIME_MAX)) {
		hrt__wake_update(b);
		return;
	}
	if (device_arm(b, arm_at(when)) == HRT_DEV_JUMPED && b->split) {
		/* As in hrt__wake_update: the set moved the relative timers. */
		hrt__base_sync_offset(b, 1);
		hrt__wake_update(b);
		return;
	}
	arm_bound(w);
}

/* Sleepers --------------------------------------------------------------- */

int hrt__wake_take(struct hrt_base *b, int who, int note, hrt__kick_fn fn, void *ctx)
{
	struct hrt_wake *w = &b->wake;
	int err = 0;

	base_lock(b);
	if (w->who && w->who != who) {
		err = -EBUSY;
	} else {
		w->who = who;
		w->note = note;
		w->kick = fn;
		w->kick_ctx = ctx;
		if (note)
			w->bound = HRT_WAKE_AWAKE;      /* it plans before it sleeps */
		else
			hrt__wake_update(b);
	}
	base_unlock(b);
	return err;
}

/* Lock held: the device back to the base, armed at the earliest expiry. */
static int give_locked(struct hrt_base *b)
{
	struct hrt_wake *w = &b->wake;

	w->who = 0;
	w->note = 0;
	w->kick = NULL;
	w->kick_ctx = NULL;
	arm_bound(w);
	hrt__wake_update(b);
	return w->armed == HRT_ARMED_EXPIRED ? w->arm_err : 0;
}

int hrt__wake_give(struct hrt_base *b, int who)
{
	int err = 0;

	base_lock(b);
	if (b->wake.who == who)
		err = give_locked(b);
	base_unlock(b);
	return err;
}

int hrt__wake_sleep(struct hrt_base *b, hrt_time_t by, hrt_time_t arm)
{
	struct hrt_wake *w = &b->wake;
	int err = 0;

	base_lock(b);
	w->bound = by;
	if (arm != HRT_WAKE_KEEP && arm != w->armed && wake_usable(b) &&
	    device_arm(b, arm) < 0)
		err = w->arm_err;
	base_unlock(b);
	return err;
}

int hrt__wake_who(struct hrt_base *b)
{
	int who;

	base_lock(b);
	who = b->wake.who;
	base_unlock(b);
	return who;
}

int hrt__wake_ack(struct hrt_base *b)
{
	struct hrt_device *d = hrt__base_device(b);

	if (!d)
		return base_is_virtual(b) ? -EOPNOTSUPP : -EINVAL;
	return d->ops->ack(d);
}

int hrt__base_guard_fd(const struct hrt_base *b)
{
	return base_guard(b, G_FD, 0);
}

struct hrt_loop *hrt__base_loop(struct hrt_base *b)
{
	return b->loop;
}

struct hrt_host *hrt__base_host(struct hrt_base *b)
{
	return b->host;
}

int hrt__base_is_virtual(const struct hrt_base *b)
{
	return base_is_virtual(b);
}

struct hrt_device *hrt__base_device(struct hrt_base *b)
{
	return __atomic_load_n(&b->wake.dev, __ATOMIC_ACQUIRE);
}

/* The hold ------------------------------------------------------------ */

/*
 * NOTE mode for a host loop that sleeps for the window itself: the
 * timerfd stays disarmed (a timer without slack would end the host's
 * ranged sleep exactly), and hrt_base_hold_fd(b, 1) disarms it again
 * before each of the host's sleeps, its bound the earliest hard expiry the
 * host plans for.  The kick arms it: a start earlier than that (perhaps
 * from another thread while the host sleeps on a plan made for the later
 * one) ends the sleep by then; a later one, or a cancel, leaves it (a
 * spurious wake-up at worst, never a late one).  A start from the host's
 * own thread, which plans anew before it sleeps, costs two arms and no
 * interrupt.  Called under the base lock.
 */
static hrt_time_t hold_kick(void *ctx, hrt_time_t when)
{
	struct hrt_base *b = ctx;

	device_arm(b, when);    /* a failure is kept for the next dispatch */
	return when;
}

/* Lock held: the timerfd disarmed, the earliest expiry noted anew. */
static int hold_disarm(struct hrt_base *b)
{
	struct hrt_wake *w = &b->wake;

	if (w->armed != HRT_TIME_MAX && device_arm(b, HRT_TIME_MAX) < 0)
		return w->arm_err;
	w->bound = arm_at(hrt__base_next(b));
	return 0;
}

HRT_EXTERN int hrt_base_hold_fd(struct hrt_base *b, int hold)
{
	struct hrt_wake *w;
	int err = hrt_base_fd(b);       /* the guard; makes the timerfd */

	if (err < 0)
		return err;
	w = &b->wake;
	err = 0;
	base_lock(b);
	if (hold && w->who == HRT_WAKE_LOOP) {
		err = -EBUSY;           /* hrt_base_loop's: it sleeps itself */
	} else if (hold) {
		w->who = HRT_WAKE_HOLD;
		w->note = 1;
		w->kick = hold_kick;
		w->kick_ctx = b;
		err = hold_disarm(b);   /* before the host's next sleep */
	} else if (w->who == HRT_WAKE_HOLD) {
		/* A disarmed timerfd heard of no set of the wall clock:
		 * hrt__wake_update measures a split base's offset. */
		err = give_locked(b);
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
	if (!b->wake.dev) {
		d = hrt__timerfd_new(b->clock, NULL);
		if (!d) {
			fd = -errno;
			base_unlock(b);
			return fd;
		}
		__atomic_store_n(&b->wake.dev, d, __ATOMIC_RELEASE);
		b->wake.armed = HRT_TIME_MAX;   /* a new timerfd is disarmed */
		hrt__wake_update(b);
	}
	fd = b->wake.dev->ops->fd(b->wake.dev);
	base_unlock(b);
	return fd;
}

int hrt__base_rearm(struct hrt_base *b)
{
	struct hrt_wake *w = &b->wake;
	int err;

	base_lock(b);
	if (w->armed == HRT_ARMED_EXPIRED)
		hrt__wake_update(b);
	/* EXPIRED without an arm error: a pass running on another thread
	 * re-arms at its end (a failure there kicks us). */
	err = w->armed == HRT_ARMED_EXPIRED ? w->arm_err : 0;
	base_unlock(b);
	return err;
}
