/* SPDX-License-Identifier: MIT */
/*
 * test_timerset.c - the timer set (timerset.h) driven directly, with no
 * base, against a sorted-array oracle: timers ordered by (hard expiry,
 * soft expiry, when added: the tie rule), each with a "taken in this
 * pass" flag.  Random adds with windows of 0 to 100 % of the delay
 * (first bound or claimed; re-adds of queued timers through a delete and
 * an add or add_tree, the fused re-arm or its wheel-only fast path, as
 * the starts do), deletes (del, or the fast cancel's del_wheel; then
 * maybe forget_pass), walks (gather) and passes; inside a pass the
 * leftmost run and the greedy walk take timers one by one and, as
 * callbacks would, restart them, add, delete and walk.  Every mutation is
 * driven both outside and inside a pass (counted; the run fails if one
 * is not), and a fast path that refuses must change nothing.  After every
 * change: the set's answer to each search equals the oracle's (rules
 * S1-S3: FIFO, once per pass, nothing hidden in the wheel), the count and
 * every state word agree, and the set's checker passes.  Expiries spread
 * over every wheel level, with many ties.
 *     build/tests/test_timerset [SEED [STEPS]]
 * A failure prints the seed and the step; both replay from the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"

#include "timerset.h"

#define N 400

static struct hrt_timer timers[N];
static struct {
	int in;                 /* queued */
	int taken;              /* taken in the current pass */
	uint64_t seq;           /* when added */
} m[N];
static struct hrt_tset ts;
static uint64_t seq, pass_id;
static hrt_time_t now;
static int active = N;          /* timers in play: few empty the near range */
static struct {
	uint64_t passes, taken, restarts, visited;
} tally;

/* Every way the test changes the set, counted outside [0] and inside [1]
 * a pass: the run fails unless each was driven both ways. */
enum op {
	OP_ADD, OP_ADD_TREE, OP_REARM, OP_REARM_WHEEL, OP_REARM_WHEEL_NO, OP_DEL,
	OP_DEL_WHEEL, OP_DEL_WHEEL_NO, OP_CLAIM, OP_FORGET, OP_GATHER, OP_N
};
static const char *const op_name[OP_N] = {
	"add", "add_tree", "rearm", "rearm_wheel", "rearm_wheel refused", "del",
	"del_wheel", "del_wheel refused", "claim", "forget_pass", "gather",
};
static uint64_t drove[OP_N][2];

static void count_op(enum op op)
{
	drove[op][!!hrt__tset_in_pass(&ts)]++;
}

static hrt_time_t sat_add(hrt_time_t a, uint64_t d)
{
	return d > (uint64_t)(HRT_TIME_MAX - a) ? HRT_TIME_MAX : a + (hrt_time_t)d;
}

/* An expiry from now on over every wheel level (a few in the past, a few
 * "never"), with few distinct values so that equal hard expiries and so
 * the FIFO rule are common. */
static void rnd_expiry(struct hrt_timer *t)
{
	unsigned k = (unsigned)(unit_rng() % 44);
	uint64_t d = unit_rng() % 2 ? (unit_rng() % 4) << k : unit_rng() & ((UINT64_C(1) << k) - 1);
	hrt_time_t soft, hard;

	if (unit_rng() % 64 == 0) {
		t->hrt__soft = t->hrt__hard = HRT_TIME_MAX;
		return;
	}
	soft = unit_rng() % 8 == 0 ? now - (hrt_time_t)(unit_rng() % 100000) : sat_add(now, d);
	switch (unit_rng() % 8) {
	case 0: case 1: case 2:
		hard = soft;
		break;
	case 3: case 4: {               /* a window of 1, 10, 100 % or any of the delay */
		uint64_t delay = soft > now ? (uint64_t)soft - (uint64_t)now : 0;

		hard = sat_add(soft, (uint64_t[]){ delay / 100, delay / 10, delay,
						   delay ? unit_rng() % delay : 0 }[unit_rng() % 4]);
		break;
	}
	default:
		hard = sat_add(soft, unit_rng() % 3 ? unit_rng() % 4000000 : d);
		break;
	}
	/* as the base caps it: a timer that can run gets a reachable hard */
	if (soft <= HRT_QUEUE_NOW_MAX && hard > HRT_QUEUE_NOW_MAX)
		hard = HRT_QUEUE_NOW_MAX;
	t->hrt__soft = soft;
	t->hrt__hard = hard;
}

/* a before b in queue order (S1, the tie rule): hard, soft, when added */
static int before(int a, int b)
{
	if (timers[a].hrt__hard != timers[b].hrt__hard)
		return timers[a].hrt__hard < timers[b].hrt__hard;
	if (timers[a].hrt__soft != timers[b].hrt__soft)
		return timers[a].hrt__soft < timers[b].hrt__soft;
	return m[a].seq < m[b].seq;
}

/* The first queued timer in queue order not taken in this pass, with soft
 * expiry <= due (HRT_TIME_MAX: any); -1 if none. */
static int model_first(hrt_time_t due)
{
	int best = -1;

	for (int i = 0; i < N; i++)
		if (m[i].in && !m[i].taken && timers[i].hrt__soft <= due &&
		    (best < 0 || before(i, best)))
			best = i;
	return best;
}

static hrt_time_t model_next(void)
{
	hrt_time_t h = HRT_TIME_MAX;

	for (int i = 0; i < N; i++)
		if (m[i].in && timers[i].hrt__hard < h)
			h = timers[i].hrt__hard;
	return h;
}

static struct hrt_timer *ptr(int i)
{
	return i < 0 ? NULL : &timers[i];
}

static void check_all(void);

/* A timer of no set becomes ts's: bound, or claimed (which must win: no
 * other set wants it).  A bound one's claim from "no set" fails and
 * reports its state word. */
static uintptr_t bind_or_claim(struct hrt_timer *t)
{
	uintptr_t s = hrt__tset_state(t), z = 0;

	if (hrt__tset_of(s)) {
		if (unit_rng() % 16 == 0) {
			assert_false(hrt__tset_claim(t, &ts, &z));
			assert_int_equal(z, s);
		}
		return s;
	}
	if (unit_rng() % 2) {
		hrt__tset_bind(t, &ts);
	} else {
		assert_true(hrt__tset_claim(t, &ts, &z));
		count_op(OP_CLAIM);
	}
	return hrt__tset_state(t);
}

/* hrt__tset_rearm_wheel at e's expiries: done exactly when t is in no
 * tree, the wheel takes the new soft expiry, no renumber is due and no
 * pass runs (one that ran in it is parked: S2); refused, it changed
 * nothing (the caller then takes the full re-arm). */
static int rearm_wheel(struct hrt_timer *t, uintptr_t s, const struct hrt_timer *e)
{
	hrt_time_t soft = t->hrt__soft, hard = t->hrt__hard;
	int in_tree = (s & (HRT_TS_QUEUED | HRT_TS_WHEEL)) == HRT_TS_QUEUED;
	int want = !in_tree && hrt__wheel_key(&ts.wheel, e->hrt__soft) >= 0 &&
		   hrt__wheel_seq_ok(&ts.wheel) && !ts.in_pass;

	assert_int_equal(hrt__tset_rearm_wheel(&ts, t, s, e->hrt__soft, e->hrt__hard), want);
	if (want) {
		count_op(OP_REARM_WHEEL);
		return 1;
	}
	count_op(OP_REARM_WHEEL_NO);
	assert_int_equal(hrt__tset_state(t), s);
	assert_int_equal(t->hrt__soft, soft);
	assert_int_equal(t->hrt__hard, hard);
	assert_null(hrt__tset_check(&ts));
	return 0;
}

/* Queued again (or first): a del and an add (or add_tree, where the wheel
 * cannot take it), the fused re-arm, or its wheel-only fast path (which
 * may refuse: then the re-arm), as the base's start paths do. */
static void add(int i)
{
	struct hrt_timer *t = &timers[i], e;
	uintptr_t s = bind_or_claim(t);

	rnd_expiry(&e);
	switch (unit_rng() % 3) {
	case 0:
		if (s & HRT_TS_QUEUED)
			hrt__tset_del(&ts, t, s);
		t->hrt__soft = e.hrt__soft;
		t->hrt__hard = e.hrt__hard;
		if (hrt__wheel_key(&ts.wheel, t->hrt__soft) < 0 && unit_rng() % 2) {
			hrt__tset_add_tree(&ts, t);
			count_op(OP_ADD_TREE);
		} else {
			hrt__tset_add(&ts, t);
			count_op(OP_ADD);
		}
		break;
	case 1:
		if (rearm_wheel(t, s, &e))
			break;
		/* fall through */
	default:
		hrt__tset_rearm(&ts, t, s, e.hrt__soft, e.hrt__hard);
		count_op(OP_REARM);
		break;
	}
	m[i].in = 1;
	m[i].seq = ++seq;
	check_all();
}

/* Off the set: hrt__tset_del, or the fast cancel's del_wheel first (done
 * exactly for a wheel timer; refused, nothing changed).  Unqueued, it may
 * forget its pass (as the base has it do on a move to another base): a
 * timer that ran in this pass may then run in it again. */
static void del(int i)
{
	struct hrt_timer *t = &timers[i];
	uintptr_t s = hrt__tset_state(t);

	assert_int_equal(!!(s & HRT_TS_QUEUED), m[i].in);
	if (m[i].in && unit_rng() % 2) {
		int done = hrt__tset_del_wheel(&ts, t, s);

		assert_int_equal(done, !!(s & HRT_TS_WHEEL));
		count_op(done ? OP_DEL_WHEEL : OP_DEL_WHEEL_NO);
		if (!done) {
			assert_int_equal(hrt__tset_state(t), s);
			assert_null(hrt__tset_check(&ts));
		}
		m[i].in = !done;
	}
	if (m[i].in) {
		hrt__tset_del(&ts, t, s);
		count_op(OP_DEL);
		m[i].in = 0;
	}
	if (s && unit_rng() % 16 == 0) {
		hrt__tset_forget_pass(t);
		count_op(OP_FORGET);
		m[i].taken = 0;
	}
	check_all();
}

static void check_all(void)
{
	size_t n = 0;

	assert_null(hrt__tset_check(&ts));
	for (int i = 0; i < N; i++) {
		uintptr_t s = hrt__tset_state(&timers[i]);

		n += m[i].in;
		assert_int_equal(!!(s & HRT_TS_QUEUED), m[i].in);
		if (s)
			assert_ptr_equal(hrt__tset_of(s), &ts);
	}
	assert_int_equal(hrt__tset_count(&ts), n);
}

/* The window outside a pass: the first timer's soft and hard, and a soft
 * expiry of some queued timer between the earliest one and the first's. */
static void check_window(void)
{
	hrt_time_t owner, soft, hard, least;
	int f = model_first(HRT_TIME_MAX), r = hrt__tset_window(&ts, 1, &owner, &soft, &hard), some = 0;

	assert_int_equal(r, f >= 0);
	if (f < 0)
		return;
	assert_int_equal(owner, timers[f].hrt__soft);
	assert_int_equal(hard, timers[f].hrt__hard);
	least = owner;
	for (int i = 0; i < N; i++)
		if (m[i].in) {
			if (timers[i].hrt__soft < least)
				least = timers[i].hrt__soft;
			some |= timers[i].hrt__soft == soft;
		}
	assert_true(some && least <= soft && soft <= owner);
}

struct walk_ctx {
	int last;
	size_t n;
};

static void walk_fn(const struct hrt_tree_node *n, void *ctx)
{
	struct walk_ctx *w = ctx;
	int i = (int)(n->timer - timers);

	assert_true(m[i].in && !m[i].taken);
	if (w->last >= 0)
		assert_true(before(w->last, i));
	w->last = i;
	w->n++;
}

/* Every wheel timer gathered into the trees, then every timer shown in
 * queue order but those taken in this pass (a timer that ran and was
 * restarted far is gathered excluded). */
static void check_walk(void)
{
	struct walk_ctx w = { -1, 0 };
	size_t n, want = 0;

	hrt__tset_gather(&ts);
	count_op(OP_GATHER);
	assert_int_equal(ts.wheel.count, 0);
	check_all();
	n = hrt__tset_walk(&ts, walk_fn, &w);
	for (int i = 0; i < N; i++)
		want += m[i].in && !m[i].taken;
	assert_int_equal(n, w.n);
	assert_int_equal(n, want);
}

/* What a callback may do: restart its own timer, add and delete others. */
static void callback(int i)
{
	if (unit_rng() % 2) {
		add(i);
		tally.restarts++;
	}
	for (int k = (int)(unit_rng() % 4); k > 0; k--) {
		int j = (int)(unit_rng() % (unsigned)active);

		if (unit_rng() % 2)
			add(j);
		else
			del(j);
	}
	if (unit_rng() % 64 == 0)       /* a walk from a callback */
		check_walk();
	check_all();
}

static void take(struct hrt_timer *t)
{
	int i = (int)(t - timers);

	hrt__tset_take(&ts, t);
	m[i].in = 0;
	m[i].taken = 1;
	tally.taken++;
	callback(i);
}

static void pass(void)
{
	struct hrt_timer *t;
	uint64_t visited = 0;

	switch (unit_rng() % 4) {
	case 0:
		break;                                  /* the same instant again */
	case 1:
		now = sat_add(now, unit_rng() % 4000000);
		break;
	default:
		now = sat_add(now, unit_rng() % (UINT64_C(1) << (unit_rng() % 40)));
		break;
	}
	if (now > HRT_QUEUE_NOW_MAX)
		now = HRT_QUEUE_NOW_MAX;
	hrt__tset_pass_begin(&ts, ++pass_id, now);
	tally.passes++;
	check_all();
	for (;;) {      /* the leftmost run */
		int f = model_first(HRT_TIME_MAX), want_ends = (int)(unit_rng() % 2);
		hrt_time_t ends = 0;

		t = hrt__tset_first_due(&ts, now, want_ends ? &ends : NULL);
		assert_ptr_equal(t, f >= 0 && timers[f].hrt__soft <= now ? ptr(f) : NULL);
		if (want_ends)  /* the run's first, due or not (a split base's pass) */
			assert_int_equal(ends, f >= 0 ? timers[f].hrt__hard : HRT_TIME_MAX);
		if (!t)
			break;
		take(t);
	}
	if (unit_rng() % 2) {        /* the greedy walk */
		while ((t = hrt__tset_next_due(&ts, now, &visited))) {
			assert_ptr_equal(t, ptr(model_first(now)));
			take(t);
		}
		assert_int_equal(model_first(now), -1);
	}
	hrt__tset_pass_end(&ts);
	for (int i = 0; i < N; i++)
		m[i].taken = 0;
	tally.visited += visited;
}

static void test_timerset_matches_oracle(void **state)
{
	(void)state;
	unit_rng_state = unit_seed;
	memset(timers, 0, sizeof(timers));
	memset(m, 0, sizeof(m));
	memset(drove, 0, sizeof(drove));
	now = (hrt_time_t)(unit_rng() % (UINT64_C(1) << 50)) - ((hrt_time_t)1 << 49);
	hrt__tset_init(&ts, now);
	for (unit_step = 0; unit_step < unit_steps; unit_step++) {
		int i;

		if (unit_step % 1000 == 0)
			active = (int[]){ 4, 16, 64, N }[unit_rng() % 4];
		i = (int)(unit_rng() % (unsigned)active);

		switch (unit_rng() % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5: case 6:
			add(i);
			break;
		case 7: case 8: case 9:
			del(i);
			break;
		case 10:
			assert_int_equal(hrt__tset_next(&ts), model_next());
			break;
		case 11:
			check_window();
			break;
		case 12:
			if (unit_rng() % 8 == 0)
				check_walk();
			break;
		default:
			pass();
			break;
		}
		check_all();
	}
	printf("%ld steps: %llu passes took %llu timers (%llu restarted), %llu greedy nodes; "
	       "%llu wheel moves, %llu cascades, %llu tree ops\n",
	       unit_steps, (unsigned long long)tally.passes, (unsigned long long)tally.taken,
	       (unsigned long long)tally.restarts, (unsigned long long)tally.visited,
	       (unsigned long long)ts.wheel_moves, (unsigned long long)ts.wheel.cascades,
	       (unsigned long long)ts.tree_ops);
	for (int op = 0; op < OP_N; op++) {
		printf("%s%s %llu+%llu", op ? ", " : "driven outside+inside a pass: ", op_name[op],
		       (unsigned long long)drove[op][0], (unsigned long long)drove[op][1]);
		/* The wheel's fast re-arm is refused in a pass (S2: a timer
		 * that ran goes to the park), so it is done only outside. */
		if (!drove[op][0] || (!drove[op][1] && op != OP_REARM_WHEEL))
			fail_msg("%s not driven both outside and inside a pass", op_name[op]);
	}
	printf("\n");
	assert_true(ts.wheel.cascades > 0);
}

/* More than HRT_TSET_RAN_MAX restarts in one pass: the marks fill up and
 * the pending tree takes over, and neither lets a timer run twice. */
static void test_timerset_restarts_past_the_marks(void **state)
{
	struct hrt_timer *t;
	int runs = 0;

	(void)state;
	memset(timers, 0, sizeof(timers));
	memset(m, 0, sizeof(m));
	now = 1000;
	hrt__tset_init(&ts, 0);
	for (int i = 0; i < 3 * HRT_TSET_RAN_MAX; i++) {
		timers[i].hrt__soft = timers[i].hrt__hard = 500 + i % 3;
		hrt__tset_bind(&timers[i], &ts);
		hrt__tset_add(&ts, &timers[i]);
	}
	hrt__tset_pass_begin(&ts, 1, now);
	while ((t = hrt__tset_first_due(&ts, now, NULL))) {
		hrt__tset_take(&ts, t);
		runs++;
		t->hrt__soft = t->hrt__hard = now;      /* due again: not in this pass */
		hrt__tset_add(&ts, t);
		assert_null(hrt__tset_check(&ts));
	}
	assert_null(hrt__tset_next_due(&ts, now, &(uint64_t){ 0 }));
	assert_int_equal(runs, 3 * HRT_TSET_RAN_MAX);
	hrt__tset_pass_end(&ts);
	assert_null(hrt__tset_check(&ts));
	/* The next pass runs them all again, in the order they were re-added:
	 * the first run's order, by old hard expiry, then FIFO. */
	hrt__tset_pass_begin(&ts, 2, now);
	for (int i = 0; i < 3 * HRT_TSET_RAN_MAX; i++) {
		t = hrt__tset_first_due(&ts, now, NULL);
		assert_non_null(t);
		assert_ptr_equal(t, &timers[i / HRT_TSET_RAN_MAX + 3 * (i % HRT_TSET_RAN_MAX)]);
		hrt__tset_take(&ts, t);
	}
	hrt__tset_pass_end(&ts);
	assert_int_equal(hrt__tset_count(&ts), 0);
}

static void test_timerset_check_catches_a_wrong_state_word(void **state)
{
	(void)state;
	memset(timers, 0, sizeof(timers));
	hrt__tset_init(&ts, 0);
	timers[0].hrt__soft = timers[0].hrt__hard = 10;                  /* tree */
	timers[1].hrt__soft = timers[1].hrt__hard = (hrt_time_t)1 << 40; /* wheel */
	for (int i = 0; i < 2; i++) {
		hrt__tset_bind(&timers[i], &ts);
		hrt__tset_add(&ts, &timers[i]);
	}
	assert_true(hrt__tset_state(&timers[1]) & HRT_TS_WHEEL);
	assert_null(hrt__tset_check(&ts));
	timers[0].hrt__base_state |= HRT_TS_PENDING;
	assert_string_equal(hrt__tset_check(&ts), "queued timer with a wrong state word");
	timers[0].hrt__base_state &= ~(uintptr_t)HRT_TS_PENDING;
	timers[1].hrt__base_state &= ~(uintptr_t)HRT_TS_WHEEL;
	assert_string_equal(hrt__tset_check(&ts), "wheel timer with a wrong state word");
	timers[1].hrt__base_state |= HRT_TS_WHEEL;
	assert_null(hrt__tset_check(&ts));
}

/* A set in pass 5 with two timers that ran in it and were re-queued
 * excluded into the main queue (ran[] holds both) and one in the wheel:
 * a state the checker passes, for the tests below to break one rule of
 * timerset.h's table each. */
static void set_in_pass_with_marks(void)
{
	memset(timers, 0, sizeof(timers));
	hrt__tset_init(&ts, 0);
	timers[0].hrt__soft = timers[0].hrt__hard = 10;
	timers[1].hrt__soft = timers[1].hrt__hard = 11;
	timers[2].hrt__soft = timers[2].hrt__hard = (hrt_time_t)1 << 40;
	for (int i = 0; i < 3; i++) {
		hrt__tset_bind(&timers[i], &ts);
		hrt__tset_add(&ts, &timers[i]);
	}
	hrt__tset_pass_begin(&ts, 5, 100);
	for (int i = 0; i < 2; i++) {
		struct hrt_timer *t = hrt__tset_first_due(&ts, 100, NULL);

		assert_ptr_equal(t, &timers[i]);
		hrt__tset_take(&ts, t);
		t->hrt__soft = t->hrt__hard = 100;      /* due again: excluded */
		hrt__tset_add(&ts, t);
	}
	assert_int_equal(ts.ran_n, 2);
	assert_true(hrt__tset_state(&timers[2]) & HRT_TS_WHEEL);
	assert_null(hrt__tset_check(&ts));
}

static void test_timerset_check_catches_more_marks_than_room(void **state)
{
	(void)state;
	set_in_pass_with_marks();
	ts.ran_n = HRT_TSET_RAN_MAX + 1;
	assert_string_equal(hrt__tset_check(&ts), "more restart marks than ran[] holds");
	ts.ran_n = 2;
	assert_null(hrt__tset_check(&ts));
}

static void test_timerset_check_catches_a_pass_numbered_0(void **state)
{
	(void)state;
	set_in_pass_with_marks();
	ts.pass_id = 0;
	assert_string_equal(hrt__tset_check(&ts), "a pass numbered 0");
	ts.pass_id = 5;
	assert_null(hrt__tset_check(&ts));
}

/* Two marks for one timer: the count of excluded timers still agrees. */
static void test_timerset_check_catches_an_excluded_timer_without_a_mark(void **state)
{
	struct hrt_timer *keep;

	(void)state;
	set_in_pass_with_marks();
	keep = ts.ran[1];
	ts.ran[1] = ts.ran[0];
	assert_string_equal(hrt__tset_check(&ts),
			    "an excluded timer in the main queue is not among the restart marks");
	ts.ran[1] = keep;
	assert_null(hrt__tset_check(&ts));
}

/* S2 in the wheel: a slot timer did not run in this pass (one that did
 * waits in the park), a parked one did, and none ran in a later one. */
static void test_timerset_check_catches_a_wheel_timer_run_in_a_later_pass(void **state)
{
	(void)state;
	set_in_pass_with_marks();
	timers[2].hrt__ran_pass = 6;
	assert_string_equal(hrt__tset_check(&ts),
			    "wheel timer ran in a pass after the set's current one");
	timers[2].hrt__ran_pass = 5;
	assert_string_equal(hrt__tset_check(&ts),
			    "wheel slot holds a timer that ran in the current pass");
	timers[2].hrt__ran_pass = 4;            /* an earlier pass: allowed */
	assert_null(hrt__tset_check(&ts));
	/* Restarted far in this pass: parked, until the pass ends. */
	hrt__tset_take(&ts, &timers[1]);
	timers[1].hrt__soft = timers[1].hrt__hard = (hrt_time_t)1 << 41;
	hrt__tset_add(&ts, &timers[1]);
	assert_int_equal(hrt__wheel_key_of(&timers[1]), HRT_WHEEL_PARK);
	assert_null(hrt__tset_check(&ts));
	timers[1].hrt__ran_pass = 4;
	assert_string_equal(hrt__tset_check(&ts), "parked timer did not run in the current pass");
	timers[1].hrt__ran_pass = 5;
	hrt__tset_pass_end(&ts);
	assert_int_not_equal(hrt__wheel_key_of(&timers[1]), HRT_WHEEL_PARK);
	assert_int_equal(hrt__tset_count(&ts), 3);
	assert_null(hrt__tset_check(&ts));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timerset_matches_oracle),
		cmocka_unit_test(test_timerset_restarts_past_the_marks),
		cmocka_unit_test(test_timerset_check_catches_a_wrong_state_word),
		cmocka_unit_test(test_timerset_check_catches_more_marks_than_room),
		cmocka_unit_test(test_timerset_check_catches_a_pass_numbered_0),
		cmocka_unit_test(test_timerset_check_catches_an_excluded_timer_without_a_mark),
		cmocka_unit_test(test_timerset_check_catches_a_wheel_timer_run_in_a_later_pass),
	};

	return cmocka_run_seeded_tests(tests, argc, argv, 20000);
}
