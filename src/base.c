/* SPDX-License-Identifier: MIT */
/*
 * base.c - timer semantics: start, cancel, forward and the timer queries
 * (the expiry pass is pass.c's, clocks and settings clock.c's).  The
 * structure and locking of a base are base_priv.h's; the queued timers are
 * the timer sets' (timerset.h), which this file drives through their
 * functions only.
 * A real CLOCK_REALTIME base has two sets (base_priv.h): a relative start
 * there takes the monotonic clock and the relative set, off the fast path,
 * which stays the one-set path of every other base.
 *
 * Every public call here takes the base lock (see base_priv.h) and drops it
 * around callbacks (forward too: a start from another thread may meet it
 * in a callback).  A callback runs with its timer off the set; the pass
 * holds no iterator across it and asks the set for "the next timer to run"
 * from scratch afterwards.  Every change of the set ends with
 * base_wakeup_update, which keeps the device (if any) armed for the
 * earliest hard expiry, except a fast-path start or cancel that leaves
 * that instant as it is (nothing to do); the device's handler comes back
 * through wakeup.c.
 */
#include <string.h>
#include <time.h>

#include "base_priv.h"

unsigned hrt__fork_gen;

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

/*
 * base_wakeup_update after a change on b (which has a device) that took
 * away a queued hard expiry `gone` and queued `came` (HRT_TIME_MAX:
 * none).  Outside a pass the device is armed at the exact earliest hard
 * expiry (armed > 1: no clamp, no failed arm), so if `gone` was later
 * than it and `came` is not earlier, the earliest stayed where it was:
 * one compare instead of the search.  Callers test b->dev first and keep
 * a path without it, so a base without a device holds nothing more live.
 */
static inline void wakeup_after(struct hrt_base *b, hrt_time_t gone, hrt_time_t came)
{
	hrt_time_t armed = b->armed;

	if (armed <= 1 || gone <= armed || came < armed)
		base_wakeup_update(b);
}

/* `gone` for wakeup_after: t's hard expiry if queued (state word s). */
static inline hrt_time_t gone_hard(const struct hrt_timer *t, uintptr_t s)
{
	return hrt__tset_queued(s) ? t->hrt__hard : HRT_TIME_MAX;
}

/* v + n * interval, saturated at HRT_TIME_MAX; interval > 0.  Unsigned,
 * so a negative v cannot overflow the subtraction. */
static hrt_time_t add_intervals(hrt_time_t v, uint64_t n, hrt_time_t interval)
{
	uint64_t room = (uint64_t)HRT_TIME_MAX - (uint64_t)v;  /* exact: v <= MAX */

	if (n > room / (uint64_t)interval)
		return HRT_TIME_MAX;
	return (hrt_time_t)((uint64_t)v + n * (uint64_t)interval);
}

/* The set of the same kind as ns (of base nb) on base b. */
static inline struct hrt_tset *same_kind(struct hrt_base *b, struct hrt_base *nb,
					 struct hrt_tset *ns)
{
	return b != nb && base_set_is_rel(nb, ns) && b->split ? b->rel : b == nb ? ns : &b->set;
}

/* a and b keep one time: the same real clock (a virtual base's time is
 * its own). */
static inline int same_time_line(const struct hrt_base *a, const struct hrt_base *b)
{
	return a == b || (!base_is_virtual(a) && !base_is_virtual(b) && a->clock == b->clock);
}

/* Locking a timer's base ---------------------------------------------- */

/* Locks t's base into *bp (NULL, nothing locked, if it has none): 0, or
 * -EPERM, nothing locked, if that base is another thread's unlocked one
 * (the guard's step 2 for a timer, made on the base the lock confirms). */
static inline int lock_timer_base(const struct hrt_timer *t, struct hrt_base **bp, uintptr_t *sp)
{
	for (;;) {
		struct hrt_base *b = st_base(hrt__tset_state(t));

		*bp = b;
		if (!b)
			return 0;
		if (base_foreign(b))
			return -EPERM;
		base_lock(b);
		*sp = hrt__tset_state(t);
		if (st_base(*sp) == b)
			return 0;
		base_unlock(b);         /* moved meanwhile: chase it */
	}
}

static void unlock_two(struct hrt_base *a, struct hrt_base *b)
{
	base_unlock(b);
	if (a && a != b)
		base_unlock(a);
}

/*
 * Locks nb and t's current base (address order against deadlock) and
 * returns the latter; NULL, nothing locked, if that base is another
 * thread's unlocked one (the guard's step 2 for the timer: checked on each
 * base the timer is found on, so a move onto such a base while this
 * thread waited for a lock is refused, never followed).  A timer with no
 * base yet is claimed for nb with a compare-and-swap, so two first starts
 * on different bases cannot both believe it is theirs.
 */
static inline struct hrt_base *lock_for_start(struct hrt_timer *t, struct hrt_base *nb,
					      struct hrt_tset *ns, uintptr_t *sp)
{
	for (;;) {
		uintptr_t s = hrt__tset_state(t);
		struct hrt_base *ob = st_base(s);

		if (!ob && nb->unlocked) {     /* no RMW: the timer is this thread's */
			hrt__tset_bind(t, ns);
			*sp = (uintptr_t)ns;
			return nb;
		}
		if (!ob) {
			base_lock(nb);
			if (hrt__tset_claim(t, ns, &s)) {
				*sp = (uintptr_t)ns;
				return nb;
			}
			base_unlock(nb);
			continue;
		}
		if (ob == nb) {
			base_lock(nb);
		} else if (base_foreign(ob)) {
			return NULL;
		} else if (ob < nb) {
			base_lock(ob);
			base_lock(nb);
		} else {
			base_lock(nb);
			base_lock(ob);
		}
		*sp = hrt__tset_state(t);
		if (st_base(*sp) == ob)
			return ob;
		unlock_two(ob, nb);
	}
}

HRT_EXTERN int hrt_timer_init(struct hrt_timer *t, hrt_callback fn)
{
	int err = timer_guard(t, G_QUERY, !fn);        /* touches no base */

	if (err)
		return err;
	memset(t, 0, sizeof(*t));
	t->hrt__fn = fn;
	return 0;
}

/* t (on b's set ts with state word s, b's lock held if it has one)
 * queued again at soft..hard: the fused re-queue, and the wake-up if b has
 * a device (tested first, so a base without one keeps nothing live).  The
 * relative set's keys are not the armed instant's clock: a full update. */
static inline __attribute__((always_inline)) void
requeue_own(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t, uintptr_t s,
	    hrt_time_t soft, hrt_time_t hard)
{
	hrt_time_t gone;

	b->stats.starts++;
	if (!b->dev) {
		hrt__tset_rearm(ts, t, s, soft, hard);
		return;
	}
	gone = gone_hard(t, s);
	hrt__tset_rearm(ts, t, s, soft, hard);
	if (__builtin_expect(base_set_is_rel(b, ts), 0))
		base_wakeup_update(b);
	else
		wakeup_after(b, gone, hard);
}

/* The fast path: t, already on nb's set ns, re-queued in place by the
 * owner of a single-thread base, or under the owner's half of the lock
 * with the state word read again under it.  1 if done. */
static inline __attribute__((always_inline)) int
start_own(struct hrt_base *nb, struct hrt_tset *ns, struct hrt_timer *t, uintptr_t s,
	  hrt_time_t soft, hrt_time_t hard)
{
	if (hrt__tset_of(s) != ns)
		return 0;
	if (nb->unlocked) {
		requeue_own(nb, ns, t, s, soft, hard);
		return 1;
	}
	if (base_owner_enter(nb)) {
		s = hrt__tset_state(t);
		if (__builtin_expect(hrt__tset_of(s) == ns, 1)) {
			requeue_own(nb, ns, t, s, soft, hard);
			base_owner_exit(nb);
			return 1;
		}
		base_owner_exit(nb);
	}
	return 0;
}

/* Every other start onto nb's set ns: both bases locked. */
static __attribute__((noinline)) int
start_locked(struct hrt_timer *t, struct hrt_base *nb, struct hrt_tset *ns, hrt_time_t soft,
	     hrt_time_t hard)
{
	struct hrt_base *ob, *target;
	struct hrt_tset *os, *ts;
	uintptr_t s;

	ob = lock_for_start(t, nb, ns, &s);
	if (!ob)
		return -EPERM;
	/* A timer whose callback is running stays on its base (cancel must
	 * find the callback to wait for it) - so the instant, computed on
	 * nb's clock, must mean the same there (hrt.h: -EXDEV). */
	target = ob != nb && ob->running == t ? ob : nb;
	if (target == ob && ob != nb && !same_time_line(ob, nb)) {
		unlock_two(ob, nb);
		return -EXDEV;
	}
	os = hrt__tset_of(s);
	ts = same_kind(target, nb, ns);
	if (os == ts) {
		requeue_own(ob, ts, t, s, soft, hard);
		unlock_two(ob, nb);
		return 0;
	}
	/* Onto another base, or between a split base's two sets.  Those share
	 * the pass number, so a timer that ran in this pass stays excluded
	 * from the other set's searches; only another base sees it new. */
	if (hrt__tset_queued(s))
		hrt__tset_del(os, t, s);
	if (target != ob)
		hrt__tset_forget_pass(t);
	__atomic_store_n(&t->hrt__soft, soft, __ATOMIC_RELAXED);
	__atomic_store_n(&t->hrt__hard, hard, __ATOMIC_RELAXED);
	hrt__tset_add(ts, t);
	if (ob != target)
		base_wakeup_update(ob);
	target->stats.starts++;
	base_wakeup_update(target);
	unlock_two(ob, nb);
	return 0;
}

/* A relative start on a virtual base (its own time), a seamed one, or a
 * split one (the monotonic clock, onto the relative set); kept out of the
 * fast path, which then knows its set is nb's first. */
static __attribute__((noinline)) int
start_rel_slow(struct hrt_timer *t, struct hrt_base *nb, uintptr_t s, hrt_time_t delta,
	       hrt_time_t slack)
{
	struct hrt_tset *ns = nb->split ? nb->rel : &nb->set;
	hrt_time_t soft = sat_add(nb->split ? base_mono_now(nb) : base_now(nb), delta);
	hrt_time_t hard = cap_hard(soft, sat_add(soft, slack));

	if (start_own(nb, ns, t, s, soft, hard))
		return 0;
	return start_locked(t, nb, ns, soft, hard);
}

/*
 * Every start that start_fast leaves: the whole entry check, then the
 * owner's path or both locks.  A timer that names a set was started once,
 * so its callback is known to be set (only hrt_timer_init writes it, and
 * never NULL): the entry check reads the state word first and the
 * callback only of a new timer.
 */
static __attribute__((noinline)) int
start_full(struct hrt_timer *t, struct hrt_base *nb, hrt_time_t soft, hrt_time_t slack,
	   enum hrt_mode mode)
{
	hrt_time_t hard;
	uintptr_t s = t ? hrt__tset_state(t) : 0;
	int err = base_guard(nb, G_CHANGE, !t || (!s && !t->hrt__fn) || slack < 0 ||
			     (mode != HRT_MODE_ABS && mode != HRT_MODE_REL));

	if (err)
		return err;
	if (mode == HRT_MODE_REL) {
		if (__builtin_expect(nb->now_slow, 0))
			return start_rel_slow(t, nb, s, soft, slack);
		soft = sat_add(hrt__clock_now(nb->clock), soft);
	}
	hard = cap_hard(soft, sat_add(soft, slack));
	if (start_own(nb, &nb->set, t, s, soft, hard))
		return 0;
	return start_locked(t, nb, &nb->set, soft, hard);
}

/* requeue_own out of line, then the owner's half of the lock left if
 * `entered`: start_fast's tail for a tree timer or a new wake-up. */
static __attribute__((noinline)) int
requeue_out(struct hrt_timer *t, struct hrt_base *b, hrt_time_t soft, hrt_time_t hard,
	    uintptr_t s, int entered)
{
	requeue_own(b, &b->set, t, s, soft, hard);
	if (entered)
		base_owner_exit(b);
	return 0;
}

/* Lock held, t on b's first set: requeue_own where it is a wheel link or
 * move that leaves the armed instant alone (wakeup_after's test).  1 if
 * done; 0, nothing changed, otherwise. */
static inline __attribute__((always_inline)) int
requeue_fast(struct hrt_base *b, struct hrt_timer *t, uintptr_t s, hrt_time_t soft,
	     hrt_time_t hard)
{
	if (b->dev) {
		hrt_time_t armed = b->armed;

		if (armed <= 1 || gone_hard(t, s) <= armed || hard < armed)
			return 0;
	}
	if (!hrt__tset_rearm_wheel(&b->set, t, s, soft, hard))
		return 0;
	b->stats.starts++;
	return 1;
}

/*
 * An absolute start (soft given) of a timer already on nb's first set,
 * by the owner of a single-thread base or of the default base's bias,
 * needs no lock, no chase and, for a wheel timer, no call: a leaf that
 * saves no registers.  Any other case, arguments the entry check would
 * refuse and a walk callback's start included (hrt__change_id is 0 there),
 * leaves for start_full (nothing done yet) or, lock held, for
 * requeue_out; both are tail calls.
 */
static inline __attribute__((always_inline)) int
start_fast(struct hrt_timer *t, struct hrt_base *nb, hrt_time_t soft, hrt_time_t slack)
{
	hrt_time_t hard;
	uintptr_t s;

	if (__builtin_expect(!t, 0) || __builtin_expect(!nb, 0) || __builtin_expect(slack < 0, 0))
		return start_full(t, nb, soft, slack, HRT_MODE_ABS);
	if (__builtin_expect(__builtin_add_overflow(soft, slack, &hard), 0))
		return start_full(t, nb, soft, slack, HRT_MODE_ABS);
	if (__builtin_expect(hard > HRT_QUEUE_NOW_MAX, 0))
		return start_full(t, nb, soft, slack, HRT_MODE_ABS);
	/* slack is hard - soft from here: one register less to keep.  A
	 * first start (state word 0) binds the timer here too, as
	 * lock_for_start would: a plain store on a single-thread base, a
	 * compare-and-swap under the owner's half of the lock. */
	if (nb->unlocked) {
		s = hrt__tset_state(t);
		if (nb->owner == hrt__change_id &&
		    (hrt__tset_of(s) == &nb->set || (!s && t->hrt__fn))) {
			if (!s) {
				hrt__tset_bind(t, &nb->set);
				s = (uintptr_t)&nb->set;
			}
			if (requeue_fast(nb, t, s, soft, hard))
				return 0;
			return requeue_out(t, nb, soft, hard, s, 0);
		}
	} else if (base_owner_enter_as(nb, hrt__change_id)) {
		s = hrt__tset_state(t);
		if (__builtin_expect(hrt__tset_of(s) != &nb->set, 0)) {
			if (s || !t->hrt__fn || !hrt__tset_claim(t, &nb->set, &s)) {
				base_owner_exit(nb);
				return start_full(t, nb, soft, hard - soft, HRT_MODE_ABS);
			}
			s = (uintptr_t)&nb->set;
		}
		if (!requeue_fast(nb, t, s, soft, hard))
			return requeue_out(t, nb, soft, hard, s, 1);
		base_owner_exit(nb);
		return 0;
	}
	return start_full(t, nb, soft, hard - soft, HRT_MODE_ABS);
}

/* A relative start on a base whose clock is read directly: the clock,
 * then start_fast.  Refusals are start_full's, which reads no clock. */
static __attribute__((noinline)) int
start_rel(struct hrt_timer *t, struct hrt_base *nb, hrt_time_t delta, hrt_time_t slack,
	  enum hrt_mode mode)
{
	if (mode != HRT_MODE_REL || !t || !nb || nb->now_slow)
		return start_full(t, nb, delta, slack, mode);
	return start_fast(t, nb, sat_add(hrt__clock_now(nb->clock), delta), slack);
}

static inline __attribute__((always_inline)) int
start(struct hrt_timer *t, struct hrt_base *nb, hrt_time_t soft, hrt_time_t slack,
      enum hrt_mode mode)
{
	if (mode != HRT_MODE_ABS)
		return start_rel(t, nb, soft, slack, mode);
	return start_fast(t, nb, soft, slack);
}

HRT_EXTERN int hrt_timer_start_range(struct hrt_timer *t, struct hrt_base *nb,
				     hrt_time_t soft, hrt_time_t slack, enum hrt_mode mode)
{
	return start(t, nb, soft, slack, mode);
}

HRT_EXTERN int hrt_timer_start(struct hrt_timer *t, struct hrt_base *b,
			       hrt_time_t expiry, enum hrt_mode mode)
{
	return start(t, b, expiry, 0, mode);
}

/* Lock held, t's state word s names b's set ts: off it if queued. */
static inline int cancel_queued(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t,
				uintptr_t s)
{
	hrt_time_t gone;

	if (!hrt__tset_queued(s))
		return 0;
	b->stats.cancels++;
	if (!b->dev) {
		hrt__tset_del(ts, t, s);
		return 1;
	}
	gone = t->hrt__hard;
	hrt__tset_del(ts, t, s);
	if (__builtin_expect(base_set_is_rel(b, ts), 0))
		base_wakeup_update(b);
	else
		wakeup_after(b, gone, HRT_TIME_MAX);
	return 1;
}

static __attribute__((noinline)) int cancel_locked(struct hrt_timer *t, int wait)
{
	struct hrt_base *b;
	uintptr_t s;
	int ret = timer_guard(t, G_CHANGE, 0);

	if (ret || (ret = lock_timer_base(t, &b, &s)) || !b)
		return ret;
	while (b->running == t && !pthread_equal(b->pass_thread, pthread_self())) {
		if (!wait) {
			base_unlock(b);
			return -EBUSY;
		}
		b->waiters++;
		hrt__base_wait(b);
		b->waiters--;
		s = hrt__tset_state(t);
		if (st_base(s) != b) {          /* moved once it stopped running */
			base_unlock(b);
			if ((ret = lock_timer_base(t, &b, &s)) || !b)
				return ret;
		}
	}
	ret = cancel_queued(b, hrt__tset_of(s), t, s);
	base_unlock(b);
	return ret;
}

/* cancel_queued out of line, then the owner's half of the lock left if
 * `entered`: cancel_fast's tail for a tree timer or a new wake-up. */
static __attribute__((noinline)) int
cancel_out(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t, uintptr_t s,
	   int entered)
{
	int ret = cancel_queued(b, ts, t, s);

	if (entered)
		base_owner_exit(b);
	return ret;
}

/* cancel_queued, then the owner's half left if `entered`: a wheel timer
 * whose hard expiry is not the armed one is unlinked here, with no call. */
static inline __attribute__((always_inline)) int
cancel_fast(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t, uintptr_t s,
	    int entered)
{
	if (!hrt__tset_queued(s)) {
		if (entered)
			base_owner_exit(b);
		return 0;
	}
	if ((b->dev && (base_set_is_rel(b, ts) || b->armed <= 1 || t->hrt__hard <= b->armed)) ||
	    !hrt__tset_del_wheel(ts, t, s))
		return cancel_out(b, ts, t, s, entered);
	b->stats.cancels++;
	if (entered)
		base_owner_exit(b);
	return 1;
}

/* The owner on its single-thread base: no lock, and no callback of it
 * can be running in another thread; the owner of a default base's bias:
 * its half of the lock.  Inline in both cancels, the rest is
 * cancel_locked's. */
static inline __attribute__((always_inline)) int cancel(struct hrt_timer *t, int wait)
{
	struct hrt_base *b;
	struct hrt_tset *ts;
	uintptr_t s;

	if (!t)
		return -EINVAL;
	s = hrt__tset_state(t);
	ts = hrt__tset_of(s);
	if (!ts)
		return timer_guard(t, G_CHANGE, 0);    /* -EDEADLK in a walk, or 0 */
	b = base_of(ts);
	/* hrt__change_id is 0 in a walk callback: cancel_locked refuses. */
	if (b->unlocked) {
		if (b->owner == hrt__change_id)
			return cancel_fast(b, ts, t, s, 0);
	} else if (base_owner_enter_as(b, hrt__change_id)) {
		/* The bias's owner: its half of the lock; a timer that moved
		 * before it (even to b's other set), or whose callback runs in
		 * another thread, takes the full path. */
		s = hrt__tset_state(t);
		if (__builtin_expect(hrt__tset_of(s) == ts && b->running != t, 1))
			return cancel_fast(b, ts, t, s, 1);
		base_owner_exit(b);
	}
	return cancel_locked(t, wait);
}

HRT_EXTERN int hrt_timer_cancel(struct hrt_timer *t)
{
	return cancel(t, 1);
}

HRT_EXTERN int hrt_timer_try_cancel(struct hrt_timer *t)
{
	return cancel(t, 0);
}

/*
 * Under the base lock, so that a start from another thread (allowed while
 * the callback runs) cannot queue the timer between the "not queued" test
 * and the update: either forward sees it queued and refuses, or the start
 * overwrites what forward wrote.  A timer never started has no lock: its
 * owner is the only thread that can know it.
 */
HRT_EXTERN int64_t hrt_timer_forward(struct hrt_timer *t, hrt_time_t now, hrt_time_t interval)
{
	struct hrt_base *b;
	hrt_time_t soft, hard;
	uint64_t n = 0, q;
	uintptr_t s;
	int err = timer_guard(t, G_CHANGE, interval <= 0);

	if (err || (err = lock_timer_base(t, &b, &s)))
		return err;
	if (!b)
		s = hrt__tset_state(t);
	else if (base_set_is_rel(b, hrt__tset_of(s)))
		now = sat_add(now, -base_offset(b));    /* keys stay monotonic */
	soft = __atomic_load_n(&t->hrt__soft, __ATOMIC_RELAXED);
	hard = __atomic_load_n(&t->hrt__hard, __ATOMIC_RELAXED);
	if (hrt__tset_queued(s)) {
		err = -EBUSY;
	} else if (soft <= now) {
		/* Past the window it ran in (soft <= now), not only past hard:
		 * a range timer runs before its hard expiry, and moved only
		 * until hard > now it would be due again at once. */
		q = ((uint64_t)now - (uint64_t)soft) / (uint64_t)interval;  /* exact: now >= soft */
		n = q == UINT64_MAX ? q : q + 1;
		soft = add_intervals(soft, n, interval);
		hard = cap_hard(soft, add_intervals(hard, n, interval));
		__atomic_store_n(&t->hrt__soft, soft, __ATOMIC_RELAXED);
		__atomic_store_n(&t->hrt__hard, hard, __ATOMIC_RELAXED);
	}
	if (b)
		base_unlock(b);
	/* The count saturates; the expiries moved by the exact one. */
	return err ? err : n > INT64_MAX ? INT64_MAX : (int64_t)n;
}

/* Step 2 of the guard for a lock-free query of t. */
static inline int timer_query_guard(const struct hrt_timer *t, int bad)
{
	int err = timer_guard(t, G_QUERY, bad);

	return err ? err : timer_foreign(t) ? -EPERM : 0;
}

HRT_EXTERN int hrt_timer_is_queued(const struct hrt_timer *t)
{
	int err = timer_query_guard(t, 0);

	return err ? err : hrt__tset_queued(hrt__tset_state(t));
}

HRT_EXTERN int hrt_timer_is_running(const struct hrt_timer *t)
{
	struct hrt_base *b;
	uintptr_t s;
	int r = timer_guard(t, G_QUERY, 0);

	if (r)
		return r;
	b = st_base(hrt__tset_state(t));
	if (b && b == hrt__walking)     /* its lock is ours: t cannot move */
		return b->running == t;
	if ((r = lock_timer_base(t, &b, &s)) || !b)
		return r;
	r = b->running == t;
	base_unlock(b);
	return r;
}

/* An expiry in its base's clock: a relative timer's monotonic key moved
 * by the current offset. */
static hrt_time_t in_base_clock(const struct hrt_timer *t, hrt_time_t v)
{
	struct hrt_tset *ts = hrt__tset_of(hrt__tset_state(t));
	struct hrt_base *b = ts ? base_of(ts) : NULL;

	return b && base_set_is_rel(b, ts) ? base_from_mono(v, base_offset(b)) : v;
}

/* A timer never started answers too: hrt_timer_forward may have moved it. */
HRT_EXTERN int hrt_timer_get_soft(const struct hrt_timer *t, hrt_time_t *soft)
{
	int err = timer_query_guard(t, !soft);

	if (!err)
		*soft = in_base_clock(t, __atomic_load_n(&t->hrt__soft, __ATOMIC_RELAXED));
	return err;
}

HRT_EXTERN int hrt_timer_get_hard(const struct hrt_timer *t, hrt_time_t *hard)
{
	int err = timer_query_guard(t, !hard);

	if (!err)
		*hard = in_base_clock(t, __atomic_load_n(&t->hrt__hard, __ATOMIC_RELAXED));
	return err;
}

HRT_EXTERN int hrt_timer_get_base(const struct hrt_timer *t, struct hrt_base **base)
{
	int err = timer_query_guard(t, !base);
	struct hrt_base *b;

	if (err)
		return err;
	b = st_base(hrt__tset_state(t));
	if (!b)
		return -ENOENT;         /* never started */
	*base = b;
	return 0;
}

/* Step 5 of the guard, for hrt_base_loop: this thread runs a pass of b
 * (so it is in one of b's callbacks). */
int hrt__base_in_own_pass(struct hrt_base *b)
{
	int own;

	base_lock(b);
	own = hrt__tset_in_pass(&b->set) && pthread_equal(b->pass_thread, pthread_self());
	base_unlock(b);
	return own;
}
