/* SPDX-License-Identifier: MIT */
/*
 * pass.c - the expiry pass (leftmost run, then the greedy walk) over a
 * base's timer sets, its entry points (hrt_base_run; the device's handler
 * hrt__base_wakeup, which hrt_base_dispatch and the loop call) and the
 * next event.  A pass runs every set against its own clock's now (a split
 * base's relative set is keyed on CLOCK_MONOTONIC: clock.h) and takes the
 * sets' candidates in one order, by hard expiry in the base's clock.
 */
#include <string.h>

#include "clock.h"
#include "expiry.h"
#include "guard.h"
#include "running.h"

/* Pass numbers are unique across bases, so "ran in this pass" needs no
 * base comparison. */
static uint64_t pass_counter;

/* A struct hrt_repeat's callback: the caller's, through its struct.  Its
 * address marks the timer as one (run_one). */
static enum hrt_restart repeat_fire(struct hrt_timer *t, hrt_time_t now)
{
	struct hrt_repeat *r = HRT_CONTAINER_OF(t, struct hrt_repeat, timer);

	return r->hrt__fn(t, now);
}

HRT_EXTERN int hrt_repeat_init(struct hrt_repeat *r, hrt_callback fn)
{
	int err = timer_guard(r ? &r->timer : NULL, G_QUERY, !fn);    /* touches no base */

	if (err)
		return err;
	memset(r, 0, sizeof(*r));
	r->timer.hrt__fn = repeat_fire;
	r->hrt__fn = fn;
	return 0;
}

/*
 * The periods of r's grid due by `now`, from its soft expiry: what its
 * restart at `now` moves past (repeat_next, expiry_advance), so in the
 * callback the periods elapsed since its last run - GCD's
 * dispatch_source_get_data.  Lock-free, as hrt_timer_get_soft: nothing is
 * stored per run (a struct hrt_repeat has no word to spare, and the pass
 * writes nothing for it).
 */
HRT_EXTERN int64_t hrt_repeat_periods(const struct hrt_repeat *r, hrt_time_t now)
{
	const struct hrt_timer *t = r ? &r->timer : NULL;
	/* hrt_repeat_init's callback says it is one (an hrt_timer_init of
	 * its timer made it plain): its interval word means something. */
	int err = timer_guard(t, G_QUERY, t && t->hrt__fn != repeat_fire);
	hrt_time_t soft, hard = 0, iv;
	struct hrt_tset *ts;
	uint64_t n;

	if (err)
		return err;
	ts = hrt__tset_of(hrt__tset_state(t));
	if (!ts)
		return -ENOENT;         /* never started: no grid */
	if (base_foreign(base_of(ts)))
		return -EPERM;
	soft = __atomic_load_n(&t->hrt__soft, __ATOMIC_RELAXED);
	iv = __atomic_load_n(&r->hrt__interval, __ATOMIC_RELAXED);
	now = base_to_key(now, set_offset(ts));         /* into the set's keys */
	if (iv <= 0)                                    /* once: one period */
		return soft <= now;
	n = expiry_advance(&soft, &hard, now, iv);
	return n > INT64_MAX ? INT64_MAX : (int64_t)n;
}

/* Lock held, t a struct hrt_repeat's timer whose callback asked for a
 * restart at `now` (its set's clock): on to the next period after now,
 * from the first soft expiry on, so no drift and never twice in a window
 * (what hrt_timer_forward does for the README's idiom). */
static void repeat_next(struct hrt_timer *t, hrt_time_t now)
{
	struct hrt_repeat *r = HRT_CONTAINER_OF(t, struct hrt_repeat, timer);
	hrt_time_t iv = __atomic_load_n(&r->hrt__interval, __ATOMIC_RELAXED);
	hrt_time_t soft = t->hrt__soft, hard = t->hrt__hard;

	if (iv > 0 && expiry_advance(&soft, &hard, now, iv)) {
		__atomic_store_n(&t->hrt__soft, soft, __ATOMIC_RELAXED);
		__atomic_store_n(&t->hrt__hard, hard, __ATOMIC_RELAXED);
	}
}

/* Lock held; t queued on ts of b.  Runs its callback with the lock
 * dropped; `now` is the set's clock's, `cb_now` the base's (what the
 * callback is told, so it can compare with hrt_base_now). */
static void run_one(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t,
		    hrt_time_t now, hrt_time_t cb_now)
{
	hrt_callback fn = t->hrt__fn;
	enum hrt_restart r;

	base_assert_locked(b);
	hrt__tset_take(ts, t);
	verify_set(ts);
	/* Marked before the lock drops: a cancel that finds the timer not
	 * queued asks the base whether its callback runs (running.h). */
	hrt__run_mark(t, ts);
	b->running = t;
	b->running_stopped = 0;
	b->stats.expired++;
	if (now > t->hrt__hard) {       /* the pass came after the promise */
		uint64_t late = (uint64_t)now - (uint64_t)t->hrt__hard;

		b->stats.late++;
		if (late > b->stats.late_max_ns)
			b->stats.late_max_ns = late;
	}
	base_unlock(b);
	r = fn(t, cb_now);
	base_lock(b);
	b->running = NULL;
	/* Only a timer the callback says is alive may be touched now: one that
	 * returned HRT_NORESTART, or cancelled itself (a close that frees it
	 * next), may already be freed.  It goes back onto the set it is on now
	 * (a start from the callback may have moved it). */
	if (r == HRT_RESTART && !b->running_stopped) {
		uintptr_t s = hrt__tset_state(t);

		if (!hrt__tset_queued(s) && st_base(s) == b) {
			if (fn == repeat_fire)
				repeat_next(t, hrt__tset_of(s) == ts ? now :
					    base_to_key(cb_now, set_offset(hrt__tset_of(s))));
			hrt__tset_add(hrt__tset_of(s), t);
			verify_set(hrt__tset_of(s));
			b->stats.restarts++;
		}
	}
	hrt__bl_wake(&b->bl);
}

/*
 * Of every set's candidate, the one that runs first, into *on: each set's
 * first timer in queue order (leftmost: NULL unless it is due - soft-due,
 * or hard-due for LM_HARD - which ends the run) or its next soft-due one
 * (the greedy walk), compared by hard expiry in the base's clock, the
 * earlier set on a tie - one order over all sets, as the kernel's pass
 * over its clock bases.  Each set searches at its own now (set at
 * pass_begin).  The first set's offset is 0, so its keys need no
 * conversion: a base with one set pays one test.  Queue order is by hard
 * expiry, so the hard-due timers are the leftmost run's first part.
 */
#define LM_GREEDY 0
#define LM_SOFT   1
#define LM_HARD   2
static struct hrt_timer *first_of_sets(struct hrt_base *b, int leftmost, hrt_time_t urgent,
				       struct hrt_tset **on)
{
	struct hrt_timer *t = NULL, *c;
	hrt_time_t best = HRT_TIME_MAX, v = HRT_TIME_MAX;
	/* Where a set's run ends matters only beside another set (and costs
	 * a search of its wheel). */
	hrt_time_t *ends = base_set_after(b, &b->set) ? &v : NULL;

	base_for_each_set(b, ts) {
		if (leftmost) {
			c = hrt__tset_first_due(ts, hrt__tset_pass_now(ts), ends);
			if (c && leftmost == LM_HARD &&
			    c->hrt__hard > sat_add(hrt__tset_pass_now(ts), urgent))
				c = NULL;
		} else {
			c = hrt__tset_next_due(ts, hrt__tset_pass_now(ts), &b->stats.nodes_visited);
			v = c ? c->hrt__hard : HRT_TIME_MAX;
		}
		if (ts != &b->set) {
			v = key_to_base(v, set_pass_offset(ts));
			if (v >= best)
				continue;
		}
		best = v;
		t = c;
		*on = ts;
	}
	return t;
}

/* The pass's bounds, read as it begins: the user's (hrt_base_set_pass_limit,
 * every callback) and the loops' default budget (HRT_PASS_YIELD: soft-due
 * callbacks only). */
struct pass_limit {
	unsigned max_run;               /* 0: none */
	hrt_time_t until;               /* CLOCK_MONOTONIC; HRT_TIME_MAX: none */
	hrt_time_t yield;               /* the same, for soft-due timers */
};

/* The hosts' budget after a pass it bounded (base.h): doubled, up to the
 * maximum, if it cut the pass; the default again if not. */
static hrt_time_t budget_next(hrt_time_t cur, int cut)
{
	if (!cut)
		return 0;
	cur = cur ? cur : HRT_PASS_BUDGET_NS;
	return cur >= HRT_PASS_BUDGET_MAX_NS / 2 ? HRT_PASS_BUDGET_MAX_NS : 2 * cur;
}

/* The bound reached after n callbacks, with another one to run (`soft`:
 * a soft-due one, which the budget also bounds): the pass ends (at least
 * one runs in every pass). */
static int pass_cut(const struct pass_limit *pl, ssize_t n, int soft)
{
	hrt_time_t end = soft && pl->yield < pl->until ? pl->yield : pl->until;

	return (pl->max_run && (size_t)n >= pl->max_run) ||
	       (end != HRT_TIME_MAX && hrt__clock_now(CLOCK_MONOTONIC) >= end);
}

/* Lock held (and held again on return): the pass at `now` of the kind
 * `how` (base.h: HRT_PASS_*), then the re-arm; -EBUSY if a pass runs
 * already (step 5 of the guard). */
ssize_t hrt__base_run_locked(struct hrt_base *b, hrt_time_t now, int how)
{
	struct pass_limit pl;
	struct hrt_tset *on;
	struct hrt_timer *t;
	hrt_time_t max_ns, t0, urgent;
	uint64_t id;
	ssize_t n = 0;
	int greedy, cut = 0;

	base_assert_locked(b);
	if (now > HRT_QUEUE_NOW_MAX)    /* soft expiries from here on mean never */
		now = HRT_QUEUE_NOW_MAX;
	if (hrt__tset_in_pass(&b->set))
		return -EBUSY;
	/* The policy as the pass begins (set_greedy takes no lock): one a
	 * callback sets takes effect at the next pass, as hrt.h says. */
	greedy = __atomic_load_n(&b->greedy, __ATOMIC_RELAXED);
	greedy = !(how & HRT_PASS_HARD) && (greedy == HRT_GREEDY_ALWAYS ||
					    (greedy == HRT_GREEDY_IDLE && (how & HRT_PASS_IDLE)));
	pl.max_run = __atomic_load_n(&b->pass_max_run, __ATOMIC_RELAXED);
	max_ns = __atomic_load_n(&b->pass_max_ns, __ATOMIC_RELAXED);
	pl.until = pl.yield = HRT_TIME_MAX;
	/* The user's limit replaces the default budget. */
	if (max_ns || ((how & HRT_PASS_YIELD) && !pl.max_run)) {
		t0 = hrt__clock_now(CLOCK_MONOTONIC);
		if (max_ns)
			pl.until = sat_add(t0, max_ns);
		else
			pl.yield = sat_add(t0, b->pass_budget ? b->pass_budget : HRT_PASS_BUDGET_NS);
	}
	if (base_is_virtual(b) && now > b->vnow)
		__atomic_store_n(&b->vnow, now, __ATOMIC_RELAXED);
	b->pass_thread = pthread_self();
	/* An unlocked base counts its own (no RMW): a timer that moves to
	 * another base forgets its pass, so ids need only be unique per base. */
	id = b->unlocked ? hrt__tset_pass_id(&b->set) + 1
			 : __atomic_add_fetch(&pass_counter, 1, __ATOMIC_RELAXED);
	b->stats.passes++;
	/* `now` is the caller's instant of the base's clock: each set's now is
	 * that instant of its own clock, by its offset at this moment. */
	if (b->split)
		hrt__base_sync_offset(b, 0);
	base_for_each_set(b, ts) {
		ts->pass_off = set_offset(ts);
		hrt__tset_pass_begin(ts, id, base_to_key(now, ts->pass_off));
		verify_set(ts);
	}

	/* Leftmost run: the stock kernel pass, over all sets in one order: it
	 * ends at the first timer of any that is not due.  Its hard-due part
	 * first, which the budget never cuts; the soft-due rest unless host
	 * work waits (HRT_PASS_HARD). */
	/* Beside a host, "hard-due" takes in those within HRT_PASS_URGENT_NS
	 * of it: the budget must not make a deferred timer late. */
	urgent = how & (HRT_PASS_HARD | HRT_PASS_YIELD) ? HRT_PASS_URGENT_NS : 0;
	while ((t = first_of_sets(b, LM_HARD, urgent, &on)) && !(cut = n && pass_cut(&pl, n, 0))) {
		run_one(b, on, t, hrt__tset_pass_now(on), now);
		n++;
	}
	while (!(how & HRT_PASS_HARD) && !cut && (t = first_of_sets(b, LM_SOFT, 0, &on)) &&
	       !(cut = n && pass_cut(&pl, n, 1))) {
		run_one(b, on, t, hrt__tset_pass_now(on), now);
		n++;
	}

	if (greedy && !cut) {
		b->stats.greedy_walks++;
		while ((t = first_of_sets(b, LM_GREEDY, 0, &on)) &&
		       !(cut = n && pass_cut(&pl, n, 1))) {
			run_one(b, on, t, hrt__tset_pass_now(on), now);
			b->stats.expired_greedy++;
			n++;
		}
	}
	b->stats.passes_cut += cut;     /* the rest stays due: hrt.h */
	if (pl.yield != HRT_TIME_MAX)
		b->pass_budget = budget_next(b->pass_budget, cut);

	/* The pass is over: the restarted timers become plain in place, the
	 * pending ones join the queue in queueing order. */
	base_for_each_set(b, ts) {
		hrt__tset_pass_end(ts);
		verify_set(ts);
	}
	hrt__wake_update(b);
	return n;
}

/*
 * One critical section per wake-up.  The clock is read after the device
 * was drained, so the pass never runs at an instant earlier than the
 * expiry that woke it: a late wake-up can only merge passes, never add
 * one.  What the event means (counted, due or not) is wakeup.c's.
 */
ssize_t hrt__base_wakeup(struct hrt_base *b, int event, int how)
{
	hrt_time_t now;
	ssize_t n = 0;
	int err;

	base_lock(b);
	now = base_now(b);
	if (hrt__wake_event(b, event, now))
		n = hrt__base_run_locked(b, now, how);   /* re-arms at its end */
	else
		hrt__wake_update(b);    /* retries an arm that failed */
	err = hrt__wake_err(b);
	base_unlock(b);
	return err ? err : n;
}

ssize_t hrt__base_dispatch(struct hrt_base *b, int how, int *read_err)
{
	int err, ev;

	*read_err = 0;
	if ((err = base_guard(b, G_FD, 0)))
		return err;
	ev = hrt__wake_ack(b);
	if (ev < 0 && ev != -ECANCELED) {       /* EBADF: the host closed our fd */
		*read_err = ev;
		return ev;
	}
	return hrt__base_wakeup(b, ev, how);
}

/*
 * hrt_base_plan_sleep's pass, in one critical section: refused (-EBUSY,
 * nothing made) while hrt_base_loop has the device or from a callback of
 * this thread's pass of b; else the timerfd made, read only if it may have
 * fired, and a pass of kind `how` if it fired, something is hard-due, an
 * arm failed, or - coalescing - the timers' window has opened (the host
 * woke for it, or for anything else once it had).  The callbacks run, or
 * -errno.
 */
ssize_t hrt__base_pass_due(struct hrt_base *b, int how)
{
	hrt_time_t now, owner, soft, hard;
	ssize_t n = 0;
	int ev, due;

	base_lock(b);
	if (b->wake.who == HRT_WAKE_LOOP ||
	    (hrt__tset_in_pass(&b->set) && pthread_equal(b->pass_thread, pthread_self()))) {
		n = -EBUSY;
		goto out;
	}
	if ((ev = hrt__wake_dev_locked(b)) < 0) {
		n = ev;
		goto out;
	}
	now = base_now(b);
	ev = hrt__wake_ack_due(b, now);
	if (ev < 0 && ev != -ECANCELED) {       /* EBADF: the host closed our fd */
		n = ev;
		goto out;
	}
	due = hrt__wake_event(b, ev, now);
	if (!due && __atomic_load_n(&b->coalesce, __ATOMIC_RELAXED) == 1)
		due = hrt__wake_window(b, &owner, &soft, &hard) && soft <= now;
	if (due)
		n = hrt__base_run_locked(b, now, how);
	else
		hrt__wake_update(b);
	if ((ev = hrt__wake_err(b)))
		n = ev;
out:
	base_unlock(b);
	return n;
}

HRT_EXTERN ssize_t hrt_base_dispatch(struct hrt_base *b, int idle)
{
	int read_err;

	return hrt__base_dispatch(b, idle ? HRT_PASS_IDLE : 0, &read_err);
}

HRT_EXTERN ssize_t hrt_base_run(struct hrt_base *b, hrt_time_t now, int idle)
{
	ssize_t n = base_guard(b, G_CHANGE, 0);

	if (n)
		return n;
	base_lock(b);
	n = hrt__base_run_locked(b, now, idle ? HRT_PASS_IDLE : 0);
	base_unlock(b);
	return n;
}

/* A query, but exactness may move the wheel's earliest timers into the
 * tree: a cache the lock covers, so the base is written through a cast
 * (it is malloc'ed, never defined const).  Both sets, in the base's clock. */
HRT_EXTERN int hrt_base_next_event(const struct hrt_base *cb, hrt_time_t *when)
{
	struct hrt_base *b = (struct hrt_base *)cb;
	int err = base_guard(b, G_QUERY, !when), locked;

	if (err)
		return err;
	locked = query_lock(b);
	*when = hrt__base_next(b);
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
