/* SPDX-License-Identifier: MIT */
/*
 * test_base.c - timer semantics through the public API: the article's
 * example, argument errors, saturation, forward, pass rules, callbacks that
 * start/cancel/free timers, moves between bases, the O(log n) bound of
 * the greedy search, the cost of the restart path and where the wheel
 * places timers.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"
#include "timerset.h"   /* HRT_TSET_RAN_MAX */
#include "wheel.h"

#define US 1000
#define SEC 1000000000LL

_Static_assert(sizeof(struct hrt_timer) <= 64, "a timer is one cache line");

struct named {
	struct hrt_timer t;
	char name;
};

static char ran[64];
static int nran;

static enum hrt_restart record(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	ran[nran++] = ((struct named *)t)->name;
	ran[nran] = 0;
	return HRT_NORESTART;
}

/* The article: A..G with hard expiries 10..70 us; A soft 5, B and D 7.5. */
static const hrt_time_t art_soft[7] = { 5 * US, 7500, 25 * US, 7500, 45 * US, 55 * US, 65 * US };

static struct hrt_base *article(struct named *tm)
{
	struct hrt_base *b = tv_virtual(0);

	assert_non_null(b);
	for (int i = 0; i < 7; i++) {
		hrt_time_t hard = (i + 1) * 10 * US;

		hrt_timer_init(&tm[i].t, record);
		tm[i].name = (char)('A' + i);
		assert_int_equal(hrt_timer_start_range(&tm[i].t, b, art_soft[i], hard - art_soft[i],
						       HRT_MODE_ABS), 0);
		assert_int_equal(tv_hard(&tm[i].t), hard);
	}
	assert_int_equal(hrt_base_check(b, NULL, 0), 0);
	assert_int_equal(tv_next(b), 10 * US);
	nran = 0;
	ran[0] = 0;
	return b;
}

static void article_pass(enum hrt_greedy policy, int idle, const char *want)
{
	struct named tm[7];
	struct hrt_base *b = article(tm);

	assert_int_equal(hrt_base_set_greedy(b, policy), 0);
	assert_int_equal(hrt_base_get_greedy(b), policy);
	assert_int_equal(hrt_base_run(b, 10 * US, idle), strlen(want));
	assert_string_equal(ran, want);
	assert_int_equal(hrt_base_check(b, NULL, 0), 0);
	assert_int_equal(tv_next(b), 30 * US);   /* C */
	for (int i = 0; i < 7; i++)             /* free refuses queued timers */
		hrt_timer_cancel(&tm[i].t);
	assert_int_equal(hrt_base_free(b), 0);
}

static void test_article(void **s)
{
	(void)s;
	article_pass(HRT_GREEDY_OFF, 0, "AB");
	article_pass(HRT_GREEDY_OFF, 1, "AB");
	article_pass(HRT_GREEDY_ALWAYS, 0, "ABD");
	article_pass(HRT_GREEDY_ALWAYS, 1, "ABD");
	article_pass(HRT_GREEDY_IDLE, 0, "AB");
	article_pass(HRT_GREEDY_IDLE, 1, "ABD");
}

/* The greedy walk saves the wake-up at 40 us once C is cancelled. */
static int wakeups_after_cancel_c(enum hrt_greedy policy)
{
	struct named tm[7];
	struct hrt_base *b = article(tm);
	int w = 0;
	hrt_time_t t;

	hrt_base_set_greedy(b, policy);
	hrt_base_run(b, 10 * US, 1);
	w++;
	assert_int_equal(hrt_timer_cancel(&tm[2].t), 1);
	assert_int_equal(hrt_timer_cancel(&tm[2].t), 0);
	while ((t = tv_next(b)) != HRT_TIME_MAX) {
		hrt_base_run(b, t, 1);
		w++;
	}
	assert_int_equal(nran, 6);
	assert_int_equal(hrt_base_free(b), 0);
	return w;
}

static void test_article_wakeups(void **s)
{
	(void)s;
	/* off: 10 (A,B), 40 (D), 50 (E), 60 (F), 70 (G); greedy: D ran at 10. */
	assert_int_equal(wakeups_after_cancel_c(HRT_GREEDY_OFF), 5);
	assert_int_equal(wakeups_after_cancel_c(HRT_GREEDY_ALWAYS), 4);
}

static void test_bad_arguments(void **s)
{
	struct hrt_base *b, *rb, *keep = (struct hrt_base *)&keep;
	struct hrt_timer t, none;
	struct hrt_stats st;
	hrt_time_t v = 7;

	(void)s;
	/* A failed constructor leaves *basep alone and sets no errno. */
	errno = 0;
	assert_int_equal(hrt_base_new(&keep, (clockid_t)12345, 0), -EINVAL);
	assert_int_equal(hrt_base_new(&keep, CLOCK_PROCESS_CPUTIME_ID, 0), -EINVAL);
	assert_int_equal(hrt_base_new(&keep, CLOCK_MONOTONIC, 64u), -EINVAL);   /* flag */
	assert_int_equal(hrt_base_new(NULL, CLOCK_MONOTONIC, 0), -EINVAL);
	assert_ptr_equal(keep, (struct hrt_base *)&keep);
	assert_int_equal(errno, 0);
	b = tv_virtual(0);
	assert_non_null(b);
	assert_int_equal(hrt_base_set_greedy(b, (enum hrt_greedy)3), -EINVAL);
	assert_int_equal(hrt_base_set_greedy(b, (enum hrt_greedy)-1), -EINVAL);
	assert_int_equal(hrt_base_set_greedy(NULL, HRT_GREEDY_OFF), -EINVAL);
	assert_int_equal(hrt_base_set_time(b, 100), 0);
	assert_int_equal(hrt_base_set_time(b, 99), -EINVAL);     /* backwards */
	assert_int_equal(tv_now(b), 100);
	rb = tv_new(CLOCK_MONOTONIC, 0);
	assert_non_null(rb);
	assert_int_equal(hrt_base_set_time(rb, 1), -EOPNOTSUPP); /* real clock */
	assert_int_equal(hrt_base_fd(b), -EOPNOTSUPP);           /* virtual: no fd */

	hrt_timer_init(&t, record);
	memset(&none, 0, sizeof(none));         /* fresh memory: no callback */
	assert_int_equal(hrt_timer_init(&none, NULL), -EINVAL);
	assert_int_equal(hrt_timer_init(NULL, record), -EINVAL);
	assert_int_equal(hrt_timer_start_range(NULL, b, 0, 0, HRT_MODE_ABS), -EINVAL);
	assert_int_equal(hrt_timer_start_range(&t, NULL, 0, 0, HRT_MODE_ABS), -EINVAL);
	assert_int_equal(hrt_timer_start_range(&t, b, 0, -1, HRT_MODE_ABS), -EINVAL);
	assert_int_equal(hrt_timer_start_range(&t, b, 0, 0, (enum hrt_mode)2), -EINVAL);
	assert_int_equal(hrt_timer_start(&none, b, 0, HRT_MODE_ABS), -EINVAL);
	assert_false(hrt_timer_is_queued(&t));                   /* nothing happened */
	assert_int_equal(hrt_base_count(b), 0);
	assert_int_equal(hrt_timer_cancel(NULL), -EINVAL);
	assert_int_equal(hrt_timer_try_cancel(NULL), -EINVAL);
	assert_int_equal(hrt_timer_cancel(&t), 0);               /* never started */
	assert_int_equal(hrt_timer_forward(NULL, 0, 1), -EINVAL);
	assert_int_equal(hrt_timer_forward(&t, 0, 0), -EINVAL);
	assert_int_equal(hrt_base_run(NULL, 0, 0), -EINVAL);
	assert_int_equal(hrt_base_next_event(NULL, &v), -EINVAL);
	assert_int_equal(hrt_base_next_event(b, NULL), -EINVAL);
	assert_int_equal(v, 7);                 /* untouched */
	assert_int_equal(hrt_timer_get_base(&t, &rb), -ENOENT);  /* never started */
	assert_int_equal(hrt_timer_get_soft(&t, &v), 0);         /* 0 after init */
	assert_int_equal(v, 0);
	assert_int_equal(hrt_base_count(NULL), -EINVAL);
	assert_int_equal(hrt_base_walk_tree(NULL, NULL, NULL), -EINVAL);
	memset(&st, 0x5a, sizeof(st));
	assert_int_equal(hrt_base_get_stats(NULL, &st, sizeof(st)), -EINVAL);
	assert_int_equal(hrt_base_get_stats(b, &st, 0), -EINVAL);
	assert_int_equal(hrt_base_get_stats(b, &st, 12), -EINVAL);
	assert_int_equal(st.passes, 0x5a5a5a5a5a5a5a5aull);     /* untouched */
	assert_int_equal(hrt_base_free(NULL), -EINVAL);
	assert_int_equal(hrt_base_free(rb), 0);
	assert_int_equal(hrt_base_free(b), 0);
}

static void test_greedy_env(void **s)
{
	static const struct { const char *v; enum hrt_greedy want; } cases[] = {
		{ "off", HRT_GREEDY_OFF }, { "idle", HRT_GREEDY_IDLE },
		{ "always", HRT_GREEDY_ALWAYS }, { "bogus", HRT_GREEDY_IDLE }, { NULL, HRT_GREEDY_IDLE },
	};

	(void)s;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hrt_base *b;

		if (cases[i].v)
			setenv("HRT_GREEDY", cases[i].v, 1);
		else
			unsetenv("HRT_GREEDY");
		b = tv_virtual(HRT_BASE_ENV);
		assert_int_equal(hrt_base_get_greedy(b), cases[i].want);
		assert_int_equal(hrt_base_free(b), 0);
		b = tv_virtual(0);      /* without the flag the default holds */
		assert_int_equal(hrt_base_get_greedy(b), HRT_GREEDY_IDLE);
		assert_int_equal(hrt_base_free(b), 0);
	}
	unsetenv("HRT_GREEDY");
}

static void test_saturation_and_forward(void **s)
{
	struct hrt_base *b = tv_virtual(0);
	struct named x = { .name = 'x' };
	int64_t n;

	(void)s;
	hrt_timer_init(&x.t, record);
	hrt_base_set_time(b, 1000);
	assert_int_equal(hrt_timer_start_range(&x.t, b, HRT_TIME_MAX - 10, 100, HRT_MODE_REL), 0);
	assert_int_equal(tv_soft(&x.t), HRT_TIME_MAX);
	assert_int_equal(tv_hard(&x.t), HRT_TIME_MAX);
	/* A runnable timer's hard saturates at the pass cap, not at "never":
	 * else nothing would arm a wake-up for it. */
	assert_int_equal(hrt_timer_start_range(&x.t, b, 5, HRT_TIME_MAX, HRT_MODE_ABS), 0);
	assert_int_equal(tv_hard(&x.t), HRT_TIME_MAX - 2);
	assert_int_equal(hrt_timer_forward(&x.t, 10, 1), -EBUSY);       /* queued: refused */
	hrt_timer_cancel(&x.t);

	hrt_timer_start_range(&x.t, b, 0, 10, HRT_MODE_ABS);
	hrt_timer_cancel(&x.t);
	assert_int_equal(hrt_timer_forward(&x.t, -1, 5), 0);     /* soft 0 > -1 */
	assert_int_equal(hrt_timer_forward(&x.t, 10, 0), -EINVAL); /* interval <= 0 */
	/* Past its window's start (soft 0 <= 0), inside it (hard 10 > 0): one
	 * interval on, so soft > now; the kernel's rule (until hard > now)
	 * would leave it due. */
	assert_int_equal(hrt_timer_forward(&x.t, 0, 5), 1);
	assert_int_equal(tv_soft(&x.t), 5);
	assert_int_equal(tv_hard(&x.t), 15);
	assert_int_equal(hrt_timer_forward(&x.t, 5, 5), 1);      /* soft == now */
	assert_int_equal(tv_soft(&x.t), 10);
	assert_int_equal(tv_hard(&x.t), 20);
	hrt_timer_start_range(&x.t, b, 5, 10, HRT_MODE_ABS);     /* 5..15 again */
	hrt_timer_cancel(&x.t);
	/* O(1): 10^18 intervals would take centuries as a loop. */
	n = hrt_timer_forward(&x.t, 1000000000000000015LL, 1);
	assert_int_equal(n, 1000000000000000011ULL);
	assert_int_equal(tv_soft(&x.t), 1000000000000000016LL);
	assert_int_equal(tv_hard(&x.t), 1000000000000000026LL);
	/* Saturates instead of wrapping. */
	n = hrt_timer_forward(&x.t, HRT_TIME_MAX - 1, HRT_TIME_MAX / 3);
	assert_true(n >= 1);
	assert_true(tv_hard(&x.t) > HRT_TIME_MAX - 1);
	assert_int_equal(hrt_base_free(b), 0);
}

/* soft > now never runs; hard <= now always runs, greedy or not. */
static void test_soft_never_early_hard_never_skipped(void **s)
{
	struct hrt_base *b = tv_virtual(0);
	struct named a = { .name = 'a' }, c = { .name = 'c' };

	(void)s;
	hrt_base_set_greedy(b, HRT_GREEDY_ALWAYS);
	hrt_timer_init(&a.t, record);
	hrt_timer_init(&c.t, record);
	hrt_timer_start_range(&a.t, b, 100, 0, HRT_MODE_ABS);
	hrt_timer_start_range(&c.t, b, 50, 1000, HRT_MODE_ABS);
	nran = 0;
	assert_int_equal(hrt_base_run(b, 49, 1), 0);
	assert_int_equal(hrt_base_run(b, 100, 0), 2);            /* a hard, c soft */
	assert_string_equal(ran, "ac");
	assert_int_equal(hrt_base_free(b), 0);
}

struct self {
	struct hrt_timer t;
	struct hrt_base *b;
	int mode;
	int runs;
};

static enum hrt_restart self_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct self *x = (struct self *)t;

	x->runs++;
	assert_true(hrt_timer_is_running(t));
	assert_false(hrt_timer_is_queued(t));
	assert_int_equal(hrt_base_run(x->b, now, 1), -EBUSY);     /* no re-entry */
	switch (x->mode) {
	case 0:         /* restart without moving: due again, waits for next pass */
		return HRT_RESTART;
	case 1:         /* free itself */
		free(x);
		return HRT_NORESTART;
	case 2:         /* re-start itself and still say RESTART: once queued */
		hrt_timer_start(t, x->b, 0, HRT_MODE_REL);
		return HRT_RESTART;
	}
	return HRT_NORESTART;
}

static void test_callback_restarts_once_per_pass_and_may_free_itself(void **s)
{
	struct hrt_base *b = tv_virtual(0);
	struct self st = { .b = b };
	struct self *heap = calloc(1, sizeof(*heap));
	struct hrt_stats stats;

	(void)s;
	hrt_base_set_greedy(b, HRT_GREEDY_ALWAYS);
	hrt_timer_init(&st.t, self_cb);
	hrt_timer_start(&st.t, b, 10, HRT_MODE_ABS);
	assert_int_equal(hrt_base_run(b, 10, 1), 1);              /* once per pass */
	assert_true(hrt_timer_is_queued(&st.t));
	assert_true(tv_next(b) <= 10);                /* due again */
	assert_int_equal(hrt_base_run(b, 10, 1), 1);
	assert_int_equal(st.runs, 2);
	st.mode = 2;
	assert_int_equal(hrt_base_run(b, 11, 1), 1);
	assert_int_equal(hrt_base_count(b), 1);                   /* not twice */
	hrt_timer_cancel(&st.t);

	heap->b = b;
	heap->mode = 1;
	hrt_timer_init(&heap->t, self_cb);
	hrt_timer_start(&heap->t, b, 20, HRT_MODE_ABS);
	assert_int_equal(hrt_base_run(b, 20, 1), 1);              /* ASan: no use after free */
	assert_int_equal(hrt_base_count(b), 0);
	hrt_base_get_stats(b, &stats, sizeof(stats));
	assert_int_equal(stats.restarts, 2);
	assert_int_equal(stats.expired, 4);
	assert_int_equal(hrt_base_free(b), 0);
}

/* A timer first started during a pass may run in it. */
static struct named late = { .name = 'L' };
static enum hrt_restart starter(struct hrt_timer *t, hrt_time_t now)
{
	record(t, now);
	hrt_timer_start(&late.t, tv_base(t), now - 5, HRT_MODE_ABS);
	return HRT_NORESTART;
}

static void test_timer_started_due_in_pass_runs_in_that_pass(void **s)
{
	struct hrt_base *b = tv_virtual(0);
	struct named a = { .name = 'S' };

	(void)s;
	hrt_base_set_greedy(b, HRT_GREEDY_OFF);
	hrt_timer_init(&a.t, starter);
	hrt_timer_init(&late.t, record);
	hrt_timer_start(&a.t, b, 10, HRT_MODE_ABS);
	nran = 0;
	assert_int_equal(hrt_base_run(b, 10, 0), 2);
	assert_string_equal(ran, "SL");
	assert_int_equal(hrt_base_free(b), 0);
}

static void test_move_between_bases(void **s)
{
	struct hrt_base *a = tv_virtual(0), *b = tv_virtual(0);
	struct named x = { .name = 'x' };

	(void)s;
	hrt_timer_init(&x.t, record);
	hrt_timer_start(&x.t, a, 10, HRT_MODE_ABS);
	assert_int_equal(hrt_base_count(a), 1);
	hrt_timer_start(&x.t, b, 20, HRT_MODE_ABS);
	assert_int_equal(hrt_base_count(a), 0);
	assert_int_equal(hrt_base_count(b), 1);
	assert_ptr_equal(tv_base(&x.t), b);
	assert_int_equal(tv_next(a), HRT_TIME_MAX);
	assert_int_equal(tv_next(b), 20);
	nran = 0;
	assert_int_equal(hrt_base_run(a, 100, 1), 0);
	assert_int_equal(hrt_base_run(b, 100, 1), 1);
	assert_int_equal(hrt_base_check(a, NULL, 0), 0);
	assert_int_equal(hrt_base_check(b, NULL, 0), 0);
	assert_int_equal(hrt_base_free(a), 0);
	assert_int_equal(hrt_base_free(b), 0);
}

static void count_node(const struct hrt_tree_node *n, void *ctx)
{
	(*(int *)ctx)++;
	assert_true(n->subtree_soft <= tv_soft(n->timer));
}

static int counted;
static enum hrt_restart count_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	counted++;
	return HRT_NORESTART;
}

/* k due timers scattered among n: the greedy walk visits O(k log n). */
static void test_greedy_log_bound(void **s)
{
	enum { NT = 100000, K = 100 };
	struct hrt_timer *tm = calloc(NT, sizeof(*tm));
	struct hrt_base *b = tv_virtual(0);
	struct hrt_stats st;
	unsigned long long x = 88172645463325252ull;
	int walked = 0;
	double bound;

	(void)s;
	hrt_base_set_greedy(b, HRT_GREEDY_ALWAYS);
	for (int i = 0; i < NT; i++) {
		hrt_time_t hard;
		int due = i % (NT / K) == 0;   /* every 1000th: soft-expired at 1000 */

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		hard = 1000000 + (hrt_time_t)(x % 1000000000);
		hrt_timer_init(&tm[i], count_cb);
		hrt_timer_start_range(&tm[i], b, due ? 1000 : hard - 10, due ? hard - 1000 : 10,
				      HRT_MODE_ABS);
	}
	assert_int_equal(hrt_base_walk_tree(b, count_node, &walked), NT);
	assert_int_equal(walked, NT);
	assert_int_equal(hrt_base_check(b, NULL, 0), 0);
	counted = 0;
	assert_int_equal(hrt_base_run(b, 1000, 1), K);
	assert_int_equal(counted, K);
	hrt_base_get_stats(b, &st, sizeof(st));
	bound = K * (2.0 * log2(NT + 1.0) + 1);        /* height <= 2 log2(n+1) */
	printf("greedy: %d due among %d, %llu nodes visited (%.1f per timer, bound %.0f)\n",
	       K, NT, (unsigned long long)st.nodes_visited, (double)st.nodes_visited / K, bound);
	assert_true((double)st.nodes_visited <= bound);
	assert_int_equal(st.expired_greedy, K);
	assert_int_equal(hrt_base_check(b, NULL, 0), 0);
	for (int i = 0; i < NT; i++)            /* free refuses queued timers */
		hrt_timer_cancel(&tm[i]);
	assert_int_equal(hrt_base_free(b), 0);
	free(tm);
}

/* The restart path: NP periodic timers with one period, all due in every
 * pass.  Each restart costs one erase and one insert, for the first
 * HRT_TSET_RAN_MAX (the timer set's restart marks) per pass; beyond that the pending queue takes
 * over at two of each.  They run in start order (FIFO) every pass. */
enum { NP = 24, NP_FAST = HRT_TSET_RAN_MAX, PERIOD = 1000000 };
struct periodic {
	struct hrt_timer t;
	int id;
};
static struct periodic per[NP];
static int order[4 * NP], norder;
static int walk_shown, walk_saw_first;

static void note_shown(const struct hrt_tree_node *n, void *ctx)
{
	(void)ctx;
	walk_shown++;
	if (n->timer == &per[0].t)
		walk_saw_first = 1;
}

static enum hrt_restart periodic_cb(struct hrt_timer *t, hrt_time_t now)
{
	struct periodic *p = (struct periodic *)t;
	struct hrt_base *b = tv_base(t);

	order[norder++] = p->id;
	hrt_timer_forward(t, now, PERIOD);
	if (p->id == 5) {
		char why[128];
		int n;

		/* per[0] ran and was re-queued excluded: a cancel and a start
		 * from here re-queue it excluded again (it may not run twice). */
		assert_int_equal(hrt_timer_cancel(&per[0].t), 1);
		assert_int_equal(hrt_timer_start(&per[0].t, b, now + PERIOD, HRT_MODE_ABS), 0);
		assert_int_equal(hrt_base_check(b, why, sizeof(why)), 0);
		/* A walk from a callback does not show re-queued timers. */
		walk_shown = walk_saw_first = 0;
		n = hrt_base_walk_tree(b, note_shown, NULL);
		assert_int_equal(n, walk_shown);
		assert_int_equal(walk_saw_first, 0);
		assert_int_equal(n, NP - 6);    /* 6..23 wait; 0..5 ran */
	}
	return HRT_RESTART;
}

static void restart_cost(unsigned flags)
{
	struct hrt_base *b = tv_virtual(flags);
	struct hrt_stats st;
	hrt_time_t now = PERIOD;

	assert_non_null(b);
	hrt_base_set_greedy(b, HRT_GREEDY_OFF);
	for (int i = 0; i < NP; i++) {
		per[i].id = i;
		hrt_timer_init(&per[i].t, periodic_cb);
		assert_int_equal(hrt_timer_start(&per[i].t, b, now, HRT_MODE_ABS), 0);
	}
	for (int pass = 0; pass < 3; pass++, now += PERIOD) {
		hrt_base_reset_stats(b);
		norder = 0;
		assert_int_equal(hrt_base_run(b, now, 0), NP);   /* each once */
		hrt_base_get_stats(b, &st, sizeof(st));
		/* FIFO, every pass: per[5]'s callback re-starts per[0] before
		 * per[5] itself is re-queued, so from pass 1 on 0 runs 5th. */
		for (int i = 0; i < NP; i++)
			assert_int_equal(order[i], (pass == 0 || i > 4 ? i : i == 4 ? 0 : i + 1));
		/* NP erases; inserts: NP_FAST excluded in place, the rest
		 * through pend (insert, erase, insert); per[0]'s cancel and
		 * start add one of each. */
		printf("restart: pass %d, %d restarts, %" PRIu64 " tree ops (%.2f each; "
		       "through the pending queue alone: 4)\n", pass, NP, st.tree_ops,
		       (double)st.tree_ops / NP);
		assert_int_equal(st.tree_ops, 2 * NP + 2 * (NP - NP_FAST) + 2);
		assert_int_equal(st.restarts, NP);
		assert_int_equal(hrt_base_check(b, NULL, 0), 0);
		assert_int_equal(tv_next(b), now + PERIOD);
		assert_int_equal(hrt_base_walk_tree(b, note_shown, NULL), NP);
	}
	for (int i = 0; i < NP; i++)
		hrt_timer_cancel(&per[i].t);
	assert_int_equal(hrt_base_free(b), 0);
}

static void test_restart_costs_bounded_tree_ops(void **s)
{
	(void)s;
	restart_cost(0);
	restart_cost(HRT_BASE_UNLOCKED);
}

static hrt_time_t min_hard(struct hrt_timer *tm, const char *on, int n)
{
	hrt_time_t m = HRT_TIME_MAX;

	for (int i = 0; i < n; i++)
		if (on[i] && tv_hard(&tm[i]) < m)
			m = tv_hard(&tm[i]);
	return m;
}

/* Where timers go: asking for next_event (as every start on an fd base
 * does) finds the earliest far timer without moving it into the tree, so
 * the horizon stays near and later far starts stay O(1) in the wheel; a
 * timer due within HRT_WHEEL_NEAR jiffies (~17 ms) of the last pass goes
 * straight to the tree, one further goes to the wheel. */
static void test_wheel_placement(void **s)
{
	enum { NW = 2000 };
	struct hrt_timer *tm = calloc(NW + 2, sizeof(*tm));
	char *on = calloc(NW, 1);
	struct hrt_base *b = tv_virtual(0);
	unsigned long long x = 0x9e3779b97f4a7c15ull;
	struct hrt_stats st;
	hrt_time_t now = 1000 * (hrt_time_t)PERIOD;     /* 1 s */
	const hrt_time_t jiffy = (hrt_time_t)1 << HRT_WHEEL_SHIFT;
	const hrt_time_t near = HRT_WHEEL_NEAR / 2 * jiffy, far = 3 * HRT_WHEEL_NEAR * jiffy;

	(void)s;
	/* Near the last pass: the tree at once; further: the wheel. */
	assert_int_equal(hrt_base_run(b, now, 0), 0);
	hrt_timer_init(&tm[NW], count_cb);
	hrt_timer_init(&tm[NW + 1], count_cb);
	assert_int_equal(hrt_timer_start(&tm[NW], b, now + near,
					 HRT_MODE_ABS), 0);
	hrt_base_get_stats(b, &st, sizeof(st));
	assert_int_equal(st.tree_ops, 1);
	assert_int_equal(hrt_timer_start(&tm[NW + 1], b, now + far,
					 HRT_MODE_ABS), 0);
	hrt_base_get_stats(b, &st, sizeof(st));
	assert_int_equal(st.tree_ops, 1);
	counted = 0;
	assert_int_equal(hrt_base_run(b, now + far, 0), 2);
	hrt_base_get_stats(b, &st, sizeof(st));
	assert_int_equal(st.wheel_moves, 1);            /* only the far one moved */
	now += far;
	hrt_base_reset_stats(b);

	for (int i = 0; i < NW; i++)
		hrt_timer_init(&tm[i], count_cb);
	for (int op = 0; op < 20 * NW; op++) {          /* start/cancel far timers */
		int i;

		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		i = (int)(x % NW);
		if (on[i]) {
			assert_int_equal(hrt_timer_cancel(&tm[i]), 1);
			on[i] = 0;
		} else {
			hrt_time_t when = now + 10 * 1000 * (hrt_time_t)PERIOD +
					  (hrt_time_t)(x >> 20) % (60 * 1000 * (hrt_time_t)PERIOD);

			assert_int_equal(hrt_timer_start(&tm[i], b, when, HRT_MODE_ABS), 0);
			on[i] = 1;
		}
		assert_int_equal(tv_next(b), min_hard(tm, on, NW));
	}
	hrt_base_get_stats(b, &st, sizeof(st));
	printf("placement: %d ops with next_event after each: %" PRIu64 " wheel moves, "
	       "%" PRIu64 " cascades, %" PRIu64 " tree ops\n", 20 * NW, st.wheel_moves,
	       st.wheel_cascades, st.tree_ops);
	assert_int_equal(st.wheel_moves, 0);
	assert_int_equal(st.tree_ops, 0);
	assert_int_equal(hrt_base_check(b, NULL, 0), 0);

	for (int i = 0; i < NW; i++)
		if (on[i])
			hrt_timer_cancel(&tm[i]);
	assert_int_equal(hrt_base_check(b, NULL, 0), 0);
	assert_int_equal(hrt_base_free(b), 0);
	free(on);
	free(tm);
}

/* hrt.h: hrt_base_set_greedy "takes effect at the next pass", also when a
 * callback calls it.  The article at 8 us with greedy off: the leftmost
 * run is A, B (C is not soft-due); D is soft-due behind C, so only a
 * greedy walk runs it.  A's callback turns greedy on: not for this pass
 * (before, the walk that followed read the new policy and ran D). */
static struct hrt_base *greedy_base;

static enum hrt_restart record_then_greedy(struct hrt_timer *t, hrt_time_t now)
{
	assert_int_equal(hrt_base_set_greedy(greedy_base, HRT_GREEDY_ALWAYS), 0);
	return record(t, now);
}

static void test_set_greedy_in_callback_takes_effect_next_pass(void **s)
{
	struct named tm[7];

	(void)s;
	nran = 0;
	greedy_base = article(tm);
	assert_int_equal(hrt_base_set_greedy(greedy_base, HRT_GREEDY_OFF), 0);
	hrt_timer_cancel(&tm[0].t);
	hrt_timer_init(&tm[0].t, record_then_greedy);
	hrt_timer_start_range(&tm[0].t, greedy_base, art_soft[0], 10 * US - art_soft[0], HRT_MODE_ABS);
	assert_int_equal(hrt_base_run(greedy_base, 8 * US, 0), 2);
	assert_string_equal(ran, "AB");
	assert_int_equal(hrt_base_run(greedy_base, 8 * US, 0), 1);     /* greedy now */
	assert_string_equal(ran, "ABD");
	for (int i = 0; i < 7; i++)
		hrt_timer_cancel(&tm[i].t);
	assert_int_equal(hrt_base_free(greedy_base), 0);
}

/* hrt.h: a timer started from its own callback stays on the base running
 * it; onto a base that keeps another time (another clock, or a virtual
 * one) the instant would mean another moment there, so the start is
 * refused with -EXDEV (issue 32, defect 2: "in 1 s" from a CLOCK_REALTIME
 * callback onto a monotonic base ran at the very next pass).  Onto a base
 * of the same clock it is allowed, and stays. */
static struct hrt_base *restart_target;
static int restart_result;

static enum hrt_restart restart_onto(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	restart_result = hrt_timer_start_range(t, restart_target, SEC, 0, HRT_MODE_REL);
	return HRT_NORESTART;
}

static void run_restart_onto(struct hrt_base *from, struct hrt_base *to, int want)
{
	struct hrt_timer t;
	hrt_time_t now = tv_now(from);

	hrt_timer_init(&t, restart_onto);
	restart_target = to;
	restart_result = 1;
	assert_int_equal(hrt_timer_start(&t, from, now, HRT_MODE_ABS), 0);
	assert_int_equal(hrt_base_run(from, now, 0), 1);
	assert_int_equal(restart_result, want);
	if (want) {
		assert_int_equal(hrt_timer_is_queued(&t), 0);   /* nothing changed */
	} else {
		/* queued on the running base, a second on */
		assert_ptr_equal(tv_base(&t), from);
		assert_true(tv_hard(&t) >= now + SEC && tv_hard(&t) < tv_now(from) + 2 * SEC);
		assert_int_equal(hrt_timer_cancel(&t), 1);
	}
}

static void test_restart_onto_base_of_another_time_is_refused(void **s)
{
	struct hrt_base *rt = tv_new(CLOCK_REALTIME, 0), *mono = tv_new(CLOCK_MONOTONIC, 0),
			*mono2 = tv_new(CLOCK_MONOTONIC, 0), *v1 = tv_virtual(0), *v2 = tv_virtual(0);

	(void)s;
	hrt_base_set_time(v1, 10 * SEC);
	run_restart_onto(rt, mono, -EXDEV);
	run_restart_onto(mono, rt, -EXDEV);
	run_restart_onto(v1, v2, -EXDEV);
	run_restart_onto(mono, v1, -EXDEV);
	run_restart_onto(mono, mono2, 0);
	run_restart_onto(rt, rt, 0);
	assert_int_equal(hrt_base_free(rt), 0);
	assert_int_equal(hrt_base_free(mono), 0);
	assert_int_equal(hrt_base_free(mono2), 0);
	assert_int_equal(hrt_base_free(v1), 0);
	assert_int_equal(hrt_base_free(v2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_article),
		cmocka_unit_test(test_article_wakeups),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_greedy_env),
		cmocka_unit_test(test_saturation_and_forward),
		cmocka_unit_test(test_soft_never_early_hard_never_skipped),
		cmocka_unit_test(test_callback_restarts_once_per_pass_and_may_free_itself),
		cmocka_unit_test(test_timer_started_due_in_pass_runs_in_that_pass),
		cmocka_unit_test(test_move_between_bases),
		cmocka_unit_test(test_greedy_log_bound),
		cmocka_unit_test(test_restart_costs_bounded_tree_ops),
		cmocka_unit_test(test_wheel_placement),
		cmocka_unit_test(test_set_greedy_in_callback_takes_effect_next_pass),
		cmocka_unit_test(test_restart_onto_base_of_another_time_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
