/* SPDX-License-Identifier: MIT */
/*
 * engine.c - ns per operation of the timer engine on a virtual base:
 * start+cancel of one more timer among N armed, re-arm of an armed timer,
 * re-arm near (a random armed timer pushed on by 1 ns with no slack: it
 * stays in its wheel slot, but the re-arm before went to another one),
 * leftmost expiry (all N due, greedy off) and greedy expiry (every other
 * timer in hard order soft-expired, so the stock pass stops at once and the
 * greedy walk finds the rest), with nodes visited per greedy expiry.
 * A re-arm may leave work to the next pass (the far-timer wheel moves
 * timers into the tree there); the re-arm figure includes that pass, the
 * expiry figures start from a tree that holds every timer already.
 * restart: RP periodic timers (1 ms, all due every pass) restart from their
 * callbacks among N idle ones, ns and tree operations per restart.
 * The same three through a struct hrt_repeat (hrt.h: "as cheap as a
 * start"), each beside its plain twin on the same array of them: re-arm by
 * hrt_repeat_start against hrt_timer_start_range, absolute (the slow tier:
 * it reads the base's now for the delay it keeps) and relative, a re-arm by
 * hrt_repeat_again against a relative hrt_timer_start_range of the same
 * delay and window (on a real base: a virtual one takes relative starts
 * on the slow tier; each reads the clock), and the
 * periodic restart by the interval against the README's forward idiom.
 * Every row twice: the default (thread-safe) base and a single-thread one
 * (HRT_BASE_UNLOCKED), in the same process, alternating repetitions.
 * Median of 5 repetitions; min and max show the spread.
 *     build/bench/engine [N ...]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hrt.h"

#define REPS 5

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct result { double med, min, max; };

static struct result summarise(double *v)
{
	struct result r;

	qsort(v, REPS, sizeof(*v), cmp_d);
	r.med = v[REPS / 2];
	r.min = v[0];
	r.max = v[REPS - 1];
	return r;
}

static enum hrt_restart nop(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	return HRT_NORESTART;
}

#define SPAN 1000000000LL       /* expiries spread over 1 s */

static unsigned flags;          /* of the bases made: 0 or HRT_BASE_UNLOCKED */

static struct hrt_base *new_base_as(unsigned kind)
{
	struct hrt_base *b;
	int err = hrt_base_new(&b, CLOCK_MONOTONIC, kind | HRT_BASE_ENV | flags);

	if (err) {
		fprintf(stderr, "engine: hrt_base_new: %s\n", strerror(-err));
		exit(1);
	}
	return b;
}

static struct hrt_base *new_base(void)
{
	return new_base_as(HRT_BASE_VIRTUAL);
}

#define RP 16                   /* periodic timers (the restart path's fast case) */
#define PERIOD 1000000LL        /* 1 ms */
#define RPASSES 20000

static enum hrt_restart periodic(struct hrt_timer *t, hrt_time_t now)
{
	hrt_timer_forward(t, now, PERIOD);
	return HRT_RESTART;
}

static struct hrt_base *arm(struct hrt_timer *tm, size_t n, enum hrt_greedy g, hrt_time_t slack)
{
	struct hrt_base *b = new_base();

	hrt_base_set_greedy(b, g);
	for (size_t i = 0; i < n; i++) {
		hrt_timer_init(&tm[i], nop);
		hrt_timer_start_range(&tm[i], b, SPAN + (hrt_time_t)(rnd() % SPAN), slack,
				      HRT_MODE_ABS);
	}
	return b;
}

enum { W_SC, W_RA, W_NU, W_LM, W_GR, W_NV, W_RS, W_RT, W_RW,
       W_PA, W_PR, W_PL, W_PS, W_PG, W_PF, W_PI, NW };
static const char *const wname[NW] = {
	"start+cancel ns", "re-arm ns", "re-arm near ns", "leftmost expiry ns/timer",
	"greedy expiry ns/timer",
	"greedy nodes/timer", "restart ns", "tree ops/restart", "wheel moves/restart",
	"re-arm (repeat's) ns", "repeat_start abs ns", "re-arm rel ns", "repeat_start rel ns",
	"repeat_again ns",
	"restart forward ns", "restart interval ns",
};

static size_t *near_idx;
static hrt_time_t *near_at, *near_cur;

/* The re-arm near ops, drawn before the clock starts (reading a timer's
 * soft expiry in the loop would fetch the timer before the re-arm does):
 * a random timer each, to its soft expiry so far + 1 ns.  No slack: a
 * window that crosses a slot's edge sends the timer to the tree and, with
 * it, the slot its hard expiry is in (wheel.h, W2), which at 10^6 timers
 * costs more than everything measured here. */
static void near_ops(const struct hrt_timer *tm, size_t n, size_t ops)
{
	if (!near_idx) {
		near_idx = malloc(ops * sizeof(*near_idx));
		near_at = malloc(ops * sizeof(*near_at));
		near_cur = malloc(n * sizeof(*near_cur));
		if (!near_idx || !near_at || !near_cur) {
			perror("engine: malloc");
			exit(1);
		}
	}
	for (size_t i = 0; i < n; i++)
		hrt_timer_get_soft(&tm[i], &near_cur[i]);
	for (size_t i = 0; i < ops; i++) {
		near_idx[i] = (size_t)(rnd() % n);
		near_at[i] = ++near_cur[near_idx[i]];
	}
}

static enum hrt_restart nop_restart(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
	return HRT_RESTART;
}

/* The struct hrt_repeat rows: each call beside its plain twin, on one
 * array of them, in turns of ops (so both see the same cache). */
static void repeat_rep(size_t n, size_t ops, double *v)
{
	struct hrt_repeat *rp = calloc(n + RP, sizeof(*rp)), *per = &rp[n];
	hrt_time_t *delay = malloc(n * sizeof(*delay));
	struct hrt_base *b = new_base();
	hrt_time_t t = PERIOD;
	size_t ran[2] = { 0, 0 };
	double t0;

	if (!rp || !delay) {
		perror("engine: calloc");
		exit(1);
	}
	hrt_base_set_greedy(b, HRT_GREEDY_OFF);
	for (size_t i = 0; i < n; i++) {
		delay[i] = SPAN + (hrt_time_t)(rnd() % SPAN);
		hrt_repeat_init(&rp[i], nop);
		hrt_repeat_start(&rp[i], b, delay[i], 0, 50000, HRT_MODE_REL);
	}
	hrt_base_run(b, 0, 0);
	t0 = now_ns();
	for (size_t i = 0; i < ops; i++)
		hrt_timer_start_range(&rp[rnd() % n].timer, b, SPAN + (hrt_time_t)(rnd() % SPAN),
				      50000, HRT_MODE_ABS);
	hrt_base_run(b, 0, 0);
	v[W_PA] = (now_ns() - t0) / ops;
	t0 = now_ns();
	for (size_t i = 0; i < ops; i++)
		hrt_repeat_start(&rp[rnd() % n], b, SPAN + (hrt_time_t)(rnd() % SPAN), 0, 50000,
				 HRT_MODE_ABS);
	hrt_base_run(b, 0, 0);
	v[W_PR] = (now_ns() - t0) / ops;
	for (size_t i = 0; i < n; i++)
		hrt_timer_cancel(&rp[i].timer);
	hrt_base_free(b);

	b = new_base_as(0);             /* real: relative starts on the fast tier */
	for (size_t i = 0; i < n; i++)
		hrt_repeat_start(&rp[i], b, delay[i], 0, 50000, HRT_MODE_REL);
	hrt_base_run(b, 0, 0);
	t0 = now_ns();
	for (size_t i = 0; i < ops; i++) {
		size_t k = rnd() % n;

		hrt_timer_start_range(&rp[k].timer, b, delay[k], 50000, HRT_MODE_REL);
	}
	hrt_base_run(b, 0, 0);
	v[W_PL] = (now_ns() - t0) / ops;
	t0 = now_ns();
	for (size_t i = 0; i < ops; i++) {
		size_t k = rnd() % n;

		hrt_repeat_start(&rp[k], b, delay[k], 0, 50000, HRT_MODE_REL);
	}
	hrt_base_run(b, 0, 0);
	v[W_PS] = (now_ns() - t0) / ops;
	for (size_t i = 0; i < n; i++)          /* again takes the delay of the last start */
		hrt_repeat_start(&rp[i], b, delay[i], 0, 50000, HRT_MODE_REL);
	hrt_base_run(b, 0, 0);
	t0 = now_ns();
	for (size_t i = 0; i < ops; i++)
		hrt_repeat_again(&rp[rnd() % n]);
	hrt_base_run(b, 0, 0);
	v[W_PG] = (now_ns() - t0) / ops;
	for (size_t i = 0; i < n; i++)
		hrt_timer_cancel(&rp[i].timer);
	hrt_base_free(b);

	/* Restart: RP periodic timers among N idle, as one_rep's, first by
	 * the forward idiom, then by the interval. */
	b = new_base();
	hrt_base_set_greedy(b, HRT_GREEDY_OFF);
	for (size_t i = 0; i < n; i++) {
		hrt_repeat_init(&rp[i], nop);
		hrt_repeat_start(&rp[i], b, 100 * SPAN + (hrt_time_t)(rnd() % SPAN), 0, 50000,
				 HRT_MODE_ABS);
	}
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < RP; i++) {
			hrt_repeat_init(&per[i], k ? nop_restart : periodic);
			hrt_repeat_start(&per[i], b, t, k ? PERIOD : 0, 0, HRT_MODE_ABS);
		}
		hrt_base_run(b, 0, 0);
		t0 = now_ns();
		for (int p = 0; p < RPASSES; p++, t += PERIOD)
			ran[k] += hrt_base_run(b, t, 0);
		v[k ? W_PI : W_PF] = (now_ns() - t0) / (double)ran[k];
		for (int i = 0; i < RP; i++)
			hrt_timer_cancel(&per[i].timer);
	}
	if (ran[0] != (size_t)RP * RPASSES || ran[1] != ran[0]) {
		fprintf(stderr, "engine: repeat restart ran %zu and %zu of %d\n", ran[0], ran[1],
			RP * RPASSES);
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		hrt_timer_cancel(&rp[i].timer);
	hrt_base_free(b);
	free(rp);
	free(delay);
}

/* One repetition of every workload on bases made with `flags`; v[w] gets
 * this repetition's figure of workload w. */
static void one_rep(struct hrt_timer *tm, size_t n, double *v)
{
	struct hrt_timer *extra = &tm[n], per[RP];
	size_t ops = n < 100000 ? 1000000 : 300000;

	{
		struct hrt_base *b = arm(tm, n, HRT_GREEDY_OFF, 50000);
		struct hrt_stats st;
		double t0;
		size_t ran;

		hrt_timer_init(extra, nop);
		t0 = now_ns();
		for (size_t i = 0; i < ops; i++) {
			hrt_timer_start_range(extra, b, SPAN + (hrt_time_t)(rnd() % SPAN), 50000,
					      HRT_MODE_ABS);
			hrt_timer_cancel(extra);
		}
		v[W_SC] = (now_ns() - t0) / ops;

		hrt_base_run(b, 0, 0);          /* deferred work of arming: not timed */
		t0 = now_ns();
		for (size_t i = 0; i < ops; i++)
			hrt_timer_start_range(&tm[rnd() % n], b, SPAN + (hrt_time_t)(rnd() % SPAN),
					      50000, HRT_MODE_ABS);
		/* A pass (at 0: runs nothing) does what the re-arms left to it;
		 * that deferred cost belongs to re-arm. */
		hrt_base_run(b, 0, 0);
		v[W_RA] = (now_ns() - t0) / ops;

		t0 = now_ns();
		ran = hrt_base_run(b, 3 * SPAN, 0);
		v[W_LM] = (now_ns() - t0) / (double)ran;
		hrt_base_free(b);

		/* Re-arm near, on timers armed without slack (see near_ops). */
		b = arm(tm, n, HRT_GREEDY_OFF, 0);
		hrt_base_run(b, 0, 0);
		near_ops(tm, n, ops);           /* untimed: each op's timer and instant */
		t0 = now_ns();
		for (size_t i = 0; i < ops; i++)
			hrt_timer_start_range(&tm[near_idx[i]], b, near_at[i], 0, HRT_MODE_ABS);
		hrt_base_run(b, 0, 0);
		v[W_NU] = (now_ns() - t0) / ops;
		for (size_t i = 0; i < n; i++)  /* free refuses queued timers */
			hrt_timer_cancel(&tm[i]);
		hrt_base_free(b);

		/* Greedy: soft-expired at t = SPAN/2 for every other timer. */
		b = new_base();
		hrt_base_set_greedy(b, HRT_GREEDY_ALWAYS);
		for (size_t i = 0; i < n; i++) {
			hrt_time_t hard = SPAN + (hrt_time_t)(rnd() % SPAN);
			int due = (int)(rnd() & 1);

			hrt_timer_init(&tm[i], nop);
			hrt_timer_start_range(&tm[i], b, due ? SPAN / 2 : hard - 1, due ? hard - SPAN / 2 : 1,
					      HRT_MODE_ABS);
		}
		hrt_base_run(b, 0, 0);          /* deferred work: not timed */
		hrt_base_reset_stats(b);
		t0 = now_ns();
		ran = hrt_base_run(b, SPAN / 2, 1);
		v[W_GR] = (now_ns() - t0) / (double)ran;
		hrt_base_get_stats(b, &st, sizeof(st));
		v[W_NV] = (double)st.nodes_visited / (double)st.expired_greedy;
		for (size_t i = 0; i < n; i++)  /* free refuses queued timers */
			hrt_timer_cancel(&tm[i]);
		hrt_base_free(b);
	}
	{
		/* Restart: RP periodic timers among N idle far ones, a pass
		 * every period (greedy off: the stock pass finds them all); the
		 * idle ones beyond the passes' 20 s. */
		struct hrt_base *b = new_base();
		hrt_time_t t = PERIOD;
		struct hrt_stats st;
		size_t ran = 0;
		double t0;

		hrt_base_set_greedy(b, HRT_GREEDY_OFF);
		for (size_t i = 0; i < n; i++) {
			hrt_timer_init(&tm[i], nop);
			hrt_timer_start_range(&tm[i], b, 100 * SPAN + (hrt_time_t)(rnd() % SPAN),
					      50000, HRT_MODE_ABS);
		}
		for (int i = 0; i < RP; i++) {
			hrt_timer_init(&per[i], periodic);
			hrt_timer_start(&per[i], b, t, HRT_MODE_ABS);
		}
		hrt_base_run(b, 0, 0);
		hrt_base_reset_stats(b);
		t0 = now_ns();
		for (int p = 0; p < RPASSES; p++, t += PERIOD)
			ran += hrt_base_run(b, t, 0);
		v[W_RS] = (now_ns() - t0) / (double)ran;
		hrt_base_get_stats(b, &st, sizeof(st));
		v[W_RT] = (double)st.tree_ops / (double)st.restarts;
		v[W_RW] = (double)st.wheel_moves / (double)st.restarts;
		if (ran != (size_t)RP * RPASSES || st.restarts != ran) {
			fprintf(stderr, "engine: restart ran %zu of %d\n", ran, RP * RPASSES);
			exit(1);
		}
		for (int i = 0; i < RP; i++)
			hrt_timer_cancel(&per[i]);
		for (size_t i = 0; i < n; i++)
			hrt_timer_cancel(&tm[i]);
		hrt_base_free(b);
	}
	repeat_rep(n, ops, v);
}

static void bench_n(size_t n)
{
	struct hrt_timer *tm = calloc(n + 1, sizeof(*tm));
	double v[2][NW][REPS], one[NW];

	if (!tm) {
		perror("engine: calloc");
		exit(1);
	}
	/* The two bases alternate, so a noisy moment hits both. */
	for (int rep = 0; rep < REPS; rep++) {
		for (int k = 0; k < 2; k++) {
			flags = k ? HRT_BASE_UNLOCKED : 0;
			one_rep(tm, n, one);
			for (int w = 0; w < NW; w++)
				v[k][w][rep] = one[w];
		}
	}
	for (int w = 0; w < NW; w++) {
		struct result d = summarise(v[0][w]), s1 = summarise(v[1][w]);

		printf("%-8zu %-24s %9.1f %9.1f %9.1f   %9.1f %9.1f %9.1f\n", n, wname[w],
		       d.med, d.min, d.max, s1.med, s1.min, s1.max);
	}
	fflush(stdout);
	free(tm);
	free(near_idx);
	free(near_at);
	free(near_cur);
	near_idx = NULL;
	near_at = near_cur = NULL;
}

/* N: a positive decimal count of timers, or a clear error. */
static size_t parse_n(const char *arg)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v == 0 || v > 100000000ull) {
		fprintf(stderr, "engine: N '%s': want a count of timers in 1..100000000\n", arg);
		exit(2);
	}
	return (size_t)v;
}

int main(int argc, char **argv)
{
	static const size_t defaults[] = { 1000, 100000, 1000000 };

	for (int i = 1; i < argc; i++)  /* every argument checked before any run */
		parse_n(argv[i]);
	printf("hrt engine, virtual base, median of %d (min, max); sizeof(struct hrt_timer) = %zu\n",
	       REPS, sizeof(struct hrt_timer));
	printf("%-8s %-24s %29s   %29s\n", "", "", "default base", "single-thread base");
	printf("%-8s %-24s %9s %9s %9s   %9s %9s %9s\n", "N", "operation",
	       "median", "min", "max", "median", "min", "max");
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			bench_n(parse_n(argv[i]));
	else
		for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			bench_n(defaults[i]);
	return 0;
}
