/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.c - making and unmaking a base, with what hangs on it: its
 * timer set, the loop's state (loop.h, allocated here so that neither a
 * loop nor a stop ever allocates) and its device.  The one file that names
 * both the base and the loop, so that neither names the other: the base
 * reaches the loop only as its device (device.h), the loop the base
 * through base.h.
 */
#include <stdlib.h>
#include <string.h>

#include "base_priv.h"
#include "loop.h"

HRT_EXTERN const char *hrt_version(void)
{
	return HRT_VERSION_STRING;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void atfork_child(void)
{
	__atomic_add_fetch(&hrt__fork_gen, 1, __ATOMIC_RELAXED);
}

static void atfork_register(void)
{
	(void)pthread_atfork(NULL, NULL, atfork_child); /* ENOMEM: no fork detection */
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

static int coalesce_from_env(void)
{
	const char *s = getenv("HRT_COALESCE");

	return !(s && !strcmp(s, "off"));       /* unset/unknown: on */
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
	b = aligned_alloc(_Alignof(struct hrt_base), sizeof(*b));
	if (!b) {
		errno = ENOMEM;
		return NULL;
	}
	memset(b, 0, sizeof(*b));
	if (pthread_mutex_init(&b->lock, NULL))
		goto out_free;
	if (pthread_cond_init(&b->done, NULL))
		goto out_mutex;
	hrt__tset_init(&b->set, clock == HRT_CLOCK_VIRTUAL ? 0 : hrt__clock_now(clock));
	b->clock = clock;
	b->unlocked = !!(flags & HRT_BASE_UNLOCKED);
	b->owner = &hrt__walking;
	b->greedy = greedy_from_env();
	b->coalesce = coalesce_from_env();
	b->armed = HRT_TIME_MAX;
	b->fork_gen = __atomic_load_n(&hrt__fork_gen, __ATOMIC_RELAXED);
	b->loop = hrt__loop_new(b->unlocked);
	if (!b->loop)
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
	busy = hrt__tset_count(&b->set) || hrt__tset_in_pass(&b->set) || b->waiters ||
	       hrt__loop_busy(b->loop);
	base_unlock(b);
	if (busy)
		return -EBUSY;
	if (b->dev)
		b->dev->ops->close(b->dev);
	hrt__loop_free(b->loop);
	pthread_cond_destroy(&b->done);
	pthread_mutex_destroy(&b->lock);
	free(b);
	return 0;
}
