/* SPDX-License-Identifier: MIT */
/*
 * rbtree.c - red-black tree rebalancing, plain and augmented, and a checker.
 * The fix-ups themselves are static inline cores in rbtree_augment.h; here
 * they are instantiated twice: with no-op callbacks the compiler removes,
 * and with a caller's table.
 */
#include "rbtree_augment.h"

static void dummy_rotate(struct hrt_rb_node *o, struct hrt_rb_node *n) { (void)o; (void)n; }
static void dummy_copy(struct hrt_rb_node *o, struct hrt_rb_node *n) { (void)o; (void)n; }
static void dummy_propagate(struct hrt_rb_node *n, struct hrt_rb_node *s) { (void)n; (void)s; }

static const struct hrt_rb_augment no_augment = {
	dummy_propagate, dummy_copy, dummy_rotate,
};

void hrt__rb_insert(struct hrt_rb_node *node, struct hrt_rb_root *root)
{
	rb_insert_fixup(node, root, dummy_rotate);
}

void hrt__rb_insert_augmented(struct hrt_rb_node *node, struct hrt_rb_root *root,
			      const struct hrt_rb_augment *aug)
{
	rb_insert_fixup(node, root, aug->rotate);
}

void hrt__rb_erase(struct hrt_rb_node *node, struct hrt_rb_root *root)
{
	rb_erase_core(node, root, &no_augment);
}

void hrt__rb_erase_augmented(struct hrt_rb_node *node, struct hrt_rb_root *root,
			     const struct hrt_rb_augment *aug)
{
	rb_erase_core(node, root, aug);
}

struct hrt_rb_node *hrt__rb_first(const struct hrt_rb_root *root)
{
	struct hrt_rb_node *n = root->node;

	if (n)
		while (n->hrt__left)
			n = n->hrt__left;
	return n;
}

struct hrt_rb_node *hrt__rb_last(const struct hrt_rb_root *root)
{
	struct hrt_rb_node *n = root->node;

	if (n)
		while (n->hrt__right)
			n = n->hrt__right;
	return n;
}

struct hrt_rb_node *hrt__rb_next(const struct hrt_rb_node *n)
{
	struct hrt_rb_node *p;

	if (n->hrt__right) {
		n = n->hrt__right;
		while (n->hrt__left)
			n = n->hrt__left;
		return (struct hrt_rb_node *)n;
	}
	/* Up until we come from a left child. */
	while ((p = hrt__rb_parent(n)) && n == p->hrt__right)
		n = p;
	return p;
}

struct hrt_rb_node *hrt__rb_prev(const struct hrt_rb_node *n)
{
	struct hrt_rb_node *p;

	if (n->hrt__left) {
		n = n->hrt__left;
		while (n->hrt__right)
			n = n->hrt__right;
		return (struct hrt_rb_node *)n;
	}
	while ((p = hrt__rb_parent(n)) && n == p->hrt__left)
		n = p;
	return p;
}

struct check_state {
	int (*order)(const struct hrt_rb_node *, const struct hrt_rb_node *, void *);
	int (*augment)(const struct hrt_rb_node *, void *);
	void *ctx;
	const struct hrt_rb_node *prev;  /* in-order predecessor so far */
	size_t count;
};

/* Returns the black height of n's subtree, or a negative error. */
static int check_node(const struct hrt_rb_node *n, const struct hrt_rb_node *parent,
		      struct check_state *st, int depth)
{
	int lh, rh;

	if (!n)
		return 1;                               /* (3) */
	if (depth > 128)
		return HRT_RB_EDEPTH;                   /* a cycle, most likely */
	if (hrt__rb_parent(n) != parent)
		return HRT_RB_EPARENT;
	if (!hrt__rb_is_black(n) && (!hrt__rb_is_black(n->hrt__left) ||
				     !hrt__rb_is_black(n->hrt__right)))
		return HRT_RB_ERED_RED;                 /* (4) */
	lh = check_node(n->hrt__left, n, st, depth + 1);
	if (lh < 0)
		return lh;
	if (st->prev) {
		if (st->order && st->order(st->prev, n, st->ctx))
			return HRT_RB_EORDER;
		if (hrt__rb_next(st->prev) != n || hrt__rb_prev(n) != st->prev)
			return HRT_RB_ENEXT;
	} else if (hrt__rb_prev(n)) {
		return HRT_RB_ENEXT;
	}
	st->prev = n;
	st->count++;
	rh = check_node(n->hrt__right, n, st, depth + 1);
	if (rh < 0)
		return rh;
	if (lh != rh)
		return HRT_RB_EBLACK_HEIGHT;            /* (5) */
	if (st->augment && st->augment(n, st->ctx))
		return HRT_RB_EAUGMENT;
	return lh + (int)hrt__rb_is_black(n);
}

int hrt__rb_check(const struct hrt_rb_root *root,
		  int (*order)(const struct hrt_rb_node *a, const struct hrt_rb_node *b, void *ctx),
		  int (*augment)(const struct hrt_rb_node *n, void *ctx),
		  void *ctx, size_t *count)
{
	struct check_state st = { order, augment, ctx, NULL, 0 };
	int h;

	if (root->node) {
		if (hrt__rb_parent(root->node))
			return HRT_RB_EROOT_PARENT;
		if (!hrt__rb_is_black(root->node))
			return HRT_RB_EROOT_RED;        /* (2) */
	}
	h = check_node(root->node, NULL, &st, 0);
	if (h < 0)
		return h;
	if (st.prev && hrt__rb_next(st.prev))
		return HRT_RB_ENEXT;
	if (count)
		*count = st.count;
	return HRT_RB_OK;
}

const char *hrt__rb_strerror(int err)
{
	switch (err) {
	case HRT_RB_OK:            return "ok";
	case HRT_RB_EROOT_PARENT:  return "root has a parent";
	case HRT_RB_EROOT_RED:     return "root is red (property 2)";
	case HRT_RB_EPARENT:       return "a child's parent link is wrong";
	case HRT_RB_ERED_RED:      return "red node with a red child (property 4)";
	case HRT_RB_EBLACK_HEIGHT: return "unequal black heights (property 5)";
	case HRT_RB_EORDER:        return "in-order keys out of order";
	case HRT_RB_EAUGMENT:      return "augmented value differs from its recomputation";
	case HRT_RB_ECOUNT:        return "node count differs";
	case HRT_RB_ENEXT:         return "next/prev disagree with the in-order walk";
	case HRT_RB_EDEPTH:        return "tree deeper than possible (cycle?)";
	}
	return "unknown error";
}
