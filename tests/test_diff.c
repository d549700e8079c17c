/* SPDX-License-Identifier: MIT */
/*
 * test_diff.c - randomized differential test of the timer base against a
 * brute-force model (a plain array of timers, linear scans for everything).
 *
 * Random operations on two virtual bases: start, start_range (absolute and
 * relative), cancel, try_cancel, forward, queries, and passes at random
 * times with random idle flags under every policy.  Callbacks forward and
 * restart themselves, start and cancel other timers, re-start themselves,
 * and query bases (next_event, count, check) in the middle of a pass.
 * After every pass the exact sequence of callbacks (and what each callback's
 * own calls returned) must match the model; next_event, count, queue state
 * and stats are compared after operations, the tree checker runs after
 * every pass.  Failures print the seed and the step:
 *     build/tests/test_diff SEED [OPS]
 *
 * Since 1.2 (hrt.h).  Every timer is a struct hrt_repeat, made per epoch
 * (and again by the driver or its own callback) plain (hrt_timer_init) or
 * repeating (hrt_repeat_init): started by hrt_repeat_start, relative or
 * absolute, once or periodic - whose HRT_RESTART the model moves on to
 * the first period after the pass's now, as hrt_timer_forward does - and
 * by plain starts (which keep the period); re-armed by hrt_repeat_again
 * (the last delay and window, on the base last started on; -ENOENT before
 * any start) from the driver and from callbacks.  Callbacks cancel
 * themselves (hrt_timer_cancel or hrt_timer_try_cancel) and return
 * HRT_RESTART, which the cancel voids, with or without a start after the
 * cancel (plain, again or hrt_repeat_start: that start wins).  In half the
 * epochs passes have a callbacks limit (hrt_base_set_pass_limit, ns 0),
 * set by the driver between passes and by callbacks (from the next pass
 * on): the model ends a pass when the limit ran and another is due, runs
 * the greedy walk only after an uncut leftmost run, and counts
 * stats.passes_cut; get_pass_limit is compared too.
 *
 * Since 1.3.  Each callback's hrt_repeat_periods(r, now), taken first, is
 * logged and compared with the model's count of the grid's periods due
 * (-EINVAL for a plain timer); the model's periodic restart must land on
 * the grid of the last start - after hrt_repeat_again, now + delay + k *
 * period - and the run must have seen both a count above 1 and such a
 * restart.
 *
 * Time scales.  Most times are coarse (UNIT ns) so that ties are common;
 * the rest aim at the far-timer wheel's boundaries (wheel.h): one jiffy,
 * the first instant of a level's slot, the horizon j(now) + 1, exactly at
 * and one below and above each, soft and hard expiries in different slots
 * or far apart, negative times and the end of time.  Passes mostly move a
 * little, sometimes jump across several levels (cascades) or run behind
 * the base's time.  The model knows nothing of the wheel: the layout is
 * used only to aim, never to predict.  Since a base's horizon never moves
 * back, the run is cut into epochs: when a base reached the end of time
 * (or by chance) every timer is cancelled, the bases are freed and new
 * ones made (locked or HRT_BASE_UNLOCKED at random).  At the end the wheel
 * stats must show that timers went through the wheel and cascaded in it.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"

#include "hrt.h"
#include "hrt_values.h"
#include "wheel.h"

#define NT 192          /* timers */
#define NB 2            /* bases */
#define UNIT 10         /* coarse times so that ties are common */

/* The wheel's layout (wheel.h), to aim times at its boundaries. */
#define JIFFY ((hrt_time_t)1 << HRT_WHEEL_SHIFT)

enum action { A_NONE, A_FORWARD, A_RESTART_SAME, A_START_OTHER, A_CANCEL_OTHER,
	      A_START_SELF, A_START_SELF_NORESTART, A_START_CANCEL_SELF, A_QUERY,
	      /* Since 1.2: a cancel of itself (then a start of itself, or not)
	       * before HRT_RESTART; hrt_repeat_again and hrt_repeat_start of a
	       * struct hrt_repeat (itself or another); a pass limit set; a
	       * re-initialisation of itself (HRT_NORESTART). */
	      A_CANCEL_SELF, A_CANCEL_SELF_START, A_AGAIN, A_REPEAT_START, A_SET_LIMIT,
	      A_REINIT_SELF, A_NACTIONS };

/* A soft expiry to aim at, evaluated when the start is made (so a
 * callback aims at the grid around the time it runs at). */
enum { T_COARSE, T_SAT, T_FAR, T_MS, T_JIFFIES, T_LEVEL, T_GRID, T_NEG };
struct when {
	int kind, level;
	long k;
	hrt_time_t d;
};

/* A slack: a plain value, the one that puts hard on a level's grid, or a
 * window of k per mille of the delay (soft - now), as range timers have. */
struct slack {
	int grid, level;                /* grid: 1 on a grid, 2 per mille */
	long k;
	hrt_time_t v;   /* grid: the offset from the boundary */
};

/* Each timer is a struct hrt_repeat; a plain one uses only its timer
 * (hrt_timer_init), a repeating one all of it (hrt_repeat_init). */
struct wt {
	union {
		struct hrt_timer t;
		struct hrt_repeat r;
	};
	int id;
	int rep;                        /* the real one was made by hrt_repeat_init */
	/* The callback's plan, fixed when the driver starts the timer. */
	int action, other, other_base, again, var;
	unsigned limit;                 /* A_SET_LIMIT's callbacks */
	hrt_time_t iv;                  /* A_FORWARD's interval */
	hrt_time_t rep_iv;              /* A_REPEAT_START's interval */
	struct when ws;
	struct slack sl;
};

struct mt {                     /* the model's view of timer i */
	int queued, base;
	hrt_time_t soft, hard;
	uint64_t seq;           /* queueing order */
	uint64_t ran_pass;      /* pass that last ran it */
	int ran_base;
	int started;            /* 1 + the base it was last started on; 0: never */
	/* A struct hrt_repeat (rep): what its last hrt_repeat_start kept. */
	int rep;
	hrt_time_t rdelay, rwindow, riv;
	/* Since 1.3: the soft expiry its periods count from (the last start
	 * or forward), and whether that start was hrt_repeat_again (hrt.h:
	 * again moves a periodic timer's grid to now + delay). */
	hrt_time_t grid;
	int grid_again;
};

struct mbase {
	hrt_time_t now;
	struct hrt_stats st;
	unsigned limit;         /* hrt_base_set_pass_limit's callbacks (ns: 0) */
};

static struct wt W[NT];
static struct mt M[NT];
static struct mbase MB[NB];
static struct hrt_base *B[NB];
static uint64_t mseq, mpass;
static int m_running = -1, m_running_base = -1;
static int m_stopped;           /* the running timer cancelled itself */
static uint64_t rng;
static unsigned long long seed;
static long step;

/* Per epoch: how often next_event is compared after an operation (it
 * moves wheel slots into the tree, so not always: a pass must also meet
 * far timers that nobody pulled), and when the epoch ends. */
static uint64_t qmask;
static long epoch_end;
/* Per epoch: timers in use (few: the tree is often empty of near timers,
 * so next_event and the passes must consult the wheel) and how many of
 * the soft expiries are coarse (of 64). */
static int nt = NT, coarse = 36;
/* Per epoch: the level half of the aimed times use, so that timers meet
 * at the same boundaries (ties in the wheel, tree and wheel one ns apart). */
static int focus;
/* Per epoch: how many of the timers (of 64) are made struct hrt_repeat
 * timers, and whether passes get a callbacks limit (then the driver sets
 * one before some passes and callbacks set them too). */
static int rep_share, limits;

static long rr(long n);

static int rand_level(void)
{
	return rr(2) ? focus : (int)rr(HRT_WHEEL_LEVELS);
}

/* What the run went through (summed over epochs and bases). */
static struct {
	long epochs, unlocked_bases;
	uint64_t wheel_moves, wheel_cascades;
	uint64_t greedy_far, leftmost_far;     /* callbacks with hard past the horizon */
	uint64_t end_of_time, behind;          /* passes capped, passes behind the base */
	uint64_t rearm_near, tie_probes;       /* do_rearm_near's, do_tie_probe's */
	uint64_t slot_shuffles;                 /* do_slot_shuffle's re-arms */
	/* Since 1.2 (the model's counts: the real run matched them). */
	uint64_t periodic;              /* HRT_RESTARTs moved on by a period */
	uint64_t periodic_skips;        /* of those, more than one period */
	uint64_t repeat_starts, agains; /* successful, driver and callbacks */
	uint64_t again_enoent;          /* hrt_repeat_again of a never started one */
	uint64_t voided, cancel_start;  /* HRT_RESTARTs a self-cancel voided; a
					 * start after the cancel that queued it */
	uint64_t cut, cut_greedy;       /* passes cut; of those in the greedy walk */
	uint64_t reinits;               /* re-initialisations (a callback's too) */
	/* Since 1.3. */
	uint64_t periods_late;          /* callbacks told of more than one period */
	uint64_t again_grid;            /* periodic restarts on a grid again moved */
} seen;

/* Callback logs: (id, results of the callback's own calls, and
 * hrt_repeat_periods at its start) per callback. */
#define LOGMAX (NT * 4)
static long rlog[LOGMAX][4], mlog[LOGMAX][4];
static int rlen, mlen;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static long rr(long n) { return (long)(rnd() % (uint64_t)n); }

/* A difference from the model: where (seed, step, how to replay), then
 * unit.h's fail_msg with file:line and what differs. */
#define fail_step(...) do { \
	fprintf(stderr, "seed=%llu step=%ld (replay: build/tests/test_diff %llu %ld)\n", \
		seed, step, seed, step + 1); \
	fail_msg(__VA_ARGS__); \
} while (0)

/* a - b clamped to the 64-bit range (the model's own way: 128 bits). */
static hrt_time_t m_sat_sub(hrt_time_t a, hrt_time_t b)
{
	__int128 d = (__int128)a - b;

	return d > HRT_TIME_MAX ? HRT_TIME_MAX : d < INT64_MIN ? INT64_MIN : (hrt_time_t)d;
}

static hrt_time_t sat_add(hrt_time_t a, hrt_time_t b)
{
	if (b > 0 && a > HRT_TIME_MAX - b)
		return HRT_TIME_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

/* hrt.h: hard saturates at the pass cap while soft can still run. */
static hrt_time_t cap_hard(hrt_time_t soft, hrt_time_t hard)
{
	return soft <= HRT_TIME_MAX - 2 && hard > HRT_TIME_MAX - 2 ? HRT_TIME_MAX - 2 : hard;
}

static int base_index(struct hrt_base *b)
{
	for (int i = 0; i < NB; i++)
		if (B[i] == b)
			return i;
	return -1;
}

/* The first instant of jiffy j; HRT_TIME_MAX past the end of time. */
static hrt_time_t jtime(uint64_t j)
{
	if (j >> (64 - HRT_WHEEL_SHIFT))
		return HRT_TIME_MAX;
	return (hrt_time_t)((j << HRT_WHEEL_SHIFT) ^ (UINT64_C(1) << 63));
}

/* The first instant of the k-th level-`level` slot boundary from t's slot
 * (k = 0: the start of the slot holding t; level 0, k = 1: the horizon a
 * pass at t leaves). */
static hrt_time_t grid(hrt_time_t t, int level, long k)
{
	unsigned sh = (unsigned)level * HRT_WHEEL_BITS;

	return jtime(((hrt__wheel_jiffy(t) >> sh) + (uint64_t)k) << sh);
}

static hrt_time_t horizon_of(hrt_time_t now)
{
	return grid(now, 0, 1);
}

/* One level-`level` slot: 2^(HRT_WHEEL_SHIFT + HRT_WHEEL_BITS * level) ns. */
static hrt_time_t level_span(int level)
{
	return (hrt_time_t)1 << (HRT_WHEEL_SHIFT + HRT_WHEEL_BITS * level);
}

/* Model ------------------------------------------------------------------- */

static void m_enqueue(int i, int b)
{
	if (M[i].ran_base != b)
		M[i].ran_pass = 0;      /* "ran" is forgotten on another base */
	M[i].queued = 1;
	M[i].base = b;
	M[i].seq = ++mseq;
}

/* 0, or -EXDEV: a timer whose callback runs stays on its base, and the
 * two virtual bases keep two times (hrt.h), so a start of it onto the
 * other is refused, nothing changed. */
static int m_start(int i, int b, hrt_time_t soft, hrt_time_t slack, int rel)
{
	int target = b;

	if (i == m_running && b != m_running_base)
		return -EXDEV;
	if (rel)
		soft = sat_add(MB[b].now, soft);
	M[i].soft = soft;
	M[i].hard = cap_hard(soft, sat_add(soft, slack));
	M[i].grid = soft;
	M[i].grid_again = 0;
	M[i].queued = 0;
	m_enqueue(i, target);
	M[i].started = target + 1;
	MB[target].st.starts++;
	return 0;
}

/* hrt_repeat_start: as m_start, and r keeps the delay (the offset, or
 * the instant less the base's now), the window and the period - not if
 * the start is refused. */
static int m_repeat_start(int i, int b, hrt_time_t first, hrt_time_t iv, hrt_time_t window,
			  int rel)
{
	hrt_time_t delay = rel ? first : m_sat_sub(first, MB[b].now);
	int r = m_start(i, b, first, window, rel);

	if (r)
		return r;
	M[i].rdelay = delay;
	M[i].rwindow = window;
	M[i].riv = iv;
	seen.repeat_starts++;
	return 0;
}

/* hrt_repeat_again: a relative start on the base it was last started on
 * (by any start), with what the last hrt_repeat_start kept. */
static int m_again(int i)
{
	int r;

	if (!M[i].started) {
		seen.again_enoent++;
		return -ENOENT;
	}
	r = m_start(i, M[i].started - 1, M[i].rdelay, M[i].rwindow, 1);
	seen.agains += !r;
	M[i].grid_again = !r;
	return r;
}

/* hrt_timer_init or hrt_repeat_init of a timer that is not queued: a new
 * timer, never started, expiries 0, no pass of its own. */
static void m_init(int i, int rep)
{
	M[i].queued = 0;
	M[i].soft = M[i].hard = 0;
	M[i].ran_pass = 0;
	M[i].started = 0;
	M[i].rep = rep;
	M[i].rdelay = M[i].rwindow = M[i].riv = 0;
	M[i].grid = 0;
	M[i].grid_again = 0;
}

/* hrt.h: a cancel from a timer's own callback voids its HRT_RESTART. */
static int m_cancel(int i)
{
	if (i == m_running)
		m_stopped = 1;
	if (!M[i].queued)
		return 0;
	M[i].queued = 0;
	MB[M[i].base].st.cancels++;
	return 1;
}

static hrt_time_t clamp128(__int128 v)
{
	return v > HRT_TIME_MAX ? HRT_TIME_MAX : (hrt_time_t)v;
}

/* In exact (128-bit) arithmetic: the least n with soft + n iv > now, then
 * both expiries moved by n intervals and saturated (hrt.h); the count
 * saturates at INT64_MAX.  hrt_timer_forward's rule, and a periodic struct
 * hrt_repeat's restart (hrt.h: "as hrt_timer_forward does"). */
static int64_t m_advance(int i, hrt_time_t now, hrt_time_t iv)
{
	__int128 n;

	if (M[i].soft > now)
		return 0;
	n = ((__int128)now - M[i].soft) / iv + 1;
	M[i].soft = clamp128(M[i].soft + n * iv);
	M[i].hard = cap_hard(M[i].soft, clamp128(M[i].hard + n * iv));
	return n > (__int128)INT64_MAX ? INT64_MAX : (int64_t)n;
}

/* Refusals: -EINVAL, then -EBUSY (queued). */
static int64_t m_forward(int i, hrt_time_t now, hrt_time_t iv)
{
	int64_t n;

	if (iv <= 0)
		return -EINVAL;
	if (M[i].queued)
		return -EBUSY;
	n = m_advance(i, now, iv);
	M[i].grid = M[i].soft;          /* its own interval: a new origin */
	M[i].grid_again = 0;
	return n;
}

/* hrt_repeat_periods (hrt.h, since 1.3): of a struct hrt_repeat, the
 * periods of its grid due by now, counted from its soft expiry - in the
 * callback, the periods since its last run (what its restart skips). */
static long m_periods(int i, hrt_time_t now)
{
	__int128 n;

	if (!M[i].rep)
		return -EINVAL;
	if (!M[i].started)
		return -ENOENT;
	if (M[i].riv <= 0)
		return M[i].soft <= now;
	if (M[i].soft > now)
		return 0;
	n = ((__int128)now - M[i].soft) / M[i].riv + 1;
	return n > (__int128)INT64_MAX ? INT64_MAX : (long)n;
}

static hrt_time_t m_next(int b)
{
	hrt_time_t n = HRT_TIME_MAX;

	for (int i = 0; i < NT; i++)
		if (M[i].queued && M[i].base == b && M[i].hard < n)
			n = M[i].hard;
	return n;
}

static size_t m_count(int b)
{
	size_t n = 0;

	for (int i = 0; i < NT; i++)
		n += M[i].queued && M[i].base == b;
	return n;
}

/* First not-yet-run queued timer of base b in queue order - hard, then
 * soft, then queueing order (the tie rule of hrt.h); due only. */
static int m_pick(int b, hrt_time_t now, int due)
{
	int best = -1;

	for (int i = 0; i < NT; i++) {
		if (!M[i].queued || M[i].base != b || M[i].ran_pass == mpass)
			continue;
		if (due && M[i].soft > now)
			continue;
		if (best < 0 || M[i].hard < M[best].hard ||
		    (M[i].hard == M[best].hard && (M[i].soft < M[best].soft ||
		     (M[i].soft == M[best].soft && M[i].seq < M[best].seq))))
			best = i;
	}
	return best;
}

/* Soft expiries and slacks -------------------------------------------------- */

static hrt_time_t rand_d(void)
{
	switch (rr(8)) {
	case 0: case 1: case 2: return 0;
	case 3: return -1;
	case 4: return 1;
	case 5: return -UNIT;
	case 6: return UNIT;
	default: return (rr(9) - 4) * UNIT;
	}
}

/* 1..7, each level half as likely as the one below: the time line lasts. */
static int rand_jump_level(void)
{
	int l = 1;

	while (l < HRT_WHEEL_LEVELS - 1 && rr(2))
		l++;
	return l;
}

static void pick_when(struct when *w)
{
	/* Jiffies from the pass: just past it, about the near horizon, and a
	 * level-2 slot away. */
	static const long jk[] = { 0, 1, 1, 2, 3, HRT_WHEEL_NEAR - 1, HRT_WHEEL_NEAR,
				   HRT_WHEEL_NEAR + 1, HRT_WHEEL_SLOTS * HRT_WHEEL_SLOTS };
	long r = rr(64);

	w->level = rand_level();
	w->d = rand_d();
	w->k = 0;
	if (r < coarse) {               /* as before the wheel: ties */
		w->kind = T_COARSE;
		w->k = rr(45) - 5;      /* some in the past */
		return;
	}
	r = 36 + rr(28);                /* the far kinds, in their own shares */
	if (r < 37) {
		w->kind = T_SAT;        /* relative: saturates */
		w->k = rr(3);
	} else if (r < 38) {
		w->kind = T_FAR;        /* absolute, at the end of time */
		w->k = rr(3);
	} else if (r < 40) {
		w->kind = T_MS;
	} else if (r < 46) {
		w->kind = T_JIFFIES;
		w->k = jk[rr(sizeof(jk) / sizeof(jk[0]))];
	} else if (r < 51) {
		w->kind = T_LEVEL;
	} else if (r < 60) {
		w->kind = T_GRID;
		w->k = rr(4) ? 1 : rr(3);       /* mostly the next boundary */
		if (!rr(3))
			w->level = 0;           /* the horizon */
	} else {
		w->kind = T_NEG;
		w->k = rr(4);
	}
}

/* The soft expiry `w` aims at from `now`: an offset (*abs = 0) or an
 * instant (*abs = 1). */
static hrt_time_t when_eval(const struct when *w, hrt_time_t now, int *abs)
{
	*abs = 0;
	switch (w->kind) {
	case T_COARSE: return w->k * UNIT;
	case T_SAT: return HRT_TIME_MAX - w->k * UNIT;
	case T_MS: return 1000000 + w->d;
	case T_JIFFIES: return w->k * JIFFY + w->d;
	case T_LEVEL: return level_span(w->level) + w->d;
	}
	*abs = 1;
	switch (w->kind) {
	case T_FAR: return HRT_TIME_MAX - w->k * UNIT;
	case T_GRID: return sat_add(grid(now, w->level, w->k), w->d);
	default:                        /* T_NEG */
		switch (w->k) {
		case 0: return -(w->level + 1) * 5 * UNIT;
		case 1: return -level_span(w->level) + w->d;
		case 2: return w->d;    /* around 0, a level-7 boundary */
		default: return INT64_MIN + (w->d < 0 ? -w->d : w->d);
		}
	}
}

static void pick_slack(struct slack *s)
{
	long r = rr(40);

	s->grid = 0;
	s->level = rand_level();
	s->k = 1;
	if (r >= 32) {                          /* 0, 1, 10, 100 % or any */
		s->grid = 2;
		s->k = (long[]){ 0, 10, 100, 1000, rr(1001), rr(1001), 1000, 100 }[r - 32];
		s->v = 0;
	} else if (r < 4)
		s->v = 0;
	else if (r < 8)
		s->v = HRT_TIME_MAX - rr(5);    /* saturates hard */
	else if (r < 22)
		s->v = rr(30) * UNIT;
	else if (r < 24)
		s->v = (hrt_time_t)3600 * 1000000000;  /* an hour */
	else if (r < 26)
		s->v = (1 + rr(3)) * JIFFY + rand_d();
	else if (r < 28)
		s->v = level_span(s->level) + rand_d();
	else {                                  /* hard on soft's next boundary */
		s->grid = 1;
		s->k = 1 + rr(2);
		s->v = rand_d();
	}
}

static hrt_time_t slack_eval(const struct slack *s, hrt_time_t soft, hrt_time_t now)
{
	hrt_time_t hard, slack;

	if (!s->grid)
		return s->v;
	if (s->grid == 2) {
		__int128 d = (__int128)soft - now;

		return d <= 0 ? 0 : (hrt_time_t)(d * s->k / 1000 > HRT_TIME_MAX ? HRT_TIME_MAX
										 : d * s->k / 1000);
	}
	hard = sat_add(grid(soft, s->level, s->k), s->v);
	if (hard < soft)
		return 0;
	return __builtin_sub_overflow(hard, soft, &slack) ? HRT_TIME_MAX : slack;
}

/* A start's soft expiry and slack; sometimes a huge slack (soft in 1 ms,
 * hard in an hour or at the end of time), as a caller gives a timer that
 * only has to run eventually: soft and hard far apart in the wheel. */
static void pick_start(struct when *w, struct slack *s)
{
	pick_when(w);
	pick_slack(s);
	if (!rr(24)) {
		w->kind = T_MS;
		w->d = rand_d();
		s->grid = 0;
		s->v = rr(2) ? (hrt_time_t)3600 * 1000000000 : HRT_TIME_MAX - rr(3);
	}
}

static hrt_time_t rand_interval(void)
{
	switch (rr(8)) {
	case 0: return (1 + rr(3)) * JIFFY + rand_d();
	case 1: return level_span((int)rr(HRT_WHEEL_LEVELS)) + rand_d();
	default: return (1 + rr(20)) * UNIT;
	}
}

/* The model's callbacks ------------------------------------------------------ */

/* The start a callback makes: the soft expiry (offset or instant) and
 * slack its plan aims at, from the time of base `b`. */
static hrt_time_t plan_start(const struct wt *w, hrt_time_t base_now, hrt_time_t *slack,
			     int *abs)
{
	hrt_time_t v = when_eval(&w->ws, base_now, abs);

	*slack = slack_eval(&w->sl, *abs ? v : sat_add(base_now, v), base_now);
	return v;
}


/* The start after a self-cancel (A_CANCEL_SELF_START), by var >> 1: a
 * plain start on its own base, on the plan's base (-EXDEV if that is the
 * other), hrt_repeat_again, or hrt_repeat_start on the plan's base (a
 * plain timer: a plain start on its own base). */
static int m_self_start(const struct wt *w, int i, int b)
{
	int how = (w->var >> 1) & 3, ob = how == 0 || (how >= 2 && !M[i].rep) ? b : w->other_base;
	int abs;
	hrt_time_t v, slack;

	if (how == 2 && M[i].rep)
		return m_again(i);
	if (how == 3 && M[i].rep) {
		v = plan_start(w, MB[ob].now, &slack, &abs);
		return m_repeat_start(i, ob, v, w->rep_iv, slack, !abs);
	}
	v = plan_start(w, MB[ob].now, &slack, &abs);
	return m_start(i, ob, v, slack, !abs);
}

static void m_callback(int i, int b, hrt_time_t now)
{
	struct wt *w = &W[i];
	long res = -1, res2 = -1, periods = m_periods(i, now);
	int restart = 0, abs, k;
	hrt_time_t v, slack;

	seen.periods_late += periods > 1;
	M[i].queued = 0;
	M[i].ran_pass = mpass;
	M[i].ran_base = b;
	MB[b].st.expired++;
	if (now > M[i].hard) {
		uint64_t late = (uint64_t)now - (uint64_t)M[i].hard;

		MB[b].st.late++;
		if (late > MB[b].st.late_max_ns)
			MB[b].st.late_max_ns = late;
	}
	m_running = i;
	m_running_base = b;
	m_stopped = 0;
	switch (w->action) {
	case A_FORWARD:
		res = (long)m_forward(i, now, w->iv);
		restart = 1;
		break;
	case A_RESTART_SAME:
		restart = 1;
		break;
	case A_START_OTHER:
		v = plan_start(w, MB[w->other_base].now, &slack, &abs);
		if (m_start(w->other, w->other_base, v, slack, !abs))
			res = -99;
		break;
	case A_CANCEL_OTHER:
		res = m_cancel(w->other);
		break;
	case A_START_SELF:
	case A_START_SELF_NORESTART:
		v = plan_start(w, MB[w->other_base].now, &slack, &abs);
		res2 = m_start(i, w->other_base, v, slack, !abs);
		restart = w->action == A_START_SELF;
		break;
	case A_START_CANCEL_SELF:
		v = plan_start(w, MB[b].now, &slack, &abs);
		m_start(i, b, v, slack, !abs);
		res = m_cancel(i);
		restart = 1;
		break;
	case A_QUERY:
		res = (long)m_next(w->other_base);
		res2 = (long)m_count(w->other_base);
		restart = w->again;
		break;
	case A_CANCEL_SELF:
		res = m_cancel(i);
		restart = 1;
		break;
	case A_CANCEL_SELF_START:
		res = m_cancel(i);
		res2 = m_self_start(w, i, b);
		seen.cancel_start += M[i].queued;
		restart = 1;
		break;
	case A_AGAIN:
		k = w->var & 1 ? i : w->other;
		res = M[k].rep ? m_again(k) : -97;
		restart = w->again;
		break;
	case A_REPEAT_START:
		k = w->var & 1 ? i : w->other;
		res = -97;
		if (M[k].rep) {
			v = plan_start(w, MB[w->other_base].now, &slack, &abs);
			res = m_repeat_start(k, w->other_base, v, w->rep_iv, slack, !abs);
		}
		restart = w->again;
		break;
	case A_SET_LIMIT:
		MB[w->other_base].limit = w->limit;     /* from the next pass on */
		res = 0;
		res2 = w->limit;
		restart = w->again;
		break;
	case A_REINIT_SELF:     /* hrt.h: then HRT_NORESTART, and touch it no more */
		m_init(i, M[i].rep ^ (w->var & 1));
		seen.reinits++;
		res = 0;
		break;
	}
	m_running = m_running_base = -1;
	if (mlen < LOGMAX) {
		mlog[mlen][0] = i;
		mlog[mlen][1] = res;
		mlog[mlen][2] = res2;
		mlog[mlen][3] = periods;
	}
	mlen++;
	if (restart && !M[i].queued && !m_stopped) {
		/* hrt.h: a periodic struct hrt_repeat goes on to the next period
		 * after the pass's now, from the expiries it has now. */
		if (M[i].rep && M[i].riv > 0) {
			int64_t n = m_advance(i, now, M[i].riv);

			seen.periodic += n > 0;
			seen.periodic_skips += n > 1;
			/* On the grid of the last start: after an again, its
			 * now + delay (hrt.h), not the first start's. */
			if (M[i].soft < HRT_TIME_MAX &&
			    ((__int128)M[i].soft - M[i].grid) % M[i].riv != 0)
				fail_step("timer %d restarted off its grid: soft %" PRId64
					  ", grid from %" PRId64 ", period %" PRId64, i,
					  M[i].soft, M[i].grid, M[i].riv);
			seen.again_grid += n > 0 && M[i].grid_again;
		}
		m_enqueue(i, b);
		MB[b].st.restarts++;
	} else if (restart && !M[i].queued) {
		seen.voided++;
	}
}

/* hrt.h: the limit is read as the pass begins (a callback's takes effect
 * at the next pass); the pass ends when it has run `limit` callbacks and
 * another is due to run, leaving the rest due, and the greedy walk runs
 * only in a pass whose leftmost run was not cut. */
static size_t m_run(int b, hrt_time_t now, int idle, int policy)
{
	hrt_time_t hz;
	size_t n = 0, limit = MB[b].limit;
	int i, cut = 0;

	if (now > HRT_TIME_MAX - 2)     /* hrt.h: the pass cap */
		now = HRT_TIME_MAX - 2;
	if (now > MB[b].now)
		MB[b].now = now;
	hz = horizon_of(now);
	mpass++;
	MB[b].st.passes++;
	while ((i = m_pick(b, now, 0)) >= 0 && M[i].soft <= now) {
		if (limit && n >= limit) {
			cut = 1;
			break;
		}
		seen.leftmost_far += M[i].hard >= hz;
		m_callback(i, b, now);
		n++;
	}
	if (!cut && (policy == HRT_GREEDY_ALWAYS || (policy == HRT_GREEDY_IDLE && idle))) {
		MB[b].st.greedy_walks++;
		while ((i = m_pick(b, now, 1)) >= 0) {
			if (limit && n >= limit) {
				cut = 1;
				seen.cut_greedy++;
				break;
			}
			seen.greedy_far += M[i].hard >= hz;
			m_callback(i, b, now);
			MB[b].st.expired_greedy++;
			n++;
		}
	}
	MB[b].st.passes_cut += cut;
	seen.cut += cut;
	return n;
}

/* Real -------------------------------------------------------------------- */

static void check_base(int b)
{
	char why[128];

	if (hrt_base_check(B[b], why, sizeof(why)))
		fail_step("base %d: %s", b, why);
}

static enum hrt_restart r_callback(struct hrt_timer *t, hrt_time_t now);

/* A timer made anew: plain or a struct hrt_repeat. */
static int r_init(struct wt *w)
{
	return w->rep ? hrt_repeat_init(&w->r, r_callback) : hrt_timer_init(&w->t, r_callback);
}

static int r_repeat_start(struct wt *w, int b, hrt_time_t v, hrt_time_t iv, hrt_time_t slack,
			  int abs)
{
	return hrt_repeat_start(&w->r, B[b], v, iv, slack, abs ? HRT_MODE_ABS : HRT_MODE_REL);
}

/* m_self_start's calls. */
static int r_self_start(struct wt *w, int b)
{
	int how = (w->var >> 1) & 3, ob = how == 0 || (how >= 2 && !w->rep) ? b : w->other_base;
	int abs;
	hrt_time_t v, slack;

	if (how == 2 && w->rep)
		return hrt_repeat_again(&w->r);
	if (how == 3 && w->rep) {
		v = plan_start(w, tv_now(B[ob]), &slack, &abs);
		return r_repeat_start(w, ob, v, w->rep_iv, slack, abs);
	}
	v = plan_start(w, tv_now(B[ob]), &slack, &abs);
	return hrt_timer_start_range(&w->t, B[ob], v, slack, abs ? HRT_MODE_ABS : HRT_MODE_REL);
}

static enum hrt_restart r_callback(struct hrt_timer *t, hrt_time_t now)
{
	struct wt *w = (struct wt *)(void *)((char *)t - offsetof(struct wt, t)), *o;
	long res = -1, res2 = -1, periods = (long)hrt_repeat_periods(&w->r, now);
	int restart = 0, abs;
	unsigned lim;
	hrt_time_t v, slack, ns;

	switch (w->action) {
	case A_FORWARD:
		res = (long)hrt_timer_forward(t, now, w->iv);
		restart = 1;
		break;
	case A_RESTART_SAME:
		restart = 1;
		break;
	case A_START_OTHER:
		v = plan_start(w, tv_now(B[w->other_base]), &slack, &abs);
		if (hrt_timer_start_range(&W[w->other].t, B[w->other_base], v, slack,
					  abs ? HRT_MODE_ABS : HRT_MODE_REL))
			res = -99;
		break;
	case A_CANCEL_OTHER:
		res = hrt_timer_cancel(&W[w->other].t);
		break;
	case A_START_SELF:
	case A_START_SELF_NORESTART:
		if (!hrt_timer_is_running(t))
			res = -98;
		v = plan_start(w, tv_now(B[w->other_base]), &slack, &abs);
		res2 = hrt_timer_start_range(t, B[w->other_base], v, slack,
					     abs ? HRT_MODE_ABS : HRT_MODE_REL);
		restart = w->action == A_START_SELF;
		break;
	case A_START_CANCEL_SELF:
		v = plan_start(w, tv_now(tv_base(t)), &slack, &abs);
		hrt_timer_start_range(t, tv_base(t), v, slack,
				      abs ? HRT_MODE_ABS : HRT_MODE_REL);
		res = hrt_timer_cancel(t);
		restart = 1;
		break;
	case A_QUERY:   /* next_event may move wheel slots in mid-pass */
		res = (long)tv_next(B[w->other_base]);
		res2 = (long)hrt_base_count(B[w->other_base]);
		check_base(w->other_base);
		restart = w->again;
		break;
	case A_CANCEL_SELF:     /* a close: the cancel wins over HRT_RESTART */
		res = w->var & 1 ? hrt_timer_try_cancel(t) : hrt_timer_cancel(t);
		restart = 1;
		break;
	case A_CANCEL_SELF_START:       /* ... and a start after it wins over the cancel */
		res = w->var & 1 ? hrt_timer_try_cancel(t) : hrt_timer_cancel(t);
		res2 = r_self_start(w, base_index(tv_base(t)));
		restart = 1;
		break;
	case A_AGAIN:
		o = w->var & 1 ? w : &W[w->other];
		res = o->rep ? hrt_repeat_again(&o->r) : -97;
		restart = w->again;
		break;
	case A_REPEAT_START:
		o = w->var & 1 ? w : &W[w->other];
		res = -97;
		if (o->rep) {
			v = plan_start(w, tv_now(B[w->other_base]), &slack, &abs);
			res = r_repeat_start(o, w->other_base, v, w->rep_iv, slack, abs);
		}
		restart = w->again;
		break;
	case A_SET_LIMIT:
		res = hrt_base_set_pass_limit(B[w->other_base], w->limit, 0);
		res2 = hrt_base_get_pass_limit(B[w->other_base], &lim, &ns);
		if (!res2)
			res2 = ns ? -96 : (long)lim;
		restart = w->again;
		break;
	case A_REINIT_SELF:
		w->rep ^= w->var & 1;
		res = r_init(w);
		break;
	}
	if (rlen < LOGMAX) {
		rlog[rlen][0] = w->id;
		rlog[rlen][1] = res;
		rlog[rlen][2] = res2;
		rlog[rlen][3] = periods;
	}
	rlen++;
	return restart ? HRT_RESTART : HRT_NORESTART;
}

/* Driver ------------------------------------------------------------------ */

static unsigned rand_limit(void)
{
	return (unsigned[]){ 0, 1, 1, 2, 2, 3, 5, 8 }[rr(8)];
}

/* A period: none (once), or as forward's intervals. */
static hrt_time_t rand_period(void)
{
	return rr(3) ? rand_interval() : 0;
}

static void plan(struct wt *w)
{
	w->action = (int)rr(A_NACTIONS);
	/* A struct hrt_repeat mostly just asks for its next period. */
	if (w->rep && rr(2))
		w->action = A_RESTART_SAME;
	if (w->action == A_SET_LIMIT && !limits)
		w->action = A_QUERY;
	w->other = (int)rr(nt);
	w->other_base = (int)rr(NB);
	w->again = (int)rr(2);
	w->var = (int)rr(8);
	w->limit = rand_limit();
	w->iv = rand_interval();
	w->rep_iv = rand_period();
	pick_start(&w->ws, &w->sl);
	if ((w->action == A_START_SELF || w->action == A_START_SELF_NORESTART ||
	     w->action == A_START_CANCEL_SELF || w->action == A_CANCEL_SELF_START ||
	     w->action == A_REPEAT_START) && rr(4)) {
		w->ws.kind = T_COARSE;
		w->ws.k = rr(30);               /* some 0: due again at once */
	}
}

static void compare_state(void)
{
	for (int b = 0; b < NB; b++) {
		struct hrt_stats s;
		const struct hrt_stats *m = &MB[b].st;
		unsigned lim;
		hrt_time_t ns;

		if ((rnd() & qmask) == 0) {
			hrt_time_t rn = tv_next(B[b]), mn = m_next(b);

			if (rn != mn)
				fail_step("base %d next_event %" PRId64 " != model %" PRId64, b, rn, mn);
		}
		if (hrt_base_count(B[b]) != (ssize_t)m_count(b))
			fail_step("base %d count %zd != model %zu", b, hrt_base_count(B[b]), m_count(b));
		/* Field by field: wheel_*, nodes_visited and reprograms are the
		 * implementation's business, not the model's. */
		hrt_base_get_stats(B[b], &s, sizeof(s));
		if (s.passes != m->passes || s.expired != m->expired ||
		    s.expired_greedy != m->expired_greedy ||
		    s.greedy_walks != m->greedy_walks || s.starts != m->starts ||
		    s.cancels != m->cancels || s.restarts != m->restarts ||
		    s.late != m->late || s.late_max_ns != m->late_max_ns ||
		    s.passes_cut != m->passes_cut)
			fail_step("base %d stats differ (real/model: passes %" PRIu64 "/%" PRIu64
			     ", expired %" PRIu64 "/%" PRIu64 ", greedy %" PRIu64 "/%" PRIu64
			     ", walks %" PRIu64 "/%" PRIu64 ", starts %" PRIu64 "/%" PRIu64
			     ", cancels %" PRIu64 "/%" PRIu64 ", restarts %" PRIu64 "/%" PRIu64
			     ", late %" PRIu64 "/%" PRIu64 ", late_max %" PRIu64 "/%" PRIu64
			     ", cut %" PRIu64 "/%" PRIu64 ")",
			     b, s.passes, m->passes, s.expired, m->expired, s.expired_greedy,
			     m->expired_greedy, s.greedy_walks, m->greedy_walks, s.starts,
			     m->starts, s.cancels, m->cancels, s.restarts, m->restarts,
			     s.late, m->late, s.late_max_ns, m->late_max_ns, s.passes_cut,
			     m->passes_cut);
		if (hrt_base_get_pass_limit(B[b], &lim, &ns) || lim != MB[b].limit || ns)
			fail_step("base %d pass limit %u/%" PRId64 " != model %u/0", b, lim, ns,
				  MB[b].limit);
	}
}

static void compare_timer(int i)
{
	struct hrt_timer *t = &W[i].t;

	if (hrt_timer_is_queued(t) != M[i].queued)
		fail_step("timer %d queued %d != model %d", i, hrt_timer_is_queued(t), M[i].queued);
	if (M[i].queued && base_index(tv_base(t)) != M[i].base)
		fail_step("timer %d on base %d != model %d", i, base_index(tv_base(t)),
		     M[i].base);
	if (tv_soft(t) != M[i].soft || tv_hard(t) != M[i].hard)
		fail_step("timer %d soft/hard %" PRId64 "/%" PRId64 " != model %" PRId64 "/%" PRId64,
		     i, tv_soft(t), tv_hard(t), M[i].soft, M[i].hard);
	if (base_index(tv_base(t)) != M[i].started - 1)        /* what again starts on */
		fail_step("timer %d last started on base %d != model %d", i,
			  base_index(tv_base(t)), M[i].started - 1);
}

/* The instant of a pass on a base whose time is `now`: mostly a little
 * later (as before the wheel), sometimes a tiny step across the horizon,
 * jiffies on, a jump over one or more levels (cascades), behind the
 * base's time (negative times too), or to the end of time. */
static hrt_time_t pass_time(hrt_time_t now)
{
	long r = rr(64);
	int l;

	if (r < 16)
		return now;                             /* the same instant again */
	if (r < 32)
		return sat_add(now, rr(5) * UNIT);
	if (r < 52)
		return sat_add(now, rr(40) * UNIT);
	if (r < 55)
		return rr(4) ? sat_add(horizon_of(now), rr(3) - 1) : sat_add(now, 1);
	if (r < 58)
		return sat_add(now, (rr(2) ? 1 + rr(3) : HRT_WHEEL_NEAR - 1 + rr(3)) * JIFFY +
				    rand_d());
	if (r < 61) {
		l = rand_jump_level();
		if (rr(2))
			return sat_add(grid(now, l, 1), rand_d());
		return sat_add(now, level_span(l) + rand_d());
	}
	if (r < 63) {
		switch (rr(3)) {
		case 0: return sat_add(now, -rr(40) * UNIT);
		case 1: return -rr(45) * UNIT;
		default: return sat_add(-level_span((int)rr(HRT_WHEEL_LEVELS)), rand_d());
		}
	}
	if (!rr(128))
		return HRT_TIME_MAX - rr(4);
	return sat_add(now, rr(40) * UNIT);
}

static void do_pass(void)
{
	int b = (int)rr(NB), idle = (int)rr(2), policy = (int)rr(3);
	hrt_time_t now = pass_time(MB[b].now);
	size_t rn, mn;
	unsigned limit;

	seen.behind += now < MB[b].now;
	hrt_base_set_greedy(B[b], (enum hrt_greedy)policy);
	if (limits && !rr(4)) {
		MB[b].limit = rand_limit();
		if (hrt_base_set_pass_limit(B[b], MB[b].limit, 0))
			fail_step("set_pass_limit refused");
	}
	rlen = mlen = 0;
	limit = MB[b].limit;
	rn = hrt_base_run(B[b], now, idle);
	mn = m_run(b, now, idle, policy);
	if (rn != mn || rlen != mlen)
		fail_step("pass on base %d at %" PRId64 " (idle %d, policy %d, limit %u) ran %zu, "
			  "model %zu", b, now, idle, policy, limit, rn, mn);
	for (int k = 0; k < rlen && k < LOGMAX; k++)
		if (rlog[k][0] != mlog[k][0] || rlog[k][1] != mlog[k][1] ||
		    rlog[k][2] != mlog[k][2] || rlog[k][3] != mlog[k][3])
			fail_step("pass on base %d at %" PRId64 " (idle %d, policy %d, limit %u): "
				  "callback #%d was timer %ld (results %ld %ld, periods %ld), model "
				  "timer %ld (results %ld %ld, periods %ld)", b, now, idle, policy,
				  limit, k, rlog[k][0], rlog[k][1], rlog[k][2], rlog[k][3],
				  mlog[k][0], mlog[k][1], mlog[k][2], mlog[k][3]);
	if (tv_now(B[b]) != MB[b].now)
		fail_step("base %d now %" PRId64 " != %" PRId64, b, tv_now(B[b]), MB[b].now);
	if (now >= HRT_TIME_MAX - 2) {
		seen.end_of_time++;
		if (epoch_end > step + 256)
			epoch_end = step + 256;         /* a while at the end, then anew */
	}
	for (int k = 0; k < NB; k++)
		check_base(k);
}

/* A driver's start on base b: its soft expiry, an offset (*rel) or an
 * instant, and its slack. */
static hrt_time_t pick_first(int b, int *rel, hrt_time_t *slack)
{
	struct when ws;
	struct slack sl;
	hrt_time_t v, soft, off;
	int abs;

	*rel = (int)rr(2);
	pick_start(&ws, &sl);
	v = when_eval(&ws, MB[b].now, &abs);
	if (*rel && abs) {              /* an instant as an offset, if it is one */
		if (__builtin_sub_overflow(v, MB[b].now, &off))
			*rel = 0;
		else
			v = off;
	} else if (!*rel && !abs) {
		v = sat_add(MB[b].now, v);
	}
	soft = *rel ? sat_add(MB[b].now, v) : v;
	*slack = rr(3) ? slack_eval(&sl, soft, MB[b].now) : 0;
	return v;
}

static void do_start(int i, int b)
{
	struct wt *w = &W[i];
	hrt_time_t v, slack;
	int rel, r;

	v = pick_first(b, &rel, &slack);
	plan(w);
	r = slack || rr(2) ? hrt_timer_start_range(&w->t, B[b], v, slack, rel)
			   : hrt_timer_start(&w->t, B[b], v, rel);
	if (r)
		fail_step("start returned %d", r);
	m_start(i, b, v, slack, rel);
}

/* hrt_repeat_start of a struct hrt_repeat (a plain timer gets a plain
 * start): relative or absolute, once or periodic. */
static void do_repeat_start(int i, int b)
{
	struct wt *w = &W[i];
	hrt_time_t v, slack, iv;
	int rel, r;

	if (!w->rep) {
		do_start(i, b);
		return;
	}
	v = pick_first(b, &rel, &slack);
	iv = rand_period();
	plan(w);
	r = r_repeat_start(w, b, v, iv, slack, !rel);
	if (r)
		fail_step("repeat_start(%d) returned %d", i, r);
	m_repeat_start(i, b, v, iv, slack, rel);
}

/* hrt_repeat_again of a struct hrt_repeat, sometimes with a new plan for
 * its callback; -ENOENT before its first start. */
static void do_again(int i, int b)
{
	int r, m;

	if (!W[i].rep) {
		do_start(i, b);
		return;
	}
	if (rr(2))
		plan(&W[i]);
	r = hrt_repeat_again(&W[i].r);
	m = m_again(i);
	if (r != m)
		fail_step("again(%d) = %d, model %d", i, r, m);
}

/* A timer that is not queued made anew, plain or a struct hrt_repeat: its
 * expiries 0, never started (hrt_repeat_again: -ENOENT). */
static void do_reinit(int i)
{
	int r;

	if (M[i].queued)
		return;
	if (hrt_timer_is_queued(&W[i].t))       /* would corrupt the base */
		fail_step("timer %d queued, model not", i);
	W[i].rep = rr(64) < rep_share;
	r = r_init(&W[i]);
	if (r)
		fail_step("init(%d) returned %d", i, r);
	m_init(i, W[i].rep);
	seen.reinits++;
}

/*
 * A queued timer re-armed onto another queued timer's hard expiry (FIFO
 * among equal hard expiries, whichever slot or tree each sits in, the
 * other started before or after), or next to its own hard expiry (the
 * same wheel slot: moved to its tail with no count changing, or just
 * across a slot boundary), with a soft expiry in its slot or not.
 */
static void do_rearm_near(int i, int b)
{
	static const hrt_time_t near[] = { 0, 0, 1, -1, UNIT, -UNIT, JIFFY, -JIFFY };
	int k = (int)rr(nt), r;
	hrt_time_t hard, slack;

	if (M[k].queued && rr(3)) {
		hard = M[k].hard;
		b = rr(4) ? M[k].base : b;
	} else if (M[i].queued) {
		hard = sat_add(M[i].hard, near[rr(8)]);
		b = rr(4) ? M[i].base : b;
	} else {
		do_start(i, b);
		return;
	}
	/* Windows up to a level's slot: equal hard expiries whose soft ones
	 * sit in the tree and in wheel slots of every level (the tie rule). */
	slack = (hrt_time_t[]){ 0, 0, UNIT, JIFFY, 2 * JIFFY, level_span(rand_level()) }[rr(6)];
	if (M[k].queued && hard == M[k].hard && !rr(4))
		slack = hard - M[k].soft;       /* a full tie: start order */
	if (hard == HRT_TIME_MAX || __builtin_sub_overflow(hard, slack, &(hrt_time_t){ 0 }))
		slack = 0;
	seen.rearm_near++;
	plan(&W[i]);
	r = hrt_timer_start_range(&W[i].t, B[b], hard - slack, slack, HRT_MODE_ABS);
	if (r)
		fail_step("re-arm returned %d", r);
	m_start(i, b, hard - slack, slack, 0);
}

/* Started in one order, due in the other: i at H + d, then j at H, then
 * i re-armed to H (a far H: one wheel slot for all three when d is
 * small).  i must now run after j: a re-arm that left i where it sat in
 * its slot would put it first. */
static void do_tie_probe(int i, int b)
{
	static const hrt_time_t near[] = { 1, -1, UNIT, -UNIT, JIFFY / 2, JIFFY };
	int j = (int)rr(nt), l = rand_level();
	hrt_time_t h = sat_add(grid(MB[b].now, l, 1 + rr(3)), rand_d()), d = near[rr(6)];
	int r = 0;

	if (i == j || h > HRT_TIME_MAX - 2 * JIFFY || h < INT64_MIN + JIFFY)
		return;
	seen.tie_probes++;
	plan(&W[i]);
	plan(&W[j]);
	r |= hrt_timer_start(&W[i].t, B[b], h + d, HRT_MODE_ABS);
	m_start(i, b, h + d, 0, 0);
	r |= hrt_timer_start(&W[j].t, B[b], h, HRT_MODE_ABS);
	m_start(j, b, h, 0, 0);
	r |= hrt_timer_start(&W[i].t, B[b], h, HRT_MODE_ABS);
	m_start(i, b, h, 0, 0);
	if (r)
		fail_step("tie probe start returned %d", r);
	compare_timer(j);
}

/*
 * A few timers re-armed again and again inside one far slot (the wheel
 * keeps such a timer where it sits and gives it a new start sequence),
 * onto each other's hard expiries, onto the slot's first and last instant
 * and just outside it, so that equal hard expiries sit in a slot out of
 * list order, then cascade and leave it; the passes check the order.
 */
static void do_slot_shuffle(int b)
{
	int l = rand_level(), g[6], ng = 2 + (int)rr(5), k;
	hrt_time_t s = grid(MB[b].now, l, 1 + rr(2)), span = level_span(l), h[8];

	if (span > HRT_TIME_MAX / 4 || s > HRT_TIME_MAX - 2 * span)
		return;                 /* level 7, or the end of time */
	h[0] = h[1] = s;
	h[2] = s + span - 1;
	h[3] = s + span / 2;
	h[4] = s + 1;
	h[5] = s - 1;                   /* the slot before */
	h[6] = s + span;                /* the slot after */
	h[7] = s + (hrt_time_t)rr(span);
	for (k = 0; k < ng; k++)
		g[k] = (int)rr(nt);
	for (k = 0; k < 3 * ng; k++) {
		int i = g[rr(ng)], r;
		hrt_time_t hard = h[rr(rr(4) ? 5 : 8)];
		hrt_time_t slack = rr(3) || hard - s < JIFFY ? 0 : (hrt_time_t)rr(JIFFY);

		plan(&W[i]);
		r = hrt_timer_start_range(&W[i].t, B[b], hard - slack, slack, HRT_MODE_ABS);
		if (r)
			fail_step("slot shuffle re-arm returned %d", r);
		m_start(i, b, hard - slack, slack, 0);
		seen.slot_shuffles++;
	}
	for (k = 0; k < ng; k++)
		compare_timer(g[k]);
}

static void do_forward(int i, int b)
{
	hrt_time_t now, iv;
	int64_t f, mf;
	int abs;

	if (rr(4)) {
		now = sat_add(MB[b].now, rr(40) * UNIT);
	} else {                        /* far ahead or behind */
		struct when ws;

		pick_when(&ws);
		now = when_eval(&ws, MB[b].now, &abs);
		if (!abs)
			now = sat_add(MB[b].now, now);
	}
	iv = rr(6) ? (rr(4) ? (1 + rr(30)) * UNIT : rand_interval()) : -rr(2);
	f = hrt_timer_forward(&W[i].t, now, iv);
	mf = m_forward(i, now, iv);
	if (f != mf)
		fail_step("forward(%d, %" PRId64 ", %" PRId64 ") = %" PRId64 ", model %" PRId64,
		     i, now, iv, f, mf);
}

static void new_bases(void)
{
	memset(M, 0, sizeof(M));
	memset(MB, 0, sizeof(MB));
	mseq = mpass = 0;
	for (int b = 0; b < NB; b++) {
		unsigned flags = rr(3) ? 0 : HRT_BASE_UNLOCKED;

		B[b] = tv_virtual(flags);
		assert_non_null(B[b]);
		seen.unlocked_bases += !!flags;
	}
	rep_share = (int[]){ 0, 16, 32, 64 }[rr(4)];
	limits = (int)rr(2);
	/* hrt.h: every timer of a freed base is re-initialised before use. */
	for (int i = 0; i < NT; i++) {
		W[i].id = i;
		W[i].rep = rr(64) < rep_share;
		assert_int_equal(r_init(&W[i]), 0);
		m_init(i, W[i].rep);
	}
	qmask = (uint64_t[]){ 0, 1, 7 }[rr(3)];
	nt = (int[]){ NT, NT, 24, 6 }[rr(4)];
	coarse = rr(3) ? 36 : 8;
	focus = (int)rr(HRT_WHEEL_LEVELS);
	epoch_end = step + 1 + rr(1L << 17);
	seen.epochs++;
}

/* Cancels everything (each result checked), frees the bases. */
static void free_bases(void)
{
	for (int b = 0; b < NB; b++)
		check_base(b);
	for (int i = 0; i < NT; i++) {
		int r = hrt_timer_cancel(&W[i].t), m = m_cancel(i);

		if (r != m)
			fail_step("final cancel(%d) = %d, model %d", i, r, m);
		compare_timer(i);
	}
	compare_state();
	for (int b = 0; b < NB; b++) {
		struct hrt_stats s;

		hrt_base_get_stats(B[b], &s, sizeof(s));
		seen.wheel_moves += s.wheel_moves;
		seen.wheel_cascades += s.wheel_cascades;
		assert_int_equal(hrt_base_count(B[b]), 0);
		assert_int_equal(hrt_base_free(B[b]), 0);
		B[b] = NULL;
	}
}

static void one_op(void)
{
	int i = (int)rr(nt), b = (int)rr(NB), r, m;

	switch (rr(26)) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6:
		do_start(i, b);
		break;
	case 20:
		do_rearm_near(i, b);
		break;
	case 21:
		do_tie_probe(i, b);
		break;
	case 22:
		do_slot_shuffle(b);
		break;
	case 23:
		do_repeat_start(i, b);
		break;
	case 24:
		do_again(i, b);
		break;
	case 25:
		do_reinit(i);
		break;
	case 7: case 8: case 9: case 10:
		r = hrt_timer_cancel(&W[i].t);
		m = m_cancel(i);
		if (r != m)
			fail_step("cancel(%d) = %d, model %d", i, r, m);
		break;
	case 11:
		r = hrt_timer_try_cancel(&W[i].t);
		m = m_cancel(i);
		if (r != m)
			fail_step("try_cancel(%d) = %d, model %d", i, r, m);
		break;
	case 12:
		do_forward(i, b);
		break;
	case 13:
		if (hrt_timer_start_range(&W[i].t, B[b], 0, -1, HRT_MODE_ABS) != -EINVAL ||
		    hrt_timer_start_range(&W[i].t, B[b], 0, 0, (enum hrt_mode)7) != -EINVAL)
			fail_step("bad start arguments accepted");
		/* Refused, nothing kept: what again takes stays the last start's. */
		if (W[i].rep && (hrt_repeat_start(&W[i].r, B[b], 0, -1, 0, HRT_MODE_REL) != -EINVAL ||
				 hrt_repeat_start(&W[i].r, B[b], 0, 1, -1, HRT_MODE_REL) != -EINVAL ||
				 hrt_repeat_start(&W[i].r, B[b], 0, 1, 0, (enum hrt_mode)7) != -EINVAL))
			fail_step("bad repeat_start arguments accepted");
		if (hrt_base_set_pass_limit(B[b], 1, -1) != -EINVAL)
			fail_step("bad pass limit accepted");
		break;
	default:
		do_pass();
		break;
	}
	compare_timer(i);
	if (step % 64 == 0)
		for (int k = 0; k < NT; k++)
			compare_timer(k);
	compare_state();
}

static long ops = 1000000;

static void test_differential(void **state)
{
	(void)state;
	rng = seed * 2654435761u + 0x9e3779b97f4a7c15ull;
	if (!rng)
		rng = 1;
	memset(&seen, 0, sizeof(seen));
	step = 0;
	new_bases();
	for (step = 0; step < ops; step++) {
		if (step >= epoch_end) {
			free_bases();
			new_bases();
		}
		one_op();
	}
	free_bases();
	printf("seed %llu: %ld operations matched the model\n", seed, ops);
	printf("  %ld epochs (%ld unlocked bases), %" PRIu64 " passes at the end of time, %"
	       PRIu64 " behind the base's time\n", seen.epochs, seen.unlocked_bases,
	       seen.end_of_time, seen.behind);
	printf("  wheel: %" PRIu64 " moves into the tree, %" PRIu64 " cascades\n",
	       seen.wheel_moves, seen.wheel_cascades);
	printf("  %" PRIu64 " re-arms onto or next to a queued hard expiry, %" PRIu64
	       " tie probes\n", seen.rearm_near, seen.tie_probes);
	printf("  %" PRIu64 " re-arms inside one far slot\n", seen.slot_shuffles);
	printf("  callbacks with hard past the horizon: %" PRIu64 " greedy, %" PRIu64
	       " leftmost\n", seen.greedy_far, seen.leftmost_far);
	printf("  hrt_repeat: %" PRIu64 " starts, %" PRIu64 " agains (%" PRIu64 " -ENOENT), %"
	       PRIu64 " periodic restarts (%" PRIu64 " skipping periods), %" PRIu64
	       " re-initialisations\n", seen.repeat_starts, seen.agains, seen.again_enoent,
	       seen.periodic, seen.periodic_skips, seen.reinits);
	printf("  HRT_RESTART voided by a self-cancel: %" PRIu64 ", a start after it won: %"
	       PRIu64 "\n", seen.voided, seen.cancel_start);
	printf("  passes cut by the limit: %" PRIu64 " (%" PRIu64 " in the greedy walk)\n",
	       seen.cut, seen.cut_greedy);
	printf("  hrt_repeat_periods: %" PRIu64 " callbacks told of skipped periods; %" PRIu64
	       " periodic restarts on a grid hrt_repeat_again moved\n", seen.periods_late,
	       seen.again_grid);
	/* Proof that the wheel was exercised; a short replay may not get there. */
	if (ops >= 100000) {
		assert_true(seen.wheel_moves > 0);
		assert_true(seen.wheel_cascades > 0);
		assert_true(seen.greedy_far > 0);
		assert_true(seen.periodic_skips > 0 && seen.agains > 0 && seen.again_enoent > 0);
		assert_true(seen.voided > 0 && seen.cancel_start > 0);
		assert_true(seen.cut_greedy > 0 && seen.cut > seen.cut_greedy);
		assert_true(seen.periods_late > 0 && seen.again_grid > 0);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_differential),
	};

	seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20111004;
	if (argc > 2)
		ops = strtol(argv[2], NULL, 0);
	printf("test_diff seed %llu, %ld operations (replay: %s %llu %ld)\n", seed, ops,
	       argv[0], seed, ops);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
