/* SPDX-License-Identifier: MIT */
/*
 * test_queue.c - the timer queue (queue.h) on its own, against a linear-scan
 * oracle: random adds (plain and excluded), deletes and un-excludes, with
 * first(), the due search at random instants and at the two edges
 * (HRT_QUEUE_NOW_MAX, which never finds a "never" timer, and one past it,
 * which finds the first timer not excluded), the count and the structural
 * check after every step; and the check against a corrupted augmentation.
 *     build/tests/test_queue [SEED [STEPS]]
 * A failure prints the seed and the step; both replay from the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"

#include "queue.h"

#define N 600

struct model {
	int in;                 /* queued */
	int excluded;
	uint64_t seq;           /* when queued: FIFO among equal hard expiries */
};

static struct hrt_timer timers[N];
static struct model m[N];
static struct hrt_queue q;
static uint64_t seq;

/* Few distinct instants, so equal keys (FIFO) are common; a few "never". */
static hrt_time_t rnd_time(void)
{
	switch (unit_rng() % 16) {
	case 0:
		return HRT_TIME_MAX;
	case 1:
		return HRT_TIME_MAX - 1;
	case 2:
		return HRT_QUEUE_NOW_MAX;
	default:
		return (hrt_time_t)(unit_rng() % 200) - 20;
	}
}

/* a before b in queue order: hard, soft, when queued (the tie rule) */
static int before(int a, int b)
{
	if (timers[a].hrt__hard != timers[b].hrt__hard)
		return timers[a].hrt__hard < timers[b].hrt__hard;
	if (timers[a].hrt__soft != timers[b].hrt__soft)
		return timers[a].hrt__soft < timers[b].hrt__soft;
	return m[a].seq < m[b].seq;
}

/* The oracle's due search: first in queue order, not excluded, soft <= now
 * (a soft expiry >= MAX - 1 counts as MAX - 1). */
static struct hrt_timer *model_due(hrt_time_t now)
{
	int best = -1;

	for (int i = 0; i < N; i++) {
		hrt_time_t s = timers[i].hrt__soft < HRT_TIME_MAX - 1 ? timers[i].hrt__soft
								       : HRT_TIME_MAX - 1;

		if (m[i].in && !m[i].excluded && s <= now && (best < 0 || before(i, best)))
			best = i;
	}
	return best < 0 ? NULL : &timers[best];
}

static struct hrt_timer *model_first(void)
{
	int best = -1;

	for (int i = 0; i < N; i++)
		if (m[i].in && (best < 0 || before(i, best)))
			best = i;
	return best < 0 ? NULL : &timers[best];
}

static size_t model_count(void)
{
	size_t n = 0;

	for (int i = 0; i < N; i++)
		n += m[i].in;
	return n;
}

static void add(int i, int excluded)
{
	hrt_time_t a = rnd_time(), b = rnd_time();

	timers[i].hrt__soft = a < b ? a : b;
	timers[i].hrt__hard = a < b ? b : a;
	hrt__queue_add(&q, &timers[i], excluded);
	m[i].in = 1;
	m[i].excluded = excluded;
	m[i].seq = ++seq;
}

static void test_queue_matches_linear_scan(void **state)
{
	uint64_t visited = 0;

	(void)state;
	unit_rng_state = unit_seed;
	hrt__queue_init(&q);
	memset(m, 0, sizeof(m));
	for (unit_step = 0; unit_step < unit_steps; unit_step++) {
		int i = (int)(unit_rng() % N);
		hrt_time_t now;

		switch (unit_rng() % 8) {
		case 0: case 1: case 2:
			if (!m[i].in)
				add(i, unit_rng() % 4 == 0);
			break;
		case 3: case 4:
			if (m[i].in) {
				hrt__queue_del(&q, &timers[i]);
				m[i].in = 0;
			}
			break;
		case 5:
			if (m[i].in && m[i].excluded) {
				hrt__queue_unexclude(&timers[i]);
				m[i].excluded = 0;
			}
			break;
		default:
			break;
		}
		if (m[i].in)
			assert_int_equal(hrt__queue_is_excluded(&timers[i]), m[i].excluded);
		assert_ptr_equal(hrt__queue_first(&q), model_first());
		now = rnd_time();       /* searches go up to NOW_MAX + 1 (queue.h) */
		if (now > HRT_QUEUE_NOW_MAX + 1)
			now = HRT_QUEUE_NOW_MAX + 1;
		assert_ptr_equal(hrt__queue_next_due(&q, now, &visited), model_due(now));
		assert_ptr_equal(hrt__queue_next_due(&q, HRT_QUEUE_NOW_MAX, &visited),
				 model_due(HRT_QUEUE_NOW_MAX));
		assert_ptr_equal(hrt__queue_next_due(&q, HRT_QUEUE_NOW_MAX + 1, &visited),
				 model_due(HRT_QUEUE_NOW_MAX + 1));
		assert_int_equal(q.count, model_count());
		if (unit_step % 16 == 0 || unit_steps - unit_step < 2)
			assert_int_equal(hrt__queue_check(&q), 0);
	}
	assert_true(visited > 0);
	printf("%ld steps, %zu queued at the end, %llu nodes visited\n", unit_steps, q.count,
	       (unsigned long long)visited);
}

/* Every timer due at once: the search returns them in queue order, each
 * found in O(log n) nodes. */
static void test_queue_due_in_fifo_order(void **state)
{
	uint64_t visited = 0;
	int i;

	(void)state;
	hrt__queue_init(&q);
	memset(m, 0, sizeof(m));
	for (i = 0; i < N; i++) {
		timers[i].hrt__soft = 0;
		timers[i].hrt__hard = i % 7;        /* ties: FIFO */
		hrt__queue_add(&q, &timers[i], 0);
	}
	for (int h = 0; h < 7; h++) {
		for (i = h; i < N; i += 7) {
			struct hrt_timer *t = hrt__queue_next_due(&q, 0, &visited);

			assert_ptr_equal(t, &timers[i]);
			hrt__queue_del(&q, t);
		}
	}
	assert_null(hrt__queue_first(&q));
	assert_true(visited < (uint64_t)N * 40);
	assert_int_equal(hrt__queue_check(&q), 0);
}

static void test_queue_check_catches_bad_augmentation(void **state)
{
	(void)state;
	hrt__queue_init(&q);
	for (int i = 0; i < 31; i++) {
		timers[i].hrt__soft = i;
		timers[i].hrt__hard = i + 5;
		hrt__queue_add(&q, &timers[i], 0);
	}
	assert_int_equal(hrt__queue_check(&q), 0);
	hrt__queue_timer(q.root.node)->hrt__subtree_soft++;
	assert_int_equal(hrt__queue_check(&q), HRT_RB_EAUGMENT);
	hrt__queue_timer(q.root.node)->hrt__subtree_soft--;
	q.count++;
	assert_true(hrt__queue_check(&q) < 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_matches_linear_scan),
		cmocka_unit_test(test_queue_due_in_fifo_order),
		cmocka_unit_test(test_queue_check_catches_bad_augmentation),
	};

	return cmocka_run_seeded_tests(tests, argc, argv, 100000);
}
