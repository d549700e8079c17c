/* SPDX-License-Identifier: MIT */
/*
 * engine.c - ns per operation of the timer engine on a virtual base:
 * start+cancel of one more timer among N armed, re-arm of an armed timer,
 * leftmost expiry (all N due, greedy off) and greedy expiry (every other
 * timer in hard order soft-expired, so the stock pass stops at once and the
 * greedy walk finds the rest), with nodes visited per greedy expiry.
 * Starts outside a pass are staged and reach the tree at the next pass; the
 * re-arm figure includes that pass, the expiry figures start from a tree
 * that holds every timer already.
 * Median of 5 repetitions; min and max show the spread.
 *     build/bench/engine [N ...]
 */
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

static struct hrt_base *arm(struct hrt_timer *tm, size_t n, enum hrt_greedy g)
{
	struct hrt_base *b = hrt_base_new(HRT_CLOCK_VIRTUAL);

	hrt_base_set_greedy(b, g);
	for (size_t i = 0; i < n; i++) {
		hrt_timer_init(&tm[i], nop);
		hrt_timer_start_range(&tm[i], b, SPAN + (hrt_time_t)(rnd() % SPAN), 50000,
				      HRT_MODE_ABS);
	}
	return b;
}

static void bench_n(size_t n)
{
	struct hrt_timer *tm = calloc(n + 1, sizeof(*tm)), *extra = &tm[n];
	double sc[REPS], ra[REPS], lm[REPS], gr[REPS], nv[REPS];
	size_t ops = n < 100000 ? 1000000 : 300000;
	struct result r;

	for (int rep = 0; rep < REPS; rep++) {
		struct hrt_base *b = arm(tm, n, HRT_GREEDY_OFF);
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
		sc[rep] = (now_ns() - t0) / ops;

		hrt_base_run(b, 0, 0);          /* arming's staged inserts: not timed */
		t0 = now_ns();
		for (size_t i = 0; i < ops; i++)
			hrt_timer_start_range(&tm[rnd() % n], b, SPAN + (hrt_time_t)(rnd() % SPAN),
					      50000, HRT_MODE_ABS);
		/* A pass (at 0: runs nothing) moves the staged re-arms into the
		 * tree; that deferred cost belongs to re-arm. */
		hrt_base_run(b, 0, 0);
		ra[rep] = (now_ns() - t0) / ops;

		t0 = now_ns();
		ran = hrt_base_run(b, 3 * SPAN, 0);
		lm[rep] = (now_ns() - t0) / (double)ran;
		hrt_base_free(b);

		/* Greedy: soft-expired at t = SPAN/2 for every other timer. */
		b = hrt_base_new(HRT_CLOCK_VIRTUAL);
		hrt_base_set_greedy(b, HRT_GREEDY_ALWAYS);
		for (size_t i = 0; i < n; i++) {
			hrt_time_t hard = SPAN + (hrt_time_t)(rnd() % SPAN);
			int due = (int)(rnd() & 1);

			hrt_timer_init(&tm[i], nop);
			hrt_timer_start_range(&tm[i], b, due ? SPAN / 2 : hard - 1, due ? hard - SPAN / 2 : 1,
					      HRT_MODE_ABS);
		}
		hrt_base_run(b, 0, 0);          /* staged inserts: not timed */
		hrt_base_reset_stats(b);
		t0 = now_ns();
		ran = hrt_base_run(b, SPAN / 2, 1);
		gr[rep] = (now_ns() - t0) / (double)ran;
		hrt_base_get_stats(b, &st);
		nv[rep] = (double)st.nodes_visited / (double)st.expired_greedy;
		for (size_t i = 0; i < n; i++)  /* free refuses queued timers */
			hrt_timer_cancel(&tm[i]);
		hrt_base_free(b);
	}
#define ROW(name, v) (r = summarise(v), printf("%-8zu %-24s %9.1f %9.1f %9.1f\n", n, name, r.med, r.min, r.max))
	ROW("start+cancel ns", sc);
	ROW("re-arm ns", ra);
	ROW("leftmost expiry ns/timer", lm);
	ROW("greedy expiry ns/timer", gr);
	ROW("greedy nodes/timer", nv);
	fflush(stdout);
	free(tm);
}

int main(int argc, char **argv)
{
	static const size_t defaults[] = { 1000, 100000, 1000000 };

	printf("hrt engine, virtual base, median of %d (min, max); sizeof(struct hrt_timer) = %zu\n",
	       REPS, sizeof(struct hrt_timer));
	printf("%-8s %-24s %9s %9s %9s\n", "N", "operation", "median", "min", "max");
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			bench_n((size_t)strtoull(argv[i], NULL, 0));
	else
		for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			bench_n(defaults[i]);
	return 0;
}
