/* SPDX-License-Identifier: MIT */
/*
 * test_diff.c - randomized differential test of the timer base against a
 * brute-force model (a plain array of timers, linear scans for everything).
 *
 * Random operations on two virtual bases: start, start_range (absolute and
 * relative), cancel, try_cancel, forward, queries, and passes at random
 * times with random idle flags under every policy.  Callbacks forward and
 * restart themselves, start and cancel other timers, re-start themselves.
 * After every pass the exact sequence of callbacks (and what each callback's
 * own calls returned) must match the model; next_event, queue state and
 * stats are compared after every operation, the tree checker runs after
 * every pass.  Failures print the seed and the step:
 *     build/tests/test_diff SEED [OPS]
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

#define NT 192          /* timers */
#define NB 2            /* bases */
#define UNIT 10         /* coarse times so that ties are common */

enum action { A_NONE, A_FORWARD, A_RESTART_SAME, A_START_OTHER, A_CANCEL_OTHER,
	      A_START_SELF, A_START_SELF_NORESTART, A_START_CANCEL_SELF, A_NACTIONS };

struct wt {
	struct hrt_timer t;
	int id;
	/* The callback's plan, fixed when the driver starts the timer. */
	int action, other, other_base;
	hrt_time_t p1, p2;
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
static uint64_t rng;
static unsigned long long seed;
static long step;

/* Callback logs: (id, result of the callback's own call) per callback. */
#define LOGMAX (NT * 4)
static long rlog[LOGMAX][2], mlog[LOGMAX][2];
static int rlen, mlen;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static long rr(long n) { return (long)(rnd() % (uint64_t)n); }

#define FAIL(...) do { \
	fprintf(stderr, "FAIL seed=%llu step=%ld: ", seed, step); \
	fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n  replay: %s %llu\n", \
		"build/tests/test_diff", seed); fail(); } while (0)

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

/* Model ------------------------------------------------------------------- */

static void m_enqueue(int i, int b)
{
	if (M[i].ran_base != b)
		M[i].ran_pass = 0;      /* "ran" is forgotten on another base */
	M[i].queued = 1;
	M[i].base = b;
	M[i].seq = ++mseq;
}

static void m_start(int i, int b, hrt_time_t soft, hrt_time_t slack, int rel)
{
	int target = b;

	if (rel)
		soft = sat_add(MB[b].now, soft);
	if (i == m_running && b != m_running_base)
		target = m_running_base;        /* no migration while running */
	M[i].soft = soft;
	M[i].hard = cap_hard(soft, sat_add(soft, slack));
	M[i].queued = 0;
	m_enqueue(i, target);
	MB[target].st.starts++;
}

static int m_cancel(int i)
{
	if (!M[i].queued)
		return 0;
	M[i].queued = 0;
	MB[M[i].base].st.cancels++;
	return 1;
}

static uint64_t m_forward(int i, hrt_time_t now, hrt_time_t iv)
{
	uint64_t n = 0;

	if (M[i].queued || iv <= 0)
		return 0;
	while (M[i].hard <= now) {      /* a loop: the real one divides */
		M[i].hard = sat_add(M[i].hard, iv);
		M[i].soft = sat_add(M[i].soft, iv);
		n++;
		if (M[i].hard == HRT_TIME_MAX)
			break;
	}
	M[i].hard = cap_hard(M[i].soft, M[i].hard);
	return n;
}

static hrt_time_t m_next(int b)
{
	hrt_time_t n = HRT_TIME_MAX;

	for (int i = 0; i < NT; i++)
		if (M[i].queued && M[i].base == b && M[i].hard < n)
			n = M[i].hard;
	return n;
}

/* First not-yet-run queued timer of base b in (hard, seq) order; due only. */
static int m_pick(int b, hrt_time_t now, int due)
{
	int best = -1;

	for (int i = 0; i < NT; i++) {
		if (!M[i].queued || M[i].base != b || M[i].ran_pass == mpass)
			continue;
		if (due && M[i].soft > now)
			continue;
		if (best < 0 || M[i].hard < M[best].hard ||
		    (M[i].hard == M[best].hard && M[i].seq < M[best].seq))
			best = i;
	}
	return best;
}

static void m_callback(int i, int b, hrt_time_t now)
{
	struct wt *w = &W[i];
	long res = -1;
	int restart = 0;

	M[i].queued = 0;
	M[i].ran_pass = mpass;
	M[i].ran_base = b;
	MB[b].st.expired++;
	m_running = i;
	m_running_base = b;
	switch (w->action) {
	case A_FORWARD:
		res = (long)m_forward(i, now, w->p1);
		restart = 1;
		break;
	case A_RESTART_SAME:
		restart = 1;
		break;
	case A_START_OTHER:
		m_start(w->other, w->other_base, w->p1, w->p2, 1);
		break;
	case A_CANCEL_OTHER:
		res = m_cancel(w->other);
		break;
	case A_START_SELF:
	case A_START_SELF_NORESTART:
		m_start(i, w->other_base, w->p1, w->p2, 1);
		restart = w->action == A_START_SELF;
		break;
	case A_START_CANCEL_SELF:
		m_start(i, b, w->p1, w->p2, 1);
		res = m_cancel(i);
		restart = 1;
		break;
	}
	m_running = m_running_base = -1;
	if (mlen < LOGMAX) {
		mlog[mlen][0] = i;
		mlog[mlen][1] = res;
	}
	mlen++;
	if (restart && !M[i].queued) {
		m_enqueue(i, b);
		MB[b].st.restarts++;
	}
}

static size_t m_run(int b, hrt_time_t now, int idle, int policy)
{
	size_t n = 0;
	int i;

	if (now > MB[b].now)
		MB[b].now = now;
	mpass++;
	MB[b].st.passes++;
	while ((i = m_pick(b, now, 0)) >= 0 && M[i].soft <= now) {
		m_callback(i, b, now);
		n++;
	}
	if (policy == HRT_GREEDY_ALWAYS || (policy == HRT_GREEDY_IDLE && idle)) {
		MB[b].st.greedy_walks++;
		while ((i = m_pick(b, now, 1)) >= 0) {
			m_callback(i, b, now);
			MB[b].st.expired_greedy++;
			n++;
		}
	}
	return n;
}

/* Real -------------------------------------------------------------------- */

static enum hrt_restart r_callback(struct hrt_timer *t, hrt_time_t now)
{
	struct wt *w = (struct wt *)(void *)((char *)t - offsetof(struct wt, t));
	long res = -1;
	int restart = 0;

	switch (w->action) {
	case A_FORWARD:
		res = (long)hrt_timer_forward(t, now, w->p1);
		restart = 1;
		break;
	case A_RESTART_SAME:
		restart = 1;
		break;
	case A_START_OTHER:
		if (hrt_timer_start_range(&W[w->other].t, B[w->other_base], w->p1, w->p2,
					  HRT_MODE_REL))
			res = -99;
		break;
	case A_CANCEL_OTHER:
		res = hrt_timer_cancel(&W[w->other].t);
		break;
	case A_START_SELF:
	case A_START_SELF_NORESTART:
		if (!hrt_timer_is_running(t))
			res = -98;
		hrt_timer_start_range(t, B[w->other_base], w->p1, w->p2, HRT_MODE_REL);
		restart = w->action == A_START_SELF;
		break;
	case A_START_CANCEL_SELF:
		hrt_timer_start_range(t, hrt_timer_get_base(t), w->p1, w->p2, HRT_MODE_REL);
		res = hrt_timer_cancel(t);
		restart = 1;
		break;
	}
	if (rlen < LOGMAX) {
		rlog[rlen][0] = w->id;
		rlog[rlen][1] = res;
	}
	rlen++;
	return restart ? HRT_RESTART : HRT_NORESTART;
}

/* Driver ------------------------------------------------------------------ */

static hrt_time_t rand_soft_offset(void)
{
	if (rr(50) == 0)
		return HRT_TIME_MAX - rr(3) * UNIT;     /* far: saturation */
	return (rr(45) - 5) * UNIT;                  /* some in the past */
}

static hrt_time_t rand_slack(void)
{
	switch (rr(8)) {
	case 0: return 0;
	case 1: return HRT_TIME_MAX - rr(5);        /* saturates hard */
	default: return rr(30) * UNIT;
	}
}

static void plan(struct wt *w)
{
	w->action = (int)rr(A_NACTIONS);
	w->other = (int)rr(NT);
	w->other_base = (int)rr(NB);
	w->p1 = w->action == A_FORWARD ? (1 + rr(20)) * UNIT : rand_soft_offset();
	w->p2 = rand_slack();
	if (w->action == A_START_SELF || w->action == A_START_SELF_NORESTART ||
	    w->action == A_START_CANCEL_SELF)
		w->p1 = rr(30) * UNIT;          /* some <= 0: due again at once */
}

static void compare_state(void)
{
	for (int b = 0; b < NB; b++) {
		hrt_time_t rn = hrt_base_next_event(B[b]), mn = m_next(b);
		struct hrt_stats s;

		if (rn != mn)
			FAIL("base %d next_event %" PRId64 " != model %" PRId64, b, rn, mn);
		hrt_base_get_stats(B[b], &s);
		if (s.passes != MB[b].st.passes || s.expired != MB[b].st.expired ||
		    s.expired_greedy != MB[b].st.expired_greedy ||
		    s.greedy_walks != MB[b].st.greedy_walks || s.starts != MB[b].st.starts ||
		    s.cancels != MB[b].st.cancels || s.restarts != MB[b].st.restarts)
			FAIL("base %d stats differ (expired %" PRIu64 "/%" PRIu64 ", starts %"
			     PRIu64 "/%" PRIu64 ", cancels %" PRIu64 "/%" PRIu64 ", restarts %"
			     PRIu64 "/%" PRIu64 ")", b, s.expired, MB[b].st.expired, s.starts,
			     MB[b].st.starts, s.cancels, MB[b].st.cancels, s.restarts,
			     MB[b].st.restarts);
	}
}

static void compare_timer(int i)
{
	struct hrt_timer *t = &W[i].t;

	if (hrt_timer_is_queued(t) != M[i].queued)
		FAIL("timer %d queued %d != model %d", i, hrt_timer_is_queued(t), M[i].queued);
	if (M[i].queued && base_index(hrt_timer_get_base(t)) != M[i].base)
		FAIL("timer %d on base %d != model %d", i, base_index(hrt_timer_get_base(t)),
		     M[i].base);
	if (hrt_timer_get_soft(t) != M[i].soft || hrt_timer_get_hard(t) != M[i].hard)
		FAIL("timer %d soft/hard %" PRId64 "/%" PRId64 " != model %" PRId64 "/%" PRId64,
		     i, hrt_timer_get_soft(t), hrt_timer_get_hard(t), M[i].soft, M[i].hard);
}

static void check_bases(void)
{
	for (int b = 0; b < NB; b++) {
		char why[128];

		if (hrt_base_check(B[b], why, sizeof(why)))
			FAIL("base %d: %s", b, why);
	}
}

static void do_pass(void)
{
	int b = (int)rr(NB), idle = (int)rr(2), policy = (int)rr(3);
	hrt_time_t now = MB[b].now;
	size_t rn, mn;

	switch (rr(4)) {
	case 0: break;                               /* the same instant again */
	case 1: now += rr(5) * UNIT; break;
	default: now += rr(40) * UNIT; break;
	}
	hrt_base_set_greedy(B[b], (enum hrt_greedy)policy);
	rlen = mlen = 0;
	rn = hrt_base_run(B[b], now, idle);
	mn = m_run(b, now, idle, policy);
	if (rn != mn || rlen != mlen)
		FAIL("pass on base %d at %" PRId64 " (idle %d, policy %d) ran %zu, model %zu",
		     b, now, idle, policy, rn, mn);
	for (int k = 0; k < rlen && k < LOGMAX; k++)
		if (rlog[k][0] != mlog[k][0] || rlog[k][1] != mlog[k][1])
			FAIL("pass on base %d at %" PRId64 " (idle %d, policy %d): callback #%d "
			     "was timer %ld (result %ld), model timer %ld (result %ld)", b, now,
			     idle, policy, k, rlog[k][0], rlog[k][1], mlog[k][0], mlog[k][1]);
	if (hrt_base_now(B[b]) != MB[b].now)
		FAIL("base %d now %" PRId64 " != %" PRId64, b, hrt_base_now(B[b]), MB[b].now);
	check_bases();
}

static void one_op(void)
{
	int i = (int)rr(NT), b = (int)rr(NB), r, m;
	struct wt *w = &W[i];
	uint64_t f, mf;

	switch (rr(20)) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6: {
		int rel = (int)rr(2);
		hrt_time_t soft = rand_soft_offset(), slack = rr(3) ? rand_slack() : 0;

		if (!rel && soft < HRT_TIME_MAX / 2)
			soft += MB[b].now;
		plan(w);
		r = slack || rr(2) ? hrt_timer_start_range(&w->t, B[b], soft, slack, rel)
				   : hrt_timer_start(&w->t, B[b], soft, rel);
		if (r)
			FAIL("start returned %d", r);
		m_start(i, b, soft, slack, rel);
		break;
	}
	case 7: case 8: case 9: case 10:
		r = hrt_timer_cancel(&w->t);
		m = m_cancel(i);
		if (r != m)
			FAIL("cancel(%d) = %d, model %d", i, r, m);
		break;
	case 11:
		r = hrt_timer_try_cancel(&w->t);
		m = m_cancel(i);
		if (r != m)
			FAIL("try_cancel(%d) = %d, model %d", i, r, m);
		break;
	case 12: {
		hrt_time_t now = MB[b].now + rr(40) * UNIT, iv = rr(6) ? (1 + rr(30)) * UNIT
								     : -rr(2);

		f = hrt_timer_forward(&w->t, now, iv);
		mf = m_forward(i, now, iv);
		if (f != mf)
			FAIL("forward(%d) = %" PRIu64 ", model %" PRIu64, i, f, mf);
		break;
	}
	case 13:
		if (hrt_timer_start_range(&w->t, B[b], 0, -1, HRT_MODE_ABS) != -EINVAL ||
		    hrt_timer_start_range(&w->t, B[b], 0, 0, (enum hrt_mode)7) != -EINVAL)
			FAIL("bad start arguments accepted");
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
	memset(M, 0, sizeof(M));
	memset(MB, 0, sizeof(MB));
	mseq = mpass = 0;
	for (int b = 0; b < NB; b++) {
		B[b] = hrt_base_new(HRT_CLOCK_VIRTUAL);
		assert_non_null(B[b]);
	}
	for (int i = 0; i < NT; i++) {
		hrt_timer_init(&W[i].t, r_callback);
		W[i].id = i;
	}
	for (step = 0; step < ops; step++)
		one_op();
	check_bases();
	for (int i = 0; i < NT; i++)
		hrt_timer_cancel(&W[i].t);
	for (int b = 0; b < NB; b++) {
		assert_int_equal(hrt_base_count(B[b]), 0);
		assert_int_equal(hrt_base_free(B[b]), 0);
	}
	printf("seed %llu: %ld operations matched the model\n", seed, ops);
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
