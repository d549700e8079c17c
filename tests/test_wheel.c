/* SPDX-License-Identifier: MIT */
/*
 * test_wheel.c - the timing wheel (wheel.h) on its own, against a model
 * that knows only invariant W1: a timer belongs in the wheel exactly when
 * its hard jiffy is at or past the horizon and its soft expiry lies in the
 * same slot.  Random places, deletes, horizon moves, steps and pulls
 * towards the first slot, scans and take-alls, with the checker after each;
 * whatever leaves must be exactly what no longer fits, in FIFO order among
 * equal hard expiries (W2); and the checker against corrupted wheels.
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
static int in[N];               /* the model: in the wheel */
static uint64_t seqs[N];        /* when placed: FIFO among equal hard */
static uint64_t seq;
static struct hrt_wheel w;
static uint64_t moved, fill;

/* W1, computed from the layout's constants alone. */
static int fits(const struct hrt_timer *t, uint64_t hz)
{
	uint64_t jh = hrt__wheel_jiffy(t->hrt__hard), js = hrt__wheel_jiffy(t->hrt__soft), x;
	unsigned level;

	if (jh < hz || js < hz)
		return 0;
	x = jh ^ hz;
	level = x ? (unsigned)(63 - __builtin_clzll(x)) / HRT_WHEEL_BITS : 0;
	return (js ^ jh) >> (level * HRT_WHEEL_BITS) == 0;
}

static int state_ok(const struct hrt_timer *t, const void *ctx)
{
	(void)t, (void)ctx;
	return 0;
}

/* An instant from the horizon on, spread over every level (a few behind
 * it), with few distinct values so equal hard expiries are common. */
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

static size_t model_count(void)
{
	size_t n = 0;

	for (int i = 0; i < N; i++)
		n += in[i];
	return n;
}

static int by_hard_then_pos(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;       /* {hard (biased), position, seq} */

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : 1;
}

/* The slot of t's hard jiffy for horizon hz (-1: behind it). */
static long slot_key(const struct hrt_timer *t, uint64_t hz)
{
	uint64_t jh = hrt__wheel_jiffy(t->hrt__hard);
	unsigned level;

	if (jh < hz)
		return -1;
	level = hrt__wheel_level(jh, hz);
	return (long)(level * HRT_WHEEL_SLOTS + hrt__wheel_slot(jh, level));
}

/* out, a list just taken from the wheel: every timer on it was in the
 * model and either no longer fits hz or shares its slot with one that
 * does not (W2 took it along); FIFO among equal hard expiries.  Empties
 * out and the model's entries.  Returns how many there were. */
static size_t take_out(struct hrt_list_node *out, uint64_t hz, const struct hrt_timer *fresh)
{
	static uint64_t rows[N][3];
	static long along[N];
	size_t n = 0, n_along = 0;
	int seen[HRT_WHEEL_LEVELS * HRT_WHEEL_SLOTS] = { 0 };

	while (!hrt__list_empty(out)) {
		struct hrt_timer *t = hrt__wheel_timer(out->hrt__next);
		int i = (int)(t - timers);

		hrt__wheel_list_del(&t->hrt__off.hrt__link);
		if (t != fresh) {
			assert_true(in[i]);
			in[i] = 0;
		}
		if (fits(t, hz))
			along[n_along++] = slot_key(t, hz);
		else if (slot_key(t, hz) >= 0)
			seen[slot_key(t, hz)] = 1;
		rows[n][0] = (uint64_t)t->hrt__hard ^ (UINT64_C(1) << 63);
		rows[n][1] = n;
		rows[n][2] = seqs[i];
		n++;
	}
	for (size_t j = 0; j < n_along; j++)
		assert_true(seen[along[j]]);
	qsort(rows, n, sizeof(rows[0]), by_hard_then_pos);
	for (size_t j = 1; j < n; j++)
		if (rows[j][0] == rows[j - 1][0])
			assert_true(rows[j][2] > rows[j - 1][2]);
	return n;
}

static void check_all(void)
{
	hrt_time_t min = HRT_TIME_MAX, got;

	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	assert_int_equal(w.count, model_count());
	for (int i = 0; i < N; i++) {
		if (!in[i])
			continue;
		assert_true(fits(&timers[i], w.hz));
		if (timers[i].hrt__hard < min)
			min = timers[i].hrt__hard;
	}
	if (!w.count) {
		assert_int_equal(hrt__wheel_first(&w), HRT_TIME_MAX);
		return;
	}
	/* first is a slot's start: at or past the horizon, <= every expiry */
	assert_true(hrt__wheel_first(&w) <= min);
	assert_true(hrt__wheel_first(&w) >= hrt__wheel_horizon(&w));
	if (hrt__wheel_scan_first(&w, &got))
		assert_int_equal(got, min);
}

static void place(int i, hrt_time_t now)
{
	struct hrt_list_node out;
	hrt_time_t a = rnd_after(now), b = rnd_after(now);
	int want, got;

	timers[i].hrt__soft = a < b ? a : b;
	timers[i].hrt__hard = a < b ? b : a;
	if (unit_rng() % 4)
		timers[i].hrt__soft = timers[i].hrt__hard - (hrt_time_t)(unit_rng() % 5000);
	want = fits(&timers[i], w.hz);
	seqs[i] = ++seq;
	hrt__list_init(&out);
	got = hrt__wheel_place(&w, &timers[i], &out);
	assert_int_equal(got, want);
	if (got) {
		in[i] = 1;
		assert_true(hrt__list_empty(&out));
		return;
	}
	/* The timer itself last, after the slot W2 took (which still fits:
	 * UINT64_MAX skips that test). */
	assert_ptr_equal(hrt__wheel_timer(out.hrt__prev), &timers[i]);
	moved += take_out(&out, UINT64_MAX, &timers[i]) - 1;
}

/* A queued timer re-armed: often into its own slot (where the wheel only
 * renumbers it if the re-arm before went to that slot too, else moves it
 * to the tail: both chosen at random here), onto another timer's hard
 * expiry, or anywhere. */
static void rearm(int i)
{
	struct hrt_timer *t = &timers[i], *o = &timers[unit_rng() % N];
	hrt_time_t soft = t->hrt__soft, hard = t->hrt__hard;
	int key;

	switch (unit_rng() % 4) {
	case 0:
		hard = o->hrt__hard;
		soft = hard;
		break;
	case 1:
		soft = hard = rnd_after(hrt__wheel_horizon(&w));
		break;
	default:                /* inside the slot, maybe at an edge */
		hard += (hrt_time_t)(unit_rng() % 3) - 1;
		soft = hard;
		break;
	}
	key = hrt__wheel_key(&w, soft, hard);
	if (key < 0)
		return;
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
			now = hrt__wheel_horizon(&w) +
			      (hrt_time_t)(unit_rng() % (UINT64_C(1) << (unit_rng() % 30)));
			hz = hrt__wheel_hz_for(now);
			hrt__wheel_advance(&w, hz, &out);
			assert_true(w.hz >= hz);
			take_out(&out, w.hz, NULL);
			break;
		case 11:
			if (unit_rng() % 4)
				break;
			hz = w.hz;
			hrt__wheel_step_first(&w, &out);
			assert_true(w.hz >= hz);
			take_out(&out, w.hz, NULL);
			break;
		case 12: {
			size_t before = w.count;

			if (unit_rng() % 4)
				break;
			hrt__wheel_pull_first(&w, &out);
			assert_true(take_out(&out, w.hz, NULL) > 0 || before == 0);
			break;
		}
		case 13:
			if (unit_rng() % 64 == 0) {
				hrt__wheel_take_all(&w, &out);
				assert_int_equal(w.count, 0);
				take_out(&out, UINT64_MAX, NULL);
			}
			break;
		case 14: case 15:
			if (in[i])
				rearm(i);
			break;
		default:
			break;
		}
		check_all();
		fill += w.count;
	}
	printf("%ld steps: %llu in the wheel on average, %llu taken with a slot (W2), %llu cascades\n",
	       unit_steps, (unsigned long long)(fill / (uint64_t)unit_steps), (unsigned long long)moved,
	       (unsigned long long)w.cascades);
}

static void test_wheel_check_catches(void **state)
{
	struct hrt_list_node out;
	struct hrt_timer *t;

	(void)state;
	hrt__wheel_init(&w, 0);
	for (int i = 0; i < 8; i++) {
		timers[i].hrt__hard = timers[i].hrt__soft = (hrt_time_t)1 << (30 + i);
		hrt__list_init(&out);
		assert_true(hrt__wheel_place(&w, &timers[i], &out));
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
	timers[5].hrt__hard = timers[5].hrt__soft = t->hrt__hard + 1;
	hrt__wheel_move(&w, &timers[5], hrt__wheel_key_of(t));
	hrt__wheel_move(&w, t, hrt__wheel_key_of(t));   /* in place, marked unsorted */
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
	w.unsorted[hrt__wheel_key_of(t) / HRT_WHEEL_SLOTS] = 0;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel slot marked sorted out of sequence order");
}

/* The slot's timers, head to tail. */
static void assert_slot(unsigned key, struct hrt_timer *a, struct hrt_timer *b,
			struct hrt_timer *c)
{
	struct hrt_timer *want[] = { a, b, c };
	const struct hrt_list_node *h = &w.slot[key], *l = h->hrt__next;

	for (int i = 0; i < 3 && want[i]; i++, l = l->hrt__next)
		assert_ptr_equal(hrt__wheel_timer(l), want[i]);
	assert_ptr_equal(l, h);
	assert_null(hrt__wheel_check(&w, state_ok, NULL));
}

/* hrt__wheel_move_ into a timer's own slot: after a re-arm into the same
 * slot, it stays in place, renumbered, and the slot is marked unsorted
 * (unless it was the tail); after one into another slot, it goes to the
 * tail with its new number and the slot stays sorted; alone in its slot,
 * the slot stays occupied. */
static void test_rearm_into_own_slot_stays_or_goes_last(void **state)
{
	struct hrt_list_node out;
	struct hrt_timer *a = &timers[0], *b = &timers[1], *c = &timers[2], *d = &timers[3];
	unsigned key, kd;

	(void)state;
	hrt__wheel_init(&w, 0);
	for (int i = 0; i < 4; i++) {
		timers[i].hrt__hard = timers[i].hrt__soft = ((hrt_time_t)1 << 32) + i;
		if (i == 3)
			d->hrt__hard = d->hrt__soft = (hrt_time_t)1 << 36;
		hrt__list_init(&out);
		assert_true(hrt__wheel_place(&w, &timers[i], &out));
	}
	key = hrt__wheel_key_of(a);
	kd = hrt__wheel_key_of(d);
	assert_int_equal(hrt__wheel_key_of(c), key);
	assert_int_not_equal(kd, key);

	w.last_move = key;                      /* a run into one slot: asks */
	hrt__wheel_move(&w, a, key);            /* stays, out of order */
	assert_slot(key, a, b, c);
	assert_true(w.unsorted[key / HRT_WHEEL_SLOTS] & hrt__wheel_bit(key));
	w.unsorted[key / HRT_WHEEL_SLOTS] = 0;
	assert_string_equal(hrt__wheel_check(&w, state_ok, NULL),
			    "wheel slot marked sorted out of sequence order");
	hrt__wheel_move(&w, a, key);            /* the tail first, then b */
	hrt__wheel_move(&w, b, key);
	hrt__wheel_move(&w, c, key);
	assert_slot(key, a, b, c);
	w.unsorted[key / HRT_WHEEL_SLOTS] = 0;
	assert_null(hrt__wheel_check(&w, state_ok, NULL));

	hrt__wheel_move(&w, d, kd);             /* another slot: no asking */
	assert_slot(kd, d, NULL, NULL);         /* alone: out and back in */
	assert_true(w.occupied[kd / HRT_WHEEL_SLOTS] & hrt__wheel_bit(kd));
	assert_int_equal(w.last_move, kd);
	hrt__wheel_move(&w, a, key);
	assert_slot(key, b, c, a);
	assert_false(w.unsorted[key / HRT_WHEEL_SLOTS] & hrt__wheel_bit(key));
	assert_int_equal(w.count, 4);
	b->hrt__hard = b->hrt__soft = d->hrt__hard + 1;
	hrt__wheel_move(&w, b, kd);             /* into another slot: moves */
	assert_slot(kd, d, b, NULL);
	assert_slot(key, c, a, NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wheel_matches_model),
		cmocka_unit_test(test_wheel_check_catches),
		cmocka_unit_test(test_rearm_into_own_slot_stays_or_goes_last),
	};

	return cmocka_run_seeded_tests(tests, argc, argv, 200000);
}
