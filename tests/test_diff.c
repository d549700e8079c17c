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
	      A_NACTIONS };

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

struct wt {
	struct hrt_timer t;
	int id;
	/* The callback's plan, fixed when the driver starts the timer. */
	int action, other, other_base, again;
	hrt_time_t iv;                  /* A_FORWARD's interval */
	struct when ws;
	struct slack sl;
};

struct mt {                     /* the model's view of timer i */
	int queued, base;
	hrt_time_t soft, hard;
	uint64_t seq;           /* queueing order */
	uint64_t ran_pass;      /* pass that last ran it */
	int ran_base;
};

struct mbase { hrt_time_t now; struct hrt_stats st; };

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
} seen;

/* Callback logs: (id, results of the callback's own calls) per callback. */
#define LOGMAX (NT * 4)
static long rlog[LOGMAX][3], mlog[LOGMAX][3];
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
	M[i].queued = 0;
	m_enqueue(i, target);
	MB[target].st.starts++;
	return 0;
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
 * saturates at INT64_MAX.  Refusals: -EINVAL, then -EBUSY (queued). */
static int64_t m_forward(int i, hrt_time_t now, hrt_time_t iv)
{
	__int128 n;

	if (iv <= 0)
		return -EINVAL;
	if (M[i].queued)
		return -EBUSY;
	if (M[i].soft > now)
		return 0;
	n = ((__int128)now - M[i].soft) / iv + 1;
	M[i].soft = clamp128(M[i].soft + n * iv);
	M[i].hard = cap_hard(M[i].soft, clamp128(M[i].hard + n * iv));
	return n > (__int128)INT64_MAX ? INT64_MAX : (int64_t)n;
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

static void m_callback(int i, int b, hrt_time_t now)
{
	struct wt *w = &W[i];
	long res = -1, res2 = -1;
	int restart = 0, abs;
	hrt_time_t v, slack;

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
	}
	m_running = m_running_base = -1;
	if (mlen < LOGMAX) {
		mlog[mlen][0] = i;
		mlog[mlen][1] = res;
		mlog[mlen][2] = res2;
	}
	mlen++;
	if (restart && !M[i].queued && !m_stopped) {
		m_enqueue(i, b);
		MB[b].st.restarts++;
	}
}

static size_t m_run(int b, hrt_time_t now, int idle, int policy)
{
	hrt_time_t hz;
	size_t n = 0;
	int i;

	if (now > HRT_TIME_MAX - 2)     /* hrt.h: the pass cap */
		now = HRT_TIME_MAX - 2;
	if (now > MB[b].now)
		MB[b].now = now;
	hz = horizon_of(now);
	mpass++;
	MB[b].st.passes++;
	while ((i = m_pick(b, now, 0)) >= 0 && M[i].soft <= now) {
		seen.leftmost_far += M[i].hard >= hz;
		m_callback(i, b, now);
		n++;
	}
	if (policy == HRT_GREEDY_ALWAYS || (policy == HRT_GREEDY_IDLE && idle)) {
		MB[b].st.greedy_walks++;
		while ((i = m_pick(b, now, 1)) >= 0) {
			seen.greedy_far += M[i].hard >= hz;
			m_callback(i, b, now);
			MB[b].st.expired_greedy++;
			n++;
		}
	}
	return n;
}

/* Real -------------------------------------------------------------------- */

static void check_base(int b)
{
	char why[128];

	if (hrt_base_check(B[b], why, sizeof(why)))
		fail_step("base %d: %s", b, why);
}

static enum hrt_restart r_callback(struct hrt_timer *t, hrt_time_t now)
{
	struct wt *w = (struct wt *)(void *)((char *)t - offsetof(struct wt, t));
	long res = -1, res2 = -1;
	int restart = 0, abs;
	hrt_time_t v, slack;

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
	}
	if (rlen < LOGMAX) {
		rlog[rlen][0] = w->id;
		rlog[rlen][1] = res;
		rlog[rlen][2] = res2;
	}
	rlen++;
	return restart ? HRT_RESTART : HRT_NORESTART;
}

/* Driver ------------------------------------------------------------------ */

static void plan(struct wt *w)
{
	w->action = (int)rr(A_NACTIONS);
	w->other = (int)rr(nt);
	w->other_base = (int)rr(NB);
	w->again = (int)rr(2);
	w->iv = rand_interval();
	pick_start(&w->ws, &w->sl);
	if ((w->action == A_START_SELF || w->action == A_START_SELF_NORESTART ||
	     w->action == A_START_CANCEL_SELF) && rr(4)) {
		w->ws.kind = T_COARSE;
		w->ws.k = rr(30);               /* some 0: due again at once */
	}
}

static void compare_state(void)
{
	for (int b = 0; b < NB; b++) {
		struct hrt_stats s;
		const struct hrt_stats *m = &MB[b].st;

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
		    s.late != m->late || s.late_max_ns != m->late_max_ns)
			fail_step("base %d stats differ (real/model: passes %" PRIu64 "/%" PRIu64
			     ", expired %" PRIu64 "/%" PRIu64 ", greedy %" PRIu64 "/%" PRIu64
			     ", walks %" PRIu64 "/%" PRIu64 ", starts %" PRIu64 "/%" PRIu64
			     ", cancels %" PRIu64 "/%" PRIu64 ", restarts %" PRIu64 "/%" PRIu64
			     ", late %" PRIu64 "/%" PRIu64 ", late_max %" PRIu64 "/%" PRIu64 ")",
			     b, s.passes, m->passes, s.expired, m->expired, s.expired_greedy,
			     m->expired_greedy, s.greedy_walks, m->greedy_walks, s.starts,
			     m->starts, s.cancels, m->cancels, s.restarts, m->restarts,
			     s.late, m->late, s.late_max_ns, m->late_max_ns);
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

	seen.behind += now < MB[b].now;
	hrt_base_set_greedy(B[b], (enum hrt_greedy)policy);
	rlen = mlen = 0;
	rn = hrt_base_run(B[b], now, idle);
	mn = m_run(b, now, idle, policy);
	if (rn != mn || rlen != mlen)
		fail_step("pass on base %d at %" PRId64 " (idle %d, policy %d) ran %zu, model %zu",
		     b, now, idle, policy, rn, mn);
	for (int k = 0; k < rlen && k < LOGMAX; k++)
		if (rlog[k][0] != mlog[k][0] || rlog[k][1] != mlog[k][1] ||
		    rlog[k][2] != mlog[k][2])
			fail_step("pass on base %d at %" PRId64 " (idle %d, policy %d): callback #%d "
			     "was timer %ld (results %ld %ld), model timer %ld (results %ld %ld)",
			     b, now, idle, policy, k, rlog[k][0], rlog[k][1], rlog[k][2],
			     mlog[k][0], mlog[k][1], mlog[k][2]);
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

static void do_start(int i, int b)
{
	struct wt *w = &W[i];
	struct when ws;
	struct slack sl;
	hrt_time_t v, soft, slack, off;
	int rel = (int)rr(2), abs, r;

	pick_start(&ws, &sl);
	v = when_eval(&ws, MB[b].now, &abs);
	if (rel && abs) {               /* an instant as an offset, if it is one */
		if (__builtin_sub_overflow(v, MB[b].now, &off))
			rel = 0;
		else
			v = off;
	} else if (!rel && !abs) {
		v = sat_add(MB[b].now, v);
	}
	soft = rel ? sat_add(MB[b].now, v) : v;
	slack = rr(3) ? slack_eval(&sl, soft, MB[b].now) : 0;
	plan(w);
	r = slack || rr(2) ? hrt_timer_start_range(&w->t, B[b], v, slack, rel)
			   : hrt_timer_start(&w->t, B[b], v, rel);
	if (r)
		fail_step("start returned %d", r);
	m_start(i, b, v, slack, rel);
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
	/* hrt.h: every timer of a freed base is re-initialised before use. */
	for (int i = 0; i < NT; i++) {
		hrt_timer_init(&W[i].t, r_callback);
		W[i].id = i;
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

	switch (rr(23)) {
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
	/* Proof that the wheel was exercised; a short replay may not get there. */
	if (ops >= 100000) {
		assert_true(seen.wheel_moves > 0);
		assert_true(seen.wheel_cascades > 0);
		assert_true(seen.greedy_far > 0);
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
