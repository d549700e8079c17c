/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.c - making and unmaking a base, with what hangs on it: its
 * timer set, its clients' states - the loop's (loop.h) and the host
 * plan's (hostsleep.h), allocated here so that neither a loop, a stop nor
 * a plan ever allocates - and its device.  The one file that names the
 * base and its clients together, so that none names the other: the base
 * reaches the loop only through the hook it hands over (base.h), the
 * clients the base through base.h.
 *
 * fork().  A fork made while another thread is inside a call would leave
 * the child a copy of that base's lock held by no thread of the child.
 * So the fork handlers lock every locked base (in address order, the
 * order every call takes two locks in) before the fork and unlock them in
 * both processes after it; in the child they also end what the vanished
 * threads were doing on a base (a pass, waits for a callback).  The bases
 * are found in a list kept sorted by address under fork_lock; a new base
 * enters it through a lock-free intake, so that hrt_base_new, allowed
 * from a walk callback (a base lock held), never waits for fork_lock,
 * which a fork holds while it waits for the base locks.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "guard.h"
#include "hostsleep.h"
#include "loop.h"
#include "running.h"

HRT_EXTERN const char *hrt_version(void)
{
	return HRT_VERSION_STRING;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hrt_base *fork_list;      /* locked bases, by address */
static struct hrt_base *fork_intake;    /* new ones, pushed lock-free */

/* fork_lock held: the intake into the sorted list. */
static void fork_list_take_intake(void)
{
	struct hrt_base *b = __atomic_exchange_n(&fork_intake, NULL, __ATOMIC_ACQUIRE), *next;

	for (; b; b = next) {
		struct hrt_base **pp = &fork_list, *prev = NULL;

		next = b->fork_push;
		while (*pp && *pp < b) {
			prev = *pp;
			pp = &(*pp)->fork_next;
		}
		b->fork_next = *pp;
		b->fork_prev = prev;
		if (*pp)
			(*pp)->fork_prev = b;
		*pp = b;
	}
}

/* Before a fork: every locked base's lock, except the one a walk callback
 * of this thread holds already (a callback may fork). */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&fork_lock);
	fork_list_take_intake();
	for (struct hrt_base *b = fork_list; b; b = b->fork_next)
		if (b != hrt__walking)
			hrt__bl_lock_full(&b->bl);      /* shuts its owner out too */
}

static void atfork_parent(void)
{
	for (struct hrt_base *b = fork_list; b; b = b->fork_next)
		if (b != hrt__walking)
			hrt__bl_unlock_slow(&b->bl);
	pthread_mutex_unlock(&fork_lock);
}

/* The child has this thread only: a pass another thread was running is
 * over (its callback will never return here) and nobody waits. */
static void atfork_child(void)
{
	__atomic_add_fetch(&hrt__fork_gen, 1, __ATOMIC_RELAXED);
	hrt__run_fork_child();
	for (struct hrt_base *b = fork_list; b; b = b->fork_next) {
		if (hrt__tset_in_pass(&b->set) && !pthread_equal(b->pass_thread, pthread_self())) {
			base_for_each_set(b, ts)
				hrt__tset_pass_end(ts);
			b->running = NULL;
		}
		b->bl.waiters = 0;
		pthread_cond_init(&b->bl.done, NULL);
		if (b != hrt__walking) {
			hrt__bl_child(&b->bl);
			hrt__bl_unlock_slow(&b->bl);
		}
	}
	pthread_mutex_unlock(&fork_lock);
}

static void atfork_register(void)
{
	/* ENOMEM: no fork detection, and a fork during a call may hang the
	 * child's first call of that base. */
	(void)pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static void fork_list_add(struct hrt_base *b)
{
	struct hrt_base *head = __atomic_load_n(&fork_intake, __ATOMIC_RELAXED);

	do
		b->fork_push = head;
	while (!__atomic_compare_exchange_n(&fork_intake, &head, b, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
}

static void fork_list_del(struct hrt_base *b)
{
	pthread_mutex_lock(&fork_lock);
	fork_list_take_intake();
	if (b->fork_prev)
		b->fork_prev->fork_next = b->fork_next;
	else
		fork_list = b->fork_next;
	if (b->fork_next)
		b->fork_next->fork_prev = b->fork_prev;
	pthread_mutex_unlock(&fork_lock);
}

/* HRT_BASE_ENV only: a library that reads the environment behind its
 * caller's back changes every program that links it. */
static int greedy_from_env(void)
{
	const char *s = getenv("HRT_GREEDY");

	if (s && !strcmp(s, "off"))
		return HRT_GREEDY_OFF;
	if (s && !strcmp(s, "always"))
		return HRT_GREEDY_ALWAYS;
	return HRT_GREEDY_IDLE;
}

static int coalesce_from_env(void)
{
	const char *s = getenv("HRT_COALESCE");

	return !(s && !strcmp(s, "off"));       /* unset/unknown: on */
}

HRT_EXTERN int hrt_base_new(struct hrt_base **basep, clockid_t clock, unsigned flags)
{
	struct hrt_base *b;
	int virt = !!(flags & HRT_BASE_VIRTUAL);
	/* A virtual base has one time: its relative timers stay on it. */
	int split = clock == CLOCK_REALTIME && !virt;
	size_t size = sizeof(*b) + (split ? sizeof(b->rel[0]) : 0);

	if (!basep || (clock != CLOCK_MONOTONIC && clock != CLOCK_BOOTTIME &&
		       clock != CLOCK_REALTIME) ||
	    (flags & ~(HRT_BASE_UNLOCKED | HRT_BASE_VIRTUAL | HRT_BASE_ENV)))
		return -EINVAL;
	pthread_once(&atfork_once, atfork_register);
	b = aligned_alloc(_Alignof(struct hrt_base), size);
	if (!b)
		return -ENOMEM;
	memset(b, 0, size);
	if (hrt__bl_init(&b->bl))
		goto out_free;
	hrt__tset_init(&b->set, virt ? 0 : hrt__clock_now(clock));
	b->set.owner = b;
	if (split) {
		hrt__tset_init(b->rel, hrt__clock_now(CLOCK_MONOTONIC));
		b->rel->owner = b;
	}
	b->clock = clock;
	b->virt = virt;
	b->split = split;
	b->now_slow = virt || split;
	if (split)
		hrt__base_sync_offset(b, 1);
	b->unlocked = !!(flags & HRT_BASE_UNLOCKED);
	if (b->unlocked)
		b->owner = hrt__thread_id_get();
	else
		hrt__baselock_init();
	b->greedy = flags & HRT_BASE_ENV ? greedy_from_env() : HRT_GREEDY_IDLE;
	b->coalesce = flags & HRT_BASE_ENV ? coalesce_from_env() : 1;
	hrt__wake_init(b);
	b->fork_gen = __atomic_load_n(&hrt__fork_gen, __ATOMIC_RELAXED);
	b->loop = hrt__loop_new(b->unlocked);
	if (!b->loop)
		goto out_lock;
	b->host = hrt__host_new();
	if (!b->host)
		goto out_loop;
	if (!b->unlocked)
		fork_list_add(b);
	hrt__live_add(&b->live[0], &b->set);
	if (split)
		hrt__live_add(&b->live[1], b->rel);
	*basep = b;
	return 0;

out_loop:
	hrt__loop_free(b->loop);
out_lock:
	hrt__bl_destroy(&b->bl);
out_free:
	free(b);
	return -ENOMEM;
}

HRT_EXTERN int hrt_base_free(struct hrt_base *b)
{
	int busy;

	/* The guard, but a walk callback gets -EBUSY: the walk is a use of
	 * the base that freeing would leave dangling, like a pass. */
	busy = base_guard(b, G_CHANGE, 0);
	if (busy)
		return busy == -EDEADLK ? -EBUSY : busy;
	/* The full lock, not base_lock: a call of another thread still inside
	 * (the owner on its fast path, or a foreign thread shutting the owner
	 * out) has finished once we hold it, so only a call made after this
	 * one began can race with the free (hrt.h forbids that). */
	if (!b->unlocked)
		hrt__bl_lock_full(&b->bl);
	/* Queued timers, a pass (a callback of this base, or another thread's
	 * pass), a loop or a waiting cancel: freeing would leave them dangling.
	 * No loop runs in a forked child (its loop state may be a copy of a
	 * running one's, its lock held by a thread that is not there). */
	busy = query_unlock_count(b, 0) || hrt__tset_in_pass(&b->set) || b->bl.waiters ||
	       (!base_is_forked(b) && hrt__loop_busy(b->loop));
#ifdef HRT_VERIFY
	if (query_unlock_count(b, 0) && !hrt__tset_in_pass(&b->set))
		base_for_each_set(b, ts)
			verify_queued(ts);
#endif
	if (!b->unlocked)
		hrt__bl_unlock_slow(&b->bl);
	if (busy)
		return -EBUSY;
	if (!b->unlocked)
		fork_list_del(b);
	/* Its timers idle from here on, whatever their words say. */
	hrt__live_del(&b->live[0]);
	if (b->split)
		hrt__live_del(&b->live[1]);
	hrt__wake_close(b);
	hrt__loop_free(b->loop);
	hrt__host_free(b->host);
	hrt__bl_destroy(&b->bl);
	free(b);
	return 0;
}
