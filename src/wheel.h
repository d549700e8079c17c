/* SPDX-License-Identifier: MIT */
/*
 * wheel.h - far timers (internal): a hierarchical timing wheel that keeps
 * timers which cannot matter before the horizon out of the tree, so that
 * starting, cancelling and re-arming them is a list link and unlink.  The
 * tree (queue.h) pays its log n only for timers that survive until near.
 *
 * Keys are jiffies: j(t) = ((uint64_t)t ^ 2^63) >> HRT_WHEEL_SHIFT, an
 * order-preserving map of the signed nanosecond time.  The horizon hz is a
 * jiffy.  Level L has 64 slots of 64^L jiffies; a timer whose soft expiry
 * has jiffy js sits at level L = msb(js ^ hz) / 6, slot (js >> 6L) & 63, so
 * every jiffy maps to exactly one slot and slots of lower levels hold
 * earlier jiffies.  A timer is placed by its soft expiry because it cannot
 * run before it: a window of any width (hard anywhere after soft) stays in
 * the wheel until its soft expiry is near.  Invariants (hrt__wheel_check):
 *
 *  W1. every timer in the wheel has j(soft) >= hz, in the slot of j(soft);
 *      so its soft and hard expiries are >= the slot's first instant >= the
 *      horizon's, and a pass at now < start(hz) finds every soft-expired
 *      timer in the tree: no bucket scan is needed.
 *  W2. each slot keeps a lower bound of its timers' hard expiries (`hard`,
 *      HRT_TIME_MAX if empty) and, while the bound is exact, the timer that
 *      has it (`min`; NULL once that timer left: the bound is then only a
 *      bound until hrt__wheel_min finds the least again, W4).  So the
 *      earliest hard expiry of the wheel is found from the slots' bounds,
 *      without moving a timer into the tree.
 *  W3. a timer's slot word holds its slot and a start sequence number
 *      (hrt__off.hrt__slot = key | seq << 10), unique in the wheel and below
 *      the next one (w->seq); a timer taking a new expiry takes a new one.
 *      A slot whose bit in `unsorted` is clear lists its timers by sequence.
 *      A re-arm into the slot a timer is already in only renumbers it (no
 *      neighbour is written) and marks the slot unsorted, or, unless the
 *      re-arm before went to that slot too, moves it to the tail
 *      (hrt__wheel_move_); a slot is sorted by sequence before it leaves
 *      (take_slot, wheel.c), so timers with equal soft expiry - always in
 *      one slot - leave for the tree in start order (the tie rule, hrt.h).
 *  W4. a slot whose bit in `unordered` is clear lists its timers in queue
 *      order (hard, soft, sequence), and last[key] holds keys that none of
 *      them comes after: its first timer is its least, so when the least
 *      leaves, the next search takes the new first, with no scan.  Timers
 *      of one length arrive in that order (a start's hard expiry is the
 *      latest): timeouts cancelled in start order, the earliest re-armed
 *      (LRU), keep-alives pushed on.  A timer placed before last[key], or
 *      re-armed in place (below), marks its slot unordered for good (until
 *      it empties or a scan finds order again); an unordered slot whose
 *      least left has it found again when its bound is next needed (W5).
 *      last[] is apart from the slots, and looked at only while the slot
 *      is ordered: a slot of random timers costs what it cost before W4.
 *  W5. no search of a timer set scans more than HRT_WHEEL_SCAN_MAX timers
 *      (w->scanned counts them): an unordered slot whose least left is
 *      scanned if it holds no more than what is left of that budget;
 *      else its bound stands for it, and the slot is marked big, so
 *      that later searches take its bound without scanning again until
 *      it empties or leaves.  The bound is a lower bound of the slot's hard expiries, at or after
 *      the slot's first instant, hence past the horizon: an answer that
 *      is early, never late, by an instant at least ~17 ms ahead of the
 *      last pass.  A pass at that instant moves the horizon past the
 *      slot's start (hrt__wheel_hz_for), which cascades the slot into
 *      smaller ones, each with its exact least (relink), or sends it to
 *      the tree: so a slot costs at most one early wake-up, and no
 *      sequence of starts, re-arms, cancels and queries makes an op
 *      O(slot).  Issue 47's idle timeouts with jitter, the first pushed
 *      on before every next-event query, rescanned the whole slot every
 *      time; moved whole into the tree instead (1.3's first cut), one
 *      query paid 52 ms at 10^5 timers.  The kernel's wheel gives up
 *      exactness the same way (a slot's start, and a wake-up to cascade).
 *
 * The park: one more list, not a slot, for timers that ran in the current
 * pass and were queued again far away (a periodic timer's restart).  The
 * pass's searches must pass over them (timerset.h, S2); parked, they are
 * outside every slot's bound, so that costs nothing, and the pass's end
 * moves them to their slots (hrt__wheel_unpark) keeping their sequence.
 *
 * Timers leave the wheel in slot order on a list ("out"), which the timer
 * set (timerset.h) takes (hrt__wheel_out_take) and inserts into the tree
 * in that order; w->count counts them until then.  No allocation:
 * the slots belong to the set.  No locking: the set's caller serialises.
 */
#ifndef HRT_WHEEL_H
#define HRT_WHEEL_H

#include <stddef.h>
#include <stdint.h>
#include "hrt.h"

#define HRT_WHEEL_SHIFT  20             /* a jiffy: 2^20 ns, about 1.05 ms */
#define HRT_WHEEL_BITS   6
#define HRT_WHEEL_SLOTS  (1u << HRT_WHEEL_BITS)
#define HRT_WHEEL_LEVELS 8              /* 8 * 6 = 48 >= the 44 bits of a jiffy */
/* The horizon stays this many jiffies (~17 ms) past the last pass: a timer
 * that may run sooner is likely to, so it pays its tree insert at once
 * instead of a wheel link, a move and the insert.  The price of a wider
 * near range is paid by short timers that are cancelled or pushed on
 * before they run (with 64 jiffies, start+cancel of timers 10 ms-1 s
 * ahead at 10^6 cost 2-4x libev's: 6 % of them went to the tree); that of
 * a narrower one by timers that run (the expiry pass moves them from the
 * wheel first: 2-3x the cost per timer of 64 jiffies, about libev's).
 * docs/PERFORMANCE.md has the figures. */
#define HRT_WHEEL_NEAR   16
/* The slot word: the key (level * 64 + index, or the park's: <= 2^9) in
 * the low bits, the start sequence above.  The 54 bits of sequence are
 * compared plainly and never wrap: after 2^54 starts (half a year at 10^9
 * a second) every wheel timer is renumbered in order
 * (hrt__wheel_renumber). */
#define HRT_WHEEL_KEY_BITS 10
#define HRT_WHEEL_KEY_MASK ((UINT64_C(1) << HRT_WHEEL_KEY_BITS) - 1)
/* The park's key: the slot after the last level's (a "level" of one slot,
 * never in a search). */
#define HRT_WHEEL_PARK (HRT_WHEEL_LEVELS * HRT_WHEEL_SLOTS)
/* W5: the timers one search of a timer set may scan for slots' least
 * hard expiries; a slot that holds more goes into the tree instead.  At
 * 10^6 timers in random order a scanned timer is a cache miss (~0.1 us):
 * about 13 us. */
#ifndef HRT_WHEEL_SCAN_MAX
#define HRT_WHEEL_SCAN_MAX 128
#endif

/* A slot: its list, and W2's bound of its hard expiries.  No count: a
 * timer whose neighbours are one node (the head) was the slot's last, so
 * a move writes no counter. */
struct hrt_wheel_slot {
	struct hrt_list_node head;
	struct hrt_timer *min;          /* has hard == `hard`, or NULL: unknown */
	hrt_time_t hard;                /* <= every hard expiry here (MAX: empty) */
};

/* W4's keys of an ordered slot: an append compares with these, not with
 * the tail's line (a miss at 10^6 timers that the next op would wait
 * for).  INT64_MIN, INT64_MIN: empty. */
struct hrt_wheel_last {
	hrt_time_t hard, soft;
};

struct hrt_wheel {
	uint64_t hz;                            /* the horizon (a jiffy) */
	hrt_time_t hz_last;                     /* the instant before it (MAX past
						 * the end of time: none after) */
	/* Per level, and the park's bit 0 after them. */
	uint64_t occupied[HRT_WHEEL_LEVELS + 1];        /* bit i: slot i is not empty */
	uint64_t unsorted[HRT_WHEEL_LEVELS + 1];        /* bit i: slot i may be out of start order (W3) */
	uint64_t unordered[HRT_WHEEL_LEVELS + 1];       /* bit i: ... of queue order (W4) */
	uint64_t big[HRT_WHEEL_LEVELS + 1];     /* bit i: a scan gave up on slot i (W5) */
	uint64_t seq;                           /* the next start sequence, << KEY_BITS */
	uint64_t seq_fast;                      /* hrt__wheel_seq_ok's bound */
	size_t count;
	uint64_t cascades;                      /* timers re-placed inside the wheel */
	uint64_t scans;                         /* slots scanned for their bound (W2) */
	uint64_t scanned;                       /* timers those scans visited */
	unsigned last_move;                     /* the last re-arm's slot (hrt__wheel_move_) */
	/* By key, level * HRT_WHEEL_SLOTS + index, then the park: one array,
	 * so the slot of a key is one add. */
	struct hrt_wheel_slot slot[HRT_WHEEL_LEVELS * HRT_WHEEL_SLOTS + 1];
	struct hrt_wheel_last last[HRT_WHEEL_LEVELS * HRT_WHEEL_SLOTS + 1];
};

static inline uint64_t hrt__wheel_jiffy(hrt_time_t t)
{
	return ((uint64_t)t ^ (UINT64_C(1) << 63)) >> HRT_WHEEL_SHIFT;
}

/* The first instant of jiffy j. */
static inline hrt_time_t hrt__wheel_time(uint64_t j)
{
	return (hrt_time_t)((j << HRT_WHEEL_SHIFT) ^ (UINT64_C(1) << 63));
}

/* The horizon for a pass at `now`: NEAR jiffies past it, and never past
 * the jiffy after the end of time (where every timer is behind it). */
static inline uint64_t hrt__wheel_hz_for(hrt_time_t now)
{
	uint64_t j = hrt__wheel_jiffy(now), end = hrt__wheel_jiffy(HRT_TIME_MAX) + 1;

	return end - j > HRT_WHEEL_NEAR ? j + HRT_WHEEL_NEAR : end;
}

/* The first instant of the horizon: every wheel timer's soft and hard
 * expiries are >= it. */
static inline hrt_time_t hrt__wheel_horizon(const struct hrt_wheel *w)
{
	return hrt__wheel_time(w->hz);
}

/* Sets the horizon to hz. */
static inline void hrt__wheel_set_hz(struct hrt_wheel *w, uint64_t hz)
{
	w->hz = hz;
	w->hz_last = (hrt_time_t)((uint64_t)hrt__wheel_time(hz) - 1);
}

/* An empty list (the "out" lists). */
static inline void hrt__list_init(struct hrt_list_node *h)
{
	h->hrt__next = h->hrt__prev = h;
}

static inline int hrt__list_empty(const struct hrt_list_node *h)
{
	return h->hrt__next == h;
}

/* The timer whose wheel link l is. */
static inline struct hrt_timer *hrt__wheel_timer(const struct hrt_list_node *l)
{
	return HRT_CONTAINER_OF((struct hrt_list_node *)l, struct hrt_timer, hrt__off.hrt__link);
}

/* The tail's link is written between l's two: GCC would otherwise pair
 * l's stores into one vector store, four instructions for two. */
static inline void hrt__wheel_list_add(struct hrt_list_node *h, struct hrt_list_node *l)
{
	struct hrt_list_node *tail = h->hrt__prev;

	l->hrt__prev = tail;
	tail->hrt__next = l;
	l->hrt__next = h;
	h->hrt__prev = l;
}

static inline void hrt__wheel_list_del(struct hrt_list_node *l)
{
	l->hrt__prev->hrt__next = l->hrt__next;
	l->hrt__next->hrt__prev = l->hrt__prev;
}

/* The level and slot of jiffy j (>= hz).  x | 1: bit 0 is level 0's
 * anyway, and the clz needs no test for 0. */
static inline unsigned hrt__wheel_level(uint64_t j, uint64_t hz)
{
	return (unsigned)(63 - __builtin_clzll((j ^ hz) | 1)) / HRT_WHEEL_BITS;
}

static inline unsigned hrt__wheel_slot(uint64_t j, unsigned level)
{
	return (unsigned)(j >> (level * HRT_WHEEL_BITS)) & (HRT_WHEEL_SLOTS - 1);
}

void hrt__wheel_init(struct hrt_wheel *w, hrt_time_t now);

/* By msb(j ^ hz): (level * 64) << 8 | level * 6 (hrt__wheel_key). */
#define HRT_WHEEL_KT(b) ((uint32_t)((b) / HRT_WHEEL_BITS * HRT_WHEEL_SLOTS) << 8 | \
			 (uint32_t)((b) / HRT_WHEEL_BITS * HRT_WHEEL_BITS))
#define HRT_WHEEL_KT8(b) HRT_WHEEL_KT(b), HRT_WHEEL_KT(b + 1), HRT_WHEEL_KT(b + 2), \
	HRT_WHEEL_KT(b + 3), HRT_WHEEL_KT(b + 4), HRT_WHEEL_KT(b + 5), HRT_WHEEL_KT(b + 6), \
	HRT_WHEEL_KT(b + 7)
static const uint32_t hrt__wheel_keytab[64] = {
	HRT_WHEEL_KT8(0), HRT_WHEEL_KT8(8), HRT_WHEEL_KT8(16), HRT_WHEEL_KT8(24),
	HRT_WHEEL_KT8(32), HRT_WHEEL_KT8(40), HRT_WHEEL_KT8(48), HRT_WHEEL_KT8(56),
};

/* The slot (level * HRT_WHEEL_SLOTS + index) of the wheel that a timer
 * with this soft expiry goes to, or -1: it is behind the horizon (W1).
 * soft > hz_last is j(soft) >= hz.  The hard expiry plays no part. */
static inline int hrt__wheel_key(const struct hrt_wheel *w, hrt_time_t soft)
{
	uint64_t js = hrt__wheel_jiffy(soft);
	uint32_t e;

	if (soft <= w->hz_last)
		return -1;
	/* hrt__wheel_level and _slot by one load, not a multiply by 1/6 and
	 * three more: the level's first key << 8 | its shift, by msb. */
	e = hrt__wheel_keytab[63u - (unsigned)__builtin_clzll((js ^ w->hz) | 1)];
	return (int)((e >> 8) + ((unsigned)(js >> (e & 63)) & (HRT_WHEEL_SLOTS - 1)));
}

/* The slot key of a wheel timer, and its start sequence (W3). */
static inline unsigned hrt__wheel_key_of(const struct hrt_timer *t)
{
	return (unsigned)(t->hrt__off.hrt__slot & HRT_WHEEL_KEY_MASK);
}

static inline uint64_t hrt__wheel_seq_of(const struct hrt_timer *t)
{
	return t->hrt__off.hrt__slot >> HRT_WHEEL_KEY_BITS;
}

/* Every wheel timer renumbered from 0 in start order, across slots and the
 * park: the sequence restarts, the order among equal expiries unchanged. */
void hrt__wheel_renumber(struct hrt_wheel *w);

/* The last start sequence: numbering from it renumbers first. */
#define HRT_WHEEL_SEQ_LAST ((uint64_t)0 - (UINT64_C(1) << HRT_WHEEL_KEY_BITS))

/* The fast paths may number: the next start sequence is below
 * w->seq_fast, which is the last one (no renumber due), or 0 while the
 * set says no (hrt__wheel_fast: a pass runs).  One compare for both. */
static inline int hrt__wheel_seq_ok(const struct hrt_wheel *w)
{
	return w->seq < w->seq_fast;
}

static inline void hrt__wheel_fast(struct hrt_wheel *w, int on)
{
	w->seq_fast = on ? HRT_WHEEL_SEQ_LAST : 0;
}

/* A new start sequence for t in slot `key`; `renumber`: 0 when
 * hrt__wheel_seq_ok was found true. */
static inline __attribute__((always_inline)) void
hrt__wheel_number_(struct hrt_wheel *w, struct hrt_timer *t, unsigned key, int renumber)
{
	t->hrt__off.hrt__slot = key | w->seq;
	w->seq += UINT64_C(1) << HRT_WHEEL_KEY_BITS;
	if (renumber && __builtin_expect(!w->seq, 0))
		hrt__wheel_renumber(w);
}

/* Slot `key`'s list head, and its bit in its level's bitmaps. */
static inline struct hrt_list_node *hrt__wheel_head(struct hrt_wheel *w, unsigned key)
{
	return &w->slot[key].head;
}

/* The word of slot `key`'s bits in a bitmap: its level (or the park's). */
static inline unsigned hrt__wheel_word(unsigned key)
{
	__asm__("" : "+r"(key));       /* as hrt__wheel_bit */
	return key / HRT_WHEEL_SLOTS;
}

static inline uint64_t hrt__wheel_bit(unsigned key)
{
	/* Computed where it is used: GCC would hoist a re-arm's bit above
	 * the unlink and keep it live across it, a saved register more. */
	__asm__("" : "+r"(key));
	return UINT64_C(1) << (key % HRT_WHEEL_SLOTS);
}

/* (hard, soft) before (u_hard, u_soft): comes first in queue order
 * whatever the sequences (W3). */
static inline int hrt__wheel_keys_less(hrt_time_t hard, hrt_time_t soft, hrt_time_t u_hard,
				       hrt_time_t u_soft)
{
	return hard < u_hard || (hard == u_hard && soft < u_soft);
}

static inline int hrt__wheel_keys_before(hrt_time_t t_hard, hrt_time_t t_soft,
					 const struct hrt_timer *u)
{
	return hrt__wheel_keys_less(t_hard, t_soft, u->hrt__hard, u->hrt__soft);
}

/* t before u in queue order: hard, soft, start sequence (W2, W3). */
static inline int hrt__wheel_before(const struct hrt_timer *t, const struct hrt_timer *u)
{
	if (t->hrt__hard != u->hrt__hard || t->hrt__soft != u->hrt__soft)
		return hrt__wheel_keys_before(t->hrt__hard, t->hrt__soft, u);
	return hrt__wheel_seq_of(t) < hrt__wheel_seq_of(u);
}

/* W2 as t, whose hard expiry is `hard`, comes into slot sl with the newest
 * start sequence: below the bound (a bound of all the others), it is the
 * exact least; at it, it comes first only with an earlier soft expiry (the
 * tie rule, hrt.h), so the slot's `min` is the first in queue order. */
static inline __attribute__((always_inline)) void
hrt__wheel_bound_enter(struct hrt_wheel_slot *sl, struct hrt_timer *t, hrt_time_t hard)
{
	if (hard < sl->hard ||
	    __builtin_expect(hard == sl->hard && sl->min && t->hrt__soft < sl->min->hrt__soft, 0)) {
		sl->hard = hard;
		sl->min = t;
	}
}

/* t (its expiries set, newest sequence to come) to the tail of slot
 * `key`: still in start order (W3); in queue order too if the slot was
 * and t comes no earlier than last[key] (W4). */
static inline __attribute__((always_inline)) void
hrt__wheel_append(struct hrt_wheel *w, struct hrt_timer *t, unsigned key)
{
	uint64_t bit;

	bit = hrt__wheel_bit(key);
	hrt__wheel_list_add(&w->slot[key].head, &t->hrt__off.hrt__link);
	w->occupied[hrt__wheel_word(key)] |= bit;
	if (!(w->unordered[hrt__wheel_word(key)] & bit)) {
		struct hrt_wheel_last *ls = &w->last[key];
		hrt_time_t hard = t->hrt__hard;

		/* Not before last[key] (hrt__wheel_keys_less), the soft
		 * expiries read only on a tie of the hard ones. */
		if (hard > ls->hard || (hard == ls->hard && t->hrt__soft >= ls->soft)) {
			ls->hard = hard;
			ls->soft = t->hrt__soft;
		} else {
			w->unordered[hrt__wheel_word(key)] |= bit;
		}
	}
}

static inline __attribute__((always_inline)) void
hrt__wheel_link_(struct hrt_wheel *w, struct hrt_timer *t, unsigned key, int renumber)
{
	hrt__wheel_append(w, t, key);
	hrt__wheel_bound_enter(&w->slot[key], t, t->hrt__hard);
	w->count++;
	hrt__wheel_number_(w, t, key, renumber);
}

/* t (on no structure, its expiries set) to the tail of slot `key` with a
 * new sequence.  The timer remembers its slot (hrt__slot, over the tree
 * linkage's third word), so that hrt__wheel_del need not find it again. */
static inline void hrt__wheel_link(struct hrt_wheel *w, struct hrt_timer *t, unsigned key)
{
	hrt__wheel_link_(w, t, key, 1);
}

/* t (in slot `key`) off its list; the slot's bits cleared and its bound
 * reset if it was the last there (its two neighbours were the head).  If
 * t had the bound (W2), the bound is only a bound from now on; in an
 * ordered slot the next search takes the new first timer, with no scan
 * (W4), and nothing here reads another timer's line. */
static inline __attribute__((always_inline)) void
hrt__wheel_unlink(struct hrt_wheel *w, struct hrt_timer *t, unsigned key)
{
	struct hrt_list_node *l = &t->hrt__off.hrt__link, *next = l->hrt__next, *prev = l->hrt__prev;
	struct hrt_wheel_slot *sl = &w->slot[key];

	prev->hrt__next = next;
	next->hrt__prev = prev;
	if (sl->min == t)
		sl->min = NULL;
	if (next == prev) {
		w->occupied[hrt__wheel_word(key)] &= ~hrt__wheel_bit(key);
		w->unsorted[hrt__wheel_word(key)] &= ~hrt__wheel_bit(key);
		w->unordered[hrt__wheel_word(key)] &= ~hrt__wheel_bit(key);
		w->big[hrt__wheel_word(key)] &= ~hrt__wheel_bit(key);
		w->last[key].hard = w->last[key].soft = INT64_MIN;
		sl->hard = HRT_TIME_MAX;
	}
}

/*
 * t (in the wheel, its new expiries set) re-armed into slot `key`.  Into
 * the slot it is in: it stays where it is with a new sequence, no
 * neighbour written, and the slot is marked unordered (W4), and unsorted
 * unless t is its tail (W3).  Else moved to the tail of the new slot, as
 * a del and a link would leave it.
 *
 * Which of the two it is comes from t's own slot word, which a re-arm of a
 * cold timer waits for (a miss from 10^5 timers up).  A wrong guess, found
 * only then, throws away the work the CPU had started on the re-arms after
 * it: re-arms to random instants 10-70 s ahead stay in their slot 7 % of
 * the time, and that branch cost a third of each re-arm at 10^5 and 10^6
 * timers.  So only a re-arm into the slot of the re-arm before asks; any
 * other moves t to the tail even from that slot (the new sequence at the
 * tail keeps the slot in order).  Timeouts of one length pushed on, the
 * case where most re-arms stay, come as such a run into one slot, and
 * there the guess is mostly right.  The price: a re-arm that stays but
 * follows one into another slot moves (bench/engine "re-arm near").  The
 * slot's first timer and its least (`min`) always move: staying, the
 * first would leave an ordered slot unordered (W4), and the LRU shape
 * re-arms exactly that one.
 * Guesses that also learned how often re-arms stay, and branch-free
 * versions, lost part or all of the gain (docs/PERFORMANCE.md).
 */
static inline __attribute__((always_inline)) void
hrt__wheel_move_(struct hrt_wheel *w, struct hrt_timer *t, unsigned key, int renumber)
{
	struct hrt_wheel_slot *sl = &w->slot[key];
	unsigned old = hrt__wheel_key_of(t);

	if (key == w->last_move && key == old && sl->min != t &&
	    sl->head.hrt__next != &t->hrt__off.hrt__link) {
		if (sl->head.hrt__prev != &t->hrt__off.hrt__link)
			w->unsorted[hrt__wheel_word(key)] |= hrt__wheel_bit(key);
		w->unordered[hrt__wheel_word(key)] |= hrt__wheel_bit(key);
	} else {
		hrt__wheel_unlink(w, t, old);
		hrt__wheel_append(w, t, key);
	}
	hrt__wheel_bound_enter(sl, t, t->hrt__hard);
	w->last_move = key;
	hrt__wheel_number_(w, t, key, renumber);
}

static inline void hrt__wheel_move(struct hrt_wheel *w, struct hrt_timer *t, unsigned key)
{
	hrt__wheel_move_(w, t, key, 1);
}

/* t (ran in the current pass, off any structure, its expiries set: its
 * soft expiry past the horizon) to the park with a new sequence. */
static inline void hrt__wheel_park(struct hrt_wheel *w, struct hrt_timer *t)
{
	hrt__wheel_link(w, t, HRT_WHEEL_PARK);
}

/* t (in the wheel) out of it. */
static inline void hrt__wheel_del(struct hrt_wheel *w, struct hrt_timer *t)
{
	hrt__wheel_unlink(w, t, hrt__wheel_key_of(t));
	w->count--;
}

/* The first timer of out (non-empty), a list the wheel filled, taken off
 * it: the wheel counts a timer until then (take_slot's comment). */
static inline struct hrt_timer *hrt__wheel_out_take(struct hrt_wheel *w, struct hrt_list_node *out)
{
	struct hrt_list_node *l = out->hrt__next;

	__builtin_prefetch(l->hrt__next);       /* the next one's line, while this one works */
	hrt__wheel_list_del(l);
	w->count--;
	return hrt__wheel_timer(l);
}
/* Horizon to hz (if later): every timer whose soft jiffy is < hz to out
 * (each slot's in sequence order), each counted in w->count until taken
 * with hrt__wheel_out_take. */
void hrt__wheel_advance(struct hrt_wheel *w, uint64_t hz, struct hrt_list_node *out);
/* The slots' timer with the earliest hard expiry if that is < *limit,
 * with *limit set to it; else NULL, *limit unchanged.  Exact: it reads the
 * slots' bounds (W2) in time order until a slot starts at or after the
 * best so far; a slot whose bound lost its timer gives its first timer
 * if it is ordered, else is scanned whole (W4).  No timer moves; the park
 * is not looked at (hrt__wheel_park_min).  For the wheel alone (tests):
 * a timer set asks hrt__wheel_min_within. */
struct hrt_timer *hrt__wheel_min(struct hrt_wheel *w, hrt_time_t *limit);
/* The same for the park. */
struct hrt_timer *hrt__wheel_park_min(struct hrt_wheel *w, hrt_time_t *limit);
/* hrt__wheel_min (and _park_min) scanning at most HRT_WHEEL_SCAN_MAX
 * timers in all (W5): *bound = -1 and the exact answer; or *bound = the
 * slot (HRT_WHEEL_PARK: the park) whose bound, below every timer that
 * could be the answer, stands for its unknown least: NULL, *limit = that
 * bound. */
struct hrt_timer *hrt__wheel_min_within(struct hrt_wheel *w, hrt_time_t *limit, int *bound);
struct hrt_timer *hrt__wheel_park_min_within(struct hrt_wheel *w, hrt_time_t *limit, int *bound);
/* The first instant of slot `key` (not the park's): at or before each of
 * its timers' soft expiries (W1). */
hrt_time_t hrt__wheel_slot_time(const struct hrt_wheel *w, unsigned key);
/* The pass is over: each parked timer to its slot, keeping its sequence,
 * or to out (counted until taken) if the horizon passed it meanwhile. */
void hrt__wheel_unpark(struct hrt_wheel *w, struct hrt_list_node *out);
/* Of the first `budget` timers of the first non-empty slot (where the
 * wheel's least soft expiry is, W1), the first by soft expiry, then start
 * order; NULL if the wheel is empty or that slot starts at or after
 * `below`.  A bounded search may miss the least. */
struct hrt_timer *hrt__wheel_least_soft(const struct hrt_wheel *w, hrt_time_t below,
					unsigned budget);
/* Everything, the park too, to out (slot by slot, each in start order,
 * the parked timers among their slots'), counted until taken as
 * hrt__wheel_advance's. */
void hrt__wheel_take_all(struct hrt_wheel *w, struct hrt_list_node *out);
/* NULL, or which invariant is broken.  Calls ok(t, ctx) on every timer:
 * nonzero fails the check with "wheel timer with a wrong state word". */
const char *hrt__wheel_check(const struct hrt_wheel *w,
			     int (*ok)(const struct hrt_timer *t, const void *ctx),
			     const void *ctx);

#endif /* HRT_WHEEL_H */
