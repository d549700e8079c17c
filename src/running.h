/* SPDX-License-Identifier: MIT */
/*
 * running.h - which timers' callbacks run now, process-wide, so that a
 * cancel or a query of a timer that is not queued can answer from the
 * timer alone, never reading its base, which may be freed (hrt.h,
 * hrt_timer_cancel: "A timer that is not queued").
 *
 * A timer's state word (timerset.h) names its set; the set's marks write
 * the whole word, so they clear the two bits below, which only the base
 * layer writes, under the base's lock, on a timer that is not queued:
 *   HRT_ST_IDLE  not queued and its callback not running: a cancel found
 *                it so (and dequeued it, or not), not from its callback;
 *   HRT_ST_RUN   taken by a pass to run its callback (or cancelled from
 *                its own callback); the callback may have returned since
 *                (HRT_NORESTART: the library may not write the timer any
 *                more), so whether it still runs is this registry's
 *                answer: the pass links a node for it before it writes
 *                the bit and unlinks it only after the restart, if any;
 *   HRT_ST_UNL   with RUN: the base is HRT_BASE_UNLOCKED, so the node is
 *                in the owner thread's own list, which no lock guards.
 * Any other state word of a timer that is not queued (the set's own, with
 * neither bit) is seen only inside a call that holds the base's lock: ask
 * the base, which is alive.  A freed base has nothing queued and no pass,
 * so each of its timers says IDLE, or RUN with no node: answered here.
 *
 * Locked bases' nodes are in 64 stripes by the timer's address, each a
 * list under a spin lock of its own (a leaf lock: taken inside a base's
 * lock by the pass, alone by the readers); the readers take it so that the
 * state word and the node are read as one.
 */
#ifndef HRT_RUNNING_H
#define HRT_RUNNING_H

#include "baselock.h"
#include "timerset.h"

#define HRT_ST_IDLE 8u
#define HRT_ST_RUN  16u
#define HRT_ST_UNL  32u

_Static_assert(((HRT_ST_IDLE | HRT_ST_RUN | HRT_ST_UNL) &
		(HRT_TS_QUEUED | HRT_TS_PENDING | HRT_TS_WHEEL)) == 0 &&
	       ((HRT_ST_IDLE | HRT_ST_RUN | HRT_ST_UNL) & ~(uintptr_t)HRT_TS_MASK) == 0,
	       "the base layer's state bits are the set's spare ones");

/* One running callback: on the pass's stack, linked for as long as it
 * runs. */
struct hrt_run_node {
	const struct hrt_timer *t;
	struct hrt_run_node *next, **pprev;
	const void *thread;             /* &hrt__own_runs of its thread: a
					 * fork's child drops the others' */
};

/* This thread's running callbacks of unlocked bases (running.c). */
extern _Thread_local struct hrt_run_node *hrt__own_runs HRT_TLS_IE;

void hrt__run_enter_locked(struct hrt_run_node *n, struct hrt_timer *t, struct hrt_tset *ts);
void hrt__run_leave_locked(struct hrt_run_node *n);

/* Lock of t's base held, t taken (not queued, on set ts): links n for t
 * and marks t RUN (| UNL on an unlocked base: inline, no atomic
 * read-modify-write). */
static inline void hrt__run_enter(struct hrt_run_node *n, struct hrt_timer *t,
				  struct hrt_tset *ts, int unlocked)
{
	if (!unlocked) {
		hrt__run_enter_locked(n, t, ts);
		return;
	}
	n->t = t;
	n->next = hrt__own_runs;
	n->pprev = &hrt__own_runs;
	if (n->next)
		n->next->pprev = &n->next;
	hrt__own_runs = n;
	__atomic_store_n(&t->hrt__base_state, (uintptr_t)ts | HRT_ST_RUN | HRT_ST_UNL,
			 __ATOMIC_RELEASE);
}

/* Lock held, t's callback returned and its restart (if any) made: n
 * unlinked.  Reads no timer (it may be freed). */
static inline void hrt__run_leave(struct hrt_run_node *n, int unlocked)
{
	if (!unlocked) {
		hrt__run_leave_locked(n);
		return;
	}
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
}

/* What the state word and the registry say of a timer with state word s. */
#define HRT_RUN_ASK     0       /* queued, or inside a call: ask the base */
#define HRT_RUN_IDLE    1       /* not queued, its callback not running */
#define HRT_RUN_RUNNING 2       /* its callback runs (or is about to) */
int hrt__run_state(const struct hrt_timer *t, uintptr_t s);

/* In a fork's child: the nodes of threads that are not there are gone
 * (their passes are over), and no stripe is locked. */
void hrt__run_fork_child(void);

#endif /* HRT_RUNNING_H */
