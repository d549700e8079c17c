/* SPDX-License-Identifier: MIT */
/*
 * rbtree_augment.h - the red-black fix-ups as static inline cores
 * (internal), so that a tree with its own augment callbacks (queue.c)
 * instantiates them with those callbacks known at compile time: direct
 * calls the compiler may inline, not loads from a table and indirect calls
 * (3-9% of a restart, PERFORMANCE.md).  rbtree.c instantiates the same cores for everyone else.
 *
 * The five properties (numbered once, referred to below):
 *   1. every node is red or black;
 *   2. the root is black;
 *   3. NULL leaves are black;
 *   4. a red node has no red child;
 *   5. every path from a node down to a leaf has the same number of black
 *      nodes (its black height).
 * Insertion can break 4 (a red child of a red parent); erase of a black
 * node can break 5 (one path is a black short, "x is doubly black").
 */
#ifndef HRT_RBTREE_AUGMENT_H
#define HRT_RBTREE_AUGMENT_H

#include "rbtree.h"

static inline void rb_set_parent(struct hrt_rb_node *n, struct hrt_rb_node *p)
{
	n->hrt__pc = (uintptr_t)p | (n->hrt__pc & HRT_RB_LOW_BITS);
}

static inline void rb_set_black(struct hrt_rb_node *n) { n->hrt__pc |= 1; }
static inline void rb_set_red(struct hrt_rb_node *n) { n->hrt__pc &= ~(uintptr_t)1; }
static inline unsigned rb_colour(const struct hrt_rb_node *n) { return n->hrt__pc & 1; }

static inline void rb_set_colour(struct hrt_rb_node *n, unsigned c)
{
	n->hrt__pc = (n->hrt__pc & ~(uintptr_t)1) | c;
}

/* Make `new_` the child of `parent` that `old` was (or the root). */
static inline void rb_change_child(struct hrt_rb_node *old, struct hrt_rb_node *new_,
				struct hrt_rb_node *parent, struct hrt_rb_root *root)
{
	if (!parent)
		root->node = new_;
	else if (parent->hrt__left == old)
		parent->hrt__left = new_;
	else
		parent->hrt__right = new_;
}

typedef void (*hrt_rb_rotate_fn)(struct hrt_rb_node *old, struct hrt_rb_node *new_);

/*
 *     x                y
 *    / \              / \
 *   a   y     ->     x   c
 *      / \          / \
 *     b   c        a   b
 * Colours are left alone; the callers set them.
 */
static inline void rb_rotate_left(struct hrt_rb_node *x, struct hrt_rb_root *root, hrt_rb_rotate_fn cb)
{
	struct hrt_rb_node *y = x->hrt__right, *p = hrt__rb_parent(x);

	x->hrt__right = y->hrt__left;
	if (y->hrt__left)
		rb_set_parent(y->hrt__left, x);
	y->hrt__left = x;
	rb_set_parent(y, p);
	rb_set_parent(x, y);
	rb_change_child(x, y, p, root);
	cb(x, y);
}

/* The mirror image of rb_rotate_left. */
static inline void rb_rotate_right(struct hrt_rb_node *x, struct hrt_rb_root *root, hrt_rb_rotate_fn cb)
{
	struct hrt_rb_node *y = x->hrt__left, *p = hrt__rb_parent(x);

	x->hrt__left = y->hrt__right;
	if (y->hrt__right)
		rb_set_parent(y->hrt__right, x);
	y->hrt__right = x;
	rb_set_parent(y, p);
	rb_set_parent(x, y);
	rb_change_child(x, y, p, root);
	cb(x, y);
}

/* Restores property 4 after `n` was linked red below a possibly red parent. */
static inline void rb_insert_fixup(struct hrt_rb_node *n, struct hrt_rb_root *root, hrt_rb_rotate_fn cb)
{
	struct hrt_rb_node *p, *g, *u;

	while ((p = hrt__rb_parent(n)) && !hrt__rb_is_black(p)) {
		g = hrt__rb_parent(p);          /* exists: a red p is not the root (2) */
		if (p == g->hrt__left) {
			u = g->hrt__right;
			if (!hrt__rb_is_black(u)) {
				/* Red uncle: push g's black down one level, retry at g. */
				rb_set_black(p);
				rb_set_black(u);
				rb_set_red(g);
				n = g;
				continue;
			}
			if (n == p->hrt__right) {
				/* Inner grandchild: rotate it outward first. */
				rb_rotate_left(p, root, cb);
				n = p;
				p = hrt__rb_parent(n);
			}
			/*
			 *      G(b)            P(b)
			 *     /    \          /    \
			 *   P(r)   U(b) ->  N(r)   G(r)
			 *   /                        \
			 * N(r)                       U(b)
			 */
			rb_set_black(p);
			rb_set_red(g);
			rb_rotate_right(g, root, cb);
			break;
		}
		u = g->hrt__left;
		if (!hrt__rb_is_black(u)) {
			rb_set_black(p);
			rb_set_black(u);
			rb_set_red(g);
			n = g;
			continue;
		}
		if (n == p->hrt__left) {
			rb_rotate_right(p, root, cb);
			n = p;
			p = hrt__rb_parent(n);
		}
		rb_set_black(p);
		rb_set_red(g);
		rb_rotate_left(g, root, cb);
		break;
	}
	rb_set_black(root->node);                  /* (2) */
}

/*
 * Restores property 5 when the path through x (possibly NULL, child of
 * parent xp) is one black short.
 */
static inline void rb_erase_fixup(struct hrt_rb_node *x, struct hrt_rb_node *xp,
			       struct hrt_rb_root *root, hrt_rb_rotate_fn cb)
{
	struct hrt_rb_node *w;

	while (x != root->node && hrt__rb_is_black(x)) {
		if (x == xp->hrt__left) {
			w = xp->hrt__right;     /* non-NULL: its side has black height >= 1 */
			if (!hrt__rb_is_black(w)) {
				/* Red sibling: rotate so the sibling is black. */
				rb_set_black(w);
				rb_set_red(xp);
				rb_rotate_left(xp, root, cb);
				w = xp->hrt__right;
			}
			if (hrt__rb_is_black(w->hrt__left) && hrt__rb_is_black(w->hrt__right)) {
				/* Take one black from both sides; the deficit moves up. */
				rb_set_red(w);
				x = xp;
				xp = hrt__rb_parent(x);
				continue;
			}
			if (hrt__rb_is_black(w->hrt__right)) {
				/* Near nephew red: rotate it to the far side. */
				rb_set_black(w->hrt__left);
				rb_set_red(w);
				rb_rotate_right(w, root, cb);
				w = xp->hrt__right;
			}
			/* Far nephew red: one rotation gives x's side its black. */
			rb_set_colour(w, rb_colour(xp));
			rb_set_black(xp);
			rb_set_black(w->hrt__right);
			rb_rotate_left(xp, root, cb);
			x = root->node;
			break;
		}
		w = xp->hrt__left;
		if (!hrt__rb_is_black(w)) {
			rb_set_black(w);
			rb_set_red(xp);
			rb_rotate_right(xp, root, cb);
			w = xp->hrt__left;
		}
		if (hrt__rb_is_black(w->hrt__left) && hrt__rb_is_black(w->hrt__right)) {
			rb_set_red(w);
			x = xp;
			xp = hrt__rb_parent(x);
			continue;
		}
		if (hrt__rb_is_black(w->hrt__left)) {
			rb_set_black(w->hrt__right);
			rb_set_red(w);
			rb_rotate_left(w, root, cb);
			w = xp->hrt__left;
		}
		rb_set_colour(w, rb_colour(xp));
		rb_set_black(xp);
		rb_set_black(w->hrt__left);
		rb_rotate_right(xp, root, cb);
		x = root->node;
		break;
	}
	if (x)
		rb_set_black(x);
}

/*
 * Unlinks n, fixes the augmented values on the changed path, then the
 * colours.  With two children, n's in-order successor y takes n's place and
 * colour, so the node really removed from its position is y.
 */
static inline void rb_erase_core(struct hrt_rb_node *n, struct hrt_rb_root *root,
			      const struct hrt_rb_augment *aug)
{
	struct hrt_rb_node *p = hrt__rb_parent(n), *x, *xp, *y;
	unsigned removed;

	if (!n->hrt__left || !n->hrt__right) {
		x = n->hrt__left ? n->hrt__left : n->hrt__right;
		removed = rb_colour(n);
		rb_change_child(n, x, p, root);
		if (x) {
			/* A lone child is red below a black n (4, 5): paint it. */
			x->hrt__pc = (uintptr_t)p | (x->hrt__pc & HRT_RB_USER_BITS) | HRT_RB_BLACK;
			aug->propagate(p, NULL);
			return;
		}
		xp = p;
		aug->propagate(p, NULL);
	} else {
		y = n->hrt__right;
		if (!y->hrt__left) {
			/* The successor is n's right child. */
			xp = y;
			x = y->hrt__right;
			aug->copy(n, y);
		} else {
			while (y->hrt__left)
				y = y->hrt__left;
			xp = hrt__rb_parent(y);
			x = y->hrt__right;
			xp->hrt__left = x;
			if (x)
				rb_set_parent(x, xp);
			y->hrt__right = n->hrt__right;
			rb_set_parent(n->hrt__right, y);
			aug->copy(n, y);
			/* Below y only y itself went missing; stop at y. */
			aug->propagate(xp, y);
		}
		removed = rb_colour(y);
		y->hrt__left = n->hrt__left;
		rb_set_parent(n->hrt__left, y);
		/* n's parent and colour; y keeps its user bits. */
		y->hrt__pc = (n->hrt__pc & ~HRT_RB_USER_BITS) | (y->hrt__pc & HRT_RB_USER_BITS);
		rb_change_child(n, y, p, root);
		/* y's subtree is n's less n: recompute it and upward. */
		aug->propagate(y, NULL);
	}
	if (removed == HRT_RB_BLACK)
		rb_erase_fixup(x, xp, root, aug->rotate);
}

/* Rebalance after hrt__rb_link: the augmented insert, callbacks direct. */
static inline void hrt__rb_insert_inline(struct hrt_rb_node *node, struct hrt_rb_root *root,
					 const struct hrt_rb_augment *aug)
{
	rb_insert_fixup(node, root, aug->rotate);
}

/* The augmented erase, callbacks direct. */
static inline void hrt__rb_erase_inline(struct hrt_rb_node *node, struct hrt_rb_root *root,
					const struct hrt_rb_augment *aug)
{
	rb_erase_core(node, root, aug);
}

#endif /* HRT_RBTREE_AUGMENT_H */
