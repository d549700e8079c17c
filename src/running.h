/* SPDX-License-Identifier: MIT */
/*
 * running.h - whether a timer that is not queued may still have its
 * callback running, answered without reading its base, which may be freed
 * (hrt.h, hrt_timer_cancel: "A timer that is not queued").
 *
 * A timer's state word (timerset.h) names its set; the set's marks write
 * the whole word, so they clear the two bits below, which only the base
 * layer writes, under the base's lock, on a timer that is not queued:
 *   HRT_ST_IDLE  not queued and its callback not running: a cancel found
 *                it so (and dequeued it, or not), not from its callback;
 *   HRT_ST_RUN   taken by a pass to run its callback (or cancelled from
 *                its own callback); the callback may have returned since
 *                (HRT_NORESTART: the library may not write the timer any
 *                more), so only its base knows whether it still runs.
 * A freed base runs no pass: each timer it leaves says IDLE, or RUN and
 * idle.  So a RUN timer asks the set of live timer sets (running.c)
 * whether its set is still there, by the set's address alone: if not,
 * it is idle; if so, its base (alive) says.  That costs the pass one
 * store a callback (the RUN bit, into the word the take wrote); the set of
 * live sets is written at hrt_base_new and hrt_base_free, and read only
 * by a cancel or query of a timer that ran and was not queued again.
 * (A first cut kept a registry of running callbacks instead: about 115
 * instructions more a callback, a fifth of the pass's cost.)
 * Any other state word of a timer that is not queued (the set's own, with
 * neither bit) is seen only inside a call that holds the base's lock: ask
 * the base, which is alive.
 */
#ifndef HRT_RUNNING_H
#define HRT_RUNNING_H

#include "timerset.h"

#define HRT_ST_IDLE 8u
#define HRT_ST_RUN  16u

_Static_assert(((HRT_ST_IDLE | HRT_ST_RUN) &
		(HRT_TS_QUEUED | HRT_TS_PENDING | HRT_TS_WHEEL)) == 0 &&
	       ((HRT_ST_IDLE | HRT_ST_RUN) & ~(uintptr_t)HRT_TS_MASK) == 0,
	       "the base layer's state bits are the set's spare ones");

/* A live timer set's entry, in its base (intrusive: no allocation). */
struct hrt_live {
	const struct hrt_tset *ts;
	struct hrt_live *next, **pprev;
};

/* ts is alive from now on (hrt_base_new), through entry n. */
void hrt__live_add(struct hrt_live *n, const struct hrt_tset *ts);
/* ... and no more (hrt_base_free, before the memory goes). */
void hrt__live_del(struct hrt_live *n);

/* Lock of t's base held, t taken (not queued, on set ts): marks it RUN. */
static inline void hrt__run_mark(struct hrt_timer *t, struct hrt_tset *ts)
{
	__atomic_store_n(&t->hrt__base_state, (uintptr_t)ts | HRT_ST_RUN, __ATOMIC_RELEASE);
}

/* Whether a set lives at ts (reads nothing at that address). */
int hrt__live_has(const struct hrt_tset *ts);

/* What the state word says of a timer with state word s, and the set of
 * live sets of a RUN one. */
#define HRT_RUN_ASK     0       /* queued, inside a call, or RUN on a live base: ask it */
#define HRT_RUN_IDLE    1       /* not queued, its callback not running */
static inline int hrt__run_state(uintptr_t s)
{
	if (hrt__tset_queued(s) || !(s & (HRT_ST_IDLE | HRT_ST_RUN)))
		return HRT_RUN_ASK;
	if (s & HRT_ST_IDLE)
		return HRT_RUN_IDLE;
	/* RUN: a freed base runs no callback; a live one says.  (A new base
	 * at a freed one's address answers for it: the timer is not on it,
	 * so its cancel finds nothing queued.) */
	return hrt__live_has(hrt__tset_of(s)) ? HRT_RUN_ASK : HRT_RUN_IDLE;
}

/* In a fork's child: no bucket of the set is locked. */
void hrt__run_fork_child(void);

#endif /* HRT_RUNNING_H */
