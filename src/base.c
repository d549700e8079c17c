/* SPDX-License-Identifier: MIT */
/*
 * base.c - timer semantics: start, cancel, forward and the timer queries
 * (the pass is pass.c's, the device's programming wakeup.c's, clocks
 * clock.c's, settings settings.c's).  The struct is base_priv.h's, the
 * guard guard.h's; the queued timers are the timer sets' (timerset.h),
 * which this file drives through their functions only.
 *
 * Every public call here takes the base lock and drops it around
 * callbacks (forward too: a start from another thread may meet it in a
 * callback).  The wake-up is lazy (wakeup.c): a start asks for it only if
 * its hard expiry comes before the instant the base's sleeper is sure to
 * wake by (wake_needed, one compare), and a cancel never does.
 *
 * Start and cancel have two tiers:
 *   fast  the owner of a single-thread base, or of a locked base's bias,
 *         on a timer already on the base's first set (or new), arguments
 *         the guard would pass: start_fast / cancel_fast, inline leaves
 *         that save no registers when the timer stays in the wheel and
 *         needs no earlier wake-up; else their one out-of-line tail,
 *         start_fast_tail / cancel_fast_tail, run with the owner's half
 *         of the lock held.  start_rel only reads the clock first.
 *   slow  everything else, out of line: start_slow / cancel_slow - the
 *         guard, both bases locked (lock_for_start, lock_timer_base), a
 *         relative start's set decided once, the re-queue or the move.
 * Both tiers re-queue through requeue_own and dequeue through
 * cancel_queued, so the rules live in one place each.
 */
#include <string.h>
#include <time.h>

#include "clock.h"
#include "expiry.h"
#include "guard.h"
#include "running.h"

/* A start on b's first set that queued hard expiry `came` needs an
 * earlier wake-up (hrt__wake_earlier).  One compare, and false on a base
 * with no device (wake.bound is HRT_WAKE_AWAKE there). */
#define wake_needed(b, came) ((came) < (b)->wake.bound)

/* The wake-up after a start queued hard expiry `came` on b's set ts: a
 * split base's relative set keys on another clock, moved here into b's. */
static inline void wake_after(struct hrt_base *b, struct hrt_tset *ts, hrt_time_t came)
{
	if (__builtin_expect(ts != &b->set, 0))
		came = key_to_base(came, set_offset(ts));
	if (wake_needed(b, came))
		hrt__wake_earlier(b, came);
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
 * base yet is bound to nb's set ns: a plain store on a single-thread base,
 * else a compare-and-swap, so two first starts on different bases cannot
 * both believe it is theirs.
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

/* Both tiers' queue changes ---------------------------------------------- */

/* t (on b's set ts with state word s, b's lock held) queued again at
 * soft..hard: the fused re-queue, and the wake-up if it needs one. */
static inline __attribute__((always_inline)) void
requeue_own(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t, uintptr_t s,
	    hrt_time_t soft, hrt_time_t hard)
{
	base_assert_locked(b);
	b->stats.starts++;
	hrt__tset_rearm(ts, t, s, soft, hard);
	verify_set(ts);
	wake_after(b, ts, hard);
}

/* Lock held, t cancelled (off ts): what its state word says from now on
 * (running.h), so that the next cancel needs no base - IDLE, or, from its
 * own callback (the only thread that can see it running here), RUN: its
 * base says when that ends, while it lives. */
static inline void mark_cancelled(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t)
{
	uintptr_t st = b->running == t ? HRT_ST_RUN : HRT_ST_IDLE;

	__atomic_store_n(&t->hrt__base_state, (uintptr_t)ts | st, __ATOMIC_RELEASE);
}

/* Lock held, t's state word s names b's set ts: off it if queued.  The
 * wake-up stays where it is (lazy: wakeup.c). */
static inline int cancel_queued(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t,
				uintptr_t s)
{
	base_assert_locked(b);
	if (!hrt__tset_queued(s)) {
		/* Marked, and a RUN one whose callback returned marked IDLE:
		 * the next cancel needs no look-up (running.h).  Never while
		 * another thread's callback runs it: that callback may free
		 * it. */
		if (!(s & (HRT_ST_IDLE | HRT_ST_RUN)) || ((s & HRT_ST_RUN) && b->running != t))
			mark_cancelled(b, ts, t);
		return 0;
	}
	b->stats.cancels++;
	hrt__tset_del(ts, t, s);
	mark_cancelled(b, ts, t);
	verify_set(ts);
	return 1;
}

/* Start, slow tier ------------------------------------------------------- */

/* What an absolute hrt_repeat_start keeps, stored by the slow tier under
 * its lock with the delay from the now it reads there. */
struct repeat_args {
	hrt_time_t interval;
};

/* What r keeps: relaxed atomics, as pass.c's restart reads them under
 * the lock, which a start on the fast tier does not take (a start that
 * races the callback's restart wins, whichever numbers the restart read). */
static inline void repeat_keep(struct hrt_repeat *r, hrt_time_t delay, hrt_time_t window,
			       hrt_time_t interval)
{
	__atomic_store_n(&r->hrt__delay, delay, __ATOMIC_RELAXED);
	__atomic_store_n(&r->hrt__window, window, __ATOMIC_RELAXED);
	__atomic_store_n(&r->hrt__interval, interval, __ATOMIC_RELAXED);
}

/*
 * Every start the fast tier leaves: the whole entry check, both bases
 * locked, then the re-queue in place or the move.  A relative start's set
 * is decided here, once ("POSIX magic" in the kernel's __hrtimer_setup):
 * on a split base it is keyed on the monotonic clock, in the relative set,
 * so a set of the wall clock leaves its length alone.  A timer that names
 * a set was started once, so its callback is known to be set (only
 * hrt_timer_init writes it, and never NULL): the check reads the state
 * word first and the callback only of a new timer.
 */
static __attribute__((noinline)) int
start_slow(struct hrt_timer *t, struct hrt_base *nb, hrt_time_t soft, hrt_time_t slack,
	   enum hrt_mode mode, const struct repeat_args *ra)
{
	struct hrt_base *ob, *target;
	struct hrt_tset *os, *ts;
	hrt_time_t hard, now = 0;
	uintptr_t s = t ? hrt__tset_state(t) : 0;
	int rel, err = base_guard(nb, G_CHANGE, !t || (!s && !t->hrt__fn) || slack < 0 ||
				  (mode != HRT_MODE_ABS && mode != HRT_MODE_REL));

	if (err)
		return err;
	rel = mode == HRT_MODE_REL && nb->split;
	if (mode == HRT_MODE_REL || ra)
		now = rel ? base_mono_now(nb) : base_now(nb);
	if (mode == HRT_MODE_REL)
		soft = sat_add(now, soft);
	hard = cap_hard(soft, sat_add(soft, slack));

	ob = lock_for_start(t, nb, rel ? nb->rel : &nb->set, &s);
	if (!ob)
		return -EPERM;
	/* A timer whose callback is running stays on its base (cancel must
	 * find the callback to wait for it) - so the instant, computed on
	 * nb's clock, must mean the same there (hrt.h: -EXDEV).  Bases of one
	 * time line are split alike, so the set kind carries over. */
	target = ob != nb && ob->running == t ? ob : nb;
	if (target == ob && ob != nb && !same_time_line(ob, nb)) {
		unlock_two(ob, nb);
		return -EXDEV;
	}
	if (ra)                         /* under the lock the restart reads them under */
		repeat_keep(HRT_CONTAINER_OF(t, struct hrt_repeat, timer), sat_sub(soft, now),
			    slack, ra->interval);
	os = hrt__tset_of(s);
	ts = rel && target->split ? target->rel : &target->set;
	if (os == ts) {
		requeue_own(ob, ts, t, s, soft, hard);
		unlock_two(ob, nb);
		return 0;
	}
	/* Onto another base, or between a split base's two sets.  Those share
	 * the pass number, so a timer that ran in this pass stays excluded
	 * from the other set's searches; only another base sees it new. */
	if (hrt__tset_queued(s)) {
		hrt__tset_del(os, t, s);
		verify_set(os);
	}
	if (target != ob)
		hrt__tset_forget_pass(t);
	__atomic_store_n(&t->hrt__soft, soft, __ATOMIC_RELAXED);
	__atomic_store_n(&t->hrt__hard, hard, __ATOMIC_RELAXED);
	hrt__tset_add(ts, t);
	verify_set(ts);
	target->stats.starts++;
	wake_after(target, ts, hard);  /* ob lost one: its wake-up may stay */
	unlock_two(ob, nb);
	return 0;
}

/* Start, fast tier -------------------------------------------------------- */

/* requeue_own out of line, then the owner's half of the lock left if
 * `entered`: start_fast's tail for a tree timer or a new wake-up. */
static __attribute__((noinline)) int
start_fast_tail(struct hrt_timer *t, struct hrt_base *b, hrt_time_t soft, hrt_time_t hard,
		uintptr_t s, int entered)
{
	requeue_own(b, &b->set, t, s, soft, hard);
	if (entered)
		base_owner_exit(b);
	return 0;
}

/* Lock held, t on b's first set: requeue_own where it is a wheel link or
 * move that needs no earlier wake-up.  1 if done; 0, nothing changed,
 * otherwise. */
static inline __attribute__((always_inline)) int
requeue_fast(struct hrt_base *b, struct hrt_timer *t, uintptr_t s, hrt_time_t soft,
	     hrt_time_t hard)
{
	base_assert_locked(b);
	if (wake_needed(b, hard))
		return 0;
	if (!hrt__tset_rearm_wheel(&b->set, t, s, soft, hard))
		return 0;
	verify_set(&b->set);
	b->stats.starts++;
	return 1;
}

/*
 * An absolute start (soft given) of a timer already on nb's first set,
 * by the owner of a single-thread base or of the default base's bias,
 * needs no lock, no chase and, for a wheel timer, no call: a leaf that
 * saves no registers.  Any other case, arguments the entry check would
 * refuse and a walk callback's start included (hrt__change_id is 0 there),
 * leaves for start_slow (nothing done yet) or, lock held, for
 * start_fast_tail; both are tail calls.
 */
static inline __attribute__((always_inline)) int
start_fast(struct hrt_timer *t, struct hrt_base *nb, hrt_time_t soft, hrt_time_t slack)
{
	hrt_time_t hard;
	uintptr_t s;

	if (__builtin_expect(!t, 0) || __builtin_expect(!nb, 0) || __builtin_expect(slack < 0, 0))
		return start_slow(t, nb, soft, slack, HRT_MODE_ABS, NULL);
	if (__builtin_expect(__builtin_add_overflow(soft, slack, &hard), 0))
		return start_slow(t, nb, soft, slack, HRT_MODE_ABS, NULL);
	if (__builtin_expect(hard > HRT_QUEUE_NOW_MAX, 0))
		return start_slow(t, nb, soft, slack, HRT_MODE_ABS, NULL);
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
			return start_fast_tail(t, nb, soft, hard, s, 0);
		}
	} else if (base_owner_enter_as(nb, hrt__change_id)) {
		s = hrt__tset_state(t);
		if (__builtin_expect(hrt__tset_of(s) != &nb->set, 0)) {
			if (s || !t->hrt__fn || !hrt__tset_claim(t, &nb->set, &s)) {
				base_owner_exit(nb);
				return start_slow(t, nb, soft, hard - soft, HRT_MODE_ABS, NULL);
			}
			s = (uintptr_t)&nb->set;
		}
		if (!requeue_fast(nb, t, s, soft, hard))
			return start_fast_tail(t, nb, soft, hard, s, 1);
		base_owner_exit(nb);
		return 0;
	}
	return start_slow(t, nb, soft, hard - soft, HRT_MODE_ABS, NULL);
}

/* A relative start on a base whose clock is read directly: the clock,
 * then start_fast.  Refusals are start_slow's, which reads no clock
 * before its guard. */
static __attribute__((noinline)) int
start_rel(struct hrt_timer *t, struct hrt_base *nb, hrt_time_t delta, hrt_time_t slack,
	  enum hrt_mode mode)
{
	if (mode != HRT_MODE_REL || !t || !nb || nb->now_slow)
		return start_slow(t, nb, delta, slack, mode, NULL);
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

/* A relative start is a plain one with what r keeps stored first (and put
 * back if the start is refused: nothing done); an absolute one needs the
 * base's now for its delay, so takes the slow tier, which stores them
 * under its lock.  hrt_repeat_init is pass.c's, beside the restart. */
HRT_EXTERN int hrt_repeat_start(struct hrt_repeat *r, struct hrt_base *b, hrt_time_t first,
				hrt_time_t interval, hrt_time_t window, enum hrt_mode mode)
{
	struct repeat_args ra = { interval };
	hrt_time_t od, ow, oi;
	int err;

	if (!r || interval < 0)
		return -EINVAL;
	/* Another thread's unlocked base: the guard's -EPERM, nothing stored. */
	if (mode != HRT_MODE_REL || !b || base_foreign(b))
		return start_slow(&r->timer, b, first, window, mode, &ra);
	od = __atomic_load_n(&r->hrt__delay, __ATOMIC_RELAXED);
	ow = __atomic_load_n(&r->hrt__window, __ATOMIC_RELAXED);
	oi = __atomic_load_n(&r->hrt__interval, __ATOMIC_RELAXED);
	repeat_keep(r, first, window, interval);
	err = start(&r->timer, b, first, window, HRT_MODE_REL);
	if (__builtin_expect(err < 0, 0))
		repeat_keep(r, od, ow, oi);
	return err;
}

/* A relative start with what r keeps: the fast tier when it can.  The
 * base is the timer's (its state word names it): a timer moved meanwhile
 * by another thread is the caller's race, as with any start. */
HRT_EXTERN int hrt_repeat_again(struct hrt_repeat *r)
{
	struct hrt_base *b;
	int err = timer_guard(r ? &r->timer : NULL, G_CHANGE, 0);

	if (err)
		return err;
	b = st_base(hrt__tset_state(&r->timer));
	if (!b)
		return -ENOENT;         /* never started: no delay to take again */
	return start(&r->timer, b, __atomic_load_n(&r->hrt__delay, __ATOMIC_RELAXED),
		     __atomic_load_n(&r->hrt__window, __ATOMIC_RELAXED), HRT_MODE_REL);
}

/* Cancel, slow tier ------------------------------------------------------ */

/* The guard, t's base locked, a callback of t running in another thread
 * waited for (or -EBUSY without `wait`), then cancel_queued. */
static __attribute__((noinline)) int cancel_slow(struct hrt_timer *t, int wait)
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
		base_wait(b);
		s = hrt__tset_state(t);
		if (st_base(s) != b) {          /* moved once it stopped running */
			base_unlock(b);
			if ((ret = lock_timer_base(t, &b, &s)) || !b)
				return ret;
		}
	}
	if (b->running == t)            /* its own callback: the restart is void */
		b->running_stopped = 1;
	ret = cancel_queued(b, hrt__tset_of(s), t, s);
	base_unlock(b);
	return ret;
}

/* Cancel, fast tier -------------------------------------------------------- */

/* cancel_queued out of line, then the owner's half of the lock left if
 * `entered`: cancel_fast's tail for a tree timer or a new wake-up. */
static __attribute__((noinline)) int
cancel_fast_tail(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t, uintptr_t s,
		 int entered)
{
	int ret = cancel_queued(b, ts, t, s);

	if (entered)
		base_owner_exit(b);
	return ret;
}

/* cancel_queued, then the owner's half left if `entered`: a wheel timer
 * is unlinked here, with no call. */
static inline __attribute__((always_inline)) int
cancel_fast(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t, uintptr_t s,
	    int entered)
{
	base_assert_locked(b);
	if (!hrt__tset_queued(s)) {
		if (entered)
			base_owner_exit(b);
		return 0;
	}
	if (!hrt__tset_del_wheel(ts, t, s))
		return cancel_fast_tail(b, ts, t, s, entered);
	mark_cancelled(b, ts, t);
	verify_set(ts);
	b->stats.cancels++;
	if (entered)
		base_owner_exit(b);
	return 1;
}

/* The owner on its single-thread base: no lock, and no callback of it
 * can be running in another thread; the owner of a default base's bias:
 * its half of the lock.  Inline in both cancels, the rest is
 * cancel_slow's. */
static inline __attribute__((always_inline)) int cancel(struct hrt_timer *t, int wait)
{
	struct hrt_base *b;
	struct hrt_tset *ts;
	uintptr_t s;

	if (!t)
		return -EINVAL;
	s = hrt__tset_state(t);
	ts = hrt__tset_of(s);
	/* Never started, or idle (running.h): answered from the timer, whose
	 * base may be freed. */
	if (!ts || hrt__run_state(s) == HRT_RUN_IDLE)
		return timer_guard(t, G_CHANGE, 0);    /* -EDEADLK in a walk, or 0 */
	b = base_of(ts);
	/* hrt__change_id is 0 in a walk callback: cancel_slow refuses. */
	if (b->unlocked) {
		if (b->owner == hrt__change_id) {
			if (__builtin_expect(b->running == t, 0))
				b->running_stopped = 1;         /* as cancel_slow */
			return cancel_fast(b, ts, t, s, 0);
		}
	} else if (base_owner_enter_as(b, hrt__change_id)) {
		/* The bias's owner: its half of the lock; a timer that moved
		 * before it (even to b's other set), or whose callback runs in
		 * another thread, takes the slow tier. */
		s = hrt__tset_state(t);
		if (__builtin_expect(hrt__tset_of(s) == ts && b->running != t, 1))
			return cancel_fast(b, ts, t, s, 1);
		base_owner_exit(b);
	}
	return cancel_slow(t, wait);
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
	uint64_t n = 0;
	uintptr_t s;
	int err = timer_guard(t, G_CHANGE, interval <= 0);

	if (err || (err = lock_timer_base(t, &b, &s)))
		return err;
	if (!b)
		s = hrt__tset_state(t);
	else
		now = sat_add(now, -set_offset(hrt__tset_of(s)));       /* into the set's keys */
	soft = __atomic_load_n(&t->hrt__soft, __ATOMIC_RELAXED);
	hard = __atomic_load_n(&t->hrt__hard, __ATOMIC_RELAXED);
	if (hrt__tset_queued(s)) {
		err = -EBUSY;
	} else if ((n = expiry_advance(&soft, &hard, now, interval))) {
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

/* Not queued, and idle or running by running.h's word: answered without
 * the base (which may be freed). */
HRT_EXTERN int hrt_timer_is_queued(const struct hrt_timer *t)
{
	int err = timer_guard(t, G_QUERY, 0);
	uintptr_t s;

	if (err)
		return err;
	s = hrt__tset_state(t);
	if (!hrt__tset_queued(s) && (s & (HRT_ST_IDLE | HRT_ST_RUN)))
		return 0;
	return timer_foreign(t) ? -EPERM : hrt__tset_queued(s);
}

HRT_EXTERN int hrt_timer_is_running(const struct hrt_timer *t)
{
	struct hrt_base *b;
	uintptr_t s;
	int r = timer_guard(t, G_QUERY, 0);

	if (r)
		return r;
	s = hrt__tset_state(t);
	if (hrt__run_state(s) == HRT_RUN_IDLE)
		return 0;
	b = st_base(hrt__tset_state(t));
	if (b && b == hrt__walking)     /* its lock is ours: t cannot move */
		return b->running == t;
	if ((r = lock_timer_base(t, &b, &s)) || !b)
		return r;
	r = b->running == t;
	base_unlock(b);
	return r;
}

/* An expiry in its base's clock: a key moved by its set's offset. */
static hrt_time_t in_base_clock(const struct hrt_timer *t, hrt_time_t v)
{
	struct hrt_tset *ts = hrt__tset_of(hrt__tset_state(t));

	return ts ? key_to_base(v, set_offset(ts)) : v;
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
