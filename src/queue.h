/*
 * queue.h - the timer queue (internal): timers ordered by hard expiry, equal
 * keys in insertion order, each node augmented with the minimum soft expiry
 * of its subtree, the leftmost node cached.  No locking: the base serialises.
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

/* Earliest hard expiry, FIFO among equals; NULL if empty. */
static inline struct hrt_timer *hrt__queue_first(const struct hrt_queue *q)
{
	return hrt__queue_timer(q->leftmost);
}

void hrt__queue_add(struct hrt_queue *q, struct hrt_timer *t);
void hrt__queue_del(struct hrt_queue *q, struct hrt_timer *t);
/* First timer in queue order whose soft expiry is <= now, or NULL.  Adds the
 * number of nodes examined to *visited. */
struct hrt_timer *hrt__queue_next_due(const struct hrt_queue *q, hrt_time_t now,
				      uint64_t *visited);
/* Full structural check; 0 or an HRT_RB_E* code. */
int hrt__queue_check(const struct hrt_queue *q);

#endif /* HRT_QUEUE_H */
