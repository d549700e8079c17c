/* SPDX-License-Identifier: MIT */
/*
 * wheel.c - the timing wheel of far timers (see wheel.h for the layout and
 * its invariants).  Each operation on one timer is O(1); moving the
 * horizon touches only the slots it passes or enters, found through the
 * per-level occupancy bitmaps, and every timer cascades at most once per
 * level before it reaches the tree.  The earliest hard expiry comes from
 * the slots' bounds (W2), so asking for it moves no timer; a slot in
 * queue order finds its least again by itself (W4), any other is scanned
 * within a search's budget or answers with its bound (W5).  The park
 * (wheel.h) is a slot no search looks at.
 */
#include <string.h>

#include "wheel.h"

/* Moves all of list `from` to the end of `to`, in order; `from` ends empty. */
static inline void list_splice_tail(struct hrt_list_node *to, struct hrt_list_node *from)
{
	if (hrt__list_empty(from))
		return;
	from->hrt__next->hrt__prev = to->hrt__prev;
	to->hrt__prev->hrt__next = from->hrt__next;
	from->hrt__prev->hrt__next = to;
	to->hrt__prev = from->hrt__prev;
	hrt__list_init(from);
}

/* First jiffy of slot `idx` at `level`, for horizon hz. */
static inline uint64_t slot_start(uint64_t hz, unsigned level, unsigned idx)
{
	unsigned up = (level + 1) * HRT_WHEEL_BITS;     /* <= 48 */

	return (hz >> up << up) | ((uint64_t)idx << (level * HRT_WHEEL_BITS));
}

void hrt__wheel_init(struct hrt_wheel *w, hrt_time_t now)
{
	unsigned k;

	hrt__wheel_set_hz(w, hrt__wheel_hz_for(now));
	w->count = 0;
	w->cascades = 0;
	w->scans = 0;
	w->scanned = 0;
	w->last_move = 0;
	w->seq = 0;
	hrt__wheel_fast(w, 1);
	memset(w->occupied, 0, sizeof(w->occupied));
	memset(w->unsorted, 0, sizeof(w->unsorted));
	memset(w->unordered, 0, sizeof(w->unordered));
	memset(w->big, 0, sizeof(w->big));
	for (k = 0; k <= HRT_WHEEL_PARK; k++) {
		hrt__list_init(&w->slot[k].head);
		w->slot[k].min = NULL;
		w->slot[k].hard = HRT_TIME_MAX;
		w->last[k].hard = w->last[k].soft = INT64_MIN;
	}
}

/* Merges the sorted, NULL-terminated chains a and b (by next only). */
static struct hrt_list_node *merge(struct hrt_list_node *a, struct hrt_list_node *b)
{
	struct hrt_list_node head, *tail = &head;

	while (a && b) {
		if (hrt__wheel_seq_of(hrt__wheel_timer(b)) < hrt__wheel_seq_of(hrt__wheel_timer(a))) {
			tail->hrt__next = b;
			b = b->hrt__next;
		} else {
			tail->hrt__next = a;
			a = a->hrt__next;
		}
		tail = tail->hrt__next;
	}
	tail->hrt__next = a ? a : b;
	return head.hrt__next;
}

/* List h (non-empty) in sequence order: a merge sort of runs, bottom up
 * (binary counter of sorted chains), then the back links again.  The
 * sequences are unique, so it is exact. */
static void sort_slot(struct hrt_list_node *h)
{
	struct hrt_list_node *part[64] = { 0 }, *l = h->hrt__next, *c, *prev;
	unsigned i, top = 0;

	h->hrt__prev->hrt__next = NULL;
	while (l) {
		c = l;
		/* A whole ascending run at once: a slot re-armed in place is
		 * mostly runs. */
		while (l->hrt__next && hrt__wheel_seq_of(hrt__wheel_timer(l->hrt__next)) >
		       hrt__wheel_seq_of(hrt__wheel_timer(l)))
			l = l->hrt__next;
		prev = l;
		l = l->hrt__next;
		prev->hrt__next = NULL;
		for (i = 0; i < top && part[i]; i++) {
			c = merge(part[i], c);
			part[i] = NULL;
		}
		if (i == top)
			top++;
		part[i] = c;
	}
	for (c = NULL, i = 0; i < top; i++)
		if (part[i])
			c = c ? merge(part[i], c) : part[i];
	for (prev = h, l = c; l; prev = l, l = l->hrt__next)
		l->hrt__prev = prev;
	prev->hrt__next = h;
	h->hrt__next = c;
	h->hrt__prev = prev;
}

static void scan_slot(struct hrt_wheel *w, unsigned key);

/*
 * Every wheel timer numbered afresh from 0 in start order: all of them on
 * one list, sorted by their old sequence, numbered, and dealt back to the
 * slots they name (the park too), whose bounds and order are then found
 * again.  Start order must hold across slots, not only in each: a parked
 * timer ties with timers of the slot it will go to.  O(n log n), once per
 * 2^54 starts.
 */
void hrt__wheel_renumber(struct hrt_wheel *w)
{
	struct hrt_list_node all, *l;
	unsigned key;

	hrt__list_init(&all);
	for (key = 0; key <= HRT_WHEEL_PARK; key++)
		list_splice_tail(&all, &w->slot[key].head);
	w->seq = 0;
	if (!hrt__list_empty(&all))
		sort_slot(&all);
	for (l = all.hrt__next; l != &all; l = l->hrt__next) {
		struct hrt_timer *t = hrt__wheel_timer(l);

		t->hrt__off.hrt__slot = hrt__wheel_key_of(t) | w->seq;
		w->seq += UINT64_C(1) << HRT_WHEEL_KEY_BITS;
	}
	while (!hrt__list_empty(&all)) {
		l = all.hrt__next;
		hrt__wheel_list_del(l);
		hrt__wheel_list_add(&w->slot[hrt__wheel_key_of(hrt__wheel_timer(l))].head, l);
	}
	/* Start order in each slot now (W3); a scan finds its bound, and
	 * whether that is also queue order (W4). */
	memset(w->unsorted, 0, sizeof(w->unsorted));
	memset(w->big, 0, sizeof(w->big));     /* each scanned whole below */
	for (key = 0; key <= HRT_WHEEL_PARK; key++)
		if (!hrt__list_empty(&w->slot[key].head))
			scan_slot(w, key);
}

/* Slot `key` whole to the end of out; sorted first only if asked (a
 * cascade re-places timers by their keys and sorts what must leave).  Its
 * timers stay in w->count until taken off out (hrt__wheel_out_take):
 * counting them here would walk the list once more, a cache miss a timer
 * when the pass takes many. */
static void take_slot(struct hrt_wheel *w, unsigned key, struct hrt_list_node *out, int sort)
{
	struct hrt_wheel_slot *sl = &w->slot[key];
	struct hrt_list_node *h = &sl->head;
	uint64_t bit = hrt__wheel_bit(key);

	if (w->unsorted[key / HRT_WHEEL_SLOTS] & bit) {
		w->unsorted[key / HRT_WHEEL_SLOTS] &= ~bit;
		if (sort)
			sort_slot(h);
	}
	list_splice_tail(out, h);
	w->occupied[key / HRT_WHEEL_SLOTS] &= ~bit;
	w->unordered[key / HRT_WHEEL_SLOTS] &= ~bit;
	w->big[key / HRT_WHEEL_SLOTS] &= ~bit;
	w->last[key].hard = w->last[key].soft = INT64_MIN;
	sl->min = NULL;
	sl->hard = HRT_TIME_MAX;
}

/* W2 as t comes into slot sl keeping its sequence (a cascade, a scan),
 * which may be older than the slot's least's. */
static void bound_enter_seq(struct hrt_wheel_slot *sl, struct hrt_timer *t)
{
	if (t->hrt__hard < sl->hard ||
	    (t->hrt__hard == sl->hard && sl->min && hrt__wheel_before(t, sl->min))) {
		sl->hard = t->hrt__hard;
		sl->min = t;
	}
}

/* t (cascading or leaving the park; still counted) to the tail of slot
 * `key`, keeping its sequence; the slot is marked unsorted if that puts it
 * behind a later start (W3), unordered if behind one it comes before in
 * queue order (W4: the tail itself, for its sequence; no fast path comes
 * here). */
static void relink(struct hrt_wheel *w, struct hrt_timer *t, unsigned key)
{
	struct hrt_list_node *h = hrt__wheel_head(w, key);
	uint64_t bit = hrt__wheel_bit(key);

	if (h->hrt__prev != h &&
	    hrt__wheel_seq_of(hrt__wheel_timer(h->hrt__prev)) > hrt__wheel_seq_of(t))
		w->unsorted[key / HRT_WHEEL_SLOTS] |= bit;
	if (!(w->unordered[key / HRT_WHEEL_SLOTS] & bit)) {
		if (h->hrt__prev != h && hrt__wheel_before(t, hrt__wheel_timer(h->hrt__prev))) {
			w->unordered[key / HRT_WHEEL_SLOTS] |= bit;
		} else {
			w->last[key].hard = t->hrt__hard;
			w->last[key].soft = t->hrt__soft;
		}
	}
	hrt__wheel_list_add(h, &t->hrt__off.hrt__link);
	bound_enter_seq(&w->slot[key], t);
	w->occupied[key / HRT_WHEEL_SLOTS] |= hrt__wheel_bit(key);
	t->hrt__off.hrt__slot = key | (t->hrt__off.hrt__slot & ~HRT_WHEEL_KEY_MASK);
}

/* The horizon to hz (> w->hz): every slot wholly below it to out, the
 * slots holding it cascaded. */
static void advance_to(struct hrt_wheel *w, uint64_t hz, struct hrt_list_node *out)
{
	struct hrt_list_node redo, gone;
	uint64_t old = w->hz;
	unsigned level;

	/*
	 * Classify every occupied slot against the old layout: wholly below
	 * the new horizon (to out), holding it (cascade: re-placed below), or
	 * above it, where the new layout puts it in the same slot (it shares
	 * the bits above its level with both horizons).
	 */
	hrt__list_init(&redo);
	for (level = 0; level < HRT_WHEEL_LEVELS; level++) {
		uint64_t bits = w->occupied[level], width = UINT64_C(1) << (level * HRT_WHEEL_BITS);

		while (bits) {
			unsigned idx = (unsigned)__builtin_ctzll(bits);
			uint64_t a = slot_start(old, level, idx);

			bits &= bits - 1;
			if (a + width <= hz)
				take_slot(w, level * HRT_WHEEL_SLOTS + idx, out, 1);
			else if (a <= hz && level > 0)
				take_slot(w, level * HRT_WHEEL_SLOTS + idx, &redo, 0);
		}
	}
	hrt__wheel_set_hz(w, hz);
	/*
	 * The cascade: each timer that still fits to its new slot, in list
	 * order, keeping its sequence.  The others leave, sorted by sequence:
	 * a slot is taken unsorted to cascade, and timers with equal soft
	 * expiry, all in this one slot, must leave in start order (W3).
	 */
	hrt__list_init(&gone);
	while (!hrt__list_empty(&redo)) {
		struct hrt_list_node *l = redo.hrt__next;
		struct hrt_timer *t = hrt__wheel_timer(l);
		int key = hrt__wheel_key(w, t->hrt__soft);

		hrt__wheel_list_del(l);
		if (key >= 0) {
			relink(w, t, (unsigned)key);
			w->cascades++;
		} else {
			hrt__wheel_list_add(&gone, l);
		}
	}
	if (hrt__list_empty(&gone))
		return;
	sort_slot(&gone);
	list_splice_tail(out, &gone);
}

/* The earliest non-empty slot: 0, or 1 with its level and index. */
static int first_slot(const struct hrt_wheel *w, unsigned *level, unsigned *idx)
{
	unsigned l;

	for (l = 0; l < HRT_WHEEL_LEVELS; l++) {
		if (w->occupied[l]) {
			*level = l;
			*idx = (unsigned)__builtin_ctzll(w->occupied[l]);
			return 1;
		}
	}
	return 0;
}

/*
 * A jump of the horizon past whole slots of upper levels (a pass after a
 * long sleep, or long after the timers were started) takes them in time
 * order a level at a time: the earliest slot, if it lies wholly below hz,
 * goes out (level 0) or is cascaded into the levels below by moving the
 * horizon to its start.  So timers leave sorted by soft jiffy, and the
 * tree takes them near its right edge, in lines it has just touched:
 * taken whole, a slot of 4 s at 10^6 timers fed the tree in random order,
 * a cache miss per level per insert (2 us a timer; each cascade costs a
 * list move instead).  A short advance finds no such slot.
 */
void hrt__wheel_advance(struct hrt_wheel *w, uint64_t hz, struct hrt_list_node *out)
{
	unsigned level, idx;

	while (hz > w->hz && first_slot(w, &level, &idx)) {
		uint64_t a = slot_start(w->hz, level, idx);

		if (a + (UINT64_C(1) << (level * HRT_WHEEL_BITS)) > hz)
			break;                  /* holds hz: advance_to cascades it */
		if (level == 0)
			take_slot(w, idx, out, 1);
		else if (a > w->hz)
			advance_to(w, a, out);  /* cascades it: its start is the horizon */
		else
			break;                  /* (not reached: a slot above level 0 starts past hz) */
	}
	if (hz > w->hz)
		advance_to(w, hz, out);
}

/* The occupied slots in time order - level by level, each in index order -
 * up to the first that starts at or after `limit`: the key of the next, or
 * -1.  A slot's timers all have soft and hard >= its start (W1), so the
 * searches below stop there. */
struct slot_iter {
	unsigned level;
	uint64_t bits;
};

static void slot_iter_init(const struct hrt_wheel *w, struct slot_iter *it)
{
	it->level = 0;
	it->bits = w->occupied[0];
}

static int slot_next(const struct hrt_wheel *w, struct slot_iter *it, hrt_time_t limit)
{
	unsigned idx;

	while (!it->bits) {
		if (++it->level == HRT_WHEEL_LEVELS)
			return -1;
		it->bits = w->occupied[it->level];
	}
	idx = (unsigned)__builtin_ctzll(it->bits);
	it->bits &= it->bits - 1;
	if (hrt__wheel_time(slot_start(w->hz, it->level, idx)) >= limit) {
		it->level = HRT_WHEEL_LEVELS - 1;       /* done: the next call too */
		it->bits = 0;
		return -1;
	}
	return (int)(it->level * HRT_WHEEL_SLOTS + idx);
}

/*
 * W2: slot `key`'s exact least and the timer that has it, by a scan of at
 * most *budget timers (taken off the budget): 0, and the slot as it was,
 * if it holds more.  Found in queue order after all (a slot whose
 * out-of-order timers left), it is ordered again, and finds its least by
 * itself (W4).
 */
static int scan_slot_within(struct hrt_wheel *w, unsigned key, uint64_t *budget)
{
	struct hrt_wheel_slot *sl = &w->slot[key];
	struct hrt_list_node *l;
	struct hrt_timer *prev = NULL, *t, *min = NULL;
	hrt_time_t hard = HRT_TIME_MAX;
	uint64_t n = 0;
	int sorted = 1;

	for (l = sl->head.hrt__next; l != &sl->head; l = l->hrt__next) {
		if (n == *budget) {
			w->scanned += n;
			*budget = 0;
			return 0;
		}
		n++;
		t = hrt__wheel_timer(l);
		if (!min || t->hrt__hard < hard ||
		    (t->hrt__hard == hard && hrt__wheel_before(t, min))) {
			hard = t->hrt__hard;
			min = t;
		}
		if (prev && hrt__wheel_before(t, prev))
			sorted = 0;
		prev = t;
	}
	w->scanned += n;
	*budget -= n;
	w->scans++;
	sl->min = min;
	sl->hard = hard;
	if (sorted) {
		w->unordered[key / HRT_WHEEL_SLOTS] &= ~hrt__wheel_bit(key);
		w->last[key].hard = prev->hrt__hard;    /* the tail: the last */
		w->last[key].soft = prev->hrt__soft;
	} else {
		w->unordered[key / HRT_WHEEL_SLOTS] |= hrt__wheel_bit(key);
	}
	return 1;
}

static void scan_slot(struct hrt_wheel *w, unsigned key)
{
	uint64_t all = UINT64_MAX;

	scan_slot_within(w, key, &all);
}

/* W2 exact again for slot `key`, whose least left: an ordered slot's first
 * timer (O(1), W4), else a scan within *budget (W5): 0 if the slot holds
 * more than that (nothing changed). */
static int find_min(struct hrt_wheel *w, unsigned key, uint64_t *budget)
{
	struct hrt_wheel_slot *sl = &w->slot[key];

	if (!(w->unordered[key / HRT_WHEEL_SLOTS] & hrt__wheel_bit(key))) {
		sl->min = hrt__wheel_timer(sl->head.hrt__next);
		sl->hard = sl->min->hrt__hard;
		return 1;
	}
	/* Given up on once: its bound, with no scan that would give up
	 * again (a search each op, 128 timers each, for nothing). */
	if (w->big[key / HRT_WHEEL_SLOTS] & hrt__wheel_bit(key))
		return 0;
	if (scan_slot_within(w, key, budget))
		return 1;
	w->big[key / HRT_WHEEL_SLOTS] |= hrt__wheel_bit(key);
	return 0;
}

/*
 * The slots' least below *limit, or (bound != NULL) a slot's bound that
 * stands for it (W5): *bound = the slot, *limit = its bound, NULL.  A
 * later slot may still hold a timer below that bound: the search goes on,
 * and a timer found there is the exact answer again.
 */
static struct hrt_timer *wheel_min(struct hrt_wheel *w, hrt_time_t *limit, int *bound)
{
	struct hrt_timer *best = NULL;
	struct slot_iter it;
	hrt_time_t lim = *limit;
	uint64_t budget = bound ? HRT_WHEEL_SCAN_MAX : UINT64_MAX;
	int key, by = -1;

	if (!w->count)
		goto out;
	/* The first slot starting at or after the best so far ends it. */
	slot_iter_init(w, &it);
	while ((key = slot_next(w, &it, lim)) >= 0) {
		struct hrt_wheel_slot *sl = &w->slot[key];

		if (sl->hard >= lim)
			continue;       /* a bound: nothing here is below */
		if (!sl->min && !find_min(w, (unsigned)key, &budget)) {
			lim = sl->hard; /* only a bound: W5 */
			best = NULL;
			by = key;
			continue;
		}
		if (sl->hard < lim) {
			lim = sl->hard;
			best = sl->min;
			by = -1;
		}
	}
	if (best || by >= 0)
		*limit = lim;
out:
	if (bound)
		*bound = by;
	return best;
}

struct hrt_timer *hrt__wheel_min(struct hrt_wheel *w, hrt_time_t *limit)
{
	return wheel_min(w, limit, NULL);
}

struct hrt_timer *hrt__wheel_min_within(struct hrt_wheel *w, hrt_time_t *limit, int *bound)
{
	return wheel_min(w, limit, bound);
}

static struct hrt_timer *park_min(struct hrt_wheel *w, hrt_time_t *limit, int *bound)
{
	struct hrt_wheel_slot *sl = &w->slot[HRT_WHEEL_PARK];
	uint64_t budget = bound ? HRT_WHEEL_SCAN_MAX : UINT64_MAX;

	if (bound)
		*bound = -1;
	if (sl->hard >= *limit)
		return NULL;
	if (!sl->min && !find_min(w, HRT_WHEEL_PARK, &budget)) {
		*limit = sl->hard;              /* only a bound: W5 */
		*bound = HRT_WHEEL_PARK;
		return NULL;
	}
	if (sl->hard >= *limit)
		return NULL;
	*limit = sl->hard;
	return sl->min;
}

struct hrt_timer *hrt__wheel_park_min(struct hrt_wheel *w, hrt_time_t *limit)
{
	return park_min(w, limit, NULL);
}

struct hrt_timer *hrt__wheel_park_min_within(struct hrt_wheel *w, hrt_time_t *limit, int *bound)
{
	return park_min(w, limit, bound);
}

/* Each parked timer to its slot, keeping its sequence, or to out if the
 * horizon passed it. */
void hrt__wheel_unpark(struct hrt_wheel *w, struct hrt_list_node *out)
{
	struct hrt_list_node park;

	hrt__list_init(&park);
	take_slot(w, HRT_WHEEL_PARK, &park, 0);
	while (!hrt__list_empty(&park)) {
		struct hrt_list_node *l = park.hrt__next;
		struct hrt_timer *t = hrt__wheel_timer(l);
		int key = hrt__wheel_key(w, t->hrt__soft);

		hrt__wheel_list_del(l);
		if (key < 0)
			hrt__wheel_list_add(out, l);
		else
			relink(w, t, (unsigned)key);
	}
}

struct hrt_timer *hrt__wheel_least_soft(const struct hrt_wheel *w, hrt_time_t below,
					unsigned budget)
{
	const struct hrt_list_node *h, *l;
	struct hrt_timer *best = NULL, *t;
	struct slot_iter it;
	int key;

	slot_iter_init(w, &it);
	if ((key = slot_next(w, &it, below)) < 0)
		return NULL;
	h = &w->slot[key].head;
	for (l = h->hrt__next; l != h && budget; l = l->hrt__next, budget--) {
		t = hrt__wheel_timer(l);
		if (!best || t->hrt__soft < best->hrt__soft ||
		    (t->hrt__soft == best->hrt__soft && hrt__wheel_seq_of(t) < hrt__wheel_seq_of(best)))
			best = t;
	}
	return best;
}

/* The park's timers first go back among the timers they tie with (their
 * slots, in start order), so that the tree takes all of them in queue
 * order. */
void hrt__wheel_take_all(struct hrt_wheel *w, struct hrt_list_node *out)
{
	unsigned level;

	hrt__wheel_unpark(w, out);
	for (level = 0; level < HRT_WHEEL_LEVELS; level++)
		while (w->occupied[level])
			take_slot(w, level * HRT_WHEEL_SLOTS +
				  (unsigned)__builtin_ctzll(w->occupied[level]), out, 1);
}

const char *hrt__wheel_check(const struct hrt_wheel *w,
			     int (*ok)(const struct hrt_timer *t, const void *ctx),
			     const void *ctx)
{
	size_t count = 0;
	unsigned key;

	for (key = 0; key <= HRT_WHEEL_PARK; key++) {
		const struct hrt_wheel_slot *sl = &w->slot[key];
		const struct hrt_wheel_last *ls = &w->last[key];
		const struct hrt_list_node *h = &sl->head, *l, *prev = h;
		unsigned level = key / HRT_WHEEL_SLOTS, idx = key % HRT_WHEEL_SLOTS;
		int has_min = 0, park = key == HRT_WHEEL_PARK;
		int bit = !!(w->occupied[level] & hrt__wheel_bit(key));
		int sorted = !(w->unsorted[level] & hrt__wheel_bit(key));
		int ordered = !(w->unordered[level] & hrt__wheel_bit(key));

		if (bit != !hrt__list_empty(h))
			return "wheel occupancy bit wrong";
		if (!bit && (!sorted || !ordered))
			return "empty wheel slot marked out of order";
		if (!bit && (w->big[level] & hrt__wheel_bit(key)))
			return "empty wheel slot marked big";
		if (!bit && (ls->hard != INT64_MIN || ls->soft != INT64_MIN))
			return "empty wheel slot with last keys";
		for (l = h->hrt__next; l != h; prev = l, l = l->hrt__next) {
			const struct hrt_timer *t, *p;
			uint64_t js;

			if (!l || l->hrt__prev != prev)
				return "wheel slot list broken";
			if (++count > w->count)
				return "wheel count wrong";
			t = hrt__wheel_timer(l);
			p = prev != h ? hrt__wheel_timer(prev) : NULL;
			js = hrt__wheel_jiffy(t->hrt__soft);
			if (js < w->hz || t->hrt__soft > t->hrt__hard)
				return "wheel timer behind the horizon";
			if (!park && (hrt__wheel_level(js, w->hz) != level ||
				      hrt__wheel_slot(js, level) != idx))
				return "wheel timer in the wrong slot";
			if (t->hrt__hard < sl->hard)
				return "wheel slot bound above a hard expiry";
			if (sl->min == t)
				has_min = 1;
			else if (sl->min && hrt__wheel_before(t, sl->min))
				return "wheel slot's least not its first in queue order";
			if (hrt__wheel_key_of(t) != key)
				return "wheel timer's remembered slot wrong";
			if (hrt__wheel_seq_of(t) >= w->seq >> HRT_WHEEL_KEY_BITS)
				return "wheel timer's sequence not below the next";
			if (sorted && p && hrt__wheel_seq_of(t) <= hrt__wheel_seq_of(p))
				return "wheel slot marked sorted out of sequence order";
			if (ordered && p && hrt__wheel_before(t, p))
				return "wheel slot marked ordered out of queue order";
			if (ordered && hrt__wheel_keys_less(ls->hard, ls->soft, t->hrt__hard, t->hrt__soft))
				return "ordered wheel slot's last keys before one of its timers";
			if (ok(t, ctx))
				return "wheel timer with a wrong state word";
		}
		if (h->hrt__prev != prev)
			return "wheel slot back link wrong";
		if (sl->min && (!has_min || sl->min->hrt__hard != sl->hard))
			return "wheel slot bound's timer not in the slot or not at the bound";
		if (!bit && (sl->min || sl->hard != HRT_TIME_MAX))
			return "empty wheel slot with a bound";
	}
	return count == w->count ? NULL : "wheel count wrong";
}

hrt_time_t hrt__wheel_slot_time(const struct hrt_wheel *w, unsigned key)
{
	return hrt__wheel_time(slot_start(w->hz, key / HRT_WHEEL_SLOTS, key % HRT_WHEEL_SLOTS));
}
