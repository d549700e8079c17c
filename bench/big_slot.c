/* SPDX-License-Identifier: MIT */
/*
 * bench/big_slot.c - a client-made slot of far timers in no order (wheel.h,
 * W5; issue 47): N idle timeouts of 30 s plus 0-4.2 s of jitter (10 %
 * windows), all in one level-2 wheel slot, on a virtual base; the
 * earliest is pushed on and hrt_base_next_event asked, 1,001 times (the
 * pattern a client makes that pings just before its deadline).  The slot
 * answers with its bound, early, never late, and moves nothing; so it
 * prints the ops' median and worst, how early the answer was, and then
 * the one early wake-up: the pass at that instant, which moves the
 * horizon past the slot's start and cascades it into smaller slots
 * (stats.wheel_cascades), after which the answer is exact; then the same
 * ops again.  (1.3's first cut moved the slot into the tree on the first
 * such op instead: 52 ms at 10^5, 0.48 s at 10^6; a61a9b3 rescanned the
 * slot on every op: docs/perf/issue47-flush.txt.)
 *
 *   build/bench/big_slot [N]      (default 1000000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>

#include "hrt.h"

#define SEC 1000000000LL
/* The first instant of a level-2 slot (a multiple of 4096 jiffies of
 * 2^20 ns) past 30 s, and a jitter inside the slot's 4.29 s. */
#define SLOT0 (28672LL << 20)
#define JITTER 4200000000ULL
#define NEXT_OPS 1001

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The timers and their hard expiries as this program knows them: a
 * callback's timer leaves the queue (HRT_TIME_MAX: not queued). */
static struct hrt_timer *timers;
static hrt_time_t *hards;

static enum hrt_restart ran_cb(struct hrt_timer *t, hrt_time_t now)
{
	(void)now;
	hards[t - timers] = HRT_TIME_MAX;
	return HRT_NORESTART;
}

static unsigned long long seed = 47;

static hrt_time_t jittered(void)
{
	seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return SLOT0 + (hrt_time_t)((seed >> 20) % JITTER);
}

static void check(int err, const char *what)
{
	if (err < 0) {
		fprintf(stderr, "big_slot: %s failed (%d)\n", what, err);
		exit(1);
	}
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* Timer i pushed on to a new instant of the slot after the jitter. */
static void push(struct hrt_base *b, struct hrt_timer *t, hrt_time_t *hard, size_t i)
{
	hrt_time_t soft = jittered() + 5 * SEC;

	check(hrt_timer_start_range(&t[i], b, soft, soft / 10, HRT_MODE_ABS), "a start");
	hard[i] = soft + soft / 10;
}

/* NEXT_OPS times: the timer due first pushed on, then the next event;
 * prints the median and worst op, the far timers moved and scanned, and
 * how early the answers were (the true next event kept here). */
static void ops(struct hrt_base *b, struct hrt_timer *t, hrt_time_t *hard, size_t n,
		const char *what)
{
	long long lat[NEXT_OPS], t0, early = 0;
	struct hrt_stats s0, s1;
	hrt_time_t when;
	size_t i, first;

	check(hrt_base_get_stats(b, &s0, sizeof(s0)), "hrt_base_get_stats");
	for (int k = 0; k < NEXT_OPS; k++) {
		for (first = 0, i = 1; i < n; i++)     /* untimed */
			if (hard[i] < hard[first])
				first = i;
		t0 = now_ns();
		push(b, t, hard, first);
		check(hrt_base_next_event(b, &when), "hrt_base_next_event");
		lat[k] = now_ns() - t0;
		for (first = 0, i = 1; i < n; i++)
			if (hard[i] < hard[first])
				first = i;
		if (when > hard[first]) {
			fprintf(stderr, "big_slot: next event %lld after the first hard expiry %lld\n",
				(long long)when, (long long)hard[first]);
			exit(1);
		}
		if (hard[first] - when > early)
			early = hard[first] - when;
	}
	check(hrt_base_get_stats(b, &s1, sizeof(s1)), "hrt_base_get_stats");
	qsort(lat, NEXT_OPS, sizeof(lat[0]), cmp_ll);
	printf("N=%zu: %s, %d ops: median %.2f us, max %.2f us; %llu far timers moved into the "
	       "tree, %llu scanned; answers at most %.3f ms early\n", n, what, NEXT_OPS,
	       (double)lat[NEXT_OPS / 2] / 1e3, (double)lat[NEXT_OPS - 1] / 1e3,
	       (unsigned long long)(s1.wheel_moves - s0.wheel_moves),
	       (unsigned long long)(s1.wheel_scanned - s0.wheel_scanned), (double)early / 1e6);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000, i, first = 0;
	struct hrt_timer *t;
	struct hrt_base *b;
	struct hrt_stats s0, s1;
	hrt_time_t when, exact, *hard;
	long long t0, t1;
	ssize_t ran;

	if (!n) {
		fprintf(stderr, "usage: big_slot [N > 0]\n");
		return 2;
	}
	t = calloc(n, sizeof(*t));
	hard = malloc(n * sizeof(*hard));
	if (!t || !hard) {
		fprintf(stderr, "big_slot: out of memory for %zu timers\n", n);
		return 1;
	}
	timers = t;
	hards = hard;
	check(hrt_base_new(&b, CLOCK_MONOTONIC, HRT_BASE_VIRTUAL), "hrt_base_new");
	for (i = 0; i < n; i++) {
		hrt_time_t soft = jittered();

		check(hrt_timer_init(&t[i], ran_cb), "hrt_timer_init");
		check(hrt_timer_start_range(&t[i], b, soft, soft / 10, HRT_MODE_ABS), "a start");
		hard[i] = soft + soft / 10;
		if (hard[i] < hard[first])
			first = i;
	}
	ops(b, t, hard, n, "the first pushed on + next_event");
	/* The early wake-up: a pass at the answer. */
	check(hrt_base_next_event(b, &when), "hrt_base_next_event");
	check(hrt_base_get_stats(b, &s0, sizeof(s0)), "hrt_base_get_stats");
	t0 = now_ns();
	ran = hrt_base_run(b, when, 0);
	t1 = now_ns();
	check((int)ran, "hrt_base_run");
	check(hrt_base_get_stats(b, &s1, sizeof(s1)), "hrt_base_get_stats");
	check(hrt_base_next_event(b, &exact), "hrt_base_next_event");
	for (first = 0, i = 1; i < n; i++)
		if (hard[i] < hard[first])
			first = i;
	printf("N=%zu: the pass at the bound: %.2f ms, %zd callbacks, %llu timers cascaded, "
	       "%llu moved into the tree; next event then %s\n", n, (double)(t1 - t0) / 1e6, ran,
	       (unsigned long long)(s1.wheel_cascades - s0.wheel_cascades),
	       (unsigned long long)(s1.wheel_moves - s0.wheel_moves),
	       exact == hard[first] ? "exact" : "NOT exact");
	ops(b, t, hard, n, "after it, the same op");
	for (i = 0; i < n; i++)
		hrt_timer_cancel(&t[i]);
	check(hrt_base_free(b), "hrt_base_free");
	free(t);
	free(hard);
	return 0;
}
