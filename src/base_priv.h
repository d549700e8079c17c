/* SPDX-License-Identifier: MIT */
/*
 * base_priv.h - struct hrt_base and its one-line accessors, shared by the
 * files of the base layer and by nothing else.  The concepts around it
 * have headers of their own: the lock it embeds (baselock.h), the entry
 * guard (guard.h), its clocks (clock.h); the queued timers are the timer
 * sets' (timerset.h), reached only through their functions.  The files of
 * the layer, and the functions they offer each other, are listed at the
 * end; docs/DESIGN.md draws the layers.
 *
 * Locking: one lock per base, taken by every public call and dropped
 * around callbacks.  A hrt_base_walk_tree callback runs with it held, so
 * queries of that base skip it (hrt__walking) and changes are refused.  A
 * timer's state word (set | state bits, timerset.h) changes only under its
 * base's lock; moving a timer between bases holds both locks, taken in
 * address order.  The lock is a mutex biased to one thread, the base's
 * owner, which takes it with plain stores (baselock.c says how and why
 * that is exclusive); everyone else takes the mutex.  A base made with
 * HRT_BASE_UNLOCKED has no lock: only its owner thread may call it.
 */
#ifndef HRT_BASE_PRIV_H
#define HRT_BASE_PRIV_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "base.h"
#include "baselock.h"
#include "running.h"
#include "timerset.h"
#include "verify.h"

struct hrt_loop;
struct hrt_host;

struct hrt_base {
	/* The base's clock's timers (absolute ones on a realtime base); first,
	 * so the base's alignment is the set's. */
	struct hrt_tset set;
	int unlocked;                   /* HRT_BASE_UNLOCKED */
	uint64_t owner;                 /* unlocked: its thread's hrt__thread_id */
	struct hrt_bias_lock bl;        /* unused by an unlocked base */

	/* Pass state (the set holds the pass's number and its marks). */
	struct hrt_timer *running;      /* callback in progress, or NULL */
	struct hrt_live live[2];        /* set, rel: alive (running.h) */
	int running_stopped;            /* it cancelled itself: HRT_RESTART is void */
	pthread_t pass_thread;          /* valid while in a pass */

	clockid_t clock;                /* virtual: the clock it stands for */
	int virt;                       /* HRT_BASE_VIRTUAL */
	int split;                      /* real CLOCK_REALTIME: rel[0] exists */
	int now_slow;                   /* virt, split or a clock seam: base_now
					 * and a relative start take the slow path */
	int (*gettime)(clockid_t, struct timespec *);   /* the tests' seam, or NULL */
	/* Settings (settings.c): read once per pass or per loop. */
	int greedy;                     /* enum hrt_greedy */
	int coalesce;                   /* HRT_COALESCE / hrt_base_set_coalesce */
	unsigned pass_max_run;          /* hrt_base_set_pass_limit; 0: none */
	hrt_time_t pass_max_ns;
	hrt_time_t pass_budget;         /* the hosts' budget now (pass.c); 0: the
					 * default, HRT_PASS_BUDGET_NS */
	hrt_time_t vnow;                /* virtual bases: the time */
	struct hrt_stats stats;         /* the set keeps its own counters */

	/* The wake-up (wakeup.c; base.h says how it works), on the line
	 * after the settings: every start reads `bound`. */
	struct hrt_wake {
		/* A start whose hard expiry comes before it needs the
		 * wake-up (hrt__wake_earlier); one that does not, and every
		 * cancel, leave the device alone: the lazy re-arm.  <= every
		 * queued hard expiry (in the base's clock) outside a pass.
		 * ARM mode: `armed`, or HRT_TIME_MAX while an arm failed (any
		 * start retries); NOTE mode: the sleeper's; HRT_WAKE_AWAKE
		 * with no device (a virtual base) or no sleeper asleep. */
		hrt_time_t bound;
		/* Made by hrt_base_fd, kept until hrt_base_free: read
		 * without the lock by dispatch (acquire). */
		struct hrt_device *dev;
		hrt_time_t armed;       /* what dev holds: HRT_TIME_MAX
					 * disarmed, HRT_ARMED_EXPIRED unknown */
		int arm_err;            /* last arm: 0 or -errno (armed EXPIRED) */
		int note;               /* NOTE mode (base.h) */
		int who;                /* HRT_WAKE_LOOP, HRT_WAKE_HOLD or 0 */
		hrt__kick_fn kick;      /* the sleeper's hook, or NULL */
		void *kick_ctx;
	} wake;
	unsigned fork_gen;              /* hrt__fork_gen when made (fork: -ECHILD) */
	/* The states of the base's clients, made and freed with it
	 * (lifecycle.c); the base never looks inside. */
	struct hrt_loop *loop;          /* hrt_base_loop's (loop.c) */
	struct hrt_host *host;          /* hrt_base_plan_sleep's (hostsleep.c) */
	/* lifecycle.c's list of locked bases, which fork() locks (address
	 * order) so that a child's copy of every lock is free. */
	struct hrt_base *fork_next, *fork_prev;
	struct hrt_base *fork_push;     /* the list's intake, lock-free */
#ifdef HRT_VERIFY
	uint64_t verify_holder;         /* verify.h: who holds the lock */
#endif
	/* The base's timer sets in one array: set (above) is sets[0]; a
	 * split base (a real CLOCK_REALTIME one) has a second, rel[0], for
	 * its relative timers, keyed on CLOCK_MONOTONIC, so a set of the wall
	 * clock leaves their length alone, as Linux queues relative realtime
	 * hrtimers.  Each set's `off` turns its keys into the base's clock
	 * (clock.h); the pass, the window and the next event loop over them
	 * (base_for_each_set), as the kernel's over its clock bases. */
	struct hrt_tset rel[];
};

/* wake.armed when what the device holds is unknown (an arm failed, the
 * wall clock was set): the next update re-arms it whatever follows. */
#define HRT_ARMED_EXPIRED (-HRT_TIME_MAX)

static inline int base_is_forked(const struct hrt_base *b)
{
	return b->fork_gen != __atomic_load_n(&hrt__fork_gen, __ATOMIC_RELAXED);
}

static inline int base_is_virtual(const struct hrt_base *b)
{
	return b->virt;
}

static inline struct hrt_base *base_of(const struct hrt_tset *ts)
{
	return (struct hrt_base *)ts->owner;
}

/* The set after ts among b's, or NULL. */
static inline struct hrt_tset *base_set_after(const struct hrt_base *b, const struct hrt_tset *ts)
{
	return ts == &b->set && b->split ? (struct hrt_tset *)b->rel : NULL;
}

/* Every timer set of b, first to last (b may be const: a base is
 * malloc'ed, never defined const). */
#define base_for_each_set(b, ts) \
	for (struct hrt_tset *ts = (struct hrt_tset *)&(b)->set; ts; ts = base_set_after((b), ts))

/* Another thread's unlocked base: one TLS load and a compare (a locked
 * base has owner 0, and no thread's id is 0 once it owns a base). */
static inline int base_foreign(const struct hrt_base *b)
{
	return b->owner && b->owner != hrt__thread_id;
}

/* The owner's half of b's biased lock, for the fast paths of base.c. */
static inline int base_owner_enter_as(struct hrt_base *b, uint64_t id)
{
	if (!hrt__bl_owner_enter(&b->bl, id))
		return 0;
	verify_took(b);
	return 1;
}

static inline void base_owner_exit(struct hrt_base *b)
{
	verify_gives(b);
	hrt__bl_owner_exit(&b->bl);
}

static inline void base_lock(const struct hrt_base *cb)
{
	struct hrt_base *b = (struct hrt_base *)cb;

	if (!b->unlocked)
		hrt__bl_lock(&b->bl);
	verify_took(b);
}

static inline void base_unlock(const struct hrt_base *cb)
{
	struct hrt_base *b = (struct hrt_base *)cb;

	verify_gives(b);
	if (!b->unlocked)
		hrt__bl_unlock(&b->bl);
}

/* Lock held: wait until a callback of b returns (cancel). */
static inline void base_wait(struct hrt_base *b)
{
	base_assert_locked(b);
	b->bl.waiters++;
	verify_gives(b);
	hrt__bl_wait(&b->bl);
	verify_took(b);
	b->bl.waiters--;
}

/* The files of the base layer and what they offer each other ----------- */

/* wakeup.c: the device, programmed on the way down (base.h).  Lock held.
 * hrt__wake_update: exact, after a pass and whenever the device's state is
 * unknown: armed at the earliest hard expiry of every set, in the base's
 * clock (hrt__base_next), or, in NOTE mode, the sleeper kicked if that is
 * before its `by`.  hrt__wake_earlier: a start queued hard expiry `when`
 * (base clock), before wake.bound: arm at it, or kick.  Both do nothing
 * while a pass runs (it updates at its end) or in a forked child (the
 * device is the parent's). */
void hrt__wake_update(struct hrt_base *b);
void hrt__wake_earlier(struct hrt_base *b, hrt_time_t when);
hrt_time_t hrt__base_next(struct hrt_base *b);
/* The rest of wakeup.c's lock-held calls, for the files of the base layer
 * that answer the clients in one critical section (pass.c, coalesce.c):
 * a wake-up's bookkeeping (due or not), the error it leaves, the ack when
 * the device may have fired, the window, the sleeper's bound, the hold,
 * the device made.  base.h says what each does. */
int hrt__wake_event(struct hrt_base *b, int event, hrt_time_t now);
int hrt__wake_err(struct hrt_base *b);
int hrt__wake_ack_due(struct hrt_base *b, hrt_time_t now);
int hrt__wake_window(struct hrt_base *b, hrt_time_t *owner, hrt_time_t *soft, hrt_time_t *hard);
int hrt__wake_sleep_locked(struct hrt_base *b, hrt_time_t by, hrt_time_t arm);
int hrt__wake_hold_locked(struct hrt_base *b, int hold);
int hrt__wake_dev_locked(struct hrt_base *b);
/* The wake-up's state of a new base, and its device closed (lifecycle.c). */
void hrt__wake_init(struct hrt_base *b);
void hrt__wake_close(struct hrt_base *b);

/* pass.c: the pass at `now` of kind `how` (HRT_PASS_*, base.h), lock
 * held (and held again on return), then the re-arm: the callbacks run, or
 * -EBUSY if a pass of b runs already. */
ssize_t hrt__base_run_locked(struct hrt_base *b, hrt_time_t now, int how);

#endif /* HRT_BASE_PRIV_H */
