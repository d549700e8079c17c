/* SPDX-License-Identifier: MIT */
/*
 * running.c - the set of live timer sets (running.h), by address: 64
 * buckets, each a list under a spin lock of its own (held for a few
 * pointer moves; a leaf lock, taken alone).  It lets a cancel or query of
 * a timer that ran and was not queued again answer without its base.
 */
#include <time.h>

#include "running.h"

#define LIVE_BUCKETS 64

static struct live_bucket {
	int lock;
	struct hrt_live *head;
} __attribute__((aligned(64))) buckets[LIVE_BUCKETS];

static struct live_bucket *bucket_of(const struct hrt_tset *ts)
{
	uint64_t h = (uint64_t)(uintptr_t)ts >> 6;     /* sets are 64-aligned */

	return &buckets[(h * 0x9e3779b97f4a7c15ull) >> 58];
}

static void bucket_lock(struct live_bucket *s)
{
	int spins = 0;

	while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED)) {
			if (++spins < 1024) {
#if defined(__x86_64__) || defined(__i386__)
				__builtin_ia32_pause();
#endif
			} else {        /* its holder was preempted: a few pointer moves */
				struct timespec ts = { 0, 1000 };

				nanosleep(&ts, NULL);
			}
		}
	}
}

static void bucket_unlock(struct live_bucket *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

void hrt__live_add(struct hrt_live *n, const struct hrt_tset *ts)
{
	struct live_bucket *s = bucket_of(ts);

	n->ts = ts;
	bucket_lock(s);
	n->next = s->head;
	n->pprev = &s->head;
	if (n->next)
		n->next->pprev = &n->next;
	s->head = n;
	bucket_unlock(s);
}

void hrt__live_del(struct hrt_live *n)
{
	struct live_bucket *s = bucket_of(n->ts);

	bucket_lock(s);
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	bucket_unlock(s);
}

int hrt__live_has(const struct hrt_tset *ts)
{
	struct live_bucket *s = bucket_of(ts);
	const struct hrt_live *n;

	bucket_lock(s);
	for (n = s->head; n && n->ts != ts; n = n->next)
		;
	bucket_unlock(s);
	return n != NULL;
}

void hrt__run_fork_child(void)
{
	for (int i = 0; i < LIVE_BUCKETS; i++)
		buckets[i].lock = 0;
}
