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

/* The wake-up of a new base: no device yet (hrt_base_fd makes it), so no
 * wake-up to ask for; and its device closed with the base. */
void hrt__wake_init(struct hrt_base *b)
{
	b->wake.armed = HRT_TIME_MAX;
	b->wake.bound = HRT_WAKE_AWAKE;
}

void hrt__wake_close(struct hrt_base *b)
{
	if (b->wake.dev)
		b->wake.dev->ops->close(b->wake.dev);
	b->wake.dev = NULL;
}

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

/* Wake-ups ----------------------------------------------------------- */

/*
 * Lock held: the bookkeeping of one wake-up `event` (an ack() result, or
 * HRT_DEV_NOSLEEP / HRT_DEV_SLEPT from the loop) at `now`: counts it and
 * returns whether a pass is due.  A device that fired before any hard
 * expiry was due counts as early: the lazy re-arm's price.  An ack that
 * found nothing (another thread re-armed the device between the host's
 * poll and the read) is due only if something is hard-due or the last arm
 * failed: the device did not fire, so there is no interrupt to answer.
 */
int hrt__wake_event(struct hrt_base *b, int event, hrt_time_t now)
{
	struct hrt_wake *w = &b->wake;

	base_assert_locked(b);
	switch (event) {
	case HRT_DEV_FIRED:
		b->stats.wakeups++;
		w->armed = HRT_TIME_MAX;        /* a timerfd is one-shot: it holds nothing */
		if (hrt__base_next(b) > now)
			b->stats.early_wakeups++;
		return 1;
	case HRT_DEV_SLEPT:
		b->stats.wakeups++;
		return 1;
	case HRT_DEV_NOSLEEP:
		return 1;
	case -ECANCELED:
		b->stats.clock_jumps++;
		if (b->split)                   /* told: any clean reading */
			hrt__base_sync_offset(b, 1);
		w->armed = HRT_ARMED_EXPIRED;   /* re-arm: renews CANCEL_ON_SET */
		return 1;
	default:
		return w->armed == HRT_ARMED_EXPIRED || hrt__base_next(b) <= now;
	}
}

/* The error a wake-up leaves: the arm's, while the device's state is unknown. */
int hrt__wake_err(struct hrt_base *b)
{
	base_assert_locked(b);
	return b->wake.armed == HRT_ARMED_EXPIRED ? b->wake.arm_err : 0;
}

/*
 * Lock held: the device's ack, only if it may have fired by `now`.  A
 * disarmed timerfd has nothing to read (timerfd_settime clears what it
 * counted), nor has one armed for later on a clock nobody sets; a
 * CLOCK_REALTIME one armed (CANCEL_ON_SET) may carry a clock set: read.
 * So a host that plans each sleep (hrt_base_plan_sleep) reads the timerfd
 * only when it fired, not once an iteration.  The ack never blocks.
 */
int hrt__wake_ack_due(struct hrt_base *b, hrt_time_t now)
{
	struct hrt_wake *w = &b->wake;

	base_assert_locked(b);
	if (!w->dev)
		return base_is_virtual(b) ? -EOPNOTSUPP : -EINVAL;
	if (w->armed == HRT_TIME_MAX || (b->clock != CLOCK_REALTIME && w->armed > now))
		return HRT_DEV_NOTHING;
	return w->dev->ops->ack(w->dev);
}

/*
 * Lock held: the coalesced sleep's window over every set, in the base's
 * clock (coalesce.c turns it into a sleep; base.h): the earliest hard
 * expiry's, and the earliest soft start if greedy (a pass walks every
 * set); else the owner's (greedy off, a pass runs the leftmost run of all
 * sets in one order: nothing before the owner's soft expiry, another
 * set's may be earlier but behind it).
 */
int hrt__wake_window(struct hrt_base *b, hrt_time_t *owner, hrt_time_t *soft, hrt_time_t *hard)
{
	int greedy = __atomic_load_n(&b->greedy, __ATOMIC_RELAXED) != HRT_GREEDY_OFF;
	hrt_time_t o, s, h, off;
	int have = 0;

	base_assert_locked(b);
	base_for_each_set(b, ts) {
		if (!hrt__tset_window(ts, greedy, &o, &s, &h))
			continue;
		off = set_offset(ts);
		o = key_to_base(o, off);
		s = key_to_base(s, off);
		h = key_to_base(h, off);
		if (!have || h < *hard) {
			*owner = o;
			*hard = h;
		}
		if (!have || s < *soft)
			*soft = s;
		have = 1;
	}
	if (have && !greedy)
		*soft = *owner;
	return have;
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

int hrt__wake_sleep_locked(struct hrt_base *b, hrt_time_t by, hrt_time_t arm)
{
	struct hrt_wake *w = &b->wake;

	base_assert_locked(b);
	w->bound = by;
	if (arm != HRT_WAKE_KEEP && arm != w->armed && wake_usable(b) &&
	    device_arm(b, arm) < 0)
		return w->arm_err;
	return 0;
}

int hrt__wake_sleep(struct hrt_base *b, hrt_time_t by, hrt_time_t arm)
{
	int err;

	base_lock(b);
	err = hrt__wake_sleep_locked(b, by, arm);
	base_unlock(b);
	return err;
}

int hrt__wake_ack(struct hrt_base *b)
{
	struct hrt_device *d = hrt__base_device(b);

	if (!d)
		return base_is_virtual(b) ? -EOPNOTSUPP : -EINVAL;
	return d->ops->ack(d);
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

int hrt__wake_hold_locked(struct hrt_base *b, int hold)
{
	struct hrt_wake *w = &b->wake;

	base_assert_locked(b);
	if (hold && w->who == HRT_WAKE_LOOP)
		return -EBUSY;          /* hrt_base_loop's: it sleeps itself */
	if (hold) {
		w->who = HRT_WAKE_HOLD;
		w->note = 1;
		w->kick = hold_kick;
		w->kick_ctx = b;
		return hold_disarm(b);  /* before the host's next sleep */
	}
	/* A disarmed timerfd heard of no set of the wall clock:
	 * hrt__wake_update measures a split base's offset. */
	return w->who == HRT_WAKE_HOLD ? give_locked(b) : 0;
}

int hrt__wake_hold(struct hrt_base *b, int hold)
{
	int err;

	base_lock(b);
	err = hrt__wake_dev_locked(b);
	if (err >= 0)
		err = hrt__wake_hold_locked(b, hold);
	base_unlock(b);
	return err;
}

HRT_EXTERN int hrt_base_hold_fd(struct hrt_base *b, int hold)
{
	int err = base_guard(b, G_FD, 0);

	return err ? err : hrt__wake_hold(b, hold);
}

int hrt__wake_dev_locked(struct hrt_base *b)
{
	struct hrt_device *d;

	base_assert_locked(b);
	if (base_is_virtual(b))
		return -EOPNOTSUPP;
	if (!b->wake.dev) {
		d = hrt__timerfd_new(b->clock, NULL);
		if (!d)
			return -errno;
		__atomic_store_n(&b->wake.dev, d, __ATOMIC_RELEASE);
		b->wake.armed = HRT_TIME_MAX;   /* a new timerfd is disarmed */
		hrt__wake_update(b);
	}
	return b->wake.dev->ops->fd(b->wake.dev);
}

int hrt__wake_fd(struct hrt_base *b)
{
	int fd;

	if (base_is_virtual(b))
		return -EOPNOTSUPP;
	base_lock(b);
	fd = hrt__wake_dev_locked(b);
	base_unlock(b);
	return fd;
}

HRT_EXTERN int hrt_base_fd(struct hrt_base *b)
{
	int fd = base_guard(b, G_FD, 0);

	return fd ? fd : hrt__wake_fd(b);
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
