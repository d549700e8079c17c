/* SPDX-License-Identifier: MIT */
/*
 * guard.h - the entry guard: every public call of the base layer and of
 * the loop opens with base_guard or timer_guard below, and no other entry
 * check exists, so every call meets the situations in one order (the
 * start and cancel fast paths in base.c test 2 and 3 at once through
 * hrt__change_id and leave for the guard on any doubt, so the order holds
 * for them too):
 *   1. a bad argument (NULL, or a value the call rejects)    -EINVAL
 *   2. another thread on an unlocked base                     -EPERM
 *   3. inside a hrt_base_walk_tree callback (its lock held)   -EDEADLK
 *   4. a child forked after the base was made, for the calls
 *      that use its fds (they are the parent's)               -ECHILD
 *   5. a pass of the base's own, for the calls that would run
 *      one (checked under the lock: run, dispatch, loop)      -EBUSY
 * A timer's base is known only once it is locked, so for a timer queued
 * on (or last started on) an unlocked base check 2 is made there, after
 * the lock, by lock_timer_base and lock_for_start (base.c): a timer may
 * move between the check and the lock.  Queries answer in situation 3
 * (the walk holds the lock: query_lock skips it).  A base's kind
 * (virtual: -EOPNOTSUPP) is looked at after the guard, by the calls that
 * care.
 */
#ifndef HRT_GUARD_H
#define HRT_GUARD_H

#include "base_priv.h"

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

#endif /* HRT_GUARD_H */
