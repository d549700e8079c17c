/* SPDX-License-Identifier: MIT */
/*
 * bench/flush_once.c - the one op that pays for an exact next event
 * (wheel.h, W5; issue 47): N idle timeouts of 30 s plus 0-4.2 s of
 * jitter (10 % windows), all in one level-2 wheel slot, on a virtual
 * base; the earliest is pushed on and hrt_base_next_event asked, which
 * finds the slot's new least by moving the slot into the tree (a61a9b3's
 * library rescanned the slot instead, on every such op).  Prints that
 * op's time and stats.wheel_moves and wheel_scanned, then the median of
 * the next 1,000 such ops (each the timer due first pushed on, then the
 * next event), found by a walk of the timers' hard expiries kept here.
 *
 *   build/bench/flush_once [N]      (default 1000000)
 */
#include <stdio.h>
#include <stdlib.h>
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

static enum hrt_restart never(struct hrt_timer *t, hrt_time_t now)
{
	(void)t;
	(void)now;
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
		fprintf(stderr, "flush_once: %s failed (%d)\n", what, err);
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

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000, i, first = 0;
	struct hrt_timer *t;
	struct hrt_base *b;
	struct hrt_stats s;
	hrt_time_t when, *hard;
	long long t0, t1, lat[NEXT_OPS];

	if (!n) {
		fprintf(stderr, "usage: flush_once [N > 0]\n");
		return 2;
	}
	t = calloc(n, sizeof(*t));
	hard = malloc(n * sizeof(*hard));
	if (!t || !hard) {
		fprintf(stderr, "flush_once: out of memory for %zu timers\n", n);
		return 1;
	}
	check(hrt_base_new(&b, CLOCK_MONOTONIC, HRT_BASE_VIRTUAL), "hrt_base_new");
	for (i = 0; i < n; i++) {
		hrt_time_t soft = jittered();

		check(hrt_timer_init(&t[i], never), "hrt_timer_init");
		check(hrt_timer_start_range(&t[i], b, soft, soft / 10, HRT_MODE_ABS), "a start");
		hard[i] = soft + soft / 10;
		if (hard[i] < hard[first])
			first = i;
	}
	t0 = now_ns();
	push(b, t, hard, first);
	check(hrt_base_next_event(b, &when), "hrt_base_next_event");
	t1 = now_ns();
	check(hrt_base_get_stats(b, &s, sizeof(s)), "hrt_base_get_stats");
	printf("N=%zu: the first push + next_event %.2f ms, %llu timers moved into the tree, "
	       "%llu scanned\n", n, (double)(t1 - t0) / 1e6, (unsigned long long)s.wheel_moves,
	       (unsigned long long)s.wheel_scanned);
	for (int k = 0; k < NEXT_OPS; k++) {
		for (first = 0, i = 1; i < n; i++)     /* untimed */
			if (hard[i] < hard[first])
				first = i;
		t0 = now_ns();
		push(b, t, hard, first);
		check(hrt_base_next_event(b, &when), "hrt_base_next_event");
		lat[k] = now_ns() - t0;
	}
	qsort(lat, NEXT_OPS, sizeof(lat[0]), cmp_ll);
	printf("N=%zu: the next %d such ops: median %.2f us, max %.2f us\n", n, NEXT_OPS,
	       (double)lat[NEXT_OPS / 2] / 1e3, (double)lat[NEXT_OPS - 1] / 1e3);
	for (i = 0; i < n; i++)
		hrt_timer_cancel(&t[i]);
	check(hrt_base_free(b), "hrt_base_free");
	free(t);
	free(hard);
	return 0;
}
