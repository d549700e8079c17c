/* SPDX-License-Identifier: MIT */
/*
 * timerset.h - the queued timers of one base (internal; timerset.c), as
 * lib/timerqueue.c is for one hrtimer clock base, one level up: it orders
 * timers and answers searches, takes no lock and runs no callback.  Its
 * caller (the base) serialises every call and runs the callbacks.
 *
 * A set is four containers acting as one queue:
 *   queue  the main tree (queue.h), by hard expiry, FIFO among equals;
 *   pend   during a pass, the timers queued after a timer that already ran
 *          in it was re-queued (all later than everything in `queue`);
 *   ran[]  the restart marks: timers that ran in this pass and were
 *          re-queued into `queue` excluded (no search of the pass finds
 *          them), at most HRT_TSET_RAN_MAX, then `pend` takes over;
 *   wheel  far timers (wheel.h), moved into a tree before anything could
 *          need them there; its park holds, during a pass, far timers
 *          that ran in it and were queued again.
 * Its rules:
 *   S1  the tie rule (hrt.h): timers leave by hard expiry, equal hard
 *       expiries by soft expiry, equal both in the order they were queued,
 *       whichever container held them meanwhile.
 *   S2  once per pass: between hrt__tset_pass_begin and _end, no search
 *       returns a timer that was taken (hrt__tset_take) in that pass; no
 *       wheel slot holds one (it waits in the park), so the wheel's
 *       searches need not look.
 *   S3  a search at `now` after pass_begin(now) sees every timer it could
 *       return: the wheel holds none whose soft expiry is <= now.
 *
 * The timer's state word (hrt__base_state) is the set's: the set's address
 * (64-aligned) or'ed with HRT_TS_* bits; the set writes it, whoever owns
 * the set reads which set a timer is on from it, and finds itself through
 * `owner` (a base may hold more than one set).
 */
#ifndef HRT_TIMERSET_H
#define HRT_TIMERSET_H

#include "queue.h"
#include "wheel.h"

/*
 * Where a timer is, and what its words say there (hrt.h's struct
 * hrt_timer; hrt__tset_check checks what it can see):
 *   state  hrt__base_state: the set ts | HRT_TS_* (Q queued, P pending, W wheel)
 *   X      HRT_Q_EXCLUDED, bit 1 of hrt__pc (queue.h); "-": no meaning there
 *          (stale, or the wheel link's next pointer)
 *   word5  the union: hrt__subtree_soft in a tree (least soft expiry below,
 *          an excluded node counting as HRT_TIME_MAX), else hrt__ran_pass
 *   slot   hrt__off.hrt__slot = key | seq << 9 (W3); in a tree the same
 *          word is hrt__node.hrt__right
 *   seen   F first_due, D next_due, N next, Wi window, K walk, C count
 *
 *   place          state   X  word5         slot         seen
 *   unqueued       ts|0    -  ran_pass      stale        -
 *   main           ts|Q    0  subtree_soft  right child  F D N Wi K C
 *   main excluded  ts|Q    1  subtree_soft  right child  N C
 *   pend           ts|Q|P  0  subtree_soft  right child  F D N Wi K C
 *   pend excluded  ts|Q|P  1  subtree_soft  right child  N C
 *   wheel slot     ts|Q|W  -  ran_pass      key|seq      N Wi C, F (*)
 *   wheel park     ts|Q|W  -  ran_pass      PARK|seq     N C
 *   wheel out      ts|Q|W  -  ran_pass      old key|seq  - (inside a call)
 * unqueued: never started (state 0: no set), stopped, or taken and running
 *   its callback.  ran_pass: 0, or a pass of this base that took it; it
 *   ran in the current pass iff ran_pass == pass_id while in_pass.  Pass
 *   numbers rise on a set and a base's sets share them (pass.c), so
 *   ran_pass <= pass_id.
 * main, pend (not excluded): did not run in the current pass (del leaves
 *   ran_pass 0).  Excluded: ran in it (del restores ran_pass = pass_id).
 * main excluded: only in a pass; exactly the timers of ran[] (ran_n <=
 *   HRT_TSET_RAN_MAX).  pend excluded: not in ran[].
 * pend: non-empty only in a pass; its timers were all queued after those
 *   of `queue` (once pend is non-empty, every tree add of the pass goes
 *   there): a full tie goes to `queue` (S1).
 * wheel slot: soft expiry past the horizon (W1), so D never needs it (S3);
 *   ran_pass kept by every wheel move; did not run in the current pass.
 *   (*) F never returns it: one with an earlier hard expiry ends the run.
 * wheel park: only in a pass; ran in it (ran_pass == pass_id), soft
 *   expiry past the horizon.  pass_end moves it to its slot.
 * wheel out: taken off its slot onto a list local to pass_begin or
 *   gather, still in wheel.count, until add_out puts it in a tree.
 *
 * Moves:
 *   hrt__tset_bind, _claim: no set (state 0) -> unqueued
 *   hrt__tset_add:      unqueued -> wheel slot (a slot takes its soft; the park
 *                       if it ran in the pass) | as add_tree
 *   hrt__tset_add_tree: unqueued -> main (outside a pass; or did not run
 *                       and pend empty) | main excluded, into ran[] (ran,
 *                       pend empty, ran[] not full) | pend (did not run,
 *                       pend non-empty) | pend excluded (ran, else)
 *   hrt__tset_del:      any queued -> unqueued
 *   hrt__tset_del_wheel: wheel slot -> unqueued; else returns 0, no change
 *   hrt__tset_take:     any queued -> unqueued, ran_pass = pass_id
 *   hrt__tset_rearm:    wheel slot | park -> wheel slot | park, as add (state,
 *                       ran_pass kept) | any -> del, then as add
 *   hrt__tset_rearm_wheel: unqueued | wheel slot -> wheel slot (a slot takes
 *                       the new soft, no renumber due, not run in the pass);
 *                       else 0, no change
 *   hrt__tset_forget_pass: unqueued, ran_pass = 0 (it moves to another base)
 *   hrt__tset_pass_begin: wheel slot -> wheel slot (cascade: new key, seq
 *                       kept) | -> wheel out -> main (a new pass: none ran)
 *   hrt__tset_gather:   wheel slot -> wheel out -> as add_tree
 *   hrt__tset_pass_end: main excluded -> main; pend, pend excluded -> main;
 *                       park -> wheel slot
 */

/* State bits in the low bits of timer->hrt__base_state. */
#define HRT_TS_QUEUED   1u      /* on the set (either tree or the wheel) */
#define HRT_TS_PENDING  2u      /* in `pend` (only during a pass) */
#define HRT_TS_WHEEL    4u      /* in the wheel */
#define HRT_TS_MASK     63u

#define HRT_TSET_RAN_MAX 16

struct hrt_tset {
	void *owner;                    /* its base: a state word names the set */
	/* The owner's, never read here: its keys + off = the owner's clock
	 * (a split base's relative set, clock.h).  Atomic. */
	hrt_time_t off;
	hrt_time_t pass_off;            /* off as the current pass began */
	struct hrt_queue queue;
	struct hrt_queue pend;
	struct hrt_timer *ran[HRT_TSET_RAN_MAX];
	unsigned ran_n;
	int in_pass;
	uint64_t pass_id;               /* of the current (or last) pass */
	hrt_time_t pass_now;            /* its now, in this set's keys */
	uint64_t tree_ops;              /* inserts and erases, both trees */
	uint64_t wheel_moves;           /* timers moved from the wheel to a tree */
	struct hrt_wheel wheel;
} __attribute__((aligned(64)));

/* The state word ------------------------------------------------------- */

static inline uintptr_t hrt__tset_state(const struct hrt_timer *t)
{
	return __atomic_load_n(&t->hrt__base_state, __ATOMIC_ACQUIRE);
}

/* The set a state word names (NULL: a timer never started). */
static inline struct hrt_tset *hrt__tset_of(uintptr_t s)
{
	return (struct hrt_tset *)(s & ~(uintptr_t)HRT_TS_MASK);
}

/* The timer of state word s is on its set. */
static inline int hrt__tset_queued(uintptr_t s)
{
	return !!(s & HRT_TS_QUEUED);
}

static inline void hrt__tset_mark(struct hrt_timer *t, struct hrt_tset *ts, unsigned bits)
{
	__atomic_store_n(&t->hrt__base_state, (uintptr_t)ts | bits, __ATOMIC_RELEASE);
}

/* A timer of no set becomes ts's, not queued.  bind: a plain store, when
 * only one thread can see the timer; claim: a compare-and-swap from *s
 * (updated on failure), so two first starts on different sets cannot both
 * win. */
static inline void hrt__tset_bind(struct hrt_timer *t, struct hrt_tset *ts)
{
	__atomic_store_n(&t->hrt__base_state, (uintptr_t)ts, __ATOMIC_RELEASE);
}

static inline int hrt__tset_claim(struct hrt_timer *t, struct hrt_tset *ts, uintptr_t *s)
{
	return __atomic_compare_exchange_n(&t->hrt__base_state, s, (uintptr_t)ts, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* Queries --------------------------------------------------------------- */

static inline size_t hrt__tset_count(const struct hrt_tset *ts)
{
	return ts->queue.count + ts->pend.count + ts->wheel.count;
}

static inline int hrt__tset_in_pass(const struct hrt_tset *ts)
{
	return ts->in_pass;
}

static inline uint64_t hrt__tset_pass_id(const struct hrt_tset *ts)
{
	return ts->pass_id;
}

/* "Ran in this pass" is per base (a split base's two sets share the pass
 * number): a timer that moves to another base forgets it. */
static inline void hrt__tset_forget_pass(struct hrt_timer *t)
{
	t->hrt__ran_pass = 0;
}

/* Add and del: inline, they are the whole of a start or cancel ---------- */

void hrt__tset_add_out(struct hrt_tset *ts, struct hrt_list_node *out);
void hrt__tset_ran_forget(struct hrt_tset *ts, const struct hrt_timer *t);
/* hrt__tset_add of a timer the wheel cannot take (hrt__wheel_key < 0):
 * its soft expiry is before the horizon. */
void hrt__tset_add_tree(struct hrt_tset *ts, struct hrt_timer *t);

/* t (off every structure, hrt__ran_pass valid) ran in the current pass.
 * The pass is asked first: hrt__ran_pass may be on the timer's second
 * line (a timer at offset 16 of one), which a re-arm otherwise never
 * reads. */
static inline int hrt__tset_ran(const struct hrt_tset *ts, const struct hrt_timer *t)
{
	return ts->in_pass && t->hrt__ran_pass == ts->pass_id;
}

/* The wheel key a far timer (its slot `key` >= 0) takes: its slot, or the
 * park if it ran in this pass (S2). */
static inline unsigned hrt__tset_wheel_key(const struct hrt_tset *ts, const struct hrt_timer *t,
					   int key)
{
	return hrt__tset_ran(ts, t) ? HRT_WHEEL_PARK : (unsigned)key;
}

/* t (on no structure, its expiries set, hrt__ran_pass valid) onto ts: a far
 * timer into the wheel (O(1)), a near one into a tree. */
static inline void hrt__tset_add(struct hrt_tset *ts, struct hrt_timer *t)
{
	int key = hrt__wheel_key(&ts->wheel, t->hrt__soft);

	if (key < 0) {
		hrt__tset_add_tree(ts, t);
		return;
	}
	hrt__wheel_link(&ts->wheel, t, hrt__tset_wheel_key(ts, t, key));
	hrt__tset_mark(t, ts, HRT_TS_QUEUED | HRT_TS_WHEEL);
}

/* hrt__tset_del of a wheel timer: 1; else 0, nothing changed (the fast
 * cancel calls it alone, with no call). */
static inline __attribute__((always_inline)) int
hrt__tset_del_wheel(struct hrt_tset *ts, struct hrt_timer *t, uintptr_t s)
{
	if (!(s & HRT_TS_WHEEL))
		return 0;
	hrt__wheel_del(&ts->wheel, t);
	hrt__tset_mark(t, ts, 0);
	return 1;
}

/* t (queued on ts with state word s) off it, still ts's; hrt__ran_pass
 * valid again (an excluded timer ran in the current pass; the wheel
 * leaves it untouched). */
static inline void hrt__tset_del(struct hrt_tset *ts, struct hrt_timer *t, uintptr_t s)
{
	uint64_t ran = 0;

	if (hrt__tset_del_wheel(ts, t, s))
		return;
	if (s & HRT_TS_PENDING) {
		if (hrt__queue_is_excluded(t))
			ran = ts->pass_id;
		ts->tree_ops++;
		hrt__queue_del(&ts->pend, t);
	} else {
		if (hrt__queue_is_excluded(t)) {
			ran = ts->pass_id;
			hrt__tset_ran_forget(ts, t);
		}
		ts->tree_ops++;
		hrt__queue_del(&ts->queue, t);
	}
	t->hrt__ran_pass = ran;
	hrt__tset_mark(t, ts, 0);
}

/* t (ts's, with state word s) queued again at soft..hard: del and add in
 * one, and a wheel timer that stays in the wheel only changes slots (its
 * state word and hrt__ran_pass stay as they are).  Always inline: a call
 * here costs the start a fifth of its instructions (docs/PERFORMANCE.md). */
static inline __attribute__((always_inline)) void
hrt__tset_rearm(struct hrt_tset *ts, struct hrt_timer *t, uintptr_t s, hrt_time_t soft,
		hrt_time_t hard)
{
	int key = hrt__wheel_key(&ts->wheel, soft);

	if (!(s & HRT_TS_WHEEL) || key < 0) {
		if (hrt__tset_queued(s))
			hrt__tset_del(ts, t, s);
		s = 0;
	}
	/* The wheel's bound (W2) reads the new hard expiry. */
	__atomic_store_n(&t->hrt__soft, soft, __ATOMIC_RELAXED);
	__atomic_store_n(&t->hrt__hard, hard, __ATOMIC_RELAXED);
	if (key < 0) {
		hrt__tset_add_tree(ts, t);
	} else if (s) {
		hrt__wheel_move(&ts->wheel, t, hrt__tset_wheel_key(ts, t, key));
	} else {
		hrt__wheel_link(&ts->wheel, t, hrt__tset_wheel_key(ts, t, key));
		hrt__tset_mark(t, ts, HRT_TS_QUEUED | HRT_TS_WHEEL);
	}
}

/* The fast path: hrt__tset_rearm where the wheel does it all (t not in a
 * tree, the new expiries fit a slot, no renumber due, no pass running: one
 * that ran in it goes to the park), with no call, so that its callers
 * save no registers.  1 if done; else 0, nothing changed: the caller takes
 * the full call. */
static inline __attribute__((always_inline)) int
hrt__tset_rearm_wheel(struct hrt_tset *ts, struct hrt_timer *t, uintptr_t s, hrt_time_t soft,
		      hrt_time_t hard)
{
	int key = hrt__wheel_key(&ts->wheel, soft);

	/* seq_ok is also false in a pass (hrt__wheel_fast): a timer that
	 * ran in it goes to the park. */
	if (key < 0 || !hrt__wheel_seq_ok(&ts->wheel))
		return 0;
	/* A wheel timer: nothing refuses from here.  The expiries first, so
	 * that they are not held in registers across the list work (the
	 * bound, W2, reads the new hard from the timer).  The wheel bit
	 * first, the tree's refusal after it: one test on the way of a
	 * re-arm, not two. */
	if (s & HRT_TS_WHEEL) {
		__atomic_store_n(&t->hrt__soft, soft, __ATOMIC_RELAXED);
		__atomic_store_n(&t->hrt__hard, hard, __ATOMIC_RELAXED);
		hrt__wheel_move_(&ts->wheel, t, (unsigned)key, 0);
		return 1;
	}
	if (s & HRT_TS_QUEUED)          /* in a tree */
		return 0;
	__atomic_store_n(&t->hrt__soft, soft, __ATOMIC_RELAXED);
	__atomic_store_n(&t->hrt__hard, hard, __ATOMIC_RELAXED);
	hrt__wheel_link_(&ts->wheel, t, (unsigned)key, 0);
	hrt__tset_mark(t, ts, HRT_TS_QUEUED | HRT_TS_WHEEL);
	return 1;
}

/* t (queued on ts) off it to run in the current pass (S2). */
static inline void hrt__tset_take(struct hrt_tset *ts, struct hrt_timer *t)
{
	hrt__tset_del(ts, t, hrt__tset_state(t));
	t->hrt__ran_pass = ts->pass_id;
}

/* The rest (timerset.c) ------------------------------------------------- */

void hrt__tset_init(struct hrt_tset *ts, hrt_time_t now);
/* The current (or last) pass's now. */
static inline hrt_time_t hrt__tset_pass_now(const struct hrt_tset *ts)
{
	return ts->pass_now;
}

/* A pass at `now` (<= HRT_QUEUE_NOW_MAX) numbered `id` (above the set's
 * last, never 0; a base's sets share them) starts: the wheel's horizon
 * moves past now (S3). */
void hrt__tset_pass_begin(struct hrt_tset *ts, uint64_t id, hrt_time_t now);
/* The first timer in queue order that this pass has not taken, if its soft
 * expiry is <= now; else NULL.  The leftmost run.  ends (optional, a split
 * base's pass compares its two sets with it): the hard expiry of that first
 * timer, which ends the run if it is not due (HRT_TIME_MAX: none left). */
struct hrt_timer *hrt__tset_first_due(struct hrt_tset *ts, hrt_time_t now, hrt_time_t *ends);
/* The first timer in queue order, not taken in this pass, whose soft
 * expiry is <= now, or NULL; adds the tree nodes examined to *visited.
 * The greedy walk. */
struct hrt_timer *hrt__tset_next_due(struct hrt_tset *ts, hrt_time_t now, uint64_t *visited);
/* The pass is over: the taken timers that were re-queued become plain
 * again, `pend` joins `queue` in queueing order (S1). */
void hrt__tset_pass_end(struct hrt_tset *ts);
/* The earliest hard expiry of all timers (HRT_TIME_MAX: none); no timer
 * moves (the wheel answers from its bounds, W2). */
hrt_time_t hrt__tset_next(struct hrt_tset *ts);
/* The coalescing window: 0 if nothing is queued; else 1 with the earliest
 * hard expiry *hard of the timers this pass may still run, the soft expiry
 * *owner of the timer that has it, and *soft: if greedy (the passes walk
 * every soft-expired timer), the earliest soft expiry of those timers found
 * (<= *owner; a bounded search, so an upper bound, but always some runnable
 * timer's soft expiry), else *owner (a pass without the walk runs only the
 * leftmost run, which a wake-up before *owner would leave empty). */
int hrt__tset_window(struct hrt_tset *ts, int greedy, hrt_time_t *owner,
		     hrt_time_t *soft, hrt_time_t *hard);
/* Every wheel timer into the trees (a walk shows them). */
void hrt__tset_gather(struct hrt_tset *ts);
/* Calls fn on every node of both trees in queue order, except the
 * re-queued ones; fn must not change the set.  The number of nodes shown. */
size_t hrt__tset_walk(const struct hrt_tset *ts,
		      void (*fn)(const struct hrt_tree_node *n, void *ctx), void *ctx);
/* NULL, or the first broken structural property (trees, marks, wheel,
 * every state word). */
const char *hrt__tset_check(const struct hrt_tset *ts);
/* Adds the set's counters to *out (tree_ops, wheel_moves, wheel_cascades);
 * reset zeroes them. */
void hrt__tset_get_stats(const struct hrt_tset *ts, struct hrt_stats *out);
void hrt__tset_reset_stats(struct hrt_tset *ts);

#endif /* HRT_TIMERSET_H */
