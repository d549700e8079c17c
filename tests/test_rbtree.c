/* SPDX-License-Identifier: MIT */
/*
 * test_rbtree.c - the generic tree against a sorted-array oracle, in both
 * instantiations (plain, and augmented with a subtree node count), with the
 * checker after every operation; and the checker itself against deliberately
 * corrupted trees, one per property it names.
 *     build/tests/test_rbtree [SEED]
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"

#include "rbtree.h"

struct item {
	struct hrt_rb_node rb;
	long key;
	size_t size;            /* augmented: nodes in this subtree */
	int in;
};

#define N 2000
static struct item items[N];
static unsigned long long seed = 1;

static struct item *it(const struct hrt_rb_node *n)
{
	return n ? hrt_container_of(n, struct item, rb) : NULL;
}

static size_t size_of(const struct hrt_rb_node *n) { return n ? it(n)->size : 0; }

static size_t compute(const struct item *x)
{
	return 1 + size_of(x->rb.hrt__left) + size_of(x->rb.hrt__right);
}

static void a_propagate(struct hrt_rb_node *n, struct hrt_rb_node *stop)
{
	while (n != stop) {
		size_t s = compute(it(n));

		if (it(n)->size == s)
			break;
		it(n)->size = s;
		n = hrt__rb_parent(n);
	}
}

static void a_copy(struct hrt_rb_node *o, struct hrt_rb_node *n) { it(n)->size = it(o)->size; }

static void a_rotate(struct hrt_rb_node *o, struct hrt_rb_node *n)
{
	it(n)->size = it(o)->size;
	it(o)->size = compute(it(o));
}

static const struct hrt_rb_augment aug = { a_propagate, a_copy, a_rotate };

static int order(const struct hrt_rb_node *a, const struct hrt_rb_node *b, void *ctx)
{
	(void)ctx;
	return it(a)->key > it(b)->key;
}

static int aug_ok(const struct hrt_rb_node *n, void *ctx)
{
	(void)ctx;
	return it(n)->size != compute(it(n));
}

static void insert(struct hrt_rb_root *root, struct item *x, int augmented)
{
	struct hrt_rb_node **link = &root->node, *parent = NULL;

	while (*link) {
		parent = *link;
		if (augmented)
			it(parent)->size++;
		link = x->key < it(parent)->key ? &parent->hrt__left : &parent->hrt__right;
	}
	x->size = 1;
	hrt__rb_link(&x->rb, parent, link, (uintptr_t)(x->key & 3) << 1);
	if (augmented)
		hrt__rb_insert_augmented(&x->rb, root, &aug);
	else
		hrt__rb_insert(&x->rb, root);
	x->in = 1;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* The oracle: the multiset of keys in the tree, sorted. */
static void compare(struct hrt_rb_root *root, int augmented, int step)
{
	static long want[N];
	size_t n = 0, count = 0;
	const struct hrt_rb_node *p;
	int err;

	for (int i = 0; i < N; i++)
		if (items[i].in)
			want[n++] = items[i].key;
	qsort(want, n, sizeof(want[0]), cmp_long);
	err = hrt__rb_check(root, order, augmented ? aug_ok : NULL, NULL, &count);
	if (err || count != n) {
		fprintf(stderr, "seed %llu step %d: %s (count %zu, want %zu)\n", seed, step,
			hrt__rb_strerror(err), count, n);
		fail();
	}
	p = hrt__rb_first(root);
	for (size_t i = 0; i < n; i++, p = hrt__rb_next(p)) {
		assert_int_equal(it(p)->key, want[i]);
		/* User bits survive rotations and erases. */
		assert_int_equal(p->hrt__pc & HRT_RB_USER_BITS, (uintptr_t)(it(p)->key & 3) << 1);
	}
	assert_null(p);
	p = hrt__rb_last(root);
	for (size_t i = n; i-- > 0; p = hrt__rb_prev(p))
		assert_int_equal(it(p)->key, want[i]);
	assert_null(p);
	if (augmented && root->node)
		assert_int_equal(it(root->node)->size, n);
}

static void random_ops(int augmented)
{
	struct hrt_rb_root root = { NULL };
	unsigned long long x = seed * 0x9e3779b97f4a7c15ull + (unsigned)augmented + 1;

	memset(items, 0, sizeof(items));
	for (int step = 0; step < 60000; step++) {
		int i;

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		i = (int)(x % N);
		if (items[i].in) {
			if (augmented)
				hrt__rb_erase_augmented(&items[i].rb, &root, &aug);
			else
				hrt__rb_erase(&items[i].rb, &root);
			items[i].in = 0;
		} else {
			items[i].key = (long)((x >> 20) % 500);   /* many duplicates */
			insert(&root, &items[i], augmented);
		}
		/* Full check while small, then every 97 steps (O(n) each). */
		if (step < 3000 || step % 97 == 0)
			compare(&root, augmented, step);
	}
	compare(&root, augmented, -1);
}

static void test_random_ops_keep_invariants_plain(void **s) { (void)s; random_ops(0); }
static void test_random_ops_keep_invariants_augmented(void **s) { (void)s; random_ops(1); }

/* Ascending and descending insertion: the classic degenerate orders. */
static void test_sequential(void **s)
{
	struct hrt_rb_root root = { NULL };

	(void)s;
	memset(items, 0, sizeof(items));
	for (int i = 0; i < N; i++) {
		items[i].key = i < N / 2 ? i : 3 * N - i;
		insert(&root, &items[i], 1);
	}
	compare(&root, 1, 0);
	for (int i = 0; i < N; i += 2) {
		hrt__rb_erase_augmented(&items[i].rb, &root, &aug);
		items[i].in = 0;
	}
	compare(&root, 1, 1);
	for (int i = 1; i < N; i += 2) {
		hrt__rb_erase_augmented(&items[i].rb, &root, &aug);
		items[i].in = 0;
	}
	assert_null(root.node);
}

static struct hrt_rb_root build_small(int n)
{
	struct hrt_rb_root root = { NULL };

	memset(items, 0, sizeof(items));
	for (int i = 0; i < n; i++) {
		items[i].key = i * 10;
		insert(&root, &items[i], 1);
	}
	assert_int_equal(hrt__rb_check(&root, order, aug_ok, NULL, NULL), HRT_RB_OK);
	return root;
}

static int check(struct hrt_rb_root *root)
{
	return hrt__rb_check(root, order, aug_ok, NULL, NULL);
}

/* Each corruption is caught and named. */
static void test_checker_names_each_corruption(void **s)
{
	struct hrt_rb_root root;
	struct hrt_rb_node *n;

	(void)s;
	root = build_small(31);
	root.node->hrt__pc &= ~(uintptr_t)1;                    /* root red */
	assert_int_equal(check(&root), HRT_RB_EROOT_RED);

	root = build_small(31);
	n = root.node->hrt__left;
	n->hrt__pc = (uintptr_t)root.node->hrt__right | (n->hrt__pc & 1);
	assert_int_equal(check(&root), HRT_RB_EPARENT);

	root = build_small(31);
	it(hrt__rb_first(&root))->key = 1000000;                /* order */
	assert_int_equal(check(&root), HRT_RB_EORDER);

	root = build_small(31);
	it(root.node->hrt__right)->size++;                      /* augment */
	assert_int_equal(check(&root), HRT_RB_EAUGMENT);

	root = build_small(31);
	/* Paint a black node red under a red parent or make heights unequal. */
	n = hrt__rb_first(&root);
	if (hrt__rb_is_black(n)) {
		n->hrt__pc &= ~(uintptr_t)1;
		assert_true(check(&root) == HRT_RB_EBLACK_HEIGHT ||
			    check(&root) == HRT_RB_ERED_RED);
	} else {
		n->hrt__pc |= 1;
		assert_int_equal(check(&root), HRT_RB_EBLACK_HEIGHT);
	}

	root = build_small(31);
	n = hrt__rb_last(&root);
	n->hrt__right = hrt__rb_first(&root);                   /* a cycle-ish link */
	assert_true(check(&root) < 0);

	for (int e = HRT_RB_EDEPTH; e <= 0; e++)
		assert_non_null(hrt__rb_strerror(e));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_ops_keep_invariants_plain),
		cmocka_unit_test(test_random_ops_keep_invariants_augmented),
		cmocka_unit_test(test_sequential),
		cmocka_unit_test(test_checker_names_each_corruption),
	};

	if (argc > 1)
		seed = strtoull(argv[1], NULL, 0);
	printf("test_rbtree seed %llu\n", seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
