/* SPDX-License-Identifier: MIT */
/*
 * queue.h - the timer queue (internal): timers ordered by hard expiry, equal
 * hard expiries by soft expiry, equal both in insertion order (the tie rule
 * of hrt.h), each node augmented with the minimum soft expiry of its
 * subtree, the leftmost node cached.  No locking: the timer set's
 * caller serialises (timerset.h holds the two queues of a base).
 *
 * A node may be queued "excluded": it keeps its place in the order but no
 * due-search finds it (it counts as soft expiry HRT_TIME_MAX in the
 * augmentation).  Soft expiries >= HRT_TIME_MAX - 1 count as HRT_TIME_MAX - 1,
 * so searches up to HRT_QUEUE_NOW_MAX never find them and a search at
 * HRT_QUEUE_NOW_MAX + 1 finds exactly the first node that is not excluded.
 */
#ifndef HRT_QUEUE_H
#define HRT_QUEUE_H

#include "rbtree.h"
#include "hrt.h"

struct hrt_queue {
	struct hrt_rb_root root;
	struct hrt_rb_node *leftmost;   /* cached: first() is O(1) */
	size_t count;
};

#define HRT_QUEUE_NOW_MAX (HRT_TIME_MAX - 2)   /* the latest instant a pass runs at */
#define HRT_Q_EXCLUDED ((uintptr_t)2)           /* user bit in hrt__pc */

static inline struct hrt_timer *hrt__queue_timer(const struct hrt_rb_node *n)
{
	return n ? hrt_container_of(n, struct hrt_timer, hrt__node) : NULL;
}

static inline void hrt__queue_init(struct hrt_queue *q)
{
	q->root.node = NULL;
	q->leftmost = NULL;
	q->count = 0;
}

/* a comes before b in key order (hard, then soft); neither: a tie, which
 * insertion order breaks. */
static inline int hrt__queue_before(const struct hrt_timer *a, const struct hrt_timer *b)
{
	return a->hrt__hard < b->hrt__hard ||
	       (a->hrt__hard == b->hrt__hard && a->hrt__soft < b->hrt__soft);
}

/* Earliest in key order, FIFO among equals; NULL if empty. */
static inline struct hrt_timer *hrt__queue_first(const struct hrt_queue *q)
{
	return hrt__queue_timer(q->leftmost);
}

static inline int hrt__queue_is_excluded(const struct hrt_timer *t)
{
	return !!(t->hrt__node.hrt__pc & HRT_Q_EXCLUDED);
}

void hrt__queue_add(struct hrt_queue *q, struct hrt_timer *t, int excluded);
void hrt__queue_del(struct hrt_queue *q, struct hrt_timer *t);
/* An excluded timer (of whichever queue holds it) becomes a plain one, in
 * place: no erase, no insert, only the augmentation on its path to the root. */
void hrt__queue_unexclude(struct hrt_timer *t);
/* First timer in queue order, not excluded, whose soft expiry is <= now, or
 * NULL.  Adds the number of nodes examined to *visited. */
struct hrt_timer *hrt__queue_next_due(const struct hrt_queue *q, hrt_time_t now,
				      uint64_t *visited);
/* Full structural check; 0 or an HRT_RB_E* code. */
int hrt__queue_check(const struct hrt_queue *q);

#endif /* HRT_QUEUE_H */
