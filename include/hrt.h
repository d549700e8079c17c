/*
 * hrt.h - high-resolution range timers in user space.
 *
 *  - A range timer has a soft (earliest) and a hard (latest) expiry; the
 *    engine may run it anywhere in [soft, hard].
 *  - Timers are intrusive: embed a struct hrt_timer in your own struct and
 *    recover it with container_of.  No timer operation allocates memory.
 *  - Timers live in a red-black tree keyed by hard expiry and augmented with
 *    the minimum soft expiry of every subtree, so an expiry pass can find
 *    every soft-expired timer (the "greedy" walk), not only the leftmost run.
 *  - The greedy walk is a policy knob: off, only when the owning thread is
 *    idle, or always.  Wake-ups are programmed for the earliest hard expiry.
 *  - Real wake-ups come from a Linux timerfd you can hand to any event loop
 *    (hrt_base_fd + hrt_base_dispatch) or from the built-in hrt_base_loop.
 *
 * Errors are negative errno values; the library never prints, aborts or
 * exits.  All times are nanoseconds in one signed 64-bit type.
 */
#ifndef HRT_H
#define HRT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>   /* clockid_t */
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HRT_BUILDING) && defined(__GNUC__)
#define HRT_EXTERN __attribute__((visibility("default")))
#else
#define HRT_EXTERN
#endif

#define HRT_VERSION_MAJOR 0
#define HRT_VERSION_MINOR 1
#define HRT_VERSION_PATCH 0
#define HRT_VERSION_STRING "0.1.0"

/* The library's version at run time ("0.1.0"); HRT_VERSION_STRING is the
 * version of the header compiled against. */
HRT_EXTERN const char *hrt_version(void);

/* The struct that embeds MEMBER, from a pointer to that member (a timer
 * handed to its callback, a tree node's timer).  PTR must point into a
 * TYPE: the result is undefined otherwise. */
#define HRT_CONTAINER_OF(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

typedef int64_t hrt_time_t;             /* nanoseconds */
#define HRT_TIME_MAX INT64_MAX          /* "never" */

/* A base whose clock moves only when the caller says so (simulation, tests).
 * No real clockid_t has this value (Linux clock ids are small or negative). */
#define HRT_CLOCK_VIRTUAL ((clockid_t)0x48525400)

struct hrt_base;
struct hrt_timer;

enum hrt_restart { HRT_NORESTART = 0, HRT_RESTART = 1 };
enum hrt_mode { HRT_MODE_ABS = 0, HRT_MODE_REL = 1 };
enum hrt_greedy { HRT_GREEDY_OFF = 0, HRT_GREEDY_IDLE = 1, HRT_GREEDY_ALWAYS = 2 };

typedef enum hrt_restart (*hrt_callback)(struct hrt_timer *timer, hrt_time_t now);

/*
 * Red-black tree linkage, embedded in every timer.  Private.
 * hrt__pc packs the parent pointer and the colour (bit 0) in one word.
 */
#ifndef HRT_RB_NODE_DEFINED
#define HRT_RB_NODE_DEFINED
struct hrt_rb_node {
	uintptr_t hrt__pc;
	struct hrt_rb_node *hrt__left;
	struct hrt_rb_node *hrt__right;
};
#endif

/*
 * A timer.  Embed it; every field is private.  64 bytes on LP64 - one cache
 * line: the tree linkage (24), soft and hard expiry (16), the subtree minimum
 * soft expiry the greedy search prunes with (8), the callback (8), and the
 * owning base with the state bits (queued, pending, staged) packed into the
 * low bits of that pointer (bases are 64-byte aligned).  While a timer is not
 * in a tree its linkage words hold the staging-list links and the number of
 * the pass that last ran it.
 */
struct hrt_list_node {
	struct hrt_list_node *hrt__next, *hrt__prev;
};

struct hrt_timer {
	union {
		struct hrt_rb_node hrt__node;          /* in a tree */
		struct {
			struct hrt_list_node hrt__link;  /* staging list */
			uint64_t hrt__ran_pass;        /* pass that last ran it */
		} hrt__off;
	};
	hrt_time_t hrt__soft;
	hrt_time_t hrt__hard;
	hrt_time_t hrt__subtree_soft;          /* min soft expiry below */
	hrt_callback hrt__fn;
	uintptr_t hrt__base_state;             /* struct hrt_base * | state */
};

struct hrt_stats {
	uint64_t passes;          /* hrt_base_run calls that ran a pass */
	uint64_t expired;         /* callbacks run */
	uint64_t expired_greedy;  /* of those, run by the greedy walk */
	uint64_t greedy_walks;    /* passes that ran the greedy walk */
	uint64_t nodes_visited;   /* tree nodes examined by greedy searches */
	uint64_t starts;          /* successful start calls */
	uint64_t cancels;         /* cancels that dequeued a timer */
	uint64_t restarts;        /* HRT_RESTART re-queues */
	uint64_t reprograms;      /* wake-up device re-arms */
	uint64_t wakeups;         /* hrt_base_dispatch calls (device fired) */
	uint64_t clock_jumps;     /* CLOCK_REALTIME changes seen (ECANCELED) */
};

/* Bases ------------------------------------------------------------------ */

/* CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_REALTIME or HRT_CLOCK_VIRTUAL.
 * NULL with errno set (EINVAL, ENOMEM) on failure.  The greedy policy starts
 * from the environment: HRT_GREEDY=off|idle|always (unset/unknown: idle). */
HRT_EXTERN struct hrt_base *hrt_base_new(clockid_t clock);
/* Frees the base (and its fds: take hrt_base_fd out of your event loop
 * first); no other thread may use it any more.
 * Timers are not touched, and each remembers the base it was last started
 * on: re-initialise (hrt_timer_init) every timer ever started on it,
 * queued or not, before using it again. */
HRT_EXTERN void hrt_base_free(struct hrt_base *base);

HRT_EXTERN int hrt_base_set_greedy(struct hrt_base *base, enum hrt_greedy policy);
HRT_EXTERN enum hrt_greedy hrt_base_get_greedy(const struct hrt_base *base);
HRT_EXTERN clockid_t hrt_base_get_clock(const struct hrt_base *base);

/* The base's clock.  A virtual base returns the last time given to
 * hrt_base_set_time or hrt_base_run (0 at start). */
HRT_EXTERN hrt_time_t hrt_base_now(struct hrt_base *base);
/* Virtual bases only; -EINVAL otherwise or if time would go backwards. */
HRT_EXTERN int hrt_base_set_time(struct hrt_base *base, hrt_time_t now);

/* Earliest hard expiry queued: when a wake-up is due.  HRT_TIME_MAX if none. */
HRT_EXTERN hrt_time_t hrt_base_next_event(const struct hrt_base *base);
/* Number of queued timers. */
HRT_EXTERN size_t hrt_base_count(const struct hrt_base *base);

/*
 * One expiry pass, i.e. one timer interrupt at `now`; `idle` says whether the
 * owning thread has nothing else to do (greedy policy IDLE walks only then).
 * Returns the number of callbacks run.  For a virtual base it also advances
 * the time to `now` (never backwards).  Called from inside a callback of the
 * same base, or while another thread runs a pass on it, it returns 0.
 *
 * `now` is capped at HRT_TIME_MAX - 2, so a timer whose soft expiry is
 * HRT_TIME_MAX - 1 or later never runs.
 *
 * Within a pass each timer runs at most once: the leftmost run (timers in
 * hard order while soft <= now), then, if greedy, every queued timer with
 * soft <= now in hard order, re-evaluated after each callback.  A timer that
 * already ran and is re-queued during the pass waits for the next pass (one
 * moved to another base in between counts as new there).
 */
HRT_EXTERN size_t hrt_base_run(struct hrt_base *base, hrt_time_t now, int idle);

HRT_EXTERN void hrt_base_get_stats(const struct hrt_base *base, struct hrt_stats *out);
HRT_EXTERN void hrt_base_reset_stats(struct hrt_base *base);

/* Timers ----------------------------------------------------------------- */

HRT_EXTERN void hrt_timer_init(struct hrt_timer *timer, hrt_callback fn);
/* Soft expiry `soft` (absolute, or relative to hrt_base_now), hard expiry
 * soft + slack (saturating).  Re-queues a queued timer, onto `base` even if
 * it was on another base - except while its callback runs: then it stays on
 * the base running it (so one timer's callbacks never overlap, and a cancel
 * finds the callback to wait for).  Never waits for a callback.  -EINVAL:
 * NULL argument, no callback, slack < 0, unknown mode. */
HRT_EXTERN int hrt_timer_start_range(struct hrt_timer *timer, struct hrt_base *base,
				     hrt_time_t soft, hrt_time_t slack, enum hrt_mode mode);
HRT_EXTERN int hrt_timer_start(struct hrt_timer *timer, struct hrt_base *base,
			       hrt_time_t expiry, enum hrt_mode mode);
/* 1 if it was queued, 0 if not.  If its callback is running on another
 * thread, waits until it has returned (not when called from that callback)
 * and then dequeues what it re-queued (HRT_RESTART, or a start made
 * meanwhile): that counts as queued, 1.  A re-start that became due in the
 * meantime may run before the cancel gets the lock; the cancel waits for
 * that callback too (0 if nothing is queued then).  On return the timer is
 * neither queued nor running elsewhere. */
HRT_EXTERN int hrt_timer_cancel(struct hrt_timer *timer);
/* As hrt_timer_cancel, but -EBUSY (and nothing done) while the callback runs
 * on another thread. */
HRT_EXTERN int hrt_timer_try_cancel(struct hrt_timer *timer);
/* Moves soft and hard forward by whole intervals until hard > now; returns
 * the number of intervals.  0 (nothing changed) if hard > now, interval <= 0
 * or the timer is queued.  For a timer that is not queued. */
HRT_EXTERN uint64_t hrt_timer_forward(struct hrt_timer *timer, hrt_time_t now,
				      hrt_time_t interval);
HRT_EXTERN int hrt_timer_is_queued(const struct hrt_timer *timer);
HRT_EXTERN int hrt_timer_is_running(const struct hrt_timer *timer);
HRT_EXTERN hrt_time_t hrt_timer_get_soft(const struct hrt_timer *timer);
HRT_EXTERN hrt_time_t hrt_timer_get_hard(const struct hrt_timer *timer);
/* The base the timer was last started on (NULL if never). */
HRT_EXTERN struct hrt_base *hrt_timer_get_base(const struct hrt_timer *timer);

/* Introspection (tools, tests) ------------------------------------------- */

struct hrt_tree_node {
	const struct hrt_timer *timer;
	const struct hrt_timer *left, *right;   /* children, or NULL */
	hrt_time_t subtree_soft;                /* min soft expiry below */
	int depth;                              /* root = 0 */
	int red;
};
/* Calls fn for every queued timer in the tree in key order.  For display;
 * fn must not modify the base. */
HRT_EXTERN int hrt_base_walk_tree(struct hrt_base *base,
				  void (*fn)(const struct hrt_tree_node *n, void *ctx),
				  void *ctx);
/* Verifies every red-black property, parent link, key order, augmented
 * value and cached pointer; 0 or a negative errno (-EUCLEAN) if broken. */
HRT_EXTERN int hrt_base_check(struct hrt_base *base);

/* Real wake-ups (timerfd.c, loop.c) --------------------------------------- */

/* A non-blocking, close-on-exec timerfd on the base's clock, owned by the
 * base, kept armed at hrt_base_next_event().  -EINVAL for virtual bases. */
HRT_EXTERN int hrt_base_fd(struct hrt_base *base);
/*
 * Call when the fd is readable: drains it, reads the clock once, runs one
 * pass and re-arms.  Returns the number of callbacks run, or a negative
 * errno: -EINVAL (NULL, or no fd yet: call hrt_base_fd first); a read error
 * of the fd other than EAGAIN (nothing ran); or the error of re-arming it
 * (callbacks may have run, the fd is not armed: call again soon, each call
 * retries; a host loop needs its own timer for that).  A re-arm that fails
 * inside a start or cancel is only reported by the next dispatch; the fd
 * may stay disarmed until then.  timerfd_settime fails in practice only
 * on a bad fd or ENOMEM.
 * `idle`: nothing else is waiting to run in the host loop this iteration
 * (the article's "CPU idle at the interrupt").  In loops that order their
 * callbacks, run hrt's first and pass whether other work is pending behind
 * it, or note whether other callbacks shared this wake-up; examples/ shows
 * both for libuv, libev, sd-event and epoll.
 */
HRT_EXTERN ssize_t hrt_base_dispatch(struct hrt_base *base, int idle);
/*
 * Waits and dispatches (idle = 1) until hrt_base_stop(); returns 0.  A
 * negative errno if the base is virtual or creating its fds fails, if
 * reading the timerfd or epoll_wait fails, or if re-arming the timerfd
 * keeps failing for about half a second (it retries, polling meanwhile,
 * so nothing runs late by more than the poll interval).  Queued timers
 * stay queued in every case; call it again to go on.
 */
HRT_EXTERN int hrt_base_loop(struct hrt_base *base);
/* Makes hrt_base_loop return; from a callback or any thread.  A stop made
 * while no loop runs is kept: the next hrt_base_loop returns 0 at once. */
HRT_EXTERN int hrt_base_stop(struct hrt_base *base);

/* Coalesced sleep (base.c, loop.c) ----------------------------------------- */

#include <stdbool.h>

/*
 * A timerfd has no slack, so every hrt wake-up is a timer interrupt of its
 * own.  With coalescing (on by default; HRT_COALESCE=off|on is read by
 * hrt_base_new, this call changes it; the loop reads it when it starts)
 * hrt_base_loop sleeps in epoll_pwait2 with the thread's timer slack
 * (prctl PR_SET_TIMERSLACK) set to the window below, with the timerfd
 * disarmed (a timer with no slack would stop the kernel's expiry walk), so
 * the kernel ends the sleep on an interrupt that happens anyway.
 *
 * The window rule.  H: the earliest hard expiry queued; its timer is the
 * owner, with soft expiry s0 <= H.  S: the latest soft expiry <= H (a search
 * of at most 64 nodes: S >= s0 in any case).  The sleep starts ending at
 * T >= s0 and ends by T + slack <= H: every wake-up runs at least the owner
 * and no timer runs after its hard expiry by the engine's choice (only by
 * the OS's own lateness).  T = min(S, bound) pushed as late as the slack's
 * rounding allows; bound keeps the kernel's own widening of the slack (the
 * sleep's length / 1000, / 200 at nice > 0) inside H.  Where no such T >= s0
 * exists (a window narrower than about 0.1 % of the distance to it) that
 * sleep is the exact timerfd one.  Only CLOCK_MONOTONIC bases coalesce (the
 * sleep is relative on that clock).  Kernels before 5.11 (no epoll_pwait2:
 * ENOSYS) get the timerfd path, decided on the first sleep.  The thread's
 * timer slack, which its callbacks' own sleeps also see, is restored when
 * the loop returns.  A coalesced wake-up counts in stats.wakeups; the fd
 * is not re-armed while the loop coalesces (no stats.reprograms).
 */
HRT_EXTERN int hrt_base_set_coalesce(struct hrt_base *base, bool on);
HRT_EXTERN bool hrt_base_get_coalesce(const struct hrt_base *base);
/*
 * The same window for a host loop that sleeps itself (plain epoll, or any
 * loop that takes a timeout and runs on a thread whose slack it may set),
 * computed now on the base's clock: 1 with [*soft, *hard] - sleep until
 * *soft with timer slack *hard - *soft (skip the prctl when 0: 0 means the
 * default slack) and call hrt_base_run(base, now, idle) on waking; 0 if no
 * ranged sleep fits (*soft = *hard = the earliest hard expiry: sleep on the
 * timerfd as usual) or nothing is queued (both HRT_TIME_MAX); -EINVAL.
 * Call it after each pass and after starts that may move the earliest hard
 * expiry (or keep the timerfd armed as the safety net, at the cost the
 * comment above explains).
 */
HRT_EXTERN int hrt_base_wait_window(struct hrt_base *base, hrt_time_t *soft,
				    hrt_time_t *hard);

#ifdef __cplusplus
}
#endif
#endif /* HRT_H */
