/* SPDX-License-Identifier: MIT */
/*
 * base.h - struct hrt_base and the helpers base.c, timerfd.c and loop.c
 * share (internal).  All synchronisation of a base goes through
 * base_lock()/base_unlock() here, so a faster owner-thread scheme can
 * replace the mutex without touching the tree, the queue or the API.
 */
#ifndef HRT_BASE_H
#define HRT_BASE_H

#include <errno.h>
#include <pthread.h>
#include <sys/types.h>
#include "queue.h"
#include "wheel.h"

/* State bits in the low bits of timer->hrt__base_state (bases are 64-aligned). */
#define HRT_ST_QUEUED   1u      /* in the queue or the pending queue */
#define HRT_ST_PENDING  2u      /* in the pending queue (only during a pass) */
#define HRT_ST_WHEEL    4u      /* in the wheel (far: not in a tree) */
#define HRT_ST_MASK     63u

/* The coalesced sleep's wait (loop.c): epoll_pwait2 for `timeout` ns from
 * `now`, as the loop read it.  Replaceable per base for the tests. */
struct epoll_event;
typedef int (*hrt__pwait2_fn)(void *ctx, int epfd, struct epoll_event *evs, int n,
			      hrt_time_t now, hrt_time_t timeout);

struct hrt_base {
	pthread_mutex_t lock;           /* unused by an unlocked base */
	int unlocked;                   /* HRT_BASE_UNLOCKED */
	const void *owner;              /* unlocked: &hrt__walking of its thread */
	pthread_cond_t done;            /* a callback returned (cancel waits) */
	struct hrt_queue queue;

	/* Pass state. */
	struct hrt_timer *running;      /* callback in progress, or NULL */
	pthread_t pass_thread;          /* valid while in_pass */
	int in_pass;
	unsigned waiters;               /* threads waiting on `done` */
	uint64_t pass_id;               /* unique over all bases */
	/*
	 * Timers queued during a pass once a timer that already ran in it was
	 * re-queued.  The ones that ran are queued "excluded", so no search of
	 * this pass finds them; the others may still run in it.  All of them
	 * were queued after everything in `queue`, so at the end of the pass
	 * moving them over in order keeps equal hard expiries FIFO.
	 */
	struct hrt_queue pend;
	/*
	 * Far timers (wheel.h): start, cancel and re-arm of a timer that is not
	 * near are O(1) list operations (most timeouts never fire).  A pass
	 * first moves the horizon past its `now`, so every timer it can run is
	 * in `queue` or `pend`.
	 */
	struct hrt_wheel wheel;

	clockid_t clock;
	int greedy;
	hrt_time_t vnow;                /* virtual bases: the time */
	struct hrt_stats stats;

	/* Wake-up device (timerfd.c, loop.c); -1 when not created. */
	int tfd, epfd, efd;
	int stop;
	int looping;                    /* an hrt_base_loop runs (a second: -EBUSY) */
	unsigned fork_gen;              /* hrt__fork_gen when made (fork: -ECHILD) */
	dev_t tfd_dev;                  /* tfd's identity, checked at dispatch */
	ino_t tfd_ino;
	hrt_time_t armed;               /* what tfd is armed for; MAX: disarmed */
	int arm_err;                    /* last arm: 0 or -errno (armed EXPIRED) */

	/* Coalesced sleep (loop.c; all under the lock but `coalesce`). */
	int coalesce;                   /* HRT_COALESCE / hrt_base_set_coalesce */
	int c_loop;                     /* hrt_base_loop owns the device: `armed` is
					 * the instant it sleeps for, tfd stays idle */
	int c_sleeping;                 /* in a sleep that ends by c_hard: an earlier
					 * start pokes efd */
	int c_nosys;                    /* epoll_pwait2 failed with ENOSYS */
	hrt_time_t c_hard;
	hrt_time_t c_tfd;               /* while c_loop: what tfd really holds */
	hrt__pwait2_fn c_pwait2;        /* test seam; NULL: the system call */
	void *c_pwait2_ctx;
} __attribute__((aligned(64)));

/* timerfd.armed when it has fired and must be re-armed whatever follows. */
#define HRT_ARMED_EXPIRED (-HRT_TIME_MAX)

/* The base whose hrt_base_walk_tree callback this thread is in (its lock
 * is held), or NULL.  Queries of it skip the lock; changes are refused. */
#if defined(__GNUC__)
#define HRT_TLS_IE __attribute__((tls_model("initial-exec")))   /* no call in the .so */
#else
#define HRT_TLS_IE
#endif
extern _Thread_local const struct hrt_base *hrt__walking HRT_TLS_IE;

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

/* Bumped in the child of every fork() (pthread_atfork): a base whose
 * fork_gen differs was made by an ancestor and shares its timerfd. */
extern unsigned hrt__fork_gen;

static inline int base_is_forked(const struct hrt_base *b)
{
	return b->fork_gen != __atomic_load_n(&hrt__fork_gen, __ATOMIC_RELAXED);
}


/* Entry check of the calls that use the fds: -EDEADLK from a
 * hrt_base_walk_tree callback (the lock is held), -ECHILD in a child
 * forked after the base was made (the fds are the parent's). */
static inline int base_fd_entry(const struct hrt_base *b)
{
	if (base_foreign(b))
		return -EPERM;
	if (hrt__walking)
		return -EDEADLK;
	return base_is_forked(b) ? -ECHILD : 0;
}

/* Lock held.  Earliest hard expiry, pending and wheel timers included
 * (exact: may move the wheel's earliest into the tree). */
hrt_time_t hrt__base_next_locked(struct hrt_base *b);

/* timerfd.c: arm the device for `when` (lock held). */
/* The base's timerfd (or fd) to the absolute instant `when` on `clock`,
 * HRT_TIME_MAX disarms: timerfd_settime's result (0, or -1 with errno).
 * The one place an instant becomes an itimerspec and its flags. */
int hrt__timerfd_set(int fd, clockid_t clock, hrt_time_t when);
void hrt__wakeup_arm(struct hrt_base *b, hrt_time_t when);
void hrt__wakeup_close(struct hrt_base *b);
/* hrt_base_dispatch; a failed read of the fd also lands in *read_err. */
ssize_t hrt__dispatch(struct hrt_base *b, int idle, int *read_err);

/* Lock held: keep the device armed at the earliest hard expiry.  The pass
 * re-arms once at its end, so nothing is done while it runs. */
static inline void base_wakeup_update(struct hrt_base *b)
{
	/* In a forked child the fd is the parent's: never touch it. */
	if (b->tfd >= 0 && !b->in_pass && !base_is_forked(b)) {
		hrt_time_t when = hrt__base_next_locked(b);

		if (when < 1)           /* armed as 1 ns (0 disarms a timerfd), so */
			when = 1;       /* never equal to HRT_ARMED_EXPIRED either */
		if (when != b->armed)
			hrt__wakeup_arm(b, when);
	}
}

hrt_time_t hrt__clock_now(clockid_t clock);

/* Coalesced sleep (base.c: the window; loop.c: the sleep). ---------------- */
int hrt__coalesce_from_env(void);
/* Lock held.  0 if nothing is queued; else 1 with the earliest hard expiry
 * *hard, the soft expiry *owner of the timer that has it, and *soft, the
 * latest soft expiry <= *hard found (>= *owner; a bounded search). */
int hrt__base_window_locked(struct hrt_base *b, hrt_time_t *owner,
			    hrt_time_t *soft, hrt_time_t *hard);
/* The rule (loop.c header): 1 with the instant to sleep until and the
 * thread slack to sleep with, or 0 if no ranged sleep fits (sleep exactly
 * until `hard`).  `div` is the kernel's slack estimate divisor. */
int hrt__coalesce_plan(hrt_time_t now, hrt_time_t owner, hrt_time_t soft,
		       hrt_time_t hard, int div, hrt_time_t *until, hrt_time_t *slack);
int hrt__slack_div(void);
/* Test seam: the wait a coalesced sleep uses; NULL restores the system call. */
void hrt__base_set_pwait2(struct hrt_base *b, hrt__pwait2_fn fn, void *ctx);
int hrt__pwait2_sys(void *ctx, int epfd, struct epoll_event *evs, int n,
		    hrt_time_t now, hrt_time_t timeout);

#endif /* HRT_BASE_H */
