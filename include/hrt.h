/* SPDX-License-Identifier: MIT */
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
 * Conventions (since 1.0).
 *  - Every call that can fail returns a signed integer (int; ssize_t or
 *    int64_t when success carries a count): >= 0 success, a negative errno
 *    failure.  errno is never a result channel.  Output parameters are
 *    written only on success.  The library never prints, aborts or exits.
 *    (Except a debugging build of it, `make VERIFY=1`: that one checks its
 *    own invariants as it goes and aborts with the broken rule on stderr,
 *    e.g. after a program wrote into a queued timer's hrt__ fields.)
 *  - A NULL pointer argument not documented as optional is -EINVAL, from
 *    every call, before anything else is looked at (hrt_base_free too).
 *  - A refusal is a negative errno, never 0: 0 means "nothing to do"
 *    (hrt_base_run, hrt_timer_forward).
 *  - Queries take const pointers and answer through out-parameters, so no
 *    valid value doubles as an error; predicates return int: 1, 0 or -errno.
 *  - Creation options are flags of hrt_base_new: the virtual clock
 *    (HRT_BASE_VIRTUAL), the single-thread base (HRT_BASE_UNLOCKED) and
 *    reading the environment (HRT_BASE_ENV, the only way it is read).
 *  - struct hrt_stats only ever grows at its end; hrt_base_get_stats takes
 *    the caller's sizeof.
 *  - Where hrt differs on purpose from libuv, libev or the kernel's
 *    hrtimers, the call's comment says so.
 * All times are nanoseconds in one signed 64-bit type, on the base's clock.
 *
 * Threads.  Every call may be made from any thread unless its comment says
 * otherwise; a base serialises its callers with one lock.  Each base has
 * at most one pass at a time (hrt_base_run, hrt_base_dispatch or the pass
 * inside hrt_base_loop), run by the thread that called it.  (The cost, not
 * the contract: the lock is a mutex biased to one thread, the base's
 * owner - the first to make 16 calls in a row with no other thread's call
 * between them - whose calls skip the mutex.  A call from another thread
 * then costs one membarrier(2) system call, a few microseconds; if the
 * owner made fewer than 256 calls since the last such call, the base goes
 * back to the plain mutex for everyone, and the next claim needs twice as
 * long a streak, up to 4096.  Without membarrier every call takes the
 * mutex.)
 *
 * Callbacks.  A callback runs on the thread running the pass, with no lock
 * held and its timer off the queue; `now` is the time the pass runs at (the
 * clock read once by dispatch, or hrt_base_run's argument, capped), which is
 * >= the timer's soft expiry.  It may: free or re-initialise its own timer
 * (then return HRT_NORESTART and touch it no more), start, cancel or
 * forward any timer (its own included: a cancel of itself returns at once),
 * query or stop any base, and run passes of other bases.  It must not: free
 * its own base (-EBUSY), run a pass or hrt_base_loop of its own base
 * (-EBUSY at once), or wait
 * (hrt_timer_cancel) for a callback that may itself be waiting for this
 * one - see hrt_timer_cancel.  HRT_RESTART re-queues the timer with the
 * soft and hard expiry it then has (move them with hrt_timer_forward, or
 * let a struct hrt_repeat move them); it is ignored if a start queued the
 * timer meanwhile (that start wins), and if the callback cancelled its own
 * timer (since 1.2: the cancel wins, and the library touches the timer no
 * more, so a close that frees it next is safe - as libuv's uv_timer_stop
 * ends a repeating timer; the kernel's hrtimer_try_to_cancel from the
 * callback fails and HRTIMER_RESTART re-queues, which hrt does not
 * follow).
 *
 * "Hard" is the engine's promise, not the operating system's: a timer runs
 * by the first pass at or after its hard expiry, and a pass runs when the
 * OS delivers the wake-up.  A late wake-up (scheduling, a loaded or virtual
 * machine) runs timers late; stats.late and
 * stats.late_max_ns say how often and how late.
 *
 * fork().  A base belongs to the process that made it.  In a child forked
 * after hrt_base_new, hrt_base_fd, hrt_base_dispatch, hrt_base_loop and
 * hrt_base_stop return -ECHILD and starts and cancels never re-arm the
 * timerfd (it is the parent's, shared); timers and passes (hrt_base_run)
 * still work there, also after a fork made while other threads were
 * inside calls (the library's fork handlers take every base's lock around
 * the fork; in the child a pass or a wait of a thread that is not there
 * is over).  So do not fork from a hrt_base_walk_tree callback: the fork
 * waits for every other base's lock while holding the walked one.  A
 * child that wants wake-ups makes its own base.
 *
 * Entry checks.  Every call checks, in this order: its arguments (NULL or
 * a rejected value: -EINVAL); another thread on an HRT_BASE_UNLOCKED base
 * (-EPERM); a hrt_base_walk_tree callback of this thread (-EDEADLK for a
 * call that would change a base); a forked child, for the fd calls
 * (-ECHILD); a pass or loop of the base's own (hrt_base_run,
 * hrt_base_dispatch and hrt_base_loop: -EBUSY).
 */
#ifndef HRT_H
#define HRT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>   /* clockid_t, ssize_t */
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HRT_BUILDING) && defined(__GNUC__)
#define HRT_EXTERN __attribute__((visibility("default")))
#else
#define HRT_EXTERN
#endif

#define HRT_VERSION_MAJOR 1
#define HRT_VERSION_MINOR 2
#define HRT_VERSION_PATCH 0
#define HRT_VERSION_STRING "1.2.0"

/* The library's version at run time ("1.2.0"); HRT_VERSION_STRING is the
 * version of the header compiled against.  It cannot fail. */
HRT_EXTERN const char *hrt_version(void);

/* The struct that embeds MEMBER, from a pointer to that member (a timer
 * handed to its callback, a tree node's timer).  PTR must point into a
 * TYPE: the result is undefined otherwise. */
#define HRT_CONTAINER_OF(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

typedef int64_t hrt_time_t;             /* nanoseconds */
#define HRT_TIME_MAX INT64_MAX          /* "never" */

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
 * line: the owning base with the state bits (queued, pending, wheel) packed
 * into the low bits of that pointer (bases are 64-byte aligned), the tree
 * linkage (24), soft and hard expiry (16), the subtree minimum soft expiry
 * the greedy search prunes with (8) and the callback (8).  While a timer is
 * not in a tree its linkage words hold its links in a slot of the base's
 * wheel of far timers and that slot, and the subtree minimum's word the
 * number of the pass that last ran it.  What a re-arm reads and writes
 * comes first: one line for a timer at offset 0 or 16 of one (malloc: 16).
 */
struct hrt_list_node {
	struct hrt_list_node *hrt__next, *hrt__prev;
};

struct hrt_timer {
	uintptr_t hrt__base_state;             /* struct hrt_base * | state */
	union {
		struct hrt_rb_node hrt__node;          /* in a tree */
		struct {
			struct hrt_list_node hrt__link;  /* wheel slot */
			uint64_t hrt__slot;            /* which (level * 64 + index), start seq */
		} hrt__off;
	};
	hrt_time_t hrt__soft;
	hrt_time_t hrt__hard;
	union {
		hrt_time_t hrt__subtree_soft;  /* in a tree: min soft expiry below */
		uint64_t hrt__ran_pass;        /* elsewhere: pass that last ran it */
	};
	hrt_callback hrt__fn;
};

/* The counters.  Fields are only ever appended: pass sizeof(struct
 * hrt_stats) to hrt_base_get_stats, and a library older or newer than the
 * header fills what both know. */
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
	uint64_t wakeups;         /* device fired (hrt_base_dispatch), or a
				   * coalesced sleep of hrt_base_loop ended */
	uint64_t clock_jumps;     /* CLOCK_REALTIME changes seen (ECANCELED) */
	uint64_t late;            /* callbacks whose pass ran after their hard expiry */
	uint64_t late_max_ns;     /* the most any ran after it (pass time - hard) */
	uint64_t wheel_moves;     /* timers moved from the far-timer wheel into the tree */
	uint64_t wheel_cascades;  /* timers re-placed inside the wheel as the horizon moved */
	uint64_t tree_ops;        /* inserts into and erases from the tree (log n each) */
	/* Since 1.2: */
	uint64_t early_wakeups;   /* device wake-ups before any hard expiry was due:
				   * the lazy re-arm's price (hrt_base_fd) */
	uint64_t wheel_scanned;   /* far timers visited to find a slot's earliest
				   * hard expiry again (at most 128 a search) */
	uint64_t passes_cut;      /* passes ended by hrt_base_set_pass_limit, or
				   * (since 1.3) by the hosts' default budget */
};

/* Bases ------------------------------------------------------------------ */

/*
 * Makes a base and stores it in *basep: 0, or -EINVAL (NULL basep, an
 * unknown clock or flag), -ENOMEM; *basep is untouched on failure.
 * clock: CLOCK_MONOTONIC, CLOCK_BOOTTIME or CLOCK_REALTIME.  Creates no fd
 * (hrt_base_fd does, on first use).  Defaults: greedy policy idle,
 * coalescing on.  Flags, or'ed:
 *
 * HRT_BASE_VIRTUAL: a base whose time moves only when the caller says so
 * (simulation, tests): hrt_base_set_time and hrt_base_run move it, from 0.
 * `clock` names the clock that time stands for (hrt_base_get_clock reports
 * it).  It has no fd: hrt_base_fd, hrt_base_dispatch and hrt_base_loop
 * return -EOPNOTSUPP (hrt_base_wait_window works, on its time).
 *
 * HRT_BASE_UNLOCKED: a single-thread base.  Only the thread that created it
 * may call anything with it, or with a timer queued on it, or start a timer
 * on it (callbacks run on that thread too, so they may).  It takes no mutex
 * and no atomic read-modify-write on any path.  A call from another thread
 * is refused with -EPERM before it touches anything (a cancel or query of
 * a timer that is not queued answers 0 and reads nothing of the base:
 * hrt_timer_cancel, since 1.3); hrt_base_stop
 * included, so stop such a loop from one of its own callbacks.  Moving a
 * timer between an unlocked base and another base works only on the owner
 * thread of every unlocked base involved.  The owner is the creating
 * thread itself, not its address or TLS block: no thread started later is
 * ever its owner, so once the creator has exited nobody can free the base
 * - free it before the thread exits.  (libev's loops have no owner check.)
 *
 * HRT_BASE_ENV: the environment may change the defaults, read once here:
 * HRT_GREEDY=off|idle|always, HRT_COALESCE=off|on (unset or unknown: the
 * default).  Without the flag the environment is never read.
 */
#define HRT_BASE_UNLOCKED 1u
#define HRT_BASE_VIRTUAL  2u
#define HRT_BASE_ENV      4u
HRT_EXTERN int hrt_base_new(struct hrt_base **basep, clockid_t clock, unsigned flags);
/*
 * Frees the base and its fds (take hrt_base_fd out of your event loop
 * first): 0, or -EINVAL for NULL.  -EBUSY, and nothing freed, while the
 * base holds queued timers (cancel them first: libuv's uv_loop_close rule),
 * runs a pass (so from one of its own callbacks, or while another thread
 * runs one), runs hrt_base_loop, has a cancel waiting, or when called from
 * a hrt_base_walk_tree callback.  Calls of other threads already in
 * progress are waited for; none may begin once hrt_base_free is called,
 * and once it returned 0 no thread may use the base.  Timers are not
 * touched; each remembers the base it was last started on: re-initialise
 * (hrt_timer_init) every timer ever started on it before using it again -
 * except hrt_timer_cancel, hrt_timer_try_cancel, hrt_timer_is_queued and
 * hrt_timer_is_running, which answer 0 for such a timer without reading
 * the base (since 1.3; "A timer that is not queued" at hrt_timer_cancel),
 * so a close that cancels after the base is gone is safe.  `make VERIFY=1`:
 * a refusal because timers are queued checks every one of them, so a
 * timer freed while queued is found there (see hrt_timer_cancel).
 */
HRT_EXTERN int hrt_base_free(struct hrt_base *base);

/* -EINVAL: NULL or an unknown policy.  Takes effect at the next pass. */
HRT_EXTERN int hrt_base_set_greedy(struct hrt_base *base, enum hrt_greedy policy);
/* The policy (an enum hrt_greedy, >= 0), or -errno. */
HRT_EXTERN int hrt_base_get_greedy(const struct hrt_base *base);
/* The clock given to hrt_base_new, in *clock (clock ids may be negative:
 * CPU-time clocks); 0 or -errno. */
HRT_EXTERN int hrt_base_get_clock(const struct hrt_base *base, clockid_t *clock);

/* The base's clock now in *now (one clock_gettime); 0 or -errno.  A
 * virtual base gives the last time given to hrt_base_set_time or
 * hrt_base_run (0 at start). */
HRT_EXTERN int hrt_base_now(const struct hrt_base *base, hrt_time_t *now);
/* Virtual bases only: sets the time without running anything.  -EINVAL:
 * NULL, or time would go backwards; -EOPNOTSUPP: not virtual; -EDEADLK
 * from a hrt_base_walk_tree callback. */
HRT_EXTERN int hrt_base_set_time(struct hrt_base *base, hrt_time_t now);

/* Earliest hard expiry queued, in *when: when a wake-up is due.  1 if a
 * timer is queued, 0 if none (*when = HRT_TIME_MAX), or -errno.  Never
 * late, and exact but in one case: the wheel of far timers keeps each
 * slot's earliest hard expiry, found again in O(1) when its timer leaves
 * if the slot's timers came in order (same-length timeouts, pushed-back
 * ones); a slot whose timers came out of order is scanned after its
 * earliest left if it is small (at most 128 timers a call:
 * stats.wheel_scanned); a bigger one answers with the earliest hard
 * expiry it held (since 1.3; 1.2 scanned it whole, on every call): early,
 * at or after the slot's start, which is at least ~17 ms past the last
 * pass.  A pass at that instant (the one early wake-up, counted in
 * stats.early_wakeups when the fd or a loop woke for it) cascades the
 * slot into smaller ones and the answer is exact again.  So no sequence
 * of calls makes one O(n) - the kernel's timer wheel gives up exactness
 * the same way.  In the base's clock, relative timers of a CLOCK_REALTIME base
 * too (their monotonic expiry moved by the offset of the wall clock the
 * base last measured: at each pass, on every set of the clock the kernel
 * reports, and when its timerfd is armed after being disarmed or held
 * (hrt_base_hold_fd), since such a timerfd hears of no set; a pass with no
 * set reported keeps the offset unless it moved by 20 us, more than two
 * clock reads' noise). */
HRT_EXTERN int hrt_base_next_event(const struct hrt_base *base, hrt_time_t *when);
/* Number of queued timers, or -errno. */
HRT_EXTERN ssize_t hrt_base_count(const struct hrt_base *base);

/*
 * One expiry pass, i.e. one timer interrupt at `now`; `idle` says whether the
 * owning thread has nothing else to do (greedy policy IDLE walks only then).
 * Returns the number of callbacks run (0: nothing was due), or -EINVAL
 * (NULL), -EPERM (another thread, unlocked base), -EDEADLK (from a
 * hrt_base_walk_tree callback), -EBUSY (a pass of this base is running:
 * called from one of its callbacks, or on another thread) - a refusal is
 * never 0.  For a virtual base it also advances the time to `now` (never
 * backwards).  Any base may be run this way; for a real one, `now` is
 * normally hrt_base_now() (hrt_base_dispatch does that).
 *
 * `now` is capped at HRT_TIME_MAX - 2, so a timer whose soft expiry is
 * HRT_TIME_MAX - 1 or later never runs.
 *
 * Within a pass each timer runs at most once: the leftmost run (timers in
 * queue order while soft <= now), then, if greedy, every queued timer with
 * soft <= now in queue order, re-evaluated after each callback.  A big
 * slot of far timers whose earliest is unknown (hrt_base_next_event) ends
 * the leftmost run at its bound as a timer there would: a soft-due timer
 * whose hard expiry lies past that bound waits for the greedy walk or for
 * the wake-up at the bound, which comes before its hard expiry.
 *
 * Queue order (the tie rule): by hard expiry; equal hard expiries by soft
 * expiry; equal both in the order they were queued (a start, or a
 * restart).  libuv runs equal timeouts in start order (its timer_order
 * test) and so does hrt for exact timers; the soft tie-break is on purpose:
 * of two timers due by the same instant, the one runnable first goes
 * first, and it lets the far-timer wheel place timers by their soft expiry
 * with no start order kept in the tree.  On a CLOCK_REALTIME base the
 * absolute and the relative timers are one queue, by hard expiry in the
 * base's clock, an absolute timer first on a tie: the leftmost run ends
 * at the first timer of either kind that is not due.  A timer that
 * already ran and is re-queued during the pass waits for the next pass (one
 * moved to another base in between counts as new there; one re-armed in
 * the other mode on a CLOCK_REALTIME base, which moves it between the
 * base's two timer sets, still waits).
 */
HRT_EXTERN ssize_t hrt_base_run(struct hrt_base *base, hrt_time_t now, int idle);
/*
 * An optional bound on one pass (since 1.2): it ends after `callbacks`
 * callbacks, or once `ns` nanoseconds of the monotonic clock have passed
 * since it began (checked after each callback), whichever comes first; 0
 * leaves that bound off (the default: both off).  What it leaves stays
 * due: hard-due timers keep the wake-up armed in the past, so the next
 * pass comes at once - after the host loop's own work, in
 * hrt_base_loop_host and a host's loop - and starts again with the
 * leftmost run (the greedy walk runs only in a pass that finished its
 * leftmost run within the bound); a coalescing loop sleeps no more until
 * they ran.  So a burst of expiries (idle connections closed in one
 * window) is spread over passes with I/O between them, as the kernel
 * bounds its hrtimer interrupt.  stats.passes_cut counts the passes it
 * ended.  Takes effect at the next pass; a plain word, so a callback may
 * set it.  0, or -EINVAL (NULL base, ns < 0), -EPERM, -EDEADLK.
 *
 * The loops' passes (since 1.3).  With no limit set, the passes that run
 * beside a host's I/O - hrt_base_loop_host's and hrt_base_plan_sleep's -
 * follow the article's rule without it: hard-due timers first, all of
 * them, however long they take (never behind the host's I/O) - and, so
 * that deferring one never makes it late, those within 2 ms of their hard
 * expiry count as hard-due here; the
 * soft-due ones (the rest of the leftmost run and the greedy walk) only
 * in an idle pass, and for at most a default budget of 50 us of callbacks
 * once the hard-due ones ran (the first callback of a pass always runs).
 * What the budget leaves stays due and runs after the host's next turn,
 * with no sleep in between; and the next pass's budget is twice as long
 * (up to 2 ms; back to 50 us after a pass the budget did not cut), so a
 * backlog of timers catches up instead of running late.  In hrt_base_loop_host a wake-up on which the
 * host's fd was ready (or its deadline passed) runs only the hard-due
 * timers, and the soft-due ones in the next idle pass, right after the
 * host's turn; a soft-due timer thus waits for the host's I/O, but never
 * past its hard expiry, where it becomes hard-due.  A limit set here
 * replaces the budget: it bounds every callback, hard-due ones too.
 * hrt_base_loop alone (no host), hrt_base_run and hrt_base_dispatch have
 * no budget: the caller says what idle is.
 */
HRT_EXTERN int hrt_base_set_pass_limit(struct hrt_base *base, unsigned callbacks, hrt_time_t ns);
/* The bound, in *callbacks and *ns (0: off): 0 or -errno. */
HRT_EXTERN int hrt_base_get_pass_limit(const struct hrt_base *base, unsigned *callbacks,
				       hrt_time_t *ns);

/* Copies the counters to *out: `size` is sizeof(*out) as the caller knows
 * it; the library copies what it has of that prefix and zero-fills the
 * rest.  0, or -EINVAL (NULL, size 0 or not a multiple of 8), -EPERM. */
HRT_EXTERN int hrt_base_get_stats(const struct hrt_base *base, struct hrt_stats *out,
				  size_t size);
/* Zeroes the counters: 0 or -errno (-EDEADLK from a walk callback). */
HRT_EXTERN int hrt_base_reset_stats(struct hrt_base *base);

/* Timers ----------------------------------------------------------------- */

/*
 * Makes `timer` a timer that is not queued, with callback fn: 0, or
 * -EINVAL (NULL timer or fn; the timer is untouched).  It writes the whole struct
 * and reads none of it, so it works on fresh memory - and therefore cannot
 * see whether the timer is queued: calling it on a queued timer corrupts
 * that base (hrt_base_check reports it; a later start may crash).  Rule:
 * init only a timer that is not queued - never started, cancelled, run
 * with HRT_NORESTART, or whose base is gone.  To change the callback of a
 * queued timer, cancel it, init it, start it.
 */
HRT_EXTERN int hrt_timer_init(struct hrt_timer *timer, hrt_callback fn);
/* Soft expiry `soft` (absolute, or relative to hrt_base_now), hard expiry
 * soft + slack.  On a CLOCK_REALTIME base (not a virtual one) a relative
 * timer keeps its length as Linux's relative realtime timers do: it is
 * kept on CLOCK_MONOTONIC, so a set of the wall clock does not move it
 * ("in 200 ms", not "at 12:00:00.2"); an absolute one follows the set.
 * A window costs nothing: a timer whose soft expiry is more than about
 * 17 ms past the last pass waits in a timing wheel placed by its soft
 * expiry, whatever its slack, so starting, cancelling and re-arming it is
 * a list link and unlink (O(1)); it enters the red-black tree (O(log n))
 * when its soft expiry comes near, or at once if it already is.
 * A virtual base has one time: relative is from it.  Expiries saturate at
 * the pass cap HRT_TIME_MAX - 2 (a timer that can run always gets a
 * wake-up, even with a slack of HRT_TIME_MAX; one whose soft expiry is
 * past the cap never runs and keeps hard as given).
 * Re-queues a queued timer, onto `base` even if it was on another base -
 * except while its callback runs: then it stays on the base running it (so
 * one timer's callbacks never overlap, and a cancel finds the callback to
 * wait for); if that base keeps another time than `base` (another clock,
 * or either is virtual: a virtual base's time is its own), the instant
 * would mean another moment there, and the start is refused with -EXDEV,
 * nothing changed.  Never waits for a callback; allowed from any thread, also
 * while the timer's callback runs.  -EINVAL: NULL argument, no callback,
 * slack < 0, unknown mode; -EDEADLK from a hrt_base_walk_tree callback;
 * -EXDEV (above). */
HRT_EXTERN int hrt_timer_start_range(struct hrt_timer *timer, struct hrt_base *base,
				     hrt_time_t soft, hrt_time_t slack, enum hrt_mode mode);
/* hrt_timer_start_range with slack 0. */
HRT_EXTERN int hrt_timer_start(struct hrt_timer *timer, struct hrt_base *base,
			       hrt_time_t expiry, enum hrt_mode mode);
/*
 * 1 if it was queued, 0 if not (also for a timer never started), -EINVAL
 * for NULL, -EDEADLK from a hrt_base_walk_tree callback, -EPERM if it is
 * queued or running on another thread's unlocked base.  If its callback
 * is running on another thread, waits until it has returned (not when
 * called from that callback) and then dequeues what it re-queued
 * (HRT_RESTART, or a start made meanwhile): that counts as queued, 1.  A
 * re-start that became due in the meantime may run before the cancel gets
 * the lock; the cancel waits for that callback too (0 if nothing is queued
 * then).  On return the timer is neither queued nor running elsewhere.
 *
 * Deadlock rule (the kernel's hrtimer_cancel rule): waiting needs the
 * callback to return, so a callback must not cancel a timer whose callback
 * may be waiting for it - two callbacks on two bases that cancel each
 * other's running timer wait for each other for ever.  From a callback,
 * use hrt_timer_try_cancel for timers of other bases; it never waits.
 *
 * A timer that is not queued (since 1.3).  A timer neither queued nor
 * running - never started, cancelled, run with HRT_NORESTART, or cancelled
 * by its own callback once that callback returned - is answered 0 by
 * hrt_timer_cancel, hrt_timer_try_cancel, hrt_timer_is_queued and
 * hrt_timer_is_running from the timer alone: they read its state word
 * (and, for a timer a pass took, whether its base is alive, from a
 * process-wide set of live bases that hrt_base_new and hrt_base_free
 * write, under a lock of its own), never its base, which may have been
 * freed.  A freed base has no queued timer and no pass (hrt_base_free
 * refuses, -EBUSY), so every timer it leaves is such a timer: a close may
 * cancel after the base is gone (libuv's uv_timer_stop reads the handle's
 * loop; hrt's cancel of an idle timer does not).  What still needs the
 * base: a timer queued or running (its base cannot be freed meanwhile,
 * unless hrt_base_free races a start or cancel of another thread - the
 * rule at hrt_base_free), and every other timer call (start, forward, the
 * getters, hrt_repeat_again): re-initialise a timer of a freed base first.
 * The guarantees stay those above: a callback running on another thread
 * is waited for (a locked base) and its HRT_RESTART dequeued, a cancel
 * from the callback voids its HRT_RESTART; the answer is the state at one
 * instant of the call, so a start of another thread racing it may queue
 * the timer right after (any start racing a cancel is the caller's race).
 * A timer cancelled other than by its own callback answers 0 from every
 * thread, also one of another thread's HRT_BASE_UNLOCKED base, of which
 * nothing is read; one that ran asks its base while the base lives (so
 * another thread gets -EPERM there, as for a timer queued there).  The
 * pass pays one store for this; a cancel or query of a timer that ran and
 * was not queued again looks its set up in the set of live bases (64
 * buckets by address, each under a spin lock).
 *
 * Freeing a timer (the rule libuv's uv_close keeps for you): cancel every
 * queued timer before freeing its memory - the library writes into a
 * queued timer at its expiry, and into its neighbours' links on any start
 * or cancel near it.  Broken, it is undefined behaviour; what catches it:
 * a library built with AddressSanitizer (`make SANITIZE=1`) reports its
 * next touch of the freed timer as a heap-use-after-free with the stack
 * that freed it; `make VERIFY=1` checks the whole set after each change
 * (amortised beyond 512 timers) and every queued timer when hrt_base_free
 * refuses a base that holds some, and finds a freed one whose first words
 * free() overwrote (glibc's free lists do, for a timer at the start of its
 * allocation); neither sees a freed timer the library never touches again.
 */
HRT_EXTERN int hrt_timer_cancel(struct hrt_timer *timer);
/* As hrt_timer_cancel, but -EBUSY (and nothing done) while the callback runs
 * on another thread: never waits, so it is safe from any callback.  From
 * its own timer's callback either cancel returns at once (0, or 1 if a
 * start in the callback had queued it) and voids the callback's
 * HRT_RESTART (see Callbacks above). */
HRT_EXTERN int hrt_timer_try_cancel(struct hrt_timer *timer);
/*
 * Moves soft and hard forward by the least whole number of intervals that
 * makes soft > now, and returns that number: 0 if soft > now already
 * (nothing to do).  So a periodic range timer runs once per period: its
 * callback (now >= soft) moves it to its next window, whichever pass ran it
 * inside the current one, and two runs are at least interval - slack
 * apart (less only after a run that came later than that past its soft
 * expiry).  The kernel's hrtimer_forward moves until the expiry (its hard
 * one, for a range timer) is past now: hrt differs on purpose, since a
 * range timer normally runs before its hard expiry and would then be due
 * again at once.  For an exact timer (slack 0) both rules agree.
 * Refusals, nothing changed: -EINVAL (NULL, interval <= 0), -EBUSY (the
 * timer is queued), -EDEADLK (from a hrt_base_walk_tree callback), -EPERM
 * (its base is another thread's unlocked one).  Checks and updates under
 * the base's lock, so the README idiom (forward in the callback, return HRT_RESTART) is safe
 * against a start from another thread: whichever comes second wins, and a
 * timer that start queued meanwhile is refused, never re-keyed.  A timer
 * never started has no base to lock: only its owner may touch it.  Exact
 * for any hard and now (negative ones too); a result past the end of time
 * saturates as hrt_timer_start_range does: soft at HRT_TIME_MAX, hard at
 * HRT_TIME_MAX - 2 while soft can still run.  So with now >= HRT_TIME_MAX - 2
 * soft may stay <= now; the count saturates at INT64_MAX.  (The kernel's
 * hrtimer_forward also moves a queued timer; hrt refuses: re-key a
 * queued timer with a start.)  now is in the base's clock (the callback's
 * now); a relative timer of a CLOCK_REALTIME base stays on the monotonic
 * clock, so its period does not move with a set of the wall clock.
 */
HRT_EXTERN int64_t hrt_timer_forward(struct hrt_timer *timer, hrt_time_t now,
				      hrt_time_t interval);
/* 1 if queued (on a base, waiting to run), 0 if not, or -errno.  Lock-free:
 * a snapshot that another thread's start or cancel may change at once.
 * A timer that is not queued is answered without its base (see
 * hrt_timer_cancel). */
HRT_EXTERN int hrt_timer_is_queued(const struct hrt_timer *timer);
/* 1 while its callback runs (on any thread), 0 if not, or -errno.  A timer
 * neither queued nor running is answered without its base (see
 * hrt_timer_cancel). */
HRT_EXTERN int hrt_timer_is_running(const struct hrt_timer *timer);
/* The expiries of the last start or forward, in *soft / *hard (0 after
 * hrt_timer_init): 0, or -EINVAL, -EPERM.  In the base's clock, so they
 * compare with hrt_base_now: a relative timer of a CLOCK_REALTIME base
 * answers its monotonic expiry moved by the base's last measured offset
 * of the wall clock (after a set, the answer moves with the clock). */
HRT_EXTERN int hrt_timer_get_soft(const struct hrt_timer *timer, hrt_time_t *soft);
HRT_EXTERN int hrt_timer_get_hard(const struct hrt_timer *timer, hrt_time_t *hard);
/* The base the timer was last started on, in *base: 0, or -ENOENT if
 * never started, -EINVAL, -EPERM. */
HRT_EXTERN int hrt_timer_get_base(const struct hrt_timer *timer, struct hrt_base **base);

/*
 * A timer that remembers how it was started (since 1.2): a periodic range
 * timer, and a re-arm that needs neither the base nor the numbers again -
 * GCD's dispatch_source_set_timer(source, start, interval, leeway), libuv's
 * uv_timer_t repeat and uv_timer_again.  96 bytes: a struct hrt_timer and
 * what it remembers.  Its `timer` is what the callback is handed (recover
 * yours with HRT_CONTAINER_OF(t, struct hrt_repeat, timer), then
 * HRT_CONTAINER_OF to your struct), and what hrt_timer_cancel,
 * hrt_timer_try_cancel and the queries take; start it with the calls
 * below (a hrt_timer_start_range of it works too, and keeps its period).
 * Every field is private.
 */
struct hrt_repeat {
	struct hrt_timer timer;
	hrt_callback hrt__fn;           /* yours (timer's is the library's) */
	hrt_time_t hrt__delay;          /* the last start's delay from its now */
	hrt_time_t hrt__window;         /* its window (soft to hard) */
	hrt_time_t hrt__interval;       /* its period; 0: once */
};
/* As hrt_timer_init, for a struct hrt_repeat: not queued, callback fn,
 * nothing remembered (hrt_repeat_again: -ENOENT until it is started). */
HRT_EXTERN int hrt_repeat_init(struct hrt_repeat *r, hrt_callback fn);
/*
 * Starts r as hrt_timer_start_range(&r->timer, base, first, window, mode)
 * would, and remembers interval, window and the delay from the base's now
 * (`first` itself for HRT_MODE_REL; saturated, so an instant far in the
 * past stays in the past for hrt_repeat_again).  interval > 0: periodic - a callback
 * that returns HRT_RESTART is queued at the next period, soft = the first
 * soft expiry + k * interval for the least k that puts it after the
 * pass's now, hard = soft + window: no drift, never twice in one window,
 * periods whose windows passed while it could not run are skipped (as
 * hrt_timer_forward does); HRT_NORESTART, or a cancel from the callback,
 * ends it; the callback learns how many periods it stood for from
 * hrt_repeat_periods.  interval 0: once (HRT_RESTART re-queues it where
 * it is, as a plain timer's: its expiries are past, so it runs again in
 * the next pass - never in the same one - and in each pass after while it
 * returns HRT_RESTART, a poll of every pass.  On purpose, and unlike GCD
 * and libuv, where a timer without a period fires once and its handler
 * cannot ask for more: hrt keeps one restart rule for every timer.  To
 * run it later, move it with hrt_timer_forward first, or return
 * HRT_NORESTART and start it again).  As cheap as a start of a new timer
 * (the slow tier: it locks to store what it remembers).  Errors as
 * hrt_timer_start_range's, and -EINVAL for NULL r or interval < 0.
 */
HRT_EXTERN int hrt_repeat_start(struct hrt_repeat *r, struct hrt_base *base, hrt_time_t first,
				hrt_time_t interval, hrt_time_t window, enum hrt_mode mode);
/*
 * Starts r again, on the base it was last started on, relative to that
 * base's now: the delay and window of its last hrt_repeat_start, its
 * period kept (uv_timer_again; an idle timeout pushed back on each
 * request).  A periodic timer's grid moves with it: the next soft expiry
 * is now + delay and the periods after it follow from there (now + delay
 * + k * interval), the old grid forgotten - as a new hrt_repeat_start
 * would, and as GCD's dispatch_source_set_timer moves a source's.  (libuv's
 * uv_timer_again restarts with the repeat as the timeout; hrt with the
 * last start's delay.)  A plain relative start, as cheap.  0, or -EINVAL
 * (NULL), -ENOENT (never started), or hrt_timer_start_range's refusals.
 */
HRT_EXTERN int hrt_repeat_again(struct hrt_repeat *r);
/*
 * The periods of r's grid that came due by `now` (since 1.3): from its
 * soft expiry s, the number of s + k * interval <= now (k >= 0), and 0 if
 * s > now.  In r's callback, with the callback's now and before anything
 * moves the timer (hrt_timer_forward, a start): the periods elapsed since
 * its last run, 1 when it runs in its own window, k when k - 1 windows
 * passed while it could not run - the periods its HRT_RESTART skips (the
 * count hrt_timer_forward returns, and GCD's dispatch_source_get_data of
 * a timer source; the kernel's hrtimer_forward returns it too).  It is
 * computed, not stored: no word of the timer holds it and the pass writes
 * nothing for it, so it is exact at any now, e.g. hrt_base_now's outside
 * the callback.  interval 0 (once): 1 if due, else 0.  A count past
 * INT64_MAX saturates.  Lock-free, as hrt_timer_get_soft: a start of
 * another thread may move the grid at once.  -EINVAL (NULL, or r's timer
 * made plain by hrt_timer_init), -ENOENT (never started), -EPERM (another
 * thread's unlocked base).
 */
HRT_EXTERN int64_t hrt_repeat_periods(const struct hrt_repeat *r, hrt_time_t now);

/* Introspection (tools, tests) ------------------------------------------- */

struct hrt_tree_node {
	const struct hrt_timer *timer;
	const struct hrt_timer *left, *right;   /* children, or NULL */
	hrt_time_t subtree_soft;                /* min soft expiry below */
	int depth;                              /* root = 0 */
	int red;
};
/*
 * Calls fn for every queued timer in the tree in key order (a
 * CLOCK_REALTIME base: the tree of absolute timers, then that of relative
 * ones, whose node keys are CLOCK_MONOTONIC instants; far timers
 * are moved from the wheel into the tree first; during a pass, the timers
 * it re-queued are not shown, though a shown node's left or right may be
 * one) and returns how many it showed, or -errno (-EINVAL for NULL
 * arguments).  fn
 * runs on the calling thread with the base locked.  For display: from fn,
 * queries of this base (count, next_event, get_stats, is_running, check,
 * a nested walk of it) are safe and see the base as it is; every call that
 * changes a base returns -EDEADLK (start, cancel, try_cancel, forward,
 * run, set_time, reset_stats, fd, dispatch, loop, stop, set_greedy,
 * set_coalesce, set_pass_limit, wait_window, the hrt_repeat calls, the
 * plan calls) or -EBUSY (free); walking another
 * base returns -EDEADLK.  During a pass (fn called from a callback) the
 * timers queued since the pass began are shown too, in key order.  fn must not query
 * another base that another thread may be walking (each would wait for the
 * other's lock).
 */
HRT_EXTERN ssize_t hrt_base_walk_tree(struct hrt_base *base,
				  void (*fn)(const struct hrt_tree_node *n, void *ctx),
				  void *ctx);
/* Verifies every red-black property, parent link, key order, augmented
 * value, state word, the wheel of far timers and the cached pointers.  0 if all
 * hold; -EUCLEAN if one is broken, and then, if why is not NULL and len >
 * 0, a NUL-terminated reason (cut to len - 1 bytes) in why; -EINVAL for a
 * NULL base (why is optional).  Never modifies the base. */
HRT_EXTERN int hrt_base_check(const struct hrt_base *base, char *why, size_t len);

/* Real wake-ups -------------------------------------------------------------- */

/*
 * A non-blocking, close-on-exec timerfd on the base's clock, owned by the
 * base (created on the first call, the same fd after).  Poll it for
 * reading; do not read, close or dup2 over it.
 *
 * What its readiness means (since 1.2): the fd is armed at or before
 * hrt_base_next_event(), never after it and never disarmed while a timer
 * is queued, and right after every dispatch exactly at it (disarmed when
 * nothing is queued).  The re-arm is lazy, as the kernel's
 * HRTIMER_MODE_LAZY_REARM: a start that moves the earliest hard expiry
 * earlier arms the fd at once, from any thread, so a poller blocked on it
 * wakes in time; a cancel, or a start that moves it later (an idle timeout
 * pushed back, a heartbeat re-armed), leaves the fd alone and makes no
 * system call.  The price: the fd may become readable before anything is
 * due, at most once per instant it was armed for; that dispatch runs a
 * pass at its time (which may run soft-expired timers) and re-arms
 * exactly (stats.early_wakeups counts them; stats.reprograms every arm).
 * A timeout pushed back by 100 ms every 1 ms for a second thus costs about
 * ten early wake-ups, where an exact re-arm would have cost a thousand
 * timerfd_settime calls.  (libuv, libev and sd-event compute their sleep
 * only when the loop goes to sleep; the fd has to be armed before then,
 * since another thread may start a timer while the loop sleeps.)
 * -EINVAL: NULL; -EOPNOTSUPP: a virtual base; -ECHILD in a forked child (see fork()
 * above); -EDEADLK from a walk callback; timerfd_create's error (-EMFILE,
 * -ENOMEM...).  If the fd is closed behind the library's back and its number
 * reused, dispatch returns -EBADF rather than reading the new file - unless
 * that is another eventfd, epoll fd or timerfd (one inode is shared by all
 * of them), which it cannot tell from its own: do not close it.
 */
HRT_EXTERN int hrt_base_fd(struct hrt_base *base);
/*
 * Call when the fd is readable: drains it, reads the clock once, runs one
 * pass and re-arms.  Returns the number of callbacks run, or a negative
 * errno: -EINVAL (NULL, or no fd yet: call hrt_base_fd first);
 * -EOPNOTSUPP (virtual base); -ECHILD in a forked child; -EDEADLK from a
 * walk callback; -EBUSY from a callback of this base's own pass; -EBADF if the fd is not
 * the one hrt_base_fd made (closed and reused: see there); a read error
 * of the fd other than EAGAIN (nothing ran); or the error of re-arming it
 * (callbacks may have run, the fd is not armed: call again soon, each call
 * retries; a host loop needs its own timer for that).  A re-arm that fails
 * inside a start is only reported by the next dispatch; the fd may stay
 * disarmed until then (every start retries meanwhile).  timerfd_settime fails in practice only
 * on a bad fd or ENOMEM.
 * `idle`: nothing else is waiting to run in the host loop this iteration
 * (the article's "CPU idle at the interrupt").  In loops that order their
 * callbacks, run hrt's first and pass whether other work is pending behind
 * it, or note whether other callbacks shared this wake-up; examples/ shows
 * both for libuv, libev, sd-event and epoll.
 */
HRT_EXTERN ssize_t hrt_base_dispatch(struct hrt_base *base, int idle);
/*
 * Waits and dispatches (idle = 1) until hrt_base_stop(); returns 0.  One
 * loop per base: a second call while one runs returns -EBUSY at once (it
 * would share the stop), and so does a call from a callback of a pass of
 * this base.  -ECHILD in a forked child, -EDEADLK from a walk callback,
 * -EOPNOTSUPP for a virtual base.  A negative errno if creating its fds fails, if
 * reading the timerfd or epoll_wait fails, or if re-arming the timerfd
 * keeps failing for about half a second (it retries, polling meanwhile,
 * so nothing runs late by more than the poll interval).  Queued timers
 * stay queued in every case; call it again to go on.
 */
HRT_EXTERN int hrt_base_loop(struct hrt_base *base);
/* Makes hrt_base_loop return; from a callback or any thread.  A stop made
 * while no loop runs is kept: the next hrt_base_loop returns 0 at once.
 * 0, -EINVAL for NULL, -ECHILD in a forked child (it would stop the
 * parent's loop), -EDEADLK from a walk callback, or the eventfd's write
 * error. */
HRT_EXTERN int hrt_base_stop(struct hrt_base *base);
/*
 * hrt_base_loop with another event loop inside it (since 1.1): for a host
 * loop that can be driven from outside - its I/O behind one pollable fd,
 * a way to ask how long it may sleep, and one iteration that does not
 * sleep (libuv: uv_backend_fd, uv_backend_timeout, uv_run(UV_RUN_NOWAIT);
 * examples/uv_timers.c).  The host's timeout has millisecond resolution
 * and no slack; this sleep has epoll_pwait2's nanoseconds and the window's
 * slack, so hrt's wake-ups coalesce inside the host as in hrt_base_loop.
 * Each iteration:
 *   run(arg)        the host's iteration without sleeping: 0, or a
 *                   negative errno that ends the loop with it;
 *   timeout(arg)    how long the host may sleep from now, in ns (< 0, or
 *                   too far to add to the clock: no limit; libuv:
 *                   uv_backend_timeout * 1000000, and -1 when
 *                   !uv_loop_alive - libuv says 0 then);
 *   one sleep on hrt's timerfd and `fd` together, as hrt_base_loop's, cut
 *   at the host's deadline: a window opening before it keeps its start,
 *   its slack cut at the deadline; one opening after gives way to a sleep
 *   until the deadline with the thread's own slack, capped so that it
 *   still ends within the window (the host's timers are never widened);
 *   hrt's pass if its window opened or its timerfd fired, idle (see
 *   hrt_base_dispatch) unless `fd` was readable or the host's deadline
 *   passed - then host work waits: the pass runs only the hard-due timers,
 *   the host's work runs next, in run(arg), and the soft-due timers in the
 *   idle pass after it, bounded by the default budget
 *   (hrt_base_set_pass_limit: "The loops' passes", since 1.3).
 * `fd` (not hrt_base_fd's) is polled for reading, never read: it must stay
 * open and the same while the loop runs (after uv_loop_fork, call again).
 * Do not also watch hrt_base_fd in the host.  The host's callbacks run in
 * run(arg), on this thread, and may do what any code outside a pass may -
 * start and cancel timers, hrt_base_stop() (returns after that
 * iteration) - but not enter this loop again (-EBUSY).  Otherwise as
 * hrt_base_loop: returns 0 after hrt_base_stop(), the same errors, and
 * -EINVAL for fd < 0, NULL timeout or run, or fd one of hrt's own;
 * epoll_ctl's error for an fd epoll cannot watch (-EBADF, -EPERM).
 */
HRT_EXTERN int hrt_base_loop_host(struct hrt_base *base, int fd,
				  hrt_time_t (*timeout)(void *arg), int (*run)(void *arg),
				  void *arg);

/* Coalesced sleep ------------------------------------------------------------- */

/*
 * A timerfd has no slack, so every hrt wake-up is a timer interrupt of its
 * own.  With coalescing (on by default, or HRT_COALESCE with HRT_BASE_ENV;
 * hrt_base_set_coalesce(base, 0 or 1) changes it, the loop reads it when
 * it starts)
 * hrt_base_loop sleeps in epoll_pwait2 with the thread's timer slack
 * (prctl PR_SET_TIMERSLACK) set to the window below, with the timerfd
 * disarmed (a timer with no slack would stop the kernel's expiry walk), so
 * the kernel ends the sleep on an interrupt that happens anyway.
 *
 * The window rule.  H: the earliest hard expiry queued; s: the earliest
 * soft expiry queued (a search of at most 64 nodes: some timer's soft
 * expiry, <= H in any case); with greedy policy HRT_GREEDY_OFF, whose
 * passes run only the leftmost run, s is the soft expiry of H's timer.
 * The kernel gets the whole of [s, H]: the sleep starts ending at T >= s
 * and ends at T + slack <= H, so every wake-up runs at least one timer
 * and no timer runs after its hard expiry by the engine's choice (only by
 * the OS's own lateness); the greedy pass runs whatever is due when the
 * kernel ends the sleep.  What costs power is an interrupt of hrt's own; a
 * wake-up on an interrupt that happens anyway is close to free even when
 * it runs fewer timers, so the window is as wide as the timers allow
 * (overlapping windows do not narrow it).  T is s pushed later only by the
 * slack's rounding (less than an eighth of the window, so the prctl is
 * rare) and by bound, which keeps the kernel's own widening of the slack
 * (the sleep's length / 1000, / 200 at nice > 0) inside H; past those
 * T + slack = H: on an idle CPU the sleep ends at H, as the timerfd's
 * would.  The price: a sleep the kernel ends early in the window runs its
 * timers early, so timers re-armed relative to their callback's time come
 * round sooner, and a CPU where other interrupts land in the windows sees
 * more passes (each interrupt that ends a sleep saved one of hrt's own).
 * Where no such T >= s exists (a window narrower than about 0.1 % of the
 * distance to it) that sleep is the exact timerfd one.  Only
 * CLOCK_MONOTONIC bases coalesce (the sleep is relative on that clock).
 * Kernels before 5.11 (no epoll_pwait2: ENOSYS) get the timerfd path,
 * decided on the first sleep.  The window's slack is the thread's only
 * while the loop sleeps (since 1.2): set just before the wait, the
 * thread's own given back just after it, exact at any size (read from
 * /proc/TID/timerslack_ns: PR_GET_TIMERSLACK returns an int), so every
 * callback - hrt's, and a hosted loop's (hrt_base_loop_host) - and any
 * sleep of theirs sees the thread's own slack (a 1 ms nanosleep in a
 * libuv callback is not stretched to the window).  A
 * coalesced sleep that ends counts in stats.wakeups; when the window is
 * open already (a timer became soft-due while the last pass ran) the loop
 * runs the next pass without sleeping, which counts in stats.passes only
 * (no interrupt woke anything).  While the loop coalesces no start or
 * cancel re-arms the fd: the loop arms it only for a sleep that no ranged
 * sleep fits (stats.reprograms counts those), and a start from another
 * thread that moves the earliest hard expiry before the planned sleep's
 * end wakes the loop through its eventfd to plan again.
 *
 * A busy host (since 1.3).  The window's slack matters only to a sleep
 * that lasts into the window; a sleep that the host's I/O ends before
 * the window begins never used it.  So after such a sleep
 * (hrt_base_loop_host: the host's fd ended it; hrt_base_plan_sleep: the
 * host's sleep ended, hrt_base_plan_wake, a quarter of `res` or more
 * before the planned delay), the next sleep runs to the window's end with
 * the thread's own slack instead: no prctl at all while I/O keeps ending
 * the sleeps first, the timers that came due meanwhile running at the
 * next I/O wake-up, and, if no I/O comes, a wake-up at the window's end
 * (within the thread's slack of it), after which the window's slack is
 * back.
 *
 * System calls per iteration (since 1.3; counted by the tests, as `strace
 * -c` would).  hrt_base_loop: one poll (epoll_pwait2; epoll_wait for a
 * sleep of 0), plus, on a sleep that
 * ends in the window, the window's slack set and the thread's given back
 * (two prctl: the price of the rule above that every callback sees the
 * thread's own slack); the nice level is read once per loop.
 * hrt_base_loop_host with a busy host: the epoll_pwait2 (and the host's
 * own poll inside run(arg), libuv's epoll_wait(0)).  hrt_base_plan_sleep
 * and hrt_base_plan_wake with a busy host: none (the nice level read when
 * the planner claims the base, the held timerfd read only when it may
 * have fired).  A start that needs an earlier wake-up, a clock set and the
 * timerfd path add theirs.
 */
/* 0 or -errno (-EDEADLK from a walk callback). */
HRT_EXTERN int hrt_base_set_coalesce(struct hrt_base *base, int on);
/* 1 on, 0 off, or -errno. */
HRT_EXTERN int hrt_base_get_coalesce(const struct hrt_base *base);
/*
 * The same window for a host loop that sleeps itself (plain epoll, or any
 * loop that takes a timeout and runs on a thread whose slack it may set),
 * computed now on the base's clock: 1 with [*soft, *hard] - sleep until
 * *soft with timer slack *hard - *soft (skip the prctl when 0: 0 means the
 * default slack) and call hrt_base_run(base, now, idle) on waking (the
 * window may start at a timer only the greedy walk runs: a pass with idle
 * = 0 under HRT_GREEDY_IDLE may run nothing, and the next window then
 * starts in the past, a sleep of 0 until an idle pass); 0 if no
 * ranged sleep fits (*soft = *hard = the earliest hard expiry: sleep on the
 * timerfd as usual) or nothing is queued (both HRT_TIME_MAX); -EINVAL
 * (NULL), -EDEADLK (walk callback), -EPERM.  On a virtual base, computed
 * at its time (simulations plan with it too).
 * Call it after each pass and after starts that may move the earliest hard
 * expiry (or keep the timerfd armed as the safety net, at the cost the
 * comment above explains).
 */
HRT_EXTERN int hrt_base_wait_window(const struct hrt_base *base, hrt_time_t *soft,
				    hrt_time_t *hard);
/*
 * For a host loop that watches hrt_base_fd and sleeps for the window
 * itself (libuv, libev: its own timer or timeout at the window's start,
 * the loop thread's slack set to the window): hold = 1 disarms the
 * timerfd - a timer without slack would end every ranged sleep at the
 * earliest hard expiry exactly - and hold = 0 arms it again at that
 * expiry (the timerfd path).  Call hrt_base_hold_fd(base, 1) before each
 * sleep, then hrt_base_wait_window, and sleep for that window: while held,
 * a start (from any thread) that moves the earliest hard expiry earlier
 * than it was arms the timerfd at the new one, so a host asleep on the
 * old plan wakes by it (dispatch, then plan again); the next hold = 1
 * disarms it again (a start from the host's own thread, which plans
 * before it sleeps, so costs two arms and no wake-up).  A disarmed
 * timerfd does not follow the wall clock, so a CLOCK_REALTIME base sees
 * no clock set while held (only CLOCK_MONOTONIC bases coalesce anyway).
 * The fd stays the same.  0 or -errno: -EINVAL, -EPERM, -EDEADLK, -ECHILD,
 * -EOPNOTSUPP (virtual base), -EBUSY (hrt_base_loop runs; it refuses to
 * start, -EBUSY, while the fd is held), or the arm's error.
 */
HRT_EXTERN int hrt_base_hold_fd(struct hrt_base *base, int hold);
/*
 * The coalesced sleep for a host loop that sleeps itself with a coarse
 * timeout and cannot be driven from outside (since 1.1; libev, whose
 * epoll backend sleeps in whole milliseconds: examples/ev_host.h).  Call
 * it before each of the host's sleeps (libev: in an ev_prepare), on the
 * host loop's thread; `res` is the host's timeout resolution in ns
 * (1000000 for milliseconds).  First it runs what is due, as a pass at
 * idle (the host has run its callbacks for this wake-up): it drains the
 * timerfd and dispatches, then runs a pass if the window has opened.  So
 * the host only has to wake up: keep hrt_base_fd watched for reading (its
 * callback does nothing) and a timer of its own for *delay.  Since 1.3
 * that pass has the hosts' default budget (hrt_base_set_pass_limit: "The
 * loops' passes"): what it leaves is soft-due, and the plan is then 1
 * with *delay 0 (the host polls its I/O and comes back at once); the
 * timerfd is read only if it may have fired (armed for a time now past),
 * and the nice level (the kernel's slack estimate) is read once, when the
 * planner claims the base.  Then the
 * plan.  1: the timerfd is held (hrt_base_hold_fd), the calling thread's
 * timer slack is set to the window left after its start is rounded up to
 * res (less 20 us for the host's way into its sleep: a longer way ends
 * the sleep up to that much later), and *delay (a
 * multiple of res, from now) is when the host's timer should end its
 * sleep; after a sleep the host's I/O ended early, the plan runs to the
 * window's end with the thread's own slack ("A busy host" above).  0: the
 * window is narrower than 200 us after the rounding,
 * coalescing is off, the base's clock is not CLOCK_MONOTONIC (only those
 * coalesce) or nothing is queued - the timerfd is armed again at the
 * earliest hard expiry, the thread's slack its own, *delay HRT_TIME_MAX
 * (stop the host's timer).  A start from another thread that moves the
 * earliest expiry earlier arms the held timerfd, so the host wakes in
 * time.  The rounding costs up to res of each window, and the timerfd
 * path runs timers after the host's callbacks of that wake-up.  The
 * planned slack is the thread's until hrt_base_plan_wake (since 1.2):
 * call it right after the host's sleep (libev: an ev_check watcher of the
 * highest priority), so the host's callbacks run with the thread's own
 * slack; without it they, and the host's own timers, see the window's (by
 * at most the window, never past hrt's hard expiries).
 * hrt_base_plan_done(base) ends it: the timerfd armed, the thread's slack
 * given back.  One thread plans for a base until then (the first to
 * call): another gets -EPERM.  Errors, in the order hrt.h's "Entry
 * checks" gives, a refused call making nothing (no timerfd): -EINVAL
 * (NULL, res <= 0), -EPERM (another thread of an unlocked base), -EDEADLK,
 * -ECHILD, -EOPNOTSUPP (a virtual base), -EPERM (another thread plans),
 * -EBUSY (hrt_base_loop runs, or from a callback of this base's pass:
 * nothing kept, the caller not made the planner), then those of
 * hrt_base_fd, hrt_base_dispatch and hrt_base_hold_fd.
 */
HRT_EXTERN int hrt_base_plan_sleep(struct hrt_base *base, hrt_time_t res, hrt_time_t *delay);
/* The calling thread's own timer slack back after the host's sleep
 * (since 1.2; the planner's only): 0, or -EINVAL, -EPERM (not the
 * planner, or another thread of an unlocked base), -EDEADLK, -ECHILD,
 * -EOPNOTSUPP.  Exact at any size, as every slack hrt gives back. */
HRT_EXTERN int hrt_base_plan_wake(struct hrt_base *base);
/* 0; the first error of a plan since the planner began; -EPERM from a
 * thread that is not the planner; or the re-arm's error. */
HRT_EXTERN int hrt_base_plan_done(struct hrt_base *base);

#ifdef __cplusplus
}
#endif
#endif /* HRT_H */
