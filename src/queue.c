/* SPDX-License-Identifier: MIT */
/*
 * queue.c - timers by hard expiry, then soft expiry, with a
 * min-soft-expiry augmentation.
 *
 * Every node keeps hrt__subtree_soft = min(soft) over its subtree, so the
 * search for the first soft-expired timer descends only into subtrees that
 * hold one: each found timer costs O(log n) nodes, wherever it sits.  Equal
 * keys (hard and soft) go right of existing ones, which keeps them FIFO:
 * the tie rule of hrt.h, whose soft tie-break lets the wheel place timers
 * by soft expiry (wheel.h).  The
 * rebalancing is instantiated here (rbtree_augment.h), so the augment
 * callbacks below are called directly, not through a table.
 */
#include "queue.h"
#include "rbtree_augment.h"

/* What a node contributes to its subtree's minimum (see queue.h). */
static inline hrt_time_t contrib(const struct hrt_timer *t)
{
	if (hrt__queue_is_excluded(t))
		return HRT_TIME_MAX;
	return t->hrt__soft < HRT_TIME_MAX - 1 ? t->hrt__soft : HRT_TIME_MAX - 1;
}

static inline hrt_time_t min_soft(const struct hrt_rb_node *n, hrt_time_t m)
{
	if (n) {
		hrt_time_t s = hrt__queue_timer(n)->hrt__subtree_soft;
		if (s < m)
			return s;
	}
	return m;
}

static inline hrt_time_t compute(const struct hrt_timer *t)
{
	hrt_time_t m = contrib(t);

	m = min_soft(t->hrt__node.hrt__left, m);
	return min_soft(t->hrt__node.hrt__right, m);
}

static void aug_propagate(struct hrt_rb_node *n, struct hrt_rb_node *stop)
{
	while (n != stop) {
		struct hrt_timer *t = hrt__queue_timer(n);
		hrt_time_t m = compute(t);

		if (t->hrt__subtree_soft == m)
			break;
		t->hrt__subtree_soft = m;
		n = hrt__rb_parent(n);
	}
}

static void aug_copy(struct hrt_rb_node *old, struct hrt_rb_node *new_)
{
	hrt__queue_timer(new_)->hrt__subtree_soft = hrt__queue_timer(old)->hrt__subtree_soft;
}

static void aug_rotate(struct hrt_rb_node *old, struct hrt_rb_node *new_)
{
	struct hrt_timer *o = hrt__queue_timer(old);

	hrt__queue_timer(new_)->hrt__subtree_soft = o->hrt__subtree_soft;
	o->hrt__subtree_soft = compute(o);
}

static const struct hrt_rb_augment min_soft_augment = {
	aug_propagate, aug_copy, aug_rotate,
};

void hrt__queue_add(struct hrt_queue *q, struct hrt_timer *t, int excluded)
{
	struct hrt_rb_node **link = &q->root.node, *parent = NULL;
	hrt_time_t hard = t->hrt__hard, s = t->hrt__soft, soft;
	int leftmost = 1;

	t->hrt__node.hrt__pc = excluded ? HRT_Q_EXCLUDED : 0;
	soft = contrib(t);

	while (*link) {
		struct hrt_timer *pt;

		parent = *link;
		pt = hrt__queue_timer(parent);
		/* The new node will sit below: fold its soft in on the way. */
		if (pt->hrt__subtree_soft > soft)
			pt->hrt__subtree_soft = soft;
		if (hard < pt->hrt__hard || (hard == pt->hrt__hard && s < pt->hrt__soft)) {
			link = &parent->hrt__left;
		} else {
			link = &parent->hrt__right;
			leftmost = 0;
		}
	}
	t->hrt__subtree_soft = soft;
	hrt__rb_link(&t->hrt__node, parent, link, excluded ? HRT_Q_EXCLUDED : 0);
	if (leftmost)
		q->leftmost = &t->hrt__node;
	hrt__rb_insert_inline(&t->hrt__node, &q->root, &min_soft_augment);
	q->count++;
}

void hrt__queue_del(struct hrt_queue *q, struct hrt_timer *t)
{
	if (q->leftmost == &t->hrt__node)
		q->leftmost = hrt__rb_next(&t->hrt__node);
	hrt__rb_erase_inline(&t->hrt__node, &q->root, &min_soft_augment);
	q->count--;
}

void hrt__queue_unexclude(struct hrt_timer *t)
{
	t->hrt__node.hrt__pc &= ~HRT_Q_EXCLUDED;
	/* Its contribution only fell: the minima on its path, up to the first
	 * that does not change. */
	aug_propagate(&t->hrt__node, NULL);
}

struct hrt_timer *hrt__queue_next_due(const struct hrt_queue *q, hrt_time_t now,
				      uint64_t *visited)
{
	const struct hrt_rb_node *n = q->root.node;
	uint64_t v = 0;

	if (!n || hrt__queue_timer(n)->hrt__subtree_soft > now)
		return NULL;
	/*
	 * Invariant: n's subtree holds a due timer.  Prefer the left subtree
	 * (earlier hard expiries), then n itself; else it must be on the right.
	 */
	for (;;) {
		const struct hrt_timer *t = hrt__queue_timer(n);
		const struct hrt_rb_node *l = n->hrt__left;

		v++;
		if (l && hrt__queue_timer(l)->hrt__subtree_soft <= now)
			n = l;
		else if (contrib(t) <= now)
			break;
		else
			n = n->hrt__right;
	}
	*visited += v;
	return hrt__queue_timer(n);
}

static int order_cb(const struct hrt_rb_node *a, const struct hrt_rb_node *b, void *ctx)
{
	(void)ctx;
	return hrt__queue_before(hrt__queue_timer(b), hrt__queue_timer(a));
}

static int augment_cb(const struct hrt_rb_node *n, void *ctx)
{
	const struct hrt_timer *t = hrt__queue_timer(n);

	(void)ctx;
	return t->hrt__soft > t->hrt__hard || t->hrt__subtree_soft != compute(t);
}

int hrt__queue_check(const struct hrt_queue *q)
{
	size_t count = 0;
	int err = hrt__rb_check(&q->root, order_cb, augment_cb, NULL, &count);

	if (err)
		return err;
	if (count != q->count)
		return HRT_RB_ECOUNT;
	if (q->leftmost != hrt__rb_first(&q->root))
		return HRT_RB_ENEXT;
	return 0;
}
