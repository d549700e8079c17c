/* SPDX-License-Identifier: MIT */
/*
 * base.c - timer semantics: start, cancel, forward, and the expiry pass
 * (leftmost run, then the greedy walk), stats and introspection.
 *
 * Locking: one mutex per base, taken by every public call and dropped
 * around callbacks (forward too: a start from another thread may meet it
 * in a callback).  A hrt_base_walk_tree callback runs with it held, so
 * queries of that base skip it (hrt__walking) and changes are refused.  A timer's state word (owning base | state bits)
 * changes only under its base's lock; moving a timer between bases holds
 * both locks, taken in address order.  A callback runs with its timer off
 * the queue; the pass holds no iterator across it and re-evaluates "the
 * next timer to run" from scratch afterwards.
 *
 * The wake-up device (device.h) sits below: the base arms it for its
 * earliest hard expiry (base_wakeup_update) and its handler comes back
 * through one entry point, hrt__base_wakeup, which counts the wake-up,
 * runs the pass and re-arms in one critical section.  Every field of a
 * base and every lock of it live here; timerfd.c owns only its fd, loop.c
 * only its epoll, eventfd and stop.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "loop.h"
#include "queue.h"
#include "timerfd.h"
#include "wheel.h"

/* State bits in the low bits of timer->hrt__base_state (bases are 64-aligned). */
#define HRT_ST_QUEUED   1u      /* in the queue or the pending queue */
#define HRT_ST_PENDING  2u      /* in the pending queue (only during a pass) */
#define HRT_ST_WHEEL    4u      /* in the wheel (far: not in a tree) */
#define HRT_ST_MASK     63u

/* Timers re-queued excluded into the main queue per pass (see ran[]). */
#define HRT_RAN_MAX     16

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
	 * The restart path: a timer that ran and is re-queued while `pend` is
	 * empty goes straight into `queue`, excluded, and is remembered here;
	 * the end of the pass clears the mark in place.  One erase and one
	 * insert per periodic timer and pass, not two of each through `pend`.
	 * FIFO holds: it was queued after everything in `queue`, before
	 * anything in `pend`.  When ran[] is full, `pend` takes over.
	 */
	struct hrt_timer *ran[HRT_RAN_MAX];
	unsigned ran_n;
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

	/* Wake-up device (device.h); NULL for a virtual base and until
	 * hrt_base_fd.  Read without the lock by dispatch (acquire). */
	struct hrt_device *dev;
	hrt_time_t armed;               /* what dev is armed for; MAX: disarmed */
	int arm_err;                    /* last arm: 0 or -errno (armed EXPIRED) */
	unsigned fork_gen;              /* hrt__fork_gen when made (fork: -ECHILD) */
	int coalesce;                   /* HRT_COALESCE / hrt_base_set_coalesce */
	struct hrt_loop loop;           /* hrt_base_loop's (loop.c) */
} __attribute__((aligned(64)));

/* `armed` when the device has fired and must be re-armed whatever follows. */
#define HRT_ARMED_EXPIRED (-HRT_TIME_MAX)

/* The base whose hrt_base_walk_tree callback this thread is in (its lock
 * is held), or NULL.  Queries of it skip the lock; changes are refused. */
#if defined(__GNUC__)
#define HRT_TLS_IE __attribute__((tls_model("initial-exec")))   /* no call in the .so */
#else
#define HRT_TLS_IE
#endif
static _Thread_local const struct hrt_base *hrt__walking HRT_TLS_IE;

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
static unsigned hrt__fork_gen;

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

static hrt_time_t hrt__base_next_locked(struct hrt_base *b, int in_tree);
static void base_wakeup_update(struct hrt_base *b);
static int coalesce_from_env(void);

/* Pass numbers are unique across bases, so "ran in this pass" needs no
 * base comparison. */
static uint64_t pass_counter;

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_child(void)
{
	__atomic_add_fetch(&hrt__fork_gen, 1, __ATOMIC_RELAXED);
}

static void atfork_register(void)
{
	(void)pthread_atfork(NULL, NULL, atfork_child); /* ENOMEM: no fork detection */
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

static inline uintptr_t tstate(const struct hrt_timer *t)
{
	return __atomic_load_n(&t->hrt__base_state, __ATOMIC_ACQUIRE);
}

static inline struct hrt_base *st_base(uintptr_t s)
{
	return (struct hrt_base *)(s & ~(uintptr_t)HRT_ST_MASK);
}

static inline void tset(struct hrt_timer *t, struct hrt_base *b, unsigned bits)
{
	__atomic_store_n(&t->hrt__base_state, (uintptr_t)b | bits, __ATOMIC_RELEASE);
}

/* t is queued (or was last) on an unlocked base of another thread. */
static inline int timer_foreign(const struct hrt_timer *t)
{
	struct hrt_base *b = st_base(tstate(t));

	return b && base_foreign(b);
}

static inline hrt_time_t sat_add(hrt_time_t a, hrt_time_t b)
{
	hrt_time_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? HRT_TIME_MAX : INT64_MIN;
	return r;
}

/* A timer that can run (soft <= the pass cap) gets a hard expiry a pass
 * can reach, so its wake-up is armed: a saturated soft + slack means "as
 * late as possible", not "never". */
static inline hrt_time_t cap_hard(hrt_time_t soft, hrt_time_t hard)
{
	return soft <= HRT_QUEUE_NOW_MAX && hard > HRT_QUEUE_NOW_MAX ? HRT_QUEUE_NOW_MAX : hard;
}

/* v + n * interval, saturated at HRT_TIME_MAX; interval > 0.  Unsigned,
 * so a negative v cannot overflow the subtraction. */
static hrt_time_t add_intervals(hrt_time_t v, uint64_t n, hrt_time_t interval)
{
	uint64_t room = (uint64_t)HRT_TIME_MAX - (uint64_t)v;  /* exact: v <= MAX */

	if (n > room / (uint64_t)interval)
		return HRT_TIME_MAX;
	return (hrt_time_t)((uint64_t)v + n * (uint64_t)interval);
}

hrt_time_t hrt__clock_now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (hrt_time_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int greedy_from_env(void)
{
	const char *s = getenv("HRT_GREEDY");

	if (s && !strcmp(s, "off"))
		return HRT_GREEDY_OFF;
	if (s && !strcmp(s, "always"))
		return HRT_GREEDY_ALWAYS;
	return HRT_GREEDY_IDLE;
}

HRT_EXTERN const char *hrt_version(void)
{
	return HRT_VERSION_STRING;
}

HRT_EXTERN struct hrt_base *hrt_base_new(clockid_t clock)
{
	return hrt_base_new_flags(clock, 0);
}

HRT_EXTERN struct hrt_base *hrt_base_new_flags(clockid_t clock, unsigned flags)
{
	struct hrt_base *b;

	if ((clock != CLOCK_MONOTONIC && clock != CLOCK_BOOTTIME &&
	     clock != CLOCK_REALTIME && clock != HRT_CLOCK_VIRTUAL) ||
	    (flags & ~HRT_BASE_UNLOCKED)) {
		errno = EINVAL;
		return NULL;
	}
	pthread_once(&atfork_once, atfork_register);
	b = aligned_alloc(64, sizeof(*b));
	if (!b) {
		errno = ENOMEM;
		return NULL;
	}
	memset(b, 0, sizeof(*b));
	if (pthread_mutex_init(&b->lock, NULL))
		goto out_free;
	if (pthread_cond_init(&b->done, NULL))
		goto out_mutex;
	hrt__queue_init(&b->queue);
	hrt__queue_init(&b->pend);
	hrt__wheel_init(&b->wheel, clock == HRT_CLOCK_VIRTUAL ? 0 : hrt__clock_now(clock));
	b->clock = clock;
	b->unlocked = !!(flags & HRT_BASE_UNLOCKED);
	b->owner = &hrt__walking;
	b->greedy = greedy_from_env();
	b->coalesce = coalesce_from_env();
	b->armed = HRT_TIME_MAX;
	b->fork_gen = __atomic_load_n(&hrt__fork_gen, __ATOMIC_RELAXED);
	if (hrt__loop_init(&b->loop, b->unlocked))
		goto out_cond;
	return b;

out_cond:
	pthread_cond_destroy(&b->done);
out_mutex:
	pthread_mutex_destroy(&b->lock);
out_free:
	free(b);
	errno = ENOMEM;
	return NULL;
}

HRT_EXTERN int hrt_base_free(struct hrt_base *b)
{
	int busy;

	if (!b)
		return 0;
	if (base_foreign(b))
		return -EPERM;
	if (hrt__walking)
		return -EBUSY;
	base_lock(b);
	/* Queued timers, a pass (a callback of this base, or another thread's
	 * pass), a loop or a waiting cancel: freeing would leave them dangling. */
	busy = b->queue.count || b->pend.count || b->wheel.count || b->in_pass ||
	       b->waiters || hrt__loop_busy(&b->loop);
	base_unlock(b);
	if (busy)
		return -EBUSY;
	if (b->dev)
		b->dev->ops->close(b->dev);
	hrt__loop_fini(&b->loop);
	pthread_cond_destroy(&b->done);
	pthread_mutex_destroy(&b->lock);
	free(b);
	return 0;
}

HRT_EXTERN int hrt_base_set_greedy(struct hrt_base *b, enum hrt_greedy policy)
{
	if (!b || (policy != HRT_GREEDY_OFF && policy != HRT_GREEDY_IDLE &&
		   policy != HRT_GREEDY_ALWAYS))
		return -EINVAL;
	__atomic_store_n(&b->greedy, (int)policy, __ATOMIC_RELAXED);
	return 0;
}

HRT_EXTERN enum hrt_greedy hrt_base_get_greedy(const struct hrt_base *b)
{
	return b ? (enum hrt_greedy)__atomic_load_n(&b->greedy, __ATOMIC_RELAXED)
		 : HRT_GREEDY_OFF;
}

HRT_EXTERN clockid_t hrt_base_get_clock(const struct hrt_base *b)
{
	return b ? b->clock : (clockid_t)-1;
}

HRT_EXTERN hrt_time_t hrt_base_now(struct hrt_base *b)
{
	if (!b)
		return 0;
	if (base_is_virtual(b))
		return __atomic_load_n(&b->vnow, __ATOMIC_RELAXED);
	return hrt__clock_now(b->clock);
}

HRT_EXTERN int hrt_base_set_time(struct hrt_base *b, hrt_time_t now)
{
	int ret = 0;

	if (!b || !base_is_virtual(b))
		return -EINVAL;
	if (base_foreign(b))
		return -EPERM;
	if (hrt__walking)
		return -EDEADLK;
	base_lock(b);
	if (now < b->vnow)
		ret = -EINVAL;
	else
		__atomic_store_n(&b->vnow, now, __ATOMIC_RELAXED);
	base_unlock(b);
	return ret;
}

/* Wheel and trees -------------------------------------------------------- */

static void enqueue_tree(struct hrt_base *b, struct hrt_timer *t);

/* Every insert into and erase from a tree, counted (stats.tree_ops). */
static inline void tree_add(struct hrt_base *b, struct hrt_queue *q, struct hrt_timer *t,
			    int excluded)
{
	b->stats.tree_ops++;
	hrt__queue_add(q, t, excluded);
}

static inline void tree_del(struct hrt_base *b, struct hrt_queue *q, struct hrt_timer *t)
{
	b->stats.tree_ops++;
	hrt__queue_del(q, t);
}

/* The first timer of the main queue that this pass may still run: the
 * leftmost, past at most ran_n excluded ones. */
static inline struct hrt_timer *first_live(const struct hrt_base *b)
{
	const struct hrt_rb_node *n = b->queue.leftmost;

	while (n && hrt__queue_is_excluded(hrt__queue_timer(n)))
		n = hrt__rb_next(n);
	return hrt__queue_timer(n);
}

/* t (excluded in `queue`) leaves it: no longer remembered. */
static void ran_forget(struct hrt_base *b, const struct hrt_timer *t)
{
	unsigned i;

	for (i = 0; i < b->ran_n; i++) {
		if (b->ran[i] == t) {
			b->ran[i] = b->ran[--b->ran_n];
			return;
		}
	}
}

/* Lock held: the timers on out (each on no structure, hrt__ran_pass valid)
 * into the trees, in list order; all but `fresh` came from the wheel. */
static void enqueue_out(struct hrt_base *b, struct hrt_list_node *out,
			const struct hrt_timer *fresh)
{
	while (!hrt__list_empty(out)) {
		struct hrt_timer *t = hrt__wheel_timer(out->hrt__next);

		hrt__wheel_list_del(&t->hrt__off.hrt__link);
		if (t != fresh)
			b->stats.wheel_moves++;
		enqueue_tree(b, t);
	}
}

/* Lock held: the wheel's earliest timers into the trees; step: only one
 * step towards them (hrt__wheel_step_first), which may move none. */
static void wheel_pull(struct hrt_base *b, int step)
{
	struct hrt_list_node out;

	hrt__list_init(&out);
	if (step)
		hrt__wheel_step_first(&b->wheel, &out);
	else
		hrt__wheel_pull_first(&b->wheel, &out);
	enqueue_out(b, &out, NULL);
}

/* Lock held: the horizon past `now`, so every timer a pass at now may run
 * is in a tree (wheel.h, W1). */
static void wheel_advance(struct hrt_base *b, hrt_time_t now)
{
	struct hrt_list_node out;

	hrt__list_init(&out);
	hrt__wheel_advance(&b->wheel, hrt__wheel_hz_for(now), &out);
	enqueue_out(b, &out, NULL);
}

/*
 * Lock held: the earliest hard expiry of all timers.  in_tree: and that
 * timer is in a tree (the coalescing window walks it); else a small first
 * slot is only scanned, so that asking (every start on an fd base) does
 * not pull the horizon up to the first far timer, which would send every
 * later start below it into the tree.
 */
static hrt_time_t hrt__base_next_locked(struct hrt_base *b, int in_tree)
{
	for (;;) {
		struct hrt_timer *t = hrt__queue_first(&b->queue), *p = hrt__queue_first(&b->pend);
		hrt_time_t next = t ? t->hrt__hard : HRT_TIME_MAX, w;

		if (p && p->hrt__hard < next)
			next = p->hrt__hard;
		/* Every wheel timer's hard expiry is >= the horizon's start,
		 * and >= its slot's: only a tie or worse needs the wheel. */
		if (next < hrt__wheel_horizon(&b->wheel) || !b->wheel.count ||
		    next <= hrt__wheel_first(&b->wheel))
			return next;
		if (!in_tree && hrt__wheel_scan_first(&b->wheel, &w))
			return w < next ? w : next;
		wheel_pull(b, !in_tree);        /* !in_tree: a big first slot, one step */
	}
}

/* Of two candidates, the first in queue order; ties go to the main queue,
 * whose timers were all queued before the pending ones. */
static inline struct hrt_timer *earlier(struct hrt_timer *q, struct hrt_timer *p)
{
	return p && (!q || p->hrt__hard < q->hrt__hard) ? p : q;
}

/* Queueing ---------------------------------------------------------------- */

/* Lock held; t is on no queue and its hrt__ran_pass is valid.  A far timer
 * goes to the wheel (O(1)), a near one to a tree. */
static void enqueue(struct hrt_base *b, struct hrt_timer *t)
{
	struct hrt_list_node out;

	hrt__list_init(&out);
	if (hrt__wheel_place(&b->wheel, t, &out)) {
		tset(t, b, HRT_ST_QUEUED | HRT_ST_WHEEL);
		return;
	}
	enqueue_out(b, &out, t);        /* t last, behind the slot W2 took */
}

/* Lock held; t is on no structure and its hrt__ran_pass is valid. */
static void enqueue_tree(struct hrt_base *b, struct hrt_timer *t)
{
	if (b->in_pass) {
		int ran = t->hrt__off.hrt__ran_pass == b->pass_id;

		if (ran && !b->pend.count && b->ran_n < HRT_RAN_MAX) {
			tree_add(b, &b->queue, t, 1);   /* the restart path */
			b->ran[b->ran_n++] = t;
			tset(t, b, HRT_ST_QUEUED);
			return;
		}
		if (ran || b->pend.count) {
			tree_add(b, &b->pend, t, ran);
			tset(t, b, HRT_ST_QUEUED | HRT_ST_PENDING);
			return;
		}
		tree_add(b, &b->queue, t, 0);   /* may still run in this pass */
		tset(t, b, HRT_ST_QUEUED);
		return;
	}
	tree_add(b, &b->queue, t, 0);
	tset(t, b, HRT_ST_QUEUED);
}

/* Lock held; t is queued on b with state s.  Leaves hrt__ran_pass valid
 * (an excluded pending timer ran in the current pass). */
static void dequeue(struct hrt_base *b, struct hrt_timer *t, uintptr_t s)
{
	uint64_t ran = 0;

	if (s & HRT_ST_WHEEL) {
		hrt__wheel_del(&b->wheel, t);
		ran = t->hrt__off.hrt__ran_pass;        /* untouched in the wheel */
	} else if (s & HRT_ST_PENDING) {
		if (hrt__queue_is_excluded(t))
			ran = b->pass_id;
		tree_del(b, &b->pend, t);
	} else {
		if (hrt__queue_is_excluded(t)) {
			ran = b->pass_id;
			ran_forget(b, t);
		}
		tree_del(b, &b->queue, t);
	}
	t->hrt__off.hrt__ran_pass = ran;
	tset(t, b, 0);
}

/* Locks and returns t's base (NULL, nothing locked, if it has none). */
static struct hrt_base *lock_timer_base(const struct hrt_timer *t, uintptr_t *sp)
{
	for (;;) {
		struct hrt_base *b = st_base(tstate(t));

		if (!b || base_foreign(b))
			return NULL;    /* callers check base_foreign first */
		base_lock(b);
		*sp = tstate(t);
		if (st_base(*sp) == b)
			return b;
		base_unlock(b);         /* moved meanwhile: chase it */
	}
}

static void unlock_two(struct hrt_base *a, struct hrt_base *b)
{
	base_unlock(b);
	if (a && a != b)
		base_unlock(a);
}

/*
 * Locks nb and t's current base (address order against deadlock) and
 * returns the latter.  A timer with no base yet is claimed for nb with a
 * compare-and-swap, so two first starts on different bases cannot both
 * believe it is theirs.
 */
static struct hrt_base *lock_for_start(struct hrt_timer *t, struct hrt_base *nb, uintptr_t *sp)
{
	for (;;) {
		uintptr_t s = tstate(t);
		struct hrt_base *ob = st_base(s);

		if (!ob && nb->unlocked) {     /* no RMW: the timer is this thread's */
			__atomic_store_n(&t->hrt__base_state, (uintptr_t)nb, __ATOMIC_RELEASE);
			*sp = (uintptr_t)nb;
			return nb;
		}
		if (!ob) {
			base_lock(nb);
			if (__atomic_compare_exchange_n(&t->hrt__base_state, &s, (uintptr_t)nb, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				*sp = (uintptr_t)nb;
				return nb;
			}
			base_unlock(nb);
			continue;
		}
		if (ob == nb) {
			base_lock(nb);
		} else if (ob < nb) {
			base_lock(ob);
			base_lock(nb);
		} else {
			base_lock(nb);
			base_lock(ob);
		}
		*sp = tstate(t);
		if (st_base(*sp) == ob)
			return ob;
		unlock_two(ob, nb);
	}
}

HRT_EXTERN void hrt_timer_init(struct hrt_timer *t, hrt_callback fn)
{
	if (!t)
		return;
	memset(t, 0, sizeof(*t));
	t->hrt__fn = fn;
}

HRT_EXTERN int hrt_timer_start_range(struct hrt_timer *t, struct hrt_base *nb,
				     hrt_time_t soft, hrt_time_t slack, enum hrt_mode mode)
{
	struct hrt_base *ob, *target;
	hrt_time_t hard;
	uintptr_t s;

	if (!t || !nb || !t->hrt__fn || slack < 0 ||
	    (mode != HRT_MODE_ABS && mode != HRT_MODE_REL))
		return -EINVAL;
	if (base_foreign(nb) || timer_foreign(t))
		return -EPERM;
	if (hrt__walking)
		return -EDEADLK;
	if (mode == HRT_MODE_REL)
		soft = sat_add(hrt_base_now(nb), soft);
	hard = cap_hard(soft, sat_add(soft, slack));

	ob = lock_for_start(t, nb, &s);
	/* A timer whose callback is running stays on its base (cancel must
	 * find the callback to wait for it). */
	target = ob != nb && ob->running == t ? ob : nb;
	if (s & HRT_ST_QUEUED)
		dequeue(ob, t, s);
	if (ob != target)
		t->hrt__off.hrt__ran_pass = 0;  /* "ran in this pass" is per base */
	__atomic_store_n(&t->hrt__soft, soft, __ATOMIC_RELAXED);
	__atomic_store_n(&t->hrt__hard, hard, __ATOMIC_RELAXED);
	enqueue(target, t);
	target->stats.starts++;
	if (ob != target)
		base_wakeup_update(ob);
	base_wakeup_update(target);
	unlock_two(ob, nb);
	return 0;
}

HRT_EXTERN int hrt_timer_start(struct hrt_timer *t, struct hrt_base *b,
			       hrt_time_t expiry, enum hrt_mode mode)
{
	return hrt_timer_start_range(t, b, expiry, 0, mode);
}

static int cancel(struct hrt_timer *t, int wait)
{
	struct hrt_base *b;
	uintptr_t s;
	int ret = 0;

	if (!t)
		return -EINVAL;
	if (timer_foreign(t))
		return -EPERM;
	if (hrt__walking)
		return -EDEADLK;
	b = lock_timer_base(t, &s);
	if (!b)
		return 0;
	while (b->running == t && !pthread_equal(b->pass_thread, pthread_self())) {
		if (!wait) {
			base_unlock(b);
			return -EBUSY;
		}
		b->waiters++;
		pthread_cond_wait(&b->done, &b->lock);
		b->waiters--;
		s = tstate(t);
		if (st_base(s) != b) {          /* moved once it stopped running */
			base_unlock(b);
			b = lock_timer_base(t, &s);
			if (!b)
				return ret;
		}
	}
	if (s & HRT_ST_QUEUED) {
		dequeue(b, t, s);
		b->stats.cancels++;
		base_wakeup_update(b);
		ret = 1;
	}
	base_unlock(b);
	return ret;
}

HRT_EXTERN int hrt_timer_cancel(struct hrt_timer *t)
{
	return cancel(t, 1);
}

HRT_EXTERN int hrt_timer_try_cancel(struct hrt_timer *t)
{
	return cancel(t, 0);
}

/*
 * Under the base lock, so that a start from another thread (allowed while
 * the callback runs) cannot queue the timer between the "not queued" test
 * and the update: either forward sees it queued and refuses, or the start
 * overwrites what forward wrote.  A timer never started has no lock: its
 * owner is the only thread that can know it.
 */
HRT_EXTERN uint64_t hrt_timer_forward(struct hrt_timer *t, hrt_time_t now, hrt_time_t interval)
{
	struct hrt_base *b;
	hrt_time_t soft, hard;
	uint64_t n = 0, q;
	uintptr_t s;

	if (!t || interval <= 0 || hrt__walking || timer_foreign(t))
		return 0;
	b = lock_timer_base(t, &s);
	if (!b)
		s = tstate(t);
	soft = __atomic_load_n(&t->hrt__soft, __ATOMIC_RELAXED);
	hard = __atomic_load_n(&t->hrt__hard, __ATOMIC_RELAXED);
	if (!(s & HRT_ST_QUEUED) && hard <= now) {
		q = ((uint64_t)now - (uint64_t)hard) / (uint64_t)interval;  /* exact: now >= hard */
		n = q == UINT64_MAX ? q : q + 1;
		soft = add_intervals(soft, n, interval);
		hard = cap_hard(soft, add_intervals(hard, n, interval));
		__atomic_store_n(&t->hrt__soft, soft, __ATOMIC_RELAXED);
		__atomic_store_n(&t->hrt__hard, hard, __ATOMIC_RELAXED);
	}
	if (b)
		base_unlock(b);
	return n;
}

HRT_EXTERN int hrt_timer_is_queued(const struct hrt_timer *t)
{
	return t && (tstate(t) & HRT_ST_QUEUED);
}

HRT_EXTERN int hrt_timer_is_running(const struct hrt_timer *t)
{
	struct hrt_base *b;
	uintptr_t s;
	int r;

	if (!t)
		return 0;
	b = st_base(tstate(t));
	if (b && b == hrt__walking)     /* its lock is ours: t cannot move */
		return b->running == t;
	if (!(b = lock_timer_base(t, &s)))
		return 0;
	r = b->running == t;
	base_unlock(b);
	return r;
}

HRT_EXTERN hrt_time_t hrt_timer_get_soft(const struct hrt_timer *t)
{
	return t ? __atomic_load_n(&t->hrt__soft, __ATOMIC_RELAXED) : 0;
}

HRT_EXTERN hrt_time_t hrt_timer_get_hard(const struct hrt_timer *t)
{
	return t ? __atomic_load_n(&t->hrt__hard, __ATOMIC_RELAXED) : 0;
}

HRT_EXTERN struct hrt_base *hrt_timer_get_base(const struct hrt_timer *t)
{
	return t ? st_base(tstate(t)) : NULL;
}

/* The expiry pass --------------------------------------------------------- */

/* Lock held; t queued on b.  Runs its callback with the lock dropped. */
static void run_one(struct hrt_base *b, struct hrt_timer *t, hrt_time_t now)
{
	hrt_callback fn = t->hrt__fn;
	enum hrt_restart r;

	dequeue(b, t, tstate(t));
	t->hrt__off.hrt__ran_pass = b->pass_id;
	b->running = t;
	b->stats.expired++;
	if (now > t->hrt__hard) {       /* the pass came after the promise */
		uint64_t late = (uint64_t)now - (uint64_t)t->hrt__hard;

		b->stats.late++;
		if (late > b->stats.late_max_ns)
			b->stats.late_max_ns = late;
	}
	base_unlock(b);
	r = fn(t, now);
	base_lock(b);
	b->running = NULL;
	/* Only a timer the callback says is alive may be touched now: one that
	 * returned HRT_NORESTART may already be freed. */
	if (r == HRT_RESTART) {
		uintptr_t s = tstate(t);

		if (!(s & HRT_ST_QUEUED) && st_base(s) == b) {
			enqueue(b, t);
			b->stats.restarts++;
		}
	}
	if (b->waiters)
		pthread_cond_broadcast(&b->done);
}

/* Lock held (and held again on return): the pass at `now`, then the
 * re-arm; 0 if another pass runs. */
static size_t run_locked(struct hrt_base *b, hrt_time_t now, int idle)
{
	struct hrt_timer *t;
	uint64_t unused = 0;
	size_t n = 0;
	int greedy;

	if (now > HRT_QUEUE_NOW_MAX)    /* soft expiries from here on mean never */
		now = HRT_QUEUE_NOW_MAX;
	if (b->in_pass)
		return 0;
	if (base_is_virtual(b) && now > b->vnow)
		__atomic_store_n(&b->vnow, now, __ATOMIC_RELAXED);
	b->in_pass = 1;
	b->pass_thread = pthread_self();
	/* An unlocked base counts its own (no RMW): a timer that moves to
	 * another base forgets its pass, so ids need only be unique per base. */
	b->pass_id = b->unlocked ? b->pass_id + 1
				 : __atomic_add_fetch(&pass_counter, 1, __ATOMIC_RELAXED);
	b->stats.passes++;
	wheel_advance(b, now);

	/* Leftmost run: the stock kernel pass. */
	for (;;) {
		t = first_live(b);
		if (b->pend.count)      /* first pending timer that has not run */
			t = earlier(t, hrt__queue_next_due(&b->pend, HRT_QUEUE_NOW_MAX + 1,
							   &unused));
		if (!t || t->hrt__soft > now)
			break;          /* (no wheel timer is soft-expired) */
		/* A far hard expiry: runs only if no wheel timer comes first. */
		if (t->hrt__hard >= hrt__wheel_horizon(&b->wheel) && b->wheel.count &&
		    t->hrt__hard > hrt__wheel_first(&b->wheel)) {
			wheel_pull(b, 0);
			continue;
		}
		run_one(b, t, now);
		n++;
	}

	greedy = __atomic_load_n(&b->greedy, __ATOMIC_RELAXED);    /* set_greedy: no lock */
	greedy = greedy == HRT_GREEDY_ALWAYS || (greedy == HRT_GREEDY_IDLE && idle);
	if (greedy) {
		b->stats.greedy_walks++;
		for (;;) {
			t = hrt__queue_next_due(&b->queue, now, &b->stats.nodes_visited);
			if (b->pend.count)
				t = earlier(t, hrt__queue_next_due(&b->pend, now,
								   &b->stats.nodes_visited));
			if (!t)
				break;
			run_one(b, t, now);
			b->stats.expired_greedy++;
			n++;
		}
	}

	/* The pass is over: the restarted timers become plain in place, the
	 * pending ones join the queue in queueing order. */
	while (b->ran_n)
		hrt__queue_unexclude(b->ran[--b->ran_n]);
	while ((t = hrt__queue_first(&b->pend))) {
		tree_del(b, &b->pend, t);
		tree_add(b, &b->queue, t, 0);
		tset(t, b, HRT_ST_QUEUED);
	}
	b->in_pass = 0;
	base_wakeup_update(b);
	return n;
}

HRT_EXTERN size_t hrt_base_run(struct hrt_base *b, hrt_time_t now, int idle)
{
	size_t n;

	if (!b || hrt__walking || base_foreign(b))
		return 0;
	base_lock(b);
	n = run_locked(b, now, idle);
	base_unlock(b);
	return n;
}

/* Not const: exactness may move the wheel's earliest timers into the tree. */
HRT_EXTERN hrt_time_t hrt_base_next_event(struct hrt_base *b)
{
	hrt_time_t next;
	int locked;

	if (!b || base_foreign(b))
		return HRT_TIME_MAX;
	locked = query_lock(b);
	next = hrt__base_next_locked(b, 0);
	query_unlock(b, locked);
	return next;
}

HRT_EXTERN size_t hrt_base_count(const struct hrt_base *b)
{
	size_t n;
	int locked;

	if (!b || base_foreign(b))
		return 0;
	locked = query_lock(b);
	n = b->queue.count + b->pend.count + b->wheel.count;
	query_unlock(b, locked);
	return n;
}

HRT_EXTERN void hrt_base_get_stats(const struct hrt_base *b, struct hrt_stats *out)
{
	int locked;

	if (!b || !out || base_foreign(b))
		return;
	locked = query_lock(b);
	*out = b->stats;
	out->wheel_cascades = b->wheel.cascades;
	query_unlock(b, locked);
}

HRT_EXTERN void hrt_base_reset_stats(struct hrt_base *b)
{
	if (!b || hrt__walking || base_foreign(b))
		return;
	base_lock(b);
	memset(&b->stats, 0, sizeof(b->stats));
	b->wheel.cascades = 0;
	base_unlock(b);
}

/* Introspection ----------------------------------------------------------- */

static void walk(const struct hrt_rb_node *n, int depth,
		 void (*fn)(const struct hrt_tree_node *, void *), void *ctx)
{
	struct hrt_tree_node info;

	if (!n)
		return;
	walk(n->hrt__left, depth + 1, fn, ctx);
	info.timer = hrt__queue_timer(n);
	if (hrt__queue_is_excluded(info.timer)) {      /* re-queued by this pass */
		walk(n->hrt__right, depth + 1, fn, ctx);
		return;
	}
	info.left = hrt__queue_timer(n->hrt__left);
	info.right = hrt__queue_timer(n->hrt__right);
	info.subtree_soft = info.timer->hrt__subtree_soft;
	info.depth = depth;
	info.red = !hrt__rb_is_black(n);
	fn(&info, ctx);
	walk(n->hrt__right, depth + 1, fn, ctx);
}

HRT_EXTERN int hrt_base_walk_tree(struct hrt_base *b,
				  void (*fn)(const struct hrt_tree_node *n, void *ctx), void *ctx)
{
	const struct hrt_base *outer = hrt__walking;
	size_t n;

	if (!b || !fn)
		return -EINVAL;
	if (base_foreign(b))
		return -EPERM;
	if (outer && outer != b)        /* b's lock after outer's: may deadlock */
		return -EDEADLK;
	if (!outer) {
		struct hrt_list_node out;

		base_lock(b);
		/* Every far timer into the tree: it shows them, and the wheel
		 * stays empty while fn runs (nothing may start), so a query
		 * from fn (next_event) never changes the tree being walked. */
		hrt__list_init(&out);
		hrt__wheel_take_all(&b->wheel, &out);
		enqueue_out(b, &out, NULL);
		hrt__walking = b;
	}
	walk(b->queue.root.node, 0, fn, ctx);
	n = b->queue.count - b->ran_n;
	if (!outer) {
		hrt__walking = NULL;
		base_unlock(b);
	}
	return n > (size_t)INT32_MAX ? INT32_MAX : (int)n;
}

static int wheel_state_bad(const struct hrt_timer *t, const void *b)
{
	return tstate(t) != ((uintptr_t)b | HRT_ST_QUEUED | HRT_ST_WHEEL);
}

/* Lock held.  NULL, or why the base is inconsistent. */
static const char *check_locked(const struct hrt_base *b)
{
	const struct hrt_rb_node *n;
	unsigned excluded = 0, i;
	int err;

	if ((err = hrt__queue_check(&b->queue)) || (err = hrt__queue_check(&b->pend)))
		return hrt__rb_strerror(err);
	for (n = b->queue.leftmost; n; n = hrt__rb_next(n)) {
		const struct hrt_timer *t = hrt__queue_timer(n);

		if (tstate(t) != ((uintptr_t)b | HRT_ST_QUEUED))
			return "queued timer with a wrong state word";
		if (hrt__queue_is_excluded(t))
			excluded++;
	}
	/* Excluded timers in the main queue: exactly the remembered ones. */
	if (excluded != b->ran_n || (b->ran_n && !b->in_pass))
		return "excluded timers in the main queue not the re-queued ones";
	for (i = 0; i < b->ran_n; i++)
		if (tstate(b->ran[i]) != ((uintptr_t)b | HRT_ST_QUEUED) ||
		    !hrt__queue_is_excluded(b->ran[i]))
			return "a re-queued timer is not excluded in the main queue";
	for (n = b->pend.leftmost; n; n = hrt__rb_next(n))
		if (tstate(hrt__queue_timer(n)) != ((uintptr_t)b | HRT_ST_QUEUED | HRT_ST_PENDING))
			return "pending timer with a wrong state word";
	if (!b->in_pass && b->pend.count)
		return "pending timers outside a pass";
	return hrt__wheel_check(&b->wheel, wheel_state_bad, b);
}

HRT_EXTERN int hrt_base_check(struct hrt_base *b, char *why, size_t len)
{
	const char *w;
	int locked;

	if (!b)
		return -EINVAL;
	if (base_foreign(b))
		return -EPERM;
	locked = query_lock(b);
	w = check_locked(b);
	query_unlock(b, locked);
	if (!w)
		return 0;
	if (why && len) {
		size_t n = strlen(w) < len - 1 ? strlen(w) : len - 1;

		memcpy(why, w, n);
		why[n] = '\0';
	}
	return -EUCLEAN;
}

/* Coalesced sleep: the switch and the wake-up window (issue 13) ----------- */

static int coalesce_from_env(void)
{
	const char *s = getenv("HRT_COALESCE");

	return !(s && !strcmp(s, "off"));       /* unset/unknown: on */
}

HRT_EXTERN int hrt_base_set_coalesce(struct hrt_base *b, bool on)
{
	if (!b)
		return -EINVAL;
	__atomic_store_n(&b->coalesce, on ? 1 : 0, __ATOMIC_RELAXED);
	return 0;
}

HRT_EXTERN bool hrt_base_get_coalesce(const struct hrt_base *b)
{
	return b && __atomic_load_n(&b->coalesce, __ATOMIC_RELAXED);
}

/* The latest soft expiry <= hard in the subtree at n, pruning subtrees whose
 * least soft expiry is later; visits at most *budget nodes, so the window
 * costs O(1) whatever is queued (a lower bound is still a valid window). */
static void window_walk(const struct hrt_rb_node *n, hrt_time_t hard,
			hrt_time_t *soft, unsigned *budget)
{
	while (n && *budget) {
		const struct hrt_timer *t = hrt__queue_timer(n);

		if (t->hrt__subtree_soft > hard)
			return;
		--*budget;
		if (!hrt__queue_is_excluded(t) && t->hrt__soft <= hard &&
		    t->hrt__soft > *soft)
			*soft = t->hrt__soft;
		window_walk(n->hrt__left, hard, soft, budget);
		n = n->hrt__right;
	}
}

#define HRT_WINDOW_VISITS 64

static int window_locked(struct hrt_base *b, hrt_time_t *owner,
			 hrt_time_t *soft, hrt_time_t *hard)
{
	unsigned budget = HRT_WINDOW_VISITS;
	struct hrt_timer *t;

	/* Makes the earliest hard expiry a tree's; the wheel's soft expiries
	 * are all >= it then (the bounded search may miss ties: a lower
	 * bound is still a valid window). */
	hrt__base_next_locked(b, 1);
	t = first_live(b);
	if (b->pend.count)
		t = earlier(t, hrt__queue_next_due(&b->pend, HRT_QUEUE_NOW_MAX + 1,
						   &(uint64_t){ 0 }));
	if (!t)
		return 0;
	*owner = *soft = t->hrt__soft;
	*hard = t->hrt__hard;
	window_walk(b->queue.root.node, *hard, soft, &budget);
	window_walk(b->pend.root.node, *hard, soft, &budget);
	return 1;
}

/* Keep the top three bits: the slack changes (a prctl) only when the window
 * does by more than an eighth, and never grows past it. */
static hrt_time_t slack_round_down(hrt_time_t x)
{
	int k = 63 - __builtin_clzll((unsigned long long)x);

	return k < 3 ? x : x & ~(((hrt_time_t)1 << (k - 2)) - 1);
}

int hrt__base_window(struct hrt_base *b, hrt_time_t *owner, hrt_time_t *soft,
		     hrt_time_t *hard)
{
	int have;

	base_lock(b);
	have = window_locked(b, owner, soft, hard);
	base_unlock(b);
	return have;
}

int hrt__slack_div(void)
{
	int nice;

	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);    /* this thread's, on Linux */
	return errno == 0 && nice > 0 ? 200 : 1000;
}

int hrt__coalesce_plan(hrt_time_t now, hrt_time_t owner, hrt_time_t soft,
		       hrt_time_t hard, int div, hrt_time_t *until, hrt_time_t *slack)
{
	hrt_time_t d, bound, t0, q;

	if (hard <= now) {              /* due: no sleep */
		*until = hard;
		*slack = 0;
		return 1;
	}
	/* The kernel widens the slack to (sleep length) / div: start no later
	 * than `bound`, where that estimate still ends by `hard`. */
	d = hard - now;
	bound = now + d - (d / (div + 1) + (d % (div + 1) != 0));
	t0 = soft < bound ? soft : bound;
	if (t0 < owner)
		return 0;
	q = slack_round_down(hard - t0);        /* >= 1: t0 <= bound < hard */
	*until = hard - q < bound ? hard - q : bound;
	*slack = q;
	return 1;
}

HRT_EXTERN int hrt_base_wait_window(struct hrt_base *b, hrt_time_t *soft, hrt_time_t *hard)
{
	hrt_time_t owner, s, h, until, slack;
	int have;

	if (!b || !soft || !hard)
		return -EINVAL;
	if (base_foreign(b))
		return -EPERM;
	base_lock(b);
	have = window_locked(b, &owner, &s, &h);
	base_unlock(b);
	if (!have) {
		*soft = *hard = HRT_TIME_MAX;
		return 0;
	}
	if (!hrt__coalesce_plan(hrt_base_now(b), owner, s, h, hrt__slack_div(),
				&until, &slack)) {
		*soft = *hard = h;
		return 0;
	}
	*soft = until;
	*hard = until + slack;
	return 1;
}

/* The wake-up device --------------------------------------------------- */

/* Lock held: program the device for `when`.  A failure marks it expired,
 * so the next update (or dispatch, or the loop's retry) tries again. */
static void device_arm(struct hrt_base *b, hrt_time_t when)
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
static void base_wakeup_update(struct hrt_base *b)
{
	if (b->dev && !b->in_pass && !base_is_forked(b)) {
		hrt_time_t when = hrt__base_next_locked(b, 0);

		if (when < 1)           /* armed as 1 ns (0 disarms a timerfd), so */
			when = 1;       /* never equal to HRT_ARMED_EXPIRED either */
		if (when != b->armed)
			device_arm(b, when);
	}
}

int hrt__base_fd_entry(const struct hrt_base *b)
{
	return base_fd_entry(b);
}

struct hrt_loop *hrt__base_loop(struct hrt_base *b)
{
	return &b->loop;
}

struct hrt_device *hrt__base_device(struct hrt_base *b)
{
	return __atomic_load_n(&b->dev, __ATOMIC_ACQUIRE);
}

struct hrt_device *hrt__base_set_device(struct hrt_base *b, struct hrt_device *d, int holds)
{
	struct hrt_device *old;

	base_lock(b);
	old = b->dev;
	__atomic_store_n(&b->dev, d, __ATOMIC_RELEASE);
	if (holds == HRT_DEV_NEW)
		b->armed = HRT_TIME_MAX;
	else if (holds != HRT_DEV_SAME)
		b->armed = HRT_ARMED_EXPIRED;
	base_wakeup_update(b);
	base_unlock(b);
	return old;
}

HRT_EXTERN int hrt_base_fd(struct hrt_base *b)
{
	struct hrt_device *d;
	int fd;

	if (!b || base_is_virtual(b))
		return -EINVAL;
	if ((fd = base_fd_entry(b)))
		return fd;
	base_lock(b);
	if (!b->dev) {
		d = hrt__timerfd_new(b->clock, NULL);
		if (!d) {
			fd = -errno;
			base_unlock(b);
			return fd;
		}
		__atomic_store_n(&b->dev, d, __ATOMIC_RELEASE);
		b->armed = HRT_TIME_MAX;        /* a new timerfd is disarmed */
		base_wakeup_update(b);
	}
	fd = b->dev->ops->fd(b->dev);
	base_unlock(b);
	return fd;
}

/*
 * One critical section per wake-up.  The clock is read after the device
 * was drained, so the pass never runs at an instant earlier than the
 * expiry that woke it: a late wake-up can only merge passes, never add one.
 * An ack that found nothing (another thread re-armed the device between
 * the host's poll and the read, e.g. by cancelling the timer it fired for)
 * runs no pass unless something is hard-due or the last arm failed: the
 * device did not fire, so there is no interrupt to answer.
 */
ssize_t hrt__base_wakeup(struct hrt_base *b, int event, int idle)
{
	hrt_time_t now;
	size_t n = 0;
	int due, err;

	base_lock(b);
	now = hrt__clock_now(b->clock);
	if (event == HRT_DEV_FIRED) {
		b->stats.wakeups++;
		b->armed = HRT_ARMED_EXPIRED;   /* fired: any next instant re-arms */
		due = 1;
	} else if (event == -ECANCELED) {
		b->stats.clock_jumps++;
		b->armed = HRT_ARMED_EXPIRED;   /* re-arm: renews CANCEL_ON_SET */
		due = 1;
	} else {
		due = b->armed == HRT_ARMED_EXPIRED || hrt__base_next_locked(b, 0) <= now;
	}
	if (due)
		n = run_locked(b, now, idle);   /* re-arms at its end */
	base_wakeup_update(b);                  /* retries an arm that failed */
	err = b->armed == HRT_ARMED_EXPIRED ? b->arm_err : 0;
	base_unlock(b);
	return err ? err : (ssize_t)n;
}

ssize_t hrt__base_dispatch(struct hrt_base *b, int idle, int *read_err)
{
	struct hrt_device *d;
	int err, ev;

	*read_err = 0;
	if ((err = base_fd_entry(b)))
		return err;
	d = hrt__base_device(b);
	if (!d)
		return -EINVAL;
	ev = d->ops->ack(d);
	if (ev < 0 && ev != -ECANCELED) {       /* EBADF: the host closed our fd */
		*read_err = ev;
		return ev;
	}
	return hrt__base_wakeup(b, ev, idle);
}

HRT_EXTERN ssize_t hrt_base_dispatch(struct hrt_base *b, int idle)
{
	int read_err;

	if (!b)
		return -EINVAL;
	return hrt__base_dispatch(b, idle, &read_err);
}

int hrt__base_rearm(struct hrt_base *b)
{
	int err;

	base_lock(b);
	if (b->armed == HRT_ARMED_EXPIRED)
		base_wakeup_update(b);
	/* EXPIRED without an arm error: the device fired and a pass running
	 * on another thread re-arms at its end (a failure there pokes us). */
	err = b->armed == HRT_ARMED_EXPIRED ? b->arm_err : 0;
	base_unlock(b);
	return err;
}
