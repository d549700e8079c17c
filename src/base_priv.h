/* SPDX-License-Identifier: MIT */
/*
 * base_priv.h - the base's own header, shared by the files of the base
 * layer and by nothing else: struct hrt_base, its locking, the entry
 * checks and the device update.  The files: base.c (timer semantics and
 * the pass), wakeup.c (the device glue), coalesce.c (the window and its
 * plan), introspect.c (count, stats, walk, check); none of them names the
 * loop.  lifecycle.c (new and free) sits above the base and the loop and
 * hangs the one on the other.  The queued timers are the timer set's (timerset.h); the base
 * reaches them only through its functions.
 *
 * Entry checks: every public call of the base layer opens with the
 * helpers below (base_foreign, hrt__walking, base_fd_entry, query_lock),
 * and only here, so that one guard can replace them in one place.
 *
 * Locking: one mutex per base, taken by every public call and dropped
 * around callbacks.  A hrt_base_walk_tree callback runs with it held, so
 * queries of that base skip it (hrt__walking) and changes are refused.  A
 * timer's state word (set | state bits, timerset.h) changes only under its
 * base's lock; moving a timer between bases holds both locks, taken in
 * address order.
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
	/* First, so that the set a timer's state word names is its base
	 * (base_of costs nothing) and the base's alignment is the set's. */
	struct hrt_tset set;
	pthread_mutex_t lock;           /* unused by an unlocked base */
	int unlocked;                   /* HRT_BASE_UNLOCKED */
	const void *owner;              /* unlocked: &hrt__walking of its thread */
	pthread_cond_t done;            /* a callback returned (cancel waits) */

	/* Pass state (the set holds the pass's number and its marks). */
	struct hrt_timer *running;      /* callback in progress, or NULL */
	pthread_t pass_thread;          /* valid while in a pass */
	unsigned waiters;               /* threads waiting on `done` */

	clockid_t clock;
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
	struct hrt_loop *loop;          /* hrt_base_loop's state (loop.c); the
					 * base never looks inside */
};

/* `armed` when the device has fired and must be re-armed whatever follows. */
#define HRT_ARMED_EXPIRED (-HRT_TIME_MAX)

/* The base whose hrt_base_walk_tree callback this thread is in (its lock
 * is held), or NULL (base.c).  Queries of it skip the lock; changes are
 * refused. */
#if defined(__GNUC__)
#define HRT_TLS_IE __attribute__((tls_model("initial-exec"), visibility("hidden")))
#else
#define HRT_TLS_IE
#endif
extern _Thread_local const struct hrt_base *hrt__walking HRT_TLS_IE;

/* Bumped in the child of every fork() (lifecycle.c registers it): a base
 * whose fork_gen differs was made by an ancestor and shares its timerfd. */
extern unsigned hrt__fork_gen;

static inline struct hrt_base *base_of(const struct hrt_tset *ts)
{
	return (struct hrt_base *)ts;   /* set is the first member */
}

/* An unlocked base's thread is named by the address of its hrt__walking:
 * one %fs-relative lea, no call, so the owner check is on in every build. */
static inline int base_foreign(const struct hrt_base *b)
{
	return b->unlocked && b->owner != (const void *)&hrt__walking;
}

static inline void base_lock(const struct hrt_base *b)
{
	if (!b->unlocked)
		pthread_mutex_lock((pthread_mutex_t *)&b->lock);
}

static inline void base_unlock(const struct hrt_base *b)
{
	if (!b->unlocked)
		pthread_mutex_unlock((pthread_mutex_t *)&b->lock);
}

static inline int base_is_virtual(const struct hrt_base *b)
{
	return b->clock == HRT_CLOCK_VIRTUAL;
}

static inline int base_is_forked(const struct hrt_base *b)
{
	return b->fork_gen != __atomic_load_n(&hrt__fork_gen, __ATOMIC_RELAXED);
}

/* Entry check of the calls that use the fds: -EPERM from another thread
 * on an unlocked base, -EDEADLK from a hrt_base_walk_tree callback (the
 * lock is held), -ECHILD in a child forked after the base was made (the
 * fds are the parent's). */
static inline int base_fd_entry(const struct hrt_base *b)
{
	if (base_foreign(b))
		return -EPERM;
	if (hrt__walking)
		return -EDEADLK;
	return base_is_forked(b) ? -ECHILD : 0;
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

/* The base a timer's state word names (NULL: never started). */
static inline struct hrt_base *st_base(uintptr_t s)
{
	return base_of(hrt__tset_of(s));
}

/* Lock held: program the device for `when`.  A failure marks it expired,
 * so the next update (or dispatch, or the loop's retry) tries again. */
static inline void device_arm(struct hrt_base *b, hrt_time_t when)
{
	int r = b->dev->ops->arm(b->dev, when);

	if (r < 0) {
		b->arm_err = r;
		b->armed = HRT_ARMED_EXPIRED;
		return;
	}
	b->armed = when;
	b->arm_err = 0;
	if (r != HRT_DEV_NOTED)
		b->stats.reprograms++;
	if (r == HRT_DEV_JUMPED)
		b->stats.clock_jumps++;
}

/*
 * Lock held: keep the device armed at the earliest hard expiry.  Only a
 * change of that instant costs an arm, so a start that does not become the
 * earliest, or a cancel of a later timer, costs no system call.  The pass
 * re-arms once at its end, so nothing is done while it runs; in a forked
 * child the device is the parent's and never touched.
 */
static inline void base_wakeup_update(struct hrt_base *b)
{
	if (b->dev && !hrt__tset_in_pass(&b->set) && !base_is_forked(b)) {
		hrt_time_t when = hrt__tset_next(&b->set, 0);

		if (when < 1)           /* armed as 1 ns (0 disarms a timerfd), so */
			when = 1;       /* never equal to HRT_ARMED_EXPIRED either */
		if (when != b->armed)
			device_arm(b, when);
	}
}

/* base.c: the pass at `now`, lock held (and held again on return), then
 * the re-arm; 0 if another pass runs. */
size_t hrt__base_run_locked(struct hrt_base *b, hrt_time_t now, int idle);

#endif /* HRT_BASE_PRIV_H */
