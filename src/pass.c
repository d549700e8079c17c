/* SPDX-License-Identifier: MIT */
/*
 * pass.c - the expiry pass (leftmost run, then the greedy walk) over a
 * base's timer sets, and the next event.  A split base (a real
 * CLOCK_REALTIME one) has two: its absolute timers, keyed on the wall
 * clock, and its relative ones, keyed on CLOCK_MONOTONIC; the pass runs
 * each set against its own clock's now and takes, of the two sets'
 * candidates, the one with the earlier hard expiry in the base's clock
 * (the absolute one on a tie).  Every other base has one set.
 */
#include "base_priv.h"

/* Pass numbers are unique across bases, so "ran in this pass" needs no
 * base comparison. */
static uint64_t pass_counter;

/* Lock held; t queued on ts of b.  Runs its callback with the lock
 * dropped; `now` is the set's clock's, `cb_now` the base's (what the
 * callback is told, so it can compare with hrt_base_now). */
static void run_one(struct hrt_base *b, struct hrt_tset *ts, struct hrt_timer *t,
		    hrt_time_t now, hrt_time_t cb_now)
{
	hrt_callback fn = t->hrt__fn;
	enum hrt_restart r;

	hrt__tset_take(ts, t);
	b->running = t;
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
	 * returned HRT_NORESTART may already be freed.  It goes back onto the
	 * set it is on now (a start from the callback may have moved it). */
	if (r == HRT_RESTART) {
		uintptr_t s = hrt__tset_state(t);

		if (!hrt__tset_queued(s) && st_base(s) == b) {
			hrt__tset_add(hrt__tset_of(s), t);
			b->stats.restarts++;
		}
	}
	if (b->waiters)
		pthread_cond_broadcast(&b->done);
}

/* The two sets' candidates a and r (either may be NULL): which runs
 * first, into *ts.  off turns r's monotonic key into the base's clock. */
static struct hrt_timer *pick(struct hrt_base *b, struct hrt_timer *a, struct hrt_timer *r,
			      hrt_time_t off, struct hrt_tset **ts)
{
	if (r && (!a || base_from_mono(r->hrt__hard, off) < a->hrt__hard)) {
		*ts = b->rel;
		return r;
	}
	*ts = &b->set;
	return a;
}

/* A split base's leftmost run: of its two sets' first timers in queue
 * order, the one with the earlier hard expiry in the base's clock (the
 * absolute one on a tie), if it is due; else NULL, the run is over.  (Each
 * set's own due candidate alone would run a relative timer behind an
 * absolute one that is not due.) */
static struct hrt_timer *leftmost_both(struct hrt_base *b, hrt_time_t now, hrt_time_t mnow,
				       hrt_time_t off, struct hrt_tset **on)
{
	hrt_time_t ea, er;
	struct hrt_timer *a = hrt__tset_first_due(&b->set, now, &ea);
	struct hrt_timer *r = hrt__tset_first_due(b->rel, mnow, &er);

	if (er != HRT_TIME_MAX && (ea == HRT_TIME_MAX || base_from_mono(er, off) < ea)) {
		*on = b->rel;
		return r;
	}
	*on = &b->set;
	return a;
}

/* Lock held (and held again on return): the pass at `now`, then the
 * re-arm; -EBUSY if a pass runs already (step 5 of the guard). */
ssize_t hrt__base_run_locked(struct hrt_base *b, hrt_time_t now, int idle)
{
	struct hrt_tset *ts = &b->set, *rel = b->split ? b->rel : NULL, *on;
	struct hrt_timer *t;
	hrt_time_t off = 0, mnow = 0;
	uint64_t id;
	ssize_t n = 0;
	int greedy;

	if (now > HRT_QUEUE_NOW_MAX)    /* soft expiries from here on mean never */
		now = HRT_QUEUE_NOW_MAX;
	if (hrt__tset_in_pass(ts))
		return -EBUSY;
	/* The policy as the pass begins (set_greedy takes no lock): one a
	 * callback sets takes effect at the next pass, as hrt.h says. */
	greedy = __atomic_load_n(&b->greedy, __ATOMIC_RELAXED);
	greedy = greedy == HRT_GREEDY_ALWAYS || (greedy == HRT_GREEDY_IDLE && idle);
	if (base_is_virtual(b) && now > b->vnow)
		__atomic_store_n(&b->vnow, now, __ATOMIC_RELAXED);
	b->pass_thread = pthread_self();
	/* An unlocked base counts its own (no RMW): a timer that moves to
	 * another base forgets its pass, so ids need only be unique per base. */
	id = b->unlocked ? hrt__tset_pass_id(ts) + 1
			 : __atomic_add_fetch(&pass_counter, 1, __ATOMIC_RELAXED);
	b->stats.passes++;
	hrt__tset_pass_begin(ts, id, now);
	if (rel) {
		/* `now` is the caller's instant of the wall clock: the same
		 * instant of the monotonic one, by the offset at this moment. */
		hrt__base_sync_offset(b, 0);
		off = base_offset(b);
		if (__builtin_sub_overflow(now, off, &mnow) || mnow > HRT_QUEUE_NOW_MAX)
			mnow = off > 0 ? INT64_MIN : HRT_QUEUE_NOW_MAX;
		hrt__tset_pass_begin(rel, id, mnow);
	}

	/* Leftmost run: the stock kernel pass (one per clock base there),
	 * over both sets of a split base in one order: it ends at the first
	 * timer of either that is not due. */
	for (;;) {
		if (rel) {
			t = leftmost_both(b, now, mnow, off, &on);
		} else {
			t = hrt__tset_first_due(ts, now, NULL);
			on = ts;
		}
		if (!t)
			break;
		run_one(b, on, t, on == ts ? now : mnow, now);
		n++;
	}

	if (greedy) {
		b->stats.greedy_walks++;
		for (;;) {
			t = hrt__tset_next_due(ts, now, &b->stats.nodes_visited);
			if (rel)
				t = pick(b, t, hrt__tset_next_due(rel, mnow, &b->stats.nodes_visited),
					 off, &on);
			else
				on = ts;
			if (!t)
				break;
			run_one(b, on, t, on == ts ? now : mnow, now);
			b->stats.expired_greedy++;
			n++;
		}
	}

	/* The pass is over: the restarted timers become plain in place, the
	 * pending ones join the queue in queueing order. */
	base_for_each_set(b, s)
		hrt__tset_pass_end(s);
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
 * (it is malloc'ed, never defined const).  Both sets, in the base's clock. */
HRT_EXTERN int hrt_base_next_event(const struct hrt_base *cb, hrt_time_t *when)
{
	struct hrt_base *b = (struct hrt_base *)cb;
	int err = base_guard(b, G_QUERY, !when), locked;

	if (err)
		return err;
	locked = query_lock(b);
	*when = base_next(b);
	return query_unlock_count(b, locked) != 0;
}
