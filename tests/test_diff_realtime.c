/* SPDX-License-Identifier: MIT */
/*
 * test_diff_realtime.c - randomized differential test of a real
 * CLOCK_REALTIME base against a brute-force two-clock model.
 *
 * The base runs on fake clocks and a fake timerfd (the seams test_realtime.c
 * uses: hrt__base_set_gettime, hrt__timerfd_set_sys): a fake wall clock and
 * a fake monotonic one.  Random steps: starts HRT_MODE_ABS and HRT_MODE_REL
 * with and without slack (a queued timer re-armed in the other mode moves
 * between the base's two timer sets), cancels, advances of both clocks,
 * sets of the wall clock forward and back (delivered as the base sees them:
 * ECANCELED from the fake timerfd read, as TFD_TIMER_CANCEL_ON_SET does),
 * and dispatches (hrt_base_dispatch) under a random greedy policy and idle
 * flag.  Each callback carries out a plan fixed when the driver started its
 * timer: nothing, forward and HRT_RESTART, HRT_RESTART as it is, start or
 * cancel another timer, re-arm itself in either mode (a mode switch moves
 * it to the other set in mid-pass), or query next_event and the count.
 *
 * The model: absolute timers keyed on wall time, relative ones on monotonic
 * time; the base's offset (wall - monotonic) is measured at each pass.  A
 * pass happens when the device fired (the fake timerfd's instant passed:
 * with the lazy re-arm that may be before the model's next event, which is
 * in the base's clock by the kept offset) or was cancelled by a set, or
 * when the model's next event is due.  The lazy re-arm's rule is checked
 * too: with a timer queued, the fd is armed at or before the model's next
 * event, and a dispatch leaves it armed exactly there (disarmed if none).  A pass at (mono, real) runs, in the
 * leftmost run, each set's earliest hard expiry while its soft one is due
 * in its own clock, the earlier hard expiry in the wall clock first, the
 * absolute one on a tie, FIFO among equals in a set; then, if greedy, every
 * soft-due timer of either set in the same order (hrt.h, src/pass.c); a
 * timer that ran is excluded for the rest of the pass whichever set it is
 * re-queued on.
 * After every step: the callbacks' sequence (the instant they were told,
 * and what their calls returned), hrt_base_count, hrt_base_next_event and
 * hrt_base_check.
 * Failures print a replay line:
 *     build/tests/test_diff_realtime SEED STEPS
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>

#include "unit.h"

#include "hrt.h"
#include "base.h"
#include "timerfd.h"

#define MS 1000000LL
#define S  1000000000LL
#define UNIT MS                 /* coarse times so that ties are common */
#define NT 24

#include "fake_clock.h"

static const struct hrt_timerfd_sys fake_sys = { fake_read, fake_settime };

/* The real timers and the model --------------------------------------------- */

enum action { A_NONE, A_FORWARD, A_RESTART, A_START_OTHER, A_CANCEL_OTHER, A_START_SELF,
	      A_QUERY, A_NACTIONS };

/* A callback's plan, fixed when the driver starts its timer (so the model,
 * which runs each pass before the base does, and the callback agree). */
struct plan {
	int action, other, rel;
	hrt_time_t d, slack, iv;
};

static struct rec {
	struct hrt_timer t;
	int id;
	struct plan p;
} R[NT];

static struct mt {
	int queued, rel;
	hrt_time_t soft, hard;  /* rel: monotonic; else wall */
	uint64_t seq;
	uint64_t ran;           /* the model pass that last ran it */
} M[NT];

static uint64_t mseq, mpass;
/* Coverage: callbacks, of them greedy ones, cross-set ties decided, passes
 * after a set of the clock, callbacks that moved their timer to the other
 * set, forwards of relative timers that moved them. */
static long n_cb, n_greedy, n_ties, n_setpass, n_switch, n_fwd_rel;
static hrt_time_t m_off;        /* the offset the base last measured */

/* Per callback: its timer, and what its calls returned. */
#define MAXRUN (4 * NT)
static int r_order[MAXRUN], r_n;
static hrt_time_t r_cb_now[MAXRUN];
static long r_res[MAXRUN][2];
static int m_order[MAXRUN], m_n;
static long m_res[MAXRUN][2];

static long rr(long n) { return (long)(unit_rng() % (uint64_t)n); }

static hrt_time_t sat_add(hrt_time_t a, hrt_time_t b)
{
	if (b > 0 && a > HRT_TIME_MAX - b)
		return HRT_TIME_MAX;
	return a + b;
}

static struct hrt_base *B;

/* The plan's start of timer j: relative on the monotonic clock, or
 * absolute around the callback's now. */
static int plan_start(const struct plan *p, int j, hrt_time_t now)
{
	return hrt_timer_start_range(&R[j].t, B, p->rel ? p->d : now + p->d - 10 * UNIT,
				     p->slack, p->rel ? HRT_MODE_REL : HRT_MODE_ABS);
}

static enum hrt_restart cb(struct hrt_timer *t, hrt_time_t now)
{
	struct rec *r = HRT_CONTAINER_OF(t, struct rec, t);
	const struct plan *p = &r->p;
	long res = -1, res2 = -1;
	int restart = 0;
	hrt_time_t when = 0;

	switch (p->action) {
	case A_FORWARD:
		res = (long)hrt_timer_forward(t, now, p->iv);
		restart = 1;
		break;
	case A_RESTART:
		restart = 1;
		break;
	case A_START_OTHER:
		res = plan_start(p, p->other, now);
		break;
	case A_CANCEL_OTHER:
		res = hrt_timer_cancel(&R[p->other].t);
		break;
	case A_START_SELF:
		res = plan_start(p, r->id, now);
		restart = 1;            /* ignored: the start queued it */
		break;
	case A_QUERY:
		res = hrt_base_next_event(B, &when) > 0 ? (long)when : -2;
		res2 = (long)hrt_base_count(B);
		break;
	}
	if (r_n < MAXRUN) {
		r_order[r_n] = r->id;
		r_cb_now[r_n] = now;
		r_res[r_n][0] = res;
		r_res[r_n][1] = res2;
	}
	r_n++;
	return restart ? HRT_RESTART : HRT_NORESTART;
}

static hrt_time_t m_key(int i) /* hard expiry in the base's clock */
{
	return M[i].rel ? sat_add(M[i].hard, m_off) : M[i].hard;
}

static hrt_time_t m_next(void)
{
	hrt_time_t n = HRT_TIME_MAX;

	for (int i = 0; i < NT; i++)
		if (M[i].queued && m_key(i) < n)
			n = m_key(i);
	return n;
}

static long m_count(void)
{
	long n = 0;

	for (int i = 0; i < NT; i++)
		n += M[i].queued;
	return n;
}

/* Of set `rel`: the first timer in queue order (hard, soft, seq) not run in
 * this pass, due or not (the leftmost run's), or the first soft-due one
 * (greedy); -1 if none. */
static int m_cand(int rel, hrt_time_t now, int greedy)
{
	int best = -1;

	for (int i = 0; i < NT; i++) {
		if (!M[i].queued || M[i].rel != rel || M[i].ran == mpass ||
		    (greedy && M[i].soft > now))
			continue;
		if (best < 0 || M[i].hard < M[best].hard ||
		    (M[i].hard == M[best].hard && (M[i].soft < M[best].soft ||
		     (M[i].soft == M[best].soft && M[i].seq < M[best].seq))))
			best = i;
	}
	return best;
}

static void m_start(int i, int rel, hrt_time_t soft, hrt_time_t slack)
{
	M[i].queued = 1;
	M[i].rel = rel;
	M[i].soft = soft;
	M[i].hard = sat_add(soft, slack);
	M[i].seq = ++mseq;
}

static long m_cancel(int i)
{
	long was = M[i].queued;

	M[i].queued = 0;
	return was;
}

/* hrt_timer_forward at the base's now: a relative timer in its own clock. */
static long m_forward(int i, hrt_time_t now, hrt_time_t iv)
{
	hrt_time_t at = M[i].rel ? now - m_off : now;
	long k;

	if (M[i].soft > at)       /* moved past the window it ran in */
		return 0;
	k = (long)((at - M[i].soft) / iv) + 1;
	M[i].soft += k * iv;
	M[i].hard += k * iv;
	n_fwd_rel += M[i].rel;
	return k;
}

/* Timer i runs at the base's now: its plan, on the model. */
static void m_run_one(int i, hrt_time_t now)
{
	const struct plan *p = &R[i].p;
	long res = -1, res2 = -1;
	int restart = 0, was_rel = M[i].rel;

	M[i].queued = 0;
	M[i].ran = mpass;
	switch (p->action) {
	case A_FORWARD:
		res = m_forward(i, now, p->iv);
		restart = 1;
		break;
	case A_RESTART:
		restart = 1;
		break;
	case A_START_OTHER:
	case A_START_SELF: {
		int j = p->action == A_START_SELF ? i : p->other;

		m_start(j, p->rel, p->rel ? mono_now + p->d : now + p->d - 10 * UNIT, p->slack);
		res = 0;
		n_switch += j == i && p->rel != was_rel;
		restart = p->action == A_START_SELF;
		break;
	}
	case A_CANCEL_OTHER:
		res = m_cancel(p->other);
		break;
	case A_QUERY:
		res = m_count() ? (long)m_next() : -2;
		res2 = m_count();
		break;
	}
	if (restart && !M[i].queued) {
		M[i].queued = 1;
		M[i].seq = ++mseq;
	}
	if (m_n < MAXRUN) {
		m_order[m_n] = i;
		m_res[m_n][0] = res;
		m_res[m_n][1] = res2;
	}
	m_n++;
}

static void m_pass(int greedy)
{
	hrt_time_t mnow;

	m_off = rt_now - mono_now;
	mnow = mono_now;
	mpass++;
	for (int g = 0; g <= greedy; g++)
		for (;;) {
			int a = m_cand(0, rt_now, g), r = m_cand(1, mnow, g), i;

			/* The earlier of the two in the base's clock (the
			 * absolute one on a tie); the leftmost run ends at it
			 * if it is not due, in either set. */
			if (r >= 0 && (a < 0 || m_key(r) < M[a].hard))
				i = r;
			else
				i = a;
			if (i < 0 || M[i].soft > (M[i].rel ? mnow : rt_now))
				break;
			n_ties += r >= 0 && a >= 0 && m_key(r) == M[a].hard;
			n_greedy += g;
			n_cb++;
			m_run_one(i, rt_now);
		}
}

/* Steps ----------------------------------------------------------------------- */

static hrt_time_t rand_d(void)
{
	hrt_time_t d = (hrt_time_t)rr(100) * UNIT;

	if (!rr(8))
		d += rr(UNIT);          /* off the grid now and then */
	return d;
}

static hrt_time_t rand_slack(void)
{
	switch (rr(4)) {
	case 0: return 0;
	case 1: return (hrt_time_t)rr(4) * UNIT;
	default: return (hrt_time_t)rr(40) * UNIT;
	}
}

static void do_start(int i)
{
	hrt_time_t slack = rand_slack(), soft;
	int rel = (int)rr(2);

	if (rel) {
		soft = rand_d();
		assert_int_equal(hrt_timer_start_range(&R[i].t, B, soft, slack, HRT_MODE_REL), 0);
		soft += mono_now;
	} else {
		soft = rt_now + rand_d() - 10 * UNIT;
		assert_int_equal(hrt_timer_start_range(&R[i].t, B, soft, slack, HRT_MODE_ABS), 0);
	}
	m_start(i, rel, soft, slack);
	R[i].p = (struct plan){ (int)rr(A_NACTIONS), (int)rr(NT), (int)rr(2), rand_d(),
				rand_slack(), ((hrt_time_t)rr(30) + 1) * UNIT };
}

static void do_cancel(int i)
{
	int want = M[i].queued;

	M[i].queued = 0;
	assert_int_equal(hrt_timer_cancel(&R[i].t), want);
}

static void do_advance(void)
{
	hrt_time_t d = (hrt_time_t)rr(60) * UNIT + (rr(8) ? 0 : rr(UNIT));

	rt_now += d;
	mono_now += d;
}

static void do_set(void)
{
	long k = rr(8);
	hrt_time_t d = k < 5 ? ((hrt_time_t)rr(401) - 200) * UNIT      /* ms */
		     : k < 7 ? ((hrt_time_t)rr(21) - 10) * S
			     : (hrt_time_t)rr(61) * 1000 - 30000;    /* within +-30 us */
	hrt_time_t off = rt_now - mono_now;

	if (!d)
		d = UNIT;
	if (off + d < 900 * S || off + d > 1100 * S)
		d = -d;                 /* keep the wall clock near its start */
	fake_set_clock(d);
}

static void do_dispatch(void)
{
	int policy = (int)rr(3), idle = (int)rr(2);
	int greedy = policy == HRT_GREEDY_ALWAYS || (policy == HRT_GREEDY_IDLE && idle);
	int fired = armed_at != HRT_TIME_MAX && armed_at <= rt_now;
	int pass = set_pending || fired || m_next() <= rt_now;
	ssize_t n;

	assert_int_equal(hrt_base_set_greedy(B, (enum hrt_greedy)policy), 0);
	r_n = m_n = 0;
	if (pass) {
		n_setpass += set_pending;
		m_pass(greedy);
	}
	n = hrt_base_dispatch(B, idle);
	if (n != m_n || r_n != m_n)
		fail_msg("step %ld: dispatch ran %zd (%d callbacks), model %d (pass %d)",
			 unit_step, n, r_n, m_n, pass);
	for (int k = 0; k < m_n && k < MAXRUN; k++) {
		if (r_order[k] != m_order[k])
			fail_msg("step %ld: callback %d: timer %d, model %d", unit_step, k,
				 r_order[k], m_order[k]);
		if (r_res[k][0] != m_res[k][0] || r_res[k][1] != m_res[k][1])
			fail_msg("step %ld: callback %d (timer %d, action %d): returned %ld %ld, "
				 "model %ld %ld", unit_step, k, r_order[k], R[r_order[k]].p.action,
				 r_res[k][0], r_res[k][1], m_res[k][0], m_res[k][1]);
		assert_int_equal(r_cb_now[k], rt_now);
	}
	if (armed_at != (m_count() ? m_next() : HRT_TIME_MAX))
		fail_msg("step %ld: after a dispatch armed at %lld, model's next %lld", unit_step,
			 (long long)armed_at, (long long)m_next());
}

static void compare(void)
{
	char why[128] = "";
	hrt_time_t when = 0, want = m_next();
	long cnt = m_count();

	assert_int_equal(hrt_base_count(B), cnt);
	assert_int_equal(hrt_base_next_event(B, &when), cnt > 0);
	if (when != want)
		fail_msg("step %ld: next_event %lld, model %lld", unit_step, (long long)when,
			 (long long)want);
	if (cnt && armed_at > want)     /* MAX too: disarmed */
		fail_msg("step %ld: armed at %lld, after the model's next event %lld", unit_step,
			 (long long)armed_at, (long long)want);
	if (hrt_base_check(B, why, sizeof(why)))
		fail_msg("step %ld: check: %s", unit_step, why);
}

static void test_diff_realtime(void **state)
{
	long seen_at_arm = set_at_arm, seen_fresh = fresh_arms;

	(void)state;
	unit_rng_state = unit_seed;
	rt_now = 1000 * S;
	mono_now = 50 * S;
	set_pending = 0;
	armed_at = HRT_TIME_MAX;
	assert_int_equal(hrt_base_new(&B, CLOCK_REALTIME, 0), 0);
	hrt__base_set_gettime(B, fake_gettime);
	assert_true(hrt_base_fd(B) >= 0);
	hrt__timerfd_set_sys(hrt__base_device(B), &fake_sys);
	m_off = rt_now - mono_now;
	memset(M, 0, sizeof(M));
	for (int i = 0; i < NT; i++) {
		hrt_timer_init(&R[i].t, cb);
		R[i].id = i;
	}
	for (unit_step = 0; unit_step < unit_steps; unit_step++) {
		long op = rr(100);

		if (op < 35)
			do_start((int)rr(NT));
		else if (op < 45)
			do_cancel((int)rr(NT));
		else if (op < 65)
			do_advance();
		else if (op < 72)
			do_set();
		if (set_at_arm != seen_at_arm || fresh_arms != seen_fresh) {
			/* The start's or cancel's arm was told of a set
			 * (ECANCELED from settime), or the fd had been
			 * disarmed (deaf to sets): the base measured again. */
			seen_at_arm = set_at_arm;
			seen_fresh = fresh_arms;
			m_off = rt_now - mono_now;
		}
		if (op >= 72 || !rr(3))
			do_dispatch();
		compare();
	}
	for (int i = 0; i < NT; i++)
		hrt_timer_cancel(&R[i].t);
	assert_int_equal(hrt_base_free(B), 0);
	printf("callbacks %ld (greedy %ld), cross-set ties %ld, passes after a set %ld, "
	       "sets told by a re-arm %ld, mode switches in a callback %ld, relative forwards %ld\n",
	       n_cb, n_greedy, n_ties, n_setpass, set_at_arm, n_switch, n_fwd_rel);
	assert_true(n_cb > 0 && n_greedy > 0 && n_setpass > 0 && set_at_arm > 0 && n_switch > 0 &&
		    n_fwd_rel > 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_realtime),
	};

	return cmocka_run_seeded_tests(tests, argc, argv, 50000);
}
