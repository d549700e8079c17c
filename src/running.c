/* SPDX-License-Identifier: MIT */
/*
 * running.c - the registry of running callbacks (running.h): 64 striped
 * lists for locked bases, one list per thread for unlocked ones.  It
 * lets a cancel of a timer that is not queued answer without its base.
 */
#include <time.h>

#include "running.h"

#define RUN_STRIPES 64

static struct run_stripe {
	int lock;
	struct hrt_run_node *head;
} __attribute__((aligned(64))) stripes[RUN_STRIPES];

/* An unlocked base's callbacks run on its owner thread, the only one
 * that may ask of its timers: no lock.  Initial-exec, as baselock.h's:
 * no __tls_get_addr call in the pass. */
_Thread_local struct hrt_run_node *hrt__own_runs HRT_TLS_IE;

static struct run_stripe *stripe_of(const struct hrt_timer *t)
{
	uint64_t h = (uint64_t)(uintptr_t)t >> 6;

	return &stripes[(h * 0x9e3779b97f4a7c15ull) >> 58];
}

static void stripe_lock(struct run_stripe *s)
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

static void stripe_unlock(struct run_stripe *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

static void node_link(struct hrt_run_node **head, struct hrt_run_node *n)
{
	n->next = *head;
	n->pprev = head;
	if (n->next)
		n->next->pprev = &n->next;
	*head = n;
}

static void node_unlink(struct hrt_run_node *n)
{
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
}

static int node_find(const struct hrt_run_node *n, const struct hrt_timer *t)
{
	for (; n; n = n->next)
		if (n->t == t)
			return 1;
	return 0;
}

void hrt__run_enter_locked(struct hrt_run_node *n, struct hrt_timer *t, struct hrt_tset *ts)
{
	struct run_stripe *s = stripe_of(t);

	n->t = t;
	n->thread = &hrt__own_runs;
	stripe_lock(s);
	node_link(&s->head, n);
	__atomic_store_n(&t->hrt__base_state, (uintptr_t)ts | HRT_ST_RUN, __ATOMIC_RELEASE);
	stripe_unlock(s);
}

void hrt__run_leave_locked(struct hrt_run_node *n)
{
	struct run_stripe *s = stripe_of(n->t);

	stripe_lock(s);
	node_unlink(n);
	stripe_unlock(s);
}

/*
 * IDLE answers at once.  RUN | UNL: this thread's own list (another
 * thread may not ask: hrt.h).  RUN: the word read again under the
 * stripe's lock with the node, as one - a RUN with no node is one whose
 * callback returned with no restart (a restart re-queues it before the
 * node goes); a word that changed meanwhile is looked at again.
 */
int hrt__run_state(const struct hrt_timer *t, uintptr_t s)
{
	struct run_stripe *st;
	int found;

	for (;;) {
		if (hrt__tset_queued(s) || !(s & (HRT_ST_IDLE | HRT_ST_RUN)))
			return HRT_RUN_ASK;
		if (s & HRT_ST_IDLE)
			return HRT_RUN_IDLE;
		if (s & HRT_ST_UNL)
			return node_find(hrt__own_runs, t) ? HRT_RUN_RUNNING : HRT_RUN_IDLE;
		st = stripe_of(t);
		stripe_lock(st);
		found = node_find(st->head, t);
		if (hrt__tset_state(t) == s) {
			stripe_unlock(st);
			return found ? HRT_RUN_RUNNING : HRT_RUN_IDLE;
		}
		s = hrt__tset_state(t);
		stripe_unlock(st);
	}
}

void hrt__run_fork_child(void)
{
	for (int i = 0; i < RUN_STRIPES; i++) {
		struct hrt_run_node *n = stripes[i].head, *next;

		for (; n; n = next) {
			next = n->next;
			if (n->thread != &hrt__own_runs)        /* the only thread now */
				node_unlink(n);
		}
		stripes[i].lock = 0;
	}
}
