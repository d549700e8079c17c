/* SPDX-License-Identifier: MIT */
/*
 * rbtree.h - intrusive red-black tree with optional augmentation (internal).
 *
 * The tree knows nothing of what it stores.  Callers walk down themselves
 * (so their comparison is inlined), link the new node with hrt__rb_link()
 * and call hrt__rb_insert*() to rebalance.  An augmented tree keeps a
 * per-subtree summary right through three callbacks:
 *   propagate(n, stop)  recompute n and its ancestors up to (not incl.) stop,
 *                       stopping early once a value does not change;
 *   copy(old, new)      new takes old's place: new's summary = old's;
 *   rotate(old, new)    new rotated above old: new = old's, recompute old.
 * No locking: callers serialise.
 */
#ifndef HRT_RBTREE_H
#define HRT_RBTREE_H

#include <stddef.h>
#include <stdint.h>

#ifndef HRT_RB_NODE_DEFINED
#define HRT_RB_NODE_DEFINED
/* The same layout as in hrt.h, which must embed it in struct hrt_timer. */
struct hrt_rb_node {
	uintptr_t hrt__pc;              /* parent | user bits 1-2 | colour (bit 0) */
	struct hrt_rb_node *hrt__left;
	struct hrt_rb_node *hrt__right;
};
#endif

struct hrt_rb_root {
	struct hrt_rb_node *node;
};

struct hrt_rb_augment {
	void (*propagate)(struct hrt_rb_node *node, struct hrt_rb_node *stop);
	void (*copy)(struct hrt_rb_node *old, struct hrt_rb_node *new_);
	void (*rotate)(struct hrt_rb_node *old, struct hrt_rb_node *new_);
};

#define HRT_RB_RED   0u
#define HRT_RB_BLACK 1u
/* Bits 1 and 2 of hrt__pc belong to the user (nodes are 8-byte aligned):
 * the tree preserves them through every operation and never reads them. */
#define HRT_RB_USER_BITS ((uintptr_t)6)
#define HRT_RB_LOW_BITS  ((uintptr_t)7)

#ifndef hrt_container_of
#define hrt_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#endif

static inline struct hrt_rb_node *hrt__rb_parent(const struct hrt_rb_node *n)
{
	return (struct hrt_rb_node *)(n->hrt__pc & ~HRT_RB_LOW_BITS);
}

static inline int hrt__rb_is_black(const struct hrt_rb_node *n)
{
	return !n || (n->hrt__pc & 1);          /* NULL leaves are black */
}

/* Hook a fresh red node in below parent at *link (from the caller's walk);
 * `user` gives its user bits. */
static inline void hrt__rb_link(struct hrt_rb_node *node, struct hrt_rb_node *parent,
				struct hrt_rb_node **link, uintptr_t user)
{
	node->hrt__pc = (uintptr_t)parent | (user & HRT_RB_USER_BITS) | HRT_RB_RED;
	node->hrt__left = node->hrt__right = NULL;
	*link = node;
}

void hrt__rb_insert(struct hrt_rb_node *node, struct hrt_rb_root *root);
void hrt__rb_insert_augmented(struct hrt_rb_node *node, struct hrt_rb_root *root,
			      const struct hrt_rb_augment *aug);
void hrt__rb_erase(struct hrt_rb_node *node, struct hrt_rb_root *root);
void hrt__rb_erase_augmented(struct hrt_rb_node *node, struct hrt_rb_root *root,
			     const struct hrt_rb_augment *aug);

struct hrt_rb_node *hrt__rb_first(const struct hrt_rb_root *root);
struct hrt_rb_node *hrt__rb_last(const struct hrt_rb_root *root);
struct hrt_rb_node *hrt__rb_next(const struct hrt_rb_node *node);
struct hrt_rb_node *hrt__rb_prev(const struct hrt_rb_node *node);

/* Checker errors (negative); hrt__rb_strerror() names them. */
enum {
	HRT_RB_OK = 0,
	HRT_RB_EROOT_PARENT = -1,   /* root has a parent */
	HRT_RB_EROOT_RED = -2,      /* root is red (property 2) */
	HRT_RB_EPARENT = -3,        /* child's parent link is wrong */
	HRT_RB_ERED_RED = -4,       /* red node with red child (property 4) */
	HRT_RB_EBLACK_HEIGHT = -5,  /* unequal black height (property 5) */
	HRT_RB_EORDER = -6,         /* in-order keys out of order */
	HRT_RB_EAUGMENT = -7,       /* augmented value wrong */
	HRT_RB_ECOUNT = -8,         /* node count differs from expected */
	HRT_RB_ENEXT = -9,          /* next()/prev() disagree with in-order */
	HRT_RB_EDEPTH = -10,        /* deeper than any valid tree could be */
};

/*
 * O(n) check of every property.  order(a, b, ctx) returns non-zero if a must
 * not come before b; augment(n, ctx) returns non-zero if n's summary is not the
 * one recomputed from its children (either callback may be NULL).  If count
 * is non-NULL it receives the number of nodes.
 */
int hrt__rb_check(const struct hrt_rb_root *root,
		  int (*order)(const struct hrt_rb_node *a, const struct hrt_rb_node *b, void *ctx),
		  int (*augment)(const struct hrt_rb_node *n, void *ctx),
		  void *ctx, size_t *count);
const char *hrt__rb_strerror(int err);

#endif /* HRT_RBTREE_H */
