/* SPDX-License-Identifier: MIT */
/*
 * rbtree.c - red-black tree rebalancing, plain and augmented, and a checker.
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
 * Each fix-up is written once as a static inline core taking the augment
 * callbacks, and instantiated twice: with no-op callbacks the compiler
 * removes, and with the caller's.
 */
#include "rbtree.h"

static inline void set_parent(struct hrt_rb_node *n, struct hrt_rb_node *p)
{
	n->hrt__pc = (uintptr_t)p | (n->hrt__pc & HRT_RB_LOW_BITS);
}

static inline void set_black(struct hrt_rb_node *n) { n->hrt__pc |= 1; }
static inline void set_red(struct hrt_rb_node *n) { n->hrt__pc &= ~(uintptr_t)1; }
static inline unsigned colour(const struct hrt_rb_node *n) { return n->hrt__pc & 1; }

static inline void set_colour(struct hrt_rb_node *n, unsigned c)
{
	n->hrt__pc = (n->hrt__pc & ~(uintptr_t)1) | c;
}

/* Make `new_` the child of `parent` that `old` was (or the root). */
static inline void change_child(struct hrt_rb_node *old, struct hrt_rb_node *new_,
				struct hrt_rb_node *parent, struct hrt_rb_root *root)
{
	if (!parent)
		root->node = new_;
	else if (parent->hrt__left == old)
		parent->hrt__left = new_;
	else
		parent->hrt__right = new_;
}

typedef void (*rotate_fn)(struct hrt_rb_node *old, struct hrt_rb_node *new_);

/*
 *     x                y
 *    / \              / \
 *   a   y     ->     x   c
 *      / \          / \
 *     b   c        a   b
 * Colours are left alone; the callers set them.
 */
static inline void rotate_left(struct hrt_rb_node *x, struct hrt_rb_root *root, rotate_fn cb)
{
	struct hrt_rb_node *y = x->hrt__right, *p = hrt__rb_parent(x);

	x->hrt__right = y->hrt__left;
	if (y->hrt__left)
		set_parent(y->hrt__left, x);
	y->hrt__left = x;
	set_parent(y, p);
	set_parent(x, y);
	change_child(x, y, p, root);
	cb(x, y);
}

/* The mirror image of rotate_left. */
static inline void rotate_right(struct hrt_rb_node *x, struct hrt_rb_root *root, rotate_fn cb)
{
	struct hrt_rb_node *y = x->hrt__left, *p = hrt__rb_parent(x);

	x->hrt__left = y->hrt__right;
	if (y->hrt__right)
		set_parent(y->hrt__right, x);
	y->hrt__right = x;
	set_parent(y, p);
	set_parent(x, y);
	change_child(x, y, p, root);
	cb(x, y);
}

static void dummy_rotate(struct hrt_rb_node *o, struct hrt_rb_node *n) { (void)o; (void)n; }
static void dummy_copy(struct hrt_rb_node *o, struct hrt_rb_node *n) { (void)o; (void)n; }
static void dummy_propagate(struct hrt_rb_node *n, struct hrt_rb_node *s) { (void)n; (void)s; }

/* Restores property 4 after `n` was linked red below a possibly red parent. */
static inline void insert_fixup(struct hrt_rb_node *n, struct hrt_rb_root *root, rotate_fn cb)
{
	struct hrt_rb_node *p, *g, *u;

	while ((p = hrt__rb_parent(n)) && !hrt__rb_is_black(p)) {
		g = hrt__rb_parent(p);          /* exists: a red p is not the root (2) */
		if (p == g->hrt__left) {
			u = g->hrt__right;
			if (!hrt__rb_is_black(u)) {
				/* Red uncle: push g's black down one level, retry at g. */
				set_black(p);
				set_black(u);
				set_red(g);
				n = g;
				continue;
			}
			if (n == p->hrt__right) {
				/* Inner grandchild: rotate it outward first. */
				rotate_left(p, root, cb);
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
			set_black(p);
			set_red(g);
			rotate_right(g, root, cb);
			break;
		}
		u = g->hrt__left;
		if (!hrt__rb_is_black(u)) {
			set_black(p);
			set_black(u);
			set_red(g);
			n = g;
			continue;
		}
		if (n == p->hrt__left) {
			rotate_right(p, root, cb);
			n = p;
			p = hrt__rb_parent(n);
		}
		set_black(p);
		set_red(g);
		rotate_left(g, root, cb);
		break;
	}
	set_black(root->node);                  /* (2) */
}

/*
 * Restores property 5 when the path through x (possibly NULL, child of
 * parent xp) is one black short.
 */
static inline void erase_fixup(struct hrt_rb_node *x, struct hrt_rb_node *xp,
			       struct hrt_rb_root *root, rotate_fn cb)
{
	struct hrt_rb_node *w;

	while (x != root->node && hrt__rb_is_black(x)) {
		if (x == xp->hrt__left) {
			w = xp->hrt__right;     /* non-NULL: its side has black height >= 1 */
			if (!hrt__rb_is_black(w)) {
				/* Red sibling: rotate so the sibling is black. */
				set_black(w);
				set_red(xp);
				rotate_left(xp, root, cb);
				w = xp->hrt__right;
			}
			if (hrt__rb_is_black(w->hrt__left) && hrt__rb_is_black(w->hrt__right)) {
				/* Take one black from both sides; the deficit moves up. */
				set_red(w);
				x = xp;
				xp = hrt__rb_parent(x);
				continue;
			}
			if (hrt__rb_is_black(w->hrt__right)) {
				/* Near nephew red: rotate it to the far side. */
				set_black(w->hrt__left);
				set_red(w);
				rotate_right(w, root, cb);
				w = xp->hrt__right;
			}
			/* Far nephew red: one rotation gives x's side its black. */
			set_colour(w, colour(xp));
			set_black(xp);
			set_black(w->hrt__right);
			rotate_left(xp, root, cb);
			x = root->node;
			break;
		}
		w = xp->hrt__left;
		if (!hrt__rb_is_black(w)) {
			set_black(w);
			set_red(xp);
			rotate_right(xp, root, cb);
			w = xp->hrt__left;
		}
		if (hrt__rb_is_black(w->hrt__left) && hrt__rb_is_black(w->hrt__right)) {
			set_red(w);
			x = xp;
			xp = hrt__rb_parent(x);
			continue;
		}
		if (hrt__rb_is_black(w->hrt__left)) {
			set_black(w->hrt__right);
			set_red(w);
			rotate_left(w, root, cb);
			w = xp->hrt__left;
		}
		set_colour(w, colour(xp));
		set_black(xp);
		set_black(w->hrt__left);
		rotate_right(xp, root, cb);
		x = root->node;
		break;
	}
	if (x)
		set_black(x);
}

/*
 * Unlinks n, fixes the augmented values on the changed path, then the
 * colours.  With two children, n's in-order successor y takes n's place and
 * colour, so the node really removed from its position is y.
 */
static inline void erase_core(struct hrt_rb_node *n, struct hrt_rb_root *root,
			      const struct hrt_rb_augment *aug)
{
	struct hrt_rb_node *p = hrt__rb_parent(n), *x, *xp, *y;
	unsigned removed;

	if (!n->hrt__left || !n->hrt__right) {
		x = n->hrt__left ? n->hrt__left : n->hrt__right;
		removed = colour(n);
		change_child(n, x, p, root);
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
				set_parent(x, xp);
			y->hrt__right = n->hrt__right;
			set_parent(n->hrt__right, y);
			aug->copy(n, y);
			/* Below y only y itself went missing; stop at y. */
			aug->propagate(xp, y);
		}
		removed = colour(y);
		y->hrt__left = n->hrt__left;
		set_parent(n->hrt__left, y);
		/* n's parent and colour; y keeps its user bits. */
		y->hrt__pc = (n->hrt__pc & ~HRT_RB_USER_BITS) | (y->hrt__pc & HRT_RB_USER_BITS);
		change_child(n, y, p, root);
		/* y's subtree is n's less n: recompute it and upward. */
		aug->propagate(y, NULL);
	}
	if (removed == HRT_RB_BLACK)
		erase_fixup(x, xp, root, aug->rotate);
}

static const struct hrt_rb_augment no_augment = {
	dummy_propagate, dummy_copy, dummy_rotate,
};

void hrt__rb_insert(struct hrt_rb_node *node, struct hrt_rb_root *root)
{
	insert_fixup(node, root, dummy_rotate);
}

void hrt__rb_insert_augmented(struct hrt_rb_node *node, struct hrt_rb_root *root,
			      const struct hrt_rb_augment *aug)
{
	insert_fixup(node, root, aug->rotate);
}

void hrt__rb_erase(struct hrt_rb_node *node, struct hrt_rb_root *root)
{
	erase_core(node, root, &no_augment);
}

void hrt__rb_erase_augmented(struct hrt_rb_node *node, struct hrt_rb_root *root,
			     const struct hrt_rb_augment *aug)
{
	erase_core(node, root, aug);
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
