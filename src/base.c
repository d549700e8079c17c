/* SPDX-License-Identifier: MIT */
/*
 * base.c - timer semantics: start, cancel, forward, the timer queries, the
 * expiry pass (leftmost run, then the greedy walk) and the base's settings.
 * The structure and locking of a base are base_priv.h's; the queued timers
 * are the timer set's (timerset.h), which this file drives through its
 * functions only.
 *
 * Every public call here takes the base lock (see base_priv.h) and drops it
 * around callbacks (forward too: a start from another thread may meet it
 * in a callback).  A callback runs with its timer off the set; the pass
 * holds no iterator across it and asks the set for "the next timer to run"
 * from scratch afterwards.  Every change of the set ends with
 * base_wakeup_update, which keeps the device (if any) armed for the
 * earliest hard expiry; the device's handler comes back through wakeup.c.
 */
#include <string.h>
#include <time.h>

#include "base_priv.h"

_Thread_local const struct hrt_base *hrt__walking HRT_TLS_IE;
unsigned hrt__fork_gen;

/* Pass numbers are unique across bases, so "ran in this pass" needs no
 * base comparison. */
static uint64_t pass_counter;

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

hrt_time_t hrt__clock_now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Settings ------------------------------------------------------------- */

HRT_EXTERN int hrt_base_set_greedy(struct hrt_base *b, enum hrt_greedy policy)
{
	int err = base_guard(b, G_CHANGE, policy != HRT_GREEDY_OFF &&
			     policy != HRT_GREEDY_IDLE && policy != HRT_GREEDY_ALWAYS);

	if (err)
		return err;
	__atomic_store_n(&b->greedy, (int)policy, __ATOMIC_RELAXED);
	return 0;
}

HRT_EXTERN int hrt_base_get_greedy(const struct hrt_base *b)
{
	int err = base_guard(b, G_QUERY, 0);

	return err ? err : __atomic_load_n(&b->greedy, __ATOMIC_RELAXED);
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
					      uintptr_t *sp)
{
	for (;;) {
		uintptr_t s = hrt__tset_state(t);
		struct hrt_base *ob = st_base(s);

		if (!ob && nb->unlocked) {     /* no RMW: the timer is this thread's */
			hrt__tset_bind(t, &nb->set);
			*sp = (uintptr_t)&nb->set;
			return nb;
		}
		if (!ob) {
			base_lock(nb);
			if (hrt__tset_claim(t, &nb->set, &s)) {
				*sp = (uintptr_t)&nb->set;
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

/* t (on b's set with state word s, b's lock held if it has one) queued
 * again at soft..hard: the fused re-queue, and the wake-up if b has a
 * device (tested first, so a base without one keeps nothing live). */
static inline __attribute__((always_inline)) void
requeue_own(struct hrt_base *b, struct hrt_timer *t, uintptr_t s, hrt_time_t soft,
	    hrt_time_t hard)
{
	hrt_time_t gone;

	b->stats.starts++;
	if (!b->dev) {
		hrt__tset_rearm(&b->set, t, s, soft, hard);
		return;
	}
	gone = gone_hard(t, s);
	hrt__tset_rearm(&b->set, t, s, soft, hard);
	wakeup_after(b, gone, hard);
}

/*
 * A timer that names a set was started once, so its callback is known to
 * be set (only hrt_timer_init writes it, and never NULL): the entry check
 * reads the state word first and the callback only of a new timer.  On
 * the owner's single-thread base, a timer already its own cannot move
 * under us: no lock, no chase, straight to the fused re-queue.
 */
HRT_EXTERN int hrt_timer_start_range(struct hrt_timer *t, struct hrt_base *nb,
				     hrt_time_t soft, hrt_time_t slack, enum hrt_mode mode)
{
	struct hrt_base *ob, *target;
	hrt_time_t hard;
	uintptr_t s = t ? hrt__tset_state(t) : 0;
	int err = base_guard(nb, G_CHANGE, !t || (!s && !t->hrt__fn) || slack < 0 ||
			     (mode != HRT_MODE_ABS && mode != HRT_MODE_REL));

	if (err)
		return err;
	if (mode == HRT_MODE_REL)
		soft = sat_add(base_now(nb), soft);
	hard = cap_hard(soft, sat_add(soft, slack));

	if (hrt__tset_of(s) == &nb->set) {
		if (nb->unlocked) {
			requeue_own(nb, t, s, soft, hard);
			return 0;
		}
		/* The bias's owner: the owner's half of the lock, and the
		 * state word read again under it. */
		if (base_owner_enter(nb)) {
			s = hrt__tset_state(t);
			if (__builtin_expect(hrt__tset_of(s) == &nb->set, 1)) {
				requeue_own(nb, t, s, soft, hard);
				base_owner_exit(nb);
				return 0;
			}
			base_owner_exit(nb);
		}
	}
	ob = lock_for_start(t, nb, &s);
	if (!ob)
		return -EPERM;
	/* A timer whose callback is running stays on its base (cancel must
	 * find the callback to wait for it). */
	target = ob != nb && ob->running == t ? ob : nb;
	if (ob == target) {
		requeue_own(ob, t, s, soft, hard);
		unlock_two(ob, nb);
		return 0;
	}
	if (hrt__tset_queued(s))
		hrt__tset_del(&ob->set, t, s);
	hrt__tset_forget_pass(t);
	__atomic_store_n(&t->hrt__soft, soft, __ATOMIC_RELAXED);
	__atomic_store_n(&t->hrt__hard, hard, __ATOMIC_RELAXED);
	hrt__tset_add(&target->set, t);
	base_wakeup_update(ob);
	target->stats.starts++;
	base_wakeup_update(target);
	unlock_two(ob, nb);
	return 0;
}

HRT_EXTERN int hrt_timer_start(struct hrt_timer *t, struct hrt_base *b,
			       hrt_time_t expiry, enum hrt_mode mode)
{
	return hrt_timer_start_range(t, b, expiry, 0, mode);
}

/* Lock held, t's state word s names b: off the set if queued. */
static inline int cancel_queued(struct hrt_base *b, struct hrt_timer *t, uintptr_t s)
{
	hrt_time_t gone;

	if (!hrt__tset_queued(s))
		return 0;
	b->stats.cancels++;
	if (!b->dev) {
		hrt__tset_del(&b->set, t, s);
		return 1;
	}
	gone = t->hrt__hard;
	hrt__tset_del(&b->set, t, s);
	wakeup_after(b, gone, HRT_TIME_MAX);
	return 1;
}

static __attribute__((noinline)) int cancel_locked(struct hrt_timer *t, int wait)
{
	struct hrt_base *b;
	uintptr_t s;
	int ret;

	if ((ret = lock_timer_base(t, &b, &s)) || !b)
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
	ret = cancel_queued(b, t, s);
	base_unlock(b);
	return ret;
}

/* The owner on its single-thread base: no lock, and no callback of it
 * can be running in another thread; the owner of a default base's bias:
 * its half of the lock.  Inline in both cancels, the rest is
 * cancel_locked's. */
static inline int cancel(struct hrt_timer *t, int wait)
{
	struct hrt_base *b;
	uintptr_t s;
	int ret = timer_guard(t, G_CHANGE, 0);

	if (ret)
		return ret;
	s = hrt__tset_state(t);
	b = st_base(s);
	if (!b)
		return 0;
	if (b->unlocked) {
		if (b->owner == hrt__thread_id)
			return cancel_queued(b, t, s);
	} else if (base_owner_enter(b)) {
		/* The bias's owner: its half of the lock; a timer that moved
		 * before it, or whose callback runs in another thread, takes
		 * the full path. */
		s = hrt__tset_state(t);
		if (__builtin_expect(st_base(s) == b && b->running != t, 1)) {
			ret = cancel_queued(b, t, s);
			base_owner_exit(b);
			return ret;
		}
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
	soft = __atomic_load_n(&t->hrt__soft, __ATOMIC_RELAXED);
	hard = __atomic_load_n(&t->hrt__hard, __ATOMIC_RELAXED);
	if (hrt__tset_queued(s)) {
		err = -EBUSY;
	} else if (hard <= now) {
		q = ((uint64_t)now - (uint64_t)hard) / (uint64_t)interval;  /* exact: now >= hard */
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

/* A timer never started answers too: hrt_timer_forward may have moved it. */
HRT_EXTERN int hrt_timer_get_soft(const struct hrt_timer *t, hrt_time_t *soft)
{
	int err = timer_query_guard(t, !soft);

	if (!err)
		*soft = __atomic_load_n(&t->hrt__soft, __ATOMIC_RELAXED);
	return err;
}

HRT_EXTERN int hrt_timer_get_hard(const struct hrt_timer *t, hrt_time_t *hard)
{
	int err = timer_query_guard(t, !hard);

	if (!err)
		*hard = __atomic_load_n(&t->hrt__hard, __ATOMIC_RELAXED);
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

/* The expiry pass --------------------------------------------------------- */

/* Lock held; t queued on b.  Runs its callback with the lock dropped. */
static void run_one(struct hrt_base *b, struct hrt_timer *t, hrt_time_t now)
{
	hrt_callback fn = t->hrt__fn;
	enum hrt_restart r;

	hrt__tset_take(&b->set, t);
	b->running = t;
	b->stats.expired++;
	if (now > t->hrt__hard) {       /* the pass came after the promise */
		uint64_t late = (uint64_t)now - (uint64_t)t->hrt__hard;

		b->stats.late++;
		if (late > b->stats.late_max_ns)
			b->stats.late_max_ns = late;
	}
	base_unlock(b);
	r = fn(t, now);
	base_lock(b);
	b->running = NULL;
	/* Only a timer the callback says is alive may be touched now: one that
	 * returned HRT_NORESTART may already be freed. */
	if (r == HRT_RESTART) {
		uintptr_t s = hrt__tset_state(t);

		if (!hrt__tset_queued(s) && st_base(s) == b) {
			hrt__tset_add(&b->set, t);
			b->stats.restarts++;
		}
	}
	if (b->waiters)
		pthread_cond_broadcast(&b->done);
}

/* Lock held (and held again on return): the pass at `now`, then the
 * re-arm; -EBUSY if a pass runs already (step 5 of the guard). */
ssize_t hrt__base_run_locked(struct hrt_base *b, hrt_time_t now, int idle)
{
	struct hrt_tset *ts = &b->set;
	struct hrt_timer *t;
	uint64_t id;
	ssize_t n = 0;
	int greedy;

	if (now > HRT_QUEUE_NOW_MAX)    /* soft expiries from here on mean never */
		now = HRT_QUEUE_NOW_MAX;
	if (hrt__tset_in_pass(ts))
		return -EBUSY;
	if (base_is_virtual(b) && now > b->vnow)
		__atomic_store_n(&b->vnow, now, __ATOMIC_RELAXED);
	b->pass_thread = pthread_self();
	/* An unlocked base counts its own (no RMW): a timer that moves to
	 * another base forgets its pass, so ids need only be unique per base. */
	id = b->unlocked ? hrt__tset_pass_id(ts) + 1
			 : __atomic_add_fetch(&pass_counter, 1, __ATOMIC_RELAXED);
	b->stats.passes++;
	hrt__tset_pass_begin(ts, id, now);

	/* Leftmost run: the stock kernel pass. */
	while ((t = hrt__tset_first_due(ts, now))) {
		run_one(b, t, now);
		n++;
	}

	greedy = __atomic_load_n(&b->greedy, __ATOMIC_RELAXED);    /* set_greedy: no lock */
	greedy = greedy == HRT_GREEDY_ALWAYS || (greedy == HRT_GREEDY_IDLE && idle);
	if (greedy) {
		b->stats.greedy_walks++;
		while ((t = hrt__tset_next_due(ts, now, &b->stats.nodes_visited))) {
			run_one(b, t, now);
			b->stats.expired_greedy++;
			n++;
		}
	}

	/* The pass is over: the restarted timers become plain in place, the
	 * pending ones join the queue in queueing order. */
	hrt__tset_pass_end(ts);
	base_wakeup_update(b);
	return n;
}

HRT_EXTERN ssize_t hrt_base_run(struct hrt_base *b, hrt_time_t now, int idle)
{
	ssize_t n = base_guard(b, G_CHANGE, 0);

	if (n)
		return n;
	base_lock(b);
	n = hrt__base_run_locked(b, now, idle);
	base_unlock(b);
	return n;
}

/* A query, but exactness may move the wheel's earliest timers into the
 * tree: a cache the lock covers, so the base is written through a cast
 * (it is malloc'ed, never defined const). */
HRT_EXTERN int hrt_base_next_event(const struct hrt_base *cb, hrt_time_t *when)
{
	struct hrt_base *b = (struct hrt_base *)cb;
	int err = base_guard(b, G_QUERY, !when), locked;

	if (err)
		return err;
	locked = query_lock(b);
	*when = hrt__tset_next(&b->set, 0);
	return query_unlock_count(b, locked) != 0;
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
