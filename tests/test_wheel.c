/* SPDX-License-Identifier: MIT */
/*
 * test_wheel.c - the timing wheel (wheel.h) on its own, against a model
 * that knows only invariant W1 (a timer belongs in the wheel exactly when
 * its soft jiffy is at or past the horizon, whatever its hard expiry) and
 * the tie rule (hard, then soft, then start order).  Random places with
 * windows from 0 to 100 % of the delay over every level, deletes, re-arms,
 * parks and unparks (a pass's restarts), horizon moves and take-alls, with
 * the checker after each; whatever leaves must be exactly what no longer
 * fits, in start order among equal expiries (W3); the earliest timer
 * (hrt__wheel_min, W2) must be the model's first in queue order below any
 * limit, also after the timer that set a slot's bound left, and the park's
 * (hrt__wheel_park_min) the first of the parked; the checker against
 * corrupted wheels; and the shapes that keep a slot sorted (W3: same-length
 * timeouts cancelled in start order, the earliest re-armed) find each next
 * bound without a scan.
 *     build/tests/test_wheel [SEED [STEPS]]
 * A failure prints the seed and the step; both replay from the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"

#include "wheel.h"

#define N 500

static struct hrt_timer timers[N];
static int in[N];               /* the model: 1 in a slot, 2 in the park */
static uint64_t seqs[N];        /* when placed: start order */
static uint64_t ran[N];         /* the pass that last ran it (hrt__ran_pass) */
static uint64_t seq;
static struct hrt_wheel w;
static uint64_t fill, mins, scans_seen;

/* W1, from the layout's constants alone. */
static int fits(const struct hrt_timer *t, uint64_t hz)
{
	return hrt__wheel_jiffy(t->hrt__soft) >= hz;
}

static int state_ok(const struct hrt_timer *t, const void *ctx)
{
	(void)t, (void)ctx;
	return 0;
}

/* An instant from the horizon on, spread over every level (a few behind
 * it), with few distinct values so equal expiries are common. */
static hrt_time_t rnd_after(hrt_time_t base)
{
	unsigned k = 16 + (unsigned)(unit_rng() % 30);
	uint64_t d = unit_rng() % 4 == 0 ? (unit_rng() % 4) << k : unit_rng() & ((UINT64_C(1) << k) - 1);

	if (unit_rng() % 16 == 0)
		return base - (hrt_time_t)(unit_rng() % (UINT64_C(1) << 24));
	if (base > 0 && d > (uint64_t)(HRT_TIME_MAX - base))
		return HRT_TIME_MAX;
	return base + (hrt_time_t)d;
}

/* A window for a timer due at soft, `now` being the pass: none, 50 us,
 * 1 %, 10 % or 100 % of the delay, or any up to it; saturated. */
static hrt_time_t rnd_hard(hrt_time_t soft, hrt_time_t now)
{
	uint64_t delay = soft > now ? (uint64_t)soft - (uint64_t)now : 0, win;

	switch (unit_rng() % 7) {
	case 0: win = 0; break;
	case 1: win = 50000; break;
	case 2: win = delay / 100; break;
	case 3: win = delay / 10; break;
	case 4: win = delay; break;
	case 5: win = delay ? unit_rng() % delay : 0; break;
	default: win = unit_rng() % 5000; break;       /* hard ties */
	}
	return win > (uint64_t)(HRT_TIME_MAX - soft) ? HRT_TIME_MAX : soft + (hrt_time_t)win;
}

static size_t model_count(void)
{
	size_t n = 0;

	for (int i = 0; i < N; i++)
		n += in[i] != 0;
	return n;
}

/* i before j in queue order: the tie rule. */
static int before(int i, int j)
{
	if (timers[i].hrt__hard != timers[j].hrt__hard)
		return timers[i].hrt__hard < timers[j].hrt__hard;
	if (timers[i].hrt__soft != timers[j].hrt__soft)
		return timers[i].hrt__soft < timers[j].hrt__soft;
	return seqs[i] < seqs[j];
}

/* The model's first timer in queue order with hard < limit, or -1: of
 * the slots' (where 1), or of the park's (where 2). */
static int model_min(hrt_time_t limit, int where)
{
	int best = -1;

	for (int i = 0; i < N; i++)
		if (in[i] == where && timers[i].hrt__hard < limit && (best < 0 || before(i, best)))
			best = i;
	return best;
}

static int by_expiries_then_pos(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;  /* {soft, hard (biased), position, seq} */

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	if (x[1] != y[1])
		return x[1] < y[1] ? -1 : 1;
	return x[2] < y[2] ? -1 : 1;
}

/* out, a list just taken from the wheel: every timer on it was in the
 * model and no longer fits hz; start order among equal expiries (full
 * ties: the tree keeps the order they come in).  Empties out and the
 * model's entries.  Returns how many there were. */
static size_t take_out(struct hrt_list_node *out, uint64_t hz)
{
	static uint64_t rows[N][4];
	size_t n = 0;

	while (!hrt__list_empty(out)) {
		struct hrt_timer *t = hrt__wheel_out_take(&w, out);
		int i = (int)(t - timers);

		assert_true(in[i]);
		in[i] = 0;
		assert_false(fits(t, hz));
		rows[n][0] = (uint64_t)t->hrt__soft ^ (UINT64_C(1) << 63);
		rows[n][1] = (uint64_t)t->hrt__hard ^ (UINT64_C(1) << 63);
		rows[n][2] = n;
		rows[n][3] = seqs[i];
		n++;
	}
	qsort(rows, n, sizeof(rows[0]), by_expiries_then_pos);
	for (size_t j = 1; j < n; j++)
		if (rows[j][0] == rows[j - 1][0] && rows[j][1] == rows[j - 1][1])
			assert_true(rows[j][3] > rows[j - 1][3]);
	return n;
}

/* hrt__wheel_min (the slots) or hrt__wheel_park_min against the model,
 * under a random limit (or none). */
static void check_min(int where)
{
	hrt_time_t limit = HRT_TIME_MAX, got;
	struct hrt_timer *t;
	int want;

	if (unit_rng() % 2) {
		int j = (int)(unit_rng() % N);

		limit = timers[j].hrt__hard + (hrt_time_t)(unit_rng() % 3) - 1;
	}
	want = model_min(limit, where);
	got = limit;
	t = where == 1 ? hrt__wheel_min(&w, &got) : hrt__wheel_park_min(&w, &got);
	if (want < 0) {
		assert_null(t);
		assert_int_equal(got, limit);
		return;
	}
	assert_ptr_equal(t, &timers[want]);
	assert_int_equal(got, timers[want].hrt__hard);
	mins++;
}

static void check_all(void)
{
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	assert_int_equal(w.count, model_count());
	for (int i = 0; i < N; i++)
		if (in[i]) {
			assert_true(fits(&timers[i], w.hz));
			assert_int_equal(timers[i].hrt__ran_pass, ran[i]);      /* kept */
		}
	check_min(1);
	check_min(2);
}

/* t's expiries from `now` on, with a window; into the wheel if it fits
 * (W1: its soft expiry alone decides), else "to the tree" (left out). */
static void place(int i, hrt_time_t now)
{
	struct hrt_timer *t = &timers[i];
	int key;

	t->hrt__soft = rnd_after(now);
	t->hrt__hard = rnd_hard(t->hrt__soft, now);
	t->hrt__ran_pass = ran[i] = unit_rng() % 4 == 0 ? 7 : 0;
	key = hrt__wheel_key(&w, t->hrt__soft);
	assert_int_equal(key >= 0, fits(t, w.hz));
	if (key < 0)
		return;
	seqs[i] = ++seq;
	if (unit_rng() % 8 == 0) {      /* a restart in a pass */
		hrt__wheel_park(&w, t);
		in[i] = 2;
		return;
	}
	hrt__wheel_link(&w, t, (unsigned)key);
	in[i] = 1;
}

/* The pass is over: the parked timers to their slots (the horizon has
 * not moved since they were parked). */
static void unpark(void)
{
	struct hrt_list_node out;

	hrt__list_init(&out);
	hrt__wheel_unpark(&w, &out);
	assert_true(hrt__list_empty(&out));
	for (int i = 0; i < N; i++)
		if (in[i] == 2)
			in[i] = 1;
}

/* A queued timer re-armed: often into its own slot (where the wheel only
 * renumbers it if the re-arm before went to that slot too, else moves it
 * to the tail: both chosen at random here), onto another timer's
 * expiries, its hard expiry alone moved, or anywhere. */
static void rearm(int i)
{
	struct hrt_timer *t = &timers[i], *o = &timers[unit_rng() % N];
	hrt_time_t soft = t->hrt__soft, hard = t->hrt__hard, now = hrt__wheel_horizon(&w);
	int key;

	switch (unit_rng() % 5) {
	case 0:
		soft = o->hrt__soft;
		hard = o->hrt__hard;
		break;
	case 1:
		soft = rnd_after(now);
		hard = rnd_hard(soft, now);
		break;
	case 2:                 /* the window alone: the bound's timer may leave it */
		hard = rnd_hard(soft, now);
		break;
	default:                /* inside the slot, maybe at an edge */
		soft += (hrt_time_t)(unit_rng() % 3) - 1;
		hard = soft > hard ? soft : hard;
		break;
	}
	key = hrt__wheel_key(&w, soft);
	if (key < 0 || soft > hard)
		return;
	if (in[i] == 2)                 /* ran in this pass: stays parked */
		key = HRT_WHEEL_PARK;
	t->hrt__soft = soft;
	t->hrt__hard = hard;
	seqs[i] = ++seq;
	if (unit_rng() % 2)
		w.last_move = (unsigned)key;
	hrt__wheel_move(&w, t, (unsigned)key);
}

static void test_wheel_matches_model(void **state)
{
	struct hrt_list_node out;
	hrt_time_t now;
	uint64_t hz;

	(void)state;
	unit_rng_state = unit_seed;
	now = (hrt_time_t)(unit_rng() % (UINT64_C(1) << 40)) - ((hrt_time_t)1 << 39);
	memset(in, 0, sizeof(in));
	hrt__wheel_init(&w, now);
	/* The sequence wraps (a renumbering) early in the run. */
	w.seq = (uint64_t)0 - (UINT64_C(3000) << HRT_WHEEL_KEY_BITS);
	for (unit_step = 0; unit_step < unit_steps; unit_step++) {
		int i = (int)(unit_rng() % N);

		hrt__list_init(&out);
		switch (unit_rng() % 16) {
		case 0: case 1: case 2: case 3: case 4: case 5:
			if (!in[i])
				place(i, hrt__wheel_horizon(&w));
			break;
		case 6: case 7: case 8:
			if (in[i]) {
				hrt__wheel_del(&w, &timers[i]);
				in[i] = 0;
			}
			break;
		case 9: case 10:        /* a pass later: the horizon moves */
			unpark();
			now = hrt__wheel_horizon(&w) +
			      (hrt_time_t)(unit_rng() % (UINT64_C(1) << (unit_rng() % 30)));
			hz = hrt__wheel_hz_for(now);
			hrt__wheel_advance(&w, hz, &out);
			assert_true(w.hz >= hz);
			take_out(&out, w.hz);
			break;
		case 11:
			unpark();
			break;
		case 13:
			if (unit_rng() % 64 == 0) {
				hrt__wheel_take_all(&w, &out);
				take_out(&out, UINT64_MAX);
				assert_int_equal(w.count, 0);
			}
			break;
		case 12: case 14: case 15:
			if (in[i])
				rearm(i);
			break;
		default:
			break;
		}
		check_all();
		fill += w.count;
	}
	scans_seen = w.scans;
	printf("%ld steps: %llu in the wheel on average, %llu earliest found, %llu slot scans "
	       "(W2), %llu cascades\n", unit_steps, (unsigned long long)(fill / (uint64_t)unit_steps),
	       (unsigned long long)mins, (unsigned long long)scans_seen,
	       (unsigned long long)w.cascades);
	/* The run went through what it is for. */
	assert_true(mins > 0 && scans_seen > 0 && w.cascades > 0);
}

/* A range timer stays in the wheel whatever its window: soft in one slot,
 * hard hours away (the old wheel sent it to the tree, and its hard slot
 * with it), and the wheel still knows the earliest hard expiry. */
static void test_wide_window_stays_in_wheel(void **state)
{
	struct hrt_timer *a = &timers[0], *b = &timers[1];
	hrt_time_t lim = HRT_TIME_MAX;
	int key;

	(void)state;
	hrt__wheel_init(&w, 0);
	a->hrt__soft = 1000000000;                      /* in 1 s */
	a->hrt__hard = (hrt_time_t)3600 * 1000000000;   /* within the hour */
	b->hrt__soft = b->hrt__hard = 2000000000;       /* exactly in 2 s */
	key = hrt__wheel_key(&w, a->hrt__soft);
	assert_true(key >= 0);
	hrt__wheel_link(&w, a, (unsigned)key);
	key = hrt__wheel_key(&w, b->hrt__soft);
	assert_true(key >= 0);
	hrt__wheel_link(&w, b, (unsigned)key);
	assert_int_equal(w.count, 2);
	assert_ptr_equal(hrt__wheel_min(&w, &lim), b);
	assert_int_equal(lim, 2000000000);
	hrt__wheel_del(&w, b);
	lim = HRT_TIME_MAX;
	assert_ptr_equal(hrt__wheel_min(&w, &lim), a);
	assert_int_equal(lim, a->hrt__hard);
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
}

/* t (on nothing, its expiries set, fit for the wheel) into its slot. */
static void link_new(struct hrt_timer *t)
{
	int key = hrt__wheel_key(&w, t->hrt__soft);

	assert_true(key >= 0);
	hrt__wheel_link(&w, t, (unsigned)key);
}

/* t (in the wheel) re-armed at soft..hard into slot key. */
static void move_to(struct hrt_timer *t, unsigned key, hrt_time_t soft, hrt_time_t hard)
{
	t->hrt__soft = soft;
	t->hrt__hard = hard;
	hrt__wheel_move(&w, t, key);
}

static int slot_bit(const uint64_t *bits, unsigned key)
{
	return !!(bits[key / HRT_WHEEL_SLOTS] & hrt__wheel_bit(key));
}

static void test_wheel_check_catches(void **state)
{
	struct hrt_timer *t, stranger = { 0 };
	struct hrt_wheel_slot *sl;
	unsigned key, k0;
	uint64_t s5;

	(void)state;
	hrt__wheel_init(&w, 0);
	for (int i = 0; i < 8; i++) {
		timers[i].hrt__hard = timers[i].hrt__soft = (hrt_time_t)1 << (30 + i);
		link_new(&timers[i]);
	}
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	t = &timers[3];
	t->hrt__off.hrt__slot++;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel timer's remembered slot wrong");
	t->hrt__off.hrt__slot--;
	t->hrt__soft = hrt__wheel_horizon(&w) - 1;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel timer behind the horizon");
	t->hrt__soft = t->hrt__hard;
	w.count++;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL), "wheel count wrong");
	w.count--;
	w.occupied[HRT_WHEEL_LEVELS - 1] ^= 1;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL), "wheel occupancy bit wrong");
	w.occupied[HRT_WHEEL_LEVELS - 1] ^= 1;
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	t = &timers[4];         /* alone in its slot: an earlier sequence is no disorder */
	w.seq -= UINT64_C(1) << HRT_WHEEL_KEY_BITS;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel timer's sequence not below the next");
	w.seq += UINT64_C(1) << HRT_WHEEL_KEY_BITS;
	key = hrt__wheel_key_of(t);
	move_to(&timers[5], key, t->hrt__soft + 1, t->hrt__hard + 1);
	assert_null(hrt__wheel_check(&w, state_ok, NULL));     /* in both orders */
	assert_false(slot_bit(w.unsorted, key));
	assert_false(slot_bit(w.unordered, key));
	w.slot[key].min = &timers[5];
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel slot's least not its first in queue order");
	w.slot[key].min = t;
	/* t, the slot's first and least, goes to the tail (it is never
	 * re-armed in place): in start order still, out of queue order. */
	move_to(t, key, t->hrt__soft, t->hrt__hard);
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	assert_false(slot_bit(w.unsorted, key));
	assert_true(slot_bit(w.unordered, key));
	w.unordered[key / HRT_WHEEL_SLOTS] = 0;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel slot marked ordered out of queue order");
	w.unordered[key / HRT_WHEEL_SLOTS] |= hrt__wheel_bit(key);
	s5 = timers[5].hrt__off.hrt__slot;     /* their sequences swapped */
	timers[5].hrt__off.hrt__slot = t->hrt__off.hrt__slot;
	t->hrt__off.hrt__slot = s5;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel slot marked sorted out of sequence order");
	t->hrt__off.hrt__slot = timers[5].hrt__off.hrt__slot;
	timers[5].hrt__off.hrt__slot = s5;
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	w.unsorted[1] |= 2;             /* slot 65 is empty */
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL), "empty wheel slot marked out of order");
	w.unsorted[1] &= ~UINT64_C(2);
	w.big[1] |= 2;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL), "empty wheel slot marked big");
	w.big[1] &= ~UINT64_C(2);
	w.last[65].hard = 5;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL), "empty wheel slot with last keys");
	w.last[65].hard = INT64_MIN;
	k0 = hrt__wheel_key_of(&timers[0]);     /* alone, ordered: last is its keys */
	w.last[k0].soft--;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "ordered wheel slot's last keys before one of its timers");
	w.last[k0].soft++;
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	/* W2: a bound above a timer's hard expiry, a bound's timer elsewhere
	 * or not at the bound, an empty slot with a bound. */
	sl = &w.slot[hrt__wheel_key_of(t)];
	sl->min = t;                    /* t has the least hard there */
	sl->hard = t->hrt__hard;
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	sl->min = &timers[5];           /* t is before it */
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel slot's least not its first in queue order");
	sl->min = t;
	sl->hard++;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel slot bound above a hard expiry");
	sl->hard -= 2;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel slot bound's timer not in the slot or not at the bound");
	sl->hard++;
	stranger.hrt__soft = stranger.hrt__hard = t->hrt__hard;        /* in no slot */
	sl->min = &stranger;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel slot bound's timer not in the slot or not at the bound");
	sl->min = NULL;                 /* a bound only: allowed */
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	w.slot[0].hard = 5;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL), "empty wheel slot with a bound");
	w.slot[0].hard = HRT_TIME_MAX;
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
}

/* The slot's timers, head to tail. */
static void assert_slot(unsigned key, struct hrt_timer *a, struct hrt_timer *b,
			struct hrt_timer *c)
{
	struct hrt_timer *want[] = { a, b, c };
	const struct hrt_list_node *h = &w.slot[key].head, *l = h->hrt__next;

	for (int i = 0; i < 3 && want[i]; i++, l = l->hrt__next)
		assert_ptr_equal(hrt__wheel_timer(l), want[i]);
	assert_ptr_equal(l, h);
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
}

/* hrt__wheel_move_ into a timer's own slot (W3, W4): after a re-arm into
 * the same slot, a timer that is neither the slot's first nor its least
 * stays in place, renumbered, and the slot is marked out of queue order,
 * and out of start order unless it was the tail; the first always goes to
 * the tail (the LRU shape), and in an ordered slot the next one is then
 * the least, with no scan; a scan that finds queue order again says so;
 * after a re-arm into another slot, a timer goes to the tail with its new
 * number; alone in its slot, the slot stays occupied. */
static void test_rearm_into_own_slot_stays_or_goes_last(void **state)
{
	struct hrt_timer *a = &timers[0], *b = &timers[1], *c = &timers[2], *d = &timers[3];
	hrt_time_t t0 = (hrt_time_t)1 << 32, lim;
	unsigned key, kd;
	uint64_t scans;

	(void)state;
	hrt__wheel_init(&w, 0);
	for (int i = 0; i < 4; i++) {
		timers[i].hrt__hard = timers[i].hrt__soft = t0 + i;
		if (i == 3)
			d->hrt__hard = d->hrt__soft = (hrt_time_t)1 << 36;
		link_new(&timers[i]);
	}
	key = hrt__wheel_key_of(a);
	kd = hrt__wheel_key_of(d);
	assert_int_equal(hrt__wheel_key_of(c), key);
	assert_int_not_equal(kd, key);
	scans = w.scans;

	w.last_move = key;                      /* a run into one slot: asks */
	move_to(a, key, t0 + 10, t0 + 10);      /* the first: to the tail */
	assert_slot(key, b, c, a);
	assert_false(slot_bit(w.unsorted, key) || slot_bit(w.unordered, key));
	lim = HRT_TIME_MAX;
	assert_ptr_equal(hrt__wheel_min(&w, &lim), b);  /* the new first, no scan */
	assert_int_equal(w.scans, scans);
	move_to(c, key, t0 + 15, t0 + 15);      /* stays, out of both orders */
	assert_slot(key, b, c, a);
	assert_true(slot_bit(w.unsorted, key) && slot_bit(w.unordered, key));
	move_to(b, key, t0 + 20, t0 + 20);      /* the first: to the tail */
	assert_slot(key, c, a, b);
	assert_null(w.slot[key].min);           /* a bound only */
	lim = HRT_TIME_MAX;
	assert_ptr_equal(hrt__wheel_min(&w, &lim), a);  /* a scan */
	assert_int_equal(w.scans, scans + 1);
	assert_true(slot_bit(w.unordered, key));
	move_to(c, key, t0 + 5, t0 + 5);        /* the first: to the tail */
	assert_slot(key, a, b, c);
	assert_ptr_equal(w.slot[key].min, c);   /* below the bound: the least */
	hrt__wheel_del(&w, c);
	assert_slot(key, a, b, NULL);
	lim = HRT_TIME_MAX;
	assert_ptr_equal(hrt__wheel_min(&w, &lim), a);  /* a scan, which finds order */
	assert_int_equal(w.scans, scans + 2);
	assert_false(slot_bit(w.unordered, key));
	move_to(b, key, t0 + 30, t0 + 30);      /* the tail stays: in start order */
	assert_slot(key, a, b, NULL);
	assert_true(slot_bit(w.unordered, key));

	move_to(d, kd, d->hrt__soft, d->hrt__hard);     /* another slot: no asking */
	assert_slot(kd, d, NULL, NULL);         /* alone: out and back in */
	assert_true(slot_bit(w.occupied, kd));
	assert_int_equal(w.last_move, kd);
	move_to(a, key, a->hrt__soft, a->hrt__hard);
	assert_slot(key, b, a, NULL);
	assert_int_equal(w.count, 3);
	move_to(b, kd, d->hrt__soft + 1, d->hrt__hard + 1);     /* into another slot */
	assert_slot(kd, d, b, NULL);
	assert_slot(key, a, NULL, NULL);
}

/* The shapes servers make keep their slot sorted (W3), so each next bound
 * is found with no scan: n same-length timeouts in one slot cancelled in
 * start order, the earliest of them re-armed over and over (LRU), and a
 * timer's run restarted into the slot, parked until the pass ends. */
static void test_server_shapes_find_each_bound_without_a_scan(void **state)
{
	enum { n = 400 };
	hrt_time_t t0 = (hrt_time_t)1 << 32, lim;
	unsigned key;
	uint64_t scans;

	(void)state;
	hrt__wheel_init(&w, 0);
	for (int i = 0; i < n; i++) {           /* a 10 % window, one length */
		timers[i].hrt__soft = t0 + i * 1000;
		timers[i].hrt__hard = timers[i].hrt__soft + 100000;
		link_new(&timers[i]);
	}
	key = hrt__wheel_key_of(&timers[0]);
	assert_int_equal(hrt__wheel_key_of(&timers[n - 1]), key);
	scans = w.scans;
	for (int k = 0; k < 10 * n; k++) {      /* LRU: the earliest, pushed on */
		struct hrt_timer *t = &timers[k % n];

		lim = HRT_TIME_MAX;
		assert_ptr_equal(hrt__wheel_min(&w, &lim), t);
		w.last_move = key;
		move_to(t, key, t->hrt__soft + n * 1000, t->hrt__hard + n * 1000);
	}
	for (int i = 0; i < n; i++) {           /* FIFO: cancelled in start order */
		lim = HRT_TIME_MAX;
		assert_ptr_equal(hrt__wheel_min(&w, &lim), &timers[i]);
		hrt__wheel_del(&w, &timers[i]);
		assert_null(hrt__wheel_check(&w, state_ok, NULL));
	}
	assert_int_equal(w.scans, scans);
	assert_int_equal(w.count, 0);
	/* A restart parked while its slot holds later timers: the slot's
	 * bound stays its own, the park's is the restart's. */
	for (int i = 0; i < 3; i++) {
		timers[i].hrt__soft = timers[i].hrt__hard = t0 + 10 + i;
		link_new(&timers[i]);
	}
	timers[3].hrt__soft = timers[3].hrt__hard = t0;
	hrt__wheel_park(&w, &timers[3]);
	lim = HRT_TIME_MAX;
	assert_ptr_equal(hrt__wheel_min(&w, &lim), &timers[0]);
	lim = HRT_TIME_MAX;
	assert_ptr_equal(hrt__wheel_park_min(&w, &lim), &timers[3]);
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	{
		struct hrt_list_node out;

		hrt__list_init(&out);
		hrt__wheel_unpark(&w, &out);
		assert_true(hrt__list_empty(&out));
	}
	lim = HRT_TIME_MAX;
	assert_ptr_equal(hrt__wheel_min(&w, &lim), &timers[3]);
	assert_ptr_equal(hrt__wheel_timer(w.slot[key].head.hrt__prev), &timers[3]);
	assert_true(slot_bit(w.unordered, key));        /* the least, last */
	assert_false(slot_bit(w.unsorted, key));        /* the newest start, last */
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	assert_int_equal(w.scans, scans);
}

/*
 * W5: a slot of more than a search scans, in no order, whose least left:
 * a bounded search answers with the slot's bound (at or before every
 * timer's hard expiry, at or after the slot's start), moves nothing, and
 * marks the slot big, so the next search scans nothing; an unbounded
 * one (hrt__wheel_min) is still exact; the slot leaving (a take by the
 * horizon) clears the mark.  Then the slot's bound is exact again as soon
 * as a timer below it comes in.
 */
static void test_big_slot_answers_with_its_bound_once_scanned(void **state)
{
	enum { n = 3 * HRT_WHEEL_SCAN_MAX };
	hrt_time_t t0 = (hrt_time_t)1 << 32, lim, least = HRT_TIME_MAX;
	struct hrt_timer *min = NULL, *exact;
	unsigned key;
	uint64_t scanned;
	int bound;

	(void)state;
	hrt__wheel_init(&w, 0);
	for (int i = 0; i < n; i++) {           /* one slot, in no order */
		timers[i].hrt__soft = t0 + (hrt_time_t)(i * 7919 % n) * 1000;
		timers[i].hrt__hard = timers[i].hrt__soft + 1000000;
		link_new(&timers[i]);
		if (timers[i].hrt__hard < least) {
			least = timers[i].hrt__hard;
			min = &timers[i];
		}
	}
	key = hrt__wheel_key_of(&timers[0]);
	assert_int_equal(hrt__wheel_key_of(&timers[n - 1]), key);
	assert_true(slot_bit(w.unordered, key));
	hrt__wheel_del(&w, min);                /* the least leaves */
	lim = HRT_TIME_MAX;
	exact = hrt__wheel_min(&w, &lim);       /* unbounded: exact (and a scan) */
	assert_non_null(exact);
	w.slot[key].min = NULL;                 /* as if it had not looked */
	w.slot[key].hard = least;
	scanned = w.scanned;
	lim = HRT_TIME_MAX;
	assert_null(hrt__wheel_min_within(&w, &lim, &bound));
	assert_int_equal(bound, (int)key);
	assert_int_equal(lim, least);           /* the old least's: early */
	assert_true(lim <= exact->hrt__hard);
	assert_true(lim >= hrt__wheel_slot_time(&w, key));
	assert_true(w.scanned - scanned <= HRT_WHEEL_SCAN_MAX);
	assert_true(slot_bit(w.big, key));
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	scanned = w.scanned;
	lim = HRT_TIME_MAX;
	assert_null(hrt__wheel_min_within(&w, &lim, &bound));   /* no scan again */
	assert_int_equal(w.scanned, scanned);
	assert_int_equal(bound, (int)key);
	lim = least;                            /* a limit at the bound: nothing below */
	assert_null(hrt__wheel_min_within(&w, &lim, &bound));
	assert_int_equal(bound, -1);
	assert_int_equal(lim, least);
	/* A timer below the bound comes in: the exact least again. */
	timers[n].hrt__soft = hrt__wheel_slot_time(&w, key);
	timers[n].hrt__hard = least - 1;
	link_new(&timers[n]);
	assert_int_equal(hrt__wheel_key_of(&timers[n]), key);
	lim = HRT_TIME_MAX;
	assert_ptr_equal(hrt__wheel_min_within(&w, &lim, &bound), &timers[n]);
	assert_int_equal(bound, -1);
	/* The horizon past the slot: it leaves whole, and the mark with it. */
	{
		struct hrt_list_node out;
		size_t left = w.count;

		hrt__list_init(&out);
		hrt__wheel_advance(&w, hrt__wheel_jiffy(exact->hrt__hard) + 64 * 64, &out);
		assert_false(slot_bit(w.big, key));
		while (!hrt__list_empty(&out))
			(void)hrt__wheel_out_take(&w, &out);
		assert_null(hrt__wheel_check(&w, state_ok, NULL));
		assert_true(w.count < left);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wheel_matches_model),
		cmocka_unit_test(test_wheel_check_catches),
		cmocka_unit_test(test_wide_window_stays_in_wheel),
		cmocka_unit_test(test_rearm_into_own_slot_stays_or_goes_last),
		cmocka_unit_test(test_server_shapes_find_each_bound_without_a_scan),
		cmocka_unit_test(test_big_slot_answers_with_its_bound_once_scanned),
	};

	return cmocka_run_seeded_tests(tests, argc, argv, 200000);
}
