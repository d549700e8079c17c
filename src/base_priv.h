/* SPDX-License-Identifier: MIT */
/*
 * base_priv.h - the base's own header, shared by the files of the base
 * layer and by nothing else: struct hrt_base, its locking, the entry
 * checks and the device update.  The files: base.c (timer semantics),
 * clock.c (clock reads and settings), pass.c (the pass over the base's
 * sets), wakeup.c (the device glue), coalesce.c (the window and its
 * plan), introspect.c (count, stats, walk, check); none of them names the
 * loop.  lifecycle.c (new and free) sits above the base and the loop and
 * hangs the one on the other.  The queued timers are the timer set's
 * (timerset.h); the base reaches them only through its functions.
 *
 * The entry guard: every public call of the base layer and of the loop
 * opens with base_guard or timer_guard below, and no other entry check
 * exists, so every call meets the situations in one order (the start and
 * cancel fast paths in base.c test 2 and 3 at once through hrt__change_id
 * and leave for the guard on any doubt, so the order holds for them too):
 *   1. a bad argument (NULL, or a value the call rejects)    -EINVAL
 *   2. another thread on an unlocked base                     -EPERM
 *   3. inside a hrt_base_walk_tree callback (its lock held)   -EDEADLK
 *   4. a child forked after the base was made, for the calls
 *      that use its fds (they are the parent's)               -ECHILD
 *   5. a pass of the base's own, for the calls that would run
 *      one (checked under the lock: run, dispatch, loop)      -EBUSY
 * A timer's base is known only once it is locked, so for a timer queued
 * on (or last started on) an unlocked base check 2 is made there, after
 * the lock, by lock_timer_base and lock_for_start: a timer may move
 * between the check and the lock.  Queries answer in situation 3 (the
 * walk holds the lock: query_lock skips it).  A base's kind (virtual:
 * -EOPNOTSUPP) is looked at after the guard, by the calls that care.
 *
 * Locking: one lock per base, taken by every public call and dropped
 * around callbacks.  A hrt_base_walk_tree callback runs with it held, so
 * queries of that base skip it (hrt__walking) and changes are refused.  A
 * timer's state word (set | state bits, timerset.h) changes only under its
 * base's lock; moving a timer between bases holds both locks, taken in
 * address order.  The lock is a mutex biased to one thread, the base's
 * owner, which takes it with plain stores (baselock.c says how and why
 * that is exclusive); everyone else takes the mutex.
 */
#ifndef HRT_BASE_PRIV_H
#define HRT_BASE_PRIV_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "base.h"
#include "timerset.h"

struct hrt_loop;

struct hrt_base {
	/* The base's clock's timers (absolute ones on a realtime base); first,
	 * so the base's alignment is the set's. */
	struct hrt_tset set;
	int unlocked;                   /* HRT_BASE_UNLOCKED */
	/* The biased lock (baselock.c); the owner's path reads these only. */
	int owner_in;                   /* the owner is inside; only it writes */
	unsigned pending;               /* BL_*; mutex holders write it */
	uint64_t bias;                  /* owner's hrt__thread_id, or BL_NO_BIAS */
	uint64_t owner_ops;             /* owner's fast entries; only it writes */
	uint64_t ops_seen;              /* owner_ops at the last fenced entry */
	uint64_t streak_id;             /* unbiased: who took the mutex last */
	unsigned streak, claim_after;   /* ... how often in a row; needed */
	pthread_mutex_t lock;           /* unused by an unlocked base */
	uint64_t owner;                 /* unlocked: its thread's hrt__thread_id */
	pthread_cond_t done;            /* a callback returned (cancel waits) */

	/* Pass state (the set holds the pass's number and its marks). */
	struct hrt_timer *running;      /* callback in progress, or NULL */
	pthread_t pass_thread;          /* valid while in a pass */
	unsigned waiters;               /* threads waiting on `done` */

	clockid_t clock;                /* virtual: the clock it stands for */
	int virt;                       /* HRT_BASE_VIRTUAL */
	int split;                      /* real CLOCK_REALTIME: rel[0] exists */
	int now_slow;                   /* virt, split or a clock seam: base_now
					 * and a relative start take the slow path */
	int (*gettime)(clockid_t, struct timespec *);   /* the tests' seam, or NULL */
	/* split: the wall clock minus the monotonic one, as last measured
	 * (base_sync_offset: each pass, after a set of the clock, and when a
	 * disarmed or held timerfd is armed again); kept, not re-read, so that
	 * the armed instant and next_event agree. */
	hrt_time_t off;
	int greedy;
	hrt_time_t vnow;                /* virtual bases: the time */
	struct hrt_stats stats;         /* the set keeps its own counters */

	/* Wake-up device (device.h); NULL for a virtual base and until
	 * hrt_base_fd.  Read without the lock by dispatch (acquire). */
	struct hrt_device *dev;
	hrt_time_t armed;               /* what dev is armed for; MAX: disarmed */
	int arm_err;                    /* last arm: 0 or -errno (armed EXPIRED) */
	unsigned fork_gen;              /* hrt__fork_gen when made (fork: -ECHILD) */
	int coalesce;                   /* HRT_COALESCE / hrt_base_set_coalesce */
	/* hrt_base_hold_fd: a device stacked on the timerfd that keeps it
	 * disarmed (wakeup.c); installed as dev while held. */
	struct hrt_device hold;
	struct hrt_device *hold_below;  /* the timerfd under it */
	int hold_disarmed;              /* the timerfd was disarmed */
	struct hrt_loop *loop;          /* hrt_base_loop's state (loop.c); the
					 * base never looks inside */
	/* lifecycle.c's list of locked bases, which fork() locks (address
	 * order) so that a child's copy of every lock is free. */
	struct hrt_base *fork_next, *fork_prev;
	struct hrt_base *fork_push;     /* the list's intake, lock-free */
	/* split only (allocated then): the relative timers, keyed on
	 * CLOCK_MONOTONIC, so a set of the wall clock leaves their length
	 * alone, as Linux queues relative realtime hrtimers. */
	struct hrt_tset rel[];
};

/* `armed` when the device has fired and must be re-armed whatever follows. */
#define HRT_ARMED_EXPIRED (-HRT_TIME_MAX)

/* The base whose hrt_base_walk_tree callback this thread is in (its lock
 * is held), or NULL (defined in baselock.c, with the ids).  Queries of it
 * skip the lock; changes are refused. */
#if defined(__GNUC__)
#define HRT_TLS_IE __attribute__((tls_model("initial-exec"), visibility("hidden")))
#else
#define HRT_TLS_IE
#endif
extern _Thread_local const struct hrt_base *hrt__walking HRT_TLS_IE;
/* This thread's identity as an owner of unlocked bases: 0 until it makes
 * one, then a number no other thread of the process ever gets (a thread's
 * address or its TLS block is reused by later threads). */
extern _Thread_local uint64_t hrt__thread_id HRT_TLS_IE;
/* hrt__thread_id, but 0 inside a hrt_base_walk_tree callback: the fast
 * paths of start and cancel compare it with an unlocked base's owner or
 * a base's bias (neither is ever 0), one test for steps 2 and 3 of the
 * guard below. */
extern _Thread_local uint64_t hrt__change_id HRT_TLS_IE;

/* Bumped in the child of every fork() (lifecycle.c registers it): a base
 * whose fork_gen differs was made by an ancestor and shares its timerfd. */
extern unsigned hrt__fork_gen;

static inline int base_is_forked(const struct hrt_base *b)
{
	return b->fork_gen != __atomic_load_n(&hrt__fork_gen, __ATOMIC_RELAXED);
}

static inline struct hrt_base *base_of(const struct hrt_tset *ts)
{
	return (struct hrt_base *)ts->owner;
}

/* ts is b's monotonic set of relative timers. */
static inline int base_set_is_rel(const struct hrt_base *b, const struct hrt_tset *ts)
{
	return ts != &b->set;
}

/* The set after ts among b's, or NULL: a split base's relative set
 * follows its first. */
static inline struct hrt_tset *base_set_after(const struct hrt_base *b, const struct hrt_tset *ts)
{
	return ts == &b->set && b->split ? (struct hrt_tset *)b->rel : NULL;
}

/* Every timer set of b: its first, then a split base's relative one (b
 * may be const: a base is malloc'ed, never defined const). */
#define base_for_each_set(b, ts) \
	for (struct hrt_tset *ts = (struct hrt_tset *)&(b)->set; ts; ts = base_set_after((b), ts))

/* Another thread's unlocked base: one TLS load and a compare (a locked
 * base has owner 0, and no thread's id is 0 once it owns a base). */
static inline int base_foreign(const struct hrt_base *b)
{
	return b->owner && b->owner != hrt__thread_id;
}

/* The biased lock (baselock.c).  pending: while not 0 the owner takes
 * the mutex too. */
#define BL_NO_BIAS  UINT64_MAX  /* no thread's id (ids count from 1; 0: none) */
#define BL_FOREIGN  1u          /* a foreign holder has shut the owner out */
#define BL_WAIT     2u          /* a thread waits on `done` */
#define BL_REVOKED  4u          /* until the owner gives the bias up */
#define BL_CLAIM_FIRST 16u      /* mutex takes in a row that claim the bias */

void hrt__base_lock_slow(struct hrt_base *b);
void hrt__base_unlock_slow(struct hrt_base *b);
/* The mutex and the owner shut out, without the bias policy (fork, free). */
void hrt__base_lock_full(struct hrt_base *b);
/* Lock held: wait for a broadcast of `done`; may return at once (callers
 * re-check, as after any condition wait). */
void hrt__base_wait(struct hrt_base *b);
/* lifecycle.c: register the heavy fence once per process; fork. */
void hrt__baselock_init(void);
void hrt__baselock_child(struct hrt_base *b);
uint64_t hrt__thread_id_get(void);
/* Tests only (baselock.c): the fallback or a sticky bias; the heavy
 * fences issued so far. */
void hrt__baselock_test_mode(int mode);
uint64_t hrt__baselock_test_fences(void);

/*
 * The owner's path (base_owner_enter: 1 and the lock held, or 0 and
 * nothing held): announce, compiler barrier, look for a foreign holder.
 * The foreign side pairs a store of `pending` and a membarrier with its
 * read of owner_in, so one of the two sees the other (baselock.c).
 */
static inline int base_owner_enter_as(struct hrt_base *b, uint64_t id)
{
	if (__atomic_load_n(&b->bias, __ATOMIC_RELAXED) == id) {
		__atomic_store_n(&b->owner_in, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (__builtin_expect(!__atomic_load_n(&b->pending, __ATOMIC_ACQUIRE), 1)) {
			/* Plain (one add to memory): the foreign side reads it
			 * only once owner_in is 0 (acquire), or under the mutex
			 * the owner gave the bias up under. */
			b->owner_ops++;
			return 1;
		}
		__atomic_store_n(&b->owner_in, 0, __ATOMIC_RELEASE);
	}
	return 0;
}

static inline int base_owner_enter(struct hrt_base *b)
{
	return base_owner_enter_as(b, hrt__thread_id);
}

/* Leaves what base_owner_enter entered: base_unlock's owner half, whose
 * tests the entry has made (the bias stays the caller's: L4). */
static inline void base_owner_exit(struct hrt_base *b)
{
	__atomic_store_n(&b->owner_in, 0, __ATOMIC_RELEASE);
}

static inline void base_lock(const struct hrt_base *cb)
{
	struct hrt_base *b = (struct hrt_base *)cb;

	if (b->unlocked || base_owner_enter(b))
		return;
	hrt__base_lock_slow(b);
}

static inline void base_unlock(const struct hrt_base *cb)
{
	struct hrt_base *b = (struct hrt_base *)cb;

	if (b->unlocked)
		return;
	if (__atomic_load_n(&b->bias, __ATOMIC_RELAXED) == hrt__thread_id &&
	    __atomic_load_n(&b->owner_in, __ATOMIC_RELAXED)) {
		__atomic_store_n(&b->owner_in, 0, __ATOMIC_RELEASE);
		return;
	}
	hrt__base_unlock_slow(b);
}

static inline int base_is_virtual(const struct hrt_base *b)
{
	return b->virt;
}

/* A clock through b's seam (clock.c). */
hrt_time_t hrt__base_clock_read(const struct hrt_base *b, clockid_t clock);

/* The base's time: its clock's, or a virtual base's own. */
static inline hrt_time_t base_now(const struct hrt_base *b)
{
	if (__builtin_expect(b->now_slow, 0)) {
		if (base_is_virtual(b))
			return __atomic_load_n(&b->vnow, __ATOMIC_RELAXED);
		return hrt__base_clock_read(b, b->clock);
	}
	return hrt__clock_now(b->clock);
}

/* The clock of the relative set's keys (split bases). */
static inline hrt_time_t base_mono_now(const struct hrt_base *b)
{
	return hrt__base_clock_read(b, CLOCK_MONOTONIC);
}

/* Split bases: the offset that turns a relative timer's key into the
 * base's clock (the two clocks are slewed alike: only a set of the wall
 * clock changes it). */
static inline hrt_time_t base_offset(const struct hrt_base *b)
{
	return __atomic_load_n(&b->off, __ATOMIC_RELAXED);
}

/* clock.c: measure the offset again: after a set the kernel reported
 * (told), any clean reading; else kept if it moved by read noise only. */
void hrt__base_sync_offset(struct hrt_base *b, int told);

/* A monotonic key as an instant of the base's clock, saturated. */
static inline hrt_time_t base_from_mono(hrt_time_t v, hrt_time_t off)
{
	hrt_time_t r;

	if (v == HRT_TIME_MAX || __builtin_add_overflow(v, off, &r))
		return off > 0 || v == HRT_TIME_MAX ? HRT_TIME_MAX : INT64_MIN;
	return r;
}

/* What a call does, for the guard: a query answers from a walk callback,
 * a change is refused there, an fd call also in a forked child. */
#define G_QUERY  0u
#define G_CHANGE 1u
#define G_FD     3u     /* a change that uses the fds */

/*
 * The entry guard of a call on base b (steps 1-4 of the order above);
 * `bad`: the call's other arguments are invalid.  0, or the -errno to
 * return.  `kind` is a constant, so each call keeps only its own tests.
 */
static inline int base_guard(const struct hrt_base *b, unsigned kind, int bad)
{
	if (bad || !b)
		return -EINVAL;
	if (base_foreign(b))
		return -EPERM;
	if ((kind & G_CHANGE) && hrt__walking)
		return -EDEADLK;
	if (kind == G_FD && base_is_forked(b))
		return -ECHILD;
	return 0;
}

/* The guard of a call on a timer whose base is found under its lock:
 * steps 1 and 3; step 2 is lock_timer_base's (see above). */
static inline int timer_guard(const struct hrt_timer *t, unsigned kind, int bad)
{
	if (bad || !t)
		return -EINVAL;
	if ((kind & G_CHANGE) && hrt__walking)
		return -EDEADLK;
	return 0;
}

/* The base a timer's state word names (NULL: never started). */
static inline struct hrt_base *st_base(uintptr_t s)
{
	struct hrt_tset *ts = hrt__tset_of(s);

	return ts ? base_of(ts) : NULL;
}

/* A lock-free query of t: whether t is on (or was last started on) an
 * unlocked base of another thread, whose answer is "nothing". */
static inline int timer_foreign(const struct hrt_timer *t)
{
	const struct hrt_base *b = st_base(hrt__tset_state(t));

	return b && base_foreign(b);
}

/* Locks b for a read-only query, unless this thread holds it already
 * (a query from b's hrt_base_walk_tree callback).  Returns whether it did. */
static inline int query_lock(const struct hrt_base *b)
{
	if (hrt__walking == b || b->unlocked)
		return 0;
	base_lock(b);
	return 1;
}

static inline void query_unlock(const struct hrt_base *b, int locked)
{
	if (locked)
		base_unlock(b);
}

/* query_unlock, returning the number of queued timers read before. */
static inline size_t query_unlock_count(const struct hrt_base *b, int locked)
{
	size_t n = 0;

	base_for_each_set(b, ts)
		n += hrt__tset_count(ts);

	query_unlock(b, locked);
	return n;
}

/* Lock held: program the device for `when`.  A failure marks it expired,
 * so the next update (or dispatch, or the loop's retry) tries again. */
static inline int device_arm(struct hrt_base *b, hrt_time_t when)
{
	int r = b->dev->ops->arm(b->dev, when);

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

/*
 * Lock held: keep the device armed at the earliest hard expiry of both
 * sets (one CLOCK_REALTIME timerfd with CANCEL_ON_SET serves a split base:
 * a set of the clock, which moves the relative timers' instants in it,
 * comes back as ECANCELED and the re-arm takes the new offset).  Only a
 * change of that instant costs an arm, so a start that does not become the
 * earliest, or a cancel of a later timer, costs no system call.  The pass
 * re-arms once at its end, so nothing is done while it runs; in a forked
 * child the device is the parent's and never touched.
 */
/* The earliest hard expiry of both sets, in the base's clock. */
static inline hrt_time_t base_next(struct hrt_base *b)
{
	hrt_time_t when = hrt__tset_next(&b->set), rel;

	if (b->split && (rel = hrt__tset_next(b->rel)) != HRT_TIME_MAX) {
		rel = base_from_mono(rel, base_offset(b));
		if (rel < when)
			when = rel;
	}
	return when;
}

/* base_next as the device takes it: armed as 1 ns at the earliest (0
 * disarms a timerfd), so never equal to HRT_ARMED_EXPIRED either. */
static inline hrt_time_t base_arm_at(struct hrt_base *b)
{
	hrt_time_t when = base_next(b);

	return when < 1 ? 1 : when;
}

static inline void base_wakeup_update(struct hrt_base *b)
{
	if (b->dev && !hrt__tset_in_pass(&b->set) && !base_is_forked(b)) {
		hrt_time_t when = base_arm_at(b);

		if (b->split && b->armed == HRT_TIME_MAX && when != HRT_TIME_MAX) {
			/* Disarmed, the timerfd heard of no set: measure. */
			hrt__base_sync_offset(b, 1);
			when = base_arm_at(b);
		}
		if (when != b->armed && device_arm(b, when) == HRT_DEV_JUMPED && b->split) {
			/* The set this arm consumed moved the relative timers'
			 * instants: arm again with the new offset. */
			hrt__base_sync_offset(b, 1);
			if ((when = base_arm_at(b)) != b->armed)
				device_arm(b, when);
		}
	}
}

/* base.c: the pass at `now`, lock held (and held again on return), then
 * the re-arm: the callbacks run, or -EBUSY if a pass of b runs already. */
ssize_t hrt__base_run_locked(struct hrt_base *b, hrt_time_t now, int idle);

#endif /* HRT_BASE_PRIV_H */
