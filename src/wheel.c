/* SPDX-License-Identifier: MIT */
/*
 * wheel.c - the timing wheel of far timers (see wheel.h for the layout and
 * its two invariants).  Each operation on one timer is O(1); moving the
 * horizon touches only the slots it passes or enters, found through the
 * per-level occupancy bitmaps, and every timer cascades at most once per
 * level before it reaches the tree.
 */
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
	unsigned l, i;

	hrt__wheel_set_hz(w, hrt__wheel_hz_for(now));
	w->count = 0;
	w->cascades = 0;
	w->last_move = 0;
	w->seq = 0;
	for (l = 0; l < HRT_WHEEL_LEVELS; l++) {
		w->occupied[l] = 0;
		w->unsorted[l] = 0;
		for (i = 0; i < HRT_WHEEL_SLOTS; i++)
			hrt__list_init(&w->slot[l * HRT_WHEEL_SLOTS + i]);
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

void hrt__wheel_renumber(struct hrt_wheel *w)
{
	unsigned level, idx;

	w->seq = 0;
	for (level = 0; level < HRT_WHEEL_LEVELS; level++) {
		for (idx = 0; idx < HRT_WHEEL_SLOTS; idx++) {
			struct hrt_list_node *h = &w->slot[level * HRT_WHEEL_SLOTS + idx], *l;

			if (hrt__list_empty(h))
				continue;
			if (w->unsorted[level] & (UINT64_C(1) << idx))
				sort_slot(h);
			for (l = h->hrt__next; l != h; l = l->hrt__next) {
				hrt__wheel_timer(l)->hrt__off.hrt__slot =
					(level * HRT_WHEEL_SLOTS + idx) | w->seq;
				w->seq += UINT64_C(1) << HRT_WHEEL_KEY_BITS;
			}
		}
		w->unsorted[level] = 0;
	}
}

/* The timers on list h, counted up to max + 1. */
static size_t list_count(const struct hrt_list_node *h, size_t max)
{
	const struct hrt_list_node *l;
	size_t n = 0;

	for (l = h->hrt__next; l != h && n <= max; l = l->hrt__next)
		n++;
	return n;
}

/* Slot (level, idx) whole to the end of out; sorted first only if asked
 * (a cascade re-places timers by their keys and sorts what must leave).
 * Counted as it leaves: its timers are about to be walked anyway. */
static void take_slot(struct hrt_wheel *w, unsigned level, unsigned idx,
		      struct hrt_list_node *out, int sort)
{
	struct hrt_list_node *h = &w->slot[level * HRT_WHEEL_SLOTS + idx];

	if (w->unsorted[level] & (UINT64_C(1) << idx)) {
		w->unsorted[level] &= ~(UINT64_C(1) << idx);
		if (sort)
			sort_slot(h);
	}
	w->count -= list_count(h, SIZE_MAX - 1);
	list_splice_tail(out, h);
	w->occupied[level] &= ~(UINT64_C(1) << idx);
}

void hrt__wheel_take_slot(struct hrt_wheel *w, unsigned level, unsigned idx,
			  struct hrt_list_node *out)
{
	take_slot(w, level, idx, out, 1);
}

/* t (cascading) to the tail of slot `key`, keeping its sequence; the slot
 * is marked unsorted if that puts it behind a later start (W3). */
static void relink(struct hrt_wheel *w, struct hrt_timer *t, unsigned key)
{
	struct hrt_list_node *h = hrt__wheel_head(w, key);

	if (h->hrt__prev != h &&
	    hrt__wheel_seq_of(hrt__wheel_timer(h->hrt__prev)) > hrt__wheel_seq_of(t))
		w->unsorted[key / HRT_WHEEL_SLOTS] |= hrt__wheel_bit(key);
	hrt__wheel_list_add(h, &t->hrt__off.hrt__link);
	w->occupied[key / HRT_WHEEL_SLOTS] |= hrt__wheel_bit(key);
	w->count++;
	t->hrt__off.hrt__slot = key | (t->hrt__off.hrt__slot & ~HRT_WHEEL_KEY_MASK);
}

void hrt__wheel_to_tree(struct hrt_wheel *w, struct hrt_timer *t, struct hrt_list_node *out)
{
	uint64_t jh = hrt__wheel_jiffy(t->hrt__hard);

	/* Hard expiry in the wheel's range, soft expiry before the horizon or
	 * in another slot (W1): behind the timers already waiting for the same
	 * hard expiry (W2). */
	if (jh >= w->hz) {
		unsigned level = hrt__wheel_level(jh, w->hz), idx = hrt__wheel_slot(jh, level);

		if (w->occupied[level] & (UINT64_C(1) << idx))
			hrt__wheel_take_slot(w, level, idx, out);
	}
	hrt__wheel_list_add(out, &t->hrt__off.hrt__link);
}

void hrt__wheel_advance(struct hrt_wheel *w, uint64_t hz, struct hrt_list_node *out)
{
	struct hrt_list_node redo, gone, *l;
	uint64_t old = w->hz;
	unsigned level;

	if (hz <= old)
		return;
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
				take_slot(w, level, idx, out, 1);
			else if (a <= hz && level > 0)
				take_slot(w, level, idx, &redo, 0);
		}
	}
	hrt__wheel_set_hz(w, hz);
	/*
	 * The cascade: each timer that still fits to its new slot, in list
	 * order, keeping its sequence.  The others leave, and with them (W2)
	 * the slot holding each one's hard jiffy, sorted all together by
	 * sequence: a timer with an equal hard expiry may be behind them in
	 * the list but was started earlier.
	 */
	hrt__list_init(&gone);
	while (!hrt__list_empty(&redo)) {
		struct hrt_list_node *l = redo.hrt__next;
		struct hrt_timer *t = hrt__wheel_timer(l);
		int key = hrt__wheel_key(w, t->hrt__soft, t->hrt__hard);

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
	hrt__list_init(&redo);
	for (l = gone.hrt__next; l != &gone; l = l->hrt__next) {
		uint64_t jh = hrt__wheel_jiffy(hrt__wheel_timer(l)->hrt__hard);

		if (jh >= hz) {
			unsigned lv = hrt__wheel_level(jh, hz), idx = hrt__wheel_slot(jh, lv);

			if (w->occupied[lv] & (UINT64_C(1) << idx))
				take_slot(w, lv, idx, &redo, 0);
		}
	}
	list_splice_tail(&gone, &redo);
	sort_slot(&gone);
	list_splice_tail(out, &gone);
}

/* The earliest non-empty slot: 0, or 1 with its level and index. */
static inline int first_slot(const struct hrt_wheel *w, unsigned *level, unsigned *idx)
{
	unsigned l;

	if (!w->count)
		return 0;
	for (l = 0; l < HRT_WHEEL_LEVELS; l++) {
		if (w->occupied[l]) {
			*level = l;
			*idx = (unsigned)__builtin_ctzll(w->occupied[l]);
			return 1;
		}
	}
	return 0;       /* not reached: count says otherwise */
}

int hrt__wheel_scan_first(const struct hrt_wheel *w, hrt_time_t *hard)
{
	const struct hrt_list_node *h, *l;
	unsigned level, idx;
	hrt_time_t m = HRT_TIME_MAX;

	if (!first_slot(w, &level, &idx))
		return 0;
	h = &w->slot[level * HRT_WHEEL_SLOTS + idx];
	if (list_count(h, HRT_WHEEL_SCAN) > HRT_WHEEL_SCAN)
		return 0;
	for (l = h->hrt__next; l != h; l = l->hrt__next) {
		const struct hrt_timer *t = hrt__wheel_timer(l);

		if (t->hrt__hard < m)
			m = t->hrt__hard;
	}
	*hard = m;
	return 1;
}

hrt_time_t hrt__wheel_first(const struct hrt_wheel *w)
{
	unsigned level, idx;

	if (!first_slot(w, &level, &idx))
		return HRT_TIME_MAX;
	return hrt__wheel_time(slot_start(w->hz, level, idx));
}

void hrt__wheel_step_first(struct hrt_wheel *w, struct hrt_list_node *out)
{
	unsigned level, idx;
	uint64_t a;

	if (!first_slot(w, &level, &idx))
		return;
	a = slot_start(w->hz, level, idx);
	/* Level 0: one jiffy, past it.  Above: to its start, which cascades
	 * it into the levels below. */
	hrt__wheel_advance(w, level ? a : a + 1, out);
}

void hrt__wheel_pull_first(struct hrt_wheel *w, struct hrt_list_node *out)
{
	struct hrt_list_node *tail = out->hrt__prev;

	while (w->count && out->hrt__prev == tail)
		hrt__wheel_step_first(w, out);
}

void hrt__wheel_take_all(struct hrt_wheel *w, struct hrt_list_node *out)
{
	unsigned level;

	for (level = 0; level < HRT_WHEEL_LEVELS; level++)
		while (w->occupied[level])
			hrt__wheel_take_slot(w, level, (unsigned)__builtin_ctzll(w->occupied[level]), out);
}

const char *hrt__wheel_check(const struct hrt_wheel *w,
			     int (*ok)(const struct hrt_timer *t, const void *ctx),
			     const void *ctx)
{
	size_t count = 0;
	unsigned level, idx;

	for (level = 0; level < HRT_WHEEL_LEVELS; level++) {
		for (idx = 0; idx < HRT_WHEEL_SLOTS; idx++) {
			const struct hrt_list_node *h = &w->slot[level * HRT_WHEEL_SLOTS + idx], *l, *prev = h;
			int bit = !!(w->occupied[level] & (UINT64_C(1) << idx));
			int sorted = !(w->unsorted[level] & (UINT64_C(1) << idx));
			uint64_t last = 0;

			if (bit != !hrt__list_empty(h))
				return "wheel occupancy bit wrong";
			for (l = h->hrt__next; l != h; prev = l, l = l->hrt__next) {
				const struct hrt_timer *t;
				uint64_t jh, js;

				if (!l || l->hrt__prev != prev)
					return "wheel slot list broken";
				if (++count > w->count)
					return "wheel count wrong";
				t = hrt__wheel_timer(l);
				jh = hrt__wheel_jiffy(t->hrt__hard);
				js = hrt__wheel_jiffy(t->hrt__soft);
				if (jh < w->hz || js < w->hz || t->hrt__soft > t->hrt__hard)
					return "wheel timer behind the horizon";
				if (hrt__wheel_level(jh, w->hz) != level || hrt__wheel_slot(jh, level) != idx)
					return "wheel timer in the wrong slot";
				if (hrt__wheel_key_of(t) != level * HRT_WHEEL_SLOTS + idx)
					return "wheel timer's remembered slot wrong";
				if (hrt__wheel_seq_of(t) >= w->seq >> HRT_WHEEL_KEY_BITS)
					return "wheel timer's sequence not below the next";
				if (sorted && l != h->hrt__next && hrt__wheel_seq_of(t) <= last)
					return "wheel slot marked sorted out of sequence order";
				last = hrt__wheel_seq_of(t);
				if (js >> (level * HRT_WHEEL_BITS) != jh >> (level * HRT_WHEEL_BITS))
					return "wheel timer's soft expiry in another slot";
				if (ok(t, ctx))
					return "wheel timer with a wrong state word";
			}
			if (h->hrt__prev != prev)
				return "wheel slot back link wrong";
		}
	}
	return count == w->count ? NULL : "wheel count wrong";
}
